"""The budget MILP: brute force on a small case, the mix never loses to a pure strategy, file errors."""

from __future__ import annotations

import datetime
import itertools
import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from planner.errors import ConfigError, InfeasibleError, UnknownNameError
from planner.optimize.budget import (
    BUY,
    ON_DEMAND,
    RESERVED,
    budget_report,
    build_budget_model,
    plan_budget,
    read_plan,
    sensitivity_cases,
    solve_model,
)
from planner.optimize.solvers import default_solver
from planner.ownership.budget_spec import BudgetSpec, budget_from_mapping, load_budget
from planner.ownership.hardware import HardwareSpec
from planner.reports.tco import render_budget
from planner.schema import Interconnect
from tests.test_optimize_model import assert_not_dearer, assert_same_cost

H = 730.0  # hours in a month

# One-GPU box: capex 6,000, 1-year life, 1 kW at $0.10: running = 1 x 730 x 0.10 = $73/month.
BOX = HardwareSpec(
    name="box",
    gpu="A10",
    gpus_per_machine=1,
    machines=1,
    interconnect=Interconnect.NONE,
    capex_usd=6_000,
    lifetime_years=1,
    power_kw_avg=1.0,
    electricity_usd_per_kwh=0.10,
)
DEMAND = [1_000.0, 3_000.0, 500.0]
OD, SPOT, SHARE, COMMIT, TERM, LEAD = 3.0, 1.0, 0.25, 2.0, 2, 1


def small_spec() -> BudgetSpec:
    raw = {
        "horizon_months": 3,
        "classes": [
            {
                "gpu": "A10",
                "demand_gpu_hours": DEMAND,
                "on_demand_usd_per_gpu_hour": OD,
                "spot": {"usd_per_gpu_hour": SPOT, "max_share": SHARE},
                "commitments": [{"term_months": TERM, "usd_per_gpu_hour": COMMIT}],
                "buy": [{"hardware": "box", "lead_time_months": LEAD, "utilization": 1.0}],
            }
        ],
    }
    return budget_from_mapping(raw, hardware_loader={"box": BOX}.__getitem__)


def brute_force() -> float:
    """Enumerate commitments and purchases; on-demand and spot fill the rest, spot first."""
    best = float("inf")
    starts = range(3)
    orders = range(3 - LEAD)
    for ys in itertools.product(range(6), repeat=len(starts)):
        for xs in itertools.product(range(5), repeat=len(orders)):
            cost = sum(y * COMMIT * H * TERM for y in ys)  # the whole term is owed
            for s, x in zip(orders, xs, strict=True):
                months_in_service = 3 - (s + LEAD)
                residual = 6_000 * (1 - months_in_service / 12)
                cost += x * (6_000 - residual + 73.0 * months_in_service)
            for t, d in enumerate(DEMAND):
                cap = sum(y * H for s, y in zip(starts, ys, strict=True) if s <= t < s + TERM)
                cap += sum(x * H for s, x in zip(orders, xs, strict=True) if t >= s + LEAD)
                rest = max(0.0, d - cap)
                spot = min(rest, SHARE * d)
                cost += spot * SPOT + (rest - spot) * OD
            best = min(best, cost)
    return best


def test_milp_matches_brute_force() -> None:
    # every registered solver is checked against the same brute force in test_solver_contract.py
    plan = plan_budget(small_spec())
    assert plan.status == "optimal"
    assert_same_cost(plan.total_usd, brute_force())


def test_read_back_total_equals_objective() -> None:
    spec = small_spec()
    model = build_budget_model(spec)
    result = default_solver().solve(model.problem)
    assert result.objective is not None
    plan = read_plan(model, solve_model(model, default_solver()))
    assert plan.total_usd == pytest.approx(result.objective, rel=1e-9)
    for month in plan.months:  # demand met every month
        supplied = (
            month.owned_gpu_hours
            + month.reserved_gpu_hours
            + month.on_demand_gpu_hours
            + month.spot_gpu_hours
        )
        assert supplied >= month.demand_gpu_hours - 1e-6
        assert month.spot_gpu_hours <= SHARE * month.demand_gpu_hours + 1e-6


def test_pure_reserved_only_uses_commitments() -> None:
    plan = plan_budget(small_spec(), allowed=frozenset({RESERVED}))
    assert plan.on_demand_gpu_hours == 0 and plan.spot_gpu_hours == 0 and plan.machines_bought == 0
    assert all(m.reserved_gpu_hours >= m.demand_gpu_hours for m in plan.months)


