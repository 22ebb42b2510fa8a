"""From a workload and a GPU choice to memory, strategy, FLOPs, hours and interconnect (pure).

:func:`estimate` is the one entry point.  It is called by the optimizer for thousands of
(GPU, count, topology) combinations, so everything that depends only on the spec is computed once
and cached on the spec (``_facts``).

Conventions:

- ``wall_hours`` covers the whole workload: every piece (``spec.pieces``), run on these GPUs.  With
  several pieces the GPUs may be split into groups that each run a piece; the split with the
  shortest total time wins (``Strategy.gpus_per_piece``, ``Strategy.concurrent_pieces``).
- Training time includes interruptions and checkpoints (Young/Daly, :mod:`.efficiency`).
- ``efficiency`` is MFU: model FLOPs (no recompute) / (GPUs x dense peak x wall time).
- Inference serving (``tokens_per_s`` for ``hours``): ``wall_hours`` is the serving window; the
  estimate fits only if the GPUs sustain the rate, otherwise ``fits`` is False and a suggestion says
  how many GPUs would.  A batch inference job (``tokens``) takes as long as generating them takes.
  Decode is memory-bandwidth bound (weights + KV cache read per step), prefill compute bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from planner.errors import ConfigError
from planner.gpu_specs import GpuSpec, load_gpu_catalog
from planner.schema import Fabric, Interconnect
from planner.workload import compute
from planner.workload import efficiency as eff
from planner.workload import memory as mem
from planner.workload.spec import Kind, WorkloadSpec
from planner.workload.strategy import (
    Candidate,
    Links,
    Strategy,
    TrainFacts,
    explain,
    search_training,
    unplaceable_layout,
)

# Default global batch in tokens by model size for pre-training: GPT-3 paper Table 2.1
# (125M-760M: 0.5M; 1.3B-2.7B: 1M; 6.7B-13B: 2M; 175B: 3.2M).
_PRETRAIN_BATCH_TOKENS = ((1e9, 0.5e6), (5e9, 1e6), (50e9, 2e6), (math.inf, 4e6))
# Fine-tuning default: 32 sequences per optimizer step (U: a common HF recipe, 8 per device x 4).
FINETUNE_BATCH_SEQUENCES = 32.0
# Non-transformers: 256 samples per step (Goyal et al. 2017 ResNet-50 reference batch).
VISION_BATCH_SAMPLES = 256.0
# Inference: vLLM's default max_num_seqs is 256 concurrent sequences.
MAX_INFERENCE_BATCH = 256
# A fabric is "enough" when exposed communication costs less than this share of the step.
FABRIC_TOLERANCE = 0.10


@dataclass(frozen=True)
class Topology:
    """How the GPUs are wired: per node, inside a node, and between nodes."""

    gpus_per_node: int
    interconnect: Interconnect
    fabric: Fabric
    network_gbps: float | None = None


@dataclass(frozen=True)
class Estimate:
    """The answer for one (workload, GPU, count, topology)."""

    workload: str
    gpu: str
    gpu_count: int
    fits: bool
    memory_per_gpu_gib: float
    memory_breakdown_gib: dict[str, float]
    strategy: Strategy
    total_flops: float
    efficiency: float
    efficiency_source: str
    wall_hours: float
    gpu_hours: float
    interconnect_required: Interconnect
    fabric_required: Fabric | None
    checkpoint_gib: float
    suggestions: tuple[str, ...] = ()
    assumptions: tuple[str, ...] = field(default=())
    # share of the wall-clock spent on training steps (the rest: checkpoints, interruptions)
    goodput: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "gpu": self.gpu,
            "gpu_count": self.gpu_count,
            "fits": self.fits,
            "memory_per_gpu_gib": self.memory_per_gpu_gib,
            "memory_breakdown_gib": dict(self.memory_breakdown_gib),
            "strategy": self.strategy.to_dict(),
            "total_flops": self.total_flops,
            "efficiency": self.efficiency,
            "efficiency_source": self.efficiency_source,
            "wall_hours": self.wall_hours,
            "gpu_hours": self.gpu_hours,
            "interconnect_required": self.interconnect_required.value,
            "fabric_required": self.fabric_required.value if self.fabric_required else None,
            "checkpoint_gib": self.checkpoint_gib,
            "goodput": self.goodput,
            "suggestions": list(self.suggestions),
            "assumptions": list(self.assumptions),
        }


def _result(
    spec: WorkloadSpec,
    gpu: GpuSpec,
    count: int,
    *,
    fits: bool,
    memory_bytes: float,
    breakdown: dict[str, float],
    strategy: Strategy,
    total_flops: float,
    efficiency: float,
    source: str,
    wall_hours: float,
    interconnect: Interconnect,
    fabric: Fabric | None,
    checkpoint_gib: float,
    suggestions: list[str] | tuple[str, ...],
    assumptions: list[str] | tuple[str, ...],
    goodput: float = 1.0,
) -> Estimate:
    """One :class:`Estimate`: per-GPU memory in GiB, GPU-hours = wall-clock x GPUs."""
    return Estimate(
        workload=spec.name,
        gpu=gpu.name,
        gpu_count=count,
        fits=fits,
        memory_per_gpu_gib=memory_bytes / mem.GIB,
        memory_breakdown_gib=breakdown,
        strategy=strategy,
        total_flops=total_flops,
        efficiency=efficiency,
        efficiency_source=source,
        wall_hours=wall_hours,
        gpu_hours=wall_hours * count,
        interconnect_required=interconnect,
        fabric_required=fabric,
        checkpoint_gib=checkpoint_gib,
        suggestions=tuple(suggestions),
        assumptions=tuple(assumptions),
        goodput=goodput,
    )


def default_topology(gpu: GpuSpec, gpu_count: int) -> Topology:
    """Up to 8 GPUs per node on the GPU's own link, InfiniBand between nodes."""
    gpn = max(1, min(gpu_count, 8))
    if gpn == 1:
        link = Interconnect.NONE
    elif gpu.gpu_link == "nvlink":
        link = Interconnect.NVSWITCH if gpn > 2 else Interconnect.NVLINK
    elif gpu.gpu_link == "nvlink-bridge":
        link = Interconnect.NVLINK
    else:
        link = Interconnect.PCIE
    return Topology(gpus_per_node=gpn, interconnect=link, fabric=Fabric.INFINIBAND)


