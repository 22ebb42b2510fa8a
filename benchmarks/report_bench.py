"""Speed and size of the reports (issue 7).

    python benchmarks/report_bench.py [--runs 5]

Prints, for the quote, tco and budget reports on the bundled data:
1. the time to compute the result (quote with the deadline sweep, tco, budget without the
   sensitivity table), then to build the document and render it as HTML, Markdown and CSV
   (median of --runs, the result computed once);
2. the size of each rendered report and the number of charts in the HTML;
3. whole-process time of `planner report tco` and peak RSS of this process.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from planner import api
from planner.quoting.request import QuoteRequest
from planner.reports.render import document_for, render_document


def median_seconds(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    times, value = [], None
    for _ in range(runs):
        t = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    runs = args.runs
    cases: dict[str, Callable[[], Any]] = {
        "quote": lambda: api.quote(
            QuoteRequest(workload="gpt2-xl-finetune", deadline_hours=24, pareto=True)
        ),
        "tco": lambda: api.tco("8xh100-hgx", utilization=0.6),
        "budget": lambda: api.budget("2027-ml-platform", sensitivity=False),
    }
    print(
        f"{'report':<8}{'compute s':>11}{'document ms':>13}{'html ms':>9}{'md ms':>7}{'csv ms':>8}"
        f"{'html KiB':>10}{'md KiB':>8}{'csv KiB':>9}{'charts':>8}"
    )
    for name, compute in cases.items():
        t_compute, result = median_seconds(compute, max(1, runs // 2))
        t_doc, doc = median_seconds(lambda r=result: document_for(r), runs)
        sizes, times = {}, {}
        for fmt in ("html", "markdown", "csv"):
            t, text = median_seconds(lambda f=fmt, d=doc: render_document(d, f), runs)
            times[fmt], sizes[fmt] = t, len(text.encode("utf-8")) / 1024
        charts = render_document(doc, "html").count("<svg")
        print(
            f"{name:<8}{t_compute:>11.3f}{t_doc * 1000:>13.1f}{times['html'] * 1000:>9.1f}"
            f"{times['markdown'] * 1000:>7.1f}{times['csv'] * 1000:>8.1f}{sizes['html']:>10.1f}"
            f"{sizes['markdown']:>8.1f}{sizes['csv']:>9.1f}{charts:>8}"
        )
    cmd = [sys.executable, "-m", "planner", "report", "tco", "--hardware", "8xh100-hgx"]
    whole = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        whole.append(time.perf_counter() - t)
    print(
        f"\nwhole process `planner report tco`: {statistics.median(whole):.3f} s (median of {runs})"
    )
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process: {rss_mib:.0f} MiB")


if __name__ == "__main__":
    main()
