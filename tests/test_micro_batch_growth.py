"""The micro-batch the search picks (issue 14): up to 8,192 tokens per GPU where the GPU is the
bottleneck, and grown, evenly, until the GPU's work covers an eager host's dispatch where the host
is (a narrow ViT at 197 tokens: timm's benchmark runs DeiT-Ti at 512 images a step, not 41)."""

from __future__ import annotations

import pytest

import planner
from planner.gpu_specs import resolve_gpu
from planner.workload import parse_workload

RTX3090 = resolve_gpu("RTX3090")
TOKEN_CAP = 8192 // 197  # 41 sequences of 197 tokens
BATCH = 512


def vit(hidden: int, heads: int, params: float, micro_batch: int | None = None) -> planner.Estimate:
    """A ViT/DeiT encoder (12 layers, 196 patches + the class token) trained with eager PyTorch
    and fp16 autocast at a batch of 512 images on one RTX 3090."""
    training: dict[str, object] = {
        "precision": "fp16",
        "optimizer": "sgd",
        "framework": "pytorch-fsdp",
        "flash_attention": False,
        "global_batch_samples": BATCH,
    }
    if micro_batch is not None:
        training["parallelism"] = {"micro_batch": micro_batch}
    spec = parse_workload(
        {
            "name": "vit",
            "kind": "pretrain",
            "model": {
                "arch": "encoder",
                "params": params,
                "layers": 12,
                "hidden": hidden,
                "heads": heads,
                "vocab": 0,
                "seq_len": 197,
                "dropout": 0.0,
            },
            "data": {"samples": 51200, "epochs": 1, "tokens_per_sample": 197, "loader": "gpu"},
            "training": training,
        }
    )
    return planner.estimate(spec, RTX3090, 1)


def steps_seconds(e: planner.Estimate) -> float:
    return e.time_breakdown_hours["training steps"] * 3600.0


def test_a_host_bound_micro_batch_grows_evenly_until_the_gpu_covers_the_dispatch() -> None:
    # DeiT-Ti, 192 wide: 41 images leave the GPU waiting on 12 layers' host dispatch
    capped = vit(192, 3, 5.72e6, micro_batch=TOKEN_CAP)
    chosen = vit(192, 3, 5.72e6)
    b, m = chosen.strategy.micro_batch_size, chosen.strategy.grad_accumulation
    assert b > TOKEN_CAP
    assert b * m >= BATCH and b * (m - 1) < BATCH  # the batch in m micro-batches...
    assert b * m - BATCH < m  # ...of equal size (no partly filled one)
    assert steps_seconds(chosen) < 0.5 * steps_seconds(capped)
    # as fast as any micro-batch the rank could run, to 1%, for less memory than all 512 at once
    pinned = [vit(192, 3, 5.72e6, micro_batch=n) for n in (64, 128, 256, BATCH)]
    assert steps_seconds(chosen) <= 1.01 * min(steps_seconds(e) for e in pinned)
    assert chosen.memory_per_gpu_gib < pinned[-1].memory_per_gpu_gib


def test_a_gpu_bound_micro_batch_stays_at_the_token_cap() -> None:
    # ViT-B, 768 wide: the GPU outlasts the host at 41 images, so nothing is gained by more
    chosen = vit(768, 12, 86.6e6)
    assert chosen.strategy.micro_batch_size == TOKEN_CAP
    whole = vit(768, 12, 86.6e6, micro_batch=BATCH)
    assert chosen.memory_per_gpu_gib < whole.memory_per_gpu_gib
    assert steps_seconds(chosen) <= steps_seconds(whole)


@pytest.mark.parametrize("micro_batch", [TOKEN_CAP, 64])
def test_a_pinned_micro_batch_is_kept_even_when_host_bound(micro_batch: int) -> None:
    assert vit(192, 3, 5.72e6, micro_batch=micro_batch).strategy.micro_batch_size == micro_batch
