"""Bad input the tenth sweep found: ``--deadline -3h``, ``inf`` and ``nan`` were "cannot read
deadline" and every form a deadline takes; ``--tokens -5M`` and ``5 million`` were "cannot read
as a number"; ``calibrate record`` without a measurement named the library's keywords, not the
command's options; ``prices diff`` given a file or a missing folder called it an unknown snapshot
id; and names given by another spelling got no suggestion: ``Topology(fabric="IB")`` in the
library, ``inference.framework: text-generation-inference`` in a workload file, and
``--precision bfloat16``, ``--kind pretraining`` or ``--format jsn`` on the command line.

The product rule each test pins: bad input gets a clear error naming the file, the field and a
fix, a non-zero exit and no traceback, on the command line and in the library.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import planner
from planner.errors import ConfigError, UnknownNameError
from planner.workload.estimate_types import Topology
from tests.cli_checks import assert_clean_error, invoke

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = "reference-2026-11-25"


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path / "data"))


# --- a deadline that is a number but no duration ----------------------------------------------


@pytest.mark.parametrize(
    "typed",
    [
        "-3h",  # was: "cannot read deadline '-3h'" and every form a deadline takes
        "-1",
        "inf",
        "+infh",
        "nan",
        "0",  # was: "duration must be positive", not saying it is the deadline
    ],
)
def test_a_deadline_that_is_no_positive_duration_says_so(typed: str) -> None:
    result = invoke("quote", "--workload", "gpt2-xl-finetune", "--deadline", typed)
    assert_clean_error(
        result,
        "--deadline",
        f"deadline must be a positive duration such as 24h or 3d, got {typed!r}",
        "write it like 90m, 24h",
        quiet_stdout=True,
    )
    assert "a weekday" not in result.stderr  # the list of date forms is no fix for a sign


@pytest.mark.parametrize(
    ("typed", "why", "fix"),
    [
        ("1e3", "exponent form", "write 1000h (41.67d)"),  # was: the forms; float() reads 1000
        ("2.4e1h", "exponent form", "write 24h"),
        ("+5h", "a sign", "write 5h"),
        (".5d", "a bare decimal point", "write 12h"),
    ],
)
def test_a_deadline_number_written_another_way_gets_its_hours(
    typed: str, why: str, fix: str
) -> None:
    result = invoke("quote", "--workload", "gpt2-xl-finetune", "--deadline", typed)
    assert_clean_error(result, "--deadline", f"cannot read deadline {typed!r}", why, fix)


def test_a_deadline_too_long_to_be_a_number_is_not_called_negative() -> None:
    result = invoke("quote", "--workload", "gpt2-xl-finetune", "--deadline", "1e400")
    assert_clean_error(result, "--deadline", "cannot read deadline", "write it like")
    assert "positive" not in result.stderr


# --- --tokens: a sign, NaN, or the scale as a word ---------------------------------------------


@pytest.mark.parametrize(
    ("typed", "message", "fix"),
    [
        ("-5M", "must be at least 1, got '-5M'", "at least 1"),  # was: "cannot read as a number"
        ("nan", "'nan' is not a finite number", "write it like 50M"),
        ("-inf", "'-inf' is not a finite number", "write it like 50M"),
        ("5 million", "its scale is a word", "write 5M"),
        ("1.5 billion", "its scale is a word", "write 1.5B"),
    ],
)
def test_tokens_that_are_no_count_get_the_reason(typed: str, message: str, fix: str) -> None:
    result = invoke("workloads", "new", "job", "--model", "gpt2", "--tokens", typed)
    assert_clean_error(result, "--tokens", message, fix, quiet_stdout=True)


# --- calibrate record: the options, not the library's keywords --------------------------------


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ((), "give --measured-tokens-per-second or --measured-step-seconds:"),
        (
            ("--measured-tokens-per-second", "1000", "--measured-step-seconds", "3"),
            "not both",
        ),
    ],
)
def test_calibrate_record_names_its_options(extra: tuple[str, ...], needle: str) -> None:
    """was: "measured_tokens_per_second: give one of measured_tokens_per_second and
    measured_step_seconds", the Python keywords on the command line."""
    result = invoke("calibrate", "record", "gpt2-finetune", "--gpu", "A100-80GB", *extra)
    assert_clean_error(result, needle, "e.g. --measured-tokens-per-second 12000")
    assert "measured_tokens_per_second" not in result.stderr


