"""A hostile user: broken files, odd options and corrupt snapshots through every command.

The product rule each test pins: bad input gets a clear error naming the file, the field and a
fix, a non-zero exit code and no traceback; a corrupt snapshot never loses the last good prices.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner, Result

import planner
from planner.catalog.store import write_snapshot
from planner.cli import main
from planner.errors import PlannerError
from tests.conftest import offer_row
from tests.test_bad_input_slips import LIBRARY as SLIPS_LIBRARY

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"
WORKLOAD = (SCENARIOS / "workloads" / "gpt2-xl-finetune.yaml").read_text(encoding="utf-8")
HARDWARE = (SCENARIOS / "hardware" / "8xh100-hgx.yaml").read_text(encoding="utf-8")
BUDGET = (SCENARIOS / "budgets" / "2027-ml-platform.yaml").read_text(encoding="utf-8")


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def assert_clean_error(result: Result, *needles: str, exit_code: int | None = None) -> None:
    """Non-zero exit, no traceback, and every needle in the message (case-insensitive)."""
    text = result.output
    assert result.exit_code != 0, text
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"escaped {type(result.exception).__name__}: {result.exception}"
    )
    assert "Traceback" not in text
    for needle in needles:
        assert needle.lower() in text.lower(), f"{needle!r} not in:\n{text}"
    if exit_code is not None:
        assert result.exit_code == exit_code, text


def edit(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


# --- broken files: the same mistakes in a workload, a hardware and a budget file ----------------

Run = Callable[[str], Result]
COMMANDS: dict[str, tuple[str, Run]] = {
    "workload": (WORKLOAD, lambda path: invoke("estimate", path, "--gpu", "H100")),
    "hardware": (HARDWARE, lambda path: invoke("tco", "--hardware", path, "--no-cloud")),
    "budget": (BUDGET, lambda path: invoke("budget", path, "--no-sensitivity")),
}

# (file content from the good file's text, words the message must contain)
BROKEN_FILES: list[tuple[str, Callable[[str], str | bytes], tuple[str, ...]]] = [
    # an empty file and a comment-only file are YAML null, not a mapping
    ("empty", lambda good: "", ("mapping",)),
    ("comment only", lambda good: "# nothing yet\n", ("mapping",)),
    ("a list", lambda good: "- a\n- b\n", ("mapping",)),
    ("a scalar", lambda good: "42\n", ("mapping",)),
    # an unclosed flow list: the message says where
    ("syntax", lambda good: good + "\nfoo: [unclosed\n", ("not valid yaml", "line")),
    # a tab in the indentation: the fix is spelt out
    ("tab", lambda good: "a:\n\tb: 1\n" + good, ("line 2", "indent with spaces")),
    # PyYAML keeps the last of two equal keys silently; that hides a mistake
    ("duplicate key", lambda good: good + "\nname: again\n", ("'name' appears twice",)),
    # binary and Latin-1 bytes used to escape as UnicodeDecodeError tracebacks
    ("binary", lambda good: bytes(range(256)) * 4, ("binary file",)),
    (
        "latin-1",
        lambda good: good.encode() + "description2: caf\u00e9\n".encode("latin-1"),
        ("not utf-8", "save the file as utf-8"),
    ),
    # tens of MB of YAML took 25 s to parse before it failed or, worse, loaded
    ("huge", lambda good: good + "# " + "x" * (2 * 1024 * 1024) + "\n", ("MiB", "right file")),
]


@pytest.mark.parametrize("kind", sorted(COMMANDS))
@pytest.mark.parametrize(
    ("case", "content", "needles"), BROKEN_FILES, ids=[c[0] for c in BROKEN_FILES]
)
def test_broken_file_is_a_clean_error_naming_it(
    tmp_path: Path,
    kind: str,
    case: str,
    content: Callable[[str], str | bytes],
    needles: tuple[str, ...],
) -> None:
    good, run = COMMANDS[kind]
    path = tmp_path / f"{kind}.yaml"
    data = content(good)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    assert_clean_error(run(str(path)), str(path), *needles, exit_code=2)


@pytest.mark.parametrize("kind", sorted(COMMANDS))
def test_a_directory_given_as_the_file_says_so(tmp_path: Path, kind: str) -> None:
    _, run = COMMANDS[kind]
    folder = tmp_path / f"{kind}.yaml"
    folder.mkdir()
    assert_clean_error(run(str(folder)), str(folder), "is a directory", exit_code=2)


@pytest.mark.parametrize("kind", sorted(COMMANDS))
def test_a_missing_path_says_so(tmp_path: Path, kind: str) -> None:
    _, run = COMMANDS[kind]
    assert_clean_error(run(str(tmp_path / "nope.yaml")), "nope.yaml", exit_code=2)


# --- a workload file with bad values ------------------------------------------------------------

BAD_WORKLOADS = [
    # a misspelt key is reported as itself, with its missing twin suggested (not "kind is required")
    ("kind: finetune", "knd: finetune", ("knd", "unknown key", "did you mean 'kind'")),
    # a deadline belongs on the command line, not in the workload
    ("kind: finetune", "kind: finetune\ndedline: 24h", ("dedline", "--deadline")),
    ("tokens: 3.1e8 ", "tokens: lots ", ("data.tokens", "expected a number", "'lots'")),
    ("tokens: 3.1e8 ", "tokens: -5 ", ("data.tokens", "must be at least 1, got -5")),
    # NaN and infinity used to reach the estimator: inf tokens -> "no configuration can run",
    # inf params -> ValueError traceback
    ("tokens: 3.1e8 ", "tokens: .nan ", ("data.tokens", "finite")),
    ("tokens: 3.1e8 ", "tokens: .inf ", ("data.tokens", "finite")),
    ("model: gpt2-xl ", "model: {preset: gpt2-xl, params: .inf} ", ("model.params", "finite")),
    # a bool is not a number (pydantic read `true` as 1 token)
    ("tokens: 3.1e8 ", "tokens: true ", ("data.tokens", "expected a number, got true")),
    ("model: gpt2-xl ", "model: gpt2-xxl ", ("model", "did you mean gpt2-xl")),
    ("precision: bf16", "precision: bf61", ("training.precision", "did you mean 'bf16'")),
    ("kind: finetune", "kind: finetune\npieces: 1.5", ("pieces", "whole number")),
    # shapes that cannot exist: heads that do not split the hidden size, more KV heads than heads
    ("model: gpt2-xl ", "model: {preset: gpt2-xl, heads: 7} ", ("model.heads", "1600")),
    ("model: gpt2-xl ", "model: {preset: gpt2-xl, kv_heads: 50} ", ("model.kv_heads",)),
    # a pinned tensor degree beyond the head count hit an AssertionError in the strategy search
    (
        "method: full",
        "method: full\n  parallelism: {tensor: 1000}",
        ("training.parallelism.tensor", "25 attention heads"),
    ),
    ("method: full", "method: lora\n  lora_rank: 100000", ("training.lora_rank", "1600")),
]


@pytest.mark.parametrize(("old", "new", "needles"), BAD_WORKLOADS)
def test_bad_workload_value(tmp_path: Path, old: str, new: str, needles: tuple[str, ...]) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(edit(WORKLOAD, old, new), encoding="utf-8")
    for result in (
        invoke("estimate", str(path), "--gpu", "H100"),
        invoke("workloads", "show", str(path)),
    ):
        assert_clean_error(result, str(path), *needles, exit_code=2)


# --- a hardware file with bad values ------------------------------------------------------------

BAD_HARDWARE = [
    # the misspelt key is the line to fix; "gpu: required key is missing" pointed elsewhere
    ("gpu: H100", "gpu_modle: H100", ("gpu_modle", "did you mean 'gpu'")),
    ("gpu: H100", "gpu: H100-SMX", ("gpu", "did you mean H100")),
    ("fabric: infiniband", "fabric: infinband", ("fabric", "did you mean 'infiniband'")),
    ("interconnect: nvswitch", "interconnect: nvlnk", ("interconnect", "did you mean 'nvlink'")),
    ("capex_usd: 310000", "capex_usd: .inf", ("capex_usd", "finite")),
    ("lifetime_years: 4", "lifetime_years: .nan", ("lifetime_years", "finite")),
    ("capex_usd: 310000", "capex_usd: 1e308", ("capex_usd", "check the units")),
    ("gpus_per_machine: 8", "gpus_per_machine: eight", ("gpus_per_machine", "whole number")),
]


@pytest.mark.parametrize(("old", "new", "needles"), BAD_HARDWARE)
def test_bad_hardware_value(tmp_path: Path, old: str, new: str, needles: tuple[str, ...]) -> None:
    path = tmp_path / "hw.yaml"
    path.write_text(edit(HARDWARE, old, new), encoding="utf-8")
    result = invoke("tco", "--hardware", str(path), "--no-cloud")
    assert_clean_error(result, str(path), *needles, exit_code=2)


# --- a budget file with bad values --------------------------------------------------------------

BAD_BUDGETS = [
    # NaN reached the MILP as PulpError / ValueError tracebacks
    ("capex_limit_usd: 1500000", "capex_limit_usd: .nan", ("capex_limit_usd", "finite")),
    ("demand_gpu_hours: 6000", "demand_gpu_hours: .nan", ("classes[1].demand_gpu_hours",)),
    ("demand_gpu_hours: 6000", "demand_gpu_hours: .inf", ("classes[1].demand_gpu_hours",)),
    (
        "on_demand_usd_per_gpu_hour: 2.99",
        "on_demand_usd_per_gpu_hour: .nan",
        ("classes[0].on_demand_usd_per_gpu_hour", "finite"),
    ),
    # 1e300 GPU-hours crashed HiGHS with an IndexError
    (
        "demand_gpu_hours: 6000",
        "demand_gpu_hours: 1e300",
        ("classes[1].demand_gpu_hours", "GPU-hours"),
    ),
    # month 13 was accepted and printed as "2027-13"
    ('start: "2027-01"', 'start: "2027-13"', ("start", "2027-01")),
    ('start: "2027-01"', "start: 2027-01-05", ("start", "quote it")),
    # inside `{start, growth_per_month}` the error used to read "demand_gpu_hours.list[float]:
    # Input should be a valid list"
    (
        "growth_per_month: 0.04",
        "growht_per_month: 0.04",
        ("classes[0].demand_gpu_hours.growht_per_month", "did you mean 'growth_per_month'"),
    ),
    (
        "demand_gpu_hours: 6000",
        "demand_gpu_hours: lots",
        ("classes[1].demand_gpu_hours", "expected a number"),
    ),
    (
        "deadline_month: 10",
        "dedline: 10",
        ("workloads[0].dedline", "did you mean 'deadline_month'"),
    ),
    ("- gpu: H100\n", "- gpu_modle: H100\n", ("classes[0].gpu_modle", "did you mean 'gpu'")),
    (
        "spot: {usd_per_gpu_hour: 1.47, max_share: 0.3}",
        "spot: cheap",
        ("classes[0].spot", "mapping"),
    ),
]


@pytest.mark.parametrize(("old", "new", "needles"), BAD_BUDGETS)
def test_bad_budget_value(tmp_path: Path, old: str, new: str, needles: tuple[str, ...]) -> None:
    path = tmp_path / "b.yaml"
    path.write_text(edit(BUDGET, old, new), encoding="utf-8")
    result = invoke("budget", str(path), "--no-sensitivity")
    assert_clean_error(result, str(path), *needles, exit_code=2)


# --- a corrupt snapshot in the user's data directory ----------------------------------------------

# A made-up instance only the user's snapshot lists: seeing it proves that snapshot was used.
MARKER = "x9.marker"


def user_snapshot(data_dir: Path) -> Path:
    """A valid refreshed AWS snapshot, newer than the bundled one, listing MARKER."""
    frame = pd.DataFrame([offer_row(instance_type=MARKER, as_of="2026-11-20")])
    return write_snapshot(
        data_dir / "snapshots",
        {"aws": frame},
        snapshot_id="2099-01-01T000000Z",
        now=datetime(2099, 1, 1, tzinfo=timezone.utc),
    )


def _manifest(path: Path, change: Callable[[dict[str, Any]], object]) -> None:
    data = json.loads((path / "manifest.json").read_text())
    change(data)
    (path / "manifest.json").write_text(json.dumps(data))


CORRUPTIONS: list[tuple[str, Callable[[Path], object]]] = [
    # a torn write or a disk error: the checksum no longer matches
    ("truncated csv", lambda p: (p / "offers-aws.csv").write_bytes(b"provider,reg")),
    ("deleted csv", lambda p: (p / "offers-aws.csv").unlink()),
    ("broken manifest json", lambda p: (p / "manifest.json").write_text("{not json")),
    ("binary manifest", lambda p: (p / "manifest.json").write_bytes(bytes(range(256)))),
    # these escaped as AttributeError / ValueError / TypeError tracebacks
    ("providers not a list", lambda p: _manifest(p, lambda m: m.update(providers="aws"))),
    ("provider entry not an object", lambda p: _manifest(p, lambda m: m.update(providers=[5]))),
    (
        "as_of not a date",
        lambda p: _manifest(p, lambda m: m["providers"][0].update(as_of="yesterday")),
    ),
    ("as_of a number", lambda p: _manifest(p, lambda m: m["providers"][0].update(as_of=5))),
    (
        "file outside the snapshot",
        lambda p: _manifest(p, lambda m: m["providers"][0].update(file="../../x.csv")),
    ),
    (
        "manifest names a missing file",
        lambda p: _manifest(p, lambda m: m["providers"][0].update(file="gone.csv")),
    ),
]


def test_a_good_user_snapshot_is_used(_isolated_user_data: Path) -> None:
    """The control for the corruption cases: without damage the user's snapshot wins."""
    user_snapshot(_isolated_user_data)
    result = invoke("offers", "--provider", "aws", "--format", "csv")
    assert result.exit_code == 0, result.output
    assert MARKER in result.output


