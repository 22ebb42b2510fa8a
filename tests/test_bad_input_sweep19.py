"""Bad input and silently wrong results the nineteenth sweep found: ``--p95-ttft 0.5`` (half a
second, written without a unit) was refused as "no fleet meets 0.5 ms" with no word of the unit;
``estimate`` of a service as CSV left out every serving figure the table and JSON give; a rotary
model trained past the context it was released with said nothing of the extension.

The product rule each test pins: bad input gets a clear error naming the field and a fix, and no
result is silently wrong or silently incomplete.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import planner
import planner.gpu_specs
import planner.workload
from planner.cli import main
from planner.errors import InfeasibleError, UnknownNameError


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path / "data"))


def _run(*args: str) -> Any:
    result = CliRunner().invoke(main, list(args))
    assert "Traceback" not in result.output
    return result


def test_a_latency_in_seconds_without_its_unit_gets_the_unit_in_the_hint() -> None:
    out = _run("quote", "--workload", "llm-serving-70b", "--rps", "5", "--p95-ttft", "0.5")
    assert out.exit_code == 3
    assert "p95 TTFT 0.5 ms: the fastest reachable is" in out.stderr
    assert "a target without a unit is milliseconds: if you meant seconds, write 0.5s" in (
        out.stderr
    )
    # the hint's fix works: half a second is quoted
    fixed = _run("quote", "--workload", "llm-serving-70b", "--rps", "5", "--p95-ttft", "0.5s")
    assert fixed.exit_code == 0, fixed.output
    assert "p95 TTFT <= 500 ms" in fixed.stdout


def test_a_target_no_number_of_seconds_would_reach_gets_no_unit_hint() -> None:
    # 1.5 ms of TPOT is out of reach and 1.5 s is not: the hint names the seconds; 20 ms of TTFT
    # is out of reach too, but above the 10 ms below which a bare number looks like seconds
    with pytest.raises(InfeasibleError) as err:
        planner.api.quote_service(workload="llm-serving-70b", tpot_ms_p95=1.5)
    assert "write 1.5s for TPOT" in (err.value.hint or "")
    with pytest.raises(InfeasibleError) as err:
        planner.api.quote_service(workload="llm-serving-70b", ttft_ms_p95=20.0)
    assert "if you meant seconds" not in (err.value.hint or "")
    assert "loosen the targets" in (err.value.hint or "")


def test_a_service_estimate_as_csv_carries_its_serving_figures() -> None:
    out = _run("estimate", "llm-serving-70b", "--gpu", "H100", "--count", "8", "--format", "csv")
    assert out.exit_code == 0, out.output
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert len(rows) == 1
    row = rows[0]
    as_json = _run(
        "estimate", "llm-serving-70b", "--gpu", "H100", "--count", "8", "--format", "json"
    )
    doc = json.loads(as_json.stdout)
    for key in ("ttft_ms", "tpot_ms", "e2e_ms"):
        for q in ("p50", "p95"):
            assert float(row[f"{key}_{q}"]) == pytest.approx(doc[key][q], rel=1e-9)
    assert int(row["replicas"]) == doc["replicas"]
    assert float(row["capacity_requests_per_second"]) == pytest.approx(
        doc["capacity_requests_per_second"], rel=1e-9
    )


def test_an_image_service_estimate_as_csv_carries_its_latency_per_image() -> None:
    out = _run(
        "estimate",
        "stable-diffusion-generation",
        "--gpu",
        "H100",
        "--count",
        "1",
        "--format",
        "csv",
    )
    assert out.exit_code == 0, out.output
    row = next(csv.DictReader(io.StringIO(out.stdout)))
    assert float(row["latency_ms_p95"]) >= float(row["latency_ms_p50"]) > 0
    assert float(row["capacity_images_per_second"]) > 0
    assert "ttft_ms_p50" not in row


def test_training_past_the_released_context_is_named_as_a_context_extension() -> None:
    args = ["--model", "llama-2-7b", "--method", "lora", "--tokens", "10M", "--gpu", "H100"]
    long = _run("estimate", *args, "--seq-len", "32768")
    assert long.exit_code == 0, long.output
    assert (
        "sequences of 32,768 tokens are longer than the 4,096-token context llama-2-7b was "
        "released with: a context extension" in long.stdout
    )
    native = _run("estimate", *args, "--seq-len", "4096")
    assert native.exit_code == 0, native.output
    assert "context extension" not in native.stdout


@pytest.mark.parametrize(
    ("typed", "gpu"),
    [
        ("L40S-48GB", "L40S"),  # the memory after a name that holds none
        ("A10G 24GB", "A10G"),
        ("L4 24GB", "L4"),
        ("B200-180GB", "B200"),
        ("A100-80GB-SXM", "A100-80GB"),  # a form factor the catalog does not split on
        ("DGX H100", "H100"),  # the GPU a system carries
        ("GH200 480GB", "GH200"),  # NVIDIA's own name for the 96 GB part
    ],
)
def test_gpu_names_with_their_memory_or_system_resolve(typed: str, gpu: str) -> None:
    # was: "unknown GPU 'L40S-48GB'; did you mean L40 48GB or L20 48GB?"
    assert planner.gpu_specs.resolve_gpu(typed).name == gpu


def test_a_memory_size_that_is_not_the_gpus_is_still_refused() -> None:
    with pytest.raises(UnknownNameError, match="unknown GPU 'H100-40GB'"):
        planner.gpu_specs.resolve_gpu("H100-40GB")


@pytest.mark.parametrize("typed", ["TPU v4", "Gaudi2", "Trainium2"])
def test_an_accelerator_the_catalog_does_not_model_is_named_as_such(typed: str) -> None:
    # was: "TPU v4: did you mean T4 or P4?"
    out = _run("estimate", "gpt2-xl-finetune", "--gpu", typed, "--count", "8")
    assert out.exit_code == 2
    assert f"unknown GPU '{typed}'" in out.output
    assert "are not modelled: the catalog holds NVIDIA and AMD GPUs" in out.output
    assert "did you mean" not in out.output


@pytest.mark.parametrize(
    ("typed", "preset", "params"),
    [
        ("Llama 3.1 8B", "llama-3.1-8b", 8.03e9),  # the words apart, as a model card writes them
        ("LLaMA 65B", "llama-65b", 65.2e9),  # Touvron et al. 2023, Table 2
        ("huggyllama/llama-7b", "llama-7b", 6.7e9),
        ("Qwen1.5-7B-Chat", "qwen1.5-7b", 7.72e9),
        ("vicuna-7b-v1.5", "llama-2-7b", 6.74e9),
        ("tinyllama", "tinyllama-1.1b", 1.1e9),
    ],
)
def test_model_names_as_people_write_them_resolve(typed: str, preset: str, params: float) -> None:
    spec = planner.workload.parse_workload(
        {"name": "x", "kind": "finetune", "model": typed, "data": {"tokens": 1e6}}
    )
    assert spec.model.preset == preset
    assert spec.model.params == pytest.approx(params, rel=0.01)


def test_an_unknown_model_says_how_to_give_one_outside_the_presets(tmp_path: Path) -> None:
    # was: "falcon-7b: did you mean mistral-7b?" alone
    path = tmp_path / "w.yaml"
    path.write_text(
        "name: x\nkind: finetune\nmodel: falcon-7b\ndata: {tokens: 1e6}\n", encoding="utf-8"
    )
    out = _run("estimate", str(path), "--gpu", "H100")
    assert out.exit_code == 2
    assert "w.yaml: model: unknown model preset 'falcon-7b'" in out.output
    assert "by its shape, model: {arch: decoder" in out.output
    assert "--model path/to/config.json" in out.output
    cli = _run("estimate", "--model", "phi-2", "--tokens", "10M", "--gpu", "H100")
    assert cli.exit_code == 2
    assert "unknown model preset 'phi-2'" in cli.output
    assert "by its shape" in cli.output
