"""The compact copies of planner's data files (planner/data/gpus.json and frameworks.json, read
at run time) hold exactly the values of their YAML files (where they are edited, with sources)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from scripts.compact_data import COMPACT, DATA, render, rows


def _same(a: Any, b: Any) -> bool:
    """Equal values of equal types, mappings in the same key order (1 is not 1.0 here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@pytest.mark.parametrize("name", sorted(COMPACT))
def test_the_compact_copy_is_current(name: str) -> None:
    text = (DATA / f"{name}.json").read_text(encoding="utf-8")
    assert text == render(name), "run: python scripts/compact_data.py"


@pytest.mark.parametrize("name", sorted(COMPACT))
def test_the_compact_copy_reads_back_as_the_yaml_values(name: str) -> None:
    text = (DATA / f"{name}.json").read_text(encoding="utf-8")
    assert _same(json.loads(text)[COMPACT[name]], rows(name))
