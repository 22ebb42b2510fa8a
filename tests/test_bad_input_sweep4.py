"""Bad input the fourth sweep found (the training section's pins and precisions against a GPU and
a count, config.json files, serving and data keys that were ignored): each case here answered with
a message that did not name the workload file, a list of a workload's keys for a file of another
kind, or exit 0 and an estimate that left a setting out.

The product rule each test pins: bad input gets a clear error naming the file, the field and a
fix, a non-zero exit and no traceback, on the command line and in the library.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import planner
from planner.errors import ConfigError
from tests.cli_checks import assert_clean_error, invoke

ROOT = Path(__file__).resolve().parent.parent
MIXTRAL_CONFIG = ROOT / "tests" / "data" / "hf_configs" / "mixtral-8x7b-config.json"


def _workload(tmp_path: Path, text: str, name: str = "job.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


FP8_JOB = (
    "name: job\nkind: finetune\nmodel: gpt2\ndata: {tokens: 1e6}\ntraining: {precision: fp8}\n"
)
PINNED_JOB = (
    "name: job\nkind: pretrain\nmodel: llama-2-7b\ndata: {tokens: 1e9}\n"
    "training: {parallelism: {tensor: 8, pipeline: 4}}\n"
)


# --- a workload file's setting that the GPU or the count conflicts with names the file ---------


@pytest.mark.parametrize("verbose", [(), ("-v",), ("-vv",)])
def test_a_precision_the_gpu_lacks_names_the_workload_file(
    tmp_path: Path, verbose: tuple[str, ...]
) -> None:
    """was: "training.precision: A100-80GB has no fp8 tensor cores ...", naming no file (the
    check runs once the file is read, against --gpu)."""
    path = _workload(tmp_path, FP8_JOB)
    result = invoke(*verbose, "estimate", str(path), "--gpu", "A100-80GB")
    assert_clean_error(result, f"{path}: training.precision", "no fp8 tensor cores", "use bf16")


def test_a_pinned_layout_the_count_cannot_hold_names_the_workload_file(tmp_path: Path) -> None:
    path = _workload(tmp_path, PINNED_JOB)
    result = invoke("estimate", str(path), "--gpu", "H100", "--count", "8")
    assert_clean_error(
        result, f"{path}: training.parallelism.tensor", "multiple of 32 GPUs", "such as 32"
    )


def test_calibrating_a_run_in_a_precision_the_gpu_lacks_names_the_workload_file(
    tmp_path: Path,
) -> None:
    path = _workload(tmp_path, FP8_JOB)
    result = invoke(
        "calibrate", "record", str(path), "--gpu", "A100-80GB",
        "--measured-tokens-per-second", "1000",
    )  # fmt: skip
    assert_clean_error(result, f"{path}: training.precision", "use bf16")


def test_the_library_names_the_workload_file_too(tmp_path: Path) -> None:
    path = _workload(tmp_path, FP8_JOB)
    with pytest.raises(ConfigError) as caught:
        planner.estimate(str(path), "V100-32GB", 1)
    assert caught.value.file == str(path)
    assert caught.value.key_path == "training.precision"
    assert str(caught.value).startswith(f"{path}: training.precision: ")
    assert "use fp16" in str(caught.value)


def test_a_workload_made_in_python_names_no_file(tmp_path: Path) -> None:
    """Control: a variant of the file's workload is not the file; the key and the fix are named."""
    spec = planner.with_training(str(_workload(tmp_path, FP8_JOB)), optimizer="sgd")
    with pytest.raises(ConfigError) as caught:
        planner.estimate(spec, "A100-80GB", 1)
    assert caught.value.file is None
    assert str(caught.value).startswith("training.precision: ")


def test_a_count_error_is_not_blamed_on_the_workload_file(tmp_path: Path) -> None:
    """Control: the count is the caller's, not the file's."""
    path = _workload(tmp_path, FP8_JOB)
    with pytest.raises(ConfigError) as caught:
        planner.estimate(str(path), "H100", 0)
    assert caught.value.file is None
    assert caught.value.key_path == "count"


# --- a Hugging Face config.json where a workload file goes -------------------------------------


