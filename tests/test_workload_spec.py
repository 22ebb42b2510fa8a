"""Workload files: the schema accepts the issue's example, rejects mistakes with useful errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from planner.config.scenarios import scenarios_dir
from planner.errors import ConfigError, UnknownNameError
from planner.workload import list_workloads, load_workload, parse_workload
from planner.workload.spec import Kind, workload_names

ISSUE_EXAMPLE = """
name: llama-2-7b-pretrain
kind: pretrain            # pretrain | finetune | inference
model:                    # a preset name (model: gpt2-xl) or explicit fields
  params: 6.74e9
  layers: 32
  hidden: 4096
  heads: 32
  seq_len: 4096
  vocab: 32000
data:
  tokens: 2.0e12          # total tokens processed, epochs included
training:
  precision: bf16         # fp32 | fp16 | bf16 | fp8
  optimizer: adamw        # adamw | adamw-8bit | sgd | lion | adafactor
  method: full            # full | lora | qlora
  global_batch_tokens: 4.0e6   # optional
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "job.yaml"
    path.write_text(text)
    return path


def test_issue_example_is_accepted_as_written(tmp_path: Path) -> None:
    spec = load_workload(str(_write(tmp_path, ISSUE_EXAMPLE)))
    assert spec.name == "llama-2-7b-pretrain"
    assert spec.kind is Kind.PRETRAIN
    assert spec.model.params == 6.74e9  # "6.74e9" is text to YAML 1.1; the schema converts it
    assert spec.tokens_per_piece == 2.0e12
    assert spec.train.global_batch_tokens == 4.0e6
    assert spec.pieces == 1


def test_preset_fills_the_model_and_explicit_fields_win() -> None:
    spec = parse_workload(
        {
            "name": "x",
            "kind": "finetune",
            "model": {"preset": "gpt2-xl", "seq_len": 512},
            "data": {"tokens": 1e6},
        }
    )
    assert spec.model.layers == 48 and spec.model.hidden == 1600 and spec.model.heads == 25
    assert spec.seq_len == 512


def _preset_model(**model: object) -> dict[str, object]:
    return {"name": "x", "kind": "finetune", "model": model, "data": {"tokens": 1e6}}


def test_a_preset_with_a_changed_shape_carries_its_params_over_to_the_new_shape() -> None:
    # Llama 2 7B: per layer 4 x 4096^2 attention + 3 x 4096 x 11008 MLP = 202,375,168, the
    # untied embedding and head 2 x 32,000 x 4096 = 262,144,000: 6,738,149,376 in the shape.
    # With 64 layers: 13,214,154,752, and the preset's 6.74e9 scales by the same ratio.
    per_layer = 4 * 4096**2 + 3 * 4096 * 11008
    embedding = 2 * 32000 * 4096
    ratio = (64 * per_layer + embedding) / (32 * per_layer + embedding)
    spec = parse_workload(_preset_model(preset="llama-2-7b", layers=64))
    assert spec.model.layers == 64
    assert spec.model.params == pytest.approx(6.74e9 * ratio, rel=1e-9)
    # a shape-neutral change keeps the preset's count; an explicit count wins
    assert parse_workload(_preset_model(preset="llama-2-7b", seq_len=8192)).model.params == 6.74e9
    given = parse_workload(_preset_model(preset="llama-2-7b", layers=64, params=13e9))
    assert given.model.params == 13e9


@pytest.mark.parametrize(
    "change",
    [
        {"layers": 16},
        # review: more experts, or more of them a token, change the total and active counts as
        # surely as the shape does; both kept Mixtral's 46.7B / 12.9B without a word
        {"experts": 16},
        {"experts_per_token": 4},
    ],
    ids=["layers", "experts", "experts-per-token"],
)
def test_a_mixture_of_experts_preset_with_a_changed_shape_needs_its_counts(
    change: dict[str, object],
) -> None:
    with pytest.raises(ConfigError) as info:
        parse_workload(_preset_model(preset="mixtral-8x7b", **change))
    assert info.value.key_path == "model.params"
    assert "active_params" in str(info.value) and next(iter(change)) in str(info.value)
    counts = {"params": 90e9, "active_params": 24e9}
    assert (
        parse_workload(_preset_model(preset="mixtral-8x7b", **change, **counts)).model.params
        == 90e9
    )


def test_samples_times_epochs_times_tokens_per_sample() -> None:
    spec = parse_workload(
        {
            "name": "x",
            "kind": "finetune",
            "model": "bert-base",
            "data": {"samples": 1000, "epochs": 3, "tokens_per_sample": 128},
        }
    )
    assert spec.tokens_per_piece == 1000 * 3 * 128
    assert spec.samples_per_piece == 3000


def test_trials_is_an_alias_for_pieces() -> None:
    spec = parse_workload(
        {"name": "x", "kind": "finetune", "model": "gpt2", "trials": 20, "data": {"tokens": 1e6}}
    )
    assert spec.pieces == 20


