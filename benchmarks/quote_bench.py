"""Speed of `planner quote` and of the MILP against problem size.

    python benchmarks/quote_bench.py [--runs 5] [--sizes 1000,10000,100000] [--raw-max 20000]

Prints:
1. whole-process time of `planner quote --workload gpt2-xl-finetune --deadline 24h` on the
   bundled snapshot (median of --runs), next to `python -c "import pandas, pulp"` (the floor any
   such tool pays) and `planner offers` for reference, with planner's bytecode cached
   (:func:`compile_bytecode`), and the quote as found before that;
2. issue 15's scale cases: the 20-trial sweep (with and without spot, and on the offer table
   replicated x5 and x10 with perturbed prices), the llama-2-7b-pretrain week, the 36-month
   budget (whole process: median time as a ratio to the floor, peak RSS) and the sweep at 100
   trials (in process);
3. the same quote in-process: time per call (median of --runs after a warm-up call), workload
   estimator calls, MILP solves, candidates before and after pruning;
4. where the quote process spends its imports (``python -X importtime``, cumulative ms);
5. for synthetic candidate tables of growing size: pruning time, model build + solve time, the
   candidates left after pruning, and the solve time of the unpruned MILP up to --raw-max;
6. the growth exponent of total time in the candidate count (log-log slope) and peak RSS.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import math
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from planner.catalog.store import (
    bundled_snapshot_root,
    list_snapshots,
    load_snapshot,
    write_snapshot,
)
from planner.optimize.model import ModelInputs, build_model, solve
from planner.optimize.program import LinearProgram
from planner.optimize.pruning import prune_dominated
from planner.optimize.solvers import HighsSolver, SolveResult
from planner.quoting.request import QuoteRequest
from planner.quoting.service import quote
from planner.workload import advice, load_workload, training

QUOTE_ARGS = ["quote", "--workload", "gpt2-xl-finetune", "--deadline", "24h"]
# Import-time rows shown: the floor's libraries, then the planner's own layers.
IMPORT_ROWS = (
    "pandas",
    "pulp",
    "click",
    "pydantic",
    "yaml",
    "tabulate",
    "planner.catalog",
    "planner.workload",
    "planner.optimize.candidates",
    "planner.optimize.plans",
    "planner.quoting.service",
    "planner.api",
    "planner.cli.quote",
)


class CountingHiGHS(HighsSolver):
    """The default solver, counting its solves."""

    solves = 0

    def solve(self, program: LinearProgram, initial: Sequence[float] | None = None) -> SolveResult:
        self.solves += 1
        return super().solve(program, initial)


def compile_bytecode() -> int:
    """Write planner's bytecode cache (``__pycache__``), as ``pip install`` does for an installed
    package and as Python does on a checkout's first run, and return how many modules lacked one.

    The site-packages of the floor's libraries were compiled when they were installed; an
    editable checkout under ``PYTHONDONTWRITEBYTECODE=1`` (some CI images and sandboxes) would
    otherwise compile every planner module from source on every run (~0.1 s on a 2-core machine),
    which the floor never pays.  The timings below are with the cache, and the line before them
    says what the quote took as found.
    """
    package = Path(__file__).resolve().parent.parent / "planner"
    missing = sum(
        1
        for src in package.rglob("*.py")
        if not Path(importlib.util.cache_from_source(str(src))).exists()
    )
    compileall.compile_dir(str(package), quiet=1)
    return missing


def wall(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


class CountingSearch:
    """search_training, counting its calls (one strategy search each)."""

    def __init__(self) -> None:
        self.calls = 0
        self.inner = training.search_training

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self.inner(*args, **kwargs)


def first_quote_searches() -> int:
    """Strategy searches of one quote on a fresh workload spec (nothing memoised yet)."""
    counter = CountingSearch()
    training.clear_memo()  # nothing memoised yet
    # the modules that run strategy searches
    training.search_training = advice.search_training = counter
    try:
        quote(QuoteRequest(workload=load_workload("gpt2-xl-finetune"), deadline_hours=24.0))
    finally:
        training.search_training = advice.search_training = counter.inner
    return counter.calls


def in_process(runs: int) -> None:
    req = QuoteRequest(workload="gpt2-xl-finetune", deadline_hours=24.0)
    searches = first_quote_searches()
    quote(req)  # warm-up: YAML catalogs and caches load once per process
    times = []
    solver = CountingHiGHS(time_limit_s=60)
    for _ in range(runs):
        solver.solves = 0
        t = time.perf_counter()
        result = quote(req, solver=solver)
        times.append(time.perf_counter() - t)
    stats = result.stats
    print(
        f"in-process quote (median of {runs}, warm)             {statistics.median(times):6.3f} s"
    )
    print(
        f"  workload estimates {stats.workload_estimates}, MILP solves {solver.solves}, "
        f"candidates {stats.candidates} -> {stats.candidates_after_pruning} after pruning"
    )
    print(f"  strategy searches in the first quote of a process: {searches}")


# The rows of issue 15's table that a whole command measures: (label, planner arguments).
SCALE_CASES = (
    (
        "sweep quote (20 trials)",
        ["quote", "--workload", "gpt2-finetune-sweep", "--deadline", "24h"],
    ),
    (
        "sweep quote --no-spot",
        ["quote", "--workload", "gpt2-finetune-sweep", "--deadline", "24h", "--no-spot"],
    ),
    (
        "llama-2-7b-pretrain 168h quote",
        ["quote", "--workload", "llama-2-7b-pretrain", "--deadline", "168h"],
    ),
    ("budget 36 months", ["budget", "scenarios/budgets/2027-ml-platform.yaml"]),
)


# Runs ``planner`` with the given arguments, then reports that process's own peak RSS (KiB) on
# the last line of stderr (RUSAGE_CHILDREN would give the largest child so far, not this one).
_RSS_PROBE = (
    "import resource, runpy, sys\n"
    "sys.argv = ['planner', *sys.argv[1:]]\n"
    "try:\n    runpy.run_module('planner', run_name='__main__')\n"
    "except SystemExit:\n    pass\n"
    "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
)


def peak_rss_mib(args: list[str]) -> float:
    """Peak resident memory of one ``planner`` run with ``args`` (its process alone)."""
    out = subprocess.run(
        [sys.executable, "-c", _RSS_PROBE, *args], check=True, capture_output=True, text=True
    )
    return int(out.stderr.strip().splitlines()[-1]) / 1024


# One synthetic size in a process of its own: prune, build and solve n candidates, then report the
# process's peak RSS (KiB), so each size's figure is its own and not the largest so far.
_SIZE_PROBE = (
    "import resource, sys\n"
    "from benchmarks.quote_bench import synthetic, ModelInputs, build_model, prune_dominated, solve\n"
    "inputs = ModelInputs(deadline_hours=24.0, switch_hours=0.05, switch_usd=2.0,"
    " startup_hours=1 / 6)\n"
    "solve(build_model(prune_dominated(synthetic(int(sys.argv[1]))), inputs))\n"
    "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
)
_FLOOR_PROBE = (
    "import resource, sys, pandas, pulp\n"
    "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
)


def _probe_mib(script: str, *args: str) -> float:
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run(
        [sys.executable, "-c", script, *args], check=True, capture_output=True, text=True, cwd=root
    )
    return int(out.stderr.strip().splitlines()[-1]) / 1024


def replicated_snapshot(root: Path, copies: int, seed: int = 0) -> Path:
    """The bundled snapshot with every region written ``copies`` times (the copies renamed, their
    prices scaled by a random factor in 0.9-1.1 per row): issue 15's "offer table x5 / x10"."""
    rng = np.random.default_rng(seed)
    offers = load_snapshot(list_snapshots(bundled_snapshot_root())[-1]).offers
    prices = [c for c in offers.columns if c.startswith("price_") and c.endswith("_usd_per_hour")]
    parts = [offers]
    for k in range(1, copies):
        copy = offers.copy()
        copy["region"] = copy["region"] + f"-copy{k}"
        # one factor a row, for all its prices: a row's median spot stays at least its cheapest
        # spot, as the offer table's checks require (a factor per price broke that)
        factor = rng.uniform(0.9, 1.1, len(copy))
        for column in prices:
            copy[column] = copy[column] * factor
        parts.append(copy)
    table = pd.concat(parts, ignore_index=True)
    frames = {str(p): table[table["provider"] == p] for p in table["provider"].unique()}
    return write_snapshot(root, frames, snapshot_id=f"x{copies}")


