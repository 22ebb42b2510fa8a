"""A training job of whole steps at one micro-batch, pinned to one layout, and the seconds its
estimate gives a step: shared by the tests that compare two estimates of the same step."""

from __future__ import annotations

from typing import Any

from planner.gpu_specs import resolve_gpu
from planner.workload import Estimate, WorkloadSpec, estimate, parse_workload

STEPS = 1000  # steps a job runs: enough that nothing but the steps shows in a difference


def step_job(
    model: dict[str, Any],
    *,
    precision: str = "bf16",
    framework: str = "pytorch",
    batch: int = 16,
    seq: int = 1024,
    tensor: int = 1,
    flash: bool | None = None,
    **extra: Any,
) -> WorkloadSpec:
    """Pre-training ``model`` on :data:`STEPS` steps of ``batch`` x ``seq`` tokens, one micro-batch
    a step, plain data parallel with ``tensor``-way tensor parallelism, no recompute; ``extra``
    training fields as given."""
    training: dict[str, Any] = {
        "precision": precision,
        "framework": framework,
        "optimizer": "adamw",
        "activation_checkpointing": "none",
        "global_batch_samples": batch,
        "parallelism": {"micro_batch": batch, "zero": 0, "tensor": tensor, "pipeline": 1},
    }
    if flash is not None:
        training["flash_attention"] = flash
    training.update(extra)
    return parse_workload(
        {
            "name": "step-job",
            "kind": "pretrain",
            "model": model,
            "data": {"samples": batch * STEPS, "epochs": 1, "tokens_per_sample": seq},
            "training": training,
        },
        file="test",
    )


def step_estimate(job: WorkloadSpec, gpu: str = "H100", count: int = 1) -> Estimate:
    return estimate(job, resolve_gpu(gpu), count)


def step_seconds(est: Estimate) -> float:
    """One step's seconds: the estimate's training steps over :data:`STEPS`."""
    return est.time_breakdown_hours["training steps"] * 3600.0 / STEPS
