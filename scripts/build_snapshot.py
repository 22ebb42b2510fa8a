"""Build the bundled price snapshot in pricing_cache/ from the public reference price files.

    python scripts/build_snapshot.py [--reference ../shared/reference] [--out pricing_cache]

The reference files are SkyPilot catalog extracts: ``prices-next/`` (AWS, GCP, Lambda; 2026) and
``prices/`` (Azure, the only extract upstream has), each folder's README giving commits and quirks;
the normalisation rules live in planner/catalog/reference.py.  The catalog commits are undated, so
each provider is checked against dated public prices (:data:`PUBLIC_PRICES`): when all of them
match, the rows carry the newest matching date (``as_of_basis = cross-checked``); otherwise the
date is a documented estimate from what the extract lists (``estimated``) and the instance types
whose price disagrees are left out.  The evidence goes into the manifest's notes, which
``planner prices status`` shows.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from planner.catalog.reference import NORMALISERS, Provenance
from planner.catalog.store import write_snapshot
from planner.errors import PlannerError
from planner.gpu_specs import load_gpu_catalog

REPO = "skypilot-org/skypilot-catalog"
NEXT = "2c3d7ea7d76b"  # the one commit all three 2026 extracts were read at


@dataclass(frozen=True)
class Reference:
    """One provider's extract: where it is, where it came from, and what dates it."""

    file: str  # relative to the --reference folder
    source: str  # upstream path@commit, written into every row's ``source``
    as_of: str  # the estimated capture date, used unless a public price point dates the rows
    evidence: str  # why that date


REFERENCE = {
    "aws": Reference(
        "prices-next/aws_gpu.csv",
        f"{REPO} catalogs/v9/aws/vms.csv@{NEXT}",
        "2026-01-01",
        "lists p6-b300 (B300) and g7e (RTX PRO 6000) instances, launched early 2026, and "
        "p5.48xlarge at the price after AWS's June 2025 P4/P5 cut",
    ),
    "gcp": Reference(
        "prices-next/gcp_gpu.csv",
        f"{REPO} catalogs/v9/gcp/vms.csv@{NEXT}",
        "2026-01-01",
        "comes from the same catalog commit as the AWS one, which lists instances launched in "
        "early 2026; it adds a4-highgpu (B200) hosts, and its on-demand prices sampled equal the "
        "older extract's",
    ),
    "azure": Reference(
        "prices/azure_gpu.csv",
        f"{REPO} catalogs/v6/azure/vms.csv@098741e70562",
        "2024-01-01",
        "is the OLDER one (no newer Azure catalog exists upstream): it lists NC H100 v5 (previewed "
        "Nov 2023), no H200/MI300X sizes, US regions only",
    ),
    "lambda": Reference(
        "prices-next/lambda_gpu.csv",
        f"{REPO} catalogs/v9/lambda/vms.csv@{NEXT}",
        "2026-01-01",
        "comes from the same catalog commit as the AWS one and lists B200 instances",
    ),
}


@dataclass(frozen=True)
class PublicPrice:
    """A dated, independently published on-demand price the extract is checked against.

    ``scope`` (a regular expression over instance types) is what a mismatch removes: the types
    billed from the same price items as the one checked (GCP prices every a3-highgpu size from one
    H100 item), so a wrong price is left out rather than planned on.
    """

    provider: str
    region: str | None  # None: every region lists the same price (Lambda)
    instance_type: str
    usd_per_hour: float
    published_on: str
    source: str
    scope: str


