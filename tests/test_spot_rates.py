"""Spot interruption rates in plans: a published rate is used as it is; where the prices carry
none, the plan says the rate is the planner's assumption and why (issue 13)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from planner.cli import main
from planner.optimize.spot import DEFAULT_INTERRUPTION_PCT
from tests.conftest import offer_row


def _spot_item(tmp_path: Path, **row: object) -> tuple[dict[str, object], str]:
    prices = tmp_path / "prices.csv"
    pd.DataFrame([offer_row(as_of="2026-11-20", **row)]).to_csv(prices, index=False)
    args = ["quote", "--workload", "gpt2-xl-finetune", "--deadline", "48h", "--offers", str(prices)]
    # only the row written here: its provider, region and GPU
    args += [
        "--provider",
        str(row.get("provider", "aws")),
        "--region",
        str(row.get("region", "us-east-1")),
    ]
    args += ["--gpu", "A100-40GB"]
    text = CliRunner().invoke(main, args)
    assert text.exit_code == 0, text.output
    doc = CliRunner().invoke(main, [*args, "--format", "json"])
    assert doc.exit_code == 0, doc.output
    items = [i for p in json.loads(doc.stdout)["plans"] for i in p["items"]]
    spot = next(i for i in items if i["purchase_option"] == "spot")
    return spot, text.stdout


def test_a_published_rate_is_used_and_not_called_an_assumption(tmp_path: Path) -> None:
    item, text = _spot_item(tmp_path, spot_interruption_pct=5.0)
    assert (item["interruption_pct"], item["interruption_published"]) == (5.0, True)
    assert "5%/month interruption rate," in text
    assert "assumed" not in text


@pytest.mark.parametrize(
    ("provider", "region", "why"),
    [
        ("aws", "us-east-1", "no Spot Advisor rate in these prices; a prices refresh reads it"),
        ("azure", "eastus", "Azure publishes no interruption rates"),
        ("gcp", "us-central1", "GCP publishes no interruption rates"),
    ],
)
def test_a_missing_rate_is_the_default_and_the_plan_says_so(
    tmp_path: Path, provider: str, region: str, why: str
) -> None:
    item, text = _spot_item(tmp_path, provider=provider, region=region)
    assert item["interruption_published"] is False
    assert item["interruption_pct"] == DEFAULT_INTERRUPTION_PCT
    assert f"{DEFAULT_INTERRUPTION_PCT:g}%/month interruption rate (assumed: {why})" in text
