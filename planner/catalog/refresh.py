"""Refreshing prices: fetch from the provider adapters, check, publish a new user snapshot.

The only path that talks to cloud APIs (STYLE.md "fetch online, plan offline").  A refresh

1. checks that the snapshot folder can be written and takes the refresh lock, then removes what
   a killed refresh left behind (:func:`planner.catalog.store.remove_leftovers`): all before any
   network work, so a refresh never spends minutes fetching for a folder it cannot write;
2. fetches every (provider, region) through its adapter (:mod:`planner.providers`), collecting
   failures instead of stopping at the first: an adapter's error, a missing extra, even a bug
   in an adapter becomes that region's failure, reported with the others;
3. refuses to publish a partial result unless ``allow_partial`` (failed regions then keep their
   previous rows, and the manifest notes say so);
4. merges the fetched regions into the provider's previous offers (regions not refreshed are
   carried over), so refreshing one region never hides the others;
5. runs the sanity gates (:mod:`planner.catalog.gates`: zero prices, vanished prices, price
   moves, row drops) against the previous offers; a finding blocks publishing unless an
   ``accept`` pattern (``--accept-changes``) names it, or ``force``;
6. publishes through :func:`planner.catalog.store.write_snapshot` (temporary directory, fsync,
   atomic rename).  Steps 2-6 run under the exclusive refresh lock, so concurrent refreshes
   serialise and each one gates against the snapshot the other just published.

A dry run (``dry_run``) does steps 2-5 without the lock and without writing, and returns what a
refresh would publish: the changes against the previous offers and every gate finding.

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

from planner.catalog.gates import (
    DEFAULT_GATES,
    AcceptPattern,
    GateFinding,
    Gates,
    accept_patterns,
    check_gates,
    judge,
    summarise,
)
from planner.catalog.store import (
    default_roots,
    ensure_writable,
    list_snapshots,
    load_newest,
    load_snapshot,
    locked,
    read_manifest,
    remove_leftovers,
    snapshot_age_days,
    user_snapshot_root,
    write_snapshot,
)
from planner.errors import (
    ConfigError,
    OfferValidationError,
    PlannerError,
    ProviderError,
    SnapshotError,
    UnknownNameError,
    shown_path,
    suggest,
)
from planner.providers import (
    DEFAULT_REGIONS,
    PROVIDERS,
    check_environment,
    get_provider,
    refresh_advice,
)
from planner.providers.base import Clock, FetchResult, Provider, Unmapped, utc_now
from planner.schema import KEY_COLUMNS, PRICE_COLUMNS, empty_offers

__all__ = [
    "GateFinding",
    "Gates",
    "RefreshResult",
    "RegionFailure",
    "check_gates",
    "diff_offers",
    "plan_regions",
    "price_history",
    "prices_status",
    "refresh_advice",
    "refresh_prices",
    "refresh_user_prices",
]

log = logging.getLogger(__name__)

# Serialises whole refreshes (fetch, gate, merge, publish); a different file from the store's own
# write lock, which write_snapshot takes inside it.
REFRESH_LOCK = ".refresh.lock"
Progress = Callable[[str, str, int, int], None]  # (provider, region) just finished, done, total
# (a transient failure's own hint says to retry; a missing key's does not: was "retry later"
# after every one, and the option's name alone to a Python caller)
_PARTIAL_HINT = (
    "to publish the regions that succeeded, pass --allow-partial (allow_partial=True in Python)"
)


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
    """What a refresh published (``snapshot``; None for a dry run) and everything a user should
    hear about: failures, unmapped items, gate findings (each with what accepted it)."""

    snapshot: Path | None
    rows: dict[str, int]
    fetched_regions: dict[str, tuple[str, ...]]
    failures: tuple[RegionFailure, ...] = field(default=())
    unmapped: tuple[Unmapped, ...] = field(default=())
    findings: tuple[GateFinding, ...] = field(default=())
    unused_accepts: tuple[str, ...] = field(default=())  # --accept-changes that matched nothing
    changes: tuple[dict[str, Any], ...] = field(default=())  # a dry run's diff against before
    dry_run: bool = False

    @property
    def blocking(self) -> tuple[GateFinding, ...]:
        """The findings nothing accepted: a dry run with any would not publish."""
        return tuple(f for f in self.findings if f.accepted_by is None)

    @property
    def forced(self) -> tuple[str, ...]:
        """The messages of the findings published under ``--force``."""
        return tuple(f.message for f in self.findings if f.accepted_by == "--force")


class _Registered(Provider):
    """A registered adapter built on its first fetch, so that building it happens under the
    refresh lock and a failure to build is that provider's failure, not the whole refresh's."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._built: Provider | None = None

    def fetch(self, regions: Sequence[str]) -> FetchResult:
        if self._built is None:
            self._built = get_provider(self.name)
        return self._built.fetch(regions)


