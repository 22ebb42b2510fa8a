"""Model presets: the shapes the estimator needs, with where each number comes from.

A workload file may name a preset (``model: gpt2-xl``) instead of spelling out the fields.  Transformer
presets carry parameters, layers, hidden size, heads (and KV heads for grouped-query attention, and
the heads' own width where it is not hidden / heads), vocabulary and the trained context length.
Vision and diffusion presets carry parameters and ``flops_per_sample`` -- the *training* FLOPs
(forward + backward, about 3x forward) for one sample at the stated resolution -- because 6·N·D
does not describe a convolution.

Conventions: ``params`` counts every weight once (tied embeddings once).  Forward FLOPs for vision
models are quoted in multiply-accumulates (MACs) by torchvision and most papers; one MAC is 2 FLOPs,
and the training step is forward + backward = 3 x forward.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any


@dataclass(frozen=True)
class ModelPreset:
    """One named model shape."""

    name: str
    arch: str  # "decoder", "encoder", "cnn", "unet", "diffusion"
    params: float
    source: str
    layers: int | None = None
    hidden: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    vocab: int | None = None
    seq_len: int | None = None
    flops_per_sample: float | None = None  # training FLOPs per sample (fwd + bwd), non-transformers
    activation_gib_per_sample: float | None = None  # stored activations per training sample, 16-bit
    # share of the FLOPs in 3x3 stride-1 convolutions (ModelSection.conv3x3_share), convolutional
    # networks only
    conv3x3_share: float | None = None
    largest_layer_params: float | None = None
    # dropout probability the model was trained with (its public config); None: not a transformer
    dropout: float | None = None
    # mixture of experts: routed experts per MoE layer, experts each token runs, and the parameters
    # one token uses (shared weights + its experts); every layer is an MoE layer
    experts: int | None = None
    experts_per_token: int | None = None
    active_params: float | None = None
    # whether the output head shares the token embedding's matrix (its public config.json's
    # tie_word_embeddings); None: not a language model
    tied_embeddings: bool | None = None
    # one attention head's width where it is not hidden / heads (config.json's head_dim); None:
    # hidden / heads
    head_dim: int | None = None
    # the MLP's width (config.json's intermediate_size) and kind, gated (SwiGLU) or plain (GeLU)
    # (:data:`_MLPS`); None: not a transformer
    ffn: int | None = None
    mlp: str | None = None
    # the MLP's activation as its config.json names it (:data:`_ACTIVATIONS`); None: one fused kernel
    activation: str | None = None
    # whether each norm's output is read by one projection (GPT-2's c_attn, GPT-NeoX's
    # query_key_value, MPT's Wqkv: :data:`_FUSED_PROJECTIONS`); None: separate query, key and value
    # (and a gated MLP's gate and up) projections, as BERT's and Llama's
    fused_projections: bool | None = None
    # the size of a learned absolute position table (:data:`_LEARNED_POSITIONS`): no sequence may
    # be longer; None: rotary, ALiBi or relative positions, whose context a fine-tune may extend
    learned_positions: int | None = None
    # group-limited routing of a mixture of experts (DeepSeek-V2/V3): the routed experts fall in
    # ``expert_groups`` groups and a token picks its experts from ``groups_per_token`` of them
    expert_groups: int | None = None
    groups_per_token: int | None = None
    # sliding-window attention (config.json's sliding_window, layer_types): the window and how
    # many layers use it; None: every layer attends to the whole context
    sliding_window: int | None = None
    sliding_window_layers: int | None = None
    # other names of the model, in lower case (:data:`ALIASES`; a catalog model's Hugging Face
    # repository id and the aliases of planner/data/model_configs.yaml)
    aliases: tuple[str, ...] = ()


def _cnn_train_flops(forward_gmacs: float) -> float:
    """Training FLOPs per sample from forward GMACs: 2 FLOPs per MAC, backward = 2 x forward."""
    return forward_gmacs * 1e9 * 2 * 3


# Dropout (``dropout``), from each model's public training config; it decides whether the stored
# activations include dropout masks (memory.py):
# - 0.1: GPT-2 (HF gpt2* config.json: resid_pdrop = embd_pdrop = attn_pdrop = 0.1), BERT (HF
#   bert-*-uncased config.json: hidden_dropout_prob = attention_probs_dropout_prob = 0.1),
#   DeBERTa-v2-xlarge (HF config.json: hidden_dropout_prob = attention_probs_dropout_prob = 0.1),
#   GPT-3 175B as Korthikanti et al. 2022 ran it (their 34·s·b·h counts the dropout masks, s4.1).
# - 0.0: Pythia (EleutherAI/pythia models/*.yml: hidden-dropout = attention-dropout = 0), TinyLlama
#   and Llama 2 / 3 (HF LlamaConfig attention_dropout 0.0; Meta's reference model.py has no dropout
#   layer), MPT-7B (mosaicml/mpt-7b config.json: attn_pdrop = resid_pdrop = emb_pdrop = 0), Mistral
#   7B (HF MistralConfig attention_dropout 0.0; mistral-src has no dropout layer).
# ResNet-50 v1.5's share of its FLOPs in stride-1 3x3 convolutions, 1.503 of its 4.089 GMACs (D,
# counted as the vision presets' note below says); also the share a convolutional network without
# its own count takes (training.DEFAULT_CONV3X3_SHARE)
RESNET50_CONV3X3_SHARE = 1.503 / 4.089

_PRESETS: tuple[ModelPreset, ...] = (
    # GPT-2: Radford et al. 2019; sizes as counted by HF transformers (tied embeddings, n_ctx 1024,
    # vocab 50257), e.g. huggingface.co/gpt2/config.json and llm.c's "124M".
    ModelPreset(
        "gpt2",
        "decoder",
        124.44e6,
        "Radford et al. 2019; HF gpt2 config",
        12,
        768,
        12,
        None,
        50257,
        1024,
        dropout=0.1,
    ),
    ModelPreset(
        "gpt2-medium",
        "decoder",
        354.82e6,
        "HF gpt2-medium config",
        24,
        1024,
        16,
        None,
        50257,
        1024,
        dropout=0.1,
    ),
    ModelPreset(
        "gpt2-large",
        "decoder",
        774.03e6,
        "HF gpt2-large config",
        36,
        1280,
        20,
        None,
        50257,
        1024,
        dropout=0.1,
    ),
    ModelPreset(
        "gpt2-xl",
        "decoder",
        1557.6e6,
        "HF gpt2-xl config (1.5B)",
        48,
        1600,
        25,
        None,
        50257,
        1024,
        dropout=0.1,
    ),
    # BERT: Devlin et al. 2019; HF bert-base-uncased 109.5M (accelerate: 413 MB fp32), bert-large 335M.
    ModelPreset(
        "bert-base",
        "encoder",
        109.48e6,
        "Devlin et al. 2019; HF bert-base-uncased",
        12,
        768,
        12,
        None,
        30522,
        512,
        dropout=0.1,
    ),
    ModelPreset(
        "bert-large",
        "encoder",
        335.14e6,
        "Devlin et al. 2019; HF bert-large-uncased",
        24,
        1024,
        16,
        None,
        30522,
        512,
        dropout=0.1,
    ),
    # DeBERTa-v2-xlarge: He et al. 2021; HF microsoft/deberta-v2-xlarge (900M incl. 128k vocab).
    ModelPreset(
        "deberta-v2-xlarge",
        "encoder",
        884e6,
        "HF microsoft/deberta-v2-xlarge config",
        24,
        1536,
        24,
        None,
        128100,
        512,
        dropout=0.1,
    ),
    # Pythia: Biderman et al. 2023, Table 1 (1.0B: 16 layers, d_model 2048, 8 heads, ctx 2048).
    ModelPreset(
        "pythia-1b",
        "decoder",
        1.012e9,
        "Biderman et al. 2023 (Pythia) Table 1",
        16,
        2048,
        8,
        None,
        50304,
        2048,
        dropout=0.0,
    ),
    # TinyLlama: Zhang et al. 2024; jzhang38/TinyLlama README (22 layers, 2048, 32 heads, 4 KV heads).
    ModelPreset(
        "tinyllama-1.1b",
        "decoder",
        1.1e9,
        "jzhang38/TinyLlama README",
        22,
        2048,
        32,
        4,
        32000,
        2048,
        dropout=0.0,
    ),
    # MPT-7B: MosaicML model card (6.7B, 32 layers, d_model 4096, 32 heads, ctx 2048, vocab 50432).
    ModelPreset(
        "mpt-7b",
        "decoder",
        6.7e9,
        "mosaicml/mpt-7b model card",
        32,
        4096,
        32,
        None,
        50432,
        2048,
        dropout=0.0,
    ),
    # Llama 2: Touvron et al. 2023, Table 1 and HF configs (70B uses GQA with 8 KV heads).
    ModelPreset(
        "llama-2-7b",
        "decoder",
        6.74e9,
        "Touvron et al. 2023 (Llama 2); HF config",
        32,
        4096,
        32,
        None,
        32000,
        4096,
        dropout=0.0,
    ),
    ModelPreset(
        "llama-2-13b",
        "decoder",
        13.02e9,
        "Touvron et al. 2023 (Llama 2); HF config",
        40,
        5120,
        40,
        None,
        32000,
        4096,
        dropout=0.0,
    ),
    ModelPreset(
        "llama-2-70b",
        "decoder",
        68.98e9,
        "Touvron et al. 2023 (Llama 2); HF config",
        80,
        8192,
        64,
        8,
        32000,
        4096,
        dropout=0.0,
    ),
    # Llama 3: Meta Llama 3 model card / HF configs (128k vocab, GQA 8 KV heads, ctx 8192).
    ModelPreset(
        "llama-3-8b",
        "decoder",
        8.03e9,
        "meta-llama/Meta-Llama-3-8B config",
        32,
        4096,
        32,
        8,
        128256,
        8192,
        dropout=0.0,
    ),
    ModelPreset(
        "llama-3-70b",
        "decoder",
        70.55e9,
        "meta-llama/Meta-Llama-3-70B config",
        80,
        8192,
        64,
        8,
        128256,
        8192,
        dropout=0.0,
    ),
    # Mistral 7B: Jiang et al. 2023 (32 layers, 4096, 32 heads, 8 KV heads).
    ModelPreset(
        "mistral-7b",
        "decoder",
        7.24e9,
        "Jiang et al. 2023 (Mistral 7B)",
        32,
        4096,
        32,
        8,
        32000,
        8192,
        dropout=0.0,
    ),
    # Mixtral 8x7B: Jiang et al. 2024 ("Mixtral of Experts": 47B parameters, 13B active per token,
    # 8 experts, top-2, 32 layers, 4096, 32 heads, 8 KV heads, vocab 32000, 32k context);
    # HF mistralai/Mixtral-8x7B-v0.1 config.json; 46.7B / 12.9B as counted by Mistral AI's
    # announcement ("46.7B total parameters but only uses 12.9B parameters per token").
    ModelPreset(
        "mixtral-8x7b",
        "decoder",
        46.7e9,
        "Jiang et al. 2024 (Mixtral of Experts); Mistral AI announcement",
        32,
        4096,
        32,
        8,
        32000,
        32768,
        dropout=0.0,
        experts=8,
        experts_per_token=2,
        active_params=12.9e9,
    ),
    # DeepSeek-V2-Lite: DeepSeek-AI 2024 (DeepSeek-V2 paper: 15.7B total, 2.4B activated per
    # token); HF deepseek-ai/DeepSeek-V2-Lite config.json: 27 layers, hidden 2048, 16 heads, vocab
    # 102400, 64 routed experts (and 2 shared), 6 routed experts per token.  Multi-head latent
    # attention (config.json: qk_nope_head_dim 128 + qk_rope_head_dim 64 = 192 for queries and
    # keys, v_head_dim 128 for values): head_dim 160, their mean, counts the score (16 x 192) and
    # value (16 x 128) matmuls exactly; its KV cache is the compressed latent and the shared RoPE
    # key (kv_lora_rank 512 + 64 = 576 values per token and layer, what vLLM and SGLang keep), held
    # as the fewest KV heads of 160 that cover it: 2 (640 values, 11% more), as hf_config reads it.
    ModelPreset(
        "deepseek-v2-lite",
        "decoder",
        15.7e9,
        "DeepSeek-AI 2024 (DeepSeek-V2); HF deepseek-ai/DeepSeek-V2-Lite config",
        27,
        2048,
        16,
        2,
        102400,
        4096,
        dropout=0.0,
        experts=64,
        experts_per_token=6,
        active_params=2.4e9,
        head_dim=160,
    ),
    # GPT-3 175B as trained with Megatron in Korthikanti et al. 2022 (96 layers, 12288, 96 heads).
    ModelPreset(
        "gpt3-175b",
        "decoder",
        175e9,
        "Brown et al. 2020; Korthikanti et al. 2022 Table 3",
        96,
        12288,
        96,
        None,
        51200,
        2048,
        dropout=0.1,
    ),
    # Stored activations per training sample (16-bit) for the non-transformers: (D) from the usual
    # largest batch that fits -- ResNet-50 mixed precision ~256 images in 32 GB (~0.09 GiB/image),
    # YOLOv5s batch 64 at 640 px in 16 GB, 3D U-Net (MLPerf) batch 2 per 80 GB GPU with 128^3 patches,
    # Stable Diffusion fine-tune batch 1-2 per 24 GB at 512 px with memory-efficient attention.
    # Vision: torchvision model docs (ResNet-18 1.81 GMACs, ResNet-50 4.09 GMACs at 224x224).
    # conv3x3_share (D), counted from the layer tables, whose sums give the published totals: ResNet-18's
    # 13 stride-1 3x3 convolutions hold 1.503 of its 1.814 GMACs; ResNet-50 v1.5's (torchvision puts the
    # stride on the 3x3 of a stage's first block) the same 1.503 of 4.089, its 1x1s and stem the rest;
    # YOLOv5s (v6.0 yolov5s.yaml at 640 px: the C3 blocks' bottleneck 3x3s; its downsampling 3x3s run
    # at stride 2) 2.60 of 8.22 GMACs.
    ModelPreset(
        "resnet18",
        "cnn",
        11.69e6,
        "torchvision ResNet18_Weights docs: 1.81 GFLOPS (MACs)",
        flops_per_sample=_cnn_train_flops(1.81),
        activation_gib_per_sample=0.04,
        conv3x3_share=1.503 / 1.814,
    ),
    ModelPreset(
        "resnet50",
        "cnn",
        25.56e6,
        "torchvision ResNet50_Weights docs: 4.09 GFLOPS (MACs)",
        flops_per_sample=_cnn_train_flops(4.09),
        activation_gib_per_sample=0.09,
        conv3x3_share=RESNET50_CONV3X3_SHARE,
    ),
    # ResNet-101 and ResNet-152 (torchvision v1.5: ResNet101_Weights 7.80 GFLOPS, ResNet152_Weights
    # 11.51, MACs; 44.5M and 60.2M parameters).  Stored activations scale resnet50's 0.09 GiB by their
    # convolution outputs, 16.2M and 22.6M values an image against its 11.1M; their stride-1 3x3s
    # hold 3.468 of 7.801 and 5.433 of 11.514 GMACs (D, counted as above).
    ModelPreset(
        "resnet101",
        "cnn",
        44.55e6,
        "torchvision ResNet101_Weights docs: 7.80 GFLOPS (MACs)",
        flops_per_sample=_cnn_train_flops(7.80),
        activation_gib_per_sample=0.09 * 16.23 / 11.11,
        conv3x3_share=3.468 / 7.801,
    ),
    ModelPreset(
        "resnet152",
        "cnn",
        60.19e6,
        "torchvision ResNet152_Weights docs: 11.51 GFLOPS (MACs)",
        flops_per_sample=_cnn_train_flops(11.51),
        activation_gib_per_sample=0.09 * 22.55 / 11.11,
        conv3x3_share=5.433 / 11.514,
    ),
    # YOLOv5s: ultralytics/yolov5 README, 7.2M params, 16.5 GFLOPs forward at 640 (already FLOPs = 2 MACs).
    ModelPreset(
        "yolov5s",
        "cnn",
        7.2e6,
        "ultralytics/yolov5 README (16.5 GFLOPs @640)",
        flops_per_sample=16.5e9 * 3,
        activation_gib_per_sample=0.15,
        conv3x3_share=2.60 / 8.22,
    ),
    # 3D U-Net (MLPerf KiTS19 reference, Isensee et al.): ~19M params; forward ~0.5 TMACs per 128^3
    # patch (D: encoder/decoder conv sums at 32..320 channels), so ~3 TFLOPs to train on one patch.
    ModelPreset(
        "unet3d",
        "unet",
        19.0e6,
        "MLPerf 3D U-Net reference (KiTS19, 128^3 patches); FLOPs derived",
        flops_per_sample=3.0e12,
        activation_gib_per_sample=2.0,
    ),
    # Stable Diffusion v1.5: UNet 860M + CLIP text 123M + VAE 84M (Rombach et al. 2022; model card).
    # Training one 512x512 sample: UNet fwd ~0.8 TFLOPs at 64x64 latents x3, plus frozen VAE encoder
    # (~0.5 TFLOPs) and text encoder forward (D from the diffusers configs).
    ModelPreset(
        "stable-diffusion",
        "diffusion",
        1.07e9,
        "Rombach et al. 2022; SD v1.5 model card; FLOPs derived",
        flops_per_sample=2.9e12,
        activation_gib_per_sample=3.0,
        largest_layer_params=0.86e9,
    ),
    # Stable Diffusion 2.x at 768 px (96x96 latents): UNet 865M + OpenCLIP ViT-H text 354M + VAE 84M
    # (stabilityai/stable-diffusion-2 model card).  Training one sample (D): UNet forward ~2.15
    # TFLOPs x3 + VAE encoder ~2.5 TFLOPs + text ~0.05.
    ModelPreset(
        "stable-diffusion-2",
        "diffusion",
        1.30e9,
        "stabilityai/stable-diffusion-2 model card; FLOPs derived",
        flops_per_sample=9.0e12,
        activation_gib_per_sample=6.0,
        largest_layer_params=0.865e9,
    ),
    # SDXL base at 1024 px: UNet 2.567B + CLIP ViT-L (123M) and OpenCLIP ViT-bigG (695M) text
    # encoders + VAE 84M (Podell et al. 2023).  Training one sample (D): UNet forward ~6.3 TFLOPs
    # x3 + VAE encoder ~4.5 TFLOPs + text ~0.1.
    ModelPreset(
        "stable-diffusion-xl",
        "diffusion",
        3.47e9,
        "Podell et al. 2023 (SDXL); FLOPs derived",
        flops_per_sample=23.5e12,
        activation_gib_per_sample=12.0,
        largest_layer_params=2.567e9,
    ),
)


# Output heads (``tied_embeddings``), from each model's public config.json: GPT-2, BERT, DeBERTa-v2
# and MPT (its logits use transformer.wte) tie the head to the token embedding, as Megatron's GPT-3
# does; GPT-NeoX (Pythia: tie_word_embeddings false), Llama (TinyLlama, Llama 2 and 3), Mistral,
# Mixtral and DeepSeek-V2 (tie_word_embeddings false) keep a separate head.  It matters where the
# two are stored differently: QLoRA quantises neither (memory.qlora_frozen_bytes_per_param).
_UNTIED_HEADS = frozenset(
    {
        "pythia-1b",
        "tinyllama-1.1b",
        "llama-2-7b",
        "llama-2-13b",
        "llama-2-70b",
        "llama-3-8b",
        "llama-3-70b",
        "mistral-7b",
        "mixtral-8x7b",
        "deepseek-v2-lite",
    }
)


# MLPs (``ffn``, ``mlp``), from each model's public config.json: GPT-2 (n_inner unset: 4 x n_embd),
# BERT and DeBERTa-v2 (intermediate_size 4 x hidden), Pythia (GPT-NeoX intermediate_size 8,192),
# MPT-7B (expansion_ratio 4) and GPT-3 (4 x d_model; Brown et al. 2020) run plain GeLU MLPs;
# TinyLlama (intermediate_size 5,632), Llama 2 (11,008; 13,824; 28,672), Llama 3 (14,336; 28,672)
# and Mistral 7B (14,336) gated SwiGLU ones.  The mixtures of experts' experts are gated
# (memory.expert_bytes_per_sbh); their widths come from the parameter counts.
_MLPS: dict[str, tuple[int, str]] = {
    "gpt2": (3072, "plain"),
    "gpt2-medium": (4096, "plain"),
    "gpt2-large": (5120, "plain"),
    "gpt2-xl": (6400, "plain"),
    "bert-base": (3072, "plain"),
    "bert-large": (4096, "plain"),
    "deberta-v2-xlarge": (6144, "plain"),
    "pythia-1b": (8192, "plain"),
    "tinyllama-1.1b": (5632, "gated"),
    "mpt-7b": (16384, "plain"),
    "llama-2-7b": (11008, "gated"),
    "llama-2-13b": (13824, "gated"),
    "llama-2-70b": (28672, "gated"),
    "llama-3-8b": (14336, "gated"),
    "llama-3-70b": (28672, "gated"),
    "mistral-7b": (14336, "gated"),
    "gpt3-175b": (49152, "plain"),
}


# MLP activations that are not one fused kernel, from each model's public config.json: GPT-2's
# activation_function "gelu_new" (transformers' NewGELUActivation, the tanh approximation written
# as Python arithmetic).  BERT, DeBERTa-v2 and Pythia say "gelu" (torch's fused GeLU).
_ACTIVATIONS: dict[str, str] = {
    "gpt2": "gelu_new",
    "gpt2-medium": "gelu_new",
    "gpt2-large": "gelu_new",
    "gpt2-xl": "gelu_new",
}


# Models whose attention reads its input through one fused query-key-value projection, from each
# model's public modelling code in transformers: GPT-2's ``c_attn`` (Conv1D, 3 x n_embd), GPT-NeoX's
# (Pythia) ``query_key_value``, MPT's ``Wqkv``; GPT-3 is the GPT-2 architecture.  BERT, DeBERTa-v2,
# Llama, TinyLlama and Mistral run separate ``query``/``key``/``value`` (``q_proj``/``k_proj``/
# ``v_proj``) layers and a gated MLP's separate ``gate_proj`` and ``up_proj``.
_FUSED_PROJECTIONS = frozenset(
    {"gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "pythia-1b", "mpt-7b", "gpt3-175b"}
)


# Learned absolute position embeddings, one row per position, from each model's public config:
# GPT-2 (HF gpt2* config.json n_positions 1024), BERT (max_position_embeddings 512) and GPT-3
# (the GPT-2 architecture, n_ctx 2048; Brown et al. 2020 s2.1).  A longer sequence has no
# position row (HF transformers raises an index error), unlike Llama's rotary positions, Pythia's
# rotary, MPT's ALiBi or DeBERTa's relative ones.
_LEARNED_POSITIONS: dict[str, int] = {
    "gpt2": 1024,
    "gpt2-medium": 1024,
    "gpt2-large": 1024,
    "gpt2-xl": 1024,
    "bert-base": 512,
    "bert-large": 512,
    "gpt3-175b": 2048,
}


@functools.cache
def _with_heads() -> tuple[ModelPreset, ...]:
    """The presets, each language model with its output head (:data:`_UNTIED_HEADS`), its MLP
    (:data:`_MLPS`, :data:`_ACTIVATIONS`), its learned position table (:data:`_LEARNED_POSITIONS`) and its other
    names (:data:`ALIASES`)."""
    with_heads = tuple(
        replace(
            p,
            tied_embeddings=p.name not in _UNTIED_HEADS,
            ffn=_MLPS[p.name][0] if p.name in _MLPS else None,
            mlp=_MLPS[p.name][1] if p.name in _MLPS else None,
            activation=_ACTIVATIONS.get(p.name),
            fused_projections=True if p.name in _FUSED_PROJECTIONS else None,
            learned_positions=_LEARNED_POSITIONS.get(p.name),
        )
        if p.arch in ("decoder", "encoder")
        else p
        for p in _PRESETS
    )
    return tuple(
        replace(p, aliases=tuple(a for a, n in ALIASES.items() if n == p.name)) for p in with_heads
    )


@functools.cache
def _catalog_entries() -> dict[str, dict[str, Any]]:
    """The entries of ``planner/data/model_configs.yaml`` by name, read from its compact copy
    ``model_configs.json`` on first use."""
    text = resources.files("planner.data").joinpath("model_configs.json").read_text("utf-8")
    return {str(raw["name"]): raw for raw in json.loads(text)["models"]}


@functools.cache
def _catalog_names() -> dict[str, str]:
    """Every name a catalog preset answers to (its name, its Hugging Face repository id and its
    aliases, in lower case), to the preset's name."""
    names: dict[str, str] = {}
    for name, raw in _catalog_entries().items():
        others = (str(raw["repo"]), *(str(a) for a in raw.get("aliases", ())))
        names.update(dict.fromkeys((o.lower() for o in others), name))
        names[name] = name
    return names


