"""`planner quote` (and `planner report quote`, which shares its options)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from click.core import ParameterSource

from planner import api
from planner.cli.offers import format_option, max_age_option, offers_file_option, snapshot_option
from planner.cli.params import (
    Amount,
    Discount,
    Duration,
    FiniteFloat,
    Latency,
    NameChoice,
    Quota,
    WholeNumber,
    currency_option,
    field_options,
    solver_option,
)
from planner.cli.report_file import report_path_option, report_target, save_report
from planner.cli.workloads import FACT_FIELDS, WorkloadFacts, workload_fact_options
from planner.errors import ConfigError
from planner.quoting.request import QuoteRequest
from planner.reports.formatting import Money
from planner.reports.quote import render_quote
from planner.workload import WorkloadSpec, load_workload
from planner.workload.spec import Kind

if TYPE_CHECKING:
    from planner.quoting.service_quote import ServiceRequest

F = TypeVar("F", bound=Callable[..., Any])
_V = TypeVar("_V")


def quote_options(func: F) -> F:
    """The options that describe a quote request, shared by `quote` and `report quote`."""
    for option in reversed(_QUOTE_OPTIONS):
        func = option(func)
    return func


# The option behind each QuoteRequest field: a library error about a field reads
# "discounts (--discount): ...", the field and then the option to change.
QUOTE_LABELS = {
    name: f"{name} ({option})"
    for name, option in {
        "workload": "--workload",
        "deadline_hours": "--deadline",
        "budget_usd": "--budget",
        "providers": "--provider",
        "regions": "--region",
        "gpus": "--gpu",
        "allow_spot": "--no-spot",
        "spot_only": "--spot-only",
        "max_interruption_pct": "--max-interruption",
        "confidence_pct": "--confidence",
        "count_estimate_error": "--count-estimate-error",
        "include_reserved": "--reserved",
        "hardware": "--hardware",
        "offers_files": "--offers",
        "snapshot_dir": "--snapshot",
        "discounts": "--discount",
        "quotas": "--quota",
        "local_cost_basis": "--hardware-cost",
        "top": "--top",
        "pareto": "--pareto",
        "near": "--near",
        "currency": "--currency",
    }.items()
} | FACT_FIELDS
QUOTE_FIELDS = field_options(QUOTE_LABELS)


_QUOTE_OPTIONS: tuple[Callable[[Any], Any], ...] = (
    click.option(
        "--workload",
        "-w",
        help="Workload name (planner workloads) or a YAML file; or describe the job with --model "
        "and --tokens instead.",
    ),
    workload_fact_options,
    click.option(
        "--deadline",
        type=Duration(),
        help="Wall-clock limit of a job: 90m, 24h, 3d, 2w (a bare number is hours); or a date or "
        "time to finish by: "
        "2026-12-01, 2026-12-01T18:00Z, 'friday 18:00' (UTC unless a zone is given). A service "
        "(an inference workload with a load) has none: it is priced per month.",
    ),
    click.option(
        "--budget",
        type=Amount(),
        help="Spend at most this much: 500 (in --currency), 450 EUR, 80000 CNY.",
    ),
    click.option(
        "--provider",
        "providers",
        multiple=True,
        help="Only these providers (repeatable); 'owned' is your --hardware.",
    ),
    click.option(
        "--owned-only", is_flag=True, help="Only your own machines (--hardware): --provider owned."
    ),
    click.option("--region", "regions", multiple=True, help="Only these regions (repeatable)."),
    click.option(
        "--near",
        help="Where prices tie across regions, prefer this region or area (eu-west-1, europe, "
        "asia-pacific); default: each provider's home region, then the US.",
    ),
    click.option(
        "--gpu",
        "gpus",
        multiple=True,
        help="Only these GPUs: a model or family (A100 is both sizes), with GPUs per instance "
        "(H100:8, A100:80GB:8), or a memory range (24GB..). Repeatable.",
    ),
    click.option("--no-spot", is_flag=True, help="Never use spot capacity."),
    click.option("--spot-only", is_flag=True, help="Only spot capacity (plus owned hardware)."),
    click.option(
        "--max-interruption",
        type=FiniteFloat(min=0, max=100, unit="percent"),
        help="Skip spot offers interrupted more than this %/month.",
    ),
    click.option(
        "--confidence",
        type=FiniteFloat(min=0, max=100, max_open=True, unit="percent"),
        default=90.0,
        show_default=True,
        help="Every plan meets the deadline with at least this % chance under the spot model "
        "(0: any risk); a cheaper, riskier plan is shown as a labelled alternative.",
    ),
    click.option(
        "--count-estimate-error",
        is_flag=True,
        help="Let --confidence cover the time estimate's own error too: plan on training times "
        "at its pessimistic end (from the estimator's error on published runs).",
    ),
    click.option(
        "--reserved",
        "include_reserved",
        is_flag=True,
        help="Also price 1y/3y commitments (reserved instances and savings plans) at their "
        "effective hourly rate.",
    ),
    click.option(
        "--hardware",
        "hardware",
        multiple=True,
        help="Owned machines (scenarios/hardware YAML or name); repeatable.",
    ),
    click.option(
        "--hardware-cost",
        type=NameChoice(["amortised", "sunk"]),
        default="amortised",
        show_default=True,
        help="Owned hardware at full TCO per hour, or power only (already paid for).",
    ),
    click.option(
        "--discount",
        "discounts",
        type=Discount(),
        multiple=True,
        help="Negotiated discount, e.g. aws=0.12 (repeatable).",
    ),
    click.option(
        "--quota",
        "quotas",
        type=Quota(),
        multiple=True,
        help="Max instances at once: aws=16, aws:p5=4, aws:us-east-1:p5=2.",
    ),
    click.option(
        "--top", type=WholeNumber(min=1), default=5, show_default=True, help="How many plans."
    ),
    click.option("--pareto", is_flag=True, help="Add the cost-versus-deadline frontier."),
    solver_option,
    currency_option,
    offers_file_option,
    snapshot_option,
    max_age_option,
)


def request_from_options(
    *,
    workload: str | None,
    facts: WorkloadFacts,
    deadline: float | None,
    budget: tuple[float, str | None] | None,
    providers: tuple[str, ...],
    regions: tuple[str, ...],
    gpus: tuple[str, ...],
    no_spot: bool,
    spot_only: bool,
    owned_only: bool,
    max_interruption: float | None,
    confidence: float,
    include_reserved: bool,
    hardware: tuple[str, ...],
    hardware_cost: str,
    discounts: tuple[tuple[str, float], ...],
    quotas: tuple[tuple[str, int], ...],
    top: int,
    pareto: bool,
    offers_files: tuple[Path, ...],
    snapshot_dir: Path | None,
    near: str | None = None,
    currency: str = "USD",
    count_estimate_error: bool = False,
) -> QuoteRequest:
    """The options of `quote_options` as a :class:`QuoteRequest` (a bare ``--budget`` number is in
    ``currency``)."""
    if no_spot and spot_only:
        raise click.UsageError("--no-spot and --spot-only exclude each other")
    if include_reserved and spot_only:
        # was: accepted, every plan spot and the commitments never priced
        raise click.UsageError(
            "--reserved and --spot-only exclude each other: spot-only plans use spot capacity "
            "(and owned hardware) alone; drop one"
        )
    if deadline is None:
        raise click.UsageError(
            "Missing option '--deadline': a job needs one (24h, 3d, 2026-12-01); a service "
            "(an inference workload with a load, or --rps) is priced per month without one"
        )
    _check_hardware_cost(hardware)
    clouds = [p for p in providers if p.strip().lower() != "owned"]
    if owned_only and clouds:
        # was: --provider aws dropped without a word, an owned-only plan printed
        raise click.UsageError(
            f"--owned-only quotes your own machines alone, and --provider {clouds[0]} names a "
            "cloud: drop one (--provider owned --provider aws mixes them)"
        )
    named = facts.workload(workload, option="--workload")
    return QuoteRequest(
        workload=named,
        deadline_hours=deadline,
        budget_usd=None if budget is None else _budget_usd(*budget, currency),
        providers=("owned",) if owned_only else providers,
        regions=regions,
        gpus=gpus,
        allow_spot=not no_spot,
        spot_only=spot_only,
        max_interruption_pct=max_interruption,
        confidence_pct=confidence,
        include_reserved=include_reserved,
        hardware=hardware,
        offers_files=offers_files,
        snapshot_dir=snapshot_dir,
        discounts=one_per_key(discounts, "--discount"),
        quotas=one_per_key(quotas, "--quota"),
        local_cost_basis=hardware_cost,
        top=top,
        pareto=pareto,
        near=near,
        count_estimate_error=count_estimate_error,
    )


# Options that shape a job quote and that a service quote has no use for: typed for a service they
# would be dropped without a word (a budget not kept, a quota not counted, money not converted).
_JOB_ONLY_OPTIONS = {
    "budget": "--budget",
    "spot_only": "--spot-only",
    "max_interruption": "--max-interruption",
    "confidence": "--confidence",
    "quotas": "--quota",
    "pareto": "--pareto",
    "near": "--near",
    "solver": "--solver",
    "currency": "--currency",
}


def _refuse_job_options(service: ServiceRequest) -> None:
    """A UsageError naming the job-quote options typed for a service quote."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return
    typed = [
        option
        for name, option in _JOB_ONLY_OPTIONS.items()
        if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE
    ]
    if typed:
        name = service.workload if isinstance(service.workload, str) else service.workload.name
        raise click.UsageError(
            f"{', '.join(typed)} {'shape' if len(typed) > 1 else 'shapes'} a job quote (a "
            f"workload by a deadline), and {name} is quoted as a service (priced per month in "
            f"USD, sized on its load and latency targets): drop {'them' if len(typed) > 1 else 'it'}"
        )


