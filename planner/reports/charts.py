"""Report charts: what to draw (the chart specs the document builders fill in) and the drawing, done
by matplotlib into inline SVG for the HTML reports.

The specs (:class:`LineChart`, :class:`BarChart` with :class:`Series`, :class:`Marker`,
:class:`RefLine`) are plain frozen dataclasses; importing this module does not import matplotlib.
:func:`to_figure` builds a :class:`matplotlib.figure.Figure` with the object-oriented API (no pyplot,
no backend switching) and :func:`render_svg` writes it as the text of one ``<svg>`` element: text
stays text (``svg.fonttype: none``), nothing from outside the file is needed, and the same input
gives the same bytes (a fixed ``svg.hashsalt``, no date or version in the output). Every rcParam is
set through :func:`matplotlib.rc_context` around the drawing only; the global state stays untouched.
"""

from __future__ import annotations

import hashlib
import io
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from itertools import accumulate, pairwise
from typing import TYPE_CHECKING, Any, Literal

from planner.reports.chart_ticks import (
    DURATIONS_HOURS,
    HOUR_UNIT_FACTORS,
    ValueFormat,
    axis_labels,
    format_tick,
    format_value,
    hours_unit,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "BarChart",
    "Chart",
    "LineChart",
    "Marker",
    "RefLine",
    "Series",
    "ValueFormat",
    "format_tick",
    "format_value",
    "render_svg",
    "to_figure",
]


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

# --- Look ---------------------------------------------------------------------------------------

# Okabe & Ito, "Color Universal Design (CUD): how to make figures and presentations that are
# friendly to colorblind people" (2008), https://jfly.uni-koeln.de/color/ — the eight colours stay
# distinguishable under the common colour-vision deficiencies. Ordered so the first ones have the
# most contrast on white; yellow (#F0E442) comes last because thin yellow lines are hard to see.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
INK = "#1a1a1a"  # text and markers
MUTED_INK = "#555555"  # tick labels, reference lines
GRID = "#e3e3e3"
AXIS = "#8a8a8a"

# Sizes in px (the figure is drawn at 72 dpi, so one point is one px of the SVG). Issue 7 asks for
# readable fonts: title >= 15 px, every other label >= 12 px.
TITLE_FONT_PX = 16.0
LABEL_FONT_PX = 13.0  # axis labels, legend, caption
TICK_FONT_PX = 12.0  # tick labels, bar totals, annotations
PAD_PX = 10.0  # empty border around everything
SERIES_STROKE_PX = 2.5
DASH = (7.0, 5.0)  # px on, px off
REF_DASH = (4.0, 4.0)
BAR_FILL = 0.62  # bar thickness as a share of its band
MAX_BAR_PX = 56.0  # thickest bar
MIN_BAR_BAND_PX = 24.0  # horizontal bar charts grow taller so each bar gets at least this much
MAX_CATEGORY_CHARS = 40  # longer category names are cut with an ellipsis (the tooltip has all)
NO_DATA = "No data to plot"

# Values beyond +-1e15 cannot be a cost, hour count or share the planner produces; they are
# dropped like NaN.
MAX_ABS_VALUE = 1e15
# A log axis draws values between these bounds; outside them the transform underflows or overflows.
_LOG_AXIS_MIN = 1e-300
_LOG_AXIS_MAX = 1e300


def _rc(salt: str) -> dict[Any, Any]:  # rc_context's stubs want every key as a Literal
    """The rcParams of every chart, applied with ``rc_context`` while a chart is built and saved."""
    return {
        "svg.fonttype": "none",  # <text> elements: searchable, selectable, small
        "svg.hashsalt": salt,  # stable ids of clip paths and markers, distinct between charts
        "text.parse_math": False,  # "$1k to $2k" is money, not mathtext
        "text.usetex": False,
        "font.family": "sans-serif",
        "font.sans-serif": ["DejaVu Sans"],  # bundled with matplotlib: same metrics everywhere
        "font.size": TICK_FONT_PX,
        "text.color": INK,
        "axes.labelcolor": INK,
        "axes.labelsize": LABEL_FONT_PX,
        "axes.edgecolor": AXIS,
        "axes.linewidth": 1.0,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.axisbelow": True,
        "axes.unicode_minus": False,  # "-$10": the same hyphen as the report tables
        "grid.color": GRID,
        "grid.linewidth": 1.0,
        "xtick.color": AXIS,
        "ytick.color": AXIS,
        "xtick.labelcolor": MUTED_INK,
        "ytick.labelcolor": MUTED_INK,
        "xtick.labelsize": TICK_FONT_PX,
        "ytick.labelsize": TICK_FONT_PX,
        "xtick.major.size": 5.0,
        "ytick.major.size": 5.0,
        "xtick.major.width": 1.0,
        "ytick.major.width": 1.0,
        "legend.fontsize": LABEL_FONT_PX,
        "legend.frameon": False,
        "figure.titlesize": TITLE_FONT_PX,
        "figure.titleweight": "bold",
        "figure.facecolor": "#ffffff",
        "savefig.facecolor": "#ffffff",
    }


