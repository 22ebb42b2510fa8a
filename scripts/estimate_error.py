"""How far the estimator's training times fall from published runs, for the ranges it prints.

    python scripts/estimate_error.py          # rewrite planner/data/estimate_error.yaml
    python scripts/compact_data.py            # then its compact copy estimate_error.json
    python scripts/estimate_error.py --check  # exit 1 if the file is stale

Every published run of benchmarks/data/published_runs.yaml (calibration and held-out rows) is
estimated; the ratio measured / estimated of each gives, per regime (dense models, mixtures of
experts), the 10th, 50th and 90th percentiles that every training estimate of that regime turns
into a likely range.  tests/test_estimate_error.py fails when the
file and the estimator disagree, so a change to the physics updates the ranges with it.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

if __name__ == "__main__":  # run as a file: the repository root holds benchmarks/ and scripts/
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scripts.generated import write_or_check

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "planner" / "data" / "estimate_error.yaml"


def render() -> str:
    """The data file's text, from the estimator's answers on the published runs."""
    from benchmarks.accuracy import load_runs, measure
    from planner.workload import parse_workload
    from planner.workload.uncertainty import ERROR_REGIMES, error_regime

    calibration, holdout = load_runs()
    ratios: dict[str, list[float]] = {regime: [] for regime in ERROR_REGIMES}
    for row in (*calibration, *holdout):
        regime = error_regime(parse_workload(row.workload).model.experts)
        ratios[regime].append(row.published / measure(row)[0])
    text = (
        "# Written by scripts/estimate_error.py: measured / estimated training time on the "
        "published\n"
        "# runs of benchmarks/data/published_runs.yaml (calibration and held-out rows), per "
        "regime.\n# Do not edit.\n"
    )
    for regime, values in ratios.items():
        deciles = statistics.quantiles(sorted(values), n=10, method="inclusive")
        text += (
            f"{regime}:\n"
            f"  runs: {len(values)}\n"
            f"  ratio_p10: {deciles[0]:.4f}\n"
            f"  ratio_median: {statistics.median(values):.4f}\n"
            f"  ratio_p90: {deciles[-1]:.4f}\n"
        )
    return text


def main(argv: list[str] | None = None) -> int:
    return write_or_check(DATA, render, argv, doc=__doc__)


if __name__ == "__main__":
    sys.exit(main())
