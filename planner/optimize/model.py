"""The quote MILP in three steps: build the problem, solve it, read the plan back.

Candidates (rows of the candidate table, see :mod:`planner.optimize.candidates`) are *gang
configurations*: one offer (or owned machine type), a number of instances, a purchase option and a
parallel strategy, with the hours the whole job would take on it (scaling losses and the spot
slowdown included).  Configurations that do not fit in memory or lack the interconnect their
strategy needs never get here.

Sequential model (one training run, ``pieces == 1``).  For each candidate ``c``:
``p_c`` price (USD per running hour of the whole gang), ``t_c`` hours for the whole job on it,
``a_c >= 1`` wall-clock hours per running hour (owned machines available part of the day),
``H_c`` the running hours it can supply.
Variables: ``h_c >= 0`` running hours, ``y_c`` in {0, 1} whether phase ``c`` is used::

    minimise   sum_c p_c (h_c + S y_c) + sigma (sum_c y_c - 1)
    subject to sum_c h_c / t_c                                  >= 1   (all work done)
               sum_c (a_c h_c + S y_c) + tau (sum_c y_c - 1)    <= D   (phases + switches fit the deadline)
               h_c                                     <= min(H_c, t_c, D / a_c) y_c
               1 <= sum_c y_c                          <= K        (at most K phases)
               cost                                    <= B        (budget, optional)
               sum_{c in L} y_c                        >= 1        (optional: must use owned hardware)

``S`` is the billed start-up of every phase (provision, set up, stage data), ``tau`` and ``sigma``
the time and the data-transfer cost (checkpoint egress) of one switch.  The time objective replaces the cost
objective by the wall time ``sum_c a_c h_c + tau (sum_c y_c - 1)`` (and drops the deadline).

Risk (``unit_confidence`` = u): a spot configuration ``c`` doing the whole job meets the deadline
with chance ``u`` when ``R_c`` hours of slack absorb its interruptions (the Poisson quantile of
:func:`planner.optimize.spot.reserve_hours`; a share of the job needs no more).  A variable
``z >= R_c y_c`` for every spot ``c`` joins the deadline row (``... + z <= D``, kept under the time
objective too), so every spot phase used keeps its reserve as slack.

Parallel model (``pieces = P > 1`` independent pieces: sweep trials, inference shards).  ``q_c`` is
the running hours of one piece on gang ``c``.  Variables: ``n_c`` pieces and ``m_c`` gangs, integers::

    minimise   sum_c p_c (q_c n_c + S m_c)
    subject to sum_c n_c                       = P
               n_c                             <= floor((D - S) / (a_c q_c)) m_c   (each gang's pieces fit D)
               m_c                             <= n_c    (no idle gangs)
               sum_{c in g} i_c m_c            <= Q_g    (quota: instances per provider/region/family,
                                                           machines per owned hardware group)
               cost                            <= B

The plan's wall time is ``max_c ceil(n_c / m_c) a_c q_c``.  That span is not linear in (n, m), so
the fastest parallel plan is found by bisecting the deadline of this cost model.  With a
``unit_confidence`` u, a spot gang's pieces are capped further, to the most it finishes by ``D``
with chance u (:func:`_pieces_per_gang`).

Before building, :func:`planner.optimize.pruning.prune_dominated` keeps only configurations not
dominated in (hours, cost) within their constraint group, so the model stays small.  The model is a
:class:`~planner.optimize.program.LinearProgram`; :func:`solve` hands it to a registered solver
(:mod:`planner.optimize.solvers`, HiGHS by default) and reads the columns back by candidate id.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np
import pandas as pd

from planner.optimize.program import LinearProgram, Terms
from planner.optimize.solvers import Solver, check_result, default_solver
from planner.optimize.spot import (
    DEFAULT_RESTART_HOURS,
    SpotModel,
    checkpoint_hours,
    reserve_hours,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelInputs:
    """Everything besides the candidates that shapes one solve."""

    deadline_hours: float
    budget_usd: float | None = None
    pieces: int = 1
    max_phases: int = 3
    switch_hours: float = 0.25
    switch_usd: float = 0.0
    startup_hours: float = 0.0
    objective: str = "cost"  # cost | time
    must_use_local: bool = False
    # The chance the whole plan must meet its deadline with under the spot model (None: any).
    confidence: float | None = None
    # What the model enforces for it: the chance each spot phase (sequential) or each spot gang
    # (parallel) meets the deadline with; planner.optimize.plans.solve_plan picks it.
    unit_confidence: float | None = None


@dataclass
class BuiltModel:
    """A linear program and the index from candidate rows to its columns."""

    program: LinearProgram
    candidates: pd.DataFrame
    inputs: ModelInputs
    hours: dict[int, int] = field(default_factory=dict)
    used: dict[int, int] = field(default_factory=dict)
    pieces: dict[int, int] = field(default_factory=dict)
    gangs: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Solution:
    """Variable values of a solve, by candidate id."""

    hours: dict[int, float]
    pieces: dict[int, int]
    gangs: dict[int, int]
    objective: float
    status: str  # "optimal" or "feasible (time limit)"
    solve_seconds: float
    solver: str = ""


def build_model(candidates: pd.DataFrame, inputs: ModelInputs) -> BuiltModel:
    """Build the MILP for ``candidates`` (pure: nothing is solved)."""
    program = LinearProgram(f"quote_{inputs.objective}")
    model = BuiltModel(program=program, candidates=candidates, inputs=inputs)
    if inputs.pieces <= 1:
        _build_sequential(model)
    else:
        _build_parallel(model)
    return model


def _build_sequential(model: BuiltModel) -> None:
    prob, cands, inp = model.program, model.candidates, model.inputs
    deadline, start = inp.deadline_hours, inp.startup_hours
    ids = [int(i) for i in cands.index]
    cost, wall, work = Terms(), Terms(), Terms()
    reserve = _spot_reserves(cands, inp.unit_confidence)
    if reserve is None:
        reserve = np.zeros(len(cands))
    # z >= R_c y_c: the plan keeps the largest reserve of the spot phases it uses as slack
    slack = prob.add_variable("z", 0.0, float(reserve.max())) if (reserve > 0).any() else None
    columns = zip(
        ids,
        cands["wall_factor"].tolist(),
        cands["capacity_hours"].tolist(),
        cands["job_hours"].tolist(),
        cands["price_usd_per_hour"].tolist(),
        reserve.tolist(),
        strict=True,
    )
    for i, wall_factor, capacity_hours, job_hours, price_per_hour, r in columns:
        a, t, price = float(wall_factor), float(job_hours), float(price_per_hour)
        # Never more running hours than the whole job takes on this configuration (a tight big-M).
        cap = min(float(capacity_hours), t)
        if inp.objective == "cost":
            cap = min(cap, deadline / a)
        h = prob.add_variable(f"h_{i}")
        y = prob.add_variable(f"y_{i}", 0, 1, integer=True)
        model.hours[i], model.used[i] = h, y
        prob.add_le(f"link_{i}", Terms().add(h, 1).add(y, -cap), 0)
        cost.add(h, price).add(y, price * start)
        wall.add(h, a).add(y, start)
        work.add(h, 1.0 / t)
        if slack is not None and r > 0:
            prob.add_le(f"reserve_{i}", Terms().add(y, r).add(slack, -1), 0)
    used = list(model.used.values())
    # sum_c y_c - 1 switches, each costing switch_usd dollars and switch_hours hours
    for terms, per_switch in ((cost, inp.switch_usd), (wall, inp.switch_hours)):
        if per_switch != 0:
            terms.add_each(used, per_switch)
            terms.constant -= per_switch
    prob.add_ge("work", work, 1)
    prob.add_ge("at_least_one_phase", Terms().add_each(used, 1), 1)
    prob.add_le("max_phases", Terms().add_each(used, 1), inp.max_phases)
    if inp.budget_usd is not None:
        prob.add_le("budget", cost, inp.budget_usd)
    if inp.must_use_local:
        local = [model.used[i] for i, k in zip(ids, cands["kind"], strict=True) if k == "local"]
        prob.add_ge("use_local", Terms().add_each(local, 1), 1)
    # the plan keeps the reserve as slack before the deadline
    deadline_row = wall if slack is None else wall.copy().add(slack, 1)
    if inp.objective == "time":
        if slack is not None:  # the fastest plan too must meet the deadline with confidence
            prob.add_le("deadline", deadline_row, deadline)
        prob.set_objective(wall)
    else:
        prob.add_le("deadline", deadline_row, deadline)
        prob.set_objective(cost)


def _spot_model(interruption_pct: float, instances: int, checkpoint_gib: float) -> SpotModel:
    """The spot model the plan's risk is computed with (planner.optimize.plans)."""
    return SpotModel(
        float(interruption_pct),
        int(instances),
        checkpoint_hours(float(checkpoint_gib)),
        DEFAULT_RESTART_HOURS,
    )


