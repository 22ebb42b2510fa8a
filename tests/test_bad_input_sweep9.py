"""Bad input the ninth sweep found: a continental amount (``1.234,5``) was told to be written as
``234.5``, a thousandth of it; ``1234 567`` was "grouped by spaces" with the fix ``1234567``, a
guess at what two numbers meant.

The product rule each test pins: bad input gets a clear error naming the file, the field and a
fix, a non-zero exit and no traceback, on the command line and in the library.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.config.currency import split_money
from planner.errors import ConfigError
from tests.cli_checks import assert_clean_error, invoke


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path / "data"))


# --- amounts of money with separators -------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "fix"),
    [
        ("1.234,5", "write 1234.5 "),  # was: "write 234.5", a thousandth
        ("1.234.567,89 EUR", "write 1234567.89 EUR"),  # dots group thousands
        ("1 234,50", "write 1234.50 "),  # a space groups them
        ("€1.234,5", "write 1234.5 EUR"),  # with a currency sign
    ],
)
def test_continental_amount_gets_the_whole_number_back(typed: str, fix: str) -> None:
    result = invoke("quote", "--workload", "gpt2-xl-finetune", "--budget", typed)
    assert_clean_error(result, "--budget", "decimal comma", fix)
    assert "write 234.5" not in result.stderr


def test_space_that_groups_no_thousands_is_not_joined() -> None:
    """was: "its digits are grouped by spaces; write 1234567"."""
    result = invoke("quote", "--workload", "gpt2-xl-finetune", "--budget", "1234 567")
    assert_clean_error(result, "--budget", "a space splits the number", "without spaces")
    assert "1234567" not in result.stderr


def test_space_thousands_still_get_joined() -> None:
    result = invoke("quote", "--workload", "gpt2-xl-finetune", "--budget", "310 000 EUR")
    assert_clean_error(result, "--budget", "grouped by spaces", "write 310000 EUR")


def test_continental_amount_in_the_library_names_the_key() -> None:
    with pytest.raises(ConfigError) as caught:
        split_money("1.234,5", file="b.yaml", key_path="budget_usd")
    text = str(caught.value)
    assert "b.yaml" in text and "budget_usd" in text
    assert "1234.5" in (caught.value.hint or "")


# --- --max-age-days: periods and an upper bound ---------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "fix"),
    [
        ("3 months", "write 90 "),  # was: "write the number alone: 3", three days
        ("2 weeks", "write 14 "),
        ("1y", "write 365 "),
        ("90d", "write 90 "),
        ("36h", "1 or 2"),  # a day and a half: no whole number of days
    ],
)
def test_max_age_days_reads_a_period_into_days(typed: str, fix: str) -> None:
    result = invoke("prices", "status", "--max-age-days", typed)
    assert_clean_error(result, "--max-age-days", fix)
    assert "write the number alone" not in result.stderr


@pytest.mark.parametrize("typed", ["3651", "100000"])
def test_a_very_large_max_age_is_taken(typed: str) -> None:
    """A threshold of centuries is how a user silences the stale-price warning (and how
    PLANNER_MAX_PRICE_AGE_DAYS may be set in an environment): taken, not refused as a typo."""
    result = invoke("prices", "status", "--max-age-days", typed, "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert rows and not any(r["stale"] for r in rows)


# --- links written by another name: IB, nvl, sxm, 100GbE ------------------------------------------

HARDWARE = Path(__file__).resolve().parent.parent / "scenarios" / "hardware" / "8xh100-hgx.yaml"


def _hardware_with(tmp_path: Path, old: str, new: str) -> Path:
    text = HARDWARE.read_text(encoding="utf-8")
    assert old in text, old
    path = tmp_path / "hw.yaml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("line", "fix"),
    [
        ("fabric: IB", "did you mean 'infiniband'?"),  # was: no suggestion at all
        ("fabric: 400G NDR InfiniBand", "did you mean 'infiniband'?"),  # speed words passed over
        ("fabric: RoCEv2", "did you mean 'roce'?"),
        ("fabric: 100GbE", "did you mean 'ethernet'?"),
        ("fabric: nvlink", "write it under interconnect"),  # the other field's value
        ("fabric: tcpx", "did you mean 'gpudirect-tcp'?"),
    ],
)
def test_a_fabric_by_another_name_gets_its_value(tmp_path: Path, line: str, fix: str) -> None:
    path = _hardware_with(tmp_path, "fabric: infiniband", line)
    result = invoke("tco", "--hardware", str(path))
    assert_clean_error(result, "hw.yaml", "fabric", fix)


@pytest.mark.parametrize(
    ("line", "fix"),
    [
        ("interconnect: sxm", "did you mean 'nvswitch'?"),
        ("interconnect: nvl", "did you mean 'nvlink'?"),
        ("interconnect: IB", "write it under fabric"),
    ],
)
def test_an_interconnect_by_another_name_gets_its_value(
    tmp_path: Path, line: str, fix: str
) -> None:
    path = _hardware_with(tmp_path, "interconnect: nvswitch", line)
    result = invoke("tco", "--hardware", str(path))
    assert_clean_error(result, "hw.yaml", "interconnect", fix)


@pytest.mark.parametrize(
    ("option", "typed", "fix"),
    [
        ("--interconnect", "nvl", "did you mean 'nvlink'?"),  # was: the choices alone
        ("--interconnect", "sxm", "did you mean 'nvswitch'?"),
        ("--interconnect", "IB", "write it in --fabric"),
        ("--fabric", "IB", "did you mean 'infiniband'?"),
        ("--fabric", "100GbE", "did you mean 'ethernet'?"),
        ("--fabric", "nvlink", "write it in --interconnect"),
    ],
)
def test_estimate_link_options_suggest(option: str, typed: str, fix: str) -> None:
    result = invoke("estimate", "gpt2-xl-finetune", "--gpu", "H100", "--count", "16", option, typed)
    assert_clean_error(result, option, fix)


def test_offers_interconnect_suggests() -> None:
    result = invoke("offers", "--interconnect", "nvl", "--format", "json")
    assert_clean_error(result, "--interconnect", "did you mean 'nvlink'?", quiet_stdout=True)


def test_link_aliases_stay_off_other_fields() -> None:
    from planner.config.validation import value_alias_hint

    assert value_alias_hint("ib", ["adamw", "sgd"], "optimizer") is None


# --- whole numbers below their range ------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "fix"),
    [
        (("estimate", "gpt2-xl-finetune", "--gpu", "H100", "--count", "0"), "at least 1"),
        (("estimate", "gpt2-xl-finetune", "--gpu", "H100", "--count", "-1"), "at least 1"),
        (("prices", "status", "--max-age-days", "-1"), "at least 0, e.g. 90"),  # its default
    ],
)
def test_a_whole_number_out_of_range_gets_a_fix(args: tuple[str, ...], fix: str) -> None:
    """was: "0 is not in the range x>=1." and no fix."""
    result = invoke(*args)
    assert_clean_error(result, "not in the range", "write a whole number", fix)


# --- budget prices at or above on-demand: a warning, not an error ---------------------------------

BUDGET = Path(__file__).resolve().parent.parent / "scenarios" / "budgets" / "2027-ml-platform.yaml"


def test_a_commitment_dearer_than_on_demand_is_warned_about(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """was: silent; a 23.5 typed for 2.35 gave a plan without the commitment and no reason."""
    from planner.ownership.budget_spec import load_budget

    text = BUDGET.read_text(encoding="utf-8")
    old = "{name: reserved-1y, term_months: 12, usd_per_gpu_hour: 2.35}"
    assert old in text
    path = tmp_path / "b.yaml"
    path.write_text(text.replace(old, old.replace("2.35", "23.5")), encoding="utf-8")
    with caplog.at_level("WARNING", logger="planner"):
        spec = load_budget(str(path))
    assert spec.classes[0].commitments[0].usd_per_gpu_hour == pytest.approx(23.5)  # not refused
    said = [r.getMessage() for r in caplog.records if "classes[0].commitments[0]" in r.getMessage()]
    assert len(said) == 1, caplog.text
    assert "b.yaml" in said[0] and "not below on_demand_usd_per_gpu_hour (2.99)" in said[0]
    assert "check the figure" in said[0]


def test_a_spot_price_above_on_demand_is_warned_about_and_json_stays_clean(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    text = BUDGET.read_text(encoding="utf-8")
    old = "spot: {usd_per_gpu_hour: 1.47, max_share: 0.3}"
    assert old in text
    path = tmp_path / "b.yaml"
    path.write_text(text.replace(old, old.replace("1.47", "14.7")), encoding="utf-8")
    with caplog.at_level("WARNING", logger="planner"):
        result = invoke("budget", str(path), "--no-sensitivity", "--format", "json")
    assert result.exit_code == 0, result.output
    json.loads(result.stdout)  # the warning is not on stdout
    assert "classes[0].spot.usd_per_gpu_hour: 14.7" in caplog.text


def test_prices_below_on_demand_are_not_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    from planner.ownership.budget_spec import load_budget

    with caplog.at_level("WARNING", logger="planner"):
        load_budget(str(BUDGET))
    assert "classes[0]" not in caplog.text  # H100: spot and both commitments under 2.99


# --- a file's plain number written with continental separators ----------------------------------


@pytest.mark.parametrize(
    ("value", "fix"),
    [
        ('"310.000,00"', "write 310000.00: a decimal point"),  # was: "write a plain number"
        ('"1.234.567,8"', "write 1234567.8:"),
        ("310 000", "write 310000: no spaces in a number"),
    ],
)
def test_hardware_number_with_separators_gets_the_number(
    tmp_path: Path, value: str, fix: str
) -> None:
    path = _hardware_with(tmp_path, "capex_usd: 310000 ", f"capex_usd: {value} ")
    result = invoke("tco", "--hardware", str(path))
    assert_clean_error(result, "hw.yaml", "capex_usd", fix)
    assert "e.g. 1.5e9" not in result.stderr


# --- a provider called by its company's name ------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("amazon", "aws"),  # was: "did you mean lambda?"
        ("Google Cloud", "gcp"),
        ("microsoft", "azure"),
        ("lambda labs", "lambda"),
    ],
)
def test_offers_provider_by_company_name(typed: str, meant: str) -> None:
    result = invoke("offers", "--provider", typed, "--format", "json")
    assert_clean_error(result, "--provider", f"did you mean {meant}?", quiet_stdout=True)


def test_get_provider_by_company_name_in_the_library() -> None:
    from planner.errors import UnknownNameError
    from planner.providers import get_provider

    with pytest.raises(UnknownNameError) as caught:
        get_provider("Amazon")
    assert caught.value.suggestions == ["aws"]
    assert "did you mean aws?" in (caught.value.hint or "")


def test_a_misspelt_provider_still_gets_the_nearest_spelling() -> None:
    result = invoke("offers", "--provider", "awz")
    assert_clean_error(result, "--provider", "did you mean aws or azure?")


# --- a utilization written as a percentage ------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "fix"), [("80", "did you mean 0.8?"), ("100", "did you mean 1?")]
)
def test_utilization_as_a_percentage_gets_the_fraction(typed: str, fix: str) -> None:
    """was: "e.g. 0.6" alone for --utilization 80."""
    result = invoke("tco", "--hardware", "8xh100-hgx", "--utilization", typed)
    assert_clean_error(result, "--utilization", fix, "is a fraction")


def test_utilization_just_over_one_is_not_read_as_a_percentage() -> None:
    result = invoke("tco", "--hardware", "8xh100-hgx", "--utilization", "1.5")
    assert_clean_error(result, "--utilization", "e.g. 0.6")
    assert "did you mean" not in result.stderr


def test_a_network_in_offers_interconnect_is_not_sent_to_an_option_offers_lacks() -> None:
    # was: "write it in --fabric", an option `planner offers` does not have
    result = invoke("offers", "--interconnect", "IB")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "--fabric" not in result.output
    assert "infiniband wires machines together: this command has no option for it" in result.output
