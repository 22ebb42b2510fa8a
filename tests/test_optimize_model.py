"""The quote MILP against brute force on small random candidate sets, plus its invariants."""

from __future__ import annotations

import itertools
import math

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.errors import InfeasibleError
from planner.optimize.model import ModelInputs, build_model, solve
from planner.optimize.plans import read_plan
from planner.optimize.solvers import DEFAULT_MIP_REL_GAP, mip_tolerance

TAU, SIGMA, START = 0.5, 3.0, 0.2  # switch time (h), switch cost ($), billed start-up per phase (h)


def assert_same_cost(got: float, expected: float) -> None:
    """A MILP cost against an exact one.  The solver stops once its answer is within the relative
    MIP gap of the best bound (DEFAULT_MIP_REL_GAP, set on every registered solver), so the answer
    may be up to that share dearer, and off by the feasibility tolerance times the cost scale."""
    tolerance = mip_tolerance(expected, DEFAULT_MIP_REL_GAP)
    assert expected - tolerance <= got <= expected + tolerance, (got, expected, tolerance)


def assert_not_dearer(got: float, reference: float) -> None:
    """``got`` comes from a problem whose optimum is at most ``reference``'s: with both answers
    within the MIP gap of their optima, ``got`` may exceed ``reference`` by the gap on its scale."""
    if math.isinf(reference):
        return
    assert got <= reference + mip_tolerance(reference, DEFAULT_MIP_REL_GAP), (got, reference)


def cands_frame(rows: list[dict[str, float]]) -> pd.DataFrame:
    base = {
        "kind": "cloud", "provider": "p", "region": "r", "instance_type": "i", "gpu_model": "H100",
        "gpus_per_instance": 8, "instances": 1, "purchase_option": "on-demand", "capacity_hours": math.inf,
        "quota_group": "g", "quota_instances": math.inf, "max_gangs": 4, "memory_per_gpu_gib": 10.0,
        "gpu_memory_gib": 80.0, "strategy": "dp", "spot_slowdown": 1.0, "interruption_pct": 0.0,
        "checkpoint_gib": 1.0, "wall_factor": 1.0,
    }  # fmt: skip
    return pd.DataFrame([{**base, "instance_type": f"i{k}", **r} for k, r in enumerate(rows)])


def brute_sequential(df: pd.DataFrame, deadline: float, budget: float | None) -> float:
    """Cheapest cost over single configurations and two-phase mixes (an optimal LP vertex uses at
    most two configurations: two constraints, work and deadline, without a budget).  Every phase
    pays a billed start-up START; a switch adds TAU hours and SIGMA dollars."""
    best = math.inf
    pts = [
        (
            r.price_usd_per_hour * r.job_hours,
            r.wall_factor * r.job_hours,
            r.price_usd_per_hour * START,
        )
        for r in df.itertuples()
    ]
    for cost, wall, start in pts:
        if wall + START <= deadline + 1e-9 and (budget is None or cost + start <= budget + 1e-9):
            best = min(best, cost + start)
    for (kc, wc, sc), (kd, wd, sd) in itertools.permutations(pts, 2):
        # x = share of the work on the first; wall(x) = TAU + 2 START + wd + x (wc - wd) <= deadline
        lo, hi = 0.0, 1.0
        slope, rest = wc - wd, deadline - TAU - 2 * START - wd
        if abs(slope) < 1e-12:
            if rest < -1e-9:
                continue
        elif slope > 0:
            hi = min(hi, rest / slope)
        else:
            lo = max(lo, rest / slope)
        if lo > hi + 1e-12:
            continue
        for x in (lo, hi):
            cost = SIGMA + sc + sd + kd + x * (kc - kd)
            if budget is None or cost <= budget + 1e-9:
                best = min(best, cost)
    return best


def milp_cost(
    df: pd.DataFrame, deadline: float, budget: float | None = None, pieces: int = 1
) -> float:
    inputs = ModelInputs(
        deadline_hours=deadline,
        budget_usd=budget,
        pieces=pieces,
        switch_hours=TAU,
        switch_usd=SIGMA,
        startup_hours=START,
    )
    model = build_model(df, inputs)
    try:
        sol = solve(model)
    except InfeasibleError:
        return math.inf
    return read_plan(df, inputs, sol, "t").total_cost_usd


