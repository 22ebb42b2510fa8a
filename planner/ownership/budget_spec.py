"""Budget files: demand over a planning horizon and the ways to meet it (buy, commit, rent).

A budget file (``scenarios/budgets/*.yaml``) is validated with pydantic; every problem is raised as
:class:`~planner.errors.ConfigError` naming the file, the key path and a fix.  All money is converted
to USD on load.
"""

from __future__ import annotations

import datetime
import logging
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, ValidationError

from planner import clock
from planner.config.currency import FxTable, load_fx_rates, parse_money
from planner.config.scenarios import check_file_kind, read_mapping, resolve_scenario
from planner.config.validation import NumbersNotBools, config_error
from planner.config.yamlfile import probe
from planner.errors import ConfigError
from planner.gpu_specs import GpuCatalog, load_gpu_catalog
from planner.ownership.hardware import MAX_MACHINES, HardwareSpec, load_hardware
from planner.units import (
    HOURS_PER_MONTH,
    MAX_GPU_HOURS,
    MAX_GPUS_PER_JOB,
    MAX_USD,
    MIN_USD_PER_GPU_HOUR,
    MIN_UTILIZATION,
)

log = logging.getLogger(__name__)


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
    prices_as_of: str = ""  # YYYY-MM-DD: when the file's cloud prices were read ("" not said)


_Money = float | str

# Demand growth a month is a fraction: 1 doubles it every month, the most a plan is read for (a
# percentage typed as a number, 5 for 5%, would otherwise plan x6 a month)
MAX_GROWTH_PER_MONTH = 1.0


class _Growth(NumbersNotBools):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    start: float = Field(ge=0)
    growth_per_month: float = Field(default=0.0, ge=-1, le=10)


class _Spot(NumbersNotBools):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    usd_per_gpu_hour: _Money
    max_share: float = Field(ge=0, le=1)


class _Commitment(NumbersNotBools):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    name: str | None = None
    term_months: int = Field(ge=1, le=120)
    usd_per_gpu_hour: _Money


class _Buy(NumbersNotBools):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    hardware: str
    lead_time_months: int = Field(default=0, ge=0, le=60)
    utilization: float = Field(default=1.0, ge=MIN_UTILIZATION, le=1)
    max_machines: int | None = Field(default=None, ge=0, le=MAX_MACHINES)


class _Owned(NumbersNotBools):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    hardware: str
    machines: int | None = Field(default=None, ge=0, le=MAX_MACHINES)
    utilization: float = Field(default=1.0, ge=MIN_UTILIZATION, le=1)


class _Class(NumbersNotBools):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    gpu: str
    demand_gpu_hours: list[float] | _Growth | float = 0.0
    on_demand_usd_per_gpu_hour: _Money | None = None
    spot: _Spot | None = None
    commitments: list[_Commitment] = Field(default_factory=list)
    buy: list[_Buy] = Field(default_factory=list)
    owned: list[_Owned] = Field(default_factory=list)


class _Workload(NumbersNotBools):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    name: str
    gpu: str
    gpu_hours: float = Field(gt=0)
    start_month: int = Field(default=1, ge=1)  # 1-based in files
    deadline_month: int = Field(ge=1)


class _BudgetFile(NumbersNotBools):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    name: str | None = None
    description: str = ""
    source: str | list[str] = ""
    start: str = Field(default="2027-01", pattern=r"^\d{4}-(0[1-9]|1[0-2])$")
    horizon_months: int = Field(ge=1, le=120)
    capex_limit_usd: _Money | None = None
    prices_as_of: datetime.date | None = None
    classes: list[_Class] = Field(min_length=1)
    workloads: list[_Workload] = Field(default_factory=list)


# Latest first month a budget plans from: ten years ahead.  Its prices, hardware and demand are
# today's; a plan that far out is a typed year (2207 for 2027).
MAX_START_YEARS_AHEAD = 10


