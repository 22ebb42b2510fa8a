"""Quote input checked at the library boundary: bad values are ConfigErrors naming the field and
the fix, raised before any work; names in discounts and quotas must match the offers.  The CLI
shows a field as its option (``discounts (--discount)``).

Each case below was a bug: a PulpError, TypeError, IndexError or AttributeError traceback, an
InfeasibleError for a typo, or a discount or quota accepted and then silently ignored.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

import planner
from planner.cli import main
from planner.cli.params import Duration, Quota
from planner.errors import ConfigError, UnknownNameError
from planner.quoting.request import QuoteRequest

WORKLOAD = "gpt2-xl-finetune"
QUOTE = ("quote", "-w", WORKLOAD, "--deadline", "24h")


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def assert_usage_error(result: Result, *needles: str) -> None:
    """Exit code 2 (a ConfigError), no traceback, and every needle in the message."""
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in result.output, (needle, result.output)


# --- QuoteRequest fields ------------------------------------------------------------------------

BAD_FIELDS: list[tuple[dict[str, Any], tuple[str, ...]]] = [
    # NaN reached the MILP: PulpError "Cannot set constraint RHS to NaN/inf values"
    ({"deadline_hours": math.nan}, ("deadline_hours", "deadline_hours=24")),
    ({"deadline_hours": math.inf}, ("deadline_hours",)),
    ({"deadline_hours": 24, "budget_usd": math.nan}, ("budget_usd", "budget_usd=500")),
    # a duration string reached optimize/model.py: TypeError str / float; the hint converts it
    ({"deadline_hours": "24h"}, ("deadline_hours", "deadline_hours=24 ")),
    ({"deadline_hours": "3d"}, ("deadline_hours=72 ",)),
    ({"deadline_hours": True}, ("deadline_hours",)),
    # negative numbers answered InfeasibleError ("a -1 h deadline cannot be met")
    ({"deadline_hours": -1}, ("deadline_hours", "> 0")),
    ({"deadline_hours": 0}, ("deadline_hours", "> 0")),
    ({"deadline_hours": 24, "budget_usd": -1}, ("budget_usd", ">= 0")),
    ({"deadline_hours": 24, "budget_usd": "50"}, ("budget_usd",)),
    # top=0 ended in IndexError at plans[0]
    ({"deadline_hours": 24, "top": 0}, ("top", "e.g. 5")),
    ({"deadline_hours": 24, "top": 2.5}, ("top",)),
    ({"deadline_hours": 24, "top": True}, ("top",)),
    # a 200% discount made the quote pay the user (total cost -$7845)
    ({"deadline_hours": 24, "discounts": {"aws": 2}}, ("discounts", "0.12")),
    ({"deadline_hours": 24, "discounts": {"aws": math.nan}}, ("discounts",)),
    ({"deadline_hours": 24, "discounts": {"aws": -0.1}}, ("discounts",)),
    ({"deadline_hours": 24, "discounts": {"aws:p5": 0.1}}, ("discounts", "per provider")),
    ({"deadline_hours": 24, "discounts": ["aws=0.1"]}, ("discounts", "{'aws': 0.12}")),
    # a negative quota was accepted
    ({"deadline_hours": 24, "quotas": {"aws": -1}}, ("quotas", ">= 0")),
    ({"deadline_hours": 24, "quotas": {"aws": 1.5}}, ("quotas", "whole number")),
    ({"deadline_hours": 24, "quotas": {"aws:us-east-1:p5:x": 2}}, ("quotas", "aws:us-east-1:p5=2")),
    ({"deadline_hours": 24, "quotas": {"aws::p5": 2}}, ("quotas", "aws:p5=4")),
    # 500% interruption was accepted (the CLI's range stops at 100)
    ({"deadline_hours": 24, "max_interruption_pct": 500}, ("max_interruption_pct", "0 and 100")),
    ({"deadline_hours": 24, "max_interruption_pct": math.nan}, ("max_interruption_pct",)),
    # any text was accepted as the owned-hardware cost basis
    ({"deadline_hours": 24, "local_cost_basis": "x"}, ("local_cost_basis", "amortised", "sunk")),
    ({"deadline_hours": 24, "local_cost_basis": "amortized"}, ("did you mean amortised",)),
    # "no" is truthy: spot would have been allowed
    ({"deadline_hours": 24, "allow_spot": "no"}, ("allow_spot", "allow_spot=False")),
    # answered InfeasibleError "no configuration can run this workload"
    ({"deadline_hours": 24, "allow_spot": False, "spot_only": True}, ("spot_only", "allow_spot")),
    ({"deadline_hours": 24, "workload": ""}, ("workload", "planner workloads")),
    ({"deadline_hours": 24, "workload": 42}, ("workload", "WorkloadSpec")),
    ({"deadline_hours": 24, "hardware": (None,)}, ("hardware",)),
]


@pytest.mark.parametrize(("fields", "needles"), BAD_FIELDS, ids=[repr(f) for f, _ in BAD_FIELDS])
def test_a_bad_field_is_a_config_error_when_the_request_is_made(
    fields: dict[str, Any], needles: tuple[str, ...]
) -> None:
    fields = {"workload": WORKLOAD, **fields}
    with pytest.raises(ConfigError) as info:
        QuoteRequest(**fields)
    text = str(info.value)
    assert info.value.hint, text  # every one says how to fix it
    for needle in needles:
        assert needle in text, (needle, text)
    assert "--" not in text, text  # a notebook has fields, not the CLI's options


def test_the_cli_shows_a_field_as_its_option() -> None:
    # the library says "workload: ..."; `planner quote` names the option to change as well
    result = invoke("quote", "-w", " ", "--deadline", "24h")
    assert_usage_error(result, "error: workload (--workload): workload name is blank")


def test_an_unknown_cost_basis_lists_the_known_ones() -> None:
    with pytest.raises(UnknownNameError) as info:
        QuoteRequest(workload=WORKLOAD, deadline_hours=24, local_cost_basis="x")
    assert info.value.key_path == "local_cost_basis"


def test_good_values_pass_unchanged_and_a_bare_name_is_one_name() -> None:
    req = QuoteRequest(
        workload=Path("scenarios/workloads/gpt2-xl-finetune.yaml"),
        deadline_hours=24,
        budget_usd=0,
        discounts={"aws": 0.12},
        quotas={"aws:us-east-1:p5": 0},
        max_interruption_pct=100,
        local_cost_basis="sunk",
        hardware="8xh100-hgx",  # used to be read letter by letter: "unknown hardware file '8'"
        offers_files="private.csv",
        top=1,
    )
    assert req.deadline_hours == 24 and isinstance(req.deadline_hours, int)
    assert req.hardware == ("8xh100-hgx",) and req.offers_files == ("private.csv",)
    assert dict(req.quotas) == {"aws:us-east-1:p5": 0}


# --- how quote() is called ----------------------------------------------------------------------


def test_a_bare_workload_name_says_which_keywords_to_write() -> None:
    # was AttributeError: 'str' object has no attribute 'workload'
    with pytest.raises(ConfigError) as info:
        planner.quote(WORKLOAD)
    assert f"planner.quote(workload='{WORKLOAD}', deadline_hours=24)" in str(info.value)


def test_a_misspelt_keyword_suggests_the_field() -> None:
    # was TypeError: quote() got an unexpected keyword argument 'deadline'; then a ConfigError
    # refusing every keyword argument
    with pytest.raises(UnknownNameError) as info:
        planner.quote(workload=WORKLOAD, deadline="3d", budget=50)
    assert "unknown quote() keyword argument 'deadline'" in str(info.value)
    assert "did you mean deadline_hours?" in str(info.value)
    with pytest.raises(ConfigError, match="did you mean budget_usd"):
        planner.quote(workload=WORKLOAD, deadline_hours=24, budget=50)
    with pytest.raises(ConfigError, match="did you mean utilization"):
        planner.tco("8xh100-hgx", utilisation=0.6, with_cloud=False)  # type: ignore[call-arg]


def test_a_missing_deadline_is_a_config_error_naming_the_field() -> None:
    with pytest.raises(ConfigError) as info:
        planner.quote(workload=WORKLOAD)
    assert info.value.key_path == "deadline_hours"
    assert "deadline_hours=24" in str(info.value)


def plans(result: Any) -> list[Any]:
    """The plans without the solver's wall time, which differs from run to run."""
    return [replace(p, solve_seconds=0.0) for p in result.plans]