def scale_cases(exe: list[str], floor: float, runs: int) -> None:
    print(f"scale cases (median of {runs} runs; peak RSS of one run)")
    cases = list(SCALE_CASES)
    with tempfile.TemporaryDirectory() as tmp:
        for copies in (5, 10):
            snap = str(replicated_snapshot(Path(tmp), copies))
            sweep = ["quote", "--workload", "gpt2-finetune-sweep", "--deadline", "24h"]
            cases.append((f"sweep, offer table x{copies}", [*sweep, "--snapshot", snap]))
        _scale_rows(exe, floor, runs, cases)


def _scale_rows(
    exe: list[str], floor: float, runs: int, cases: Sequence[tuple[str, list[str]]]
) -> None:
    for label, args in cases:
        seconds = wall([*exe, *args], runs)
        print(
            f"  {label:34s} {seconds:7.3f} s  ({seconds / floor:5.2f}x floor)  "
            f"{peak_rss_mib(args):6.0f} MiB"
        )


def sweep_at_100_trials(floor: float) -> None:
    spec = load_workload("gpt2-finetune-sweep").model_copy(update={"pieces": 100})
    t = time.perf_counter()
    quote(QuoteRequest(workload=spec, deadline_hours=24.0))
    seconds = time.perf_counter() - t
    print(
        f"  {'sweep quote at 100 trials (in-process)':34s} {seconds:7.3f} s  "
        f"({seconds / floor:5.2f}x floor)"
    )


