"""An eager stack runs each elementwise operation of a layer as a kernel of its own, and each reads
its inputs from memory and writes its output back (issue 14): the RMSNorm's fp32 intermediates, the
rotary embedding, the SiLU and product, dropout before the residual add, the attention scores' scale
and mask, LoRA's adapter outputs.  ``efficiency.eager_traffic`` counts those bytes beyond a fused
stack's kernels; the step streams them at the memory bandwidth.  Measured on one H100 (PyTorch 2.11,
transformers 5.17, PEFT, bf16 autocast): a Llama-2-7B-shaped LoRA step on all linear layers at
4 x 2,048 tokens took 832.6 ms with the GPU busy 823.4 ms of it, a TinyLlama-shaped full fine-tune
at 4 x 1,024 tokens 133.8 ms (GPU busy 126.2 ms): GPU-bound steps the matmul time alone left at
0.80 and 0.75 of the measured time."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from planner.gpu_specs import resolve_gpu
from planner.schema import Fabric, Interconnect
from planner.workload import efficiency as eff
from planner.workload import estimate, parse_workload
from planner.workload import strategy as st
from planner.workload.estimate_types import Topology, topology_links
from planner.workload.training import layer_eager_traffic, train_facts

H100 = resolve_gpu("H100")
STEPS = 1000


def llama(framework: str, method: str = "full", targets: str = "all-linear", **model: Any) -> Any:
    """A Llama-2-7B fine-tune at 4 x 2,048 tokens, one micro-batch a step, on ``framework``."""
    training: dict[str, Any] = {
        "precision": "bf16",
        "framework": framework,
        "method": method,
        "optimizer": "adamw",
        "activation_checkpointing": "none",
        "global_batch_samples": 4,
        "parallelism": {"micro_batch": 4, "zero": 0, "tensor": 1, "pipeline": 1},
    }
    if method != "full":
        training |= {"lora_rank": 16, "lora_targets": targets}
    return parse_workload(
        {
            "name": "llama-eager",
            "kind": "finetune",
            "model": {"preset": "llama-2-7b", **model},
            "data": {"samples": 4 * STEPS, "tokens_per_sample": 2048},
            "training": training,
        }
    )


def test_a_post_norm_bert_layer_pays_its_dropout_adds_and_the_scores_scale_and_mask() -> None:
    # BERT-large: hidden 1,024, 16 heads, 512 tokens, dropout on, 16-bit activations
    t = eff.eager_traffic(
        hidden=1024,
        attention_width=1024,
        kv_width=1024,
        mlp_width=4096,
        heads=16,
        seq=512,
        gated=False,
        dropout=True,
        element_bytes=2.0,
    )
    # two dropout-add sites, 2 extra element-passes forward at 2 bytes an element; none backward
    assert t.forward == 2 * 2 * 2 * 1024
    assert t.backward == 0.0
    # the scale and the mask kernels: 4 element-passes forward over 16 x 512 scores per token,
    # the scale's 2 backward (an added mask's gradient passes through)
    assert t.score_forward == 4 * 2 * 16 * 512
    assert t.score_backward == 2 * 2 * 16 * 512
    assert t.per_token(scores=False) == 8192
    assert t.per_token(scores=True) == 8192 + 65536 + 32768
    # full recompute runs the forward kernels again, scores and all
    assert t.per_token(scores=True, recompute_share=1.0) == 2 * (8192 + 65536) + 32768


def test_autocast_runs_the_score_chain_in_fp32_with_a_cast_back() -> None:
    # the same BERT-large layer under eager torch.autocast: beyond the 16-bit chain, per score the
    # fp32 mask add, softmax and dropout and the cast back move 16 bytes forward and 22 backward,
    # of which the activation passes already stream the stored fp32 softmax (7 bytes against 5: 2
    # per pass, one forward, two backward)
    bert = dict(hidden=1024, attention_width=1024, kv_width=1024, mlp_width=4096, heads=16)
    t = eff.eager_traffic(**bert, seq=512, gated=False, dropout=True, element_bytes=2.0)
    scores = 16 * 512
    assert t.autocast_score_forward == (16 - 2) * scores
    assert t.autocast_score_backward == (22 - 2 * 2) * scores
    plain = t.per_token(scores=True)
    # beside the chain, the fp32 residual stream of two norms each read by one projection (the
    # default): 28 + 56 bytes a hidden value (efficiency.autocast_stream_bytes)
    stream = (28 + 56) * 1024
    assert t.per_token(scores=True, autocast=True) == plain + (14 + 18) * scores + stream
    # no scores materialised (a fused attention kernel): no chain
    assert t.per_token(scores=False, autocast=True) == t.per_token(scores=False) + stream
    # without dropout: +12 forward and +18 backward, the stored softmax and cast 6 bytes against 2
    t0 = eff.eager_traffic(**bert, seq=512, gated=False, dropout=False, element_bytes=2.0)
    assert t0.autocast_score_forward == (12 - 4) * scores
    assert t0.autocast_score_backward == (18 - 2 * 4) * scores
    # a decoder casts the probabilities back before its dropout, which runs at 16 bits: +12 and
    # +18, less the stored 7 bytes' 2 per pass
    gpt2 = eff.eager_traffic(
        **bert, seq=512, gated=False, dropout=True, element_bytes=2.0, causal=True
    )
    assert gpt2.autocast_score_forward == (12 - 2) * scores
    assert gpt2.autocast_score_backward == (18 - 2 * 2) * scores
    # a recomputed forward runs the chain again
    assert (
        t0.per_token(scores=True, recompute_share=1.0, autocast=True)
        - t0.per_token(scores=True, recompute_share=1.0)
        == 2 * 8 * scores + 10 * scores + (2 * 28 + 56) * 1024
    )


def bert_large(framework: str) -> Any:
    """BERT-large fine-tuned in fp16 at 4 x 512 tokens on one GPU, eager attention."""
    return parse_workload(
        {
            "name": "bert-amp",
            "kind": "finetune",
            "model": "bert-large",
            "data": {"samples": 4 * STEPS, "tokens_per_sample": 512},
            "training": {
                "precision": "fp16",
                "framework": framework,
                "optimizer": "adamw",
                "flash_attention": False,
                "global_batch_samples": 4,
                "parallelism": {"micro_batch": 4, "zero": 0, "tensor": 1, "pipeline": 1},
            },
        }
    )


def test_the_fp32_score_chain_is_paid_where_the_layout_autocasts() -> None:
    v100 = resolve_gpu("V100-16GB")
    hf, apex = train_facts(bert_large("hf-trainer")), train_facts(bert_large("apex"))
    assert hf.eager_traffic is not None and apex.eager_traffic is not None
    assert hf.autocast_state is not None and apex.autocast_state is None
    t = hf.eager_traffic
    chain = (t.autocast_score_forward + t.autocast_score_backward) * 512 * 24
    chain += (t.autocast_hidden_forward + t.autocast_hidden_backward) * 512 * 24  # the fp32 stream
    assert chain > 0.0
    # the layout passes whether it autocasts; the chain is the difference, per sequence
    assert st._eager_bytes(hf, 1, 1, 1, False, 0.0, True) - st._eager_bytes(
        hf, 1, 1, 1, False, 0.0
    ) == pytest.approx(chain)
    # so the autocast (Hugging Face) step streams it, and apex's 16-bit module does not
    one = Topology(gpus_per_node=1, interconnect=Interconnect.PCIE, fabric=Fabric.ETHERNET)
    links = topology_links(v100, one, 1)
    ac, _ = st.search_training(hf, v100, 1, links, flash=False)
    assert ac is not None
    no_chain = replace(
        hf,
        eager_traffic=replace(
            t,
            autocast_score_forward=0.0,
            autocast_score_backward=0.0,
            autocast_hidden_forward=0.0,
            autocast_hidden_backward=0.0,
        ),
    )
    plain, _ = st.search_training(no_chain, v100, 1, links, flash=False)
    assert plain is not None and plain.strategy == ac.strategy
    extra_s = 4 * chain / (v100.memory_bandwidth_gb_per_s * 1e9 * eff.MEMORY_BW_FRACTION)
    assert ac.step_s - plain.step_s == pytest.approx(extra_s, rel=1e-6)
    # apex's layout does not autocast, so zeroing its chain changes nothing
    ap, _ = st.search_training(apex, v100, 1, links, flash=False)
    assert apex.eager_traffic is not None
    apex_no_chain = replace(
        apex,
        eager_traffic=replace(
            apex.eager_traffic, autocast_score_forward=0.0, autocast_score_backward=0.0
        ),
    )
    ap0, _ = st.search_training(apex_no_chain, v100, 1, links, flash=False)
    assert ap is not None and ap0 is not None
    assert ap.step_s == ap0.step_s


def llama_layer(element_bytes: float, stored_extra: float = 0.0) -> eff.EagerTraffic:
    """A Llama-2-7B layer: hidden 4,096, MLP 11,008, 32 heads, 2,048 tokens, no dropout."""
    return eff.eager_traffic(
        hidden=4096,
        attention_width=4096,
        kv_width=4096,
        mlp_width=11008,
        heads=32,
        seq=2048,
        gated=True,
        dropout=False,
        element_bytes=element_bytes,
        stored_extra=stored_extra,
    )


def test_a_llama_layer_pays_its_rmsnorms_rotary_and_swiglu() -> None:
    t = llama_layer(2.0)
    # two RMSNorms (28 + 2e forward, 56 + 3e backward per element), the rotary embedding of the
    # queries and keys (8e each way), the SiLU and product (2e forward, 3e backward)
    assert t.forward == 2 * (28 + 4) * 4096 + 8 * 2 * 8192 + 2 * 2 * 11008
    assert t.backward == 2 * (56 + 6) * 4096 + 8 * 2 * 8192 + 3 * 2 * 11008
    fp32 = llama_layer(4.0)
    # in fp32 the norm's upcast and its backward cast do nothing: 4 + e fewer bytes each way
    assert fp32.forward == 2 * (28 + 8 - 8) * 4096 + 8 * 4 * 8192 + 2 * 4 * 11008


def test_what_an_eager_layer_also_stores_is_not_streamed_twice() -> None:
    # the activation passes already write (forward), read and write the gradient of (backward)
    # what the eager layer stores beyond a fused one: one pass comes off the forward count, two
    # off the backward
    plain = llama_layer(2.0)
    less = llama_layer(2.0, stored_extra=1000.0)
    assert less.forward == plain.forward - 1000.0
    assert less.backward == plain.backward - 2000.0
    # a Llama-2-7B layer's stored extras under hf-trainer: the two norms' fp32 inputs (4 bytes
    # per s·b·h over their 16-bit count) and the SwiGLU's two more f-wide values (2 + 8f/h
    # against 2 + 6f/h), per token
    facts = layer_eager_traffic(llama("hf-trainer"), "full")
    assert facts is not None
    stored = (4.0 + 2.0 * 11008 / 4096) * 4096
    assert facts.forward == pytest.approx(plain.forward - stored)


def test_lora_pays_its_adapters_outputs_by_target_modules() -> None:
    full = layer_eager_traffic(llama("hf-trainer"), "full")
    qv = layer_eager_traffic(llama("hf-trainer", "lora", "qv"), "lora")
    every = layer_eager_traffic(llama("hf-trainer", "lora", "all-linear"), "lora")
    assert full is not None and qv is not None and every is not None
    # q and v: 4,096 + 4,096 output columns at 6e forward, 4e backward
    assert qv.forward - full.forward == 6 * 2 * 8192
    assert qv.backward - full.backward == 4 * 2 * 8192
    # all seven: q, k, v, o (4 x 4,096), gate and up (2 x 11,008), down (4,096)
    assert every.forward - full.forward == 6 * 2 * (5 * 4096 + 2 * 11008)


def test_fused_and_compiled_stacks_stream_no_extra_traffic() -> None:
    for framework in ("megatron", "nemo", "torchtitan", "llm.c", "any"):
        assert layer_eager_traffic(llama(framework), "full") is None
    for framework in ("hf-trainer", "pytorch-fsdp", "torchtune", "deepspeed"):
        assert layer_eager_traffic(llama(framework), "full") is not None


def test_the_traffic_is_per_token_over_the_stages_layers_and_split_ranks() -> None:
    f = train_facts(llama("hf-trainer"))
    assert f.eager_traffic is not None
    per_token = f.eager_traffic.per_token(scores=False)
    assert st._eager_bytes(f, 1, 1, 1, True, 0.0) == pytest.approx(per_token * 2048 * 32)
    # the Hugging Face stack's tensor parallelism leaves the norms and the residual adds whole on
    # each rank (no sequence parallelism); with it, everything splits
    t = f.eager_traffic
    whole = t.hidden_forward + t.hidden_backward
    assert 0.0 < whole < per_token
    split = ((per_token - whole) / 2 + whole) * 2048 * 8 / 2
    assert st._eager_bytes(f, 2, 4, 2, True, 0.0) == pytest.approx(split)
    assert f.framework is not None
    sp = replace(f, framework=replace(f.framework, sequence_parallel=True))
    assert st._eager_bytes(sp, 2, 4, 2, True, 0.0) == pytest.approx(per_token * 2048 * 8 / 4)
    assert st._eager_bytes(replace(f, eager_traffic=None), 1, 1, 1, True, 0.0) == 0.0


def test_the_step_streams_the_traffic_at_the_memory_bandwidth() -> None:
    f = train_facts(llama("hf-trainer", "lora", "all-linear"))
    assert f.eager_traffic is not None
    one = Topology(gpus_per_node=1, interconnect=Interconnect.PCIE, fabric=Fabric.ETHERNET)
    links = topology_links(H100, one, 1)
    eager, _ = st.search_training(f, H100, 1, links, flash=True)
    without, _ = st.search_training(replace(f, eager_traffic=None), H100, 1, links, flash=True)
    assert eager is not None and without is not None
    # the same layout; the step longer by 4 x 2,048 tokens x 32 layers x the per-token bytes at
    # the bandwidth share a streaming kernel reaches (one GPU: no stragglers)
    assert eager.strategy == without.strategy
    extra_s = (
        4
        * 2048
        * 32
        * f.eager_traffic.per_token(scores=False)
        / (H100.memory_bandwidth_gb_per_s * 1e9 * eff.MEMORY_BW_FRACTION)
    )
    assert eager.step_s - without.step_s == pytest.approx(extra_s, rel=1e-6)


def test_gpu_bound_eager_llama_steps_on_an_h100_land_near_the_measured_time() -> None:
    lora = estimate(llama("hf-trainer", "lora", "all-linear"), H100, 1)
    ms = lora.time_breakdown_hours["training steps"] * 3600e3 / STEPS
    # measured 832.6 ms (GPU busy 823.4); the matmuls and the fused passes alone gave 668.5 (0.80)
    assert 0.85 * 832.6 < ms < 1.15 * 832.6
