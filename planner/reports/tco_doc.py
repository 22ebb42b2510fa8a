"""TCO and budget results as documents for budget reviews (see :mod:`planner.reports.document`).

Both builders start from the JSON record of the result (``to_record()``), so the report and
``--format json`` of the same command agree; money is shown in ``money`` (USD by default) while
every cell keeps its USD value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Any

from planner.ownership.costs import TcoResult
from planner.reports import formatting as f
from planner.reports.charts import BarChart, LineChart, Marker, RefLine, Series, ValueFormat
from planner.reports.document import (
    Cell,
    Document,
    Facts,
    Figure,
    Paragraph,
    Section,
    Summary,
    Table,
    table_from_records,
    text,
)
from planner.reports.formatting import USD_MONEY, Money

# Utilization levels for the cost-per-useful-GPU-hour curve (10 % to 100 %, 5-point steps).
_UTILIZATION_GRID = tuple(u / 100 for u in range(10, 101, 5))

_CATEGORY_NOTES = {
    "depreciation": "capex less resale, straight line over the lifetime",
    "financing": "interest on the capital",
    "power": "average draw x PUE x electricity price",
    "colocation": "per kW-month on maximum draw, or rack rent",
    "support": "share of capex per year",
    "staff": "share of an engineer",
    "total": "",
}


def plain(value: Any) -> str:
    return "-" if value is None or value == "" else str(value)


def _chart_money(money: Money) -> tuple[float, ValueFormat, str]:
    """(scale, tick format, unit) for chart axes in the report currency."""
    if money.code.upper() == "USD":
        return 1.0, "usd", "USD"
    return money.per_usd, "number", money.code.upper()


# ----------------------------------------------------------------------------------- tco


def _reliable(comps: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Options that hold capacity for a sustained load: not spot, which can be taken back."""
    return [c for c in comps if c["purchase_option"] != "spot"]


def _cheapest(comps: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    return min(comps, key=lambda c: c["cloud_usd_per_equivalent_gpu_hour"], default=None)


def _verdict(record: dict[str, Any], money: Money) -> str:
    owned = record["usd_per_useful_gpu_hour"]
    util = f.pct(record["utilization"])
    name = f"{record['machines']} x {record['hardware']} ({record['gpus']} x {record['gpu']})"
    head = (
        f"At {util} utilization, owning {name} costs {f.per_hour(owned, money)} per useful GPU-hour"
    )
    rent = _cheapest(_reliable(record["comparisons"]))
    spot = _cheapest([c for c in record["comparisons"] if c["purchase_option"] == "spot"])
    if rent is None:
        return f"{head}; there are no reserved or on-demand cloud offers to compare with."
    price = f.per_hour(rent["cloud_usd_per_equivalent_gpu_hour"], money)
    where = f"{rent['purchase_option']}, {rent['provider']} {rent['instance_type']}"
    if rent["cloud_usd_per_equivalent_gpu_hour"] > owned:
        months = rent.get("breakeven_months")
        text_ = f"{head}, less than the cheapest reliable rent ({where}, {price}): buy" + (
            f"; the purchase pays for itself in {f.months(months)}" if months else ""
        )
    elif rent["breakeven_utilization"] <= 1:
        text_ = (
            f"{head}, more than the cheapest reliable rent ({where}, {price}): rent, unless "
            f"utilization rises above {f.pct(rent['breakeven_utilization'])}"
        )
    else:
        text_ = f"{head}; renting ({where}, {price}) is cheaper at any utilization: rent"
    if spot is not None and spot["cloud_usd_per_equivalent_gpu_hour"] < owned:
        text_ += (
            f". Spot ({spot['provider']}, "
            f"{f.per_hour(spot['cloud_usd_per_equivalent_gpu_hour'], money)}) is cheaper still for "
            "work that tolerates interruptions"
        )
    return text_ + "."


def _cumulative_chart(record: dict[str, Any], money: Money) -> Figure | None:
    points = record["cumulative_cost_usd"]
    if not points:
        return None
    k, fmt, unit = _chart_money(money)
    options = [key for key in points[0] if key not in ("month", "owned")]
    series = [Series("owned", tuple((p["month"], p["owned"] * k) for p in points))]
    series += [
        Series(f"cloud {o}", tuple((p["month"], p[o] * k) for p in points), dashed=True)
        for o in options
    ]
    markers = []
    last = points[-1]["month"]
    for c in record["comparisons"]:
        m = c.get("breakeven_months")
        if m is None or m > last:
            continue
        owned_at = _interpolate([(p["month"], p["owned"]) for p in points], m)
        markers.append(Marker(m, owned_at * k, f"breakeven vs {c['purchase_option']}: {m:.0f} mo"))
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
                "Owning starts with the purchase price and grows by the running costs; each "
                "dashed line is a cloud purchase option billed for the same useful GPU-hours. "
                "Where a dashed line crosses above the solid one, owning has paid for itself."
            ),
        )
    )


