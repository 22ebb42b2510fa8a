"""`planner quote`: from a workload and a deadline to ranked, priced plans.

The data flow, step by step (each step is a pure function over the previous one's output):

    offers snapshot  -> load_offer_book          (planner.catalog; or a book the caller loaded)
    offers table     -> filter_offers            (provider / region / GPU choices)
    + owned hardware -> build_candidates         (workload model per gang size: fits? hours?)
    candidates       -> prune_dominated          (slower and dearer configurations dropped)
    pruned set       -> make_plans / frontier    (the MILP, planner.optimize)
    plans            -> QuoteResult              (rendered by planner.reports.quote)
"""

from __future__ import annotations

import functools
import logging
import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from planner.catalog import OfferBook, load_offer_book
from planner.catalog.query import OfferFilter, check_near, filter_offers, why_no_offers
from planner.errors import ConfigError, InfeasibleError
from planner.gpu_specs import GpuCatalog, GpuSpec, load_gpu_catalog
from planner.optimize.candidates import CandidateOptions, CandidateSet, Estimator, build_candidates
from planner.optimize.exclusions import Exclusion, group_exclusions
from planner.optimize.plans import STARTUP_HOURS, Plan, PlanRequest, frontier, make_plans
from planner.optimize.pruning import prune_dominated
from planner.quoting.request import QuoteRequest, _canonical_quotas, canonical_discounts
from planner.quoting.result import (
    EstimateMargin,
    OwnedLine,
    QuoteResult,
    QuoteStats,
    Requirements,
)
from planner.workload import Estimate, WorkloadSpec, estimate, load_workload

if TYPE_CHECKING:
    from planner.optimize.solvers import Solver
    from planner.ownership.hardware import HardwareSpec


log = logging.getLogger(__name__)


def quote(
    req: QuoteRequest,
    *,
    solver: Solver | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    book: OfferBook | None = None,
) -> QuoteResult:
    """Cheapest distinct plans for ``req`` (raises InfeasibleError with the nearest alternative).

    ``book`` is the offer book to quote from when the caller has loaded it already (a
    :class:`planner.api.Planner` session loads it once for many quotes); without it the book is
    loaded from ``req.offers_files`` and ``req.snapshot_dir``.  ``on_progress(done, total)``
    follows the cost-versus-deadline sweep when ``req.pareto``.
    """
    if not isinstance(req, QuoteRequest):
        raise ConfigError(
            f"expected a QuoteRequest, got {type(req).__name__}",
            key_path="request",
            hint="planner.quote(workload='gpt2-xl-finetune', deadline_hours=24)",
        )
    started = time.perf_counter()
    inputs = _inputs(req, book)
    margin = estimate_margin(inputs.request, inputs.spec)
    if margin is not None and inputs.spec.kind.value == "inference":
        raise ConfigError(
            f"count_estimate_error covers training times, and {inputs.spec.name} is an inference "
            "workload (the error table was measured on published training runs)",
            key_path="count_estimate_error",
            hint="leave count_estimate_error out for inference workloads",
        )
    cset, pruned = _candidates(inputs, margin)
    if pruned.empty:
        raise _nothing_runs(inputs, cset)
    t_candidates = time.perf_counter()
    spec, req = inputs.spec, inputs.request
    confidence = req.confidence_pct / 100 if req.confidence_pct > 0 else None
    plan_req = PlanRequest(
        deadline_hours=req.deadline_hours,
        budget_usd=req.budget_usd,
        pieces=spec.pieces,
        top=req.top,
        confidence=margin.spot_confidence if margin is not None else confidence,
    )
    plan_set = make_plans(pruned, plan_req, solver)
    if margin is not None:
        plan_set = replace(plan_set, plans=tuple(_joint_risk(p, margin) for p in plan_set.plans))
    curve = frontier(pruned, plan_req, solver, on_progress=on_progress) if req.pareto else ()
    requirements = _requirements(spec, plan_set.plans, inputs.catalog)
    stats = QuoteStats(
        offers_considered=len(inputs.offers),
        candidates=len(cset.table),
        candidates_after_pruning=len(pruned),
        workload_estimates=cset.estimates_evaluated,
        seconds_candidates=round(t_candidates - started, 4),
        seconds_total=round(time.perf_counter() - started, 4),
    )
    return QuoteResult(
        request=req,
        workload=spec,
        requirements=requirements,
        plans=plan_set.plans,
        excluded=tuple(group_exclusions(cset.exclusions)),
        book=inputs.book,
        frontier=curve,
        stats=stats,
        notes=plan_set.notes + _calibration_notes(cset, plan_set.plans),
        owned=_owned_lines(inputs, cset, plan_set.plans),
        estimate_margin=margin,
    )


