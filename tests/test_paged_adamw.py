"""bitsandbytes' paged 32-bit AdamW (``optimizer: paged-adamw``): fp32 moments in CUDA unified
memory, out of the fit, resident where the GPU has room, evicted to host RAM and paged over PCIe
each step where it has not (planner.workload.memory.paged_spill_bytes, strategy._paging)."""

from __future__ import annotations

from typing import Any

import pytest

from planner.errors import ConfigError
from planner.gpu_specs import resolve_gpu
from planner.workload import estimate, parse_workload
from planner.workload.estimate_types import default_topology, topology_links
from planner.workload.memory import GIB, paged_spill_bytes, state_bytes
from planner.workload.strategy import Candidate, search_training
from planner.workload.training import flash_attention, train_facts

RTX4090 = resolve_gpu("RTX4090")
A100_80 = resolve_gpu("A100-80GB")
LLAMA2_7B_PARAMS = 6.74e9


def torchtune_7b(optimizer: str, **training: Any) -> Any:
    """torchtune llama2/7B_full_low_memory as the README table ran it: pure bf16, the optimizer in
    the backward pass, full activation checkpointing, batch 4 x 2,048 tokens."""
    return parse_workload(
        {
            "name": "tt7",
            "kind": "finetune",
            "model": "llama-2-7b",
            "data": {"samples": 50000, "tokens_per_sample": 2048},
            "training": {
                "precision": "pure-bf16",
                "optimizer": optimizer,
                "optimizer_in_backward": True,
                "activation_checkpointing": "full",
                "global_batch_samples": 4,
                "parallelism": {"micro_batch": 4},
                **training,
            },
        }
    )


def best(spec: Any, gpu: Any) -> Candidate:
    f = train_facts(spec)
    links = topology_links(gpu, default_topology(gpu, 1), 1)
    cand, _ = search_training(f, gpu, 1, links, flash=flash_attention(spec, gpu))
    assert cand is not None
    return cand


def test_states_stay_fp32_under_pure_bf16() -> None:
    """bitsandbytes allocates 32-bit states as fp32 whatever the parameters' dtype: 2 + 2 + 8,
    not torch AdamW's 2 + 2 + 4; the 8-bit ones stay 8-bit (2), paged or not."""
    assert state_bytes("pure-bf16", "paged-adamw").total == 12.0
    assert state_bytes("pure-bf16", "adamw").total == 8.0
    assert state_bytes("pure-bf16", "paged-adamw-8bit").optimizer == 2.0
    # mixed precision: the fp32 master copy (4) on top of the 8 paged bytes, as plain AdamW
    assert state_bytes("bf16", "paged-adamw") == state_bytes("bf16", "adamw")


def test_7b_full_fine_tune_fits_a_24_gb_card_with_paged_adamw_not_adamw() -> None:
    """The GPU must hold the bf16 weights (13.5 GB), one layer's gradients and the activations;
    the 54 GB of fp32 moments may spill.  Plain AdamW keeps 27 GB of bf16 moments on the card."""
    paged = estimate(torchtune_7b("paged-adamw"), RTX4090, 1)
    plain = estimate(torchtune_7b("adamw"), RTX4090, 1)
    assert paged.fits
    assert not plain.fits
    assert paged.memory_breakdown_gib["optimizer_states"] == 0.0
    assert paged.memory_breakdown_gib["weights"] == pytest.approx(LLAMA2_7B_PARAMS * 2 / GIB)
    # within the measured 24.1 GB peak (torchtune README), which PyTorch's allocator reports
    assert paged.memory_per_gpu_gib * GIB < 24.1e9


def test_spilled_bytes_and_pcie_seconds_by_hand() -> None:
    """RTX 4090, PCIe 4.0 x16: 32 GB/s a direction x 0.7 link efficiency = 22.4 GB/s.  The states
    are 8 x 6.74e9 = 53.92 GB; the card keeps 24 GiB less what the job needs; each step moves the
    rest in and out: 2 x spilled / 22.4 GB/s."""
    spec = torchtune_7b("paged-adamw")
    cand = best(spec, RTX4090)
    assert cand.paged_bytes == pytest.approx(53.92e9)
    spare = 24 * GIB - cand.memory_bytes
    spilled = 53.92e9 - spare
    assert cand.paged_spill_bytes == pytest.approx(spilled)
    assert cand.paging_s == pytest.approx(2.0 * spilled / 22.4e9)
    # this layout needs 19.75 GiB, so 4.6 GB stay resident, 49.4 GB spill, 4.41 s a step
    assert cand.memory_bytes / GIB == pytest.approx(19.75, abs=0.01)
    assert spilled / 1e9 == pytest.approx(49.4, abs=0.05)
    assert cand.paging_s == pytest.approx(4.41, abs=0.01)
    est = estimate(spec, RTX4090, 1)
    line = next(a for a in est.assumptions if "unified memory" in a)
    assert "49.4 GB are evicted to host RAM" in line
    assert "2 x 49.4 GB over PCIe at 22.4 GB/s" in line
    assert "4.41 s of each" in line