# The SVG carries no creator, date or format: output bytes depend on the chart only.
_NO_METADATA = {"Creator": None, "Date": None, "Format": None, "Type": None}


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


def _finite(value: float) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and abs(value) <= MAX_ABS_VALUE


def _on_x_axis(x: float, x_log: bool) -> bool:
    """Whether ``x`` can be placed on the x axis: finite, and inside the log range on a log axis."""
    return _finite(x) and (not x_log or _LOG_AXIS_MIN <= x <= _LOG_AXIS_MAX)


def _chart_id(chart: Chart, width: int, height: int) -> str:
    digest = hashlib.sha256(f"{chart!r}|{width}x{height}".encode("utf-8", "replace")).hexdigest()
    return "chart-" + digest[:10]


def _size(chart: Chart, width_px: int, height_px: int) -> tuple[int, int]:
    """The drawing's size: at least 120 px each way; horizontal bar charts grow taller so that
    every bar gets ``MIN_BAR_BAND_PX`` (about 150 px go to title, legend and value axis)."""
    width, height = max(int(width_px), 120), max(int(height_px), 120)
    if isinstance(chart, BarChart) and chart.horizontal:
        height = max(height, math.ceil(150 + MIN_BAR_BAND_PX * len(chart.categories)))
    return width, height


# --- Axes: ticks and labels in the planner's formats -------------------------------------------


def _value_axis(ax: Axes, which: Literal["x", "y"], fmt: ValueFormat, log: bool = False) -> None:
    """Ticks and tick labels of one value axis, from its limits once all data is on the axes.

    Linear axes tick at 1, 2, 2.5 or 5 x 10^k (at most seven ticks) counted in the axis unit: an
    hour axis shown in days ticks at 2 d, not at 40 h. Log axes tick at decades (with 2 and 5
    within each when the axis spans two decades or fewer), or at round durations (6 h, 12 h, 24 h,
    48 h, 5 d, 14 d, 30 d) for hours. The labels are :func:`axis_labels`' (one unit for the axis,
    never two alike) through a ``FuncFormatter``.
    """
    from matplotlib.ticker import (
        FixedLocator,
        FuncFormatter,
        LogLocator,
        MaxNLocator,
        NullFormatter,
        NullLocator,
    )

    axis = ax.xaxis if which == "x" else ax.yaxis
    lo, hi = sorted(ax.get_xlim() if which == "x" else ax.get_ylim())
    unit = None
    if log:
        durations = [d for d in DURATIONS_HOURS if lo <= d <= hi] if fmt == "hours" else []
        if len(durations) >= 3:
            ticks = FixedLocator(durations, nbins=6).tick_values(lo, hi)
        else:
            subs = (1.0, 2.0, 5.0) if math.log10(hi) - math.log10(lo) <= 2 else (1.0,)
            ticks = LogLocator(subs=subs, numticks=9).tick_values(lo, hi)
    else:
        unit = hours_unit(max(abs(lo), abs(hi))) if fmt == "hours" else None
        factor = HOUR_UNIT_FACTORS[unit] if unit else 1.0
        nice = MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10])
        ticks = [t / factor for t in nice.tick_values(lo * factor, hi * factor)]
    slack = (hi - lo) * 1e-9
    kept = [float(t) for t in ticks if lo - slack <= t <= hi + slack]
    labels = axis_labels(kept, fmt, log=log, unit=unit)

    def label(value: float, pos: int | None) -> str:
        if pos is not None and 0 <= pos < len(kept) and kept[pos] == value:
            return labels[pos]
        return format_tick(value, fmt)

    axis.set_major_locator(FixedLocator(kept))
    axis.set_major_formatter(FuncFormatter(label))
    axis.set_minor_locator(NullLocator())
    axis.set_minor_formatter(NullFormatter())


