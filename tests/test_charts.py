"""Inline SVG charts (issue 7): valid XML, readable labels, honest geometry, no NaN in the output.

Expected pixels are computed by hand from the layout constants documented in
planner/reports/chart_svg.py (PAD_PX 12, fonts 16/13/12 px, LINE_HEIGHT 1.35, CHAR_WIDTH_EM 0.62,
TICK_LEN_PX 5, TICK_GAP_PX 4, AXIS_LABEL_GAP_PX 8, LEGEND_ROW_PX 22, PLOT_TOP_GAP_PX 10).
"""

from __future__ import annotations

import itertools
import math
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.reports.chart_ticks import (
    axis_labels,
    axis_ticks,
    format_value,
    log_axis_ticks,
)
from planner.reports.charts import (
    BarChart,
    LineChart,
    Marker,
    RefLine,
    Series,
    format_tick,
    nice_ticks,
    render_svg,
)

SVG_NS = "http://www.w3.org/2000/svg"
NS = {"s": SVG_NS}


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def by_class(root: ET.Element, cls: str) -> list[ET.Element]:
    return [el for el in root.iter() if el.get("class") == cls]


def all_text(el: ET.Element) -> str:
    return "".join(el.itertext())


def plot_area(root: ET.Element) -> tuple[float, float, float, float]:
    (rect,) = by_class(root, "plot-area")
    x, y = float(rect.get("x")), float(rect.get("y"))
    return x, y, x + float(rect.get("width")), y + float(rect.get("height"))


def path_numbers(d: str) -> list[tuple[str, list[float]]]:
    """Split an SVG path into (command, numbers) pairs."""
    return [
        (cmd, [float(v) for v in args.split()])
        for cmd, args in re.findall(r"([MLHV])\s*([-\d.\s]+)", d)
    ]


def series_path(root: ET.Element, name: str) -> ET.Element:
    (path,) = [el for el in root.iter(f"{{{SVG_NS}}}path") if el.get("data-series") == name]
    return path


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


# --- nice_ticks and format_tick ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lo", "hi", "max_ticks", "expected"),
    [
        (0, 97, 7, [0, 20, 40, 60, 80, 100]),  # 10 would need 11 ticks; 20 is the first that fits
        (0, 1, 7, [0, 0.2, 0.4, 0.6, 0.8, 1.0]),  # fractions (pct axis)
        (0, 2600, 7, [0, 500, 1000, 1500, 2000, 2500, 3000]),  # 250 -> 12 ticks, 500 -> 7
        (0, 100, 5, [0, 25, 50, 75, 100]),  # the 2.5 mantissa
        (-35, 80, 7, [-40, -20, 0, 20, 40, 60, 80]),  # negative values: first tick below lo
        (0.3, 0.7, 7, [0.3, 0.4, 0.5, 0.6, 0.7]),  # 0.05 needs 9 ticks; no 0.30000000000000004
        (5, 5, 7, [4.4, 4.6, 4.8, 5.0, 5.2, 5.4, 5.6]),  # one value: a +-10% window around it
        (0, 0, 7, [0, 0.2, 0.4, 0.6, 0.8, 1.0]),  # all zero: [0, 1]
        (97, 0, 7, [0, 20, 40, 60, 80, 100]),  # bounds in either order
        (0, 2.5e6, 7, [0, 5e5, 1e6, 1.5e6, 2e6, 2.5e6]),  # millions of dollars
    ],
)
def test_nice_ticks_hand_computed(lo, hi, max_ticks, expected):
    assert nice_ticks(lo, hi, max_ticks) == expected


@given(
    st.floats(-1e9, 1e9, allow_nan=False),
    st.floats(1e-6, 1e9, allow_nan=False),
)
def test_nice_ticks_cover_the_range_with_4_to_7_evenly_spaced_ticks(lo, span):
    hi = lo + span
    ticks = nice_ticks(lo, hi)
    step = ticks[1] - ticks[0]
    # Covers the range, up to float noise of a billionth of a step (which must not add a tick).
    assert ticks[0] <= lo + 1e-9 * step and ticks[-1] >= hi - 1e-9 * step
    if span > 1e-6 * max(abs(lo), abs(hi)):  # not the degenerate single-value window
        assert 4 <= len(ticks) <= 7
    steps = [b - a for a, b in itertools.pairwise(ticks)]
    assert max(steps) - min(steps) <= 1e-6 * max(steps)
    mantissa = steps[0] / 10 ** math.floor(math.log10(steps[0]))
    assert any(math.isclose(mantissa, m, rel_tol=1e-6) for m in (1, 2, 2.5, 5, 10))


