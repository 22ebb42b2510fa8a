"""A workload survives a round trip: ``variant()`` and a dumped-and-parsed spec (what ``planner
workloads show`` writes and the notebooks do) validate as the original did, every default written
out included."""

from __future__ import annotations

import pytest

import planner
from planner.workload import parse_workload
from planner.workload.spec import workload_names


@pytest.mark.parametrize("name", workload_names())
def test_every_bundled_workload_round_trips(name: str) -> None:
    spec = planner.load_workload(name)
    assert spec.variant(description="x").model == spec.model
    again = parse_workload(spec.model_dump(mode="json", exclude_none=True))
    assert again == spec
