"""Inline SVG charts for the HTML reports: line charts and stacked bar charts.

Standard library only. ``render_svg`` returns the text of one ``<svg>`` element that needs no
scripts, fonts or files from anywhere else, so a report stays one self-contained file. The same
input always gives the same bytes.

Layout (all in px of the SVG's own coordinate system; see ``_Layout`` for the formulas)::

    +--------------------------------------------------------------+
    | PAD                                                          |
    | Title (bold, TITLE_FONT_PX, wraps to two lines)              |
    | [legend swatch] series A   [legend swatch] series B   (rows) |
    |        +-------------------------------------------+         |
    |  y  ti | plot area (class="plot-area")             |         |
    |  lab ck|                                           |         |
    |  el  s +-------------------------------------------+         |
    |                 tick labels                                  |
    |                 x axis label                                 |
    |                 (caption, only with show_caption=True)       |
    +--------------------------------------------------------------+

The legend is a row under the title so it never covers data. Text widths are estimated from the
character count (``CHAR_WIDTH_EM``), which is enough to keep labels from overlapping or being cut.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

ValueFormat = Literal["usd", "number", "pct", "hours", "months"]
"""How tick labels and totals read: ``usd`` -> $1.5k, ``number`` -> 1,200 / 12k, ``pct`` (values are
fractions 0..1) -> 40%, ``hours`` -> 30 min / 12 h / 3 d, ``months`` -> 18 mo."""


@dataclass(frozen=True)
class Series:
    name: str  # legend text
    points: tuple[tuple[float, float], ...]  # (x, y), x ascending
    dashed: bool = False
    step: bool = False  # draw as a step function (cost-vs-deadline frontiers)


@dataclass(frozen=True)
class Marker:
    x: float
    y: float
    label: str  # drawn next to a filled circle, e.g. "breakeven: month 17"


@dataclass(frozen=True)
class RefLine:
    value: float
    label: str
    axis: Literal["x", "y"] = "x"  # vertical line at x=value, or horizontal at y=value


@dataclass(frozen=True)
class LineChart:
    title: str
    x_label: str  # with unit, e.g. "deadline (hours)"
    y_label: str  # with unit, e.g. "cumulative cost (USD)"
    series: tuple[Series, ...]
    markers: tuple[Marker, ...] = ()
    ref_lines: tuple[RefLine, ...] = ()
    x_format: ValueFormat = "number"
    y_format: ValueFormat = "usd"
    x_log: bool = False
    y_zero: bool = True  # y axis starts at 0 (unless data is negative)
    caption: str = ""  # one sentence under the chart: what to read from it


@dataclass(frozen=True)
class BarChart:
    title: str
    category_label: str  # axis label of the categories
    value_label: str  # with unit, e.g. "spend (USD)"
    categories: tuple[str, ...]
    stacks: tuple[tuple[str, tuple[float, ...]], ...]  # (segment name, one value per category)
    value_format: ValueFormat = "usd"
    horizontal: bool = False  # horizontal bars (long category names, e.g. plan labels)
    highlight: int | None = None  # category to emphasise: bold label + outline
    show_totals: bool = True  # total printed at the end of each bar
    caption: str = ""


Chart = LineChart | BarChart

# --- Look ------------------------------------------------------------------------------------

# Okabe & Ito, "Color Universal Design (CUD): how to make figures and presentations that are
# friendly to colorblind people" (2008), https://jfly.uni-koeln.de/color/ — the eight colours stay
# distinguishable under the common colour-vision deficiencies. Ordered so the first ones have the
# most contrast on white; yellow (#F0E442) comes last because thin yellow lines are hard to see.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
INK = "#1a1a1a"  # text and markers
MUTED_INK = "#555555"  # tick labels, reference lines
GRID = "#e3e3e3"
AXIS = "#8a8a8a"
FONT_FAMILY = "system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif"

# Sizes in px. Issue 7 asks for readable fonts: title >= 15 px, every other label >= 12 px.
TITLE_FONT_PX = 16.0
AXIS_LABEL_FONT_PX = 13.0
TICK_FONT_PX = 12.0
LEGEND_FONT_PX = 13.0
ANNOTATION_FONT_PX = 12.0
CAPTION_FONT_PX = 13.0
LINE_HEIGHT = 1.35  # line box = font size x LINE_HEIGHT
# Average advance of a glyph in em. DejaVu Sans digits are 0.636 em wide and most lower-case
# letters are narrower; 0.62 errs on the wide side so estimated boxes do not under-reserve space.
CHAR_WIDTH_EM = 0.62

PAD_PX = 12.0  # empty border around everything
TICK_LEN_PX = 5.0  # tick mark length
TICK_GAP_PX = 4.0  # between tick mark and its label
AXIS_LABEL_GAP_PX = 8.0  # between tick labels and the axis label
PLOT_TOP_GAP_PX = 10.0  # between the title/legend block and the plot area
LEGEND_ROW_PX = 22.0  # height of one legend row
LEGEND_SWATCH_PX = 24.0  # width of a legend swatch
LEGEND_ENTRY_GAP_PX = 20.0  # between legend entries on one row
CAPTION_GAP_PX = 8.0  # between the x axis label and the caption
TOTAL_LABEL_GAP_PX = 5.0  # between a bar's end and its total
MIN_BAR_BAND_PX = 24.0  # horizontal bar charts grow taller so each bar gets at least this much
MAX_BAR_PX = 56.0  # widest bar
BAR_FILL = 0.62  # bar thickness as a share of its band
SERIES_STROKE_PX = 2.5
DASH = "7 5"
REF_DASH = "4 4"

# Values beyond +-1e15 cannot be a cost, hour count or share the planner produces; they are
# dropped like NaN so that the pixel maths cannot overflow.
MAX_ABS_VALUE = 1e15


# --- Ticks and their labels --------------------------------------------------------------------

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


def _axis_labels(ticks: Sequence[float], fmt: ValueFormat) -> list[str]:
    """Labels for one axis: one unit for every hour tick, SI for every number tick when the axis
    reaches 10,000, and enough digits that no two labels read the same."""
    top = max((abs(t) for t in ticks), default=0.0)
    hours_unit = _hours_unit(top) if fmt == "hours" else None
    number_si = top >= 10_000 if fmt == "number" else None
    labels: list[str] = []
    for sig in range(3, 16):
        labels = [_format(t, fmt, sig, number_si=number_si, hours_unit=hours_unit) for t in ticks]
        if len(set(labels)) == len(labels):
            break
    return labels


def _axis_ticks(lo: float, hi: float, fmt: ValueFormat, max_ticks: int = 7) -> list[float]:
    """Nice ticks in the unit the labels show: hour axes tick in minutes, hours or days."""
    if fmt != "hours":
        return nice_ticks(lo, hi, max_ticks)
    unit = _hours_unit(max(abs(lo), abs(hi)))
    factor = {"min": 60.0, "h": 1.0, "d": 1 / 24}[unit]
    return [t / factor for t in nice_ticks(lo * factor, hi * factor, max_ticks)]


# --- Text and SVG helpers ----------------------------------------------------------------------


def _xml_safe(text: str) -> str:
    """Drop characters XML 1.0 cannot carry at all (controls, lone surrogates, U+FFFE/FFFF)."""
    return "".join(
        ch
        for ch in text
        if ch in "\t\n\r"
        or ("\x20" <= ch <= "\ud7ff")
        or ("\ue000" <= ch <= "\ufffd")
        or ch >= "\U00010000"
    )


def _esc(text: object) -> str:
    """Escape text for an XML text node or a double-quoted attribute."""
    return (
        _xml_safe(str(text))
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
    )


def _n(value: float) -> str:
    """A coordinate rounded to 0.1 px, without a trailing ".0"."""
    text = f"{round(value, 1):.1f}"
    if text.endswith(".0"):
        text = text[:-2]
    return "0" if text == "-0" else text


def _text_width(text: str, font_px: float, bold: bool = False) -> float:
    return len(text) * font_px * CHAR_WIDTH_EM * (1.06 if bold else 1.0)


def _fit(text: str, max_px: float, font_px: float, bold: bool = False) -> str:
    """``text`` cut with an ellipsis so that it fits in ``max_px``."""
    if _text_width(text, font_px, bold) <= max_px:
        return text
    chars = max(1, int(max_px / (font_px * CHAR_WIDTH_EM * (1.06 if bold else 1.0))))
    return text[: max(0, chars - 1)].rstrip() + "…"


def _wrap(
    text: str, max_px: float, font_px: float, max_lines: int, bold: bool = False
) -> list[str]:
    """Greedy word wrap into at most ``max_lines`` lines; the last one is cut with an ellipsis."""
    words = text.split()
    if not words:
        return []
    lines: list[str] = []
    current = ""
    for index, word in enumerate(words):
        candidate = f"{current} {word}" if current else word
        if _text_width(candidate, font_px, bold) <= max_px or not current:
            current = candidate
            continue
        if len(lines) == max_lines - 1:
            current = " ".join([current, *words[index:]])
            break
        lines.append(current)
        current = word
    lines.append(current)
    return [_fit(line, max_px, font_px, bold) for line in lines]


def _text(
    x: float,
    y: float,
    text: str,
    *,
    size: float,
    anchor: str = "start",
    fill: str = INK,
    weight: str | None = None,
    attrs: str = "",
    full: str | None = None,
    halo: bool = False,
) -> str:
    """One ``<text>``; ``full`` adds a ``<title>`` child (the whole text of a shortened label)."""
    parts = [f'<text x="{_n(x)}" y="{_n(y)}" font-size="{_n(size)}" fill="{fill}"']
    if anchor != "start":
        parts.append(f' text-anchor="{anchor}"')
    if weight:
        parts.append(f' font-weight="{weight}"')
    if halo:
        parts.append(
            ' stroke="#ffffff" stroke-width="3" stroke-linejoin="round" paint-order="stroke"'
        )
    if attrs:
        parts.append(" " + attrs)
    tooltip = f"<title>{_esc(full)}</title>" if full is not None and full != text else ""
    parts.append(f">{_esc(text)}{tooltip}</text>")
    return "".join(parts)


def _finite(value: float) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and abs(value) <= MAX_ABS_VALUE


@dataclass(frozen=True)
class _Box:
    left: float
    top: float
    right: float
    bottom: float

    @property
    def width(self) -> float:
        return self.right - self.left

    @property
    def height(self) -> float:
        return self.bottom - self.top

    def overlaps(self, other: _Box) -> bool:
        return not (
            self.right <= other.left
            or other.right <= self.left
            or self.bottom <= other.top
            or other.bottom <= self.top
        )


@dataclass(frozen=True)
class _Scale:
    """Maps data values on one axis to pixels: ``lo`` -> ``px_lo``, ``hi`` -> ``px_hi``."""

    lo: float
    hi: float
    px_lo: float
    px_hi: float
    log: bool = False

    def __call__(self, value: float) -> float:
        if self.log:
            a, b, v = math.log10(self.lo), math.log10(self.hi), math.log10(value)
        else:
            a, b, v = self.lo, self.hi, value
        share = (v - a) / (b - a) if b != a else 0.5
        return self.px_lo + share * (self.px_hi - self.px_lo)


@dataclass(frozen=True)
class _LegendEntry:
    name: str
    color: str
    kind: Literal["line", "dashed", "box"]


def _legend_rows(
    entries: Sequence[_LegendEntry], max_px: float
) -> list[list[tuple[float, _LegendEntry, str]]]:
    """Entries laid out left to right, wrapping to new rows: (x offset, entry, shown text)."""
    rows: list[list[tuple[float, _LegendEntry, str]]] = []
    row: list[tuple[float, _LegendEntry, str]] = []
    x = 0.0
    for entry in entries:
        shown = _fit(entry.name, max_px * 0.6, LEGEND_FONT_PX)
        width = LEGEND_SWATCH_PX + 6 + _text_width(shown, LEGEND_FONT_PX)
        if row and x + width > max_px:
            rows.append(row)
            row, x = [], 0.0
        row.append((x, entry, shown))
        x += width + LEGEND_ENTRY_GAP_PX
    if row:
        rows.append(row)
    return rows


def _render_legend(
    rows: list[list[tuple[float, _LegendEntry, str]]], left: float, top: float
) -> str:
    if not rows:
        return ""
    out = ['<g class="legend">']
    for r, row in enumerate(rows):
        mid = top + r * LEGEND_ROW_PX + LEGEND_ROW_PX / 2
        for x_off, entry, shown in row:
            x = left + x_off
            out.append(f'<g class="legend-entry" data-series="{_esc(entry.name)}">')
            if entry.kind == "box":
                out.append(
                    f'<rect x="{_n(x + 5)}" y="{_n(mid - 7)}" width="14" height="14" fill="{entry.color}"/>'
                )
            else:
                dash = f' stroke-dasharray="{DASH}"' if entry.kind == "dashed" else ""
                out.append(
                    f'<line x1="{_n(x)}" y1="{_n(mid)}" x2="{_n(x + LEGEND_SWATCH_PX)}" y2="{_n(mid)}"'
                    f' stroke="{entry.color}" stroke-width="{SERIES_STROKE_PX}"{dash}/>'
                )
            out.append(
                _text(
                    x + LEGEND_SWATCH_PX + 6,
                    mid + LEGEND_FONT_PX * 0.35,
                    shown,
                    size=LEGEND_FONT_PX,
                    full=entry.name,
                )
            )
            out.append("</g>")
    out.append("</g>")
    return "".join(out)


def _header(
    title: str, width: float, legend: Sequence[_LegendEntry]
) -> tuple[list[str], float, str]:
    """Title lines, the y where the header ends, and the legend markup."""
    inner = width - 2 * PAD_PX
    title_lines = _wrap(title, inner, TITLE_FONT_PX, 2, bold=True)
    y = PAD_PX
    parts = ['<g class="plot-title">']
    for line in title_lines:
        y += TITLE_FONT_PX * LINE_HEIGHT
        parts.append(
            _text(PAD_PX, y - TITLE_FONT_PX * 0.3, line, size=TITLE_FONT_PX, weight="bold")
        )
    parts.append("</g>")
    rows = _legend_rows(legend, inner)
    legend_svg = _render_legend(rows, PAD_PX, y + 4)
    if rows:
        y += 4 + len(rows) * LEGEND_ROW_PX
    return parts, y, legend_svg


def _caption_lines(caption: str, width: float, show: bool) -> list[str]:
    return _wrap(caption, width - 2 * PAD_PX, CAPTION_FONT_PX, 3) if show and caption else []


def _caption_svg(lines: list[str], height: float) -> str:
    if not lines:
        return ""
    out = ['<g class="caption">']
    y = height - PAD_PX - (len(lines) - 1) * CAPTION_FONT_PX * LINE_HEIGHT - CAPTION_FONT_PX * 0.3
    for line in lines:
        out.append(
            _text(
                PAD_PX, y, line, size=CAPTION_FONT_PX, fill=MUTED_INK, attrs='font-style="italic"'
            )
        )
        y += CAPTION_FONT_PX * LINE_HEIGHT
    out.append("</g>")
    return "".join(out)


def _caption_height(lines: list[str]) -> float:
    return len(lines) * CAPTION_FONT_PX * LINE_HEIGHT + CAPTION_GAP_PX if lines else 0.0


def _chart_id(chart: Chart, width: int, height: int) -> str:
    digest = hashlib.sha256(f"{chart!r}|{width}x{height}".encode("utf-8", "replace")).hexdigest()
    return "chart-" + digest[:10]


def _svg_open(chart_id: str, width: float, height: float, title: str, desc: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {_n(width)} {_n(height)}"'
        f' width="{_n(width)}" height="{_n(height)}" role="img"'
        f' aria-labelledby="{chart_id}-title {chart_id}-desc" font-family="{FONT_FAMILY}">',
        f'<title id="{chart_id}-title">{_esc(title)}</title>',
        f'<desc id="{chart_id}-desc">{_esc(desc)}</desc>',
        f'<rect class="background" width="{_n(width)}" height="{_n(height)}" fill="#ffffff"/>',
    ]


def _no_data(parts: list[str], header_bottom: float, width: float, bottom: float) -> None:
    mid_y = (header_bottom + bottom) / 2
    parts.append(
        _text(
            width / 2,
            mid_y,
            "No data to plot",
            size=AXIS_LABEL_FONT_PX + 1,
            anchor="middle",
            fill=MUTED_INK,
            attrs='class="no-data"',
        )
    )


def _y_axis_label(text: str, box: _Box) -> str:
    x = PAD_PX + AXIS_LABEL_FONT_PX
    y = (box.top + box.bottom) / 2
    shown = _fit(text, box.height, AXIS_LABEL_FONT_PX)
    return _text(
        x,
        y,
        shown,
        size=AXIS_LABEL_FONT_PX,
        anchor="middle",
        full=text,
        attrs=f'class="axis-label" data-axis="y" transform="rotate(-90 {_n(x)} {_n(y)})"',
    )


def _x_axis_label(text: str, box: _Box, width: float) -> str:
    y = box.bottom + TICK_LEN_PX + TICK_GAP_PX + TICK_FONT_PX * LINE_HEIGHT + AXIS_LABEL_GAP_PX
    y += AXIS_LABEL_FONT_PX
    shown = _fit(text, width - 2 * PAD_PX, AXIS_LABEL_FONT_PX)
    return _text(
        (box.left + box.right) / 2,
        y,
        shown,
        size=AXIS_LABEL_FONT_PX,
        anchor="middle",
        full=text,
        attrs='class="axis-label" data-axis="x"',
    )


def _bottom_band() -> float:
    """Height under the plot area for tick marks, tick labels and the axis label."""
    return (
        TICK_LEN_PX
        + TICK_GAP_PX
        + TICK_FONT_PX * LINE_HEIGHT
        + AXIS_LABEL_GAP_PX
        + AXIS_LABEL_FONT_PX * LINE_HEIGHT
    )


def _left_band(tick_labels: Iterable[str]) -> float:
    """Width left of the plot area for the rotated axis label, tick labels and tick marks."""
    widest = max((_text_width(t, TICK_FONT_PX) for t in tick_labels), default=0.0)
    return (
        PAD_PX
        + AXIS_LABEL_FONT_PX * LINE_HEIGHT
        + AXIS_LABEL_GAP_PX
        + widest
        + TICK_GAP_PX
        + TICK_LEN_PX
    )


def _value_ticks_vertical(
    scale: _Scale, ticks: Sequence[float], labels: Sequence[str], box: _Box, cls: str
) -> str:
    """Grid lines plus a left axis with ticks and labels (``cls`` names the group)."""
    out = ['<g class="grid">']
    for t in ticks:
        y = scale(t)
        out.append(
            f'<line x1="{_n(box.left)}" y1="{_n(y)}" x2="{_n(box.right)}" y2="{_n(y)}" stroke="{GRID}"/>'
        )
    out.append(f'</g><g class="{cls}">')
    out.append(
        f'<line x1="{_n(box.left)}" y1="{_n(box.top)}" x2="{_n(box.left)}" y2="{_n(box.bottom)}" stroke="{AXIS}"/>'
    )
    for t, label in zip(ticks, labels, strict=True):
        y = scale(t)
        out.append(
            f'<line x1="{_n(box.left - TICK_LEN_PX)}" y1="{_n(y)}" x2="{_n(box.left)}" y2="{_n(y)}" stroke="{AXIS}"/>'
        )
        out.append(
            _text(
                box.left - TICK_LEN_PX - TICK_GAP_PX,
                y + TICK_FONT_PX * 0.35,
                label,
                size=TICK_FONT_PX,
                anchor="end",
                fill=MUTED_INK,
                attrs=f'data-value="{t!r}"',
            )
        )
    out.append("</g>")
    return "".join(out)


def _value_ticks_horizontal(
    scale: _Scale, ticks: Sequence[float], labels: Sequence[str], box: _Box, cls: str
) -> str:
    """Grid lines plus a bottom axis with ticks and labels (``cls`` names the group)."""
    out = ['<g class="grid">']
    for t in ticks:
        x = scale(t)
        out.append(
            f'<line x1="{_n(x)}" y1="{_n(box.top)}" x2="{_n(x)}" y2="{_n(box.bottom)}" stroke="{GRID}"/>'
        )
    out.append(f'</g><g class="{cls}">')
    out.append(
        f'<line x1="{_n(box.left)}" y1="{_n(box.bottom)}" x2="{_n(box.right)}" y2="{_n(box.bottom)}" stroke="{AXIS}"/>'
    )
    for t, label in zip(ticks, labels, strict=True):
        x = scale(t)
        out.append(
            f'<line x1="{_n(x)}" y1="{_n(box.bottom)}" x2="{_n(x)}" y2="{_n(box.bottom + TICK_LEN_PX)}" stroke="{AXIS}"/>'
        )
        out.append(
            _text(
                x,
                box.bottom + TICK_LEN_PX + TICK_GAP_PX + TICK_FONT_PX,
                label,
                size=TICK_FONT_PX,
                anchor="middle",
                fill=MUTED_INK,
                attrs=f'data-value="{t!r}"',
            )
        )
    out.append("</g>")
    return "".join(out)


# --- Line charts -------------------------------------------------------------------------------


def _clean_points(series: Series, x_log: bool) -> list[tuple[float, float]]:
    points = [
        (float(x), float(y))
        for x, y in series.points
        if _finite(x) and _finite(y) and (x > 0 or not x_log)
    ]
    return sorted(points, key=lambda p: p[0])


def _line_desc(chart: LineChart) -> str:
    names = ", ".join(s.name for s in chart.series if s.name)
    text = f"Line chart of {chart.y_label} against {chart.x_label}"
    return text + (f"; lines: {names}." if names else ".")


def _place_label(
    candidates: Sequence[tuple[float, float, str]],
    text: str,
    placed: list[_Box],
    bounds: _Box,
) -> tuple[float, float, str]:
    """The first candidate (x, baseline y, anchor) whose box overlaps no placed label and stays in
    ``bounds``; the first in-bounds one when every candidate collides."""
    width = _text_width(text, ANNOTATION_FONT_PX, bold=True)
    fallback: tuple[float, float, str] | None = None
    fallback_box: _Box | None = None
    for x, y, anchor in candidates:
        left = x - width if anchor == "end" else x
        box = _Box(left, y - ANNOTATION_FONT_PX, left + width, y + ANNOTATION_FONT_PX * 0.3)
        inside = (
            box.left >= bounds.left
            and box.right <= bounds.right
            and box.top >= bounds.top
            and box.bottom <= bounds.bottom
        )
        if inside and fallback is None:
            fallback, fallback_box = (x, y, anchor), box
        if inside and not any(box.overlaps(other) for other in placed):
            placed.append(box)
            return x, y, anchor
    if fallback is not None and fallback_box is not None:
        placed.append(fallback_box)
        return fallback
    return candidates[0]


def _render_line(
    chart: LineChart, width: int, height: int, chart_id: str, show_caption: bool
) -> str:
    series_points = [_clean_points(s, chart.x_log) for s in chart.series]
    markers = [
        m for m in chart.markers if _finite(m.x) and _finite(m.y) and (m.x > 0 or not chart.x_log)
    ]
    refs = [
        r
        for r in chart.ref_lines
        if _finite(r.value) and (r.value > 0 or not (chart.x_log and r.axis == "x"))
    ]
    xs = [x for pts in series_points for x, _ in pts] + [m.x for m in markers]
    ys = [y for pts in series_points for _, y in pts] + [m.y for m in markers]
    legend = [
        _LegendEntry(s.name, PALETTE[i % len(PALETTE)], "dashed" if s.dashed else "line")
        for i, s in enumerate(chart.series)
        if s.name
    ]
    desc = chart.caption or _line_desc(chart)
    parts = _svg_open(chart_id, width, height, chart.title, desc)
    title_svg, header_bottom, legend_svg = _header(chart.title, width, legend if xs else [])
    parts.extend(title_svg)
    caption = _caption_lines(chart.caption, width, show_caption)
    if not xs:
        _no_data(parts, header_bottom, width, height - PAD_PX - _caption_height(caption))
        parts.append(_caption_svg(caption, height))
        parts.append("</svg>")
        return "".join(parts)
    parts.append(legend_svg)

    # Domains: data, markers and reference lines, extended to nice ticks.
    xs += [r.value for r in refs if r.axis == "x"]
    ys += [r.value for r in refs if r.axis == "y"]
    x_lo, x_hi = min(xs), max(xs)
    x_ticks = log_ticks(x_lo, x_hi) if chart.x_log else _axis_ticks(x_lo, x_hi, chart.x_format)
    y_lo, y_hi = min(ys), max(ys)
    if chart.y_zero:
        y_lo, y_hi = min(y_lo, 0.0), max(y_hi, 0.0)
    y_ticks = _axis_ticks(y_lo, y_hi, chart.y_format)
    x_labels = _axis_labels(x_ticks, chart.x_format)
    y_labels = _axis_labels(y_ticks, chart.y_format)

    box = _Box(
        left=_left_band(y_labels),
        top=header_bottom + PLOT_TOP_GAP_PX,
        right=width - PAD_PX - _text_width(x_labels[-1], TICK_FONT_PX) / 2,
        bottom=height - PAD_PX - _caption_height(caption) - _bottom_band(),
    )
    box = _Box(box.left, box.top, max(box.right, box.left + 1), max(box.bottom, box.top + 1))
    sx = _Scale(x_ticks[0], x_ticks[-1], box.left, box.right, log=chart.x_log)
    sy = _Scale(y_ticks[0], y_ticks[-1], box.bottom, box.top)

    parts.append(
        f'<rect class="plot-area" x="{_n(box.left)}" y="{_n(box.top)}" width="{_n(box.width)}"'
        f' height="{_n(box.height)}" fill="none"/>'
    )
    parts.append(_value_ticks_vertical(sy, y_ticks, y_labels, box, "y-axis"))
    parts.append(_value_ticks_horizontal(sx, x_ticks, x_labels, box, "x-axis"))
    if y_ticks[0] < 0 < y_ticks[-1]:
        y0 = sy(0.0)
        parts.append(
            f'<line class="zero-line" x1="{_n(box.left)}" y1="{_n(y0)}" x2="{_n(box.right)}" y2="{_n(y0)}" stroke="{AXIS}"/>'
        )
    parts.append(_y_axis_label(chart.y_label, box))
    parts.append(_x_axis_label(chart.x_label, box, width))

    placed: list[_Box] = []
    label_bounds = _Box(box.left, box.top - 2, width - PAD_PX, box.bottom)
    ref_parts: list[str] = []
    for ref in refs:
        ref_parts.append(
            f'<g class="ref-line" data-axis="{ref.axis}" data-value="{float(ref.value)!r}">'
        )
        if ref.axis == "x":
            x = sx(ref.value)
            ref_parts.append(
                f'<line x1="{_n(x)}" y1="{_n(box.top)}" x2="{_n(x)}" y2="{_n(box.bottom)}"'
                f' stroke="{MUTED_INK}" stroke-width="1.5" stroke-dasharray="{REF_DASH}"/>'
            )
            base = box.top + ANNOTATION_FONT_PX + 2
            candidates = [
                (x + 5 if side == "start" else x - 5, base + dy, side)
                for dy in (0.0, 16.0, 32.0)
                for side in ("start", "end")
            ]
        else:
            y = sy(ref.value)
            ref_parts.append(
                f'<line x1="{_n(box.left)}" y1="{_n(y)}" x2="{_n(box.right)}" y2="{_n(y)}"'
                f' stroke="{MUTED_INK}" stroke-width="1.5" stroke-dasharray="{REF_DASH}"/>'
            )
            candidates = [
                (box.right - 4, y - 5, "end"),
                (box.right - 4, y + ANNOTATION_FONT_PX + 3, "end"),
                (box.left + 4, y - 5, "start"),
                (box.left + 4, y + ANNOTATION_FONT_PX + 3, "start"),
            ]
        lx, ly, anchor = _place_label(candidates, ref.label, placed, label_bounds)
        ref_parts.append(
            _text(
                lx,
                ly,
                ref.label,
                size=ANNOTATION_FONT_PX,
                anchor=anchor,
                fill=MUTED_INK,
                weight="600",
                halo=True,
            )
        )
        ref_parts.append("</g>")
    parts.extend(ref_parts)

    parts.append('<g class="series" fill="none">')
    for index, (series, pts) in enumerate(zip(chart.series, series_points, strict=True)):
        if not pts:
            continue
        color = PALETTE[index % len(PALETTE)]
        coords = [(sx(x), sy(y)) for x, y in pts]
        d = [f"M{_n(coords[0][0])} {_n(coords[0][1])}"]
        for px, py in coords[1:]:
            d.append(f"H{_n(px)} V{_n(py)}" if series.step else f"L{_n(px)} {_n(py)}")
        dash = f' stroke-dasharray="{DASH}"' if series.dashed else ""
        parts.append(
            f'<path data-series="{_esc(series.name)}" d="{" ".join(d)}" stroke="{color}"'
            f' stroke-width="{SERIES_STROKE_PX}" stroke-linejoin="round" stroke-linecap="round"{dash}/>'
        )
        if len(coords) == 1:
            parts.append(
                f'<circle class="point" data-series="{_esc(series.name)}" cx="{_n(coords[0][0])}"'
                f' cy="{_n(coords[0][1])}" r="3.5" fill="{color}"/>'
            )
    parts.append("</g>")

    for marker in markers:
        mx, my = sx(marker.x), sy(marker.y)
        placed.append(_Box(mx - 5, my - 5, mx + 5, my + 5))
    for marker in markers:
        mx, my = sx(marker.x), sy(marker.y)
        right_half = mx > box.left + box.width * 0.6
        sides = ("end", "start") if right_half else ("start", "end")
        candidates = []
        for dy in (-9.0, ANNOTATION_FONT_PX + 7, -9.0 - 16, ANNOTATION_FONT_PX + 7 + 16):
            for side in sides:
                candidates.append((mx - 9 if side == "end" else mx + 9, my + dy, side))
        lx, ly, anchor = _place_label(candidates, marker.label, placed, label_bounds)
        parts.append(
            f'<g class="marker" data-x="{float(marker.x)!r}" data-y="{float(marker.y)!r}">'
            f'<circle cx="{_n(mx)}" cy="{_n(my)}" r="5" fill="{INK}" stroke="#ffffff" stroke-width="1.5"/>'
            + _text(
                lx,
                ly,
                marker.label,
                size=ANNOTATION_FONT_PX,
                anchor=anchor,
                weight="600",
                halo=True,
            )
            + "</g>"
        )
    parts.append(_caption_svg(caption, height))
    parts.append("</svg>")
    return "".join(parts)


# --- Bar charts --------------------------------------------------------------------------------


def _bar_desc(chart: BarChart) -> str:
    names = ", ".join(name for name, _ in chart.stacks if name)
    text = f"Bar chart of {chart.value_label} by {chart.category_label}"
    text += f" for {len(chart.categories)} categories"
    return text + (f"; segments: {names}." if names else ".")


def _render_bar(chart: BarChart, width: int, height: int, chart_id: str, show_caption: bool) -> str:
    n = len(chart.categories)
    for name, values in chart.stacks:
        if len(values) != n:
            raise ValueError(
                f"bar segment {name!r} has {len(values)} values for {n} categories; give one per category"
            )
    if chart.highlight is not None and not 0 <= chart.highlight < n:
        raise ValueError(f"highlight={chart.highlight} is not a category index (0..{n - 1})")

    # Stack each category: positive values upwards from 0, negative ones downwards.
    segments: list[
        list[tuple[str, int, float, float, float]]
    ] = []  # (name, seg index, value, start, end)
    totals: list[float] = []
    extents: list[tuple[float, float]] = []
    for j in range(n):
        pos = neg = 0.0
        row: list[tuple[str, int, float, float, float]] = []
        for s, (name, values) in enumerate(chart.stacks):
            v = values[j]
            if not _finite(v):
                continue
            v = float(v)
            if v >= 0:
                row.append((name, s, v, pos, pos + v))
                pos += v
            else:
                row.append((name, s, v, neg, neg + v))
                neg += v
        segments.append(row)
        totals.append(pos + neg)
        extents.append((neg, pos))
    has_data = n > 0 and any(row for row in segments)

    legend = [
        _LegendEntry(name, PALETTE[s % len(PALETTE)], "box")
        for s, (name, _) in enumerate(chart.stacks)
        if name and (len(chart.stacks) > 1 or has_data)
    ]
    title_svg, header_bottom, legend_svg = _header(chart.title, width, legend if has_data else [])
    caption = _caption_lines(chart.caption, width, show_caption)
    if chart.horizontal and has_data:
        plot_height = height - PAD_PX - _caption_height(caption) - _bottom_band()
        plot_height -= header_bottom + PLOT_TOP_GAP_PX
        height += max(0, math.ceil(n * MIN_BAR_BAND_PX - plot_height))
    desc = chart.caption or _bar_desc(chart)
    parts = _svg_open(chart_id, width, height, chart.title, desc)
    parts.extend(title_svg)
    if not has_data:
        _no_data(parts, header_bottom, width, height - PAD_PX - _caption_height(caption))
        parts.append(_caption_svg(caption, height))
        parts.append("</svg>")
        return "".join(parts)
    parts.append(legend_svg)

    v_lo = min(0.0, *(lo for lo, _ in extents))
    v_hi = max(0.0, *(hi for _, hi in extents))
    ticks = _axis_ticks(v_lo, v_hi, chart.value_format)
    tick_labels = _axis_labels(ticks, chart.value_format)
    total_labels = [format_tick(t, chart.value_format) for t in totals]
    total_room = TICK_FONT_PX * LINE_HEIGHT if chart.show_totals else 0.0
    any_negative_total = chart.show_totals and any(t < 0 for t in totals)
    any_positive_total = chart.show_totals and any(t >= 0 for t in totals)
    top = header_bottom + PLOT_TOP_GAP_PX
    bottom_fixed = height - PAD_PX - _caption_height(caption)

    if chart.horizontal:
        cat_max = width * 0.35
        cat_width = max(
            _text_width(_fit(c, cat_max, TICK_FONT_PX, bold=True), TICK_FONT_PX, bold=True)
            for c in chart.categories
        )
        left = (
            PAD_PX
            + AXIS_LABEL_FONT_PX * LINE_HEIGHT
            + AXIS_LABEL_GAP_PX
            + cat_width
            + TICK_GAP_PX
            + TICK_LEN_PX
        )
        total_w = (
            max(_text_width(t, TICK_FONT_PX, bold=True) for t in total_labels) + TOTAL_LABEL_GAP_PX
        )
        right_need = max(
            _text_width(tick_labels[-1], TICK_FONT_PX) / 2,
            total_w if any_positive_total else 0.0,
        )
        left_extra = total_w if any_negative_total else 0.0
        box = _Box(left, top, width - PAD_PX - right_need, bottom_fixed - _bottom_band())
        box = _Box(box.left, box.top, max(box.right, box.left + 1), max(box.bottom, box.top + 1))
        value_box = _Box(box.left + left_extra, box.top, box.right, box.bottom)
        sv = _Scale(ticks[0], ticks[-1], value_box.left, value_box.right)
        band = box.height / n
        parts.append(
            f'<rect class="plot-area" x="{_n(box.left)}" y="{_n(box.top)}" width="{_n(box.width)}"'
            f' height="{_n(box.height)}" fill="none"/>'
        )
        parts.append(_value_ticks_horizontal(sv, ticks, tick_labels, box, "x-axis"))
        cat_axis = ['<g class="y-axis">']
        cat_axis.append(
            f'<line x1="{_n(box.left)}" y1="{_n(box.top)}" x2="{_n(box.left)}" y2="{_n(box.bottom)}" stroke="{AXIS}"/>'
        )
        for j, category in enumerate(chart.categories):
            mid = box.top + band * (j + 0.5)
            bold = j == chart.highlight
            shown = _fit(category, cat_max, TICK_FONT_PX, bold=True)
            cat_axis.append(
                _text(
                    box.left - TICK_LEN_PX - TICK_GAP_PX,
                    mid + TICK_FONT_PX * 0.35,
                    shown,
                    size=TICK_FONT_PX,
                    anchor="end",
                    weight="bold" if bold else None,
                    full=category,
                    attrs='class="category-label"' + (' data-highlight="true"' if bold else ""),
                )
            )
        cat_axis.append("</g>")
        parts.extend(cat_axis)
        parts.append(_y_axis_label(chart.category_label, box))
        parts.append(_x_axis_label(chart.value_label, box, width))
        thickness = min(band * BAR_FILL, MAX_BAR_PX)
        parts.append('<g class="bars">')
        for j, category in enumerate(chart.categories):
            y0 = box.top + band * (j + 0.5) - thickness / 2
            y_top, y_bot = round(y0, 1), round(y0 + thickness, 1)
            for name, s, value, start, end in segments[j]:
                a, b = round(sv(start), 1), round(sv(end), 1)
                parts.append(
                    _bar_rect(
                        min(a, b),
                        y_top,
                        abs(b - a),
                        y_bot - y_top,
                        category,
                        name,
                        value,
                        s,
                        chart.value_format,
                    )
                )
            lo, hi = extents[j]
            if j == chart.highlight:
                a, b = sv(lo), sv(hi)
                parts.append(
                    _highlight_rect(
                        min(a, b) - 3, y_top - 3, abs(b - a) + 6, y_bot - y_top + 6, category
                    )
                )
            if chart.show_totals:
                total = totals[j]
                end_px = sv(hi) if total >= 0 else sv(lo)
                pad = TOTAL_LABEL_GAP_PX + (3 if j == chart.highlight else 0)
                parts.append(
                    _text(
                        end_px + pad if total >= 0 else end_px - pad,
                        (y_top + y_bot) / 2 + TICK_FONT_PX * 0.35,
                        total_labels[j],
                        size=TICK_FONT_PX,
                        anchor="start" if total >= 0 else "end",
                        weight="bold",
                        attrs=f'class="bar-total" data-category="{_esc(category)}" data-value="{total!r}"',
                    )
                )
        parts.append("</g>")
        if ticks[0] < 0:
            x0 = sv(0.0)
            parts.append(
                f'<line class="zero-line" x1="{_n(x0)}" y1="{_n(box.top)}" x2="{_n(x0)}" y2="{_n(box.bottom)}" stroke="{INK}"/>'
            )
    else:
        band_guess = (width - _left_band(tick_labels) - PAD_PX) / n
        wrapped = [
            _wrap(c, max(band_guess - 6, TICK_FONT_PX), TICK_FONT_PX, 2, bold=True) or [""]
            for c in chart.categories
        ]
        cat_lines = max(len(w) for w in wrapped)
        bottom_band = _bottom_band() + (cat_lines - 1) * TICK_FONT_PX * LINE_HEIGHT
        box = _Box(
            _left_band(tick_labels),
            top + (total_room if any_positive_total else 0.0),
            width - PAD_PX,
            bottom_fixed - bottom_band - (total_room if any_negative_total else 0.0),
        )
        box = _Box(box.left, box.top, max(box.right, box.left + 1), max(box.bottom, box.top + 1))
        sv = _Scale(ticks[0], ticks[-1], box.bottom, box.top)
        band = box.width / n
        parts.append(
            f'<rect class="plot-area" x="{_n(box.left)}" y="{_n(box.top)}" width="{_n(box.width)}"'
            f' height="{_n(box.height)}" fill="none"/>'
        )
        parts.append(_value_ticks_vertical(sv, ticks, tick_labels, box, "y-axis"))
        label_top = box.bottom + (total_room if any_negative_total else 0.0)
        cat_axis = ['<g class="x-axis">']
        cat_axis.append(
            f'<line x1="{_n(box.left)}" y1="{_n(box.bottom)}" x2="{_n(box.right)}" y2="{_n(box.bottom)}" stroke="{AXIS}"/>'
        )
        for j, category in enumerate(chart.categories):
            mid = box.left + band * (j + 0.5)
            bold = j == chart.highlight
            for line_no, line in enumerate(wrapped[j]):
                cat_axis.append(
                    _text(
                        mid,
                        label_top
                        + TICK_LEN_PX
                        + TICK_GAP_PX
                        + TICK_FONT_PX
                        + line_no * TICK_FONT_PX * LINE_HEIGHT,
                        line,
                        size=TICK_FONT_PX,
                        anchor="middle",
                        weight="bold" if bold else None,
                        full=category if line_no == 0 else None,
                        attrs='class="category-label"' + (' data-highlight="true"' if bold else ""),
                    )
                )
        cat_axis.append("</g>")
        parts.extend(cat_axis)
        parts.append(_y_axis_label(chart.value_label, box))
        x_label_box = _Box(
            box.left, box.top, box.right, label_top + (cat_lines - 1) * TICK_FONT_PX * LINE_HEIGHT
        )
        parts.append(_x_axis_label(chart.category_label, x_label_box, width))
        thickness = min(band * BAR_FILL, MAX_BAR_PX)
        parts.append('<g class="bars">')
        for j, category in enumerate(chart.categories):
            x0 = box.left + band * (j + 0.5) - thickness / 2
            x_left, x_right = round(x0, 1), round(x0 + thickness, 1)
            for name, s, value, start, end in segments[j]:
                a, b = round(sv(start), 1), round(sv(end), 1)
                parts.append(
                    _bar_rect(
                        x_left,
                        min(a, b),
                        x_right - x_left,
                        abs(b - a),
                        category,
                        name,
                        value,
                        s,
                        chart.value_format,
                    )
                )
            lo, hi = extents[j]
            if j == chart.highlight:
                a, b = sv(lo), sv(hi)
                parts.append(
                    _highlight_rect(
                        x_left - 3, min(a, b) - 3, x_right - x_left + 6, abs(b - a) + 6, category
                    )
                )
            if chart.show_totals:
                total = totals[j]
                pad = TOTAL_LABEL_GAP_PX + (3 if j == chart.highlight else 0)
                y = sv(hi) - pad if total >= 0 else sv(lo) + pad + TICK_FONT_PX
                parts.append(
                    _text(
                        (x_left + x_right) / 2,
                        y,
                        total_labels[j],
                        size=TICK_FONT_PX,
                        anchor="middle",
                        weight="bold",
                        attrs=f'class="bar-total" data-category="{_esc(category)}" data-value="{total!r}"',
                    )
                )
        parts.append("</g>")
        if ticks[0] < 0:
            y0 = sv(0.0)
            parts.append(
                f'<line class="zero-line" x1="{_n(box.left)}" y1="{_n(y0)}" x2="{_n(box.right)}" y2="{_n(y0)}" stroke="{INK}"/>'
            )
    parts.append(_caption_svg(caption, height))
    parts.append("</svg>")
    return "".join(parts)


def _bar_rect(
    x: float,
    y: float,
    w: float,
    h: float,
    category: str,
    segment: str,
    value: float,
    index: int,
    fmt: ValueFormat,
) -> str:
    color = PALETTE[index % len(PALETTE)]
    tooltip = (
        f"{category} — {segment}: {format_tick(value, fmt)}"
        if segment
        else f"{category}: {format_tick(value, fmt)}"
    )
    return (
        f'<rect class="bar" data-category="{_esc(category)}" data-segment="{_esc(segment)}"'
        f' data-value="{value!r}" x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(h)}"'
        f' fill="{color}" stroke="#ffffff" stroke-width="0.5"><title>{_esc(tooltip)}</title></rect>'
    )


def _highlight_rect(x: float, y: float, w: float, h: float, category: str) -> str:
    return (
        f'<rect class="bar-highlight" data-category="{_esc(category)}" x="{_n(x)}" y="{_n(y)}"'
        f' width="{_n(w)}" height="{_n(h)}" fill="none" stroke="{INK}" stroke-width="2" rx="2"/>'
    )


# --- Entry point -------------------------------------------------------------------------------


def render_svg(
    chart: Chart,
    *,
    width_px: int = 720,
    height_px: int = 400,
    show_caption: bool = False,
    chart_id: str | None = None,
) -> str:
    """Inline SVG text (no XML declaration), deterministic for the same input.

    The caption always goes into ``<desc>``; ``show_caption=True`` also draws it under the chart
    (for an SVG shown on its own; the HTML report puts it in a ``<figcaption>`` instead).
    ``chart_id`` prefixes the ``<title>``/``<desc>`` ids; by default it is a hash of the chart, so
    different charts on one page get different ids. Horizontal bar charts grow taller than
    ``height_px`` when needed to give every bar ``MIN_BAR_BAND_PX``.
    """
    width_px = max(int(width_px), 120)
    height_px = max(int(height_px), 120)
    ident = chart_id or _chart_id(chart, width_px, height_px)
    if isinstance(chart, LineChart):
        return _render_line(chart, width_px, height_px, ident, show_caption)
    return _render_bar(chart, width_px, height_px, ident, show_caption)
