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


class _Terms:
    """A linear expression under construction: coefficients in first-use order and a constant.

    PuLP's operator overloads (``price * h``, ``lpSum``) allocate a new expression per term, which
    made building the model cost more than solving it.  Terms are gathered here and wrapped in one
    ``LpAffineExpression`` per row.  Zero coefficients are skipped, as PuLP's ``0 * x`` does.
    """

    __slots__ = ("coefficients", "constant")

    def __init__(self) -> None:
        self.coefficients: dict[pulp.LpVariable, float] = {}
        self.constant = 0.0

    def add(self, var: pulp.LpVariable, coefficient: float) -> _Terms:
        if coefficient != 0:
            self.coefficients[var] = self.coefficients.get(var, 0) + coefficient
        return self

    def add_each(self, variables: list[pulp.LpVariable], coefficient: float) -> _Terms:
        for var in variables:
            self.add(var, coefficient)
        return self

    def expression(self) -> pulp.LpAffineExpression:
        return pulp.LpAffineExpression(self.coefficients, constant=self.constant)


def _add_row(prob: pulp.LpProblem, name: str, terms: _Terms, sense: int, rhs: float) -> None:
    """Add ``terms (sense) rhs`` as the constraint ``name``."""
    prob.addConstraint(pulp.LpConstraint(terms.expression(), sense, rhs=rhs), name)


def _build_sequential(model: BuiltModel) -> None:
    prob, cands, inp = model.problem, model.candidates, model.inputs
    deadline, start = inp.deadline_hours, inp.startup_hours
    ids = [int(i) for i in cands.index]
    cost, wall, work = _Terms(), _Terms(), _Terms()
    columns = zip(
        ids,
        cands["wall_factor"].tolist(),
        cands["capacity_hours"].tolist(),
        cands["job_hours"].tolist(),
        cands["price_usd_per_hour"].tolist(),
        strict=True,
    )
    for i, wall_factor, capacity_hours, job_hours, price_per_hour in columns:
        a, t, price = float(wall_factor), float(job_hours), float(price_per_hour)
        # Never more running hours than the whole job takes on this configuration (a tight big-M).
        cap = min(float(capacity_hours), t)
        if inp.objective == "cost":
            cap = min(cap, deadline / a)
        h = prob.add_variable(f"h_{i}", lowBound=0)
        y = prob.add_variable(f"y_{i}", lowBound=0, upBound=1, cat=pulp.LpBinary)
        model.hours[i], model.used[i] = h, y
        _add_row(prob, f"link_{i}", _Terms().add(h, 1).add(y, -cap), pulp.LpConstraintLE, 0)
        cost.add(h, price).add(y, price * start)
        wall.add(h, a).add(y, start)
        work.add(h, 1.0 / t)
    used = list(model.used.values())
    # sum_c y_c - 1 switches, each costing switch_usd dollars and switch_hours hours
    for terms, per_switch in ((cost, inp.switch_usd), (wall, inp.switch_hours)):
        if per_switch != 0:
            terms.add_each(used, per_switch)
            terms.constant -= per_switch
    _add_row(prob, "work", work, pulp.LpConstraintGE, 1)
    _add_row(prob, "at_least_one_phase", _Terms().add_each(used, 1), pulp.LpConstraintGE, 1)
    _add_row(prob, "max_phases", _Terms().add_each(used, 1), pulp.LpConstraintLE, inp.max_phases)
    if inp.budget_usd is not None:
        _add_row(prob, "budget", cost, pulp.LpConstraintLE, inp.budget_usd)
    if inp.must_use_local:
        local = [model.used[i] for i, k in zip(ids, cands["kind"], strict=True) if k == "local"]
        _add_row(prob, "use_local", _Terms().add_each(local, 1), pulp.LpConstraintGE, 1)
    if inp.objective == "time":
        prob.setObjective(wall.expression())
    else:
        _add_row(prob, "deadline", wall, pulp.LpConstraintLE, deadline)
        prob.setObjective(cost.expression())


