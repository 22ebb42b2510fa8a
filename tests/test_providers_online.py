"""Live calls against the real clouds: run with ``pytest -m online`` and real credentials.

Skipped by default (``-m "not online"`` in the pytest config); each fetches one region with the
adapter's default clients and checks the contract's essentials.
"""

from __future__ import annotations

import pytest

from planner.providers import DEFAULT_REGIONS, get_provider
from planner.schema import validate_offers


@pytest.mark.online
@pytest.mark.parametrize("name", ["aws", "gcp", "azure"])
def test_live_fetch(name: str) -> None:
    result = get_provider(name).fetch(DEFAULT_REGIONS[name][:1])
    df = validate_offers(result.offers)
    assert len(df) > 0
    assert (df["price_on_demand_usd_per_hour"] > 0).all()
    assert (df["provider"] == name).all()
