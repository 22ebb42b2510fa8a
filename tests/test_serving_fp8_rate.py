"""A stack whose fp8 GEMMs run at the 16-bit rate (vllm-rocm-2024): fp8 weights read at one byte,
matmuls at the bf16 peak, against hand-worked MI300X figures."""

from __future__ import annotations

import pytest

from planner.gpu_specs import resolve_gpu
from planner.workload.parallel import Links
from planner.workload.serving import ModelShape, Replica, serving_stack

# Llama 3.1 405B: 126 layers, hidden 16,384, 128 heads, 8 KV heads
LLAMA31_405B = ModelShape(params=405.85e9, layers=126, hidden=16384, heads=128, kv_heads=8)
MESH = Links(gpus_per_node=8, intra_bytes_per_s=358.4e9, intra_kind="nvlink", node_bytes_per_s=50e9)


def _replica(stack: str) -> Replica:
    return Replica(LLAMA31_405B, resolve_gpu("MI300X"), 8, MESH, serving_stack(stack), "fp8")


def test_fp8_gemms_at_the_16bit_rate_use_the_bf16_peak() -> None:
    # MI300X datasheet: 1,307.4 bf16 / 2,614.8 fp8 (twice the bf16 rate)
    assert _replica("vllm").compute_peak_flops == pytest.approx(2614.8e12)
    assert _replica("vllm-rocm-2024").compute_peak_flops == pytest.approx(1307.4e12)


def test_the_weights_still_stream_at_one_byte() -> None:
    # 405.85e9 weights x 1 byte / 8 GPUs = 50.73 GB a GPU either way
    for stack in ("vllm", "vllm-rocm-2024"):
        assert _replica(stack).weight_bytes_per_gpu == pytest.approx(405.85e9 / 8)


def test_a_compute_bound_step_takes_the_bf16_matmul_time() -> None:
    # at 256 sequences the matmuls are bound by their FLOPs: 2 x 405.85e9 x 256 / 8 per GPU at the
    # bf16 peak x the matmul fraction; the rest of the step (attention, all-reduces, kernel and host
    # time) is the same on both stacks
    fast, slow = _replica("vllm"), _replica("vllm-rocm-2024")
    flops = 2 * 405.85e9 * 256 / 8
    assert flops / (1307.4e12 * slow.matmul_fraction) > 405.85e9 / 8 / (5300e9 * 0.8)
    extra = flops / (1307.4e12 * slow.matmul_fraction) - flops / (2614.8e12 * fast.matmul_fraction)
    assert slow.step_seconds(256, 192) - fast.step_seconds(256, 192) == pytest.approx(
        extra, rel=1e-3
    )


def test_batch_one_is_bandwidth_bound_on_both() -> None:
    assert _replica("vllm-rocm-2024").step_seconds(1, 192) == pytest.approx(
        _replica("vllm").step_seconds(1, 192)
    )
