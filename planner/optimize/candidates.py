"""Candidate gang configurations for the quote MILP, and the offers excluded on the way.

A candidate is (offer or owned machine type, instance count, purchase option) with the workload
model's answer for that many GPUs on that topology: the strategy it would use, memory per GPU and
the hours the whole job takes.  Candidates that do not fit, or whose strategy needs an interconnect
the offer lacks, are never created; the reasons are collected so the report can say why an offer
is missing ("T4, L4, A10G: 24 GiB or less < 31 GiB needed").

Gang sizes: the powers of two up to 64 instances (``INSTANCE_COUNTS``), which sequential mixes
interpolate between, plus, for the request's deadline, the cheapest size between two of them that
does the whole job alone (:func:`_fill_sizes`: 3 gh200 where 2 are too slow and 4 cost more) and
every quota value.  This keeps the guarantee a brute force over every size from 1 to 64 checks
(no single configuration of any size is cheaper than the cheapest plan) at a few extra rows per
offer shape instead of 64 sizes; the sizes are for the request's deadline only (the
cost-versus-deadline sweep reuses them).

Its parts live beside it: what one instance of a gang needs from its host
(:mod:`planner.optimize.host`), the offers as columns read by position and the gangs that fit each
offer shape (:mod:`planner.optimize.gangs`), and the exclusions with the report's lines for them
(:mod:`planner.optimize.exclusions`).  The quote then prunes the table
(:mod:`planner.optimize.pruning`).

Pure functions: the estimator is passed in (defaults to :func:`planner.workload.estimate`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd

from planner.catalog.query import region_preference_order
from planner.gpu_specs import GpuCatalog, GpuSpec
from planner.optimize.exclusions import (
    Exclusion,
    host_exclusions,
    memory_exclusions,
    quota_exclusions,
    spot_risk_exclusions,
)
from planner.optimize.gangs import (
    SHAPE_COLUMNS,
    GangFits,
    OfferColumns,
    gang_fits,
    host_suffices,
    pair_with_gangs,
    shape_keys,
)
from planner.optimize.host import loader_slowdown
from planner.optimize.spot import (
    DEFAULT_INTERRUPTION_PCT,
    DEFAULT_RESTART_HOURS,
    SpotModel,
    checkpoint_hours,
    reserve_hours,
)
from planner.schema import COMMITMENT_OPTIONS, PRICE_COLUMNS, Fabric, Interconnect, PurchaseOption
from planner.units import MIN_BILLED_HOURS
from planner.workload import Estimate, Topology, WorkloadSpec
from planner.workload.advice import is_tensor_across_nodes, is_unrunnable
from planner.workload.calibration import CALIBRATION_NOTE_STARTS

if TYPE_CHECKING:
    from planner.ownership.hardware import HardwareSpec

Estimator = Callable[..., Estimate]

# Instance counts tried per offer (a gang of n identical instances): powers of two, the
# batch-size-friendly shapes people launch.  Sequential mixes interpolate between them; with a
# deadline, the gang sizes between two of them that can do the job alone join them (_fill_sizes),
# and so does every quota given (a quota of 6 allows a gang of 6).
INSTANCE_COUNTS = (1, 2, 4, 8, 16, 32, 64)
# Default cap on instances of one family per provider and region (EC2/GCE GPU quotas start far
# lower on a fresh account; 64 is the AWS Capacity Block ceiling per block, cost-facts.md s3.2).
DEFAULT_QUOTA_INSTANCES = 64
DEFAULT_MAX_GPUS = 512
# Every phase (and every parallel gang) pays a billed start-up: provision the instances, set up the
# environment, stage the data.  GPU VMs take minutes to provision and boot; 10 minutes is a planning
# figure (SkyPilot's recovery path: relaunch + setup, cost-facts.md s3.4).
STARTUP_HOURS = 10 / 60
# Once a gang finishes the whole job in less than a phase's billed start-up, larger gangs of the
# same offer can only save minutes while paying more start-up: they are not generated.  Nor once
# doubling the gang no longer shortens the job: the global batch is already spread over every rank
# that can get a share (ranks beyond it idle) or the links cost what the extra GPUs save.  That
# gang costs at least twice the GPU-hours for no time, so no plan uses it, and a still bigger one
# only spreads the same batch thinner over the same links.  (On the headline quote this halves the
# workload estimates made, 471 -> 256, with the same plans.)
MIN_USEFUL_JOB_HOURS = STARTUP_HOURS


@dataclass(frozen=True)
class CandidateOptions:
    """User choices that decide which configurations exist and what they cost."""

    allow_spot: bool = True
    spot_only: bool = False
    include_reserved: bool = False
    max_interruption_pct: float | None = None
    default_interruption_pct: float = DEFAULT_INTERRUPTION_PCT
    restart_hours: float = DEFAULT_RESTART_HOURS
    discounts: Mapping[str, float] = field(default_factory=dict)  # provider -> fraction off
    quotas: Mapping[str, int] = field(
        default_factory=dict
    )  # "aws", "aws:p5", "aws:us-east-1:p5" -> instances
    max_gpus: int = DEFAULT_MAX_GPUS
    local_cost_basis: str = "amortised"  # amortised | sunk
    near: str | None = None  # price ties go to this region or area (catalog.query.check_near)
    # The request's deadline (hours) and confidence: with a deadline, the gang sizes between two
    # powers of two that finish the job alone within it are generated too (_fill_sizes).
    deadline_hours: float | None = None
    confidence: float | None = None


@dataclass(frozen=True)
class CandidateSet:
    """The candidates of a quote (:data:`CANDIDATE_COLUMNS`), the offers left out and why, and
    how many workload estimates they took."""

    table: pd.DataFrame
    exclusions: tuple[Exclusion, ...]
    estimates_evaluated: int
    # GPU model -> what the user's recorded runs did to its estimates ("calibrated from your run
    # of ...", or why one no longer applies), as the estimates say it
    calibration_notes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


CANDIDATE_COLUMNS = (
    "kind",  # cloud | local
    "provider",
    "region",
    "instance_type",
    "gpu_model",
    "gpus_per_instance",
    "instances",
    "gpus",
    "purchase_option",
    "price_usd_per_hour",  # whole gang, after discounts
    "job_hours",  # running hours for the whole job on this gang (spot slowdown included)
    "base_job_hours",  # without the spot slowdown
    "wall_factor",  # wall-clock hours per running hour (>1 for part-time owned machines)
    "capacity_hours",
    "quota_group",
    "quota_instances",
    "max_gangs",
    "memory_per_gpu_gib",
    "gpu_memory_gib",
    "strategy",
    "interconnect",
    "fabric",
    "spot_slowdown",
    "interruption_pct",
    "interruption_published",  # False: the default rate, the provider publishes none for the offer
    "checkpoint_gib",
    "efficiency",  # model FLOPs utilisation the workload model expects on this gang
    "source",
    "as_of",
)


def instance_family(instance_type: str) -> str:
    """The family a quota names: ``p4d.24xlarge`` -> ``p4d``, ``a2-highgpu-1g`` -> ``a2-highgpu``;
    names with neither separator (Azure sizes) are their own family."""
    return instance_type.split(".")[0] if "." in instance_type else instance_type.rsplit("-", 1)[0]


def quota_for(quotas: Mapping[str, int], provider: str, region: str, family: str) -> int:
    """Most specific quota: provider:region:family, provider:family, provider, else the default."""
    for key in (f"{provider}:{region}:{family}", f"{provider}:{family}", provider):
        if key in quotas:
            return int(quotas[key])
    return DEFAULT_QUOTA_INSTANCES


def _strategy_text(est: Estimate) -> str:
    return est.strategy.name


class _Estimates:
    """The workload model's answers for ``spec``, each (GPU, count, topology) asked once: many
    offers share a shape, and owned machines often repeat a cloud shape; a single node's estimate
    does not depend on the fabric between nodes."""

    def __init__(self, spec: WorkloadSpec, estimator: Estimator) -> None:
        self._spec = spec
        self._estimator = estimator
        self._cache: dict[tuple[Any, ...], Estimate] = {}

    def __len__(self) -> int:
        """How many distinct estimates were made."""
        return len(self._cache)

    def calibration_notes(self) -> dict[str, tuple[str, ...]]:
        """Per GPU model, the estimates' lines about the user's calibrations (each once)."""
        notes: dict[str, dict[str, None]] = {}
        for (gpu, *_), est in self._cache.items():
            for line in est.assumptions:
                if line.startswith(CALIBRATION_NOTE_STARTS):
                    notes.setdefault(gpu, {})[line] = None
        return {gpu: tuple(lines) for gpu, lines in notes.items()}

    def __call__(
        self, gpu: GpuSpec, count: int, per_node: int, link: str, fabric: str, gbps: float | None
    ) -> Estimate:
        # A gang inside one node never uses the network between nodes: offers that differ only
        # in their fabric or its speed share the estimate (a quarter of the 24 h gpt2-xl-finetune
        # quote's single-node estimates repeated one another).
        inside = count <= per_node
        key = (
            gpu.name,
            count,
            per_node,
            link,
            None if inside else fabric,
            None if inside else gbps,
        )
        if key not in self._cache:
            topo = Topology(
                gpus_per_node=per_node,
                interconnect=Interconnect(link),
                fabric=Fabric(fabric),
                network_gbps=gbps,
            )
            self._cache[key] = self._estimator(self._spec, gpu, count, topology=topo)
        return self._cache[key]


def build_candidates(
    spec: WorkloadSpec,
    offers: pd.DataFrame,
    catalog: GpuCatalog,
    *,
    hardware: Sequence[HardwareSpec] = (),
    options: CandidateOptions | None = None,
    estimator: Estimator | None = None,
) -> CandidateSet:
    """All feasible gang configurations for ``spec`` over ``offers`` and owned ``hardware``.

    The workload model runs once per offer shape and gang size (:func:`_shape_fits`); the fitting
    sizes then fan out to every region and price of that shape, per purchase option
    (:func:`_priced_rows`).  Owned machines add one row per machine count that fits.
    """
    if estimator is None:
        from planner.workload import estimate as default_estimator

        # no remedies for the shapes that do not fit: the plans never read them
        estimator = functools.partial(default_estimator, suggest=False)
    opts = options or CandidateOptions()
    kept, exclusions = _precision_supported(spec, offers, catalog)
    # price ties go to the preferred region: the offers that can train, in region preference,
    # taken from the table at once
    providers, regions = offers["provider"].tolist(), offers["region"].tolist()
    order = region_preference_order(
        [providers[i] for i in kept], [regions[i] for i in kept], opts.near
    )
    offers = offers.iloc[[kept[k] for k in order]]
    run = _Estimates(spec, estimator)
    columns = OfferColumns(offers, shape_keys(offers), catalog)
    shape_fits, shape_best_need, shape_layout = _shape_fits(columns, catalog, opts, run)
    exclusions += memory_exclusions(columns, shape_fits, shape_best_need, shape_layout)
    fits = gang_fits(spec, shape_fits)
    exclusions += host_exclusions(columns, fits)
    clouds = []
    for option in _purchase_options(opts):
        cloud, excluded = _priced_rows(
            columns, fits, option, opts, collapse_regions=spec.pieces <= 1
        )
        if cloud is not None:
            clouds.append(cloud)
        exclusions += excluded
    rows: list[dict[str, Any]] = []
    if hardware:
        from planner.ownership.costs import machine_cost_usd_per_hour

        for hw in hardware:
            gpu = catalog.resolve(hw.gpu)
            why = _precision_problem(spec, gpu)
            if why is not None:
                exclusions.append(Exclusion("precision", "owned", hw.name, gpu.name, why))
                continue
            per_machine = machine_cost_usd_per_hour(hw, opts.local_cost_basis)
            owned, excluded_hw = _owned_rows(hw, gpu, per_machine, opts, run)
            rows += owned
            exclusions += excluded_hw
    if rows:
        parts = [*(pd.DataFrame(c) for c in clouds), pd.DataFrame(rows, columns=CANDIDATE_COLUMNS)]
        table = pd.concat(parts, ignore_index=True)[list(CANDIDATE_COLUMNS)]
    elif clouds:
        table = _cloud_table(clouds)
    else:
        table = pd.DataFrame(columns=list(CANDIDATE_COLUMNS))
    return CandidateSet(
        table=table,
        exclusions=tuple(exclusions),
        estimates_evaluated=len(run),
        calibration_notes=run.calibration_notes(),
    )


def _cloud_table(clouds: Sequence[Mapping[str, np.ndarray]]) -> pd.DataFrame:
    """The candidate table of the cloud rows of each purchase option (:func:`_cloud_columns`),
    column by column in :data:`CANDIDATE_COLUMNS` order: the table ``pd.concat`` of one frame per
    option gives, built once (a frame per option and their concatenation cost a quote ~2 ms)."""
    return pd.DataFrame({name: np.concatenate([c[name] for c in clouds]) for name in clouds[0]})


def _precision_problem(spec: WorkloadSpec, gpu: GpuSpec) -> str | None:
    """Why ``gpu`` cannot train ``spec`` in its precision, and what would (None when it can, or
    for inference)."""
    if spec.kind.value == "inference":
        return None
    precision = spec.train.precision.value
    lacks = gpu.lacks_tensor_cores_for(precision)
    if lacks is None:
        return None
    from planner.workload.estimator import precision_fallback

    return (
        f"cannot train in {precision} ({lacks}); "
        f"training.precision: {precision_fallback(precision, gpu)} runs on them"
    )


def _precision_supported(
    spec: WorkloadSpec, offers: pd.DataFrame, catalog: GpuCatalog
) -> tuple[list[int], list[Exclusion]]:
    """The positions of the ``offers`` whose GPU can train ``spec`` in its precision (no bf16 on
    a T4 or V100, no fp8 before Hopper and Ada), and one exclusion per instance type left out."""
    if offers.empty or spec.kind.value == "inference":
        return list(range(len(offers))), []
    gpus = [str(g) for g in offers["gpu_model"].tolist()]
    problems = {g: _precision_problem(spec, catalog.resolve(g)) for g in dict.fromkeys(gpus)}
    kept = [i for i, g in enumerate(gpus) if problems[g] is None]
    if len(kept) == len(gpus):
        return kept, []
    providers, types = offers["provider"].tolist(), offers["instance_type"].tolist()
    left_out: dict[tuple[Any, Any], int] = {}  # the first offer of each instance type left out
    for i, g in enumerate(gpus):
        if problems[g] is not None:
            left_out.setdefault((providers[i], types[i]), i)
    return kept, [
        Exclusion("precision", str(p), str(t), gpus[i], str(problems[gpus[i]]))
        for (p, t), i in left_out.items()
    ]


def _purchase_options(opts: CandidateOptions) -> list[PurchaseOption]:
    """The purchase options priced: on-demand and spot (unless refused), and on request the
    commitments (reserved instances and savings plans, 1 and 3 years)."""
    options = [PurchaseOption.ON_DEMAND, PurchaseOption.SPOT]
    if opts.include_reserved:
        options += COMMITMENT_OPTIONS
    return [
        option
        for option in options
        if not (option is PurchaseOption.SPOT and not opts.allow_spot)
        and not (opts.spot_only and option is not PurchaseOption.SPOT)
    ]


def _shape_fits(
    columns: OfferColumns, catalog: GpuCatalog, opts: CandidateOptions, run: _Estimates
) -> tuple[
    dict[tuple[Any, ...], list[tuple[int, Estimate]]],
    dict[tuple[Any, ...], float],
    dict[tuple[Any, ...], str],
]:
    """Per offer shape: the gang sizes that fit with their estimates, the least memory per GPU
    any size needs (for the report's "does not fit" line), and, for a shape no size can run the
    pinned layout on (a tensor-parallel group larger than its instance), why."""
    shape_fits: dict[tuple[Any, ...], list[tuple[int, Estimate]]] = {}
    shape_best_need: dict[tuple[Any, ...], float] = {}
    shape_layout: dict[tuple[Any, ...], str] = {}
    spot_pct_by_shape = _spot_rates_by_shape(columns, opts)
    # the first offer of each shape, in table order (drop_duplicates on the shape's columns)
    first: dict[tuple[Any, ...], int] = {}
    for i, key in enumerate(columns.shapes):
        first.setdefault(key, i)
    for i in first.values():
        shape = {c: columns[c][i] for c in SHAPE_COLUMNS}
        gpu = catalog.resolve(str(shape["gpu_model"]))
        gpi = int(shape["gpu_count"])
        gbps = None if pd.isna(shape["network_gbps"]) else float(shape["network_gbps"])
        key = columns.shapes[i]
        fits: list[tuple[int, Estimate]] = []
        need = math.inf
        # sizes whose instances are smaller than the pinned tensor-parallel group, and why
        across: list[str] = []
        probed = unrunnable = 0

        def probe(
            n: int, gpu: GpuSpec = gpu, gpi: int = gpi, shape: Any = shape, gbps: Any = gbps
        ) -> Estimate:
            return run(gpu, n * gpi, gpi, str(shape["interconnect"]), str(shape["fabric"]), gbps)

        for n in INSTANCE_COUNTS:
            if n * gpi > opts.max_gpus:
                break
            est = probe(n)
            probed += 1
            need = min(need, est.memory_per_gpu_gib)
            if not est.fits and is_unrunnable(est.strategy.reason):
                unrunnable += 1
                if is_tensor_across_nodes(est.strategy.reason):
                    across.append(est.strategy.reason)
            if est.fits:
                no_faster = bool(fits) and est.wall_hours >= min(e.wall_hours for _, e in fits)
                fits.append((n, est))
                if est.wall_hours < MIN_USEFUL_JOB_HOURS or no_faster:
                    # a bigger gang saves less time than its own start-up takes, or doubling
                    # the gang no longer made it faster (see MIN_USEFUL_JOB_HOURS)
                    break
        largest = min(INSTANCE_COUNTS[-1], opts.max_gpus // gpi)
        spot_pcts = spot_pct_by_shape.get(key, ())
        extra = _fill_sizes(fits, probe, opts, spot_pcts, largest) if fits else []
        shape_fits[key] = sorted(fits + extra, key=lambda f: f[0])
        shape_best_need[key] = need
        if not fits and across and unrunnable == probed:
            # "tensor parallel 8 needs 8 GPUs in one node, and the nodes hold 1"
            shape_layout[key] = (
                across[0].removeprefix("not runnable: ").removesuffix(" (training.parallelism)")
            )
    return shape_fits, shape_best_need, shape_layout


def _spot_rates_by_shape(
    columns: OfferColumns, opts: CandidateOptions
) -> dict[tuple[Any, ...], tuple[float, ...]]:
    """The distinct spot interruption rates (%/month) of each shape's spot offers, for
    :func:`_fill_sizes` (empty without a deadline or without spot)."""
    if opts.deadline_hours is None or not opts.allow_spot:
        return {}
    spot = ~np.isnan(columns.numbers(PRICE_COLUMNS[PurchaseOption.SPOT]))
    pct = _interruption_pcts(columns, opts)
    if opts.max_interruption_pct is not None:
        spot = spot & (pct <= opts.max_interruption_pct)
    rates: dict[tuple[Any, ...], set[float]] = {}
    for key, rate, priced in zip(columns.shapes, pct.tolist(), spot.tolist(), strict=True):
        if priced:
            rates.setdefault(key, set()).add(float(rate))
    return {key: tuple(sorted(r)) for key, r in rates.items()}


def _alone_hours(
    est: Estimate, spot_pct: float | None, n: int, opts: CandidateOptions
) -> tuple[float, float]:
    """(billed hours, hours needed before the deadline) of a gang of ``n`` doing the whole job
    alone, as the quote model counts them: its running hours (the spot slowdown included) and
    the billed start-up; on spot the deadline also needs the reserve that keeps it with the
    request's confidence (slack, not billed)."""
    job = max(est.wall_hours, MIN_BILLED_HOURS)
    if spot_pct is None:
        return job + STARTUP_HOURS, job + STARTUP_HOURS
    spot = SpotModel(spot_pct, n, checkpoint_hours(est.checkpoint_gib), opts.restart_hours)
    billed = job * spot.slowdown + STARTUP_HOURS
    reserve = reserve_hours(spot, job, opts.confidence) if opts.confidence else 0.0
    return billed, billed + reserve


def _fill_sizes(
    ladder: list[tuple[int, Estimate]],
    probe: Callable[[int], Estimate],
    opts: CandidateOptions,
    spot_pcts: Sequence[float],
    largest: int,
) -> list[tuple[int, Estimate]]:
    """Gang sizes other than powers of two worth offering the model, with their estimates.

    With a deadline, the power-of-two ladder brackets the size that can do the whole job alone:
    the largest ladder size that cannot (``lo``) and the smallest that can (``hi``).  Any size
    between them may be cheaper than ``hi`` alone (a plan of 3 gh200 instead of 4, where a mix of
    2 and 4 pays two start-ups and a checkpoint move), so each is estimated and the cheapest that
    meets the deadline alone, if it is not ``hi``, is kept: once for on-demand and reserved prices
    (cost in proportion to ``n x hours``, whatever the price) and once per spot interruption rate
    of the shape (slowdown and confidence reserve included).  Sizes beyond ``hi`` are not tried:
    ``hi`` already meets the deadline, a bigger gang pays more start-up and its matmuls scale no
    better, and a size that shares the global batch unevenly is charged its busiest rank's share
    (:func:`planner.workload.strategy._cost`), so it gains nothing over ``hi``.  Every quota
    value below the largest size is a gang size too.  The candidate count grows by at most a few
    sizes per shape, not by the factor of 64 sizes.
    """
    have = {n for n, _ in ladder}
    extra: dict[int, Estimate] = {}

    def fitting(n: int) -> Estimate | None:
        est = probe(n)  # cached per shape and size: the ladder's sizes cost nothing again
        return est if est.fits else None

    if opts.deadline_hours is not None:
        for pct in (None, *spot_pcts):
            best = _cheapest_alone(ladder, fitting, opts, pct)
            if best is not None and best[0] not in have:
                extra[best[0]] = best[1]
    for quota in sorted({int(q) for q in opts.quotas.values()}):
        if 1 < quota < largest and quota not in have and quota not in extra:
            est = fitting(quota)
            if est is not None:
                extra[quota] = est
    return sorted(extra.items())


def _cheapest_alone(
    ladder: list[tuple[int, Estimate]],
    fitting: Callable[[int], Estimate | None],
    opts: CandidateOptions,
    spot_pct: float | None,
) -> tuple[int, Estimate] | None:
    """The cheapest gang size, in ``lo < n <= hi`` of the ladder's bracket, that does the whole
    job alone by the deadline (None if no ladder size does)."""
    deadline = float(opts.deadline_hours or 0.0)

    def alone(n: int, est: Estimate) -> float | None:
        """``n x billed hours`` (the cost over the price of one instance) when the gang meets
        the deadline alone, else None."""
        billed, needed = _alone_hours(est, spot_pct, n, opts)
        return n * billed if needed <= deadline + 1e-9 else None

    lo = 0
    hi: tuple[int, Estimate] | None = None
    for n, est in ladder:
        if alone(n, est) is not None:
            hi = (n, est)
            break
        lo = n
    if hi is None:
        return None
    best, best_cost = hi, alone(*hi) or math.inf
    for n in range(lo + 1, hi[0]):  # hi is a ladder size, within the GPU cap already
        between = fitting(n)
        cost = alone(n, between) if between is not None else None
        if between is not None and cost is not None and cost < best_cost * (1 - 1e-9):
            best, best_cost = (n, between), cost
    return best


def _owned_rows(
    hw: HardwareSpec,
    gpu: GpuSpec,
    per_machine_usd_per_hour: float,
    opts: CandidateOptions,
    run: _Estimates,
) -> tuple[list[dict[str, Any]], list[Exclusion]]:
    """Candidate rows for owned machines ``hw``, one per machine count that fits, or the
    exclusion saying it fits at none."""
    rows: list[dict[str, Any]] = []
    need = math.inf
    for k in range(1, hw.machines + 1):
        est = run(
            gpu,
            k * hw.gpus_per_machine,
            hw.gpus_per_machine,
            hw.interconnect.value,
            hw.fabric.value,
            None,
        )
        need = min(need, est.memory_per_gpu_gib)
        if est.fits:
            rows.append(_owned_row(hw, gpu, k, est, per_machine_usd_per_hour, opts))
    if rows:
        return rows, []
    return [], [
        Exclusion("memory", "owned", hw.name, gpu.name, "does not fit", gpu.usable_memory_gib, need)
    ]


def _owned_row(
    hw: HardwareSpec,
    gpu: GpuSpec,
    k: int,
    est: Estimate,
    per_machine_usd_per_hour: float,
    opts: CandidateOptions,
) -> dict[str, Any]:
    """The candidate row of a gang of ``k`` owned machines: no quota beyond the machines owned,
    no spot risk, and wall-clock hours stretched by the hours a day the machines are available."""
    return {
        "kind": "local",
        "provider": "owned",
        "region": "on-prem",
        "instance_type": hw.name,
        "gpu_model": gpu.name,
        "gpus_per_instance": hw.gpus_per_machine,
        "instances": k,
        "gpus": k * hw.gpus_per_machine,
        "purchase_option": f"owned-{opts.local_cost_basis}",
        "price_usd_per_hour": k * per_machine_usd_per_hour,
        "job_hours": max(est.wall_hours, MIN_BILLED_HOURS),
        "base_job_hours": max(est.wall_hours, MIN_BILLED_HOURS),
        "wall_factor": 24.0 / hw.hours_available_per_day,
        "capacity_hours": math.inf,
        "quota_group": f"owned:{hw.name}",
        "quota_instances": hw.machines,
        "max_gangs": max(hw.machines // k, 1),
        "memory_per_gpu_gib": est.memory_per_gpu_gib,
        "gpu_memory_gib": gpu.usable_memory_gib,
        "strategy": _strategy_text(est),
        "interconnect": hw.interconnect.value,
        "fabric": hw.fabric.value,
        "spot_slowdown": 1.0,
        "interruption_pct": 0.0,
        "interruption_published": True,
        "checkpoint_gib": est.checkpoint_gib,
        "efficiency": est.efficiency,
        "source": hw.source,
        "as_of": "",
    }


def _priced_rows(
    columns: OfferColumns,
    fits: GangFits,
    option: PurchaseOption,
    opts: CandidateOptions,
    *,
    collapse_regions: bool,
) -> tuple[dict[str, np.ndarray] | None, list[Exclusion]]:
    """Candidate rows for one purchase option (:func:`_cloud_columns`; None when there are none):
    offers x fitting gang sizes, vectorised; and the spot offers left out for their interruption
    rate."""
    price = columns.numbers(PRICE_COLUMNS[option])
    providers = columns["provider"]
    discount = np.array([float(opts.discounts.get(p, 0.0)) for p in providers.tolist()])
    unit_price = price * (1.0 - discount)
    pct = _interruption_pcts(columns, opts)
    at = np.flatnonzero(~np.isnan(price))  # offers with a price for this option
    exclusions: list[Exclusion] = []
    if option is PurchaseOption.SPOT and opts.max_interruption_pct is not None:
        risky = pct[at] > opts.max_interruption_pct
        exclusions = spot_risk_exclusions(columns, at[risky], opts.max_interruption_pct)
        at = at[~risky]
    if collapse_regions:
        # Same instance type, same job hours: only the cheapest region can be in a cheapest plan
        # (regions matter again for parallel jobs, whose quotas are per region).
        at = _cheapest_per_type(at, unit_price, providers, columns["instance_type"])
    at, fit = pair_with_gangs(columns.shapes, at, fits)
    ok = host_suffices(columns, at, fits, fit)
    at, fit = at[ok], fit[ok]
    if not len(at):
        return None, exclusions
    regions, types = columns["region"][at], columns["instance_type"][at]
    family = [instance_family(t) for t in types.tolist()]
    quota = np.array(
        [
            quota_for(opts.quotas, p, r, f)
            for p, r, f in zip(providers[at].tolist(), regions.tolist(), family, strict=True)
        ],
        dtype=np.int64,
    )
    within = fits.instances[fit] <= quota
    if not within.all():
        exclusions += quota_exclusions(
            pd.DataFrame(
                {
                    "provider": providers[at],
                    "region": regions,
                    "instance_type": types,
                    "gpu_model": columns["gpu_model"][at],
                    "instances": fits.instances[fit],
                    "quota_instances": quota,
                }
            ),
            pd.Series(within),
        )
        at, fit, quota = at[within], fit[within], quota[within]
        family = [f for f, keep in zip(family, within.tolist(), strict=True) if keep]
    if not len(at):
        return None, exclusions
    rows = _PricedRows(at, fit, unit_price[at], pct[at], quota, family)
    return _cloud_columns(columns, fits, rows, option, opts), exclusions


class _PricedRows(NamedTuple):
    """The priced (offer, gang size) pairs of one purchase option, within their quotas."""

    offer: np.ndarray  # positions in the offers
    fit: np.ndarray  # positions in the fitting gangs (GangFits)
    unit_price: np.ndarray  # one instance's price after discounts, USD/h
    pct: np.ndarray  # spot interruption rate, %/month (the default where none is published)
    quota: np.ndarray  # quota_for of the offer's family, instances
    family: list[str]  # instance_family of the offer's instance type


def _cheapest_per_type(
    at: np.ndarray, unit_price: np.ndarray, providers: np.ndarray, types: np.ndarray
) -> np.ndarray:
    """Of the offers at positions ``at``, the cheapest (``unit_price``; the first in table order
    among equals) of each provider's instance type, cheapest first: what
    ``sort_values("_unit_price", kind="stable").drop_duplicates(["provider", "instance_type"])``
    keeps, as positions."""
    order = at[np.argsort(unit_price[at], kind="stable")]
    seen: set[tuple[Any, Any]] = set()
    keep: list[int] = []
    for pos, key in zip(
        order.tolist(),
        zip(providers[order].tolist(), types[order].tolist(), strict=True),
        strict=True,
    ):
        if key not in seen:
            seen.add(key)
            keep.append(pos)
    return np.array(keep, dtype=np.intp)


def _interruption_pcts(columns: OfferColumns, opts: CandidateOptions) -> np.ndarray:
    """Each offer's spot interruption rate (%/month), the request's default where none is
    published."""
    rates = columns.numbers("spot_interruption_pct")
    return np.where(np.isnan(rates), float(opts.default_interruption_pct), rates)


def _cloud_columns(
    columns: OfferColumns,
    fits: GangFits,
    rows: _PricedRows,
    option: PurchaseOption,
    opts: CandidateOptions,
) -> dict[str, np.ndarray]:
    """The candidate columns (:data:`CANDIDATE_COLUMNS`, each an array of one value a row, text as
    objects) of priced cloud ``rows`` (offer x gang size, within quota); spot gangs run slower by
    the restarts the spot model expects."""
    at, fit = rows.offer, rows.fit
    ests = [fits.estimates[j] for j in fit.tolist()]
    needs = [fits.needs[j] for j in fit.tolist()]
    # a host too small to decode the images the GPUs train on stretches the training steps
    loader = np.array(
        [
            loader_slowdown(need, float(v) if v == v else math.inf)  # NaN: not stated
            for need, v in zip(needs, columns.numbers("vcpus")[at].tolist(), strict=True)
        ]
    )
    steps = np.array([need.step_hours for need in needs], dtype=float)
    wall = np.array([e.wall_hours for e in ests], dtype=float) + steps * (loader - 1.0)
    job = np.maximum(wall, MIN_BILLED_HOURS)
    ckpt = np.array([e.checkpoint_gib for e in ests], dtype=float)
    n = fits.instances[fit]
    is_spot = option is PurchaseOption.SPOT
    if is_spot:
        slowdown = np.array(
            [
                SpotModel(float(p), int(k), checkpoint_hours(float(c)), opts.restart_hours).slowdown
                for p, k, c in zip(rows.pct.tolist(), n, ckpt, strict=True)
            ]
        )
    else:
        slowdown = np.ones(len(at))
    gpi = columns["gpu_count"].astype(int)[at]
    providers, regions = columns["provider"][at], columns["region"][at]
    size = len(at)
    return {
        "kind": np.full(size, "cloud", dtype=object),
        "provider": providers,
        "region": regions,
        "instance_type": columns["instance_type"][at],
        "gpu_model": columns["gpu_model"][at],
        "gpus_per_instance": gpi,
        "instances": n,
        "gpus": n * gpi,
        "purchase_option": np.full(size, option.value, dtype=object),
        "price_usd_per_hour": n * rows.unit_price,
        "job_hours": job * slowdown,
        "base_job_hours": job,
        "wall_factor": np.ones(size),
        "capacity_hours": np.full(size, math.inf),
        "quota_group": np.array(
            [
                f"{p}:{r}:{f}"
                for p, r, f in zip(providers.tolist(), regions.tolist(), rows.family, strict=True)
            ],
            dtype=object,
        ),
        "quota_instances": rows.quota,
        "max_gangs": np.maximum(rows.quota // n, 1),
        "memory_per_gpu_gib": np.array([e.memory_per_gpu_gib for e in ests], dtype=float),
        "gpu_memory_gib": columns.numbers("gpu_memory_gib")[at],
        "strategy": np.array(
            [
                _strategy_text(e) + (f", loader-bound x{f:.1f}" if f > 1.0 + 1e-9 else "")
                for e, f in zip(ests, loader, strict=True)
            ],
            dtype=object,
        ),
        "interconnect": columns["interconnect"][at],
        "fabric": columns["fabric"][at],
        "spot_slowdown": slowdown,
        "interruption_pct": rows.pct if is_spot else np.zeros(size),
        "interruption_published": (
            ~np.isnan(columns.numbers("spot_interruption_pct")[at])
            if is_spot
            else np.ones(size, dtype=bool)
        ),
        "checkpoint_gib": ckpt,
        "efficiency": np.array([e.efficiency for e in ests], dtype=float),
        "source": columns["source"][at],
        "as_of": columns["as_of"][at],
    }
