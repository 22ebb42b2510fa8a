"""The inference estimate: replicas of a transformer LLM and the output rate they sustain (pure).

Serving (``tokens_per_s`` for ``hours``): ``wall_hours`` is the serving window; the estimate fits
only if the GPUs sustain the rate, otherwise ``fits`` is False and a suggestion says how many GPUs
would.  A batch inference job (``tokens``) takes as long as generating them takes.  Decode is
memory-bandwidth bound (weights + KV cache read per step), prefill compute bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.gpu_specs import GpuSpec
from planner.schema import Interconnect
from planner.workload import compute
from planner.workload import efficiency as eff
from planner.workload import memory as mem
from planner.workload.estimate_types import Estimate, Topology, make_estimate, topology_links
from planner.workload.parallel import Links
from planner.workload.spec import InferenceSection, WorkloadSpec
from planner.workload.strategy import Strategy

# Inference: vLLM's default max_num_seqs is 256 concurrent sequences.
MAX_INFERENCE_BATCH = 256
# Tensor-parallel sizes tried for one replica.
_REPLICA_TENSOR_SIZES = (1, 2, 4, 8)


@dataclass(frozen=True)
class _Replica:
    tp: int
    batch: int
    tokens_per_s: float
    memory_bytes: float
    breakdown: dict[str, float]


def _section(spec: WorkloadSpec) -> InferenceSection:
    inf = spec.inference
    assert inf is not None  # the schema requires it for kind: inference
    return inf


def _inference_replica(spec: WorkloadSpec, gpu: GpuSpec, tp: int, links: Links) -> _Replica | None:
    """One replica on ``tp`` GPUs: the largest batch its KV cache holds and its output rate, or
    None when the weights and one sequence's KV cache do not fit."""
    m = spec.model
    inf = _section(spec)
    params = float(m.params or 0.0)
    L, h, a = int(m.layers or 1), int(m.hidden or 1), int(m.heads or 1)
    wbytes = params * mem.BYTES_PER_VALUE[inf.precision.value] / tp
    kv_bytes = 2.0 if inf.precision.value in ("fp32", "fp16", "bf16", "int8", "int4") else 1.0
    kv_tok = mem.kv_cache_bytes_per_token(L, h, a, m.kv_heads, kv_bytes) / tp
    ctx_max = inf.prompt_tokens + inf.output_tokens
    budget = gpu.memory_gib * mem.GIB
    room = (budget - mem.FRAMEWORK_FIXED_GIB * mem.GIB) / (1.0 + mem.FRAGMENTATION) - wbytes
    # prefill working set: one prompt's activations (~20·p·h bytes, no stored backward state)
    prefill_act = 20.0 * inf.prompt_tokens * h / tp
    room -= prefill_act
    if room <= kv_tok * ctx_max:
        return None
    batch = int(min(inf.max_batch or MAX_INFERENCE_BATCH, room // (kv_tok * ctx_max)))
    peak = gpu.peak_flops
    g = eff.gemm_fraction(gpu)
    bw = gpu.memory_bandwidth_gb_per_s * 1e9 * eff.MEMORY_BW_FRACTION
    ctx_avg = inf.prompt_tokens + inf.output_tokens / 2.0
    read = wbytes + batch * kv_tok * ctx_avg
    flops = batch * compute.decode_flops_per_token(params, L, h, ctx_avg) / tp
    t_step = max(read / bw, flops / (peak * g))
    if tp > 1:
        per_ar = 2.0 * (tp - 1) / tp * batch * h * 2.0
        t_step += (
            2 * L * (per_ar / links.intra_bytes_per_s + eff.COLLECTIVE_LATENCY_S[links.intra_kind])
        )
    t_prefill = (
        inf.prompt_tokens
        * compute.prefill_flops_per_token(params, L, h, inf.prompt_tokens)
        / tp
        / (peak * g)
    )
    per_token_s = t_step / batch + t_prefill / inf.output_tokens
    kv = batch * kv_tok * ctx_max
    other = wbytes + kv + prefill_act
    breakdown = {
        "weights": wbytes / mem.GIB,
        "kv_cache": kv / mem.GIB,
        "activations": prefill_act / mem.GIB,
        "framework": (mem.FRAMEWORK_FIXED_GIB * mem.GIB + mem.FRAGMENTATION * other) / mem.GIB,
    }
    total = other + mem.FRAMEWORK_FIXED_GIB * mem.GIB + mem.FRAGMENTATION * other
    return _Replica(tp, batch, 1.0 / per_token_s, total, breakdown)


def _best_replica(
    spec: WorkloadSpec, gpu: GpuSpec, count: int, topo: Topology
) -> tuple[float, _Replica] | None:
    """(output tokens/s of all ``count // tp`` replicas, one replica) for the tensor-parallel size
    that serves most (the smallest within 1%), or None when no size fits a replica."""
    gpn = max(1, min(topo.gpus_per_node, count))
    heads = int(spec.model.heads or 1)
    best: tuple[float, _Replica] | None = None
    for tp in _REPLICA_TENSOR_SIZES:
        if tp > gpn or count % tp or heads % tp:
            continue
        r = _inference_replica(spec, gpu, tp, topology_links(gpu, topo, count))
        if r is None:
            continue
        capacity = (count // tp) * r.tokens_per_s
        if best is None or capacity > best[0] * 1.01:
            best = (capacity, r)
    return best


def _flops_per_request(spec: WorkloadSpec) -> float:
    """Model FLOPs of one request: the prompt's prefill and the output tokens' decode."""
    inf = _section(spec)
    m = spec.model
    params = float(m.params or 0.0)
    L, h = int(m.layers or 1), int(m.hidden or 1)
    return inf.prompt_tokens * compute.prefill_flops_per_token(
        params, L, h, inf.prompt_tokens
    ) + inf.output_tokens * compute.decode_flops_per_token(
        params, L, h, inf.prompt_tokens + inf.output_tokens / 2.0
    )


def _weights_gib(spec: WorkloadSpec) -> float:
    """The model's weights at the serving precision, GiB (the "checkpoint" a replica loads)."""
    precision = _section(spec).precision.value
    return float(spec.model.params or 0.0) * mem.BYTES_PER_VALUE[precision] / mem.GIB


def _assumptions(inf: InferenceSection) -> tuple[str, ...]:
    return (
        f"{inf.precision.value} weights, 16-bit KV cache, {inf.prompt_tokens:g} prompt + {inf.output_tokens:g} output tokens per request",
        "decode bound by reading weights + KV cache at 80% of memory bandwidth; prefill compute bound",
        f"continuous batching up to {inf.max_batch or MAX_INFERENCE_BATCH} sequences (vLLM default 256)",
    )


def _roofline_source(gpu: GpuSpec) -> str:
    return f"roofline: max(bytes / {gpu.memory_bandwidth_gb_per_s:g} GB/s, FLOPs / ({gpu.tensor_tflops_dense:g} TFLOPS x {eff.gemm_fraction(gpu):.2f}))"


def _no_replica(spec: WorkloadSpec, gpu: GpuSpec, count: int, topo: Topology) -> Estimate:
    """The estimate when not even one replica fits: the weights' memory and what would help."""
    gpn = max(1, min(topo.gpus_per_node, count))
    weights_gib = _weights_gib(spec)
    s = Strategy(
        data_parallel=0,
        tensor_parallel=min(8, gpn),
        method="inference",
        gpus_per_piece=count,
        reason="weights and one sequence of KV cache do not fit",
    )
    need = weights_gib * 1.1 + mem.FRAMEWORK_FIXED_GIB
    return make_estimate(
        spec,
        gpu,
        count,
        fits=False,
        memory_bytes=need * mem.GIB,
        breakdown={"weights": weights_gib},
        strategy=s,
        total_flops=0.0,
        efficiency=0.0,
        source=_roofline_source(gpu),
        wall_hours=math.inf,
        interconnect=Interconnect.NVSWITCH if gpn > 2 else Interconnect.NVLINK,
        fabric=None,
        checkpoint_gib=weights_gib,
        suggestions=[
            f"weights alone are {weights_gib:.1f} GiB: use more GPUs per replica (tensor parallel, up to {gpn} here), a bigger GPU, or int8/int4 weights"
        ],
        assumptions=_assumptions(_section(spec)),
    )


@dataclass(frozen=True)
class _Load:
    """How the replicas carry the workload: whether they keep up, for how long, at what MFU."""

    fits: bool
    wall_hours: float
    total_flops: float
    efficiency: float
    suggestions: tuple[str, ...]


def _load(spec: WorkloadSpec, gpu: GpuSpec, count: int, capacity: float, r: _Replica) -> _Load:
    """Serving: the window's hours, fitting only if ``capacity`` sustains the rate (MFU then at the
    rate served); a batch job: as long as generating its tokens takes."""
    inf = _section(spec)
    per_req_flops = _flops_per_request(spec)
    suggestions: list[str] = []
    fits = True
    if inf.serving:
        need_rate = inf.output_tokens_per_s
        wall_h = float(inf.hours or 0.0)
        total_out = need_rate * wall_h * 3600.0
        if capacity < need_rate:
            fits = False
            need_gpus = math.ceil(need_rate / r.tokens_per_s) * r.tp
            suggestions.append(
                f"sustains {capacity:,.0f} of the {need_rate:,.0f} output tokens/s needed: use {need_gpus} x {gpu.name}"
            )
    else:
        total_out = inf.total_output_tokens * spec.pieces
        wall_h = total_out / capacity / 3600.0
    total_flops = per_req_flops * total_out / inf.output_tokens
    efficiency = total_flops / (count * gpu.peak_flops * wall_h * 3600.0) if wall_h > 0 else 0.0
    if inf.serving and not fits:
        efficiency = capacity * per_req_flops / inf.output_tokens / (count * gpu.peak_flops)
    return _Load(fits, wall_h, total_flops, efficiency, tuple(suggestions))


def estimate_inference(spec: WorkloadSpec, gpu: GpuSpec, count: int, topo: Topology) -> Estimate:
    """The inference estimate on ``count`` x ``gpu``: as many replicas of the best tensor-parallel
    size as fit, serving the rate or generating the tokens."""
    best = _best_replica(spec, gpu, count, topo)
    if best is None:
        return _no_replica(spec, gpu, count, topo)
    capacity, r = best
    replicas = count // r.tp
    s = Strategy(
        data_parallel=replicas,
        tensor_parallel=r.tp,
        method="inference",
        micro_batch_size=r.batch,
        gpus_per_piece=r.tp,
        concurrent_pieces=replicas,
        reason=f"{replicas} replica(s) of {r.tp} GPU(s), {r.batch} concurrent sequences each, {r.tokens_per_s:,.0f} output tok/s per replica",
    )
    load = _load(spec, gpu, count, capacity, r)
    return make_estimate(
        spec,
        gpu,
        count,
        fits=load.fits,
        memory_bytes=r.memory_bytes,
        breakdown=r.breakdown,
        strategy=s,
        total_flops=load.total_flops,
        efficiency=load.efficiency,
        source=_roofline_source(gpu),
        wall_hours=load.wall_hours,
        # one GPU per replica: nothing between GPUs; tensor parallel: NVLink, NVSwitch beyond 2
        interconnect=Interconnect.NONE
        if r.tp == 1
        else (Interconnect.NVSWITCH if r.tp > 2 else Interconnect.NVLINK),
        fabric=None,
        checkpoint_gib=_weights_gib(spec),
        suggestions=load.suggestions,
        assumptions=_assumptions(_section(spec)),
    )
