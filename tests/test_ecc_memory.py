"""GDDR6 datacenter GPUs that ship with ECC on give 1/16 of their memory to the check bits: a job
can allocate what nvidia-smi reports (T4 15,360 MiB, A10/A10G 23,028, L4 23,034, L40S 46,068), not
the datasheet's GB.  The fit checks use it; HBM parts keep their capacity."""

from __future__ import annotations

import pytest

from planner.gpu_specs import resolve_gpu
from planner.workload import WorkloadSpec, estimate, parse_workload


@pytest.mark.parametrize(
    ("gpu", "mib"),
    [("T4", 15_360), ("A10G", 23_028), ("A10", 23_028), ("L4", 23_034), ("L40S", 46_068)],
)
def test_ecc_gddr_parts_offer_what_nvidia_smi_reports(gpu: str, mib: int) -> None:
    spec = resolve_gpu(gpu)
    assert spec.usable_memory_gib == pytest.approx(mib / 1024, abs=0.01)
    assert spec.usable_memory_gib == pytest.approx(spec.memory_gib * 15 / 16, rel=0.01)


@pytest.mark.parametrize("gpu", ["A100-80GB", "H100", "RTX4090", "RTXA6000"])
def test_hbm_and_ecc_off_parts_offer_their_datasheet_memory(gpu: str) -> None:
    spec = resolve_gpu(gpu)
    assert spec.usable_memory_gib == spec.memory_gib


def _gpt2_like(params: float) -> WorkloadSpec:
    return parse_workload(
        {
            "name": "t4-edge",
            "kind": "finetune",
            "model": {"arch": "decoder", "params": params, "layers": 24, "hidden": 1536,
                      "heads": 16, "vocab": 50257, "seq_len": 1024},
            "data": {"tokens": 1e8},
            "training": {"precision": "fp16", "parallelism": {"micro_batch": 1},
                         "activation_checkpointing": "full"},
        }
    )  # fmt: skip


def test_a_job_between_the_usable_and_the_datasheet_memory_does_not_fit_a_t4() -> None:
    t4 = resolve_gpu("T4")
    edge = estimate(_gpt2_like(0.8e9), t4, 1)
    assert t4.usable_memory_gib < edge.memory_per_gpu_gib < t4.memory_gib
    assert not edge.fits
    below = estimate(_gpt2_like(0.75e9), t4, 1)
    assert below.memory_per_gpu_gib < t4.usable_memory_gib and below.fits


def test_qlora_keeps_an_untied_output_head_in_16_bits() -> None:
    """bitsandbytes quantises the linear layers but not the token embedding nor the output head:
    Llama 3 70B's head is a second 128,256 x 8,192 matrix in 16 bits (its config.json:
    tie_word_embeddings false), GPT-2's shares the embedding."""
    from planner.workload import memory as mem

    frozen, vocab, hidden = 70.0e9, 128_256, 8_192
    tied = mem.qlora_frozen_bytes_per_param(frozen, vocab, hidden)
    untied = mem.qlora_frozen_bytes_per_param(frozen, vocab, hidden, tied=False)
    extra_bytes = vocab * hidden * (2.0 - mem.QLORA_BYTES_PER_PARAM)
    assert (untied - tied) * frozen == pytest.approx(extra_bytes)
    assert (
        parse_workload(
            {"name": "x", "kind": "finetune", "model": "llama-3-70b", "data": {"tokens": 1e6}}
        ).model.tied_embeddings
        is False
    )
    assert (
        parse_workload(
            {"name": "x", "kind": "finetune", "model": "gpt2", "data": {"tokens": 1e6}}
        ).model.tied_embeddings
        is True
    )


def test_the_gpu_listing_shows_what_a_job_can_allocate() -> None:
    import planner

    records = {r["name"]: r for r in planner.gpus()}
    assert (records["T4"]["memory_gib"], records["T4"]["usable_memory_gib"]) == (16.0, 15.0)
    assert records["H100"]["usable_memory_gib"] == records["H100"]["memory_gib"] == 80.0
