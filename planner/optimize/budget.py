"""Budget planning: the cheapest mix of owned servers, commitments, on-demand and spot.

Three steps: :func:`build_budget_model` (pure: the MILP and an index from variables back to the
options), :func:`solve_model` (solver passed in, status checked) and :func:`read_plan` (the answer
as frozen dataclasses).  :func:`budget_report` adds the pure strategies and a sensitivity table.

The MILP, for GPU classes ``c``, months ``t = 0..T-1`` and ``H = 730`` hours a month::

    variables
      od[c,t], sp[c,t] >= 0        on-demand and spot GPU-hours
      y[c,k,s] in Z>=0             GPUs committed under commitment k starting in month s
      x[c,b,s] in Z>=0             machines of buy option b ordered in month s (s + lead_b < T)
      z[w,t] >= 0                  GPU-hours of workload w run in month t (its window only)

    minimise  sum od*p_od + sp*p_spot
            + sum y[c,k,s] * p_k * H * term_k                      (full term, even past T)
            + sum x[c,b,s] * (capex_b - residual_b(s) + run_b * months_in_service_b(s))
            + sum owned fleets' running costs over T               (a constant: capex is sunk)

    subject to, for every c, t:
      owned_cap[c,t] + H * sum_{active k,s} y + sum_{in service b,s} x * g_b * H * a_b * u_b
        + od[c,t] + sp[c,t]  >=  D[c,t] + sum_{w in c} z[w,t]            (meet demand)
      sp[c,t] <= share_c * (D[c,t] + sum_{w in c} z[w,t])                (spot cap)
    for every workload w:  sum_t z[w,t] = gpu_hours_w                    (done by its deadline)
    for every buy option:  sum_s x[c,b,s] <= max_machines_b              (when given)
    sum x * capex <= capex_limit                                         (when given)

``g_b`` GPUs per machine, ``a_b`` share of the day available, ``u_b`` utilization; ``run_b`` the
monthly running cost (power at ``u_b``: load draw while working, idle draw the rest; colocation,
support, staff, financing) from :mod:`planner.ownership.costs`; ``residual_b(s)`` the
straight-line book value at the end of the horizon.

The plan's headline reconciles: ``cash out`` (the sum of the monthly rows) ``- book value kept``
(``residual_b`` of the machines bought) ``+ commitment fees due after the horizon = net total``
(the objective).  A purchase whose cash payback (capex over the monthly saving against the
cheapest cloud rate of its class) ends after the horizon is flagged: its saving rests on the book
value kept.
"""

from __future__ import annotations

import datetime
import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from planner.errors import ConfigError, InfeasibleError, is_number, is_whole_number
from planner.optimize.program import LinearProgram, Terms
from planner.optimize.solvers import (
    Solver,
    SolveStatus,
    default_solver,
)
from planner.ownership.costs import annual_cost
from planner.units import HOURS_PER_MONTH

if TYPE_CHECKING:
    # Types only: the budget model takes specs already read; files are read by the caller
    # (planner.api.budget loads the budget file), so importing this module reads no file format.
    from planner.ownership.budget_spec import BudgetSpec, GpuClassPlan
    from planner.ownership.hardware import HardwareSpec

ON_DEMAND = "on-demand"
SPOT = "spot"
RESERVED = "reserved"
BUY = "buy"
ALL_OPTIONS: frozenset[str] = frozenset({ON_DEMAND, SPOT, RESERVED, BUY})

# Pure strategies shown next to the mix.  "all owned" may use on-demand before the first
# delivery (nothing can be owned earlier); existing fleets count in every strategy.
PURE_STRATEGIES: dict[str, frozenset[str]] = {
    "all on-demand": frozenset({ON_DEMAND}),
    "all reserved": frozenset({RESERVED}),
    "all owned": frozenset({BUY}),
}


# ----------------------------------------------------------------------------- build


def _var(
    prob: LinearProgram, name: str, upper: float | None = None, *, integer: bool = False
) -> int:
    """A non-negative column (no upper bound when ``upper`` is None)."""
    return prob.add_variable(name, 0.0, math.inf if upper is None else upper, integer=integer)


def _month_label(start: str, t: int) -> str:
    year, month = (int(p) for p in start.split("-"))
    index = year * 12 + month - 1 + t
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def machine_gpu_hours_per_month(hw: HardwareSpec, utilization: float) -> float:
    """Useful GPU-hours one machine gives in a month."""
    return hw.gpus_per_machine * HOURS_PER_MONTH * hw.hours_available_per_day / 24 * utilization


