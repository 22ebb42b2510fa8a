"""The solver layer: one small interface, an explicit registry, one status mapping.

Both MILPs (the quote model and the budget model) are built as a
:class:`~planner.optimize.program.LinearProgram` and handed to a :class:`Solver`:

* ``highs`` -- HiGHS through ``highspy``, the default: the program goes in as whole arrays.
* ``cbc`` -- COIN-OR CBC through PuLP: the binary of the ``cbcbox`` wheel (``PuLP[cbc]``) or
  ``cbc`` on ``PATH`` through ``COIN_CMD``, or on PuLP 3 the binary PuLP bundles.  PuLP's problem is
  made from its dictionary form, which PuLP 3 and PuLP 4 both read.

Every solver answers with a :class:`SolveResult` whose :class:`SolveStatus` means the same for
all of them.  One policy reads it (:func:`check_result`): an optimal answer is a success, a
time-limited answer with an integer-feasible solution is returned labelled as such, "infeasible"
raises :class:`~planner.errors.InfeasibleError` and anything else raises
:class:`~planner.errors.PlannerError`.

No solver writes to stdout or stderr.  HiGHS 1.16 prints a banner from the C++ constructor of its
first ``Highs`` object, before any option can be set, so the construction runs with the process's
file descriptors 1 and 2 pointed at the null device (:func:`quiet_native_output`); the solve runs
with HiGHS's ``output_flag`` off.  CBC runs as a subprocess whose output PuLP discards.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
import time
import warnings
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar

from planner.errors import InfeasibleError, MissingDependencyError, PlannerError, UnknownNameError
from planner.optimize.program import LinearProgram

# HiGHS's own default relative MIP gap (option mip_rel_gap).  Set explicitly on every solver so
# their answers agree to the same tolerance: an answer may cost up to this share more than the
# best possible plan.  Tests compare MILP costs with mip_tolerance() below.
DEFAULT_MIP_REL_GAP = 1e-4
DEFAULT_TIME_LIMIT_S = 60.0
# Primal feasibility tolerance of both solvers (HiGHS primal_feasibility_tolerance, CBC's
# default), used for the absolute part of the comparison tolerance.
FEASIBILITY_TOLERANCE = 1e-7


class SolveStatus(str, Enum):
    """Why a solver stopped, in the same words for every solver."""

    OPTIMAL = "optimal"
    FEASIBLE = "feasible (time limit)"  # stopped at a limit holding an integer-feasible answer
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    NOT_SOLVED = "not solved"  # stopped at a limit with no answer, or failed


@dataclass(frozen=True)
class SolveResult:
    """What a solver found: the status, the value of every column, and the objective."""

    status: SolveStatus
    solver: str
    values: tuple[float, ...]  # by column index; empty when there is no solution
    objective: float | None
    seconds: float

    @property
    def has_solution(self) -> bool:
        return self.status in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE)


def mip_tolerance(cost_usd: float, mip_rel_gap: float = DEFAULT_MIP_REL_GAP) -> float:
    """How far two optimal MILP costs of the same plan may differ: the relative MIP gap times the
    cost scale, plus the feasibility tolerance times the scale for the continuous part."""
    scale = max(abs(cost_usd), 1.0)
    return mip_rel_gap * scale + FEASIBILITY_TOLERANCE * scale


_NATIVE_OUTPUT = threading.Lock()


@contextlib.contextmanager
def quiet_native_output() -> Iterator[None]:
    """Point file descriptors 1 and 2 at the null device while native code runs.

    Python's own buffers are flushed first and C's ``stdio`` buffers before the descriptors are
    restored, so nothing written before or after is lost or reordered.
    """
    with _NATIVE_OUTPUT:  # one redirection at a time: threads construct solvers concurrently
        yield from _quiet()


def _quiet() -> Iterator[None]:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    try:
        saved = [os.dup(1), os.dup(2)]
    except OSError:  # no descriptors 1 and 2 (e.g. a Windows GUI process): nothing to silence
        yield
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        _flush_c_stdio()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


def _flush_c_stdio() -> None:
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None) if os.name != "nt" else ctypes.cdll.msvcrt
        libc.fflush(None)


class Solver(ABC):
    """A MILP solver: ``solve`` a :class:`LinearProgram` into a :class:`SolveResult`."""

    name: ClassVar[str]  # the registry key
    label: ClassVar[str]  # how reports name it

    def __init__(
        self,
        time_limit_s: float | None = DEFAULT_TIME_LIMIT_S,
        mip_rel_gap: float = DEFAULT_MIP_REL_GAP,
        threads: int | None = None,
        presolve: bool = True,
    ) -> None:
        if time_limit_s is not None and not time_limit_s > 0:
            raise ValueError(f"time_limit_s must be positive, got {time_limit_s}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be at least 1, got {threads}")
        self.time_limit_s = time_limit_s
        self.mip_rel_gap = mip_rel_gap
        # None: the solver's own default; HiGHS sizes its thread pool with it, CBC ignores it
        self.threads = threads
        # whether the solver presolves the model (HiGHS; CBC ignores it)
        self.presolve = presolve

    @classmethod
    @abstractmethod
    def available(cls) -> bool:
        """Whether this solver can run here."""

    @abstractmethod
    def solve(self, program: LinearProgram, initial: Sequence[float] | None = None) -> SolveResult:
        """Solve ``program``; never raises for a solver outcome, only reports it.

        ``initial`` is a solution to start from (a warm start between related solves).  It is
        used only when it is feasible for ``program`` (:meth:`LinearProgram.violation`): highspy
        1.16, handed an infeasible start, can report a plan that breaks the rows as "optimal".
        A solver may ignore it.
        """

    def __repr__(self) -> str:
        return f"{type(self).__name__}(time_limit_s={self.time_limit_s}, mip_rel_gap={self.mip_rel_gap})"


# ----------------------------------------------------------------------------- HiGHS

# HighsModelStatus names -> our status; limits depend on whether a feasible answer is held.
_HIGHS_FINAL = {
    "kOptimal": SolveStatus.OPTIMAL,
    "kModelEmpty": SolveStatus.OPTIMAL,
    "kInfeasible": SolveStatus.INFEASIBLE,
    # presolve cannot tell which; our models have bounded costs, so no plan exists
    "kUnboundedOrInfeasible": SolveStatus.INFEASIBLE,
    "kUnbounded": SolveStatus.UNBOUNDED,
}
_HIGHS_LIMITS = frozenset(
    {
        "kTimeLimit",
        "kIterationLimit",
        "kSolutionLimit",
        "kInterrupt",
        "kHighsInterrupt",
        "kMemoryLimit",
        "kObjectiveBound",
        "kObjectiveTarget",
    }
)


# Bits of HiGHS's presolve_rule_off option (HiGHS 1.16 lists them with log_dev_level=1).
_HIGHS_PRESOLVE_PROBING = 1 << 15
_HIGHS_PRESOLVE_ENUMERATION = 1 << 16


class HighsSolver(Solver):
    """HiGHS through highspy, the program passed in as arrays."""

    name = "highs"
    label = "HiGHS"

    @classmethod
    def available(cls) -> bool:
        try:
            import highspy  # noqa: F401
        except ImportError:
            return False
        return True

    def solve(self, program: LinearProgram, initial: Sequence[float] | None = None) -> SolveResult:
        import highspy

        settled = _settled(program, self.label)
        if settled is not None:
            return settled
        started = time.perf_counter()
        highs = self._loaded(program, initial, threads=self.threads)
        if (
            highs.run() == highspy.HighsStatus.kError
            and highs.getModelStatus() == highspy.HighsModelStatus.kNotset
            and self.threads is not None
        ):
            # HiGHS's thread pool is one per process: another caller in this process started it
            # with another size, so this run refused the one-thread setting; run in that pool.
            highs = self._loaded(program, initial, threads=None)
            highs.run()
        seconds = time.perf_counter() - started
        status = _highs_status(highs, program.num_columns)
        values: tuple[float, ...] = ()
        if status in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE) and program.num_columns:
            values = tuple(float(x) for x in highs.getSolution().col_value)
        return _result(program, status, self.label, values, seconds)

    def _loaded(
        self, program: LinearProgram, initial: Sequence[float] | None, threads: int | None
    ) -> Any:
        """A configured HiGHS instance holding ``program`` and, when it is feasible, the start
        ``initial``; ``threads`` sizes HiGHS's thread pool (None: the pool as it is)."""
        import highspy

        highs = self._configured()
        if threads is not None:
            highs.setOptionValue("threads", threads)
        _load_into_highs(highs, program)
        if initial is not None and program.violation(initial) <= FEASIBILITY_TOLERANCE:
            start = highspy.HighsSolution()
            start.col_value = [float(v) for v in initial]
            start.value_valid = True
            highs.setSolution(start)
        return highs

    def _configured(self) -> Any:
        """A quiet HiGHS instance with this solver's limits."""
        import highspy

        with quiet_native_output():
            highs = highspy.Highs()
        highs.setOptionValue("output_flag", False)
        if self.time_limit_s is not None:
            highs.setOptionValue("time_limit", float(self.time_limit_s))
        highs.setOptionValue("mip_rel_gap", float(self.mip_rel_gap))
        # RINS and RENS sub-MIPs took 70% of each 36-month budget solve (0.31 of 0.44 s) without
        # improving its incumbent; off, the budget's eight solves take 1.7 s instead of 3.4 s with
        # the same optima, and quotes keep their times and plans (issue 15's note).
        highs.setOptionValue("mip_heuristic_run_rins", False)
        highs.setOptionValue("mip_heuristic_run_rens", False)
        # The feasibility-jump heuristic HiGHS runs before the root LP costs about 2.5 ms a solve
        # whatever the size (a 22-column quote model: 3.2 ms with it, 0.7 without), and every
        # quote model is settled at the root anyway: the 24 h gpt2-xl-finetune quote's five solves
        # 25.6 -> 11.2 ms, the 36- and 60-month budgets' solver seconds 1.76 -> 1.48 and
        # 6.88 -> 6.35; the same optima in 16 quotes and both budgets (2-core machine, highspy 1.16).
        highs.setOptionValue("mip_heuristic_run_feasibility_jump", False)
        # Presolve's probing and enumeration rules took most of each quote solve although every
        # one is settled at the root node in a few LP iterations: per solve, the 24 h
        # gpt2-xl-finetune quote's "fastest within budget" 133 -> 14 ms, the week-long
        # llama-2-7b-pretrain quote's cheapest plan 979 -> 36 ms (its 16 solves 2.8 -> 0.17 s);
        # 50 models from five quotes and the 36-month budget, same optima, the budget's time
        # unchanged (1.92 vs 1.94 s).
        highs.setOptionValue(
            "presolve_rule_off", _HIGHS_PRESOLVE_PROBING | _HIGHS_PRESOLVE_ENUMERATION
        )
        if not self.presolve:
            highs.setOptionValue("presolve", "off")
        return highs


