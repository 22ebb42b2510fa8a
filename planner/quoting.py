"""`planner quote`: from a workload and a deadline to ranked, priced plans.

The data flow, step by step (each step is a pure function over the previous one's output):

    offers snapshot  -> load_offer_book          (planner.catalog)
    offers table     -> filter_offers            (provider / region / GPU choices)
    + owned hardware -> build_candidates         (workload model per gang size: fits? hours?)
    candidates       -> prune_dominated          (slower and dearer configurations dropped)
    pruned set       -> make_plans / frontier    (the MILP, planner.optimize)
    plans            -> QuoteResult              (rendered by planner.reports.quote)
"""

from __future__ import annotations

import contextlib
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from planner.catalog import OfferBook, load_offer_book
from planner.catalog.query import OfferFilter, filter_offers
from planner.errors import (
    ConfigError,
    UnknownNameError,
    is_number,
    is_whole_number,
    suggestion_hint,
)
from planner.hardware import load_gpu_catalog
from planner.optimize.candidates import (
    CandidateOptions,
    build_candidates,
    group_exclusions,
    instance_family,
    prune_dominated,
)
from planner.optimize.plans import (
    DEFAULT_CONFIDENCE,
    EGRESS_USD_PER_GB,
    STARTUP_HOURS,
    Plan,
    PlanRequest,
    frontier,
    make_plans,
)
from planner.optimize.spot import DEFAULT_RESTART_HOURS
from planner.workload import WorkloadSpec, estimate, load_workload

if TYPE_CHECKING:
    from planner.onprem import HardwareSpec
    from planner.optimize.solvers import Solver

_DURATION = re.compile(
    r"^\s*(\d+(?:\.\d+)?)\s*(m|min|mins|minutes?|h|hr|hrs|hours?|d|days?|w|weeks?)?\s*$", re.I
)
_UNIT_HOURS = {"m": 1 / 60, "h": 1.0, "d": 24.0, "w": 168.0}


# How owned hardware is charged per hour (planner.onprem.machine_cost_usd_per_hour).
LOCAL_COST_BASES = ("amortised", "sunk")
QUOTA_FORMS = (
    "aws=16 (provider), aws:p5=4 (provider:family), aws:us-east-1:p5=2 (provider:region:family)"
)


def parse_duration_hours(text: str, *, option: str = "--deadline") -> float:
    """``90m``, ``24h``, ``3d``, ``1w`` or a bare number of hours -> hours."""
    match = _DURATION.match(str(text))
    if not match:
        raise ConfigError(
            f"cannot read duration {text!r}",
            key_path=option,
            hint="write it like 90m, 24h, 3d or 2w",
        )
    value = float(match.group(1))
    unit = (match.group(2) or "h").lower()[0]
    hours = value * _UNIT_HOURS[unit]
    if hours <= 0:
        raise ConfigError(f"duration must be positive, got {text!r}", key_path=option)
    if not math.isfinite(hours):  # a few hundred digits read as float('inf')
        raise ConfigError(
            f"duration {text!r} is too long to be a number",
            key_path=option,
            hint="write it like 90m, 24h, 3d or 2w",
        )
    return hours


def parse_discounts(items: Sequence[str]) -> dict[str, float]:
    """``aws=0.12`` or ``aws=12%`` -> {"aws": 0.12}."""
    out: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ConfigError(
                f"cannot read discount {item!r}",
                key_path="--discount",
                hint="write it like aws=0.12 or aws=12%",
            )
        if ":" in name:
            raise ConfigError(
                f"cannot read discount {item!r}: a discount is per provider",
                key_path="--discount",
                hint="write it like aws=0.12 or aws=12% (no region or instance family)",
            )
        text = value.strip()
        try:
            frac = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError as e:
            raise ConfigError(
                f"cannot read discount {item!r}",
                key_path="--discount",
                hint="write it like aws=0.12",
            ) from e
        if not 0 <= frac < 1:
            raise ConfigError(
                f"discount {item!r} must be between 0 and 1 (or 0% and 100%)", key_path="--discount"
            )
        out[name.strip().lower()] = frac
    return out


