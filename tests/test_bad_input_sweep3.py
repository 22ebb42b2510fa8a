"""Bad input the third sweep found (the less-travelled commands: budget, build, report, prices,
offers, and the library functions behind them): each case here answered with a traceback, exit 0
on input that was wrong, or a message that named neither the field nor the fix.

The product rule each test pins: bad input gets a clear error naming the file, the field and a
fix, a non-zero exit and no traceback, on the command line and in the library.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pytest

import planner
from planner.errors import ConfigError, UnknownNameError
from planner.ownership.build import build_machines
from tests.cli_checks import assert_clean_error, invoke

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"
BUDGET = SCENARIOS / "budgets" / "2027-ml-platform.yaml"


def _budget_file(tmp_path: Path, old: str, new: str) -> Path:
    text = BUDGET.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "budget.yaml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


# --- a date that is no date ------------------------------------------------------------------


def test_an_impossible_date_in_a_file_is_named_by_its_key(tmp_path: Path) -> None:
    """was: PyYAML's ``ValueError: month must be in 1..12`` escaped the parser as a traceback
    (YAML reads 2024-13-45 as a date, and building it failed)."""
    path = _budget_file(tmp_path, "prices_as_of: 2024-01-01", "prices_as_of: 2024-13-45")
    result = invoke("budget", str(path), "--no-sensitivity")
    assert_clean_error(result, str(path), "prices_as_of", "2024-13-45", "a date like")


def test_february_30_in_a_file_is_named_by_its_key(tmp_path: Path) -> None:
    path = _budget_file(tmp_path, "prices_as_of: 2024-01-01", "prices_as_of: 2025-02-30")
    result = invoke("budget", str(path), "--no-sensitivity")
    assert_clean_error(result, "prices_as_of", "2025-02-30", "a date like")


# --- a report or hardware file written over a file the command reads --------------------------


def test_a_report_over_its_budget_file_is_refused(tmp_path: Path) -> None:
    """was: exit 0, the budget file replaced by the report (the plan it was made from gone)."""
    path = tmp_path / "budget.yaml"
    path.write_text(BUDGET.read_text(encoding="utf-8"), encoding="utf-8")
    before = path.read_bytes()
    result = invoke(
        "report", "budget", str(path), "--no-sensitivity", "--format", "markdown", "-o", str(path)
    )
    assert_clean_error(result, "--output", "BUDGET_FILE reads", "would replace it", "another file")
    assert path.read_bytes() == before


def test_a_tco_report_over_its_hardware_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "box.csv"
    path.write_text((SCENARIOS / "hardware" / "8xh100-hgx.yaml").read_text(), encoding="utf-8")
    before = path.read_bytes()
    result = invoke("tco", "--hardware", str(path), "--no-cloud", "--report", str(path))
    assert_clean_error(result, "--report", "--hardware reads", "another file")
    assert path.read_bytes() == before


def test_a_built_hardware_file_over_its_workload_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text((SCENARIOS / "workloads" / "gpt2-finetune.yaml").read_text(), encoding="utf-8")
    before = path.read_bytes()
    result = invoke("build", "-w", f"{path}:2", "-o", str(path))
    assert_clean_error(result, "--output", "--workload reads", "another file")
    assert path.read_bytes() == before


def test_a_report_to_a_name_of_no_report_format_is_refused(tmp_path: Path) -> None:
    """was: exit 0 and HTML written into report.docx (``--report`` refused the same name)."""
    target = tmp_path / "report.docx"
    result = invoke("report", "tco", "--hardware", "8xh100-hgx", "--no-cloud", "-o", str(target))
    assert_clean_error(result, "--output", "report.docx", ".html, .md or .csv", "--format")
    assert not target.exists()


def test_a_report_to_any_name_with_a_format_given_is_written(tmp_path: Path) -> None:
    """Control: ``--format`` says what to write, whatever the name."""
    target = tmp_path / "report.txt"
    result = invoke(
        "report", "tco", "--hardware", "8xh100-hgx", "--no-cloud", "--format", "markdown",
        "-o", str(target),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert target.read_text(encoding="utf-8").startswith("#")


# --- planner build -----------------------------------------------------------------------------


def test_an_absurd_machine_budget_is_refused() -> None:
    """was: exit 0, "Machines for the workloads within $1,000,000,000,000,000,052,504,...\""""
    result = invoke("build", "-w", "gpt2-finetune", "--budget", "1e300")
    assert_clean_error(result, "--budget", "from 0 to 1,000,000,000,000 USD", "e.g. 10000")


def test_the_library_refuses_a_budget_that_is_no_amount() -> None:
    spec = planner.load_workload("gpt2-finetune")
    for bad in (math.nan, "1000", -5.0):
        with pytest.raises(ConfigError, match="budget_usd: a machine budget must be"):
            build_machines([(spec, 1.0)], budget_usd=bad)


def test_a_gpu_beside_a_preset_of_another_gpu_is_refused() -> None:
    """was: exit 0, the preset's 8 x H100 priced and --gpu RTX4090 dropped without a word."""
    result = invoke("build", "-w", "gpt2-finetune", "--preset", "8xh100-hgx", "--gpu", "RTX4090")
    assert_clean_error(result, "--gpu", "8 x H100", "RTX4090", "drop --gpu")


def test_a_count_beside_a_preset_of_another_count_is_refused() -> None:
    result = invoke("build", "-w", "gpt2-finetune", "--preset", "8xh100-hgx", "--gpus", "2")
    assert_clean_error(result, "--gpus", "8 x H100", "drop --gpus")


