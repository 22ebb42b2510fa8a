"""Plans: solve the quote model for meaningfully different goals and read the answers back.

Variants, in order: the cheapest plan; the cheapest without spot risk; the fastest within a
budget (the user's, else 25% above the cheapest); the cheapest on owned hardware; then the
cheapest on each GPU model not used so far.  Identical plans are shown once.

Risk is a constraint: every plan meets its deadline with at least the request's confidence (90% by
default) under the spot model of :mod:`planner.optimize.spot`.  The model reserves, as slack before
the deadline, what each spot phase's interruptions may cost at that confidence (each spot gang of a
parallel plan finishes its pieces with it); :func:`solve_plan` checks the plan's real chance and
tightens the per-phase share until it holds.  The cheapest plan at any risk, when cheaper, follows
the recommendations as a labelled risky alternative with its saving.

Infeasibility is an answer: :func:`explain_infeasible` finds the fastest plan and, with a budget,
the best plan the budget buys, and says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import pandas as pd

from planner.errors import InfeasibleError, PlannerError, money_text, shown_amount
from planner.optimize.candidates import STARTUP_HOURS
from planner.optimize.model import (
    ModelInputs,
    Solution,
    build_model,
    confidence_binds,
    solve,
)
from planner.optimize.pruning import prune_dominated
from planner.optimize.solvers import Solver, mip_tolerance
from planner.optimize.spot import DEFAULT_RESTART_HOURS, SpotModel, checkpoint_hours

# Checkpoint egress when a plan switches configuration: AWS internet egress, first 10 TB/month
# tier, $0.09/GB (cost-facts.md s3.5).  Within one provider the move is free; we charge every
# switch, which errs on the side of cost.
EGRESS_USD_PER_GB = 0.09
GIB_TO_GB = 1.073741824
FASTEST_BUDGET_FACTOR = 1.25
# Every recommended plan meets its deadline with at least this chance under the spot model (a
# planning default, changed with --confidence); a cheaper plan below it is shown only as a
# labelled risky alternative.
DEFAULT_CONFIDENCE = 0.9


@dataclass(frozen=True)
class PlanItem:
    """One configuration used by a plan (a phase of a sequential mix, or gangs of a parallel one)."""

    kind: str
    provider: str
    region: str
    instance_type: str
    gpu_model: str
    gpus_per_instance: int
    instances: int
    purchase_option: str
    hours: float  # running hours (instance-gang hours; for parallel plans summed over gangs)
    wall_hours: float  # wall-clock span of this item
    cost_usd: float
    work_fraction: float
    gangs: int = 1
    pieces: int = 0
    memory_per_gpu_gib: float = 0.0
    gpu_memory_gib: float = 0.0
    strategy: str = ""
    price_usd_per_hour: float = 0.0
    spot_slowdown: float = 1.0
    interruption_pct: float = 0.0
    # False: ``interruption_pct`` is the planner's default, the provider publishes no rate for it
    interruption_published: bool = True
    checkpoint_gib: float = 0.0
    efficiency: float = 0.0  # expected model FLOPs utilisation
    price_source: str = ""  # where the price came from (snapshot row source, or hardware file)
    price_as_of: str = ""  # date of the price ("" for owned hardware)

    @property
    def gpus(self) -> int:
        return self.gpus_per_instance * self.instances * self.gangs

    @property
    def gpu_hours(self) -> float:
        return self.gpus_per_instance * self.instances * self.hours


@dataclass(frozen=True)
class Risk:
    """What a plan risks: its share of spot cost, the interruptions it expects, its chance to
    meet the deadline and the slack it keeps."""

    spot_share: float  # share of the cost on spot capacity
    expected_interruptions: float
    p_meet_deadline: float
    slack_hours: float
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    """One plan of a quote: its phases (:class:`PlanItem`), cost, wall-clock and risk."""

    label: str
    items: tuple[PlanItem, ...]
    switch_cost_usd: float
    switches: int
    total_cost_usd: float
    wall_hours: float
    deadline_hours: float
    risk: Risk
    solve_seconds: float = 0.0
    # "optimal" (within the solver's relative MIP gap), or "feasible (time limit)": the solver
    # stopped at its time limit holding this plan, which may not be the cheapest
    solve_status: str = "optimal"
    # shown only as a labelled alternative: its chance to meet the deadline is below the target
    below_confidence: bool = False
    # the money behind the label, kept as numbers so a report shows them in its currency: the cost
    # cap a "fastest within budget" plan was solved under (and that cap as a multiple of the
    # cheapest plan's cost, None when it is the user's budget), and what a risky alternative saves
    # against the cheapest recommended plan
    budget_usd: float | None = None
    budget_factor: float | None = None
    saving_usd: float | None = None

    @property
    def gpu_hours(self) -> float:
        return sum(i.gpu_hours for i in self.items)

    @property
    def cost_per_gpu_hour(self) -> float:
        return self.total_cost_usd / self.gpu_hours if self.gpu_hours else math.nan

    @property
    def memory_per_gpu_gib(self) -> float:
        return max((i.memory_per_gpu_gib for i in self.items), default=0.0)

    @property
    def uses_spot(self) -> bool:
        return any(i.purchase_option == "spot" for i in self.items)

    def signature(self) -> tuple[Any, ...]:
        return tuple(
            sorted(
                (i.provider, i.region, i.instance_type, i.instances, i.purchase_option, i.gangs)
                for i in self.items
            )
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "total_cost_usd": self.total_cost_usd,
            "wall_hours": self.wall_hours,
            "gpu_hours": self.gpu_hours,
            "cost_per_gpu_hour_usd": self.cost_per_gpu_hour,
            "memory_per_gpu_gib": self.memory_per_gpu_gib,
            "switches": self.switches,
            "switch_cost_usd": self.switch_cost_usd,
            "items": [{**asdict(i), "gpus": i.gpus, "gpu_hours": i.gpu_hours} for i in self.items],
            "risk": asdict(self.risk),
            "solve_status": self.solve_status,
            "below_confidence": self.below_confidence,
            "budget_usd": self.budget_usd,
            "saving_usd": self.saving_usd,
        }


@dataclass(frozen=True)
class PlanRequest:
    """What the plans are made for: the deadline, the budget, the pieces, how many plans and
    phases, and the confidence each must meet the deadline with."""

    deadline_hours: float
    budget_usd: float | None = None
    pieces: int = 1
    top: int = 5
    max_phases: int = 3
    # The chance every recommended plan meets the deadline with under the spot model; None: any.
    confidence: float | None = DEFAULT_CONFIDENCE


def _inputs(req: PlanRequest, cands: pd.DataFrame, **changes: Any) -> ModelInputs:
    ckpt_gib = float(cands["checkpoint_gib"].max()) if len(cands) else 0.0
    base = ModelInputs(
        deadline_hours=req.deadline_hours,
        budget_usd=req.budget_usd,
        pieces=req.pieces,
        max_phases=req.max_phases,
        switch_hours=2 * checkpoint_hours(ckpt_gib),  # save, then reload, the checkpoint
        startup_hours=STARTUP_HOURS,
        switch_usd=ckpt_gib * GIB_TO_GB * EGRESS_USD_PER_GB,
        confidence=req.confidence,
    )
    return replace(base, **changes)


def solve_plan(
    cands: pd.DataFrame, inputs: ModelInputs, label: str, solver: Solver | None = None
) -> Plan:
    """Build, solve and read back one plan (raises InfeasibleError)."""
    if cands.empty:
        raise InfeasibleError("no configuration can run this workload")
    if inputs.pieces > 1 and inputs.objective == "time":
        return _fastest_parallel(cands, inputs, label, solver)
    target = inputs.confidence
    if target is None or not (cands["purchase_option"] == "spot").any():
        return _solve_once(cands, replace(inputs, unit_confidence=None), label, solver)
    # Each spot phase (gang) meeting the deadline with ``c`` gives the plan at least ``c`` to the
    # power of their number.  Ask each for the target first, then for the root that the last plan's
    # count of spot phases (gangs) needs; the root for the most the model allows always holds.
    most = inputs.max_phases if inputs.pieces <= 1 else inputs.pieces
    units = 1
    while True:
        plan = _solve_once(
            cands, replace(inputs, unit_confidence=target ** (1.0 / units)), label, solver
        )
        if plan.risk.p_meet_deadline >= target - 1e-12 or units >= most:
            return plan
        spot_units = sum(i.gangs for i in plan.items if i.purchase_option == "spot")
        units = min(max(units + 1, spot_units), most)


def _solve_once(
    cands: pd.DataFrame, inputs: ModelInputs, label: str, solver: Solver | None
) -> Plan:
    if inputs.pieces > 1:
        plan = _solve_without_quotas(cands, inputs, label, solver)
        if plan is not None:
            return plan
    model = build_model(cands, inputs)
    solution = solve(model, solver)
    return read_plan(cands, inputs, solution, label)


def _solve_without_quotas(
    cands: pd.DataFrame, inputs: ModelInputs, label: str, solver: Solver | None
) -> Plan | None:
    """Relax and check: the parallel model without its quotas, exact when its answer fits them.

    Dropping the quota rows (and the gang limits they imply) gives a relaxation: its optimum is
    no dearer.  Without quotas every configuration is free in the sense of
    :func:`~planner.optimize.pruning.prune_dominated`, so equivalent regions and dominated
    gang sizes collapse and the model shrinks from one column pair per row to one per distinct
    efficient configuration.  If the relaxation's plan respects every quota and gang limit of
    the real model, it is optimal there too; if the relaxation has no plan, neither has the real
    model.  Otherwise (a quota binds, or the solver stopped early) None: solve the full model.
    """
    relaxed = cands.assign(quota_instances=math.inf, max_gangs=inputs.pieces)
    kept = prune_dominated(relaxed, by=("kind", "quota_group"), parallel=True, pieces=inputs.pieces)
    try:
        solution = solve(build_model(kept, inputs), solver)
    except InfeasibleError:
        raise  # no plan without quotas: none with them
    except PlannerError:
        return None  # the solver gave up on the relaxation: try the real model
    if solution.status != "optimal":
        return None
    used = list(solution.pieces)
    gangs = pd.Series({i: solution.gangs[i] for i in used}, dtype=float)
    rows = cands.loc[used]
    if (gangs > rows["max_gangs"].astype(float)).any():
        return None
    usage = (gangs * rows["instances"].astype(float)).groupby(rows["quota_group"]).sum()
    caps = rows.groupby("quota_group")["quota_instances"].first().astype(float)
    if (usage > caps[usage.index]).any():
        return None
    return read_plan(cands, inputs, solution, label)


def read_plan(cands: pd.DataFrame, inputs: ModelInputs, sol: Solution, label: str) -> Plan:
    """Turn variable values into a Plan with costs, wall time and risk."""
    items: list[PlanItem] = []
    used = list(sol.hours) if inputs.pieces <= 1 else list(sol.pieces)
    # only the rows the plan uses: converting the whole table cost more than the solve
    rows = _rows_by_label(cands, used)
    if inputs.pieces <= 1:
        for cid, hours in sol.hours.items():
            row = rows[cid]
            items.append(
                _item(
                    row,
                    hours=hours + inputs.startup_hours,  # billed: start-up, then the work
                    wall=hours * float(row["wall_factor"]) + inputs.startup_hours,
                    work=hours / float(row["job_hours"]),
                )
            )
        switches = max(len(items) - 1, 0)
        wall = sum(i.wall_hours for i in items) + inputs.switch_hours * switches
        switch_cost = inputs.switch_usd * switches
    else:
        for cid, n in sol.pieces.items():
            row = rows[cid]
            m = sol.gangs[cid]
            q = float(row["job_hours"]) / inputs.pieces
            span = math.ceil(n / m) * q * float(row["wall_factor"]) + inputs.startup_hours
            billed = n * q + m * inputs.startup_hours
            items.append(
                _item(row, hours=billed, wall=span, work=n / inputs.pieces, gangs=m, pieces=n)
            )
        switches, switch_cost = 0, 0.0
        wall = max((i.wall_hours for i in items), default=0.0)
    total = sum(i.cost_usd for i in items) + switch_cost
    risk = _risk(items, inputs, wall, sequential=inputs.pieces <= 1)
    return Plan(
        label=label,
        items=tuple(sorted(items, key=lambda i: (i.purchase_option != "spot", -i.hours))),
        switch_cost_usd=switch_cost,
        switches=switches,
        total_cost_usd=total,
        wall_hours=wall,
        deadline_hours=inputs.deadline_hours,
        risk=risk,
        solve_seconds=sol.solve_seconds,
        solve_status=sol.status,
    )


def _rows_by_label(cands: pd.DataFrame, labels: Sequence[Any]) -> dict[Any, dict[str, Any]]:
    """The rows of ``cands`` labelled ``labels``, each as a dict keyed by its label, as
    ``cands.loc[labels].to_dict("index")`` gives them, read column by column at the rows'
    positions: ``to_dict`` indexes every column of the table per call and took a quote's five
    plans 5 ms, and the ``loc`` copy of every column of the rows cost them another 1.5 ms."""
    at = cands.index.get_indexer(pd.Index(labels))
    if (at < 0).any():  # as .loc would: a label the table lacks is a KeyError
        raise KeyError([label for label, i in zip(labels, at.tolist(), strict=True) if i < 0])
    columns = [str(c) for c in cands.columns]
    values = zip(*(cands[c].to_numpy()[at].tolist() for c in cands.columns), strict=True)
    return {
        label: dict(zip(columns, row, strict=True))
        for label, row in zip(labels, values, strict=True)
    }


def _item(
    row: Mapping[str, Any],
    *,
    hours: float,
    wall: float,
    work: float,
    gangs: int = 1,
    pieces: int = 0,
) -> PlanItem:
    price = float(row["price_usd_per_hour"])
    return PlanItem(
        kind=str(row["kind"]),
        provider=str(row["provider"]),
        region=str(row["region"]),
        instance_type=str(row["instance_type"]),
        gpu_model=str(row["gpu_model"]),
        gpus_per_instance=int(row["gpus_per_instance"]),
        instances=int(row["instances"]),
        purchase_option=str(row["purchase_option"]),
        hours=hours,
        wall_hours=wall,
        cost_usd=price * hours,
        work_fraction=work,
        gangs=gangs,
        pieces=pieces,
        memory_per_gpu_gib=float(row["memory_per_gpu_gib"]),
        gpu_memory_gib=float(row["gpu_memory_gib"]),
        strategy=str(row["strategy"]),
        price_usd_per_hour=price,
        spot_slowdown=float(row["spot_slowdown"]),
        interruption_pct=float(row["interruption_pct"]),
        interruption_published=bool(row.get("interruption_published", True)),
        checkpoint_gib=float(row["checkpoint_gib"]),
        efficiency=float(row.get("efficiency", 0.0)),
        price_source=str(row.get("source", "")),
        price_as_of=str(row.get("as_of", "")),
    )


# Why an offer has no interruption rate: AWS publishes one per type and region (Spot Instance
# Advisor), which a refresh reads; GCP and Azure publish none per SKU (cost-facts.md s3.3).
_NO_RATE = {
    "aws": "no Spot Advisor rate in these prices; a prices refresh reads it",
    "gcp": "GCP publishes no interruption rates",
    "azure": "Azure publishes no interruption rates",
}


def _risk(items: list[PlanItem], inputs: ModelInputs, wall: float, *, sequential: bool) -> Risk:
    total = sum(i.cost_usd for i in items) or 1.0
    spot = [i for i in items if i.purchase_option == "spot"]
    slack = inputs.deadline_hours - wall
    if not spot:
        return Risk(0.0, 0.0, 1.0 if slack >= -1e-6 else 0.0, slack)
    p_meet, expected = 1.0, 0.0
    notes: list[str] = []
    for item in spot:
        model = SpotModel(
            item.interruption_pct,
            item.instances,
            checkpoint_hours(item.checkpoint_gib),
            DEFAULT_RESTART_HOURS,
        )
        if sequential:
            # running hours of work without interruptions (start-up excluded); the slack left to
            # this item's interruptions is the deadline minus everything else in the plan
            useful = (item.hours - inputs.startup_hours) / item.spot_slowdown
            own_slack = (
                inputs.deadline_hours - (wall - item.wall_hours) - inputs.startup_hours - useful
            )
            p_meet *= model.p_meet(useful, own_slack)
            expected += model.expected_interruptions(useful)
        else:
            # every gang must finish: each works its longest share, interrupted independently
            useful = (item.wall_hours - inputs.startup_hours) / item.spot_slowdown
            own_slack = inputs.deadline_hours - inputs.startup_hours - useful
            p_meet *= model.p_meet(useful, own_slack) ** item.gangs
            expected += model.expected_interruptions(useful) * item.gangs
        rate = f"{item.interruption_pct:g}%/month interruption rate"
        if not item.interruption_published:
            rate += f" (assumed: {_NO_RATE.get(item.provider, 'no published rate for it')})"
        notes.append(
            f"{item.instance_type} spot: {rate}, "
            f"expected slowdown {item.spot_slowdown:.3f}x, checkpoint every "
            f"{model.checkpoint_interval_hours:.1f} h, {model.restart_hours * 60:.0f} min per restart"
        )
    return Risk(sum(i.cost_usd for i in spot) / total, expected, p_meet, slack, tuple(notes))


def _fastest_parallel(
    cands: pd.DataFrame, inputs: ModelInputs, label: str, solver: Solver | None
) -> Plan:
    """Bisect the deadline of the parallel cost model to find its fastest feasible plan."""
    pieces = inputs.pieces
    spans = (cands["job_hours"] / pieces * cands["wall_factor"]).to_numpy()
    lo, hi = float(spans.min()) * 0.999, float(spans.max()) * pieces * 1.001
    best: Plan | None = None
    gave_up: PlannerError | None = None
    for _ in range(40):
        mid = math.sqrt(lo * hi)
        try:
            plan = solve_plan(
                cands, replace(inputs, deadline_hours=mid, objective="cost"), label, solver
            )
        except InfeasibleError:
            lo = mid
            continue
        except PlannerError as e:  # the solver stopped without a plan: treat as none, say so
            gave_up, lo = e, mid
            continue
        best, hi = plan, min(mid, plan.wall_hours * 1.0001)
        if hi / lo < 1.01:
            break
    if best is None:
        if gave_up is not None:
            raise gave_up
        raise InfeasibleError("no plan satisfies the constraints")
    return replace(
        best,
        deadline_hours=inputs.deadline_hours,
        risk=replace(best.risk, slack_hours=inputs.deadline_hours - best.wall_hours),
        # a shorter deadline the solver gave up on may have had a faster plan
        solve_status="feasible (time limit)" if gave_up is not None else best.solve_status,
    )


@dataclass(frozen=True)
class PlanSet:
    """The ranked plans, the cost-versus-deadline frontier (when swept) and notes on the plan
    variants left out."""

    plans: tuple[Plan, ...]
    frontier: tuple[tuple[float, float], ...] = ()
    notes: tuple[str, ...] = field(default=())


class _Variants:
    """The plans found so far (each distinct plan once, in the order found) and notes on the
    variants left out."""

    def __init__(self, cheapest: Plan, solver: Solver | None) -> None:
        self.plans = [cheapest]
        self.notes: list[str] = []
        self._seen = {cheapest.signature()}
        self._solver = solver

    def add(self, plan: Plan | None) -> None:
        """Keep ``plan`` unless it is missing or repeats one already kept."""
        if plan is not None and plan.signature() not in self._seen:
            self._seen.add(plan.signature())
            self.plans.append(plan)

    def attempt(self, sub: pd.DataFrame, inputs: ModelInputs, label: str) -> Plan | None:
        """A variant's plan; None when it has none.  Once the cheapest plan stands, a variant the
        solver gives up on (time limit, no plan found) is noted and left out, never fatal."""
        if sub.empty:
            return None
        try:
            return solve_plan(sub, inputs, label, self._solver)
        except InfeasibleError:
            return None
        except PlannerError as e:
            self.notes.append(f"{label}: left out, {e.message}")
            return None


def make_plans(cands: pd.DataFrame, req: PlanRequest, solver: Solver | None = None) -> PlanSet:
    """The ranked, distinct plans for ``cands`` (raises InfeasibleError with an explanation).

    The variants run in the order of the module docstring; the first ``req.top`` distinct plans
    are ranked by cost, then time, and the risky alternative (if any) follows them.
    """
    base = _inputs(req, cands)
    try:
        cheapest = solve_plan(cands, base, "cheapest", solver)
    except InfeasibleError as e:
        raise _explain_no_confident_plan(cands, req, solver) or explain_infeasible(
            cands, req, solver
        ) from e
    found = _Variants(cheapest, solver)
    if cheapest.uses_spot:
        found.add(
            found.attempt(cands[cands["purchase_option"] != "spot"], base, "cheapest without spot")
        )
    _add_fastest(found, cands, base, req)
    _add_owned_variants(found, cands, base)
    _add_per_gpu(found, cands, base, req.top)
    ranked = sorted(found.plans[: req.top], key=lambda p: (p.total_cost_usd, p.wall_hours))
    try:
        risky = _risky_alternative(cands, req, cheapest, solver)
    except PlannerError as e:
        risky = None
        found.notes.append(f"risky alternative: left out, {e.message}")
    return PlanSet(
        plans=(*ranked, risky) if risky is not None else tuple(ranked), notes=tuple(found.notes)
    )


def _add_fastest(
    found: _Variants, cands: pd.DataFrame, base: ModelInputs, req: PlanRequest
) -> None:
    """The fastest plan within the user's budget, else 25% above the cheapest plan's cost; kept
    only when it meets the deadline."""
    cheapest = found.plans[0]
    budget = (
        req.budget_usd
        if req.budget_usd is not None
        else cheapest.total_cost_usd * FASTEST_BUDGET_FACTOR
    )
    fastest = found.attempt(
        cands, replace(base, objective="time", budget_usd=budget), "fastest within budget"
    )
    if fastest is not None and fastest.wall_hours <= req.deadline_hours + 1e-6:
        found.add(
            replace(
                fastest,
                budget_usd=budget,
                budget_factor=FASTEST_BUDGET_FACTOR if req.budget_usd is None else None,
            )
        )


def _add_owned_variants(found: _Variants, cands: pd.DataFrame, base: ModelInputs) -> None:
    """The other side of owned hardware: the cheapest plan using it when the cheapest does not,
    and the cheapest cloud-only plan when it does."""
    cheapest_is_local = any(i.kind == "local" for i in found.plans[0].items)
    if (cands["kind"] == "local").any() and not cheapest_is_local:
        found.add(
            found.attempt(
                cands, replace(base, must_use_local=True), "cheapest using owned hardware"
            )
        )
    if cheapest_is_local:
        found.add(found.attempt(cands[cands["kind"] != "local"], base, "cheapest cloud-only"))


def _add_per_gpu(found: _Variants, cands: pd.DataFrame, base: ModelInputs, top: int) -> None:
    """The cheapest plan on each GPU model no plan uses yet, cheapest GPU first, until ``top``
    plans are found."""
    used_gpus = {i.gpu_model for p in found.plans for i in p.items}
    for gpu in _gpus_by_cheapest(cands):
        if len(found.plans) >= top:
            break
        if gpu in used_gpus:
            continue
        found.add(found.attempt(cands[cands["gpu_model"] == gpu], base, f"cheapest on {gpu}"))
        used_gpus.add(gpu)


def _risky_alternative(
    cands: pd.DataFrame, req: PlanRequest, cheapest: Plan, solver: Solver | None
) -> Plan | None:
    """The cheapest plan at any risk, when it saves money by falling below the confidence."""
    if req.confidence is None or not (cands["purchase_option"] == "spot").any():
        return None
    most = req.max_phases if req.pieces <= 1 else req.pieces
    strictest = _inputs(req, cands, unit_confidence=req.confidence ** (1.0 / most))
    if not confidence_binds(cands, strictest):
        return None  # the model at the strictest per-phase confidence is the model at any risk
    try:
        any_risk = solve_plan(cands, _inputs(req, cands, confidence=None), "cheapest", solver)
    except InfeasibleError:
        return None
    saving = cheapest.total_cost_usd - any_risk.total_cost_usd
    if any_risk.risk.p_meet_deadline >= req.confidence or saving <= mip_tolerance(
        cheapest.total_cost_usd
    ):
        return None
    return replace(any_risk, label="risky alternative", below_confidence=True, saving_usd=saving)


def _explain_no_confident_plan(
    cands: pd.DataFrame, req: PlanRequest, solver: Solver | None
) -> InfeasibleError | None:
    """When only the confidence rules every plan out: say so, with the best plan at any risk."""
    if req.confidence is None or not (cands["purchase_option"] == "spot").any():
        return None
    try:
        any_risk = solve_plan(cands, _inputs(req, cands, confidence=None), "cheapest", solver)
    except InfeasibleError:
        return None
    return InfeasibleError(
        f"no plan meets the {_deadline(req.deadline_hours)} deadline with {req.confidence:.0%} "
        f"confidence; the cheapest plan at any risk ({_summary(any_risk)}, "
        f"{_usd(any_risk.total_cost_usd)}) has a {any_risk.risk.p_meet_deadline:.1%} chance",
        hint="lower --confidence, relax --deadline or --budget, or allow on-demand capacity",
    )


def _deadline(hours: float) -> str:
    """A deadline as a user types it: ``10 min`` under an hour (was "0.166667 h" for ``10m``),
    else ``24 h``."""
    return f"{round(hours * 60, 1):g} min" if hours < 1 else f"{round(hours, 2):g} h"


def _usd(usd: float) -> str:
    return money_text(usd)  # in the command's --currency


def _gpus_by_cheapest(cands: pd.DataFrame) -> list[str]:
    cost = cands["job_hours"] * cands["price_usd_per_hour"]
    return [str(g) for g in cost.groupby(cands["gpu_model"]).min().sort_values().index]


def explain_infeasible(
    cands: pd.DataFrame, req: PlanRequest, solver: Solver | None = None
) -> InfeasibleError:
    """An InfeasibleError that names the fastest plan and what the budget would buy."""
    if cands.empty:
        return InfeasibleError(
            "no configuration can run this workload",
            hint="see the excluded offers above: a bigger GPU, LoRA/QLoRA or more GPUs may make it fit",
        )
    base = _inputs(req, cands, confidence=None)
    parts = [f"a {_deadline(req.deadline_hours)} deadline cannot be met"]
    try:
        fastest = solve_plan(
            cands, replace(base, objective="time", budget_usd=None), "fastest", solver
        )
        parts.append(
            f"the fastest plan takes {fastest.wall_hours:,.1f} h ({_summary(fastest)}, {_usd(fastest.total_cost_usd)})"
        )
        if req.budget_usd is not None and fastest.total_cost_usd > req.budget_usd:
            parts[0] = (
                f"a {_deadline(req.deadline_hours)} deadline with a {_usd(req.budget_usd)} budget cannot be met"
            )
            within = solve_plan(
                cands, replace(base, objective="time"), "fastest within budget", solver
            )
            parts.append(
                f"with --budget {shown_amount(req.budget_usd):g} the fastest is {within.wall_hours:,.1f} h "
                f"({_summary(within)}, {_usd(within.total_cost_usd)})"
            )
    except InfeasibleError:
        if req.budget_usd is not None:
            parts.append(f"no plan fits a {_usd(req.budget_usd)} budget at any deadline")
    return InfeasibleError(
        "; ".join(parts), hint="relax --deadline or --budget, or allow more providers/GPUs"
    )


def _summary(plan: Plan) -> str:
    return " then ".join(
        f"{i.instances * i.gangs} x {i.instance_type} ({i.gpus} x {i.gpu_model}, {i.purchase_option})"
        for i in plan.items
    )


def frontier(
    cands: pd.DataFrame,
    req: PlanRequest,
    solver: Solver | None = None,
    points: int = 12,
    *,
    on_progress: Callable[[int, int], None] | None = None,
) -> tuple[tuple[float, float], ...]:
    """(deadline_hours, cheapest total cost) pairs from the fastest plan to well past the deadline.

    ``on_progress(done, total)`` is called after each of the ``points`` solves of the sweep.
    """
    base = _inputs(req, cands)
    try:
        fastest = solve_plan(
            cands,
            replace(base, objective="time", budget_usd=None, confidence=None),
            "fastest",
            solver,
        )
    except InfeasibleError:
        return ()
    try:
        relaxed = solve_plan(
            cands, replace(base, deadline_hours=1e7, budget_usd=None), "cheapest", solver
        )
        hi = max(relaxed.wall_hours, req.deadline_hours) * 1.05
    except InfeasibleError:
        hi = req.deadline_hours * 4
    lo = fastest.wall_hours * 1.0001
    out: list[tuple[float, float]] = []
    for k in range(points):
        deadline = lo * (hi / lo) ** (k / max(points - 1, 1))
        try:
            plan = solve_plan(
                cands, replace(base, deadline_hours=deadline, budget_usd=None), "frontier", solver
            )
        except InfeasibleError:
            continue
        finally:
            if on_progress is not None:
                on_progress(k + 1, points)
        if out and plan.total_cost_usd >= out[-1][1] - 1e-6:
            continue  # a later deadline that saves nothing adds no point to the frontier
        out.append((deadline, plan.total_cost_usd))
    return tuple(out)
