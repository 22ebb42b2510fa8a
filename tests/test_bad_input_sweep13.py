"""Bad input the thirteenth sweep found (about 600 inputs tried, on the command line, in hand-edited
files and in the library): a budget whose demand nothing could supply came back an "optimal" $0
plan; ``build`` picked machines busier than a month has hours; a result's own methods let
ZeroDivisionError and TypeError out (``usd_per_useful_gpu_hour_at(0)``, ``power_kw_at("x")``)
and read 60 as sixty times the work; YAML 1.1's octal and base-60 numbers were read without a
word (``lora_rank: 010`` as 8, ``hours: 1:30`` as 90); a workload file's latency target in seconds
went to the solver; ``PLANNER_DATA_DIR='$HOME/x'`` made a folder named ``$HOME``; LoRA on a CNN
reported the whole model as adapters; a global batch of 1.5 sequences; ``--deadline 1M`` was a
minute; prices and their age were dated by providers a comparison never used; a private price
list took a price of 0, an interruption rate typed as a fraction and NVSwitch on an L4; a
snapshot id was refused where a folder was taken; pydantic's names for a union's branches
(``str:``) leaked into hints.

The product rule each test pins: bad input gets a clear error naming the field and a fix, a
non-zero exit (2 for the user's input, 3 for a plan that cannot be made) and no traceback, on
the command line and in the library; and no result is silently wrong.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import planner
from planner.errors import ConfigError, DataDirError, InfeasibleError
from planner.optimize.program import LinearProgram, Terms
from planner.optimize.solvers import SolveStatus, available_solvers, get_solver
from planner.ownership.build import build_machines
from tests.cli_checks import assert_clean_error, invoke

SNAPSHOT = "reference-2026-11-25"


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path / "data"))


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# --- budgets and machines that cannot do the work -------------------------------------------------


def test_a_demand_nothing_can_supply_is_infeasible_not_a_free_plan(tmp_path: Path) -> None:
    # was: "optimal mix" at 0 USD, every month's 1,000 GPU-hours supplied by nothing
    spec = _write(
        tmp_path / "b.yaml",
        "name: b\nhorizon_months: 12\nclasses:\n  - gpu: H100\n    demand_gpu_hours: 1000\n",
    )
    with pytest.raises(InfeasibleError, match="no plan meets demand") as caught:
        planner.budget(str(spec), sensitivity=False)
    assert "on_demand_usd_per_gpu_hour for H100" in (caught.value.hint or "")
    assert_clean_error(
        invoke("budget", str(spec), "--no-sensitivity"), "no plan meets", exit_code=3
    )


def test_owned_machines_short_of_the_demand_are_infeasible_not_optimal(tmp_path: Path) -> None:
    # was: 23,465 USD "optimal", 98% of the demand never supplied
    spec = _write(
        tmp_path / "b.yaml",
        "name: b\nhorizon_months: 12\nclasses:\n  - gpu: A100-80GB\n"
        "    demand_gpu_hours: 100000\n    owned:\n"
        "      - {hardware: 4xa100-80gb-nvlink, machines: 1, utilization: 0.7}\n",
    )
    with pytest.raises(InfeasibleError, match="no plan meets demand"):
        planner.budget(str(spec), sensitivity=False)


@pytest.mark.parametrize("solver", available_solvers())
def test_a_row_no_column_can_meet_is_infeasible_for_every_solver(solver: str) -> None:
    # HiGHS called a model without columns "empty" and optimal; CBC "not solved" (raise the limit)
    program = LinearProgram("demand")
    program.add_ge("need", Terms(-1000.0), 0.0)
    result = get_solver(solver).solve(program)
    assert result.status is SolveStatus.INFEASIBLE
    met = LinearProgram("none")
    met.add_ge("need", Terms(0.0), 0.0)  # 0 >= 0: nothing to supply, nothing needed
    assert get_solver(solver).solve(met).status is SolveStatus.OPTIMAL


def test_build_leaves_out_machines_busier_than_a_month() -> None:
    # was: "fastest within the budget: 1 x RTX4090 ... 886.4 h of runs a month"
    result = invoke("build", "--workload", "llama-2-7b-lora:100", "--budget", "5000")
    assert_clean_error(result, "in a month", "a month has 730", "fewer runs a month", exit_code=3)
    spec = planner.load_workload("llama-2-7b-lora")
    with pytest.raises(InfeasibleError, match="in a month"):
        build_machines([(spec, 100)], budget_usd=5000)
    fits = build_machines([(spec, 10)], budget_usd=5000)
    assert fits.machines and all(m.hours_per_month <= 730 for m in fits.machines)


def test_tco_past_the_lifetime_says_the_machines_run_depreciated() -> None:
    result = invoke("tco", "--hardware", "8xh100-hgx", "--years", "10", "--format", "json")
    assert result.exit_code == 0, result.output
    json.loads(result.stdout)  # the document alone on stdout
    assert "past the hardware's 4-year lifetime" in result.stderr
    assert "no replacement bought" in result.stderr
    quiet = invoke("tco", "--hardware", "8xh100-hgx", "--years", "3", "--format", "json")
    assert "lifetime" not in quiet.stderr


# --- the result objects' methods ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (0, "must be in [0.01, 1]"),
        (60, "did you mean 0.6?"),
        (-1, "must be in [0.01, 1]"),
        (float("nan"), "finite"),
        ("x", "expected a number"),
    ],
)
def test_cost_at_another_utilization_checks_it(value: object, words: str) -> None:
    result = planner.tco("8xh100-hgx", utilization=0.6, with_cloud=False)
    with pytest.raises(ConfigError) as caught:
        result.usd_per_useful_gpu_hour_at(value)
    assert caught.value.key_path == "utilization"
    assert words in f"{caught.value.message} {caught.value.hint}"
    assert result.usd_per_useful_gpu_hour_at(0.6) == pytest.approx(result.usd_per_useful_gpu_hour)


@pytest.mark.parametrize("value", [-1, 2, "x", float("inf")])
def test_power_at_a_utilization_outside_0_to_1_is_refused(value: object) -> None:
    hardware = planner.load_hardware("8xh100-hgx")
    with pytest.raises(ConfigError) as caught:
        hardware.power_kw_at(value)
    assert caught.value.key_path == "utilization"
    assert hardware.power_kw_at(0) == pytest.approx(hardware.idle_power_kw)
    assert hardware.power_kw_at(1) == pytest.approx(hardware.power_kw_avg)


def test_changed_names_an_unknown_key() -> None:
    spec = planner.load_workload("gpt2-finetune")
    with pytest.raises(ConfigError, match="unknown key '5'"):
        spec.changed(5)
    with pytest.raises(ConfigError) as caught:
        spec.train.changed("lora_rnk")
    assert "lora_rank" in (caught.value.hint or "")


def test_variant_takes_trials_and_a_mapping() -> None:
    spec = planner.load_workload("gpt2-finetune")
    # was: "trials: is another name for pieces, also given", a key the caller never gave
    assert spec.variant(trials=5).pieces == 5
    assert planner.load_workload("gpt2-finetune-sweep").variant(trials=3).pieces == 3
    # was: TypeError ("takes 1 positional argument but 2 were given")
    assert spec.variant({"training": {"method": "lora"}}).train.method.value == "lora"
    with pytest.raises(ConfigError, match="as a mapping or as keywords"):
        spec.variant(5)
    with pytest.raises(ConfigError, match="another name for pieces"):
        spec.variant(trials=2, pieces=3)


# --- files: numbers YAML reads its own way, keys pydantic names its own way -----------------------


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("training: {method: lora, lora_rank: 010}", "010 is the octal number 8"),
        ("training: {method: lora, lora_rank: 1:30}", "base-60 number to YAML (90)"),
    ],
    ids=["octal", "base-60"],
)
def test_yaml_1_1_numbers_are_refused_at_their_line(tmp_path: Path, line: str, words: str) -> None:
    path = _write(
        tmp_path / "w.yaml",
        f"name: w\nkind: finetune\nmodel: gpt2\n{line}\ndata: {{tokens: 1.0e+8}}\n",
    )
    with pytest.raises(ConfigError, match="line 4") as caught:
        planner.load_workload(str(path))
    assert words in caught.value.message
    ok = _write(tmp_path / "ok.yaml", "name: w\nkind: finetune\nmodel: gpt2\n"
                "training: {method: lora, lora_rank: 10}\ndata: {tokens: 0x5F5E100}\n")  # fmt: skip
    spec = planner.load_workload(str(ok))
    assert spec.train.lora_rank == 10 and spec.data is not None and spec.data.tokens == 1e8


def test_a_latency_target_in_seconds_in_a_file_gets_the_milliseconds(tmp_path: Path) -> None:
    # was: quoted, "no fleet meets the latency targets" (exit 3)
    path = _write(
        tmp_path / "s.yaml",
        "name: s\nkind: inference\nmodel: llama-2-7b\n"
        "inference: {tokens_per_s: 5000, hours: 730, slo: {tpot_ms_p95: 0.06}}\n",
    )
    result = invoke("quote", "--workload", str(path))
    assert_clean_error(result, "inference.slo.tpot_ms_p95", "did you mean 60 ms")


def test_lora_on_a_cnn_is_refused(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "r.yaml",
        "name: r\nkind: finetune\nmodel: resnet18\ntraining: {method: lora}\n",
    )
    with pytest.raises(ConfigError, match="convolutions: use method: full") as caught:
        planner.load_workload(str(path))
    assert caught.value.key_path == "training.method"


def test_a_batch_in_tokens_holds_whole_sequences(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "w.yaml",
        "name: w\nkind: finetune\nmodel: {preset: gpt2, seq_len: 1024}\n"
        "data: {tokens: 1.0e+7}\ntraining: {global_batch_tokens: 1536.5}\n",
    )
    est = planner.estimate(str(path), gpu="A100-80GB")
    assert any("global batch 2 per optimizer step" in a for a in est.assumptions)


def test_hints_name_the_key_not_the_type(tmp_path: Path) -> None:
    import yaml

    base = yaml.safe_load(
        (Path(__file__).parents[1] / "scenarios/hardware/8xh100-hgx.yaml").read_text()
    )
    number = _write(tmp_path / "h1.yaml", yaml.safe_dump({**base, "source": 5}))
    with pytest.raises(ConfigError) as caught:
        planner.load_hardware(str(number))
    # was 'put it in quotes to keep it as text: str: "5"', the union's branch for the key
    assert caught.value.hint == 'put it in quotes to keep it as text: source: "5"'
    empty = _write(tmp_path / "h2.yaml", yaml.safe_dump({**base, "fabric": None}))
    with pytest.raises(ConfigError) as caught:
        planner.load_hardware(str(empty))
    assert "fabric has no value" in (caught.value.hint or "")
    assert "roce'?" not in (caught.value.hint or "")  # was "did you mean 'roce'?" for null


def test_a_start_month_after_the_horizon_is_blamed_on_itself(tmp_path: Path) -> None:
    spec = _write(
        tmp_path / "b.yaml",
        "name: b\nhorizon_months: 36\nclasses:\n  - gpu: H100\n    demand_gpu_hours: 100\n"
        "    on_demand_usd_per_gpu_hour: 3\nworkloads:\n"
        "  - {name: w, gpu: H100, gpu_hours: 100, start_month: 40, deadline_month: 40}\n",
    )
    with pytest.raises(ConfigError, match="after the horizon") as caught:
        planner.budget(str(spec), sensitivity=False)
    assert caught.value.key_path == "workloads[0].start_month"
    assert "from 1 to 36" in (caught.value.hint or "")


def test_a_calibration_recorded_in_the_future_is_refused(tmp_path: Path) -> None:
    folder = Path(os.environ["PLANNER_DATA_DIR"])
    folder.mkdir(parents=True)
    planner.calibrate("gpt2-finetune", "A100-80GB", measured_tokens_per_second=40_000)
    text = (folder / "calibration.yaml").read_text()
    (folder / "calibration.yaml").write_text(
        "\n".join(
            "  recorded_on: '2099-01-01'" if "recorded_on" in line else line
            for line in text.splitlines()
        )
        + "\n"
    )
    with pytest.raises(ConfigError, match="2099-01-01 is in the future"):
        planner.calibrations()


# --- the command line's words ---------------------------------------------------------------------


def test_a_capital_m_deadline_asks_minutes_or_months() -> None:
    # was read as one minute: "a 0.0166667 h deadline cannot be met" (exit 3)
    result = invoke("quote", "-w", "gpt2-finetune", "--deadline", "1M")
    assert_clean_error(result, "minutes or as months", "1min", "730h")
    assert (
        invoke("quote", "-w", "gpt2-finetune", "--deadline", "90m", "--format", "json").exit_code
        == 0
    )


def test_a_percent_sign_on_the_diff_threshold_gets_the_number() -> None:
    result = invoke("prices", "diff", SNAPSHOT, SNAPSHOT, "--threshold", "5%")
    assert_clean_error(result, "write the number alone: 5")


def test_md_is_markdown() -> None:
    assert_clean_error(invoke("offers", "--format", "md"), "did you mean 'markdown'")


def test_a_monthly_max_price_reads_per_month() -> None:
    # was per hour whatever --period said: 1,000 a month passed every offer
    result = invoke("offers", "--period", "month", "--max-price", "1000", "--format", "json")
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert rows and all(r["price_on_demand_usd_per_hour"] * 730 <= 1000 + 1e-6 for r in rows)


def test_library_words_stay_out_of_command_line_hints() -> None:
    assert_clean_error(invoke("models", ""), "e.g. llama")
    result = invoke("tco", "--hardware", "8xh100-hgx", "--no-cloud", "--provider", "aws")
    assert_clean_error(result, "--provider", "switched off")
    assert "drop with_cloud" not in result.stderr


# --- where data lives -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "words"),
    [
        ("$HOME/x", "$HOME is a variable nothing expanded"),
        ("${XDG_DATA_HOME}/planner", "${XDG_DATA_HOME} is a variable"),
        ("%APPDATA%\\planner", "%APPDATA% is a variable"),
        ("/tmp/planner-data ", "begins or ends with blanks"),
    ],
)
def test_an_unexpanded_or_padded_data_dir_is_refused(
    setting: str, words: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PLANNER_DATA_DIR", setting)
    with pytest.raises(DataDirError, match=words.replace("$", r"\$").replace("{", r"\{")):
        planner.calibrations()
    assert not any(tmp_path.iterdir())  # no folder made
    result = invoke("calibrate", "list")
    assert_clean_error(result, "PLANNER_DATA_DIR")


def test_a_data_dir_in_a_loop_of_links_is_the_settings_fault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path / "a"))
    assert_clean_error(invoke("offers", "--limit", "1"), "loop of symbolic links")  # was exit 1


# --- prices: which providers, which snapshot ------------------------------------------------------


def test_a_comparison_is_dated_by_the_providers_it_used() -> None:
    aws = planner.tco("8xh100-hgx", providers=("aws",))
    assert {c.provider for c in aws.comparisons} == {"aws"}
    assert aws.offers_source.startswith("aws:") and "azure" not in aws.offers_source
    book = planner.load_offer_book()
    aws_date = next(s.as_of for s in book.sources if s.provider == "aws")
    assert aws.offers_as_of == aws_date


def test_stale_warnings_keep_to_the_providers_asked_for() -> None:
    import datetime

    book = planner.load_offer_book(today=datetime.date(2040, 1, 1))  # every part stale
    assert len(book.stale_warnings(90)) == len(book.sources)
    only = book.stale_warnings(90, ("aws",))
    assert len(only) == 1 and only[0].startswith("aws prices")


def test_a_snapshot_id_is_taken_where_a_folder_is() -> None:
    result = invoke(
        "tco", "--hardware", "8xh100-hgx", "--snapshot-dir", SNAPSHOT, "--format", "json"
    )
    assert result.exit_code == 0, result.stderr
    quote = planner.quote(workload="gpt2-finetune", deadline_hours=24, snapshot_dir=SNAPSHOT)
    assert quote.plans
    with pytest.raises(ConfigError, match="unknown snapshot") as caught:
        planner.quote(
            workload="gpt2-finetune", deadline_hours=24, snapshot_dir="referense-2026-11-25"
        )
    assert SNAPSHOT in (caught.value.hint or "")


def _price_list(tmp_path: Path, change: dict[str, str]) -> Path:
    import csv
    import io

    text = invoke("offers", "--provider", "aws", "--gpu", "H100", "--format", "csv").stdout
    rows = list(csv.DictReader(io.StringIO(text)))
    row = {**rows[0], **change}
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerow(row)
    return _write(tmp_path / "mine.csv", out.getvalue())


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"price_on_demand_usd_per_hour": "0"}, "a price of 0"),
        ({"spot_interruption_pct": "0.05"}, "did you mean 5"),
        (
            {
                "gpu_model": "L4",
                "gpu_memory_gib": "24",
                "gpu_memory_total_gib": "192",
                "gpu_memory_listed_gib": "24",
                "gpu_count": "8",
                "interconnect": "nvswitch",
            },
            "the L4 has no NVLink",
        ),
    ],
    ids=["zero-price", "fraction-interruption", "nvswitch-on-l4"],
)
def test_a_private_price_list_is_held_to_the_other_inputs_rules(
    tmp_path: Path, change: dict[str, str], words: str
) -> None:
    path = _price_list(tmp_path, change)
    with pytest.raises(ConfigError, match=words) as caught:
        planner.load_offer_book(offers_files=[str(path)])
    assert caught.value.key_path is not None and caught.value.key_path.startswith("row 2")
    plain = _price_list(tmp_path, {})
    assert len(planner.load_offer_book(offers_files=[str(plain)]).offers)


def test_a_quote_lists_the_prices_of_the_providers_asked_for() -> None:
    quote = planner.quote(workload="gpt2-finetune", deadline_hours=24, providers=("aws",))
    assert [s.provider for s in quote.price_sources] == ["aws"]
    result = invoke("quote", "-w", "gpt2-finetune", "--deadline", "24h", "--provider", "aws")
    assert result.exit_code == 0, result.stderr
    assert "prices: aws as of" in result.stdout and "prices: azure" not in result.stdout
    assert "azure prices are" not in result.stdout + result.stderr