def estimate_margin(req: QuoteRequest, spec: WorkloadSpec | None = None) -> EstimateMargin | None:
    """How ``req`` counts the estimator's own error (None: it plans on the central estimate), from
    the error table of its workload's regime (``spec``, loaded from the request when not given).

    The request's confidence ``c`` is split between two independent risks: the estimate's error
    (times planned at its ``q`` quantile) and spot interruptions (each plan meets the deadline
    with ``s`` under the spot model), ``q x s = c``, each ``sqrt(c)``.  Without spot capacity the
    error is the only risk, and ``q = c``.
    """
    if not req.count_estimate_error or req.confidence_pct <= 0:
        return None
    from planner.workload.uncertainty import error_regime, estimate_error

    spec = spec or _workload(req)
    c = req.confidence_pct / 100
    spot = req.allow_spot
    q = math.sqrt(c) if spot else c
    error = estimate_error(error_regime(spec.model.experts))
    return EstimateMargin(
        quantile=q, ratio=error.quantile(q), runs=error.runs, spot_confidence=q if spot else None
    )


def _joint_risk(plan: Plan, margin: EstimateMargin) -> Plan:
    """``plan`` with its chance to meet the deadline counting the estimate's error too: the
    chance under the spot model on times at the error's quantile, times the chance that the run
    takes no longer than that (a lower bound: a faster run has more slack for interruptions)."""
    risk = replace(plan.risk, p_meet_deadline=plan.risk.p_meet_deadline * margin.quantile)
    return replace(plan, risk=risk)


def _why_excluded(e: Exclusion) -> str:
    if e.reason == "memory" and e.need_gib > e.gpu_memory_gib:
        return (
            f"does not fit: needs {e.need_gib:.1f} GiB per GPU at best, {e.gpu_model} has "
            f"{e.gpu_memory_gib:g} GiB"
        )
    return e.detail


def _owned_lines(
    inputs: _Inputs, cset: CandidateSet, plans: tuple[Plan, ...]
) -> tuple[OwnedLine, ...]:
    """One line per owned machine type: the cheapest gang of it that meets the deadline alone,
    and why the recommended plans use it or not (in a plan, does not fit, too slow, dearer)."""
    req = inputs.request
    table = cset.table
    basis = req.local_cost_basis
    lines = []
    for hw in inputs.hardware:
        gpu = inputs.catalog.resolve(hw.gpu).name
        rows = table[(table["kind"] == "local") & (table["instance_type"] == hw.name)]
        used_in = [
            n
            for n, plan in enumerate(plans, 1)
            if not plan.below_confidence
            and any(i.kind == "local" and i.instance_type == hw.name for i in plan.items)
        ]
        if rows.empty:
            why = next(
                (_why_excluded(e) for e in cset.exclusions if e.instance_type == hw.name),
                "no gang of it can run this workload",
            )
            lines.append(OwnedLine(hw.name, gpu, hw.machines, "cannot-run", basis, why_not=why))
            continue
        job = rows["job_hours"].to_numpy(dtype=float)
        wall = job * rows["wall_factor"].to_numpy(dtype=float) + STARTUP_HOURS
        cost = rows["price_usd_per_hour"].to_numpy(dtype=float) * (job + STARTUP_HOURS)
        instances = rows["instances"].to_numpy(dtype=int)
        meets = wall <= req.deadline_hours + 1e-9
        best = int(np.flatnonzero(meets)[np.argmin(cost[meets])]) if meets.any() else None
        status = "in-plan" if used_in else "too-slow" if best is None else "dearer"
        lines.append(
            OwnedLine(
                hw.name,
                gpu,
                hw.machines,
                status,
                basis,
                in_plans=tuple(used_in),
                machines_used=int(instances[best]) if best is not None else 0,
                hours=float(wall[best]) if best is not None else None,
                cost_usd=float(cost[best]) if best is not None else None,
                fastest_hours=float(wall.min()) if best is None else None,
            )
        )
    return tuple(lines)


