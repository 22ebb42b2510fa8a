"""Render offer tables and the GPU catalog."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from planner.catalog import OfferBook
from planner.reports.tables import frame_records, render_records
from planner.schema import COLUMN_NAMES

OFFER_TABLE_COLUMNS = (
    "provider",
    "region",
    "instance_type",
    "gpu_model",
    "gpu_count",
    "gpu_memory_gib",
    "vcpus",
    "host_memory_gib",
    "interconnect",
    "network_gbps",
    "purchase_option",
    "price_usd_per_hour",
    "price_usd_per_gpu_hour",
    "price_spot_usd_per_hour",
    "as_of",
)
OFFER_HEADERS = {
    "instance_type": "instance",
    "gpu_model": "gpu",
    "gpu_count": "gpus",
    "gpu_memory_gib": "GiB/gpu",
    "host_memory_gib": "host GiB",
    "network_gbps": "net Gbps",
    "purchase_option": "option",
    "price_usd_per_hour": "$/h",
    "price_usd_per_gpu_hour": "$/gpu-h",
    "price_spot_usd_per_hour": "spot $/h",
}
EXTRA_COLUMNS = ("purchase_option", "price_usd_per_hour", "price_usd_per_gpu_hour")


def provenance_lines(book: OfferBook, max_age_days: int) -> list[str]:
    """Where the prices come from, one line per provider, then staleness warnings."""
    lines = [
        f"prices: {s.provider} as of {s.as_of_range}"
        + (" (estimated)" if s.estimated else "")
        + f" from {s.source}"
        for s in book.sources
    ]
    lines += [f"warning: {w}" for w in book.stale_warnings(max_age_days)]
    return lines


def render_offers(df: pd.DataFrame, fmt: str) -> str:
    """Offers in ``fmt``; JSON and CSV carry every schema column plus the chosen price."""
    records = frame_records(df)
    if fmt in ("json", "csv"):
        cols = [*COLUMN_NAMES, *EXTRA_COLUMNS]
        return render_records(records, fmt, columns=cols)
    return render_records(records, fmt, columns=OFFER_TABLE_COLUMNS, headers=OFFER_HEADERS)


GPU_TABLE_COLUMNS = (
    "name",
    "memory_gib",
    "memory_bandwidth_gb_per_s",
    "tensor_tflops_dense",
    "fp32_tflops",
    "tdp_w",
    "gpu_link",
    "segment",
    "offered_by",
    "cheapest_on_demand_usd_per_gpu_hour",
)
GPU_HEADERS = {
    "memory_gib": "GiB",
    "memory_bandwidth_gb_per_s": "GB/s",
    "tensor_tflops_dense": "BF16/FP16 TFLOPS",
    "fp32_tflops": "FP32 TFLOPS",
    "tdp_w": "TDP W",
    "gpu_link": "GPU link",
    "offered_by": "offered by",
    "cheapest_on_demand_usd_per_gpu_hour": "from $/gpu-h",
}


def render_gpus(records: Sequence[dict[str, Any]], fmt: str) -> str:
    if fmt == "json":
        return render_records(records, fmt)
    shown = [{**r, "offered_by": ",".join(r["offered_by"]) or "-"} for r in records]
    return render_records(
        shown, fmt, columns=GPU_TABLE_COLUMNS, headers=None if fmt == "csv" else GPU_HEADERS
    )
