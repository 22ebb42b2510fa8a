"""`planner build` (issue 16): whole machines sized by the stated rules and priced from a parts table.

The parts are tests/fixtures/parts/small.yaml (synthetic round prices), so every figure can be
worked out by hand; the bundled table's own checks are in tests/test_parts_table.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from planner.cli import main
from planner.config.currency import load_fx_rates
from planner.errors import InfeasibleError
from planner.gpu_specs import resolve_gpu
from planner.ownership import build as build_module
from planner.ownership.build import (
    PSU_HEADROOM,
    STORAGE_HEADROOM,
    PartsTable,
    build_machines,
    host_needs,
    parts_from_mapping,
)
from planner.ownership.hardware import hardware_from_mapping
from planner.workload import estimate, load_workload, parse_workload

FIXTURE = Path(__file__).parent / "fixtures" / "parts" / "small.yaml"


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> PartsTable:
    parts = parts_from_mapping(yaml.safe_load(FIXTURE.read_text()), load_fx_rates())
    monkeypatch.setattr(build_module, "load_parts", lambda: parts)
    return parts


def test_host_needs_follow_the_rules_by_hand() -> None:
    spec = load_workload("gpt2-finetune")
    gpu = resolve_gpu("RTX4090")
    est = estimate(spec, gpu, 2)
    needs = host_needs([(spec, est)], gpu, 2, cpu_tdp_w=170)
    assert needs.cpu_cores == 2 * 4 + 2  # 4 data-loader workers per GPU for text + the trainer
    assert needs.ram_gb == 2 * 2 * 24  # twice the GPUs' memory
    assert needs.draw_watts == 2 * gpu.tdp_w + 170 + 150
    assert needs.psu_watts == pytest.approx(needs.draw_watts * PSU_HEADROOM)
    assert (needs.gpu_slots, needs.pcie_lanes) == (2, 16)


def test_images_need_more_workers_and_fast_storage() -> None:
    spec = load_workload("resnet50-imagenet")
    gpu = resolve_gpu("RTX4090")
    est = estimate(spec, gpu, 1)
    needs = host_needs([(spec, est)], gpu, 1, cpu_tdp_w=105)
    assert needs.cpu_cores == 8 + 2
    samples = float(spec.data.samples or 0) * float(spec.data.epochs)
    assert needs.read_mb_per_s == pytest.approx(samples * 110e3 / (est.wall_hours * 3600) / 1e6)


def test_storage_is_nvme_only_when_the_loader_reads_faster_than_sata(table: PartsTable) -> None:
    from dataclasses import replace

    from planner.ownership.build import HostNeeds, _storage

    needs = HostNeeds(10, 64, 1500, 140, 900, 700, 1, 8)
    assert _storage(table, needs).part.name == "SATA SSD 2TB"
    fast = _storage(table, replace(needs, read_mb_per_s=800))
    assert fast is not None and fast.part.get("interface") == "nvme"
    big = _storage(table, replace(needs, storage_gb=7000, read_mb_per_s=800))
    assert big is not None and big.part.name == "NVMe 4TB" and big.quantity == 2


def test_offloaded_optimizer_states_need_host_ram() -> None:
    base = load_workload("llama-2-7b-lora")
    raw = base.model_dump(mode="json", exclude_none=True)
    raw["training"]["offload"] = "optimizer"
    raw["training"]["method"] = "full"
    raw.pop("preset", None)
    offloaded = parse_workload(raw)
    gpu = resolve_gpu("RTXA6000")
    est = estimate(offloaded, gpu, 1)
    needs = host_needs([(offloaded, est)], gpu, 1, 105)
    assert needs.ram_gb == pytest.approx(2 * 48 + 12 * float(offloaded.model.params or 0) / 1e9)


def test_states_on_nvme_need_staging_ram_swap_space_and_an_nvme_drive(table: PartsTable) -> None:
    base = load_workload("llama-2-7b-lora")
    raw = base.model_dump(mode="json", exclude_none=True)
    raw["training"].update(offload="nvme", method="full")
    raw.pop("preset", None)
    on_nvme = parse_workload(raw)
    raw["training"]["offload"] = "none"
    plain = parse_workload(raw)
    gpu = resolve_gpu("RTXA6000")
    params = float(on_nvme.model.params or 0)
    est = estimate(on_nvme, gpu, 1)
    needs = host_needs([(on_nvme, est)], gpu, 1, 105)
    without = host_needs([(plain, estimate(plain, gpu, 1))], gpu, 1, 105)
    # RAM: twice the GPU's memory + DeepSpeed's 4 pinned fp32 buffers of one 1e9-parameter
    # sub-group (16 GB), not the 12 bytes per parameter of states kept in RAM (81 GB here)
    assert needs.ram_gb == pytest.approx(2 * 48 + 4 * 4 * 1e9 / 1e9)
    # storage: the swap files, 16 bytes per parameter with mixed-precision AdamW, with headroom
    swap_gb = 16 * params / 1e9
    grown = needs.storage_gb / STORAGE_HEADROOM - without.storage_gb / STORAGE_HEADROOM
    assert grown == pytest.approx(swap_gb, rel=1e-6)
    # each step reads them back at the workload's NVMe rate (10 GB/s by default): NVMe, not SATA
    assert needs.read_mb_per_s == pytest.approx(10_000)
    drive = build_module._storage(table, needs)
    assert drive is not None and drive.part.get("interface") == "nvme"


def test_the_budget_picks_the_fastest_machine_it_can_pay_for(table: PartsTable) -> None:
    spec = load_workload("gpt2-finetune")
    roomy = build_machines([(spec, 4)], budget_usd=5000, table=table)
    best = roomy.machines[0]
    assert best.label == "fastest within the budget" and best.total_usd <= 5000
    hours = [m.hours_per_month for m in roomy.machines]
    assert hours[0] == min(hours)
    assert best.hours_per_month == pytest.approx(4 * best.runs[0].hours)
    tight = build_machines([(spec, 4)], budget_usd=1300, table=table)
    assert tight.machines[0].gpu == "RTX3060" and tight.machines[0].total_usd <= 1300
    # the bill of materials adds up, part by part
    assert best.total_usd == pytest.approx(
        sum(line.part.price_usd * line.quantity for line in best.lines)
    )


def test_four_gpus_need_a_workstation_platform(table: PartsTable) -> None:
    result = build_machines(
        [(load_workload("gpt2-finetune"), 1)], gpus_allowed=["RTX4090"], gpu_counts=[4], table=table
    )
    (machine,) = [m for m in result.machines if m.gpus == 4][:1]
    roles = {line.role: line for line in machine.lines}
    assert roles["CPU"].part.name == "Workstation 32-core"  # 32 lanes: more than a desktop's 24
    assert roles["chassis"].part.get("gpu_slots") >= 4
    # 4 x 450 W + 350 W CPU + 150 W = 2,300 W, x1.3 = 2,990 W: two 1,600 W supplies
    assert roles["power supply"].quantity == 2


def test_an_impossible_budget_names_the_cheapest_machine(table: PartsTable) -> None:
    with pytest.raises(InfeasibleError, match=r"the cheapest machine that runs them costs \$1,190"):
        build_machines([(load_workload("gpt2-finetune"), 1)], budget_usd=500, table=table)


def test_the_hardware_file_reads_back_and_works_in_tco_and_quote(
    table: PartsTable, tmp_path: Path
) -> None:
    out = tmp_path / "box.yaml"
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--workload",
            "gpt2-finetune",
            "--budget",
            "10000",
            "--currency",
            "CNY",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "CNY" in result.stdout and "source" in result.stdout
    hw = hardware_from_mapping(yaml.safe_load(out.read_text()), file=str(out))
    assert hw.capex_usd == pytest.approx(
        build_machines(
            [(load_workload("gpt2-finetune"), 1)],
            budget_usd=load_fx_rates().to_usd(10000, "CNY"),
            table=table,
        )
        .machines[0]
        .total_usd,
        abs=0.01,
    )
    tco = CliRunner().invoke(main, ["tco", "--hardware", str(out)])
    assert tco.exit_code == 0, tco.output
    quote = CliRunner().invoke(
        main, ["quote", "-w", "gpt2-finetune", "--deadline", "3d", "--hardware", str(out)]
    )
    assert quote.exit_code == 0, quote.output
    assert hw.name in quote.stdout


def test_json_lists_parts_with_sources_and_the_runs(table: PartsTable) -> None:
    out = CliRunner().invoke(
        main, ["build", "-w", "gpt2-finetune:3", "--budget", "3000", "--format", "json"]
    )
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    machine = doc["machines"][0]
    assert all(p["source"].startswith("https://") for p in machine["parts"])
    assert machine["runs"][0]["runs_per_month"] == 3
    assert machine["total_usd"] == pytest.approx(sum(p["price_usd"] for p in machine["parts"]))


def test_a_preset_is_repriced_from_the_table(table: PartsTable) -> None:
    out = CliRunner().invoke(
        main, ["build", "-w", "gpt2-finetune", "--preset", "workstation-rtx3060"]
    )
    assert out.exit_code == 0, out.output
    assert "1 x RTX3060" in out.stdout
    assert "preset workstation-rtx3060: its file says 1,200 USD a machine" in out.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["-w", "gpt2-finetune:zero"], "cannot read runs per month"),
        (["-w", "gpt2-finetun"], "did you mean"),
        (["-w", "gpt2-finetune", "--budget", "-5"], "--budget"),
        (["-w", "gpt2-finetune", "--preset", "nope"], "--preset"),
    ],
)
def test_bad_build_input_is_a_clear_error(table: PartsTable, args: list[str], says: str) -> None:
    out = CliRunner().invoke(main, ["build", *args])
    assert out.exit_code == 2, out.output
    assert says in out.output and "Traceback" not in out.output
