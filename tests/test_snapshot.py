"""The bundled snapshot and the snapshot store: known list prices, manifest, atomic writes."""

from __future__ import annotations

import csv
import json
import os
import statistics
import subprocess
import sys
import textwrap
import threading
from dataclasses import replace
from datetime import date
from pathlib import Path

import pandas as pd
import pytest
from filelock import FileLock, Timeout

from planner.catalog import SnapshotSource, as_of_range, load_offer_book, user_snapshot_root
from planner.catalog.store import (
    LOCK,
    bundled_snapshot_root,
    list_snapshots,
    load_snapshot,
    locked,
    newest_per_provider,
    read_manifest,
    read_offers_csv,
    write_snapshot,
)
from planner.errors import OfferValidationError, SnapshotError
from planner.reports.offers import provenance_lines
from planner.schema import validate_offers
from tests.conftest import offer_row

REPO = Path(__file__).resolve().parent.parent
REFERENCE = REPO.parent / "shared" / "reference"


@pytest.fixture(scope="module")
def bundled() -> pd.DataFrame:
    snaps = list_snapshots(bundled_snapshot_root())
    assert snaps, "the bundled snapshot is missing"
    return load_snapshot(snaps[-1]).offers


def _offer(df: pd.DataFrame, provider: str, region: str, instance: str) -> pd.Series:
    rows = df[(df.provider == provider) & (df.region == region) & (df.instance_type == instance)]
    assert len(rows) == 1
    return rows.iloc[0]


def _reference_rows(file: str, **match: str) -> list[dict[str, str]]:
    with open(REFERENCE / file, newline="") as fh:
        return [r for r in csv.DictReader(fh) if all(r[k] == v for k, v in match.items())]


needs_reference = pytest.mark.skipif(
    not (REFERENCE / "prices-next").is_dir(), reason="../shared/reference not present"
)


@needs_reference
def test_p4d_us_east_1_matches_reference(bundled: pd.DataFrame) -> None:
    rows = _reference_rows(
        "prices-next/aws_gpu.csv", InstanceType="p4d.24xlarge", Region="us-east-1"
    )
    offer = _offer(bundled, "aws", "us-east-1", "p4d.24xlarge")
    assert offer.price_on_demand_usd_per_hour == pytest.approx(float(rows[0]["Price"]))
    spots = [float(r["SpotPrice"]) for r in rows]
    assert offer.price_spot_usd_per_hour == pytest.approx(min(spots))
    assert offer.price_spot_median_usd_per_hour == pytest.approx(statistics.median(spots))
    assert offer.zones == len(rows)
    assert (
        offer.gpu_model == "A100-40GB" and offer.gpu_count == 8 and offer.interconnect == "nvswitch"
    )


@needs_reference
def test_p4de_is_a100_80gb_even_where_gpuinfo_says_a100(bundled: pd.DataFrame) -> None:
    p4de = bundled[bundled.instance_type == "p4de.24xlarge"]
    assert len(p4de) > 0
    assert set(p4de.gpu_model) == {"A100-80GB"}


@needs_reference
def test_gcp_vm_price_is_host_plus_gpus(bundled: pd.DataFrame) -> None:
    # README example: a2-highgpu-1g host 0.73948 + A100 x1 2.93391 in us-central1-a = 3.67339
    hosts = _reference_rows(
        "prices-next/gcp_gpu.csv", InstanceType="a2-highgpu-1g", Region="us-central1"
    )
    gpus = _reference_rows(
        "prices-next/gcp_gpu.csv",
        AcceleratorName="A100",
        AcceleratorCount="1",
        Region="us-central1",
    )
    by_zone = {g["AvailabilityZone"]: float(g["Price"]) for g in gpus}
    totals = [
        float(h["Price"]) + by_zone[h["AvailabilityZone"]]
        for h in hosts
        if h["AvailabilityZone"] in by_zone
    ]
    offer = _offer(bundled, "gcp", "us-central1", "a2-highgpu-1g")
    assert offer.price_on_demand_usd_per_hour == pytest.approx(statistics.median(totals))
    assert offer.price_on_demand_usd_per_hour == pytest.approx(0.73948 + 2.93391)


