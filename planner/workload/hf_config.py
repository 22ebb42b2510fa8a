"""A model's shape from its Hugging Face ``config.json`` (a local file; nothing is downloaded).

Encoders with BERT's layout (BERT, RoBERTa, XLM-RoBERTa, CamemBERT, DistilBERT, ELECTRA,
DeBERTa-v2/v3) are read as ``arch: encoder`` (bidirectional attention) with their own count
(:func:`_encoder_section`); other encoders (ALBERT's shared layers, Longformer's windows ...) and
encoder-decoders (T5, BART, Whisper) are refused with what to use instead.

The estimator needs parameters, layers, hidden size, heads (and KV heads, and the heads' width
where it is not ``hidden / heads``), vocabulary and the sequence length.  ``config.json`` gives the shape; the parameter count follows from it:

- attention per layer: ``hidden x head_dim x (2 x heads + 2 x kv_heads)`` (Q, O and the grouped
  K, V projections), plus biases where the family has them (GPT-2 on every projection, Qwen2 on
  Q, K and V, any family whose config sets ``attention_bias``) and per-head norms of the query
  and key (Qwen3; OLMo 2 and OLMoE over the whole query and key);
- norms per layer: two (RMSNorm), four where the family norms before and after both the attention
  and the MLP (Gemma 2) or has LayerNorm biases (GPT-2);
- MLP per layer: ``3 x hidden x intermediate`` for gated MLPs (SwiGLU/GeGLU: LLaMA, Mistral,
  Qwen, Gemma), ``2 x hidden x intermediate`` otherwise (GPT-2, ``4 x hidden`` by default);
  the width and kind are kept as ``model.ffn`` and ``model.mlp`` (gated or plain), which size the
  MLP's stored activations;
- embeddings ``vocab x hidden``, once more for an untied output head (tied where the config
  says so, and by default for GPT-2's family and Gemma's, as their config classes do), plus
  learned positions where the family has them (GPT-2).

Checked against the exact published counts: Mistral 7B's config gives 7,241,732,096 (Jiang et al.
2023; the model card), GPT-2's 124,439,808 (Radford et al. 2019; the model card).

Mixture of experts (Mixtral, DeepSeek-V2/V3, Qwen1.5/2 MoE, Qwen3 MoE, OLMoE) gives the total
parameters (memory) and the active ones, those one token runs through (FLOPs).  Each expert is a
gated MLP, ``3 x hidden x expert_intermediate``; a MoE layer holds ``E`` of them, a router
``hidden x E``, and the shared experts every token runs; a token uses ``k`` of the ``E``:

- total  = embeddings + sum over layers (attention + norms + MLP or router + shared + E experts);
- active = the same with ``k`` experts in place of ``E`` (the router and shared experts run for
  every token), embeddings included as in ``params`` (the estimator's 6·N·D counts them too).

Per family (the layout of each family's ``transformers`` modelling code):

- ``mixtral``: every layer MoE, experts of ``intermediate_size``;
- ``olmoe``: as Mixtral, plus QK norms (``hidden`` + ``kv_heads x head_dim``);
- ``gpt_oss``: as Mixtral, with biases on every projection (the experts' fused gate/up ``2 x
  width`` and down ``hidden``, the router's one per expert, the attention's four) and a learned
  attention-sink logit per head.  Its alternate sliding-window layers (``layer_types``, 128
  tokens) are read as ``sliding_window`` / ``sliding_window_layers`` (as Gemma 2's and Mistral
  7B v0.1's windows, :func:`_sliding_window`): serving keeps their KV cache for the window only,
  and a fused kernel runs only their band of the attention in training;
- ``qwen2_moe``: experts of ``moe_intermediate_size``, Q/K/V biases, one shared expert of
  ``shared_expert_intermediate_size`` with a ``hidden x 1`` sigmoid gate; ``qwen3_moe``: no
  shared expert, per-head QK norms (``2 x head_dim``); both make a layer dense (MLP of
  ``intermediate_size``) when it is in ``mlp_only_layers`` or off the ``decoder_sparse_step``;
- ``deepseek_v2``/``deepseek_v3``: the first ``first_k_dense_replace`` layers dense
  (``intermediate_size``), the rest MoE every ``moe_layer_freq``, ``n_shared_experts`` of
  ``moe_intermediate_size``, and multi-head latent attention (MLA, DeepSeek-AI 2024 s2.1):
  Q ``hidden x heads·(nope + rope)`` or, with ``q_lora_rank`` r, ``hidden x r`` + norm +
  ``r x heads·(nope + rope)``; KV ``hidden x (kv_lora_rank + rope)`` + norm +
  ``kv_lora_rank x heads·(nope + v)``; O ``heads·v x hidden``.  DeepSeek-V3's router keeps a
  per-expert bias (``topk_method: noaux_tc``).  V3's multi-token-prediction module
  (``num_nextn_predict_layers``: one more MoE layer, a ``2·hidden x hidden`` projection, norms and
  copies of the embedding and head, 13.46B) is left out: it is a training objective that serving
  drops, and the published 671B / 37B leave it out too.

Checked against the published and exact counts (every exact count is the checkpoint's safetensors
total on its Hugging Face page; the configs are the tests' ``tests/data/hf_configs``):

======================  ====================  ==================  ==========================
model                   total (exact)         active              published total / active
======================  ====================  ==================  ==========================
Mixtral 8x7B            46,702,792,704 (=)    12,879,925,248      46.7B / 12.9B (Mistral AI)
DeepSeek-V2-Lite        15,706,484,224 (=)    2,661,150,208       15.7B / 2.4B (DeepSeek-AI)
DeepSeek-V2             235,741,434,880 (=)   21,375,800,320      236B / 21B
DeepSeek-V3             671,026,419,200 [1]   37,552,297,472      671B / 37B (+14B MTP)
Qwen1.5-MoE-A2.7B       14,315,784,192 (=)    2,689,173,504       14.3B / 2.7B (Qwen blog)
Qwen3-30B-A3B           30,532,122,624 (=)    3,353,032,704       30.5B / 3.3B (model card)
OLMoE-1B-7B-0924        6,919,161,856 (=)     1,282,017,280       6.9B / 1.3B (Muennighoff
                                                                  et al. 2024)
======================  ====================  ==================  ==========================

[1] with the MTP module, 684,489,845,504: the checkpoint's bf16 and fp8 tensors plus the router
biases, its fp32 tensors less the 41,540,496 fp8 block scales.  DeepSeek counts activated
parameters without the input embedding (a lookup, no arithmetic): 2.45B, 20.85B and 36.63B, the
published 2.4B, 21B and 37B; Mistral AI and Qwen count it (12.88B, 2.69B, 3.35B; Qwen's 3.3B is
truncated, not rounded).

Head width.  A config's ``head_dim`` (Qwen3, Gemma, OLMoE's family code) is read as
``model.head_dim`` where it differs from ``hidden / heads`` (Qwen3-30B-A3B: 32 heads of 128 on a
hidden size of 2,048), with the config's own ``num_key_value_heads``: the attention FLOPs, its
activations and the KV cache (``2 x kv_heads x head_dim`` values per token and layer) are then
exact (Qwen3-30B-A3B: 48 x 2 x 4 x 128 = 49,152 values, 98,304 bytes a token in 16 bits).

Multi-head latent attention has queries and keys of ``qk_nope_head_dim + qk_rope_head_dim`` (192
for DeepSeek-V2, V2-Lite and V3) and values of ``v_head_dim`` (128): ``head_dim`` is their mean,
160, which counts the score matmul (heads x 192) and the value matmul (heads x 128) exactly, and
the stored queries, keys, values and attention output (2 x 192 + 2 x 128 = 4 x 160).  Its cache is
the compressed latent and the shared RoPE key, ``kv_lora_rank + qk_rope_head_dim`` values per token
and layer (576; what vLLM and SGLang keep; Hugging Face ``transformers`` keeps the decompressed
heads instead), for which ``kv_heads`` is the smallest divisor of ``heads`` whose cache of heads of
``head_dim`` holds it, rounded up, never down, to keep a fit honest: 2 heads of 160, 640 values
(+11%) for all three.  Under tensor parallelism the estimator splits KV heads across GPUs, while
every GPU holds the whole MLA latent, so there the per-GPU cache of an MLA model is understated.
"""

