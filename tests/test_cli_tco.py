"""`planner tco` and `planner budget` through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from planner.cli import main
from planner.cli.tco import budget_command, tco_command
from tests.conftest import offer_row

H100_FILE = "scenarios/hardware/8xh100-hgx.yaml"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def private_h100(tmp_path: Path, usd_per_gpu_hour: float) -> str:
    path = tmp_path / "mine.csv"
    row = offer_row(
        provider="neocloud",
        region="us-1",
        instance_type="h100x8",
        gpu_model="H100",
        gpu_memory_gib=80.0,
        price_on_demand_usd_per_hour=8 * usd_per_gpu_hour,
        price_spot_usd_per_hour=None,
        price_reserved_1y_usd_per_hour=None,
        price_reserved_3y_usd_per_hour=None,
        price_basis_reserved="none",
    )
    pd.DataFrame([row]).to_csv(path, index=False)
    return str(path)


def test_commands_have_docstring_examples() -> None:
    for command in (tco_command, budget_command):
        assert "Example: planner " in (command.help or "")


def test_tco_table_reports_worked_example() -> None:
    code, out, _ = run("tco", "--hardware", H100_FILE, "--utilization", "0.6", "--years", "4")
    assert code == 0
    # a year at 60% use: the worked example's 143,493 less 40% of the hours idling at 2.4 kW
    # instead of working at 8 kW (2,747 of power)
    assert "140,746" in out
    assert "2.048 USD" in out and "3.347 USD" in out
    assert "5.76 kW a machine on average (8 kW working, 2.4 kW idle)" in out
    assert "breakeven" in out and "cloud prices as of" in out


def test_tco_json_has_the_issue_keys() -> None:
    code, out, _ = run(
        "tco", "--hardware", "8xh100-hgx", "--utilization", "0.6", "--format", "json"
    )
    assert code == 0
    data = json.loads(out)
    assert {
        "capex_usd",
        "annual_cost_usd",
        "usd_per_gpu_hour",
        "usd_per_useful_gpu_hour",
        "comparisons",
    } <= set(data)
    assert data["capex_usd"] == 310000
    assert data["annual_cost_usd"]["support"] == pytest.approx(31000)
    total = data["annual_cost_usd"]["total"]  # at 60% use
    assert data["usd_per_useful_gpu_hour"] == pytest.approx(total / (8 * 8760 * 0.6))
    assert data["comparisons"], "the bundled snapshot has H100 offers"
    for c in data["comparisons"]:
        assert {
            "provider",
            "instance_type",
            "purchase_option",
            "cloud_usd_per_gpu_hour",
            "breakeven_utilization",
            "breakeven_months",
        } <= set(c)
        # owning costs A0 + u x A1 a year, A1 the energy of working rather than idling:
        # (8 - 2.4) kW x 1.4 x 8,760 h x $0.10 = 6,867.84
        a1 = 6_867.84
        a0 = total - 0.6 * a1
        assert c["breakeven_utilization"] == pytest.approx(
            a0 / (c["cloud_usd_per_gpu_hour"] * 8 * 8760 - a1)
        )


def test_tco_private_offers_file_sets_the_breakeven(tmp_path: Path) -> None:
    # a $2.35/GPU-h 1-yr neocloud price (cost-facts.md s2.4): breakeven ~87%
    code, out, _ = run(
        "tco", "--hardware", H100_FILE, "--offers", private_h100(tmp_path, 2.35), "--format", "json"
    )
    assert code == 0
    comparisons = json.loads(out)["comparisons"]
    # $2.35 undercuts every on-demand H100 of the bundled snapshot, so it is the one compared
    on_demand = next(c for c in comparisons if c["purchase_option"] == "on-demand")
    assert on_demand["provider"] == "neocloud"
    assert on_demand["breakeven_utilization"] == pytest.approx(0.87, abs=0.01)


def test_tco_currency_renames_json_keys_and_converts() -> None:
    code, out, _ = run(
        "tco", "--hardware", H100_FILE, "--no-cloud", "--currency", "eur", "--format", "json"
    )
    assert code == 0
    data = json.loads(out)
    assert "capex_usd" not in data
    assert data["capex_eur"] == pytest.approx(310000 / 1.0411)
    assert data["currency"]["code"] == "EUR" and data["currency"]["as_of"] == "2025-02-28"


def test_tco_csv_is_the_comparison_table() -> None:
    code, out, _ = run("tco", "--hardware", H100_FILE, "--format", "csv")
    assert code == 0
    assert out.splitlines()[0].startswith("provider,instance_type,region,purchase_option")


def test_tco_without_comparable_offers_says_so() -> None:
    code, out, _ = run("tco", "--hardware", "workstation-rtx3060", "--compare-gpu", "RTX3060")
    assert code == 0
    assert "no cloud offers with RTX3060" in out


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("--utilization", "1.5"), "--utilization: utilization must be in [0.01, 1]"),
        (("--utilization", "0"), "--utilization"),
        (("--currency", "EUD"), "unknown currency 'EUD'"),
        (("--compare-gpu", "H1000"), "unknown GPU 'H1000'"),
        (("--years", "-1"), "--years"),
    ],
)
def test_tco_bad_arguments_exit_nonzero_without_traceback(
    args: tuple[str, ...], fragment: str
) -> None:
    code, _, err = run("tco", "--hardware", H100_FILE, *args)
    assert code == 2
    assert fragment in err
    assert "Traceback" not in err


def test_tco_bad_hardware_file_names_file_and_key(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "gpu: H100\ngpus_per_machine: 8\ncapex_usd: -1\nlifetime_years: 4\npower_kw_avg: 1\n"
    )
    code, _, err = run("tco", "--hardware", str(path), "--no-cloud")
    assert code == 2
    assert f"error: {path}: capex_usd:" in err
    assert "Traceback" not in err


# --- planner budget -------------------------------------------------------------------------------

BUDGET_FILE = "scenarios/budgets/2027-ml-platform.yaml"


def test_budget_table_shows_strategies_and_months() -> None:
    code, out, _ = run("budget", BUDGET_FILE, "--no-sensitivity")
    assert code == 0
    assert "optimal mix" in out and "all on-demand" in out and "all owned" in out
    assert "2027-01" in out and "2029-12" in out  # 36 months
    assert "sensitivity" not in out


def test_budget_json_mix_is_cheapest() -> None:
    code, out, _ = run("budget", "2027-ml-platform", "--no-sensitivity", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["status"] == "optimal"
    totals = {s["strategy"]: s["total_usd"] for s in data["strategies"]}
    assert all(data["total_usd"] <= t + 1e-6 for t in totals.values() if t is not None)
    assert len(data["months"]) == 36 * 2  # two GPU classes


def test_budget_currency_and_csv() -> None:
    code, out, _ = run(
        "budget", BUDGET_FILE, "--no-sensitivity", "--currency", "GBP", "--format", "csv"
    )
    assert code == 0
    header = out.splitlines()[0]
    assert "cost_gbp" in header and "usd" not in header


def test_budget_bad_file_exits_nonzero_without_traceback(tmp_path: Path) -> None:
    path = tmp_path / "b.yaml"
    path.write_text(
        "horizon_months: 12\nclasses:\n  - gpu: H100\n    on_demand_usd_per_gpu_hour: -2\n"
    )
    code, _, err = run("budget", str(path))
    assert code == 2
    assert f"{path}: classes[0].on_demand_usd_per_gpu_hour:" in err
    assert "Traceback" not in err


def test_budget_bad_time_limit() -> None:
    code, _, err = run("budget", BUDGET_FILE, "--time-limit", "0")
    assert code == 2 and "--time-limit" in err


def test_tco_and_gpus_warn_on_stale_prices_on_stderr_only() -> None:
    """The bundled prices are years old on the frozen test day: both commands say so on stderr,
    and their JSON stays one clean document."""
    import json

    from click.testing import CliRunner

    from planner.cli import main

    for args in (["tco", "--hardware", "8xh100-hgx"], ["gpus"]):
        result = CliRunner().invoke(main, [*args, "--format", "json"])
        assert result.exit_code == 0, result.output
        json.loads(result.stdout)
        assert "warning:" in result.stderr and "days old" in result.stderr
        quiet = CliRunner().invoke(main, [*args, "--format", "json", "--max-age-days", "100000"])
        assert quiet.exit_code == 0, quiet.output  # a century: the warning silenced
        assert "warning:" not in quiet.stderr


def test_tco_power_cost_differs_at_25_and_100_percent_use() -> None:
    """Issue 16: power follows the utilization.  By hand for the 8x H100 server (load 8 kW, idle
    2.4 kW, PUE 1.4, $0.10/kWh, 8,760 h): 9,811.20 a year at 100%, (2 + 1.8) kW x 1,226.4 =
    4,660.32 at 25%."""
    power = {}
    for u in ("0.25", "1.0"):
        code, out, err = run("tco", "--hardware", H100_FILE, "--utilization", u, "--format", "json")
        assert code == 0, err
        power[u] = json.loads(out)["annual_cost_usd"]["power"]
    assert power == {"0.25": pytest.approx(4_660.32), "1.0": pytest.approx(9_811.20)}


def test_consumer_gpu_is_compared_with_the_nearest_cloud_gpu_by_default() -> None:
    """Issue 16: no cloud rents an RTX 4090 (165 dense TFLOPS, 24 GB); the offered GPU of nearest
    throughput with at least 24 GB is compared, and the output says which and why."""
    code, out, err = run("tco", "--hardware", "workstation-rtx4090", "--format", "json")
    assert code == 0, err
    record = json.loads(out)
    assert record["compare_gpu"] == "RTXA6000"  # 155 TFLOPS, 48 GB (an L4 is 121 TFLOPS)
    assert record["comparisons"]
    assert "nearest dense tensor throughput (155 vs 165 TFLOPS)" in record["compare_reason"]
    code, text, _ = run("tco", "--hardware", "workstation-rtx4090")
    assert "RTX4090 is not rented in the cloud; compared with RTXA6000" in text
    # --compare-gpu still decides
    code, out, _ = run(
        "tco", "--hardware", "workstation-rtx4090", "--compare-gpu", "H100", "--format", "json"
    )
    record = json.loads(out)
    assert (record["compare_gpu"], record["compare_reason"]) == ("H100", "")


def test_budget_warns_on_stale_prices_on_stderr_only() -> None:
    code, out, err = run(
        "budget", "scenarios/budgets/2027-ml-platform.yaml", "--no-sensitivity", "--format", "json"
    )
    assert code == 0
    json.loads(out)  # stdout is the document alone
    assert "budget file's cloud prices are" in err and "prices_as_of: 2024-01-01" in err
    code, _, err = run(
        "budget",
        "scenarios/budgets/2027-ml-platform.yaml",
        "--no-sensitivity",
        "--max-age-days",
        "100000",  # a very large threshold silences the warning: the bundled 2024 prices are not stale
    )
    assert code == 0 and "prices are" not in err
