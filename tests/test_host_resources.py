"""Host resources in offers and quotes (issue 16, deliverable 4): the local disk column and
``offers --min-local-disk``, and a workload's host needs (data-loader vCPUs per GPU, host RAM
for offloaded optimizer states) as quote constraints."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import planner
from planner.catalog import load_offer_book
from planner.cli import main
from planner.errors import InfeasibleError
from planner.optimize.candidates import STARTUP_HOURS
from planner.optimize.host import (
    HOST_RESERVE_GIB,
    OFFLOAD_BYTES_PER_PARAM,
    host_need,
    loader_slowdown,
)
from planner.workload import load_workload
from planner.workload.data_loader import VCPUS_PER_WORKER, classification_images_per_s
from tests.conftest import offer_row

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "pricing_cache" / "reference-2026-11-25"


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


# -- the bundled snapshot -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("instance_type", "disk_gb"),
    [
        ("p5.48xlarge", 8 * 3800.0),  # LocalDiskSize 3800 x LocalDiskCount 8 in the reference row
        ("g5.xlarge", 250.0),  # 1 x 250 GB NVMe
        ("p3.2xlarge", 0.0),  # EBS only: the extract lists no instance store
    ],
)
def test_the_snapshot_carries_aws_instance_store(instance_type: str, disk_gb: float) -> None:
    offers = load_offer_book((), snapshot_dir=SNAPSHOT).offers
    rows = offers[(offers["provider"] == "aws") & (offers["instance_type"] == instance_type)]
    assert not rows.empty
    assert set(rows["local_disk_gb"]) == {disk_gb}


def test_gcp_bundled_local_ssd_is_known_and_optional_ssd_is_not() -> None:
    offers = load_offer_book((), snapshot_dir=SNAPSHOT).offers
    gcp = offers[offers["provider"] == "gcp"].drop_duplicates("instance_type")
    disk = dict(zip(gcp["instance_type"], gcp["local_disk_gb"], strict=True))
    assert disk["a3-megagpu-8g"] == round(16 * 375 * 2**30 / 1e9)  # 16 x 375 GiB
    assert math.isnan(disk["g2-standard-4"])  # Local SSD only as a priced option


# -- offers --min-local-disk ------------------------------------------------------------------------
def _disk_offers(tmp_path: Path) -> Path:
    return _write(
        tmp_path / "disks.csv",
        [
            offer_row(provider="acme", instance_type="big-disk", local_disk_gb=2000.0),
            offer_row(provider="acme", instance_type="small-disk", local_disk_gb=500.0),
            offer_row(provider="acme", instance_type="no-disk", local_disk_gb=0.0),
            offer_row(provider="acme", instance_type="unknown-1"),
            offer_row(provider="acme", instance_type="unknown-2", local_disk_gb=None),
        ],
    )


def test_min_local_disk_filters_and_counts_the_unknown(tmp_path: Path) -> None:
    path = _disk_offers(tmp_path)
    args = ["offers", "--offers", str(path), "--provider", "acme", "--min-local-disk", "1000"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "big-disk" in result.stdout and "2,000" in result.stdout
    for left_out in ("small-disk", "no-disk", "unknown-1", "unknown-2"):
        assert left_out not in result.stdout
    assert "disk GB" in result.stdout  # the filter shows its column
    assert "note: 2 offers do not state their local disk and are left out" in result.stderr


def test_the_disk_column_shows_only_when_asked(tmp_path: Path) -> None:
    path = _disk_offers(tmp_path)
    base = ["offers", "--offers", str(path), "--provider", "acme"]
    plain = CliRunner().invoke(main, base)
    assert plain.exit_code == 0 and "disk GB" not in plain.stdout
    assert "left out" not in plain.stderr
    shown = CliRunner().invoke(main, [*base, "--show-local-disk"])
    assert shown.exit_code == 0 and "disk GB" in shown.stdout


def test_no_offer_with_enough_disk_names_the_most_on_offer(tmp_path: Path) -> None:
    path = _disk_offers(tmp_path)
    args = ["offers", "--offers", str(path), "--provider", "acme", "--min-local-disk", "1e5"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0
    assert "local disk filter); the most on offer is 2000 GB" in result.stderr


# -- quote constraints: data-loader vCPUs ---------------------------------------------------------
def test_an_image_workload_needs_cores_to_decode_its_images(tmp_path: Path) -> None:
    # ResNet-50 on one A10G: the estimate trains at r images/s, so the GPU needs ceil(r / p)
    # loader vCPUs (p: a worker's 387.5 images/s over its core's two vCPUs) and one for its
    # trainer (n); on an instance of n - 1 vCPUs the n - 2 loader vCPUs prepare (n - 2) p images/s
    # and the training steps wait for them.
    spec = load_workload("resnet50-imagenet")
    est = planner.estimate("resnet50-imagenet", "A10G", 1)
    steps_s = est.time_breakdown_hours["training steps"] * 3600
    rate = 1281167 * 90 / steps_s
    per_vcpu = classification_images_per_s() / VCPUS_PER_WORKER
    need = math.ceil(rate / per_vcpu) + 1
    assert need >= 3  # the smaller instance keeps a loader vCPU
    small = float(need - 1)
    assert host_need(spec, est, 1).vcpus == need
    path = _write(
        tmp_path / "a10g.csv",
        [
            offer_row(
                provider="acme",
                instance_type="a10g-small",
                gpu_model="A10G",
                gpu_count=1,
                vcpus=small,
                interconnect="none",
                price_on_demand_usd_per_hour=1.0,
                price_spot_usd_per_hour=None,
            ),
            offer_row(
                provider="acme",
                instance_type="a10g-big",
                gpu_model="A10G",
                gpu_count=1,
                vcpus=float(need),
                interconnect="none",
                price_on_demand_usd_per_hour=1.05,
                price_spot_usd_per_hour=None,
            ),
            offer_row(  # an offer that does not state its vCPUs is not excluded
                provider="acme",
                instance_type="a10g-unknown",
                gpu_model="A10G",
                gpu_count=1,
                vcpus=None,
                interconnect="none",
                price_on_demand_usd_per_hour=1.3,
                price_spot_usd_per_hour=None,
            ),
        ],
    )
    result = planner.quote(
        workload="resnet50-imagenet",
        deadline_hours=24 * 14,
        offers_files=(path,),
        providers=("acme",),
        top=3,
    )
    assert result.plans[0].items[0].instance_type == "a10g-big"
    assert not any("a10g-small" in x for x in result.excluded)  # slowed, not excluded
    slow = loader_slowdown(host_need(spec, est, 1), small)
    assert slow == pytest.approx(rate / ((small - 1) * per_vcpu))
    assert slow * 1.0 > 1.05  # the slowed small offer costs more than the big one
    assert loader_slowdown(host_need(spec, est, 1), float(need)) == 1.0
    only = _write(
        tmp_path / "a10g-small.csv",
        [
            offer_row(
                provider="acme",
                instance_type="a10g-small",
                gpu_model="A10G",
                gpu_count=1,
                vcpus=small,
                interconnect="none",
                price_on_demand_usd_per_hour=1.0,
                price_spot_usd_per_hour=None,
            )
        ],
    )
    alone = planner.quote(
        workload="resnet50-imagenet",
        deadline_hours=24 * 14,
        offers_files=(only,),
        providers=("acme",),
        top=1,
    )
    (item,) = alone.plans[0].items
    assert item.instance_type == "a10g-small" and f"loader-bound x{slow:.1f}" in item.strategy
    steps_h = est.time_breakdown_hours["training steps"]
    # the run: the estimate's hours with its training steps stretched, plus the start-up
    assert item.hours == pytest.approx(
        est.wall_hours + steps_h * (slow - 1.0) + STARTUP_HOURS, rel=1e-6
    )


def test_a_text_workload_needs_one_loader_core_per_gpu() -> None:
    spec = load_workload("gpt2-xl-finetune")
    est = planner.estimate("gpt2-xl-finetune", "A100-80GB", 8)
    assert host_need(spec, est, 8).vcpus == 8 * (1 + 1)
    assert host_need(spec, est, 8).host_memory_gib == 0.0  # nothing offloaded


# -- quote constraints: host RAM for offloaded optimizer states -----------------------------------
def test_offloaded_optimizer_states_need_host_ram(tmp_path: Path) -> None:
    text = (ROOT / "scenarios/workloads/gpt2-xl-finetune.yaml").read_text(encoding="utf-8")
    workload = tmp_path / "offload.yaml"
    offloaded = text.replace("  method: full\n", "  method: full\n  offload: optimizer\n")
    workload.write_text(offloaded, encoding="utf-8")
    spec = load_workload(str(workload))
    params = float(spec.model.params or 0.0)
    # one GPU holds every state: 12 bytes per parameter, plus the reserve
    need_gib = OFFLOAD_BYTES_PER_PARAM * params / 2**30 + HOST_RESERVE_GIB
    est = planner.estimate(str(workload), "A100-80GB", 1)
    assert host_need(spec, est, 1).host_memory_gib == pytest.approx(need_gib)
    path = _write(
        tmp_path / "ram.csv",
        [
            offer_row(
                provider="acme",
                instance_type="a100-4gib",
                gpu_model="A100-80GB",
                gpu_count=1,
                vcpus=12.0,
                host_memory_gib=4.0,  # below the reserve: no gang size can hold its share
                interconnect="none",
                price_on_demand_usd_per_hour=1.0,
                price_spot_usd_per_hour=None,
            ),
            offer_row(
                provider="acme",
                instance_type="a100-ram",
                gpu_model="A100-80GB",
                gpu_count=1,
                vcpus=12.0,
                host_memory_gib=math.ceil(need_gib),
                interconnect="none",
                price_on_demand_usd_per_hour=1.5,
                price_spot_usd_per_hour=None,
            ),
        ],
    )
    result = planner.quote(
        workload=str(workload),
        deadline_hours=24 * 7,
        offers_files=(path,),
        providers=("acme",),
        top=2,
    )
    used = {i.instance_type for p in result.plans for i in p.items}
    assert used == {"a100-ram"}
    line = next(x for x in result.excluded if "a100-4gib" in x)
    assert "GiB of host RAM for the optimizer states held there, a100-4gib has 4" in line


def test_a_quote_nothing_can_feed_says_why(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "tiny.csv",
        [
            offer_row(
                provider="acme",
                instance_type="a10g-1cpu",
                gpu_model="A10G",
                gpu_count=1,
                vcpus=1.0,  # its one core runs the trainer: none is left to load images
                interconnect="none",
                price_on_demand_usd_per_hour=1.0,
                price_spot_usd_per_hour=None,
            )
        ],
    )
    with pytest.raises(InfeasibleError, match="too few vCPUs to feed their GPUs"):
        planner.quote(
            workload="resnet50-imagenet",
            deadline_hours=24 * 14,
            offers_files=(path,),
            providers=("acme",),
        )


def test_a_provider_that_states_every_disk_gets_no_note() -> None:
    # every AWS offer states its instance store: nothing unknown to count (the note is counted
    # within the provider filter, not over the other providers' rows)
    args = ["offers", "--provider", "aws", "--gpu", "H100:8", "--min-local-disk", "20000"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "p5.48xlarge" in result.stdout and "30,400" in result.stdout
    assert "left out" not in result.stderr
