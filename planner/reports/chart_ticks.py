"""Axis ticks and tick labels for the report charts: nice linear ticks, log ticks, and values
written the way people read them ($1.5k, 40%, 12 h, 18 mo)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

ValueFormat = Literal["usd", "number", "pct", "hours", "months"]
"""How tick labels and totals read: ``usd`` -> $1.5k, ``number`` -> 1,200 / 12k, ``pct`` (values are
fractions 0..1) -> 40%, ``hours`` -> 30 min / 12 h / 3 d, ``months`` -> 18 mo."""


_NICE_MANTISSAS = (1.0, 2.0, 2.5, 5.0)


def nice_ticks(lo: float, hi: float, max_ticks: int = 7) -> list[float]:
    """Evenly spaced "nice" tick values covering ``[lo, hi]``: steps are 1, 2, 2.5 or 5 x 10^k.

    The first tick is <= lo and the last >= hi; the smallest step that needs at most ``max_ticks``
    ticks wins, which gives 4 to ``max_ticks`` ticks. ``lo == hi`` widens to a window around the
    value (``[0, 1]`` for zero). Example: ``nice_ticks(0, 97) == [0, 20, 40, 60, 80, 100]``.
    """
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"nice_ticks needs finite bounds, got ({lo!r}, {hi!r})")
    if max_ticks < 2:
        raise ValueError(f"max_ticks must be at least 2, got {max_ticks}")
    lo, hi = min(lo, hi), max(lo, hi)
    scale = max(abs(lo), abs(hi))
    if hi - lo <= scale * 1e-9 or scale < 1e-12:
        if scale < 1e-12:
            lo, hi = 0.0, 1.0
        else:
            lo, hi = lo - scale * 0.1, hi + scale * 0.1
    span = hi - lo
    k = math.floor(math.log10(span / max_ticks)) - 1
    while True:
        for mantissa in _NICE_MANTISSAS:
            step = mantissa * 10.0**k
            first = math.floor(lo / step + 1e-9)
            last = math.ceil(hi / step - 1e-9)
            if last - first + 1 <= max_ticks:
                return [_tick_value(i, mantissa, k) for i in range(first, last + 1)]
        k += 1


def _tick_value(i: int, mantissa: float, k: int) -> float:
    """``i * mantissa * 10^k`` without the float noise of repeated multiplication (0.1 * 3)."""
    value = i * mantissa * 10.0**k if k >= 0 else i * mantissa / 10.0**-k
    return round(value, max(0, -k + 1)) + 0.0  # + 0.0 turns -0.0 into 0.0


def log_ticks(lo: float, hi: float) -> list[float]:
    """Ticks for a log axis covering ``[lo, hi]`` (both > 0): decades, plus 2 and 5 within each
    decade when the range spans two decades or fewer; every n-th decade when there are many."""
    if not (lo > 0 and hi > 0 and math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"log_ticks needs positive finite bounds, got ({lo!r}, {hi!r})")
    lo, hi = min(lo, hi), max(lo, hi)
    d0 = math.floor(math.log10(lo) + 1e-9)
    d1 = math.ceil(math.log10(hi) - 1e-9)
    d1 = max(d1, d0 + 1)
    decades = d1 - d0
    if decades <= 2:
        ticks = [m * 10.0**d for d in range(d0, d1) for m in (1, 2, 5)]
        return [*ticks, 10.0**d1]
    stride = math.ceil(decades / 7)
    d1 = d0 + stride * math.ceil(decades / stride)
    return [10.0**d for d in range(d0, d1 + 1, stride)]


_SI_UNITS = ((1.0, ""), (1e3, "k"), (1e6, "M"), (1e9, "B"), (1e12, "T"))
_MAX_DECIMALS = 10


def _digits(x: float, sig: int, group: bool = False) -> str:
    """``x >= 0`` with at least ``sig`` significant digits, no exponent, trailing zeros trimmed."""
    if x == 0:
        return "0"
    decimals = min(_MAX_DECIMALS, max(0, sig - 1 - math.floor(math.log10(x))))
    text = f"{x:,.{decimals}f}" if group else f"{x:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _si(x: float, sig: int) -> str:
    """``x >= 0`` as short SI: 1.5k, 12k, 2M (B for 10^9, as money is written)."""
    index = 0
    for i, (base, _) in enumerate(_SI_UNITS):
        if x >= base:
            index = i
    while True:
        base, suffix = _SI_UNITS[index]
        body = _digits(x / base, sig, group=True)
        if float(body.replace(",", "")) >= 1000 and index + 1 < len(_SI_UNITS):
            index += 1
            continue
        return body + suffix


def _format(
    value: float,
    fmt: ValueFormat,
    sig: int = 3,
    *,
    number_si: bool | None = None,
    hours_unit: str | None = None,
) -> str:
    if not math.isfinite(value):
        return "n/a"
    magnitude = abs(value)
    if fmt == "usd":
        body = "$" + _si(magnitude, sig)
    elif fmt == "number":
        use_si = magnitude >= 10_000 if number_si is None else number_si
        body = _si(magnitude, sig) if use_si else _digits(magnitude, sig, group=True)
    elif fmt == "pct":
        body = _digits(magnitude * 100, sig, group=True) + "%"
    elif fmt == "hours":
        unit = hours_unit or _hours_unit(magnitude)
        factor = {"min": 60.0, "h": 1.0, "d": 1 / 24}[unit]
        body = f"{_digits(magnitude * factor, sig, group=True)} {unit}"
    elif fmt == "months":
        body = _digits(magnitude, sig, group=True) + " mo"
    else:  # pragma: no cover - the Literal type rules this out
        raise ValueError(f"unknown value format {fmt!r}")
    is_zero = not any(ch in "123456789" for ch in body.split(" ")[0])
    return "-" + body if value < 0 and not is_zero else body


def _hours_unit(hours: float) -> str:
    if hours == 0:
        return "h"
    if hours < 2:
        return "min"
    return "h" if hours <= 72 else "d"


def format_tick(value: float, fmt: ValueFormat) -> str:
    """A value as a person reads it: ``usd`` $0, $500, $1.5k, $2M; ``number`` 1,200, 12k;
    ``pct`` (fraction) 40%; ``hours`` 30 min (under 2 h), 12 h, 3 d (over 72 h); ``months`` 18 mo.

    Three significant digits, never fewer than the integer part: 1234 -> "1,234" as a number,
    "$1.23k" as money.
    """
    return _format(value, fmt)


def format_value(value: float, fmt: ValueFormat) -> str:
    """A data value (a bar's total, a tooltip) rather than a tick: like :func:`format_tick`, but
    money under $1,000 keeps its cents as the report's tables write it ($3.80, not $3.8)."""
    if fmt == "usd" and math.isfinite(value) and round(abs(value), 2) < 1000:
        body = f"${abs(value):.2f}"
        return "-" + body if round(value, 2) < 0 else body
    return _format(value, fmt)


def axis_labels(ticks: Sequence[float], fmt: ValueFormat, log: bool = False) -> list[str]:
    """Labels for one axis: one unit for every hour tick, SI for every number tick when the axis
    reaches 10,000 (on a log axis each tick picks its own), and enough digits that no two labels
    read the same."""
    top = max((abs(t) for t in ticks), default=0.0)
    hours_unit = _hours_unit(top) if fmt == "hours" and not log else None
    number_si = top >= 10_000 if fmt == "number" and not log else None
    labels: list[str] = []
    for sig in range(3, 16):
        labels = [_format(t, fmt, sig, number_si=number_si, hours_unit=hours_unit) for t in ticks]
        if len(set(labels)) == len(labels):
            break
    return labels


def axis_ticks(lo: float, hi: float, fmt: ValueFormat, max_ticks: int = 7) -> list[float]:
    """Nice ticks in the unit the labels show: hour axes tick in minutes, hours or days."""
    if fmt != "hours":
        return nice_ticks(lo, hi, max_ticks)
    unit = _hours_unit(max(abs(lo), abs(hi)))
    factor = {"min": 60.0, "h": 1.0, "d": 1 / 24}[unit]
    return [t / factor for t in nice_ticks(lo * factor, hi * factor, max_ticks)]


# Durations people count in, in hours: minutes, hours, a day, a week, a month, a quarter, a year.
_DURATIONS_HOURS = (
    1 / 60, 2 / 60, 5 / 60, 10 / 60, 15 / 60, 0.5, 1.0, 2.0, 3.0, 6.0, 12.0, 24.0, 48.0, 72.0,
    120.0, 168.0, 336.0, 720.0, 1440.0, 2160.0, 4320.0, 8760.0, 17520.0, 43800.0, 87600.0,
)  # fmt: skip


def log_axis_ticks(lo: float, hi: float, fmt: ValueFormat, max_ticks: int = 7) -> list[float]:
    """Ticks for a log axis: for hours, round durations (6 h, 12 h, 24 h, 48 h, 5 d, 14 d, 30 d)
    about evenly spaced on the log scale; otherwise ``log_ticks``."""
    if fmt != "hours" or lo < _DURATIONS_HOURS[0] or hi > _DURATIONS_HOURS[-1]:
        return log_ticks(lo, hi)
    lo, hi = min(lo, hi), max(lo, hi)
    start = max(d for d in _DURATIONS_HOURS if d <= lo * (1 + 1e-9))
    end = min(d for d in _DURATIONS_HOURS if d >= hi * (1 - 1e-9))
    if end <= start:  # one value: widen to the neighbouring duration (below it at the very top)
        above = [d for d in _DURATIONS_HOURS if d > start]
        if above:
            end = above[0]
        else:
            start = max(d for d in _DURATIONS_HOURS if d < end)
    chosen = [d for d in _DURATIONS_HOURS if start <= d <= end]
    if len(chosen) <= max_ticks:
        return chosen
    gap = math.log10(end / start) / (max_ticks - 1) * 0.8
    kept = [start]
    for d in chosen[1:-1]:
        if math.log10(d / kept[-1]) >= gap and math.log10(end / d) >= gap * 0.5:
            kept.append(d)
    return [*kept, end]
