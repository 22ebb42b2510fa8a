"""Units and calendar conventions, defined once."""

from __future__ import annotations

import re

HOURS_PER_YEAR = 8760.0  # 365 d x 24 h; the worked example in cost-facts.md s2.4 uses 8,760 h
HOURS_PER_MONTH = HOURS_PER_YEAR / 12  # 730 h, the convention cloud bills use for a month
# Largest GPU-hours a budget may ask for in one month or one workload: 1e12 GPU-hours a month is
# over a billion GPUs busy all month, far past any fleet, and keeps the MILP's coefficients well
# inside what HiGHS solves reliably (it treats 1e20 as infinite: HiGHS options, infinite_bound).
MAX_GPU_HOURS = 1e12
# Largest amount of money one file entry may hold (a machine's capex, a price, a capex limit):
# a trillion USD is past any server or fleet budget, so a bigger number is a units mistake.
MAX_USD = 1e12
# Shortest time a job is billed and planned for: AWS, Google Cloud and Azure bill Linux VMs by
# the second with a one-minute minimum, and no job starts, loads and saves in less.  A job the
# estimator puts at microseconds (a few tokens) is planned as one minute of its gang.
MIN_BILLED_HOURS = 1.0 / 60.0
# Longest deadline a quote takes: ten years.  Prices, hardware and the job itself change long
# before; a longer one is a unit slip (minutes or seconds typed as hours).
MAX_DEADLINE_HOURS = 10 * HOURS_PER_YEAR
# Most GPUs one job may use: the largest GPU clusters built by 2026 hold ~100,000-200,000 GPUs
# (xAI Colossus, Meta's and OpenAI's sites); a million leaves room and stops a typo (1e20).
MAX_GPUS_PER_JOB = 1_000_000
# Most plans one quote lists: each is a separate plan variant to read; past a hundred nobody
# compares them, and a typo (1e20) should be named, not silently clipped.
MAX_PLANS = 100
# Least share of owned GPU-hours doing useful work a TCO or budget takes: 1%.  The cost per
# useful GPU-hour is the hourly cost / utilization, so 1e-300 printed a 300-digit price; an owned
# fleet busy under 1% of its hours is idle hardware, and anything lower is a fraction typed as a
# percentage (0.005 for 0.5).
MIN_UTILIZATION = 0.01
# Depreciation period of an owned machine: 1 to 30 years.  Servers are depreciated over 3-6 years
# (US MACRS 5-year class for computers; hyperscalers use 5-6 years), so under a year is months
# typed as years (0.0001 years put a year's depreciation at 3.1 billion USD for one server).
MIN_LIFETIME_YEARS = 1.0
MAX_LIFETIME_YEARS = 30.0
# Horizon of a TCO comparison: one month (the cumulative cost table is monthly) to 30 years.
MIN_HORIZON_YEARS = 1.0 / 12.0
MAX_HORIZON_YEARS = 30.0

# A duration as people write one: ``90m``, ``24h``, ``1.5 days``, ``2w``, or a bare number of hours.
_DURATION = re.compile(
    r"^\s*(\d+(?:\.\d+)?)\s*(m|min|mins|minutes?|h|hr|hrs|hours?|d|days?|w|weeks?)?\s*$", re.I
)
_UNIT_HOURS = {"m": 1 / 60, "h": 1.0, "d": 24.0, "w": 168.0}
DURATION_FORMS = "90m, 24h, 3d or 2w"


def duration_hours(text: str) -> float | None:
    """``90m``, ``24h``, ``3d``, ``1w`` or a bare number of hours -> hours; None when unreadable.

    The one reader of durations: the CLI's ``--deadline`` and the library's hints use it.  The
    result may be 0 or infinite (a few hundred digits); the caller decides what it accepts.
    """
    match = _DURATION.match(str(text))
    if not match:
        return None
    unit = (match.group(2) or "h").lower()[0]
    return float(match.group(1)) * _UNIT_HOURS[unit]
