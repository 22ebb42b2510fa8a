"""Render a quote for the terminal: requirements, exclusions, ranked plans, provenance.

Reads the typed :class:`~planner.quoting.result.QuoteResult`; only ``--format json`` goes through
its record (``to_dict()``).  Money and durations read as in the reports
(:mod:`planner.reports.formatting`), durations over three days with their hours as well.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from planner.reports import formatting as f
from planner.reports.formatting import USD_MONEY, Money
from planner.reports.tables import dumps_json, render_records

if TYPE_CHECKING:
    from planner.optimize.plans import Plan
    from planner.quoting.result import OwnedLine, QuoteResult


def plan_title(plan: Plan, money: Money = USD_MONEY, confidence_pct: float = 0.0) -> str:
    """What a plan is, for people: its label, with the money behind it shown in ``money``.

    ``fastest within $3.62 (1.25x the cheapest)``; ``risky alternative (saves $724, 0.9%; 49.6%
    chance to meet the deadline, below 90%)``.  ``confidence_pct`` is the request's confidence.
    """
    if plan.budget_usd is not None:
        cap = f"{plan.budget_factor:g}x the cheapest" if plan.budget_factor else "your budget"
        return f"fastest within {money(plan.budget_usd)} ({cap})"
    if plan.saving_usd is not None:
        saving, base = plan.saving_usd, plan.total_cost_usd + plan.saving_usd
        share = f", {saving / base:.1%}" if base > 0 else ""
        return (
            f"{plan.label} (saves {money(saving)}{share}; {plan.risk.p_meet_deadline:.1%} chance "
            f"to meet the deadline, below {confidence_pct:g}%)"
        )
    return plan.label


def owned_line(o: OwnedLine, result: QuoteResult, money: Money = USD_MONEY) -> str:
    """``1 of 1 x workstation-rtx3060 (RTX3060) alone: 14.2 days, $24.12; dearer than ...``."""
    head = (
        f"{o.machines_used} of {o.machines} x {o.hardware} ({o.gpu_model}) alone: "
        f"{f.hours(o.hours, with_hours=True)}, {money(o.cost_usd)} at {o.cost_basis} cost; "
        if o.hours is not None
        else f"{o.machines} x {o.hardware} ({o.gpu_model}): "
    )
    deadline = result.request.deadline_hours
    cheapest = result.plans[0].total_cost_usd if result.plans else None
    why = {
        "in-plan": f"in plan {', '.join(str(n) for n in o.in_plans)}",
        "cannot-run": f"cannot run it: {o.why_not}",
        "too-slow": f"too slow: its fastest gang takes {f.hours(o.fastest_hours, with_hours=True)} "
        f"of the {f.hours(deadline, with_hours=True)} deadline",
        "dearer": f"not used: dearer than the cheapest plan ({money(cheapest)})",
    }[o.status]
    return head + why


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
    "memory": "GiB need/have",
}


def _hours(value: float) -> str:
    """``75 h`` reads ``3.1 days (75 h)`` in the terminal, so the deadline option can be compared."""
    return f.hours(value, with_hours=True)


def plan_item_records(
    rank: int, plan: Plan, money: Money = USD_MONEY, confidence_pct: float = 0.0
) -> list[dict[str, Any]]:
    """One row per configuration of ``plan`` (the quote's CSV, and the terminal's plan tables);
    money converted by ``money`` (keys renamed: ``cost_eur``), then rounded to cents."""
    rows = money.convert(
        [
            {
                "plan": rank,
                "label": plan_title(plan, money, confidence_pct),
                "plan_total_cost_usd": plan.total_cost_usd,
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
                "cost_usd": item.cost_usd,
                "memory": f"{item.memory_per_gpu_gib:.1f}/{item.gpu_memory_gib:g}",
                "memory_per_gpu_gib": round(item.memory_per_gpu_gib, 2),
                "gpu_memory_gib": item.gpu_memory_gib,
                "strategy": item.strategy,
            }
            for item in plan.items
        ]
    )
    cents = (_money_key("plan_total_cost", money), _money_key("cost", money))
    return [{k: round(v, 2) if k in cents else v for k, v in row.items()} for row in rows]


def _money_key(name: str, money: Money) -> str:
    """``cost`` -> ``cost_usd`` (``cost_eur`` in euros): a money column as Money.convert names it."""
    return f"{name}_{money.code.lower()}"


def item_records(result: QuoteResult, money: Money = USD_MONEY) -> list[dict[str, Any]]:
    confidence = result.request.confidence_pct
    return [
        row
        for rank, p in enumerate(result.plans, 1)
        for row in plan_item_records(rank, p, money, confidence)
    ]


def _header(result: QuoteResult, md: bool, money: Money) -> list[str]:
    """Title, requirements, confidence, exclusions and notes."""
    req, request = result.requirements, result.request
    out = [
        ("## " if md else "")
        + f"Quote for {result.workload.name}: deadline {_hours(request.deadline_hours)}"
        + (f", budget {money(request.budget_usd)}" if request.budget_usd is not None else ""),
        "",
        f"Requirements: {req.total_flops:.3g} FLOPs in all"
        + (f" ({req.pieces} independent pieces)" if req.pieces > 1 else "")
        + (
            f"; weights {req.model_states_gib:.1f} GiB;"
            if result.workload.kind.value == "inference"
            else f"; model states (weights, gradients, optimizer) {req.model_states_gib:.1f} GiB "
            "unsharded;"
        )
        + f" {req.memory_per_gpu_gib:.1f} GiB per GPU with the cheapest plan's strategy"
        f" ({req.strategy}); interconnect: {req.interconnect_required}.",
    ]
    margin = result.estimate_margin
    if margin is not None:
        spot = (
            f", and at least {margin.spot_confidence:.1%} under the spot model on those times"
            if margin.spot_confidence is not None
            else ""
        )
        out.append(
            f"Confidence: each recommended plan meets the deadline with at least a "
            f"{request.confidence_pct:g}% chance counting the time estimate's own error "
            f"(--confidence, --count-estimate-error): training times x{margin.ratio:.2f}, the "
            f"{margin.quantile:.1%} quantile of measured / estimated time on {margin.runs} "
            f"published runs{spot}."
        )
    elif request.confidence_pct > 0:
        out.append(
            f"Confidence: each recommended plan meets the deadline with at least a "
            f"{request.confidence_pct:g}% chance under the spot model (--confidence)."
        )
    if result.excluded:
        out.append("Excluded: " + "; ".join(result.excluded))
    out += [f"Note: {note}" for note in result.notes]
    return out


def _plan_block(rank: int, plan: Plan, fmt: str, money: Money, confidence_pct: float) -> list[str]:
    """One plan: its title line, its configurations, switches and risk."""
    md, risk = fmt == "markdown", plan.risk
    title = (
        f"{rank}. {plan_title(plan, money, confidence_pct)}: {money(plan.total_cost_usd)}, "
        f"{_hours(plan.wall_hours)} wall (slack {_hours(max(risk.slack_hours, 0))}), "
        f"{money(plan.cost_per_gpu_hour)}/GPU-h"
    )
    if plan.solve_status != "optimal":
        title += f" [{plan.solve_status}: the solver's best plan when it stopped]"
    cost = _money_key("cost", money)
    items = render_records(
        plan_item_records(rank, plan, money, confidence_pct),
        fmt,
        columns=[cost if c == "cost_usd" else c for c in ITEM_COLUMNS],
        headers={**ITEM_HEADERS, cost: f"cost {money.symbol.strip()}"},
        floatfmt=",.2f",
    )
    extras = []
    if plan.switches:
        extras.append(
            f"{plan.switches} switch(es): checkpoint transfer {money(plan.switch_cost_usd)}"
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


def _owned_block(result: QuoteResult, fmt: str, money: Money) -> list[str]:
    """One line per owned machine type: what it would do alone and why a plan uses it or not."""
    if not result.owned:
        return []
    md = fmt == "markdown"
    lines = ["", ("### " if md else "") + "Owned hardware"]
    lines += [("- " if md else "  ") + owned_line(o, result, money) for o in result.owned]
    return lines


def _frontier_block(result: QuoteResult, fmt: str, money: Money) -> list[str]:
    if not (result.request.pareto and result.frontier):
        return []
    rows = [{"deadline": _hours(d), "cheapest cost": money(c)} for d, c in result.frontier]
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
        for s in result.price_sources
    ]


def quote_record(result: QuoteResult, money: Money = USD_MONEY) -> dict[str, Any]:
    """The JSON of ``planner quote``: USD keys, renamed and converted with ``--currency``, which
    adds the rate used (``currency``) and each plan's title in that currency."""
    record: dict[str, Any] = money.convert(result.to_dict())
    confidence = result.request.confidence_pct
    for plan, out in zip(result.plans, record["plans"], strict=True):
        out["title"] = plan_title(plan, money, confidence)
    if not money.is_usd:
        record["currency"] = money.record()
    return record


def render_quote(
    result: QuoteResult, fmt: str, *, warnings: list[str], money: Money = USD_MONEY
) -> str:
    """``fmt``: table or markdown (for people), json (the record), csv (one row per configuration).
    Money reads in ``money``'s currency (default USD)."""
    if fmt == "json":
        return dumps_json(quote_record(result, money))
    if fmt == "csv":
        rows = item_records(result, money)
        cols = [c for c in rows[0] if c not in ("gpus", "memory")] if rows else []
        return render_records(rows, "csv", columns=cols)
    out = _header(result, fmt == "markdown", money)
    for rank, plan in enumerate(result.plans, 1):
        out += _plan_block(rank, plan, fmt, money, result.request.confidence_pct)
    out += _owned_block(result, fmt, money)
    out += _frontier_block(result, fmt, money)
    out += ["", *_provenance(result)]
    if not money.is_usd:
        out.append(money.note())
    out += [f"warning: {w}" for w in warnings]
    return "\n".join(out)