@pytest.mark.parametrize(
    ("raw", "key_path", "text", "hint"),
    [
        # misspelt top-level key
        ({"trainng": {}}, "trainng", "unknown key", "did you mean 'training'?"),
        # misspelt nested key
        (
            {"training": {"optimiser": "adamw"}},
            "training.optimiser",
            "unknown key",
            "did you mean 'optimizer'?",
        ),
        # bad enum value
        (
            {"training": {"precision": "bf61"}},
            "training.precision",
            "is not one of",
            "did you mean 'bf16'?",
        ),
        # wrong type
        ({"data": {"tokens": "lots"}}, "data.tokens", "expected a number, got 'lots'", None),
        ({"pieces": 2.5}, "pieces", "expected a whole number", None),
    ],
)
def test_schema_errors_name_the_key_path_and_a_fix(
    raw: dict, key_path: str, text: str, hint: str | None
) -> None:
    base = {"name": "x", "kind": "pretrain", "model": "gpt2", "data": {"tokens": 1e9}}
    merged = {**base, **raw}
    if "data" in raw:
        merged["data"] = raw["data"]
    with pytest.raises(ConfigError) as err:
        parse_workload(merged, file="job.yaml")
    assert err.value.key_path == key_path
    assert err.value.file == "job.yaml"
    assert text in str(err.value)
    if hint:
        assert hint in str(err.value)


def test_unknown_preset_suggests_the_nearest() -> None:
    with pytest.raises(UnknownNameError) as err:
        parse_workload(
            {"name": "x", "kind": "pretrain", "model": "gpt-2-xl", "data": {"tokens": 1}}
        )
    assert "gpt2-xl" in str(err.value)


def test_missing_data_for_training_is_reported() -> None:
    with pytest.raises(ConfigError) as err:
        parse_workload({"name": "x", "kind": "pretrain", "model": "gpt2"}, file="f.yaml")
    assert err.value.key_path == "data"


def test_transformer_without_shape_is_rejected() -> None:
    with pytest.raises(ConfigError) as err:
        parse_workload(
            {"name": "x", "kind": "pretrain", "model": {"params": 1e9}, "data": {"tokens": 1}}
        )
    assert err.value.key_path == "model.layers"


def test_serving_needs_hours() -> None:
    with pytest.raises(ConfigError) as err:
        parse_workload(
            {
                "name": "x",
                "kind": "inference",
                "model": "llama-2-7b",
                "inference": {"tokens_per_s": 10},
            }
        )
    assert err.value.key_path == "inference.hours"


def test_unknown_workload_name_suggests() -> None:
    with pytest.raises(UnknownNameError) as err:
        load_workload("gpt2-xl-finetun")
    assert "gpt2-xl-finetune" in str(err.value)
    assert err.value.exit_code == 2


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_workload(str(tmp_path / "nope.yaml"))


def test_invalid_yaml_names_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "name: [unclosed\n")
    with pytest.raises(ConfigError) as err:
        load_workload(str(path))
    assert str(path) in str(err.value)


def test_scenarios_dir_is_the_checkout() -> None:
    assert (scenarios_dir() / "workloads" / "gpt2-xl-finetune.yaml").is_file()


REQUIRED = [
    "gpt2-xl-finetune",
    "gpt2-finetune",
    "gpt2-pretrain",
    "gpt2-medium-finetune",
    "gpt2-medium-pretrain",
    "gpt2-large-finetune",
    "gpt2-large-pretrain",
    "gpt2-xl-pretrain",
    "bert-base-finetune",
    "bert-large-finetune",
    "resnet18-imagenet",
    "resnet50-imagenet",
    "yolov5s-coco",
    "unet3d-kits19",
    "stable-diffusion-finetune",
    *[
        f"llama-2-{s}-{v}"
        for s in ("7b", "13b", "70b")
        for v in ("pretrain", "finetune", "lora", "qlora")
    ],
    "llm-serving-7b",
    "llm-serving-70b",
]


def test_library_covers_the_issue_list() -> None:
    names = set(workload_names())
    assert set(REQUIRED) <= names


def test_every_library_workload_loads_and_cites_sources() -> None:
    specs = list_workloads()
    assert len(specs) >= len(REQUIRED)
    for spec in specs:
        assert spec.sources, f"{spec.name} cites no source"
        assert spec.description
        raw = yaml.safe_load((scenarios_dir() / "workloads" / f"{spec.name}.yaml").read_text())
        assert raw["name"] == spec.name  # file name and workload name agree


def test_headline_workload_is_gpt2_xl_full_finetune_with_adamw() -> None:
    spec = load_workload("gpt2-xl-finetune")
    assert spec.kind is Kind.FINETUNE
    assert spec.model.params == pytest.approx(1.5576e9, rel=0.01)
    assert spec.train.method.value == "full" and spec.train.optimizer.value == "adamw"
    assert 1e8 <= spec.tokens_per_piece <= 1e9


def test_a_preset_given_its_own_shape_values_is_the_preset() -> None:
    # a file that spells out the preset's own values changes nothing, mixture of experts or not
    same = parse_workload(_preset_model(preset="mixtral-8x7b", layers=32, experts=8))
    assert same.model.params == parse_workload(_preset_model(preset="mixtral-8x7b")).model.params
    assert parse_workload(_preset_model(preset="llama-2-7b", layers=32)).model.params == 6.74e9
