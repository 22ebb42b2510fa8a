"""A mixed-integer linear program in the one form every solver adapter reads.

The quote and budget models are built here, not in a modelling library's objects, so that the
models do not depend on any one library's API (PuLP 3 and PuLP 4 differ in every constructor) and
a solver receives whole arrays at once::

    minimise    sum_j cost_j x_j + objective_constant
    subject to  row_lower_i <= sum_j A_ij x_j <= row_upper_i     for every row i
                lower_j <= x_j <= upper_j                        for every column j
                x_j integer                                      for j with integer_j

Columns are numbered in the order they are added; rows keep their insertion order and names.
Building is pure: nothing is solved, and only the standard library is used (numpy loads when
:meth:`LinearProgram.violation` checks a solution).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

INF = math.inf


class Terms:
    """A linear expression under construction: column -> coefficient, plus a constant.

    Coefficients keep first-use order; zero coefficients are skipped.
    """

    __slots__ = ("coefficients", "constant")

    def __init__(self, constant: float = 0.0) -> None:
        self.coefficients: dict[int, float] = {}
        self.constant = constant

    def add(self, column: int, coefficient: float) -> Terms:
        if coefficient != 0:
            self.coefficients[column] = self.coefficients.get(column, 0.0) + coefficient
        return self

    def add_each(self, columns: Iterable[int], coefficient: float) -> Terms:
        for column in columns:
            self.add(column, coefficient)
        return self

    def copy(self) -> Terms:
        other = Terms(self.constant)
        other.coefficients = dict(self.coefficients)
        return other


class LinearProgram:
    """The program of the module docstring, built column by column and row by row."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.column_names: list[str] = []
        self.cost: list[float] = []
        self.lower: list[float] = []
        self.upper: list[float] = []
        self.integer: list[bool] = []
        self.row_names: list[str] = []
        self.row_lower: list[float] = []
        self.row_upper: list[float] = []
        self.row_starts: list[int] = []
        self.row_columns: list[int] = []
        self.row_values: list[float] = []
        self.objective_constant = 0.0

    @property
    def num_columns(self) -> int:
        return len(self.cost)

    @property
    def num_rows(self) -> int:
        return len(self.row_names)

    def add_variable(
        self, name: str, lower: float = 0.0, upper: float = INF, *, integer: bool = False
    ) -> int:
        """Add a column with zero cost; returns its index."""
        if not lower <= upper:
            raise ValueError(f"variable {name}: lower bound {lower} above upper bound {upper}")
        self.column_names.append(name)
        self.cost.append(0.0)
        self.lower.append(float(lower))
        self.upper.append(float(upper))
        self.integer.append(integer)
        return len(self.cost) - 1

    def add_row(self, name: str, terms: Terms, *, lower: float = -INF, upper: float = INF) -> None:
        """Add ``lower <= terms <= upper``; the constant of ``terms`` moves to the bounds."""
        self.row_names.append(name)
        self.row_starts.append(len(self.row_columns))
        for column, coefficient in terms.coefficients.items():
            if coefficient != 0:
                self.row_columns.append(column)
                self.row_values.append(coefficient)
        self.row_lower.append(lower - terms.constant)
        self.row_upper.append(upper - terms.constant)

    def add_le(self, name: str, terms: Terms, rhs: float) -> None:
        self.add_row(name, terms, upper=rhs)

    def add_ge(self, name: str, terms: Terms, rhs: float) -> None:
        self.add_row(name, terms, lower=rhs)

    def add_eq(self, name: str, terms: Terms, rhs: float) -> None:
        self.add_row(name, terms, lower=rhs, upper=rhs)

    def set_objective(self, terms: Terms) -> None:
        """Minimise ``terms`` (replaces any earlier objective)."""
        self.cost = [0.0] * len(self.cost)
        for column, coefficient in terms.coefficients.items():
            self.cost[column] = coefficient
        self.objective_constant = terms.constant

    def rows(self) -> Iterable[tuple[str, list[tuple[int, float]], float, float]]:
        """Each row as (name, [(column, coefficient)], lower, upper)."""
        ends = [*self.row_starts[1:], len(self.row_columns)]
        for i, name in enumerate(self.row_names):
            start, end = self.row_starts[i], ends[i]
            pairs = list(zip(self.row_columns[start:end], self.row_values[start:end], strict=True))
            yield name, pairs, self.row_lower[i], self.row_upper[i]

    def empty_row_conflict(self, tolerance: float) -> str | None:
        """The name of a row without columns whose bounds leave out 0 by more than ``tolerance``
        (a need nothing can supply: 0 >= 1,000 GPU-hours), which no solution can meet; None when
        there is none.  A solver may drop such a row -- HiGHS calls a model without columns empty
        and optimal -- so the solvers report the program infeasible themselves."""
        ends = [*self.row_starts[1:], len(self.row_columns)]
        for i, name in enumerate(self.row_names):
            if ends[i] == self.row_starts[i] and not (
                self.row_lower[i] <= tolerance and self.row_upper[i] >= -tolerance
            ):
                return name
        return None

    def violation(self, values: Sequence[float]) -> float:
        """The largest amount by which ``values`` break a bound, a row or integrality (0: feasible)."""
        import numpy as np

        x = np.asarray(values, dtype=float)
        if x.shape != (self.num_columns,) or not np.isfinite(x).all():
            return math.inf
        worst = max(
            float(np.max(np.asarray(self.lower) - x, initial=0.0)),
            float(np.max(x - np.asarray(self.upper), initial=0.0)),
        )
        integer = np.asarray(self.integer, dtype=bool)
        if integer.any():
            worst = max(worst, float(np.max(np.abs(x[integer] - np.round(x[integer])))))
        if self.num_rows:
            products = np.asarray(self.row_values) * x[np.asarray(self.row_columns, dtype=int)]
            starts = np.asarray(self.row_starts, dtype=int)
            lengths = np.diff(np.append(starts, len(products)))
            rows = np.repeat(np.arange(self.num_rows), lengths)
            activity = np.bincount(rows, weights=products, minlength=self.num_rows)
            worst = max(
                worst,
                float(np.max(np.asarray(self.row_lower) - activity, initial=0.0)),
                float(np.max(activity - np.asarray(self.row_upper), initial=0.0)),
            )
        return worst

    def objective_value(self, values: tuple[float, ...]) -> float:
        return self.objective_constant + sum(
            c * values[j] for j, c in enumerate(self.cost) if c != 0
        )
