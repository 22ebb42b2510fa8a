"""The library surface: everything the CLI and notebooks call.

providers -> snapshot -> offers table -> requirements filter -> optimizer -> plan -> report
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
from planner.schema import Interconnect, PurchaseOption

__all__ = [
    "GpuSpec",
    "Interconnect",
    "OfferBook",
    "OfferFilter",
    "OffersResult",
    "PurchaseOption",
    "gpus",
    "load_offer_book",
    "load_offers",
    "offers",
    "resolve_gpu",
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
