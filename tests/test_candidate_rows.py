"""The candidate rows join the offers to their shape's fitting gangs by position
(planner.optimize.gangs): in the rows and the order a DataFrame merge gives, which the
candidate table, its pruning and the plans' tie-breaks rest on."""

from __future__ import annotations

import numpy as np
import pandas as pd

from planner.catalog.query import region_preference_order
from planner.optimize.gangs import GangFits, pair_with_gangs


def _fits(shapes: list[str]) -> GangFits:
    """Fitting gangs of ``shapes`` (one entry each, in order); only the join reads them here."""
    n = len(shapes)
    by_shape: dict[tuple[str, ...], list[int]] = {}
    for j, key in enumerate(shapes):
        by_shape.setdefault((key,), []).append(j)
    zeros = np.zeros(n)
    return GangFits(
        [(s,) for s in shapes],
        np.arange(1, n + 1),
        [],
        [],
        zeros,
        zeros,
        zeros,
        zeros,
        zeros,
        by_shape,
    )


def test_offers_meet_their_fitting_gangs_as_an_inner_merge_orders_them() -> None:
    offer_shapes = ["b", "a", "c", "a", "b", "d"]  # "d" fits at no size, "c" at none listed
    fit_shapes = ["a", "b", "a", "b", "b"]
    at = np.array([0, 2, 3, 4, 5])  # the offers priced (offer 1 has no price)
    left, right = pair_with_gangs([(s,) for s in offer_shapes], at, _fits(fit_shapes))
    offers = pd.DataFrame({"_shape": offer_shapes, "offer": range(6)}).iloc[at]
    fits = pd.DataFrame({"_shape": fit_shapes, "fit": range(5)})
    merged = offers.merge(fits, on="_shape", how="inner")
    assert left.tolist() == merged["offer"].tolist()
    assert right.tolist() == merged["fit"].tolist()


def test_region_preference_orders_as_a_stable_sort_would() -> None:
    providers = ["gcp", "aws", "aws", "gcp", "aws", "aws"]
    regions = ["us-east1", "eu-west-1", "us-east-1", "europe-west4", "us-east-1", "ap-south-1"]
    order = region_preference_order(providers, regions)
    assert [providers[i] for i in order] == sorted(providers)  # by provider first
    # among equals (the two aws us-east-1 offers) the table's order stands
    assert order.index(2) < order.index(4)
