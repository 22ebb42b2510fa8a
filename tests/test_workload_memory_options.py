"""Memory the real frameworks use (issue 14): LoRA target sets, optimizer states in host memory
(ZeRO-Offload, paged 8-bit AdamW), the optimizer in the backward pass."""

from __future__ import annotations

from typing import Any

import pytest

from planner.gpu_specs import resolve_gpu
from planner.workload import WorkloadSpec, estimate, parse_workload
from planner.workload.memory import GIB


def llama3_8b(**training: Any) -> Any:
    """A Llama 3 8B fine-tune on Alpaca-sized data, batch 2 (torchtune's single-device recipe)."""
    return parse_workload(
        {
            "name": "l3",
            "kind": "finetune",
            "model": "llama-3-8b",
            "data": {"samples": 52002, "tokens_per_sample": 512},
            "training": {"global_batch_samples": 2, **training},
        }
    )


@pytest.mark.parametrize(
    ("targets", "per_rank_hidden"), [("qv", 4), ("attention", 8), ("all-linear", 19)]
)
def test_lora_targets_set_the_trainable_parameters(targets: str, per_rank_hidden: int) -> None:
    """q and v: 2 x 2·r·h per layer; the four projections 4 x 2·r·h; every linear layer 19·r·h."""
    spec = llama3_8b(method="lora", lora_rank=8, lora_targets=targets)
    est = estimate(spec, resolve_gpu("A100-80GB"), 1)
    expected = per_rank_hidden * 8 * 4096 * 32
    assert any(f"{expected:.3g} trainable parameters" in a for a in est.assumptions)


def test_torchtunes_single_gpu_recipe_fits_a_24_gb_card() -> None:
    """torchtune llama3/8B_full_single_device: bf16 weights, PagedAdamW8bit (states in host memory),
    optimizer_in_bwd, activation checkpointing.  On an RTX 4090 the GPU keeps the 16 GB of
    weights and one layer's gradients; AdamW under torch.amp would need 16 bytes per parameter."""
    recipe = llama3_8b(
        precision="pure-bf16",
        optimizer="paged-adamw-8bit",
        optimizer_in_backward=True,
        activation_checkpointing="full",
    )
    gpu = resolve_gpu("RTX4090")
    est = estimate(recipe, gpu, 1)
    assert est.fits
    params = recipe.model.params or 0.0
    assert est.memory_breakdown_gib["weights"] == pytest.approx(params * 2 / GIB)
    assert est.memory_breakdown_gib["optimizer_states"] == 0.0
    assert est.memory_breakdown_gib["gradients"] < 1.5  # one layer, not 15 GiB
    plain = estimate(llama3_8b(), gpu, 1)
    assert not plain.fits
    # ZeRO-Offload fits first (the GPU keeps the 16 GB of bf16 weights and one gradient bucket), so
    # it is offered; the paged recipe is offered where offloading does not fit
    assert any("offload: optimizer" in s for s in plain.suggestions)


def test_offloaded_optimizer_states_leave_the_gpu_and_cost_pcie_time() -> None:
    gpu = resolve_gpu("A100-80GB")
    pinned = {"parallelism": {"zero": 0, "tensor": 1, "pipeline": 1, "micro_batch": 1}}
    on_gpu = estimate(llama3_8b(method="lora", **pinned), gpu, 1)
    offload = estimate(llama3_8b(method="lora", offload="optimizer", **pinned), gpu, 1)
    assert offload.memory_breakdown_gib["optimizer_states"] == 0.0
    assert on_gpu.memory_breakdown_gib["optimizer_states"] > 0.0
    steps = "training steps"
    assert offload.time_breakdown_hours[steps] > on_gpu.time_breakdown_hours[steps]


def _in_backward(global_batch: int, in_backward: bool = True) -> WorkloadSpec:
    return parse_workload(
        {
            "name": "oib",
            "kind": "finetune",
            "model": "gpt2",
            "data": {"tokens": 1e7},
            "training": {
                "method": "full",
                "framework": "torchtune",
                "optimizer_in_backward": in_backward,
                "global_batch_samples": global_batch,
            },
        }
    )


def test_the_optimizer_in_the_backward_pass_accumulates_nothing() -> None:
    # torchtune applies each gradient as the backward pass produces it and refuses gradient
    # accumulation: one GPU runs the whole global batch as one micro-batch
    est = estimate(_in_backward(32), resolve_gpu("RTX4090"), 1)
    assert est.fits
    assert (est.strategy.micro_batch_size, est.strategy.grad_accumulation) == (32, 1)
    # without it the search accumulates smaller micro-batches (the control)
    plain = estimate(_in_backward(32, in_backward=False), resolve_gpu("RTX4090"), 1)
    assert plain.strategy.grad_accumulation > 1
    # a share too big for one micro-batch does not fit, and the advice says why
    big = estimate(_in_backward(512), resolve_gpu("RTX4090"), 1)
    assert not big.fits
    assert any("runs no gradient accumulation" in s for s in big.suggestions)
    assert estimate(_in_backward(512, in_backward=False), resolve_gpu("RTX4090"), 1).fits
