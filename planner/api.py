"""The library surface: everything the CLI and notebooks call.

providers -> snapshot -> offers table -> requirements filter -> optimizer -> plan -> report

Two ways in, one code path.  The functions (``planner.quote(workload="gpt2-xl-finetune",
deadline_hours=24)``) each make a one-off :class:`Planner` session from their arguments and call
its method; a session kept in a variable loads the offer book once and reuses it for every
offers, GPU, quote and TCO call, the way sqlite-utils' ``Database`` holds one connection.
Arguments are keywords named as in the domain (``deadline_hours``, ``budget_usd``); a misspelt
one is a ConfigError with the nearest names, and one of the wrong type a ConfigError naming it
(checked once, by ``_keywords_checked``, from the annotation).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import math
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import pandas as pd

from planner import _PUBLIC, _load_public
from planner.catalog import OfferBook, load_offer_book
from planner.catalog.query import (
    OfferFilter,
    cheapest_gpu_hour,
    filter_offers,
    gpu_availability,
    group_offers,
    sort_offers,
    why_no_offers,
)
from planner.errors import (
    ConfigError,
    UnknownNameError,
    binding_problem,
    callable_name,
    is_number,
    is_whole_number,
    training_keyword_error,
)
from planner.gpu_specs import GpuSpec, load_gpu_catalog
from planner.units import MAX_GPUS_PER_JOB

if TYPE_CHECKING:
    from planner.catalog.refresh import Progress, RefreshResult
    from planner.optimize.budget import BudgetReport
    from planner.optimize.solvers import Solver
    from planner.ownership.costs import TcoResult
    from planner.ownership.hardware import HardwareSpec
    from planner.quoting.request import QuoteRequest
    from planner.quoting.result import QuoteResult
    from planner.quoting.service_quote import ServiceQuoteResult, ServiceRequest
    from planner.reports.charts import Figure as MplFigure
    from planner.reports.formatting import Money
    from planner.workload import Estimate, Topology, WorkloadSpec
    from planner.workload.calibration import Calibration


# A request that names its prices (offers files, a snapshot): a job quote's or a service quote's.
_Sourced = TypeVar("_Sourced", "QuoteRequest", "ServiceRequest")


def __getattr__(name: str) -> Any:
    # PEP 562: names defined in other modules (the workload model, the optimizer, the ownership
    # maths) load on first use, from the one table in planner/__init__.py, so that `planner
    # offers` and `planner prices` start without them.
    return _load_public(name, __name__)


__all__ = sorted(_PUBLIC)

log = logging.getLogger(__name__)
_P = ParamSpec("_P")
_R = TypeVar("_R")


@functools.cache
def _filter_fields() -> frozenset[str]:
    """OfferFilter's fields: what offers() takes in its ``flt``."""
    from dataclasses import fields

    return frozenset(f.name for f in fields(OfferFilter))


def _keywords_checked(func: Callable[_P, _R]) -> Callable[_P, _R]:
    """``func`` with its arguments checked once, at the library's edge: a misspelt keyword is a
    ConfigError that names the nearest ones (``utilisation`` -> did you mean utilization?)
    instead of Python's TypeError, and each argument whose annotation is in :data:`_ARGUMENT_TYPES`
    is checked and normalised by its converter (``providers="aws"`` means that one provider, not
    its letters; ``descending="yes"`` is refused)."""
    sig = inspect.signature(func)
    params = sig.parameters
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    known = [name for name, p in params.items() if p.kind in kinds and name != "self"]
    # a function taking **fields (quote) names its keywords elsewhere (QuoteRequest checks them)
    open_ended = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    what = f"{callable_name(func)}() keyword argument"
    converters = {
        name: _ARGUMENT_TYPES[str(p.annotation)]
        for name, p in params.items()
        if str(p.annotation) in _ARGUMENT_TYPES
    }

    @functools.wraps(func)
    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        for name in kwargs:
            if name not in known and not open_ended:
                misplaced = training_keyword_error(func.__name__, name)
                if misplaced is not None and "workload" in known:
                    raise misplaced
                if "flt" in known and name in _filter_fields():
                    # offers(gpus=["H100"]): was "unknown offers() keyword argument 'gpus'"
                    raise ConfigError(
                        f"{func.__name__}() takes its filters in one OfferFilter, got {name}=",
                        key_path=name,
                        hint=f"planner.{func.__name__}(flt=planner.OfferFilter({name}=...))",
                    )
                if not known:
                    raise ConfigError(
                        f"{func.__name__}() takes no arguments, got {name}=",
                        key_path=name,
                        hint=f"call planner.{func.__name__}()",
                    )
                raise UnknownNameError(what, name, known, key_path=name)
        if not converters:
            try:
                return func(*args, **kwargs)
            except TypeError:  # a missing or extra positional argument, or the body's own
                problem = binding_problem(func, args, kwargs)
                if problem is None:
                    raise
                raise problem from None
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError:  # a missing or extra positional argument
            problem = binding_problem(func, args, kwargs)
            if problem is None:  # pragma: no cover - bind failed just above
                raise
            raise problem from None
        for name, convert in converters.items():
            if name in bound.arguments:
                bound.arguments[name] = convert(name, bound.arguments[name])
        return func(*bound.args, **bound.kwargs)

    return call


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(
            f"expected True or False, got {value!r}",
            key_path=name,
            hint=f"{name}=True or {name}=False",
        )
    return value


def _is_path(value: Any) -> bool:
    return isinstance(value, (str, os.PathLike))


def _path(name: str, value: Any) -> Any:
    if not _is_path(value):
        raise ConfigError(
            f"expected a path (str or pathlib.Path), got {value!r}",
            key_path=name,
            hint=f"e.g. {name}='prices/'",
        )
    return value


def _path_or_none(name: str, value: Any) -> Any:
    return None if value is None else _path(name, value)


def _sequence(name: str, value: Any, item_ok: Callable[[Any], bool], kind: str) -> tuple[Any, ...]:
    """A bare name or path means that one (not its letters); otherwise a list or tuple of them."""
    if item_ok(value):
        return (value,)
    # each argument's own example (was the providers' for every one: gpus=('aws', 'gcp'))
    example = f"e.g. {name}={_NAME_EXAMPLES.get(name, _NAME_EXAMPLES['providers'])}"
    if kind != "name":
        example = f"e.g. {name}=('prices.csv',)"
    if not isinstance(value, (Sequence, set, frozenset)) or isinstance(value, (str, bytes)):
        raise ConfigError(
            f"expected a {kind} or a list of {kind}s, got {value!r}", key_path=name, hint=example
        )
    items = tuple(value)
    for item in items:
        if not item_ok(item):
            raise ConfigError(
                f"expected {kind}s, got {item!r} in {value!r}", key_path=name, hint=example
            )
    return items


_NAME_EXAMPLES = {
    "providers": "('aws', 'gcp')",
    "gpus": "('H100', 'A100-80GB')",
    "regions": "('us-east-1', 'europe-west4')",
    "group_by": "('gpu',)",
    "accept_changes": "('aws:us-east-1:p5.48xlarge',)",
}


