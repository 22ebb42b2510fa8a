"""The workload file: a validated description of one job, and where the library of them lives.

A workload YAML names the model (a preset from :mod:`planner.workload.models` or explicit fields), the
data (tokens, or samples x epochs with tokens or FLOPs per sample), how it is trained (precision,
optimizer, full / LoRA / QLoRA) or, for inference, the serving rate or the batch of tokens to
process.  :func:`load_workload` turns the file into a frozen :class:`WorkloadSpec`; any mistake is a
:class:`~planner.errors.ConfigError` that names the file, the key path, the expected type and, for
misspelt keys or values, the nearest valid ones.

Conventions:

- ``data`` describes **one piece**.  ``pieces`` (alias ``trials``) repeats it: a hyper-parameter
  sweep of 20 trials or 20 inference shards is ``pieces: 20``; the estimate covers all of them.
- ``data.tokens`` counts every token processed, epochs included.  Otherwise
  ``samples x epochs x tokens_per_sample`` (``tokens_per_sample`` defaults to the model's ``seq_len``).
- Numbers may be written ``2.0e12``; YAML 1.1 reads that as text and the schema converts it.
"""

from __future__ import annotations

import contextvars
import difflib
import functools
import json
import math
import weakref
from collections.abc import Mapping
from enum import Enum
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from planner.config.scenarios import (
    check_file_kind,
    missing_file_hint,
    not_a_mapping,
    scenarios_dir,
)
from planner.config.validation import (
    ErrorWording,
    FieldError,
    NumbersNotBools,
    UnknownName,
    config_error,
)
from planner.config.yamlfile import probe, read_yaml
from planner.errors import ConfigError, UnknownNameError, aliased_name, suggest
from planner.workload.limits import (
    ACTIVATIONS,
    MAX_BATCH_TOKENS,
    MAX_BEAM_WIDTH,
    MAX_EPOCHS,
    MAX_HIDDEN,
    MAX_LATENCY_MS,
    MAX_LAYER_COUNT,
    MAX_LOADER_WORKERS,
    MAX_PARAMS,
    MAX_PIECES,
    MAX_SAMPLES,
    MAX_SEQ_LEN,
    MAX_SERVING_BATCH,
    MAX_SERVING_HOURS,
    MAX_TOKENS,
    MIN_LATENCY_MS,
    canonical_activation,
)
from planner.workload.models import get_preset, presets, with_other_model_fix
from planner.workload.parallel import context_chunks

if TYPE_CHECKING:
    from planner.workload.frameworks import FrameworkProfile


class _StrEnum(str, Enum):
    """A str-Enum that prints as its YAML value (``bf16``, not ``Precision.BF16``)."""

    def __str__(self) -> str:
        return self.value


class Kind(_StrEnum):
    PRETRAIN = "pretrain"
    FINETUNE = "finetune"
    INFERENCE = "inference"


class Precision(_StrEnum):
    """How a job stores and multiplies its numbers (training recipes, inference weight formats).

    Training: ``fp32`` (CUDA-core matmuls, no tensor cores), ``tf32`` (fp32 storage, TF32 tensor
    cores: Ampere and newer), ``fp16`` and ``bf16`` (torch.amp autocast with fp32 master weights,
    also written ``amp-fp16`` / ``amp-bf16``), ``pure-bf16`` (bf16 weights, gradients and optimizer
    states, no fp32 copy: torchtune's default), ``fp8`` (Transformer Engine: fp8 linear layers,
    bf16 elsewhere, bf16/fp32 master weights).  ``fp4`` is NVIDIA NVFP4 (e2m1 values, an e4m3 scale
    per 16 and an fp32 scale per tensor, 4.5 bits a weight): as a training recipe, Transformer
    Engine's NVFP4 linear layers on Blackwell (the rest as under fp8), and as an inference weight
    format.  ``int8`` and ``int4`` are inference weight formats, and so is ``mxfp4`` (OCP
    Microscaling MXFP4: e2m1 values, a power-of-two e8m0 scale per 32, 4.25 bits a weight; what
    gpt-oss ships in).
    """

    FP32 = "fp32"
    TF32 = "tf32"
    FP16 = "fp16"
    BF16 = "bf16"
    PURE_BF16 = "pure-bf16"
    FP8 = "fp8"
    INT8 = "int8"  # inference weights only
    INT4 = "int4"  # inference weights only
    FP4 = "fp4"  # NVFP4: Transformer Engine's NVFP4 training recipe, and inference weights
    MXFP4 = "mxfp4"  # inference weights only (OCP MXFP4)


# Other names for a training precision, as frameworks and users write them.
PRECISION_ALIASES = {
    "amp-fp16": "fp16",
    "amp-bf16": "bf16",
    "mixed-fp16": "fp16",
    "mixed-bf16": "bf16",
    "bf16-mixed": "bf16",
    "16-mixed": "fp16",
    "te-fp8": "fp8",
    "fp8-te": "fp8",
    "nvfp4": "fp4",
    "te-nvfp4": "fp4",
    "bf16-pure": "pure-bf16",
    "bf16-true": "pure-bf16",
    "32": "fp32",
    "32-true": "fp32",
    # PyTorch's dtype names and Lightning's other spelling of mixed fp16 (were offered tf32 for
    # float32 and bf16-mixed for fp16-mixed: another number format)
    "float32": "fp32",
    "float16": "fp16",
    "half": "fp16",
    "bfloat16": "bf16",
    "fp16-mixed": "fp16",
}
# Weight formats that serve a model but cannot train one.
INFERENCE_ONLY_PRECISIONS = ("int8", "int4", "mxfp4")


class Optimizer(_StrEnum):
    ADAMW = "adamw"
    ADAMW_8BIT = "adamw-8bit"
    # bitsandbytes' paged AdamW (HF Trainer optim paged_adamw_32bit / paged_adamw_8bit): its
    # 32-bit or 8-bit states live in CUDA unified memory, on the GPU while it has room and evicted
    # to host RAM under memory pressure (memory.paged_state_bytes)
    PAGED_ADAMW = "paged-adamw"
    PAGED_ADAMW_8BIT = "paged-adamw-8bit"
    SGD = "sgd"
    LION = "lion"
    ADAFACTOR = "adafactor"


class Method(_StrEnum):
    FULL = "full"
    LORA = "lora"
    QLORA = "qlora"


class Recompute(_StrEnum):
    """Activation checkpointing: ``auto`` lets the strategy search choose.  ``block`` recomputes
    only as many of each pipeline stage's layers as the memory needs and keeps the rest whole
    (Megatron-LM ``--recompute-granularity full --recompute-method block --recompute-num-layers N``;
    torchtitan's per-layer activation checkpointing of every k-th layer)."""

    AUTO = "auto"
    NONE = "none"
    SELECTIVE = "selective"
    BLOCK = "block"
    FULL = "full"


class _Section(NumbersNotBools):
    # NaN and infinity are never a size, a count or a rate (``tokens: .inf`` used to reach the
    # estimator and come back as NaN hours); ``tokens: true`` is a mistake, not 1 token
    # (NumbersNotBools)
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    def changed(self, *keys: str) -> list[str]:
        """Those of ``keys`` whose values differ from their defaults.  By value, not by which
        fields a file set: variant() and a dumped spec write the defaults out and parse them
        again, so the fields set do not survive a round trip."""
        defaults = type(self).model_fields
        for key in keys:
            if not isinstance(key, str) or key not in defaults:
                # was: TypeError ("attribute name must be string") or KeyError from inside
                raise UnknownNameError(
                    "key",
                    key if isinstance(key, str) else repr(key),
                    list(defaults),
                    key_path="keys",
                )
        return [k for k in keys if getattr(self, k) != defaults[k].default]


# Activation names a user may give for model.mlp, by the MLP kind they make.
_MLP_ALIASES = {
    "swiglu": "gated",
    "geglu": "gated",
    "reglu": "gated",
    "silu-gated": "gated",
    "gelu": "plain",
    "relu": "plain",
    "gelu_new": "plain",
}
# Activations that run in either kind of MLP (config.json's hidden_act is "silu" for Llama's gated
# MLP and for plain ones alike): the gate, not the activation, decides.
_EITHER_MLP = ("silu", "swish", "gelu_pytorch_tanh", "gelu_fast", "quick_gelu", "tanh", "sigmoid")


