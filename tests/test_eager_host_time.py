"""The host of an eager stack dispatches every kernel of a micro-batch while the GPU runs it
(issue 14): a small model on a fast GPU waits on its host, so a micro-batch takes the longer of the
two (frameworks.yaml, eager_host_ms_per_layer; measured on an H100 machine: a 12-layer BERT step
with negligible GPU work took 37.1 ms, BERT-base fp16 at 32 x 128 tokens 33.7 ms with the GPU busy
20.5 ms of it, and its fp32 run, GPU-bound, 62.4 ms)."""

from __future__ import annotations

from typing import Any

import pytest

from planner.gpu_specs import resolve_gpu
from planner.schema import Fabric, Interconnect
from planner.workload import estimate, parse_workload
from planner.workload import strategy as st
from planner.workload.estimate_types import Topology, topology_links
from planner.workload.frameworks import load_frameworks
from planner.workload.training import train_facts

H100 = resolve_gpu("H100")
ONE = Topology(gpus_per_node=1, interconnect=Interconnect.PCIE, fabric=Fabric.ETHERNET)
STEPS = 1000


def bert_base(precision: str, framework: str = "hf-trainer", **training: Any) -> Any:
    """BERT-base sequence classification at 32 x 128 tokens, one micro-batch a step."""
    return parse_workload(
        {
            "name": "bert-base-cls",
            "kind": "finetune",
            "model": {"preset": "bert-base", "seq_len": 128},
            "data": {"samples": 32 * STEPS, "tokens_per_sample": 128},
            "training": {
                "precision": precision,
                "framework": framework,
                "optimizer": "adamw",
                "activation_checkpointing": "none",
                "flash_attention": False,
                "global_batch_samples": 32,
                "parallelism": {"micro_batch": 32, "zero": 0, "tensor": 1, "pipeline": 1},
                **training,
            },
        }
    )


def step_ms(spec: Any) -> float:
    est = estimate(spec, H100, 1, topology=ONE)
    return est.time_breakdown_hours["training steps"] * 3600e3 / STEPS


def test_the_eager_stacks_dispatch_on_the_host_and_the_fused_ones_do_not() -> None:
    profiles = load_frameworks()
    eager = {name for name, p in profiles.items() if p.eager_host_s_per_layer > 0}
    assert eager == {"hf-trainer", "deepspeed", "pytorch-fsdp", "torchtune"}
    assert profiles["hf-trainer"].eager_host_s_per_layer == pytest.approx(37.1e-3 / 12, rel=0.01)


def test_host_time_is_per_layer_and_micro_batch_with_the_recomputed_forward_again() -> None:
    f = train_facts(bert_base("fp16"))
    lay = next(
        st._layouts(f, st._setup(f, H100, 1, topology_links(H100, ONE, 1), flash=False), 1, 1)
    )
    per_layer = load_frameworks()["hf-trainer"].eager_host_s_per_layer
    assert st.eager_host_seconds(f, lay, 0.0) == pytest.approx(12 * per_layer)
    # full recompute dispatches every forward once more: a third of a layer's kernels
    assert st.eager_host_seconds(f, lay, 1.0) == pytest.approx(12 * per_layer * (1 + 1 / 3))
    megatron = train_facts(bert_base("fp16", framework="megatron"))
    assert st.eager_host_seconds(megatron, lay, 0.0) == 0.0


def test_bert_base_fp16_on_an_h100_waits_on_its_host_and_fp32_does_not() -> None:
    # measured on the H100: fp16 33.7-38.9 ms a step (host-bound), fp32 62.4-65.0 ms (GPU-bound)
    host_ms = 12 * load_frameworks()["hf-trainer"].eager_host_s_per_layer * 1e3
    fp16 = step_ms(bert_base("fp16"))
    # the host's floor, then the optimizer step's own GPU time (1.5 ms here)
    assert host_ms <= fp16 <= host_ms * 1.06
    assert 33.7 * 0.9 <= fp16 <= 38.9 * 1.1
    fp32 = step_ms(bert_base("fp32"))
    assert fp32 > 1.5 * host_ms  # the GPU sets an fp32 step: the floor does not move it
    assert 62.4 * 0.9 <= fp32 <= 65.0 * 1.1