@pytest.mark.parametrize(("case", "corrupt"), CORRUPTIONS, ids=[c[0] for c in CORRUPTIONS])
def test_a_corrupt_user_snapshot_falls_back_to_the_bundled_one(
    _isolated_user_data: Path,
    caplog: pytest.LogCaptureFixture,
    case: str,
    corrupt: Callable[[Path], object],
) -> None:
    snapshot = user_snapshot(_isolated_user_data)
    corrupt(snapshot)
    with caplog.at_level(logging.WARNING):
        offers = invoke("offers", "--provider", "aws", "--format", "csv")
        status = invoke("prices", "status", "--format", "json")
        quote = invoke("quote", "-w", "gpt2-xl-finetune", "--deadline", "24h", "--format", "json")
    for result in (offers, status, quote):
        assert result.exit_code == 0, result.output
        assert result.exception is None
    # the bundled AWS prices answer, not the corrupt ones, and the user is told why
    assert MARKER not in offers.output and "p4d.24xlarge" in offers.output
    aws = next(r for r in json.loads(status.stdout) if r["provider"] == "aws")
    assert aws["location"] == "bundled"
    assert snapshot.name in caplog.text and "skipping" in caplog.text


def test_a_corrupt_snapshot_given_explicitly_is_a_clean_error(_isolated_user_data: Path) -> None:
    snapshot = user_snapshot(_isolated_user_data)
    (snapshot / "offers-aws.csv").write_bytes(b"provider,reg")
    result = invoke("offers", "--snapshot", str(snapshot))
    assert_clean_error(result, "offers-aws.csv", "checksum", "refresh prices")