def live_providers(names: Iterable[str]) -> dict[str, Provider]:
    """The registered adapters for ``names``, each built with its live clients when first used."""
    return {name: _Registered(name) for name in names}


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
        _check_region_form(provider, region.strip())
        if region not in chosen[provider]:
            chosen[provider].append(region.strip())
    return {n: tuple(r) if r else DEFAULT_REGIONS.get(n, ()) for n, r in chosen.items()}


def _check_region_form(provider: str, region: str) -> None:
    """Refuse a region not written as ``provider`` writes its regions (:data:`REGION_FORMS`),
    naming the provider whose form it has where one has it."""
    import re

    from planner.providers import REGION_FORMS

    form = REGION_FORMS.get(provider)
    if form is None or re.fullmatch(form[0], region):
        return
    if re.fullmatch(form[0], region.lower()):
        raise ConfigError(
            f"{region!r}: {provider}'s region names are lower case",
            key_path="regions",
            hint=f"write {region.lower()}",
        )
    others = [
        name
        for name, (pattern, _) in REGION_FORMS.items()
        if name != provider and re.fullmatch(pattern, region)
    ]
    looks = f" (it has the form of {' and '.join(others)} regions)" if others else ""
    raise ConfigError(
        f"{region!r} is not a region name of {provider}{looks}",
        key_path="regions",
        hint=f"{provider} writes its regions like {form[1]} (planner offers --provider "
        f"{provider} lists the regions it has prices for)",
    )


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
    """Each provider's offers after the merge (and before), its manifest note, the findings."""

    frames: dict[str, pd.DataFrame]
    previous: dict[str, pd.DataFrame]
    notes: dict[str, str]
    findings: list[GateFinding]


def refresh_user_prices(
    providers: Sequence[str] = (),
    regions: Sequence[str] = (),
    *,
    allow_partial: bool = False,
    force: bool = False,
    accept_changes: Sequence[str] = (),
    dry_run: bool = False,
    on_progress: Progress | None = None,
) -> RefreshResult:
    """``planner prices refresh``: the registered adapters of ``providers`` (names, or ``all``)
    for ``regions``, published in the user's snapshot folder and gated against the newest
    snapshot there or in the bundle.  See :func:`refresh_prices` for the rest."""
    plan = plan_regions(providers, regions)
    check_environment(plan)  # a mistyped setting is bad input (exit 2), not every region's failure
    return refresh_prices(
        live_providers(plan),
        plan,
        root=user_snapshot_root(),
        previous_roots=default_roots(),
        allow_partial=allow_partial,
        force=force,
        accept=accept_changes,
        dry_run=dry_run,
        on_progress=on_progress,
    )


