"""Calibration from the user's own runs (issue 14): a measured run corrects later estimates of
similar jobs, says so, and is kept safely in the user data folder."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import planner
from planner.cli import main
from planner.errors import ConfigError, UnknownNameError
from planner.workload.calibration import calibration_file, load_calibrations
from planner.workload.estimate_types import PAUSES_PHASE
from planner.workload.training import train_facts

JOB = ("gpt2-finetune", "A100-80GB", 1)


def steps_hours(est: planner.Estimate) -> float:
    return est.time_breakdown_hours["training steps"]


def tokens(name: str) -> float:
    spec = planner.load_workload(name)
    return spec.samples_per_piece * spec.pieces * spec.seq_len


def test_a_measured_run_scales_the_training_steps_of_similar_jobs() -> None:
    before = planner.estimate(*JOB)
    estimated = tokens(JOB[0]) / (steps_hours(before) * 3600)
    record = planner.calibrate(*JOB, measured_tokens_per_second=estimated / 2)
    assert record["factor"] == pytest.approx(0.5)
    assert record["estimated_tokens_per_s"] == pytest.approx(estimated)
    after = planner.estimate(*JOB)
    assert steps_hours(after) == pytest.approx(2 * steps_hours(before))
    # the pauses a run carries are a share of its steps' time: they scale with them
    pauses_before = before.time_breakdown_hours[PAUSES_PHASE]
    assert pauses_before > 0
    assert after.time_breakdown_hours[PAUSES_PHASE] == pytest.approx(2 * pauses_before)
    scaled = ("training steps", PAUSES_PHASE)
    others = sum(v for k, v in after.time_breakdown_hours.items() if k not in scaled)
    assert after.wall_hours == pytest.approx(
        2 * (steps_hours(before) + pauses_before) + others, rel=1e-9
    )
    assert any(a.startswith("calibrated from your run of") for a in after.assumptions)
    # another GPU, or another software stack, is not that job
    h100 = planner.estimate(JOB[0], "H100", 1)
    assert not any(a.startswith("calibrated") for a in h100.assumptions)
    other = planner.with_training(JOB[0], framework="pytorch-fsdp")
    plain = planner.estimate(other, "A100-80GB", 1)
    assert not any(a.startswith("calibrated") for a in plain.assumptions)


def test_quotes_use_the_calibration_too() -> None:
    request = {"workload": JOB[0], "deadline_hours": 48, "gpus": ("A100-80GB",), "top": 1}
    fast = planner.quote(**request).plans[0]
    planner.calibrate(*JOB, measured_tokens_per_second=1.0e5 / 3)
    slow = planner.quote(**request).plans[0]
    assert slow.wall_hours > fast.wall_hours


def test_a_step_time_is_the_global_batch_per_step() -> None:
    spec = planner.load_workload(JOB[0])
    step_s = 1.5
    record = planner.calibrate(*JOB, measured_step_seconds=step_s)
    per_step = train_facts(spec).global_batch * spec.seq_len
    assert record["measured_tokens_per_s"] == pytest.approx(per_step / step_s)


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({}, "give one of"),
        ({"measured_tokens_per_second": 1.0, "measured_step_seconds": 1.0}, "not both"),
        ({"measured_tokens_per_second": 1e12}, "apart"),
        ({"measured_tokens_per_second": -5.0}, "positive"),
        ({"measured_step_seconds": 0.0}, "positive"),
    ],
)
def test_bad_measurements_are_refused(kwargs: dict[str, float], needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        planner.calibrate(*JOB, **kwargs)
    assert load_calibrations() == ()


def test_list_and_remove_on_the_command_line(tmp_path: Path) -> None:
    run = CliRunner().invoke
    args = ["calibrate", "record", JOB[0], "--gpu", JOB[1], "--measured-tokens-per-second", "80000"]
    assert run(main, args).exit_code == 0
    listed = run(main, ["calibrate", "list", "--format", "json"])
    assert '"id": "c1"' in listed.stdout
    missing = run(main, ["calibrate", "remove", "c9"])
    assert missing.exit_code == 2 and "did you mean c1" in missing.stderr
    assert run(main, ["calibrate", "remove", "c1"]).exit_code == 0
    assert load_calibrations() == ()
    with pytest.raises(UnknownNameError):
        planner.remove_calibration("c1")


def test_the_file_is_written_whole_and_a_broken_one_is_named() -> None:
    planner.calibrate(*JOB, measured_tokens_per_second=80000)
    path = calibration_file()
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == []
    path.write_text("- [not, a, record]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"calibration\.yaml"):
        planner.estimate(*JOB)


def test_a_run_measured_against_an_earlier_estimate_is_kept_but_not_applied() -> None:
    # its factor is measured over the *then* estimated throughput: once the estimate of the same
    # run moved (revision 2: the eager host time), applying it would mis-correct
    before = planner.estimate(*JOB)
    half = tokens(JOB[0]) / (steps_hours(before) * 3600) / 2
    planner.calibrate(*JOB, measured_tokens_per_second=half)
    path = calibration_file()
    rows = [
        {k: v for k, v in row.items() if k != "estimator_revision"}  # as written before revisions
        for row in yaml.safe_load(path.read_text(encoding="utf-8"))
    ]
    path.write_text(yaml.safe_dump(rows, sort_keys=False), encoding="utf-8")
    (old,) = load_calibrations()
    assert old.estimator_revision == 1 and not old.applies
    assert [row["applies"] for row in planner.calibrations()] == [False]
    after = planner.estimate(*JOB)
    assert steps_hours(after) == pytest.approx(steps_hours(before))
    (note,) = [a for a in after.assumptions if a.startswith("not calibrated")]
    assert old.id in note and "record it again" in note
    # recorded again, it applies
    planner.calibrate(*JOB, measured_tokens_per_second=half)
    assert [row["applies"] for row in planner.calibrations()] == [False, True]
    assert any(a.startswith("calibrated from") for a in planner.estimate(*JOB).assumptions)