def _load_into_highs(highs: Any, program: LinearProgram) -> None:
    """``program``'s columns (bounds, costs, integrality) and rows, as arrays (infinite bounds
    become HiGHS's infinity)."""
    import highspy
    import numpy as np

    inf = highspy.kHighsInf
    n = program.num_columns
    if n:
        highs.addCols(
            n,
            np.asarray(program.cost, dtype=np.float64),
            np.nan_to_num(np.asarray(program.lower, dtype=np.float64), neginf=-inf),
            np.nan_to_num(np.asarray(program.upper, dtype=np.float64), posinf=inf),
            0,
            np.zeros(n, dtype=np.int32),
            np.zeros(0, dtype=np.int32),
            np.zeros(0, dtype=np.float64),
        )
        integers = [j for j, is_int in enumerate(program.integer) if is_int]
        if integers:
            highs.changeColsIntegrality(
                len(integers),
                np.asarray(integers, dtype=np.int32),
                np.full(len(integers), int(highspy.HighsVarType.kInteger), dtype=np.uint8),
            )
    if program.num_rows:
        highs.addRows(
            program.num_rows,
            np.nan_to_num(np.asarray(program.row_lower, dtype=np.float64), neginf=-inf),
            np.nan_to_num(np.asarray(program.row_upper, dtype=np.float64), posinf=inf),
            len(program.row_columns),
            np.asarray(program.row_starts, dtype=np.int32),
            np.asarray(program.row_columns, dtype=np.int32),
            np.asarray(program.row_values, dtype=np.float64),
        )


