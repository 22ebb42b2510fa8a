"""Issue 7: reports people read (HTML with inline SVG charts, Markdown, CSV).

Each report is rendered from the same command's result; the checks are on structure (sections,
tables, one SVG per chart, the snapshot date, no unresolved fields), on numbers formatted for people,
and on every numeric cell agreeing exactly with the JSON output of the same command.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from planner import api
from planner.cli import main
from planner.reports import formatting as f
from planner.reports.document import Document, lookup
from planner.reports.render import document_for, format_for_path, render_document

QUOTE_ARGS = ("--workload", "gpt2-xl-finetune", "--deadline", "24h")
TCO_ARGS = ("--hardware", "8xh100-hgx", "--utilization", "0.6")
BUDGET_ARGS = ("2027-ml-platform", "--no-sensitivity")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


class _Page(HTMLParser):
    """Collects what the structure checks need from an HTML report."""

    def __init__(self) -> None:
        super().__init__()
        self.h2: list[str] = []
        self.tables: list[dict[str, Any]] = []
        self.svg_count = 0
        self.external: list[str] = []
        self._tag: list[str] = []
        self._cell: dict[str, Any] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self._tag.append(tag)
        if tag == "h2":
            self._text = []
        if tag == "svg":
            self.svg_count += 1
        if tag in ("script", "link", "img", "iframe") or (
            tag == "a" and "http" in (a.get("href") or "")
        ):
            self.external.append(tag)
        if tag == "table":
            self.tables.append({"path": a.get("data-json-path"), "keys": [], "rows": []})
        if tag == "th" and self.tables:
            self.tables[-1]["keys"].append(a.get("data-key"))
        if tag == "tr" and self.tables and "thead" not in self._tag:
            self.tables[-1]["rows"].append([])
        if tag == "td":
            self._cell = {"value": a.get("data-value"), "text": ""}

    def handle_endtag(self, tag: str) -> None:
        if tag == "h2":
            self.h2.append("".join(self._text).strip())
        if tag == "td" and self._cell is not None and self.tables:
            self.tables[-1]["rows"][-1].append(self._cell)
            self._cell = None
        if self._tag:
            self._tag.pop()

    def handle_data(self, data: str) -> None:
        if self._tag and self._tag[-1] == "h2":
            self._text.append(data)
        if self._cell is not None:
            self._cell["text"] += data


def parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


@pytest.fixture(scope="module")
def quote_json() -> dict[str, Any]:
    code, out, err = run("quote", *QUOTE_ARGS, "--pareto", "--format", "json")
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


@pytest.fixture(scope="module")
def quote_html() -> str:
    code, out, err = run("report", "quote", *QUOTE_ARGS)
    assert code == 0, err
    return out


@pytest.fixture(scope="module")
def tco_pair() -> tuple[dict[str, Any], str]:
    code, out, err = run("tco", *TCO_ARGS, "--format", "json")
    assert code == 0, err
    code, html, err = run("report", "tco", *TCO_ARGS)
    assert code == 0, err
    return json.loads(out), html


@pytest.fixture(scope="module")
def budget_pair() -> tuple[dict[str, Any], str]:
    code, out, err = run("budget", *BUDGET_ARGS, "--format", "json")
    assert code == 0, err
    code, html, err = run("report", "budget", *BUDGET_ARGS)
    assert code == 0, err
    return json.loads(out), html


# ------------------------------------------------------------------ formatting for people


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (2.8612, "$2.86"),  # cents under 1,000
        (999.994, "$999.99"),
        (999.996, "$1,000"),  # rounds up into whole units
        (143492.8, "$143,493"),  # thousands separator, whole dollars
        (-5, "-$5.00"),
        (None, "-"),
        (math.nan, "-"),
    ],
)
def test_money(value: float | None, expected: str) -> None:
    assert f.money(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.75, "45 min"),  # minutes under 2 h
        (7.084, "7.1 h"),
        (72, "72.0 h"),
        (300, "12.5 days"),  # days beyond 72 h
    ],
)
def test_hours(value: float, expected: str) -> None:
    assert f.hours(value) == expected


@pytest.mark.parametrize(
    ("share", "expected"),
    [(0.416, "42%"), (0.075, "7.5%"), (1.0, "100%"), (0.05, "5%"), (0.0, "0%")],
)
def test_pct(share: float, expected: str) -> None:
    assert f.pct(share) == expected


def test_money_in_another_currency_and_rates() -> None:
    eur = f.Money("EUR", 0.9605)
    assert eur(100) == "€96.05"
    assert eur.per_hour(2.0476) == "€1.97/h"
    assert f.per_hour(0.0461) == "$0.046/h"  # three decimals under ten cents
    assert f.Money("SEK", 10.75)(1000) == "SEK 10,750"


@pytest.mark.parametrize(
    ("path", "fmt"),
    [("quote.html", "html"), ("x/budget.MD", "markdown"), ("plans.csv", "csv")],
)
def test_report_format_from_the_file_name(path: str, fmt: str) -> None:
    assert format_for_path(path) == fmt


# ------------------------------------------------------------------------- structure


def _check_structure(html: str, sections: list[str], charts: int) -> _Page:
    page = parse(html)
    assert html.startswith("<!DOCTYPE html>")
    for title in sections:
        assert title in page.h2, f"section {title!r} missing from {page.h2}"
    assert page.svg_count == charts
    assert page.tables, "no tables"
    assert not page.external, f"external resources: {page.external}"
    # No unresolved template fields or leaked Python values in the text people read.
    visible = re.sub(r"<[^>]+>", " ", html.split("</style>", 1)[1])
    for leak in (r"\{", r"\}", r"\bNone\b", r"\bnan\b", r"\binf\b", "Traceback"):
        assert not re.search(leak, visible), f"{leak!r} in the report text"
    # Every chart SVG is well-formed XML with a title and axis labels.
    for svg in re.findall(r"<svg.*?</svg>", html, flags=re.S):
        root = ET.fromstring(svg)
        assert root.find("{http://www.w3.org/2000/svg}title") is not None
    return page


def test_quote_report_structure(quote_html: str, quote_json: dict[str, Any]) -> None:
    page = _check_structure(
        quote_html,
        ["Plans", "Cost versus deadline", "Plan details", "Requirements", "Assumptions"],
        charts=2,
    )
    assert quote_json["snapshot"]["as_of"] in quote_html
    for part in quote_json["snapshot"]["parts"]:
        assert part["source"] in quote_html  # provenance of every provider's prices
    assert "days old" in quote_html  # the bundled snapshot is stale, and the report says so
    best = quote_json["plans"][0]
    assert f"{f.money(best['total_cost_usd'])}, done in {f.hours(best['wall_hours'])}" in quote_html
    assert len(page.tables) >= 2 + len(quote_json["plans"])


def test_tco_report_structure(tco_pair: tuple[dict[str, Any], str]) -> None:
    record, html = tco_pair
    _check_structure(html, ["Cost of ownership", "Against the cloud", "Assumptions"], charts=2)
    assert record["offers"]["as_of"] in html
    assert "PUE" in html and "Electricity" in html and "Utilization" in html
    assert f.per_hour(record["usd_per_useful_gpu_hour"]) in html


def test_budget_report_structure(budget_pair: tuple[dict[str, Any], str]) -> None:
    record, html = budget_pair
    _check_structure(html, ["Strategies", "Month by month", "Assumptions"], charts=2)
    assert f.money(record["total_usd"]) in html
    # The monthly chart has one bar per calendar month, however many GPU classes there are.
    months = {m["month"] for m in record["months"]}
    bars = re.findall(r'data-category="([^"]+)"', html)
    assert set(bars) >= months


# -------------------------------------------------------------- numbers agree with JSON


def _agree(html: str, record: dict[str, Any]) -> int:
    """Every numeric cell of a table that names its JSON list equals that JSON value exactly."""
    checked = 0
    for table in parse(html).tables:
        if not table["path"]:
            continue
        source = lookup(record, table["path"])
        assert isinstance(source, list)
        if len(table["rows"]) == len(source):
            indices = list(range(len(source)))
        else:  # a sampled table (cumulative cost): match rows on their first key
            first = table["keys"][0]
            by_key = {str(r[first]): i for i, r in enumerate(source)}
            indices = [by_key[row[0]["value"] or row[0]["text"]] for row in table["rows"]]
        for row, i in zip(table["rows"], indices, strict=True):
            for key, cell in zip(table["keys"], row, strict=True):
                if cell["value"] is None:
                    continue
                expected = lookup(source[i], key)
                assert float(cell["value"]) == expected, (table["path"], i, key)
                if cell["text"].startswith("$") and not cell["text"].endswith("/h"):
                    assert cell["text"] == f.money(expected)
                checked += 1
    return checked


def test_quote_report_numbers_match_the_json(quote_html: str, quote_json: dict[str, Any]) -> None:
    # The quote is deterministic, so the report's run and the JSON run agree to the last digit.
    assert _agree(quote_html, quote_json) > 30


def test_tco_report_numbers_match_the_json(tco_pair: tuple[dict[str, Any], str]) -> None:
    record, html = tco_pair
    assert _agree(html, record) > 20


def test_payback_after_the_hardware_life_is_called_out() -> None:
    # issue 16: the cash payback past the life reads "never within its life", as the breakeven
    # utilization above 100% does, never a bare month count next to "never"
    args = ("--hardware", "8xh100-hgx", "--utilization", "1.0")
    code, out, err = run("tco", *args, "--format", "json")
    assert code == 0, err
    record = json.loads(out)
    code, markdown, err = run("report", "tco", *args, "--format", "markdown")
    assert code == 0, err
    life_months = record["years"] * 12
    late = [c for c in record["comparisons"] if (c["payback_months"] or 0) > life_months]
    on_time = [c for c in record["comparisons"] if 0 < (c["payback_months"] or 0) <= life_months]
    assert late and on_time  # at full use the bundled prices give both kinds
    for c in late:
        assert c["breakeven_utilization"] > 1
        assert f"| never (cloud cheaper) | never within its {life_months:.0f}-month life |" in (
            markdown
        )
    for c in on_time:
        assert f"| the start | {c['payback_months']:,.1f} months |" in markdown


def test_budget_headline_reconciles_cash_and_book_value(
    budget_pair: tuple[dict[str, Any], str],
) -> None:
    record, html = budget_pair
    cash = sum(m["cost_usd"] for m in record["months"])
    residual = record["residual_value_usd"]
    assert residual > 0  # the mix buys a machine that outlives the horizon
    # The headline total is the cash paid out, plus fees due later, less what the machines are
    # still worth: a reader can reconcile the monthly table with the headline.
    assert cash + record["commitments_after_horizon_usd"] - residual == pytest.approx(
        record["total_usd"], abs=0.01
    )
    assert (
        f"({f.money(cash, f.USD_MONEY)} cash out in the horizon, less "
        f"{f.money(residual, f.USD_MONEY)} book value of the machines kept)"
    ) in html


def test_budget_report_numbers_match_the_json(budget_pair: tuple[dict[str, Any], str]) -> None:
    record, html = budget_pair
    assert _agree(html, record) > 100


# ------------------------------------------------------------------- markdown and csv


@pytest.fixture(scope="module")
def tco_document() -> Document:
    return document_for(api.tco("8xh100-hgx", utilization=0.6), generated_by="test")


def test_markdown_carries_the_same_sections_and_tables(tco_document: Document) -> None:
    md = render_document(tco_document, "markdown")
    assert md.startswith(f"# {tco_document.title}")
    for section in tco_document.sections:
        assert f"## {section.title}" in md
    for table in tco_document.tables():
        header = "| " + " | ".join(table.headers) + " |"
        assert header in md
        for row in table.rows:
            assert "| " + " | ".join(c.text for c in row) + " |" in md
    for figure in tco_document.figures():
        assert figure.chart.title in md  # charts are named, with the sentence to read from them
    assert "<" not in md.replace("<=", "")


def test_csv_has_one_block_per_table_with_raw_values(tco_document: Document) -> None:
    text = render_document(tco_document, "csv")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == [f"{tco_document.title}: summary"]
    for table in tco_document.tables():
        header = list(table.keys)
        start = rows.index(header)
        body = rows[start + 1 : start + 1 + len(table.rows)]
        for row, cells in zip(body, table.rows, strict=True):
            for raw, cell in zip(row, cells, strict=True):
                if isinstance(cell.value, float):
                    assert float(raw) == cell.value  # spreadsheets get the unrounded number


def test_currency_changes_the_text_but_not_the_values() -> None:
    result = api.tco("8xh100-hgx", utilization=0.6, with_cloud=False)
    usd = document_for(result)
    eur = document_for(result, money=f.Money("EUR", 0.9605))
    assert [c.value for _, c in usd.summary.figures] == [c.value for _, c in eur.summary.figures]
    assert usd.summary.figures[0][1].text.startswith("$")
    assert eur.summary.figures[0][1].text.startswith("€")


# ------------------------------------------------------------------------------ CLI


def test_report_option_writes_a_file_next_to_the_normal_output(tmp_path: Path) -> None:
    path = tmp_path / "tco.html"
    code, out, err = run("tco", *TCO_ARGS, "--report", str(path))
    assert code == 0, err
    assert "per GPU-hour" in out  # the terminal report still prints
    assert f"report written to {path}" in err
    html = path.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert path.stat().st_mode & 0o044  # readable by others: a report is for sharing
    assert not list(tmp_path.glob(".tco.html.*"))  # no temporary file left behind


def test_quote_report_option_sweeps_with_a_progress_bar(tmp_path: Path) -> None:
    path = tmp_path / "quote.md"
    code, _, err = run("quote", *QUOTE_ARGS, "--report", str(path))
    assert code == 0, err
    assert "sweeping deadlines" in err
    assert path.read_text(encoding="utf-8").startswith("# GPU plan for gpt2-xl-finetune")


def test_report_budget_markdown_to_stdout() -> None:
    code, out, err = run("report", "budget", *BUDGET_ARGS, "--format", "markdown")
    assert code == 0, err
    assert out.startswith("# Budget review: 2027-ml-platform")
    assert "## Month by month" in out


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("tco", *TCO_ARGS, "--report", "tco.pdf"), "end the file name in .html, .md or .csv"),
        (("report", "tco", "--hardware", "8xh100-hgxx"), "did you mean"),
        (("report", "quote", "--workload", "gpt2-xl-finetune", "--deadline", "soon"), "24h"),
    ],
)
def test_bad_report_inputs_exit_nonzero_without_traceback(
    args: tuple[str, ...], fragment: str
) -> None:
    code, out, err = run(*args)
    assert code != 0
    assert fragment in err
    assert "Traceback" not in out + err


def test_unwritable_report_path_is_a_clean_error(tmp_path: Path) -> None:
    code, _, err = run("tco", *TCO_ARGS, "--report", str(tmp_path / "missing" / "tco.html"))
    assert code != 0
    assert "cannot write the report" in err
    assert "Traceback" not in err


# ------------------------------------------------- issue 12: typed results into the reports


@pytest.fixture(scope="module")
def typed_results() -> dict[str, Any]:
    return {
        "quote": api.quote(workload="gpt2-xl-finetune", deadline_hours=24, pareto=True),
        "tco": api.tco("8xh100-hgx", utilization=0.6),
        "budget": api.budget("2027-ml-platform", sensitivity=True),
    }


def test_reports_read_the_typed_result_not_its_json_record(
    typed_results: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 12: the builders and text renderers read attributes (mypy checks each one), so a
    renamed field fails the type check instead of a report; JSON is made only for --format json."""
    from planner.optimize.budget import BudgetReport
    from planner.optimize.plans import Plan
    from planner.ownership.costs import CloudComparison, TcoResult
    from planner.ownership.hardware import HardwareSpec
    from planner.quoting.result import QuoteResult
    from planner.reports.quote import render_quote
    from planner.reports.tco import render_budget, render_tco

    def refuse(self: object) -> None:
        raise AssertionError(f"a report read the JSON record of {type(self).__name__}")

    for cls, name in (
        (QuoteResult, "to_dict"),
        (Plan, "to_dict"),
        (TcoResult, "to_record"),
        (CloudComparison, "to_record"),
        (HardwareSpec, "to_record"),
        (BudgetReport, "to_record"),
    ):
        monkeypatch.setattr(cls, name, refuse)
    eur = f.Money.of("EUR")
    for kind, result in typed_results.items():
        for money in (f.USD_MONEY, eur):
            doc = document_for(result, money=money)
            assert doc.kind == kind and doc.tables()
            for fmt in ("html", "markdown", "csv"):
                assert render_document(doc, fmt)
    for fmt in ("table", "markdown", "csv"):
        assert render_quote(typed_results["quote"], fmt, warnings=[])
        for currency in ("USD", "EUR"):
            assert render_tco(typed_results["tco"], fmt, currency=currency)
            assert render_budget(typed_results["budget"], fmt, currency=currency)


