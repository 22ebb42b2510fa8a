"""Files the repository generates from code (docs/file-formats.md, planner/data/estimate_error.yaml):
write them, or with ``--check`` say that one is stale, the same way for each."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def write_or_check(
    path: Path, render: Callable[[], str], argv: list[str] | None, *, doc: str | None
) -> int:
    """The ``main`` of a generating script: rewrite ``path`` with ``render()``, or with
    ``--check`` exit 1 (naming the command to run) when the file differs from it."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current != text:
            script = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "the script"
            print(f"{path} is stale: run python scripts/{script}", file=sys.stderr)
            return 1
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return 0