@functools.cache
def _catalog_preset(name: str) -> ModelPreset:
    """The catalog's preset ``name``, counted from its Hugging Face ``config.json`` keys by the
    reader of ``--model config.json`` (:mod:`planner.workload.hf_config`)."""
    from planner.workload.hf_config import has_position_table, section_from_config

    raw = _catalog_entries()[name]
    repo = str(raw["repo"])
    file = f"{repo} config.json"
    section = section_from_config(dict(raw["config"]), file)
    # an encoder's learned position table bounds its sequences (a decoder's rotary ones do not)
    table = section["arch"] == "encoder" and has_position_table(dict(raw["config"]), file)
    return ModelPreset(
        name=name,
        arch=str(section["arch"]),
        params=float(section["params"]),
        source=f"Hugging Face {repo} config.json",
        layers=section["layers"],
        hidden=section["hidden"],
        heads=section["heads"],
        kv_heads=section.get("kv_heads"),
        vocab=section["vocab"],
        seq_len=section["seq_len"],
        largest_layer_params=section.get("largest_layer_params"),
        dropout=section.get("dropout", 0.0),
        experts=section.get("experts"),
        experts_per_token=section.get("experts_per_token"),
        active_params=section.get("active_params"),
        tied_embeddings=section.get("tied_embeddings"),
        head_dim=section.get("head_dim"),
        ffn=section.get("ffn"),
        mlp=section.get("mlp"),
        activation=section.get("activation"),
        expert_groups=section.get("expert_groups"),
        groups_per_token=section.get("groups_per_token"),
        sliding_window=section.get("sliding_window"),
        sliding_window_layers=section.get("sliding_window_layers"),
        aliases=tuple(a for a, n in _catalog_names().items() if n == name and a != name),
        learned_positions=section["seq_len"] if table else None,
    )


