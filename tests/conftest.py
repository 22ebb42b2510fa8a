"""Shared fixtures: small offer frames and an isolated user data directory."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import settings

from planner.gpu_specs import load_gpu_catalog

# Property tests draw the same examples on every run ("ci", the default), so CI results never
# depend on the luck of the draw. HYPOTHESIS_PROFILE=explore draws fresh random examples: use it
# to hunt for new failures, then pin each one found as an ordinary regression test.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _isolated_user_data(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Refreshed snapshots of the developer's machine must never leak into tests."""
    path = tmp_path_factory.mktemp("user-data")
    monkeypatch.setenv("PLANNER_DATA_DIR", str(path))
    return path


def offer_row(**overrides: object) -> dict[str, object]:
    """One valid offer row; override any column."""
    row: dict[str, object] = {
        "provider": "aws",
        "region": "us-east-1",
        "instance_type": "p4d.24xlarge",
        "gpu_model": "A100-40GB",
        "gpu_count": 8,
        "gpu_memory_gib": 40.0,
        "vcpus": 96.0,
        "host_memory_gib": 1152.0,
        "interconnect": "nvswitch",
        "network_gbps": 400.0,
        "fabric": "efa",
        "price_on_demand_usd_per_hour": 32.7726,
        "price_spot_usd_per_hour": 9.0,
        "price_reserved_1y_usd_per_hour": 20.3,
        "price_reserved_3y_usd_per_hour": 12.5,
        "price_basis_reserved": "derived",
        "source": "test",
        "as_of": "2026-11-01",
    }
    if "gpu_model" in overrides and "gpu_memory_gib" not in overrides:  # the part's own memory
        row["gpu_memory_gib"] = load_gpu_catalog().resolve(str(overrides["gpu_model"])).memory_gib
    row.update(overrides)
    return row


def edited_snapshot(root: Path, change: Callable[[dict[str, Any]], object]) -> Path:
    """A valid one-provider snapshot written under ``root`` with its manifest changed by
    ``change`` (a hand edit, for the bad-input tests)."""
    from planner.catalog.store import write_snapshot

    frame = pd.DataFrame([offer_row(as_of="2026-11-20")])
    path = write_snapshot(
        root,
        {"aws": frame},
        snapshot_id="2099-01-01T000000Z",
        now=datetime(2099, 1, 1, tzinfo=timezone.utc),
    )
    manifest = json.loads((path / "manifest.json").read_text())
    change(manifest)
    (path / "manifest.json").write_text(json.dumps(manifest))
    return path


@pytest.fixture
def five_offers() -> pd.DataFrame:
    return pd.DataFrame(
        [
            offer_row(),
            offer_row(
                instance_type="p4de.24xlarge",
                gpu_model="A100-80GB",
                gpu_memory_gib=80.0,
                price_on_demand_usd_per_hour=40.97,
            ),
            offer_row(
                instance_type="g5.xlarge",
                gpu_model="A10G",
                gpu_count=1,
                gpu_memory_gib=24.0,
                interconnect="none",
                fabric="ethernet",
                price_on_demand_usd_per_hour=1.006,
                price_spot_usd_per_hour=None,
            ),
            offer_row(
                provider="gcp",
                region="us-central1",
                instance_type="a2-ultragpu-1g",
                gpu_model="A100-80GB",
                gpu_count=1,
                gpu_memory_gib=80.0,
                interconnect="none",
                fabric="ethernet",
                price_on_demand_usd_per_hour=2.95,
            ),
            offer_row(
                provider="azure",
                region="eastus",
                instance_type="Standard_ND96isr_H100_v5",
                gpu_model="H100",
                gpu_memory_gib=80.0,
                fabric="infiniband",
                price_on_demand_usd_per_hour=98.32,
            ),
        ]
    )
