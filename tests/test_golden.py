"""Golden outputs: what the README commands and the bundled scenarios print, byte for byte.

A refactor must not change what a user sees. Each case runs one command in process and compares its
stdout with ``tests/golden/<name>.out``. An intended change (a bug fix named in the change's note)
is recorded by regenerating the files and reviewing the diff:

    PLANNER_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py

The clock is frozen at ``FROZEN_NOW`` (the day the files were recorded), so price ages and
stale-price warnings read the same on every day CI runs; that date is still printed as
``<today>`` (reports say when they were generated). Other things vary from run to run and are
masked before comparing: solver wall time ("optimal, 0.23 s", ``solve_seconds``), and the last digits of unrounded floats in CSV and JSON
(solver round-off differs between builds; they are compared to six decimals). HTML reports
are compared with their inline SVG charts cut out (``<svg>…</svg>`` becomes
``<svg/>``): the chart drawings have their own tests (``test_charts.py``, the browser check), and
the rest of the document (headline, tables, assumptions) must stay identical.
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli import main

ROOT = Path(__file__).resolve().parent.parent
GOLDEN_DIR = ROOT / "tests" / "golden"
UPDATE = os.environ.get("PLANNER_UPDATE_GOLDEN") == "1"
_SVG = re.compile(r"<svg\b.*?</svg>", re.DOTALL)
_LONG_FLOAT = re.compile(r"\d+\.\d{5,}")
_SOLVE_TIME = re.compile(r"(optimal, |\"solve_seconds\": |\"seconds_\w+\": )[0-9.e-]+")

FROZEN_NOW = datetime(2026, 11, 23, 12, 0, tzinfo=timezone.utc)
HW = "scenarios/hardware"
BUDGET = "scenarios/budgets/2027-ml-platform.yaml"

# fmt: off
# name -> argv. The README's commands first, then every output format of each use case, then the
# bundled scenarios.
CASES: dict[str, list[str]] = {
    # README quickstart
    "readme-quote": ["quote", "--workload", "gpt2-xl-finetune", "--deadline", "24h", "--top", "3"],
    "readme-offers": [
        "offers", "--gpu", "A100-80GB", "--max-price", "40", "--sort", "price", "--limit", "5",
    ],
    "readme-estimate-rtx4090": ["estimate", "gpt2-xl-finetune", "--gpu", "RTX4090", "--count", "1"],
    "readme-estimate-json": [
        "estimate", "gpt2-xl-finetune", "--gpu", "A100-80GB", "--format", "json",
    ],
    "readme-tco": [
        "tco", "--hardware", f"{HW}/8xh100-hgx.yaml", "--utilization", "0.6", "--years", "4",
    ],
    "readme-budget": ["budget", BUDGET],
    "readme-report-budget-md": ["report", "budget", BUDGET, "--format", "markdown"],
    # every format of each use case
    "quote-json": ["quote", "--workload", "gpt2-xl-finetune", "--deadline", "24h", "--format", "json"],
    "quote-csv": ["quote", "--workload", "gpt2-xl-finetune", "--deadline", "24h", "--format", "csv"],
    "quote-markdown": [
        "quote", "--workload", "gpt2-xl-finetune", "--deadline", "24h", "--format", "markdown",
    ],
    "quote-options": [
        "quote", "--workload", "llama-2-7b-lora", "--deadline", "12h", "--no-spot", "--provider",
        "aws", "--provider", "gcp", "--discount", "aws=0.1", "--quota", "aws:p4d=2", "--top", "4",
    ],
    "quote-owned": [
        "quote", "--workload", "gpt2-large-finetune", "--deadline", "48h", "--hardware",
        f"{HW}/workstation-2xrtx4090.yaml", "--format", "json",
    ],
    "quote-pareto": [
        "quote", "--workload", "gpt2-medium-pretrain", "--deadline", "72h", "--pareto",
    ],
    "quote-sweep": ["quote", "--workload", "gpt2-finetune-sweep", "--deadline", "12h"],
    "report-quote-md": [
        "report", "quote", "--workload", "gpt2-xl-finetune", "--deadline", "24h", "--format",
        "markdown",
    ],
    "report-quote-csv": [
        "report", "quote", "--workload", "gpt2-xl-finetune", "--deadline", "24h", "--format", "csv",
    ],
    "report-quote-html": [
        "report", "quote", "--workload", "gpt2-xl-finetune", "--deadline", "24h", "--format",
        "html",
    ],
    "offers-json": ["offers", "--gpu", "H100", "--limit", "8", "--format", "json"],
    "offers-csv": ["offers", "--provider", "lambda", "--format", "csv"],
    "offers-markdown": ["offers", "--min-gpus", "8", "--sort", "price-per-gpu", "--limit", "10",
                        "--format", "markdown"],
    "gpus": ["gpus"],
    "workloads": ["workloads"],
    "models": ["models"],
    "estimate-from-facts": [
        "estimate", "--model", "mistral-7b", "--method", "lora", "--tokens", "50M", "--gpu",
        "A100-80GB",
    ],
    "workloads-show": ["workloads", "show", "llama-2-70b-lora"],
    "estimate-70b-qlora": ["estimate", "llama-2-70b-qlora", "--gpu", "A100-80GB", "--count", "1"],
    "estimate-7b-pretrain-json": [
        "estimate", "llama-2-7b-pretrain", "--gpu", "H100-SXM", "--count", "64", "--format", "json",
    ],
    "estimate-serving": ["estimate", "llm-serving-70b", "--gpu", "H100-SXM", "--count", "4"],
    "tco-json": ["tco", "--hardware", f"{HW}/4xa100-80gb-nvlink.yaml", "--format", "json"],
    "tco-eur": ["tco", "--hardware", f"{HW}/workstation-rtx4090.yaml", "--currency", "EUR"],
    "report-tco-md": ["report", "tco", "--hardware", f"{HW}/8xh100-hgx.yaml", "--format",
                      "markdown"],
    "report-tco-csv": ["report", "tco", "--hardware", f"{HW}/8xh100-hgx.yaml", "--format", "csv"],
    "report-tco-html": ["report", "tco", "--hardware", f"{HW}/8xh100-hgx.yaml", "--format",
                        "html"],
    "budget-json": ["budget", BUDGET, "--format", "json"],
    "report-budget-csv": ["report", "budget", BUDGET, "--format", "csv"],
    "report-budget-html": ["report", "budget", BUDGET, "--format", "html"],
}
# fmt: on

# Every bundled hardware file through tco, and every bundled workload through estimate on its
# first natural GPU.
for _path in sorted((ROOT / HW).glob("*.yaml")):
    CASES[f"tco-{_path.stem}"] = ["tco", "--hardware", f"{HW}/{_path.name}"]
for _path in sorted((ROOT / "scenarios" / "workloads").glob("*.yaml")):
    CASES[f"estimate-{_path.stem}"] = ["estimate", _path.stem, "--gpu", "A100-80GB", "--count", "8"]


def _normalise(name: str, text: str) -> str:
    text = text.replace(FROZEN_NOW.date().isoformat(), "<today>")
    text = _SOLVE_TIME.sub(r"\g<1><seconds>", text)
    text = _LONG_FLOAT.sub(lambda m: repr(round(float(m.group()), 6)), text)
    if name.endswith("-html"):
        text = _SVG.sub("<svg/>", text)
    return text


@pytest.mark.parametrize("name", sorted(CASES))
def test_output_matches_golden(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the cases name scenario files relative to the repository root
    monkeypatch.setattr("planner.clock.utc_now", lambda: FROZEN_NOW)
    result = CliRunner().invoke(main, CASES[name])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    text = _normalise(name, f"exit {result.exit_code}\n{result.stdout}")
    path = GOLDEN_DIR / f"{name}.out"
    if UPDATE:
        GOLDEN_DIR.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no golden output for {name}: run with PLANNER_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8")


# Notes kept beside the code (the team's research notes, this repository's files) are not sources
# a user can look up: output names the public source (a datasheet, a paper, a price list).
_INTERNAL_CITATION = re.compile(
    r"estimation\.md|cost-facts\.md|provider-apis\.md|\.\./shared|shared/reference|reference notes"
)


def test_no_output_cites_files_users_do_not_have() -> None:
    cited = {
        path.name: match.group(0)
        for path in sorted(GOLDEN_DIR.glob("*.out"))
        if (match := _INTERNAL_CITATION.search(path.read_text(encoding="utf-8")))
    }
    assert len(list(GOLDEN_DIR.glob("*.out"))) >= 70
    assert cited == {}