def _legend(fig: Figure, ax: Axes, handles: Sequence[Any], labels: Sequence[str]) -> None:
    """The legend as rows under the title, outside the plot so it never covers data; as many
    entries to a row as fit in the figure's width (measured with matplotlib's text metrics)."""
    if not handles:
        return
    import matplotlib as mpl

    em = LABEL_FONT_PX
    entry = (mpl.rcParams["legend.handlelength"] + mpl.rcParams["legend.handletextpad"]) * em
    widths = [entry + _text_width(label, LABEL_FONT_PX) for label in labels]
    room = fig.bbox.width - 2 * PAD_PX
    ncols = len(labels)
    while ncols > 1:
        # Filled column by column, the first len % ncols columns one entry longer (as Legend does).
        rows, long = divmod(len(labels), ncols)
        ends = list(accumulate([rows + 1] * long + [rows] * (ncols - long)))
        needed = sum(max(widths[a:b]) for a, b in zip([0, *ends], ends, strict=False) if b > a)
        needed += (ncols - 1) * mpl.rcParams["legend.columnspacing"] * em
        if needed <= room:
            break
        ncols -= 1
    # Above the plot area and level with the title's left edge: a legend of the axes, so that
    # constrained layout makes room for it under the title.
    from matplotlib.transforms import blended_transform_factory

    ax.legend(
        handles,
        labels,
        loc="lower left",
        bbox_to_anchor=(PAD_PX / fig.bbox.width, 1.0),
        bbox_transform=blended_transform_factory(fig.transFigure, ax.transAxes),
        borderaxespad=0.6,
        borderpad=0.0,
        ncols=ncols,
        alignment="left",
    )


def _text_width(text: str, size: float, bold: bool = False) -> float:
    """Width in px of ``text`` in the chart font, from matplotlib's font metrics."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    font = FontProperties(size=size, weight="bold" if bold else "normal")
    return float(text_to_path.get_text_width_height_descent(text, font, ismath=False)[0])


def _wrap(text: str, max_px: float, size: float, bold: bool = False) -> str:
    """``text`` broken into lines of at most ``max_px`` (a single long word keeps its line).
    matplotlib's own ``wrap=True`` would measure text with an even number of "$" as mathtext."""
    lines: list[str] = []
    for word in _xml_safe(text).split(" "):
        if not word:
            continue
        if lines and _text_width(f"{lines[-1]} {word}", size, bold) <= max_px:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return "\n".join(lines)


def _figure(chart: Chart, width: int, height: int, show_caption: bool) -> Figure:
    from matplotlib.figure import Figure
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    layout = ConstrainedLayoutEngine(w_pad=PAD_PX / 72, h_pad=PAD_PX / 72)  # pads in inches
    fig = Figure(figsize=(width / 72, height / 72), dpi=72, layout=layout)
    room = width - 2 * PAD_PX
    left = {"x": PAD_PX / width, "ha": "left", "multialignment": "left"}
    fig.suptitle(_wrap(chart.title, room, TITLE_FONT_PX, bold=True), **left)
    if show_caption and chart.caption:
        caption = _wrap(chart.caption, room, LABEL_FONT_PX)
        fig.supxlabel(caption, fontsize=LABEL_FONT_PX, style="italic", color=MUTED_INK, **left)
    return fig


def _no_data(fig: Figure) -> None:
    fig.text(0.5, 0.5, NO_DATA, ha="center", va="center", fontsize=14, color=MUTED_INK)


# --- Line charts --------------------------------------------------------------------------------


def _clean_points(series: Series, x_log: bool) -> list[tuple[float, float]]:
    points = [(float(x), float(y)) for x, y in series.points if _on_x_axis(x, x_log) and _finite(y)]
    return sorted(points, key=lambda p: p[0])


_Spot = tuple[tuple[float, float], tuple[float, float], str, str]  # xy, offset (pt), ha, va