def parse_quotas(items: Sequence[str]) -> dict[str, int]:
    """``aws=16``, ``aws:p5=4``, ``aws:us-east-1:p5=2`` -> max instances at once."""
    out: dict[str, int] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not value.strip().isdigit():
            raise ConfigError(
                f"cannot read quota {item!r}",
                key_path="--quota",
                hint=f"write it like {QUOTA_FORMS}, with a whole number of instances >= 0",
            )
        _quota_key_parts(key.strip(), "--quota")
        out[key.strip().lower()] = int(value)
    return out


def _quota_key_parts(key: str, where: str) -> list[str]:
    parts = key.split(":")
    if not 1 <= len(parts) <= 3 or not all(p.strip() for p in parts):
        raise ConfigError(
            f"cannot read quota key {key!r}",
            key_path=where,
            hint=f"write it like {QUOTA_FORMS}",
        )
    return [p.strip() for p in parts]


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

    def __post_init__(self) -> None:
        # Checked where a request is made, before any work, so that a library caller gets a
        # ConfigError naming the field instead of a PulpError, TypeError or IndexError from deep
        # inside the optimizer.  Names in discounts and quotas are checked against the loaded
        # offers in quote().
        _check_request(self)


# The `planner quote` option behind each QuoteRequest field, named next to the field in errors.
_OPTIONS = {
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
    "include_reserved": "--reserved",
    "hardware": "--hardware",
    "offers_files": "--offers",
    "snapshot_dir": "--snapshot",
    "discounts": "--discount",
    "quotas": "--quota",
    "local_cost_basis": "--hardware-cost",
    "top": "--top",
    "pareto": "--pareto",
}


def _where(name: str) -> str:
    option = _OPTIONS.get(name)
    return f"{name} ({option})" if option else name