def _links(gpu: GpuSpec, topo: Topology, count: int) -> Links:
    gpn = max(1, min(topo.gpus_per_node, count))
    intra, kind = eff.intra_node_link(gpu, topo.interconnect, gpn)
    node = eff.node_network_bytes_per_s(gpu, topo.fabric, topo.network_gbps, gpn)
    return Links(gpus_per_node=gpn, intra_bytes_per_s=intra, intra_kind=kind, node_bytes_per_s=node)


# -- spec facts (cached per spec) -------------------------------------------------------------------


def _global_batch(spec: WorkloadSpec) -> float:
    t = spec.train
    seq = spec.seq_len if spec.model.is_transformer else 1
    if t.global_batch_samples is not None:
        return t.global_batch_samples
    if t.global_batch_tokens is not None:
        return max(1.0, t.global_batch_tokens / seq)
    if not spec.model.is_transformer:
        return VISION_BATCH_SAMPLES
    if spec.kind is Kind.FINETUNE:
        return FINETUNE_BATCH_SEQUENCES
    params = spec.model.params or 0.0
    for limit, tokens in _PRETRAIN_BATCH_TOKENS:
        if params < limit:
            return max(1.0, tokens / seq)
    return 1.0  # pragma: no cover


def train_facts(
    spec: WorkloadSpec, *, optimizer: str | None = None, method: str | None = None
) -> TrainFacts:
    """Precompute what the strategy search needs from ``spec`` (optionally with a changed optimizer
    or method, for suggestions)."""
    key = f"facts:{optimizer}:{method}"
    cached = spec._cache.get(key)
    if isinstance(cached, TrainFacts):
        return cached
    m = spec.model
    t = spec.train
    opt = optimizer or t.optimizer.value
    meth = method or t.method.value
    params = float(m.params or 0.0)
    transformer = m.is_transformer
    precision = t.precision.value
    dropout = dropout_on(spec)
    if transformer:
        L, h, a, seq = int(m.layers or 1), int(m.hidden or 1), int(m.heads or 1), spec.seq_len
        vocab = int(m.vocab or 0)
        trainable = params if meth == "full" else mem.lora_params(L, h, t.lora_rank)
        model_flops = seq * compute.train_model_flops_per_token(params, L, h, seq, method=meth)
        rc = {
            mode: seq * compute.recompute_flops_per_token(params, L, h, seq, mode)
            for mode in ("none", "selective", "full")
        }
        # Korthikanti et al. 2022 eq. 2, with or without the dropout masks (memory.py)
        act_base = mem.layer_bytes_per_sbh(dropout=dropout) * seq * h
        act_score = mem.score_bytes_per_as2b(dropout=dropout) * a * seq * seq
        # encoder fine-tunes end in a small task head; decoders (and MLM pre-training) in the vocabulary
        logits = (
            mem.logits_bytes(seq, 1, vocab)
            if (m.arch == "decoder" or spec.kind is Kind.PRETRAIN)
            else 0.0
        )
        largest = float(m.largest_layer_params or max(12.0 * h * h, vocab * h))
        act_sample = 0.0
        # the output projection: 2·V·h FLOPs per token forward, twice that backward (4 with frozen
        # weights), the same accounting as 6·N
        head = seq * (6.0 if meth == "full" else 4.0) * vocab * h if logits else 0.0
        # one layer's weights: all but the vocabulary matrix (GPT layer 12·h², never below 4·h²)
        layer_params = max(params - vocab * h, 4.0 * h * h * L) / L
    else:
        L, h, a, seq, vocab = 1, 1, 1, 1, 0
        trainable = params
        fps = float(
            (spec.data.flops_per_sample if spec.data else None) or m.flops_per_sample or 0.0
        )
        model_flops = fps
        rc = {"none": 0.0}
        act_base = act_score = logits = head = layer_params = 0.0
        largest = float(m.largest_layer_params or params)
        act_sample = float(m.activation_gib_per_sample or 0.1) * mem.GIB
    state = mem.state_bytes(precision, opt)
    frozen_bytes = (
        mem.QLORA_BYTES_PER_PARAM if meth == "qlora" else mem.BYTES_PER_VALUE.get(precision, 2.0)
    )
    if precision == "fp32" and meth != "full":
        frozen_bytes = 4.0
    finetune = spec.kind is Kind.FINETUNE
    pin = {k: v for k, v in t.parallelism.model_dump().items() if v is not None}
    modes = (
        ("none", "selective", "full")
        if t.activation_checkpointing.value == "auto"
        else (t.activation_checkpointing.value,)
    )
    facts = TrainFacts(
        transformer=transformer,
        params=params,
        trainable=trainable,
        state=state,
        frozen_bytes=frozen_bytes,
        layers=L,
        hidden=h,
        heads=a,
        seq=seq,
        model_flops_per_seq=model_flops,
        recompute_flops_per_seq=rc,
        act_base_per_seq_layer=act_base,
        act_score_per_seq_layer=act_score,
        logits_per_seq=logits,
        act_per_sample=act_sample,
        samples_per_piece=spec.samples_per_piece,
        global_batch=_global_batch(spec),
        method=meth,
        optimizer=opt,
        finetune=finetune,
        # torch.amp keeps fp32 parameters, so DDP all-reduces fp32 gradients in fine-tuning stacks;
        # Megatron/FSDP pre-training reduces 16-bit gradients.
        grad_comm_bytes=4.0 if (finetune or precision == "fp32") else 2.0,
        opt_traffic=eff.OPTIMIZER_TRAFFIC_BYTES[opt],
        largest_layer=largest,
        head_flops_per_seq=head,
        pinned=pin,
        recompute_modes=modes,
        layer_params=layer_params,
        vocab=vocab,
    )
    spec._cache[key] = facts
    return facts


