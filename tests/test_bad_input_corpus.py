"""The bad-input corpus: what a hostile or careless user types, and what the planner must answer.

Each case in ``tests/corpus/bad_input.yaml`` runs one command (``run``, in process through the
CLI) or one library call (``api``), optionally on a file made from a bundled scenario with a
few keys changed (``file``).  Every case must end cleanly:

- the CLI exits non-zero (``exit``, when given, exactly) and prints no traceback; the library
  raises a :class:`~planner.errors.PlannerError` (``raises``, when given, by class name);
- the message names the place (``key``: the option, file key path or argument) and says what
  to do (``fix``), both matched case-insensitively.

A case's ``file`` is ``{from: workload|hardware|budget|offers, set: {dotted.key: value},
drop: [dotted.key], text: raw text, encoding: utf-16, name: FILE}`` (``name`` may be a relative path: ``data/calibration.yaml`` lands in the case's ``PLANNER_DATA_DIR``; ``encoding`` is the one ``text`` is written in, UTF-8 unless given); ``{file}`` in ``run`` or ``api`` arguments is its path.
``offers`` builds a one-row private price CSV; its ``set`` values are written verbatim (so
``inf`` stays text).  ``env`` sets environment variables for the case; ``{long}`` in any value is
a 300-character name, longer than a file system allows.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

import planner
from planner import errors
from planner.cli import main
from tests.conftest import offer_row

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus" / "bad_input.yaml"
BASES = {
    "workload": ROOT / "scenarios" / "workloads" / "gpt2-xl-finetune.yaml",
    "service": ROOT / "scenarios" / "workloads" / "llm-serving-7b.yaml",
    "hardware": ROOT / "scenarios" / "hardware" / "8xh100-hgx.yaml",
    "budget": ROOT / "scenarios" / "budgets" / "2027-ml-platform.yaml",
}
CASE_KEYS = {"id", "run", "api", "file", "env", "exit", "raises", "key", "fix", "why"}
# ``{long}`` in an argument or variable: a file name longer than any file system allows (255)
LONG_NAME = "a" * 300


def _cases() -> list[dict[str, Any]]:
    cases = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
    assert isinstance(cases, list)
    return cases


def _set(tree: Any, dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        tree = tree[int(part)] if isinstance(tree, list) else tree[part]
    if isinstance(tree, list):
        tree[int(last)] = value
    else:
        tree[last] = value


def _drop(tree: Any, dotted: str) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        tree = tree[int(part)] if isinstance(tree, list) else tree[part]
    del tree[int(last) if isinstance(tree, list) else last]


def _make_file(spec: dict[str, Any], folder: Path) -> Path:
    if "text" in spec:
        path = folder / spec.get("name", "input.yaml")
        path.parent.mkdir(parents=True, exist_ok=True)  # name: data/calibration.yaml
        path.write_text(spec["text"], encoding=spec.get("encoding", "utf-8"))
        return path
    kind = spec["from"]
    if kind == "offers":
        row = {k: str(v) for k, v in offer_row().items()}
        row.update({k: str(v) for k, v in spec.get("set", {}).items()})
        for key in spec.get("drop", []):
            row.pop(key)
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=list(row))
        writer.writeheader()
        writer.writerow(row)
        path = folder / spec.get("name", "prices.csv")
        path.write_text(out.getvalue(), encoding="utf-8")
        return path
    tree = yaml.safe_load(BASES[kind].read_text(encoding="utf-8"))
    for key, value in spec.get("set", {}).items():
        _set(tree, key, value)
    for key in spec.get("drop", []):
        _drop(tree, key)
    path = folder / spec.get("name", f"{kind}.yaml")
    path.write_text(yaml.safe_dump(tree, sort_keys=False), encoding="utf-8")
    return path


def _fill(value: Any, file: Path | None) -> Any:
    if isinstance(value, str):
        value = value.replace("{long}", LONG_NAME)
        return value.replace("{file}", str(file)) if file is not None else value
    if isinstance(value, list):
        return [_fill(v, file) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, file) for k, v in value.items()}
    return value


def _assert_says(text: str, case: dict[str, Any]) -> None:
    for part in ("key", "fix"):
        needle = str(case[part])
        assert needle.lower() in text.lower(), f"{case['id']}: {part} {needle!r} not in:\n{text}"


def test_corpus_is_well_formed() -> None:
    cases = _cases()
    ids = [c.get("id") for c in cases]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for case in cases:
        assert set(case) <= CASE_KEYS, (case.get("id"), set(case) - CASE_KEYS)
        assert ("run" in case) != ("api" in case), case["id"]
        assert case.get("key") and case.get("fix"), (
            f"{case['id']}: every case names a key and a fix"
        )


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["id"])
def test_bad_input_ends_cleanly(
    case: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # cases name bundled scenario files relative to the repository root
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path / "data"))  # never the user's snapshots
    file = _make_file(case["file"], tmp_path) if "file" in case else None
    for name, value in case.get("env", {}).items():
        monkeypatch.setenv(name, _fill(value, file))
    if "run" in case:
        result = CliRunner().invoke(main, [str(a) for a in _fill(case["run"], file)])
        text = result.output
        assert result.exit_code != 0, f"{case['id']}: exit 0:\n{text}"
        if "exit" in case:
            assert result.exit_code == case["exit"], (
                f"{case['id']}: exit {result.exit_code}:\n{text}"
            )
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            f"{case['id']}: escaped {type(result.exception).__name__}: {result.exception}"
        )
        assert "Traceback" not in text
        _assert_says(text, case)
        return
    call = _fill(case["api"], file)
    function = getattr(planner, call["call"])
    args = [_api_value(a) for a in call.get("args", [])]
    kwargs = {k: _api_value(v) for k, v in call.get("kwargs", {}).items()}
    expected = getattr(errors, case.get("raises", "PlannerError"))
    with pytest.raises(expected) as caught:
        function(*args, **kwargs)
    _assert_says(str(caught.value), case)


def _api_value(value: Any) -> Any:
    """YAML cannot spell every Python value: ``{filter: {...}}`` is an OfferFilter and
    ``{path: ...}`` a Path; everything else is passed as written."""
    if isinstance(value, dict) and set(value) == {"filter"}:
        return planner.OfferFilter(**value["filter"])
    if isinstance(value, dict) and set(value) == {"path"}:
        return Path(value["path"])
    return value