def test_nice_ticks_rejects_non_finite_bounds():
    with pytest.raises(ValueError, match="finite"):
        nice_ticks(0, math.inf)


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


def test_hour_axis_uses_one_unit_and_ticks_in_it():
    # 0..200 h is over 72 h, so the axis counts in days: nice steps of 2 d = 48 h, not 40 h.
    ticks = axis_ticks(0, 200, "hours")
    assert ticks == [0, 48, 96, 144, 192, 240]
    assert axis_labels(ticks, "hours") == ["0 d", "2 d", "4 d", "6 d", "8 d", "10 d"]
    # 0..50 h stays in hours, even for the 0 tick.
    assert axis_labels(nice_ticks(0, 50), "hours") == [
        "0 h",
        "10 h",
        "20 h",
        "30 h",
        "40 h",
        "50 h",
    ]


def test_log_hour_axis_ticks_at_round_durations():
    ticks = log_axis_ticks(6, 700, "hours")
    assert ticks == [6, 12, 24, 48, 120, 336, 720]
    assert axis_labels(ticks, "hours", log=True) == [
        "6 h",
        "12 h",
        "24 h",
        "48 h",
        "5 d",
        "14 d",
        "30 d",
    ]


def test_data_values_keep_cents_under_a_thousand_dollars_as_the_tables_do():
    assert format_value(3.8, "usd") == "$3.80"
    assert format_value(999.994, "usd") == "$999.99"
    assert format_value(-10.0, "usd") == "-$10.00"
    assert format_value(-0.001, "usd") == "$0.00"  # no negative zero
    assert format_value(999.996, "usd") == format_tick(999.996, "usd") == "$1k"
    assert format_value(75_800.0, "usd") == "$75.8k"
    assert format_value(0.5, "pct") == format_tick(0.5, "pct") == "50%"


def test_log_hour_axis_at_the_last_round_duration_widens_downwards():
    # A single point at the largest duration (10 years) once found no duration above it.
    assert log_axis_ticks(87600.0, 87600.0, "hours") == [43800.0, 87600.0]
    assert log_axis_ticks(6.0, 6.0, "hours") == [6.0, 12.0]


def test_axis_labels_are_never_duplicated():
    ticks = [1000.0, 1000.5, 1001.0]  # all "$1k" at three significant digits
    labels = axis_labels(ticks, "usd")
    assert len(set(labels)) == 3
    assert labels == ["$1k", "$1.0005k", "$1.001k"]


def test_number_axis_switches_to_si_as_a_whole():
    assert axis_labels([0, 5000, 10_000, 15_000], "number") == ["0", "5k", "10k", "15k"]
    assert axis_labels([0, 2000, 4000], "number") == ["0", "2,000", "4,000"]


# --- Document structure ------------------------------------------------------------------------


def test_root_is_an_accessible_svg_with_title_and_desc_first():
    chart = line_chart(caption="Cloud cost grows by $1 a month.")
    svg = render_svg(chart)
    assert not svg.startswith("<?xml")
    root = parse(svg)
    assert root.tag == f"{{{SVG_NS}}}svg"
    assert root.get("class") == "chart"
    assert root.get("role") == "img"
    assert root.get("viewBox") == "0 0 720 400"
    assert (root.get("width"), root.get("height")) == ("720", "400")
    assert "DejaVu Sans" in root.get("font-family") and "system-ui" in root.get("font-family")
    first, second = list(root)[:2]
    assert first.tag == f"{{{SVG_NS}}}title" and first.text == "Cost over time"
    assert second.tag == f"{{{SVG_NS}}}desc" and second.text == "Cloud cost grows by $1 a month."
    assert root.get("aria-labelledby").split() == [first.get("id"), second.get("id")]


def test_desc_is_generated_without_a_caption():
    root = parse(render_svg(line_chart()))
    desc = root.find("s:desc", NS).text
    assert "cost (USD)" in desc and "time (months)" in desc and "cloud" in desc


