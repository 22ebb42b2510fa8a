"""What to change when a training job does not fit or cannot be laid out (pure).

:func:`train_suggestions` tries the usual remedies in turn (8-bit AdamW, more GPUs with sharding,
LoRA / QLoRA, a bigger GPU) and names those that would fit.  A pinned ``training.parallelism``
layout needs a GPU count that is a multiple of ``tensor x pipeline``: :func:`layout_error` is the
error for a count that is not, :func:`unplaceable_estimate` the estimate the optimizer sees for it.
"""

from __future__ import annotations

import math
from dataclasses import replace

from planner.errors import ConfigError
from planner.gpu_specs import GpuSpec, load_gpu_catalog
from planner.workload import efficiency as eff
from planner.workload import memory as mem
from planner.workload.estimate_types import (
    Estimate,
    Topology,
    default_topology,
    topology_links,
)
from planner.workload.spec import Kind, WorkloadSpec
from planner.workload.strategy import (
    Strategy,
    TrainFacts,
    any_layout_fits,
    pinned_unit,
    search_training,
    tensor_across_nodes,
    unplaceable_layout,
)
from planner.workload.training import (
    flash_attention,
    train_facts,
    training_assumptions,
    unrunnable_estimate,
)

# Multiples of the GPU count tried when suggesting more GPUs with sharding.
_MORE_GPUS = (2, 4, 8, 16, 32, 64, 128, 256, 512)


def _fits(f: TrainFacts, gpu: GpuSpec, count: int, topo: Topology, flash: bool) -> bool:
    return any_layout_fits(f, gpu, count, topology_links(gpu, topo, count), flash=flash)


def _least_gib(f: TrainFacts, gpu: GpuSpec, count: int, topo: Topology, flash: bool) -> float:
    _, least = search_training(f, gpu, count, topology_links(gpu, topo, count), flash=flash)
    return least.memory_bytes / mem.GIB if least is not None else math.inf


def _bigger_gpu(
    spec: WorkloadSpec, f: TrainFacts, gpu: GpuSpec, count: int, least_gib: float, flash: bool
) -> str | None:
    """The smallest GPU with more memory than ``gpu`` on which the job fits, as a suggestion: one
    of the same vendor (another vendor is another software stack, CUDA or ROCm, not a remedy);
    among GPUs of the same memory, one of ``gpu``'s segment first (an RTX 4090's is the RTX 5090,
    not the 32 GB RTX 5000 Ada workstation card), then by name.

    ``least_gib`` is the least memory per GPU the job needs on ``count`` x ``gpu`` with
    FlashAttention ``flash``: a GPU searched with the same attention needs as much (the layouts
    and their bytes do not depend on the GPU's memory), so one with less is not searched."""
    bigger = sorted(
        (
            g
            for g in load_gpu_catalog().gpus
            if g.usable_memory_gib > gpu.usable_memory_gib and g.vendor == gpu.vendor
        ),
        key=lambda g: (g.usable_memory_gib, g.segment != gpu.segment, g.name),
    )
    for other in bigger:
        if other.cannot_train_in(spec.train.precision.value) is not None:
            continue
        other_flash = eff.supports_flash_attention(other)
        if other.usable_memory_gib < least_gib and other_flash == flash:
            continue
        if _fits(f, other, count, default_topology(other, count), other_flash):
            return f"a bigger GPU would fit: {count} x {other.name} ({other.memory_gib:g} GiB)"
    return None


