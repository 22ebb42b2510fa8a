"""What the real LoRA / QLoRA stacks allocate beyond the adapters (planner/workload/memory.py): NF4
with and without double quantisation (``training.quantization``), the output head LitGPT quantises
with the linear layers and the 16-bit copy bitsandbytes makes of it for its matmul, and the dropped
copies of the adapted layers' inputs LoRA dropout keeps (``training.lora_dropout``), each against
byte counts worked by hand."""

from __future__ import annotations

from typing import Any

import pytest

import planner
from planner.errors import ConfigError
from planner.workload import memory as mem
from planner.workload import parse_workload
from planner.workload.training import train_facts

GIB = 2.0**30


def gemma_qlora(**training: Any) -> Any:
    """F54's shape (LitGPT's Gemma 7B: 28 layers, hidden 3,072, attention 4,096 wide, GeGLU
    24,576, vocabulary 256,000, a separate output head), 512 tokens a sample."""
    return parse_workload(
        {
            "name": "gemma",
            "kind": "finetune",
            "model": {
                "arch": "decoder",
                "params": 9.33e9,
                "layers": 28,
                "hidden": 3072,
                "heads": 16,
                "head_dim": 256,
                "ffn": 24576,
                "mlp": "gated",
                "vocab": 256000,
                "seq_len": 8192,
                "dropout": 0.0,
                "tied_embeddings": False,
            },
            "data": {"samples": 100, "tokens_per_sample": 512},
            "training": {
                "precision": "pure-bf16",
                "method": "qlora",
                "lora_rank": 16,
                "lora_targets": "all-linear",
                "optimizer": "paged-adamw",
                "activation_checkpointing": "none",
                "global_batch_samples": 1,
                "parallelism": {"micro_batch": 1, "zero": 0, "tensor": 1, "pipeline": 1},
                **training,
            },
        }
    )


# -- NF4 with and without double quantisation ------------------------------------------------------


def test_nf4_without_double_quantisation_is_four_and_a_half_bits() -> None:
    # 4 bits + one fp32 absmax per 64 values = 4.5 bits; double quantised 4 + 8/64 + 32/(64·256)
    assert mem.NF4_BYTES_PER_PARAM["nf4"] == 0.5625
    assert mem.NF4_BYTES_PER_PARAM["nf4-dq"] == pytest.approx(0.515875)
    double_quantised_bits = 4 + 8 / 64 + 32 / (64 * 256)
    assert double_quantised_bits == pytest.approx(4.127, abs=5e-4)


def test_frozen_bytes_count_the_head_in_nf4_where_the_stack_quantises_it() -> None:
    # 1,000 frozen weights, a 10 x 10 embedding: untied head in 16 bits (200 values), or quantised
    # with the linear layers (100 values in 16 bits)
    untied = mem.qlora_frozen_bytes_per_param(1000, 10, 10, tied=False, quantization="nf4")
    assert untied == pytest.approx((800 * 0.5625 + 200 * 2.0) / 1000)
    quantised = mem.qlora_frozen_bytes_per_param(
        1000, 10, 10, tied=False, head_quantised=True, quantization="nf4"
    )
    assert quantised == pytest.approx((900 * 0.5625 + 100 * 2.0) / 1000)  # 0.70625


@pytest.mark.parametrize(
    ("framework", "given", "expected"),
    [
        ("lightning", None, "nf4"),  # LitGPT's qlora.yaml configs: quantize: bnb.nf4
        ("hf-trainer", None, "nf4-dq"),  # the QLoRA recipe's double quantisation
        ("lightning", "nf4-dq", "nf4-dq"),  # lit-gpt's 2023 tables ran --quantize bnb.nf4-dq
    ],
)
def test_the_quantisation_is_the_workloads_or_the_stacks(
    framework: str, given: str | None, expected: str
) -> None:
    extra = {"quantization": given} if given else {}
    f = train_facts(gemma_qlora(framework=framework, **extra))
    assert f.quantised_bytes_per_param == mem.NF4_BYTES_PER_PARAM[expected]


