"""The training estimate: what the strategy search needs from a spec, and the fastest layout's time,
memory, interconnect and fabric (pure).

Conventions (see :mod:`planner.workload.estimator` for the whole picture):

- ``wall_hours`` covers every piece (``spec.pieces``); with several pieces the GPUs may be split
  into groups that each run a piece, and the split with the shortest total time wins.
- Training time includes interruptions and checkpoints (Young/Daly, :mod:`.efficiency`).
- ``efficiency`` is MFU: model FLOPs (no recompute) / (GPUs x dense peak x wall time).

What depends only on the spec is memoised, keyed on the (frozen, hashable) spec itself: the
optimizer asks for thousands of (GPU, count, topology) estimates of one workload.  The memo never
writes into the spec; :func:`clear_memo` empties it.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

from planner.gpu_specs import GpuSpec
from planner.schema import Fabric, Interconnect
from planner.workload import compute
from planner.workload import efficiency as eff
from planner.workload import memory as mem
from planner.workload.data_loader import LOADER_ADVICE, loader_assumption, loader_limit
from planner.workload.estimate_types import (
    PAUSES_PHASE,
    Estimate,
    StepBounds,
    Topology,
    make_estimate,
    topology_links,
)
from planner.workload.frameworks import FrameworkProfile, auto_framework, load_frameworks
from planner.workload.models import (
    DIFFUSION_PIPELINES,
    RESNET50_CONV3X3_SHARE,
    diffusion_pipeline,
    get_preset,
    unet_attention_share,
    unet_matmuls,
)
from planner.workload.parallel import Links
from planner.workload.spec import Kind, WorkloadSpec, workload_framework
from planner.workload.strategy import (
    Candidate,
    Strategy,
    TrainFacts,
    attention_kernel,
    autocast_layout,
    clear_search_memo,
    explain,
    managed_memory_on_host,
    search_training,
)
from planner.workload.uncertainty import error_regime, estimate_error

# Default global batch in tokens by model size for pre-training: GPT-3 paper Table 2.1
# (125M-760M: 0.5M; 1.3B-2.7B: 1M; 6.7B-13B: 2M; 175B: 3.2M).
_PRETRAIN_BATCH_TOKENS = ((1e9, 0.5e6), (5e9, 1e6), (50e9, 2e6), (math.inf, 4e6))
# Fine-tuning default: 32 sequences per optimizer step (U: a common HF recipe, 8 per device x 4).
FINETUNE_BATCH_SEQUENCES = 32.0
# Non-transformers: 256 samples per step (Goyal et al. 2017 ResNet-50 reference batch).
VISION_BATCH_SAMPLES = 256.0
# A fabric is "enough" when exposed communication costs less than this share of the step.
FABRIC_TOLERANCE = 0.10
# Memo sizes: facts per (spec, optimizer, method); Ethernet searches per (spec, GPU, layout, links).
_FACTS_MEMO_SIZE = 256
_ETHERNET_MEMO_SIZE = 4096


# -- spec facts (memoised per spec) -----------------------------------------------------------------


def global_batch(spec: WorkloadSpec) -> float:
    """Samples (sequences for a transformer) in one optimizer step of ``spec``: a batch given in
    tokens holds the nearest whole number of sequences (GPT-3's 3.2M tokens, 1,562.5 of 2,048;
    was 1.5 sequences for 1,536.5 tokens, a global batch smaller than its micro-batch of 2)."""
    t = spec.train
    seq = spec.seq_len if spec.model.is_transformer else 1
    if t.global_batch_samples is not None:
        return t.global_batch_samples
    if t.global_batch_tokens is not None:
        return max(1.0, float(round(t.global_batch_tokens / seq)))
    if not spec.model.is_transformer:
        return VISION_BATCH_SAMPLES
    if spec.kind is Kind.FINETUNE:
        return FINETUNE_BATCH_SEQUENCES
    params = spec.model.params or 0.0
    for limit, tokens in _PRETRAIN_BATCH_TOKENS:
        if params < limit:
            return max(1.0, float(round(tokens / seq)))
    return 1.0  # pragma: no cover


@dataclass(frozen=True)
class _Shape:
    """The model-dependent fields of :class:`TrainFacts` (see there): a transformer's from its
    shape, another model's from its per-sample FLOPs and activations."""

    layers: int
    hidden: int
    heads: int
    seq: int
    vocab: int
    trainable: float
    model_flops_per_seq: float
    recompute_flops_per_seq: dict[str, float]
    act_base_per_seq_layer: float
    act_score_per_seq_layer: float
    logits_per_seq: float
    act_per_sample: float
    largest_layer: float
    head_flops_per_seq: float
    layer_params: float
    attention_flops_per_seq: dict[str, float]
    causal: bool
    # what a fused kernel executes of a causal decoder's attention under its sliding windows
    # (efficiency.window_attention_share; 1: none)
    attention_window_share: float = 1.0
    # eager torch.autocast (memory.py): what its fp32 norms and softmax add per sequence and layer,
    # and the embedding table it does not cast (0 where the output head's matmul reads it)
    autocast_act_per_seq_layer: float = 0.0
    autocast_score_per_seq_layer: float = 0.0
    autocast_mlp_per_seq_layer: float = 0.0  # an arithmetic GeLU's fp32 chain (TrainFacts)
    uncast_embedding: float = 0.0
    # an eager stack's separate elementwise kernels (efficiency.eager_traffic); None for a fused or
    # compiled stack
    eager_traffic: eff.EagerTraffic | None = None
    # of act_base_per_seq_layer, what a stack's tensor parallelism leaves whole on every rank where
    # it does not split the norms over the sequence (memory.replicated_bytes_per_sbh; 0 where it
    # does)
    act_replicated_per_seq_layer: float = 0.0
    # kernels one micro-batch launches whatever its size, where the model's layer table gives them
    # (a diffusion UNet); each pays the GPU's kernel floor (0: not charged)
    kernels_per_micro_batch: float = 0.0
    # a diffusion UNet's pipeline, whose layer table shapes its matmuls ("" otherwise)
    unet_pipeline: str = ""
    # a convolutional network's share of its FLOPs in 3x3 stride-1 convolutions (Winograd on the
    # CUDA cores: efficiency.winograd_speedup)
    conv3x3_share: float = 0.0


def _fp32_norms_counted(spec: WorkloadSpec) -> bool:
    """Whether a layer's count already keeps its norms' inputs in fp32: an eager RMSNorm's upcast
    (a gated model on a stack without fused layers; memory.fp32_norm_bytes_per_sbh)."""
    stack, _ = workload_framework(spec)
    gated = spec.model.mlp == "gated" or spec.model.is_moe
    return gated and not stack.fused_layers


def layer_bytes_per_sbh(spec: WorkloadSpec, precision: str) -> float:
    """Stored bytes per s·b·h of one of the model's layers, score term aside (memory.py):
    Korthikanti et al. 2022's count with the model's attention width, its MLP (``model.ffn``,
    ``model.mlp``; a mixture of experts: each routed expert's for its width) and, for a gated
    (Llama-style) model, the stack's kernels: eager ones keep the SwiGLU's intermediate values and
    the RMSNorm's fp32 inputs, fused ones neither (``fused_layers`` in frameworks.yaml)."""
    m = spec.model
    h = int(m.hidden or 1)
    ratio = m.attention_width / h
    dropout = dropout_on(spec)
    stack, _ = workload_framework(spec)
    gated = m.mlp == "gated" or m.is_moe
    norms = mem.fp32_norm_bytes_per_sbh(precision) if _fp32_norms_counted(spec) else 0.0
    if m.is_moe and m.expert_ffn > 0:
        return mem.moe_layer_bytes_per_sbh(
            m.expert_ffn / h,
            int(m.experts_per_token or 1),
            dropout=dropout,
            precision=precision,
            attention_ratio=ratio,
            fused=stack.fused_layers,
            norm_extra_bytes=norms,
        )
    arithmetic_gelu = _arithmetic_gelu(spec)
    _, width = _mlp_width_per_token(spec)
    mlp: float | None = None
    if m.ffn is not None or arithmetic_gelu:
        mlp = mem.mlp_bytes_per_sbh(
            width / h, gated=gated, fused=stack.fused_layers, precision=precision
        )
        if arithmetic_gelu:  # the chain's stored values (efficiency.ARITHMETIC_GELU)
            e = eff.result_bytes(precision)
            mlp += width / h * eff.arithmetic_gelu_stored_bytes(e, autocast=False)
    return mem.layer_bytes_per_sbh(
        dropout=dropout,
        precision=precision,
        attention_ratio=ratio,
        mlp_bytes=mlp,
        norm_extra_bytes=norms,
    )


def _lora_output_width(spec: WorkloadSpec, mlp_width: float) -> float:
    """Summed output widths of the linear layers LoRA adapts (``training.lora_targets``): the
    queries and values, or all four attention projections, or those and the MLP's (a gated MLP's
    gate and up projections at its width, the down projection at the hidden size)."""
    m = spec.model
    w, kv, h = float(m.attention_width), float(m.kv_width), float(m.hidden or 1)
    targets = spec.train.lora_targets
    if targets == "qv":
        return w + kv
    attention = w + 2.0 * kv + h
    if targets == "attention":
        return attention
    gated = m.mlp == "gated" or m.is_moe
    # each routed expert a token visits has its own down projection back to the hidden size
    downs = int(m.experts_per_token or 1) if m.is_moe else 1
    return attention + (2.0 if gated else 1.0) * mlp_width + downs * h


def _mlp_width_per_token(spec: WorkloadSpec) -> tuple[int, float]:
    """(experts each token reaches, the MLP width a token passes through): a mixture of experts'
    routed experts' widths times the experts per token, a dense model's ``ffn`` (4 x hidden where
    not given)."""
    m = spec.model
    k = int(m.experts_per_token or 1) if m.is_moe else 1
    if m.is_moe and m.expert_ffn > 0:
        return k, float(m.expert_ffn) * k
    return k, (float(m.ffn) if m.ffn is not None else 4.0 * float(m.hidden or 1)) * k


