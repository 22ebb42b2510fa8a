"""Bad input the eleventh sweep found: ``--snapshot`` (and ``snapshot_dir=``) naming a folder that is
no snapshot exited 1, as a corrupt snapshot does, not 2 as bad input; ``workloads new job.yaml``
named the workload "job.yaml" where a file was meant, and without --model gave no example; and
``tco --utilization 60%`` offered "60 where the option takes a percentage, 0.6 where it takes a
fraction" for an option that knows it takes a fraction.

The product rule each test pins: bad input gets a clear error naming the field and a fix, a
non-zero exit (2 for the user's input) and no traceback, on the command line and in the library.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

import planner
from planner.errors import ConfigError, NotASnapshotError, SnapshotError
from tests.cli_checks import assert_clean_error, invoke


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path / "data"))


# --- a folder named as a snapshot that is none ----------------------------------------------------


def _not_a_snapshot(tmp_path: Path) -> Path:
    folder = tmp_path / "downloads"
    folder.mkdir()
    (folder / "notes.txt").write_text("not prices\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    "command",
    [("offers",), ("quote", "--workload", "gpt2-finetune", "--deadline", "24h")],
    ids=["offers", "quote"],
)
def test_a_folder_without_a_manifest_is_bad_input(tmp_path: Path, command: tuple[str, ...]) -> None:
    folder = _not_a_snapshot(tmp_path)
    result = invoke(*command, "--snapshot", str(folder))
    assert_clean_error(result, "not a price snapshot folder", "manifest.json", "planner prices")


def test_the_library_raises_it_as_a_config_error(tmp_path: Path) -> None:
    folder = _not_a_snapshot(tmp_path)
    with pytest.raises(ConfigError, match="not a price snapshot folder") as caught:
        planner.offers(snapshot_dir=folder)
    # still a snapshot error for code that catches those
    assert isinstance(caught.value, SnapshotError)
    assert isinstance(caught.value, NotASnapshotError)
    assert caught.value.exit_code == 2


# --- workloads new given a file name -------------------------------------------------------------


def test_a_yaml_name_names_the_workload_by_its_stem() -> None:
    result = invoke("workloads", "new", "job.yaml", "--model", "gpt2", "--tokens", "50M")
    assert result.exit_code == 0, result.output
    written = yaml.safe_load(result.stdout)
    assert written["name"] == "job"
    # the warning goes to stderr, with the way to save the file
    assert "is a file name" in result.stderr and "> job.yaml" in result.stderr
    assert "warning" not in result.stdout


def test_without_a_model_the_error_gives_a_whole_command() -> None:
    result = invoke("workloads", "new", "job.yaml")
    assert_clean_error(result, "give --model and --tokens")
    command = re.search(r"`(planner workloads new [^`]*)`", result.output)
    assert command is not None, result.output
    assert command.group(1) == "planner workloads new job --model gpt2 --tokens 50M > job.yaml"
    # and that command works
    args = command.group(1).split(" > ")[0].split()[1:]
    assert invoke(*args).exit_code == 0


# --- a percentage typed for a fraction ------------------------------------------------------------


def test_a_percentage_for_a_fraction_gets_the_fraction() -> None:
    result = invoke("tco", "--hardware", "8xh100-hgx", "--utilization", "60%")
    assert_clean_error(result, "--utilization", "write 0.6", "fraction")
    assert "where the option takes a percentage" not in result.output


@pytest.mark.parametrize("option", ["--confidence", "--max-interruption"])
def test_a_percentage_option_takes_the_number_alone(option: str) -> None:
    result = invoke("quote", "--workload", "gpt2-finetune", "--deadline", "24h", option, "5%")
    assert_clean_error(result, option, "write the number alone: 5")
    assert "where it takes a fraction" not in result.output