def machine_running_usd_per_month(
    hw: HardwareSpec, *, with_financing: bool = True, utilization: float = 1.0
) -> float:
    """Running cost of one machine for a month (power at ``utilization``, colocation, support,
    staff; financing)."""
    cost = annual_cost(replace(hw, machines=1), utilization)
    return (cost.running_usd + (cost.financing_usd if with_financing else 0.0)) / 12


def residual_value_usd(hw: HardwareSpec, months_in_service: int) -> float:
    """Straight-line book value of one machine after ``months_in_service``."""
    life_months = hw.lifetime_years * 12
    salvage = hw.resale_fraction * hw.capex_usd
    return hw.capex_usd - (hw.capex_usd - salvage) * min(1.0, months_in_service / life_months)


@dataclass(frozen=True)
class _BuyVar:
    cls: int
    option: int
    month: int
    var: int  # column of the program
    cost_usd: float  # per machine: capex - residual + running while in service
    first_month: int  # first month in service
    last_month: int  # last month in service (inclusive, within the horizon)


@dataclass(frozen=True)
class _CommitVar:
    cls: int
    option: int
    month: int
    var: int  # column of the program
    last_month: int  # inclusive, within the horizon


@dataclass
class BudgetModel:
    """The built MILP and the index from its variables back to the budget's options."""

    spec: BudgetSpec
    allowed: frozenset[str]
    problem: LinearProgram
    on_demand: dict[tuple[int, int], int] = field(default_factory=dict)
    spot: dict[tuple[int, int], int] = field(default_factory=dict)
    buys: list[_BuyVar] = field(default_factory=list)
    commitments: list[_CommitVar] = field(default_factory=list)
    workload_hours: dict[tuple[int, int], int] = field(default_factory=dict)
    fixed_cost_usd: float = 0.0  # running costs of fleets already owned


def _owned_capacity(c: GpuClassPlan) -> float:
    return sum(
        machine_gpu_hours_per_month(o.hardware, o.utilization) * o.hardware.machines
        for o in c.owned
    )


def _first_delivery(c: GpuClassPlan) -> int | None:
    return min((b.lead_time_months for b in c.buy), default=None)


def build_budget_model(spec: BudgetSpec, allowed: frozenset[str] = ALL_OPTIONS) -> BudgetModel:
    """The MILP of the module docstring, restricted to the ``allowed`` options.

    Columns are made class by class (market hours, commitments, purchases), then per workload;
    rows follow the columns they bound (a buy option's machine limit), then demand and the spot
    cap per class and month, then the capex limit.  The order fixes column and row numbers, which
    warm starts between related models rely on.
    """
    prob = LinearProgram(f"budget_{spec.name}".replace("-", "_"))
    model = BudgetModel(spec=spec, allowed=allowed, problem=prob)
    objective = Terms()
    capex = Terms()
    for ci, c in enumerate(spec.classes):
        _add_market_columns(model, ci, c, objective)
        peak = max(c.demand_gpu_hours, default=0.0) + sum(
            w.gpu_hours for w in spec.workloads if w.gpu == c.gpu
        )
        if RESERVED in allowed:
            _add_commitment_columns(model, ci, c, peak, objective)
        if BUY in allowed:
            _add_buy_columns(model, ci, c, peak, objective, capex)
        model.fixed_cost_usd += sum(
            machine_running_usd_per_month(
                o.hardware, with_financing=False, utilization=o.utilization
            )
            * o.hardware.machines
            * spec.horizon_months
            for o in c.owned
        )
    _add_workload_columns(model)
    for ci, c in enumerate(spec.classes):
        _add_demand_rows(model, ci, c)
    if spec.capex_limit_usd is not None and capex.coefficients:
        prob.add_le("capex_limit", capex, spec.capex_limit_usd)
    objective.constant += model.fixed_cost_usd
    prob.set_objective(objective)
    return model


def _add_market_columns(model: BudgetModel, ci: int, c: GpuClassPlan, objective: Terms) -> None:
    """On-demand and spot GPU-hours of class ``ci`` per month.  On-demand is also open to "all
    owned" before the first delivery, when nothing can be owned yet."""
    allowed, prob = model.allowed, model.problem
    first_delivery = _first_delivery(c)
    for t in range(model.spec.horizon_months):
        od_ok = c.on_demand_usd_per_gpu_hour is not None and (
            ON_DEMAND in allowed
            or (BUY in allowed and first_delivery is not None and t < first_delivery)
        )
        if od_ok and c.on_demand_usd_per_gpu_hour is not None:
            v = _var(prob, f"od_{ci}_{t}")
            model.on_demand[ci, t] = v
            objective.add(v, c.on_demand_usd_per_gpu_hour)
        if SPOT in allowed and c.spot_usd_per_gpu_hour is not None and c.spot_max_share > 0:
            v = _var(prob, f"sp_{ci}_{t}")
            model.spot[ci, t] = v
            objective.add(v, c.spot_usd_per_gpu_hour)


