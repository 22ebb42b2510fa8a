"""Dominance pruning of the candidate table, before the quote MILP is built.

:func:`prune_dominated` drops the configurations another one of their group beats on everything
the quote model weighs (wall hours, running cost, hourly price, room for more work), so the model
grows with distinct configurations rather than offers; :func:`quota_never_binds` marks the rows
whose quota group can never bind, which may take the work of rows in other groups.  Tests check
on generated cases that pruning never changes either model's optimum.

Pure functions over the candidate table (:data:`planner.optimize.candidates.CANDIDATE_COLUMNS`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd


def prune_dominated(
    cands: pd.DataFrame,
    *,
    by: Sequence[str] = ("kind", "purchase_option", "gpu_model", "provider"),
    parallel: bool = False,
    pieces: int | None = None,
) -> pd.DataFrame:
    """Keep, within each ``by`` group, the configurations no other one dominates.

    ``A`` dominates ``B`` when putting ``A`` in place of ``B`` (or giving ``A`` the share of the
    work ``B`` had, where a plan already uses ``A``) keeps every plan of the quote model feasible
    and no dearer or slower:

    - ``A`` does the whole job in no more wall hours (``job_hours x wall_factor``),
    - for no more running cost (``job_hours x price``),
    - at no higher hourly price: every phase and every gang also pays a billed start-up at its
      hourly price, so a faster configuration with a higher price is not always cheaper,
    - and ``A``'s capacity hours cover its whole job, so extra work always fits on it.

    For the parallel model (``parallel=True``, with the quota group in ``by``) ``A`` also needs no
    more instances per gang, and a gang limit no tighter than its quota allows
    (``max_gangs >= quota_instances // instances``), so ``B``'s gangs fit on ``A`` within the quota.

    Exact ties keep the first in table order.  The groups keep the attributes that plan variants
    constrain on (spot, owned, GPU model, provider).  Tests check on generated cases that pruning
    never changes the optimum of either model.

    With ``pieces`` (the parallel model's ``P``) a first pass works across quota groups.  A group
    whose quota holds ``P`` gangs of its largest configuration (``Q_g >= P x max instances``) can
    never bind: the model has at most ``P`` gangs (``m_c <= n_c``, ``sum n_c = P``).  A row there
    whose own gang limit allows ``P`` gangs and whose capacity covers its job is free.  A free
    configuration takes any other's gangs, whatever their size and group, when it is no slower, no
    dearer to run and no dearer per hour.  So equivalent regions of one instance type collapse to
    the cheapest, and the model grows with distinct configurations, not rows.
    """
    if cands.empty:
        return cands
    if parallel and pieces is not None and "quota_group" in by:
        free = quota_never_binds(cands, pieces)
        if free.any():
            across = [c for c in by if c != "quota_group"]
            cands = cands.loc[_undominated(cands, across, absorbers=free, sizes=False)]
    return cands.loc[_undominated(cands, by, parallel=parallel)]


def quota_never_binds(cands: pd.DataFrame, pieces: int) -> np.ndarray:
    """Rows whose quota group can never bind with ``pieces`` pieces (see :func:`prune_dominated`)."""
    quota = cands["quota_instances"].to_numpy(dtype=float)
    largest = cands.groupby("quota_group", sort=False)["instances"].transform("max")
    return (
        np.asarray(quota >= pieces * largest.to_numpy(dtype=float))
        & (cands["max_gangs"].to_numpy(dtype=float) >= pieces)  # its own gang limit too
        & (
            cands["capacity_hours"].to_numpy(dtype=float)
            >= cands["job_hours"].to_numpy(dtype=float)
        )
    )


def _undominated(
    cands: pd.DataFrame,
    by: Sequence[str],
    *,
    parallel: bool = False,
    absorbers: np.ndarray | None = None,
    sizes: bool = True,
) -> list[Any]:
    """Index labels of the rows no other row of their ``by`` group dominates.

    ``absorbers`` overrides which rows may dominate others; ``sizes=False`` ignores the number of
    instances per gang (for absorbers whose quota never binds).
    """
    job = cands["job_hours"].to_numpy(dtype=float)
    price = cands["price_usd_per_hour"].to_numpy(dtype=float)
    wall = job * cands["wall_factor"].to_numpy(dtype=float)
    cost = job * price
    instances = cands["instances"].to_numpy(dtype=float)
    can_absorb = cands["capacity_hours"].to_numpy(dtype=float) >= job
    if absorbers is not None:
        can_absorb = absorbers
        if not sizes:
            instances = np.zeros(len(cands))
    elif parallel:
        quota = cands["quota_instances"].to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):
            gang_limit = np.floor(quota / instances)
        can_absorb &= np.isfinite(quota) & (cands["max_gangs"].to_numpy(dtype=float) >= gang_limit)
    else:
        instances = np.zeros(len(cands))  # gang sizes do not matter to the sequential model
    group = cands.groupby(list(by), sort=False).ngroup().to_numpy(dtype=float)  # NaN: no group
    # One stable sort by (group, wall, cost, price): a configuration can only be dominated by one
    # before it, and dominance is transitive, so one pass against the kept ones decides.
    order = np.lexsort((price, cost, wall, group))
    labels = cands.index.to_numpy()
    # Python lists: the loop below reads one element at a time, which numpy makes slow.
    group_of, cost_of, price_of = group.tolist(), cost.tolist(), price.tolist()
    size_of, absorbs = instances.tolist(), can_absorb.tolist()
    keep: list[Any] = []
    kept_absorbers: list[tuple[float, float, float]] = []
    current = math.nan
    for pos in order.tolist():
        g = group_of[pos]
        if g != current:
            if math.isnan(g):
                break  # rows with a missing key sort last and belong to no group
            current, kept_absorbers = g, []
        c, p, n = cost_of[pos], price_of[pos], size_of[pos]
        if not any(ac <= c and ap <= p and an <= n for ac, ap, an in kept_absorbers):
            keep.append(labels[pos])
            if absorbs[pos]:
                # An absorber this one matches or beats on cost, price and size is redundant:
                # whatever it would dominate later, this one (no slower, being earlier) does too.
                kept_absorbers = [
                    a for a in kept_absorbers if not (c <= a[0] and p <= a[1] and n <= a[2])
                ]
                kept_absorbers.append((c, p, n))
    return sorted(keep)
