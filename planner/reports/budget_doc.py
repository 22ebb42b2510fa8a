"""A budget plan as a document for budget reviews (see :mod:`planner.reports.document`).

Built from the typed :class:`~planner.optimize.budget.BudgetReport` (its plan, months, pure
strategies and sensitivity rows; attributes, checked by mypy), never from its JSON record; table
keys name the same values in ``planner budget --format json``.  Money is shown in ``money`` (USD
by default) while every cell keeps its USD value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from planner.reports import formatting as f
from planner.reports.charts import BarChart
from planner.reports.document import (
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
    from planner.optimize.budget import (
        BudgetReport,
        MonthPlan,
        Purchase,
        SensitivityRow,
        StrategyResult,
    )

MIX = "optimal mix"  # the strategy the optimizer found, listed with the pure ones

# Where each month's cash goes: (chart segment, the month's amount in USD).
_SOURCES: tuple[tuple[str, Callable[[MonthPlan], float]], ...] = (
    ("owned: purchases", lambda m: m.capex_usd),
    ("owned: running", lambda m: m.owned_running_usd),
    ("committed", lambda m: m.committed_usd),
    ("on-demand", lambda m: m.on_demand_usd),
    ("spot", lambda m: m.spot_usd),
)


def plain(value: object) -> str:
    return "-" if value is None or value == "" else str(value)


def _pct_of_100(value: float | None) -> str:
    return f.pct(None if value is None else value / 100)


def _monthly_spend(months: Sequence[MonthPlan]) -> tuple[list[str], list[list[float]]]:
    """Spend per calendar month (summed over GPU classes), one list per source of ``_SOURCES``,
    months in order."""
    totals: dict[str, list[float]] = {}
    for m in months:
        bucket = totals.setdefault(m.month, [0.0] * len(_SOURCES))
        for i, (_, amount) in enumerate(_SOURCES):
            bucket[i] += amount(m)
    labels = sorted(totals)  # YYYY-MM labels sort in time order
    return labels, [[totals[m][i] for m in labels] for i in range(len(_SOURCES))]


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _best_pure(report: BudgetReport) -> StrategyResult | None:
    """The cheapest single strategy that is possible with the budget file's options."""
    pure = [s for s in report.strategies if s.strategy != MIX and s.total_usd is not None]
    return min(pure, key=lambda s: math.inf if s.total_usd is None else s.total_usd, default=None)


def _headline(report: BudgetReport, money: Money) -> str:
    """The net total, reconciled with the cash paid out and the book value kept, and what the
    mix saves; a purchase whose cash comes back only after the horizon is named."""
    plan = report.plan
    net_of = [
        f"{f.money(plan.cash_out_usd, money)} cash out in the horizon",
        f"less {f.money(plan.book_value_kept_usd, money)} book value of the machines kept",
    ]
    if plan.commitments_after_horizon_usd > 0:
        net_of.append(
            f"plus {f.money(plan.commitments_after_horizon_usd, money)} of commitments due after it"
        )
    best = _best_pure(report)
    return (
        f"The optimal mix for {plan.name} costs {f.money(plan.total_usd, money)} net over "
        f"{plan.horizon_months} months"
        + f" ({', '.join(net_of)})"
        + f": buy {_count(plan.machines_bought, 'machine')}, "
        f"commit up to {_count(plan.peak_committed_gpus, 'GPU')}"
        + (
            f", and saves {f.money(report.mix_saves_usd(best), money)} "
            f"({_pct_of_100(report.mix_saves_pct(best))}) against the best single strategy "
            f"({best.strategy})."
            if best
            else "."
        )
        + "".join(f" {_late_sentence(p, money)}" for p in plan.late_purchases)
    )


def _late_sentence(p: Purchase, money: Money) -> str:
    when = (
        f"pays back its cash only by {p.paid_back_by}"
        if p.paid_back_by is not None
        else "never pays back its cash against the cloud rates"
    )
    return (
        f"Flag: the {p.machines} x {p.hardware} ordered {p.ordered} "
        f"({f.money(p.capex_usd, money)}) {when}, after the horizon; its saving rests on the "
        f"{f.money(p.book_value_usd, money)} of book value kept."
    )