def test_litgpt_keeps_only_the_embedding_in_16_bits() -> None:
    lit = train_facts(gemma_qlora(framework="lightning"))
    hf = train_facts(gemma_qlora(framework="hf-trainer"))
    head = 256000 * 3072
    # the head moves from 16 bits (transformers keeps it out) into NF4 (Lightning converts it)
    assert lit.quantised_params - hf.quantised_params == pytest.approx(head)
    frozen = lit.params - lit.trainable
    assert lit.frozen_bytes * frozen == pytest.approx((frozen - head) * 0.5625 + head * 2.0)


# -- the quantised head's 16-bit copy --------------------------------------------------------------


def test_the_quantised_heads_copy_is_vocab_by_hidden_in_16_bits() -> None:
    # Gemma: 256,000 x 3,072 x 2 bytes = 1,572,864,000 bytes, 1.46 GiB
    assert mem.head_dequant_bytes(256000, 3072) == 1_572_864_000
    assert mem.head_dequant_bytes(256000, 3072) / GIB == pytest.approx(1.4648, abs=1e-4)
    assert train_facts(gemma_qlora(framework="lightning")).head_dequant_bytes == 1_572_864_000
    # a stack that keeps the head in 16 bits makes no copy, nor does LoRA
    assert train_facts(gemma_qlora(framework="hf-trainer")).head_dequant_bytes == 0.0
    lora = train_facts(gemma_qlora(framework="lightning", method="lora", optimizer="adamw"))
    assert lora.head_dequant_bytes == 0.0


# -- LoRA dropout ----------------------------------------------------------------------------------


def test_litgpts_dropped_copies_of_gemmas_inputs() -> None:
    copies, inputs = mem.lora_dropout_input_widths(
        targets="all-linear",
        hidden=3072,
        attention_width=4096,
        mlp_width=24576,
        gated=True,
        fused_qkv=True,
    )
    # fused QKV 3,072 + output projection 4,096 + fc_1 and fc_2 3,072 each + down 24,576
    assert copies == 37888
    # the distinct inputs: the attention block's, the projection's, the MLP's and the down's
    assert inputs == 34816
    # QLoRA: 3 bytes a copied value on top (bitsandbytes kept the inputs anyway)
    assert mem.lora_dropout_bytes_per_sb(copies, inputs, inputs_kept=True) == 113664
    # 16-bit LoRA: the copies replace the inputs only lora_A kept
    assert mem.lora_dropout_bytes_per_sb(copies, inputs) == 113664 - 2 * 34816


def test_peft_drops_q_and_v_separately() -> None:
    copies, inputs = mem.lora_dropout_input_widths(
        targets="qv",
        hidden=4096,
        attention_width=4096,
        mlp_width=11008,
        gated=True,
        fused_qkv=False,
    )
    assert (copies, inputs) == (8192, 4096)
    assert mem.lora_dropout_bytes_per_sb(copies, inputs, "fp32") == 8192 * 5 - 4096 * 4


def test_f54s_dropout_stores_a_gib_and_a_half() -> None:
    with_dropout = train_facts(gemma_qlora(framework="lightning", lora_dropout=0.1))
    without = train_facts(gemma_qlora(framework="lightning", lora_dropout=0.0))
    added = (with_dropout.act_base_per_seq_layer - without.act_base_per_seq_layer) * 28
    # 113,664 bytes a token a layer x 512 tokens x 28 layers = 1,629,487,104 bytes, 1.52 GiB
    assert added == pytest.approx(113664 * 512 * 28)
    assert added / GIB == pytest.approx(1.5176, abs=1e-4)


