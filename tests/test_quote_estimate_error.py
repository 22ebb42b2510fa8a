"""A quote whose confidence counts the time estimate's own error (--count-estimate-error)."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
from click.testing import CliRunner

from planner.cli import main
from planner.errors import ConfigError
from planner.gpu_specs import load_gpu_catalog
from planner.optimize.plans import STARTUP_HOURS
from planner.quoting.request import QuoteRequest
from planner.quoting.service import estimate_margin, quote
from planner.workload import estimate, load_workload
from planner.workload.uncertainty import EstimateError, at_ratio, estimate_error


def test_lognormal_through_the_published_deciles() -> None:
    # median 1, p10 0.8, p90 1.25: ln R ~ N(0, s), s = (ln 1.25 - ln 0.8) / (2 x 1.28155) = 0.17412
    err = EstimateError(runs=10, median=1.0, p10=0.8, p90=1.25)
    assert err.sigma == pytest.approx(0.44629 / 2.56310, rel=1e-4)
    assert err.quantile(0.9) == pytest.approx(1.25, rel=1e-9)
    assert err.quantile(0.1) == pytest.approx(0.8, rel=1e-9)
    assert err.quantile(0.5) == pytest.approx(1.0, rel=1e-12)
    # beyond the deciles, the fit extrapolates: z(0.975) = 1.95996, exp(1.95996 x 0.17412) = 1.4067
    assert err.quantile(0.975) == pytest.approx(1.4067, rel=1e-3)
    assert err.cdf(1.25) == pytest.approx(0.9, rel=1e-9)
    assert err.cdf(0.0) == 0.0
    with pytest.raises(ConfigError, match="between 0 and 1"):
        err.quantile(1.0)


def test_the_bundled_table_is_the_one_the_likely_range_uses() -> None:
    err = estimate_error()
    spec = load_workload("gpt2-finetune")
    est = estimate(spec, load_gpu_catalog().resolve("A100-80GB"), 1)
    low, high = est.wall_hours_range or (0.0, 0.0)
    assert low == pytest.approx(est.wall_hours * err.p10, rel=1e-9)
    assert high == pytest.approx(est.wall_hours * err.p90, rel=1e-9)
    assert err.runs >= 30 and err.p10 < err.median < err.p90


def test_an_estimate_at_a_ratio_is_longer_in_every_phase() -> None:
    spec = load_workload("gpt2-finetune")
    est = estimate(spec, load_gpu_catalog().resolve("A100-80GB"), 1)
    slow = at_ratio(est, 1.5, "planned at the 90% quantile")
    assert slow.wall_hours == pytest.approx(1.5 * est.wall_hours)
    assert slow.gpu_hours == pytest.approx(1.5 * est.gpu_hours)
    assert slow.efficiency == pytest.approx(est.efficiency / 1.5)
    assert sum(slow.time_breakdown_hours.values()) == pytest.approx(slow.wall_hours)
    assert slow.assumptions[-1] == "planned at the 90% quantile"
    assert slow.memory_per_gpu_gib == est.memory_per_gpu_gib  # memory is not uncertain here


def test_an_inference_estimate_is_left_as_it_is() -> None:
    # the error table was measured on training runs
    spec = load_workload("llm-serving-7b")
    est = estimate(spec, load_gpu_catalog().resolve("A100-80GB"), 1)
    assert at_ratio(est, 1.5, "x") is est


def test_without_spot_the_whole_confidence_goes_to_the_estimate() -> None:
    req = QuoteRequest(
        workload="gpt2-xl-finetune", deadline_hours=48, allow_spot=False, count_estimate_error=True
    )
    margin = estimate_margin(req)
    assert margin is not None and margin.spot_confidence is None
    assert margin.quantile == pytest.approx(0.9)
    assert margin.ratio == pytest.approx(estimate_error().quantile(0.9))


def test_with_spot_the_confidence_is_split_between_two_independent_risks() -> None:
    req = QuoteRequest(workload="gpt2-xl-finetune", deadline_hours=48, count_estimate_error=True)
    margin = estimate_margin(req)
    assert margin is not None and margin.spot_confidence is not None
    assert margin.quantile * margin.spot_confidence == pytest.approx(0.9)
    assert margin.quantile == pytest.approx(math.sqrt(0.9))


def test_plans_run_longer_by_the_ratio_and_cost_more_for_it() -> None:
    base = QuoteRequest(workload="gpt2-xl-finetune", deadline_hours=48, allow_spot=False)
    central = quote(base)
    counted = quote(replace(base, count_estimate_error=True))
    margin = counted.estimate_margin
    assert margin is not None and central.estimate_margin is None
    # a generous deadline: the same cheapest configuration, its job hours (start-up aside)
    # multiplied by the ratio, and its cost with them
    a, b = central.plans[0].items[0], counted.plans[0].items[0]
    assert (a.instance_type, a.instances) == (b.instance_type, b.instances)
    assert b.hours - STARTUP_HOURS == pytest.approx(margin.ratio * (a.hours - STARTUP_HOURS))
    assert b.cost_usd == pytest.approx(a.cost_usd * b.hours / a.hours)
    # no spot: the chance to meet the deadline is the estimate's quantile
    assert counted.plans[0].risk.p_meet_deadline == pytest.approx(0.9)


def test_a_deadline_the_central_estimate_meets_but_its_pessimistic_end_does_not() -> None:
    base = QuoteRequest(workload="gpt2-xl-finetune", deadline_hours=48, allow_spot=False)
    cheapest = quote(base).plans[0]
    ratio = estimate_error().quantile(0.9)
    # between the central time and the pessimistic one: the plan stands without the flag only
    deadline = cheapest.wall_hours * (1 + ratio) / 2
    central = quote(replace(base, deadline_hours=deadline))
    counted = quote(replace(base, deadline_hours=deadline, count_estimate_error=True))
    assert central.plans[0].signature() == cheapest.signature()
    assert counted.plans[0].signature() != cheapest.signature()
    assert all(p.wall_hours <= deadline + 1e-6 for p in counted.plans)
    assert counted.plans[0].total_cost_usd > cheapest.total_cost_usd


def test_a_spot_plan_reports_the_joint_chance() -> None:
    counted = quote(
        QuoteRequest(workload="gpt2-xl-finetune", deadline_hours=24, count_estimate_error=True)
    )
    margin = counted.estimate_margin
    assert margin is not None and margin.spot_confidence is not None
    for plan in counted.plans:
        if not plan.below_confidence:
            assert plan.risk.p_meet_deadline >= 0.9 - 1e-9
            assert plan.risk.p_meet_deadline <= margin.quantile + 1e-9


def test_counting_the_error_needs_a_confidence() -> None:
    with pytest.raises(ConfigError, match="confidence_pct=0") as err:
        QuoteRequest(
            workload="gpt2-xl-finetune",
            deadline_hours=24,
            confidence_pct=0,
            count_estimate_error=True,
        )
    assert err.value.key_path == "count_estimate_error"
    with pytest.raises(ConfigError, match="True or False"):
        flag: object = "yes"
        QuoteRequest(workload="gpt2-xl-finetune", deadline_hours=24, count_estimate_error=flag)


def test_cli_says_how_the_plans_count_the_error() -> None:
    args = ["quote", "--workload", "gpt2-xl-finetune", "--deadline", "24h", "--no-spot"]
    text = CliRunner().invoke(main, [*args, "--count-estimate-error"])
    assert text.exit_code == 0, text.output
    assert "counting the time estimate's own error" in text.output
    assert "90.0% quantile of measured / estimated time on" in text.output
    doc = CliRunner().invoke(main, [*args, "--count-estimate-error", "--format", "json"])
    margin = json.loads(doc.stdout)["estimate_margin"]
    assert margin["quantile"] == pytest.approx(0.9) and margin["spot_confidence"] is None
    assert margin["ratio"] == pytest.approx(estimate_error().quantile(0.9))
    plain = CliRunner().invoke(main, [*args, "--format", "json"])
    assert json.loads(plain.stdout)["estimate_margin"] is None
    bad = CliRunner().invoke(main, [*args, "--count-estimate-error", "--confidence", "0"])
    assert bad.exit_code == 2
    assert "--count-estimate-error" in bad.output and "Traceback" not in bad.output


def test_the_error_table_covers_training_only() -> None:
    with pytest.raises(ConfigError, match="inference workload") as err:
        quote(
            QuoteRequest(
                workload="llama-2-7b-batch-inference", deadline_hours=24, count_estimate_error=True
            )
        )
    assert err.value.key_path == "count_estimate_error"
    service = CliRunner().invoke(
        main, ["quote", "--workload", "llm-serving-7b", "--rps", "1", "--count-estimate-error"]
    )
    assert service.exit_code == 2
    assert "latency targets" in service.output and "Traceback" not in service.output


def test_a_mixture_of_experts_plans_on_its_own_regimes_error() -> None:
    req = QuoteRequest(
        workload="mixtral-8x7b-finetune",
        deadline_hours=72,
        allow_spot=False,
        count_estimate_error=True,
    )
    margin = estimate_margin(req)
    assert margin is not None
    moe = estimate_error("mixture-of-experts")
    assert margin.ratio == pytest.approx(moe.quantile(0.9))
    assert margin.runs == moe.runs != estimate_error().runs
