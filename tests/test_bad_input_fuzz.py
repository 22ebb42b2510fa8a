"""Mutated inputs (the bad-input rule): a bundled workload, hardware file or price list with a few
values replaced by wrong types, extreme numbers, NaN, empty text or nested structures, or a key
removed or misspelt, gives an answer or a PlannerError (the CLI's clean message), never another
exception.  The mutations are drawn from a fixed seed, so every run checks the same cases."""

from __future__ import annotations

import contextlib
import copy
import csv
import io
import math
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

import planner
from planner.errors import PlannerError
from planner.gpu_specs import resolve_gpu
from planner.workload import estimate, parse_workload

ROOT = Path(__file__).resolve().parent.parent
# what a hand edit or a script might leave in a field
VALUES: list[Any] = [
    None, True, False, 0, -1, 1, 3.5, -2.5, 1e308, 10**30, float("nan"), float("inf"), "", " ",
    "x", "8", "1e9", "24h", "80GB", "$5", [], [1], ["a"], {}, {"a": 1}, [[[]]], "H100", "fp8",
    "lora", "none", 0.0001, 2**31,
]  # fmt: skip


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield (*prefix, key)
            yield from _paths(value, (*prefix, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield (*prefix, i)
            yield from _paths(value, (*prefix, i))


def _mutated(doc: Any, rnd: random.Random) -> Any:
    """``doc`` with one to three of its values replaced, removed or their key misspelt."""
    doc = copy.deepcopy(doc)
    paths = list(_paths(doc))
    for _ in range(rnd.randint(1, 3)):
        path = rnd.choice(paths)
        parent = doc
        for key in path[:-1]:  # an earlier mutation may have replaced or removed part of it
            try:
                parent = parent[key]
            except (KeyError, IndexError, TypeError):
                parent = None
                break
        last = path[-1]
        if isinstance(parent, dict) and last in parent:
            choice = rnd.random()
            if choice < 0.8:
                parent[last] = rnd.choice(VALUES)
            elif choice < 0.9:
                del parent[last]
            else:
                parent[f"{last}s"] = parent.pop(last)
        elif isinstance(parent, list) and isinstance(last, int) and last < len(parent):
            parent[last] = rnd.choice(VALUES)
    return doc


def _files(folder: str) -> list[Any]:
    return [
        yaml.safe_load(p.read_text(encoding="utf-8"))
        for p in sorted((ROOT / "scenarios" / folder).glob("*.yaml"))
    ]


WORKLOADS = _files("workloads")


@pytest.mark.parametrize("seed", range(6))
def test_a_mutated_workload_gives_an_estimate_or_a_planner_error(seed: int) -> None:
    rnd = random.Random(seed)
    h100, t4 = resolve_gpu("H100"), resolve_gpu("T4")
    for _ in range(25):
        doc = _mutated(rnd.choice(WORKLOADS), rnd)
        try:
            spec = parse_workload(doc)
            for gpu, count in ((h100, 8), (t4, 1)):
                est = estimate(spec, gpu, count)
                assert not math.isnan(est.wall_hours) and not math.isnan(est.memory_per_gpu_gib)
        except PlannerError:
            pass


@pytest.mark.parametrize("seed", range(3))
def test_a_mutated_hardware_file_gives_a_tco_or_a_planner_error(seed: int, tmp_path: Path) -> None:
    rnd = random.Random(seed)
    files = _files("hardware")
    for i in range(15):
        path = tmp_path / f"hw{i}.yaml"
        path.write_text(yaml.safe_dump(_mutated(rnd.choice(files), rnd)), encoding="utf-8")
        with contextlib.suppress(PlannerError):
            planner.tco(str(path), with_cloud=False)


@pytest.mark.parametrize("seed", range(3))
def test_a_mutated_price_list_gives_offers_or_a_planner_error(seed: int, tmp_path: Path) -> None:
    rnd = random.Random(seed)
    snapshot = sorted((ROOT / "pricing_cache").glob("*/offers-aws.csv"))[-1]
    rows = list(csv.reader(snapshot.read_text(encoding="utf-8").splitlines()))
    header, body = rows[0], rows[1:40]
    cells = [*(str(v) for v in VALUES), "2026-13-40", "nvlink", "h100", '"', "1,5", "a" * 300]
    for i in range(12):
        head, picked = list(header), [list(r) for r in rnd.sample(body, 5)]
        for _ in range(rnd.randint(1, 4)):
            choice = rnd.random()
            row = rnd.choice(picked)
            if choice < 0.8:
                row[rnd.randrange(len(row))] = rnd.choice(cells)
            elif choice < 0.9:
                head[rnd.randrange(len(head))] = rnd.choice(cells)
            elif choice < 0.95:
                row.append(rnd.choice(cells))
            else:
                row.pop()
        out = io.StringIO()
        csv.writer(out).writerows([head, *picked])
        path = tmp_path / f"prices{i}.csv"
        path.write_text(out.getvalue(), encoding="utf-8")
        with contextlib.suppress(PlannerError):
            planner.offers(offers_files=(str(path),))