def _check_request(req: QuoteRequest) -> None:
    """Raise ConfigError for the first field of ``req`` that cannot be quoted; tidy name lists."""
    if isinstance(req.workload, str):
        if not req.workload.strip():
            raise ConfigError(
                "workload name is blank",
                key_path=_where("workload"),
                hint="name a workload (planner workloads lists them) or a YAML file",
            )
    elif not isinstance(req.workload, (Path, WorkloadSpec)):
        raise ConfigError(
            f"expected a workload name, YAML path or WorkloadSpec, got {req.workload!r}",
            key_path=_where("workload"),
            hint="e.g. workload='gpt2-xl-finetune' or workload=planner.load_workload('file.yaml')",
        )
    deadline = req.deadline_hours
    if not is_number(deadline) or not math.isfinite(deadline) or deadline <= 0:
        hint = "a number of hours, e.g. deadline_hours=24"
        if isinstance(deadline, str):
            try:
                hours = parse_duration_hours(deadline)
            except ConfigError:
                pass
            else:
                hint = f"deadline_hours={hours:g} (parse_duration_hours reads {deadline!r})"
        raise ConfigError(
            f"deadline must be a finite number of hours > 0, got {deadline!r}",
            key_path=_where("deadline_hours"),
            hint=hint,
        )
    budget = req.budget_usd
    if budget is not None and (not is_number(budget) or not math.isfinite(budget) or budget < 0):
        raise ConfigError(
            f"budget must be a finite number of USD >= 0, got {budget!r}",
            key_path=_where("budget_usd"),
            hint="e.g. budget_usd=500, or leave it out (None) for no budget",
        )
    for name in ("allow_spot", "spot_only", "include_reserved", "pareto"):
        value = getattr(req, name)
        if not isinstance(value, bool):
            raise ConfigError(
                f"expected True or False, got {value!r}",
                key_path=_where(name),
                hint=f"{name}=True or {name}=False",
            )
    if req.spot_only and not req.allow_spot:
        raise ConfigError(
            "spot_only=True needs spot capacity, but allow_spot=False forbids it",
            key_path=_where("spot_only"),
            hint="drop one of them (--no-spot and --spot-only exclude each other)",
        )
    pct = req.max_interruption_pct
    if pct is not None and (not is_number(pct) or not math.isfinite(pct) or not 0 <= pct <= 100):
        raise ConfigError(
            f"expected a percentage between 0 and 100, got {pct!r}",
            key_path=_where("max_interruption_pct"),
            hint="e.g. max_interruption_pct=10 (at most 10% of spot hours interrupted per month)",
        )
    confidence = req.confidence_pct
    if not is_number(confidence) or not math.isfinite(confidence) or not 0 <= confidence < 100:
        raise ConfigError(
            f"expected a percentage from 0 up to (not including) 100, got {confidence!r}",
            key_path=_where("confidence_pct"),
            hint="e.g. confidence_pct=95 (each plan meets the deadline with at least a 95% "
            "chance under the spot model); 0 accepts any risk",
        )
    if req.local_cost_basis not in LOCAL_COST_BASES:
        raise UnknownNameError(
            "owned hardware cost basis",
            str(req.local_cost_basis),
            LOCAL_COST_BASES,
            key_path=_where("local_cost_basis"),
        )
    if not is_whole_number(req.top) or req.top < 1:
        raise ConfigError(
            f"expected a whole number of plans >= 1, got {req.top!r}",
            key_path=_where("top"),
            hint="e.g. top=5",
        )
    for name in ("providers", "regions", "gpus", "hardware", "offers_files"):
        names = getattr(req, name)
        if isinstance(names, (str, Path)):
            names = (names,)  # one name, not its letters
        if not isinstance(names, Iterable):
            raise ConfigError(
                f"expected a tuple of names, got {names!r}",
                key_path=_where(name),
                hint=f"e.g. {name}=('aws',)" if name == "providers" else f"e.g. {name}=()",
            )
        names = tuple(names)
        # provider, region and GPU names are checked by OfferFilter (the same message as offers)
        for item in names if name in ("hardware", "offers_files") else ():
            if not isinstance(item, (str, Path)) or not str(item).strip():
                raise ConfigError(
                    f"{item!r} is not a name",
                    key_path=_where(name),
                    hint=f"leave {name} empty to allow every one",
                )
        object.__setattr__(req, name, names)
    if req.snapshot_dir is not None and not isinstance(req.snapshot_dir, (str, Path)):
        raise ConfigError(
            f"expected a folder, got {req.snapshot_dir!r}", key_path=_where("snapshot_dir")
        )
    _check_discount_values(req.discounts)
    _check_quota_values(req.quotas)


def _check_discount_values(discounts: object) -> None:
    where = _where("discounts")
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
                f"discount for {name!r} must be a fraction between 0 and 1, got {frac!r}",
                key_path=where,
                hint=f"e.g. {{{name!r}: 0.12}} for 12% off",
            )


def _check_quota_values(quotas: object) -> None:
    where = _where("quotas")
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
        _quota_key_parts(key, where)
        if not is_whole_number(count) or count < 0:
            raise ConfigError(
                f"quota for {key!r} must be a whole number of instances >= 0, got {count!r}",
                key_path=where,
                hint=f"e.g. {{{key!r}: 4}}",
            )


def _unknown(
    kind: str, name: str, choices: Iterable[str], *, where: str, entry: str
) -> ConfigError:
    """An unknown name inside a discount or quota entry, with the nearest known names."""
    options = set(choices)
    hint = suggestion_hint(kind, name, options) if options else f"the offers have no {kind}"
    return ConfigError(
        f"unknown {kind} {name!r} in {entry}; it would match no offer", key_path=where, hint=hint
    )


def _canonical_discounts(discounts: Mapping[str, float], offers: pd.DataFrame) -> dict[str, float]:
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
                where=_where("discounts"),
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
    where = _where("quotas")
    providers = offers["provider"].astype(str)
    regions = offers["region"].astype(str)
    types = offers["instance_type"].astype(str)
    families = types.map(instance_family)
    by_provider = {p.lower(): p for p in providers.unique()}
    out: dict[str, int] = {}
    for key, count in quotas.items():
        entry = f"{key}={count}"
        parts = _quota_key_parts(key, where)
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
                raise _unknown(kind, asked, by_family.values(), where=where, entry=entry)
            canonical.append(family)
        out[":".join(canonical)] = count
    return out