def _check_start(start: str, horizon_months: int, file: str) -> None:
    """A ConfigError for a plan whose every month is past (was: ``start: "1999-01"`` planned 1999
    with today's H100 prices) or whose first month is over :data:`MAX_START_YEARS_AHEAD` years
    ahead."""
    year, month = (int(part) for part in start.split("-"))
    first = year * 12 + month - 1
    last = first + horizon_months - 1
    today = clock.utc_today()
    now = today.year * 12 + today.month - 1
    this_month = f"{today.year}-{today.month:02d}"
    if last < now:
        raise ConfigError(
            f"the plan's {horizon_months} months, {start} to {last // 12}-{last % 12 + 1:02d}, "
            f"are all past (today is {today.isoformat()})",
            file=file,
            key_path="start",
            hint=f'a budget plans the months ahead: give this month or a later one, e.g. start: "{this_month}"',
        )
    if first > now + 12 * MAX_START_YEARS_AHEAD:
        raise ConfigError(
            f"{start} is more than {MAX_START_YEARS_AHEAD} years ahead (today is "
            f"{today.isoformat()}); the plan's prices and hardware are today's",
            file=file,
            key_path="start",
            hint=f'check the year; e.g. start: "{today.year + 1}-01"',
        )


@dataclass(frozen=True)
class _Reading:
    """What every step of reading one budget file needs: the file (named in every error), the
    horizon, and the tables that resolve GPU names, currencies and ``hardware:`` references."""

    file: str
    months: int
    catalog: GpuCatalog
    fx: FxTable
    loader: Callable[[str], HardwareSpec]


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
    ``hardware:`` references (default :func:`load_hardware`); tests pass a dict's ``__getitem__``.

    The steps run in file order (classes, then workloads, then the capex limit), so the first
    problem in the file is the one reported.
    """
    catalog = catalog or load_gpu_catalog()
    fx = fx or load_fx_rates()
    check_file_kind(raw, "budget", file=file)
    m = _validated(raw, file)
    ctx = _Reading(file, m.horizon_months, catalog, fx, hardware_loader or load_hardware)
    classes, hw_files = _classes(m.classes, ctx)
    class_gpus = {c.gpu for c in classes}
    workloads = tuple(
        _workload(w, f"workloads[{i}]", class_gpus, ctx) for i, w in enumerate(m.workloads)
    )
    for i, w in enumerate(workloads):
        if any(earlier.name == w.name for earlier in workloads[:i]):
            # the plan and its report tell workloads apart by name
            raise ConfigError(
                f"workload {w.name!r} appears twice",
                file=file,
                key_path=f"workloads[{i}].name",
                hint="give each workload its own name, e.g. pretrain-13b and pretrain-13b-rerun",
            )
    # a day of slack: east of UTC a user's today is already tomorrow in UTC's morning
    if m.prices_as_of is not None and m.prices_as_of > clock.utc_today() + datetime.timedelta(1):
        raise ConfigError(
            f"{m.prices_as_of.isoformat()} is in the future (today is {clock.utc_today()})",
            file=file,
            key_path="prices_as_of",
            hint="give the day the file's cloud prices were read, e.g. prices_as_of: 2026-01-15",
        )
    _check_start(m.start, m.horizon_months, file)
    limit = (
        _usd(m.capex_limit_usd, "capex_limit_usd", ctx) if m.capex_limit_usd is not None else None
    )
    return BudgetSpec(
        name=m.name or default_name,
        start=m.start,
        horizon_months=m.horizon_months,
        classes=classes,
        workloads=workloads,
        capex_limit_usd=limit,
        source="; ".join(m.source) if isinstance(m.source, list) else m.source,
        hardware_files=hw_files,
        prices_as_of=m.prices_as_of.isoformat() if m.prices_as_of else "",
    )


def _validated(raw: Mapping[str, Any], file: str) -> _BudgetFile:
    """The file's shape checked by pydantic, its errors in the file's words."""
    try:
        return _BudgetFile.model_validate(dict(raw))
    except ValidationError as e:
        raise config_error(e, _BudgetFile, file) from None


def _usd(
    value: _Money,
    key: str,
    ctx: _Reading,
    *,
    most: float = MAX_USD,
    past: str = "any budget covers",
    hint: str = "check the units: amounts are in USD unless tagged",
) -> float:
    """An amount (``2.5`` or ``"2.3 EUR"``) in USD: finite (parse_money checks), not negative, and
    at most ``most`` (a larger one is a slip of units, not a plan: ``past`` says what it passes)."""
    usd = parse_money(value, table=ctx.fx, file=ctx.file, key_path=key)
    if usd < 0:
        raise ConfigError(
            f"must not be negative (0 to {most:,.0f} USD)", file=ctx.file, key_path=key, hint=hint
        )
    if usd > most:
        raise ConfigError(
            f"{usd:.3g} USD is more than {past} (0 to {most:,.0f} USD)",
            file=ctx.file,
            key_path=key,
            hint=hint,
        )
    return usd


# The most a GPU-hour may cost: ten times the dearest on offer (a B200 at ~19 USD on demand, the
# bundled snapshot).  Was the bound on a whole instance-hour (10,000 USD), which let a monthly
# price typed as hourly through (2,183 USD: 2.99 x 730) and priced every cloud option out.
MAX_USD_PER_GPU_HOUR = 200.0


def _price(value: _Money, key: str, ctx: _Reading) -> float:
    """A price per GPU-hour in USD, from :data:`~planner.units.MIN_USD_PER_GPU_HOUR` (was: an
    on-demand price of 0 planned H100 capacity as free, 193k USD for a 905k plan, and the warnings
    blamed the right prices beside it) to :data:`MAX_USD_PER_GPU_HOUR`."""
    usd = _usd(
        value,
        key,
        ctx,
        most=MAX_USD_PER_GPU_HOUR,
        past="any GPU-hour costs",
        hint="prices are USD per GPU-hour unless tagged: divide a monthly price by 730",
    )
    if usd < MIN_USD_PER_GPU_HOUR:
        entry = (
            "the spot entry"
            if ".spot." in key
            else "the commitment"
            if ".commitments[" in key
            else "the key"
        )
        raise ConfigError(
            f"{usd:g} USD per GPU-hour makes this capacity free (under "
            f"{MIN_USD_PER_GPU_HOUR:g}, less than the power a GPU draws)",
            file=ctx.file,
            key_path=key,
            hint=f"give the price per GPU-hour (e.g. 2.99), or leave {entry} out where the "
            "class has no such option",
        )
    return usd


def _check_gpu_hours(values: Sequence[float], key: str, ctx: _Reading, *, months: int = 1) -> None:
    """Refuse GPU-hours beyond what any budget covers (a growth rate or unit slip), and a
    month's (``values`` spread over ``months``) that would keep more GPUs busy than a job may use
    (:data:`~planner.units.MAX_GPUS_PER_JOB`; was: 4e9 GPU-hours a month, 5.5 million H100s,
    planned at 265 billion USD)."""
    if any(v > MAX_GPU_HOURS for v in values):
        raise ConfigError(
            f"{max(values):.3g} GPU-hours is more than the {MAX_GPU_HOURS:.0e} a budget covers",
            file=ctx.file,
            key_path=key,
            hint="give GPU-hours per month (check the units and growth_per_month)",
        )
    busiest = max(values, default=0.0) / max(1, months)
    if busiest > MAX_GPUS_PER_JOB * HOURS_PER_MONTH:
        raise ConfigError(
            f"{max(values):.3g} GPU-hours {'a month' if months == 1 else f'over {months} months'} "
            f"keeps {busiest / HOURS_PER_MONTH:,.0f} GPUs busy all month, past the largest "
            "clusters (~200,000 GPUs)",
            file=ctx.file,
            key_path=key,
            hint="give GPU-hours, not GPU-seconds or a total over the horizon (1,000 GPUs all "
            f"month is {1000 * HOURS_PER_MONTH:,.0f} GPU-hours)",
        )


def _from_here(path: Path) -> str:
    """``path`` as typed from the current folder: relative below it, else absolute."""
    relative = os.path.relpath(path)
    return relative if not relative.startswith("..") else str(path.resolve())


def _hardware(name: str, key: str, gpu: str, ctx: _Reading) -> HardwareSpec:
    """The hardware file ``name`` (at ``key``), which must hold ``gpu`` GPUs."""
    try:
        hw = ctx.loader(name)
    except ConfigError as e:
        beside = Path(ctx.file).parent / name
        if not Path(name).is_absolute() and probe(Path(name)) is None and probe(beside):
            # the file sits next to the budget file, and paths are read from the current folder
            raise ConfigError(
                f"hardware {name!r}: no such file in the current folder; it is beside the "
                "budget file, and a path in a budget file is read from the current folder",
                file=ctx.file,
                key_path=key,
                hint=f"write the path from the current folder: {_from_here(beside)}",
            ) from e
        raise ConfigError(
            f"hardware {name!r} does not load: {e}", file=ctx.file, key_path=key
        ) from e
    if hw.gpu != gpu:
        raise ConfigError(
            f"hardware {name!r} has {hw.gpu} GPUs, not {gpu}",
            file=ctx.file,
            key_path=key.rsplit(".", 1)[0],
            hint=f"list it under the {hw.gpu} class (classes: - gpu: {hw.gpu}), or name a "
            f"hardware file of {gpu} machines here",
        )
    return hw


def _classes(
    entries: Sequence[_Class], ctx: _Reading
) -> tuple[tuple[GpuClassPlan, ...], dict[str, HardwareSpec]]:
    """Every GPU class (each GPU once), and the hardware files they use, by the name given."""
    hw_files: dict[str, HardwareSpec] = {}
    classes: list[GpuClassPlan] = []
    for i, c in enumerate(entries):
        where = f"classes[{i}]"
        gpu = ctx.catalog.resolve(c.gpu, file=ctx.file, key_path=f"{where}.gpu").name
        if any(known.gpu == gpu for known in classes):
            raise ConfigError(
                f"GPU class {gpu} appears twice",
                file=ctx.file,
                key_path=f"{where}.gpu",
                hint=f"merge the two {gpu} classes into one: its demand, prices and machines",
            )
        plan, used = _gpu_class(c, gpu, where, ctx)
        classes.append(plan)
        hw_files.update(used)
    return tuple(classes), hw_files


# A commitment's length in its name: reserved-1y, savings-3yr, 1-year, 36m, 12-month.
_TERM_IN_NAME = re.compile(
    r"(?<![0-9])([0-9]+)[ -]?(y|yr|year|years|m|mo|month|months)(?![a-z])", re.I
)


def _check_term(name: str, term_months: int, key: str, file: str) -> None:
    """Refuse a term that contradicts the length the commitment's name gives (was:
    ``reserved-1y`` with ``term_months: 1``, a 1-year rate for a month at a time, 26% off the
    plan's cost without a word)."""
    match = _TERM_IN_NAME.search(name)
    if match is None:
        return
    number, unit = int(match.group(1)), match.group(2).lower()
    named = number * 12 if unit.startswith("y") else number
    if named == term_months or not 1 <= named <= 120:
        return
    raise ConfigError(
        f"{term_months} month{'s' if term_months != 1 else ''} for {name!r}, whose name says "
        f"{named} months",
        file=file,
        key_path=key,
        hint=f"did you mean term_months: {named}? (a term is in months: 12 a year)",
    )


