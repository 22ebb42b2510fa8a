"""docs/file-formats.md is generated from the models that read the files, and is current."""

from __future__ import annotations

from scripts.schema_docs import DOC, document


def test_the_file_formats_document_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == document(), "run: python scripts/schema_docs.py"


def test_every_key_and_column_is_documented_with_its_range() -> None:
    from planner.schema import COLUMNS

    text = document()
    for column in COLUMNS:
        assert f"| `{column.name}` |" in text
    assert "| `data.tokens` | number (optional) | - | >= 1, <= 1e+15 |" in text
    assert "| `training.parallelism.zero` | whole number (optional) | - | >= 0, <= 3 |" in text
