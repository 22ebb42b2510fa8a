"""Optimizers: the quote MILP (model, candidates, plans, spot) and the budget MILP.

Only this package imports PuLP.
"""