def test_title_axis_labels_and_legend_are_drawn():
    chart = line_chart(
        series=(
            Series("cloud", ((0.0, 0.0), (10.0, 50.0))),
            Series("on-prem", ((0.0, 30.0), (10.0, 35.0)), dashed=True),
        )
    )
    root = parse(render_svg(chart))
    (title,) = by_class(root, "plot-title")
    assert all_text(title) == "Cost over time"
    labels = {el.get("data-axis"): all_text(el) for el in by_class(root, "axis-label")}
    assert labels == {"x": "time (months)", "y": "cost (USD)"}
    (legend,) = by_class(root, "legend")
    entries = by_class(legend, "legend-entry")
    assert [e.get("data-series") for e in entries] == ["cloud", "on-prem"]
    assert [all_text(e) for e in entries] == ["cloud", "on-prem"]
    assert len(by_class(root, "x-axis")) == 1 and len(by_class(root, "y-axis")) == 1


def test_fonts_are_readable():
    root = parse(render_svg(line_chart(markers=(Marker(50, 50, "half way"),))))
    (title,) = by_class(root, "plot-title")
    title_sizes = {float(t.get("font-size")) for t in title.iter(f"{{{SVG_NS}}}text")}
    assert min(title_sizes) >= 15
    sizes = [float(t.get("font-size")) for t in root.iter(f"{{{SVG_NS}}}text")]
    assert min(sizes) >= 12


def test_legend_sits_above_the_plot_area():
    root = parse(render_svg(line_chart()))
    _, top, _, _ = plot_area(root)
    (legend,) = by_class(root, "legend")
    ys = [float(el.get("y") or el.get("y1")) for el in legend.iter() if el.get("y") or el.get("y1")]
    assert ys and max(ys) < top


# --- Geometry ----------------------------------------------------------------------------------


def test_plot_area_matches_the_documented_margins():
    # Y ticks $0..$100 (step 20): widest label "$100" = 4 chars x 12 px x 0.62 = 29.76 px.
    # left   = PAD 12 + axis label 13 x 1.35 + gap 8 + 29.76 + tick gap 4 + tick 5 = 76.31
    # right  = 720 - PAD 12 - half of the last x label "100" (3 x 7.44 / 2 = 11.16) = 696.84
    # top    = PAD 12 + title 16 x 1.35 + 4 + one legend row 22 + gap 10 = 69.6
    # bottom = 400 - PAD 12 - (5 + 4 + 12 x 1.35 + 8 + 13 x 1.35 = 50.75) = 337.25
    root = parse(render_svg(line_chart(x_format="number")))
    left, top, right, bottom = plot_area(root)
    assert left == pytest.approx(76.3, abs=0.06)
    assert right == pytest.approx(696.84, abs=0.1)
    assert top == pytest.approx(69.6, abs=0.06)
    assert bottom == pytest.approx(337.25, abs=0.1)


def test_points_land_on_the_plot_edges():
    root = parse(render_svg(line_chart(x_format="number")))
    left, top, right, bottom = plot_area(root)
    (start, end) = path_numbers(series_path(root, "cloud").get("d"))
    assert start == ("M", [pytest.approx(76.3, abs=0.06), pytest.approx(337.25, abs=0.06)])
    # x = 100 is the last tick: the right edge; y = 100 is the top tick: the top edge.
    assert end == ("L", [pytest.approx(right, abs=0.06), pytest.approx(top, abs=0.06)])
    assert start[1] == [pytest.approx(left, abs=0.06), pytest.approx(bottom, abs=0.06)]


def test_y_axis_starts_at_zero_unless_asked_not_to():
    points = ((0.0, 50.0), (10.0, 60.0))
    root = parse(render_svg(line_chart(series=(Series("s", points),))))
    values = [
        float(t.get("data-value"))
        for t in by_class(root, "y-axis")[0].iter()
        if t.get("data-value")
    ]
    assert min(values) == 0
    root = parse(render_svg(line_chart(series=(Series("s", points),), y_zero=False)))
    values = [
        float(t.get("data-value"))
        for t in by_class(root, "y-axis")[0].iter()
        if t.get("data-value")
    ]
    assert min(values) == 50 and max(values) == 60


