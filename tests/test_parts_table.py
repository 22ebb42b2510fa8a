"""The bundled parts table (``planner/data/parts.yaml``, issue 16): every row is a dated,
sourced, positive price, and every row carries the fields its kind needs to size a machine."""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from importlib import resources
from typing import Any

import pytest
import yaml

from planner.gpu_specs import load_gpu_catalog

# The table was assembled on this day; no price in it may be dated later.
ASSEMBLED = dt.date(2026, 11, 25)

REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "gpu": ("gpu",),
    "system": ("gpu", "gpus", "interconnect", "cpu_cores", "ram_gb", "storage_tb", "power_kw"),
    "cpu": (
        "cores",
        "threads",
        "pcie_lanes",
        "socket",
        "tdp_w",
        "memory_channels",
        "max_memory_gb",
        "platform",
    ),
    "motherboard": (
        "socket",
        "gpu_slots",
        "lanes_per_gpu_slot",
        "memory_slots",
        "max_memory_gb",
        "platform",
    ),
    "ram": ("size_gb", "type", "ecc"),
    "storage": ("capacity_gb", "interface", "read_mb_per_s"),
    "psu": ("watts", "efficiency"),
    "chassis": ("gpu_slots", "form"),
}
OPTIONAL_KINDS = {"cooler", "network"}
# Fields that are counts or quantities: present means a positive number.
NUMERIC_FIELDS = {
    "gpus",
    "cpu_cores",
    "ram_gb",
    "storage_tb",
    "power_kw",
    "cores",
    "threads",
    "pcie_lanes",
    "tdp_w",
    "memory_channels",
    "max_memory_gb",
    "gpu_slots",
    "lanes_per_gpu_slot",
    "memory_slots",
    "size_gb",
    "modules",
    "capacity_gb",
    "read_mb_per_s",
    "watts",
}
PLATFORMS = {"desktop", "workstation", "server"}
INTERFACES = {"sata", "nvme", "u2", "hdd"}
CONDITIONS = {"new", "used"}


def _table() -> dict[str, Any]:
    text = resources.files("planner.data").joinpath("parts.yaml").read_text(encoding="utf-8")
    table = yaml.safe_load(text)
    assert isinstance(table, dict)
    return table


def _rows() -> list[dict[str, Any]]:
    rows = _table()["parts"]
    assert isinstance(rows, list)
    return rows


def _as_date(value: object) -> dt.date:
    # PyYAML reads an unquoted YYYY-MM-DD as a date; a quoted one stays a string
    if isinstance(value, dt.date):
        return value
    assert isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value), value
    return dt.date.fromisoformat(value)


def _row_id(row: dict[str, Any]) -> str:
    return f"{row.get('kind')}:{row.get('name')}"


def test_the_table_parses_and_says_when_it_was_assembled() -> None:
    table = _table()
    assert _as_date(table["as_of"]) <= ASSEMBLED
    assert 60 <= len(table["parts"]) <= 120


@pytest.mark.parametrize("row", _rows(), ids=_row_id)
def test_every_row_is_a_dated_sourced_positive_price(row: dict[str, Any]) -> None:
    assert row["kind"] in set(REQUIRED_FIELDS) | OPTIONAL_KINDS
    assert isinstance(row["name"], str) and row["name"].strip()
    prices = [row[k] for k in ("price_usd", "price_cny") if k in row]
    assert prices, "a row needs a price in at least one currency"
    assert all(isinstance(p, (int, float)) and p > 0 for p in prices)
    assert _as_date(row["as_of"]) <= ASSEMBLED
    assert re.match(r"https?://\S+$", row["source"])
    assert row.get("condition", "new") in CONDITIONS
    if "price_range_usd" in row:
        low, high = row["price_range_usd"]
        assert 0 < low <= high


@pytest.mark.parametrize("row", _rows(), ids=_row_id)
def test_every_row_has_the_fields_its_kind_needs(row: dict[str, Any]) -> None:
    for field in REQUIRED_FIELDS.get(row["kind"], ()):
        assert field in row, field
        if field in NUMERIC_FIELDS:
            assert isinstance(row[field], (int, float)) and row[field] > 0, field
    if "platform" in row:
        assert row["platform"] in PLATFORMS
    if row["kind"] == "storage":
        assert row["interface"] in INTERFACES
    if row["kind"] == "ram":
        assert row["type"] in {"DDR4", "DDR5"} and isinstance(row["ecc"], bool)


@pytest.mark.parametrize("row", [r for r in _rows() if r["kind"] in {"gpu", "system"}], ids=_row_id)
def test_gpu_and_system_rows_name_catalog_gpus(row: dict[str, Any]) -> None:
    assert load_gpu_catalog().get(row["gpu"]) is not None, row["gpu"]


def test_every_kind_the_builder_needs_has_a_row() -> None:
    kinds = Counter(r["kind"] for r in _rows())
    assert set(REQUIRED_FIELDS) <= set(kinds), set(REQUIRED_FIELDS) - set(kinds)


def test_every_cpu_socket_has_a_motherboard() -> None:
    boards = {r["socket"] for r in _rows() if r["kind"] == "motherboard"}
    sockets = {r["socket"] for r in _rows() if r["kind"] == "cpu"}
    assert sockets <= boards, sockets - boards


def test_the_seed_machines_have_their_parts() -> None:
    # The seed documents' configurations: an RTX 3060 box, RTX 4090s, RTX A4000s, an 8x A100
    # server, 8x H100, and a Jetson AGX Orin devkit bought whole.
    gpu_rows = {r["gpu"] for r in _rows() if r["kind"] == "gpu"}
    assert {"RTX3060", "RTX3090", "RTX4090", "RTXA4000", "RTXA6000", "A100-80GB"} <= gpu_rows
    systems = {(r["gpu"], r["gpus"]) for r in _rows() if r["kind"] == "system"}
    assert ("Jetson-AGX-Orin", 1) in systems
    assert any(gpus == 8 and gpu.startswith("A100") for gpu, gpus in systems)
    assert any(gpus == 8 and gpu.startswith("H100") for gpu, gpus in systems)
