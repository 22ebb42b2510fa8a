"""Bad input and silently wrong results the eighteenth sweep found: a budget commitment named
``reserved-1y`` with ``term_months: 1`` was planned as a month-long 1-year rate (26% off the plan);
a calibration of one GPU's tokens per second given for an 8-GPU run was recorded, slowing every
later estimate 9.4x; 4e9 GPU-hours a month (5.5 million H100s) were planned at 265 billion USD;
``quote -w <a batch inference job> --rps 5`` dropped the job's tokens and priced a month-long
service; ``report ... -o -`` wrote a file named "-".

The product rule each test pins: bad input gets a clear error naming the field and a fix, and no
result is silently wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

import planner
from planner.cli import main
from planner.errors import ConfigError

BUDGET = Path(__file__).resolve().parent.parent / "scenarios" / "budgets" / "2027-ml-platform.yaml"


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path / "data"))


def _run(*args: str) -> Any:
    result = CliRunner().invoke(main, list(args))
    assert "Traceback" not in result.output
    return result


def _budget(tmp_path: Path, change: Any) -> Path:
    raw = yaml.safe_load(BUDGET.read_text(encoding="utf-8"))
    change(raw)
    path = tmp_path / "budget.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


@pytest.mark.parametrize(("index", "typed", "meant"), [(0, 1, 12), (1, 3, 36)])
def test_a_commitment_term_that_contradicts_its_name_is_refused(
    tmp_path: Path, index: int, typed: int, meant: int
) -> None:
    # was: reserved-1y with term_months: 1 planned a 1-year rate a month at a time, 26% off
    def change(raw: dict[str, Any]) -> None:
        raw["classes"][0]["commitments"][index]["term_months"] = typed

    path = _budget(tmp_path, change)
    with pytest.raises(ConfigError, match=f"whose name says {meant} months") as info:
        planner.budget(str(path))
    assert info.value.key_path == f"classes[0].commitments[{index}].term_months"
    assert f"did you mean term_months: {meant}?" in str(info.value)


def test_a_commitment_named_without_a_length_takes_any_term(tmp_path: Path) -> None:
    def change(raw: dict[str, Any]) -> None:
        raw["classes"][0]["commitments"][0].update(name="neocloud-contract", term_months=6)

    report = planner.budget(str(_budget(tmp_path, change)))
    assert report.plan.total_usd > 0


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (
            lambda raw: raw["classes"][0].update(
                demand_gpu_hours={"start": 4e9, "growth_per_month": 0.0}
            ),
            "classes[0].demand_gpu_hours",
        ),
        (lambda raw: raw["workloads"][0].update(gpu_hours=4e9), "workloads[0].gpu_hours"),
    ],
    ids=["class-demand", "workload"],
)
def test_demand_past_any_cluster_is_refused(tmp_path: Path, change: Any, key: str) -> None:
    # was: 4e9 GPU-hours a month (5.5 million H100s) planned at 265 billion USD, exit 0
    with pytest.raises(ConfigError, match="GPUs busy all month, past the largest clusters") as info:
        planner.budget(str(_budget(tmp_path, change)))
    assert info.value.key_path == key


def test_one_gpus_rate_given_for_a_whole_run_is_refused() -> None:
    # was: 90,000 tokens/s recorded for 8 H100s whose estimate is ~840,000: later estimates x9.4
    result = _run(
        "calibrate", "record", "gpt2-finetune", "--gpu", "H100", "--count", "8",
        "--measured-tokens-per-second", "90000",
    )  # fmt: skip
    assert result.exit_code == 2
    assert "is about one GPU's share of the estimate's" in result.output
    assert "did you mean 720,000 (8 x 90,000)?" in result.output
    assert planner.calibrations() == []


def test_a_batch_inference_job_is_not_requoted_as_a_service() -> None:
    # was: --rps turned the job of 1e9 tokens into a month-long service, without a word
    result = _run("quote", "-w", "llama-2-7b-batch-inference", "--rps", "5")
    assert result.exit_code == 2
    assert "is a batch job (a fixed amount of inference): quote it with --deadline" in (
        result.output
    )
    # and the library, which the CLI calls, says the same
    with pytest.raises(ConfigError, match="is a batch job") as info:
        planner.quote_service(workload="llama-2-7b-batch-inference", requests_per_s=5)
    assert info.value.key_path == "requests_per_s"


def test_a_report_to_dash_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # was: a file named "-" in the current folder, "report written to -"
    monkeypatch.chdir(tmp_path)
    result = _run(
        "report", "quote", "-w", "gpt2-finetune", "--deadline", "24h", "-o", "-",
        "--format", "csv",
    )  # fmt: skip
    assert result.exit_code == 2
    assert "cannot go to stdout as '-'" in result.output
    assert not (tmp_path / "-").exists()