def dropout_on(spec: WorkloadSpec) -> bool:
    """Whether training stores dropout masks: ``model.dropout`` > 0, or unknown (a custom model
    without ``model.dropout``, assumed on as in Korthikanti et al. 2022)."""
    p = spec.model.dropout
    return p is None or p > 0


def _activation_assumption(spec: WorkloadSpec, flash: bool) -> str:
    """The assumptions line on stored activations: FlashAttention and dropout."""
    p = spec.model.dropout
    per_sbh = mem.layer_bytes_per_sbh(dropout=dropout_on(spec))
    if p is None:
        drop = (
            "dropout assumed on (model.dropout not given; set model.dropout: 0 for a model "
            "trained without it, as LLaMA, Falcon and MPT were)"
        )
    elif p > 0:
        drop = f"dropout {p:g} (model.dropout)"
    else:
        drop = "no dropout (model.dropout: 0), so no dropout masks"
    return (
        f"FlashAttention {'on' if flash else 'off (GPU older than Ampere)'}; activations per "
        f"Korthikanti et al. 2022, {per_sbh:g}·s·b·h bytes per layer with {drop}"
    )


def _checkpoint_bytes(f: TrainFacts) -> float:
    """A restartable checkpoint: weights and optimizer states of the trainable parameters."""
    return f.trainable * (f.state.weights + f.state.optimizer)


