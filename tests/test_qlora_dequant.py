"""QLoRA multiplies by a 16-bit copy of each 4-bit weight made on the fly (bitsandbytes' MatMul4Bit
dequantises the whole weight before the forward matmul and again for the backward input gradient):
every micro-batch streams 4.127 bits read and 2 bytes written per quantised parameter, two times,
three where the forward pass is recomputed, whatever the micro-batch's tokens (issue 14)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from planner.gpu_specs import resolve_gpu
from planner.schema import Fabric, Interconnect
from planner.workload import efficiency as eff
from planner.workload import parse_workload
from planner.workload import strategy as st
from planner.workload.estimate_types import Topology, topology_links
from planner.workload.training import train_facts

L4 = resolve_gpu("L4")
ONE = Topology(gpus_per_node=1, interconnect=Interconnect.PCIE, fabric=Fabric.ETHERNET)


def llama_qlora(method: str = "qlora", recompute: str = "full", micro_batch: int = 1) -> Any:
    return parse_workload(
        {
            "name": "qlora",
            "kind": "finetune",
            "model": {"preset": "llama-2-7b", "seq_len": 1024},
            "data": {"samples": 1000, "tokens_per_sample": 1024},
            "training": {
                "precision": "bf16",
                "method": method,
                "lora_rank": 16,
                "lora_targets": "all-linear",
                "optimizer": "adamw",
                "activation_checkpointing": recompute,
                "global_batch_samples": micro_batch,
                "parallelism": {"micro_batch": micro_batch, "zero": 0, "tensor": 1, "pipeline": 1},
            },
        }
    )


def test_the_quantised_parameters_are_the_frozen_linear_weights() -> None:
    f = train_facts(llama_qlora())
    # Llama 2 7B: 6.74e9 parameters, 32,000 x 4,096 embedding and an untied output head
    frozen = f.params - f.trainable
    assert f.quantised_params == pytest.approx(frozen - 2 * 32000 * 4096)
    assert train_facts(llama_qlora("lora")).quantised_params == 0.0


def test_each_micro_batch_streams_the_dequantised_copies() -> None:
    f = train_facts(llama_qlora())
    s = st._setup(f, L4, 1, topology_links(L4, ONE, 1), flash=True)
    lay = next(st._layouts(f, s, 1, 1))
    per_pass = (4.127 / 8 + 2.0) * f.quantised_params
    bw = L4.memory_bandwidth_gb_per_s * 1e9 * eff.MEMORY_BW_FRACTION
    assert st.qlora_dequant_seconds(f, s, lay, 0.0) == pytest.approx(2 * per_pass / bw)
    # full recompute dequantises for the forward pass again
    assert st.qlora_dequant_seconds(f, s, lay, 1.0) == pytest.approx(3 * per_pass / bw)
    assert st.qlora_dequant_seconds(replace(f, quantised_params=0.0), s, lay, 1.0) == 0.0


def test_the_cost_is_per_micro_batch_not_per_token() -> None:
    links = topology_links(L4, ONE, 1)
    steps = {}
    for b in (1, 2):
        f = train_facts(llama_qlora(micro_batch=b))
        best, _ = st.search_training(f, L4, 1, links, flash=True)
        plain, _ = st.search_training(replace(f, quantised_params=0.0), L4, 1, links, flash=True)
        assert best is not None and plain is not None
        steps[b] = best.step_s - plain.step_s
    # the same seconds a step whether the micro-batch holds one sequence or two
    assert steps[1] > 0.1
    assert steps[2] == pytest.approx(steps[1], rel=1e-6)


def test_a_partly_filled_last_micro_batch_still_dequantises_everything() -> None:
    # a global batch of 3 in micro-batches of 2: two micro-batches, each dequantising every
    # weight, the second with one sequence
    links = topology_links(L4, ONE, 1)
    raw = llama_qlora(micro_batch=2).model_dump(mode="json", exclude_none=True)
    raw["training"]["global_batch_samples"] = 3
    f = train_facts(parse_workload(raw))
    best, _ = st.search_training(f, L4, 1, links, flash=True)
    plain, _ = st.search_training(replace(f, quantised_params=0.0), L4, 1, links, flash=True)
    assert best is not None and plain is not None
    assert best.strategy.grad_accumulation == 2
    s = st._setup(f, L4, 1, links, flash=True)
    lay = next(st._layouts(f, s, 1, 1))
    per_micro_batch = st.qlora_dequant_seconds(f, s, lay, 1.0)
    assert best.step_s - plain.step_s == pytest.approx(2 * per_micro_batch, rel=1e-6)
