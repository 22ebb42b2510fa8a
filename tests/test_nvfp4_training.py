"""NVFP4 training (``precision: fp4``, Transformer Engine's NVFP4 recipe on Blackwell, issue 14):
the linear layers' GEMMs at the fp4 tensor rate less block-scaled GEMMs' lower share, their casts
(a per-tensor amax pass, row-wise and Hadamard-transformed column-wise 4.5-bit copies) as memory
traffic, what fp8 keeps in memory, and refused with the precision that works on a GPU without
NVIDIA's fp4 tensor cores."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

import planner
from planner.cli import main
from planner.errors import ConfigError
from planner.gpu_specs import resolve_gpu
from planner.workload import efficiency as eff
from planner.workload import parse_workload

B200 = resolve_gpu("B200")
STEP = ["estimate", "--model", "llama-3-8b", "--tokens", "1B"]
GB300 = resolve_gpu("GB300")
# vLLM's CUTLASS kernel benchmarks on B200 (efficiency.FP4_GEMM_SHARE_OF_FP8): NVFP4 3,904 of its
# run's BF16 1,360 TFLOP/s over the ideal 4x, fp8 2,545 of 1,513 over the ideal 2x
NVFP4_SHARE = (3904 / 1360 / 4) / (2545 / 1513 / 2)


def llama_8b(precision: str, **training: Any) -> Any:
    """MLPerf's Llama 3.1 8B pre-training step on 8 GPUs: 16 x 8,192 tokens, DP8, micro-batch 2."""
    return parse_workload(
        {
            "name": "llama-8b",
            "kind": "pretrain",
            "model": "llama-3-8b",
            "data": {"tokens": 131072},
            "training": {
                "precision": precision,
                "framework": "nemo",
                "global_batch_tokens": 131072,
                "parallelism": {"tensor": 1, "pipeline": 1, "context": 1, "micro_batch": 2},
                **training,
            },
        }
    )


def test_the_linear_layers_run_at_the_fp4_peak_times_nvfp4s_gemm_share() -> None:
    # datasheets: B200 9,000 dense fp4 of 2,250 16-bit TFLOPS; GB300 15,000 of 2,500
    assert eff.linear_tensor_rate(B200, "fp4") == pytest.approx(9000 / 2250 * NVFP4_SHARE)
    assert eff.linear_tensor_rate(GB300, "fp4") == pytest.approx(15000 / 2500 * NVFP4_SHARE)
    assert eff.linear_tensor_rate(B200, "fp8") == 2.0
    assert eff.linear_tensor_rate(B200, "bf16") == 1.0
    # 74% of the FLOPs in the linear layers: one effective peak, the rest at the 16-bit rate
    rate = 9000 / 2250 * NVFP4_SHARE
    peak, fraction = eff.precision_peak(B200, "fp4", 0.74)
    assert peak == pytest.approx(2250e12 / (0.26 + 0.74 / rate))
    assert fraction == eff.precision_peak(B200, "fp8", 0.74)[1]


def test_the_casts_stream_an_amax_pass_and_two_4_5_bit_copies() -> None:
    # per element: amax read 2, the cast's read 2, row-wise and column-wise 0.5 + 1/16 each
    assert eff.FP8_CAST_BYTES_PER_ELEMENT["nvfp4"] == pytest.approx(5.125)
    h = 4096
    delayed = eff.fp8_cast_bytes_per_flop(h, 1, 12.0 * h * h, scaling="delayed")
    nvfp4 = eff.fp8_cast_bytes_per_flop(h, 1, 12.0 * h * h, scaling="nvfp4")
    assert nvfp4 / delayed == pytest.approx(5.125 / 4.0)


def test_nvfp4_steps_are_faster_than_fp8_and_keep_what_fp8_keeps() -> None:
    for gpu in ("B200", "GB300"):
        fp8 = planner.estimate(llama_8b("fp8"), gpu, 8)
        fp4 = planner.estimate(llama_8b("fp4"), gpu, 8)
        assert fp4.strategy == fp8.strategy
        assert fp4.memory_per_gpu_gib == pytest.approx(fp8.memory_per_gpu_gib)
        step8 = fp8.time_breakdown_hours["training steps"]
        step4 = fp4.time_breakdown_hours["training steps"]
        # faster, but by less than the linear layers' rate: attention, the head, the casts and
        # the communication stay
        assert step4 < step8
        assert step8 / step4 < eff.linear_tensor_rate(resolve_gpu(gpu), "fp4") / 2.0
    # Blackwell Ultra's fp4 is 3x its fp8 (B200's 2x): the bigger gain there
    gain = {
        gpu: planner.estimate(llama_8b("fp8"), gpu, 8).wall_hours
        / planner.estimate(llama_8b("fp4"), gpu, 8).wall_hours
        for gpu in ("B200", "GB300")
    }
    assert gain["GB300"] > gain["B200"]
    est = planner.estimate(llama_8b("nvfp4"), "B200", 8)
    assert "NVFP4" in est.efficiency_source
    assert any("Transformer Engine NVFP4" in a for a in est.assumptions)


