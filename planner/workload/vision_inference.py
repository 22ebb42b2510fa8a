"""The inference estimate for vision and diffusion models: replicas, images/s, latency (pure).

The physics lives in :mod:`planner.workload.vision_serving`; this module reads the workload, puts
one replica on each GPU and turns the result into an :class:`Estimate` with its
:class:`ServingMetrics` (``unit: images``).

A service (``images_per_s`` for ``hours``) fits when its replicas carry the load; a batch job
(``images``) takes as long as processing them at the replicas' capacity takes.
"""

from __future__ import annotations

import math

from planner.errors import ConfigError
from planner.gpu_specs import GpuSpec
from planner.schema import Interconnect
from planner.workload import memory as mem
from planner.workload import vision_serving as vs
from planner.workload.estimate_types import (
    Estimate,
    Topology,
    make_estimate,
)
from planner.workload.serving_metrics import Percentiles, ServingMetrics
from planner.workload.spec import InferenceSection, WorkloadSpec
from planner.workload.strategy import Strategy


def _section(spec: WorkloadSpec) -> InferenceSection:
    inf = spec.inference
    assert inf is not None  # the schema requires it for kind: inference
    return inf


def workload_of(spec: WorkloadSpec) -> vs.Workload:
    """The per-image costs of ``spec``'s model at its resolution (and steps)."""
    m, inf = spec.model, _section(spec)
    if m.arch == "diffusion":
        return vs.diffusion_workload(
            m.preset,
            params=m.params or 0.0,
            flops_per_sample=m.flops_per_sample,
            resolution=inf.resolution,
            steps=inf.steps,
            guidance=inf.guidance,
        )
    return vs.cnn_workload(
        m.preset,
        params=m.params or 0.0,
        flops_per_sample=m.flops_per_sample,
        activation_gib_per_sample=m.activation_gib_per_sample,
        resolution=inf.resolution,
    )


def engine_refusal(spec: WorkloadSpec, gpu: GpuSpec) -> ConfigError | None:
    """Why ``spec``'s engine settings cannot run on ``gpu``, or None where they can: a TensorRT
    engine named for another vendor's GPU, or DLAs asked of a GPU without them (both were
    estimated as if they ran).  ``auto`` is never refused."""
    inf = _section(spec)
    if inf.framework in ("tensorrt", "trt") and gpu.vendor != "nvidia":
        return ConfigError(
            f"{inf.framework} (NVIDIA TensorRT) runs on NVIDIA GPUs only, not the {gpu.name}",
            key_path="inference.framework",
            hint="pytorch or onnxruntime (their ROCm builds) run on AMD Instinct GPUs",
        )
    if inf.dla and gpu.name not in vs.DLA_INT8_OPS:
        modelled = ", ".join(vs.DLA_INT8_OPS)
        why = (
            f"has deep learning accelerators (DLAs) the planner has no figures for; {modelled}'s"
            " are modelled"
            if gpu.name in vs.DLA_UNMODELLED
            else f"has no deep learning accelerators (DLAs); {modelled} has them"
        )
        return ConfigError(
            f"the {gpu.name} {why}",
            key_path="inference.dla",
            hint="drop inference.dla (or set it false) for this GPU",
        )
    return None


def replica_of(spec: WorkloadSpec, gpu: GpuSpec) -> vs.VisionReplica:
    """One replica of ``spec`` on ``gpu`` (ConfigError for a precision the GPU lacks, or an
    engine setting it cannot run: :func:`engine_refusal`)."""
    inf = _section(spec)
    refused = engine_refusal(spec, gpu)
    if refused is not None:
        raise refused
    precision = vs.vision_precision(inf.precision.value)
    vs.conv_peak_flops(gpu, precision)  # fp8 where the GPU has none: a ConfigError here
    return vs.VisionReplica(
        workload_of(spec), gpu, vs.engine(inf.framework), precision, use_dla=inf.dla
    )


def _resolution(spec: WorkloadSpec) -> int | None:
    inf = _section(spec)
    if inf.resolution is not None:
        return inf.resolution
    preset = spec.model.preset or ""
    if preset in vs.DIFFUSION_PIPELINES:
        return vs.DIFFUSION_PIPELINES[preset].resolution
    shape = vs.CNN_SHAPES.get(preset)
    return shape.resolution if shape else None


def _assumptions(spec: WorkloadSpec, r: vs.VisionReplica, max_batch: int) -> tuple[str, ...]:
    w, gpu = r.work, r.gpu
    peak = vs.conv_peak_flops(gpu, r.precision) / 1e12
    out = [
        f"{r.engine.name} engine, {r.precision}: {peak:,.1f} dense T(FL)OPS x "
        f"{r.efficiency:.2f} matmul fraction, {gpu.memory_bandwidth_gb_per_s:g} GB/s",
        f"dynamic batching up to {max_batch} image(s) per call; Poisson arrivals (M/D/1 queue)",
        f"one replica per GPU; a {r.kernel_floor_s * 1e6:.1f} us floor per kernel "
        f"({w.kernels * r.engine.kernels_per_layer:,.0f} kernels per forward pass)",
    ]
    if w.kind == "diffusion":
        out.append(
            f"{w.steps} denoising steps, {'2 latents per step (classifier-free guidance)' if w.guidance else 'no guidance'}"
            f", {w.forward_flops / 1e12:.2f} TFLOPs per UNet pass + VAE decode "
            f"{w.vae_flops / 1e12:.2f} TFLOPs"
        )
        if r.precision in vs.QUANTISED:
            out.append(
                f"{r.precision} for convolutions and linear layers; attention and the VAE in 16-bit"
            )
    else:
        out.append(f"{w.forward_flops / 1e9:,.1f} GFLOPs per image (training FLOPs / 3)")
    if gpu.name in vs.DLA_INT8_OPS:
        out.append(
            "the Jetson's two DLAs (52.5 dense INT8 TOPS) are "
            + (
                "used for throughput, not latency"
                if r.use_dla
                else "not used (inference.dla: true adds them)"
            )
        )
    return tuple(out)


