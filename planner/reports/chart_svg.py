"""SVG drawing primitives for planner/reports/charts.py: escaping, text boxes, scales, legend,
header, axes. Sizes are px in the SVG's own coordinate system."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

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


def xml_safe(text: str) -> str:
    """Drop characters XML 1.0 cannot carry at all (controls, lone surrogates, U+FFFE/FFFF)."""
    return "".join(
        ch
        for ch in text
        if ch in "\t\n\r"
        or ("\x20" <= ch <= "\ud7ff")
        or ("\ue000" <= ch <= "\ufffd")
        or ch >= "\U00010000"
    )


def esc(text: object) -> str:
    """Escape text for an XML text node or a double-quoted attribute."""
    return (
        xml_safe(str(text))
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
    )


def num(value: float) -> str:
    """A coordinate rounded to 0.1 px, without a trailing ".0"."""
    text = f"{round(value, 1):.1f}"
    if text.endswith(".0"):
        text = text[:-2]
    return "0" if text == "-0" else text


def text_width(text: str, font_px: float, bold: bool = False) -> float:
    return len(text) * font_px * CHAR_WIDTH_EM * (1.06 if bold else 1.0)


def fit(text: str, max_px: float, font_px: float, bold: bool = False) -> str:
    """``text`` cut with an ellipsis so that it fits in ``max_px``."""
    if text_width(text, font_px, bold) <= max_px:
        return text
    chars = max(1, int(max_px / (font_px * CHAR_WIDTH_EM * (1.06 if bold else 1.0))))
    return text[: max(0, chars - 1)].rstrip() + "…"


def wrap(text: str, max_px: float, font_px: float, max_lines: int, bold: bool = False) -> list[str]:
    """Greedy word wrap into at most ``max_lines`` lines; the last one is cut with an ellipsis."""
    words = text.split()
    if not words:
        return []
    lines: list[str] = []
    current = ""
    for index, word in enumerate(words):
        candidate = f"{current} {word}" if current else word
        if text_width(candidate, font_px, bold) <= max_px or not current:
            current = candidate
            continue
        if len(lines) == max_lines - 1:
            current = " ".join([current, *words[index:]])
            break
        lines.append(current)
        current = word
    lines.append(current)
    return [fit(line, max_px, font_px, bold) for line in lines]


def text_el(
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
    parts = [f'<text x="{num(x)}" y="{num(y)}" font-size="{num(size)}" fill="{fill}"']
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
    tooltip = f"<title>{esc(full)}</title>" if full is not None and full != text else ""
    parts.append(f">{esc(text)}{tooltip}</text>")
    return "".join(parts)


@dataclass(frozen=True)
class Box:
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

    def overlaps(self, other: Box) -> bool:
        return not (
            self.right <= other.left
            or other.right <= self.left
            or self.bottom <= other.top
            or other.bottom <= self.top
        )


@dataclass(frozen=True)
class Scale:
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
class LegendEntry:
    name: str
    color: str
    kind: Literal["line", "dashed", "box"]


def legend_rows(
    entries: Sequence[LegendEntry], max_px: float
) -> list[list[tuple[float, LegendEntry, str]]]:
    """Entries laid out left to right, wrapping to new rows: (x offset, entry, shown text)."""
    rows: list[list[tuple[float, LegendEntry, str]]] = []
    row: list[tuple[float, LegendEntry, str]] = []
    x = 0.0
    for entry in entries:
        shown = fit(entry.name, max_px * 0.6, LEGEND_FONT_PX)
        width = LEGEND_SWATCH_PX + 6 + text_width(shown, LEGEND_FONT_PX)
        if row and x + width > max_px:
            rows.append(row)
            row, x = [], 0.0
        row.append((x, entry, shown))
        x += width + LEGEND_ENTRY_GAP_PX
    if row:
        rows.append(row)
    return rows


def render_legend(rows: list[list[tuple[float, LegendEntry, str]]], left: float, top: float) -> str:
    if not rows:
        return ""
    out = ['<g class="legend">']
    for r, row in enumerate(rows):
        mid = top + r * LEGEND_ROW_PX + LEGEND_ROW_PX / 2
        for x_off, entry, shown in row:
            x = left + x_off
            out.append(f'<g class="legend-entry" data-series="{esc(entry.name)}">')
            if entry.kind == "box":
                out.append(
                    f'<rect x="{num(x + 5)}" y="{num(mid - 7)}" width="14" height="14" fill="{entry.color}"/>'
                )
            else:
                dash = f' stroke-dasharray="{DASH}"' if entry.kind == "dashed" else ""
                out.append(
                    f'<line x1="{num(x)}" y1="{num(mid)}" x2="{num(x + LEGEND_SWATCH_PX)}" y2="{num(mid)}"'
                    f' stroke="{entry.color}" stroke-width="{SERIES_STROKE_PX}"{dash}/>'
                )
            out.append(
                text_el(
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


def header(title: str, width: float, legend: Sequence[LegendEntry]) -> tuple[list[str], float, str]:
    """Title lines, the y where the header ends, and the legend markup."""
    inner = width - 2 * PAD_PX
    title_lines = wrap(title, inner, TITLE_FONT_PX, 2, bold=True)
    y = PAD_PX
    parts = ['<g class="plot-title">']
    for line in title_lines:
        y += TITLE_FONT_PX * LINE_HEIGHT
        parts.append(
            text_el(PAD_PX, y - TITLE_FONT_PX * 0.3, line, size=TITLE_FONT_PX, weight="bold")
        )
    parts.append("</g>")
    rows = legend_rows(legend, inner)
    legend_svg = render_legend(rows, PAD_PX, y + 4)
    if rows:
        y += 4 + len(rows) * LEGEND_ROW_PX
    return parts, y, legend_svg


def caption_lines(caption: str, width: float, show: bool) -> list[str]:
    return wrap(caption, width - 2 * PAD_PX, CAPTION_FONT_PX, 3) if show and caption else []


def caption_svg(lines: list[str], height: float) -> str:
    if not lines:
        return ""
    out = ['<g class="caption">']
    y = height - PAD_PX - (len(lines) - 1) * CAPTION_FONT_PX * LINE_HEIGHT - CAPTION_FONT_PX * 0.3
    for line in lines:
        out.append(
            text_el(
                PAD_PX, y, line, size=CAPTION_FONT_PX, fill=MUTED_INK, attrs='font-style="italic"'
            )
        )
        y += CAPTION_FONT_PX * LINE_HEIGHT
    out.append("</g>")
    return "".join(out)


def caption_height(lines: list[str]) -> float:
    return len(lines) * CAPTION_FONT_PX * LINE_HEIGHT + CAPTION_GAP_PX if lines else 0.0


def svg_open(chart_id: str, width: float, height: float, title: str, desc: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {num(width)} {num(height)}"'
        f' width="{num(width)}" height="{num(height)}" role="img"'
        f' aria-labelledby="{chart_id}-title {chart_id}-desc" font-family="{FONT_FAMILY}">',
        f'<title id="{chart_id}-title">{esc(title)}</title>',
        f'<desc id="{chart_id}-desc">{esc(desc)}</desc>',
        f'<rect class="background" width="{num(width)}" height="{num(height)}" fill="#ffffff"/>',
    ]


def no_data(parts: list[str], header_bottom: float, width: float, bottom: float) -> None:
    mid_y = (header_bottom + bottom) / 2
    parts.append(
        text_el(
            width / 2,
            mid_y,
            "No data to plot",
            size=AXIS_LABEL_FONT_PX + 1,
            anchor="middle",
            fill=MUTED_INK,
            attrs='class="no-data"',
        )
    )


def y_axis_label(text: str, box: Box) -> str:
    x = PAD_PX + AXIS_LABEL_FONT_PX
    y = (box.top + box.bottom) / 2
    shown = fit(text, box.height, AXIS_LABEL_FONT_PX)
    return text_el(
        x,
        y,
        shown,
        size=AXIS_LABEL_FONT_PX,
        anchor="middle",
        full=text,
        attrs=f'class="axis-label" data-axis="y" transform="rotate(-90 {num(x)} {num(y)})"',
    )


def x_axis_label(text: str, box: Box, width: float) -> str:
    y = box.bottom + TICK_LEN_PX + TICK_GAP_PX + TICK_FONT_PX * LINE_HEIGHT + AXIS_LABEL_GAP_PX
    y += AXIS_LABEL_FONT_PX
    shown = fit(text, width - 2 * PAD_PX, AXIS_LABEL_FONT_PX)
    return text_el(
        (box.left + box.right) / 2,
        y,
        shown,
        size=AXIS_LABEL_FONT_PX,
        anchor="middle",
        full=text,
        attrs='class="axis-label" data-axis="x"',
    )


def bottom_band() -> float:
    """Height under the plot area for tick marks, tick labels and the axis label."""
    return (
        TICK_LEN_PX
        + TICK_GAP_PX
        + TICK_FONT_PX * LINE_HEIGHT
        + AXIS_LABEL_GAP_PX
        + AXIS_LABEL_FONT_PX * LINE_HEIGHT
    )


def left_band(tick_labels: Iterable[str]) -> float:
    """Width left of the plot area for the rotated axis label, tick labels and tick marks."""
    widest = max((text_width(t, TICK_FONT_PX) for t in tick_labels), default=0.0)
    return (
        PAD_PX
        + AXIS_LABEL_FONT_PX * LINE_HEIGHT
        + AXIS_LABEL_GAP_PX
        + widest
        + TICK_GAP_PX
        + TICK_LEN_PX
    )


def svg_line(
    x1: float, y1: float, x2: float, y2: float, stroke: str, cls: str | None = None
) -> str:
    """A ``<line>`` element, with a class when ``cls`` is given."""
    class_attr = f'class="{cls}" ' if cls else ""
    return (
        f'<line {class_attr}x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}"'
        f' stroke="{stroke}"/>'
    )


def value_ticks(
    scale: Scale,
    ticks: Sequence[float],
    labels: Sequence[str],
    box: Box,
    cls: str,
    side: Literal["left", "bottom"],
) -> str:
    """Grid lines plus a value axis on the ``side`` of ``box``, with ticks and labels (``cls``
    names the group). A left axis maps values to y, a bottom axis to x."""
    left = side == "left"

    def across(at_px: float, start_px: float, end_px: float, stroke: str) -> str:
        """A line across the value direction at ``at_px``, from ``start_px`` to ``end_px``."""
        if left:
            return svg_line(start_px, at_px, end_px, at_px, stroke)
        return svg_line(at_px, start_px, at_px, end_px, stroke)

    grid_px = (box.left, box.right) if left else (box.top, box.bottom)
    tick_px = (box.left - TICK_LEN_PX, box.left) if left else (box.bottom, box.bottom + TICK_LEN_PX)
    out = ['<g class="grid">']
    out.extend(across(scale(t), *grid_px, GRID) for t in ticks)
    out.append(f'</g><g class="{cls}">')
    if left:
        out.append(svg_line(box.left, box.top, box.left, box.bottom, AXIS))
    else:
        out.append(svg_line(box.left, box.bottom, box.right, box.bottom, AXIS))
    for t, label in zip(ticks, labels, strict=True):
        at = scale(t)
        out.append(across(at, *tick_px, AXIS))
        if left:
            x, y, anchor = box.left - TICK_LEN_PX - TICK_GAP_PX, at + TICK_FONT_PX * 0.35, "end"
        else:
            x, y, anchor = at, box.bottom + TICK_LEN_PX + TICK_GAP_PX + TICK_FONT_PX, "middle"
        out.append(
            text_el(
                x,
                y,
                label,
                size=TICK_FONT_PX,
                anchor=anchor,
                fill=MUTED_INK,
                attrs=f'data-value="{t!r}"',
            )
        )
    out.append("</g>")
    return "".join(out)
