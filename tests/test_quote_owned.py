"""Owned hardware in every quote (issue 16): a line per owned machine type saying what it would do
alone and why the plans use it or not; --provider owned and --owned-only restrict to it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

import planner
from planner.cli import main
from planner.errors import ConfigError
from planner.optimize.plans import STARTUP_HOURS

HARDWARE = ("workstation-rtx3060", "8xh100-hgx", "workstation-rtx4090")


def quote(**fields: Any) -> planner.QuoteResult:
    return planner.quote(**{"workload": "gpt2-pretrain", "deadline_hours": 504, **fields})


def test_every_owned_machine_gets_a_line_with_its_reason() -> None:
    result = quote(hardware=HARDWARE, top=3)
    lines = {o.hardware: o for o in result.owned}
    assert set(lines) == set(HARDWARE)
    used = {i.instance_type for p in result.plans for i in p.items if i.kind == "local"}
    for name, line in lines.items():
        assert line.used == (name in used)
        assert line.status == ("in-plan" if line.used else "dearer")
    # the RTX 3060 alone: its hours and its cost at the amortised rate, computed by hand
    rtx = lines["workstation-rtx3060"]
    est = planner.estimate("gpt2-pretrain", "RTX3060", 1)
    assert rtx.machines_used == 1
    assert rtx.hours == pytest.approx(est.wall_hours + STARTUP_HOURS, rel=1e-6)
    assert rtx.cost_usd is not None and rtx.cost_usd > result.plans[0].total_cost_usd


def test_a_machine_too_slow_or_too_small_says_so() -> None:
    slow = quote(hardware=("workstation-rtx3060",), deadline_hours=12).owned[0]
    assert slow.status == "too-slow" and slow.hours is None
    assert slow.fastest_hours is not None and slow.fastest_hours > 12
    small = planner.quote(
        workload="llama-2-70b-finetune", deadline_hours=720, hardware=("workstation-rtx3060",)
    ).owned[0]
    assert small.status == "cannot-run" and not small.used and "GiB" in small.why_not


def test_owned_only_plans_on_your_machines_and_needs_some() -> None:
    result = quote(hardware=("workstation-rtx4090",), providers=("owned",))
    assert all(i.kind == "local" for p in result.plans for i in p.items)
    with pytest.raises(ConfigError, match="your own machines, and none were given") as caught:
        quote(providers=("owned",))
    assert "hardware=(...) in Python" in str(caught.value.hint)
    args = ["quote", "-w", "gpt2-pretrain", "--deadline", "3w", "--owned-only"]
    out = CliRunner().invoke(main, [*args, "--hardware", "workstation-rtx4090", "--format", "json"])
    assert out.exit_code == 0, out.output
    record = json.loads(out.stdout)
    assert record["owned"][0]["used"] is True and record["owned"][0]["in_plans"] == [1]
    assert "Owned hardware" in CliRunner().invoke(main, [*args, "--hardware", "8xh100-hgx"]).stdout
    assert {i["provider"] for p in record["plans"] for i in p["items"]} == {"owned"}
