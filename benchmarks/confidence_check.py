"""Every bundled workload at a deadline where risk matters: no recommended plan below the confidence.

For each workload in scenarios/workloads, the deadline is the wall time of its cheapest plan at
any risk (``--confidence 0`` with a one-week deadline): the tightest deadline at which that plan
is still on time, so a spot plan there has no slack for interruptions.  The quote at the default
confidence must then recommend only plans that meet the deadline with at least that chance; a
cheaper, riskier plan may follow as a labelled alternative.

    python benchmarks/confidence_check.py [--confidence 90]

Prints one line per workload (deadline, the lowest chance among the recommended plans, the risky
alternative's chance if one is shown, seconds) and exits 1 if any recommended plan falls short.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from planner.errors import InfeasibleError
from planner.quoting.request import QuoteRequest
from planner.quoting.service import quote
from planner.workload import load_workload

WORKLOADS = Path(__file__).resolve().parent.parent / "scenarios" / "workloads"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--confidence", type=float, default=90.0, help="percent (default 90)")
    args = parser.parse_args()
    target = args.confidence / 100
    short = 0
    started = time.perf_counter()
    for name in sorted(p.stem for p in WORKLOADS.glob("*.yaml")):
        spec = load_workload(name)
        if spec.inference is not None and spec.inference.serving:
            continue  # a service is priced per month on its load, not by a deadline
        t = time.perf_counter()
        try:
            free = quote(
                QuoteRequest(workload=name, deadline_hours=168.0, confidence_pct=0, top=1)
            ).plans[0]
            deadline = free.wall_hours
            plans = quote(
                QuoteRequest(
                    workload=name, deadline_hours=deadline, confidence_pct=args.confidence, top=3
                )
            ).plans
        except InfeasibleError as e:
            print(f"{name:28s} no plan within a week: {str(e).split(';')[0]}")
            continue
        worst = min(p.risk.p_meet_deadline for p in plans if not p.below_confidence)
        risky = [f"{p.risk.p_meet_deadline:.1%}" for p in plans if p.below_confidence]
        flag = "" if worst >= target else "  BELOW"
        short += worst < target
        print(
            f"{name:28s} deadline {deadline:8.2f} h  lowest recommended {worst:7.2%}  "
            f"risky alternative {', '.join(risky) or '-':>6s}  {time.perf_counter() - t:5.1f} s"
            f"{flag}"
        )
    print(f"{short} workloads with a recommended plan below {args.confidence:g}%, "
          f"{time.perf_counter() - started:.0f} s in all")  # fmt: skip
    return 1 if short else 0


if __name__ == "__main__":
    sys.exit(main())
