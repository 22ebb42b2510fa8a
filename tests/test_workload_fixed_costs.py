"""Fixed and periodic costs of a training run (issue 14): start-up and model load, evaluation
passes, shown as lines of the time breakdown and counted in the wall-clock."""

from __future__ import annotations

import math
from typing import Any

import pytest

from planner.errors import ConfigError
from planner.gpu_specs import resolve_gpu
from planner.workload import efficiency as eff
from planner.workload import estimate, load_workload, parse_workload

HOUR = 3600.0


def with_data(name: str, **data: Any) -> Any:
    raw = load_workload(name).model_dump(mode="json", exclude_none=True)
    raw["data"] = {**raw["data"], **data}
    return parse_workload(raw)


def test_a_fine_tune_pays_the_start_up_and_reads_its_weights() -> None:
    """BERT-base (fp16) on one V100: 60 s of start-up, then its weights at 2 bytes each read at
    1 GB/s; the wall-clock is the sum of the lines."""
    spec = load_workload("bert-base-finetune")
    est = estimate(spec, resolve_gpu("V100-16GB"), 1)
    params = spec.model.params or 0.0
    start = est.time_breakdown_hours["start-up and model load"] * HOUR
    assert start == pytest.approx(eff.PROCESS_START_SECONDS + params * 2.0 / 1e9)
    assert est.wall_hours == pytest.approx(sum(est.time_breakdown_hours.values()))
    assert est.goodput == pytest.approx(est.time_breakdown_hours["training steps"] / est.wall_hours)


def test_pre_training_starts_from_scratch_and_reads_no_weights() -> None:
    est = estimate(load_workload("gpt2-pretrain"), resolve_gpu("H100"), 8)
    start = est.time_breakdown_hours["start-up and model load"] * HOUR
    assert start == pytest.approx(eff.PROCESS_START_SECONDS)


def test_evaluation_passes_run_the_forward_pass_at_the_training_rate() -> None:
    """GPT-2 small pre-training with an evaluation over 2M tokens every 200 steps: the number of
    passes is the steps over 200, rounded down; each costs a third of training on as many tokens
    (2 of the 6 FLOPs per weight and token)."""
    plain = load_workload("gpt2-pretrain")
    spec = with_data("gpt2-pretrain", eval_every=200, eval_tokens=2_000_000)
    gpu = resolve_gpu("H100")
    base, est = estimate(plain, gpu, 8), estimate(spec, gpu, 8)
    steps_s = est.time_breakdown_hours["training steps"] * HOUR
    assert steps_s == pytest.approx(base.time_breakdown_hours["training steps"] * HOUR)
    tokens = plain.data.tokens if plain.data and plain.data.tokens else 0.0
    batch_tokens = plain.training.global_batch_tokens or 0.0
    passes = math.floor(tokens / batch_tokens / 200)
    expected = passes * (2_000_000 / tokens) * steps_s / 3.0
    assert est.time_breakdown_hours["evaluation passes"] * HOUR == pytest.approx(expected)
    assert est.wall_hours == pytest.approx(base.wall_hours + expected / HOUR)


def test_eval_every_needs_eval_tokens() -> None:
    with pytest.raises(ConfigError, match="eval_tokens"):
        with_data("gpt2-pretrain", eval_every=100)


def test_a_three_minute_job_is_mostly_fixed_cost() -> None:
    """A short fine-tune spends a visible share of its wall-clock before the first step: the
    breakdown says so instead of reporting the steps alone."""
    spec = with_data("gpt2-finetune", tokens=2_000_000)
    est = estimate(spec, resolve_gpu("H100"), 1)
    steps = est.time_breakdown_hours["training steps"]
    assert est.wall_hours - steps >= eff.PROCESS_START_SECONDS / HOUR
    assert est.goodput < 0.8
