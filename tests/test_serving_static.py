"""Static batching (MLPerf Inference v3.1's TensorRT GPT harness, before in-flight batching): a batch
of N requests prefills together, then decodes until its longest request is done.  The throughput
and latencies against hand-worked numbers with made-up step times, the bundled stack, the
validation of the batching settings, and the v3.1 GPT-J rows through the product's path."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace

import pytest

from planner.errors import ConfigError
from planner.gpu_specs import resolve_gpu
from planner.workload import WorkloadSpec, estimate, parse_workload
from planner.workload.parallel import Links
from planner.workload.serving import (
    BATCHING_KINDS,
    Lengths,
    ModelShape,
    Replica,
    checked_stack,
    serve,
    serve_static,
    serving_stack,
    static_batch,
)

GPTJ = ModelShape(params=6.05e9, layers=28, hidden=4096, heads=16, kv_heads=16, vocab=50400)
ONE_GPU = Links(gpus_per_node=1, intra_bytes_per_s=1e12, intra_kind="nvlink", node_bytes_per_s=1e9)


@dataclass(frozen=True)
class _FixedSteps(Replica):
    """A replica whose step times are made up, so a batch's time can be worked by hand: a prefill
    step costs 10 us a prompt token, a decode step 10 ms plus 1 ms a running request."""

    def step_seconds(
        self,
        decode_seqs: float,
        decode_context: float,
        prefill_tokens: float = 0.0,
        prefill_context: float = 0.0,
        decode_prompt: float = 0.0,
    ) -> float:
        if decode_seqs > 0:
            return 0.010 + 0.001 * decode_seqs
        return 1e-5 * prefill_tokens


def _fixed(batch: int = 8) -> _FixedSteps:
    stack = replace(serving_stack("tensorrt-static"), max_num_seqs=batch)
    return _FixedSteps(GPTJ, resolve_gpu("H100"), 1, ONE_GPU, stack, precision="fp8")


PROMPT = Lengths.of(100)
OUTPUT = Lengths.of(50, p95=101)  # mean 50 tokens, the longest 101


def test_a_static_batch_runs_to_its_longest_request() -> None:
    batch = static_batch(_fixed(), 8, PROMPT, OUTPUT)
    # prefill: 8 prompts x 100 tokens x 10 us = 8 ms; a decode step at 8 requests: 10 + 8 = 18 ms;
    # the longest output, 101 tokens, is the prefill's first and 100 decode steps
    assert batch.prefill_s == pytest.approx(0.008)
    assert batch.step_s == pytest.approx(0.018)
    assert batch.steps == 100
    assert batch.seconds == pytest.approx(0.008 + 100 * 0.018)  # 1.808 s


def test_static_throughput_is_the_batchs_mean_output_over_its_whole_time() -> None:
    point = serve(_fixed(), PROMPT, OUTPUT)
    # 8 requests every 1.808 s, each with 50 tokens on average
    assert point.capacity_requests_per_s == pytest.approx(8 / 1.808)
    assert point.capacity_tokens_per_s == pytest.approx(8 * 50 / 1.808)  # 221.24 tokens/s
    assert point.concurrency == 8 and point.max_concurrency == 8
    # offline: batches back to back, the first token after the batch's prefill, every request
    # back when the longest is done
    assert point.ttft_ms_p50 == pytest.approx(8.0)
    assert point.tpot_ms_p50 == pytest.approx(18.0)
    assert point.e2e_ms_p95 == pytest.approx(1808.0)
    assert point.prefill_share == pytest.approx(0.008 / 1.808)


def test_continuous_batching_of_the_same_steps_is_faster() -> None:
    # the same made-up steps with requests leaving when done: no request waits for the longest
    static = serve(_fixed(), PROMPT, OUTPUT).capacity_tokens_per_s
    flowing = replace(_fixed(), stack=serving_stack("tensorrt-llm"))
    assert serve(flowing, PROMPT, OUTPUT).capacity_tokens_per_s > 1.5 * static


def test_a_light_load_forms_small_batches_and_waits_for_the_running_one() -> None:
    r = _fixed()
    # at 1 request/s a batch of one takes 0.001 + 100 x 0.011 = 1.101 s, and the next batch is
    # the 1.101 requests that arrived meanwhile: the fixed point b = 1 x T(b), T(b) = 1 + 0.101 b
    # (1e-5 x 100 b of prefill and 100 steps of 10 + b ms), b = 1 / 0.899
    b = 1.0 / 0.899
    t = 1.0 + 0.101 * b
    point = serve_static(r, PROMPT, OUTPUT, 8, requests_per_s=1.0)
    assert point.concurrency == pytest.approx(b, rel=1e-5)
    assert not point.overloaded
    # busy all the time (b = rate x T): the wait for the running batch is uniform over it
    assert point.ttft_ms_p50 == pytest.approx((0.001 * b + 0.5 * t) * 1e3, rel=1e-5)
    assert point.ttft_ms_p95 == pytest.approx((0.001 * b + 0.95 * t) * 1e3, rel=1e-5)
    assert point.tpot_ms_p50 == pytest.approx((10 + b), rel=1e-5)
    assert point.throughput_tokens_per_s == pytest.approx(50.0)


def test_a_rare_request_mostly_finds_the_replica_idle() -> None:
    # 0.1 requests/s: batches of one, 1.101 s each, busy 11% of the time: the median request
    # waits for nothing, the 95th percentile for part of a running batch
    point = serve_static(_fixed(), PROMPT, OUTPUT, 8, requests_per_s=0.1)
    busy = 0.1 * 1.101
    assert point.concurrency == 1
    assert point.ttft_ms_p50 == pytest.approx(1.0)  # its own prefill, 100 tokens x 10 us
    assert point.ttft_ms_p95 == pytest.approx(1.0 + 1101 * (0.95 - (1 - busy)) / busy)


def test_a_load_beyond_the_capacity_is_overloaded() -> None:
    point = serve_static(_fixed(), PROMPT, OUTPUT, 8, requests_per_s=100.0)
    assert point.overloaded
    assert point.requests_per_s == pytest.approx(8 / 1.808)


def test_the_bundled_stack_batches_statically_with_beams() -> None:
    stack = serving_stack("tensorrt-static")
    assert stack.batching == "static" and not stack.continuous_batching
    assert stack.beam_search and stack.cuda_only
    assert (
        serving_stack("vllm").batching == "continuous" and serving_stack("vllm").continuous_batching
    )
    assert serving_stack("hf-transformers").batching == "one-at-a-time"


@pytest.mark.parametrize(
    ("change", "field", "says"),
    [
        # a kind the model does not know, with the kinds it does
        ({"batching": "dynamic"}, "tensorrt-static.batching", "one of continuous, static"),
        # a batch of no requests
        ({"max_num_seqs": 0}, "tensorrt-static.max_num_seqs", "1 or more"),
    ],
)
def test_bad_batching_settings_name_the_field_and_the_fix(
    change: dict[str, object], field: str, says: str
) -> None:
    stack = replace(serving_stack("tensorrt-static"), **change)
    with pytest.raises(ConfigError) as info:
        checked_stack(stack)
    assert info.value.key_path == field
    assert says in f"{info.value} {info.value.hint}"


def test_the_batching_kinds_are_the_three_the_model_serves() -> None:
    assert BATCHING_KINDS == ("continuous", "static", "one-at-a-time")


@pytest.mark.parametrize("batch", [0, -3, math.nan])
def test_a_static_batch_of_no_requests_is_refused(batch: float) -> None:
    with pytest.raises(ConfigError) as info:
        static_batch(_fixed(), batch, PROMPT, OUTPUT)
    assert info.value.key_path == "inference.max_batch"
    assert "1 or more" in str(info.value.hint)


def _gptj_v31_spec(batch: int, **load: float) -> WorkloadSpec:
    return parse_workload(
        {
            "name": "gptj-v3.1",
            "kind": "inference",
            "model": {
                "arch": "decoder",
                "seq_len": 4096,
                "params": GPTJ.params,
                "layers": GPTJ.layers,
                "hidden": GPTJ.hidden,
                "heads": GPTJ.heads,
                "kv_heads": GPTJ.kv_heads,
                "vocab": GPTJ.vocab,
            },
            "inference": {
                "precision": "fp8",
                "framework": "tensorrt-static",
                "prompt_tokens": 781,
                "output_tokens": 69,
                "output_tokens_p95": 128,
                "beam_width": 4,
                "max_batch": batch,
                **(load or {"requests": 1e6}),
            },
        }
    )


def _gptj_v31(gpu: str, batch: int) -> float:
    sv = estimate(_gptj_v31_spec(batch), resolve_gpu(gpu), 1).serving
    assert sv is not None
    return sv.capacity_requests_per_second


def test_mlperf_v31_gptj_runs_slower_in_static_batches_than_continuously() -> None:
    # NVIDIA's v3.1 gptj Offline config: gpu_batch_size 32 on the H100, 7 on the L4 (measured
    # 13.07 and 1.30 samples/s); with in-flight batching the same GPUs estimate 41.5 and 3.5
    h100, l4 = _gptj_v31("H100", 32), _gptj_v31("L4", 7)
    assert 13.07 < h100 < 2 * 13.07
    assert 0.8 * 1.30 < l4 < 1.2 * 1.30
    # NVIDIA put TensorRT-LLM's in-flight batching at twice the H100's GPT-J throughput of the
    # software before it (NVIDIA Technical Blog, September 2023: 4x the A100 -> 8x); in flight,
    # the batch is the KV cache's to size and a request leaves at its own end
    spec = _gptj_v31_spec(32)
    inf = spec.inference
    assert inf is not None
    flowing = spec.model_copy(
        update={
            "inference": inf.model_copy(
                update={"framework": "tensorrt-llm", "max_batch": None, "output_tokens_p95": None}
            )
        }
    )
    sv = estimate(flowing, resolve_gpu("H100"), 1).serving
    assert sv is not None
    assert 1.7 < sv.capacity_requests_per_second / h100 < 2.3


def test_a_static_service_estimate_says_how_it_batches() -> None:
    # 5 requests/s on one H100: small batches formed while the last one runs, well below the
    # capacity of batches of 32
    est = estimate(_gptj_v31_spec(32, requests_per_s=5.0, hours=730.0), resolve_gpu("H100"), 1)
    sv = est.serving
    assert sv is not None and 1.0 < sv.concurrency < 32
    assert any(line.startswith("static batches:") for line in est.assumptions)
    assert not any("Little's law" in line for line in est.assumptions)


def test_latency_rises_with_the_load_up_to_the_capacity() -> None:
    # the fleet sizing bisects on the load for a latency target: it needs latency to rise with it
    r = _fixed()
    cap = serve(r, PROMPT, OUTPUT).capacity_requests_per_s
    points = [
        serve_static(r, PROMPT, OUTPUT, 8, cap * f) for f in (1e-6, 0.1, 0.3, 0.6, 0.9, 0.999)
    ]
    for lighter, heavier in itertools.pairwise(points):
        assert heavier.ttft_ms_p95 >= lighter.ttft_ms_p95
        assert heavier.e2e_ms_p95 >= lighter.e2e_ms_p95
        assert heavier.concurrency >= lighter.concurrency
    assert not points[-1].overloaded and points[-1].concurrency == pytest.approx(8, rel=1e-2)