def _interpolate(points: Sequence[tuple[float, float]], x: float) -> float:
    for (x0, y0), (x1, y1) in pairwise(points):
        if x0 <= x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0) if x1 != x0 else y0
    return points[-1][1]


def _utilization_chart(record: dict[str, Any], money: Money) -> Figure:
    k, fmt, unit = _chart_money(money)
    full = record["usd_per_gpu_hour"]
    series = [
        Series("owned", tuple((u, full / u * k) for u in _UTILIZATION_GRID)),
    ]
    markers = []
    for c in record["comparisons"]:
        price = c["cloud_usd_per_equivalent_gpu_hour"]
        series.append(
            Series(
                f"cloud {c['purchase_option']} ({c['provider']})",
                ((_UTILIZATION_GRID[0], price * k), (1.0, price * k)),
                dashed=True,
            )
        )
        u = c["breakeven_utilization"]
        if _UTILIZATION_GRID[0] <= u <= 1:
            markers.append(Marker(u, price * k, f"{c['purchase_option']}: {f.pct(u)}"))
    return Figure(
        LineChart(
            title="Cost per useful GPU-hour against utilization",
            x_label="utilization (share of GPU-hours doing useful work)",
            y_label=f"cost per useful GPU-hour ({unit})",
            series=tuple(series),
            markers=tuple(markers),
            ref_lines=(RefLine(record["utilization"], f"planned {f.pct(record['utilization'])}"),),
            x_format="pct",
            y_format=fmt,
            caption=(
                "An owned GPU costs the same per year whether busy or idle, so its cost per useful "
                "hour falls as utilization rises; owning wins to the right of each dot."
            ),
        )
    )


def _hardware_facts(hw: dict[str, Any], money: Money) -> Facts:
    colocation = (
        f"{f.money(hw['colocation_usd_per_kw_month'], money)} per kW-month"
        if hw["colocation_usd_per_kw_month"]
        else f"{f.money(hw['rack_usd_per_month'], money)} per machine-month (rack)"
    )
    items = [
        ("Capex per machine", Cell.of(hw["capex_usd"], money)),
        ("Lifetime (straight-line depreciation)", Cell(f"{hw['lifetime_years']:g} years")),
        ("Resale value at end of life", Cell.of(hw["resale_fraction"], f.pct)),
        ("Average power per machine", Cell(f"{hw['power_kw_avg']:g} kW", hw["power_kw_avg"])),
        ("PUE", Cell(f"{hw['pue']:g}", hw["pue"])),
        (
            "Electricity",
            Cell(
                f"{f.money(hw['electricity_usd_per_kwh'], money)} per kWh",
                hw["electricity_usd_per_kwh"],
            ),
        ),
        ("Colocation", text(colocation)),
        ("Support per year", Cell.of(hw["support_fraction_per_year"], f.pct)),
        (
            "Staff",
            text(
                f"{hw['staff_fte']:g} FTE per machine at {f.money(hw['staff_usd_per_year'], money)}"
            ),
        ),
        ("Financing rate per year", Cell.of(hw["financing_rate_per_year"], f.pct)),
        ("Hours available per day", Cell(f"{hw['hours_available_per_day']:g} h")),
    ]
    return Facts(tuple(items))


