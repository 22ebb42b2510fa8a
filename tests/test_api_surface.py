"""The Python API: ``import planner`` offers what the CLI does, cheaply and with values, not text."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import planner
from planner.catalog import OfferBook, load_offer_book
from planner.errors import ConfigError
from planner.workload.spec import Method


def test_import_planner_is_cheap_and_has_no_side_effects() -> None:
    # The API loads on first use: importing the package must not pull in pandas or PuLP.
    code = "import sys, planner; print('pandas' in sys.modules, 'pulp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_package_exposes_the_api_functions() -> None:
    from planner import api

    for name in ("offers", "estimate", "quote", "tco", "budget", "report", "load_workload"):
        assert getattr(planner, name) is getattr(api, name)
    assert planner.Planner is api.Planner
    assert callable(planner.quote)  # not shadowed by a submodule of the same name
    with pytest.raises(AttributeError, match="no attribute 'quotes'"):
        _ = planner.quotes


def test_offers_come_back_as_a_dataframe() -> None:
    table = planner.offers(planner.OfferFilter(gpus=("H100",))).offers
    assert len(table) > 0
    assert set(table["gpu_model"]) == {"H100"}
    assert {"price_on_demand_usd_per_hour", "source", "as_of"} <= set(table.columns)


def test_a_workload_variant_quotes_without_a_file() -> None:
    """Regression (issue 7 notebooks): a copy made with model_copy must not answer from the
    original's estimate cache, and quote must accept the spec itself."""
    full = planner.load_workload("gpt2-xl-finetune")
    assert full.train.method is Method.FULL
    gpu = planner.resolve_gpu("H100")
    before = planner.estimate(full, gpu, 1)  # fills the original's cache
    lora = full.model_copy(
        update={"training": full.train.model_copy(update={"method": Method.LORA})}
    )
    after = planner.estimate(lora, gpu, 1)
    # no frozen gradients or AdamW states (fp32 moments of 1.56e9 parameters: 11.6 GiB)
    states = after.memory_breakdown_gib["optimizer_states"]
    assert states < before.memory_breakdown_gib["optimizer_states"] - 10
    result_full = planner.quote(planner.QuoteRequest(workload=full, deadline_hours=24))
    result_lora = planner.quote(planner.QuoteRequest(workload=lora, deadline_hours=24))
    assert result_lora.plans[0].total_cost_usd < result_full.plans[0].total_cost_usd


def test_variant_merges_nested_changes_and_validates() -> None:
    spec = planner.load_workload("gpt2-xl-finetune")
    lora = spec.variant(name="gpt2-xl-lora", training={"method": "lora", "lora_rank": 8})
    assert lora.name == "gpt2-xl-lora"
    assert lora.train.method is Method.LORA and lora.train.lora_rank == 8
    assert lora.train.optimizer == spec.train.optimizer  # untouched keys of the section stay
    assert spec.train.method is Method.FULL  # the original is unchanged
    with pytest.raises(ConfigError, match="method"):
        spec.variant(training={"method": "lorra"})


def test_tco_compares_with_the_chosen_providers_only() -> None:
    everyone = planner.tco("8xh100-hgx", utilization=0.6)
    aws_only = planner.tco("8xh100-hgx", utilization=0.6, providers=("aws",))
    assert {c.provider for c in aws_only.comparisons} == {"aws"}
    assert len({c.provider for c in everyone.comparisons}) > 1
    # Fewer offers can only make the cheapest cloud option dearer or equal.
    best = {c.purchase_option: c.cloud_usd_per_gpu_hour for c in everyone.comparisons}
    for c in aws_only.comparisons:
        assert c.cloud_usd_per_gpu_hour >= best[c.purchase_option]