def _figures(report: BudgetReport, money: Money) -> tuple[tuple[str, Cell], ...]:
    plan = report.plan
    figures = [
        ("Cash out in the horizon", Cell.of(plan.cash_out_usd, money)),
        ("Book value kept", Cell.of(plan.book_value_kept_usd, money)),
    ]
    if plan.commitments_after_horizon_usd > 0:
        figures.append(
            ("Commitments due after it", Cell.of(plan.commitments_after_horizon_usd, money))
        )
    figures += [
        ("Net total over the horizon", Cell.of(plan.total_usd, money)),
        ("Machines bought", Cell.of(plan.machines_bought, f.number)),
        ("Peak committed GPUs", Cell.of(plan.peak_committed_gpus, f.number)),
    ]
    best = _best_pure(report)
    if best:
        figures.append(
            (f"Saved against {best.strategy}", Cell.of(report.mix_saves_usd(best), money))
        )
    return tuple(figures)


def _strategy_chart(report: BudgetReport, money: Money) -> Figure:
    k, fmt, unit = money.chart_axis()
    totals = [(s.strategy, s.total_usd) for s in report.strategies if s.total_usd is not None]
    return Figure(
        BarChart(
            title="Pure strategies against the optimal mix",
            category_label="strategy",
            value_label=f"total over the horizon ({unit})",
            categories=tuple(name for name, _ in totals),
            stacks=(("", tuple(usd * k for _, usd in totals)),),  # one segment: no legend
            value_format=fmt,
            horizontal=True,
            highlight=next((i for i, (name, _) in enumerate(totals) if name == MIX), None),
            caption="Each single strategy against the mix the optimizer found (highlighted).",
        )
    )


def _strategies_section(report: BudgetReport, money: Money) -> Section:
    columns: tuple[Column[StrategyResult], ...] = (
        Column("strategy", "strategy", lambda s: s.strategy, plain),
        Column("total_usd", "total", lambda s: s.total_usd, money),
        Column("mix_saves_usd", "the mix saves", report.mix_saves_usd, money),
        Column("mix_saves_pct", "saves %", report.mix_saves_pct, _pct_of_100),
        Column("note", "note", lambda s: s.note, plain),
    )
    table = table_of("", report.strategies, columns, json_path="strategies")
    return Section("Strategies", (_strategy_chart(report, money), table))


def _spend_chart(report: BudgetReport, money: Money) -> Figure:
    k, fmt, unit = money.chart_axis()
    labels, spend = _monthly_spend(report.plan.months)
    return Figure(
        BarChart(
            title="Monthly spend by source",
            category_label="month",
            value_label=f"spend ({unit})",
            categories=tuple(labels),
            stacks=tuple(
                (name, tuple(v * k for v in values))
                for (name, _), values in zip(_SOURCES, spend, strict=True)
                if any(values)
            ),
            value_format=fmt,
            show_totals=False,
            caption=(
                "Cash out each month: purchases land in the month they are ordered, then owned "
                "machines cost only their running costs; commitments are paid used or not."
            ),
        )
    )


def _month_table(report: BudgetReport, money: Money) -> Table:
    columns: tuple[Column[MonthPlan], ...] = (
        Column("month", "month", lambda m: m.month, plain),
        Column("gpu", "GPU", lambda m: m.gpu, plain),
        Column("demand_gpu_hours", "demand GPU-h", lambda m: m.demand_gpu_hours, f.number),
        Column("owned_gpu_hours", "owned GPU-h", lambda m: m.owned_gpu_hours, f.number),
        Column("reserved_gpu_hours", "committed GPU-h", lambda m: m.reserved_gpu_hours, f.number),
        Column("on_demand_gpu_hours", "on-demand GPU-h", lambda m: m.on_demand_gpu_hours, f.number),
        Column("spot_gpu_hours", "spot GPU-h", lambda m: m.spot_gpu_hours, f.number),
        Column("machines_ordered", "machines ordered", lambda m: m.machines_ordered, f.number),
        Column("committed_gpus", "committed GPUs", lambda m: m.committed_gpus, f.number),
        Column("cost_usd", "spend", lambda m: m.cost_usd, money),
    )
    return table_of("", report.plan.months, columns, json_path="months")