def tco_document(
    result: TcoResult,
    *,
    money: Money = USD_MONEY,
    warnings: Sequence[str] = (),
    generated_by: str = "",
) -> Document:
    """The buy-versus-rent report for one hardware file."""
    record = result.to_record()
    hw = result.hardware.to_record()
    comps = record["comparisons"]
    cheapest = _cheapest(_reliable(comps))
    figures = [
        ("Capex", Cell.of(record["capex_usd"], money)),
        ("Cost per year", Cell.of(record["annual_cost_usd"]["total"], money)),
        ("Per useful GPU-hour", Cell.of(record["usd_per_useful_gpu_hour"], money.per_hour)),
    ]
    if cheapest is not None:
        figures.append(
            (
                f"Breakeven utilization vs {cheapest['purchase_option']}",
                Cell.of(cheapest["breakeven_utilization"], _breakeven_pct),
            )
        )
    annual = record["annual_cost_usd"]
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
    sections = [
        Section(
            "Cost of ownership",
            (
                Paragraph(
                    f"{record['machines']} x {hw['name']}: {hw['gpus_per_machine']} x {record['gpu']} "
                    f"per machine ({hw['interconnect']}), {hw['lifetime_years']:g}-year life. "
                    f"Over {record['years']:g} years it costs {f.money(record['total_cost_usd'], money)} "
                    f"net of a residual value of {f.money(record['residual_value_usd'], money)}; "
                    f"{f.per_hour(record['usd_per_gpu_hour'], money)} per GPU-hour at full use."
                ),
                cost_table,
            ),
        )
    ]
    if comps:
        comp_table = table_from_records(
            f"Cheapest cloud {record['compare_gpu']} capacity per purchase option",
            comps,
            (
                ("purchase_option", "option", plain),
                ("provider", "provider", plain),
                ("region", "region", plain),
                ("instance_type", "instance", plain),
                ("cloud_usd_per_gpu_hour", "per GPU-hour", money.per_hour),
                ("cloud_usd_per_equivalent_gpu_hour", "per owned-GPU-hour of work", money.per_hour),
                ("breakeven_utilization", "owning wins above", _breakeven_pct),
                ("breakeven_months", "pays for itself after", _payback(record["years"])),
            ),
            json_path="comparisons",
        )
        cumulative = _cumulative_chart(record, money)
        blocks: list[Any] = [comp_table, _utilization_chart(record, money)]
        if cumulative:
            blocks.append(cumulative)
        curve = record["cumulative_cost_usd"]
        last = curve[-1]["month"]
        step = 3 if last <= 24 else 6 if last <= 60 else 12
        picked = [i for i, p in enumerate(curve) if p["month"] % step == 0 or p["month"] == last]
        options = [key for key in curve[0] if key not in ("month", "owned")]
        blocks.append(
            table_from_records(
                "Cumulative cost",
                curve,
                (
                    ("month", "month", f.number),
                    ("owned", "owned", money),
                    *((o, f"cloud {o}", money) for o in options),
                ),
                json_path="cumulative_cost_usd",
                rows=picked,
            )
        )
        sections.append(Section("Against the cloud", tuple(blocks)))
    else:
        sections.append(
            Section(
                "Against the cloud",
                (
                    Paragraph(
                        f"No cloud offers with {record['compare_gpu']} GPUs to compare with; try "
                        "--compare-gpu or --offers."
                    ),
                ),
            )
        )
    assumptions: list[Any] = [_hardware_facts(hw, money)]
    assumptions.append(
        Facts(
            (
                ("Utilization", Cell.of(record["utilization"], f.pct)),
                ("Horizon", Cell(f"{record['years']:g} years", record["years"])),
                (
                    "Cloud throughput per owned GPU",
                    text(
                        "same GPU model"
                        if record["compare_gpu"] == record["gpu"]
                        else f"{record['gpu']} vs {record['compare_gpu']}, scaled by dense tensor peak"
                    ),
                ),
            )
        )
    )
    if record.get("source"):
        assumptions.append(Paragraph(f"Hardware figures: {record['source']}"))
    sections.append(Section("Assumptions", tuple(assumptions)))
    offers = record.get("offers") or {}
    provenance = (
        (f"cloud prices as of {offers['as_of']} (oldest part); {offers['source']}",)
        if offers
        else ()
    )
    currency_note = (
        ()
        if money.code.upper() == "USD"
        else (f"money in {money.code.upper()} at {money.per_usd:.4g} per USD",)
    )
    return Document(
        kind="tco",
        title=f"Buy or rent: {record['machines']} x {hw['name']}",
        subtitle=(
            f"{record['gpus']} x {record['gpu']}, {f.pct(record['utilization'])} utilization, "
            f"{record['years']:g}-year horizon"
            + (f"; cloud prices as of {offers['as_of']}" if offers else "")
            + "."
        ),
        summary=Summary(_verdict(record, money), tuple(figures)),
        sections=tuple(sections),
        provenance=provenance + currency_note,
        warnings=tuple(warnings),
        generated_by=generated_by,
    )


