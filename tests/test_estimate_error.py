"""The likely range every training estimate prints (issue 14): the estimator's own error on the
published runs, kept current with the physics."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml

from planner.gpu_specs import resolve_gpu
from planner.workload import estimate, load_workload

ROOT = Path(__file__).resolve().parent.parent


def _script() -> object:
    spec = importlib.util.spec_from_file_location(
        "estimate_error", ROOT / "scripts" / "estimate_error.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bundled_error_file_matches_the_estimator() -> None:
    """A change to the physics changes the estimator's error on the published runs: rerun
    python scripts/estimate_error.py with it."""
    script = _script()
    assert script.main(["--check"]) == 0, "run: python scripts/estimate_error.py"  # type: ignore[attr-defined]


def test_an_estimate_spans_the_10th_to_90th_percentile_of_that_error() -> None:
    raw = yaml.safe_load((ROOT / "planner" / "data" / "estimate_error.yaml").read_text())
    assert raw["ratio_p10"] < 1.0 < raw["ratio_p90"]
    est = estimate(load_workload("gpt2-xl-finetune"), resolve_gpu("A100-80GB"), 1)
    assert est.wall_hours_range is not None
    low, high = est.wall_hours_range
    assert low == pytest.approx(est.wall_hours * raw["ratio_p10"])
    assert high == pytest.approx(est.wall_hours * raw["ratio_p90"])
    assert any(f"{raw['runs']} published training runs" in a for a in est.assumptions)
