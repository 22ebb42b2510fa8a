"""Bad input and silently wrong results the sixteenth sweep found: ``--gpu "RTX 6000"`` was read as
the 2018 Quadro RTX 6000 (24 GB, Turing) where NVIDIA's current card of that name is the RTX 6000
Ada (48 GB); a quote or build run with ``--currency EUR`` wrote its infeasibility error in dollars,
and "with --budget 20.83" for the ``--budget 20`` the user typed in euros.

The product rule each test pins: bad input gets a clear error naming the field and a fix, and the
user's own units come back in what the planner says.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import planner
from planner.cli import main
from planner.errors import ConfigError, money_shown_as, money_text, shown_amount


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path / "data"))


# -- a model number two product lines share -------------------------------------------------------


@pytest.mark.parametrize("typed", ["RTX 6000", "RTX6000", "rtx-6000", "NVIDIA RTX 6000"])
def test_rtx_6000_alone_names_two_cards(typed: str) -> None:
    # was: the Quadro RTX 6000 (Turing, 24 GB) without a word
    with pytest.raises(ConfigError, match="ambiguous") as info:
        planner.resolve_gpu(typed)
    assert info.value.hint is not None
    assert "RTX6000-Ada" in info.value.hint and "Quadro-RTX6000" in info.value.hint


@pytest.mark.parametrize(
    ("typed", "name"),
    [
        ("Quadro RTX 6000", "Quadro-RTX6000"),
        ("quadro-rtx6000", "Quadro-RTX6000"),
        ("RTX6000-Turing", "Quadro-RTX6000"),
        ("RTX 6000 Ada", "RTX6000-Ada"),
        ("NVIDIA RTX 6000 Ada Generation", "RTX6000-Ada"),
        # a brand prefix still folds away
        ("Tesla V100", "V100-16GB"),
        ("GeForce RTX 4090", "RTX4090"),
    ],
)
def test_a_card_named_with_its_line_or_generation_resolves(typed: str, name: str) -> None:
    assert planner.resolve_gpu(typed).name == name


def test_the_cli_names_both_cards() -> None:
    result = CliRunner().invoke(
        main, ["estimate", "bert-base-finetune", "--gpu", "RTX 6000", "--precision", "fp16"]
    )
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "--gpu: GPU name 'RTX 6000' is ambiguous" in result.output
    assert "RTX6000-Ada or Quadro-RTX6000" in result.output


# -- money in errors, in the command's currency -----------------------------------------------------


def test_amounts_are_written_in_the_shown_currency() -> None:
    assert money_text(1.04) == "$1.04"
    assert money_text(143_492.8) == "$143,493"
    assert shown_amount(20.83) == 20.83
    with money_shown_as("€", 0.5):
        assert money_text(3.0) == "€1.50"
        assert money_text(-4000.0) == "-€2,000"
        assert shown_amount(41.66) == 20.83
    assert money_text(3.0) == "$3.00"  # and back in dollars outside


def test_an_infeasible_quote_writes_its_money_in_the_currency_asked() -> None:
    # was: "a 24 h deadline with a $1.04 budget cannot be met ... ($38.54)" for --budget 1 in EUR
    args = ["quote", "--workload", "gpt2-xl-finetune", "--deadline", "0.3h", "--budget", "20"]
    in_euros = CliRunner().invoke(main, [*args, "--currency", "EUR"])
    assert in_euros.exit_code != 0
    assert "Traceback" not in in_euros.output
    assert "a €20.00 budget cannot be met" in in_euros.output
    assert "with --budget 20 the fastest" in in_euros.output
    assert "$" not in in_euros.output
    in_dollars = CliRunner().invoke(main, args)
    assert "a $20.00 budget cannot be met" in in_dollars.output
    assert "€" not in in_dollars.output


def test_a_build_over_budget_writes_its_money_in_the_currency_asked() -> None:
    result = CliRunner().invoke(
        main, ["build", "--workload", "gpt2-finetune", "--budget", "100", "--currency", "EUR"]
    )
    assert result.exit_code != 0
    assert "Traceback" not in result.output
    assert "the cheapest machine that runs them costs €" in result.output
    assert "$" not in result.output