def _highs_status(highs: Any, num_columns: int) -> SolveStatus:
    """Our status for a finished run: a limit reached with a feasible answer in hand is
    FEASIBLE (for a model with columns), a limit without one NOT_SOLVED."""
    import highspy

    model_status = highs.getModelStatus().name
    has_primal = (
        highs.getInfo().primal_solution_status == highspy.SolutionStatus.kSolutionStatusFeasible
    )
    if model_status in _HIGHS_FINAL:
        return _HIGHS_FINAL[model_status]
    if model_status in _HIGHS_LIMITS and has_primal and num_columns:
        return SolveStatus.FEASIBLE
    return SolveStatus.NOT_SOLVED


# ----------------------------------------------------------------------------- CBC (PuLP)


class CbcSolver(Solver):
    """COIN-OR CBC through PuLP (3 or 4), as a subprocess PuLP keeps quiet."""

    name = "cbc"
    label = "CBC"

    @classmethod
    def available(cls) -> bool:
        try:
            return _pulp_cbc(DEFAULT_TIME_LIMIT_S, DEFAULT_MIP_REL_GAP) is not None
        except ImportError:
            return False

    def solve(self, program: LinearProgram, initial: Sequence[float] | None = None) -> SolveResult:
        # ``initial`` is ignored: PuLP's CBC warm start goes through a file per solve, and the
        # CBC path is the fallback, not the fast one.
        import pulp

        settled = _settled(program, self.label)
        if settled is not None:
            return settled

        solver = _pulp_cbc(self.time_limit_s, self.mip_rel_gap)
        if solver is None:
            raise MissingDependencyError(
                "the CBC solver is not installed",
                hint="pip install 'PuLP[cbc]' (or put a cbc binary on PATH)",
            )
        started = time.perf_counter()
        variables, problem = pulp.LpProblem.fromDict(_pulp_dict(program))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PuLP 3's notices about PuLP 4
            outcome = problem.solve(solver)
        seconds = time.perf_counter() - started
        status = _pulp_status(problem, outcome)
        values: tuple[float, ...] = ()
        if status in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE):
            values = tuple(
                float(variables[f"x{j}"].value() or 0.0) for j in range(program.num_columns)
            )
        return _result(program, status, self.label, values, seconds)


