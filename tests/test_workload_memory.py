"""Memory formulas against hand-computed and published values."""

from __future__ import annotations

import pytest

from planner.workload import memory as mem
from planner.workload.models import get_preset
from planner.workload.spec import parse_workload
from planner.workload.training import train_facts


@pytest.mark.parametrize(
    ("precision", "optimizer", "expected"),
    [
        ("bf16", "adamw", 16.0),  # ZeRO paper: 2 + 2 + 12
        ("fp16", "adamw", 16.0),
        ("fp32", "adamw", 16.0),  # 4 weights + 4 grads + 8 (m, v)
        ("bf16", "adamw-8bit", 10.0),  # 2 + 2 + 4 master + 2 (8-bit m, v)
        ("bf16", "sgd", 12.0),  # 2 + 2 + 4 master + 4 momentum
        ("bf16", "lion", 12.0),  # one momentum state
        ("fp32", "sgd", 12.0),
        ("bf16", "adafactor", 8.0),  # factored second moment ~ 0
    ],
)
def test_bytes_per_parameter(precision: str, optimizer: str, expected: float) -> None:
    assert mem.state_bytes(precision, optimizer).total == expected


def test_zero_paper_figure_1() -> None:
    # Rajbhandari et al. 2020, Figure 1: Ψ = 7.5B, N_d = 64, K = 12 ->
    # baseline 120 GB, P_os 31.4 GB, P_os+g 16.6 GB, P_os+g+p 1.9 GB.
    psi = 7.5e9
    state = mem.state_bytes("fp16", "adamw")
    expected_gb = {0: 120.0, 1: 31.4, 2: 16.6, 3: 1.9}
    for zero, gb in expected_gb.items():
        parts = mem.model_state_bytes_per_gpu(
            params=psi,
            trainable_params=psi,
            state=state,
            frozen_bytes_per_param=2,
            dp=64,
            zero=zero,
        )
        assert sum(parts) / 1e9 == pytest.approx(gb, abs=0.05)  # the paper rounds to 0.1 GB


def test_tensor_and_pipeline_parallel_divide_model_states() -> None:
    state = mem.state_bytes("bf16", "adamw")
    w, g, o = mem.model_state_bytes_per_gpu(
        params=8e9, trainable_params=8e9, state=state, frozen_bytes_per_param=2, tp=4, pp=2
    )
    assert (w, g, o) == (2e9, 2e9, 12e9)  # 8e9 params / 8 ranks x (2, 2, 12) bytes


def test_accelerate_four_times_rule_for_bert_base() -> None:
    # accelerate estimate-memory, bert-base-cased fp32: 413.18 MB to load, 1.61 GB "Training using Adam".
    params = 413.18 * 2**20 / 4
    ours = mem.state_bytes("fp32", "adamw").total * params
    assert ours == mem.accelerate_adam_rule_bytes(params, 4.0)
    assert ours / 2**30 == pytest.approx(1.61, abs=0.01)


def test_korthikanti_per_layer_activations() -> None:
    # eq. 2 by hand: s=2048, b=1, h=12288, a=96 -> sbh(34 + 5as/h) = 25,165,824 x (34 + 80)
    sbh = 2048 * 12288
    assert mem.activation_bytes_per_layer(2048, 1, 12288, 96, flash=False) == sbh * 114
    # FlashAttention drops the 5as^2b score term; full recompute keeps only the input (2sbh)
    assert mem.activation_bytes_per_layer(2048, 1, 12288, 96, flash=True) == sbh * 34
    assert mem.activation_bytes_per_layer(2048, 1, 12288, 96, recompute="full") == 2 * sbh


@pytest.mark.parametrize(
    ("hidden", "heads", "published_none_gib", "published_selective_sp_gib"),
    [
        (
            12288,
            96,
            66.8,
            12.35,
        ),  # GPT-3 175B, TP8 (Calculon llm-validation from Korthikanti Fig. 7)
        (25600, 160, 131.25, 26.56),  # Megatron 1T, TP8
    ],
)
def test_korthikanti_recompute_savings_match_published(
    hidden: int, heads: int, published_none_gib: float, published_selective_sp_gib: float
) -> None:
    # Same s=2048, b=1, t=8: TP without SP or recompute vs TP + SP + selective recompute.
    none = mem.activation_bytes_per_layer(
        2048, 1, hidden, heads, tp=8, flash=False, sequence_parallel=False
    )
    selective = mem.activation_bytes_per_layer(
        2048, 1, hidden, heads, tp=8, recompute="selective", flash=False
    )
    assert none / selective == pytest.approx(
        published_none_gib / published_selective_sp_gib, rel=0.01
    )


def test_logits_are_fp32_plus_softmax() -> None:
    assert mem.logits_bytes(1024, 2, 50257) == 1024 * 2 * 50257 * 8


