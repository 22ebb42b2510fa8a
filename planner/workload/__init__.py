"""Workloads: the job description (YAML schema, model presets) and the pure estimators.

``load_workload`` / ``list_workloads`` read the library in ``scenarios/workloads``; ``estimate``
turns a spec plus a GPU choice into memory, strategy, FLOPs, efficiency, hours and interconnect.
"""

from __future__ import annotations

from planner.workload.estimator import Estimate, Topology, default_topology, estimate
from planner.workload.spec import (
    WorkloadSpec,
    list_workloads,
    load_workload,
    parse_workload,
)
from planner.workload.strategy import Strategy

__all__ = [
    "Estimate",
    "Strategy",
    "Topology",
    "WorkloadSpec",
    "default_topology",
    "estimate",
    "list_workloads",
    "load_workload",
    "parse_workload",
]
