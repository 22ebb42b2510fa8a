"""Partial (block) activation recompute: Megatron-LM's ``--recompute-granularity full
--recompute-method block --recompute-num-layers N`` recomputes N of a pipeline stage's layers and
keeps the rest whole, so a job just over the memory pays a few percent of recompute, not the third
of full recompute.  Checked against hand-computed bytes and FLOPs (Korthikanti et al. 2022) and the
search's choice of the fewest layers that fit."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest

from benchmarks.accuracy import load_runs, measure
from planner.gpu_specs import resolve_gpu
from planner.schema import Fabric, Interconnect
from planner.workload import estimate, parse_workload
from planner.workload.estimate_types import Topology, topology_links
from planner.workload.memory import GIB
from planner.workload.strategy import (
    Strategy,
    _activation_bytes,
    _block_layers,
    _per_sequence,
    _place,
    _setup,
    _tensor_parallel_seconds,
    search_training,
    stage_layers,
)
from planner.workload.training import train_facts

CALIBRATION, HOLDOUT = load_runs()
_ONE_GPU = Topology(1, Interconnect.NONE, Fabric.ETHERNET)
ROWS = {r.id: r for r in CALIBRATION + HOLDOUT}


def _llama3_405b_facts() -> Any:
    return train_facts(parse_workload(ROWS["H12"].workload))


def _small_model(seq: int, **training: Any) -> Any:
    """A 1.3B decoder on one A100-40GB: its activations outgrow the GPU as the sequence grows."""
    return parse_workload(
        {
            "name": "small",
            "kind": "pretrain",
            "model": {"arch": "decoder", "params": 1.3e9, "layers": 24, "hidden": 2048,
                      "heads": 16, "vocab": 50257, "seq_len": seq},
            "data": {"tokens": 1e9},
            "training": {"global_batch_samples": 8, "framework": "megatron", **training},
        }
    )  # fmt: skip


# -- bytes and FLOPs by hand --------------------------------------------------------------------


def test_block_recompute_keeps_the_inputs_of_its_layers_and_everything_of_the_rest() -> None:
    """Llama 3 405B, TP8 PP16 (126 layers, 8 per stage), 2 of 8 layers recomputed: a recomputed
    layer keeps its input, 2·s·h bytes, the others 32·s·h (no dropout, FlashAttention); the first
    stage holds L layers' worth of one micro-batch under 1F1B, over the 8 tensor ranks."""
    f = _llama3_405b_facts()
    s, h = 8192, 16384
    assert (f.layers, f.seq, f.hidden) == (126, s, h)
    assert stage_layers(126, 16) == 8
    sh = s * h
    expected = 126 * (2 / 8 * 2.0 * sh + 6 / 8 * 32.0 * sh) / 8
    assert _activation_bytes(f, 8, 16, "block", True, 2 / 8)[0] == pytest.approx(expected)
    seq = _per_sequence(f, 8, 16, "block", True, recomputed_layers=2)
    assert seq.act_bytes == pytest.approx(expected)
    assert (seq.mode, seq.recomputed_layers, seq.stage_layers) == ("block", 2, 8)
    # between no recompute (32·s·h a layer) and full (2·s·h and one layer's working set)
    none = _per_sequence(f, 8, 16, "none", True)
    full = _per_sequence(f, 8, 16, "full", True)
    assert full.act_bytes < seq.act_bytes < none.act_bytes


def test_block_recompute_runs_the_forward_pass_of_its_layers_again() -> None:
    """k of Ls layers recomputed: k/Ls of full recompute's extra FLOPs (2·N + 4·L·h·s per token),
    one more write of their activations, and 2 more tensor-parallel all-reduces a layer for them
    (4 + 2·k/Ls a layer; 6 under full recompute)."""
    f = _llama3_405b_facts()
    n_active = float(ROWS["H12"].workload["model"]["params"])
    s, h, layers = 8192, 16384, 126
    full_extra = s * (2.0 * n_active + 4.0 * layers * h * s)
    seq = _per_sequence(f, 8, 16, "block", True, recomputed_layers=2)
    assert seq.hw_flops == pytest.approx(f.model_flops_per_seq + 0.25 * full_extra)
    assert seq.passes == pytest.approx(3.25)
    assert seq.recompute_share == pytest.approx(0.25)
    gpu = resolve_gpu("H100")
    topo = Topology(8, Interconnect.NVSWITCH, Fabric.INFINIBAND)
    search = _setup(f, gpu, 8192, topology_links(gpu, topo, 8192), True)
    search = search._replace(tp_overlap=False)  # the all-reduces as they are, none hidden
    lay = _place(f, search, 8, 16, 1)
    none = _tensor_parallel_seconds(f, search, lay, 1, 0.0, 1.0)
    assert _tensor_parallel_seconds(f, search, lay, 1, 0.25, 1.0) == pytest.approx(none * 4.5 / 4)
    assert _tensor_parallel_seconds(f, search, lay, 1, 1.0, 1.0) == pytest.approx(none * 6 / 4)


