"""A setting the chosen method does not use is named, not silently dropped (issue 14)."""

from __future__ import annotations

from typing import Any

import pytest

import planner
from planner.workload import parse_workload


def _gpt2(**training: Any) -> planner.WorkloadSpec:
    return parse_workload(
        {
            "name": "w",
            "kind": "finetune",
            "model": "gpt2",
            "data": {"tokens": 1e6},
            "training": training,
        }
    )


def _unused(est: planner.Estimate) -> list[str]:
    return [a for a in est.assumptions if "not used" in a]


@pytest.mark.parametrize(
    ("training", "named"),
    [
        ({"method": "full", "lora_rank": 8}, "training.lora_rank not used"),
        ({"lora_targets": "qv"}, "training.lora_targets not used"),
        (
            {"method": "full", "lora_rank": 8, "lora_targets": "qv"},
            "training.lora_rank and lora_targets not used",
        ),
    ],
)
def test_lora_settings_on_a_full_fine_tune_are_named(training: dict[str, Any], named: str) -> None:
    est = planner.estimate(_gpt2(**training), "A100-80GB", 1)
    (line,) = _unused(est)
    assert line.startswith(named) and "method full trains every weight" in line
    # the settings change nothing in a full fine-tune
    plain = planner.estimate(_gpt2(method="full"), "A100-80GB", 1)
    assert est.wall_hours == plain.wall_hours and _unused(plain) == []


def test_lora_uses_its_rank_and_names_nothing_unused() -> None:
    est = planner.estimate(_gpt2(method="lora", lora_rank=8), "A100-80GB", 1)
    assert _unused(est) == []
    assert any(a.startswith("lora: rank 8 adapters") for a in est.assumptions)


@pytest.mark.parametrize("name", ["llama-2-7b-finetune", "llama-2-13b-finetune"])
def test_bundled_full_fine_tunes_carry_no_lora_setting(name: str) -> None:
    assert _unused(planner.estimate(name, "H100", 8)) == []


def test_a_variant_of_a_full_fine_tune_names_nothing_unused() -> None:
    # --precision and --framework re-parse the training section: its defaults are not the user's
    spec = planner.load_workload("gpt2-finetune")
    for changed in (
        spec.variant(training={"precision": "fp16"}),
        spec.variant(training={"framework": "torchtune"}),
    ):
        assert _unused(planner.estimate(changed, "A100-80GB", 1)) == []
    ranked = _gpt2(method="full", lora_rank=8).variant(training={"framework": "torchtune"})
    (line,) = _unused(planner.estimate(ranked, "A100-80GB", 1))
    assert line.startswith("training.lora_rank not used")


def test_an_evaluation_interval_longer_than_the_run_is_named() -> None:
    # 1e6 tokens of 1,024-token sequences at the default batch: far fewer steps than 10^6
    est = planner.estimate(
        _gpt2(method="full").variant(data={"eval_every": 1_000_000, "eval_tokens": 100_000}),
        "A100-80GB",
        1,
    )
    (line,) = [a for a in est.assumptions if a.startswith("no evaluation pass")]
    assert "data.eval_every (1,000,000 optimizer steps) is longer than the run's" in line
    assert est.time_breakdown_hours["evaluation passes"] == 0.0