def refresh_prices(
    providers: Mapping[str, Provider],
    regions: Mapping[str, Sequence[str]],
    *,
    root: Path,
    previous_roots: Sequence[Path] | None = None,
    allow_partial: bool = False,
    force: bool = False,
    accept: Sequence[str] = (),
    dry_run: bool = False,
    gates: Gates = DEFAULT_GATES,
    clock: Clock = utc_now,
    on_progress: Progress | None = None,
) -> RefreshResult:
    """Fetch, check and publish a new snapshot of ``providers`` into ``root``.

    ``previous_roots`` are searched for each provider's previous offers (default: ``root`` only;
    the CLI passes the user root and the bundled snapshot).  ``accept`` are ``--accept-changes``
    patterns (:mod:`planner.catalog.gates`); ``force`` accepts every finding.  Raises
    SnapshotError when ``root`` cannot be written (before fetching anything) or a gate finding is
    not accepted, ProviderError when a region failed and ``allow_partial`` is off; in every case
    nothing is published.  ``dry_run`` raises neither for the gates nor writes anything: the
    result says what would be published.
    """
    patterns = accept_patterns(accept, [*PROVIDERS, *providers])
    search = list(previous_roots) if previous_roots is not None else [root]
    if dry_run:
        fetched = _fetch_all(providers, regions, on_progress)
        _refuse_incomplete(fetched, allow_partial)
        checked = _merge_and_gate(fetched, search, gates, clock)
        return _result(None, fetched, checked, patterns, force, dry_run=True)
    ensure_writable(root)  # before minutes of fetching, not after
    with locked(root, REFRESH_LOCK):
        remove_leftovers(root)
        fetched = _fetch_all(providers, regions, on_progress)
        _refuse_incomplete(fetched, allow_partial)
        checked = _merge_and_gate(fetched, search, gates, clock)
        judged = _result(None, fetched, checked, patterns, force, dry_run=False)
        if judged.blocking:
            blocking = judged.blocking
            raise SnapshotError(
                f"sanity gates failed, nothing published ({len(blocking)} change(s)): "
                + summarise(blocking),
                hint="check the provider's API output; if the changes are real, accept them with"
                " --accept-changes and the ids above (accept_changes=(...) in Python; globs such"
                " as 'aws:*:p5.*' accept more; `planner prices refresh --dry-run`, dry_run=True,"
                " lists every change)",
            )
        now = clock()
        snapshot_id = _unique_id(root, f"{now:%Y-%m-%dT%H%M%SZ}-{'-'.join(sorted(checked.frames))}")
        path = write_snapshot(
            root,
            checked.frames,
            snapshot_id=snapshot_id,
            provider_notes=checked.notes,
            notes=_snapshot_note(judged.findings),
            now=now,
        )
    return _result(path, fetched, checked, patterns, force, dry_run=False)


def _result(
    path: Path | None,
    fetched: _Fetched,
    checked: _Checked,
    patterns: Sequence[AcceptPattern],
    force: bool,
    *,
    dry_run: bool,
) -> RefreshResult:
    findings, unused = judge(checked.findings, patterns, force=force)
    changes: list[dict[str, Any]] = []
    if dry_run:
        for name, frame in checked.frames.items():
            before = checked.previous.get(name, empty_offers())
            changes += diff_offers(before, frame)
    return RefreshResult(
        snapshot=path,
        rows={name: len(df) for name, df in checked.frames.items()},
        fetched_regions={name: tuple(r) for name, r in fetched.regions.items()},
        failures=fetched.failures,
        unmapped=fetched.unmapped,
        findings=tuple(findings),
        unused_accepts=tuple(unused),
        changes=tuple(changes),
        dry_run=dry_run,
    )


