"""3x3 convolutions on the CUDA cores run as Winograd transforms (issue 14): fp32 convolutional
networks and GPUs without tensor cores, the share of a network's FLOPs in such layers, and the
checks on the field that gives it."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import planner
from planner.errors import ConfigError
from planner.gpu_specs import resolve_gpu
from planner.workload import efficiency as eff
from planner.workload import estimate, load_workload, parse_workload
from planner.workload.models import get_preset


def resnet50(precision: str, **model: Any) -> Any:
    raw = load_workload("resnet50-imagenet").model_dump(mode="json", exclude_none=True)
    raw["training"] = {**raw.get("training", {}), "precision": precision}
    raw["model"] = {**raw["model"], **model}
    return parse_workload(raw)


def steps_hours(spec: Any, gpu_name: str) -> float:
    return float(estimate(spec, resolve_gpu(gpu_name), 1).time_breakdown_hours["training steps"])


@pytest.mark.parametrize(
    ("gpu", "precision", "on_cuda_cores"),
    [
        ("V100-16GB", "fp32", True),  # fp32 runs on the CUDA cores
        ("V100-16GB", "fp16", False),  # Volta's tensor cores: cuDNN's implicit GEMMs
        ("A100-80GB", "tf32", False),  # the TF32 tensor cores
        ("RTX3090", "fp32", True),
        ("GTX1080Ti", "fp16", True),  # no tensor cores: 16-bit storage, fp32 math
        ("P100", "fp16", True),  # no tensor cores: half2 on the CUDA cores
        ("MI300X", "fp32", False),  # MIOpen's kernels are not modelled
    ],
)
def test_which_convolutions_run_on_the_cuda_cores(
    gpu: str, precision: str, on_cuda_cores: bool
) -> None:
    assert eff.convolutions_on_cuda_cores(resolve_gpu(gpu), precision) is on_cuda_cores


def test_the_boards_without_tensor_cores_are_flagged() -> None:
    for name in ("P100", "P4", "P40", "K80", "M60", "GTX1080Ti", "TITAN-Xp", "GTX1660"):
        assert not resolve_gpu(name).tensor_cores, name
    for name in ("V100-16GB", "T4", "RTX2080Ti", "A100-80GB", "H100", "RTX4090"):
        assert resolve_gpu(name).tensor_cores, name


def test_the_speedup_is_the_two_by_two_tiles_multiply_reduction_on_the_layers_share() -> None:
    # F(2x2,3x3): a 4x4 tile of products per 2x2 outputs, 16 multiplies against 36
    assert pytest.approx(36 / 16) == eff.WINOGRAD_MULTIPLY_REDUCTION
    v100 = resolve_gpu("V100-16GB")
    share = 0.37
    assert eff.winograd_speedup(v100, "fp32", share) == pytest.approx(
        1.0 / (1.0 - share + share * 16 / 36)
    )
    assert eff.winograd_speedup(v100, "fp32", 1.0) == pytest.approx(2.25)
    assert eff.winograd_speedup(v100, "fp32", 0.0) == 1.0
    assert eff.winograd_speedup(v100, "fp16", 1.0) == 1.0  # tensor cores: unchanged


def test_the_presets_count_their_stride_one_3x3_layers() -> None:
    # the same 13 stride-1 3x3 convolutions of 1.503 GMACs in ResNet-18 and ResNet-50 v1.5, of
    # torchvision's 1.81 and 4.09 GMACs (the bottlenecks' 1x1s hold the rest of ResNet-50's)
    r18, r50, yolo = (get_preset(name) for name in ("resnet18", "resnet50", "yolov5s"))
    assert r18 is not None and r50 is not None and yolo is not None
    assert r18.conv3x3_share == pytest.approx(0.83, abs=0.005)
    assert r50.conv3x3_share == pytest.approx(0.37, abs=0.005)
    assert r18.conv3x3_share * 1.81 == pytest.approx(r50.conv3x3_share * 4.09, rel=0.01)
    assert 0.0 < yolo.conv3x3_share < r50.conv3x3_share
    assert resnet50("fp32").model.conv3x3_share == r50.conv3x3_share


def test_the_deeper_resnets_add_their_extra_blocks_3x3s() -> None:
    """ResNet-101 has 17 more stage-3 bottlenecks than ResNet-50 and ResNet-152 4 more in stage 2
    and 30 more in stage 3, each adding one stride-1 3x3 convolution of 115.6M MACs (14^2 x 9 x
    256^2 at 14 px, 28^2 x 9 x 128^2 at 28): their stride-1 3x3 MACs over torchvision's totals."""
    block = 14**2 * 9 * 256**2 / 1e9
    r50, r101, r152 = (get_preset(name) for name in ("resnet50", "resnet101", "resnet152"))
    assert r50 is not None and r101 is not None and r152 is not None
    base = r50.conv3x3_share * 4.089
    assert r101.conv3x3_share * 7.801 == pytest.approx(base + 17 * block, rel=1e-3)
    assert r152.conv3x3_share * 11.514 == pytest.approx(base + 34 * block, rel=1e-3)
    assert get_preset("resnet-152") is r152