def _pulp_cbc(time_limit_s: float | None, mip_rel_gap: float) -> Any | None:
    """PuLP's CBC interface for this installation, or None when no CBC binary is found."""
    import pulp

    options: dict[str, Any] = {"msg": False, "timeLimit": time_limit_s, "gapRel": mip_rel_gap}
    coin = pulp.COIN_CMD(**options)
    if coin.available():
        return coin
    with contextlib.suppress(Exception):  # PuLP 3 does not look in the cbcbox wheel itself
        import cbcbox

        coin = pulp.COIN_CMD(path=cbcbox.cbc_bin_path(), **options)
        if coin.available():
            return coin
    legacy = getattr(pulp, "PULP_CBC_CMD", None)  # PuLP 3's bundled binary; gone in PuLP 4
    if legacy is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            bundled = legacy(**options)
        if bundled.available():
            return bundled
    return None


def _pulp_dict(program: LinearProgram) -> dict[str, Any]:
    """The program in PuLP's dictionary form (``LpProblem.toDict``), read by PuLP 3 and 4.

    Columns are named ``x<j>`` and rows ``r<i>`` so PuLP's renaming of characters can never merge
    two names; a ranged row becomes two rows.
    """

    def bound(x: float) -> float | None:
        return x if math.isfinite(x) else None

    variables = [
        {
            "name": f"x{j}",
            "cat": "Integer" if program.integer[j] else "Continuous",
            "lowBound": bound(program.lower[j]),
            "upBound": bound(program.upper[j]),
            "varValue": None,
            "dj": None,
        }
        for j in range(program.num_columns)
    ]
    constraints: list[dict[str, Any]] = []
    for i, (_, pairs, lower, upper) in enumerate(program.rows()):
        coefficients = [{"name": f"x{j}", "value": c} for j, c in pairs]
        # PuLP's constraint is ``expression + constant (sense) 0``
        if math.isfinite(lower) and lower == upper:
            senses = [(0, -lower, "")]
        else:
            senses = []
            if math.isfinite(lower):
                senses.append((1, -lower, "_lo"))
            if math.isfinite(upper):
                senses.append((-1, -upper, "_hi"))
        for sense, constant, suffix in senses:
            constraints.append(
                {
                    "name": f"r{i}{suffix}",
                    "sense": sense,
                    "coefficients": coefficients,
                    "pi": None,
                    "constant": constant,
                }
            )
    return {
        "parameters": {"name": "planner", "sense": 1, "status": 0, "sol_status": 0},
        "objective": {
            "name": "objective",
            "coefficients": [
                {"name": f"x{j}", "value": c} for j, c in enumerate(program.cost) if c != 0
            ],
        },
        "variables": variables,
        "constraints": constraints,
        "sos1": [],
        "sos2": [],
    }