def test_all_of_a_stages_layers_is_full_recompute() -> None:
    f = _llama3_405b_facts()
    assert _per_sequence(f, 8, 16, "block", True, recomputed_layers=8) == _per_sequence(
        f, 8, 16, "full", True
    )


# -- the search --------------------------------------------------------------------------------


def test_the_search_recomputes_the_fewest_layers_that_fit() -> None:
    """A 1.3B model at 16,384 tokens on one A100-40GB does not fit without recompute; the search
    recomputes the fewest of its 24 layers that fit one sequence, not all of them."""
    spec = _small_model(16384)
    gpu = resolve_gpu("A100-40GB")
    est = estimate(spec, gpu, 1)
    st = est.strategy
    assert est.fits
    assert st.activation_checkpointing == "block"
    assert (st.layers_per_stage, st.micro_batch_size) == (24, 1)
    k = st.recomputed_layers
    assert 0 < k < 24
    assert st.name == f"DP1 + block recompute of {k} of 24 layers"
    # k layers fit where k - 1 do not, in the layout's room for activations
    f = train_facts(spec)
    topo = _ONE_GPU
    search = _setup(f, gpu, 1, topology_links(gpu, topo, 1), True)
    room = _place(f, search, 1, 1, 0).room
    assert _activation_bytes(f, 1, 1, "block", True, k / 24)[0] <= room
    assert _activation_bytes(f, 1, 1, "block", True, (k - 1) / 24)[0] > room
    assert _activation_bytes(f, 1, 1, "none", True)[0] > room
    # ... and it is faster than full recompute, slower than nothing recomputed would be
    full = estimate(_small_model(16384, activation_checkpointing="full"), gpu, 1)
    assert est.wall_hours < full.wall_hours


def test_without_recompute_where_it_fits() -> None:
    """Where everything fits without recompute, the search recomputes nothing (8,192 tokens)."""
    est = estimate(_small_model(8192), resolve_gpu("A100-40GB"), 1)
    assert est.strategy.activation_checkpointing == "none"
    assert est.strategy.recomputed_layers == 0


def test_pinned_block_recompute_costs_one_layer_where_all_fit() -> None:
    est = estimate(
        _small_model(8192, activation_checkpointing="block"), resolve_gpu("A100-40GB"), 1
    )
    assert est.strategy.activation_checkpointing == "block"
    assert est.strategy.recomputed_layers == 1
    free = estimate(_small_model(8192), resolve_gpu("A100-40GB"), 1)
    assert est.wall_hours > free.wall_hours


def test_pinned_block_recompute_reports_a_miss_with_a_layout() -> None:
    """Pinned to block recompute where nothing fits, the least-memory layout is still reported."""
    spec = _small_model(131072, activation_checkpointing="block")
    f = train_facts(spec)
    gpu = resolve_gpu("A100-40GB")
    topo = _ONE_GPU
    best, least = search_training(f, gpu, 1, topology_links(gpu, topo, 1), flash=True)
    assert best is None and least is not None
    assert least.strategy.recomputed_layers == 23


