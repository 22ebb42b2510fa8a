"""From a result (quote, TCO or budget) to a report string in HTML, Markdown or CSV."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from planner.errors import ConfigError
from planner.reports.formatting import USD_MONEY, Money

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from planner.optimize.budget import BudgetReport
    from planner.ownership.costs import TcoResult
    from planner.quoting.result import QuoteResult
    from planner.reports.document import Document

REPORT_FORMATS = ("html", "markdown", "csv")
_SUFFIXES = {
    ".html": "html",
    ".htm": "html",
    ".md": "markdown",
    ".markdown": "markdown",
    ".csv": "csv",
}


def format_for_path(path: str | Path) -> str:
    """``quote.html`` -> ``html``; ``budget.md`` -> ``markdown``; ``plans.csv`` -> ``csv``."""
    suffix = Path(path).suffix.lower()
    try:
        return _SUFFIXES[suffix]
    except KeyError:
        raise ConfigError(
            f"cannot tell the report format from {str(path)!r}",
            key_path="--report",
            hint="end the file name in .html, .md or .csv",
        ) from None


def document_for(
    result: QuoteResult | TcoResult | BudgetReport,
    *,
    money: Money = USD_MONEY,
    warnings: Sequence[str] = (),
    generated_by: str = "",
) -> Document:
    """The report document of a :class:`~planner.quoting.result.QuoteResult`,
    :class:`~planner.ownership.costs.TcoResult` or :class:`~planner.optimize.budget.BudgetReport`.

    Each use case's modules load only for its own result (a quote does not load the TCO maths)."""
    from planner.quoting.result import QuoteResult

    if isinstance(result, QuoteResult):
        from planner.reports.quote_doc import quote_document

        return quote_document(result, money=money, warnings=warnings, generated_by=generated_by)
    from planner.ownership.costs import TcoResult

    if isinstance(result, TcoResult):
        from planner.reports.tco_doc import tco_document

        return tco_document(result, money=money, warnings=warnings, generated_by=generated_by)
    from planner.optimize.budget import BudgetReport

    if isinstance(result, BudgetReport):
        from planner.reports.budget_doc import budget_document

        return budget_document(result, money=money, warnings=warnings, generated_by=generated_by)
    raise TypeError(f"no report for {type(result).__name__}")


def render_document(doc: Document, fmt: str) -> str:
    """``doc`` as ``fmt`` (html, markdown or csv, in any case: the command line's --format
    takes HTML too)."""
    fmt = fmt.strip().lower() if isinstance(fmt, str) else fmt
    if fmt == "html":
        from planner.reports.html import to_html

        return to_html(doc)
    from planner.reports.document import to_csv, to_markdown

    if fmt == "markdown":
        return to_markdown(doc)
    if fmt == "csv":
        return to_csv(doc)
    # a library caller's fmt= (the command line's --format takes only these three)
    if fmt in ("md", "htm"):  # a file's extension for its format
        raise ConfigError(
            f"unknown report format {fmt!r}",
            key_path="fmt",
            hint=f"did you mean {'markdown' if fmt == 'md' else 'html'}? fmt='html', 'markdown' "
            "or 'csv'",
        )
    raise ConfigError(
        f"unknown report format {fmt!r}", key_path="fmt", hint="fmt='html', 'markdown' or 'csv'"
    )


def figures_of(doc: Document) -> list[Figure]:
    """The charts of ``doc``, in document order, as matplotlib Figures (for notebooks)."""
    from planner.reports.charts import to_figure
    from planner.reports.document import Figure as ChartBlock

    return [
        to_figure(block.chart)
        for section in doc.sections
        for block in section.blocks
        if isinstance(block, ChartBlock)
    ]