def test_hugging_face_loss_holds_three_fp32_copies_of_the_logits() -> None:
    # upcast, shifted contiguous copy, log-softmax output; other stacks: fp32 logits + softmax
    assert mem.logit_bytes("hf-trainer") == 12.0
    assert mem.logit_bytes("megatron") == mem.logit_bytes(None) == 8.0
    assert mem.logits_bytes(4096, 1, 128256, bytes_per_logit=12.0) == 4096 * 128256 * 12


def test_torchtune_recipes_hold_three_fp32_copies_of_the_logits() -> None:
    # the recipe's shifted contiguous fp32 copy, the log-softmax output and the loss's gradient
    assert mem.logit_bytes("torchtune") == 12.0
    assert mem.logit_bytes("pytorch-fsdp") == 8.0


def test_torchtune_finetune_charges_12_bytes_per_logit() -> None:
    # Llama 2 7B, 2,048 tokens: 2,048 x 32,000 logits x 12 bytes per sequence on torchtune, 8 on
    # plain PyTorch FSDP
    def logits(framework: str) -> float:
        spec = parse_workload(
            {
                "name": "tt",
                "kind": "finetune",
                "model": "llama-2-7b",
                "data": {"samples": 100, "tokens_per_sample": 2048},
                "training": {"framework": framework, "method": "lora", "precision": "pure-bf16"},
            }
        )
        return train_facts(spec).logits_per_seq

    assert logits("torchtune") == 2048 * 32000 * 12.0
    assert logits("pytorch-fsdp") == 2048 * 32000 * 8.0


def test_full_recompute_peak_holds_the_larger_of_working_set_and_logits() -> None:
    # the loss frees the logits before the backward pass recomputes the last layer
    kw = {"layers": 32, "seq": 4096, "micro_batch": 1, "hidden": 4096, "heads": 32}
    full = mem.transformer_activation_bytes(**kw, vocab=128256, recompute="full")
    inputs = 32 * 2.0 * 4096 * 4096
    logits = mem.logits_bytes(4096, 1, 128256)
    working = mem.full_recompute_working_bytes(4096, 1, 4096, 32, tp=1, flash=True)
    assert logits > working
    assert full == pytest.approx(inputs + logits)
    # without recompute every layer's activations are stored when the logits are made
    none = mem.transformer_activation_bytes(**kw, vocab=128256, recompute="none")
    assert none == pytest.approx(32 * working + logits)


def test_offloaded_optimizer_keeps_one_gradient_bucket_on_the_gpu() -> None:
    # ZeRO-Offload: 16-bit gradients leave for the host through one 5e8-element bucket
    assert mem.offloaded_gradient_bytes(20.0e9) == 1.0e9
    assert mem.offloaded_gradient_bytes(0.4e9) == 0.4e9


def test_kv_cache_per_token() -> None:
    # Llama 2 7B: 2 x 32 layers x 4096 x 2 bytes = 0.5 MiB per token; 70B (GQA, 8 KV heads): 320 KiB
    assert mem.kv_cache_bytes_per_token(32, 4096, 32, None, 2.0) == 512 * 1024
    assert mem.kv_cache_bytes_per_token(80, 8192, 64, 8, 2.0) == 320 * 1024


def test_lora_parameter_count_matches_peft() -> None:
    # PEFT, Llama-2-7B, r=16 on q,k,v,o,gate,up,down: 39,976,960 trainable parameters.
    assert mem.lora_params(32, 4096, 16) == pytest.approx(39_976_960, rel=0.01)


def test_framework_term() -> None:
    assert mem.framework_bytes(10 * mem.GIB) == pytest.approx(1.5 * mem.GIB)


def test_presets_have_consistent_shapes() -> None:
    gpt2xl = get_preset("GPT2-XL")
    assert gpt2xl is not None and gpt2xl.params == pytest.approx(1.5576e9, rel=1e-3)
    # 12·L·h² + vocab·h approximates a GPT-2 parameter count
    assert pytest.approx(gpt2xl.params, rel=0.02) == 12 * 48 * 1600**2 + 50257 * 1600
    assert get_preset("llama2-7b") is get_preset("llama-2-7b")
    assert get_preset("nope") is None


def test_qlora_keeps_the_token_embedding_in_16_bits() -> None:
    # Llama 3 70B: 128,256 x 8,192 embedding in bf16, the linear layers in NF4
    frozen, vocab, hidden = 70.55e9, 128256, 8192
    mean = mem.qlora_frozen_bytes_per_param(frozen, vocab, hidden)
    embedding = vocab * hidden
    assert mean * frozen == pytest.approx(
        (frozen - embedding) * mem.QLORA_BYTES_PER_PARAM + embedding * 2.0
    )
    # no vocabulary (a non-transformer): everything in NF4
    assert mem.qlora_frozen_bytes_per_param(1.0e9, 0, 1) == mem.QLORA_BYTES_PER_PARAM