@needs_reference
def test_azure_nd_h100_has_eight_gpus_and_listed_price(bundled: pd.DataFrame) -> None:
    rows = _reference_rows(
        "prices/azure_gpu.csv", InstanceType="Standard_ND96isr_H100_v5", Region="eastus"
    )
    offer = _offer(bundled, "azure", "eastus", "Standard_ND96isr_H100_v5")
    assert rows[0]["AcceleratorCount"] == "12"  # the source's quirk
    assert offer.gpu_count == 8
    assert offer.price_on_demand_usd_per_hour == pytest.approx(float(rows[0]["Price"]))
    assert pd.isna(
        offer.price_spot_usd_per_hour
    )  # source spot == on-demand is a placeholder, not spot


@needs_reference
def test_lambda_h100_pcie_and_no_spot(bundled: pd.DataFrame) -> None:
    lam = bundled[bundled.provider == "lambda"]
    assert set(lam[lam.instance_type == "gpu_1x_h100_pcie"].gpu_model) == {"H100-PCIe"}
    assert lam.price_spot_usd_per_hour.isna().all()


@needs_reference
def test_bundled_snapshot_is_what_the_build_script_makes(bundled: pd.DataFrame) -> None:
    """scripts/build_snapshot.py is the one way to make pricing_cache/: rebuilding from the
    reference extracts gives the bundled rows, prices, dates and manifest notes exactly."""
    from scripts.build_snapshot import build

    path = list_snapshots(bundled_snapshot_root())[-1]
    manifest = {e.provider: e for e in read_manifest(path).providers}
    for provider, built in build(REFERENCE).items():
        rebuilt = validate_offers(built.offers).reset_index(drop=True)
        shipped = bundled[bundled.provider == provider].reset_index(drop=True)
        pd.testing.assert_frame_equal(rebuilt, shipped, check_dtype=False)
        entry = manifest[provider]
        assert (entry.as_of, entry.as_of_basis, entry.notes) == (
            built.as_of,
            built.as_of_basis,
            built.notes,
        )


@needs_reference
def test_2026_prices_after_the_june_2025_aws_cut(bundled: pd.DataFrame) -> None:
    # the issue's check: p5.48xlarge in us-east-1 at $55.04/h (was $98.32 before the cut)
    p5 = _offer(bundled, "aws", "us-east-1", "p5.48xlarge")
    assert p5.price_on_demand_usd_per_hour == 55.04
    rows = _reference_rows(
        "prices-next/aws_gpu.csv", InstanceType="p5.48xlarge", Region="us-east-1"
    )
    assert {float(r["Price"]) for r in rows} == {55.04}
    assert p5.as_of == "2026-11-09"  # the date of the public price it matches
    for provider in ("aws", "gcp", "lambda"):
        assert "B200" in set(bundled[bundled.provider == provider].gpu_model), provider
    assert set(bundled[bundled.instance_type == "p6-b300.48xlarge"].gpu_model) == {"B300"}
    assert set(bundled[bundled.instance_type.str.startswith("g7e.")].gpu_model) == {"RTX-PRO-6000"}


@needs_reference
def test_fractional_gpus_are_left_out(bundled: pd.DataFrame) -> None:
    fractional = _reference_rows("prices-next/aws_gpu.csv", InstanceType="g6f.xlarge")
    assert fractional and float(fractional[0]["AcceleratorCount"]) < 1
    assert not bundled.instance_type.str.match(r"^(g6f|gr6f)\.").any()