def test_calibrate_in_the_library_names_its_keywords() -> None:
    with pytest.raises(ConfigError) as caught:
        planner.calibrate("gpt2-finetune", "A100-80GB")
    assert caught.value.key_path == "measured_tokens_per_second"
    assert "measured_tokens_per_second=12000" in (caught.value.hint or "")
    assert "--" not in (caught.value.hint or "")  # was the command line's options


# --- prices diff: a file, or a folder that is not there ---------------------------------------


def test_prices_diff_of_a_file_says_a_snapshot_is_a_folder(tmp_path: Path) -> None:
    offers = tmp_path / "offers.csv"
    offers.write_text("provider\naws\n", encoding="utf-8")
    result = invoke("prices", "diff", str(offers), SNAPSHOT)
    # was: "unknown snapshot '.../offers.csv'" and the snapshot ids, as for a misspelt id
    assert_clean_error(
        result,
        "OLD",
        f"{offers} is a file",
        "a snapshot is a folder",
        f"give its folder, {tmp_path}",
    )


def test_prices_diff_of_a_missing_folder_says_so(tmp_path: Path) -> None:
    missing = tmp_path / "snapshots" / "nope"
    result = invoke("prices", "diff", SNAPSHOT, str(missing), "--format", "json")
    assert_clean_error(
        result, "NEW", "no such snapshot folder", "check the path", SNAPSHOT, quiet_stdout=True
    )
    assert "unknown snapshot" not in result.stderr