def test_pure_owned_bridges_with_on_demand_until_delivery() -> None:
    plan = plan_budget(small_spec(), allowed=frozenset({BUY}))
    assert plan.months[0].on_demand_gpu_hours == pytest.approx(DEMAND[0])
    assert all(m.on_demand_gpu_hours == 0 for m in plan.months[LEAD:])


def test_shipped_example_mix_beats_every_pure_strategy() -> None:
    report = budget_report(load_budget("2027-ml-platform"), sensitivity=False)
    mix = report.plan.total_usd
    assert report.plan.status == "optimal"
    pure = {s.strategy: s.total_usd for s in report.strategies if s.strategy != "optimal mix"}
    assert set(pure) == {"all on-demand", "all reserved", "all owned"}
    for name, total in pure.items():
        assert total is not None, name
        assert_not_dearer(mix, total)
    assert mix < min(t for t in pure.values() if t is not None)  # mixing actually saves here


def test_workload_runs_inside_its_window() -> None:
    raw: dict[str, Any] = {
        "horizon_months": 4,
        "classes": [{"gpu": "A10", "demand_gpu_hours": 0, "on_demand_usd_per_gpu_hour": 1.0}],
        "workloads": [
            {"name": "job", "gpu": "A10", "gpu_hours": 900, "start_month": 2, "deadline_month": 3}
        ],
    }
    plan = plan_budget(budget_from_mapping(raw))
    hours = [m.demand_gpu_hours for m in plan.months]
    assert hours[0] == 0 and hours[3] == 0
    assert sum(hours[1:3]) == pytest.approx(900)
    assert plan.total_usd == pytest.approx(900)


def test_sensitivity_cheaper_electricity_never_costs_more() -> None:
    report = budget_report(small_spec())
    by_case = {(r.parameter, r.value): r.total_usd for r in report.sensitivity}
    assert_not_dearer(by_case["electricity price", "x0.5"], by_case["electricity price", "x2"])
    assert_not_dearer(by_case["cloud discount", "x1.5"], by_case["cloud discount", "x0.5"])


def test_no_on_demand_and_too_little_else_is_infeasible() -> None:
    raw = {
        "horizon_months": 2,
        "capex_limit_usd": 0,
        "classes": [{"gpu": "A10", "demand_gpu_hours": 100, "buy": [{"hardware": "box"}]}],
    }
    spec = budget_from_mapping(raw, hardware_loader={"box": BOX}.__getitem__)
    with pytest.raises(InfeasibleError, match="no plan meets demand") as err:
        plan_budget(spec, allowed=frozenset({BUY, ON_DEMAND}))
    assert err.value.hint and "on_demand_usd_per_gpu_hour" in err.value.hint


# --- budget file errors -----------------------------------------------------------------------


def write(tmp_path: Path, data: dict[str, Any]) -> str:
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return str(path)


BASE: dict[str, Any] = {
    "horizon_months": 2,
    "classes": [{"gpu": "H100", "demand_gpu_hours": [10, 20], "on_demand_usd_per_gpu_hour": 3.0}],
}


@pytest.mark.parametrize(
    ("change", "key", "fragment"),
    [
        ({"horizon_monthz": 3}, "horizon_monthz", "did you mean 'horizon_months'"),
        (
            {"classes": [{"gpu": "H100", "demand_gpu_hours": [1, 2, 3]}]},
            "classes[0].demand_gpu_hours",
            "3 monthly values",
        ),
        (
            {"classes": [{"gpu": "H100", "on_demand_usd_per_gpu_hour": "-3 EUR"}]},
            "classes[0].on_demand_usd_per_gpu_hour",
            "negative",
        ),
        (
            {"classes": [{"gpu": "H100", "spot": {"usd_per_gpu_hour": 1, "max_share": 2}}]},
            "classes[0].spot.max_share",
            "must be at most 1, got 2",
        ),
        (
            # issue 12 regression: an unknown key inside an optional section names that key
            # (was "classes[0].spot: unknown key, did you mean 'spot'?")
            {"classes": [{"gpu": "H100", "spot": {"usd_per_gpu_hour": 1, "max_shar": 0.5}}]},
            "classes[0].spot.max_shar",
            "did you mean 'max_share'",
        ),
        (
            {"classes": [{"gpu": "H100", "buy": [{"hardware": "8xa100-80gb"}]}]},
            "classes[0].buy[0]",
            "has A100-80GB GPUs, not H100",
        ),
        (
            {"classes": [{"gpu": "H100", "buy": [{"hardware": "nope"}]}]},
            "classes[0].buy[0].hardware",
            "does not load",
        ),
        (
            {"workloads": [{"name": "w", "gpu": "A10", "gpu_hours": 5, "deadline_month": 2}]},
            "workloads[0].gpu",
            "no class for GPU A10",
        ),
        (
            {"workloads": [{"name": "w", "gpu": "H100", "gpu_hours": 5, "deadline_month": 9}]},
            "workloads[0].deadline_month",
            "between",
        ),
        ({"capex_limit_usd": "5 XYZ"}, "capex_limit_usd", "unknown currency"),
    ],
)
def test_budget_file_errors_name_file_and_key(
    tmp_path: Path, change: dict[str, Any], key: str, fragment: str
) -> None:
    path = write(tmp_path, BASE | change)
    with pytest.raises(ConfigError) as err:
        load_budget(path)
    text = str(err.value)
    assert text.startswith(f"{path}: {key}: "), text
    assert fragment in text


