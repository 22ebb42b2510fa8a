"""planner: what hardware should this job run on, how long will it take, and what will it cost?

Data flows one way: providers -> snapshot -> offers table -> requirements filter -> optimizer ->
plan -> report.  The library surface is :mod:`planner.api`; its functions and types are also
reachable from the package itself, loaded on first use so that ``import planner`` stays cheap::

    import planner

    table = planner.offers(planner.OfferFilter(gpus=("H100",))).offers  # a pandas DataFrame
    result = planner.quote(planner.QuoteRequest(workload="gpt2-xl-finetune", deadline_hours=24))
    html = planner.report(result)  # one self-contained HTML file with charts
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from planner.api import (
        Estimate,
        GpuSpec,
        Interconnect,
        OfferBook,
        OfferFilter,
        OffersResult,
        PurchaseOption,
        QuoteRequest,
        QuoteResult,
        TcoResult,
        Topology,
        WorkloadSpec,
        budget,
        default_topology,
        estimate,
        gpus,
        list_workloads,
        load_hardware,
        load_offer_book,
        load_offers,
        load_workload,
        offers,
        prices_diff,
        prices_history,
        prices_status,
        quote,
        refresh_prices,
        report,
        resolve_gpu,
        tco,
        workload_requirements,
    )

__all__ = [
    "Estimate",
    "GpuSpec",
    "Interconnect",
    "OfferBook",
    "OfferFilter",
    "OffersResult",
    "PurchaseOption",
    "QuoteRequest",
    "QuoteResult",
    "TcoResult",
    "Topology",
    "WorkloadSpec",
    "__version__",
    "budget",
    "default_topology",
    "estimate",
    "gpus",
    "list_workloads",
    "load_hardware",
    "load_offer_book",
    "load_offers",
    "load_workload",
    "offers",
    "prices_diff",
    "prices_history",
    "prices_status",
    "quote",
    "refresh_prices",
    "report",
    "resolve_gpu",
    "tco",
    "workload_requirements",
]


def __getattr__(name: str) -> Any:
    # PEP 562: the API is imported on first use, not at ``import planner`` (which the CLI's
    # ``--version`` and every subprocess pay for).
    if name in __all__:
        from planner import api

        return getattr(api, name)
    raise AttributeError(f"module 'planner' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