def _catalog() -> tuple[ModelPreset, ...]:
    """Every catalog preset (``planner models``)."""
    return tuple(_catalog_preset(name) for name in _catalog_entries())


def presets() -> dict[str, ModelPreset]:
    """All presets by name: the hand-written ones, then those read from Hugging Face configs."""
    return {p.name: p for p in (*_with_heads(), *_catalog())}


@functools.cache
def _hand_written() -> dict[str, ModelPreset]:
    """The hand-written presets by every name they answer to (:data:`ALIASES` too)."""
    own = {p.name: p for p in _with_heads()}
    return {**{alias: own[name] for alias, name in ALIASES.items()}, **own}


# A Hugging Face repository id: an owner and a name, each a word of letters, digits, ".", "_" and
# "-" that starts with a letter or digit.
_REPO_ID = re.compile(r"[a-z0-9][a-z0-9._-]*/([a-z0-9][a-z0-9._-]*)")
# The suffix of a checkpoint's name that leaves its shape as it was: a post-trained variant, with
# its release's version or date where it has one (-Chat-v1.0, -Instruct-v0.1, -Instruct-2407).
_VARIANT_SUFFIX = re.compile(r"-(?:instruct|it|chat|base|hf)(?:-v\d+(?:\.\d+)*|-\d{4})?$")