class ModelSection(_Section):
    """The model: a preset name and/or explicit shape fields (explicit fields win)."""

    preset: str | None = None
    arch: Literal["decoder", "encoder", "cnn", "unet", "diffusion"] = "decoder"
    params: float | None = Field(default=None, gt=0, le=MAX_PARAMS)
    layers: int | None = Field(default=None, ge=1, le=MAX_LAYER_COUNT)
    hidden: int | None = Field(default=None, ge=1, le=MAX_HIDDEN)
    heads: int | None = Field(default=None, ge=1, le=MAX_LAYER_COUNT)
    kv_heads: int | None = Field(default=None, ge=1, le=MAX_LAYER_COUNT)
    # one attention head's width (config.json's head_dim); None: hidden / heads.  Some models'
    # heads are wider than that: Qwen3-30B-A3B 32 x 128 on a hidden size of 2,048, Gemma 2 and 3
    # 256.  Multi-head latent attention (DeepSeek-V2/V3) has queries and keys of one width and
    # values of another (qk_nope_head_dim + qk_rope_head_dim = 192, v_head_dim = 128): give their
    # mean, 160, which counts both the score and the value matmuls exactly
    head_dim: int | None = Field(default=None, ge=1, le=MAX_HIDDEN)
    # sliding-window attention (config.json's sliding_window and layer_types): the tokens a query
    # of a windowed layer attends back to, and how many of the layers are windowed (the rest attend
    # to the whole context; None: all of them).  Mistral 7B v0.1: 4,096 on every layer; Gemma 2:
    # 4,096 and gpt-oss: 128 on every other one.  A serving engine keeps a windowed layer's KV
    # cache for the window only; in training a fused attention kernel runs only its band
    sliding_window: int | None = Field(default=None, ge=1, le=MAX_SEQ_LEN)
    sliding_window_layers: int | None = Field(default=None, ge=0, le=MAX_LAYER_COUNT)
    seq_len: int | None = Field(default=None, ge=1, le=MAX_SEQ_LEN)
    vocab: int | None = Field(default=None, ge=0, le=MAX_SEQ_LEN)
    flops_per_sample: float | None = Field(default=None, gt=0, le=1e20)
    # a non-transformer's stored activations per training sample, GiB of 16-bit values (fp32 and tf32
    # store twice that); None: the preset's, else 0.1
    activation_gib_per_sample: float | None = Field(default=None, ge=0, le=1e6)
    # a convolutional network's share of its FLOPs in 3x3 convolutions of stride 1, which cuDNN
    # runs as Winograd transforms where the convolutions run on the CUDA cores (fp32, or a GPU
    # without tensor cores; efficiency.WINOGRAD_MULTIPLY_REDUCTION).  None: the preset's, else
    # ResNet-50's for a cnn and 0 for a U-Net or diffusion model
    conv3x3_share: float | None = Field(default=None, ge=0, le=1)
    largest_layer_params: float | None = Field(default=None, gt=0, le=MAX_PARAMS)
    # dropout probability during training; None (a custom model): assumed on, as in Korthikanti et
    # al. 2022's activation count.  0 drops the dropout masks from the stored activations.
    dropout: float | None = Field(default=None, ge=0, lt=1)
    # mixture of experts (all three, or none): routed experts per layer, experts per token, and the
    # parameters one token uses; FLOPs follow active_params, memory follows params
    experts: int | None = Field(default=None, ge=2, le=MAX_HIDDEN)
    experts_per_token: int | None = Field(default=None, ge=1, le=MAX_HIDDEN)
    active_params: float | None = Field(default=None, gt=0, le=MAX_PARAMS)
    # group-limited routing (both, or neither): the routed experts fall in ``expert_groups`` equal
    # groups and each token picks its experts from ``groups_per_token`` of them (DeepSeek-V3's
    # config.json n_group 8, topk_group 4: node-limited routing, at most 4 nodes a token)
    expert_groups: int | None = Field(default=None, ge=1, le=MAX_HIDDEN)
    groups_per_token: int | None = Field(default=None, ge=1, le=MAX_HIDDEN)
    # whether the output head shares the token embedding's matrix (config.json's
    # tie_word_embeddings); None (a custom model): assumed tied
    tied_embeddings: bool | None = None
    # the MLP (both, or neither): its width (config.json's intermediate_size; GPT-2's n_inner, 4 x
    # hidden by default) and kind: gated (SwiGLU with RMSNorm: Llama, Mistral, Qwen, Gemma; three
    # projections) or plain (GeLU: GPT-2, BERT, GPT-NeoX; two).  None: Korthikanti et al. 2022's
    # plain MLP four hidden sizes wide.  A gated MLP run as eager PyTorch operations stores more
    # activations than a fused one (training.framework; memory.py)
    ffn: int | None = Field(default=None, ge=1, le=MAX_HIDDEN)
    mlp: Literal["gated", "plain"] | None = None
    # the MLP's activation as config.json names it (activation_function, hidden_act; ACTIVATIONS):
    # GPT-2's gelu_new runs as separate kernels in an eager stack (efficiency.ARITHMETIC_GELU).
    # None: the preset's (GPT-2's gelu_new), else one fused kernel; name a fused one
    # (gelu_pytorch_tanh) to count a model whose code fuses it
    activation: str | None = Field(default=None, json_schema_extra={"choices": list(ACTIVATIONS)})
    # whether each norm's output feeds one projection: GPT-2's fused c_attn (GPT-NeoX's
    # query_key_value, Phi-3's qkv_proj and gate_up_proj).  None: the preset's, else separate
    # query, key and value projections (and a gated MLP's gate and up) as BERT and Llama run them;
    # eager autocast casts a norm's output once per projection (efficiency.AUTOCAST_STREAM_BYTES)
    fused_projections: bool | None = None

    @model_validator(mode="before")
    @classmethod
    def _activation_from_mlp(cls, data: Any) -> Any:
        """``mlp: gelu_new`` names the activation as well as the kind: kept as ``activation`` where
        that is not given (was read as a plain MLP with a fused GeLU)."""
        if isinstance(data, dict) and isinstance(data.get("mlp"), str) and "activation" not in data:
            name = canonical_activation(data["mlp"])
            if name in ACTIVATIONS and name in _MLP_ALIASES:
                return {**data, "activation": name}
        return data

    @field_validator("activation", mode="before")
    @classmethod
    def _activation_name(cls, value: Any) -> Any:
        """config.json's spelling, whatever its case, with ``-`` for ``_``; a name no model uses
        is refused with the nearest one."""
        if not isinstance(value, str):
            return value
        key = canonical_activation(value)
        if key not in ACTIVATIONS:
            close = suggest(key, list(ACTIVATIONS), 1)
            hint = f"did you mean {close[0]}? " if close else ""
            raise ValueError(
                f"{value.strip()!r} is not an activation config.json names; {hint}"
                f"one of {', '.join(ACTIVATIONS)}"
            )
        return key

    @field_validator("mlp", mode="before")
    @classmethod
    def _mlp_kind(cls, value: Any) -> Any:
        """The activation's own name reads as its kind: SwiGLU and GeGLU are gated MLPs, GeLU and
        ReLU plain ones (config.json's hidden_act with or without a gate)."""
        if not isinstance(value, str):
            return value
        key = value.strip().lower()
        if key in ("gated", "plain"):
            return key  # Gated: in any case, as its aliases (SwiGLU) are read
        if key in _EITHER_MLP:
            # was "'silu' is not one of gated, plain" and no fix
            raise ValueError(
                f"{value.strip()!r} is an activation that runs in either kind of MLP; write gated "
                "where the MLP has a gate projection (config.json's gate_proj: Llama's SwiGLU), "
                "plain where it has not"
            )
        if key not in _MLP_ALIASES:
            kinds = {**_MLP_ALIASES, "gated": "gated", "plain": "plain"}
            close = suggest(key, list(kinds), 1)
            if close and close[0] in _MLP_ALIASES:  # SwiGLU2: was "is not one of gated, plain"
                raise ValueError(
                    f"{value.strip()!r} is not one of gated, plain; did you mean "
                    f"{kinds[close[0]]} ({close[0]} is a {kinds[close[0]]} MLP)?"
                )
        return _MLP_ALIASES.get(key, value)  # else pydantic's refusal, with its nearest kind

    @model_validator(mode="after")
    def _mlp_fields(self) -> ModelSection:
        if (self.ffn is None) != (self.mlp is None):
            raise ValueError(
                "give both ffn (the MLP's width, config.json's intermediate_size) and mlp (gated "
                "for SwiGLU models such as Llama, plain for GeLU models such as GPT-2), or neither"
            )
        return self

    @model_validator(mode="after")
    def _moe_fields(self) -> ModelSection:
        moe = {
            "experts": self.experts,
            "experts_per_token": self.experts_per_token,
            "active_params": self.active_params,
        }
        if any(v is not None for v in moe.values()) and any(v is None for v in moe.values()):
            given = [k for k, v in moe.items() if v is not None]
            missing = [k for k, v in moe.items() if v is None]
            # (was the three names alone: a dense model given one of them was not told to drop it)
            raise ValueError(
                "a mixture-of-experts model needs experts, experts_per_token and active_params: "
                f"give {' and '.join(missing)} too, or drop {' and '.join(given)} for a dense "
                "model"
            )
        if self.experts and self.experts_per_token and self.experts_per_token > self.experts:
            raise ValueError(
                f"experts_per_token ({self.experts_per_token}) is more than experts ({self.experts})"
            )
        groups = (self.expert_groups, self.groups_per_token)
        if any(v is not None for v in groups) and (
            any(v is None for v in groups) or self.experts is None
        ):
            raise ValueError(
                "group-limited routing needs experts, expert_groups and groups_per_token"
            )
        if self.expert_groups and self.groups_per_token:
            if self.groups_per_token > self.expert_groups:
                raise ValueError(
                    f"groups_per_token ({self.groups_per_token}) is more than expert_groups "
                    f"({self.expert_groups})"
                )
            if self.experts and self.experts % self.expert_groups:
                raise ValueError(
                    f"experts ({self.experts}) do not split into {self.expert_groups} equal groups"
                )
        if self.active_params and self.params and self.active_params >= self.params:
            raise ValueError(
                f"active_params ({self.active_params:.3g}) must be below params ({self.params:.3g}): "
                "a token uses only its experts"
            )
        least = self.least_active_params()
        if self.active_params and least and self.active_params < ACTIVE_SLIP_SHARE * least:
            # was: 1e6 for Mixtral's 12.9e9 taken, the FLOPs cut 13x without a word
            raise FieldError(
                "active_params",
                f"{self.active_params:.3g} is less than what a token runs through in this shape: "
                f"its attention and embeddings, and {self.experts_per_token} of the "
                f"{self.experts} experts' share of the rest, at least {least:.3g}; set "
                "active_params to the model's active count (Mixtral 8x7B: 1.29e10)",
            )
        return self

    def least_active_params(self) -> float | None:
        """A floor under a mixture of experts' active parameters from its shape: the attention
        projections (query and output ``hidden x attention width`` each, key and value ``hidden x
        kv width`` each, every layer) and one embedding matrix are shared, and a token runs
        ``experts_per_token / experts`` of the rest (``total = shared + E·p``, ``active = shared +
        k·p``).  None without the shape."""
        if not (self.experts and self.experts_per_token and self.params):
            return None
        if not (self.layers and self.hidden and self.heads):
            return None
        attention = self.layers * self.hidden * (2.0 * self.attention_width + 2.0 * self.kv_width)
        shared = min(attention + float(self.vocab or 0) * self.hidden, self.params)
        return shared + self.experts_per_token / self.experts * (self.params - shared)

    @property
    def is_transformer(self) -> bool:
        return self.arch in ("decoder", "encoder")

    @property
    def takes_images(self) -> bool:
        """Whether the model trains on images: a convolutional, UNet or diffusion model, or an
        encoder without a vocabulary (a vision transformer reading image patches)."""
        return self.arch in ("cnn", "unet", "diffusion") or (
            self.arch == "encoder" and self.vocab == 0
        )

    @property
    def head_width(self) -> float:
        """One attention head's width: ``head_dim``, else ``hidden / heads``."""
        if self.head_dim is not None:
            return float(self.head_dim)
        return float(self.hidden or 1) / float(self.heads or 1)

    @property
    def attention_width(self) -> int:
        """The queries' (and the attention output's) width, ``heads x head_dim``: what the score
        and value matmuls and the attention's stored activations scale with.  The hidden size
        when the heads split it (``head_dim`` unset)."""
        if self.head_dim is None:
            return int(self.hidden or 1)
        return int(self.heads or 1) * self.head_dim

    @property
    def kv_width(self) -> float:
        """The keys' (and the values') width, ``kv_heads x head_dim``: one token's KV cache per
        layer is twice this many values."""
        return float(self.kv_heads or self.heads or 1) * self.head_width

    @property
    def windowed_layers(self) -> int:
        """How many layers attend within ``sliding_window`` (0 without one; all by default)."""
        if self.sliding_window is None:
            return 0
        if self.sliding_window_layers is None:
            return int(self.layers or 1)
        return self.sliding_window_layers

    @property
    def is_moe(self) -> bool:
        return self.experts is not None

    @property
    def expert_params(self) -> float:
        """Parameters in the routed experts, all layers: from total and active counts,
        ``total = shared + E·p``, ``active = shared + k·p``."""
        if not (self.experts and self.experts_per_token and self.active_params and self.params):
            return 0.0
        per_expert = (self.params - self.active_params) / (self.experts - self.experts_per_token)
        return per_expert * self.experts

    @property
    def expert_ffn(self) -> float:
        """One routed expert's MLP width (0 for a dense model): a gated expert holds
        ``3·hidden·width`` parameters in each of the layers (:attr:`expert_params`)."""
        if not (self.experts and self.layers and self.hidden):
            return 0.0
        return self.expert_params / self.experts / (3.0 * self.hidden * self.layers)


# An active count under this share of the shape's floor (ModelSection.least_active_params) is a
# slip; the margin leaves room for attention lighter than the floor assumes (DeepSeek's latent
# attention projects through narrow ranks).
ACTIVE_SLIP_SHARE = 0.5


class DataSection(_Section):
    tokens: float | None = Field(default=None, ge=1, le=MAX_TOKENS)
    samples: float | None = Field(default=None, ge=1, le=MAX_SAMPLES)
    epochs: float = Field(default=1.0, gt=0, le=MAX_EPOCHS)
    tokens_per_sample: float | None = Field(default=None, ge=1, le=MAX_SEQ_LEN)
    flops_per_sample: float | None = Field(default=None, gt=0, le=1e20)
    dataset: str = ""
    # evaluation passes during training: one every ``eval_every`` optimizer steps, each over
    # ``eval_tokens`` tokens (samples for a non-transformer); none when unset
    eval_every: int | None = Field(default=None, ge=1, le=10**9)
    eval_tokens: float | None = Field(default=None, ge=1, le=MAX_TOKENS)
    # image models (arch cnn, unet, diffusion, and an encoder without a vocabulary: a vision
    # transformer): who decodes and augments the images (planner.workload.data_loader).  ``cpu``
    # (unset: the default): DataLoader worker processes on the host, each preparing images at the
    # pipeline's per-core rate; ``gpu``: a GPU decoder (NVIDIA DALI, nvJPEG), no CPU cap.
    # ``augmentation`` picks the pipeline: ``classification`` (unset: the default; decode,
    # RandomResizedCrop, flip), ``mosaic`` (YOLO-style, four decodes per 640 px training image) or
    # ``preprocessed`` (arrays decoded ahead of training, e.g. medical volumes: no per-image decode
    # to wait on).  ``loader_workers_per_gpu``: worker processes (one host core each) feeding each
    # GPU; unset: the loader is assumed to keep up, and the estimate says how many that takes
    loader: Literal["cpu", "gpu"] | None = None
    augmentation: Literal["classification", "mosaic", "preprocessed"] | None = None
    loader_workers_per_gpu: int | None = Field(default=None, ge=1, le=MAX_LOADER_WORKERS)

    @model_validator(mode="after")
    def _eval_pair(self) -> DataSection:
        if self.tokens is not None and self.samples is not None:
            # tokens won silently and samples (with its epochs) was ignored
            raise FieldError(
                "samples",
                "is given with data.tokens, and both say how much data there is; give tokens "
                "(every token processed, epochs included), or samples with epochs and "
                "tokens_per_sample",
            )
        if self.tokens is not None and "epochs" in self.model_fields_set and self.epochs != 1.0:
            # was: read without a word, the job one pass over its tokens whatever the epochs
            raise FieldError(
                "epochs",
                f"is not used with data.tokens, which counts every token processed, epochs "
                f"included; write tokens: {self.tokens * self.epochs:.4g} for {self.epochs:g} "
                "epochs of these tokens, or give samples with epochs and tokens_per_sample",
            )
        if (self.eval_every is None) != (self.eval_tokens is None):
            raise ValueError(
                "give both eval_every (optimizer steps between evaluation passes) and "
                "eval_tokens (tokens per pass), or neither"
            )
        trained = (
            self.tokens
            if self.tokens is not None
            else self.samples * self.epochs * self.tokens_per_sample
            if self.samples is not None and self.tokens_per_sample
            else None
        )
        if (
            self.eval_tokens is not None
            and trained
            and self.eval_tokens > EVAL_PASS_MOST_TRAINED * trained
        ):
            # was: 1e15 tokens a pass, every step, for 1e8 trained: 1.2e9 hours without a word
            raise FieldError(
                "eval_tokens",
                f"{self.eval_tokens:.3g} tokens in one evaluation pass is more than "
                f"{EVAL_PASS_MOST_TRAINED:g}x all the data trained on ({trained:.3g} tokens); "
                "eval_tokens is the tokens of ONE pass over the evaluation set (e.g. 2e6), run "
                "every eval_every optimizer steps",
            )
        return self


# One evaluation pass over more than this many times the tokens trained on is a slip (the
# evaluation set's size is the tokens of one pass, not of all of them).
EVAL_PASS_MOST_TRAINED = 10.0


class ParallelismSection(_Section):
    """Pin parts of the strategy (benchmarks reproduce a published layout); unset = searched."""

    tensor: int | None = Field(default=None, ge=1, le=MAX_LAYER_COUNT)
    pipeline: int | None = Field(default=None, ge=1, le=MAX_LAYER_COUNT)
    zero: int | None = Field(default=None, ge=0, le=3)
    micro_batch: int | None = Field(default=None, ge=1, le=MAX_HIDDEN)
    # mixture of experts: the GPUs the routed experts are split over (Megatron's expert model
    # parallel size, experts not split by tensor parallelism; a stack with expert parallelism)
    expert: int | None = Field(default=None, ge=1, le=MAX_HIDDEN)
    # long sequences: the GPUs each sequence is split over, every one holding seq/context tokens of
    # every layer (Megatron's context parallel size; a stack with context parallelism)
    context: int | None = Field(default=None, ge=1, le=MAX_HIDDEN)


