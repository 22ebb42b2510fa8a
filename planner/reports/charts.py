"""Inline SVG charts for the HTML reports: line charts and stacked bar charts.

Standard library only. ``render_svg`` returns the text of one ``<svg>`` element that needs no
scripts, fonts or files from anywhere else, so a report stays one self-contained file. The same
input always gives the same bytes.

Layout (all in px of the SVG's own coordinate system; margins are computed in ``_render_line`` / ``_render_bar`` from the constants in
planner/reports/chart_svg.py)::

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
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

from planner.reports.chart_svg import (
    ANNOTATION_FONT_PX,
    AXIS,
    AXIS_LABEL_FONT_PX,
    AXIS_LABEL_GAP_PX,
    BAR_FILL,
    DASH,
    INK,
    LINE_HEIGHT,
    MAX_BAR_PX,
    MIN_BAR_BAND_PX,
    MUTED_INK,
    PAD_PX,
    PALETTE,
    PLOT_TOP_GAP_PX,
    REF_DASH,
    SERIES_STROKE_PX,
    TICK_FONT_PX,
    TICK_GAP_PX,
    TICK_LEN_PX,
    TOTAL_LABEL_GAP_PX,
    Box,
    LegendEntry,
    Scale,
    bottom_band,
    caption_height,
    caption_lines,
    caption_svg,
    esc,
    fit,
    header,
    left_band,
    no_data,
    num,
    svg_line,
    svg_open,
    text_el,
    text_width,
    value_ticks,
    wrap,
    x_axis_label,
    y_axis_label,
)
from planner.reports.chart_ticks import (
    ValueFormat,
    axis_labels,
    axis_ticks,
    format_tick,
    format_value,
    log_axis_ticks,
    log_ticks,
    nice_ticks,
)

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
    "log_ticks",
    "nice_ticks",
    "render_svg",
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

# Values beyond +-1e15 cannot be a cost, hour count or share the planner produces; they are
# dropped like NaN so that the pixel maths cannot overflow.
MAX_ABS_VALUE = 1e15


def _finite(value: float) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and abs(value) <= MAX_ABS_VALUE


def _chart_id(chart: Chart, width: int, height: int) -> str:
    digest = hashlib.sha256(f"{chart!r}|{width}x{height}".encode("utf-8", "replace")).hexdigest()
    return "chart-" + digest[:10]


# --- Line charts -------------------------------------------------------------------------------


# A log axis draws values between these bounds; outside them the decade ticks would underflow to
# zero or overflow (10.0**-324 == 0.0), so such points are dropped like zero and negative ones.
_LOG_AXIS_MIN = 1e-300
_LOG_AXIS_MAX = 1e300


def _on_x_axis(x: float, x_log: bool) -> bool:
    """Whether ``x`` can be placed on the x axis: finite, and inside the log range on a log axis."""
    return _finite(x) and (not x_log or _LOG_AXIS_MIN <= x <= _LOG_AXIS_MAX)


def _clean_points(series: Series, x_log: bool) -> list[tuple[float, float]]:
    points = [(float(x), float(y)) for x, y in series.points if _on_x_axis(x, x_log) and _finite(y)]
    return sorted(points, key=lambda p: p[0])


def _line_desc(chart: LineChart) -> str:
    names = ", ".join(s.name for s in chart.series if s.name)
    text = f"Line chart of {chart.y_label} against {chart.x_label}"
    return text + (f"; lines: {names}." if names else ".")


Segment = tuple[float, float, float, float]


def _hits(box: Box, seg: Segment) -> bool:
    """Whether the line segment crosses the box (Liang-Barsky clipping)."""
    x0, y0, x1, y1 = seg
    dx, dy = x1 - x0, y1 - y0
    t0, t1 = 0.0, 1.0
    for p, q in (
        (-dx, x0 - box.left),
        (dx, box.right - x0),
        (-dy, y0 - box.top),
        (dy, box.bottom - y0),
    ):
        if p == 0:
            if q < 0:
                return False
            continue
        t = q / p
        if p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return False
    return True


def _place_label(
    candidates: Sequence[tuple[float, float, str]],
    text: str,
    placed: list[Box],
    lines: Sequence[Segment],
    bounds: Box,
) -> tuple[float, float, str]:
    """The candidate (x, baseline y, anchor) whose label box stays inside ``bounds``, overlaps the
    fewest labels already placed and crosses the fewest drawn lines; earlier candidates win ties.
    The chosen box is added to ``placed``."""
    width = text_width(text, ANNOTATION_FONT_PX, bold=True)
    best: tuple[float, int, Box, tuple[float, float, str]] | None = None
    for order, (x, y, anchor) in enumerate(candidates):
        left = x - width if anchor == "end" else x
        box = Box(left - 2, y - ANNOTATION_FONT_PX, left + width + 2, y + ANNOTATION_FONT_PX * 0.3)
        outside = not (
            box.left >= bounds.left
            and box.right <= bounds.right
            and box.top >= bounds.top
            and box.bottom <= bounds.bottom
        )
        cost = 10_000.0 * outside
        cost += 100.0 * sum(box.overlaps(other) for other in placed)
        cost += sum(_hits(box, seg) for seg in lines)
        if best is None or (cost, order) < (best[0], best[1]):
            best = (cost, order, box, (x, y, anchor))
        if cost == 0:
            break
    if best is None:
        raise ValueError("no candidate positions for a label")
    placed.append(best[2])
    return best[3]


def _render_line(
    chart: LineChart, width: int, height: int, chart_id: str, show_caption: bool
) -> str:
    series_points = [_clean_points(s, chart.x_log) for s in chart.series]
    markers = [m for m in chart.markers if _on_x_axis(m.x, chart.x_log) and _finite(m.y)]
    refs = [r for r in chart.ref_lines if _on_x_axis(r.value, chart.x_log and r.axis == "x")]
    xs = [x for pts in series_points for x, _ in pts] + [m.x for m in markers]
    ys = [y for pts in series_points for _, y in pts] + [m.y for m in markers]
    legend = [
        LegendEntry(s.name, PALETTE[i % len(PALETTE)], "dashed" if s.dashed else "line")
        for i, s in enumerate(chart.series)
        if s.name
    ]
    desc = chart.caption or _line_desc(chart)
    parts = svg_open(chart_id, width, height, chart.title, desc)
    title_svg, header_bottom, legend_svg = header(chart.title, width, legend if xs else [])
    parts.extend(title_svg)
    caption = caption_lines(chart.caption, width, show_caption)
    if not xs:
        no_data(parts, header_bottom, width, height - PAD_PX - caption_height(caption))
        parts.append(caption_svg(caption, height))
        parts.append("</svg>")
        return "".join(parts)
    parts.append(legend_svg)

    # Domains: data, markers and reference lines, extended to nice ticks.
    xs += [r.value for r in refs if r.axis == "x"]
    ys += [r.value for r in refs if r.axis == "y"]
    x_lo, x_hi = min(xs), max(xs)
    x_ticks = (
        log_axis_ticks(x_lo, x_hi, chart.x_format)
        if chart.x_log
        else axis_ticks(x_lo, x_hi, chart.x_format)
    )
    y_lo, y_hi = min(ys), max(ys)
    if chart.y_zero:
        y_lo, y_hi = min(y_lo, 0.0), max(y_hi, 0.0)
    y_ticks = axis_ticks(y_lo, y_hi, chart.y_format)
    x_labels = axis_labels(x_ticks, chart.x_format, log=chart.x_log)
    y_labels = axis_labels(y_ticks, chart.y_format)

    box = Box(
        left=left_band(y_labels),
        top=header_bottom + PLOT_TOP_GAP_PX,
        right=width - PAD_PX - text_width(x_labels[-1], TICK_FONT_PX) / 2,
        bottom=height - PAD_PX - caption_height(caption) - bottom_band(),
    )
    box = Box(box.left, box.top, max(box.right, box.left + 1), max(box.bottom, box.top + 1))
    sx = Scale(x_ticks[0], x_ticks[-1], box.left, box.right, log=chart.x_log)
    sy = Scale(y_ticks[0], y_ticks[-1], box.bottom, box.top)

    parts.append(
        f'<rect class="plot-area" x="{num(box.left)}" y="{num(box.top)}" width="{num(box.width)}"'
        f' height="{num(box.height)}" fill="none"/>'
    )
    parts.append(value_ticks(sy, y_ticks, y_labels, box, "y-axis", "left"))
    parts.append(value_ticks(sx, x_ticks, x_labels, box, "x-axis", "bottom"))
    if y_ticks[0] < 0 < y_ticks[-1]:
        y0 = sy(0.0)
        parts.append(svg_line(box.left, y0, box.right, y0, AXIS, "zero-line"))
    parts.append(y_axis_label(chart.y_label, box))
    parts.append(x_axis_label(chart.x_label, box, width))

    # Series first (as pixel segments, so that labels can keep clear of them), then reference
    # lines and markers on top.
    lines: list[Segment] = []
    series_svg = ['<g class="series" fill="none">']
    for index, (series, pts) in enumerate(zip(chart.series, series_points, strict=True)):
        if not pts:
            continue
        color = PALETTE[index % len(PALETTE)]
        coords = [(sx(x), sy(y)) for x, y in pts]
        d = [f"M{num(coords[0][0])} {num(coords[0][1])}"]
        for (x0, y0), (x1, y1) in pairwise(coords):
            if series.step:
                d.append(f"H{num(x1)} V{num(y1)}")
                lines += [(x0, y0, x1, y0), (x1, y0, x1, y1)]
            else:
                d.append(f"L{num(x1)} {num(y1)}")
                lines.append((x0, y0, x1, y1))
        dash = f' stroke-dasharray="{DASH}"' if series.dashed else ""
        series_svg.append(
            f'<path data-series="{esc(series.name)}" d="{" ".join(d)}" stroke="{color}"'
            f' stroke-width="{SERIES_STROKE_PX}" stroke-linejoin="round" stroke-linecap="round"{dash}/>'
        )
        if len(coords) == 1:
            series_svg.append(
                f'<circle class="point" data-series="{esc(series.name)}" cx="{num(coords[0][0])}"'
                f' cy="{num(coords[0][1])}" r="3.5" fill="{color}"/>'
            )
    series_svg.append("</g>")
    parts.extend(series_svg)

    placed = [Box(sx(m.x) - 6, sy(m.y) - 6, sx(m.x) + 6, sy(m.y) + 6) for m in markers]
    label_bounds = Box(box.left, box.top - 2, width - PAD_PX, box.bottom)
    ref_lines: list[Segment] = [
        (sx(r.value), box.top, sx(r.value), box.bottom)
        if r.axis == "x"
        else (box.left, sy(r.value), box.right, sy(r.value))
        for r in refs
    ]
    for ref, (x0, y0, x1, y1) in zip(refs, ref_lines, strict=True):
        parts.append(
            f'<g class="ref-line" data-axis="{ref.axis}" data-value="{float(ref.value)!r}">'
            f'<line x1="{num(x0)}" y1="{num(y0)}" x2="{num(x1)}" y2="{num(y1)}"'
            f' stroke="{MUTED_INK}" stroke-width="1.5" stroke-dasharray="{REF_DASH}"/>'
        )
        if ref.axis == "x":
            candidates = [
                (x0 + 5 if side == "start" else x0 - 5, box.top + ANNOTATION_FONT_PX + dy, side)
                for dy in (2.0, 18.0, 34.0, 50.0)
                for side in ("start", "end")
            ]
        else:
            candidates = [
                (x, y0 + dy, side)
                for dy in (-5.0, ANNOTATION_FONT_PX + 4)
                for x, side in ((box.right - 4, "end"), (box.left + 4, "start"))
            ]
        lx, ly, anchor = _place_label(candidates, ref.label, placed, lines, label_bounds)
        parts.append(
            text_el(
                lx,
                ly,
                ref.label,
                size=ANNOTATION_FONT_PX,
                anchor=anchor,
                fill=MUTED_INK,
                weight="600",
                halo=True,
            )
            + "</g>"
        )

    for marker in markers:
        mx, my = sx(marker.x), sy(marker.y)
        sides = ("end", "start") if mx > box.left + box.width * 0.6 else ("start", "end")
        candidates = [
            (mx - 9 if side == "end" else mx + 9, my + dy, side)
            for dy in (-9.0, ANNOTATION_FONT_PX + 7, -25.0, ANNOTATION_FONT_PX + 23, -41.0, -57.0)
            for side in sides
        ]
        lx, ly, anchor = _place_label(
            candidates, marker.label, placed, lines + ref_lines, label_bounds
        )
        # A label pushed away from its dot by others gets a thin leader line back to the dot.
        leader = ""
        if abs(ly - my) > 20:
            end_y = ly + 3 if ly < my else ly - ANNOTATION_FONT_PX
            leader = (
                f'<line class="leader" x1="{num(mx)}" y1="{num(my)}" x2="{num(lx)}"'
                f' y2="{num(end_y)}" stroke="{INK}" stroke-width="1"/>'
            )
        parts.append(
            f'<g class="marker" data-x="{float(marker.x)!r}" data-y="{float(marker.y)!r}">'
            + leader
            + f'<circle cx="{num(mx)}" cy="{num(my)}" r="5" fill="{INK}" stroke="#ffffff" stroke-width="1.5"/>'
            + text_el(
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
    parts.append(caption_svg(caption, height))
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
        LegendEntry(name, PALETTE[s % len(PALETTE)], "box")
        for s, (name, _) in enumerate(chart.stacks)
        if name and (len(chart.stacks) > 1 or has_data)
    ]
    title_svg, header_bottom, legend_svg = header(chart.title, width, legend if has_data else [])
    caption = caption_lines(chart.caption, width, show_caption)
    if chart.horizontal and has_data:
        plot_height = height - PAD_PX - caption_height(caption) - bottom_band()
        plot_height -= header_bottom + PLOT_TOP_GAP_PX
        height += max(0, math.ceil(n * MIN_BAR_BAND_PX - plot_height))
    desc = chart.caption or _bar_desc(chart)
    parts = svg_open(chart_id, width, height, chart.title, desc)
    parts.extend(title_svg)
    if not has_data:
        no_data(parts, header_bottom, width, height - PAD_PX - caption_height(caption))
        parts.append(caption_svg(caption, height))
        parts.append("</svg>")
        return "".join(parts)
    parts.append(legend_svg)

    v_lo = min(0.0, *(lo for lo, _ in extents))
    v_hi = max(0.0, *(hi for _, hi in extents))
    ticks = axis_ticks(v_lo, v_hi, chart.value_format)
    tick_labels = axis_labels(ticks, chart.value_format)
    total_labels = [format_value(t, chart.value_format) for t in totals]
    total_room = TICK_FONT_PX * LINE_HEIGHT if chart.show_totals else 0.0
    any_negative_total = chart.show_totals and any(t < 0 for t in totals)
    any_positive_total = chart.show_totals and any(t >= 0 for t in totals)
    top = header_bottom + PLOT_TOP_GAP_PX
    bottom_fixed = height - PAD_PX - caption_height(caption)

    if chart.horizontal:
        cat_max = width * 0.35
        cat_width = max(
            text_width(fit(c, cat_max, TICK_FONT_PX, bold=True), TICK_FONT_PX, bold=True)
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
            max(text_width(t, TICK_FONT_PX, bold=True) for t in total_labels) + TOTAL_LABEL_GAP_PX
        )
        right_need = max(
            text_width(tick_labels[-1], TICK_FONT_PX) / 2,
            total_w if any_positive_total else 0.0,
        )
        left_extra = total_w if any_negative_total else 0.0
        box = Box(left, top, width - PAD_PX - right_need, bottom_fixed - bottom_band())
        box = Box(box.left, box.top, max(box.right, box.left + 1), max(box.bottom, box.top + 1))
        value_box = Box(box.left + left_extra, box.top, box.right, box.bottom)
        sv = Scale(ticks[0], ticks[-1], value_box.left, value_box.right)
        band = box.height / n
        parts.append(
            f'<rect class="plot-area" x="{num(box.left)}" y="{num(box.top)}" width="{num(box.width)}"'
            f' height="{num(box.height)}" fill="none"/>'
        )
        parts.append(value_ticks(sv, ticks, tick_labels, box, "x-axis", "bottom"))
        cat_axis = ['<g class="y-axis">']
        cat_axis.append(svg_line(box.left, box.top, box.left, box.bottom, AXIS))
        for j, category in enumerate(chart.categories):
            mid = box.top + band * (j + 0.5)
            bold = j == chart.highlight
            shown = fit(category, cat_max, TICK_FONT_PX, bold=True)
            cat_axis.append(
                text_el(
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
        parts.append(y_axis_label(chart.category_label, box))
        parts.append(x_axis_label(chart.value_label, box, width))
        parts.extend(_bars(chart, segments, extents, totals, total_labels, sv, box.top, band))
        if ticks[0] < 0:
            x0 = sv(0.0)
            parts.append(svg_line(x0, box.top, x0, box.bottom, INK, "zero-line"))
    else:
        band_guess = (width - left_band(tick_labels) - PAD_PX) / n
        # Many narrow bars (the months of a budget): label every stride-th bar in full rather
        # than cut every label down to an ellipsis. Each bar keeps its name in its tooltip.
        stride, max_stride = 1, max(1, n // 4)  # at least four labels stay
        while True:
            room = max(band_guess * stride - 6, TICK_FONT_PX)
            wrapped = [wrap(c, room, TICK_FONT_PX, 2, bold=True) or [""] for c in chart.categories]
            if stride >= max_stride or not any(line.endswith("…") for w in wrapped for line in w):
                break
            stride += 1
        labelled = {j for j in range(n) if j % stride == 0}
        if chart.highlight is not None:
            labelled = {j for j in labelled if abs(j - chart.highlight) >= stride}
            labelled.add(chart.highlight)
        cat_lines = max(len(w) for w in wrapped)
        band_below = bottom_band() + (cat_lines - 1) * TICK_FONT_PX * LINE_HEIGHT
        box = Box(
            left_band(tick_labels),
            top + (total_room if any_positive_total else 0.0),
            width - PAD_PX,
            bottom_fixed - band_below - (total_room if any_negative_total else 0.0),
        )
        box = Box(box.left, box.top, max(box.right, box.left + 1), max(box.bottom, box.top + 1))
        sv = Scale(ticks[0], ticks[-1], box.bottom, box.top)
        band = box.width / n
        parts.append(
            f'<rect class="plot-area" x="{num(box.left)}" y="{num(box.top)}" width="{num(box.width)}"'
            f' height="{num(box.height)}" fill="none"/>'
        )
        parts.append(value_ticks(sv, ticks, tick_labels, box, "y-axis", "left"))
        label_top = box.bottom + (total_room if any_negative_total else 0.0)
        cat_axis = ['<g class="x-axis">']
        cat_axis.append(svg_line(box.left, box.bottom, box.right, box.bottom, AXIS))
        for j, category in enumerate(chart.categories):
            mid = box.left + band * (j + 0.5)
            bold = j == chart.highlight
            for line_no, line in enumerate(wrapped[j] if j in labelled else []):
                cat_axis.append(
                    text_el(
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
        parts.append(y_axis_label(chart.value_label, box))
        x_label_box = Box(
            box.left, box.top, box.right, label_top + (cat_lines - 1) * TICK_FONT_PX * LINE_HEIGHT
        )
        parts.append(x_axis_label(chart.category_label, x_label_box, width))
        parts.extend(_bars(chart, segments, extents, totals, total_labels, sv, box.left, band))
        if ticks[0] < 0:
            y0 = sv(0.0)
            parts.append(svg_line(box.left, y0, box.right, y0, INK, "zero-line"))
    parts.append(caption_svg(caption, height))
    parts.append("</svg>")
    return "".join(parts)


def _bars(
    chart: BarChart,
    segments: list[list[tuple[str, int, float, float, float]]],
    extents: list[tuple[float, float]],
    totals: list[float],
    total_labels: list[str],
    sv: Scale,
    band_origin_px: float,
    band_px: float,
) -> list[str]:
    """The bars, highlight outline and totals, for either orientation.

    Positions are worked out along two axes -- across the category band (``c``) and along the value
    scale ``sv`` (``v``) -- and mapped to x/y at the end: horizontal bars run along x.
    """
    horizontal = chart.horizontal

    def xywh(c0: float, c1: float, v0: float, v1: float) -> tuple[float, float, float, float]:
        v_min, v_len = min(v0, v1), abs(v1 - v0)
        return (v_min, c0, v_len, c1 - c0) if horizontal else (c0, v_min, c1 - c0, v_len)

    thickness = min(band_px * BAR_FILL, MAX_BAR_PX)
    parts = ['<g class="bars">']
    for j, category in enumerate(chart.categories):
        c_start = band_origin_px + band_px * (j + 0.5) - thickness / 2
        c0, c1 = round(c_start, 1), round(c_start + thickness, 1)
        for name, s, value, start, end in segments[j]:
            x, y, w, h = xywh(c0, c1, round(sv(start), 1), round(sv(end), 1))
            parts.append(_bar_rect(x, y, w, h, category, name, value, s, chart.value_format))
        lo, hi = extents[j]
        if j == chart.highlight:
            x, y, w, h = xywh(c0, c1, sv(lo), sv(hi))
            parts.append(_highlight_rect(x - 3, y - 3, w + 6, h + 6, category))
        if not chart.show_totals:
            continue
        total = totals[j]
        pad = TOTAL_LABEL_GAP_PX + (3 if j == chart.highlight else 0)
        attrs = f'class="bar-total" data-category="{esc(category)}" data-value="{total!r}"'
        if horizontal:  # the total sits beyond the bar's end, on its centre line
            end_px = sv(hi) if total >= 0 else sv(lo)
            x = end_px + pad if total >= 0 else end_px - pad
            y = (c0 + c1) / 2 + TICK_FONT_PX * 0.35
            anchor = "start" if total >= 0 else "end"
        else:  # above a positive bar, below a negative one
            x = (c0 + c1) / 2
            y = sv(hi) - pad if total >= 0 else sv(lo) + pad + TICK_FONT_PX
            anchor = "middle"
        parts.append(
            text_el(
                x,
                y,
                total_labels[j],
                size=TICK_FONT_PX,
                anchor=anchor,
                weight="bold",
                attrs=attrs,
            )
        )
    parts.append("</g>")
    return parts


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
        f"{category} — {segment}: {format_value(value, fmt)}"
        if segment
        else f"{category}: {format_value(value, fmt)}"
    )
    return (
        f'<rect class="bar" data-category="{esc(category)}" data-segment="{esc(segment)}"'
        f' data-value="{value!r}" x="{num(x)}" y="{num(y)}" width="{num(w)}" height="{num(h)}"'
        f' fill="{color}" stroke="#ffffff" stroke-width="0.5"><title>{esc(tooltip)}</title></rect>'
    )


def _highlight_rect(x: float, y: float, w: float, h: float, category: str) -> str:
    return (
        f'<rect class="bar-highlight" data-category="{esc(category)}" x="{num(x)}" y="{num(y)}"'
        f' width="{num(w)}" height="{num(h)}" fill="none" stroke="{INK}" stroke-width="2" rx="2"/>'
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
