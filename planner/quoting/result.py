"""What a quote returns: ranked plans with the requirements, provenance and assumptions behind them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from planner.catalog import OfferBook
from planner.optimize.plans import (
    EGRESS_USD_PER_GB,
    STARTUP_HOURS,
    Plan,
)
from planner.optimize.spot import DEFAULT_RESTART_HOURS
from planner.workload import WorkloadSpec

if TYPE_CHECKING:
    pass
from planner.quoting.request import QuoteRequest


@dataclass(frozen=True)
class QuoteResult:
    request: QuoteRequest
    workload: WorkloadSpec
    requirements: dict[str, Any]
    plans: tuple[Plan, ...]
    excluded: tuple[str, ...]
    book: OfferBook
    frontier: tuple[tuple[float, float], ...] = ()
    stats: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # plan variants left out (the solver gave up on them)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "workload": self.workload.name,
            "deadline_hours": self.request.deadline_hours,
            "budget_usd": self.request.budget_usd,
            "confidence_pct": self.request.confidence_pct,
            "requirements": self.requirements,
            "excluded": list(self.excluded),
            "notes": list(self.notes),
            "snapshot": {
                "as_of": self.book.as_of,
                "source": self.book.source_text,
                "parts": [s.to_dict() for s in self.book.sources],
            },
            "plans": [p.to_dict() for p in self.plans],
            "assumptions": {
                "startup_hours": STARTUP_HOURS,
                "checkpoint_egress_usd_per_gb": EGRESS_USD_PER_GB,
                "spot_restart_hours": DEFAULT_RESTART_HOURS,
                "discounts": dict(self.request.discounts),
                "quotas": dict(self.request.quotas),
                "owned_hardware": list(self.request.hardware),
                "owned_cost_basis": self.request.local_cost_basis,
                "spot_allowed": self.request.allow_spot,
                "reserved_included": self.request.include_reserved,
            },
            "stats": self.stats,
        }
        if self.request.pareto:
            out["frontier"] = [{"deadline_hours": d, "total_cost_usd": c} for d, c in self.frontier]
        return out
