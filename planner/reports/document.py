"""A report as a value: summary, sections of paragraphs, facts, tables and charts.

The builders (:mod:`planner.reports.quote_doc`, :mod:`~planner.reports.tco_doc`,
:mod:`~planner.reports.budget_doc`) turn a result into a :class:`Document`; the renderers turn a
document into HTML (:mod:`planner.reports.html`), Markdown or CSV (here).  One document, three
formats, so the wiki page, the spreadsheet and the budget-review file say the same thing.

Every number is a :class:`Cell`: the text people read and the raw value it was formatted from.  The
builders read the typed result (attributes, checked by mypy), never its JSON record; a table's
``keys`` and ``json_path`` say where the same value sits in the JSON output of the same command,
so a test can check that the two agree.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from planner.reports.charts import Chart

T = TypeVar("T")


@dataclass(frozen=True)
class Cell:
    """One value: ``text`` for people, ``value`` as in the JSON output (None for plain text)."""

    text: str
    value: Any = None

    @classmethod
    def of(cls, value: Any, fmt: Callable[[Any], str] = str) -> Cell:
        return cls(fmt(value), value)


def text(value: str) -> Cell:
    return Cell(value, None)


@dataclass(frozen=True)
class Paragraph:
    text: str


@dataclass(frozen=True)
class Facts:
    """A list of labelled values (assumptions, requirements)."""

    items: tuple[tuple[str, Cell], ...]


@dataclass(frozen=True)
class Table:
    """Rows of cells under ``headers`` (for people); ``keys`` name the columns in CSV and JSON.

    ``json_path`` says which list of the command's JSON output the rows come from (dotted keys,
    e.g. ``plans`` or ``comparisons``): row ``i`` column ``keys[j]`` holds ``json[path][i][key]``
    (``json[path][json_rows[i]][key]`` when ``json_rows`` picks rows).  Empty when the table is
    derived (no one-to-one JSON list).
    """

    title: str
    headers: tuple[str, ...]
    keys: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    json_path: str = ""
    note: str = ""
    numeric: tuple[bool, ...] = ()  # right-align these columns (default: cells with a value)
    json_rows: tuple[int, ...] = ()  # JSON list index of each row, when only some rows are shown


@dataclass(frozen=True)
class Figure:
    chart: Chart


Block = Paragraph | Facts | Table | Figure


@dataclass(frozen=True)
class Section:
    title: str
    blocks: tuple[Block, ...]

    @property
    def anchor(self) -> str:
        return re.sub(r"[^a-z0-9]+", "-", self.title.lower()).strip("-")


@dataclass(frozen=True)
class Summary:
    """The decision in one sentence, and its headline figures (cost, time, risk)."""

    headline: str
    figures: tuple[tuple[str, Cell], ...] = ()


@dataclass(frozen=True)
class Document:
    kind: str  # quote | tco | budget
    title: str
    subtitle: str
    summary: Summary
    sections: tuple[Section, ...]
    provenance: tuple[str, ...] = ()  # price snapshot dates and sources, one line each
    warnings: tuple[str, ...] = ()
    generated_by: str = ""  # "planner 0.1.0, 2026-11-21"

    def tables(self) -> list[Table]:
        return [b for s in self.sections for b in s.blocks if isinstance(b, Table)]

    def figures(self) -> list[Figure]:
        return [b for s in self.sections for b in s.blocks if isinstance(b, Figure)]


# --------------------------------------------------------------------------------- markdown


def _md_escape(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ")


def _md_table(table: Table) -> list[str]:
    numeric = numeric_columns(table)
    out = ["| " + " | ".join(_md_escape(h) for h in table.headers) + " |"]
    out.append("|" + "|".join("---:" if n else "---" for n in numeric) + "|")
    for row in table.rows:
        out.append("| " + " | ".join(_md_escape(c.text) for c in row) + " |")
    return out


def numeric_columns(table: Table) -> tuple[bool, ...]:
    """Which columns to right-align: as the table says, else those whose cells all hold numbers."""
    if table.numeric:
        return table.numeric
    return tuple(
        bool(table.rows)
        and all(
            isinstance(row[j].value, (int, float)) and not isinstance(row[j].value, bool)
            for row in table.rows
        )
        for j in range(len(table.headers))
    )


def _chart_summary(figure: Figure) -> str:
    chart = figure.chart
    caption = getattr(chart, "caption", "")
    return f"*Chart: {chart.title}.*" + (f" {caption}" if caption else "")


def to_markdown(doc: Document) -> str:
    """GitHub-flavoured Markdown: the same sections and tables; each chart as its title and the
    sentence that says what to read from it (the HTML report carries the picture)."""
    out = [f"# {doc.title}", ""]
    if doc.subtitle:
        out += [doc.subtitle, ""]
    out += [f"**{doc.summary.headline}**", ""]
    for label, cell in doc.summary.figures:
        out.append(f"- {label}: **{cell.text}**")
    if doc.summary.figures:
        out.append("")
    for w in doc.warnings:
        out += [f"> **Warning:** {w}", ""]
    for section in doc.sections:
        out += [f"## {section.title}", ""]
        for block in section.blocks:
            if isinstance(block, Paragraph):
                out += [block.text, ""]
            elif isinstance(block, Facts):
                out += [f"- {label}: {cell.text}" for label, cell in block.items] + [""]
            elif isinstance(block, Table):
                if block.title:
                    out += [f"### {block.title}", ""]
                out += [*_md_table(block), ""]
                if block.note:
                    out += [block.note, ""]
            else:
                out += [_chart_summary(block), ""]
    if doc.provenance:
        out += ["## Price data", ""] + [f"- {p}" for p in doc.provenance] + [""]
    if doc.generated_by:
        out += [f"*Generated by {doc.generated_by}.*", ""]
    return "\n".join(out)


# --------------------------------------------------------------------------------------- csv


def to_csv(doc: Document) -> str:
    """Every table of the document as CSV blocks for a spreadsheet.

    Each block starts with one row naming the section and table, then the column keys, then the
    raw values (not the formatted text, so a spreadsheet can sum them); blocks are separated by an
    empty row.  The summary and assumptions come first as ``item,value`` rows.
    """
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([f"{doc.title}: summary"])
    writer.writerow(["item", "value", "text"])
    writer.writerow(["recommendation", "", doc.summary.headline])
    for label, cell in doc.summary.figures:
        writer.writerow([label, _raw(cell), cell.text])
    for line in doc.provenance:
        writer.writerow(["prices", "", line])
    for w in doc.warnings:
        writer.writerow(["warning", "", w])
    for section in doc.sections:
        for block in section.blocks:
            if isinstance(block, Facts):
                writer.writerow([])
                writer.writerow([f"{section.title}"])
                writer.writerow(["item", "value", "text"])
                for label, cell in block.items:
                    writer.writerow([label, _raw(cell), cell.text])
            elif isinstance(block, Table):
                writer.writerow([])
                writer.writerow(
                    [f"{section.title}: {block.title}" if block.title else section.title]
                )
                writer.writerow(list(block.keys))
                for row in block.rows:
                    writer.writerow([_raw(c) for c in row])
    return buf.getvalue()


def _raw(cell: Cell) -> Any:
    if cell.value is None:
        return cell.text if cell.text != "-" else ""
    if isinstance(cell.value, float):
        return repr(cell.value)
    return cell.value


def lookup(record: Any, dotted: str) -> Any:
    """``lookup(r, "risk.p_meet_deadline")`` -> ``r["risk"]["p_meet_deadline"]``; list indices as
    numbers (``plans.0.items``)."""
    value = record
    for part in dotted.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


@dataclass(frozen=True)
class Column(Generic[T]):
    """One column of a table of typed rows: ``value`` reads the field (mypy checks the attribute),
    ``fmt`` formats it, ``key`` names it in CSV and in the JSON record (dotted: ``risk.spot_share``).
    ``show``, when given, makes the text from the whole row instead (``49.5 of 80 GiB``)."""

    key: str
    header: str
    value: Callable[[T], Any]
    fmt: Callable[[Any], str] = str
    show: Callable[[T], str] | None = None

    def cell(self, item: T) -> Cell:
        value = self.value(item)
        return Cell(self.show(item), value) if self.show else Cell.of(value, self.fmt)


def table_of(
    title: str,
    items: Sequence[T],
    columns: Sequence[Column[T]],
    *,
    json_path: str = "",
    note: str = "",
    rows: Sequence[int] | None = None,
    numeric: tuple[bool, ...] = (),
) -> Table:
    """A table with one row per item of a typed result (``rows`` picks item indices; default
    all).  With ``json_path``, row ``i`` column ``key`` equals ``json[json_path][i][key]``."""
    picked = list(range(len(items))) if rows is None else list(rows)
    cells = tuple(tuple(c.cell(items[i]) for c in columns) for i in picked)
    return Table(
        title=title,
        headers=tuple(c.header for c in columns),
        keys=tuple(c.key for c in columns),
        rows=cells,
        json_path=json_path,
        note=note,
        numeric=numeric,
        json_rows=tuple(picked) if rows is not None else (),
    )
