"""`planner prices status|refresh|diff|history`."""

from __future__ import annotations

import shutil
import sys
import textwrap
from typing import TYPE_CHECKING, Any

import click

from planner import api
from planner.cli.logs import redact
from planner.cli.offers import format_option, max_age_option
from planner.cli.params import FiniteFloat, SubcommandGroup, field_options
from planner.cli.progress import RegionProgress
from planner.errors import ConfigError, PlannerError
from planner.reports.tables import dumps_json, render_records

if TYPE_CHECKING:
    from planner.catalog.refresh import RefreshResult


@click.group(
    "prices",
    cls=SubcommandGroup,
    synonyms={"show": "status", "list": "status", "ls": "status", "update": "refresh"}
    | {"fetch": "refresh", "compare": "diff"},
)
def prices_group() -> None:
    """Price snapshots: what you have, refreshing them from the clouds, what changed.

    Example: planner prices status
    """


@prices_group.command("status")
@max_age_option
@format_option
def status_command(max_age_days: int, fmt: str) -> None:
    """Each provider's snapshot in use: as-of dates (oldest, newest), age, rows, source, stale or
    not, and the snapshot's notes on how its prices and dates were obtained (under each provider;
    keys notes, snapshot_notes and as_of_basis in JSON).

    Example: planner prices status --format json
    """
    records = api.prices_status(max_age_days=max_age_days)
    click.echo(_status_text(records, fmt))


# Shown under the table rather than in it: sentences, not cells.
_NOTE_KEYS = ("notes", "snapshot_notes", "refresh")


def _status_text(records: list[dict[str, Any]], fmt: str) -> str:
    """The status table with each provider's notes wrapped under its line, and each snapshot's
    own notes once below; other formats carry the notes as fields."""
    if fmt != "table" or not records:
        return render_records(records, fmt)
    columns = [c for c in records[0] if c not in _NOTE_KEYS]
    table = render_records(records, fmt, columns=columns).splitlines()
    head, rows = table[:2], table[2:]
    width = max(60, min(shutil.get_terminal_size((100, 24)).columns, 120))
    lines = list(head)
    for record, row in zip(records, rows, strict=True):
        lines.append(row)
        for label, key in (("notes", "notes"), ("stale", "refresh")):
            text = record.get(key)
            if text:
                lines += textwrap.wrap(
                    f"{label}: {text}", width, initial_indent="    ", subsequent_indent="      "
                )
    snapshot_notes = {r["snapshot"]: r.get("snapshot_notes") for r in records}
    for snapshot, text in snapshot_notes.items():
        if text:
            lines.append("")
            lines += textwrap.wrap(f"{snapshot}: {text}", width, subsequent_indent="  ")
    return "\n".join(lines)