class TrainingSection(_Section):
    @model_validator(mode="before")
    @classmethod
    def _precision_names(cls, raw: Any) -> Any:
        """``amp-bf16`` and the other framework spellings read as their precision; ``int8``,
        ``int4`` and ``mxfp4`` are refused: they store weights for serving, and no training recipe
        the planner models runs on them (QLoRA's 4-bit frozen weights are ``method: qlora``; NVFP4,
        ``fp4``, is the lowest training precision modelled)."""
        if isinstance(raw, dict) and isinstance(raw.get("precision"), str):
            name = raw["precision"].strip().lower()
            if name in INFERENCE_ONLY_PRECISIONS:
                fp4 = (
                    " (4-bit floating-point training is modelled as NVIDIA's NVFP4: precision: fp4)"
                    if name == "mxfp4"
                    else ""
                )
                raise ValueError(
                    f"precision {name} stores weights for serving{fp4}; training runs in fp32, "
                    "tf32, fp16, bf16, pure-bf16, fp8 or fp4 (for 4-bit frozen weights use method: "
                    f"qlora; serve {name} weights with kind: inference)"
                )
            raw = {**raw, "precision": PRECISION_ALIASES.get(name, name)}
        offload = raw.get("offload") if isinstance(raw, dict) else None
        if offload is True or (isinstance(offload, str) and offload.strip().lower() == "cpu"):
            # DeepSpeed's offload_optimizer.device: cpu, or a YAML yes/true
            raise FieldError(
                "offload",
                f"{str(offload).lower()!r} is not one of none, optimizer, nvme; optimizer "
                "states in host (CPU) memory are offload: optimizer (DeepSpeed ZeRO-Offload), "
                "on the node's NVMe offload: nvme",
            )
        if isinstance(raw, dict) and "framework" in raw:
            from planner.workload.frameworks import (
                canonical_framework,
                close_alias,
                framework_names,
            )

            name = canonical_framework(str(raw["framework"]))
            if name is None and _is_serving_stack(str(raw["framework"])):
                # was: "unknown framework 'vllm'; did you mean llmc or llm.c?"
                raise FieldError(
                    "framework",
                    f"{str(raw['framework']).strip()!r} is a serving stack, and "
                    "training.framework is the stack a model trains on: one of "
                    f"{', '.join(framework_names())} (a serving stack is inference.framework, "
                    "in an inference workload)",
                )
            if name is None:  # reported at training.framework, with suggestions
                # a stack's other name is suggested where it is the nearest ("axolotol")
                near = close_alias(str(raw["framework"]))
                raise UnknownName(
                    "framework",
                    str(raw["framework"]),
                    [*framework_names(), *near],
                    key_path="framework",
                )
            raw = {**raw, "framework": name}
        return raw

    precision: Precision = Precision.BF16
    # the software stack (planner/data/frameworks.yaml): auto = the Hugging Face Trainer for
    # fine-tuning, the fastest calibrated stack ("any") for pre-training, eager PyTorch
    # ("pytorch-fsdp") for pre-training a model on images (frameworks.auto_framework)
    framework: str = "auto"
    optimizer: Optimizer = Optimizer.ADAMW
    method: Method = Method.FULL
    lora_rank: int = Field(default=16, ge=1, le=MAX_HIDDEN)
    # the layers LoRA adapts: every linear layer (PEFT "all-linear", QLoRA), the four attention
    # projections, or q and v only (the LoRA paper's and PEFT's default for Llama)
    lora_targets: Literal["all-linear", "attention", "qv"] = "all-linear"
    # the dropout on each adapter's input (PEFT and LitGPT ``lora_dropout``): above 0 every adapted
    # layer stores a dropped copy of its input and a 1-byte mask (memory.py); None: the stack's
    # default (memory.LORA_DROPOUT_BY_STACK: LitGPT 0.05, PEFT and the others 0)
    lora_dropout: float | None = Field(default=None, ge=0.0, lt=1.0)
    # QLoRA's 4-bit format: bitsandbytes NF4 with double quantisation (4.127 bits a weight) or
    # without (4.5 bits: ``bnb_4bit_use_double_quant=False``, LitGPT's ``bnb.nf4``); None: the
    # stack's default (memory.QLORA_QUANTIZATION_BY_STACK: LitGPT nf4, the others nf4-dq)
    quantization: Literal["nf4", "nf4-dq"] | None = None
    # the loss in pieces: torchtune's CEWithChunkedOutputLoss (its configs' loss since v0.3),
    # 16-bit logits upcast one eighth at a time, 6.5 bytes a logit at the loss in place of the
    # three fp32 copies of nn.CrossEntropyLoss (memory.CHUNKED_LOGIT_BYTES); torchtune only (named
    # as not used on another stack, as lora_dropout on method full and quantization off qlora)
    chunked_loss: bool = False
    # AdamW's update as one fused kernel (torch.optim.AdamW(fused=True), transformers' optim
    # adamw_torch_fused) or as torch's default foreach passes (adamw_torch:
    # efficiency.FOREACH_ADAMW_TRAFFIC_BYTES); None: the stack's (frameworks.yaml fused_optimizer)
    fused_optimizer: bool | None = None
    # optimizer states (and their fp32 master copy) kept and stepped in host memory (DeepSpeed
    # ZeRO-Offload); the GPU keeps the 16-bit weights and gradients.  ``nvme``: the states live on
    # the node's local NVMe instead, staged through pinned host buffers and stepped on the CPU
    # (DeepSpeed ZeRO-Infinity, offload_optimizer.device: nvme; ZeRO-3 only)
    offload: Literal["none", "optimizer", "nvme"] = "none"
    # the node's NVMe bandwidth under offload: nvme, GB/s (None: the DeepNVMe measurement,
    # efficiency.NVME_READ_GB_PER_S and NVME_WRITE_GB_PER_S)
    nvme_read_gb_per_s: float | None = Field(default=None, gt=0, le=1000)
    nvme_write_gb_per_s: float | None = Field(default=None, gt=0, le=1000)
    # each gradient applied as soon as the backward pass produces it, never all held at once
    # (torchtune optimizer_in_bwd; no gradient accumulation)
    optimizer_in_backward: bool = False
    # mixture of experts: the expert-parallel all-to-alls of one micro-batch run while another
    # micro-batch computes (DeepSeek-V3's DualPipe; Megatron-Core's overlap_moe_expert_parallel_comm),
    # so only what outlasts the matmuls shows
    overlap_all_to_all: bool = False
    # mixture of experts: the dispatcher sends a token once to each node holding one of its experts
    # and forwards it there over NVLink (DeepEP's normal kernels, HybridEP, DeepSeek-V3's own), in
    # place of one copy per expert over the network
    dispatch_per_node: bool = False
    global_batch_tokens: float | None = Field(default=None, gt=0, le=MAX_BATCH_TOKENS)
    global_batch_samples: float | None = Field(default=None, ge=1, le=MAX_BATCH_TOKENS)
    activation_checkpointing: Recompute = Recompute.AUTO
    flash_attention: bool | None = None  # None: where the GPU supports it (Ampere and newer)
    # the fused attention kernel's class (efficiency.ATTENTION_KERNELS) where it is not the
    # stack's: fa1 for FlashAttention-1 (flash-attn 1.x; PyTorch's scaled_dot_product_attention
    # before 2.2); None: the stack's (frameworks.yaml ``attention``)
    attention_kernel: Literal["cudnn", "fa2", "fa1"] | None = None
    parallelism: ParallelismSection = ParallelismSection()

    @model_validator(mode="after")
    def _one_batch(self) -> TrainingSection:
        if self.global_batch_tokens is not None and self.global_batch_samples is not None:
            # global_batch_samples won silently
            raise FieldError(
                "global_batch_samples",
                "is given with global_batch_tokens, and both size the batch; give one "
                "(samples: sequences a step, tokens: sequences x their length)",
            )
        return self

    @model_validator(mode="after")
    def _qlora_precision(self) -> TrainingSection:
        """QLoRA dequantises its 4-bit frozen weights to 16 bits for every matmul (bitsandbytes'
        compute dtype), so no matmul runs in fp8 or fp4: the estimate sped them up for nothing."""
        if self.method is Method.QLORA and self.precision in (Precision.FP8, Precision.FP4):
            low = self.precision.value
            raise FieldError(
                "precision",
                f"{low} with method: qlora: QLoRA dequantises its 4-bit frozen weights to 16 bits "
                f"for every matmul, so none runs in {low}; use precision: bf16 (fp16 on a GPU "
                f"without bf16), or method: lora to train in {low}",
            )
        return self

    @model_validator(mode="after")
    def _stack_recipes(self) -> TrainingSection:
        """A stack trains only with the methods and in the precisions it has recipes for
        (frameworks.yaml ``methods``, ``precisions``): llm.c trains every weight and has no fp8
        recipe, and its factor, measured on its own bf16 GPT-2 kernels, sped up an fp8 LoRA
        fine-tune to the whole 16-bit peak."""
        from planner.workload.frameworks import load_frameworks

        profiles = load_frameworks()
        stack = profiles.get(self.framework)
        if stack is None:  # auto and any stand for the usual stacks
            return self
        for key, value in stack.missing_recipes(self.method.value, self.precision.value):
            others = [
                p.name
                for p in profiles.values()
                if p.name != "any" and value in (p.recipes(key) or (value,))
            ]
            raise FieldError(
                key,
                f"{value} with framework: {stack.name}: {stack.name} has no {value} recipe "
                f"(its {key}s: {', '.join(stack.recipes(key) or ())}); use one of those, or a "
                f"stack that runs {value}: {', '.join(others)}",
            )
        return self

    @model_validator(mode="after")
    def _paged_optimizer(self) -> TrainingSection:
        """A paged optimizer keeps its states in CUDA unified memory next to the GPU that steps
        them; ``offload`` moves them to the host for a CPU optimizer instead (DeepSpeed CPU Adam),
        where bitsandbytes does not page (its CPU tensors fall back to plain ones)."""
        if self.optimizer in _PAGED_OPTIMIZERS and self.offload != "none":
            raise ValueError(
                f"optimizer {self.optimizer.value} pages its states between GPU and host memory "
                f"itself and does not combine with offload: {self.offload} (DeepSpeed's CPU "
                f"optimizer); drop training.offload, or use optimizer: adamw with offload: "
                f"{self.offload}"
            )
        return self

    @model_validator(mode="after")
    def _attention_kernel(self) -> TrainingSection:
        """``attention_kernel`` names the fused attention kernel that ``flash_attention: false``
        turns off: the two say opposite things."""
        if self.attention_kernel is not None and self.flash_attention is False:
            raise ValueError(
                f"attention_kernel: {self.attention_kernel} names a fused attention kernel, and "
                "flash_attention: false runs attention unfused; drop one of the two"
            )
        return self

    @model_validator(mode="after")
    def _nvme_offload(self) -> TrainingSection:
        """NVMe offload is DeepSpeed ZeRO-Infinity: ZeRO-3 only, no pipeline parallel, a stack that
        runs DeepSpeed; its bandwidths mean nothing without it."""
        nvme_keys = [
            k for k in ("nvme_read_gb_per_s", "nvme_write_gb_per_s") if getattr(self, k) is not None
        ]
        if self.offload != "nvme":
            if nvme_keys:
                raise ValueError(
                    f"{nvme_keys[0]} applies only with offload: nvme (the optimizer states on "
                    "local NVMe); drop it or set offload: nvme"
                )
            return self
        # DeepSpeed config docs: "NVMe offloading is available only with ZeRO stage 3"
        pin = self.parallelism
        if pin.zero is not None and pin.zero != 3:
            raise ValueError(
                f"offload: nvme needs ZeRO stage 3 (DeepSpeed offloads to NVMe only under "
                f"ZeRO-3), not parallelism.zero: {pin.zero}; set zero: 3 or offload: optimizer"
            )
        if pin.pipeline is not None and pin.pipeline > 1:
            raise ValueError(
                "offload: nvme runs under DeepSpeed ZeRO-3, which does not combine with pipeline "
                "parallel; drop parallelism.pipeline or use offload: optimizer"
            )
        if self.framework not in _NVME_FRAMEWORKS:
            raise ValueError(
                f"offload: nvme is DeepSpeed ZeRO-Infinity, which framework {self.framework} does "
                f"not run; use framework {', '.join(sorted(_NVME_FRAMEWORKS - {'any'}))}, or "
                "offload: optimizer"
            )
        if pin.tensor is not None and pin.tensor > 1 and self.framework in _DEEPSPEED_NVME:
            # DeepSpeed's AutoTP tensor parallelism runs with ZeRO 0-2 ("Automatic Tensor
            # Parallelism (Training)"); the Hugging Face Trainer reaches NVMe through DeepSpeed
            raise FieldError(
                "offload",
                "nvme runs under DeepSpeed ZeRO-3, which DeepSpeed's tensor parallelism (AutoTP) "
                "does not combine with; drop parallelism.tensor or use offload: optimizer",
            )
        return self


# bitsandbytes' paged optimizers (states in CUDA unified memory).
_PAGED_OPTIMIZERS = frozenset({Optimizer.PAGED_ADAMW, Optimizer.PAGED_ADAMW_8BIT})

# The stacks that run DeepSpeed ZeRO-Infinity (the Hugging Face Trainer through its DeepSpeed
# integration); ``any`` is the best calibrated stack, which may be DeepSpeed; ``auto`` where it
# picks one of them (_check_nvme_stack).
_NVME_FRAMEWORKS = frozenset({"auto", "any", "deepspeed", "hf-trainer"})
# Of them, those that reach NVMe through DeepSpeed itself, whose tensor parallelism (AutoTP) does
# not combine with ZeRO-3 (runs_layout)
_DEEPSPEED_NVME = frozenset({"deepspeed", "hf-trainer"})


