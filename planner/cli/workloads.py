"""`planner workloads`, `planner workloads show` and `planner estimate`."""

from __future__ import annotations

import click

from planner import api
from planner.cli.offers import format_option
from planner.cli.params import FiniteFloat, field_options
from planner.reports.estimate import render_estimate, render_workload_show, render_workloads
from planner.schema import Fabric, Interconnect
from planner.workload import Topology


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


@click.command("estimate")
@field_options(
    {
        "count": "--count",
        "gpu": "--gpu",
        "gpus_per_node": "--gpus-per-node",
        "network_gbps": "--network-gbps",
        "interconnect": "--interconnect",
    }
)
@click.argument("workload")
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
    workload: str,
    gpu: str,
    count: int,
    gpus_per_node: int | None,
    interconnect: str | None,
    fabric: str | None,
    network_gbps: float | None,
    fmt: str,
) -> None:
    """Memory, parallel strategy, FLOPs, efficiency, hours and interconnect for a workload.

    WORKLOAD is a library name (planner workloads) or a path to a YAML file.

    Example: planner estimate gpt2-xl-finetune --gpu H100 --count 8
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
    spec = api.load_workload(workload)
    est = api.estimate(spec, gpu, count, topology=topology)
    click.echo(render_estimate(est, fmt, kind=spec.kind.value))


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(workloads)
    group.add_command(estimate)