@dataclass(frozen=True)
class _Inputs:
    """What a quote plans over: the request with its names in the offers' spelling, the workload,
    the offers it may use and the owned machines it may use."""

    request: QuoteRequest
    spec: WorkloadSpec
    book: OfferBook
    offers: pd.DataFrame
    hardware: tuple[HardwareSpec, ...]
    catalog: GpuCatalog
    # owned machines the GPU filter (--gpu) left out, named when nothing else runs
    hardware_filtered: tuple[HardwareSpec, ...] = ()


def _workload(req: QuoteRequest) -> WorkloadSpec:
    """The request's workload: as given, or loaded by name or path."""
    return req.workload if isinstance(req.workload, WorkloadSpec) else load_workload(req.workload)


def _inputs(req: QuoteRequest, book: OfferBook | None) -> _Inputs:
    spec = _workload(req)
    inf = spec.inference
    if spec.kind.value == "inference" and inf is not None and inf.serving:
        # a service runs for inference.hours at its load: a job quote would price it as one
        # 730-hour job ("a 24 h deadline cannot be met; the fastest plan takes 730 h")
        load = next(
            k for k in ("tokens_per_s", "requests_per_s", "images_per_s") if getattr(inf, k)
        )
        raise ConfigError(
            f"{spec.name} is a service (inference.{load}: a load to carry for inference.hours), "
            "priced per month on its load and latency targets; a deadline quote covers a job",
            key_path="deadline_hours",
            hint="quote it as a service: planner quote -w NAME without --deadline "
            "(planner.quote_service(workload=...)); or give a batch job's inference.tokens, "
            "requests or images to quote it by a deadline",
        )
    hardware: tuple[HardwareSpec, ...] = ()
    if req.hardware:
        # owned hardware files only when asked for (their YAML models load on import)
        from planner.ownership.hardware import load_machines

        hardware = load_machines(req.hardware)
    catalog = load_gpu_catalog()
    if book is None:
        book = load_offer_book(req.offers_files, snapshot_dir=req.snapshot_dir)
    # Against every loaded offer (not only the filtered ones: a quota on a provider left out
    # with --provider is harmless, a misspelt one is not).
    req = replace(
        req,
        discounts=canonical_discounts(req.discounts, book.offers),
        quotas=_canonical_quotas(req.quotas, book.offers),
    )
    _warn_out_of_scope(req)
    if OWNED in req.providers:
        if not hardware:
            raise ConfigError(
                "provider owned means your own machines, and none were given",
                key_path="providers",
                # (the keyword beside the option: was the option alone, to a Python caller too)
                hint="name them with --hardware FILE (repeatable; hardware=(...) in Python), "
                "e.g. --hardware workstation-rtx4090",
            )
        cloud = tuple(p for p in req.providers if p != OWNED)
        if cloud:
            offers = filter_offers(
                book.offers, replace(_offer_filter(req), providers=cloud), catalog
            )
        else:
            offers = book.offers.iloc[0:0]
    else:
        offers = filter_offers(book.offers, _offer_filter(req), catalog)
    filtered: tuple[HardwareSpec, ...] = ()
    if req.gpus:
        allowed = {g.name for name in req.gpus for g in catalog.match(name)}
        filtered = tuple(h for h in hardware if catalog.resolve(h.gpu).name not in allowed)
        hardware = tuple(h for h in hardware if h not in filtered)
    return _Inputs(req, spec, book, offers, hardware, catalog, filtered)


