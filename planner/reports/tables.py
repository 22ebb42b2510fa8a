"""Generic renderers for lists of records: text table, markdown, CSV and JSON."""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from enum import Enum
from typing import Any

import pandas as pd

FORMATS = ("table", "json", "csv", "markdown")


def to_jsonable(value: Any) -> Any:
    """Plain-Python version of ``value`` for json.dumps: numpy scalars, NaN -> None, enums, dates."""
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()  # numpy scalar
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    return value


def dumps_json(value: Any) -> str:
    return json.dumps(to_jsonable(value), indent=2, sort_keys=False)


def frame_records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """DataFrame rows as plain-Python dicts (NaN -> None)."""
    return [to_jsonable(r) for r in df.to_dict(orient="records")]


def render_records(
    records: Sequence[Mapping[str, Any]],
    fmt: str,
    *,
    columns: Sequence[str] | None = None,
    headers: Mapping[str, str] | None = None,
    floatfmt: str = ",.4g",
) -> str:
    """Render records in ``fmt`` (table, markdown, csv or json).

    ``columns`` picks and orders the columns for table/markdown/csv; JSON always carries every key.
    ``headers`` maps column names to display headers for table and markdown (CSV keeps the names so it
    round-trips).
    """
    if fmt == "json":
        return dumps_json(list(records))
    cols = list(columns) if columns is not None else (list(records[0]) if records else [])
    if fmt == "csv":
        frame = pd.DataFrame([{c: r.get(c) for c in cols} for r in records], columns=cols)
        buf = io.StringIO()
        frame.to_csv(buf, index=False, lineterminator="\n")
        # the caller prints it with its own line end (was: a blank last line, an empty row to a
        # spreadsheet and to csv.reader)
        return buf.getvalue().removesuffix("\n")
    shown = [headers.get(c, c) if headers else c for c in cols]
    rows = [[_cell(r.get(c)) for c in cols] for r in records]
    if fmt != "markdown":
        text = _plain_simple_table(rows, shown, floatfmt)
        if text is not None:
            return text
    tablefmt = "github" if fmt == "markdown" else "simple"
    from tabulate import tabulate  # ~20 ms to import: only when a table is drawn, not for JSON/CSV

    return tabulate(rows, headers=shown, tablefmt=tablefmt, floatfmt=floatfmt, missingval="-")


def _cell(value: Any) -> Any:
    value = to_jsonable(value)
    return "-" if value is None else value


# -- tabulate's "simple" format for plain tables, without importing tabulate --------------------
#
# Importing tabulate costs a quote about 12 ms (its wide-character tables, its version read from
# the package metadata, its regular expressions), as much as drawing every table of the quote
# many times over.  Most tables hold only plain cells: ASCII text that cannot be read as a number,
# ints and floats.  For those, :func:`_plain_simple_table` lays the table out as tabulate 0.9-0.10
# does with ``tablefmt="simple"`` (tests/test_tables.py compares the two on generated tables):
#
# - a column is numeric when every non-empty cell is an int or a float (float when any is), else
#   text; numbers are written ``format(float(v), floatfmt)`` in a float column, ``str(v)`` in an
#   int or a text column;
# - text is stripped and flushed left; numbers are lined up on their decimal point (tabulate's
#   ``numalign="decimal"``: padded on the right to the most characters after the point, then
#   flushed right) under a header flushed right;
# - a column is as wide as its widest cell, and at least its header and 2;
# - columns are joined by two spaces, a line of dashes under the header, trailing blanks cut.
#
# Anything else (a cell tabulate would read as a number or a bool, an empty table, non-ASCII or
# control characters, whose width needs wcwidth) goes to tabulate itself.

_TABULATE_MIN_PADDING = 2
# tabulate's _float_with_thousands_separators: "1,234.5" also reads as a number
_THOUSANDS = r"^(([+-]?[0-9]{1,3})(?:,([0-9]{3}))*)?(?(1)\.[0-9]*|\.[0-9]+)?$"


def _plain_text(value: str) -> bool:
    """Whether tabulate treats ``value`` as text and measures it with ``len``."""
    if not (value.isascii() and value.isprintable()) or value in ("True", "False"):
        return False
    try:
        float(value)
    except ValueError:
        return re.match(_THOUSANDS, value) is None
    return False


def _after_point(text: str) -> int:
    """Characters after the decimal point (or else the exponent's ``e``) of a formatted number,
    -1 for an integer, no point or no number: tabulate's ``_afterpoint``."""
    try:
        number = float(text)
    except ValueError:
        number = None
    readable = number is not None and (
        not (math.isinf(number) or math.isnan(number)) or text.lower() in ("inf", "-inf", "nan")
    )
    if not readable and re.match(_THOUSANDS, text) is None:
        return -1
    try:
        int(text)
    except ValueError:
        pos = text.rfind(".")
        pos = text.lower().rfind("e") if pos < 0 else pos
        return len(text) - pos - 1 if pos >= 0 else -1
    return -1


def _plain_simple_table(
    rows: Sequence[Sequence[Any]], headers: Sequence[str], floatfmt: str
) -> str | None:
    """``tabulate(rows, headers=headers, tablefmt="simple", floatfmt=floatfmt)`` for a table of
    plain cells; None for any other table (the caller asks tabulate)."""
    if not rows or any(len(row) != len(headers) for row in rows):
        return None
    if not all(type(h) is str and h.isascii() and h.isprintable() for h in headers):
        return None
    columns = list(zip(*rows, strict=True))
    lines: list[list[str]] = [[] for _ in range(len(rows) + 2)]
    for header, column in zip(headers, columns, strict=True):
        kinds = {type(v) for v in column if v != ""}
        if not kinds <= {str, int, float}:
            return None
        if str in kinds and not all(_plain_text(v) for v in column if type(v) is str and v):
            return None
        minwidth = len(header) + _TABULATE_MIN_PADDING
        if str in kinds or not kinds:
            cells = [str(v).strip() for v in column]
            width = max(minwidth, *(len(c) for c in cells))
            aligned = [c.ljust(width) for c in cells]
            head = header.ljust(width)
        else:
            as_float = float in kinds
            cells = [
                "" if v == "" else format(float(v), floatfmt) if as_float else str(v)
                for v in column
            ]
            points = [_after_point(c) for c in cells]
            most = max(points)
            cells = [c + " " * (most - p) for c, p in zip(cells, points, strict=True)]
            width = max(minwidth, *(len(c) for c in cells))
            aligned = [c.rjust(width) for c in cells]
            head = header.rjust(width)
        lines[0].append(head)
        lines[1].append("-" * width)
        for line, cell in zip(lines[2:], aligned, strict=True):
            line.append(cell)
    return "\n".join("  ".join(line).rstrip() for line in lines)
