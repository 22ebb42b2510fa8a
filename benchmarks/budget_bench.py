"""Speed of `planner budget` against the planning horizon.

    python benchmarks/budget_bench.py [--runs 5] [--horizons 12,36,60]

For each horizon, scenarios/budgets/2027-ml-platform.yaml with its ``horizon_months`` changed (in
a temporary file; 36 is the bundled file itself) is planned with the sensitivity table, and the
benchmark prints:

* the whole-process time of ``planner budget FILE`` (median of --runs),
* the in-process time of :func:`planner.optimize.budget.budget_report` (median of --runs: every
  MILP of the report, the mix, the pure strategies and the sensitivity cases, as the command runs
  them), with the number of MILP solves and their summed solver seconds,
* the peak RSS of one whole process,

each as a ratio to ``python -c "import pandas, pulp"`` (the floor any such tool pays) measured in
the same run.  The cheapest mix's cost is printed too, so a change of speed can be checked for a
change of answer.  Needs nothing but the project's own dependencies.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the benchmarks package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.quote_bench import peak_rss_mib, wall
from planner.optimize.budget import budget_report
from planner.optimize.program import LinearProgram
from planner.optimize.solvers import HighsSolver, SolveResult
from planner.ownership.budget_spec import load_budget

BUDGET_FILE = Path(__file__).resolve().parent.parent / "scenarios/budgets/2027-ml-platform.yaml"
FLOOR = "import pandas, pulp"
# The floor's own peak RSS (KiB), printed by the floor process itself.
_FLOOR_RSS = (
    FLOOR + "\nimport resource, sys\nprint(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
)


class CountingHiGHS(HighsSolver):
    """The default solver, counting its solves and their seconds (the report solves on threads)."""

    lock = threading.Lock()
    solves = 0
    seconds = 0.0

    def solve(self, program: LinearProgram, initial: Sequence[float] | None = None) -> SolveResult:
        result = super().solve(program, initial)
        with CountingHiGHS.lock:
            CountingHiGHS.solves += 1
            CountingHiGHS.seconds += result.seconds
        return result


def floor_rss_mib() -> float:
    out = subprocess.run(
        [sys.executable, "-c", _FLOOR_RSS], check=True, capture_output=True, text=True
    )
    return int(out.stdout.strip().splitlines()[-1]) / 1024


def with_horizon(text: str, months: int) -> str:
    """The budget file's text with ``horizon_months`` set to ``months`` (comments kept)."""
    changed, n = re.subn(r"(?m)^horizon_months:\s*\d+", f"horizon_months: {months}", text)
    if n != 1:
        raise SystemExit(f"{BUDGET_FILE} has no single 'horizon_months:' line to change")
    return changed


def in_process(path: Path, runs: int) -> tuple[float, int, float, float]:
    """Median seconds of budget_report, its solves and summed solver seconds, and the mix's cost."""
    spec = load_budget(str(path))
    times = []
    total = 0.0
    for _ in range(runs):
        CountingHiGHS.solves, CountingHiGHS.seconds = 0, 0.0
        t = time.perf_counter()
        report = budget_report(spec, solver=CountingHiGHS)
        times.append(time.perf_counter() - t)
        total = report.plan.total_usd
    return statistics.median(times), CountingHiGHS.solves, CountingHiGHS.seconds, total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--horizons", default="12,36,60", help="months, comma-separated")
    args = parser.parse_args(argv)
    horizons = [int(h) for h in args.horizons.split(",")]

    floor = wall([sys.executable, "-c", FLOOR], args.runs)
    floor_rss = floor_rss_mib()
    print(
        f"floor: python -c '{FLOOR}'  {floor:6.3f} s  {floor_rss:5.0f} MiB  (median of {args.runs})"
    )
    print(
        f"{'horizon':>8} {'process s':>10} {'x floor':>8} {'solve s':>8} {'x floor':>8} "
        f"{'solves':>6} {'solver s':>8} {'RSS MiB':>8} {'x floor':>8} {'mix USD':>14}"
    )
    text = BUDGET_FILE.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as folder:
        for months in horizons:
            path = Path(folder) / f"2027-ml-platform-{months}m.yaml"
            path.write_text(with_horizon(text, months), encoding="utf-8")
            cli = ["budget", str(path), "--format", "json"]
            process = wall([sys.executable, "-m", "planner", *cli], args.runs)
            rss = peak_rss_mib(cli)
            solve, solves, solver_s, total = in_process(path, args.runs)
            print(
                f"{months:>8} {process:>10.3f} {process / floor:>8.2f} {solve:>8.3f} "
                f"{solve / floor:>8.2f} {solves:>6} {solver_s:>8.3f} {rss:>8.0f} "
                f"{rss / floor_rss:>8.2f} {total:>14,.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
