"""From a workload and a GPU choice to memory, strategy, FLOPs, hours and interconnect (pure).

:func:`estimate` is the one entry point.  It is called by the optimizer for thousands of
(GPU, count, topology) combinations, so everything that depends only on the spec is computed once
and memoised on the spec's value (:mod:`.training`), never written into the spec.

Conventions:

- ``wall_hours`` covers the whole workload: every piece (``spec.pieces``), run on these GPUs.  With
  several pieces the GPUs may be split into groups that each run a piece; the split with the
  shortest total time wins (``Strategy.gpus_per_piece``, ``Strategy.concurrent_pieces``).
- Training time includes interruptions and checkpoints (Young/Daly, :mod:`.efficiency`), the
  run's start-up and model load, and its evaluation passes (``time_breakdown_hours``).
- ``efficiency`` is MFU: model FLOPs (no recompute) / (GPUs x dense peak x wall time).
- Inference serving (``tokens_per_s`` for ``hours``): ``wall_hours`` is the serving window; the
  estimate fits only if the GPUs sustain the rate, otherwise ``fits`` is False and a suggestion says
  how many GPUs would.  A batch inference job (``tokens``) takes as long as generating them takes.
  Decode is memory-bandwidth bound (weights + KV cache read per step), prefill compute bound.

Where the parts live: :mod:`.training` (train facts, the training estimate), :mod:`.inference`
(replicas, the inference estimate), :mod:`.advice` (what would make a job fit, pinned-layout
errors), :mod:`.estimate_types` (:class:`Estimate`, :class:`Topology`, :func:`default_topology`,
re-exported here).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from planner.errors import ConfigError
from planner.gpu_specs import GpuSpec
from planner.workload.advice import train_suggestions, unplaceable_estimate
from planner.workload.calibration import Calibration, calibrated
from planner.workload.estimate_types import Estimate, Topology, default_topology
from planner.workload.spec import Kind, WorkloadSpec
from planner.workload.training import estimate_training

__all__ = [
    "Estimate",
    "Topology",
    "check_precision",
    "default_topology",
    "estimate",
    "precision_fallback",
]

# What to train in instead when a GPU lacks a precision's tensor cores.
_FALLBACK = {"bf16": "fp16", "pure-bf16": "fp16", "tf32": "fp32", "fp8": "bf16", "fp4": "fp8"}


def precision_fallback(precision: str, gpu: GpuSpec) -> str:
    """The precision to train in on ``gpu`` when it lacks ``precision``'s tensor cores: fp32
    where the GPU runs 16-bit matmuls no faster than fp32 ones (no tensor cores, no packed fp16:
    Kepler, Maxwell, the Pascal GP102/GP104 cards), where torch.amp would save only the
    activations' bytes (a few per cent of the estimate) at the price of its casts and loss
    scaling."""
    fallback = _FALLBACK.get(precision, "fp16")
    if fallback == "fp8" and not gpu.fp8:
        fallback = "bf16"
    if fallback == "bf16" and not gpu.bf16:
        fallback = "fp16"
    if fallback == "fp16" and gpu.tensor_tflops_dense <= gpu.fp32_tflops:
        fallback = "fp32"
    return fallback


def check_precision(spec: WorkloadSpec, gpu: GpuSpec) -> None:
    """Raise ConfigError when ``gpu`` cannot train ``spec`` in its precision (bf16 on a T4 or a
    V100, fp8 before Hopper and Ada, fp4 before Blackwell), naming the precision that works there."""
    precision = spec.train.precision.value
    why = gpu.cannot_train_in(precision)
    if why is None:
        return
    fallback = precision_fallback(precision, gpu)
    raise ConfigError(
        f"{why}, so it cannot train in {precision}",
        key_path="training.precision",
        hint=f"use {fallback} (training.precision: {fallback}, --precision {fallback}, or "
        f"planner.with_training(spec, precision={fallback!r}) in Python)",
    )


def estimate(
    spec: WorkloadSpec,
    gpu: GpuSpec,
    gpu_count: int,
    *,
    topology: Topology | None = None,
    calibrations: Sequence[Calibration] = (),
    suggest: bool = True,
) -> Estimate:
    """Memory, strategy, FLOPs, efficiency, hours and interconnect for ``spec`` on ``gpu_count`` x ``gpu``.

    A training count that cannot hold the pinned layout is answered as not runnable; a training
    job that fits nowhere carries the remedies that would make it fit, unless ``suggest`` is
    False (the optimizer asks for hundreds of estimates and reads no remedies; each costs several
    strategy searches).  ``calibrations`` (the user's measured runs, :mod:`.calibration`) correct
    the training steps of a similar job.
    """
    if gpu_count < 1:
        raise ConfigError("GPU count must be at least 1", key_path="gpu_count")
    topo = topology or default_topology(gpu, gpu_count)
    if spec.kind is Kind.INFERENCE:
        # the serving models load with the first inference estimate, not with every training one
        if not spec.model.is_transformer:
            from planner.workload.vision_inference import estimate_vision_inference

            return estimate_vision_inference(spec, gpu, gpu_count, topo)
        from planner.workload.inference import estimate_inference

        return estimate_inference(spec, gpu, gpu_count, topo)
    check_precision(spec, gpu)
    blocked = unplaceable_estimate(spec, gpu, gpu_count, topo)
    if blocked is not None:
        return blocked
    result = estimate_training(spec, gpu, gpu_count, topo)
    if result.fits:
        return calibrated(spec, result, calibrations)
    if not suggest:
        return result
    # one piece: the estimate's search on these GPUs found the least memory a layout needs
    least = result.memory_per_gpu_gib if spec.pieces == 1 and result.memory_per_gpu_gib else None
    suggestions = train_suggestions(spec, gpu, gpu_count, topo, least_gib=least)
    return replace(result, suggestions=tuple(suggestions))
