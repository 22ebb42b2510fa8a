"""Renderers for service quotes: fleets priced per month (table, Markdown, CSV, JSON)."""

from __future__ import annotations

from typing import Any

from planner.quoting.service_quote import ServiceQuoteResult
from planner.reports.offers import provenance_lines
from planner.reports.tables import dumps_json, render_records

_CSV_COLUMNS = (
    "label",
    "provider",
    "region",
    "instance_type",
    "gpu_model",
    "gpus_per_instance",
    "tensor_parallel",
    "replicas_base",
    "replicas_peak",
    "instances_base",
    "instances_peak",
    "purchase_base",
    "price_base_usd_per_hour",
    "price_on_demand_usd_per_hour",
    "cost_usd_per_month",
    "cost_usd_per_million_tokens",
    "ttft_ms_p95",
    "tpot_ms_p95",
    "e2e_ms_p95",
    "capacity_requests_per_s",
    "price_as_of",
)


_IMAGE_CSV_COLUMNS = tuple(
    "cost_usd_per_thousand_images" if c == "cost_usd_per_million_tokens" else c
    for c in _CSV_COLUMNS
    if c not in ("ttft_ms_p95", "tpot_ms_p95")
)


def _load_text(result: ServiceQuoteResult) -> str:
    load = result.load
    unit = "images/s" if result.unit == "images" else "requests/s"
    text = f"{load.base_requests_per_s:,.3g} {unit}"
    if load.has_peak:
        text += f", {load.peak:,.3g} for {load.peak_hours_per_day:g} h a day"
    if result.unit == "images":
        return f"{text} ({result.images_per_month / 1e6:,.2f}M images a month)"
    tokens = result.tokens_per_month
    return f"{text} ({result.output_tokens_per_request:g} output tokens each, {tokens / 1e6:,.0f}M a month)"


def _slo_text(result: ServiceQuoteResult) -> str:
    names = {"ttft_ms_p95": "TTFT", "tpot_ms_p95": "TPOT", "e2e_ms_p95": "end-to-end"}
    if result.unit == "images":
        names["e2e_ms_p95"] = "latency per image"
    parts = [f"{names[k]} <= {v:g} ms" for k, v in result.slo.model_dump().items() if v is not None]
    return "p95 " + ", ".join(parts) if parts else "none (carry the load only)"


def _row(p: Any) -> dict[str, Any]:
    fleet = f"{p.replicas_peak} x TP{p.tensor_parallel} on {p.instances_base}"
    if p.instances_peak:
        fleet += f" (+{p.instances_peak} peak)"
    if p.unit == "images":
        return {
            "plan": p.label,
            "provider": p.provider,
            "region": p.region,
            "instance": p.instance_type,
            "gpus": f"{p.gpus_per_instance} x {p.gpu_model}",
            "replicas on instances": fleet.replace(" x TP1", ""),
            "base bought": p.purchase_base,
            "$/month": f"{p.cost_usd_per_month:,.0f}",
            "$/1k images": f"{p.cost_usd_per_thousand_images:,.4f}",
            "p95 ms/image": f"{p.e2e_ms_p95:,.1f}",
        }
    return {
        "plan": p.label,
        "provider": p.provider,
        "region": p.region,
        "instance": p.instance_type,
        "gpus": f"{p.gpus_per_instance} x {p.gpu_model}",
        "replicas on instances": fleet,
        "base bought": p.purchase_base,
        "$/month": f"{p.cost_usd_per_month:,.0f}",
        "$/M tokens": f"{p.cost_usd_per_million_tokens:,.2f}",
        "p95 TTFT ms": f"{p.ttft_ms_p95:,.0f}",
        "p95 TPOT ms": f"{p.tpot_ms_p95:,.1f}",
    }


def render_service_quote(result: ServiceQuoteResult, fmt: str, *, max_age_days: int = 90) -> str:
    """A service quote; table and Markdown carry the load, targets, plans and price provenance."""
    if fmt == "json":
        return dumps_json(result.to_dict())
    if fmt == "csv":
        columns = _IMAGE_CSV_COLUMNS if result.unit == "images" else _CSV_COLUMNS
        rows = [{k: getattr(p, k) for k in columns} for p in result.plans]
        return render_records(rows, "csv", columns=columns)
    kind = "markdown" if fmt == "markdown" else "table"
    lines = [
        f"Service quote for {result.workload.name}",
        "",
        f"Load: {_load_text(result)}",
        f"Latency targets: {_slo_text(result)}",
        "",
        render_records([_row(p) for p in result.plans], kind),
        "",
        "Latency is each replica's at the peak load; a month is 730 h; peak instances run on "
        "demand in peak hours only.",
    ]
    lines += [f"note: {n}" for n in result.notes]
    lines.append("")
    lines += provenance_lines(result.book, max_age_days)
    return "\n".join(lines)