def test_keywords_a_request_and_a_request_with_changes_quote_alike() -> None:
    request = QuoteRequest(workload=WORKLOAD, deadline_hours=24, top=1)
    expected = plans(planner.quote(request))
    assert plans(planner.quote(workload=WORKLOAD, deadline_hours=24, top=1)) == expected
    assert plans(planner.quote(request=request)) == expected
    # keywords replace fields of the request given
    wider = planner.quote(request, top=2)
    assert wider.request.top == 2
    assert wider.plans[0].total_cost_usd == pytest.approx(expected[0].total_cost_usd)


# --- names in discounts and quotas, against the loaded offers -----------------------------------

BAD_NAMES: list[tuple[tuple[str, ...], tuple[str, ...]]] = [
    # each of these was accepted and then matched no offer, so it silently did nothing
    (("--discount", "awz=0.1"), ("--discount", "unknown provider 'awz'", "did you mean aws")),
    (("--quota", "awz=4"), ("--quota", "unknown provider 'awz'", "did you mean aws")),
    (("--quota", "aws:p9=4"), ("--quota", "instance family 'p9'", "did you mean p5")),
    (("--quota", "aws:us-est-1:p5=1"), ("--quota", "region 'us-est-1'", "us-east-1")),
    (("--quota", "gcp:us-central1:p5=1"), ("--quota", "'p5'", "known gcp us-central1")),
    # quotas count instances per family: the instance type is refused with its family
    (("--quota", "aws:p4d.24xlarge=1"), ("--quota", "instance type", "aws:p4d=1")),
    # malformed keys show the accepted forms
    (("--quota", "aws:us-east-1:p5:x=2"), ("--quota", "aws:p5=4", "aws:us-east-1:p5=2")),
    (("--quota", ":p5=2"), ("--quota", "aws:p5=4")),
    (("--quota", "aws=-1"), ("--quota", "whole number")),
    (("--discount", "aws:p5=0.1"), ("--discount", "per provider", "aws=0.12")),
    (("--deadline", "9" * 400 + "h"), ("--deadline", "24h")),  # read as float('inf')
]


