"""Gradient accumulation under FSDP's no_sync (Lightning Fabric, LitGPT): the micro-batches that do
not synchronise keep the whole gradients, not ZeRO's shard, until the step's last one
(planner/workload/memory.py, unsynced_gradient_bytes; LitGPT's config hub: Llama 2 7B full
fine-tune, micro-batch 4 of a global 64 on 4 A10G, "OOM", benchmarks F55)."""

from __future__ import annotations

from typing import Any

import pytest

from planner.gpu_specs import resolve_gpu
from planner.schema import Fabric, Interconnect
from planner.workload import estimate, parse_workload
from planner.workload import memory as mem
from planner.workload.estimate_types import Topology

A10G = resolve_gpu("A10G")
G5_12XLARGE = Topology(gpus_per_node=4, interconnect=Interconnect.PCIE, fabric=Fabric.ETHERNET)
LLAMA2_7B = 6.74e9  # the llama-2-7b preset's parameters
GIB = 2.0**30


def llama2_full(
    framework: str, global_batch: int, micro_batch: int | None = 4, recompute: str = "full"
) -> Any:
    """LitGPT's config_hub/finetune/llama-2-7b/full.yaml (@00af8b0d) on four A10G: bf16-true AdamW,
    FSDP full shard with activation checkpointing, micro-batch 4 (None: searched) x 512 tokens."""
    parallelism = {"zero": 3, "tensor": 1, "pipeline": 1}
    if micro_batch is not None:
        parallelism["micro_batch"] = micro_batch
    return parse_workload(
        {
            "name": "litgpt-full",
            "kind": "finetune",
            "model": "llama-2-7b",
            "data": {"samples": 2000, "epochs": 1, "tokens_per_sample": 512},
            "training": {
                "precision": "pure-bf16",
                "framework": framework,
                "method": "full",
                "optimizer": "adamw",
                "activation_checkpointing": recompute,
                "flash_attention": True,
                "global_batch_samples": global_batch,
                "parallelism": parallelism,
            },
        }
    )


@pytest.mark.parametrize(
    ("stack", "zero", "accumulation", "extra"),
    [
        # Llama 2 7B's bf16 gradients (13.48 GB) against a quarter of them: 13.48 - 3.37 GB more
        ("lightning", 3, 4, 10.11e9),
        ("lightning", 2, 2, 10.11e9),
        # one micro-batch a step: each backward pass reduce-scatters
        ("lightning", 3, 1, 0.0),
        # unsharded gradients (ZeRO 0, 1) are whole already
        ("lightning", 1, 4, 0.0),
        # torchtitan's FSDP2 loop and DeepSpeed reduce every micro-batch
        ("pytorch-fsdp", 3, 4, 0.0),
        ("deepspeed", 3, 4, 0.0),
    ],
)
def test_unsynced_gradient_bytes(stack: str, zero: int, accumulation: int, extra: float) -> None:
    full = LLAMA2_7B * 2.0
    got = mem.unsynced_gradient_bytes(
        full, full / 4, stack=stack, zero=zero, accumulation=accumulation
    )
    assert got == pytest.approx(extra, rel=1e-3)


def gradients_gib(framework: str, global_batch: int) -> tuple[float, int, bool]:
    est = estimate(llama2_full(framework, global_batch), A10G, 4, topology=G5_12XLARGE)
    return est.memory_breakdown_gib["gradients"], est.strategy.grad_accumulation, est.fits


def test_lightning_holds_the_whole_gradients_while_it_accumulates() -> None:
    # 64 / (4 ranks x 4) = 4 micro-batches: all 6.74e9 x 2 bytes = 12.55 GiB of gradients
    grads, accumulation, fits = gradients_gib("lightning", 64)
    assert accumulation == 4
    assert grads == pytest.approx(LLAMA2_7B * 2.0 / GIB, rel=1e-3)
    # with 12.55 GiB of 16-bit weights' shard, AdamW's bf16 states and the rest: over 24 GB
    assert not fits


