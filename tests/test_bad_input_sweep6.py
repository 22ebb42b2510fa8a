"""Bad input the sixth sweep found: each case here was silently ignored (``planner workloads
--format csv show X`` printed the table), misread (a blank snapshot id loaded the current folder
as a snapshot, a key given twice in a config.json kept the last value without a word), reported
as a bug or a network failure with "retry later" (a mistyped environment variable of a price
refresh), or answered with a fix for another field (host RAM "is in GiB per GPU").

The product rule each test pins: bad input gets a clear error naming the file, the field and a
fix, a non-zero exit (2) and no traceback, on the command line and in the library; no secret is
printed.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import pytest

import planner
from planner.errors import ConfigError, InfeasibleError, OfferValidationError
from planner.providers.http import checked_mirror_url, shown_url
from tests.cli_checks import assert_clean_error, invoke
from tests.conftest import offer_row

ROOT = Path(__file__).resolve().parent.parent
SECRET = "sk-should-never-show"


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path / "data"))


def _price_list(
    tmp_path: Path, header: list[str] | None = None, name: str = "prices.csv", **changes: object
) -> Path:
    row = {k: str(v) for k, v in offer_row().items()} | {k: str(v) for k, v in changes.items()}
    out = io.StringIO()
    writer = csv.writer(out)
    names = header or list(row)
    writer.writerow(names)
    writer.writerow([row.get(name, row["provider"]) for name in names])
    path = tmp_path / name
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


# --- a group's --format before its subcommand ------------------------------------------------------


def test_workloads_format_before_show_is_used_not_ignored() -> None:
    """was: ``planner workloads --format csv show X`` printed the table (the group's --format
    only formats the list), exit 0: a script reading CSV got a table."""
    result = invoke("workloads", "--format", "csv", "show", "gpt2-xl-finetune")
    assert result.exit_code == 0, result.output
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert rows[0][:2] == ["gpu", "gpu_count"], result.stdout
    json_result = invoke("workloads", "--format", "json", "show", "gpt2-xl-finetune")
    assert json_result.exit_code == 0, json_result.output
    json.loads(json_result.stdout)  # the document alone


def test_workloads_format_given_twice_differently_is_refused() -> None:
    result = invoke("workloads", "--format", "csv", "show", "gpt2-xl-finetune", "--format", "json")
    assert_clean_error(result, "--format csv", "--format json", "give --format once")


def test_workloads_format_before_new_is_refused() -> None:
    """was: the YAML file written where ``--format json`` asked for JSON, exit 0."""
    result = invoke(
        "workloads", "--format", "json", "new", "w1", "--model", "gpt2", "--tokens", "5M"
    )
    assert_clean_error(result, "--format", "writes a workload file (YAML)", "drop --format")
    assert result.stdout == ""


# --- prices diff with a blank snapshot id ----------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [("", "reference-2026-11-25", "OLD"), ("reference-2026-11-25", "  ", "NEW")],
)
def test_prices_diff_blank_snapshot_id_is_named(old: str, new: str, where: str) -> None:
    """was: a blank id read as the path "." and the current folder loaded as a snapshot:
    "error: .: no readable manifest.json", exit 1."""
    result = invoke("prices", "diff", old, new)
    assert_clean_error(result, where, "expected a snapshot id", "planner prices status")


def test_prices_diff_blank_snapshot_id_in_the_library() -> None:
    with pytest.raises(ConfigError, match="expected a snapshot id") as caught:
        planner.prices_diff("reference-2026-11-25", "")
    assert caught.value.key_path == "new"


# --- a private price list ---------------------------------------------------------------------------


def test_price_list_column_named_twice_is_named(tmp_path: Path) -> None:
    """was: "unknown column(s) 'provider.1' (did you mean 'provider'?)": pandas' name for the
    second one, a column the file does not have."""
    path = _price_list(tmp_path, header=[*offer_row(), "provider"])
    result = invoke("offers", "--offers", str(path))
    assert_clean_error(result, "prices.csv", "column 'provider' twice", "keep one column")
    assert "provider.1" not in result.output


@pytest.mark.parametrize(
    ("column", "value", "needles"),
    [
        # was: "memory is in GiB per GPU (80 for an A100-80GB)" for the instance's RAM
        ("host_memory_gib", "1TB", ("host_memory_gib is the instance's RAM in GiB",)),
        # ... and for the whole instance's GPU memory
        ("gpu_memory_total_gib", "320000", ("GPU memory of the whole instance", "computed")),
        # was: "zones is in  (from 0 to 1,000)": a column without a unit
        ("zones", "a,b", ("zones is a whole number (from 0 to 1,000)",)),
        ("zones", "5000", ("5000 is more than any real offer has (at most 1,000)",)),
    ],
    ids=["host-memory", "total-gpu-memory", "zones-text", "zones-huge"],
)
def test_price_list_value_errors_give_the_columns_own_fix(
    tmp_path: Path, column: str, value: str, needles: tuple[str, ...]
) -> None:
    path = _price_list(tmp_path, **{column: value})
    result = invoke("offers", "--offers", str(path))
    assert_clean_error(result, "prices.csv", column, *needles)
    assert "per GPU" not in result.stderr
    assert "  " not in result.stderr.splitlines()[0]


def test_price_list_column_named_twice_in_the_library(tmp_path: Path) -> None:
    path = _price_list(tmp_path, header=[*offer_row(), "region"])
    with pytest.raises(OfferValidationError, match="column 'region' twice"):
        planner.load_offers(path)


# --- a Hugging Face config.json with a key given twice -----------------------------------------------

CONFIG_WITH_A_KEY_TWICE = (
    '{"model_type": "llama", "hidden_size": 4096, "hidden_size": 8, "num_attention_heads": 32,'
    ' "num_hidden_layers": 32, "vocab_size": 32000}'
)


def test_config_json_key_given_twice_is_named(tmp_path: Path) -> None:
    """was: the last value kept without a word, and the error blamed num_attention_heads
    ("32 heads do not divide hidden size 8"); a workload file refuses a key given twice."""
    path = tmp_path / "config.json"
    path.write_text(CONFIG_WITH_A_KEY_TWICE, encoding="utf-8")
    result = invoke("estimate", "--model", str(path), "--tokens", "5M", "--gpu", "H100")
    assert_clean_error(result, "config.json", "hidden_size", "given twice", "keep one hidden_size")
    assert "num_attention_heads" not in result.stderr


def test_config_json_key_given_twice_in_the_library(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(CONFIG_WITH_A_KEY_TWICE, encoding="utf-8")
    with pytest.raises(ConfigError, match="given twice") as caught:
        planner.workload_from_facts(str(path), tokens=5e6)
    assert caught.value.key_path == "hidden_size"


# --- a price refresh's environment ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "args", "needles"),
    [
        # was: "aws us-east-1 failed: ... not a price source ... retry later", exit 1
        (
            {"PLANNER_AWS_PRICE_SOURCE": "pubilc"},
            ("--provider", "aws", "--region", "us-east-1"),
            ("PLANNER_AWS_PRICE_SOURCE='pubilc'", "did you mean public"),
        ),
        # was: "unexpected ValueError in the lambda adapter ... this is a bug", exit 1
        (
            {"LAMBDA_API_KEY": "k", "PLANNER_LAMBDA_API_URL": "http://127.0.0.1:99999"},
            ("--provider", "lambda"),
            ("PLANNER_LAMBDA_API_URL", "is not an http(s) URL", "unset it"),
        ),
        (
            {"LAMBDA_API_KEY": "k", "PLANNER_LAMBDA_API_URL": "http://[::1/api"},
            ("--provider", "lambda"),
            ("PLANNER_LAMBDA_API_URL", "is not an http(s) URL", "unset it"),
        ),
        # the GCP mirrors were not checked at all: every region failed to reach 'gcp.example'
        (
            {"PLANNER_GCP_API_KEY": "k", "PLANNER_GCP_BILLING_URL": "gcp.example"},
            ("--provider", "gcp", "--region", "us-central1"),
            ("PLANNER_GCP_BILLING_URL", "is not an http(s) URL", "unset it"),
        ),
        # a key pasted with its line break: "unexpected ValueError ... this is a bug", exit 1
        (
            {
                "LAMBDA_API_KEY": f"{SECRET}\nX-Other: 1",
                "PLANNER_LAMBDA_API_URL": "http://127.0.0.1:9",
            },
            ("--provider", "lambda"),
            ("LAMBDA_API_KEY", "line break", "copy the key again"),
        ),
        (
            # (a local mirror: a fetch that went ahead would reach nothing outside)
            {
                "PLANNER_GCP_API_KEY": f"{SECRET}\u20ac",
                "PLANNER_GCP_BILLING_URL": "http://127.0.0.1:9",
            },
            ("--provider", "gcp", "--region", "us-central1"),
            ("PLANNER_GCP_API_KEY", "non-ASCII", "copy the key again"),
        ),
    ],
    ids=["aws-source-typo", "mirror-port", "mirror-ipv6", "gcp-mirror", "key-newline", "key-euro"],
)
def test_refresh_settings_no_fetch_can_use_are_bad_input(
    env: dict[str, str], args: tuple[str, ...], needles: tuple[str, ...]
) -> None:
    """Checked before anything is fetched; exit 2, not "retry later"; the key never shown."""
    result = invoke("prices", "refresh", *args, "--dry-run", env=env)
    assert_clean_error(result, *needles)
    assert "retry later" not in result.output
    assert "this is a bug" not in result.output
    assert SECRET not in result.output


def test_check_environment_leaves_good_settings_and_other_providers_alone() -> None:
    from planner.providers import check_environment

    env = {
        "PLANNER_AWS_PRICE_SOURCE": "Public",
        "PLANNER_LAMBDA_API_URL": "https://mirror.example:8443/lambda",
        "LAMBDA_API_KEY": "secret_abc-123.XYZ",
        "PLANNER_GCP_BILLING_URL": "not a url",  # gcp is not refreshed here
    }
    check_environment(["aws", "lambda"], env)
    with pytest.raises(ConfigError, match="PLANNER_GCP_BILLING_URL"):
        check_environment(["gcp"], env)


def test_an_unparseable_mirror_url_is_shown_without_its_secrets() -> None:
    """shown_url raised the same ValueError while the message was being written."""
    assert shown_url(f"http://user:{SECRET}@[::1/x?key={SECRET}") == "http://[::1/x"
    with pytest.raises(ConfigError) as caught:
        checked_mirror_url("V", f"http://user:{SECRET}@h:99999/x?key={SECRET}")
    assert SECRET not in str(caught.value)


# --- a service quote whose provider, region or GPU choice leaves no offer -------------------------


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (("--provider", "gcp", "--region", "us-east-1"), ("region filter", "us-east1")),
        (("--provider", "lambda", "--gpu", "T4"), ("GPU filter", "GPUs offered from lambda")),
        (("--gpu", "RTX3060"), ("GPU filter", "GPUs offered")),
    ],
    ids=["region-of-another-provider", "gpu-the-provider-lacks", "gpu-no-cloud-rents"],
)
def test_service_quote_with_an_empty_filter_names_the_filter(
    args: tuple[str, ...], needles: tuple[str, ...]
) -> None:
    """was: "no offer fits one replica of the model; hint: allow bigger GPUs ... or serve
    int8/int4 weights": the model blamed for a filter that left no offer at all (a job quote
    names the filter)."""
    result = invoke("quote", "-w", "llm-serving-7b", *args, "--format", "json")
    assert_clean_error(result, *needles, "widen or drop", exit_code=3, quiet_stdout=True)
    assert "fits one replica" not in result.stderr


def test_service_quote_with_an_empty_filter_in_the_library() -> None:
    with pytest.raises(InfeasibleError, match="region filter"):
        planner.quote_service(workload="llm-serving-7b", providers=("gcp",), regions=("us-east-1",))


# --- a TCO whose provider choice or GPU link leaves no cloud capacity to compare with ---------------


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        # aws and azure rent T4s, lambda does not
        (
            ("--provider", "lambda", "--compare-gpu", "T4", "--any-interconnect"),
            ("from lambda", "T4 is offered by aws, azure", "leave --provider out"),
        ),
        # no T4 instance has NVSwitch: an 8-GPU HGX is compared only with as strong a link
        (("--compare-gpu", "T4"), ("GPU link as strong", "(nvswitch)", "add --any-interconnect")),
        (
            ("--provider", "lambda", "--compare-gpu", "T4"),
            ("from lambda", "leave --provider out and add --any-interconnect"),
        ),
    ],
    ids=["provider", "gpu-link", "both"],
)
def test_tco_names_the_choice_that_left_no_cloud_capacity(
    args: tuple[str, ...], needles: tuple[str, ...]
) -> None:
    """was: "no cloud offers with T4 GPUs to compare with (try --compare-gpu or --offers)" to a
    user who had given --compare-gpu T4; the fix is another provider or any GPU link."""
    result = invoke("tco", "--hardware", "8xh100-hgx", *args)
    assert result.exit_code == 0, result.output
    for needle in needles:
        assert needle in result.stdout, (needle, result.stdout)
    assert "try --compare-gpu" not in result.stdout


def test_tco_names_the_provider_choice_in_the_library() -> None:
    result = planner.tco(
        "8xh100-hgx", compare_gpu="T4", providers=("lambda",), any_interconnect=True
    )
    assert not result.comparisons
    assert "T4 is offered by aws, azure" in result.compare_reason


# --- two private price lists of one offer -----------------------------------------------------------


def test_two_price_lists_pricing_one_offer_are_refused(tmp_path: Path) -> None:
    """was: the later list's row kept without a word (its $100 spot price over the other's $9);
    within one list the same offer twice is already an error."""
    first = _price_list(tmp_path)
    second = _price_list(tmp_path, name="other.csv", price_spot_usd_per_hour=100)
    result = invoke("offers", "--offers", str(first), "--offers", str(second))
    assert_clean_error(
        result, "other.csv", "aws/us-east-1/p4d.24xlarge", "prices.csv too", "one price list"
    )
    with pytest.raises(OfferValidationError, match="priced in"):
        planner.load_offers((first, second))


@pytest.mark.parametrize("command", ["offers", "gpus"])
def test_one_price_list_given_twice_is_named(tmp_path: Path, command: str) -> None:
    path = _price_list(tmp_path)
    result = invoke(command, "--offers", str(path), "--offers", str(path))
    assert_clean_error(result, "--offers", "prices.csv is given twice", "give each price list once")


# --- a deadline with a named time zone ------------------------------------------------------------


@pytest.mark.parametrize(
    "deadline",
    ["2030-06-01 18:00 Europe/Berlin", "2030-06-01T18:00 PST", "friday 18:00 America/New_York"],
)
def test_a_deadline_with_a_zone_name_says_the_name_is_not_read(deadline: str) -> None:
    """was: the list of forms alone, which says "UTC unless a zone is given": the user had given
    one, by name."""
    result = invoke("quote", "-w", "gpt2-xl-finetune", "--deadline", deadline)
    zone = deadline.rpartition(" ")[2]
    assert_clean_error(result, "--deadline", f"the zone name {zone!r} is not read", "UTC offset")


def test_a_date_time_with_a_zone_name_gets_its_offset_written_out() -> None:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    from planner.units import zone_fix

    now = datetime(2026, 11, 26, tzinfo=timezone.utc)
    try:  # the offset comes from the system's zone data; without it, the general fix
        offset = datetime(2030, 6, 1, 18, tzinfo=ZoneInfo("Europe/Berlin")).strftime("%z")
        expected = f"'2030-06-01T18:00{offset[:3]}:{offset[3:]}'"
    except ZoneInfoNotFoundError:
        expected = "give a date-time with its UTC offset"
    fix = zone_fix("2030-06-01 18:00 Europe/Berlin", now)
    assert fix is not None and expected in fix, fix
    # a bare date means the end of that day: no start-of-day offset is offered for it
    bare = zone_fix("2030-06-01 Europe/Berlin", now)
    assert bare is not None and "T00:00" not in bare
    assert zone_fix("soon please", now) is None


# --- another tool's name for a key ----------------------------------------------------------------

WORKLOAD_TEXT = "name: t\nkind: finetune\nmodel: gpt2\ndata: {tokens: 1.0e+6}\n"
SERVICE_TEXT = (
    "name: s\nkind: inference\nmodel: llama-2-7b\n"
    "inference: {tokens_per_s: 5000, hours: 730, prompt_tokens: 512, output_tokens: 256}\n"
)


@pytest.mark.parametrize(
    ("text", "old", "new", "meant"),
    [
        # was: "did you mean 'output_tokens'?", the opposite key
        (SERVICE_TEXT, "prompt_tokens: 512", "input_tokens: 512", "inference.prompt_tokens"),
        # was: "did you mean 'tokens'?"
        (SERVICE_TEXT, "output_tokens: 256", "max_tokens: 256", "inference.output_tokens"),
        # was: the valid keys listed
        (SERVICE_TEXT, "tokens_per_s: 5000", "throughput: 5000", "inference.tokens_per_s"),
        # was: "did you mean 'tied_embeddings'?"
        (
            WORKLOAD_TEXT,
            "model: gpt2",
            "model: {preset: gpt2, max_position_embeddings: 1024}",
            "model.seq_len",
        ),
        # was: "a workload file has no deadline; pass it to planner quote: --deadline 24h"
        (WORKLOAD_TEXT, "model: gpt2", "model: {preset: gpt2, d_model: 768}", "model.hidden"),
        # was: "did you mean 'eval_tokens'?"
        (WORKLOAD_TEXT, "{tokens: 1.0e+6}", "{train_tokens: 1.0e+6}", "data.tokens"),
        # was: the valid keys listed; the key lives one section down
        (
            WORKLOAD_TEXT + "training: {precision: bf16}\n",
            "precision: bf16",
            "micro_batch_size: 4",
            "training.parallelism.micro_batch",
        ),
        (
            WORKLOAD_TEXT + "training: {precision: bf16}\n",
            "precision: bf16",
            "torch_dtype: bf16",
            "training.precision",
        ),
    ],
    ids=[
        "input-tokens",
        "max-tokens",
        "throughput",
        "max-position-embeddings",
        "d-model",
        "train-tokens",
        "micro-batch-size",
        "torch-dtype",
    ],
)
def test_another_tools_name_for_a_key_gets_the_planners_name(
    tmp_path: Path, text: str, old: str, new: str, meant: str
) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    result = invoke("estimate", str(path), "--gpu", "H100")
    typed = re.findall(r"(\w+): ", new)[-1]  # the key the edit wrote last
    assert_clean_error(result, "w.yaml", f"{typed}: unknown key", f"did you mean {meant!r}")


def test_a_setting_that_changes_no_estimate_is_named_as_such(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD_TEXT + "training: {learning_rate: 0.0001}\n", encoding="utf-8")
    result = invoke("estimate", str(path), "--gpu", "H100")
    assert_clean_error(result, "training.learning_rate", "changes neither the time", "drop it")


def test_a_synonym_points_only_at_a_key_the_section_has(tmp_path: Path) -> None:
    """budget_usd means capex_limit_usd in a budget file; in a hardware file (no such key) the
    usual suggestion stands."""
    hardware = (ROOT / "scenarios" / "hardware" / "8xh100-hgx.yaml").read_text(encoding="utf-8")
    path = tmp_path / "box.yaml"
    path.write_text(hardware + "budget_usd: 5\n", encoding="utf-8")
    result = invoke("tco", "--hardware", str(path), "--no-cloud")
    assert_clean_error(result, "budget_usd: unknown key")
    assert "capex_limit_usd" not in result.stderr


# --- the session's own calls named as the user wrote them ------------------------------------------


@pytest.mark.parametrize(
    ("call", "needles"),
    [
        # was: "unknown __init__() keyword argument 'bogus'"
        (
            lambda: planner.Planner(bogus=1),  # type: ignore[call-arg]
            ("unknown Planner() keyword argument 'bogus'",),
        ),
        # was: "__init__(): too many positional arguments", "see help(planner.__init__)"
        (lambda: planner.Planner("prices/"), ("Planner(): too many", "help(planner.Planner)")),
        # was: "see help(planner.tco)", the module function, for the session's method
        (
            lambda: planner.Planner().tco(),  # type: ignore[call-arg]
            ("Planner.tco()", "help(planner.Planner.tco)"),
        ),
    ],
    ids=["keyword", "positional", "method"],
)
def test_a_bad_call_of_the_session_names_the_session(
    call: Callable[[], object], needles: tuple[str, ...]
) -> None:
    with pytest.raises(ConfigError) as caught:
        call()
    for needle in needles:
        assert needle in str(caught.value)
    assert "__init__" not in str(caught.value)


# --- a currency's sign or name where its code belongs -----------------------------------------------


@pytest.mark.parametrize(
    ("amount", "needles"),
    [
        ("€500", ("'€' is not a currency code", "write 500 EUR")),
        ("500 €", ("'€' is not a currency code", "write 500 EUR")),
        ("2.5 euros", ("'euros' is not a currency code", "write 2.5 EUR")),
        # was: "its commas do not group thousands", of a number whose commas do
        ("$ 1,200", ("'$' is not a currency code", "write 1,200 USD")),
        ("£1e3", ("'£' is not a currency code", "write 1e3 GBP")),
    ],
)
def test_a_currency_sign_or_name_in_an_amount_gets_its_code(
    amount: str, needles: tuple[str, ...]
) -> None:
    """was: "cannot read '€500' as an amount of money; write a number, optionally with a
    currency code: 80000 CNY", the code to write left to the user."""
    result = invoke("quote", "-w", "gpt2-xl-finetune", "--deadline", "24h", "--budget", amount)
    assert_clean_error(result, "--budget", *needles)