def test_paged_spill_bytes() -> None:
    assert paged_spill_bytes(10e9, 4e9) == 6e9
    assert paged_spill_bytes(10e9, 12e9) == 0.0  # room to spare: nothing spills
    assert paged_spill_bytes(10e9, -1e9) == 10e9  # no room at all: everything spills


def gpt2_xl(optimizer: str) -> Any:
    """GPT-2 XL (1.56B) under torch.amp bf16, layout pinned so both optimizers run the same one
    (micro-batch 4: at 8 its eager gelu_new's fp32 chain, 3.8 GB a sequence, leaves 80 GB short)."""
    return parse_workload(
        {
            "name": "g",
            "kind": "finetune",
            "model": "gpt2-xl",
            "data": {"samples": 10000, "tokens_per_sample": 1024},
            "training": {
                "precision": "bf16",
                "optimizer": optimizer,
                "activation_checkpointing": "none",
                "global_batch_samples": 4,
                "parallelism": {"micro_batch": 4},
            },
        }
    )


def test_nothing_spills_on_an_80_gb_card_and_the_time_is_adamws() -> None:
    """1.56B x 8 = 12.5 GB of paged moments beside 1.56B x 8 = 12.5 GB of weights, gradients and
    master copy and the activations: all resident on 80 GB, so no PCIe, and the GPU step streams
    the same 28 bytes per parameter as torch's fp32 AdamW."""
    paged, plain = best(gpt2_xl("paged-adamw"), A100_80), best(gpt2_xl("adamw"), A100_80)
    assert paged.paged_spill_bytes == 0.0
    assert paged.paging_s == 0.0
    assert paged.step_s == pytest.approx(plain.step_s)
    est = estimate(gpt2_xl("paged-adamw"), A100_80, 1)
    assert est.wall_hours == pytest.approx(estimate(gpt2_xl("adamw"), A100_80, 1).wall_hours)
    assert any("all resident in the GPU's spare memory" in a for a in est.assumptions)


@pytest.mark.parametrize("offload", ["optimizer", "nvme"])
@pytest.mark.parametrize("optimizer", ["paged-adamw", "paged-adamw-8bit"])
def test_paged_optimizer_with_offload_is_refused(optimizer: str, offload: str) -> None:
    """DeepSpeed's offload steps the states on the CPU; a paged optimizer pages them itself."""
    with pytest.raises(ConfigError) as info:
        torchtune_7b(optimizer, offload=offload)
    text = str(info.value)
    assert f"optimizer {optimizer}" in text and f"offload: {offload}" in text
    assert "drop training.offload" in text


def test_on_rocm_the_paged_states_stay_in_host_memory_whatever_the_gpu_has_spare() -> None:
    """ROCm runs without XNACK by default and keeps managed memory in host RAM: GPT-2 XL's 12.5 GB
    of moments, resident on an 80 GB A100, cross the MI300X's PCIe 5.0 x16 (64 GB/s x 0.7 = 44.8
    GB/s) twice a step though its 192 GB could hold them many times over (the ROCm blogs' Llama 2
    7B full fine-tune with paged_adamw_32bit, held-out row H398)."""
    mi300x = resolve_gpu("MI300X")
    assert mi300x.vendor == "amd"
    spec = gpt2_xl("paged-adamw")
    paged, plain = best(spec, mi300x), best(gpt2_xl("adamw"), mi300x)
    assert paged.paged_spill_bytes == pytest.approx(paged.paged_bytes)
    assert paged.paged_bytes == pytest.approx(8 * 1.5576e9, rel=0.01)
    assert paged.paging_s == pytest.approx(2.0 * paged.paged_bytes / 44.8e9)
    assert paged.step_s > plain.step_s + 0.9 * paged.paging_s
    line = next(a for a in estimate(spec, mi300x, 1).assumptions if "HIP managed memory" in a)
    assert "stay in host RAM (ROCm without XNACK" in line
    # the same job on an NVIDIA card with room keeps them resident (the test above)
    assert best(spec, A100_80).paged_spill_bytes == 0.0
