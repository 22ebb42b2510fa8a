"""What a quote returns: ranked plans with the requirements, provenance and assumptions behind them.

Typed all the way to the reports (:mod:`planner.reports.quote`, :mod:`planner.reports.quote_doc`
read attributes); :meth:`QuoteResult.to_dict` makes the JSON of ``planner quote --format json``
from them, once, at the edge.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from planner.catalog import OfferBook, SnapshotSource
from planner.optimize.plans import (
    EGRESS_USD_PER_GB,
    STARTUP_HOURS,
    Plan,
)
from planner.optimize.spot import DEFAULT_RESTART_HOURS
from planner.quoting.request import QuoteRequest
from planner.workload import WorkloadSpec


@dataclass(frozen=True)
class Requirements:
    """What the workload needs: its work and model states (on one H100, for reference) and the
    memory, strategy, link and efficiency of the cheapest plan.  Fields in JSON order."""

    total_flops: float
    model_states_gib: float  # weights + gradients + optimizer states, unsharded
    memory_per_gpu_gib: float  # with the cheapest plan's strategy
    strategy: str  # the cheapest plan's parallel layout, e.g. "DP2 + TP8"
    interconnect_required: str
    efficiency: float  # expected MFU of the cheapest plan
    pieces: int  # independent pieces of work (a sweep); 1 for one job

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class EstimateMargin:
    """How a quote counts the estimator's own error (``count_estimate_error``).

    Training times are planned at the ``quantile`` of measured / estimated time on ``runs``
    published runs (``ratio`` times the estimate, :mod:`planner.workload.uncertainty`).  With spot
    capacity allowed, the spot model must also give ``spot_confidence``: the two are independent,
    so a plan meets its deadline with at least their product, the request's confidence (each is
    its square root).  Without spot, the quantile is the confidence itself.
    """

    quantile: float
    ratio: float
    runs: int
    spot_confidence: float | None  # None: no spot capacity allowed

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class OwnedLine:
    """What one owned machine type could do for the quote, and why a plan uses it or not."""

    hardware: str  # the hardware name (its YAML file's ``name``)
    gpu_model: str
    machines: int  # machines owned
    # in-plan (a recommended plan runs on it), cannot-run (no gang of it fits or trains in the
    # precision), too-slow (no gang meets the deadline alone), dearer (the plans cost less)
    status: str
    cost_basis: str  # amortised | sunk
    in_plans: tuple[int, ...] = ()  # ranks of the plans that use it
    why_not: str = ""  # cannot-run: the reason
    machines_used: int = 0  # the cheapest gang of them that meets the deadline alone (0: none)
    hours: float | None = None  # that gang's wall hours (start-up included)
    cost_usd: float | None = None  # that gang's cost on the request's cost basis
    fastest_hours: float | None = None  # too-slow: its fastest gang's wall hours

    @property
    def used(self) -> bool:
        return self.status == "in-plan"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class QuoteStats:
    """How much the quote searched and how long it took (seconds rounded to 0.1 ms)."""

    offers_considered: int
    candidates: int
    candidates_after_pruning: int
    workload_estimates: int
    seconds_candidates: float
    seconds_total: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class QuoteAssumptions:
    """The planning figures and request options every plan of a quote rests on."""

    startup_hours: float  # billed per phase and per gang
    checkpoint_egress_usd_per_gb: float  # charged on every configuration switch
    spot_restart_hours: float  # lost per spot interruption
    discounts: Mapping[str, float]  # provider -> share off list prices
    quotas: Mapping[str, int]  # quota group -> instances
    owned_hardware: tuple[str, ...]  # hardware files
    owned_cost_basis: str  # amortised | sunk
    spot_allowed: bool
    reserved_included: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "startup_hours": self.startup_hours,
            "checkpoint_egress_usd_per_gb": self.checkpoint_egress_usd_per_gb,
            "spot_restart_hours": self.spot_restart_hours,
            "discounts": dict(self.discounts),
            "quotas": dict(self.quotas),
            "owned_hardware": list(self.owned_hardware),
            "owned_cost_basis": self.owned_cost_basis,
            "spot_allowed": self.spot_allowed,
            "reserved_included": self.reserved_included,
        }


@dataclass(frozen=True)
class QuoteResult:
    """A quote: the request, the workload and its requirements, the plans, the offers left out
    and the prices they came from."""

    request: QuoteRequest
    workload: WorkloadSpec
    requirements: Requirements
    plans: tuple[Plan, ...]
    excluded: tuple[str, ...]
    book: OfferBook
    stats: QuoteStats
    frontier: tuple[tuple[float, float], ...] = ()  # (deadline_hours, cheapest total_cost_usd)
    notes: tuple[str, ...] = ()  # plan variants left out (the solver gave up on them)
    owned: tuple[OwnedLine, ...] = ()  # one line per owned machine type given (--hardware)
    # the estimator's error the plans were made on (count_estimate_error), else None
    estimate_margin: EstimateMargin | None = None

    @property
    def price_sources(self) -> tuple[SnapshotSource, ...]:
        """The parts of the book the quote could price from: those of the providers asked for
        (every part where none was named), as the report's provenance lines list them."""
        return self.book.sources_of(self.request.providers)

    @property
    def assumptions(self) -> QuoteAssumptions:
        req = self.request
        return QuoteAssumptions(
            startup_hours=STARTUP_HOURS,
            checkpoint_egress_usd_per_gb=EGRESS_USD_PER_GB,
            spot_restart_hours=DEFAULT_RESTART_HOURS,
            discounts=req.discounts,
            quotas=req.quotas,
            owned_hardware=req.hardware,
            owned_cost_basis=req.local_cost_basis,
            spot_allowed=req.allow_spot,
            reserved_included=req.include_reserved,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``planner quote --format json``."""
        out: dict[str, Any] = {
            "workload": self.workload.name,
            "deadline_hours": self.request.deadline_hours,
            "budget_usd": self.request.budget_usd,
            "confidence_pct": self.request.confidence_pct,
            "requirements": self.requirements.to_dict(),
            "excluded": list(self.excluded),
            "notes": list(self.notes),
            "snapshot": {
                "as_of": self.book.as_of,
                "source": self.book.source_text,
                "parts": [s.to_dict() for s in self.book.sources],
            },
            "plans": [p.to_dict() for p in self.plans],
            "owned": [{**o.to_dict(), "used": o.used} for o in self.owned],
            "assumptions": self.assumptions.to_dict(),
            "estimate_margin": self.estimate_margin.to_dict() if self.estimate_margin else None,
            "stats": self.stats.to_dict(),
        }
        if self.request.pareto:
            out["frontier"] = [{"deadline_hours": d, "total_cost_usd": c} for d, c in self.frontier]
        return out
