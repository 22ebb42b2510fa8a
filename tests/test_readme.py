"""The README's example outputs are what the commands print today (scripts/readme_outputs.py)."""

from __future__ import annotations

import re

import pytest

from scripts.readme_outputs import README, command_output, example_blocks, regenerated


def test_the_readme_shows_examples_with_their_output() -> None:
    blocks = list(example_blocks(README.read_text(encoding="utf-8")))
    assert [b.group(1).split()[2] for b in blocks][:2] == ["quote", "offers"]


def test_every_readme_example_output_is_current(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(README.parent)
    text = README.read_text(encoding="utf-8")
    assert regenerated(text) == text, "run: python scripts/readme_outputs.py"


def test_a_stale_example_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(README.parent)
    text = README.read_text(encoding="utf-8")
    block = next(example_blocks(text))
    price = re.search(r"\$\d+\.\d\d", block.group(2))
    assert price is not None, "the first example prints a price"
    wrong = block.group(2).replace(price.group(0), "$999.99", 1)
    stale = text.replace(block.group(2), wrong, 1)
    assert stale != text and regenerated(stale) == text
    assert command_output(block.group(1)).startswith("Quote for gpt2-xl-finetune")