def lora_dropout_bytes_per_token(spec: WorkloadSpec, stack: FrameworkProfile, meth: str) -> float:
    """Bytes one layer stores per token for LoRA dropout (memory.lora_dropout_bytes_per_sb): the
    dropped copies of the adapted layers' inputs and their masks; 0 without adapters or with a
    dropout probability of 0 (``training.lora_dropout``, else the stack's default)."""
    if meth not in ("lora", "qlora"):
        return 0.0
    if mem.lora_dropout(stack.name, spec.train.lora_dropout) <= 0.0:
        return 0.0
    m = spec.model
    h = float(m.hidden or 1)
    k, mlp_width = _mlp_width_per_token(spec)
    copies, inputs = mem.lora_dropout_input_widths(
        targets=spec.train.lora_targets,
        hidden=h,
        attention_width=float(m.attention_width),
        mlp_width=mlp_width,
        gated=m.mlp == "gated" or m.is_moe,
        fused_qkv=stack.name in mem.FUSED_QKV_LORA_STACKS,
        experts_per_token=k,
    )
    return mem.lora_dropout_bytes_per_sb(
        copies, inputs, spec.train.precision.value, inputs_kept=meth == "qlora"
    )


def layer_eager_traffic(spec: WorkloadSpec, meth: str) -> eff.EagerTraffic | None:
    """The :class:`~planner.workload.efficiency.EagerTraffic` of one of the model's layers under its
    stack, or None where the stack fuses its layers (``fused_layers`` in frameworks.yaml)."""
    stack, _ = workload_framework(spec)
    if stack.fused_layers:
        return None
    m = spec.model
    h = float(m.hidden or 1)
    k, mlp_width = _mlp_width_per_token(spec)
    gated = m.mlp == "gated" or m.is_moe
    precision = spec.train.precision.value
    stored_extra = 0.0
    if gated:
        # the eager layer's stored extras (memory.py): the norms' fp32 inputs and the SwiGLU's
        # intermediate values beyond the fused kernel's
        width = mlp_width / k / h
        unfused = mem.mlp_bytes_per_sbh(width, gated=True, fused=False, precision=precision)
        fused = mem.mlp_bytes_per_sbh(width, gated=True, fused=True, precision=precision)
        stored_extra = (mem.fp32_norm_bytes_per_sbh(precision) + k * (unfused - fused)) * h
    arithmetic_gelu = _arithmetic_gelu(spec)
    if arithmetic_gelu:
        stored_extra += mlp_width * eff.arithmetic_gelu_stored_bytes(
            eff.result_bytes(precision), autocast=False
        )
    return eff.eager_traffic(
        hidden=h,
        attention_width=float(m.attention_width),
        kv_width=float(m.kv_width),
        mlp_width=mlp_width,
        heads=int(m.heads or 1),
        seq=spec.seq_len,
        gated=gated,
        dropout=dropout_on(spec),
        element_bytes=eff.result_bytes(precision),
        lora_width=_lora_output_width(spec, mlp_width) if meth in ("lora", "qlora") else 0.0,
        stored_extra=stored_extra,
        causal=m.arch == "decoder",
        arithmetic_gelu=arithmetic_gelu,
        # the projections that read each norm's output: query, key and value (one where fused),
        # a gated MLP's gate and up
        attention_inputs=1 if m.fused_projections else 3,
        mlp_inputs=2 if gated and not m.fused_projections else 1,
        # autocast's residual stream is fp32 where the model's own weights are: a full fine-tune
        # or pre-training of the fp32 model, and QLoRA, whose unquantised weights (embeddings,
        # norms) peft's prepare_model_for_kbit_training casts to fp32; LoRA adapts a 16-bit base
        fp32_stream=meth in ("full", "qlora"),
    )


def _autocast_gelu_bytes_per_token(spec: WorkloadSpec, precision: str) -> float:
    """What eager autocast's fp32 chain of an arithmetic GeLU stores per token and layer beyond
    the 16-bit chain's (efficiency.arithmetic_gelu_stored_bytes); 0 for other MLPs."""
    if not _arithmetic_gelu(spec):
        return 0.0
    _, width = _mlp_width_per_token(spec)
    e = eff.result_bytes(precision)
    return width * (
        eff.arithmetic_gelu_stored_bytes(e, autocast=True)
        - eff.arithmetic_gelu_stored_bytes(e, autocast=False)
    )


def _arithmetic_gelu(spec: WorkloadSpec) -> bool:
    """Whether the model's plain MLP runs its activation as eager Python arithmetic
    (efficiency.ARITHMETIC_GELU: GPT-2's gelu_new) on a stack that runs the model's own modules as
    written (frameworks.yaml ``eager_activations``)."""
    stack, _ = workload_framework(spec)
    m = spec.model
    gated = m.mlp == "gated" or m.is_moe
    return stack.eager_activations and not gated and m.activation in eff.ARITHMETIC_GELU


def _transformer_shape(spec: WorkloadSpec, params: float, meth: str) -> _Shape:
    """A transformer's :class:`_Shape`: FLOPs and activation bytes per sequence (Korthikanti et al.
    2022 eq. 2, with or without the dropout masks; memory.py).  The attention core's FLOPs and the
    query, key, value and attention-output activations scale with the attention width ``w``,
    ``heads x head_dim`` (the hidden size unless ``model.head_dim`` says otherwise)."""
    m = spec.model
    dropout = dropout_on(spec)
    precision = spec.train.precision.value
    L, h, a, seq = int(m.layers or 1), int(m.hidden or 1), int(m.heads or 1), spec.seq_len
    w = m.attention_width
    # a mixture of experts runs each token through its active parameters (FLOPs, matmul shapes) and
    # stores, in place of a dense MLP's activations, those of each expert it is routed to, as wide as
    # the experts are; memory holds every parameter
    active = float(m.active_params or params)
    act_layer = layer_bytes_per_sbh(spec, precision)
    vocab = int(m.vocab or 0)
    # encoder fine-tunes end in a small task head; decoders (and MLM pre-training) in the vocabulary
    stack, _ = workload_framework(spec)
    logits = (
        mem.logits_bytes(
            seq,
            1,
            vocab,
            bytes_per_logit=mem.logit_bytes(stack.name, chunked=spec.train.chunked_loss),
        )
        if (m.arch == "decoder" or spec.kind is Kind.PRETRAIN)
        else 0.0
    )
    return _Shape(
        layers=L,
        hidden=h,
        heads=a,
        seq=seq,
        vocab=vocab,
        trainable=params
        if meth == "full"
        else mem.lora_params(L, h, spec.train.lora_rank, spec.train.lora_targets),
        model_flops_per_seq=seq
        * compute.train_model_flops_per_token(active, L, w, seq, method=meth),
        recompute_flops_per_seq={
            mode: seq * compute.recompute_flops_per_token(active, L, w, seq, mode)
            for mode in ("none", "selective", "full")
        },
        # LoRA dropout's copies of the adapted layers' inputs are stored with the layer's own
        act_base_per_seq_layer=(act_layer * h + lora_dropout_bytes_per_token(spec, stack, meth))
        * seq,
        act_replicated_per_seq_layer=0.0
        if stack.sequence_parallel
        else mem.replicated_bytes_per_sbh(
            dropout=dropout,
            precision=precision,
            norm_extra_bytes=mem.fp32_norm_bytes_per_sbh(precision)
            if _fp32_norms_counted(spec)
            else 0.0,
        )
        * seq
        * h,
        act_score_per_seq_layer=mem.score_bytes_per_as2b(dropout=dropout, precision=precision)
        * a
        * seq
        * seq,
        logits_per_seq=logits,
        act_per_sample=0.0,
        largest_layer=float(
            m.largest_layer_params
            or (max((params - vocab * h) / L, vocab * h) if m.is_moe else 0.0)
            or max(12.0 * h * h, vocab * h)
        ),
        # the output projection: 2·V·h FLOPs per token forward, twice that backward (4 with frozen
        # weights), the same accounting as 6·N
        head_flops_per_seq=seq * (6.0 if meth == "full" else 4.0) * vocab * h if logits else 0.0,
        # one layer's weights: all but the vocabulary matrix (GPT layer 12·h², never below 4·h²)
        layer_params=max(active - vocab * h, 4.0 * h * h * L) / L,
        # the attention core's share of those FLOPs: 12·L·w·s per token, and the 4·L·w·s of its
        # forward pass again under recompute (compute.py)
        attention_flops_per_seq={
            mode: seq
            * (
                compute.attention_flops_per_token(L, w, seq)
                + (0.0 if mode == "none" else 4.0 * L * w * seq)
            )
            for mode in ("none", "selective", "full")
        },
        # a decoder masks each token's attention to the tokens before it, and a windowed layer
        # to the last sliding_window of them
        causal=m.arch == "decoder",
        attention_window_share=eff.window_attention_share(
            seq, m.sliding_window, m.windowed_layers / max(L, 1)
        )
        if m.arch == "decoder"
        else 1.0,
        autocast_act_per_seq_layer=mem.autocast_extra_bytes_per_sbh(
            fp32_norms_counted=_fp32_norms_counted(spec)
        )
        * seq
        * h,
        autocast_mlp_per_seq_layer=_autocast_gelu_bytes_per_token(spec, precision) * seq,
        autocast_score_per_seq_layer=(
            mem.autocast_score_bytes_per_as2b(dropout=dropout)
            - mem.score_bytes_per_as2b(dropout=dropout, precision=precision)
        )
        * a
        * seq
        * seq,
        # a full fine-tune's token embedding is looked up, not cast, unless the tied output head
        # multiplies by it
        uncast_embedding=float(vocab * h)
        if meth == "full" and not (logits and m.tied_embeddings is not False)
        else 0.0,
        eager_traffic=layer_eager_traffic(spec, meth),
    )


# A non-transformer's stored activations per sample where its model gives none, GiB of 16-bit values
# (U: the resnet50 preset's 0.09 rounded up).
DEFAULT_ACTIVATION_GIB = 0.1
# A convolutional network's share of its FLOPs in 3x3 stride-1 convolutions where its model gives
# none: the resnet50 preset's (U: the common case).
DEFAULT_CONV3X3_SHARE = RESNET50_CONV3X3_SHARE