def _names(name: str, value: Any) -> tuple[str, ...]:
    return _sequence(name, value, lambda v: isinstance(v, str), "name")


def _paths(name: str, value: Any) -> tuple[Any, ...]:
    return _sequence(name, value, _is_path, "path")


def _text_or_none(name: str, value: Any) -> Any:
    if value is not None and not isinstance(value, str):
        raise ConfigError(
            f"expected text (a str) or None, got {value!r}",
            key_path=name,
            hint=f"e.g. {name}='...', or leave it out",
        )
    return value


def _count_or_none(name: str, value: Any) -> Any:
    """A whole number >= 0 (rows, days), or None for the default."""
    if value is not None and (not is_whole_number(value) or value < 0):
        raise ConfigError(
            f"expected a whole number >= 0 or None, got {value!r}",
            key_path=name,
            hint=f"e.g. {name}=90, or leave it out for the default",
        )
    return None if value is None else int(value)


def _callable_or_none(name: str, value: Any) -> Any:
    """A callback (``on_progress``, ``load_book``): called later, deep in the work, where a
    number or a string would fail as "'int' object is not callable"."""
    if value is not None and not callable(value):
        raise ConfigError(
            f"expected a function or None, got {value!r}",
            key_path=name,
            hint="e.g. load_book=planner.load_offer_book, or leave it out",
        )
    return value


# Fewer tokens a sequence than any language model trains on (U: a planning threshold): a config's
# max_position_embeddings or a --seq-len of 1 (was an estimate at 0.1% MFU without a word).
_FEWEST_PLAUSIBLE_SEQ_TOKENS = 8


def _warn_implausible(spec: WorkloadSpec, est: Estimate) -> None:
    """Say so where an estimate that runs is no plan anyone makes: longer than the longest
    deadline a quote takes (ten years: was 438 years for 1e15 tokens on 8 H100s, without a
    word), or a transformer trained on sequences of a few tokens."""
    from planner.units import HOURS_PER_YEAR, MAX_DEADLINE_HOURS
    from planner.workload.spec import Kind

    if est.fits and math.isfinite(est.wall_hours) and est.wall_hours > MAX_DEADLINE_HOURS:
        log.warning(
            "%s on %d x %s takes %.3g years: check the amount of work (data.tokens, samples, "
            "epochs) and the GPU count; a quote plans at most ten years",
            spec.name,
            est.gpu_count,
            est.gpu,
            est.wall_hours / HOURS_PER_YEAR,
        )
    if (
        spec.kind is not Kind.INFERENCE
        and spec.model.is_transformer
        and spec.seq_len < _FEWEST_PLAUSIBLE_SEQ_TOKENS
    ):
        log.warning(
            "%s trains on sequences of %d token(s) (model.seq_len, or a config's "
            "max_position_embeddings): each step learns from almost nothing; check the length",
            spec.name,
            spec.seq_len,
        )


def _callback_taking(*arguments: str) -> Callable[[str, Any], Any]:
    """The check of a progress callback called with ``arguments``: a function, and one that takes
    that many (was: the quote's two-argument example for refresh_prices's four, followed, and a
    raw TypeError after the download had run)."""
    call = f"lambda {', '.join(arguments)}: print({', '.join(arguments)})"

    def check(name: str, value: Any) -> Any:
        if value is None:
            return None
        if not callable(value):
            raise ConfigError(
                f"expected a function or None, got {value!r}",
                key_path=name,
                hint=f"e.g. {name}={call}, or leave it out",
            )
        try:
            signature = inspect.signature(value)
        except (TypeError, ValueError):  # a builtin without one: called as it is
            return value
        try:
            signature.bind(*arguments)
        except TypeError:
            raise ConfigError(
                f"{name} is called with {len(arguments)} arguments ({', '.join(arguments)}), "
                f"and this function takes {signature}",
                key_path=name,
                hint=f"e.g. {name}={call}",
            ) from None
        return value

    return check


def _result(name: str, value: Any) -> Any:
    from planner.optimize.budget import BudgetReport
    from planner.ownership.costs import TcoResult
    from planner.quoting.result import QuoteResult

    if not isinstance(value, (QuoteResult, TcoResult, BudgetReport)):
        raise ConfigError(
            f"expected a quote, TCO or budget result, got {type(value).__name__}",
            key_path=name,
            hint="make one with planner.quote(...), planner.tco(...) or planner.budget(...)",
        )
    return value


def _topology(name: str, value: Any) -> Any:
    from planner.workload import Topology

    if value is not None and not isinstance(value, Topology):
        raise ConfigError(
            f"expected a planner.workload.Topology or None, got {value!r}",
            key_path=name,
            hint="e.g. Topology(gpus_per_node=8, interconnect='nvlink', fabric='infiniband'), or leave "
            "it out to let the estimate assume one node of the GPUs",
        )
    return value


