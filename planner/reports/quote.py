"""Render a quote for the terminal: requirements, exclusions, ranked plans, provenance.

Reads the typed :class:`~planner.quoting.result.QuoteResult`; only ``--format json`` goes through
its record (``to_dict()``).  Money and durations read as in the reports
(:mod:`planner.reports.formatting`), durations over three days with their hours as well.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from planner.reports import formatting as f
from planner.reports.tables import dumps_json, render_records

if TYPE_CHECKING:
    from planner.optimize.plans import Plan
    from planner.quoting.result import QuoteResult

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


def _hours(value: float) -> str:
    """``75 h`` reads ``3.1 days (75 h)`` in the terminal, so the deadline option can be compared."""
    return f.hours(value, with_hours=True)


def plan_item_records(rank: int, plan: Plan) -> list[dict[str, Any]]:
    """One row per configuration of ``plan`` (the quote's CSV, and the terminal's plan tables)."""
    return [
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
        for item in plan.items
    ]


def item_records(result: QuoteResult) -> list[dict[str, Any]]:
    return [row for rank, p in enumerate(result.plans, 1) for row in plan_item_records(rank, p)]


def _header(result: QuoteResult, md: bool) -> list[str]:
    """Title, requirements, confidence, exclusions and notes."""
    req, request = result.requirements, result.request
    out = [
        ("## " if md else "")
        + f"Quote for {result.workload.name}: deadline {_hours(request.deadline_hours)}"
        + (f", budget {f.money(request.budget_usd)}" if request.budget_usd is not None else ""),
        "",
        f"Requirements: {req.total_flops:.3g} FLOPs in all"
        + (f" ({req.pieces} independent pieces)" if req.pieces > 1 else "")
        + f"; model states (weights, gradients, optimizer) {req.model_states_gib:.1f} GiB unsharded;"
        f" {req.memory_per_gpu_gib:.1f} GiB per GPU with the cheapest plan's strategy"
        f" ({req.strategy}); interconnect: {req.interconnect_required}.",
    ]
    if request.confidence_pct > 0:
        out.append(
            f"Confidence: each recommended plan meets the deadline with at least a "
            f"{request.confidence_pct:g}% chance under the spot model (--confidence)."
        )
    if result.excluded:
        out.append("Excluded: " + "; ".join(result.excluded))
    out += [f"Note: {note}" for note in result.notes]
    return out


def _plan_block(rank: int, plan: Plan, fmt: str) -> list[str]:
    """One plan: its title line, its configurations, switches and risk."""
    md, risk = fmt == "markdown", plan.risk
    title = (
        f"{rank}. {plan.label}: {f.money(plan.total_cost_usd)}, {_hours(plan.wall_hours)} wall"
        f" (slack {_hours(max(risk.slack_hours, 0))}), {f.money(plan.cost_per_gpu_hour)}/GPU-h"
    )
    if plan.solve_status != "optimal":
        title += f" [{plan.solve_status}: the solver's best plan when it stopped]"
    items = render_records(
        plan_item_records(rank, plan),
        fmt,
        columns=ITEM_COLUMNS,
        headers=ITEM_HEADERS,
        floatfmt=",.2f",
    )
    extras = []
    if plan.switches:
        extras.append(
            f"{plan.switches} switch(es): checkpoint transfer {f.money(plan.switch_cost_usd)}"
        )
    if risk.spot_share > 0:
        extras.append(
            f"risk: {risk.spot_share:.0%} of cost on spot, {risk.expected_interruptions:.2f} expected "
            f"interruptions, {risk.p_meet_deadline:.1%} chance to meet the deadline"
        )
        extras += list(risk.notes)
    else:
        extras.append("risk: no spot capacity; finishes with the slack above")
    return ["", ("### " if md else "") + title, items] + [
        ("- " if md else "   ") + e for e in extras
    ]


def _frontier_block(result: QuoteResult, fmt: str) -> list[str]:
    if not (result.request.pareto and result.frontier):
        return []
    rows = [{"deadline": _hours(d), "cheapest cost": f.money(c)} for d, c in result.frontier]
    return [
        "",
        ("### " if fmt == "markdown" else "") + "Cost versus deadline (Pareto frontier)",
        render_records(rows, fmt),
    ]


def _provenance(result: QuoteResult) -> list[str]:
    return [
        f"prices: {s.provider} as of {s.as_of_range}"
        + (" (estimated)" if s.estimated else "")
        + f" from {s.source}"
        for s in result.book.sources
    ]


def render_quote(result: QuoteResult, fmt: str, *, warnings: list[str]) -> str:
    """``fmt``: table or markdown (for people), json (the record), csv (one row per configuration)."""
    if fmt == "json":
        return dumps_json(result.to_dict())
    if fmt == "csv":
        rows = item_records(result)
        cols = [c for c in rows[0] if c not in ("gpus", "memory")] if rows else []
        return render_records(rows, "csv", columns=cols)
    out = _header(result, fmt == "markdown")
    for rank, plan in enumerate(result.plans, 1):
        out += _plan_block(rank, plan, fmt)
    out += _frontier_block(result, fmt)
    out += ["", *_provenance(result)]
    out += [f"warning: {w}" for w in warnings]
    return "\n".join(out)
