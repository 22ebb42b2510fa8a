"""The common offer table: one row per (provider, region, instance type).

Every provider adapter, the bundled snapshot and user CSVs (``--offers FILE``) produce this table;
everything downstream (filters, the optimizer, reports) reads only these columns.  Units are in the
column names.  :func:`validate_offers` is called wherever data crosses a boundary.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from enum import Enum
from typing import Any, NoReturn

import numpy as np
import pandas as pd

from planner import clock
from planner.errors import (
    OfferValidationError,
    UnknownNameError,
    ascii_digits_fix,
    is_credential_name,
    no_credentials_hint,
    suggest,
)
from planner.gpu_specs import GpuCatalog, load_gpu_catalog
from planner.units import link_alias

SCHEMA_VERSION = 1


class PurchaseOption(str, Enum):
    """How capacity is paid for."""

    ON_DEMAND = "on-demand"
    SPOT = "spot"
    RESERVED_1Y = "reserved-1y"
    RESERVED_3Y = "reserved-3y"
    # AWS Compute Savings Plan / Azure savings plan for compute: a $/h commitment, no upfront,
    # at the effective hourly rate it gives this instance.
    SAVINGS_PLAN_1Y = "savings-plan-1y"
    SAVINGS_PLAN_3Y = "savings-plan-3y"
    OWNED = "owned"

    def __str__(self) -> str:
        return self.value


class Interconnect(str, Enum):
    """GPU-to-GPU link inside one instance, weakest to strongest."""

    NONE = "none"  # a single GPU, nothing to link
    PCIE = "pcie"
    NVLINK = "nvlink"  # NVLink bridges or a partial NVLink mesh
    NVSWITCH = "nvswitch"  # all-to-all NVLink through NVSwitch (or an AMD Infinity Fabric mesh)

    def __str__(self) -> str:
        return self.value

    @property
    def rank(self) -> int:
        return list(Interconnect).index(self)


class Fabric(str, Enum):
    """Network between instances, for multi-node jobs."""

    ETHERNET = "ethernet"
    EFA = "efa"  # AWS Elastic Fabric Adapter (OS-bypass, RDMA-like)
    INFINIBAND = "infiniband"
    GPUDIRECT_TCP = "gpudirect-tcp"  # GCP GPUDirect-TCPX/TCPXO
    ROCE = "roce"  # RDMA over converged Ethernet (GCP A3 Ultra)

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Column:
    """One column of the offer table: its name, dtype, unit (in the name too), whether every
    offer must give it, what it means, and its bound."""

    name: str
    dtype: str  # "string", "int", "float", "bool"
    unit: str
    required: bool
    description: str
    # The largest value a real offer can have (None: no bound); a bigger one is a typo or a unit
    # mistake and would reach the optimizer as an absurd plan.
    max_value: float | None = None


# Bounds of the numeric columns, each well past the largest real offer (2026):
# - 72 GPUs: an NVL72 rack is the largest single NVLink domain sold (GB200/GB300 NVL72); the
#   largest single instance is 16 GPUs (GCP a2-megagpu-16g).
# - 1,024 GiB per GPU: the largest GPU memory is 288 GB (B300, MI355X).
# - 100,000 Gbit/s: the fastest instance network is 3,200-3,600 Gbit/s (p5, ND H100 v5); a
#   GB200 UltraServer's EFA totals 28,800 Gbit/s.
# - 10,000 USD per instance-hour: the dearest GPU instance on offer is ~128 USD/h (Azure ND
#   H200 v5 class); a price above this is a monthly or yearly figure typed as hourly.
MAX_GPUS_PER_INSTANCE = 72
# GPUs one machine wired by PCIe alone (or by NVLink bridges, which join pairs) can hold: 20, past
# the largest such servers (the 10 double-width cards of a 4U server such as Supermicro's
# SYS-4029GP-TRT2; 8 in most; AWS p2.16xlarge's 16 K80 dies) and a mining-style rig on risers;
# more is an NVSwitch rack or a fleet typed as one machine.
MAX_PCIE_GPUS_PER_NODE = 20
MAX_GPU_MEMORY_GIB = 1024.0
MAX_NETWORK_GBPS = 100_000.0
MAX_PRICE_USD_PER_HOUR = 10_000.0
# - 1,000,000 GB of local disk: the largest instance store on a GPU instance is 30,400 GB
#   (8 x 3,800 GB NVMe on p5/p6); storage-optimised hosts reach ~120,000 GB.
MAX_LOCAL_DISK_GB = 1_000_000.0


COLUMNS: tuple[Column, ...] = (
    Column("provider", "string", "", True, "aws, gcp, azure, lambda, or a private source"),
    Column("region", "string", "", True, "provider region name"),
    Column("instance_type", "string", "", True, "provider instance / VM type"),
    Column("gpu_model", "string", "", True, "canonical GPU name (planner gpus)"),
    Column("gpu_count", "int", "GPUs", True, "GPUs per instance", MAX_GPUS_PER_INSTANCE),
    Column(
        "gpu_memory_gib",
        "float",
        "GiB",
        True,
        "memory per GPU: the GPU catalog's value for gpu_model, the same on every provider",
        MAX_GPU_MEMORY_GIB,
    ),
    Column(
        "gpu_memory_total_gib",
        "float",
        "GiB",
        True,
        "memory of all GPUs of the instance",
        MAX_GPUS_PER_INSTANCE * MAX_GPU_MEMORY_GIB,
    ),
    Column(
        "gpu_memory_listed_gib",
        "float",
        "GiB",
        False,
        "memory per GPU as the provider lists it (gpu_memory_gib is the catalog's one value)",
        MAX_GPU_MEMORY_GIB,
    ),
    Column("vcpus", "float", "vCPUs", False, "host vCPUs", 100_000.0),
    Column("host_memory_gib", "float", "GiB", False, "host RAM", 1_048_576.0),
    Column(
        "local_disk_gb",
        "float",
        "GB",
        False,
        "instance-store / local SSD per instance (empty: not known; 0: none, network disks only)",
        MAX_LOCAL_DISK_GB,
    ),
    Column("interconnect", "string", "", True, "GPU-GPU link: none, pcie, nvlink, nvswitch"),
    Column(
        "network_gbps", "float", "Gbit/s", False, "instance network bandwidth", MAX_NETWORK_GBPS
    ),
    Column(
        "fabric", "string", "", True, "inter-node network: ethernet, efa, infiniband, gpudirect-tcp"
    ),
    Column(
        "price_on_demand_usd_per_hour",
        "float",
        "USD/h",
        True,
        "on-demand, whole instance",
        MAX_PRICE_USD_PER_HOUR,
    ),
    Column(
        "price_spot_usd_per_hour",
        "float",
        "USD/h",
        False,
        "cheapest spot price in the region",
        MAX_PRICE_USD_PER_HOUR,
    ),
    Column(
        "price_spot_median_usd_per_hour",
        "float",
        "USD/h",
        False,
        "median spot price over zones",
        MAX_PRICE_USD_PER_HOUR,
    ),
    Column(
        "price_reserved_1y_usd_per_hour",
        "float",
        "USD/h",
        False,
        "1-year commitment, effective hourly",
        MAX_PRICE_USD_PER_HOUR,
    ),
    Column(
        "price_reserved_3y_usd_per_hour",
        "float",
        "USD/h",
        False,
        "3-year commitment, effective hourly",
        MAX_PRICE_USD_PER_HOUR,
    ),
    Column(
        "price_basis_reserved",
        "string",
        "",
        True,
        "listed, derived (from published discounts) or none",
    ),
    Column(
        "price_savings_plan_1y_usd_per_hour",
        "float",
        "USD/h",
        False,
        "1-year compute savings plan, no upfront, effective hourly for this instance",
        MAX_PRICE_USD_PER_HOUR,
    ),
    Column(
        "price_savings_plan_3y_usd_per_hour",
        "float",
        "USD/h",
        False,
        "3-year compute savings plan, no upfront, effective hourly for this instance",
        MAX_PRICE_USD_PER_HOUR,
    ),
    Column(
        "price_basis_savings_plan",
        "string",
        "",
        False,
        "listed (read from the provider's price list) or none",
    ),
    Column(
        "spot_interruption_pct",
        "float",
        "%/month",
        False,
        "published interruption frequency, upper bound",
        100.0,
    ),
    Column("zones", "int", "", False, "availability zones the offer was seen in", 1_000.0),
    Column("source", "string", "", True, "where the prices come from (file@commit, API)"),
    Column("as_of", "string", "date", True, "date the prices were captured, YYYY-MM-DD"),
)

COLUMN_NAMES: tuple[str, ...] = tuple(c.name for c in COLUMNS)
# Columns `planner offers` adds for the purchase option it lists (that option's price per
# instance-hour and per GPU-hour).  They are computed from the price columns, so a price list
# written by `planner offers --format csv` reads back as it is: these are dropped on the way in.
LISTING_COLUMNS: tuple[str, ...] = (
    "purchase_option",
    "price_usd_per_hour",
    "price_usd_per_gpu_hour",
)
COLUMN_BY_NAME: dict[str, Column] = {c.name: c for c in COLUMNS}
REQUIRED_COLUMNS: tuple[str, ...] = tuple(c.name for c in COLUMNS if c.required)
KEY_COLUMNS: tuple[str, ...] = ("provider", "region", "instance_type")
PRICE_COLUMNS: dict[PurchaseOption, str] = {
    PurchaseOption.ON_DEMAND: "price_on_demand_usd_per_hour",
    PurchaseOption.SPOT: "price_spot_usd_per_hour",
    PurchaseOption.RESERVED_1Y: "price_reserved_1y_usd_per_hour",
    PurchaseOption.RESERVED_3Y: "price_reserved_3y_usd_per_hour",
    PurchaseOption.SAVINGS_PLAN_1Y: "price_savings_plan_1y_usd_per_hour",
    PurchaseOption.SAVINGS_PLAN_3Y: "price_savings_plan_3y_usd_per_hour",
}
# The commitments a quote prices when asked to (``--reserved``): reserved instances and savings
# plans, each for one and three years.
COMMITMENT_OPTIONS: tuple[PurchaseOption, ...] = (
    PurchaseOption.RESERVED_1Y,
    PurchaseOption.RESERVED_3Y,
    PurchaseOption.SAVINGS_PLAN_1Y,
    PurchaseOption.SAVINGS_PLAN_3Y,
)
PRICE_BASES = ("listed", "derived", "none")
# Savings-plan prices are only ever read from a price list, never derived from discount levels.
SAVINGS_PLAN_BASES = ("listed", "none")
_SAVINGS_PLAN_PRICES = ("price_savings_plan_1y_usd_per_hour", "price_savings_plan_3y_usd_per_hour")

# Columns a private price CSV may leave out: they get these values.
_DEFAULTS = {"fabric": Fabric.ETHERNET.value}
_RESERVED_PRICES = ("price_reserved_1y_usd_per_hour", "price_reserved_3y_usd_per_hour")
# Each price basis column, with the prices it is the basis of: left out or blank, it is "listed"
# on a row that gives one of them (a price in a list is a listed price) and "none" on the others.
_BASES = {
    "price_basis_reserved": _RESERVED_PRICES,
    "price_basis_savings_plan": _SAVINGS_PLAN_PRICES,
}
# What a price list that leaves a required column of the offer table out gets instead (the file
# formats page prints these).
FILLED_WHEN_LEFT_OUT = {
    "gpu_memory_total_gib": "gpu_count x gpu_memory_gib",
    "fabric": "ethernet",
    "price_basis_reserved": "listed where a reserved price is given, else none",
    "price_basis_savings_plan": "listed where a savings-plan price is given, else none",
}

_PANDAS_DTYPES = {"string": "object", "int": "int64", "float": "float64", "bool": "bool"}


def empty_offers() -> pd.DataFrame:
    """A zero-row table with every column at its dtype."""
    return pd.DataFrame({c.name: pd.Series(dtype=_PANDAS_DTYPES[c.dtype]) for c in COLUMNS})


def _fail(
    msg: str,
    source: str | None,
    rows: Sequence[int] = (),
    column: str | None = None,
    hint: str | None = None,
    names: Sequence[str] = (),
) -> NoReturn:
    where = []
    if rows:
        shown = ", ".join(str(r) for r in list(rows)[:5]) + (" ..." if len(rows) > 5 else "")
        named = f" ({', '.join(dict.fromkeys(names))})" if names else ""
        where.append(f"row {shown}{named}")
    if column:
        where.append(f"column {column!r}")
    key_path = ", ".join(where) or None
    raise OfferValidationError(msg, file=source, key_path=key_path, hint=hint)


def _rows(mask: pd.Series | np.ndarray | Sequence[bool], first_data_row: int) -> list[int]:
    """1-based file row numbers (header is row 1) of the True entries of ``mask``."""
    flags = mask.to_numpy() if isinstance(mask, pd.Series) else np.asarray(mask, dtype=bool)
    return [int(i) + first_data_row for i in np.flatnonzero(flags)]


@dataclass(frozen=True)
class _Table:
    """The table being validated, for the steps: its columns (input, derived and defaulted), the
    row index, and where errors point (``source`` and the file row of the first data row)."""

    data: Mapping[object, pd.Series]
    index: pd.RangeIndex
    source: str | None
    first_data_row: int

    def fail(
        self, msg: str, mask: Any = (), column: str | None = None, hint: str | None = None
    ) -> NoReturn:
        """Raise for the rows of ``mask`` (booleans, one a row) in ``column``."""
        rows = _rows(mask, self.first_data_row) if len(mask) else ()
        _fail(msg, self.source, rows, column, hint, self._names(mask) if len(mask) else ())

    def _names(self, mask: Any) -> list[str]:
        """The instance types of the first rows of ``mask``, where the table names them: a row
        number alone does not find an offer in a provider's JSON answer."""
        names = self.data.get("instance_type")
        if names is None:
            return []
        flags = mask.to_numpy() if isinstance(mask, pd.Series) else np.asarray(mask, dtype=bool)
        return [str(names.iloc[i]) for i in np.flatnonzero(flags)[:5]]