@needs_reference
def test_gcp_b200_vm_is_a_free_host_plus_its_gpus(bundled: pd.DataFrame) -> None:
    hosts = _reference_rows(
        "prices-next/gcp_gpu.csv", InstanceType="a4-highgpu-8g", Region="us-central1"
    )
    gpus = _reference_rows(
        "prices-next/gcp_gpu.csv",
        AcceleratorName="B200",
        AcceleratorCount="8",
        Region="us-central1",
    )
    assert hosts and {float(h["Price"]) for h in hosts} == {0.0}
    offer = _offer(bundled, "gcp", "us-central1", "a4-highgpu-8g")
    assert offer.price_on_demand_usd_per_hour == pytest.approx(
        statistics.median(float(g["Price"]) for g in gpus)
    )
    assert (offer.gpu_model, offer.gpu_count, offer.interconnect) == ("B200", 8, "nvswitch")


@needs_reference
def test_prices_that_disagree_with_a_dated_public_price_are_left_out(
    bundled: pd.DataFrame,
) -> None:
    # GCP's a3-highgpu H100 item is about half the Cloud Billing price (5.38 vs 10.98 per hour for
    # a3-highgpu-1g): the whole a3-highgpu family is left out, and the manifest says why
    hosts = _reference_rows(
        "prices-next/gcp_gpu.csv", InstanceType="a3-highgpu-1g", Region="us-central1"
    )
    assert hosts
    assert not bundled.instance_type.str.startswith("a3-highgpu-").any()
    assert "a3-megagpu-8g" in set(bundled.instance_type)  # A3 Mega's H100 item is not affected
    path = list_snapshots(bundled_snapshot_root())[-1]
    entries = {e.provider: e for e in read_manifest(path).providers}
    assert "$10.9791/h published 2026-09-26" in entries["gcp"].notes
    assert entries["gcp"].as_of_basis == "estimated"
    # Azure is the older extract: dated by its estimate, not by the sizes that still match
    assert (entries["azure"].as_of, entries["azure"].as_of_basis) == ("2024-01-01", "estimated")
    assert "OLDER" in entries["azure"].notes
    assert "Standard_NC48ads_A100_v4" not in set(bundled.instance_type)


def test_one_memory_figure_per_gpu_model(bundled: pd.DataFrame) -> None:
    # AWS lists an L4 as 22.35 GiB (24 GB) and GCP as 24: one catalog figure, so a
    # --min-gpu-memory 24 filter keeps both; the provider's own figure stays in its column
    per_model = bundled.groupby("gpu_model").gpu_memory_gib.nunique()
    assert (per_model == 1).all()
    l4 = bundled[bundled.gpu_model == "L4"]
    assert set(l4.gpu_memory_gib) == {24.0}
    aws_l4 = l4[l4.provider == "aws"]
    assert aws_l4.gpu_memory_listed_gib.round(2).eq(22.35).all()
    assert (bundled.gpu_memory_total_gib == bundled.gpu_memory_gib * bundled.gpu_count).all()


def test_cross_check_dates_by_matching_prices_and_drops_what_disagrees() -> None:
    from scripts.build_snapshot import PublicPrice, Reference, cross_check

    ref = Reference("x.csv", "catalog@abc", "2025-01-01", "lists things")
    offers = pd.DataFrame(
        [
            offer_row(instance_type="p5.48xlarge", price_on_demand_usd_per_hour=55.04),
            offer_row(instance_type="p5.4xlarge", price_on_demand_usd_per_hour=6.88),
            offer_row(instance_type="p4d.24xlarge", price_on_demand_usd_per_hour=32.77),
        ]
    )
    good = PublicPrice(
        "aws", "us-east-1", "p5.48xlarge", 55.04, "2026-11-09", "datareceipts", r"^p5\."
    )
    bad = PublicPrice(
        "aws", "us-east-1", "p4d.24xlarge", 21.96, "2026-11-09", "datareceipts", r"^p4d\."
    )
    import scripts.build_snapshot as bs

    original = bs.PUBLIC_PRICES
    try:
        bs.PUBLIC_PRICES = (good,)
        matched = cross_check("aws", offers, ref)
        assert (matched.as_of, matched.as_of_basis, len(matched.offers)) == (
            "2026-11-09",
            "cross-checked",
            3,
        )
        bs.PUBLIC_PRICES = (good, bad)
        mixed = cross_check("aws", offers, ref)
    finally:
        bs.PUBLIC_PRICES = original
    assert (mixed.as_of, mixed.as_of_basis) == ("2025-01-01", "estimated")
    assert list(mixed.offers.instance_type) == ["p5.48xlarge", "p5.4xlarge"]
    assert "$32.77/h but $21.96/h published 2026-11-09" in mixed.notes


