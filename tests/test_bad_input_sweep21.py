"""Bad input and silently wrong results the twenty-first sweep found: a mixture of experts whose
counts contradicted its experts' width was estimated on the counts alone (and "fitted" 8 GPUs it
does not fit); a price list's per-GPU price typed per instance was warned of only near the
cheapest price, and a row that changed a known instance's GPUs was taken silently; a hardware
file's fleet-total capex and a team typed as staff per machine were costed as given; a budget's
GPU-hour price of a whole instance was planned on; several CSV documents ended with a blank row;
and a dozen refusals pointed at the wrong fix (``write 1e+09h``, ``top=5`` on the command line,
``did you mean peak_hours_per_day?`` for a service's deadline).

The product rule each test pins: bad input gets a clear error naming the field and a fix, and no
result is silently wrong; machine-readable output is only the document.
"""

from __future__ import annotations

import csv
import io
import json
import logging
from pathlib import Path

import pytest

import planner
from planner.errors import ConfigError
from tests.cli_checks import assert_clean_error, own_data_dir, run, write_file

pytestmark = pytest.mark.usefixtures("own_data_dir")
__all__ = ["own_data_dir"]  # the fixture, imported for pytestmark

ROOT = Path(__file__).resolve().parents[1]
HARDWARE = ROOT / "scenarios" / "hardware" / "8xh100-hgx.yaml"
BUDGET = ROOT / "scenarios" / "budgets" / "2027-ml-platform.yaml"
PRICE_HEADER = (
    "provider,region,instance_type,gpu_model,gpu_count,gpu_memory_gib,interconnect,"
    "price_on_demand_usd_per_hour,source,as_of"
)


def _edited(tmp_path: Path, source: Path, name: str, *changes: tuple[str, str]) -> Path:
    text = source.read_text(encoding="utf-8")
    for old, new in changes:
        assert old in text, old
        text = text.replace(old, new, 1)
    return write_file(tmp_path, name, text)


# --- machine-readable output ends with one line end ----------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("workloads",),
        ("models",),
        ("prices", "status"),
        ("workloads", "show", "gpt2-finetune"),
        ("estimate", "gpt2-finetune", "--gpu", "H100"),
        ("tco", "--hardware", str(HARDWARE), "--no-cloud"),
    ],
    ids=["workloads", "models", "prices-status", "workloads-show", "estimate", "tco"],
)
def test_a_csv_document_has_no_blank_last_row(args: tuple[str, ...]) -> None:
    # was: "...\n\n", an empty row to csv.reader and to a spreadsheet
    out = run(*args, "--format", "csv")
    assert out.exit_code == 0, out.output
    assert out.stdout.endswith("\n") and not out.stdout.endswith("\n\n")
    rows = list(csv.reader(io.StringIO(out.stdout)))
    assert rows and [] not in rows


@pytest.mark.parametrize(
    "args",
    [
        ("tco", "--hardware", str(HARDWARE), "--no-cloud"),
        ("budget", str(BUDGET), "--no-sensitivity"),
    ],
    ids=["tco", "budget"],
)
def test_a_json_document_ends_its_last_line(args: tuple[str, ...]) -> None:
    # was: the closing brace with no line end after it
    out = run(*args, "--format", "json")
    assert out.exit_code == 0, out.output
    assert out.stdout.endswith("}\n")
    assert isinstance(json.loads(out.stdout), dict)


# --- a mixture of experts whose counts contradict its shape --------------------------------------

MOE = (
    "name: t\nkind: finetune\nmodel: {{params: {params}, active_params: {active}, layers: 32, "
    "hidden: 4096, heads: 32, kv_heads: 8, ffn: {ffn}, mlp: gated, vocab: 32000, seq_len: 4096, "
    "experts: 8, experts_per_token: 2}}\ndata: {{tokens: 1e9}}\n"
)


def test_moe_counts_that_contradict_the_experts_width_are_refused(tmp_path: Path) -> None:
    # was: 7e9 parameters (2e9 active) with experts 11,008 wide "fitted" 8 H100s; the shape holds
    # about 37e9, and with those counts it does not fit
    path = write_file(tmp_path, "moe.yaml", MOE.format(params="7e9", active="2e9", ffn=11008))
    with pytest.raises(ConfigError) as info:
        planner.load_workload(str(path))
    assert info.value.key_path == "model.params"
    assert "disagree with the experts' width (ffn 11,008)" in info.value.message
    # attention 32 x 4096 x (2 x 4096 + 2 x 1024) = 1.342e9, untied embeddings 2 x 32000 x 4096 =
    # 0.262e9, one expert 3 x 4096 x 11008 x 32 layers = 4.329e9: 8 of them 36.2e9, 2 active 10.3e9
    assert "about 3.62e+10 parameters, 1.03e+10 active" in info.value.message
    # Mixtral's own counts with its experts' width are read, and do not fit 8 H100s in full
    good = write_file(
        tmp_path, "mixtral.yaml", MOE.format(params="46.7e9", active="12.9e9", ffn=14336)
    )
    assert not planner.estimate(planner.load_workload(str(good)), "H100", 8).fits