from __future__ import annotations

import difflib
import json
import logging
import re
from pathlib import Path
from typing import Any

from planner.config.yamlfile import SAVE_AS_UTF8, not_utf8, read_bounded, wide_unicode
from planner.errors import ConfigError
from planner.workload.limits import (
    ACTIVATIONS,
    MAX_HIDDEN,
    MAX_LAYER_COUNT,
    MAX_PARAMS,
    MAX_SEQ_LEN,
    canonical_activation,
)

log = logging.getLogger(__name__)

# Families whose MLP is gated (three projections) and whose output head is untied by default
# (the mixture-of-experts families' config classes too: tie_word_embeddings False).
_GATED = {
    "llama",
    "mistral",
    "qwen2",
    "qwen3",
    "gemma",
    "gemma2",
    "phi3",
    "olmo",
    "olmo2",
    "mixtral",
    "gpt_oss",
    "olmoe",
    "qwen2_moe",
    "qwen3_moe",
    "deepseek_v2",
    "deepseek_v3",
}
# Gated families whose config class ties the output head to the embeddings by default.
_TIED_GATED = {"gemma", "gemma2"}
# Families whose attention reads its input through one projection (transformers' GPT2Attention
# c_attn; Phi3Attention qkv_proj, and Phi3MLP's gate_up_proj); the others here run separate query,
# key and value (and gate and up) projections.
_FUSED_PROJECTION_FAMILIES = {"gpt2", "phi3"}
# Families with learned position embeddings and biases on every projection.
_GPT2_LIKE = {"gpt2", "gpt_neo", "gptj"}
# Mixture-of-experts families read here, each with the key that counts its routed experts and
# the one that sizes an expert's MLP.
_MOE_FAMILIES = {
    "mixtral": ("num_local_experts", "intermediate_size"),
    "gpt_oss": ("num_local_experts", "intermediate_size"),
    "olmoe": ("num_experts", "intermediate_size"),
    "qwen2_moe": ("num_experts", "moe_intermediate_size"),
    "qwen3_moe": ("num_experts", "moe_intermediate_size"),
    "deepseek_v2": ("n_routed_experts", "moe_intermediate_size"),
    "deepseek_v3": ("n_routed_experts", "moe_intermediate_size"),
}
_EXPERT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts")
_MOE_HINT = (
    "use a preset (--model mixtral-8x7b, deepseek-v2-lite) or write a workload file with "
    "model.params, model.experts, model.experts_per_token and model.active_params"
)
# The longest default sequence length taken from a config (max_position_embeddings is the
# longest context the model supports, often far longer than it is trained on).
_MAX_DEFAULT_SEQ_LEN = 8192
_MAX_CONFIG_BYTES = 1024 * 1024
# The most a config's whole numbers may be: the workload schema's bounds (planner.workload.spec),
# far past any published model; anything else (widths, expert counts, ranks) is at most a width.
_MOST = {
    "num_hidden_layers": MAX_LAYER_COUNT,
    "n_layer": MAX_LAYER_COUNT,
    "num_layers": MAX_LAYER_COUNT,
    "num_attention_heads": MAX_LAYER_COUNT,
    "n_head": MAX_LAYER_COUNT,
    "num_key_value_heads": MAX_LAYER_COUNT,
    "vocab_size": MAX_SEQ_LEN,
    "max_position_embeddings": MAX_SEQ_LEN,
    "n_positions": MAX_SEQ_LEN,
}
_COPY_HINT = "copy {key} from the model's config.json on Hugging Face"


def model_from_hf_config(path: Path) -> dict[str, Any]:
    """The ``model:`` section of a workload for the config at ``path``."""
    file = str(path)
    config = _read_config(path, file)
    _refuse_other_json(config, path)
    section = _model_section(config, file)
    if section["params"] > MAX_PARAMS:
        raise ConfigError(
            f"the shape in this config makes {section['params']:.3g} parameters, more than any "
            f"model ({MAX_PARAMS:.0e})",
            file=file,
            hint="check hidden_size, num_hidden_layers, intermediate_size and vocab_size against "
            "the model's config.json on Hugging Face",
        )
    return section


# The other JSON files of a model's folder, each by a key only it has: what the file is, and
# where the model's shape is instead.
_OTHER_JSON_FILES = (
    ("weight_map", "the index of a checkpoint's weight shards (model.safetensors.index.json)"),
    ("tokenizer_class", "a tokenizer's config (tokenizer_config.json)"),
    ("added_tokens_decoder", "a tokenizer's config (tokenizer_config.json)"),
    ("max_new_tokens", "a generation config (generation_config.json)"),
    ("do_sample", "a generation config (generation_config.json)"),
)


