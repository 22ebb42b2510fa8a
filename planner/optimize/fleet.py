"""Serving fleets: the cheapest replicas x instances that carry a load within latency targets (pure).

A service is priced per month, not per job.  For each offer (instance type, region, price) and each
tensor-parallel size its GPUs allow, the serving model (:mod:`planner.workload.serving`) gives the
highest load one replica carries *within the targets* -- the largest ``requests_per_s`` whose p95
TTFT, TPOT and end-to-end latency stay under them, found by bisection, once per instance shape
(GPU, GPUs per instance, link): it does not depend on the region or the price.  The fleet for a
load is then ``ceil(load / that) replicas``, packed ``GPUs per instance / TP`` to an instance.

The load may follow a daily curve: a base load all day and a peak for some hours.  The base fleet
runs all month and may be bought on a commitment (reserved instances or savings plans, paid for
every hour of the term); the extra instances for the peak run only in peak hours, on demand.
Spot capacity is never counted on: a service must keep its targets when spot capacity is taken
back, so spot replicas could only ever be headroom the plan does not need.

**Images** (vision and diffusion workloads, ``images_per_s``): a replica is the model on one GPU
(images are independent, so an instance of n GPUs holds n replicas and there is no tensor
parallelism); a request is one image, and the latency target is the p95 end-to-end latency *per
image* (``--p95-e2e``: queueing for a batch, the batch's engine call -- for diffusion all its
denoising steps and the VAE decode).  TTFT and TPOT do not apply.  The highest load a replica
carries within the target comes from :func:`planner.workload.vision_serving.serve` (dynamic
batching up to the workload's ``batch``, M/D/1 queue) by the same bisection, and the fleet is
priced per month and per 1,000 images.

Finding the cheapest fleet is exact by enumeration: every (offer, TP size, purchase option) gives
one fleet whose cost is a closed form, so the cheapest plans are a sort, not a MILP.  Mixing
instance types in one fleet is left out: replicas of one shape behind one load balancer is how
services are run, and a mix saves at most the rounding of one instance.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pandas as pd

from planner.catalog.query import region_rank
from planner.errors import ConfigError, InfeasibleError
from planner.gpu_specs import GpuCatalog, GpuSpec
from planner.schema import COMMITMENT_OPTIONS, PRICE_COLUMNS, Fabric, Interconnect, PurchaseOption
from planner.units import HOURS_PER_MONTH
from planner.workload.estimate_types import Topology, topology_links
from planner.workload.inference import (
    make_replica,
    service_lengths,
    stack_refusal,
    weight_format_refusal,
)
from planner.workload.serving import Lengths, Replica, ServingPoint, serve
from planner.workload.spec import ServingSlo, WorkloadSpec
from planner.workload.vision_inference import engine_refusal
from planner.workload.vision_inference import replica_of as image_replica_of
from planner.workload.vision_serving import VisionPoint, VisionReplica, default_max_batch
from planner.workload.vision_serving import serve as serve_images

DAYS_PER_MONTH = HOURS_PER_MONTH / 24.0
_TENSOR_SIZES = (1, 2, 4, 8)
_BISECTIONS = 24  # the load within 6e-8 of the capacity
# A replica is loaded to at most this share of its capacity, with latency targets or without
# (they can only lower it): Poisson bursts and uneven request lengths need headroom, and at 100%
# the queue has no bound.  (U: the
# 70-85% utilisation targets autoscalers are commonly set to.)
UNTARGETED_UTILISATION = 0.85


@dataclass(frozen=True)
class LoadCurve:
    """Requests per second: ``base`` all day, ``peak`` for ``peak_hours`` of each day."""

    base_requests_per_s: float
    peak_requests_per_s: float | None = None
    peak_hours_per_day: float = 0.0

    @property
    def peak(self) -> float:
        return max(self.base_requests_per_s, self.peak_requests_per_s or 0.0)

    @property
    def has_peak(self) -> bool:
        return self.peak > self.base_requests_per_s and self.peak_hours_per_day > 0

    def monthly_requests(self) -> float:
        hours_peak = self.peak_hours_per_day if self.has_peak else 0.0
        per_day = (self.base_requests_per_s * (24.0 - hours_peak) + self.peak * hours_peak) * 3600.0
        return per_day * DAYS_PER_MONTH


class LatencyPoint(Protocol):
    """What fleet sizing reads of a serving point (LLM :class:`ServingPoint` or an image one)."""

    @property
    def ttft_ms_p95(self) -> float: ...
    @property
    def tpot_ms_p95(self) -> float: ...
    @property
    def e2e_ms_p95(self) -> float: ...
    @property
    def overloaded(self) -> bool: ...


@dataclass(frozen=True)
class ImagePoint:
    """An image replica at one load, read as a serving point: a request is an image, so the
    end-to-end latency is the image's (queue + its engine call); TTFT and TPOT do not apply (0)."""

    point: VisionPoint

    @property
    def ttft_ms_p95(self) -> float:
        return 0.0

    @property
    def tpot_ms_p95(self) -> float:
        return 0.0

    @property
    def e2e_ms_p95(self) -> float:
        return self.point.latency_ms_p95

    @property
    def overloaded(self) -> bool:
        return self.point.overloaded

    @property
    def requests_per_s(self) -> float:
        return self.point.images_per_s


