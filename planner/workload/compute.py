"""FLOPs of training and inference (pure functions).

Conventions (``w`` is the attention width, ``heads x head_dim``: the hidden size ``h`` unless the
model's heads are wider or narrower than ``h / heads``, ``model.head_dim``):

- Training model FLOPs per token = ``6·N + 12·L·w·s`` (forward 2N, backward 4N, plus the attention
  score and value matmuls, PaLM appendix B accounting; Chowdhery et al. 2022).  This is what MFU is
  measured against, and what ``Estimate.total_flops`` reports.  The score matmul ``Q·Kᵀ`` of one
  layer and sequence is ``2·s²·w`` FLOPs forward and the value matmul ``A·V`` as many (heads x
  ``head_dim`` columns each: FlashAttention's benchmark counts ``4·s²·heads·head_dim``, Dao et al.),
  so Qwen3-30B-A3B's 32 heads of 128 on a hidden size of 2,048 do twice the ``h``-wide count; the
  projections stay in ``6·N`` through the parameter count.
- Hardware FLOPs add recomputation: full activation checkpointing repeats the forward pass
  (+2N + 4·L·w·s, i.e. 8·N·D in total; llm-foundry's HFU definition), selective recompute repeats
  only the attention core (+4·L·w·s; Korthikanti et al. 2022).
- LoRA / QLoRA skip the weight gradients of the frozen base: forward 2N + backward (input
  gradients only) 2N, so 4·N + 12·L·w·s; the adapters add a negligible amount.
- Non-transformers (CNNs, U-Nets, diffusion) use ``flops_per_sample`` = forward + backward FLOPs for
  one sample, times samples times epochs.
- Inference: prefill costs ``2·N + 2·L·w·p`` per prompt token (causal attention over on average p/2
  earlier tokens, QK and AV at 2 FLOPs per multiply-add), decode ``2·N + 4·L·w·c`` per generated token
  at context c.
"""

from __future__ import annotations


def attention_flops_per_token(layers: int, attention_width: int, seq: int) -> float:
    """Attention score + value matmuls, forward and backward (PaLM: 12·L·w·s, ``w`` the attention
    width)."""
    return 12.0 * layers * attention_width * seq


def train_model_flops_per_token(
    params: float, layers: int, attention_width: int, seq: int, *, method: str = "full"
) -> float:
    """Model FLOPs per training token (what MFU counts)."""
    dense = 6.0 * params if method == "full" else 4.0 * params
    return dense + attention_flops_per_token(layers, attention_width, seq)


def recompute_flops_per_token(
    params: float, layers: int, attention_width: int, seq: int, recompute: str
) -> float:
    """Extra hardware FLOPs per token spent on recomputation."""
    if recompute == "full":
        return 2.0 * params + 4.0 * layers * attention_width * seq
    if recompute == "selective":
        return 4.0 * layers * attention_width * seq
    return 0.0


def prefill_flops_per_token(
    params: float, layers: int, attention_width: int, prompt: float
) -> float:
    """FLOPs per prompt token during prefill."""
    return 2.0 * params + 2.0 * layers * attention_width * prompt


def decode_flops_per_token(
    params: float, layers: int, attention_width: int, context: float
) -> float:
    """FLOPs per generated token at ``context`` tokens of KV cache."""
    return 2.0 * params + 4.0 * layers * attention_width * context


def megatron_flops_per_iteration(
    batch: int, seq: int, layers: int, hidden: int, vocab: int, *, full_recompute: bool = False
) -> float:
    """Megatron/Korthikanti per-iteration FLOPs: 72·B·s·L·h²·(1 + s/6h + V/12Lh) (96 with recompute)."""
    if full_recompute:
        return (
            96.0
            * batch
            * seq
            * layers
            * hidden**2
            * (1 + seq / (6 * hidden) + vocab / (16 * layers * hidden))
        )
    return (
        72.0
        * batch
        * seq
        * layers
        * hidden**2
        * (1 + seq / (6 * hidden) + vocab / (12 * layers * hidden))
    )