def _other_shape(spec: WorkloadSpec, params: float) -> _Shape:
    """A non-transformer's :class:`_Shape`: one "sequence" is one sample, every weight trains.

    Its stored activations are the model's ``activation_gib_per_sample`` (16-bit values) at the
    precision's width; an eager stack's separate activation and add kernels move
    :data:`~planner.workload.efficiency.EAGER_IMAGE_VALUES_PER_STORED_VALUE` more per stored value.

    A latent-diffusion UNet (``arch: diffusion``) is timed with its pipeline's layer table
    (:func:`~planner.workload.models.diffusion_pipeline`): the share of its FLOPs in attention
    scores runs at the fused attention kernel's rate, as a transformer's attention core does
    (:func:`~planner.workload.efficiency.attention_time_factor`, not causal), and every micro-batch
    launches :data:`~planner.workload.efficiency.TRAINING_KERNELS_PER_FORWARD_KERNEL` x the UNet
    forward's kernels, each paying the GPU's kernel floor whatever the batch: at a few images per
    GPU those fixed times are as long as the compute.
    """
    m = spec.model
    fps = float((spec.data.flops_per_sample if spec.data else None) or m.flops_per_sample or 0.0)
    width = eff.result_bytes(spec.train.precision.value)
    gib = m.activation_gib_per_sample
    stored_values = float(DEFAULT_ACTIVATION_GIB if gib is None else gib) * mem.GIB / 2.0
    stack, _ = workload_framework(spec)
    fwd, bwd = eff.EAGER_IMAGE_VALUES_PER_STORED_VALUE
    eager = (
        None
        if stack.fused_layers
        else eff.EagerTraffic(
            forward=fwd * stored_values * width, backward=bwd * stored_values * width
        )
    )
    attention, kernels, unet = 0.0, 0.0, ""
    if m.arch == "diffusion":
        pipe = diffusion_pipeline(m.preset)
        attention = unet_attention_share(pipe) * fps
        kernels = eff.TRAINING_KERNELS_PER_FORWARD_KERNEL * pipe.unet_kernels
        unet = pipe.name
    return _Shape(
        layers=1,
        hidden=1,
        heads=1,
        seq=1,
        vocab=0,
        trainable=params,
        model_flops_per_seq=fps,
        recompute_flops_per_seq={"none": 0.0},
        act_base_per_seq_layer=0.0,
        act_score_per_seq_layer=0.0,
        logits_per_seq=0.0,
        act_per_sample=stored_values * width,
        largest_layer=float(m.largest_layer_params or params),
        head_flops_per_seq=0.0,
        layer_params=0.0,
        attention_flops_per_seq={"none": attention} if attention else {},
        causal=False,
        eager_traffic=eager,
        kernels_per_micro_batch=kernels,
        unet_pipeline=unet,
        conv3x3_share=conv3x3_share(spec),
    )


def conv3x3_share(spec: WorkloadSpec) -> float:
    """``spec``'s share of its FLOPs in 3x3 stride-1 convolutions: the model's (a preset's counted
    layers), else ResNet-50's for a convolutional network (:data:`DEFAULT_CONV3X3_SHARE`) and none
    for a U-Net or diffusion model, whose 3D or attention layers it does not describe."""
    m = spec.model
    if m.conv3x3_share is not None:
        return float(m.conv3x3_share)
    return DEFAULT_CONV3X3_SHARE if m.arch == "cnn" else 0.0


def eager_host_per_layer(spec: WorkloadSpec, stack: FrameworkProfile) -> float:
    """Host seconds an eager ``stack`` takes to dispatch one of ``spec``'s transformer layers per
    micro-batch, forward and backward: the stack's figure (measured on BERT layers), a quarter more
    for a Llama-style gated layer, and each LoRA-adapted linear's own kernels
    (:data:`~planner.workload.efficiency.GATED_LAYER_HOST_FACTOR`,
    :data:`~planner.workload.efficiency.LORA_MODULE_HOST_SHARE`); 0 for a fused or compiled
    stack."""
    host = stack.eager_host_s_per_layer
    gated = spec.model.mlp == "gated" or spec.model.is_moe
    per_layer = host * (eff.GATED_LAYER_HOST_FACTOR if gated else 1.0)
    if spec.train.method.value in ("lora", "qlora"):
        modules = eff.lora_modules(
            spec.train.lora_targets, fused_qkv=bool(spec.model.fused_projections), gated=gated
        )
        per_layer += host * eff.LORA_MODULE_HOST_SHARE * modules
    return per_layer


def _compute_train_facts(
    spec: WorkloadSpec, optimizer: str | None, method: str | None
) -> TrainFacts:
    """:func:`train_facts` without the memo."""
    t = spec.train
    opt = optimizer or t.optimizer.value
    meth = method or t.method.value
    params = float(spec.model.params or 0.0)
    precision = t.precision.value
    transformer = spec.model.is_transformer
    shape = _transformer_shape(spec, params, meth) if transformer else _other_shape(spec, params)
    limit = loader_limit(spec)
    stack, stack_auto = workload_framework(spec)
    quantization = mem.qlora_quantization(stack.name, t.quantization)
    head_quantised = _head_quantised(stack, shape)
    frozen_bytes = (
        mem.qlora_frozen_bytes_per_param(
            params - shape.trainable,
            shape.vocab,
            shape.hidden,
            tied=spec.model.tied_embeddings is not False,
            head_quantised=head_quantised,
            quantization=quantization,
        )
        if meth == "qlora"
        # NVFP4 LoRA keeps its frozen weights as the fp8 recipe does, in 8 bits (U)
        else mem.BYTES_PER_VALUE.get("fp8" if precision == "fp4" else precision, 2.0)
    )
    if precision in ("fp32", "tf32") and meth == "lora":
        # a LoRA model loaded in fp32 keeps its frozen weights in fp32; QLoRA's stay NF4 whatever
        # the compute dtype (bnb_4bit_compute_dtype=float32; was counted at 4 bytes, as LoRA)
        frozen_bytes = 4.0
    finetune = spec.kind is Kind.FINETUNE
    autocast = stack.autocast and precision in ("fp16", "bf16")
    opt_traffic = eff.OPTIMIZER_TRAFFIC_BYTES[opt]
    if _foreach_adamw(opt, spec.train.fused_optimizer, stack.fused_optimizer):
        opt_traffic = eff.FOREACH_ADAMW_TRAFFIC_BYTES  # torch.optim.AdamW's foreach passes
    if precision == "pure-bf16" and opt in mem.BNB_OPTIMIZERS:
        opt_traffic -= eff.PURE_BF16_BNB_TRAFFIC_SAVING  # no master copy; states at their width
    elif precision == "pure-bf16":
        opt_traffic /= 2.0  # bf16 weights, gradients and states: half the bytes an fp32 copy moves
    # FLOPs of the linear layers' weight matmuls (fp8 under Transformer Engine): 2 per weight per
    # token forward, 4 more backward (2 with frozen weights)
    linear = 0.0
    if transformer and shape.model_flops_per_seq > 0:
        per_weight = 6.0 if meth == "full" else 4.0
        linear = per_weight * shape.seq * shape.layers * shape.layer_params
    linear_share = min(1.0, linear / shape.model_flops_per_seq) if linear else 0.0
    return TrainFacts(
        transformer=transformer,
        params=params,
        trainable=shape.trainable,
        state=mem.state_bytes(precision, opt),
        frozen_bytes=frozen_bytes,
        layers=shape.layers,
        hidden=shape.hidden,
        heads=shape.heads,
        seq=shape.seq,
        model_flops_per_seq=shape.model_flops_per_seq,
        recompute_flops_per_seq=shape.recompute_flops_per_seq,
        act_base_per_seq_layer=shape.act_base_per_seq_layer,
        act_score_per_seq_layer=shape.act_score_per_seq_layer,
        act_replicated_per_seq_layer=shape.act_replicated_per_seq_layer,
        logits_per_seq=shape.logits_per_seq,
        act_per_sample=shape.act_per_sample,
        samples_per_piece=spec.samples_per_piece,
        global_batch=global_batch(spec),
        method=meth,
        optimizer=opt,
        finetune=finetune,
        # torch.amp keeps fp32 parameters, so DDP all-reduces fp32 gradients in fine-tuning stacks;
        # Megatron/FSDP pre-training reduces 16-bit gradients.
        # pure bf16 has no fp32 copy to reduce.
        grad_comm_bytes=2.0
        if precision == "pure-bf16"
        else 4.0
        if (finetune or precision in ("fp32", "tf32"))
        else 2.0,
        opt_traffic=opt_traffic,
        largest_layer=shape.largest_layer,
        head_flops_per_seq=shape.head_flops_per_seq,
        pinned={k: v for k, v in t.parallelism.model_dump().items() if v is not None},
        recompute_modes=(
            ("none", "selective", "block", "full")
            if t.activation_checkpointing.value == "auto"
            else (t.activation_checkpointing.value,)
        ),
        layer_params=shape.layer_params,
        vocab=shape.vocab,
        precision=precision,
        linear_share=linear_share,
        framework=stack,
        framework_auto=stack_auto,
        framework_usual=auto_framework(finetune=finetune, images=spec.model.takes_images),
        eager_host_s_per_layer=eager_host_per_layer(spec, stack) if transformer else 0.0,
        attention_kernel=t.attention_kernel,
        host_optimizer=t.offload in ("optimizer", "nvme"),
        optimizer_in_backward=t.optimizer_in_backward,
        overlap_all_to_all=t.overlap_all_to_all,
        dispatch_per_node=t.dispatch_per_node,
        expert_ffn=spec.model.expert_ffn if transformer else 0.0,
        expert_groups=int(spec.model.expert_groups or 0),
        groups_per_token=int(spec.model.groups_per_token or 0),
        paged_bytes=mem.paged_state_bytes(opt),
        nvme_optimizer=t.offload == "nvme",
        nvme_read_bytes_per_s=(t.nvme_read_gb_per_s or eff.NVME_READ_GB_PER_S) * 1e9,
        nvme_write_bytes_per_s=(t.nvme_write_gb_per_s or eff.NVME_WRITE_GB_PER_S) * 1e9,
        experts=int(spec.model.experts or 0),
        experts_per_token=int(spec.model.experts_per_token or 0),
        expert_share=spec.model.expert_params / params if params and transformer else 0.0,
        attention_flops_per_seq=shape.attention_flops_per_seq,
        causal=shape.causal,
        attention_window_share=shape.attention_window_share,
        kv_width=(spec.model.kv_heads or spec.model.heads or 1) * spec.model.head_width
        if transformer
        else 0.0,
        kv_heads=int(spec.model.kv_heads or spec.model.heads or 0) if transformer else 0,
        autocast_state=mem.autocast_state_bytes(opt) if autocast else None,
        autocast_params=mem.autocast_cast_params(shape.trainable, shape.uncast_embedding)
        if autocast
        else 0.0,
        autocast_act_per_seq_layer=shape.autocast_act_per_seq_layer if autocast else 0.0,
        autocast_score_per_seq_layer=shape.autocast_score_per_seq_layer if autocast else 0.0,
        autocast_mlp_per_seq_layer=shape.autocast_mlp_per_seq_layer if autocast else 0.0,
        eager_traffic=shape.eager_traffic,
        kernels_per_micro_batch=shape.kernels_per_micro_batch,
        unet_pipeline=shape.unet_pipeline,
        conv3x3_share=shape.conv3x3_share,
        quantised_params=_quantised_params(spec, params, shape, head_quantised)
        if meth == "qlora"
        else 0.0,
        quantised_bytes_per_param=mem.NF4_BYTES_PER_PARAM[quantization],
        dequant_write_bytes_per_param=eff.QLORA_DEQUANT_WRITE_BYTES_PER_PARAM
        + (
            eff.QLORA_DEQUANT_CAST_BYTES_PER_PARAM
            if stack.name in eff.QLORA_FP16_QUANTISING_STACKS
            else 0.0
        ),
        head_dequant_bytes=mem.head_dequant_bytes(shape.vocab, shape.hidden)
        if (meth == "qlora" and head_quantised)
        else 0.0,
        loader_s_per_sample=limit.capped_seconds_per_image if limit is not None else 0.0,
    )


