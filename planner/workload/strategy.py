"""Parallel strategy search: the fastest layout that fits, the simplest among equals (pure).

For a training job on ``count`` GPUs the search walks tensor-parallel sizes (powers of two inside a
node), pipeline sizes, ZeRO stages 0-3 (3 = FSDP full shard) and activation checkpointing (none,
selective where FlashAttention is unavailable, block, full), sizes the largest micro-batch that fits,
and times one optimizer step.  Block recompute (Megatron-LM ``--recompute-method block
--recompute-num-layers N``) recomputes the fewest of each pipeline stage's layers that fit the
micro-batch (:func:`_block_layers`), so a job just over the memory pays a few percent of recompute,
not the third of full recompute.  The step:

``step = m·slot + (pp - 1)/v·(t_mb + t_tp + v·t_p2p) + exposed data-parallel communication + optimizer step``

with ``m`` micro-batches per step (gradient accumulation), ``t_mb`` the compute + memory-traffic time
of one micro-batch (:mod:`planner.workload.efficiency`; the matmul efficiency follows the
micro-batch's matmul shapes, :func:`~planner.workload.efficiency.matmul_fraction`), ``t_tp`` the
tensor-parallel all-reduces (4 per layer per micro-batch, 6 for each recomputed layer; Megatron), pipelined
with the matmuls on Hopper and newer over NVLink
(:func:`~planner.workload.efficiency.exposed_tensor_parallel_seconds`), the pipeline bubble
``pp - 1`` (1F1B) or ``(pp - 1)/v`` with ``v`` interleaved chunks per rank
(:func:`~planner.workload.parallel.pipeline_schedule`), the stage-to-stage sends ``t_p2p`` (blocking
in plain 1F1B, ``slot = t_mb + t_tp + t_p2p``; overlapped with a chunk's compute under interleaving,
:func:`~planner.workload.parallel.steady_slot_seconds`), the slowest stage's share of the FLOPs
(whole layers, the LM head counted as one of them when the stages are balanced,
:func:`~planner.workload.parallel.busiest_stage`), the gradient all-reduce / reduce-scatter
(2·G bytes) overlapped with the last backward pass, chunk by chunk under interleaving
(:func:`~planner.workload.parallel.exposed_gradient_sync`), and ZeRO-3's per-micro-batch gathers (3·G) overlapped with that
micro-batch.  Candidates within 1% of the fastest are ranked DP < ZeRO-1 < ZeRO-2 < ZeRO-3 < TP < PP
and the simplest wins.

With the optimizer states offloaded the step adds the PCIe round trip and the CPU optimizer; with
them on NVMe (``offload: nvme``, ZeRO-3 only) also the node's NVMe reads and writes of every
state (:func:`_nvme_seconds`).  A paged optimizer (bitsandbytes, states in CUDA unified memory)
steps on the GPU; its states need no room to fit, they take what the GPU has spare once the
micro-batch is placed, and the rest crosses PCIe twice per step, in and back out
(:func:`_paging`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple, TypeVar

from planner.gpu_specs import GpuSpec
from planner.workload import efficiency as eff
from planner.workload.frameworks import FrameworkProfile
from planner.workload.memory import (
    FRAGMENTATION,
    FRAMEWORK_FIXED_GIB,
    FROZEN_GRADIENT_FSDP_STACKS,
    GIB,
    NVME_GRADIENT_BYTES_PER_PARAM,
    QLORA_BYTES_PER_PARAM,
    StateBytes,
    autocast_cache_bytes,
    block_recompute_bytes_per_layer,
    fp16_optimizer_step_bytes,
    nvme_state_bytes_per_param,
    offloaded_gradient_bytes,
    paged_spill_bytes,
    recompute_peak_bytes,
    unsynced_gradient_bytes,
)
from planner.workload.models import unet_bytes_per_flop
from planner.workload.parallel import (
    Links,
    busiest_stage,
    collective_seconds,
    context_chunks,
    exposed_gradient_sync,
    interleave_choices,
    interleaved_extra_share,
    pipeline_schedule,
)

MICRO_BATCH_TOKENS = 8192


@dataclass(frozen=True)
class Strategy:
    """How the job is laid out on its GPUs."""

    data_parallel: int = 1
    tensor_parallel: int = 1
    pipeline_parallel: int = 1
    zero_stage: int = 0  # 0 plain DDP, 1-2 ZeRO, 3 ZeRO-3 / FSDP full shard
    activation_checkpointing: str = "none"  # none | selective | block | full
    method: str = "full"  # full | lora | qlora | inference
    optimizer: str = ""
    micro_batch_size: int = (
        1  # sequences (samples) per GPU per micro-step; inference: concurrent sequences
    )
    grad_accumulation: int = 1
    virtual_stages: int = 1  # interleaved 1F1B: model chunks per pipeline rank (1 = plain 1F1B)
    gpus_per_piece: int = 1
    concurrent_pieces: int = 1
    reason: str = ""
    # mixture of experts: the GPUs the routed experts are spread over, each holding whole experts
    # (Megatron Core's expert_model_parallel_size with expert_tensor_parallel_size 1)
    expert_parallel: int = 1
    # block recompute: layers of each pipeline stage (of the whole model without one) recomputed in
    # the backward pass, out of ``layers_per_stage``; 0 under the other modes
    recomputed_layers: int = 0
    layers_per_stage: int = 0
    # long sequences: the GPUs each sequence is split over (context parallel; 1 = none)
    context_parallel: int = 1

    @property
    def recompute_text(self) -> str:
        """The recompute mode in words: "full recompute", "block recompute of 2 of 8 layers per
        stage"; empty without recompute."""
        mode = self.activation_checkpointing
        if mode == "none":
            return ""
        if mode == "block" and self.layers_per_stage:
            per = " per stage" if self.pipeline_parallel > 1 else ""
            return (
                f"block recompute of {self.recomputed_layers} of {self.layers_per_stage} "
                f"layers{per}"
            )
        return f"{mode} recompute"

    @property
    def name(self) -> str:
        parts = []
        if self.method == "inference":
            parts.append(f"{self.data_parallel} replica{'s' if self.data_parallel != 1 else ''}")
            if self.tensor_parallel > 1:
                parts.append(f"TP{self.tensor_parallel}")
            return " x ".join(parts)
        alone = self.tensor_parallel == 1 and self.pipeline_parallel == 1
        if self.data_parallel > 1 or (alone and self.context_parallel == 1):
            parts.append(f"DP{self.data_parallel}")
        if self.zero_stage:
            parts.append("ZeRO-3/FSDP" if self.zero_stage == 3 else f"ZeRO-{self.zero_stage}")
        if self.tensor_parallel > 1:
            parts.append(f"TP{self.tensor_parallel}")
        if self.context_parallel > 1:
            parts.append(f"CP{self.context_parallel}")
        if self.expert_parallel > 1:
            parts.append(f"EP{self.expert_parallel}")
        if self.pipeline_parallel > 1:
            parts.append(f"PP{self.pipeline_parallel}")
        if self.activation_checkpointing != "none":
            parts.append(self.recompute_text)
        if self.method != "full":
            parts.append(self.method.upper() if self.method == "qlora" else "LoRA")
        text = " + ".join(parts)
        if self.concurrent_pieces > 1:
            text += f" ({self.concurrent_pieces} pieces at once)"
        return text

    def to_dict(self) -> dict[str, Any]:
        record = asdict(self)
        record["name"] = self.name
        return record


@dataclass(frozen=True)
class TrainFacts:
    """Everything about a training spec the search needs, precomputed once per spec."""

    transformer: bool
    params: float
    trainable: float
    state: StateBytes
    frozen_bytes: float
    layers: int
    hidden: int
    heads: int
    seq: int  # tokens per sequence (1 for non-transformers)
    model_flops_per_seq: float
    recompute_flops_per_seq: dict[str, float]
    # 34·s·h bytes (32 without dropout); of them 8·s·h scale with the attention width
    act_base_per_seq_layer: float
    act_score_per_seq_layer: float  # 5·a·s² bytes (2 without dropout)
    logits_per_seq: float
    act_per_sample: float  # non-transformers, bytes
    samples_per_piece: float
    global_batch: float  # sequences / samples per optimizer step
    method: str
    optimizer: str
    finetune: bool
    grad_comm_bytes: float
    opt_traffic: float
    largest_layer: float
    pinned: dict[str, int] = field(default_factory=dict)
    # output-layer (LM head) FLOPs per sequence, forward + backward: they all land on the last
    # pipeline stage
    head_flops_per_seq: float = 0.0
    recompute_modes: tuple[str, ...] = ("none", "selective", "block", "full")
    # parameters of one transformer layer (all weights but the vocabulary matrix, over the layers)
    # and the vocabulary: the matmul shapes (efficiency.matmul_fraction)
    layer_params: float = 0.0
    vocab: int = 0
    # the training precision (spec.Precision) and, for fp8, the share of the model FLOPs that run
    # in the fp8 linear layers (attention and the LM head stay in bf16 under Transformer Engine)
    precision: str = "bf16"
    linear_share: float = 0.0
    # the software stack (planner.workload.frameworks) and whether ``auto`` chose it; None in
    # hand-built facts: every layout, no stack factor
    framework: FrameworkProfile | None = None
    framework_auto: bool = False
    # the stack auto picks for this kind of job before the pinned layout is considered
    # (frameworks.auto_framework): where it differs from ``framework``, the pins decided
    framework_usual: str = ""
    # of act_base_per_seq_layer, the bytes a stack whose tensor parallelism does not split the
    # norms over the sequence keeps whole on every tensor-parallel rank (0: sequence parallel)
    act_replicated_per_seq_layer: float = 0.0
    # bytes per token and layer (per sample for a non-transformer, whose facts count one layer and
    # one-token samples) an eager stack's separate elementwise kernels stream beyond a fused
    # stack's (efficiency.eager_traffic, EAGER_IMAGE_VALUES_PER_STORED_VALUE); None for a fused or
    # compiled stack
    eager_traffic: eff.EagerTraffic | None = None
    # QLoRA's frozen parameters kept in NF4, dequantised for every matmul (0 without QLoRA), and
    # the bytes each takes (memory.NF4_BYTES_PER_PARAM: nf4-dq 4.127 bits, nf4 4.5)
    quantised_params: float = 0.0
    quantised_bytes_per_param: float = QLORA_BYTES_PER_PARAM
    # the bytes each dequantisation writes per weight: its 16-bit copy, and a cast to bf16 where
    # the stack quantised from fp16 (efficiency.QLORA_FP16_QUANTISING_STACKS)
    dequant_write_bytes_per_param: float = eff.QLORA_DEQUANT_WRITE_BYTES_PER_PARAM
    # the 16-bit copy of a quantised output head bitsandbytes makes for its matmul while every
    # layer's activations are held (memory.head_dequant_bytes; 0 where the head stays 16-bit)
    head_dequant_bytes: float = 0.0
    # kernels one micro-batch launches whatever its size, each paying the GPU's kernel floor
    # (:func:`kernel_floor_seconds`), where the model's layer table gives them (a diffusion UNet:
    # training._other_shape); 0: not charged, as for transformers and CNNs, whose calibrated matmul
    # fractions hold their per-kernel costs at the sizes they were set on
    kernels_per_micro_batch: float = 0.0
    # a diffusion UNet's pipeline (models.DIFFUSION_PIPELINES), whose layer table times its
    # convolutions and linear layers at their own shapes (models.unet_bytes_per_flop); "" for
    # every other model without layers, timed at the family's calibrated fraction
    unet_pipeline: str = ""
    # a convolutional network's share of its FLOPs in 3x3 stride-1 convolutions, which run as
    # Winograd transforms where its convolutions run on the CUDA cores (efficiency.winograd_speedup)
    conv3x3_share: float = 0.0
    # host seconds an eager stack takes to dispatch one transformer layer of a micro-batch
    # (eager_host_seconds): the stack's per-layer figure for this layer's kind and adapters; 0 for
    # a fused or compiled stack
    eager_host_s_per_layer: float = 0.0
    # the fused attention kernel's class (efficiency.ATTENTION_KERNELS): training.attention_kernel,
    # else the stack's; None in hand-built facts: the stack's, cudnn without one
    attention_kernel: str | None = None
    # mixture of experts: routed experts per layer (0: dense), experts per token, and the share of
    # the parameters in the routed experts (sharded over the expert-parallel ranks)
    experts: int = 0
    experts_per_token: int = 0
    expert_share: float = 0.0
    # the all-to-alls overlap another micro-batch's computation (:func:`exposed_all_to_all_seconds`)
    overlap_all_to_all: bool = False
    # one routed expert's width (columns of its gate and up projections; 0: dense): the experts'
    # own matmul shape (efficiency.expert_shape)
    expert_ffn: float = 0.0
    # the dispatcher sends a token once to each node holding one of its experts and forwards it
    # there over NVLink (:func:`network_copies_per_token`); group-limited routing: the experts fall
    # in ``expert_groups`` equal groups and a token picks its experts from ``groups_per_token`` of
    # them (0: no groups)
    dispatch_per_node: bool = False
    expert_groups: int = 0
    groups_per_token: int = 0
    # optimizer states in host memory (ZeRO-Offload), and gradients applied in the backward pass
    # (never all held)
    host_optimizer: bool = False
    optimizer_in_backward: bool = False
    # bytes per trainable parameter of a paged optimizer's states in CUDA unified memory
    # (memory.paged_state_bytes; 0: not paged): part of ``state.optimizer``, resident on the GPU
    # only where it has room
    paged_bytes: float = 0.0
    # ... and those states on the node's local NVMe (ZeRO-Infinity, ZeRO-3 only), read and written
    # at these speeds per node (bytes/s)
    nvme_optimizer: bool = False
    nvme_read_bytes_per_s: float = 0.0
    nvme_write_bytes_per_s: float = 0.0
    # attention-core FLOPs per sequence by recompute mode (part of the model and recompute FLOPs),
    # and whether the model is a causal decoder (efficiency.attention_time_factor)
    attention_flops_per_seq: dict[str, float] = field(default_factory=dict)
    causal: bool = False
    # the share of a causal decoder's attention FLOPs a fused kernel executes under its sliding
    # windows (efficiency.window_attention_share; 1: none)
    attention_window_share: float = 1.0
    # the keys' (and values') width, kv_heads x head_dim, and the key/value heads: what context
    # parallelism passes round its ring (0: the hidden size, one head per query head)
    kv_width: float = 0.0
    kv_heads: int = 0
    # eager torch.autocast (the stack's ``autocast`` under fp16/bf16), run by the layouts of
    # :func:`autocast_layout`: the model states' split there (memory.autocast_state_bytes; None
    # where the stack or the precision does not autocast), the parameters cast to 16 bits each
    # forward pass (memory.autocast_cast_params), and the bytes its fp32 norms and softmax add per
    # sequence and layer (memory.autocast_extra_bytes_per_sbh; the softmax's only without a fused
    # attention kernel, memory.autocast_score_bytes_per_as2b)
    autocast_state: StateBytes | None = None
    autocast_params: float = 0.0
    autocast_act_per_seq_layer: float = 0.0
    autocast_score_per_seq_layer: float = 0.0
    # what an arithmetic GeLU's fp32 chain under autocast stores per sequence and layer beyond its
    # 16-bit chain (efficiency.arithmetic_gelu_stored_bytes): MLP-wide, so split over the
    # tensor-parallel ranks with the MLP
    autocast_mlp_per_seq_layer: float = 0.0
    # an image model's CPU data loader (planner.workload.data_loader): seconds of one GPU's loader
    # time per sample (0: no CPU loader, e.g. a transformer or a GPU decoder); a step lasts at
    # least the busiest rank's samples times this, the loader running ahead of the GPU
    loader_s_per_sample: float = 0.0

    # the hash (:meth:`__hash__`), worked out once: the search's memos hash the facts thousands of
    # times a quote
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash(self._key()))

    def _key(self) -> tuple[Any, ...]:
        """The scalars that tell one workload's facts from another's, and the pins that tell its
        pinned copies apart (:meth:`__hash__`)."""
        return (
            self.params,
            self.trainable,
            self.layers,
            self.hidden,
            self.seq,
            self.global_batch,
            self.method,
            self.optimizer,
            self.precision,
            tuple(sorted(self.pinned.items())),
            self.recompute_modes,
        )

    def __hash__(self) -> int:
        """Facts key the search's memos (:func:`_per_sequence_memo`, :func:`_gpu_constants`): a
        quote's hundreds of searches share a few facts.  The generated hash would fail on the dict
        fields, so this one hashes :meth:`_key`; equal facts hash alike, and facts that collide
        are told apart by the field-by-field equality."""
        return self._hash