config = st.fixed_dictionaries(
    {
        "price_usd_per_hour": st.floats(1, 100),
        "job_hours": st.floats(1, 100),
        "wall_factor": st.sampled_from([1.0, 1.0, 2.0]),
    }
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(config, min_size=1, max_size=5), deadline=st.floats(2, 150))
def test_sequential_matches_brute_force(rows: list[dict[str, float]], deadline: float) -> None:
    df = cands_frame(rows)
    expected = brute_sequential(df, deadline, None)
    got = milp_cost(df, deadline)
    if math.isinf(expected):
        assert math.isinf(got)
    else:
        assert_same_cost(got, expected)


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(config, min_size=1, max_size=5),
    deadline=st.floats(2, 150),
    extra=st.floats(0, 100),
)
def test_later_deadline_never_costs_more(
    rows: list[dict[str, float]], deadline: float, extra: float
) -> None:
    df = cands_frame(rows)
    assert_not_dearer(milp_cost(df, deadline + extra), milp_cost(df, deadline))


@settings(max_examples=40, deadline=None)
@given(rows=st.lists(config, min_size=1, max_size=4), new=config, deadline=st.floats(2, 150))
def test_adding_an_offer_never_raises_the_cheapest_cost(
    rows: list[dict[str, float]], new: dict[str, float], deadline: float
) -> None:
    assert_not_dearer(
        milp_cost(cands_frame([*rows, new]), deadline), milp_cost(cands_frame(rows), deadline)
    )


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(config, min_size=1, max_size=5),
    deadline=st.floats(2, 150),
    budget=st.floats(10, 3000),
)
def test_budget_is_never_exceeded(
    rows: list[dict[str, float]], deadline: float, budget: float
) -> None:
    df = cands_frame(rows)
    got = milp_cost(df, deadline, budget)
    assert got <= budget + mip_tolerance(budget) or math.isinf(got)
    expected = brute_sequential(df, deadline, budget)
    if math.isinf(expected):
        assert math.isinf(got)
    else:
        assert_same_cost(got, expected)


def test_sequential_mix_beats_either_pure_plan() -> None:
    # Owned GPUs are cheap but too slow alone; cloud is fast but dear.  Start on owned, finish in cloud.
    df = cands_frame(
        [
            {"kind": "local", "price_usd_per_hour": 2.0, "job_hours": 40.0},
            {"price_usd_per_hour": 40.0, "job_hours": 10.0},
        ]
    )
    deadline = 25.0
    cost = milp_cost(df, deadline)
    pure_cloud = 40.0 * 10.0
    assert cost < pure_cloud
    assert math.isinf(milp_cost(df.iloc[[0]], deadline))  # owned alone misses the deadline
    # hand check: x of the work on owned, 40x + 10(1-x) + TAU + 2 START = 25 -> x = 14.1/30
    x = (deadline - TAU - 2 * START - 10.0) / 30.0
    expected = SIGMA + (2.0 + 40.0) * START + 2.0 * 40.0 * x + 40.0 * 10.0 * (1 - x)
    assert cost == pytest.approx(expected)


def brute_parallel(df: pd.DataFrame, pieces: int, deadline: float) -> float:
    best = math.inf
    q = [r.job_hours / pieces for r in df.itertuples()]
    for split in itertools.product(range(pieces + 1), repeat=len(df)):
        if sum(split) != pieces:
            continue
        ok = True
        for k, n in enumerate(split):
            if n == 0:
                continue
            # the fewest gangs that finish n pieces in time, each gang paying one start-up
            per_gang = math.floor((deadline - START) / (df.wall_factor.iloc[k] * q[k]) + 1e-9)
            if per_gang <= 0 or math.ceil(n / per_gang) > df.max_gangs.iloc[k]:
                ok = False
        if ok:
            cost = 0.0
            for k, n in enumerate(split):
                if n:
                    per_gang = math.floor(
                        (deadline - START) / (df.wall_factor.iloc[k] * q[k]) + 1e-9
                    )
                    gangs = math.ceil(n / per_gang)
                    cost += (n * q[k] + gangs * START) * df.price_usd_per_hour.iloc[k]
            best = min(best, cost)
    return best


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(
        st.fixed_dictionaries(
            {
                "price_usd_per_hour": st.floats(1, 50),
                "job_hours": st.floats(4, 80),
                "max_gangs": st.integers(1, 3),
            }
        ),
        min_size=1,
        max_size=3,
    ),
    pieces=st.integers(2, 5),
    deadline=st.floats(1, 60),
)
def test_parallel_matches_brute_force(
    rows: list[dict[str, float]], pieces: int, deadline: float
) -> None:
    df = cands_frame(rows)
    df["quota_group"] = [f"g{k}" for k in range(len(df))]
    expected = brute_parallel(df, pieces, deadline)
    got = milp_cost(df, deadline, pieces=pieces)
    if math.isinf(expected):
        assert math.isinf(got)
    else:
        assert_same_cost(got, expected)
