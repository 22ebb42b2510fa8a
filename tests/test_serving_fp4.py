"""4-bit floating-point weights (NVFP4 ``fp4``, OCP MXFP4 ``mxfp4``): their bytes, the decode step
they stream, the tensor cores they run on, and the refusals around them, against hand-worked
numbers."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from planner.cli import main
from planner.errors import ConfigError
from planner.gpu_specs import resolve_gpu
from planner.workload import efficiency as eff
from planner.workload import estimate, parse_workload
from planner.workload.estimate_types import default_topology
from planner.workload.parallel import Links
from planner.workload.serving import WEIGHT_BYTES, ModelShape, Replica, serving_stack

# a 70B dense model (Llama 2 70B's shape with a round parameter count)
MODEL_70B = ModelShape(params=70e9, layers=80, hidden=8192, heads=64, kv_heads=8)
NVLINK = Links(gpus_per_node=8, intra_bytes_per_s=450e9, intra_kind="nvlink", node_bytes_per_s=50e9)


def _replica(gpu: str, precision: str, stack: str = "vllm") -> Replica:
    return Replica(
        MODEL_70B, resolve_gpu(gpu), 1, NVLINK, serving_stack(stack), precision=precision
    )


@pytest.mark.parametrize(
    ("precision", "bits", "gb"),
    [
        ("fp4", 4.5, 39.375),  # NVFP4: 4 bits + an e4m3 scale per 16 -> 70e9 x 4.5 / 8
        ("mxfp4", 4.25, 37.1875),  # MXFP4: 4 bits + an e8m0 scale per 32 -> 70e9 x 4.25 / 8
    ],
)
def test_bits_per_weight_give_the_weight_memory_of_a_70b_model(
    precision: str, bits: float, gb: float
) -> None:
    assert WEIGHT_BYTES[precision] * 8 == bits
    assert _replica("H100", precision).weight_bytes_per_gpu == pytest.approx(gb * 1e9)


def test_a_memory_bound_decode_step_scales_by_bytes_and_bandwidth() -> None:
    # one sequence, no context: the step reads the weights once at 80% of the datasheet bandwidth
    # (vLLM), plus its 1 ms host step and 80 layers x 0.05 ms of kernel time; the FLOPs (2 x 70e9)
    # are negligible on either GPU
    overhead = serving_stack("vllm").step_overhead_ms * 1e-3 + 80 * 0.05e-3

    def gpu_seconds(gpu: str, precision: str) -> float:
        return _replica(gpu, precision).step_seconds(1, 0) - overhead

    h100_fp8 = 70e9 * 1.0 / (3350e9 * 0.8)  # 26.1 ms
    h100_fp4 = 70e9 * 0.5625 / (3350e9 * 0.8)  # 14.7 ms
    b200_fp8 = 70e9 * 1.0 / (8000e9 * 0.8)  # 10.9 ms
    b200_fp4 = 70e9 * 0.5625 / (8000e9 * 0.8)  # 6.15 ms
    assert gpu_seconds("H100", "fp8") == pytest.approx(h100_fp8)
    assert gpu_seconds("H100", "fp4") == pytest.approx(h100_fp4)
    assert gpu_seconds("B200", "fp8") == pytest.approx(b200_fp8)
    assert gpu_seconds("B200", "fp4") == pytest.approx(b200_fp4)
    # fp4 / fp8 = 4.5 / 8 on both; B200 / H100 = 3,350 / 8,000 at either format
    assert gpu_seconds("B200", "fp4") / gpu_seconds("H100", "fp8") == pytest.approx(
        0.5625 * 3350 / 8000
    )
    assert gpu_seconds("B200", "mxfp4") == pytest.approx(70e9 * 0.53125 / (8000e9 * 0.8))


@pytest.mark.parametrize(
    ("gpu", "precision", "tflops"),
    [
        ("B200", "fp4", 9000.0),  # HGX B200: 18 PF FP4 sparse per GPU = 9,000 dense, 2x fp8
        ("B300", "fp4", 13500.0),  # HGX B300: 108 PF FP4 dense per 8 GPUs
        ("GB300", "fp4", 15000.0),  # GB300 NVL72: 1,080 PF FP4 dense per 72 GPUs
        ("GB300", "mxfp4", 5000.0),  # MXFP4 weights x MXFP8 activations: its fp8 rate
        ("RTX-PRO-6000", "fp4", 2000.0),  # 4,000 FP4 AI TOPS sparse = 2,000 dense
        ("B200", "mxfp4", 4500.0),  # MXFP4 weights x MXFP8 activations: the fp8 rate
        ("H100", "fp4", 989.4),  # no fp4 tensor cores: weight-only, 16-bit matmuls
        ("H100", "mxfp4", 989.4),
        ("H200", "mxfp4", 989.4),
        ("A100-80GB", "fp4", 312.0),
    ],
)
def test_fp4_matmuls_run_on_fp4_tensor_cores_only_where_the_gpu_has_them(
    gpu: str, precision: str, tflops: float
) -> None:
    assert _replica(gpu, precision).compute_peak_flops == pytest.approx(tflops * 1e12)


def test_nvfp4_matmuls_on_a_b200_reach_the_measured_share_of_what_fp8_reaches() -> None:
    # vLLM's SM100 CUTLASS benchmarks at N 6,144, K 4,096, M 16,384: NVFP4 3,904 TFLOP/s against
    # its run's BF16 1,360, fp8 2,545 against its run's BF16 1,513; each over its ideal 4x / 2x:
    # (3,904 / 1,360 / 4) / (2,545 / 1,513 / 2) = 0.71765 / 0.84104 = 0.8533
    assert eff.fp4_gemm_share(resolve_gpu("B200")) == pytest.approx(0.8533, abs=1e-4)
    # the 70B shape's forward fraction at the fp4 peak, by hand: 1 / (1 / 0.52 - 281.25 x
    # (1/4096 + 1/12288 + 1/8192) / 3 + 9e15 / 8e12 x (1/8192 + 4 x 8192 / 875e6) / 2)
    # = 1 / (1.92308 - 0.04196 + 0.08973) = 0.50740, x 0.8533 = 0.43295
    assert _replica("B200", "fp4", "tensorrt-llm").matmul_fraction == pytest.approx(
        0.43295, rel=1e-4
    )


@pytest.mark.parametrize(
    ("gpu", "precision"),
    [
        ("RTX-PRO-6000", "fp4"),  # SM120: no measurement, the fp8 share
        ("B200", "mxfp4"),  # MXFP4 x MXFP8 runs on the fp8 tensor cores
        ("H100", "fp4"),  # weight-only, 16-bit matmuls
    ],
)
def test_only_nvfp4_on_measured_fp4_tensor_cores_takes_the_lower_share(
    gpu: str, precision: str
) -> None:
    r = _replica(gpu, precision)
    unscaled = eff.forward_matmul_fraction(
        r.gpu,
        eff.forward_bytes_per_flop(8192, 1, 70e9 / 80),
        r.compute_peak_flops,
    )
    assert r.matmul_fraction == pytest.approx(unscaled)


def _fp4_workload(precision: str = "fp4") -> dict[str, object]:
    return {
        "name": "fp4-serve",
        "kind": "inference",
        "model": "llama-2-70b",
        "inference": {
            "precision": precision,
            "prompt_tokens": 512,
            "output_tokens": 256,
            "requests": 100000,
        },
    }


@pytest.mark.parametrize("precision", ["fp4", "mxfp4"])
def test_fp4_on_a_gpu_without_fp4_tensor_cores_is_served_weight_only(precision: str) -> None:
    spec = parse_workload(_fp4_workload(precision))
    gpu = resolve_gpu("H100")
    est = estimate(spec, gpu, 1, topology=default_topology(gpu, 1))
    assert est.serving is not None and est.serving.precision == precision
    said = " ".join(est.assumptions)
    assert "the H100 has no fp4 tensor cores" in said
    assert "weight-only" in said and "matmuls at the 16-bit rate" in said
    # the weights still stream at their 4.x bits: 68.98B x 4.5 / 8 (or 4.25 / 8) bytes, but the
    # output head (32,000 x 8,192) stays 16-bit, 2 bytes where the rest has 4.x bits
    weights_gib = est.memory_breakdown_gib["weights"]
    head = 32000 * 8192 * (2.0 - WEIGHT_BYTES[precision])
    assert weights_gib * 2**30 == pytest.approx(68.98e9 * WEIGHT_BYTES[precision] + head, rel=1e-3)


def test_fp4_on_blackwell_says_which_tensor_cores_run_it() -> None:
    gpu = resolve_gpu("B200")
    nv = estimate(parse_workload(_fp4_workload("fp4")), gpu, 1, topology=default_topology(gpu, 1))
    mx = estimate(parse_workload(_fp4_workload("mxfp4")), gpu, 1, topology=default_topology(gpu, 1))
    assert any("fp4 tensor cores (9,000 dense TFLOPS)" in a for a in nv.assumptions)
    assert any("MXFP8 activations" in a and "fp8 tensor cores" in a for a in mx.assumptions)


@pytest.mark.parametrize("precision", ["mxfp4"])
def test_training_in_mxfp4_is_refused_naming_the_field_and_the_fix(precision: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_workload(
            {
                "name": "w",
                "kind": "finetune",
                "model": "gpt2",
                "data": {"tokens": 1e6},
                "training": {"precision": precision},
            }
        )
    text = f"{info.value.message} {info.value.hint or ''} {info.value.key_path or ''}"
    assert "training" in text
    assert f"precision {precision} stores weights for serving" in text
    # 4-bit floating-point training is NVIDIA's NVFP4 recipe (tests/test_nvfp4_training.py)
    assert "modelled as NVIDIA's NVFP4: precision: fp4" in text
    assert "bf16" in text and "kind: inference" in text


def test_cli_estimates_an_inference_workload_with_fp4_weights(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "fp4.yaml"
    path.write_text(
        "name: fp4-serve\nkind: inference\nmodel: llama-2-70b\n"
        "inference: {precision: fp4, prompt_tokens: 512, output_tokens: 256, requests: 100000}\n",
        encoding="utf-8",
    )
    for gpu in ("B200", "H100"):
        out = CliRunner().invoke(main, ["estimate", str(path), "--gpu", gpu])
        assert out.exit_code == 0, out.output
        assert "fp4" in out.output
        assert "Traceback" not in out.output
