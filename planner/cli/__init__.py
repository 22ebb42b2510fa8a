"""The ``planner`` command line: a thin skin over :mod:`planner.api`.

Each command parses its arguments, calls one library function, renders the result with
:mod:`planner.reports` and echoes it.  Only :class:`~planner.errors.PlannerError` is turned into a
clean message (exit code from the error); anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import logging
import sys

import click

from planner import __version__
from planner.errors import PlannerError


class PlannerGroup(click.Group):
    """A click group that reports PlannerError as a one-paragraph message and an exit code."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except PlannerError as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(e.exit_code)


@click.group(cls=PlannerGroup)
@click.version_option(__version__, prog_name="planner")
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
def main(verbose: int) -> None:
    """Plan GPU jobs: requirements, offers, cheapest plans under a deadline, cloud vs own hardware.

    Example: planner quote --workload gpt2-xl-finetune --deadline 24h
    """
    level = logging.WARNING - 10 * verbose
    logging.basicConfig(
        level=max(level, logging.DEBUG), format="%(levelname)s %(name)s: %(message)s"
    )


def _register() -> None:
    # Explicit registry of command modules (no string-based discovery).
    from planner.cli import offers, prices, quote, report
    from planner.cli import tco as tco_commands

    offers.register(main)
    prices.register(main)
    quote.register(main)
    tco_commands.register(main)
    report.register(main)
    from planner.cli import workloads

    workloads.register(main)


_register()
