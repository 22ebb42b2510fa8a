"""The inference estimate: replicas of a transformer LLM, their latency and throughput (pure).

The physics lives in :mod:`planner.workload.serving` (step times, KV cache, batching, queueing);
this module picks the tensor-parallel size for ``count`` GPUs and turns the result into an
:class:`Estimate` with its :class:`ServingMetrics`.

A service (``requests_per_s`` or ``tokens_per_s`` for ``hours``) fits when its replicas carry the
load and meet the latency targets (``inference.slo``); a batch job (``tokens`` or ``requests``)
takes as long as generating them at the replicas' capacity takes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from planner.errors import ConfigError
from planner.gpu_specs import GpuSpec
from planner.schema import Interconnect
from planner.workload import compute
from planner.workload import efficiency as eff
from planner.workload import memory as mem
from planner.workload.estimate_types import (
    Estimate,
    Topology,
    make_estimate,
    topology_links,
)
from planner.workload.parallel import Links
from planner.workload.serving import (
    FP4_FORMATS,
    RUNTIME_GIB,
    WEIGHT_BYTES,
    Lengths,
    ModelShape,
    Replica,
    ServingPoint,
    ServingStack,
    matmul_precision,
    serve,
    serving_stack,
    workspace_bytes,
)
from planner.workload.serving_metrics import Percentiles, ServingMetrics
from planner.workload.spec import InferenceSection, WorkloadSpec
from planner.workload.strategy import Strategy

# Tensor-parallel sizes tried for one replica.
_REPLICA_TENSOR_SIZES = (1, 2, 4, 8)
# Serving weight formats the planner's training precisions read as.
_SERVING_FORMAT = {"tf32": "fp32", "pure-bf16": "bf16"}


def _section(spec: WorkloadSpec) -> InferenceSection:
    inf = spec.inference
    assert inf is not None  # the schema requires it for kind: inference
    return inf


def weight_format(spec: WorkloadSpec) -> str:
    """The weights' serving format (fp16, bf16, fp8, int8, int4, fp4, mxfp4, fp32)."""
    value = _section(spec).precision.value
    return _SERVING_FORMAT.get(value, value)


def _shape(spec: WorkloadSpec) -> ModelShape:
    m = spec.model
    return ModelShape(
        params=float(m.params or 0.0),
        layers=int(m.layers or 1),
        hidden=int(m.hidden or 1),
        heads=int(m.heads or 1),
        kv_heads=m.kv_heads,
        head_dim=m.head_dim,
        active_params=m.active_params,
        experts=m.experts,
        experts_per_token=m.experts_per_token,
        # an untied input embedding (Llama, Mistral): a lookup, not a matmul; tied or unknown: the
        # table is the output head and counts whole
        lookup_params=float(m.vocab * m.hidden)
        if m.tied_embeddings is False and m.vocab and m.hidden
        else 0.0,
        vocab=m.vocab,
        window_tokens=m.sliding_window,
        windowed_layers=m.windowed_layers,
    )


def service_lengths(spec: WorkloadSpec) -> tuple[Lengths, Lengths]:
    """The prompt and output length distributions of an inference workload."""
    inf = _section(spec)
    return (
        Lengths.of(inf.prompt_tokens, inf.prompt_tokens_p95),
        Lengths.of(inf.output_tokens, inf.output_tokens_p95),
    )


def weight_format_refusal(spec: WorkloadSpec) -> ConfigError | None:
    """Why ``spec``'s serving stack cannot serve its weight format (llama.cpp's GGUF has no fp8
    weights), or None where it can (was: llama.cpp quoted with fp8 weights)."""
    stack = serving_stack(_section(spec).framework)
    fmt = weight_format(spec)
    if not stack.weight_formats or fmt in stack.weight_formats:
        return None
    return ConfigError(
        f"{stack.name} serves no {fmt} weights (it serves {', '.join(stack.weight_formats)})",
        key_path="inference.precision",
        hint=f"inference.precision: {'int8' if fmt == 'fp8' else 'int4'} on {stack.name}, or "
        f"a stack that serves {fmt} (vllm)",
    )