def autocast_layout(f: TrainFacts, zero: int) -> bool:
    """Whether a layout with ZeRO stage ``zero`` runs eager torch.autocast over fp32 weights: the
    stack does under fp16/bf16 (``f.autocast_state``), with plain data parallel and the optimizer
    on the GPU -- ZeRO, FSDP and the offloading engines hold 16-bit weights of their own
    (planner/workload/memory.py)."""
    return f.autocast_state is not None and zero == 0 and not f.host_optimizer


@dataclass(frozen=True)
class Candidate:
    """A layout the search chose (or the least-memory one, to report a miss): its strategy, its
    memory per GPU and what one piece of the job takes on it."""

    strategy: Strategy
    fits: bool
    memory_bytes: float
    breakdown: dict[str, float]
    piece_seconds: float
    hardware_flops_per_piece: float
    comm_exposed_s: float
    step_s: float
    # seconds of each step spent waiting on NVMe (offload: nvme), stragglers included
    nvme_step_s: float = 0.0
    # a paged optimizer: its states on this GPU (bytes), the part evicted to host RAM, and the
    # seconds of each step spent paging it over PCIe, stragglers included
    paged_bytes: float = 0.0
    paged_spill_bytes: float = 0.0
    paging_s: float = 0.0
    # the step as the GPU work alone sets it, before the CPU data loader's floor
    gpu_step_s: float = 0.0


def _divisors_pow2(n: int, limit: int) -> list[int]:
    out, k = [], 1
    while k <= min(n, limit):
        if n % k == 0:
            out.append(k)
        k *= 2
    return out


# Framework memory outside the model (CUDA context, NCCL buffers), bytes per GPU.
_FIXED_BYTES = FRAMEWORK_FIXED_GIB * GIB


class _Search(NamedTuple):
    """What one search reads besides the facts, resolved once: the GPU's speeds, the links and the
    choices to walk (pins applied).

    The matmul efficiency of :func:`~planner.workload.efficiency.matmul_fraction` is split into its
    per-GPU part (``inverse_at_zero``, ``ops_per_byte``), fixed here, and its per-shape part,
    computed per micro-batch (:func:`_matmul_efficiency`).

    A NamedTuple, as :class:`_Layout` is: a quote makes one per search, three hundred, and a frozen
    dataclass of these 25 fields took three times as long to build.
    """

    gpus: int  # the GPUs searched over (``count``; a NamedTuple has its own ``count``)
    links: Links
    flash: bool
    peak_flops: float
    bytes_per_s: float  # HBM bandwidth
    pcie_bytes_per_s: float  # host link, one direction (offloaded optimizer states)
    stack: float  # fine-tuning stack and QLoRA factors on the matmul efficiency
    flat_efficiency: float  # matmul efficiency where the shapes are unknown (non-transformers)
    shaped: bool
    ops_per_byte: float
    inverse_at_zero: float
    fp8_share: float  # share of the FLOPs in fp8 linear layers, whose casts stream HBM
    fp8_scaling: str  # how the stack scales its fp8 casts (efficiency.FP8_SCALING)
    # FLOPs added per attention-core FLOP (efficiency.attention_extra_flops): of a step without
    # recompute (forward and backward), and of a recomputed forward pass
    attention_extra: float
    attention_recompute_extra: float
    straggler: float
    tp_overlap: bool
    memory_bytes: float
    gpus_per_node: int
    micro_batch_cap: int
    modes: tuple[str, ...]
    tensor_sizes: tuple[int, ...]
    pipeline_sizes: tuple[int, ...]
    zero_stages: tuple[int, ...]
    context_sizes: tuple[int, ...] = (1,)
    kernel_floor_s: float = 0.0  # (kernel_floor_seconds)
    unaligned_head_scale: float = 0.0  # (_GpuConstants.unaligned_head_scale)
    # a paged optimizer's states stay in host memory whatever the GPU has spare (ROCm: _paging)
    paged_on_host: bool = False


# Context parallelism is searched only from this sequence length up, and below
# CONTEXT_PARALLEL_FREE_SEQ only for a tensor x pipeline split whose activations do not fit without
# recompute: NeMo's long-sequence table (docs/source/performance/performance_long_sequence.md,
# Llama 2 7B on H100) runs CP1 up to 16K tokens and CP2 from 32K, and the Megatron-Bridge recipes
# use CP2 at 8K only where memory is short (Llama 3.1 405B on 1,024 H100); the MLPerf Llama 2 70B
# LoRA runs at 8K keep CP1.  The rule keeps the search for ordinary sequences as cheap as it was.
CONTEXT_PARALLEL_MIN_SEQ = 8192
CONTEXT_PARALLEL_FREE_SEQ = 16384


def context_sizes(f: TrainFacts, count: int) -> tuple[int, ...]:
    """The context-parallel sizes searched: a pinned ``context``; 1 alone for a short sequence
    (:data:`CONTEXT_PARALLEL_MIN_SEQ`), a model that is no transformer or a stack without context
    parallelism; otherwise 1 and the powers of two up to 64 that divide the GPUs and split the
    sequence into ``2 x cp`` equal chunks (Megatron's load-balanced causal split).  Whether a size
    leaves the node is decided per tensor size (:func:`_costed`)."""
    if "context" in f.pinned:
        return (f.pinned["context"],)
    stack = f.framework
    if not f.transformer or f.seq < CONTEXT_PARALLEL_MIN_SEQ:
        return (1,)
    if stack is not None and not stack.context_parallel:
        return (1,)
    return tuple(
        c for c in _divisors_pow2(count, 64) if f.seq % context_chunks(c, causal=f.causal) == 0
    )


