"""Two costs of eager PyTorch stacks that a profile of their training steps on one H100 showed
(benchmarks/gpu_probe.py; issue 14): an output layer as wide as the tokenizer's vocabulary (GPT-2's
50,257, BERT's 30,522) runs cuBLAS's unaligned GEMM kernels, and torch.optim.AdamW's default
foreach path moves 80 bytes a parameter where a fused kernel moves 28."""

from __future__ import annotations

from typing import Any

import pytest

from planner.gpu_specs import resolve_gpu
from planner.workload import efficiency as eff
from planner.workload.frameworks import load_frameworks
from planner.workload.training import train_facts
from tests.step_workloads import step_estimate, step_job, step_seconds

H100 = resolve_gpu("H100")


@pytest.mark.parametrize(
    ("width", "element_bytes", "expected"),
    [
        (50257, 2.0, 1),  # GPT-2: odd
        (30522, 2.0, 2),  # BERT: 2 x 15,261
        (50260, 2.0, 4),  # 4 x 12,565: 8 bytes of 16-bit values
        (50260, 4.0, None),  # the same width in fp32: 16 bytes
        (50304, 2.0, None),  # nanoGPT's padded vocabulary, 2^7 x 393
        (32000, 2.0, None),
        (50257, 4.0, 1),  # tf32 operands, odd
    ],
)
def test_alignment_is_the_largest_power_of_two_below_sixteen_bytes(
    width: int, element_bytes: float, expected: int | None
) -> None:
    assert eff.unaligned_alignment(width, element_bytes) == expected


def test_unaligned_rate_is_the_measured_h100_rate_per_element() -> None:
    # measured: GPT-2's head GEMMs at 123 TFLOP/s together (align1), BERT's at 236-265 (align2)
    assert eff.unaligned_gemm_flops(H100, 1) == pytest.approx(123.0e12)
    assert eff.unaligned_gemm_flops(H100, 2) == pytest.approx(246.0e12)


def gpt2(framework: str, vocab: int, precision: str = "bf16") -> Any:
    """GPT-2 small from scratch at 16 x 1,024 tokens a step, one micro-batch, on ``framework``."""
    model = {
        "arch": "decoder",
        "params": 124.4e6 - (50257 - vocab) * 768,
        "layers": 12,
        "hidden": 768,
        "heads": 12,
        "vocab": vocab,
        "seq_len": 1024,
        "tied_embeddings": True,
    }
    return step_job(model, precision=precision, framework=framework)


def step_s(workload: Any, gpu: str = "H100") -> float:
    return step_seconds(step_estimate(workload, gpu))


def test_an_unpadded_vocabulary_costs_the_unaligned_head_time_on_h100() -> None:
    # the head's 6 x 16,384 tokens x 768 x 50,257 FLOPs at the unaligned rate, in place of the same
    # FLOPs (47 fewer columns) on the aligned kernels, which run at no more than the dense peak and
    # no less than 0.3 of it; the stack's factor (0.9) on both
    head_flops = 6.0 * 16 * 1024 * 768 * 50257
    stack = load_frameworks()["hf-trainer"].stack
    unaligned = head_flops / (stack * eff.unaligned_gemm_flops(H100, 1))
    slower = step_s(gpt2("hf-trainer", 50257)) - step_s(gpt2("hf-trainer", 50304))
    assert slower <= unaligned - head_flops / (stack * H100.peak_flops)
    assert slower >= unaligned - head_flops / (stack * 0.3 * H100.peak_flops)
    assert slower > 0.02  # 20 ms of a ~70 ms step: the measured step spent 30.7 ms in these GEMMs


@pytest.mark.parametrize("framework", ["llm.c", "megatron", "lightning"])
def test_stacks_that_pad_the_vocabulary_pay_nothing(framework: str) -> None:
    unpadded = step_s(gpt2(framework, 50257))
    padded = step_s(gpt2(framework, 50304))
    # 47 more columns: 0.04% of the FLOPs, nothing else
    assert unpadded == pytest.approx(padded, rel=0.002)


def test_fp32_on_the_cuda_cores_pays_nothing() -> None:
    unpadded = step_s(gpt2("hf-trainer", 50257, "fp32"))
    padded = step_s(gpt2("hf-trainer", 50304, "fp32"))
    assert unpadded == pytest.approx(padded, rel=0.002)


def test_where_the_unaligned_kernels_outrun_the_tensor_cores_nothing_changes() -> None:
    # RTX 3090: 1.84 x 35.6 TFLOPS = 65.5 at align1, above what its 71 TFLOPS of fp32-accumulate
    # tensor cores sustain
    assert (
        eff.unaligned_gemm_flops(resolve_gpu("RTX3090"), 1)
        > 0.9 * resolve_gpu("RTX3090").peak_flops
    )
    unpadded = step_s(gpt2("hf-trainer", 50257), "RTX3090")
    padded = step_s(gpt2("hf-trainer", 50304), "RTX3090")
    assert unpadded == pytest.approx(padded, rel=0.002)


def test_foreach_adamw_moves_eighty_bytes_a_parameter() -> None:
    # hand count of torch.optim.AdamW's foreach passes: decay 8, lerp 12, scale 8, addcmul 12,
    # sqrt 8, divide 8, epsilon 8, addcdiv 16
    assert eff.FOREACH_ADAMW_TRAFFIC_BYTES == 8 + 12 + 8 + 12 + 8 + 8 + 8 + 16
    assert train_facts(gpt2("pytorch-fsdp", 50257)).opt_traffic == 80.0
    assert train_facts(gpt2("hf-trainer", 50257)).opt_traffic == 28.0  # adamw_torch_fused
    assert train_facts(gpt2("lightning", 50257)).opt_traffic == 28.0  # LitGPT: fused=True
    assert train_facts(gpt2("pytorch-fsdp", 50257, "pure-bf16")).opt_traffic == 40.0