# Common spellings people use for the presets.
ALIASES: dict[str, str] = {
    "gpt2-small": "gpt2",
    "gpt2-124m": "gpt2",
    "bert-base-uncased": "bert-base",
    "bert-large-uncased": "bert-large",
    "llama2-7b": "llama-2-7b",
    "llama2-13b": "llama-2-13b",
    "llama2-70b": "llama-2-70b",
    "meta-llama-3-8b": "llama-3-8b",
    "meta-llama-3-70b": "llama-3-70b",
    "llama3-8b": "llama-3-8b",
    "llama3-70b": "llama-3-70b",
    # Mistral 7B v0.2 and v0.3 keep v0.1's shape but for v0.3's 768 more vocabulary rows (32,768:
    # 6.3M more parameters, 0.09%)
    "mistral-7b-v0.1": "mistral-7b",
    "mistral-7b-v0.2": "mistral-7b",
    "mistral-7b-v0.3": "mistral-7b",
    "mistral-7b-instruct-v0.1": "mistral-7b",
    "mistral-7b-instruct-v0.2": "mistral-7b",
    "mistral-7b-instruct-v0.3": "mistral-7b",
    "mixtral-8x7b-v0.1": "mixtral-8x7b",
    "mixtral-8x7b-instruct-v0.1": "mixtral-8x7b",
    "pythia-1b-deduped": "pythia-1b",
    "tinyllama": "tinyllama-1.1b",
    # Vicuna v1.5 (lmsys/vicuna-7b-v1.5, -13b-v1.5) is fine-tuned from Llama 2: the same shapes
    "vicuna-7b": "llama-2-7b",
    "vicuna-13b": "llama-2-13b",
    "vicuna-7b-v1.5": "llama-2-7b",
    "vicuna-13b-v1.5": "llama-2-13b",
    "sd-1.5": "stable-diffusion",
    "stable-diffusion-1.5": "stable-diffusion",
    "sd-2": "stable-diffusion-2",
    "sdxl": "stable-diffusion-xl",
    "resnet-50": "resnet50",
    "resnet-18": "resnet18",
    "resnet-101": "resnet101",
    "resnet-152": "resnet152",
}