def test_fp32_resnet50_on_a_v100_runs_its_3x3_layers_faster() -> None:
    """The preset's share against none: the steps' compute shrinks by the speed-up, their memory
    traffic does not, so the gain is above 1 and below the speed-up; a tensor-core run is
    untouched by the share."""
    with_share = steps_hours(resnet50("fp32"), "V100-16GB")
    direct = steps_hours(resnet50("fp32", conv3x3_share=0.0), "V100-16GB")
    speedup = eff.winograd_speedup(resolve_gpu("V100-16GB"), "fp32", 1.503 / 4.089)
    assert 1.05 < direct / with_share < speedup
    amp = steps_hours(resnet50("amp-fp16"), "V100-16GB")
    amp_direct = steps_hours(resnet50("amp-fp16", conv3x3_share=0.0), "V100-16GB")
    assert amp == pytest.approx(amp_direct, rel=1e-12)


def test_a_gpu_without_tensor_cores_runs_its_16_bit_3x3_layers_as_winograd() -> None:
    all_3x3 = steps_hours(resnet50("fp16", conv3x3_share=1.0), "GTX1080Ti")
    direct = steps_hours(resnet50("fp16", conv3x3_share=0.0), "GTX1080Ti")
    assert 1.5 < direct / all_3x3 < 2.25
    # and an RTX 2080 Ti's tensor cores run the same network's direct convolutions
    assert steps_hours(resnet50("fp16", conv3x3_share=1.0), "RTX2080Ti") == pytest.approx(
        steps_hours(resnet50("fp16", conv3x3_share=0.0), "RTX2080Ti"), rel=1e-12
    )


def test_the_estimate_names_the_winograd_layers() -> None:
    v100 = resolve_gpu("V100-16GB")
    fp32 = estimate(resnet50("fp32"), v100, 1)
    assert "Winograd transforms on the CUDA cores" in fp32.efficiency_source
    assert "37% of the FLOPs" in fp32.efficiency_source
    assert "Winograd" not in estimate(resnet50("amp-fp16"), v100, 1).efficiency_source
    pascal = estimate(resnet50("fp16"), resolve_gpu("GTX1080Ti"), 1)
    assert "16-bit CUDA-core peak" in pascal.efficiency_source


def test_a_cnn_without_a_share_takes_resnet50s() -> None:
    raw = {
        "name": "custom-cnn",
        "kind": "pretrain",
        "model": {"arch": "cnn", "params": 2.0e7, "flops_per_sample": 1.2e10},
        "data": {"samples": 1.0e6, "epochs": 1},
        "training": {"precision": "fp32", "global_batch_samples": 256},
    }
    default = estimate(parse_workload(raw), resolve_gpu("V100-16GB"), 1)
    raw["model"]["conv3x3_share"] = 1.503 / 4.089
    named = estimate(parse_workload(raw), resolve_gpu("V100-16GB"), 1)
    assert default.wall_hours == pytest.approx(named.wall_hours, rel=1e-12)


def test_a_transformer_refuses_a_3x3_share() -> None:
    raw = load_workload("gpt2-finetune").model_dump(mode="json", exclude_none=True)
    raw["model"] = {**raw["model"], "conv3x3_share": 0.5}
    with pytest.raises(ConfigError) as info:
        parse_workload(raw)
    assert info.value.key_path == "model.conv3x3_share"
    assert "convolutional networks" in str(info.value)


@pytest.mark.parametrize("share", [-0.1, 1.5, "most"])
def test_a_share_outside_zero_to_one_is_refused(share: object) -> None:
    raw = load_workload("resnet50-imagenet").model_dump(mode="json", exclude_none=True)
    raw["model"] = {**raw["model"], "conv3x3_share": share}
    with pytest.raises(ConfigError) as info:
        parse_workload(raw)
    assert info.value.key_path == "model.conv3x3_share"


def test_a_tensor_core_flag_given_as_text_is_refused() -> None:
    gpu = dataclasses.replace(planner.resolve_gpu("GTX1080Ti"), tensor_cores="no")
    with pytest.raises(ConfigError, match="GpuSpec 'GTX1080Ti'") as info:
        planner.estimate("resnet50-imagenet", gpu, count=1)
    assert info.value.key_path == "gpu.tensor_cores"
