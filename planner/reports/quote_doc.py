"""A quote as a document: the recommendation, the plans, the frontier and every assumption.

Built from the typed :class:`~planner.quoting.result.QuoteResult` (its plans, requirements,
request and offer book), never from its JSON record: mypy checks every field a report reads.  The
table keys name the same values in ``planner quote --format json``, so a test can check that the
report and the JSON agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from planner.reports import formatting as f
from planner.reports.charts import BarChart, LineChart, Marker, RefLine, Series
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
from planner.reports.quote import owned_line, plan_title

if TYPE_CHECKING:
    from planner.catalog import SnapshotSource
    from planner.optimize.plans import Plan, PlanItem
    from planner.quoting.result import QuoteResult


def flops(value: float) -> str:
    return f"{float(value):.3g} FLOPs"


def describe_item(item: PlanItem) -> str:
    """``1 x Standard_NC24ads_A100_v4 (1x A100-80GB, spot) in azure westus3``."""
    count = item.instances * item.gangs
    where = "on owned hardware" if item.kind != "cloud" else f"in {item.provider} {item.region}"
    return (
        f"{count} x {item.instance_type} ({item.gpus}x {item.gpu_model}, "
        f"{item.purchase_option}) {where}"
    )


def _what_runs(plan: Plan) -> str:
    return " then ".join(describe_item(i) for i in plan.items)


def _risk_text(plan: Plan) -> str:
    risk = plan.risk
    if risk.spot_share > 0:
        return (
            f"{f.pct(risk.spot_share)} of the cost on spot, "
            f"{f.pct(risk.p_meet_deadline)} chance to meet the deadline"
        )
    return "no spot capacity, so no interruption risk"


def _headline(result: QuoteResult, money: Money) -> str:
    name = result.workload.name
    if not result.plans:
        return f"No plan finishes {name} within the limits given."
    best = result.plans[0]
    return (
        f"Run {name} on {_what_runs(best)}: {money(best.total_cost_usd)}, done in "
        f"{f.hours(best.wall_hours)} of the {f.hours(result.request.deadline_hours)} deadline; "
        f"{_risk_text(best)}."
    )


def _figures(result: QuoteResult, money: Money) -> tuple[tuple[str, Cell], ...]:
    if not result.plans:
        return ()
    best = result.plans[0]
    return (
        ("Cost", Cell.of(best.total_cost_usd, money)),
        ("Wall time", Cell.of(best.wall_hours, f.hours)),
        ("Slack before the deadline", Cell.of(best.risk.slack_hours, f.hours)),
        ("Chance to meet the deadline", Cell.of(best.risk.p_meet_deadline, f.pct)),
    )


# (key in the JSON plan, header) of the plans table; the cells are made in _plans_table.
_PLAN_COLUMNS = (
    ("rank", "#"),
    ("label", "plan"),
    ("items", "what runs"),
    ("total_cost_usd", "cost"),
    ("wall_hours", "wall time"),
    ("cost_per_gpu_hour_usd", "per GPU-hour"),
    ("risk.spot_share", "on spot"),
    ("risk.p_meet_deadline", "meets deadline"),
)


def _plans_table(plans: Sequence[Plan], money: Money, confidence_pct: float) -> Table:
    rows = tuple(
        (
            Cell(str(rank), None),
            Cell(plan_title(p, money, confidence_pct), p.label),
            Cell(_what_runs(p)),
            Cell.of(p.total_cost_usd, money),
            Cell.of(p.wall_hours, f.hours),
            Cell.of(p.cost_per_gpu_hour, money.per_hour),
            Cell.of(p.risk.spot_share, f.pct),
            Cell.of(p.risk.p_meet_deadline, f.pct),
        )
        for rank, p in enumerate(plans, 1)
    )
    return Table(
        title="",
        headers=tuple(h for _, h in _PLAN_COLUMNS),
        keys=tuple(k for k, _ in _PLAN_COLUMNS),
        rows=rows,
        json_path="plans",
        numeric=(False, False, False, True, True, True, True, True),
    )


def _where(item: PlanItem) -> str:
    return "owned" if item.kind != "cloud" else f"{item.provider} {item.region}"


def _memory(item: PlanItem) -> str:
    return f"{item.memory_per_gpu_gib:,.1f} of {item.gpu_memory_gib:g} GiB"


def _item_columns(money: Money) -> tuple[Column[PlanItem], ...]:
    return (
        Column("where", "where", lambda i: None, show=_where),
        Column("instance_type", "instance", lambda i: i.instance_type),
        Column("gpus", "GPUs", lambda i: i.gpus, f.number),
        Column("gpu_model", "GPU", lambda i: i.gpu_model),
        Column("purchase_option", "option", lambda i: i.purchase_option),
        Column("price_usd_per_hour", "price", lambda i: i.price_usd_per_hour, money.per_hour),
        Column("hours", "billed", lambda i: i.hours, f.hours),
        Column("cost_usd", "cost", lambda i: i.cost_usd, money),
        Column(
            "memory_per_gpu_gib", "memory per GPU", lambda i: i.memory_per_gpu_gib, show=_memory
        ),
        Column("strategy", "strategy", lambda i: i.strategy),
        Column("efficiency", "MFU", lambda i: i.efficiency, f.pct),
        Column("price_as_of", "price as of", lambda i: i.price_as_of, lambda v: v or "-"),
    )


def _item_table(rank: int, plan: Plan, money: Money, confidence_pct: float) -> Table:
    return table_of(
        f"{rank}. {plan_title(plan, money, confidence_pct)}",
        plan.items,
        _item_columns(money),
        json_path=f"plans.{rank - 1}.items",
        note="; ".join(plan.risk.notes),
        numeric=(False, False, True, False, False, True, True, True, True, False, True, False),
    )


# The frontier chart shows deadlines whose cheapest cost is within this factor of the recommended
# plan's: the last minutes before the fastest possible plan can cost 20x more and would flatten
# everything else.  Clipped points stay in the table under the chart.
_FRONTIER_CLIP_FACTOR = 4.0


def _frontier_steps(
    curve: Sequence[tuple[float, float]], best: Plan, cap: float, deadline: float
) -> tuple[tuple[float, float], ...]:
    """The step line's points: each deadline that is cheaper than every earlier one, up to ``cap``."""
    # The sweep samples deadlines; the recommended plan is itself a point of the frontier (it is the
    # cheapest plan finishing by its own wall time), so the step line goes through its dot.
    sampled = sorted([*curve, (best.wall_hours, best.total_cost_usd)])
    points: list[tuple[float, float]] = []
    for x, y in sampled:
        if y > cap or (points and y >= points[-1][1]):
            continue  # off the chart, or no cheaper than an earlier deadline
        points.append((x, y))
    end = max(deadline, points[-1][0]) * 1.25
    points.append((end, points[-1][1]))  # the cheapest cost holds for any later deadline
    return tuple(points)


