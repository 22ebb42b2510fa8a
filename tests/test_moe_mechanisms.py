"""Mixture-of-experts mechanisms checked on hand-computed values (issue 14): the activations a
routed expert stores for the width it has, where the expert-parallel all-to-alls go (Megatron-Core's
rank order keeps an expert-parallel group inside a node first), a pinned expert-parallel size, and
the all-to-alls overlapped by another micro-batch's computation."""

from __future__ import annotations

from typing import Any

import pytest

from planner.gpu_specs import resolve_gpu
from planner.schema import Fabric, Interconnect
from planner.workload import Topology, estimate, parse_workload
from planner.workload import memory as mem
from planner.workload.strategy import all_to_all_shares, exposed_all_to_all_seconds

# Qwen3-30B-A3B's model card: 30.5B parameters, 3.3B activated, 128 experts, 8 per token, 48
# layers, hidden 2,048 (its config.json: moe_intermediate_size 768).
QWEN3_30B: dict[str, Any] = {
    "arch": "decoder",
    "params": 30.5e9,
    "active_params": 3.3e9,
    "experts": 128,
    "experts_per_token": 8,
    "layers": 48,
    "hidden": 2048,
    "heads": 32,
    "kv_heads": 4,
    "vocab": 151936,
    "seq_len": 4096,
    "dropout": 0.0,
}


def qwen(**training: Any) -> Any:
    return parse_workload(
        {
            "name": "q",
            "kind": "pretrain",
            "model": QWEN3_30B,
            "data": {"tokens": 1e9},
            "training": {
                "precision": "bf16",
                "framework": "megatron",
                "global_batch_tokens": 4_194_304,
                **training,
            },
        }
    )


def test_the_expert_width_follows_from_total_and_active_parameters() -> None:
    """(30.5B - 3.3B) / (128 - 8) = 226.67M per expert, over 48 layers of 3 x 2,048 x width:
    226.67e6 / (3 x 2,048 x 48) = 768.6, the config's 768 (embeddings and norms aside)."""
    width = qwen().model.expert_ffn
    assert width == pytest.approx(768.6, abs=0.5)


def test_a_routed_expert_stores_activations_for_its_own_width() -> None:
    """A gated expert f = 0.375 h wide stores per routed token its input (2 bytes per h), the gate
    and up outputs (4 x 0.375) and the down input (2 x 0.375): 2 + 2.25 = 4.25 bytes per s·h.
    Eight of them in place of a dense MLP's 18 value bytes: 32 - 18 + 8 x 4.25 = 48 without
    dropout; the old count (a 19-byte dense MLP for each extra expert) gave 32 + 7 x 19 = 165."""
    assert mem.expert_bytes_per_sbh(0.375) == pytest.approx(4.25)
    assert mem.moe_layer_bytes_per_sbh(0.375, 8, dropout=False) == pytest.approx(48.0)
    # fp8 keeps the input and the down projection's input in one byte: 1 + 5 x 0.375 = 2.875;
    # the dense layer's 25 (32 - 7) less its fp8 MLP values (18 - 5 = 13), plus 8 experts
    assert mem.expert_bytes_per_sbh(0.375, precision="fp8") == pytest.approx(2.875)
    assert mem.moe_layer_bytes_per_sbh(0.375, 8, dropout=False, precision="fp8") == pytest.approx(
        25.0 - 13.0 + 8 * 2.875
    )
    # one expert four hidden sizes wide costs what Korthikanti's dense MLP does plus its gate
    assert mem.moe_layer_bytes_per_sbh(4.0, 1, dropout=True) == pytest.approx(34.0 - 18.0 + 26.0)


@pytest.mark.parametrize(
    ("ep", "tp", "gpus_per_node", "shares"),
    [
        (8, 1, 8, (7 / 8, 0.0)),  # one node: everything but the GPU's own share on NVLink
        (16, 1, 8, (7 / 16, 8 / 16)),  # two nodes: half of the tokens leave the node
        (32, 2, 8, (3 / 32, 28 / 32)),  # TP2: 4 expert ranks per node
        (1, 1, 8, (0.0, 0.0)),
    ],
)
def test_an_expert_parallel_group_fills_a_node_first(
    ep: int, tp: int, gpus_per_node: int, shares: tuple[float, float]
) -> None:
    assert all_to_all_shares(ep, tp, gpus_per_node) == pytest.approx(shares)


def test_overlapped_all_to_alls_show_only_past_the_computation() -> None:
    """Past the computation, or the computation's loss to the 20 of 132 SMs the exchanges hold
    while they run (DeepSeek-V3 s3.2.2): 0.05 s of them beside 0.1 s shows 0.05 x 20/132."""
    assert exposed_all_to_all_seconds(0.3, 0.1, False) == pytest.approx(0.3)
    assert exposed_all_to_all_seconds(0.3, 0.1, True) == pytest.approx(0.2)
    assert exposed_all_to_all_seconds(0.05, 0.1, True) == pytest.approx(0.05 * 20 / 132)


def dgx(gbps: float = 3200.0) -> Topology:
    return Topology(
        gpus_per_node=8,
        interconnect=Interconnect.NVSWITCH,
        fabric=Fabric.INFINIBAND,
        network_gbps=gbps,
    )


def test_a_pinned_expert_parallel_size_is_kept_and_named() -> None:
    spec = qwen(parallelism={"tensor": 1, "pipeline": 1, "expert": 16, "micro_batch": 1})
    est = estimate(spec, resolve_gpu("H100"), 16, topology=dgx())
    assert est.strategy.expert_parallel == 16 and "EP16" in est.strategy.name


def test_the_search_keeps_the_experts_inside_a_node_when_that_is_faster() -> None:
    """On two nodes with a slow network, EP16 sends half of every token's experts over it; EP8
    keeps them on NVLink.  Unpinned, the search takes the in-node group; pinned EP16 is slower."""
    free = estimate(
        qwen(parallelism={"tensor": 1, "pipeline": 1}), resolve_gpu("H100"), 16, topology=dgx(400.0)
    )
    pinned = estimate(
        qwen(parallelism={"tensor": 1, "pipeline": 1, "expert": 16}),
        resolve_gpu("H100"),
        16,
        topology=dgx(400.0),
    )
    assert free.strategy.expert_parallel == 8
    assert pinned.strategy.expert_parallel == 16
    assert free.wall_hours < pinned.wall_hours


def ep16_wall_hours(**training: Any) -> float:
    """Qwen3-30B-A3B on two DGX H100 nodes, its 16 expert-parallel ranks across both."""
    layout = {"tensor": 1, "pipeline": 1, "expert": 16, "micro_batch": 1}
    spec = qwen(parallelism=layout, **training)
    return estimate(spec, resolve_gpu("H100"), 16, topology=dgx()).wall_hours


def test_overlapping_the_all_to_alls_makes_the_steps_faster() -> None:
    assert ep16_wall_hours(overlap_all_to_all=True) < ep16_wall_hours()
