"""Bad input that still slipped through after the earlier bad-input work (a corpus author's sweep
of every command, file kind and public function): each case here answered with exit 0 and a
made-up number, a hang, or a Python exception instead of a clear error.

The product rule each test pins: bad input gets a clear error naming the file, the field and a
fix, a non-zero exit and no traceback, on the command line and in the library; ``--format json``
keeps stdout clean.  A control case next to each family shows the good input still works.
"""

from __future__ import annotations

import copy
import dataclasses
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import Result

import planner
from planner.errors import ConfigError
from tests import cli_checks
from tests.cli_checks import invoke

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"


def assert_clean_error(result: Result, *needles: str, exit_code: int = 2) -> None:
    """:func:`tests.cli_checks.assert_clean_error` with nothing on stdout (``--format json``
    stays parseable)."""
    cli_checks.assert_clean_error(result, *needles, exit_code=exit_code, quiet_stdout=True)


def scenario(kind: str, name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((SCENARIOS / kind / f"{name}.yaml").read_text())
    return loaded


def with_values(raw: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """``raw`` with dotted keys set (``"classes.0.gpu"``: a list index)."""
    out = copy.deepcopy(raw)
    for dotted, value in changes.items():
        node: Any = out
        keys = dotted.split(".")
        for key in keys[:-1]:
            node = node[int(key)] if isinstance(node, list) else node.setdefault(key, {})
        last = keys[-1]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
    return out


def write(tmp_path: Path, raw: dict[str, Any], name: str = "f.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return str(path)


# --- YAML nested thousands deep: a RecursionError traceback in every file reader -----------------

DEEP = "a: " + "[" * 5000 + "]" * 5000 + "\n"


@pytest.mark.parametrize(
    "run",
    [
        lambda p: ("estimate", p, "--gpu", "H100", "--format", "json"),
        lambda p: ("tco", "--hardware", p, "--no-cloud", "--format", "json"),
        lambda p: ("budget", p, "--no-sensitivity", "--format", "json"),
    ],
    ids=["workload", "hardware", "budget"],
)
def test_yaml_nested_too_deeply_is_named(
    tmp_path: Path, run: Callable[[str], tuple[str, ...]]
) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text(DEEP, encoding="utf-8")
    assert_clean_error(invoke(*run(str(path))), str(path), "nested too deeply")


# --- the calibration file and the data folder ------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "needles"),
    [
        # read with Path.read_text: UnicodeDecodeError tracebacks
        (bytes(range(256)), ("binary file",)),
        ("- id: caf\u00e9\n".encode("latin-1"), ("not utf-8",)),
        (DEEP.encode(), ("nested too deeply",)),
    ],
    ids=["binary", "latin-1", "deep"],
)
@pytest.mark.parametrize(
    "command",
    [("calibrate", "list"), ("estimate", "gpt2-finetune", "--gpu", "H100")],
    ids=["list", "estimate"],
)
def test_a_broken_calibration_file_is_named(
    _isolated_user_data: Path, content: bytes, needles: tuple[str, ...], command: tuple[str, ...]
) -> None:
    path = _isolated_user_data / "calibration.yaml"
    path.write_bytes(content)
    assert_clean_error(invoke(*command, "--format", "json"), str(path), *needles)


def test_a_data_folder_that_is_a_file_is_named_not_read_as_no_runs(tmp_path: Path) -> None:
    # was: calibrate list printed [] and estimates ran uncalibrated
    file = tmp_path / "data"
    file.write_text("x", encoding="utf-8")
    env = {"PLANNER_DATA_DIR": str(file)}
    for command in (
        ("calibrate", "list", "--format", "json"),
        ("estimate", "gpt2-finetune", "--gpu", "H100", "--format", "json"),
    ):
        assert_clean_error(invoke(*command, env=env), "PLANNER_DATA_DIR", "not a folder")


RECORD = (
    "calibrate",
    "record",
    "gpt2-finetune",
    "--gpu",
    "H100",
    "--measured-tokens-per-second",
    "50000",
    "--format",
    "json",
)


def test_a_calibration_folder_that_cannot_be_written_is_an_error(
    _isolated_user_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # running as root makes chmod toothless: the write probe fails as it would without permission
    import tempfile

    def refuse(*args: object, **kwargs: object) -> tuple[int, str]:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    assert_clean_error(
        invoke(*RECORD), "cannot write the calibration file", "Permission denied", "unchanged"
    )
    assert not (_isolated_user_data / "calibration.yaml").exists()


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_recording_into_a_folder_where_no_file_can_be_made_does_not_hang() -> None:
    # PLANNER_DATA_DIR=/proc: FileLock polled for ever on a lock file it could not create
    results: list[Result] = []
    worker = threading.Thread(
        target=lambda: results.append(invoke(*RECORD, env={"PLANNER_DATA_DIR": "/proc"})),
        daemon=True,
    )
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), "calibrate record hung"
    assert_clean_error(results[0], "PLANNER_DATA_DIR=/proc", "cannot write the calibration file")


# --- command-line options ----------------------------------------------------------------------

ESTIMATE = ("estimate", "gpt2-xl-finetune", "--gpu", "H100")

BAD_OPTIONS = [
    # 1e-300 Gbit/s passed `x>0` and made a 16-GPU fine-tune take 8e301 hours (exit 0)
    (
        (*ESTIMATE, "--count", "16", "--network-gbps", "1e-300"),
        ("--network-gbps", "at least 0.1"),
    ),
    # --seq-len with a named workload blamed --precision too (which does change a named workload)
    (
        (*ESTIMATE, "--seq-len", "2048"),
        ("--seq-len", "go with --model", "model.seq_len", "gpt2-xl-finetune"),
    ),
    (("estimate", "--gpu", "H100", "--seq-len", "2048"), ("--seq-len", "go with --model")),
    # an inference workload: "training: ... drop the training section" of a file that has none
    (
        ("estimate", "llm-serving-7b", "--gpu", "H100", "--precision", "fp32"),
        ("--precision", "inference workload", "inference.precision"),
    ),
    (
        ("quote", "-w", "llm-serving-7b", "--framework", "megatron"),
        ("--framework", "inference workload", "inference.framework"),
    ),
    # gpt2's 1,024 learned positions: a longer sequence has no position embedding
    (
        ("estimate", "--model", "gpt2", "--tokens", "1M", "--seq-len", "2048", "--gpu", "H100"),
        ("--seq-len", "1,024 positions", "rotary"),
    ),
    # 1e9 runs a month priced a machine busy 7.5e9 hours of a 730-hour month (exit 0)
    (("build", "-w", "gpt2-finetune:1e9"), ("--workload", "at most 10,000")),
    # an option that takes one value, given twice: click kept the last and dropped the first
    (
        ("tco", "--hardware", "8xh100-hgx", "--hardware", "8xa100-80gb", "--no-cloud"),
        ("--hardware is given twice", "8xa100-80gb", "give it once"),
    ),
    ((*ESTIMATE, "--gpu=A100-80GB"), ("--gpu is given twice", "--gpu=A100-80GB")),
    (
        ("calibrate", "record", "gpt2-finetune", "--gpu", "H100", "--gpu", "A100-80GB"),
        ("--gpu is given twice",),
    ),
]


@pytest.mark.parametrize(
    ("args", "needles"), BAD_OPTIONS, ids=[" ".join(a) for a, _ in BAD_OPTIONS]
)
def test_bad_option(args: tuple[str, ...], needles: tuple[str, ...]) -> None:
    assert_clean_error(invoke(*args, "--format", "json"), *needles)


def test_a_field_read_from_the_workload_is_not_blamed_on_an_option() -> None:
    # was "--precision: T4 has no bf16 ...": the bf16 came from the workload file, no option typed
    result = invoke("estimate", "gpt2-xl-finetune", "--gpu", "T4")
    assert_clean_error(result, "training.precision: T4 has no bf16")
    assert "--precision:" not in result.stderr
    typed = invoke("estimate", "gpt2-xl-finetune", "--gpu", "T4", "--precision", "bf16")
    assert_clean_error(typed, "--precision: T4 has no bf16")


def test_repeatable_options_may_repeat() -> None:
    """The control: --gpu is repeatable on quote, and an option's value may look like one."""
    result = invoke(
        "quote", "-w", "gpt2-finetune", "--deadline", "24h", "--gpu", "H100", "--gpu", "A100"
    )
    assert result.exit_code == 0, result.output


# --- workload files ------------------------------------------------------------------------------

CUSTOM = {
    "arch": "decoder",
    "params": 1.3e9,
    "layers": 24,
    "hidden": 2048,
    "heads": 16,
    "seq_len": 1024,
    "vocab": 50257,
}

BAD_WORKLOADS = [
    # params that disagree wildly with the shape: memory from one number, FLOPs from the other
    (
        "gpt2-xl-finetune",
        {"model": {**CUSTOM, "params": 1e12}},
        ("model.params", "holds about 1.31e+09"),
    ),
    ("gpt2-xl-finetune", {"model": {**CUSTOM, "params": 1e6}}, ("model.params", "disagree")),
    # a preset's shape changed and its old count given with it (without a count the preset's
    # is carried over to the new shape: test_workload_spec)
    (
        "gpt2-xl-finetune",
        {"model": {"preset": "gpt2-xl", "hidden": 6400, "heads": 50, "params": 1.56e9}},
        ("model.params", "set params"),
    ),
    (
        "gpt2-xl-finetune",
        {"model": {**CUSTOM, "largest_layer_params": 1e10}},
        ("model.largest_layer_params", "whole model"),
    ),
    # "do not divide 16 heads" without saying what does
    (
        "gpt2-xl-finetune",
        {"model": {**CUSTOM, "kv_heads": 5}},
        ("model.kv_heads", "use a divisor of 16 (2, 4, 8 or 16)"),
    ),
    # learned positions: GPT-2 has 1,024 rows, BERT 512
    (
        "gpt2-xl-finetune",
        {"model": {"preset": "gpt2-xl", "seq_len": 8192}},
        ("model.seq_len", "1,024 positions gpt2-xl learned"),
    ),
    (
        "bert-base-finetune",
        {"data.tokens_per_sample": 4096},
        ("data.tokens_per_sample", "512 positions"),
    ),
    # two amounts of data or two batch sizes: one won silently
    ("gpt2-xl-finetune", {"data.samples": 1000}, ("data.samples", "data.tokens")),
    (
        "gpt2-xl-finetune",
        {"training.global_batch_tokens": 1048576, "training.global_batch_samples": 128},
        ("training.global_batch_samples", "global_batch_tokens"),
    ),
    (
        "gpt2-xl-finetune",
        {"training.global_batch_samples": 0.5},
        ("training.global_batch_samples", "at least 1"),
    ),
    # a vision model's input is an image
    ("resnet50-imagenet", {"model": {"preset": "resnet50", "seq_len": 4096}}, ("model.seq_len",)),
    # a serving request longer than the model's context window (llama-2: 4,096 tokens)
    (
        "llm-serving-7b",
        {"inference.prompt_tokens": 100000},
        ("inference.prompt_tokens", "4,096-token context"),
    ),
    (
        "llm-serving-7b",
        {"inference.prompt_tokens": 4000, "inference.output_tokens_p95": 512},
        ("inference.prompt_tokens", "95th percentiles"),
    ),
    # two loads: requests_per_s set the request rate and tokens_per_s the token rate
    (
        "llm-serving-7b",
        {"inference.requests_per_s": 5},
        ("inference", "tokens_per_s or requests_per_s"),
    ),
    ("llm-serving-7b", {"inference.tokens": 1e9}, ("inference.tokens", "service")),
    (
        "llama-2-7b-batch-inference",
        {"inference.requests": 1000},
        ("inference", "tokens or requests"),
    ),
    ("llm-serving-7b", {"data": {"tokens": 1e6}}, ("data", "inference workload")),
    (
        "sdxl-generation",
        {"inference.resolution": 1020},
        ("inference.resolution", "multiple of 8", "1016 or 1024"),
    ),
]


@pytest.mark.parametrize(
    ("name", "changes", "needles"),
    BAD_WORKLOADS,
    ids=[f"{n}-{'-'.join(c)}" for n, c, _ in BAD_WORKLOADS],
)
def test_bad_workload_value(
    tmp_path: Path, name: str, changes: dict[str, Any], needles: tuple[str, ...]
) -> None:
    path = write(tmp_path, with_values(scenario("workloads", name), changes))
    result = invoke("estimate", path, "--gpu", "H100", "--format", "json")
    assert_clean_error(result, path, *needles)
    with pytest.raises(ConfigError) as info:
        planner.load_workload(path)
    assert info.value.file == path


@pytest.mark.parametrize(
    ("name", "changes"),
    [
        # a rotary model's context may be extended by a fine-tune
        ("llama-2-7b-finetune", {"model": {"preset": "llama-2-7b", "seq_len": 8192}}),
        ("gpt2-xl-finetune", {"model": {"preset": "gpt2-xl", "seq_len": 1024}}),
        # a shape's count within tens of percent of the given one
        ("gpt2-xl-finetune", {"model": {**CUSTOM, "params": 2.0e9}}),
        ("llm-serving-7b", {"inference.prompt_tokens": 3800, "inference.output_tokens": 256}),
    ],
)
def test_good_workload_values_still_load(
    tmp_path: Path, name: str, changes: dict[str, Any]
) -> None:
    path = write(tmp_path, with_values(scenario("workloads", name), changes))
    planner.load_workload(path)


@pytest.mark.parametrize("key", ["1: 2", "~: 2"], ids=["number", "null"])
def test_a_key_that_is_not_text_is_an_unknown_key(tmp_path: Path, key: str) -> None:
    # was: TypeError "keywords must be strings"
    path = tmp_path / "w.yaml"
    text = (SCENARIOS / "workloads" / "gpt2-xl-finetune.yaml").read_text(encoding="utf-8")
    path.write_text(text + key + "\n", encoding="utf-8")
    assert_clean_error(invoke("estimate", str(path), "--gpu", "H100"), str(path), "unknown key")


# --- hardware and budget files: true and false are not numbers -----------------------------------

BOOLS = [
    # pydantic read true as 1: `machines: true` was one machine, `capex_usd: false` free hardware
    ("hardware", "8xh100-hgx", {"machines": True}, "machines"),
    ("hardware", "8xh100-hgx", {"capex_usd": False}, "capex_usd"),
    ("hardware", "8xh100-hgx", {"pue": True}, "pue"),
    ("budgets", "2027-ml-platform", {"capex_limit_usd": True}, "capex_limit_usd"),
    ("budgets", "2027-ml-platform", {"classes.1.demand_gpu_hours": True}, "demand_gpu_hours"),
    (
        "budgets",
        "2027-ml-platform",
        {"classes.1.demand_gpu_hours": [True] * 36},
        "demand_gpu_hours",
    ),
    ("budgets", "2027-ml-platform", {"classes.0.spot.max_share": True}, "max_share"),
    ("budgets", "2027-ml-platform", {"workloads.0.gpu_hours": True}, "gpu_hours"),
]


@pytest.mark.parametrize(
    ("kind", "name", "changes", "key"), BOOLS, ids=[f"{k}-{key}" for k, _, c, key in BOOLS]
)
def test_true_is_not_a_number_in_hardware_and_budget_files(
    tmp_path: Path, kind: str, name: str, changes: dict[str, Any], key: str
) -> None:
    path = write(tmp_path, with_values(scenario(kind, name), changes))
    args = (
        ("tco", "--hardware", path, "--no-cloud")
        if kind == "hardware"
        else ("budget", path, "--no-sensitivity")
    )
    assert_clean_error(invoke(*args, "--format", "json"), path, key, "expected a number")


def test_nvlink_on_a_gpu_without_it_is_refused_in_a_hardware_file(tmp_path: Path) -> None:
    # the estimate refuses this wiring; a hardware file priced its owned jobs on it (exit 0)
    raw = with_values(scenario("hardware", "8xh100-hgx"), {"gpu": "RTX4090"})
    path = write(tmp_path, raw)
    result = invoke("tco", "--hardware", path, "--no-cloud", "--format", "json")
    assert_clean_error(result, path, "interconnect", "RTX4090 has no NVLink", "interconnect: pcie")


# --- the library ---------------------------------------------------------------------------------


def _tco() -> object:
    return planner.tco("8xh100-hgx", with_cloud=False)


# run by tests/test_bad_input.py's test_library_calls_with_bad_arguments_raise_planner_errors
LIBRARY = [
    # a whole workload given as the model: was its repr named as an unknown preset
    (
        lambda: planner.workload_from_facts(planner.load_workload("gpt2-finetune"), tokens=1e6),
        "got a WorkloadSpec object",
    ),
    # the workload and the GPU swapped: was "unknown workload 'H100'" and the workload names
    (
        lambda: planner.estimate("H100", "gpt2-finetune"),
        "'H100' is a GPU (H100); the workload comes first",
    ),
    # TypeError: missing required positional arguments
    (lambda: planner.HardwareSpec(), "HardwareSpec() needs name, gpu"),  # type: ignore[call-arg]
    (lambda: planner.GpuSpec(), "GpuSpec() needs name"),  # type: ignore[call-arg]
    (lambda: planner.OfferBook(), "OfferBook() needs offers"),  # type: ignore[call-arg]
    # pydantic ValidationError
    (lambda: planner.WorkloadSpec(), "name: is required"),
    (
        lambda: planner.WorkloadSpec(name=5, kind="finetune", model="gpt2", data={"tokens": 1e6}),
        "name: expected text",
    ),
    # AttributeError: 'int' object has no attribute 'lower'
    (lambda: planner.offers(sort=5), "unknown sort key"),
    # AttributeError: 'str' object has no attribute 'rank'
    (
        lambda: planner.offers(planner.OfferFilter(min_interconnect="nvlnk")),
        "did you mean nvlink",
    ),
    (lambda: planner.OfferFilter(min_gpu_count=2.5), "whole number"),
    # accepted, or AttributeError: 'int' object has no attribute 'replace'
    (lambda: planner.report(_tco(), max_age_days="x"), "max_age_days"),
    (lambda: planner.report(_tco(), max_age_days=-1), "whole number >= 0"),
    (lambda: planner.report(_tco(), generated_by=5), "generated_by"),
    # named the command line's --format to a library caller (session 15)
    (lambda: planner.report(_tco(), "pdf"), "fmt: unknown report format 'pdf'"),
    # compare_gpu="" was read as not given: the comparison used the default GPU
    (lambda: planner.tco("8xh100-hgx", compare_gpu=""), "compare_gpu: '' is not a GPU name"),
    # TypeError: 'int' object is not callable, after the work (or never, and accepted)
    (lambda: planner.refresh_prices(on_progress=5), "on_progress"),
    (
        lambda: planner.quote(workload="gpt2-finetune", deadline_hours=24, on_progress=5),
        "on_progress",
    ),
    (lambda: planner.Planner(load_book=5), "load_book"),
    # TypeError: takes 1 positional argument but 2 were given
    (lambda: planner.Planner().gpus(5), "too many"),  # type: ignore[call-arg]
    # float("5000") and float(True) read as throughputs
    (
        lambda: planner.calibrate("gpt2-finetune", "H100", measured_tokens_per_second="5000"),
        "positive number",
    ),
    (
        lambda: planner.calibrate("gpt2-finetune", "H100", measured_tokens_per_second=True),
        "positive number",
    ),
    # a training field for a served model
    (lambda: planner.with_training("llm-serving-7b", precision="fp16"), "inference workload"),
    # a 1e-9 Gbit/s network: an estimate of 1e302 hours
    (
        lambda: planner.estimate(
            "gpt2-xl-finetune",
            "H100",
            16,
            topology=dataclasses.replace(planner.default_topology("H100", 16), network_gbps=1e-9),
        ),
        "at least 0.1",
    ),
]


def test_a_hardware_spec_for_hardware_names_gets_a_short_message() -> None:
    # was: the whole HardwareSpec repr (about 1,500 characters) and "leave hardware empty"
    spec = planner.load_hardware("8xh100-hgx")
    with pytest.raises(ConfigError) as info:
        planner.quote(workload="gpt2-finetune", deadline_hours=24, hardware=[spec])
    assert "a HardwareSpec is not a file name or path" in str(info.value)
    assert len(str(info.value)) < 200


def test_a_workload_spec_made_in_python_validates_as_a_file() -> None:
    """The control: good fields make a spec, and a file's error still names the file."""
    spec = planner.WorkloadSpec(name="x", kind="finetune", model="gpt2", data={"tokens": 1e6})
    assert spec.model.params == pytest.approx(124.44e6)


# --- numbers written with their units, and price lists ----------------------------------------------

UNIT_SLIPS = [
    # "expected a number, got '1.5B'" said what was wrong but not what to write
    ("workloads", "gpt2-xl-finetune", {"data.tokens": "1.5B"}, "write 1.5e+09"),
    ("workloads", "gpt2-xl-finetune", {"data.tokens": "3.1e8 tokens"}, "write 3.1e+08 alone"),
    ("workloads", "gpt2-xl-finetune", {"data.epochs": "3 epochs"}, "write 3 alone"),
    ("workloads", "llama-2-7b-lora", {"data.samples": "52,002"}, "write 52002"),
    ("hardware", "8xh100-hgx", {"capex_usd": "310k"}, "write 310000"),
    ("hardware", "8xh100-hgx", {"power_kw_avg": "8kW"}, "write 8 alone"),
    ("hardware", "8xh100-hgx", {"lifetime_years": "four"}, "write a plain number"),
]


@pytest.mark.parametrize(
    ("kind", "name", "changes", "fix"), UNIT_SLIPS, ids=[f for *_, f in UNIT_SLIPS]
)
def test_a_number_written_with_its_unit_gets_the_plain_number(
    tmp_path: Path, kind: str, name: str, changes: dict[str, Any], fix: str
) -> None:
    path = write(tmp_path, with_values(scenario(kind, name), changes))
    args = (
        ("estimate", path, "--gpu", "H100")
        if kind == "workloads"
        else ("tco", "--hardware", path, "--no-cloud")
    )
    key = next(iter(changes)).split(".")[-1]
    assert_clean_error(invoke(*args), path, key, "expected a number", f"hint: {fix}")


PRICE_LIST = (
    "provider,region,instance_type,gpu_model,gpu_count,gpu_memory_gib,vcpus,host_memory_gib,"
    "interconnect,network_gbps,fabric,price_on_demand_usd_per_hour,source,as_of\n"
    "aws,us-east-1,my.box,H100,8,80,192,2048,nvswitch,3200,efa,20.0,private,2026-11-01\n"
)


@pytest.mark.parametrize(
    ("old", "new", "needles"),
    [
        # an enum cell had no "did you mean" (the column names and GPU models had one)
        (",nvswitch,", ",nvswich,", ("'interconnect'", "did you mean 'nvswitch'")),
        (",efa,", ",infinband,", ("'fabric'", "did you mean 'infiniband'")),
        # an empty required cell said only "required value is missing"
        (",20.0,", ",,", ("'price_on_demand_usd_per_hour'", "every offer needs its")),
    ],
    ids=["interconnect", "fabric", "empty price"],
)
def test_a_price_list_cell_gets_a_fix(
    tmp_path: Path, old: str, new: str, needles: tuple[str, ...]
) -> None:
    path = tmp_path / "prices.csv"
    assert old in PRICE_LIST
    path.write_text(PRICE_LIST.replace(old, new, 1), encoding="utf-8")
    assert_clean_error(invoke("offers", "--offers", str(path), "--format", "json"), *needles)


def test_the_price_list_control_loads(tmp_path: Path) -> None:
    path = tmp_path / "prices.csv"
    path.write_text(PRICE_LIST, encoding="utf-8")
    result = invoke("offers", "--offers", str(path), "--format", "csv", "--gpu", "H100")
    assert result.exit_code == 0, result.output
    assert "my.box" in result.stdout


# --- a file named the way it is spelt elsewhere (session 15) ----------------------------------------

FILE_NEAR_MISSES = [
    # a bundled name typed as the file name: "no such file" with no way forward
    (
        ("tco", "--hardware", "8xh100-hgx.yaml", "--no-cloud"),
        ("no such file", "bundled hardware file '8xh100-hgx'"),
    ),
    (
        ("budget", "2027-ml-platform.yaml"),
        ("no such file", "bundled budget file '2027-ml-platform'"),
    ),
    (
        ("estimate", "gpt2-xl-finetune.yaml", "--gpu", "H100"),
        ("not found", "bundled workload 'gpt2-xl-finetune'"),
    ),
    # a path without its .yaml, or with .yml for .yaml
    (
        ("tco", "--hardware", "scenarios/hardware/8xh100-hgx", "--no-cloud"),
        ("no such file", "did you mean 'scenarios/hardware/8xh100-hgx.yaml'"),
    ),
    (
        ("quote", "-w", "scenarios/workloads/gpt2-xl-finetune.yml", "--deadline", "24h"),
        ("not found", "did you mean 'scenarios/workloads/gpt2-xl-finetune.yaml'"),
    ),
]


@pytest.mark.parametrize(
    ("args", "needles"), FILE_NEAR_MISSES, ids=[" ".join(a[:3]) for a, _ in FILE_NEAR_MISSES]
)
def test_a_file_name_near_an_existing_one_names_it(
    args: tuple[str, ...], needles: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    assert_clean_error(invoke(*args, "--format", "json"), *needles)


def test_a_hardware_file_beside_the_budget_file_says_paths_start_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # was: "no such file 'my-box.yaml'; pass a YAML path or a bundled hardware name", with the
    # file right next to the budget that names it
    monkeypatch.chdir(ROOT)
    (tmp_path / "my-box.yaml").write_text((SCENARIOS / "hardware" / "8xh100-hgx.yaml").read_text())
    raw = with_values(
        scenario("budgets", "2027-ml-platform"), {"classes.0.buy.0.hardware": "my-box.yaml"}
    )
    path = write(tmp_path, raw, "plan.yaml")
    assert_clean_error(
        invoke("budget", path, "--no-sensitivity", "--format", "json"),
        "classes[0].buy[0].hardware",
        "beside the budget file",
        f"write the path from the current folder: {tmp_path / 'my-box.yaml'}",
    )
