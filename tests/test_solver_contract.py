"""One contract, every registered solver (as PuLP's own suite runs each test against each solver).

Each solver must: be installed by the project's own dependencies (``highspy``, ``PuLP[cbc]``);
solve LPs and MILPs with hand-computed optima; say "infeasible" in the shared status words; solve
the quote MILP (sequential and parallel) and the budget MILP to the costs a brute force finds;
and write nothing to stdout or stderr, not even from native code.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from planner.errors import InfeasibleError, MissingDependencyError, UnknownNameError
from planner.optimize.budget import plan_budget
from planner.optimize.model import ModelInputs, build_model, solve
from planner.optimize.plans import read_plan
from planner.optimize.program import LinearProgram, Terms
from planner.optimize.solvers import (
    SOLVERS,
    CbcSolver,
    Solver,
    SolveStatus,
    check_result,
    default_solver,
    get_solver,
)
from tests.test_budget import brute_force, small_spec
from tests.test_optimize_model import (
    SIGMA,
    START,
    TAU,
    assert_same_cost,
    brute_parallel,
    brute_sequential,
    cands_frame,
)

REPO = Path(__file__).resolve().parent.parent
NAMES = sorted(SOLVERS)


@pytest.fixture(params=NAMES)
def solver_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_every_registered_solver_is_installed_by_the_project(solver_name: str) -> None:
    # pyproject asks for highspy and PuLP[cbc] (the cbcbox wheel), so none may be missing
    assert SOLVERS[solver_name].available(), solver_name


def test_lp_with_a_ranged_row_an_equality_and_a_constant(solver_name: str) -> None:
    # min 5 - x - 2y  s.t.  1 <= x + y <= 4,  x - y = 1,  x, y >= 0
    # x = y + 1, so 2y + 1 <= 4 -> y = 1.5, x = 2.5, objective 5 - 2.5 - 3 = -0.5
    p = LinearProgram("lp")
    x, y = p.add_variable("x"), p.add_variable("y")
    p.add_row("range", Terms().add(x, 1).add(y, 1), lower=1, upper=4)
    p.add_eq("tie", Terms().add(x, 1).add(y, -1), 1)
    p.set_objective(Terms(5.0).add(x, -1).add(y, -2))
    result = get_solver(solver_name).solve(p)
    assert result.status is SolveStatus.OPTIMAL
    assert result.values == pytest.approx((2.5, 1.5), abs=1e-6)
    assert result.objective == pytest.approx(-0.5, abs=1e-6)


def _cover_mip() -> LinearProgram:
    """min 3a + 5b  s.t.  2a + 4b >= 7,  a, b in {0..10}: the integer optimum is b = 2 at 10."""
    p = LinearProgram("mip")
    a = p.add_variable("a", 0, 10, integer=True)
    b = p.add_variable("b", 0, 10, integer=True)
    p.add_ge("cover", Terms().add(a, 2).add(b, 4), 7)
    p.set_objective(Terms().add(a, 3).add(b, 5))
    return p


def test_milp_takes_the_integer_optimum_not_the_relaxation(solver_name: str) -> None:
    # min 3a + 5b  s.t.  2a + 4b >= 7,  a, b in {0..10}
    # relaxation: a = 3.5 (cost 10.5) or b = 1.75 (8.75); integers: b = 2 costs 10, a = 2, b = 1
    # costs 11, a = 4 costs 12, so the optimum is b = 2 at 10.
    p = _cover_mip()
    result = get_solver(solver_name).solve(p)
    assert result.status is SolveStatus.OPTIMAL
    assert result.values == pytest.approx((0.0, 2.0), abs=1e-6)
    assert result.objective == pytest.approx(10.0, abs=1e-6)


@pytest.mark.parametrize(
    "start",
    [(4.0, 0.0), (0.0, 0.0), (0.5, 2.0), (1.0,)],
    ids=["feasible", "breaks-a-row", "fractional", "wrong-length"],
)
def test_a_start_never_changes_the_optimum(solver_name: str, start: tuple[float, ...]) -> None:
    # the MILP above from a feasible start (a = 4 costs 12) and from starts that must be ignored
    p = _cover_mip()
    result = get_solver(solver_name).solve(p, start)
    assert result.status is SolveStatus.OPTIMAL
    assert result.values == pytest.approx((0.0, 2.0), abs=1e-6)


def test_violation_measures_bounds_rows_and_integrality() -> None:
    p = LinearProgram("v")
    a = p.add_variable("a", 0, 10, integer=True)
    b = p.add_variable("b", 0, 10, integer=True)
    p.add_ge("cover", Terms().add(a, 2).add(b, 4), 7)
    p.add_row("no_terms", Terms(), lower=-1, upper=1)
    assert p.violation((0.0, 2.0)) == 0.0
    assert p.violation((0.0, 0.0)) == pytest.approx(7.0)  # the cover row, short by 7
    assert p.violation((0.5, 2.0)) == pytest.approx(0.5)  # a is not whole
    assert p.violation((11.0, 0.0)) == pytest.approx(1.0)  # a above its bound
    assert math.isinf(p.violation((1.0,)))


def test_infeasible_is_reported_in_the_shared_words(solver_name: str) -> None:
    p = LinearProgram("infeasible")
    x = p.add_variable("x", 0, 10, integer=True)
    p.add_ge("at_least_2", Terms().add(x, 1), 2)
    p.add_le("at_most_1", Terms().add(x, 1), 1)
    result = get_solver(solver_name).solve(p)
    assert result.status is SolveStatus.INFEASIBLE and not result.has_solution
    with pytest.raises(InfeasibleError):
        check_result(result)


def _assert_sequential_matches_brute_force(solver: Solver | None) -> None:
    """Owned GPUs cheap but slow, cloud fast but dear, a third offer in between: at four deadlines
    the quote model solved by ``solver`` (None: the quote's default) costs what a brute force does."""
    df = cands_frame(
        [
            {"kind": "local", "price_usd_per_hour": 2.0, "job_hours": 40.0},
            {"price_usd_per_hour": 40.0, "job_hours": 10.0},
            {"price_usd_per_hour": 25.0, "job_hours": 18.0, "wall_factor": 1.0},
        ]
    )
    for deadline in (12.0, 19.0, 25.0, 60.0):
        inputs = ModelInputs(
            deadline_hours=deadline, switch_hours=TAU, switch_usd=SIGMA, startup_hours=START
        )
        solution = solve(build_model(df, inputs), solver)
        got = read_plan(df, inputs, solution, "t").total_cost_usd
        assert_same_cost(got, brute_sequential(df, deadline, None))


def test_quote_sequential_model_matches_brute_force(solver_name: str) -> None:
    _assert_sequential_matches_brute_force(get_solver(solver_name))


def test_quote_parallel_model_matches_brute_force(solver_name: str) -> None:
    df = cands_frame(
        [
            {"price_usd_per_hour": 8.0, "job_hours": 40.0, "max_gangs": 3},
            {"price_usd_per_hour": 30.0, "job_hours": 9.0, "max_gangs": 2},
        ]
    )
    df["quota_group"] = ["g0", "g1"]
    for deadline in (12.0, 30.0):
        inputs = ModelInputs(deadline_hours=deadline, pieces=5, startup_hours=START)
        solution = solve(build_model(df, inputs), get_solver(solver_name))
        got = read_plan(df, inputs, solution, "t").total_cost_usd
        expected = brute_parallel(df, 5, deadline)
        assert math.isfinite(expected)
        assert_same_cost(got, expected)


def test_budget_model_matches_brute_force(solver_name: str) -> None:
    plan = plan_budget(small_spec(), solver=lambda: get_solver(solver_name))
    assert plan.status == "optimal"
    assert plan.solver == SOLVERS[solver_name].label
    assert_same_cost(plan.total_usd, brute_force())


def test_a_solve_writes_nothing_to_stdout_or_stderr(solver_name: str) -> None:
    # native code writes to file descriptors 1 and 2 directly, so only a subprocess can tell
    code = (
        "from planner.optimize.program import LinearProgram, Terms\n"
        "from planner.optimize.solvers import get_solver\n"
        "p = LinearProgram('q')\n"
        "a = p.add_variable('a', 0, 10, integer=True)\n"
        "p.add_ge('c', Terms().add(a, 2), 3)\n"
        "p.set_objective(Terms().add(a, 1))\n"
        f"for _ in range(2): r = get_solver({solver_name!r}).solve(p)\n"
        "assert r.values == (2.0,), r\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert out.returncode == 0, out.stderr
    assert (out.stdout, out.stderr) == ("", "")


def test_highs_solves_in_a_thread_pool_another_caller_started() -> None:
    # HiGHS has one thread pool per process.  A quote asks for one thread; a program that has
    # already run HiGHS with two makes that request fail, and the solve must still succeed (the
    # optimum b = 2 at 10 of the MILP above).  Only a fresh process has no pool yet.
    code = (
        "import highspy, numpy as np\n"
        "from planner.optimize.program import LinearProgram, Terms\n"
        "from planner.optimize.solvers import HighsSolver, SolveStatus\n"
        "h = highspy.Highs(); h.setOptionValue('output_flag', False)\n"
        "h.setOptionValue('threads', 2)\n"
        "h.addVar(0.0, 1.0); h.changeColIntegrality(0, highspy.HighsVarType.kInteger)\n"
        "assert h.run() == highspy.HighsStatus.kOk\n"
        "p = LinearProgram('mip')\n"
        "a = p.add_variable('a', 0, 10, integer=True)\n"
        "b = p.add_variable('b', 0, 10, integer=True)\n"
        "p.add_ge('cover', Terms().add(a, 2).add(b, 4), 7)\n"
        "p.set_objective(Terms().add(a, 3).add(b, 5))\n"
        "r = HighsSolver(threads=1).solve(p)\n"
        "assert r.status is SolveStatus.OPTIMAL and r.values == (0.0, 2.0), r\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert out.returncode == 0, out.stderr


def test_unknown_solver_name_suggests_the_registered_ones() -> None:
    with pytest.raises(UnknownNameError) as e:
        get_solver("hihgs")
    assert "did you mean highs?" in str(e.value)


def test_default_solver_prefers_highs() -> None:
    assert default_solver().name == "highs"


def test_a_missing_solver_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # the installation check is the registry's class method; a class whose check fails stands in
    class Absent(CbcSolver):
        @classmethod
        def available(cls) -> bool:
            return False

    monkeypatch.setitem(SOLVERS, "cbc", Absent)
    with pytest.raises(MissingDependencyError) as e:
        get_solver("cbc")
    assert "PuLP[cbc]" in str(e.value)


@pytest.mark.parametrize(
    "args",
    [
        ["quote", "--workload", "gpt2-xl-finetune", "--deadline", "24h", "--format", "json"],
        ["budget", "scenarios/budgets/2027-ml-platform.yaml", "--format", "json"],
    ],
    ids=["quote", "budget"],
)
def test_cli_json_on_stdout_is_only_the_document(args: list[str]) -> None:
    env = {**os.environ, "PYTHONWARNINGS": "default"}
    out = subprocess.run(
        [sys.executable, "-m", "planner", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    document = json.loads(out.stdout)  # fails on any banner or log line before or after
    assert isinstance(document, dict) and document
    assert "HiGHS" not in out.stderr and "Running" not in out.stderr
    # stderr carries only the planner's own warnings (stale prices), one line each
    assert all(line.startswith("warning: ") for line in out.stderr.splitlines()), out.stderr


def test_the_quote_on_cbc_matches_highs_plan_for_plan() -> None:
    # the CBC fallback of the whole quote path, named as the CLI's --solver names it
    from planner.api import QuoteRequest, quote

    request = QuoteRequest(workload="gpt2-xl-finetune", deadline_hours=24.0)
    highs = quote(request, solver="highs").plans
    cbc = quote(request, solver="cbc").plans
    assert [p.label for p in cbc] == [p.label for p in highs]
    for a, b in zip(cbc, highs, strict=True):
        assert_same_cost(a.total_cost_usd, b.total_cost_usd)
    assert all(p.solve_status == "optimal" for p in cbc)


def test_budget_api_takes_a_solver_name() -> None:
    from planner.api import budget

    # A short time limit: the cbcbox 2.929 build PuLP 4 installs needs over 60 s to prove the
    # "all reserved" strategy optimal (2.935, on PuLP 3, under a second); the mix itself solves to
    # optimality in well under a second on both, and is what is compared.
    report = budget("2027-ml-platform", sensitivity=False, solver="cbc", time_limit_s=2.0)
    assert report.plan.solver == "CBC" and report.plan.status == "optimal"
    reference = budget("2027-ml-platform", sensitivity=False, solver="highs").plan.total_usd
    assert_same_cost(report.plan.total_usd, reference)
    with pytest.raises(UnknownNameError):
        budget("2027-ml-platform", sensitivity=False, solver="gurobi")


def test_concurrent_solves_silence_the_banner_and_leave_stdout_working() -> None:
    # the budget solves its sensitivity cases on threads: every HiGHS construction redirects the
    # process's descriptors 1 and 2, so two at once must not leave stdout pointing at /dev/null
    code = (
        "from concurrent.futures import ThreadPoolExecutor\n"
        "from planner.optimize.program import LinearProgram, Terms\n"
        "from planner.optimize.solvers import get_solver\n"
        "def one(k):\n"
        "    p = LinearProgram('q')\n"
        "    a = p.add_variable('a', 0, 100, integer=True)\n"
        "    p.add_ge('c', Terms().add(a, 2), k)\n"
        "    p.set_objective(Terms().add(a, 1))\n"
        "    return get_solver('highs').solve(p).values[0]\n"
        "with ThreadPoolExecutor(4) as pool:\n"
        "    got = list(pool.map(one, range(1, 161)))\n"
        "assert got == [float(-(-k // 2)) for k in range(1, 161)], got\n"
        "print('stdout still works')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert out.returncode == 0, out.stderr
    assert (out.stdout, out.stderr) == ("stdout still works\n", "")


def test_the_quote_solver_skips_presolve_and_keeps_the_optimum() -> None:
    """Quote models are solved on one thread without presolve (model.QUOTE_SOLVER_PRESOLVE): HiGHS
    is told so, and the integer optimum and the quote model's brute-force cost are unchanged."""
    from planner.optimize.model import QUOTE_SOLVER_PRESOLVE, QUOTE_SOLVER_THREADS
    from planner.optimize.solvers import HighsSolver

    assert QUOTE_SOLVER_PRESOLVE is False
    solver = HighsSolver(threads=QUOTE_SOLVER_THREADS, presolve=QUOTE_SOLVER_PRESOLVE)

    def presolve_option(s: HighsSolver) -> str:
        value = s._configured().getOptionValue("presolve")
        return str(value[1] if isinstance(value, tuple) else value)  # highspy 1.16: (status, value)

    assert presolve_option(solver) == "off"
    assert presolve_option(HighsSolver()) == "choose"
    p = _cover_mip()
    result = solver.solve(p)
    assert result.status is SolveStatus.OPTIMAL
    assert result.values == pytest.approx((0.0, 2.0), abs=1e-6)
    _assert_sequential_matches_brute_force(None)  # the quote's default solver


def test_a_named_solver_takes_the_settings_it_is_given() -> None:
    tuned = get_solver("highs", threads=1, presolve=False)
    assert (tuned.threads, tuned.presolve) == (1, False)
    plain = get_solver("highs")
    assert (plain.threads, plain.presolve) == (None, True)


def test_a_quote_given_a_solver_name_solves_with_the_quote_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the CLI names its solver (--solver highs); its quote must still run single-threaded without
    # presolve, the settings quote models are tuned for (planner.optimize.model): with HiGHS's
    # presolve on and RENS off, a sweep's "fastest within budget" probes took 2.5 s each to prove
    # infeasible (25 s a quote) against 0.01 s
    import planner.quoting.service as service
    from planner.api import Planner
    from planner.optimize.model import QUOTE_SOLVER_PRESOLVE, QUOTE_SOLVER_THREADS

    seen: list[Solver | None] = []
    real = service.quote

    def spy(req, solver=None, **kwargs):
        seen.append(solver)
        return real(req, solver=solver, **kwargs)

    monkeypatch.setattr(service, "quote", spy)
    Planner().quote(workload="gpt2-finetune", deadline_hours=24, solver="highs", top=1)
    (used,) = seen
    assert used is not None
    assert (used.threads, used.presolve) == (QUOTE_SOLVER_THREADS, QUOTE_SOLVER_PRESOLVE)