class ServingSlo(_Section):
    """Latency targets a serving plan must meet at its load (95th percentiles, milliseconds)."""

    ttft_ms_p95: float | None = Field(default=None, gt=0, le=MAX_LATENCY_MS["ttft_ms_p95"])
    tpot_ms_p95: float | None = Field(default=None, gt=0, le=MAX_LATENCY_MS["tpot_ms_p95"])
    e2e_ms_p95: float | None = Field(default=None, gt=0, le=MAX_LATENCY_MS["e2e_ms_p95"])

    def conflict(self) -> str | None:
        """Why the targets cannot all hold, or None: a request's end-to-end latency includes its
        time to first token, so a TTFT target longer than the end-to-end one is a slip (was:
        quoted, the looser target silently moot)."""
        ttft, e2e = self.ttft_ms_p95, self.e2e_ms_p95
        if ttft is not None and e2e is not None and ttft > e2e:
            return (
                f"a p95 time to first token of {ttft:g} ms is longer than the p95 end-to-end "
                f"latency of {e2e:g} ms, which includes it"
            )
        return None

    @model_validator(mode="after")
    def _targets_agree(self) -> ServingSlo:
        for key in ("ttft_ms_p95", "tpot_ms_p95", "e2e_ms_p95"):
            value = getattr(self, key)
            if value is not None and value < MIN_LATENCY_MS:
                # 0.06 for 60 ms: was quoted, "no fleet meets the latency targets" (exit 3), where
                # --p95-tpot 0.06 gets the fix
                raise FieldError(
                    key,
                    f"{value:g} ms is below what any GPU service reaches (the targets are in "
                    f"milliseconds): did you mean {value * 1000:g} ms ({value:g} s)?",
                )
        problem = self.conflict()
        if problem is not None:
            raise FieldError("ttft_ms_p95", problem + "; lower ttft_ms_p95 or raise e2e_ms_p95")
        return self


class InferenceSection(_Section):
    precision: Precision = Precision.BF16
    # serving stack (planner/data/serving_stacks.yaml); auto = vLLM
    framework: str = "auto"
    # KV-cache format: 16-bit, or fp8 (vLLM/TensorRT-LLM kv_cache_dtype fp8)
    kv_precision: Literal["fp16", "bf16", "fp8"] = "fp16"
    prompt_tokens: float = Field(default=512, ge=1, le=MAX_SEQ_LEN)
    output_tokens: float = Field(default=256, ge=1, le=MAX_SEQ_LEN)
    # the lengths' 95th percentiles (None: every request is as long as the mean)
    prompt_tokens_p95: float | None = Field(default=None, ge=1, le=MAX_SEQ_LEN)
    output_tokens_p95: float | None = Field(default=None, ge=1, le=MAX_SEQ_LEN)
    slo: ServingSlo = ServingSlo()
    max_batch: int | None = Field(default=None, ge=1, le=MAX_SERVING_BATCH)
    # beam search: hypotheses each request decodes per step (1: greedy decoding or sampling)
    beam_width: int = Field(default=1, ge=1, le=MAX_BEAM_WIDTH)
    tokens_per_s: float | None = Field(
        default=None, gt=0, le=1e9
    )  # serving: output tokens/s to sustain
    requests_per_s: float | None = Field(
        default=None, gt=0, le=1e9
    )  # serving, alternative to tokens_per_s
    hours: float | None = Field(default=None, gt=0, le=MAX_SERVING_HOURS)  # serving duration
    tokens: float | None = Field(
        default=None, gt=0, le=1e16
    )  # batch job: output tokens to generate
    requests: float | None = Field(default=None, gt=0, le=1e16)  # batch job, alternative to tokens
    # vision and diffusion models (arch cnn, unet, diffusion): a service of images_per_s for hours,
    # or a batch job of images; the input side in pixels (default: the preset's), denoising steps
    # and classifier-free guidance (diffusion), the engine's largest batch, and the Jetson's DLAs
    images_per_s: float | None = Field(default=None, gt=0, le=1e9)
    images: float | None = Field(default=None, gt=0, le=1e16)
    resolution: int | None = Field(default=None, ge=16, le=16384)
    steps: int | None = Field(default=None, ge=1, le=10_000)
    guidance: bool = True
    batch: int | None = Field(default=None, ge=1, le=65_536)
    dla: bool = False

    @field_validator("framework")
    @classmethod
    def _known_framework(cls, value: str) -> str:
        from planner.workload.serving import serving_stack

        name = value.strip().lower()
        from planner.workload.vision_serving import VISION_ENGINE_NAMES

        if name in VISION_ENGINE_NAMES:  # checked against the model's kind in WorkloadSpec
            return name
        try:
            serving_stack(name)
        except UnknownNameError as e:  # a ValueError names the key path in the file
            from planner.workload.frameworks import canonical_framework

            serving_alias = aliased_name("serving framework", name, e.choices)
            if serving_alias is None and canonical_framework(name) not in (None, "auto"):
                # was: "unknown serving framework 'megatron'; did you mean auto?"
                raise ValueError(
                    f"{value.strip()!r} is a training stack, and inference.framework is the "
                    f"stack that serves the model: one of {', '.join(e.choices)}"
                ) from None
            raise ValueError(f"{e.detail}; {e.hint}") from None
        return name

    @field_validator("beam_width", mode="before")
    @classmethod
    def _whole_beam_count(cls, value: object) -> object:
        fix = (
            "set inference.beam_width to a whole number of beams: 1 for greedy decoding or "
            f"sampling, 4 for MLPerf GPT-J's beam search (at most {MAX_BEAM_WIDTH})"
        )
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"expected a whole number of beams, got {value!r}; {fix}")
        if value != int(value) or not 1 <= value <= MAX_BEAM_WIDTH:
            raise ValueError(f"expected a whole number of beams, got {value!r}; {fix}")
        return int(value)

    @field_validator("prompt_tokens_p95", "output_tokens_p95")
    @classmethod
    def _percentile_above_mean(cls, value: float | None, info: ValidationInfo) -> float | None:
        mean_name = str(info.field_name).removesuffix("_p95")
        mean = info.data.get(mean_name)
        if value is not None and mean is not None and value < mean:
            raise ValueError(
                f"{value:g} is below the mean {mean_name} ({mean:g}); the 95th percentile of a "
                "length is at least its mean for the usual right-skewed lengths"
            )
        return value

    @property
    def serving(self) -> bool:
        return (
            self.tokens_per_s is not None
            or self.requests_per_s is not None
            or self.images_per_s is not None
        )

    @property
    def load_images_per_s(self) -> float | None:
        """Images per second a vision or diffusion service must carry (a request is an image)."""
        return self.images_per_s if self.images_per_s is not None else self.requests_per_s

    @property
    def total_images(self) -> float:
        """Images a vision or diffusion batch job processes (a request is an image)."""
        return self.images if self.images is not None else (self.requests or 0.0)

    @property
    def load_requests_per_s(self) -> float | None:
        """Requests per second a service must carry (None: a batch job)."""
        if self.requests_per_s is not None:
            return self.requests_per_s
        if self.tokens_per_s is not None:
            return self.tokens_per_s / self.output_tokens
        return None

    @property
    def output_tokens_per_s(self) -> float:
        if self.tokens_per_s is not None:
            return self.tokens_per_s
        return (self.requests_per_s or 0.0) * self.output_tokens

    @property
    def total_output_tokens(self) -> float:
        if self.tokens is not None:
            return self.tokens
        return (self.requests or 0.0) * self.output_tokens


# The file a WorkloadSpec being validated comes from, for its errors (WorkloadSpec.__init__):
# parse_workload sets it around one validation; a spec made in Python is named as its call.
_SOURCE: contextvars.ContextVar[str] = contextvars.ContextVar(
    "workload_source", default="WorkloadSpec(...)"
)


# What a transformer's shape keys hold, Llama 2 7B's values as the example (its config.json:
# num_hidden_layers, hidden_size, num_attention_heads, max_position_embeddings).
_SHAPE_EXAMPLES = {
    "layers": "32 (num_hidden_layers)",
    "hidden": "4096 (hidden_size)",
    "heads": "32 (num_attention_heads)",
    "seq_len": "4096 (the tokens a sequence holds; max_position_embeddings at most)",
}