def test_experts_added_to_a_dense_preset_need_their_counts(tmp_path: Path) -> None:
    text = (
        "name: t\nkind: finetune\nmodel: {preset: llama-2-7b, experts: 8, experts_per_token: 2, "
        "active_params: 2e9}\ndata: {tokens: 1e9}\n"
    )
    out = run("estimate", str(write_file(tmp_path, "m.yaml", text)), "--gpu", "H100")
    assert_clean_error(out, "model.params", "6.74e+09 parameters", "set params and active_params")


def test_a_decoder_without_a_vocabulary_is_refused(tmp_path: Path) -> None:
    # was: taken, its embeddings and output head left out of the weights
    text = "name: t\nkind: finetune\nmodel: {preset: llama-2-7b, vocab: 0}\ndata: {tokens: 1e9}\n"
    out = run("estimate", str(write_file(tmp_path, "v.yaml", text)), "--gpu", "H100")
    assert_clean_error(out, "model.vocab", "no embeddings and no output head", "vocab_size")


# --- price lists ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("price", "fix"),
    [
        ("1.49", "did you mean 11.92 (8 x 1.49)?"),  # was silent: under half the cheapest itself
        ("3.99", "did you mean 31.92 (8 x 3.99)?"),
        ("0.2", "check the figure"),  # no GPU-hour at 0.2: no product offered
    ],
)
def test_a_price_per_gpu_in_the_instance_column_is_warned_of(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, price: str, fix: str
) -> None:
    row = f"mycloud,eu-1,h100x8,H100,8,80,nvswitch,{price},negotiated,2026-11-01"
    path = write_file(tmp_path, "p.csv", f"{PRICE_HEADER}\n{row}\n")
    with caplog.at_level(logging.WARNING, logger="planner"):
        planner.offers(planner.api.OfferFilter(providers=("mycloud",)), offers_files=[path])
    (line,) = [r.getMessage() for r in caplog.records if "GPU-hour" in r.getMessage()]
    assert "8 x H100 at" in line and "under half the cheapest" in line and fix in line


