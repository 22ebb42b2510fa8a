"""Bad input and silently wrong results the twenty-second sweep found: a latency target, however
loose, let a service quote load its replicas to their capacity (half the price of the same quote
without one); an AMD-only serving profile priced an H100, and llama.cpp fp8 weights it has no
format for; a LLaMA config.json without its MLP width read as 8.85B parameters without a word; a money value
with its currency was "fixed" to the same number of dollars; a peak lasting all day was planned
beside a base load that never runs; and a handful of refusals pointed at the wrong fix.

The product rule each test pins: adding a constraint never makes a plan cheaper, bad input gets a
clear error naming the field and a fix, and no result is silently wrong.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

import planner
from planner.api import Topology
from planner.errors import ConfigError
from tests.cli_checks import assert_clean_error, own_data_dir, run, write_file

pytestmark = pytest.mark.usefixtures("own_data_dir")
__all__ = ["own_data_dir"]  # the fixture, imported for pytestmark


def _monthly_usd(*args: str) -> float:
    out = run("quote", "-w", "llm-serving-7b", "--gpu", "GH200", *args, "--format", "json")
    assert out.exit_code == 0, out.output
    return float(json.loads(out.stdout)["plans"][0]["cost_usd_per_month"])


@pytest.mark.parametrize("target", [("--p95-tpot", "1000ms"), ("--p95-e2e", "600s")])
def test_a_loose_latency_target_costs_what_no_target_does(target: tuple[str, str]) -> None:
    # was: 1 replica at 96% of its capacity, $1,672 a month, against 2 at 85% ($3,343) without it
    assert _monthly_usd(*target) == pytest.approx(_monthly_usd())


def test_a_tight_target_costs_at_least_what_no_target_does() -> None:
    assert _monthly_usd("--p95-tpot", "15") >= _monthly_usd()


# --- serving stacks and their weights -----------------------------------------------------------

SERVICE = (
    "name: s\nkind: inference\nmodel: llama-2-7b\ninference: {{requests_per_s: 2, hours: 730, "
    "framework: {stack}, precision: {precision}}}\n"
)


def test_an_amd_profile_is_refused_on_nvidia(tmp_path: Path) -> None:
    path = write_file(tmp_path, "s.yaml", SERVICE.format(stack="vllm-rocm-2024", precision="fp8"))
    out = run("estimate", str(path), "--gpu", "H100")
    assert_clean_error(out, "inference.framework", "a ROCm build's profile", "vllm")
    assert planner.estimate(planner.load_workload(str(path)), "MI300X").fits
    # a quote whose offers hold no AMD GPU says so, not "not the T4"
    quoted = run("quote", "-w", str(path))
    assert_clean_error(quoted, "no offered GPU runs the serving stack", "kinds refused")


def test_a_weight_format_the_stack_has_none_of_is_refused(tmp_path: Path) -> None:
    path = write_file(tmp_path, "s.yaml", SERVICE.format(stack="llama.cpp", precision="fp8"))
    for args in (("estimate", str(path), "--gpu", "H100"), ("quote", "-w", str(path))):
        assert_clean_error(
            run(*args), "inference.precision", "llama.cpp serves no fp8 weights", "int8"
        )
    q4 = write_file(tmp_path, "q4.yaml", SERVICE.format(stack="llama.cpp", precision="int4"))
    assert planner.estimate(planner.load_workload(str(q4)), "H100").fits


# --- a Hugging Face config without its MLP width ------------------------------------------------


@pytest.mark.parametrize("ffn", ["", ', "intermediate_size": null'])
def test_a_gated_config_without_its_mlp_width_is_warned_of(
    tmp_path: Path, ffn: str, caplog: pytest.LogCaptureFixture
) -> None:
    # was: 4 x hidden taken silently, GPT-2's default: LLaMA 7B's shape read as 8.85B parameters.
    # A warning, not a refusal, so that a config's other mistakes are still the ones named.
    config = (
        '{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, '
        f'"num_hidden_layers": 32, "vocab_size": 32000{ffn}}}'
    )
    path = write_file(tmp_path, "config.json", config)
    with caplog.at_level(logging.WARNING, logger="planner"):
        spec = planner.workload_from_facts(str(path), tokens=5e6)
    assert spec.model.ffn == 16384
    (line,) = [r.getMessage() for r in caplog.records if "intermediate_size" in r.getMessage()]
    assert "no intermediate_size in this llama config" in line and "11008" in line
    # a config that gives it is read without a word
    caplog.clear()
    whole = config.replace(ffn, "").replace("}", ', "intermediate_size": 11008}')
    given = write_file(tmp_path, "given.json", whole)
    with caplog.at_level(logging.WARNING, logger="planner"):
        assert planner.workload_from_facts(str(given), tokens=5e6).model.ffn == 11008
    assert not [r for r in caplog.records if "intermediate_size" in r.getMessage()]


# --- flags ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "fix"),
    [
        ("5EUR", "write 5 with --currency EUR"),
        ("€5", "5 with --currency EUR"),
        ("5 gbp", "write 5 with --currency GBP"),
    ],
)
def test_a_price_with_its_currency_names_the_currency_option(value: str, fix: str) -> None:
    # was: "drop the unit 'EUR' (write the number alone: 5 ...)", which filters on 5 USD
    assert_clean_error(run("offers", "--max-price", value), fix)


def test_a_peak_all_day_is_the_base_load() -> None:
    out = run(
        "quote", "-w", "llm-serving-7b", "--rps", "5", "--peak-rps", "50", "--peak-hours", "24"
    )
    assert_clean_error(out, "a peak of 24 hours a day is all day", "give 50 requests/s as the load")


def test_a_currency_code_is_read_without_its_spaces() -> None:
    out = run("gpus", "--currency", " EUR", "--format", "csv")
    assert out.exit_code == 0, out.output
    header = out.stdout.splitlines()[0]
    assert "cheapest_on_demand_eur_per_gpu_hour" in header.split(",")
    assert "money in EUR is converted" in out.stderr


def test_a_report_named_by_its_extension_alone_gets_a_stem(tmp_path: Path) -> None:
    out = run(
        "report", "quote", "-w", "gpt2-finetune", "--deadline", "24h", "-o", str(tmp_path / ".html")
    )
    assert_clean_error(
        out, "--output", "give the file a name before its extension, e.g. report.html"
    )


def test_a_network_speed_as_text_is_named_as_text() -> None:
    # was: "must be at least 0.1 and at most 100,000 Gbit/s, got '400'" for a value in range
    topology = Topology(8, "nvlink", "infiniband", network_gbps="400")
    with pytest.raises(ConfigError) as info:
        planner.estimate("gpt2-finetune", "H100", 16, topology=topology)
    assert info.value.key_path == "network_gbps"
    assert "must be a number of Gbit/s, got str '400'" in info.value.message


# --- units the hints converted wrong -------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "fix"),
    [
        ("hours", "1 month", "write 730"),  # was "write 1 alone"
        ("hours", "1 year", "write 8760"),
        ("hours", "30 days", "write 720"),
        ("requests_per_s", "120 per minute", "write 2: requests_per_s is per second"),
        ("requests_per_s", "300/min", "write 5: requests_per_s is per second"),
        ("requests_per_s", "7200/h", "write 2: requests_per_s is per second"),
        ("requests_per_s", "86400 a day", "write 1: requests_per_s is per second"),
    ],
)
def test_a_service_fields_unit_is_converted_in_the_hint(
    tmp_path: Path, field: str, value: str, fix: str
) -> None:
    values = {"requests_per_s": "2", "hours": "730", field: value}
    text = (
        "name: s\nkind: inference\nmodel: llama-2-7b\ninference: "
        f"{{requests_per_s: {values['requests_per_s']}, hours: {values['hours']}}}\n"
    )
    out = run("estimate", str(write_file(tmp_path, "s.yaml", text)), "--gpu", "H100")
    assert_clean_error(out, f"inference.{field}", fix)


@pytest.mark.parametrize(
    ("value", "fix"), [("300/min", "write 5"), ("7200/h", "write 2"), ("172800/day", "write 2")]
)
def test_a_load_per_minute_on_the_command_line_is_converted(value: str, fix: str) -> None:
    # was: "drop the unit '/min' (write the number alone: 300", sixty times the load
    out = run("quote", "-w", "llm-serving-7b", "--rps", value)
    assert_clean_error(out, "--rps", f"{fix}: the option takes a rate per second")
