"""The common offer table: validate_offers accepts good frames and names what is wrong in bad ones."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from planner.errors import OfferValidationError
from planner.schema import COLUMN_NAMES, validate_offers
from tests.conftest import offer_row


def test_good_frame_is_canonicalised(five_offers: pd.DataFrame) -> None:
    df = five_offers.copy()
    df.loc[0, "gpu_model"] = "nvidia a100-sxm4-40gb"  # an alias
    df.loc[0, "provider"] = "AWS"
    out = validate_offers(df)
    assert list(out.columns) == list(COLUMN_NAMES)
    assert out.loc[0, "gpu_model"] == "A100-40GB"
    assert out.loc[0, "provider"] == "aws"
    # derived column: total GPU memory = count x per-GPU memory
    assert out.loc[0, "gpu_memory_total_gib"] == 8 * 40.0
    assert out["gpu_count"].dtype == "int64"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"price_on_demand_usd_per_hour": -1.0}, "negative value"),  # negative price
        (
            {"price_on_demand_usd_per_hour": None},
            "required value is missing",
        ),  # missing required price
        (
            {"price_spot_usd_per_hour": "cheap"},
            "not a number",
        ),  # bad unit / text in a number column
        ({"gpu_model": "H100-SXM9"}, "unknown GPU model"),  # unknown GPU
        ({"interconnect": "carrier-pigeon"}, "is not one of"),  # bad enum
        ({"as_of": "yesterday"}, "as_of must be a date"),  # bad date
        ({"gpu_count": 2.5}, "whole number"),  # fractional count
        ({"source": ""}, "required value is missing"),  # provenance is mandatory
    ],
)
def test_bad_values_name_row_and_column(
    five_offers: pd.DataFrame, change: dict[str, Any], message: str
) -> None:
    df = five_offers.astype(object)
    for col, value in change.items():
        df.loc[2, col] = value
    with pytest.raises(OfferValidationError) as info:
        validate_offers(df, source="prices.csv")
    text = str(info.value)
    assert message in text
    assert "prices.csv" in text
    assert "row 4" in text  # third data row = file row 4 (header is row 1)
    assert repr(next(iter(change))) in text


def test_missing_and_unknown_columns() -> None:
    df = pd.DataFrame([offer_row()]).drop(columns=["price_on_demand_usd_per_hour"])
    with pytest.raises(OfferValidationError, match="missing required column"):
        validate_offers(df)
    df = pd.DataFrame([offer_row(price_ondemand=3.0)])
    with pytest.raises(OfferValidationError, match="did you mean 'price_on_demand_usd_per_hour'"):
        validate_offers(df)


def test_duplicate_keys_rejected(five_offers: pd.DataFrame) -> None:
    df = pd.concat([five_offers, five_offers.iloc[[1]]], ignore_index=True)
    with pytest.raises(
        OfferValidationError, match=r"duplicate offer key aws/us-east-1/p4de.24xlarge"
    ):
        validate_offers(df)


def test_optional_columns_get_defaults() -> None:
    row = offer_row()
    for optional in ("fabric", "price_basis_reserved", "vcpus", "price_spot_usd_per_hour"):
        row.pop(optional)
    out = validate_offers(pd.DataFrame([row]))
    assert out.loc[0, "fabric"] == "ethernet"
    assert out.loc[0, "price_basis_reserved"] == "none"
    assert out["price_spot_usd_per_hour"].isna().all()