def _frontier_chart(result: QuoteResult, money: Money) -> Figure | None:
    curve = result.frontier  # (deadline_hours, total_cost_usd)
    if not curve or not result.plans:
        return None
    best = result.plans[0]
    deadline = result.request.deadline_hours
    cap = best.total_cost_usd * _FRONTIER_CLIP_FACTOR
    clipped = [(d, c) for d, c in curve if c > cap]
    note = (
        f" Faster deadlines cost more than {_FRONTIER_CLIP_FACTOR:g}x the recommendation (up to "
        f"{money(max(c for _, c in clipped))} at "
        f"{f.hours(min(d for d, _ in clipped))}) and are left off the chart; the "
        "table lists them."
        if clipped
        else ""
    )
    marker = Marker(
        best.wall_hours,
        best.total_cost_usd,
        f"recommended: {money(best.total_cost_usd)} in {f.hours(best.wall_hours)}",
    )
    k, fmt, unit = money.chart_axis()
    marker = replace(marker, y=marker.y * k)
    steps = tuple((x, y * k) for x, y in _frontier_steps(curve, best, cap, deadline))
    return Figure(
        LineChart(
            title="Cheapest cost for each deadline",
            x_label="deadline (hours, log scale)",
            y_label=f"cheapest total cost ({unit})",
            series=(Series("cheapest plan that meets the deadline", steps, step=True),),
            markers=(marker,),
            ref_lines=(RefLine(deadline, "your deadline", "x"),),
            x_format="hours",
            y_format=fmt,
            x_log=True,
            caption=(
                "Each step is the cheapest plan that finishes by that deadline; the dot is the "
                "recommended plan at the time it finishes. Moving left of it, every hour saved "
                "costs more." + note
            ),
        )
    )