def estimate_vision_inference(
    spec: WorkloadSpec, gpu: GpuSpec, count: int, topo: Topology
) -> Estimate:
    """Images/s, latency and memory of ``spec`` on ``count`` x ``gpu`` (one replica per GPU)."""
    del topo  # replicas share nothing
    inf = _section(spec)
    r = replica_of(spec, gpu)
    max_batch = inf.batch or vs.default_max_batch(r.work.kind, inf.serving)
    load = inf.load_images_per_s
    point = vs.serve(r, max_batch, None if load is None else load / count)
    # an engine holds the buffers of its largest batch (a TensorRT profile's maximum, a dynamic
    # batcher's max_batch_size), whatever the mean batch: sized on the mean, a service at a light
    # load was said to fit where its batches of max_batch would not (and the quote refused it)
    breakdown = r.memory_gib(max_batch)
    memory_gib = sum(breakdown.values())
    fits = memory_gib <= gpu.usable_memory_gib
    per_image_s = point.batch_ms / 1e3 / max(point.batch, 1.0)
    capacity = point.capacity_images_per_s * count
    served = point.images_per_s * count
    if inf.serving:
        wall_h = float(inf.hours or 0.0)
        fits = fits and not point.overloaded
        images_total = served * wall_h * 3600.0
    else:
        images_total = inf.total_images * spec.pieces
        wall_h = images_total / capacity / 3600.0
    flops_per_image = _flops_per_image(r.work)
    efficiency = flops_per_image * served / (count * vs.conv_peak_flops(gpu, r.precision))
    suggestions = []
    if point.overloaded and load is not None:
        need = math.ceil(load / point.capacity_images_per_s)
        suggestions.append(
            f"carries {capacity:,.4g} of the {load:,.4g} images/s: use {need} x {gpu.name}"
        )
    if memory_gib > gpu.usable_memory_gib:
        suggestions.append(
            f"needs {memory_gib:.1f} GiB of the {gpu.usable_memory_gib:g} GiB: a smaller batch "
            "(inference.batch) or int8"
        )
    metrics = ServingMetrics(
        framework=r.engine.name,
        precision=r.precision,
        kv_precision="-",
        replicas=count,
        gpus_per_replica=1,
        load_requests_per_s=load,
        overloaded=point.overloaded,
        ttft_ms=Percentiles(point.latency_ms_p50, point.latency_ms_p95),
        tpot_ms=Percentiles(0.0, 0.0),
        e2e_ms=Percentiles(point.latency_ms_p50, point.latency_ms_p95),
        throughput_tokens_per_second=0.0,
        capacity_tokens_per_second=0.0,
        capacity_requests_per_second=capacity,
        max_concurrency=max_batch,
        concurrency=point.batch,
        kv_cache_gib_per_sequence=0.0,
        unit="images",
        throughput_images_per_second=served,
        capacity_images_per_second=capacity,
        latency_ms=Percentiles(point.latency_ms_p50, point.latency_ms_p95),
        batch_size=point.batch,
        max_batch=max_batch,
        seconds_per_image=per_image_s,
        resolution=_resolution(spec),
        steps=r.work.steps if r.work.kind == "diffusion" else None,
    )
    strategy = Strategy(
        data_parallel=count,
        method="inference",
        micro_batch_size=max_batch,
        gpus_per_piece=1,
        concurrent_pieces=count,
        reason=(
            f"{count} replica(s) of 1 GPU, batches of up to {max_batch} image(s); "
            f"{point.capacity_images_per_s:,.4g} images/s per replica at most"
        ),
    )
    return make_estimate(
        spec,
        gpu,
        count,
        fits=fits,
        memory_bytes=memory_gib * mem.GIB,
        breakdown=breakdown,
        strategy=strategy,
        total_flops=flops_per_image * images_total,
        efficiency=efficiency,
        source=(
            f"roofline per batch: max(bytes / {gpu.memory_bandwidth_gb_per_s:g} GB/s, FLOPs / "
            f"({vs.conv_peak_flops(gpu, r.precision) / 1e12:,.1f} T x {r.efficiency:.2f})) "
            "+ kernel floors"
        ),
        wall_hours=wall_h,
        interconnect=Interconnect.NONE,
        fabric=None,
        checkpoint_gib=breakdown["weights"],
        suggestions=suggestions,
        assumptions=_assumptions(spec, r, max_batch),
        serving=metrics,
    )


def _flops_per_image(w: vs.Workload) -> float:
    if w.kind != "diffusion":
        return w.forward_flops
    latents = 2 if w.guidance else 1
    return w.steps * latents * w.forward_flops + latents * w.text_flops + w.vae_flops