def _build_parallel(model: BuiltModel) -> None:
    prob, cands, inp = model.problem, model.candidates, model.inputs
    P = inp.pieces
    if inp.objective != "cost":
        # The span of m gangs sharing n pieces, ceil(n / m) a q, is not linear; the fastest parallel
        # plan is found by bisection on the deadline instead (planner.optimize.plans).
        raise ValueError("the parallel model minimises cost; bisect the deadline for time")
    ids = [int(i) for i in cands.index]
    cost, all_pieces = _Terms(), _Terms()
    quota_groups: dict[str, list[tuple[float, pulp.LpVariable]]] = {}
    quota_caps: dict[str, float] = {}
    columns = zip(
        ids,
        cands["job_hours"].tolist(),
        cands["wall_factor"].tolist(),
        cands["max_gangs"].tolist(),
        cands["price_usd_per_hour"].tolist(),
        cands["quota_group"].tolist(),
        cands["quota_instances"].tolist(),
        cands["instances"].tolist(),
        strict=True,
    )
    for i, job_hours, wall_factor, max_gangs, price_per_hour, group, cap, instances in columns:
        q = float(job_hours) / P  # running hours of one piece
        a = float(wall_factor)
        n = prob.add_variable(f"n_{i}", lowBound=0, upBound=P, cat=pulp.LpInteger)
        m = prob.add_variable(f"m_{i}", lowBound=0, upBound=int(max_gangs), cat=pulp.LpInteger)
        model.pieces[i], model.gangs[i] = n, m
        per_gang = max(math.floor((inp.deadline_hours - inp.startup_hours) / (a * q) + 1e-9), 0)
        _add_row(prob, f"fit_{i}", _Terms().add(n, 1).add(m, -per_gang), pulp.LpConstraintLE, 0)
        _add_row(prob, f"no_idle_gang_{i}", _Terms().add(m, 1).add(n, -1), pulp.LpConstraintLE, 0)
        price = float(price_per_hour)
        cost.add(n, price * q).add(m, price * inp.startup_hours)
        all_pieces.add(n, 1)
        quota_groups.setdefault(group, []).append((float(instances), m))
        quota_caps.setdefault(group, float(cap))  # the group's first row, as every row holds it
    _add_row(prob, "all_pieces", all_pieces, pulp.LpConstraintEQ, P)
    for group in sorted(quota_groups):
        if math.isfinite(quota_caps[group]):
            terms = _Terms()
            for instances, m in quota_groups[group]:
                terms.add(m, instances)
            _add_row(
                prob, f"quota_{_safe(str(group))}", terms, pulp.LpConstraintLE, quota_caps[group]
            )
    if inp.budget_usd is not None:
        _add_row(prob, "budget", cost, pulp.LpConstraintLE, inp.budget_usd)
    if inp.must_use_local:
        local = [model.pieces[i] for i, k in zip(ids, cands["kind"], strict=True) if k == "local"]
        _add_row(prob, "use_local", _Terms().add_each(local, 1), pulp.LpConstraintGE, 1)
    prob.setObjective(cost.expression())


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in name)


class BulkHiGHS(pulp.HiGHS):
    """PuLP's HiGHS interface, loading the model into HiGHS with one call per kind of data.

    PuLP adds columns, integrality marks and rows one call at a time; on the parallel model's
    thousands of integer variables those calls took longer than the solve itself.  HiGHS receives
    the same model: columns in PuLP's order (sorted by name) with the same costs and bounds, rows
    in insertion order with their non-zero coefficients.  Solving and reading back are PuLP's.
    """

    def buildSolverModel(self, lp: pulp.LpProblem) -> None:
        import highspy
        import numpy as np

        inf = highspy.kHighsInf
        sign = -1 if lp.sense == pulp.LpMaximize else 1
        variables = lp.variables()
        for index, var in enumerate(variables):
            var.index = index
        highs = lp.solverModel
        if variables:
            highs.addCols(
                len(variables),
                np.array([sign * lp.objective.get(v, 0.0) for v in variables], dtype=np.float64),
                np.array(
                    [-inf if v.lowBound is None else v.lowBound for v in variables],
                    dtype=np.float64,
                ),
                np.array(
                    [inf if v.upBound is None else v.upBound for v in variables], dtype=np.float64
                ),
                0,
                np.zeros(len(variables), dtype=np.int32),
                np.zeros(0, dtype=np.int32),
                np.zeros(0, dtype=np.float64),
            )
            integers = [v.index for v in variables if v.cat == pulp.LpInteger] if self.mip else []
            if integers:
                highs.changeColsIntegrality(
                    len(integers),
                    np.array(integers, dtype=np.int32),
                    np.full(len(integers), int(highspy.HighsVarType.kInteger), dtype=np.uint8),
                )
        starts: list[int] = []
        columns: list[int] = []
        values: list[float] = []
        lower: list[float] = []
        upper: list[float] = []
        for index, row in enumerate(lp._constraints.values()):
            row.index = index
            starts.append(len(columns))
            for var, coefficient in row.items():
                if coefficient != 0:
                    columns.append(var.index)
                    values.append(coefficient)
            lb, ub = row.getLb(), row.getUb()
            lower.append(-inf if lb is None else lb)
            upper.append(inf if ub is None else ub)
        if starts:
            highs.addRows(
                len(starts),
                np.array(lower, dtype=np.float64),
                np.array(upper, dtype=np.float64),
                len(columns),
                np.array(starts, dtype=np.int32),
                np.array(columns, dtype=np.int32),
                np.array(values, dtype=np.float64),
            )


def default_solver(time_limit_s: float | None = 60.0) -> Any:
    """HiGHS when installed (pip highspy), CBC (bundled with PuLP) otherwise."""
    highs = BulkHiGHS(msg=False, timeLimit=time_limit_s)
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