def _refuse_other_json(config: dict[str, Any], path: Path) -> None:
    """A ConfigError for a JSON file of a model's folder that is not its config.json: a PEFT
    adapter's config (its base model named), a tokenizer's or generation config, a shard index.
    Was: "no model_type: read as a plain decoder" and then "no hidden_size in the config"."""
    if any(k in config for k in ("hidden_size", "n_embd", "d_model")):
        return
    file = str(path)
    if "peft_type" in config:
        base = config.get("base_model_name_or_path")
        raise ConfigError(
            f"is a PEFT {config.get('peft_type')} adapter config"
            + (f" of {base}" if isinstance(base, str) and base else "")
            + ", not a model config",
            file=file,
            hint=(
                f"give the base model: --model {base} --method lora (or qlora), or its config.json"
                if isinstance(base, str) and base
                else "give the base model's config.json (or its preset) with --method lora"
            ),
        )
    what = next((w for k, w in _OTHER_JSON_FILES if k in config), None)
    if what is not None:
        raise ConfigError(
            f"is {what}, not a model config",
            file=file,
            hint=f"the model's shape is in config.json in the same folder ({path.parent / 'config.json'})",
        )


def section_from_config(config: dict[str, Any], file: str) -> dict[str, Any]:
    """The ``model:`` section for a config's keys already read (the bundled presets of
    ``planner/data/model_configs.yaml``); ``file`` names where they come from in errors."""
    return _model_section(config, file)


class _RepeatedKey(Exception):
    """A key given twice in one JSON object of a config.json."""

    def __init__(self, key: str, first: Any, second: Any) -> None:
        super().__init__(key)
        self.key, self.first, self.second = key, first, second


def _without_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``' object hook: the object, or _RepeatedKey for a key given twice."""
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _RepeatedKey(key, obj[key], value)
        obj[key] = value
    return obj


def _read_config(path: Path, file: str) -> dict[str, Any]:
    """The config's JSON object (a ConfigError naming the file for anything else)."""
    raw = read_bounded(
        path, limit_bytes=_MAX_CONFIG_BYTES, what="config.json", hint="pass a config.json file"
    )
    wide = wide_unicode(raw)
    if wide is not None and not raw.startswith(b"\xef\xbb\xbf"):
        # UTF-16 without a byte-order mark decodes as UTF-8 (NULs are valid) and only the JSON
        # parser would trip on it
        raise ConfigError(f"is {wide} text, not UTF-8", file=file, hint=SAVE_AS_UTF8)
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark, as some Windows editors save
    except UnicodeDecodeError as e:
        if wide_unicode(raw) is not None:  # the config.json, saved as UTF-16
            raise ConfigError(not_utf8(raw, e), file=file, hint=SAVE_AS_UTF8) from None
        raise ConfigError(
            f"{not_utf8(raw, e)}: not a config.json",
            file=file,
            hint="pass the model's config.json (from its Hugging Face repository)",
        ) from None
    try:
        config = json.loads(text, object_pairs_hook=_without_repeats)
    except _RepeatedKey as e:
        # was: the last value kept without a word (YAML files refuse a key given twice)
        raise ConfigError(
            f"given twice in one object ({e.first!r}, then {e.second!r}); a JSON reader keeps "
            "the last one",
            file=file,
            key_path=e.key,
            hint=f"keep one {e.key}: " + _COPY_HINT.format(key="it"),
        ) from None
    except (ValueError, RecursionError) as e:
        # ValueError: JSONDecodeError, or an integer literal of thousands of digits (Python's
        # int_max_str_digits); RecursionError: arrays or objects nested thousands deep
        if isinstance(e, RecursionError):
            reason = "nested too deeply"
        elif isinstance(e, json.JSONDecodeError):
            reason = str(e)
        else:
            reason = "a number thousands of digits long"
        raise ConfigError(
            f"not a readable JSON file ({reason})",
            file=file,
            hint="pass the model's config.json (from its Hugging Face repository)",
        ) from None
    if not isinstance(config, dict):
        # was "a config.json is a JSON object" and no fix, nor what the file holds instead
        kinds = {list: "a list", str: "text", bool: "true or false", type(None): "null"}
        shown = kinds.get(type(config), "a number")
        raise ConfigError(
            f'holds {shown}; a config.json is a JSON object ({{"hidden_size": ..., ...}})',
            file=file,
            hint="pass the model's config.json from its Hugging Face repository, or a preset name "
            "(planner models lists them)",
        )
    return config


# Families of encoder-only text models (bidirectional attention, a masked-LM or classifier head):
# their configs carry a decoder's keys (hidden_size, num_hidden_layers, vocab_size), and were
# estimated as decoders (causal attention, half the score FLOPs) without a word.
_ENCODERS = {
    "albert",
    "bert",
    "camembert",
    "convbert",
    "deberta",
    "deberta-v2",
    "distilbert",
    "electra",
    "ernie",
    "esm",
    "flaubert",
    "ibert",
    "longformer",
    "megatron-bert",
    "mobilebert",
    "modernbert",
    "mpnet",
    "nezha",
    "nomic_bert",
    "rembert",
    "roberta",
    "roformer",
    "squeezebert",
    "xlm",
    "xlm-roberta",
    "xlm-roberta-xl",
}
# Encoder-decoder families (two stacks, cross-attention), where a config does not say so itself.
_ENCODER_DECODERS = {"bart", "led", "marian", "mbart", "mt5", "pegasus", "t5", "umt5", "whisper"}
# Families that are no text transformer at all, by what they are: vision encoders (image patches,
# bidirectional attention, no vocabulary), convolutional networks, and state-space or recurrent
# language models (no attention).  Read as a plain decoder they were estimated with causal
# attention over a "vocabulary" of classes, with the unknown-family warning's fix ("set model_type
# to llama") making it no truer.
_NOT_TEXT_TRANSFORMERS = {
    "beit": "a vision transformer",
    "clip_vision_model": "a vision transformer (CLIP's image tower)",
    "deit": "a vision transformer",
    "dinov2": "a vision transformer",
    "siglip_vision_model": "a vision transformer (SigLIP's image tower)",
    "swin": "a vision transformer",
    "swinv2": "a vision transformer",
    "vit": "a vision transformer",
    "vit_mae": "a vision transformer",
    "convnext": "a convolutional network",
    "convnextv2": "a convolutional network",
    "efficientnet": "a convolutional network",
    "regnet": "a convolutional network",
    "resnet": "a convolutional network",
    "mamba": "a state-space model (no attention)",
    "mamba2": "a state-space model (no attention)",
    "rwkv": "a recurrent model (no attention)",
}


