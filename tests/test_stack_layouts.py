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
        ("hf-trainer", {"tensor": 2}, "tensor"),
        ("deepspeed", {"pipeline": 2}, "pipeline"),
        ("pytorch-fsdp", {"zero": 1}, "zero"),
        ("megatron", {"zero": 3}, "zero"),
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
        assert f"offers ZeRO stages {offered}, not {pin['zero']}" in message
    else:
        able = "tensor_parallel" if key == "tensor" else "pipeline_parallel"
        names = sorted(n for n, p in load_frameworks().items() if getattr(p, able))
        assert ", ".join(names) in message and "megatron" in names


def test_auto_picks_a_stack_that_runs_the_pins() -> None:
    est = planner.estimate(parse_workload(_llama("auto", tensor=2)), "A100-80GB", 8)
    assert est.strategy.tensor_parallel == 2
    line = next(a for a in est.assumptions if a.startswith("software stack:"))
    assert line.startswith("software stack: any (auto for fine-tuning with a pinned layout")
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
