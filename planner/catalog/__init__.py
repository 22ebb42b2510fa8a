"""The offer catalog: snapshots on disk -> one validated offers table, plus pure queries over it.

``load_offer_book`` picks, per provider, the newest good snapshot among the user's refreshed
snapshots and the bundled one, then adds private price lists (``--offers FILE``), whose rows
replace snapshot rows with the same (provider, region, instance_type) key.

Each part of the book (a provider's snapshot rows, or one provider's rows of a private file) spans
a range of as-of dates: a refresh of one region carries the others over with their older dates.
A part's ``as_of`` is its oldest date, so it is stale as soon as any of its rows is; the warning
then says how many rows are that old.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from planner import clock
from planner.catalog.store import (
    ProviderEntry,
    Snapshot,
    default_roots,
    load_newest,
    load_snapshot,
    read_offers_csv,
    snapshot_age_days,
)
from planner.catalog.store import (
    user_snapshot_root as user_snapshot_root,  # re-exported: where refreshes publish
)
from planner.config.yamlfile import names_a_path
from planner.errors import (
    ConfigError,
    OfferValidationError,
    SnapshotError,
    checked_arguments,
    checked_fields,
    shown_path,
    suggest,
)
from planner.schema import COLUMN_NAMES, KEY_COLUMNS, validate_offers
from planner.units import DEFAULT_MAX_AGE_DAYS

log = logging.getLogger(__name__)


def _date_range(as_of: str, as_of_newest: str) -> str:
    return as_of if as_of_newest == as_of else f"{as_of} to {as_of_newest}"


def as_of_range(part: Mapping[str, Any]) -> str:
    """A part's as-of dates for display, from its record (:meth:`SnapshotSource.to_dict`, or a
    quote's JSON): ``2025-06-01``, or ``2024-12-02 to 2026-11-21``."""
    return _date_range(part["as_of"], part.get("as_of_newest") or part["as_of"])


@dataclass(frozen=True)
class SnapshotSource:
    """Where one part of an offer book came from: a provider's rows of one snapshot, or one
    provider's rows of a private price file (``snapshot`` None).

    A refresh of some regions carries the others over with their older dates, so a part spans a
    range: ``as_of`` is its oldest row's date (``age_days`` counts from it, so the part is stale as
    soon as any row is), ``as_of_newest`` its newest, ``rows_by_as_of`` the rows per date.
    ``as_of_basis`` says how the dates are known: ``fetched``, ``estimated`` or ``private``.
    """

    provider: str
    as_of: str
    as_of_newest: str
    as_of_basis: str
    age_days: int
    rows: int
    rows_by_as_of: tuple[tuple[str, int], ...]  # (date, rows), oldest first
    source: str
    snapshot: str | None

    @property
    def estimated(self) -> bool:
        """The dates are estimates (a bundled catalog without capture dates), not fetch dates."""
        return self.as_of_basis == "estimated"

    @property
    def as_of_range(self) -> str:
        """The part's as-of dates for display: ``2025-06-01``, or ``2024-12-02 to 2026-11-21``."""
        return _date_range(self.as_of, self.as_of_newest or self.as_of)

    def to_dict(self) -> dict[str, Any]:
        """The part as a JSON record (a quote's ``snapshot.parts``), keys in this order."""
        return {
            "provider": self.provider,
            "as_of": self.as_of,
            "as_of_newest": self.as_of_newest,
            "as_of_basis": self.as_of_basis,
            "age_days": self.age_days,
            "rows": self.rows,
            "rows_by_as_of": dict(self.rows_by_as_of),
            "source": self.source,
            "snapshot": self.snapshot,
        }