def test_step_series_goes_horizontal_then_vertical():
    pts = ((1.0, 40.0), (2.0, 20.0), (4.0, 10.0))
    root = parse(render_svg(line_chart(series=(Series("frontier", pts, step=True),))))
    commands = path_numbers(series_path(root, "frontier").get("d"))
    assert [c for c, _ in commands] == ["M", "H", "V", "H", "V"]
    (_, (x0, y0)), (_, (h1,)), (_, (v1,)), (_, (h2,)), (_, (v2,)) = commands
    # Each H keeps the previous y and moves to the next x; each V then drops to the next y.
    assert h1 > x0 and h2 > h1
    assert v1 > y0 and v2 > v1  # lower cost = further down the page
    # The drop from 40 to 20 is twice the drop from 20 to 10.
    assert (v1 - y0) == pytest.approx(2 * (v2 - v1), abs=0.2)


def test_log_axis_puts_each_decade_the_same_distance_apart():
    pts = ((10.0, 1.0), (100.0, 2.0), (1000.0, 3.0))
    root = parse(render_svg(line_chart(series=(Series("s", pts),), x_log=True)))
    (_, (x10, _)), (_, (x100, _)), (_, (x1000, _)) = path_numbers(series_path(root, "s").get("d"))
    assert x100 - x10 == pytest.approx(x1000 - x100, abs=0.15)
    left, _, right, _ = plot_area(root)
    assert (x10, x1000) == (pytest.approx(left, abs=0.06), pytest.approx(right, abs=0.06))
    ticks = {
        float(t.get("data-value")): float(t.get("x"))
        for t in by_class(root, "x-axis")[0].iter()
        if t.get("data-value")
    }
    assert ticks[100.0] - ticks[10.0] == pytest.approx(x100 - x10, abs=0.15)


def test_log_axis_drops_non_positive_points():
    pts = ((0.0, 5.0), (-1.0, 5.0), (10.0, 1.0), (100.0, 2.0))
    svg = render_svg(line_chart(series=(Series("s", pts),), x_log=True))
    assert len(path_numbers(series_path(parse(svg), "s").get("d"))) == 2


def test_log_axis_drops_values_whose_decades_cannot_be_represented():
    # 10.0**-324 underflows to 0.0 and 10.0**309 overflows: such points cannot sit on a log axis.
    pts = ((5e-324, 1.0), (1e308, 2.0), (10.0, 1.0), (100.0, 2.0))
    chart = line_chart(series=(Series("s", pts),), markers=(Marker(5e-324, 0.0, "m"),), x_log=True)
    root = parse(render_svg(chart))
    assert len(path_numbers(series_path(root, "s").get("d"))) == 2
    assert by_class(root, "marker") == []


def test_markers_and_reference_lines_are_drawn_with_their_labels():
    chart = line_chart(
        markers=(Marker(40.0, 40.0, "breakeven: month 40"),),
        ref_lines=(RefLine(60.0, "your deadline"), RefLine(80.0, "budget", "y")),
    )
    root = parse(render_svg(chart))
    (marker,) = by_class(root, "marker")
    assert all_text(marker) == "breakeven: month 40"
    circle = marker.find("s:circle", NS)
    (path_start, path_end) = path_numbers(series_path(root, "cloud").get("d"))
    # (40, 40) is on the line from (0, 0) to (100, 100): 40% along it.
    assert float(circle.get("cx")) == pytest.approx(
        path_start[1][0] + 0.4 * (path_end[1][0] - path_start[1][0]), abs=0.1
    )
    assert float(circle.get("cy")) == pytest.approx(
        path_start[1][1] + 0.4 * (path_end[1][1] - path_start[1][1]), abs=0.1
    )
    refs = {el.get("data-axis"): el for el in by_class(root, "ref-line")}
    assert all_text(refs["x"]) == "your deadline" and all_text(refs["y"]) == "budget"
    x_line = refs["x"].find("s:line", NS)
    assert x_line.get("x1") == x_line.get("x2") and x_line.get("stroke-dasharray")
    y_line = refs["y"].find("s:line", NS)
    assert y_line.get("y1") == y_line.get("y2")


def test_marker_label_stays_inside_the_chart_near_the_right_edge():
    chart = line_chart(markers=(Marker(100.0, 100.0, "a rather long label at the corner"),))
    root = parse(render_svg(chart))
    text = by_class(root, "marker")[0].find("s:text", NS)
    assert text.get("text-anchor") == "end"  # grows to the left, away from the edge
    assert float(text.get("x")) <= 720


