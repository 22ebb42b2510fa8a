"""The README's example outputs are what the commands print today (scripts/readme_outputs.py)."""

from __future__ import annotations

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
    stale = text.replace(block.group(2), block.group(2).replace("$2.90", "$2.80", 1), 1)
    assert stale != text and regenerated(stale) == text
    assert command_output(block.group(1)).startswith("Quote for gpt2-xl-finetune")