@pytest.mark.parametrize(
    ("gpu", "why", "use"),
    [
        ("H100", "H100 has no fp4 tensor cores (Blackwell has them)", "fp8"),
        ("MI355X", "take OCP MXFP4, not NVIDIA's NVFP4", "fp8"),
        ("A100-80GB", "A100-80GB has no fp4 tensor cores", "bf16"),
        ("V100-32GB", "V100-32GB has no fp4 tensor cores", "fp16"),
    ],
)
def test_a_gpu_without_nvfp4_tensor_cores_is_refused_with_what_works(
    gpu: str, why: str, use: str
) -> None:
    with pytest.raises(ConfigError) as err:
        planner.estimate(llama_8b("fp4"), gpu, 8)
    assert why in str(err.value)
    assert err.value.key_path == "training.precision"
    assert f"use {use}" in (err.value.hint or "")


def test_qlora_in_fp4_is_refused_and_mxfp4_training_points_at_fp4() -> None:
    with pytest.raises(ConfigError, match="fp4 with method: qlora"):
        parse_workload(
            {
                "name": "q",
                "kind": "finetune",
                "model": "llama-2-7b",
                "data": {"tokens": 1e6},
                "training": {"precision": "fp4", "method": "qlora"},
            }
        )
    with pytest.raises(ConfigError, match="modelled as NVIDIA's NVFP4: precision: fp4"):
        llama_8b("mxfp4")


def test_the_cli_takes_fp4_and_names_it() -> None:
    result = CliRunner().invoke(
        main,
        [
            "estimate",
            "--model",
            "llama-3-8b",
            "--kind",
            "pretrain",
            "--tokens",
            "1B",
            "--gpu",
            "B200",
            "--count",
            "8",
            "--precision",
            "fp4",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "NVFP4" in result.output
    refused = CliRunner().invoke(
        main,
        [*STEP, "--gpu", "H100", "--precision", "fp4"],
    )
    assert refused.exit_code != 0
    assert "Traceback" not in refused.output
    assert "use fp8" in refused.output


def test_a_quote_in_fp4_runs_on_blackwell_and_says_why_the_others_are_left_out() -> None:
    spec = planner.workload_from_facts(
        model="llama-3-8b", kind="pretrain", tokens=2e9, precision="fp4"
    )
    quote = planner.quote(workload=spec, deadline_hours=48)
    gpus = {item.gpu_model for plan in quote.plans for item in plan.items}
    assert gpus and all(resolve_gpu(g).cannot_train_in("fp4") is None for g in gpus)
    left_out = " ".join(quote.excluded)
    assert "H100" in left_out and "cannot train in fp4" in left_out
    assert "training.precision: fp8 runs on them" in left_out


def test_an_nvfp4_lora_keeps_its_frozen_weights_as_fp8_does() -> None:
    def lora(precision: str) -> Any:
        return parse_workload(
            {
                "name": "l",
                "kind": "finetune",
                "model": "llama-2-70b",
                "data": {"tokens": 1e6, "tokens_per_sample": 8192},
                "training": {
                    "precision": precision,
                    "framework": "nemo",
                    "method": "lora",
                    "lora_rank": 16,
                    "lora_targets": "attention",
                    "global_batch_samples": 8,
                },
            }
        )

    fp8 = planner.estimate(lora("fp8"), "B200", 8)
    fp4 = planner.estimate(lora("fp4"), "B200", 8)
    assert fp4.memory_breakdown_gib["weights"] == pytest.approx(fp8.memory_breakdown_gib["weights"])
    # 69B frozen weights at one byte, over the layout's split
    assert fp8.memory_breakdown_gib["weights"] < 69e9 / 2**30


def test_a_quote_says_an_mxfp4_gpu_takes_no_nvfp4() -> None:
    from planner.optimize.candidates import _precision_problem

    spec = llama_8b("fp4")
    assert _precision_problem(spec, resolve_gpu("MI355X")) == (
        "cannot train in fp4 (fp4 tensor cores take OCP MXFP4, not NVIDIA's NVFP4); "
        "training.precision: fp8 runs on them"
    )
    assert _precision_problem(spec, resolve_gpu("H100")) == (
        "cannot train in fp4 (no fp4 tensor cores); training.precision: fp8 runs on them"
    )
    assert _precision_problem(spec, B200) is None