def _spot_reserves(cands: pd.DataFrame, confidence: float | None) -> np.ndarray | None:
    """``R_c``: the slack a spot configuration needs, doing the whole job, to meet the deadline
    with ``confidence`` (a share of the job needs no more: fewer interruptions are expected)."""
    if confidence is None or cands.empty:
        return None
    spot = (cands["purchase_option"] == "spot").to_numpy()
    if not spot.any():
        return None
    reserve = np.zeros(len(cands))
    rows = zip(
        cands["interruption_pct"].to_numpy(dtype=float)[spot],
        cands["instances"].to_numpy(dtype=int)[spot],
        cands["checkpoint_gib"].to_numpy(dtype=float)[spot],
        cands["base_job_hours"].to_numpy(dtype=float)[spot],
        strict=True,
    )
    reserve[spot] = [
        reserve_hours(_spot_model(pct, n, ckpt), useful, confidence)
        for pct, n, ckpt, useful in rows
    ]
    return reserve


class _GangShape(NamedTuple):
    """What decides how many pieces one gang of a configuration finishes by the deadline."""

    piece_hours: float  # running hours of one piece (the expected spot slowdown included)
    wall_factor: float
    spot_slowdown: float
    purchase_option: str
    interruption_pct: float
    instances: int
    checkpoint_gib: float


