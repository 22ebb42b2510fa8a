"""The attention head width (``model.head_dim``): attention wider than the hidden size.

Qwen3-30B-A3B (Qwen/Qwen3-30B-A3B config.json): 48 layers, hidden 2,048, 32 query heads and 4 KV
heads of head_dim 128, so the attention is 32 x 128 = 4,096 wide, twice the hidden size, and one
token's KV cache is 48 x 4 x 128 x 2 (K and V) x 2 bytes = 98,304 bytes.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from planner.errors import ConfigError
from planner.gpu_specs import resolve_gpu
from planner.workload import compute, estimate, parse_workload
from planner.workload import efficiency as eff
from planner.workload import memory as mem
from planner.workload.parallel import Links
from planner.workload.serving import ModelShape, Replica, serving_stack
from planner.workload.spec import WorkloadSpec
from planner.workload.training import train_facts
from tests.test_moe_mechanisms import QWEN3_30B as MOE_QWEN3_30B

# Qwen3-30B-A3B (tests.test_moe_mechanisms) with its config.json's head_dim: 32 query heads and 4
# KV heads of 128 on a hidden size of 2,048
QWEN3_30B: dict[str, Any] = {**MOE_QWEN3_30B, "head_dim": 128}
NVLINK = Links(gpus_per_node=8, intra_bytes_per_s=450e9, intra_kind="nvlink", node_bytes_per_s=50e9)


def _job(model: dict[str, Any], **training: Any) -> WorkloadSpec:
    return parse_workload(
        {
            "name": "hd",
            "kind": "pretrain",
            "model": model,
            "data": {"tokens": 1e9},
            "training": {"global_batch_tokens": 4_194_304, **training},
        }
    )


def _without_head_dim(model: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in model.items() if k != "head_dim"}


# -- the field ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "must be at least 1, got 0"),
        (-1, "must be at least 1, got -1"),
        ("wide", "model.head_dim"),
        (True, "expected a number, got true"),
        (1.5, "model.head_dim"),
        (10**8, "must be at most"),
    ],
)
def test_a_bad_head_dim_is_refused_naming_the_field(value: Any, text: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_workload(
            {
                "name": "x",
                "kind": "pretrain",
                "model": {**QWEN3_30B, "head_dim": value},
                "data": {"tokens": 1e9},
            },
            file="job.yaml",
        )
    assert err.value.key_path == "model.head_dim"
    assert text in str(err.value)


def test_widths_default_to_the_hidden_size() -> None:
    dense = _job({**_without_head_dim(QWEN3_30B), "heads": 32, "kv_heads": 8}).model
    assert dense.head_dim is None
    assert dense.head_width == 64.0
    assert dense.attention_width == 2048
    assert dense.kv_width == 8 * 64.0
    qwen = _job(QWEN3_30B).model
    assert (qwen.head_width, qwen.attention_width, qwen.kv_width) == (128.0, 4096, 512.0)


def test_heads_need_not_divide_the_hidden_size_when_their_width_is_given() -> None:
    """Without head_dim the heads split the hidden size; with it they need not (a hidden size of
    2,880 over 48 heads of 64, say)."""
    odd = {**QWEN3_30B, "hidden": 2880, "heads": 48, "kv_heads": 8, "head_dim": 64}
    assert _job(odd).model.attention_width == 3072
    with pytest.raises(ConfigError) as err:
        _job(_without_head_dim({**odd, "heads": 7, "kv_heads": 7}))
    assert err.value.key_path == "model.heads"
    assert "model.head_dim" in str(err.value)


def test_the_deepseek_v2_lite_preset_has_mla_heads() -> None:
    """config.json: (qk_nope 128 + qk_rope 64 + v 128) / 2 = 160, and 2 KV heads of 160 hold the
    576-value latent cache (640 values)."""
    m = parse_workload(
        {"name": "x", "kind": "pretrain", "model": "deepseek-v2-lite", "data": {"tokens": 1e9}}
    ).model
    assert (m.head_dim, m.kv_heads, m.attention_width) == (160, 2, 16 * 160)
    assert 2 * m.kv_width == 640


# -- training ---------------------------------------------------------------------------------------


def test_attention_flops_follow_the_attention_width() -> None:
    """Q·Kᵀ and A·V: 2·2·s²·(heads·head_dim) forward per layer and sequence, x3 with the backward
    pass: 12·L·w·s per token = 12 x 48 x 4,096 x 4,096 = 9,663,676,416 FLOPs, twice the
    hidden-wide count; the recomputed forward pass adds 4·L·w·s."""
    seq = 4096
    facts = train_facts(_job(QWEN3_30B))
    narrow = train_facts(_job(_without_head_dim(QWEN3_30B)))
    per_token = 12 * 48 * 4096 * 4096
    assert per_token == 9_663_676_416
    assert facts.attention_flops_per_seq["none"] == seq * per_token
    assert narrow.attention_flops_per_seq["none"] == seq * per_token / 2
    assert facts.attention_flops_per_seq["full"] == seq * (per_token + 4 * 48 * 4096 * 4096)
    # model FLOPs: 6·N (projections through the parameter count) + the attention core
    assert facts.model_flops_per_seq == pytest.approx(seq * (6 * 3.3e9 + per_token))
    assert facts.model_flops_per_seq - narrow.model_flops_per_seq == pytest.approx(
        seq * per_token / 2
    )
    assert compute.attention_flops_per_token(48, 4096, 4096) == per_token


def test_activations_widen_only_the_attention_terms() -> None:
    """Korthikanti et al. 2022 s4.1 with attention width w = 2h: of the 32 bytes per s·b·h
    (no dropout), Q, K, V and the attention output (8) double: 40.  Qwen3-30B-A3B's MoE layer
    swaps the dense MLP's 18 for 8 experts of 768 / 2,048 = 0.375 h: 8 x (2 + 6 x 0.375) = 34,
    so 40 - 18 + 34 = 56 bytes per s·b·h (48 hidden-wide)."""
    assert mem.layer_bytes_per_sbh(dropout=False) == 32
    assert mem.layer_bytes_per_sbh(dropout=False, attention_ratio=2.0) == 40
    assert mem.layer_bytes_per_sbh(dropout=True, attention_ratio=2.0) == 42
    assert mem.layer_bytes_per_sbh(dropout=False, precision="fp32", attention_ratio=2.0) == 80
    assert mem.layer_bytes_per_sbh(dropout=False, precision="fp8", attention_ratio=2.0) == 32
    assert mem.moe_layer_bytes_per_sbh(0.375, 8, dropout=False, attention_ratio=2.0) == 56
    spec = _job(QWEN3_30B, precision="bf16")
    narrow = _job(_without_head_dim(QWEN3_30B), precision="bf16")
    assert spec.model.expert_ffn == pytest.approx(768, rel=0.02)
    ffn = spec.model.expert_ffn / 2048
    per_sbh = 40 - 18 + 8 * (2 + 6 * ffn)
    assert train_facts(spec).act_base_per_seq_layer == pytest.approx(per_sbh * 4096 * 2048)
    assert train_facts(spec).act_base_per_seq_layer - train_facts(
        narrow
    ).act_base_per_seq_layer == pytest.approx(8 * 4096 * 2048)
    # the per-layer function: 26·s·b·h + 8·s·b·w with dropout, over t under sequence parallel
    sbh = 4096 * 2 * 2048
    assert mem.activation_bytes_per_layer(
        4096, 2, 2048, 32, tp=2, attention_width=4096
    ) == pytest.approx((26 * sbh + 8 * 2 * sbh) / 2)
    # without sequence parallelism the replicated part (layer norms, linear inputs, masks) is
    # hidden-wide: 10·s·b·h + (34 - 10 + 8)·s·b·h / t
    assert mem.activation_bytes_per_layer(
        4096, 2, 2048, 32, tp=2, sequence_parallel=False, attention_width=4096
    ) == pytest.approx(10 * sbh + 32 * sbh / 2)


def test_dense_models_without_head_dim_do_not_move() -> None:
    """Giving a model's own head_dim = hidden / heads changes nothing."""
    llama = parse_workload(
        {"name": "x", "kind": "pretrain", "model": "llama-3-8b", "data": {"tokens": 1e9}}
    )
    same = llama.variant(model={"head_dim": 128})
    assert same.model.head_dim == 128
    gpu = resolve_gpu("H100")
    assert estimate(llama, gpu, 8).to_dict()["wall_hours"] == pytest.approx(
        estimate(same, gpu, 8).to_dict()["wall_hours"], rel=1e-12
    )