def _add_commitment_columns(
    model: BudgetModel, ci: int, c: GpuClassPlan, peak: float, objective: Terms
) -> None:
    """GPUs committed per commitment and start month, paid for their full term (even past the
    horizon); never more than the peak monthly need in GPUs, plus one."""
    T, H = model.spec.horizon_months, HOURS_PER_MONTH
    for ki, k in enumerate(c.commitments):
        bound = math.ceil(peak / H) + 1
        for s in range(T):
            v = _var(model.problem, f"y_{ci}_{ki}_{s}", bound, integer=True)
            model.commitments.append(_CommitVar(ci, ki, s, v, min(T, s + k.term_months) - 1))
            objective.add(v, k.usd_per_gpu_hour * H * k.term_months)


def _add_buy_columns(
    model: BudgetModel, ci: int, c: GpuClassPlan, peak: float, objective: Terms, capex: Terms
) -> None:
    """Machines ordered per buy option and month (delivered within the horizon), each costing its
    capex less its residual value plus its running costs while in service; with the option's
    machine limit as a row."""
    T, prob = model.spec.horizon_months, model.problem
    for bi, b in enumerate(c.buy):
        hw = b.hardware
        per_machine = machine_gpu_hours_per_month(hw, b.utilization)
        bound = math.ceil(peak / per_machine) + 1 if per_machine > 0 else 0
        if b.max_machines is not None:
            bound = min(bound, b.max_machines)
        life_months = round(hw.lifetime_years * 12)
        running = machine_running_usd_per_month(hw, utilization=b.utilization)
        bought_here = Terms()
        for s in range(T - b.lead_time_months):
            first = s + b.lead_time_months
            last = min(T, first + life_months) - 1
            in_service = last - first + 1
            cost = hw.capex_usd - residual_value_usd(hw, in_service) + running * in_service
            v = _var(prob, f"x_{ci}_{bi}_{s}", bound, integer=True)
            model.buys.append(_BuyVar(ci, bi, s, v, cost, first, last))
            objective.add(v, cost)
            capex.add(v, hw.capex_usd)
            bought_here.add(v, 1)
        if b.max_machines is not None and bought_here.coefficients:
            prob.add_le(f"max_machines_{ci}_{bi}", bought_here, b.max_machines)


def _add_workload_columns(model: BudgetModel) -> None:
    """GPU-hours of each workload per month of its window, summing to its whole job."""
    for wi, w in enumerate(model.spec.workloads):
        hours = Terms()
        for t in range(w.start_month, w.deadline_month + 1):
            v = _var(model.problem, f"z_{wi}_{t}")
            model.workload_hours[wi, t] = v
            hours.add(v, 1)
        model.problem.add_eq(f"workload_{wi}", hours, w.gpu_hours)


def _add_demand_rows(model: BudgetModel, ci: int, c: GpuClassPlan) -> None:
    """Per month of class ``ci``: supply meets need (base demand plus the workload hours placed
    in the month), and spot stays within its share of the need."""
    spec, prob = model.spec, model.problem
    owned_cap = _owned_capacity(c)
    for t in range(spec.horizon_months):
        need = Terms(c.demand_gpu_hours[t])
        for wi, w in enumerate(spec.workloads):
            if w.gpu == c.gpu and (wi, t) in model.workload_hours:
                need.add(model.workload_hours[wi, t], 1)
        # supply - need >= -owned capacity
        balance = _supply(model, ci, c, t, Terms(-need.constant))
        for column, coefficient in need.coefficients.items():
            balance.add(column, -coefficient)
        prob.add_ge(f"demand_{ci}_{t}", balance, -owned_cap)
        if (ci, t) in model.spot:
            # spot <= share * need
            cap = Terms(-c.spot_max_share * need.constant).add(model.spot[ci, t], 1)
            for column, coefficient in need.coefficients.items():
                cap.add(column, -c.spot_max_share * coefficient)
            prob.add_le(f"spot_cap_{ci}_{t}", cap, 0)


