"""Bad input and silently wrong results the twenty-third sweep (and the twenty-second's leftovers)
found: an amount in pence (GBp) read as pounds, a hundred times the money; a GPU memory floor
typed in MiB answered with no offers and no word of the unit; a config.json without model_type
read as a plain decoder though its architectures name LLaMA.

The product rule each test pins: bad input gets a clear error naming the field and a fix, and no
result is silently wrong.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

import planner
import planner.api
from planner.config.currency import parse_money
from planner.errors import ConfigError, InfeasibleError
from planner.workload.hf_config import model_from_hf_config
from tests.cli_checks import assert_clean_error, own_data_dir, run, write_file
from tests.test_bad_input_encodings import LLAMA

pytestmark = pytest.mark.usefixtures("own_data_dir")
__all__ = ["own_data_dir"]  # the fixture, imported for pytestmark


# --- money in a currency's hundredths -----------------------------------------------------------


@pytest.mark.parametrize(("code", "major"), [("GBp", "GBP"), ("GBX", "GBP"), ("ZAc", "ZAR")])
def test_a_currency_in_hundredths_is_refused_with_its_main_unit(code: str, major: str) -> None:
    # was: --currency GBp showed pounds labelled as the pence asked for
    out = run("quote", "-w", "gpt2-xl-finetune", "--deadline", "24h", "--currency", code)
    assert_clean_error(out, "--currency", f"a hundredth of {major}", f"use {major}")


def test_an_amount_in_pence_is_not_read_as_pounds() -> None:
    # was: 150 GBp read as 150 GBP, a hundred times the amount
    with pytest.raises(ConfigError, match="hundredth of GBP") as caught:
        parse_money("150 GBp", file="machines.yaml", key_path="capex_usd")
    assert "divided by 100" in str(caught.value.hint)
    assert parse_money("150 GBP") > 150  # the pound itself is still read: more than a dollar


def test_a_gpu_memory_floor_in_mib_is_named_in_the_note() -> None:
    # was: "the most on offer is 288 GiB" alone, for 80000 (nvidia-smi's MiB) typed as GiB
    out = run("offers", "--min-gpu-memory", "80000")
    assert out.exit_code == 0, out.output
    assert "the filter is in GiB: 80000 MiB is 78.1 GiB" in out.stderr


# --- a config.json without model_type -------------------------------------------------------------


# LLaMA 2 7B's config.json without its model_type
_LLAMA_2_7B = {k: v for k, v in LLAMA.items() if k != "model_type"}


def test_a_config_without_model_type_is_read_by_its_architectures(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # was: "no model_type: read as a plain decoder", 5.4B parameters for LLaMA 2 7B's 6.74B
    config = {"architectures": ["LlamaForCausalLM"], **_LLAMA_2_7B}
    path = write_file(tmp_path, "config.json", json.dumps(config))
    with caplog.at_level(logging.WARNING):
        section = model_from_hf_config(path)
    # 32 x (4 x 4096² + 3 x 4096 x 11008 + 2 x 4096) + 2 x 32000 x 4096 + 4096 (the model card's 6.74B)
    assert section["params"] == 6_738_415_616
    assert section["mlp"] == "gated"
    assert not caplog.records


def test_a_config_whose_architectures_name_no_family_still_warns(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = {"architectures": ["MyOwnForCausalLM"], **_LLAMA_2_7B}
    path = write_file(tmp_path, "config.json", json.dumps(config))
    with caplog.at_level(logging.WARNING):
        model_from_hf_config(path)
    assert "no model_type: read as a plain decoder" in caplog.text


# --- an image service's memory at its largest batch -------------------------------------------


_SDXL_SERVICE = """name: sdxl-svc
kind: inference
model: stable-diffusion-xl
inference: {images_per_s: 0.05, hours: 730, batch: 16}
"""


def test_an_image_service_is_sized_at_its_largest_batch_as_the_quote_sizes_it(
    tmp_path: Path,
) -> None:
    # was: "fits (serving)" at 8.5 GiB on an L4 (a mean batch of 1 at 0.05 images/s) while the
    # quote, sizing the engine's batch of 16, refused every L4
    path = str(write_file(tmp_path, "sdxl.yaml", _SDXL_SERVICE))
    estimate = run("estimate", path, "--gpu", "L4", "--format", "json")
    assert estimate.exit_code == 0, estimate.output
    doc = json.loads(estimate.stdout)
    assert doc["fits"] is False
    busier = write_file(tmp_path, "busy.yaml", _SDXL_SERVICE.replace("0.05", "0.5"))
    loaded = run("estimate", str(busier), "--gpu", "L4", "--format", "json")
    # the same engine holds the same buffers at a tenth of the load or at ten times it
    assert json.loads(loaded.stdout)["memory_per_gpu_gib"] == doc["memory_per_gpu_gib"] > 22.5
    quote = run("quote", "-w", path, "--gpu", "L4")
    assert_clean_error(quote, "at its largest batch", "inference.batch", exit_code=3)


# --- a service's numbers in Python: the keyword's own spelling ---------------------------------


@pytest.mark.parametrize(
    ("field", "value", "fix"),
    [
        ("ttft_ms_p95", "1s", "write ttft_ms_p95=1000: the keyword takes milliseconds"),
        ("e2e_ms_p95", "2 min", "write e2e_ms_p95=120000"),
        ("requests_per_s", "300/min", "write requests_per_s=5: the keyword takes a rate per"),
        ("requests_per_s", "7 rps", "write requests_per_s=7"),
        ("tpot_ms_p95", "60", "write tpot_ms_p95=60: a number, not text"),
    ],
)
def test_a_service_number_typed_as_text_in_python_gets_its_keyword(
    field: str, value: str, fix: str
) -> None:
    # was: "e.g. requests_per_s=5, ttft_ms_p95=1000", the same example whatever was typed
    with pytest.raises(ConfigError) as caught:
        planner.quote_service(workload="llm-serving-7b", **{field: value})
    assert caught.value.key_path == field
    assert fix in str(caught.value.hint)


def test_a_service_named_positionally_gets_the_keyword_call() -> None:
    # was: "expected a ServiceRequest or keywords, got str", with another workload's call
    with pytest.raises(ConfigError) as caught:
        planner.quote_service("llm-serving-7b", requests_per_s=2)
    assert "planner.quote_service(workload='llm-serving-7b', requests_per_s=2)" in str(
        caught.value.hint
    )


def test_a_target_in_seconds_gets_the_keyword_in_python_and_the_option_on_the_command_line() -> (
    None
):
    # was: "if you meant seconds, write 0.5s for TTFT" to a library caller
    with pytest.raises(InfeasibleError) as caught:
        planner.quote_service(workload="llm-serving-70b", requests_per_s=5, ttft_ms_p95=0.5)
    assert "ttft_ms_p95=500 (--p95-ttft 0.5s)" in str(caught.value.hint)


# --- build: what the parts table cannot price --------------------------------------------------


def test_a_preset_the_parts_table_cannot_price_says_so_and_names_its_own_price() -> None:
    # was: "the parts table has none of them; hint: allow other GPUs (--gpu) or counts
    # (--gpus)", both options refused beside --preset
    out = run("build", "-w", "gpt2-finetune", "--preset", "8xa100-80gb")
    assert_clean_error(
        out, "cannot price --preset 8xa100-80gb", "built only as whole servers", exit_code=3
    )
    assert "--gpus)" not in out.stderr
    assert "planner tco --hardware 8xa100-80gb" in out.stderr


def test_a_board_short_of_ram_is_named_once_with_the_most_it_takes() -> None:
    # was: "no motherboard holds 2 GPUs and 320 GB" twice (a new and a used A100), no reason
    out = run("build", "-w", "gpt2-finetune", "--gpu", "A100-80GB", "--gpus", "2")
    assert_clean_error(out, "320 GB of RAM (2 x the GPUs' memory", "take at most", exit_code=3)
    assert out.stderr.count("no motherboard holds") == 1


# --- a progress callback of the wrong shape ---------------------------------------------------


def test_a_refresh_callback_taking_the_quotes_two_arguments_is_refused_before_any_fetch() -> None:
    # was: the hint's "lambda done, total" for every callback, and, followed, a raw TypeError
    # from deep in the refresh after the download had run
    with pytest.raises(ConfigError) as caught:
        planner.api.refresh_prices("lambda", dry_run=True, on_progress=lambda done, total: None)
    assert caught.value.key_path == "on_progress"
    assert "called with 4 arguments (provider, region, done, total)" in str(caught.value)
    assert "lambda provider, region, done, total:" in str(caught.value.hint)


def test_a_quote_callback_of_three_arguments_is_refused_naming_the_two() -> None:
    with pytest.raises(ConfigError, match=r"called with 2 arguments \(done, total\)"):
        planner.api.quote(
            workload="gpt2-xl-finetune", deadline_hours=24, on_progress=lambda a, b, c: None
        )


# --- money in another currency under a USD key, and the rate it converts at ------------------------


_BOX = """name: box
gpu: A100-80GB
gpus_per_machine: 4
{capex}
electricity_usd_per_kwh: 0.12
power_kw_avg: 3
lifetime_years: 4
"""


def test_euros_under_a_usd_key_are_pointed_at_the_currency_neutral_key(tmp_path: Path) -> None:
    # was: "write 310000 alone: the key's name says its unit", the euros then read as dollars
    path = write_file(tmp_path, "box.yaml", _BOX.format(capex="capex_usd: 310000 EUR"))
    out = run("tco", "--hardware", str(path))
    assert_clean_error(out, "capex_usd is in USD", "write capex: 310000 EUR", "or capex_usd: 3")
    # the fix it names is read, and converted
    fixed = write_file(tmp_path, "fixed.yaml", _BOX.format(capex="capex: 100000 EUR"))
    assert run("tco", "--hardware", str(fixed)).exit_code == 0


def test_a_euro_sign_under_a_usd_key_is_converted_in_the_hint() -> None:
    # was: "write 300000 alone: the key's name says its currency" for €300,000
    from planner.config.currency import load_fx_rates
    from planner.ownership.hardware import hardware_from_mapping

    raw = {"name": "box", "gpu": "A100-80GB", "gpus_per_machine": 4, "capex_usd": "€300,000"}
    with pytest.raises(ConfigError) as caught:
        hardware_from_mapping(raw | {"electricity_usd_per_kwh": 0.1, "lifetime_years": 4})
    usd = load_fx_rates().to_usd(300_000, "EUR")
    assert f"capex_usd is in USD: write {usd:.2f}" in str(caught.value.hint)


def test_an_amount_typed_in_euros_warns_of_the_rates_age(caplog: pytest.LogCaptureFixture) -> None:
    # was: warned of for output in --currency only, never for an amount typed in a currency
    from planner.config import currency

    currency._warn_once.cache_clear()
    with caplog.at_level(logging.WARNING):
        usd = parse_money("5000 EUR")
    table = currency.load_fx_rates()
    assert usd == pytest.approx(5000 * table.usd_per_unit["EUR"])
    stale = table.stale_warning("EUR", 90)
    assert (stale in caplog.text) if stale else not caplog.records


def test_a_horizon_of_500_years_gets_no_months_reading_that_is_refused_again() -> None:
    # was: "if 500 is months, write 41.6667", itself over the 30-year horizon
    out = run("tco", "--hardware", "8xa100-80gb", "--years", "500")
    assert_clean_error(out, "years")
    assert "is months" not in out.stderr
    months = run("tco", "--hardware", "8xa100-80gb", "--years", "60")
    assert_clean_error(months, "if 60 is months, write 5")


def test_offers_limit_zero_is_refused_in_python_as_on_the_command_line() -> None:
    # was: an empty table with why_empty None
    with pytest.raises(ConfigError, match="limit must be a whole number >= 1"):
        planner.api.offers(limit=0)


# --- the library's own examples ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "example"),
    [
        (lambda: planner.api.offers(group_by=5), "group_by=('gpu',)"),
        (
            lambda: planner.api.refresh_prices("aws", regions=5, dry_run=True),
            "regions=('us-east-1', 'europe-west4')",
        ),
    ],
)
def test_a_list_argument_of_the_wrong_type_gets_its_own_example(call: Any, example: str) -> None:
    # was: "e.g. ...=('aws', 'gcp')", the providers' example, for GPUs, regions and groups
    with pytest.raises(ConfigError) as caught:
        call()
    assert example in str(caught.value.hint)


def test_an_offer_filter_field_given_to_offers_points_at_the_filter() -> None:
    # was: "unknown offers() keyword argument 'gpus'", with offers()'s own names
    with pytest.raises(ConfigError) as caught:
        planner.api.offers(gpus=["H100"])  # type: ignore[call-arg]
    assert "planner.offers(flt=planner.OfferFilter(gpus=...))" in str(caught.value.hint)


def test_a_hardware_file_to_a_missing_folder_is_refused_before_the_work(tmp_path: Path) -> None:
    # was: the whole table printed, then "cannot write the report" for the hardware file
    out = run("build", "-w", "gpt2-finetune", "-o", str(tmp_path / "nowhere" / "box.yaml"))
    assert_clean_error(out, "cannot write the hardware file", "does not exist")
    assert out.stdout == ""


@pytest.mark.parametrize(
    ("args", "label"),
    [
        (("prices", "history", "p5.48xlarg"), "INSTANCE: unknown instance type"),
        (("prices", "history", "--instance", "p5.48xlarg"), "--instance: unknown instance type"),
        (("models", "zzz"), "SEARCH: unknown model preset"),
    ],
)
def test_a_refused_argument_is_named_as_the_user_typed_it(
    args: tuple[str, ...], label: str
) -> None:
    # was: "instance_type:" and "search:", the library's names for them
    assert_clean_error(run(*args), label)


def test_a_report_to_dash_is_told_that_the_report_goes_to_stdout_without_output() -> None:
    # was: "run the command without --report / report", and planner report is the command
    out = run("report", "tco", "--hardware", "8xa100-80gb", "-o", "-")
    assert_clean_error(out, "--output", "leave --output out: the report goes to stdout")


@pytest.mark.parametrize(
    ("count", "fix"),
    [
        (0, "1 or more, e.g. count=8"),  # was: "the largest GPU clusters hold ~200,000 GPUs"
        (-8, "1 or more, e.g. count=8"),
        ("8", "count=8: a number, not text"),
        (2_000_000, "the largest GPU clusters hold ~200,000 GPUs"),
    ],
)
def test_a_gpu_count_out_of_range_in_python_gets_the_fix_for_its_own_mistake(
    count: object, fix: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        planner.api.estimate("gpt2-finetune", gpu="H100", count=count)
    assert fix in str(caught.value.hint)


def test_money_shown_in_a_currency_that_is_not_text_gets_an_example() -> None:
    result = planner.api.tco("8xa100-80gb")
    with pytest.raises(ConfigError) as caught:
        planner.api.report(result, currency=5)
    assert "currency='EUR'" in str(caught.value.hint)  # was: no hint


def test_an_amount_past_any_real_one_names_its_own_unit(tmp_path: Path) -> None:
    # was: "amounts are per machine, in USD unless tagged", said of a staff FTE's yearly cost
    box = _BOX.format(capex="capex_usd: 100000") + "staff_usd_per_year: 9e9\nstaff_fte: 0.1\n"
    out = run("tco", "--hardware", str(write_file(tmp_path, "box.yaml", box)))
    assert_clean_error(out, "staff_usd_per_year", "the yearly cost of one full-time engineer")