def test_money_from_a_rate_table_converts_text_charts_notes_and_json_alike() -> None:
    from planner.config.currency import fx_table_from_mapping

    table = fx_table_from_mapping(
        {"as_of": "2025-02-28", "source": "test", "per_eur": {"EUR": 1.0, "USD": 2.0}}
    )
    eur = f.Money.of("eur", table)
    assert (eur.code, eur.per_usd) == ("EUR", 0.5)
    assert eur(10) == "€5.00" and eur.scale(10) == 5.0
    assert eur.chart_axis() == (0.5, "number", "EUR")
    assert eur.note() == "money in EUR at 0.5 per USD (test, 2025-02-28)"
    assert (eur.as_of, eur.source) == ("2025-02-28", "test")
    assert eur.convert({"capex_usd": 10.0, "gpus": 8}) == {"capex_eur": 5.0, "gpus": 8}
    usd = f.Money.of("USD", table)
    record = {"capex_usd": 10.0}
    assert usd is f.USD_MONEY and usd.note() == "" and usd.convert(record) is record
    assert usd.chart_axis() == (1.0, "usd", "USD")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.75, "45 min"),  # the same as without the hours under three days
        (72, "72.0 h"),
        (300, "12.5 days (300 h)"),  # the terminal's quote shows the hours next to the days
    ],
)
def test_hours_with_hours(value: float, expected: str) -> None:
    assert f.hours(value, with_hours=True) == expected
