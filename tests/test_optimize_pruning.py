"""Dominance pruning before the quote MILP never changes the optimum, and the model's coefficients
are the ones its docstring writes down."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.errors import InfeasibleError, UnknownNameError
from planner.optimize.model import ModelInputs, build_model
from planner.optimize.plans import solve_plan
from planner.optimize.program import LinearProgram
from planner.optimize.pruning import prune_dominated
from tests.test_optimize_model import (
    SIGMA,
    START,
    TAU,
    assert_same_cost,
    cands_frame,
    milp_cost,
)

PARALLEL_BY = ("kind", "purchase_option", "gpu_model", "provider", "quota_group")

sequential_row = st.fixed_dictionaries(
    {
        "price_usd_per_hour": st.sampled_from([2.0, 5.0, 10.0, 40.0, 100.0]),
        "job_hours": st.sampled_from([0.5, 1.0, 2.0, 4.0, 10.0, 25.0]),
        "wall_factor": st.sampled_from([1.0, 1.0, 2.0]),
        "capacity_hours": st.sampled_from([math.inf, math.inf, math.inf, 3.0]),
    }
)  # few distinct values: ties and near-dominance are common, as in real candidate tables


def _dominates(a: pd.Series, b: pd.Series) -> bool:
    """The sequential model's dominance, written out: faster, cheaper to run, no dearer per hour,
    and able to take the whole job within its capacity."""
    return bool(
        a["job_hours"] * a["wall_factor"] <= b["job_hours"] * b["wall_factor"]
        and a["job_hours"] * a["price_usd_per_hour"] <= b["job_hours"] * b["price_usd_per_hour"]
        and a["price_usd_per_hour"] <= b["price_usd_per_hour"]
        and a["capacity_hours"] >= a["job_hours"]
    )


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(sequential_row, min_size=1, max_size=6),
    deadline=st.sampled_from([1.0, 3.0, 8.0, 30.0, 200.0]),
    budget=st.sampled_from([None, 50.0, 300.0]),
)
def test_pruning_never_changes_the_sequential_optimum(
    rows: list[dict[str, float]], deadline: float, budget: float | None
) -> None:
    df = cands_frame(rows)
    pruned = prune_dominated(df)
    full, kept = milp_cost(df, deadline, budget), milp_cost(pruned, deadline, budget)
    assert math.isinf(full) == math.isinf(kept)
    if math.isfinite(full):
        assert_same_cost(kept, full)


def gang_config(groups: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    """A parallel configuration: hourly price, job hours, instances per gang, quota group."""
    return st.fixed_dictionaries(
        {
            "price_usd_per_hour": st.sampled_from([4.0, 8.0, 16.0, 30.0]),
            "job_hours": st.sampled_from([4.0, 8.0, 12.0, 40.0]),
            "instances": st.sampled_from([1, 2, 4]),
            "quota_group": st.sampled_from(groups),
        }
    )


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(
        gang_config(("g0", "g1")),
        min_size=1,
        max_size=5,
    ),
    pieces=st.integers(2, 6),
    deadline=st.sampled_from([6.0, 15.0, 50.0]),
    g1_quota=st.sampled_from([4.0, 64.0, math.inf]),
    across_groups=st.booleans(),
)
def test_pruning_never_changes_the_parallel_optimum(
    rows: list[dict[str, float]],
    pieces: int,
    deadline: float,
    g1_quota: float,
    across_groups: bool,
) -> None:
    df = cands_frame(rows)
    # g0 holds four instances at once (gangs limited by it); g1 the same, or 64 (a quota that
    # never binds for these sizes and pieces, so its rows may absorb other groups' rows), or no
    # quota and one gang per configuration
    quota = df["quota_group"].map({"g0": 4.0, "g1": g1_quota})
    df["quota_instances"] = quota
    df["max_gangs"] = [
        int(q // n) if math.isfinite(q) else 1 for q, n in zip(quota, df["instances"], strict=True)
    ]
    pruned = prune_dominated(
        df, by=PARALLEL_BY, parallel=True, pieces=pieces if across_groups else None
    )
    full, kept = milp_cost(df, deadline, pieces=pieces), milp_cost(pruned, deadline, pieces=pieces)
    assert math.isinf(full) == math.isinf(kept)
    if math.isfinite(full):
        assert_same_cost(kept, full)


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(sequential_row, min_size=1, max_size=8))
def test_every_dropped_configuration_has_a_kept_one_that_dominates_it(
    rows: list[dict[str, float]],
) -> None:
    df = cands_frame(rows)
    kept = prune_dominated(df)
    assert len(kept) >= 1
    for label, row in df.iterrows():
        if label not in kept.index:
            assert any(_dominates(k, row) for _, k in kept.iterrows())
        elif (df["capacity_hours"] == math.inf).all():
            # and nothing is kept that another kept configuration dominates
            others = kept.drop(index=label)
            assert not any(_dominates(o, row) for _, o in others.iterrows())


def test_a_cheaper_hourly_price_survives_pruning() -> None:
    # Same running cost ($100): A finishes in 1 h at $100/h, B in 10 h at $10/h.  A is faster and
    # no dearer to run, but each phase bills START hours of start-up at its hourly price, so with
    # a loose deadline B is cheaper: 10 x 10 + 10 x 0.2 = $102 against 100 x 1 + 100 x 0.2 = $120.
    # (Before start-up costs were part of dominance, B was pruned and the quote said $120.)
    df = cands_frame(
        [
            {"price_usd_per_hour": 100.0, "job_hours": 1.0},
            {"price_usd_per_hour": 10.0, "job_hours": 10.0},
        ]
    )
    assert len(prune_dominated(df)) == 2
    assert milp_cost(prune_dominated(df), deadline=24.0) == pytest.approx(102.0)
    # With the deadline at 2 h only A fits: 100 + 20.
    assert milp_cost(prune_dominated(df), deadline=2.0) == pytest.approx(120.0)


def test_exact_duplicates_keep_the_first() -> None:
    df = cands_frame([{"price_usd_per_hour": 10.0, "job_hours": 5.0}] * 3)
    assert prune_dominated(df).index.tolist() == [0]


def test_groups_are_pruned_separately() -> None:
    df = cands_frame(
        [
            {"price_usd_per_hour": 10.0, "job_hours": 5.0},
            {"price_usd_per_hour": 20.0, "job_hours": 5.0, "purchase_option": "spot"},
        ]
    )
    # the spot row is dominated on numbers, but "cheapest without spot" needs each option's best
    assert prune_dominated(df).index.tolist() == [0, 1]
    assert prune_dominated(df, by=("gpu_model",)).index.tolist() == [0]


class _Rows:
    """Rows of a program by name: coefficients by column name, and bounds."""

    def __init__(self, program: LinearProgram) -> None:
        self.rows = {name: (pairs, lo, hi) for name, pairs, lo, hi in program.rows()}
        self.names = program.column_names

    def __getitem__(self, name: str) -> dict[str, float]:
        assert name in self.rows, f"no constraint {name!r}"
        return {self.names[j]: c for j, c in self.rows[name][0]}

    def lower(self, name: str) -> float:
        return self.rows[name][1]

    def upper(self, name: str) -> float:
        return self.rows[name][2]


def _objective(program: LinearProgram) -> dict[str, float]:
    return {program.column_names[j]: c for j, c in enumerate(program.cost) if c != 0}


def test_sequential_model_has_the_documented_coefficients() -> None:
    # Two candidates: $8/h for 10 h, and $20/h for 4 h on a machine available half the day.
    df = cands_frame(
        [
            {"price_usd_per_hour": 8.0, "job_hours": 10.0},
            {"price_usd_per_hour": 20.0, "job_hours": 4.0, "wall_factor": 2.0},
        ]
    )
    inputs = ModelInputs(
        deadline_hours=30.0,
        budget_usd=500.0,
        switch_hours=TAU,
        switch_usd=SIGMA,
        startup_hours=START,
    )
    prob = build_model(df, inputs).program
    rows = _Rows(prob)
    # objective: sum p (h + S y) + sigma (sum y - 1)
    assert _objective(prob) == pytest.approx(
        {"h_0": 8.0, "y_0": 8.0 * START + SIGMA, "h_1": 20.0, "y_1": 20.0 * START + SIGMA}
    )
    assert prob.objective_constant == pytest.approx(-SIGMA)
    # work: h_0 / 10 + h_1 / 4 >= 1
    assert rows["work"] == pytest.approx({"h_0": 0.1, "h_1": 0.25})
    assert rows.lower("work") == pytest.approx(1.0)
    # deadline: h_0 + 2 h_1 + S (y_0 + y_1) + tau (y_0 + y_1 - 1) <= 30
    assert rows["deadline"] == pytest.approx(
        {"h_0": 1.0, "y_0": START + TAU, "h_1": 2.0, "y_1": START + TAU}
    )
    assert rows.upper("deadline") == pytest.approx(30.0 + TAU)
    # link: h_c <= min(H_c, t_c, D / a_c) y_c, here t_c (10 h and 4 h)
    assert rows["link_0"] == pytest.approx({"h_0": 1.0, "y_0": -10.0})
    assert rows["link_1"] == pytest.approx({"h_1": 1.0, "y_1": -4.0})
    assert rows.upper("budget") == pytest.approx(500.0 + SIGMA)
    assert (rows.lower("at_least_one_phase"), rows.upper("max_phases")) == (1, 3)


def test_parallel_model_has_the_documented_coefficients() -> None:
    # Two gang types in one quota group of 4 instances; 3 pieces; deadline 10 h.
    df = cands_frame(
        [
            {"price_usd_per_hour": 8.0, "job_hours": 12.0, "instances": 1, "max_gangs": 4},
            {"price_usd_per_hour": 16.0, "job_hours": 6.0, "instances": 2, "max_gangs": 2},
        ]
    )
    df["quota_instances"] = 4.0
    inputs = ModelInputs(deadline_hours=10.0, pieces=3, startup_hours=START)
    prob = build_model(df, inputs).program
    rows = _Rows(prob)
    # q = t / P: 4 h and 2 h per piece; cost sum p (q n + S m)
    assert _objective(prob) == pytest.approx(
        {"n_0": 32.0, "m_0": 8.0 * START, "n_1": 32.0, "m_1": 16.0 * START}
    )
    # pieces per gang within the deadline: floor((10 - 0.2) / 4) = 2, floor(9.8 / 2) = 4
    assert rows["fit_0"] == {"n_0": 1.0, "m_0": -2.0}
    assert rows["fit_1"] == {"n_1": 1.0, "m_1": -4.0}
    assert rows["no_idle_gang_0"] == {"m_0": 1.0, "n_0": -1.0}
    assert rows["all_pieces"] == {"n_0": 1.0, "n_1": 1.0}
    assert rows.lower("all_pieces") == rows.upper("all_pieces") == 3
    assert rows["quota_g"] == {"m_0": 1.0, "m_1": 2.0}
    assert rows.upper("quota_g") == pytest.approx(4.0)
    assert math.isclose(prob.upper[prob.column_names.index("m_1")], 2)


def _parallel_inputs(deadline: float, pieces: int) -> ModelInputs:
    # the inputs milp_cost gives the full model
    return ModelInputs(
        deadline_hours=deadline,
        pieces=pieces,
        switch_hours=TAU,
        switch_usd=SIGMA,
        startup_hours=START,
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(
        gang_config(("g0", "g1", "g2")),
        min_size=1,
        max_size=6,
    ),
    pieces=st.integers(2, 7),
    deadline=st.sampled_from([6.0, 15.0, 50.0]),
    quota=st.sampled_from([2.0, 4.0, 8.0, 64.0]),
)
def test_relaxing_the_quotas_never_changes_the_parallel_optimum(
    rows: list[dict[str, float]], pieces: int, deadline: float, quota: float
) -> None:
    # solve_plan first solves the model without quotas and keeps that plan only when it fits them
    df = cands_frame(rows)
    df["quota_instances"] = quota
    df["max_gangs"] = [max(int(quota // n), 1) for n in df["instances"]]
    full = milp_cost(df, deadline, pieces=pieces)
    try:
        got = solve_plan(df, _parallel_inputs(deadline, pieces), "t").total_cost_usd
    except InfeasibleError:
        got = math.inf
    assert math.isinf(full) == math.isinf(got)
    if math.isfinite(full):
        assert_same_cost(got, full)


def test_when_a_quota_binds_the_full_model_spreads_the_gangs() -> None:
    # One configuration in two regions, two instances of quota each; four pieces that each need
    # their own gang by the deadline: the cheaper region takes two gangs, the dearer one two.
    df = cands_frame(
        [
            {"price_usd_per_hour": 8.0, "job_hours": 32.0, "quota_group": "cheap", "region": "a"},
            {"price_usd_per_hour": 9.0, "job_hours": 32.0, "quota_group": "dear", "region": "b"},
        ]
    )
    df["quota_instances"], df["max_gangs"] = 2.0, 2
    plan = solve_plan(df, _parallel_inputs(deadline=10.0, pieces=4), "t")
    assert sorted((i.region, i.gangs) for i in plan.items) == [("a", 2), ("b", 2)]
    # pieces of 8 h: 2 x (8 h x $8 + start-up) + 2 x (8 h x $9 + start-up)
    expected = 2 * 8.0 * (8.0 + START) + 2 * 9.0 * (8.0 + START)
    assert_same_cost(plan.total_cost_usd, expected)


def test_a_price_tie_between_regions_goes_to_the_home_region_then_the_us() -> None:
    """Lambda lists one price in all its regions; a plan used to name whichever came first in the
    table (Tokyo).  The stated rule: the provider's home region, then US regions, then the rest."""
    import pandas as pd

    from planner.catalog.query import in_region_preference, region_rank

    offers = pd.DataFrame(
        {
            "provider": ["lambda", "lambda", "lambda", "azure", "azure"],
            "region": ["asia-northeast-1", "us-west-1", "us-east-1", "westeurope", "westus3"],
        }
    )
    ordered = in_region_preference(offers)
    assert list(zip(ordered["provider"], ordered["region"], strict=True)) == [
        ("azure", "westus3"),
        ("azure", "westeurope"),
        ("lambda", "us-east-1"),
        ("lambda", "us-west-1"),
        ("lambda", "asia-northeast-1"),
    ]
    ranks = [region_rank("gcp", r) for r in ("us-central1", "us-east4", "europe-west4")]
    assert ranks == [(0, 0), (0, 1), (0, 2)]


