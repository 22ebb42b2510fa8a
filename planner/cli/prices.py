"""`planner prices status|refresh|diff|history`."""

from __future__ import annotations

import contextlib
import sys
from typing import Any

import click

from planner import api
from planner.cli.offers import format_option, max_age_option
from planner.cli.params import FiniteFloat, field_options
from planner.reports.tables import render_records


@click.group("prices")
def prices_group() -> None:
    """Price snapshots: what you have, refreshing them from the clouds, what changed.

    Example: planner prices status
    """


@prices_group.command("status")
@max_age_option
@format_option
def status_command(max_age_days: int, fmt: str) -> None:
    """Each provider's snapshot in use: as-of dates (oldest, newest), age, rows, source, stale or not.

    Example: planner prices status --format json
    """
    records = api.prices_status(max_age_days=max_age_days)
    click.echo(render_records(records, fmt))


@prices_group.command("refresh")
@click.option(
    "--provider",
    "providers",
    multiple=True,
    help="aws, gcp, azure or all (repeatable; default all).",
)
@click.option(
    "--region",
    "regions",
    multiple=True,
    help="Region to fetch (repeatable); provider:region when several providers are chosen.",
)
@click.option(
    "--allow-partial", is_flag=True, help="Publish the regions that succeeded when others fail."
)
@click.option("--force", is_flag=True, help="Publish even when the sanity gates object.")
@format_option
@field_options({"providers": "--provider", "regions": "--region"})
def refresh_command(
    providers: tuple[str, ...], regions: tuple[str, ...], allow_partial: bool, force: bool, fmt: str
) -> None:
    """Fetch live specs and prices and publish a new snapshot in your data directory.

    Needs the provider's extra (pip install 'planner[aws]') and its usual credentials.

    Example: planner prices refresh --provider aws --region us-east-1 --region us-west-2
    """
    with contextlib.ExitStack() as stack:
        bars: list[Any] = []

        def progress(provider: str, region: str, done: int, total: int) -> None:
            if not bars:  # the library knows the total only once it has planned the regions
                bar = click.progressbar(length=total, file=sys.stderr)
                bars.append(stack.enter_context(bar))
            bars[0].label = f"{provider} {region}"
            bars[0].update(1)

        result = api.refresh_prices(
            providers, regions, allow_partial=allow_partial, force=force, on_progress=progress
        )
    records: list[dict[str, Any]] = [
        {
            "provider": name,
            "regions": ", ".join(result.fetched_regions.get(name, ())),
            "rows": rows,
            "snapshot": result.snapshot.name,
        }
        for name, rows in sorted(result.rows.items())
    ]
    click.echo(render_records(records, fmt))
    for failure in result.failures:
        click.echo(
            f"warning: {failure.provider} {failure.region} not refreshed ({failure.error});"
            " its previous rows were kept",
            err=True,
        )
    for hint in dict.fromkeys(f.hint for f in result.failures if f.hint):
        click.echo(f"  hint: {hint}", err=True)
    for finding in result.forced:
        click.echo(f"warning: published under --force: {finding}", err=True)
    if result.unmapped:
        click.echo(f"note: {len(result.unmapped)} item(s) left out, not guessed:", err=True)
        for item in result.unmapped:
            click.echo(f"  {item.provider} {item.item}: {item.reason}", err=True)
    click.echo(f"published {result.snapshot}", err=True)


@prices_group.command("diff")
@click.argument("old")
@click.argument("new")
@click.option(
    "--threshold",
    type=FiniteFloat(min=0),
    default=5.0,
    show_default=True,
    help="Report price moves above this many percent.",
)
@format_option
def diff_command(old: str, new: str, threshold: float, fmt: str) -> None:
    """What changed between two snapshots (ids from `prices status`/`history`, or directories).

    Example: planner prices diff reference-2026-11-21 2026-11-22T101500Z-aws
    """
    records = api.prices_diff(old, new, threshold=threshold / 100)
    if not records and fmt == "table":
        click.echo(f"no offers added or removed and no price moved more than {threshold:g}%")
        return
    click.echo(render_records(records, fmt))


@prices_group.command("history")
@click.option(
    "--instance", "instance_type", required=True, help="Instance type, e.g. p4d.24xlarge."
)
@click.option("--region", help="Only this region.")
@format_option
@field_options({"instance_type": "--instance", "region": "--region"})
def history_command(instance_type: str, region: str | None, fmt: str) -> None:
    """One instance type's prices across every stored snapshot, oldest first.

    Example: planner prices history --instance p4d.24xlarge --region us-east-1
    """
    records = api.prices_history(instance_type, region=region)
    if not records and fmt == "table":
        click.echo("no stored snapshot yet", err=True)  # an empty store: nothing to compare
        return
    click.echo(render_records(records, fmt))


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(prices_group)
