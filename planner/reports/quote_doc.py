"""A quote as a document: the recommendation, the plans, the frontier and every assumption.

Built from the JSON record of the quote (``QuoteResult.to_dict()``), so the report and
``planner quote --format json`` cannot disagree; the result object adds what the record does not
carry (request options, stale-price warnings).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from planner.catalog import as_of_range
from planner.reports import formatting as f
from planner.reports.charts import BarChart, LineChart, Marker, RefLine, Series
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

if TYPE_CHECKING:
    from planner.quoting.result import QuoteResult


def plain(value: Any) -> str:
    return "-" if value is None or value == "" else str(value)


def flops(value: Any) -> str:
    return f"{float(value):.3g} FLOPs"


def describe_item(item: dict[str, Any]) -> str:
    """``1 x Standard_NC24ads_A100_v4 (1x A100-80GB, spot) in azure westus3``."""
    count = item["instances"] * item.get("gangs", 1)
    where = (
        "on owned hardware"
        if item["kind"] != "cloud"
        else f"in {item['provider']} {item['region']}"
    )
    return (
        f"{count} x {item['instance_type']} ({item['gpus']}x {item['gpu_model']}, "
        f"{item['purchase_option']}) {where}"
    )


def _risk_text(plan: dict[str, Any]) -> str:
    risk = plan["risk"]
    if risk["spot_share"] > 0:
        return (
            f"{f.pct(risk['spot_share'])} of the cost on spot, "
            f"{f.pct(risk['p_meet_deadline'])} chance to meet the deadline"
        )
    return "no spot capacity, so no interruption risk"


def _headline(record: dict[str, Any]) -> str:
    if not record["plans"]:
        return f"No plan finishes {record['workload']} within the limits given."
    best = record["plans"][0]
    steps = " then ".join(describe_item(i) for i in best["items"])
    return (
        f"Run {record['workload']} on {steps}: {f.money(best['total_cost_usd'])}, done in "
        f"{f.hours(best['wall_hours'])} of the {f.hours(record['deadline_hours'])} deadline; "
        f"{_risk_text(best)}."
    )


def _plans_table(plans: Sequence[dict[str, Any]]) -> Table:
    rows = []
    for rank, p in enumerate(plans, 1):
        rows.append(
            (
                Cell(str(rank), None),
                Cell(p["label"]),
                Cell(" then ".join(describe_item(i) for i in p["items"])),
                Cell.of(p["total_cost_usd"], f.money),
                Cell.of(p["wall_hours"], f.hours),
                Cell.of(p["cost_per_gpu_hour_usd"], f.per_hour),
                Cell.of(p["risk"]["spot_share"], f.pct),
                Cell.of(p["risk"]["p_meet_deadline"], f.pct),
            )
        )
    return Table(
        title="",
        headers=(
            "#",
            "plan",
            "what runs",
            "cost",
            "wall time",
            "per GPU-hour",
            "on spot",
            "meets deadline",
        ),
        keys=(
            "rank",
            "label",
            "items",
            "total_cost_usd",
            "wall_hours",
            "cost_per_gpu_hour_usd",
            "risk.spot_share",
            "risk.p_meet_deadline",
        ),
        rows=tuple(rows),
        json_path="plans",
        numeric=(False, False, False, True, True, True, True, True),
    )


def _item_table(rank: int, plan: dict[str, Any]) -> Table:
    rows = []
    for item in plan["items"]:
        where = "owned" if item["kind"] != "cloud" else f"{item['provider']} {item['region']}"
        rows.append(
            (
                text(where),
                Cell(item["instance_type"], item["instance_type"]),
                Cell.of(item["gpus"], f.number),
                Cell(item["gpu_model"], item["gpu_model"]),
                Cell(item["purchase_option"], item["purchase_option"]),
                Cell.of(item["price_usd_per_hour"], f.per_hour),
                Cell.of(item["hours"], f.hours),
                Cell.of(item["cost_usd"], f.money),
                Cell(
                    f"{item['memory_per_gpu_gib']:,.1f} of {item['gpu_memory_gib']:g} GiB",
                    item["memory_per_gpu_gib"],
                ),
                Cell(item["strategy"], item["strategy"]),
                Cell.of(item["efficiency"], f.pct),
                Cell(item["price_as_of"] or "-", item["price_as_of"]),
            )
        )
    return Table(
        title=f"{rank}. {plan['label']}",
        headers=(
            "where",
            "instance",
            "GPUs",
            "GPU",
            "option",
            "price",
            "billed",
            "cost",
            "memory per GPU",
            "strategy",
            "MFU",
            "price as of",
        ),
        keys=(
            "where",
            "instance_type",
            "gpus",
            "gpu_model",
            "purchase_option",
            "price_usd_per_hour",
            "hours",
            "cost_usd",
            "memory_per_gpu_gib",
            "strategy",
            "efficiency",
            "price_as_of",
        ),
        rows=tuple(rows),
        json_path=f"plans.{rank - 1}.items",
        note="; ".join(plan["risk"]["notes"]),
        numeric=(False, False, True, False, False, True, True, True, True, False, True, False),
    )


# The frontier chart shows deadlines whose cheapest cost is within this factor of the recommended
# plan's: the last minutes before the fastest possible plan can cost 20x more and would flatten
# everything else.  Clipped points stay in the table under the chart.
_FRONTIER_CLIP_FACTOR = 4.0


def _frontier_chart(record: dict[str, Any]) -> Figure | None:
    curve = record.get("frontier") or []
    if not curve or not record["plans"]:
        return None
    best = record["plans"][0]
    cap = best["total_cost_usd"] * _FRONTIER_CLIP_FACTOR
    # The sweep samples deadlines; the recommended plan is itself a point of the frontier (it is the
    # cheapest plan finishing by its own wall time), so the step line goes through its dot.
    sampled = sorted(
        [(p["deadline_hours"], p["total_cost_usd"]) for p in curve]
        + [(best["wall_hours"], best["total_cost_usd"])]
    )
    points: list[tuple[float, float]] = []
    for x, y in sampled:
        if y > cap or (points and y >= points[-1][1]):
            continue  # off the chart, or no cheaper than an earlier deadline
        points.append((x, y))
    end = max(record["deadline_hours"], points[-1][0]) * 1.25
    points.append((end, points[-1][1]))  # the cheapest cost holds for any later deadline
    clipped = [p for p in curve if p["total_cost_usd"] > cap]
    note = (
        f" Faster deadlines cost more than {_FRONTIER_CLIP_FACTOR:g}x the recommendation (up to "
        f"{f.money(max(p['total_cost_usd'] for p in clipped))} at "
        f"{f.hours(min(p['deadline_hours'] for p in clipped))}) and are left off the chart; the "
        "table lists them."
        if clipped
        else ""
    )
    marker = Marker(
        best["wall_hours"],
        best["total_cost_usd"],
        f"recommended: {f.money(best['total_cost_usd'])} in {f.hours(best['wall_hours'])}",
    )
    return Figure(
        LineChart(
            title="Cheapest cost for each deadline",
            x_label="deadline (hours, log scale)",
            y_label="cheapest total cost (USD)",
            series=(Series("cheapest plan that meets the deadline", tuple(points), step=True),),
            markers=(marker,),
            ref_lines=(RefLine(record["deadline_hours"], "your deadline", "x"),),
            x_format="hours",
            y_format="usd",
            x_log=True,
            caption=(
                "Each step is the cheapest plan that finishes by that deadline; the dot is the "
                "recommended plan at the time it finishes. Moving left of it, every hour saved "
                "costs more." + note
            ),
        )
    )


def _breakdown_chart(plans: Sequence[dict[str, Any]]) -> Figure | None:
    if not plans:
        return None
    options = sorted({i["purchase_option"] for p in plans for i in p["items"]})
    stacks = [
        (
            option,
            tuple(
                sum(i["cost_usd"] for i in p["items"] if i["purchase_option"] == option)
                for p in plans
            ),
        )
        for option in options
    ]
    transfer = tuple(p["switch_cost_usd"] for p in plans)
    if any(transfer):
        stacks.append(("checkpoint transfer", transfer))
    return Figure(
        BarChart(
            title="Cost of the top plans by purchase option",
            category_label="plan",
            value_label="total cost (USD)",
            categories=tuple(f"{n}. {p['label']}" for n, p in enumerate(plans, 1)),
            stacks=tuple(stacks),
            value_format="usd",
            horizontal=True,
            highlight=0,
            caption="The first bar is the recommendation; segments show what each plan pays for.",
        )
    )


def _assumptions(record: dict[str, Any]) -> Facts:
    reqs = record["requirements"]
    a = record["assumptions"]
    checkpoint_gib = max(
        (i["checkpoint_gib"] for p in record["plans"] for i in p["items"]), default=0.0
    )
    items: list[tuple[str, Cell]] = [
        (
            "Efficiency",
            Cell(
                f"{f.pct(reqs.get('efficiency'))} expected MFU for the recommended plan (workload "
                "model: GPU generation, memory traffic, communication, restarts)",
                reqs.get("efficiency"),
            ),
        ),
        ("Start-up", text(f"{f.hours(a['startup_hours'])} billed per phase and per gang")),
        (
            "Switching configuration",
            text(
                "checkpoint save + load, and egress at "
                f"{f.money(a['checkpoint_egress_usd_per_gb'])}/GB (checkpoint {f.gib(checkpoint_gib)})"
            ),
        ),
        (
            "Spot",
            text(
                "interruptions at each provider's published rate band, Young's checkpoint "
                f"interval, {f.hours(a['spot_restart_hours'])} per restart"
                if a["spot_allowed"]
                else "not used (--no-spot)"
            ),
        ),
        (
            "Discounts",
            text(
                ", ".join(f"{k} {f.pct(v)}" for k, v in a["discounts"].items())
                or "none (list prices)"
            ),
        ),
        (
            "Quotas",
            text(", ".join(f"{k}: {v} instances" for k, v in a["quotas"].items()) or "none given"),
        ),
        (
            "Budget",
            Cell.of(record["budget_usd"], f.money)
            if record["budget_usd"] is not None
            else text("none"),
        ),
        (
            "Owned hardware",
            text(
                f"{', '.join(a['owned_hardware'])} at {a['owned_cost_basis']} cost"
                if a["owned_hardware"]
                else "none given"
            ),
        ),
        (
            "Reserved capacity",
            text(
                "1- and 3-year commitments priced at their effective hourly rate"
                if a["reserved_included"]
                else "not used"
            ),
        ),
    ]
    return Facts(tuple(items))


def provenance_lines(parts: Sequence[dict[str, Any]]) -> tuple[str, ...]:
    """One line per provider part of the price snapshot: date, how the date is known, source."""
    return tuple(
        f"{p['provider']}: prices as of {as_of_range(p)}"
        + (" (estimated)" if p.get("as_of_basis") == "estimated" else "")
        + (f", {p['rows']:,} offers" if p.get("rows") is not None else "")
        + f"; source {p['source']}"
        for p in parts
    )


def quote_document(
    result: QuoteResult, *, warnings: Sequence[str] = (), generated_by: str = ""
) -> Document:
    """The quote report: summary, plans, charts, per-plan details, requirements, assumptions."""
    record = result.to_dict()
    plans = record["plans"]
    reqs = record["requirements"]
    best = plans[0] if plans else None
    figures: list[tuple[str, Cell]] = []
    if best is not None:
        risk = best["risk"]
        figures = [
            ("Cost", Cell.of(best["total_cost_usd"], f.money)),
            ("Wall time", Cell.of(best["wall_hours"], f.hours)),
            ("Slack before the deadline", Cell.of(risk["slack_hours"], f.hours)),
            ("Chance to meet the deadline", Cell.of(risk["p_meet_deadline"], f.pct)),
        ]
    sections: list[Section] = []
    plan_blocks: list[Any] = [_plans_table(plans)]
    chart = _breakdown_chart(plans)
    if chart:
        plan_blocks.append(chart)
    sections.append(Section("Plans", tuple(plan_blocks)))
    frontier = _frontier_chart(record)
    if frontier:
        sections.append(
            Section(
                "Cost versus deadline",
                (
                    frontier,
                    table_from_records(
                        "",
                        record["frontier"],
                        (
                            ("deadline_hours", "deadline", f.hours),
                            ("total_cost_usd", "cheapest cost", f.money),
                        ),
                        json_path="frontier",
                    ),
                ),
            )
        )
    details: list[Any] = []
    for rank, plan in enumerate(plans, 1):
        details.append(_item_table(rank, plan))
    if details:
        sections.append(Section("Plan details", tuple(details)))
    sections.append(
        Section(
            "Requirements",
            (
                Facts(
                    (
                        ("Work", Cell.of(reqs["total_flops"], flops)),
                        (
                            "Model states (weights, gradients, optimizer), unsharded",
                            Cell.of(reqs["model_states_gib"], f.gib),
                        ),
                        (
                            "Memory per GPU with the recommended strategy",
                            Cell.of(reqs["memory_per_gpu_gib"], f.gib),
                        ),
                        ("Parallel strategy", text(reqs["strategy"])),
                        ("Interconnect", text(reqs["interconnect_required"])),
                        ("Independent pieces", Cell.of(reqs["pieces"], f.number)),
                    )
                ),
            ),
        )
    )
    if record["excluded"]:
        sections.append(
            Section(
                "Left out",
                tuple(Paragraph(line) for line in record["excluded"]),
            )
        )
    sections.append(Section("Assumptions", (_assumptions(record),)))
    stats = record["stats"]
    subtitle = (
        f"Deadline {f.hours(record['deadline_hours'])}"
        + (f", budget {f.money(record['budget_usd'])}" if record["budget_usd"] is not None else "")
        + f"; {f.number(stats.get('offers_considered'))} offers considered, prices as of "
        f"{record['snapshot']['as_of']} (oldest part)."
    )
    return Document(
        kind="quote",
        title=f"GPU plan for {record['workload']}",
        subtitle=subtitle,
        summary=Summary(_headline(record), tuple(figures)),
        sections=tuple(sections),
        provenance=provenance_lines(record["snapshot"]["parts"]),
        warnings=tuple(warnings),
        generated_by=generated_by,
    )