# What a model outside the presets is given as, for the unknown-preset error's hint.
OTHER_MODEL_FIX = (
    "give a model outside the presets (planner models) by its shape, model: {arch: decoder, "
    "params: 6.9e9, layers: 32, hidden: 4096, heads: 32, vocab: 50432, seq_len: 2048}, or read it "
    "from its Hugging Face config.json (--model path/to/config.json)"
)


def with_other_model_fix(hint: str | None) -> str:
    """An unknown-preset error's hint: the nearest presets (or the list), then how to give a model
    that is not one (was: "phi-2: did you mean phi-4?" alone)."""
    if not hint:
        return OTHER_MODEL_FIX[0].upper() + OTHER_MODEL_FIX[1:]
    if hint.endswith("?"):
        return f"{hint} Or {OTHER_MODEL_FIX}"
    return f"{hint}; or {OTHER_MODEL_FIX}"


def named_exactly(name: str) -> bool:
    """Whether ``name`` is a preset's own name as typed (any case): not an alias, a repository id
    or a name with a variant's suffix, which a local checkpoint folder may also be called (a
    folder Llama-2-7b-hf or meta-llama/Llama-3.1-8B is read as a checkpoint)."""
    key = name.strip().lower()
    return any(p.name == key for p in _with_heads()) or key in _catalog_entries()


