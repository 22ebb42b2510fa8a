"""`planner offers` and `planner gpus`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from planner import api
from planner.catalog import DEFAULT_MAX_AGE_DAYS
from planner.catalog.query import SORT_KEYS, OfferFilter, unknown_host_notes
from planner.cli.params import (
    FiniteFloat,
    LinkChoice,
    NameChoice,
    WholeNumber,
    currency_option,
    field_options,
)
from planner.gpu_specs import load_gpu_catalog
from planner.reports.formatting import Money
from planner.reports.offers import provenance_lines, render_gpus, render_offers
from planner.reports.tables import FORMATS
from planner.schema import Interconnect, PurchaseOption
from planner.units import HOURS_PER_MONTH

format_option = click.option(
    "--format",
    "fmt",
    type=NameChoice(FORMATS, kind="format"),
    default="table",
    show_default=True,
    help="Output format.",
)
offers_file_option = click.option(
    "--offers",
    "offers_files",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Private price list (CSV in the common schema); its rows replace matching snapshot rows. Repeatable.",
)


class SnapshotRef(click.ParamType):
    """A price snapshot: its folder, or its id as `planner prices status` and `prices diff` show
    it (``reference-2026-11-25``).  Was click's "Directory 'reference-2026-11-25' does not exist."
    for the id those commands print, and the same bare words for a blank value."""

    name = "folder"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, Path):
            return value
        if not str(value).strip():
            self.fail(
                "is blank: name a snapshot folder, or an id from `planner prices status` (or "
                "leave the option out for the newest snapshots)",
                param,
                ctx,
            )
        from planner.catalog.refresh import find_snapshot
        from planner.catalog.store import default_roots
        from planner.errors import ConfigError

        try:
            return find_snapshot(str(value), default_roots())
        except ConfigError as e:
            self.fail(f"{e.message}{f'; {e.hint}' if e.hint else ''}", param, ctx)


snapshot_option = click.option(
    "--snapshot",
    "snapshot_dir",
    type=SnapshotRef(),
    help="Use exactly this snapshot (its folder, or its id from `planner prices status`) "
    "instead of the newest per provider.",
)
MAX_AGE_ENVVAR = "PLANNER_MAX_PRICE_AGE_DAYS"


class _MaxAgeDays(WholeNumber):
    """Days >= 0; a bad value from ``PLANNER_MAX_PRICE_AGE_DAYS`` is blamed on the variable,
    not on ``--max-age-days`` (which the user never typed)."""

    def __init__(self) -> None:
        super().__init__(min=0)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as e:
            from_env = (
                ctx is not None
                and param is not None
                and param.name is not None
                and ctx.get_parameter_source(param.name) is ParameterSource.ENVIRONMENT
            )
            if not from_env:
                raise
            # the option's own fix, in the variable's words (was: no word of 4w being 28 days)
            fix = e.message.partition(": ")[2].replace("--max-age-days", MAX_AGE_ENVVAR)
            raise click.BadParameter(
                f"{value!r} is not a whole number of days >= 0; "
                + (f"{fix}; " if fix else "")
                + f"set it to one (e.g. {MAX_AGE_ENVVAR}={DEFAULT_MAX_AGE_DAYS}) or unset it",
                ctx=ctx,
                param_hint=f"environment variable {MAX_AGE_ENVVAR}",
            ) from e


max_age_option = click.option(
    "--max-age-days",
    type=_MaxAgeDays(),
    default=DEFAULT_MAX_AGE_DAYS,
    show_default=True,
    envvar=MAX_AGE_ENVVAR,
    help="Warn when prices are older than this.",
)


def echo_provenance(
    book: api.OfferBook, fmt: str, max_age_days: int, providers: tuple[str, ...] = ()
) -> None:
    """Provenance under a table on stdout; for machine formats, only warnings, on stderr; of the
    ``providers`` asked for where given (was every provider's: ``--provider aws`` warned about
    azure's prices)."""
    for line in provenance_lines(book, max_age_days, providers):
        if fmt in ("table", "markdown"):
            click.echo(line)
        elif line.startswith("warning:"):
            click.echo(line, err=True)


@click.command("offers")
@field_options(
    {
        "providers": "--provider",
        "regions": "--region",
        "gpus": "--gpu",
        "limit": "--limit",
        "group_by": "--group-by",
        "min_vcpus": "--min-vcpus",
        "min_host_memory_gib": "--min-host-memory",
        "min_local_disk_gb": "--min-local-disk",
        "offers_files": "--offers",
    }
)
@click.option(
    "--provider", "providers", multiple=True, help="aws, gcp, azure, lambda (repeatable)."
)
@click.option(
    "--region", "regions", multiple=True, help="Provider region, e.g. us-east-1 (repeatable)."
)
@click.option(
    "--gpu",
    "gpus",
    multiple=True,
    help="GPU model, alias or family (A100-80GB, 'h100 sxm'; A100 is both sizes), with GPUs per "
    "instance (H100:8, A100:80GB:8), or a memory range (24GB.., 40GB..80GB). Repeatable.",
)
@click.option("--min-gpus", type=WholeNumber(min=1), help="At least this many GPUs per instance.")
@click.option(
    "--min-gpu-memory",
    type=FiniteFloat(min=0, unit="GiB"),
    help="At least this much memory per GPU, GiB.",
)
@click.option(
    "--min-total-gpu-memory",
    type=FiniteFloat(min=0, unit="GiB"),
    help="At least this much GPU memory per instance, GiB.",
)
@click.option("--min-vcpus", type=FiniteFloat(min=0), help="At least this many vCPUs per instance.")
@click.option(
    "--min-host-memory",
    type=FiniteFloat(min=0, unit="GiB"),
    help="At least this much host RAM, GiB.",
)
@click.option(
    "--min-local-disk",
    type=FiniteFloat(min=0, unit="GB"),
    help="At least this much instance-store / local SSD per instance, GB (1000 for 1 TB); "
    "offers that do not state it are left out, and counted in a note.",
)
@click.option(
    "--show-local-disk",
    is_flag=True,
    help="Add the local disk column (GB; '-' not known, 0 network disks only) to the table; "
    "--min-local-disk adds it too.",
)
@click.option(
    "--max-price",
    type=FiniteFloat(min=0),
    help="At most this much per instance-hour (per month of 730 hours with --period month), in "
    "--currency (default USD).",
)
@click.option(
    "--purchase",
    type=NameChoice(
        [p.value for p in PurchaseOption if p is not PurchaseOption.OWNED], kind="purchase option"
    ),
    default=PurchaseOption.ON_DEMAND.value,
    show_default=True,
    help="Which price to show, filter and sort on.",
)
@click.option(
    "--interconnect",
    type=LinkChoice([i.value for i in Interconnect], "interconnect"),
    help="At least this GPU-GPU link (none < pcie < nvlink < nvswitch).",
)
@click.option(
    "--sort",
    type=NameChoice(list(SORT_KEYS)),
    default="price",
    show_default=True,
)
@click.option("--desc", is_flag=True, help="Sort descending.")
@click.option("--limit", type=WholeNumber(min=1), help="Show at most this many rows.")
@click.option(
    "--period",
    type=NameChoice(["hour", "month"]),
    default="hour",
    show_default=True,
    help="Show prices per hour or per month of 730 hours (tables; JSON and CSV stay USD per hour, "
    "a price list --offers reads back; so does --currency).",
)
@click.option(
    "--group-by",
    "group_by",
    help="Show the cheapest offer per gpu, provider or region (comma-separated: gpu,provider).",
)
@currency_option
@format_option
@offers_file_option
@snapshot_option
@max_age_option
def offers_command(
    providers: tuple[str, ...],
    regions: tuple[str, ...],
    gpus: tuple[str, ...],
    min_gpus: int | None,
    min_gpu_memory: float | None,
    min_total_gpu_memory: float | None,
    min_vcpus: float | None,
    min_host_memory: float | None,
    min_local_disk: float | None,
    show_local_disk: bool,
    max_price: float | None,
    purchase: str,
    interconnect: str | None,
    sort: str,
    desc: bool,
    limit: int | None,
    period: str,
    group_by: str | None,
    currency: str,
    fmt: str,
    offers_files: tuple[Path, ...],
    snapshot_dir: Path | None,
    max_age_days: int,
) -> None:
    """List GPU instance offers from AWS, GCP, Azure and Lambda out of one table.

    Example: planner offers --gpu A100-80GB --max-price 40 --sort price

    Host filters: planner offers --gpu H100:8 --min-vcpus 192 --min-local-disk 10000
    """
    money = Money.of(currency, key_path="--currency")
    typed = max_price
    if max_price is not None:
        max_price /= money.per_usd  # given in --currency
        if period == "month":
            # in the unit the table shows (was per hour whatever --period said: 1000 a month
            # passed every offer without a word)
            max_price /= HOURS_PER_MONTH
    flt = OfferFilter(
        providers=providers,
        regions=regions,
        gpus=gpus,
        min_gpu_count=min_gpus,
        min_gpu_memory_gib=min_gpu_memory,
        min_total_gpu_memory_gib=min_total_gpu_memory,
        min_vcpus=min_vcpus,
        min_host_memory_gib=min_host_memory,
        min_local_disk_gb=min_local_disk,
        max_price_usd_per_hour=max_price,
        purchase_option=PurchaseOption(purchase),
        min_interconnect=Interconnect(interconnect) if interconnect else None,
    )
    result = api.offers(
        flt,
        sort=sort,
        descending=desc,
        limit=limit,
        group_by=[k.strip() for k in group_by.split(",")] if group_by is not None else (),
        offers_files=offers_files,
        snapshot_dir=snapshot_dir,
    )
    people = fmt in ("table", "markdown")
    shown = render_offers(
        result.offers,
        fmt,
        period=period,
        purchase=purchase,
        money=money if people else Money(),
        local_disk=show_local_disk or min_local_disk is not None,
    )
    click.echo(shown.rstrip("\n"))
    if people:
        click.echo(f"\n{len(result.offers)} offers")
        if not money.is_usd:
            click.echo(money.note())
    if result.why_empty:
        why = result.why_empty
        if (
            "(price filter)" in why
            and typed is not None
            and (period == "month" or not money.is_usd)
        ):
            # was: "at or below 0.0547945 USD per instance-hour", a figure the user never typed
            why += (
                f" (--max-price {typed:g} {money.code} a {'month' if period == 'month' else 'hour'}"
                f" is that figure{'; for a price an hour drop --period month' if period == 'month' else ''})"
            )
        click.echo(f"note: {why}", err=True)
    for note in unknown_host_notes(result.book.offers, flt, load_gpu_catalog()):
        click.echo(f"note: {note}", err=True)
    echo_provenance(result.book, fmt, max_age_days, providers)


@click.command("gpus")
@field_options({"offers_files": "--offers"})
@currency_option
@format_option
@offers_file_option
@snapshot_option
@max_age_option
def gpus_command(
    currency: str,
    fmt: str,
    offers_files: tuple[Path, ...],
    snapshot_dir: Path | None,
    max_age_days: int,
) -> None:
    """List the GPU catalog: memory, bandwidth, dense tensor and FP32 TFLOPS, TDP, link, where offered.

    Example: planner gpus --format json
    """
    money = Money.of(currency, key_path="--currency")
    session = api.Planner(offers_files=offers_files, snapshot_dir=snapshot_dir)
    click.echo(render_gpus(session.gpus(), fmt, money=money).rstrip("\n"))
    if fmt in ("table", "markdown") and not money.is_usd:
        click.echo(f"\n{money.note()}")
    for warning in session.book.stale_warnings(max_age_days):  # the "from" prices' age
        click.echo(f"warning: {warning}", err=True)


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(offers_command)
    group.add_command(gpus_command)
