"""Bad input the seventh sweep found: each case here was silently accepted (``PLANNER_DATA_DIR="~/x"``
made a folder named ``~``, an owned entry of 0 machines, a manifest whose created_at is
"yesterday", 8 GPUs at 3 to a node, a config.json of a model_type nobody knows), or refused
without a fix or with a wrong one (an empty workload file, ``lora_rank: 1e9`` told to "write
1.5e9", ``-o ""`` read as the current folder).

The product rule each test pins: bad input gets a clear error naming the file, the field and a
fix, a non-zero exit and no traceback, on the command line and in the library.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import planner
from planner.errors import ConfigError, DataDirError, SnapshotError
from planner.workload.estimate_types import Topology
from tests.cli_checks import assert_clean_error, invoke
from tests.conftest import edited_snapshot

ROOT = Path(__file__).resolve().parent.parent
BUDGET = ROOT / "scenarios" / "budgets" / "2027-ml-platform.yaml"
HARDWARE = ROOT / "scenarios" / "hardware" / "8xh100-hgx.yaml"


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path / "data"))


# --- PLANNER_DATA_DIR with a quoted ~ ---------------------------------------------------------------

RECORD = ("calibrate", "record", "gpt2-xl-finetune", "--gpu", "A100-80GB")


def test_a_quoted_tilde_in_the_data_dir_is_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """was: ``PLANNER_DATA_DIR="~/x"`` (the shell leaves a quoted ~ alone) wrote the calibrations
    to ./~/x/calibration.yaml, a folder named ~ under the current one."""
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    result = invoke(
        *RECORD, "--measured-tokens-per-second", "5200", env={"PLANNER_DATA_DIR": "~/x"}
    )
    assert result.exit_code == 0, result.output
    assert (home / "x" / "calibration.yaml").is_file()
    assert not (work / "~").exists()


def test_a_tilde_of_no_user_in_the_data_dir_is_refused(tmp_path: Path) -> None:
    result = invoke("offers", "--limit", "1", env={"PLANNER_DATA_DIR": "~no-such-user-x/p"})
    assert_clean_error(result, "PLANNER_DATA_DIR", "~no-such-user-x", "full path")
    result = invoke("calibrate", "list", env={"PLANNER_DATA_DIR": "~no-such-user-x/p"})
    assert_clean_error(result, "PLANNER_DATA_DIR", "full path")


def test_a_blank_data_dir_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """was: exit 0, the calibrations written under a folder named "   " in the current one."""
    monkeypatch.chdir(tmp_path)
    result = invoke(
        *RECORD, "--measured-tokens-per-second", "5200", env={"PLANNER_DATA_DIR": "   "}
    )
    assert_clean_error(result, "PLANNER_DATA_DIR", "blank", "unset it")
    assert not (tmp_path / "   ").exists()


def test_a_tilde_of_no_user_in_the_library(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_DATA_DIR", "~no-such-user-x/p")
    with pytest.raises(DataDirError, match="PLANNER_DATA_DIR"):
        planner.calibrations()


# --- an owned entry of 0 machines in a budget file -------------------------------------------------


def _budget(tmp_path: Path, old: str, new: str) -> Path:
    text = BUDGET.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "budget.yaml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def test_an_owned_entry_of_no_machines_is_refused(tmp_path: Path) -> None:
    """was: exit 0, an owned fleet of no machines planned (it costs nothing and runs nothing)."""
    path = _budget(tmp_path, "machines: 2, utilization", "machines: 0, utilization")
    result = invoke("budget", str(path), "--no-sensitivity")
    assert_clean_error(
        result,
        "budget.yaml",
        "classes[1].owned[0].machines",
        "0 machines owned",
        "remove the entry",
    )


def test_an_owned_entry_of_no_machines_in_the_library(tmp_path: Path) -> None:
    path = _budget(tmp_path, "machines: 2, utilization", "machines: 0, utilization")
    with pytest.raises(ConfigError, match="0 machines owned") as caught:
        planner.budget(str(path), sensitivity=False)
    assert caught.value.key_path == "classes[1].owned[0].machines"


# --- a hand-edited snapshot manifest ----------------------------------------------------------------


def _second_entry(m: dict[str, Any]) -> None:
    m["providers"].append(dict(m["providers"][0]))


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        # was: loaded; the newest snapshot is picked by comparing created_at as text
        (lambda m: m.update(created_at="yesterday"), "created_at 'yesterday' is not a time"),
        (lambda m: m.update(created_at=5), "created_at is not text: 5"),
        (lambda m: m.update(snapshot_id=7), "snapshot_id is not text: 7"),
        # was: loaded, a row count of text or below zero
        (lambda m: m["providers"][0].update(rows="1"), "providers[0].rows '1' is not a whole"),
        (lambda m: m["providers"][0].update(rows=-1), "providers[0].rows -1 is not a whole"),
        # was: loaded, the provider's date range backwards
        (
            lambda m: m["providers"][0].update(as_of_newest="2020-01-01"),
            "providers[0].as_of_newest '2020-01-01' is before its as_of",
        ),
        # was: loaded twice, each offer listed twice
        (_second_entry, "providers[1]: provider 'aws' is listed twice"),
    ],
    ids=["created-text", "created-number", "id-number", "rows-text", "rows-negative",
         "dates-backwards", "provider-twice"],
)  # fmt: skip
def test_a_hand_edited_manifest_names_the_key(
    tmp_path: Path, change: Callable[[dict[str, Any]], object], reason: str
) -> None:
    snapshot = edited_snapshot(tmp_path / "snapshots", change)
    result = invoke("offers", "--snapshot", str(snapshot), "--format", "json")
    assert_clean_error(
        result, "manifest.json", reason, "planner prices refresh", exit_code=1, quiet_stdout=True
    )


def test_a_hand_edited_manifest_in_the_data_dir_is_skipped_with_its_key_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """In the pricing cache (no --snapshot) the damaged snapshot is passed over for the bundled
    one, with a warning (the log, on stderr) naming the file and the key."""
    data = tmp_path / "data"
    edited_snapshot(data / "snapshots", lambda m: m.update(created_at="yesterday"))
    with caplog.at_level(logging.WARNING, logger="planner.catalog.store"):
        result = invoke("offers", "--limit", "1", "--format", "json")
    assert result.exit_code == 0, result.output
    assert "manifest.json" in caplog.text and "created_at 'yesterday'" in caplog.text
    assert json.loads(result.stdout)


def test_a_hand_edited_manifest_in_the_library(tmp_path: Path) -> None:
    snapshot = edited_snapshot(tmp_path / "snapshots", lambda m: m["providers"][0].update(rows="x"))
    with pytest.raises(SnapshotError, match=r"providers\[0\]\.rows"):
        planner.offers(snapshot_dir=snapshot)


# --- a config.json of an unknown model_type ----------------------------------------------------------

LLAMA_SHAPE = {
    "hidden_size": 4096,
    "intermediate_size": 11008,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "vocab_size": 32000,
    "max_position_embeddings": 4096,
}


def _config(tmp_path: Path, **extra: Any) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**extra, **LLAMA_SHAPE}), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("extra", "needles"),
    [
        # a typo: was read as a plain decoder without a word, a third fewer MLP weights
        ({"model_type": "lama"}, ("model_type 'lama'", "did you mean model_type 'llama'?")),
        ({"model_type": "frobnicator"}, ("model_type 'frobnicator'", "set model_type to")),
        ({}, ("no model_type", "set model_type to")),
    ],
    ids=["typo", "unknown", "missing"],
)
def test_a_config_json_of_an_unknown_family_warns(
    tmp_path: Path,
    extra: dict[str, str],
    needles: tuple[str, ...],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The warning is a log record at WARNING, which the command line prints on stderr."""
    path = _config(tmp_path, **extra)
    with caplog.at_level(logging.WARNING, logger="planner.workload.hf_config"):
        result = invoke("estimate", "--model", str(path), "--tokens", "5M", "--gpu", "H100")
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    for needle in (str(path), "read as a plain decoder", *needles):
        assert needle in caplog.text, caplog.text
    assert "model_type" not in result.stdout


