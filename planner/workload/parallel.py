"""Time on the links of a parallel layout: data-parallel collectives, the pipeline schedule and
how much gradient synchronisation the backward pass hides (pure).

Used by the strategy search (:mod:`planner.workload.strategy`), which times every layout with
these, and by the inference estimate (tensor-parallel replicas).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def context_chunks(cp: int, *, causal: bool) -> int:
    """Equal chunks a sequence is cut into for ``cp`` context-parallel ranks: ``2 x cp`` for a
    causal model (Megatron-Core's load-balanced split gives each rank chunks ``r`` and
    ``2·cp - 1 - r``, so every rank holds the same share of the causal mask), ``cp`` otherwise."""
    return 2 * cp if causal else cp


@dataclass(frozen=True)
class Links:
    """Link speeds of one topology, resolved once per estimate."""

    gpus_per_node: int
    intra_bytes_per_s: float
    intra_kind: str
    node_bytes_per_s: float


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


def busiest_stage(layers: int, pp: int, head_layers: float) -> tuple[int, bool]:
    """(whole layers on the busiest of ``pp`` pipeline stages, whether it also runs the output layer
    and loss), the head weighing ``head_layers`` layers' worth of FLOPs.

    Stages hold whole layers, and the stacks balance them counting the embedding and the head as
    one layer each: BLOOM's ``--pp-partition-method 'type:transformer|embedding'`` (70 layers on
    12 stages as ``[embed | 5], [6] x 10, [5 | embed]``; bigscience tr11-176B-ml README), Llama 3
    "reduce[s] one Transformer layer each from the first and the last stages" (Dubey et al. 2024
    s3.3.2), Megatron-LM ``--account-for-embedding-in-pipeline-split`` and
    ``--account-for-loss-in-pipeline-split``.  With ``u = ceil((L + 2)/pp)``
    such units per stage the last stage keeps ``n = u - 1`` layers beside the head and the others
    share the rest, at most ``ceil((L - n)/(pp - 1))`` each.  Where the layers divide evenly the
    head stage is the busiest (GPT-3's 96 layers on 8 stages: 12 + head); where they leave room
    the head takes a layer's place (Llama 3's 126 on 16: stages of 8, the head beside 7).
    """
    if pp <= 1:
        return layers, True
    n = min(layers, max(0, math.ceil((layers + 2) / pp) - 1))
    others = math.ceil((layers - n) / (pp - 1))
    if n + head_layers >= others:
        return n, True
    return others, False


def pipeline_schedule(
    pp: int,
    m: int,
    layers: int,
    t_mb: float,
    t_p2p: float,
    act_layers_bytes: float,
    headroom_bytes: float,
    *,
    interleave: bool = True,
) -> tuple[int, float, float]:
    """(chunks per rank v, seconds for the m micro-batches of one step, extra activation bytes).

    1F1B with ``pp`` stages takes ``(m + pp - 1)`` micro-batch slots: ``pp - 1`` of them are the
    fill-and-drain bubble (GPipe/PipeDream-Flush; Narayanan et al. 2021 eq. 1).  Interleaving ``v``
    chunks per rank cuts the bubble to ``(pp - 1) / v`` slots (eq. 2) but sends ``v`` times as many
    point-to-point messages (``t_p2p`` per chunk per micro-batch) and holds activations for
    ``L·(1 + (pp - 1)/(pp·v))`` layers instead of ``L`` (Korthikanti et al. 2022 s4.2.3).  Megatron
    needs at least ``pp`` micro-batches for it; each chunk needs at least one layer, or the embedding
    or the head (:data:`NON_LAYER_CHUNKS`).

    The sends of plain 1F1B block: each slot waits for its exchange with the next stage.  Under
    interleaving they are asynchronous, posted before a chunk's compute and waited on after it
    (Megatron-LM's ``overlap_p2p_comm``, on for the interleaved schedule and forced off for the
    plain one; Llama 3's "asynchronous point-to-point communication", Dubey et al. 2024 s3.3.2),
    so in the ``m`` steady slots a send shows only where it outlasts one chunk's compute
    (:func:`steady_slot_seconds`); the fill and drain still wait on every hop.  A stack without an
    interleaved schedule (``interleave`` false: DeepSpeed's pipeline engine) runs plain 1F1B.
    """
    best = (1, (m + pp - 1) * (t_mb + t_p2p), 0.0)
    for v in interleave_choices(pp, m, layers) if interleave else ():
        extra = act_layers_bytes * interleaved_extra_share(pp, v)
        if extra > headroom_bytes:
            continue
        t = m * steady_slot_seconds(t_mb, t_p2p, v) + (pp - 1) / v * (t_mb + v * t_p2p)
        if t < best[1] * 0.99:
            best = (v, t, extra)
    return best


def interleave_choices(pp: int, m: int, layers: int) -> tuple[int, ...]:
    """The interleaved chunks per rank :func:`pipeline_schedule` may run with ``pp`` stages, ``m``
    micro-batches per step and ``layers`` layers: at least ``pp`` micro-batches, and each chunk at
    least one layer, or the embedding or the head (:data:`NON_LAYER_CHUNKS`)."""
    if pp <= 1 or m < pp:
        return ()
    return tuple(v for v in INTERLEAVE_CHOICES if v * pp <= layers + NON_LAYER_CHUNKS)


def interleaved_extra_share(pp: int, chunks: int) -> float:
    """The activations interleaving ``chunks`` chunks per rank holds beyond plain 1F1B's, as a share
    of them: ``(pp - 1)/(pp·v)`` (Korthikanti et al. 2022 s4.2.3)."""
    return (pp - 1) / (pp * chunks)


def steady_slot_seconds(t_mb: float, t_p2p: float, chunks: int) -> float:
    """One steady-state micro-batch slot of an interleaved schedule: ``t_mb`` of compute over
    ``chunks`` chunks, each chunk's sends (``t_p2p``) overlapped with one chunk's compute
    (``t_mb / chunks``), only their excess showing."""
    return t_mb + chunks * max(0.0, t_p2p - t_mb / chunks)


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