def test_a_preset_with_its_own_gpu_still_builds() -> None:
    """Control: --gpu naming the preset's own GPU agrees with it."""
    result = invoke("build", "-w", "gpt2-finetune", "--preset", "8xh100-hgx", "--gpu", "H100")
    assert result.exit_code == 0, result.output


def test_a_gpu_the_parts_table_does_not_price_is_named() -> None:
    """was: "the parts table has none of them", naming neither the GPU nor the ones it prices."""
    result = invoke("build", "-w", "gpt2-finetune", "--gpu", "B200")
    assert_clean_error(result, "prices no B200", "RTX4090", "--gpu", exit_code=3)


# --- a blank workload name -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "where"),
    [
        (("build", "-w", ""), "--workload"),
        (("estimate", "", "--gpu", "H100"), "WORKLOAD"),
        (("estimate", "  ", "--gpu", "H100"), "WORKLOAD"),
    ],
)
def test_a_blank_workload_name_is_named(args: tuple[str, ...], where: str) -> None:
    """was: "error: .: is a directory, not a workload file" ('' read as the current folder)."""
    assert_clean_error(invoke(*args), where, "workload name is blank", "planner workloads")


def test_the_library_refuses_a_blank_workload_name() -> None:
    with pytest.raises(ConfigError, match="workload: workload name is blank"):
        planner.load_workload("")
    with pytest.raises(ConfigError, match="workload: a workload is a library name") as raised:
        planner.load_workload(None)
    assert raised.value.hint and "gpt2-xl-finetune" in raised.value.hint


# --- offer filters name the option on the command line and the field in the library -----------


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (("--gpu", "H100-SMX"), ("--gpu: unknown GPU 'H100-SMX'", "did you mean H100")),
        (("--gpu", "80GB..40GB"), ("--gpu:", "did you mean 40GB..80GB")),
        (("--gpu", "H100:0"), ("--gpu:", "from 1 to 72")),
        (("--gpu", "8xH100"), ("--gpu: unknown GPU", "did you mean H100:8")),
        (("--region", "us-est-1"), ("--region: unknown region", "us-east-1")),
        (("--provider", "aws,gcp"), ("--provider: unknown provider", "aws")),
    ],
)
def test_an_offers_filter_error_names_its_option(
    args: tuple[str, ...], needles: tuple[str, ...]
) -> None:
    """was: "error: unknown GPU 'H100-SMX'" with no option named (offers took no field labels)."""
    assert_clean_error(invoke("offers", *args), *needles)


@pytest.mark.parametrize(
    ("flt", "field"),
    [
        (lambda: planner.OfferFilter(gpus=[None]), "gpus"),
        (lambda: planner.OfferFilter(regions=[5]), "regions"),
        (lambda: planner.OfferFilter(providers=[""]), "providers"),
    ],
)
def test_a_library_filter_error_names_the_field_not_an_option(
    flt: Callable[[], object], field: str
) -> None:
    """was: ``--gpu: None is not a GPU name`` from the library, an option no caller typed."""
    with pytest.raises(ConfigError) as caught:
        flt()
    assert caught.value.key_path == field
    assert str(caught.value).startswith(f"{field}: ")


def test_a_library_gpu_filter_typo_is_an_unknown_name_at_its_field() -> None:
    with pytest.raises(UnknownNameError) as caught:
        planner.offers(planner.OfferFilter(gpus=("H100-SMX",)))
    assert caught.value.key_path == "gpus"
    assert caught.value.hint is not None and "did you mean H100" in caught.value.hint


# --- a union field given a mapping that misses a key -------------------------------------------


def test_a_growth_demand_without_its_start_names_the_missing_key(tmp_path: Path) -> None:
    """was: "demand_gpu_hours: expected a list, got {'growth_per_month': 0.04}" (another union
    branch's complaint), not the key the mapping misses."""
    path = _budget_file(
        tmp_path, "{start: 4000, growth_per_month: 0.04}", "{growth_per_month: 0.04}"
    )
    result = invoke("budget", str(path), "--no-sensitivity")
    assert_clean_error(result, "classes[0].demand_gpu_hours.start", "required key is missing")


# --- blank names where a name is the point ------------------------------------------------------


def test_a_blank_accept_changes_value_is_refused_before_any_fetch() -> None:
    """was: '' accepted as no change, and the refresh went on to refuse what it meant to let in."""
    result = invoke("prices", "refresh", "--provider", "aws", "--accept-changes", "")
    assert_clean_error(result, "--accept-changes", "names no change", "PROVIDER:REGION")


def test_a_blank_workload_name_in_a_file_is_refused(tmp_path: Path) -> None:
    """was: exit 0 and a report headed "on 1 x A100-80GB: ..." naming no workload."""
    text = (SCENARIOS / "workloads" / "llm-serving-7b.yaml").read_text(encoding="utf-8")
    path = tmp_path / "svc.yaml"
    path.write_text(text.replace("name: llm-serving-7b", "name: ''"), encoding="utf-8")
    result = invoke("estimate", str(path), "--gpu", "A100-80GB")
    assert_clean_error(result, str(path), "name: is blank", "leaving name out uses the file")


@pytest.mark.parametrize("name", ["", "   "])
def test_workloads_new_refuses_a_blank_name(name: str) -> None:
    """was: "" silently took a default name and "   " got a hint about a file there is none of."""
    result = invoke("workloads", "new", name, "--model", "gpt2", "--tokens", "1M")
    assert_clean_error(result, "NAME", "is blank: give the workload a name")
