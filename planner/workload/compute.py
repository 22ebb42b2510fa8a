"""FLOPs of training and inference (pure functions).

Conventions:

- Training model FLOPs per token = ``6·N + 12·L·h·s`` (forward 2N, backward 4N, plus the attention
  score and value matmuls, PaLM appendix B accounting; Chowdhery et al. 2022).  This is what MFU is
  measured against, and what ``Estimate.total_flops`` reports.
- Hardware FLOPs add recomputation: full activation checkpointing repeats the forward pass
  (+2N + 4·L·h·s, i.e. 8·N·D in total; llm-foundry's HFU definition), selective recompute repeats
  only the attention core (+4·L·h·s; Korthikanti et al. 2022).
- LoRA / QLoRA skip the weight gradients of the frozen base: forward 2N + backward (input
  gradients only) 2N, so 4·N + 12·L·h·s; the adapters add a negligible amount.
- Non-transformers (CNNs, U-Nets, diffusion) use ``flops_per_sample`` = forward + backward FLOPs for
  one sample, times samples times epochs.
- Inference: prefill costs ``2·N + 2·L·h·p`` per prompt token (causal attention over on average p/2
  earlier tokens, QK and AV at 2 FLOPs per multiply-add), decode ``2·N + 4·L·h·c`` per generated token
  at context c.
"""

from __future__ import annotations


def attention_flops_per_token(layers: int, hidden: int, seq: int) -> float:
    """Attention score + value matmuls, forward and backward (PaLM: 12·L·h·s)."""
    return 12.0 * layers * hidden * seq


def train_model_flops_per_token(
    params: float, layers: int, hidden: int, seq: int, *, method: str = "full"
) -> float:
    """Model FLOPs per training token (what MFU counts)."""
    dense = 6.0 * params if method == "full" else 4.0 * params
    return dense + attention_flops_per_token(layers, hidden, seq)


def recompute_flops_per_token(
    params: float, layers: int, hidden: int, seq: int, recompute: str
) -> float:
    """Extra hardware FLOPs per token spent on recomputation."""
    if recompute == "full":
        return 2.0 * params + 4.0 * layers * hidden * seq
    if recompute == "selective":
        return 4.0 * layers * hidden * seq
    return 0.0


def prefill_flops_per_token(params: float, layers: int, hidden: int, prompt: float) -> float:
    """FLOPs per prompt token during prefill."""
    return 2.0 * params + 2.0 * layers * hidden * prompt


def decode_flops_per_token(params: float, layers: int, hidden: int, context: float) -> float:
    """FLOPs per generated token at ``context`` tokens of KV cache."""
    return 2.0 * params + 4.0 * layers * hidden * context


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
