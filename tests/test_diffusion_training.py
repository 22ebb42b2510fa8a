"""Training a latent-diffusion UNet: its attention scores at the fused attention kernel's rate and
the fixed time of the kernels every micro-batch launches (planner/workload/training.py
_other_shape, strategy.kernel_floor_seconds)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from planner.gpu_specs import resolve_gpu
from planner.workload import efficiency as eff
from planner.workload import parse_workload
from planner.workload import strategy as st
from planner.workload.estimator import estimate
from planner.workload.models import DIFFUSION_PIPELINES, diffusion_pipeline, unet_attention_share
from planner.workload.parallel import Links
from planner.workload.training import train_facts

H100 = resolve_gpu("H100")
ONE_GPU = Links(gpus_per_node=1, intra_bytes_per_s=1.0, intra_kind="none", node_bytes_per_s=1.0)


def _unet(arch: str = "diffusion", *, micro_batch: int = 8, **model: Any) -> Any:
    return parse_workload(
        {
            "name": "sd",
            "kind": "pretrain",
            "model": {
                "arch": arch,
                "params": 865.9e6,
                "flops_per_sample": 2.40e12,
                "activation_gib_per_sample": 0.79,
                **model,
            },
            "data": {"samples": micro_batch, "epochs": 1},
            "training": {
                "precision": "fp16",
                "optimizer": "adamw",
                "framework": "nemo",
                "global_batch_samples": micro_batch,
                "parallelism": {"micro_batch": micro_batch},
            },
        },
        file="test",
    )


def test_the_unet_attention_share_is_the_score_matmuls_of_its_layer_table() -> None:
    # SD 1.5 at 64x64 latents: 339 GMACs of convolutions and linear layers (BK-SDM Table 1) and
    # 2 x 4096^2 x 320 x 5 + 2 x 1024^2 x 640 x 5 = 61 GMACs of scores: 0.122 of 0.800 TFLOPs
    scores_macs = 2 * 4096**2 * 320 * 5 + 2 * 1024**2 * 640 * 5
    assert scores_macs == pytest.approx(61e9, rel=0.01)
    assert unet_attention_share(DIFFUSION_PIPELINES["stable-diffusion"]) == pytest.approx(
        0.122 / 0.800
    )
    # a model without a table of its own is taken as SD 1.5's UNet
    assert diffusion_pipeline(None).name == "stable-diffusion"
    assert diffusion_pipeline("stable-diffusion-xl").unet_kernels == 3000


def test_a_diffusion_unet_counts_its_attention_and_its_kernels_and_a_cnn_neither() -> None:
    f = train_facts(_unet())
    assert f.attention_flops_per_seq == {"none": pytest.approx(0.1525 * 2.40e12)}
    assert f.kernels_per_micro_batch == 3 * 900
    plain = train_facts(_unet("cnn"))
    assert plain.attention_flops_per_seq == {} and plain.kernels_per_micro_batch == 0.0


def test_the_kernel_floor_is_ten_thousand_cycles_at_the_boost_clock() -> None:
    f = train_facts(_unet())
    # inference_efficiency.yaml: 10,000 cycles; the H100 SXM's boost clock 1,980 MHz
    assert st.kernel_floor_seconds(f, H100) == pytest.approx(10_000 / 1.98e9)
    assert st.kernel_floor_seconds(replace(f, kernels_per_micro_batch=0.0), H100) == 0.0


@pytest.mark.parametrize("micro_batch", [2, 32])
def test_each_micro_batch_pays_its_kernels_floors_whatever_its_size(micro_batch: int) -> None:
    f = train_facts(_unet(micro_batch=micro_batch))
    with_floor, _ = st.search_training(f, H100, 1, ONE_GPU, flash=True)
    without, _ = st.search_training(
        replace(f, kernels_per_micro_batch=0.0), H100, 1, ONE_GPU, flash=True
    )
    assert with_floor is not None and without is not None
    assert with_floor.strategy.grad_accumulation == 1
    floors = 2700 * 10_000 / 1.98e9 * eff.straggler_factor(1)
    assert with_floor.step_s - without.step_s == pytest.approx(floors, rel=1e-9)


def test_the_attention_scores_run_at_the_fused_kernels_rate() -> None:
    # non-causal, no recompute: the fused kernel's backward pass recomputes the scores (2.5 / 2 of
    # its counted FLOPs) at 0.87 of the forward's rate; under nemo (cuDNN) at the GEMM fraction
    f = train_facts(_unet())
    factor = (1 / 3 + 2 / 3 * (2.5 / 2) / 0.87) / 1.0
    assert eff.attention_time_factor(H100, "cudnn", causal=False, flash=True) == pytest.approx(
        factor
    )
    with_scores, _ = st.search_training(f, H100, 1, ONE_GPU, flash=True)
    without, _ = st.search_training(
        replace(f, attention_flops_per_seq={}), H100, 1, ONE_GPU, flash=True
    )
    assert with_scores is not None and without is not None
    added = with_scores.hardware_flops_per_piece - without.hardware_flops_per_piece
    assert added == pytest.approx((factor - 1) * 0.1525 * 2.40e12 * 8, rel=1e-6)


def test_the_estimate_says_how_it_timed_the_unet() -> None:
    est = estimate(_unet(), H100, 1)
    line = next(a for a in est.assumptions if a.startswith("diffusion UNet"))
    assert "stable-diffusion's layer table (a latent-diffusion model without its own)" in line
    assert "attention scores 15% of its FLOPs" in line and "2,700 kernels a micro-batch" in line


def test_without_a_fused_kernel_the_estimate_says_the_scores_run_at_the_matmul_rate() -> None:
    """review: a V100 has no FlashAttention-2 (flash off: the scores cost their FLOPs at the matmul
    rate, attention_time_factor 1), and the line still said "at the fused attention kernel's
    rate"."""
    v100 = resolve_gpu("V100")
    est = estimate(_unet(), v100, 1)
    line = next(a for a in est.assumptions if a.startswith("diffusion UNet"))
    assert "fused attention kernel" not in line
    assert "at the matmul rate, FlashAttention off (GPU older than Ampere);" in line
    assert eff.attention_time_factor(v100, "cudnn", causal=False, flash=False) == 1.0
