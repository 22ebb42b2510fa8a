"""The fabric check's Ethernet search is shared between estimates of one workload (speed only)."""

from __future__ import annotations

import pytest

from planner.gpu_specs import resolve_gpu
from planner.schema import Fabric, Interconnect
from planner.workload import Topology, estimate, load_workload
from planner.workload import estimator as est_module
from planner.workload.strategy import search_training

# 16 H100s in 2 nodes of 8: a multi-node layout, so every estimate asks which fabric it needs; over
# these four networks the answers include both fabrics and two layouts.
FABRICS = [
    (Fabric.ETHERNET, None),
    (Fabric.ETHERNET, 100.0),
    (Fabric.EFA, 400.0),
    (Fabric.INFINIBAND, 3200.0),
]


def _topology(fabric: Fabric, gbps: float | None) -> Topology:
    return Topology(
        gpus_per_node=8, interconnect=Interconnect.NVSWITCH, fabric=fabric, network_gbps=gbps
    )


def test_shared_fabric_search_gives_the_answers_of_fresh_estimates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gpu = resolve_gpu("H100")
    base = load_workload("llama-2-13b-pretrain")
    # one fresh copy (empty cache) per topology: nothing is shared between these
    fresh = [estimate(base.model_copy(), gpu, 16, topology=_topology(f, g)) for f, g in FABRICS]
    assert {e.fabric_required for e in fresh} == {Fabric.ETHERNET, Fabric.INFINIBAND}
    calls: list[int] = []

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return search_training(*args, **kwargs)

    monkeypatch.setattr(est_module, "search_training", counting)
    shared_spec = base.model_copy()
    shared = [estimate(shared_spec, gpu, 16, topology=_topology(f, g)) for f, g in FABRICS]
    assert shared == fresh
    # one layout search per estimate, plus the Ethernet search for each distinct chosen layout
    layouts = {e.strategy.name for e in shared}
    assert len(layouts) == 2
    assert len(calls) == len(FABRICS) + len(layouts)
