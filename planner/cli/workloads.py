"""`planner workloads`, `planner workloads show` and `planner estimate`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from planner import api
from planner.cli.offers import format_option
from planner.cli.params import Count, FiniteFloat, field_options
from planner.reports.estimate import (
    render_estimate,
    render_models,
    render_workload_show,
    render_workloads,
)
from planner.schema import Fabric, Interconnect
from planner.workload import Topology, WorkloadSpec
from planner.workload.adhoc import workload_yaml


@click.group("workloads", invoke_without_command=True)
@format_option
@click.pass_context
def workloads(ctx: click.Context, fmt: str) -> None:
    """The workload library: name, kind, model size, data and a one-line description.

    Example: planner workloads --format markdown
    """
    if ctx.invoked_subcommand is None:
        click.echo(render_workloads(api.list_workloads(), fmt))


@workloads.command("show")
@click.argument("name")
@format_option
def show(name: str, fmt: str) -> None:
    """The full spec of one workload and what it needs on reference GPUs.

    Example: planner workloads show gpt2-xl-finetune
    """
    spec = api.load_workload(name)
    click.echo(render_workload_show(spec, api.workload_requirements(spec), fmt))


F = TypeVar("F", bound=Callable[..., Any])

# The facts that describe a training job without a file (planner.workload_from_facts).
FACT_FIELDS = {
    "model": "--model",
    "data.tokens": "--tokens",
    "training.method": "--method",
    "kind": "--kind",
    "model.seq_len": "--seq-len",
    "training.precision": "--precision",
}


def workload_fact_options(func: F) -> F:
    """--model, --tokens, --method, --kind, --seq-len and --precision, for a job without a file."""
    for option in reversed(
        (
            click.option("--model", help="Model preset (planner models), instead of WORKLOAD."),
            click.option(
                "--tokens", type=Count(), help="Tokens to train on with --model: 50M, 1.5B."
            ),
            click.option(
                "--method",
                type=click.Choice(["full", "lora", "qlora"]),
                default="full",
                show_default=True,
                help="Training method with --model.",
            ),
            click.option(
                "--kind",
                type=click.Choice(["finetune", "pretrain"]),
                default="finetune",
                show_default=True,
                help="Job kind with --model.",
            ),
            click.option(
                "--seq-len", type=click.IntRange(min=1), help="Sequence length with --model."
            ),
            click.option(
                "--precision",
                type=click.Choice(["fp32", "fp16", "bf16", "fp8"]),
                help="Training precision with --model [default: bf16].",
            ),
        )
    ):
        func = option(func)
    return func


def workload_from_cli(
    workload: str | None,
    *,
    model: str | None,
    tokens: float | None,
    method: str,
    kind: str,
    seq_len: int | None,
    precision: str | None,
    option: str = "WORKLOAD",
) -> WorkloadSpec:
    """The workload a command names: a library name or file, or one made from --model facts."""
    if workload is not None and model is not None:
        raise click.UsageError(f"give {option} or --model, not both")
    if model is None:
        if workload is None:
            raise click.UsageError(f"give {option}, or describe the job with --model and --tokens")
        if tokens is not None or seq_len is not None or precision is not None:
            raise click.UsageError("--tokens, --seq-len and --precision go with --model")
        return api.load_workload(workload)
    if tokens is None:
        raise click.UsageError("--model needs --tokens: how much the job trains on (e.g. 50M)")
    return api.workload_from_facts(
        model, tokens=tokens, kind=kind, method=method, seq_len=seq_len, precision=precision
    )


@click.command("estimate")
@field_options(
    {
        "count": "--count",
        "gpu": "--gpu",
        "gpus_per_node": "--gpus-per-node",
        "network_gbps": "--network-gbps",
        "interconnect": "--interconnect",
        **FACT_FIELDS,
    }
)
@click.argument("workload", required=False)
@workload_fact_options
@click.option(
    "--gpu", required=True, help="GPU model or alias: H100, A100-80GB, RTX4090, 'a100 80gb'."
)
@click.option(
    "--count", type=click.IntRange(min=1), default=1, show_default=True, help="Number of GPUs."
)
@click.option(
    "--gpus-per-node", type=click.IntRange(min=1), help="GPUs per node (default: min(count, 8))."
)
@click.option(
    "--interconnect",
    type=click.Choice([i.value for i in Interconnect]),
    help="GPU link inside a node (default: the GPU's own: nvswitch for SXM parts, pcie for PCIe cards).",
)
@click.option(
    "--fabric",
    type=click.Choice([f.value for f in Fabric]),
    help="Network between nodes (default: infiniband).",
)
@click.option(
    "--network-gbps",
    type=FiniteFloat(min=0, min_open=True),
    help="Node network bandwidth, Gbit/s.",
)
@format_option
def estimate(
    workload: str | None,
    model: str | None,
    tokens: float | None,
    method: str,
    kind: str,
    seq_len: int | None,
    precision: str | None,
    gpu: str,
    count: int,
    gpus_per_node: int | None,
    interconnect: str | None,
    fabric: str | None,
    network_gbps: float | None,
    fmt: str,
) -> None:
    """Memory, parallel strategy, FLOPs, efficiency, hours and interconnect for a workload.

    WORKLOAD is a library name (planner workloads) or a path to a YAML file; or leave it out and
    describe the job with --model and --tokens (planner models lists the presets).

    Example: planner estimate gpt2-xl-finetune --gpu H100 --count 8

    Example: planner estimate --model mistral-7b --method lora --tokens 50M --gpu A100-80GB
    """
    topology = None
    if any(v is not None for v in (gpus_per_node, interconnect, fabric, network_gbps)):
        default = api.default_topology(api.resolve_gpu(gpu), count)
        topology = Topology(
            gpus_per_node=gpus_per_node or default.gpus_per_node,
            interconnect=Interconnect(interconnect) if interconnect else default.interconnect,
            fabric=Fabric(fabric) if fabric else default.fabric,
            network_gbps=network_gbps,
        )
    spec = workload_from_cli(
        workload,
        model=model,
        tokens=tokens,
        method=method,
        kind=kind,
        seq_len=seq_len,
        precision=precision,
    )
    est = api.estimate(spec, gpu, count, topology=topology)
    click.echo(render_estimate(est, fmt, kind=spec.kind.value))


@workloads.command("new")
@click.argument("name")
@click.option("--model", required=True, help="Model preset (planner models) or a config.json.")
@click.option("--tokens", type=Count(), required=True, help="Tokens to train on: 50M, 1.5B.")
@click.option(
    "--method", type=click.Choice(["full", "lora", "qlora"]), default="full", show_default=True
)
@click.option(
    "--kind", type=click.Choice(["finetune", "pretrain"]), default="finetune", show_default=True
)
@click.option("--seq-len", type=click.IntRange(min=1), help="Sequence length.")
@click.option("--precision", type=click.Choice(["fp32", "fp16", "bf16", "fp8"]))
@field_options({**FACT_FIELDS, "name": "NAME"})
def new(
    name: str,
    model: str,
    tokens: float,
    method: str,
    kind: str,
    seq_len: int | None,
    precision: str | None,
) -> None:
    """Write a commented workload file to stdout, to keep and edit.

    Example: planner workloads new my-lora --model mistral-7b --method lora --tokens 50M > my.yaml
    """
    spec = api.workload_from_facts(
        model,
        tokens=tokens,
        kind=kind,
        method=method,
        seq_len=seq_len,
        precision=precision,
        name=name,
    )
    click.echo(workload_yaml(spec, model=model), nl=False)


@click.command("models")
@format_option
def models(fmt: str) -> None:
    """The model presets a workload names (model: mistral-7b, or --model): size, shape, source.

    Example: planner estimate --model mistral-7b --method lora --tokens 50M --gpu A100-80GB
    """
    click.echo(render_models(api.model_presets(), fmt))


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(workloads)
    group.add_command(estimate)
    group.add_command(models)