def _gpu_class(
    c: _Class, gpu: str, where: str, ctx: _Reading
) -> tuple[GpuClassPlan, list[tuple[str, HardwareSpec]]]:
    """One class's demand and options, with the hardware files it names (in file order)."""
    demand = _demand(c.demand_gpu_hours, f"{where}.demand_gpu_hours", ctx)
    commitments = tuple(
        Commitment(
            name=k.name or f"reserved-{k.term_months}m",
            term_months=k.term_months,
            usd_per_gpu_hour=_price(
                k.usd_per_gpu_hour, f"{where}.commitments[{j}].usd_per_gpu_hour", ctx
            ),
        )
        for j, k in enumerate(c.commitments)
    )
    for j, k in enumerate(commitments):
        if any(earlier.name == k.name for earlier in commitments[:j]):
            # the plan and its report tell commitments apart by name
            raise ConfigError(
                f"commitment {k.name!r} appears twice in this class",
                file=ctx.file,
                key_path=f"{where}.commitments[{j}].name",
                hint="give each commitment its own name, e.g. reserved-1y and reserved-3y",
            )
    for j, k in enumerate(commitments):
        _check_term(k.name, k.term_months, f"{where}.commitments[{j}].term_months", ctx.file)
    used: list[tuple[str, HardwareSpec]] = []
    buys: list[BuyOption] = []
    for j, b in enumerate(c.buy):
        if b.lead_time_months >= ctx.months:
            # was: accepted, a purchase no month of the plan can order and receive
            raise ConfigError(
                f"a lead time of {b.lead_time_months} months leaves no month of the "
                f"{ctx.months}-month horizon to order it in and use it",
                file=ctx.file,
                key_path=f"{where}.buy[{j}].lead_time_months",
                hint=f"give a lead time under {ctx.months} months (3 is typical for GPU "
                "servers), a longer horizon_months, or remove the entry",
            )
        hw = _hardware(b.hardware, f"{where}.buy[{j}].hardware", gpu, ctx)
        used.append((b.hardware, hw))
        buys.append(BuyOption(hw, b.lead_time_months, b.utilization, b.max_machines))
    owned: list[OwnedFleet] = []
    for j, o in enumerate(c.owned):
        if o.machines == 0:
            # was: accepted, an owned fleet of no machines (a plan of it costs nothing)
            raise ConfigError(
                "0 machines owned: an owned entry lists machines you have",
                file=ctx.file,
                key_path=f"{where}.owned[{j}].machines",
                hint="write how many you own (1 or more), or remove the entry if you own none; "
                "machines you may buy go under buy:",
            )
        hw = _hardware(o.hardware, f"{where}.owned[{j}].hardware", gpu, ctx)
        if o.machines is not None:
            hw = _with_machines(hw, o.machines)
        used.append((o.hardware, hw))
        owned.append(OwnedFleet(hw, o.utilization))
    on_demand = (
        _price(c.on_demand_usd_per_gpu_hour, f"{where}.on_demand_usd_per_gpu_hour", ctx)
        if c.on_demand_usd_per_gpu_hour is not None
        else None
    )
    spot = (
        _price(c.spot.usd_per_gpu_hour, f"{where}.spot.usd_per_gpu_hour", ctx) if c.spot else None
    )
    _warn_above_on_demand(on_demand, spot, commitments, where, ctx)
    plan = GpuClassPlan(
        gpu=gpu,
        demand_gpu_hours=demand,
        on_demand_usd_per_gpu_hour=on_demand,
        spot_usd_per_gpu_hour=spot,
        spot_max_share=c.spot.max_share if c.spot else 0.0,
        commitments=commitments,
        buy=tuple(buys),
        owned=tuple(owned),
    )
    return plan, used


