"""DeepSpeed's fp16 optimizer without ZeRO holds fp32 copies of every gradient at the step
(planner.workload.memory.fp16_optimizer_step_bytes): the step's peak is the model states plus 8
bytes per parameter, the backward pass's the states plus the activations, and the larger counts."""

from __future__ import annotations

from typing import Any

import pytest

from planner.gpu_specs import resolve_gpu
from planner.workload import estimate, parse_workload
from planner.workload.memory import GIB, fp16_optimizer_step_bytes

V100_32 = resolve_gpu("V100-32GB")
GPT2_1_5B = 1.5577e9


def gpt2_1_5b(zero: int, **training: Any) -> Any:
    """The DeepSpeed ZeRO tutorial's 1.5B GPT-2 (48 x 1,600, batch 1 per GPU, checkpointing)."""
    return parse_workload(
        {
            "name": "ds15",
            "kind": "pretrain",
            "model": {
                "arch": "decoder",
                "params": GPT2_1_5B,
                "layers": 48,
                "hidden": 1600,
                "heads": 16,
                "vocab": 50304,
                "seq_len": 1024,
            },
            "data": {"tokens": 1e9},
            "training": {
                "precision": "fp16",
                "framework": "deepspeed",
                "activation_checkpointing": "full",
                "flash_attention": False,
                "global_batch_samples": 8,
                "parallelism": {"micro_batch": 1, "zero": zero, "tensor": 1, "pipeline": 1},
                **training,
            },
        }
    )


@pytest.mark.parametrize(
    ("stack", "precision", "zero", "host", "expected"),
    [
        ("deepspeed", "fp16", 0, False, 8.0),  # FP16_Optimizer: fp32 copies + their flat buffer
        ("deepspeed", "fp16", 1, False, 0.0),  # ZeRO casts only its partition
        ("deepspeed", "bf16", 0, False, 0.0),  # another optimizer (BF16_Optimizer)
        ("megatron", "fp16", 0, False, 0.0),  # another stack
        ("deepspeed", "fp16", 0, True, 0.0),  # the optimizer runs on the host
    ],
)
def test_step_bytes_per_parameter(
    stack: str, precision: str, zero: int, host: bool, expected: float
) -> None:
    got = fp16_optimizer_step_bytes(
        1.0, stack=stack, precision=precision, zero=zero, host_optimizer=host
    )
    assert got == expected


def test_1_5b_gpt2_runs_out_of_memory_without_zero_and_fits_with_zero_1() -> None:
    """The tutorial: "Training this model without ZeRO fails with an out-of-memory (OOM) error";
    with ZeRO stage 1 it trains on 8 V100 32GB."""
    without = estimate(gpt2_1_5b(0), V100_32, 8)
    assert not without.fits
    # the step holds 16 + 8 bytes per parameter, more than the checkpointed activations
    assert without.memory_per_gpu_gib > 24.0 * GPT2_1_5B / GIB
    assert estimate(gpt2_1_5b(1), V100_32, 8).fits


def test_the_step_and_the_activations_are_not_counted_together() -> None:
    """Without checkpointing the activations (6.6 GiB) stay under the step's fp32 copies (11.6 GiB):
    the estimate is the same as with checkpointing."""
    ckpt = estimate(gpt2_1_5b(0), V100_32, 8)
    none = estimate(gpt2_1_5b(0, activation_checkpointing="none"), V100_32, 8)
    assert none.memory_per_gpu_gib == pytest.approx(ckpt.memory_per_gpu_gib)
    assert sum(none.memory_breakdown_gib.values()) == pytest.approx(none.memory_per_gpu_gib)
