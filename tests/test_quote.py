"""`planner quote` end to end on the bundled snapshot: hand-checkable answers and clear errors."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

from planner.catalog import load_offer_book
from planner.cli import main
from planner.errors import ConfigError, InfeasibleError
from planner.quoting.request import QuoteRequest
from planner.quoting.service import quote
from tests.conftest import offer_row


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def headline() -> dict[str, Any]:
    code, out, err = run(
        "quote", "--workload", "gpt2-xl-finetune", "--deadline", "24h", "--format", "json"
    )
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


def test_headline_json_shape(headline: dict[str, Any]) -> None:
    assert {"workload", "deadline_hours", "requirements", "snapshot", "plans"} <= set(headline)
    assert headline["workload"] == "gpt2-xl-finetune" and headline["deadline_hours"] == 24
    assert headline["snapshot"]["as_of"] and headline["snapshot"]["source"]
    assert 2 <= len(headline["plans"]) <= 5
    item_keys = {"provider", "region", "instance_type", "gpu_model", "gpus_per_instance", "instances",
                 "purchase_option", "hours", "cost_usd"}  # fmt: skip
    for plan in headline["plans"]:
        assert {"total_cost_usd", "wall_hours", "items", "memory_per_gpu_gib", "risk"} <= set(plan)
        for item in plan["items"]:
            assert item_keys <= set(item)


def test_headline_survives_a_hand_check(headline: dict[str, Any]) -> None:
    costs = [p["total_cost_usd"] for p in headline["plans"]]
    assert costs == sorted(costs), "plans are ranked cheapest first"
    for plan in headline["plans"]:
        items = plan["items"]
        # cost equals the sum of its items (plus any switch), and each item is price x billed hours
        assert plan["total_cost_usd"] == pytest.approx(
            sum(i["cost_usd"] for i in items) + plan["switch_cost_usd"]
        )
        for i in items:
            assert i["cost_usd"] == pytest.approx(i["price_usd_per_hour"] * i["hours"])
            assert i["memory_per_gpu_gib"] <= i["gpu_memory_gib"], "every plan fits memory"
        assert plan["wall_hours"] <= headline["deadline_hours"] + 1e-6, (
            "every plan meets the deadline"
        )
        assert sum(i["work_fraction"] for i in items) >= 1 - 1e-6, "all the work is done"
    # plans are meaningfully different, not regions of one instance
    signatures = {
        tuple(sorted((i["instance_type"], i["purchase_option"]) for i in p["items"]))
        for p in headline["plans"]
    }
    assert len(signatures) == len(headline["plans"])


def test_no_spot_never_returns_spot() -> None:
    code, out, _ = run(
        "quote", "-w", "gpt2-xl-finetune", "--deadline", "24h", "--no-spot", "--format", "json"
    )
    assert code == 0
    options = {i["purchase_option"] for p in json.loads(out)["plans"] for i in p["items"]}
    assert options and "spot" not in options


def test_later_deadline_never_costs_more_end_to_end() -> None:
    costs = []
    for deadline in (4.0, 12.0, 48.0):
        result = quote(QuoteRequest(workload="gpt2-xl-finetune", deadline_hours=deadline, top=1))
        costs.append(result.plans[0].total_cost_usd)
    # the same plan under two deadlines may cost the same up to the solver's rounding (a few ulps)
    slack = 1e-9 * costs[0]
    assert costs[0] + slack >= costs[1] and costs[1] + slack >= costs[2]


def test_budget_is_respected_and_pareto_frontier_descends() -> None:
    result = quote(
        QuoteRequest(workload="gpt2-xl-finetune", deadline_hours=24, budget_usd=10, pareto=True)
    )
    assert all(p.total_cost_usd <= 10 + 1e-6 for p in result.plans)
    frontier = result.to_dict()["frontier"]
    assert len(frontier) >= 2
    deadlines = [f["deadline_hours"] for f in frontier]
    costs = [f["total_cost_usd"] for f in frontier]
    assert deadlines == sorted(deadlines) and costs == sorted(costs, reverse=True)


def test_infeasible_deadline_names_the_fastest_plan() -> None:
    code, _, err = run("quote", "-w", "llama-2-70b-pretrain", "--deadline", "24h")
    assert code == 3
    assert "cannot be met" in err and "the fastest plan takes" in err
    assert "Traceback" not in err


def test_empty_offer_set_is_an_answer(tmp_path: Path) -> None:
    # a private price list with only a 16 GB card cannot hold a 7B full fine-tune
    offers = tmp_path / "tiny.csv"
    pd.DataFrame([offer_row(provider="mine", instance_type="t4", gpu_model="T4", gpu_count=1, gpu_memory_gib=16,
                            interconnect="none", fabric="ethernet")]).to_csv(offers, index=False)  # fmt: skip
    code, _, err = run(
        "quote",
        "-w",
        "llama-2-70b-finetune",
        "--deadline",
        "3d",
        "--provider",
        "mine",
        "--offers",
        str(offers),
    )
    assert code == 3
    assert "no configuration can run this workload" in err


def test_a_loaded_book_is_quoted_from_as_given(tmp_path: Path) -> None:
    # planner.api.Planner loads the offers once and hands the book to every quote
    offers = tmp_path / "mine.csv"
    pd.DataFrame([offer_row(provider="mine", instance_type="a100", gpu_model="A100-80GB",
                            gpu_count=8, gpu_memory_gib=80)]).to_csv(offers, index=False)  # fmt: skip
    book = load_offer_book([offers])
    request = QuoteRequest(workload="gpt2-xl-finetune", deadline_hours=24, providers=("mine",))
    result = quote(request, book=book)
    assert result.book is book
    assert {i.instance_type for p in result.plans for i in p.items} == {"a100"}
    with pytest.raises(ConfigError, match="unknown provider 'mine'"):
        quote(request)  # without the book the private offers are not there


def test_local_only_plan_on_owned_hardware() -> None:
    result = quote(
        QuoteRequest(
            workload="gpt2-xl-finetune",
            deadline_hours=72,
            providers=("none-of-them",) if False else (),
            gpus=("A100-80GB",),
            hardware=("8xa100-80gb",),
            local_cost_basis="sunk",
        )
    )
    owned = [p for p in result.plans if all(i.kind == "local" for i in p.items)]
    assert owned, "owned A100s at power-only cost must give an owned-only plan"
    assert owned[0].total_cost_usd < min(
        p.total_cost_usd for p in result.plans if all(i.kind == "cloud" for i in p.items)
    )


def test_parallel_sweep_uses_several_gangs() -> None:
    result = quote(QuoteRequest(workload="gpt2-finetune-sweep", deadline_hours=2))
    plan = result.plans[0]
    assert sum(i.pieces for i in plan.items) == result.workload.pieces
    assert plan.wall_hours <= 2 + 1e-6
    assert sum(i.gangs for i in plan.items) > 1  # one GPU alone would take longer than 2 h


def test_csv_and_markdown_formats() -> None:
    code, out, _ = run("quote", "-w", "gpt2-xl-finetune", "--deadline", "24h", "--format", "csv")
    assert code == 0
    frame = pd.read_csv(io.StringIO(out))
    assert {"plan", "provider", "instance_type", "cost_usd", "plan_total_cost_usd"} <= set(
        frame.columns
    )
    code, out, _ = run(
        "quote", "-w", "gpt2-xl-finetune", "--deadline", "24h", "--format", "markdown"
    )
    assert code == 0 and out.startswith("## Quote for gpt2-xl-finetune") and "| provider" in out


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("--workload", "gpt2-xl-finetune", "--deadline", "soon"), "cannot read deadline 'soon'"),
        (("--workload", "gpt2-xxl-finetune", "--deadline", "24h"), "did you mean"),
        (
            ("--workload", "gpt2-xl-finetune", "--deadline", "24h", "--gpu", "H100-SXM9"),
            "unknown GPU",
        ),
        (
            ("--workload", "gpt2-xl-finetune", "--deadline", "24h", "--discount", "aws=2"),
            "between 0 and 1",
        ),
    ],
)
def test_bad_inputs_exit_nonzero_without_traceback(args: tuple[str, ...], fragment: str) -> None:
    code, _, err = run("quote", *args)
    assert code == 2
    assert fragment in err
    assert "Traceback" not in err


def test_hardware_file_with_wrong_key(tmp_path: Path) -> None:
    bad = tmp_path / "rig.yaml"
    good = (
        Path(__file__).resolve().parent.parent
        / "scenarios"
        / "hardware"
        / "workstation-2xrtx4090.yaml"
    ).read_text()
    bad.write_text(good.replace("gpus_per_machine:", "gpus_per_machin:"))
    code, _, err = run(
        "quote", "-w", "gpt2-xl-finetune", "--deadline", "24h", "--hardware", str(bad)
    )
    assert code == 2
    assert str(bad) in err and "gpus_per_machin" in err
    assert "Traceback" not in err


def test_infeasible_error_is_raised_from_the_api() -> None:
    with pytest.raises(InfeasibleError):
        quote(QuoteRequest(workload="llama-2-70b-pretrain", deadline_hours=24))


def test_interconnect_need_reads_the_strategy() -> None:
    from planner.optimize.plans import Plan, PlanItem, Risk
    from planner.quoting.service import _interconnect_need

    def plan(strategy: str, gpi: int, instances: int) -> Plan:
        item = PlanItem(
            "cloud",
            "aws",
            "r",
            "p5",
            "H100",
            gpi,
            instances,
            "on-demand",
            1,
            1,
            1,
            1,
            strategy=strategy,
        )
        return Plan("x", (item,), 0, 0, 1, 1, 2, Risk(0, 0, 1, 1))

    assert "tensor or context parallel" in _interconnect_need(
        plan("DP16 + ZeRO-3/FSDP + TP4", 8, 8)
    )
    # a context-parallel KV ring inside an instance wants NVLink too
    assert _interconnect_need(plan("DP2 + ZeRO-1 + CP4", 8, 1)).startswith("NVLink/NVSwitch")
    assert "EFA/InfiniBand" in _interconnect_need(plan("DP16 + ZeRO-3/FSDP + TP4", 8, 8))
    assert _interconnect_need(plan("DP8 + ZeRO-1", 8, 1)).startswith("PCIe or better")
    assert _interconnect_need(plan("DP1", 1, 1)) == "none (single GPU)"


def test_a_job_of_a_few_tokens_is_planned_as_at_least_the_one_minute_cloud_minimum(
    tmp_path: Path,
) -> None:
    """The estimator puts one step at microseconds; the MILP once returned an empty plan for
    it (no instance, $0) and the quote crashed reading its first item (10 tokens then; fewer than
    a step is refused as a unit slip since sweep 17)."""
    from planner.units import MIN_BILLED_HOURS
    from planner.workload import load_workload

    tiny = load_workload("gpt2-xl-finetune").variant(data={"tokens": 32768})  # one step
    result = quote(QuoteRequest(workload=tiny, deadline_hours=24, providers=("lambda",)))
    cheapest = result.plans[0]
    assert cheapest.items and cheapest.total_cost_usd > 0
    assert cheapest.wall_hours >= MIN_BILLED_HOURS
