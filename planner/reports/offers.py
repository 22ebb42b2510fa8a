"""Render offer tables and the GPU catalog."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from planner.catalog import OfferBook
from planner.reports.formatting import USD_MONEY, Money
from planner.reports.tables import frame_records, render_records
from planner.schema import COLUMN_NAMES, LISTING_COLUMNS
from planner.units import HOURS_PER_MONTH

# The table for people: the instance, then every purchase option's price side by side (as
# ec2instances.info shows them), then the listed option's price per GPU.
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
    "price_on_demand_usd_per_hour",
    "price_spot_usd_per_hour",
    "price_reserved_1y_usd_per_hour",
    "price_reserved_3y_usd_per_hour",
    "price_usd_per_gpu_hour",
    "as_of",
)
_PRICE_HEADERS = {
    "price_on_demand_usd_per_hour": "on-demand",
    "price_spot_usd_per_hour": "spot",
    "price_reserved_1y_usd_per_hour": "1y",
    "price_reserved_3y_usd_per_hour": "3y",
    "price_savings_plan_1y_usd_per_hour": "sp-1y",
    "price_savings_plan_3y_usd_per_hour": "sp-3y",
}
# Savings-plan prices sit after the reserved ones, in tables that have any (the bundled snapshot
# has none: its tables keep the four columns).
_SAVINGS_PLAN_COLUMNS = ("price_savings_plan_1y_usd_per_hour", "price_savings_plan_3y_usd_per_hour")
OFFER_HEADERS = {
    "instance_type": "instance",
    "gpu_model": "gpu",
    "gpu_count": "gpus",
    "gpu_memory_gib": "GiB/gpu",
    "host_memory_gib": "host GiB",
    "local_disk_gb": "disk GB",
    "network_gbps": "net Gbps",
    "offers_in_group": "offers",
}
# The hours a price is shown for: per hour, or per month of 730 hours (as cloud bills count one).
PERIOD_HOURS = {"hour": 1.0, "month": HOURS_PER_MONTH}
EXTRA_COLUMNS = LISTING_COLUMNS


def provenance_lines(
    book: OfferBook, max_age_days: int, providers: Sequence[str] = ()
) -> list[str]:
    """Where the prices come from, one line per provider (those of ``providers`` where given: the
    ones a filter kept), then staleness warnings."""
    lines = [
        f"prices: {s.provider} as of {s.as_of_range}"
        + (" (estimated)" if s.estimated else "")
        + f" from {s.source}"
        for s in book.sources_of(providers)
    ]
    lines += [f"warning: {w}" for w in book.stale_warnings(max_age_days, providers)]
    return lines


def render_offers(
    df: pd.DataFrame,
    fmt: str,
    *,
    period: str = "hour",
    purchase: str = "on-demand",
    money: Money = USD_MONEY,
    local_disk: bool = False,
) -> str:
    """Offers in ``fmt``.  Tables show the local disk column (GB per instance) only with
    ``local_disk``.  JSON and CSV carry every schema column (USD per hour, so the CSV is
    a price list ``--offers`` reads back) plus the listed option's price and, for grouped
    offers, ``offers_in_group``.  Tables show the prices side by side per ``period``
    (``hour`` or ``month``) in ``money``'s currency (on-demand, spot, reserved 1y/3y, and the
    savings plans 1y/3y where any offer has one), and the listed ``purchase`` option's price
    per GPU."""
    grouped = "offers_in_group" in df.columns
    if fmt in ("json", "csv"):
        cols = [*COLUMN_NAMES, *EXTRA_COLUMNS, *(["offers_in_group"] if grouped else [])]
        return render_records(frame_records(df), fmt, columns=cols)
    hours = PERIOD_HOURS[period] * money.per_usd
    sign = money.symbol.strip()
    unit = f"{sign}/h" if period == "hour" else f"{sign}/mo"
    shown = df.copy()
    for col in (*_PRICE_HEADERS, "price_usd_per_gpu_hour"):
        if col in shown.columns:  # cents for a month; a tenth of a cent for an hour
            shown[col] = (shown[col].astype(float) * hours).round(2 if period == "month" else 4)
    per_gpu = f"{sign}/gpu-h" if period == "hour" else f"{sign}/gpu-mo"
    headers = {
        **OFFER_HEADERS,
        **{col: f"{name} {unit}" for col, name in _PRICE_HEADERS.items()},
        "price_usd_per_gpu_hour": f"{purchase} {per_gpu}",
    }
    columns = list(OFFER_TABLE_COLUMNS)
    if local_disk:  # whole GB with separators (30,400, not 3.04e+04); unknown stays blank
        columns.insert(columns.index("host_memory_gib") + 1, "local_disk_gb")
        shown["local_disk_gb"] = [
            None if pd.isna(v) else f"{float(v):,.0f}" for v in shown["local_disk_gb"]
        ]
    plans = [c for c in _SAVINGS_PLAN_COLUMNS if c in shown.columns and shown[c].notna().any()]
    if plans or purchase.startswith("savings-plan"):
        at = columns.index("price_reserved_3y_usd_per_hour") + 1
        columns[at:at] = plans or list(_SAVINGS_PLAN_COLUMNS)
    columns += ["offers_in_group"] if grouped else []
    # a month of an 8-GPU instance reads 71,770.5, not 7.177e+04
    return render_records(
        frame_records(shown),
        fmt,
        columns=columns,
        headers=headers,
        floatfmt=",.4g" if period == "hour" else ",.6g",
    )


GPU_TABLE_COLUMNS = (
    "name",
    "memory_gib",
    "usable_memory_gib",
    "memory_bandwidth_gb_per_s",
    "tensor_tflops_dense",
    "fp32_tflops",
    "tdp_w",
    "gpu_link",
    "segment",
    "offered_by",
    "cheapest_on_demand_usd_per_gpu_hour",
)
_GPU_PRICE = "cheapest_on_demand_usd_per_gpu_hour"
GPU_HEADERS = {
    "memory_gib": "GiB",
    "usable_memory_gib": "usable",  # what a job can allocate: less where ECC takes 1/16 of GDDR6
    "memory_bandwidth_gb_per_s": "GB/s",
    "tensor_tflops_dense": "BF16/FP16 TFLOPS",
    "fp32_tflops": "FP32 TFLOPS",
    "tdp_w": "TDP W",
    "gpu_link": "GPU link",
    "offered_by": "offered by",
    "cheapest_on_demand_usd_per_gpu_hour": "from $/gpu-h",
}


def render_gpus(records: Sequence[dict[str, Any]], fmt: str, *, money: Money = USD_MONEY) -> str:
    """The GPU catalog in ``fmt``; money in ``money``'s currency (JSON and CSV rename its key:
    ``cheapest_on_demand_eur_per_gpu_hour``)."""
    if fmt == "json":
        return render_records(money.convert(list(records)), fmt)
    price = f"cheapest_on_demand_{money.code.lower()}_per_gpu_hour"
    shown = [
        {**r, price: None if r[price] is None else float(f"{r[price]:.5g}")}
        for r in money.convert(
            [{**r, "offered_by": ",".join(r["offered_by"]) or "-"} for r in records]
        )
    ]
    columns = [price if c == _GPU_PRICE else c for c in GPU_TABLE_COLUMNS]
    if fmt == "csv":
        return render_records(shown, fmt, columns=columns)
    headers = {**GPU_HEADERS, price: f"from {money.symbol.strip()}/gpu-h"}
    return render_records(shown, fmt, columns=columns, headers=headers)
