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

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.catalog import OfferBook, load_offer_book
from planner.catalog.query import OfferFilter, filter_offers
from planner.errors import ConfigError
from planner.hardware import load_gpu_catalog
from planner.optimize.candidates import (
    CandidateOptions,
    build_candidates,
    group_exclusions,
    prune_dominated,
)
from planner.optimize.plans import (
    EGRESS_USD_PER_GB,
    STARTUP_HOURS,
    Plan,
    PlanRequest,
    frontier,
    make_plans,
)
from planner.optimize.spot import DEFAULT_RESTART_HOURS
from planner.workload import WorkloadSpec, estimate, load_workload

if TYPE_CHECKING:
    from planner.onprem import HardwareSpec

_DURATION = re.compile(
    r"^\s*(\d+(?:\.\d+)?)\s*(m|min|mins|minutes?|h|hr|hrs|hours?|d|days?|w|weeks?)?\s*$", re.I
)
_UNIT_HOURS = {"m": 1 / 60, "h": 1.0, "d": 24.0, "w": 168.0}


def parse_duration_hours(text: str, *, option: str = "--deadline") -> float:
    """``90m``, ``24h``, ``3d``, ``1w`` or a bare number of hours -> hours."""
    match = _DURATION.match(str(text))
    if not match:
        raise ConfigError(
            f"cannot read duration {text!r}",
            key_path=option,
            hint="write it like 90m, 24h, 3d or 2w",
        )
    value = float(match.group(1))
    unit = (match.group(2) or "h").lower()[0]
    hours = value * _UNIT_HOURS[unit]
    if hours <= 0:
        raise ConfigError(f"duration must be positive, got {text!r}", key_path=option)
    return hours


def parse_discounts(items: Sequence[str]) -> dict[str, float]:
    """``aws=0.12`` or ``aws=12%`` -> {"aws": 0.12}."""
    out: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ConfigError(
                f"cannot read discount {item!r}",
                key_path="--discount",
                hint="write it like aws=0.12 or aws=12%",
            )
        text = value.strip()
        try:
            frac = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError as e:
            raise ConfigError(
                f"cannot read discount {item!r}",
                key_path="--discount",
                hint="write it like aws=0.12",
            ) from e
        if not 0 <= frac < 1:
            raise ConfigError(
                f"discount {item!r} must be between 0 and 1 (or 0% and 100%)", key_path="--discount"
            )
        out[name.strip().lower()] = frac
    return out


def parse_quotas(items: Sequence[str]) -> dict[str, int]:
    """``aws=16``, ``aws:p5=4``, ``aws:us-east-1:p5=2`` -> max instances at once."""
    out: dict[str, int] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not value.strip().isdigit():
            raise ConfigError(
                f"cannot read quota {item!r}", key_path="--quota", hint="write it like aws:p5=4"
            )
        out[key.strip().lower()] = int(value)
    return out


@dataclass(frozen=True)
class QuoteRequest:
    """Everything a quote depends on (the CLI's options, as values).

    ``workload`` is a library name, a YAML path or a :class:`WorkloadSpec` (e.g. a variant made
    with ``spec.model_copy(update=...)``).
    """

    workload: str | WorkloadSpec
    deadline_hours: float
    budget_usd: float | None = None
    providers: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()
    allow_spot: bool = True
    spot_only: bool = False
    max_interruption_pct: float | None = None
    include_reserved: bool = False
    hardware: tuple[str, ...] = ()
    offers_files: tuple[str | Path, ...] = ()
    snapshot_dir: str | Path | None = None
    discounts: Mapping[str, float] = field(default_factory=dict)
    quotas: Mapping[str, int] = field(default_factory=dict)
    local_cost_basis: str = "amortised"
    top: int = 5
    pareto: bool = False


@dataclass(frozen=True)
class QuoteResult:
    request: QuoteRequest
    workload: WorkloadSpec
    requirements: dict[str, Any]
    plans: tuple[Plan, ...]
    excluded: tuple[str, ...]
    book: OfferBook
    frontier: tuple[tuple[float, float], ...] = ()
    stats: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "workload": self.workload.name,
            "deadline_hours": self.request.deadline_hours,
            "budget_usd": self.request.budget_usd,
            "requirements": self.requirements,
            "excluded": list(self.excluded),
            "snapshot": {
                "as_of": self.book.as_of,
                "source": self.book.source_text,
                "parts": list(self.book.sources),
            },
            "plans": [p.to_dict() for p in self.plans],
            "assumptions": {
                "startup_hours": STARTUP_HOURS,
                "checkpoint_egress_usd_per_gb": EGRESS_USD_PER_GB,
                "spot_restart_hours": DEFAULT_RESTART_HOURS,
                "discounts": dict(self.request.discounts),
                "quotas": dict(self.request.quotas),
                "owned_hardware": list(self.request.hardware),
                "owned_cost_basis": self.request.local_cost_basis,
                "spot_allowed": self.request.allow_spot,
                "reserved_included": self.request.include_reserved,
            },
            "stats": self.stats,
        }
        if self.request.pareto:
            out["frontier"] = [{"deadline_hours": d, "total_cost_usd": c} for d, c in self.frontier]
        return out


def quote(
    req: QuoteRequest,
    *,
    solver: Any | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> QuoteResult:
    """Cheapest distinct plans for ``req`` (raises InfeasibleError with the nearest alternative).

    ``on_progress(done, total)`` follows the cost-versus-deadline sweep when ``req.pareto``.
    """
    started = time.perf_counter()
    spec = req.workload if isinstance(req.workload, WorkloadSpec) else load_workload(req.workload)
    hardware: tuple[HardwareSpec, ...] = ()
    if req.hardware:
        # owned hardware files only when asked for (planner.onprem builds its YAML models on import)
        from planner.onprem import load_hardware

        hardware = tuple(load_hardware(h) for h in req.hardware)
    catalog = load_gpu_catalog()
    book = load_offer_book(req.offers_files, snapshot_dir=req.snapshot_dir)
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
    )
    t_candidates = time.perf_counter()
    plan_req = PlanRequest(
        deadline_hours=req.deadline_hours,
        budget_usd=req.budget_usd,
        pieces=spec.pieces,
        top=req.top,
    )
    plans = make_plans(pruned, plan_req, solver).plans
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
