"""The library surface: everything the CLI and notebooks call.

providers -> snapshot -> offers table -> requirements filter -> optimizer -> plan -> report
"""

from __future__ import annotations