def test_unknown_gpu_class(tmp_path: Path) -> None:
    path = write(tmp_path, BASE | {"classes": [{"gpu": "H1000"}]})
    with pytest.raises(UnknownNameError, match="H100"):
        load_budget(path)


def test_sensitivity_cases_match_whole_model_solves() -> None:
    # issue 15: the report solves the cases on threads, each warm-started from the mix where that
    # start is feasible (the utilization cases change capacities, so there it must be dropped:
    # highspy 1.16 given an infeasible start called a plan that breaks the rows "optimal" for
    # "owned utilization 50%" in a 60-month plan, $2.24M against the true $2.36M); each total
    # must be the optimum of its model solved alone, cold (within the MIP gap).
    spec = load_budget("2027-ml-platform")
    report = budget_report(spec)
    totals = {(r.parameter, r.value): r.total_usd for r in report.sensitivity}
    assert len(totals) == len(sensitivity_cases(spec))
    for parameter, value, varied in [("mix", "", spec), *sensitivity_cases(spec)]:
        whole = default_solver().solve(build_budget_model(varied).problem)
        assert whole.objective is not None
        got = report.plan.total_usd if parameter == "mix" else totals[parameter, value]
        assert_same_cost(got, whole.objective)


def two_class_spec(capex_limit_usd: float) -> BudgetSpec:
    """Two GPU classes, each of which would buy one box; the capex limit is shared."""

    def gpu_class(gpu: str, hardware: str) -> dict[str, Any]:
        return {
            "gpu": gpu,
            "demand_gpu_hours": [H, H, H, H],  # one GPU all the time: a box beats on-demand
            "on_demand_usd_per_gpu_hour": OD,
            "buy": [{"hardware": hardware, "lead_time_months": 0, "utilization": 1.0}],
        }

    raw = {
        "horizon_months": 4,
        "capex_limit_usd": capex_limit_usd,
        "classes": [gpu_class("A10", "box"), gpu_class("L4", "box-l4")],
    }
    loader = {"box": BOX, "box-l4": replace(BOX, name="box-l4", gpu="L4")}.__getitem__
    return budget_from_mapping(raw, hardware_loader=loader)


@pytest.mark.parametrize(
    "capex_limit_usd, boxes",
    [
        (12_000, 2),  # room for both: each class buys its box
        (6_000, 1),  # room for one: alone, each class would buy one
    ],
)
def test_the_capex_limit_is_shared_by_the_classes(capex_limit_usd: float, boxes: int) -> None:
    spec = two_class_spec(capex_limit_usd)
    model = build_budget_model(spec)
    plan = read_plan(model, solve_model(model, default_solver()))
    whole = default_solver().solve(model.problem)
    assert whole.objective is not None
    assert_same_cost(plan.total_usd, whole.objective)
    assert plan.machines_bought == boxes
    assert sum(m.capex_usd for m in plan.months) <= capex_limit_usd


def test_the_budget_model_reads_no_files() -> None:
    # issue 12: optimize/ takes typed specs (BudgetSpec, HardwareSpec); reading budget and
    # hardware files is the caller's job (planner.api.budget loads the file), so importing the
    # model loads neither the file readers nor their validation library.
    code = "import sys, planner.optimize.budget; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(out.stdout.split())
    assert "planner.optimize.budget" in loaded
    for reader in (
        "planner.config",
        "planner.ownership.budget_spec",
        "planner.ownership.hardware",
        "pydantic",
    ):
        assert reader not in loaded, reader