@pytest.mark.parametrize(("typed", "code"), [("€", "EUR"), ("RMB", "CNY"), ("dollars", "USD")])
def test_a_currency_sign_or_name_as_the_currency_gets_its_code(typed: str, code: str) -> None:
    """was: "unknown currency 'RMB'; known currency names: AUD, BGN, BRL, ..." (12 of them)."""
    result = invoke("gpus", "--currency", typed)
    assert_clean_error(result, "--currency", f"unknown currency {typed!r}", f"did you mean {code}?")
    with pytest.raises(ConfigError, match=f"did you mean {code}"):
        planner.Planner(currency=typed)


# --- a GPU choice with its memory read as a count, or its parts swapped ----------------------------


@pytest.mark.parametrize(
    ("choice", "meant"),
    [
        # was: "GPU count in 'A100:80' must be from 1 to 72; GPUs per instance, e.g. H100:8"
        ("A100:80", "did you mean A100:80GB?"),
        ("H100:80", "did you mean H100:80GB?"),
        # was: "cannot read GPU choice" and the list of forms
        ("A100:8:40GB", "did you mean A100:40GB:8?"),
    ],
)
def test_a_gpu_choice_slip_gets_the_choice_meant(choice: str, meant: str) -> None:
    result = invoke("offers", "--gpu", choice)
    assert_clean_error(result, "--gpu", meant)


