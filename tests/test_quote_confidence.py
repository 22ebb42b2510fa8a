"""Risk as a constraint (issue 15): every recommended plan meets its deadline with the confidence
asked for under the spot model; a cheaper, riskier plan is only a labelled alternative."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.errors import ConfigError, InfeasibleError
from planner.optimize.model import ModelInputs
from planner.optimize.plans import PlanRequest, make_plans, solve_plan
from planner.optimize.spot import (
    DEFAULT_RESTART_HOURS,
    SpotModel,
    checkpoint_hours,
    interruptions_at,
    poisson_cdf,
    reserve_hours,
)
from planner.quoting.request import QuoteRequest
from planner.quoting.service import quote
from planner.reports.quote_doc import plan_title
from tests.test_optimize_model import START, cands_frame


@pytest.mark.parametrize(
    ("confidence", "mu", "expected"),
    [
        (0.9, 0.5, 1),  # P(X<=0) = e^-0.5 = 0.607, P(X<=1) = 1.5 e^-0.5 = 0.910
        (0.95, 0.5, 2),  # P(X<=2) = 1.625 e^-0.5 = 0.986
        (0.5, 2.0, 2),  # P(X<=1) = 3 e^-2 = 0.406, P(X<=2) = 5 e^-2 = 0.677
        (0.9, 0.0, 0),  # no interruptions expected: nothing to reserve
    ],
)
def test_interruptions_at_a_confidence_are_the_poisson_quantile(
    confidence: float, mu: float, expected: int
) -> None:
    assert interruptions_at(confidence, mu) == expected


@pytest.mark.parametrize("mu", [0.05, 0.7, 3.0, 25.0, 180.0, 900.0])
@pytest.mark.parametrize("confidence", [0.5, 0.9, 0.999])
def test_interruptions_at_is_the_least_k_poisson_cdf_accepts(mu: float, confidence: float) -> None:
    k = interruptions_at(confidence, mu)
    assert poisson_cdf(k, mu) >= confidence
    assert k == 0 or poisson_cdf(k - 1, mu) < confidence


def test_reserve_makes_p_meet_reach_the_confidence_and_no_less_would() -> None:
    model = SpotModel(15.0, 64, checkpoint_hours(50.0), DEFAULT_RESTART_HOURS)
    for useful, confidence in ((10.0, 0.9), (100.0, 0.9), (100.0, 0.99)):
        reserve = reserve_hours(model, useful, confidence)
        assert model.p_meet(useful, reserve) >= confidence
        fewer = reserve - model.loss_per_interruption_hours
        assert model.p_meet(useful, fewer) < confidence


RISKY_SPOT = {
    "price_usd_per_hour": 4.0,
    "job_hours": 40.0,
    "interruption_pct": 40.0,
    "instances": 64,
}


def _spot_rows(rows: list[dict[str, float]]) -> list[dict[str, Any]]:
    """Spot configurations as candidates.py makes them: job hours = base hours x spot slowdown."""
    out = []
    for r in rows:
        model = SpotModel(
            r["interruption_pct"],
            int(r["instances"]),
            checkpoint_hours(20.0),
            DEFAULT_RESTART_HOURS,
        )
        out.append(
            {
                **r,
                "purchase_option": "spot",
                "checkpoint_gib": 20.0,
                "base_job_hours": r["job_hours"],
                "spot_slowdown": model.slowdown,
                "job_hours": r["job_hours"] * model.slowdown,
            }
        )
    return out


spot_config = st.fixed_dictionaries(
    {
        "price_usd_per_hour": st.sampled_from([2.0, 5.0, 9.0, 20.0]),
        "job_hours": st.sampled_from([5.0, 20.0, 60.0, 120.0]),
        "interruption_pct": st.sampled_from([5.0, 15.0, 40.0]),
        "instances": st.sampled_from([1, 8, 64]),
    }
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(spot_config, min_size=1, max_size=4),
    on_demand=st.booleans(),
    deadline=st.sampled_from([8.0, 25.0, 70.0, 150.0]),
    confidence=st.sampled_from([0.5, 0.9, 0.99]),
)
def test_every_sequential_plan_meets_its_confidence(
    rows: list[dict[str, float]], on_demand: bool, deadline: float, confidence: float
) -> None:
    table = _spot_rows(rows)
    if on_demand:  # a slow, dear on-demand fallback, so a safe plan usually exists
        table.append({"price_usd_per_hour": 30.0, "job_hours": 6.0, "base_job_hours": 6.0})
    df = cands_frame(table)
    inputs = ModelInputs(deadline_hours=deadline, startup_hours=START, confidence=confidence)
    try:
        plan = solve_plan(df, inputs, "t")
    except InfeasibleError:
        return  # nothing meets the deadline with this confidence: no plan is offered
    assert plan.risk.p_meet_deadline >= confidence
    assert plan.wall_hours <= deadline + 1e-6
    # the constraint only removes plans: at any risk the cheapest costs no more
    free = solve_plan(df, ModelInputs(deadline_hours=deadline, startup_hours=START), "t")
    assert free.total_cost_usd <= plan.total_cost_usd * (1 + 1e-4) + 1e-6


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(spot_config, min_size=1, max_size=3),
    pieces=st.integers(2, 8),
    deadline=st.sampled_from([20.0, 60.0, 200.0]),
    confidence=st.sampled_from([0.9, 0.99]),
)
def test_every_parallel_plan_meets_its_confidence(
    rows: list[dict[str, float]], pieces: int, deadline: float, confidence: float
) -> None:
    df = cands_frame(_spot_rows(rows))
    df["max_gangs"] = pieces
    df["quota_group"] = [f"g{k}" for k in range(len(df))]
    inputs = ModelInputs(
        deadline_hours=deadline, startup_hours=START, pieces=pieces, confidence=confidence
    )
    try:
        plan = solve_plan(df, inputs, "t")
    except InfeasibleError:
        return
    assert plan.risk.p_meet_deadline >= confidence
    assert sum(i.pieces for i in plan.items) == pieces


def test_the_risky_plan_is_only_a_labelled_alternative_with_its_saving() -> None:
    # A cheap spot offer that just fits the deadline (no room for an interruption) and a dearer
    # on-demand one with room to spare.
    df = cands_frame(
        [
            *_spot_rows([RISKY_SPOT]),
            {"price_usd_per_hour": 10.0, "job_hours": 30.0, "base_job_hours": 30.0},
        ]
    )
    spot_hours = float(df.loc[0, "job_hours"])
    deadline = spot_hours + START + 0.01
    plans = make_plans(df, PlanRequest(deadline_hours=deadline, confidence=0.9)).plans
    recommended = [p for p in plans if not p.below_confidence]
    assert recommended and all(p.risk.p_meet_deadline >= 0.9 for p in recommended)
    risky = plans[-1]
    assert risky.below_confidence and risky.risk.p_meet_deadline < 0.9
    assert risky.label == "risky alternative"
    assert risky.total_cost_usd < recommended[0].total_cost_usd
    saving = recommended[0].total_cost_usd - risky.total_cost_usd
    assert risky.saving_usd == pytest.approx(saving)
    assert plan_title(risky, confidence_pct=90).startswith(
        f"risky alternative (saves ${saving:,.2f}"
    )
    # without a confidence the risky plan is simply the cheapest
    free = make_plans(df, PlanRequest(deadline_hours=deadline, confidence=None)).plans
    assert free[0].total_cost_usd == pytest.approx(risky.total_cost_usd, rel=1e-4)
    assert not any(p.below_confidence for p in free)


def test_when_only_the_confidence_rules_plans_out_the_error_says_so() -> None:
    df = cands_frame(_spot_rows([RISKY_SPOT]))
    deadline = float(df.loc[0, "job_hours"]) + START + 0.01
    with pytest.raises(InfeasibleError) as e:
        make_plans(df, PlanRequest(deadline_hours=deadline, confidence=0.9))
    assert "with 90% confidence" in str(e.value) and "--confidence" in str(e.value)


def test_issue_15_llama_2_7b_pretrain_168h_recommends_nothing_below_90_percent() -> None:
    # The cheapest plan at any risk here is a spot mix with no slack and about an even chance to
    # finish in a week; it used to be the recommendation.
    result = quote(QuoteRequest(workload="llama-2-7b-pretrain", deadline_hours=168.0))
    recommended = [p for p in result.plans if not p.below_confidence]
    assert recommended[0].label == "cheapest"
    for plan in recommended:
        assert plan.risk.p_meet_deadline >= 0.9, plan.label
        assert plan.wall_hours <= 168.0 + 1e-6
    risky = [p for p in result.plans if p.below_confidence]
    assert len(risky) <= 1 and list(result.plans[-1:]) == risky[-1:]  # shown last
    for plan in risky:
        assert plan.risk.p_meet_deadline < 0.9
        assert plan.total_cost_usd < recommended[0].total_cost_usd
    at_any_risk = quote(
        QuoteRequest(workload="llama-2-7b-pretrain", deadline_hours=168.0, confidence_pct=0, top=1)
    ).plans[0]
    assert at_any_risk.risk.p_meet_deadline < 0.9  # the case this test holds is still there
    assert at_any_risk.total_cost_usd <= recommended[0].total_cost_usd


@pytest.mark.parametrize("bad", [100, -5, math.nan, "high", True])
def test_confidence_must_be_a_percentage_below_100(bad: object) -> None:
    with pytest.raises(ConfigError) as e:
        QuoteRequest(workload="gpt2-finetune", deadline_hours=24, confidence_pct=bad)
    assert e.value.key_path == "confidence_pct"  # the field; `planner quote` shows --confidence