def validate_offers(
    df: pd.DataFrame,
    *,
    source: str | None = None,
    catalog: GpuCatalog | None = None,
    first_data_row: int = 2,
) -> pd.DataFrame:
    """Check ``df`` against the common schema and return a clean copy.

    Coerces dtypes, canonicalises GPU names (aliases accepted), fills derivable columns
    (``gpu_memory_total_gib``) and rejects: missing or unknown columns, non-numeric or negative
    prices, missing on-demand prices, unknown GPU models, unknown interconnects, bad dates and
    duplicate (provider, region, instance_type) keys.  Errors name ``source``, the row (as a 1-based
    file row, header = 1) and the column.

    The checks run column by column in the order above; each works on whole columns (a snapshot of
    ~1,200 rows validates in a few milliseconds), and the first failure is reported.
    """
    catalog = catalog or load_gpu_catalog()
    df = df.reset_index(drop=True)
    index = pd.RangeIndex(len(df))
    table = _Table(_with_derived_columns(df, index), index, source, first_data_row)
    _check_column_names(table)
    out: dict[str, pd.Series] = {
        col.name: _number_column(col, table) for col in COLUMNS if col.dtype in ("float", "int")
    }
    zero = out["gpu_count"] <= 0
    if zero.any():
        table.fail(
            f"must be at least 1 ({_allowed(COLUMN_BY_NAME['gpu_count'])})",
            zero,
            "gpu_count",
            hint="gpu_count is the number of GPUs in one instance",
        )
    text = {col.name: _text_column(col, table) for col in COLUMNS if col.dtype == "string"}
    text["provider"] = [None if v is None else v.lower() for v in text["provider"]]
    text["gpu_model"] = _canonical_gpus(text["gpu_model"], catalog, table)
    for name, allowed in (
        ("interconnect", [e.value for e in Interconnect]),
        ("fabric", [e.value for e in Fabric]),
        ("price_basis_reserved", list(PRICE_BASES)),
        ("price_basis_savings_plan", list(SAVINGS_PLAN_BASES)),
    ):
        text[name] = _enum_column(name, text[name], allowed, table)
    _check_price_bases(out, text, table)
    unwired = (out["gpu_count"] > 1).to_numpy() & (
        pd.Series(text["interconnect"], index=index) == Interconnect.NONE.value
    ).to_numpy()
    if unwired.any():
        # was: an 8-GPU instance wired by nothing listed and quoted as if on PCIe
        table.fail(
            "interconnect none cannot wire an instance of more than one GPU: GPUs that share an "
            "instance talk over PCIe at least",
            unwired,
            "interconnect",
            hint="write pcie, nvlink or nvswitch for it (none is for one-GPU instances)",
        )
    _normalise_memory(out, _check_memory(out, text["gpu_model"], catalog, table))
    _check_dates(text["as_of"], table)
    _check_unique_keys(text, table)
    for column, cells_out in text.items():
        out[column] = pd.Series(cells_out, index=index)
    return pd.DataFrame({name: out[name] for name in COLUMN_NAMES}, index=index)