# -- training ---------------------------------------------------------------------------------------


def _interconnect_required(s: Strategy, topo: Topology) -> Interconnect:
    """The link the strategy wants: NVSwitch for TP > 2, NVLink for TP 2, else PCIe between GPUs.

    The time was computed on ``topo``'s link, so a weaker link there is, by construction, enough for
    the reported hours (tensor parallel over PCIe is slow, and priced in).
    """
    if s.tensor_parallel > 2:
        wanted = Interconnect.NVSWITCH
    elif s.tensor_parallel == 2:
        wanted = Interconnect.NVLINK
    elif s.gpus_per_piece > 1 and topo.gpus_per_node > 1:
        wanted = Interconnect.PCIE
    else:
        return Interconnect.NONE
    if topo.interconnect.rank < wanted.rank and topo.interconnect is not Interconnect.NONE:
        return topo.interconnect
    return wanted


def _best_training(
    f: TrainFacts, gpu: GpuSpec, count: int, topo: Topology, pieces: int, flash: bool
) -> tuple[Candidate | None, Candidate, int, float]:
    """Best (candidate, least-memory candidate, concurrent pieces, total seconds) over piece splits.

    Called only where the pinned layout divides ``count`` (so at least the whole count has one).
    """
    best: tuple[Candidate | None, Candidate, int, float] | None = None
    sizes = [count] if pieces == 1 else [d for d in range(1, count + 1) if count % d == 0]
    for size in sizes:
        concurrent = min(count // size, pieces)
        sub = replace(topo, gpus_per_node=min(topo.gpus_per_node, size))
        cand, least = search_training(f, gpu, size, _links(gpu, sub, size), flash=flash)
        if least is None:
            continue  # the pinned layout does not divide this group size
        if cand is None:
            if best is None:
                best = (None, least, concurrent, math.inf)
            continue
        rounds = math.ceil(pieces / concurrent)
        nodes = math.ceil(size / max(1, sub.gpus_per_node))
        steady_h = cand.piece_seconds / 3600.0
        overhead = eff.failure_overhead(size, steady_h, _checkpoint_bytes(f), nodes)
        total = rounds * cand.piece_seconds * (1.0 + overhead)
        if best is None or best[0] is None or total < best[3] * 0.99:
            best = (cand, least, concurrent, total)
    assert best is not None
    return best


# Seconds per piece of a pinned layout on plain Ethernet (None: it does not fit), by what the
# search reads: GPU, layout, GPUs per piece, the Ethernet topology's links and FlashAttention.
FabricMemo = dict[tuple[GpuSpec, int, int, int, str, int, Links, bool], float | None]


def _fabric_required(
    f: TrainFacts,
    gpu: GpuSpec,
    c: Candidate,
    topo: Topology,
    flash: bool,
    memo: FabricMemo | None = None,
) -> Fabric | None:
    """Ethernet when the chosen layout runs within FABRIC_TOLERANCE as fast on it, else InfiniBand.

    The Ethernet search does not depend on the offer's own fabric or network speed, so a quote that
    estimates one GPU shape under several fabrics runs it once when ``memo`` (kept per workload
    spec, with the spec's facts ``f``) is passed.
    """
    s = c.strategy
    if s.gpus_per_piece <= topo.gpus_per_node:
        return None
    weak = replace(topo, fabric=Fabric.ETHERNET, network_gbps=None)
    links = _links(gpu, weak, s.gpus_per_piece)
    key = (
        gpu,
        s.tensor_parallel,
        s.pipeline_parallel,
        s.zero_stage,
        s.activation_checkpointing,
        s.gpus_per_piece,
        links,
        flash,
    )
    if memo is not None and key in memo:
        ethernet_s = memo[key]
    else:
        cand, _ = search_training(_pinned(f, s), gpu, s.gpus_per_piece, links, flash=flash)
        ethernet_s = None if cand is None else cand.piece_seconds
        if memo is not None:
            memo[key] = ethernet_s
    if ethernet_s is not None and ethernet_s <= c.piece_seconds * (1.0 + FABRIC_TOLERANCE):
        return Fabric.ETHERNET
    return Fabric.INFINIBAND


def _pinned(f: TrainFacts, s: Strategy) -> TrainFacts:
    pin = {"tensor": s.tensor_parallel, "pipeline": s.pipeline_parallel, "zero": s.zero_stage}
    return replace(f, pinned=pin, recompute_modes=(s.activation_checkpointing,))


def _efficiency_source(gpu: GpuSpec, f: TrainFacts) -> str:
    g = eff.gemm_fraction(gpu)
    text = (
        f"physics model: {gpu.name} matmuls at {g:.2f} of the {gpu.tensor_tflops_dense:g} TFLOPS dense peak "
        f"(GPU-generation default calibrated on published runs, estimation.md s1.4/s3"
        f"{', adjusted for the matmul shapes' if f.transformer else ''}), plus activation "
        f"memory traffic at {gpu.memory_bandwidth_gb_per_s:g} GB/s, communication over the topology's links, "
        "optimizer step, pipeline bubble and failure/checkpoint goodput"
    )
    if f.finetune:
        text += f"; x{eff.FINETUNE_STACK_FACTOR} for an eager-mode fine-tuning stack"
    if f.method == "qlora":
        text += f"; /{eff.QLORA_SLOWDOWN} for QLoRA dequantisation"
    return text


def _train_suggestions(
    spec: WorkloadSpec, f: TrainFacts, gpu: GpuSpec, count: int, topo: Topology, flash: bool
) -> list[str]:
    out: list[str] = []
    needed = f"{_least_gib(f, gpu, count, topo, flash):.1f} GiB"
    out.append(
        f"needs at least {needed} per GPU even with recompute and sharding; {gpu.name} has {gpu.memory_gib:g} GiB"
    )
    if f.optimizer == "adamw" and f.method == "full":
        f8 = train_facts(spec, optimizer="adamw-8bit")
        if _fits(f8, gpu, count, topo, flash):
            out.append("8-bit AdamW (bitsandbytes) would fit: set training.optimizer: adamw-8bit")
    for n in (2, 4, 8, 16, 32, 64, 128, 256, 512):
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
    bigger = sorted(
        (g for g in load_gpu_catalog().gpus if g.memory_gib > gpu.memory_gib),
        key=lambda g: (g.memory_gib, g.name),
    )
    for other in bigger:
        if spec.train.precision.value == "bf16" and not other.bf16:
            continue
        if _fits(
            f, other, count, default_topology(other, count), eff.supports_flash_attention(other)
        ):
            out.append(f"a bigger GPU would fit: {count} x {other.name} ({other.memory_gib:g} GiB)")
            break
    return out


def _fits(f: TrainFacts, gpu: GpuSpec, count: int, topo: Topology, flash: bool) -> bool:
    cand, _ = search_training(f, gpu, count, _links(gpu, topo, count), flash=flash)
    return cand is not None


def _least_gib(f: TrainFacts, gpu: GpuSpec, count: int, topo: Topology, flash: bool) -> float:
    _, least = search_training(f, gpu, count, _links(gpu, topo, count), flash=flash)
    return least.memory_bytes / mem.GIB if least is not None else math.inf


def pinned_gpus(spec: WorkloadSpec) -> int:
    """GPUs in one replica of the pinned layout (``training.parallelism`` tensor x pipeline; 1 when
    neither is pinned or for inference): every training GPU count must be a multiple of it."""
    if spec.kind is Kind.INFERENCE:
        return 1
    p = spec.train.parallelism
    return (p.tensor or 1) * (p.pipeline or 1)


def layout_error(spec: WorkloadSpec, gpu_count: int) -> ConfigError | None:
    """The error for a pinned layout that ``gpu_count`` GPUs cannot hold, or None when they can.

    :func:`estimate` reports such a count as not fitting (the quote skips it); a caller asking for
    exactly that count (``planner estimate``) raises this instead.
    """
    unit = pinned_gpus(spec)
    if gpu_count % unit == 0:
        return None
    p = spec.train.parallelism
    pinned = {k: v for k, v in (("tensor", p.tensor), ("pipeline", p.pipeline)) if v is not None}
    problem = unplaceable_layout(pinned, gpu_count)
    key = "tensor" if p.tensor is not None and p.tensor > 1 else "pipeline"
    nearest = math.ceil(gpu_count / unit) * unit
    return ConfigError(
        problem or f"the pinned layout needs a multiple of {unit} GPUs",
        key_path=f"training.parallelism.{key}",
        hint=f"use a GPU count that is a multiple of {unit} (such as {nearest}), or remove "
        f"training.parallelism.{key} to let the search choose",
    )


def _unplaceable(
    spec: WorkloadSpec,
    f: TrainFacts,
    gpu: GpuSpec,
    count: int,
    topo: Topology,
    flash: bool,
    problem: str,
    assumptions: list[str],
) -> Estimate:
    """A count the pinned tensor x pipeline layout does not divide: not runnable here.

    Memory shown: the least-memory layout the search finds on these GPUs without the tensor and
    pipeline pins (the model states stay those of the workload).
    """
    free = replace(f, pinned={k: v for k, v in f.pinned.items() if k not in ("tensor", "pipeline")})
    _, least = search_training(free, gpu, count, _links(gpu, topo, count), flash=flash)
    unit = pinned_gpus(spec)
    s = Strategy(
        data_parallel=0,
        tensor_parallel=f.pinned.get("tensor", 1),
        pipeline_parallel=f.pinned.get("pipeline", 1),
        method=f.method,
        optimizer=f.optimizer,
        gpus_per_piece=count,
        reason=f"not runnable: {problem} (training.parallelism)",
    )
    return _result(
        spec,
        gpu,
        count,
        fits=False,
        memory_bytes=least.memory_bytes if least is not None else 0.0,
        breakdown=least.breakdown if least is not None else {},
        strategy=s,
        total_flops=f.model_flops_per_seq * f.samples_per_piece * spec.pieces,
        efficiency=0.0,
        source=_efficiency_source(gpu, f),
        wall_hours=math.inf,
        interconnect=_interconnect_required(s, topo),
        fabric=None,
        checkpoint_gib=_checkpoint_bytes(f) / mem.GIB,
        suggestions=[f"use a multiple of {unit} GPUs for the pinned training.parallelism layout"],
        assumptions=assumptions,
    )


def _estimate_training(spec: WorkloadSpec, gpu: GpuSpec, count: int, topo: Topology) -> Estimate:
    f = train_facts(spec)
    flash = (
        eff.supports_flash_attention(gpu)
        if spec.train.flash_attention is None
        else spec.train.flash_attention
    )
    model_flops = f.model_flops_per_seq * f.samples_per_piece * spec.pieces
    ckpt_gib = _checkpoint_bytes(f) / mem.GIB
    assumptions = [
        f"{f.samples_per_piece:.4g} {'sequences of ' + str(f.seq) + ' tokens' if f.transformer else 'samples'} per piece, "
        f"{spec.pieces} piece(s); global batch {f.global_batch:.4g} per optimizer step",
        f"{spec.train.precision.value} mixed precision, {f.optimizer}: {f.state.total:g} bytes per trainable parameter "
        "(weights + gradients + optimizer states, ZeRO convention)",
        _activation_assumption(spec, flash),
        "interruptions at the Llama 3 rate with Young/Daly checkpointing",
    ]
    if f.method != "full":
        assumptions.append(
            f"{f.method}: rank {spec.train.lora_rank} adapters on every linear layer, {f.trainable:.3g} trainable parameters"
        )
    problem = unplaceable_layout(f.pinned, count)
    if problem is not None:
        return _unplaceable(spec, f, gpu, count, topo, flash, problem, assumptions)
    cand, least, concurrent, total_s = _best_training(f, gpu, count, topo, spec.pieces, flash)
    if cand is None:
        s = replace(least.strategy, reason="nothing fits; shown: the layout with the least memory")
        return _result(
            spec,
            gpu,
            count,
            fits=False,
            memory_bytes=least.memory_bytes,
            breakdown=least.breakdown,
            strategy=s,
            total_flops=model_flops,
            efficiency=0.0,
            source=_efficiency_source(gpu, f),
            wall_hours=math.inf,
            interconnect=_interconnect_required(s, topo),
            fabric=None,
            checkpoint_gib=ckpt_gib,
            suggestions=_train_suggestions(spec, f, gpu, count, topo, flash),
            assumptions=assumptions,
        )
    size = cand.strategy.gpus_per_piece
    s = replace(cand.strategy, concurrent_pieces=concurrent)
    s = replace(s, reason=explain(cand, size))
    wall_h = total_s / 3600.0
    used = size * concurrent
    efficiency = model_flops / (count * gpu.peak_flops * total_s) if total_s > 0 else 0.0
    sub = replace(topo, gpus_per_node=min(topo.gpus_per_node, size))
    suggestions: list[str] = []
    if used < count:
        suggestions.append(f"only {used} of {count} GPUs are busy with {spec.pieces} pieces")
    if cand.comm_exposed_s > 0.25 * cand.step_s:
        suggestions.append(
            "communication takes over a quarter of each step: a faster interconnect or fabric would help"
        )
    steady_s = math.ceil(spec.pieces / concurrent) * cand.piece_seconds
    return _result(
        spec,
        gpu,
        count,
        fits=True,
        memory_bytes=cand.memory_bytes,
        breakdown=cand.breakdown,
        strategy=s,
        total_flops=model_flops,
        efficiency=efficiency,
        source=_efficiency_source(gpu, f),
        wall_hours=wall_h,
        interconnect=_interconnect_required(s, sub),
        fabric=_fabric_required(
            f, gpu, cand, sub, flash, spec._cache.setdefault("fabric-searches", {})
        ),
        checkpoint_gib=ckpt_gib,
        suggestions=suggestions,
        assumptions=assumptions,
        goodput=steady_s / total_s if total_s > 0 else 1.0,
    )


# -- inference --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Replica:
    tp: int
    batch: int
    tokens_per_s: float
    memory_bytes: float
    breakdown: dict[str, float]


def _inference_replica(spec: WorkloadSpec, gpu: GpuSpec, tp: int, links: Links) -> _Replica | None:
    m = spec.model
    inf = spec.inference
    assert inf is not None
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


def _estimate_inference(spec: WorkloadSpec, gpu: GpuSpec, count: int, topo: Topology) -> Estimate:
    inf = spec.inference
    assert inf is not None
    m = spec.model
    params = float(m.params or 0.0)
    L, h = int(m.layers or 1), int(m.hidden or 1)
    gpn = max(1, min(topo.gpus_per_node, count))
    best: tuple[float, _Replica] | None = None
    for tp in (1, 2, 4, 8):
        if tp > gpn or count % tp or int(m.heads or 1) % tp:
            continue
        r = _inference_replica(spec, gpu, tp, _links(gpu, topo, count))
        if r is None:
            continue
        capacity = (count // tp) * r.tokens_per_s
        if best is None or capacity > best[0] * 1.01:
            best = (capacity, r)
    per_req_flops = inf.prompt_tokens * compute.prefill_flops_per_token(
        params, L, h, inf.prompt_tokens
    ) + inf.output_tokens * compute.decode_flops_per_token(
        params, L, h, inf.prompt_tokens + inf.output_tokens / 2.0
    )
    weights_gib = params * mem.BYTES_PER_VALUE[inf.precision.value] / mem.GIB
    assumptions = (
        f"{inf.precision.value} weights, 16-bit KV cache, {inf.prompt_tokens:g} prompt + {inf.output_tokens:g} output tokens per request",
        "decode bound by reading weights + KV cache at 80% of memory bandwidth; prefill compute bound",
        f"continuous batching up to {inf.max_batch or MAX_INFERENCE_BATCH} sequences (vLLM default 256)",
    )
    source = f"roofline: max(bytes / {gpu.memory_bandwidth_gb_per_s:g} GB/s, FLOPs / ({gpu.tensor_tflops_dense:g} TFLOPS x {eff.gemm_fraction(gpu):.2f}))"
    if best is None:
        s = Strategy(
            data_parallel=0,
            tensor_parallel=min(8, gpn),
            method="inference",
            gpus_per_piece=count,
            reason="weights and one sequence of KV cache do not fit",
        )
        need = weights_gib * 1.1 + mem.FRAMEWORK_FIXED_GIB
        sugg = [
            f"weights alone are {weights_gib:.1f} GiB: use more GPUs per replica (tensor parallel, up to {gpn} here), a bigger GPU, or int8/int4 weights"
        ]
        return _result(
            spec,
            gpu,
            count,
            fits=False,
            memory_bytes=need * mem.GIB,
            breakdown={"weights": weights_gib},
            strategy=s,
            total_flops=0.0,
            efficiency=0.0,
            source=source,
            wall_hours=math.inf,
            interconnect=Interconnect.NVSWITCH if gpn > 2 else Interconnect.NVLINK,
            fabric=None,
            checkpoint_gib=weights_gib,
            suggestions=sugg,
            assumptions=assumptions,
        )
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
    link = (
        Interconnect.NONE
        if r.tp == 1
        else (Interconnect.NVSWITCH if r.tp > 2 else Interconnect.NVLINK)
    )
    if r.tp == 1 and count > 1:
        link = Interconnect.NONE
    return _result(
        spec,
        gpu,
        count,
        fits=fits,
        memory_bytes=r.memory_bytes,
        breakdown=r.breakdown,
        strategy=s,
        total_flops=total_flops,
        efficiency=efficiency,
        source=source,
        wall_hours=wall_h,
        interconnect=link,
        fabric=None,
        checkpoint_gib=weights_gib,
        suggestions=suggestions,
        assumptions=assumptions,
    )


def estimate(
    spec: WorkloadSpec, gpu: GpuSpec, gpu_count: int, *, topology: Topology | None = None
) -> Estimate:
    """Memory, strategy, FLOPs, efficiency, hours and interconnect for ``spec`` on ``gpu_count`` x ``gpu``."""
    if gpu_count < 1:
        raise ConfigError("GPU count must be at least 1", key_path="gpu_count")
    topo = topology or default_topology(gpu, gpu_count)
    if spec.kind is Kind.INFERENCE:
        return _estimate_inference(spec, gpu, gpu_count, topo)
    return _estimate_training(spec, gpu, gpu_count, topo)