def get_preset(name: str) -> ModelPreset | None:
    """The preset for ``name``, case-insensitive; None when unknown.  A preset answers to its
    name, its aliases and its Hugging Face repository id (``meta-llama/Llama-3.1-8B``), with or
    without the owner, and with a variant's suffix (``-Instruct``, ``-it``, ``-chat``, ``-Base``,
    ``-hf``): an instruct checkpoint has its base model's shape."""
    # words apart as people write a model's name ("Llama 3.1 8B"): the hyphens of the preset's
    key = re.sub(r"\s+", "-", name.strip().lower())
    # a Hugging Face repository id, owner/name (not a path to a folder: one slash, no dots first)
    repo_id = _REPO_ID.fullmatch(key)
    for candidate in (key, repo_id.group(1)) if repo_id else (key,):
        while candidate:
            # the hand-written presets first: a bundled workload's lookup reads no catalog
            if candidate in _hand_written():
                return _hand_written()[candidate]
            if candidate in _catalog_names():
                return _catalog_preset(_catalog_names()[candidate])
            variant = _VARIANT_SUFFIX.search(candidate)
            if variant is None:
                break
            candidate = candidate[: variant.start()]
    return None


@dataclass(frozen=True)
class UNetShape:
    """A latent-diffusion UNet's layout, as diffusers' ``UNet2DConditionModel`` config gives it:
    the latent's side at the pipeline's resolution, each down block's output channels and the
    transformer blocks it holds after each ResNet (0: none; the up blocks mirror them), the middle
    block's transformer blocks, and the text encoder's width and tokens the cross-attention reads."""

    latent_side: int
    block_channels: tuple[int, ...]
    transformer_depth: tuple[int, ...]
    mid_transformer_depth: int
    cross_attention_dim: int
    text_tokens: int = 77
    layers_per_block: int = 2
    latent_channels: int = 4
    feed_forward_mult: int = 4


@dataclass(frozen=True)
class DiffusionPipeline:
    """A latent diffusion pipeline's parts, FLOPs at its native resolution (FLOPs = 2 x MACs)."""

    name: str
    resolution: int
    unet_linear_flops: float  # convolutions and linear layers, one latent, one forward
    unet_attention_flops: float  # attention scores (QK^T and AV), one latent, one forward
    text_flops: float  # text encoder(s), one prompt
    vae_decode_flops: float
    unet_params: float
    other_params: float  # text encoders + VAE
    unet_kernels: int  # kernels of one UNet forward in eager PyTorch
    default_steps: int
    source: str
    unet: UNetShape


