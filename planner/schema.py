"""The common offer table: one row per (provider, region, instance type).

Every provider adapter, the bundled snapshot and user CSVs (``--offers FILE``) produce this table;
everything downstream (filters, the optimizer, reports) reads only these columns.  Units are in the
column names.  :func:`validate_offers` is called wherever data crosses a boundary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np
import pandas as pd

from planner.errors import OfferValidationError, UnknownNameError
from planner.gpu_specs import GpuCatalog, load_gpu_catalog

SCHEMA_VERSION = 1


class PurchaseOption(str, Enum):
    """How capacity is paid for."""

    ON_DEMAND = "on-demand"
    SPOT = "spot"
    RESERVED_1Y = "reserved-1y"
    RESERVED_3Y = "reserved-3y"
    OWNED = "owned"

    def __str__(self) -> str:
        return self.value


class Interconnect(str, Enum):
    """GPU-to-GPU link inside one instance, weakest to strongest."""

    NONE = "none"  # a single GPU, nothing to link
    PCIE = "pcie"
    NVLINK = "nvlink"  # NVLink bridges or a partial NVLink mesh
    NVSWITCH = "nvswitch"  # all-to-all NVLink through NVSwitch

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
    name: str
    dtype: str  # "string", "int", "float", "bool"
    unit: str
    required: bool
    description: str


COLUMNS: tuple[Column, ...] = (
    Column("provider", "string", "", True, "aws, gcp, azure, lambda, or a private source"),
    Column("region", "string", "", True, "provider region name"),
    Column("instance_type", "string", "", True, "provider instance / VM type"),
    Column("gpu_model", "string", "", True, "canonical GPU name (planner gpus)"),
    Column("gpu_count", "int", "GPUs", True, "GPUs per instance"),
    Column("gpu_memory_gib", "float", "GiB", True, "memory per GPU"),
    Column("gpu_memory_total_gib", "float", "GiB", True, "memory of all GPUs of the instance"),
    Column("vcpus", "float", "vCPUs", False, "host vCPUs"),
    Column("host_memory_gib", "float", "GiB", False, "host RAM"),
    Column("interconnect", "string", "", True, "GPU-GPU link: none, pcie, nvlink, nvswitch"),
    Column("network_gbps", "float", "Gbit/s", False, "instance network bandwidth"),
    Column(
        "fabric", "string", "", True, "inter-node network: ethernet, efa, infiniband, gpudirect-tcp"
    ),
    Column("price_on_demand_usd_per_hour", "float", "USD/h", True, "on-demand, whole instance"),
    Column("price_spot_usd_per_hour", "float", "USD/h", False, "cheapest spot price in the region"),
    Column(
        "price_spot_median_usd_per_hour", "float", "USD/h", False, "median spot price over zones"
    ),
    Column(
        "price_reserved_1y_usd_per_hour",
        "float",
        "USD/h",
        False,
        "1-year commitment, effective hourly",
    ),
    Column(
        "price_reserved_3y_usd_per_hour",
        "float",
        "USD/h",
        False,
        "3-year commitment, effective hourly",
    ),
    Column(
        "price_basis_reserved",
        "string",
        "",
        True,
        "listed, derived (from published discounts) or none",
    ),
    Column(
        "spot_interruption_pct",
        "float",
        "%/month",
        False,
        "published interruption frequency, upper bound",
    ),
    Column("zones", "int", "", False, "availability zones the offer was seen in"),
    Column("source", "string", "", True, "where the prices come from (file@commit, API)"),
    Column("as_of", "string", "date", True, "date the prices were captured, YYYY-MM-DD"),
)

COLUMN_NAMES: tuple[str, ...] = tuple(c.name for c in COLUMNS)
REQUIRED_COLUMNS: tuple[str, ...] = tuple(c.name for c in COLUMNS if c.required)
KEY_COLUMNS: tuple[str, ...] = ("provider", "region", "instance_type")
PRICE_COLUMNS: dict[PurchaseOption, str] = {
    PurchaseOption.ON_DEMAND: "price_on_demand_usd_per_hour",
    PurchaseOption.SPOT: "price_spot_usd_per_hour",
    PurchaseOption.RESERVED_1Y: "price_reserved_1y_usd_per_hour",
    PurchaseOption.RESERVED_3Y: "price_reserved_3y_usd_per_hour",
}
PRICE_BASES = ("listed", "derived", "none")

# Columns a private price CSV may leave out: they get these values.
_DEFAULTS = {"fabric": Fabric.ETHERNET.value, "price_basis_reserved": "none"}

_PANDAS_DTYPES = {"string": "object", "int": "int64", "float": "float64", "bool": "bool"}


def empty_offers() -> pd.DataFrame:
    """A zero-row table with every column at its dtype."""
    return pd.DataFrame({c.name: pd.Series(dtype=_PANDAS_DTYPES[c.dtype]) for c in COLUMNS})


def _fail(
    msg: str, source: str | None, rows: Sequence[int] = (), column: str | None = None
) -> None:
    where = []
    if rows:
        shown = ", ".join(str(r) for r in list(rows)[:5]) + (" ..." if len(rows) > 5 else "")
        where.append(f"row {shown}")
    if column:
        where.append(f"column {column!r}")
    key_path = ", ".join(where) or None
    raise OfferValidationError(msg, file=source, key_path=key_path)


def _rows(mask: pd.Series | np.ndarray | Sequence[bool], first_data_row: int) -> list[int]:
    """1-based file row numbers (header is row 1) of the True entries of ``mask``."""
    flags = mask.to_numpy() if isinstance(mask, pd.Series) else np.asarray(mask, dtype=bool)
    return [int(i) + first_data_row for i in np.flatnonzero(flags)]


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
    # the input's columns, then the derived and defaulted ones; df itself is never modified
    data: dict[object, pd.Series] = {name: df[name] for name in df.columns}
    if "gpu_memory_total_gib" not in data and {"gpu_memory_gib", "gpu_count"} <= data.keys():
        data["gpu_memory_total_gib"] = pd.to_numeric(
            data["gpu_memory_gib"], errors="coerce"
        ) * pd.to_numeric(data["gpu_count"], errors="coerce")
    for name, default in _DEFAULTS.items():
        if name not in data:
            data[name] = pd.Series([default] * len(index), index=index, dtype=object)
    missing = [c for c in REQUIRED_COLUMNS if c not in data]
    if missing:
        _fail(
            f"missing required column(s) {', '.join(missing)}",
            source,
            column=None,
        )
    unknown = [c for c in data if c not in COLUMN_NAMES]
    if unknown:
        from planner.errors import suggest

        hints = {c: suggest(str(c), COLUMN_NAMES, 1) for c in unknown}
        detail = ", ".join(
            f"{c!r}" + (f" (did you mean {h[0]!r}?)" if h else "") for c, h in hints.items()
        )
        _fail(f"unknown column(s) {detail}", source)
    out: dict[str, pd.Series] = {}
    # numbers
    for col in COLUMNS:
        if col.dtype not in ("float", "int"):
            continue
        raw = data.get(col.name)
        if raw is None:  # an optional column the table leaves out
            raw = pd.Series(np.nan, index=index, dtype="float64")
        num = pd.to_numeric(raw, errors="coerce")
        absent = num.isna().to_numpy()
        if absent.any():  # text that is not a number, or a missing value
            # only entries present in ``raw`` but lost by to_numeric can be text; blank is missing
            bad = absent & raw.notna().to_numpy()
            if bad.any():
                bad &= (raw.astype(str).str.strip() != "").to_numpy()
            if bad.any():
                _fail(
                    f"not a number ({raw[bad].iloc[0]!r}); {col.name} is in {col.unit}",
                    source,
                    _rows(bad, first_data_row),
                    col.name,
                )
            if col.required:
                _fail("required value is missing", source, _rows(absent, first_data_row), col.name)
        values = num.to_numpy(dtype="float64", na_value=np.nan)
        negative = values < 0
        if negative.any():
            _fail(
                f"negative value; {col.name} is in {col.unit}",
                source,
                _rows(negative, first_data_row),
                col.name,
            )
        if col.dtype == "int":
            frac = ~absent & (values != np.round(values))
            if frac.any():
                _fail("must be a whole number", source, _rows(frac, first_data_row), col.name)
            out[col.name] = num.astype("int64") if not absent.any() else num
        else:
            out[col.name] = num.astype("float64")
    for name in ("gpu_count",):
        zero = out[name] <= 0
        if zero.any():
            _fail("must be at least 1", source, _rows(zero, first_data_row), name)
    # strings: blank is missing; values are stripped
    text: dict[str, list[str | None]] = {}
    for col in COLUMNS:
        if col.dtype != "string":
            continue
        s = data.get(col.name)
        if s is None:  # pragma: no cover - every string column is required (checked above)
            s = pd.Series([None] * len(index), index=index, dtype=object)
        cells = s.to_numpy(dtype=object)
        absent = pd.isna(cells)
        stripped = [
            None if gone else str(v).strip() for v, gone in zip(cells.tolist(), absent, strict=True)
        ]
        empty = [v is None or v == "" for v in stripped]
        if col.required and any(empty):
            _fail("required value is missing", source, _rows(empty, first_data_row), col.name)
        text[col.name] = [None if e else v for v, e in zip(stripped, empty, strict=True)]
    text["provider"] = [None if v is None else v.lower() for v in text["provider"]]
    # GPU names -> canonical
    canon: dict[str | None, str] = {}
    for i, gpu_name in enumerate(text["gpu_model"]):
        if gpu_name not in canon:
            gpu = catalog.get(str(gpu_name))
            if gpu is None:
                err = UnknownNameError("GPU", str(gpu_name), catalog.names)
                _fail(
                    f"unknown GPU model {gpu_name!r} ({err.hint})",
                    source,
                    [i + first_data_row],
                    "gpu_model",
                )
                raise AssertionError("unreachable")  # pragma: no cover
            canon[gpu_name] = gpu.name
    text["gpu_model"] = [canon[v] for v in text["gpu_model"]]
    # enums
    for name, allowed in (
        ("interconnect", [e.value for e in Interconnect]),
        ("fabric", [e.value for e in Fabric]),
        ("price_basis_reserved", list(PRICE_BASES)),
    ):
        lowered = [None if v is None else v.lower() for v in text[name]]
        bad_enum = [v not in allowed for v in lowered]
        if any(bad_enum):
            _fail(
                f"{lowered[bad_enum.index(True)]!r} is not one of {', '.join(allowed)}",
                source,
                _rows(bad_enum, first_data_row),
                name,
            )
        text[name] = lowered
    # dates: each distinct value parsed once (a snapshot file carries one or two)
    distinct = list(dict.fromkeys(text["as_of"]))
    parsed = pd.to_datetime(pd.Series(distinct, dtype=object), format="%Y-%m-%d", errors="coerce")
    undated = {v for v, ok in zip(distinct, parsed.notna(), strict=True) if not ok}
    if undated:
        _fail(
            "as_of must be a date YYYY-MM-DD",
            source,
            _rows([v in undated for v in text["as_of"]], first_data_row),
            "as_of",
        )
    # keys: a later row repeating an earlier row's (provider, region, instance_type)
    seen: set[tuple[str | None, ...]] = set()
    dup: list[bool] = []
    for key in zip(*(text[k] for k in KEY_COLUMNS), strict=True):
        dup.append(key in seen)
        seen.add(key)
    if any(dup):
        first = [str(text[k][dup.index(True)]) for k in KEY_COLUMNS]
        _fail(f"duplicate offer key {'/'.join(first)}", source, _rows(dup, first_data_row))
    for column, cells_out in text.items():
        out[column] = pd.Series(cells_out, index=index)
    return pd.DataFrame({name: out[name] for name in COLUMN_NAMES}, index=index)