def _supply(model: BudgetModel, ci: int, c: GpuClassPlan, t: int, terms: Terms) -> Terms:
    """``terms`` plus class ``ci``'s GPU-hours in month ``t`` from machines in service, active
    commitments, on-demand and spot."""
    for bv in model.buys:
        if bv.cls == ci and bv.first_month <= t <= bv.last_month:
            option = c.buy[bv.option]
            terms.add(bv.var, machine_gpu_hours_per_month(option.hardware, option.utilization))
    for kv in model.commitments:
        if kv.cls == ci and kv.month <= t <= kv.last_month:
            terms.add(kv.var, HOURS_PER_MONTH)
    for table in (model.on_demand, model.spot):
        if (ci, t) in table:
            terms.add(table[ci, t], 1)
    return terms


# ----------------------------------------------------------------------------- solve


@dataclass(frozen=True)
class SolveOutcome:
    status: str  # "optimal" or "feasible (time limit)"
    seconds: float
    solver: str
    values: tuple[float, ...] = ()  # by column of the model's program


def solve_model(
    model: BudgetModel, solver: Solver, initial: Sequence[float] | None = None
) -> SolveOutcome:
    """Solve ``model``; only an optimal or a time-limited integer-feasible answer is returned.

    ``initial`` (a solution of a model with the same columns) is a warm start, used when it is
    feasible for this one.
    """
    result = solver.solve(model.problem, initial)
    if result.has_solution:
        return SolveOutcome(result.status.value, result.seconds, result.solver, result.values)
    if result.status in (SolveStatus.INFEASIBLE, SolveStatus.UNBOUNDED):
        raise InfeasibleError(
            f"no plan meets demand with the options {', '.join(sorted(model.allowed))}",
            hint=_nearest_feasible(model.spec, model.allowed),
        )
    raise InfeasibleError(
        f"the {result.solver} solver found no plan within {solver.time_limit_s:g} s "
        f"with the options {', '.join(sorted(model.allowed))} ({result.status.value})",
        hint="raise --time-limit, or " + _nearest_feasible(model.spec, model.allowed),
    )


def _nearest_feasible(spec: BudgetSpec, allowed: frozenset[str]) -> str:
    if ON_DEMAND not in allowed:
        return "allow on-demand capacity (it has no lead time and no size limit)"
    missing = [c.gpu for c in spec.classes if c.on_demand_usd_per_gpu_hour is None]
    if missing:
        return (
            f"give on_demand_usd_per_gpu_hour for {', '.join(missing)} so demand can always be met"
        )
    return "raise capex_limit_usd or max_machines, or move workload deadlines later"


# ----------------------------------------------------------------------------- read back


@dataclass(frozen=True)
class MonthPlan:
    month: str
    gpu: str
    demand_gpu_hours: float  # base demand plus workload hours placed in this month
    owned_gpu_hours: float  # capacity of owned machines (existing and bought, in service)
    reserved_gpu_hours: float  # capacity of active commitments
    on_demand_gpu_hours: float
    spot_gpu_hours: float
    machines_ordered: int
    machines_in_service: int  # bought ones
    committed_gpus: int  # active
    cost_usd: float  # cash this month: the sum of the five parts below
    capex_usd: float  # purchase price of machines ordered this month
    owned_running_usd: float  # power, colocation, support, staff (and financing) of owned machines
    committed_usd: float  # fees of active commitments, used or not
    on_demand_usd: float
    spot_usd: float