# SD 1.5 UNet: 339 GMACs without the attention-score matmuls (Kim et al. 2023, BK-SDM, Table 1,
# U-Net of SDM-v1.4 = v1.5's architecture) + scores (D): 2 x 4096^2 x 320 x 5 blocks at 64x64 and
# 2 x 1024^2 x 640 x 5 at 32x32 = 61 GMACs; onnx-tool counts 888.9 GMACs for the batch-2 (guided)
# SD 1.4 UNet, 444 per latent with the element-wise ops.  Text encoder 6.8 GMACs (CLIP ViT-L/14
# text, onnx-tool); VAE decoder 1,272 GMACs at 512x512 (onnx-tool).
# SD 2.x at 768 (96x96 latents): the same UNet widths, linear FLOPs x (96/64)^2, scores x (96/64)^4;
# OpenCLIP ViT-H text encoder (354M params, 24 layers x 77 tokens: ~27 GMACs); VAE x 2.25.
# SDXL at 1024 (128x128 latents; diffusers SDXL UNet config: channels 320/640/1280, transformer
# depth 2 at 64x64 and 10 at 32x32) (D): 60 transformer blocks at 32x32 (1,024 tokens, d 1,280:
# 29.5M MACs per token + scores) ~1,980 GMACs, 10 blocks at 64x64 (4,096 tokens, d 640) ~517 GMACs,
# resnets ~560 GMACs, projections ~100 GMACs: ~3.16 TMACs = 6.3 TFLOPs, 0.75 of them scores
# (2 x 4096^2 x 640 x 10 + 2 x 1024^2 x 1280 x 60 = 376 GMACs).  Podell et al. 2023: 2.6B UNet,
# CLIP ViT-L + OpenCLIP ViT-bigG text encoders (123M + 695M); VAE decoder x 4 of 512 px.
# Kernels of an eager UNet forward (D): ~10 per resnet block, ~40 per transformer block.
# The UNets' layouts (UNetShape), from each model's diffusers ``unet/config.json``: SD 1.5
# (runwayml/stable-diffusion-v1-5) block_out_channels [320, 640, 1280, 1280], layers_per_block 2,
# CrossAttnDownBlock2D x 3 then DownBlock2D (one transformer block each), cross_attention_dim 768,
# sample_size 64; SD 2 (stabilityai/stable-diffusion-2) the same blocks with cross_attention_dim
# 1,024 and sample_size 96; SDXL (stabilityai/stable-diffusion-xl-base-1.0) block_out_channels
# [320, 640, 1280], DownBlock2D then CrossAttnDownBlock2D x 2 with transformer_layers_per_block
# [1, 2, 10] (the first block has none to hold), cross_attention_dim 2,048, sample_size 128.
# Enumerated by :func:`unet_matmuls`, SD 1.5's UNet is 338.6 GMACs outside the attention scores,
# BK-SDM's 339 (Table 1), and SD 2's at 96x96 760.5 against the 762.8 scaled above; SDXL's 2,988.6
# GMACs against the ~2.78 TMACs the block-by-block derivation above gives: its 3x3 convolutions
# alone come to 778 GMACs against the ~560 taken for the ResNets (the up blocks' ResNets read the
# skip connections' channels too); the table takes the enumeration.
DIFFUSION_PIPELINES: dict[str, DiffusionPipeline] = {
    "stable-diffusion": DiffusionPipeline(
        "stable-diffusion",
        512,
        unet_linear_flops=0.678e12,
        unet_attention_flops=0.122e12,
        text_flops=13.6e9,
        vae_decode_flops=2.544e12,
        unet_params=0.86e9,
        other_params=0.207e9,
        unet_kernels=900,
        default_steps=50,
        source="BK-SDM (Kim et al. 2023) Table 1; onnx-tool SD 1.4 profile; Rombach et al. 2022",
        unet=UNetShape(64, (320, 640, 1280, 1280), (1, 1, 1, 0), 1, 768),
    ),
    "stable-diffusion-2": DiffusionPipeline(
        "stable-diffusion-2",
        768,
        unet_linear_flops=0.678e12 * 2.25,
        unet_attention_flops=0.122e12 * 5.0625,
        text_flops=54e9,
        vae_decode_flops=2.544e12 * 2.25,
        unet_params=0.865e9,
        other_params=0.438e9,
        unet_kernels=900,
        default_steps=50,
        source="SD 1.5 figures scaled to 96x96 latents (D); stabilityai/stable-diffusion-2 card",
        unet=UNetShape(96, (320, 640, 1280, 1280), (1, 1, 1, 0), 1, 1024),
    ),
    "stable-diffusion-xl": DiffusionPipeline(
        "stable-diffusion-xl",
        1024,
        unet_linear_flops=5.977e12,  # 2 x the 2,988.6 GMACs unet_matmuls enumerates (below)
        unet_attention_flops=0.75e12,
        text_flops=0.24e12,
        vae_decode_flops=2.544e12 * 4.0,
        unet_params=2.567e9,
        other_params=0.902e9,
        unet_kernels=3000,
        default_steps=30,
        source="Podell et al. 2023 (SDXL); diffusers SDXL UNet config; FLOPs derived",
        unet=UNetShape(128, (320, 640, 1280), (0, 2, 10), 10, 2048),
    ),
}


# A latent-diffusion workload without a pipeline of its own (``arch: diffusion`` with its own
# FLOPs, or a preset outside the table) is taken to be Stable Diffusion 1.5's UNet at 512 px: the
# layout the SD 2.x and most fine-tuned checkpoints share (U).
DEFAULT_DIFFUSION_PIPELINE = "stable-diffusion"


def diffusion_pipeline(preset: str | None) -> DiffusionPipeline:
    """The pipeline of a diffusion model preset, else :data:`DEFAULT_DIFFUSION_PIPELINE`'s."""
    return DIFFUSION_PIPELINES.get(preset or "", DIFFUSION_PIPELINES[DEFAULT_DIFFUSION_PIPELINE])