def _solver(name: str, value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value  # a name: get_solver answers an unknown one with the registered names
    from planner.optimize.solvers import Solver

    if not isinstance(value, Solver):
        raise ConfigError(
            f"expected a solver name or a Solver, got {value!r}",
            key_path=name,
            hint="solver='highs' or solver='cbc'",
        )
    return value


def _workload(name: str, value: Any) -> Any:
    """A workload argument: a library name or YAML path (loaded by the function), or a
    WorkloadSpec (a dict, None or a number is refused here, before any attribute is read)."""
    from planner.workload import WorkloadSpec

    if not isinstance(value, (str, os.PathLike, WorkloadSpec)):
        raise ConfigError(
            f"expected a workload name, path or WorkloadSpec, got {value!r}",
            key_path=name,
            hint=f"e.g. {name}='gpt2-xl-finetune' or {name}=planner.load_workload('file.yaml')",
        )
    if isinstance(value, WorkloadSpec):
        from planner.workload.spec import checked_spec

        return checked_spec(value)  # a model_copy(update=...) skipped every check
    # a path of any kind as text, which the functions load (they tell a spec from a name by type)
    return os.fspath(value) if isinstance(value, os.PathLike) else value


# Annotation (as written in the signatures below) -> its check; every function and Planner
# method decorated with @_keywords_checked gets these checks for the arguments so annotated.
_ARGUMENT_TYPES: dict[str, Callable[[str, Any], Any]] = {
    "bool": _flag,
    "str | Path": _path,
    "str | Path | None": _path_or_none,
    "Solver | str | None": _solver,
    "Sequence[str]": _names,
    "Sequence[str | Path]": _paths,
    "QuoteResult | TcoResult | BudgetReport": _result,
    "Topology | None": _topology,
    "str | None": _text_or_none,
    "int | None": _count_or_none,
    "Callable[[int, int], None] | None": _callback_taking("done", "total"),
    "Progress | None": _callback_taking("provider", "region", "done", "total"),
    "BookLoader": _callable_or_none,
    "str | WorkloadSpec": _workload,
}


@dataclass(frozen=True)
class OffersResult:
    """Offers matching a filter, sorted, with the provenance of the prices."""

    offers: pd.DataFrame = field(repr=False)
    book: OfferBook = field(repr=False)
    # When no offer matched: which filter emptied the table and what is on offer instead.
    why_empty: str | None = None


# Loads an offer book: (private CSVs, snapshot_dir=...) -> OfferBook, as load_offer_book does.
BookLoader = Callable[..., OfferBook]


class Planner:
    """A planning session: one set of prices, the currency reports use and the MILP solver.

    The prices are the newest snapshot per provider (or exactly ``snapshot_dir``) plus the
    private price lists ``offers_files`` (CSV in the common schema); they load on first use and
    every later call reuses them, so comparing many deadlines, GPUs or workloads does not re-read
    the snapshot.  ``solver`` is a registered solver's name (``"highs"``, ``"cbc"``; None: HiGHS,
    or CBC when highspy is missing).  ``load_book`` loads the prices (a test passes a fake).

    >>> session = Planner(offers_files=("our-prices.csv",), currency="EUR")  # doctest: +SKIP
    >>> for hours in (12, 24, 72):  # doctest: +SKIP
    ...     print(hours, session.quote(workload="gpt2-xl-finetune", deadline_hours=hours).plans[0])
    >>> html = session.report(session.tco("8xh100-hgx", utilization=0.6))  # doctest: +SKIP
    """

    @_keywords_checked
    def __init__(
        self,
        *,
        snapshot_dir: str | Path | None = None,
        offers_files: Sequence[str | Path] = (),
        currency: str = "USD",
        solver: str | None = None,
        load_book: BookLoader | None = load_offer_book,
    ) -> None:
        if not isinstance(currency, str):
            raise ConfigError(
                f"currency must be a code such as 'EUR', got {currency!r}",
                key_path="currency",
                hint="a three-letter code as text, e.g. currency='EUR' (USD is the default)",
            )
        if solver is not None and not isinstance(solver, str):
            raise ConfigError(
                f"expected a solver name, got {solver!r}",
                key_path="solver",
                hint="'highs' or 'cbc'",
            )
        # Checked here, once, not at the first quote or report of the session.
        if currency.strip().upper() != "USD":
            self._money(currency)
        if solver is not None:
            from planner.optimize.solvers import SOLVERS

            if solver.strip().lower() not in SOLVERS:
                raise UnknownNameError("solver", solver, SOLVERS, key_path="solver")
        self.snapshot_dir = snapshot_dir
        self.offers_files: tuple[str | Path, ...] = tuple(offers_files)
        self.currency = currency
        self.solver = solver
        # None: the default loader, as the signature's own default (was: "'NoneType' object is
        # not callable" at the first quote)
        self._load_book: BookLoader = (
            load_offer_book if load_book is None else _callable_or_none("load_book", load_book)
        )
        self._book: OfferBook | None = None

    def __repr__(self) -> str:
        return (
            f"Planner(snapshot_dir={self.snapshot_dir!r}, offers_files={self.offers_files!r}, "
            f"currency={self.currency!r}, solver={self.solver!r})"
        )

    @property
    def book(self) -> OfferBook:
        """The session's offers with their provenance, loaded on first use."""
        if self._book is None:
            book = self._load_book(self.offers_files, snapshot_dir=self.snapshot_dir)
            if not isinstance(book, OfferBook):
                raise ConfigError(
                    f"load_book returned {type(book).__name__}, not an OfferBook",
                    key_path="load_book",
                    hint="return planner.load_offer_book(offers_files, snapshot_dir=...), or leave "
                    "load_book out",
                )
            self._book = book
        return self._book

    # --- offers and GPUs ---------------------------------------------------------------------

    @_keywords_checked
    def offers(
        self,
        flt: OfferFilter | None = None,
        *,
        sort: str = "price",
        descending: bool = False,
        limit: int | None = None,
        group_by: Sequence[str] = (),
    ) -> OffersResult:
        """Offers matching ``flt``, sorted by ``sort`` (at most ``limit`` rows); with
        ``group_by`` (``gpu``, ``provider``, ``region``), the cheapest offer of each group."""
        book, flt = self.book, flt or OfferFilter()
        catalog = load_gpu_catalog()
        matching = group_offers(filter_offers(book.offers, flt, catalog), group_by)
        found = sort_offers(matching, sort, descending=descending)
        if limit is not None:
            if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
                # 0: was an empty table with no reason (the command line's --limit refuses it)
                raise ConfigError(
                    f"limit must be a whole number >= 1, got {limit!r}",
                    key_path="limit",
                    hint="e.g. limit=20, or leave it out for every matching offer",
                )
            found = found.head(limit)  # head(-1) would drop the last row instead
        why = why_no_offers(book.offers, flt, catalog) if found.empty else None
        return OffersResult(offers=found, book=book, why_empty=why)

    @_keywords_checked
    def gpus(self) -> list[dict[str, Any]]:
        """The GPU catalog as records, each with the providers offering it and its cheapest
        on-demand GPU-hour."""
        where = gpu_availability(self.book.offers)
        cheapest = cheapest_gpu_hour(self.book.offers)
        records = []
        for gpu in load_gpu_catalog().gpus:
            record = gpu.to_record()
            record["offered_by"] = where.get(gpu.name, [])
            record["cheapest_on_demand_usd_per_gpu_hour"] = cheapest.get(gpu.name)
            records.append(record)
        return records

    # --- workloads -----------------------------------------------------------------------------

    @_keywords_checked
    def estimate(
        self,
        workload: str | WorkloadSpec,
        gpu: str | GpuSpec,
        count: int = 1,
        *,
        topology: Topology | None = None,
    ) -> Estimate:
        """Memory, strategy, FLOPs, efficiency, hours and interconnect on ``count`` GPUs, the
        training steps corrected by your measured runs (``planner.calibrate``)."""
        from planner.workload.calibration import load_calibrations

        return self._estimate(workload, gpu, count, topology, load_calibrations())

    def _estimate(
        self,
        workload: str | WorkloadSpec,
        gpu: str | GpuSpec,
        count: int,
        topology: Topology | None,
        calibrations: Sequence[Calibration],
    ) -> Estimate:
        """:meth:`estimate` with the given calibrations, after its checks of the arguments."""
        from planner.workload import WorkloadSpec
        from planner.workload import estimate as _estimate
        from planner.workload.advice import layout_error
        from planner.workload.estimate_types import check_topology
        from planner.workload.spec import Kind
        from planner.workload.strategy import tensor_across_nodes

        # checked here: a float or NaN count reached an assertion in the strategy search
        if not is_whole_number(count) or not 1 <= count <= MAX_GPUS_PER_JOB:
            raise ConfigError(
                f"GPU count must be a whole number from 1 to {MAX_GPUS_PER_JOB:,}, got {count!r}",
                key_path="count",
                # (the cluster size only where the count is too large: was said of 0 and "8")
                hint="the largest GPU clusters hold ~200,000 GPUs"
                if is_whole_number(count) and count > MAX_GPUS_PER_JOB
                else f"count={int(count)}: a number, not text"
                if isinstance(count, str) and count.strip().isdigit() and int(count) >= 1
                else "count is how many GPUs run the job: 1 or more, e.g. count=8",
            )
        count = int(count)  # a numpy int64 was kept, and to_dict() could not be written as JSON
        spec = load_workload(str(workload)) if isinstance(workload, (str, Path)) else workload
        spec_gpu = load_gpu_catalog().resolve(gpu, key_path="gpu") if isinstance(gpu, str) else gpu
        if not isinstance(spec, WorkloadSpec):
            raise ConfigError(f"expected a workload name, path or WorkloadSpec, got {workload!r}")
        if not isinstance(spec_gpu, GpuSpec):
            raise ConfigError(
                f"expected a GPU name or GpuSpec, got {gpu!r}",
                key_path="gpu",
                hint="name a GPU such as H100-SXM or A100-80GB (planner.gpus() lists them)",
            )
        spec_gpu.check()  # one made in Python skipped the catalog's rows
        with _in_workload_file(spec):
            # a pinned tensor x pipeline layout this count cannot hold is a conflict in the
            # request (the core estimator reports it as not fitting, so that quote skips such
            # counts)
            problem = layout_error(spec, count)
            if problem is not None:
                raise problem
            if topology is not None:
                check_topology(spec_gpu, topology, count)
                if spec.kind is not Kind.INFERENCE:
                    pinned = {"tensor": spec.train.parallelism.tensor or 1}
                    across = tensor_across_nodes(pinned, count, topology.gpus_per_node)
                    if across is not None:
                        raise ConfigError(
                            across,
                            key_path="training.parallelism.tensor",
                            hint=f"give at least {pinned['tensor']} GPUs per node, or a smaller "
                            "training.parallelism.tensor (or leave it to the search)",
                        )
            est = _estimate(spec, spec_gpu, count, topology=topology, calibrations=calibrations)
            _warn_implausible(spec, est)
            return est

    # --- quote ---------------------------------------------------------------------------------

    @_keywords_checked
    def quote(
        self,
        request: QuoteRequest | None = None,
        *,
        solver: Solver | str | None = None,
        on_progress: Callable[[int, int], None] | None = None,
        **fields: Any,
    ) -> QuoteResult:
        """Cheapest distinct plans that finish a workload by its deadline, from this session's
        prices: keywords named as :class:`QuoteRequest`'s fields, a request, or a request with
        some fields replaced (``session.quote(request, deadline_hours=48)``)."""
        from planner.quoting.request import make_request
        from planner.quoting.service import quote as run_quote

        req = self._with_sources(make_request(request, **fields))
        chosen = self.solver if solver is None else solver
        if isinstance(chosen, str):
            from planner.optimize.model import QUOTE_SOLVER_PRESOLVE, QUOTE_SOLVER_THREADS
            from planner.optimize.solvers import get_solver

            # a solver named by the caller (the CLI's --solver) runs with the settings a quote's
            # models are tuned for, as the default one does (planner.optimize.model)
            chosen = get_solver(
                chosen, threads=QUOTE_SOLVER_THREADS, presolve=QUOTE_SOLVER_PRESOLVE
            )
        return run_quote(req, solver=chosen, on_progress=on_progress, book=self.book)

    def quote_service(
        self, request: ServiceRequest | None = None, **fields: Any
    ) -> ServiceQuoteResult:
        """The cheapest fleets that carry a service's load within its latency targets, per
        month, from this session's prices: keywords named as :class:`ServiceRequest`'s fields
        (``workload``, ``requests_per_s``, ``ttft_ms_p95``, ``tpot_ms_p95``, ...) or a request."""
        from planner.quoting.service_quote import make_service_request
        from planner.quoting.service_quote import quote_service as run_service_quote

        req = self._with_sources(make_service_request(request, **fields))
        return run_service_quote(req, book=self.book)

    def _with_sources(self, req: _Sourced) -> _Sourced:
        """``req`` priced from this session's offers: a request that names none gets the
        session's; one that names others is refused rather than quietly priced from these."""
        asked = _sources(req.offers_files, req.snapshot_dir)
        if asked == _sources(self.offers_files, self.snapshot_dir):
            return req
        if asked == _sources((), None):
            return replace(req, offers_files=self.offers_files, snapshot_dir=self.snapshot_dir)
        raise ConfigError(
            f"the request's prices (offers_files={req.offers_files!r}, snapshot_dir="
            f"{req.snapshot_dir!r}) are not this session's",
            key_path="offers_files",
            hint="make a Planner(offers_files=..., snapshot_dir=...) for those prices, or leave "
            "them out of the request",
        )

    # --- owned hardware: TCO and budgets -------------------------------------------------------

    @_keywords_checked
    def tco(
        self,
        hardware: str | HardwareSpec,
        *,
        utilization: float = 1.0,
        years: float | None = None,
        compare_gpu: str | None = None,
        with_cloud: bool = True,
        any_interconnect: bool = False,
        providers: Sequence[str] = (),
    ) -> TcoResult:
        """Total cost of owning ``hardware`` (a hardware file path or bundled name) and its
        breakeven against the cheapest cloud capacity in this session's prices, optionally only
        from ``providers`` (e.g. ``("aws",)``)."""
        from planner.ownership.costs import tco as compute_tco
        from planner.ownership.hardware import HardwareSpec, checked_hardware, load_hardware

        _check_cloud_fields(
            with_cloud,
            compare_gpu=compare_gpu,
            any_interconnect=any_interconnect,
            providers=providers,
        )
        # one made in Python, or changed with dataclasses.replace, skipped the file's checks
        hw = (
            checked_hardware(hardware)
            if isinstance(hardware, HardwareSpec)
            else load_hardware(hardware)
        )
        book = self.book if with_cloud else None
        offers = (
            None
            if book is None
            else filter_offers(
                book.offers, OfferFilter(providers=tuple(providers)), load_gpu_catalog()
            )
        )
        result = compute_tco(
            hw,
            utilization=utilization,
            years=years,
            offers=offers,
            compare_gpu=compare_gpu,
            any_interconnect=any_interconnect,
        )
        if book is not None:
            # the dates and sources of the providers the comparison drew on (its rows', else the
            # ones asked for): was every provider's, an aws-only comparison dated by azure's
            # older snapshot and warned about its age
            used = sorted({c.provider for c in result.comparisons}) or list(providers)
            parts = book.sources_of(used) or book.sources
            dates = [s.as_of for s in parts if s.as_of]
            result = replace(
                result,
                offers_as_of=min(dates) if dates else book.as_of,
                offers_source="; ".join(f"{s.provider}: {s.source}" for s in parts),
            )
        if book is not None and offers is not None and not result.comparisons:
            why = result.compare_reason or _left_out(
                result, book.offers, offers, providers, any_interconnect
            )
            result = replace(result, compare_reason=why)
        if book is None:
            # was: "no cloud offers with H100 GPUs in these prices ... (--compare-gpu H100)" to a
            # user who had switched the comparison off
            result = replace(
                result,
                compare_reason="no cloud comparison: switched off (--no-cloud, with_cloud=False "
                "in Python)",
            )
        return result

    @_keywords_checked
    def budget(
        self,
        budget_file: str,
        *,
        sensitivity: bool = True,
        time_limit_s: float = 60.0,
        solver: str | None = None,
    ) -> BudgetReport:
        """The cheapest mix of owned servers, commitments, on-demand and spot for a budget file
        (path or bundled name), with the pure strategies and a sensitivity table.  The budget
        file holds its own prices; the session's solver (HiGHS by default) solves it."""
        from planner.errors import shown_path
        from planner.optimize.budget import budget_report, check_time_limit
        from planner.optimize.solvers import get_solver
        from planner.ownership.budget_spec import load_budget, warn_off_market_prices

        name = solver or self.solver or "highs"
        check_time_limit(time_limit_s)
        get_solver(name, time_limit_s)  # an unknown or missing solver fails before any work
        spec = load_budget(budget_file)
        # the file's own cloud prices against the session's offers (warnings only)
        warn_off_market_prices(spec, self.book.offers, shown_path(budget_file))
        return budget_report(
            spec,
            solver=lambda: get_solver(name, time_limit_s),
            sensitivity=sensitivity,
        )

    # --- reports -------------------------------------------------------------------------------

    @_keywords_checked
    def report(
        self,
        result: QuoteResult | TcoResult | BudgetReport,
        fmt: str = "html",
        *,
        currency: str | None = None,
        max_age_days: int | None = None,
        generated_by: str | None = None,
    ) -> str:
        """A quote, TCO or budget result as a report (``html``, ``markdown`` or ``csv``), money
        in ``currency`` (default: the session's)."""
        from planner import __version__, clock
        from planner.reports.render import document_for, render_document

        money = self._money(currency)
        doc = document_for(
            result,
            money=money,
            warnings=stale_warnings(result, max_age_days),
            generated_by=generated_by
            or f"planner {__version__} on {clock.utc_today().isoformat()}",
        )
        return render_document(doc, fmt)

    @_keywords_checked
    def figures(
        self, result: QuoteResult | TcoResult | BudgetReport, *, currency: str | None = None
    ) -> list[MplFigure]:
        """The charts of ``result``'s report as matplotlib Figures, for notebooks: the same
        content as the HTML report's charts (``fig.savefig("chart.png")`` or display inline).

        >>> figs = planner.Planner().figures(planner.tco("8xh100-hgx"))  # doctest: +SKIP
        """
        from planner.reports.render import document_for, figures_of

        return figures_of(document_for(result, money=self._money(currency)))

    def _money(self, currency: str | None) -> Money:
        from planner.reports.formatting import Money

        code = self.currency if currency is None else currency
        if not isinstance(code, str):
            raise ConfigError(
                f"currency must be a code such as 'EUR', got {code!r}",
                key_path="currency",
                hint="a three-letter code as text, e.g. currency='EUR' (USD is the default)",
            )
        return Money.of(code, key_path="currency")


def _left_out(
    result: TcoResult,
    every_offer: pd.DataFrame,
    offers: pd.DataFrame,
    providers: Sequence[str],
    any_interconnect: bool,
) -> str:
    """Why a TCO names no cloud capacity when a choice of the user's left it out, with the fix:
    the provider choice, or the GPU link the machine's own link asks of an instance.  Was
    always "no cloud offers with T4 GPUs to compare with (try --compare-gpu or --offers)", to a
    user who had given --compare-gpu T4 and whose --provider lambda or 8 NVSwitch-linked GPUs
    left out the T4s aws rents.  "" when no choice of the user's is the cause."""
    from planner.ownership.costs import compare_cloud

    hw, gpu = result.hardware, result.compare_gpu

    def compared(scope: pd.DataFrame, any_link: bool) -> bool:
        return bool(
            compare_cloud(hw, scope, result.utilization, compare_gpu=gpu, any_interconnect=any_link)
        )

    if providers and compared(every_offer, any_interconnect):
        offered = sorted(set(every_offer.loc[every_offer["gpu_model"] == gpu, "provider"]))
        return (
            f"no cloud offers with {gpu} GPUs from {', '.join(providers)} to compare with; "
            f"{gpu} is offered by {', '.join(offered)}: add one of them to --provider or leave "
            "--provider out"
        )
    if not any_interconnect and compared(offers, True):
        return (
            f"no cloud instance with {gpu} GPUs has a GPU link as strong as the {hw.name}'s "
            f"({hw.interconnect.value}) to compare with; add --any-interconnect to compare with "
            "instances of any GPU link"
        )
    if providers and not any_interconnect and compared(every_offer, True):
        return (
            f"no cloud offers with {gpu} GPUs from {', '.join(providers)} to compare with, and "
            f"none elsewhere with a GPU link as strong as the {hw.name}'s "
            f"({hw.interconnect.value}); leave --provider out and add --any-interconnect"
        )
    return ""


def _check_cloud_fields(with_cloud: bool, **fields: Any) -> None:
    """``with_cloud=False`` (``--no-cloud``) skips the cloud comparison: a field that only shapes
    that comparison, given with it, would be dropped without a word."""
    if with_cloud:
        return
    for name, value in fields.items():
        if value:  # None, False, () and "" are each field's default: not given
            raise ConfigError(
                "only shapes the cloud comparison, which is switched off (--no-cloud on the "
                "command line, with_cloud=False in Python)",
                key_path=name,
                hint="drop it, or switch the cloud comparison back on to compare with the cloud",
            )


def _sources(
    offers_files: Sequence[str | Path], snapshot_dir: str | Path | None
) -> tuple[tuple[str, ...], str | None]:
    """Where prices come from, comparable whether given as text or paths."""
    return tuple(str(f) for f in offers_files), None if snapshot_dir is None else str(snapshot_dir)


def stale_warnings(
    result: QuoteResult | TcoResult | BudgetReport, max_age_days: int | None
) -> list[str]:
    """Warnings for a report whose cloud prices are older than ``max_age_days`` (default 90)."""
    from planner import clock
    from planner.catalog import DEFAULT_MAX_AGE_DAYS
    from planner.catalog.store import snapshot_age_days
    from planner.ownership.costs import TcoResult
    from planner.quoting.result import QuoteResult

    limit = DEFAULT_MAX_AGE_DAYS if max_age_days is None else max_age_days
    if isinstance(result, QuoteResult):
        return result.book.stale_warnings(limit, result.request.providers)
    from planner.optimize.budget import BudgetReport

    if isinstance(result, BudgetReport):
        return result.stale_warnings(clock.utc_today(), limit)
    if isinstance(result, TcoResult) and result.offers_as_of:
        age = snapshot_age_days(result.offers_as_of, clock.utc_today())
        if age > limit:
            return [
                f"cloud prices are {age} days old (as of {result.offers_as_of}); refresh with "
                "`planner prices refresh` before relying on the comparison"
            ]
    return []


# --- the functions: each a one-off session ---------------------------------------------------------


@_keywords_checked
def offers(
    flt: OfferFilter | None = None,
    *,
    sort: str = "price",
    descending: bool = False,
    limit: int | None = None,
    group_by: Sequence[str] = (),
    offers_files: Sequence[str | Path] = (),
    snapshot_dir: str | Path | None = None,
) -> OffersResult:
    """GPU instance offers from the newest snapshot (plus private CSVs), filtered and sorted.

    >>> from planner.api import offers, OfferFilter
    >>> offers(OfferFilter(gpus=("A100-80GB",), max_price_usd_per_hour=40)).offers.head()  # doctest: +SKIP
    """
    session = Planner(offers_files=offers_files, snapshot_dir=snapshot_dir)
    return session.offers(flt, sort=sort, descending=descending, limit=limit, group_by=group_by)


@_keywords_checked
def gpus(
    *, offers_files: Sequence[str | Path] = (), snapshot_dir: str | Path | None = None
) -> list[dict[str, Any]]:
    """The GPU catalog as records, each with the providers offering it and its cheapest GPU-hour."""
    return Planner(offers_files=offers_files, snapshot_dir=snapshot_dir).gpus()


@_keywords_checked
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
    # the fields of the comparison itself are checked by Planner.tco
    _check_cloud_fields(with_cloud, offers_files=offers_files, snapshot_dir=snapshot_dir)
    return Planner(offers_files=offers_files, snapshot_dir=snapshot_dir).tco(
        hardware,
        utilization=utilization,
        years=years,
        compare_gpu=compare_gpu,
        with_cloud=with_cloud,
        any_interconnect=any_interconnect,
        providers=providers,
    )


@_keywords_checked
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
    return Planner(solver=solver).budget(
        budget_file, sensitivity=sensitivity, time_limit_s=time_limit_s
    )


@_keywords_checked
def quote_service(request: ServiceRequest | None = None, **fields: Any) -> ServiceQuoteResult:
    """The cheapest fleets (replicas x instances, priced per month and per million output tokens)
    that carry an inference service's load within its p95 latency targets.

    Keywords are :class:`ServiceRequest`'s fields: ``workload``, ``requests_per_s``,
    ``peak_requests_per_s`` and ``peak_hours_per_day`` (a daily load curve), ``ttft_ms_p95``,
    ``tpot_ms_p95``, ``e2e_ms_p95``, ``providers``, ``regions``, ``gpus``, ``include_reserved``,
    ``discounts``, ``top``.  An impossible target raises InfeasibleError naming the best latency
    any offer reaches.

    >>> from planner.api import quote_service
    >>> r = quote_service(workload="llm-serving-7b", ttft_ms_p95=1000)  # doctest: +SKIP
    >>> r.plans[0].cost_usd_per_month  # doctest: +SKIP
    """
    from planner.quoting.service_quote import make_service_request

    req = make_service_request(request, **fields)
    return Planner(offers_files=req.offers_files, snapshot_dir=req.snapshot_dir).quote_service(req)


@_keywords_checked
def quote(
    request: QuoteRequest | None = None,
    *,
    solver: Solver | str | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    **fields: Any,
) -> QuoteResult:
    """Cheapest distinct plans that finish a workload by its deadline.

    Keywords are :class:`QuoteRequest`'s fields (``workload``, ``deadline_hours``, ``budget_usd``,
    ``providers``, ``gpus``, ``allow_spot``, ``discounts``, ``quotas``, ``top``, ...); a request
    may be passed instead (``quote(request)`` or ``quote(request=...)``), with keywords replacing
    some of its fields.  ``solver`` is a registered solver's name (``"highs"``, ``"cbc"``) or a
    :class:`~planner.optimize.solvers.Solver`; ``on_progress(done, total)`` follows the
    cost-versus-deadline sweep of ``pareto=True``.  A :class:`Planner` session quotes many
    requests from one load of the prices.

    >>> from planner.api import quote
    >>> result = quote(workload="gpt2-xl-finetune", deadline_hours=24)  # doctest: +SKIP
    >>> result.plans[0].total_cost_usd  # doctest: +SKIP
    """
    from planner.quoting.request import make_request

    req = make_request(request, **fields)
    session = Planner(offers_files=req.offers_files, snapshot_dir=req.snapshot_dir)
    return session.quote(req, solver=solver, on_progress=on_progress)


@_keywords_checked
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
    return Planner(currency=currency).report(
        result, fmt, max_age_days=max_age_days, generated_by=generated_by
    )


@_keywords_checked
def figures(
    result: QuoteResult | TcoResult | BudgetReport, *, currency: str = "USD"
) -> list[MplFigure]:
    """The charts of ``result``'s report as matplotlib Figures, for notebooks: the same content
    as the HTML report's charts.

    >>> from planner import api
    >>> for fig in api.figures(api.tco("8xh100-hgx", utilization=0.6)):  # doctest: +SKIP
    ...     fig.savefig(f"{fig.get_label() or 'chart'}.png")
    """
    return Planner(currency=currency).figures(result)


# --- prices refresh (issue 5): the only path that talks to cloud APIs --------------------------


@_keywords_checked
def refresh_prices(
    providers: Sequence[str] = (),
    regions: Sequence[str] = (),
    *,
    allow_partial: bool = False,
    force: bool = False,
    accept_changes: Sequence[str] = (),
    dry_run: bool = False,
    on_progress: Progress | None = None,
) -> RefreshResult:
    """Fetch live prices and publish a new snapshot in the user data dir (``planner prices refresh``).

    Before publishing, sanity gates refuse zero, vanished and wildly moved prices and regions that
    lost half their rows (a SnapshotError naming each change's id); ``accept_changes`` are the ids
    or globs that let such changes through (``"aws:us-east-1:p5.48xlarge"``, ``"aws:*:*:spot"``),
    ``force`` lets every one through.  ``dry_run`` fetches and checks but writes nothing: the
    result's ``changes``, ``findings`` and ``blocking`` say what a refresh would publish.
    ``on_progress(provider, region, done, total)`` is called as each region finishes.
    """
    from planner.catalog.refresh import refresh_user_prices

    return refresh_user_prices(
        providers,
        regions,
        allow_partial=allow_partial,
        force=force,
        accept_changes=accept_changes,
        dry_run=dry_run,
        on_progress=on_progress,
    )


@_keywords_checked
def prices_status(*, max_age_days: int) -> list[dict[str, Any]]:
    """Each provider's newest snapshot: as-of date, age, rows, source, stale or not."""
    from planner.catalog import default_roots
    from planner.catalog.refresh import prices_status as status

    if not is_whole_number(max_age_days) or max_age_days < 0:
        raise ConfigError(
            f"expected a whole number of days >= 0, got {max_age_days!r}",
            key_path="max_age_days",
            hint="e.g. max_age_days=90 (prices older than this are flagged)",
        )
    return status(default_roots(), max_age_days=max_age_days)


@_keywords_checked
def prices_diff(
    old: str | Path, new: str | Path, *, threshold: float = 0.05
) -> list[dict[str, Any]]:
    """Offers added, removed or re-priced between two snapshots (ids or directories);
    ``threshold`` is a fraction (0.05: price moves above 5%), at most 1."""
    if not is_number(threshold) or not math.isfinite(threshold) or threshold < 0:
        raise ConfigError(
            f"expected a fraction >= 0, got {threshold!r}",
            key_path="threshold",
            hint="e.g. threshold=0.05 (report price moves above 5%)",
        )
    if threshold > 1:
        # threshold=5 meant 5% and reported only moves above 500%: a fraction above 1 is far more
        # often a percentage than a filter on prices that more than doubled
        raise ConfigError(
            f"threshold is a fraction, got {threshold:g} ({threshold * 100:g}%)",
            key_path="threshold",
            hint=f"did you mean threshold={threshold / 100:g} ({threshold:g}%)? "
            "it is a fraction from 0 to 1: 0.05 reports price moves above 5%",
        )
    return diff_snapshots(old, new, threshold=threshold)


def diff_snapshots(old: str | Path, new: str | Path, *, threshold: float) -> list[dict[str, Any]]:
    """:func:`prices_diff` for a checked ``threshold`` of any size (the CLI's ``--threshold`` is
    in percent, so 150 is unambiguous there)."""
    from planner.catalog import default_roots
    from planner.catalog.refresh import diff_offers, find_snapshot
    from planner.catalog.store import load_snapshot

    for key, ref in (("old", old), ("new", new)):
        if not isinstance(ref, (str, Path)) or not str(ref).strip():
            # was: a blank id read as the path "." and the current folder loaded as a snapshot
            raise ConfigError(
                f"expected a snapshot id or folder, got {ref!r}",
                key_path=key,
                hint="`planner prices status` and `planner prices history` name the snapshot ids",
            )
    roots = default_roots()
    before = load_snapshot(find_snapshot(old, roots, key_path="old")).offers
    after = load_snapshot(find_snapshot(new, roots, key_path="new")).offers
    return diff_offers(before, after, threshold=threshold)


@_keywords_checked
def prices_history(instance_type: str, *, region: str | None = None) -> list[dict[str, Any]]:
    """The prices of one instance type in every stored snapshot, oldest first."""
    from planner.catalog import default_roots
    from planner.catalog.refresh import price_history

    return price_history(default_roots(), instance_type=instance_type, region=region)


# --- workloads and estimates (issue 3) ---------------------------------------------------------


# A workload's top-level keys: an error at one of them (``training.precision``) is about the
# workload's file.
_WORKLOAD_KEYS = frozenset({"name", "kind", "model", "data", "training", "inference", "pieces"})


@contextlib.contextmanager
def _in_workload_file(spec: WorkloadSpec) -> Iterator[None]:
    """A ConfigError at a workload key, raised once the file is read (its training.precision on
    a GPU without those tensor cores, its pinned layout on a count that cannot hold it), named by
    the file ``spec`` was read from, as an error in reading the file is."""
    from planner.workload.spec import workload_file

    file = workload_file(spec)
    try:
        yield
    except ConfigError as e:
        if file is None or (e.key_path or "").split(".")[0] not in _WORKLOAD_KEYS:
            raise
        raise e.in_file(file) from None


@_keywords_checked
def load_workload(name_or_path: str) -> WorkloadSpec:
    """A workload from the library (``gpt2-xl-finetune``) or a YAML file path.

    >>> from planner.api import load_workload
    >>> load_workload("gpt2-xl-finetune").kind.value
    'finetune'
    """
    from planner.workload import load_workload as _load

    return _load(name_or_path)


@_keywords_checked
def calibrate(
    workload: str | WorkloadSpec,
    gpu: str,
    count: int = 1,
    *,
    measured_tokens_per_second: float | None = None,
    measured_step_seconds: float | None = None,
    topology: Topology | None = None,
) -> dict[str, Any]:
    """Record a run you measured (workload on ``count`` x ``gpu``): its training throughput, as
    tokens per second of the whole run or seconds per optimizer step (the workload's global batch
    per step).  Later estimates of similar jobs (same GPU, stack, precision, method, kind) use it.
    Returns the record, with ``factor`` = measured / estimated throughput."""
    from planner import clock
    from planner.workload import WorkloadSpec
    from planner.workload.calibration import (
        check_trainable,
        load_calibrations,
        new_calibration,
        save_calibrations,
        with_recorded,
    )
    from planner.workload.training import train_facts

    if (measured_tokens_per_second is None) == (measured_step_seconds is None):
        both = measured_tokens_per_second is not None
        raise ConfigError(
            "give measured_tokens_per_second or measured_step_seconds, not both"
            if both
            else "give one of measured_tokens_per_second and measured_step_seconds",
            key_path="measured_tokens_per_second",
            hint="e.g. measured_tokens_per_second=12000 or measured_step_seconds=2.5",
        )
    # float() read "5000" and True (1 token/s) as throughputs; both are checked before the
    # estimate runs (a step time was refused with no fix, after it)
    _check_measurement(
        measured_tokens_per_second,
        "measured_tokens_per_second",
        "a measured throughput must be a positive number",
        "",
        "tokens per second of the whole run, e.g. measured_tokens_per_second=12000",
    )
    _check_measurement(
        measured_step_seconds,
        "measured_step_seconds",
        "a step time must be a positive number of seconds",
        "s",
        "the seconds one optimizer step took, e.g. measured_step_seconds=2.5",
    )
    spec = load_workload(str(workload)) if isinstance(workload, (str, Path)) else workload
    if isinstance(spec, WorkloadSpec):
        check_trainable(spec)
    # what a new calibration measures against: the estimate without the earlier ones
    uncalibrated = Planner()._estimate(spec, gpu, count, topology, calibrations=())
    existing = load_calibrations()
    step_tokens = None
    if measured_step_seconds is not None:
        facts = train_facts(spec)
        per_sample = spec.seq_len if spec.model.is_transformer else 1
        step_tokens = float(facts.global_batch * per_sample)
        measured_tokens_per_second = step_tokens / measured_step_seconds
    record = new_calibration(
        spec,
        uncalibrated,
        float(measured_tokens_per_second or 0.0),
        existing=existing,
        today=clock.utc_today().isoformat(),
        step_tokens=step_tokens,
    )
    kept, record = with_recorded(existing, record)
    save_calibrations(kept)
    return {**asdict(record), "factor": record.factor}


def _check_measurement(value: Any, key: str, what: str, unit: str, example: str) -> None:
    """A ConfigError on ``key`` unless ``value`` is None or a finite number above 0, with the number
    to write where ``value`` is one given as text (:func:`_as_number_fix`), else ``example``."""
    if value is None or (is_number(value) and 0 < value < math.inf):
        return
    raise ConfigError(
        f"{what}, got {value!r}",
        key_path=key,
        hint=_as_number_fix(key, value, unit) or example,
    )


def _as_number_fix(name: str, value: Any, unit: str) -> str | None:
    """``name=52000`` for a positive number given as text (``"52000"``, or ``"2s"`` where the
    keyword's ``unit`` is ``s``); None for anything else."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if unit and text.lower().endswith(unit):
        text = text[: -len(unit)].strip()
    try:
        number = float(text)
    except ValueError:
        return None
    if not (math.isfinite(number) and number > 0):
        return None
    return f"{name}={number:g} (a number, not text)"


@_keywords_checked
def calibrations() -> list[dict[str, Any]]:
    """The recorded calibrations, oldest first, each with its ``factor`` and whether later
    estimates apply it (``applies``: False for a run measured against an earlier estimator, and
    for one a later run of the same GPU, stack, precision, method and kind supersedes: estimates
    take the most recent; was True for both)."""
    from planner.workload.calibration import load_calibrations, recency

    runs = load_calibrations()
    latest: dict[tuple[str, ...], Any] = {}  # each job's key -> the run its estimates take
    for c in runs:
        key = (c.gpu, c.framework, c.precision, c.method, c.kind)
        if c.applies and (key not in latest or recency(c) > recency(latest[key])):
            latest[key] = c
    return [
        {
            **asdict(c),
            "factor": c.factor,
            "applies": latest.get((c.gpu, c.framework, c.precision, c.method, c.kind)) is c,
        }
        for c in runs
    ]


@_keywords_checked
def remove_calibration(ident: str) -> None:
    """Forget calibration ``ident`` (``c1``); unknown ids raise with the known ones."""
    from planner.workload.calibration import load_calibrations, save_calibrations, without

    save_calibrations(without(load_calibrations(), ident))


@_keywords_checked
def with_training(spec: str | WorkloadSpec, **training: Any) -> WorkloadSpec:
    """``spec`` (a workload, or its library name or file) with ``training`` fields replaced
    (``precision="fp8"``, ``framework="nemo"``), validated as a workload file would be.

    >>> from planner.api import load_workload, with_training
    >>> with_training(load_workload("gpt2-finetune"), precision="amp-fp16").train.precision.value
    'fp16'
    """
    from planner.workload import WorkloadSpec, parse_workload

    if not isinstance(spec, WorkloadSpec):
        spec = load_workload(spec)
    if training and spec.kind.value == "inference":
        # was: "training: sets how a model trains ... drop the training section", about a
        # section the user's file does not have
        first = next(iter(training))
        raise ConfigError(
            f"{spec.name} is an inference workload, and {first} sets how a model trains",
            key_path=f"training.{first}",
            hint="a served model's precision and stack are inference.precision and "
            "inference.framework in the workload's file",
        )
    if "training" in training and isinstance(training["training"], dict):
        # with_training(spec, training={...}): was "training.training: unknown key; hint: training
        # belongs under the top level: (training)"
        fields = ", ".join(f"{k}={v!r}" for k, v in training["training"].items())
        raise ConfigError(
            "with_training() takes the training section's fields as keywords, not the section",
            key_path="training",
            hint=f"planner.with_training(spec, {fields or 'precision=...'})",
        )
    raw = spec.model_dump(mode="json", exclude_none=True)
    raw.setdefault("training", {}).update(training)
    changed = ", ".join(f"{k}={v}" for k, v in training.items())
    return parse_workload(raw, file=f"{spec.name} with {changed}")


@_keywords_checked
def model_presets(search: str | None = None) -> list[dict[str, Any]]:
    """The model presets a workload may name (``model: mistral-7b``, ``--model``), as records:
    name, architecture, parameters, shape and the public source of each number.  ``search``
    keeps those whose name, other names or source hold it (any case: ``"qwen"``,
    ``"meta-llama/"``), and the one it names as ``--model`` reads it
    (``"Qwen/Qwen2.5-7B-Instruct"``); a search nothing holds is an error naming the closest
    names."""
    from dataclasses import asdict

    from planner.workload.models import get_preset, presets

    every = sorted(presets().values(), key=lambda p: (p.arch, p.params))
    if search is None:
        return [asdict(p) for p in every]
    if not isinstance(search, str) or not search.strip():
        raise ConfigError(
            f"expected some text to look for in the presets' names, got {search!r}",
            key_path="search",
            hint="e.g. llama (or leave it out for every preset)",
        )
    text = search.strip().lower()
    # what --model takes finds its preset too (meta-llama/Llama-3.1-8B-Instruct: no preset's
    # name holds it, but it names llama-3.1-8b)
    named = get_preset(search)
    found = [
        p
        for p in every
        if any(text in name for name in (p.name, *p.aliases))
        or text in p.source.lower()
        or (named is not None and p.name == named.name)
    ]
    if not found:
        error = UnknownNameError("model preset", search.strip(), presets(), key_path="search")
        plain = search.strip().strip("*?%").strip()
        if text in ("list", "ls", "all", "*"):  # planner models list: was "unknown model preset"
            error.hint = "leave the search out for every preset (planner models; model_presets())"
        elif plain and plain != search.strip() and _presets_found(plain):
            error.hint = f"the search is plain text, not a pattern: search for {plain!r}"
        raise error
    return [asdict(p) for p in found]


def _presets_found(search: str) -> bool:
    """Whether :func:`model_presets` finds any preset for ``search``."""
    try:
        return bool(model_presets(search))
    except UnknownNameError:
        return False


@_keywords_checked
def list_workloads() -> list[WorkloadSpec]:
    """Every workload in the library, sorted by name."""
    from planner.workload import list_workloads as _list

    return _list()


@_keywords_checked
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
    return Planner().estimate(workload, gpu, count, topology=topology)


# Reference GPUs for ``planner workloads show``: a current flagship, the A100 and a consumer card.
REFERENCE_GPUS = ("H100", "A100-80GB", "RTX4090")


@_keywords_checked
def workload_requirements(
    workload: str | WorkloadSpec, gpus: Sequence[str] = REFERENCE_GPUS, max_count: int = 4096
) -> list[Estimate]:
    """For each reference GPU, the estimate at the smallest power-of-two count that fits (power
    of two times the pinned tensor x pipeline size, where the workload pins one)."""
    from planner.workload.advice import pinned_gpus

    if not is_whole_number(max_count) or max_count < 1:
        raise ConfigError(
            f"expected a whole number of GPUs >= 1, got {max_count!r}",
            key_path="max_count",
            hint="e.g. max_count=4096 (the most GPUs tried for each reference GPU)",
        )
    spec = load_workload(str(workload)) if isinstance(workload, (str, Path)) else workload
    session = Planner()
    out = []
    for name in gpus:
        count = pinned_gpus(spec)  # a pinned tensor x pipeline layout needs a multiple of it
        est = session.estimate(spec, name, count)
        while not est.fits and count < max_count:
            count *= 2
            est = session.estimate(spec, name, count)
        out.append(est)
    return out