def _pulp_status(problem: Any, outcome: Any) -> SolveStatus:
    """PuLP 4's ``LpSolveStats`` or PuLP 3's status codes, as a :class:`SolveStatus`."""
    if hasattr(outcome, "has_solution"):  # PuLP 4
        name = getattr(outcome.status, "name", str(outcome.status))
        if name in ("Optimal", "GapLimit") and outcome.has_solution:
            return SolveStatus.OPTIMAL
        if name == "Infeasible":
            return SolveStatus.INFEASIBLE
        if name == "Unbounded":
            return SolveStatus.UNBOUNDED
        return SolveStatus.FEASIBLE if outcome.has_solution else SolveStatus.NOT_SOLVED
    # PuLP 3: status 1 Optimal, -1 Infeasible, -2 Unbounded; sol_status 1 optimal,
    # 2 integer feasible (stopped at a limit), -1 infeasible, -2 unbounded, 0 none
    status, sol_status = problem.status, problem.sol_status
    if sol_status == 1 and status == 1:
        return SolveStatus.OPTIMAL
    if sol_status == 2:
        return SolveStatus.FEASIBLE
    if status == -1 or sol_status == -1:
        return SolveStatus.INFEASIBLE
    if status == -2 or sol_status == -2:
        return SolveStatus.UNBOUNDED
    return SolveStatus.NOT_SOLVED


def _settled(program: LinearProgram, solver: str) -> SolveResult | None:
    """The outcome of a program no solver needs to see, or None: a row no column can meet makes
    it infeasible (HiGHS called such a model without columns empty and optimal -- a budget with
    demand and nothing to supply it came back a $0 "optimal" plan -- and CBC "not solved"), and
    one without columns is its constant otherwise (PuLP's CBC fails on an empty model)."""
    if program.empty_row_conflict(FEASIBILITY_TOLERANCE) is not None:
        return SolveResult(SolveStatus.INFEASIBLE, solver, (), None, 0.0)
    if not program.num_columns:
        return SolveResult(SolveStatus.OPTIMAL, solver, (), program.objective_constant, 0.0)
    return None


def _result(
    program: LinearProgram,
    status: SolveStatus,
    solver: str,
    values: tuple[float, ...],
    seconds: float,
) -> SolveResult:
    objective = program.objective_value(values) if values else None
    if status is SolveStatus.OPTIMAL and not program.num_columns:
        objective = program.objective_constant
    return SolveResult(status, solver, values, objective, seconds)


# ----------------------------------------------------------------------------- registry

SOLVERS: dict[str, type[Solver]] = {
    HighsSolver.name: HighsSolver,
    CbcSolver.name: CbcSolver,
}
# the order default_solver tries them in
PREFERENCE: tuple[str, ...] = (HighsSolver.name, CbcSolver.name)


def get_solver(
    name: str,
    time_limit_s: float | None = DEFAULT_TIME_LIMIT_S,
    mip_rel_gap: float = DEFAULT_MIP_REL_GAP,
    threads: int | None = None,
    presolve: bool = True,
) -> Solver:
    """The registered solver ``name``, ready to solve; a clear error when unknown or missing
    (``threads``: None for its default; ``presolve``: whether HiGHS presolves)."""
    key = name.strip().lower()
    if key not in SOLVERS:
        raise UnknownNameError("solver", name, SOLVERS, key_path="solver")
    cls = SOLVERS[key]
    if not cls.available():
        raise MissingDependencyError(
            f"the {key} solver is not installed here",
            hint="pip install highspy" if key == HighsSolver.name else "pip install 'PuLP[cbc]'",
        )
    return cls(
        time_limit_s=time_limit_s, mip_rel_gap=mip_rel_gap, threads=threads, presolve=presolve
    )


def available_solvers() -> tuple[str, ...]:
    return tuple(name for name in PREFERENCE if SOLVERS[name].available())


def default_solver(
    time_limit_s: float | None = DEFAULT_TIME_LIMIT_S,
    mip_rel_gap: float = DEFAULT_MIP_REL_GAP,
    threads: int | None = None,
    presolve: bool = True,
) -> Solver:
    """HiGHS when highspy is installed, CBC otherwise (``threads``: None for its default;
    ``presolve``: whether HiGHS presolves)."""
    for name in PREFERENCE:
        if SOLVERS[name].available():
            return SOLVERS[name](
                time_limit_s=time_limit_s,
                mip_rel_gap=mip_rel_gap,
                threads=threads,
                presolve=presolve,
            )
    raise MissingDependencyError("no MILP solver is installed", hint="pip install highspy")


def check_result(
    result: SolveResult, what: str = "no plan satisfies the constraints"
) -> SolveResult:
    """The one policy: optimal or time-limited feasible answers pass; the rest raise."""
    if result.has_solution:
        return result
    if result.status is SolveStatus.INFEASIBLE:
        raise InfeasibleError(what)
    raise PlannerError(
        f"the {result.solver} solver stopped with status {result.status.value!r} "
        f"after {result.seconds:.1f} s",
        hint="loosen the constraints, raise the time limit, or try another solver",
    )
