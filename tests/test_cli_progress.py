"""The refresh's progress bar (issue 13): per provider and region, on a terminal's stderr only."""

from __future__ import annotations

import io
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli import main
from planner.cli.progress import RegionProgress
from planner.providers import PROVIDERS
from tests.provider_fakes import TableProvider, offer_row


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_one_line_is_redrawn_per_region_and_ended() -> None:
    tty = _Terminal()
    with RegionProgress(tty) as progress:
        progress("aws", "us-east-1", 1, 2)
        progress("gcp", "us-central1", 2, 2)
    assert tty.getvalue() == (
        "\r[############------------] 1/2 aws us-east-1"
        "\r[########################] 2/2 gcp us-central1\n"
    )


def test_a_shorter_line_blanks_what_the_longer_one_left() -> None:
    tty = _Terminal()
    progress = RegionProgress(tty)
    progress("azure", "southcentralus", 1, 2)
    progress("aws", "eu-west-1", 2, 2)
    first, second = tty.getvalue().split("\r")[1:]
    assert len(second) == len(first) and second.rstrip().endswith("aws eu-west-1")


def test_not_a_terminal_gets_nothing() -> None:
    piped = io.StringIO()
    with RegionProgress(piped) as progress:
        progress("aws", "us-east-1", 1, 1)
    assert piped.getvalue() == ""


def test_cli_refresh_through_a_pipe_shows_no_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path))
    today = datetime.now(timezone.utc).date().isoformat()
    rows = [offer_row("us-east-1", "p4d.24xlarge", 21.96, as_of=today)]
    monkeypatch.setitem(PROVIDERS, "aws", lambda: TableProvider({"us-east-1": rows}))
    out = CliRunner().invoke(
        main, ["prices", "refresh", "--provider", "aws", "--region", "us-east-1", "--force"]
    )
    assert out.exit_code == 0, out.output
    assert "published" in out.stderr
    for text in (out.stdout, out.stderr):
        assert "[#" not in text and "[-" not in text and "\r" not in text
        assert "1/1" not in text