class WorkloadSpec(_Section):
    """One workload, validated and with its model preset resolved.

    Frozen and hashable by value (every section is frozen, ``sources`` a tuple): the estimator
    memoises what it derives from a spec keyed on the spec itself, and never writes into it.
    """

    name: str
    kind: Kind
    description: str = ""
    model: ModelSection
    data: DataSection | None = None
    training: TrainingSection | None = None
    inference: InferenceSection | None = None
    pieces: int = Field(default=1, ge=1, le=MAX_PIECES)
    sources: tuple[str, ...] = ()

    @field_validator("name")
    @classmethod
    def _named(cls, value: str) -> str:
        if not value.strip():  # was: reports headed "on 1 x H100: fits", naming no workload
            raise ValueError(
                "is blank: give the workload a name (in a workload file, leaving name out uses "
                "the file's name)"
            )
        return value

    def __init__(self, /, **fields: Any) -> None:
        """``WorkloadSpec(name=..., kind=..., model=..., data=...)`` in a notebook is checked as a
        workload file is: a bad or missing field is a ConfigError naming it (pydantic's
        ValidationError escaped raw).  pydantic runs this for ``model_validate`` too, so a file
        read by :func:`parse_workload` is named by the file it set in :data:`_SOURCE`."""
        try:
            super().__init__(**fields)
        except ValidationError as e:
            error = config_error(e, WorkloadSpec, _SOURCE.get(), _WORDING)
            if "trials" in fields and error.key_path == "pieces":
                # the file's own key: was "pieces: must be at least 1" to a file that said trials
                error = ConfigError(
                    error.detail, file=error.file, key_path="trials", hint=error.hint
                )
            raise error from None

    def variant(self, changes: Mapping[str, Any] | None = None, /, **more: Any) -> WorkloadSpec:
        """A validated copy with ``changes`` (a mapping, as a workload file's) and ``more`` merged
        in, nested sections key by key::

            spec.variant(name="gpt2-xl-lora", training={"method": "lora", "lora_rank": 8})
            spec.variant({"training": {"method": "lora"}})

        ``trials`` is another name for ``pieces``, as in a file.  Bad values raise
        :class:`ConfigError` naming the field, as a workload file would.
        """
        if changes is not None and not isinstance(changes, Mapping):
            # was: TypeError ("takes 1 positional argument but 2 were given") for a dict; now the
            # dict is taken, and anything else named
            raise ConfigError(
                f"expected the changes as a mapping or as keywords, got {changes!r}",
                key_path="changes",
                hint='e.g. spec.variant(training={"method": "lora"}) or '
                'spec.variant({"training": {"method": "lora"}})',
            )
        merged = {**(changes or {}), **more}
        if "trials" in merged:
            # the dump writes pieces: trials= replaces it (was "trials: is another name for
            # pieces, also given", a key the caller never gave)
            if "pieces" in merged:
                raise ConfigError(
                    "trials is another name for pieces, also given: keep one",
                    key_path="trials",
                    hint="give pieces= (or trials=) once",
                )
            merged["pieces"] = merged.pop("trials")
        raw = _deep_merge(self.model_dump(mode="json", exclude_none=True), merged)
        return parse_workload(raw, file=f"<variant of {self.name}>")

    @model_validator(mode="before")
    @classmethod
    def _expand(cls, raw: Any) -> Any:
        if not isinstance(raw, dict):
            return raw
        raw = dict(raw)
        if "trials" in raw:
            if "pieces" in raw:
                raise FieldError("trials", "is another name for pieces, also given: keep one")
            raw["pieces"] = raw.pop("trials")
        model = raw.get("model")
        if isinstance(model, str):
            model = {"preset": model}
        if isinstance(model, dict) and model.get("preset") is not None:
            preset = get_preset(str(model["preset"]))
            if preset is None:
                raise UnknownName(
                    "model preset",
                    str(model["preset"]),
                    presets(),
                    key_path="model",
                    hint=with_other_model_fix,
                )
            filled: dict[str, Any] = {
                "arch": preset.arch,
                "params": preset.params,
                "layers": preset.layers,
                "hidden": preset.hidden,
                "heads": preset.heads,
                "kv_heads": preset.kv_heads,
                "head_dim": preset.head_dim,
                "seq_len": preset.seq_len,
                "vocab": preset.vocab,
                "flops_per_sample": preset.flops_per_sample,
                "activation_gib_per_sample": preset.activation_gib_per_sample,
                "conv3x3_share": preset.conv3x3_share,
                "largest_layer_params": preset.largest_layer_params,
                "dropout": preset.dropout,
                "experts": preset.experts,
                "experts_per_token": preset.experts_per_token,
                "active_params": preset.active_params,
                "tied_embeddings": preset.tied_embeddings,
                "ffn": preset.ffn,
                "mlp": preset.mlp,
                "activation": preset.activation,
                "fused_projections": preset.fused_projections,
                "expert_groups": preset.expert_groups,
                "groups_per_token": preset.groups_per_token,
                "sliding_window": preset.sliding_window,
                "sliding_window_layers": preset.sliding_window_layers,
            }
            filled = {k: v for k, v in filled.items() if v is not None}
            given = {k: v for k, v in model.items() if v is not None}
            # the keys given a value other than the preset's (a file may repeat the preset's own)
            changed = {k for k, v in given.items() if filled.get(k) != v}
            reshaped = sorted(changed & _SHAPE_KEYS)
            # a mixture of experts' counts move with its shape and with its experts too
            regrouped = sorted(changed & (_SHAPE_KEYS | _EXPERT_COUNT_KEYS))
            if preset.experts and regrouped and not {"params", "active_params"} <= given.keys():
                raise FieldError(
                    "model.params",
                    f"{preset.name} is a mixture of experts, and changing its "
                    f"{' and '.join(regrouped)} changes its total and active parameters in ways "
                    "the shape alone does not give; set model.params and model.active_params "
                    "for the changed model too",
                )
            if (
                "layers" in changed
                and isinstance(given["layers"], int)
                and not isinstance(given["layers"], bool)
                and given["layers"] > 0
                and "sliding_window_layers" not in given
                and preset.sliding_window_layers is not None
                and preset.layers
            ):
                # the preset's windowed layers are a share of its own depth (Gemma 2 and gpt-oss:
                # every other layer, Mistral 7B v0.1 all): a model of other depth keeps the share,
                # not the preset's count, which could exceed its layers or leave most full
                layers = given["layers"]
                given["sliding_window_layers"] = min(
                    round(preset.sliding_window_layers * layers / preset.layers), layers
                )
            if "params" not in given and reshaped:
                params = _reshaped_params(filled, {**filled, **given})
                if params is not None:
                    given["params"] = params
            filled.update(given)
            filled["preset"] = preset.name
            model = filled
        if model is not None:
            raw["model"] = model
        if isinstance(raw.get("sources"), str):
            raw["sources"] = [raw["sources"]]
        return raw

    @model_validator(mode="after")
    def _check(self) -> WorkloadSpec:
        m = self.model
        if m.params is None:
            raise FieldError("model.params", "is required (or name a preset: model: gpt2-xl)")
        if not m.is_transformer and m.seq_len is not None:
            # was ignored: a vision or diffusion model's input is an image
            raise FieldError(
                "model.seq_len",
                f"applies to transformers, and a {m.arch} model takes images; drop it "
                "(inference.resolution sets an image's side in pixels)",
            )
        if m.is_transformer and m.activation_gib_per_sample is not None:
            # was ignored: 100 GiB an image "fitted" a GPT-2 XL in 29.6 GiB
            raise FieldError(
                "model.activation_gib_per_sample",
                f"applies to image models (arch cnn, unet, diffusion); a {m.arch} transformer's "
                "activations follow from its shape and the sequence (Korthikanti et al. 2022): "
                "drop it",
            )
        if (
            not m.is_transformer
            and self.data is not None
            and self.data.tokens_per_sample is not None
        ):
            # was ignored: a CNN trains on images, sized by model.flops_per_sample
            raise FieldError(
                "data.tokens_per_sample",
                f"applies to transformers, and a {m.arch} model takes images: drop it "
                "(model.flops_per_sample sets what one image costs)",
            )
        if m.is_transformer and m.conv3x3_share is not None:
            # would be ignored: a transformer's matmuls are no convolutions
            raise FieldError(
                "model.conv3x3_share",
                f"applies to convolutional networks (arch cnn, unet, diffusion), not a {m.arch} "
                "transformer: drop it",
            )
        if m.is_transformer:
            for key in ("layers", "hidden", "heads", "seq_len"):
                if getattr(m, key) is None:
                    # was the requirement alone, no example of the value
                    raise FieldError(
                        f"model.{key}",
                        f"is required for a {m.arch} transformer: give it, e.g. {key}: "
                        f"{_SHAPE_EXAMPLES[key]}, or name a preset (model: llama-2-7b)",
                    )
            if m.arch == "decoder" and m.vocab == 0:
                # was: taken, the embeddings and the output head dropped from the weights
                raise FieldError(
                    "model.vocab",
                    "0 leaves a decoder language model no embeddings and no output head: give "
                    "the tokenizer's vocabulary (config.json's vocab_size, e.g. 32000), or leave "
                    "vocab out for the preset's (0 is for an encoder reading image patches)",
                )
            _check_shape(m, self.training)
            _check_params(m)
            _check_positions(self)
        if (
            m.largest_layer_params is not None
            and m.params is not None
            and m.largest_layer_params > m.params
        ):
            raise FieldError(
                "model.largest_layer_params",
                f"{m.largest_layer_params:.3g} is more than the whole model's {m.params:.3g} "
                "parameters (model.params); one layer is a part of the model: check the two values",
            )
        _check_context(self)
        _check_stack_layout(self)
        _check_nvme_stack(self)
        if self.kind is Kind.INFERENCE and self.training is not None:
            raise FieldError(
                "training",
                "sets how a model trains, and this is an inference workload (kind: inference); "
                "drop the training section (inference: sets the serving stack and precision)",
            )
        if self.kind is Kind.INFERENCE and self.data is not None:
            raise FieldError(
                "data",
                "sets what a model trains on, and this is an inference workload (kind: "
                "inference); drop the data section (inference: sets the load: tokens_per_s and "
                "hours for a service, tokens or requests for a batch job)",
            )
        if self.kind is not Kind.INFERENCE and self.inference is not None:
            raise FieldError(
                "inference",
                f"sets how a model is served, and this is a training workload (kind: "
                f"{self.kind.value}); drop the inference section, or make a separate workload "
                "with kind: inference for serving it",
            )
        method = self.training.method.value if self.training is not None else "full"
        if self.kind is Kind.PRETRAIN and method in ("lora", "qlora"):
            # was: QLoRA "pre-training" quoted ~30% below the real job, on frozen random weights
            raise FieldError(
                "training.method",
                f"{method} trains adapters on a pre-trained model's frozen weights, and "
                "pre-training (kind: pretrain) starts from random ones: train every weight "
                "(method: full), or, for continued pre-training with adapters, kind: finetune",
            )
        if self.kind is Kind.INFERENCE and not m.is_transformer:
            return self._check_vision_inference()
        if self.kind is Kind.INFERENCE and m.arch == "encoder":
            # was: BERT "served" as a text generator, a KV cache and a time per output token
            raise FieldError(
                "model",
                f"{m.preset or 'the model'} is an encoder (bidirectional attention): it reads a "
                "text whole and generates no tokens, and inference workloads here are text "
                "generation (a decoder model) or images; serving an encoder for embeddings or "
                "classification is not modelled: name a decoder to generate text (model: "
                "llama-3-8b; planner models lists them), or estimate the encoder's training",
            )
        if self.kind is Kind.INFERENCE:
            inf = self.inference
            if inf is not None:
                _no_vision_keys(inf, m.arch)
                _one_load(inf)
                _check_request_length(inf, m)
            if inf is None:
                raise FieldError(
                    "inference",
                    "is required for kind: inference; e.g. inference: {tokens: 1e9} for a batch "
                    "job, or {tokens_per_s: 2000, hours: 730} for a service",
                )
            if not inf.serving and inf.total_output_tokens <= 0:
                raise FieldError(
                    "inference",
                    "needs tokens_per_s (or requests_per_s) and hours, or tokens (or requests)",
                )
            if inf.serving and inf.hours is None:
                raise FieldError(
                    "inference.hours", "is required with tokens_per_s / requests_per_s"
                )
            _service_or_batch(inf, self.pieces, "tokens")
            return self
        d = self.data
        if d is None:
            raise FieldError(
                "data",
                f"is required for kind: {self.kind}; say how much it trains on, e.g. "
                "data: {tokens: 3.1e8} or data: {samples: 1.28e6, epochs: 90}",
            )
        if m.is_transformer:
            if d.tokens is None and d.samples is None:
                raise FieldError("data", "needs tokens, or samples (x epochs)")
            for where, value in (("data", d.flops_per_sample), ("model", m.flops_per_sample)):
                if value is None:
                    continue
                # was ignored: a transformer's FLOPs follow from its shape and the tokens
                tokens = "data.samples" if m.takes_images else "data.tokens"
                raise FieldError(
                    f"{where}.flops_per_sample",
                    f"applies to image models (arch cnn, unet, diffusion); a {m.arch} "
                    "transformer's FLOPs follow from its shape (model.params, layers, hidden) "
                    f"and {tokens}: drop it",
                )
            if not m.takes_images:
                self._check_loader_keys(d, m.arch)
            self._check_batch()
        else:
            if d.samples is None:
                raise FieldError("data.samples", f"is required for a {m.arch} model")
            if (d.flops_per_sample or m.flops_per_sample) is None:
                raise FieldError("data.flops_per_sample", f"is required for a {m.arch} model")
        if d.loader == "gpu" and d.loader_workers_per_gpu is not None:
            raise FieldError(
                "data.loader_workers_per_gpu",
                "counts CPU DataLoader workers, and data.loader: gpu decodes on the GPU "
                "with no CPU cap: drop one of them",
            )
        return self

    @staticmethod
    def _check_loader_keys(d: DataSection, arch: str) -> None:
        """The image loader's keys describe decoding images; a transformer reads tokens."""
        given = [
            key
            for key, value in (
                ("data.loader", d.loader),
                ("data.augmentation", d.augmentation),
                ("data.loader_workers_per_gpu", d.loader_workers_per_gpu),
            )
            if value is not None
        ]
        if given:
            article = "an" if arch[:1] in "aeiou" else "a"
            raise FieldError(
                given[0],
                "applies to image models (arch cnn, unet, diffusion, or an encoder with vocab: 0, "
                f"a vision transformer); {article} {arch} model with a vocabulary reads tokenised "
                "text: drop it",
            )

    def _check_batch(self) -> None:
        """A global batch holds at least one whole sequence, and a pinned micro-batch is a slice
        of the global batch (the estimate would otherwise round the batch up silently, or fill
        memory with sequences the batch does not have), and the data at least one sequence and
        one global batch."""
        seq = self.seq_len
        tokens = self.tokens_per_piece
        data_key = "data.tokens" if self.data is not None and self.data.tokens else "data.samples"
        if 0 < tokens < seq:
            # was: --tokens 1.5 (meant as 1.5B) quoted a 70B fine-tune at $1.34
            raise FieldError(
                data_key,
                f"{tokens:g} tokens is less than one sequence of {seq:,} tokens (model.seq_len): "
                f"there is nothing to train on; check the unit (did you mean {tokens:g}M or "
                f"{tokens:g}B tokens?)",
            )
        t = self.training
        if t is None:
            return
        if t.global_batch_tokens is not None and t.global_batch_tokens < seq:
            raise FieldError(
                "training.global_batch_tokens",
                f"{t.global_batch_tokens:g} tokens is less than one sequence of {seq:,} tokens "
                f"(model.seq_len); give at least {seq} (sequences x {seq} tokens), or "
                "global_batch_samples in sequences",
            )
        step = (
            t.global_batch_tokens
            if t.global_batch_tokens is not None
            else t.global_batch_samples * seq
            if t.global_batch_samples is not None
            else None
        )
        if step is not None and tokens > 0 and step > tokens * (1 + 1e-9):
            # was: a step of 1e9 tokens over 3.1e8 accepted: no optimizer step ever completes
            given = (
                "training.global_batch_tokens"
                if t.global_batch_tokens is not None
                else "training.global_batch_samples"
            )
            raise FieldError(
                given,
                f"a global batch of {step:,.0f} tokens is more than the {tokens:,.0f} the job "
                f"trains on ({data_key}), so no optimizer step would complete; check the unit "
                "(a batch is usually 0.5M-16M tokens), or the data's size",
            )
        micro = t.parallelism.micro_batch
        if micro is None:
            return
        if t.global_batch_samples is not None:
            batch, given = t.global_batch_samples, "training.global_batch_samples"
        elif t.global_batch_tokens is not None:
            batch, given = t.global_batch_tokens / seq, "training.global_batch_tokens"
        else:
            return  # the stack's default batch: the estimate sizes it around the micro-batch
        if micro > batch:
            raise FieldError(
                "training.parallelism.micro_batch",
                f"micro-batch {micro} sequences is more than the global batch of {batch:g} "
                f"sequences ({given}); a micro-batch is a slice of the global batch: give at "
                f"most {max(1, math.floor(batch))}, or a larger {given.split('.')[-1]}",
            )

    def _check_vision_inference(self) -> WorkloadSpec:
        """A vision or diffusion inference workload: images, not tokens."""
        inf = self.inference
        arch = self.model.arch
        if inf is None:
            raise FieldError(
                "inference",
                "is required for kind: inference; e.g. inference: {images: 1e6} for a batch job, "
                "or {images_per_s: 30, hours: 730} for a service",
            )
        for key in ("tokens_per_s", "tokens", "prompt_tokens_p95", "output_tokens_p95"):
            if getattr(inf, key) is not None:
                raise FieldError(
                    f"inference.{key}",
                    f"counts tokens; a {arch} model serves images: use images_per_s or images",
                )
        if inf.beam_width != 1:
            raise FieldError(
                "inference.beam_width",
                f"applies to token generation; a {arch} model serves images: drop beam_width",
            )
        from planner.workload.serving import load_serving_stacks

        if inf.framework in load_serving_stacks():
            from planner.workload.vision_serving import VISION_ENGINE_NAMES

            raise FieldError(
                "inference.framework",
                f"{inf.framework} serves LLMs; a {arch} model runs on "
                f"{', '.join(VISION_ENGINE_NAMES)} or auto",
            )
        # were ignored: an image model has no prompt, answer or KV cache
        for key in inf.changed("prompt_tokens", "output_tokens", "kv_precision", "max_batch"):
            fix = "inference.batch sets the engine's largest batch" if key == "max_batch" else ""
            raise FieldError(
                f"inference.{key}",
                f"applies to language models, and a {arch} model serves images: drop it"
                + (f" ({fix})" if fix else ""),
            )
        for key in ("ttft_ms_p95", "tpot_ms_p95"):
            if getattr(inf.slo, key) is not None:
                raise FieldError(
                    f"inference.slo.{key}",
                    f"is a target for a token stream, and a {arch} model serves images: give "
                    "the p95 latency per image as inference.slo.e2e_ms_p95",
                )
        if inf.images_per_s is not None and inf.requests_per_s is not None:
            raise FieldError("inference", "give images_per_s or requests_per_s, not both")
        if inf.images is not None and inf.requests is not None:
            # was: requests ignored (a request is an image)
            raise FieldError("inference", "give images or requests for a batch job, not both")
        if inf.serving and (inf.images is not None or inf.requests is not None):
            given = "images" if inf.images is not None else "requests"
            raise FieldError(
                f"inference.{given}",
                "sizes a batch job, and images_per_s / requests_per_s with hours make this a "
                f"service: keep one (drop {given}, or drop the rate and hours)",
            )
        if inf.serving and inf.hours is None:
            raise FieldError("inference.hours", "is required with images_per_s / requests_per_s")
        if not inf.serving and inf.total_images <= 0:
            raise FieldError(
                "inference", "needs images_per_s (or requests_per_s) and hours, or images"
            )
        if inf.dla and arch != "cnn":
            raise FieldError("inference.dla", f"the Jetson's DLAs run CNNs, not a {arch} model")
        _service_or_batch(inf, self.pieces, "images")
        if arch == "diffusion" and inf.resolution is not None and inf.resolution % 8:
            # the VAE works on latents an eighth of the image's side (diffusers refuses a height
            # or width not divisible by 8)
            low = inf.resolution // 8 * 8
            raise FieldError(
                "inference.resolution",
                f"{inf.resolution} px is not a multiple of 8, and a diffusion model's latents are "
                f"an eighth of the side; use {max(low, 16)} or {low + 8}",
            )
        if arch != "diffusion" and inf.steps is not None:
            raise FieldError("inference.steps", f"applies to diffusion models, not a {arch} model")
        if arch != "diffusion" and not inf.guidance:
            # was ignored: only a diffusion model's denoising steps run guided
            raise FieldError(
                "inference.guidance",
                f"applies to diffusion models (classifier-free guidance), not a {arch} model: "
                "drop it",
            )
        if arch in ("cnn", "unet") and self.model.flops_per_sample is None:
            raise FieldError("model.flops_per_sample", f"is required for a {arch} model")
        return self

    # -- derived quantities used by the estimator -------------------------------------------------
    @property
    def train(self) -> TrainingSection:
        return self.training or TrainingSection()

    @property
    def seq_len(self) -> int:
        d = self.data
        if d is not None and d.tokens_per_sample is not None:
            return int(d.tokens_per_sample)
        return int(self.model.seq_len or 1)

    @property
    def tokens_per_piece(self) -> float:
        """Tokens processed by one piece (epochs included); 0 for non-transformers."""
        d = self.data
        if d is None or not self.model.is_transformer:
            return 0.0
        if d.tokens is not None:
            return d.tokens
        return (d.samples or 0.0) * d.epochs * self.seq_len

    @property
    def samples_per_piece(self) -> float:
        """Samples processed by one piece (epochs included)."""
        d = self.data
        if d is None:
            return 0.0
        if d.samples is not None:
            return d.samples * d.epochs
        return self.tokens_per_piece / max(self.seq_len, 1)

    def summary(self) -> dict[str, Any]:
        """One row for ``planner workloads``."""
        size = self.model.params or 0.0
        if (
            self.kind is Kind.INFERENCE
            and self.inference is not None
            and not self.model.is_transformer
        ):
            inf = self.inference
            amount = (
                f"{inf.load_images_per_s:,.4g} images/s x {inf.hours:g} h"
                if inf.serving
                else f"{inf.total_images:.3g} images"
            )
        elif self.kind is Kind.INFERENCE and self.inference is not None:
            inf = self.inference
            amount = (
                f"{inf.output_tokens_per_s:,.0f} tok/s x {inf.hours:g} h"
                if inf.serving
                else f"{inf.total_output_tokens:.3g} tokens"
            )
        elif self.model.is_transformer:
            amount = f"{self.tokens_per_piece:.3g} tokens"
        else:
            amount = f"{self.samples_per_piece:.3g} samples"
        if self.pieces > 1:
            amount += f" x {self.pieces} pieces"
        return {
            "name": self.name,
            "kind": self.kind.value,
            "model": self.model.preset or self.model.arch,
            "params": size,
            "method": self.train.method.value if self.kind is not Kind.INFERENCE else "-",
            "data": amount,
            "description": self.description,
        }


