"""The common offer table: validate_offers accepts good frames and names what is wrong in bad ones."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from planner.errors import OfferValidationError
from planner.schema import COLUMN_NAMES, empty_offers, validate_offers
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
    # the row gives reserved prices: they are the listed ones (was "none", beside them)
    assert out.loc[0, "price_basis_reserved"] == "listed"
    assert out["price_spot_usd_per_hour"].isna().all()
    for reserved in ("price_reserved_1y_usd_per_hour", "price_reserved_3y_usd_per_hour"):
        row.pop(reserved)
    assert validate_offers(pd.DataFrame([row])).loc[0, "price_basis_reserved"] == "none"


# The checks below pin behaviour of the column-wise validator (validate_offers works on whole
# columns, parses each distinct date once and finds duplicate keys in one pass).


def _rows(n: int, **overrides: object) -> pd.DataFrame:
    """n valid offers with distinct instance types, as a CSV reader would hand them over."""
    return pd.DataFrame([offer_row(instance_type=f"t{i}", **overrides) for i in range(n)])


def test_blank_number_is_missing_not_text() -> None:
    df = _rows(3).astype(object)
    df.loc[1, "price_spot_usd_per_hour"] = "   "  # optional: blank means no spot price
    out = validate_offers(df)
    assert out["price_spot_usd_per_hour"].isna().tolist() == [False, True, False]
    df.loc[2, "price_on_demand_usd_per_hour"] = " "  # required: blank is a missing value
    with pytest.raises(OfferValidationError, match="required value is missing") as info:
        validate_offers(df)
    assert "row 4" in str(info.value)


def test_text_among_numbers_is_reported_with_its_value_and_row() -> None:
    df = _rows(4).astype(object)
    df.loc[3, "vcpus"] = "96 vCPUs"
    with pytest.raises(OfferValidationError, match=r"not a number \('96 vCPUs'\)") as info:
        validate_offers(df)
    assert "row 5" in str(info.value) and "'vcpus'" in str(info.value)


def test_one_bad_date_among_many_shared_ones_names_its_row() -> None:
    df = _rows(60)  # many rows share one date (each distinct date is parsed once)
    df.loc[41, "as_of"] = "2026-02-30"  # no such day
    with pytest.raises(OfferValidationError, match="as_of must be a date") as info:
        validate_offers(df)
    assert "row 43" in str(info.value)


def test_duplicate_key_is_found_after_case_folding_and_strip() -> None:
    df = _rows(3)
    df.loc[2, ["provider", "instance_type"]] = ["AWS", " t0 "]  # the same key as row 2 of the file
    with pytest.raises(OfferValidationError, match="duplicate offer key aws/us-east-1/t0") as info:
        validate_offers(df)
    assert "row 4" in str(info.value) and "row 2" not in str(info.value)


def test_enum_error_shows_the_first_bad_value_in_lower_case() -> None:
    df = _rows(4)
    df.loc[[1, 3], "fabric"] = ["Carrier-Pigeon", "smoke"]
    with pytest.raises(OfferValidationError, match="'carrier-pigeon' is not one of") as info:
        validate_offers(df)
    assert "row 3, 5" in str(info.value)


def test_zero_rows_give_the_empty_table_dtypes() -> None:
    out = validate_offers(pd.DataFrame(columns=list(COLUMN_NAMES)))
    assert len(out) == 0
    assert out.dtypes.to_dict() == empty_offers().dtypes.to_dict()