def test_wider_attention_takes_longer_to_train() -> None:
    gpu = resolve_gpu("H100")
    wide = estimate(_job(QWEN3_30B, framework="megatron"), gpu, 8)
    narrow = estimate(_job(_without_head_dim(QWEN3_30B), framework="megatron"), gpu, 8)
    assert (
        wide.time_breakdown_hours["training steps"] > narrow.time_breakdown_hours["training steps"]
    )


# -- serving ----------------------------------------------------------------------------------------


def test_kv_cache_of_qwen3_30b_a3b() -> None:
    """48 layers x 4 KV heads x 128 x 2 (K and V) x 2 bytes = 98,304 bytes a token (hidden /
    heads would give 64-wide heads: half that)."""
    assert mem.kv_cache_bytes_per_token(48, 2048, 32, 4, 2.0, head_dim=128) == 98_304
    assert mem.kv_cache_bytes_per_token(48, 2048, 32, 4, 2.0) == 49_152
    shape = ModelShape(
        params=30.5e9,
        layers=48,
        hidden=2048,
        heads=32,
        kv_heads=4,
        head_dim=128,
        active_params=3.3e9,
        experts=128,
        experts_per_token=8,
    )
    r = Replica(shape, resolve_gpu("H100"), 1, NVLINK, serving_stack("vllm"))
    assert r.kv_bytes_per_token_per_gpu == 98_304
    # tensor parallel 2 splits the 4 KV heads, 2 each
    assert replace(r, tp=2).kv_bytes_per_token_per_gpu == 49_152
    # a spec's model reaches the replica with its head width
    from planner.workload.inference import make_replica

    served = parse_workload(
        {
            "name": "s",
            "kind": "inference",
            "model": QWEN3_30B,
            "inference": {
                "requests_per_s": 1,
                "hours": 1,
                "prompt_tokens": 1000,
                "output_tokens": 200,
            },
        }
    )
    assert make_replica(served, resolve_gpu("H100"), 1, NVLINK).kv_bytes_per_token_per_gpu == (
        98_304
    )


