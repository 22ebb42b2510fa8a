"""Units and calendar conventions, defined once."""

from __future__ import annotations

HOURS_PER_YEAR = 8760.0  # 365 d x 24 h; the worked example in cost-facts.md s2.4 uses 8,760 h
HOURS_PER_MONTH = HOURS_PER_YEAR / 12  # 730 h, the convention cloud bills use for a month
# Largest GPU-hours a budget may ask for in one month or one workload: 1e12 GPU-hours a month is
# over a billion GPUs busy all month, far past any fleet, and keeps the MILP's coefficients well
# inside what HiGHS solves reliably (it treats 1e20 as infinite: HiGHS options, infinite_bound).
MAX_GPU_HOURS = 1e12
# Largest amount of money one file entry may hold (a machine's capex, a price, a capex limit):
# a trillion USD is past any server or fleet budget, so a bigger number is a units mistake.
MAX_USD = 1e12