_VISION_KEYS = ("images_per_s", "images", "resolution", "steps", "batch")


def _no_vision_keys(inf: InferenceSection, arch: str) -> None:
    """An LLM counts tokens: the image keys are a mistake there."""
    from planner.workload.serving import load_serving_stacks
    from planner.workload.vision_serving import VISION_ENGINE_NAMES

    for key in _VISION_KEYS:
        if getattr(inf, key) is not None:
            raise FieldError(
                f"inference.{key}",
                f"applies to vision and diffusion models, not a {arch} transformer",
            )
    if inf.dla:
        raise FieldError("inference.dla", "the Jetson's DLAs run CNNs, not a transformer")
    if not inf.guidance:
        # was ignored: guidance: false reads as turning off a diffusion model's classifier-free
        # guidance, which a language model has none of
        raise FieldError(
            "inference.guidance",
            f"applies to diffusion models (classifier-free guidance), not a {arch} transformer: "
            "drop it",
        )
    if inf.framework in VISION_ENGINE_NAMES:
        raise FieldError(
            "inference.framework",
            f"{inf.framework} runs vision models here; an LLM is served by "
            f"{', '.join(load_serving_stacks())} or auto",
        )
    if inf.beam_width > 1:
        from planner.workload.serving import serving_stack

        stack = serving_stack(inf.framework)
        if not stack.beam_search:
            with_beams = [n for n, s in load_serving_stacks().items() if s.beam_search]
            raise FieldError(
                "inference.beam_width",
                f"beam search is modelled where a request's beams share the prompt's KV cache, "
                f"not for {stack.name}; set inference.framework to {' or '.join(with_beams)}, "
                "or beam_width: 1",
            )


def _check_shape(m: ModelSection, training: TrainingSection | None) -> None:
    """Attention heads split the hidden size evenly, and key/value heads are shared by equal
    groups of query heads (grouped-query attention, Ainslie et al. 2023); tensor parallelism splits
    the heads and pipeline parallelism the layers, so neither can exceed their number."""
    heads, hidden, layers = m.heads or 1, m.hidden or 1, m.layers or 1
    if m.head_dim is None and hidden % heads:
        raise FieldError(
            "model.heads",
            f"{heads} heads do not divide hidden size {hidden} (heads of another width: give "
            "model.head_dim)",
        )
    if m.sliding_window is not None and m.arch != "decoder":
        # was accepted and ignored: only a causal decoder's windowed layers are modelled
        raise FieldError(
            "model.sliding_window",
            "applies to a decoder's causal attention (Mistral 7B v0.1, Gemma 2, gpt-oss), and "
            f"model.arch is {m.arch}, whose attention is estimated over the whole sequence: drop "
            "it (and sliding_window_layers)",
        )
    if m.sliding_window_layers is not None and m.sliding_window is None:
        raise FieldError(
            "model.sliding_window_layers",
            f"{m.sliding_window_layers} windowed layers, but no window: give model.sliding_window "
            "(the tokens a windowed layer attends back to), or leave sliding_window_layers out",
        )
    if m.sliding_window_layers is not None and m.sliding_window_layers > layers:
        raise FieldError(
            "model.sliding_window_layers",
            f"{m.sliding_window_layers} windowed layers of a model of {layers}: use at most "
            f"{layers}",
        )
    if m.kv_heads is not None and (m.kv_heads > heads or heads % m.kv_heads):
        divisors = [d for d in range(1, heads + 1) if heads % d == 0 and d < heads][-3:]
        raise FieldError(
            "model.kv_heads",
            f"{m.kv_heads} key/value heads do not divide {heads} heads; each key/value head "
            f"serves an equal group of query heads: use a divisor of {heads} "
            f"({', '.join(str(d) for d in divisors) or '1'} or {heads})",
        )
    if training is not None and training.method is not Method.FULL and training.lora_rank > hidden:
        raise FieldError(
            "training.lora_rank",
            f"rank {training.lora_rank} is more than the hidden size {hidden} it factors",
        )
    pinned = training.parallelism if training is not None else None
    if pinned is not None and pinned.tensor is not None and pinned.tensor > heads:
        raise FieldError(
            "training.parallelism.tensor",
            f"tensor parallel {pinned.tensor} is more than the {heads} attention heads it splits",
        )
    if pinned is not None and pinned.tensor is not None and heads % pinned.tensor:
        # each tensor-parallel rank holds whole attention heads (Megatron-LM: heads divisible by
        # the tensor model-parallel size)
        raise FieldError(
            "training.parallelism.tensor",
            f"tensor parallel {pinned.tensor} does not divide the {heads} attention heads; "
            f"use a divisor of {heads}",
        )
    if pinned is not None and pinned.pipeline is not None and pinned.pipeline > layers:
        even = [d for d in range(2, layers + 1) if layers % d == 0]
        raise FieldError(
            "training.parallelism.pipeline",
            f"pipeline parallel {pinned.pipeline} is more than the {layers} layers it splits; "
            f"use at most {layers} stages (a divisor of {layers} keeps them even: "
            f"{', '.join(str(d) for d in even[-3:])})",
        )
    for key in ("overlap_all_to_all", "dispatch_per_node"):
        if training is not None and getattr(training, key) and not m.experts:
            raise FieldError(
                f"training.{key}",
                f"{key} shapes the all-to-all exchanges of a mixture of experts' routed experts, "
                f"and this model has none (model.experts); leave {key} out",
            )
    if pinned is not None and pinned.expert is not None:
        # expert parallelism splits the routed experts into equal groups (Megatron-LM: the
        # number of experts divisible by the expert model-parallel size)
        if not m.experts:
            raise FieldError(
                "training.parallelism.expert",
                "expert parallelism splits the routed experts of a mixture of experts, and this "
                "model has none (model.experts); leave parallelism.expert out",
            )
        if m.experts % pinned.expert:
            raise FieldError(
                "training.parallelism.expert",
                f"expert parallel {pinned.expert} does not divide the {m.experts} experts; "
                f"use a divisor of {m.experts}",
            )
        tp = pinned.tensor or 1
        if pinned.expert > 1 and pinned.expert % tp:
            # the expert-parallel GPUs are whole tensor-parallel groups here (strategy.
            # expert_parallel_sizes); Megatron Core's folding can also place fewer
            raise FieldError(
                "training.parallelism.expert",
                f"expert parallel {pinned.expert} spreads the experts over GPUs in whole "
                f"tensor-parallel groups of {tp}, as modelled here; pin a multiple of {tp}, "
                "or leave parallelism.expert out",
            )


# A model's parameter count may differ from what its shape holds (biases, norms, an odd MLP width
# when ffn is not given: the estimate assumes 4 x hidden) by tens of percent; the presets agree
# within 1%.  A count off by more than this factor either way is a typo or a unit slip
# (params: 1.3e12 for 1.3e9) or a shape copied from another model, and the estimate would use
# one number for the weights' memory and the other for the FLOPs.
PARAMS_SHAPE_TOLERANCE = 3.0


def shape_params(m: ModelSection) -> float | None:
    """Parameters a dense transformer's shape holds: per layer the attention's query, output, key
    and value projections and the MLP (``ffn`` wide, gated or plain; else 4 x hidden, plain), plus
    the token embedding (twice when the output head is untied).  None for a mixture of experts
    (its experts' widths come from the counts) or a model without a full shape."""
    if m.experts is not None or not (m.layers and m.hidden and m.heads):
        return None
    hidden = float(m.hidden)
    kv_heads = m.kv_heads or m.heads
    attention = 2.0 * hidden * m.attention_width + 2.0 * hidden * kv_heads * m.head_width
    mlp = (3.0 if m.mlp == "gated" else 2.0) * hidden * (m.ffn or 4 * m.hidden)
    embedding = float(m.vocab or 0) * hidden * (2.0 if m.tied_embeddings is False else 1.0)
    return m.layers * (attention + mlp) + embedding