def _quantised_params(
    spec: WorkloadSpec, params: float, shape: _Shape, head_quantised: bool = False
) -> float:
    """The frozen parameters QLoRA keeps in NF4: all but the trainable adapters and the 16-bit token
    embedding (and the output head, unless tied to it or quantised with the linear layers;
    memory.qlora_frozen_bytes_per_param)."""
    frozen = max(params - shape.trainable, 0.0)
    tied = spec.model.tied_embeddings is not False or head_quantised
    return max(frozen - float(shape.vocab) * shape.hidden * (1 if tied else 2), 0.0)


def _head_quantised(stack: FrameworkProfile, shape: _Shape) -> bool:
    """Whether ``stack``'s QLoRA quantises the model's output head with its linear layers
    (memory.HEAD_QUANTISING_STACKS); a model without logits has no such head."""
    return stack.name in mem.HEAD_QUANTISING_STACKS and shape.logits_per_seq > 0 and shape.vocab > 0


_facts_memo = functools.lru_cache(maxsize=_FACTS_MEMO_SIZE)(_compute_train_facts)


def _hashable(spec: WorkloadSpec) -> bool:
    """Whether ``spec`` can key a memo: a validated spec always can; a copy made with
    ``model_copy(update=...)`` (which pydantic does not validate) may hold a list or a dict."""
    try:
        hash(spec)
    except TypeError:
        return False
    return True


def train_facts(
    spec: WorkloadSpec, *, optimizer: str | None = None, method: str | None = None
) -> TrainFacts:
    """Precompute what the strategy search needs from ``spec`` (optionally with a changed optimizer
    or method, for suggestions); memoised on the spec's value."""
    try:
        return _facts_memo(spec, optimizer, method)
    except TypeError:
        if _hashable(spec):
            raise
        return _compute_train_facts(spec, optimizer, method)


def clear_memo() -> None:
    """Forget the memoised facts, Ethernet searches and the searches' own memos (tests and
    benchmarks time a cold start)."""
    _facts_memo.cache_clear()
    _ethernet_memo.cache_clear()
    _pinned_memo.cache_clear()
    _ethernet_links_memo.cache_clear()
    _assumptions_memo.cache_clear()
    _source_memo.cache_clear()
    clear_search_memo()


def dropout_on(spec: WorkloadSpec) -> bool:
    """Whether training stores dropout masks: ``model.dropout`` > 0, or unknown (a custom model
    without ``model.dropout``, assumed on as in Korthikanti et al. 2022)."""
    p = spec.model.dropout
    return p is None or p > 0


def flash_attention(spec: WorkloadSpec, gpu: GpuSpec) -> bool:
    """FlashAttention as ``training.flash_attention`` says, else where the GPU supports it."""
    if spec.train.flash_attention is None:
        return eff.supports_flash_attention(gpu)
    return spec.train.flash_attention


def _flash_off_reason(spec: WorkloadSpec) -> str:
    """Why FlashAttention is off: the workload says so, or the GPU does not run it
    (:func:`~planner.workload.efficiency.supports_flash_attention`: before Ampere, and the Jetson
    Orin, an Ampere GPU)."""
    if spec.train.flash_attention is False:
        return "off (training.flash_attention: false)"
    return "off (the GPU does not run FlashAttention-2: older than Ampere, or a Jetson)"


def _activation_assumption(spec: WorkloadSpec, flash: bool) -> str:
    """The assumptions line on stored activations: FlashAttention and dropout (a transformer's), or
    the model's stored activations per sample (any other model)."""
    p = spec.model.dropout
    m = spec.model
    if not m.is_transformer:
        given_gib = m.activation_gib_per_sample
        gib = float(DEFAULT_ACTIVATION_GIB if given_gib is None else given_gib)
        width = eff.result_bytes(spec.train.precision.value)
        given = "assumed" if given_gib is None else "model.activation_gib_per_sample"
        return (
            f"activations: {gib * width / 2.0:.3g} GiB stored per sample ({gib:g} GiB of 16-bit "
            f"values, {given}"
            + (f", at {width:g} bytes each in {spec.train.precision.value}" if width != 2 else "")
            + "), written in the forward pass and read in the backward pass"
        )
    # in 16 bits: each routed expert's activations for its own width, the MLP's for its kind
    per_sbh = layer_bytes_per_sbh(spec, "bf16")
    stack, _ = workload_framework(spec)
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
        f"FlashAttention {'on' if flash else _flash_off_reason(spec)}; activations per "
        f"Korthikanti et al. 2022, {per_sbh:.3g}·s·b·h bytes per layer"
        + (" (each routed expert's for its width)" if m.is_moe else "")
        + (
            f" (a gated MLP {m.ffn:,} wide"
            + (
                ", fused"
                if stack.fused_layers
                else ": eager SwiGLU and fp32 RMSNorm inputs, as the stack runs them"
            )
            + ")"
            if m.mlp == "gated" and m.ffn is not None
            else ""
        )
        + (
            f" ({m.activation} as the model's code writes it: eight elementwise kernels, in fp32 "
            "under autocast, whose intermediate values it keeps)"
            if _arithmetic_gelu(spec)
            else ""
        )
        + (
            f" (attention {m.attention_width:,} wide: heads x head_dim)"
            if m.head_dim is not None and m.attention_width != m.hidden
            else ""
        )
        + f" with {drop}"
    )


def _diffusion_assumption(spec: WorkloadSpec, f: TrainFacts, flash: bool) -> str:
    """The assumptions line of a diffusion UNet: whose layer table it is timed with, the share of
    its FLOPs in attention scores and the rate they run at (the fused attention kernel's, or with
    FlashAttention off the matmul rate, :func:`~planner.workload.efficiency.attention_time_factor`)
    and the kernels a micro-batch launches."""
    pipe = diffusion_pipeline(spec.model.preset)
    own = spec.model.preset in DIFFUSION_PIPELINES
    rate = (
        "the fused attention kernel's rate"
        if flash
        else f"the matmul rate, FlashAttention {_flash_off_reason(spec)}"
    )
    return (
        f"diffusion UNet timed with {pipe.name}'s layer table"
        + ("" if own else " (a latent-diffusion model without its own)")
        + f": attention scores {unet_attention_share(pipe):.0%} of its FLOPs, at {rate}; "
        f"its convolutions and linear layers as {len(unet_matmuls(pipe.unet))} matmuls at their "
        "own shapes; "
        f"{f.kernels_per_micro_batch:,.0f} kernels a micro-batch "
        f"({eff.TRAINING_KERNELS_PER_FORWARD_KERNEL:g} x {pipe.unet_kernels:,} forward), each with a "
        "fixed launch, ramp-up and drain time"
    )


def _framework_assumption(f: TrainFacts) -> str:
    """``software stack: hf-trainer (auto for fine-tuning; ...)``: the profile and what it allows."""
    stack = f.framework
    assert stack is not None
    job = (
        "fine-tuning"
        if f.finetune
        else "pre-training a model on images"
        if f.framework_usual == auto_framework(finetune=False, images=True)
        else "pre-training"
    )
    if f.framework_usual and stack.name != f.framework_usual:
        usual = load_frameworks()[f.framework_usual]
        lacks = [value for _, value in usual.missing_recipes(f.method, f.precision)]
        job += (
            f" in {' and '.join(lacks)}, which {f.framework_usual} has no recipe for"
            if lacks
            else f" with a pinned layout {f.framework_usual} does not run"
        )
    why = (
        f"auto for {job}; set training.framework or --framework"
        if f.framework_auto
        else "training.framework"
    )
    layouts = _stack_layouts(stack)
    eager = ""
    if f.eager_traffic is not None:
        t = f.eager_traffic
        scores = t.score_forward + t.score_backward
        eager = (
            (
                f"; its unfused elementwise kernels stream {t.per_token(scores=False) / 1e6:.2g} "
                "MB a token and layer beyond a fused stack's (forward and backward)"
                if f.transformer
                else f"; its activation and residual-add kernels, each a kernel of its own, "
                f"stream {t.per_token(scores=False) / 1e6:.3g} MB a sample beyond a fused stack's "
                "(forward and backward)"
            )
            + (
                f", {scores / 1e6:.2g} MB more where the attention scores are materialised"
                if scores
                else ""
            )
            + ", at the memory bandwidth"
        )
    return (
        f"software stack: {stack.name} ({why}): {stack.description}; {layouts}; matmul efficiency "
        f"x{stack.stack:g}"
        + (f"; {stack.compile_seconds:g} s graph compilation" if stack.compile_seconds else "")
        + eager
        + f" ({stack.source})"
    )


