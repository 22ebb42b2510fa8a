"""planner: what hardware should this job run on, how long will it take, and what will it cost?

Data flows one way: providers -> snapshot -> offers table -> requirements filter -> optimizer ->
plan -> report.  The public API lives in :mod:`planner.api`.
"""

from __future__ import annotations

__version__ = "0.1.0"
