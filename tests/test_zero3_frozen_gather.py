"""ZeRO-3 and FSDP shard a LoRA or QLoRA job's frozen weights with the rest, so every micro-batch
gathers them, in the forward pass and again in the backward pass, at the bytes they are kept in;
only the adapters' gradients are reduced (issue 14: the gathers counted the trainable weights
alone, which left a multi-node FSDP QLoRA run's traffic out)."""

from __future__ import annotations

from typing import Any

import pytest

from planner.gpu_specs import resolve_gpu
from planner.schema import Fabric, Interconnect
from planner.workload import parse_workload
from planner.workload import strategy as st
from planner.workload.estimate_types import Topology, topology_links
from planner.workload.training import train_facts

A100 = resolve_gpu("A100-80GB")


def llama_70b(method: str) -> Any:
    training: dict[str, Any] = {"precision": "bf16", "framework": "pytorch-fsdp", "method": method}
    if method != "full":
        training |= {"lora_rank": 8, "lora_targets": "all-linear"}
    return parse_workload(
        {
            "name": "l70",
            "kind": "finetune",
            "model": "llama-2-70b",
            "data": {"tokens": 1e7, "tokens_per_sample": 2048},
            "training": training,
        }
    )


@pytest.mark.parametrize("method", ["lora", "qlora"])
def test_zero3_gathers_the_frozen_weights_twice_at_their_stored_bytes(method: str) -> None:
    f = train_facts(llama_70b(method))
    frozen = f.params - f.trainable
    assert frozen > 0.9 * f.params and f.frozen_bytes > 0.0
    # two nodes of 8 over 100 Gb/s Ethernet: the gathers cross the network
    topo = Topology(gpus_per_node=8, interconnect=Interconnect.NVSWITCH, fabric=Fabric.ETHERNET)
    links = topology_links(A100, topo, 16)
    s = st._setup(f, A100, 16, links, flash=True)
    moved = 2.0 * frozen * f.frozen_bytes + 3.0 * f.trainable * 2.0
    assert st._sync_seconds(f, s, 16, 8, 1.0, 3) == pytest.approx(
        st.collective_seconds(1.0, moved, 16, 8, links)
    )
    # against the trainable weights' 3·G alone, the frozen ones dominate
    assert st._sync_seconds(f, s, 16, 8, 1.0, 3) > 50 * st.collective_seconds(
        3.0, f.trainable * 2.0, 16, 8, links
    )


def test_a_full_fine_tune_gathers_what_it_did() -> None:
    f = train_facts(llama_70b("full"))
    assert f.params == f.trainable
    topo = Topology(gpus_per_node=8, interconnect=Interconnect.NVSWITCH, fabric=Fabric.INFINIBAND)
    links = topology_links(A100, topo, 16)
    s = st._setup(f, A100, 16, links, flash=True)
    assert st._sync_seconds(f, s, 16, 8, 2.0, 3) == pytest.approx(
        st.collective_seconds(3.0, f.trainable / 2.0 * 2.0, 16, 8, links)
    )