def test_the_dropout_default_is_the_stacks() -> None:
    lit = train_facts(gemma_qlora(framework="lightning"))
    lit_off = train_facts(gemma_qlora(framework="lightning", lora_dropout=0.0))
    assert lit.act_base_per_seq_layer > lit_off.act_base_per_seq_layer  # LitGPT's 0.05
    hf = train_facts(gemma_qlora(framework="hf-trainer"))
    hf_off = train_facts(gemma_qlora(framework="hf-trainer", lora_dropout=0.0))
    assert hf.act_base_per_seq_layer == hf_off.act_base_per_seq_layer  # PEFT's 0.0


# -- validation ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("training", "key", "fix"),
    [
        ({"method": "lora", "lora_dropout": 1.0}, "training.lora_dropout", "less than 1"),
        ({"method": "lora", "lora_dropout": -0.1}, "training.lora_dropout", "at least 0"),
        ({"method": "qlora", "quantization": "nf3"}, "training.quantization", "nf4-dq"),
    ],
)
def test_bad_settings_name_the_field_and_the_fix(
    training: dict[str, Any], key: str, fix: str
) -> None:
    with pytest.raises(ConfigError) as err:
        gemma_qlora(**training)
    assert key in str(err.value)
    assert fix in str(err.value)


def _gpt2(**training: Any) -> Any:
    return parse_workload(
        {
            "name": "w",
            "kind": "finetune",
            "model": "gpt2",
            "data": {"tokens": 1e6},
            "training": training,
        }
    )


@pytest.mark.parametrize(
    ("training", "named"),
    [
        # a full fine-tune trains no adapters (as lora_rank there, tests/test_unused_settings.py)
        ({"method": "full", "lora_dropout": 0.1}, "training.lora_dropout not used"),
        # LoRA's frozen weights stay in 16 bits
        ({"method": "lora", "quantization": "nf4"}, "training.quantization not used"),
        # the Hugging Face loss is not chunked; --framework may swap a torchtune file's stack
        ({"framework": "hf-trainer", "chunked_loss": True}, "training.chunked_loss not used"),
    ],
)
def test_a_setting_the_method_or_stack_does_not_use_is_named(
    training: dict[str, Any], named: str
) -> None:
    est = planner.estimate(_gpt2(**training), "A100-80GB", 1)
    (line,) = [a for a in est.assumptions if "not used" in a]
    assert line.startswith(named)


def test_the_adapters_line_names_the_stacks_memory() -> None:
    est = planner.estimate(gemma_qlora(framework="lightning"), "A100-80GB", 1)
    (line,) = [a for a in est.assumptions if a.startswith("qlora: rank 16")]
    assert "frozen weights in nf4 (4.5 bits)" in line
    assert "its 16-bit copy (1.5 GiB) held at the loss" in line
    assert "lora dropout 0.05" in line


# -- torchtune's chunked loss ------------------------------------------------------------------------


def test_the_chunked_loss_holds_six_and_a_half_bytes_a_logit() -> None:
    # 16-bit logits 2 + each piece's fp32 log-softmax 4 + one of 8 pieces' fp32 upcast 4/8
    assert mem.logit_bytes("torchtune", chunked=True) == 6.5
    assert mem.logit_bytes("torchtune") == 12.0  # nn.CrossEntropyLoss's three fp32 copies


def test_a_chunked_torchtune_sequence_holds_its_logits_at_six_and_a_half_bytes() -> None:
    def facts(chunked: bool) -> Any:
        spec = parse_workload(
            {
                "name": "tt",
                "kind": "finetune",
                "model": "llama-3-8b",
                "data": {"samples": 100, "tokens_per_sample": 2048},
                "training": {"framework": "torchtune", "method": "lora", "chunked_loss": chunked},
            }
        )
        return train_facts(spec)

    # Llama 3 8B: 2,048 tokens x 128,256 logits x 6.5 bytes = 1,707,343,872 bytes a sequence
    assert facts(True).logits_per_seq == 2048 * 128256 * 6.5 == 1_707_343_872
    assert facts(False).logits_per_seq == 2048 * 128256 * 12.0
