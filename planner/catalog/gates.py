"""The sanity gates a refreshed price table must pass before it is published, and how a user
accepts the changes they object to.

Pure functions over DataFrames (no I/O).  :func:`check_gates` compares one provider's refreshed
offers with its previous ones and returns a :class:`GateFinding` per objection:

``zero-price``  a price that is <= 0 or rounds to 0 at :data:`PRICE_DECIMALS` (the optimizer
                would call the capacity free: "64 x T4 for $0.00");
``vanished``    a price column that had a value and now has none, for an instance still listed
                (every spot price gone is a broken fetch, not a market);
``moved``       a price that moved by more than ``Gates.max_price_factor`` either way;
``row-drop``    a region that lost more than ``Gates.max_row_drop_share`` of its offers;
``empty``       a provider whose refresh produced no offers at all.

Each finding has a change id (``aws:us-east-1:p5.48xlarge``, ``aws:us-east-1`` for a region,
``aws`` for a provider) that ``--accept-changes`` names.  An accept pattern is ``all`` or
``PROVIDER[:REGION[:INSTANCE_TYPE[:PRICE]]]``, each part a shell glob (``aws:*:p5.*``,
``aws:us-east-1:*:spot``); left-out parts match anything.  :func:`judge` marks what each
finding was accepted by.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import pandas as pd

from planner.errors import ConfigError, UnknownNameError
from planner.schema import KEY_COLUMNS

# Prices are compared at four decimals of a dollar per instance-hour (a hundredth of a cent): the
# public price lists quote GPU instances to at most that, and the cheapest GPU hour on offer is
# about five cents (a T4 spot, bundled snapshot).  A price that rounds to zero here is a parsing or
# unit slip, never a market.
PRICE_DECIMALS = 4

# The gated price columns and the short names an accept pattern may use for them.
PRICE_NAMES: dict[str, str] = {
    "price_on_demand_usd_per_hour": "on-demand",
    "price_spot_usd_per_hour": "spot",
    "price_spot_median_usd_per_hour": "spot-median",
    "price_reserved_1y_usd_per_hour": "reserved-1y",
    "price_reserved_3y_usd_per_hour": "reserved-3y",
    "price_savings_plan_1y_usd_per_hour": "savings-plan-1y",
    "price_savings_plan_3y_usd_per_hour": "savings-plan-3y",
}
ACCEPT_FLAG = "--accept-changes"
FORCE_FLAG = "--force"
ANY = "*"  # a finding's region, instance type or column when it is about more than one


@dataclass(frozen=True)
class Gates:
    """Sanity limits a refreshed provider must pass before it is published."""

    # A real catalog shrinks by a few retired types, not by half: a larger drop means a broken
    # fetch (a filter that matched too little, a page that came back empty).
    max_row_drop_share: float = 0.5
    # List prices move by tens of percent (AWS's June 2025 P5 cut was about 45%); a factor of 3
    # either way is a unit or parsing slip (per GPU vs per VM, term total vs hourly).
    max_price_factor: float = 3.0


DEFAULT_GATES = Gates()


@dataclass(frozen=True)
class GateFinding:
    """One change the gates object to; ``accepted_by`` is the pattern (or ``--force``) that let
    it through, None while it blocks publishing."""

    gate: str  # zero-price | vanished | moved | row-drop | empty
    provider: str
    region: str  # ANY: the provider as a whole
    instance_type: str  # ANY: a whole region
    column: str  # ANY: not about one price column
    old: float | None
    new: float | None
    detail: str  # what is wrong, in words
    accepted_by: str | None = None

    @property
    def change_id(self) -> str:
        """What ``--accept-changes`` names to accept this finding: ``aws:us-east-1:p5.48xlarge``."""
        parts = [self.provider, self.region, self.instance_type]
        while parts and parts[-1] == ANY:
            parts.pop()
        return ":".join(parts)

    @property
    def message(self) -> str:
        """``aws us-east-1 p5.48xlarge price_spot_usd_per_hour: vanished (was 30.5; ...); accept
        with --accept-changes aws:us-east-1:p5.48xlarge``"""
        where = " ".join(p for p in (self.provider, self.region, self.instance_type) if p != ANY)
        column = f" {self.column}" if self.column != ANY else ""
        return f"{where}{column}: {self.detail}; accept with {ACCEPT_FLAG} {self.change_id}"

    def to_dict(self) -> dict[str, object]:
        return {
            "gate": self.gate,
            "provider": self.provider,
            "region": None if self.region == ANY else self.region,
            "instance_type": None if self.instance_type == ANY else self.instance_type,
            "column": None if self.column == ANY else self.column,
            "old": self.old,
            "new": self.new,
            "detail": self.detail,
            "accept_with": f"{ACCEPT_FLAG} {self.change_id}",
            "accepted_by": self.accepted_by,
        }


def _price(value: float | None) -> str:
    return "none" if value is None else f"{value:.6g}"


def check_gates(
    previous: pd.DataFrame,
    new: pd.DataFrame,
    regions: Sequence[str],
    gates: Gates = DEFAULT_GATES,
    *,
    provider: str,
) -> list[GateFinding]:
    """What should stop publishing ``new`` over ``previous`` (both ``provider``'s offers).

    Compares only the refreshed ``regions``: rows elsewhere are carried over unchanged.  Every
    price of the refreshed rows is checked for zero, new rows included.
    """
    if new.empty:
        return [
            GateFinding(
                "empty", provider, ANY, ANY, ANY, None, None, "the refresh produced no offers"
            )
        ]
    before = previous[previous["region"].isin(regions)]
    after = new[new["region"].isin(regions)]
    findings = _row_drops(provider, before, after, regions, gates)
    findings += _zero_prices(provider, after)
    joined = before.merge(after, on=list(KEY_COLUMNS), suffixes=("_old", "_new"))
    findings += _vanished_and_moved(provider, joined, gates)
    return findings


def _row_drops(
    provider: str, before: pd.DataFrame, after: pd.DataFrame, regions: Sequence[str], gates: Gates
) -> list[GateFinding]:
    findings = []
    for region in regions:
        was = int((before["region"] == region).sum())
        now = int((after["region"] == region).sum())
        if was and now < (1 - gates.max_row_drop_share) * was:
            detail = (
                f"row count fell from {was} to {now} (more than {gates.max_row_drop_share:.0%})"
            )
            findings.append(GateFinding("row-drop", provider, region, ANY, ANY, was, now, detail))
    return findings


def _zero_prices(provider: str, after: pd.DataFrame) -> list[GateFinding]:
    findings = []
    for column in PRICE_NAMES:
        values = after[column]
        bad = after[values.notna() & (values.round(PRICE_DECIMALS) <= 0)]
        for row in bad.to_dict("records"):
            value = float(row[column])
            detail = f"new price {_price(value)} rounds to $0 at {PRICE_DECIMALS} decimals"
            findings.append(
                GateFinding(
                    "zero-price",
                    provider,
                    row["region"],
                    row["instance_type"],
                    column,
                    None,
                    value,
                    detail,
                )
            )
    return findings


def _vanished_and_moved(provider: str, joined: pd.DataFrame, gates: Gates) -> list[GateFinding]:
    findings = []
    factor = gates.max_price_factor
    for column in PRICE_NAMES:
        old, new = joined[f"{column}_old"], joined[f"{column}_new"]
        vanished = old.notna() & (old > 0) & new.isna()
        ratio = new / old
        moved = (
            (old > 0)
            & (new.round(PRICE_DECIMALS) > 0)  # a zero is the zero-price gate's finding
            & ((ratio > factor) | (ratio < 1 / factor))
        )
        for gate, mask in (("vanished", vanished), ("moved", moved)):
            for row in joined[mask].to_dict("records"):
                before = float(row[f"{column}_old"])
                after = None if gate == "vanished" else float(row[f"{column}_new"])
                if after is None:
                    detail = f"vanished (was {_price(before)}; the instance is still listed)"
                else:
                    detail = (
                        f"moved from {_price(before)} to {_price(after)} (x{after / before:.3g};"
                        f" the gate allows x{factor:g} either way)"
                    )
                findings.append(
                    GateFinding(
                        gate,
                        provider,
                        row["region"],
                        row["instance_type"],
                        column,
                        before,
                        after,
                        detail,
                    )
                )
    return findings


# ---------------------------------------------------------------- accepting changes


@dataclass(frozen=True)
class AcceptPattern:
    """One ``--accept-changes`` value: ``all`` or ``PROVIDER[:REGION[:INSTANCE_TYPE[:PRICE]]]``
    with shell globs; ``PRICE`` is a short name (``spot``) or a column name."""

    text: str
    parts: tuple[str, ...]  # () for all

    def matches(self, finding: GateFinding) -> bool:
        if not self.parts:
            return True
        values = (finding.provider, finding.region, finding.instance_type)
        for pattern, value in zip(self.parts[:3], values, strict=False):
            if not fnmatch.fnmatchcase(value, pattern):
                return False
        if len(self.parts) == 4:
            if finding.column == ANY:
                return self.parts[3] == ANY
            names = (finding.column, PRICE_NAMES.get(finding.column, finding.column))
            return any(fnmatch.fnmatchcase(n, self.parts[3]) for n in names)
        return True


def _is_glob(text: str) -> bool:
    return any(c in text for c in "*?[")


def accept_patterns(values: Iterable[str], providers: Iterable[str]) -> tuple[AcceptPattern, ...]:
    """The patterns of ``--accept-changes`` values (repeatable, comma-separated), checked against
    the known ``providers`` and price names before anything is fetched."""
    known = sorted(providers)
    out: list[AcceptPattern] = []
    for value in values:
        if not isinstance(value, str):
            raise ConfigError(
                f"expected a change id, got {value!r}", key_path="accept_changes", hint=_HINT
            )
        if not value.replace(",", "").strip():
            # was: accepted as no change at all, and the refresh refused what it was meant to let in
            raise ConfigError(f"{value!r} names no change", key_path="accept_changes", hint=_HINT)
        for text in (t.strip() for t in value.split(",")):
            if not text:
                continue
            if text.lower() == "all":
                out.append(AcceptPattern(text, ()))
                continue
            parts = tuple(p.strip() for p in text.split(":"))
            if len(parts) > 4 or any(not p for p in parts):
                raise ConfigError(
                    f"{text!r} is not a change id", key_path="accept_changes", hint=_HINT
                )
            if not _is_glob(parts[0]) and parts[0] not in known:
                raise UnknownNameError("provider", parts[0], known, key_path="accept_changes")
            names = [*PRICE_NAMES.values(), *PRICE_NAMES]
            if len(parts) == 4 and not _is_glob(parts[3]) and parts[3] not in names:
                raise UnknownNameError("price", parts[3], names, key_path="accept_changes")
            out.append(AcceptPattern(text, parts))
    return tuple(out)


_HINT = (
    "name a change as PROVIDER:REGION:INSTANCE_TYPE (e.g. aws:us-east-1:p5.48xlarge), optionally"
    " with :PRICE (on-demand, spot, spot-median, reserved-1y, reserved-3y, savings-plan-1y,"
    " savings-plan-3y); globs such as"
    " 'aws:*:p5.*' and 'all' accept more"
)


def judge(
    findings: Sequence[GateFinding], patterns: Sequence[AcceptPattern], *, force: bool = False
) -> tuple[list[GateFinding], list[str]]:
    """``findings`` with ``accepted_by`` set (the first pattern that matches, else ``--force``
    when ``force``), and the patterns that matched nothing."""
    used: set[str] = set()
    judged = []
    for finding in findings:
        by = next((p.text for p in patterns if p.matches(finding)), None)
        if by is not None:
            used.add(by)
        elif force:
            by = FORCE_FLAG
        judged.append(replace(finding, accepted_by=by))
    unused = [p.text for p in patterns if p.text not in used]
    return judged, unused


def summarise(findings: Sequence[GateFinding], limit: int = 10) -> str:
    """The first ``limit`` findings' messages, and how many more there are."""
    shown = "; ".join(f.message for f in findings[:limit])
    more = len(findings) - limit
    return shown + (f"; and {more} more" if more > 0 else "")