@checked_fields
@dataclass(frozen=True)
class OfferBook:
    """The offers table plus where every part of it came from (``sources``, one a part).

    ``today`` is the date the parts' ages were computed against.
    """

    offers: pd.DataFrame = field(repr=False)
    sources: tuple[SnapshotSource, ...]
    today: date = field(default_factory=lambda: clock.utc_today())

    @property
    def as_of(self) -> str:
        """The oldest as-of date of any part (what a report should print)."""
        dates = [s.as_of for s in self.sources if s.as_of]
        return min(dates) if dates else ""

    @property
    def as_of_newest(self) -> str:
        """The newest as-of date of any part."""
        dates = [s.as_of_newest or s.as_of for s in self.sources if s.as_of]
        return max(dates) if dates else ""

    @property
    def source_text(self) -> str:
        return "; ".join(f"{s.provider}: {s.source}" for s in self.sources)

    def sources_of(self, providers: Sequence[str] = ()) -> tuple[SnapshotSource, ...]:
        """The parts of ``providers`` (any case), every part where none is named: what a quote or
        comparison asked of aws alone was priced from, and is dated and warned by."""
        wanted = {str(p).strip().lower() for p in providers}
        return tuple(s for s in self.sources if not wanted or s.provider in wanted)

    def stale_warnings(
        self, max_age_days: int = DEFAULT_MAX_AGE_DAYS, providers: Sequence[str] = ()
    ) -> list[str]:
        """A warning per part whose oldest row is older than ``max_age_days``; only the parts of
        ``providers`` where given (a quote asked of aws alone was warned about azure's prices,
        which it never used)."""
        return [
            self._stale_warning(s, max_age_days)
            if s.age_days >= 0
            # a manifest dated after today (a hand edit, or a clock set back) says nothing of
            # the prices' age (was: a negative age and no warning for 2024 rows in it)
            else (
                f"{s.provider} prices are dated {s.as_of}, after today ({self.today}): the "
                "snapshot's dates cannot be trusted (a hand-edited manifest, or this machine's "
                f"clock); {_advice(s)}"
            )
            for s in self.sources_of(providers)
            if s.age_days > max_age_days or s.age_days < -1
        ]

    def _stale_warning(self, part: SnapshotSource, max_age_days: int) -> str:
        provider = part.provider
        refresh = f"; {_advice(part)}"
        if (part.as_of_newest or part.as_of) == part.as_of:
            basis = ", estimated" if part.estimated else ""
            return (
                f"{provider} prices are {part.age_days} days old (as of {part.as_of}{basis})"
                + refresh
            )
        by_date = dict(part.rows_by_as_of)
        old = sum(n for d, n in by_date.items() if snapshot_age_days(d, self.today) > max_age_days)
        total = sum(by_date.values()) or part.rows
        basis = " (estimated)" if part.estimated else ""
        return (
            f"{provider} prices as of {part.as_of_range}{basis}; {old} of {total} rows older"
            f" than {max_age_days} days" + refresh
        )


def _advice(part: SnapshotSource) -> str:
    """What brings ``part``'s prices up to date: the user's own price list is theirs to update
    (was: "its prices come only with a new planner release" of a file no release holds)."""
    if part.as_of_basis == "private":
        return (
            f"they come from your price list {shown_path(part.source)}: update its prices and "
            "its as_of column"
        )
    from planner.providers import refresh_advice  # reads the adapter registry

    return refresh_advice(part.provider)


def _part(
    provider: str,
    dates: Mapping[str, int],
    *,
    as_of: str,
    as_of_newest: str,
    basis: str,
    rows: int,
    source: str,
    snapshot: str | None,
    today: date,
) -> SnapshotSource:
    """The provenance record of one part of a book (see :class:`SnapshotSource`); ``dates``: its
    rows per as-of date."""
    return SnapshotSource(
        provider=provider,
        as_of=as_of,
        as_of_newest=as_of_newest,
        as_of_basis=basis,
        age_days=snapshot_age_days(as_of, today),
        rows=rows,
        rows_by_as_of=tuple((str(d), int(n)) for d, n in sorted(dates.items())),
        source=source,
        snapshot=snapshot,
    )


def _rows_by_as_of(offers: pd.DataFrame) -> dict[str, Counter[str]]:
    """Each provider's rows per as-of date in ``offers``, in one pass over the two columns (a
    mask, a selection and a ``value_counts`` per provider cost a quote two milliseconds)."""
    counts: dict[str, Counter[str]] = {}
    for provider, as_of in zip(
        offers["provider"].tolist(), offers["as_of"].astype(str).tolist(), strict=True
    ):
        counts.setdefault(provider, Counter())[as_of] += 1
    return counts


def _snapshot_part(
    snap: Snapshot, entry: ProviderEntry, today: date, dates: Mapping[str, int]
) -> SnapshotSource:
    """The provenance record of ``entry``'s part of ``snap``; ``dates``: that part's rows per
    as-of date (:func:`_rows_by_as_of`)."""
    return _part(
        entry.provider,
        dates,
        as_of=entry.as_of,
        as_of_newest=entry.as_of_newest,
        basis=entry.as_of_basis,
        rows=entry.rows,
        source=entry.source,
        snapshot=snap.path.name,
        today=today,
    )


