"""A :class:`~planner.reports.document.Document` as one self-contained HTML file.

No scripts, no web fonts, no external files: styles are inline in ``<style>``, charts are inline
SVG, so the file opens offline, attaches to an email and prints (A4 or Letter) as it shows on
screen.  Every numeric table cell carries ``data-value`` with the raw value of the JSON output.
"""

from __future__ import annotations

import math
from html import escape

from planner.reports.charts import render_svg
from planner.reports.document import (
    Cell,
    Document,
    Facts,
    Figure,
    Paragraph,
    Section,
    Table,
    numeric_columns,
)

_CSS = """
:root { --ink: #1d232b; --muted: #5b6470; --rule: #d9dde3; --accent: #0b5cad; --warn: #8a4b00;
  --bg-soft: #f5f7fa; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
  color: var(--ink); margin: 0; background: #fff; }
main { max-width: 1080px; margin: 0 auto; padding: 28px 28px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 34px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--rule); }
h3 { font-size: 16px; margin: 20px 0 8px; }
p.subtitle { color: var(--muted); margin: 0 0 18px; }
section.summary { background: var(--bg-soft); border-left: 5px solid var(--accent);
  padding: 14px 18px; margin: 0 0 18px; }
p.headline { font-size: 18px; font-weight: 600; margin: 0 0 10px; }
dl.figures { display: flex; flex-wrap: wrap; gap: 8px 32px; margin: 0; }
dl.figures div { min-width: 140px; }
dl.figures dt { color: var(--muted); font-size: 13px; }
dl.figures dd { margin: 0; font-size: 20px; font-weight: 600; font-variant-numeric: tabular-nums; }
.warning ul { margin: 4px 0 0; padding-left: 20px; }
.warning { background: #fff4e5; border-left: 5px solid var(--warn); padding: 8px 14px;
  margin: 8px 0; color: #4d2a00; }
nav.toc { font-size: 14px; color: var(--muted); margin: 0 0 8px; }
nav.toc a { color: var(--accent); text-decoration: none; margin-right: 14px; }
div.table { overflow-x: auto; margin: 6px 0 12px; }
table { border-collapse: collapse; width: 100%; font-size: 13.5px; }
th, td { padding: 5px 8px; border-bottom: 1px solid var(--rule); text-align: left;
  vertical-align: top; }
th { background: var(--bg-soft); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num, td.short { white-space: nowrap; }
tbody tr:nth-child(even) { background: #fbfcfd; }
ul.facts { margin: 6px 0 12px; padding-left: 20px; }
ul.facts li { margin: 2px 0; }
figure { margin: 14px 0 22px; }
figure svg { max-width: 100%; height: auto; display: block; }
figcaption { color: var(--muted); font-size: 14px; margin-top: 4px; }
p.note { color: var(--muted); font-size: 13px; margin-top: -4px; }
footer { margin-top: 40px; color: var(--muted); font-size: 13px; border-top: 1px solid var(--rule);
  padding-top: 10px; }
footer ul { padding-left: 18px; margin: 4px 0; }
@media print { main { max-width: none; padding: 0; } h2 { break-after: avoid; }
  figure, table { break-inside: avoid; } nav.toc { display: none; } }
"""


_NUM = ' class="num"'


def _cell_attrs(cell: Cell, numeric: bool) -> str:
    attrs = _NUM if numeric else ' class="short"' if len(cell.text) <= 16 else ""
    value = cell.value
    if isinstance(value, bool) or value is None:
        return attrs
    if isinstance(value, float):
        if not math.isfinite(value):
            return attrs
        return attrs + f' data-value="{value!r}"'
    if isinstance(value, int):
        return attrs + f' data-value="{value}"'
    return attrs