def _stack_layouts(stack: FrameworkProfile) -> str:
    """The splits ``stack`` runs, those its recipes leave off but a pin sets, and its ZeRO stages
    that run only where pinned (frameworks.yaml)."""
    splits = [
        k
        for k, able in (("tensor", stack.tensor_parallel), ("pipeline", stack.pipeline_parallel))
        if able
    ]
    searched = [k for k in splits if k not in stack.pinned_only]
    pinned = [k for k in splits if k in stack.pinned_only]
    parts = [f"{' and '.join(searched)} parallel"] if searched else []
    if pinned:
        parts.append(f"{' and '.join(pinned)} parallel where pinned")
    if not splits:
        parts.append("data parallel and ZeRO/FSDP sharding only")
    elif "pipeline" not in splits:
        parts.append("no pipeline")
    extra = [z for z in stack.zero if z not in (stack.searched_zero or stack.zero)]
    if extra:
        parts.append(f"ZeRO-{'/'.join(str(z) for z in extra)} where pinned")
    return ", ".join(parts)


def _moe_host_assumption(stack: FrameworkProfile) -> str:
    """What the mixture-of-experts layers cost on the host per micro-batch under ``stack``."""
    ms = stack.moe_host_s_per_layer * 1e3
    if not ms:
        return (
            f"mixture of experts: {stack.name} routes without a host synchronisation "
            "(static shapes), so no host time per layer"
        )
    return (
        f"mixture of experts: {ms:.2g} ms per layer and micro-batch with the GPU waiting on the "
        "host (dropless routing copies the tokens-per-expert counts to the host, then sets up "
        "each expert's GEMM; NVIDIA, Boosting MoE Training Throughput with Advanced Fusion "
        "Kernels, 2026), so bigger micro-batches amortise it"
    )


_LORA_TARGET_TEXT = {
    "all-linear": "every linear layer",
    "attention": "the four attention projections",
    "qv": "the query and value projections",
}


def training_assumptions(spec: WorkloadSpec, f: TrainFacts, flash: bool) -> list[str]:
    """The assumption lines of a training estimate: batch, precision and optimizer, activations,
    interruptions, adapters; memoised (:data:`_assumptions_memo`): every estimate of a quote
    writes the same few."""
    try:
        return list(_assumptions_memo(spec, f, flash))
    except TypeError:
        if _hashable(spec):
            raise
        return list(_compute_training_assumptions(spec, f, flash))


def _foreach_adamw(optimizer: str, fused: bool | None, stack_fuses: bool) -> bool:
    """Whether the job steps AdamW as torch's foreach passes (efficiency.FOREACH_ADAMW_TRAFFIC_BYTES):
    the workload's ``training.fused_optimizer`` (``fused``) where given, else the stack's."""
    return optimizer == "adamw" and not (stack_fuses if fused is None else fused)


def _compute_training_assumptions(
    spec: WorkloadSpec, f: TrainFacts, flash: bool
) -> tuple[str, ...]:
    """:func:`training_assumptions` without the memo."""
    assumptions = [
        f"{f.samples_per_piece:.4g} {'sequences of ' + str(f.seq) + ' tokens' if f.transformer else 'samples'} per piece, "
        f"{spec.pieces} piece(s); global batch {f.global_batch:.4g} per optimizer step",
        f"{PRECISION_TEXT.get(f.precision, f.precision)}, {f.optimizer}: {f.state.total:g} bytes per trainable parameter "
        "(weights + gradients + optimizer states, ZeRO convention)",
        _activation_assumption(spec, flash),
        "interruptions at the Llama 3 rate with Young/Daly checkpointing; with them a run loses at "
        f"least {eff.RUN_TIME_LOSS_FRACTION:.0%} of its steps' time to pauses and slow stretches "
        "(Llama 3 405B's whole run against its steady rate), ramping in over its first "
        f"{eff.RUN_TIME_LOSS_GPU_HOURS:g} GPU-hours",
    ]
    if spec.model.arch == "diffusion":
        assumptions.append(_diffusion_assumption(spec, f, flash))
    if f.framework is not None:
        assumptions.append(_framework_assumption(f))
        if f.experts and f.experts_per_token:
            assumptions.append(_moe_host_assumption(f.framework))
    assumptions.append(range_note(error_regime(f.experts)))
    extension = _context_extension(spec)
    if extension:
        assumptions.append(extension)
    data = spec.data
    if data is not None and data.eval_every and data.eval_tokens and f.global_batch > 0:
        steps = f.samples_per_piece / f.global_batch
        if data.eval_every > steps:
            # as a trainer runs it: no evaluation before the interval comes round (fixed_seconds)
            assumptions.append(
                f"no evaluation pass: data.eval_every ({data.eval_every:,} optimizer steps) is "
                f"longer than the run's {steps:,.1f} steps, so eval_tokens is not used"
            )
    stack = f.framework.name if f.framework is not None else None
    if f.method != "full":
        assumptions.append(
            f"{f.method}: rank {spec.train.lora_rank} adapters on "
            f"{_LORA_TARGET_TEXT[spec.train.lora_targets]}, {f.trainable:.3g} trainable parameters"
            + _adapter_memory_text(spec, f, stack)
        )
    else:
        unused = spec.train.changed("lora_rank", "lora_targets", "lora_dropout")
        if unused:
            # was silently ignored: a full fine-tune's file with a LoRA setting left in it
            assumptions.append(
                f"training.{' and '.join(unused)} not used: method full trains every weight "
                "(method: lora or qlora trains adapters of that rank)"
            )
    if f.method != "qlora" and spec.train.quantization is not None:
        assumptions.append(
            f"training.quantization not used: method {f.method} keeps its weights in 16 bits "
            "(method: qlora quantises the frozen ones)"
        )
    if f.framework is not None and _foreach_adamw(
        f.optimizer, spec.train.fused_optimizer, f.framework.fused_optimizer
    ):
        assumptions.append(
            "AdamW as torch's default foreach passes, eight over the fp32 lists "
            f"({eff.FOREACH_ADAMW_TRAFFIC_BYTES:g} bytes a parameter against the fused kernel's "
            f"{eff.OPTIMIZER_TRAFFIC_BYTES['adamw']:g}; training.fused_optimizer: true for "
            "AdamW(fused=True))"
        )
    if spec.train.fused_optimizer is not None and f.optimizer != "adamw":
        assumptions.append(
            f"training.fused_optimizer not used: it picks torch's AdamW kernel, and "
            f"{f.optimizer}'s step is counted as its library runs it"
        )
    if spec.train.chunked_loss and stack not in mem.CHUNKED_LOSS_STACKS:
        assumptions.append(
            f"training.chunked_loss not used: it is torchtune's CEWithChunkedOutputLoss, and "
            f"{stack or 'this stack'}'s loss is counted as it runs it (framework: torchtune "
            "chunks it)"
        )
    return tuple(assumptions)


def _evaluation_heavy(spec: WorkloadSpec, eval_s: float, steps_s: float) -> str:
    """The note where the evaluation passes outlast the training steps."""
    d = spec.data
    assert d is not None and d.eval_tokens and d.eval_every
    return (
        f"evaluation passes take {eval_s / steps_s:.3g}x the training steps' time "
        f"({d.eval_tokens:.3g} tokens every {d.eval_every:,} optimizer steps): data.eval_tokens "
        "is the tokens of one pass over the evaluation set; check it and data.eval_every"
    )


def _context_extension(spec: WorkloadSpec) -> str | None:
    """A note where a preset trains on sequences longer than the context it was released with:
    a context extension, which the estimate prices as asked (was: silent).  A learned position
    table refuses them instead (spec._check_positions)."""
    m = spec.model
    preset = get_preset(m.preset) if m.preset else None
    if preset is None or not preset.seq_len or spec.seq_len <= preset.seq_len:
        return None
    return (
        f"sequences of {spec.seq_len:,} tokens are longer than the {preset.seq_len:,}-token "
        f"context {preset.name} was released with: a context extension (long-context "
        "fine-tunes rescale rotary positions, or lean on ALiBi's or relative ones), priced at the "
        "length asked for"
    )


def _adapter_memory_text(spec: WorkloadSpec, f: TrainFacts, stack: str | None) -> str:
    """What the stack's adapters hold beyond their weights (memory.py): QLoRA's NF4 format and a
    quantised output head's 16-bit copy, LoRA dropout's stored input copies."""
    parts = []
    if f.method == "qlora":
        quantization = mem.qlora_quantization(stack, spec.train.quantization)
        bits = mem.NF4_BYTES_PER_PARAM[quantization] * 8.0
        parts.append(f"frozen weights in {quantization} ({bits:.3g} bits)")
        if f.head_dequant_bytes > 0:
            parts.append(
                f"the output head quantised too, its 16-bit copy "
                f"({f.head_dequant_bytes / mem.GIB:.2g} GiB) held at the loss"
            )
    dropout = mem.lora_dropout(stack, spec.train.lora_dropout)
    if dropout > 0:
        parts.append(f"lora dropout {dropout:g} stores a copy of each adapted input")
    return "; " + ", ".join(parts) if parts else ""


_assumptions_memo = functools.lru_cache(maxsize=_FACTS_MEMO_SIZE)(_compute_training_assumptions)