# Encoder families read with BERT's layout (transformers' BertModel and its descendants): per layer
# the Q, K, V and output projections with biases (4·h² + 4·h), two LayerNorms (4·h) and the MLP
# (2·h·ffn + ffn + h); word, absolute-position and token-type embeddings and their LayerNorm.
# Checked against the exact counts of the base checkpoints' encoders: bert-base-uncased
# 109,482,240 (BertModel, with its pooler), roberta-base 124,645,632, distilbert-base-uncased
# 66,362,880, deberta-v3-base 183,831,552 (tests/test_hf_config_encoders.py).
_BERT_LAYOUT = {
    "bert",
    "camembert",
    "deberta-v2",
    "distilbert",
    "electra",
    "roberta",
    "xlm-roberta",
}
# Of them, the models whose base class adds BERT's pooler (a dense h x h layer over the first
# token): BertModel, RobertaModel and its copies; DistilBERT, ELECTRA and DeBERTa-v2 have none.
_POOLED = {"bert", "camembert", "roberta", "xlm-roberta"}
# RoBERTa's position ids start after its padding index (padding_idx + 1 = 2), so a table of
# max_position_embeddings = 514 holds 512 positions.
_POSITION_OFFSET = {"camembert": 2, "roberta": 2, "xlm-roberta": 2}


def _encoder_section(config: dict[str, Any], file: str, family: str) -> dict[str, Any]:
    """The model section of an encoder with BERT's layout (:data:`_BERT_LAYOUT`): its parameters
    counted as its ``transformers`` class builds them, bidirectional attention (``arch:
    encoder``), a plain MLP and the masked-LM head tied to the word embeddings.

    DistilBERT names its keys ``dim``, ``n_layers``, ``n_heads``, ``hidden_dim`` and has no token
    types; ELECTRA's embeddings may be narrower than its hidden size (``embedding_size``, 128
    where left out as in ElectraConfig, then projected); DeBERTa-v2/v3 adds relative-position embeddings (``position_buckets`` x 2 rows, or
    ``max_relative_positions`` x 2) with a LayerNorm, separate position projections where
    ``share_att_key`` is false, a convolution after the first layer where ``conv_kernel_size`` is
    set, and absolute positions only where ``position_biased_input`` is true."""
    distil = family == "distilbert"
    # a key missing from an encoder's config: the model's own config has it (was: "pass the
    # config.json of a decoder transformer", for the config of an encoder that is read)
    keys = (
        ("dim", "n_layers", "n_heads")
        if distil
        else ("hidden_size", "num_hidden_layers", "num_attention_heads")
    )
    hidden, layers, heads = (
        _whole(config, file, key, hint=_COPY_HINT.format(key=key)) for key in keys
    )
    if hidden % heads:
        raise ConfigError(
            f"{heads} attention heads do not divide the hidden size {hidden}",
            file=file,
            key_path="n_heads" if distil else "num_attention_heads",
            hint=_COPY_HINT.format(key="num_attention_heads"),
        )
    vocab = _whole(config, file, "vocab_size", hint=_COPY_HINT.format(key="vocab_size"))
    ffn = _optional_whole(config, file, "hidden_dim" if distil else "intermediate_size", 4 * hidden)
    table = _optional_whole(config, file, "max_position_embeddings", 512)
    deberta = family == "deberta-v2"
    absolute = has_position_table(config, file)
    # DebertaV2Config's type_vocab_size defaults to 0 (no token-type table), BERT's to 2
    types = (
        0
        if distil
        else _optional_whole(config, file, "type_vocab_size", 0 if deberta else 2, least=0)
    )
    # ElectraConfig's embedding_size defaults to 128; the others' embeddings are hidden wide
    width = _optional_whole(config, file, "embedding_size", 128 if family == "electra" else hidden)
    embeddings = width * (vocab + (table if absolute else 0) + types)
    if deberta:  # LayerNorm(hidden_size) after embed_proj, a Linear without a bias
        embeddings += 2 * hidden + (width * hidden if width != hidden else 0)
    else:  # LayerNorm(embedding_size), then ELECTRA's embeddings_project with its bias
        embeddings += 2 * width + (width * hidden + hidden if width != hidden else 0)
    layer = 4 * hidden * hidden + 4 * hidden + 2 * hidden * ffn + ffn + hidden + 4 * hidden
    extra = hidden * hidden + hidden if family in _POOLED else 0
    if deberta and _optional_bool(config, file, "relative_attention", False):
        # position_buckets and max_relative_positions below 1 (DebertaV2Config's -1) mean none:
        # the table then has 2 x max_position_embeddings rows
        buckets = _positive_or_none(config, file, "position_buckets")
        span = _positive_or_none(config, file, "max_relative_positions") or table
        extra += 2 * (buckets or span) * hidden
        if "layer_norm" in str(config.get("norm_rel_ebd", "")):
            extra += 2 * hidden
        if not _optional_bool(config, file, "share_att_key", False):
            named = _pos_att_types(config, file)
            layer += sum(hidden * hidden + hidden for k in named & {"c2p", "p2c"})
    kernel = _optional_whole(config, file, "conv_kernel_size", 0, least=0) if deberta else 0
    if kernel:
        # ConvLayer: Conv1d(hidden, hidden, kernel, groups=conv_groups) and its LayerNorm
        groups = _optional_whole(config, file, "conv_groups", 1)
        if hidden % groups:
            raise ConfigError(
                f"{groups} convolution groups do not divide the hidden size {hidden}",
                file=file,
                key_path="conv_groups",
                hint=_COPY_HINT.format(key="conv_groups"),
            )
        extra += hidden * (hidden // groups) * kernel + hidden + 2 * hidden
    params = layers * layer + embeddings + extra
    dropout = config.get("dropout" if distil else "hidden_dropout_prob")
    section: dict[str, Any] = {
        "arch": "encoder",
        "params": float(params),
        "layers": layers,
        "hidden": hidden,
        "heads": heads,
        "vocab": vocab,
        "seq_len": min(table - _POSITION_OFFSET.get(family, 0), _MAX_DEFAULT_SEQ_LEN),
        "tied_embeddings": True,
        "ffn": ffn,
        "mlp": "plain",
    }
    if isinstance(dropout, (int, float)) and not isinstance(dropout, bool):
        section["dropout"] = float(dropout)
    return section


def has_position_table(config: dict[str, Any], file: str) -> bool:
    """Whether an encoder with BERT's layout learns an absolute position table (which no sequence
    may outgrow): all do, DeBERTa-v2/v3 only with ``position_biased_input``.  DebertaV2Config's
    own default is true (its docstring says false; the code decides), and the released
    DeBERTa-v2/v3 configs all set it false."""
    return _optional_bool(config, file, "position_biased_input", True)


def _positive_or_none(config: dict[str, Any], file: str, key: str) -> int | None:
    """``key`` as a whole number >= 1, or None where the config leaves it out or writes a whole
    number below 1 (DeBERTa's -1: "not set")."""
    value = config.get(key)
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value < 1):
        return None
    return _checked_whole(value, file, key, 1)