@dataclass(frozen=True)
class ShapeLimit:
    """What one replica of a shape carries within the targets, and its latency there."""

    tp: int
    replicas_per_instance: int
    requests_per_s: float  # 0: not even a lone request meets the targets
    at_limit: LatencyPoint | None  # the serving point at that load (None when 0)
    alone: LatencyPoint  # a lone request: the fastest this shape answers


# A latency target below this many milliseconds that no fleet reaches, and that the same number of
# seconds would let one reach, is taken for seconds written without a unit (the hint says so).
SECONDS_SLIP_BELOW_MS = 10.0


def serves_images(spec: WorkloadSpec) -> bool:
    """A vision or diffusion workload: its load is images per second, one replica per GPU."""
    return not spec.model.is_transformer


@dataclass(frozen=True)
class FleetPlan:
    """One fleet: replicas of one instance type in one region, priced per month."""

    provider: str
    region: str
    instance_type: str
    gpu_model: str
    gpus_per_instance: int
    tensor_parallel: int
    replicas_base: int
    replicas_peak: int
    instances_base: int
    instances_peak: int  # extra instances in peak hours (0 without a peak)
    purchase_base: str  # on-demand or a commitment for the base fleet
    price_base_usd_per_hour: float  # per instance
    price_on_demand_usd_per_hour: float  # per instance (the peak's price)
    cost_usd_per_month: float
    cost_usd_per_million_tokens: float
    ttft_ms_p95: float  # at the peak load, per replica
    tpot_ms_p95: float
    e2e_ms_p95: float
    capacity_requests_per_s: float  # what the peak fleet carries within the targets
    price_source: str = ""
    price_as_of: str = ""
    label: str = ""
    unit: str = "tokens"  # what the service produces: tokens (LLM) or images
    cost_usd_per_thousand_images: float | None = None  # unit images only

    def to_dict(self) -> dict[str, object]:
        """The plan's JSON fields: an LLM plan's as they always were; an image plan carries
        $/1,000 images and its p95 latency per image instead of tokens, TTFT and TPOT."""
        out: dict[str, object] = {k: getattr(self, k) for k in self.__dataclass_fields__}
        if self.unit == "tokens":
            del out["unit"], out["cost_usd_per_thousand_images"]
        else:
            for key in ("cost_usd_per_million_tokens", "ttft_ms_p95", "tpot_ms_p95"):
                del out[key]
            out["capacity_images_per_s"] = out.pop("capacity_requests_per_s")
        return out