def _choices(
    f: TrainFacts, count: int, gpn: int, flash: bool
) -> tuple[tuple[str, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(recompute modes, tensor sizes, pipeline sizes, ZeRO stages) the search walks, in order.

    Tensor parallel: powers of two inside a node that divide the heads; pipeline parallel: powers
    of two up to 64 and the layer count.  With FlashAttention the attention scores are never
    stored, so selective recompute (which drops exactly those) is not tried.  A pin in
    ``training.parallelism`` replaces the choice.
    """
    modes = f.recompute_modes if f.transformer else ("none",)
    if flash:
        modes = tuple(m for m in modes if m != "selective") or ("none",)
    stack = f.framework
    tps = _divisors_pow2(count, gpn) if f.transformer else [1]
    tps = [t for t in tps if f.heads % t == 0]
    pps = (
        [p for p in _divisors_pow2(count, 64) if not f.transformer or p <= f.layers]
        if f.transformer
        else [1]
    )
    # a stack that cannot split layers (eager FSDP, llm.c), or whose usual recipes do not (the
    # Hugging Face Trainer, DeepSpeed, torchtune: frameworks.yaml pinned_only), keeps them whole
    if stack is not None and (not stack.tensor_parallel or "tensor" in stack.pinned_only):
        tps = [1]
    if stack is not None and (not stack.pipeline_parallel or "pipeline" in stack.pinned_only):
        pps = [1]
    pin = f.pinned
    if "tensor" in pin:
        tps = [pin["tensor"]]
    if "pipeline" in pin:
        pps = [pin["pipeline"]]
    searched = (stack.searched_zero or stack.zero) if stack else (0, 1, 2, 3)
    zeros = [pin["zero"]] if "zero" in pin else list(searched)
    if f.nvme_optimizer:  # DeepSpeed offloads to NVMe under ZeRO-3 only, without pipeline parallel
        zeros, pps = [3], [1]
    return modes, tuple(tps), tuple(pps), tuple(zeros)


def attention_kernel(f: TrainFacts) -> str:
    """The class of the fused attention kernel the step runs (efficiency.ATTENTION_KERNELS): the
    workload's ``training.attention_kernel``, else its stack's, else cuDNN's fused attention."""
    if f.attention_kernel is not None:
        return f.attention_kernel
    return f.framework.attention if f.framework is not None else "cudnn"


class _GpuConstants(NamedTuple):
    """The parts of :class:`_Search` that follow from the facts, the GPU and FlashAttention alone
    (:func:`_gpu_constants`), whatever the count and the links."""

    peak_flops: float
    bytes_per_s: float
    pcie_bytes_per_s: float
    stack: float
    flat_efficiency: float
    ops_per_byte: float
    inverse_at_zero: float
    fp8_share: float
    fp8_scaling: str
    attention_extra: float
    attention_recompute_extra: float
    overlaps_tensor_parallel: bool  # the GPU's (efficiency.overlaps_tensor_parallel)
    stack_overlaps: bool  # the stack's, where it has a profile
    memory_bytes: float
    kernel_floor_s: float  # the fixed GPU time of each kernel a micro-batch launches
    # the precision's peak over the rate of cuBLAS's unaligned kernels at an alignment of one
    # element (efficiency.unaligned_gemm_flops), for the output layer of a stack that keeps the
    # tokenizer's vocabulary, on the tensor cores; 0 where the vocabulary is padded or the matmuls
    # run on the CUDA cores (fp32)
    unaligned_head_scale: float = 0.0


def kernel_floor_seconds(f: TrainFacts, gpu: GpuSpec) -> float:
    """The fixed time of each of ``f.kernels_per_micro_batch`` kernels on ``gpu``: its launch gap,
    ramp-up and drain, a fixed number of cycles at the boost clock
    (:meth:`~planner.workload.efficiency.InferenceEfficiency.kernel_floor_s`, the figure the
    vision serving model charges); 0 where no kernels are counted (the table is then not read)."""
    if f.kernels_per_micro_batch <= 0:
        return 0.0
    return eff.load_inference_efficiency().kernel_floor_s(gpu)


def _compute_gpu_constants(f: TrainFacts, gpu: GpuSpec, flash: bool) -> _GpuConstants:
    """:func:`_gpu_constants` without the memo."""
    peak, fraction = eff.precision_peak(gpu, f.precision, f.linear_share)
    bw = gpu.memory_bandwidth_gb_per_s * 1e9
    stack = f.framework.stack if f.framework is not None else 1.0
    # matmul results are written in the precision's own width (fp32 and tf32: 4 bytes, not 2)
    ops_per_byte = peak / bw * eff.result_bytes(f.precision) / 2.0
    # the traffic the calibrated fraction held was streamed at the calibration part's bandwidth
    ops_per_byte_cal = ops_per_byte * eff.calibration_ops_per_byte(gpu) / eff.ops_per_byte(gpu)
    # fp8 and fp4: the linear layers (a share ``linear_share`` of the FLOPs) run at the low-bit
    # tensor rate (folded into ``peak``) and their casts, by the stack's fp8 scaling recipe or
    # NVFP4's, stream the memory on top of the calibrated time, which held 16-bit matmuls only
    fp8_share = f.linear_share if f.precision in eff.LOW_BIT_RECIPES else 0.0
    fp8_scaling = f.framework.fp8_scaling if f.framework is not None else "delayed"
    if f.precision == "fp4":
        fp8_scaling = "nvfp4"
    reference_x = eff.reference_bytes_per_flop(gpu)
    attention_extra = functools.partial(
        eff.attention_extra_flops,
        gpu,
        attention_kernel(f),
        causal=f.causal,
        flash=flash,
        precision=f.precision,
        linear_share=f.linear_share,
        window_share=f.attention_window_share,
    )
    return _GpuConstants(
        peak_flops=peak,
        bytes_per_s=bw,
        pcie_bytes_per_s=eff.pcie_gb_per_s(gpu) * 1e9 * eff.LINK_EFFICIENCY["pcie"],
        stack=stack,
        # a CNN's 3x3 stride-1 convolutions as Winograd transforms on the CUDA cores
        flat_efficiency=fraction * stack * eff.winograd_speedup(gpu, f.precision, f.conv3x3_share),
        ops_per_byte=ops_per_byte,
        inverse_at_zero=1.0 / fraction - ops_per_byte_cal * reference_x,
        fp8_share=fp8_share,
        fp8_scaling=fp8_scaling,
        attention_extra=attention_extra(),
        attention_recompute_extra=attention_extra(backward_share=0.0),  # a forward pass alone
        overlaps_tensor_parallel=eff.overlaps_tensor_parallel(gpu),
        stack_overlaps=f.framework is None or f.framework.tp_overlap,
        memory_bytes=gpu.usable_memory_gib * GIB,
        kernel_floor_s=kernel_floor_seconds(f, gpu),
        unaligned_head_scale=(
            peak / eff.unaligned_gemm_flops(gpu, 1)
            if f.framework is not None and not f.framework.pads_vocab and f.precision != "fp32"
            else 0.0
        ),
    )


# Entries of the search's memos: a quote asks for a few dozen (facts, GPU) pairs and a few dozen
# per-sequence costs; the Ethernet and pinned searches of a sweep add a few hundred.
_SEARCH_MEMO_SIZE = 4096

# The per-GPU constants of a search, memoised on (facts, GPU, FlashAttention): a quote runs
# hundreds of searches over a few dozen of them (counts and links apart), and working them out
# cost a search a tenth of its time.
_gpu_constants = functools.lru_cache(maxsize=_SEARCH_MEMO_SIZE, typed=True)(_compute_gpu_constants)


def _walked(
    f: TrainFacts, count: int, gpn: int, flash: bool
) -> tuple[tuple[str, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(recompute modes, tensor, pipeline, ZeRO and context sizes) a search of ``count`` GPUs,
    ``gpn`` to a node, walks: :func:`_choices` and :func:`context_sizes`."""
    return (*_choices(f, count, gpn, flash), context_sizes(f, count))


# :func:`_walked` memoised: a quote's searches walk a few dozen distinct sets of choices.
_walked_memo = functools.lru_cache(maxsize=_SEARCH_MEMO_SIZE, typed=True)(_walked)


def _setup(f: TrainFacts, gpu: GpuSpec, count: int, links: Links, flash: bool) -> _Search:
    """The per-search constants of :class:`_Search` for ``count`` x ``gpu`` on ``links``."""
    g = _gpu_constants(f, gpu, flash)
    gpn = max(1, min(links.gpus_per_node, count))
    modes, tps, pps, zeros, cps = _walked_memo(f, count, gpn, flash)
    return _Search(
        gpus=count,
        links=links,
        flash=flash,
        peak_flops=g.peak_flops,
        bytes_per_s=g.bytes_per_s,
        pcie_bytes_per_s=g.pcie_bytes_per_s,
        stack=g.stack,
        flat_efficiency=g.flat_efficiency,
        shaped=f.transformer and f.layer_params > 0,
        ops_per_byte=g.ops_per_byte,
        inverse_at_zero=g.inverse_at_zero,
        fp8_share=g.fp8_share,
        fp8_scaling=g.fp8_scaling,
        attention_extra=g.attention_extra,
        attention_recompute_extra=g.attention_recompute_extra,
        straggler=eff.straggler_factor(count),
        tp_overlap=g.overlaps_tensor_parallel and links.intra_kind == "nvlink" and g.stack_overlaps,
        memory_bytes=g.memory_bytes,
        gpus_per_node=gpn,
        # Largest micro-batch considered: 8,192 tokens per GPU (typical FSDP/Megatron configs run
        # 4-16k; larger ones only raise memory, not speed, once the matmuls are large).
        micro_batch_cap=max(1, MICRO_BATCH_TOKENS // f.seq) if f.transformer else 10**9,
        modes=modes,
        tensor_sizes=tps,
        pipeline_sizes=pps,
        zero_stages=zeros,
        context_sizes=cps,
        kernel_floor_s=g.kernel_floor_s,
        unaligned_head_scale=g.unaligned_head_scale,
        paged_on_host=managed_memory_on_host(gpu),
    )


class _Layout(NamedTuple):
    """One placement: data x tensor x pipeline parallel sizes and a ZeRO stage, with what follows
    from it alone: the bytes of model states each GPU holds (ZeRO-1 shards the optimizer states
    over the data-parallel ranks, ZeRO-2 the gradients too, ZeRO-3 the weights too, plus its
    prefetch buffers), the room left for activations, the data-parallel exchange and the optimizer
    step.

    A NamedTuple rather than a frozen dataclass: the search builds thousands per quote, and a
    frozen dataclass is several times slower to construct.
    """

    dp: int
    tp: int
    pp: int
    zero: int
    pp_in: int  # pipeline stages inside one node
    d_in: int  # data-parallel ranks inside one node
    split: float  # GPUs one copy of the model is split over (tensor x pipeline)
    weights: float
    grads: float
    optimizer: float
    buffers: float
    states: float  # the four above, summed
    room: float  # bytes left for activations, fragmentation taken off
    per_rank: float  # sequences (samples) of the global batch per data-parallel rank
    sync_s: float  # one data-parallel exchange (ZeRO-3: one micro-batch's gathers)
    optimizer_s: float  # the optimizer step
    ep: int = 1  # expert-parallel ranks (mixture of experts): the experts split over them
    # offload: nvme: of optimizer_s, the seconds reading and writing the states on NVMe; and the
    # fp32 gradients' write at the accumulation boundary (hidden behind the last backward pass)
    nvme_s: float = 0.0
    nvme_gradient_s: float = 0.0
    # a paged optimizer's states on this GPU (bytes), not in ``optimizer`` nor ``states``: they
    # take the memory left over (:func:`_paging`)
    paged: float = 0.0
    # context-parallel ranks each sequence is split over; ``dp`` counts the data-parallel ranks
    # beside them (count = dp x cp x tp x pp); the model states are replicated over the cp ranks
    # as over data-parallel ones, and ZeRO shards and gradients reduce over dp x cp
    cp: int = 1
    # bytes held beside the states only during the optimizer step, once the activations are freed
    # (memory.fp16_optimizer_step_bytes): the peak is the states plus the larger of the two
    step_extra: float = 0.0
    # eager torch.autocast runs here (:func:`autocast_layout`), and the seconds its casts of the
    # weights and their gradients take each micro-batch (efficiency.AUTOCAST_CAST_BYTES_PER_PARAM)
    autocast: bool = False
    cast_s: float = 0.0
    # gradient bytes held beyond ``grads`` on a step of more than one micro-batch, where the stack
    # accumulates them unsharded under FSDP's no_sync (memory.unsynced_gradient_bytes)
    unsynced: float = 0.0


def expert_parallel_sizes(f: TrainFacts, dp: int, tp: int, gpus_per_node: int) -> tuple[int, ...]:
    """The expert-parallel sizes searched for ``dp`` data-parallel ranks of ``tp`` GPUs, as the
    data-parallel ranks the experts are split over (each expert also split over the ``tp`` ranks):
    1 for a dense model or a stack without expert parallelism; a pinned ``expert`` (GPUs, so
    ``expert / tp`` ranks), none where those ranks do not divide ``dp`` or the GPUs are not whole
    tensor-parallel groups (the pin is never shrunk to fit); otherwise the most that divide both
    the ranks and the experts, and the most of those that keep the group inside one node (its
    all-to-alls then stay on NVLink, :func:`_all_to_all_seconds`).

    A pinned ``expert`` counts GPUs, as Megatron Core's ``expert_model_parallel_size`` does with
    ``expert_tensor_parallel_size: 1`` (the "parallel folding" of the Megatron-Bridge MoE recipes,
    such as Qwen3 235B's TP2 EP32 on 256 H100s): the GPUs of the tensor- and data-parallel groups
    each hold whole experts.  ``expert / tp`` ranks of ``tp`` GPUs holding 1/tp of each of their
    experts keep the same bytes on every GPU."""
    expert_parallel = f.framework is None or f.framework.expert_parallel
    if not f.experts or not expert_parallel:
        return (1,)
    if "expert" in f.pinned:
        gpus = f.pinned["expert"]
        ranks = max(1, gpus // tp)
        whole = gpus % tp == 0 or gpus == 1
        return (ranks,) if whole and dp % ranks == 0 else ()
    most = math.gcd(dp, f.experts)
    in_node = max(1, gpus_per_node // tp)
    inside = max(d for d in range(1, min(most, in_node) + 1) if most % d == 0)
    return (most,) if inside == most else (most, inside)


def _place(
    f: TrainFacts, s: _Search, tp: int, pp: int, zero: int, ep: int = 1, cp: int = 1
) -> _Layout:
    """The :class:`_Layout` of ``tp`` x ``pp`` x ``cp`` with ZeRO stage ``zero`` on the search's
    GPUs, the routed experts of a mixture of experts split over ``ep`` data-parallel ranks.

    The optimizer step streams this GPU's share of the trainable parameters (sharded from ZeRO-1
    on) through HBM, ``opt_traffic`` bytes each.  Context-parallel ranks hold the same weights, so
    ZeRO shards over the ``dp x cp`` ranks and the gradients are reduced over them: Megatron-Core
    builds its distributed optimizer and gradient buffers on the data-parallel group with context
    parallel (``get_data_parallel_group(with_context_parallel=True)``), and torchtitan's FSDP shards
    over the flattened ``dp_shard_cp`` mesh.
    """
    dp = s.gpus // (tp * pp * cp)
    shards = dp * cp  # the ranks ZeRO shards over and the gradients are reduced across
    pp_in = min(pp, max(1, s.gpus_per_node // tp))
    d_in = max(1, s.gpus_per_node // (tp * pp_in))
    split = float(tp * pp)
    frozen = f.params - f.trainable
    autocast = autocast_layout(f, zero)
    # under eager autocast the fp32 model is the master copy, and the 16-bit copies autocast casts
    # are held with the weights until the backward pass (memory.py)
    state = f.autocast_state if (autocast and f.autocast_state is not None) else f.state
    cache = autocast_cache_bytes(f.autocast_params) if autocast else 0.0
    w0 = (frozen * f.frozen_bytes + f.trainable * state.weights + cache) / split
    g0 = f.trainable * state.grads / split
    stack = f.framework.name if f.framework is not None else None
    if zero >= 2 and f.method == "lora" and stack in FROZEN_GRADIENT_FSDP_STACKS:
        # its FSDP units mix the frozen layer weights with the adapters: they get gradients too
        g0 += max(0.0, f.layer_params * f.layers - f.trainable) * state.grads / split
    o0 = f.trainable * state.optimizer / split
    # a mixture of experts splits its experts over the expert-parallel ranks
    # (:func:`expert_parallel_sizes`); ZeRO shards the rest over every data-parallel rank
    rho = f.expert_share

    def sharded(total: float, stage: int) -> float:
        if zero >= stage:
            return total / shards
        return total * (1.0 - rho) + total * rho / ep

    w, gr, o = sharded(w0, 3), sharded(g0, 2), sharded(o0, 1)
    # a paged optimizer's states stay out of the fit (mixed precision's fp32 master copy is an
    # ordinary tensor and stays in ``o``)
    paged = sharded(f.trainable * f.paged_bytes / split, 1)
    o = max(0.0, o - paged)
    if f.optimizer_in_backward:  # one layer's gradients at a time
        gr = min(gr, f.largest_layer * state.grads / tp)
    opt_params = sharded(f.trainable / split, 1)
    streamed = s.bytes_per_s * eff.MEMORY_BW_FRACTION
    opt_traffic = f.opt_traffic
    cast_s = 0.0
    if autocast:
        # the casts each micro-batch, and fp16's GradScaler unscaling every gradient each step
        cast_s = f.autocast_params / split * eff.AUTOCAST_CAST_BYTES_PER_PARAM / streamed
        if f.precision == "fp16":
            opt_traffic += eff.GRAD_SCALER_BYTES_PER_PARAM
    optimizer_s = opt_params * opt_traffic / streamed
    nvme_s = nvme_gradient_s = 0.0
    if f.host_optimizer:
        # the states (and master copy) stay in host memory: the GPU sends its gradients down
        # and gets its weights back over PCIe, and the host streams the states
        optimizer_s = opt_params * (f.state.grads + f.state.weights) / s.pcie_bytes_per_s
        optimizer_s += o * 2.0 / eff.HOST_OPTIMIZER_BYTES_PER_S
        if f.nvme_optimizer:
            nvme_s, nvme_gradient_s = _nvme_seconds(f, opt_params, s.gpus_per_node)
            optimizer_s += nvme_s
        o = 0.0
        gr = offloaded_gradient_bytes(gr)  # streamed to the host as the backward pass makes them
    # prefetching: the gathered current and next layer at the width the layers compute in (16
    # bits; fp32 and tf32 gather their fp32 weights: efficiency.result_bytes)
    buffers = 2.0 * eff.result_bytes(f.precision) * f.largest_layer / tp if zero >= 3 else 0.0
    # a quantised output head's 16-bit copy, made beside the held activations (the last stage's)
    buffers += f.head_dequant_bytes / tp
    states = w + gr + o + buffers
    unsynced = 0.0
    if not (f.optimizer_in_backward or f.host_optimizer):
        # the rank's whole gradients (sharded over no ZeRO stage) against its shard, were the step
        # to accumulate (:func:`_micro_batch` decides)
        unsynced = unsynced_gradient_bytes(
            sharded(g0, 4), gr, stack=stack, zero=zero, accumulation=2
        )
    step_extra = fp16_optimizer_step_bytes(
        f.trainable / split,
        stack=stack,
        precision=f.precision,
        zero=zero,
        host_optimizer=f.host_optimizer,
    )
    room = (s.memory_bytes - _FIXED_BYTES) / (1.0 + FRAGMENTATION) - states
    if step_extra > room:  # the step itself does not fit: no room for any activations
        room = min(room, 0.0)
    return _Layout(
        dp=dp,
        tp=tp,
        pp=pp,
        zero=zero,
        pp_in=pp_in,
        d_in=d_in,
        split=split,
        weights=w,
        grads=gr,
        optimizer=o,
        buffers=buffers,
        states=states,
        room=room,
        per_rank=f.global_batch / dp,  # under 1: ranks beyond the batch idle
        sync_s=_sync_seconds(f, s, shards, d_in, split, zero, ep),
        optimizer_s=optimizer_s,
        ep=ep,
        nvme_s=nvme_s,
        nvme_gradient_s=nvme_gradient_s,
        paged=paged,
        cp=cp,
        step_extra=step_extra,
        autocast=autocast,
        cast_s=cast_s,
        unsynced=unsynced,
    )


def managed_memory_on_host(gpu: GpuSpec) -> bool:
    """Whether ``gpu`` keeps managed (paged) memory in host RAM, none of it migrating to the GPU:
    an AMD GPU, as ROCm runs without XNACK by default, and "without XNACK, the GPU device cannot
    handle pagefaults and ROCm degrades the allocation to host-resident memory where all access
    from the device must cross the host-device interconnect" (UoB-HPC/utpx README; ROCm's hipDF
    docs: page migration needs HSA_XNACK=1, off when unset).  The ROCm blogs' Llama 2 7B full
    fine-tune with paged_adamw_32bit on a 192 GB MI300X took 2.73 s a step against its LoRA twin's
    0.79 (held-out row H398), where the states fit 3.5 times over."""
    return gpu.vendor == "amd"


def _paging(s: _Search, lay: _Layout, memory_bytes: float) -> tuple[float, float]:
    """(bytes of a paged optimizer's states evicted to host RAM, seconds of each step paging them)
    on a GPU whose job needs ``memory_bytes`` besides them.

    The states keep whatever memory the GPU has left (:func:`~planner.workload.memory.paged_spill_bytes`);
    each optimizer step pages the evicted part in over PCIe and evicts as much again to make room,
    :data:`~planner.workload.efficiency.PAGED_CROSSINGS_PER_STEP` crossings at the host link's
    rate, not overlapped with the update that waits on them.  The update itself streams HBM like any
    GPU optimizer (``optimizer_s``).  Nothing spills, and nothing is added, where the states fit.

    On an AMD GPU none of it stays on the GPU, so the update
    reads and writes every state over the link (:func:`managed_memory_on_host`).
    """
    if lay.paged <= 0.0:
        return 0.0, 0.0
    if s.paged_on_host:
        return lay.paged, eff.PAGED_CROSSINGS_PER_STEP * lay.paged / s.pcie_bytes_per_s
    spilled = paged_spill_bytes(lay.paged, s.memory_bytes - memory_bytes)
    return spilled, eff.PAGED_CROSSINGS_PER_STEP * spilled / s.pcie_bytes_per_s


def _nvme_seconds(f: TrainFacts, opt_params: float, gpus_per_node: int) -> tuple[float, float]:
    """(optimizer-step seconds on NVMe, seconds writing the fp32 gradients) of one step under
    ``offload: nvme``, for a GPU that steps ``opt_params`` parameters.

    Every GPU of the node swaps its own partition through the node's drives at once, so the node
    moves ``gpus_per_node`` partitions.  DeepSpeed's step walks the states one sub-group at a time:
    it reads the fp32 master weights, the optimizer states and the fp32 gradient, runs the CPU
    optimizer, and writes the weights and states back; with its defaults (offload_optimizer
    ``pipeline_read`` / ``pipeline_write`` false) the reads and writes do not overlap the CPU step
    or each other, so they add.  The gradients are written as the backward pass produces them
    (asynchronous swap-out), so they overlap the last backward pass (:func:`_cost`).
    """
    node_params = opt_params * gpus_per_node
    read = node_params * nvme_state_bytes_per_param(f.state) / f.nvme_read_bytes_per_s
    write = node_params * f.state.optimizer / f.nvme_write_bytes_per_s
    gradients = node_params * NVME_GRADIENT_BYTES_PER_PARAM / f.nvme_write_bytes_per_s
    return read + write, gradients


def _sync_seconds(
    f: TrainFacts, s: _Search, dp: int, d_in: int, split: float, zero: int, ep: int = 1
) -> float:
    """One data-parallel exchange: the gradient reduction of a step (2·G bytes), or ZeRO-3's
    gathers and reduction of one micro-batch (3·G, and twice the frozen weights F: 3·G + 2·F).

    ZeRO/FSDP keep 16-bit parameters and gradients and communicate those; plain DDP under torch.amp
    all-reduces the fp32 gradients (``grad_comm_bytes``), as does every layout that runs eager
    autocast over fp32 weights (:func:`autocast_layout`: its gradients are the fp32 leaves').
    ZeRO-3 shards the frozen weights of a LoRA or QLoRA job with the rest (:func:`_place`), so each
    micro-batch gathers them too, in the forward pass and again in the backward pass, at the bytes
    they are kept in (``frozen_bytes``: 16-bit, or QLoRA's 4-bit storage); only the trainable
    weights' gradients are reduced.
    """
    # expert gradients are reduced only among the replicas of the same experts (1/ep of them each)
    spread = 1.0 - f.expert_share + f.expert_share / ep
    local = f.trainable / split * spread
    if zero >= 3:
        frozen = (f.params - f.trainable) / split * spread * f.frozen_bytes
        return collective_seconds(1.0, 3.0 * local * 2.0 + 2.0 * frozen, dp, d_in, s.links)
    plain = 4.0 if autocast_layout(f, zero) else f.grad_comm_bytes
    shard = local * (2.0 if zero else plain)
    return collective_seconds(2.0, shard, dp, d_in, s.links)


def _layouts(f: TrainFacts, s: _Search, tp: int, pp: int, cp: int = 1) -> Iterator[_Layout]:
    """The layouts of ``tp`` x ``pp`` x ``cp``, one per ZeRO stage, in search order (ZeRO over a
    single data-parallel rank shards nothing, so it is skipped unless pinned)."""
    dp = s.gpus // (tp * pp * cp)
    # the stages the stack runs on this split (DeepSpeed's pipeline engine: ZeRO 0 and 1 only)
    runs = f.framework.zero_with(tp=tp, pp=pp) if f.framework is not None else s.zero_stages
    for ep in expert_parallel_sizes(f, dp, tp, s.gpus_per_node):
        for zero in s.zero_stages:
            # (offload: nvme runs ZeRO-3 whatever the count: DeepSpeed's NVMe swapper lives there)
            if zero and dp * cp == 1 and "zero" not in f.pinned and not f.nvme_optimizer:
                continue
            if zero not in runs:
                continue
            yield _place(f, s, tp, pp, zero, ep, cp)


class _PerSequence(NamedTuple):
    """What one sequence (sample) costs on one tensor x pipeline split with one recompute mode."""

    mode: str
    act_bytes: float  # activations stored
    traffic_bytes: float  # activation bytes this GPU's stage streams through HBM
    # hardware FLOPs of the whole model, recompute included, the attention core's as the FLOPs
    # that take its time at the step's rate
    hw_flops: float
    stage_flops: float  # hardware FLOPs on this GPU's pipeline stage
    head_flops: float  # of them, the LM head's (0 where the slowest stage does not run it)
    passes: float  # passes over the activations: forward, backward, and the recompute
    # the share of the layers whose forward pass runs again (1 under full recompute, 0 without or
    # under selective recompute); under block recompute ``recomputed_layers`` of ``stage_layers``
    recompute_share: float = 0.0
    recomputed_layers: int = 0
    stage_layers: int = 0
    # of ``stage_flops``, the attention core's (counted at ``1 + attention_extra``): what a context-
    # parallel ring's exchanges overlap (:func:`exposed_ring_seconds`)
    attention_flops: float = 0.0
    # bytes this GPU's stage streams per sequence through an eager stack's separate elementwise
    # kernels (efficiency.eager_traffic), beyond ``passes`` x ``traffic_bytes``
    eager_bytes: float = 0.0


# Recompute modes from the least recompute to the most: the order the search tries them in and
# ranks near-equals by (:func:`_simplicity`).
RECOMPUTE_ORDER = ("none", "selective", "block", "full")


def stage_layers(layers: int, pp: int) -> int:
    """Transformer layers on one pipeline stage, the most any stage holds (every layer without
    pipeline parallelism): what block recompute counts its recomputed layers out of (Megatron-LM's
    ``--recompute-num-layers`` under ``--recompute-method block`` counts the layers of a stage)."""
    return math.ceil(layers / max(1, pp))


def _per_sequence(
    f: TrainFacts,
    tp: int,
    pp: int,
    mode: str,
    flash: bool,
    attention_extra: float = 0.0,
    recomputed_layers: int = 0,
    cp: int = 1,
    recompute_extra: float | None = None,
    autocast: bool = False,
) -> _PerSequence:
    """The :class:`_PerSequence` of ``mode`` on ``tp`` x ``pp``; each attention-core FLOP of the
    forward and backward passes counts ``1 + attention_extra``, each of a recomputed forward pass
    ``1 + recompute_extra`` (``attention_extra`` where not given;
    :func:`~planner.workload.efficiency.attention_extra_flops`); with the activations eager
    ``autocast`` keeps (:func:`_activation_bytes`).

    Block recompute of ``recomputed_layers`` (k) of a stage's ``Ls`` layers runs the forward pass
    of those layers again, k/Ls of full recompute's extra FLOPs (model FLOPs and attention core);
    all of a stage's layers is full recompute.

    Context parallel ``cp``: each of the ``cp`` ranks holds and computes ``seq/cp`` tokens of the
    sequence in every layer, so its activations, its traffic and its FLOPs are ``1/cp`` of the
    sequence's; the attention core's too, as Megatron-Core's load-balanced split gives every rank
    the same share of the causal mask (chunks ``r`` and ``2·cp - 1 - r`` of ``2·cp``).  The LM
    head runs on each rank's own tokens.  ``hw_flops`` stays the whole sequence's."""
    n = stage_layers(f.layers, pp)
    if mode == "block" and recomputed_layers >= n:
        mode = "full"
    share = 1.0 if mode == "full" else recomputed_layers / n if mode == "block" else 0.0
    act1, traffic1 = _activation_bytes(f, tp, pp, mode, flash, share, cp, autocast)
    attention_none = f.attention_flops_per_seq.get("none", 0.0)
    if mode == "block":
        attention = attention_none + share * (
            f.attention_flops_per_seq.get("full", 0.0) - attention_none
        )
        recompute = share * f.recompute_flops_per_seq.get("full", 0.0)
    else:
        attention = f.attention_flops_per_seq.get(mode, 0.0)
        recompute = f.recompute_flops_per_seq.get(mode, 0.0)
    again = attention_extra if recompute_extra is None else recompute_extra
    # the extra FLOPs of the forward and backward passes, and of the forward pass run again
    added = attention_extra * attention_none + again * (attention - attention_none)
    hw_per_seq = f.model_flops_per_seq + recompute + added
    stage_flops, head_flops = _stage_flops(f, tp, pp, hw_per_seq)
    block = mode == "block"
    # the attention core on this GPU: its stage's layers' share, split over the tp and cp ranks
    attention_here = (attention + added) * n / max(1, f.layers) / tp
    if cp > 1:
        stage_flops, head_flops = stage_flops / cp, head_flops / cp
        attention_here /= cp
    return _PerSequence(
        mode=mode,
        act_bytes=act1,
        traffic_bytes=traffic1,
        hw_flops=hw_per_seq,
        stage_flops=stage_flops,
        head_flops=head_flops,
        # the recomputed layers write their activations again
        passes=eff.ACTIVATION_PASSES + share,
        recompute_share=share,
        recomputed_layers=recomputed_layers if block else 0,
        stage_layers=n if block else 0,
        attention_flops=attention_here,
        eager_bytes=_eager_bytes(f, tp, pp, cp, flash, share, autocast),
    )


# :func:`_per_sequence` memoised on its arguments, all passed by position: a quote's searches ask
# for a few dozen distinct ones a thousand times (each split and recompute mode on every count).
_per_sequence_memo = functools.lru_cache(maxsize=_SEARCH_MEMO_SIZE, typed=True)(_per_sequence)


def clear_search_memo() -> None:
    """Forget the search's memoised per-GPU constants, choices and per-sequence costs
    (:func:`planner.workload.training.clear_memo` empties these with its own)."""
    _gpu_constants.cache_clear()
    _walked_memo.cache_clear()
    _per_sequence_memo.cache_clear()


def _eager_bytes(
    f: TrainFacts, tp: int, pp: int, cp: int, flash: bool, share: float, autocast: bool = False
) -> float:
    """Bytes an eager stack's separate elementwise kernels stream per sequence on this GPU's stage
    (:func:`~planner.workload.efficiency.eager_traffic`): its layers' tokens, split over the tensor-
    and context-parallel ranks, the recomputed share's forward pass again, the attention scores'
    kernels where no fused attention kernel runs (their fp32 chain under eager ``autocast``)."""
    if f.eager_traffic is None:
        return 0.0
    t = f.eager_traffic
    per_token = t.per_token(scores=not flash, recompute_share=share, autocast=autocast)
    # without sequence parallelism the norms' and the dropout-and-add's kernels run on the whole
    # hidden-sized tensor on every tensor-parallel rank
    whole = 0.0
    if tp > 1 and not _splits_sequence(f):
        fwd, bwd = t.hidden_forward, t.hidden_backward
        if autocast:  # and the fp32 residual stream's
            fwd += t.autocast_hidden_forward
            bwd += t.autocast_hidden_backward
        whole = min(per_token, fwd * (1.0 + share) + bwd)
    return ((per_token - whole) / tp + whole) * f.seq * (f.layers / pp) / cp


def _activation_bytes(
    f: TrainFacts,
    tp: int,
    pp: int,
    mode: str,
    flash: bool,
    recompute_share: float = 0.0,
    cp: int = 1,
    autocast: bool = False,
) -> tuple[float, float]:
    """(bytes of activations stored per sequence, bytes this GPU's stage streams per sequence).

    Korthikanti et al. 2022: full recompute keeps only each layer's input (2·s·h) plus one layer's
    working set; selective recompute drops the attention scores, as FlashAttention does.  The scores
    are materialised in HBM whenever FlashAttention is off, recompute or not, so they count in the
    traffic.  Non-transformers: the model's activation bytes per sample for both.

    Block recompute of a share ``recompute_share`` of each stage's layers (Megatron-LM's
    ``--recompute-method block``: the first ``--recompute-num-layers`` layers of each stage): those
    keep their input as under full recompute, the others everything as without recompute.  The
    backward pass reaches the recomputed layers last, once the stage's other layers have released
    this micro-batch's activations, so the one being rebuilt takes the place of a released one and
    adds nothing at the peak; the logits are held as without recompute.

    Context parallel ``cp``: every rank keeps ``seq/cp`` tokens of every layer (the keys and values
    of the others arrive in the attention and are not kept: Megatron-Core "each GPU only stores the
    KV of a sequence chunk in forward and gathers KV again in backward"), and the attention scores,
    where stored, are its queries' against all keys, so everything is ``1/cp`` ("the activation
    memory footprint per GPU is also CP times smaller", Megatron-Core context-parallel guide).

    Under eager ``autocast`` (:func:`autocast_layout`) each layer keeps its norms' inputs in fp32
    and, where stored, its softmax output in fp32 beside the value matmul's 16-bit cast
    (planner/workload/memory.py), and an arithmetic GeLU its fp32 chain's values
    (efficiency.ARITHMETIC_GELU), written and read as the rest are.
    """
    if not f.transformer:
        return f.act_per_sample, f.act_per_sample
    base = f.act_base_per_seq_layer + (
        f.autocast_act_per_seq_layer + f.autocast_mlp_per_seq_layer if autocast else 0.0
    )
    scores = f.act_score_per_seq_layer + (f.autocast_score_per_seq_layer if autocast else 0.0)
    # everything one layer stores without recompute, its scores too where no flash kernel runs
    kept = base + (0.0 if flash else scores)
    # what stays whole on every tensor-parallel rank without sequence parallelism (Korthikanti eq.
    # 3): the norms' inputs (autocast's fp32 copies too), the linear inputs after them and the
    # dropout masks; under recompute the stored layer inputs too.  A stack whose output layer
    # gathers its logits (transformers' and torchtune's tensor-parallel plans) holds them whole.
    unsplit = tp > 1 and not _splits_sequence(f)
    whole = 0.0
    if unsplit:
        whole = f.act_replicated_per_seq_layer + (f.autocast_act_per_seq_layer if autocast else 0.0)
    logits = f.logits_per_seq / (tp if _splits_logits(f) else 1)
    # each layer's input, s·h values at the activations' width (2 bytes; 4 in fp32 and tf32, whose
    # layers run and hand on fp32 values: efficiency.result_bytes), as the kept bytes count them
    layer_input = eff.result_bytes(f.precision) * f.seq * f.hidden
    # a layer's kept bytes on one tensor-parallel rank: its split share and what stays whole
    kept_rank = (kept - whole) / tp + whole
    if mode == "block":
        per_layer = block_recompute_bytes_per_layer(kept, layer_input, recompute_share)
        whole_layer = (
            block_recompute_bytes_per_layer(whole, layer_input, recompute_share) if unsplit else 0.0
        )
        head = logits
        first_extra = 0.0
    elif mode == "full":
        per_layer = layer_input  # each layer's input, and one layer's working set
        whole_layer = layer_input if unsplit else 0.0
        head = recompute_peak_bytes(kept_rank, logits)
        first_extra = kept_rank
    else:
        score = 0.0 if (flash or mode == "selective") else scores
        per_layer = base + score
        whole_layer = whole
        head = logits
        first_extra = 0.0
    on_rank = (per_layer - whole_layer) / tp + whole_layer
    act1 = f.layers * on_rank + head
    if pp > 1:
        # 1F1B: the first stage holds pp micro-batches of its L/pp layers (L layers' worth of one)
        # and no logits; the last holds one micro-batch of its layers and the logits
        first = f.layers * on_rank + first_extra
        last = f.layers / pp * on_rank + head
        act1 = max(first, last)
    traffic1 = (f.layers / pp) * kept_rank + logits
    if cp > 1:
        return act1 / cp, traffic1 / cp
    return act1, traffic1


def _splits_sequence(f: TrainFacts) -> bool:
    """Whether the stack's tensor parallelism splits the norms, dropout and stage boundaries over
    the sequence too (Megatron's sequence parallelism; frameworks.yaml ``sequence_parallel``)."""
    return f.framework is None or f.framework.sequence_parallel


def _splits_logits(f: TrainFacts) -> bool:
    """Whether the stack keeps the logits split over the tensor-parallel ranks (Megatron's
    vocabulary-parallel cross entropy) or gathers them whole on each (frameworks.yaml
    ``vocab_parallel_logits``)."""
    return f.framework is None or f.framework.vocab_parallel_logits


def _micro_batch(f: TrainFacts, s: _Search, lay: _Layout, act1: float) -> tuple[int, bool, int]:
    """(sequences per micro-batch, whether they fit in the layout's room at ``act1`` bytes each,
    the most sequences a searched micro-batch may grow to: the rank's share or what fits).

    The largest micro-batch that fits, up to the rank's share of the global batch and the token cap;
    1 under pipeline parallelism (the pipeline fills with many small micro-batches); a pinned
    ``micro_batch`` as given, fitting or not.  With the optimizer in the backward pass there is no
    gradient accumulation: the rank's whole share, or no fit.  A micro-batch smaller than the
    rank's share accumulates, and where the stack accumulates unsharded gradients (FSDP's
    no_sync, ``lay.unsynced``) they take room from the activations.
    """

    def most(room: float) -> int:
        return int(room // act1) if act1 > 0 else 10**9

    b_max = most(lay.room)
    whole = max(1, math.ceil(lay.per_rank))  # the rank's share of the global batch
    searched = False
    if "micro_batch" in f.pinned:
        b = f.pinned["micro_batch"]
    elif f.optimizer_in_backward:
        # each gradient is applied as the backward pass produces it, so nothing accumulates: the
        # rank's whole share runs as one micro-batch (torchtune refuses optimizer_in_bwd with
        # gradient accumulation)
        b = whole
    elif lay.pp > 1:
        b = 1
    else:
        b = max(1, min(b_max, whole, _token_cap(f, s, lay.cp)))
        searched = True
    if lay.unsynced > 0.0 and b < whole:
        b_max = most(lay.room - lay.unsynced)
        if searched:
            b = max(1, min(b_max, whole, _token_cap(f, s, lay.cp)))
    fits = b_max >= b >= 1 and not (f.optimizer_in_backward and b < whole)
    return b, fits, max(b, min(b_max, whole)) if searched else b


def _token_cap(f: TrainFacts, s: _Search, cp: int) -> int:
    """The largest micro-batch searched: :data:`MICRO_BATCH_TOKENS` per GPU, a GPU holding
    ``seq/cp`` tokens of each sequence under context parallelism."""
    if cp <= 1 or not f.transformer:
        return s.micro_batch_cap
    return max(1, MICRO_BATCH_TOKENS * cp // f.seq)


def _unsynced_bytes(lay: _Layout, accumulation: int) -> float:
    """The unsharded gradients held beyond the shard on a step of ``accumulation`` micro-batches
    (``lay.unsynced``, only where the step accumulates)."""
    return lay.unsynced if accumulation > 1 else 0.0


def _memory_bytes(lay: _Layout, act: float, accumulation: int = 1) -> float:
    """Bytes per GPU: model states (with the gradients FSDP's no_sync accumulates unsharded over
    ``accumulation`` micro-batches) and activations (or what the optimizer step holds, where that is
    more), the framework's fixed share and fragmentation."""
    other = lay.states + _unsynced_bytes(lay, accumulation) + max(act, lay.step_extra)
    return other + _FIXED_BYTES + FRAGMENTATION * other


def _breakdown_gib(lay: _Layout, act: float, accumulation: int = 1) -> dict[str, float]:
    """:func:`_memory_bytes` by part, in GiB (the framework part carries ZeRO-3's buffers and a
    quantised output head's 16-bit copy)."""
    unsynced = _unsynced_bytes(lay, accumulation)
    other = lay.states + unsynced + max(act, lay.step_extra)
    return {
        "weights": lay.weights / GIB,
        # the optimizer step's fp32 gradient copies, where they outweigh the activations
        "gradients": (lay.grads + unsynced + max(0.0, lay.step_extra - act)) / GIB,
        "optimizer_states": lay.optimizer / GIB,
        "activations": act / GIB,
        "framework": (_FIXED_BYTES + FRAGMENTATION * other + lay.buffers) / GIB,
    }


def _stage_flops(f: TrainFacts, tp: int, pp: int, hw_per_seq: float) -> tuple[float, float]:
    """(hardware FLOPs per sequence on this GPU's pipeline stage, of them the LM head's).

    The slowest stage sets the pace: its whole layers, plus the LM head where that stage runs it
    (:func:`~planner.workload.parallel.busiest_stage`; BLOOM's 250k vocabulary: 1.5 layers' worth).
    """
    if pp > 1:
        layer = (hw_per_seq - f.head_flops_per_seq) / f.layers
        head_layers = f.head_flops_per_seq / layer if layer > 0 else 0.0
        n, with_head = busiest_stage(f.layers, pp, head_layers)
        head = f.head_flops_per_seq if with_head else 0.0
        return (layer * n + head) / tp, head / tp
    return hw_per_seq / float(tp * pp), f.head_flops_per_seq / float(tp * pp)


def _matmul_efficiency(
    f: TrainFacts,
    s: _Search,
    tp: int,
    b: int,
    stage_flops: float,
    head_flops: float | None = None,
    ep: int = 1,
    cp: int = 1,
) -> float:
    """Matmul efficiency from this micro-batch's shapes: the layers' matmuls and the LM head,
    weighted by their FLOPs on the slowest stage (:func:`~planner.workload.efficiency.matmul_fraction`;
    ``head_flops`` of its ``stage_flops`` are the head's, all of the model's head when not given);
    a mixture of experts' routed experts at their own shape over ``ep`` expert-parallel ranks
    (:func:`~planner.workload.efficiency.expert_shape`); a GPU's own ``seq/cp`` tokens of each
    sequence under context parallelism; a diffusion UNet's convolutions and linear layers at theirs
    (:func:`~planner.workload.models.unet_bytes_per_flop`, ``b`` images)."""
    if f.unet_pipeline:
        x = unet_bytes_per_flop(f.unet_pipeline, b)
        return s.stack / max(s.inverse_at_zero + s.ops_per_byte * x, 1.0)
    if not s.shaped:
        return s.flat_efficiency
    tokens = b * f.seq // cp
    experts = eff.expert_shape(
        tokens,
        f.hidden,
        f.layer_params,
        width=f.expert_ffn,
        experts=f.experts,
        experts_per_token=f.experts_per_token,
        expert_parallel=ep,
    )
    x = eff.layer_bytes_per_flop(tokens, f.hidden, tp, f.layer_params, experts)
    head = f.head_flops_per_seq / tp if head_flops is None else head_flops
    unaligned = 0.0  # the head's share of the time per FLOP its unaligned kernels add
    if head and f.vocab:
        share = head / stage_flops
        x_head = eff.head_bytes_per_flop(tokens, f.hidden, tp, f.vocab)
        x += share * (x_head - x)
        alignment = (
            eff.unaligned_alignment(-(-f.vocab // tp), eff.result_bytes(f.precision))
            if s.unaligned_head_scale
            else None
        )
        if alignment is not None:  # cuBLAS's unaligned kernels, where slower than the aligned
            aligned = max(s.inverse_at_zero + s.ops_per_byte * x_head, 1.0)
            unaligned = share * max(s.unaligned_head_scale / alignment - aligned, 0.0)
    if s.fp8_share:
        x += s.fp8_share * eff.fp8_cast_bytes_per_flop(
            f.hidden, tp, f.layer_params, tokens, s.fp8_scaling, experts
        )
    return s.stack / max(s.inverse_at_zero + s.ops_per_byte * x + unaligned, 1.0)


def _tensor_parallel_seconds(
    f: TrainFacts, s: _Search, lay: _Layout, b: int, recompute_share: float, t_matmul: float
) -> float:
    """Exposed tensor-parallel all-reduces of one micro-batch: 4 per layer, 2 more for each layer
    whose forward pass runs again (6 with full recompute; Megatron; a share ``recompute_share`` of
    the layers), each moving ``2·(tp-1)/tp`` of the activations (16-bit; fp32 in fp32 and tf32),
    pipelined with the matmuls on Hopper and newer over NVLink."""
    tp = lay.tp
    if tp <= 1:
        return 0.0
    links = s.links
    n_ar = 4.0 + 2.0 * recompute_share
    per_ar = 2.0 * (tp - 1) / tp * (b * f.seq // lay.cp) * f.hidden * eff.result_bytes(f.precision)
    layers_local = f.layers / lay.pp
    t_tp = (
        n_ar
        * layers_local
        * (per_ar / links.intra_bytes_per_s + eff.COLLECTIVE_LATENCY_S[links.intra_kind])
    )
    if s.tp_overlap:
        t_tp = eff.exposed_tensor_parallel_seconds(t_tp, tp, t_matmul)
    return t_tp


def _pipelined(
    f: TrainFacts,
    s: _Search,
    lay: _Layout,
    b: int,
    m: int,
    t_slot: float,
    headroom: float,
    act1: float,
) -> tuple[int, float, float]:
    """(chunks per rank, seconds of the ``m`` micro-batches, extra activation bytes) under pipeline
    parallelism (:func:`~planner.workload.parallel.pipeline_schedule`).

    Activations (forward) and their gradients (backward) cross each stage boundary, scattered over
    the tp ranks (Narayanan et al. 2021 s4.1); between nodes when the pipeline spans nodes.
    """
    links = s.links
    p2p_bw = (
        links.intra_bytes_per_s
        if lay.pp <= lay.pp_in
        else links.node_bytes_per_s / links.gpus_per_node
    )
    # sequence parallel leaves each tensor-parallel rank 1/tp of the boundary's activations to send;
    # without it every rank sends them whole (DeepSpeed's pipeline engine)
    split = lay.tp if _splits_sequence(f) else 1
    t_p2p = 2.0 * (b * f.seq // lay.cp) * f.hidden * eff.result_bytes(f.precision) / split / p2p_bw
    act_layers = act1 * b
    return pipeline_schedule(
        lay.pp, m, f.layers, t_slot, t_p2p, act_layers, headroom, interleave=_interleaves(f)
    )


def _interleaves(f: TrainFacts) -> bool:
    """Whether the stack runs an interleaved pipeline schedule (frameworks.yaml)."""
    return f.framework is None or f.framework.interleaved_pipeline


def _exposed_sync_seconds(lay: _Layout, t_mb: float, m: int, chunks: int) -> float:
    """What shows of the layout's data-parallel exchange in one step of ``m`` micro-batches.

    ZeRO-3's gathers overlap each micro-batch; the others' reduction overlaps the last backward
    pass (two thirds of a micro-batch), chunk by chunk under interleaving
    (:func:`~planner.workload.parallel.exposed_gradient_sync`).
    """
    if lay.zero >= 3:
        return m * max(0.0, lay.sync_s - t_mb)
    if chunks == 1:
        return max(0.0, lay.sync_s - t_mb * 2.0 / 3.0)  # one chunk: exposed_gradient_sync
    return exposed_gradient_sync(lay.sync_s, t_mb * 2.0 / 3.0, chunks, lay.pp)


class _Costed(NamedTuple):
    """One layout with one recompute mode, sized and timed.  Only the chosen ones become a
    :class:`Candidate` (:func:`_to_candidate`): the search costs thousands per quote."""

    lay: _Layout
    seq: _PerSequence
    micro_batch: int
    accumulation: int  # micro-batches per optimizer step
    chunks: int  # interleaved model chunks per pipeline rank
    fits: bool
    act_bytes: float  # activations stored per GPU
    memory_bytes: float
    piece_seconds: float
    comm_exposed_s: float
    step_s: float
    nvme_step_s: float = 0.0  # of step_s, waiting on NVMe (offload: nvme)
    paged_spill_bytes: float = 0.0  # a paged optimizer's states evicted to host RAM
    paging_s: float = 0.0  # of step_s, paging them over PCIe
    # the step as the GPU work alone sets it, before the CPU data loader's floor (= step_s where
    # the loader keeps up)
    gpu_step_s: float = 0.0
    # per micro-batch: how long the GPU waits on an eager host's dispatch, and the GPU time that
    # grows with the micro-batch's sequences (what :func:`_cost` grows a host-bound one by)
    host_idle_s: float = 0.0
    gpu_scaling_s: float = 0.0


# Expert-parallel all-to-alls per MoE layer per micro-batch: dispatch and combine in the forward
# pass, the same two in the backward pass (GShard, Lepikhin et al. 2021; Megatron-LM MoE).
ALL_TO_ALLS_PER_LAYER = 4.0


def all_to_all_shares(ep: int, tp: int, gpus_per_node: int) -> tuple[float, float]:
    """(share of a rank's routed tokens sent to other GPUs of its node, share sent to other nodes)
    for experts split over ``ep`` ranks of ``tp`` GPUs each.

    Megatron-Core numbers its ranks tensor, context, expert, data, then pipeline parallel
    (``initialize_model_parallel(order="tp-cp-ep-dp-pp")``), so an expert-parallel group holds
    consecutive GPUs: it fills a node before it spans the next one.  Routing spreads a rank's
    tokens evenly over the group's ``ep`` ranks (balanced experts), so ``1/ep`` stay on the GPU,
    ``(in_node - 1)/ep`` go over NVLink and the rest, ``(ep - in_node)/ep``, over the network."""
    if ep <= 1:
        return 0.0, 0.0
    in_node = max(1, min(ep, gpus_per_node // max(1, tp)))
    return (in_node - 1) / ep, (ep - in_node) / ep


def expected_nodes(slots: float, per_node: float, picks: int) -> float:
    """Distinct nodes a token reaches, on average, when it picks ``picks`` of ``slots`` equally likely
    places (experts or expert groups, balanced routing) laid out ``per_node`` to a node, without
    repeats: each of the ``slots / per_node`` nodes is missed with chance
    ``C(slots - per_node, picks) / C(slots, picks)``."""
    if slots <= 0 or per_node <= 0:
        return 0.0
    miss = 1.0
    for i in range(max(0, picks)):
        left = slots - per_node - i
        if left <= 0:
            miss = 0.0
            break
        miss *= left / (slots - i)
    return slots / per_node * (1.0 - miss)


def network_copies_per_token(
    f: TrainFacts, ep: int, tp: int, gpus_per_node: int
) -> tuple[float, float]:
    """(copies of a token's hidden state that cross NVLink, copies that cross the node network) in
    one all-to-all, for experts split over ``ep`` ranks of ``tp`` GPUs (consecutive GPUs, a node
    filled first: :func:`all_to_all_shares`).

    A plain all-to-all sends each of the ``k`` copies to its expert's rank: ``k`` times the shares.
    A dispatcher that sends per node (``dispatch_per_node``) sends a token once to each other node
    holding one of its experts, over the network to the GPU of the same index there, which forwards
    it over NVLink to each of its experts in that node: DeepSeek-V3 technical report s3.2.2
    ("transmitted via IB to the GPUs with the same in-node index on their target nodes ... forwarded
    via NVLink to specific GPUs that host their target experts"), implemented by DeepEP's normal
    kernels ("asymmetric-domain bandwidth forwarding, such as forwarding data from NVLink domain to
    RDMA domain", deepseek-ai/DeepEP README) and NVIDIA's HybridEP ("Hierarchical Communication
    Design": RDMA between nodes, NVLink inside).  The network then carries the expected distinct
    other nodes (:func:`expected_nodes` over the experts), capped under group-limited routing by the
    nodes its ``groups_per_token`` groups can span (DeepSeek-V3 s3.2.2: "each token will be sent to
    at most M nodes", M = 4; Megatron-Core ``--moe-router-num-groups`` set to the nodes of the EP
    group for "node-limited routing"); every copy but those for the receiving GPU crosses NVLink once.
    """
    k = float(f.experts_per_token)
    if ep <= 1 or not k:
        return 0.0, 0.0
    intra, inter = all_to_all_shares(ep, tp, gpus_per_node)
    in_node = max(1, min(ep, gpus_per_node // max(1, tp)))
    nodes = math.ceil(ep / in_node)
    if not f.dispatch_per_node or nodes <= 1 or not f.experts:
        return k * intra, k * inter
    experts = float(f.experts)
    reached = expected_nodes(experts, experts / nodes, f.experts_per_token)
    groups, chosen = f.expert_groups, f.groups_per_token
    if groups and chosen:
        if groups >= nodes:  # a node holds whole groups: the chosen groups' nodes
            reached = min(reached, expected_nodes(groups, groups / nodes, chosen))
        else:  # a group spans nodes: the experts of the chosen groups, over their nodes
            reached = expected_nodes(
                chosen * experts / groups, experts / nodes, f.experts_per_token
            )
    return k * (in_node - 1) / in_node, reached * (nodes - 1) / nodes


def _all_to_all_seconds(f: TrainFacts, s: _Search, lay: _Layout, b: int) -> float:
    """The expert-parallel exchanges of one micro-batch on this stage: each token's hidden state
    (16-bit; fp32 in fp32 and tf32) goes to its experts and comes back, forward and backward, as
    the copies of :func:`network_copies_per_token`: those for the ranks in the node cross NVLink
    and those for other nodes the node's network (per GPU) at the same time: the slower of the two
    sets the time.  Not overlapped with the matmuls."""
    if lay.ep <= 1 or not f.experts_per_token:
        return 0.0
    tokens = b * f.seq // lay.cp
    width = eff.result_bytes(f.precision)
    per_copy = ALL_TO_ALLS_PER_LAYER * tokens * f.hidden * width * (f.layers / lay.pp) / lay.tp
    intra, inter = network_copies_per_token(f, lay.ep, lay.tp, s.links.gpus_per_node)
    per_gpu_network = s.links.node_bytes_per_s / max(1, s.links.gpus_per_node)
    return max(per_copy * intra / s.links.intra_bytes_per_s, per_copy * inter / per_gpu_network)


def _routing_seconds(
    f: TrainFacts, s: _Search, lay: _Layout, b: int, recompute_share: float
) -> float:
    """The token permutation and unpermutation of one micro-batch's mixture-of-experts layers on
    this stage, streamed through HBM (:func:`~planner.workload.efficiency.routing_bytes_per_token`;
    the tp ranks share the tokens; the recomputed share of the layers runs its forward pass
    again); 0 for a dense model."""
    if not (f.experts and f.experts_per_token) or not f.transformer:
        return 0.0
    per_token = eff.routing_bytes_per_token(
        f.hidden,
        f.experts_per_token,
        recompute=recompute_share,
        value_bytes=eff.result_bytes(f.precision),
    )
    return (b * f.seq // lay.cp) * per_token * (f.layers / lay.pp) / lay.tp / s.bytes_per_s


# The host synchronisation of dropless routing (frameworks.yaml, ``moe_host_ms_per_layer``) happens
# in the forward pass, where the tokens-per-expert counts are copied to the host; the backward pass
# reuses them but sets up the same per-expert GEMMs again.  The figure covers both; a layer whose
# forward runs again under recompute pays its forward part once more, taken as half (U).
MOE_HOST_FORWARD_SHARE = 0.5


def moe_host_seconds(f: TrainFacts, lay: _Layout, recompute_share: float) -> float:
    """Seconds one micro-batch's mixture-of-experts layers on this stage keep the GPU waiting on the
    host (:attr:`~planner.workload.frameworks.FrameworkProfile.moe_host_s_per_layer`; the recomputed
    share of the layers pays its forward part again, :data:`MOE_HOST_FORWARD_SHARE`); 0 for a dense
    model.  A time per layer and micro-batch, whatever the micro-batch's tokens."""
    if not (f.experts and f.experts_per_token) or f.framework is None:
        return 0.0
    per_layer = f.framework.moe_host_s_per_layer
    return per_layer * (1.0 + MOE_HOST_FORWARD_SHARE * recompute_share) * f.layers / lay.pp


# Of a layer's kernels, the forward pass launches about a third (each forward operation has a
# backward for its input and one for its weight, or fused into one): a layer whose forward runs
# again under recompute dispatches that third once more (U).
EAGER_FORWARD_SHARE = 1.0 / 3.0
# Host time of the ZeRO-3/FSDP hooks an eager stack runs on each wrapped unit (a transformer layer:
# the wrap policy of the Hugging Face, LitGPT, torchtune and fsdp_qlora recipes) per micro-batch:
# the pre-forward unshard, the pre-backward unshard and the post-backward reduce-scatter.  The
# pre-forward one was measured at about 1 ms of CPU ("FSDP::pre_forward calls take 50% of the step
# time ... 1 ms launches", pytorch/pytorch issue #173680, FSDP2 on torch 2.10); the two backward
# hooks are taken as the same, and FSDP1's as no cheaper (U: the issue times only the first).  The
# host runs them between the layer's kernel launches, so they add to its dispatch time, and show
# where the GPU's work is the shorter: LitGPT's LoRA runs of one short sample a rank (H313, H314,
# H319, H320) take 6-11 ms more a layer under FSDP than on one GPU.
FSDP_HOOK_HOST_S_PER_UNIT = 3 * 1.0e-3


def qlora_dequant_seconds(f: TrainFacts, s: _Search, lay: _Layout, recompute_share: float) -> float:
    """Seconds a micro-batch spends dequantising QLoRA's NF4 weights on this GPU: its stage's share
    of them over the tensor-parallel ranks, read at their NF4 width and written at 16 (and cast to
    bf16 where the stack quantised from fp16), for the forward
    and backward matmuls and the recomputed forward (a share ``recompute_share`` of the layers),
    at the streaming share of the bandwidth; whatever the micro-batch's tokens."""
    if f.quantised_params <= 0:
        return 0.0
    per_pass = (f.quantised_bytes_per_param + f.dequant_write_bytes_per_param) * (
        f.quantised_params / (lay.tp * lay.pp)
    )
    passes = eff.QLORA_DEQUANT_PASSES + recompute_share
    return passes * per_pass / (s.bytes_per_s * eff.MEMORY_BW_FRACTION)


def eager_host_seconds(f: TrainFacts, lay: _Layout, recompute_share: float) -> float:
    """Seconds the host of an eager stack takes to dispatch one micro-batch of this stage's
    transformer layers (``f.eager_host_s_per_layer``, :func:`planner.workload.training.eager_host_per_layer`;
    the recomputed share of the layers dispatching their forward pass again,
    :data:`EAGER_FORWARD_SHARE`); 0 for a fused or compiled stack and for a model without layers.
    The GPU runs the micro-batch meanwhile, so the micro-batch takes the longer of the two.  Under
    ZeRO-3/FSDP each layer is a wrapped unit whose hooks the host runs too
    (:data:`FSDP_HOOK_HOST_S_PER_UNIT`)."""
    per_layer = f.eager_host_s_per_layer
    if per_layer <= 0.0:
        return 0.0
    hooks = FSDP_HOOK_HOST_S_PER_UNIT if lay.zero >= 3 else 0.0
    return (per_layer * (1.0 + EAGER_FORWARD_SHARE * recompute_share) + hooks) * f.layers / lay.pp


# The communication kernels of an overlapped all-to-all run on SMs of their own, which the
# computation beside them loses: DeepSeek-V3 dedicates "only 20 SMs" to its all-to-all kernels and
# finds that "20 out of the 132 SMs available in the H800 GPU" spent on communication "will limit
# the computational throughput" (DeepSeek-V3 technical report s3.2.2 and s3.5.1); DeepEP's and
# Megatron-Core's DeepEP default is the same 20.  20 / 132 of the GPU on every part (U: the B200
# has 148 SMs, HybridEP recipes set 16-32).
ALL_TO_ALL_SM_SHARE = 20.0 / 132.0


def exposed_all_to_all_seconds(t_all_to_all: float, t_compute: float, overlapped: bool) -> float:
    """What shows of a micro-batch's all-to-alls beside ``t_compute`` seconds of its computation:
    all of them, or with the exchanges overlapped by another micro-batch's computation (DeepSeek-V3
    technical report s3.2.1, DualPipe: a forward and a backward chunk's all-to-alls hidden behind
    each other's computation; Megatron-Core ``overlap_moe_expert_parallel_comm``) what outlasts that
    computation, and never less than the computation lost to the SMs the exchanges run on while
    they last (:data:`ALL_TO_ALL_SM_SHARE`): with a share ``φ`` of the SMs busy for ``T`` seconds
    the computation ends ``φ·T`` later, or the exchanges end last."""
    if not overlapped:
        return t_all_to_all
    return max(ALL_TO_ALL_SM_SHARE * t_all_to_all, t_all_to_all - t_compute)


# Ring transfers of one layer's key/value chunk per context-parallel step: the forward pass sends
# K and V, the backward pass sends K and V again (each rank keeps only its own chunk) together with
# the dK and dV accumulated for them, twice the bytes (Megatron-Core context-parallel guide: "all-
# gather ... to collect the full sequence of KV", "reduce-scatter ... to the activation gradients of
# KV in backward", "gathers KV again in backward", both "transformed to point-to-point
# communications in ring topology"; Transformer Engine's AttnFuncWithCPAndKVP2P).  A layer whose
# forward pass runs again under recompute passes its K and V round once more.
RING_PASSES_PER_LAYER = 3.0


def ring_step_bytes(f: TrainFacts, tokens: float, tp: int) -> float:
    """Bytes of the key/value chunk one context-parallel rank sends its neighbour in one ring step
    of one layer: K and V (2) for its ``tokens`` in the attention's precision (16 bits, fp8 recipes
    included, whose attention runs in bf16; 4 bytes in fp32 and tf32: :func:`efficiency.result_bytes`),
    ``kv_heads x head_dim`` wide, split over the tensor-parallel ranks (each keeps whole key/value
    heads, one at least: grouped-query attention with fewer key/value heads than ``tp`` repeats
    them)."""
    width = f.kv_width or float(f.hidden)
    heads = f.kv_heads or f.heads
    return 2.0 * tokens * eff.result_bytes(f.precision) * width / max(1, min(tp, heads))


def _ring_seconds(f: TrainFacts, s: _Search, lay: _Layout, b: int, recompute_share: float) -> float:
    """The context-parallel ring of one micro-batch on this stage: in each layer ``cp - 1`` steps
    per pass (:data:`RING_PASSES_PER_LAYER`, one more for the recomputed share of the layers), each
    sending one :func:`ring_step_bytes` chunk to the next rank while receiving one.  A context group
    inside a node (Megatron-Core numbers ranks tensor, then context parallel, so ``tp x cp`` GPUs in
    a row) passes over NVLink; one that spans nodes over the node's network, a GPU's share of it."""
    cp = lay.cp
    if cp <= 1:
        return 0.0
    links = s.links
    inside = lay.tp * cp <= links.gpus_per_node
    bandwidth = links.intra_bytes_per_s if inside else links.node_bytes_per_s / links.gpus_per_node
    # a step across nodes pays at least the slowest in-node launch latency (U: no network figure)
    kind = links.intra_kind if inside else "pcie"
    latency = eff.COLLECTIVE_LATENCY_S.get(kind, eff.COLLECTIVE_LATENCY_S["pcie"])
    steps = (cp - 1) * (RING_PASSES_PER_LAYER + recompute_share) * f.layers / lay.pp
    chunk = ring_step_bytes(f, b * f.seq / cp, lay.tp)
    return steps * (chunk / bandwidth + latency)


def exposed_ring_seconds(t_ring: float, t_attention: float, cp: int) -> float:
    """What shows of a micro-batch's context-parallel ring beside ``t_attention`` seconds of its
    attention core on this GPU.  The ring runs ``cp`` attention steps per layer and pass, each on
    the key/value chunk in hand while the next one travels (Megatron-Core / Transformer Engine
    overlap each step's send and receive with the step's attention; Liu et al. 2023, Ring
    Attention, s3: "overlapping the communication of key-value blocks with the computation of
    blockwise attention"), so ``cp - 1`` transfers hide behind ``cp - 1`` of the ``cp`` equal
    attention steps: what outlasts them shows, ``max(0, t_ring - (cp - 1)/cp x t_attention)``."""
    if cp <= 1 or t_ring <= 0.0:
        return 0.0
    return max(0.0, t_ring - (cp - 1) / cp * t_attention)


def _cost(f: TrainFacts, s: _Search, lay: _Layout, seq: _PerSequence) -> _Costed:
    """Size the micro-batch of one layout and recompute mode, and time one optimizer step:
    ``m`` micro-batches of matmuls, activation traffic and tensor-parallel all-reduces (pipelined
    when ``pp > 1``), the exposed data-parallel exchange and the optimizer step, slowed by
    stragglers.

    A step does the global batch, whatever the data-parallel size: when the ranks cannot share it
    evenly, the busiest rank's ``ceil(per_rank)`` sequences set the step time (its last
    micro-batch partly filled) while the step still advances the job by the global batch, so a
    gang of 56 GPUs is not credited with a bigger batch than one of 64 (fewer gradient exchanges
    per sequence) for work nobody asked for."""
    b, fits, b_most = _micro_batch(f, s, lay, seq.act_bytes)
    c = _cost_at(f, s, lay, seq, b, fits)
    if c.host_idle_s > 0.0 and b < b_most:
        # host-bound: the GPU waits on the host's dispatch, which does not grow with the
        # micro-batch, so a tuned config grows the micro-batch until the GPU's share of it covers
        # the dispatch (timm's benchmark runs a ViT at 512 images of 197 tokens, ~100k tokens a
        # micro-batch, not the token cap's 8,192), within what fits and the rank's share, split
        # evenly (no partly filled micro-batch: a last one of fewer sequences still waits for a
        # whole dispatch), and only where that is faster
        grown = math.ceil(b * (1.0 + c.host_idle_s / max(c.gpu_scaling_s, 1e-12)))
        grown = min(b_most, _even_micro_batch(math.ceil(lay.per_rank - 1e-9), grown, b_most))
        c_grown = _cost_at(f, s, lay, seq, grown, fits)
        if c_grown.piece_seconds < c.piece_seconds:
            c = c_grown
    return c


def _even_micro_batch(busiest: int, grown: int, most: int) -> int:
    """A micro-batch of at least ``grown`` sequences (up to twice it, and ``most``) that divides
    the busiest rank's ``busiest`` sequences, so that every micro-batch of the step is full; where
    none does, the fewest micro-batches of ``grown`` or more hold them as evenly as one size can:
    ``ceil(busiest / (busiest // grown))``, its last micro-batch partly filled."""
    for d in range(grown, min(most, 2 * grown, busiest) + 1):
        if busiest % d == 0:
            return d
    return math.ceil(busiest / max(1, busiest // grown))


def _cost_at(
    f: TrainFacts, s: _Search, lay: _Layout, seq: _PerSequence, b: int, fits: bool
) -> _Costed:
    """:func:`_cost` at a micro-batch of ``b`` sequences (``fits``: whether they fit)."""
    act1 = seq.act_bytes
    act = act1 * b
    busiest = math.ceil(lay.per_rank - 1e-9)  # sequences on the busiest rank
    m = max(1, math.ceil(busiest / b))
    g = _matmul_efficiency(f, s, lay.tp, b, seq.stage_flops, seq.head_flops, lay.ep, lay.cp)
    t_matmul = b * seq.stage_flops / (s.peak_flops * g)
    t_mb = t_matmul + seq.passes * b * seq.traffic_bytes / s.bytes_per_s + lay.cast_s
    # an eager stack's separate elementwise kernels, each a streaming kernel of its own
    t_mb += b * seq.eager_bytes / (s.bytes_per_s * eff.MEMORY_BW_FRACTION)
    # QLoRA's dequantised weight copies: the same whatever the micro-batch's tokens
    t_dequant = qlora_dequant_seconds(f, s, lay, seq.recompute_share)
    t_mb += t_dequant
    t_mb += _routing_seconds(f, s, lay, b, seq.recompute_share)
    # the kernels' fixed times: the same whatever the micro-batch's size
    t_floor = f.kernels_per_micro_batch * s.kernel_floor_s
    t_mb += t_floor
    fixed_s = t_dequant + t_floor + lay.cast_s  # the micro-batch's GPU time whatever its size
    t_ring = 0.0
    if lay.cp > 1:
        t_attention = b * seq.attention_flops / (s.peak_flops * g)
        t_ring = exposed_ring_seconds(
            _ring_seconds(f, s, lay, b, seq.recompute_share), t_attention, lay.cp
        )
        t_mb += t_ring
    t_tp = _tensor_parallel_seconds(f, s, lay, b, seq.recompute_share, t_matmul)
    t_mb += exposed_all_to_all_seconds(
        _all_to_all_seconds(f, s, lay, b), t_mb, f.overlap_all_to_all
    )
    # an eager stack's host dispatches the micro-batch while the GPU runs it: the slower sets it;
    # the host's dispatch and a mixture of experts' host syncs do not shrink with the micro-batch;
    # QLoRA's dequantisations add to either (efficiency.QLORA_DEQUANT_PASSES)
    t_gpu = t_mb
    t_host = eager_host_seconds(f, lay, seq.recompute_share)
    t_moe = moe_host_seconds(f, lay, seq.recompute_share)
    t_mb = max(t_gpu - t_dequant, t_host) + t_dequant + t_moe
    v = 1
    if lay.pp > 1:
        headroom = (lay.room - act) * (1.0 + FRAGMENTATION)
        v, compute, extra = _pipelined(f, s, lay, b, m, t_mb + t_tp, headroom, act1)
        act += extra
    else:
        # the last micro-batch partly filled: its GPU work in proportion, its host time, its
        # QLoRA dequantisation and its kernels' fixed times whole
        fill = busiest / b - (m - 1)
        fixed = t_dequant + t_floor
        last = max(fill * (t_gpu - fixed) + t_floor, t_host) + t_dequant + fill * t_tp + t_moe
        compute = (m - 1) * (t_mb + t_tp) + last
    exposed = _exposed_sync_seconds(lay, t_mb, m, v)
    # offload: nvme: the gradients' swap-out shows where it outlasts the last backward pass
    nvme_exposed = max(0.0, lay.nvme_gradient_s - t_mb * 2.0 / 3.0)
    memory = _memory_bytes(lay, act, m)
    spilled, paging_s = _paging(s, lay, memory)
    step = (compute + exposed + lay.optimizer_s + paging_s + nvme_exposed) * s.straggler
    # the host's DataLoader prepares the next batches while the GPU works: the slower sets the step
    # (each of a rank's GPUs brings its own loader workers)
    gpus_per_rank = lay.tp * lay.pp * lay.cp
    gpu_step = step
    step = max(step, busiest * f.loader_s_per_sample / gpus_per_rank)
    return _Costed(
        lay=lay,
        seq=seq,
        micro_batch=b,
        accumulation=m,
        chunks=v,
        fits=fits,
        act_bytes=act,
        memory_bytes=memory,
        piece_seconds=f.samples_per_piece / (lay.per_rank * lay.dp) * step,
        comm_exposed_s=exposed + (m + lay.pp - 1) * (t_tp + t_ring),
        step_s=step,
        nvme_step_s=(lay.nvme_s + nvme_exposed) * s.straggler,
        paged_spill_bytes=spilled,
        paging_s=paging_s * s.straggler,
        gpu_step_s=gpu_step,
        host_idle_s=max(0.0, t_host - (t_gpu - t_dequant)),
        gpu_scaling_s=t_gpu - fixed_s,
    )


def _to_candidate(f: TrainFacts, s: _Search, c: _Costed) -> Candidate:
    """The :class:`Candidate` (strategy, memory breakdown) of a costed layout."""
    lay = c.lay
    strategy = Strategy(
        data_parallel=lay.dp,
        tensor_parallel=lay.tp,
        pipeline_parallel=lay.pp,
        zero_stage=lay.zero,
        activation_checkpointing=c.seq.mode,
        method=f.method,
        optimizer=f.optimizer,
        micro_batch_size=int(c.micro_batch),
        grad_accumulation=c.accumulation,
        virtual_stages=c.chunks,
        gpus_per_piece=s.gpus,
        expert_parallel=f.pinned.get("expert", lay.ep * lay.tp if lay.ep > 1 else 1),
        recomputed_layers=c.seq.recomputed_layers,
        layers_per_stage=c.seq.stage_layers,
        context_parallel=lay.cp,
    )
    return Candidate(
        strategy=strategy,
        fits=c.fits,
        memory_bytes=c.memory_bytes,
        breakdown=_breakdown_gib(lay, c.act_bytes, c.accumulation),
        piece_seconds=c.piece_seconds,
        hardware_flops_per_piece=f.samples_per_piece * c.seq.hw_flops,
        comm_exposed_s=c.comm_exposed_s,
        step_s=c.step_s,
        nvme_step_s=c.nvme_step_s,
        paged_bytes=lay.paged,
        paged_spill_bytes=c.paged_spill_bytes,
        paging_s=c.paging_s,
        gpu_step_s=c.gpu_step_s,
    )


def _block_targets(f: TrainFacts, s: _Search, lay: _Layout) -> list[tuple[int, float]]:
    """The micro-batches block recompute sizes its recomputed layers for on ``lay``, each as
    (sequences, activations held beyond them as a share of them).

    Without pipeline parallelism one sequence and the rank's whole share of the global batch (up to
    the token cap): the least and the most the micro-batch search may run (:func:`_micro_batch`).
    Under pipeline parallelism one sequence, alone and with the activations each interleaving
    choice adds (:func:`~planner.workload.parallel.pipeline_schedule`): more chunks, a smaller
    bubble, for a few more recomputed layers.  A pinned micro-batch as given."""
    if "micro_batch" in f.pinned:
        sizes = [f.pinned["micro_batch"]]
    elif lay.pp > 1:
        sizes = [1]
    else:
        sizes = [1, max(1, min(math.ceil(lay.per_rank), _token_cap(f, s, lay.cp)))]
    targets = [(b, 0.0) for b in dict.fromkeys(sizes)]
    if lay.pp > 1 and _interleaves(f):
        b = sizes[0]
        m = max(1, math.ceil(math.ceil(lay.per_rank - 1e-9) / b))
        targets += [
            (b, interleaved_extra_share(lay.pp, v)) for v in interleave_choices(lay.pp, m, f.layers)
        ]
    return targets


def _block_layers(
    f: TrainFacts, s: _Search, lay: _Layout, act_by_layers: dict[int, float]
) -> tuple[int, ...]:
    """The numbers of each stage's layers block recompute is costed with on ``lay``: for each
    micro-batch of :func:`_block_targets` that keeping every layer's activations does not fit, the
    fewest that make it fit.  The recompute a Megatron-LM user sets with
    ``--recompute-num-layers``: just enough to fit, not the whole third of full recompute.
    ``act_by_layers`` memoises the activation bytes per sequence with k layers recomputed, for
    the layout's tensor x pipeline split.

    Pinned to block recompute (``activation_checkpointing: block``), one layer where everything
    already fits and all but one where nothing does, so the layout is still costed."""
    n = stage_layers(f.layers, lay.pp)
    if n < 2:  # one layer per stage: block recompute is full recompute
        return (n,) if s.modes == ("block",) else ()
    headroom_factor = 1.0 + FRAGMENTATION

    def act1(k: int) -> float:
        if k not in act_by_layers:
            act_by_layers[k] = _activation_bytes(
                f, lay.tp, lay.pp, "block", s.flash, k / n, lay.cp, lay.autocast
            )[0]
        return act_by_layers[k]

    whole = max(1, math.ceil(lay.per_rank))

    def fits(k: int, b: int, extra_share: float) -> bool:
        act = act1(k) * b
        # an accumulating step holds the unsharded gradients too (:func:`_micro_batch`)
        room = lay.room - (lay.unsynced if b < whole else 0.0)
        if room <= 0.0 or int(room // act1(k)) < b:
            return False
        return act * extra_share <= (room - act) * headroom_factor

    counts: list[int] = []
    targets = _block_targets(f, s, lay)
    for b, extra_share in targets:
        if fits(0, b, extra_share) or not fits(n - 1, b, extra_share):
            continue
        lo, hi = 1, n - 1  # the fewest recomputed layers that fit: act_by_layers falls with k
        while lo < hi:
            mid = (lo + hi) // 2
            if fits(mid, b, extra_share):
                hi = mid
            else:
                lo = mid + 1
        counts.append(lo)
    if not counts and s.modes == ("block",):
        b, extra_share = targets[0]
        counts.append(1 if fits(0, b, extra_share) else n - 1)
    return tuple(sorted(set(counts)))


class _Sized(NamedTuple):
    """One layout with one recompute mode, sized but not timed: what a search that asks only
    whether anything fits reads (:func:`any_layout_fits`)."""

    lay: _Layout
    seq: _PerSequence
    micro_batch: int
    fits: bool


def _size(f: TrainFacts, s: _Search, lay: _Layout, seq: _PerSequence) -> _Sized:
    """The micro-batch of one layout and recompute mode and whether it fits (:func:`_micro_batch`,
    as :func:`_cost` sizes it), untimed."""
    b, fits, _ = _micro_batch(f, s, lay, seq.act_bytes)
    return _Sized(lay, seq, b, fits)


# What the layout search yields: each layout timed (_cost) or only sized (_size).
_C = TypeVar("_C", _Costed, _Sized)


def _costed(
    f: TrainFacts,
    s: _Search,
    pp: int,
    cost: Callable[[TrainFacts, _Search, _Layout, _PerSequence], _C],
) -> Iterator[_C]:
    """Every layout with ``pp`` pipeline stages, costed with each recompute mode, in search order:
    tensor size, then ZeRO stage, then recompute (block recompute with each count of
    :func:`_block_layers`); a layout's modes stop at the first that fits the rank's whole share of
    the global batch in one micro-batch (more recompute would only be slower).

    Then, for a long sequence (:func:`context_sizes`), the same with each context-parallel size:
    under :data:`CONTEXT_PARALLEL_FREE_SEQ` tokens only where no split without it fits without
    recompute; for each tensor size those that keep ``tp x cp`` inside a node first, larger ones,
    whose ring crosses the network, only where none of those fits with a whole sequence on every
    data-parallel rank.  A pinned size alone.  Each is timed or only sized, as ``cost`` does."""
    splits = [tp for tp in s.tensor_sizes if s.gpus % (tp * pp) == 0]
    first, *more = s.context_sizes
    # tensor sizes with a layout that fits and gives every data-parallel rank a whole sequence: a
    # layout whose ranks sit idle (a global batch of fewer sequences than ranks) leaves GPUs a
    # larger context split would put to work, across nodes if need be
    fitted: set[int] = set()
    plain = False  # a layout fits without recompute
    for tp in splits:
        if s.gpus % (tp * pp * first):
            continue  # no layout: tensor x pipeline x context must divide the GPUs
        for c in _costed_split(f, s, tp, pp, first, cost):
            if c.fits:
                if c.lay.per_rank >= 1.0:
                    fitted.add(tp)
                plain = plain or c.seq.mode == "none"
            yield c
    if not more or (plain and f.seq < CONTEXT_PARALLEL_FREE_SEQ):
        return
    for tp in splits:
        for cp in more:
            if s.gpus % (tp * pp * cp):
                continue
            if tp * cp > s.gpus_per_node and tp in fitted:
                break
            for c in _costed_split(f, s, tp, pp, cp, cost):
                if c.fits and c.lay.per_rank >= 1.0:
                    fitted.add(tp)
                yield c


def _costed_split(
    f: TrainFacts,
    s: _Search,
    tp: int,
    pp: int,
    cp: int,
    cost: Callable[[TrainFacts, _Search, _Layout, _PerSequence], _C],
) -> Iterator[_C]:
    """The layouts of one tensor x pipeline x context split, costed as :func:`_costed` says (the
    per-sequence costs built once per split, apart for the layouts that run eager autocast)."""
    per_mode: dict[bool, dict[str, _PerSequence]] = {}
    blocks: dict[bool, dict[int, _PerSequence]] = {False: {}, True: {}}
    act_by_layers: dict[bool, dict[int, float]] = {False: {}, True: {}}
    for lay in _layouts(f, s, tp, pp, cp):
        amp = lay.autocast
        if amp not in per_mode:
            per_mode[amp] = {
                mode: _per_sequence_memo(
                    f,
                    tp,
                    pp,
                    mode,
                    s.flash,
                    s.attention_extra,
                    0,
                    cp,
                    s.attention_recompute_extra,
                    amp,
                )
                for mode in s.modes
                if mode != "block"
            }
        for seq in _mode_sequences(f, s, lay, per_mode[amp], blocks[amp], act_by_layers[amp]):
            c = cost(f, s, lay, seq)
            yield c
            if c.fits and c.micro_batch >= math.ceil(lay.per_rank):
                break


def _mode_sequences(
    f: TrainFacts,
    s: _Search,
    lay: _Layout,
    per_mode: dict[str, _PerSequence],
    blocks: dict[int, _PerSequence],
    act_by_layers: dict[int, float],
) -> Iterator[_PerSequence]:
    """The :class:`_PerSequence` of each recompute mode on ``lay``, in search order; block
    recompute once per count of :func:`_block_layers` (built once per tensor x pipeline split, in
    ``blocks``)."""
    for mode in s.modes:
        if mode != "block":
            yield per_mode[mode]
            continue
        if not f.transformer:
            continue
        for k in _block_layers(f, s, lay, act_by_layers):
            if k not in blocks:
                blocks[k] = _per_sequence_memo(
                    f,
                    lay.tp,
                    lay.pp,
                    "block",
                    s.flash,
                    s.attention_extra,
                    k,
                    lay.cp,
                    s.attention_recompute_extra,
                    lay.autocast,
                )
            yield blocks[k]


def _simplicity(c: _Costed) -> tuple[int, int, int, int, int, int]:
    """Rank among near-equals, lower is simpler: DP < ZeRO-1 < ZeRO-2 < ZeRO-3 < TP < CP < PP,
    then the least recompute (:data:`RECOMPUTE_ORDER`, then the fewest recomputed layers)."""
    lay = c.lay
    return (
        int(lay.pp > 1),
        int(lay.cp > 1),
        int(lay.tp > 1),
        lay.zero,
        RECOMPUTE_ORDER.index(c.seq.mode),
        c.seq.recomputed_layers,
    )


def _preferred(c: _Costed, best: _Costed) -> bool:
    """Whether ``c`` replaces ``best``: over 1% faster, or within 1% and simpler."""
    faster = c.piece_seconds < best.piece_seconds * 0.99
    tie = c.piece_seconds <= best.piece_seconds * 1.01
    return faster or (tie and _simplicity(c) < _simplicity(best))


def search_training(
    f: TrainFacts,
    gpu: GpuSpec,
    count: int,
    links: Links,
    *,
    flash: bool,
    least_if_none_fits: bool = False,
) -> tuple[Candidate | None, Candidate | None]:
    """(fastest fitting candidate or None, the least-memory candidate for reporting a miss).

    Both are None when no layout exists at all: a pinned ``tensor x pipeline`` that does not divide
    ``count`` (:func:`unplaceable_layout` says why).  Steps: resolve the GPU, links and choices
    (:func:`_setup`); enumerate the layouts and cost each with each recompute mode
    (:func:`_costed`); keep the least memory and, among those that fit, the fastest, the simplest
    among equals (:func:`_preferred`).

    ``least_if_none_fits``: the second candidate is the least-memory one only where no layout
    fits, and the fastest otherwise: an estimate reads it only then, and making the candidate a
    search did not choose cost a quote's two hundred estimates about a millisecond.
    """
    s = _setup(f, gpu, count, links, flash)
    best: _Costed | None = None
    least: _Costed | None = None
    for pp in s.pipeline_sizes:
        # Pipeline parallel only when nothing fits without it (llm-analysis / MT-NLG placement rule:
        # TP inside the node first, PP only if the model still does not fit).
        if pp > 1 and best is not None and "pipeline" not in f.pinned:
            break
        for c in _costed(f, s, pp, _cost):
            if least is None or c.memory_bytes < least.memory_bytes:
                least = c
            if c.fits and (best is None or _preferred(c, best)):
                best = c
    chosen = _to_candidate(f, s, best) if best is not None else None
    if least is best or (least_if_none_fits and chosen is not None):
        # the fastest layout also needs the least memory (or the least is not asked for)
        return chosen, chosen
    return chosen, _to_candidate(f, s, least) if least is not None else None


def any_layout_fits(f: TrainFacts, gpu: GpuSpec, count: int, links: Links, *, flash: bool) -> bool:
    """Whether :func:`search_training` finds a layout that fits, found by sizing the layouts'
    micro-batches alone: none is timed, and the search stops at the first that fits (a job that
    fits nowhere asks this of each remedy it suggests, a dozen searches)."""
    s = _setup(f, gpu, count, links, flash)
    return any(c.fits for pp in s.pipeline_sizes for c in _costed(f, s, pp, _size))


def pinned_unit(pinned: dict[str, int]) -> int:
    """The GPUs one copy of a pinned layout takes, every count a multiple of it: tensor x pipeline x
    context, and the pinned expert-parallel GPUs on each pipeline stage, whole tensor-parallel
    groups of them (:func:`expert_parallel_sizes`)."""
    tp, pp = pinned.get("tensor", 1), pinned.get("pipeline", 1)
    cp, ep = pinned.get("context", 1), pinned.get("expert", 1)
    return pp * cp * max(tp, ep)


def unplaceable_layout(pinned: dict[str, int], count: int) -> str | None:
    """Why a pinned tensor x pipeline layout cannot run on ``count`` GPUs, or None when it can.

    Every data-parallel replica holds ``tensor x pipeline x context`` GPUs, so the count must be a
    multiple of that product (Megatron-LM: world size divisible by tensor x pipeline model-parallel
    size), and of a pinned expert-parallel group's GPUs on each pipeline stage (Megatron Core:
    world size divisible by expert x pipeline model-parallel size, :func:`expert_parallel_sizes`).
    """
    unit = pinned_unit(pinned)
    if count % unit == 0:
        return None
    tp, pp = pinned.get("tensor", 1), pinned.get("pipeline", 1)
    cp, ep = pinned.get("context", 1), pinned.get("expert", 1)
    parts = [f"tensor parallel {tp}"] if "tensor" in pinned else []
    if "context" in pinned:
        parts.append(f"context parallel {cp}")
    if "pipeline" in pinned:
        parts.append(f"pipeline parallel {pp}")
    if "expert" in pinned:
        parts.append(f"expert parallel {ep}")
    gpus = "GPU" if count == 1 else "GPUs"
    return f"{' x '.join(parts)} needs a multiple of {unit} GPUs; {count} {gpus} cannot hold it"


def tensor_across_nodes(pinned: dict[str, int], count: int, gpus_per_node: int) -> str | None:
    """Why a pinned tensor-parallel group cannot run on nodes of ``gpus_per_node`` GPUs, or None
    when it fits in one.  Its all-reduces, four a layer and micro-batch, are timed over the links
    inside a node; a group spread over nodes would run them on the nodes' network, which the
    estimate does not time and the stacks' recipes avoid (Narayanan et al. 2021: tensor parallel
    up to the GPUs of a server, pipeline parallel across servers)."""
    tp = pinned.get("tensor", 1)
    if tp <= min(gpus_per_node, count):
        return None
    if count < tp:
        return None  # the count cannot hold it at all (unplaceable_layout says so)
    return f"tensor parallel {tp} needs {tp} GPUs in one node, and the nodes hold {gpus_per_node}"


def explain(c: Candidate, count: int, gpus_per_node: int = 8) -> str:
    """Why this strategy: the one-line reason shown to users (``gpus_per_node``: whether a context-
    parallel group stays inside a node)."""
    s = c.strategy
    bits = []
    if s.tensor_parallel == 1 and s.pipeline_parallel == 1 and s.zero_stage == 0:
        bits.append("model states fit on each GPU, so plain data parallel")
    if s.zero_stage:
        what = (
            "optimizer states"
            if s.zero_stage == 1
            else "optimizer states and gradients"
            if s.zero_stage == 2
            else "weights, gradients and optimizer states"
        )
        shards = s.data_parallel * s.context_parallel  # ZeRO shards over dp x cp
        bits.append(
            f"ZeRO-{s.zero_stage} shards {what} over {shards} GPU{'s' if shards > 1 else ''}"
        )
    if s.tensor_parallel > 1:
        bits.append(f"tensor parallel {s.tensor_parallel} inside a node")
    if s.context_parallel > 1:
        cp = s.context_parallel
        where = "inside a node" if s.tensor_parallel * cp <= gpus_per_node else "across nodes"
        bits.append(
            f"context parallel {cp} {where}: each sequence split over {cp} GPUs, so each holds "
            f"1/{cp} of its activations and FLOPs, keys and values passed round a ring behind the "
            "attention"
        )
    if s.expert_parallel > 1:
        bits.append(
            f"expert parallel {s.expert_parallel}: the experts split over {s.expert_parallel} "
            "GPUs, tokens sent to them and back (all-to-all)"
        )
    if s.pipeline_parallel > 1:
        bits.append(
            f"pipeline parallel {s.pipeline_parallel}"
            + (f", interleaved {s.virtual_stages} chunks per GPU" if s.virtual_stages > 1 else "")
        )
    if s.activation_checkpointing == "block":
        chunks = f" with {s.virtual_stages} chunks per GPU" if s.virtual_stages > 1 else ""
        bits.append(
            f"{s.recompute_text} (the fewest that fit micro-batch {s.micro_batch_size}{chunks}), "
            "the rest keep their activations"
        )
    elif s.activation_checkpointing != "none":
        bits.append(
            f"{s.activation_checkpointing} activation recompute to fit micro-batch {s.micro_batch_size}"
        )
    else:
        bits.append(f"micro-batch {s.micro_batch_size} x {s.grad_accumulation} accumulation steps")
    return "; ".join(bits) + "; fastest layout that fits, simplest among equals"
