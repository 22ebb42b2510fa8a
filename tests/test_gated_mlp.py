"""The MLP's width and kind (``model.ffn``, ``model.mlp``) in the stored activations.

Llama 2 7B (meta-llama/Llama-2-7b-hf config.json): hidden 4,096, intermediate_size 11,008, so
f/h = 2.6875, no dropout.  Korthikanti et al. 2022's count without dropout is 32 bytes per s·b·h,
of which the MLP's values are 18 (a plain GeLU MLP 4·h wide: 2 + 2·4 + 2·4).

- Eager SwiGLU (transformers' LlamaMLP, LitGPT, torchtune): input 2 + gate, up, SiLU output and
  product 2 bytes per f each: 2 + 8 x 2.6875 = 23.5; the two RMSNorms keep fp32 inputs, 4 bytes
  each where Korthikanti counts 2: 4 more.  32 - 18 + 23.5 + 4 = 41.5.
- Fused SwiGLU (Megatron, Transformer Engine): input 2 + the fc1 output 4 per f + the down
  projection's input 2 per f: 2 + 6 x 2.6875 = 18.125; 16-bit norm inputs.  32 - 18 + 18.125 =
  32.125.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from planner.errors import ConfigError
from planner.workload import memory as mem
from planner.workload import parse_workload
from planner.workload.frameworks import load_frameworks
from planner.workload.hf_config import model_from_hf_config
from planner.workload.spec import WorkloadSpec
from planner.workload.training import layer_bytes_per_sbh, train_facts

LLAMA2_7B_RATIO = 11008 / 4096


def _job(model: Any, framework: str, kind: str = "finetune") -> WorkloadSpec:
    return parse_workload(
        {
            "name": "mlp",
            "kind": kind,
            "model": model,
            "data": {"samples": 1000, "tokens_per_sample": 1024},
            "training": {"framework": framework, "method": "lora"},
        }
    )


# -- memory.py: hand-computed bytes ----------------------------------------------------------------


def test_eager_swiglu_of_llama_2_7b() -> None:
    assert mem.mlp_bytes_per_sbh(LLAMA2_7B_RATIO, gated=True, fused=False) == pytest.approx(23.5)


def test_fused_swiglu_of_llama_2_7b_is_the_expert_count() -> None:
    fused = mem.mlp_bytes_per_sbh(LLAMA2_7B_RATIO, gated=True, fused=True)
    assert fused == pytest.approx(18.125)
    assert fused == mem.expert_bytes_per_sbh(LLAMA2_7B_RATIO)


@pytest.mark.parametrize("precision", ["bf16", "fp16", "fp32", "tf32", "fp8"])
def test_a_plain_mlp_four_hidden_sizes_wide_is_korthikantis(precision: str) -> None:
    plain = mem.mlp_bytes_per_sbh(4.0, gated=False, precision=precision)
    assert plain == mem.dense_mlp_bytes_per_sbh(precision)
    assert mem.layer_bytes_per_sbh(
        dropout=True, precision=precision, mlp_bytes=plain
    ) == mem.layer_bytes_per_sbh(dropout=True, precision=precision)


def test_eager_swiglu_in_fp32_and_fp8() -> None:
    f = LLAMA2_7B_RATIO
    assert mem.mlp_bytes_per_sbh(f, gated=True, fused=False, precision="fp32") == pytest.approx(
        47.0
    )
    # the input and the down projection's input in fp8: 1 + 7·f/h
    assert mem.mlp_bytes_per_sbh(f, gated=True, fused=False, precision="fp8") == pytest.approx(
        1.0 + 7.0 * f
    )


def test_fp32_norm_inputs_add_four_bytes_in_16_bits_only() -> None:
    assert mem.fp32_norm_bytes_per_sbh("bf16") == 4.0
    assert mem.fp32_norm_bytes_per_sbh("pure-bf16") == 4.0
    assert mem.fp32_norm_bytes_per_sbh("fp32") == 0.0


def test_llama_2_7b_layer_eager_and_fused() -> None:
    eager = mem.layer_bytes_per_sbh(
        dropout=False,
        mlp_bytes=mem.mlp_bytes_per_sbh(LLAMA2_7B_RATIO, gated=True, fused=False),
        norm_extra_bytes=mem.fp32_norm_bytes_per_sbh(),
    )
    fused = mem.layer_bytes_per_sbh(
        dropout=False, mlp_bytes=mem.mlp_bytes_per_sbh(LLAMA2_7B_RATIO, gated=True, fused=True)
    )
    assert eager == pytest.approx(41.5)
    assert fused == pytest.approx(32.125)


def test_moe_layer_keeps_its_fused_count_and_grows_when_eager() -> None:
    fused = mem.moe_layer_bytes_per_sbh(0.375, 8, dropout=False)
    assert fused == pytest.approx(32.0 - 18.0 + 8 * (2.0 + 6.0 * 0.375))
    eager = mem.moe_layer_bytes_per_sbh(0.375, 8, dropout=False, fused=False, norm_extra_bytes=4.0)
    assert eager == pytest.approx(32.0 - 18.0 + 8 * (2.0 + 8.0 * 0.375) + 4.0)


# -- the stacks and the model --------------------------------------------------------------------


def test_eager_stacks_and_fused_stacks() -> None:
    fused = {name for name, p in load_frameworks().items() if p.fused_layers}
    assert {"hf-trainer", "torchtune", "pytorch-fsdp", "deepspeed"}.isdisjoint(fused)
    assert {"any", "megatron", "nemo", "torchtitan", "jax", "llm.c"} <= fused


@pytest.mark.parametrize(
    ("framework", "expected"),
    [("pytorch-fsdp", 41.5), ("hf-trainer", 41.5), ("torchtune", 41.5), ("megatron", 32.125)],
)
def test_llama_2_7b_preset_per_stack(framework: str, expected: float) -> None:
    spec = _job("llama-2-7b", framework)
    assert spec.model.ffn == 11008
    assert spec.model.mlp == "gated"
    assert layer_bytes_per_sbh(spec, "bf16") == pytest.approx(expected)


def test_the_stored_activations_follow_the_layer_count() -> None:
    eager = train_facts(_job("llama-2-7b", "pytorch-fsdp"))
    fused = train_facts(_job("llama-2-7b", "megatron"))
    sh = 1024 * 4096
    assert eager.act_base_per_seq_layer == pytest.approx(41.5 * sh)
    assert fused.act_base_per_seq_layer == pytest.approx(32.125 * sh)


@pytest.mark.parametrize("framework", ["hf-trainer", "megatron"])
def test_plain_mlp_models_do_not_move(framework: str) -> None:
    """GPT-2's layer (GeLU MLP 4·h wide, LayerNorm, dropout 0.1) with a fused GeLU: Korthikanti's
    34 on every stack."""
    spec = _job({"preset": "gpt2", "activation": "gelu_pytorch_tanh"}, framework)
    assert spec.model.mlp == "plain"
    assert layer_bytes_per_sbh(spec, "bf16") == 34.0


def test_gpt2s_arithmetic_gelu_stores_three_more_values_in_an_eager_stack() -> None:
    """gelu_new (GPT-2's config.json) as eager arithmetic keeps its tanh, 0.5·x and 1 + tanh: 3 x 2
    bytes per element of the 4·h MLP, 24 per s·b·h on top of 34 (efficiency.ARITHMETIC_GELU);
    Megatron's fused bias-GeLU keeps none of them."""
    assert layer_bytes_per_sbh(_job("gpt2", "hf-trainer"), "bf16") == 34.0 + 3 * 2 * 4
    assert layer_bytes_per_sbh(_job("gpt2", "megatron"), "bf16") == 34.0


def test_a_custom_model_without_mlp_fields_keeps_korthikantis_count() -> None:
    model = {"arch": "decoder", "params": 7e9, "layers": 32, "hidden": 4096, "heads": 32}
    model |= {"vocab": 32000, "seq_len": 4096, "dropout": 0.0}
    assert layer_bytes_per_sbh(_job(model, "hf-trainer"), "bf16") == 32.0


@pytest.mark.parametrize("fields", [{"ffn": 11008}, {"mlp": "gated"}])
def test_ffn_and_mlp_come_together(fields: dict[str, Any]) -> None:
    model = {"arch": "decoder", "params": 7e9, "layers": 32, "hidden": 4096, "heads": 32}
    model |= {"vocab": 32000, "seq_len": 4096} | fields
    with pytest.raises(ConfigError, match="give both ffn"):
        _job(model, "hf-trainer")


def test_a_bad_mlp_kind_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"model\.mlp"):
        _job({"preset": "llama-2-7b", "mlp": "tanh"}, "hf-trainer")