def autocast_assumption(f: TrainFacts, flash: bool, *, tp: int = 1) -> str:
    """The assumptions line of a layout that runs eager torch.autocast (memory.py): the fp32 model
    states, the 16-bit weight copies held until the backward pass (each of ``tp`` tensor-parallel
    GPUs holds its share), the fp32 norms and (without a fused attention kernel, which keeps no
    scores) softmax, and fp16's GradScaler."""
    assert f.framework is not None and f.autocast_state is not None
    cache = mem.autocast_cache_bytes(f.autocast_params) / max(1, tp)
    layout = "no ZeRO sharding" if tp > 1 else "plain data parallel"
    where = f" on each of the {tp} tensor-parallel GPUs" if tp > 1 else ""
    scaler = (
        "; fp16's GradScaler unscales every gradient each step" if f.precision == "fp16" else ""
    )
    return (
        f"eager torch.autocast ({f.framework.name}, {f.precision}, {layout}): the "
        f"trainable weights stay fp32, their own master copy ({f.autocast_state.weights:g} + "
        f"{f.autocast_state.grads:g} + {f.autocast_state.optimizer:g} bytes per parameter: "
        f"weights, gradients, optimizer states), and the 16-bit copies autocast makes of the "
        f"{f.autocast_params:.3g} it casts are held until the backward pass "
        f"({mem.AUTOCAST_COPY_BYTES_PER_PARAM:g} bytes each, {cache / mem.GIB:,.2f} GiB{where})"
        + (
            f"; layer norms{'' if flash else ' and softmax'} keep fp32 activations"
            if f.transformer
            else ""
        )
        + scaler
    )


def nvme_assumption(
    spec: WorkloadSpec, f: TrainFacts, cand: Candidate, gpus_per_node: int, rounds: int
) -> str:
    """The assumptions line of ``offload: nvme``: the NVMe each node needs, the pinned host RAM
    that stages it (against what ``offload: optimizer`` would hold), and the time each step
    waits on the drives.

    Under ZeRO-3 every GPU steps ``trainable / GPUs`` parameters; the node's drives hold and move
    its GPUs' partitions (:func:`~planner.workload.strategy._nvme_seconds`)."""
    s = cand.strategy
    rank_params = f.trainable / max(1, s.gpus_per_piece)
    node_params = rank_params * gpus_per_node
    per_param = mem.nvme_state_bytes_per_param(f.state)
    staging = mem.nvme_staging_bytes(rank_params)
    host_states = mem.OFFLOAD_HOST_BYTES_PER_PARAM * rank_params
    read = node_params * per_param
    written = node_params * (f.state.optimizer + mem.NVME_GRADIENT_BYTES_PER_PARAM)
    t = spec.train
    given = t.nvme_read_gb_per_s is not None or t.nvme_write_gb_per_s is not None
    source = "training.nvme_read_gb_per_s / nvme_write_gb_per_s" if given else eff.NVME_SOURCE
    steps_h = rounds * cand.piece_seconds * cand.nvme_step_s / max(cand.step_s, 1e-12) / 3600.0
    return (
        f"optimizer states on local NVMe (offload: nvme, DeepSpeed ZeRO-Infinity, ZeRO-3): "
        f"{node_params * per_param / 1e9:,.0f} GB of NVMe per node ({per_param:g} bytes per "
        "parameter: fp32 master weights, optimizer states and fp32 gradients), staged through "
        f"{staging / mem.GIB:,.1f} GiB of pinned host RAM per GPU ({mem.NVME_SWAP_BUFFERS} fp32 "
        f"buffers of a sub-group of up to {mem.NVME_SUB_GROUP_PARAMS:.0e} parameters) instead of "
        f"the {host_states / mem.GIB:,.0f} GiB offload: optimizer holds; each step reads "
        f"{read / 1e9:,.0f} GB and writes {written / 1e9:,.0f} GB per node at "
        f"{f.nvme_read_bytes_per_s / 1e9:g} / {f.nvme_write_bytes_per_s / 1e9:g} GB/s ({source}), "
        f"not overlapped with the CPU optimizer (DeepSpeed's pipeline_read / pipeline_write "
        f"default off): {cand.nvme_step_s:,.1f} s of each {cand.step_s:,.1f} s step, "
        f"{steps_h:,.2f} h of the training steps"
    )


def paged_assumption(f: TrainFacts, cand: Candidate, gpu: GpuSpec, rounds: int) -> str:
    """The assumptions line of a paged optimizer: its states per GPU, the part the GPU keeps in
    its spare memory, the part evicted to host RAM and what paging it costs each step
    (:func:`~planner.workload.strategy._paging`)."""
    spilled, paged = cand.paged_spill_bytes, cand.paged_bytes
    resident = paged - spilled
    link = eff.pcie_gb_per_s(gpu) * eff.LINK_EFFICIENCY["pcie"]
    head = (
        f"{f.optimizer}: {f.paged_bytes:g} bytes per parameter of optimizer states in "
        f"{'HIP managed' if gpu.vendor == 'amd' else 'CUDA unified'} memory (bitsandbytes paged "
        f"optimizer), {paged / 1e9:,.1f} GB per GPU, outside the fit: "
    )
    if spilled <= 0.0:
        return head + "all resident in the GPU's spare memory, so nothing is paged"
    steps_h = rounds * cand.piece_seconds * cand.paging_s / max(cand.step_s, 1e-12) / 3600.0
    where = (
        f"all {spilled / 1e9:,.1f} GB stay in host RAM (ROCm without XNACK, its default, keeps "
        "managed memory on the host and migrates none of it); each step reads and writes them "
        if managed_memory_on_host(gpu)
        else f"{resident / 1e9:,.1f} GB stay resident in the GPU's spare memory, "
        f"{spilled / 1e9:,.1f} GB are evicted to host RAM (which must hold them); each step pages "
        "them in and out "
    )
    return head + (
        where
        + f"({eff.PAGED_CROSSINGS_PER_STEP:g} x {spilled / 1e9:,.1f} GB over PCIe at {link:g} GB/s: "
        f"{eff.pcie_gb_per_s(gpu):g} GB/s x {eff.LINK_EFFICIENCY['pcie']:g}): {cand.paging_s:,.2f} s "
        f"of each {cand.step_s:,.2f} s step, {steps_h:,.2f} h of the training steps"
    )


def checkpoint_bytes(f: TrainFacts) -> float:
    """A restartable checkpoint: weights and optimizer states of the trainable parameters."""
    return f.trainable * (f.state.weights + f.state.optimizer)


def model_flops(spec: WorkloadSpec, f: TrainFacts) -> float:
    """Model FLOPs of the whole workload (every piece, no recompute): the MFU numerator."""
    return f.model_flops_per_seq * f.samples_per_piece * spec.pieces


# How each training precision runs, in words (the estimate's assumptions).
PRECISION_TEXT = {
    "fp32": "fp32 (CUDA-core matmuls, no tensor cores)",
    "tf32": "tf32 (fp32 storage, TF32 tensor-core matmuls)",
    "fp16": "fp16 mixed precision (torch.amp, fp32 master weights)",
    "bf16": "bf16 mixed precision (torch.amp, fp32 master weights)",
    "pure-bf16": "pure bf16 (bf16 weights, gradients and optimizer states, no fp32 copy)",
    "fp8": "fp8 (Transformer Engine: fp8 linear layers, bf16 attention and output layer)",
    "fp4": (
        "fp4 (Transformer Engine NVFP4: NVFP4 linear layers, e2m1 values with an e4m3 scale per 16, "
        "bf16 attention and output layer)"
    ),
}


def _peak_text(gpu: GpuSpec, f: TrainFacts) -> str:
    """``the 989 TFLOPS dense bf16 tensor peak`` for the unit the precision's matmuls run on."""
    peak, g = eff.precision_peak(gpu, f.precision, f.linear_share)
    if f.precision == "fp8":
        scaling = f.framework.fp8_scaling if f.framework is not None else "delayed"
        return (
            f"{g:.2f} of the {gpu.tensor_tflops_dense:g} TFLOPS dense 16-bit peak, "
            f"{f.linear_share:.0%} of the FLOPs (the linear layers) at {eff.FP8_TENSOR_RATE:g}x "
            f"that rate in fp8, their casts ({scaling} scaling) as memory traffic"
        )
    if f.precision == "fp4":
        rate = eff.linear_tensor_rate(gpu, "fp4")
        return (
            f"{g:.2f} of the {gpu.tensor_tflops_dense:g} TFLOPS dense 16-bit peak, "
            f"{f.linear_share:.0%} of the FLOPs (the linear layers) at {rate:.2f}x that rate in "
            f"NVFP4 (the {gpu.matmul_peak_flops('fp4') / 1e12:,.0f} TFLOPS dense fp4 peak at "
            f"{eff.fp4_gemm_share(gpu):.2f} of fp8's GEMM share), their casts (a per-tensor amax "
            "pass, row-wise and Hadamard-transformed column-wise copies) as memory traffic"
        )
    # by precision, not by peak: tf32 runs on the TF32 tensor cores even where their peak is the
    # CUDA cores' (GeForce Ampere and Ada: 12.7 and 12.7 TFLOPS on the RTX 3060)
    # (and AMD's GPUs have no CUDA cores: "FP32", the figure their datasheets give)
    fp32 = "CUDA-core fp32" if gpu.vendor == "nvidia" else "FP32"
    sixteen = "16-bit tensor" if gpu.tensor_cores else "16-bit CUDA-core"
    unit = {"fp32": fp32, "tf32": "TF32 tensor"}.get(f.precision, sixteen)
    # the cap holds where precision_peak applies it: the tensor cores, not the slower units
    slower = eff.slower_unit_gemm_share(gpu, f.precision)
    capped = eff.power_capped_gemm_share(gpu) if slower is None else None
    cap = (
        f" (power-capped: a big GEMM holds {capped:.2f} of it at the board's power limit)"
        if capped is not None
        else ""
    )
    return f"{g:.2f} of the {peak / 1e12:g} TFLOPS dense {unit} peak{cap}"


