"""Training a latent-diffusion UNet: its attention scores at the fused attention kernel's rate, its
convolutions and linear layers at their own matmul shapes, and the fixed time of the kernels every
micro-batch launches (planner/workload/training.py _other_shape, models.unet_matmuls,
strategy.kernel_floor_seconds)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from planner.gpu_specs import resolve_gpu
from planner.workload import efficiency as eff
from planner.workload import parse_workload
from planner.workload import strategy as st
from planner.workload.estimator import estimate
from planner.workload.models import (
    DIFFUSION_PIPELINES,
    UNetShape,
    diffusion_pipeline,
    unet_attention_share,
    unet_bytes_per_flop,
    unet_matmuls,
)
from planner.workload.parallel import Links
from planner.workload.training import train_facts

# why FlashAttention is off where the workload does not say (training._flash_off_reason)
FLASH_OFF_ON_GPU = "off (the GPU does not run FlashAttention-2: older than Ampere, or a Jetson)"

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
    # review: 210 is the GEMMs of the layer table, not the UNet's layers: SD 1.5's diffusers UNet
    # has 258 convolutions and linear layers outside the time embedding (each of its 16
    # transformer blocks' Q, K and V and text K and V are five, as three and one GEMM here)
    assert "its convolutions and linear layers as 210 matmuls at their own shapes" in line
    assert "210 convolutions" not in line


def test_without_a_fused_kernel_the_estimate_says_the_scores_run_at_the_matmul_rate() -> None:
    """review: a V100 has no FlashAttention-2 (flash off: the scores cost their FLOPs at the matmul
    rate, attention_time_factor 1), and the line still said "at the fused attention kernel's
    rate"."""
    v100 = resolve_gpu("V100")
    est = estimate(_unet(), v100, 1)
    line = next(a for a in est.assumptions if a.startswith("diffusion UNet"))
    assert "fused attention kernel" not in line
    assert f"at the matmul rate, FlashAttention {FLASH_OFF_ON_GPU};" in line
    assert eff.attention_time_factor(v100, "cudnn", causal=False, flash=False) == 1.0


def test_on_a_jetson_orin_the_line_does_not_call_the_gpu_older_than_ampere() -> None:
    """review: the Orin is an Ampere GPU (bf16 tensor cores) that the estimate runs without
    FlashAttention (efficiency.supports_flash_attention), and the line said "GPU older than
    Ampere"."""
    orin = resolve_gpu("Jetson-AGX-Orin")
    assert orin.bf16 and not eff.supports_flash_attention(orin)
    line = next(a for a in estimate(_unet(), orin, 1).assumptions if a.startswith("diffusion"))
    assert "(GPU older than Ampere)" not in line
    assert FLASH_OFF_ON_GPU in line


def test_a_small_unet_enumerates_the_layers_diffusers_builds() -> None:
    # two blocks (2 then 4 channels, the second with one transformer block), one ResNet per down
    # block, a 4x4 latent of 1 channel, 3 text tokens of width 5, feed-forward x 2; by hand:
    unet = UNetShape(
        4,
        (2, 4),
        (0, 1),
        1,
        5,
        text_tokens=3,
        layers_per_block=1,
        latent_channels=1,
        feed_forward_mult=2,
    )

    def block(tokens: int, c: int) -> list[tuple[int, int, int]]:
        return [
            (tokens, c, c),
            (tokens, c, 3 * c),
            (tokens, c, c),
            (tokens, c, c),
            (3, 5, 2 * c),
            (tokens, c, c),
            (tokens, c, 4 * c),
            (tokens, 2 * c, c),
            (tokens, c, c),
        ]

    expected = [
        (16, 1 * 9, 2),  # conv_in
        (16, 2 * 9, 2),
        (16, 2 * 9, 2),  # down 0: ResNet 2 -> 2
        (4, 2 * 9, 2),  # downsample to 2x2
        (4, 2 * 9, 4),
        (4, 4 * 9, 4),
        (4, 2, 4),  # down 1: ResNet 2 -> 4 with its shortcut
        *block(4, 4),
        (4, 4 * 9, 4),
        (4, 4 * 9, 4),
        *block(4, 4),
        (4, 4 * 9, 4),
        (4, 4 * 9, 4),  # middle
        # up 0 (4 channels): skips 4 (down 1's ResNet) then 2 (the downsample)
        (4, 8 * 9, 4),
        (4, 4 * 9, 4),
        (4, 8, 4),
        *block(4, 4),
        (4, 6 * 9, 4),
        (4, 4 * 9, 4),
        (4, 6, 4),
        *block(4, 4),
        (16, 4 * 9, 4),  # upsample conv at 4x4
        # up 1 (2 channels): skips 2 (down 0's ResNet) then 2 (conv_in)
        (16, 6 * 9, 2),
        (16, 2 * 9, 2),
        (16, 6, 2),
        (16, 4 * 9, 2),
        (16, 2 * 9, 2),
        (16, 4, 2),
        (16, 2 * 9, 1),  # conv_out
    ]
    assert list(unet_matmuls(unet)) == expected


