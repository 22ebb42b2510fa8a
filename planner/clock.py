"""The one clock: every "today" and "now" the planner uses (snapshot ages, stale-price warnings,
report dates, new snapshot ids) comes from here.

Callers look the functions up on this module at call time (``clock.utc_now()``), so a test can
freeze time for the whole program by replacing ``utc_now`` in one place.
"""

from __future__ import annotations

from datetime import date, datetime, timezone


def utc_now() -> datetime:
    """The current time in UTC."""
    return datetime.now(timezone.utc)


def utc_today() -> date:
    """Today's date in UTC (prices' as-of dates are UTC dates)."""
    return utc_now().date()
