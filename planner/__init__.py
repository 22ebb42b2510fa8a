"""planner: what hardware should this job run on, how long will it take, and what will it cost?

Data flows one way: providers -> snapshot -> offers table -> requirements filter -> optimizer ->
plan -> report.  The library surface is :mod:`planner.api`; its functions and types are also
reachable from the package itself, loaded on first use so that ``import planner`` stays cheap::

    import planner

    table = planner.offers(planner.OfferFilter(gpus=("H100",))).offers  # a pandas DataFrame
    result = planner.quote(workload="gpt2-xl-finetune", deadline_hours=24)
    html = planner.report(result)  # one self-contained HTML file with charts

    session = planner.Planner(offers_files=("our-prices.csv",))  # loads the prices once
    plans = [session.quote(workload="gpt2-xl-finetune", deadline_hours=h) for h in (12, 24, 72)]
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Every public name of the library and the module that defines it: the one table.  `planner` and
# `planner.api` load these on first use (PEP 562) and both take their __all__ from it; a new
# public name is added here (and to the imports for type checkers below, which
# tests/test_api_surface.py checks against this table).
_PUBLIC: dict[str, str] = {
    # the functions and the session
    "Planner": "planner.api",
    "budget": "planner.api",
    "calibrate": "planner.api",
    "calibrations": "planner.api",
    "estimate": "planner.api",
    "figures": "planner.api",
    "gpus": "planner.api",
    "list_workloads": "planner.api",
    "load_workload": "planner.api",
    "model_presets": "planner.api",
    "offers": "planner.api",
    "prices_diff": "planner.api",
    "prices_history": "planner.api",
    "prices_status": "planner.api",
    "quote": "planner.api",
    "quote_service": "planner.api",
    "refresh_prices": "planner.api",
    "remove_calibration": "planner.api",
    "report": "planner.api",
    "tco": "planner.api",
    "with_training": "planner.api",
    "workload_requirements": "planner.api",
    # what they take and return
    "OffersResult": "planner.api",
    "OfferBook": "planner.catalog",
    "load_offer_book": "planner.catalog",
    "load_offers": "planner.catalog",
    "OfferFilter": "planner.catalog.query",
    "RefreshResult": "planner.catalog.refresh",
    "GpuSpec": "planner.gpu_specs",
    "resolve_gpu": "planner.gpu_specs",
    "BudgetReport": "planner.optimize.budget",
    "TcoResult": "planner.ownership.costs",
    "HardwareSpec": "planner.ownership.hardware",
    "load_hardware": "planner.ownership.hardware",
    "QuoteRequest": "planner.quoting.request",
    "QuoteResult": "planner.quoting.result",
    "ServiceRequest": "planner.quoting.service_quote",
    "ServiceQuoteResult": "planner.quoting.service_quote",
    "Interconnect": "planner.schema",
    "PurchaseOption": "planner.schema",
    "Estimate": "planner.workload",
    "Topology": "planner.workload",
    "WorkloadSpec": "planner.workload",
    "default_topology": "planner.workload",
    "workload_from_facts": "planner.workload.adhoc",
}

__all__ = ["__version__", *_PUBLIC]

if TYPE_CHECKING:  # the same names for type checkers and editors, which do not run __getattr__
    # ruff: disable[F401]
    from planner.api import (
        OffersResult,
        Planner,
        budget,
        calibrate,
        calibrations,
        estimate,
        figures,
        gpus,
        list_workloads,
        load_workload,
        model_presets,
        offers,
        prices_diff,
        prices_history,
        prices_status,
        quote,
        quote_service,
        refresh_prices,
        remove_calibration,
        report,
        tco,
        with_training,
        workload_requirements,
    )
    from planner.catalog import OfferBook, load_offer_book, load_offers
    from planner.catalog.query import OfferFilter
    from planner.catalog.refresh import RefreshResult
    from planner.gpu_specs import GpuSpec, resolve_gpu
    from planner.optimize.budget import BudgetReport
    from planner.ownership.costs import TcoResult
    from planner.ownership.hardware import HardwareSpec, load_hardware
    from planner.quoting.request import QuoteRequest
    from planner.quoting.result import QuoteResult
    from planner.quoting.service_quote import ServiceQuoteResult, ServiceRequest
    from planner.schema import Interconnect, PurchaseOption
    from planner.workload import Estimate, Topology, WorkloadSpec, default_topology
    from planner.workload.adhoc import workload_from_facts
    # ruff: enable[F401]


def _load_public(name: str, asked: str) -> Any:
    """The public ``name`` for ``module.__getattr__`` of the module ``asked``, imported from
    the module that defines it (not from ``asked`` itself: a name missing there is missing)."""
    home = _PUBLIC.get(name)
    if home is None or home == asked:
        raise AttributeError(f"module {asked!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


def __getattr__(name: str) -> Any:
    # PEP 562: the API is imported on first use, not at ``import planner`` (which the CLI's
    # ``--version`` and every subprocess pay for).
    return _load_public(name, __name__)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
