"""No fused attention kernel runs on tf32 tensor cores: FlashAttention and cuDNN's fused attention
take fp16 and bf16 only, and PyTorch's memory-efficient kernel runs fp32 on the CUDA cores even
under allow_tf32 (measured on one H100: cutlass "f32" fmha kernels at 29 TFLOP/s; issue 14,
benchmarks/gpu_probe.py).  Under tf32 the attention core is timed at the fp32 rate."""

from __future__ import annotations

from typing import Any

import pytest

from planner.gpu_specs import resolve_gpu
from planner.workload import efficiency as eff
from tests.step_workloads import step_estimate, step_job, step_seconds

H100 = resolve_gpu("H100")
TOKENS = 16 * 1024


def gpt2(precision: str, seq: int) -> Any:
    model = {"preset": "gpt2", "vocab": 50304, "activation": "gelu"}
    return step_job(model, precision=precision, batch=TOKENS // seq, seq=seq, flash=True)


def step_s(workload: Any) -> float:
    return step_seconds(step_estimate(workload))


def test_tf32_attention_runs_no_faster_than_the_cuda_cores() -> None:
    # doubling the sequence at the same tokens a step adds only attention-core work: the causal
    # half of 4·s·h FLOPs a token and layer forward, 2.5 times that backward, 7·Δs·h in all over
    # 12 layers and 16,384 tokens, which the CUDA cores' 66.9 TFLOPS cannot run faster
    executed = 7.0 * (1024 - 512) * 768 * 12 * TOKENS
    slower = step_s(gpt2("tf32", 1024)) - step_s(gpt2("tf32", 512))
    assert slower >= executed / (H100.fp32_tflops * 1e12)
    # where bf16's fused kernels run the same work at the tensor-core rate, several times faster
    bf16 = step_s(gpt2("bf16", 1024)) - step_s(gpt2("bf16", 512))
    assert slower > 3.0 * bf16


def test_the_scale_is_the_ratio_of_the_two_matmul_rates() -> None:
    tf32_peak, tf32_share = eff.precision_peak(H100, "tf32")
    fp32_peak, fp32_share = eff.precision_peak(H100, "fp32")
    assert tf32_peak == pytest.approx(2 * 247.35e12, rel=0.01)  # half the 989.4 16-bit peak
    assert fp32_peak == pytest.approx(66.9e12)
    ratio = eff.tf32_over_fp32(H100)
    assert ratio == pytest.approx(tf32_peak * tf32_share / (fp32_peak * fp32_share))
    kwargs: dict[str, Any] = {"causal": True, "flash": True}
    factor = eff.attention_time_factor(H100, "fa2", **kwargs)
    assert eff.attention_extra_flops(H100, "fa2", precision="tf32", **kwargs) == pytest.approx(
        factor * ratio - 1.0
    )
    # bf16 and fp32 keep the factor; without a fused kernel tf32's matmuls run the square
    assert eff.attention_extra_flops(H100, "fa2", precision="bf16", **kwargs) == pytest.approx(
        factor - 1.0
    )
    unfused: dict[str, Any] = {"causal": True, "flash": False}
    assert eff.attention_extra_flops(H100, "fa2", precision="tf32", **unfused) == 0.0
