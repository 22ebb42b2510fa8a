"""The bad-input tests' shared checks: run the CLI in-process and judge its error."""

from __future__ import annotations

from click.testing import CliRunner, Result

from planner.cli import main


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    """``planner ARGS`` in-process, its stdout and stderr apart."""
    return CliRunner().invoke(main, list(args), env=env)


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
