"""Deadlines as people write them: durations, dates, date-times with zones and weekdays."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from click.testing import CliRunner

from planner.cli import main
from planner.units import deadline_point, duration_hours

# A Tuesday afternoon, UTC.
NOW = datetime(2026, 11, 24, 15, 30, tzinfo=timezone.utc)
UTC = timezone.utc


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-12-01T18:00Z", datetime(2026, 12, 1, 18, 0, tzinfo=UTC)),
        ("2026-12-01T18:00:00+00:00", datetime(2026, 12, 1, 18, 0, tzinfo=UTC)),
        ("2026-12-01 18:00+01:00", datetime(2026, 12, 1, 17, 0, tzinfo=UTC)),
        ("2026-12-01T18:00", datetime(2026, 12, 1, 18, 0, tzinfo=UTC)),  # no zone: UTC
        ("2026-12-01", datetime(2026, 12, 2, 0, 0, tzinfo=UTC)),  # a date: the end of that day
        ("friday 18:00", datetime(2026, 11, 27, 18, 0, tzinfo=UTC)),
        ("Friday", datetime(2026, 11, 27, 23, 59, tzinfo=UTC)),
        ("fri 9:15", datetime(2026, 11, 27, 9, 15, tzinfo=UTC)),
        ("tuesday 18:00", datetime(2026, 11, 24, 18, 0, tzinfo=UTC)),  # later today
        ("tuesday 09:00", datetime(2026, 12, 1, 9, 0, tzinfo=UTC)),  # passed today: next week
    ],
)
def test_points_in_time(text: str, expected: datetime) -> None:
    assert deadline_point(text, NOW) == expected


@pytest.mark.parametrize(
    "text", ["24h", "soon", "t 18:00", "friday 25:00", "friday 18:60", "2026-13-01", "", "s"]
)
def test_what_is_not_a_point_in_time(text: str) -> None:
    assert deadline_point(text, NOW) is None


def test_durations_are_still_durations() -> None:
    assert duration_hours("90m") == pytest.approx(1.5)
    assert duration_hours("2w") == 336


def test_a_date_deadline_is_echoed_as_absolute_time_and_hours(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("planner.clock.utc_now", lambda: NOW)
    result = CliRunner().invoke(
        main,
        ["quote", "-w", "gpt2-xl-finetune", "--deadline", "2026-12-01T18:00Z", "--top", "1"],
    )
    assert result.exit_code == 0, result.output
    hours = (datetime(2026, 12, 1, 18, 0, tzinfo=UTC) - NOW) / timedelta(hours=1)
    assert hours == pytest.approx(170.5)
    assert "deadline: 2026-12-01 18:00 UTC, 170.5 h from now" in result.stderr
    assert "deadline 7.1 days (170 h)" in result.stdout  # the quote runs on those hours


def test_a_deadline_in_the_past_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("planner.clock.utc_now", lambda: NOW)
    result = CliRunner().invoke(
        main, ["quote", "-w", "gpt2-xl-finetune", "--deadline", "2026-11-20"]
    )
    assert result.exit_code == 2
    assert "is in the past; it is now 2026-11-24 15:30 UTC" in result.output
    assert "Traceback" not in result.output
