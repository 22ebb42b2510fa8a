"""The experts' own matmul shape, the token permutation's memory traffic, the per-node dispatch
and group-limited routing (issue 14), each against hand-computed values."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import pytest

from planner.errors import ConfigError
from planner.gpu_specs import resolve_gpu
from planner.workload import efficiency as eff
from planner.workload import parse_workload
from planner.workload.estimate_types import topology_links
from planner.workload.strategy import (
    _matmul_efficiency,
    _setup,
    expected_nodes,
    network_copies_per_token,
)
from planner.workload.training import train_facts
from tests.test_moe_mechanisms import QWEN3_30B, dgx, ep16_wall_hours, qwen

H, F, K, E = 2048, 768.0, 8, 128


def test_a_local_expert_gets_its_share_of_every_ranks_copies() -> None:
    """16,384 tokens a rank, 8 copies each, 8 ranks, 128 experts: 16,384 x 8 x 8 / 128 = 8,192
    tokens per local expert; the experts hold 8 x 3 x 2,048 x 768 = 37.75M of a 62.3M layer."""
    shape = eff.expert_shape(
        16384, H, 62.3e6, width=F, experts=E, experts_per_token=K, expert_parallel=8
    )
    assert shape is not None
    assert shape.tokens == pytest.approx(8192.0)
    assert shape.share == pytest.approx(37_748_736 / 62.3e6)
    assert (
        eff.expert_shape(
            16384, H, 62.3e6, width=0.0, experts=0, experts_per_token=0, expert_parallel=1
        )
        is None
    )


def test_an_expert_layer_writes_its_own_shapes_bytes() -> None:
    """sigma = 0.6; experts: (1/8192 + 1/2048 + 2/(3 x 768)) / 3 = 4.9280e-4; attention over the
    other 0.4 x 62.3M = 24.92M: (1/16384 + 1/2048 + 2 x 2048 / 24.92e6) / 3 = 2.3789e-4;
    0.6 x 4.9280e-4 + 0.4 x 2.3789e-4 = 3.9084e-4 bytes per FLOP, against the dense formula's
    (1/16384 + 1/2048 + 4 x 2048 / 62.3e6) / 3 = 2.2694e-4."""
    shape = eff.ExpertShape(width=F, share=0.6, tokens=8192.0)
    x = eff.layer_bytes_per_flop(16384, H, 1, 62.3e6, shape)
    assert x == pytest.approx(3.9084e-4, rel=1e-4)
    assert eff.layer_bytes_per_flop(16384, H, 1, 62.3e6) == pytest.approx(2.2694e-4, rel=1e-4)


def test_fp8_casts_follow_the_experts_widths() -> None:
    """Delayed scaling, 4 bytes per element over 6: dims 0.6 x (1/2048 + 2/2304) + 0.4 x (1/2048 +
    2 x 2048/24.92e6) = 1.07486e-3 -> 4/6 x 1.07486e-3 = 7.1657e-4 bytes per FLOP."""
    shape = eff.ExpertShape(width=F, share=0.6, tokens=8192.0)
    x = eff.fp8_cast_bytes_per_flop(H, 1, 62.3e6, 16384, "delayed", shape)
    assert x == pytest.approx(7.1657e-4, rel=1e-4)


def test_narrow_experts_lower_the_matmul_efficiency() -> None:
    """Qwen3-30B-A3B on H100 at EP8: the experts as their own 768-wide GEMMs run below the same
    layer sized as one dense layer of the active parameters (expert_ffn 0)."""
    f = train_facts(qwen())
    s = _setup(f, resolve_gpu("H100"), 8, _links(), True)
    moe = _matmul_efficiency(f, s, 1, 1, f.model_flops_per_seq, ep=8)
    dense_like = _matmul_efficiency(replace(f, expert_ffn=0.0), s, 1, 1, f.model_flops_per_seq)
    assert moe < dense_like


def _links() -> Any:
    return topology_links(resolve_gpu("H100"), dgx(), 8)


def test_the_permutation_streams_seven_rows_a_copy_and_two_a_token() -> None:
    """(7 x 8 + 2) x 2,048 x 2 = 237,568 bytes; full recompute adds the forward's 3 a copy and 1 a
    token: (10 x 8 + 3) x 2,048 x 2 = 339,968."""
    assert eff.routing_bytes_per_token(H, K) == pytest.approx(237_568.0)
    assert eff.routing_bytes_per_token(H, K, recompute=1.0) == pytest.approx(339_968.0)


def test_expected_distinct_nodes_by_hand() -> None:
    """4 of 8 groups, one a node: each node missed with C(7,4)/C(8,4) = 1/2: 4 nodes.  8 of 128
    experts on 2 nodes: 2 x (1 - C(64,8)/C(128,8))."""
    assert expected_nodes(8, 1, 4) == pytest.approx(4.0)
    miss = math.comb(64, 8) / math.comb(128, 8)
    assert expected_nodes(128, 64, 8) == pytest.approx(2.0 * (1.0 - miss))
    assert expected_nodes(4, 4, 2) == pytest.approx(1.0)


def deepseek_v3(**training: Any) -> Any:
    return parse_workload(
        {
            "name": "d",
            "kind": "pretrain",
            "model": {
                "arch": "decoder",
                "params": 671e9,
                "active_params": 37e9,
                "experts": 256,
                "experts_per_token": 8,
                "expert_groups": 8,
                "groups_per_token": 4,
                "layers": 61,
                "hidden": 7168,
                "heads": 128,
                "vocab": 129280,
                "seq_len": 4096,
            },
            "data": {"tokens": 1e9},
            "training": {"precision": "bf16", "framework": "megatron", **training},
        }
    )


def test_a_per_node_dispatcher_sends_a_token_once_to_each_node() -> None:
    """EP64 on 8-GPU nodes: a plain all-to-all sends 8 x 7/64 = 0.875 copies over NVLink and
    8 x 56/64 = 7 over the network.  Sending per node under node-limited routing (4 of 8 groups, one
    group a node): 4 nodes (min of 4 and 8 x (1 - C(224,8)/C(256,8)) = 5.25), 4 x 7/8 = 3.5 over the
    network, and each of the 8 copies forwarded over NVLink with chance 7/8: 7."""
    plain = train_facts(deepseek_v3())
    assert network_copies_per_token(plain, 64, 1, 8) == pytest.approx((0.875, 7.0))
    per_node = train_facts(deepseek_v3(dispatch_per_node=True))
    assert network_copies_per_token(per_node, 64, 1, 8) == pytest.approx((7.0, 3.5))
    # without the group limit: 8 x (1 - C(224,8)/C(256,8)) nodes, 7/8 of them other nodes
    free = replace(per_node, expert_groups=0, groups_per_token=0)
    reached = 8.0 * (1.0 - math.comb(224, 8) / math.comb(256, 8))
    assert network_copies_per_token(free, 64, 1, 8)[1] == pytest.approx(reached * 7 / 8)
    # inside one node nothing changes
    assert network_copies_per_token(per_node, 8, 1, 8) == pytest.approx(
        network_copies_per_token(plain, 8, 1, 8)
    )


def test_groups_that_span_nodes_limit_the_nodes_reached() -> None:
    """4 groups over 8 nodes (a group spans 2), a token in 1 group: its 8 experts fall among the
    group's 64 experts, 32 a node: 2 x (1 - C(32,8)/C(64,8)) nodes, 7/8 of them elsewhere."""
    f = replace(
        train_facts(deepseek_v3(dispatch_per_node=True)), expert_groups=4, groups_per_token=1
    )
    reached = 2.0 * (1.0 - math.comb(32, 8) / math.comb(64, 8))
    assert network_copies_per_token(f, 64, 1, 8)[1] == pytest.approx(reached * 7 / 8)