def _attention_text(gpu: GpuSpec, f: TrainFacts, flash: bool) -> str:
    """How the attention core is timed (:func:`~planner.workload.efficiency.attention_time_factor`),
    in words; empty where it runs as counted (no fused kernel, or not a transformer)."""
    if not (f.transformer and flash):
        return ""
    kernel = attention_kernel(f)
    share = eff.attention_kernel_fraction(gpu, kernel)
    text = (
        "; causal attention: the fused kernel skips the masked half of the score FLOPs"
        if f.causal
        else ""
    )
    if f.causal and f.attention_window_share < 1.0:
        text += (
            f", and its sliding-window layers all but their band: {f.attention_window_share:.2g} "
            "of the causal half runs"
        )
    text += (
        "; its backward pass recomputes the scores "
        f"({eff.FLASH_BACKWARD_FLOPS_RATIO * 2:g}x the forward's FLOPs) at "
        f"{eff.FLASH_BACKWARD_SPEED:g} of the forward's rate (FlashAttention-3 paper, head dim 128)"
    )
    if share < 1.0:
        text += (
            f"; {KERNEL_TEXT.get(kernel, kernel)} attention at {share:.2f} of the matmul rate on "
            f"{gpu.name} ({KERNEL_SOURCE[kernel]})"
        )
    return text


# Attention kernel classes (efficiency.ATTENTION_KERNELS), in words, and where their rates come from.
KERNEL_TEXT = {"cudnn": "cuDNN fused", "fa2": "FlashAttention-2", "fa1": "FlashAttention-1"}
KERNEL_SOURCE = {
    "cudnn": "",
    "fa2": "FlashAttention-3 paper: 35% against 75% utilization on H100",
    "fa1": (
        "FlashAttention-2 paper: FlashAttention-1 reaches 25-40% of the peak, about half of "
        "FlashAttention-2's rate"
    ),
}


def efficiency_source(gpu: GpuSpec, f: TrainFacts, flash: bool = False) -> str:
    """Where a training estimate's efficiency comes from, in words; memoised
    (:data:`_source_memo`): a quote's estimates on one GPU share it."""
    return _source_memo(gpu, f, flash)


def _compute_efficiency_source(gpu: GpuSpec, f: TrainFacts, flash: bool) -> str:
    """:func:`efficiency_source` without the memo."""
    slower = eff.slower_unit_gemm_share(gpu, f.precision)
    derived = (
        ""
        if slower is None
        # fp32 and tf32: from the 16-bit calibration (efficiency.slower_unit_fraction)
        else f"; the 16-bit fraction's time beyond its GEMMs kept, its GEMMs at {slower[0]:.2f} "
        f"of that peak ({slower[1]})"
    )
    sustained = eff.SUSTAINED_GEMM_RELATIVE.get(gpu.name)
    clock = (
        ""
        if sustained is None
        # a part whose matmuls hold a higher clock than its family's calibration part's
        else f"; x{sustained:.2f} for the clock it holds under matmuls: "
        f"{eff.SUSTAINED_GEMM_SOURCE[gpu.name]}"
    )
    text = (
        f"physics model: {gpu.name} matmuls at {_peak_text(gpu, f)} "
        "(GPU-generation default calibrated on published runs: MosaicML llm-foundry "
        "benchmarks, Narayanan et al. 2021, Korthikanti et al. 2022"
        f"{clock}{derived}"
        f"{', adjusted for the matmul shapes' if f.transformer or f.unet_pipeline else ''}), plus activation "
        f"memory traffic at {gpu.memory_bandwidth_gb_per_s:g} GB/s, communication over the topology's links, "
        "optimizer step, pipeline bubble and failure/checkpoint goodput"
    ) + _attention_text(gpu, f, flash)
    if eff.winograd_speedup(gpu, f.precision, f.conv3x3_share) > 1.0:
        text += (
            f"; its 3x3 stride-1 convolutions ({f.conv3x3_share:.0%} of the FLOPs) run as cuDNN "
            f"Winograd transforms on the CUDA cores, {eff.WINOGRAD_MULTIPLY_REDUCTION:g}x fewer "
            "multiplies (Lavin and Gray 2016)"
        )
    factor = f.framework.stack if f.framework is not None else 1.0
    if f.framework is not None and factor != 1.0:
        text += f"; x{factor:g} for the {f.framework.name} software stack"
    if f.method == "qlora":
        text += (
            "; QLoRA dequantises its 4-bit weights to 16 bits for each forward and backward matmul, "
            "streamed at the memory bandwidth every micro-batch"
        )
    return text


_source_memo = functools.lru_cache(maxsize=_ETHERNET_MEMO_SIZE)(_compute_efficiency_source)


# -- the estimate -----------------------------------------------------------------------------------


def interconnect_required(s: Strategy, topo: Topology) -> Interconnect:
    """The link the strategy wants: NVSwitch for a tensor x context-parallel group of more than 2
    GPUs (the tensor-parallel all-reduces and the context-parallel KV ring run inside it), NVLink
    for 2, else PCIe between GPUs.

    The time was computed on ``topo``'s link, so a weaker link there is, by construction, enough for
    the reported hours (tensor parallel over PCIe is slow, and priced in).
    """
    group = s.tensor_parallel * s.context_parallel
    if group > 2:
        wanted = Interconnect.NVSWITCH
    elif group == 2:
        wanted = Interconnect.NVLINK
    elif s.gpus_per_piece > 1 and topo.gpus_per_node > 1:
        wanted = Interconnect.PCIE
    else:
        return Interconnect.NONE
    if topo.interconnect.rank < wanted.rank and topo.interconnect is not Interconnect.NONE:
        return topo.interconnect
    return wanted


def _within(topo: Topology, size: int) -> Topology:
    """``topo`` with at most ``size`` GPUs per node: a group of ``size`` GPUs fills no more of a
    node.  ``topo`` itself where it already has no more (most calls: a copy costs more than the
    rest of the call, and the copy would equal it)."""
    if topo.gpus_per_node <= size:
        return topo
    return replace(topo, gpus_per_node=size)


