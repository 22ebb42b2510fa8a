"""A pinned expert-parallel size is checked against the model it splits (issue 14)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import planner
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


def _mixtral_pinned(tmp_path: Path, **pins: int) -> Path:
    path = tmp_path / "w.yaml"
    layout = ", ".join(f"{k}: {v}" for k, v in pins.items())
    path.write_text(
        "name: x\nkind: pretrain\nmodel: mixtral-8x7b\ndata: {tokens: 1e9}\n"
        "training: {framework: megatron, global_batch_tokens: 4194304, "
        f"parallelism: {{{layout}}}}}\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("tensor", [1, 2, 4])
def test_a_pinned_expert_size_counts_gpus_whatever_the_tensor_split(tensor: int) -> None:
    """Megatron Core's expert_model_parallel_size with expert tensor parallel 1: the GPUs holding
    whole experts, tensor-parallel GPUs included (was: the pin read as GPUs, shown as ranks,
    so expert: 8 beside TP2 printed EP4)."""
    raw = _raw("mixtral-8x7b", 8)
    raw["kind"] = "pretrain"
    raw["training"] = {
        "framework": "megatron",
        "global_batch_tokens": 4_194_304,
        "parallelism": {"expert": 8, "tensor": tensor},
    }
    est = planner.estimate(parse_workload(raw), "H100", 32)
    assert est.strategy.tensor_parallel == tensor
    assert est.strategy.expert_parallel == 8
    assert "EP8" in est.strategy.name
    assert "the experts split over 8 GPUs" in est.strategy.reason


def test_the_search_names_its_expert_group_in_gpus() -> None:
    # unpinned, an expert-parallel group of ranks of TP GPUs is named by the GPUs it spans
    raw = _raw("mixtral-8x7b", 1)
    raw["kind"] = "pretrain"
    raw["training"] = {"framework": "megatron", "global_batch_tokens": 4_194_304}
    est = planner.estimate(parse_workload(raw), "H100", 64)
    s = est.strategy
    assert s.expert_parallel > 1
    assert s.expert_parallel % s.tensor_parallel == 0
    assert s.expert_parallel <= 8  # inside one node of eight (the search's preference)


def test_a_count_the_expert_group_does_not_divide_is_refused_not_shrunk(tmp_path: Path) -> None:
    # was: 12 GPUs took gcd(12, 8) = 4 expert-parallel GPUs without a word
    path = _mixtral_pinned(tmp_path, expert=8)
    result = CliRunner().invoke(main, ["estimate", str(path), "--gpu", "H100", "--count", "12"])
    assert result.exit_code == 2
    assert "training.parallelism.expert: expert parallel 8 needs a multiple of 8 GPUs" in (
        result.output
    )
    assert "such as 16" in result.output
    ok = CliRunner().invoke(main, ["estimate", str(path), "--gpu", "H100", "--count", "16"])
    assert ok.exit_code == 0, ok.output
    assert "EP8" in ok.output


def test_pinned_tensor_and_expert_sizes_combine_into_one_unit(tmp_path: Path) -> None:
    # TP2 x PP2 and eight expert-parallel GPUs on each stage: 16 GPUs a copy
    path = _mixtral_pinned(tmp_path, tensor=2, pipeline=2, expert=8, context=1)
    result = CliRunner().invoke(main, ["estimate", str(path), "--gpu", "H100", "--count", "24"])
    assert result.exit_code == 2
    assert "needs a multiple of 16 GPUs; 24 GPUs cannot hold it" in result.output
    ok = CliRunner().invoke(main, ["estimate", str(path), "--gpu", "H100", "--count", "32"])
    assert ok.exit_code == 0, ok.output
    assert "TP2 + EP8 + PP2" in ok.output


def test_an_expert_group_smaller_than_a_pinned_tensor_group_is_refused() -> None:
    raw = _raw("mixtral-8x7b", 4)
    raw["training"] = {"framework": "megatron", "parallelism": {"expert": 4, "tensor": 8}}
    with pytest.raises(ConfigError, match="whole tensor-parallel groups of 8") as err:
        parse_workload(raw)
    assert err.value.key_path == "training.parallelism.expert"
    assert "pin a multiple of 8" in str(err.value)