def test_hf_config_reads_the_mlp(tmp_path: Path) -> None:
    llama = {
        "model_type": "llama",
        "hidden_size": 4096,
        "intermediate_size": 11008,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "vocab_size": 32000,
        "max_position_embeddings": 4096,
    }
    gpt2 = {"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257}
    (tmp_path / "llama.json").write_text(json.dumps(llama), encoding="utf-8")
    (tmp_path / "gpt2.json").write_text(json.dumps(gpt2), encoding="utf-8")
    assert model_from_hf_config(tmp_path / "llama.json")["ffn"] == 11008
    assert model_from_hf_config(tmp_path / "llama.json")["mlp"] == "gated"
    section = model_from_hf_config(tmp_path / "gpt2.json")
    assert (section["ffn"], section["mlp"]) == (3072, "plain")


def test_f19_is_called_out_of_memory() -> None:
    """LitGPT's Llama 2 7B LoRA at micro-batch 4 x 1,304 tokens ran out of an A100 40GB: each of
    the 4 x 1,304 x 4,096 x 32 layer values now stores 41.5 bytes, 9.5 more than Korthikanti's 32,
    about 6 GiB more in all."""
    sbh_layers = 4 * 1304 * 4096 * 32
    assert (41.5 - 32.0) * sbh_layers / mem.GIB == pytest.approx(6.05, abs=0.01)


@pytest.mark.parametrize(
    ("given", "kind"), [("SwiGLU", "gated"), ("geglu", "gated"), ("gelu", "plain")]
)
def test_the_activations_name_reads_as_its_mlp_kind(given: str, kind: str) -> None:
    raw = {
        "name": "x",
        "kind": "finetune",
        "model": {
            "arch": "decoder",
            "params": 7.0e9,
            "layers": 32,
            "hidden": 4096,
            "heads": 32,
            "vocab": 32000,
            "seq_len": 4096,
            "ffn": 11008,
            "mlp": given,
        },
        "data": {"tokens": 1.0e9},
    }
    assert parse_workload(raw).model.mlp == kind
