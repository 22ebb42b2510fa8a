"""Generic renderers for lists of records: text table, markdown, CSV and JSON."""

from __future__ import annotations

import io
import json
import math
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
        return buf.getvalue()
    shown = [headers.get(c, c) if headers else c for c in cols]
    rows = [[_cell(r.get(c)) for c in cols] for r in records]
    tablefmt = "github" if fmt == "markdown" else "simple"
    from tabulate import tabulate  # ~20 ms to import: only when a table is drawn, not for JSON/CSV

    return tabulate(rows, headers=shown, tablefmt=tablefmt, floatfmt=floatfmt, missingval="-")


def _cell(value: Any) -> Any:
    value = to_jsonable(value)
    return "-" if value is None else value
