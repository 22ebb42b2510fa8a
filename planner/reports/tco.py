"""Renderers for ``planner tco`` and ``planner budget``: typed results in, strings out.

Money is converted once, by :class:`~planner.reports.formatting.Money`: scaled for the text
tables, and the JSON record (``to_record()``, made only for ``--format json``) converted with its
``usd`` keys renamed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from planner.config.currency import USD
from planner.reports.formatting import Money
from planner.reports.tables import dumps_json, render_records

if TYPE_CHECKING:
    from planner.config.currency import FxTable
    from planner.optimize.budget import BudgetPlan, BudgetReport
    from planner.ownership.costs import CloudComparison, TcoResult

_CATEGORY_NOTES = {
    "depreciation": "capex less resale, straight line",
    "financing": "interest on the capital",
    "power": "load/idle draw by use x PUE x electricity",
    "colocation": "per kW-month on max draw, or rack rent",
    "support": "share of capex per year",
    "staff": "share of an engineer",
    "total": "",
}


def _months(value: float | None, lifetime_months: float, horizon_months: float) -> str:
    if value is None:
        return "never"
    if value == 0:
        return "from the start"
    text = f"{value:.1f}"
    # past the machines' life the purchase never pays back: say so before the number
    if value > lifetime_months:  # as "never" as the breakeven utilization over 100%
        return "never within its life"
    return f"{text} (after the horizon)" if value > horizon_months else text


def _pct(value: float) -> str:
    return "never (cloud cheaper)" if value > 1 else f"{value:.0%}"


def tco_record(
    result: TcoResult, *, currency: str = USD, fx: FxTable | None = None
) -> dict[str, Any]:
    """The JSON object of ``planner tco``: USD keys, renamed and converted when ``currency`` is given."""
    money = Money.of(currency, fx, key_path="--currency")
    record: dict[str, Any] = money.convert(result.to_record())
    if not money.is_usd:
        record["currency"] = money.record()
    return record


def _offer_cells(c: CloudComparison, money: Money) -> dict[str, Any]:
    """The cloud offer a comparison row is against, and its prices in ``money``."""
    cur = money.code.lower()
    return {
        "provider": c.provider,
        "instance_type": c.instance_type,
        "region": c.region,
        "purchase_option": c.purchase_option.value,
        f"cloud_{cur}_per_gpu_hour": money.scale(c.cloud_usd_per_gpu_hour),
        f"cloud_{cur}_per_owned_gpu_hour": money.scale(c.cloud_usd_per_equivalent_gpu_hour),
    }


def _comparison_rows(result: TcoResult, money: Money) -> list[dict[str, Any]]:
    lifetime_months = result.hardware.lifetime_years * 12
    horizon_months = result.years * 12
    return [
        {
            **_offer_cells(c, money),
            "breakeven_utilization": _pct(c.breakeven_utilization),
            "breakeven_months": _months(c.breakeven_months, lifetime_months, horizon_months),
            "payback_months": _months(c.payback_months, lifetime_months, horizon_months),
        }
        for c in result.comparisons
    ]


def _csv_rows(result: TcoResult, money: Money) -> list[dict[str, Any]]:
    """``--format csv``: the cloud comparisons as numbers (a breakeven utilization above 1 and
    an empty month where owning never pays back, not "never (cloud cheaper)" in a number's
    column), or, without cloud prices to compare (``--no-cloud``), the yearly cost of ownership
    by category (was: an empty document)."""
    cur = money.code.lower()
    if not result.comparisons:
        annual = result.annual.by_category()
        total = annual["total"] or 1.0
        return [
            {
                "category": name,
                f"per_year_{cur}": money.scale(value),
                "share": value / total,
            }
            for name, value in annual.items()
        ]
    return [
        {
            **_offer_cells(c, money),
            f"owned_{cur}_per_useful_gpu_hour": money.scale(result.usd_per_useful_gpu_hour),
            "breakeven_utilization": c.breakeven_utilization,
            "breakeven_months": c.breakeven_months,
            "payback_months": c.payback_months,
        }
        for c in result.comparisons
    ]


def _cost_lines(result: TcoResult, money: Money, fmt: str) -> list[str]:
    """The fleet, its yearly cost by category, and its cost per GPU-hour and over the horizon."""
    hw, cur = result.hardware, money.code
    annual = result.annual.by_category()
    total = annual["total"] or 1.0
    cost_rows = [
        {
            "category": name,
            "per_year": money.scale(value),
            "share": f"{value / total:.0%}",
            "what": _CATEGORY_NOTES[name],
        }
        for name, value in annual.items()
    ]
    useful = f"per useful GPU-hour at {result.utilization:.0%} use:"
    u = result.utilization
    return [
        f"{hw.name}: {hw.machines} x {hw.gpus_per_machine} x {hw.gpu} ({hw.interconnect.value}), "
        f"capex {money.scale(result.capex_usd):,.0f} {cur}, {hw.lifetime_years:g}-year life",
        "",
        render_records(cost_rows, fmt, headers={"per_year": f"per year ({cur})"}, floatfmt=",.0f"),
        "",
        f"{'per GPU-hour at 100% use:':<34}{money.scale(result.usd_per_gpu_hour):,.3f} {cur}",
        f"{useful:<34}{money.scale(result.usd_per_useful_gpu_hour):,.3f} {cur}",
        f"{f'total over {result.years:g} years:':<34}{money.scale(result.total_usd):,.0f} {cur}"
        f" (net of the book value kept, {money.scale(result.residual_value_usd):,.0f})",
        f"{f'power at {u:.0%} use:':<34}{hw.power_kw_at(u):,.3g} kW a machine on average "
        f"({hw.power_kw_avg:g} kW working, {hw.idle_power_kw:,.3g} kW idle), x PUE {hw.pue:g}",
    ]


def _cloud_lines(
    result: TcoResult, comparisons: list[dict[str, Any]], money: Money, fmt: str
) -> list[str]:
    """The cheapest cloud capacity per purchase option and the cumulative cost, or why none."""
    if not result.comparisons:
        return [
            "",
            result.compare_reason
            # was "(try --compare-gpu or --offers)" to a user who had given --compare-gpu
            or f"no cloud offers with {result.compare_gpu} GPUs in these prices to compare with: "
            "compare with a GPU the clouds rent (--compare-gpu H100), or add your own price list "
            "(--offers)",
        ]
    cur = money.code
    headers = {
        f"cloud_{cur.lower()}_per_gpu_hour": f"{cur}/GPU-h",
        f"cloud_{cur.lower()}_per_owned_gpu_hour": f"{cur}/owned-GPU-h",
        "breakeven_utilization": "breakeven util",
        "breakeven_months": "breakeven month",
        "payback_months": "cash payback month",
    }
    reason = [result.compare_reason] if result.compare_reason else []
    return [
        "",
        *reason,
        f"cheapest cloud {result.compare_gpu} capacity, same useful hours at {result.utilization:.0%}:",
        render_records(comparisons, fmt, headers=headers, floatfmt=",.3f"),
        "breakeven month: owning, net of the book value kept, costs no more than renting;"
        " cash payback month: the cloud bill passes the cash paid out (no resale)",
        "",
        "cumulative cost (owned = cash out - book value kept):",
        render_records(_curve_rows(result, money), fmt, floatfmt=",.0f"),
    ]


def render_tco(
    result: TcoResult,
    fmt: str,
    *,
    currency: str = USD,
    fx: FxTable | None = None,
) -> str:
    """``fmt``: table or markdown (a report), json (one object), csv (the comparisons)."""
    if fmt == "json":
        return dumps_json(tco_record(result, currency=currency, fx=fx)) + "\n"  # printed as it is
    money = Money.of(currency, fx, key_path="--currency")
    comparisons = _comparison_rows(result, money)
    if fmt == "csv":
        return render_records(_csv_rows(result, money), "csv") + "\n"  # printed as it is
    lines = _cost_lines(result, money, fmt) + _cloud_lines(result, comparisons, money, fmt)
    notes = [result.hardware.source and f"sources: {result.hardware.source}", money.note()]
    if result.offers_source:
        notes.append(f"cloud prices as of {result.offers_as_of}: {result.offers_source}")
    lines += ["", *[n for n in notes if n]]
    return "\n".join(lines) + "\n"


def _curve_rows(result: TcoResult, money: Money) -> list[dict[str, Any]]:
    months = result.cumulative[-1].month if result.cumulative else 0
    step = 3 if months <= 24 else 6 if months <= 60 else 12
    return [
        {
            "month": p.month,
            "owned cash": money.scale(p.owned_cash_usd),
            "book value": money.scale(p.book_value_usd),
            "owned": money.scale(p.owned_usd),
            **{o: money.scale(v) for o, v in p.cloud_usd.items()},
        }
        for p in result.cumulative
        if not (p.month % step and p.month != months)
    ]


def budget_record(
    report: BudgetReport, *, currency: str = USD, fx: FxTable | None = None
) -> dict[str, Any]:
    """The JSON object of ``planner budget``: USD keys, renamed and converted when ``currency`` is
    given."""
    money = Money.of(currency, fx, key_path="--currency")
    record: dict[str, Any] = money.convert(report.to_record())
    if not money.is_usd:
        record["currency"] = money.record()
    return record


def _field_row(value: Any, money: Money) -> dict[str, Any]:
    """A result row (a dataclass) as a table row, every field in order, money in ``money``."""
    return _scale_row({f.name: getattr(value, f.name) for f in fields(value)}, money)


def _strategy_rows(report: BudgetReport, money: Money) -> list[dict[str, Any]]:
    return [
        _scale_row(
            {
                "strategy": s.strategy,
                "total_usd": s.total_usd,
                "mix_saves_usd": report.mix_saves_usd(s),
                "mix_saves_pct": report.mix_saves_pct(s),
                "note": s.note,
            },
            money,
        )
        for s in report.strategies
    ]


def render_budget(
    report: BudgetReport, fmt: str, *, currency: str = USD, fx: FxTable | None = None
) -> str:
    """``fmt``: table or markdown (a report), json (one object), csv (the plan month by month)."""
    if fmt == "json":
        return (
            dumps_json(budget_record(report, currency=currency, fx=fx)) + "\n"
        )  # printed as it is
    money = Money.of(currency, fx, key_path="--currency")
    months = [_field_row(m, money) for m in report.plan.months]
    if fmt == "csv":
        return render_records(months, "csv") + "\n"  # printed as it is
    plan = report.plan
    lines = [
        f"{plan.name}: {plan.horizon_months} months from {plan.start}, optimal mix "
        f"({plan.status}, {plan.solve_seconds:.2f} s, {plan.solver})",
        *_headline_lines(plan, money),
        *_late_purchase_lines(plan, money),
        "",
        "strategies:",
        render_records(_strategy_rows(report, money), fmt, floatfmt=",.0f"),
        "",
        "plan by month:",
        render_records(months, fmt, floatfmt=",.0f"),
    ]
    if report.sensitivity:
        rows = [_field_row(r, money) for r in report.sensitivity]
        lines += ["", "sensitivity:", render_records(rows, fmt, floatfmt=",.0f")]
    note = money.note()
    if note:
        lines += ["", note]
    return "\n".join(lines) + "\n"


def _headline_lines(plan: BudgetPlan, money: Money) -> list[str]:
    """Cash out and book value kept side by side, and the net total they make."""
    cur = money.code
    rows = [
        (
            "cash out",
            plan.cash_out_usd,
            f"paid in the {plan.horizon_months} months (the monthly rows)",
        ),
        (
            "book value kept",
            plan.book_value_kept_usd,
            "machines still in service at the end, straight-line to their resale value",
        ),
    ]
    formula = "cash out - book value kept"
    if plan.commitments_after_horizon_usd:
        rows.append(
            (
                "commitments after",
                plan.commitments_after_horizon_usd,
                "fees of commitments that run past the horizon",
            )
        )
        formula += " + commitments after"
    rows.append(("net total", plan.total_usd, formula))
    width = max(len(f"{money.scale(v):,.0f}") for _, v, _ in rows)
    return [f"  {name:<18}{money.scale(v):>{width},.0f} {cur}  {what}" for name, v, what in rows]


def _late_purchase_lines(plan: BudgetPlan, money: Money) -> list[str]:
    """A flag per purchase whose cash payback falls after the horizon."""
    lines = []
    for p in plan.late_purchases:
        when = (
            f"pays back its cash only by {p.paid_back_by} (after {p.payback_months:,.0f} months "
            "in service)"
            if p.payback_months is not None
            else "never pays back its cash against the cloud rates"
        )
        lines.append(
            f"  flag: {p.machines} x {p.hardware} ordered {p.ordered} "
            f"({money.scale(p.capex_usd):,.0f} {money.code}) {when}, after the horizon: its "
            f"saving rests on the {money.scale(p.book_value_usd):,.0f} {money.code} of book "
            "value kept"
        )
    return lines


def _scale_row(row: Mapping[str, Any], money: Money) -> dict[str, Any]:
    """Money columns (``usd`` in the name) in ``money``'s currency, renamed to its code."""
    cur = money.code.lower()
    out: dict[str, Any] = {}
    for key, v in row.items():
        parts = key.split("_")
        if "usd" not in parts:
            out[key] = v
            continue
        name = "_".join(cur if p == "usd" else p for p in parts)
        out[name] = money.scale(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v
    return out
