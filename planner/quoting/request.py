"""A quote request in domain terms: what to plan, by when, under which constraints.

Checked where it is made (``QuoteRequest.__post_init__``), so a library caller gets a
ConfigError naming the field before any work; names in discounts and quotas are checked against
the loaded offers by the quote service.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from planner.errors import (
    ConfigError,
    UnknownNameError,
    is_number,
    is_whole_number,
    suggestion_hint,
)
from planner.optimize.candidates import (
    instance_family,
)
from planner.optimize.plans import (
    DEFAULT_CONFIDENCE,
)
from planner.workload import WorkloadSpec

if TYPE_CHECKING:
    pass

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