_LABEL_STYLE: dict[str, Any] = {
    "textcoords": "offset points",
    "fontweight": "bold",
    "bbox": {"boxstyle": "square,pad=0.1", "facecolor": "#ffffff", "edgecolor": "none"},
    "zorder": 5,
}
_REF_STYLE: dict[str, Any] = {
    "color": MUTED_INK,
    "linewidth": 1.5,
    "linestyle": (0, tuple(d / 1.5 for d in REF_DASH)),
    "zorder": 3,
}
_Note = tuple[Any, list[_Spot]]  # a label with the places it may go, best first


def _line_figure(fig: Figure, chart: LineChart) -> None:
    """Series, reference lines and labelled markers on one axes; labels placed clear of lines."""
    series_points = [_clean_points(s, chart.x_log) for s in chart.series]
    markers = [m for m in chart.markers if _on_x_axis(m.x, chart.x_log) and _finite(m.y)]
    refs = [r for r in chart.ref_lines if _on_x_axis(r.value, chart.x_log and r.axis == "x")]
    xs = [x for pts in series_points for x, _ in pts] + [m.x for m in markers]
    if not xs:
        _no_data(fig)
        return
    ax = fig.add_subplot()
    if chart.x_log:
        ax.set_xscale("log")
    ax.set_xlabel(_xml_safe(chart.x_label))
    ax.set_ylabel(_xml_safe(chart.y_label))
    ax.grid(True, axis="both")
    handles, labels = _draw_series(ax, chart, series_points)
    notes = [_draw_ref_line(ax, ref) for ref in refs]
    notes += _draw_markers(ax, chart, markers, xs)
    _y_range(ax, chart, series_points, markers, refs)
    _value_axis(ax, "x", chart.x_format, log=chart.x_log)
    _value_axis(ax, "y", chart.y_format)
    _legend(fig, ax, handles, labels)
    if notes:  # labels keep clear of the series and of the reference lines
        lines = [
            _step_points(pts) if series.step else pts
            for series, pts in zip(chart.series, series_points, strict=True)
        ]
        (x_lo, x_hi), (y_lo, y_hi) = ax.get_xlim(), ax.get_ylim()
        lines += [
            [(r.value, y_lo), (r.value, y_hi)]
            if r.axis == "x"
            else [(x_lo, r.value), (x_hi, r.value)]
            for r in refs
        ]
        _place_labels(fig, ax, notes, [(m.x, m.y) for m in markers], lines)


def _draw_series(
    ax: Any, chart: LineChart, series_points: list[list[tuple[float, float]]]
) -> tuple[list[Any], list[str]]:
    """One line per series with points (a lone point is drawn as a dot); legend handles."""
    handles, labels = [], []
    for index, (series, pts) in enumerate(zip(chart.series, series_points, strict=True)):
        if not pts:
            continue
        (line,) = ax.plot(
            [x for x, _ in pts],
            [y for _, y in pts],
            color=PALETTE[index % len(PALETTE)],
            linewidth=SERIES_STROKE_PX,
            linestyle=(0, tuple(d / SERIES_STROKE_PX for d in DASH)) if series.dashed else "-",
            drawstyle="steps-post" if series.step else "default",
            solid_joinstyle="round",
            solid_capstyle="round",
            marker="o" if len(pts) == 1 else "None",
            markersize=7,
            label=_xml_safe(series.name),
            zorder=2,
        )
        if series.name:
            handles.append(line)
            labels.append(_xml_safe(series.name))
    return handles, labels


def _draw_ref_line(ax: Any, ref: RefLine) -> _Note:
    """A dashed reference line and its label, with the label's candidate places along it."""
    if ref.axis == "x":
        ax.axvline(ref.value, **_REF_STYLE)
        coords: Any = ("data", "axes fraction")
        spots: list[_Spot] = [
            (
                (ref.value, 1.0),
                (5.0 * side, -4.0 - 16 * step),
                "left" if side > 0 else "right",
                "top",
            )
            for step in range(4)
            for side in (1, -1)
        ]
    else:
        ax.axhline(ref.value, **_REF_STYLE)
        coords = ("axes fraction", "data")
        spots = [
            ((end, ref.value), (-4.0 if end else 4.0, dy), "right" if end else "left", va)
            for dy, va in ((4.0, "bottom"), (-4.0, "top"))
            for end in (1.0, 0.0)
        ]
    note = ax.annotate(
        _xml_safe(ref.label), *spots[0][:2], xycoords=coords, color=MUTED_INK, **_LABEL_STYLE
    )
    return note, spots


