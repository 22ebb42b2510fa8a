"""fp8 training by software stack: the fp8 tensor rate and the casts each scaling recipe pays.

An fp8 linear layer runs its matmuls at twice the 16-bit tensor rate (H100 SXM: 1,979 against 989
TFLOPS dense) and pays for the casts that feed them in memory traffic.  Transformer Engine's delayed
scaling casts in one fused pass (4 bytes per element); torchao's dynamic tensorwise scaling reads
each tensor once more for its amax (6 bytes) and recasts the weights every micro-batch (8 bytes per
weight element).  The expected values below are worked by hand from those byte counts and the
datasheet figures, not read back from the code.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from planner.gpu_specs import resolve_gpu
from planner.schema import Fabric, Interconnect
from planner.workload import Topology, estimate, parse_workload
from planner.workload import efficiency as eff
from planner.workload.estimate_types import topology_links
from planner.workload.frameworks import load_frameworks
from planner.workload.strategy import _matmul_efficiency, _setup
from planner.workload.training import train_facts

H100 = resolve_gpu("H100")
NODE = Topology(gpus_per_node=8, interconnect=Interconnect.NVSWITCH, fabric=Fabric.INFINIBAND)


def _llama3_8b(precision: str, framework: str) -> dict[str, object]:
    # FSDP's full shard under torchtitan; Megatron's distributed optimizer (ZeRO-1) under megatron
    zero = 1 if framework == "megatron" else 3
    return {
        "name": "fp8",
        "kind": "pretrain",
        "model": "llama-3-8b",
        "data": {"tokens": 1.0e9},
        "training": {
            "precision": precision,
            "framework": framework,
            "global_batch_tokens": 131072,
            "activation_checkpointing": "none",
            "parallelism": {"zero": zero, "tensor": 1, "pipeline": 1, "micro_batch": 1},
        },
    }


def test_fp8_linear_layers_run_at_twice_the_16_bit_rate() -> None:
    # 70% of the FLOPs at 2x, 30% at 1x: 989.4 / (0.3 + 0.35) = 1,522.15 TFLOPS effective
    peak, fraction = eff.precision_peak(H100, "fp8", 0.7)
    assert peak == pytest.approx(1522.15e12, rel=1e-5)
    assert fraction == pytest.approx(0.52)  # the tensor cores' share is the bf16 one


@pytest.mark.parametrize(
    ("hidden", "tp", "tokens", "scaling", "expected"),
    [
        # delayed: 4/6 x (1/4096 + 4/(12·4096)) = 2.17014e-4; no per-micro-batch weight casts
        (4096, 1, 8192, "delayed", 2.17014e-4),
        # dynamic: 6/6 x (1/4096 + 4/(12·4096)) + 8/(6·8192) = 3.25521e-4 + 1.62760e-4 =
        # 4.88281e-4, streamed at 0.36 of the bandwidth (torch.compile's cast kernels): 1.35634e-3
        (4096, 1, 8192, "dynamic", 1.35634e-3),
        # two tensor-parallel ways: 1/8192 + 8/(12·8192) = 2.03451e-4; weight shards and FLOPs
        # both halve, so the weight term is 8/(6·4096) = 3.25521e-4; 5.28971e-4 / 0.36
        (8192, 2, 4096, "dynamic", 1.46936e-3),
    ],
)
def test_cast_bytes_per_fp8_flop(
    hidden: int, tp: int, tokens: float, scaling: str, expected: float
) -> None:
    x = eff.fp8_cast_bytes_per_flop(hidden, tp, 12.0 * hidden**2, tokens, scaling)
    assert x == pytest.approx(expected, rel=1e-4)


def test_stacks_name_the_scaling_their_fp8_recipe_uses() -> None:
    stacks = load_frameworks()
    assert stacks["torchtitan"].fp8_scaling == "dynamic"  # torchao float8, tensorwise dynamic
    assert stacks["pytorch-fsdp"].fp8_scaling == "dynamic"
    assert stacks["megatron"].fp8_scaling == "delayed"  # Transformer Engine
    assert stacks["nemo"].fp8_scaling == "delayed"


def _inverse_efficiency(precision: str, scaling: str) -> float:
    """1 / matmul efficiency of Llama 3 8B's layers (one 8,192-token sequence, tp 1) on 8 H100
    under the torchtitan stack with its fp8 scaling set to ``scaling``."""
    f = train_facts(parse_workload(_llama3_8b(precision, "torchtitan")))
    assert f.framework is not None
    f = replace(f, framework=replace(f.framework, fp8_scaling=scaling))
    s = _setup(f, H100, 8, topology_links(H100, NODE, 8), flash=True)
    return 1.0 / _matmul_efficiency(f, s, 1, 1, f.model_flops_per_seq)


def test_dynamic_scaling_pays_its_extra_traffic_at_the_memory_bandwidth() -> None:
    # Llama 3 8B: 73.74% of the FLOPs in the linear layers (6·8192·32·234.52M over the model
    # FLOPs), so the effective peak is 989.4 / (0.26262 + 0.36869) = 1,567.2 TFLOPS, 467.8 FLOPs
    # per byte of the 3,350 GB/s HBM3.  With d = 1/4096 + 4·4096/234.52M = 3.14002e-4, delayed
    # scaling streams (4/6)·d = 2.09335e-4 bytes per linear FLOP at the full bandwidth; dynamic
    # scaling d + 8/(6·8192) = 4.76763e-4 at 0.36 of it, 1.32434e-3: the difference 1.11501e-3
    # bytes per linear FLOP is 0.73738 x 1.11501e-3 x 467.8 = 0.38462 on 1/efficiency.
    delta = _inverse_efficiency("fp8", "dynamic") - _inverse_efficiency("fp8", "delayed")
    assert delta == pytest.approx(0.38462, rel=2e-3)


def test_bf16_matmuls_do_not_see_the_fp8_recipe() -> None:
    assert _inverse_efficiency("bf16", "dynamic") == _inverse_efficiency("bf16", "delayed")


def test_fp8_step_is_faster_than_bf16_but_within_the_tensor_rate_bound() -> None:
    # Only the linear layers double their rate (Amdahl).  They are 73.74% of the model FLOPs; the
    # attention core (12·L·h·s per token) is 21.10%, of which a causal fused kernel runs half.
    # Transformer Engine (cuDNN attention at the matmul rate): executed 1 - 0.1055 = 0.8945 of the
    # model FLOPs, linear 0.7374 / 0.8945 = 82.43% of them: bound 1 / (0.1757 + 0.4122) = 1.701x.
    # torchtitan (FlashAttention-2, at 0.35/0.75 of that rate on H100): the attention core costs
    # 0.5 / 0.4667 = 1.0714 of its counted FLOPs, 1.0151 of the model FLOPs in all, linear
    # 72.64%: bound 1 / (0.2736 + 0.3632) = 1.570x.  Casts, activation traffic and communication
    # keep each step below its bound, and the torchao recipe's heavier casts below TE's.
    def seconds(precision: str, framework: str) -> float:
        est = estimate(parse_workload(_llama3_8b(precision, framework)), H100, 8, topology=NODE)
        return float(est.time_breakdown_hours["training steps"])

    bf16 = seconds("bf16", "torchtitan")
    torchao = bf16 / seconds("fp8", "torchtitan")
    assert 1.2 < torchao < 1.570
    te = seconds("bf16", "megatron") / seconds("fp8", "megatron")
    assert torchao < te < 1.701


def test_torchao_float8_linear_speedup_matches_its_readme_at_a_large_shape() -> None:
    # pytorch/ao torchao/float8 README, "Performance", example 2: a Float8Linear forward + backward
    # at M, K, N = 4,096, 8,192, 16,384 on H100 runs 1.39x faster than bf16.  This model's time per
    # FLOP of that matmul: (1/f - (P/B)·x_ref + (P/B)·(x + cast)) / P, with f = 0.52, B = 3,350
    # GB/s, x = (1/M + 1/K + 1/N)/3 result bytes, x_ref the reference shape's; bf16 P = 989.4
    # TFLOPS and no cast, fp8 P = 2 x 989.4 and cast = ((1/K + 1/N) + 8/(6·M)) / 0.36.
    m, k, n = 4096.0, 8192.0, 16384.0
    bw = H100.memory_bandwidth_gb_per_s * 1e9
    x = (1 / m + 1 / k + 1 / n) / 3
    x_ref = eff.reference_bytes_per_flop(H100)

    def seconds_per_flop(peak: float, cast: float) -> float:
        return (1 / 0.52 - peak / bw * x_ref + peak / bw * (x + cast)) / peak

    cast = ((1 / k + 1 / n) + 8 / (6 * m)) / eff.FP8_CAST_BANDWIDTH_SHARE["dynamic"]
    speedup = seconds_per_flop(H100.peak_flops, 0.0) / seconds_per_flop(2 * H100.peak_flops, cast)
    assert speedup == pytest.approx(1.39, abs=0.01)