def _check_price_bases(
    out: dict[str, pd.Series], text: dict[str, list[Any]], table: _Table
) -> None:
    """Refuse a row whose prices contradict each other: a reserved or savings-plan price beside
    a basis of ``none`` (which says the row has no such price), and a median spot price below the
    cheapest one (the median over zones is at least their lowest).  Each was read as given."""
    for basis_name, prices in _BASES.items():
        given = np.zeros(len(table.index), dtype=bool)
        for name in prices:
            given |= out[name].notna().to_numpy()
        none = np.array([v == "none" for v in text[basis_name]], dtype=bool)
        if (given & none).any():
            kind = "reserved" if basis_name == "price_basis_reserved" else "savings-plan"
            bases = "listed or derived" if kind == "reserved" else "listed"
            table.fail(
                f"a {kind} price is given, and {basis_name} none says the row has none",
                given & none,
                basis_name,
                hint=f"write {bases} (or leave the cell blank: a price in the list is a listed "
                f"one), or leave the {kind} prices out",
            )
    spot = out["price_spot_usd_per_hour"].to_numpy(dtype=float)
    median = out["price_spot_median_usd_per_hour"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        below = median < spot * (1.0 - 1e-9)
    if below.any():
        first = int(np.flatnonzero(below)[0])
        table.fail(
            f"the median spot price ${median[first]:g}/h is below the cheapest, "
            f"price_spot_usd_per_hour ${spot[first]:g}/h: a median over zones is at least their "
            "lowest",
            below,
            "price_spot_median_usd_per_hour",
            hint="price_spot_usd_per_hour is the cheapest zone's spot price and "
            "price_spot_median_usd_per_hour the median over the zones: swap them if they were "
            "written the other way round",
        )


def _with_derived_columns(df: pd.DataFrame, index: pd.RangeIndex) -> dict[object, pd.Series]:
    """The input's columns, then the derived and defaulted ones; ``df`` itself is never modified."""
    data: dict[object, pd.Series] = {
        name: df[name] for name in df.columns if name not in LISTING_COLUMNS
    }
    if "gpu_memory_total_gib" not in data and {"gpu_memory_gib", "gpu_count"} <= data.keys():
        data["gpu_memory_total_gib"] = pd.to_numeric(
            data["gpu_memory_gib"], errors="coerce"
        ) * pd.to_numeric(data["gpu_count"], errors="coerce")
    for name, default in _DEFAULTS.items():
        if name not in data:
            data[name] = pd.Series([default] * len(index), index=index, dtype=object)
    # A price list without a price basis (older snapshots, private CSVs) or with a blank one: a
    # price it gives is the listed one, and a row without one has none (was, for the reserved
    # prices: "none" beside the reserved price the same row gave)
    for basis_name, prices in _BASES.items():
        given = np.zeros(len(index), dtype=bool)
        for name in prices:
            if name in data:
                given |= pd.to_numeric(data[name], errors="coerce").notna().to_numpy()
        default_basis = pd.Series(np.where(given, "listed", "none"), index=index, dtype=object)
        basis = data.get(basis_name)
        if basis is None:
            data[basis_name] = default_basis
        else:
            blank = basis.isna().to_numpy() | (basis.astype(str).str.strip() == "").to_numpy()
            data[basis_name] = basis.where(~blank, default_basis)
    return data


def _check_column_names(table: _Table) -> None:
    """Every required column is there and no unknown one is (with "did you mean")."""
    missing = [c for c in REQUIRED_COLUMNS if c not in table.data]
    if missing:
        # a header cell that is a missing column misspelt (' region', 'Provider', 'gpu_modle')
        # was left unnamed: the message said only which columns were missing
        near = []
        for cell in (str(c) for c in table.data if c not in COLUMN_NAMES):
            plain = cell.strip().lower().replace(" ", "_")
            meant = [plain] if plain in missing else suggest(cell, missing, 1)
            if meant:
                near.append(f"the header has {cell!r}: did you mean {meant[0]!r}?")
        table.fail(
            f"missing required column(s) {', '.join(missing)}"
            + ("" if not near else f" ({'; '.join(near)})"),
            hint="a price list is a CSV whose header row names the offer columns; "
            "`planner offers --format csv` prints one to start from",
        )
    unknown = [c for c in table.data if c not in COLUMN_NAMES]
    if unknown:
        # the column's own name in another case or with spaces first (was: SPOT_INTERRUPTION_PCT
        # -> "did you mean 'interconnect'?", the spelling's nearest by letters)
        hints = {
            c: (
                [plain]
                if (plain := str(c).strip().lower().replace(" ", "_")) in COLUMN_NAMES
                else suggest(str(c), COLUMN_NAMES, 1)
            )
            for c in unknown
        }
        detail = ", ".join(
            f"{c!r}" + (f" (did you mean {h[0]!r}?)" if h else "") for c, h in hints.items()
        )
        secret = next((str(c) for c in unknown if is_credential_name(str(c))), None)
        # was: no hint at all
        table.fail(
            f"unknown column(s) {detail}",
            hint=no_credentials_hint(secret)
            if secret is not None
            else "a price list takes the offer table's columns: `planner offers --format csv` "
            "prints a header of every one of them to start from",
        )


_DECIMAL_COMMA_CELL = re.compile(r"\s*[-+]?\d+,\d+\s*")
_MONEY_CELL = re.compile(
    r"\s*([$€£]|[A-Za-z]{3}\s)?\s*([-+]?(?:\d+\.?\d*|\.\d+))\s*([A-Za-z]{3})?\s*"
)


def _cell_hint(text: str, col: Column) -> str | None:
    """The number a cell that is not one means, where it can be told: a decimal comma (a
    spreadsheet in a European locale: 3,20), thousands separators (1,200) or a currency written
    with the amount ($3.20, 3.20 USD).  Was the column's bound hint alone ("divide a monthly
    price by 730")."""
    fixed = ascii_digits_fix(text)
    if fixed is not None:  # ８, １.29: full-width digits (an input method's)
        return f"write {fixed.strip()}: digits in ASCII 0-9, not full-width"
    if _DECIMAL_COMMA_CELL.fullmatch(text):
        whole, _, part = text.strip().partition(",")
        if len(part) == 3 and whole.lstrip("+-") != "0":  # 1,200: thousands, or 1.2
            return (
                f"write {whole}{part} if the comma separates thousands, {whole}.{part} if it is "
                "a decimal comma: a number takes a decimal point and no separators"
            )
        return f"write {whole}.{part}: a decimal point, not a comma"
    money = _MONEY_CELL.fullmatch(text)
    if money is not None and (money.group(1) or money.group(3)):
        code = (money.group(1) or money.group(3) or "").strip().upper()
        if code in ("$", "USD"):
            return f"write {money.group(2)} alone: the column's name says its unit ({col.unit})"
        return (
            f"write the amount in USD alone ({col.unit}): convert {code} first (planner's "
            "rate table: docs/file-formats.md)"
        )
    return None


def _number_column(col: Column, table: _Table) -> pd.Series:
    """One numeric column, coerced: text and (when required) blanks, negatives and, for whole
    numbers, fractions are refused; an optional column the table leaves out is all NaN."""
    raw = table.data.get(col.name)
    if raw is None:  # an optional column the table leaves out
        raw = pd.Series(np.nan, index=table.index, dtype="float64")
    # a column the CSV reader already read as numbers (a snapshot's) needs no coercion
    num = raw if raw.dtype.kind in "iuf" else pd.to_numeric(raw, errors="coerce")
    values = num.to_numpy(dtype="float64", na_value=np.nan)
    absent = np.isnan(values)
    if absent.any():  # text that is not a number, or a missing value
        # only entries present in ``raw`` but lost by to_numeric can be text; blank is missing
        bad = absent & raw.notna().to_numpy()
        if bad.any():
            bad &= (raw.astype(str).str.strip() != "").to_numpy()
        if bad.any():
            text = str(raw[bad].iloc[0])
            table.fail(
                f"not a number ({raw[bad].iloc[0]!r}); {_measure(col)} ({_allowed(col)})",
                bad,
                col.name,
                hint="; ".join(h for h in (_cell_hint(text, col), _bound_hint(col)) if h) or None,
            )
        if col.required:
            table.fail("required value is missing", absent, col.name, hint=_required_hint(col))
    for bad, what in ((np.isinf(values), "not a finite number"), (values < 0, "negative value")):
        if bad.any():
            table.fail(
                f"{what}; {_measure(col)} ({_allowed(col)})",
                bad,
                col.name,
                hint=_bound_hint(col),
            )
    if col.max_value is not None:
        unit = f" {col.unit}" if col.unit else ""  # zones has none
        huge = values > col.max_value
        if huge.any():
            table.fail(
                f"{values[huge][0]:g}{unit} is more than any real offer has "
                f"(at most {col.max_value:,.0f}{unit})",
                huge,
                col.name,
                hint=_bound_hint(col) or "check the value and its unit",
            )
    if col.dtype != "int":
        return pd.Series(values, index=table.index)
    frac = ~absent & (values != np.round(values))
    if frac.any():
        # was: "must be a whole number" alone
        table.fail(
            f"must be a whole number, got {values[frac][0]:g}",
            frac,
            col.name,
            hint=f"write {col.name} as a whole number of {col.unit or 'them'}, e.g. "
            f"{max(1, round(values[frac][0])):g}",
        )
    if absent.any():  # an optional whole-number column with blanks stays float (NaN)
        return pd.Series(values, index=table.index)
    return pd.Series(num.to_numpy(dtype="int64"), index=table.index)


def _allowed(col: Column) -> str:
    """The values ``col`` takes, for messages: ``from 0 to 10,000 USD/h``."""
    low = 1 if col.name == "gpu_count" else 0
    if col.max_value is None:
        return f"at least {low} {col.unit}".rstrip()
    return f"from {low} to {col.max_value:,.0f} {col.unit}".rstrip()


_BOUND_HINTS = {
    "USD/h": "prices are per instance-hour: divide a monthly price by 730, a yearly one by 8,760",
    "GiB": "memory is in GiB per GPU (80 for an A100-80GB)",
    "%/month": "a percentage from 0 to 100",
}


# What a column's value is, where its unit's hint would mislead (host RAM and an instance's
# total GPU memory are GiB too, but not per GPU: the hint said "GiB per GPU" for them).
_COLUMN_HINTS = {
    "gpu_memory_total_gib": "gpu_memory_total_gib is the GPU memory of the whole instance in GiB "
    "(640 for 8 x A100-80GB); leave the column out and it is computed",
    "host_memory_gib": "host_memory_gib is the instance's RAM in GiB (1152 for a p4d.24xlarge)",
}


def _bound_hint(col: Column) -> str | None:
    """The fix for a value of ``col`` out of its range: its own, else its unit's."""
    return _COLUMN_HINTS.get(col.name) or _BOUND_HINTS.get(col.unit)


def _measure(col: Column) -> str:
    """What ``col`` counts in, for messages: ``gpu_count is in GPUs``, ``zones is a whole
    number`` (a column without a unit read "zones is in  (from 0 to 1,000)")."""
    if col.unit:
        return f"{col.name} is in {col.unit}"
    return f"{col.name} is a {'whole number' if col.dtype == 'int' else 'number'}"


def _required_hint(col: Column) -> str:
    """What to write in an empty required cell."""
    return (
        f"every offer needs its {col.name}"
        + (f" ({col.description})" if col.description else "")
        + "; `planner offers --format csv` prints rows to copy from"
    )


def _text_column(col: Column, table: _Table) -> list[str | None]:
    """One text column, stripped, blanks as None (refused when the column is required)."""
    s = table.data.get(col.name)
    if s is None:  # pragma: no cover - every string column is required (checked above)
        s = pd.Series([None] * len(table.index), index=table.index, dtype=object)
    # one pass: a blank cell, or one only of spaces, is None (``"" or None``); a text cell (all
    # but a few, read from a CSV) is stripped as it is, anything else read as text first
    values = [
        (v.strip() or None) if type(v) is str else _cell_text(v)
        for v in s.to_numpy(dtype=object).tolist()
    ]
    if col.required and None in values:
        empty = [v is None for v in values]
        table.fail("required value is missing", empty, col.name, hint=_required_hint(col))
    return values


def _cell_text(value: Any) -> str | None:
    """A cell that is not a ``str`` (a number in a text column, a missing value) as text,
    stripped, or None when it is missing or blank."""
    return None if pd.isna(value) else str(value).strip() or None


def _canonical_gpus(
    names: list[str | None], catalog: GpuCatalog, table: _Table
) -> list[str | None]:
    """GPU names (aliases accepted) as the catalog's canonical names; each distinct name is
    looked up once."""
    canon: dict[str | None, str] = {}
    for i, gpu_name in enumerate(names):
        if gpu_name not in canon:
            gpu = catalog.get(str(gpu_name))
            if gpu is None:
                err = UnknownNameError("GPU", str(gpu_name), catalog.names)
                _fail(
                    f"unknown GPU model {gpu_name!r} ({err.hint})",
                    table.source,
                    [i + table.first_data_row],
                    "gpu_model",
                )
            canon[gpu_name] = gpu.name
    return [canon[v] for v in names]


def _enum_column(
    name: str, values: list[str | None], allowed: list[str], table: _Table
) -> list[str | None]:
    """A column of enum values, lower-cased; anything outside ``allowed`` is refused."""
    lowered = [None if v is None else v.lower() for v in values]
    bad = [v not in allowed for v in lowered]
    if any(bad):
        value = lowered[bad.index(True)]
        close = suggest(str(value), allowed, 1)
        # IB, RoCEv2, 100GbE: the link's other names, as the command line and files take them
        # (was: no suggestion for 'ib')
        alias = link_alias(str(value), allowed)
        table.fail(
            f"{value!r} is not one of {', '.join(allowed)}",
            bad,
            name,
            hint=f"did you mean {alias!r}? ({value} names {alias})"
            if alias
            else (f"did you mean {close[0]!r}?" if close else None),
        )
    return lowered


# A provider's "GB" figure stored as GiB reads 1e9 / 2**30 = 0.931 of the catalog (AWS lists an
# L4 or A10G as 22.35 GiB); anything further from the catalog is another part or a typo.
_MEMORY_RATIO_RANGE = (0.9, 1.02)


def _check_memory(
    out: Mapping[str, pd.Series], gpus: list[str | None], catalog: GpuCatalog, table: _Table
) -> np.ndarray:
    """Per-GPU memory agrees with the GPU catalog, and the instance total with count x memory:
    an A100-80GB offered with 16 GiB would otherwise be planned on as a 16 GiB part.  Returns
    the catalog's memory per GPU of each row."""
    memory_gib = {g: catalog.resolve(str(g)).memory_gib for g in set(gpus)}  # per model, not row
    catalog_gib = np.array([memory_gib[g] for g in gpus], dtype=float)
    per_gpu = out["gpu_memory_gib"].to_numpy(dtype=float)
    ratio = per_gpu / catalog_gib
    low, high = _MEMORY_RATIO_RANGE
    off = (ratio < low) | (ratio > high)
    if off.any():
        i = int(np.flatnonzero(off)[0])
        table.fail(
            f"{per_gpu[i]:g} GiB per GPU, but the {gpus[i]} has {catalog_gib[i]:g} GiB "
            "(planner gpus)",
            off,
            "gpu_memory_gib",
            hint="fix gpu_memory_gib, or gpu_model if the instance has another part "
            "(planner gpus lists them with their memory)",
        )
    total = out["gpu_memory_total_gib"].to_numpy(dtype=float)
    expected = per_gpu * out["gpu_count"].to_numpy(dtype=float)
    wrong = np.abs(total - expected) > 0.02 * expected
    if wrong.any():
        i = int(np.flatnonzero(wrong)[0])
        table.fail(
            f"{total[i]:g} GiB in all, but gpu_count x gpu_memory_gib is {expected[i]:g} GiB",
            wrong,
            "gpu_memory_total_gib",
            hint="leave gpu_memory_total_gib out and it is computed",
        )
    return catalog_gib


def _normalise_memory(out: dict[str, pd.Series], catalog_gib: np.ndarray) -> None:
    """One memory figure per GPU model: the catalog's.  Providers list the same part differently
    (AWS's 22.35 GiB L4 is GCP's 24 GB L4), and a filter such as ``--min-gpu-memory 24`` must not
    drop one of them; the provider's own figure stays in ``gpu_memory_listed_gib``."""
    listed = out["gpu_memory_listed_gib"]
    out["gpu_memory_listed_gib"] = listed.where(listed.notna(), out["gpu_memory_gib"])
    out["gpu_memory_gib"] = pd.Series(catalog_gib, index=listed.index)
    out["gpu_memory_total_gib"] = out["gpu_memory_gib"] * out["gpu_count"]


# A price is captured on or before the day it is published; a day of slack covers time zones.
_FUTURE_SLACK_DAYS = 1
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _check_dates(as_of: list[str | None], table: _Table) -> None:
    """``as_of`` is a YYYY-MM-DD date, not in the future; each distinct value is parsed once (a
    snapshot file carries one or two)."""
    distinct = list(dict.fromkeys(as_of))
    latest = clock.utc_today() + timedelta(days=_FUTURE_SLACK_DAYS)
    days = _iso_days(distinct)
    if days is not None:  # every value a real YYYY-MM-DD day (a snapshot's own dates)
        future = {str(v) for v, d in zip(distinct, days, strict=True) if d > latest}
        if future:
            _future_dates(future, as_of, table)
        return
    parsed = pd.to_datetime(pd.Series(distinct, dtype=object), format="%Y-%m-%d", errors="coerce")
    # strptime also reads 2026-1-1, which the snapshot's age (date.fromisoformat) then refused
    # with a traceback: a date is written with two-digit months and days
    undated = {
        v
        for v, ok in zip(distinct, parsed.notna(), strict=True)
        if not ok or not _ISO_DATE.fullmatch(str(v))
    }
    if undated:
        first = str(next(v for v in as_of if v in undated))
        written = parsed[distinct.index(first)]
        hint = None
        if pd.notna(written):  # 2026-1-1
            hint = f"write {written.date().isoformat()}"
        elif _ISO_DATE.match(first):  # a date-time: 2026-11-01T10:00Z
            hint = f"write the day alone: {first[:10]}"
        table.fail("as_of must be a date YYYY-MM-DD", [v in undated for v in as_of], "as_of", hint)
    future = {str(v) for v, d in zip(distinct, parsed, strict=True) if d.date() > latest}
    if future:
        _future_dates(future, as_of, table)


# The days every pandas version reads (the nanosecond timestamps' range, whole days): the fast
# path of :func:`_check_dates` takes only these, and leaves the rest to the parser's verdict.
_PARSED_DAYS = (date(1677, 9, 22), date(2262, 4, 11))


def _iso_days(values: Sequence[str | None]) -> list[date] | None:
    """The days of ``values`` when every one is a YYYY-MM-DD day that exists (and that pandas's
    parser reads), else None: then :func:`_check_dates` parses them as pandas does, to say what
    is wrong.  Without pandas's date parser, whose first use costs a quote most of a millisecond."""
    days = []
    for value in values:
        if value is None or not value.isascii() or not _ISO_DATE.fullmatch(value):
            return None
        try:
            day = date.fromisoformat(value)
        except ValueError:  # 2026-02-30
            return None
        if not _PARSED_DAYS[0] <= day <= _PARSED_DAYS[1]:
            return None
        days.append(day)
    return days


def _future_dates(future: set[str], as_of: list[str | None], table: _Table) -> NoReturn:
    """Refuse the rows dated after today (and the slack)."""
    table.fail(
        f"as_of {sorted(future)[0]} is in the future (today is {clock.utc_today()})",
        [v in future for v in as_of],
        "as_of",
        hint="as_of is the day the prices were captured",
    )


def _check_unique_keys(text: Mapping[str, list[str | None]], table: _Table) -> None:
    """No later row repeats an earlier row's (provider, region, instance_type)."""
    seen: set[tuple[str | None, ...]] = set()
    dup: list[bool] = []
    for key in zip(*(text[k] for k in KEY_COLUMNS), strict=True):
        dup.append(key in seen)
        seen.add(key)
    if any(dup):
        first = [str(text[k][dup.index(True)]) for k in KEY_COLUMNS]
        table.fail(f"duplicate offer key {'/'.join(first)}", dup)
