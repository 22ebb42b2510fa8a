"""Context parallelism (``training.parallelism.context``): each sequence split over ``cp`` GPUs,
keys and values passed round a ring (Megatron-Core context parallel, torchtitan's)."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from planner.cli import main
from planner.errors import ConfigError
from planner.gpu_specs import resolve_gpu
from planner.schema import Fabric, Interconnect
from planner.workload import Topology, estimate, parse_workload
from planner.workload import efficiency as eff
from planner.workload.estimate_types import topology_links
from planner.workload.parallel import Links
from planner.workload.strategy import (
    _activation_bytes,
    _place,
    _ring_seconds,
    _setup,
    context_sizes,
    exposed_ring_seconds,
    ring_step_bytes,
)
from planner.workload.training import train_facts

GB = 1e9
NODE = Links(
    gpus_per_node=8, intra_bytes_per_s=200 * GB, intra_kind="nvlink", node_bytes_per_s=400 * GB
)
H100 = resolve_gpu("H100")
DGX = Topology(gpus_per_node=8, interconnect=Interconnect.NVSWITCH, fabric=Fabric.INFINIBAND)


def _raw(seq: int = 65536, **training: Any) -> dict[str, Any]:
    # Llama 3 8B: 32 layers, hidden 4,096, 32 heads of 128, 8 key/value heads
    return {
        "name": "long",
        "kind": "pretrain",
        "model": {"preset": "llama-3-8b", "seq_len": seq},
        "data": {"tokens": 1.0e9},
        "training": {"framework": "megatron", "global_batch_tokens": 4194304, **training},
    }


# -- memory ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cp", [2, 4, 8])
@pytest.mark.parametrize("mode", ["none", "full"])
def test_each_rank_keeps_one_cp_th_of_the_activations(cp: int, mode: str) -> None:
    f = train_facts(parse_workload(_raw()))
    whole, traffic = _activation_bytes(f, 2, 1, mode, True)
    split, split_traffic = _activation_bytes(f, 2, 1, mode, True, cp=cp)
    assert split == pytest.approx(whole / cp)
    assert split_traffic == pytest.approx(traffic / cp)


def test_activations_without_recompute_by_hand() -> None:
    # no recompute, flash: L x (bytes per layer per sequence) + logits, over tp x cp
    f = train_facts(parse_workload(_raw()))
    by_hand = (32 * f.act_base_per_seq_layer + f.logits_per_seq) / (2 * 4)
    assert _activation_bytes(f, 2, 1, "none", True, cp=4)[0] == pytest.approx(by_hand)


def test_model_states_are_replicated_over_cp_and_zero_shards_over_dp_x_cp() -> None:
    # 16 GPUs as TP2 x CP4 x DP2: the weights split over tp only; ZeRO-1 optimizer states over
    # tp x (dp x cp) = 2 x 8
    f = train_facts(parse_workload(_raw()))
    s = _setup(f, H100, 16, topology_links(H100, DGX, 16), True)
    lay = _place(f, s, 2, 1, 1, cp=4)
    assert lay.dp == 2 and lay.cp == 4
    assert lay.weights == pytest.approx(f.params * f.state.weights / 2)
    assert lay.optimizer == pytest.approx(f.params * f.state.optimizer / (2 * 8))


# -- the ring -----------------------------------------------------------------------------------------


def test_ring_step_bytes_by_hand() -> None:
    # K and V of 16,384 tokens, 8 heads x 128 = 1,024 wide, 2 bytes, over TP2: 2 x 16,384 x 2 x 512
    f = train_facts(parse_workload(_raw()))
    assert f.kv_width == 1024 and f.kv_heads == 8
    assert ring_step_bytes(f, 16384, 2) == 2 * 16384 * 2 * 512
    # TP16 holds at least one key/value head per rank: 8 heads cannot split 16 ways
    assert ring_step_bytes(f, 16384, 16) == ring_step_bytes(f, 16384, 8)


def test_ring_seconds_inside_a_node_by_hand() -> None:
    # TP2 x CP4 = 8 GPUs, one node, NVLink 200 GB/s: per layer 3 passes (K,V forward; K,V and
    # dK,dV backward) x (cp - 1) = 9 steps of one 16,384-token chunk, 32 layers
    f = train_facts(parse_workload(_raw()))
    s = _setup(f, H100, 16, NODE, True)
    lay = _place(f, s, 2, 1, 1, cp=4)
    chunk = 2 * 16384 * 2 * 512
    by_hand = 9 * 32 * (chunk / (200 * GB) + eff.COLLECTIVE_LATENCY_S["nvlink"])
    assert _ring_seconds(f, s, lay, 1, 0.0) == pytest.approx(by_hand)
    # full recompute passes K and V round once more in the recomputed forward
    assert _ring_seconds(f, s, lay, 1, 1.0) == pytest.approx(by_hand * 4 / 3)


def test_ring_across_nodes_uses_a_gpus_share_of_the_network() -> None:
    # TP8 x CP2: the ring's neighbour is in the next node, at 400 / 8 = 50 GB/s per GPU, each step
    # paying the slowest in-node launch latency (PCIe's)
    f = train_facts(parse_workload(_raw()))
    s = _setup(f, H100, 16, NODE, True)
    lay = _place(f, s, 8, 1, 1, cp=2)
    chunk = 2 * 32768 * 2 * 128
    by_hand = 3 * 32 * (chunk / (50 * GB) + eff.COLLECTIVE_LATENCY_S["pcie"])
    assert _ring_seconds(f, s, lay, 1, 0.0) == pytest.approx(by_hand)


@pytest.mark.parametrize(
    ("ring", "attention", "cp", "exposed"),
    [
        (1.0, 0.8, 4, 0.4),  # 3 of 4 attention steps (0.6 s) hide 0.6 of the 1.0 s ring
        (0.5, 0.8, 4, 0.0),  # the attention outlasts the ring
        (1.0, 0.8, 2, 0.6),  # one of two steps overlaps: 0.4 s hidden
        (1.0, 5.0, 1, 0.0),  # no ring without context parallelism
    ],
)
def test_what_shows_of_the_ring(ring: float, attention: float, cp: int, exposed: float) -> None:
    assert exposed_ring_seconds(ring, attention, cp) == pytest.approx(exposed)


# -- the search ---------------------------------------------------------------------------------------


def test_a_pinned_context_size_is_the_strategys() -> None:
    spec = parse_workload(_raw(parallelism={"tensor": 2, "context": 4}))
    est = estimate(spec, H100, 16, topology=DGX)
    s = est.strategy
    assert est.fits and s.context_parallel == 4 and s.data_parallel == 2
    assert "CP4" in s.name and "context parallel 4 inside a node" in s.reason
    assert s.to_dict()["context_parallel"] == 4


def test_a_long_sequence_searches_context_parallel_and_a_short_one_does_not() -> None:
    long = train_facts(parse_workload(_raw()))
    assert context_sizes(long, 16) == (1, 2, 4, 8, 16)
    short = train_facts(parse_workload(_raw(seq=4096)))
    assert context_sizes(short, 16) == (1,)
    est = estimate(parse_workload(_raw()), H100, 16, topology=DGX)
    assert est.fits and est.strategy.context_parallel > 1


def test_a_stack_without_context_parallel_is_not_searched_with_it() -> None:
    spec = parse_workload(_raw(framework="pytorch-fsdp"))
    assert context_sizes(train_facts(spec), 16) == (1,)


def test_context_parallel_halves_the_activations_in_the_breakdown() -> None:
    one = estimate(
        parse_workload(_raw(parallelism={"tensor": 8, "context": 1, "micro_batch": 1})),
        H100,
        16,
        topology=DGX,
    )
    two = estimate(
        parse_workload(_raw(parallelism={"tensor": 8, "context": 2, "micro_batch": 1})),
        H100,
        16,
        topology=DGX,
    )
    assert two.strategy.activation_checkpointing == one.strategy.activation_checkpointing
    ratio = two.memory_breakdown_gib["activations"] / one.memory_breakdown_gib["activations"]
    assert ratio == pytest.approx(0.5)


# -- validation ---------------------------------------------------------------------------------------


def test_the_load_balanced_split_needs_two_chunks_per_rank() -> None:
    with pytest.raises(ConfigError, match=r"into 6 equal chunks .* use context 2 or 4") as err:
        parse_workload(_raw(seq=8192, parallelism={"context": 3}))
    assert err.value.key_path == "training.parallelism.context"


@pytest.mark.parametrize("framework", ["hf-trainer", "deepspeed", "pytorch-fsdp", "llm.c"])
def test_stacks_without_context_parallel_refuse_it(framework: str) -> None:
    with pytest.raises(ConfigError, match=r"has no context parallelism; set training\.framework"):
        parse_workload(_raw(framework=framework, parallelism={"context": 2}))


def test_auto_for_fine_tuning_with_a_context_pin_takes_a_stack_that_splits_sequences() -> None:
    # the Trainer, auto's usual choice for a fine-tune, has no context parallelism: auto picks a
    # stack that runs the pin (eager DeepSpeed has none either, so the fused stacks) and says why
    raw = _raw(parallelism={"context": 2})
    raw["kind"] = "finetune"
    del raw["training"]["framework"]
    est = estimate(parse_workload(raw), H100, 8, topology=DGX)
    assert est.strategy.context_parallel == 2
    line = next(a for a in est.assumptions if a.startswith("software stack:"))
    assert line.startswith(
        "software stack: any (auto for fine-tuning with a pinned layout hf-trainer does not run"
    )


def test_context_one_needs_no_stack() -> None:
    assert parse_workload(_raw(framework="hf-trainer", parallelism={"context": 1}))


def test_a_count_that_cannot_hold_the_pinned_layout_names_the_context_size() -> None:
    spec = parse_workload(_raw(parallelism={"tensor": 2, "context": 4}))
    est = estimate(spec, H100, 12, topology=DGX)
    assert not est.fits
    assert (
        "tensor parallel 2 x context parallel 4 needs a multiple of 8 GPUs" in est.strategy.reason
    )


def test_the_cli_refuses_a_count_the_pinned_context_cannot_hold(tmp_path: Any) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(
        "name: x\nkind: pretrain\nmodel: {preset: llama-3-8b, seq_len: 65536}\n"
        "data: {tokens: 1e9}\ntraining: {framework: megatron, parallelism: {context: 4}}\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["estimate", str(path), "--gpu", "H100", "--count", "6"])
    assert result.exit_code == 2
    assert "training.parallelism.context" in result.output
    assert "multiple of 4" in result.output


def test_a_context_parallel_ring_inside_a_node_wants_nvswitch() -> None:
    """The KV ring of CP4 runs between 4 GPUs of a node, as a TP4 group's all-reduces do."""
    from planner.workload.strategy import Strategy
    from planner.workload.training import interconnect_required

    topo = Topology(gpus_per_node=8, interconnect=Interconnect.NVSWITCH, fabric=Fabric.INFINIBAND)
    ring = Strategy(data_parallel=2, context_parallel=4, gpus_per_piece=8)
    assert interconnect_required(ring, topo) is Interconnect.NVSWITCH
    pair = Strategy(data_parallel=4, context_parallel=2, gpus_per_piece=8)
    assert interconnect_required(pair, topo) is Interconnect.NVLINK