def test_prices_diff_in_the_library_names_the_argument(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        planner.prices_diff(SNAPSHOT, tmp_path / "gone")
    assert caught.value.key_path == "new"
    assert "no such snapshot folder" in str(caught.value)
    with pytest.raises(UnknownNameError) as unknown:
        planner.prices_diff("reference-2026-11-2", SNAPSHOT)
    assert unknown.value.key_path == "old"
    assert "did you mean reference-2026-11-25" in (unknown.value.hint or "")


# --- names written another way: the library's Topology, a serving stack, click's choices ------


@pytest.mark.parametrize(
    ("field", "typed", "fix"),
    [
        ("fabric", "IB", "did you mean 'infiniband'?"),  # was: "known fabric names: ..." alone
        ("fabric", "100GbE", "did you mean 'ethernet'?"),
        ("fabric", "nvlink", "write it under interconnect"),
        ("interconnect", "infiniband", "write it under fabric"),  # was the names alone
        ("interconnect", "NVL", "did you mean 'nvlink'?"),
    ],
)
def test_a_topology_link_by_another_name_gets_its_value(field: str, typed: str, fix: str) -> None:
    links = {"interconnect": "nvlink", "fabric": "infiniband", field: typed}
    with pytest.raises(UnknownNameError) as caught:
        Topology(gpus_per_node=8, **links)
    assert caught.value.key_path == field
    assert fix in (caught.value.hint or "")


@pytest.mark.parametrize(
    ("typed", "fix"),
    [
        ("text-generation-inference", "did you mean tgi?"),  # was: the known names alone
        ("transformers", "did you mean hf-transformers?"),
        ("llamacpp", "did you mean llama.cpp?"),
    ],
)
def test_a_serving_stack_by_its_full_name_gets_its_id(tmp_path: Path, typed: str, fix: str) -> None:
    text = (ROOT / "scenarios" / "workloads" / "llm-serving-7b.yaml").read_text(encoding="utf-8")
    assert "  precision: bf16\n" in text
    path = tmp_path / "serve.yaml"
    path.write_text(
        text.replace("  precision: bf16\n", f"  framework: {typed}\n  precision: bf16\n")
    )
    result = invoke("quote", "--workload", str(path), "--format", "json")
    assert_clean_error(result, "serve.yaml", "inference.framework", fix, quiet_stdout=True)
    with pytest.raises(ConfigError) as caught:
        planner.load_workload(str(path))
    assert caught.value.file is not None and "serve.yaml" in caught.value.file
    assert fix in str(caught.value)


@pytest.mark.parametrize(
    ("args", "option", "fix"),
    [
        # each was click's "is not one of ..." list alone
        (("--precision", "bf-16"), "--precision", "did you mean 'bf16'?"),
        (("--kind", "pretraining"), "--kind", "did you mean 'pretrain'?"),
        (("--method", "q-lora"), "--method", "did you mean 'qlora'?"),
        (("--format", "jsn"), "--format", "did you mean 'json'?"),
    ],
)
def test_a_choice_near_a_known_one_gets_it(args: tuple[str, ...], option: str, fix: str) -> None:
    result = invoke("estimate", "--model", "gpt2", "--tokens", "5M", "--gpu", "H100", *args)
    assert_clean_error(result, option, "is not one of", fix, quiet_stdout=True)


@pytest.mark.parametrize(
    ("args", "option", "fix"),
    [
        (
            ("quote", "-w", "gpt2-finetune", "--deadline", "24h", "--solver", "higs"),
            "--solver",
            "'highs'",
        ),
        (
            ("report", "quote", "-w", "gpt2-finetune", "--deadline", "24h", "--format", "htm"),
            "--format",
            "'html'",
        ),
        (("calibrate", "list", "--format", "markdwn"), "--format", "'markdown'"),
        (("offers", "--sort", "prize"), "--sort", "'price'"),
    ],
)
def test_other_commands_choices_suggest_too(args: tuple[str, ...], option: str, fix: str) -> None:
    result = invoke(*args)
    assert_clean_error(result, option, f"did you mean {fix}?", quiet_stdout=True)


def test_a_choice_near_none_keeps_clicks_list() -> None:
    result = invoke(
        "estimate", "--model", "gpt2", "--tokens", "5M", "--gpu", "H100", "--format", "xml"
    )
    assert_clean_error(result, "--format", "'table', 'json', 'csv', 'markdown'")
    assert "did you mean" not in result.stderr


# --- a folder given as the file to write -----------------------------------------------------


@pytest.mark.parametrize(
    ("args", "option", "example"),
    [
        (("build", "-w", "gpt2-finetune"), "--output", "machine.yaml"),
        (
            ("report", "quote", "-w", "gpt2-finetune", "--deadline", "24h"),
            "--output",
            "report.html",
        ),
    ],
)
def test_an_output_that_is_a_folder_gets_a_file_in_it(
    tmp_path: Path, args: tuple[str, ...], option: str, example: str
) -> None:
    """was: click's "File '...' is a directory." and no fix."""
    result = invoke(*args, "-o", str(tmp_path))
    assert_clean_error(
        result, option, "is a directory", f"name a file in it, e.g. {tmp_path / example}"
    )


# --- calibrate remove: an id in another case ---------------------------------------------------

_RUN = (
    "- {{id: {id}, recorded_on: '2026-01-01', workload: gpt2-xl-finetune, gpu: H100, count: 1, "
    "precision: bf16, framework: hf-trainer, method: full, kind: finetune, "
    "measured_tokens_per_s: 100, estimated_tokens_per_s: 90, estimator_revision: 5}}\n"
)


def test_calibrate_remove_of_an_id_in_another_case_names_that_one(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "calibration.yaml").write_text(_RUN.format(id="c1") + _RUN.format(id="c2"))
    result = invoke("calibrate", "remove", "C1")
    # was: "did you mean c1 or c2?", either offered for the id typed in capitals
    assert_clean_error(result, "ID", "unknown calibration 'C1'", "did you mean c1?")
    assert "c2" not in result.stderr
    with pytest.raises(UnknownNameError) as caught:
        planner.remove_calibration("C2")
    assert caught.value.key_path == "id" and caught.value.suggestions == ["c2"]
    assert len(planner.calibrations()) == 2  # nothing removed


def test_a_calibration_file_of_one_run_without_its_dash_says_so(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    one = _RUN.format(id="c1")[2:].strip().strip("{}").replace(", ", "\n")
    (data / "calibration.yaml").write_text(one + "\n")
    result = invoke("calibrate", "list", "--format", "json")
    # was: "expected a list of recorded runs" and "fix the entry" alone
    assert_clean_error(
        result,
        "calibration.yaml",
        "one run written as a mapping",
        "start its first line (id: ...) with '- '",
        quiet_stdout=True,
    )


# --- --format csv writes a CSV: a recorded run, no runs, no changes ---------------------------


def test_calibrate_record_as_csv_writes_a_csv_row() -> None:
    result = invoke(
        "calibrate",
        "record",
        "gpt2-finetune",
        "--gpu",
        "A100-80GB",
        "--measured-tokens-per-second",
        "52000",
        "--format",
        "csv",
    )
    assert result.exit_code == 0, result.output
    # was the sentence "recorded c1: gpt2-finetune on 1 x A100-80GB ..." on stdout
    header, row = result.stdout.splitlines()
    assert header.startswith("id,recorded_on,workload,gpu,count")
    assert row.startswith("c1,") and "recorded c1" not in result.stdout


@pytest.mark.parametrize(
    ("args", "header"),
    [
        (("calibrate", "list"), "id,recorded_on,workload"),  # no runs recorded
        (("prices", "diff", SNAPSHOT, SNAPSHOT), "provider,region,instance_type,change"),
    ],
)
def test_an_empty_csv_keeps_its_header(args: tuple[str, ...], header: str) -> None:
    result = invoke(*args, "--format", "csv")
    assert result.exit_code == 0, result.output
    # was two blank lines: no header, no document
    assert result.stdout.splitlines() == [result.stdout.splitlines()[0]]
    assert result.stdout.startswith(header)


# --- calibrate in the library: a fix for every refused measurement; a blank id --------------------


@pytest.mark.parametrize(
    ("kwargs", "key", "fix"),
    [
        ({"measured_step_seconds": "2s"}, "measured_step_seconds", "measured_step_seconds=2 "),
        ({"measured_step_seconds": float("nan")}, "measured_step_seconds", "e.g. measured_step"),
        ({"measured_step_seconds": -1}, "measured_step_seconds", "e.g. measured_step_seconds="),
        (
            {"measured_tokens_per_second": "52000"},
            "measured_tokens_per_second",
            "measured_tokens_per_second=52000 (a number, not text)",
        ),
    ],
)
def test_a_refused_measurement_gets_a_fix(kwargs: dict[str, object], key: str, fix: str) -> None:
    """was: a step time refused with no hint at all, after the whole estimate had run."""
    with pytest.raises(ConfigError) as caught:
        planner.calibrate("gpt2-finetune", "A100-80GB", **kwargs)
    assert caught.value.key_path == key
    assert fix in (caught.value.hint or "")


@pytest.mark.parametrize("typed", ["", "  "])
def test_calibrate_remove_of_a_blank_id_says_it_is_blank(typed: str) -> None:
    result = invoke("calibrate", "remove", typed)
    # was: "unknown calibration ''", as for a misspelt id
    assert_clean_error(result, "ID", "calibration id is blank", "e.g. c1")


# --- model.mlp: an activation's name that does not say the kind --------------------------------


def _model_with_mlp(tmp_path: Path, mlp: str) -> Path:
    path = tmp_path / "m.yaml"
    path.write_text(
        "name: m\nkind: finetune\nmodel:\n  preset: gpt2\n  ffn: 3072\n"
        f"  mlp: {mlp}\ndata:\n  tokens: 1e6\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize(
    ("mlp", "fix"),
    [
        ("silu", "write gated where the MLP has a gate projection"),  # was: "not one of" alone
        ("swish", "plain where it has not"),
        ("SwiGLU2", "did you mean gated (swiglu is a gated MLP)?"),
        ("gated_silu", "did you mean 'gated'?"),  # pydantic's nearest kind, as before
    ],
)
def test_an_mlp_named_by_its_activation_gets_the_kind(tmp_path: Path, mlp: str, fix: str) -> None:
    path = _model_with_mlp(tmp_path, mlp)
    result = invoke("estimate", str(path), "--gpu", "H100", "--format", "json")
    assert_clean_error(result, "m.yaml", "model.mlp", fix, quiet_stdout=True)
    with pytest.raises(ConfigError) as caught:
        planner.load_workload(str(path))
    assert caught.value.key_path == "model.mlp"


def test_an_mlp_kind_in_capitals_is_read(tmp_path: Path) -> None:
    """as its aliases (SwiGLU) are; was "'Gated' is not one of gated, plain"."""
    assert planner.load_workload(str(_model_with_mlp(tmp_path, "Gated"))).model.mlp == "gated"


# --- OfferFilter(min_interconnect=...): a link by another name --------------------------------


@pytest.mark.parametrize(
    ("typed", "fix"),
    [
        ("NVL", "did you mean 'nvlink'? (NVL names nvlink)"),  # was: the known names alone
        ("sxm", "did you mean 'nvswitch'?"),
        ("IB", "IB is a network between machines; min_interconnect is the link inside one"),
        ("ethernet", "a network between machines"),
    ],
)
def test_an_offer_filter_link_by_another_name_gets_its_value(typed: str, fix: str) -> None:
    from planner.catalog.query import OfferFilter

    with pytest.raises(UnknownNameError) as caught:
        OfferFilter(min_interconnect=typed)
    assert caught.value.key_path == "min_interconnect"
    assert fix in (caught.value.hint or "")


def test_an_offer_filter_link_in_capitals_is_read() -> None:
    """as Topology and --interconnect read it; was "did you mean nvlink?" for NVLink."""
    from planner.catalog.query import OfferFilter
    from planner.schema import Interconnect

    flt = OfferFilter(min_interconnect="NVLink")
    assert flt.min_interconnect is Interconnect.NVLINK


# --- purchase options by the clouds' own names --------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("preemptible", "spot"),  # GCP's name; was the known names alone
        ("Low Priority", "spot"),  # Azure's
        ("spot-instance", "spot"),
        ("payg", "on-demand"),
    ],
)
def test_a_purchase_option_by_a_clouds_name_gets_ours(typed: str, meant: str) -> None:
    result = invoke("offers", "--purchase", typed, "--format", "json")
    assert_clean_error(
        result, "--purchase", f"did you mean {meant!r}? ({typed} is written {meant} here)"
    )
    with pytest.raises(UnknownNameError) as caught:
        planner.OfferFilter(purchase_option=typed)
    assert caught.value.key_path == "purchase_option"
    assert f"did you mean {meant}?" in (caught.value.hint or "")