def test_one_micro_batch_a_step_keeps_the_shard() -> None:
    # 16 / (4 x 4) = 1: the shard, 3.14 GiB, and the job fits the A10G
    grads, accumulation, fits = gradients_gib("lightning", 16)
    assert accumulation == 1
    assert grads == pytest.approx(LLAMA2_7B * 2.0 / 4 / GIB, rel=1e-3)
    assert fits


def test_a_stack_that_syncs_every_micro_batch_keeps_the_shard() -> None:
    grads, accumulation, fits = gradients_gib("pytorch-fsdp", 64)
    assert accumulation == 4
    assert grads == pytest.approx(LLAMA2_7B * 2.0 / 4 / GIB, rel=1e-3)
    assert fits


def searched(framework: str, global_batch: int) -> Any:
    """The layout search's pick (micro-batch unpinned) for :func:`llama2_full`."""
    return estimate(llama2_full(framework, global_batch, None), A10G, 4, topology=G5_12XLARGE)


@pytest.mark.parametrize(
    ("framework", "global_batch", "micro_batch", "accumulation", "fits"),
    [
        # 16 sequences a rank fit in one micro-batch beside the shard: no accumulation, 19.1 GiB
        ("lightning", 64, 16, 1, True),
        ("pytorch-fsdp", 64, 16, 1, True),
        # 32 a rank do not: accumulating, the whole 12.55 GiB of gradients leave no room for even
        # one sequence's activations on the 22.5 GiB an A10G offers
        ("lightning", 128, 1, 32, False),
        # reduce-scattering each micro-batch, two of 16 fit
        ("pytorch-fsdp", 128, 16, 2, True),
    ],
)
def test_the_search_accumulates_only_where_the_whole_share_does_not_fit(
    framework: str, global_batch: int, micro_batch: int, accumulation: int, fits: bool
) -> None:
    est = searched(framework, global_batch)
    assert est.strategy.micro_batch_size == micro_batch
    assert est.strategy.grad_accumulation == accumulation
    assert est.fits is fits


def test_block_recompute_makes_room_for_the_whole_gradients() -> None:
    """Under block recompute the search recomputes the fewest layers that fit: an accumulating
    lightning step, holding all 12.55 GiB of gradients, recomputes more of them than a stack that
    keeps the 3.14 GiB shard, and still fits the A100 40GB."""

    def block(framework: str) -> Any:
        spec = llama2_full(framework, 128, None, "block")
        return estimate(spec, resolve_gpu("A100-40GB"), 4, topology=G5_12XLARGE)

    lightning, eager = block("lightning"), block("pytorch-fsdp")
    assert lightning.strategy.grad_accumulation == eager.strategy.grad_accumulation == 2
    assert lightning.memory_breakdown_gib["gradients"] == pytest.approx(
        LLAMA2_7B * 2.0 / GIB, rel=1e-3
    )
    assert lightning.strategy.recomputed_layers > eager.strategy.recomputed_layers
    assert lightning.fits
    assert lightning.memory_per_gpu_gib <= resolve_gpu("A100-40GB").usable_memory_gib


def test_the_pytorch_lightning_trainer_reduce_scatters_every_micro_batch() -> None:
    """review: the PyTorch Lightning Trainer blocks the gradient sync of accumulating micro-batches
    only for a DistributedDataParallel model (lightning/pytorch/strategies/parallel.py,
    ParallelStrategy.block_backward_sync: ``isinstance(self.model, DistributedDataParallel)``), and
    its FSDPStrategy does not override it: under FSDP each micro-batch reduce-scatters, as eager
    FSDP does.  Only Lightning Fabric's no_backward_sync (LitGPT's loops) is FSDP's no_sync."""
    from planner.workload.frameworks import canonical_framework

    assert canonical_framework("pytorch-lightning") == "pytorch-fsdp"
    assert canonical_framework("litgpt") == canonical_framework("fabric") == "lightning"
    grads, accumulation, fits = gradients_gib("pytorch-lightning", 64)
    assert accumulation == 4
    assert grads == pytest.approx(LLAMA2_7B * 2.0 / 4 / GIB, rel=1e-3)
    assert fits
