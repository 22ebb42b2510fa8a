"""`planner workloads`, `planner workloads show` and `planner estimate`."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import click
from click.core import ParameterSource

from planner import api
from planner.cli.offers import format_option
from planner.cli.params import (
    Count,
    FiniteFloat,
    LinkChoice,
    NameChoice,
    SubcommandGroup,
    WholeNumber,
    field_options,
)
from planner.gpu_specs import load_gpu_catalog
from planner.reports.estimate import (
    render_estimate,
    render_models,
    render_workload_show,
    render_workloads,
)
from planner.schema import Fabric, Interconnect
from planner.workload import Topology, WorkloadSpec
from planner.workload.adhoc import workload_yaml
from planner.workload.spec import INFERENCE_ONLY_PRECISIONS, PRECISION_ALIASES, Precision


def _names_a_workload(word: str) -> bool:
    """Whether ``word`` is a bundled workload's name (any case) or a workload file's path."""
    from planner.workload.spec import workload_names

    return word.strip().lower() in {n.lower() for n in workload_names()} or word.endswith(
        (".yaml", ".yml")
    )


@click.group(
    "workloads",
    cls=SubcommandGroup,
    invoke_without_command=True,
    synonyms={"list": "", "ls": ""},
    argument_of=("show", _names_a_workload),
)
@format_option
@click.pass_context
def workloads(ctx: click.Context, fmt: str) -> None:
    """The workload library: name, kind, model size, data and a one-line description.

    Example: planner workloads --format markdown
    """
    if ctx.invoked_subcommand is None:
        click.echo(render_workloads(api.list_workloads(), fmt))


def _group_format(ctx: click.Context) -> str | None:
    """The --format given before the subcommand (``planner workloads --format csv show X``), or
    None when it was left out there.  It was ignored: the table came out where CSV was asked."""
    parent = ctx.parent
    if parent is None or parent.get_parameter_source("fmt") in (None, ParameterSource.DEFAULT):
        return None
    return cast(str, parent.params["fmt"])


@workloads.command("show")
@click.argument("name")
@format_option
@click.pass_context
def show(ctx: click.Context, name: str, fmt: str) -> None:
    """The full spec of one workload and what it needs on reference GPUs.

    Example: planner workloads show gpt2-xl-finetune
    """
    before = _group_format(ctx)
    if before is not None:
        if ctx.get_parameter_source("fmt") != ParameterSource.DEFAULT and fmt != before:
            raise click.UsageError(
                f"--format {before} (before `show`) contradicts --format {fmt} (after it): "
                "give --format once"
            )
        fmt = before
    spec = api.load_workload(name)
    click.echo(render_workload_show(spec, api.workload_requirements(spec), fmt))


F = TypeVar("F", bound=Callable[..., Any])

# Every name --precision takes: the training precisions and their framework spellings.
TRAINING_PRECISIONS = [
    *(p.value for p in Precision if p.value not in INFERENCE_ONLY_PRECISIONS),
    *PRECISION_ALIASES,
]

# The facts that describe a training job without a file (planner.workload_from_facts).
FACT_FIELDS = {
    "model": "--model",
    "data.tokens": "--tokens",
    "training.method": "--method",
    "kind": "--kind",
    "model.seq_len": "--seq-len",
    "training.precision": "--precision",
    "training.framework": "--framework",
}


@dataclass(frozen=True)
class WorkloadFacts:
    """The --model facts of a command, gathered into one value (see :func:`workload_fact_options`)."""

    model: str | None
    tokens: float | None
    method: str | None  # None: not given (full)
    kind: str | None  # None: not given (finetune)
    seq_len: int | None
    precision: str | None
    framework: str | None = None

    @property
    def training(self) -> dict[str, str]:
        """The training fields given (--precision, --framework): they change a named workload
        too."""
        fields = {"precision": self.precision, "framework": self.framework}
        return {k: v for k, v in fields.items() if v is not None}

    @property
    def given(self) -> bool:
        """Whether any fact beyond the defaults (and --precision and --framework, which also
        change a named workload) was given."""
        return any(v is not None for v in (self.model, self.tokens, self.seq_len))

    def spec(self, name: str | None = None) -> WorkloadSpec:
        """The workload these facts describe (``planner.workload_from_facts``)."""
        if self.model is None:
            typed = [o for o, v in (("--tokens", self.tokens), ("--seq-len", self.seq_len)) if v]
            raise click.UsageError(
                f"{' and '.join(typed) or '--tokens'}: these options go with --model; name the "
                "model (planner models lists the presets), or give a workload"
            )
        if self.tokens is None:
            raise click.UsageError("--model needs --tokens: how much the job trains on (e.g. 50M)")
        spec = api.workload_from_facts(
            self.model,
            tokens=self.tokens,
            kind=self.kind or "finetune",
            method=self.method or "full",
            seq_len=self.seq_len,
            precision=self.precision,
            name=name,
        )
        # a blank --framework '' is refused as with a named workload (was: auto, silently)
        return (
            api.with_training(spec, framework=self.framework)
            if self.framework is not None
            else spec
        )

    def workload(self, named: str | None, option: str = "WORKLOAD") -> str | WorkloadSpec:
        """The workload a command runs: ``named`` (a library name or file, loaded by the
        library) or the one these facts describe; never both, never neither."""
        if named is not None and self.model is not None:
            raise click.UsageError(f"give {option} or --model, not both")
        if named is None and not self.given:
            raise click.UsageError(f"give {option}, or describe the job with --model and --tokens")
        given = [o for o, v in (("--method", self.method), ("--kind", self.kind)) if v is not None]
        if named is not None and given:
            raise click.UsageError(
                f"{' and '.join(given)} describe{'s' if len(given) == 1 else ''} a job given with "
                f"--model; the workload {named} sets {'them' if len(given) > 1 else 'it'} in its "
                "file (training.method: full|lora|qlora, kind: finetune|pretrain): edit the file "
                f"or drop {' and '.join(given)}"
            )
        if named is not None and self.model is None:
            # --tokens and --seq-len without --model: the facts of a named workload are in its
            # file (was: "--tokens, --seq-len and --precision go with --model", although
            # --precision changes a named workload)
            typed = [o for o, v in (("--tokens", self.tokens), ("--seq-len", self.seq_len)) if v]
            if typed:
                # was "the workload resnet50-imagenet sets data.tokens in its file": a CNN's
                # file sets neither, and a bundled workload's file is not the user's to edit
                what = {
                    "--tokens": "amount of data (data.tokens or data.samples)",
                    "--seq-len": "sequence length (model.seq_len, where it has one)",
                }
                if api.load_workload(named).kind.value == "inference":
                    # a served model has no data section (was: "data.tokens or data.samples")
                    what["--tokens"] = (
                        "load (inference.requests_per_s, or inference.tokens of a batch job)"
                    )
                raise click.UsageError(
                    f"{' and '.join(typed)}: these options go with --model (--model gpt2 --tokens "
                    f"50M); the workload {named} gives its own "
                    f"{' and '.join(what[o] for o in typed)}: drop {' and '.join(typed)}, or write "
                    f"your own file from it (`planner workloads show {named}` prints it)"
                )
            if not self.training:
                return named
            return api.with_training(api.load_workload(named), **self.training)
        return self.spec()


_FACT_OPTIONS = (
    click.option("--model", help="Model preset (planner models) or a Hugging Face config.json."),
    click.option("--tokens", type=Count(), help="Tokens the job trains on: 50M, 1.5B."),
    click.option(
        "--method",
        type=NameChoice(["full", "lora", "qlora"]),
        default="full",
        show_default=True,
        help="Training method (with --model).",
    ),
    click.option(
        "--kind",
        type=NameChoice(["finetune", "pretrain"]),
        default="finetune",
        show_default=True,
        help="Job kind (with --model).",
    ),
    click.option("--seq-len", type=WholeNumber(min=1), help="Sequence length (with --model)."),
    click.option(
        "--precision",
        type=NameChoice(TRAINING_PRECISIONS),
        help="Training precision: fp32, tf32, fp16/amp-fp16, bf16/amp-bf16, pure-bf16, fp8 "
        "(Transformer Engine), fp4/nvfp4 (Transformer Engine NVFP4, Blackwell); also changes a "
        "named workload [default: the workload's, else bf16].",
    ),
    click.option(
        "--framework",
        help="Training software stack (megatron, nemo, torchtitan, pytorch-fsdp, lightning, "
        "torchtune, nanotron, deepspeed, apex, hf-trainer, llm.c, jax, any): how fast its kernels run and which layouts it offers; "
        "also changes a named workload [default: the workload's, else auto: hf-trainer for "
        "fine-tuning, any for pre-training, pytorch-fsdp for pre-training on images].",
    ),
)


def workload_fact_options(func: F) -> F:
    """--model, --tokens, --method, --kind, --seq-len and --precision, passed to ``func`` as one
    ``facts`` argument (a :class:`WorkloadFacts`)."""

    @functools.wraps(func)
    def run(
        *args: Any,
        model: str | None,
        tokens: float | None,
        method: str | None,
        kind: str | None,
        seq_len: int | None,
        precision: str | None,
        framework: str | None,
        **kwargs: Any,
    ) -> Any:
        # None where the default stands: a named workload refuses only what was typed
        source = click.get_current_context().get_parameter_source
        given_method = None if source("method") is ParameterSource.DEFAULT else method
        given_kind = None if source("kind") is ParameterSource.DEFAULT else kind
        facts = WorkloadFacts(
            model, tokens, given_method, given_kind, seq_len, precision, framework
        )
        return func(*args, facts=facts, **kwargs)

    wrapped: Any = run
    for option in reversed(_FACT_OPTIONS):
        wrapped = option(wrapped)
    return cast(F, wrapped)


@click.command("estimate")
@field_options(
    {
        "count": "--count",
        "gpu": "--gpu",
        "gpus_per_node": "--gpus-per-node",
        "network_gbps": "--network-gbps",
        "interconnect": "--interconnect",
        "workload": "WORKLOAD",
        **FACT_FIELDS,
    }
)
@click.argument("workload", required=False)
@workload_fact_options
@click.option(
    "--gpu", required=True, help="GPU model or alias: H100, A100-80GB, RTX4090, 'a100 80gb'."
)
@click.option(
    "--count", type=WholeNumber(min=1), default=1, show_default=True, help="Number of GPUs."
)
@click.option(
    "--gpus-per-node", type=WholeNumber(min=1), help="GPUs per node (default: min(count, 8))."
)
@click.option(
    "--interconnect",
    type=LinkChoice([i.value for i in Interconnect], "interconnect", other="--fabric"),
    help="GPU link inside a node (default: the GPU's own: nvswitch for SXM parts, pcie for PCIe cards).",
)
@click.option(
    "--fabric",
    type=LinkChoice([f.value for f in Fabric], "fabric", other="--interconnect"),
    help="Network between nodes (default: infiniband).",
)
@click.option(
    "--network-gbps",
    type=FiniteFloat(min=0, min_open=True, unit="Gbps", example=400),
    help="Node network bandwidth, Gbit/s.",
)
@format_option
def estimate(
    workload: str | None,
    facts: WorkloadFacts,
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
        default = api.default_topology(load_gpu_catalog().resolve(gpu, key_path="gpu"), count)
        _refuse_unused_links(
            count, gpus_per_node or default.gpus_per_node, interconnect, fabric, network_gbps
        )
        topology = Topology(
            gpus_per_node=gpus_per_node or default.gpus_per_node,
            interconnect=Interconnect(interconnect) if interconnect else default.interconnect,
            fabric=Fabric(fabric) if fabric else default.fabric,
            network_gbps=network_gbps,
        )
    named = facts.workload(workload)
    spec = api.load_workload(named) if isinstance(named, str) else named
    est = api.estimate(spec, gpu, count, topology=topology)
    click.echo(render_estimate(est, fmt, kind=spec.kind.value))


def _refuse_unused_links(
    count: int,
    per_node: int,
    interconnect: str | None,
    fabric: str | None,
    network_gbps: float | None,
) -> None:
    """A UsageError for a link the layout has none of (was: accepted and dropped without a word,
    where a hardware file saying the same is refused): --interconnect with no two GPUs in a node,
    --fabric or --network-gbps with every GPU in one node."""
    if interconnect not in (None, "none") and min(count, per_node) < 2:
        why = "--count 1" if count < 2 else f"--gpus-per-node {per_node}"
        raise click.UsageError(
            f"--interconnect {interconnect} links the GPUs of a node, and with {why} no two GPUs "
            "share one: drop it, or raise the count"
        )
    between = [
        flag for flag, value in (("--fabric", fabric), ("--network-gbps", network_gbps)) if value
    ]
    if between and count <= per_node:
        raise click.UsageError(
            f"{' and '.join(between)} link{'s' if len(between) == 1 else ''} nodes, and all "
            f"{count} GPU{'s' if count > 1 else ''} fit one node of {per_node}: drop "
            f"{'it' if len(between) == 1 else 'them'}, or set --gpus-per-node below --count"
        )


@workloads.command("new")
@click.argument("name")
@workload_fact_options
@field_options({**FACT_FIELDS, "name": "NAME"})
@click.pass_context
def new(ctx: click.Context, name: str, facts: WorkloadFacts) -> None:
    """Write a commented workload file for the job --model and --tokens describe, to stdout.

    Example: planner workloads new my-lora --model mistral-7b --method lora --tokens 50M > my.yaml
    """
    before = _group_format(ctx)
    if before is not None:
        # was: ignored, and the YAML written where --format json asked for JSON
        raise click.BadParameter(
            f"`workloads new` writes a workload file (YAML), not {before}: drop --format",
            param_hint="'--format'",
        )
    if not name.strip():
        raise click.BadParameter("is blank: give the workload a name", param_hint="NAME")
    given = name.strip()
    stem, dot, suffix = given.rpartition(".")
    file_name = bool(dot and stem and suffix.lower() in ("yaml", "yml"))
    if file_name:
        name = stem  # was: the workload named "job.yaml", where a file was expected
    if facts.model is None:
        raise click.UsageError(
            "give --model and --tokens: the job the file describes, e.g. "
            f"`planner workloads new {name.strip()} --model gpt2 --tokens 50M > "
            f"{given if file_name else name.strip() + '.yaml'}`"
        )
    if file_name:
        click.echo(
            f"warning: NAME {given!r} is a file name: the workload is named {stem!r}, and the "
            f"file goes to stdout (save it with `> {given}`)",
            err=True,
        )
    click.echo(workload_yaml(facts.spec(name=name), model=facts.model), nl=False)


@click.command("models")
@click.argument("search", required=False)
@format_option
@field_options({"search": "SEARCH"})
def models(search: str | None, fmt: str) -> None:
    """The model presets a workload names (model: mistral-7b, or --model): size, shape, source.
    SEARCH keeps those whose names or source hold it (planner models qwen).

    Example: planner estimate --model mistral-7b --method lora --tokens 50M --gpu A100-80GB
    """
    click.echo(render_models(api.model_presets(search), fmt))


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(workloads)
    group.add_command(estimate)
    group.add_command(models)