def test_dashed_series_and_distinct_colours():
    chart = line_chart(
        series=(
            Series("a", ((0.0, 1.0), (1.0, 2.0))),
            Series("b", ((0.0, 2.0), (1.0, 3.0)), dashed=True),
        )
    )
    root = parse(render_svg(chart))
    a, b = series_path(root, "a"), series_path(root, "b")
    assert a.get("stroke-dasharray") is None and b.get("stroke-dasharray")
    assert a.get("stroke") != b.get("stroke")
    assert a.get("stroke") == "#0072B2"  # Okabe-Ito blue first


def test_coordinates_have_at_most_one_decimal():
    pts = tuple((i / 7, (i * 13 % 11) / 3) for i in range(20))
    svg = render_svg(line_chart(series=(Series("s", pts),)))
    numbers = re.findall(r"\d+\.\d+", re.sub(r'data-[a-z]+="[^"]*"', "", svg))
    assert numbers and all(len(n.split(".")[1]) == 1 for n in numbers)


# --- Bars --------------------------------------------------------------------------------------


def bars(root: ET.Element, category: str) -> list[ET.Element]:
    return [el for el in by_class(root, "bar") if el.get("data-category") == category]


def test_bar_heights_are_proportional_to_values():
    root = parse(render_svg(bar_chart()))
    (a,), (b,) = bars(root, "A"), bars(root, "B")
    ha, hb = float(a.get("height")), float(b.get("height"))
    assert hb / ha == pytest.approx(3.0, abs=0.01)
    # Both stand on the baseline (the bottom of the plot area, value 0).
    _, _, _, bottom = plot_area(root)
    for rect in (a, b):
        assert float(rect.get("y")) + float(rect.get("height")) == pytest.approx(bottom, abs=0.1)
    assert (a.get("data-segment"), a.get("data-value"), b.get("data-value")) == (
        "compute",
        "10.0",
        "30.0",
    )


def test_stacked_segments_tile_the_bar_up_to_its_total():
    chart = bar_chart(
        stacks=(("compute", (10.0, 30.0)), ("storage", (5.0, 2.5)), ("egress", (0.3, 0.0)))
    )
    root = parse(render_svg(chart))
    _, top, _, bottom = plot_area(root)
    y_ticks = [
        float(t.get("data-value"))
        for t in by_class(root, "y-axis")[0].iter()
        if t.get("data-value")
    ]
    px_per_usd = (bottom - top) / max(y_ticks)
    for category, total in (("A", 15.3), ("B", 32.5)):
        rects = bars(root, category)
        assert [r.get("data-segment") for r in rects] == ["compute", "storage", "egress"]
        heights = [float(r.get("height")) for r in rects]
        assert sum(heights) == pytest.approx(total * px_per_usd, abs=0.2)
        # Each segment sits directly on the one below it.
        for lower, upper in itertools.pairwise(rects):
            assert float(upper.get("y")) + float(upper.get("height")) == pytest.approx(
                float(lower.get("y")), abs=0.01
            )
    totals = {t.get("data-category"): all_text(t) for t in by_class(root, "bar-total")}
    assert totals == {"A": "$15.30", "B": "$32.50"}


def test_horizontal_bars_are_proportional_and_labelled():
    chart = bar_chart(horizontal=True, categories=("A", "B"))
    root = parse(render_svg(chart))
    (a,), (b,) = bars(root, "A"), bars(root, "B")
    assert float(b.get("width")) / float(a.get("width")) == pytest.approx(3.0, abs=0.01)
    left, _, _, _ = plot_area(root)
    assert float(a.get("x")) == pytest.approx(left, abs=0.1)
    assert float(a.get("y")) < float(b.get("y"))  # categories top to bottom in order
    assert [all_text(t) for t in by_class(root, "category-label")] == ["A", "B"]