# The fields of a transformer's shape that set its parameter count (shape_params).
_SHAPE_KEYS = frozenset(
    ("layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "mlp", "vocab", "tied_embeddings")
)
# A mixture of experts' fields that set its total (experts) and active (experts_per_token) counts.
_EXPERT_COUNT_KEYS = frozenset(("experts", "experts_per_token"))


def _reshaped_params(preset: dict[str, Any], changed: dict[str, Any]) -> float | None:
    """A dense preset's parameter count carried over to a changed shape: the preset's count scaled
    by what the two shapes hold (:func:`shape_params`), so the part the shape does not count
    (biases, norms) scales with it.  ``{preset: llama-2-7b, layers: 64}`` is a 13B-parameter model,
    not a 6.7B one with 64 layers' FLOPs.  None where either shape is incomplete or not valid yet
    (the section's own validation then names the field) or the preset is a mixture of experts."""
    keys = (*_SHAPE_KEYS, "experts", "params")
    try:
        before = ModelSection(**{k: preset[k] for k in keys if k in preset})
        after = ModelSection(**{k: changed[k] for k in keys if k in changed and k != "params"})
    except ValidationError:
        return None
    old, new = shape_params(before), shape_params(after)
    if before.params is None or not old or not new:
        return None
    return before.params * new / old


def _check_expert_width(m: ModelSection) -> None:
    """A mixture of experts' ``ffn`` (each expert's MLP width) within
    :data:`PARAMS_SHAPE_TOLERANCE` of the width its counts give: the estimate sizes the experts
    from ``params`` and ``active_params`` (``total - active = (E - k)`` experts' parameters), so an
    ``ffn`` they contradict -- counts copied from another model, or experts added to a dense
    preset -- was ignored, and the memory and FLOPs came from the counts alone."""
    if not (m.is_moe and m.ffn and m.experts and m.experts_per_token and m.layers and m.hidden):
        return
    if not (m.params and m.active_params):
        return
    per_layer = (3.0 if m.mlp != "plain" else 2.0) * m.hidden
    from_counts = (m.params - m.active_params) / (m.experts - m.experts_per_token)
    width = from_counts / (per_layer * m.layers)
    ratio = m.ffn / width if width > 0 else math.inf
    if 1 / PARAMS_SHAPE_TOLERANCE <= ratio <= PARAMS_SHAPE_TOLERANCE:
        return
    attention = m.layers * m.hidden * (2.0 * m.attention_width + 2.0 * m.kv_width)
    embedding = float(m.vocab or 0) * m.hidden * (1.0 if m.tied_embeddings else 2.0)
    expert = per_layer * m.ffn * m.layers
    total = attention + embedding + m.experts * expert
    active = attention + embedding + m.experts_per_token * expert
    raise FieldError(
        "model.params",
        f"{m.params:.3g} parameters ({m.active_params:.3g} active) disagree with the experts' "
        f"width (ffn {m.ffn:,}): the counts give experts {width:,.0f} wide, and with ffn "
        f"{m.ffn:,} this shape holds about {total:.3g} parameters, {active:.3g} active; set "
        "params and active_params to the model's counts (config.json's or its model card's), or "
        "fix ffn",
    )


def _check_params(m: ModelSection) -> None:
    """``model.params`` within :data:`PARAMS_SHAPE_TOLERANCE` of what the shape holds (a mixture
    of experts': :func:`_check_expert_width`)."""
    _check_expert_width(m)
    implied = shape_params(m)
    if implied is None or m.params is None or implied <= 0:
        return
    ratio = m.params / implied
    if 1 / PARAMS_SHAPE_TOLERANCE <= ratio <= PARAMS_SHAPE_TOLERANCE:
        return
    shape = f"{m.layers} layers of hidden size {m.hidden}" + (
        f", vocabulary {m.vocab:,}" if m.vocab else ""
    )
    raise FieldError(
        "model.params",
        f"{m.params:.3g} parameters disagree with the shape ({shape}), which holds about "
        f"{implied:.3g} ({ratio:.3g}x); set params to the model's count (e.g. {implied:.2g}), "
        "or fix layers, hidden and ffn",
    )


def _check_positions(spec: WorkloadSpec) -> None:
    """No sequence longer than a learned position table (GPT-2, BERT: ``learned_positions`` of
    the preset)."""
    m = spec.model
    preset = get_preset(m.preset) if m.preset else None
    if preset is None or preset.learned_positions is None:
        return
    table = preset.learned_positions
    if spec.seq_len <= table:
        return
    d = spec.data
    key = "data.tokens_per_sample" if d is not None and d.tokens_per_sample else "model.seq_len"
    raise FieldError(
        key,
        f"{spec.seq_len:,} tokens is longer than the {table:,} positions {preset.name} learned "
        f"(its position embeddings have one row per position); use at most {table}, or a model "
        "with rotary positions (llama-3-8b, mistral-7b) for longer sequences",
    )


def _service_or_batch(inf: InferenceSection, pieces: int, unit: str) -> None:
    """The keys of a service (a load for hours, latency targets) and of a batch job (a size,
    repeated ``pieces`` times) do not mix: the estimate read one set and ignored the other."""
    rate, size = f"{unit}_per_s / requests_per_s", f"{unit} / requests"
    if inf.serving:
        if pieces > 1:
            raise FieldError(
                "pieces",
                f"repeats a job {pieces} times, and this is a service carrying one load "
                f"({rate}) for inference.hours: drop pieces, and give the whole load as the rate",
            )
        return
    if inf.hours is not None:
        raise FieldError(
            "inference.hours",
            f"is how long a service runs at its load ({rate}), and this is a batch job of a "
            f"fixed size ({size}) that runs until it is done: drop hours (planner quote "
            "--deadline sets when the job must finish), or give a rate for a service",
        )
    given = [k for k, v in inf.slo.model_dump().items() if v is not None]
    if given:
        raise FieldError(
            f"inference.slo.{given[0]}",
            f"latency targets apply to a service ({rate} and hours), and this is a batch job "
            f"of a fixed size ({size}), sized on its throughput by a deadline: drop slo, or "
            "give a rate and hours for a service",
        )


def _one_load(inf: InferenceSection) -> None:
    """One way to give a language model's load: the estimate reads requests_per_s before
    tokens_per_s for the request rate but tokens_per_s first for the token rate, so both at once
    gave two different loads."""
    pairs = (
        ("tokens_per_s", "requests_per_s", "a service's load"),
        ("tokens", "requests", "a batch job's size"),
    )
    for a, b, what in pairs:
        if getattr(inf, a) is not None and getattr(inf, b) is not None:
            raise FieldError(
                "inference",
                f"give {a} or {b} for {what}, not both (a request is prompt_tokens in and "
                "output_tokens out)",
            )
    if inf.serving and (inf.tokens is not None or inf.requests is not None):
        given = "tokens" if inf.tokens is not None else "requests"
        raise FieldError(
            f"inference.{given}",
            f"sizes a batch job, and tokens_per_s / requests_per_s with hours make this a "
            f"service: keep one (drop {given}, or drop the rate and hours)",
        )


def _check_request_length(inf: InferenceSection, m: ModelSection) -> None:
    """A request (its prompt and its answer, at their 95th percentiles where given) fits the
    model's context window, model.seq_len: a serving engine refuses a longer one (vLLM's
    max_model_len defaults to the model's)."""
    if m.seq_len is None:
        return

    def longest(part: str) -> tuple[float, str]:
        """A request part's length at its 95th percentile where given, and the key that says it."""
        mean, p95 = getattr(inf, f"{part}_tokens"), getattr(inf, f"{part}_tokens_p95")
        if p95 is not None and p95 >= mean:
            return p95, f"inference.{part}_tokens_p95"
        return mean, f"inference.{part}_tokens"

    (prompt, prompt_key), (output, output_key) = longest("prompt"), longest("output")
    if prompt + output <= m.seq_len:
        return
    p95 = inf.prompt_tokens_p95 is not None or inf.output_tokens_p95 is not None
    raise FieldError(
        # the longer part is the one to blame (was: prompt_tokens always, a default the user never
        # wrote beside an output of 100M tokens)
        output_key if output >= prompt else prompt_key,
        f"a request of {prompt:,.0f} prompt + {output:,.0f} output tokens"
        + (" (95th percentiles)" if p95 else "")
        + f" is longer than the model's {m.seq_len:,}-token context (model.seq_len); shorten "
        "prompt_tokens or output_tokens, or set model.seq_len for a long-context variant",
    )


def _check_stack_layout(spec: WorkloadSpec) -> None:
    """A pinned layout (tensor, pipeline, expert or context split, ZeRO stage) is one the named
    stack runs, alone and together: eager FSDP never splits layers, the Hugging Face Trainer never
    by pipeline, DeepSpeed's pipeline runs ZeRO 0 or 1 only, as modelled here (frameworks.yaml;
    ``auto`` picks a stack that runs the pins, :func:`workload_framework`);
    and a model that is not a transformer is trained data parallel (its layers are not modelled
    one by one).  Was: the pin won silently, a "DP4 + TP2" under a stack the assumptions call data
    parallel, or an expert pin dropped."""
    training = spec.training
    if training is None:
        return
    if spec.model.arch == "cnn" and training.method in ("lora", "qlora"):
        # was: "LoRA pre-training" of ResNet-18 with its whole 11.7M weights reported as adapters
        raise FieldError(
            "training.method",
            f"{training.method} adapts a transformer's (or a diffusion UNet's) linear layers, and "
            "a cnn model's weights are its convolutions: use method: full",
        )
    pin = training.parallelism
    for key, size in (("tensor", pin.tensor), ("pipeline", pin.pipeline)):
        if size is not None and size > 1 and not spec.model.is_transformer:
            raise FieldError(
                f"training.parallelism.{key}",
                f"{key} parallel {size} splits a transformer's layers, and a {spec.model.arch} "
                f"model is trained data parallel here; leave parallelism.{key} out",
            )
    if training.framework == "auto":
        return
    from planner.workload.frameworks import load_frameworks

    stack, _ = workload_framework(spec)
    if runs_layout(stack, spec):
        return
    # the stacks that run every pin at once, for the fix
    able = sorted(n for n, p in load_frameworks().items() if runs_layout(p, spec))
    fix = (
        f"set training.framework to one of {', '.join(able)}"
        if able
        else "change the other pins (no stack runs them all)"
    )
    for key, size in _layout_pins(spec):
        if not getattr(stack, _LAYOUT_ABILITY[key]):
            raise FieldError(
                f"training.parallelism.{key}",
                f"framework {stack.name} does not run {key} parallelism, as modelled here "
                f"({key}: {size}); {fix}, or leave parallelism.{key} out",
            )
    # left: a ZeRO stage (pinned, or offload: nvme's ZeRO-3) the stack lacks, or runs but not with
    # the pinned split (DeepSpeed's pipeline engine: ZeRO < 2)
    zero = _pinned_zero(spec)
    assert zero is not None  # every stack runs ZeRO 0 with any split it runs (runs_layout)
    field = "training.parallelism.zero" if pin.zero is not None else "training.offload"
    asked = f"ZeRO-{zero}" if pin.zero is not None else "offload: nvme (ZeRO-3)"
    if zero in stack.zero:
        stages = ", ".join(str(z) for z in _split_zero_stages(stack, spec))
        split = " and ".join(
            f"{k} parallel {n}" for k, n in _layout_pins(spec) if k in ("tensor", "pipeline")
        )
        raise FieldError(
            field,
            f"framework {stack.name} runs {split} with ZeRO stages {stages} only, as modelled "
            f"here, not {asked}; pin one of those, drop the split, or {fix}",
        )
    stages = ", ".join(str(z) for z in stack.zero)
    raise FieldError(
        field,
        f"framework {stack.name} offers ZeRO stages {stages}, as modelled here, not "
        f"{zero if pin.zero is not None else asked}; pin one of those, or {fix}",
    )


# The stack ability (FrameworkProfile) each pinned split needs.
_LAYOUT_ABILITY = {
    "tensor": "tensor_parallel",
    "pipeline": "pipeline_parallel",
    "expert": "expert_parallel",
    "context": "context_parallel",
}


def _layout_pins(spec: WorkloadSpec) -> list[tuple[str, int]]:
    """The splits ``spec`` pins above 1, by name (tensor, pipeline, expert, context)."""
    pin = spec.train.parallelism
    sizes = (pin.tensor, pin.pipeline, pin.expert, pin.context)
    return [(k, n) for k, n in zip(_LAYOUT_ABILITY, sizes, strict=True) if n is not None and n > 1]


def _check_nvme_stack(spec: WorkloadSpec) -> None:
    """``offload: nvme`` under ``auto`` needs auto to pick a stack that runs ZeRO-Infinity: for a
    model trained on images it picks eager PyTorch, which does not (frameworks.auto_framework)."""
    training = spec.training
    if training is None or training.offload != "nvme" or training.framework != "auto":
        return

    stack, _ = workload_framework(spec)
    if stack.name not in _NVME_FRAMEWORKS:
        raise FieldError(
            "training.offload",
            f"offload: nvme is DeepSpeed ZeRO-Infinity, and auto trains this {spec.model.arch} "
            f"model on {stack.name}, which does not run it; set training.framework: deepspeed, "
            "or use offload: optimizer",
        )


def _check_context(spec: WorkloadSpec) -> None:
    """A pinned context-parallel size splits a transformer's sequence into equal chunks, on a stack
    that has context parallelism.

    Megatron-Core splits a causal sequence into ``2 x context`` chunks and gives rank ``r`` chunks
    ``r`` and ``2·context - 1 - r``, so every rank has the same share of the causal mask's work
    (Megatron-LM ``get_batch_on_this_cp_rank``; its context-parallel guide: "achieving optimal
    load balance among GPUs"): the sequence must divide into ``2 x context`` equal chunks.
    """
    training = spec.training
    cp = training.parallelism.context if training is not None else None
    if training is None or cp is None or cp == 1:
        return
    key = "training.parallelism.context"
    m = spec.model
    if not m.is_transformer:
        raise FieldError(
            key,
            f"context parallelism splits a transformer's sequence, and a {m.arch} model has none; "
            "leave parallelism.context out",
        )
    from planner.workload.frameworks import load_frameworks

    stack, auto = workload_framework(spec)
    if not stack.context_parallel:
        able = sorted(n for n, p in load_frameworks().items() if p.context_parallel)
        chosen = f"framework {stack.name}" + (" (auto's choice)" if auto else "")
        raise FieldError(
            key,
            f"{chosen} has no context parallelism; set training.framework to one of "
            f"{', '.join(able)}, or leave parallelism.context out",
        )
    seq = spec.seq_len
    causal = m.arch == "decoder"
    chunks = context_chunks(cp, causal=causal)
    if seq % chunks:
        split = (
            f"{chunks} equal chunks (2 x {cp}: the load-balanced causal split)"
            if chunks != cp
            else f"{cp} equal chunks"
        )
        fits = [c for c in (2, 4, 8, 16, 32, 64) if seq % context_chunks(c, causal=causal) == 0]
        near = sorted(sorted(fits, key=lambda c: abs(c - cp))[:2])
        hint = f"use context {' or '.join(str(c) for c in near)}" if near else "use context 1"
        raise FieldError(
            key,
            f"context parallel {cp} splits each {seq:,}-token sequence into {split}, and "
            f"{seq:,} does not divide; {hint}, or a seq_len divisible by {chunks}",
        )


# -- locating and loading --------------------------------------------------------------------------


def workloads_dir() -> Path:
    return scenarios_dir() / "workloads"


def workload_names(directory: Path | None = None) -> list[str]:
    """Names of the bundled workloads (file stems), sorted."""
    folder = directory or workloads_dir()
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.yaml"))


def _deep_merge(base: dict[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in changes.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


# How workload files word their errors (planner.config.validation): pydantic's first error, key
# paths as ``sources.0``, a count of the other problems, bounds in words, sorted valid keys with the
# ``trials`` alias, suggestions only for keys that look alike, and where a deadline belongs.
_WORDING = ErrorWording(
    first_error=True,
    dotted_paths=True,
    count_others=True,
    missing="is required",
    missing_hints={"kind": "write kind: pretrain, finetune or inference"},
    keys_label="valid keys",
    sorted_keys=True,
    extra_keys={"": ("trials",)},
    alike_keys_only=True,
    misplaced_keys={
        "deadline": "a workload file has no deadline; pass it to planner quote: --deadline 24h",
        # the command's choices, not the workload's (was: the section's keys listed)
        "gpu": "a workload file names no GPU; pass it to the command: planner estimate FILE "
        "--gpu H100 --count 8 (planner quote --gpu only filters the offers)",
        "budget": "a workload file has no budget; pass it to planner quote: --budget 500",
        "rps": "the load is inference.requests_per_s (or tokens_per_s), or --rps on planner quote",
    },
    bounds_in_words=True,
    date_hint=None,
)


# Keys of a Hugging Face config.json that no workload file has: a config passed where a workload
# goes is named as one.
_HF_CONFIG_KEYS = frozenset(
    {"architectures", "model_type", "num_hidden_layers", "hidden_size", "n_embd", "torch_dtype"}
)


def parse_workload(
    raw: Any, *, file: str = "<workload>", default_name: str | None = None
) -> WorkloadSpec:
    """Validate an already-parsed YAML document (pure; no I/O)."""
    if not isinstance(raw, dict):
        raise not_a_mapping(raw, "workload", file)
    if not raw.keys() & {"kind", "model"} and raw.keys() & _HF_CONFIG_KEYS:
        # was: "architectures: unknown key (and 26 more problems)", a list of the workload keys
        raise ConfigError(
            "is a Hugging Face model config (config.json), not a workload file",
            file=file,
            hint=f"a model config goes where a command takes a model (planner estimate or quote "
            f"--model {file} --tokens 50M), or write a workload file from it: planner workloads "
            f"new NAME --model {file} --tokens 50M",
        )
    check_file_kind(raw, "workload", file=file)
    if "name" not in raw and default_name:
        raw = {**raw, "name": default_name}
    # pydantic hands the top level to WorkloadSpec.__init__ as keywords: a key YAML read as a
    # number or null (``1: 2``, ``~: x``) is named as an unknown key, not a TypeError
    raw = {k if isinstance(k, str) else str(k): v for k, v in raw.items()}
    source = _SOURCE.set(file)
    try:
        return _checked(WorkloadSpec.model_validate(raw))
    finally:
        _SOURCE.reset(source)


# The file each WorkloadSpec read from a file came from, by the spec's identity (an equal spec made
# in Python is not from the file): an error found once it is read (its training.precision against
# a GPU, its pinned layout against a count) names the file, as an error in reading it does.
_FILES: dict[int, str] = {}

# The specs whose fields have been checked (made by parse_workload, or passed checked_spec), by
# identity until collected: a WorkloadSpec is frozen, so a checked one stays right, and the API's
# functions, which check each spec they are given, check it once (was: a model_dump and a full
# re-validation, twice, in every estimate(): a millisecond and a half of a 3 ms estimate).
_CHECKED: set[int] = set()


def _checked(spec: WorkloadSpec) -> WorkloadSpec:
    """``spec``, remembered as checked until it is collected."""
    if id(spec) not in _CHECKED:
        _CHECKED.add(id(spec))
        weakref.finalize(spec, _CHECKED.discard, id(spec))
    return spec


def workload_file(spec: object) -> str | None:
    """The file ``spec`` was read from, as its errors name it; None for a spec made in Python
    (a library workload's, a variant's)."""
    return _FILES.get(id(spec))


@functools.lru_cache(maxsize=1)
def bundled_workload_values() -> dict[str, Any]:
    """The bundled workload files' values by the SHA-256 of their bytes, from their compact copy
    ``planner/data/workloads.json`` (``scripts/compact_data.py``; read on first use): a file with
    those bytes is read from here rather than parsed (:func:`~planner.config.yamlfile.read_yaml`)."""
    text = resources.files("planner.data").joinpath("workloads.json").read_text(encoding="utf-8")
    files = json.loads(text)["workloads"]
    return {entry["sha256"]: entry["values"] for entry in files.values()}


@functools.lru_cache(maxsize=256)
def _load_file(path: str, mtime_ns: int) -> WorkloadSpec:
    p = Path(path)
    raw = read_yaml(p, what="workload file", compact=bundled_workload_values())
    return parse_workload(raw, file=str(p), default_name=p.stem)


def _from_file(spec: WorkloadSpec, path: str) -> WorkloadSpec:
    """``spec``, remembered as read from the file ``path`` (:func:`workload_file`) until it is
    collected."""
    if id(spec) not in _FILES:
        _FILES[id(spec)] = path
        weakref.finalize(spec, _FILES.pop, id(spec), None)
    return spec


def checked_spec(spec: WorkloadSpec) -> WorkloadSpec:
    """``spec`` as a workload file's reading makes it, once its fields have been checked: itself
    where it was checked before (read from a file, a variant), else the spec its fields read as.

    A copy made with pydantic's ``model_copy(update=...)`` skips every check: ``pieces=0`` ended
    in ZeroDivisionError, ``data.tokens=-1e9`` in negative GPU-hours and a quote of them, and a
    value written as text (``"fp8"``) or a section as a dict reached the estimator unconverted.
    The library's functions check a spec they are given here (a few milliseconds; the file it was
    read from is kept) and use what this returns.  Raises ConfigError naming the field.
    """
    import warnings

    if id(spec) in _CHECKED:
        return spec
    note = (
        "a copy made with model_copy(update=...) is not checked; spec.variant(...) "
        "checks its changes as a file's"
    )
    file = workload_file(spec) or f"WorkloadSpec {spec.name!r}"
    _refuse_unknown_attributes(spec, file, note)
    with warnings.catch_warnings():  # pydantic warns as it writes a value of the wrong type
        warnings.simplefilter("ignore")
        raw = spec.model_dump(mode="json", exclude_none=True)
    try:
        parsed = parse_workload(raw, file=file)
    except ConfigError as e:
        e.hint = note if e.hint is None else f"{e.hint}; {note}"  # a range's hint keeps the note
        raise
    # the copy as a file's reading makes it: a value written as text ("fp8") becomes its enum and a
    # section written as a dict its model (was: AttributeError "'str' object has no attribute
    # 'value'" and "'dict' object has no attribute 'parallelism'" deep in the estimate)
    if id(spec) in _FILES:
        _from_file(parsed, _FILES[id(spec)])
    return _checked(parsed)


def _refuse_unknown_attributes(spec: WorkloadSpec, file: str, note: str) -> None:
    """A key a model_copy(update=...) set that no field of the spec or its sections has (was: a
    typo such as ``trainig`` dropped without a word, the estimate made without it)."""
    parts: list[tuple[str, BaseModel]] = [("", spec)]
    parts += [(f"{k}.", v) for k, v in vars(spec).items() if isinstance(v, BaseModel)]
    for prefix, part in parts:
        known = type(part).model_fields
        for key in vars(part):
            if key not in known:
                close = difflib.get_close_matches(key, list(known), n=1)
                raise ConfigError(
                    f"unknown key {key!r}",
                    file=file,
                    key_path=f"{prefix}{key}",
                    hint=(f"did you mean {close[0]!r}? " if close else "") + note,
                )


def load_workload(name_or_path: str, *, directory: Path | None = None) -> WorkloadSpec:
    """A workload by library name (``gpt2-xl-finetune``) or by path to a ``.yaml`` file."""
    if not isinstance(name_or_path, (str, Path)):
        raise ConfigError(
            f"a workload is a library name or a YAML path, not {type(name_or_path).__name__}",
            key_path="workload",
            hint="e.g. 'gpt2-xl-finetune' or 'my-job.yaml' (planner workloads lists the names)",
        )
    text = str(name_or_path)
    if not text.strip():  # was: '' read as the folder '.' ("is a directory, not a workload file")
        raise ConfigError(
            "workload name is blank",
            key_path="workload",
            hint="name a workload (planner workloads lists them) or a YAML file",
        )
    path = Path(text).expanduser()
    probe(path)  # a name too long for the file system: a ConfigError here, not an OSError below
    # a file name (a workload's .yaml, a model's config.json) or any path is a file, not a name
    if text.endswith((".yaml", ".yml", ".json")) or path.parent != Path(".") or path.is_dir():
        if not path.exists():
            near = missing_file_hint(text, directory or workloads_dir(), "workload")
            raise ConfigError("workload file not found", file=text, hint=near or "check the path")
        if not path.is_file():  # a directory, a pipe (<(cat w.yaml)): read once, as named
            return _from_file(_load_file.__wrapped__(str(path), 0), text)
        spec = _load_file(str(path.resolve()), path.stat().st_mtime_ns)
        return _from_file(spec, text)
    folder = directory or workloads_dir()
    candidate = folder / f"{text}.yaml"
    if probe(candidate) is None or not candidate.is_file():
        # GPT2-XL-Finetune: a library name in another case, as GPU, model and provider names
        # are read (was "unknown workload", did you mean gpt2-xl-finetune)
        by_lower = {n.lower(): n for n in workload_names(folder)}
        if text.strip().lower() in by_lower:
            return load_workload(by_lower[text.strip().lower()], directory=directory)
        error = UnknownNameError("workload", text, workload_names(folder))
        from planner.gpu_specs import load_gpu_catalog

        catalog = load_gpu_catalog()
        gpu = catalog.get(text)
        gpus = (gpu,) if gpu is not None else catalog.family(text)
        preset = get_preset(text)
        if preset is not None and gpu is None:
            # a model's name (mistral-7b): was "did you mean mixtral-8x7b-finetune?"
            error.hint = (
                f"{text!r} is a model preset ({preset.params:.3g} parameters), not a workload: "
                f"planner workloads new NAME --model {preset.name} --tokens 50M writes one "
                f"(planner estimate --model {preset.name} --tokens 50M estimates it)"
            )
        if gpus and not error.suggestions:
            # the workload and the GPU swapped: estimate("H100", "gpt2-finetune")
            names = ", ".join(g.name for g in gpus[:3])
            error.hint = (
                f"{text!r} is a GPU ({names}); the workload comes first and the GPU second "
                "(planner estimate WORKLOAD --gpu GPU; planner.estimate(workload, gpu, count))"
            )
        raise error
    return _load_file(str(candidate.resolve()), candidate.stat().st_mtime_ns)


def list_workloads(*, directory: Path | None = None) -> list[WorkloadSpec]:
    """Every workload in the library, sorted by name."""
    folder = directory or workloads_dir()
    return [load_workload(n, directory=folder) for n in workload_names(folder)]


def _is_serving_stack(name: str) -> bool:
    """Whether ``name`` is a serving stack's (vllm, tgi ...), given where a training stack goes."""
    from planner.workload.serving import load_serving_stacks

    return name.strip().lower() in load_serving_stacks()


def workload_framework(spec: WorkloadSpec) -> tuple[FrameworkProfile, bool]:
    """(profile, whether ``auto`` chose it) for a workload's ``training.framework``.

    ``auto`` takes the layout the workload pins into account: where its usual stack
    (frameworks.auto_framework) cannot run a pinned split or ZeRO stage, or their combination (the
    Hugging Face Trainer has no pipeline; eager FSDP has no ZeRO-1), it picks the nearest that
    can: an eager usual stack gives way to DeepSpeed (eager too, its pipeline and AutoTP, every
    ZeRO stage where no split limits it, expert parallel), else to ``any``, the calibrated stacks
    that run every layout (Megatron-class)."""
    from planner.workload.frameworks import load_frameworks, resolve_framework

    stack, auto = resolve_framework(
        spec.train.framework, finetune=spec.kind is Kind.FINETUNE, images=spec.model.takes_images
    )
    if not auto or (runs_layout(stack, spec) and runs_recipe(stack, spec)):
        return stack, auto
    profiles = load_frameworks()
    nearer = () if stack.fused_layers else (profiles["deepspeed"],)
    return next(
        p
        for p in (*nearer, profiles["any"])
        if (runs_layout(p, spec) and runs_recipe(p, spec)) or p.name == "any"
    ), True


def runs_recipe(stack: FrameworkProfile, spec: WorkloadSpec) -> bool:
    """Whether ``stack`` has a recipe for ``spec``'s training method and precision
    (frameworks.yaml ``methods``, ``precisions``): ``auto`` moves an NVFP4 fine-tune off the
    Hugging Face Trainer, which has none, to the calibrated stacks that run it."""
    return not stack.missing_recipes(spec.train.method.value, spec.train.precision.value)


def runs_layout(stack: FrameworkProfile, spec: WorkloadSpec) -> bool:
    """Whether ``stack`` runs the splits (tensor, pipeline, expert, context) and the ZeRO stage
    ``spec`` pins, together: DeepSpeed runs a pipeline with ZeRO 0 or 1 only
    (:meth:`FrameworkProfile.zero_with`); offload: nvme means ZeRO-3."""
    if not all(getattr(stack, _LAYOUT_ABILITY[k]) for k, _ in _layout_pins(spec)):
        return False
    tensor = spec.train.parallelism.tensor or 1
    if spec.train.offload == "nvme" and tensor > 1 and stack.name in _DEEPSPEED_NVME:
        return False  # ZeRO-Infinity under DeepSpeed, whose AutoTP runs ZeRO 0-2 only
    zero = _pinned_zero(spec)
    stages = _split_zero_stages(stack, spec)
    return bool(stages) if zero is None else zero in stages


def _pinned_zero(spec: WorkloadSpec) -> int | None:
    """The ZeRO stage ``spec`` pins (offload: nvme runs ZeRO-3), None where the search picks."""
    training = spec.train
    if training.parallelism.zero is not None:
        return training.parallelism.zero
    return 3 if training.offload == "nvme" else None


def _split_zero_stages(stack: FrameworkProfile, spec: WorkloadSpec) -> tuple[int, ...]:
    """The ZeRO stages ``stack`` runs with the tensor and pipeline sizes ``spec`` pins."""
    pin = spec.train.parallelism
    return stack.zero_with(tp=pin.tensor or 1, pp=pin.pipeline or 1)
