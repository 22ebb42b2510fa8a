"""The compact copies of planner's data files (planner/data/gpus.json, frameworks.json and
estimate_error.json, read at run time) hold exactly the values of their YAML files (where they are
edited, with sources); workloads.json those of the bundled workload files, by their bytes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from planner.config.yamlfile import read_yaml
from planner.workload.spec import bundled_workload_values
from scripts.compact_data import (
    COMPACT,
    DATA,
    WORKLOADS,
    WORKLOADS_COPY,
    render,
    render_workloads,
    rows,
    workload_values,
)


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


def test_the_workloads_copy_is_current() -> None:
    text = WORKLOADS_COPY.read_text(encoding="utf-8")
    assert text == render_workloads(), "run: python scripts/compact_data.py"


@pytest.mark.parametrize("path", sorted(WORKLOADS.glob("*.yaml")), ids=lambda p: p.name)
def test_a_bundled_workload_reads_as_its_yaml_without_parsing_it(path: Path) -> None:
    # the values kept for the file's bytes are those PyYAML gives, types and key order included
    values = bundled_workload_values()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert _same(values[digest], workload_values(path))
    assert _same(read_yaml(path, compact=values), workload_values(path))


def test_an_edited_workload_file_is_parsed_as_it_stands(tmp_path: Path) -> None:
    source = WORKLOADS / "gpt2-xl-finetune.yaml"
    edited = tmp_path / "gpt2-xl-finetune.yaml"
    edited.write_text(source.read_text(encoding="utf-8") + "pieces: 3\n", encoding="utf-8")
    raw = read_yaml(edited, compact=bundled_workload_values())
    assert raw["pieces"] == 3