@dataclass(frozen=True)
class QuoteResult:
    request: QuoteRequest
    workload: WorkloadSpec
    requirements: dict[str, Any]
    plans: tuple[Plan, ...]
    excluded: tuple[str, ...]
    book: OfferBook
    frontier: tuple[tuple[float, float], ...] = ()
    stats: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # plan variants left out (the solver gave up on them)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "workload": self.workload.name,
            "deadline_hours": self.request.deadline_hours,
            "budget_usd": self.request.budget_usd,
            "confidence_pct": self.request.confidence_pct,
            "requirements": self.requirements,
            "excluded": list(self.excluded),
            "notes": list(self.notes),
            "snapshot": {
                "as_of": self.book.as_of,
                "source": self.book.source_text,
                "parts": list(self.book.sources),
            },
            "plans": [p.to_dict() for p in self.plans],
            "assumptions": {
                "startup_hours": STARTUP_HOURS,
                "checkpoint_egress_usd_per_gb": EGRESS_USD_PER_GB,
                "spot_restart_hours": DEFAULT_RESTART_HOURS,
                "discounts": dict(self.request.discounts),
                "quotas": dict(self.request.quotas),
                "owned_hardware": list(self.request.hardware),
                "owned_cost_basis": self.request.local_cost_basis,
                "spot_allowed": self.request.allow_spot,
                "reserved_included": self.request.include_reserved,
            },
            "stats": self.stats,
        }
        if self.request.pareto:
            out["frontier"] = [{"deadline_hours": d, "total_cost_usd": c} for d, c in self.frontier]
        return out