def _snapshot_note(findings: Sequence[GateFinding]) -> str:
    """The manifest's note: what made it, and the gate findings published on purpose."""
    note = "planner prices refresh"
    by: dict[str, int] = {}
    for f in findings:
        if f.accepted_by is not None:
            by[f.accepted_by] = by.get(f.accepted_by, 0) + 1
    if not by:
        return note
    if "--force" in by:
        note += " --force"
    accepted = [f for f in findings if f.accepted_by is not None]
    shown = "; ".join(f"{f.message.split('; accept with')[0]}" for f in accepted[:5])
    more = f"; and {len(accepted) - 5} more" if len(accepted) > 5 else ""
    patterns = ", ".join(f"{n} by {p}" for p, n in by.items())
    return f"{note}; accepted {len(accepted)} gate finding(s) ({patterns}): {shown}{more}"


def _fetch_all(
    providers: Mapping[str, Provider],
    regions: Mapping[str, Sequence[str]],
    on_progress: Progress | None,
) -> _Fetched:
    """Every (provider, region), one at a time; a failed region is collected, not fatal.

    Whatever an adapter raises is that region's failure: a PlannerError with its message and hint,
    anything else (a bug in the adapter) by its type, with the traceback in the debug log.
    """
    offers: dict[str, list[pd.DataFrame]] = {}
    ok_regions: dict[str, list[str]] = {}
    failures: list[RegionFailure] = []
    unmapped: list[Unmapped] = []
    total = sum(len(regions[name]) for name in providers)
    done = 0
    for name, provider in providers.items():
        for region in regions[name]:
            log.info("fetching %s %s", name, region)
            try:
                result = provider.fetch([region])
            except PlannerError as e:
                failures.append(RegionFailure(name, region, e.message, e.hint))
                log.warning("%s %s failed: %s", name, region, e.message)
            except Exception as e:  # a bug in one adapter must not hide the others' results
                log.debug("%s %s: unexpected error in the adapter", name, region, exc_info=True)
                failures.append(
                    RegionFailure(
                        name,
                        region,
                        f"unexpected {type(e).__name__} in the {name} adapter",
                        hint=f"this is a bug: `planner -vv prices refresh --provider {name}`"
                        " shows the traceback to report",
                    )
                )
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
    before: dict[str, pd.DataFrame] = {}
    notes: dict[str, str] = {}
    findings: list[GateFinding] = []
    for name, parts in fetched.offers.items():
        new = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
        previous, previous_id = _previous_offers(name, search)
        refreshed = fetched.regions[name]
        findings += check_gates(
            previous if previous is not None else empty_offers(),
            new,
            refreshed,
            gates,
            provider=name,
        )
        if previous is not None:
            before[name] = previous
            new = _merge(previous, new, refreshed)
        note = f"fetched {', '.join(refreshed)} on {clock().date().isoformat()}"
        missing = [f.region for f in fetched.failures if f.provider == name]
        if missing:
            note += f"; FAILED {', '.join(missing)} (previous rows kept)"
        if previous_id:
            note += f"; other regions carried over from {previous_id}"
        frames[name] = new
        notes[name] = note
    return _Checked(frames, before, notes, findings)


# ---------------------------------------------------------------- status, diff, history


def prices_status(
    roots: Sequence[Path], *, max_age_days: int, today: date | None = None
) -> list[dict[str, Any]]:
    """One record per provider: its newest snapshot, as-of dates, age, rows, source, stale or not,
    and what the snapshot says about them: ``as_of_basis`` (fetched or estimated), the provider's
    ``notes`` and the snapshot's own (``snapshot_notes``); a stale provider's ``refresh`` advice.

    ``as_of`` is the oldest row's date (the age and staleness follow it), ``as_of_newest`` the
    newest: they differ after a refresh of some regions carried the others over.
    """

    records = []
    chosen, loaded = load_newest(roots)  # what planning will use: corrupt snapshots are skipped
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
                "as_of_basis": snap.entry.as_of_basis,
                "notes": snap.entry.notes,
                "snapshot_notes": loaded[snap.path].manifest.notes,
                "refresh": refresh_advice(provider) if age > max_age_days else None,
            }
        )
    return records