def _pos_att_types(config: dict[str, Any], file: str) -> set[str]:
    """DeBERTa's relative attention kinds (``pos_att_type``): "p2c|c2p" in the configs, a list in
    DebertaV2Config, none where left out."""
    kinds = config.get("pos_att_type")
    if kinds is None:
        return set()
    if isinstance(kinds, str):
        return {k.strip() for k in kinds.lower().split("|")}
    if isinstance(kinds, list) and all(isinstance(k, str) for k in kinds):
        return {k.strip().lower() for k in kinds}
    raise ConfigError(
        f'expected relative attention kinds like "p2c|c2p" or ["p2c", "c2p"], got {kinds!r}',
        file=file,
        key_path="pos_att_type",
        hint=_COPY_HINT.format(key="pos_att_type"),
    )


def _check_decoder(config: dict[str, Any], file: str, family: str) -> None:
    """Refuse the config of a model that is no decoder-only transformer and no encoder read with
    BERT's layout, saying what it is and what to use instead."""
    architectures = config.get("architectures")
    names = [str(a) for a in architectures] if isinstance(architectures, list) else []
    what = family or (names[0] if names else "")
    if family in _NOT_TEXT_TRANSFORMERS:
        raise ConfigError(
            f"is the config of {_NOT_TEXT_TRANSFORMERS[family]} ({what}); a config.json is read "
            "for decoder-only text transformers",
            file=file,
            key_path="model_type",
            hint="write a workload file instead: a vision transformer as model: {arch: encoder, "
            "params, layers, hidden, heads, seq_len: its patches + 1} with data: {samples}; a "
            "convolutional network as a preset (resnet50; planner models lists them) or with its "
            "params and flops_per_sample",
        )
    if config.get("is_encoder_decoder") is True or family in _ENCODER_DECODERS:
        raise ConfigError(
            f"is the config of an encoder-decoder model ({what}); a config.json is read for "
            "decoder-only transformers",
            file=file,
            # (with --seq-len, workloads new writes the shape's keys out: was without, a file
            # of "model: gpt2" with nothing to edit)
            hint="write a workload file with its model.params, layers, hidden, heads, vocab and "
            "seq_len (planner workloads new NAME --model gpt2 --tokens 50M --seq-len 512 writes "
            "one with those keys to edit)",
        )
    text = config.get("text_config")
    no_shape = all(config.get(k) is None for k in ("hidden_size", "n_embd", "d_model"))
    if isinstance(text, dict) and no_shape:
        # a vision-language model (LLaVA, Qwen2-VL, Gemma 3, Mllama): was "no hidden_size in the
        # config; pass the config.json of a decoder transformer"
        raise ConfigError(
            f"is the config of a multimodal model ({what}); its language model's shape is under "
            "text_config, and the vision encoder is not estimated",
            file=file,
            hint="save the text_config object as a config.json of its own and pass that to "
            "--model (the estimate then leaves the vision encoder out)",
        )
    if family in _ENCODERS or any(n.endswith("ForMaskedLM") for n in names):
        raise ConfigError(
            f"is the config of an encoder model ({what}: bidirectional attention, a masked-LM "
            "head) whose layout is not BERT's; a config.json is read for decoder-only "
            f"transformers and for {', '.join(sorted(_BERT_LAYOUT))}",
            file=file,
            hint="use an encoder preset (--model bert-base, bert-large, deberta-v2-xlarge), or "
            "write a workload file with model.arch: encoder and its params, layers, hidden, "
            "heads, vocab and seq_len",
        )


def _model_section(config: dict[str, Any], file: str) -> dict[str, Any]:
    """The model section of a parsed config: a dense decoder, or a mixture of experts."""
    family = str(config.get("model_type", "")).lower() or _family_of_architectures(config)
    if family in _BERT_LAYOUT:
        return _encoder_section(config, file, family)
    _check_decoder(config, file, family)
    if family in _MOE_FAMILIES or any(config.get(k) is not None for k in _EXPERT_KEYS):
        return _moe_section(config, file, family)
    _warn_unknown_family(family, file)
    hidden = _whole(config, file, "hidden_size", "n_embd", "d_model")
    layers = _whole(config, file, "num_hidden_layers", "n_layer", "num_layers")
    heads = _whole(config, file, "num_attention_heads", "n_head")
    vocab = _whole(config, file, "vocab_size")
    attention, head_dim, kv_heads = _gqa(config, file, family, hidden, heads)
    gated = family in _GATED
    gpt2_like = family in _GPT2_LIKE
    ffn_key = "intermediate_size" if config.get("intermediate_size") is not None else "n_inner"
    ffn = _optional_whole(config, file, ffn_key, 4 * hidden)
    if gated and config.get("intermediate_size") is None:
        # a gated MLP's width is the config's to give: 4 x hidden is GPT-2's default, not a
        # SwiGLU model's (was: a LLaMA config without it read as 8.85B parameters for 6.74B,
        # silently); a warning, so that the config's other mistakes are still named
        log.warning(
            "%s: no intermediate_size in this %s config: its MLP taken as 4 x hidden = %d wide, "
            "GPT-2's default, where a gated model's is narrower (LLaMA 2 7B: 11008 for hidden "
            "4096); copy the model's config.json whole",
            file,
            family,
            ffn,
        )
    # transformers' config classes tie the head by default for Gemma (GemmaConfig,
    # Gemma2Config: tie_word_embeddings=True) and GPT-2's family, not for the other gated ones
    tied = _optional_bool(config, file, "tie_word_embeddings", not gated or family in _TIED_GATED)
    mlp = (3 if gated else 2) * hidden * ffn
    biases = (head_dim * (heads + 2 * kv_heads) + hidden + ffn + hidden) if gpt2_like else 0
    # LayerNorm has a bias (GPT-2); Gemma 2 norms before and after both the attention and the MLP
    norms = (4 if gpt2_like or family == "gemma2" else 2) * hidden
    positions = _positions(config, file)
    embeddings = vocab * hidden * (1 if tied else 2) + (positions * hidden if gpt2_like else 0)
    final_norm = (2 if gpt2_like else 1) * hidden  # LayerNorm has a bias, RMSNorm none
    params = layers * (attention + mlp + biases + norms) + embeddings + final_norm
    section = _section(config, file, family, params, layers, hidden, heads, vocab)
    section["kv_heads"] = kv_heads
    _head_dim(section, head_dim, config)
    section["tied_embeddings"] = tied
    # the MLP's width and kind: a gated family's eager SwiGLU and RMSNorm keep more activations
    section["ffn"] = ffn
    section["mlp"] = "gated" if gated else "plain"
    # its activation where config.json names one the planner knows (GPT-2, GPT-J, GPT-Neo, CodeGen
    # and Phi say activation_function "gelu_new": eager Python arithmetic); others read as fused
    activation = config.get("activation_function") or config.get("hidden_act")
    if isinstance(activation, str) and canonical_activation(activation) in ACTIVATIONS:
        section["activation"] = canonical_activation(activation)
    if family in _FUSED_PROJECTION_FAMILIES:
        section["fused_projections"] = True
    return section