def stack_refusal(spec: WorkloadSpec, gpu: GpuSpec) -> ConfigError | None:
    """Why ``spec``'s serving stack cannot run on ``gpu`` (a CUDA-only stack on another vendor's
    GPU), or None where it can: :func:`make_replica` raises it for a GPU the user named, and the
    fleet sizing leaves such offers out with it."""
    stack = serving_stack(_section(spec).framework)
    if stack.cuda_only and gpu.vendor != "nvidia":
        return ConfigError(
            f"{stack.name} runs on NVIDIA GPUs only, not the {gpu.name}",
            key_path="inference.framework",
            hint="vllm or sglang (their ROCm builds) serve on AMD Instinct GPUs",
        )
    if stack.rocm_only and gpu.vendor != "amd":
        # was: vLLM's ROCm profile taken on an H100, its fp8 matmuls at the 16-bit rate
        return ConfigError(
            f"{stack.name} is a ROCm build's profile, for AMD GPUs, not the {gpu.name}",
            key_path="inference.framework",
            hint="vllm (or sglang, tensorrt-llm) serves on NVIDIA GPUs",
        )
    return None


def _replica_stack(spec: WorkloadSpec) -> ServingStack:
    """``spec``'s serving stack, its sequence limit given way to ``inference.max_batch`` where the
    workload sets one."""
    inf = _section(spec)
    stack = serving_stack(inf.framework)
    return stack if inf.max_batch is None else replace(stack, max_num_seqs=int(inf.max_batch))


def make_replica(spec: WorkloadSpec, gpu: GpuSpec, tp: int, links: Links) -> Replica:
    """One replica of ``spec``'s model on ``tp`` x ``gpu``, with its stack (:func:`_replica_stack`)
    and formats."""
    inf = _section(spec)
    refused = weight_format_refusal(spec) or stack_refusal(spec, gpu)
    if refused is not None:
        raise refused
    return Replica(
        model=_shape(spec),
        gpu=gpu,
        tp=tp,
        links=links,
        stack=_replica_stack(spec),
        precision=weight_format(spec),
        kv_precision=inf.kv_precision,
        beam_width=inf.beam_width,
    )


@dataclass(frozen=True)
class _Choice:
    """One tensor-parallel size for ``count`` GPUs: its replica and how it carries the load."""

    replica: Replica
    replicas: int
    point: ServingPoint
    slo_met: bool | None


def _slo_met(point: ServingPoint, inf: InferenceSection) -> bool | None:
    targets = inf.slo
    checks = [
        (targets.ttft_ms_p95, point.ttft_ms_p95),
        (targets.tpot_ms_p95, point.tpot_ms_p95),
        (targets.e2e_ms_p95, point.e2e_ms_p95),
    ]
    given = [(t, v) for t, v in checks if t is not None]
    if not given:
        return None
    return not point.overloaded and all(v <= t for t, v in given)


def _choices(spec: WorkloadSpec, gpu: GpuSpec, count: int, topo: Topology) -> list[_Choice]:
    """Every tensor-parallel size that fits a replica on ``count`` GPUs, with its serving point
    at the workload's load (split evenly over the replicas) or at capacity (a batch job)."""
    inf = _section(spec)
    prompt, output = service_lengths(spec)
    gpn = max(1, min(topo.gpus_per_node, count))
    heads = int(spec.model.heads or 1)
    load = inf.load_requests_per_s
    out: list[_Choice] = []
    for tp in _REPLICA_TENSOR_SIZES:
        if tp > gpn or count % tp or heads % tp:
            continue
        replica = make_replica(spec, gpu, tp, topology_links(gpu, topo, tp))
        if not replica.fits(replica.request_kv_tokens(prompt.p95, output.p95)):
            continue
        replicas = count // tp
        point = serve(replica, prompt, output, None if load is None else load / replicas)
        out.append(_Choice(replica, replicas, point, _slo_met(point, inf)))
    return out


def _best(choices: list[_Choice], serving: bool) -> _Choice:
    """A service: the size that carries the load and meets the targets with the lowest p95
    end-to-end latency (carrying the load first, then the targets); a batch job, or when none
    carries the load: the most output tokens/s (the smallest size within 1%)."""
    carrying = [c for c in choices if not c.point.overloaded]
    if serving and carrying:
        met = [c for c in carrying if c.slo_met is not False]
        pool = met or carrying
        return min(pool, key=lambda c: (c.point.e2e_ms_p95, c.replica.tp))
    best = choices[0]
    for c in choices[1:]:
        if (
            c.point.capacity_tokens_per_s * c.replicas
            > best.point.capacity_tokens_per_s * best.replicas * 1.01
        ):
            best = c
    return best