@dataclass(frozen=True)
class FleetResult:
    plans: tuple[FleetPlan, ...]
    excluded: tuple[str, ...] = field(default=())


def _meets(point: LatencyPoint, slo: ServingSlo) -> bool:
    if point.overloaded:
        return False
    checks = (
        (slo.ttft_ms_p95, point.ttft_ms_p95),
        (slo.tpot_ms_p95, point.tpot_ms_p95),
        (slo.e2e_ms_p95, point.e2e_ms_p95),
    )
    return all(target is None or value <= target for target, value in checks)


def replica_limit(
    r: Replica, prompt: Lengths, output: Lengths, slo: ServingSlo
) -> tuple[float, ServingPoint | None, ServingPoint]:
    """The highest load (requests/s) replica ``r`` carries within ``slo``, its serving point there,
    and the point of a lone request (bisection: latency rises with load)."""
    alone = serve(r, prompt, output, 1e-6)
    if not _meets(alone, slo):
        return 0.0, None, alone
    # a replica is loaded to UNTARGETED_UTILISATION of its capacity at most, latency targets or
    # none: a target only lowers that load (was: any target, however loose, let the bisection run
    # to the capacity itself, and a quote with a 1 s TPOT target cost half one without)
    most = serve(r, prompt, output).capacity_requests_per_s * UNTARGETED_UTILISATION
    top = serve(r, prompt, output, most)
    if _meets(top, slo):
        return most, top, alone
    lo, hi = 0.0, most
    best = alone
    for _ in range(_BISECTIONS):
        mid = (lo + hi) / 2.0
        point = serve(r, prompt, output, mid)
        if _meets(point, slo):
            lo, best = mid, point
        else:
            hi = mid
    return lo, best, alone


def image_replica_limit(
    r: VisionReplica, max_batch: int, slo: ServingSlo
) -> tuple[float, ImagePoint | None, ImagePoint]:
    """The highest load (images/s) image replica ``r`` carries with its p95 latency per image
    within ``slo.e2e_ms_p95``, its point there, and a lone image's point (bisection)."""
    alone = ImagePoint(serve_images(r, max_batch, 1e-6))
    if not _meets(alone, slo):
        return 0.0, None, alone
    most = r.images_per_second(max_batch) * UNTARGETED_UTILISATION  # as replica_limit's
    top = ImagePoint(serve_images(r, max_batch, most))
    if _meets(top, slo):
        return most, top, alone
    lo, hi, best = 0.0, most, alone
    for _ in range(_BISECTIONS):
        mid = (lo + hi) / 2.0
        point = ImagePoint(serve_images(r, max_batch, mid))
        if _meets(point, slo):
            lo, best = mid, point
        else:
            hi = mid
    return lo, best, alone


def _image_shape_limits(
    spec: WorkloadSpec, gpu: GpuSpec, gpus: int, slo: ServingSlo
) -> list[ShapeLimit]:
    """One replica per GPU of an instance of ``gpus`` x ``gpu`` (none when it does not fit)."""
    r = image_replica_of(spec, gpu)
    inf = spec.inference
    assert inf is not None
    max_batch = inf.batch or default_max_batch(r.work.kind, True)
    if sum(r.memory_gib(max_batch).values()) > gpu.usable_memory_gib:
        return []
    limit, at, alone = image_replica_limit(r, max_batch, slo)
    return [ShapeLimit(1, gpus, limit, at, alone)]