# --- command-line options ---------------------------------------------------------------------

QUOTE = ("quote", "-w", "gpt2-xl-finetune", "--deadline", "24h")

BAD_OPTIONS = [
    # NaN and infinity passed click's FloatRange and reached the MILP as a PulpError traceback
    ((*QUOTE, "--budget", "nan"), ("--budget", "not a finite number")),
    ((*QUOTE, "--budget", "inf"), ("--budget", "not a finite number")),
    # NaN compares false with every bound, so it slipped through the 0..100 range
    ((*QUOTE, "--max-interruption", "nan"), ("--max-interruption", "finite")),
    # --max-price nan silently matched nothing ("0 offers")
    (("offers", "--max-price", "nan"), ("--max-price", "finite")),
    (("offers", "--min-gpu-memory", "inf"), ("--min-gpu-memory", "finite")),
    (("estimate", "gpt2-xl-finetune", "--gpu", "H100", "--network-gbps", "nan"), ("finite",)),
    # a NaN time limit was accepted and the solver ran without one
    (("budget", "2027-ml-platform", "--time-limit", "nan"), ("--time-limit", "finite")),
    (("tco", "--hardware", "8xh100-hgx", "--years", "1e999"), ("--years", "finite")),
    # an empty name meant "every GPU" in offers and "no configuration can run" in quote
    ((*QUOTE, "--gpu", ""), ("--gpu", "not a GPU name")),
    (("offers", "--gpu", " "), ("--gpu", "not a GPU name")),
    (("offers", "--provider", ""), ("--provider", "not a provider name")),
    # unknown names get the nearest ones
    ((*QUOTE, "--provider", "awz"), ("unknown provider 'awz'", "did you mean aws")),
    ((*QUOTE, "--region", "us-est-1"), ("us-est-1", "us-east-1")),
    ((*QUOTE, "--gpu", "H100-SMX"), ("H100-SMX", "did you mean H100")),
    (("estimate", "gpt2-xl-finetun", "--gpu", "H100"), ("did you mean gpt2-xl-finetune",)),
    (("tco", "--hardware", "8xh100-hxg"), ("did you mean 8xh100-hgx",)),
    (("tco", "--hardware", "8xh100-hgx", "--currency", "EUX"), ("did you mean EUR",)),
    (("budget", "2027-ml-platfrom"), ("did you mean 2027-ml-platform",)),
    # deadlines
    (("quote", "-w", "gpt2-xl-finetune", "--deadline", "0h"), ("--deadline", "positive")),
    (("quote", "-w", "gpt2-xl-finetune", "--deadline", "abc"), ("--deadline", "24h")),
    (("quote", "-w", "gpt2-xl-finetune", "--deadline", "1e309h"), ("--deadline",)),
    ((*QUOTE, "--top", "0"), ("--top",)),
    ((*QUOTE, "--no-spot", "--spot-only"), ("exclude each other",)),
]


