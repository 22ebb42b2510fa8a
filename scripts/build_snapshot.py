"""Build the bundled price snapshot in pricing_cache/ from the public reference price files.

    python scripts/build_snapshot.py [--reference ../shared/reference/prices] [--out pricing_cache]

The reference files are SkyPilot catalog extracts (see that folder's README for commits and
quirks); the normalisation rules live in planner/catalog/reference.py.  The catalog commits are
undated, so each provider's as-of date is a documented lower-bound estimate from what the data
lists (``as_of_basis = estimated``); reports warn that such prices are old.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from planner.catalog.reference import NORMALISERS, Provenance
from planner.catalog.store import write_snapshot
from planner.errors import PlannerError
from planner.gpu_specs import load_gpu_catalog

REPO = "skypilot-org/skypilot-catalog"

# provider -> (file, source path@commit, estimated as-of, evidence)
REFERENCE = {
    "aws": (
        "aws_gpu.csv",
        f"{REPO} catalogs/v7/aws/vms.csv@001367d22a00",
        "2024-12-02",
        "lists p5en.48xlarge (GA 2 Dec 2024) and p5.48xlarge at the pre-June-2025 list price "
        "($98.32/h in us-east-1, before AWS's P5 price cut), so captured Dec 2024 - Jun 2025",
    ),
    "gcp": (
        "gcp_gpu.csv",
        f"{REPO} catalogs/v7/gcp/vms.csv@017e2502fb63",
        "2025-01-01",
        "lists B200 accelerator rows and a3-ultragpu (H200) hosts, announced around the turn of 2025",
    ),
    "azure": (
        "azure_gpu.csv",
        f"{REPO} catalogs/v6/azure/vms.csv@098741e70562",
        "2024-01-01",
        "older v6 catalog; lists NC H100 v5 (previewed Nov 2023) and no H200/MI300X sizes",
    ),
    "lambda": (
        "lambda_gpu.csv",
        f"{REPO} catalogs/v7/lambda/vms.csv@11580132cea2",
        "2024-06-01",
        "lists gpu_1x_gh200 (offered from 2024) and no H200/B200",
    ),
}


def missing_reference(reference: Path) -> str | None:
    """What is missing from the reference folder (the folder itself or one of its files), if any."""
    if not reference.is_dir():
        return f"reference price directory {reference} not found"
    absent = [file for file, *_ in REFERENCE.values() if not (reference / file).is_file()]
    if absent:
        return f"reference price directory {reference} lacks {', '.join(absent)}"
    return None


def build(reference: Path) -> dict[str, pd.DataFrame]:
    catalog = load_gpu_catalog()
    frames = {}
    for provider, (file, source, as_of, _evidence) in REFERENCE.items():
        raw = pd.read_csv(reference / file, dtype={"AcceleratorName": str, "InstanceType": str})
        frames[provider] = NORMALISERS[provider](raw, Provenance(provider, source, as_of), catalog)
    return frames


def main(argv: list[str] | None = None) -> int:
    here = Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--reference",
        type=Path,
        metavar="DIR",
        default=here.parent / "shared" / "reference" / "prices",
        help="folder of the reference price CSVs (default: ../shared/reference/prices beside the repo)",
    )
    parser.add_argument("--out", type=Path, default=here / "pricing_cache")
    parser.add_argument("--id", default=None, help="snapshot id (default: reference-<today>)")
    args = parser.parse_args(argv)
    problem = missing_reference(args.reference)
    if problem:
        files = ", ".join(file for file, *_ in REFERENCE.values())
        print(
            f"build_snapshot.py: error: {problem}; pass the folder of {files} with --reference DIR",
            file=sys.stderr,
        )
        return 2
    now = datetime.now(timezone.utc)
    try:
        frames = build(args.reference)
        path = write_snapshot(
            args.out,
            frames,
            snapshot_id=args.id or f"reference-{now.date().isoformat()}",
            as_of_basis={p: "estimated" for p in frames},
            provider_notes={p: REFERENCE[p][3] for p in frames},
            notes=(
                "Built by scripts/build_snapshot.py from ../shared/reference/prices (public list "
                "prices, SkyPilot catalog extracts). On-demand and spot are listed prices; reserved "
                "1y/3y are derived from published discount levels (planner/catalog/reference.py). "
                "as_of dates are lower-bound estimates: the catalog commits are undated."
            ),
            now=now,
        )
    except PlannerError as e:  # an existing snapshot id, a reference row that fails validation
        print(f"build_snapshot.py: error: {e}", file=sys.stderr)
        return e.exit_code
    for provider, df in frames.items():
        print(
            f"{provider:7s} {len(df):5d} offers  {df['region'].nunique():3d} regions  {df['gpu_model'].nunique()} GPU models"
        )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
