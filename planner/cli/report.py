"""`planner report quote|tco|budget`: the same results as documents for people.

Each subcommand takes the options of its command (`planner quote`, `tco`, `budget`) and writes
the report to stdout, or to ``--output``: HTML (one self-contained file with inline SVG charts),
Markdown for wikis, or CSV for spreadsheets.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import click

from planner import api
from planner.cli.offers import max_age_option
from planner.cli.params import NameChoice, OutputPath
from planner.cli.quote import (
    QUOTE_FIELDS,
    named_spec,
    quote_options,
    request_from_options,
    run_quote,
)
from planner.cli.report_file import check_writable, write_report
from planner.cli.tco import (
    BUDGET_FIELDS,
    TCO_FIELDS,
    budget_options,
    run_budget,
    run_tco,
    tco_options,
)
from planner.errors import ConfigError
from planner.reports.render import REPORT_FORMATS, format_for_path


def _checked_format(fmt: str, output: Path | None) -> str:
    """The format to write, checked before any work: ``-o budget.md`` alone means Markdown; an
    explicit ``--format`` that contradicts the file name is refused (HTML in a .md file), and the
    output folder must exist and be writable."""
    if output is None:
        return fmt
    check_writable(output, "--output")
    given = click.get_current_context().get_parameter_source("fmt")
    chosen = given is not click.core.ParameterSource.DEFAULT
    try:
        named = format_for_path(output)
    except ConfigError as e:
        if chosen or _device_or_pipe(output):  # report.txt --format markdown, /dev/stdout
            return fmt
        # was: HTML written into report.docx or plan.yaml, whatever the name promised
        stem = output.name.startswith(".") and output.name.count(".") == 1
        raise ConfigError(
            e.detail,
            key_path="--output",
            # a name that is an extension alone (.html) is a hidden file with no extension
            hint=f"give the file a name before its extension, e.g. report{output.name}"
            if stem
            else f"end the file name in .html, .md or .csv, or pass --format ({_FORMATS})",
        ) from None
    if named == fmt:
        return fmt
    if not chosen:
        return named
    raise ConfigError(
        f"--format {fmt} contradicts the file name {output.name!r} ({named})",
        key_path="--output",
        hint=f"pass --format {named}, or name the file {output.stem}{_SUFFIX[fmt]}",
    )


def _device_or_pipe(path: Path) -> bool:
    """Whether ``path`` is something other than a file (``/dev/stdout``, a FIFO): no name to
    tell a format from, and nothing a report replaces."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


_SUFFIX = {"html": ".html", "markdown": ".md", "csv": ".csv"}
_FORMATS = ", ".join(REPORT_FORMATS)


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        click.echo(text, nl=not text.endswith("\n"))
    else:
        write_report(text, output)


_format_option = click.option(
    "--format",
    "fmt",
    type=NameChoice(REPORT_FORMATS, kind="format"),
    default="html",
    show_default=True,
    help="html: one file with charts; markdown: for wikis; csv: the tables for spreadsheets.",
)
_output_option = click.option(
    "--output",
    "-o",
    type=OutputPath("report.html"),
    default=None,
    help="Write here instead of stdout.",
)


@click.group("report")
def report_group() -> None:
    """Reports for people who approve the spending: HTML with charts, Markdown, CSV.

    Example: planner report budget scenarios/budgets/2027-ml-platform.yaml --format markdown > budget.md
    """


@report_group.command("quote")
@QUOTE_FIELDS
@quote_options
@_format_option
@_output_option
def report_quote(fmt: str, output: Path | None, max_age_days: int, **options: Any) -> None:
    """The quote report: recommendation, plans, cost-versus-deadline frontier, assumptions.

    Example: planner report quote --workload gpt2-xl-finetune --deadline 24h -o quote.html
    """
    fmt = _checked_format(fmt, output)
    if options.get("deadline") is None:
        _refuse_service(options)
    options["pareto"] = True
    solver = options.pop("solver")
    result = run_quote(request_from_options(**options), solver)
    _emit(api.report(result, fmt, max_age_days=max_age_days, currency=options["currency"]), output)


def _refuse_service(options: dict[str, Any]) -> None:
    """A UsageError for a service workload: the quote report covers jobs by a deadline (was
    "Missing option '--deadline': ... a service is priced per month without one", as if the
    report could price it)."""
    from planner.quoting.service_quote import is_service

    try:
        spec = named_spec(options)
    except ConfigError:
        return  # the job quote names the workload's problem
    if is_service(spec):
        raise click.UsageError(
            f"{spec.name} is a service; `report quote` covers a job by a deadline: price the "
            f"service with `planner quote -w {spec.name} --format markdown`"
        )


@report_group.command("tco")
@TCO_FIELDS
@tco_options
@max_age_option
@_format_option
@_output_option
def report_tco(
    currency: str, fmt: str, output: Path | None, max_age_days: int, **options: Any
) -> None:
    """The buy-versus-rent report: cost of ownership, breakeven, cumulative cost chart.

    Example: planner report tco --hardware 8xh100-hgx --utilization 0.6 -o tco.html
    """
    fmt = _checked_format(fmt, output)
    result = run_tco(**options)
    _emit(api.report(result, fmt, currency=currency, max_age_days=max_age_days), output)


@report_group.command("budget")
@BUDGET_FIELDS
@budget_options
@max_age_option
@_format_option
@_output_option
def report_budget(
    currency: str, fmt: str, output: Path | None, max_age_days: int, **options: Any
) -> None:
    """The budget review: optimal mix by month, pure strategies, sensitivity.

    Example: planner report budget scenarios/budgets/2027-ml-platform.yaml --format markdown > budget.md
    """
    fmt = _checked_format(fmt, output)
    result = run_budget(**options)
    _emit(api.report(result, fmt, currency=currency, max_age_days=max_age_days), output)


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(report_group)