def test_a_count_past_the_largest_instance_keeps_the_count_hint() -> None:
    result = invoke("offers", "--gpu", "H100:100")
    assert_clean_error(result, "--gpu", "must be from 1 to 72", "GPUs per instance")
    assert "did you mean" not in result.stderr


# --- YAML 1.1's yes/no/on/off where text belongs ------------------------------------------------------


def test_a_text_key_yaml_read_as_a_boolean_says_to_quote_it(tmp_path: Path) -> None:
    """was: "name: expected text, got False" and no fix: a job named no (or on, yes, off)."""
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD_TEXT.replace("name: t", "name: no"), encoding="utf-8")
    result = invoke("estimate", str(path), "--gpu", "H100")
    assert_clean_error(result, "w.yaml: name", "YAML read the value as false", 'name: "no"')


def test_a_text_key_yaml_read_as_true_in_a_hardware_file(tmp_path: Path) -> None:
    hardware = (ROOT / "scenarios" / "hardware" / "8xh100-hgx.yaml").read_text(encoding="utf-8")
    path = tmp_path / "box.yaml"
    path.write_text(hardware.replace("name: 8xh100-hgx", "name: on"), encoding="utf-8")
    result = invoke("tco", "--hardware", str(path), "--no-cloud")
    assert_clean_error(result, "box.yaml: name", "read the value as true", 'name: "yes"')