def unet_matmuls(unet: UNetShape) -> tuple[tuple[int, int, int], ...]:
    """The UNet's convolutions and linear layers as GEMMs ``(M per image, K, N)``, as the fused
    implicit-GEMM kernels run them: a ``k x k`` convolution from ``c_in`` to ``c_out`` channels at
    an ``r x r`` map is ``M = r^2`` output positions, ``K = c_in k^2``, ``N = c_out``; a linear layer
    of a transformer block over the map's ``r^2`` tokens (its text keys and values over the prompt's
    tokens) is ``M`` tokens, ``K`` in, ``N`` out features.  The layout is diffusers'
    ``UNet2DConditionModel``: ``conv_in``; per down block ``layers_per_block`` ResNets (two 3x3
    convolutions, a 1x1 shortcut where the channels change), each followed by its transformer
    blocks, then a stride-2 3x3 downsampling convolution (not after the last); the middle block's
    ResNet, transformer and ResNet; per up block one ResNet more than down, each reading the
    previous output concatenated with the matching skip, then a 3x3 convolution after nearest
    upsampling (not after the last); ``conv_out``.  A transformer block's ``proj_in`` and
    ``proj_out`` (``c x c``) wrap its layers: self-attention's Q, K and V as one product
    (``c x 3c``) and its output (``c x c``), cross-attention's query and output (``c x c``) and its
    text keys and values as one (``d x 2c`` over the text tokens), and the GEGLU feed-forward
    (``c x 2fc``, ``fc x c``).  diffusers' ``Attention`` runs Q, K and V (and the text K and V) as
    separate ``Linear`` layers unless ``fuse_qkv_projections()`` is called: their extra
    input-gradient writes would add 1.6-3.2% to :func:`unet_bytes_per_flop` (SD 1.5 at 1 to 32
    images; SDXL 3.3-5.1%), under half a per cent of an H100's matmul time, so the table keeps
    them as one.  The
    time embedding's few small matmuls (and each ResNet's ``time_emb_proj``) are left out."""
    out: list[tuple[int, int, int]] = []

    def conv(side: int, c_in: int, c_out: int, k: int = 3) -> None:
        out.append((side * side, c_in * k * k, c_out))

    def resnet(side: int, c_in: int, c_out: int) -> None:
        conv(side, c_in, c_out)
        conv(side, c_out, c_out)
        if c_in != c_out:
            conv(side, c_in, c_out, 1)

    def transformer(side: int, c: int, depth: int) -> None:
        tokens, ff = side * side, unet.feed_forward_mult * c
        out.append((tokens, c, c))
        for _ in range(depth):
            out.extend(((tokens, c, 3 * c), (tokens, c, c), (tokens, c, c)))
            out.extend(((unet.text_tokens, unet.cross_attention_dim, 2 * c), (tokens, c, c)))
            out.extend(((tokens, c, 2 * ff), (tokens, ff, c)))
        out.append((tokens, c, c))

    side, blocks = unet.latent_side, unet.block_channels
    conv(side, unet.latent_channels, blocks[0])
    skips, prev = [blocks[0]], blocks[0]
    for i, c in enumerate(blocks):
        for _ in range(unet.layers_per_block):
            resnet(side, prev, c)
            prev = c
            if unet.transformer_depth[i]:
                transformer(side, c, unet.transformer_depth[i])
            skips.append(c)
        if i < len(blocks) - 1:
            side //= 2
            conv(side, c, c)
            skips.append(c)
    resnet(side, prev, prev)
    transformer(side, prev, unet.mid_transformer_depth)
    resnet(side, prev, prev)
    for i, c in enumerate(reversed(blocks)):
        depth = unet.transformer_depth[len(blocks) - 1 - i]
        for _ in range(unet.layers_per_block + 1):
            resnet(side, prev + skips.pop(), c)
            prev = c
            if depth:
                transformer(side, c, depth)
        if i < len(blocks) - 1:
            side *= 2
            conv(side, c, c)
    conv(side, blocks[0], unet.latent_channels)
    return tuple(out)


@functools.lru_cache(maxsize=256)
def unet_bytes_per_flop(pipeline: str, micro_batch: int) -> float:
    """Result bytes the UNet's training GEMMs (:func:`unet_matmuls`, ``M`` times the micro-batch's
    images) write per FLOP, weighted by their FLOPs: each GEMM's forward, input-gradient and
    weight-gradient products write ``M x N``, ``M x K`` and ``K x N`` 16-bit values, ``(1/M + 1/K +
    1/N) / 3`` bytes a FLOP (:func:`planner.workload.efficiency.layer_bytes_per_flop`'s model,
    applied layer by layer).  SD 1.5 at 64 images: 7.3e-4, five times a 7B transformer's 1.5e-4,
    for its 320- and 640-channel convolutions."""
    matmuls = unet_matmuls(diffusion_pipeline(pipeline).unet)
    b = max(1, micro_batch)
    flops = sum(m * k * n for m, k, n in matmuls)
    written = sum(m * k * n * (1.0 / (b * m) + 1.0 / k + 1.0 / n) for m, k, n in matmuls)
    return written / flops / 3.0


def unet_attention_share(pipe: DiffusionPipeline) -> float:
    """Share of a UNet pass's FLOPs in its attention scores (QK^T and AV), which run in fused
    attention kernels rather than as convolutions and linear layers: SD 1.5 at 512 px 0.122 of
    0.800 TFLOPs (15%), SD 2.x at 768 px 29%, SDXL 12%."""
    total = pipe.unet_linear_flops + pipe.unet_attention_flops
    return pipe.unet_attention_flops / total if total > 0 else 0.0