def _warn_above_on_demand(
    on_demand: float | None,
    spot: float | None,
    commitments: Sequence[Commitment],
    where: str,
    ctx: _Reading,
) -> None:
    """A warning (not an error: a quote can be dearer than a list price, and the plan simply
    passes it over) for a spot or committed price at or above the class's on-demand price.  Was
    silent: ``usd_per_gpu_hour: 29.9`` for 2.99 gave a plan with no commitment and no reason."""
    if on_demand is None:
        return
    priced = [(f"{where}.spot.usd_per_gpu_hour", spot)] + [
        (f"{where}.commitments[{j}].usd_per_gpu_hour", k.usd_per_gpu_hour)
        for j, k in enumerate(commitments)
    ]
    for key, price in priced:
        if price is not None and price >= on_demand:
            log.warning(
                "%s: %s: %.4g USD per GPU-hour is not below on_demand_usd_per_gpu_hour (%.4g), "
                "so the plan will not choose it; check the figure (a typo, a price per machine "
                "or per month?) or remove the entry",
                ctx.file,
                key,
                price,
                on_demand,
            )


def _demand(value: list[float] | _Growth | float, key: str, ctx: _Reading) -> tuple[float, ...]:
    """Monthly GPU-hours over the horizon from a list (one a month), a growth curve or a constant."""
    months = ctx.months
    if isinstance(value, list):
        if len(value) != months:
            raise ConfigError(
                f"{len(value)} monthly values for a {months}-month horizon",
                file=ctx.file,
                key_path=key,
                hint="give one value per month, or {start: N, growth_per_month: g}",
            )
        if any(d < 0 for d in value):
            raise ConfigError(
                "demand must not be negative",
                file=ctx.file,
                key_path=key,
                hint="give the GPU-hours needed each month, 0 or more",
            )
        demand = tuple(float(d) for d in value)
    elif isinstance(value, _Growth):
        if value.growth_per_month > MAX_GROWTH_PER_MONTH:
            # was: growth_per_month: 5 (meant as 5%) planned +500% a month, 1.3 trillion USD
            raise ConfigError(
                f"growth_per_month {value.growth_per_month:g} is +{value.growth_per_month:.0%} a "
                f"month (demand x{1 + value.growth_per_month:g} every month); it is a fraction, "
                f"at most {MAX_GROWTH_PER_MONTH:g} (doubling every month)",
                file=ctx.file,
                key_path=f"{key}.growth_per_month",
                hint=f"write {value.growth_per_month / 100:g} for {value.growth_per_month:g}% a "
                "month",
            )
        demand = tuple(value.start * (1 + value.growth_per_month) ** t for t in range(months))
    else:
        if value < 0:
            raise ConfigError(
                "demand must not be negative",
                file=ctx.file,
                key_path=key,
                hint="give the GPU-hours needed a month, 0 or more",
            )
        demand = (float(value),) * months
    _check_gpu_hours(demand, key, ctx)
    return demand