def _check_hardware_cost(hardware: tuple[str, ...]) -> None:
    """--hardware-cost prices your own machines: typed without --hardware it would do nothing."""
    ctx = click.get_current_context(silent=True)
    if ctx is None or hardware:
        return
    if ctx.get_parameter_source("hardware_cost") is ParameterSource.COMMANDLINE:
        raise click.UsageError(
            "--hardware-cost prices your own machines, and no --hardware was given: add "
            "--hardware FILE (e.g. --hardware workstation-rtx4090), or drop --hardware-cost"
        )


def _budget_usd(amount: float, code: str | None, currency: str) -> float:
    """``--budget`` in USD: its own currency code, else ``--currency`` (both checked already)."""
    from planner.config.currency import load_fx_rates

    return load_fx_rates().to_usd(amount, code or currency)


def run_quote(request: QuoteRequest, solver: str = "highs") -> api.QuoteResult:
    """`api.quote` with a progress bar on stderr while the cost-versus-deadline sweep runs."""
    if not request.pareto:
        return api.quote(request, solver=solver)
    with click.progressbar(
        length=1, label="sweeping deadlines", file=sys.stderr, show_eta=False
    ) as bar:

        def progress(done: int, total: int) -> None:
            bar.length = total
            bar.update(done - bar.pos)

        return api.quote(request, solver=solver, on_progress=progress)


