"""A refresh's progress, one line per provider and region, redrawn in place on a terminal.

Only on a terminal: piped or captured stderr (tests, CI logs, ``2> file``) gets nothing, so a log
holds the refresh's messages and no bar.  Never on stdout, which carries only the document.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TextIO

_WIDTH = 24  # characters of the bar itself


class RegionProgress:
    """A ``catalog.refresh.Progress`` callback drawing ``[####----] 3/8 aws us-west-2``.

    Each call redraws the line with a carriage return; closing ends it with a newline (only if
    anything was drawn).  ``stream`` defaults to ``sys.stderr`` as it is when the bar is made.
    """

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = sys.stderr if stream is None else stream
        isatty = getattr(self._stream, "isatty", None)
        self.enabled = bool(isatty is not None and isatty())
        self._shown = 0  # length of the line on screen, to blank what a shorter one leaves

    def __call__(self, provider: str, region: str, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        filled = _WIDTH * min(done, total) // total
        line = f"[{'#' * filled}{'-' * (_WIDTH - filled)}] {done}/{total} {provider} {region}"
        self._stream.write("\r" + line + " " * max(0, self._shown - len(line)))
        self._stream.flush()
        self._shown = len(line)

    def close(self) -> None:
        if self._shown:
            self._stream.write("\n")
            self._stream.flush()
            self._shown = 0

    def __enter__(self) -> RegionProgress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