def _flops_per_request(spec: WorkloadSpec) -> float:
    """Model FLOPs of one request: the prompt's prefill and the output tokens' decode (each of
    the ``beam_width`` beams decodes them)."""
    inf = _section(spec)
    m = spec.model
    params = float(m.active_params or m.params or 0.0)
    L, w = int(m.layers or 1), m.attention_width
    return inf.prompt_tokens * compute.prefill_flops_per_token(
        params, L, w, inf.prompt_tokens
    ) + inf.beam_width * inf.output_tokens * compute.decode_flops_per_token(
        params, L, w, inf.prompt_tokens + inf.output_tokens / 2.0
    )


def _weights_gib(spec: WorkloadSpec) -> float:
    """The model's weights in their serving format, GiB (what a replica loads)."""
    return float(spec.model.params or 0.0) * WEIGHT_BYTES[weight_format(spec)] / mem.GIB


def _assumptions(spec: WorkloadSpec, gpu: GpuSpec) -> tuple[str, ...]:
    inf = _section(spec)
    fmt = weight_format(spec)
    stack = _replica_stack(spec)
    memory = (
        f"its KV cache {stack.memory_utilization:.0%} of the memory the weights leave free"
        if stack.memory_share_of_free
        else f"{stack.memory_utilization:.0%} of GPU memory"
    )
    lines = [
        f"{fmt} weights, {inf.kv_precision} KV cache; prompts of {_length_words(inf.prompt_tokens, inf.prompt_tokens_p95)} "
        f"and answers of {_length_words(inf.output_tokens, inf.output_tokens_p95)} tokens",
        f"served by {stack.description}: up to {stack.max_num_seqs:,} sequences per replica, "
        f"{memory}",
        "each step: max(weights + KV cache read at "
        f"{stack.bandwidth_fraction:.0%} of memory bandwidth, FLOPs at the matmul efficiency) "
        "+ tensor-parallel all-reduces + the stack's host time",
    ]
    if stack.reserves_whole_request:
        lines.append(
            "a request starts only once the KV cache can hold its prompt and its whole answer "
            "(no request is paused once started), so fewer run at once than the mean length allows"
        )
    if inf.beam_width > 1:
        lines.append(
            f"beam search, {inf.beam_width} beams a request: the prompt is prefilled once and its "
            f"KV cache shared by the beams (TensorRT-LLM's cache indirection); each step decodes "
            f"{inf.beam_width} tokens a request, each beam keeps its own generated KV cache, and "
            "the beams' logits are sorted (top-k) every step"
        )
    if stack.batching == "static":
        lines.append(
            "static batches: a batch's prompts are prefilled together and it decodes until its "
            "longest answer (the p95 length) is done, every request keeping its place until then"
            + (
                "; Poisson arrivals, the requests that come while a batch runs form the next, "
                "which starts without waiting to fill"
                if inf.serving
                else ""
            )
        )
    elif inf.serving:
        lines.append(
            "Poisson arrivals; running batch by Little's law, its 95th percentile B + 1.645 sqrt(B); "
            "prompts queue as an M/D/1 server"
        )
    if fmt == "bf16" and not gpu.bf16:
        lines.append(f"the {gpu.name} has no bf16: the weights are served in fp16 (same size)")
    if fmt in ("int8", "int4"):
        lines.append(f"{fmt} weight-only quantisation (AWQ/GPTQ-style), matmuls in 16-bit")
    if fmt == "fp8" and not gpu.fp8:
        lines.append(f"the {gpu.name} has no fp8 tensor cores: fp8 weights, 16-bit matmuls")
    elif fmt == "fp8" and stack.fp8_matmuls_at_16bit_rate:
        lines.append(
            f"{stack.name}'s fp8 GEMMs run no faster than 16-bit ones: fp8 weights read at one "
            "byte, matmuls at the 16-bit rate"
        )
    if fmt in FP4_FORMATS:
        lines.append(_fp4_words(fmt, gpu))
    return tuple(lines)


