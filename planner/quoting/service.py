"""`planner quote`: from a workload and a deadline to ranked, priced plans.

The data flow, step by step (each step is a pure function over the previous one's output):

    offers snapshot  -> load_offer_book          (planner.catalog)
    offers table     -> filter_offers            (provider / region / GPU choices)
    + owned hardware -> build_candidates         (workload model per gang size: fits? hours?)
    candidates       -> prune_dominated          (slower and dearer configurations dropped)
    pruned set       -> make_plans / frontier    (the MILP, planner.optimize)
    plans            -> QuoteResult              (rendered by planner.reports.quote)
"""
from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import fields, replace
from pathlib import Path
from typing import TYPE_CHECKING

from planner.catalog import load_offer_book
from planner.catalog.query import OfferFilter, filter_offers
from planner.errors import (
    ConfigError,
)
from planner.gpu_specs import load_gpu_catalog
from planner.optimize.candidates import (
    CandidateOptions,
    build_candidates,
    group_exclusions,
    prune_dominated,
)
from planner.optimize.plans import (
    Plan,
    PlanRequest,
    frontier,
    make_plans,
)
from planner.workload import WorkloadSpec, estimate, load_workload

if TYPE_CHECKING:
    from planner.optimize.solvers import Solver
    from planner.ownership.hardware import HardwareSpec
from planner.quoting.request import (
    QuoteRequest,
    _canonical_discounts,
    _canonical_quotas,
    parse_duration_hours,
)
from planner.quoting.result import QuoteResult