def test_per_node_dispatch_speeds_up_a_cross_node_expert_group() -> None:
    assert ep16_wall_hours(dispatch_per_node=True) < ep16_wall_hours()


@pytest.mark.parametrize(
    "groups",
    [
        {"expert_groups": 8},
        {"expert_groups": 8, "groups_per_token": 9},
        {"expert_groups": 7, "groups_per_token": 2},
    ],
)
def test_group_limited_routing_is_checked(groups: dict[str, int]) -> None:
    with pytest.raises((ConfigError, ValueError)):
        parse_workload(
            {
                "name": "q",
                "kind": "pretrain",
                "model": {**QWEN3_30B, **groups},
                "data": {"tokens": 1e9},
                "training": {"precision": "bf16"},
            }
        )


def test_deepseek_configs_carry_their_group_limited_routing() -> None:
    """DeepSeek-V3's config.json: n_group 8, topk_group 4 (node-limited routing); V2-Lite's single
    group limits nothing."""
    from pathlib import Path

    from planner.workload.hf_config import model_from_hf_config

    configs = Path(__file__).resolve().parent / "data" / "hf_configs"
    v3 = model_from_hf_config(configs / "deepseek-v3-config.json")
    assert (v3["expert_groups"], v3["groups_per_token"]) == (8, 4)
    lite = model_from_hf_config(configs / "deepseek-v2-lite-config.json")
    assert "expert_groups" not in lite