def _candidates(
    inputs: _Inputs, margin: EstimateMargin | None = None
) -> tuple[CandidateSet, pd.DataFrame]:
    """Every configuration that can run the workload, and those left after dominance pruning
    (with ``margin``, on training times at the estimate's pessimistic end)."""
    req, spec = inputs.request, inputs.spec
    options = CandidateOptions(
        allow_spot=req.allow_spot,
        spot_only=req.spot_only,
        include_reserved=req.include_reserved,
        max_interruption_pct=req.max_interruption_pct,
        discounts=req.discounts,
        quotas=req.quotas,
        local_cost_basis=req.local_cost_basis,
        # a region of any loaded offer (was: only those the filters keep, so --near eu-west-1
        # with --provider gcp was "unknown region"): a tie still goes to its area
        near=None if req.near is None else check_near(req.near, inputs.book.offers["region"]),
        deadline_hours=req.deadline_hours,
        confidence=req.confidence_pct / 100 if req.confidence_pct > 0 else None,
    )
    cset = build_candidates(
        spec,
        inputs.offers,
        inputs.catalog,
        hardware=inputs.hardware,
        options=options,
        estimator=_planning_estimator(margin),
    )
    pruned = prune_dominated(
        cset.table,
        by=("kind", "purchase_option", "gpu_model", "provider")
        if spec.pieces <= 1
        else ("kind", "purchase_option", "gpu_model", "provider", "quota_group"),
        parallel=spec.pieces > 1,
        pieces=spec.pieces if spec.pieces > 1 else None,
    )
    return cset, pruned


def _planning_estimator(margin: EstimateMargin | None) -> Estimator | None:
    """The workload model a quote plans with: the user's calibrations applied, and with
    ``margin`` every training time at the estimate's pessimistic end (None: the plain model).
    Neither asks for the remedies of a job that does not fit (the plans never read them)."""
    calibrated = _calibrated_estimator()
    if margin is None:
        return calibrated
    from planner.workload.uncertainty import at_ratio

    base: Estimator = calibrated or functools.partial(estimate, suggest=False)
    note = (
        f"planned at the {margin.quantile:.1%} quantile of the estimator's own error: x"
        f"{margin.ratio:.2f} (measured / estimated training time on {margin.runs} published runs, "
        "a lognormal fit)"
    )

    def pessimistic(spec: WorkloadSpec, gpu: GpuSpec, count: int, **kw: Any) -> Estimate:
        return at_ratio(base(spec, gpu, count, **kw), margin.ratio, note)

    return pessimistic


def _calibrated_estimator() -> Estimator | None:
    """The workload model with the user's measured runs applied (None: the plain one)."""
    from planner.workload.calibration import load_calibrations

    calibrations = load_calibrations()
    if not calibrations:
        return None
    from planner.workload import estimate

    return functools.partial(estimate, calibrations=calibrations, suggest=False)


# The provider name of owned hardware in plans and in --provider.
OWNED = "owned"


def _offer_filter(req: QuoteRequest) -> OfferFilter:
    return OfferFilter(providers=req.providers, regions=req.regions, gpus=req.gpus)


