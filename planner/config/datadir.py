"""The ``PLANNER_DATA_DIR`` setting, read the one way every command reads it."""

from __future__ import annotations

import os
from pathlib import Path

from planner.errors import DataDirError


def data_dir_setting() -> Path | None:
    """The folder ``PLANNER_DATA_DIR`` names, a leading ``~`` expanded; None where it is unset.

    A shell expands ``~`` only where it is unquoted, so ``PLANNER_DATA_DIR="~/planner"`` reaches
    the planner as a literal ``~``; that was taken as a folder named ``~`` under the current one
    (calibrations written to ``./~/planner/calibration.yaml``).  It means the home folder, as it
    does to the shell.  A ``~user`` that names no user cannot be expanded, and a value of blanks
    names no folder: both refused, not made.
    """
    text = os.environ.get("PLANNER_DATA_DIR")
    if not text:
        return None
    if not text.strip():
        # was: a folder named by the blanks made in the current one, the calibrations in it
        raise DataDirError(
            f"PLANNER_DATA_DIR={text!r} is blank",
            hint="set it to a folder's path, e.g. PLANNER_DATA_DIR=$HOME/planner, or unset it "
            "to use the default",
        )
    path = Path(os.path.expanduser(text))  # Path.expanduser raises on an unknown ~user
    if path.parts and path.parts[0].startswith("~"):
        raise DataDirError(
            f"PLANNER_DATA_DIR={text}: {path.parts[0]} names no user whose home folder it could be",
            hint="write the folder's full path, e.g. PLANNER_DATA_DIR=$HOME/planner (unquoted $HOME"
            " or ~ is expanded by the shell)",
        )
    return path
