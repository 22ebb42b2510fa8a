"""Bad input the third sweep found (the less-travelled commands: budget, build, report, prices,
offers, and the library functions behind them): each case here answered with a traceback, exit 0
on input that was wrong, or a message that named neither the field nor the fix.

The product rule each test pins: bad input gets a clear error naming the file, the field and a
fix, a non-zero exit and no traceback, on the command line and in the library.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from planner.cli import main

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"
BUDGET = SCENARIOS / "budgets" / "2027-ml-platform.yaml"


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env)


def assert_clean_error(result: Result, *needles: str, exit_code: int = 2) -> None:
    """The exit code, no traceback or escaped exception, and every needle in stderr
    (case-insensitive)."""
    assert result.exit_code == exit_code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"escaped {type(result.exception).__name__}: {result.exception}"
    )
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle.lower() in result.stderr.lower(), f"{needle!r} not in:\n{result.stderr}"


def _budget_file(tmp_path: Path, old: str, new: str) -> Path:
    text = BUDGET.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "budget.yaml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


# --- a date that is no date ------------------------------------------------------------------


def test_an_impossible_date_in_a_file_is_named_by_its_key(tmp_path: Path) -> None:
    """was: PyYAML's ``ValueError: month must be in 1..12`` escaped the parser as a traceback
    (YAML reads 2024-13-45 as a date, and building it failed)."""
    path = _budget_file(tmp_path, "prices_as_of: 2024-01-01", "prices_as_of: 2024-13-45")
    result = invoke("budget", str(path), "--no-sensitivity")
    assert_clean_error(result, str(path), "prices_as_of", "2024-13-45", "a date like")


def test_february_30_in_a_file_is_named_by_its_key(tmp_path: Path) -> None:
    path = _budget_file(tmp_path, "prices_as_of: 2024-01-01", "prices_as_of: 2025-02-30")
    result = invoke("budget", str(path), "--no-sensitivity")
    assert_clean_error(result, "prices_as_of", "2025-02-30", "a date like")
