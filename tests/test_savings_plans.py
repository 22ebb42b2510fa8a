"""Savings plans as their own purchase option (issue 13): columns, listing and quote candidates."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from planner.cli import main
from planner.optimize.candidates import CandidateOptions, _purchase_options
from planner.schema import PRICE_COLUMNS, PurchaseOption, validate_offers
from tests.conftest import offer_row

PLAN = {"price_savings_plan_1y_usd_per_hour": 24.0, "price_savings_plan_3y_usd_per_hour": 17.5}


def test_basis_defaults_to_listed_where_a_price_is_given() -> None:
    df = validate_offers(
        pd.DataFrame([offer_row(**PLAN), offer_row(instance_type="p4de.24xlarge")])
    )
    assert list(df["price_basis_savings_plan"]) == ["listed", "none"]
    assert df["price_savings_plan_3y_usd_per_hour"].iloc[0] == 17.5
    assert pd.isna(df["price_savings_plan_1y_usd_per_hour"].iloc[1])


def test_an_old_price_list_without_the_columns_still_reads() -> None:
    df = validate_offers(pd.DataFrame([offer_row()]))
    assert df["price_savings_plan_1y_usd_per_hour"].isna().all()
    assert list(df["price_basis_savings_plan"]) == ["none"]


def test_savings_plans_are_priced_wherever_reserved_terms_are() -> None:
    assert _purchase_options(CandidateOptions()) == [PurchaseOption.ON_DEMAND, PurchaseOption.SPOT]
    with_commitments = _purchase_options(CandidateOptions(include_reserved=True))
    assert with_commitments[2:] == [
        PurchaseOption.RESERVED_1Y,
        PurchaseOption.RESERVED_3Y,
        PurchaseOption.SAVINGS_PLAN_1Y,
        PurchaseOption.SAVINGS_PLAN_3Y,
    ]
    assert all(option in PRICE_COLUMNS for option in with_commitments)


def test_offers_lists_and_sorts_on_a_savings_plan(tmp_path: Path) -> None:
    prices = tmp_path / "prices.csv"
    rows = [
        offer_row(**PLAN),
        offer_row(instance_type="p4de.24xlarge", price_savings_plan_1y_usd_per_hour=20.0),
        offer_row(instance_type="p3.16xlarge", gpu_model="V100-16GB"),  # none: not listed
    ]
    pd.DataFrame(rows).to_csv(prices, index=False)
    runner = CliRunner()
    args = ["offers", "--offers", str(prices), "--provider", "aws"]
    table = runner.invoke(main, [*args, "--purchase", "savings-plan-1y"])
    assert table.exit_code == 0, table.output
    assert "sp-1y $/h" in table.stdout and "sp-3y $/h" in table.stdout
    body = [line for line in table.stdout.splitlines() if "xlarge" in line]
    assert [line.split()[0] if "aws" not in line else line.split()[2] for line in body][:2] == [
        "p4de.24xlarge",
        "p4d.24xlarge",
    ]
    assert "p3.16xlarge" not in table.stdout
    plain = runner.invoke(main, args)  # an on-demand listing keeps the savings-plan columns
    assert "sp-1y $/h" in plain.stdout