def train_suggestions(
    spec: WorkloadSpec,
    gpu: GpuSpec,
    count: int,
    topo: Topology,
    *,
    least_gib: float | None = None,
) -> list[str]:
    """What would make a training job that fits nowhere on ``count`` x ``gpu`` fit: the memory it
    needs at least, then each remedy that works (8-bit AdamW, more GPUs with ZeRO-3/FSDP, LoRA or
    QLoRA, a bigger GPU).  ``least_gib``: that least memory per GPU where the caller's search found
    it already (the estimate of one piece on ``count`` GPUs), rather than searched again."""
    f = train_facts(spec)
    flash = flash_attention(spec, gpu)
    out: list[str] = []
    if least_gib is None:
        least_gib = _least_gib(f, gpu, count, topo, flash)
    needed = f"{least_gib:.1f} GiB"
    # the optimizer in the backward pass alone keeps the job from fitting
    in_backward = f.optimizer_in_backward and _fits(
        replace(f, optimizer_in_backward=False), gpu, count, topo, flash
    )
    if least_gib <= gpu.usable_memory_gib and in_backward:
        # the memory is there; the setting forbids every layout's micro-batches (was: "needs at
        # least 16.3 GiB per GPU ...; H100 has 80 GiB", the cause two lines further down)
        out.append(
            f"the least-memory layout needs {needed} per GPU, within the {gpu.name}'s "
            f"{gpu.usable_memory_gib:g} GiB: what rules every layout out is "
            "training.optimizer_in_backward, below"
        )
    else:
        out.append(
            f"needs at least {needed} per GPU even with recompute and sharding; {gpu.name} has "
            f"{gpu.usable_memory_gib:g} GiB"
        )
    if f.optimizer == "adamw" and f.method == "full":
        f8 = train_facts(spec, optimizer="adamw-8bit")
        if _fits(f8, gpu, count, topo, flash):
            out.append("8-bit AdamW (bitsandbytes) would fit: set training.optimizer: adamw-8bit")
        offloaded = replace(f, host_optimizer=True)
        if _fits(offloaded, gpu, count, topo, flash):
            out.append(
                "optimizer states in host memory would fit (DeepSpeed ZeRO-Offload): set "
                "training.offload: optimizer (slower: each step crosses PCIe)"
            )
        lean = replace(f8, host_optimizer=True, optimizer_in_backward=True)
        if not _fits(offloaded, gpu, count, topo, flash) and _fits(lean, gpu, count, topo, flash):
            out.append(
                "paged 8-bit AdamW with the optimizer in the backward pass would fit (torchtune's "
                "single-GPU recipe): training.optimizer: paged-adamw-8bit, "
                "optimizer_in_backward: true, precision: pure-bf16"
            )
    if in_backward:
        # torchtune applies each gradient as it is produced and refuses gradient accumulation
        pinned = f.pinned.get("micro_batch")
        clash = (
            f"; parallelism.micro_batch {pinned} is pinned below that share: drop it or pin the "
            "share"
            if pinned is not None
            else ""
        )
        out.append(
            "training.optimizer_in_backward runs no gradient accumulation, so each GPU takes its "
            f"whole share of the global batch ({f.global_batch:g} per step) as one micro-batch: "
            "lower training.global_batch_samples or global_batch_tokens, add GPUs, or set "
            f"optimizer_in_backward: false to accumulate smaller micro-batches{clash}"
        )
    for n in _MORE_GPUS:
        total = count * n
        t2 = replace(topo, gpus_per_node=min(max(topo.gpus_per_node, min(total, 8)), total))
        if _fits(f, gpu, total, t2, flash):
            out.append(f"{total} x {gpu.name} with ZeRO-3/FSDP sharding would fit")
            break
    if f.method == "full" and f.transformer:
        for meth in ("lora", "qlora"):
            fl = train_facts(spec, method=meth)
            if _fits(fl, gpu, count, topo, flash):
                out.append(
                    f"{'LoRA' if meth == 'lora' else 'QLoRA'} would fit: set training.method: {meth}"
                )
                break
    bigger = _bigger_gpu(spec, f, gpu, count, least_gib, flash)
    if bigger is not None:
        out.append(bigger)
    return out


def pinned_gpus(spec: WorkloadSpec) -> int:
    """GPUs in one copy of the pinned layout (``training.parallelism``,
    :func:`~planner.workload.strategy.pinned_unit`; 1 when none is pinned or for inference): every
    training GPU count must be a multiple of it."""
    if spec.kind is Kind.INFERENCE:
        return 1
    return pinned_unit(_pins(spec))


