"""Bad input the twentieth sweep found: a credential written into a file was answered with the
nearest valid key ("api_key: did you mean 'capex'?"); a mirror URL with a user and password
printed the password in its error (tests/test_providers_http.py); a price list's reserved price
beside no basis was marked "none", and a median spot price below the cheapest was read as given;
a snapshot missing one of its files, an unknown price-list column and an unknown calibration id
said nothing of the fix.

The product rule each test pins: bad input gets a clear error naming the field and a fix, no
secret is ever printed, and no result is silently wrong.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import planner
from planner.api import OfferFilter
from planner.catalog.store import bundled_snapshot_root, list_snapshots
from planner.errors import ConfigError, is_credential_name
from tests.cli_checks import assert_clean_error, own_data_dir, run

pytestmark = pytest.mark.usefixtures("own_data_dir")
__all__ = ["own_data_dir"]  # the fixture, imported for pytestmark

SECRET = "sk-live-0123456789abcdef"
HARDWARE = Path(__file__).resolve().parents[1] / "scenarios" / "hardware" / "8xh100-hgx.yaml"
PRICE_HEADER = (
    "provider,region,instance_type,gpu_model,gpu_count,gpu_memory_gib,interconnect,"
    "price_on_demand_usd_per_hour"
)
PRICE_ROW = "acme,us-east,acme.h100x8,H100,8,80,nvswitch,20"
TAIL = ("source,as_of", "acme quote,2026-11-20")


def _price_list(tmp_path: Path, columns: dict[str, str]) -> Path:
    """A one-row price list with ``columns`` (name -> cell) beside the required ones."""
    header = ",".join([PRICE_HEADER, *columns, TAIL[0]])
    row = ",".join([PRICE_ROW, *columns.values(), TAIL[1]])
    path = tmp_path / "prices.csv"
    path.write_text(f"{header}\n{row}\n", encoding="utf-8")
    return path


# --- a credential written into a file ------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "credential"),
    [
        ("api_key", True),
        ("apiKey", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("aws_access_key_id", True),
        ("hf_token", True),
        ("password", True),
        ("client-secret", True),
        ("gcp service account", True),
        ("tokens", False),  # a workload's data.tokens misplaced is no credential
        ("eval_tokens", False),
        ("max_tokens", False),
        ("key", False),
        ("capex", False),
    ],
)
def test_a_credential_name_is_told_from_a_field(name: str, credential: bool) -> None:
    assert is_credential_name(name) is credential


def test_a_credential_in_a_hardware_file_is_refused_without_its_value(tmp_path: Path) -> None:
    path = tmp_path / "box.yaml"
    path.write_text(HARDWARE.read_text(encoding="utf-8") + f"api_key: {SECRET}\n")
    out = run("tco", "--hardware", str(path))
    assert_clean_error(out, "api_key: unknown key", "remove api_key", "hold no credentials")
    assert "capex" not in out.stderr  # was: "did you mean 'capex'?"
    assert SECRET not in out.output


def test_a_token_in_a_workload_file_is_refused_by_the_library(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(
        f"name: job\nkind: training\nmodel: gpt2\nhf_token: {SECRET}\ndata:\n  tokens: 1e9\n"
    )
    with pytest.raises(ConfigError) as info:
        planner.load_workload(str(path))
    assert info.value.key_path == "hf_token"
    assert info.value.hint is not None and "hold no credentials" in info.value.hint
    assert SECRET not in str(info.value) + info.value.hint


def test_a_credential_column_in_a_price_list_is_refused_without_its_value(tmp_path: Path) -> None:
    path = _price_list(tmp_path, {"api_key": SECRET})
    out = run("offers", "--offers", str(path))
    assert_clean_error(out, "unknown column(s) 'api_key'", "remove api_key", exit_code=2)
    assert SECRET not in out.output


def test_an_unknown_price_list_column_says_where_the_columns_are(tmp_path: Path) -> None:
    # was: "unknown column(s) 'notes' (did you mean 'zones'?)" and no hint
    out = run("offers", "--offers", str(_price_list(tmp_path, {"notes": "hi"})))
    assert_clean_error(out, "unknown column(s) 'notes'", "planner offers --format csv", exit_code=2)


# --- a price list's prices that contradict each other -------------------------------------------


def _offer(tmp_path: Path, columns: dict[str, str]) -> dict[str, Any]:
    path = _price_list(tmp_path, columns)
    rows = planner.offers(OfferFilter(providers=("acme",)), offers_files=[path]).offers
    assert len(rows) == 1
    return dict(rows.iloc[0])


def test_a_reserved_price_with_no_basis_is_a_listed_one(tmp_path: Path) -> None:
    # was: price_basis_reserved "none" beside the 1-year price of $14/h the same row gave
    offer = _offer(tmp_path, {"price_reserved_1y_usd_per_hour": "14"})
    assert offer["price_reserved_1y_usd_per_hour"] == 14.0
    assert offer["price_basis_reserved"] == "listed"
    # a row without one has none, and a basis given is kept
    assert _offer(tmp_path, {})["price_basis_reserved"] == "none"
    derived = {"price_reserved_3y_usd_per_hour": "9", "price_basis_reserved": "derived"}
    assert _offer(tmp_path, derived)["price_basis_reserved"] == "derived"


@pytest.mark.parametrize(
    ("columns", "field"),
    [
        (
            {"price_reserved_1y_usd_per_hour": "14", "price_basis_reserved": "none"},
            "price_basis_reserved",
        ),
        (
            {"price_savings_plan_3y_usd_per_hour": "9", "price_basis_savings_plan": "none"},
            "price_basis_savings_plan",
        ),
    ],
    ids=["reserved", "savings-plan"],
)
def test_a_price_beside_a_basis_of_none_is_refused(
    tmp_path: Path, columns: dict[str, str], field: str
) -> None:
    out = run("offers", "--offers", str(_price_list(tmp_path, columns)))
    assert_clean_error(
        out, f"column '{field}'", "says the row has none", "or leave the", exit_code=2
    )


def test_a_median_spot_price_below_the_cheapest_is_refused(tmp_path: Path) -> None:
    columns = {"price_spot_usd_per_hour": "8", "price_spot_median_usd_per_hour": "6"}
    out = run("offers", "--offers", str(_price_list(tmp_path, columns)))
    assert_clean_error(
        out,
        "column 'price_spot_median_usd_per_hour'",
        "$6/h is below the cheapest",
        "swap them",
        exit_code=2,
    )
    # the right way round is read as given
    swapped = {"price_spot_usd_per_hour": "6", "price_spot_median_usd_per_hour": "8"}
    offer = _offer(tmp_path, swapped)
    assert (offer["price_spot_usd_per_hour"], offer["price_spot_median_usd_per_hour"]) == (6, 8)


# --- a snapshot missing one of its files --------------------------------------------------------


def test_a_snapshot_missing_a_provider_file_names_the_fix(tmp_path: Path) -> None:
    (bundled,) = list_snapshots(bundled_snapshot_root())
    copy = tmp_path / bundled.name
    shutil.copytree(bundled, copy)
    (copy / "offers-gcp.csv").unlink()
    out = run("offers", "--snapshot", str(copy), "--gpu", "H100")
    assert_clean_error(
        out,
        "offers-gcp.csv: cannot read",
        "lists it as gcp's",
        "planner prices refresh --provider gcp",
        exit_code=1,  # a snapshot's data, not a command line, is wrong
    )


# --- an unknown calibration id ------------------------------------------------------------------


def _record() -> str:
    return str(planner.calibrate("gpt2-finetune", "H100", measured_step_seconds=0.5)["id"])


def test_removing_by_workload_name_names_its_runs() -> None:
    ident = _record()
    out = run("calibrate", "remove", "gpt2-finetune")
    assert_clean_error(
        out,
        "unknown calibration 'gpt2-finetune'",
        "remove takes a run's id",
        f"{ident} (gpt2-finetune on 1 x H100, recorded ",
    )
    # the id it names removes the run
    assert run("calibrate", "remove", ident).exit_code == 0
    assert planner.calibrations() == []


def test_an_unknown_id_lists_the_runs_with_what_they_were() -> None:
    ident = _record()
    out = run("calibrate", "remove", "zz")
    assert_clean_error(out, "unknown calibration 'zz'", f"recorded runs: {ident} (gpt2-finetune")


def test_a_near_id_is_suggested_with_what_it_was() -> None:
    ident = _record()
    out = run("calibrate", "remove", "c9")
    assert_clean_error(out, "unknown calibration 'c9'", f"did you mean {ident} (gpt2-finetune on 1")
