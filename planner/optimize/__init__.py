"""Optimizers: the quote MILP (model, candidates, plans, spot) and the budget MILP.

Both are built as a solver-neutral :class:`~planner.optimize.program.LinearProgram` and solved
through the registry in :mod:`planner.optimize.solvers` (HiGHS via highspy, CBC via PuLP).
Only this package imports a solver library.
"""
