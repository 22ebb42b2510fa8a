"""A model's shape from its Hugging Face ``config.json`` (a local file; nothing is downloaded).

The estimator needs parameters, layers, hidden size, heads (and KV heads), vocabulary and the
sequence length.  ``config.json`` gives the shape; the parameter count follows from it:

- attention per layer: ``hidden x head_dim x (2 x heads + 2 x kv_heads)`` (Q, O and the grouped
  K, V projections), plus biases where the family has them (GPT-2);
- MLP per layer: ``3 x hidden x intermediate`` for gated MLPs (SwiGLU/GeGLU: LLaMA, Mistral,
  Qwen, Gemma), ``2 x hidden x intermediate`` otherwise (GPT-2, ``4 x hidden`` by default);
- embeddings ``vocab x hidden``, once more for an untied output head, plus learned positions
  where the family has them (GPT-2).

Checked against the exact published counts: Mistral 7B's config gives 7,241,732,096 (Jiang et al.
2023; the model card), GPT-2's 124,439,808 (Radford et al. 2019; the model card).  Mixture-of-experts configs are refused (the presets mixtral-8x7b and deepseek-v2-lite cover them): their active and total
parameters differ, which this shape does not say.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from planner.config.yamlfile import read_bounded
from planner.errors import ConfigError

# Families whose MLP is gated (three projections) and whose output head is untied by default.
_GATED = {"llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "phi3", "olmo", "olmo2"}
# Families with learned position embeddings and biases on every projection.
_GPT2_LIKE = {"gpt2", "gpt_neo", "gptj"}
# The longest default sequence length taken from a config (max_position_embeddings is the
# longest context the model supports, often far longer than it is trained on).
_MAX_DEFAULT_SEQ_LEN = 8192
_MAX_CONFIG_BYTES = 1024 * 1024


def model_from_hf_config(path: Path) -> dict[str, Any]:
    """The ``model:`` section of a workload for the config at ``path``."""
    file = str(path)
    raw = read_bounded(
        path, limit_bytes=_MAX_CONFIG_BYTES, what="config.json", hint="pass a config.json file"
    )
    try:
        config = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ConfigError(
            f"not a readable JSON file ({e})",
            file=file,
            hint="pass the model's config.json (from its Hugging Face repository)",
        ) from None
    if not isinstance(config, dict):
        raise ConfigError("a config.json is a JSON object", file=file)
    if any(k in config for k in ("num_local_experts", "num_experts", "n_routed_experts")):
        raise ConfigError(
            "mixture-of-experts configs are not read from config.json (their expert and shared "
            "parameter counts need the model's own code)",
            file=file,
            hint="use a preset (--model mixtral-8x7b, deepseek-v2-lite) or write a workload file "
            "with model.params, model.experts, model.experts_per_token and model.active_params",
        )
    family = str(config.get("model_type", "")).lower()
    hidden = _whole(config, file, "hidden_size", "n_embd", "d_model")
    layers = _whole(config, file, "num_hidden_layers", "n_layer", "num_layers")
    heads = _whole(config, file, "num_attention_heads", "n_head")
    kv_heads = int(config.get("num_key_value_heads") or heads)
    vocab = _whole(config, file, "vocab_size")
    head_dim = int(config.get("head_dim") or hidden // heads)
    gated = family in _GATED
    gpt2_like = family in _GPT2_LIKE
    ffn = int(config.get("intermediate_size") or config.get("n_inner") or 4 * hidden)
    positions = int(config.get("max_position_embeddings") or config.get("n_positions") or 2048)
    tied = bool(config.get("tie_word_embeddings", not gated))
    attention = hidden * head_dim * (2 * heads + 2 * kv_heads)
    mlp = (3 if gated else 2) * hidden * ffn
    biases = (head_dim * (heads + 2 * kv_heads) + hidden + ffn + hidden) if gpt2_like else 0
    norms = (4 if gpt2_like else 2) * hidden
    embeddings = vocab * hidden * (1 if tied else 2) + (positions * hidden if gpt2_like else 0)
    final_norm = (2 if gpt2_like else 1) * hidden  # LayerNorm has a bias, RMSNorm none
    params = layers * (attention + mlp + biases + norms) + embeddings + final_norm
    # absent keys take the transformers config class's default: LlamaConfig, MistralConfig and
    # Qwen2Config have attention_dropout 0.0, GPT2Config attn_pdrop 0.1
    dropout = config.get("attention_dropout", config.get("attn_pdrop"))
    if dropout is None:
        dropout = 0.0 if gated else 0.1 if gpt2_like else None
    section: dict[str, Any] = {
        "arch": "decoder",
        "params": float(params),
        "layers": layers,
        "hidden": hidden,
        "heads": heads,
        "kv_heads": kv_heads,
        "vocab": vocab,
        "seq_len": min(positions, _MAX_DEFAULT_SEQ_LEN),
    }
    if isinstance(dropout, (int, float)) and not isinstance(dropout, bool):
        section["dropout"] = float(dropout)
    return section


def _whole(config: dict[str, Any], file: str, *keys: str) -> int:
    """The first of ``keys`` the config has, as a positive whole number."""
    for key in keys:
        value = config.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(
                f"expected a whole number >= 1, got {value!r}", file=file, key_path=key
            )
        return value
    raise ConfigError(
        f"no {keys[0]} in the config",
        file=file,
        hint="pass the config.json of a decoder transformer (LLaMA, Mistral, Qwen, GPT-2 ...)",
    )