def checked_today(today: Any) -> date:
    """``today`` as a date: None for the clock's, a datetime's date, an ISO date's text; anything
    else a ConfigError (was: TypeError deep in the age arithmetic)."""
    if today is None:
        return clock.utc_today()
    if isinstance(today, datetime):
        return today.date()
    if isinstance(today, date):
        return today
    if isinstance(today, str):
        try:
            return date.fromisoformat(today.strip())
        except ValueError:
            pass
    raise ConfigError(
        f"expected a date, got {today!r}",
        key_path="today",
        hint="e.g. today=datetime.date(2026, 11, 27) or '2026-11-27', or leave it out",
    )


def _checked_roots(roots: Any) -> list[Path] | None:
    """``roots`` as folders: None for the default ones, one folder (text or a path) as a list of
    one, an empty list for none (private price lists alone); an entry that is no path a
    ConfigError (was: AttributeError on a string)."""
    if roots is None:
        return None
    if isinstance(roots, (str, os.PathLike)):
        roots = [roots]
    if not isinstance(roots, (list, tuple)) or not all(
        isinstance(r, (str, os.PathLike)) and str(r).strip() for r in roots
    ):
        raise ConfigError(
            f"expected a list of folders, got {roots!r}",
            key_path="roots",
            hint="e.g. roots=['/data/price-snapshots'], or leave it out for the default folders",
        )
    return [Path(r) for r in roots]  # none at all: private price lists alone


@checked_arguments
def load_offer_book(
    offers_files: Sequence[str | Path] = (),
    *,
    snapshot_dir: str | Path | None = None,
    roots: Sequence[Path] | None = None,
    today: date | None = None,
) -> OfferBook:
    """Load offers: newest snapshot per provider (or exactly ``snapshot_dir``) plus private CSVs."""
    offers_files = _offers_paths(offers_files)
    if snapshot_dir is not None and not isinstance(snapshot_dir, (str, os.PathLike)):
        raise ConfigError(
            f"expected a folder (str or pathlib.Path), got {snapshot_dir!r}",
            key_path="snapshot_dir",
            hint="e.g. snapshot_dir='prices/', or leave it out for the newest snapshots",
        )
    if snapshot_dir is not None and not str(snapshot_dir).strip():
        # was: read as the current folder, "`.`: no readable manifest.json"
        raise ConfigError(
            "snapshot_dir is blank",
            key_path="snapshot_dir",
            hint="name a snapshot folder, or leave it out (None) for the newest snapshots",
        )
    today = checked_today(today)
    roots = _checked_roots(roots)
    if snapshot_dir is not None:
        folder = Path(snapshot_dir)
        if (
            not names_a_path(folder)
            and os.sep not in str(snapshot_dir)
            and "/" not in str(snapshot_dir)
        ):
            # an id as `planner prices status` shows it (reference-2026-11-25), as the CLI's
            # --snapshot takes: was "no readable manifest.json ... not a price snapshot folder"
            from planner.catalog.refresh import find_snapshot

            folder = find_snapshot(
                str(snapshot_dir),
                roots if roots is not None else default_roots(),
                key_path="snapshot_dir",
            )
        snap = load_snapshot(folder)
        frames = [snap.offers]
        loaded = [(snap, e) for e in snap.manifest.providers]
    else:
        chosen, snaps = load_newest(roots if roots is not None else default_roots())
        if not chosen and not offers_files and roots is not None:
            # the caller's folders: their input, not a broken install
            raise ConfigError(
                f"no price snapshot in {', '.join(str(r) for r in roots)}"
                if roots
                else "roots is empty and no offers_files are given: no prices to load",
                key_path="roots",
                hint="a root holds snapshot folders (each with a manifest.json), as "
                "`planner prices status` lists them; or leave roots out for the default folders",
            )
        if not chosen and not offers_files:
            raise SnapshotError(
                "no price snapshot found",
                hint="reinstall planner (the bundled snapshot is missing) or run `planner prices refresh`",
            )
        frames = [s.offers for s in snaps.values()]
        loaded = [(snaps[ps.path], ps.entry) for _, ps in sorted(chosen.items())]
    snaps_by_path = {snap.path: snap for snap, _ in loaded}
    dates = {path: _rows_by_as_of(snap.offers) for path, snap in snaps_by_path.items()}
    sources = [
        _snapshot_part(snap, entry, today, dates[snap.path].get(entry.provider, Counter()))
        for snap, entry in loaded
    ]
    priced_in: dict[tuple[str, ...], str | Path] = {}  # a private offer's key -> its file
    public = [f for f in frames if len(f)]  # the snapshots' rows, before any price list
    for file in offers_files:
        private = read_offers_csv(Path(file))
        _refuse_priced_twice(private, file, priced_in)
        _warn_per_gpu_prices(private, public, file)
        _warn_unlisted_regions(private, public, file)
        _warn_changed_hardware(private, public, file)
        keys = pd.MultiIndex.from_frame(private[list(KEY_COLUMNS)])
        frames = [f[~pd.MultiIndex.from_frame(f[list(KEY_COLUMNS)]).isin(keys)] for f in frames]
        frames.append(private)
        for name, rows in private.groupby("provider"):
            sources.append(
                _part(
                    str(name),
                    Counter(rows["as_of"].astype(str).tolist()),
                    as_of=str(rows["as_of"].min()),
                    as_of_newest=str(rows["as_of"].max()),
                    basis="private",
                    rows=len(rows),
                    source=f"{file}",
                    snapshot=None,
                    today=today,
                )
            )
    parts = [f for f in frames if len(f)]
    # every part was validated when it was read; the combination needs no second pass (and one
    # part numbered from 0, the bundled snapshot on its own, is already what concat would copy)
    if len(parts) == 1 and parts[0].index.equals(pd.RangeIndex(len(parts[0]))):
        offers = parts[0]
    elif parts:
        offers = pd.concat(parts, ignore_index=True)
    else:
        offers = validate_offers(pd.DataFrame(columns=list(COLUMN_NAMES)))
    return OfferBook(offers=offers, sources=tuple(sources), today=today)