def quote(
    req: QuoteRequest,
    *,
    solver: Solver | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> QuoteResult:
    """Cheapest distinct plans for ``req`` (raises InfeasibleError with the nearest alternative).

    ``on_progress(done, total)`` follows the cost-versus-deadline sweep when ``req.pareto``.
    """
    if not isinstance(req, QuoteRequest):
        raise misuse_error(req, {})
    started = time.perf_counter()
    spec = req.workload if isinstance(req.workload, WorkloadSpec) else load_workload(req.workload)
    hardware: tuple[HardwareSpec, ...] = ()
    if req.hardware:
        # owned hardware files only when asked for (planner.onprem builds its YAML models on import)
        from planner.ownership.hardware import load_hardware

        hardware = tuple(load_hardware(h) for h in req.hardware)
    catalog = load_gpu_catalog()
    book = load_offer_book(req.offers_files, snapshot_dir=req.snapshot_dir)
    # Against every loaded offer (not only the filtered ones: a quota on a provider left out
    # with --provider is harmless, a misspelt one is not).
    req = replace(
        req,
        discounts=_canonical_discounts(req.discounts, book.offers),
        quotas=_canonical_quotas(req.quotas, book.offers),
    )
    offers = filter_offers(
        book.offers,
        OfferFilter(providers=req.providers, regions=req.regions, gpus=req.gpus),
        catalog,
    )
    if req.gpus:
        allowed = {g.name for name in req.gpus for g in catalog.match(name)}
        hardware = tuple(h for h in hardware if catalog.resolve(h.gpu).name in allowed)
    options = CandidateOptions(
        allow_spot=req.allow_spot,
        spot_only=req.spot_only,
        include_reserved=req.include_reserved,
        max_interruption_pct=req.max_interruption_pct,
        discounts=req.discounts,
        quotas=req.quotas,
        local_cost_basis=req.local_cost_basis,
    )
    cset = build_candidates(spec, offers, catalog, hardware=hardware, options=options)
    pruned = prune_dominated(
        cset.table,
        by=("kind", "purchase_option", "gpu_model", "provider")
        if spec.pieces <= 1
        else ("kind", "purchase_option", "gpu_model", "provider", "quota_group"),
        parallel=spec.pieces > 1,
        pieces=spec.pieces if spec.pieces > 1 else None,
    )
    t_candidates = time.perf_counter()
    plan_req = PlanRequest(
        deadline_hours=req.deadline_hours,
        budget_usd=req.budget_usd,
        pieces=spec.pieces,
        top=req.top,
        confidence=req.confidence_pct / 100 if req.confidence_pct > 0 else None,
    )
    plan_set = make_plans(pruned, plan_req, solver)
    plans = plan_set.plans
    curve = frontier(pruned, plan_req, solver, on_progress=on_progress) if req.pareto else ()
    reference = estimate(spec, catalog.resolve("H100"), 1)
    states = sum(
        v
        for k, v in reference.memory_breakdown_gib.items()
        if k in ("weights", "gradients", "optimizer_states")
    )
    requirements = {
        "total_flops": reference.total_flops,
        "model_states_gib": states,  # weights + gradients + optimizer, unsharded
        "memory_per_gpu_gib": plans[0].memory_per_gpu_gib,  # with the cheapest plan's strategy
        "strategy": plans[0].items[0].strategy,
        "interconnect_required": _interconnect_need(plans[0]),
        "efficiency": plans[0].items[0].efficiency,  # expected MFU of the cheapest plan
        "pieces": spec.pieces,
    }
    stats = {
        "offers_considered": len(offers),
        "candidates": len(cset.table),
        "candidates_after_pruning": len(pruned),
        "workload_estimates": cset.estimates_evaluated,
        "seconds_candidates": round(t_candidates - started, 4),
        "seconds_total": round(time.perf_counter() - started, 4),
    }
    return QuoteResult(
        request=req,
        workload=spec,
        requirements=requirements,
        plans=plans,
        excluded=tuple(group_exclusions(cset.exclusions)),
        book=book,
        frontier=curve,
        stats=stats,
        notes=plan_set.notes,
    )


# Keyword arguments people pass to quote() meaning a QuoteRequest field (the CLI's option names).
_FIELD_ALIASES = {
    "deadline": "deadline_hours",
    "budget": "budget_usd",
    "provider": "providers",
    "region": "regions",
    "gpu": "gpus",
    "no_spot": "allow_spot",
    "max_interruption": "max_interruption_pct",
    "confidence": "confidence_pct",
    "reserved": "include_reserved",
    "hardware_cost": "local_cost_basis",
    "discount": "discounts",
    "quota": "quotas",
}


def misuse_error(request: object, keywords: Mapping[str, object]) -> ConfigError:
    """The error for ``quote("gpt2-xl-finetune", deadline="24h")``: the QuoteRequest to build."""
    field_names = {f.name for f in fields(QuoteRequest)}
    args: list[str] = []
    if isinstance(request, (str, Path)):
        args.append(f"workload={str(request)!r}")
    for key, value in keywords.items():
        name = _FIELD_ALIASES.get(key, key)
        if name == "deadline_hours" and isinstance(value, str):
            with contextlib.suppress(ConfigError):  # unreadable: shown as given
                value = parse_duration_hours(value)
        if name == "allow_spot" and key == "no_spot" and isinstance(value, bool):
            value = not value
        if name in field_names:
            args.append(f"{name}={value!r}")
    if not any(a.startswith("deadline_hours=") for a in args):
        args.append("deadline_hours=24")
    what = f"{type(request).__name__} {request!r}"
    if keywords:
        what += " and keyword arguments " + ", ".join(sorted(keywords))
    return ConfigError(
        f"quote() takes one QuoteRequest, got {what}",
        key_path="request",
        hint=f"planner.quote(planner.QuoteRequest({', '.join(args)}))",
    )


def _interconnect_need(plan: Plan) -> str:
    multi_node = any(i.instances > 1 for i in plan.items)
    within = any(i.gpus_per_instance > 1 for i in plan.items)
    # Strategy names read like "DP2 + TP8 + full recompute" (planner.workload.strategy.Strategy.name)
    if any(re.search(r"\bTP\d", i.strategy) for i in plan.items):
        need = "NVLink/NVSwitch inside each instance (tensor parallel)"
    elif within:
        need = "PCIe or better inside each instance (data parallel)"
    else:
        need = "none (single GPU)"
    if multi_node:
        need += "; EFA/InfiniBand between instances for full scaling"
    return need