def _fp4_words(fmt: str, gpu: GpuSpec) -> str:
    """How 4-bit floating-point weights are served on ``gpu`` (see serving's module docstring)."""
    bits = WEIGHT_BYTES[fmt] * 8.0
    name = {"fp4": "NVFP4", "mxfp4": "MXFP4"}[fmt]
    unit = matmul_precision(fmt, gpu)
    if unit == "fp4":
        return (
            f"{fmt} ({name}, {bits:g} bits a weight) weights and activations on the "
            f"{gpu.name}'s fp4 tensor cores ({gpu.matmul_peak_flops('fp4') / 1e12:,.0f} dense "
            "TFLOPS)"
        )
    if unit == "fp8":
        return (
            f"{fmt} ({name}, {bits:g} bits a weight) weights with MXFP8 activations on the "
            f"{gpu.name}'s fp8 tensor cores (a mixed fp4 x fp8 matmul runs at the fp8 rate)"
        )
    lacks = (
        f"the {gpu.name}'s fp4 tensor cores take OCP MXFP4 only"
        if gpu.fp4
        else f"the {gpu.name} has no fp4 tensor cores"
    )
    return (
        f"{lacks}: {fmt} ({name}) weights served weight-only, "
        f"streamed at {bits:g} bits and dequantised to 16-bit on the fly (Marlin/Triton "
        "kernels), matmuls at the 16-bit rate"
    )


def _length_words(mean: float, p95: float | None) -> str:
    return f"{mean:g}" if p95 is None else f"{mean:g} on average ({p95:g} at p95)"


def _roofline_source(gpu: GpuSpec) -> str:
    return (
        f"roofline per step, weight matmuls then attention: each max(bytes / "
        f"{gpu.memory_bandwidth_gb_per_s:g} GB/s, FLOPs / ({gpu.tensor_tflops_dense:g} TFLOPS x "
        f"{eff.gemm_fraction(gpu):.2f}, the weight matmuls' moved to their forward-only shape))"
    )


def _no_replica(spec: WorkloadSpec, gpu: GpuSpec, count: int, topo: Topology) -> Estimate:
    """The estimate when not even one replica fits: the weights' memory and what would help."""
    gpn = max(1, min(topo.gpus_per_node, count))
    weights_gib = _weights_gib(spec)
    heads = int(spec.model.heads or 1)
    # the widest replica the count can be split into (_choices): a size that divides the GPUs and
    # the attention heads
    tp = max(t for t in _REPLICA_TENSOR_SIZES if t <= gpn and not count % t and not heads % t)
    widest = max(t for t in _REPLICA_TENSOR_SIZES if t <= gpn and not heads % t)
    inf = _section(spec)
    stack_seqs = serving_stack(inf.framework).max_num_seqs
    seqs = _replica_stack(spec).max_num_seqs * inf.beam_width
    hidden = float(spec.model.hidden or 0)
    workspace_gib = workspace_bytes(seqs, hidden, tp) / mem.GIB if hidden else 0.0
    # was: max_batch 10,000,000 "needs 13.6 GiB" on an 80 GB GPU, blaming the weights, where its
    # step workspace was 1.3 TB
    # the KV cache of the longest request (p95 lengths, its beams), which the pool must hold:
    # was left out, so 1,024 beams "needed 13.8 GiB" of an 80 GiB GPU, the weights blamed
    prompt, output = service_lengths(spec)
    replica = make_replica(spec, gpu, tp, topology_links(gpu, topo, tp))
    kv_tokens = replica.request_kv_tokens(prompt.p95, output.p95)
    kv_gib = kv_tokens * replica.kv_bytes_per_token_per_gpu / mem.GIB
    need = weights_gib / tp + kv_gib + workspace_gib + mem.FRAMEWORK_FIXED_GIB
    # what overflows: the largest of the weights, the longest request's KV cache and the step
    # workspace names the reason; the workspace's own fix is given wherever it overflows alone
    crowded = workspace_gib > max(weights_gib / tp, kv_gib) and need > gpu.usable_memory_gib
    kv_bound = not crowded and kv_gib > weights_gib / tp
    workspace_over = (
        workspace_gib > weights_gib / tp
        and weights_gib / tp + workspace_gib + mem.FRAMEWORK_FIXED_GIB > gpu.usable_memory_gib
    )
    one_request = (
        f"one request's KV cache ({inf.beam_width:,} beams)"
        if inf.beam_width > 1
        else "one sequence of KV cache"
    )
    s = Strategy(
        data_parallel=0,
        tensor_parallel=tp,
        method="inference",
        gpus_per_piece=count,
        reason=f"the step workspace of {seqs:,} sequences does not fit"
        if crowded
        else f"weights and {one_request} do not fit",
    )
    wider = f"more GPUs per replica (tensor parallel, up to {widest} here), " if widest > 1 else ""
    suggestions = [
        f"weights alone are {weights_gib:.1f} GiB: use {wider}a bigger GPU, or int8/int4 weights"
    ]
    if kv_bound:
        beams = (
            f"its {inf.beam_width:,} beams' {kv_tokens:,.0f} tokens"
            if inf.beam_width > 1
            else f"{kv_tokens:,.0f} tokens"
        )
        fixes = (["fewer beams (inference.beam_width)"] if inf.beam_width > 1 else []) + [
            "shorter prompts or answers (prompt_tokens, output_tokens)"
        ]
        if inf.kv_precision != "fp8":
            fixes.append("an fp8 KV cache (inference.kv_precision: fp8)")
        fixes.append(f"{wider}a GPU with more memory")
        suggestions = [
            f"the longest request holds {kv_gib:,.1f} GiB of KV cache a GPU ({beams}): "
            + ", ".join(fixes[:-1])
            + f", or {fixes[-1]}",
            *suggestions[1:],
        ]
    if crowded or workspace_over:
        batch = f"inference.max_batch {inf.max_batch:,}" if inf.max_batch else "the stack's batch"
        beams = f" x beam_width {inf.beam_width:,}" if inf.beam_width > 1 else ""
        workspace = (
            f"{batch}{beams} = {seqs:,} sequences a step need {workspace_gib:,.1f} GiB of "
            f"activations a GPU: lower inference.max_batch (the stack's own is {stack_seqs:,})"
            + (" or beam_width" if beams else "")
        )
        suggestions = [workspace, *suggestions] if crowded else [*suggestions, workspace]
    if tp < widest:
        suggestions.insert(
            0,
            f"{count} GPUs split only into replicas of {tp} GPU{'s' if tp > 1 else ''}: a "
            f"replica's tensor-parallel size divides both the {heads} attention heads and the "
            f"GPU count; a count that is a multiple of {widest} gives replicas of {widest}",
        )
    return make_estimate(
        spec,
        gpu,
        count,
        fits=False,
        memory_bytes=need * mem.GIB,
        breakdown={"weights": weights_gib / tp, "kv_cache": kv_gib, "activations": workspace_gib},
        strategy=s,
        total_flops=0.0,
        efficiency=0.0,
        source=_roofline_source(gpu),
        wall_hours=math.inf,
        interconnect=replica_link(gpu, topo, gpn),
        fabric=None,
        checkpoint_gib=weights_gib,
        suggestions=suggestions,
        assumptions=_assumptions(spec, gpu),
    )


