"""The bad-input tests' shared checks: run the CLI in-process and judge its error."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from planner.cli import main


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    """``planner ARGS`` in-process, its stdout and stderr apart."""
    return CliRunner().invoke(main, list(args), env=env)


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    """:func:`invoke`, checked to have printed no traceback whatever it answered."""
    result = invoke(*args, env=env)
    assert "Traceback" not in result.output
    return result


def write_file(folder: Path, name: str, text: str) -> Path:
    """``text`` written to ``folder/name`` (UTF-8), its path."""
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def own_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test's own user data folder (calibrations, snapshots), never the user's."""
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path / "data"))


def assert_clean_error(
    result: Result, *needles: str, exit_code: int = 2, quiet_stdout: bool = False
) -> None:
    """The exit code, no traceback or escaped exception, and every needle in stderr
    (case-insensitive); with ``quiet_stdout`` nothing on stdout either (``--format json`` stays
    parseable)."""
    assert result.exit_code == exit_code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"escaped {type(result.exception).__name__}: {result.exception}"
    )
    assert "Traceback" not in result.output
    if quiet_stdout:
        assert result.stdout == "", result.stdout
    for needle in needles:
        assert needle.lower() in result.stderr.lower(), f"{needle!r} not in:\n{result.stderr}"