def import_breakdown() -> None:
    cmd = [sys.executable, "-X", "importtime", "-m", "planner", *QUOTE_ARGS, "--format", "json"]
    err = subprocess.run(cmd, check=True, capture_output=True, text=True).stderr
    cumulative: dict[str, int] = {}
    for line in err.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cum, name = (part.strip() for part in line.split("|"))
        if cum.isdigit():
            cumulative.setdefault(name, int(cum))  # first (outermost) import of each module
    print("imports of the quote process (cumulative ms, -X importtime; nested rows overlap)")
    for name in IMPORT_ROWS:
        if name in cumulative:
            print(f"  {name:34s} {cumulative[name] / 1000:7.1f}")


def synthetic(n: int, seed: int = 0) -> pd.DataFrame:
    """n candidate configurations shaped like real ones: 40 GPU-model x provider groups, gang sizes
    1-64, hours falling with size (with scaling losses), prices rising linearly."""
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 40, n)
    instances = rng.choice([1, 2, 4, 8, 16, 32, 64], n)
    base_hours = 50 * (1 + group % 7) * rng.uniform(0.8, 1.25, n)
    job_hours = base_hours / instances ** rng.uniform(0.8, 0.98, n)
    price = instances * (2 + group % 11) * rng.uniform(0.7, 1.3, n)
    spot = rng.random(n) < 0.4
    return pd.DataFrame(
        {
            "kind": "cloud",
            "provider": [f"p{g % 4}" for g in group],
            "region": [f"r{k}" for k in rng.integers(0, 20, n)],
            "instance_type": [f"i{k}" for k in range(n)],
            "gpu_model": [f"gpu{g % 10}" for g in group],
            "gpus_per_instance": 8,
            "instances": instances,
            "purchase_option": np.where(spot, "spot", "on-demand"),
            "price_usd_per_hour": np.where(spot, price * 0.4, price),
            "job_hours": job_hours,
            "wall_factor": 1.0,
            "capacity_hours": math.inf,
            "quota_group": "g",
            "quota_instances": math.inf,
            "max_gangs": 1,
            "checkpoint_gib": 20.0,
        }
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sizes", default="100,1000,10000,100000")
    parser.add_argument("--raw-max", type=int, default=10000, help="largest unpruned MILP to time")
    args = parser.parse_args(argv)

    exe = [sys.executable, "-m", "planner"]
    floor = wall([sys.executable, "-c", "import pandas, pulp"], args.runs)
    as_found = wall([*exe, *QUOTE_ARGS], args.runs)
    compiled = compile_bytecode()
    offers = wall([*exe, "offers", "--gpu", "A100-80GB", "--max-price", "40"], args.runs)
    quote_s = wall([*exe, *QUOTE_ARGS], args.runs)
    print("whole-process times (median of", args.runs, "runs)")
    print(f"  python -c 'import pandas, pulp'                       {floor:6.3f} s  (floor)")
    print(
        f"  planner offers --gpu A100-80GB --max-price 40         {offers:6.3f} s  ({offers / floor:.2f}x floor)"
    )
    print(
        f"  planner quote --workload gpt2-xl-finetune --deadline 24h {quote_s:6.3f} s  ({quote_s / floor:.2f}x floor)"
    )
    print(
        f"  the same quote before planner's bytecode was cached      {as_found:6.3f} s  "
        f"({as_found / floor:.2f}x floor; {compiled} modules compiled since)"
    )
    print()
    scale_cases(exe, floor, args.runs)
    sweep_at_100_trials(floor)
    print()
    in_process(args.runs)
    print()
    import_breakdown()
    print()
    floor_mib = _probe_mib(_FLOOR_PROBE)
    print(
        f"{'candidates':>10} {'after prune':>11} {'prune s':>8} {'solve s':>8} {'total s':>8} "
        f"{'raw MILP s':>10} {'peak MiB':>9} (own process; floor {floor_mib:.0f} MiB)"
    )
    sizes, totals = [], []
    for n in (int(s) for s in args.sizes.split(",")):
        cands = synthetic(n)
        inputs = ModelInputs(
            deadline_hours=24.0, switch_hours=0.05, switch_usd=2.0, startup_hours=1 / 6
        )
        t0 = time.perf_counter()
        pruned = prune_dominated(cands)
        t1 = time.perf_counter()
        solve(build_model(pruned, inputs))
        t2 = time.perf_counter()
        raw = "-"
        if n <= args.raw_max:
            t3 = time.perf_counter()
            solve(build_model(cands, inputs))
            raw = f"{time.perf_counter() - t3:.3f}"
        mib = _probe_mib(_SIZE_PROBE, str(n))
        print(
            f"{n:>10} {len(pruned):>11} {t1 - t0:>8.3f} {t2 - t1:>8.3f} {t2 - t0:>8.3f} {raw:>10} "
            f"{mib:>9.0f} ({mib / floor_mib:.2f}x)"
        )
        sizes.append(n)
        totals.append(t2 - t0)
    if len(sizes) > 1:
        slope = np.polyfit(np.log(sizes), np.log(totals), 1)[0]
        print(f"growth: total time ~ n^{slope:.2f}")
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this whole benchmark process (every case above): {peak_mib:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