@prices_group.command("refresh")
@click.option(
    "--provider",
    "providers",
    multiple=True,
    help="A registered provider (aws, gcp, azure, lambda) or all (repeatable; default all).",
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
@click.option(
    "--accept-changes",
    "accept_changes",
    multiple=True,
    metavar="CHANGE",
    help="Publish a change the sanity gates refuse: PROVIDER:REGION:INSTANCE_TYPE[:PRICE]"
    " (e.g. aws:us-east-1:p5.48xlarge, aws:us-east-1:p5.48xlarge:spot), PROVIDER:REGION for a"
    " region's row count, globs (aws:*:p5.*) or all. Repeatable or comma-separated; the refusal"
    " names each change's id.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Fetch and check, write nothing: list what would change and which gates refuse it"
    " (exit 1 when a refresh would refuse to publish).",
)
@click.option(
    "--force", is_flag=True, help="Publish whatever the sanity gates say (prefer --accept-changes)."
)
@format_option
@field_options(
    {"providers": "--provider", "regions": "--region", "accept_changes": "--accept-changes"}
)
def refresh_command(
    providers: tuple[str, ...],
    regions: tuple[str, ...],
    allow_partial: bool,
    accept_changes: tuple[str, ...],
    dry_run: bool,
    force: bool,
    fmt: str,
) -> None:
    """Fetch live specs and prices and publish a new snapshot in your data directory.

    AWS and Azure need no account: their public price files and APIs are read (AWS credentials,
    when found, switch to the AWS APIs; AZURE_SUBSCRIPTION_ID reads VM specs from the
    subscription).  GCP needs an API key (PLANNER_GCP_API_KEY) or application-default
    credentials, Lambda LAMBDA_API_KEY.  The README lists each endpoint's mirror variable.  Throttling and server errors are retried.  Before publishing, sanity gates refuse prices that are zero (or round to $0.0000/h), prices that
    vanished for an instance still listed, price moves beyond x3 and regions that lost half their
    rows; the refusal names each change, and --accept-changes with its id publishes it.
    --dry-run shows what a refresh would publish (the changes, as `prices diff` lists them, and
    every gate's verdict) without writing.

    Example: planner prices refresh --provider aws --region us-east-1 --region us-west-2

    Example: planner prices refresh --provider aws --dry-run --accept-changes 'aws:*:p5.*'
    """
    with RegionProgress(sys.stderr) as progress:  # drawn only when stderr is a terminal
        try:
            result = api.refresh_prices(
                providers,
                regions,
                allow_partial=allow_partial,
                force=force,
                accept_changes=accept_changes,
                dry_run=dry_run,
                on_progress=progress,
            )
        except PlannerError as e:  # adapters' messages may quote a request: no credential in it
            raise _scrubbed(e) from None
    if dry_run:
        _echo_dry_run(result, fmt)
    else:
        _echo_published(result, fmt)
    for failure in result.failures:
        click.echo(
            redact(
                f"warning: {failure.provider} {failure.region} not refreshed ({failure.error});"
                " its previous rows were kept"
            ),
            err=True,
        )
    for hint in dict.fromkeys(f.hint for f in result.failures if f.hint):
        click.echo(redact(f"  hint: {hint}"), err=True)
    # each item once (Lambda answers one catalog for every region: was listed once a region)
    unmapped = list(dict.fromkeys(result.unmapped))
    if unmapped:
        click.echo(f"note: {len(unmapped)} item(s) left out, not guessed:", err=True)
        for item in unmapped:
            click.echo(f"  {item.provider} {item.item}: {item.reason}", err=True)
    for pattern in result.unused_accepts:
        click.echo(f"note: --accept-changes {pattern} matched no refused change", err=True)
    if dry_run:
        verdict = (
            f"dry run: a refresh would refuse to publish ({len(result.blocking)} change(s) not"
            " accepted); nothing was written"
            if result.blocking
            else "dry run: a refresh would publish this; nothing was written"
        )
        click.echo(verdict, err=True)
        if result.blocking:
            sys.exit(1)
    elif result.snapshot is not None:
        click.echo(f"published {result.snapshot}", err=True)


def _scrubbed(error: PlannerError) -> PlannerError:
    """``error`` with anything credential-like in its message and hint redacted."""
    error.message = redact(error.message)
    error.hint = redact(error.hint) if error.hint else error.hint
    error.args = (error.message,)
    return error


def _echo_published(result: RefreshResult, fmt: str) -> None:
    records: list[dict[str, Any]] = [
        {
            "provider": name,
            "regions": ", ".join(result.fetched_regions.get(name, ())),
            "rows": rows,
            "snapshot": result.snapshot.name if result.snapshot else None,
        }
        for name, rows in sorted(result.rows.items())
    ]
    click.echo(render_records(records, fmt))
    for finding in result.findings:
        how = "under --force" if finding.accepted_by == "--force" else "as accepted"
        # the change without its "; accept with ..." (it was accepted)
        shown = finding.message.split("; accept with")[0]
        click.echo(f"warning: published {how}: {shown}", err=True)


def _echo_dry_run(result: RefreshResult, fmt: str) -> None:
    """What a refresh would publish: JSON as one document (changes and gates); the other formats
    list the changes on stdout and the gates' verdicts after them (table) or on stderr."""
    gates = [f.to_dict() for f in result.findings]
    if fmt == "json":
        document = {
            "dry_run": True,
            "would_publish": not result.blocking,
            "rows": result.rows,
            "fetched_regions": {k: list(v) for k, v in result.fetched_regions.items()},
            "changes": list(result.changes),
            "gates": gates,
        }
        click.echo(dumps_json(document))
        return
    if result.changes:
        click.echo(render_records(list(result.changes), fmt))
    elif fmt in ("table", "markdown"):
        click.echo("no offers added or removed and no price moved more than 5%")
    else:  # no changes: a CSV of the header alone, as prices diff writes (was nothing at all)
        from planner.catalog.refresh import DIFF_COLUMNS

        click.echo(render_records([], fmt, columns=DIFF_COLUMNS).rstrip("\n"))
    for finding in result.findings:
        verdict = "refuses" if finding.accepted_by is None else f"accepted by {finding.accepted_by}"
        click.echo(f"gate {finding.gate} {verdict}: {finding.message}", err=fmt != "table")


@prices_group.command("diff")
@click.argument("old")
@click.argument("new")
@click.option(
    "--threshold",
    type=FiniteFloat(min=0, unit="percent"),
    default=5.0,
    show_default=True,
    help="Report price moves above this many percent.",
)
@format_option
@field_options({"old": "OLD", "new": "NEW"})
def diff_command(old: str, new: str, threshold: float, fmt: str) -> None:
    """What changed between two snapshots (ids from `prices status`/`history`, or directories).

    To see what a refresh would publish, before it does: planner prices refresh --dry-run
    (the same changes, and which sanity gates refuse them).

    Example: planner prices diff reference-2026-11-25 2026-11-22T101500Z-aws
    """
    from planner.catalog.refresh import DIFF_COLUMNS

    records = api.diff_snapshots(old, new, threshold=threshold / 100)
    if not records and fmt in ("table", "markdown"):
        click.echo(f"no offers added or removed and no price moved more than {threshold:g}%")
        return
    # no changes: a CSV of the header alone (was two blank lines, no document)
    click.echo(render_records(records, fmt, columns=None if records else DIFF_COLUMNS).rstrip("\n"))


@prices_group.command("history")
@click.argument("instance", required=False)
@click.option("--instance", "instance_type", help="Instance type, e.g. p4d.24xlarge.")
@click.option("--region", help="Only this region.")
@format_option
@field_options({"instance_type": ("--instance", "INSTANCE"), "region": "--region"})
def history_command(
    instance: str | None, instance_type: str | None, region: str | None, fmt: str
) -> None:
    """One instance type's prices across every stored snapshot, oldest first.

    The instance type is given as --instance or alone (was: "Missing option '--instance'" for
    planner prices history p5.48xlarge).

    Example: planner prices history --instance p4d.24xlarge --region us-east-1
    """
    if instance is not None and instance_type is not None and instance != instance_type:
        raise ConfigError(
            f"two instance types, {instance!r} and --instance {instance_type!r}",
            key_path="--instance",
            hint="give one: planner prices history p4d.24xlarge",
        )
    instance_type = instance_type if instance_type is not None else instance
    if instance_type is None:
        raise ConfigError(
            "which instance type?",
            key_path="--instance",
            hint="give one: planner prices history p4d.24xlarge (or --instance p4d.24xlarge)",
        )
    records = api.prices_history(instance_type, region=region)
    if not records and fmt == "table":
        click.echo("no stored snapshot yet", err=True)  # an empty store: nothing to compare
        return
    click.echo(render_records(records, fmt))


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(prices_group)
