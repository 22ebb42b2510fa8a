"""A pinned tensor x pipeline layout on GPU counts it does not divide (audit: AssertionError in
the strategy search from ``planner quote`` with ``tensor: 8`` and ``planner estimate`` with
``tensor: 5`` on one GPU)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from planner.api import workload_requirements
from planner.cli import main
from planner.errors import ConfigError
from planner.gpu_specs import resolve_gpu
from planner.workload import estimate, parse_workload
from planner.workload.advice import layout_error, pinned_gpus
from planner.workload.strategy import unplaceable_layout


def _spec(parallelism: dict[str, int], *, heads: int = 32, pieces: int = 1) -> dict[str, Any]:
    return {
        "name": "pinned",
        "kind": "finetune",
        "model": {
            "arch": "decoder",
            "params": 1.3e9,
            "layers": 24,
            "hidden": 2560,
            "heads": heads,
            "seq_len": 2048,
        },
        "data": {"tokens": 1.0e8},
        "training": {"parallelism": parallelism},
        "pieces": pieces,
    }


def _write(tmp_path: Path, raw: dict[str, Any]) -> Path:
    path = tmp_path / "pinned.yaml"
    path.write_text(json.dumps(raw))  # JSON is YAML
    return path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    ("pinned", "count", "fine"),
    [
        ({"tensor": 8}, 8, True),  # one replica
        ({"tensor": 8}, 24, True),  # three replicas
        ({"tensor": 8}, 4, False),  # fewer GPUs than one replica
        ({"tensor": 8}, 12, False),  # more, but not a multiple
        ({"tensor": 4, "pipeline": 2}, 16, True),  # 8 GPUs per replica
        ({"tensor": 4, "pipeline": 2}, 4, False),
        ({"pipeline": 3}, 9, True),
        ({"pipeline": 3}, 8, False),
        ({"zero": 3}, 7, True),  # nothing about tensor or pipeline pinned
    ],
)
def test_unplaceable_layout_is_count_modulo_tensor_times_pipeline(
    pinned: dict[str, int], count: int, fine: bool
) -> None:
    assert (unplaceable_layout(pinned, count) is None) is fine


def test_unplaceable_layout_says_what_it_needs() -> None:
    text = unplaceable_layout({"tensor": 4, "pipeline": 2}, 12)
    assert (
        text
        == "tensor parallel 4 x pipeline parallel 2 needs a multiple of 8 GPUs; 12 GPUs cannot hold it"
    )


def test_estimate_on_a_count_the_layout_does_not_divide_is_a_clean_miss() -> None:
    spec = parse_workload(_spec({"tensor": 8}))
    est = estimate(spec, resolve_gpu("H100"), 4)
    assert est.fits is False and math.isinf(est.wall_hours)
    assert est.strategy.tensor_parallel == 8 and "not runnable" in est.strategy.reason
    assert any("multiple of 8" in s for s in est.suggestions)
    # the model states are still reported (quote's requirements line reads them off one H100):
    # 1.3e9 parameters x 16 bytes, unsharded on one GPU, without the pin: auto keeps the Hugging
    # Face stack, which runs a pinned tensor split (transformers' tp plans), and its autocast
    # holds fp32 weights, their 16-bit copies, fp32 gradients and AdamW's two fp32 moments
    # (4 + 2 + 4 + 8)
    one = estimate(spec, resolve_gpu("H100"), 1)
    assert one.assumptions and any(
        a.startswith("software stack: hf-trainer (auto") for a in one.assumptions
    )
    states = sum(one.memory_breakdown_gib[k] for k in ("weights", "gradients", "optimizer_states"))
    assert states == pytest.approx(1.3e9 * 18 / 2**30)
    assert one.total_flops > 0


def test_estimate_on_a_multiple_uses_the_pinned_layout() -> None:
    spec = parse_workload(_spec({"tensor": 8}))
    est = estimate(spec, resolve_gpu("H100"), 16)
    assert est.fits and est.strategy.tensor_parallel == 8 and est.strategy.data_parallel == 2


def test_pieces_split_only_into_groups_the_layout_divides() -> None:
    # 2 pieces on 16 GPUs: groups of 1, 2 or 4 GPUs cannot hold TP8, groups of 8 or 16 can
    spec = parse_workload(_spec({"tensor": 8}, pieces=2))
    est = estimate(spec, resolve_gpu("H100"), 16)
    assert est.fits and est.strategy.gpus_per_piece % 8 == 0


def test_layout_error_names_the_key_and_a_count_that_works() -> None:
    spec = parse_workload(_spec({"tensor": 8}))
    assert pinned_gpus(spec) == 8
    assert layout_error(spec, 16) is None
    err = layout_error(spec, 12)
    assert isinstance(err, ConfigError) and err.key_path == "training.parallelism.tensor"
    assert err.hint is not None and "multiple of 8 (such as 16)" in err.hint


def test_pipeline_only_pin_names_the_pipeline_key() -> None:
    err = layout_error(parse_workload(_spec({"pipeline": 4})), 6)
    assert err is not None and err.key_path == "training.parallelism.pipeline"


def test_tensor_must_divide_the_heads() -> None:
    with pytest.raises(ConfigError) as info:
        parse_workload(_spec({"tensor": 3}, heads=32))
    assert info.value.key_path == "training.parallelism.tensor"
    assert "does not divide the 32 attention heads" in str(info.value)


def test_cli_estimate_tensor_5_on_one_gpu_is_a_clean_error(tmp_path: Path) -> None:
    path = _write(tmp_path, _spec({"tensor": 5}, heads=20))
    code, out, err = run("estimate", str(path), "--gpu", "H100", "--count", "1")
    assert code == 2, out + err
    assert "Traceback" not in out + err
    assert "training.parallelism.tensor" in err and "multiple of 5 (such as 5)" in err


def test_cli_estimate_tensor_5_on_five_gpus_runs(tmp_path: Path) -> None:
    path = _write(tmp_path, _spec({"tensor": 5}, heads=20))
    code, out, err = run("estimate", str(path), "--gpu", "H100", "--count", "5", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["strategy"]["tensor_parallel"] == 5


def test_cli_quote_with_tensor_8_uses_multiples_of_8_gpus(tmp_path: Path) -> None:
    path = _write(tmp_path, _spec({"tensor": 8}))
    code, out, err = run("quote", "-w", str(path), "--deadline", "24h", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["plans"]
    for plan in data["plans"]:
        for item in plan["items"]:
            gpus = item["gpus_per_instance"] * item["instances"]
            assert gpus % 8 == 0, item
    # the requirements line still carries the unsharded model states: 1.3e9 x 18 bytes (auto's
    # Hugging Face stack runs the tensor pin under autocast: fp32 weights and their 16-bit copies,
    # fp32 gradients, AdamW's two moments)
    assert data["requirements"]["model_states_gib"] == pytest.approx(1.3e9 * 18 / 2**30)


def test_workload_requirements_start_at_the_pinned_size() -> None:
    spec = parse_workload(_spec({"tensor": 8}))
    for est in workload_requirements(spec, gpus=("H100",)):
        assert est.fits and est.gpu_count == 8