@pytest.mark.parametrize(("args", "needles"), BAD_NAMES, ids=[" ".join(a) for a, _ in BAD_NAMES])
def test_cli_refuses_a_discount_or_quota_that_would_do_nothing(
    args: tuple[str, ...], needles: tuple[str, ...]
) -> None:
    result = invoke(*QUOTE, *args)
    assert_usage_error(result, *needles)
    assert '"plans"' not in result.stdout and "total" not in result.stdout.lower()


def test_report_quote_refuses_a_misspelt_provider_before_writing(tmp_path: Path) -> None:
    target = tmp_path / "quote.html"
    result = invoke("report", *QUOTE, "--quota", "lamda=1", "-o", str(target))
    assert_usage_error(result, "--quota", "did you mean lambda")
    assert not target.exists()


def test_library_names_are_checked_too() -> None:
    req = QuoteRequest(workload=WORKLOAD, deadline_hours=24, discounts={"gpc": 0.1})
    with pytest.raises(ConfigError, match="did you mean gcp"):
        planner.quote(req)


def test_a_provider_left_out_by_the_filter_may_still_have_a_quota() -> None:
    # the names are checked against every loaded offer, not only those --provider keeps
    result = invoke(*QUOTE, "--provider", "lambda", "--quota", "aws:p5=1", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["assumptions"]["quotas"] == {"aws:p5": 1}


def test_quota_names_match_the_offers_spelling() -> None:
    # parse_quotas lower-cases keys, and "azure:standard_nd96asr_v4" never matched the family
    # Standard_ND96asr_v4 that the quota lookup builds from the offer: the quota did nothing
    azure = (*QUOTE, "--provider", "azure", "--format", "json")
    free = invoke(*azure)
    capped = invoke(*azure, "--quota", "azure:standard_nd96asr_v4=0")
    assert free.exit_code == 0 and capped.exit_code == 0, (free.output, capped.output)

    def types(out: str) -> set[str]:
        return {i["instance_type"] for p in json.loads(out)["plans"] for i in p["items"]}

    assert "Standard_ND96asr_v4" in types(free.stdout)
    assert "Standard_ND96asr_v4" not in types(capped.stdout)
    quotas = json.loads(capped.stdout)["assumptions"]["quotas"]
    assert quotas == {"azure:Standard_ND96asr_v4": 0}


def test_parsers_keep_their_forms() -> None:
    quota, deadline = click.Option(["--quota"]), click.Option(["--deadline"])
    parsed = [Quota().convert(q, quota, None) for q in ("aws=16", "AWS:P5=4", "aws:us-east-1:p5=0")]
    assert dict(parsed) == {"aws": 16, "aws:p5": 4, "aws:us-east-1:p5": 0}
    assert Duration().convert("90m", deadline, None) == pytest.approx(1.5)
    with pytest.raises(ConfigError, match="--quota"):
        Quota().convert("aws:us-east-1:p5:x=2", quota, None)


def test_a_training_field_handed_to_estimate_names_with_training() -> None:
    # the CLI's --precision / --framework change the workload; in Python that is with_training
    with pytest.raises(ConfigError, match="training field of the workload") as info:
        planner.estimate("gpt2-xl-finetune", "H100", precision="fp8")  # type: ignore[call-arg]
    assert info.value.key_path == "precision"
    assert "planner.with_training(WORKLOAD, precision=...)" in str(info.value.hint)
    spec = planner.with_training("gpt2-xl-finetune", precision="fp8", framework="nemo")
    assert planner.estimate(spec, "H100").strategy is not None
    with pytest.raises(ConfigError, match="training field of the workload") as quoted:
        planner.quote(workload=WORKLOAD, deadline_hours=24, framework="nemo")
    assert "planner.with_training(WORKLOAD, framework=...)" in str(quoted.value.hint)
