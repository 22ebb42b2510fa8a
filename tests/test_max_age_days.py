"""The staleness threshold for prices is a whole number of days from 0 to a hundred years, on the
command line, in its environment variable and in the Python API (was: 99999999999 days taken,
which silences every stale-price warning, a typo for 99)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import planner
from planner.catalog import MAX_MAX_AGE_DAYS
from planner.cli import main
from planner.errors import ConfigError


@pytest.mark.parametrize("days", [str(MAX_MAX_AGE_DAYS + 1), "99999999999"])
def test_the_option_refuses_more_than_a_hundred_years(days: str) -> None:
    result = CliRunner().invoke(main, ["prices", "status", "--max-age-days", days])
    assert result.exit_code == 2
    assert "36500" in result.output and "Traceback" not in result.output


def test_the_option_takes_a_hundred_years() -> None:
    result = CliRunner().invoke(
        main, ["prices", "status", "--max-age-days", str(MAX_MAX_AGE_DAYS), "--format", "json"]
    )
    assert result.exit_code == 0, result.output


def test_the_variable_is_blamed_for_its_own_value() -> None:
    result = CliRunner().invoke(
        main, ["prices", "status"], env={"PLANNER_MAX_PRICE_AGE_DAYS": "1000000"}
    )
    assert result.exit_code == 2
    assert "PLANNER_MAX_PRICE_AGE_DAYS" in result.output and "at most 36,500" in result.output


@pytest.mark.parametrize("days", [-1, MAX_MAX_AGE_DAYS + 1, 10**12, 1.5, "90"])
def test_the_api_refuses_what_is_no_threshold(days: object) -> None:
    with pytest.raises(ConfigError, match="whole number of days >= 0") as caught:
        planner.prices_status(max_age_days=days)
    assert caught.value.key_path == "max_age_days"
