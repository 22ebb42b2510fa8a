"""`planner build`: what machine to build for a workload and a budget."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click

from planner.cli.offers import format_option
from planner.cli.params import Amount, OutputPath, WholeNumber, currency_option, field_options
from planner.errors import ConfigError, InfeasibleError
from planner.reports.formatting import Money

BUILD_FIELDS = field_options(
    {
        "workloads": "--workload",
        "budget": "--budget",
        "budget_usd": "--budget",
        "currency": "--currency",
        "gpus_allowed": "--gpu",
        "gpu_counts": "--gpus",
    }
)


def _workload_runs(values: tuple[str, ...]) -> list[tuple[Any, float]]:
    """``NAME`` or ``NAME:RUNS`` (runs a month, default 1) -> (spec, runs)."""
    from planner.workload import load_workload

    out = []
    for value in values:
        name, _, runs = value.rpartition(":") if ":" in value else (value, "", "1")
        try:
            count, read = float(runs), True
        except ValueError:
            count, read = -1.0, False
        if not count > 0 or count != count or count == float("inf"):
            # 0 and -1 were read: was "cannot read runs per month '0'" alone
            raise ConfigError(
                f"runs per month must be more than 0, got {runs!r} in {value!r}"
                if read and count <= 0
                else f"cannot read runs per month {runs!r} in {value!r}",
                key_path="--workload",
                hint=_runs_fix(name, runs)
                or "write NAME or NAME:RUNS, e.g. gpt2-finetune:4 for four runs a month",
            )
        try:
            out.append((load_workload(name), count))
        except ConfigError as e:
            if ":" in name and e.file is None:
                # gpt2-finetune:4:5: was "unknown workload 'gpt2-finetune:4'"
                raise ConfigError(
                    f"cannot read {value!r}: one colon goes between the name and the runs",
                    key_path="--workload",
                    hint="write NAME:RUNS, e.g. gpt2-finetune:4 for four runs a month",
                ) from None
            raise e.located_at("--workload") if e.file is None else e from None
    return out


# RUNS written with its unit or the word for it: 3 a month, 3/month, 3x, 3 runs, 3 per mo
_RUNS_WITH_WORDS = re.compile(
    r"^\s*(\d+(?:\.\d+)?)\s*(?:x|times|runs?)?\s*(?:(?:a|per|/|every|each)\s*(?:month|mo))?\s*$",
    re.I,
)


def _runs_fix(name: str, runs: str) -> str | None:
    """``write gpt2-finetune:3 (RUNS is runs a month)`` for runs written with words (``3 a
    month``, ``3x``); None for anything else.  Was "write NAME or NAME:RUNS" alone."""
    match = _RUNS_WITH_WORDS.match(runs)
    if match is None or float(match.group(1)) <= 0:
        return None
    return f"write {name}:{match.group(1)} (RUNS is a number of runs a month, without words)"


def _check_preset_agrees(
    preset: str, gpu: str, count: int, gpus: tuple[str, ...], gpu_counts: tuple[int, ...]
) -> None:
    """--gpu and --gpus beside --preset must allow the preset's own GPU and count: the preset
    decides both, and other values were dropped without a word."""
    from planner.gpu_specs import load_gpu_catalog

    catalog = load_gpu_catalog()
    asked = {catalog.resolve(g, key_path="--gpu").name for g in gpus}
    if asked and gpu not in asked:
        raise ConfigError(
            f"--preset {preset} is {count} x {gpu}, and --gpu asks for {', '.join(sorted(asked))}",
            key_path="--gpu",
            hint="drop --gpu (the preset sets the GPU), or drop --preset to compare GPUs",
        )
    if gpu_counts and count not in gpu_counts:
        shown = ", ".join(str(n) for n in sorted(gpu_counts))
        raise ConfigError(
            f"--preset {preset} is {count} x {gpu}, and --gpus asks for {shown} GPUs",
            key_path="--gpus",
            hint="drop --gpus (the preset sets the count), or drop --preset to compare counts",
        )


@click.command("build")
@BUILD_FIELDS
@click.option(
    "--workload",
    "-w",
    "workloads",
    multiple=True,
    required=True,
    help="Workload name or YAML, optionally with runs a month: gpt2-finetune:4 (repeatable).",
)
@click.option("--budget", type=Amount(), help="Spend at most this on the machine: 10000 CNY, 5000.")
@click.option("--gpu", "gpus", multiple=True, help="Only these GPUs (repeatable).")
@click.option(
    "--gpus",
    "gpu_counts",
    type=WholeNumber(min=1, max=8),
    multiple=True,
    help="Only machines with this many GPUs (repeatable).",
)
@click.option(
    "--preset",
    help="Price a known configuration from the parts table: a hardware file or bundled name "
    "(workstation-rtx3060, 4xrtxa4000...), its GPU and count.  Servers of 8 GPUs are priced "
    "only where the table has the whole system.",
)
@click.option("--top", type=WholeNumber(min=1, max=20), default=3, show_default=True)
@click.option(
    "--output",
    "-o",
    "output",
    type=OutputPath("machine.yaml"),
    help="Write the first machine's hardware file here (for quote/tco --hardware).",
)
@currency_option
@format_option
def build_command(
    workloads: tuple[str, ...],
    budget: tuple[float, str | None] | None,
    gpus: tuple[str, ...],
    gpu_counts: tuple[int, ...],
    preset: str | None,
    top: int,
    output: Path | None,
    currency: str,
    fmt: str,
) -> None:
    """Whole machines for your workloads within a budget: GPUs, CPU, memory, storage, power supply
    and chassis priced from a dated parts table, the hours and cost of each run on them, and a
    hardware file that quote --hardware and tco --hardware read.

    Example: planner build --workload gpt2-finetune --budget 10000 --currency CNY -o box.yaml
    """
    from planner.config.currency import load_fx_rates
    from planner.ownership.build import build_machines
    from planner.reports.build import render_build

    if output is not None and str(output) == "-":
        # was "'-' names another kind of file; name it -.yaml"
        raise ConfigError(
            "the hardware file cannot go to stdout: stdout carries the machines' table",
            key_path="--output",
            hint="name a file, e.g. -o box.yaml",
        )
    if output is not None and output.suffix.lower() not in (".yaml", ".yml"):
        # was: YAML written into a .json (or any) file, which quote --hardware then reads by
        # its name's promise
        raise ConfigError(
            f"the hardware file is YAML, and {str(output)!r} names another kind of file",
            key_path="--output",
            hint=f"name it {'box' if output.name.startswith('.') else output.stem}.yaml",
        )
    if output is not None and not output.resolve().parent.is_dir():
        raise ConfigError(
            f"cannot write the hardware file to {str(output)!r}: its folder does not exist",
            key_path="--output",
            hint="create the folder first, or choose another path",
        )
    if output is not None:
        from planner.cli.report_file import check_writable

        # before the work: was the whole table printed, then "cannot write the report"
        check_writable(output, "--output", what="hardware file")
    runs = _workload_runs(workloads)
    budget_usd = None
    if budget is not None:
        amount, code = budget
        budget_usd = load_fx_rates().to_usd(amount, code or currency)
    note = ""
    if preset is not None:
        from planner.ownership.hardware import load_hardware

        try:
            hw = load_hardware(preset)
        except ConfigError as e:
            raise e.located_at("--preset") if e.file is None else e from None
        _check_preset_agrees(hw.name, hw.gpu, hw.gpus_per_machine, gpus, gpu_counts)
        gpus, gpu_counts = (hw.gpu,), (hw.gpus_per_machine,)
        note = f"preset {hw.name}: its file says {hw.capex_usd:,.0f} USD a machine"
    try:
        result = build_machines(
            runs, budget_usd=budget_usd, gpus_allowed=gpus, gpu_counts=gpu_counts, top=top
        )
    except InfeasibleError as e:
        if preset is None:
            raise
        # was "allow other GPUs (--gpu) or counts (--gpus)", both refused beside --preset
        raise InfeasibleError(
            f"the parts table cannot price --preset {preset}: {e.message}",
            hint=f"its file's own price, {note.split('says ')[-1]}, is what planner tco "
            f"--hardware {preset} compares with renting; or drop --preset to build from the "
            "parts table",
        ) from None
    money = Money.of(currency, key_path="--currency")
    click.echo(render_build(result, fmt, money=money).rstrip("\n"))
    if note and fmt in ("table", "markdown"):
        click.echo(f"{note}; priced from the parts table: {money(result.machines[0].total_usd)}")
    if output is not None:
        from planner.cli.report_file import write_report

        write_report(result.machines[0].hardware_yaml(), output, what="hardware file")


def register(group: click.Group) -> None:
    group.add_command(build_command)
