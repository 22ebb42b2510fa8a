"""Units and calendar conventions, defined once."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone

HOURS_PER_YEAR = 8760.0  # 365 d x 24 h; the worked example in cost-facts.md s2.4 uses 8,760 h
HOURS_PER_MONTH = HOURS_PER_YEAR / 12  # 730 h, the convention cloud bills use for a month
# Largest GPU-hours a budget may ask for in one month or one workload: 1e12 GPU-hours a month is
# over a billion GPUs busy all month, far past any fleet, and keeps the MILP's coefficients well
# inside what HiGHS solves reliably (it treats 1e20 as infinite: HiGHS options, infinite_bound).
MAX_GPU_HOURS = 1e12
# The currency every amount is computed in (planner.config.currency converts at the edges).
USD = "USD"
# Prices and exchange rates older than this many days are warned of as stale (a quarter).
DEFAULT_MAX_AGE_DAYS = 90
# Largest amount of money one file entry may hold (a machine's capex, a price, a capex limit):
# a trillion USD is past any server or fleet budget, so a bigger number is a units mistake.
MAX_USD = 1e12
# Shortest time a job is billed and planned for: AWS, Google Cloud and Azure bill Linux VMs by
# the second with a one-minute minimum, and no job starts, loads and saves in less.  A job the
# estimator puts at microseconds (a few tokens) is planned as one minute of its gang.
MIN_BILLED_HOURS = 1.0 / 60.0
# Longest deadline a quote takes: ten years.  Prices, hardware and the job itself change long
# before; a longer one is a unit slip (minutes or seconds typed as hours).
MAX_DEADLINE_HOURS = 10 * HOURS_PER_YEAR
# Most GPUs one job may use: the largest GPU clusters built by 2026 hold ~100,000-200,000 GPUs
# (xAI Colossus, Meta's and OpenAI's sites); a million leaves room and stops a typo (1e20).
MAX_GPUS_PER_JOB = 1_000_000
# Most plans one quote lists: each is a separate plan variant to read; past a hundred nobody
# compares them, and a typo (1e20) should be named, not silently clipped.
MAX_PLANS = 100
# Least share of owned GPU-hours doing useful work a TCO or budget takes: 1%.  The cost per
# useful GPU-hour is the hourly cost / utilization, so 1e-300 printed a 300-digit price; an owned
# fleet busy under 1% of its hours is idle hardware, and anything lower is a fraction typed as a
# percentage (0.005 for 0.5).
MIN_UTILIZATION = 0.01
# Depreciation period of an owned machine: 1 to 30 years.  Servers are depreciated over 3-6 years
# (US MACRS 5-year class for computers; hyperscalers use 5-6 years), so under a year is months
# typed as years (0.0001 years put a year's depreciation at 3.1 billion USD for one server).
MIN_LIFETIME_YEARS = 1.0
MAX_LIFETIME_YEARS = 30.0
# Horizon of a TCO comparison: one month (the cumulative cost table is monthly) to 30 years.
MIN_HORIZON_YEARS = 1.0 / 12.0
MAX_HORIZON_YEARS = 30.0

# What a number typed with a unit is in a value's own unit (an option's, or a file key's as its
# name says): the factor by unit typed (lower case, no spaces), per value unit.  Was "write the
# number alone" for every unit: a thousandth of the value meant for --min-local-disk 1TB (GB), a
# sixtieth for --time-limit 1m (seconds), 18 for lifetime_years: 18 months, 8000 for
# power_kw_avg: 8000W.
IN_UNIT: dict[str, dict[str, float]] = {
    "GB": {"mb": 1e-3, "gb": 1.0, "tb": 1e3, "pb": 1e6, "gib": 1.073741824, "tib": 1099.511627776},
    # a GiB value takes the marketed GB of an instance's listing as they are (80GB: 80)
    "GiB": {"mib": 1 / 1024, "mb": 1 / 1024, "gib": 1.0, "gb": 1.0, "tib": 1024.0, "tb": 1024.0},
    "s": {"ms": 1e-3, "s": 1.0, "sec": 1.0, "secs": 1.0, "m": 60.0, "min": 60.0, "mins": 60.0},
    "ms": {"ms": 1.0, "s": 1e3, "sec": 1e3, "secs": 1e3, "seconds": 1e3, "min": 6e4, "mins": 6e4},
    "h": {"m": 1 / 60, "min": 1 / 60, "mins": 1 / 60, "minutes": 1 / 60, "h": 1.0, "hr": 1.0},
    "years": {"mo": 1 / 12, "months": 1 / 12, "y": 1.0, "yr": 1.0, "yrs": 1.0, "years": 1.0},
    "months": {"mo": 1.0, "month": 1.0, "months": 1.0, "y": 12.0, "yr": 12.0, "years": 12.0},
    "kW": {"w": 1e-3, "watts": 1e-3, "kw": 1.0},
    # network links: 400G is 400 Gbit/s; GB/s is bytes, eight bits each
    # (gb/s: the lower-case spelling reads as bits; GB/s, bytes, by its case in unit_factor)
    "Gbps": {"mbps": 1e-3, "mbit/s": 1e-3, "g": 1.0, "gbps": 1.0, "gbit/s": 1.0, "gb/s": 1.0},
}
IN_UNIT["Gbps"] |= {"tbps": 1e3, "tbit/s": 1e3, "t": 1e3, "m": 1e-3, "mb/s": 1e-3}
# a share of a whole: 60% is 0.6 of a fraction and 60 of a percentage (tco --utilization 60%)
IN_UNIT["fraction"] = {"%": 0.01}
IN_UNIT["percent"] = {"%": 1.0}
IN_UNIT["GB"] |= {"t": 1e3}
IN_UNIT["s"] |= {"h": 3600.0, "hr": 3600.0}
IN_UNIT["h"] |= {"hrs": 1.0, "hours": 1.0, "d": 24.0, "day": 24.0, "days": 24.0, "w": 168.0}
IN_UNIT["h"] |= {"week": 168.0, "weeks": 168.0}
IN_UNIT["years"] |= {"month": 1 / 12, "year": 1.0, "m": 1 / 12}  # 18m of a lifetime: months
IN_UNIT["months"] |= {"yrs": 12.0, "year": 12.0, "m": 1.0}
# Time units spelt out, and the periods of a longer unit: was "write the number alone: 24" for
# --time-limit '24 hours' (seconds: 86400) and 1095 for --years '1095 days'.
_SECOND_WORDS = {"second": 1.0, "seconds": 1.0, "minute": 60.0, "minutes": 60.0}
_SECOND_WORDS |= {"hrs": 3600.0, "hour": 3600.0, "hours": 3600.0}
IN_UNIT["s"] |= _SECOND_WORDS | {"d": 86400.0, "day": 86400.0, "days": 86400.0}
IN_UNIT["ms"] |= {k: v * 1e3 for k, v in _SECOND_WORDS.items()} | {"h": 3.6e6, "hr": 3.6e6}
IN_UNIT["h"] |= {k: v / 3600.0 for k, v in _SECOND_WORDS.items()}
IN_UNIT["h"] |= {"s": 1 / 3600, "sec": 1 / 3600, "secs": 1 / 3600}
# a service's hours: "1 month" is 730 (HOURS_PER_MONTH), "1 year" 8,760 (was: "write 1 alone")
IN_UNIT["h"] |= dict.fromkeys(("mo", "mos", "month", "months"), 730.0)
IN_UNIT["h"] |= dict.fromkeys(("y", "yr", "yrs", "year", "years"), 8760.0)
_DAYS = {"d": 1.0, "day": 1.0, "days": 1.0, "w": 7.0, "wk": 7.0, "week": 7.0, "weeks": 7.0}
IN_UNIT["years"] |= {k: v / 365.0 for k, v in _DAYS.items()} | {"mos": 1 / 12}
IN_UNIT["months"] |= {k: v * 12 / 365.0 for k, v in _DAYS.items()} | {"mos": 1.0}
# a rate per second typed per a longer period (--rps 300/min is 5; requests_per_s: 120 per
# minute is 2): "/min", "per minute", "a minute", spaces dropped by unit_factor
_PERIOD_S = {"s": 1.0, "sec": 1.0, "second": 1.0, "m": 60.0, "min": 60.0, "mins": 60.0}
_PERIOD_S |= {"minute": 60.0, "minutes": 60.0, "h": 3600.0, "hr": 3600.0, "hour": 3600.0}
_PERIOD_S |= {"hours": 3600.0, "d": 86400.0, "day": 86400.0, "days": 86400.0}
IN_UNIT["per_s"] = {
    lead + period: 1.0 / seconds
    for period, seconds in _PERIOD_S.items()
    for lead in ("/", "per", "a", "an")
    if len(period) > 1 or lead in ("/", "per")  # "a minute", not "5am" read as 5 a minute
}
IN_UNIT["per_s"] |= dict.fromkeys(("rps", "qps", "req/s", "requests/s", "tok/s", "tokens/s"), 1.0)
UNIT_WORDS = {"s": "seconds", "h": "hours", "ms": "milliseconds", "Gbps": "Gbit/s"}
UNIT_WORDS |= {"per_s": "a rate per second"}
UNIT_WORDS |= {"fraction": "a fraction (0.6 for 60%)", "percent": "a percentage"}
# Spellings whose case is their meaning: GB/s is bytes (eight bits each), Gb/s bits.
_BYTES_PER_S = frozenset({"GB/s", "GBps", "GByte/s"})


def unit_factor(unit: str | None, typed: str) -> float | None:
    """What a number typed with the unit ``typed`` is in ``unit`` (a key of :data:`IN_UNIT`), or
    None where the unit is not one for it.  Case is ignored but where it is the meaning: a link
    speed in GB/s is eight times the Gbit/s (400 Gb/s is 400)."""
    key = typed.replace(" ", "")
    if unit == "Gbps" and key in _BYTES_PER_S:
        return 8.0
    return IN_UNIT.get(unit or "", {}).get(key.lower())


# A file key's unit by a word of its name before any "per" (power_kw_avg: kW, lifetime_years,
# hours_available_per_day: hours; colocation_per_kw_month and tokens_per_s name none).
_KEY_UNITS = {"ms": "ms", "hours": "h", "kw": "kW", "years": "years", "months": "months"}
_KEY_UNITS |= {"gib": "GiB", "gb": "GB", "gbps": "Gbps"}


def key_unit(key: str) -> str | None:
    """The unit (a key of :data:`IN_UNIT`) a file's key is in, by its name; None where it names
    none (an amount of money, a rate, a count)."""
    words = key.lower().split("_")
    if "usd" in words or words[0] == "gpu":  # money; GPU-hours and GPU counts are quantities
        return None
    for word in words:
        if word == "per":
            return None
        if word in _KEY_UNITS:
            return _KEY_UNITS[word]
    return None


# A duration as people write one: ``90m``, ``24h``, ``1.5 days``, ``2w``, or a bare number of hours.
_DURATION = re.compile(
    r"^\s*(\d+(?:\.\d+)?)\s*(m|min|mins|minutes?|h|hr|hrs|hours?|d|days?|w|weeks?)?\s*$", re.I
)
_UNIT_HOURS = {"m": 1 / 60, "h": 1.0, "d": 24.0, "w": 168.0}
DURATION_FORMS = "90m, 24h, 3d or 2w"


def duration_hours(text: str) -> float | None:
    """``90m``, ``24h``, ``3d``, ``1w`` or a bare number of hours -> hours; None when unreadable.

    The one reader of durations: the CLI's ``--deadline`` and the library's hints use it.  The
    result may be 0 or infinite (a few hundred digits); the caller decides what it accepts.
    """
    match = _DURATION.match(str(text))
    if not match or match.group(2) == "M":
        # an upper-case M alone is a month as often as a minute (ISO 8601's P1M, pandas' "M"):
        # was read as a minute, "a 0.0166667 h deadline cannot be met"; duration_fix asks which
        return None
    unit = (match.group(2) or "h").lower()[0]
    return float(match.group(1)) * _UNIT_HOURS[unit]


_PART = re.compile(
    r"(\d+(?:\.\d+)?)\s*(months?|mon|mo|years?|yrs?|y|seconds?|secs?|s|minutes?|mins?|m|"
    r"hours?|hrs?|hs|h|days?|d|weeks?|wks?|w)(?![a-z])",
    re.I,
)
# Digits grouped by commas or spaces, three to a group after a first of one to three (52,000,
# 1 000 000), and a decimal comma (0,25): how a spreadsheet or another locale writes a number.
GROUPED_THOUSANDS = re.compile(r"\s*[-+]?\d{1,3}(?:(,)\d{3}|( )\d{3})+(?:\.\d+)?\s*")
_DECIMAL_COMMA = re.compile(r"\s*([-+]?\d+),(\d+)\s*")


def separated_number(text: str) -> tuple[str, str] | None:
    """``text`` written plain, and what was wrong with it, where it is a number with thousands
    separators (``52,000``, ``310 000``: one kind of separator) or a decimal comma (``0,25``);
    None for anything else.  The command line's options and a file's values word the fix each
    their own way."""
    if GROUPED_THOUSANDS.fullmatch(text) and ("," in text) != (" " in text.strip()):
        what = "thousands separators" if "," in text else "spaces"
        return re.sub(r"[ ,]", "", text.strip()), f"no {what} in a number"
    comma = _DECIMAL_COMMA.fullmatch(text)
    if comma is not None:
        return f"{comma.group(1)}.{comma.group(2)}", "a decimal point, not a comma"
    return None


# A number written with a comma or underscores: 1,5d (a decimal comma), 1,000h or 1_000h (grouped)
_GROUPED = re.compile(r"^\s*(\d+)([,_])(\d+)\s*([a-z]*)\s*$", re.I)


def duration_fix(text: str) -> str | None:
    """What to write for a duration in a form :func:`duration_hours` does not read, or None:
    parts added up (``1d12h`` -> 36h), months and years in hours (730 and 8,760 a year's twelfth
    and a year, as the planner counts them: :data:`HOURS_PER_YEAR`), seconds refused as too short
    to be a deadline, a decimal comma or grouped digits written plain (``1,5d`` -> 1.5d,
    ``1_000h`` -> 1000h).  Was the list of forms alone."""
    raw = str(text).strip()
    alone = _DURATION.match(raw)
    if alone is not None and alone.group(2) == "M":
        number = float(alone.group(1))
        return (
            f"M reads as minutes or as months: write {number:g}min for minutes, or "
            f"{number * HOURS_PER_YEAR / 12:g}h for {number:g} month{'' if number == 1 else 's'} "
            f"(730h each); write it like "
            f"{DURATION_FORMS}"
        )
    grouped = _GROUPED.match(raw)
    if grouped is not None:
        whole, mark, rest, suffix = grouped.groups()
        thousands = mark == "_" or len(rest) == 3
        plain = f"{whole}{rest}{suffix}" if thousands else f"{whole}.{rest}{suffix}"
        read = duration_hours(plain)
        if read is not None and math.isfinite(read) and read > 0:
            how = "without the separator" if thousands else "with a decimal point, not a comma"
            return f"write {plain} ({how}): write it like {DURATION_FORMS}"
    parts = list(_PART.finditer(raw))
    if not parts or "".join(p.group(0) for p in parts).replace(" ", "") != raw.replace(" ", ""):
        return None
    hours = 0.0
    for part in parts:
        number, unit = float(part.group(1)), part.group(2).lower()
        if unit.startswith("mo"):
            hours += number * HOURS_PER_YEAR / 12
        elif unit.startswith("y"):
            hours += number * HOURS_PER_YEAR
        elif unit.startswith("s"):
            return f"a deadline is minutes to weeks long: write it like {DURATION_FORMS}"
        else:
            hours += number * _UNIT_HOURS[unit[0]]
    if hours > MAX_DEADLINE_HOURS:  # 100y: was "write 876000h", refused in turn
        return (
            f"that is {hours / HOURS_PER_YEAR:.3g} years: a deadline is at most ten years "
            f"({MAX_DEADLINE_HOURS:,.0f}h, 3650d)"
        )
    days = f" ({hours / 24:.4g}d)" if hours >= 48 else ""
    return f"write {hours:g}h{days}: one number and one unit, write it like {DURATION_FORMS}"


# Deadlines as points in time.  A date-time without a zone, a bare date and a weekday are read in
# UTC (the zone prices and snapshots use); write an offset (+02:00) or Z to be explicit.  A bare
# date means the end of that day (the next midnight); a weekday means its next occurrence after
# now, at 23:59 unless a time is given ("friday 18:00").
DEADLINE_FORMS = (
    "90m, 24h, 3d or 2w; a date 2026-12-01; a date-time 2026-12-01T18:00Z or "
    "'2026-12-01 18:00+01:00'; or a weekday 'friday 18:00' (UTC unless a zone is given)"
)
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY = re.compile(r"^\s*([a-z]+)(?:\s+(\d{1,2}):(\d{2}))?\s*$", re.I)


def deadline_point(text: str, now: datetime) -> datetime | None:
    """``text`` as a point in time (UTC-aware), or None when it names no date, date-time or
    weekday (a duration, or nothing readable).  ``now`` (aware) anchors weekdays."""
    raw = str(text).strip()
    match = _WEEKDAY.match(raw)
    if match:
        day = _weekday(match.group(1))
        if day is None:
            return None
        hour, minute = (int(match.group(2)), int(match.group(3))) if match.group(2) else (23, 59)
        if hour > 23 or minute > 59:
            return None
        ahead = (day - now.weekday()) % 7
        point = (now + timedelta(days=ahead)).replace(
            hour=hour, minute=minute, second=0, microsecond=0
        )
        return point if point > now else point + timedelta(days=7)
    try:
        parsed = datetime.fromisoformat(raw.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    if len(raw) == 10:  # a bare date: the end of that day
        try:
            parsed += timedelta(days=1)
        except OverflowError:  # 9999-12-31: the end of time, which every range check refuses
            parsed = datetime.max
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def zone_fix(text: str, now: datetime) -> str | None:
    """What to write for a deadline given with a named time zone (``2026-12-01 18:00
    Europe/Berlin``, ``friday 18:00 PST``), or None: only offsets are read, and the message
    listed the forms without saying the zone was what it could not read."""
    head, _, zone = str(text).strip().rpartition(" ")
    if not head or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+)*", zone):
        return None
    point = deadline_point(head, now)
    if point is None:
        return None
    offset = None
    if "/" in zone and len(head.strip()) > 10 and not _WEEKDAY.match(head):  # a date-time
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError  # only on this error's path

        try:
            local = datetime.fromisoformat(head).replace(tzinfo=ZoneInfo(zone))
            offset = local.isoformat(timespec="minutes")
        except (ValueError, ZoneInfoNotFoundError):
            offset = None
    named = f"the zone name {zone!r} is not read"
    if offset is not None:
        return f"{named}: write {offset!r} (its UTC offset on that date)"
    return (
        f"{named}: give a date-time with its UTC offset, e.g. '2026-12-01 18:00+01:00', or "
        "the time in UTC (a date or a weekday is read in UTC)"
    )


_ISO_SHAPED = re.compile(r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T].*)?$")
_SLASHED = re.compile(r"^\s*(\d{1,2})[/.](\d{1,2})[/.](\d{4})\s*$")
_RELATIVE_DAYS = {"today": 0, "tonight": 0, "tomorrow": 1}


def date_fix(text: str, now: datetime) -> str | None:
    """What to write for a deadline meant as a date the planner does not read, or None: a date
    that does not exist (2026-02-30), a date with slashes or dots (26/12/2026, 12.26.2026: day
    or month first), or a word (tomorrow, next week).  Was the list of forms alone."""
    raw = str(text).strip()
    iso = _ISO_SHAPED.match(raw)
    if iso is not None:
        year, month, day = (int(g) for g in iso.groups())
        if not 1 <= month <= 12:
            return f"{raw!r} has no month {month}: write the date as YYYY-MM-DD, month 01 to 12"
        days = (
            (datetime(year + month // 12, month % 12 + 1, 1) - timedelta(days=1)).day
            if 1 <= year <= 9998
            else 31
        )
        if not 1 <= day <= days:
            return f"{year}-{month:02d} has {days} days: write a day from 01 to {days}"
        return None
    slashed = _SLASHED.match(raw)
    if slashed is not None:
        first, second, year = (int(g) for g in slashed.groups())
        readings = []
        for month, day, order in ((second, first, "day first"), (first, second, "month first")):
            try:
                readings.append(f"{datetime(year, month, day):%Y-%m-%d} ({order})")
            except ValueError:
                continue
        if readings:
            return "write the date as YYYY-MM-DD: " + " or ".join(dict.fromkeys(readings))
        return None
    word = raw.lower()
    if word in _RELATIVE_DAYS:
        end = now + timedelta(days=_RELATIVE_DAYS[word])
        return f"write {end:%Y-%m-%d} (the end of that day, UTC) or a duration such as 24h"
    if word in ("next week", "in a week", "a week"):
        return (
            "write 1w (a week from now) or a date such as " + f"{now + timedelta(days=7):%Y-%m-%d}"
        )
    return None


def _weekday(word: str) -> int | None:
    """Monday 0 .. Sunday 6 from a weekday name or its first three letters or more."""
    word = word.lower()
    hits = [i for i, name in enumerate(_WEEKDAYS) if len(word) >= 3 and name.startswith(word)]
    return hits[0] if len(hits) == 1 else None


# Counts as people write them: 50M tokens, 1.5B parameters, 2T, 3.1e8, 50k.
_COUNT = re.compile(r"^\s*(\d+(?:\.\d+)?(?:e[+-]?\d+)?)\s*([kmbt])?\s*$", re.I)
COUNT_SCALE = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}


def count_value(text: str) -> float | None:
    """``50M`` -> 5e7, ``1.5B`` -> 1.5e9, ``2T``, ``50k``, ``3.1e8``; None when unreadable."""
    match = _COUNT.match(str(text))
    if not match:
        return None
    return float(match.group(1)) * COUNT_SCALE.get((match.group(2) or "").lower(), 1.0)


# The least a GPU-hour may be priced at (a user's price list, a budget's prices): a consumer GPU's
# electricity alone (~0.3-0.5 kW at 0.05-0.30 USD/kWh) costs 0.015-0.15 USD an hour; a hundredth
# of a dollar is a slip of unit (a price a second, a misplaced decimal), as the refresh's gates
# refuse such prices from clouds.
MIN_USD_PER_GPU_HOUR = 0.01


# Words people write for a link where its name belongs (fabric: IB, interconnect: SXM), each
# the value it stands for; the name's other words (400G, NDR, Gen5, v2) say its speed and are
# passed over.  Was: no suggestion for IB, 100GbE, RoCEv2, sxm (difflib finds none).  Here at
# the bottom: price lists (schema) and files and options (config.validation) both read it.
LINK_ALIASES = {
    "ib": "infiniband",
    "infiniband": "infiniband",
    "ndr": "infiniband",
    "hdr": "infiniband",
    "xdr": "infiniband",
    "roce": "roce",
    "rocev": "roce",
    "eth": "ethernet",
    "ethernet": "ethernet",
    "gbe": "ethernet",
    "gige": "ethernet",
    "efa": "efa",
    "tcpx": "gpudirect-tcp",
    "gpudirect": "gpudirect-tcp",
    "nvl": "nvlink",
    "nvlink": "nvlink",
    "nvswitch": "nvswitch",
    "sxm": "nvswitch",
    "hgx": "nvswitch",
    "pcie": "pcie",
    "pci": "pcie",
}


def linked_values(got: str) -> list[str]:
    """The link values the words of ``got`` name, in order (``100GbE RoCEv2`` -> ethernet, roce)."""
    words = re.findall(r"[a-z]+", got.lower().replace("gbe", " gbe "))
    return [LINK_ALIASES[w] for w in words if w in LINK_ALIASES]


def link_alias(got: str, allowed: Sequence[str]) -> str | None:
    """The link value of ``allowed`` that a word of ``got`` names (``IB`` -> infiniband), or None."""
    meant = linked_values(got)
    return meant[0] if meant and meant[0] in allowed else None
