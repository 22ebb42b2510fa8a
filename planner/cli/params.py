"""Click parameter types the commands share."""

from __future__ import annotations

import math
from typing import Any

import click


class FiniteFloat(click.FloatRange):
    """A float (optionally in a range) that is a real number: ``nan`` and ``inf`` are refused.

    click's FLOAT and FloatRange accept both (a NaN compares false with every bound), and they
    reached the solver as ``PulpError: Cannot set constraint RHS to NaN/inf values``.
    """

    name = "float"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if isinstance(number, float) and not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number

    def _describe_range(self) -> str:
        if self.min is None and self.max is None:
            return ""  # a plain finite float: nothing to add to the help text
        return super()._describe_range()


def solver_option(func: Any) -> Any:
    """``--solver``: a name from the solver registry (HiGHS by default, CBC as the fallback)."""
    from planner.optimize.solvers import PREFERENCE

    return click.option(
        "--solver",
        type=click.Choice(PREFERENCE),
        default=PREFERENCE[0],
        show_default=True,
        help="MILP solver: HiGHS (highspy) or COIN-OR CBC (through PuLP).",
    )(func)
