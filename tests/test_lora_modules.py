"""The linear layers PEFT adapts in one transformer layer, by ``training.lora_targets`` and the
model's projections (efficiency.lora_modules): each adapted module's kernels cost an eager stack
its own host dispatch (efficiency.LORA_MODULE_HOST_SHARE), so a model whose attention reads its
input through one fused projection (GPT-2's c_attn) dispatches fewer of them than Llama."""

from __future__ import annotations

from typing import Any

import pytest

from planner.workload import efficiency as eff
from planner.workload import parse_workload
from planner.workload.frameworks import load_frameworks
from planner.workload.training import eager_host_per_layer


@pytest.mark.parametrize(
    ("fused_qkv", "gated", "counts"),
    [
        (False, True, (7, 4, 2)),  # Llama: q, k, v, o, gate, up, down
        (True, False, (4, 2, 1)),  # GPT-2: c_attn, c_proj, c_fc, mlp.c_proj
        (False, False, (6, 4, 2)),  # BERT: query, key, value, output, intermediate, output
        (True, True, (4, 2, 1)),  # Phi-3: qkv_proj, o_proj, gate_up_proj, down_proj
    ],
    ids=["llama", "gpt2", "bert", "phi3"],
)
def test_modules_by_target_and_projections(
    fused_qkv: bool, gated: bool, counts: tuple[int, int, int]
) -> None:
    got = tuple(
        eff.lora_modules(t, fused_qkv=fused_qkv, gated=gated)
        for t in ("all-linear", "attention", "qv")
    )
    assert got == counts


def lora(model: Any, targets: str = "all-linear") -> Any:
    return parse_workload(
        {
            "name": "lora",
            "kind": "finetune",
            "model": model,
            "data": {"tokens": 1.0e6},
            "training": {"method": "lora", "lora_targets": targets, "framework": "hf-trainer"},
        },
        file="lora.yaml",
    )


def test_the_host_dispatches_each_adapted_module() -> None:
    stack = load_frameworks()["hf-trainer"]
    host = stack.eager_host_s_per_layer
    share = eff.LORA_MODULE_HOST_SHARE
    # GPT-2 (a plain MLP, its q, k and v one c_attn): a BERT layer's dispatch and 4 modules'
    assert eager_host_per_layer(lora("gpt2"), stack) == pytest.approx(host * (1 + 4 * share))
    # Llama: a quarter more for its gated layer, and 7 modules
    llama = eager_host_per_layer(lora("llama-2-7b"), stack)
    assert llama == pytest.approx(host * (eff.GATED_LAYER_HOST_FACTOR + 7 * share))
    # a full fine-tune adapts nothing
    full = parse_workload(
        {"name": "f", "kind": "finetune", "model": "gpt2", "data": {"tokens": 1.0e6}},
        file="f.yaml",
    )
    assert eager_host_per_layer(full, stack) == pytest.approx(host)
