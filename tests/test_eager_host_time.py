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
from tests.test_fsdp_frozen_gradients import lora

H100 = resolve_gpu("H100")
ONE = Topology(gpus_per_node=1, interconnect=Interconnect.PCIE, fabric=Fabric.ETHERNET)
NVLINK_NODE = Topology(gpus_per_node=8, interconnect=Interconnect.NVSWITCH, fabric=Fabric.ETHERNET)
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
    assert eager == {
        "hf-trainer",
        "deepspeed",
        "apex",
        "pytorch-fsdp",
        "lightning",
        "torchtune",
        "nanotron",
    }
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


def llama7b_lora(targets: str, framework: str = "hf-trainer") -> Any:
    """PEFT LoRA r16 on the Llama-2-7B shape, 1 x 512 tokens a step (bf16 autocast)."""
    return parse_workload(
        {
            "name": "llama7b-lora",
            "kind": "finetune",
            "model": {"preset": "llama-2-7b", "seq_len": 512},
            "data": {"samples": STEPS, "tokens_per_sample": 512},
            "training": {
                "precision": "bf16",
                "framework": framework,
                "method": "lora",
                "lora_rank": 16,
                "lora_targets": targets,
                "optimizer": "adamw",
                "activation_checkpointing": "none",
                "global_batch_samples": 1,
                "parallelism": {"micro_batch": 1, "zero": 0, "tensor": 1, "pipeline": 1},
            },
        }
    )


def test_a_gated_layer_and_each_lora_module_add_their_own_dispatch() -> None:
    bert_layer = load_frameworks()["hf-trainer"].eager_host_s_per_layer
    assert train_facts(bert_base("fp16")).eager_host_s_per_layer == pytest.approx(bert_layer)
    llama = bert_layer * 1.25  # 155 kernels a Llama layer against BERT's 123
    module = bert_layer * 0.135  # a LoRA-adapted linear: dropout, A, B, scale, add, both ways
    qv = train_facts(llama7b_lora("qv")).eager_host_s_per_layer
    assert qv == pytest.approx(llama + 2 * module)
    every = train_facts(llama7b_lora("all-linear")).eager_host_s_per_layer
    assert every == pytest.approx(llama + 7 * module)
    assert train_facts(llama7b_lora("qv", framework="megatron")).eager_host_s_per_layer == 0.0


def test_a_7b_lora_step_of_one_short_sequence_on_an_h100_waits_on_its_host() -> None:
    # measured: 174.6 ms (q, v) and 241.6 ms (every linear) a step with the GPU busy 43 and 61 ms
    qv, every = step_ms(llama7b_lora("qv")), step_ms(llama7b_lora("all-linear"))
    assert 174.6 * 0.8 <= qv <= 174.6 * 1.2
    assert 241.6 * 0.8 <= every <= 241.6 * 1.2
    assert every - qv == pytest.approx(
        32 * 5 * 0.135 * load_frameworks()["hf-trainer"].eager_host_s_per_layer * 1e3, rel=0.02
    )


def test_a_partly_filled_last_micro_batch_still_waits_on_the_whole_dispatch() -> None:
    # review: 33 sequences at micro-batch 32 dispatch two micro-batches; the second's GPU work is
    # a 32nd, its host time whole, so the step costs two host floors (was 1 + 1/32 of one)
    host_ms = 12 * load_frameworks()["hf-trainer"].eager_host_s_per_layer * 1e3
    one = step_ms(bert_base("fp16"))
    # 33 sequences a step: the same samples make 32/33 as many steps
    two = step_ms(bert_base("fp16", global_batch_samples=33)) * 33 / 32
    assert two >= 2 * host_ms
    assert two - one == pytest.approx(host_ms, rel=0.05)


def smollm_135m(framework: str) -> Any:
    """SmolLM-135M's pre-training shape (hidden 576, 30 layers), 8 x 2,048 tokens a micro-batch."""
    return parse_workload(
        {
            "name": "smollm-135m",
            "kind": "pretrain",
            "model": {
                "arch": "decoder",
                "params": 134.5e6,
                "layers": 30,
                "hidden": 576,
                "heads": 9,
                "kv_heads": 3,
                "ffn": 1536,
                "mlp": "gated",
                "vocab": 49152,
                "seq_len": 2048,
                "tied_embeddings": True,
            },
            "data": {"tokens": 8 * 2048 * STEPS},
            "training": {
                "precision": "bf16",
                "framework": framework,
                "optimizer": "adamw",
                "global_batch_tokens": 8 * 2048,
                "parallelism": {"micro_batch": 8, "zero": 0, "tensor": 1, "pipeline": 1},
            },
        }
    )


def test_nanotron_dispatches_a_narrow_model_from_its_host() -> None:
    # nanotron runs eager modules (no torch.compile): a micro-batch of a 30-layer model takes at
    # least 30 layers' host dispatch, where the compiled torchtitan stack is bound by the GPU
    per_layer_ms = load_frameworks()["nanotron"].eager_host_s_per_layer * 1e3
    nanotron = step_ms(smollm_135m("nanotron"))
    compiled = step_ms(smollm_135m("torchtitan"))
    assert nanotron >= 30 * per_layer_ms
    assert compiled < 30 * per_layer_ms < nanotron
    assert load_frameworks()["nanotron"].zero == (0, 1)


def llama7b_lora_fsdp(zero: int, framework: str = "lightning") -> Any:
    """LitGPT's LoRA r8 on Llama 2 7B (q, v), one sample a rank, layers recomputed."""
    return lora("llama-2-7b", framework, zero, batch=2)


def test_fsdp_hooks_add_host_time_per_wrapped_layer() -> None:
    # ZeRO-3 runs three ~1 ms hooks per wrapped layer and micro-batch on the host (pre-forward and
    # pre-backward unshard, post-backward reduce-scatter): 32 layers x 3 ms beyond plain DDP
    links = topology_links(H100, NVLINK_NODE, 2)
    per_zero = {}
    for zero in (0, 3):
        f = train_facts(llama7b_lora_fsdp(zero))
        s = st._setup(f, H100, 2, links, flash=True)
        lay = next(lay for lay in st._layouts(f, s, 1, 1) if lay.zero == zero)
        per_zero[zero] = st.eager_host_seconds(f, lay, 1.0)
    assert per_zero[3] - per_zero[0] == pytest.approx(32 * 3e-3)
    assert per_zero[0] == pytest.approx(
        32 * train_facts(llama7b_lora_fsdp(0)).eager_host_s_per_layer * (1 + 1 / 3)
    )
    # a compiled stack dispatches no eager layers, and so no hooks on the host either
    titan = train_facts(llama7b_lora_fsdp(3, framework="torchtitan"))
    s = st._setup(titan, H100, 2, links, flash=True)
    lay = next(lay for lay in st._layouts(titan, s, 1, 1) if lay.zero == 3)
    assert st.eager_host_seconds(titan, lay, 1.0) == 0.0