def _purchases_section(report: BudgetReport, money: Money) -> Section | None:
    purchases = report.plan.purchases
    if not purchases:
        return None
    columns: tuple[Column[Purchase], ...] = (
        Column("hardware", "machine", lambda p: p.hardware, plain),
        Column("gpu", "GPU", lambda p: p.gpu, plain),
        Column("ordered", "ordered", lambda p: p.ordered, plain),
        Column("in_service_from", "in service from", lambda p: p.in_service_from, plain),
        Column("machines", "machines", lambda p: p.machines, f.number),
        Column("capex_usd", "capex", lambda p: p.capex_usd, money),
        Column("book_value_usd", "book value kept", lambda p: p.book_value_usd, money),
        Column("payback_months", "cash payback", lambda p: p.payback_months, f.months),
        Column("paid_back_by", "paid back by", lambda p: p.paid_back_by, plain),
        Column(
            "pays_back_in_horizon",
            "within the horizon",
            lambda p: p.pays_back_in_horizon,
            lambda v: "yes" if v else "no: flagged",
        ),
    )
    intro = Paragraph(
        "Cash payback: the purchase price over what each month in service saves against the "
        "cheapest on-demand or committed rate of its GPU class, less its running costs. A "
        "purchase paid back only after the horizon saves money on paper through the book value "
        "it keeps, not in cash."
    )
    table = table_of("", purchases, columns, json_path="purchases")
    return Section("Purchases", (intro, table))


def _sensitivity_section(report: BudgetReport, money: Money) -> Section | None:
    if not report.sensitivity:
        return None
    columns: tuple[Column[SensitivityRow], ...] = (
        Column("parameter", "input", lambda r: r.parameter, plain),
        Column("value", "value", lambda r: r.value, plain),
        Column("total_usd", "total", lambda r: r.total_usd, money),
        Column("machines_bought", "machines", lambda r: r.machines_bought, f.number),
        Column("peak_committed_gpus", "committed GPUs", lambda r: r.peak_committed_gpus, f.number),
        Column("on_demand_gpu_hours", "on-demand GPU-h", lambda r: r.on_demand_gpu_hours, f.number),
        Column("spot_gpu_hours", "spot GPU-h", lambda r: r.spot_gpu_hours, f.number),
    )
    intro = Paragraph(
        "One input changed at a time; the optimal mix re-solved for each. Where "
        "the machines bought or the commitments change, the decision depends on "
        "that input."
    )
    table = table_of("", report.sensitivity, columns, json_path="sensitivity")
    return Section("Sensitivity", (intro, table))


def _assumptions_section(report: BudgetReport, money: Money) -> Section:
    plan = report.plan
    facts = Facts(
        (
            ("Start", text(plan.start)),
            ("Horizon", Cell(f"{plan.horizon_months} months", plan.horizon_months)),
            (
                "Residual value of owned machines at the end",
                Cell.of(plan.residual_value_usd, money),
            ),
            (
                "Commitment fees due after the horizon",
                Cell.of(plan.commitments_after_horizon_usd, money),
            ),
            ("Solver", text(f"{plan.solver}, {plan.status}, {plan.solve_seconds:.2f} s")),
        )
    )
    source = Paragraph(f"Prices, hardware and demand: {report.source or 'the budget file'}.")
    return Section("Assumptions", (facts, source))


def budget_document(
    report: BudgetReport,
    *,
    money: Money = USD_MONEY,
    warnings: Sequence[str] = (),
    generated_by: str = "",
) -> Document:
    """The budget review: the optimal mix, month by month, against the pure strategies."""
    plan = report.plan
    sections = (
        _strategies_section(report, money),
        Section("Month by month", (_spend_chart(report, money), _month_table(report, money))),
        _purchases_section(report, money),
        _sensitivity_section(report, money),
        _assumptions_section(report, money),
    )
    return Document(
        kind="budget",
        title=f"Budget review: {plan.name}",
        subtitle=f"{plan.horizon_months} months from {plan.start}.",
        summary=Summary(_headline(report, money), _figures(report, money)),
        sections=tuple(s for s in sections if s is not None),
        provenance=tuple(n for n in (money.note(),) if n),
        warnings=(*warnings, *_stale(report, warnings)),
        generated_by=generated_by,
    )


def _stale(report: BudgetReport, given: Sequence[str]) -> list[str]:
    """The budget file's own price-age warnings (its prices are not from a snapshot), at the
    default age limit, unless the caller gave them."""
    from planner import clock
    from planner.catalog import DEFAULT_MAX_AGE_DAYS

    return [
        w for w in report.stale_warnings(clock.utc_today(), DEFAULT_MAX_AGE_DAYS) if w not in given
    ]
