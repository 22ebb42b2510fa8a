"""The steady state of a continuously batching replica serving a mixture of experts: a prompt's
added work at a batch of one (the experts it reads that one decoding request does not) must not
decide the capacity when a large batch touches every expert anyway (serving._steady_state)."""

from __future__ import annotations

import pytest

from planner.gpu_specs import resolve_gpu
from planner.workload.parallel import Links
from planner.workload.serving import Lengths, ModelShape, Replica, serve, serving_stack

# Mixtral 8x7B: 46.7B parameters, 12.9B active (2 of 8 experts), 32 layers, hidden 4,096
MIXTRAL = ModelShape(
    params=46.7e9,
    layers=32,
    hidden=4096,
    heads=32,
    kv_heads=8,
    active_params=12.9e9,
    experts=8,
    experts_per_token=2,
    lookup_params=131072000.0,
    vocab=32000,
)
ONE = Links(gpus_per_node=1, intra_bytes_per_s=44.8e9, intra_kind="pcie", node_bytes_per_s=42.5e9)


def _replica() -> Replica:
    stack = serving_stack("tensorrt-llm")
    return Replica(MIXTRAL, resolve_gpu("H100"), 1, ONE, stack, "fp8", "fp8")


def test_a_prompt_at_batch_one_reads_six_more_experts() -> None:
    # one decoding request touches 8 (1 - (1 - 2/8)) = 2 experts; 129 tokens touch all 8.  One
    # expert: (46.7 - 12.9)e9 / (8 - 2) = 5.633e9 fp8 bytes; six of them at 3,350 GB/s x 0.85:
    # 6 x 5.633e9 / 2.8475e12 = 11.87 ms
    r = _replica()
    assert r.prefill_work_seconds(128, 1, 192, 128) == pytest.approx(11.87e-3, rel=2e-3)
    # at 400 running requests every expert is read already: the prompt adds microseconds
    assert r.prefill_work_seconds(128, 400, 192, 128) < 1e-4


def test_the_capacity_is_not_capped_by_the_batch_of_one() -> None:
    # before: prompts alone "filled" the replica at 1 / 11.87 ms = 84.2 requests/s, because the
    # fixed point started at a batch of one and gave up there (10,780 tokens/s at 128 + 128)
    point = serve(_replica(), Lengths.of(128.0), Lengths.of(128.0))
    assert point.capacity_requests_per_s > 1.5 * 84.2
    # the running batch reaches the replica's limit (the KV cache), as a dense model's does
    assert point.concurrency == pytest.approx(point.max_concurrency, rel=1e-3)


def test_the_capacity_is_a_load_whose_batch_settles_within_the_limit() -> None:
    # review: near the highest load Little's law creeps to its fixed point; the 60 iterations ran
    # out with the batch at 2,047.97, still growing towards 2,327 at 139.43 requests/s, and the load
    # was called sustainable.  The batch a steady state reports is now a fixed point within the
    # replica's 2,048: the batch it implies is the batch itself
    from planner.workload import serving as sv

    r = _replica()
    prompt = output = Lengths.of(128.0)
    limit = r.stack.max_num_seqs
    capacity, at_capacity = sv._capacity(r, prompt, output, limit)
    state = sv._steady_state(r, capacity, prompt, output, limit)
    assert state is not None and state.batch <= limit
    # the steady state the capacity search found there is the one serving at capacity reads
    assert at_capacity == state
    implied = sv._little(r, capacity, prompt, output, state.batch)
    assert implied is not None and implied.batch == pytest.approx(state.batch, rel=1e-3)
    # a load 0.2% higher has no batch within the limit that sustains it
    assert sv._steady_state(r, capacity * 1.002, prompt, output, limit) is None