def _nothing_runs(inputs: _Inputs, cset: CandidateSet) -> InfeasibleError:
    """The InfeasibleError of a quote with no candidate at all, saying what excluded the offers,
    per reason with counts (an empty filter, quotas, memory, spot risk) and what to change."""
    req = inputs.request
    if inputs.offers.empty and not inputs.hardware:
        # 'owned' is no provider of the price table: the cloud part of the filter is asked why
        # it left nothing, and owned machines the GPU filter dropped are named on their own
        cloud = tuple(p for p in req.providers if p != OWNED)
        whys = []
        if inputs.hardware_filtered:
            machines = ", ".join(f"{h.name} ({h.gpu})" for h in inputs.hardware_filtered)
            whys.append(
                f"the GPU filter ({', '.join(req.gpus)}) leaves out your hardware: {machines}"
            )
        if cloud or not req.providers:
            flt = replace(_offer_filter(req), providers=cloud)
            whys.append(why_no_offers(inputs.book.offers, flt, inputs.catalog) or "")
        why = "; ".join(w for w in whys if w) or "no offers are loaded"
        return InfeasibleError(
            f"no configuration can run this workload: {why}",
            hint="widen or drop the provider, region or GPU choice",
        )
    reasons, hints = [], []
    by_reason: dict[str, list[Exclusion]] = {}
    for e in cset.exclusions:
        by_reason.setdefault(e.reason, []).append(e)

    def offers_in(excluded: list[Exclusion]) -> int:
        return len({(e.provider, e.instance_type) for e in excluded})

    misfits = by_reason.pop("memory", [])
    # a shape whose least memory per GPU fits yet runs at no gang size is held back by its
    # layout (a pinned training.parallelism) or its links, not by memory
    by_reason["memory"] = [e for e in misfits if e.need_gib > e.gpu_memory_gib]
    if unplaced := [e for e in misfits if e.need_gib <= e.gpu_memory_gib]:
        gpus = ", ".join(sorted({e.gpu_model for e in unplaced}))
        reasons.append(
            f"{offers_in(unplaced)} offer(s) ({gpus}) have the memory but no gang of them can "
            "hold the workload's parallel layout"
        )
        hints.append(
            "check training.parallelism against the GPUs per instance (planner estimate "
            "WORKLOAD --gpu GPU --count N says why)"
        )
    if by_reason["memory"]:
        excluded = by_reason["memory"]
        have = max(e.gpu_memory_gib for e in excluded)
        need = min(e.need_gib for e in excluded)
        gpus = ", ".join(sorted({e.gpu_model for e in excluded}))
        reasons.append(
            f"{offers_in(excluded)} offer(s) do not fit in GPU memory ({gpus}: at most "
            f"{have:g} GiB per GPU, {need:.1f} GiB needed at best)"
        )
        hints.append("a GPU with more memory, LoRA/QLoRA or more GPUs may make it fit")
    if "quota" in by_reason:
        excluded = by_reason["quota"]
        providers = sorted({e.provider for e in excluded})
        set_quotas = ", ".join(
            f"{k}={v}" for k, v in sorted(req.quotas.items()) if k.split(":")[0] in providers
        )
        reasons.append(
            f"{offers_in(excluded)} offer(s) from {', '.join(providers)} need more instances "
            f"than the quota allows ({set_quotas or 'default quota'})"
        )
        hints.append(f"raise the quota (quotas / --quota {providers[0]}=N) or drop it")
    for detail in dict.fromkeys(e.detail for e in by_reason.get("precision", [])):
        excluded = [e for e in by_reason["precision"] if e.detail == detail]
        gpus = ", ".join(sorted({e.gpu_model for e in excluded}))
        reasons.append(f"{offers_in(excluded)} offer(s) ({gpus}) {detail}")
        hints.append(detail.split("; ")[-1].replace(" runs on them", " includes them"))
    if "vcpus" in by_reason:
        excluded = by_reason["vcpus"]
        reasons.append(
            f"{offers_in(excluded)} offer(s) have too few vCPUs to feed their GPUs "
            f"(e.g. {excluded[0].gpu_model}: {excluded[0].detail})"
        )
        hints.append("offers with more vCPUs per GPU (planner offers --min-vcpus N) or more time")
    if "host-memory" in by_reason:
        excluded = by_reason["host-memory"]
        reasons.append(
            f"{offers_in(excluded)} offer(s) have too little host RAM for the optimizer states "
            f"offloaded or paged there (e.g. {excluded[0].detail})"
        )
        hints.append(
            "more instances share the states; training.offload: nvme keeps them on local NVMe "
            "(16 GB of RAM per GPU stages them); or training.offload: none where GPU memory allows"
        )
    if "local-disk" in by_reason:
        excluded = by_reason["local-disk"]
        reasons.append(
            f"{offers_in(excluded)} offer(s) have too little local NVMe (e.g. {excluded[0].detail})"
        )
        hints.append(
            "more instances share the states (offers with local NVMe: planner offers "
            "--min-local-disk GB); or training.offload: optimizer where host RAM allows"
        )
    if "spot-risk" in by_reason:
        excluded = by_reason["spot-risk"]
        reasons.append(
            f"{offers_in(excluded)} spot offer(s) are interrupted more often than "
            "max_interruption_pct allows"
        )
        hints.append("raise max_interruption_pct (--max-interruption) or allow on-demand")
    if not reasons:
        reasons.append(
            f"none of the {len(inputs.offers)} offers has a price for the purchase options allowed"
        )
        hints.append(
            "allow both on-demand and spot prices (drop --spot-only / --no-spot, or spot_only / "
            "allow_spot in Python)"
        )
    return InfeasibleError(
        "no configuration can run this workload: " + "; ".join(reasons),
        hint="; ".join(hints),
    )