def _workload(w: _Workload, where: str, class_gpus: set[str], ctx: _Reading) -> WorkloadDemand:
    """A workload on a GPU that has a class, inside the horizon; months become 0-based."""
    gpu = ctx.catalog.resolve(w.gpu, file=ctx.file, key_path=f"{where}.gpu").name
    if gpu not in class_gpus:
        raise ConfigError(
            f"no class for GPU {gpu}",
            file=ctx.file,
            key_path=f"{where}.gpu",
            hint="add it under classes:",
        )
    if w.start_month > ctx.months:
        # was reported on deadline_month, "give a deadline_month from 36 to 36": no fix
        raise ConfigError(
            f"start_month {w.start_month} is after the horizon's last month ({ctx.months})",
            file=ctx.file,
            key_path=f"{where}.start_month",
            hint=f"months count from 1, the file's start month; give a start_month from 1 to "
            f"{ctx.months}, or a longer horizon_months",
        )
    if w.deadline_month > ctx.months or w.deadline_month < w.start_month:
        raise ConfigError(
            f"deadline_month must lie between start_month ({w.start_month}) and the horizon ({ctx.months})",
            file=ctx.file,
            key_path=f"{where}.deadline_month",
            hint=f"months count from 1, the file's start month; give a deadline_month from "
            f"{min(w.start_month, ctx.months)} to {ctx.months}, or a longer horizon_months",
        )
    window = w.deadline_month - w.start_month + 1
    _check_gpu_hours([w.gpu_hours], f"{where}.gpu_hours", ctx, months=window)
    return WorkloadDemand(w.name, gpu, w.gpu_hours, w.start_month - 1, w.deadline_month - 1)