_SERVICE_OPTIONS: tuple[Callable[[Any], Any], ...] = (
    click.option(
        "--rps",
        type=FiniteFloat(min=0, min_open=True, max=1e6, unit="per_s"),
        help="Service: requests (images, for an image model) per second to carry (default: the "
        "workload's load).",
    ),
    click.option(
        "--peak-rps",
        type=FiniteFloat(min=0, min_open=True, max=1e6, unit="per_s"),
        help="Service: the load in peak hours (with --peak-hours); the base fleet can be "
        "committed, the peak runs on demand.",
    ),
    click.option(
        "--peak-hours",
        type=FiniteFloat(min=0, max=24, unit="h"),
        default=0.0,
        help="Service: hours a day at --peak-rps.",
    ),
    click.option(
        "--p95-ttft", type=Latency(), help="Service: p95 time to first token (1s, 800ms)."
    ),
    click.option("--p95-tpot", type=Latency(), help="Service: p95 time per output token (60ms)."),
    click.option(
        "--p95-e2e",
        type=Latency(),
        help="Service: p95 end-to-end latency (20s); for an image model, per image.",
    ),
)
_SERVICE_NAMES = ("rps", "peak_rps", "peak_hours", "p95_ttft", "p95_tpot", "p95_e2e")
SERVICE_LABELS = {
    "requests_per_s": "requests_per_s (--rps)",
    "peak_requests_per_s": "peak_requests_per_s (--peak-rps)",
    "peak_hours_per_day": "peak_hours_per_day (--peak-hours)",
    "ttft_ms_p95": "ttft_ms_p95 (--p95-ttft)",
    "tpot_ms_p95": "tpot_ms_p95 (--p95-tpot)",
    "e2e_ms_p95": "e2e_ms_p95 (--p95-e2e)",
}


