"""A TCO result as a document for budget reviews (see :mod:`planner.reports.document`).

Built from the typed :class:`~planner.ownership.costs.TcoResult` and its hardware (attributes,
checked by mypy), never from its JSON record; table keys name the same values in
``planner tco --format json``.  Money is shown in ``money`` (USD by default) while every cell keeps
its USD value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING

from planner.reports import formatting as f
from planner.reports.charts import LineChart, Marker, RefLine, Series
from planner.reports.document import (
    Block,
    Cell,
    Column,
    Document,
    Facts,
    Figure,
    Paragraph,
    Section,
    Summary,
    Table,
    table_of,
    text,
)
from planner.reports.formatting import USD_MONEY, Money

if TYPE_CHECKING:
    from planner.ownership.costs import CloudComparison, CumulativePoint, TcoResult
    from planner.ownership.hardware import HardwareSpec

# Utilization levels for the cost-per-useful-GPU-hour curve (10 % to 100 %, 5-point steps).
_UTILIZATION_GRID = tuple(u / 100 for u in range(10, 101, 5))

_CATEGORY_NOTES = {
    "depreciation": "capex less resale, straight line over the lifetime",
    "financing": "interest on the capital",
    "power": "load draw while working, idle draw otherwise, x PUE x electricity price",
    "colocation": "per kW-month on maximum draw, or rack rent",
    "support": "share of capex per year",
    "staff": "share of an engineer",
    "total": "",
}


def plain(value: object) -> str:
    return "-" if value is None or value == "" else str(value)


def _reliable(comps: Sequence[CloudComparison]) -> list[CloudComparison]:
    """Options that hold capacity for a sustained load: not spot, which can be taken back."""
    return [c for c in comps if c.purchase_option.value != "spot"]


def _cheapest(comps: Sequence[CloudComparison]) -> CloudComparison | None:
    return min(comps, key=lambda c: c.cloud_usd_per_equivalent_gpu_hour, default=None)


def _verdict(result: TcoResult, money: Money) -> str:
    owned = result.usd_per_useful_gpu_hour
    hw = result.hardware
    name = f"{hw.machines} x {hw.name} ({hw.gpus} x {hw.gpu})"
    head = (
        f"At {f.pct(result.utilization)} utilization, owning {name} costs "
        f"{f.per_hour(owned, money)} per useful GPU-hour"
    )
    rent = _cheapest(_reliable(result.comparisons))
    spot = _cheapest([c for c in result.comparisons if c.purchase_option.value == "spot"])
    if rent is None:
        return f"{head}; there are no reserved or on-demand cloud offers to compare with."
    price = f.per_hour(rent.cloud_usd_per_equivalent_gpu_hour, money)
    where = f"{rent.purchase_option.value}, {rent.provider} {rent.instance_type}"
    if rent.cloud_usd_per_equivalent_gpu_hour > owned:
        months = rent.payback_months
        horizon = result.years * 12
        text_ = f"{head}, less than the cheapest reliable rent ({where}, {price}): buy" + (
            f"; its cash comes back in {f.months(months)}"
            + (
                f", after the {horizon:.0f}-month horizon: the saving rests on the "
                f"{f.money(result.residual_value_usd, money)} of book value kept"
                if months > horizon
                else ""
            )
            if months
            else ""
        )
    elif rent.breakeven_utilization <= 1:
        text_ = (
            f"{head}, more than the cheapest reliable rent ({where}, {price}): rent, unless "
            f"utilization rises above {f.pct(rent.breakeven_utilization)}"
        )
    else:
        text_ = f"{head}; renting ({where}, {price}) is cheaper at any utilization: rent"
    if spot is not None and spot.cloud_usd_per_equivalent_gpu_hour < owned:
        text_ += (
            f". Spot ({spot.provider}, "
            f"{f.per_hour(spot.cloud_usd_per_equivalent_gpu_hour, money)}) is cheaper still for "
            "work that tolerates interruptions"
        )
    return text_ + "."


def _cloud_options(points: Sequence[CumulativePoint]) -> list[str]:
    """The purchase options of the cumulative curve, in its order."""
    return list(points[0].cloud_usd) if points else []


def _cumulative_chart(result: TcoResult, money: Money) -> Figure | None:
    points = result.cumulative
    if not points:
        return None
    k, fmt, unit = money.chart_axis()
    series = [
        Series("owned (net of book value)", tuple((p.month, p.owned_usd * k) for p in points)),
        Series("owned: cash out", tuple((p.month, p.owned_cash_usd * k) for p in points)),
    ]
    series += [
        Series(f"cloud {o}", tuple((p.month, p.cloud_usd[o] * k) for p in points), dashed=True)
        for o in _cloud_options(points)
    ]
    markers = []
    last = points[-1].month
    for c in result.comparisons:
        m = c.breakeven_months
        if m is None or m <= 0 or m > last:
            continue
        owned_at = _interpolate([(p.month, p.owned_usd) for p in points], m)
        markers.append(
            Marker(m, owned_at * k, f"breakeven vs {c.purchase_option.value}: {m:.0f} mo")
        )
    return Figure(
        LineChart(
            title="Cumulative cost: owning versus renting the same useful hours",
            x_label="months from purchase",
            y_label=f"cumulative cost ({unit})",
            series=tuple(series),
            markers=tuple(markers),
            x_format="months",
            y_format=fmt,
            caption=(
                "Owning, net, is the cash paid out (the purchase price, then the running costs) "
                "less the book value the machines keep, straight-line to their resale value, as "
                "in the cost per hour; each dashed line is a cloud purchase option billed for the "
                "same useful GPU-hours. Where a dashed line runs above the net owned line, owning "
                "costs less net of what the machines are still worth; above the cash line, it "
                "has paid back its cash."
            ),
        )
    )


def _interpolate(points: Sequence[tuple[float, float]], x: float) -> float:
    for (x0, y0), (x1, y1) in pairwise(points):
        if x0 <= x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0) if x1 != x0 else y0
    return points[-1][1]


def _utilization_chart(result: TcoResult, money: Money) -> Figure:
    k, fmt, unit = money.chart_axis()
    series = [
        Series(
            "owned",
            tuple((u, result.usd_per_useful_gpu_hour_at(u) * k) for u in _UTILIZATION_GRID),
        ),
    ]
    markers = []
    for c in result.comparisons:
        option = c.purchase_option.value
        price = c.cloud_usd_per_equivalent_gpu_hour
        series.append(
            Series(
                f"cloud {option} ({c.provider})",
                ((_UTILIZATION_GRID[0], price * k), (1.0, price * k)),
                dashed=True,
            )
        )
        u = c.breakeven_utilization
        if _UTILIZATION_GRID[0] <= u <= 1:
            markers.append(Marker(u, price * k, f"{option}: {f.pct(u)}"))
    return Figure(
        LineChart(
            title="Cost per useful GPU-hour against utilization",
            x_label="utilization (share of GPU-hours doing useful work)",
            y_label=f"cost per useful GPU-hour ({unit})",
            series=tuple(series),
            markers=tuple(markers),
            ref_lines=(RefLine(result.utilization, f"planned {f.pct(result.utilization)}"),),
            x_format="pct",
            y_format=fmt,
            caption=(
                "An owned GPU costs nearly the same per year whether busy or idle (only its power "
                "falls to the idle draw), so its cost per useful hour falls as utilization rises; "
                "owning wins to the right of each dot."
            ),
        )
    )


def _hardware_facts(hw: HardwareSpec, money: Money) -> Facts:
    colocation = (
        f"{f.money(hw.colocation_usd_per_kw_month, money)} per kW-month"
        if hw.colocation_usd_per_kw_month
        else f"{f.money(hw.rack_usd_per_month, money)} per machine-month (rack)"
    )
    items = [
        ("Capex per machine", Cell.of(hw.capex_usd, money)),
        ("Lifetime (straight-line depreciation)", Cell(f"{hw.lifetime_years:g} years")),
        ("Resale value at end of life", Cell.of(hw.resale_fraction, f.pct)),
        ("Power per machine, working", Cell(f"{hw.power_kw_avg:g} kW", hw.power_kw_avg)),
        ("Power per machine, idle", Cell(f"{hw.idle_power_kw:,.3g} kW", hw.idle_power_kw)),
        ("PUE", Cell(f"{hw.pue:g}", hw.pue)),
        (
            "Electricity",
            Cell(
                f"{f.money(hw.electricity_usd_per_kwh, money)} per kWh",
                hw.electricity_usd_per_kwh,
            ),
        ),
        ("Colocation", text(colocation)),
        ("Support per year", Cell.of(hw.support_fraction_per_year, f.pct)),
        (
            "Staff",
            text(f"{hw.staff_fte:g} FTE per machine at {f.money(hw.staff_usd_per_year, money)}"),
        ),
        ("Financing rate per year", Cell.of(hw.financing_rate_per_year, f.pct)),
        ("Hours available per day", Cell(f"{hw.hours_available_per_day:g} h")),
    ]
    return Facts(tuple(items))


def _tco_figures(result: TcoResult, money: Money) -> tuple[tuple[str, Cell], ...]:
    figures = [
        ("Capex", Cell.of(result.capex_usd, money)),
        ("Cost per year", Cell.of(result.annual.total_usd, money)),
        ("Per useful GPU-hour", Cell.of(result.usd_per_useful_gpu_hour, money.per_hour)),
    ]
    cheapest = _cheapest(_reliable(result.comparisons))
    if cheapest is not None:
        figures.append(
            (
                f"Breakeven utilization vs {cheapest.purchase_option.value}",
                Cell.of(cheapest.breakeven_utilization, _breakeven_pct),
            )
        )
    return tuple(figures)


def _ownership_section(result: TcoResult, money: Money) -> Section:
    hw = result.hardware
    annual = result.annual.by_category()
    total = annual["total"] or 1.0
    cost_table = Table(
        title="",
        headers=("category", "per year", "share", "what it covers"),
        keys=("category", "per_year_usd", "share", "note"),
        rows=tuple(
            (
                text(name),
                Cell.of(value, money),
                Cell.of(value / total, f.pct),
                text(_CATEGORY_NOTES.get(name, "")),
            )
            for name, value in annual.items()
        ),
    )
    summary = Paragraph(
        f"{hw.machines} x {hw.name}: {hw.gpus_per_machine} x {hw.gpu} "
        f"per machine ({hw.interconnect.value}), {hw.lifetime_years:g}-year life. "
        f"Over {result.years:g} years it costs {f.money(result.total_usd, money)} "
        f"net of a residual value of {f.money(result.residual_value_usd, money)}; "
        f"{f.per_hour(result.usd_per_gpu_hour, money)} per GPU-hour at full use."
    )
    return Section("Cost of ownership", (summary, cost_table))


def _comparison_table(result: TcoResult, money: Money) -> Table:
    columns: tuple[Column[CloudComparison], ...] = (
        Column("purchase_option", "option", lambda c: c.purchase_option.value, plain),
        Column("provider", "provider", lambda c: c.provider, plain),
        Column("region", "region", lambda c: c.region, plain),
        Column("instance_type", "instance", lambda c: c.instance_type, plain),
        Column(
            "cloud_usd_per_gpu_hour",
            "per GPU-hour",
            lambda c: c.cloud_usd_per_gpu_hour,
            money.per_hour,
        ),
        Column(
            "cloud_usd_per_equivalent_gpu_hour",
            "per owned-GPU-hour of work",
            lambda c: c.cloud_usd_per_equivalent_gpu_hour,
            money.per_hour,
        ),
        Column(
            "breakeven_utilization",
            "owning wins above",
            lambda c: c.breakeven_utilization,
            _breakeven_pct,
        ),
        Column(
            "breakeven_months",
            "cheaper net of book value from",
            lambda c: c.breakeven_months,
            _breakeven_month(result.hardware.lifetime_years),
        ),
        Column(
            "payback_months",
            "cash paid back after",
            lambda c: c.payback_months,
            _payback(result.hardware.lifetime_years, result.years),
        ),
    )
    return table_of(
        f"Cheapest cloud {result.compare_gpu} capacity per purchase option",
        result.comparisons,
        columns,
        json_path="comparisons",
    )


def _cumulative_table(result: TcoResult, money: Money) -> Table:
    """The cumulative curve every quarter (half-year, year on longer horizons) and its last month."""
    curve = result.cumulative
    last = curve[-1].month
    step = 3 if last <= 24 else 6 if last <= 60 else 12
    picked = [i for i, p in enumerate(curve) if p.month % step == 0 or p.month == last]
    columns: list[Column[CumulativePoint]] = [
        Column("month", "month", lambda p: p.month, f.number),
        Column("owned_cash", "owned: cash out", lambda p: p.owned_cash_usd, money),
        Column("book_value", "book value kept", lambda p: p.book_value_usd, money),
        Column("owned", "owned, net", lambda p: p.owned_usd, money),
    ]
    columns += [_cloud_column(o, money) for o in _cloud_options(curve)]
    return table_of("Cumulative cost", curve, columns, json_path="cumulative_cost_usd", rows=picked)


def _cloud_column(option: str, money: Money) -> Column[CumulativePoint]:
    return Column(option, f"cloud {option}", lambda p: p.cloud_usd[option], money)


def _cloud_section(result: TcoResult, money: Money) -> Section:
    if not result.comparisons:
        return Section(
            "Against the cloud",
            (
                Paragraph(
                    result.compare_reason
                    or f"No cloud offers with {result.compare_gpu} GPUs to compare with; try "
                    "--compare-gpu or --offers."
                ),
            ),
        )
    cumulative = _cumulative_chart(result, money)
    reason = [Paragraph(result.compare_reason)] if result.compare_reason else []
    blocks: list[Block] = [
        *reason,
        _comparison_table(result, money),
        _utilization_chart(result, money),
        *((cumulative,) if cumulative else ()),
        _cumulative_table(result, money),
    ]
    return Section("Against the cloud", tuple(blocks))


def _tco_assumptions(result: TcoResult, money: Money) -> Section:
    hw = result.hardware
    throughput = (
        "same GPU model"
        if result.compare_gpu == hw.gpu
        else f"{hw.gpu} vs {result.compare_gpu}, scaled by dense tensor peak"
    )
    blocks: list[Block] = [
        _hardware_facts(hw, money),
        Facts(
            (
                ("Utilization", Cell.of(result.utilization, f.pct)),
                ("Horizon", Cell(f"{result.years:g} years", result.years)),
                ("Cloud throughput per owned GPU", text(throughput)),
            )
        ),
    ]
    if hw.source:
        blocks.append(Paragraph(f"Hardware figures: {hw.source}"))
    return Section("Assumptions", tuple(blocks))


def tco_document(
    result: TcoResult,
    *,
    money: Money = USD_MONEY,
    warnings: Sequence[str] = (),
    generated_by: str = "",
) -> Document:
    """The buy-versus-rent report for one hardware file."""
    hw = result.hardware
    as_of = result.offers_as_of if result.offers_source else None
    provenance = (
        (f"cloud prices as of {as_of} (oldest part); {result.offers_source}",)
        if as_of is not None
        else ()
    )
    return Document(
        kind="tco",
        title=f"Buy or rent: {hw.machines} x {hw.name}",
        subtitle=(
            f"{hw.gpus} x {hw.gpu}, {f.pct(result.utilization)} utilization, "
            f"{result.years:g}-year horizon"
            + (f"; cloud prices as of {as_of}" if as_of is not None else "")
            + "."
        ),
        summary=Summary(_verdict(result, money), _tco_figures(result, money)),
        sections=(
            _ownership_section(result, money),
            _cloud_section(result, money),
            _tco_assumptions(result, money),
        ),
        provenance=provenance + tuple(n for n in (money.note(),) if n),
        warnings=tuple(warnings),
        generated_by=generated_by,
    )


def _payback(life_years: float, horizon_years: float) -> Callable[[float | None], str]:
    """Cash payback months, saying so when they fall after the hardware's life (it never pays
    back) or after the horizon."""
    life_months, horizon_months = life_years * 12, horizon_years * 12

    def text(months: float | None) -> str:
        if months is not None and months > life_months:
            return f"never within its {life_months:.0f}-month life"
        if months is not None and months > horizon_months:
            return f"{f.months(months)} (after the {horizon_months:.0f}-month horizon)"
        return f.months(months)

    return text


def _breakeven_month(life_years: float) -> Callable[[float | None], str]:
    """The month owning, net of book value, costs no more than renting: from the start, or only
    after the hardware's life, or never."""
    life_months = life_years * 12

    def text(months: float | None) -> str:
        if months is None:
            return "never"
        if months == 0:
            return "the start"
        if (
            months > life_months
        ):  # owning costs more per hour over the life: as the utilization says
            return f"never within its {life_months:.0f}-month life"
        return f.months(months)

    return text


def _breakeven_pct(value: float | None) -> str:
    if value is None:
        return "-"
    return "never (cloud cheaper)" if value > 1 else f.pct(value)