# Figures as published (USD per instance-hour; per-GPU figures times the GPU count), each with the
# date its publisher gives.
_DATARECEIPTS = "datareceipts"
_LAMBDA_PLANS = "api-evangelist"
_SILYBENCH = "silybench"
SOURCES = {
    _DATARECEIPTS: "github.com/datareceipts/data-receipts 109-gpu-pricing (hyperscalers.json, "
    "compare.json), retrieved 2026-11-09",
    _LAMBDA_PLANS: "github.com/api-evangelist/lambda-labs plans, transcribed from "
    "lambda.ai/instances on 2026-09-20",
    _SILYBENCH: "github.com/tgarg01/silybench-data gpu_prices.csv, checked 2026-09-25/26",
}
PUBLIC_PRICES = (
    PublicPrice("aws", "us-east-1", "p4d.24xlarge", 21.957642, "2026-11-09", _DATARECEIPTS, r"^p4d\."),
    PublicPrice("aws", "us-east-1", "p4de.24xlarge", 27.44705, "2026-11-09", _DATARECEIPTS, r"^p4de\."),
    PublicPrice("aws", "us-east-1", "p5.48xlarge", 55.04, "2026-11-09", _DATARECEIPTS, r"^p5\."),
    PublicPrice("azure", "eastus", "Standard_NC24ads_A100_v4", 3.673, "2026-11-09", _DATARECEIPTS, r"^Standard_NC24ads_A100_v4$"),
    PublicPrice("azure", "eastus", "Standard_NC48ads_A100_v4", 9.554, "2026-11-09", _DATARECEIPTS, r"^Standard_NC48ads_A100_v4$"),
    PublicPrice("azure", "eastus", "Standard_NC96ads_A100_v4", 19.108, "2026-11-09", _DATARECEIPTS, r"^Standard_NC96ads_A100_v4$"),
    PublicPrice("azure", "eastus", "Standard_NC40ads_H100_v5", 6.98, "2026-11-09", _DATARECEIPTS, r"^Standard_NC40ads_H100_v5$"),
    PublicPrice("azure", "eastus", "Standard_NC80adis_H100_v5", 17.64, "2026-11-09", _DATARECEIPTS, r"^Standard_NC80adis_H100_v5$"),
    PublicPrice("azure", "eastus", "Standard_ND96isr_H100_v5", 12.29 * 8, "2026-11-09", _DATARECEIPTS, r"^Standard_ND96isr_H100_v5$"),
    PublicPrice("azure", "eastus", "Standard_ND96asr_v4", 3.3996 * 8, "2026-11-09", _DATARECEIPTS, r"^Standard_ND96asr_v4$"),
    PublicPrice("lambda", None, "gpu_8x_b200_sxm6", 6.69 * 8, "2026-09-20", _LAMBDA_PLANS, r"^gpu_8x_b200_sxm6$"),
    PublicPrice("lambda", None, "gpu_8x_h100_sxm5", 3.99 * 8, "2026-09-20", _LAMBDA_PLANS, r"^gpu_8x_h100_sxm5$"),
    PublicPrice("lambda", None, "gpu_8x_a100_80gb_sxm4", 2.79 * 8, "2026-09-20", _LAMBDA_PLANS, r"^gpu_8x_a100_80gb_sxm4$"),
    PublicPrice("lambda", None, "gpu_8x_a100", 1.99 * 8, "2026-09-20", _LAMBDA_PLANS, r"^gpu_8x_a100$"),
    PublicPrice("lambda", None, "gpu_1x_h100_sxm5", 4.29, "2026-09-25", _SILYBENCH, r"^gpu_1x_h100_sxm5$"),
    PublicPrice("lambda", None, "gpu_1x_h100_pcie", 3.29, "2026-09-25", _SILYBENCH, r"^gpu_1x_h100_pcie$"),
    # GCP's on-demand-equivalent price from the Cloud Billing catalog (GPU + vCPU + RAM SKUs)
    PublicPrice("gcp", "us-central1", "a3-highgpu-1g", 10.9791, "2026-09-26", _SILYBENCH, r"^a3-highgpu-"),
)  # fmt: skip
# Relative difference under which a catalog price equals a published one (rounding of per-GPU
# figures: 3.3996 x 8 = 27.1968 against the catalog's 27.197).
MATCH_TOLERANCE = 0.005


@dataclass(frozen=True)
class Checked:
    """One provider's table after the public price checks, with what they showed."""

    offers: pd.DataFrame
    as_of: str
    as_of_basis: str  # cross-checked (every point matched) or estimated
    notes: str