def test_a_config_json_of_a_known_family_does_not_warn(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="planner.workload.hf_config"):
        result = invoke(
            "estimate", "--model", str(_config(tmp_path, model_type="llama")), "--tokens", "5M",
            "--gpu", "H100",
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "model_type" not in caplog.text


def test_a_config_json_of_an_unknown_family_warns_in_the_library(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _config(tmp_path, model_type="lama")
    with caplog.at_level(logging.WARNING, logger="planner.workload.hf_config"):
        planner.workload_from_facts(str(path), tokens=5e6)
    assert "did you mean model_type 'llama'?" in caplog.text


# --- GPUs per node that leave a node partly filled ---------------------------------------------------


def test_a_count_that_does_not_fill_its_nodes_is_refused() -> None:
    """was: exit 0, 8 GPUs at 3 a node estimated as nodes of 3, 3 and 2."""
    result = invoke(
        "estimate", "gpt2-xl-finetune", "--gpu", "H100", "--count", "8", "--gpus-per-node", "3"
    )
    assert_clean_error(
        result, "--gpus-per-node", "8 GPUs do not fill nodes of 3", "use 2 GPUs per node",
        "multiple of 3 (6 or 9)", quiet_stdout=True,
    )  # fmt: skip


def test_a_count_that_fills_its_nodes_or_the_default_layout_still_runs() -> None:
    ok = invoke(
        "estimate", "gpt2-xl-finetune", "--gpu", "H100", "--count", "8", "--gpus-per-node", "4"
    )
    assert ok.exit_code == 0, ok.output
    # the default of up to 8 a node, the last one partly filled, as without a topology
    default = invoke(
        "estimate", "gpt2-xl-finetune", "--gpu", "H100", "--count", "12", "--fabric", "ethernet"
    )
    assert default.exit_code == 0, default.output
    # a rack-scale NVLink domain filled in part: MLPerf's 512 GB300 over 8 NVL72 racks
    racks = invoke(
        "estimate", "llama-2-7b-pretrain", "--gpu", "GB300", "--count", "512",
        "--gpus-per-node", "72",
    )  # fmt: skip
    assert racks.exit_code == 0, racks.output


def test_a_count_that_does_not_fill_its_nodes_in_the_library() -> None:
    topology = Topology(gpus_per_node=3, interconnect="nvswitch", fabric="infiniband")
    with pytest.raises(ConfigError, match="do not fill nodes of 3") as caught:
        planner.estimate("gpt2-xl-finetune", "H100", 8, topology=topology)
    assert caught.value.key_path == "gpus_per_node"


# --- a file that is no mapping of keys ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("", "is empty"),  # was: "expected a mapping of keys to values at the top level", no fix
        ("# only a comment\n", "is empty"),
        ("- gpu: H100\n  machines: 1\n", "is a YAML list"),
        ("just text\n", "holds plain text (9 characters, not shown"),
    ],
    ids=["empty", "comment", "list", "text"],
)
@pytest.mark.parametrize(
    ("command", "kind", "fix"),
    [
        (("tco", "--hardware", "{path}", "--no-cloud"), "hardware", "scenarios/hardware"),
        (("budget", "{path}"), "budget", "scenarios/budgets"),
        (("estimate", "{path}", "--gpu", "H100"), "workload", "planner workloads new"),
        (("build", "-w", "{path}", "--budget", "10000"), "workload", "planner workloads new"),
    ],
    ids=["hardware", "budget", "workload", "build"],
)
def test_a_file_that_is_no_mapping_says_what_it_is(
    tmp_path: Path, text: str, what: str, command: tuple[str, ...], kind: str, fix: str
) -> None:
    path = tmp_path / "file.yaml"
    path.write_text(text, encoding="utf-8")
    result = invoke(*(part.format(path=path) for part in command))
    assert_clean_error(result, "file.yaml", what, f"a {kind} file is a mapping of keys", fix)


