"""Total cost of ownership of owned GPU machines, and buy-vs-rent against cloud offers.

Pure functions: a :class:`~planner.ownership.hardware.HardwareSpec` (and an offers table in the common
schema) in, frozen dataclasses out.  No I/O.

The model, per year, for the whole fleet (``n`` machines, ``h`` hours available per machine-year)::

    depreciation = n * capex * (1 - resale) / lifetime                (straight line)
    financing    = n * [(capex - S) * CRF(r, L) + S * r] - depreciation,  S = resale * capex
                   (the annuity that repays the capital at rate r, less the depreciation;
                    0 when r = 0)
    power        = n * (u * power_kw_avg + (1 - u) * power_kw_idle) * pue * h * electricity_usd_per_kwh
    colocation   = n * 12 * (power_kw_max * colocation_usd_per_kw_month + rack_usd_per_month)
    support      = n * support_fraction_per_year * capex
    staff        = n * staff_fte * staff_usd_per_year

Power follows the utilization ``u``: a machine draws its load power (``power_kw_avg``) in the
share ``u`` of its available hours that do work and its idle power (``power_kw_idle``, by default
30% of load: :data:`~planner.ownership.hardware.IDLE_POWER_FRACTION`) in the rest, since an idle
server stays switched on.  Every other category is the same whatever the utilization.  So the
yearly cost is ``A0 + u * A1`` (``A1`` the extra energy of working rather than idling).

Resale is treated one way everywhere: the machines lose value straight-line from capex to their
resale value over the lifetime, and every figure counts the *book value* they keep.  Owned cost
at month ``m`` is the cash paid (capex, running costs, financing) less the book value then::

    owned_net(m) = capex + running * m + financing * min(m, L) - book(m)
    book(m)      = capex - (capex - S) * min(m / L, 1)                  (L the lifetime in months)

Against a cloud price ``p`` per GPU-hour (throughput-equivalent), for the same useful hours
``G * u`` a year (``c = p * G * u / 12`` a month):

    breakeven utilization  u* = A0 / (p * G - A1)                       (> 1: cloud always cheaper)
    breakeven month        m* = first m with owned_net(m) <= c * m: 0 when owning costs less per
                                useful hour (owned_net grows linearly within the life), else past
                                the life, (capex - S + financing * L) / (c - running), or never
    cash payback month     the same without the book value: capex / (c - running - financing),
                                the months until the cloud bill passes the cash paid out

cost-facts.md s2.4 works this through for an 8x H100 server: about $143k a year, $2.05 per GPU-hour
at full use, breakeven at ~87% utilization against $2.35 per GPU-hour.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from planner.errors import ConfigError, UnknownNameError, is_number
from planner.gpu_specs import GpuCatalog, load_gpu_catalog
from planner.schema import PRICE_COLUMNS, Interconnect, PurchaseOption
from planner.units import MAX_HORIZON_YEARS, MIN_HORIZON_YEARS

if TYPE_CHECKING:
    # the type only: the maths takes a HardwareSpec already read (hardware.py reads the files)
    from planner.ownership.hardware import HardwareSpec

CLOUD_OPTIONS: tuple[PurchaseOption, ...] = (
    PurchaseOption.ON_DEMAND,
    PurchaseOption.SPOT,
    PurchaseOption.RESERVED_1Y,
    PurchaseOption.RESERVED_3Y,
)


@dataclass(frozen=True)
class AnnualCost:
    """Yearly cost of the whole fleet by category, USD."""

    depreciation_usd: float
    financing_usd: float
    power_usd: float
    colocation_usd: float
    support_usd: float
    staff_usd: float

    @property
    def total_usd(self) -> float:
        return self.capital_usd + self.running_usd

    @property
    def capital_usd(self) -> float:
        """Depreciation and financing: the cost of having bought the machines."""
        return self.depreciation_usd + self.financing_usd

    @property
    def running_usd(self) -> float:
        """Power, colocation, support and staff: paid every year the machines are kept."""
        return self.power_usd + self.colocation_usd + self.support_usd + self.staff_usd

    def by_category(self) -> dict[str, float]:
        return {
            "depreciation": self.depreciation_usd,
            "financing": self.financing_usd,
            "power": self.power_usd,
            "colocation": self.colocation_usd,
            "support": self.support_usd,
            "staff": self.staff_usd,
            "total": self.total_usd,
        }


def capital_recovery_factor(rate: float, years: float) -> float:
    """Share of a loan repaid each year by an annuity over ``years`` at ``rate`` (1/years at 0%)."""
    if rate == 0:
        return 1.0 / years
    return rate / (1.0 - (1.0 + rate) ** -years)


def annual_cost(hw: HardwareSpec, utilization: float = 1.0) -> AnnualCost:
    """The fleet's yearly cost by category at ``utilization`` (see the module docstring for the
    formulas; at 1.0, the default, power is the load draw for every available hour)."""
    n = hw.machines
    salvage = hw.resale_fraction * hw.capex_usd
    depreciation = (hw.capex_usd - salvage) / hw.lifetime_years
    rate = hw.financing_rate_per_year
    annuity = (hw.capex_usd - salvage) * capital_recovery_factor(
        rate, hw.lifetime_years
    ) + salvage * rate
    return AnnualCost(
        depreciation_usd=n * depreciation,
        financing_usd=n * (annuity - depreciation),
        power_usd=n
        * hw.power_kw_at(utilization)
        * hw.pue
        * hw.hours_per_year
        * hw.electricity_usd_per_kwh,
        colocation_usd=n
        * 12
        * (hw.power_kw_max * hw.colocation_usd_per_kw_month + hw.rack_usd_per_month),
        support_usd=n * hw.support_fraction_per_year * hw.capex_usd,
        staff_usd=n * hw.staff_fte * hw.staff_usd_per_year,
    )


def usd_per_gpu_hour(hw: HardwareSpec) -> float:
    """Full cost per GPU-hour at 100% use of the available hours."""
    return annual_cost(hw).total_usd / hw.gpu_hours_per_year


def usd_per_useful_gpu_hour(hw: HardwareSpec, utilization: float) -> float:
    """Full cost per useful GPU-hour when ``utilization`` of the available hours do work (power at
    that utilization)."""
    return annual_cost(hw, utilization).total_usd / (hw.gpu_hours_per_year * utilization)


def breakeven_utilization(
    annual_total_usd: float,
    gpu_hours_per_year: float,
    cloud_usd_per_gpu_hour: float,
    *,
    usd_per_year_per_utilization: float = 0.0,
) -> float:
    """Utilization at which owning costs the same as renting the useful hours (inf if never).

    ``annual_total_usd`` is the yearly cost at 0% utilization (``A0``) and
    ``usd_per_year_per_utilization`` what each unit of utilization adds (``A1``, the energy of
    working rather than idling), so owning costs ``A0 + u * A1`` a year against
    ``p * gpu_hours_per_year * u`` for renting.
    """
    margin = cloud_usd_per_gpu_hour * gpu_hours_per_year - usd_per_year_per_utilization
    if cloud_usd_per_gpu_hour <= 0 or margin <= 0:
        return math.inf
    return annual_total_usd / margin


def breakeven_months(
    capex_usd: float, running_usd_per_month: float, cloud_usd_per_month: float
) -> float | None:
    """Cash payback: months until the cumulative cloud bill passes capex plus running costs
    (no resale counted); None if never."""
    margin = cloud_usd_per_month - running_usd_per_month
    if margin <= 0:
        return None
    return capex_usd / margin


def book_value_usd(capex_usd: float, salvage_usd: float, life_months: float, month: float) -> float:
    """Straight-line book value at ``month``: from capex down to the salvage (resale) value at the
    end of the life, then kept there."""
    return capex_usd - (capex_usd - salvage_usd) * min(month / life_months, 1.0)


def net_breakeven_months(
    capex_usd: float,
    salvage_usd: float,
    life_months: float,
    running_usd_per_month: float,
    financing_usd_per_month: float,
    cloud_usd_per_month: float,
) -> float | None:
    """The first month at which owning, net of the book value the machines keep, costs no more
    than renting: 0 when owning is cheaper per month of the life, a month past the life when only
    the running costs after it catch up, None if never (see the module docstring)."""
    within_life = (capex_usd - salvage_usd) / life_months + running_usd_per_month
    within_life += financing_usd_per_month
    if cloud_usd_per_month >= within_life:
        return 0.0
    margin = cloud_usd_per_month - running_usd_per_month
    if margin <= 0:
        return None
    return (capex_usd - salvage_usd + financing_usd_per_month * life_months) / margin


@dataclass(frozen=True)
class CloudComparison:
    """The cheapest cloud capacity of one purchase option, against the owned fleet."""

    provider: str
    region: str
    instance_type: str
    gpu_model: str
    gpu_count: int
    purchase_option: PurchaseOption
    cloud_usd_per_gpu_hour: float  # per cloud GPU-hour
    throughput_ratio: float  # owned GPU / cloud GPU, dense tensor peak (1.0 for the same model)
    cloud_usd_per_equivalent_gpu_hour: float  # cloud cost of one owned GPU-hour of work
    breakeven_utilization: float
    breakeven_months: (
        float | None
    )  # net of the book value kept (0: owning costs less from the start)
    payback_months: float | None = None  # cash: capex recovered by the monthly saving, no resale

    def to_record(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "region": self.region,
            "instance_type": self.instance_type,
            "gpu_model": self.gpu_model,
            "gpu_count": self.gpu_count,
            "purchase_option": self.purchase_option.value,
            "cloud_usd_per_gpu_hour": self.cloud_usd_per_gpu_hour,
            "throughput_ratio": self.throughput_ratio,
            "cloud_usd_per_equivalent_gpu_hour": self.cloud_usd_per_equivalent_gpu_hour,
            "breakeven_utilization": self.breakeven_utilization,
            "breakeven_months": self.breakeven_months,
            "payback_months": self.payback_months,
        }


@dataclass(frozen=True)
class CumulativePoint:
    month: int
    owned_usd: float  # cash paid less the book value kept: the figure the breakeven month uses
    cloud_usd: dict[str, float]  # purchase option -> cumulative cost
    owned_cash_usd: float = 0.0  # capex, running costs and financing paid so far
    book_value_usd: float = 0.0  # what the machines are still worth (straight line to resale)


@dataclass(frozen=True)
class TcoResult:
    hardware: HardwareSpec
    utilization: float
    years: float
    capex_usd: float  # whole fleet
    annual: AnnualCost
    usd_per_gpu_hour: float
    usd_per_useful_gpu_hour: float
    total_usd: float  # over ``years``, net of the residual book value at the end
    residual_value_usd: float
    comparisons: tuple[CloudComparison, ...]
    cumulative: tuple[CumulativePoint, ...]
    compare_gpu: str
    offers_as_of: str = ""  # set by the caller that loaded the offers
    offers_source: str = ""
    compare_reason: str = ""  # why the cloud GPU compared with is not the owned one, when not

    def usd_per_useful_gpu_hour_at(self, utilization: float) -> float:
        """Cost per useful GPU-hour at another utilization, in (0, 1] (power follows the
        utilization)."""
        from planner.ownership.hardware import check_utilization

        check_utilization(utilization)
        return usd_per_useful_gpu_hour(self.hardware, utilization)

    def to_record(self) -> dict[str, Any]:
        """The JSON shape of ``planner tco --format json``."""
        hw = self.hardware
        return {
            "hardware": hw.name,
            "gpu": hw.gpu,
            "gpus": hw.gpus,
            "machines": hw.machines,
            "utilization": self.utilization,
            "years": self.years,
            "capex_usd": self.capex_usd,
            "annual_cost_usd": self.annual.by_category(),
            "usd_per_gpu_hour": self.usd_per_gpu_hour,
            "usd_per_useful_gpu_hour": self.usd_per_useful_gpu_hour,
            "total_cost_usd": self.total_usd,
            "residual_value_usd": self.residual_value_usd,
            "compare_gpu": self.compare_gpu,
            "compare_reason": self.compare_reason,
            "comparisons": [c.to_record() for c in self.comparisons],
            "cumulative_cost_usd": [
                {
                    "month": p.month,
                    "owned": p.owned_usd,
                    "owned_cash": p.owned_cash_usd,
                    "book_value": p.book_value_usd,
                    **p.cloud_usd,
                }
                for p in self.cumulative
            ],
            "source": hw.source,
            "offers": {"as_of": self.offers_as_of, "source": self.offers_source}
            if self.offers_source
            else None,
        }


def cheapest_offers(
    offers: pd.DataFrame,
    gpu_model: str,
    *,
    min_interconnect: Interconnect = Interconnect.NONE,
) -> dict[PurchaseOption, pd.Series]:
    """The cheapest offer per GPU-hour of ``gpu_model`` for each cloud purchase option.

    Offers whose GPU link is weaker than ``min_interconnect`` are left out.  A price tie goes
    to the preferred region (:func:`planner.catalog.query.in_region_preference`: the provider's
    home region, then the US; not whichever Lambda region sorts first), then provider and
    instance type, so the answer is stable.
    """
    from planner.catalog.query import in_region_preference

    if offers.empty:
        return {}
    rank = offers["interconnect"].map(lambda v: Interconnect(str(v)).rank)
    pool = offers[(offers["gpu_model"] == gpu_model) & (rank >= min_interconnect.rank)]
    out: dict[PurchaseOption, pd.Series] = {}
    for option in CLOUD_OPTIONS:
        col = PRICE_COLUMNS[option]
        if col not in pool.columns:
            continue
        priced = pool[pool[col].notna() & (pool[col] > 0)].copy()
        if priced.empty:
            continue
        priced["_per_gpu"] = priced[col] / priced["gpu_count"]
        ranked = in_region_preference(priced.sort_values(["provider", "instance_type"]))
        best = ranked.sort_values("_per_gpu", kind="mergesort").iloc[0]
        out[option] = best
    return out


def compare_cloud(
    hw: HardwareSpec,
    offers: pd.DataFrame,
    utilization: float,
    *,
    compare_gpu: str | None = None,
    any_interconnect: bool = False,
    catalog: GpuCatalog | None = None,
) -> tuple[CloudComparison, ...]:
    """Breakeven of ``hw`` against the cheapest cloud capacity per purchase option.

    The cloud GPU is ``compare_gpu`` (default: the same model).  A different model is scaled by
    dense tensor peak, so the cloud is charged for the same work, not the same hours.  Unless
    ``any_interconnect``, a multi-GPU machine is compared only with instances whose GPU link is at
    least as strong.
    """
    catalog = catalog or load_gpu_catalog()
    own = catalog.resolve(hw.gpu)
    target = catalog.resolve(compare_gpu, key_path="compare_gpu") if compare_gpu else own
    ratio = own.peak_flops / target.peak_flops
    need = Interconnect.NONE if any_interconnect or hw.gpus_per_machine == 1 else hw.interconnect
    annual = annual_cost(hw, utilization)
    idle, busy = annual_cost(hw, 0.0).total_usd, annual_cost(hw, 1.0).total_usd
    running_per_month = annual.running_usd / 12
    financing_per_month = annual.financing_usd / 12
    capex = hw.capex_usd * hw.machines
    salvage = hw.resale_fraction * capex
    life_months = hw.lifetime_years * 12
    useful_gpu_hours_per_month = hw.gpu_hours_per_year * utilization / 12
    result = []
    for option, row in cheapest_offers(offers, target.name, min_interconnect=need).items():
        per_gpu = float(row[PRICE_COLUMNS[option]]) / float(row["gpu_count"])
        equivalent = per_gpu * ratio
        result.append(
            CloudComparison(
                provider=str(row["provider"]),
                region=str(row["region"]),
                instance_type=str(row["instance_type"]),
                gpu_model=str(row["gpu_model"]),
                gpu_count=int(row["gpu_count"]),
                purchase_option=option,
                cloud_usd_per_gpu_hour=per_gpu,
                throughput_ratio=ratio,
                cloud_usd_per_equivalent_gpu_hour=equivalent,
                breakeven_utilization=breakeven_utilization(
                    idle,
                    hw.gpu_hours_per_year,
                    equivalent,
                    usd_per_year_per_utilization=busy - idle,
                ),
                breakeven_months=net_breakeven_months(
                    capex,
                    salvage,
                    life_months,
                    running_per_month,
                    financing_per_month,
                    equivalent * useful_gpu_hours_per_month,
                ),
                payback_months=breakeven_months(
                    capex,
                    running_per_month + financing_per_month,
                    equivalent * useful_gpu_hours_per_month,
                ),
            )
        )
    return tuple(result)


def cumulative_costs(
    hw: HardwareSpec,
    comparisons: tuple[CloudComparison, ...],
    utilization: float,
    months: int,
    *,
    step_months: int = 1,
) -> tuple[CumulativePoint, ...]:
    """Cumulative cost, month by month: the cash paid (capex at month 0, then running costs at
    ``utilization`` and financing within the lifetime), the book value kept and their difference,
    against each cloud option billed for the same useful hours."""
    annual = annual_cost(hw, utilization)
    capex = hw.capex_usd * hw.machines
    salvage = hw.resale_fraction * capex
    lifetime_months = hw.lifetime_years * 12
    useful_per_month = hw.gpu_hours_per_year * utilization / 12
    points = []
    for m in range(0, months + 1, step_months):
        cash = (
            capex
            + annual.running_usd * m / 12
            + annual.financing_usd * min(m, lifetime_months) / 12
        )
        book = book_value_usd(capex, salvage, lifetime_months, m)
        cloud = {
            c.purchase_option.value: c.cloud_usd_per_equivalent_gpu_hour * useful_per_month * m
            for c in comparisons
        }
        points.append(CumulativePoint(m, cash - book, cloud, cash, book))
    return tuple(points)


def tco(
    hw: HardwareSpec,
    *,
    utilization: float = 1.0,
    years: float | None = None,
    offers: pd.DataFrame | None = None,
    compare_gpu: str | None = None,
    any_interconnect: bool = False,
    catalog: GpuCatalog | None = None,
) -> TcoResult:
    """Total cost of ownership of ``hw`` over ``years`` (default: its lifetime) at ``utilization``,
    compared with the cheapest cloud capacity in ``offers`` when given."""
    if utilization is None:  # years=None is the hardware's lifetime; utilization has no such
        raise ConfigError(
            "expected a number, got None",
            key_path="utilization",
            hint="the share of available GPU-hours doing useful work, e.g. utilization=0.6",
        )
    examples = {"utilization": "utilization=0.6", "years": "years=3"}
    for key, value in (("utilization", utilization), ("years", years)):
        # was: "expected a number, got '0.8'" and no fix
        if value is not None and not is_number(value):
            raise ConfigError(
                f"expected a number, got {value!r}",
                key_path=key,
                hint=f"give a number, not {type(value).__name__}: e.g. {examples[key]}",
            )
        if value is not None and not math.isfinite(value):
            raise ConfigError(
                f"expected a finite number, got {value!r}",
                key_path=key,
                hint=f"e.g. {examples[key]}",
            )
    from planner.ownership.hardware import check_utilization  # hardware.py validates its shares

    check_utilization(utilization)
    # plain floats in the result (a Fraction or a numpy scalar reached the reports, which could
    # not format it, and to_record's JSON): as quote() makes them
    utilization = float(utilization)
    years = float(hw.lifetime_years if years is None else years)
    if not 0 < years <= MAX_HORIZON_YEARS:
        # a number of months is the likely slip (as a hardware file's lifetime_years says)
        # (only where the months are a horizon: 500 was "if 500 is months, write 41.6667", refused
        # again)
        as_months = (
            f"if {years:g} is months, write {years / 12:g}; "
            if 12 < years <= MAX_HORIZON_YEARS * 12
            else ""
        )
        raise ConfigError(
            f"years must be in (0, {MAX_HORIZON_YEARS:g}], got {years:g}",
            key_path="years",
            hint=f"{as_months}the horizon in years, e.g. 3; leave it out for the hardware's "
            "lifetime",
        )
    if years < MIN_HORIZON_YEARS:
        raise ConfigError(
            f"a horizon of {years:g} years is under a month: it must be in "
            f"[{MIN_HORIZON_YEARS:.3g}, {MAX_HORIZON_YEARS:g}] (one month to "
            f"{MAX_HORIZON_YEARS:g} years)",
            key_path="years",
            hint="the horizon in years, e.g. 3; leave it out for the hardware's lifetime",
        )
    if isinstance(compare_gpu, str) and not compare_gpu.strip():
        # was read as "not given": the comparison quietly used the default GPU
        raise ConfigError(
            f"{compare_gpu!r} is not a GPU name",
            key_path="compare_gpu",
            hint="name a cloud GPU (e.g. H100), or leave it out to compare with the same model",
        )
    catalog = catalog or load_gpu_catalog()
    annual = annual_cost(hw, utilization)
    per_gpu_hour = usd_per_gpu_hour(hw)
    capex = hw.capex_usd * hw.machines
    salvage = hw.resale_fraction * capex
    residual = book_value_usd(capex, salvage, hw.lifetime_years * 12, years * 12)
    total = annual.capital_usd * min(years, hw.lifetime_years) + annual.running_usd * years
    reason = ""
    if offers is not None and compare_gpu is None:
        compare_gpu, reason = nearest_cloud_gpu(
            hw, offers, any_interconnect=any_interconnect, catalog=catalog
        )
    comparisons = (
        compare_cloud(
            hw,
            offers,
            utilization,
            compare_gpu=compare_gpu,
            any_interconnect=any_interconnect,
            catalog=catalog,
        )
        if offers is not None
        else ()
    )
    months = math.ceil(years * 12)
    return TcoResult(
        hardware=hw,
        utilization=utilization,
        years=years,
        capex_usd=capex,
        annual=annual,
        usd_per_gpu_hour=per_gpu_hour,
        usd_per_useful_gpu_hour=annual.total_usd / (hw.gpu_hours_per_year * utilization),
        total_usd=total,
        residual_value_usd=residual,
        comparisons=comparisons,
        cumulative=cumulative_costs(hw, comparisons, utilization, months),
        compare_gpu=catalog.resolve(compare_gpu).name if compare_gpu else hw.gpu,
        compare_reason=reason,
    )


def nearest_cloud_gpu(
    hw: HardwareSpec,
    offers: pd.DataFrame,
    *,
    any_interconnect: bool = False,
    catalog: GpuCatalog | None = None,
) -> tuple[str | None, str]:
    """The cloud GPU to compare ``hw`` with when none is named, and why.

    The owned model when the offers have it (``None``, no reason).  Otherwise (a consumer or
    edge GPU no cloud rents) the offered GPU whose dense tensor peak is nearest the owned one's
    (by ratio, so 2x faster and 2x slower are as far), among those with at least the owned GPU's
    memory (a job that fits the owned GPU fits it) and an instance with a strong enough GPU link;
    a tie goes to the smaller memory, then the name.  ``(None, reason)`` when no offered GPU fits.
    """
    catalog = catalog or load_gpu_catalog()
    own = catalog.resolve(hw.gpu)
    need = Interconnect.NONE if any_interconnect or hw.gpus_per_machine == 1 else hw.interconnect
    if offers.empty:
        return None, ""
    rank = offers["interconnect"].map(lambda v: Interconnect(str(v)).rank)
    linked = offers[rank >= need.rank]
    offered = set(linked["gpu_model"].astype(str))
    if own.name in offered:
        return None, ""
    candidates = []
    for name in sorted(offered):
        spec = catalog.get(name)
        if spec is None or spec.memory_gib + 0.5 < own.memory_gib or spec.peak_flops <= 0:
            continue
        distance = abs(math.log(spec.peak_flops / own.peak_flops))
        candidates.append((distance, spec.memory_gib, spec.name, spec))
    if not candidates:
        return None, (
            f"no cloud GPU with at least {own.memory_gib:g} GB is offered to compare "
            f"{own.name} with"
        )
    best = min(candidates)[3]
    tflops = 1e-12
    return best.name, (
        f"{own.name} is not rented in the cloud; compared with {best.name}, the offered GPU of "
        f"nearest dense tensor throughput ({best.peak_flops * tflops:,.0f} vs "
        f"{own.peak_flops * tflops:,.0f} TFLOPS) with the memory to run the same jobs "
        f"({best.memory_gib:g} GB >= {own.memory_gib:g} GB); use --compare-gpu to choose another"
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