def _shape_limits(
    spec: WorkloadSpec, gpu: GpuSpec, gpus: int, link: Interconnect, slo: ServingSlo
) -> list[ShapeLimit]:
    """Each tensor-parallel size that fits a replica in one instance of ``gpus`` x ``gpu``."""
    if serves_images(spec):
        return _image_shape_limits(spec, gpu, gpus, slo)
    prompt, output = service_lengths(spec)
    heads = int(spec.model.heads or 1)
    out = []
    for tp in _TENSOR_SIZES:
        if tp > gpus or gpus % tp or heads % tp:
            continue
        topo = Topology(gpus_per_node=gpus, interconnect=link, fabric=Fabric.ETHERNET)
        r = make_replica(spec, gpu, tp, topology_links(gpu, topo, tp))
        if not r.fits(r.request_kv_tokens(prompt.p95, output.p95)):
            continue
        limit, at, alone = replica_limit(r, prompt, output, slo)
        out.append(ShapeLimit(tp, gpus // tp, limit, at, alone))
    return out


def size_fleets(
    offers: pd.DataFrame,
    spec: WorkloadSpec,
    load: LoadCurve,
    slo: ServingSlo,
    catalog: GpuCatalog,
    *,
    commitments: bool = False,
    discounts: Mapping[str, float] | None = None,
) -> FleetResult:
    """Every fleet the offers allow, cheapest first per month (one per instance type and region).

    An offer row may carry ``max_instances`` (owned machines: how many there are); a fleet that
    needs more is left out and said so in ``excluded``.

    An offer whose GPU the serving stack does not run on (TensorRT-LLM or TensorRT on AMD, DLAs
    asked of a GPU without them) is left out and said so in ``excluded``; when every offer is,
    the stack's ConfigError is raised with its fix.

    Raises :class:`InfeasibleError` when no offer can meet ``slo`` at all, naming the best
    latencies any of them reaches.
    """
    discounts = discounts or {}
    images = serves_images(spec)
    # what a month's bill is divided by: output tokens, or images (a request is an image)
    per_request = 1.0 if images else service_lengths(spec)[1].mean
    units_per_month = load.monthly_requests() * per_request
    limits: dict[tuple[str, int, str], list[ShapeLimit]] = {}
    plans: list[FleetPlan] = []
    excluded: list[str] = []
    short: list[str] = []  # owned machines too few for the fleet they would need
    options = [PurchaseOption.ON_DEMAND, *(COMMITMENT_OPTIONS if commitments else ())]
    records: list[dict[str, Any]] = offers.to_dict("records")  # type: ignore[assignment]
    if not images:
        unserved = weight_format_refusal(spec)  # on any GPU: refused before the offers
        if unserved is not None:
            raise unserved
    # GPUs the serving stack does not run on (TensorRT-LLM on AMD): left out, said once each
    refused: dict[str, ConfigError | None] = {}
    for row in records:
        key = (str(row["gpu_model"]), int(row["gpu_count"]), str(row["interconnect"]))
        if key[0] not in refused:
            gpu = catalog.resolve(key[0])
            why = refused[key[0]] = (engine_refusal if images else stack_refusal)(spec, gpu)
            if why is not None:
                excluded.append(f"{key[0]}: {why.detail}")
        if refused[key[0]] is not None:
            continue
        if key not in limits:
            limits[key] = _shape_limits(
                spec, catalog.resolve(key[0]), key[1], Interconnect(key[2]), slo
            )
        for shape in limits[key]:
            if shape.requests_per_s <= 0:
                continue
            plan = _cheapest_fleet(
                row,
                shape,
                load,
                options,
                discounts,
                units_per_month,
                "images" if images else "tokens",
            )
            if plan is None:
                continue
            limit = row.get("max_instances")
            if limit is not None and not pd.isna(limit):
                needed = plan.instances_base + plan.instances_peak
                if needed > int(limit):
                    short.append(
                        f"{plan.instance_type}: needs {needed} machines at TP{shape.tp}, "
                        f"you have {int(limit)}"
                    )
                    continue
            plans.append(plan)
    if not limits:  # every offer's GPU refused by the stack: say why, with its fix
        first = next((e for e in refused.values() if e is not None), None)
        if first is not None:
            # was the first refusal alone ("... not the T4"), as if the T4 had been asked for
            kinds = sorted(k for k, e in refused.items() if e is not None)
            shown = ", ".join(kinds[:6]) + (" ..." if len(kinds) > 6 else "")
            raise ConfigError(
                f"no offered GPU runs the serving stack ({len(kinds)} "
                f"kind{'s' if len(kinds) != 1 else ''} refused: {shown}); "
                f"e.g. {first.detail}",
                key_path=first.key_path,
                hint=first.hint,
            )
    excluded += short
    if not plans and short:
        raise InfeasibleError(
            f"no fleet carries the load on the machines there are: {'; '.join(short)}",
            hint="add machines (machines: in the hardware file) or allow cloud offers",
        )
    if not plans:
        raise _impossible(limits, slo, records, catalog, images=serves_images(spec))
    # cheapest first; where cost ties (one price in every region), the provider's home region,
    # then the US (as job quotes), then the faster layout
    plans.sort(
        key=lambda p: (
            round(p.cost_usd_per_month, 6),
            region_rank(p.provider, p.region),
            p.e2e_ms_p95,
            p.instance_type,
            p.region,
        )
    )
    seen: set[tuple[str, str]] = set()
    distinct = []
    for p in plans:
        k = (p.provider, p.instance_type)
        if k not in seen:  # the cheapest region and layout of each instance type
            seen.add(k)
            distinct.append(p)
    return FleetResult(tuple(distinct), tuple(excluded))


def _price(
    row: Mapping[str, Any], option: PurchaseOption, discounts: Mapping[str, float]
) -> float | None:
    value = row.get(PRICE_COLUMNS[option])
    if value is None or pd.isna(value) or float(value) <= 0:
        return None
    return float(value) * (1.0 - float(discounts.get(str(row["provider"]), 0.0)))


def _cheapest_fleet(
    row: Mapping[str, Any],
    shape: ShapeLimit,
    load: LoadCurve,
    options: Sequence[PurchaseOption],
    discounts: Mapping[str, float],
    units_per_month: float,
    unit: str = "tokens",
) -> FleetPlan | None:
    """The cheapest way to buy the fleet of ``shape`` on the offer ``row`` for ``load``."""
    on_demand = _price(row, PurchaseOption.ON_DEMAND, discounts)
    if on_demand is None:
        return None
    per = shape.replicas_per_instance
    # a load of any size is served by a replica at least (was 0 replicas on 1 instance for
    # --rps 1e-9, whose share of one replica fell under the rounding's tolerance)
    replicas_base = max(1, math.ceil(load.base_requests_per_s / shape.requests_per_s - 1e-9))
    replicas_peak = max(replicas_base, math.ceil(load.peak / shape.requests_per_s - 1e-9))
    base = max(math.ceil(replicas_base / per), 1)
    peak_total = max(math.ceil(replicas_peak / per), base)
    extra = peak_total - base if load.has_peak else 0
    if not load.has_peak:
        base = peak_total
    peak_hours = load.peak_hours_per_day * DAYS_PER_MONTH if load.has_peak else 0.0
    best: FleetPlan | None = None
    for option in options:
        price = _price(row, option, discounts)
        if price is None:
            continue
        cost = base * price * HOURS_PER_MONTH + extra * on_demand * peak_hours
        if best is not None and cost >= best.cost_usd_per_month:
            continue
        at = shape.at_limit or shape.alone
        best = FleetPlan(
            provider=str(row["provider"]),
            region=str(row["region"]),
            instance_type=str(row["instance_type"]),
            gpu_model=str(row["gpu_model"]),
            gpus_per_instance=int(row["gpu_count"]),
            tensor_parallel=shape.tp,
            replicas_base=replicas_base,
            replicas_peak=replicas_peak,
            instances_base=base,
            instances_peak=extra,
            # owned machines say how they are costed (owned-amortised, owned-sunk)
            purchase_base=str(row.get("purchase_label") or option.value),
            price_base_usd_per_hour=price,
            price_on_demand_usd_per_hour=on_demand,
            cost_usd_per_month=cost,
            cost_usd_per_million_tokens=cost / units_per_month * 1e6
            if unit == "tokens" and units_per_month
            else math.inf,
            ttft_ms_p95=at.ttft_ms_p95,
            tpot_ms_p95=at.tpot_ms_p95,
            e2e_ms_p95=at.e2e_ms_p95,
            capacity_requests_per_s=(base + extra) * per * shape.requests_per_s,
            price_source=str(row.get("source", "")),
            price_as_of=str(row.get("as_of", "")),
            unit=unit,
            cost_usd_per_thousand_images=cost / units_per_month * 1e3
            if unit == "images" and units_per_month
            else None,
        )
    return best


def _impossible(
    limits: Mapping[tuple[str, int, str], list[ShapeLimit]],
    slo: ServingSlo,
    records: Sequence[Mapping[str, Any]],
    catalog: GpuCatalog,
    *,
    images: bool = False,
) -> InfeasibleError:
    """No fleet meets the targets: name the best latency any shape reaches for a lone request;
    where no offer holds a replica at all and every offer is an owned machine, name the machines
    (was: "allow bigger GPUs (--gpu)", which --owned-only rules out)."""
    shapes = [(key, s) for key, ss in limits.items() for s in ss]
    if not shapes:
        if records and all(str(r.get("provider")) == "owned" for r in records):
            owned = sorted(
                {
                    (str(r["instance_type"]), int(r["gpu_count"]), str(r["gpu_model"]))
                    for r in records
                }
            )
            named = ", ".join(
                f"{name} ({n} x {gpu}, {catalog.resolve(gpu).memory_gib:g} GB each)"
                for name, n, gpu in owned
            )
            return InfeasibleError(
                f"no owned machine holds one replica of the model: {named}",
                hint="serve int8/int4 weights (inference.precision) or an fp8 KV cache "
                "(inference.kv_precision), add a bigger machine (--hardware), or allow cloud "
                "offers (drop --owned-only)",
            )
        if images:  # an image engine's buffers grow with its batch: was the LLM's fixes alone
            return InfeasibleError(
                "no offer fits one replica of the model at its largest batch",
                hint="serve smaller batches (inference.batch) or int8 (inference.precision), or "
                "allow bigger GPUs (gpus, --gpu)",
            )
        return InfeasibleError(
            "no offer fits one replica of the model",
            hint="allow bigger GPUs or more GPUs per instance (gpus, --gpu), or serve int8/int4 "
            "weights",
        )
    parts, seconds = [], []
    for name, attr, option in (
        ("TTFT", "ttft_ms_p95", "--p95-ttft"),
        ("TPOT", "tpot_ms_p95", "--p95-tpot"),
        ("end-to-end", "e2e_ms_p95", "--p95-e2e"),
    ):
        target = getattr(slo, attr)
        if target is None:
            continue
        (gpu, n, _link), s = min(shapes, key=lambda ks: getattr(ks[1].alone, attr))
        best = getattr(s.alone, attr)
        if best > target:
            parts.append(
                f"p95 {name} {target:g} ms: the fastest reachable is {best:,.1f} ms "
                f"({n} x {gpu}, tensor parallel {s.tp}, one request at a time)"
            )
            if target < SECONDS_SLIP_BELOW_MS and target * 1000.0 >= best:
                # --p95-ttft 0.5 meant half a second: the bare number reads as milliseconds
                # (in Python the keyword in milliseconds, on the command line the option in
                # seconds: was "write 0.5s" to a library caller too)
                seconds.append(f"{attr}={target * 1000:g} ({option} {target:g}s)")
    detail = "; ".join(parts) or "the targets together"
    hint = "loosen the targets, allow faster GPUs (gpus, --gpu), or serve fp8/int4 weights"
    if seconds:
        hint = (
            f"a target without a unit is milliseconds: if you meant seconds, write "
            f"{' and '.join(seconds)}; otherwise " + hint
        )
    return InfeasibleError(f"no fleet meets the latency targets: {detail}", hint=hint)