def test_near_sends_a_price_tie_to_that_region_then_its_area() -> None:
    from planner.catalog.query import check_near, in_region_preference, region_area

    regions = ["asia-northeast-1", "europe-central-1", "us-east-1", "us-west-1", "me-west-1"]
    offers = pd.DataFrame({"provider": ["lambda"] * 5, "region": regions})

    def in_order(near: str | None) -> list[str]:
        return list(in_region_preference(offers, near)["region"])

    assert in_order(check_near("me-west-1", regions))[0] == "me-west-1"
    assert in_order(check_near("eu", regions))[0] == "europe-central-1"
    # a region the table lacks still names its area: eu-west-1 is in Europe
    assert in_order("eu-west-1")[:2] == ["europe-central-1", "us-east-1"]
    # with no --near, the home-region rule of the test above
    assert in_order(None)[:2] == ["us-east-1", "us-west-1"]
    areas = {
        "us-east-1": "north-america",
        "eastus2": "north-america",
        "northamerica-northeast1": "north-america",
        "ca-central-1": "north-america",
        "westeurope": "europe",
        "europe-west4": "europe",
        "uksouth": "europe",
        "ap-southeast-3": "asia-pacific",
        "asia-south1": "asia-pacific",
        "southeastasia": "asia-pacific",
        "australia-southeast1": "asia-pacific",
        "japaneast": "asia-pacific",
        "me-central-1": "middle-east",
        "sa-east-1": "south-america",
        "brazilsouth": "south-america",
        "af-south-1": "africa",
    }
    assert {r: region_area(r) for r in areas} == areas
    with pytest.raises(UnknownNameError, match="did you mean eu-west-1"):
        check_near("eu-wst-1", ["eu-west-1", "us-east-1"])
