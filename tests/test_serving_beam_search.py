"""Beam search in the serving model: B hypotheses a request decode each step over a prompt prefilled
once and shared (TensorRT-LLM's cache indirection), each beam keeping its own generated KV cache;
checked against hand-worked numbers, and the workload field's validation."""

from __future__ import annotations

import pytest

from planner.errors import ConfigError
from planner.gpu_specs import resolve_gpu
from planner.workload import estimate, parse_workload
from planner.workload.estimate_types import default_topology
from planner.workload.parallel import Links
from planner.workload.serving import Lengths, ModelShape, Replica, serve, serving_stack

LLAMA2_7B = ModelShape(params=6.74e9, layers=32, hidden=4096, heads=32, vocab=32000)
NVLINK = Links(gpus_per_node=8, intra_bytes_per_s=450e9, intra_kind="nvlink", node_bytes_per_s=50e9)
KV_PER_TOKEN = 2 * 32 * 32 * 128 * 2  # 512 KiB: 32 layers x K and V x 4,096 values x 2 bytes
BANDWIDTH = 2039e9 * 0.8  # A100-80GB at vLLM's share


def _replica(beams: int = 1, **kw: object) -> Replica:
    return Replica(
        LLAMA2_7B,
        resolve_gpu("A100-80GB"),
        1,
        NVLINK,
        serving_stack("vllm"),
        beam_width=beams,
        **kw,
    )


def test_a_beam_step_decodes_b_tokens_a_request_over_a_shared_prompt() -> None:
    """10 requests of 4 beams, 600 prompt tokens and 20 generated: 40 tokens through the weights
    (still bound by their 13.48 GB read on an A100), KV reads of 600 + 4 x 20 tokens a request,
    and the beam search's logits (40 x 32,000 fp32, written and read) and indirection."""
    r = _replica(beams=4)
    weights = 6.74e9 * 2 / BANDWIDTH
    kv = KV_PER_TOKEN * 10 * (600 + 4 * 20) / BANDWIDTH
    beam = (2 * 40 * 32000 * 4 + 2 * 40 * 620 * 4) / BANDWIDTH
    kernels = 32 * 0.05e-3  # vLLM's per-layer kernel time
    expected = weights + kv + beam + kernels + 1e-3
    assert r.step_seconds(10, 620, decode_prompt=600) == pytest.approx(expected)
    # were the prompt read once per beam, the step would read 4 x 620 tokens a request
    unshared = r.step_seconds(10, 620)
    assert unshared - r.step_seconds(10, 620, decode_prompt=600) == pytest.approx(
        KV_PER_TOKEN * 10 * 3 * 600 / BANDWIDTH
    )


def test_one_beam_is_the_plain_decode_step() -> None:
    r = _replica(beams=1)
    # no beam kernels, and the prompt split changes nothing with one beam
    assert r.step_seconds(10, 620, decode_prompt=600) == r.step_seconds(10, 620)
    assert r.step_seconds(10, 620) == pytest.approx(
        (6.74e9 * 2 + KV_PER_TOKEN * 10 * 620) / BANDWIDTH + 32 * 0.05e-3 + 1e-3
    )


def test_beams_multiply_the_matmul_tokens_once_the_batch_is_compute_bound() -> None:
    r1, r4 = _replica(beams=1), _replica(beams=4)
    # 256 requests x 4 beams on one token of context: 1,024 tokens through the weights, the same
    # step as 1,024 single-beam requests but for the beam kernels
    beam = (2 * 1024 * 32000 * 4 + 2 * 1024 * 1 * 4) / BANDWIDTH
    assert r4.step_seconds(256, 1, decode_prompt=0) == pytest.approx(
        r1.step_seconds(1024, 1) + beam
    )


def test_the_prompt_is_prefilled_once_whatever_the_beams() -> None:
    assert _replica(beams=8).prefill_seconds(1000) == _replica(beams=1).prefill_seconds(1000)


def test_a_request_holds_its_prompt_once_and_each_beams_tokens() -> None:
    r = _replica(beams=4)
    assert r.request_kv_tokens(781, 69) == 781 + 4 * 69
    pool = r.kv_pool_bytes_per_gpu
    # at the mean context (prompt 781 + half of 69 generated), 4 beams share the prompt
    held = 781 + 4 * 34.5
    assert r.max_concurrency(781 + 34.5, 781) == min(int(pool // (KV_PER_TOKEN * held)), 256)
    # the workspace holds a full batch of beams: 256 requests x 4 = 1,024 tokens (< a 2,048 chunk)
    assert r.workspace_bytes_per_gpu == _replica(beams=1).workspace_bytes_per_gpu
    assert _replica(beams=16).workspace_bytes_per_gpu == pytest.approx(256 * 16 * 16 * 4096 * 2.0)


def test_beam_search_costs_throughput_and_not_the_first_token_alone() -> None:
    prompt, output = Lengths.of(781), Lengths.of(69)
    one = serve(_replica(beams=1), prompt, output)
    four = serve(_replica(beams=4), prompt, output)
    assert four.capacity_tokens_per_s < one.capacity_tokens_per_s
    # output tokens/s counts the best beam: one token a request a step
    assert four.capacity_tokens_per_s == pytest.approx(four.capacity_requests_per_s * 69)
    lone = serve(_replica(beams=4), prompt, output, 1e-4)
    assert lone.ttft_ms_p50 == pytest.approx(
        serve(_replica(beams=1), prompt, output, 1e-4).ttft_ms_p50, rel=0.01
    )


def _workload(beam_width: object) -> dict[str, object]:
    return {
        "name": "summarise",
        "kind": "inference",
        "model": "llama-2-7b",
        "inference": {
            "precision": "fp16",
            "prompt_tokens": 781,
            "output_tokens": 69,
            "requests": 1000,
            "beam_width": beam_width,
        },
    }


def test_the_estimate_keeps_each_beams_kv_cache() -> None:
    gpu = resolve_gpu("A100-80GB")
    est = {
        b: estimate(parse_workload(_workload(b)), gpu, 1, topology=default_topology(gpu, 1))
        for b in (1, 4)
    }
    one, four = est[1].serving, est[4].serving
    assert one is not None and four is not None
    assert four.kv_cache_gib_per_sequence / one.kv_cache_gib_per_sequence == pytest.approx(
        (781 + 4 * 69) / (781 + 69)
    )
    assert four.capacity_tokens_per_second < one.capacity_tokens_per_second
    assert any("beam search, 4 beams" in line for line in est[4].assumptions)


@pytest.mark.parametrize(
    "value",
    [
        0,  # no beams at all
        -2,  # negative
        2.5,  # half a beam
        "four",  # not a number
        5000,  # beyond the bound
    ],
)
def test_a_beam_width_that_is_not_a_whole_positive_number_is_refused(value: object) -> None:
    with pytest.raises(ConfigError, match=r"inference\.beam_width.*1 for greedy decoding"):
        parse_workload(_workload(value))


def test_beam_width_defaults_to_one_and_takes_whole_floats() -> None:
    four = parse_workload(_workload(4.0)).inference
    assert four is not None and four.beam_width == 4
    raw = _workload(1)
    raw["inference"] = {k: v for k, v in _workload(1)["inference"].items() if k != "beam_width"}  # type: ignore[attr-defined]
    default = parse_workload(raw).inference
    assert default is not None and default.beam_width == 1
