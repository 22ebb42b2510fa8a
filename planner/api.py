"""The library surface: everything the CLI and notebooks call.

providers -> snapshot -> offers table -> requirements filter -> optimizer -> plan -> report
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from planner.catalog import OfferBook, load_offer_book, load_offers
from planner.catalog.query import (
    OfferFilter,
    cheapest_gpu_hour,
    filter_offers,
    gpu_availability,
    sort_offers,
)
from planner.errors import ConfigError, is_whole_number
from planner.gpu_specs import GpuSpec, load_gpu_catalog, resolve_gpu
from planner.schema import Interconnect, PurchaseOption

if TYPE_CHECKING:
    from planner.optimize.budget import BudgetReport
    from planner.optimize.solvers import Solver
    from planner.ownership.costs import TcoResult
    from planner.ownership.hardware import HardwareSpec, load_hardware
    from planner.quoting.request import QuoteRequest
    from planner.quoting.result import QuoteResult
    from planner.workload import Estimate, Topology, WorkloadSpec, default_topology


def __getattr__(name: str) -> Any:
    # PEP 562: the workload model, the optimizer (HiGHS) and the ownership maths load on first use,
    # so `planner offers` and `planner prices` start without them.
    if name == "QuoteRequest":
        from planner.quoting.request import QuoteRequest

        return QuoteRequest
    if name == "QuoteResult":
        from planner.quoting.result import QuoteResult

        return QuoteResult
    if name == "TcoResult":
        from planner.ownership.costs import TcoResult

        return TcoResult
    if name in ("HardwareSpec", "load_hardware"):
        from planner.ownership import hardware

        return getattr(hardware, name)
    if name in ("Estimate", "Topology", "WorkloadSpec", "default_topology"):
        from planner import workload

        return getattr(workload, name)
    raise AttributeError(f"module 'planner.api' has no attribute {name!r}")


__all__ = [
    "Estimate",
    "GpuSpec",
    "Interconnect",
    "OfferBook",
    "OfferFilter",
    "OffersResult",
    "PurchaseOption",
    "QuoteRequest",
    "QuoteResult",
    "TcoResult",
    "Topology",
    "WorkloadSpec",
    "budget",
    "default_topology",
    "estimate",
    "gpus",
    "list_workloads",
    "load_hardware",
    "load_offer_book",
    "load_offers",
    "load_workload",
    "offers",
    "prices_diff",
    "prices_history",
    "prices_status",
    "quote",
    "refresh_prices",
    "report",
    "resolve_gpu",
    "tco",
    "workload_requirements",
]


# --- offers and GPUs (backbone) -------------------------------------------------------------


@dataclass(frozen=True)
class OffersResult:
    """Offers matching a filter, sorted, with the provenance of the prices."""

    offers: pd.DataFrame = field(repr=False)
    book: OfferBook = field(repr=False)


def offers(
    flt: OfferFilter | None = None,
    *,
    sort: str = "price",
    descending: bool = False,
    limit: int | None = None,
    offers_files: Sequence[str | Path] = (),
    snapshot_dir: str | Path | None = None,
) -> OffersResult:
    """GPU instance offers from the newest snapshot (plus private CSVs), filtered and sorted.

    >>> from planner.api import offers, OfferFilter
    >>> offers(OfferFilter(gpus=("A100-80GB",), max_price_usd_per_hour=40)).offers.head()  # doctest: +SKIP
    """
    book = load_offer_book(offers_files, snapshot_dir=snapshot_dir)
    found = sort_offers(
        filter_offers(book.offers, flt or OfferFilter(), load_gpu_catalog()),
        sort,
        descending=descending,
    )
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ConfigError(
                f"limit must be a whole number >= 0, got {limit!r}", key_path="--limit"
            )
        found = found.head(limit)  # head(-1) would drop the last row instead
    return OffersResult(offers=found, book=book)


def gpus(
    *, offers_files: Sequence[str | Path] = (), snapshot_dir: str | Path | None = None
) -> list[dict[str, Any]]:
    """The GPU catalog as records, each with the providers offering it and its cheapest GPU-hour."""
    book = load_offer_book(offers_files, snapshot_dir=snapshot_dir)
    where = gpu_availability(book.offers)
    cheapest = cheapest_gpu_hour(book.offers)
    records = []
    for gpu in load_gpu_catalog().gpus:
        record = gpu.to_record()
        record["offered_by"] = where.get(gpu.name, [])
        record["cheapest_on_demand_usd_per_gpu_hour"] = cheapest.get(gpu.name)
        records.append(record)
    return records


# --- owned hardware: TCO and budgets (issue 6) -------------------------------------------------


def tco(
    hardware: str | HardwareSpec,
    *,
    utilization: float = 1.0,
    years: float | None = None,
    compare_gpu: str | None = None,
    offers_files: Sequence[str | Path] = (),
    snapshot_dir: str | Path | None = None,
    with_cloud: bool = True,
    any_interconnect: bool = False,
    providers: Sequence[str] = (),
) -> TcoResult:
    """Total cost of owning ``hardware`` (a hardware file path or bundled name) and its breakeven
    against the cheapest cloud capacity in the newest snapshot (plus private CSVs), optionally
    only from ``providers`` (e.g. ``("aws",)``).

    >>> from planner.api import tco
    >>> round(tco("8xh100-hgx", with_cloud=False).usd_per_gpu_hour, 2)  # doctest: +SKIP
    2.05
    """
    from dataclasses import replace

    from planner.ownership.costs import tco as compute_tco
    from planner.ownership.hardware import HardwareSpec, load_hardware

    hw = hardware if isinstance(hardware, HardwareSpec) else load_hardware(hardware)
    book = load_offer_book(offers_files, snapshot_dir=snapshot_dir) if with_cloud else None
    result = compute_tco(
        hw,
        utilization=utilization,
        years=years,
        offers=None
        if book is None
        else filter_offers(
            book.offers, OfferFilter(providers=tuple(providers)), load_gpu_catalog()
        ),
        compare_gpu=compare_gpu,
        any_interconnect=any_interconnect,
    )
    if book is not None:
        result = replace(result, offers_as_of=book.as_of, offers_source=book.source_text)
    return result


def budget(
    budget_file: str,
    *,
    sensitivity: bool = True,
    time_limit_s: float = 60.0,
    solver: str = "highs",
) -> BudgetReport:
    """The cheapest mix of owned servers, commitments, on-demand and spot for a budget file
    (path or bundled name), with the pure strategies and a sensitivity table.

    >>> from planner.api import budget
    >>> budget("2027-ml-platform", sensitivity=False).plan.total_usd  # doctest: +SKIP
    """
    from planner.optimize.budget import budget_report, check_time_limit
    from planner.optimize.solvers import get_solver
    from planner.ownership.budget_spec import load_budget

    check_time_limit(time_limit_s)
    get_solver(solver, time_limit_s)  # an unknown or missing solver fails before any work
    return budget_report(
        load_budget(budget_file),
        solver=lambda: get_solver(solver, time_limit_s),
        sensitivity=sensitivity,
    )


# --- quote ---------------------------------------------------------------------------------


def quote(
    request: QuoteRequest,
    *,
    solver: Solver | str | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    **misused: object,
) -> QuoteResult:
    """Cheapest distinct plans that finish ``request.workload`` by its deadline.

    Every choice goes in the :class:`QuoteRequest`; other keyword arguments (``deadline=24``) are
    refused with a ConfigError that shows the request to build.  ``solver`` is a registered
    solver's name (``"highs"``, ``"cbc"``) or a :class:`~planner.optimize.solvers.Solver`.

    >>> from planner.api import QuoteRequest, quote
    >>> result = quote(QuoteRequest(workload="gpt2-xl-finetune", deadline_hours=24))  # doctest: +SKIP
    >>> result.plans[0].total_cost_usd  # doctest: +SKIP
    """
    from planner.quoting.service import misuse_error
    from planner.quoting.service import quote as run_quote

    if misused:
        raise misuse_error(request, misused)
    if isinstance(solver, str):
        from planner.optimize.solvers import get_solver

        solver = get_solver(solver)
    return run_quote(request, solver=solver, on_progress=on_progress)


# --- reports (issue 7): documents for people who approve the spending ---------------------------


def report(
    result: QuoteResult | TcoResult | BudgetReport,
    fmt: str = "html",
    *,
    currency: str = "USD",
    max_age_days: int | None = None,
    generated_by: str | None = None,
) -> str:
    """A quote, TCO or budget result as a report: ``html`` (one self-contained file with inline
    SVG charts), ``markdown`` or ``csv``.

    Numbers are formatted for people and agree with the JSON output of the same result; the price
    snapshot date and sources are printed, with a warning when older than ``max_age_days``
    (default 90).

    >>> from planner import api
    >>> html = api.report(api.tco("8xh100-hgx", utilization=0.6))  # doctest: +SKIP
    >>> open("tco.html", "w").write(html)  # doctest: +SKIP
    """
    from datetime import date

    from planner import __version__
    from planner.catalog import DEFAULT_MAX_AGE_DAYS
    from planner.catalog.store import snapshot_age_days
    from planner.config.currency import USD, load_fx_rates
    from planner.ownership.costs import TcoResult
    from planner.quoting.result import QuoteResult
    from planner.reports.formatting import Money
    from planner.reports.render import document_for, render_document

    limit = DEFAULT_MAX_AGE_DAYS if max_age_days is None else max_age_days
    warnings: list[str] = []
    if isinstance(result, QuoteResult):
        warnings = result.book.stale_warnings(limit)
    elif isinstance(result, TcoResult) and result.offers_as_of:
        age = snapshot_age_days(result.offers_as_of, date.today())
        if age > limit:
            warnings = [
                f"cloud prices are {age} days old (as of {result.offers_as_of}); refresh with "
                "`planner prices refresh` before relying on the comparison"
            ]
    if not isinstance(currency, str):
        raise ConfigError(
            f"currency must be a code such as 'EUR', got {currency!r}", key_path="currency"
        )
    money = Money()
    if currency.upper() != USD:
        money = Money(currency.upper(), 1.0 / load_fx_rates().rate(currency, key_path="--currency"))
    doc = document_for(
        result,
        money=money,
        warnings=warnings,
        generated_by=generated_by or f"planner {__version__} on {date.today().isoformat()}",
    )
    return render_document(doc, fmt)


# --- prices refresh (issue 5): the only path that talks to cloud APIs --------------------------


def refresh_prices(
    providers: Sequence[str] = (),
    regions: Sequence[str] = (),
    *,
    allow_partial: bool = False,
    force: bool = False,
    on_progress: Any = None,
) -> Any:
    """Fetch live prices and publish a new snapshot in the user data dir (``planner prices refresh``).

    Returns a :class:`planner.catalog.refresh.RefreshResult`.
    """
    from planner.catalog import default_roots, user_snapshot_root
    from planner.catalog.refresh import live_providers, plan_regions
    from planner.catalog.refresh import refresh_prices as refresh

    plan = plan_regions(providers, regions)
    return refresh(
        live_providers(plan),
        plan,
        root=user_snapshot_root(),
        previous_roots=default_roots(),
        allow_partial=allow_partial,
        force=force,
        on_progress=on_progress,
    )


def prices_status(*, max_age_days: int) -> list[dict[str, Any]]:
    """Each provider's newest snapshot: as-of date, age, rows, source, stale or not."""
    from planner.catalog import default_roots
    from planner.catalog.refresh import prices_status as status

    return status(default_roots(), max_age_days=max_age_days)


