"""What the estimator memoises, and that the memo changes speed only.

The facts of a spec and the fabric check's Ethernet search are memoised on the spec's value
(``planner.workload.training``), never written into the spec: a quote estimates one workload on
thousands of (GPU, count, topology) combinations, and several fabrics of one GPU shape share one
Ethernet search.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from planner.gpu_specs import resolve_gpu
from planner.schema import Fabric, Interconnect
from planner.workload import Estimate, Topology, estimate, load_workload, training
from planner.workload.spec import Method
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


@pytest.fixture(autouse=True)
def _cold_memo() -> Iterator[None]:
    training.clear_memo()
    yield
    training.clear_memo()


def _fresh(spec_name: str, gpu_name: str, fabric: Fabric, gbps: float | None) -> Estimate:
    """An estimate with nothing memoised."""
    training.clear_memo()
    return estimate(
        load_workload(spec_name), resolve_gpu(gpu_name), 16, topology=_topology(fabric, gbps)
    )


def test_shared_fabric_search_gives_the_answers_of_fresh_estimates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fresh = [_fresh("llama-2-13b-pretrain", "H100", f, g) for f, g in FABRICS]
    assert {e.fabric_required for e in fresh} == {Fabric.ETHERNET, Fabric.INFINIBAND}
    calls: list[int] = []

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return search_training(*args, **kwargs)

    monkeypatch.setattr(training, "search_training", counting)
    training.clear_memo()
    spec, gpu = load_workload("llama-2-13b-pretrain"), resolve_gpu("H100")
    shared = [estimate(spec, gpu, 16, topology=_topology(f, g)) for f, g in FABRICS]
    assert shared == fresh
    # one layout search per estimate, plus the Ethernet search for each distinct chosen layout
    layouts = {e.strategy.name for e in shared}
    assert len(layouts) == 2
    assert len(calls) == len(FABRICS) + len(layouts)


def test_the_memo_does_not_write_into_the_spec() -> None:
    spec = load_workload("gpt2-xl-finetune")
    before = spec.model_dump()
    estimate(spec, resolve_gpu("H100"), 8)
    assert spec.model_dump() == before
    assert not spec.__pydantic_private__  # no cache riding on the spec


def test_a_changed_copy_is_not_answered_from_the_originals_memo() -> None:
    full = load_workload("gpt2-xl-finetune")
    gpu = resolve_gpu("H100")
    before = estimate(full, gpu, 1)
    lora = full.model_copy(
        update={"training": full.train.model_copy(update={"method": Method.LORA})}
    )
    # the base's gradients and AdamW states go (fp32 moments of 1.56e9 parameters: 11.6 GiB)
    after = estimate(lora, gpu, 1).memory_breakdown_gib
    assert after["optimizer_states"] < before.memory_breakdown_gib["optimizer_states"] - 10


def test_an_unhashable_copy_is_estimated_without_the_memo() -> None:
    """model_copy(update=...) is not validated, so a copy may hold a list: still estimable."""
    spec = load_workload("gpt2-xl-finetune")
    copy = spec.model_copy(update={"sources": ["a list, not a tuple"]})
    with pytest.raises(TypeError):
        hash(copy)
    assert estimate(copy, resolve_gpu("H100"), 16) == estimate(spec, resolve_gpu("H100"), 16)


@pytest.mark.parametrize(("gpu_name", "count"), [("H100", 16), ("T4", 1)])
def test_an_estimate_asks_for_the_least_memory_layout_only_where_nothing_fits(
    gpu_name: str, count: int
) -> None:
    # least_if_none_fits (what the estimates ask): the fastest where a layout fits, and where none
    # does (gpt2-xl fine-tuned on one 16 GB T4), the least-memory layout as the default search gives
    from planner.workload.estimate_types import topology_links
    from planner.workload.training import train_facts

    spec, gpu = load_workload("gpt2-xl-finetune"), resolve_gpu(gpu_name)
    f = train_facts(spec)
    links = topology_links(gpu, _topology(Fabric.INFINIBAND, None), count)
    chosen, least = search_training(f, gpu, count, links, flash=True)
    fastest, second = search_training(f, gpu, count, links, flash=True, least_if_none_fits=True)
    assert fastest == chosen
    assert second == (least if chosen is None else chosen)
    assert (chosen is None) == (gpu_name == "T4")