def _gang_shapes(cands: pd.DataFrame, pieces: int) -> list[_GangShape]:
    columns = zip(
        (cands["job_hours"] / pieces).tolist(),
        cands["wall_factor"].tolist(),
        cands["spot_slowdown"].tolist(),
        cands["purchase_option"].tolist(),
        cands["interruption_pct"].tolist(),
        cands["instances"].tolist(),
        cands["checkpoint_gib"].tolist(),
        strict=True,
    )
    return [
        _GangShape(float(q), float(a), float(sd), str(o), float(pct), int(n), float(ckpt))
        for q, a, sd, o, pct, n, ckpt in columns
    ]


def _pieces_per_gang(shape: _GangShape, inp: ModelInputs) -> int:
    """The most pieces one gang finishes by the deadline (with the per-gang confidence, on spot)."""
    q, a = shape.piece_hours, shape.wall_factor
    available = inp.deadline_hours - inp.startup_hours
    per_gang = max(math.floor(available / (a * q) + 1e-9), 0)
    if inp.unit_confidence is None or shape.purchase_option != "spot":
        return per_gang
    spot = _spot_model(shape.interruption_pct, shape.instances, shape.checkpoint_gib)
    while per_gang > 0:
        useful = per_gang * q * a / shape.spot_slowdown  # as the plan's risk reads a gang's share
        if spot.p_meet(useful, available - useful) >= inp.unit_confidence:
            break
        per_gang -= 1
    return per_gang


def confidence_binds(candidates: pd.DataFrame, inputs: ModelInputs) -> bool:
    """Whether ``inputs.unit_confidence`` changes the model at all (else it is the model at any
    risk, and so is its answer)."""
    if inputs.unit_confidence is None:
        return False
    spot = candidates[candidates["purchase_option"] == "spot"]
    if spot.empty:
        return False
    if inputs.pieces <= 1:
        reserve = _spot_reserves(spot, inputs.unit_confidence)
        return reserve is not None and bool((reserve > 0).any())
    free = replace(inputs, unit_confidence=None)
    return any(
        _pieces_per_gang(shape, inputs) < _pieces_per_gang(shape, free)
        for shape in _gang_shapes(spot, inputs.pieces)
    )


