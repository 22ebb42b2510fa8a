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
the fastest parallel plan is found by bisecting the deadline of this cost model.

Before building, :func:`planner.optimize.candidates.prune_dominated` keeps only configurations not
dominated in (hours, cost) within their constraint group, so the model stays small.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import pulp

from planner.errors import InfeasibleError, PlannerError

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


@dataclass
class BuiltModel:
    """A PuLP problem and the index from its variables back to candidate rows."""

    problem: pulp.LpProblem
    candidates: pd.DataFrame
    inputs: ModelInputs
    hours: dict[int, pulp.LpVariable] = field(default_factory=dict)
    used: dict[int, pulp.LpVariable] = field(default_factory=dict)
    pieces: dict[int, pulp.LpVariable] = field(default_factory=dict)
    gangs: dict[int, pulp.LpVariable] = field(default_factory=dict)


@dataclass(frozen=True)
class Solution:
    """Variable values of an optimal solve, by candidate id."""

    hours: dict[int, float]
    pieces: dict[int, int]
    gangs: dict[int, int]
    objective: float
    status: str
    solve_seconds: float


def build_model(candidates: pd.DataFrame, inputs: ModelInputs) -> BuiltModel:
    """Build the MILP for ``candidates`` (pure: nothing is solved)."""
    sense = pulp.LpMinimize
    prob = pulp.LpProblem(f"quote_{inputs.objective}", sense)
    model = BuiltModel(problem=prob, candidates=candidates, inputs=inputs)
    if inputs.pieces <= 1:
        _build_sequential(model)
    else:
        _build_parallel(model)
    return model


def _build_sequential(model: BuiltModel) -> None:
    prob, cands, inp = model.problem, model.candidates, model.inputs
    deadline = inp.deadline_hours
    cost_terms = []
    wall_terms = []
    work_terms = []
    for i, row in _rows(cands):
        a = float(row["wall_factor"])
        # Never more running hours than the whole job takes on this configuration (a tight big-M).
        cap = min(float(row["capacity_hours"]), float(row["job_hours"]))
        if inp.objective == "cost":
            cap = min(cap, deadline / a)
        h = prob.add_variable(f"h_{i}", lowBound=0)
        y = prob.add_variable(f"y_{i}", lowBound=0, upBound=1, cat=pulp.LpBinary)
        model.hours[i], model.used[i] = h, y
        prob += h <= cap * y, f"link_{i}"
        price = float(row["price_usd_per_hour"])
        cost_terms += [price * h, price * inp.startup_hours * y]
        wall_terms += [a * h, inp.startup_hours * y]
        work_terms.append(h * (1.0 / float(row["job_hours"])))
    used = pulp.lpSum(model.used.values())
    cost = pulp.lpSum(cost_terms) + inp.switch_usd * (used - 1)
    wall = pulp.lpSum(wall_terms) + inp.switch_hours * (used - 1)
    prob += pulp.lpSum(work_terms) >= 1, "work"
    prob += used >= 1, "at_least_one_phase"
    prob += used <= inp.max_phases, "max_phases"
    if inp.budget_usd is not None:
        prob += cost <= inp.budget_usd, "budget"
    if inp.must_use_local:
        local = [model.used[i] for i, r in _rows(cands) if r["kind"] == "local"]
        prob += pulp.lpSum(local) >= 1, "use_local"
    if inp.objective == "time":
        prob += wall
    else:
        prob += wall <= deadline, "deadline"
        prob += cost


def _build_parallel(model: BuiltModel) -> None:
    prob, cands, inp = model.problem, model.candidates, model.inputs
    P = inp.pieces
    if inp.objective != "cost":
        # The span of m gangs sharing n pieces, ceil(n / m) a q, is not linear; the fastest parallel
        # plan is found by bisection on the deadline instead (planner.optimize.plans).
        raise ValueError("the parallel model minimises cost; bisect the deadline for time")
    cost_terms = []
    for i, row in _rows(cands):
        q = float(row["job_hours"]) / P  # running hours of one piece
        a = float(row["wall_factor"])
        max_gangs = int(row["max_gangs"])
        n = prob.add_variable(f"n_{i}", lowBound=0, upBound=P, cat=pulp.LpInteger)
        m = prob.add_variable(f"m_{i}", lowBound=0, upBound=max_gangs, cat=pulp.LpInteger)
        model.pieces[i], model.gangs[i] = n, m
        per_gang = max(math.floor((inp.deadline_hours - inp.startup_hours) / (a * q) + 1e-9), 0)
        prob += n <= per_gang * m, f"fit_{i}"
        prob += m <= n, f"no_idle_gang_{i}"
        price = float(row["price_usd_per_hour"])
        cost_terms += [price * q * n, price * inp.startup_hours * m]
    prob += pulp.lpSum(model.pieces.values()) == P, "all_pieces"
    for group, part in cands.groupby("quota_group"):
        cap = float(part["quota_instances"].iloc[0])
        if math.isfinite(cap):
            terms = [float(r["instances"]) * model.gangs[i] for i, r in _rows(part)]
            prob += pulp.lpSum(terms) <= cap, f"quota_{_safe(str(group))}"
    cost = pulp.lpSum(cost_terms)
    if inp.budget_usd is not None:
        prob += cost <= inp.budget_usd, "budget"
    if inp.must_use_local:
        local = [model.pieces[i] for i, r in _rows(cands) if r["kind"] == "local"]
        prob += pulp.lpSum(local) >= 1, "use_local"
    prob += cost


def _rows(df: pd.DataFrame) -> list[tuple[int, dict[str, Any]]]:
    """(candidate id, row as a dict) pairs; much faster than iterrows."""
    return list(zip((int(i) for i in df.index), df.to_dict("records"), strict=True))  # type: ignore[arg-type]


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in name)


def default_solver(time_limit_s: float | None = 60.0) -> Any:
    """HiGHS when installed (pip highspy), CBC (bundled with PuLP) otherwise."""
    highs = pulp.HiGHS(msg=False, timeLimit=time_limit_s)
    if highs.available():
        return highs
    return pulp.PULP_CBC_CMD(msg=False, timeLimit=time_limit_s)


def solve(model: BuiltModel, solver: Any | None = None) -> Solution:
    """Solve ``model``; only an optimal answer is a success.

    Raises InfeasibleError when no plan satisfies the constraints (the caller explains why) and
    PlannerError for any other non-optimal status.
    """
    solver = solver or default_solver()
    started = time.perf_counter()
    status_code = model.problem.solve(solver)
    elapsed = time.perf_counter() - started
    status = pulp.LpStatus[status_code]
    if status == "Infeasible":
        raise InfeasibleError("no plan satisfies the constraints")
    if status != "Optimal":
        raise PlannerError(
            f"the solver stopped with status {status!r}", hint="loosen the constraints or retry"
        )
    hours = {i: float(v.value() or 0.0) for i, v in model.hours.items()}
    if model.used:
        hours = {i: h for i, h in hours.items() if h > 1e-7 and (model.used[i].value() or 0) > 0.5}
    pieces = {i: round(v.value() or 0) for i, v in model.pieces.items()}
    gangs = {i: round(v.value() or 0) for i, v in model.gangs.items()}
    pieces = {i: n for i, n in pieces.items() if n > 0}
    gangs = {i: max(gangs[i], 1) for i in pieces}
    objective = float(pulp.value(model.problem.objective) or 0.0)
    log.debug("solved %s in %.3fs: %s", model.problem.name, elapsed, status)
    return Solution(
        hours=hours,
        pieces=pieces,
        gangs=gangs,
        objective=objective,
        status=status,
        solve_seconds=elapsed,
    )
