"""Refreshing prices: fetch from the provider adapters, check, publish a new user snapshot.

The only path that talks to cloud APIs (STYLE.md "fetch online, plan offline").  A refresh

1. fetches every (provider, region) through its adapter (:mod:`planner.providers`), collecting
   failures instead of stopping at the first;
2. refuses to publish a partial result unless ``allow_partial`` (failed regions then keep their
   previous rows, and the manifest notes say so);
3. merges the fetched regions into the provider's previous offers (regions not refreshed are
   carried over), so refreshing one region never hides the others;
4. runs the sanity gates against the previous snapshot (row count, price moves; unknown GPU models
   cannot get this far because the adapters and ``validate_offers`` reject them) unless ``force``;
5. publishes through :func:`planner.catalog.store.write_snapshot` (temporary directory, fsync,
   atomic rename).  Steps 3-5 run under an exclusive refresh lock, so concurrent refreshes
   serialise and each one gates against the snapshot the other just published.

Pure helpers (:func:`check_gates`, :func:`diff_offers`, :func:`price_history`) take DataFrames.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import pandas as pd

from planner.catalog.store import (
    ensure_writable,
    list_snapshots,
    load_newest,
    load_snapshot,
    locked,
    read_manifest,
    snapshot_age_days,
    write_snapshot,
)
from planner.errors import (
    ConfigError,
    OfferValidationError,
    ProviderError,
    SnapshotError,
    UnknownNameError,
    shown_path,
    suggest,
)
from planner.providers import DEFAULT_REGIONS, PROVIDERS, get_provider
from planner.providers.base import Clock, Provider, Unmapped, utc_now
from planner.schema import KEY_COLUMNS, PRICE_COLUMNS

log = logging.getLogger(__name__)

# Serialises whole refreshes (gate, merge, publish); a different file from the store's own write
# lock, which write_snapshot takes inside it.
REFRESH_LOCK = ".refresh.lock"
Progress = Callable[[str, str, int, int], None]  # (provider, region) just finished, done, total
_PARTIAL_HINT = "retry later, or pass --allow-partial to publish the regions that succeeded"


@dataclass(frozen=True)
class Gates:
    """Sanity limits a refreshed provider must pass before it is published (``--force`` skips)."""

    # A real catalog shrinks by a few retired types, not by half: a larger drop means a broken
    # fetch (a filter that matched too little, a page that came back empty).
    max_row_drop_share: float = 0.5
    # List prices move by tens of percent (AWS's June 2025 P5 cut was about 45%); a factor of 3
    # either way is a unit or parsing slip (per GPU vs per VM, term total vs hourly).
    max_price_factor: float = 3.0


@dataclass(frozen=True)
class RegionFailure:
    provider: str
    region: str
    error: str
    hint: str | None = None  # the adapter's advice (credentials, permissions), if it gave one


def describe_failures(failures: Sequence[RegionFailure]) -> tuple[str, list[str]]:
    """The failures as one clause per provider and error, and the adapters' distinct hints.

    A provider whose credentials are missing fails every region with the same error; that reads
    once, with its regions listed: ``gcp us-central1, us-east4: <error>``.
    """
    regions: dict[tuple[str, str], list[str]] = {}
    hints: dict[str, None] = {}  # insertion-ordered set
    for f in failures:
        regions.setdefault((f.provider, f.error), []).append(f.region)
        if f.hint:
            hints[f"{f.provider}: {f.hint}"] = None
    detail = "; ".join(f"{p} {', '.join(r)}: {error}" for (p, error), r in regions.items())
    return detail, list(hints)


@dataclass(frozen=True)
class RefreshResult:
    """What a refresh published (``snapshot``) and everything a user should hear about."""

    snapshot: Path
    rows: dict[str, int]
    fetched_regions: dict[str, tuple[str, ...]]
    failures: tuple[RegionFailure, ...] = field(default=())
    unmapped: tuple[Unmapped, ...] = field(default=())
    forced: tuple[str, ...] = field(default=())  # gate findings published anyway under --force


def live_providers(names: Iterable[str]) -> dict[str, Provider]:
    """The registered adapters for ``names``, built with their live clients."""
    return {name: get_provider(name) for name in names}


def plan_regions(
    provider_args: Sequence[str], region_args: Sequence[str]
) -> dict[str, tuple[str, ...]]:
    """Which regions to refresh per provider, from the ``providers`` and ``regions`` asked for (``--provider``, ``--region``).

    ``--provider all`` (or none) means every registered provider.  A region is ``provider:region``
    or, when exactly one provider is chosen, a plain region name; a provider with no region named
    gets its :data:`DEFAULT_REGIONS`.
    """
    names: list[str] = []
    for arg in provider_args or ("all",):
        key = arg.strip().lower()
        if key == "all":
            names += [n for n in PROVIDERS if n not in names]
        elif key not in PROVIDERS:
            raise UnknownNameError("provider", arg, [*PROVIDERS, "all"], key_path="providers")
        elif key not in names:
            names.append(key)
    chosen: dict[str, list[str]] = {n: [] for n in names}
    for arg in region_args:
        provider, sep, region = arg.partition(":")
        if not sep:
            if len(names) != 1:
                raise ConfigError(
                    f"region {arg!r} is ambiguous with {len(names)} providers",
                    key_path="regions",
                    hint="write it as provider:region, e.g. aws:us-east-1",
                )
            provider, region = names[0], arg
        if provider not in chosen:
            raise UnknownNameError("provider", provider, names, key_path="regions")
        if region not in chosen[provider]:
            chosen[provider].append(region.strip())
    return {n: tuple(r) if r else DEFAULT_REGIONS[n] for n, r in chosen.items()}


def check_gates(
    previous: pd.DataFrame, new: pd.DataFrame, regions: Sequence[str], gates: Gates
) -> list[str]:
    """Findings that should stop publishing ``new`` over ``previous`` (both one provider's offers).

    Compares only the refreshed ``regions``: rows elsewhere are carried over unchanged.
    """
    findings: list[str] = []
    if new.empty:
        return ["the refresh produced no offers"]
    before = previous[previous["region"].isin(regions)]
    after = new[new["region"].isin(regions)]
    if len(before) and len(after) < (1 - gates.max_row_drop_share) * len(before):
        findings.append(
            f"row count fell from {len(before)} to {len(after)} in {', '.join(regions)}"
            f" (more than {gates.max_row_drop_share:.0%})"
        )
    joined = before.merge(after, on=list(KEY_COLUMNS), suffixes=("_old", "_new"))
    for column in PRICE_COLUMNS.values():
        old, new_price = joined[f"{column}_old"], joined[f"{column}_new"]
        ratio = new_price / old
        moved = joined[
            (old > 0)
            & (new_price > 0)
            & ((ratio > gates.max_price_factor) | (ratio < 1 / gates.max_price_factor))
        ]
        for row in moved.head(5).itertuples(index=False):
            findings.append(
                f"{row.region}/{row.instance_type} {column} moved from {getattr(row, column + '_old'):g}"
                f" to {getattr(row, column + '_new'):g} (more than x{gates.max_price_factor:g})"
            )
    return findings


def _merge(previous: pd.DataFrame, fetched: pd.DataFrame, regions: Sequence[str]) -> pd.DataFrame:
    """The provider's offers after the refresh: fetched regions replaced, the rest carried over."""
    kept = previous[~previous["region"].isin(regions)]
    frames = [f for f in (kept, fetched) if len(f)]
    if not frames:
        return fetched
    return (
        pd.concat(frames, ignore_index=True)
        .sort_values(list(KEY_COLUMNS), kind="stable")
        .reset_index(drop=True)
    )


def _previous_offers(
    provider: str, roots: Sequence[Path]
) -> tuple[pd.DataFrame | None, str | None]:

    # the newest snapshot that loads: a corrupt one is skipped (with a warning) for the one before
    # it, so its rows are still carried over and the sanity gates still compare against them
    chosen_all, snaps = load_newest(roots)
    chosen = chosen_all.get(provider)
    if chosen is None:
        return None, None
    offers = snaps[chosen.path].offers
    return offers[offers["provider"] == provider].reset_index(drop=True), chosen.path.name


def _unique_id(root: Path, base: str) -> str:
    candidate, n = base, 1
    while (root / candidate).exists():
        n += 1
        candidate = f"{base}-{n}"
    return candidate


@dataclass(frozen=True)
class _Fetched:
    """What the adapters returned: offers and regions per provider that answered, the failures."""

    offers: Mapping[str, list[pd.DataFrame]]
    regions: Mapping[str, list[str]]
    failures: tuple[RegionFailure, ...]
    unmapped: tuple[Unmapped, ...]


@dataclass(frozen=True)
class _Checked:
    """Each provider's offers after the merge, with its manifest note, and the gate findings."""

    frames: dict[str, pd.DataFrame]
    notes: dict[str, str]
    findings: list[str]


def refresh_prices(
    providers: Mapping[str, Provider],
    regions: Mapping[str, Sequence[str]],
    *,
    root: Path,
    previous_roots: Sequence[Path] | None = None,
    allow_partial: bool = False,
    force: bool = False,
    gates: Gates = Gates(),
    clock: Clock = utc_now,
    on_progress: Progress | None = None,
) -> RefreshResult:
    """Fetch, check and publish a new snapshot of ``providers`` into ``root``.

    ``previous_roots`` are searched for each provider's previous offers (default: ``root`` only;
    the CLI passes the user root and the bundled snapshot).  Raises ProviderError when a region
    failed and ``allow_partial`` is off, SnapshotError when a gate fails and ``force`` is off; in
    both cases nothing is published.
    """
    ensure_writable(root)  # before minutes of fetching, not after
    fetched = _fetch_all(providers, regions, on_progress)
    _refuse_incomplete(fetched, allow_partial)
    search = list(previous_roots) if previous_roots is not None else [root]
    with locked(root, REFRESH_LOCK):
        checked = _merge_and_gate(fetched, search, gates, clock)
        if checked.findings and not force:
            raise SnapshotError(
                "sanity gates failed, nothing published: " + "; ".join(checked.findings),
                hint="check the provider's API output, or pass --force if the change is real",
            )
        now = clock()
        snapshot_id = _unique_id(root, f"{now:%Y-%m-%dT%H%M%SZ}-{'-'.join(sorted(checked.frames))}")
        path = write_snapshot(
            root,
            checked.frames,
            snapshot_id=snapshot_id,
            provider_notes=checked.notes,
            notes="planner prices refresh" + (" --force" if force and checked.findings else ""),
            now=now,
        )
    return RefreshResult(
        snapshot=path,
        rows={name: len(df) for name, df in checked.frames.items()},
        fetched_regions={name: tuple(r) for name, r in fetched.regions.items()},
        failures=fetched.failures,
        unmapped=fetched.unmapped,
        forced=tuple(checked.findings),
    )


def _fetch_all(
    providers: Mapping[str, Provider],
    regions: Mapping[str, Sequence[str]],
    on_progress: Progress | None,
) -> _Fetched:
    """Every (provider, region), one at a time; a failed region is collected, not fatal."""
    offers: dict[str, list[pd.DataFrame]] = {}
    ok_regions: dict[str, list[str]] = {}
    failures: list[RegionFailure] = []
    unmapped: list[Unmapped] = []
    total = sum(len(regions[name]) for name in providers)
    done = 0
    for name, provider in providers.items():
        for region in regions[name]:
            try:
                result = provider.fetch([region])
            except ProviderError as e:
                failures.append(RegionFailure(name, region, e.message, e.hint))
                log.warning("%s %s failed: %s", name, region, e.message)
            else:
                offers.setdefault(name, []).append(result.offers)
                ok_regions.setdefault(name, []).append(region)
                unmapped += result.unmapped
            done += 1
            if on_progress is not None:
                on_progress(name, region, done, total)
    return _Fetched(offers, ok_regions, tuple(failures), tuple(unmapped))


def _refuse_incomplete(fetched: _Fetched, allow_partial: bool) -> None:
    """Publish nothing when a region failed (unless ``allow_partial``) or when every one did."""
    if fetched.failures and not allow_partial:
        detail, hints = describe_failures(fetched.failures)
        raise ProviderError(
            f"refresh incomplete, nothing published ({detail})",
            hint="; ".join([*hints, _PARTIAL_HINT]),
        )
    if not fetched.offers:
        detail, hints = describe_failures(fetched.failures)
        raise ProviderError(
            f"every region failed; nothing published ({detail})",
            hint="; ".join(hints) or "check credentials and retry",
        )


def _merge_and_gate(
    fetched: _Fetched, search: Sequence[Path], gates: Gates, clock: Clock
) -> _Checked:
    """Each provider's fetched regions merged into its previous offers (found in ``search``),
    gated against them, with a note of what was fetched, what failed and what was carried over."""
    frames: dict[str, pd.DataFrame] = {}
    notes: dict[str, str] = {}
    findings: list[str] = []
    for name, parts in fetched.offers.items():
        new = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
        previous, previous_id = _previous_offers(name, search)
        refreshed = fetched.regions[name]
        if previous is not None:
            findings += [f"{name}: {f}" for f in check_gates(previous, new, refreshed, gates)]
            new = _merge(previous, new, refreshed)
        elif new.empty:
            findings.append(f"{name}: the refresh produced no offers")
        note = f"fetched {', '.join(refreshed)} on {clock().date().isoformat()}"
        missing = [f.region for f in fetched.failures if f.provider == name]
        if missing:
            note += f"; FAILED {', '.join(missing)} (previous rows kept)"
        if previous_id:
            note += f"; other regions carried over from {previous_id}"
        frames[name] = new
        notes[name] = note
    return _Checked(frames, notes, findings)


# ---------------------------------------------------------------- status, diff, history


def prices_status(
    roots: Sequence[Path], *, max_age_days: int, today: date | None = None
) -> list[dict[str, Any]]:
    """One record per provider: its newest snapshot, as-of dates, age, rows, source, stale or not.

    ``as_of`` is the oldest row's date (the age and staleness follow it), ``as_of_newest`` the
    newest: they differ after a refresh of some regions carried the others over.
    """

    records = []
    chosen, _ = load_newest(roots)  # what planning will use: corrupt snapshots are skipped
    for provider, snap in sorted(chosen.items()):
        age = snapshot_age_days(snap.entry.as_of, today)
        records.append(
            {
                "provider": provider,
                "snapshot": snap.path.name,
                "location": "user" if snap.path.parent == roots[0] else "bundled",
                "as_of": snap.entry.as_of,
                "as_of_newest": snap.entry.as_of_newest,
                "age_days": age,
                "stale": age > max_age_days,
                "rows": snap.entry.rows,
                "source": snap.entry.source,
            }
        )
    return records


def find_snapshot(ref: str | Path, roots: Sequence[Path]) -> Path:
    """A snapshot by directory path or by id in any of ``roots``."""
    path = Path(ref)
    try:
        if path.is_dir():
            return path
    except OSError:  # a name too long to be a path (or one under a folder it cannot read): an id
        pass
    known = {p.name: p for root in roots for p in list_snapshots(root)}
    if str(ref) in known:
        return known[str(ref)]
    raise UnknownNameError("snapshot", shown_path(ref), known)


def diff_offers(
    old: pd.DataFrame, new: pd.DataFrame, *, threshold: float = 0.05
) -> list[dict[str, Any]]:
    """Offers added, removed, or whose price moved by more than ``threshold`` (a share, 0.05 = 5%)."""
    keys = list(KEY_COLUMNS)
    merged = old.merge(new, on=keys, how="outer", suffixes=("_old", "_new"), indicator=True)
    changes: list[dict[str, Any]] = []
    for row in merged.to_dict("records"):
        key = {k: row[k] for k in keys}
        if row["_merge"] == "left_only":
            changes.append(
                {
                    **key,
                    "change": "removed",
                    "price": None,
                    "old": None,
                    "new": None,
                    "change_pct": None,
                }
            )
            continue
        if row["_merge"] == "right_only":
            changes.append(
                {
                    **key,
                    "change": "added",
                    "price": None,
                    "old": None,
                    "new": None,
                    "change_pct": None,
                }
            )
            continue
        for option, column in PRICE_COLUMNS.items():
            before, after = row[f"{column}_old"], row[f"{column}_new"]
            if pd.isna(before) or pd.isna(after) or before <= 0:
                continue
            share = after / before - 1
            if abs(share) > threshold:
                changes.append(
                    {
                        **key,
                        "change": "price",
                        "price": option.value,
                        "old": float(before),
                        "new": float(after),
                        "change_pct": round(float(share) * 100, 2),
                    }
                )
    order = {"removed": 0, "added": 1, "price": 2}
    return sorted(
        changes, key=lambda c: (order[c["change"]], c["provider"], c["region"], c["instance_type"])
    )


def price_history(
    roots: Sequence[Path], *, instance_type: str, region: str | None = None
) -> list[dict[str, Any]]:
    """Every snapshot's prices for ``instance_type`` (optionally in one region), oldest first.

    An instance type no snapshot lists, or a region where none lists it, is an UnknownNameError
    with the nearest names that are listed.
    """
    if not isinstance(instance_type, str) or not instance_type.strip():
        raise ConfigError(
            f"expected an instance type, got {instance_type!r}",
            key_path="instance_type",
            hint="e.g. p4d.24xlarge (planner offers lists them)",
        )
    records = []
    listed_types: set[str] = set()
    listed_regions: set[str] = set()
    for root in roots:
        for path in list_snapshots(root):
            try:
                manifest = read_manifest(path)
                offers = load_snapshot(path).offers
            except (SnapshotError, OfferValidationError) as e:
                log.warning("skipping %s: %s", path, e)
                continue
            listed_types.update(offers["instance_type"].unique())
            rows = offers[offers["instance_type"] == instance_type]
            listed_regions.update(rows["region"].unique())
            if region is not None:
                rows = rows[rows["region"] == region]
            for row in rows.to_dict("records"):
                records.append(
                    {
                        "snapshot": path.name,
                        "created_at": manifest.created_at,
                        "provider": row["provider"],
                        "region": row["region"],
                        "as_of": row["as_of"],
                        **{
                            c: (None if pd.isna(row[c]) else float(row[c]))
                            for c in PRICE_COLUMNS.values()
                        },
                    }
                )
    if not records and listed_types:
        if instance_type not in listed_types:
            raise UnknownNameError(
                "instance type", instance_type, listed_types, key_path="instance_type"
            )
        close = suggest(str(region), sorted(listed_regions))
        raise ConfigError(
            f"no snapshot lists {instance_type} in region {region!r}",
            key_path="region",
            hint=f"regions where it is listed: {', '.join(close or sorted(listed_regions)[:12])}"
            f" ({len(listed_regions)} in all)",
        )
    return sorted(records, key=lambda r: (r["as_of"], r["created_at"], r["provider"], r["region"]))