def find_snapshot(ref: str | Path, roots: Sequence[Path], *, key_path: str | None = None) -> Path:
    """A snapshot by directory path or by id in any of ``roots``; ``key_path`` names the argument
    in an error (``old``, ``new``)."""
    path = Path(ref)
    try:
        if path.is_dir():
            return path
        is_file = path.exists()
    except OSError:  # a name too long to be a path (or one under a folder it cannot read): an id
        is_file = False
    known = {p.name: p for root in roots for p in list_snapshots(root)}
    if str(ref) in known:
        return known[str(ref)]
    ids = ", ".join(sorted(known)[:6]) or "none stored yet"
    if is_file:
        # was "unknown snapshot 'offers.csv'" and the ids alone, for a file that exists
        raise ConfigError(
            f"{shown_path(ref)} is a file; a snapshot is a folder (its manifest.json and "
            "offers-*.csv)",
            key_path=key_path,
            hint=(
                f"give its folder, {shown_path(path.parent)}"
                if path.name == "manifest.json" or path.name.startswith("offers")
                else "give a snapshot's folder"
            )
            + f", or an id from `planner prices status`: {ids}",
        )
    if isinstance(ref, Path) or "/" in str(ref) or "\\" in str(ref):
        # a path that names nothing: was "unknown snapshot" and the ids, as if a name were misspelt
        raise ConfigError(
            f"no such snapshot folder {shown_path(ref)!r}",
            key_path=key_path,
            hint=f"check the path, or give a snapshot id from `planner prices status`: {ids}",
        )
    raise UnknownNameError("snapshot", shown_path(ref), known, key_path=key_path)


# The columns of :func:`diff_offers`'s records, for a table of no changes (a CSV keeps its header).
DIFF_COLUMNS = (*KEY_COLUMNS, "change", "price", "old", "new", "change_pct")


def diff_offers(
    old: pd.DataFrame, new: pd.DataFrame, *, threshold: float = 0.05
) -> list[dict[str, Any]]:
    """Offers added, removed, or whose price moved by more than ``threshold`` (a share, 0.05 = 5%),
    appeared or vanished (``old`` or ``new`` None)."""
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
            if pd.isna(before) and pd.isna(after):
                continue
            if pd.isna(before) or pd.isna(after):  # a price that appeared or vanished
                changes.append(
                    {
                        **key,
                        "change": "price",
                        "price": option.value,
                        "old": None if pd.isna(before) else float(before),
                        "new": None if pd.isna(after) else float(after),
                        "change_pct": None,
                    }
                )
                continue
            if before <= 0:
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
    if isinstance(region, str) and not region.strip():
        # was "no snapshot lists p4d.24xlarge in region ''", as if a blank were a region
        raise ConfigError(
            "region is blank",
            key_path="region",
            hint="name a region (e.g. us-east-1), or leave it out for every region",
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
        same = [t for t in listed_types if t.lower() == instance_type.strip().lower()]
        if instance_type not in listed_types and len(same) == 1:
            # P5.48XLARGE: the type in another case (was "unknown instance type", did you mean
            # p5.48xlarge?), as GPU, region and provider names are read
            return price_history(roots, instance_type=same[0], region=region)
        if instance_type not in listed_types:
            raise UnknownNameError(
                "instance type", instance_type, listed_types, key_path="instance_type"
            )
        near = [r for r in listed_regions if r.lower() == str(region).strip().lower()]
        if region not in listed_regions and len(near) == 1:  # US-EAST-1
            return price_history(roots, instance_type=instance_type, region=near[0])
        close = suggest(str(region), sorted(listed_regions))
        raise ConfigError(
            f"no snapshot lists {instance_type} in region {region!r}",
            key_path="region",
            hint=f"regions where it is listed: {', '.join(close or sorted(listed_regions)[:12])}"
            f" ({len(listed_regions)} in all)",
        )
    return sorted(records, key=lambda r: (r["as_of"], r["created_at"], r["provider"], r["region"]))