def test_cash_out_and_book_value_reconcile_in_every_format() -> None:
    """Issue 16: the 2027 platform budget's headline shows cash out and book value kept side by
    side -- terminal, JSON, Markdown, HTML and the report CSV -- and they reconcile with the
    monthly rows: sum of the rows == cash out; cash out - book value kept (+ commitments due after
    the horizon) == the net total."""
    from click.testing import CliRunner

    from planner.cli import main

    run = CliRunner().invoke
    args = ["budget", "scenarios/budgets/2027-ml-platform.yaml", "--no-sensitivity"]
    record = json.loads(run(main, [*args, "--format", "json"]).stdout)
    rows = sum(m["cost_usd"] for m in record["months"])
    assert record["cash_out_usd"] == pytest.approx(rows, rel=1e-12)
    assert record["book_value_kept_usd"] == pytest.approx(290_625)  # 310k bought in month 31
    net = record["cash_out_usd"] - record["book_value_kept_usd"]
    assert net + record["commitments_after_horizon_usd"] == pytest.approx(record["total_usd"])
    cash, book, total = (
        f"{record[k]:,.0f}" for k in ("cash_out_usd", "book_value_kept_usd", "total_usd")
    )
    terminal = run(main, args).stdout
    for label, amount in (("cash out", cash), ("book value kept", book), ("net total", total)):
        assert re.search(rf"^  {label} +{amount} USD", terminal, re.M), (label, terminal[:400])
    for fmt in ("markdown", "html", "csv"):
        doc = run(main, ["report", *args, "--format", fmt]).stdout
        for figure, amount in (("Cash out in the horizon", cash), ("Book value kept", book)):
            assert figure in doc and f"${amount}" in doc, (fmt, figure)
        assert f"${total}" in doc


def test_purchase_paid_back_after_the_horizon_is_flagged() -> None:
    """Issue 16: the $310k H100 server bought in month 31 of 36 saves money only through the book
    value it keeps.  By hand: it displaces the class's cheapest rate, the 3-year commitment at
    $2.00, on 8 x 730 x 0.8 = 4,672 useful GPU-hours a month (9,344) less its running costs at
    80% use (power (0.8 x 8 + 0.2 x 2.4) kW x 1.4 x 730 h x $0.10 = 703.14, colocation 1,876.80,
    support 2,583.33, staff 221.67: 5,384.94), so it pays back 310,000 / 3,959.06 = 78.3 months
    after it enters service in 2029-10: by 2036-04."""
    spec = load_budget("2027-ml-platform")
    plan = budget_report(spec, sensitivity=False).plan
    (p,) = plan.purchases
    assert (p.hardware, p.ordered, p.in_service_from, p.machines) == (
        "8xh100-hgx",
        "2029-07",
        "2029-10",
        1,
    )
    running = (0.8 * 8 + 0.2 * 2.4) * 1.4 * 730 * 0.10 + 10.2 * 184 + 31_000 / 12 + 2_660 / 12
    assert p.payback_months == pytest.approx(310_000 / (2.00 * 4_672 - running))
    assert p.payback_months == pytest.approx(78.3, abs=0.05)
    assert (p.paid_back_by, p.pays_back_in_horizon) == ("2036-04", False)
    assert plan.late_purchases == (p,)
    text = render_budget(budget_report(spec, sensitivity=False), "table")
    assert (
        "flag: 1 x 8xh100-hgx ordered 2029-07 (310,000 USD) pays back its cash only by 2036-04"
        in text
    )


def test_sensitivity_table_prints_money_not_scientific_notation() -> None:
    spec = load_budget("2027-ml-platform")
    text = render_budget(budget_report(spec), "table")
    table = text.split("sensitivity:")[1]
    assert not re.search(r"\d\.\d+e[+-]\d", table), table
    for row in budget_report(spec).sensitivity:
        assert f"{row.total_usd:,.0f}" in table


def test_budget_warns_when_its_prices_are_stale() -> None:
    spec = load_budget("2027-ml-platform")
    report = budget_report(spec, sensitivity=False)
    assert report.prices_as_of == "2024-01-01"
    (warning,) = report.stale_warnings(datetime.date(2026, 11, 23), 90)
    assert "1057 days old" in warning
    assert report.stale_warnings(datetime.date(2024, 2, 1), 90) == []
    undated = budget_report(replace(spec, prices_as_of=""), sensitivity=False)
    assert "prices_as_of" in undated.stale_warnings(datetime.date(2024, 2, 1), 90)[0]
