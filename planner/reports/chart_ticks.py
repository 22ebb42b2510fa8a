"""Values in the report charts written the way people read them ($1.5k, 40%, 12 h, 18 mo): tick
labels (through a matplotlib ``FuncFormatter``, see planner/reports/charts.py), bar totals and
tooltips. Where the ticks go is matplotlib's business."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

ValueFormat = Literal["usd", "number", "pct", "hours", "months"]
"""How tick labels and totals read: ``usd`` -> $1.5k, ``number`` -> 1,200 / 12k, ``pct`` (values are
fractions 0..1) -> 40%, ``hours`` -> 30 min / 12 h / 3 d, ``months`` -> 18 mo."""


_SI_UNITS = ((1.0, ""), (1e3, "k"), (1e6, "M"), (1e9, "B"), (1e12, "T"))
HOUR_UNIT_FACTORS = {"min": 60.0, "h": 1.0, "d": 1 / 24}
"""Hours to the unit an hour value is written in."""
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
    unit: str | None = None,
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
        unit = unit or hours_unit(magnitude)
        body = f"{_digits(magnitude * HOUR_UNIT_FACTORS[unit], sig, group=True)} {unit}"
    elif fmt == "months":
        body = _digits(magnitude, sig, group=True) + " mo"
    else:  # pragma: no cover - the Literal type rules this out
        raise ValueError(f"unknown value format {fmt!r}")
    is_zero = not any(ch in "123456789" for ch in body.split(" ")[0])
    return "-" + body if value < 0 and not is_zero else body


def hours_unit(hours: float) -> str:
    """The unit an hour value of this size reads best in: minutes under 2 h, days over 72 h."""
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


def axis_labels(
    ticks: Sequence[float], fmt: ValueFormat, log: bool = False, unit: str | None = None
) -> list[str]:
    """Labels for one axis: one unit for every hour tick (``unit``, else the one of the largest
    tick), SI for every number tick when the axis reaches 10,000 (on a log axis each tick picks its
    own), and enough digits that no two labels read the same."""
    top = max((abs(t) for t in ticks), default=0.0)
    unit = (unit or hours_unit(top)) if fmt == "hours" and not log else None
    number_si = top >= 10_000 if fmt == "number" and not log else None
    labels: list[str] = []
    for sig in range(3, 16):
        labels = [_format(t, fmt, sig, number_si=number_si, unit=unit) for t in ticks]
        if len(set(labels)) == len(labels):
            break
    return labels


# Durations people count in, in hours: minutes, hours, a day, a week, a month, a quarter, a year.
# A log hour axis ticks at those of them inside its range.
DURATIONS_HOURS = (
    1 / 60, 2 / 60, 5 / 60, 10 / 60, 15 / 60, 0.5, 1.0, 2.0, 3.0, 6.0, 12.0, 24.0, 48.0, 72.0,
    120.0, 168.0, 336.0, 720.0, 1440.0, 2160.0, 4320.0, 8760.0, 17520.0, 43800.0, 87600.0,
)  # fmt: skip
