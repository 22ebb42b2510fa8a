"""The GPU catalog's compact copy (planner/data/gpus.json, read at run time) holds exactly the
values of planner/data/gpus.yaml (where they are edited, with their sources)."""

from __future__ import annotations

import json
from typing import Any

from scripts.compact_data import COMPACT, render, rows


def _same(a: Any, b: Any) -> bool:
    """Equal values of equal types, mappings in the same key order (1 is not 1.0 here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def test_the_compact_catalog_is_current() -> None:
    assert COMPACT.read_text(encoding="utf-8") == render(), "run: python scripts/compact_data.py"


def test_the_compact_catalog_reads_back_as_the_yaml_values() -> None:
    assert _same(json.loads(COMPACT.read_text(encoding="utf-8"))["gpus"], rows())