def test_an_offer_filter_purchase_option_in_capitals_is_read() -> None:
    """as --purchase Spot is; was "did you mean spot?" in the library."""
    flt = planner.OfferFilter(purchase_option="Spot")
    assert flt.purchase_option is planner.PurchaseOption.SPOT


# --- build --workload NAME:RUNS with the runs in words -------------------------------------------


@pytest.mark.parametrize(
    ("typed", "fix"),
    [
        ("gpt2-finetune:3 a month", "write gpt2-finetune:3 "),  # was "write NAME or NAME:RUNS"
        ("gpt2-finetune:3/month", "write gpt2-finetune:3 "),
        ("gpt2-finetune:4x", "write gpt2-finetune:4 "),
    ],
)
def test_build_runs_in_words_get_the_number(typed: str, fix: str) -> None:
    result = invoke("build", "--workload", typed, "--format", "json")
    assert_clean_error(result, "--workload", "cannot read runs per month", fix, quiet_stdout=True)


# --- YAML syntax errors: what was left open, and where ----------------------------------------


@pytest.mark.parametrize(
    ("text", "fix"),
    [
        # each was the parser's words alone, at the end of the file
        ('name: "x\nkind: finetune\n', "close the quote opened at line 1, column 7"),
        ("name: x\nkind: [finetune\n", "close the [ opened at line 2, column 7 with ]"),
        ("name: x\njust a line\nkind: finetune\n", "line 2 is not key: value: add the colon"),
        ("description: Note: a job\n", 'quote the value (description: "Note: ...")'),
    ],
)
def test_a_yaml_syntax_error_says_what_to_close_or_quote(
    tmp_path: Path, text: str, fix: str
) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(text, encoding="utf-8")
    result = invoke("estimate", str(path), "--gpu", "H100", "--format", "json")
    assert_clean_error(result, "w.yaml", "not valid YAML at line", fix, quiet_stdout=True)