def _warn_unlisted_regions(
    private: pd.DataFrame, public: Sequence[pd.DataFrame], file: str | Path
) -> None:
    """A warning for a price list's row in a region the snapshots do not list for a provider they
    price, naming the nearest they do (was: ``lambda,us-eest-1`` became a region Lambda does not
    have and was recommended, while the row it meant to replace stayed).  A warning, not an
    error: a provider opens regions the bundled prices may not list yet."""
    if not public:
        return
    rows = pd.concat([f[["provider", "region"]] for f in public], ignore_index=True)
    known = rows.groupby("provider")["region"].agg(lambda r: sorted(set(r)))
    seen: set[tuple[str, str]] = set()
    for n, (provider, region) in enumerate(
        zip(private["provider"], private["region"], strict=True)
    ):
        regions = known.get(provider)
        if regions is None or region in regions or (provider, region) in seen:
            continue
        seen.add((provider, region))
        near = suggest(str(region), regions, n=2)
        log.warning(
            "%s: row %d: %s has no region %r in the bundled prices%s; the row is priced as a "
            "region of its own, and replaces no %s offer",
            shown_path(file),
            n + 2,
            provider,
            region,
            f" (did you mean {' or '.join(near)}?)" if near else "",
            provider,
        )


def _warn_per_gpu_prices(
    private: pd.DataFrame, public: Sequence[pd.DataFrame], file: str | Path
) -> None:
    """A warning for a price list's multi-GPU row that puts each GPU at under half the snapshots'
    cheapest on-demand price for it: most often a price per GPU typed into the per-instance column
    (was: 8 x H100 at 3.99 USD an hour quoted at 0.50 USD a GPU-hour, without a word; and at 1.49,
    under half the cheapest itself, still without one).  Where the row's price is itself a
    plausible price for one GPU (a quarter to four times the cheapest) the warning offers it times
    the GPUs."""
    column = "price_on_demand_usd_per_hour"
    if not public or column not in private:
        return
    rows = pd.concat([f[["gpu_model", "gpu_count", column]] for f in public], ignore_index=True)
    per_gpu = (rows[column] / rows["gpu_count"].clip(lower=1)).groupby(rows["gpu_model"]).min()
    for n, (_, row) in enumerate(private.iterrows()):
        gpus, price = int(row["gpu_count"]), row[column]
        cheapest = per_gpu.get(row["gpu_model"])
        if gpus < 2 or pd.isna(price) or cheapest is None or not cheapest > 0:
            continue
        if price / gpus >= cheapest / 2:
            continue
        if cheapest / 4 <= price <= cheapest * 4:
            fix = (
                f"prices are per instance-hour: did you mean {price * gpus:g} ({gpus} x {price:g})?"
            )
        else:
            fix = "prices are per instance-hour: check the figure"
        log.warning(
            "%s: row %d: %d x %s at %g USD an hour is %.3g USD a GPU-hour, under half the "
            "cheapest in the bundled prices (%.3g); %s",
            shown_path(file),
            n + 2,
            gpus,
            row["gpu_model"],
            price,
            price / gpus,
            cheapest,
            fix,
        )