def _breakdown_chart(plans: Sequence[Plan], money: Money, confidence_pct: float) -> Figure | None:
    if not plans:
        return None
    k, fmt, unit = money.chart_axis()
    options = sorted({i.purchase_option for p in plans for i in p.items})
    stacks = [
        (
            option,
            tuple(
                k * sum(i.cost_usd for i in p.items if i.purchase_option == option) for p in plans
            ),
        )
        for option in options
    ]
    transfer = tuple(p.switch_cost_usd * k for p in plans)
    if any(transfer):
        stacks.append(("checkpoint transfer", transfer))
    return Figure(
        BarChart(
            title="Cost of the top plans by purchase option",
            category_label="plan",
            value_label=f"total cost ({unit})",
            categories=tuple(
                f"{n}. {plan_title(p, money, confidence_pct)}" for n, p in enumerate(plans, 1)
            ),
            stacks=tuple(stacks),
            value_format=fmt,
            horizontal=True,
            highlight=0,
            caption="The first bar is the recommendation; segments show what each plan pays for.",
        )
    )


def _plans_section(plans: Sequence[Plan], money: Money, confidence_pct: float) -> Section:
    chart = _breakdown_chart(plans, money, confidence_pct)
    table = _plans_table(plans, money, confidence_pct)
    return Section("Plans", (table, *((chart,) if chart else ())))


def _frontier_section(result: QuoteResult, money: Money) -> Section | None:
    chart = _frontier_chart(result, money)
    if chart is None:
        return None
    columns: tuple[Column[tuple[float, float]], ...] = (
        Column("deadline_hours", "deadline", lambda point: point[0], f.hours),
        Column("total_cost_usd", "cheapest cost", lambda point: point[1], money),
    )
    table = table_of("", result.frontier, columns, json_path="frontier")
    return Section("Cost versus deadline", (chart, table))


def _requirements_section(result: QuoteResult) -> Section:
    reqs = result.requirements
    facts = Facts(
        (
            ("Work", Cell.of(reqs.total_flops, flops)),
            (
                "Model states (weights, gradients, optimizer), unsharded",
                Cell.of(reqs.model_states_gib, f.gib),
            ),
            (
                "Memory per GPU with the recommended strategy",
                Cell.of(reqs.memory_per_gpu_gib, f.gib),
            ),
            ("Parallel strategy", text(reqs.strategy)),
            ("Interconnect", text(reqs.interconnect_required)),
            ("Independent pieces", Cell.of(reqs.pieces, f.number)),
        )
    )
    return Section("Requirements", (facts,))


def _cost_assumptions(result: QuoteResult, money: Money) -> list[tuple[str, Cell]]:
    """Efficiency, start-up, switching and spot: what the plans' costs are built from."""
    efficiency = result.requirements.efficiency
    a = result.assumptions
    checkpoint_gib = max((i.checkpoint_gib for p in result.plans for i in p.items), default=0.0)
    return [
        (
            "Efficiency",
            Cell(
                f"{f.pct(efficiency)} expected MFU for the recommended plan (workload "
                "model: GPU generation, memory traffic, communication, restarts)",
                efficiency,
            ),
        ),
        ("Start-up", text(f"{f.hours(a.startup_hours)} billed per phase and per gang")),
        (
            "Switching configuration",
            text(
                "checkpoint save + load, and egress at "
                f"{money(a.checkpoint_egress_usd_per_gb)}/GB (checkpoint {f.gib(checkpoint_gib)})"
            ),
        ),
        (
            "Spot",
            text(
                "interruptions at each provider's published rate band, Young's checkpoint "
                f"interval, {f.hours(a.spot_restart_hours)} per restart"
                if a.spot_allowed
                else "not used (--no-spot)"
            ),
        ),
        ("Time estimate", text(_margin_text(result))),
    ]