def prices_diff(
    old: str | Path, new: str | Path, *, threshold: float = 0.05
) -> list[dict[str, Any]]:
    """Offers added, removed or re-priced between two snapshots (ids or directories)."""
    from planner.catalog import default_roots
    from planner.catalog.refresh import diff_offers, find_snapshot
    from planner.catalog.store import load_snapshot

    roots = default_roots()
    before = load_snapshot(find_snapshot(old, roots)).offers
    after = load_snapshot(find_snapshot(new, roots)).offers
    return diff_offers(before, after, threshold=threshold)


def prices_history(instance_type: str, *, region: str | None = None) -> list[dict[str, Any]]:
    """The prices of one instance type in every stored snapshot, oldest first."""
    from planner.catalog import default_roots
    from planner.catalog.refresh import price_history

    return price_history(default_roots(), instance_type=instance_type, region=region)


# --- workloads and estimates (issue 3) ---------------------------------------------------------


def load_workload(name_or_path: str) -> WorkloadSpec:
    """A workload from the library (``gpt2-xl-finetune``) or a YAML file path.

    >>> from planner.api import load_workload
    >>> load_workload("gpt2-xl-finetune").kind.value
    'finetune'
    """
    from planner.workload import load_workload as _load

    return _load(name_or_path)


def list_workloads() -> list[WorkloadSpec]:
    """Every workload in the library, sorted by name."""
    from planner.workload import list_workloads as _list

    return _list()