# --- the wrong YAML shape for a key: a fix with the message --------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "needles"),
    [
        ("model: gpt2", "model: 7", ("model: expected a mapping", "model: {key: value}")),
        ("name: t", "name: 5", ("name: expected text", 'name: "5"')),
        ("name: t", "name: [a, b]", ("name: expected text", "in quotes")),
    ],
    ids=["mapping", "number-as-text", "list-as-text"],
)
def test_a_value_of_the_wrong_yaml_shape_gets_a_fix(
    tmp_path: Path, old: str, new: str, needles: tuple[str, ...]
) -> None:
    """was: "model: expected a mapping of keys, got 7", "name: expected text, got 5" and no
    hint line at all."""
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD_TEXT.replace(old, new), encoding="utf-8")
    result = invoke("estimate", str(path), "--gpu", "H100")
    assert_clean_error(result, *needles)
    assert "hint:" in result.stderr


def test_a_mapping_where_a_list_belongs_gets_a_fix(tmp_path: Path) -> None:
    budget = (ROOT / "scenarios" / "budgets" / "2027-ml-platform.yaml").read_text(encoding="utf-8")
    path = tmp_path / "b.yaml"
    path.write_text(budget.replace("workloads:\n  - {", "workloads:\n  {"), encoding="utf-8")
    result = invoke("budget", str(path), "--no-sensitivity")
    assert_clean_error(result, "workloads: expected a list", "write workloads as a list")


