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
from planner.workload.spec import workload_framework
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


@pytest.mark.parametrize("framework", ["deepspeed", "hf-trainer"])
def test_autotp_with_nvme_offload_is_refused(framework: str) -> None:
    # ZeRO-Infinity's NVMe offload is ZeRO-3, which DeepSpeed's AutoTP does not combine with; the
    # Hugging Face Trainer reaches NVMe through DeepSpeed
    with pytest.raises(ConfigError) as e:
        parse_workload(_llama(framework, offload="nvme", parallelism={"tensor": 2}))
    assert e.value.key_path == "training.offload"
    message = str(e.value)
    assert "nvme runs under DeepSpeed ZeRO-3" in message
    assert "drop parallelism.tensor or use offload: optimizer" in message
    # both fixes run
    parse_workload(_llama(framework, offload="nvme"))
    parse_workload(_llama(framework, offload="optimizer", parallelism={"tensor": 2}))
    # auto gives way to a stack that runs both
    auto = parse_workload(_llama("auto", offload="nvme", parallelism={"tensor": 2}))
    assert workload_framework(auto)[0].name == "any"


def test_recipes_keep_their_usual_layouts_unless_pinned() -> None:
    # DeepSpeed's and the Hugging Face stack's splits, Megatron-FSDP's sharding: only where pinned
    for framework in ("deepspeed", "hf-trainer", "torchtune"):
        f = train_facts(parse_workload(_llama(framework)))
        _, tps, pps, _ = st._choices(f, 16, 8, True)
        assert (tps, pps) == ((1,), (1,))
        pinned = train_facts(parse_workload(_llama(framework, parallelism={"tensor": 2})))
        assert st._choices(pinned, 16, 8, True)[1] == (2,)
    # a stack whose recipes split layers searches the splits
    _, tps, pps, _ = st._choices(train_facts(parse_workload(_llama("megatron"))), 16, 8, True)
    assert len(tps) > 1 and len(pps) > 1
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
    assert f.framework is not None
    sh = f.seq * f.hidden
    # eager Llama layers under bf16, no dropout: 8 bytes of norm and linear inputs and the
    # RMSNorm's fp32 copies (2 norms x 2 extra bytes) per s.b.h
    assert f.act_replicated_per_seq_layer == pytest.approx(12.0 * sh)
    # the same stack with sequence parallelism: nothing stays whole
    sp = dataclasses.replace(
        f,
        act_replicated_per_seq_layer=0.0,
        framework=dataclasses.replace(f.framework, sequence_parallel=True),
    )
    act, traffic = st._activation_bytes(f, 2, 1, "none", True)
    act_sp, traffic_sp = st._activation_bytes(sp, 2, 1, "none", True)
    # each of the L layers keeps its whole share on both ranks: half of it more than split
    assert act - act_sp == pytest.approx(f.layers * 12.0 * sh / 2)
    assert traffic - traffic_sp == pytest.approx(f.layers * 12.0 * sh / 2)
    # full recompute: the stored layer inputs (2 bytes per s.h) stay whole too; the peak's larger
    # term is the logits, gathered whole either way
    assert f.logits_per_seq > f.act_base_per_seq_layer
    full = st._activation_bytes(f, 2, 1, "full", True)[0]
    full_sp = st._activation_bytes(sp, 2, 1, "full", True)[0]
    assert full - full_sp == pytest.approx(f.layers * 2.0 * sh / 2)
    # the gathered logits: whole on each rank where Megatron's vocabulary-parallel loss keeps half
    vp = dataclasses.replace(
        f, framework=dataclasses.replace(f.framework, vocab_parallel_logits=True)
    )
    act_vp = st._activation_bytes(vp, 2, 1, "none", True)[0]
    assert act - act_vp == pytest.approx(f.logits_per_seq / 2)
    # one GPU: nothing is split, nothing differs
    assert st._activation_bytes(f, 1, 1, "none", True) == st._activation_bytes(
        sp, 1, 1, "none", True
    )
    # a stack with sequence parallelism counts none
    assert train_facts(parse_workload(_llama("megatron"))).act_replicated_per_seq_layer == 0.0
