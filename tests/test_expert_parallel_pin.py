"""A pinned expert-parallel size is checked against the model it splits (issue 14)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli import main
from planner.errors import ConfigError
from planner.workload import parse_workload


def _raw(model: str, expert: int) -> dict[str, object]:
    return {
        "name": "x",
        "kind": "finetune",
        "model": model,
        "data": {"tokens": 1e9},
        "training": {"parallelism": {"expert": expert}},
    }


def test_a_dense_model_has_no_experts_to_split() -> None:
    with pytest.raises(ConfigError, match="this model has none") as err:
        parse_workload(_raw("gpt2-xl", 4))
    assert err.value.key_path == "training.parallelism.expert"


def test_the_expert_groups_must_be_equal() -> None:
    # Mixtral 8x7B: 8 experts split into groups of 8 / EP
    with pytest.raises(ConfigError, match="does not divide the 8 experts; use a divisor of 8"):
        parse_workload(_raw("mixtral-8x7b", 3))
    assert parse_workload(_raw("mixtral-8x7b", 4)).train.parallelism.expert == 4


def test_the_cli_names_the_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(
        "name: x\nkind: finetune\nmodel: mixtral-8x7b\ndata: {tokens: 1e9}\n"
        "training: {parallelism: {expert: 3}}\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["estimate", str(path), "--gpu", "H100", "--count", "8"])
    assert result.exit_code == 2
    assert "w.yaml: training.parallelism.expert: expert parallel 3" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("key", ["overlap_all_to_all", "dispatch_per_node"])
def test_all_to_all_settings_need_experts(key: str) -> None:
    raw = _raw("gpt2-xl", 1)
    raw["training"] = {key: True}
    with pytest.raises(ConfigError, match="this model has none") as err:
        parse_workload(raw)
    assert err.value.key_path == f"training.{key}"
    moe = _raw("mixtral-8x7b", 8)
    moe["training"] = {key: True}
    assert getattr(parse_workload(moe).train, key) is True


def test_an_inference_workload_takes_no_training_section_and_the_other_way_round() -> None:
    serve = {
        "name": "x",
        "kind": "inference",
        "model": "llama-2-7b",
        "inference": {"requests_per_s": 1, "hours": 1},
        "training": {"precision": "bf16"},
    }
    with pytest.raises(ConfigError, match="this is an inference workload") as err:
        parse_workload(serve)
    assert err.value.key_path == "training"
    train = {**_raw("gpt2-xl", 1), "training": {}, "inference": {"tokens": 1e9}}
    with pytest.raises(ConfigError, match="this is a training workload") as err:
        parse_workload(train)
    assert err.value.key_path == "inference"
