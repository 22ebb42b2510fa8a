"""Optimizer states on local NVMe (issue 14, item 4): ``training.offload: nvme`` is DeepSpeed
ZeRO-Infinity's ``offload_optimizer.device: nvme`` -- the GPU memory of CPU offload, host RAM only
for the pinned staging buffers, the node's NVMe for the states, and the drives' time in each step.

The hand-computed job: a 7e9-parameter full fine-tune with mixed-precision AdamW on one A100-80GB,
the drives at the default 10 GB/s read and 5 GB/s write (DeepNVMe blog).  The swap files hold 16
bytes per parameter (fp32 master 4 + Adam m 4 + v 4 + fp32 gradient 4) = 112 GB; each optimizer
step reads all 112 GB (11.2 s) and writes the 84 GB of weights and states back (16.8 s), 28.0 s
in all, and the 28 GB of gradients are written during the last backward pass (5.6 s, partly
hidden behind it).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

import planner
from planner.errors import ConfigError
from planner.gpu_specs import resolve_gpu
from planner.optimize.host import HOST_RESERVE_GIB, host_need
from planner.workload import estimate, parse_workload
from planner.workload import memory as mem
from planner.workload.strategy import _nvme_seconds
from planner.workload.training import train_facts
from tests.conftest import offer_row

PARAMS = 7.0e9
GIB = 2.0**30
# ZeRO-3, one sequence per micro-batch: the same layout with the states in host RAM or on NVMe
PINNED = {"zero": 3, "tensor": 1, "pipeline": 1, "micro_batch": 1}


def job(**training: Any) -> dict[str, Any]:
    """A 7e9-parameter decoder fine-tuned on 320 sequences of 2,048 tokens, 32 per step (10 steps)."""
    return {
        "name": "seven-b",
        "kind": "finetune",
        "model": {
            "arch": "decoder",
            "params": PARAMS,
            "layers": 32,
            "hidden": 4096,
            "heads": 32,
            "vocab": 32000,
            "seq_len": 2048,
            "dropout": 0.0,
        },
        "data": {"samples": 320, "tokens_per_sample": 2048},
        "training": {"global_batch_samples": 32, "method": "full", **training},
    }


def test_the_swap_files_hold_sixteen_bytes_per_parameter() -> None:
    """Mixed-precision AdamW: 12 bytes of master weights and moments plus the 4-byte fp32 gradient.
    Cross-check: a 10B model on two ranks keeps "80G of swap files" on NVMe (5e9 x 16 bytes;
    deepspeedai/DeepSpeedExamples#192)."""
    state = mem.state_bytes("fp16", "adamw")
    assert mem.nvme_state_bytes_per_param(state) == 16.0
    assert 5e9 * mem.nvme_state_bytes_per_param(state) == pytest.approx(80e9)


def test_a_step_reads_and_writes_every_state_once_over_the_nodes_drives() -> None:
    f = train_facts(parse_workload(job(offload="nvme")))
    step_s, gradients_s = _nvme_seconds(f, PARAMS, 1)
    assert step_s == pytest.approx(7e9 * 16 / 10e9 + 7e9 * 12 / 5e9)  # 11.2 + 16.8 = 28.0 s
    assert step_s == pytest.approx(28.0)
    assert gradients_s == pytest.approx(7e9 * 4 / 5e9)  # 5.6 s
    # eight GPUs of a node share its drives: each steps an eighth, the node moves the same bytes
    assert _nvme_seconds(f, PARAMS / 8, 8) == pytest.approx((28.0, 5.6))
    # the bandwidths are workload settings: twice as fast drives, half the time
    fast = train_facts(
        parse_workload(job(offload="nvme", nvme_read_gb_per_s=20, nvme_write_gb_per_s=10))
    )
    assert _nvme_seconds(fast, PARAMS, 1) == pytest.approx((14.0, 2.8))


def test_nvme_offload_keeps_cpu_offloads_gpu_memory_and_adds_the_drives_time() -> None:
    gpu = resolve_gpu("A100-80GB")
    cpu = estimate(parse_workload(job(offload="optimizer", parallelism=PINNED)), gpu, 1)
    nvme = estimate(parse_workload(job(offload="nvme", parallelism=PINNED)), gpu, 1)
    assert cpu.fits and nvme.fits
    assert nvme.memory_breakdown_gib == pytest.approx(cpu.memory_breakdown_gib)
    assert nvme.memory_breakdown_gib["optimizer_states"] == 0.0
    # 10 optimizer steps, each 28.0 s of reads and writes plus the part of the 5.6 s gradient
    # write the last backward pass does not hide
    steps = "training steps"
    extra_s = (nvme.time_breakdown_hours[steps] - cpu.time_breakdown_hours[steps]) * 3600 / 10
    assert 28.0 <= extra_s <= 28.0 + 5.6
    line = next(a for a in nvme.assumptions if "offload: nvme" in a)
    assert "112 GB of NVMe per node (16 bytes per parameter" in line
    assert "reads 112 GB and writes 112 GB per node at 10 / 5 GB/s (DeepSpeed DeepNVMe" in line
    match = re.search(r"([\d.]+) s of each", line)
    assert match is not None
    assert float(match.group(1)) == pytest.approx(extra_s, abs=0.06)
    assert not any("offload: nvme" in a for a in cpu.assumptions)


def test_the_host_holds_the_staging_buffers_not_the_states() -> None:
    """One rank stages one 1e9-parameter sub-group in 4 fp32 buffers, 16 GB, where CPU offload
    keeps all 84 GB of master weights and moments in RAM."""
    gpu = resolve_gpu("A100-80GB")
    cpu_spec = parse_workload(job(offload="optimizer"))
    nvme_spec = parse_workload(job(offload="nvme"))
    cpu_need = host_need(cpu_spec, estimate(cpu_spec, gpu, 1), 1).host_memory_gib
    nvme_need = host_need(nvme_spec, estimate(nvme_spec, gpu, 1), 1).host_memory_gib
    assert cpu_need == pytest.approx(12 * 7e9 / GIB + HOST_RESERVE_GIB)  # 86.2 GiB
    assert nvme_need == pytest.approx(4 * 4 * 1e9 / GIB + HOST_RESERVE_GIB)  # 22.9 GiB
    # a rank with less than a sub-group stages only what it has
    assert mem.nvme_staging_bytes(2.5e8) == pytest.approx(16 * 2.5e8)


def test_a_host_too_small_for_cpu_offload_runs_nvme_offload(tmp_path: Path) -> None:
    """One A100 with 64 GiB of host RAM: CPU offload needs 86 GiB there, NVMe offload 23."""

    def offer(name: str, ram: float, price: float) -> dict[str, Any]:
        return offer_row(
            provider="acme",
            instance_type=name,
            gpu_model="A100-80GB",
            gpu_count=1,
            vcpus=12.0,
            host_memory_gib=ram,
            interconnect="none",
            price_on_demand_usd_per_hour=price,
            price_spot_usd_per_hour=None,
        )

    offers = tmp_path / "offers.csv"
    rows = [offer("a100-64g", 64.0, 1.0), offer("a100-256g", 256.0, 3.0)]
    pd.DataFrame(rows).to_csv(offers, index=False)

    def used(offload: str) -> tuple[set[str], list[str]]:
        path = tmp_path / f"{offload}.yaml"
        path.write_text(yaml.safe_dump(job(offload=offload)), encoding="utf-8")
        result = planner.quote(
            workload=str(path),
            deadline_hours=24 * 7,
            offers_files=(offers,),
            providers=("acme",),
            top=2,
        )
        return {i.instance_type for p in result.plans for i in p.items}, list(result.excluded)

    cpu_used, cpu_excluded = used("optimizer")
    assert cpu_used == {"a100-256g"}
    assert any("a100-64g" in line and "host RAM" in line for line in cpu_excluded)
    nvme_used, _ = used("nvme")
    assert "a100-64g" in nvme_used


@pytest.mark.parametrize(
    ("training", "words"),
    [
        # DeepSpeed offloads to NVMe only under ZeRO-3
        ({"offload": "nvme", "parallelism": {"zero": 1}}, "needs ZeRO stage 3"),
        # ZeRO-3 does not run with pipeline parallel
        ({"offload": "nvme", "parallelism": {"pipeline": 2}}, "pipeline parallel"),
        # NVMe offload is a DeepSpeed feature
        ({"offload": "nvme", "framework": "torchtitan"}, "use framework auto, deepspeed"),
        # a bandwidth without the offload it describes
        ({"nvme_write_gb_per_s": 3.0}, "applies only with offload: nvme"),
        # no drive moves zero or negative bytes per second
        ({"offload": "nvme", "nvme_read_gb_per_s": -1}, "nvme_read_gb_per_s"),
    ],
)
def test_bad_nvme_settings_say_what_to_do(training: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(words)):
        parse_workload(job(**training))


def test_workloads_without_nvme_keep_their_layouts() -> None:
    """No nvme field, no change: the facts carry no NVMe and the search keeps ZeRO-0 on one GPU."""
    spec = parse_workload(job())
    f = train_facts(spec)
    assert not f.nvme_optimizer
    est = estimate(parse_workload(job(offload="optimizer")), resolve_gpu("A100-80GB"), 1)
    assert est.strategy.zero_stage == 0
    assert not math.isinf(est.wall_hours)