def replica_link(gpu: GpuSpec, topo: Topology, tp: int) -> Interconnect:
    """The link a replica of ``tp`` GPUs needs between them: none for one GPU; PCIe where the GPU
    has no NVLink or the topology links its GPUs over PCIe (the replica was timed on that link:
    was "nvlink" for RTX 4090s, which have none); else NVLink, NVSwitch beyond two."""
    if tp == 1:
        return Interconnect.NONE
    if not gpu.direct_link or topo.interconnect is Interconnect.PCIE:
        return Interconnect.PCIE
    return Interconnect.NVSWITCH if tp > 2 else Interconnect.NVLINK


def _memory(c: _Choice, prompt: Lengths, output: Lengths) -> dict[str, float]:
    """Per-GPU memory at the load: weights, the KV cache of the sequences running at p95, the
    step workspace and the runtime (CUDA context, kernels, graphs)."""
    r = c.replica
    running = min(
        c.point.concurrency + 1.645 * math.sqrt(c.point.concurrency), c.point.max_concurrency
    )
    kv = (
        running * r.request_kv_tokens(prompt.mean, output.mean / 2.0) * r.kv_bytes_per_token_per_gpu
    )
    return {
        "weights": r.weight_bytes_per_gpu / mem.GIB,
        "kv_cache": kv / mem.GIB,
        "activations": r.workspace_bytes_per_gpu / mem.GIB,
        "runtime": RUNTIME_GIB,
    }