def _stray_service_options(service: dict[str, Any]) -> tuple[str, str]:
    """(``--rps, --p95-ttft set`` / ``--p95-ttft sets``, ``them`` / ``it``): the service options
    typed, as the user wrote them, the verb and the pronoun that names them."""
    typed = [
        "--" + k.replace("_", "-")
        for k in _SERVICE_NAMES
        if service[k] is not None and service[k] != 0
    ]
    several = len(typed) > 1
    return f"{', '.join(typed)} {'set' if several else 'sets'}", "them" if several else "it"


def service_options(func: F) -> F:
    """The options of a service quote (load and latency targets), `quote` only."""
    for option in reversed(_SERVICE_OPTIONS):
        func = option(func)
    return func


def named_spec(options: dict[str, Any]) -> WorkloadSpec:
    """The workload the quote options name (--workload, or the job --model describes), loaded."""
    named = options["facts"].workload(options["workload"], option="--workload")
    return named if isinstance(named, WorkloadSpec) else load_workload(named)


def _service_request(options: dict[str, Any], service: dict[str, Any]) -> ServiceRequest | None:
    """A :class:`ServiceRequest` when the quote is for a service: a load or target was given, or
    the workload is an inference workload with a load and no --deadline was."""
    asked = any(service[k] for k in _SERVICE_NAMES if k != "peak_hours") or service["peak_hours"]
    try:
        spec = named_spec(options)
    except ConfigError:
        if not asked and options["deadline"] is not None:
            return None  # the job quote reports the workload's problem, as it always has
        # without a --deadline the job quote would stop at that and hide the file's mistake
        # (a service workload with a typo was told "Missing option '--deadline'")
        raise
    if not asked and spec.kind is not Kind.INFERENCE:
        return None  # a training job: the service quote's models need not load
    if spec.kind is not Kind.INFERENCE and options["deadline"] is not None:
        # with no --deadline the service quote says the same, in the library's words
        typed, them = _stray_service_options(service)
        raise click.UsageError(
            f"{typed} the load and latency targets of a service (an inference workload), and "
            f"{spec.name} is a training job (kind: {spec.kind.value}): drop {them}; a training "
            "job is quoted with --deadline"
        )
    from planner.quoting.service_quote import ServiceRequest, is_service

    if not asked and not is_service(spec):
        return None
    if options["deadline"] is not None:
        if not is_service(spec):
            # a batch inference job (a count of tokens or images by a deadline) given a service's
            # option: that option is the stray one (was told to drop the deadline)
            typed, them = _stray_service_options(service)
            raise click.UsageError(
                f"{typed} the load and latency targets of a service, and {spec.name} is a batch "
                f"job (a fixed amount of inference by --deadline): drop {them}"
            )
        raise click.UsageError(
            f"{spec.name} is quoted as a service (a load to carry, priced per month): leave out "
            "--deadline; --rps and --p95-ttft/--p95-tpot set its load and targets"
        )
    _check_hardware_cost(options["hardware"])
    return ServiceRequest(
        workload=spec,
        requests_per_s=service["rps"],
        peak_requests_per_s=service["peak_rps"],
        peak_hours_per_day=service["peak_hours"] or 0.0,
        ttft_ms_p95=service["p95_ttft"],
        tpot_ms_p95=service["p95_tpot"],
        e2e_ms_p95=service["p95_e2e"],
        providers=("owned",) if options["owned_only"] else options["providers"],
        regions=options["regions"],
        gpus=options["gpus"],
        include_reserved=options["include_reserved"],
        hardware=options["hardware"],
        local_cost_basis=options["hardware_cost"],
        offers_files=options["offers_files"],
        snapshot_dir=options["snapshot_dir"],
        discounts=one_per_key(options["discounts"], "--discount"),
        top=options["top"],
    )