def test_llama3_405b_recomputes_one_layer_per_stage_and_interleaves() -> None:
    """Meta's 405B layout (TP8 PP16, ZeRO-1-like, interleaved; Dubey et al. 2024 s3.3.2) comes to
    just over the H100's memory without recompute; one of each stage's 8 layers recomputed fits it
    with 8 interleaved chunks, whose extra in-flight activations, (pp - 1)/(pp·v) of the rest, are
    counted at the block bytes."""
    _, est = measure(ROWS["H12"])
    st = est.strategy
    assert st.activation_checkpointing == "block"
    assert (st.recomputed_layers, st.layers_per_stage, st.virtual_stages) == (1, 8, 8)
    assert st.zero_stage == 1
    assert st.name.endswith("block recompute of 1 of 8 layers per stage")
    assert est.memory_per_gpu_gib <= 80.0
    f = _llama3_405b_facts()
    act1 = _activation_bytes(f, 8, 16, "block", True, 1 / 8)[0]
    assert est.memory_breakdown_gib["activations"] == pytest.approx(
        act1 * (1 + 15 / (16 * 8)) / GIB, rel=1e-6
    )
    # and without recompute the same ZeRO-1 layout (Meta's, no context parallel) does not fit
    pin = {"tensor": 8, "pipeline": 16, "zero": 1, "context": 1}
    f_none = replace(f, pinned=pin, recompute_modes=("none",))
    gpu = resolve_gpu("H100")
    links = topology_links(gpu, ROWS["H12"].topology, 8192)
    assert search_training(f_none, gpu, 8192, links, flash=True)[0] is None
    search = _setup(f, gpu, 8192, links, True)
    lay = _place(f, search, 8, 16, 1)
    assert _block_layers(f, search, lay, {})[0] == 1


def test_rows_pinned_to_full_recompute_stay_full() -> None:
    for rid in ("H1", "H3", "H26e", "C21f"):
        _, est = measure(ROWS[rid])
        assert est.strategy.activation_checkpointing == "full"
        assert est.strategy.recomputed_layers == 0


def test_one_layer_per_stage_leaves_no_block_to_choose() -> None:
    """With a layer per pipeline stage block recompute is full recompute: not searched."""
    f = replace(_llama3_405b_facts(), pinned={"tensor": 8, "pipeline": 64})
    assert stage_layers(f.layers, 64) == 2
    g = replace(f, layers=64)
    gpu = resolve_gpu("H100")
    links = topology_links(gpu, ROWS["H12"].topology, 8192)
    search = _setup(g, gpu, 8192, links, True)
    assert _block_layers(g, search, _place(g, search, 8, 64, 1), {}) == ()


def test_strategy_record_carries_the_recomputed_layers() -> None:
    st = Strategy(
        data_parallel=64,
        tensor_parallel=8,
        pipeline_parallel=16,
        activation_checkpointing="block",
        recomputed_layers=2,
        layers_per_stage=8,
    )
    record = st.to_dict()
    assert (record["recomputed_layers"], record["layers_per_stage"]) == (2, 8)
    assert record["name"] == "DP64 + TP8 + PP16 + block recompute of 2 of 8 layers per stage"
    plain = Strategy(activation_checkpointing="full").to_dict()
    assert plain["name"] == "DP1 + full recompute" and plain["recomputed_layers"] == 0


def test_a_workload_may_ask_for_block_recompute() -> None:
    raw = copy.deepcopy(ROWS["H12"].workload)
    raw["training"]["activation_checkpointing"] = "block"
    assert train_facts(parse_workload(raw)).recompute_modes == ("block",)
    assert train_facts(parse_workload(ROWS["H12"].workload)).recompute_modes == (
        "none",
        "selective",
        "block",
        "full",
    )


def test_the_mean_layer_under_block_recompute() -> None:
    # 2 of 8 layers keep their input (2·s·h), 6 keep everything (32·s·h): 24.5·s·h on average
    from planner.workload.memory import block_recompute_bytes_per_layer

    assert block_recompute_bytes_per_layer(32.0, 2.0, 2 / 8) == pytest.approx(24.5)
    assert block_recompute_bytes_per_layer(32.0, 2.0, 0.0) == 32.0
    assert block_recompute_bytes_per_layer(32.0, 2.0, 1.0) == 2.0


def test_llama3_405b_steps_within_ten_percent_of_meta() -> None:
    """Dubey et al. 2024 Table 4 (430 and 400 TFLOPS/GPU) and the 405B model card's GPU-hours:
    1.27-1.29x under full recompute, which the search had to choose before block recompute."""
    for rid in ("H12", "H13", "H14"):
        row = ROWS[rid]
        assert 0.9 <= measure(row)[0] / row.published <= 1.1