def _pins(spec: WorkloadSpec) -> dict[str, int]:
    """The layout sizes ``training.parallelism`` pins, by name."""
    p = spec.train.parallelism
    sizes = {"tensor": p.tensor, "pipeline": p.pipeline, "context": p.context, "expert": p.expert}
    return {k: v for k, v in sizes.items() if v is not None}


def layout_error(spec: WorkloadSpec, gpu_count: int) -> ConfigError | None:
    """The error for a pinned layout that ``gpu_count`` GPUs cannot hold, or None when they can.

    :func:`~planner.workload.estimator.estimate` reports such a count as not fitting (the quote
    skips it); a caller asking for exactly that count (``planner estimate``) raises this instead.
    """
    unit = pinned_gpus(spec)
    if gpu_count % unit == 0:
        return None
    pinned = _pins(spec)
    problem = unplaceable_layout(pinned, gpu_count)
    key = next((k for k, v in pinned.items() if v > 1), "pipeline")
    nearest = math.ceil(gpu_count / unit) * unit
    return ConfigError(
        problem or f"the pinned layout needs a multiple of {unit} GPUs",
        key_path=f"training.parallelism.{key}",
        hint=f"use a GPU count that is a multiple of {unit} (such as {nearest}), or remove "
        f"training.parallelism.{key} to let the search choose",
    )


def is_unrunnable(reason: str) -> bool:
    """Whether a strategy's ``reason`` says the pinned layout cannot run on its GPUs
    (:func:`unplaceable_estimate`)."""
    return reason.startswith(_UNRUNNABLE)


def is_tensor_across_nodes(reason: str) -> bool:
    """Whether a strategy's ``reason`` says its pinned tensor-parallel group does not fit in one
    node (:func:`~planner.workload.strategy.tensor_across_nodes`), which a quote reports as such
    rather than as a memory misfit."""
    return is_unrunnable(reason) and "in one node" in reason


_UNRUNNABLE = "not runnable: "


def unplaceable_estimate(
    spec: WorkloadSpec, gpu: GpuSpec, count: int, topo: Topology
) -> Estimate | None:
    """The estimate for a count the pinned tensor x pipeline layout does not divide (not runnable
    here), or None when it divides ``count``.

    Memory shown: the least-memory layout the search finds on these GPUs without the tensor and
    pipeline pins (the model states stay those of the workload).
    """
    f = train_facts(spec)
    problem = unplaceable_layout(f.pinned, count)
    fix = f"use a multiple of {pinned_gpus(spec)} GPUs for the pinned training.parallelism layout"
    if problem is None:
        # (a quote's instance of fewer GPUs than the group: was priced as one node's group)
        problem = tensor_across_nodes(f.pinned, count, topo.gpus_per_node)
        fix = "use nodes of at least as many GPUs as training.parallelism.tensor, or a smaller one"
    if problem is None:
        return None
    flash = flash_attention(spec, gpu)
    layout_keys = ("tensor", "pipeline", "context", "expert")
    free = replace(f, pinned={k: v for k, v in f.pinned.items() if k not in layout_keys})
    _, least = search_training(free, gpu, count, topology_links(gpu, topo, count), flash=flash)
    s = Strategy(
        data_parallel=0,
        tensor_parallel=f.pinned.get("tensor", 1),
        pipeline_parallel=f.pinned.get("pipeline", 1),
        context_parallel=f.pinned.get("context", 1),
        expert_parallel=f.pinned.get("expert", 1),
        method=f.method,
        optimizer=f.optimizer,
        gpus_per_piece=count,
        reason=f"{_UNRUNNABLE}{problem} (training.parallelism)",
    )
    return unrunnable_estimate(
        spec,
        f,
        gpu,
        count,
        topo,
        s,
        least,
        [fix],
        training_assumptions(spec, f, flash),
    )