def test_a_missing_shape_key_gets_an_example_value(tmp_path: Path) -> None:
    """was: "model.layers: is required for a decoder transformer", no value to write."""
    path = tmp_path / "w.yaml"
    shape = "{params: 7.0e+9, hidden: 4096, heads: 32, seq_len: 4096}"
    path.write_text(WORKLOAD_TEXT.replace("model: gpt2", f"model: {shape}"), encoding="utf-8")
    result = invoke("estimate", str(path), "--gpu", "H100")
    assert_clean_error(result, "model.layers: is required", "layers: 32 (num_hidden_layers)")


# --- budget and hardware contradictions: a fix with each ---------------------------------------------


def _budget_with(tmp_path: Path, old: str, new: str) -> Path:
    budget = (ROOT / "scenarios" / "budgets" / "2027-ml-platform.yaml").read_text(encoding="utf-8")
    assert old in budget, old
    path = tmp_path / "b.yaml"
    path.write_text(budget.replace(old, new, 1), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("old", "new", "needles"),
    [
        # was: "GPU class H100 appears twice" and no fix
        ("- gpu: A100-80GB", "- gpu: H100", ("classes[1].gpu", "merge the two H100 classes")),
        # was: "hardware '8xa100-80gb' has A100-80GB GPUs, not H100" and no fix
        (
            "{hardware: 8xh100-hgx,",
            "{hardware: 8xa100-80gb,",
            ("classes[0].buy[0]", "list it under the A100-80GB class"),
        ),
        # was: the bounds alone
        ("deadline_month: 10", "deadline_month: 5", ("deadline_month", "from 7 to 36")),
    ],
    ids=["class-twice", "machine-of-another-class", "deadline-before-start"],
)
def test_budget_contradictions_give_a_fix(
    tmp_path: Path, old: str, new: str, needles: tuple[str, ...]
) -> None:
    result = invoke("budget", str(_budget_with(tmp_path, old, new)), "--no-sensitivity")
    assert_clean_error(result, *needles)


