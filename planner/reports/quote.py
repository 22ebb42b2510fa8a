"""Render a quote: requirements, exclusions, ranked plans, provenance."""

from __future__ import annotations

from typing import Any

from planner.quoting.result import QuoteResult
from planner.reports.tables import dumps_json, render_records

ITEM_COLUMNS = (
    "provider",
    "region",
    "instance_type",
    "gpus",
    "gpu_model",
    "purchase_option",
    "hours",
    "cost_usd",
    "memory",
    "strategy",
)
ITEM_HEADERS = {
    "instance_type": "instance",
    "gpu_model": "gpu",
    "purchase_option": "option",
    "hours": "run h",
    "cost_usd": "cost $",
    "memory": "GiB need/have",
}


def fmt_hours(hours: float) -> str:
    """Hours for people: minutes under 2 h, days over 72 h."""
    if hours < 2:
        return f"{hours * 60:.0f} min"
    if hours > 72:
        return f"{hours / 24:.1f} days ({hours:,.0f} h)"
    return f"{hours:.1f} h"


def fmt_usd(usd: float) -> str:
    return f"${usd:,.2f}" if usd < 1000 else f"${usd:,.0f}"


def item_records(result: QuoteResult) -> list[dict[str, Any]]:
    rows = []
    for rank, plan in enumerate(result.plans, 1):
        for item in plan.items:
            rows.append(
                {
                    "plan": rank,
                    "label": plan.label,
                    "plan_total_cost_usd": round(plan.total_cost_usd, 2),
                    "plan_wall_hours": round(plan.wall_hours, 3),
                    "provider": item.provider,
                    "region": item.region,
                    "instance_type": item.instance_type,
                    "gpu_model": item.gpu_model,
                    "gpus_per_instance": item.gpus_per_instance,
                    "instances": item.instances * item.gangs,
                    "gpus": f"{item.gpus} x",
                    "purchase_option": item.purchase_option,
                    "hours": round(item.hours, 2),
                    "cost_usd": round(item.cost_usd, 2),
                    "memory": f"{item.memory_per_gpu_gib:.1f}/{item.gpu_memory_gib:g}",
                    "memory_per_gpu_gib": round(item.memory_per_gpu_gib, 2),
                    "gpu_memory_gib": item.gpu_memory_gib,
                    "strategy": item.strategy,
                }
            )
    return rows


def render_quote(result: QuoteResult, fmt: str, *, warnings: list[str]) -> str:
    if fmt == "json":
        return dumps_json(result.to_dict())
    if fmt == "csv":
        cols = (
            [c for c in item_records(result)[0] if c not in ("gpus", "memory")]
            if result.plans
            else []
        )
        return render_records(item_records(result), "csv", columns=cols)
    md = fmt == "markdown"
    req, out = result.requirements, []
    head = "## " if md else ""
    out.append(
        f"{head}Quote for {result.workload.name}: deadline {fmt_hours(result.request.deadline_hours)}"
        + (
            f", budget {fmt_usd(result.request.budget_usd)}"
            if result.request.budget_usd is not None
            else ""
        )
    )
    out.append("")
    out.append(
        f"Requirements: {req['total_flops']:.3g} FLOPs in all"
        + (f" ({req['pieces']} independent pieces)" if req["pieces"] > 1 else "")
        + f"; model states (weights, gradients, optimizer) {req['model_states_gib']:.1f} GiB unsharded;"
        f" {req['memory_per_gpu_gib']:.1f} GiB per GPU with the cheapest plan's strategy"
        f" ({req['strategy']}); interconnect: {req['interconnect_required']}."
    )
    if result.request.confidence_pct > 0:
        out.append(
            f"Confidence: each recommended plan meets the deadline with at least a "
            f"{result.request.confidence_pct:g}% chance under the spot model (--confidence)."
        )
    if result.excluded:
        out.append("Excluded: " + "; ".join(result.excluded))
    for note in result.notes:
        out.append(f"Note: {note}")
    for rank, plan in enumerate(result.plans, 1):
        risk = plan.risk
        out.append("")
        title = (
            f"{rank}. {plan.label}: {fmt_usd(plan.total_cost_usd)}, {fmt_hours(plan.wall_hours)} wall"
            f" (slack {fmt_hours(max(risk.slack_hours, 0))}), {fmt_usd(plan.cost_per_gpu_hour)}/GPU-h"
        )
        if plan.solve_status != "optimal":
            title += f" [{plan.solve_status}: the solver's best plan when it stopped]"
        out.append(("### " if md else "") + title)
        items = [r for r in item_records(result) if r["plan"] == rank]
        out.append(
            render_records(items, fmt, columns=ITEM_COLUMNS, headers=ITEM_HEADERS, floatfmt=",.2f")
        )
        extras = []
        if plan.switches:
            extras.append(
                f"{plan.switches} switch(es): checkpoint transfer {fmt_usd(plan.switch_cost_usd)}"
            )
        if risk.spot_share > 0:
            extras.append(
                f"risk: {risk.spot_share:.0%} of cost on spot, {risk.expected_interruptions:.2f} expected "
                f"interruptions, {risk.p_meet_deadline:.1%} chance to meet the deadline"
            )
            extras += list(risk.notes)
        else:
            extras.append("risk: no spot capacity; finishes with the slack above")
        out += [("- " if md else "   ") + e for e in extras]
    if result.request.pareto and result.frontier:
        out.append("")
        out.append(("### " if md else "") + "Cost versus deadline (Pareto frontier)")
        rows = [{"deadline": fmt_hours(d), "cheapest cost": fmt_usd(c)} for d, c in result.frontier]
        out.append(render_records(rows, fmt))
    out.append("")
    for s in result.book.sources:
        out.append(
            f"prices: {s.provider} as of {s.as_of_range}"
            + (" (estimated)" if s.estimated else "")
            + f" from {s.source}"
        )
    out += [f"warning: {w}" for w in warnings]
    return "\n".join(out)