@pytest.mark.parametrize(
    ("args", "needles"), BAD_OPTIONS, ids=[" ".join(a) for a, _ in BAD_OPTIONS]
)
def test_bad_option(args: tuple[str, ...], needles: tuple[str, ...]) -> None:
    assert_clean_error(invoke(*args), *needles)


@pytest.mark.parametrize(
    "args",
    [
        (*QUOTE, "--report"),
        ("tco", "--hardware", "8xh100-hgx", "--report"),
        ("report", "tco", "--hardware", "8xh100-hgx", "-o"),
    ],
    ids=["quote", "tco", "report tco"],
)
def test_a_report_into_a_missing_folder_fails_before_any_work(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    # used to run the whole quote (or solve), print it, and only then fail with exit code 1
    target = tmp_path / "missing" / "out.html"
    result = invoke(*args, str(target))
    assert_clean_error(result, str(target), "does not exist", "create the folder", exit_code=2)
    assert "plan" not in result.stdout.lower() and "report written" not in result.output


def test_a_report_under_a_file_says_the_parent_is_a_file(tmp_path: Path) -> None:
    parent = tmp_path / "a-file"
    parent.write_text("x")
    result = invoke("tco", "--hardware", "8xh100-hgx", "--report", str(parent / "t.html"))
    assert_clean_error(result, "is a file, not a folder", exit_code=2)


def test_report_output_name_picks_the_format_unless_format_contradicts_it(tmp_path: Path) -> None:
    target = tmp_path / "tco.md"
    # `-o tco.md` alone used to write HTML into the .md file
    written = invoke("report", "tco", "--hardware", "8xh100-hgx", "--no-cloud", "-o", str(target))
    assert written.exit_code == 0, written.output
    text = target.read_text(encoding="utf-8")
    assert text.startswith("#") and "<html" not in text.lower()
    clash = invoke(
        "report",
        "tco",
        "--hardware",
        "8xh100-hgx",
        "--no-cloud",
        "--format",
        "csv",
        "-o",
        str(target),
    )
    assert_clean_error(clash, "--format csv", "tco.md", "--format markdown", exit_code=2)


# --- the library: bad arguments are PlannerErrors with a message, not deep KeyErrors ----------------


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        # AssertionError in the strategy search
        (lambda: planner.estimate("gpt2-xl-finetune", "H100", 2.5), "whole number"),
        (lambda: planner.estimate("gpt2-xl-finetune", "H100", float("nan")), "whole number"),
        # AttributeError deep in the estimator
        (lambda: planner.estimate({"name": "x"}, "H100"), "WorkloadSpec"),
        (lambda: planner.estimate("gpt2-xl-finetune", 42), "GPU name"),
        # TypeError from pathlib
        (lambda: planner.tco(None), "not NoneType"),
        (lambda: planner.load_hardware(42), "not int"),
        (lambda: planner.budget(None), "not NoneType"),
        (lambda: planner.load_workload(None), "not NoneType"),
        # TypeError comparing a string with a number
        (lambda: planner.tco("8xh100-hgx", utilization="0.5", with_cloud=False), "number"),
        (lambda: planner.budget("2027-ml-platform", time_limit_s="5"), "seconds"),
        (lambda: planner.budget("2027-ml-platform", time_limit_s=float("nan")), "positive"),
        # AttributeError in the query; a bare string was split into letters ("unknown GPU 'H'")
        (lambda: planner.offers("H100"), "OfferFilter"),
        (lambda: planner.OfferFilter(max_price_usd_per_hour=float("nan")), "finite"),
        (lambda: planner.OfferFilter(purchase_option="spto"), "did you mean spot"),
        # head(-1) silently dropped the last row
        (lambda: planner.offers(limit=-1), "limit"),
        # AttributeError on None; a blank name prefix-matched every GPU ("ambiguous")
        (lambda: planner.resolve_gpu(None), "not a GPU name"),
        (lambda: planner.resolve_gpu("  "), "not a GPU name"),
        # AttributeError on currency.upper()
        (
            lambda: planner.report(planner.tco("8xh100-hgx", with_cloud=False), currency=None),
            "currency",
        ),
        (
            lambda: planner.load_workload("gpt2-xl-finetune").variant(model={"params": 1e999}),
            "finite",
        ),
        # and the cases a later sweep found (tests/test_bad_input_slips.py)
        *SLIPS_LIBRARY,
    ],
)
def test_library_calls_with_bad_arguments_raise_planner_errors(
    call: Callable[[], object], needle: str
) -> None:
    with pytest.raises(PlannerError) as info:
        call()
    assert needle.lower() in str(info.value).lower()


def test_a_bare_string_for_a_name_list_means_that_one_name() -> None:
    flt = planner.OfferFilter(gpus="H100", providers="aws")
    assert flt.gpus == ("H100",) and flt.providers == ("aws",)
