"""`planner calibrate`: record a run you measured, list and remove the records."""

from __future__ import annotations

from typing import Any

import click

from planner import api
from planner.cli.offers import format_option
from planner.cli.params import FiniteFloat, SubcommandGroup, WholeNumber, field_options
from planner.cli.workloads import FACT_FIELDS, WorkloadFacts, workload_fact_options
from planner.reports.tables import dumps_json, render_records


@click.group(
    "calibrate",
    cls=SubcommandGroup,
    synonyms={"delete": "remove", "del": "remove", "rm": "remove", "ls": "list", "show": "list"}
    | {"add": "record", "new": "record"},
)
def calibrate() -> None:
    """Correct later estimates with runs you measured (kept in the user data folder).

    Example: planner calibrate record gpt2-finetune --gpu A100-80GB --measured-tokens-per-second 52000
    """


@calibrate.command("record")
@field_options(
    {
        "workload": "WORKLOAD",
        "gpu": "--gpu",
        "count": "--count",
        "measured_tokens_per_s": "--measured-tokens-per-second",
        "measured_tokens_per_second": "--measured-tokens-per-second",
        "measured_step_seconds": "--measured-step-seconds",
        **FACT_FIELDS,
    }
)
@click.argument("workload", required=False)
@workload_fact_options
@click.option("--gpu", required=True, help="The GPU model the run used.")
@click.option("--count", type=WholeNumber(min=1), default=1, show_default=True)
@click.option(
    "--measured-tokens-per-second",
    type=FiniteFloat(min=0, min_open=True, example=12000),
    help="Training throughput of the whole run, tokens (samples for vision) per second.",
)
@click.option(
    "--measured-step-seconds",
    type=FiniteFloat(min=0, min_open=True, unit="s", example=2.5),
    help="Seconds per optimizer step (the workload's global batch per step).",
)
@format_option
def record(
    workload: str | None,
    facts: WorkloadFacts,
    gpu: str,
    count: int,
    measured_tokens_per_second: float | None,
    measured_step_seconds: float | None,
    fmt: str,
) -> None:
    """Record a measured run: later estimates on the same GPU, stack, precision, method and kind
    scale their training steps by measured / estimated throughput.

    WORKLOAD is a library name or a YAML file, as --precision and --framework set the run's (a
    T4 run of a bf16 workload: --precision fp16); or describe the run with --model and --tokens.
    """
    if (measured_tokens_per_second is None) == (measured_step_seconds is None):
        # was the library's "give one of measured_tokens_per_second and measured_step_seconds":
        # its keywords, not this command's options
        raise click.UsageError(
            "give --measured-tokens-per-second or --measured-step-seconds"
            + (", not both" if measured_step_seconds is not None else "")
            + ": the run's throughput, e.g. --measured-tokens-per-second 12000 or "
            "--measured-step-seconds 2.5"
        )
    named = facts.workload(workload)
    spec = api.load_workload(named) if isinstance(named, str) else named
    # a model trained on images counts samples (was "2,048 tokens/s" for ResNet-50's images)
    unit = "tokens" if spec.model.is_transformer else "samples"
    rec = api.calibrate(
        spec,
        gpu,
        count,
        measured_tokens_per_second=measured_tokens_per_second,
        measured_step_seconds=measured_step_seconds,
    )
    if fmt == "json":
        click.echo(dumps_json(rec))
        return
    if fmt in ("csv", "markdown"):
        # was the sentence below, on stdout, where a CSV was asked for
        click.echo(render_records([rec], fmt, floatfmt=",.6g").rstrip("\n"))
        return
    click.echo(
        f"recorded {rec['id']}: {rec['workload']} on {rec['count']} x {rec['gpu']} "
        f"({rec['framework']}, {rec['precision']}) ran at {rec['measured_tokens_per_s']:,.0f} "
        f"{unit}/s against {rec['estimated_tokens_per_s']:,.0f} estimated: later estimates of "
        f"similar jobs x{1 / rec['factor']:.2f} on their training steps"
    )


@calibrate.command("list")
@format_option
def list_command(fmt: str) -> None:
    """The recorded runs, oldest first."""
    rows: list[dict[str, Any]] = api.calibrations()
    if fmt == "json":
        click.echo(dumps_json(rows))
    elif not rows and fmt in ("table", "markdown"):
        click.echo("no calibrations recorded (planner calibrate record WORKLOAD ...)")
    else:
        from planner.workload.calibration import LISTED_COLUMNS

        # no runs: a CSV of the header alone (was two blank lines, no document)
        columns = None if rows else LISTED_COLUMNS
        click.echo(render_records(rows, fmt, columns=columns, floatfmt=",.6g").rstrip("\n"))


@calibrate.command("remove")
@field_options({"id": "ID"})
@click.argument("ident", metavar="ID")
def remove(ident: str) -> None:
    """Forget one recorded run (its id from `planner calibrate list`)."""
    api.remove_calibration(ident)
    click.echo(f"removed {ident}", err=True)


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(calibrate)
