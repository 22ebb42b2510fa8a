"""Owned hardware and budget files: schema, validation and loading.

A hardware file (``scenarios/hardware/*.yaml``) describes one kind of owned machine: its GPUs,
what it cost, what it draws and what it costs to keep running.  A budget file
(``scenarios/budgets/*.yaml``) describes demand over a planning horizon and the ways to meet it.
Both are validated with pydantic; every problem is raised as :class:`~planner.errors.ConfigError`
naming the file, the key path and a fix ("did you mean" for misspelt keys, GPUs and currencies).

All money is converted to USD on load (``capex: 80000 CNY`` is accepted), using the bundled rate
table of :mod:`planner.currency`.
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

import planner
from planner.currency import USD, FxTable, load_fx_rates, parse_money
from planner.errors import EXPECTED_BY_PYDANTIC_ERROR, ConfigError, UnknownNameError, suggest
from planner.hardware import GpuCatalog, load_gpu_catalog
from planner.ownership import annual_cost
from planner.schema import Fabric, Interconnect
from planner.yamlfile import read_yaml

HOURS_PER_YEAR = 8760.0  # 365 d x 24 h; the worked example in cost-facts.md s2.4 uses 8,760 h
HOURS_PER_MONTH = HOURS_PER_YEAR / 12  # 730 h, the convention cloud bills use for a month
# Largest GPU-hours a budget may ask for in one month or one workload: 1e12 GPU-hours a month is
# over a billion GPUs busy all month, far past any fleet, and keeps the MILP's coefficients well
# inside what HiGHS solves reliably (it treats 1e20 as infinite: HiGHS options, infinite_bound).
MAX_GPU_HOURS = 1e12
# Largest amount of money one file entry may hold (a machine's capex, a price, a capex limit):
# a trillion USD is past any server or fleet budget, so a bigger number is a units mistake.
MAX_USD = 1e12


# ----------------------------------------------------------------------------- locations


def scenarios_dir() -> Path:
    """``scenarios/`` of a source checkout, else the copy bundled into the wheel."""
    root = Path(planner.__file__).resolve().parent
    checkout = root.parent / "scenarios"
    return checkout if checkout.is_dir() else root / "_bundled" / "scenarios"


def resolve_scenario(path_or_name: str | os.PathLike[str], kind: str) -> Path:
    """A YAML path, or a bare name looked up as ``scenarios/<kind>/<name>.yaml``."""
    singular = kind.rstrip("s")
    if not isinstance(path_or_name, (str, os.PathLike)):
        raise ConfigError(
            f"a {singular} file is a YAML path or a bundled name, not"
            f" {type(path_or_name).__name__} {path_or_name!r}"
        )
    path_or_name = os.fspath(path_or_name)
    path = Path(path_or_name).expanduser()
    if path.suffix in (".yaml", ".yml") or path.exists() or "/" in path_or_name:
        if not path.exists():
            raise ConfigError(
                f"no such file {path_or_name!r}",
                hint=f"pass a YAML path or a bundled {singular} name",
            )
        return path  # a directory or an unreadable file: _read_yaml says what is wrong
    folder = scenarios_dir() / kind
    candidate = folder / f"{path_or_name}.yaml"
    if candidate.is_file():
        return candidate
    names = sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []
    raise UnknownNameError(singular + " file", path_or_name, names)


def _read_yaml(path: Path, kind: str = "scenario") -> dict[str, Any]:
    raw = read_yaml(path, what=f"{kind} file")
    if not isinstance(raw, dict):
        raise ConfigError("expected a mapping of keys to values at the top level", file=str(path))
    return raw


def _key_path(loc: Sequence[int | str]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _allowed_keys(model: type[BaseModel], loc: Sequence[int | str]) -> list[str]:
    """Keys allowed at ``loc`` (walking nested models), for "did you mean"."""
    current: Any = model
    for part in loc:
        if isinstance(part, int) or not (
            isinstance(current, type) and issubclass(current, BaseModel)
        ):
            continue
        info = current.model_fields.get(part)
        if info is None:
            break
        current = _inner_model(info.annotation)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def _inner_model(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _field_loc(model: type[BaseModel], loc: Sequence[int | str]) -> tuple[int | str, ...]:
    """``loc`` without pydantic's union tags (``demand_gpu_hours._Growth.start`` ->
    ``demand_gpu_hours.start``): a part that names no field right after a union-typed field."""
    out: list[int | str] = []
    current: Any = model
    after_union = False
    for part in loc:
        if isinstance(part, int):
            out.append(part)
            continue
        fields = (
            current.model_fields
            if isinstance(current, type) and issubclass(current, BaseModel)
            else {}
        )
        if after_union and part not in fields:
            after_union = False
            continue  # a tag such as 'list[float]', '_Growth', 'str'
        out.append(part)
        info = fields.get(part)
        annotation = info.annotation if info is not None else None
        after_union = len(getattr(annotation, "__args__", ())) > 1
        current = _inner_model(annotation) if annotation is not None else None
    return tuple(out)


# pydantic error types that only say "the input is not of this union branch's type"
_TYPE_MISMATCH = {
    "list_type",
    "dict_type",
    "model_type",
    "model_attributes_type",
    "float_type",
    "int_type",
    "string_type",
    "bool_type",
    "is_instance_of",
}


def _best_error(errors: Sequence[Any]) -> Any:
    """The error to show: a misspelt key before its missing twin, and within a union the branch
    whose type matched the input (its error says what is wrong inside it)."""
    for err in errors:
        if err["type"] == "extra_forbidden":
            return err
    for err in errors:
        if err["type"] not in _TYPE_MISMATCH and err["type"] != "missing":
            return err
    return errors[0]


def _describe(err: Any) -> str:
    """A pydantic error in the words of the YAML file."""
    etype, got = err["type"], err.get("input")
    if etype in EXPECTED_BY_PYDANTIC_ERROR:
        return f"expected {EXPECTED_BY_PYDANTIC_ERROR[etype]}, got {got!r}"
    if etype == "string_pattern_mismatch":
        return f"expected a month like '2027-01', got {got!r}"
    return f"{err['msg']} (got {got!r})"


def _config_error(e: ValidationError, model: type[BaseModel], file: str) -> ConfigError:
    """The most useful pydantic error as a ConfigError with file, key path and a hint."""
    errors = e.errors()
    err = _best_error(errors)
    loc = _field_loc(model, tuple(err["loc"]))
    key = _key_path(loc)
    if err["type"] == "extra_forbidden":
        allowed = _allowed_keys(model, loc[:-1])
        missing = [
            str(f[-1])
            for f in (_field_loc(model, tuple(x["loc"])) for x in errors if x["type"] == "missing")
            if f and f[:-1] == loc[:-1]
        ]
        typed = str(loc[-1])
        close = difflib.get_close_matches(typed, missing, 1, 0.3) or suggest(typed, allowed, 1)
        hint = f"did you mean {close[0]!r}?" if close else "known keys: " + ", ".join(allowed)
        return ConfigError("unknown key", file=file, key_path=key, hint=hint)
    if err["type"] == "missing":
        return ConfigError("required key is missing", file=file, key_path=key)
    if err["type"] == "enum":
        expected = str((err.get("ctx") or {}).get("expected", ""))
        options = [o.strip(" '") for o in expected.replace(" or ", ",").split(",") if o.strip()]
        close = suggest(str(err.get("input")), options, 1)
        return ConfigError(
            f"{err.get('input')!r} is not one of {', '.join(options)}",
            file=file,
            key_path=key,
            hint=f"did you mean {close[0]!r}?" if close else None,
        )
    date_hint = 'YAML read a date; quote it, e.g. start: "2027-01"'
    is_date = err["type"] == "string_type" and hasattr(err.get("input"), "isoformat")
    return ConfigError(_describe(err), file=file, key_path=key, hint=date_hint if is_date else None)


# ----------------------------------------------------------------------------- hardware


@dataclass(frozen=True)
class HardwareSpec:
    """One kind of owned machine, money in USD.  Per-machine unless the name says otherwise."""

    name: str
    gpu: str  # canonical name (planner.hardware)
    gpus_per_machine: int
    machines: int
    interconnect: Interconnect
    capex_usd: float  # per machine, all-in (server, GPUs, network share, installation)
    lifetime_years: float  # straight-line depreciation period
    power_kw_avg: float  # per machine, average draw while switched on
    electricity_usd_per_kwh: float
    fabric: Fabric = Fabric.ETHERNET
    hours_available_per_day: float = 24.0
    resale_fraction: float = 0.0  # of capex, at the end of the lifetime
    power_kw_max: float = 0.0  # per machine; colocation is charged on it (0 -> power_kw_avg)
    pue: float = 1.0
    colocation_usd_per_kw_month: float = 0.0
    rack_usd_per_month: float = 0.0  # per machine: its share of rack rent
    support_fraction_per_year: float = 0.0  # of capex
    staff_fte: float = 0.0  # per machine
    staff_usd_per_year: float = 0.0  # cost of one FTE
    financing_rate_per_year: float = 0.0
    source: str = ""

    @property
    def gpus(self) -> int:
        return self.gpus_per_machine * self.machines

    @property
    def hours_per_year(self) -> float:
        """Hours each machine is available in a year."""
        return self.hours_available_per_day * 365.0

    @property
    def gpu_hours_per_year(self) -> float:
        """GPU-hours the whole fleet can deliver in a year at 100% use."""
        return self.gpus * self.hours_per_year

    def to_record(self) -> dict[str, Any]:
        return {
            k: (v.value if isinstance(v, (Interconnect, Fabric)) else v)
            for k, v in self.__dict__.items()
        }


class _HardwareFile(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str | None = None
    description: str = ""
    source: str | list[str] = ""
    currency: str = USD  # for untagged amounts under the currency-neutral keys (capex, ...)
    gpu: str
    gpus_per_machine: int = Field(ge=1)
    machines: int = Field(default=1, ge=1)
    interconnect: Interconnect | None = None
    fabric: Fabric = Fabric.ETHERNET
    hours_available_per_day: float = Field(default=24.0, gt=0, le=24)
    capex_usd: float | None = Field(default=None, ge=0)
    capex: float | str | None = None
    lifetime_years: float = Field(gt=0, le=30)
    resale_fraction: float = Field(default=0.0, ge=0, le=1)
    power_kw_avg: float = Field(ge=0)
    power_kw_max: float | None = Field(default=None, ge=0)
    pue: float = Field(default=1.0, ge=1.0, le=3.0)
    electricity_usd_per_kwh: float | None = Field(default=None, ge=0)
    electricity_per_kwh: float | str | None = None
    colocation_usd_per_kw_month: float | None = Field(default=None, ge=0)
    colocation_per_kw_month: float | str | None = None
    rack_usd_per_month: float | None = Field(default=None, ge=0)
    rack_per_month: float | str | None = None
    support_fraction_per_year: float = Field(default=0.0, ge=0, le=1)
    staff_fte: float = Field(default=0.0, ge=0)
    staff_usd_per_year: float | None = Field(default=None, ge=0)
    staff_per_year: float | str | None = None
    financing_rate_per_year: float = Field(default=0.0, ge=0, le=1)


# (USD-named key, currency-neutral key that accepts "80000 CNY", required)
_MONEY_KEYS = (
    ("capex_usd", "capex", True),
    ("electricity_usd_per_kwh", "electricity_per_kwh", True),
    ("colocation_usd_per_kw_month", "colocation_per_kw_month", False),
    ("rack_usd_per_month", "rack_per_month", False),
    ("staff_usd_per_year", "staff_per_year", False),
)


def hardware_from_mapping(
    raw: Mapping[str, Any],
    *,
    file: str = "<hardware>",
    default_name: str = "hardware",
    catalog: GpuCatalog | None = None,
    fx: FxTable | None = None,
) -> HardwareSpec:
    """Validate a parsed hardware file and return a :class:`HardwareSpec` (money in USD)."""
    catalog = catalog or load_gpu_catalog()
    fx = fx or load_fx_rates()
    try:
        m = _HardwareFile.model_validate(dict(raw))
    except ValidationError as e:
        raise _config_error(e, _HardwareFile, file) from None
    fx.rate(m.currency, file=file, key_path="currency")
    money: dict[str, float] = {}
    for usd_key, neutral_key, required in _MONEY_KEYS:
        usd_value, neutral_value = getattr(m, usd_key), getattr(m, neutral_key)
        if usd_value is not None and neutral_value is not None:
            raise ConfigError(
                f"both {usd_key} and {neutral_key} are given",
                file=file,
                key_path=neutral_key,
                hint=f"keep one: {usd_key} (a USD number) or {neutral_key} (e.g. '80000 CNY')",
            )
        if usd_value is not None:
            money[usd_key] = float(usd_value)
        elif neutral_value is not None:
            value = parse_money(
                neutral_value,
                default_currency=m.currency,
                table=fx,
                file=file,
                key_path=neutral_key,
            )
            if value < 0:
                raise ConfigError("must not be negative", file=file, key_path=neutral_key)
            money[usd_key] = value
        elif required:
            raise ConfigError(
                "required key is missing",
                file=file,
                key_path=usd_key,
                hint=f"give {usd_key} (USD) or {neutral_key} (any currency, e.g. '80000 CNY')",
            )
        else:
            money[usd_key] = 0.0
    for usd_key, amount in money.items():
        if amount > MAX_USD:
            raise ConfigError(
                f"{amount:.3g} USD is more than any machine costs ({MAX_USD:.0e})",
                file=file,
                key_path=usd_key,
                hint="check the units: amounts are per machine, in USD unless tagged",
            )
    if money["colocation_usd_per_kw_month"] > 0 and money["rack_usd_per_month"] > 0:
        raise ConfigError(
            "both colocation (per kW-month) and rack rent are given",
            file=file,
            key_path="rack_usd_per_month",
            hint="colocation per kW usually includes the space; keep one of the two",
        )
    power_max = m.power_kw_max if m.power_kw_max is not None else m.power_kw_avg
    if power_max < m.power_kw_avg:
        raise ConfigError(
            f"power_kw_max ({power_max}) is below power_kw_avg ({m.power_kw_avg})",
            file=file,
            key_path="power_kw_max",
        )
    gpu = catalog.resolve(m.gpu, file=file, key_path="gpu")
    interconnect = m.interconnect or (
        Interconnect.NONE if m.gpus_per_machine == 1 else Interconnect.PCIE
    )
    source = "; ".join(m.source) if isinstance(m.source, list) else m.source
    return HardwareSpec(
        name=m.name or default_name,
        gpu=gpu.name,
        gpus_per_machine=m.gpus_per_machine,
        machines=m.machines,
        interconnect=interconnect,
        fabric=m.fabric,
        hours_available_per_day=m.hours_available_per_day,
        capex_usd=money["capex_usd"],
        lifetime_years=m.lifetime_years,
        resale_fraction=m.resale_fraction,
        power_kw_avg=m.power_kw_avg,
        power_kw_max=power_max,
        pue=m.pue,
        electricity_usd_per_kwh=money["electricity_usd_per_kwh"],
        colocation_usd_per_kw_month=money["colocation_usd_per_kw_month"],
        rack_usd_per_month=money["rack_usd_per_month"],
        support_fraction_per_year=m.support_fraction_per_year,
        staff_fte=m.staff_fte,
        staff_usd_per_year=money["staff_usd_per_year"],
        financing_rate_per_year=m.financing_rate_per_year,
        source=source,
    )


def load_hardware(path_or_name: str) -> HardwareSpec:
    """A hardware file by path, or by name from ``scenarios/hardware/<name>.yaml``."""
    path = resolve_scenario(path_or_name, "hardware")
    return hardware_from_mapping(
        _read_yaml(path, "hardware"), file=str(path), default_name=path.stem
    )


def machine_cost_usd_per_hour(hw: HardwareSpec, basis: str) -> float:
    """What one machine-hour of ``hw`` costs.

    ``sunk``: the marginal running cost of a machine-hour used (power x PUE x electricity); the
    machines are already paid for.  ``amortised``: the full TCO per machine-hour at 100% use
    (capex less resale over the lifetime, financing, colocation, support, staff and power).
    """
    if basis == "sunk":
        return hw.power_kw_avg * hw.pue * hw.electricity_usd_per_kwh
    if basis == "amortised":
        return annual_cost(hw).total_usd / hw.machines / hw.hours_per_year
    raise UnknownNameError("cost basis", basis, ["sunk", "amortised"])


# ----------------------------------------------------------------------------- budgets


@dataclass(frozen=True)
class Commitment:
    """A cloud commitment: ``term_months`` of one GPU, billed every hour whether used or not."""

    name: str
    term_months: int
    usd_per_gpu_hour: float


@dataclass(frozen=True)
class BuyOption:
    """Servers that may be bought: delivered ``lead_time_months`` after the order."""

    hardware: HardwareSpec
    lead_time_months: int
    utilization: float  # share of the machines' hours that does useful work
    max_machines: int | None = None


@dataclass(frozen=True)
class OwnedFleet:
    """Machines already owned (capex sunk): they cost only their running costs."""

    hardware: HardwareSpec
    utilization: float


@dataclass(frozen=True)
class GpuClassPlan:
    """Demand and options for one GPU class."""

    gpu: str
    demand_gpu_hours: tuple[float, ...]  # per month of the horizon
    on_demand_usd_per_gpu_hour: float | None
    spot_usd_per_gpu_hour: float | None = None
    spot_max_share: float = 0.0
    commitments: tuple[Commitment, ...] = ()
    buy: tuple[BuyOption, ...] = ()
    owned: tuple[OwnedFleet, ...] = ()


@dataclass(frozen=True)
class WorkloadDemand:
    """A job of ``gpu_hours`` that may run in any month from ``start_month`` to ``deadline_month``
    (0-based months of the horizon, both inclusive)."""

    name: str
    gpu: str
    gpu_hours: float
    start_month: int
    deadline_month: int


@dataclass(frozen=True)
class BudgetSpec:
    name: str
    start: str  # YYYY-MM of month 0
    horizon_months: int
    classes: tuple[GpuClassPlan, ...]
    workloads: tuple[WorkloadDemand, ...] = ()
    capex_limit_usd: float | None = None
    source: str = ""
    hardware_files: Mapping[str, HardwareSpec] = field(default_factory=dict)


_Money = float | str


class _Growth(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    start: float = Field(ge=0)
    growth_per_month: float = Field(default=0.0, ge=-1, le=10)


class _Spot(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    usd_per_gpu_hour: _Money
    max_share: float = Field(ge=0, le=1)


class _Commitment(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    name: str | None = None
    term_months: int = Field(ge=1, le=120)
    usd_per_gpu_hour: _Money


class _Buy(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    hardware: str
    lead_time_months: int = Field(default=0, ge=0, le=60)
    utilization: float = Field(default=1.0, gt=0, le=1)
    max_machines: int | None = Field(default=None, ge=0)


class _Owned(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    hardware: str
    machines: int | None = Field(default=None, ge=0)
    utilization: float = Field(default=1.0, gt=0, le=1)


class _Class(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    gpu: str
    demand_gpu_hours: list[float] | _Growth | float = 0.0
    on_demand_usd_per_gpu_hour: _Money | None = None
    spot: _Spot | None = None
    commitments: list[_Commitment] = []
    buy: list[_Buy] = []
    owned: list[_Owned] = []


class _Workload(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    name: str
    gpu: str
    gpu_hours: float = Field(gt=0)
    start_month: int = Field(default=1, ge=1)  # 1-based in files
    deadline_month: int = Field(ge=1)


class _BudgetFile(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    name: str | None = None
    description: str = ""
    source: str | list[str] = ""
    start: str = Field(default="2027-01", pattern=r"^\d{4}-(0[1-9]|1[0-2])$")
    horizon_months: int = Field(ge=1, le=120)
    capex_limit_usd: _Money | None = None
    classes: list[_Class] = Field(min_length=1)
    workloads: list[_Workload] = []


def budget_from_mapping(
    raw: Mapping[str, Any],
    *,
    file: str = "<budget>",
    default_name: str = "budget",
    hardware_loader: Callable[[str], HardwareSpec] | None = None,
    catalog: GpuCatalog | None = None,
    fx: FxTable | None = None,
) -> BudgetSpec:
    """Validate a parsed budget file.  ``hardware_loader(name) -> HardwareSpec`` resolves the
    ``hardware:`` references (default :func:`load_hardware`); tests pass a dict's ``__getitem__``."""
    catalog = catalog or load_gpu_catalog()
    fx = fx or load_fx_rates()
    loader = hardware_loader or load_hardware
    try:
        m = _BudgetFile.model_validate(dict(raw))
    except ValidationError as e:
        raise _config_error(e, _BudgetFile, file) from None
    months = m.horizon_months

    def money(value: _Money, key: str) -> float:
        usd = parse_money(value, table=fx, file=file, key_path=key)
        if not math.isfinite(usd):
            raise ConfigError(f"expected a finite amount, got {value!r}", file=file, key_path=key)
        if usd < 0:
            raise ConfigError("a price must not be negative", file=file, key_path=key)
        if usd > MAX_USD:
            raise ConfigError(
                f"{usd:.3g} USD is more than any budget covers ({MAX_USD:.0e})",
                file=file,
                key_path=key,
                hint="check the units: prices are USD per GPU-hour unless tagged",
            )
        return usd

    def gpu_hours(values: Sequence[float], key: str) -> None:
        if any(v > MAX_GPU_HOURS for v in values):
            raise ConfigError(
                f"{max(values):.3g} GPU-hours is more than the {MAX_GPU_HOURS:.0e} a budget covers",
                file=file,
                key_path=key,
                hint="give GPU-hours per month (check the units and growth_per_month)",
            )

    def hardware(name: str, key: str, gpu: str) -> HardwareSpec:
        """The hardware file ``name`` (at ``key``), which must hold ``gpu`` GPUs."""
        try:
            hw = loader(name)
        except ConfigError as e:
            raise ConfigError(
                f"hardware {name!r} does not load: {e}", file=file, key_path=key
            ) from e
        if hw.gpu != gpu:
            raise ConfigError(
                f"hardware {name!r} has {hw.gpu} GPUs, not {gpu}",
                file=file,
                key_path=key.rsplit(".", 1)[0],
            )
        return hw

    hw_files: dict[str, HardwareSpec] = {}
    classes: list[GpuClassPlan] = []
    seen: set[str] = set()
    for i, c in enumerate(m.classes):
        at = f"classes[{i}]"
        gpu = catalog.resolve(c.gpu, file=file, key_path=f"{at}.gpu").name
        if gpu in seen:
            raise ConfigError(f"GPU class {gpu} appears twice", file=file, key_path=f"{at}.gpu")
        seen.add(gpu)
        if isinstance(c.demand_gpu_hours, list):
            if len(c.demand_gpu_hours) != months:
                raise ConfigError(
                    f"{len(c.demand_gpu_hours)} monthly values for a {months}-month horizon",
                    file=file,
                    key_path=f"{at}.demand_gpu_hours",
                    hint="give one value per month, or {start: N, growth_per_month: g}",
                )
            if any(d < 0 for d in c.demand_gpu_hours):
                raise ConfigError(
                    "demand must not be negative", file=file, key_path=f"{at}.demand_gpu_hours"
                )
            demand = tuple(float(d) for d in c.demand_gpu_hours)
        elif isinstance(c.demand_gpu_hours, _Growth):
            g = c.demand_gpu_hours
            demand = tuple(g.start * (1 + g.growth_per_month) ** t for t in range(months))
        else:
            if c.demand_gpu_hours < 0:
                raise ConfigError(
                    "demand must not be negative", file=file, key_path=f"{at}.demand_gpu_hours"
                )
            demand = (float(c.demand_gpu_hours),) * months
        gpu_hours(demand, f"{at}.demand_gpu_hours")
        commitments = tuple(
            Commitment(
                name=k.name or f"reserved-{k.term_months}m",
                term_months=k.term_months,
                usd_per_gpu_hour=money(
                    k.usd_per_gpu_hour, f"{at}.commitments[{j}].usd_per_gpu_hour"
                ),
            )
            for j, k in enumerate(c.commitments)
        )
        buys: list[BuyOption] = []
        for j, b in enumerate(c.buy):
            hw = hardware(b.hardware, f"{at}.buy[{j}].hardware", gpu)
            hw_files[b.hardware] = hw
            buys.append(BuyOption(hw, b.lead_time_months, b.utilization, b.max_machines))
        owned: list[OwnedFleet] = []
        for j, o in enumerate(c.owned):
            hw = hardware(o.hardware, f"{at}.owned[{j}].hardware", gpu)
            if o.machines is not None:
                hw = _with_machines(hw, o.machines)
            hw_files[o.hardware] = hw
            owned.append(OwnedFleet(hw, o.utilization))
        on_demand = (
            money(c.on_demand_usd_per_gpu_hour, f"{at}.on_demand_usd_per_gpu_hour")
            if c.on_demand_usd_per_gpu_hour is not None
            else None
        )
        classes.append(
            GpuClassPlan(
                gpu=gpu,
                demand_gpu_hours=demand,
                on_demand_usd_per_gpu_hour=on_demand,
                spot_usd_per_gpu_hour=money(c.spot.usd_per_gpu_hour, f"{at}.spot.usd_per_gpu_hour")
                if c.spot
                else None,
                spot_max_share=c.spot.max_share if c.spot else 0.0,
                commitments=commitments,
                buy=tuple(buys),
                owned=tuple(owned),
            )
        )
    workloads: list[WorkloadDemand] = []
    for i, w in enumerate(m.workloads):
        at = f"workloads[{i}]"
        gpu = catalog.resolve(w.gpu, file=file, key_path=f"{at}.gpu").name
        if gpu not in seen:
            raise ConfigError(
                f"no class for GPU {gpu}",
                file=file,
                key_path=f"{at}.gpu",
                hint="add it under classes:",
            )
        if w.deadline_month > months or w.deadline_month < w.start_month:
            raise ConfigError(
                f"deadline_month must lie between start_month ({w.start_month}) and the horizon ({months})",
                file=file,
                key_path=f"{at}.deadline_month",
            )
        gpu_hours([w.gpu_hours], f"{at}.gpu_hours")
        workloads.append(
            WorkloadDemand(w.name, gpu, w.gpu_hours, w.start_month - 1, w.deadline_month - 1)
        )
    limit = money(m.capex_limit_usd, "capex_limit_usd") if m.capex_limit_usd is not None else None
    return BudgetSpec(
        name=m.name or default_name,
        start=m.start,
        horizon_months=months,
        classes=tuple(classes),
        workloads=tuple(workloads),
        capex_limit_usd=limit,
        source="; ".join(m.source) if isinstance(m.source, list) else m.source,
        hardware_files=hw_files,
    )


def _with_machines(hw: HardwareSpec, machines: int) -> HardwareSpec:
    return replace(hw, machines=machines)


def load_budget(path_or_name: str) -> BudgetSpec:
    """A budget file by path, or by name from ``scenarios/budgets/<name>.yaml``."""
    path = resolve_scenario(path_or_name, "budgets")
    return budget_from_mapping(_read_yaml(path, "budget"), file=str(path), default_name=path.stem)
