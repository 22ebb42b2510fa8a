"""`--currency` on quote, offers and gpus: every money figure in the chosen currency, at the
bundled rate table's rate, with the rate's date; `--budget` read in that currency."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from planner.cli import main
from planner.config.currency import load_fx_rates
from planner.optimize.plans import Plan, Risk
from planner.reports.formatting import Money
from planner.reports.quote_doc import plan_title

QUOTE = ("quote", "--workload", "gpt2-xl-finetune", "--deadline", "24h")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def quote_json(*extra: str) -> dict[str, Any]:
    code, out, err = run(*QUOTE, "--format", "json", *extra)
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


@pytest.fixture(scope="module")
def usd() -> dict[str, Any]:
    return quote_json()


def keys(record: Any) -> set[str]:
    """Every key of a JSON record, at any depth."""
    if isinstance(record, dict):
        return set(record) | {k for v in record.values() for k in keys(v)}
    if isinstance(record, list):
        return {k for v in record for k in keys(v)}
    return set()


def test_json_in_euro_is_the_usd_quote_at_the_tables_rate(usd: dict[str, Any]) -> None:
    eur = quote_json("--currency", "eur")
    table = load_fx_rates()
    per_usd = 1 / table.rate("EUR")
    assert eur["currency"] == {
        "code": "EUR",
        "per_usd": pytest.approx(per_usd),
        "as_of": table.as_of,
        "source": table.source,
    }
    money = {k: v for k, v in eur.items() if k != "currency"}  # the rate itself is per_usd
    assert not any("usd" in k.split("_") for k in keys(money)), "every money key is renamed"
    assert len(eur["plans"]) == len(usd["plans"])
    for e, u in zip(eur["plans"], usd["plans"], strict=True):
        assert e["total_cost_eur"] == pytest.approx(u["total_cost_usd"] * per_usd)
        for ei, ui in zip(e["items"], u["items"], strict=True):
            assert ei["price_eur_per_hour"] == pytest.approx(ui["price_usd_per_hour"] * per_usd)
            assert ei["hours"] == ui["hours"], "only money changes"
        assert e["title"].count("$") == 0


def test_fastest_title_names_its_cap_and_its_multiple_of_the_cheapest(usd: dict[str, Any]) -> None:
    cheapest = usd["plans"][0]["total_cost_usd"]
    fastest = [p for p in usd["plans"] if p["label"] == "fastest within budget"]
    assert fastest, "the headline quote has a fastest-within-budget plan"
    (plan,) = fastest
    assert plan["budget_usd"] == pytest.approx(1.25 * cheapest)
    assert plan["title"] == f"fastest within ${1.25 * cheapest:,.2f} (1.25x the cheapest)"


def test_terminal_and_csv_show_the_chosen_currency_only() -> None:
    code, out, err = run(*QUOTE, "--currency", "GBP")
    assert code == 0, err
    assert "£" in out and "$" not in out
    table = load_fx_rates()
    assert f"money in GBP at {1 / table.rate('GBP'):.4g} per USD" in out
    assert f"({table.source}, {table.as_of})" in out
    code, out, err = run(*QUOTE, "--currency", "JPY", "--format", "csv")
    assert code == 0, err
    header = out.splitlines()[0].split(",")
    assert "cost_jpy" in header and "plan_total_cost_jpy" in header
    assert not [h for h in header if "usd" in h]


def test_a_bare_budget_is_read_in_the_currency() -> None:
    rate = load_fx_rates().rate("EUR")  # USD per EUR
    in_euro = quote_json("--currency", "EUR", "--budget", "3.5")
    assert in_euro["budget_eur"] == pytest.approx(3.5)
    spelled_out = quote_json("--budget", "3.5 EUR")
    assert spelled_out["budget_usd"] == pytest.approx(3.5 * rate)
    in_dollars = quote_json("--budget", f"{3.5 * rate!r}")
    assert [p["total_cost_usd"] for p in spelled_out["plans"]] == [
        p["total_cost_usd"] for p in in_dollars["plans"]
    ]
    # the budget caps the fastest plan: its title says it is the user's budget
    fastest = [p for p in spelled_out["plans"] if p["label"] == "fastest within budget"]
    assert fastest and fastest[0]["title"].endswith("(your budget)")
    assert fastest[0]["total_cost_usd"] <= 3.5 * rate + 1e-9


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (("--currency", "EUX"), ("--currency", "EUR")),
        (("--budget", "5 XYZ"), ("--budget",)),
        (("--budget", "-5"), ("--budget", "negative")),
        (("--budget", "five"), ("--budget", "80000 CNY")),
        (("--budget", "1e400"), ("--budget", "finite")),
    ],
)
def test_bad_money_options_are_clear_errors(args: tuple[str, ...], names: tuple[str, ...]) -> None:
    code, out, err = run(*QUOTE, *args)
    assert code != 0 and out == ""
    assert "Traceback" not in err
    for name in names:
        assert name in err


def test_report_quote_in_euro_names_the_rate_and_its_date() -> None:
    code, out, err = run("report", *QUOTE, "--currency", "EUR", "--format", "markdown")
    assert code == 0, err
    assert "€" in out
    assert f"({load_fx_rates().source}, {load_fx_rates().as_of})" in out


def _plan(**changes: Any) -> Plan:
    risk = Risk(spot_share=1.0, expected_interruptions=2.0, p_meet_deadline=0.496, slack_hours=0)
    return Plan(
        label=changes.pop("label", "cheapest"),
        items=(),
        switch_cost_usd=0.0,
        switches=0,
        total_cost_usd=changes.pop("total_cost_usd", 79_910.0),
        wall_hours=168.0,
        deadline_hours=168.0,
        risk=risk,
        **changes,
    )


def test_risky_title_states_the_saving_against_the_cheapest_recommended_plan() -> None:
    # the recommended plan costs 79,910 + 725 = 80,635; the risky one saves 725 of it, 0.899%
    risky = _plan(label="risky alternative", below_confidence=True, saving_usd=725.0)
    assert plan_title(risky, confidence_pct=90) == (
        "risky alternative (saves $725.00, 0.9%; 49.6% chance to meet the deadline, below 90%)"
    )
    half = Money("EUR", 0.5)
    assert plan_title(risky, half, 90).startswith("risky alternative (saves €362.50, 0.9%;")
    assert plan_title(_plan()) == "cheapest"


def test_near_puts_tied_lambda_prices_in_the_named_area() -> None:
    """Lambda lists one price in every region: by default the plan names us-east-1, with
    --near europe a European region at the same cost."""
    base = ("--provider", "lambda", "--top", "2")
    home = quote_json(*base)
    europe = quote_json(*base, "--near", "europe")
    assert [i["region"] for p in home["plans"] for i in p["items"]] == ["us-east-1"] * 2
    assert [p["total_cost_usd"] for p in europe["plans"]] == [
        p["total_cost_usd"] for p in home["plans"]
    ]
    assert {i["region"] for p in europe["plans"] for i in p["items"]} == {"europe-central-1"}
    code, out, err = run(*QUOTE, "--near", "eu-wst-1")
    assert code == 2 and out == "" and "did you mean eu-west-1" in err


def test_offers_table_in_euro_is_the_usd_price_list_at_the_rate() -> None:
    args = ("offers", "--gpu", "H100:8", "--provider", "aws", "--limit", "3")
    code, out, err = run(*args, "--format", "json")
    assert code == 0, err
    usd = json.loads(out)
    per_usd = 1 / load_fx_rates().rate("EUR")
    code, out, err = run(*args, "--currency", "EUR", "--period", "month")
    assert code == 0, err
    lines = out.splitlines()
    assert "on-demand €/mo" in lines[0] and "$" not in lines[0]
    for offer, line in zip(usd, lines[2:5], strict=True):
        shown = f"{round(offer['price_on_demand_usd_per_hour'] * 730 * per_usd, 2):,.6g}"
        assert shown in line.split()
    assert any(line.startswith("money in EUR at ") for line in lines)
    # JSON and CSV stay a USD price list that --offers reads back
    code, out, err = run(*args, "--currency", "EUR", "--format", "json")
    assert code == 0 and json.loads(out) == usd


def test_max_price_is_read_in_the_currency() -> None:
    per_usd = 1 / load_fx_rates().rate("GBP")
    code, out, err = run("offers", "--max-price", "1", "--currency", "GBP", "--format", "json")
    assert code == 0, err
    prices = [o["price_usd_per_hour"] for o in json.loads(out)]
    assert prices and max(prices) * per_usd <= 1.0
    code, out, err = run("offers", "--max-price", "1", "--format", "json")
    assert code == 0, err
    assert len(json.loads(out)) != len(prices), "£1 and $1 are different caps on this table"


def test_gpus_in_yen_rename_and_convert_the_price() -> None:
    code, out, err = run("gpus", "--format", "json")
    assert code == 0, err
    usd = {g["name"]: g["cheapest_on_demand_usd_per_gpu_hour"] for g in json.loads(out)}
    code, out, err = run("gpus", "--format", "json", "--currency", "JPY")
    assert code == 0, err
    jpy = {g["name"]: g["cheapest_on_demand_jpy_per_gpu_hour"] for g in json.loads(out)}
    per_usd = 1 / load_fx_rates().rate("JPY")
    assert usd["T4"] is not None and jpy["T4"] == pytest.approx(usd["T4"] * per_usd)
    assert {k for k, v in usd.items() if v is None} == {k for k, v in jpy.items() if v is None}
