"""A quote never fails once one plan exists (issue 15): a variant the solver gives up on is left
out and named; the plans that were solved stand."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from planner.errors import InfeasibleError, PlannerError
from planner.optimize.program import LinearProgram
from planner.optimize.solvers import HighsSolver, SolveResult, SolveStatus
from planner.quoting.request import QuoteRequest
from planner.quoting.service import quote


class GivesUpAfter(HighsSolver):
    """HiGHS for the first ``solves`` programs, then a solver stopped at its limit with no plan,
    as HiGHS reports a hard MILP it could not finish (passed in as the quote's solver)."""

    def __init__(self, solves: int) -> None:
        super().__init__()
        self.left = solves

    def solve(self, program: LinearProgram, initial: Sequence[float] | None = None) -> SolveResult:
        if self.left <= 0:
            return SolveResult(SolveStatus.NOT_SOLVED, self.label, (), None, 60.0)
        self.left -= 1
        return super().solve(program, initial)


def test_variants_the_solver_gives_up_on_are_left_out_and_named() -> None:
    request = QuoteRequest(workload="gpt2-xl-finetune", deadline_hours=24.0)
    full = quote(request).plans
    result = quote(request, solver=GivesUpAfter(1))
    assert [p.label for p in result.plans] == ["cheapest"]
    assert result.plans[0].total_cost_usd == pytest.approx(full[0].total_cost_usd, rel=1e-4)
    assert result.notes, "the left-out variants are not named"
    assert all("left out" in n and "'not solved'" in n for n in result.notes)
    assert any(n.startswith("cheapest without spot:") for n in result.notes)
    assert result.to_dict()["notes"] == list(result.notes)


def test_with_no_plan_at_all_the_solver_outcome_is_the_error() -> None:
    with pytest.raises(PlannerError) as e:
        quote(
            QuoteRequest(workload="gpt2-xl-finetune", deadline_hours=24.0), solver=GivesUpAfter(0)
        )
    assert not isinstance(e.value, InfeasibleError)  # not "no plan exists": the solver gave up
    assert "'not solved'" in str(e.value) and "time limit" in str(e.value)