def test_highlighted_category_is_bold_and_outlined():
    chart = bar_chart(highlight=1, categories=("cheap", "recommended"))
    root = parse(render_svg(chart))
    (outline,) = by_class(root, "bar-highlight")
    assert outline.get("data-category") == "recommended"
    (bar,) = bars(root, "recommended")
    ox, oy = float(outline.get("x")), float(outline.get("y"))
    assert ox < float(bar.get("x")) and oy < float(bar.get("y"))
    assert ox + float(outline.get("width")) > float(bar.get("x")) + float(bar.get("width"))
    labels = {all_text(t): t.get("font-weight") for t in by_class(root, "category-label")}
    assert labels == {"cheap": None, "recommended": "bold"}


def test_negative_bars_hang_below_the_zero_line():
    chart = bar_chart(stacks=(("net", (20.0, -10.0)),))
    root = parse(render_svg(chart))
    (zero,) = by_class(root, "zero-line")
    y0 = float(zero.get("y1"))
    (pos,), (neg,) = bars(root, "A"), bars(root, "B")
    assert float(pos.get("y")) + float(pos.get("height")) == pytest.approx(y0, abs=0.1)
    assert float(neg.get("y")) == pytest.approx(y0, abs=0.1)
    assert float(pos.get("height")) == pytest.approx(2 * float(neg.get("height")), abs=0.2)
    totals = {t.get("data-category"): all_text(t) for t in by_class(root, "bar-total")}
    assert totals["B"] == "-$10.00"


def test_all_zero_bars_render():
    root = parse(render_svg(bar_chart(stacks=(("x", (0.0, 0.0)),))))
    assert [float(r.get("height")) for r in by_class(root, "bar")] == [0.0, 0.0]
    assert [all_text(t) for t in by_class(root, "bar-total")] == ["$0.00", "$0.00"]


def test_long_category_labels_are_cut_with_the_full_text_in_a_tooltip():
    long = "8xH100 spot in us-east-1 on p5.48xlarge with a three-year commitment and a discount"
    root = parse(render_svg(bar_chart(horizontal=True, categories=(long, "B"))))
    label = by_class(root, "category-label")[0]
    assert label.text.endswith("…") and len(label.text) < len(long)
    assert label.find("s:title", NS).text == long


def test_many_horizontal_bars_make_the_chart_taller():
    n = 30
    chart = bar_chart(
        horizontal=True,
        categories=tuple(f"plan {i}" for i in range(n)),
        stacks=(("c", tuple(float(i + 1) for i in range(n))),),
    )
    root = parse(render_svg(chart, height_px=400))
    assert int(root.get("height")) > 400
    _, top, _, bottom = plot_area(root)
    assert (bottom - top) / n >= 24 - 0.1


def test_bar_segments_must_match_the_categories():
    with pytest.raises(ValueError, match="one per category"):
        render_svg(bar_chart(stacks=(("compute", (1.0,)),)))
    with pytest.raises(ValueError, match="highlight"):
        render_svg(bar_chart(highlight=5))


# --- Text safety and bad data ------------------------------------------------------------------


def test_text_is_escaped():
    chart = line_chart(
        title='Cost of "A" & <B>',
        series=(Series("<A&B>", ((0.0, 1.0), (1.0, 2.0))),),
        markers=(Marker(0.5, 1.5, "x < y & z"),),
    )
    root = parse(render_svg(chart))
    assert root.find("s:title", NS).text == 'Cost of "A" & <B>'
    assert series_path(root, "<A&B>") is not None
    assert [all_text(e) for e in by_class(root, "legend-entry")] == ["<A&B>"]
    assert all_text(by_class(root, "marker")[0]) == "x < y & z"


def test_control_characters_are_dropped():
    root = parse(render_svg(line_chart(title="a\x00b\x1fc")))
    assert root.find("s:title", NS).text == "abc"


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
def test_empty_charts_render_a_no_data_note(chart):
    svg = render_svg(chart)
    root = parse(svg)
    (note,) = by_class(root, "no-data")
    assert note.text == "No data to plot"
    assert root.find("s:title", NS).text == chart.title
    assert "nan" not in svg.lower() and "inf" not in svg.lower()


def test_non_finite_points_are_dropped():
    pts = ((0.0, 1.0), (1.0, math.nan), (2.0, 3.0), (math.inf, 4.0), (4.0, -math.inf))
    svg = render_svg(line_chart(series=(Series("s", pts),)))
    assert len(path_numbers(series_path(parse(svg), "s").get("d"))) == 2
    assert "nan" not in svg.lower() and "inf" not in svg.lower()


