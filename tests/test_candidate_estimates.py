"""The candidate builder asks the workload model once per distinct gang (issue 15)."""

from __future__ import annotations

from typing import Any

from planner.gpu_specs import resolve_gpu
from planner.optimize.candidates import _Estimates
from planner.schema import Fabric, Interconnect
from planner.workload import Estimate, Topology, WorkloadSpec, estimate, load_workload


def _counting() -> tuple[list[Topology], Any]:
    asked: list[Topology] = []

    def estimator(spec: WorkloadSpec, gpu: Any, count: int, *, topology: Topology) -> Estimate:
        asked.append(topology)
        return estimate(spec, gpu, count, topology=topology, suggest=False)

    return asked, estimator


def test_one_node_is_estimated_once_whatever_its_fabric() -> None:
    asked, estimator = _counting()
    run = _Estimates(load_workload("gpt2-xl-finetune"), estimator)
    h100 = resolve_gpu("H100")
    first = run(h100, 8, 8, "nvswitch", "infiniband", 3200.0)
    again = run(h100, 8, 8, "nvswitch", "ethernet", 100.0)
    assert again is first and len(asked) == 1 and len(run) == 1
    # the estimate it shares is the one the other fabric gives: one node never crosses it
    own = estimate(
        load_workload("gpt2-xl-finetune"),
        h100,
        8,
        topology=Topology(
            gpus_per_node=8,
            interconnect=Interconnect.NVSWITCH,
            fabric=Fabric.ETHERNET,
            network_gbps=100.0,
        ),
        suggest=False,
    )
    assert own == first


def test_gangs_of_several_nodes_are_estimated_per_fabric() -> None:
    asked, estimator = _counting()
    run = _Estimates(load_workload("gpt2-xl-finetune"), estimator)
    h100 = resolve_gpu("H100")
    run(h100, 16, 8, "nvswitch", "infiniband", 3200.0)
    run(h100, 16, 8, "nvswitch", "ethernet", 100.0)
    assert len(asked) == 2 and len(run) == 2
