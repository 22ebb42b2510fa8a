"""A pinned layout and the software stack agree (issue 14): a named stack that cannot run a pinned
tensor or pipeline split or ZeRO stage is refused with the stacks that can; ``auto`` picks one
that runs the pins; a model that is not a transformer is never split by layer."""

from __future__ import annotations

from typing import Any

import pytest

import planner
from planner.errors import ConfigError
from planner.workload import parse_workload
from planner.workload.frameworks import load_frameworks


def _llama(framework: str, **parallelism: int) -> dict[str, Any]:
    return {
        "name": "t",
        "kind": "finetune",
        "model": "llama-2-7b",
        "data": {"tokens": 1e7},
        "training": {"framework": framework, "parallelism": parallelism},
    }


@pytest.mark.parametrize(
    ("framework", "pin", "key"),
    [
        ("pytorch-fsdp", {"tensor": 2}, "tensor"),
        ("hf-trainer", {"pipeline": 2}, "pipeline"),
        ("pytorch-fsdp", {"zero": 1}, "zero"),
        ("llm.c", {"zero": 3}, "zero"),
    ],
)
def test_a_named_stack_refuses_a_layout_it_does_not_run(
    framework: str, pin: dict[str, int], key: str
) -> None:
    with pytest.raises(ConfigError) as e:
        parse_workload(_llama(framework, **pin))
    assert e.value.key_path == f"training.parallelism.{key}"
    message = str(e.value)
    assert f"framework {framework}" in message
    if key == "zero":
        offered = ", ".join(str(z) for z in load_frameworks()[framework].zero)
        assert f"offers ZeRO stages {offered}, as modelled here, not {pin['zero']}" in message
    else:
        able = "tensor_parallel" if key == "tensor" else "pipeline_parallel"
        names = sorted(n for n, p in load_frameworks().items() if getattr(p, able))
        assert ", ".join(names) in message and "megatron" in names


def test_auto_picks_a_stack_that_runs_the_pins() -> None:
    # the Hugging Face stack splits layers by tensor (transformers' tp plans), not by pipeline:
    # auto's eager fallback, DeepSpeed, runs its pipeline module
    est = planner.estimate(parse_workload(_llama("auto", pipeline=2)), "A100-80GB", 8)
    assert est.strategy.pipeline_parallel == 2
    line = next(a for a in est.assumptions if a.startswith("software stack:"))
    assert line.startswith(
        "software stack: deepspeed (auto for fine-tuning with a pinned layout hf-trainer does not run"
    )
    tensor = planner.estimate(parse_workload(_llama("auto", tensor=2)), "A100-80GB", 8)
    assert tensor.strategy.tensor_parallel == 2
    line = next(a for a in tensor.assumptions if a.startswith("software stack:"))
    assert line.startswith("software stack: hf-trainer (auto for fine-tuning;")
    plain = planner.estimate(parse_workload(_llama("auto")), "A100-80GB", 8)
    line = next(a for a in plain.assumptions if a.startswith("software stack:"))
    assert line.startswith("software stack: hf-trainer (auto for fine-tuning;")


@pytest.mark.parametrize("key", ["tensor", "pipeline"])
def test_a_cnn_is_not_split_by_layer(key: str) -> None:
    raw = {
        "name": "rn",
        "kind": "pretrain",
        "model": "resnet50",
        "data": {"samples": 1e6},
        "training": {"framework": "megatron", "parallelism": {key: 2}},
    }
    with pytest.raises(ConfigError) as e:
        parse_workload(raw)
    assert e.value.key_path == f"training.parallelism.{key}"
    assert "a cnn model is trained data parallel" in str(e.value)


def test_an_expert_pin_needs_a_stack_with_expert_parallelism() -> None:
    raw: dict[str, Any] = {
        "name": "m",
        "kind": "finetune",
        "model": "mixtral-8x7b",
        "data": {"tokens": 1e7},
        "training": {"framework": "hf-trainer", "parallelism": {"expert": 8}},
    }
    with pytest.raises(ConfigError) as e:
        parse_workload(raw)
    assert e.value.key_path == "training.parallelism.expert"
    able = sorted(n for n, p in load_frameworks().items() if p.expert_parallel)
    assert f"set training.framework to one of {', '.join(able)}" in str(e.value)
    # auto: the eager stack that runs expert parallelism, and the pin holds
    raw["training"]["framework"] = "auto"
    est = planner.estimate(parse_workload(raw), "H100", 64)
    assert est.strategy.expert_parallel == 8
    line = next(a for a in est.assumptions if a.startswith("software stack:"))
    assert line.startswith(
        "software stack: deepspeed (auto for fine-tuning with a pinned layout hf-trainer does not run"
    )


def test_the_stacks_named_in_a_refusal_run_every_pin() -> None:
    # tensor and ZeRO-3 together: DeepSpeed splits layers (AutoTP) but not with ZeRO-3
    with pytest.raises(ConfigError) as e:
        parse_workload(_llama("pytorch-fsdp", tensor=2, zero=3))
    named = str(e.value).split("one of ")[1].split(", or leave")[0].split(", ")
    runs = {
        n
        for n, p in load_frameworks().items()
        if p.tensor_parallel and 3 in p.zero_with(tp=2, pp=1)
    }
    assert set(named) == runs and "any" in runs and "deepspeed" not in runs


def test_a_zero_1_pin_on_an_image_model_stays_eager() -> None:
    raw = {
        "name": "rn",
        "kind": "pretrain",
        "model": "resnet50",
        "data": {"samples": 1e6},
        "training": {"precision": "fp16", "optimizer": "sgd", "parallelism": {"zero": 1}},
    }
    est = planner.estimate(parse_workload(raw), "A100-80GB", 8)
    line = next(a for a in est.assumptions if a.startswith("software stack:"))
    assert line.startswith(
        "software stack: deepspeed (auto for pre-training a model on images with a pinned layout "
        "pytorch-fsdp does not run"
    )
