"""What each stack runs together (issue 14): DeepSpeed's pipeline module with ZeRO 0 or 1 only and
its AutoTP without ZeRO-3, plain 1F1B there; Megatron-FSDP's ZeRO-2/3 only where pinned; the
splits a stack's usual recipes leave off are tried only where pinned; tensor parallelism without
sequence parallelism keeps the norms' inputs whole on every rank (Korthikanti et al. 2022 eq. 3)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import planner
from planner.errors import ConfigError
from planner.workload import memory as mem
from planner.workload import parse_workload
from planner.workload import strategy as st
from planner.workload.frameworks import load_frameworks
from planner.workload.training import train_facts


def _bloom(framework: str, **parallelism: int) -> dict[str, Any]:
    """BLOOM 176B as trained (Megatron-DeepSpeed: TP4 PP12, ZeRO-1, micro-batch 2)."""
    return {
        "name": "bloom",
        "kind": "pretrain",
        "model": {
            "arch": "decoder",
            "params": 176.2e9,
            "layers": 70,
            "hidden": 14336,
            "heads": 112,
            "vocab": 250880,
            "seq_len": 2048,
            "dropout": 0.0,
        },
        "data": {"tokens": 366e9},
        "training": {
            "precision": "bf16",
            "framework": framework,
            "global_batch_tokens": 4194304,
            "activation_checkpointing": "full",
            "parallelism": {"tensor": 4, "pipeline": 12, "micro_batch": 2, **parallelism},
        },
    }


def _llama(framework: str, **training: Any) -> dict[str, Any]:
    return {
        "name": "t",
        "kind": "finetune",
        "model": "llama-2-7b",
        "data": {"tokens": 1e7},
        "training": {"method": "full", "framework": framework, **training},
    }


def test_deepspeed_runs_a_3d_layout_with_zero_1_and_plain_1f1b() -> None:
    ds = planner.estimate(parse_workload(_bloom("deepspeed", zero=1)), "A100-80GB", 384)
    s = ds.strategy
    assert (s.tensor_parallel, s.pipeline_parallel, s.zero_stage) == (4, 12, 1)
    assert s.virtual_stages == 1  # DeepSpeed's pipeline engine has no interleaved schedule
    meg = planner.estimate(parse_workload(_bloom("megatron", zero=1)), "A100-80GB", 384)
    assert meg.strategy.virtual_stages > 1  # Megatron interleaves: a smaller bubble
    assert ds.gpu_hours > meg.gpu_hours


@pytest.mark.parametrize("zero", [2, 3])
def test_deepspeed_refuses_zero_2_and_3_with_a_pipeline(zero: int) -> None:
    with pytest.raises(ConfigError) as e:
        parse_workload(_bloom("deepspeed", zero=zero))
    assert e.value.key_path == "training.parallelism.zero"
    message = str(e.value)
    assert (
        "framework deepspeed runs tensor parallel 4 and pipeline parallel 12 with ZeRO stages "
        f"0, 1 only, as modelled here, not ZeRO-{zero}" in message
    )
    runs = sorted(
        n
        for n, p in load_frameworks().items()
        if p.tensor_parallel and p.pipeline_parallel and zero in p.zero_with(tp=4, pp=12)
    )
    assert f"set training.framework to one of {', '.join(runs)}" in message
    assert "deepspeed" not in runs and "megatron" not in runs


def test_autotp_with_nvme_offload_is_refused_on_the_offload() -> None:
    # ZeRO-Infinity's NVMe offload is ZeRO-3, which AutoTP training does not combine with
    with pytest.raises(ConfigError) as e:
        parse_workload(_llama("deepspeed", offload="nvme", parallelism={"tensor": 2}))
    assert e.value.key_path == "training.offload"
    assert "with ZeRO stages 0, 1, 2 only, as modelled here, not offload: nvme" in str(e.value)


def test_recipes_keep_their_usual_layouts_unless_pinned() -> None:
    # DeepSpeed's and the Hugging Face stack's splits, Megatron-FSDP's sharding: only where pinned
    for framework in ("deepspeed", "hf-trainer", "torchtune"):
        est = planner.estimate(parse_workload(_llama(framework)), "H100", 16)
        assert (est.strategy.tensor_parallel, est.strategy.pipeline_parallel) == (1, 1)
    meg = planner.estimate(parse_workload(_llama("megatron")), "A100-40GB", 8)
    assert meg.strategy.zero_stage in (0, 1)
    fsdp = planner.estimate(
        parse_workload(_llama("megatron", parallelism={"zero": 3})), "A100-40GB", 8
    )
    assert fsdp.strategy.zero_stage == 3


def test_replicated_bytes_by_precision() -> None:
    # Korthikanti eq. 3: 4 values of 2 bytes and 2 one-byte masks; fp32 doubles the values; fp8
    # keeps the QKV and MLP-up inputs in 1 byte
    assert mem.replicated_bytes_per_sbh(dropout=True) == 10.0
    assert mem.replicated_bytes_per_sbh(dropout=False, precision="fp32") == 16.0
    assert mem.replicated_bytes_per_sbh(dropout=False, precision="fp8") == 6.0
    assert mem.replicated_bytes_per_sbh(dropout=False, norm_extra_bytes=4.0) == 12.0


def test_tensor_parallel_without_sequence_parallel_keeps_the_norms_whole() -> None:
    spec = parse_workload(_llama("hf-trainer", parallelism={"tensor": 2}))
    f = train_facts(spec)
    # eager Llama layers under bf16, no dropout: 8 bytes of norm and linear inputs and the
    # RMSNorm's fp32 copies (2 norms x 2 extra bytes) per s.b.h
    assert f.act_replicated_per_seq_layer == pytest.approx(12.0 * f.seq * f.hidden)
    split = dataclasses.replace(f, act_replicated_per_seq_layer=0.0)
    for mode, whole in (("none", 12.0), ("full", 2.0)):
        act, traffic = st._activation_bytes(f, 2, 1, mode, True)
        act_sp, traffic_sp = st._activation_bytes(split, 2, 1, mode, True)
        # each of the L layers keeps its whole share on both ranks: half of it more than split
        assert act - act_sp == pytest.approx(f.layers * whole * f.seq * f.hidden / 2)
    assert traffic - traffic_sp == pytest.approx(f.layers * 12.0 * f.seq * f.hidden / 2)
    # one GPU: nothing is split, nothing differs
    assert st._activation_bytes(f, 1, 1, "none", True) == st._activation_bytes(
        split, 1, 1, "none", True
    )
    # a stack with sequence parallelism counts none
    assert train_facts(parse_workload(_llama("megatron"))).act_replicated_per_seq_layer == 0.0