def _best_training(
    f: TrainFacts, gpu: GpuSpec, count: int, topo: Topology, pieces: int, flash: bool
) -> tuple[Candidate | None, Candidate, int, float]:
    """Best (candidate, least-memory candidate where nothing fits, concurrent pieces, total seconds)
    over piece splits.

    Called only where the pinned layout divides ``count`` (so at least the whole count has one).
    """
    best: tuple[Candidate | None, Candidate, int, float] | None = None
    sizes = [count] if pieces == 1 else [d for d in range(1, count + 1) if count % d == 0]
    for size in sizes:
        concurrent = min(count // size, pieces)
        sub = _within(topo, size)
        links = topology_links(gpu, sub, size)
        cand, least = search_training(f, gpu, size, links, flash=flash, least_if_none_fits=True)
        if least is None:
            continue  # the pinned layout does not divide this group size
        if cand is None:
            if best is None:
                best = (None, least, concurrent, math.inf)
            continue
        rounds = math.ceil(pieces / concurrent)
        nodes = math.ceil(size / max(1, sub.gpus_per_node))
        steady_h = cand.piece_seconds / 3600.0
        overhead = eff.failure_overhead(size, steady_h, checkpoint_bytes(f), nodes)
        total = rounds * cand.piece_seconds * (1.0 + overhead)
        if best is None or best[0] is None or total < best[3] * 0.99:
            best = (cand, least, concurrent, total)
    assert best is not None
    return best


def _compute_ethernet_seconds(
    f: TrainFacts,
    gpu: GpuSpec,
    layout: tuple[int, int, int, str, int],
    size: int,
    links: Links,
    flash: bool,
) -> float | None:
    """Seconds per piece of the ``(tensor, pipeline, zero, recompute, context)`` layout on ``size``
    GPUs over ``links`` (None: it does not fit), for the facts ``f``."""
    pinned = _pinned_memo(f, layout)
    cand, _ = search_training(pinned, gpu, size, links, flash=flash, least_if_none_fits=True)
    return None if cand is None else cand.piece_seconds


def _pinned_facts(f: TrainFacts, layout: tuple[int, int, int, str, int]) -> TrainFacts:
    """The facts ``f`` pinned to the ``(tensor, pipeline, zero, recompute, context)`` layout;
    memoised (:data:`_pinned_memo`): a quote's Ethernet searches share a few layouts, and copying
    the facts costs about what a small search does."""
    tp, pp, zero, mode, cp = layout
    pin = {"tensor": tp, "pipeline": pp, "zero": zero, "context": cp}
    return replace(f, pinned=pin, recompute_modes=(mode,))


def _ethernet_links(
    gpu: GpuSpec, gpus_per_node: int, interconnect: Interconnect, size: int
) -> Links:
    """The links of ``size`` GPUs, ``gpus_per_node`` to a node on ``interconnect``, with Ethernet
    of no stated speed between the nodes (:func:`_fabric_required`)."""
    weak = Topology(gpus_per_node=gpus_per_node, interconnect=interconnect, fabric=Fabric.ETHERNET)
    return topology_links(gpu, weak, size)


# Keyed on the facts (the search reads nothing else of the spec), which hash once (TrainFacts),
# where the spec's pydantic hash walks every section on every lookup.
_ethernet_memo = functools.lru_cache(maxsize=_ETHERNET_MEMO_SIZE)(_compute_ethernet_seconds)
_pinned_memo = functools.lru_cache(maxsize=_ETHERNET_MEMO_SIZE)(_pinned_facts)
_ethernet_links_memo = functools.lru_cache(maxsize=_ETHERNET_MEMO_SIZE)(_ethernet_links)


def _fabric_required(
    f: TrainFacts, gpu: GpuSpec, c: Candidate, topo: Topology, flash: bool
) -> Fabric | None:
    """Ethernet when the chosen layout runs within FABRIC_TOLERANCE as fast on it, else InfiniBand.

    The Ethernet search does not depend on the offer's own fabric or network speed, so it is
    memoised: a quote that estimates one GPU shape under several fabrics runs it once.
    """
    s = c.strategy
    if s.gpus_per_piece <= topo.gpus_per_node:
        return None
    links = _ethernet_links_memo(gpu, topo.gpus_per_node, topo.interconnect, s.gpus_per_piece)
    layout = (
        s.tensor_parallel,
        s.pipeline_parallel,
        s.zero_stage,
        s.activation_checkpointing,
        s.context_parallel,
    )
    ethernet_s = _ethernet_memo(f, gpu, layout, s.gpus_per_piece, links, flash)
    if ethernet_s is not None and ethernet_s <= c.piece_seconds * (1.0 + FABRIC_TOLERANCE):
        return Fabric.ETHERNET
    return Fabric.INFINIBAND


def _busy_notes(
    spec: WorkloadSpec, f: TrainFacts, c: Candidate, count: int, used: int
) -> list[str]:
    """Suggestions on a layout that fits: idle GPUs (too few pieces, or a global batch of fewer
    sequences than data-parallel ranks), communication-bound steps."""
    notes: list[str] = []
    if used < count:
        notes.append(f"only {used} of {count} GPUs are busy with {spec.pieces} pieces")
    s = c.strategy
    if f.global_batch < s.data_parallel:
        busy = math.ceil(f.global_batch)
        unit = "sequences" if f.transformer else "samples"
        notes.append(
            f"a global batch of {f.global_batch:.4g} {unit} keeps only {busy} of"
            f" {s.data_parallel} data-parallel ranks busy: raise the global batch"
            " (training.global_batch_samples or global_batch_tokens) or use fewer GPUs"
        )
    if c.comm_exposed_s > 0.25 * c.step_s:
        notes.append(
            "communication takes over a quarter of each step: a faster interconnect or fabric would help"
        )
    return notes


def _nothing_fits(
    spec: WorkloadSpec,
    f: TrainFacts,
    gpu: GpuSpec,
    count: int,
    topo: Topology,
    least: Candidate,
    assumptions: list[str],
) -> Estimate:
    """The estimate when no layout fits: the least-memory layout, no time, no suggestions yet
    (:func:`planner.workload.advice.train_suggestions` says what would fit)."""
    s = replace(least.strategy, reason="nothing fits; shown: the layout with the least memory")
    return unrunnable_estimate(spec, f, gpu, count, topo, s, least, (), assumptions)


def unrunnable_estimate(
    spec: WorkloadSpec,
    f: TrainFacts,
    gpu: GpuSpec,
    count: int,
    topo: Topology,
    strategy: Strategy,
    least: Candidate | None,
    suggestions: list[str] | tuple[str, ...],
    assumptions: list[str],
) -> Estimate:
    """An estimate that does not run: ``strategy`` says why, ``least`` (when any layout exists)
    gives the memory shown, and the time is infinite."""
    return make_estimate(
        spec,
        gpu,
        count,
        fits=False,
        memory_bytes=least.memory_bytes if least is not None else 0.0,
        breakdown=least.breakdown if least is not None else {},
        strategy=strategy,
        total_flops=model_flops(spec, f),
        efficiency=0.0,
        source=efficiency_source(gpu, f, flash_attention(spec, gpu)),
        wall_hours=math.inf,
        interconnect=interconnect_required(strategy, topo),
        fabric=None,
        checkpoint_gib=checkpoint_bytes(f) / mem.GIB,
        suggestions=suggestions,
        assumptions=assumptions,
    )


def estimate_training(spec: WorkloadSpec, gpu: GpuSpec, count: int, topo: Topology) -> Estimate:
    """The training estimate on ``count`` x ``gpu`` wired as ``topo``.

    ``count`` must hold the pinned layout (:func:`planner.workload.advice.unplaceable_estimate`
    answers for the others).  Where nothing fits the answer carries no suggestions: the caller adds
    :func:`planner.workload.advice.train_suggestions` (:func:`planner.workload.estimator.estimate`).
    """
    f = train_facts(spec)
    flash = flash_attention(spec, gpu)
    assumptions = training_assumptions(spec, f, flash)
    cand, least, concurrent, total_s = _best_training(f, gpu, count, topo, spec.pieces, flash)
    if cand is None:
        return _nothing_fits(spec, f, gpu, count, topo, least, assumptions)
    size = cand.strategy.gpus_per_piece
    s = replace(
        cand.strategy,
        concurrent_pieces=concurrent,
        reason=explain(cand, size, min(topo.gpus_per_node, size)),
    )
    flops = model_flops(spec, f)
    sub = _within(topo, size)
    rounds = math.ceil(spec.pieces / concurrent)
    steady_s = rounds * cand.piece_seconds
    start_s, eval_s = fixed_seconds(spec, f, cand)
    # the interruptions' restarts and lost work count toward a whole run's least losses
    least_losses_s = steady_s * eff.run_time_losses(cand.piece_seconds / 3600.0 * size)
    losses_s = max(0.0, least_losses_s - (total_s - steady_s))
    phases = {
        "training steps": steady_s,
        "checkpoints and interruptions": total_s - steady_s,
        PAUSES_PHASE: losses_s,
        "start-up and model load": rounds * start_s,
        "evaluation passes": rounds * eval_s,
    }
    total_s += losses_s + rounds * (start_s + eval_s)
    if eval_s > steady_s / rounds and spec.data is not None and spec.data.eval_tokens:
        # an evaluation set read as the tokens of every pass together, or passes run too often:
        # was 10.6 h of evaluation beside 27 min of training, without a word
        assumptions = [*assumptions, _evaluation_heavy(spec, rounds * eval_s, steady_s)]
    if autocast_layout(f, s.zero_stage):
        assumptions = [*assumptions, autocast_assumption(f, flash, tp=s.tensor_parallel)]
    if f.nvme_optimizer:
        gpn = max(1, min(topo.gpus_per_node, size))
        assumptions = [*assumptions, nvme_assumption(spec, f, cand, gpn, rounds)]
    if f.paged_bytes:
        assumptions = [*assumptions, paged_assumption(f, cand, gpu, rounds)]
    suggestions = _busy_notes(spec, f, cand, count, size * concurrent)
    limit = loader_limit(spec)
    bounds = None
    if limit is not None:
        # a data-parallel rank's images a step, prepared by the workers of each of its GPUs
        # (strategy._cost)
        gpus_per_rank = s.tensor_parallel * s.pipeline_parallel * s.context_parallel
        step_images = math.ceil(f.global_batch / s.data_parallel - 1e-9) / gpus_per_rank
        loader_s = step_images * limit.seconds_per_image
        binds = not limit.workers_defaulted and loader_s >= cand.step_s * (1.0 - 1e-9)
        if not limit.workers_defaulted and cand.step_s > 0:
            # the steps' hours per second of one step, for the GPU's and the loader's alone
            per_step_s = steady_s / 3600.0 / cand.step_s
            bounds = StepBounds(cand.gpu_step_s * per_step_s, loader_s * per_step_s)
        shown_s = cand.step_s if limit.workers_defaulted else loader_s
        assumptions = [*assumptions, loader_assumption(limit, step_images, shown_s, binds)]
        if binds:
            suggestions = [*suggestions, LOADER_ADVICE]
    return make_estimate(
        spec,
        gpu,
        count,
        fits=True,
        memory_bytes=cand.memory_bytes,
        breakdown=cand.breakdown,
        strategy=s,
        total_flops=flops,
        efficiency=flops / (count * gpu.peak_flops * total_s) if total_s > 0 else 0.0,
        source=efficiency_source(gpu, f, flash_attention(spec, gpu)),
        wall_hours=total_s / 3600.0,
        interconnect=interconnect_required(s, sub),
        fabric=_fabric_required(f, gpu, cand, sub, flash),
        checkpoint_gib=checkpoint_bytes(f) / mem.GIB,
        suggestions=suggestions,
        assumptions=assumptions,
        goodput=steady_s / total_s if total_s > 0 else 1.0,
        time_breakdown_hours={k: v / 3600.0 for k, v in phases.items()},
        wall_hours_range=likely_range(total_s / 3600.0, error_regime(f.experts)),
        step_bounds=bounds,
    )


def likely_range(wall_hours: float, regime: str) -> tuple[float, float]:
    """The wall-clock a run will likely take: this estimate times the 10th and 90th percentile of
    the measured / estimated ratio on published training runs of its ``regime`` (dense or a
    mixture of experts, :mod:`.uncertainty`)."""
    error = estimate_error(regime)
    return wall_hours * error.p10, wall_hours * error.p90


def range_note(regime: str) -> str:
    """Where the likely range comes from, in words."""
    error = estimate_error(regime)
    return (
        f"likely range: this estimate x {error.p10:.2f} to x {error.p90:.2f}, the 10th to 90th "
        f"percentile of measured / estimated time on {error.runs_text}"
    )


def fixed_seconds(spec: WorkloadSpec, f: TrainFacts, cand: Candidate) -> tuple[float, float]:
    """(start-up and model load, evaluation passes) seconds of one piece's run.

    Start-up: :data:`~planner.workload.efficiency.PROCESS_START_SECONDS`, then, for a fine-tune,
    the pretrained weights read from storage at
    :data:`~planner.workload.efficiency.LOAD_BYTES_PER_S`.  Evaluation: ``data.eval_every`` and
    ``data.eval_tokens``; a pass runs the forward pass only (2 of the 6 FLOPs per weight and token
    of full training, 2 of 4 with frozen weights) at the training steps' rate.
    """
    load_s = f.params * f.frozen_bytes / eff.LOAD_BYTES_PER_S if f.finetune else 0.0
    data = spec.data
    eval_s = 0.0
    if data is not None and data.eval_every and data.eval_tokens and f.samples_per_piece > 0:
        steps = f.samples_per_piece / f.global_batch
        passes = math.floor(steps / data.eval_every)
        eval_samples = data.eval_tokens / f.seq if f.transformer else data.eval_tokens
        forward_share = 2.0 / (6.0 if f.method == "full" else 4.0)
        per_sample_s = cand.piece_seconds / f.samples_per_piece
        eval_s = passes * eval_samples * forward_share * per_sample_s
    compile_s = f.framework.compile_seconds if f.framework is not None else 0.0
    return eff.PROCESS_START_SECONDS + load_s + compile_s, eval_s