def test_a_file_that_is_no_mapping_in_the_library(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text("- name: a\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="is a YAML list") as caught:
        planner.load_workload(str(path))
    assert caught.value.file is not None and "w.yaml" in caught.value.file


# --- numbers in a file --------------------------------------------------------------------------------


def test_a_whole_number_with_an_exponent_gets_its_digits(tmp_path: Path) -> None:
    """was: "expected a whole number, got '1e9'" with "write a plain number, e.g. 1.5e9": the form
    just refused (YAML 1.1 reads an exponent without a decimal point as text)."""
    path = tmp_path / "w.yaml"
    path.write_text(
        "name: a\nkind: finetune\nmodel: gpt2-xl\ndata:\n  tokens: 3e8\n"
        "training:\n  method: lora\n  lora_rank: 1e1\n",
        encoding="utf-8",
    )
    result = invoke("estimate", str(path), "--gpu", "H100")
    assert_clean_error(result, "w.yaml", "training.lora_rank", "write 10: a whole number")
    assert "1.5e9" not in result.stderr


def test_a_money_key_with_a_currency_sign_gets_the_number(tmp_path: Path) -> None:
    """was: "write a plain number, e.g. 1.5e9" for capex_usd: "$300,000"."""
    text = HARDWARE.read_text(encoding="utf-8")
    path = tmp_path / "hw.yaml"
    path.write_text(
        "\n".join(
            'capex_usd: "$300,000"' if line.startswith("capex_usd:") else line
            for line in text.splitlines()
        ),
        encoding="utf-8",
    )
    result = invoke("tco", "--hardware", str(path), "--no-cloud")
    assert_clean_error(result, "hw.yaml", "capex_usd", "write 300000 alone")
    assert "1.5e9" not in result.stderr


# --- a blank output file -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "option", "example"),
    [
        # was: "cannot tell the report format from '.'"
        (("quote", "--workload", "gpt2-xl-finetune", "--deadline", "24h", "--report", ""),
         "--report", "report.html"),
        (("report", "tco", "--hardware", "8xh100-hgx", "-o", " "), "--output", "report.html"),
        # was: "the hardware file is YAML, and '.' names another kind of file", "name it .yaml"
        (("build", "-w", "gpt2-xl-finetune", "--budget", "10000", "-o", ""), "--output",
         "machine.yaml"),
    ],
    ids=["quote-report", "report-output", "build-output"],
)  # fmt: skip
def test_a_blank_output_file_is_refused(
    command: tuple[str, ...], option: str, example: str, tmp_path: Path
) -> None:
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = invoke(*command)
    finally:
        os.chdir(cwd)
    assert_clean_error(result, option, "is blank", example, quiet_stdout=True)
    assert "'.'" not in result.stderr


# --- a GPU of the wrong type in Python -----------------------------------------------------------------


def test_a_gpu_that_is_no_name_gets_a_hint() -> None:
    """was: "expected a GPU name or GpuSpec, got None" and no fix."""
    with pytest.raises(ConfigError, match="expected a GPU name") as caught:
        planner.estimate("gpt2-xl-finetune", None, 1)
    assert caught.value.hint is not None and "H100-SXM" in caught.value.hint


# --- a GPU name one slip away from an alias ----------------------------------------------------------


def test_a_slip_of_an_alias_suggests_the_alias() -> None:
    """was: "H100-SMX" got "did you mean H100 or H100-NVL or V100S?", the canonical names only, so
    the spelling the user was after (the H100's alias H100-SXM) was never offered."""
    result = invoke("estimate", "gpt2-finetune", "--gpu", "H100-SMX")
    assert_clean_error(result, "--gpu", "unknown GPU 'H100-SMX'", "did you mean H100-SXM")
    with pytest.raises(ConfigError) as caught:
        planner.estimate("gpt2-finetune", "A100-SMX4-80GB", 1)
    assert "did you mean A100-SXM4-80GB" in (caught.value.hint or "")
    # one suggestion a GPU: its best spelling
    hint = invoke("estimate", "gpt2-finetune", "--gpu", "RTX409").output
    assert hint.count("RTX4090 ") + hint.count("RTX4090?") == 1
