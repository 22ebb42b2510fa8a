"""Report charts (issue 7), drawn by matplotlib: what the figure holds, the inline SVG it becomes,
byte-stable output, and no matplotlib state or import outside the drawing.

Expected ticks are worked out by hand from what the renderer asks of matplotlib: axes autoscale to
the data plus a 5% margin on each side (the y axis then widened to 0 by ``y_zero``), linear ticks
come from ``MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10])`` (the smallest nice step of at least a
sixth of the span) and only ticks inside the limits are kept.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.reports.chart_ticks import axis_labels, format_value
from planner.reports.charts import (
    INK,
    PALETTE,
    BarChart,
    LineChart,
    Marker,
    RefLine,
    Series,
    format_tick,
    render_svg,
    to_figure,
)

SVG_NS = "http://www.w3.org/2000/svg"
NS = {"s": SVG_NS}


def line_chart(**kwargs) -> LineChart:
    base = {
        "title": "Cost over time",
        "x_label": "time (months)",
        "y_label": "cost (USD)",
        "series": (Series("cloud", ((0.0, 0.0), (100.0, 100.0))),),
    }
    base.update(kwargs)
    return LineChart(**base)


def bar_chart(**kwargs) -> BarChart:
    base = {
        "title": "Spend by plan",
        "category_label": "plan",
        "value_label": "spend (USD)",
        "categories": ("A", "B"),
        "stacks": (("compute", (10.0, 30.0)),),
    }
    base.update(kwargs)
    return BarChart(**base)


def only_axes(fig):
    (ax,) = fig.axes
    return ax


def tick_labels(ax, which: str) -> list[str]:
    labels = ax.get_xticklabels() if which == "x" else ax.get_yticklabels()
    return [t.get_text() for t in labels]


def series_line(ax, name: str):
    (line,) = [line for line in ax.get_lines() if line.get_label() == name]
    return line


def bar_patches(ax):
    """The bar segments (the highlight outline is the one unfilled patch)."""
    return [p for p in ax.patches if p.get_fill()]


def texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


# --- Value formats ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "fmt", "expected"),
    [
        (0, "usd", "$0"),
        (500, "usd", "$500"),
        (1500, "usd", "$1.5k"),
        (2_000_000, "usd", "$2M"),
        (12_345, "usd", "$12.3k"),  # three significant digits
        (999_999, "usd", "$1M"),  # rounds up into the next unit, not "$1000k"
        (-2500, "usd", "-$2.5k"),
        (2.5, "usd", "$2.5"),  # a price per hour
        (3e9, "usd", "$3B"),
        (1200, "number", "1,200"),
        (1234, "number", "1,234"),  # integers below 10,000 keep every digit
        (12_000, "number", "12k"),
        (1_500_000, "number", "1.5M"),
        (0.5, "number", "0.5"),
        (0.4, "pct", "40%"),  # fractions
        (0.125, "pct", "12.5%"),
        (1.0, "pct", "100%"),
        (0.5, "hours", "30 min"),  # under 2 h: minutes
        (1.5, "hours", "90 min"),
        (2, "hours", "2 h"),
        (12, "hours", "12 h"),
        (72, "hours", "72 h"),  # up to 72 h: hours
        (96, "hours", "4 d"),  # over 72 h: days
        (84, "hours", "3.5 d"),
        (0, "hours", "0 h"),
        (18, "months", "18 mo"),
        (1.5, "months", "1.5 mo"),
    ],
)
def test_format_tick_reads_like_a_person_writes_it(value, fmt, expected):
    assert format_tick(value, fmt) == expected


def test_data_values_keep_cents_under_a_thousand_dollars_as_the_tables_do():
    assert format_value(3.8, "usd") == "$3.80"
    assert format_value(999.994, "usd") == "$999.99"
    assert format_value(-10.0, "usd") == "-$10.00"
    assert format_value(-0.001, "usd") == "$0.00"  # no negative zero
    assert format_value(999.996, "usd") == format_tick(999.996, "usd") == "$1k"
    assert format_value(75_800.0, "usd") == "$75.8k"
    assert format_value(0.5, "pct") == format_tick(0.5, "pct") == "50%"


def test_hour_axis_labels_use_one_unit():
    # The largest tick (240 h) is over 72 h, so every label is in days, even the 0 tick ...
    assert axis_labels([0, 48, 96, 144, 192, 240], "hours") == ["0 d", "2 d", "4 d", "6 d", "8 d", "10 d"]  # fmt: skip
    # ... unless the axis names its unit; a log axis lets each tick pick its own.
    assert axis_labels([0, 24, 48], "hours", unit="h") == ["0 h", "24 h", "48 h"]
    assert axis_labels([6, 24, 120], "hours", log=True) == ["6 h", "24 h", "5 d"]


def test_axis_labels_are_never_duplicated():
    ticks = [1000.0, 1000.5, 1001.0]  # all "$1k" at three significant digits
    assert axis_labels(ticks, "usd") == ["$1k", "$1.0005k", "$1.001k"]


def test_number_axis_switches_to_si_as_a_whole():
    assert axis_labels([0, 5000, 10_000, 15_000], "number") == ["0", "5k", "10k", "15k"]
    assert axis_labels([0, 2000, 4000], "number") == ["0", "2,000", "4,000"]


# --- The figure: line charts ----------------------------------------------------------------


def test_figure_has_the_size_title_axis_labels_and_legend():
    chart = line_chart(
        series=(
            Series("cloud", ((0.0, 0.0), (10.0, 50.0))),
            Series("", ((0.0, 5.0), (10.0, 6.0))),  # no name: no legend entry
            Series("on-prem", ((0.0, 30.0), (10.0, 35.0)), dashed=True),
        )
    )
    fig = to_figure(chart, width_px=600, height_px=300)
    assert (fig.get_figwidth() * fig.dpi, fig.get_figheight() * fig.dpi) == (600, 300)
    assert fig.get_suptitle() == "Cost over time"
    ax = only_axes(fig)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("time (months)", "cost (USD)")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["cloud", "on-prem"]
    assert ax.get_xscale() == ax.get_yscale() == "linear"


def test_lines_hold_the_finite_points_in_palette_order():
    pts = ((2.0, 3.0), (0.0, 1.0), (1.0, math.nan), (math.inf, 4.0), (4.0, -math.inf), (5.0, 2e15))
    chart = line_chart(
        series=(Series("s", pts), Series("t", ((0.0, 2.0), (1.0, 3.0)), dashed=True, step=True))
    )
    ax = only_axes(to_figure(chart))
    s, t = series_line(ax, "s"), series_line(ax, "t")
    # NaN, infinities and values beyond 1e15 dropped; the rest sorted by x.
    assert s.get_xydata().tolist() == [[0.0, 1.0], [2.0, 3.0]]
    assert (s.get_color(), t.get_color()) == (PALETTE[0], PALETTE[1]) == ("#0072B2", "#D55E00")
    assert (s.get_linestyle(), t.get_linestyle()) == ("-", "--")
    assert (s.get_drawstyle(), t.get_drawstyle()) == ("default", "steps-post")


def test_money_axis_ticks_and_labels():
    # y data 0..100 -> limits 0..105: step 105 / 6 = 17.5 -> 20. x data 0..100 -> -5..105 -> 20.
    ax = only_axes(to_figure(line_chart()))
    assert ax.get_ylim() == (0.0, pytest.approx(105.0))  # y_zero: starts at 0
    assert tick_labels(ax, "y") == ["$0", "$20", "$40", "$60", "$80", "$100"]
    assert tick_labels(ax, "x") == ["0", "20", "40", "60", "80", "100"]
    # 0..2500 -> 0..2625: step 437.5 -> 500, written in thousands.
    ax = only_axes(to_figure(line_chart(series=(Series("s", ((0.0, 0.0), (1.0, 2500.0))),))))
    assert tick_labels(ax, "y") == ["$0", "$500", "$1k", "$1.5k", "$2k", "$2.5k"]


def test_y_axis_starts_at_zero_unless_asked_not_to():
    points = ((0.0, 50.0), (10.0, 60.0))
    ax = only_axes(to_figure(line_chart(series=(Series("s", points),))))
    assert ax.get_ylim()[0] == 0.0
    ax = only_axes(to_figure(line_chart(series=(Series("s", points),), y_zero=False)))
    # 50..60 -> 49.5..60.5: step 11 / 6 = 1.83 -> 2.
    assert ax.get_ylim() == (pytest.approx(49.5), pytest.approx(60.5))
    assert tick_labels(ax, "y") == ["$50", "$52", "$54", "$56", "$58", "$60"]


def test_percent_and_month_axes():
    chart = line_chart(
        series=(Series("s", ((0.1, 1.0), (1.0, 2.0))),), x_format="pct", y_format="months"
    )
    ax = only_axes(to_figure(chart))
    # x 0.1..1 -> 0.055..1.045: step 0.165 -> 0.2. y 0..2.05: step 0.34 -> 0.5.
    assert tick_labels(ax, "x") == ["20%", "40%", "60%", "80%", "100%"]
    assert tick_labels(ax, "y") == ["0 mo", "0.5 mo", "1 mo", "1.5 mo", "2 mo"]


def test_hour_axis_ticks_in_the_unit_it_is_written_in():
    # 0..200 h -> -10..210 h: over 72 h, so days: -0.42..8.75 d, step 1.53 -> 2 d = 48 h, not 40 h.
    chart = line_chart(series=(Series("s", ((0.0, 1.0), (200.0, 2.0))),), x_format="hours")
    ax = only_axes(to_figure(chart))
    assert ax.get_xticks().tolist() == [0, 48, 96, 144, 192]
    assert tick_labels(ax, "x") == ["0 d", "2 d", "4 d", "6 d", "8 d"]


def test_log_hour_axis_ticks_at_round_durations():
    pts = ((6.0, 900.0), (30.0, 300.0), (700.0, 250.0))
    chart = line_chart(series=(Series("s", pts, step=True),), x_format="hours", x_log=True)
    ax = only_axes(to_figure(chart))
    assert ax.get_xscale() == "log"
    # log10 6..700 = 0.778..2.845 plus 5% each side: 4.7..887 h. That holds 9 round durations
    # (6, 12, 24, 48, 72, 120, 168, 336, 720 h); six bins keep every second one.
    assert ax.get_xticks().tolist() == [6, 24, 72, 168, 720]
    assert tick_labels(ax, "x") == ["6 h", "24 h", "72 h", "7 d", "30 d"]


def test_log_axis_of_money_ticks_at_decades():
    pts = ((1.0, 1.0), (1e5, 2.0))
    chart = line_chart(series=(Series("s", pts),), x_format="usd", x_log=True)
    ax = only_axes(to_figure(chart))
    ticks = [t for t in ax.get_xticks().tolist() if 1 <= t <= 1e5]
    assert ticks == [1, 10, 100, 1000, 10_000, 100_000]
    assert tick_labels(ax, "x")[-6:] == ["$1", "$10", "$100", "$1k", "$10k", "$100k"]


def test_log_axis_drops_points_it_cannot_place():
    # Zero and negative x have no place on a log axis; 5e-324 and 1e308 are beyond its range.
    pts = ((0.0, 5.0), (-1.0, 5.0), (5e-324, 1.0), (1e308, 2.0), (10.0, 1.0), (100.0, 2.0))
    chart = line_chart(series=(Series("s", pts),), markers=(Marker(5e-324, 0.0, "m"),), x_log=True)
    ax = only_axes(to_figure(chart))
    assert series_line(ax, "s").get_xydata().tolist() == [[10.0, 1.0], [100.0, 2.0]]
    assert "m" not in texts(ax)


def test_markers_and_reference_lines_are_drawn_with_their_labels():
    chart = line_chart(
        markers=(Marker(40.0, 40.0, "breakeven: month 40"),),
        ref_lines=(RefLine(60.0, "your deadline"), RefLine(80.0, "budget", "y")),
    )
    ax = only_axes(to_figure(chart))
    assert sorted(texts(ax)) == ["breakeven: month 40", "budget", "your deadline"]
    dots = series_line(ax, "_markers")
    assert dots.get_xydata().tolist() == [[40.0, 40.0]]
    assert (dots.get_marker(), dots.get_markerfacecolor()) == ("o", INK)
    dashed = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert sorted((list(line.get_xdata()), list(line.get_ydata())) for line in dashed) == [
        ([0, 1], [80.0, 80.0]),  # horizontal: across the axes at y = 80
        ([60.0, 60.0], [0, 1]),  # vertical: up the axes at x = 60
    ]


def test_marker_labels_stay_in_the_plot_and_off_each_other():
    chart = line_chart(
        markers=tuple(Marker(95.0 + i, 95.0 + i, f"a long label number {i}") for i in range(3))
    )
    fig = to_figure(chart)
    fig.draw_without_rendering()
    ax = only_axes(fig)
    area = ax.get_window_extent()
    boxes = [t.get_window_extent() for t in ax.texts]
    for box in boxes:
        assert area.x0 <= box.x0 and box.x1 <= area.x1 + 2 and box.y1 <= area.y1 + 2
    for i, a in enumerate(boxes):
        assert not any(a.overlaps(b) for b in boxes[i + 1 :])
    # Near the right edge, labels grow to the left of their dots.
    assert {t.get_horizontalalignment() for t in ax.texts} == {"right"}


def test_negative_values_get_a_zero_line():
    chart = line_chart(series=(Series("net", ((0.0, -50.0), (10.0, 80.0))),))
    ax = only_axes(to_figure(chart))
    y_lo, y_hi = ax.get_ylim()
    assert y_lo < 0 < y_hi
    zero = [line for line in ax.get_lines() if list(line.get_ydata()) == [0.0, 0.0]]
    assert len(zero) == 1


def test_caption_is_drawn_only_when_asked():
    chart = line_chart(caption="Read this.")
    assert to_figure(chart).get_supxlabel() == ""
    assert to_figure(chart, show_caption=True).get_supxlabel() == "Read this."
    assert "Read this." in render_svg(chart, show_caption=True).split("</desc>", 1)[1]
    assert "Read this." not in render_svg(chart).split("</desc>", 1)[1]


# --- The figure: bar charts -----------------------------------------------------------------


def test_bar_heights_are_the_values():
    from matplotlib.colors import to_hex

    ax = only_axes(to_figure(bar_chart()))
    a, b = bar_patches(ax)
    assert (a.get_y(), a.get_height(), b.get_y(), b.get_height()) == (0.0, 10.0, 0.0, 30.0)
    assert (to_hex(a.get_facecolor()), a.get_x() + a.get_width() / 2) == ("#0072b2", 0.0)
    assert tick_labels(ax, "x") == ["A", "B"]
    assert texts(ax) == ["$10.00", "$30.00"]  # totals as data values, with cents
    assert ax.get_legend() is not None and ax.get_ylim()[0] == 0.0


def test_stacked_segments_tile_each_bar_up_to_its_total():
    chart = bar_chart(
        stacks=(("compute", (10.0, 30.0)), ("storage", (5.0, 2.5)), ("egress", (0.3, 0.0)))
    )
    ax = only_axes(to_figure(chart))
    by_bar: dict[float, list[tuple[float, float]]] = {}
    for p in bar_patches(ax):
        by_bar.setdefault(p.get_x(), []).append((p.get_y(), p.get_height()))
    assert sorted(by_bar.values()) == [
        [(0.0, 10.0), (10.0, 5.0), (15.0, pytest.approx(0.3))],
        [(0.0, 30.0), (30.0, 2.5), (32.5, 0.0)],
    ]
    assert texts(ax) == ["$15.30", "$32.50"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["compute", "storage", "egress"]


def test_negative_segments_hang_below_zero():
    ax = only_axes(to_figure(bar_chart(stacks=(("net", (20.0, -10.0)),))))
    (pos, neg) = bar_patches(ax)
    assert (pos.get_y(), pos.get_height()) == (0.0, 20.0)
    assert (neg.get_y(), neg.get_height()) == (0.0, -10.0)
    assert texts(ax) == ["$20.00", "-$10.00"]
    assert [list(line.get_ydata()) for line in ax.get_lines()] == [[0.0, 0.0]]  # zero line


def test_horizontal_bars_run_along_x_with_the_first_category_on_top():
    ax = only_axes(to_figure(bar_chart(horizontal=True)))
    a, b = bar_patches(ax)
    assert (a.get_x(), a.get_width(), b.get_width()) == (0.0, 10.0, 30.0)
    assert ax.get_ylim() == (1.5, -0.5)  # inverted: category 0 at the top
    assert tick_labels(ax, "y") == ["A", "B"]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("spend (USD)", "plan")


def test_highlighted_category_is_bold_and_outlined():
    chart = bar_chart(highlight=1, categories=("cheap", "recommended"))
    ax = only_axes(to_figure(chart))
    (outline,) = [p for p in ax.patches if not p.get_fill()]
    assert (outline.get_y(), outline.get_height()) == (0.0, 30.0)
    assert outline.get_x() < 1 < outline.get_x() + outline.get_width()
    assert outline.get_linewidth() == 2.0
    weights = {t.get_text(): t.get_fontweight() for t in ax.get_xticklabels()}
    assert weights == {"cheap": "normal", "recommended": "bold"}


def test_long_category_labels_are_cut_with_the_full_text_in_the_tooltip():
    long = "8xH100 spot in us-east-1 on p5.48xlarge with a three-year commitment and a discount"
    chart = bar_chart(horizontal=True, categories=(long, "B"))
    label = tick_labels(only_axes(to_figure(chart)), "y")[0]
    assert label.endswith("…") and len(label) == 40 and long.startswith(label[:-1])
    bar = parse(render_svg(chart)).find(".//s:g[@class='bar']", NS)
    assert bar.get("data-category") == long
    assert bar.find("s:title", NS).text == f"{long} — compute: $10.00"


def test_many_horizontal_bars_make_the_chart_taller():
    n = 30
    chart = bar_chart(
        horizontal=True,
        categories=tuple(f"plan {i}" for i in range(n)),
        stacks=(("c", tuple(float(i + 1) for i in range(n))),),
    )
    fig = to_figure(chart, height_px=400)
    assert fig.get_figheight() * 72 == 150 + 24 * n
    assert parse(render_svg(chart, height_px=400)).get("height") == str(150 + 24 * n)


def test_many_narrow_bars_label_every_nth_category_in_full():
    months = tuple(f"{y}-{m:02d}" for y in (2027, 2028) for m in range(1, 13))
    chart = bar_chart(
        categories=months, stacks=(("spend", tuple(float(i) for i in range(24))),), highlight=5
    )
    ax = only_axes(to_figure(chart))
    shown = tick_labels(ax, "x")
    assert 4 <= len(shown) < 24
    assert set(shown) <= set(months) and "2027-06" in shown  # whole names; the highlight stays
    assert len(bar_patches(ax)) == 24


def test_bar_segments_must_match_the_categories():
    with pytest.raises(ValueError, match="one per category"):
        render_svg(bar_chart(stacks=(("compute", (1.0,)),)))
    with pytest.raises(ValueError, match="highlight"):
        to_figure(bar_chart(highlight=5))


@pytest.mark.parametrize(
    "chart",
    [
        line_chart(series=()),  # no series
        line_chart(series=(Series("empty", ()),)),  # empty series
        line_chart(series=(Series("bad", ((math.nan, 1.0), (1.0, math.inf))),)),  # nothing finite
        bar_chart(categories=(), stacks=()),  # no categories
        bar_chart(stacks=()),  # no segments
        bar_chart(stacks=(("x", (math.nan, math.inf)),)),  # nothing finite
    ],
)
def test_empty_charts_say_so(chart):
    fig = to_figure(chart)
    assert fig.axes == [] and fig.get_suptitle() == chart.title
    assert "No data to plot" in [t.get_text() for t in fig.texts]
    svg = render_svg(chart)
    root = parse(svg)
    assert root.find("s:title", NS).text == chart.title
    assert [t.text for t in root.iter(f"{{{SVG_NS}}}text")] == [chart.title, "No data to plot"]
    assert "nan" not in svg.lower() and "inf" not in svg.lower()


# --- The SVG ------------------------------------------------------------------------------------


def test_root_is_an_accessible_inline_svg_with_title_and_desc_first():
    chart = line_chart(caption="Cloud cost grows by $1 a month.")
    svg = render_svg(chart, width_px=640, height_px=360)
    assert svg.startswith("<svg ") and svg.endswith("</svg>")  # no XML prolog or DOCTYPE
    root = parse(svg)
    assert root.tag == f"{{{SVG_NS}}}svg"
    assert (root.get("class"), root.get("role")) == ("chart", "img")
    assert (root.get("width"), root.get("height"), root.get("viewBox")) == (
        "640",
        "360",
        "0 0 640 360",
    )
    first, second = list(root)[:2]
    assert first.tag == f"{{{SVG_NS}}}title" and first.text == "Cost over time"
    assert second.tag == f"{{{SVG_NS}}}desc" and second.text == "Cloud cost grows by $1 a month."
    assert root.get("aria-labelledby").split() == [first.get("id"), second.get("id")]


def test_desc_is_generated_without_a_caption():
    desc = parse(render_svg(line_chart())).find("s:desc", NS).text
    assert desc == "Line chart of cost (USD) against time (months); lines: cloud."
    desc = parse(render_svg(bar_chart())).find("s:desc", NS).text
    assert desc == "Bar chart of spend (USD) by plan for 2 categories; segments: compute."


def test_text_stays_text_in_the_planner_formats():
    chart = line_chart(series=(Series("cloud", ((0.0, 0.0), (1.0, 2500.0))),))
    root = parse(render_svg(chart))
    shown = [t.text for t in root.iter(f"{{{SVG_NS}}}text")]
    assert "Cost over time" in shown and "cost (USD)" in shown and "time (months)" in shown
    assert "cloud" in shown  # the legend
    assert {"$0", "$500", "$1k", "$1.5k", "$2k", "$2.5k"} <= set(shown)
    assert root.find(".//s:path[@class='glyph']", NS) is None and "<use xlink:href=\"#DejaVu" not in render_svg(chart)  # fmt: skip


def test_fonts_are_readable():
    svg = render_svg(line_chart(markers=(Marker(50, 50, "half way"),), caption="c"), show_caption=True)  # fmt: skip
    sizes = [float(s) for s in re.findall(r"font-size: ([\d.]+)px", svg)]
    assert sizes and min(sizes) >= 12
    title = next(t for t in parse(svg).iter(f"{{{SVG_NS}}}text") if t.text == "Cost over time")
    assert float(re.search(r"font-size: ([\d.]+)px", title.get("style")).group(1)) >= 15


def test_svg_carries_nothing_that_varies_or_leaks_into_the_page():
    svg = render_svg(line_chart())
    for unwanted in ("<?xml", "<!DOCTYPE", "<metadata", "<style", "dc:date", "Matplotlib v"):
        assert unwanted not in svg, unwanted
    assert not re.search(r'id="[a-z0-9.]+_\d+"', svg)  # no "figure_1" group ids to repeat


def test_two_charts_on_one_page_share_no_ids():
    both = render_svg(line_chart()) + render_svg(line_chart(title="Another"))
    ids = re.findall(r'\bid="([^"]+)"', both)
    assert ids and len(ids) == len(set(ids))
    fig1 = parse(render_svg(line_chart(), chart_id="fig1"))
    assert fig1.find("s:title", NS).get("id") == "fig1-title"


def test_bars_carry_their_data_and_a_tooltip():
    chart = bar_chart(stacks=(("compute", (10.0, 30.0)), ("", (1.0, math.nan))))
    bars = parse(render_svg(chart)).findall(".//s:g[@class='bar']", NS)
    assert [(b.get("data-category"), b.get("data-segment"), b.get("data-value")) for b in bars] == [
        ("A", "compute", "10.0"),
        ("B", "compute", "30.0"),
        ("A", "", "1.0"),
    ]
    assert [b.find("s:title", NS).text for b in bars] == [
        "A — compute: $10.00",
        "B — compute: $30.00",
        "A: $1.00",
    ]
    assert all(b.find("s:path", NS) is not None for b in bars)


def test_text_is_escaped_and_control_characters_dropped():
    chart = line_chart(
        title='Cost of "A" & <B> from $1 to $2\x00',  # two dollars: money, not mathtext
        series=(Series("<A&B>", ((0.0, 1.0), (1.0, 2.0))),),
        markers=(Marker(0.5, 1.5, "x < y & z\x1f"),),
    )
    root = parse(render_svg(chart))
    assert root.find("s:title", NS).text == 'Cost of "A" & <B> from $1 to $2'
    shown = [t.text for t in root.iter(f"{{{SVG_NS}}}text")]
    assert 'Cost of "A" & <B> from $1 to $2' in shown
    assert "<A&B>" in shown and "x < y & z" in shown


# --- Stable bytes, no side effects --------------------------------------------------------------

_STABLE_CHART = """\
from planner.reports.charts import BarChart, LineChart, Marker, RefLine, Series, render_svg
CHARTS = (
    LineChart(
        "Cost", "deadline (hours)", "cost (USD)",
        (Series("a", ((6.0, 900.0), (30.0, 300.0), (700.0, 250.0)), step=True),
         Series("b", ((6.0, 100.0), (700.0, 200.0)), dashed=True)),
        markers=(Marker(30.0, 300.0, "recommended"),), ref_lines=(RefLine(48.0, "deadline"),),
        x_format="hours", x_log=True, caption="Read this.",
    ),
    BarChart(
        "Spend", "month", "spend (USD)", ("2027-01", "2027-02", "2027-03"),
        (("owned", (1.0, 2.0, -3.0)), ("cloud", (4.0, 5.0, 6.0))), highlight=1,
    ),
)
"""


def test_output_bytes_are_the_same_every_time_and_in_every_process():
    namespace: dict[str, Any] = {}
    exec(_STABLE_CHART, namespace)
    charts = namespace["CHARTS"]
    here = [render_svg(c, show_caption=True) for c in charts]
    assert here == [render_svg(c, show_caption=True) for c in charts]
    code = _STABLE_CHART + (
        "import sys\n"
        "for c in CHARTS:\n"
        "    sys.stdout.buffer.write(render_svg(c, show_caption=True).encode() + b'\\0')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "7"},
    )
    assert done.stdout.split(b"\0")[:-1] == [svg.encode() for svg in here]


def test_drawing_leaves_no_matplotlib_state_behind():
    import matplotlib as mpl

    before = mpl.rcParams.copy()  # copy() reads the raw values: no backend resolution
    render_svg(line_chart())
    to_figure(bar_chart())
    assert mpl.rcParams.copy() == before


def test_matplotlib_loads_only_when_a_chart_is_drawn():
    code = (
        "import sys\n"
        "import planner.reports.charts as charts, planner.reports.html, planner.reports.document\n"
        "import planner.reports.quote_doc, planner.reports.tco_doc\n"
        "assert 'matplotlib' not in sys.modules, 'imported with the report modules'\n"
        "chart = charts.LineChart('t', 'x', 'y', (charts.Series('s', ((0.0, 1.0), (1.0, 2.0))),))\n"
        "charts.render_svg(chart)\n"
        "assert 'matplotlib.figure' in sys.modules\n"
        "assert 'matplotlib.pyplot' not in sys.modules, 'pyplot imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- Any input ------------------------------------------------------------------------------

# Text from an alphabet that cannot spell "nan" or "inf", so those words can only come from numbers.
TEXT = st.text(alphabet="ABCDExyz <&>\"'é€$\u00a0\x07", max_size=30)
ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True)
FORMATS = st.sampled_from(["usd", "number", "pct", "hours", "months"])


def assert_clean(svg: str) -> None:
    root = parse(svg)  # valid XML
    assert root.tag == f"{{{SVG_NS}}}svg"
    assert "nan" not in svg.lower() and "inf" not in svg.lower()


@settings(max_examples=40, deadline=None)
@given(
    title=TEXT,
    series=st.lists(
        st.tuples(
            TEXT,
            st.lists(st.tuples(ANY_FLOAT, ANY_FLOAT), max_size=6),
            st.booleans(),
            st.booleans(),
        ),
        max_size=3,
    ),
    markers=st.lists(st.tuples(ANY_FLOAT, ANY_FLOAT, TEXT), max_size=3),
    refs=st.lists(st.tuples(ANY_FLOAT, TEXT, st.sampled_from(["x", "y"])), max_size=2),
    x_format=FORMATS,
    y_format=FORMATS,
    x_log=st.booleans(),
    y_zero=st.booleans(),
)
def test_any_line_chart_renders_clean_xml(
    title, series, markers, refs, x_format, y_format, x_log, y_zero
):
    chart = LineChart(
        title=title,
        x_label="x",
        y_label="y",
        series=tuple(Series(n, tuple(p), dashed=d, step=s) for n, p, d, s in series),
        markers=tuple(Marker(x, y, label) for x, y, label in markers),
        ref_lines=tuple(RefLine(v, label, axis) for v, label, axis in refs),
        x_format=x_format,
        y_format=y_format,
        x_log=x_log,
        y_zero=y_zero,
    )
    assert_clean(render_svg(chart))


@settings(max_examples=40, deadline=None)
@given(
    data=st.data(),
    n=st.integers(0, 6),
    n_segments=st.integers(0, 3),
    horizontal=st.booleans(),
    fmt=FORMATS,
)
def test_any_bar_chart_renders_clean_xml(data, n, n_segments, horizontal, fmt):
    categories = tuple(data.draw(st.lists(TEXT, min_size=n, max_size=n)))
    stacks = tuple(
        (data.draw(TEXT), tuple(data.draw(st.lists(ANY_FLOAT, min_size=n, max_size=n))))
        for _ in range(n_segments)
    )
    highlight = data.draw(st.none() | st.integers(0, n - 1)) if n else None
    chart = BarChart(
        title=data.draw(TEXT),
        category_label="c",
        value_label="v",
        categories=categories,
        stacks=stacks,
        value_format=fmt,
        horizontal=horizontal,
        highlight=highlight,
    )
    assert_clean(render_svg(chart))