def test_readme_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    match = re.search(r"## Python API.*?```python\n(.*?)```", readme, flags=re.S)
    assert match, "README lost its Python API example"
    monkeypatch.chdir(tmp_path)
    scope: dict[str, object] = {}
    exec(compile(match.group(1), "README.md", "exec"), scope)
    assert (tmp_path / "tco.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert str(scope["markdown"]).startswith("# Budget review")


# --- one table of public names ------------------------------------------------------------------


def test_every_public_name_comes_from_the_one_table() -> None:
    from planner import _PUBLIC, api

    assert planner.__all__ == ["__version__", *_PUBLIC]
    assert sorted(api.__all__) == sorted(_PUBLIC)
    for name, home in _PUBLIC.items():
        value = getattr(importlib.import_module(home), name)  # defined where the table says
        assert getattr(planner, name) is value, name
        assert getattr(api, name) is value, name
    assert {"BudgetReport", "Planner", "RefreshResult"} <= set(planner.__all__)
    with pytest.raises(AttributeError, match=r"planner\.api' has no attribute 'quotes'"):
        _ = api.quotes


def test_type_checkers_see_the_same_names_as_the_table() -> None:
    from planner import _PUBLIC

    tree = ast.parse(Path(planner.__file__).read_text(encoding="utf-8"))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"
    )
    imported = {
        alias.name: node.module
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert imported == _PUBLIC


# --- a session loads the prices once --------------------------------------------------------------


class CountingLoader:
    """load_offer_book, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, *args: Any, **kwargs: Any) -> OfferBook:
        self.calls += 1
        return load_offer_book(*args, **kwargs)


def _plans(result: Any) -> list[Any]:
    return [replace(p, solve_seconds=0.0) for p in result.plans]  # wall time varies


def test_a_session_loads_the_prices_once_and_answers_like_the_functions() -> None:
    loader = CountingLoader()
    session = planner.Planner(load_book=loader)
    assert loader.calls == 0  # nothing is read before the first use
    tight = session.quote(workload="gpt2-xl-finetune", deadline_hours=6, top=1)
    loose = session.quote(workload="gpt2-xl-finetune", deadline_hours=48, top=1)
    assert loader.calls == 1
    assert _plans(tight) == _plans(
        planner.quote(workload="gpt2-xl-finetune", deadline_hours=6, top=1)
    )
    assert _plans(loose) == _plans(
        planner.quote(workload="gpt2-xl-finetune", deadline_hours=48, top=1)
    )
    owned = session.tco("8xh100-hgx", utilization=0.6)
    table = session.offers(planner.OfferFilter(gpus=("H100",)), limit=3).offers
    assert session.gpus() == planner.gpus()
    assert loader.calls == 1
    assert owned == planner.tco("8xh100-hgx", utilization=0.6)
    assert table.equals(planner.offers(planner.OfferFilter(gpus=("H100",)), limit=3).offers)


def test_a_session_uses_its_currency_and_refuses_other_prices() -> None:
    owned = planner.tco("8xh100-hgx", with_cloud=False)
    in_eur = planner.Planner(currency="EUR").report(owned, "markdown")
    assert in_eur == planner.report(owned, "markdown", currency="EUR")
    assert in_eur != planner.report(owned, "markdown")
    session = planner.Planner()
    with pytest.raises(ConfigError, match="not this session's"):
        session.quote(workload="gpt2-xl-finetune", deadline_hours=24, offers_files=("x.csv",))
    with pytest.raises(ConfigError, match="did you mean limit"):
        session.offers(limt=3)  # type: ignore[call-arg]


def test_figures_are_the_report_charts_as_matplotlib_figures() -> None:
    from matplotlib.figure import Figure

    from planner.reports.document import Figure as ChartBlock
    from planner.reports.render import document_for

    result = planner.tco("8xh100-hgx", utilization=0.6)
    charts = [
        block.chart
        for section in document_for(result).sections
        for block in section.blocks
        if isinstance(block, ChartBlock)
    ]
    figures = planner.figures(result)
    assert charts and len(figures) == len(charts)
    for fig, chart in zip(figures, charts, strict=True):
        assert isinstance(fig, Figure)
        assert chart.title in [t.get_text() for t in fig.texts]  # the chart's own title
    # a session's currency reaches the axes: the cost axis is labelled in euros
    eur = planner.Planner(currency="EUR").figures(result)
    assert "EUR" in eur[0].axes[0].get_ylabel() and "USD" in figures[0].axes[0].get_ylabel()