# The head suffixes of transformers' model classes (LlamaForCausalLM, GPT2LMHeadModel): what is
# left names the family (llama, gpt2), spelt without the model_type's underscores and hyphens.
_CLASS_SUFFIX = re.compile(
    r"(forcausallm|lmheadmodel|formaskedlm|forconditionalgeneration|forsequenceclassification|"
    r"model)$"
)


def _family_of_architectures(config: dict[str, Any]) -> str:
    """The model_type a config without one is built as, by its ``architectures`` class names
    (LlamaForCausalLM: llama), or "" where none names a known family.  Was: read as a plain
    decoder with the unknown-family warning, a LLaMA config a third short of its MLP weights."""
    names = config.get("architectures")
    if not isinstance(names, list):
        return ""
    families = _GATED | _GPT2_LIKE | set(_MOE_FAMILIES) | _ENCODERS | _ENCODER_DECODERS
    spelt = {re.sub(r"[-_]", "", f): f for f in families | _BERT_LAYOUT}
    for name in names:
        family = spelt.get(_CLASS_SUFFIX.sub("", str(name).lower()))
        if family is not None:
            log.info("no model_type: read as %s, by its architectures %s", family, name)
            return family
    return ""


def _warn_unknown_family(family: str, file: str) -> None:
    """Say so where ``model_type`` names no family read here (a typo, a missing key, a family
    this planner does not know): the layout is then guessed, a plain MLP (two projections) with
    no biases and a tied head, and the parameter count may be off.  Was: read that way without
    a word (model_type "lama" counted as a plain decoder, a third fewer MLP weights than LLaMA)."""
    known = sorted((_GATED | _GPT2_LIKE) - set(_MOE_FAMILIES))
    if family in known:
        return
    close = difflib.get_close_matches(family, known, n=1, cutoff=0.75) if family else []
    fix = (
        f"did you mean model_type {close[0]!r}?"
        if close
        else f"set model_type to the family the model is built like ({', '.join(known)})"
    )
    what = (
        f"model_type {family!r} is not a family the planner knows" if family else ("no model_type")
    )
    log.warning(
        "%s: %s: read as a plain decoder (a two-projection MLP, no biases, the output head "
        "tied to the embeddings unless tie_word_embeddings says otherwise), so its parameter "
        "count may be off; %s",
        file,
        what,
        fix,
    )


def _moe_section(config: dict[str, Any], file: str, family: str) -> dict[str, Any]:
    """The model section of a mixture of experts: total and active parameters from its shape
    (the module docstring gives the count per family)."""
    if family not in _MOE_FAMILIES:
        raise ConfigError(
            f"a mixture-of-experts config of model_type {family or 'none'!r} is not read (read: "
            f"{', '.join(sorted(_MOE_FAMILIES))}): its expert layout is the model's own code",
            file=file,
            key_path="model_type",
            hint=_MOE_HINT,
        )
    experts_key, expert_ffn_key = _MOE_FAMILIES[family]
    hidden = _whole(config, file, "hidden_size")
    layers = _whole(config, file, "num_hidden_layers")
    heads = _whole(config, file, "num_attention_heads")
    vocab = _whole(config, file, "vocab_size")
    experts = _moe_field(config, file, experts_key, "the routed experts in a MoE layer")
    per_token = _moe_field(config, file, "num_experts_per_tok", "the experts each token runs")
    expert_ffn = _moe_field(config, file, expert_ffn_key, "one expert's MLP width")
    if experts < 2:
        raise ConfigError(
            f"a mixture of experts has at least 2 experts, got {experts}",
            file=file,
            key_path=experts_key,
            hint="a one-expert model is dense: drop the key, or check it against the model card",
        )
    if per_token > experts:
        raise ConfigError(
            f"num_experts_per_tok ({per_token}) is more than the {experts} experts "
            f"({experts_key}): a token runs some of the experts, not more than all of them",
            file=file,
            key_path="num_experts_per_tok",
            hint="check both values against the model card (Mixtral 8x7B: 8 experts, 2 per token)",
        )
    expert = 3 * hidden * expert_ffn  # gate, up and down projections (SwiGLU)
    router = hidden * experts
    sinks = 0
    if family == "gpt_oss":
        # GptOssExperts: biases on the fused gate/up projection (2 x width) and on down (hidden);
        # GptOssTopKRouter: a bias per expert; GptOssAttention: one learned sink logit per head
        expert += 2 * expert_ffn + hidden
        router += experts
        sinks = heads
    groups: tuple[int, int] | None = None
    shared = 0
    if family.startswith("deepseek"):
        shared_experts = _optional_whole(config, file, "n_shared_experts", 0, least=0)
        shared = shared_experts * expert  # as wide as a routed expert, run by every token
        if config.get("topk_method") == "noaux_tc":  # V3: a routing bias per expert
            router += experts
        attention, head_dim, kv_heads = _mla(config, file, hidden, heads)
        first_dense = _optional_whole(config, file, "first_k_dense_replace", 0, least=0)
        every = _optional_whole(config, file, "moe_layer_freq", 1)
        moe = [i >= first_dense and i % every == 0 for i in range(layers)]
        # group-limited routing (V2's device-limited, V3's node-limited): n_group groups, a
        # token's experts from topk_group of them (DeepSeek-V3 report s2.1.2; V2 s2.2.2)
        n_group = _optional_whole(config, file, "n_group", 1)
        topk_group = _optional_whole(config, file, "topk_group", n_group)
        if n_group > 1 and topk_group <= n_group and experts % n_group == 0:
            groups = (n_group, topk_group)
    else:
        if family == "qwen2_moe":  # a shared expert and its sigmoid gate (hidden x 1)
            width = _moe_field(config, file, "shared_expert_intermediate_size", "its width")
            shared = 3 * hidden * width + hidden
        attention, head_dim, kv_heads = _gqa(config, file, family, hidden, heads)
        attention += sinks
        moe = [True] * layers
        if family in ("qwen2_moe", "qwen3_moe"):
            step = _optional_whole(config, file, "decoder_sparse_step", 1)
            dense_only = _layer_list(config, file, "mlp_only_layers", layers)
            moe = [i not in dense_only and (i + 1) % step == 0 for i in range(layers)]
    norms = 2 * hidden
    moe_total = attention + norms + router + shared + experts * expert
    moe_active = attention + norms + router + shared + per_token * expert
    dense_layers = moe.count(False)
    if dense_layers == layers:
        raise ConfigError(
            "no layer of this config has experts (first_k_dense_replace, moe_layer_freq, "
            "decoder_sparse_step or mlp_only_layers make every layer dense)",
            file=file,
            hint="check the layer keys against the model card",
        )
    dense = 0  # a dense layer: the same attention and a gated MLP of intermediate_size
    if dense_layers:
        dense = attention + norms + 3 * hidden * _whole(config, file, "intermediate_size")
    tied = _optional_bool(config, file, "tie_word_embeddings", False)
    outside = vocab * hidden * (1 if tied else 2) + hidden  # embeddings, head and final norm
    moe_layers = layers - dense_layers
    params = moe_layers * moe_total + dense_layers * dense + outside
    section = _section(config, file, family, params, layers, hidden, heads, vocab)
    section["kv_heads"] = kv_heads
    _head_dim(section, head_dim, config)
    section["experts"] = experts
    section["experts_per_token"] = per_token
    if groups is not None:
        section["expert_groups"], section["groups_per_token"] = groups
    section["tied_embeddings"] = tied
    section["active_params"] = float(moe_layers * moe_active + dense_layers * dense + outside)
    # the largest block the strategy gathers whole (FSDP/ZeRO-3): a MoE layer or the vocabulary
    section["largest_layer_params"] = float(max(moe_total, dense, vocab * hidden))
    return section