@pytest.mark.parametrize("command", [("estimate",), ("quote", "--deadline", "24h", "-w")])
def test_a_config_json_passed_as_the_workload_says_to_pass_it_as_the_model(
    command: tuple[str, ...],
) -> None:
    """was: "architectures: unknown key (and 26 more problems)", and the workload's keys."""
    args = [*command, str(MIXTRAL_CONFIG)]
    if command[0] == "estimate":
        args += ["--gpu", "H100"]
    result = invoke(*args)
    assert_clean_error(
        result, str(MIXTRAL_CONFIG), "Hugging Face model config", f"--model {MIXTRAL_CONFIG}"
    )
    assert "unknown key" not in result.stderr


def test_a_config_json_in_the_current_folder_is_read_as_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """was: "unknown workload 'config.json'" and the library's names (a bare file name was taken
    for a library name)."""
    (tmp_path / "config.json").write_text(MIXTRAL_CONFIG.read_text(encoding="utf-8"))
    monkeypatch.chdir(tmp_path)
    result = invoke("estimate", "config.json", "--gpu", "H100")
    assert_clean_error(result, "config.json", "Hugging Face model config", "--model ")
    assert "unknown workload" not in result.stderr


def test_a_workload_with_an_unknown_key_still_lists_the_workload_keys(tmp_path: Path) -> None:
    """Control: a workload file (it has kind and model) with a config.json key in it."""
    path = _workload(tmp_path, FP8_JOB.replace("kind:", "model_type: llama\nkind:"))
    result = invoke("estimate", str(path), "--gpu", "H100")
    assert_clean_error(result, str(path), "model_type: unknown key")


# --- settings that were silently ignored --------------------------------------------------------


def test_qlora_in_fp8_is_refused(tmp_path: Path) -> None:
    """was: exit 0, QLoRA's dequantised 16-bit matmuls estimated at twice the rate as fp8."""
    path = _workload(
        tmp_path,
        "name: job\nkind: finetune\nmodel: llama-2-7b\ndata: {tokens: 1e6}\n"
        "training: {method: qlora, precision: fp8}\n",
    )
    result = invoke("estimate", str(path), "--gpu", "H100")
    assert_clean_error(result, f"{path}: training.precision", "method: qlora", "precision: bf16")


def test_fp8_on_a_qlora_workload_from_the_command_line_is_refused() -> None:
    result = invoke("estimate", "llama-2-7b-qlora", "--gpu", "H100", "--precision", "fp8")
    assert_clean_error(result, "training.precision", "method: qlora", "precision: bf16")


@pytest.mark.parametrize(
    ("model", "load", "arch"),
    [("llama-2-7b", "tokens: 1e6", "decoder"), ("resnet50", "images: 1e6", "cnn")],
)
def test_guidance_on_a_model_that_is_not_diffusion_is_refused(
    tmp_path: Path, model: str, load: str, arch: str
) -> None:
    """was: exit 0, ``guidance: false`` ignored (only a diffusion model's steps run guided)."""
    path = _workload(
        tmp_path,
        f"name: job\nkind: inference\nmodel: {model}\ninference: {{{load}, guidance: false}}\n",
    )
    result = invoke("estimate", str(path), "--gpu", "H100")
    assert_clean_error(result, f"{path}: inference.guidance", "diffusion", arch, "drop it")


def test_flops_per_sample_on_a_transformer_is_refused(tmp_path: Path) -> None:
    """was: exit 0, data.flops_per_sample ignored (a transformer's FLOPs follow its shape)."""
    path = _workload(
        tmp_path,
        "name: job\nkind: finetune\nmodel: gpt2\ndata: {tokens: 1e6, flops_per_sample: 1e12}\n",
    )
    result = invoke("estimate", str(path), "--gpu", "H100")
    assert_clean_error(result, f"{path}: data.flops_per_sample", "image models", "drop it")
    # the same number moved to the model section was ignored too
    moved = _workload(
        tmp_path,
        "name: job\nkind: finetune\nmodel: {preset: gpt2, flops_per_sample: 1e12}\n"
        "data: {tokens: 1e6}\n",
    )
    result = invoke("estimate", str(moved), "--gpu", "H100")
    assert_clean_error(result, f"{moved}: model.flops_per_sample", "data.tokens", "drop it")


def test_the_bundled_diffusion_and_vision_workloads_still_load() -> None:
    """Control: guidance on a diffusion model, flops_per_sample on a CNN."""
    for name in ("sdxl-generation", "resnet50-imagenet", "resnet50-inference-t4"):
        assert planner.load_workload(name).name == name