def test_a_calibration_file_left_open_says_where(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "calibration.yaml").write_text("- {id: c1, gpu: H100\n", encoding="utf-8")
    result = invoke("calibrate", "list", "--format", "csv")
    assert_clean_error(
        result,
        "calibration.yaml",
        "close the { opened at line 1, column 3 with }",
        quiet_stdout=True,
    )


# --- --model: a config.json that is no JSON object ---------------------------------------------


@pytest.mark.parametrize(("text", "holds"), [("[1, 2]", "holds a list"), ('"gpt2"', "holds text")])
def test_a_config_json_that_is_no_object_says_what_it_holds(
    tmp_path: Path, text: str, holds: str
) -> None:
    path = tmp_path / "config.json"
    path.write_text(text, encoding="utf-8")
    result = invoke("estimate", "--model", str(path), "--tokens", "5M", "--gpu", "H100")
    # was: "a config.json is a JSON object" and no fix
    assert_clean_error(
        result, "config.json", holds, "pass the model's config.json from its Hugging Face"
    )


# --- a hardware file's amount in a currency below zero ----------------------------------------


@pytest.mark.parametrize(
    ("line", "got", "fix"),
    [
        ('capex: "-5000 EUR"', "'-5000 EUR'", "write 5000 EUR"),  # was: "must not be negative"
        ("capex: -5000", "'-5000'", "write 5000 "),
    ],
)
def test_a_negative_amount_in_a_currency_names_the_value(
    tmp_path: Path, line: str, got: str, fix: str
) -> None:
    text = (ROOT / "scenarios" / "hardware" / "8xh100-hgx.yaml").read_text(encoding="utf-8")
    assert "capex_usd: 310000" in text
    path = tmp_path / "hw.yaml"
    lines = [line if ln.startswith("capex_usd: 310000") else ln for ln in text.splitlines()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = invoke("tco", "--hardware", str(path), "--no-cloud", "--format", "json")
    assert_clean_error(
        result, "hw.yaml", f"capex: must be at least 0, got {got}", fix, quiet_stdout=True
    )
    with pytest.raises(ConfigError) as caught:
        planner.load_hardware(str(path))
    assert caught.value.key_path == "capex"


# --- a time spelt out in another unit than the option's -------------------------------------------


@pytest.mark.parametrize(
    ("args", "option", "fix"),
    [
        # each was "write the number alone: N", the number in the typed unit
        (
            ("report", "budget", "2027-ml-platform", "--time-limit", "24 hours"),
            "--time-limit",
            "write 86400: the option takes seconds",
        ),
        (
            ("report", "budget", "2027-ml-platform", "--time-limit", "2 minutes"),
            "--time-limit",
            "write 120:",
        ),
        (
            ("report", "tco", "--hardware", "8xh100-hgx", "--years", "1095 days"),
            "--years",
            "write 3: the option takes years",
        ),
        (
            (
                "calibrate",
                "record",
                "gpt2-finetune",
                "--gpu",
                "A100-80GB",
                "--measured-step-seconds",
                "1 hour",
            ),
            "--measured-step-seconds",
            "write 3600:",
        ),
    ],
)
def test_a_time_in_another_unit_gets_the_options_number(
    args: tuple[str, ...], option: str, fix: str
) -> None:
    result = invoke(*args)
    assert_clean_error(result, option, fix)
    assert "write the number alone" not in result.stderr


# --- a subcommand by another word, or an argument without its subcommand ----------------------


@pytest.mark.parametrize(
    ("args", "fix"),
    [
        # each was click's "No such command 'delete'." alone
        (("calibrate", "delete", "c1"), "did you mean 'remove'? (delete is written remove here)"),
        (("calibrate", "rm", "c1"), "did you mean 'remove'?"),
        (("prices", "show"), "did you mean 'status'?"),
        (("prices", "compare", SNAPSHOT, SNAPSHOT), "did you mean 'diff'?"),
        (("workloads", "gpt2-finetune"), "workloads show gpt2-finetune`?"),
        (("workloads", "list"), "workloads` alone does that: drop 'list'"),
    ],
)
def test_a_subcommand_by_another_word_gets_the_one_meant(args: tuple[str, ...], fix: str) -> None:
    result = invoke(*args)
    assert_clean_error(result, f"No such command {args[1]!r}", fix, quiet_stdout=True)


def test_an_unknown_subcommand_keeps_clicks_answer() -> None:
    result = invoke("calibrate", "recrod", "gpt2-finetune")
    assert_clean_error(result, "No such command 'recrod'. Did you mean 'record'?")


# --- planner models: a listing word or a pattern as the search ----------------------------------


@pytest.mark.parametrize(
    ("typed", "fix"),
    [
        ("list", "leave the search out for every preset"),  # was: the first 12 preset names
        ("llama*", "the search is plain text, not a pattern: search for 'llama'"),
    ],
)
def test_models_search_by_a_word_or_pattern_gets_the_fix(typed: str, fix: str) -> None:
    result = invoke("models", typed, "--format", "json")
    assert_clean_error(result, "search", f"unknown model preset {typed!r}", fix, quiet_stdout=True)
    with pytest.raises(UnknownNameError) as caught:
        planner.model_presets(typed)
    assert fix in (caught.value.hint or "")


# --- a number outside an option's range, or NaN: the fix, not the range alone -------------------


@pytest.mark.parametrize(
    ("option", "typed", "fix"),
    [
        # was: "-5.0 is not in the range x>0." and no fix
        ("--measured-tokens-per-second", "-5", "give a number above 0, e.g. 12000"),
        ("--measured-tokens-per-second", "0", "give a number above 0, e.g. 12000"),
        ("--measured-tokens-per-second", "nan", "give a number above 0, e.g. 12000"),
        ("--measured-step-seconds", "0", "give a number above 0, e.g. 2.5"),
    ],
)
def test_a_measurement_outside_its_range_gets_a_fix(option: str, typed: str, fix: str) -> None:
    result = invoke("calibrate", "record", "gpt2-finetune", "--gpu", "A100-80GB", option, typed)
    assert_clean_error(result, option, fix)


def test_a_range_refusal_keeps_the_range_and_gives_the_default() -> None:
    result = invoke("quote", "-w", "gpt2-finetune", "--deadline", "24h", "--confidence", "150")
    assert_clean_error(
        result, "--confidence", "0<=x<100", "give a number 0 or more and below 100, e.g. 90"
    )


# --- a deadline with a decimal comma, grouped digits or a unit spelt another way --------------


@pytest.mark.parametrize("typed", ["", "  "])
def test_prices_history_of_a_blank_region_says_it_is_blank(typed: str) -> None:
    result = invoke("prices", "history", "--instance", "p4d.24xlarge", "--region", typed)
    # was: "no snapshot lists p4d.24xlarge in region ''" and twelve regions
    assert_clean_error(result, "--region", "region is blank", "leave it out for every region")
    with pytest.raises(ConfigError) as caught:
        planner.prices_history("p4d.24xlarge", region=typed)
    assert caught.value.key_path == "region"


# --- a number with thousands separators or a decimal comma on an option ------------------------

_RECORD = ("calibrate", "record", "gpt2-finetune", "--gpu", "A100-80GB")


@pytest.mark.parametrize(
    ("args", "option", "fix"),
    [
        # each was "'52,000' is not a valid float." (or "write a whole number in digits, e.g. 8")
        (
            (*_RECORD, "--measured-tokens-per-second", "52,000"),
            "--measured-tokens-per-second",
            "write 52000 (no thousands separators",
        ),
        (
            (*_RECORD, "--measured-tokens-per-second", "52 000"),
            "--measured-tokens-per-second",
            "write 52000 (no spaces",
        ),
        (
            (*_RECORD, "--measured-step-seconds", "0,25"),
            "--measured-step-seconds",
            "write 0.25 (a decimal point, not a comma)",
        ),
        ((*_RECORD, "--count", "1,000", "--measured-step-seconds", "1"), "--count", "write 1000 "),
        (
            ("build", "-w", "gpt2-finetune", "--gpus", "4,8"),
            "--gpus",
            "give --gpus once per value: --gpus 4 --gpus 8",
        ),
        (
            ("build", "-w", "gpt2-finetune", "--gpus", "4,16"),
            "--gpus",
            "each a whole number from 1 to 8",
        ),
    ],
)
def test_a_number_written_with_separators_gets_it_plain(
    args: tuple[str, ...], option: str, fix: str
) -> None:
    result = invoke(*args)
    assert_clean_error(result, option, fix)