def test_bundled_snapshot_coverage(bundled: pd.DataFrame) -> None:
    providers = set(bundled.provider)
    assert {"aws", "gcp", "azure", "lambda"} <= providers
    by_provider = bundled.groupby("provider").gpu_model.apply(set)
    assert {
        "T4",
        "A10G",
        "L4",
        "L40S",
        "A100-40GB",
        "A100-80GB",
        "H100",
        "H200",
        "V100-16GB",
    } <= by_provider["aws"]
    assert {"A100-40GB", "A100-80GB", "H100", "H200", "L4"} <= by_provider["gcp"]
    assert {"T4", "A100-80GB", "H100", "A10"} <= by_provider["azure"]
    # reserved prices are derived, never listed, in the reference build
    priced = bundled[bundled.price_reserved_1y_usd_per_hour.notna()]
    assert set(priced.price_basis_reserved) == {"derived"}
    assert (priced.price_reserved_1y_usd_per_hour < priced.price_on_demand_usd_per_hour).all()
    assert (priced.price_reserved_3y_usd_per_hour < priced.price_reserved_1y_usd_per_hour).all()
    assert bundled.source.str.len().gt(0).all() and bundled.as_of.notna().all()


def test_manifest_checksums_and_row_counts() -> None:
    path = list_snapshots(bundled_snapshot_root())[-1]
    manifest = json.loads((path / "manifest.json").read_text())
    assert manifest["schema_version"] == 1
    for entry in manifest["providers"]:
        lines = (path / entry["file"]).read_text().splitlines()
        assert len(lines) - 1 == entry["rows"]
        assert entry["as_of"] and entry["source"]


def test_corrupt_file_is_detected(tmp_path: Path) -> None:
    path = write_snapshot(tmp_path, {"aws": pd.DataFrame([offer_row()])}, snapshot_id="s1")
    (path / "offers-aws.csv").write_text(
        (path / "offers-aws.csv").read_text().replace("32.7726", "1.0")
    )
    with pytest.raises(SnapshotError, match="checksum mismatch"):
        load_snapshot(path)


def test_a_bad_row_in_one_file_of_a_snapshot_names_that_file_and_row(tmp_path: Path) -> None:
    # The files of a snapshot are validated as one table; an error must still point at its file.
    frames = {
        "aws": pd.DataFrame([offer_row(), offer_row(region="us-west-2")]),
        "gcp": pd.DataFrame([offer_row(provider="gcp"), offer_row(provider="gcp", region="b")]),
    }
    path = write_snapshot(tmp_path, frames, snapshot_id="s1")
    together = load_snapshot(path).offers
    one_by_one = pd.concat(
        [read_offers_csv(path / f"offers-{p}.csv") for p in ("aws", "gcp")], ignore_index=True
    )
    pd.testing.assert_frame_equal(together, one_by_one)
    gcp = path / "offers-gcp.csv"
    lines = gcp.read_text().splitlines()
    lines[2] = lines[2].replace("A100-40GB", "A100-400GB")  # the second data row: file row 3
    gcp.write_text("\n".join(lines) + "\n")
    with pytest.raises(OfferValidationError) as err:
        load_snapshot(path, verify=False)
    assert str(gcp) in str(err.value)
    assert "row 3" in str(err.value)
    assert "A100-400GB" in str(err.value)