def cross_check(provider: str, offers: pd.DataFrame, ref: Reference) -> Checked:
    """Check ``offers`` against :data:`PUBLIC_PRICES`; drop what disagrees; date what agrees.

    Rows are dated by the newest public price they match only when every point for the provider
    matched; one disagreement means the extract is older than those points, so the estimate
    stands (and the disagreeing types are left out).
    """
    lines, matched, dropped = [], [], []
    for point in (p for p in PUBLIC_PRICES if p.provider == provider):
        rows = offers[offers["instance_type"] == point.instance_type]
        if point.region is not None:
            rows = rows[rows["region"] == point.region]
        where = point.region or "every region"
        if rows.empty:
            lines.append(f"{point.instance_type} ({where}): not in the extract")
            continue
        prices = rows["price_on_demand_usd_per_hour"]
        listed = float(prices.iloc[0])
        if (abs(prices / point.usd_per_hour - 1) <= MATCH_TOLERANCE).all():
            matched.append(point.published_on)
            lines.append(
                f"{point.instance_type} {where} ${listed:g}/h = published {point.published_on} "
                f"[{point.source}]"
            )
        else:
            gone = offers["instance_type"].str.contains(point.scope, regex=True)
            dropped.append(point.scope)
            offers = offers[~gone]
            lines.append(
                f"{point.instance_type} {where} ${listed:g}/h but ${point.usd_per_hour:g}/h "
                f"published {point.published_on} [{point.source}]: left out "
                f"{int(gone.sum())} rows of /{point.scope}/"
            )
    if matched and not dropped:
        as_of, basis = max(matched), "cross-checked"
        head = f"dated by {len(matched)} public prices it matches; the extract {ref.evidence}"
    else:
        as_of, basis = ref.as_of, "estimated"
        head = f"date estimated: the extract {ref.evidence}"
    cited = sorted({p.source for p in PUBLIC_PRICES if p.provider == provider})
    sources = "; ".join(f"[{tag}] {SOURCES[tag]}" for tag in cited)
    return Checked(offers, as_of, basis, ". ".join([head, *lines, sources] if cited else [head]))


def missing_reference(reference: Path) -> str | None:
    """What is missing from the reference folder (the folder itself or one of its files), if any."""
    if not reference.is_dir():
        return f"reference price directory {reference} not found"
    absent = [ref.file for ref in REFERENCE.values() if not (reference / ref.file).is_file()]
    if absent:
        return f"reference price directory {reference} lacks {', '.join(absent)}"
    return None


def build(reference: Path) -> dict[str, Checked]:
    """Each provider's offers, normalised, checked against the public prices and dated."""
    catalog = load_gpu_catalog()
    built = {}
    for provider, ref in REFERENCE.items():
        raw = pd.read_csv(reference / ref.file, dtype={"AcceleratorName": str, "InstanceType": str})
        offers = NORMALISERS[provider](raw, Provenance(provider, ref.source, ref.as_of), catalog)
        checked = cross_check(provider, offers, ref)
        built[provider] = replace(checked, offers=checked.offers.assign(as_of=checked.as_of))
    return built


def main(argv: list[str] | None = None) -> int:
    here = Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--reference",
        type=Path,
        metavar="DIR",
        default=here.parent / "shared" / "reference",
        help="folder holding prices/ and prices-next/ (default: ../shared/reference beside the repo)",
    )
    parser.add_argument("--out", type=Path, default=here / "pricing_cache")
    parser.add_argument("--id", default=None, help="snapshot id (default: reference-<today>)")
    args = parser.parse_args(argv)
    problem = missing_reference(args.reference)
    if problem:
        files = ", ".join(ref.file for ref in REFERENCE.values())
        print(
            f"build_snapshot.py: error: {problem}; pass the folder of {files} with --reference DIR",
            file=sys.stderr,
        )
        return 2
    now = datetime.now(timezone.utc)
    try:
        built = build(args.reference)
        frames = {p: b.offers for p, b in built.items()}
        path = write_snapshot(
            args.out,
            frames,
            snapshot_id=args.id or f"reference-{now.date().isoformat()}",
            as_of_basis={p: b.as_of_basis for p, b in built.items()},
            provider_notes={p: b.notes for p, b in built.items()},
            notes=(
                "Public list prices from the SkyPilot catalog (github.com/skypilot-org/"
                "skypilot-catalog), whose commits are undated. On-demand and spot are the listed "
                "prices (spot at the catalog's capture time); reserved 1y/3y are derived from "
                "published commitment discounts. A provider is dated by public prices of known date "
                "where all of them match (cross-checked), else by what its extract lists "
                "(estimated); types whose price disagrees with a public one are left out."
            ),
            now=now,
        )
    except PlannerError as e:  # an existing snapshot id, a reference row that fails validation
        print(f"build_snapshot.py: error: {e}", file=sys.stderr)
        return e.exit_code
    for provider, b in built.items():
        df = b.offers
        print(
            f"{provider:7s} {len(df):5d} offers  {df['region'].nunique():3d} regions  "
            f"{df['gpu_model'].nunique():2d} GPU models  as of {b.as_of} ({b.as_of_basis})"
        )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