def _gqa(
    config: dict[str, Any], file: str, family: str, hidden: int, heads: int
) -> tuple[int, int, int]:
    """Grouped-query attention's parameters per layer, its heads' width and its KV heads."""
    kv_heads = _optional_whole(config, file, "num_key_value_heads", heads)
    _kv_heads_divide(kv_heads, heads, file)
    head_dim = _optional_whole(config, file, "head_dim", max(1, hidden // heads))
    params = hidden * head_dim * (2 * heads + 2 * kv_heads)
    if family in ("qwen2", "qwen2_moe"):  # biases on Q, K and V (Qwen2Attention)
        params += head_dim * (heads + 2 * kv_heads)
    elif config.get("attention_bias"):  # on all four projections
        params += head_dim * (heads + 2 * kv_heads) + hidden
    if family in ("qwen3", "qwen3_moe"):  # RMSNorm over each head's query and key
        params += 2 * head_dim
    elif family in ("olmoe", "olmo2"):  # RMSNorm over the whole query and the whole key
        params += heads * head_dim + kv_heads * head_dim
    return params, head_dim, kv_heads


def _mla(config: dict[str, Any], file: str, hidden: int, heads: int) -> tuple[int, int, int]:
    """Multi-head latent attention's parameters per layer, its effective head width (the mean of
    the query/key and the value widths, rounded) and the KV heads of that width that hold its
    cache (the compressed latent and the RoPE key all heads share; module doc)."""
    if "q_lora_rank" not in config:
        raise ConfigError(
            "no q_lora_rank in the config (null: queries projected directly, as DeepSeek-V2-Lite)",
            file=file,
            key_path="q_lora_rank",
            hint="copy the key from the model's config.json",
        )
    q_rank = config["q_lora_rank"]
    kv_rank = _moe_field(config, file, "kv_lora_rank", "the compressed KV width")
    nope = _moe_field(config, file, "qk_nope_head_dim", "a head's query/key width without RoPE")
    rope = _moe_field(config, file, "qk_rope_head_dim", "a head's RoPE query/key width")
    v = _moe_field(config, file, "v_head_dim", "a head's value width")
    q_width = heads * (nope + rope)
    if q_rank is None:
        q = hidden * q_width
    else:
        q_rank = _whole(config, file, "q_lora_rank")
        q = hidden * q_rank + q_rank + q_rank * q_width  # down, norm, up
    kv = hidden * (kv_rank + rope) + kv_rank + kv_rank * heads * (nope + v)  # down, norm, up
    o = heads * v * hidden
    bias = ((q_rank or 0) + kv_rank + rope + hidden) if config.get("attention_bias") else 0
    head_dim = round((nope + rope + v) / 2)
    return q + kv + o + bias, head_dim, _latent_kv_heads(kv_rank + rope, head_dim, heads)


def _section(
    config: dict[str, Any],
    file: str,
    family: str,
    params: int,
    layers: int,
    hidden: int,
    heads: int,
    vocab: int,
) -> dict[str, Any]:
    """The fields every decoder shares."""
    gated = family in _GATED
    # absent keys take the transformers config class's default: LlamaConfig, MistralConfig and
    # Qwen2Config have attention_dropout 0.0, GPT2Config attn_pdrop 0.1
    dropout = config.get("attention_dropout", config.get("attn_pdrop"))
    if dropout is None:
        dropout = 0.0 if gated else 0.1 if family in _GPT2_LIKE else None
    section: dict[str, Any] = {
        "arch": "decoder",
        "params": float(params),
        "layers": layers,
        "hidden": hidden,
        "heads": heads,
        "vocab": vocab,
        "seq_len": min(_positions(config, file), _MAX_DEFAULT_SEQ_LEN),
    }
    if isinstance(dropout, (int, float)) and not isinstance(dropout, bool):
        section["dropout"] = float(dropout)
    window, windowed = _sliding_window(config, file, family, layers)
    if window is not None and windowed:
        section["sliding_window"] = window
        section["sliding_window_layers"] = windowed
    return section


# Families whose layers alternate sliding-window and full attention, the first one sliding, where
# the config lists no layer_types: transformers' Gemma2Config and GptOssConfig build
# layer_types as "sliding_attention" if (i + 1) % 2 else "full_attention".
_ALTERNATING_WINDOW = {"gemma2", "gpt_oss"}
# Families whose every layer attends within sliding_window when the config sets one (Mistral 7B
# v0.1: 4,096); a null window (Mistral v0.2 and later, Mixtral) is none.  Phi-3's configs write
# 2,047, which transformers' eager and SDPA paths ignore: read as full attention.
_ALL_LAYERS_WINDOW = {"mistral", "mixtral"}
# Qwen2/Qwen3 (dense and MoE) use the window only with use_sliding_window, and then from layer
# max_window_layers on (transformers' Qwen2Attention: layer_idx >= max_window_layers).
_QWEN_WINDOW = {"qwen2", "qwen3", "qwen2_moe", "qwen3_moe"}


def _sliding_window(
    config: dict[str, Any], file: str, family: str, layers: int
) -> tuple[int | None, int]:
    """The sliding window (tokens a query attends back to) and how many of the ``layers`` use it:
    ``layer_types`` where the config lists them, else the family's rule (:data:`_ALTERNATING_WINDOW`,
    :data:`_ALL_LAYERS_WINDOW`, :data:`_QWEN_WINDOW`); ``(None, 0)`` where every layer attends to
    the whole context, or the window is no shorter than the context the model takes."""
    window = _positive_or_none(config, file, "sliding_window")
    if window is None or window >= _positions(config, file):
        return None, 0
    types = config.get("layer_types")
    if types is not None:
        if not (isinstance(types, list) and all(isinstance(t, str) for t in types)):
            raise ConfigError(
                f"expected a list of layer kinds, got {types!r}",
                file=file,
                key_path="layer_types",
                hint=_COPY_HINT.format(key="layer_types"),
            )
        if len(types) != layers:
            raise ConfigError(
                f"lists {len(types)} layer kinds for {layers} layers (num_hidden_layers)",
                file=file,
                key_path="layer_types",
                hint=_COPY_HINT.format(key="layer_types"),
            )
        return window, sum(1 for t in types if t == "sliding_attention")
    if family in _ALTERNATING_WINDOW:
        return window, (layers + 1) // 2
    if family in _ALL_LAYERS_WINDOW:
        return window, layers
    if family in _QWEN_WINDOW and _optional_bool(config, file, "use_sliding_window", False):
        # Qwen2Config's default max_window_layers is 28
        first = _optional_whole(config, file, "max_window_layers", 28, least=0)
        return window, max(layers - min(first, layers), 0)
    return None, 0


def _positions(config: dict[str, Any], file: str) -> int:
    """The longest context the config supports (GPT-2's n_positions; 2048 when it says none)."""
    key = (
        "max_position_embeddings"
        if config.get("max_position_embeddings") is not None
        else ("n_positions")
    )
    return _optional_whole(config, file, key, 2048)


def _head_dim(section: dict[str, Any], head_dim: int, config: dict[str, Any]) -> None:
    """``model.head_dim`` where the config gives the heads a width (``head_dim``, or MLA's) that
    is not ``hidden / heads`` (else left out: the schema's default)."""
    given = config.get("head_dim") is not None or config.get("kv_lora_rank") is not None
    if given and head_dim * section["heads"] != section["hidden"]:
        section["head_dim"] = head_dim


def _latent_kv_heads(values: int, head_dim: int, heads: int) -> int:
    """The ``kv_heads`` whose cache in the estimator (``2 x kv_heads x head_dim`` values per token
    and layer) is the smallest that holds ``values`` (MLA's latent): a divisor of ``heads``, at
    most ``heads``."""
    for count in range(1, heads + 1):
        if heads % count == 0 and 2 * count * head_dim >= values:
            return count
    return heads


def _layer_list(config: dict[str, Any], file: str, key: str, layers: int) -> set[int]:
    """A list of layer indices, each one of the ``layers`` (absent: none); was: layers past the
    model's last taken without a word, and a list written as text refused with no fix."""
    value = config.get(key) or []
    if not isinstance(value, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) for i in value
    ):
        raise ConfigError(
            f"expected a list of layer numbers, got {value!r}",
            file=file,
            key_path=key,
            hint=f"write the layers as a JSON list of whole numbers from 0 to {layers - 1}, "
            "e.g. [0, 1]",
        )
    past = sorted(i for i in set(value) if not 0 <= i < layers)
    if past:
        raise ConfigError(
            f"layers {', '.join(str(i) for i in past)} are not among the model's {layers} "
            f"(num_hidden_layers: 0 to {layers - 1})",
            file=file,
            key_path=key,
            hint=f"list layers from 0 to {layers - 1}, or check num_hidden_layers",
        )
    return set(value)


def _moe_field(config: dict[str, Any], file: str, key: str, what: str) -> int:
    """A mixture-of-experts key the count needs, as a positive whole number."""
    if config.get(key) is None:
        raise ConfigError(
            f"no {key} ({what}) in this mixture-of-experts config",
            file=file,
            key_path=key,
            hint=f"copy {key} from the model's config.json on Hugging Face, or {_MOE_HINT}",
        )
    return _whole(config, file, key)


def _kv_heads_divide(kv_heads: int, heads: int, file: str) -> None:
    """Grouped-query attention shares each key/value head among an equal group of query heads."""
    if kv_heads > heads or heads % kv_heads:
        raise ConfigError(
            f"{kv_heads} key/value heads do not divide the {heads} attention heads "
            "(num_attention_heads)",
            file=file,
            key_path="num_key_value_heads",
            hint="copy num_key_value_heads from the model's config.json on Hugging Face "
            "(a divisor of num_attention_heads)",
        )


def _optional_whole(
    config: dict[str, Any], file: str, key: str, default: int, *, least: int = 1
) -> int:
    """``key`` as a whole number >= ``least`` when the config has it, else the default (the
    ``transformers`` config class's)."""
    value = config.get(key)
    if value is None:
        return default
    return _checked_whole(value, file, key, least)


def _checked_whole(value: Any, file: str, key: str, least: int) -> int:
    """``value`` of ``key`` as a whole number from ``least`` to the key's bound (``_MOST``)."""
    most = _MOST.get(key, MAX_HIDDEN)
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ConfigError(
            f"expected a whole number >= {least}, got {value!r}",
            file=file,
            key_path=key,
            hint=_COPY_HINT.format(key=key),
        )
    if value > most:
        raise ConfigError(
            f"{value:.3g} is more than any model has (at most {most:,})",
            file=file,
            key_path=key,
            hint=_COPY_HINT.format(key=key),
        )
    return value


def _optional_bool(config: dict[str, Any], file: str, key: str, default: bool) -> bool:
    """``key`` as true or false when the config has it, else the default."""
    value = config.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ConfigError(
            f"expected true or false, got {value!r}",
            file=file,
            key_path=key,
            hint=_COPY_HINT.format(key=key),
        )
    return value


def _whole(config: dict[str, Any], file: str, *keys: str, hint: str | None = None) -> int:
    """The first of ``keys`` the config has, as a positive whole number; ``hint`` where none is
    there (a decoder's config is asked for by default)."""
    for key in keys:
        value = config.get(key)
        if value is None:
            continue
        return _checked_whole(value, file, key, 1)
    raise ConfigError(
        f"no {keys[0]} in the config",
        file=file,
        hint=hint
        or "pass the config.json of a decoder transformer (LLaMA, Mistral, Qwen, GPT-2 ...)",
    )