def test_power_max_below_average_gives_a_fix(tmp_path: Path) -> None:
    hardware = (ROOT / "scenarios" / "hardware" / "8xh100-hgx.yaml").read_text(encoding="utf-8")
    path = tmp_path / "box.yaml"
    path.write_text(hardware.replace("power_kw_max: 10.2", "power_kw_max: 1.0"), encoding="utf-8")
    result = invoke("tco", "--hardware", str(path), "--no-cloud")
    assert_clean_error(result, "power_kw_max", "per machine, in kW")


@pytest.mark.parametrize(
    ("old", "new", "needles"),
    [
        # was: "Unable to parse input string as an integer, exceeded maximum size": pydantic's words
        ("machines: 1", "machines: 1.0e+30", ("machines: expected a whole number", "its unit")),
        # an empty value: was "expected a number, got None" and no fix
        ("pue: 1.4", "pue:", ("pue: expected a number, got None", "write the number after")),
        ("gpu: H100", "gpu:", ("gpu: expected text, got None", "write it after the colon")),
        ("pue: 1.4", "pue: [1.4]", ("pue: expected a number", "as one number, not a list")),
        ("pue: 1.4", "pue: yes", ("pue: expected a number, got true", "write the number")),
    ],
    ids=["whole-number-1e30", "empty-number", "empty-text", "list-for-number", "yes-for-number"],
)
def test_a_hardware_value_of_the_wrong_kind_gets_a_fix(
    tmp_path: Path, old: str, new: str, needles: tuple[str, ...]
) -> None:
    hardware = (ROOT / "scenarios" / "hardware" / "8xh100-hgx.yaml").read_text(encoding="utf-8")
    assert old in hardware, old
    path = tmp_path / "box.yaml"
    path.write_text(hardware.replace(old, new, 1), encoding="utf-8")
    result = invoke("tco", "--hardware", str(path), "--no-cloud")
    assert_clean_error(result, "box.yaml", *needles)
    assert "Unable to parse" not in result.stderr