def test_a_row_that_changes_a_known_instances_gpus_is_warned_of(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rows = (
        "aws,us-east-1,p5.48xlarge,H100,4,80,nvswitch,50.0,quote,2026-11-01\n"
        "aws,us-east-1,p4d.24xlarge,A100-40GB,8,40,nvswitch,20.0,quote,2026-11-01\n"
    )
    path = write_file(tmp_path, "p.csv", f"{PRICE_HEADER}\n{rows}")
    with caplog.at_level(logging.WARNING, logger="planner"):
        planner.offers(planner.api.OfferFilter(providers=("aws",)), offers_files=[path])
    lines = [r.getMessage() for r in caplog.records if "the bundled offer has" in r.getMessage()]
    # the p5 row halves the GPUs; the p4d row re-prices the instance as it is and is not named
    assert len(lines) == 1
    assert "row 2 (aws us-east-1 p5.48xlarge): the bundled offer has 8 x H100" in lines[0]
    assert "this row 4 x H100" in lines[0] and "check gpu_count" in lines[0]


# --- owned hardware and budgets ------------------------------------------------------------------


def test_a_fleets_capex_typed_per_machine_is_refused(tmp_path: Path) -> None:
    path = _edited(
        tmp_path,
        HARDWARE,
        "h.yaml",
        ("machines: 1", "machines: 20"),
        ("capex_usd: 310000", "capex_usd: 6200000"),
    )
    out = run("tco", "--hardware", str(path), "--no-cloud")
    assert_clean_error(
        out,
        "capex_usd",
        "6,200,000 USD for a machine of 8 x H100 is over 5 times",
        "for 20 machines of 310,000 USD each write 310000",
    )


def test_a_team_typed_as_each_machines_staff_is_warned_of(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _edited(
        tmp_path,
        HARDWARE,
        "h.yaml",
        ("machines: 1", "machines: 20"),
        ("staff_fte: 0.0133", "staff_fte: 2"),
    )
    with caplog.at_level(logging.WARNING, logger="planner"):
        planner.load_hardware(str(path))
    assert any(
        "staff_fte 2 is per machine: 40 people for 20 machines" in r.getMessage()
        and "write 0.1" in r.getMessage()
        for r in caplog.records
    )


def test_a_budgets_price_off_the_market_is_warned_of(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _edited(
        tmp_path,
        BUDGET,
        "b.yaml",
        ("on_demand_usd_per_gpu_hour: 2.99", "on_demand_usd_per_gpu_hour: 23.92"),
        ("usd_per_gpu_hour: 1.47", "usd_per_gpu_hour: 0.01"),
    )
    with caplog.at_level(logging.WARNING, logger="planner"):
        planner.budget(str(path), sensitivity=False)
    lines = [r.getMessage() for r in caplog.records]
    assert any(
        "classes[0].on_demand_usd_per_gpu_hour: 23.92 USD per GPU-hour for H100" in line
        and "a price per instance?" in line
        for line in lines
    )
    assert any("classes[0].spot.usd_per_gpu_hour: 0.01" in line for line in lines)
    # the bundled budget's own prices are on the market
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="planner"):
        planner.budget(str(BUDGET), sensitivity=False)
    assert not [r for r in caplog.records if "price listed" in r.getMessage()]


def test_a_horizon_in_months_gets_the_years_it_means() -> None:
    out = run("tco", "--hardware", str(HARDWARE), "--years", "36")
    assert_clean_error(out, "--years", "got 36", "if 36 is months, write 3")


# --- flags whose refusals pointed at the wrong fix -----------------------------------------------


def test_a_deadline_in_exponent_form_past_ten_years_says_so() -> None:
    # was: "write 1e+09h", itself refused as exponent form
    out = run("quote", "-w", "gpt2-xl-finetune", "--deadline", "1e9h")
    assert_clean_error(out, "1,000,000,000 hours) is more than ten years")
    near = run("quote", "-w", "gpt2-xl-finetune", "--deadline", "5e4h")
    assert_clean_error(near, "exponent form", "write 50000h (2083d)")
    assert "e+" not in near.stderr


def test_top_is_bounded_alike_and_hinted_in_the_commands_words() -> None:
    for args in (("-w", "gpt2-finetune", "--deadline", "24h"), ("-w", "llm-serving-7b")):
        out = run("quote", *args, "--top", "1000")
        assert_clean_error(out, "from 1 to 100, got 1000", "e.g. 5")
        assert "top=" not in out.stderr  # was "e.g. top=5" on the command line


def test_a_regional_quota_without_a_family_names_one() -> None:
    out = run("quote", "-w", "gpt2-xl-finetune", "--deadline", "24h", "--quota", "aws:us-east-1=4")
    assert_clean_error(out, "'us-east-1' in aws:us-east-1=4 is a region", "aws:us-east-1:", "aws=4")


def test_the_price_age_variable_gets_the_options_fix() -> None:
    out = run("offers", "--limit", "1", env={"PLANNER_MAX_PRICE_AGE_DAYS": "4w"})
    assert out.exit_code == 2
    assert "PLANNER_MAX_PRICE_AGE_DAYS counts days: 4w is 28" in out.stderr


def test_price_history_takes_the_instance_alone() -> None:
    # was: "Missing option '--instance'" for the instance given as an argument
    alone = run("prices", "history", "p5.48xlarge", "--format", "json")
    flagged = run("prices", "history", "--instance", "p5.48xlarge", "--format", "json")
    assert alone.exit_code == flagged.exit_code == 0, alone.output
    assert json.loads(alone.stdout) == json.loads(flagged.stdout) != []
    assert_clean_error(run("prices", "history"), "which instance type?", "p4d.24xlarge")
    assert_clean_error(
        run("prices", "history", "a", "--instance", "b"), "two instance types", "give one"
    )


def test_a_peak_below_the_base_load_is_shown_rounded() -> None:
    out = run("quote", "-w", "llm-serving-7b", "--peak-rps", "2", "--peak-hours", "4")
    assert_clean_error(out, "is below the base load, 19.5 requests/s")


# --- the library's keywords ----------------------------------------------------------------------


def test_a_services_deadline_and_a_jobs_load_name_the_other_quote() -> None:
    with pytest.raises(ConfigError) as info:
        planner.quote_service(workload="llm-serving-7b", deadline_hours=5)
    assert info.value.key_path == "deadline_hours"
    assert "priced per month" in info.value.message and "quote()" in info.value.message
    with pytest.raises(ConfigError) as info:
        planner.quote(workload="gpt2-finetune", requests_per_s=5)
    assert info.value.key_path == "requests_per_s"
    assert "planner.quote_service(" in (info.value.hint or "")


def test_the_service_only_keywords_are_the_service_quotes() -> None:
    from dataclasses import fields

    from planner.quoting.request import SERVICE_ONLY_KEYWORDS, QuoteRequest
    from planner.quoting.service_quote import ServiceRequest

    service = {f.name for f in fields(ServiceRequest)}
    assert service - {f.name for f in fields(QuoteRequest)} == SERVICE_ONLY_KEYWORDS


def test_calibrate_names_its_own_keyword() -> None:
    # was: "measured_tokens_per_s", a keyword calibrate() does not take
    with pytest.raises(ConfigError) as info:
        planner.calibrate("gpt2-finetune", "H100", measured_tokens_per_second=1e12)
    assert info.value.key_path == "measured_tokens_per_second"


# --- keys other tools spell otherwise ------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "key", "fix"),
    [
        (
            "parallelism: {data: 4}",
            "training.parallelism.data",
            "the data-parallel size is not set",
        ),
        ("parallelism: {dp: 4}", "training.parallelism.dp", "the GPU count over tensor x"),
        ("dp: 4", "training.dp", "the data-parallel size is not set"),
        ("parallelism: {tp: 4}", "training.parallelism.tp", "did you mean 'tensor'?"),
        ("parallelism: {fsdp: true}", "training.parallelism.fsdp", "write zero: 3"),
        ("parallelism: {sequence: 2}", "training.parallelism.sequence", "comes with tensor"),
        ("tensor_parallel: 4", "training.tensor_parallel", "'training.parallelism.tensor'"),
        ("gradient_accumulation_steps: 8", "training.gradient_accumulation_steps", "global_batch"),
    ],
)
def test_a_parallelism_key_of_another_tool_names_the_planners(
    tmp_path: Path, line: str, key: str, fix: str
) -> None:
    text = (
        f"name: t\nkind: finetune\nmodel: llama-2-7b\ndata: {{tokens: 1e9}}\ntraining:\n  {line}\n"
    )
    out = run(
        "estimate", str(write_file(tmp_path, "t.yaml", text)), "--gpu", "H100", "--count", "8"
    )
    assert_clean_error(out, f"{key}: unknown key", fix)


def test_a_training_sections_data_key_still_points_at_the_data_section(tmp_path: Path) -> None:
    text = "name: t\nkind: finetune\nmodel: llama-2-7b\ndata: {tokens: 1e9}\ntraining:\n  data: 4\n"
    out = run("estimate", str(write_file(tmp_path, "t.yaml", text)), "--gpu", "H100")
    assert_clean_error(out, "training.data: unknown key", "data belongs under the top level")


def test_a_flat_colocation_fee_names_the_rack_key(tmp_path: Path) -> None:
    # was: "did you mean 'colocation_usd_per_kw_month'?", which took 3,000 a kW-month
    path = write_file(
        tmp_path,
        "h.yaml",
        HARDWARE.read_text(encoding="utf-8") + "colocation_usd_per_month: 3000\n",
    )
    out = run("tco", "--hardware", str(path))
    assert_clean_error(out, "colocation_usd_per_month: unknown key", "rack_usd_per_month")


def test_optimizer_in_backward_that_rules_out_every_layout_leads_the_reasons(
    tmp_path: Path,
) -> None:
    # was: "needs at least 16.3 GiB per GPU ...; H100 has 80 GiB" first, the cause below it
    text = (
        "name: t\nkind: finetune\nmodel: llama-2-7b\ndata: {tokens: 1e9}\ntraining: "
        "{optimizer_in_backward: true, parallelism: {micro_batch: 1}, global_batch_samples: 256}\n"
    )
    est = planner.estimate(
        planner.load_workload(str(write_file(tmp_path, "t.yaml", text))), "H100", 8
    )
    assert not est.fits
    first, second = est.suggestions[:2]
    assert first.startswith("the least-memory layout needs")
    assert "within the H100's 80 GiB" in first and "optimizer_in_backward" in first
    assert "no gradient accumulation" in second
    assert "parallelism.micro_batch 1 is pinned below that share" in second
