"""`planner tco` and `planner budget` (and `planner report tco|budget`, which share their options)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from planner import api, clock
from planner.cli.offers import SnapshotRef, format_option, max_age_option
from planner.cli.params import FiniteFloat, currency_option, field_options, solver_option
from planner.cli.report_file import report_path_option, report_target, save_report
from planner.reports.tco import render_budget, render_tco

F = TypeVar("F", bound=Callable[..., Any])

# The option behind each library field these commands can be refused for.
TCO_FIELDS = field_options(
    {
        "hardware": "--hardware",
        "utilization": "--utilization",
        "years": "--years",
        "compare_gpu": "--compare-gpu",
        "currency": "--currency",
        "offers_files": "--offers",
        "snapshot_dir": "--snapshot-dir",
        "any_interconnect": "--any-interconnect",
        "providers": "--provider",
    }
)
BUDGET_FIELDS = field_options(
    {"budget": "BUDGET_FILE", "time_limit_s": "--time-limit", "currency": "--currency"}
)


def _apply(options: tuple[Callable[[Any], Any], ...]) -> Callable[[F], F]:
    def decorate(func: F) -> F:
        for option in reversed(options):
            func = option(func)
        return func

    return decorate


tco_options = _apply(
    (
        click.option(
            "--hardware",
            required=True,
            help="Hardware file (YAML path) or bundled name, e.g. 8xh100-hgx.",
        ),
        click.option(
            "--utilization",
            type=FiniteFloat(unit="fraction"),
            default=1.0,
            show_default=True,
            help="Share of available GPU-hours doing useful work, from 0.01 to 1.",
        ),
        click.option(
            "--years",
            type=FiniteFloat(unit="years"),
            default=None,
            help="Horizon in years [default: the hardware lifetime].",
        ),
        click.option(
            "--compare-gpu",
            default=None,
            help="Cloud GPU to compare with [default: the same model; for a GPU no cloud rents, "
            "the offered one of nearest dense tensor throughput with at least its memory].",
        ),
        click.option(
            "--offers",
            "offers_files",
            multiple=True,
            type=click.Path(dir_okay=False),
            help="Private price CSV in the common offer schema (repeatable).",
        ),
        click.option(
            "--snapshot-dir",
            "--snapshot",
            "snapshot_dir",
            type=SnapshotRef(),
            default=None,
            help="Use exactly this snapshot (its folder, or its id from `planner prices status`).",
        ),
        click.option(
            "--provider",
            "providers",
            multiple=True,
            help="Compare only with these providers (repeatable) [default: all].",
        ),
        click.option("--no-cloud", is_flag=True, help="Skip the cloud comparison."),
        click.option(
            "--any-interconnect",
            is_flag=True,
            help="Compare with cloud instances of any GPU link.",
        ),
        currency_option,
    )
)

budget_options = _apply(
    (
        click.argument("budget_file"),
        click.option(
            "--no-sensitivity",
            is_flag=True,
            help="Skip the sensitivity table (one solve instead of many).",
        ),
        click.option(
            "--time-limit",
            type=FiniteFloat(unit="s"),
            default=60.0,
            show_default=True,
            help="Seconds per MILP solve.",
        ),
        solver_option,
        currency_option,
    )
)


def run_tco(
    *,
    hardware: str,
    utilization: float,
    years: float | None,
    compare_gpu: str | None,
    offers_files: tuple[str, ...],
    snapshot_dir: str | None,
    providers: tuple[str, ...],
    no_cloud: bool,
    any_interconnect: bool,
) -> api.TcoResult:
    return api.tco(
        hardware,
        utilization=utilization,
        years=years,
        compare_gpu=compare_gpu,
        offers_files=offers_files,
        snapshot_dir=snapshot_dir,
        with_cloud=not no_cloud,
        any_interconnect=any_interconnect,
        providers=providers,
    )


def run_budget(*, budget_file: str, no_sensitivity: bool, time_limit: float, solver: str) -> Any:
    return api.budget(
        budget_file, sensitivity=not no_sensitivity, time_limit_s=time_limit, solver=solver
    )


@click.command("tco")
@TCO_FIELDS
@tco_options
@format_option
@report_path_option
@max_age_option
def tco_command(currency: str, fmt: str, report_path: Path | None, **options: Any) -> None:
    """Total cost of owning GPU hardware, and when it beats renting.

    Yearly cost by category (depreciation, financing, power, colocation, support, staff), cost per
    GPU-hour and per useful GPU-hour, and the breakeven utilization and month against the cheapest
    cloud capacity (on-demand, spot, 1- and 3-year reserved) in the price snapshot.

    Example: planner tco --hardware scenarios/hardware/8xh100-hgx.yaml --utilization 0.6 --report tco.html
    """
    target = report_target(report_path)
    max_age_days = options.pop("max_age_days")
    result = run_tco(**options)
    click.echo(render_tco(result, fmt, currency=currency), nl=False)
    if fmt == "csv" and not result.comparisons and result.compare_reason:
        # the CSV is the comparison rows: none, and the reason was in no output (JSON has it)
        click.echo(f"note: {result.compare_reason}", err=True)
    life = result.hardware.lifetime_years
    if result.years > life:
        # was said only in the cumulative table's footnote (finding: a 10-year horizon of a 4-year
        # server read as a priced replacement)
        click.echo(
            f"warning: the {result.years:g}-year horizon runs past the hardware's {life:g}-year "
            f"lifetime: after year {life:g} the machines run fully depreciated (running costs "
            "only, no replacement bought); set lifetime_years in the hardware file to spread the "
            "capex over the horizon",
            err=True,
        )
    for warning in api.stale_warnings(result, max_age_days):
        click.echo(f"warning: {warning}", err=True)
    save_report(result, target, currency=currency, max_age_days=max_age_days)


@click.command("budget")
@BUDGET_FIELDS
@budget_options
@format_option
@report_path_option
@max_age_option
def budget_command(currency: str, fmt: str, report_path: Path | None, **options: Any) -> None:
    """Cheapest mix of owned servers, commitments, on-demand and spot over a planning horizon.

    Solves a MILP over the months of the budget file and shows the plan month by month, the pure
    strategies (all on-demand, all reserved, all owned) next to the optimal mix, and how the
    choice moves with utilization, electricity price and the cloud discount.

    Example: planner budget scenarios/budgets/2027-ml-platform.yaml --report budget.html
    """
    target = report_target(report_path)
    max_age_days = options.pop("max_age_days")
    report = run_budget(**options)
    click.echo(render_budget(report, fmt, currency=currency), nl=False)
    for warning in report.stale_warnings(clock.utc_today(), max_age_days):
        click.echo(f"warning: {warning}", err=True)
    save_report(report, target, currency=currency)


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(tco_command)
    group.add_command(budget_command)
