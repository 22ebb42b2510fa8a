"""A part that holds a higher clock under dense matmuls than its family's calibration part reaches
that much more of the same peak (efficiency.SUSTAINED_GEMM_RELATIVE): the 1,000 W MI325X against
the 750 W MI300X, by AMD's measured Max-Achievable FLOPs (843 against 708 BF16 TFLOPS)."""

from __future__ import annotations

import pytest

from planner.gpu_specs import resolve_gpu
from planner.workload import efficiency as eff
from planner.workload.parallel import Links
from planner.workload.serving import ModelShape, Replica, serving_stack

LLAMA2_70B = ModelShape(params=68.98e9, layers=80, hidden=8192, heads=64, kv_heads=8)
ONE = Links(gpus_per_node=8, intra_bytes_per_s=358.4e9, intra_kind="nvlink", node_bytes_per_s=50e9)


def test_the_mi325x_sustains_more_of_the_same_peak() -> None:
    # MI300 family figure 0.36 (calibrated on the MI300X); MI325X: 0.36 x 843 / 708 = 0.42864
    assert eff.gemm_fraction(resolve_gpu("MI300X")) == pytest.approx(0.36)
    assert eff.gemm_fraction(resolve_gpu("MI325X")) == pytest.approx(0.42864, abs=1e-5)
    # both datasheets give 1,307.4 dense BF16 TFLOPS: the difference is the sustained clock
    assert resolve_gpu("MI325X").peak_flops == resolve_gpu("MI300X").peak_flops


def test_attention_runs_at_the_higher_sustained_rate() -> None:
    # attention's matmuls at the 16-bit peak x the part's share: 1,307.4e12 x 0.42864 = 560.4e12
    rep = Replica(LLAMA2_70B, resolve_gpu("MI325X"), 1, ONE, serving_stack("vllm"), "fp8")
    assert rep._attention_peak == pytest.approx(560.4e12, rel=1e-4)


def test_parts_without_a_measurement_keep_their_family_figure() -> None:
    assert eff.gemm_fraction(resolve_gpu("H200")) == eff.GEMM_FRACTION["H200"]
    assert eff.gemm_fraction(resolve_gpu("MI250X")) == eff.GEMM_FRACTION["MI200"]


def test_an_estimate_names_the_measurement_behind_the_higher_share() -> None:
    # the MI325X's 0.43 is the MI300 family's 0.36 x 843/708: the estimate names AMD's table, not
    # only the generic calibration sources, which say nothing of the MI325X
    from planner.workload import estimate, parse_workload

    spec = parse_workload(
        {
            "name": "w",
            "kind": "finetune",
            "model": "llama-2-7b",
            "data": {"tokens": 1e7},
            "training": {"method": "lora"},
        }
    )
    mi325x = estimate(spec, resolve_gpu("MI325X"), 1).efficiency_source
    assert "x1.19 for the clock it holds under matmuls" in mi325x
    assert "Max-Achievable FLOPs" in mi325x
    assert set(eff.SUSTAINED_GEMM_SOURCE) == set(eff.SUSTAINED_GEMM_RELATIVE)
    assert "Max-Achievable" not in estimate(spec, resolve_gpu("MI300X"), 1).efficiency_source
