"""Parallel strategy search: the fastest layout that fits, the simplest among equals (pure).

For a training job on ``count`` GPUs the search walks tensor-parallel sizes (powers of two inside a
node), pipeline sizes, ZeRO stages 0-3 (3 = FSDP full shard) and activation checkpointing (none,
selective where FlashAttention is unavailable, full), sizes the largest micro-batch that fits, and
times one optimizer step:

``step = (m + (pp - 1)/v)·(t_mb + t_tp + v·t_p2p) + exposed data-parallel communication + optimizer step``

with ``m`` micro-batches per step (gradient accumulation), ``t_mb`` the compute + memory-traffic time
of one micro-batch (:mod:`planner.workload.efficiency`; the matmul efficiency follows the
micro-batch's matmul shapes, :func:`~planner.workload.efficiency.matmul_fraction`), ``t_tp`` the
tensor-parallel all-reduces (4 per layer per micro-batch, 6 with full recompute; Megatron), pipelined
with the matmuls on Hopper and newer over NVLink
(:func:`~planner.workload.efficiency.exposed_tensor_parallel_seconds`), the pipeline bubble
``pp - 1`` (1F1B) or ``(pp - 1)/v`` with ``v`` interleaved chunks per rank
(:func:`pipeline_schedule`), the stage-to-stage sends ``t_p2p``, the slowest stage's share of the
FLOPs (whole layers plus the LM head on the last stage), the gradient all-reduce / reduce-scatter
(2·G bytes) overlapped with the last backward pass, chunk by chunk under interleaving
(:func:`exposed_gradient_sync`), and ZeRO-3's per-micro-batch gathers (3·G) overlapped with that
micro-batch.  Candidates within 1% of the fastest are ranked DP < ZeRO-1 < ZeRO-2 < ZeRO-3 < TP < PP
and the simplest wins.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from planner.gpu_specs import GpuSpec
from planner.workload import efficiency as eff
from planner.workload.memory import FRAGMENTATION, FRAMEWORK_FIXED_GIB, GIB, StateBytes

MICRO_BATCH_TOKENS = 8192


@dataclass(frozen=True)
class Strategy:
    """How the job is laid out on its GPUs."""

    data_parallel: int = 1
    tensor_parallel: int = 1
    pipeline_parallel: int = 1
    zero_stage: int = 0  # 0 plain DDP, 1-2 ZeRO, 3 ZeRO-3 / FSDP full shard
    activation_checkpointing: str = "none"  # none | selective | full
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

    @property
    def name(self) -> str:
        parts = []
        if self.method == "inference":
            parts.append(f"{self.data_parallel} replica{'s' if self.data_parallel != 1 else ''}")
            if self.tensor_parallel > 1:
                parts.append(f"TP{self.tensor_parallel}")
            return " x ".join(parts)
        if self.data_parallel > 1 or (self.tensor_parallel == 1 and self.pipeline_parallel == 1):
            parts.append(f"DP{self.data_parallel}")
        if self.zero_stage:
            parts.append("ZeRO-3/FSDP" if self.zero_stage == 3 else f"ZeRO-{self.zero_stage}")
        if self.tensor_parallel > 1:
            parts.append(f"TP{self.tensor_parallel}")
        if self.pipeline_parallel > 1:
            parts.append(f"PP{self.pipeline_parallel}")
        if self.activation_checkpointing != "none":
            parts.append(f"{self.activation_checkpointing} recompute")
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
    act_base_per_seq_layer: float  # 34·s·h bytes (32 without dropout)
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
    recompute_modes: tuple[str, ...] = ("none", "selective", "full")
    # parameters of one transformer layer (all weights but the vocabulary matrix, over the layers)
    # and the vocabulary: the matmul shapes (efficiency.matmul_fraction)
    layer_params: float = 0.0
    vocab: int = 0


@dataclass(frozen=True)
class Candidate:
    strategy: Strategy
    fits: bool
    memory_bytes: float
    breakdown: dict[str, float]
    piece_seconds: float
    hardware_flops_per_piece: float
    comm_exposed_s: float
    step_s: float


@dataclass(frozen=True)
class Links:
    """Link speeds of one topology, resolved once per estimate."""

    gpus_per_node: int
    intra_bytes_per_s: float
    intra_kind: str
    node_bytes_per_s: float


def _divisors_pow2(n: int, limit: int) -> list[int]:
    out, k = [], 1
    while k <= min(n, limit):
        if n % k == 0:
            out.append(k)
        k *= 2
    return out


def collective_seconds(
    volume: float, shard_bytes: float, dp: int, d_in: int, links: Links
) -> float:
    """Time of a data-parallel collective moving ``volume x shard_bytes`` (2 = all-reduce).

    Hierarchical: the ``d_in`` ranks inside a node exchange over the intra-node link; the node's NICs
    carry ``gpus_per_node x volume x (G/d_in) x (n-1)/n`` across ``n`` nodes.
    """
    if dp <= 1:
        return 0.0
    d_in = max(1, min(d_in, dp))
    n = math.ceil(dp / d_in)
    t = 0.0
    if d_in > 1:
        t += volume * shard_bytes * (d_in - 1) / d_in / links.intra_bytes_per_s
    if n > 1:
        per_node = links.gpus_per_node * volume * (shard_bytes / d_in) * (n - 1) / n
        t += per_node / links.node_bytes_per_s
    return t


# Model chunks per pipeline rank tried for the interleaved 1F1B schedule (Narayanan et al. 2021
# s2.2.2; Megatron-LM --num-layers-per-virtual-pipeline-stage; Llama 3 trains 405B with it, Dubey et
# al. 2024 s3.3.2).
INTERLEAVE_CHOICES = (2, 4, 8)
# Pipeline chunks that may hold no transformer layer: Llama 3 gives the embedding and the output
# projection + loss a chunk each ("the first model chunk on the first stage has only the embedding,
# and the last model chunk on the last stage has only output projection and loss"; Dubey et al.
# 2024 s3.3.2), which is how 126 layers run as 16 stages x 8 chunks.
NON_LAYER_CHUNKS = 2


def pipeline_schedule(
    pp: int,
    m: int,
    layers: int,
    t_mb: float,
    t_p2p: float,
    act_layers_bytes: float,
    headroom_bytes: float,
) -> tuple[int, float, float]:
    """(chunks per rank v, seconds for the m micro-batches of one step, extra activation bytes).

    1F1B with ``pp`` stages takes ``(m + pp - 1)`` micro-batch slots: ``pp - 1`` of them are the
    fill-and-drain bubble (GPipe/PipeDream-Flush; Narayanan et al. 2021 eq. 1).  Interleaving ``v``
    chunks per rank cuts the bubble to ``(pp - 1) / v`` slots (eq. 2) but sends ``v`` times as many
    point-to-point messages (``t_p2p`` per chunk per micro-batch) and holds activations for
    ``L·(1 + (pp - 1)/(pp·v))`` layers instead of ``L`` (Korthikanti et al. 2022 s4.2.3).  Megatron
    needs at least ``pp`` micro-batches for it; each chunk needs at least one layer, or the embedding
    or the head (:data:`NON_LAYER_CHUNKS`).
    """
    best = (1, (m + pp - 1) * (t_mb + t_p2p), 0.0)
    if pp <= 1 or m < pp:
        return best
    for v in INTERLEAVE_CHOICES:
        if v * pp > layers + NON_LAYER_CHUNKS:
            break
        extra = act_layers_bytes * (pp - 1) / (pp * v)
        if extra > headroom_bytes:
            continue
        t = (m + (pp - 1) / v) * (t_mb + v * t_p2p)
        if t < best[1] * 0.99:
            best = (v, t, extra)
    return best


def exposed_gradient_sync(t_comm: float, t_backward: float, chunks: int, pp: int) -> float:
    """Seconds of the data-parallel gradient reduction left after overlap with the backward pass.

    Gradients are reduced in buckets as the last micro-batch's backward pass produces them, so the
    reduction hides behind that backward pass (``t_backward`` per micro-batch on this stage); only
    what is left over shows.  With ``chunks`` interleaved model chunks per pipeline rank the
    gradients complete chunk by chunk: Megatron's schedule runs the last ``pp`` micro-batches
    through chunk ``v-1`` first and chunk 0 last, so chunk ``j`` is done ``j·pp`` chunk-backwards
    (``t_backward / v`` each) before the end and its reduction (``t_comm / v``) can run meanwhile
    -- NeMo's data-parallel overlap "exposes only one DP communication chunk" whose granularity
    "becomes the Transformer layers per virtual pipeline stage" (NeMo docs, Communication Overlap).
    Reductions queue on the links in chunk order, so what shows is
    ``max_j((j + 1)·t_comm/v - j·pp·t_backward/v) - t_backward/v``, largest at ``j = 0`` or
    ``j = v - 1``.
    """
    if chunks <= 1:
        return max(0.0, t_comm - t_backward)
    per_chunk = t_comm / chunks
    step = t_backward / chunks
    return max(0.0, per_chunk - step, t_comm - ((chunks - 1) * pp + 1) * step)


def search_training(
    f: TrainFacts,
    gpu: GpuSpec,
    count: int,
    links: Links,
    *,
    flash: bool,
) -> tuple[Candidate | None, Candidate | None]:
    """(fastest fitting candidate or None, the least-memory candidate for reporting a miss).

    Both are None when no layout exists at all: a pinned ``tensor x pipeline`` that does not divide
    ``count`` (:func:`unplaceable_layout` says why).
    """
    peak = gpu.peak_flops
    bw = gpu.memory_bandwidth_gb_per_s * 1e9
    stack = eff.FINETUNE_STACK_FACTOR if f.finetune else 1.0
    if f.method == "qlora":
        stack /= eff.QLORA_SLOWDOWN
    g_flat = eff.gemm_fraction(gpu) * stack
    shaped = f.transformer and f.layer_params > 0
    # matmul_fraction split into its per-GPU and per-shape parts (hot loop)
    ops_per_byte = peak / bw
    inverse_at_zero = 1.0 / eff.gemm_fraction(gpu) - ops_per_byte * eff.reference_bytes_per_flop(
        gpu
    )
    shape_cache: dict[tuple[int, int, int, str], float] = {}
    straggler = eff.straggler_factor(count)
    tp_overlap = eff.overlaps_tensor_parallel(gpu) and links.intra_kind == "nvlink"
    budget = gpu.memory_gib * GIB
    gpn = max(1, min(links.gpus_per_node, count))
    modes = f.recompute_modes if f.transformer else ("none",)
    if flash:
        modes = tuple(m for m in modes if m != "selective") or ("none",)
    tps = _divisors_pow2(count, gpn) if f.transformer else [1]
    tps = [t for t in tps if f.heads % t == 0]
    pps = (
        [p for p in _divisors_pow2(count, 64) if not f.transformer or p <= f.layers]
        if f.transformer
        else [1]
    )
    pin = f.pinned
    if "tensor" in pin:
        tps = [pin["tensor"]]
    if "pipeline" in pin:
        pps = [pin["pipeline"]]
    zeros = [pin["zero"]] if "zero" in pin else [0, 1, 2, 3]
    # Largest micro-batch considered: 8,192 tokens per GPU (typical FSDP/Megatron configs run 4-16k;
    # larger ones only raise memory, not speed, once the matmuls are large).
    cap = max(1, MICRO_BATCH_TOKENS // f.seq) if f.transformer else 10**9
    best: Candidate | None = None
    best_rank = 0
    least: Candidate | None = None
    for pp in pps:
        # Pipeline parallel only when nothing fits without it (llm-analysis / MT-NLG placement rule:
        # TP inside the node first, PP only if the model still does not fit).
        if pp > 1 and best is not None and "pipeline" not in pin:
            break
        for tp in tps:
            if count % (tp * pp):
                continue
            dp = count // (tp * pp)
            pp_in = min(pp, max(1, gpn // tp))
            d_in = max(1, gpn // (tp * pp_in))
            split = float(tp * pp)
            frozen = f.params - f.trainable
            w0 = (frozen * f.frozen_bytes + f.trainable * f.state.weights) / split
            g0 = f.trainable * f.state.grads / split
            o0 = f.trainable * f.state.optimizer / split
            for zero in zeros:
                if zero and dp == 1 and "zero" not in pin:
                    continue
                w = w0 / dp if zero >= 3 else w0
                gr = g0 / dp if zero >= 2 else g0
                o = o0 / dp if zero >= 1 else o0
                buffers = 0.0
                if zero >= 3:
                    # prefetching: the gathered current and next layer in 16 bits
                    buffers = 2.0 * 2.0 * f.largest_layer / tp
                states = w + gr + o + buffers
                for mode in modes:
                    if f.transformer:
                        if mode == "full":
                            act1 = (
                                f.layers * 2.0 * f.seq * f.hidden / tp
                                + (
                                    f.act_base_per_seq_layer
                                    + (0.0 if flash else f.act_score_per_seq_layer)
                                )
                                / tp
                            )
                        else:
                            score = (
                                0.0 if (flash or mode == "selective") else f.act_score_per_seq_layer
                            )
                            act1 = f.layers * (f.act_base_per_seq_layer + score) / tp
                        act1 += f.logits_per_seq / tp
                        # bytes this GPU's stage streams per sequence (the scores are materialised
                        # in HBM whenever FlashAttention is off, recompute or not)
                        traffic1 = (f.layers / pp) * (
                            f.act_base_per_seq_layer + (0.0 if flash else f.act_score_per_seq_layer)
                        ) / tp + f.logits_per_seq / tp
                    else:
                        act1 = f.act_per_sample
                        traffic1 = f.act_per_sample
                    fixed = FRAMEWORK_FIXED_GIB * GIB
                    room = (budget - fixed) / (1.0 + FRAGMENTATION) - states
                    b_max = int(room // act1) if act1 > 0 else 10**9
                    per_rank = max(1.0, f.global_batch / dp)
                    if "micro_batch" in pin:
                        b = pin["micro_batch"]
                    elif pp > 1:
                        b = 1
                    else:
                        b = max(1, min(b_max, math.ceil(per_rank), cap))
                    fits = b_max >= b >= 1
                    act = act1 * b
                    other = states + act
                    mem = other + fixed + FRAGMENTATION * other
                    breakdown = {
                        "weights": w / GIB,
                        "gradients": gr / GIB,
                        "optimizer_states": o / GIB,
                        "activations": act / GIB,
                        "framework": (fixed + FRAGMENTATION * other + buffers) / GIB,
                    }
                    m = max(1, math.ceil(per_rank / b))
                    seqs_step = m * b * dp
                    hw_per_seq = f.model_flops_per_seq + f.recompute_flops_per_seq.get(mode, 0.0)
                    passes = eff.ACTIVATION_PASSES + (1.0 if mode == "full" else 0.0)
                    if pp > 1:
                        # the slowest stage sets the pace: ceil(L/pp) whole layers, plus the LM head
                        # on the last stage (BLOOM's 250k vocabulary: +18% on that stage)
                        body = hw_per_seq - f.head_flops_per_seq
                        stage_flops = (
                            body * math.ceil(f.layers / pp) / f.layers + f.head_flops_per_seq
                        ) / tp
                    else:
                        stage_flops = hw_per_seq / split
                    g = g_flat
                    if shaped:
                        # matmul efficiency from this micro-batch's shapes: the layers' matmuls and
                        # the LM head, weighted by their FLOPs on the slowest stage
                        key = (pp, tp, b, mode)
                        cached_g = shape_cache.get(key)
                        if cached_g is None:
                            tokens = b * f.seq
                            x = eff.layer_bytes_per_flop(tokens, f.hidden, tp, f.layer_params)
                            if f.head_flops_per_seq and f.vocab:
                                share = f.head_flops_per_seq / tp / stage_flops
                                x_head = eff.head_bytes_per_flop(tokens, f.hidden, tp, f.vocab)
                                x += share * (x_head - x)
                            cached_g = stack / max(inverse_at_zero + ops_per_byte * x, 1.0)
                            shape_cache[key] = cached_g
                        g = cached_g
                    t_matmul = b * stage_flops / (peak * g)
                    t_mb = t_matmul + passes * b * traffic1 / bw
                    t_tp = 0.0
                    if tp > 1:
                        n_ar = 6 if mode == "full" else 4
                        per_ar = 2.0 * (tp - 1) / tp * b * f.seq * f.hidden * 2.0
                        layers_local = f.layers / pp
                        t_tp = (
                            n_ar
                            * layers_local
                            * (
                                per_ar / links.intra_bytes_per_s
                                + eff.COLLECTIVE_LATENCY_S[links.intra_kind]
                            )
                        )
                        if tp_overlap:
                            t_tp = eff.exposed_tensor_parallel_seconds(t_tp, tp, t_matmul)
                    v = 1
                    if pp > 1:
                        # activations (fwd) and their gradients (bwd) cross each stage boundary,
                        # scattered over the tp ranks (Narayanan et al. 2021 s4.1); between nodes
                        # when the pipeline spans nodes
                        p2p_bw = (
                            links.intra_bytes_per_s
                            if pp <= pp_in
                            else links.node_bytes_per_s / links.gpus_per_node
                        )
                        t_p2p = 2.0 * b * f.seq * f.hidden * 2.0 / tp / p2p_bw
                        headroom = (room - act) * (1.0 + FRAGMENTATION)
                        act_layers = (act1 - f.logits_per_seq / tp) * b
                        v, compute, extra = pipeline_schedule(
                            pp, m, f.layers, t_mb + t_tp, t_p2p, act_layers, headroom
                        )
                        if extra:
                            act += extra
                            other = states + act
                            mem = other + fixed + FRAGMENTATION * other
                            breakdown["activations"] = act / GIB
                            breakdown["framework"] = (fixed + FRAGMENTATION * other + buffers) / GIB
                    else:
                        compute = m * (t_mb + t_tp)
                    # ZeRO/FSDP keep 16-bit parameters and gradients and communicate those; plain
                    # DDP under torch.amp all-reduces the fp32 gradients (grad_comm_bytes).
                    local = f.trainable / split
                    if zero >= 3:
                        t_c = collective_seconds(3.0, local * 2.0, dp, d_in, links)
                        exposed = m * max(0.0, t_c - t_mb)
                    else:
                        shard = local * (2.0 if zero else f.grad_comm_bytes)
                        t_c = collective_seconds(2.0, shard, dp, d_in, links)
                        exposed = (
                            max(0.0, t_c - t_mb * 2.0 / 3.0)  # one chunk: exposed_gradient_sync
                            if v == 1
                            else exposed_gradient_sync(t_c, t_mb * 2.0 / 3.0, v, pp)
                        )
                    opt_params = f.trainable / split / (dp if zero >= 1 else 1)
                    t_opt = opt_params * f.opt_traffic / (bw * eff.MEMORY_BW_FRACTION)
                    step = (compute + exposed + t_opt) * straggler
                    steps = f.samples_per_piece / seqs_step
                    strategy = Strategy(
                        data_parallel=dp,
                        tensor_parallel=tp,
                        pipeline_parallel=pp,
                        zero_stage=zero,
                        activation_checkpointing=mode,
                        method=f.method,
                        optimizer=f.optimizer,
                        micro_batch_size=int(b),
                        grad_accumulation=m,
                        virtual_stages=v,
                        gpus_per_piece=count,
                    )
                    cand = Candidate(
                        strategy=strategy,
                        fits=fits,
                        memory_bytes=mem,
                        breakdown=breakdown,
                        piece_seconds=steps * step,
                        hardware_flops_per_piece=f.samples_per_piece * hw_per_seq,
                        comm_exposed_s=exposed + (m + pp - 1) * t_tp,
                        step_s=step,
                    )
                    if least is None or mem < least.memory_bytes:
                        least = cand
                    if not fits:
                        continue
                    full_batch = b >= math.ceil(per_rank)
                    rank = (pp > 1) * 1000 + (tp > 1) * 100 + zero * 10 + modes.index(mode)
                    if best is None:
                        best, best_rank = cand, rank
                    else:
                        faster = cand.piece_seconds < best.piece_seconds * 0.99
                        tie = cand.piece_seconds <= best.piece_seconds * 1.01
                        if faster or (tie and rank < best_rank):
                            best, best_rank = cand, rank
                    if full_batch:
                        break  # more recompute would only be slower
    return best, least


def unplaceable_layout(pinned: dict[str, int], count: int) -> str | None:
    """Why a pinned tensor x pipeline layout cannot run on ``count`` GPUs, or None when it can.

    Every data-parallel replica holds ``tensor x pipeline`` GPUs, so the count must be a multiple of
    that product (Megatron-LM: world size divisible by tensor x pipeline model-parallel size).
    """
    tp, pp = pinned.get("tensor", 1), pinned.get("pipeline", 1)
    if count % (tp * pp) == 0:
        return None
    parts = [f"tensor parallel {tp}"] if "tensor" in pinned else []
    if "pipeline" in pinned:
        parts.append(f"pipeline parallel {pp}")
    gpus = "GPU" if count == 1 else "GPUs"
    return f"{' x '.join(parts)} needs a multiple of {tp * pp} GPUs; {count} {gpus} cannot hold it"


def explain(c: Candidate, count: int) -> str:
    """Why this strategy: the one-line reason shown to users."""
    s = c.strategy
    bits = []
    if s.tensor_parallel == 1 and s.pipeline_parallel == 1 and s.zero_stage == 0:
        bits.append("model states fit on each GPU, so plain data parallel")
    if s.zero_stage:
        bits.append(
            f"ZeRO-{s.zero_stage} shards {'optimizer states' if s.zero_stage == 1 else 'optimizer states and gradients' if s.zero_stage == 2 else 'weights, gradients and optimizer states'} over {s.data_parallel} GPUs"
        )
    if s.tensor_parallel > 1:
        bits.append(f"tensor parallel {s.tensor_parallel} inside a node")
    if s.pipeline_parallel > 1:
        bits.append(
            f"pipeline parallel {s.pipeline_parallel}"
            + (f", interleaved {s.virtual_stages} chunks per GPU" if s.virtual_stages > 1 else "")
        )
    if s.activation_checkpointing != "none":
        bits.append(
            f"{s.activation_checkpointing} activation recompute to fit micro-batch {s.micro_batch_size}"
        )
    else:
        bits.append(f"micro-batch {s.micro_batch_size} x {s.grad_accumulation} accumulation steps")
    return "; ".join(bits) + "; fastest layout that fits, simplest among equals"