def one_per_key(pairs: tuple[tuple[str, _V], ...], option: str) -> dict[str, _V]:
    """``KEY=VALUE`` pairs of a repeatable option as a mapping; a key given twice with another
    value is refused (was: the last one kept without a word, the answer for a value the user may
    not have meant)."""
    out: dict[str, _V] = {}
    for key, value in pairs:
        if key in out and out[key] != value:
            raise click.UsageError(
                f"{option} {key} is given twice ({key}={out[key]}, then {key}={value}); give it once"
            )
        out[key] = value
    return out


@click.command("quote")
@field_options({**QUOTE_LABELS, **SERVICE_LABELS})
@quote_options
@service_options
@format_option
@report_path_option
def quote_command(fmt: str, report_path: Path | None, max_age_days: int, **options: Any) -> None:
    """Cheapest plans (cloud, spot, owned hardware, or a mix) that finish a workload by a deadline,
    or, for a service, the cheapest fleet that carries its load within latency targets.

    With --report, also sweeps the cost-versus-deadline frontier and writes a self-contained
    HTML (or Markdown, CSV) report with the recommendation, charts and every assumption.

    Example: planner quote --workload gpt2-xl-finetune --deadline 24h --report quote.html

    A service: planner quote --workload llm-serving-70b --rps 5 --p95-ttft 1s --p95-tpot 60ms
    """
    service = {k: options.pop(k) for k in _SERVICE_NAMES}
    service_req = _service_request(options, service)
    if service_req is not None:
        if report_path is not None:
            raise click.UsageError("--report covers job quotes; a service quote prints as --format")
        if options.get("count_estimate_error"):
            raise click.UsageError(
                "--count-estimate-error covers a job's training time by a deadline; a service "
                "is sized on its latency targets (--p95-ttft, --p95-tpot, --p95-e2e)"
            )
        _refuse_job_options(service_req)
        from planner.reports.service_quote import render_service_quote

        served = api.quote_service(service_req)
        click.echo(render_service_quote(served, fmt, max_age_days=max_age_days).rstrip("\n"))
        if fmt not in ("table", "markdown"):
            for w in served.book.stale_warnings(max_age_days):
                click.echo(f"warning: {w}", err=True)
        return
    if options["pareto"] and fmt == "csv":
        # was: the frontier swept, then left out of the CSV's one table of plans
        raise click.UsageError(
            "--pareto adds the cost-versus-deadline frontier, which --format csv (one table of "
            "plans) leaves out: use --format json, or --report quote.csv for both tables"
        )
    target = report_target(report_path)
    if target is not None:
        options["pareto"] = True  # the report charts the cost-versus-deadline frontier
    solver = options.pop("solver")
    result = run_quote(request_from_options(**options), solver)
    warnings = result.book.stale_warnings(max_age_days, result.request.providers)
    money = Money.of(options["currency"], key_path="--currency")
    people = fmt in ("table", "markdown")
    text = render_quote(result, fmt, warnings=warnings if people else [], money=money)
    click.echo(text.rstrip("\n"))
    if not people:
        for w in warnings:
            click.echo(f"warning: {w}", err=True)
    save_report(result, target, max_age_days=max_age_days, currency=options["currency"])


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(quote_command)
