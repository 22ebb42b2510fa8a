"""Gang sizes that are not powers of two (issue 15): a brute force over every single
configuration -- each offer, purchase option and gang size from 1 to 64 instances, run alone --
never beats the planner's cheapest plan.

The brute force shares only the physics with the planner: the workload model's estimate for each
gang, and the spot model's slowdown and confidence reserve.  It enumerates every size itself and
prices each one by hand (price x instances x (running hours + billed start-up)); it uses neither
the candidate table, nor the dominance pruning, nor the MILP.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pytest

from planner.catalog import OfferBook, load_offer_book
from planner.errors import InfeasibleError
from planner.gpu_specs import load_gpu_catalog
from planner.optimize.candidates import STARTUP_HOURS
from planner.optimize.solvers import mip_tolerance
from planner.optimize.spot import (
    DEFAULT_INTERRUPTION_PCT,
    DEFAULT_RESTART_HOURS,
    SpotModel,
    checkpoint_hours,
    reserve_hours,
)
from planner.quoting.request import QuoteRequest
from planner.quoting.service import quote
from planner.schema import Fabric, Interconnect
from planner.units import MIN_BILLED_HOURS
from planner.workload import Topology, estimate, load_workload

MAX_INSTANCES = 64
MAX_GPUS = 512
CONFIDENCE = 0.9


@dataclass(frozen=True)
class Single:
    """One configuration run alone: what it costs and what it is."""

    cost_usd: float
    instance_type: str
    instances: int
    purchase_option: str


def _topology(offer: dict[str, Any]) -> Topology:
    gbps = offer["network_gbps"]
    return Topology(
        gpus_per_node=int(offer["gpu_count"]),
        interconnect=Interconnect(offer["interconnect"]),
        fabric=Fabric(offer["fabric"]),
        network_gbps=None if pd.isna(gbps) else float(gbps),
    )


def brute_force(spec: Any, offers: pd.DataFrame, deadline_hours: float) -> Single | None:
    """The cheapest single configuration that meets the deadline alone with CONFIDENCE."""
    catalog = load_gpu_catalog()
    best: Single | None = None
    estimates: dict[tuple[Any, ...], Any] = {}
    for offer in offers.to_dict("records"):
        gpu = catalog.resolve(str(offer["gpu_model"]))
        if gpu.cannot_train_in(spec.train.precision.value):
            continue  # no bf16 tensor cores on a T4 or V100: not a configuration
        gpi, gbps, topology = int(offer["gpu_count"]), offer["network_gbps"], _topology(offer)
        for option, column in (
            ("on-demand", "price_on_demand_usd_per_hour"),
            ("spot", "price_spot_usd_per_hour"),
        ):
            price = offer[column]
            if pd.isna(price):
                continue
            for n in range(1, min(MAX_INSTANCES, MAX_GPUS // gpi) + 1):
                key = (gpu.name, gpi, str(offer["interconnect"]), str(offer["fabric"]), gbps, n)
                if key not in estimates:
                    estimates[key] = estimate(spec, gpu, n * gpi, topology=topology)
                est = estimates[key]
                if not est.fits:
                    continue
                job = max(est.wall_hours, MIN_BILLED_HOURS)
                if option == "spot":
                    pct = offer["spot_interruption_pct"]
                    rate = DEFAULT_INTERRUPTION_PCT if pd.isna(pct) else float(pct)
                    spot = SpotModel(
                        rate, n, checkpoint_hours(est.checkpoint_gib), DEFAULT_RESTART_HOURS
                    )
                    billed = job * spot.slowdown + STARTUP_HOURS
                    needed = billed + reserve_hours(spot, job, CONFIDENCE)
                else:
                    billed = needed = job + STARTUP_HOURS
                if needed > deadline_hours:
                    continue
                cost = float(price) * n * billed
                if best is None or cost < best.cost_usd:
                    best = Single(cost, str(offer["instance_type"]), n, option)
    return best


def _cases() -> list[tuple[str, str, int, float]]:
    """(workload, id, seed, deadline as a share of the fastest single GPU's hours): generated
    from a fixed seed, so every run checks the same cases."""
    rng = random.Random(15)
    workloads = (
        "gpt2-large-pretrain",
        "gpt2-xl-finetune",
        "gpt2-medium-pretrain",
        "llama-2-7b-lora",
    )
    cases = []
    for i in range(16):
        workload = workloads[i % len(workloads)]
        share = rng.choice((0.06, 0.11, 0.2, 0.35, 0.6))
        cases.append((workload, f"{workload}-{i}", rng.randrange(10**6), share))
    return cases


def _offers(seed: int) -> pd.DataFrame:
    """Six instance types of the bundled table, one region each, prices scaled by up to 20%."""
    rng = random.Random(seed)
    table = load_offer_book().offers
    types = sorted(set(table["instance_type"]))
    picked = table[table["instance_type"].isin(rng.sample(types, 6))]
    rows = picked.drop_duplicates("instance_type").copy()
    for column in ("price_on_demand_usd_per_hour", "price_spot_usd_per_hour"):
        rows[column] = rows[column] * [rng.uniform(0.8, 1.2) for _ in range(len(rows))]
    return rows.reset_index(drop=True)


def _single_gpu_hours(spec: Any, offers: pd.DataFrame) -> float:
    catalog = load_gpu_catalog()
    gpus = [catalog.resolve(str(g)) for g in set(offers["gpu_model"])]
    hours = [
        estimate(spec, gpu, 1).wall_hours
        for gpu in gpus
        if not gpu.cannot_train_in(spec.train.precision.value)
    ]
    fits = [h for h in hours if math.isfinite(h)]
    return min(fits) if fits else 100.0


@pytest.mark.parametrize(("workload", "seed", "share"), [c[::2] + c[3:] for c in _cases()],
                         ids=[c[1] for c in _cases()])  # fmt: skip
def test_no_single_configuration_of_any_gang_size_beats_the_cheapest_plan(
    workload: str, seed: int, share: float
) -> None:
    spec = load_workload(workload)
    offers = _offers(seed)
    deadline = max(1.0, share * _single_gpu_hours(spec, offers))
    best = brute_force(spec, offers, deadline)
    book = OfferBook(offers=offers, sources=load_offer_book().sources)
    request = QuoteRequest(workload=spec, deadline_hours=deadline, top=1)
    try:
        plan = quote(request, book=book).plans[0]
    except InfeasibleError:
        assert best is None, f"the planner found no plan; {best} meets the deadline alone"
        return
    if best is not None:
        assert plan.total_cost_usd <= best.cost_usd + mip_tolerance(best.cost_usd), (
            f"{best} costs less than the planner's {plan.total_cost_usd:.4f}"
        )


def test_a_quota_is_a_gang_size() -> None:
    """With at most 3 gh200 instances (a quota), a job that needs 3 runs on 3, not on 2 then 4."""
    spec = load_workload("gpt2-large-pretrain")
    table = load_offer_book().offers
    offers = table[table["instance_type"] == "gpu_1x_gh200"].head(1).reset_index(drop=True)
    gh200, topology = load_gpu_catalog().resolve("GH200"), _topology(offers.iloc[0].to_dict())
    two, three = (estimate(spec, gh200, n, topology=topology).wall_hours for n in (2, 3))
    deadline = three + STARTUP_HOURS + 0.05  # 3 instances make it alone; 2 do not
    assert two + STARTUP_HOURS > deadline
    book = OfferBook(offers=offers, sources=load_offer_book().sources)
    request = QuoteRequest(
        workload=spec, deadline_hours=deadline, quotas={"lambda": 3}, allow_spot=False, top=1
    )
    plan = quote(request, book=book).plans[0]
    assert max(i.instances for i in plan.items) == 3
    best = brute_force(spec, offers.assign(price_spot_usd_per_hour=float("nan")), deadline)
    assert best is not None and best.instances == 3
    assert plan.total_cost_usd <= best.cost_usd + mip_tolerance(best.cost_usd)


def test_the_ladder_stops_once_doubling_the_gang_no_longer_shortens_the_job() -> None:
    """gpt2-xl-finetune's global batch is spread over every rank of a few 8 x A100 instances:
    the doubling that first gains no time is the last size estimated, and every size before it
    was faster than the one before."""
    from planner.optimize.candidates import INSTANCE_COUNTS, build_candidates

    spec = load_workload("gpt2-xl-finetune")
    table = load_offer_book().offers
    offers = table[table["instance_type"] == "p4d.24xlarge"].head(1).reset_index(drop=True)
    asked: list[tuple[int, float]] = []

    def recording(spec: Any, gpu: Any, count: int, **kw: Any) -> Any:
        est = estimate(spec, gpu, count, **kw)
        asked.append((count // 8, est.wall_hours))
        return est

    build_candidates(spec, offers, load_gpu_catalog(), estimator=recording)
    sizes = [n for n, _ in asked]
    walls = [w for _, w in asked]
    assert sizes == list(INSTANCE_COUNTS[: len(sizes)])
    assert len(sizes) < len(INSTANCE_COUNTS)  # it stopped before 64 instances
    assert all(b < a for a, b in itertools.pairwise(walls[:-1]))
    assert walls[-1] >= min(walls[:-1])  # the last doubling gained nothing
    # what it skipped would have gained nothing either
    a100, topology = load_gpu_catalog().resolve("A100-40GB"), _topology(offers.iloc[0].to_dict())
    skipped = INSTANCE_COUNTS[len(sizes)]
    assert estimate(spec, a100, skipped * 8, topology=topology).wall_hours >= min(walls[:-1])