def _table(table: Table) -> list[str]:
    numeric = numeric_columns(table)
    out = []
    if table.title:
        out.append(f"<h3>{escape(table.title)}</h3>")
    path = f' data-json-path="{escape(table.json_path)}"' if table.json_path else ""
    out.append(f'<div class="table"><table{path}>')
    out.append(
        "<thead><tr>"
        + "".join(
            f'<th{_NUM if n else ""} data-key="{escape(k)}">{escape(h)}</th>'
            for h, k, n in zip(table.headers, table.keys, numeric, strict=True)
        )
        + "</tr></thead>"
    )
    out.append("<tbody>")
    for row in table.rows:
        out.append(
            "<tr>"
            + "".join(
                f"<td{_cell_attrs(c, n)}>{escape(c.text)}</td>"
                for c, n in zip(row, numeric, strict=True)
            )
            + "</tr>"
        )
    out.append("</tbody></table></div>")
    if table.note:
        out.append(f'<p class="note">{escape(table.note)}</p>')
    return out


def _block(block: Paragraph | Facts | Table | Figure) -> list[str]:
    if isinstance(block, Paragraph):
        return [f"<p>{escape(block.text)}</p>"]
    if isinstance(block, Facts):
        items = "".join(
            f"<li>{escape(label)}: <strong>{escape(cell.text)}</strong></li>"
            for label, cell in block.items
        )
        return [f'<ul class="facts">{items}</ul>']
    if isinstance(block, Table):
        return _table(block)
    chart = block.chart
    caption = getattr(chart, "caption", "")
    return [
        "<figure>",
        render_svg(chart),
        f"<figcaption>{escape(caption)}</figcaption>" if caption else "",
        "</figure>",
    ]


def _section(section: Section) -> list[str]:
    out = [f'<section id="{section.anchor}">', f"<h2>{escape(section.title)}</h2>"]
    for block in section.blocks:
        out += _block(block)
    out.append("</section>")
    return out


def to_html(doc: Document) -> str:
    """The whole report as one HTML page (UTF-8, no external resources)."""
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="generator" content="{escape(doc.generated_by)}">',
        f"<title>{escape(doc.title)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        f'<body data-report="{escape(doc.kind)}">',
        "<main>",
        f"<h1>{escape(doc.title)}</h1>",
    ]
    if doc.subtitle:
        out.append(f'<p class="subtitle">{escape(doc.subtitle)}</p>')
    out.append('<section class="summary" id="summary">')
    out.append(f'<p class="headline">{escape(doc.summary.headline)}</p>')
    if doc.summary.figures:
        out.append('<dl class="figures">')
        for label, cell in doc.summary.figures:
            out.append(
                f"<div><dt>{escape(label)}</dt><dd{_cell_attrs(cell, False)}>"
                f"{escape(cell.text)}</dd></div>"
            )
        out.append("</dl>")
    out.append("</section>")
    if len(doc.warnings) == 1:
        out.append(
            f'<p class="warning" role="note"><strong>Warning:</strong> {escape(doc.warnings[0])}</p>'
        )
    elif doc.warnings:
        items = "".join(f"<li>{escape(w)}</li>" for w in doc.warnings)
        out.append(
            f'<div class="warning" role="note"><strong>Warnings:</strong><ul>{items}</ul></div>'
        )
    if len(doc.sections) > 2:
        links = "".join(f'<a href="#{s.anchor}">{escape(s.title)}</a>' for s in doc.sections)
        out.append(f'<nav class="toc">Contents: {links}</nav>')
    for section in doc.sections:
        out += _section(section)
    out.append("<footer>")
    if doc.provenance:
        out.append("<strong>Price data</strong><ul>")
        out += [f'<li class="provenance">{escape(p)}</li>' for p in doc.provenance]
        out.append("</ul>")
    if doc.generated_by:
        out.append(f"<p>Generated by {escape(doc.generated_by)}.</p>")
    out.append("</footer>")
    out += ["</main>", "</body>", "</html>", ""]
    return "\n".join(line for line in out if line)
