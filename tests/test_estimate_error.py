"""The likely range every training estimate prints (issue 14): the estimator's own error on the
published runs, kept current with the physics."""

from __future__ import annotations

import pytest
import yaml

from planner.gpu_specs import resolve_gpu
from planner.workload import estimate, load_workload
from scripts.estimate_error import DATA, render


def test_the_bundled_error_file_matches_the_estimator() -> None:
    """A change to the physics changes the estimator's error on the published runs: rerun
    python scripts/estimate_error.py with it."""
    assert DATA.read_text(encoding="utf-8") == render(), "run: python scripts/estimate_error.py"


@pytest.mark.parametrize(
    ("workload", "regime"),
    [("gpt2-xl-finetune", "dense"), ("mixtral-8x7b-finetune", "mixture-of-experts")],
)
def test_an_estimate_spans_the_10th_to_90th_percentile_of_its_regimes_error(
    workload: str, regime: str
) -> None:
    raw = yaml.safe_load(DATA.read_text(encoding="utf-8"))[regime]
    assert raw["ratio_p10"] < raw["ratio_median"] < raw["ratio_p90"]
    if regime == "dense":  # dense estimates err both ways; every mixture-of-experts row runs fast
        assert raw["ratio_p10"] < 1.0 < raw["ratio_p90"]
    est = estimate(load_workload(workload), resolve_gpu("H100"), 16)
    assert est.fits and est.wall_hours_range is not None
    low, high = est.wall_hours_range
    assert low == pytest.approx(est.wall_hours * raw["ratio_p10"])
    assert high == pytest.approx(est.wall_hours * raw["ratio_p90"])
    assert any(f"{raw['runs']} published {regime} training runs" in a for a in est.assumptions)


def test_the_regimes_split_the_published_runs() -> None:
    # every published run counts once, in the regime of its model
    from benchmarks.accuracy import load_runs

    calibration, holdout = load_runs()
    raw = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    assert raw["dense"]["runs"] + raw["mixture-of-experts"]["runs"] == len(calibration) + len(
        holdout
    )
    assert raw["mixture-of-experts"]["runs"] >= 1