def quote(
    req: QuoteRequest,
    *,
    solver: Solver | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> QuoteResult:
    """Cheapest distinct plans for ``req`` (raises InfeasibleError with the nearest alternative).

    ``on_progress(done, total)`` follows the cost-versus-deadline sweep when ``req.pareto``.
    """
    if not isinstance(req, QuoteRequest):
        raise misuse_error(req, {})
    started = time.perf_counter()
    spec = req.workload if isinstance(req.workload, WorkloadSpec) else load_workload(req.workload)
    hardware: tuple[HardwareSpec, ...] = ()
    if req.hardware:
        # owned hardware files only when asked for (planner.onprem builds its YAML models on import)
        from planner.onprem import load_hardware

        hardware = tuple(load_hardware(h) for h in req.hardware)
    catalog = load_gpu_catalog()
    book = load_offer_book(req.offers_files, snapshot_dir=req.snapshot_dir)
    # Against every loaded offer (not only the filtered ones: a quota on a provider left out
    # with --provider is harmless, a misspelt one is not).
    req = replace(
        req,
        discounts=_canonical_discounts(req.discounts, book.offers),
        quotas=_canonical_quotas(req.quotas, book.offers),
    )
    offers = filter_offers(
        book.offers,
        OfferFilter(providers=req.providers, regions=req.regions, gpus=req.gpus),
        catalog,
    )
    if req.gpus:
        allowed = {g.name for name in req.gpus for g in catalog.match(name)}
        hardware = tuple(h for h in hardware if catalog.resolve(h.gpu).name in allowed)
    options = CandidateOptions(
        allow_spot=req.allow_spot,
        spot_only=req.spot_only,
        include_reserved=req.include_reserved,
        max_interruption_pct=req.max_interruption_pct,
        discounts=req.discounts,
        quotas=req.quotas,
        local_cost_basis=req.local_cost_basis,
    )
    cset = build_candidates(spec, offers, catalog, hardware=hardware, options=options)
    pruned = prune_dominated(
        cset.table,
        by=("kind", "purchase_option", "gpu_model", "provider")
        if spec.pieces <= 1
        else ("kind", "purchase_option", "gpu_model", "provider", "quota_group"),
        parallel=spec.pieces > 1,
        pieces=spec.pieces if spec.pieces > 1 else None,
    )
    t_candidates = time.perf_counter()
    plan_req = PlanRequest(
        deadline_hours=req.deadline_hours,
        budget_usd=req.budget_usd,
        pieces=spec.pieces,
        top=req.top,
        confidence=req.confidence_pct / 100 if req.confidence_pct > 0 else None,
    )
    plan_set = make_plans(pruned, plan_req, solver)
    plans = plan_set.plans
    curve = frontier(pruned, plan_req, solver, on_progress=on_progress) if req.pareto else ()
    reference = estimate(spec, catalog.resolve("H100"), 1)
    states = sum(
        v
        for k, v in reference.memory_breakdown_gib.items()
        if k in ("weights", "gradients", "optimizer_states")
    )
    requirements = {
        "total_flops": reference.total_flops,
        "model_states_gib": states,  # weights + gradients + optimizer, unsharded
        "memory_per_gpu_gib": plans[0].memory_per_gpu_gib,  # with the cheapest plan's strategy
        "strategy": plans[0].items[0].strategy,
        "interconnect_required": _interconnect_need(plans[0]),
        "efficiency": plans[0].items[0].efficiency,  # expected MFU of the cheapest plan
        "pieces": spec.pieces,
    }
    stats = {
        "offers_considered": len(offers),
        "candidates": len(cset.table),
        "candidates_after_pruning": len(pruned),
        "workload_estimates": cset.estimates_evaluated,
        "seconds_candidates": round(t_candidates - started, 4),
        "seconds_total": round(time.perf_counter() - started, 4),
    }
    return QuoteResult(
        request=req,
        workload=spec,
        requirements=requirements,
        plans=plans,
        excluded=tuple(group_exclusions(cset.exclusions)),
        book=book,
        frontier=curve,
        stats=stats,
        notes=plan_set.notes,
    )


# Keyword arguments people pass to quote() meaning a QuoteRequest field (the CLI's option names).
_FIELD_ALIASES = {
    "deadline": "deadline_hours",
    "budget": "budget_usd",
    "provider": "providers",
    "region": "regions",
    "gpu": "gpus",
    "no_spot": "allow_spot",
    "max_interruption": "max_interruption_pct",
    "confidence": "confidence_pct",
    "reserved": "include_reserved",
    "hardware_cost": "local_cost_basis",
    "discount": "discounts",
    "quota": "quotas",
}


def misuse_error(request: object, keywords: Mapping[str, object]) -> ConfigError:
    """The error for ``quote("gpt2-xl-finetune", deadline="24h")``: the QuoteRequest to build."""
    field_names = {f.name for f in fields(QuoteRequest)}
    args: list[str] = []
    if isinstance(request, (str, Path)):
        args.append(f"workload={str(request)!r}")
    for key, value in keywords.items():
        name = _FIELD_ALIASES.get(key, key)
        if name == "deadline_hours" and isinstance(value, str):
            with contextlib.suppress(ConfigError):  # unreadable: shown as given
                value = parse_duration_hours(value)
        if name == "allow_spot" and key == "no_spot" and isinstance(value, bool):
            value = not value
        if name in field_names:
            args.append(f"{name}={value!r}")
    if not any(a.startswith("deadline_hours=") for a in args):
        args.append("deadline_hours=24")
    what = f"{type(request).__name__} {request!r}"
    if keywords:
        what += " and keyword arguments " + ", ".join(sorted(keywords))
    return ConfigError(
        f"quote() takes one QuoteRequest, got {what}",
        key_path="request",
        hint=f"planner.quote(planner.QuoteRequest({', '.join(args)}))",
    )


def _interconnect_need(plan: Plan) -> str:
    multi_node = any(i.instances > 1 for i in plan.items)
    within = any(i.gpus_per_instance > 1 for i in plan.items)
    # Strategy names read like "DP2 + TP8 + full recompute" (planner.workload.strategy.Strategy.name)
    if any(re.search(r"\bTP\d", i.strategy) for i in plan.items):
        need = "NVLink/NVSwitch inside each instance (tensor parallel)"
    elif within:
        need = "PCIe or better inside each instance (data parallel)"
    else:
        need = "none (single GPU)"
    if multi_node:
        need += "; EFA/InfiniBand between instances for full scaling"
    return need
