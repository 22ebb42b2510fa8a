"""The ``PLANNER_DATA_DIR`` setting, read the one way every command reads it."""

from __future__ import annotations

import os
import re
from pathlib import Path

from planner.errors import DataDirError

# A variable the shell did not expand: $HOME, ${XDG_DATA_HOME}, %APPDATA% (single quotes, a .env
# file, a Dockerfile ENV or a systemd unit pass them on as written)
_UNEXPANDED = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[A-Za-z_][A-Za-z0-9_()]*%")


def data_dir_setting() -> Path | None:
    """The folder ``PLANNER_DATA_DIR`` names, a leading ``~`` expanded; None where it is unset.

    A shell expands ``~`` only where it is unquoted, so ``PLANNER_DATA_DIR="~/planner"`` reaches
    the planner as a literal ``~``; that was taken as a folder named ``~`` under the current one
    (calibrations written to ``./~/planner/calibration.yaml``).  It means the home folder, as it
    does to the shell.  A ``~user`` that names no user cannot be expanded, a value of blanks
    names no folder, blanks around a path make another folder than the one meant, and an
    unexpanded ``$VAR``, ``${VAR}`` or ``%VAR%`` a folder of that name: all refused, not made.
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
    if text != text.strip():
        # was: a folder named "dd " beside "dd", the calibrations in the one nobody looks in
        raise DataDirError(
            f"PLANNER_DATA_DIR={text!r} begins or ends with blanks",
            hint=f"drop them: PLANNER_DATA_DIR={text.strip()}",
        )
    variable = _UNEXPANDED.search(text)
    if variable is not None:
        # was: a folder literally named "$HOME" made under the current one
        raise DataDirError(
            f"PLANNER_DATA_DIR={text}: {variable.group()} is a variable nothing expanded, not a "
            "folder's name",
            hint="write the folder's full path, or set it where the shell expands variables "
            '(PLANNER_DATA_DIR="$HOME/planner" in double quotes, not single)',
        )
    path = Path(os.path.expanduser(text))  # Path.expanduser raises on an unknown ~user
    if path.parts and path.parts[0].startswith("~"):
        raise DataDirError(
            f"PLANNER_DATA_DIR={text}: {path.parts[0]} names no user whose home folder it could be",
            hint="write the folder's full path, e.g. PLANNER_DATA_DIR=$HOME/planner (unquoted $HOME"
            " or ~ is expanded by the shell)",
        )
    return path