def _draw_markers(ax: Any, chart: LineChart, markers: list[Marker], xs: list[float]) -> list[_Note]:
    """Dots for the markers and their labels, each with candidate places around its dot."""
    if not markers:
        return []
    ax.plot(
        [m.x for m in markers],
        [m.y for m in markers],
        linestyle="None",
        marker="o",
        markersize=10,
        markerfacecolor=INK,
        markeredgecolor="#ffffff",
        markeredgewidth=1.5,
        label="_markers",
        zorder=4,
    )
    position = [math.log10(x) if chart.x_log else x for x in xs]
    lo, hi = min(position), max(position)
    notes: list[_Note] = []
    for marker in markers:
        at = math.log10(marker.x) if chart.x_log else marker.x
        # Near the right edge the label grows to the left of its dot, elsewhere to the right.
        sides = (-1, 1) if hi > lo and (at - lo) / (hi - lo) > 0.6 else (1, -1)
        spots = [
            ((marker.x, marker.y), (9.0 * side, dy), "left" if side > 0 else "right", va)
            for dy in (7.0, -7.0, 23.0, -23.0, 39.0, -39.0, 55.0, -55.0)
            for va in ["bottom" if dy > 0 else "top"]
            for side in sides
        ]
        notes.append((ax.annotate(_xml_safe(marker.label), *spots[0][:2], **_LABEL_STYLE), spots))
    return notes


def _y_range(
    ax: Any,
    chart: LineChart,
    series_points: list[list[tuple[float, float]]],
    markers: list[Marker],
    refs: list[RefLine],
) -> None:
    """With ``y_zero`` the axis ends at 0 on the side the data does not cross; a zero line
    where the range spans zero."""
    if chart.y_zero:
        ys = [y for pts in series_points for _, y in pts] + [m.y for m in markers]
        ys += [r.value for r in refs if r.axis == "y"]
        y_lo, y_hi = ax.get_ylim()
        if min(ys) == max(ys) == 0:
            ax.set_ylim(0.0, 1.0)
        else:
            ax.set_ylim(0.0 if min(ys) >= 0 else y_lo, 0.0 if max(ys) <= 0 else y_hi)
    y_lo, y_hi = ax.get_ylim()
    if y_lo < 0 < y_hi:
        ax.axhline(0.0, color=AXIS, linewidth=1.0, zorder=1)


