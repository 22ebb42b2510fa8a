"""The README's example outputs, regenerated from the commands they show.

    python scripts/readme_outputs.py          # rewrite README.md's example outputs
    python scripts/readme_outputs.py --check  # exit 1 (and show the first difference) if stale

A README example is a fenced block whose first line is ``$ planner ...`` followed by what the
command prints on stdout; blocks that only list commands are left alone.  The commands run in
process on the bundled snapshot, the clock frozen at the golden outputs' day
(``tests/test_golden.py``), so the file is the same whenever it is regenerated.
"""

from __future__ import annotations

import argparse
import difflib
import re
import shlex
import sys
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FROZEN_NOW = datetime(2026, 11, 23, 12, 0, tzinfo=timezone.utc)
_BLOCK = re.compile(r"^```\n(\$ planner [^\n]*)\n(.*?)^```$", re.M | re.S)


def example_blocks(text: str) -> Iterator[re.Match[str]]:
    """Fenced blocks of one command and its output (not blocks of several commands)."""
    for match in _BLOCK.finditer(text):
        if match.group(2).strip() and not match.group(2).startswith("$ "):
            yield match


def command_output(command_line: str) -> str:
    """What ``$ planner ...`` prints on stdout, run in process from the repository root."""
    from click.testing import CliRunner

    from planner.cli import main

    args = shlex.split(command_line.removeprefix("$ planner "), comments=True)
    with mock.patch("planner.clock.utc_now", lambda: FROZEN_NOW):
        result = CliRunner().invoke(main, args, catch_exceptions=False)
    if result.exit_code != 0:
        raise SystemExit(f"{command_line!r} exited {result.exit_code}:\n{result.output}")
    return result.stdout


def regenerated(text: str) -> str:
    """``text`` with every example block's output replaced by the command's current output."""
    out, last = [], 0
    for match in example_blocks(text):
        out.append(text[last : match.start(2)])
        out.append(command_output(match.group(1)).rstrip("\n") + "\n")
        last = match.end(2)
    out.append(text[last:])
    return "".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="report a stale README, change nothing"
    )
    args = parser.parse_args(argv)
    import os

    os.chdir(ROOT)  # the examples name scenario files relative to the repository root
    text = README.read_text(encoding="utf-8")
    new = regenerated(text)
    if args.check:
        if new != text:
            diff = difflib.unified_diff(
                text.splitlines(), new.splitlines(), "README.md", "regenerated", lineterm="", n=1
            )
            print("\n".join(list(diff)[:40]))
            return 1
        return 0
    README.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
