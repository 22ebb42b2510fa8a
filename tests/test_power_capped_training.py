"""A power-capped board cannot hold its boost clock under a matmul load (issue 14): a T4 sustains
~24 of its 65 TFLOPS fp16 on a continuous cuBLAS GEMM at its 70 W limit (NVIDIA developer forum,
inference_efficiency.yaml ``power_capped_peak_fraction``).  Training on it runs its GEMMs at that
share, as on a slower unit, while the family's time beyond its GEMMs (calibrated on the uncapped
Quadro RTX 6000) stays what it was; boards without a published sustained figure are unchanged."""

from __future__ import annotations

import pytest

import planner
from planner.gpu_specs import resolve_gpu
from planner.workload import efficiency as eff

T4 = resolve_gpu("T4")


def test_the_t4s_gemms_run_at_its_capped_share_and_the_rest_as_calibrated() -> None:
    cap = 24.0 / 65.0  # the forum's figure, rounded to 0.37 in the data file
    assert eff.power_capped_gemm_share(T4) == pytest.approx(cap, abs=0.005)
    family = eff.gemm_fraction(T4)
    # seconds per peak FLOP: the GEMMs' at the capped share, the calibrated rest beside them
    rest = 1.0 / family - 1.0 / eff.TENSOR_GEMM_SHARE
    peak, fraction = eff.precision_peak(T4, "fp16")
    assert peak == T4.peak_flops
    assert fraction == pytest.approx(1.0 / (1.0 / 0.37 + rest))
    # between the family's fraction (no slow-down) and all of its time slowed as the GEMMs are
    assert family * 0.37 / eff.TENSOR_GEMM_SHARE < fraction < family


@pytest.mark.parametrize("gpu", ["Quadro-RTX6000", "A100-80GB", "H100", "L4"])
def test_boards_without_a_sustained_figure_keep_the_familys_fraction(gpu: str) -> None:
    g = resolve_gpu(gpu)
    assert eff.power_capped_gemm_share(g) is None
    assert eff.precision_peak(g, "fp16")[1] == eff.gemm_fraction(g)


def test_a_t4_fine_tune_takes_longer_and_says_why() -> None:
    spec = planner.with_training("gpt2-finetune", precision="fp16")
    t4 = planner.estimate(spec, "T4", 1)
    assert "power-capped: a big GEMM holds 0.37 of it" in t4.efficiency_source
    # the T4 is the Quadro RTX 6000's Turing at half its tensor peak and a third of its
    # bandwidth; the cap leaves it slower still than those ratios alone would
    quadro = planner.estimate(spec, "Quadro-RTX6000", 1)
    steps = (
        t4.time_breakdown_hours["training steps"] / quadro.time_breakdown_hours["training steps"]
    )
    assert steps > 130.5 / 65.0
    # fp32 runs on the CUDA cores, which the forum's tensor-core figure does not describe
    fp32 = planner.estimate(planner.with_training("gpt2-finetune", precision="fp32"), "T4", 1)
    assert "power-capped" not in fp32.efficiency_source