def test_snapshots_are_immutable_and_invalid_frames_publish_nothing(tmp_path: Path) -> None:
    write_snapshot(tmp_path, {"aws": pd.DataFrame([offer_row()])}, snapshot_id="s1")
    with pytest.raises(SnapshotError, match="immutable"):
        write_snapshot(tmp_path, {"aws": pd.DataFrame([offer_row()])}, snapshot_id="s1")
    with pytest.raises(OfferValidationError):
        write_snapshot(
            tmp_path,
            {"aws": pd.DataFrame([offer_row(price_on_demand_usd_per_hour=-3)])},
            snapshot_id="s2",
        )
    assert [p.name for p in list_snapshots(tmp_path)] == ["s1"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp")]


def test_crash_mid_write_leaves_previous_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_snapshot(tmp_path, {"aws": pd.DataFrame([offer_row()])}, snapshot_id="s1")
    real_fsync = os.fsync
    calls = {"n": 0}

    def failing_fsync(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] == 2:  # after the first file, before the manifest
            raise OSError(5, "simulated crash")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", failing_fsync)
    frames = {
        "aws": pd.DataFrame([offer_row(price_on_demand_usd_per_hour=50.0)]),
        "gcp": pd.DataFrame([offer_row(provider="gcp")]),
    }
    with pytest.raises(SnapshotError, match="simulated crash; the snapshots already there"):
        write_snapshot(tmp_path, frames, snapshot_id="s2")
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert [p.name for p in list_snapshots(tmp_path)] == ["s1"]
    assert load_snapshot(tmp_path / "s1").offers.price_on_demand_usd_per_hour.tolist() == [32.7726]


def test_newest_snapshot_per_provider_wins(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    write_snapshot(
        old,
        {"aws": pd.DataFrame([offer_row()]), "gcp": pd.DataFrame([offer_row(provider="gcp")])},
        snapshot_id="a",
    )
    write_snapshot(
        new, {"aws": pd.DataFrame([offer_row(price_on_demand_usd_per_hour=20.0)])}, snapshot_id="b"
    )
    chosen = newest_per_provider([new, old])
    assert chosen["aws"].path.name == "b" and chosen["gcp"].path.name == "a"
    book = load_offer_book(roots=[new, old])
    prices = book.offers.set_index("provider").price_on_demand_usd_per_hour
    assert prices["aws"] == 20.0 and prices["gcp"] == 32.7726


def test_user_snapshot_root_is_used_by_default(tmp_path: Path) -> None:
    # the autouse fixture points PLANNER_DATA_DIR at a temporary folder
    write_snapshot(
        user_snapshot_root(),
        {"aws": pd.DataFrame([offer_row(price_on_demand_usd_per_hour=11.0)])},
        snapshot_id="9999",
    )
    book = load_offer_book()
    aws = book.offers[book.offers.provider == "aws"]
    assert aws.price_on_demand_usd_per_hour.tolist() == [11.0]
    assert "gcp" in set(
        book.offers.provider
    )  # other providers still come from the bundled snapshot


def test_private_offers_replace_matching_rows(tmp_path: Path) -> None:
    private = tmp_path / "negotiated.csv"
    pd.DataFrame(
        [
            offer_row(price_on_demand_usd_per_hour=20.0, source="our AWS EDP"),
            offer_row(
                provider="coreweave",
                region="us-east-04",
                instance_type="gd-8xh100ib-i128",
                gpu_model="H100",
                gpu_memory_gib=80,
                price_on_demand_usd_per_hour=49.24,
            ),
        ]
    ).to_csv(private, index=False)
    book = load_offer_book([private])
    p4d = book.offers[
        (book.offers.provider == "aws")
        & (book.offers.region == "us-east-1")
        & (book.offers.instance_type == "p4d.24xlarge")
    ]
    assert p4d.price_on_demand_usd_per_hour.tolist() == [20.0]
    assert "coreweave" in set(book.offers.provider)
    assert any(s.source == str(private) for s in book.sources)


def test_stale_warning(tmp_path: Path) -> None:
    write_snapshot(
        tmp_path, {"aws": pd.DataFrame([offer_row(as_of="2020-01-01")])}, snapshot_id="s1"
    )
    book = load_offer_book(roots=[tmp_path])
    assert book.as_of == "2020-01-01"
    assert book.stale_warnings(30) and "aws prices are" in book.stale_warnings(30)[0]
    fresh = load_offer_book(roots=[tmp_path], today=pd.Timestamp("2020-01-15").date())
    assert fresh.stale_warnings(30) == []


# ---------------------------------------------------------------- as-of ranges (mixed-date parts)


def _mixed_aws() -> pd.DataFrame:
    """One row priced on 2020-01-01 and two on 2020-03-01 (a refresh of us-west-2 only)."""
    return pd.DataFrame(
        [
            offer_row(region="us-east-1", as_of="2020-01-01"),
            offer_row(region="us-west-2", as_of="2020-03-01"),
            offer_row(region="us-west-2", instance_type="p4de.24xlarge", as_of="2020-03-01"),
        ]
    )


def test_manifest_records_oldest_and_newest_as_of(tmp_path: Path) -> None:
    path = write_snapshot(tmp_path, {"aws": _mixed_aws()}, snapshot_id="s1")
    (entry,) = read_manifest(path).providers
    assert (entry.as_of, entry.as_of_newest) == ("2020-01-01", "2020-03-01")
    raw = json.loads((path / "manifest.json").read_text())["providers"][0]
    assert (raw["as_of"], raw["as_of_newest"]) == ("2020-01-01", "2020-03-01")


def test_mixed_date_snapshot_warns_with_the_count_of_old_rows(tmp_path: Path) -> None:
    write_snapshot(tmp_path, {"aws": _mixed_aws()}, snapshot_id="s1")
    # 2020-03-15: the 2020-01-01 row is 74 days old, the 2020-03-01 rows 14 days.
    book = load_offer_book(roots=[tmp_path], today=date(2020, 3, 15))
    assert (book.as_of, book.as_of_newest) == ("2020-01-01", "2020-03-01")
    (part,) = book.sources
    assert dict(part.rows_by_as_of) == {"2020-01-01": 1, "2020-03-01": 2}
    assert part.as_of_range == "2020-01-01 to 2020-03-01" and not part.estimated
    assert book.stale_warnings(30) == [
        "aws prices as of 2020-01-01 to 2020-03-01; 1 of 3 rows older than 30 days;"
        " refresh with `planner prices refresh --provider aws` before relying on them"
    ]
    assert book.stale_warnings(10)[0].startswith(
        "aws prices as of 2020-01-01 to 2020-03-01; 3 of 3 rows older than 10 days;"
    )
    assert book.stale_warnings(74) == []  # the oldest row is exactly 74 days old: not stale yet
    assert provenance_lines(book, 90) == ["prices: aws as of 2020-01-01 to 2020-03-01 from test"]


def test_a_book_part_is_a_value_whose_record_is_the_quote_json_part(tmp_path: Path) -> None:
    write_snapshot(tmp_path, {"aws": _mixed_aws()}, snapshot_id="s1")
    (part,) = load_offer_book(roots=[tmp_path], today=date(2020, 3, 15)).sources
    assert hash(part) == hash(replace(part))  # frozen: a book's provenance cannot drift
    # the record a quote's JSON carries under snapshot.parts: these keys, in this order
    assert part.to_dict() == {
        "provider": "aws",
        "as_of": "2020-01-01",
        "as_of_newest": "2020-03-01",
        "as_of_basis": "fetched",
        "age_days": 74,
        "rows": 3,
        "rows_by_as_of": {"2020-01-01": 1, "2020-03-01": 2},
        "source": part.source,
        "snapshot": "s1",
    }
    assert list(part.to_dict()) == list(SnapshotSource.__dataclass_fields__)
    assert as_of_range(part.to_dict()) == part.as_of_range


def test_manifest_without_as_of_newest_reads_as_a_single_date(tmp_path: Path) -> None:
    # A manifest written before as_of_newest existed (the bundled one is such a manifest).
    path = write_snapshot(
        tmp_path, {"aws": pd.DataFrame([offer_row(as_of="2020-01-01")])}, snapshot_id="s1"
    )
    manifest = path / "manifest.json"
    data = json.loads(manifest.read_text())
    del data["providers"][0]["as_of_newest"]
    manifest.write_text(json.dumps(data))
    (entry,) = read_manifest(path).providers
    assert entry.as_of_newest == entry.as_of == "2020-01-01"
    book = load_offer_book(roots=[tmp_path], today=date(2020, 3, 15))
    assert book.as_of_newest == "2020-01-01"
    assert book.stale_warnings(30) == [
        "aws prices are 74 days old (as of 2020-01-01); refresh with"
        " `planner prices refresh --provider aws` before relying on them"
    ]
    assert provenance_lines(book, 90)[0] == "prices: aws as of 2020-01-01 from test"


def test_a_manifest_from_before_as_of_newest_still_loads(tmp_path: Path) -> None:
    path = write_snapshot(tmp_path, {"aws": pd.DataFrame([offer_row()])}, snapshot_id="s1")
    manifest = path / "manifest.json"
    raw = json.loads(manifest.read_text())
    for provider in raw["providers"]:
        del provider["as_of_newest"]  # as the writers before it wrote them
    manifest.write_text(json.dumps(raw))
    for entry in read_manifest(path).providers:
        assert entry.as_of_newest == entry.as_of


def test_manifest_keys_from_a_newer_writer_are_ignored(tmp_path: Path) -> None:
    path = write_snapshot(tmp_path, {"aws": pd.DataFrame([offer_row()])}, snapshot_id="s1")
    manifest = path / "manifest.json"
    data = json.loads(manifest.read_text())
    data["providers"][0]["spot_as_of"] = "2030-01-01"
    manifest.write_text(json.dumps(data))
    (entry,) = read_manifest(path).providers
    assert entry.provider == "aws" and entry.rows == 1


def test_issue_11_a_second_writer_waits_for_the_snapshot_lock(tmp_path: Path) -> None:
    published: list[Path] = []

    def second_writer() -> None:
        frames = {"aws": pd.DataFrame([offer_row()])}
        published.append(write_snapshot(tmp_path, frames, snapshot_id="second"))

    writer = threading.Thread(target=second_writer)
    with locked(tmp_path):
        # the lock file is exclusive: another lock on it, in this process or another, is refused
        with pytest.raises(Timeout):
            FileLock(tmp_path / LOCK).acquire(timeout=0)
        other_process = subprocess.run(
            [sys.executable, "-c", _TRY_LOCK, str(tmp_path / LOCK)], capture_output=True, text=True
        )
        assert other_process.returncode == 3, other_process.stderr
        writer.start()
        writer.join(timeout=0.5)
        assert writer.is_alive()  # waiting for the lock, not writing
        assert not published and not list_snapshots(tmp_path)
    writer.join(timeout=30)
    assert [p.name for p in published] == ["second"]
    assert load_snapshot(published[0]).offers["price_on_demand_usd_per_hour"].tolist() == [32.7726]
    free = FileLock(tmp_path / LOCK)
    free.acquire(timeout=0)  # and the lock is free again
    free.release()


_TRY_LOCK = textwrap.dedent(
    """
    import sys
    from filelock import FileLock, Timeout
    try:
        FileLock(sys.argv[1]).acquire(timeout=0)
    except Timeout:
        sys.exit(3)
    """
)

# Windows has none of these modules; an entry of None makes ``import fcntl`` raise ImportError.
_WITHOUT_POSIX_MODULES = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    for name in ("fcntl", "pwd", "grp", "termios", "resource"):
        sys.modules[name] = None
    import planner, planner.api, planner.cli, planner.catalog.refresh
    from planner.catalog.store import list_snapshots, write_snapshot
    write_snapshot(Path(sys.argv[1]), {}, snapshot_id="s1")  # the lock works without fcntl too
    print([p.name for p in list_snapshots(Path(sys.argv[1]))])
    """
)


def test_issue_11_planner_imports_and_writes_without_posix_only_modules(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _WITHOUT_POSIX_MODULES, str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['s1']"