# --- a number with another unit than the option's ------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "meant"),
    [
        # was: "drop the unit 'TB' (write the number alone: 1)": a thousandth of the disk meant
        (("offers", "--min-local-disk", "1TB"), "write 1000: the option takes GB"),
        (("offers", "--min-host-memory", "1TB"), "write 1024: the option takes GiB"),
        # was: "write the number alone: 1": one second of solving where a minute was meant
        (
            ("budget", "2027-ml-platform", "--time-limit", "1m"),
            "write 60: the option takes seconds",
        ),
        (
            ("tco", "--hardware", "8xh100-hgx", "--years", "18mo"),
            "write 1.5: the option takes years",
        ),
        (
            (
                "calibrate",
                "record",
                "gpt2-xl-finetune",
                "--gpu",
                "H100",
                "--measured-step-seconds",
                "250ms",
            ),
            "write 0.25: the option takes seconds",
        ),
    ],
    ids=["disk-tb", "host-memory-tb", "time-limit-minutes", "years-months", "step-ms"],
)
def test_a_number_in_another_unit_is_converted_in_the_fix(
    args: tuple[str, ...], meant: str
) -> None:
    result = invoke(*args)
    assert_clean_error(result, meant)
    assert "write the number alone" not in result.stderr


def test_a_number_in_the_options_own_unit_keeps_its_fix() -> None:
    result = invoke("offers", "--min-gpu-memory", "80GB")
    assert_clean_error(result, "--min-gpu-memory", "write the number alone: 80")