def _step_points(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The corners of a steps-post line through ``points``."""
    out = list(points[:1])
    for (_, y0), (x1, y1) in pairwise(points):
        out += [(x1, y0), (x1, y1)]
    return out


def _place_labels(
    fig: Figure,
    ax: Axes,
    notes: Sequence[tuple[Any, Sequence[_Spot]]],
    dots: Sequence[tuple[float, float]],
    lines: Sequence[Sequence[tuple[float, float]]],
) -> None:
    """Put each annotation at the first of its spots that stays inside the plot, covers no label
    placed before it and no marker dot, and crosses no line; failing that, at the spot that breaks
    the fewest of these (matplotlib has no label placement of its own). Boxes are measured by
    matplotlib on the laid-out figure."""
    from matplotlib.path import Path
    from matplotlib.transforms import Bbox

    fig.draw_without_rendering()
    area = ax.get_window_extent()
    placed = [
        Bbox.from_extents(x - 6, y - 6, x + 6, y + 6) for x, y in ax.transData.transform(dots)
    ]
    paths = [Path(ax.transData.transform(points)) for points in lines if len(points) > 1]
    for note, spots in notes:
        best: tuple[float, _Spot, Any] | None = None
        for spot in spots:
            note.xy, note.xyann, ha, va = spot
            note.set_horizontalalignment(ha)
            note.set_verticalalignment(va)
            box = note.get_window_extent()
            inside = area.x0 <= box.x0 and box.x1 <= area.x1 + 2 and area.y0 <= box.y0
            cost = 10_000.0 * (not (inside and box.y1 <= area.y1 + 2))
            cost += 100.0 * sum(box.overlaps(other) for other in placed)
            cost += sum(path.intersects_bbox(box, filled=False) for path in paths)
            if best is None or cost < best[0]:
                best = (cost, spot, box)
            if cost == 0:
                break
        assert best is not None
        note.xy, note.xyann, ha, va = best[1]
        note.set_horizontalalignment(ha)
        note.set_verticalalignment(va)
        placed.append(best[2])


# --- Bar charts ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Segment:
    category: int
    stack: int
    value: float
    start: float


def _bar_segments(chart: BarChart) -> tuple[list[_Segment], list[tuple[float, float]]]:
    """Every finite segment stacked on its category (positive values upwards from 0, negative ones
    downwards), and each category's extent (lowest, highest)."""
    n = len(chart.categories)
    for name, values in chart.stacks:
        if len(values) != n:
            raise ValueError(
                f"bar segment {name!r} has {len(values)} values for {n} categories; give one per category"
            )
    if chart.highlight is not None and not 0 <= chart.highlight < n:
        raise ValueError(f"highlight={chart.highlight} is not a category index (0..{n - 1})")
    segments: list[_Segment] = []
    extents: list[tuple[float, float]] = []
    for j in range(n):
        pos = neg = 0.0
        for s, (_, values) in enumerate(chart.stacks):
            if not _finite(values[j]):
                continue
            v = float(values[j])
            segments.append(_Segment(j, s, v, pos if v >= 0 else neg))
            if v >= 0:
                pos += v
            else:
                neg += v
        extents.append((neg, pos))
    return segments, extents


def _bar_gid(salt: str, category: int, stack: int) -> str:
    return f"{salt}-bar-{category}-{stack}"


def _bar_tooltips(chart: BarChart, salt: str) -> dict[str, str]:
    """For each bar segment's SVG group: its ``<title>`` tooltip and data attributes."""
    segments, _ = _bar_segments(chart)
    out = {}
    for seg in segments:
        category = chart.categories[seg.category]
        name = chart.stacks[seg.stack][0]
        value = format_value(seg.value, chart.value_format)
        tooltip = f"{category} — {name}: {value}" if name else f"{category}: {value}"
        out[_bar_gid(salt, seg.category, seg.stack)] = (
            f'<g class="bar" data-category="{escape(_xml_safe(category))}"'
            f' data-segment="{escape(_xml_safe(name))}" data-value="{seg.value!r}">'
            f"<title>{escape(_xml_safe(tooltip), quote=False)}</title>"
        )
    return out


def _short(text: str, limit: int) -> str:
    text = _xml_safe(text)
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


def _bar_figure(fig: Figure, chart: BarChart, salt: str) -> None:
    segments, extents = _bar_segments(chart)
    n = len(chart.categories)
    if not segments:
        _no_data(fig)
        return
    ax = fig.add_subplot()
    horizontal = chart.horizontal
    width_px, height_px = fig.bbox.width, fig.bbox.height
    band_px = ((height_px - 150) if horizontal else (width_px - 110)) / n
    thickness = min(BAR_FILL, MAX_BAR_PX / max(band_px, 1.0))
    handles: dict[int, Any] = {}
    for stack in sorted({seg.stack for seg in segments}):
        row = [seg for seg in segments if seg.stack == stack]
        where = [seg.category for seg in row]
        values = [seg.value for seg in row]
        starts = [seg.start for seg in row]
        style: dict[str, Any] = {
            "color": PALETTE[stack % len(PALETTE)],
            "edgecolor": "#ffffff",
            "linewidth": 0.5,
            "joinstyle": "round",  # as the root says: no per-bar style for it
            "clip_on": False,  # bars are inside the autoscaled limits: no clip path per bar
            "in_layout": False,  # ... so the layout need not measure them
            "zorder": 2,
        }
        if horizontal:
            bars = ax.barh(where, values, thickness, left=starts, **style)
        else:
            bars = ax.bar(where, values, thickness, bottom=starts, **style)
        for seg, patch in zip(row, bars.patches, strict=True):
            patch.set_gid(_bar_gid(salt, seg.category, seg.stack))
        handles[stack] = bars.patches[0]
    if chart.highlight is not None:
        lo, hi = extents[chart.highlight]
        outline: dict[str, Any] = {"fill": False, "edgecolor": INK, "linewidth": 2.0, "zorder": 3}
        if horizontal:
            ax.barh(chart.highlight, hi - lo, thickness + 0.08, left=lo, **outline)
        else:
            ax.bar(chart.highlight, hi - lo, thickness + 0.08, bottom=lo, **outline)
    if chart.show_totals:
        for j, (lo, hi) in enumerate(extents):
            total = lo + hi
            end = hi if total >= 0 else lo
            sign = 1 if total >= 0 else -1
            ax.annotate(
                format_value(total, chart.value_format),
                (end, j) if horizontal else (j, end),
                xytext=(5 * sign, 0) if horizontal else (0, 5 * sign),
                textcoords="offset points",
                ha=("left" if sign > 0 else "right") if horizontal else "center",
                va="center" if horizontal else ("bottom" if sign > 0 else "top"),
                fontweight="bold",
                color=INK,
            )
    if min(lo for lo, _ in extents) < 0:  # zero line
        (ax.axvline if horizontal else ax.axhline)(0.0, color=INK, linewidth=1.0, zorder=3)

    value_axis: Literal["x", "y"] = "x" if horizontal else "y"
    margin = 0.12 if chart.show_totals else 0.05  # room for the totals
    ax.margins(x=margin) if horizontal else ax.margins(y=margin)
    ax.grid(True, axis=value_axis)
    _value_axis(ax, value_axis, chart.value_format)
    shown = [_short(c, MAX_CATEGORY_CHARS) for c in chart.categories]
    if horizontal:
        ax.set_xlabel(_xml_safe(chart.value_label))
        ax.set_ylabel(_xml_safe(chart.category_label))
        ax.set_ylim(n - 0.5, -0.5)  # first category on top
        ticks = list(range(n))
        ax.set_yticks(ticks, shown)
        ax.tick_params(axis="y", labelcolor=INK)
        labels = ax.get_yticklabels()
    else:
        ax.set_xlabel(_xml_safe(chart.category_label))
        ax.set_ylabel(_xml_safe(chart.value_label))
        ax.set_xlim(-0.5, n - 0.5)
        ax.tick_params(axis="x", labelcolor=INK)
        ticks = _category_ticks(fig, ax, chart, shown)
        labels = ax.get_xticklabels()
    if chart.highlight is not None:
        labels[ticks.index(chart.highlight)].set_fontweight("bold")
    named = [(s, name) for s, (name, _) in enumerate(chart.stacks) if name and s in handles]
    _legend(fig, ax, [handles[s] for s, _ in named], [_xml_safe(name) for _, name in named])


def _category_ticks(fig: Figure, ax: Axes, chart: BarChart, shown: Sequence[str]) -> list[int]:
    """Label vertical bars; returns the labelled categories. Many narrow bars (the months of a
    budget) get every stride-th bar labelled in full rather than every label cut down (at least
    four labels stay; the highlight keeps its label); labels that still do not fit are slanted.
    Widths come from matplotlib's text metrics and the laid-out plot."""
    n = len(shown)
    widest = 6 + max(_text_width(label, TICK_FONT_PX, bold=True) for label in shown)
    stride, slant = 1, False
    if widest > (fig.bbox.width - 110) / n:  # might not fit: measure the laid-out plot
        ax.set_xticks([])
        fig.draw_without_rendering()
        band = ax.get_window_extent().width / n
        stride = min(max(1, n // 4), math.ceil(widest / band))
        slant = widest > band * stride
    labelled = {j for j in range(n) if j % stride == 0}
    if chart.highlight is not None:
        labelled = {j for j in labelled if abs(j - chart.highlight) >= stride}
        labelled.add(chart.highlight)
    ticks = sorted(labelled)
    ax.set_xticks(ticks, [shown[j] for j in ticks])
    if slant:
        ax.tick_params(axis="x", labelrotation=30)
        for label in ax.get_xticklabels():
            label.set_horizontalalignment("right")
            label.set_rotation_mode("anchor")
    return ticks


# --- Entry points -------------------------------------------------------------------------------


def _build(chart: Chart, width: int, height: int, show_caption: bool, salt: str) -> Figure:
    fig = _figure(chart, width, height, show_caption)
    if isinstance(chart, LineChart):
        _line_figure(fig, chart)
    else:
        _bar_figure(fig, chart, salt)
    return fig


def to_figure(
    chart: Chart, *, width_px: int = 720, height_px: int = 400, show_caption: bool = False
) -> Figure:
    """The chart as a matplotlib :class:`~matplotlib.figure.Figure` of ``width_px`` x
    ``height_px`` at 72 dpi (one point is one px), built without pyplot.

    The chart's rcParams (fonts, colours) are applied while the figure is built; save it with
    :func:`render_svg`, or inside ``matplotlib.rc_context`` for the SVG settings. Horizontal bar
    charts grow taller than ``height_px`` when needed to give every bar ``MIN_BAR_BAND_PX``.
    """
    import matplotlib as mpl

    width, height = _size(chart, width_px, height_px)
    salt = _chart_id(chart, width, height)
    with mpl.rc_context(_rc(salt)):
        return _build(chart, width, height, show_caption, salt)


def _desc(chart: Chart) -> str:
    if chart.caption:
        return chart.caption
    if isinstance(chart, LineChart):
        names = ", ".join(s.name for s in chart.series if s.name)
        text = f"Line chart of {chart.y_label} against {chart.x_label}"
        return text + (f"; lines: {names}." if names else ".")
    names = ", ".join(name for name, _ in chart.stacks if name)
    text = f"Bar chart of {chart.value_label} by {chart.category_label}"
    text += f" for {len(chart.categories)} categories"
    return text + (f"; segments: {names}." if names else ".")


# What the SVG backend writes that an inline chart does without: the XML prolog and DOCTYPE, the
# one style rule (a page-wide ``*`` selector once inlined; the root's presentation attributes say
# the same), the ids of plain groups ("figure_1", "patch_3"), which would repeat on a page, and the
# indentation between elements.
_PROLOG = re.compile(r"\A.*?(?=<svg\b)", re.DOTALL)
_ROOT = re.compile(r"<svg\b[^>]*>")
_STYLE = re.compile(r"\s*<defs>\s*<style[^>]*>[^<]*</style>\s*</defs>")
_GROUP_ID = re.compile(r'<g id="([^"]+)">')
_AUTO_ID = re.compile(r"[A-Za-z][A-Za-z0-9.]*_\d+")
_INDENT = re.compile(r">\n *<")  # the writer's pretty-printing between elements


def render_svg(
    chart: Chart,
    *,
    width_px: int = 720,
    height_px: int = 400,
    show_caption: bool = False,
    chart_id: str | None = None,
) -> str:
    """The chart as the text of one inline ``<svg>`` element (no XML declaration), the same bytes
    for the same input.

    The root is ``role="img"`` and labelled by its first children, ``<title>`` (the chart's title)
    and ``<desc>`` (the caption, or a generated sentence). ``show_caption=True`` also draws the
    caption under the chart (for an SVG shown on its own; the HTML report puts it in a
    ``<figcaption>``). ``chart_id`` prefixes the ``<title>``/``<desc>`` ids and salts the ids
    matplotlib writes; by default it is a hash of the chart, so charts on one page do not share ids.
    Each bar segment is a ``<g class="bar">`` with its category, segment and value as data
    attributes and a tooltip.
    """
    import matplotlib as mpl
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    width, height = _size(chart, width_px, height_px)
    ident = chart_id or _chart_id(chart, width, height)
    buffer = io.StringIO()
    with mpl.rc_context(_rc(ident)):
        fig = _build(chart, width, height, show_caption, ident)
        FigureCanvasSVG(fig).print_svg(buffer, metadata=_NO_METADATA)
    svg = _STYLE.sub("", _PROLOG.sub("", buffer.getvalue(), count=1), count=1).strip()
    svg = _INDENT.sub("><", svg)

    groups = _bar_tooltips(chart, ident) if isinstance(chart, BarChart) else {}

    def group(match: re.Match[str]) -> str:
        gid = match.group(1)
        return groups.get(gid) or ("<g>" if _AUTO_ID.fullmatch(gid) else match.group(0))

    svg = _GROUP_ID.sub(group, svg)
    key = escape(ident)
    root = (
        f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'
        f' class="chart" width="{width}" height="{height}" viewBox="0 0 {width} {height}"'
        f' role="img" aria-labelledby="{key}-title {key}-desc"'
        f' stroke-linejoin="round" stroke-linecap="butt">'
        f'<title id="{key}-title">{escape(_xml_safe(chart.title), quote=False)}</title>'
        f'<desc id="{key}-desc">{escape(_xml_safe(_desc(chart)), quote=False)}</desc>'
    )
    return _ROOT.sub(lambda _: root, svg, count=1)