def estimate(
    workload: str | WorkloadSpec,
    gpu: str | GpuSpec,
    count: int = 1,
    *,
    topology: Topology | None = None,
) -> Estimate:
    """Memory, strategy, FLOPs, efficiency, hours and interconnect for a workload on ``count`` GPUs.

    >>> from planner.api import estimate
    >>> estimate("gpt2-xl-finetune", "RTX4090", 1).fits
    False
    """
    from planner.workload import WorkloadSpec
    from planner.workload import estimate as _estimate
    from planner.workload.estimator import layout_error

    # checked here: a float or NaN count reached an assertion in the strategy search
    if not is_whole_number(count) or count < 1:
        raise ConfigError(
            f"GPU count must be a whole number >= 1, got {count!r}", key_path="--count"
        )
    spec = load_workload(str(workload)) if isinstance(workload, (str, Path)) else workload
    spec_gpu = resolve_gpu(gpu) if isinstance(gpu, str) else gpu
    if not isinstance(spec, WorkloadSpec):
        raise ConfigError(f"expected a workload name, path or WorkloadSpec, got {workload!r}")
    if not isinstance(spec_gpu, GpuSpec):
        raise ConfigError(f"expected a GPU name or GpuSpec, got {gpu!r}", key_path="--gpu")
    # a pinned tensor x pipeline layout this count cannot hold is a conflict in the request (the
    # core estimator reports it as not fitting, so that quote skips such counts)
    problem = layout_error(spec, count)
    if problem is not None:
        raise problem
    return _estimate(spec, spec_gpu, count, topology=topology)


# Reference GPUs for ``planner workloads show``: a current flagship, the A100 and a consumer card.
REFERENCE_GPUS = ("H100", "A100-80GB", "RTX4090")


def workload_requirements(
    workload: str | WorkloadSpec, gpus: Sequence[str] = REFERENCE_GPUS, max_count: int = 4096
) -> list[Estimate]:
    """For each reference GPU, the estimate at the smallest power-of-two count that fits (power
    of two times the pinned tensor x pipeline size, where the workload pins one)."""
    from planner.workload.estimator import pinned_gpus

    spec = load_workload(workload) if isinstance(workload, str) else workload
    out = []
    for name in gpus:
        count = pinned_gpus(spec)  # a pinned tensor x pipeline layout needs a multiple of it
        est = estimate(spec, name, count)
        while not est.fits and count < max_count:
            count *= 2
            est = estimate(spec, name, count)
        out.append(est)
    return out