@pytest.mark.parametrize(
    ("amount", "needles"),
    [
        # was: "cannot read '$5k' as an amount of money" and the general form
        ("$5k", ("k is not read as a multiplier", "write 5000 USD")),
        ("1.5M", ("M is not read as a multiplier", "write 1500000")),
        ("5 USD/h", ("says the period, not the amount", "write 5 USD")),
    ],
)
def test_an_amount_written_as_a_price_gets_the_amount_to_write(
    amount: str, needles: tuple[str, ...]
) -> None:
    result = invoke("build", "-w", "gpt2-finetune", "--budget", amount)
    assert_clean_error(result, "--budget", *needles, "optionally with a currency code")


def test_a_price_option_with_a_currency_sign_gets_the_number() -> None:
    """was: click's "'$5/h' is not a valid float." and no fix."""
    result = invoke("offers", "--max-price", "$5/h")
    assert_clean_error(result, "--max-price", "write the number alone: 5", "--currency")


# --- trials, pieces' other name: errors name the key the file has ------------------------------------


@pytest.mark.parametrize(
    ("line", "needles"),
    [
        # was: "pieces: must be at least 1, got 0" to a file that never says pieces
        ("trials: 0", ("w.yaml: trials: must be at least 1",)),
        # was: "give either pieces or trials, not both", no key named
        ("trials: 4\npieces: 4", ("w.yaml: trials: is another name for pieces", "keep one")),
    ],
    ids=["bad-value", "both"],
)
def test_trials_errors_name_trials(tmp_path: Path, line: str, needles: tuple[str, ...]) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOAD_TEXT + line + "\n", encoding="utf-8")
    result = invoke("estimate", str(path), "--gpu", "H100")
    assert_clean_error(result, *needles)
    assert "pieces: must" not in result.stderr


def test_a_multimodal_config_json_points_at_its_text_config(tmp_path: Path) -> None:
    """was: "no hidden_size in the config; pass the config.json of a decoder transformer": the
    language model's shape was there, one level down."""
    text = {
        "model_type": "llama",
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "vocab_size": 32064,
    }
    path = tmp_path / "config.json"
    config = {"model_type": "llava", "text_config": text, "vision_config": {"hidden_size": 1024}}
    path.write_text(json.dumps(config), encoding="utf-8")
    result = invoke("estimate", "--model", str(path), "--tokens", "5M", "--gpu", "H100")
    assert_clean_error(result, "config.json", "multimodal model (llava)", "save the text_config")


def test_tco_csv_without_comparison_rows_says_why_on_stderr() -> None:
    """The CSV is the comparison rows; with none, the reason was in no output at all.  (Sweep 17:
    without comparisons the CSV holds the cost of ownership, not an empty document.)"""
    result = invoke(
        "tco", "--hardware", "8xh100-hgx", "--provider", "lambda", "--compare-gpu", "T4",
        "--any-interconnect", "--format", "csv",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "category,per_year_usd,share"
    assert "note: no cloud offers with T4 GPUs from lambda" in result.stderr
