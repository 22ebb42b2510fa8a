"""A calibration corrects the GPU's work, not a CPU data loader's (issue 14): a run whose steps
wait on its loader cannot calibrate, and a factor from a GPU-bound run leaves the loader's floor
under a later job's steps in place."""

from __future__ import annotations

from typing import Any

import pytest

import planner
from planner.errors import ConfigError
from planner.workload import parse_workload
from planner.workload.data_loader import classification_images_per_s

IMAGENET = 1_281_167
GPU = "A100-80GB"


def _resnet(**data: Any) -> planner.WorkloadSpec:
    return parse_workload(
        {
            "name": "rn50",
            "kind": "pretrain",
            "model": "resnet50",
            "data": {"samples": IMAGENET, "epochs": 1, **data},
            "training": {"precision": "fp16", "optimizer": "sgd", "global_batch_samples": 256},
        }
    )


def _images_per_s(est: planner.Estimate) -> float:
    return IMAGENET / (est.time_breakdown_hours["training steps"] * 3600.0)


def test_step_bounds_split_the_steps_into_gpu_and_loader_hours() -> None:
    slow = planner.estimate(_resnet(loader_workers_per_gpu=5), GPU, 1)
    gpu_only = planner.estimate(_resnet(loader="gpu"), GPU, 1)
    bounds = slow.step_bounds
    assert bounds is not None and bounds.loader_binds
    # 5 workers x 387.48 img/s = 1,937.4 img/s: one epoch's loading alone, hours
    rate = 5 * classification_images_per_s()
    assert rate == pytest.approx(1937.4, rel=1e-4)
    assert bounds.loader_hours == pytest.approx(IMAGENET / rate / 3600, rel=1e-9)
    assert bounds.gpu_hours == pytest.approx(gpu_only.time_breakdown_hours["training steps"])
    assert slow.time_breakdown_hours["training steps"] == pytest.approx(bounds.loader_hours)
    assert slow.to_dict()["step_bounds_hours"]["loader_hours"] == bounds.loader_hours
    # unstated workers are assumed to keep up: no bounds; a transformer has no CPU loader
    assert planner.estimate(_resnet(), GPU, 1).step_bounds is None
    assert planner.estimate("gpt2-finetune", GPU, 1).step_bounds is None


def test_a_run_waiting_on_its_loader_cannot_calibrate() -> None:
    spec = _resnet(loader_workers_per_gpu=5)
    with pytest.raises(ConfigError) as e:
        planner.calibrate(spec, GPU, 1, measured_tokens_per_second=1900.0)
    assert "waits on its CPU data loader" in str(e.value)
    assert e.value.key_path == "data.loader_workers_per_gpu"
    assert "keeps up" in (e.value.hint or "")
    assert planner.calibrations() == []


@pytest.mark.parametrize("factor", [0.5, 2.0])
def test_a_gpu_bound_factor_scales_the_gpu_work_under_the_loader_floor(factor: float) -> None:
    keeps_up = _resnet(loader_workers_per_gpu=64)  # 24,799 img/s: faster than the GPU
    gpu_bound = planner.estimate(keeps_up, GPU, 1)
    assert gpu_bound.step_bounds is not None and not gpu_bound.step_bounds.loader_binds
    estimated = _images_per_s(gpu_bound)
    job = _resnet(loader_workers_per_gpu=5)
    before = planner.estimate(job, GPU, 1).step_bounds
    record = planner.calibrate(keeps_up, GPU, 1, measured_tokens_per_second=estimated * factor)
    assert record["factor"] == pytest.approx(factor)

    after = planner.estimate(job, GPU, 1)
    assert before is not None and after.step_bounds is not None
    gpu_h = before.gpu_hours / factor
    assert after.step_bounds.gpu_hours == pytest.approx(gpu_h)
    assert after.step_bounds.loader_hours == pytest.approx(before.loader_hours)
    # half the GPU's speed outlasts the 5 workers' loading; twice it still waits on them
    steps = after.time_breakdown_hours["training steps"]
    assert steps == pytest.approx(max(gpu_h, before.loader_hours))
    assert (steps == pytest.approx(before.loader_hours)) is (factor == 2.0)
    note = next(a for a in after.assumptions if a.startswith("calibrated from your run"))
    assert "the training steps' GPU work" in note
    assert ("wait on the data loader" in note) is (factor == 2.0)
