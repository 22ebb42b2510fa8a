"""TensorRT-LLM's KV-cache admission against hand-worked numbers: its KV pool is a share of the memory
the weights leave free (kv_cache_free_gpu_mem_fraction), and its default capacity scheduler
(GUARANTEED_NO_EVICT) admits a request only with room for its prompt and its whole output."""

from __future__ import annotations

from dataclasses import replace

import pytest

from planner.gpu_specs import resolve_gpu
from planner.workload import estimate, parse_workload
from planner.workload.parallel import Links
from planner.workload.serving import Lengths, ModelShape, Replica, serve, serving_stack

# Llama 3.1 8B: 32 layers, 8 KV heads of 128: 2 x 32 x 8 x 128 x 2 = 131,072 bytes a token
LLAMA3_8B = ModelShape(params=8.03e9, layers=32, hidden=4096, heads=32, kv_heads=8)
ONE_GPU = Links(
    gpus_per_node=8, intra_bytes_per_s=450e9, intra_kind="nvlink", node_bytes_per_s=50e9
)
GIB = 2**30


def _replica(stack: str, **kw: object) -> Replica:
    return Replica(LLAMA3_8B, resolve_gpu("H100"), 1, ONE_GPU, serving_stack(stack), **kw)


def test_tensorrt_llm_takes_its_share_of_the_memory_left_after_the_weights() -> None:
    trt, vllm = _replica("tensorrt-llm"), _replica("vllm")
    weights = 8.03e9 * 2
    workspace_trt = 2048 * 16 * 4096 * 2  # 2,048 tokens (its max_num_seqs) of 16 hidden-wide values
    # H100 80 GiB: (80 GiB - 1 GiB runtime - 16.06 GB weights - workspace) x 0.90
    free = 80 * GIB - GIB - weights - workspace_trt
    assert trt.kv_pool_bytes_per_gpu == pytest.approx(free * 0.90)
    # vLLM's 0.90 is of the whole GPU, the rest coming out of it: 80 GiB x 0.9 - the same
    assert vllm.kv_pool_bytes_per_gpu == pytest.approx(
        80 * GIB * 0.90 - GIB - weights - workspace_trt
    )
    # the difference is 10% of what the weights, runtime and workspace take: 0.1 x 17.4 GB
    assert trt.kv_pool_bytes_per_gpu - vllm.kv_pool_bytes_per_gpu == pytest.approx(
        0.10 * (GIB + weights + workspace_trt)
    )


def test_a_reserving_stack_holds_the_whole_output_a_growing_one_half() -> None:
    trt = _replica("tensorrt-llm")
    assert trt.stack.reserves_whole_request and not _replica("vllm").stack.reserves_whole_request
    assert trt.held_context_tokens(128, 2048) == 2176
    grows = replace(trt, stack=replace(trt.stack, reserves_whole_request=False))
    assert grows.held_context_tokens(128, 2048) == 128 + 1024


def test_guaranteed_no_evict_bounds_the_running_requests_by_prompt_plus_output() -> None:
    """128-token prompts and 2,048-token answers on one H100 at fp8 weights and KV cache: the pool
    of (85.90 GB - 1.07 GB runtime - 8.03 GB - 0.27 GB workspace) x 0.9 = 68.87 GB holds
    68.87e9 / (65,536 x 2,176) = 482 whole requests, where the mean context (1,152) allows 912."""
    r = _replica("tensorrt-llm", precision="fp8", kv_precision="fp8")
    pool = (80 * GIB - GIB - 8.03e9 - 2048 * 16 * 4096 * 2) * 0.90
    per_token = 2 * 32 * 8 * 128 * 1
    whole, mean = int(pool // (per_token * 2176)), int(pool // (per_token * 1152))
    assert (whole, mean) == (482, 912)
    point = serve(r, Lengths.of(128), Lengths.of(2048))
    assert point.max_concurrency == whole
    # the same replica growing its cache block by block would run the mean context's number
    grows = replace(r, stack=replace(r.stack, reserves_whole_request=False))
    assert serve(grows, Lengths.of(128), Lengths.of(2048)).max_concurrency == mean


def test_the_reservation_is_for_the_longest_output_and_each_beam() -> None:
    r = _replica("tensorrt-llm", precision="fp8", kv_precision="fp8")
    pool = r.kv_pool_bytes_per_gpu
    # answers of 300 tokens on average and 1,000 at p95: each admitted request holds 128 + 1,000
    point = serve(r, Lengths.of(128), Lengths.of(300, p95=1000))
    assert point.max_concurrency == int(pool // (65_536 * 1128))
    # four beams share the prompt and each keeps its own answer: 128 + 4 x 1,000
    beams = replace(r, beam_width=4)
    point = serve(beams, Lengths.of(128), Lengths.of(300, p95=1000))
    assert point.max_concurrency == int(beams.kv_pool_bytes_per_gpu // (65_536 * 4128))


def test_the_estimate_says_how_tensorrt_llm_admits_requests() -> None:
    spec = parse_workload(
        {
            "name": "trt",
            "kind": "inference",
            "model": "llama-3-8b",
            "inference": {
                "framework": "tensorrt-llm",
                "precision": "fp8",
                "prompt_tokens": 128,
                "output_tokens": 2048,
                "requests": 1000,
            },
        }
    )
    text = "\n".join(estimate(spec, resolve_gpu("H100"), 1).assumptions)
    assert "90% of the memory the weights leave free" in text
    assert "its prompt and its whole answer" in text
