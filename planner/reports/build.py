"""Renderers for ``planner build``: machines, their bills of materials and their runs."""

from __future__ import annotations

from typing import Any

from planner.ownership.build import BuildResult, MachinePlan
from planner.reports.formatting import Money
from planner.reports.tables import dumps_json, render_records


def _hours(h: float) -> str:
    return f"{h * 60:.0f} min" if h < 1 else f"{h:,.1f} h"


def _read(mb_per_s: float) -> str:
    return f" read at {mb_per_s:,.0f} MB/s" if mb_per_s >= 1 else ""


def machine_record(plan: MachinePlan, money: Money) -> dict[str, Any]:
    """One machine as JSON: its parts with prices and sources, its host, its runs."""
    n = plan.needs
    return money.convert(
        {
            "label": plan.label,
            "name": plan.name,
            "gpu": plan.gpu,
            "gpus": plan.gpus,
            "interconnect": plan.interconnect.value,
            "total_usd": plan.total_usd,
            "cost_usd_per_hour": plan.cost_usd_per_hour,
            "hours_per_month": plan.hours_per_month,
            "needs": {
                "cpu_cores": n.cpu_cores,
                "ram_gb": n.ram_gb,
                "storage_gb": n.storage_gb,
                "read_mb_per_s": n.read_mb_per_s,
                "psu_watts": n.psu_watts,
                "draw_watts": n.draw_watts,
                "gpu_slots": n.gpu_slots,
                "pcie_lanes": n.pcie_lanes,
            },
            "parts": [
                {
                    "role": line.role,
                    "name": line.part.name,
                    "quantity": line.quantity,
                    "unit_price_usd": line.part.price_usd,
                    "price_usd": line.price_usd,
                    "price_as_published": line.part.price_text,
                    "as_of": line.part.as_of,
                    "source": line.part.source,
                }
                for line in plan.lines
            ],
            "runs": [
                {
                    "workload": r.workload,
                    "runs_per_month": r.runs_per_month,
                    "hours": r.hours,
                    "cost_usd": r.cost_usd,
                    "strategy": r.strategy,
                }
                for r in plan.runs
            ],
            "hardware_yaml": plan.hardware_yaml(),
        }
    )


def render_build(result: BuildResult, fmt: str, *, money: Money) -> str:
    if fmt == "json":
        doc: dict[str, Any] = {
            "budget_usd": result.budget_usd,
            "parts_as_of": result.parts_as_of,
            "machines": [machine_record(p, money) for p in result.machines],
            "left_out": list(result.left_out),
        }
        doc = money.convert(doc)
        if not money.is_usd:
            doc["currency"] = money.record()
        return dumps_json(doc)
    if fmt == "csv":
        rows = [
            {
                "machine": plan.name,
                "label": plan.label,
                "role": line.role,
                "part": line.part.name,
                "quantity": line.quantity,
                f"price_{money.code.lower()}": round(money.scale(line.price_usd), 2),
                "as_of": line.part.as_of,
                "source": line.part.source,
            }
            for plan in result.machines
            for line in plan.lines
        ]
        return render_records(rows, "csv")
    kind = "markdown" if fmt == "markdown" else "table"
    out: list[str] = []
    budget = f" within {money(result.budget_usd)}" if result.budget_usd is not None else ""
    out.append(f"Machines for the workloads{budget} (parts priced as of {result.parts_as_of})")
    for i, plan in enumerate(result.machines, 1):
        n = plan.needs
        out += [
            "",
            f"{i}. {plan.label or 'alternative'}: {plan.gpus} x {plan.gpu}, {money(plan.total_usd)}"
            f"; {_hours(plan.hours_per_month)} of runs a month",
            f"   needs: {n.cpu_cores} CPU cores, {n.ram_gb:,.0f} GB RAM, {n.storage_gb:,.0f} GB "
            f"storage{_read(n.read_mb_per_s)}, "
            + (
                f"{n.draw_watts:,.0f} W rated draw (the server's own supplies)"
                if plan.lines[0].role == "system"
                else f"{n.psu_watts:,.0f} W supply ({n.draw_watts:,.0f} W rated draw + 30%), "
                f"{n.gpu_slots} GPU slots, {n.pcie_lanes} PCIe lanes"
            ),
            render_records(
                [
                    {
                        "part": line.role,
                        "model": line.part.name,
                        "qty": line.quantity,
                        "price": money(line.price_usd),
                        "as published": line.part.price_text,
                        "as of": line.part.as_of,
                        "source": line.part.source,
                    }
                    for line in plan.lines
                ],
                kind,
            ),
            render_records(
                [
                    {
                        "workload": r.workload,
                        "runs/month": f"{r.runs_per_month:g}",
                        "hours per run": _hours(r.hours),
                        "cost per run": money(r.cost_usd),
                        "strategy": r.strategy,
                    }
                    for r in plan.runs
                ],
                kind,
            ),
        ]
    out += [
        "",
        "Cost per run: the machine's price less 10% resale over 4 years, plus electricity at "
        "0.16 USD/kWh (assumptions; the hardware file written with -o holds them to edit).",
    ]
    if not money.is_usd:
        out.append(money.note())
    return "\n".join(out)