def _with_machines(hw: HardwareSpec, machines: int) -> HardwareSpec:
    return replace(hw, machines=machines)


def load_budget(path_or_name: str) -> BudgetSpec:
    """A budget file by path, or by name from ``scenarios/budgets/<name>.yaml``."""
    path = resolve_scenario(path_or_name, "budgets")
    return budget_from_mapping(read_mapping(path, "budget"), file=str(path), default_name=path.stem)


# A budget class's on-demand price above this multiple of the median on-demand GPU-hour of its GPU
# in the offers, or under the cheapest over it, is off the market: most often a whole instance's
# price per GPU-hour (8 x 2.99 = 23.92), or a spot or committed price typed as on-demand.
OFF_MARKET_FACTOR = 3.0
# A spot price under this share of the cheapest spot GPU-hour of its GPU is off the market too
# (clouds' spot discounts reach 60-90%, never 99%).
SPOT_FLOOR_SHARE = 0.25


def warn_off_market_prices(spec: BudgetSpec, offers: Any, file: str) -> None:
    """Warn of a budget class's cloud price far outside what the offers table (``offers``, the
    snapshot's pandas table) lists for its GPU: the budget file holds its own prices, and was
    planned on an H100 at 23.92 USD a GPU-hour (an instance's price) or spot at 0.01 without a
    word.  A GPU the offers do not list is not checked."""
    if offers is None or not len(offers):
        return
    per_gpu = offers["price_on_demand_usd_per_hour"] / offers["gpu_count"].clip(lower=1)
    spot_per_gpu = offers["price_spot_usd_per_hour"] / offers["gpu_count"].clip(lower=1)
    by_gpu = offers["gpu_model"]
    for i, c in enumerate(spec.classes):
        listed = per_gpu[by_gpu == c.gpu].dropna()
        if listed.empty:
            continue
        cheapest, median = float(listed.min()), float(listed.median())
        price = c.on_demand_usd_per_gpu_hour
        key = f"classes[{i}].on_demand_usd_per_gpu_hour"
        if price is not None and price > OFF_MARKET_FACTOR * median:
            log.warning(
                "%s: %s: %.4g USD per GPU-hour for %s is over %g times the median on-demand "
                "price listed (%.4g): a price per instance? (%.4g for 8 GPUs is %.4g a GPU-hour)",
                file,
                key,
                price,
                c.gpu,
                OFF_MARKET_FACTOR,
                median,
                price,
                price / 8,
            )
        elif price is not None and price < cheapest / OFF_MARKET_FACTOR:
            log.warning(
                "%s: %s: %.4g USD per GPU-hour for %s is under a third of the cheapest on-demand "
                "price listed (%.4g): check the figure (a spot or committed price belongs under "
                "spot: or commitments:)",
                file,
                key,
                price,
                c.gpu,
                cheapest,
            )
        spot_listed = spot_per_gpu[by_gpu == c.gpu].dropna()
        spot = c.spot_usd_per_gpu_hour
        if spot is not None and not spot_listed.empty:
            floor = float(spot_listed.min())
            if spot < SPOT_FLOOR_SHARE * floor:
                log.warning(
                    "%s: classes[%d].spot.usd_per_gpu_hour: %.4g USD per GPU-hour for %s is under "
                    "a quarter of the cheapest spot price listed (%.4g): check the figure",
                    file,
                    i,
                    spot,
                    c.gpu,
                    floor,
                )