def _requirements(spec: WorkloadSpec, plans: tuple[Plan, ...], catalog: GpuCatalog) -> Requirements:
    """What the workload needs: its FLOPs and model states (on one H100 for reference, a B200 where
    the precision needs Blackwell's fp4 tensor cores) and the memory, strategy, link and efficiency
    of the cheapest plan."""
    gpu = catalog.resolve("H100")
    if gpu.cannot_train_in(spec.train.precision.value) is not None:
        gpu = catalog.resolve("B200")
    reference = estimate(spec, gpu, 1)
    states = sum(
        v
        for k, v in reference.memory_breakdown_gib.items()
        if k in ("weights", "gradients", "optimizer_states")
    )
    return Requirements(
        total_flops=reference.total_flops,
        model_states_gib=states,
        memory_per_gpu_gib=plans[0].memory_per_gpu_gib,
        strategy=plans[0].items[0].strategy,
        interconnect_required=_interconnect_need(plans[0]),
        efficiency=plans[0].items[0].efficiency,
        pieces=spec.pieces,
    )


def _interconnect_need(plan: Plan) -> str:
    multi_node = any(i.instances > 1 for i in plan.items)
    within = any(i.gpus_per_instance > 1 for i in plan.items)
    # Strategy names read like "DP2 + TP8 + full recompute" (planner.workload.strategy.Strategy.name)
    if any(re.search(r"\b(TP|CP)\d", i.strategy) for i in plan.items):
        need = "NVLink/NVSwitch inside each instance (tensor or context parallel)"
    elif within:
        need = "PCIe or better inside each instance (data parallel)"
    else:
        need = "none (single GPU)"
    if multi_node:
        need += "; EFA/InfiniBand between instances for full scaling"
    return need


def _warn_out_of_scope(req: QuoteRequest) -> None:
    """A warning for each discount or quota on a provider the request's providers leave out:
    harmless, but it does nothing in this quote (was: dropped without a word)."""
    if not req.providers:
        return
    kept = {p.lower() for p in req.providers}
    for what, keys in (("discount", req.discounts), ("quota", req.quotas)):
        for key in keys:
            provider = key.split(":")[0]  # canonical keys: provider[:region]:family
            if provider.lower() not in kept:
                log.warning(
                    "the %s on %s applies to no offer in this quote: the providers asked for (%s) "
                    "leave %s out",
                    what,
                    key,
                    ", ".join(req.providers),
                    provider,
                )


def _calibration_notes(cset: CandidateSet, plans: Sequence[Plan]) -> tuple[str, ...]:
    """What the user's recorded runs did to the estimates of the plans' GPUs, each line once, as
    ``planner estimate`` says it (was: a quote's times and costs halved by a calibration without
    a word of it)."""
    gpus = dict.fromkeys(str(item.gpu_model) for p in plans for item in p.items)
    return tuple(
        dict.fromkeys(line for gpu in gpus for line in cset.calibration_notes.get(gpu, ()))
    )