def _build_parallel(model: BuiltModel) -> None:
    prob, cands, inp = model.program, model.candidates, model.inputs
    P = inp.pieces
    if inp.objective != "cost":
        # The span of m gangs sharing n pieces, ceil(n / m) a q, is not linear; the fastest parallel
        # plan is found by bisection on the deadline instead (planner.optimize.plans).
        raise ValueError("the parallel model minimises cost; bisect the deadline for time")
    ids = [int(i) for i in cands.index]
    cost, all_pieces = Terms(), Terms()
    quota_groups: dict[str, list[tuple[float, int]]] = {}
    quota_caps: dict[str, float] = {}
    columns = zip(
        ids,
        _gang_shapes(cands, P),
        cands["max_gangs"].tolist(),
        cands["price_usd_per_hour"].tolist(),
        cands["quota_group"].tolist(),
        cands["quota_instances"].tolist(),
        strict=True,
    )
    for i, shape, max_gangs, price_per_hour, group, cap in columns:
        q = shape.piece_hours  # running hours of one piece
        n = prob.add_variable(f"n_{i}", 0, P, integer=True)
        m = prob.add_variable(f"m_{i}", 0, int(max_gangs), integer=True)
        model.pieces[i], model.gangs[i] = n, m
        per_gang = _pieces_per_gang(shape, inp)
        prob.add_le(f"fit_{i}", Terms().add(n, 1).add(m, -per_gang), 0)
        prob.add_le(f"no_idle_gang_{i}", Terms().add(m, 1).add(n, -1), 0)
        price = float(price_per_hour)
        cost.add(n, price * q).add(m, price * inp.startup_hours)
        all_pieces.add(n, 1)
        quota_groups.setdefault(group, []).append((float(shape.instances), m))
        quota_caps.setdefault(group, float(cap))  # the group's first row, as every row holds it
    prob.add_eq("all_pieces", all_pieces, P)
    for group in sorted(quota_groups):
        if math.isfinite(quota_caps[group]):
            terms = Terms()
            for instances, m in quota_groups[group]:
                terms.add(m, instances)
            prob.add_le(f"quota_{_safe(str(group))}", terms, quota_caps[group])
    if inp.budget_usd is not None:
        prob.add_le("budget", cost, inp.budget_usd)
    if inp.must_use_local:
        local = [model.pieces[i] for i, k in zip(ids, cands["kind"], strict=True) if k == "local"]
        prob.add_ge("use_local", Terms().add_each(local, 1), 1)
    prob.set_objective(cost)


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in name)


# A quote's model is settled at the root node in a few LP iterations, so HiGHS's thread pool
# (half the cores) only adds the cost of waking and syncing its workers to every solve: on a
# 2-core machine the 24 h gpt2-xl-finetune quote's six solves took 88 ms, on one thread 56 ms;
# the 20-trial sweep's twenty 188 -> 92 ms; the week-long llama-2-7b-pretrain's six 230 -> 137 ms;
# the same optima (highspy 1.16).  The budget's MILPs branch, and keep HiGHS's default.
QUOTE_SOLVER_THREADS = 1
# For the same reason presolve costs a quote's model more than it saves (even with the probing and
# enumeration rules off, solvers.HighsSolver): without it, the week-long llama-2-7b-pretrain
# quote's six solves took 61 ms instead of 103, the 20-trial sweep's 64 instead of 74, the 24 h
# gpt2-xl-finetune quote's five 21 instead of 26; the same optima (2-core machine, highspy 1.16).
QUOTE_SOLVER_PRESOLVE = False


def solve(model: BuiltModel, solver: Solver | None = None) -> Solution:
    """Solve ``model`` with ``solver`` (HiGHS by default).

    An optimal answer, or a time-limited one holding an integer-feasible plan, is returned with its
    status; InfeasibleError when no plan satisfies the constraints (the caller explains why);
    PlannerError for any other outcome.
    """
    result = check_result(
        (
            solver or default_solver(threads=QUOTE_SOLVER_THREADS, presolve=QUOTE_SOLVER_PRESOLVE)
        ).solve(model.program)
    )
    x = result.values
    hours = {i: x[j] for i, j in model.hours.items()}
    if model.used:
        hours = {i: h for i, h in hours.items() if h > 1e-7 and x[model.used[i]] > 0.5}
    pieces = {i: round(x[j]) for i, j in model.pieces.items()}
    gangs = {i: round(x[j]) for i, j in model.gangs.items()}
    pieces = {i: n for i, n in pieces.items() if n > 0}
    gangs = {i: max(gangs[i], 1) for i in pieces}
    log.debug(
        "solved %s with %s in %.3fs: %s",
        model.program.name,
        result.solver,
        result.seconds,
        result.status.value,
    )
    return Solution(
        hours=hours,
        pieces=pieces,
        gangs=gangs,
        objective=float(result.objective or 0.0),
        status=result.status.value,
        solve_seconds=result.seconds,
        solver=result.solver,
    )