def _payback(life_years: float) -> Callable[[float | None], str]:
    """Payback months, saying so when they fall after the hardware's life (it never pays back)."""
    life_months = life_years * 12

    def text(months: float | None) -> str:
        if months is not None and months > life_months:
            return f"{f.months(months)} (after its {life_months:.0f}-month life)"
        return f.months(months)

    return text


def _breakeven_pct(value: float | None) -> str:
    if value is None:
        return "-"
    return "never (cloud cheaper)" if value > 1 else f.pct(value)


# -------------------------------------------------------------------------------- budget

_SOURCES = (
    ("capex_usd", "owned: purchases"),
    ("owned_running_usd", "owned: running"),
    ("committed_usd", "committed"),
    ("on_demand_usd", "on-demand"),
    ("spot_usd", "spot"),
)


def _monthly_spend(months: Sequence[dict[str, Any]]) -> tuple[list[str], dict[str, list[float]]]:
    """Spend per calendar month (summed over GPU classes) and source, months in order."""
    totals: dict[str, dict[str, float]] = {}
    for m in months:
        bucket = totals.setdefault(m["month"], dict.fromkeys((key for key, _ in _SOURCES), 0.0))
        for key in bucket:
            bucket[key] += m[key]
    labels = sorted(totals)  # YYYY-MM labels sort in time order
    return labels, {key: [totals[m][key] for m in labels] for key, _ in _SOURCES}


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def budget_document(
    report: Any,
    *,
    money: Money = USD_MONEY,
    warnings: Sequence[str] = (),
    generated_by: str = "",
) -> Document:
    """The budget review: the optimal mix, month by month, against the pure strategies.

    ``report`` is a :class:`planner.optimize.budget.BudgetReport` (typed loosely: reports do not
    import the optimizer).
    """
    record: dict[str, Any] = report.to_record()
    k, fmt, unit = _chart_money(money)
    strategies = record["strategies"]
    pure = [s for s in strategies if s["strategy"] != "optimal mix" and s["total_usd"] is not None]
    best_pure = min(pure, key=lambda s: s["total_usd"]) if pure else None
    cash_usd = sum(m["cost_usd"] for m in record["months"])
    net_of = [
        f"{f.money(cash_usd, money)} paid out in the horizon",
        *(
            [
                f"plus {f.money(record['commitments_after_horizon_usd'], money)} of commitments due after it"
            ]
            if record["commitments_after_horizon_usd"] > 0
            else []
        ),
        *(
            [f"less {f.money(record['residual_value_usd'], money)} book value of the machines kept"]
            if record["residual_value_usd"] > 0
            else []
        ),
    ]
    headline = (
        f"The optimal mix for {record['name']} costs {f.money(record['total_usd'], money)} over "
        f"{record['horizon_months']} months"
        + (f" ({', '.join(net_of)})" if len(net_of) > 1 else "")
        + f": buy {_count(record['machines_bought'], 'machine')}, "
        f"commit up to {_count(record['peak_committed_gpus'], 'GPU')}"
        + (
            f", and saves {f.money(best_pure['mix_saves_usd'], money)} "
            f"({f.pct(best_pure['mix_saves_pct'] / 100)}) against the best single strategy "
            f"({best_pure['strategy']})."
            if best_pure
            else "."
        )
    )
    figures = [
        ("Total over the horizon", Cell.of(record["total_usd"], money)),
        ("Paid out in the horizon", Cell.of(cash_usd, money)),
        ("Machines bought", Cell.of(record["machines_bought"], f.number)),
        ("Peak committed GPUs", Cell.of(record["peak_committed_gpus"], f.number)),
    ]
    if best_pure:
        figures.append(
            (f"Saved against {best_pure['strategy']}", Cell.of(best_pure["mix_saves_usd"], money))
        )
    labels, spend = _monthly_spend(record["months"])
    spend_chart = Figure(
        BarChart(
            title="Monthly spend by source",
            category_label="month",
            value_label=f"spend ({unit})",
            categories=tuple(labels),
            stacks=tuple(
                (name, tuple(v * k for v in spend[key]))
                for key, name in _SOURCES
                if any(spend[key])
            ),
            value_format=fmt,
            show_totals=False,
            caption=(
                "Cash out each month: purchases land in the month they are ordered, then owned "
                "machines cost only their running costs; commitments are paid used or not."
            ),
        )
    )
    order = [s for s in strategies if s["total_usd"] is not None]
    strategy_chart = Figure(
        BarChart(
            title="Pure strategies against the optimal mix",
            category_label="strategy",
            value_label=f"total over the horizon ({unit})",
            categories=tuple(s["strategy"] for s in order),
            stacks=(("", tuple(s["total_usd"] * k for s in order)),),  # one segment: no legend
            value_format=fmt,
            horizontal=True,
            highlight=next(
                (i for i, s in enumerate(order) if s["strategy"] == "optimal mix"), None
            ),
            caption="Each single strategy against the mix the optimizer found (highlighted).",
        )
    )
    strategy_table = table_from_records(
        "",
        strategies,
        (
            ("strategy", "strategy", plain),
            ("total_usd", "total", money),
            ("mix_saves_usd", "the mix saves", money),
            ("mix_saves_pct", "saves %", lambda v: f.pct(None if v is None else v / 100)),
            ("note", "note", plain),
        ),
        json_path="strategies",
    )
    month_table = table_from_records(
        "",
        record["months"],
        (
            ("month", "month", plain),
            ("gpu", "GPU", plain),
            ("demand_gpu_hours", "demand GPU-h", f.number),
            ("owned_gpu_hours", "owned GPU-h", f.number),
            ("reserved_gpu_hours", "committed GPU-h", f.number),
            ("on_demand_gpu_hours", "on-demand GPU-h", f.number),
            ("spot_gpu_hours", "spot GPU-h", f.number),
            ("machines_ordered", "machines ordered", f.number),
            ("committed_gpus", "committed GPUs", f.number),
            ("cost_usd", "spend", money),
        ),
        json_path="months",
    )
    sections = [
        Section("Strategies", (strategy_chart, strategy_table)),
        Section("Month by month", (spend_chart, month_table)),
    ]
    if record.get("sensitivity"):
        sections.append(
            Section(
                "Sensitivity",
                (
                    Paragraph(
                        "One input changed at a time; the optimal mix re-solved for each. Where "
                        "the machines bought or the commitments change, the decision depends on "
                        "that input."
                    ),
                    table_from_records(
                        "",
                        record["sensitivity"],
                        (
                            ("parameter", "input", plain),
                            ("value", "value", plain),
                            ("total_usd", "total", money),
                            ("machines_bought", "machines", f.number),
                            ("peak_committed_gpus", "committed GPUs", f.number),
                            ("on_demand_gpu_hours", "on-demand GPU-h", f.number),
                            ("spot_gpu_hours", "spot GPU-h", f.number),
                        ),
                        json_path="sensitivity",
                    ),
                ),
            )
        )
    sections.append(
        Section(
            "Assumptions",
            (
                Facts(
                    (
                        ("Start", text(record["start"])),
                        (
                            "Horizon",
                            Cell(f"{record['horizon_months']} months", record["horizon_months"]),
                        ),
                        (
                            "Residual value of owned machines at the end",
                            Cell.of(record["residual_value_usd"], money),
                        ),
                        (
                            "Commitment fees due after the horizon",
                            Cell.of(record["commitments_after_horizon_usd"], money),
                        ),
                        (
                            "Solver",
                            text(
                                f"{record['solver']}, {record['status']}, {record['solve_seconds']:.2f} s"
                            ),
                        ),
                    )
                ),
                Paragraph(f"Prices, hardware and demand: {record['source'] or 'the budget file'}."),
            ),
        )
    )
    return Document(
        kind="budget",
        title=f"Budget review: {record['name']}",
        subtitle=f"{record['horizon_months']} months from {record['start']}.",
        summary=Summary(headline, tuple(figures)),
        sections=tuple(sections),
        provenance=()
        if money.code.upper() == "USD"
        else (f"money in {money.code.upper()} at {money.per_usd:.4g} per USD",),
        warnings=tuple(warnings),
        generated_by=generated_by,
    )