# The columns of an offer that describe its hardware: a price list re-prices an instance type,
# and the provider's instance has the GPUs and links it has.
_HARDWARE_COLUMNS = ("gpu_model", "gpu_count", "interconnect")


def _warn_changed_hardware(
    private: pd.DataFrame, public: Sequence[pd.DataFrame], file: str | Path
) -> None:
    """A warning for a price list's row that replaces a snapshot's offer (same provider, region
    and instance type) with other hardware: another GPU, GPU count or link, most often a slip
    copying the row (was: p5.48xlarge listed and quoted with 4 GPUs, without a word)."""
    if not public:
        return
    columns = [*KEY_COLUMNS, *_HARDWARE_COLUMNS]
    known = pd.concat([f[columns] for f in public], ignore_index=True)
    known = known.drop_duplicates(subset=list(KEY_COLUMNS)).set_index(list(KEY_COLUMNS))
    for n, row in enumerate(private[columns].itertuples(index=False)):
        key = tuple(getattr(row, c) for c in KEY_COLUMNS)
        if key not in known.index:
            continue
        before = known.loc[key]
        changed = [c for c in _HARDWARE_COLUMNS if before[c] != getattr(row, c)]
        if not changed:
            continue
        log.warning(
            "%s: row %d (%s): the bundled offer has %d x %s on %s, this row %d x %s on %s; a "
            "price list re-prices an instance, whose hardware is the provider's: check %s",
            shown_path(file),
            n + 2,
            " ".join(str(k) for k in key),
            int(str(before["gpu_count"])),
            before["gpu_model"],
            before["interconnect"],
            int(str(row.gpu_count)),
            row.gpu_model,
            row.interconnect,
            " and ".join(changed),
        )


def _refuse_priced_twice(
    private: pd.DataFrame, file: str | Path, priced_in: dict[tuple[str, ...], str | Path]
) -> None:
    """An error for an offer a price list read before also prices (the same list given twice, or
    two lists of one offer): was the later file's row kept without a word, its price winning
    over the other's.  ``priced_in`` collects the keys read so far."""
    keys = [tuple(str(v) for v in k) for k in private[list(KEY_COLUMNS)].itertuples(index=False)]
    for key in keys:
        earlier = priced_in.get(key)
        if earlier is None:
            continue
        if _same_file(earlier, file):
            raise ConfigError(
                f"the price list {shown_path(file)} is given twice",
                key_path="offers_files",
                hint="give each price list once",
            )
        raise OfferValidationError(
            f"offer {'/'.join(key)} is priced in {shown_path(earlier)} too; which price holds is "
            "not said",
            file=str(file),
            hint="keep each offer in one price list (a price list replaces the snapshot's row "
            "of an offer, not another list's)",
        )
    priced_in.update(dict.fromkeys(keys, file))


def _same_file(a: str | Path, b: str | Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a) == Path(b)


def _offers_paths(offers_files: object) -> tuple[str | Path, ...]:
    """Private price lists as a tuple of paths: one bare path is that file, not its letters."""
    if isinstance(offers_files, (str, os.PathLike)):
        offers_files = (offers_files,)
    if not isinstance(offers_files, (list, tuple, set, frozenset)):
        raise ConfigError(
            f"expected a path or a list of paths, got {offers_files!r}",
            key_path="offers_files",
            hint="e.g. offers_files=('prices.csv',)",
        )
    for item in offers_files:
        if not isinstance(item, (str, os.PathLike)) or not str(item).strip():
            raise ConfigError(
                f"expected paths of price lists (CSV), got {item!r}",
                key_path="offers_files",
                hint="e.g. offers_files=('prices.csv',)",
            )
    return tuple(offers_files)


@checked_arguments
def load_offers(
    offers_files: Sequence[str | Path] = (),
    snapshot_dir: str | Path | None = None,
) -> pd.DataFrame:
    """The offers table alone (see :func:`load_offer_book`)."""
    return load_offer_book(offers_files, snapshot_dir=snapshot_dir).offers