@dataclass(frozen=True)
class Purchase:
    """Machines of one buy option ordered in one month, and when their cash comes back."""

    gpu: str
    hardware: str
    ordered: str  # month label
    in_service_from: str  # month label
    machines: int
    capex_usd: float  # all the machines
    book_value_usd: float  # what they are still worth at the end of the horizon
    months_in_service: int  # within the horizon
    payback_months: float | None  # cash, from delivery; None: never (no cheaper cloud to displace)
    paid_back_by: str | None  # month label of the cash payback, None if never
    pays_back_in_horizon: bool

    def to_record(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class BudgetPlan:
    name: str
    start: str
    horizon_months: int
    strategy: str
    status: str
    solver: str
    solve_seconds: float
    total_usd: (
        float  # objective: cash in horizon + commitment fees past the horizon - residual value
    )
    months: tuple[MonthPlan, ...]
    residual_value_usd: float
    commitments_after_horizon_usd: float
    purchases: tuple[Purchase, ...] = ()

    @property
    def cash_out_usd(self) -> float:
        """Cash paid within the horizon: the sum of the monthly rows."""
        return sum(m.cost_usd for m in self.months)

    @property
    def book_value_kept_usd(self) -> float:
        """Book value of the machines bought and still held at the end of the horizon."""
        return self.residual_value_usd

    @property
    def late_purchases(self) -> tuple[Purchase, ...]:
        """Purchases whose cash payback falls after the horizon."""
        return tuple(p for p in self.purchases if not p.pays_back_in_horizon)

    @property
    def machines_bought(self) -> int:
        return sum(m.machines_ordered for m in self.months)

    @property
    def peak_committed_gpus(self) -> int:
        return max((m.committed_gpus for m in self.months), default=0)

    @property
    def on_demand_gpu_hours(self) -> float:
        return sum(m.on_demand_gpu_hours for m in self.months)

    @property
    def spot_gpu_hours(self) -> float:
        return sum(m.spot_gpu_hours for m in self.months)


def _reader(outcome: SolveOutcome) -> Callable[[int | None], float]:
    """The value of a column in the solve, 0 for a missing one and for solver noise."""

    def value(column: int | None) -> float:
        if column is None:
            return 0.0
        x = outcome.values[column]
        return 0.0 if abs(x) < 1e-6 else float(x)  # -1e-12 would print as -0

    return value


def read_plan(
    model: BudgetModel, outcome: SolveOutcome, strategy: str = "optimal mix"
) -> BudgetPlan:
    """The solved model as a month-by-month plan.

    The total is the cash paid within the horizon, plus commitment fees that fall past it, less
    the book value of the machines bought (the objective of the module docstring).
    """
    value = _reader(outcome)
    spec = model.spec
    residual, after = _past_horizon(model, value)
    rows = [
        _month_plan(model, ci, c, t, value)
        for ci, c in enumerate(spec.classes)
        for t in range(spec.horizon_months)
    ]
    total = sum(r.cost_usd for r in rows) + after - residual
    return BudgetPlan(
        name=spec.name,
        start=spec.start,
        horizon_months=spec.horizon_months,
        strategy=strategy,
        status=outcome.status,
        solver=outcome.solver,
        solve_seconds=outcome.seconds,
        total_usd=total,
        months=tuple(rows),
        residual_value_usd=residual,
        commitments_after_horizon_usd=after,
        purchases=_purchases(model, value),
    )


def displaced_usd_per_gpu_hour(c: GpuClassPlan) -> float | None:
    """The cheapest cloud rate an owned GPU-hour of class ``c`` replaces: on-demand or a
    commitment (spot is capped and can be taken back, so it is not counted on); None if the class
    has no cloud price."""
    rates = [k.usd_per_gpu_hour for k in c.commitments]
    if c.on_demand_usd_per_gpu_hour is not None:
        rates.append(c.on_demand_usd_per_gpu_hour)
    return min(rates, default=None)


def _purchases(model: BudgetModel, value: Callable[[int | None], float]) -> tuple[Purchase, ...]:
    """The machines the plan buys, each with its cash payback: capex over the monthly saving of
    its useful GPU-hours at the class's cheapest cloud rate less its running costs."""
    spec, T = model.spec, model.spec.horizon_months
    out = []
    for b in model.buys:
        n = round(value(b.var))
        if n <= 0:
            continue
        c = spec.classes[b.cls]
        option = c.buy[b.option]
        hw = option.hardware
        rate = displaced_usd_per_gpu_hour(c)
        saving = (
            -math.inf
            if rate is None
            else rate * machine_gpu_hours_per_month(hw, option.utilization)
            - machine_running_usd_per_month(hw, utilization=option.utilization)
        )
        payback = hw.capex_usd / saving if saving > 0 else None
        end = None if payback is None else b.first_month + math.ceil(payback - 1e-9) - 1
        out.append(
            Purchase(
                gpu=c.gpu,
                hardware=hw.name,
                ordered=_month_label(spec.start, b.month),
                in_service_from=_month_label(spec.start, b.first_month),
                machines=n,
                capex_usd=n * hw.capex_usd,
                book_value_usd=n * residual_value_usd(hw, b.last_month - b.first_month + 1),
                months_in_service=b.last_month - b.first_month + 1,
                payback_months=payback,
                paid_back_by=None if end is None else _month_label(spec.start, end),
                pays_back_in_horizon=end is not None and end < T,
            )
        )
    return tuple(out)


def _past_horizon(model: BudgetModel, value: Callable[[int | None], float]) -> tuple[float, float]:
    """What the plan leaves behind at the end of the horizon: the book value of the machines
    bought, and the commitment fees still to pay."""
    spec, T = model.spec, model.spec.horizon_months
    residual = 0.0
    after = 0.0
    for b in model.buys:
        n = round(value(b.var))
        hw = spec.classes[b.cls].buy[b.option].hardware
        residual += n * residual_value_usd(hw, b.last_month - b.first_month + 1)
    for k in model.commitments:
        n = round(value(k.var))
        term = spec.classes[k.cls].commitments[k.option]
        after += (
            n * term.usd_per_gpu_hour * HOURS_PER_MONTH * max(0, k.month + term.term_months - T)
        )
    return residual, after


def _month_plan(
    model: BudgetModel, ci: int, c: GpuClassPlan, t: int, value: Callable[[int | None], float]
) -> MonthPlan:
    """Class ``ci`` in month ``t``: where its GPU-hours come from and the cash it costs."""
    H = HOURS_PER_MONTH
    od = value(model.on_demand.get((ci, t)))
    sp = value(model.spot.get((ci, t)))
    workload = sum(
        value(model.workload_hours.get((wi, t)))
        for wi, w in enumerate(model.spec.workloads)
        if w.gpu == c.gpu
    )
    ordered_here = [b for b in model.buys if b.cls == ci and b.month == t]
    in_service = [b for b in model.buys if b.cls == ci and b.first_month <= t <= b.last_month]
    active = [k for k in model.commitments if k.cls == ci and k.month <= t <= k.last_month]
    committed = sum(round(value(k.var)) for k in active)
    owned_cap = _owned_capacity(c) + sum(
        round(value(b.var))
        * machine_gpu_hours_per_month(c.buy[b.option].hardware, c.buy[b.option].utilization)
        for b in in_service
    )
    on_demand_usd = od * (c.on_demand_usd_per_gpu_hour or 0.0)
    spot_usd = sp * (c.spot_usd_per_gpu_hour or 0.0)
    capex_usd = sum(round(value(b.var)) * c.buy[b.option].hardware.capex_usd for b in ordered_here)
    owned_running_usd = sum(
        round(value(b.var))
        * machine_running_usd_per_month(
            c.buy[b.option].hardware, utilization=c.buy[b.option].utilization
        )
        for b in in_service
    ) + sum(
        machine_running_usd_per_month(o.hardware, with_financing=False, utilization=o.utilization)
        * o.hardware.machines
        for o in c.owned
    )
    committed_usd = sum(
        round(value(k.var)) * c.commitments[k.option].usd_per_gpu_hour * H for k in active
    )
    return MonthPlan(
        month=_month_label(model.spec.start, t),
        gpu=c.gpu,
        demand_gpu_hours=c.demand_gpu_hours[t] + workload,
        owned_gpu_hours=owned_cap,
        reserved_gpu_hours=committed * H,
        on_demand_gpu_hours=od,
        spot_gpu_hours=sp,
        machines_ordered=sum(round(value(b.var)) for b in ordered_here),
        machines_in_service=sum(round(value(b.var)) for b in in_service),
        committed_gpus=committed,
        cost_usd=capex_usd + owned_running_usd + committed_usd + on_demand_usd + spot_usd,
        capex_usd=capex_usd,
        owned_running_usd=owned_running_usd,
        committed_usd=committed_usd,
        on_demand_usd=on_demand_usd,
        spot_usd=spot_usd,
    )


SolverFactory = Callable[[], Solver]


def plan_budget(
    spec: BudgetSpec,
    *,
    allowed: frozenset[str] = ALL_OPTIONS,
    strategy: str = "optimal mix",
    solver: SolverFactory | None = None,
) -> BudgetPlan:
    """Build, solve and read back in one call."""
    return _plan_and_values(spec, allowed=allowed, strategy=strategy, solver=solver)[0]


def _plan_and_values(
    spec: BudgetSpec,
    *,
    allowed: frozenset[str] = ALL_OPTIONS,
    strategy: str = "optimal mix",
    solver: SolverFactory | None = None,
    initial: Sequence[float] | None = None,
) -> tuple[BudgetPlan, tuple[float, ...]]:
    model = build_budget_model(spec, allowed)
    if initial is not None and len(initial) != model.problem.num_columns:
        initial = None  # another model's columns
    outcome = solve_model(model, (solver or default_solver)(), initial)
    return read_plan(model, outcome, strategy), outcome.values


# ----------------------------------------------------------------------------- report


@dataclass(frozen=True)
class StrategyResult:
    strategy: str
    total_usd: float | None  # None: not possible with the options of the budget file
    note: str = ""


@dataclass(frozen=True)
class SensitivityRow:
    parameter: str
    value: str
    total_usd: float
    machines_bought: int
    peak_committed_gpus: int
    on_demand_gpu_hours: float
    spot_gpu_hours: float


@dataclass(frozen=True)
class BudgetReport:
    plan: BudgetPlan
    strategies: tuple[StrategyResult, ...]
    sensitivity: tuple[SensitivityRow, ...]
    source: str = ""
    prices_as_of: str = ""  # the budget file's ``prices_as_of`` ("" when it does not say)

    def stale_warnings(self, today: datetime.date | str, max_age_days: int) -> list[str]:
        """Warnings when the budget file's prices are older than ``max_age_days`` on ``today`` (a
        date, a datetime or its ISO text), or carry no date."""
        from planner.catalog import checked_today

        today = checked_today(today)  # was: TypeError for '2026-01-01' or None
        if isinstance(max_age_days, bool) or not is_whole_number(max_age_days) or max_age_days < 0:
            raise ConfigError(
                f"expected a whole number of days >= 0, got {max_age_days!r}",
                key_path="max_age_days",
                hint="e.g. max_age_days=90 (prices older than this are flagged)",
            )
        if not self.prices_as_of:
            return [
                "the budget file does not say when its cloud prices were read: add "
                "prices_as_of: YYYY-MM-DD to it, and check them before relying on the plan"
            ]
        age = (today - datetime.date.fromisoformat(self.prices_as_of)).days
        if age <= max_age_days:
            return []
        return [
            f"the budget file's cloud prices are {age} days old (prices_as_of: "
            f"{self.prices_as_of}); check them against `planner offers` before relying on the plan"
        ]

    def mix_saves_usd(self, s: StrategyResult) -> float | None:
        """What the optimal mix saves against strategy ``s`` (None: ``s`` is not possible)."""
        _check_strategy(s)
        return None if s.total_usd is None else s.total_usd - self.plan.total_usd

    def mix_saves_pct(self, s: StrategyResult) -> float | None:
        """The saving as a percentage of the strategy's total (None: no total to compare with)."""
        _check_strategy(s)
        return None if not s.total_usd else (s.total_usd - self.plan.total_usd) / s.total_usd * 100

    def to_record(self) -> dict[str, Any]:
        plan = self.plan
        best = plan.total_usd
        return {
            "name": plan.name,
            "start": plan.start,
            "horizon_months": plan.horizon_months,
            "status": plan.status,
            "solver": plan.solver,
            "solve_seconds": plan.solve_seconds,
            "total_usd": best,
            "cash_out_usd": plan.cash_out_usd,
            "book_value_kept_usd": plan.book_value_kept_usd,
            "residual_value_usd": plan.residual_value_usd,
            "commitments_after_horizon_usd": plan.commitments_after_horizon_usd,
            "purchases": [p.to_record() for p in plan.purchases],
            "machines_bought": plan.machines_bought,
            "peak_committed_gpus": plan.peak_committed_gpus,
            "strategies": [
                {
                    "strategy": s.strategy,
                    "total_usd": s.total_usd,
                    "mix_saves_usd": self.mix_saves_usd(s),
                    "mix_saves_pct": self.mix_saves_pct(s),
                    "note": s.note,
                }
                for s in self.strategies
            ],
            "months": [m.__dict__.copy() for m in plan.months],
            "sensitivity": [r.__dict__.copy() for r in self.sensitivity],
            "source": self.source,
            "prices_as_of": self.prices_as_of or None,
        }


def _with_utilization(spec: BudgetSpec, utilization: float) -> BudgetSpec:
    """Every buy option at ``utilization``."""
    classes = tuple(
        replace(c, buy=tuple(replace(b, utilization=utilization) for b in c.buy))
        for c in spec.classes
    )
    return replace(spec, classes=classes)


def _with_electricity(spec: BudgetSpec, factor: float) -> BudgetSpec:
    """Electricity price of every bought and owned machine multiplied by ``factor``."""

    def scaled(hw: HardwareSpec) -> HardwareSpec:
        return replace(hw, electricity_usd_per_kwh=hw.electricity_usd_per_kwh * factor)

    classes = tuple(
        replace(
            c,
            buy=tuple(replace(b, hardware=scaled(b.hardware)) for b in c.buy),
            owned=tuple(replace(o, hardware=scaled(o.hardware)) for o in c.owned),
        )
        for c in spec.classes
    )
    return replace(spec, classes=classes)


def _scale_discount(spec: BudgetSpec, factor: float) -> BudgetSpec:
    """Commitment and spot discounts off on-demand multiplied by ``factor`` (prices stay >= 0)."""

    def price(od: float | None, p: float) -> float:
        return p if od is None else max(0.0, od - (od - p) * factor)

    classes = tuple(
        replace(
            c,
            commitments=tuple(
                replace(k, usd_per_gpu_hour=price(c.on_demand_usd_per_gpu_hour, k.usd_per_gpu_hour))
                for k in c.commitments
            ),
            spot_usd_per_gpu_hour=None
            if c.spot_usd_per_gpu_hour is None
            else price(c.on_demand_usd_per_gpu_hour, c.spot_usd_per_gpu_hour),
        )
        for c in spec.classes
    )
    return replace(spec, classes=classes)


def sensitivity_cases(spec: BudgetSpec) -> list[tuple[str, str, BudgetSpec]]:
    """One-at-a-time variations: owned utilization, electricity price, cloud discount."""
    cases: list[tuple[str, str, BudgetSpec]] = []
    for u in (0.5, 0.7, 0.9):
        cases.append(("owned utilization", f"{u:.0%}", _with_utilization(spec, u)))
    for f in (0.5, 2.0):
        cases.append(("electricity price", f"x{f:g}", _with_electricity(spec, f)))
    for f in (0.5, 1.5):
        cases.append(("cloud discount", f"x{f:g}", _scale_discount(spec, f)))
    return cases


def budget_report(
    spec: BudgetSpec,
    *,
    solver: SolverFactory | None = None,
    sensitivity: bool = True,
) -> BudgetReport:
    """The optimal mix, the pure strategies next to it, and (optionally) the sensitivity table.

    The sensitivity cases change costs or capacities, not the columns, so each starts from the
    mix's solution where that is still feasible (a cost-only change): the case that took 10.8 s
    cold in a 60-month plan takes 3.3 s warm, with the same optimum.
    """
    plan, base_values = _plan_and_values(spec, solver=solver)
    strategies = []
    for name, allowed in PURE_STRATEGIES.items():
        note = "on-demand until the first delivery" if name == "all owned" else ""
        try:
            pure = plan_budget(spec, allowed=allowed, strategy=name, solver=solver)
            strategies.append(StrategyResult(name, pure.total_usd, note))
        except InfeasibleError:
            strategies.append(
                StrategyResult(name, None, "not possible with the options in the file")
            )
    strategies.append(StrategyResult("optimal mix", plan.total_usd))
    rows = []
    if sensitivity:
        cases = sensitivity_cases(spec)
        # Independent solves: HiGHS releases the GIL while it runs, so the cases share the cores.
        with ThreadPoolExecutor(max_workers=max(1, min(len(cases), os.cpu_count() or 1))) as pool:
            plans = list(
                pool.map(
                    lambda case: _plan_and_values(case[2], solver=solver, initial=base_values)[0],
                    cases,
                )
            )
        for (parameter, value, _), p in zip(cases, plans, strict=True):
            rows.append(
                SensitivityRow(
                    parameter,
                    value,
                    p.total_usd,
                    p.machines_bought,
                    p.peak_committed_gpus,
                    p.on_demand_gpu_hours,
                    p.spot_gpu_hours,
                )
            )
    return BudgetReport(plan, tuple(strategies), tuple(rows), spec.source, spec.prices_as_of)


def check_time_limit(time_limit_s: float) -> None:
    if not is_number(time_limit_s):
        raise ConfigError(
            f"expected seconds, got {time_limit_s!r}",
            key_path="time_limit_s",
            hint="a number of seconds, e.g. time_limit_s=60 (the default)",
        )
    if not time_limit_s > 0 or math.isinf(time_limit_s):  # NaN fails `> 0`
        raise ConfigError(
            f"time limit must be a positive number of seconds, got {time_limit_s}",
            key_path="time_limit_s",
            hint="e.g. 60 (the default); a solve that reaches it keeps the best plan found",
        )


def _check_strategy(s: object) -> None:
    """A strategy of this report (``report.strategies``), or a ConfigError (was AttributeError
    from inside for None or a name)."""
    if not isinstance(s, StrategyResult):
        raise ConfigError(
            f"expected one of the report's strategies, got {s!r}",
            key_path="s",
            hint="pass an entry of report.strategies, e.g. report.mix_saves_usd(report.strategies[0])",
        )
