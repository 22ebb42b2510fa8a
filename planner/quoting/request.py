"""A quote request in domain terms: what to plan, by when, under which constraints.

Checked where it is made (``QuoteRequest.__post_init__``), so a library caller gets a
ConfigError naming the field before any work; names in discounts and quotas are checked against
the loaded offers by the quote service.  Errors name the request's fields (``deadline_hours``);
the CLI shows them as its options (``--deadline``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import pandas as pd

from planner.errors import (
    ConfigError,
    UnknownNameError,
    checked_fields,
    is_number,
    is_whole_number,
    option_keyword_error,
    suggestion_hint,
    training_keyword_error,
)
from planner.optimize.candidates import instance_family
from planner.optimize.plans import DEFAULT_CONFIDENCE
from planner.units import (
    MAX_DEADLINE_HOURS,
    MAX_GPUS_PER_JOB,
    MAX_PLANS,
    MAX_USD,
    duration_hours,
)
from planner.workload import WorkloadSpec
from planner.workload.spec import checked_spec

# How owned hardware is charged per hour (planner.onprem.machine_cost_usd_per_hour).
LOCAL_COST_BASES = ("amortised", "sunk")
QUOTA_FORMS = (
    "aws=16 (provider), aws:p5=4 (provider:family), aws:us-east-1:p5=2 (provider:region:family)"
)


def quota_key_parts(key: str, *, where: str = "quotas") -> list[str]:
    """``aws``, ``aws:p5`` or ``aws:us-east-1:p5`` -> its stripped parts; any other form is a
    ConfigError at ``where``."""
    parts = key.split(":")
    if not 1 <= len(parts) <= 3 or not all(p.strip() for p in parts):
        raise ConfigError(
            f"cannot read quota key {key!r}",
            key_path=where,
            hint=f"write it like {QUOTA_FORMS}",
        )
    return [p.strip() for p in parts]


@checked_fields
@dataclass(frozen=True)
class QuoteRequest:
    """Everything a quote depends on (the CLI's options, as values).

    ``workload`` is a library name, a YAML path or a :class:`WorkloadSpec` (e.g. a variant made
    with ``spec.model_copy(update=...)``).
    """

    workload: str | WorkloadSpec
    deadline_hours: float
    budget_usd: float | None = None
    providers: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()
    allow_spot: bool = True
    spot_only: bool = False
    max_interruption_pct: float | None = None
    # every recommended plan meets the deadline with at least this chance (percent; 0: any risk)
    confidence_pct: float = DEFAULT_CONFIDENCE * 100
    include_reserved: bool = False
    hardware: tuple[str, ...] = ()
    offers_files: tuple[str | Path, ...] = ()
    snapshot_dir: str | Path | None = None
    discounts: Mapping[str, float] = field(default_factory=dict)
    quotas: Mapping[str, int] = field(default_factory=dict)
    local_cost_basis: str = "amortised"
    top: int = 5
    pareto: bool = False
    # where prices tie across regions, prefer this region or area (``eu-west-1``, ``europe``)
    near: str | None = None
    # the confidence covers the estimator's own error too: plans are made on training times at
    # its pessimistic end (planner.workload.uncertainty), not at its central estimate
    count_estimate_error: bool = False

    def __post_init__(self) -> None:
        # Checked where a request is made, before any work, so that a library caller gets a
        # ConfigError naming the field instead of a PulpError, TypeError or IndexError from deep
        # inside the optimizer.  Names in discounts and quotas are checked against the loaded
        # offers in quote().
        _check_request(self)


# The keywords of a service's quote (quoting.service_quote.ServiceRequest) that a job's has not:
# a test keeps the two in step (this module cannot import that one, which imports it).
SERVICE_ONLY_KEYWORDS = frozenset(
    (
        "requests_per_s",
        "peak_requests_per_s",
        "peak_hours_per_day",
        "ttft_ms_p95",
        "tpot_ms_p95",
        "e2e_ms_p95",
    )
)


def _service_keyword_error(name: str) -> ConfigError | None:
    """The error for a keyword of a service's quote handed to quote(), a job's (was: "unknown
    quote() keyword argument 'requests_per_s'" and the list of quote()'s)."""
    if name not in SERVICE_ONLY_KEYWORDS:
        return None
    return ConfigError(
        f"quote() takes no {name!r}: quote() prices a job run once to a deadline, and {name} "
        "sets a service's load or latency",
        key_path=name,
        hint=f"a service is priced per month by planner.quote_service(workload=..., {name}=...)",
    )


def make_request(request: object = None, /, **keywords: Any) -> QuoteRequest:
    """A :class:`QuoteRequest` from keyword arguments named as its fields, from a request, or from
    a request with some fields replaced: how every ``quote`` of the library reads its arguments.

    A misspelt keyword, a missing field or another positional value is a ConfigError that says
    what to write, not a TypeError.
    """
    known = [f.name for f in fields(QuoteRequest)]
    for name in keywords:
        if name not in known:
            raise (
                training_keyword_error("quote", name)
                or _service_keyword_error(name)
                or option_keyword_error("quote", name, known)
                or UnknownNameError("quote() keyword argument", name, known)
            )
    if isinstance(request, QuoteRequest):
        return replace(request, **keywords) if keywords else request
    if request is not None:
        raise positional_error(request, keywords)
    for name in ("workload", "deadline_hours"):  # the fields without a default
        if name not in keywords:
            raise ConfigError(
                "a quote needs a workload and a deadline",
                key_path=name,
                hint="e.g. quote(workload='gpt2-xl-finetune', deadline_hours=24)",
            )
    return QuoteRequest(**keywords)


def positional_error(
    value: object,
    keywords: Mapping[str, Any],
    function: str = "quote",
    request: str = "QuoteRequest",
) -> ConfigError:
    """The error for ``quote("gpt2-xl-finetune", deadline_hours=24)``: the keyword call to write
    (``function`` names the call, ``request`` the request type it also takes)."""
    args: dict[str, object] = {}
    if isinstance(value, (str, Path, WorkloadSpec)):
        args["workload"] = value
    args |= keywords
    if function == "quote":
        args.setdefault("deadline_hours", 24)
    shown = ", ".join(f"{k}={_short(v)}" for k, v in args.items())
    return ConfigError(
        f"{function}() takes keyword arguments or one {request}, got {type(value).__name__} "
        f"{_short(value)}",
        key_path="request",
        hint=f"planner.{function}({shown})",
    )


def _short(value: object) -> str:
    """``value`` as code in a hint: a path as its text, a workload spec by its name."""
    if isinstance(value, WorkloadSpec):
        return f"<WorkloadSpec {value.name!r}>"
    text = repr(str(value) if isinstance(value, Path) else value)
    return text if len(text) <= 60 else text[:57] + "..."


# --- checks, one step per group of fields -------------------------------------------------------


def check_top(top: object) -> None:
    """Refuse a number of plans that is not a whole number from 1 to :data:`MAX_PLANS`, for a
    job's quote and a service's alike (was: 1,000 taken for a service)."""
    if not is_whole_number(top) or not 1 <= top <= MAX_PLANS:  # type: ignore[operator]
        raise ConfigError(
            f"expected a whole number of plans from 1 to {MAX_PLANS}, got {top!r}",
            key_path="top",
            hint="ask for the few best plans, e.g. 5",  # was "top=5" on the command line too
        )


def _check_request(req: QuoteRequest) -> None:
    """Raise ConfigError for the first field of ``req`` that cannot be quoted; tidy name lists."""
    object.__setattr__(req, "workload", _check_workload(req.workload))
    _check_deadline(req.deadline_hours)
    _check_money_and_percentages(req)
    _check_flags(req)
    check_shared_fields(req)
    check_top(req.top)
    if req.snapshot_dir is not None and not isinstance(req.snapshot_dir, (str, Path)):
        raise ConfigError(f"expected a folder, got {req.snapshot_dir!r}", key_path="snapshot_dir")
    _check_quota_values(req.quotas)
    if req.near is not None and (not isinstance(req.near, str) or not req.near.strip()):
        raise ConfigError(
            f"expected a region or an area, got {req.near!r}",
            key_path="near",
            hint="e.g. near='eu-west-1' or near='europe' (the region is checked against the offers)",
        )
    if req.near is not None and len(req.regions) == 1:
        # was ignored: --near prefers a region where prices tie, and one region leaves no choice
        raise ConfigError(
            f"near={req.near!r} has no effect: regions pins one region ({req.regions[0]})",
            key_path="near",
            hint="drop one of the two: regions to choose among them with near, or near for one",
        )
    _plain_numbers(req)


def plain_number(value: Any) -> Any:
    """A checked number as Python's own int or float (None stays None): a numpy ``int64`` or a
    ``Fraction`` was kept as given, and a result's ``to_dict()`` could not be written as JSON."""
    if value is None or type(value) in (int, float):
        return value
    return int(value) if is_whole_number(value) else float(value)


def _plain_numbers(req: QuoteRequest) -> None:
    """The request's checked numbers as plain ints and floats (:func:`plain_number`)."""
    for name in ("deadline_hours", "budget_usd", "max_interruption_pct", "confidence_pct", "top"):
        object.__setattr__(req, name, plain_number(getattr(req, name)))
    object.__setattr__(req, "quotas", {key: plain_number(n) for key, n in req.quotas.items()})
    object.__setattr__(req, "discounts", {key: plain_number(f) for key, f in req.discounts.items()})


def _check_workload(workload: str | WorkloadSpec) -> str | Path | WorkloadSpec:
    """``workload`` checked: a spec as a file's reading makes it (checked_spec)."""
    if isinstance(workload, str):
        if not workload.strip():
            raise ConfigError(
                "workload name is blank",
                key_path="workload",
                hint="name a workload (planner workloads lists them) or a YAML file",
            )
    elif isinstance(workload, WorkloadSpec):
        return checked_spec(workload)  # a model_copy(update=...) skipped every check
    elif not isinstance(workload, Path):
        raise ConfigError(
            f"expected a workload name, YAML path or WorkloadSpec, got {workload!r}",
            key_path="workload",
            hint="e.g. workload='gpt2-xl-finetune' or workload=planner.load_workload('file.yaml')",
        )
    return workload


# The shortest deadline a quote takes: a minute (under it, the unit slipped: seconds for hours).
_SHORTEST_DEADLINE_H = 1.0 / 60.0


def _check_deadline(deadline: float) -> None:
    if is_number(deadline) and math.isfinite(deadline) and deadline > MAX_DEADLINE_HOURS:
        raise ConfigError(
            f"a deadline of {deadline:g} hours is more than ten years "
            f"({MAX_DEADLINE_HOURS:,.0f} hours)",
            key_path="deadline_hours",
            # (was "give it in hours", said of a deadline that was in hours, only too far off)
            hint=f"a deadline is at most ten years ({MAX_DEADLINE_HOURS:,.0f} hours, 3,650 "
            "days): a job that long is priced as a service or a budget, not a quote",
        )
    if is_number(deadline) and math.isfinite(deadline) and 0 < deadline < _SHORTEST_DEADLINE_H:
        # 0.0001 h: was "a 0 min deadline cannot be met" (exit 3), where 0 and 1s were refused as
        # bad input (exit 2): a deadline of seconds is a slip of the unit, not a plan to search
        raise ConfigError(
            f"a deadline of {deadline * 3600:.3g} s is under a minute, and a job's start-up "
            "alone takes minutes",
            key_path="deadline_hours",
            hint="give it in hours (deadline_hours=24; on the command line 90m, 24h, 3d)",
        )
    if is_number(deadline) and math.isfinite(deadline) and deadline > 0:
        return
    hint = "a number of hours, e.g. deadline_hours=24"
    hours = duration_hours(deadline) if isinstance(deadline, str) else None
    if hours is not None and math.isfinite(hours) and hours > 0:
        hint = f"deadline_hours={hours:g} (planner.units.duration_hours reads {deadline!r})"
    raise ConfigError(
        f"deadline must be a finite number of hours > 0, got {deadline!r}",
        key_path="deadline_hours",
        hint=hint,
    )


def _check_money_and_percentages(req: QuoteRequest) -> None:
    budget = req.budget_usd
    if budget is not None and (not is_number(budget) or not math.isfinite(budget) or budget < 0):
        raise ConfigError(
            f"budget must be a finite number of USD >= 0, got {budget!r}",
            key_path="budget_usd",
            hint="e.g. budget_usd=500, or leave it out (None) for no budget",
        )
    if budget is not None and budget > MAX_USD:
        raise ConfigError(
            f"a budget of {budget:.3g} USD is more than any GPU job costs "
            f"(0 to {MAX_USD:,.0f} USD)",
            key_path="budget_usd",
            hint="give it in USD, or leave it out for no budget",
        )
    pct = req.max_interruption_pct
    if pct is not None and (not is_number(pct) or not math.isfinite(pct) or not 0 <= pct <= 100):
        raise ConfigError(
            f"expected a percentage between 0 and 100, got {pct!r}",
            key_path="max_interruption_pct",
            hint="e.g. max_interruption_pct=10 (at most 10% of spot hours interrupted per month)",
        )
    confidence = req.confidence_pct
    if not is_number(confidence) or not math.isfinite(confidence) or not 0 <= confidence < 100:
        raise ConfigError(
            f"expected a percentage from 0 up to (not including) 100, got {confidence!r}",
            key_path="confidence_pct",
            hint="e.g. confidence_pct=95 (each plan meets the deadline with at least a 95% "
            "chance under the spot model); 0 accepts any risk",
        )
    for key, value, example, top in (
        ("max_interruption_pct", pct, "interrupted at most {}% of spot hours a month", "100"),
        # a certainty of 100% is refused (was told "from 0 to 100", and 100 refused in turn)
        (
            "confidence_pct",
            confidence,
            "meets the deadline with at least a {}% chance",
            "below 100",
        ),
    ):
        if value is not None and 0 < value < 1:
            # a fraction where a percentage belongs: 0.9 asks for 0.9%, not 90%
            raise ConfigError(
                f"{value:g} is a percentage here ({value:g}%), and below 1% it looks like a "
                "fraction",
                key_path=key,
                hint=(
                    f"did you mean {value * 100:g} ({example.format(f'{value * 100:g}')})? "
                    f"Write percentages from 0 to {top}"
                    if value >= 0.01
                    # 1e-300: was "did you mean 1e-298", as small a share as the one typed
                    else f"Write percentages from 0 to {top} (90 for 90%)"
                ),
            )


def check_shared_fields(req: Any) -> None:
    """The checks of the fields a job quote's and a service quote's requests share (the owned
    hardware's cost basis, reserved prices on or off, the name filters made tuples, the discounts);
    ``req`` is a frozen request being checked in its ``__post_init__``."""
    if req.local_cost_basis not in LOCAL_COST_BASES:
        raise UnknownNameError(
            "owned hardware cost basis",
            str(req.local_cost_basis),
            LOCAL_COST_BASES,
            key_path="local_cost_basis",
        )
    check_flag(req, "include_reserved")
    for name in ("providers", "regions", "gpus", "hardware", "offers_files"):
        object.__setattr__(req, name, name_tuple(name, getattr(req, name)))
    check_discount_values(req.discounts)
    _check_owned_only(req)


# The fields that choose or price cloud offers: given with providers=('owned',) (--owned-only),
# which quotes your own machines alone, each was dropped without a word.
_CLOUD_FIELDS = (
    "regions",
    "include_reserved",
    "discounts",
    "quotas",
    "max_interruption_pct",
    "spot_only",
    "near",
)


def _check_owned_only(req: Any) -> None:
    """Refuse a cloud-only field in a request for owned machines only."""
    providers = tuple(str(p).strip().lower() for p in req.providers)
    if providers != ("owned",):
        return
    for name in _CLOUD_FIELDS:
        value = getattr(req, name, None)
        # unset: None, False or empty; a 0 is given (0 == False would let it through)
        unset = value is None or value is False or (isinstance(value, (tuple, dict)) and not value)
        if not unset:
            raise ConfigError(
                "shapes the cloud offers, and providers=('owned',) (--owned-only) quotes your "
                "own machines alone",
                key_path=name,
                hint="drop it, or let the cloud in too: leave out --owned-only (or add "
                "--provider aws ... beside --provider owned)",
            )


def check_flag(req: Any, name: str) -> None:
    """``req.<name>`` must be True or False (not 1, "no" or None)."""
    value = getattr(req, name)
    if not isinstance(value, bool):
        raise ConfigError(
            f"expected True or False, got {value!r}",
            key_path=name,
            hint=f"{name}=True or {name}=False",
        )


def _check_flags(req: QuoteRequest) -> None:
    for name in ("allow_spot", "spot_only", "pareto", "count_estimate_error"):
        check_flag(req, name)
    if req.spot_only and not req.allow_spot:
        raise ConfigError(
            "spot_only=True needs spot capacity, but allow_spot=False forbids it",
            key_path="spot_only",
            hint="drop one of them",
        )
    if req.max_interruption_pct is not None and not req.allow_spot:
        # was: the filter dropped without a word (it reads spot offers, and none were used)
        raise ConfigError(
            "filters spot offers by how often they are interrupted, and allow_spot=False "
            "(--no-spot) uses none",
            key_path="max_interruption_pct",
            hint="drop one of them",
        )
    if req.count_estimate_error and req.confidence_pct == 0:
        raise ConfigError(
            "count_estimate_error=True plans on the estimate's error at the confidence asked "
            "for, and confidence_pct=0 asks for none",
            key_path="count_estimate_error",
            hint="give a confidence (e.g. confidence_pct=90), or leave count_estimate_error out",
        )


def name_tuple(name: str, names: object) -> tuple[Any, ...]:
    """A field of names as a tuple: one bare name is that name, not its letters."""
    if isinstance(names, (str, Path)):
        names = (names,)
    if not isinstance(names, Iterable):
        raise ConfigError(
            f"expected a tuple of names, got {names!r}",
            key_path=name,
            hint=f"e.g. {name}=('aws',)" if name == "providers" else f"e.g. {name}=()",
        )
    out = tuple(names)
    # provider, region and GPU names are checked by OfferFilter (the same message as offers)
    for item in out if name in ("hardware", "offers_files") else ():
        if not isinstance(item, (str, Path)) or not str(item).strip():
            shown = repr(item) if isinstance(item, (str, Path)) else f"a {type(item).__name__}"
            raise ConfigError(
                f"{shown} is not a " + ("file name or path" if name == "hardware" else "path"),
                key_path=name,
                hint=f"e.g. {name}=('8xh100-hgx',) (a bundled name or a YAML path)"
                if name == "hardware"
                else f"e.g. {name}=('our-prices.csv',)",
            )
    return out


def check_discount_values(discounts: object) -> None:
    where = "discounts"
    if not isinstance(discounts, Mapping):
        raise ConfigError(
            f"expected a mapping of provider to fraction off, got {discounts!r}",
            key_path=where,
            hint="e.g. discounts={'aws': 0.12}",
        )
    for name, frac in discounts.items():
        if not isinstance(name, str) or not name.strip() or ":" in name:
            raise ConfigError(
                f"discount key {name!r} is not a provider name",
                key_path=where,
                hint="a discount is per provider: e.g. discounts={'aws': 0.12}",
            )
        if not is_number(frac) or not math.isfinite(frac) or not 0 <= frac < 1:
            raise ConfigError(
                f"discount for {name!r} must be a fraction between 0 and 1, 1 (100% off: "
                f"free capacity) left out, got {frac!r}",
                key_path=where,
                hint=f"e.g. {{{name!r}: 0.12}} for 12% off",
            )


def _check_quota_values(quotas: object) -> None:
    where = "quotas"
    if not isinstance(quotas, Mapping):
        raise ConfigError(
            f"expected a mapping of quota key to instances, got {quotas!r}",
            key_path=where,
            hint="e.g. quotas={'aws:p5': 4}",
        )
    for key, count in quotas.items():
        if not isinstance(key, str):
            raise ConfigError(
                f"quota key {key!r} is not text",
                key_path=where,
                hint=f"write it like {QUOTA_FORMS}",
            )
        quota_key_parts(key, where=where)
        if not is_whole_number(count) or count < 0:
            raise ConfigError(
                f"quota for {key!r} must be a whole number of instances >= 0, got {count!r}",
                key_path=where,
                hint=f"e.g. {{{key!r}: 4}}",
            )
        if count > MAX_GPUS_PER_JOB:  # each instance holds a GPU at least
            raise ConfigError(
                f"quota for {key!r} must be a whole number of instances from 0 to "
                f"{MAX_GPUS_PER_JOB:,}, got {count!r}",
                key_path=where,
                hint=f"e.g. {{{key!r}: 4}}",
            )


# --- names in discounts and quotas, against the loaded offers -----------------------------------


def _unknown(
    kind: str, name: str, choices: Iterable[str], *, where: str, entry: str
) -> ConfigError:
    """An unknown name inside a discount or quota entry, with the nearest known names."""
    options = set(choices)
    hint = suggestion_hint(kind, name, options) if options else f"the offers have no {kind}"
    return ConfigError(
        f"unknown {kind} {name!r} in {entry}; it would match no offer", key_path=where, hint=hint
    )


def canonical_discounts(discounts: Mapping[str, float], offers: pd.DataFrame) -> dict[str, float]:
    """``discounts`` keyed by the providers' names as the offers spell them; unknown ones refused."""
    known = {str(p).lower(): str(p) for p in offers["provider"].unique()}
    out: dict[str, float] = {}
    for name, frac in discounts.items():
        provider = known.get(name.strip().lower())
        if provider is None:
            raise _unknown(
                "provider",
                name,
                known.values(),
                where="discounts",
                entry=f"{name}={frac:g}",
            )
        out[provider] = frac
    return out


def _canonical_quotas(quotas: Mapping[str, int], offers: pd.DataFrame) -> dict[str, int]:
    """``quotas`` keyed as planner.optimize.candidates.quota_for looks them up (the offers' own
    spelling of provider, region and instance family); a key that names something absent from the
    offers would silently do nothing, so it is refused with the nearest names."""
    if not quotas:
        return {}
    where = "quotas"
    providers = offers["provider"].astype(str)
    regions = offers["region"].astype(str)
    types = offers["instance_type"].astype(str)
    families = types.map(instance_family)
    by_provider = {p.lower(): p for p in providers.unique()}
    out: dict[str, int] = {}
    for key, count in quotas.items():
        entry = f"{key}={count}"
        parts = quota_key_parts(key, where=where)
        provider = by_provider.get(parts[0].lower())
        if provider is None:
            raise _unknown("provider", parts[0], by_provider.values(), where=where, entry=entry)
        rows = providers == provider
        canonical = [provider]
        if len(parts) == 3:
            by_region = {r.lower(): r for r in regions[rows].unique()}
            region = by_region.get(parts[1].lower())
            if region is None:
                raise _unknown(
                    f"{provider} region", parts[1], by_region.values(), where=where, entry=entry
                )
            rows &= regions == region
            canonical.append(region)
        if len(parts) >= 2:
            asked = parts[-1]
            by_family = {f.lower(): f for f in families[rows].unique()}
            family = by_family.get(asked.lower())
            if family is None:
                kind = f"{' '.join(canonical)} instance family"
                types_here = {t.lower(): t for t in types[rows].unique()}
                if asked.lower() in types_here:
                    of = instance_family(types_here[asked.lower()])
                    raise ConfigError(
                        f"{asked!r} in {entry} is an instance type; quotas count instances per "
                        "family",
                        key_path=where,
                        hint=f"write {':'.join([*canonical, of])}={count} ({asked} is in family "
                        f"{of})",
                    )
                provider_regions = {r.lower() for r in regions[providers == provider].unique()}
                if len(parts) == 2 and asked.lower() in provider_regions:
                    # was: "unknown aws instance family 'us-east-1'" and the family names
                    examples = sorted(by_family.values())[:3]
                    shown = ", ".join(f"{provider}:{asked}:{f}={count}" for f in examples)
                    raise ConfigError(
                        f"{asked!r} in {entry} is a region; a region's quota counts the instances "
                        "of one family there",
                        key_path=where,
                        hint=f"name the family after the region ({shown}), or give the "
                        f"provider's whole quota: {provider}={count}",
                    )
                raise _unknown(kind, asked, by_family.values(), where=where, entry=entry)
            canonical.append(family)
        out[":".join(canonical)] = count
    return out