def test_sd15s_enumerated_unet_is_bk_sdms_339_gmacs() -> None:
    matmuls = unet_matmuls(DIFFUSION_PIPELINES["stable-diffusion"].unet)
    assert len(matmuls) == 210
    assert matmuls[0] == (64 * 64, 4 * 9, 320) and matmuls[1] == (64 * 64, 320 * 9, 320)
    assert sum(m * k * n for m, k, n in matmuls) == pytest.approx(339e9, rel=0.002)
    # its table's linear FLOPs are those MACs doubled; SD 2's at 96x96 latents, 2.25 times
    sd2 = unet_matmuls(DIFFUSION_PIPELINES["stable-diffusion-2"].unet)
    assert 2 * sum(m * k * n for m, k, n in sd2) == pytest.approx(0.678e12 * 2.25, rel=0.01)


def test_the_unets_matmuls_run_at_their_shapes_share_of_the_peak() -> None:
    matmuls = unet_matmuls(DIFFUSION_PIPELINES["stable-diffusion"].unet)
    b = 32
    flops = sum(m * k * n for m, k, n in matmuls)
    x = sum(m * k * n * (1 / (b * m) + 1 / k + 1 / n) / 3 for m, k, n in matmuls) / flops
    assert unet_bytes_per_flop("stable-diffusion", b) == pytest.approx(x)
    # fewer images a micro-batch: thinner M, more bytes per FLOP
    assert unet_bytes_per_flop("stable-diffusion", 2) > x
    # on an H100 SXM (989.4 TFLOPS over 3,350 GB/s, calibrated there at 0.52 on hidden 4,096 and
    # 8,192 tokens): 1 / (1 / 0.52 - 295.3 x x_ref + 295.3 x x), the nemo stack at 1.0
    opb = 989.4e12 / 3350e9
    h, t = 4096, 8192
    x_ref = (1 / t + 1 / h + 4 * h / (12 * h * h)) / 3
    expected = 1 / (1 / 0.52 - opb * x_ref + opb * x)
    assert 0.46 < expected < 0.49
    f = train_facts(_unet(micro_batch=b))
    assert f.unet_pipeline == "stable-diffusion"
    s = st._setup(f, H100, 1, ONE_GPU, True)
    assert st._matmul_efficiency(f, s, 1, b, f.model_flops_per_seq) == pytest.approx(expected)
    # a CNN keeps the family's calibrated fraction
    cnn = train_facts(_unet("cnn", micro_batch=b))
    assert cnn.unet_pipeline == ""
    s_cnn = st._setup(cnn, H100, 1, ONE_GPU, True)
    assert st._matmul_efficiency(cnn, s_cnn, 1, b, 1.0) == pytest.approx(0.52)


def test_sdxls_table_takes_the_enumerated_unet() -> None:
    # the block-by-block derivation gave ~2.78 TMACs; the enumeration 2,988.6 GMACs, which the
    # table's linear FLOPs take (FLOPs = 2 x MACs)
    sdxl = DIFFUSION_PIPELINES["stable-diffusion-xl"]
    macs = sum(m * k * n for m, k, n in unet_matmuls(sdxl.unet))
    assert macs == pytest.approx(2.9886e12, rel=1e-4)
    assert sdxl.unet_linear_flops == pytest.approx(2 * macs, rel=1e-3)
