"""Writing a report file: the ``--report`` option of `quote`, `tco` and `budget`, and ``-o`` of
`planner report`."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import click

from planner import api
from planner.cli.params import OutputPath
from planner.errors import ConfigError, PlannerError, shown_path
from planner.reports.render import format_for_path

report_path_option = click.option(
    "--report",
    "report_path",
    type=OutputPath("report.html"),
    help="Also write a report for people: .html (charts), .md (wikis) or .csv (spreadsheets).",
)


def report_target(path: Path | None) -> tuple[Path, str] | None:
    """A ``--report`` path and its format from the suffix, checked before any work is done."""
    if path is None:
        return None
    fmt = format_for_path(path)
    check_writable(path, "--report")
    return path, fmt


def check_writable(path: Path, option: str, *, what: str = "report") -> None:
    """Fail before any work (a quote sweep, a budget solve) when ``path``'s folder is missing,
    read-only, or a name the file system refuses, instead of after it; or when ``path`` is a
    file the command reads (:func:`refuse_an_input`)."""
    if str(path).strip() == "-":
        # was: a file named "-" written in the current folder ("report written to -")
        raise ConfigError(
            f"the {what} cannot go to stdout as '-': it is written to a file",
            key_path=option,
            # planner report writes to stdout without -o (was told to run "without report")
            hint="leave --output out: the report goes to stdout (> report.html saves it)"
            if option == "--output" and what == "report"
            else "name a file, e.g. report.html; for the document on stdout, run the command "
            "without --report / report, with --format json, csv or markdown",
        )
    refuse_an_input(path, option, what=what)
    directory = Path(path).parent if str(Path(path).parent) else Path(".")
    try:
        is_dir = directory.is_dir()
        exists = is_dir or directory.exists()
        writable = is_dir and os.access(directory, os.W_OK | os.X_OK)
        os.stat(path)  # a name too long for the file system fails here, before the work
    except (FileNotFoundError, NotADirectoryError):
        pass  # the report file is new (the usual case), or its folder is missing: said below
    except OSError as e:
        raise ConfigError(
            f"cannot write the {what} to {shown_path(path)!r}: {e.strerror or e}",
            key_path=option,
            hint=_WRITE_FIXES.get(e.errno or 0, "choose another path"),
        ) from None
    if not is_dir:
        state = "is a file, not a folder" if exists else "does not exist"
        raise ConfigError(
            f"cannot write the {what} to {shown_path(path)!r}: {shown_path(directory)!r} {state}",
            key_path=option,
            hint="create the folder first, or choose another path",
        )
    if not writable:
        raise ConfigError(
            f"cannot write the {what} to {shown_path(path)!r}: no permission to write in "
            f"{shown_path(directory)!r}",
            key_path=option,
            hint="choose a folder you can write to",
        )


def refuse_an_input(path: Path, option: str, *, what: str = "report") -> None:
    """A ConfigError when ``path`` is a file the running command reads (its budget file,
    ``--hardware``, ``--workload``, ``--offers``): ``report budget b.yaml -o b.yaml`` replaced the
    budget file with the report, and the plan it was made from was gone."""
    ctx = click.get_current_context(silent=True)
    try:
        target = os.stat(path)
    except (OSError, ValueError):
        return  # a new file (the usual case), or a name check_writable explains
    if ctx is None or not stat.S_ISREG(target.st_mode):
        return  # a device or a pipe (/dev/stdout) is written into, never replaced
    for param in ctx.command.params:
        if option in param.opts:
            continue  # the output option itself
        value = ctx.params.get(param.name or "")
        for given in value if isinstance(value, (tuple, list)) else (value,):
            if not isinstance(given, (str, Path)) or not str(given):
                continue
            # build's --workload is NAME[:RUNS]
            if any(_same_file(name, path) for name in (str(given), str(given).rpartition(":")[0])):
                label = (
                    param.opts[0]
                    if isinstance(param, click.Option)
                    else (param.metavar or param.name or "").upper()
                )
                raise ConfigError(
                    f"{shown_path(path)!r} is the file {label} reads: writing the {what} there "
                    "would replace it",
                    key_path=option,
                    hint=f"write the {what} to another file",
                )


def _same_file(name: str, path: Path) -> bool:
    try:
        return bool(name) and os.path.samefile(name, path)
    except (OSError, ValueError):
        return False


def save_report(result: Any, target: tuple[Path, str] | None, **options: Any) -> None:
    """Render ``result`` (quote, tco or budget) as the target's format and write it there."""
    if target is not None:
        path, fmt = target
        write_report(api.report(result, fmt, **options), path)


def write_report(text: str, path: Path, *, what: str = "report") -> None:
    """Write ``text`` to ``path``: a file atomically (a reader never sees half a report; a crash
    leaves the old one), a device or pipe (``/dev/stdout``, a FIFO) by writing into it.  A
    file-system failure is a PlannerError naming the path and what to do."""
    path = Path(path)
    try:
        if path.is_dir():
            raise ConfigError(
                f"cannot write the {what} to {str(path)!r}: it is a folder",
                hint="name a file, e.g. report.html",
            )
        if path.exists() and not path.is_file():
            with open(path, "w", encoding="utf-8") as out:  # never replace a device or a pipe
                out.write(text)
        else:
            _replace_atomically(text, path)
    except OSError as e:
        raise report_write_failed(path, e, what=what) from e
    click.echo(f"{what} written to {path}", err=True)


def _replace_atomically(text: str, path: Path) -> None:
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:200]}.", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a report is for sharing
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


_WRITE_FIXES = {
    errno.ENOSPC: "free some space on that disk, or write the report elsewhere",
    errno.EDQUOT: "free some space within your quota, or write the report elsewhere",
    errno.EROFS: "the disk is read-only: choose a folder on a writable disk",
    errno.EACCES: "choose a folder you can write to",
    errno.EPERM: "choose a folder you can write to",
    errno.ENAMETOOLONG: "choose a shorter file name",
    errno.ENOTDIR: "part of the path is a file, not a folder: choose another path",
    errno.ENOENT: "create the folder first, or choose another path",
}


def report_write_failed(path: Path, e: OSError, *, what: str = "report") -> PlannerError:
    """A failed write of a report (or a hardware file: ``what``) in the user's words."""
    return PlannerError(
        f"cannot write the {what} to {shown_path(path)}: {e.strerror or e}",
        hint=_WRITE_FIXES.get(e.errno or 0, "choose another path"),
    )
