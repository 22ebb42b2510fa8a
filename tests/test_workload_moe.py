"""Mixture-of-experts models (issue 14): FLOPs from the active parameters, memory from all of
them, the experts split over expert-parallel GPUs with all-to-all exchanges."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

import planner
from planner.cli import main
from planner.errors import ConfigError
from planner.gpu_specs import resolve_gpu
from planner.schema import Fabric, Interconnect
from planner.workload import Topology, compute, estimate, load_workload, parse_workload
from planner.workload.memory import GIB

MIXTRAL_TOTAL, MIXTRAL_ACTIVE = 46.7e9, 12.9e9  # Jiang et al. 2024; Mistral AI


def mixtral(**training: Any) -> planner.WorkloadSpec:
    return parse_workload(
        {
            "name": "moe",
            "kind": "pretrain",
            "model": "mixtral-8x7b",
            "data": {"tokens": 1e9},
            "training": {"precision": "bf16", "global_batch_tokens": 4_194_304, **training},
        }
    )


def test_flops_follow_the_active_parameters() -> None:
    spec = mixtral()
    est = estimate(spec, resolve_gpu("H100"), 64)
    seq = spec.seq_len
    per_token = 6.0 * MIXTRAL_ACTIVE + compute.attention_flops_per_token(32, 4096, seq)
    assert est.total_flops == pytest.approx(per_token * 1e9, rel=1e-9)


def test_memory_follows_every_parameter_and_expert_parallel_splits_the_experts() -> None:
    """8 experts, 2 per token: each expert holds (46.7B - 12.9B) / (8 - 2) parameters, so the
    experts hold 45.07B of 46.7B.  On 16 GPUs without ZeRO, Megatron splits them 8 ways (EP8) and
    keeps the rest (attention, router, embeddings) on every GPU: 2 bytes each in bf16."""
    spec = mixtral(framework="megatron", parallelism={"zero": 0, "tensor": 1, "pipeline": 1})
    assert spec.model.expert_params == pytest.approx((MIXTRAL_TOTAL - MIXTRAL_ACTIVE) / 6 * 8)
    est = estimate(spec, resolve_gpu("H200"), 16)
    assert est.strategy.expert_parallel == 8
    expert = spec.model.expert_params
    weights = 2.0 * ((MIXTRAL_TOTAL - expert) + expert / 8) / GIB
    assert est.memory_breakdown_gib["weights"] == pytest.approx(weights, rel=1e-9)
    assert "EP8" in est.strategy.name


def test_a_stack_without_expert_parallelism_keeps_every_expert() -> None:
    spec = mixtral(framework="hf-trainer")
    est = estimate(spec, resolve_gpu("H100"), 16)
    assert est.strategy.expert_parallel == 1 and "EP" not in est.strategy.name


def test_all_to_all_over_the_network_costs_time() -> None:
    """DeepSeek-V2-Lite's 64 experts over 16 GPUs in two nodes (EP16, pinned: unpinned, the search
    keeps the group inside a node) send tokens across the nodes' network: a slower network makes
    the steps slower; the same job without expert parallelism (hf-trainer) does not depend on it
    that way."""
    spec = parse_workload(
        {
            "name": "ds",
            "kind": "pretrain",
            "model": "deepseek-v2-lite",
            "data": {"tokens": 1e9},
            "training": {
                "framework": "megatron",
                "global_batch_tokens": 4_194_304,
                "parallelism": {"tensor": 1, "pipeline": 1, "zero": 1, "expert": 16},
            },
        }
    )

    def steps(gbps: float) -> tuple[float, int]:
        topo = Topology(
            gpus_per_node=8,
            interconnect=Interconnect.NVSWITCH,
            fabric=Fabric.INFINIBAND,
            network_gbps=gbps,
        )
        est = estimate(spec, resolve_gpu("H100"), 16, topology=topo)
        return est.time_breakdown_hours["training steps"], est.strategy.expert_parallel

    slow, ep = steps(400.0)
    fast, _ = steps(3200.0)
    assert ep == 16
    assert slow > fast


@pytest.mark.parametrize(
    ("model", "needle"),
    [
        ({"experts": 8, "experts_per_token": 2}, "active_params"),
        ({"experts": 8, "experts_per_token": 9, "active_params": 1e9}, "more than experts"),
        ({"experts": 8, "experts_per_token": 2, "active_params": 5e10}, "below params"),
    ],
)
def test_moe_fields_are_checked(model: dict[str, Any], needle: str) -> None:
    raw = {
        "name": "bad",
        "kind": "pretrain",
        "model": {"arch": "decoder", "params": 4e10, "layers": 32, "hidden": 4096, **model},
        "data": {"tokens": 1e9},
    }
    with pytest.raises(ConfigError, match=needle):
        parse_workload(raw)


def test_the_mixtral_fine_tune_is_in_the_library_and_estimates() -> None:
    spec = load_workload("mixtral-8x7b-finetune")
    assert spec.model.is_moe and spec.model.active_params == MIXTRAL_ACTIVE
    result = CliRunner().invoke(
        main, ["estimate", "mixtral-8x7b-finetune", "--gpu", "H100", "--count", "16"]
    )
    assert result.exit_code == 0, result.output
    assert "fits" in result.stdout
    # 46.7B parameters x 16 bytes do not fit on 8 x 80 GB, with any sharding
    small = estimate(spec, resolve_gpu("H100"), 8)
    assert not small.fits