def _margin_text(result: QuoteResult) -> str:
    """How the plans count the estimator's own error (--count-estimate-error), or that they do
    not."""
    m = result.estimate_margin
    if m is None:
        return (
            "the central estimate (its own error is not counted in the confidence; "
            "--count-estimate-error counts it)"
        )
    spot = (
        f"; at least {m.spot_confidence:.1%} under the spot model on those times"
        if m.spot_confidence is not None
        else ""
    )
    return (
        f"training times x{m.ratio:.2f}: the {m.quantile:.1%} quantile of measured / estimated "
        f"time on {m.runs} published runs (a lognormal fit){spot}"
    )


def _option_assumptions(result: QuoteResult, money: Money) -> list[tuple[str, Cell]]:
    """Discounts, quotas, budget, owned hardware and reserved capacity: the request's options."""
    a = result.assumptions
    budget = result.request.budget_usd
    discounts = ", ".join(f"{k} {f.pct(v)}" for k, v in a.discounts.items())
    quotas = ", ".join(f"{k}: {v} instances" for k, v in a.quotas.items())
    return [
        ("Discounts", text(discounts or "none (list prices)")),
        ("Quotas", text(quotas or "none given")),
        ("Budget", Cell.of(budget, money) if budget is not None else text("none")),
        (
            "Owned hardware",
            text(
                f"{', '.join(a.owned_hardware)} at {a.owned_cost_basis} cost"
                if a.owned_hardware
                else "none given"
            ),
        ),
        (
            "Reserved capacity",
            text(
                "1- and 3-year commitments (reserved instances and savings plans) priced at their"
                " effective hourly rate"
                if a.reserved_included
                else "not used"
            ),
        ),
    ]


def provenance_lines(parts: Sequence[SnapshotSource]) -> tuple[str, ...]:
    """One line per provider part of the price snapshot: date, how the date is known, source."""
    return tuple(
        f"{p.provider}: prices as of {p.as_of_range}"
        + (" (estimated)" if p.estimated else "")
        + f", {p.rows:,} offers; source {p.source}"
        for p in parts
    )


def _owned_section(result: QuoteResult, money: Money) -> Section | None:
    """One paragraph per owned machine type (--hardware): what it would do alone and why the
    plans use it or not."""
    if not result.owned:
        return None
    paragraphs = tuple(Paragraph(owned_line(o, result, money) + ".") for o in result.owned)
    return Section("Owned hardware", paragraphs)


def _subtitle(result: QuoteResult, money: Money) -> str:
    budget = result.request.budget_usd
    return (
        f"Deadline {f.hours(result.request.deadline_hours)}"
        + (f", budget {money(budget)}" if budget is not None else "")
        + f"; {f.number(result.stats.offers_considered)} offers considered, prices as of "
        f"{result.book.as_of} (oldest part)."
    )


def quote_document(
    result: QuoteResult,
    *,
    money: Money = USD_MONEY,
    warnings: Sequence[str] = (),
    generated_by: str = "",
) -> Document:
    """The quote report: summary, plans, charts, per-plan details, requirements, assumptions.

    Money reads in ``money``'s currency; every cell keeps its USD value, as in the JSON."""
    plans, confidence = result.plans, result.request.confidence_pct
    details: tuple[Block, ...] = tuple(
        _item_table(n, p, money, confidence) for n, p in enumerate(plans, 1)
    )
    assumptions = Facts(
        tuple(_cost_assumptions(result, money) + _option_assumptions(result, money))
    )
    sections = [
        _plans_section(plans, money, confidence),
        _frontier_section(result, money),
        Section("Plan details", details) if details else None,
        _owned_section(result, money),
        _requirements_section(result),
        Section("Left out", tuple(Paragraph(line) for line in result.excluded))
        if result.excluded
        else None,
        # the user's calibrations and the plan variants left out (was: in the table output only)
        Section("Notes", tuple(Paragraph(line) for line in result.notes)) if result.notes else None,
        Section("Assumptions", (assumptions,)),
    ]
    return Document(
        kind="quote",
        title=f"GPU plan for {result.workload.name}",
        subtitle=_subtitle(result, money),
        summary=Summary(_headline(result, money), _figures(result, money)),
        sections=tuple(s for s in sections if s is not None),
        provenance=provenance_lines(result.price_sources) + tuple(n for n in (money.note(),) if n),
        warnings=tuple(warnings),
        generated_by=generated_by,
    )
