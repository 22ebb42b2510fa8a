"""Text tables drawn without tabulate are the ones tabulate draws (reports.tables)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tabulate import tabulate

from planner.reports.tables import _plain_simple_table, render_records

# Cells as the reports make them: words and labels (some with spaces around them, some that
# tabulate would read as numbers), ints, floats of every size, infinities and NaN, blanks.
_TEXT = st.one_of(
    st.sampled_from(["aws", "us-east-1", "1 x", "DP8 + ZeRO-1", "-", "", " padded ", "x1.5"]),
    st.sampled_from(["12", "1,234", "3.5", "1e3", "inf", "nan", "True", ".5", "1,234.5"]),
    st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=12),
)
_NUMBER = st.one_of(
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-1e6, 1e6),
    st.sampled_from([0.0, 0.5, 1234.5, 1e-05, 123456789.0, -0.0]),
)
_FORMATS = st.sampled_from([",.4g", ",.2f", ",.0f", ",.3f", ",.6g", "g", ".1e"])


@st.composite
def _tables(draw: Any) -> tuple[list[list[Any]], list[str], str]:
    ncols = draw(st.integers(1, 6))
    headers = draw(
        st.lists(
            st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=10),
            min_size=ncols,
            max_size=ncols,
        )
    )
    # each column mostly of one kind, as report columns are
    kinds = draw(
        st.lists(st.sampled_from(["text", "number", "mixed"]), min_size=ncols, max_size=ncols)
    )
    nrows = draw(st.integers(1, 6))
    cell = {"text": _TEXT, "number": _NUMBER, "mixed": st.one_of(_TEXT, _NUMBER)}
    rows = [[draw(cell[k]) for k in kinds] for _ in range(nrows)]
    return rows, headers, draw(_FORMATS)


@settings(max_examples=400, deadline=None)
@given(_tables())
def test_plain_tables_match_tabulate(table: tuple[list[list[Any]], list[str], str]) -> None:
    rows, headers, floatfmt = table
    drawn = _plain_simple_table(rows, headers, floatfmt)
    if drawn is not None:  # None: left to tabulate itself
        expected = tabulate(rows, headers=headers, tablefmt="simple", floatfmt=floatfmt)
        assert drawn == expected


@pytest.mark.parametrize(
    "rows",
    [
        [["aws", 1, 2.76]],  # the quote's plan rows: text, int, float
        [["a", 1.0], ["bb", 1234.5678], ["c", math.inf]],  # decimal alignment, infinity
        [["x", ""], ["y", 2]],  # a blank in a number column
        [["", ""], ["", ""]],  # blank columns
        [[" lead", 3], ["trail ", 10**9]],  # stripped text, wide ints
    ],
)
def test_report_shaped_tables_are_drawn_without_tabulate(rows: list[list[Any]]) -> None:
    headers = [f"col{i}" for i in range(len(rows[0]))]
    drawn = _plain_simple_table(rows, headers, ",.4g")
    assert drawn is not None
    assert drawn == tabulate(rows, headers=headers, tablefmt="simple", floatfmt=",.4g")


@pytest.mark.parametrize(
    "rows",
    [
        [],  # empty: tabulate draws the header alone
        [["12"]],  # text tabulate reads as a number
        [["True"]],  # ... or as a bool
        [[True]],
        [[None]],
        [["A100 \u00d7 8"]],  # non-ASCII: its width is wcwidth's
        [["two\nlines"]],
    ],
)
def test_other_tables_are_left_to_tabulate(rows: list[list[Any]]) -> None:
    assert _plain_simple_table(rows, ["h"], ",.4g") is None


def test_render_records_draws_the_same_table_either_way() -> None:
    records = [
        {"gpu": "H100", "n": 8, "price": 98.32},
        {"gpu": "A100 \u00d7", "n": 1, "price": None},
    ]
    text = render_records(records, "table")
    assert text == tabulate(
        [["H100", 8, 98.32], ["A100 \u00d7", 1, "-"]],
        headers=["gpu", "n", "price"],
        tablefmt="simple",
        floatfmt=",.4g",
    )
