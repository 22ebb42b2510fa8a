"""Renderers for ``planner tco`` and ``planner budget``: results in, strings out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from planner.config.currency import USD, FxTable, convert_money, load_fx_rates
from planner.ownership.costs import TcoResult
from planner.reports.tables import dumps_json, render_records

_CATEGORY_NOTES = {
    "depreciation": "capex less resale, straight line",
    "financing": "interest on the capital",
    "power": "avg draw x PUE x electricity",
    "colocation": "per kW-month on max draw, or rack rent",
    "support": "share of capex per year",
    "staff": "share of an engineer",
    "total": "",
}


def _factor(currency: str, fx: FxTable | None) -> float:
    if currency.upper() == USD:
        return 1.0
    return 1.0 / (fx or load_fx_rates()).rate(currency, key_path="--currency")


def _fx_note(currency: str, fx: FxTable | None) -> str:
    if currency.upper() == USD:
        return ""
    table = fx or load_fx_rates()
    return f"money in {currency.upper()} at {1 / table.rate(currency):.4g} per USD ({table.source}, {table.as_of})"


def _months(value: float | None, lifetime_months: float) -> str:
    if value is None:
        return "never"
    text = f"{value:.1f}"
    return text + " (after lifetime)" if value > lifetime_months else text


def _pct(value: float) -> str:
    return "never (cloud cheaper)" if value > 1 else f"{value:.0%}"


def tco_record(
    result: TcoResult, *, currency: str = USD, fx: FxTable | None = None
) -> dict[str, Any]:
    """The JSON object of ``planner tco``: USD keys, renamed and converted when ``currency`` is given."""
    record = result.to_record()
    if currency.upper() != USD:
        table = fx or load_fx_rates()
        record = convert_money(record, currency, table)
        record["currency"] = {
            "code": currency.upper(),
            "per_usd": 1 / table.rate(currency, key_path="--currency"),
            "as_of": table.as_of,
            "source": table.source,
        }
    return record


def render_tco(
    result: TcoResult,
    fmt: str,
    *,
    currency: str = USD,
    fx: FxTable | None = None,
) -> str:
    """``fmt``: table or markdown (a report), json (one object), csv (the comparisons)."""
    if fmt == "json":
        return dumps_json(tco_record(result, currency=currency, fx=fx))
    k = _factor(currency, fx)
    cur = currency.upper()
    hw = result.hardware
    lifetime_months = hw.lifetime_years * 12
    comparisons = [
        {
            "provider": c.provider,
            "instance_type": c.instance_type,
            "region": c.region,
            "purchase_option": c.purchase_option.value,
            f"cloud_{cur.lower()}_per_gpu_hour": c.cloud_usd_per_gpu_hour * k,
            f"cloud_{cur.lower()}_per_owned_gpu_hour": c.cloud_usd_per_equivalent_gpu_hour * k,
            "breakeven_utilization": _pct(c.breakeven_utilization),
            "breakeven_months": _months(c.breakeven_months, lifetime_months),
        }
        for c in result.comparisons
    ]
    if fmt == "csv":
        return render_records(comparisons, "csv")
    annual = result.annual.by_category()
    total = annual["total"] or 1.0
    cost_rows = [
        {
            "category": name,
            "per_year": value * k,
            "share": f"{value / total:.0%}",
            "what": _CATEGORY_NOTES[name],
        }
        for name, value in annual.items()
    ]
    lines = [
        f"{hw.name}: {hw.machines} x {hw.gpus_per_machine} x {hw.gpu} ({hw.interconnect.value}), "
        f"capex {result.capex_usd * k:,.0f} {cur}, {hw.lifetime_years:g}-year life",
        "",
        render_records(cost_rows, fmt, headers={"per_year": f"per year ({cur})"}, floatfmt=",.0f"),
        "",
        f"{'per GPU-hour at 100% use:':<34}{result.usd_per_gpu_hour * k:,.3f} {cur}",
        f"{f'per useful GPU-hour at {result.utilization:.0%} use:':<34}{result.usd_per_useful_gpu_hour * k:,.3f} {cur}",
        f"{f'total over {result.years:g} years:':<34}{result.total_usd * k:,.0f} {cur}"
        f" (residual value {result.residual_value_usd * k:,.0f})",
    ]
    if result.comparisons:
        lines += [
            "",
            f"cheapest cloud {result.compare_gpu} capacity, same useful hours at {result.utilization:.0%}:",
            render_records(
                comparisons,
                fmt,
                headers={
                    f"cloud_{cur.lower()}_per_gpu_hour": f"{cur}/GPU-h",
                    f"cloud_{cur.lower()}_per_owned_gpu_hour": f"{cur}/owned-GPU-h",
                    "breakeven_utilization": "breakeven util",
                    "breakeven_months": "breakeven month",
                },
                floatfmt=",.3f",
            ),
            "",
            "cumulative cost:",
            render_records(_curve_rows(result, k), fmt, floatfmt=",.0f"),
        ]
    else:
        lines += [
            "",
            f"no cloud offers with {result.compare_gpu} GPUs to compare with (try --compare-gpu or --offers)",
        ]
    notes = [hw.source and f"sources: {hw.source}", _fx_note(currency, fx)]
    if result.offers_source:
        notes.append(f"cloud prices as of {result.offers_as_of}: {result.offers_source}")
    lines += ["", *[n for n in notes if n]]
    return "\n".join(lines) + "\n"


def _curve_rows(result: TcoResult, k: float) -> list[dict[str, Any]]:
    months = result.cumulative[-1].month if result.cumulative else 0
    step = 3 if months <= 24 else 6 if months <= 60 else 12
    rows = []
    for p in result.cumulative:
        if p.month % step and p.month != months:
            continue
        rows.append(
            {
                "month": p.month,
                "owned": p.owned_usd * k,
                **{o: v * k for o, v in p.cloud_usd.items()},
            }
        )
    return rows


def render_budget(plan: Any, fmt: str, *, currency: str = USD, fx: FxTable | None = None) -> str:
    """Render a :class:`planner.optimize.budget.BudgetReport` (typed loosely: reports must not import the optimizer)."""
    record: dict[str, Any] = plan.to_record()
    if fmt == "json":
        if currency.upper() != USD:
            table = fx or load_fx_rates()
            record = convert_money(record, currency, table)
            record["currency"] = {
                "code": currency.upper(),
                "as_of": table.as_of,
                "source": table.source,
            }
        return dumps_json(record)
    k = _factor(currency, fx)
    cur = currency.upper()
    months = [_scale_row(r, k, cur) for r in record["months"]]
    if fmt == "csv":
        return render_records(months, "csv")
    strategies = [_scale_row(r, k, cur) for r in record["strategies"]]
    lines = [
        f"{record['name']}: {record['horizon_months']} months from {record['start']}, "
        f"optimal mix {record['total_usd'] * k:,.0f} {cur} ({record['status']}, {record['solve_seconds']:.2f} s, {record['solver']})",
        "",
        "strategies:",
        render_records(strategies, fmt, floatfmt=",.0f"),
        "",
        "plan by month:",
        render_records(months, fmt, floatfmt=",.0f"),
    ]
    if record.get("sensitivity"):
        rows = [_scale_row(r, k, cur) for r in record["sensitivity"]]
        lines += [
            "",
            "sensitivity:",
            render_records(rows, fmt, floatfmt=",.4g"),
        ]
    note = _fx_note(currency, fx)
    if note:
        lines += ["", note]
    return "\n".join(lines) + "\n"


def _scale_row(row: Mapping[str, Any], k: float, cur: str = USD) -> dict[str, Any]:
    """Money columns (``usd`` in the name) scaled by ``k`` and renamed to ``cur``."""
    out: dict[str, Any] = {}
    for key, v in row.items():
        parts = key.split("_")
        if "usd" not in parts:
            out[key] = v
            continue
        name = "_".join(cur.lower() if p == "usd" else p for p in parts)
        out[name] = v * k if isinstance(v, (int, float)) and not isinstance(v, bool) else v
    return out