def test_single_point_series_shows_a_dot():
    root = parse(render_svg(line_chart(series=(Series("one", ((5.0, 7.0),)),))))
    (dot,) = by_class(root, "point")
    assert dot.get("data-series") == "one"


def test_rendering_is_deterministic_and_ids_differ_between_charts():
    a, b = line_chart(), line_chart(title="Another")
    assert render_svg(a) == render_svg(a)
    id_a = parse(render_svg(a)).find("s:title", NS).get("id")
    id_b = parse(render_svg(b)).find("s:title", NS).get("id")
    assert id_a != id_b
    assert parse(render_svg(a, chart_id="fig1")).find("s:title", NS).get("id") == "fig1-title"


def test_caption_is_drawn_only_when_asked():
    chart = line_chart(caption="Read this.")
    assert by_class(parse(render_svg(chart)), "caption") == []
    (caption,) = by_class(parse(render_svg(chart, show_caption=True)), "caption")
    assert all_text(caption) == "Read this."


# --- Any input ---------------------------------------------------------------------------------

# Text from an alphabet that cannot spell "nan" or "inf", so those words can only come from numbers.
TEXT = st.text(alphabet="ABCDExyz <&>\"'é€\u00a0\x07", max_size=30)
ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True)
NUMERIC_ATTRS = ("x", "y", "width", "height", "cx", "cy", "r", "x1", "x2", "y1", "y2")


def assert_clean(svg: str) -> None:
    root = parse(svg)  # valid XML
    assert root.tag == f"{{{SVG_NS}}}svg"
    lowered = svg.lower()
    assert "nan" not in lowered and "inf" not in lowered
    for el in root.iter():
        for attr in NUMERIC_ATTRS:
            if el.get(attr) is not None:
                assert math.isfinite(float(el.get(attr)))
        if el.get("d"):
            assert all(math.isfinite(v) for _, vs in path_numbers(el.get("d")) for v in vs)


@settings(max_examples=150, deadline=None)
@given(
    title=TEXT,
    series=st.lists(
        st.tuples(
            TEXT,
            st.lists(st.tuples(ANY_FLOAT, ANY_FLOAT), max_size=8),
            st.booleans(),
            st.booleans(),
        ),
        max_size=4,
    ),
    markers=st.lists(st.tuples(ANY_FLOAT, ANY_FLOAT, TEXT), max_size=3),
    refs=st.lists(st.tuples(ANY_FLOAT, TEXT, st.sampled_from(["x", "y"])), max_size=3),
    x_format=st.sampled_from(["usd", "number", "pct", "hours", "months"]),
    y_format=st.sampled_from(["usd", "number", "pct", "hours", "months"]),
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


@settings(max_examples=150, deadline=None)
@given(
    data=st.data(),
    n=st.integers(0, 6),
    n_segments=st.integers(0, 4),
    horizontal=st.booleans(),
    fmt=st.sampled_from(["usd", "number", "pct", "hours", "months"]),
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


def test_many_narrow_bars_label_every_nth_category_in_full():
    months = tuple(f"2027-{m:02d}" for m in range(1, 13)) + tuple(
        f"2028-{m:02d}" for m in range(1, 13)
    )
    chart = bar_chart(categories=months, stacks=(("spend", tuple(float(i) for i in range(24))),))
    root = parse(render_svg(chart))
    shown = [all_text(t) for t in by_class(root, "category-label")]
    assert 4 <= len(shown) < 24
    assert all(label in months for label in shown)  # whole names, no ellipsis
    assert shown[0] == "2027-01"
    assert {r.get("data-category") for r in by_class(root, "bar")} == set(months)


def test_crowded_marker_labels_get_a_leader_line_to_their_dot():
    chart = line_chart(
        markers=tuple(Marker(50.0 + i, 50.0 + i, f"label number {i}") for i in range(3)),
    )
    root = parse(render_svg(chart))
    markers = by_class(root, "marker")
    assert len(markers) == 3
    leaders = [m for m in markers if by_class(m, "leader")]
    assert leaders  # three labels cannot all sit next to dots one pixel apart
    for m in leaders:
        (line,) = by_class(m, "leader")
        circle = m.find("s:circle", NS)
        assert (line.get("x1"), line.get("y1")) == (circle.get("cx"), circle.get("cy"))
