"""The library surface: everything the CLI and notebooks call.

providers -> snapshot -> offers table -> requirements filter -> optimizer -> plan -> report
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from planner.catalog import OfferBook, load_offer_book, load_offers
from planner.catalog.query import (
    OfferFilter,
    cheapest_gpu_hour,
    filter_offers,
    gpu_availability,
    sort_offers,
)
from planner.hardware import GpuSpec, load_gpu_catalog, resolve_gpu
from planner.onprem import HardwareSpec, load_budget, load_hardware
from planner.quote import QuoteRequest, QuoteResult
from planner.schema import Interconnect, PurchaseOption
from planner.tco import TcoResult

if TYPE_CHECKING:
    from planner.optimize.budget import BudgetReport

__all__ = [
    "GpuSpec",
    "Interconnect",
    "OfferBook",
    "OfferFilter",
    "OffersResult",
    "PurchaseOption",
    "QuoteRequest",
    "QuoteResult",
    "budget",
    "gpus",
    "load_hardware",
    "load_offer_book",
    "load_offers",
    "offers",
    "quote",
    "resolve_gpu",
    "tco",
]


# --- offers and GPUs (backbone) -------------------------------------------------------------


@dataclass(frozen=True)
class OffersResult:
    """Offers matching a filter, sorted, with the provenance of the prices."""

    offers: pd.DataFrame = field(repr=False)
    book: OfferBook = field(repr=False)


def offers(
    flt: OfferFilter | None = None,
    *,
    sort: str = "price",
    descending: bool = False,
    limit: int | None = None,
    offers_files: Sequence[str | Path] = (),
    snapshot_dir: str | Path | None = None,
) -> OffersResult:
    """GPU instance offers from the newest snapshot (plus private CSVs), filtered and sorted.

    >>> from planner.api import offers, OfferFilter
    >>> offers(OfferFilter(gpus=("A100-80GB",), max_price_usd_per_hour=40)).offers.head()  # doctest: +SKIP
    """
    book = load_offer_book(offers_files, snapshot_dir=snapshot_dir)
    found = sort_offers(
        filter_offers(book.offers, flt or OfferFilter(), load_gpu_catalog()),
        sort,
        descending=descending,
    )
    if limit is not None:
        found = found.head(limit)
    return OffersResult(offers=found, book=book)


def gpus(
    *, offers_files: Sequence[str | Path] = (), snapshot_dir: str | Path | None = None
) -> list[dict[str, Any]]:
    """The GPU catalog as records, each with the providers offering it and its cheapest GPU-hour."""
    book = load_offer_book(offers_files, snapshot_dir=snapshot_dir)
    where = gpu_availability(book.offers)
    cheapest = cheapest_gpu_hour(book.offers)
    records = []
    for gpu in load_gpu_catalog().gpus:
        record = gpu.to_record()
        record["offered_by"] = where.get(gpu.name, [])
        record["cheapest_on_demand_usd_per_gpu_hour"] = cheapest.get(gpu.name)
        records.append(record)
    return records


# --- owned hardware: TCO and budgets (issue 6) -------------------------------------------------


def tco(
    hardware: str | HardwareSpec,
    *,
    utilization: float = 1.0,
    years: float | None = None,
    compare_gpu: str | None = None,
    offers_files: Sequence[str | Path] = (),
    snapshot_dir: str | Path | None = None,
    with_cloud: bool = True,
    any_interconnect: bool = False,
) -> TcoResult:
    """Total cost of owning ``hardware`` (a hardware file path or bundled name) and its breakeven
    against the cheapest cloud capacity in the newest snapshot (plus private CSVs).

    >>> from planner.api import tco
    >>> round(tco("8xh100-hgx", with_cloud=False).usd_per_gpu_hour, 2)  # doctest: +SKIP
    2.05
    """
    from dataclasses import replace

    from planner.tco import tco as compute_tco

    hw = hardware if isinstance(hardware, HardwareSpec) else load_hardware(hardware)
    book = load_offer_book(offers_files, snapshot_dir=snapshot_dir) if with_cloud else None
    result = compute_tco(
        hw,
        utilization=utilization,
        years=years,
        offers=book.offers if book is not None else None,
        compare_gpu=compare_gpu,
        any_interconnect=any_interconnect,
    )
    if book is not None:
        result = replace(result, offers_as_of=book.as_of, offers_source=book.source_text)
    return result


def budget(
    budget_file: str,
    *,
    sensitivity: bool = True,
    time_limit_s: float = 60.0,
) -> BudgetReport:
    """The cheapest mix of owned servers, commitments, on-demand and spot for a budget file
    (path or bundled name), with the pure strategies and a sensitivity table.

    >>> from planner.api import budget
    >>> budget("2027-ml-platform", sensitivity=False).plan.total_usd  # doctest: +SKIP
    """
    from planner.optimize.budget import budget_report, check_time_limit, default_solver

    check_time_limit(time_limit_s)
    return budget_report(
        load_budget(budget_file),
        solver=lambda: default_solver(time_limit_s),
        sensitivity=sensitivity,
    )


# --- quote ---------------------------------------------------------------------------------


def quote(request: QuoteRequest, *, solver: Any | None = None) -> QuoteResult:
    """Cheapest distinct plans that finish ``request.workload`` by its deadline.

    >>> from planner.api import QuoteRequest, quote
    >>> result = quote(QuoteRequest(workload="gpt2-xl-finetune", deadline_hours=24))  # doctest: +SKIP
    >>> result.plans[0].total_cost_usd  # doctest: +SKIP
    """
    from planner.quote import quote as run_quote

    return run_quote(request, solver=solver)