def test_an_fp32_ring_carries_four_bytes_a_value() -> None:
    """K and V travel in the attention's precision: 2 bytes in bf16 (and under fp8 recipes, whose
    attention runs in bf16), 4 in fp32."""
    bf16 = train_facts(parse_workload(_raw()))
    fp32 = train_facts(parse_workload(_raw(precision="fp32")))
    assert ring_step_bytes(fp32, 1024, 1) == pytest.approx(2 * ring_step_bytes(bf16, 1024, 1))


def test_the_search_puts_idle_data_parallel_ranks_to_work_with_a_wider_context_split() -> None:
    """Llama 2 70B at 131,072 tokens on 1,024 H100: the default global batch holds far fewer
    sequences than 1,024 GPUs have data-parallel ranks at CP8 inside a node, so a layout that merely
    fits with CP8 leaves most ranks idle.  The search must go on to context splits across nodes:
    the unpinned estimate is within 10% of Meta-style TP8 x CP32 pinned by hand (it stops at the
    first split across nodes that fits with every rank busy, TP8 x CP8 with a little recompute, 3%
    slower; it was about 5x slower when a fitting in-node split stopped the search)."""

    def raw(**parallelism: int) -> dict[str, Any]:
        return {
            "name": "long-70b",
            "kind": "pretrain",
            "model": {"preset": "llama-2-70b", "seq_len": 131072},
            "data": {"tokens": 1.0e11},
            "training": {"framework": "megatron", "parallelism": parallelism},
        }

    searched = estimate(parse_workload(raw()), H100, 1024)
    pinned = estimate(parse_workload(raw(tensor=8, context=32)), H100, 1024)
    assert searched.fits and pinned.fits
    assert searched.wall_hours <= pinned.wall_hours * 1.1
    assert searched.strategy.data_parallel * searched.strategy.context_parallel > 1