def _serving_metrics(spec: WorkloadSpec, c: _Choice) -> ServingMetrics:
    inf = _section(spec)
    p = c.point
    prompt, output = service_lengths(spec)
    slo = {k: v for k, v in inf.slo.model_dump().items() if v is not None}
    return ServingMetrics(
        framework=c.replica.stack.name,
        precision=c.replica.precision,
        kv_precision=c.replica.kv_precision,
        replicas=c.replicas,
        gpus_per_replica=c.replica.tp,
        load_requests_per_s=inf.load_requests_per_s,
        overloaded=p.overloaded,
        ttft_ms=Percentiles(p.ttft_ms_p50, p.ttft_ms_p95),
        tpot_ms=Percentiles(p.tpot_ms_p50, p.tpot_ms_p95),
        e2e_ms=Percentiles(p.e2e_ms_p50, p.e2e_ms_p95),
        throughput_tokens_per_second=p.throughput_tokens_per_s * c.replicas,
        capacity_tokens_per_second=p.capacity_tokens_per_s * c.replicas,
        capacity_requests_per_second=p.capacity_requests_per_s * c.replicas,
        max_concurrency=p.max_concurrency,
        concurrency=p.concurrency,
        kv_cache_gib_per_sequence=c.replica.kv_bytes_per_token_per_gpu
        * c.replica.tp
        * c.replica.request_kv_tokens(prompt.mean, output.mean)
        / mem.GIB,
        slo=slo,
        slo_met=c.slo_met,
    )


def _suggestions(spec: WorkloadSpec, gpu: GpuSpec, c: _Choice) -> list[str]:
    inf = _section(spec)
    p = c.point
    out = []
    if p.overloaded and inf.load_requests_per_s is not None:
        per_replica = p.capacity_requests_per_s
        need = math.ceil(inf.load_requests_per_s / per_replica) * c.replica.tp
        out.append(
            f"carries {p.capacity_requests_per_s * c.replicas:,.2f} of the "
            f"{inf.load_requests_per_s:,.2f} requests/s ({p.capacity_tokens_per_s * c.replicas:,.0f} "
            f"of {inf.load_requests_per_s * inf.output_tokens:,.0f} output tokens/s): use "
            f"{need} x {gpu.name}"
        )
    if c.slo_met is False and not p.overloaded:
        out.append(
            f"misses the latency targets at this load (p95 TTFT {p.ttft_ms_p95:,.0f} ms, "
            f"TPOT {p.tpot_ms_p95:,.1f} ms): more replicas, a faster GPU, or fp8/int4 weights"
        )
    return out


def estimate_inference(spec: WorkloadSpec, gpu: GpuSpec, count: int, topo: Topology) -> Estimate:
    """The inference estimate on ``count`` x ``gpu``: replicas of the best tensor-parallel size,
    their latency and throughput at the workload's load (a service) or the time to generate its
    tokens (a batch job)."""
    choices = _choices(spec, gpu, count, topo)
    if not choices:
        return _no_replica(spec, gpu, count, topo)
    inf = _section(spec)
    c = _best(choices, inf.serving)
    prompt, output = service_lengths(spec)
    r, p = c.replica, c.point
    metrics = _serving_metrics(spec, c)
    s = Strategy(
        data_parallel=c.replicas,
        tensor_parallel=r.tp,
        method="inference",
        micro_batch_size=p.max_concurrency,
        gpus_per_piece=r.tp,
        concurrent_pieces=c.replicas,
        reason=(
            f"{c.replicas} replica(s) of {r.tp} GPU(s), up to {p.max_concurrency} concurrent "
            f"sequences each; {p.capacity_tokens_per_s:,.0f} output tokens/s per replica at most"
        ),
    )
    per_req_flops = _flops_per_request(spec)
    if inf.serving:
        wall_h = float(inf.hours or 0.0)
        served = p.requests_per_s * c.replicas
        fits = not p.overloaded and c.slo_met is not False
    else:
        served = p.capacity_requests_per_s * c.replicas
        requests = inf.total_output_tokens * spec.pieces / inf.output_tokens
        wall_h = requests / served / 3600.0
        fits = True
    total_flops = per_req_flops * served * wall_h * 3600.0
    efficiency = per_req_flops * served / (count * gpu.peak_flops)
    breakdown = _memory(c, prompt, output)
    return make_estimate(
        spec,
        gpu,
        count,
        fits=fits,
        memory_bytes=sum(breakdown.values()) * mem.GIB,
        breakdown=breakdown,
        strategy=s,
        total_flops=total_flops,
        efficiency=efficiency,
        source=_roofline_source(gpu),
        wall_hours=wall_h,
        interconnect=replica_link(gpu, topo, r.tp),
        fabric=None,
        checkpoint_gib=_weights_gib(spec),
        suggestions=_suggestions(spec, gpu, c),
        assumptions=_assumptions(spec, gpu),
        serving=metrics,
    )
