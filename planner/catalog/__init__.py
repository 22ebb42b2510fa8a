"""The offer catalog: snapshots on disk -> one validated offers table, plus pure queries over it.

``load_offer_book`` picks, per provider, the newest good snapshot among the user's refreshed
snapshots and the bundled one, then adds private price lists (``--offers FILE``), whose rows
replace snapshot rows with the same (provider, region, instance_type) key.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import pandas as pd

from planner.catalog.store import (
    bundled_snapshot_root,
    load_snapshot,
    manifest_summary,
    newest_per_provider,
    read_offers_csv,
    snapshot_age_days,
)
from planner.errors import SnapshotError
from planner.schema import COLUMN_NAMES, KEY_COLUMNS, validate_offers

DEFAULT_MAX_AGE_DAYS = 90


def user_snapshot_root() -> Path:
    """Where ``planner prices refresh`` publishes snapshots (``$PLANNER_DATA_DIR`` overrides)."""
    override = os.environ.get("PLANNER_DATA_DIR")
    if override:
        return Path(override) / "snapshots"
    import platformdirs

    return Path(platformdirs.user_data_dir("planner")) / "snapshots"


def default_roots() -> tuple[Path, ...]:
    """Snapshot roots searched by default: the user's refreshed snapshots, then the bundled ones."""
    return (user_snapshot_root(), bundled_snapshot_root())


@dataclass(frozen=True)
class OfferBook:
    """The offers table plus where every part of it came from."""

    offers: pd.DataFrame = field(repr=False)
    sources: tuple[dict[str, Any], ...]

    @property
    def as_of(self) -> str:
        """The oldest as-of date of any part (what a report should print)."""
        dates = [s["as_of"] for s in self.sources if s.get("as_of")]
        return min(dates) if dates else ""

    @property
    def source_text(self) -> str:
        return "; ".join(f"{s['provider']}: {s['source']}" for s in self.sources)

    def stale_warnings(self, max_age_days: int = DEFAULT_MAX_AGE_DAYS) -> list[str]:
        """A warning per part older than ``max_age_days``."""
        return [
            f"{s['provider']} prices are {s['age_days']} days old (as of {s['as_of']}"
            + (", estimated" if s.get("as_of_basis") == "estimated" else "")
            + f"); refresh with `planner prices refresh --provider {s['provider']}` before relying on them"
            for s in self.sources
            if s.get("age_days") is not None and s["age_days"] > max_age_days
        ]


def load_offer_book(
    offers_files: Sequence[str | Path] = (),
    *,
    snapshot_dir: str | Path | None = None,
    roots: Sequence[Path] | None = None,
    today: date | None = None,
) -> OfferBook:
    """Load offers: newest snapshot per provider (or exactly ``snapshot_dir``) plus private CSVs."""
    if snapshot_dir is not None:
        snap = load_snapshot(Path(snapshot_dir))
        frames = [snap.offers]
        sources = [
            {
                "provider": e.provider,
                "as_of": e.as_of,
                "as_of_basis": e.as_of_basis,
                "age_days": snapshot_age_days(e.as_of, today),
                "rows": e.rows,
                "source": e.source,
                "snapshot": snap.path.name,
            }
            for e in snap.manifest.providers
        ]
    else:
        chosen = newest_per_provider(roots if roots is not None else default_roots())
        if not chosen and not offers_files:
            raise SnapshotError(
                "no price snapshot found",
                hint="reinstall planner (the bundled snapshot is missing) or run `planner prices refresh`",
            )
        frames = []
        by_path: dict[Path, list[str]] = {}
        for provider, ps in chosen.items():
            by_path.setdefault(ps.path, []).append(provider)
        for path, providers in by_path.items():
            frames.append(load_snapshot(path, providers=providers).offers)
        sources = manifest_summary(chosen, today)
    for file in offers_files:
        private = read_offers_csv(Path(file))
        keys = pd.MultiIndex.from_frame(private[list(KEY_COLUMNS)])
        frames = [f[~pd.MultiIndex.from_frame(f[list(KEY_COLUMNS)]).isin(keys)] for f in frames]
        frames.append(private)
        for name, part in private.groupby("provider"):
            as_of = str(part["as_of"].min())
            sources.append(
                {
                    "provider": str(name),
                    "as_of": as_of,
                    "as_of_basis": "private",
                    "age_days": snapshot_age_days(as_of, today),
                    "rows": len(part),
                    "source": f"{file}",
                    "snapshot": None,
                }
            )
    parts = [f for f in frames if len(f)]
    # every part was validated when it was read; the combination needs no second pass
    offers = (
        pd.concat(parts, ignore_index=True)
        if parts
        else validate_offers(pd.DataFrame(columns=list(COLUMN_NAMES)))
    )
    return OfferBook(offers=offers, sources=tuple(sources))


def load_offers(
    offers_files: Sequence[str | Path] = (),
    snapshot_dir: str | Path | None = None,
) -> pd.DataFrame:
    """The offers table alone (see :func:`load_offer_book`)."""
    return load_offer_book(offers_files, snapshot_dir=snapshot_dir).offers