def test_serving_attention_flops_use_heads_times_head_dim() -> None:
    """A compute-bound step's attention: 4 x layers x heads x head_dim x context FLOPs a token
    (4 x 48 x 4,096 x context), not 4 x layers x hidden."""
    gpu = resolve_gpu("H100")
    shape = ModelShape(params=30.5e9, layers=48, hidden=2048, heads=32, kv_heads=4, head_dim=128)
    narrow = replace(shape, head_dim=None)
    assert (shape.attention_width, narrow.attention_width) == (4096.0, 2048.0)
    r = Replica(shape, gpu, 1, NVLINK, serving_stack("vllm"))
    peak = r.compute_peak_flops * eff.gemm_fraction(gpu)  # attention's rate
    prompt = 2048.0
    flops = 4 * 48 * 4096 * prompt * prompt / 2.0
    assert flops / peak > r.kv_bytes_per_token_per_gpu * prompt / r.bandwidth_bytes_per_s
    wide_s = r.step_seconds(0, 0, prefill_tokens=prompt, prefill_context=prompt)
    narrow_r = Replica(narrow, gpu, 1, NVLINK, serving_stack("vllm"))
    narrow_s = narrow_r.step_seconds(0, 0, prefill_tokens=prompt, prefill_context=prompt)
    assert wide_s - narrow_s == pytest.approx(flops / 2 / peak, rel=1e-9)
    assert compute.decode_flops_per_token(3.3e9, 48, 4096, 1000) == 2 * 3.3e9 + 4 * 48 * 4096 * 1000
