"""Pin the newest releases of `pip install -e '.[dev]'` into requirements/lock-py3.X.txt.

    python scripts/lock_requirements.py                      # every Python 3.10-3.13 pyenv has
    python scripts/lock_requirements.py --python 3.12        # one version, found with pyenv
    python scripts/lock_requirements.py --python /usr/bin/python3.12

For each Python this makes a throw-away virtual environment, installs the project with its dev
extras (the README's install command, so the newest releases the index offers today), and writes
`pip freeze --exclude-editable` (every installed distribution except the project itself) to
requirements/lock-py<major>.<minor>.txt, atomically, under a header that says it is generated, by
which command, when and with which Python.  `.ci/run` installs with `-c` that file, so a release
on the index cannot change what CI tests; its canary stage tries the newest releases instead.
Regenerate a lock when a dependency must move, and commit it with the change that needs it.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUPPORTED = ("3.10", "3.11", "3.12", "3.13")
VERSION_RE = re.compile(r"^\d+\.\d+$")
# Asked of each interpreter: its full version and implementation, on one line.
PROBE = "import platform, sys; print('%d.%d.%d' % sys.version_info[:3], platform.python_implementation())"


class LockError(Exception):
    """Something the user can fix (a missing Python, a failed install): one line, no traceback."""


@dataclass(frozen=True)
class Interpreter:
    """A Python to lock for: where it is and what it is."""

    path: Path
    version: str  # "3.12.1"
    implementation: str  # "CPython"

    @property
    def minor(self) -> str:
        """ "3.12" for 3.12.1: the part of the version a lock file is named after."""
        return ".".join(self.version.split(".")[:2])


def pyenv_python(minor: str) -> Path | None:
    """The newest pyenv install of `minor` ("3.12"), or None when pyenv has none.

    Asks `pyenv prefix` when pyenv is on PATH, else looks in $PYENV_ROOT/versions (default
    ~/.pyenv), so this also works where pyenv's shims are not set up.
    """
    pyenv = shutil.which("pyenv")
    if pyenv is not None:
        done = subprocess.run([pyenv, "prefix", minor], capture_output=True, text=True, check=False)
        prefix = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
        if done.returncode == 0 and prefix and (Path(prefix) / "bin" / "python").exists():
            return Path(prefix) / "bin" / "python"
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = []
    for folder in root.glob(f"{minor}.*"):
        patch = folder.name[len(minor) + 1 :]
        if patch.isdigit() and (folder / "bin" / "python").exists():
            candidates.append((int(patch), folder / "bin" / "python"))
    return max(candidates)[1] if candidates else None


def probe(path: Path) -> Interpreter:
    """Ask the interpreter at `path` what it is; LockError when it is not a usable Python."""
    try:
        done = subprocess.run(
            [str(path), "-c", PROBE], capture_output=True, text=True, check=False, timeout=60
        )
    except OSError as e:
        raise LockError(f"cannot run {path}: {e.strerror or e}") from e
    if done.returncode != 0:
        raise LockError(f"{path} is not a working Python (exit {done.returncode})")
    try:
        version, implementation = done.stdout.split()
    except ValueError:
        raise LockError(f"{path} did not say which Python it is: {done.stdout!r}") from None
    interpreter = Interpreter(path, version, implementation)
    if interpreter.minor not in SUPPORTED:
        raise LockError(f"{path} is Python {version}; the project supports {', '.join(SUPPORTED)}")
    return interpreter


def resolve(requested: Sequence[str]) -> list[Interpreter]:
    """The interpreters to lock for.

    With nothing requested: every supported version pyenv has, saying which are missing (LockError
    when none is found).  Each requested item is a version ("3.12", found with pyenv) or a path;
    one that cannot be found is an error, since the caller asked for it by name.
    """
    if not requested:
        found = []
        for minor in SUPPORTED:
            path = pyenv_python(minor)
            if path is None:
                print(f"lock: Python {minor} not found with pyenv, skipped", file=sys.stderr)
            else:
                found.append(probe(path))
        if not found:
            raise LockError(
                f"no Python {', '.join(SUPPORTED)} found with pyenv; pass --python PATH"
            )
        return found
    interpreters = []
    for item in requested:
        if VERSION_RE.match(item):
            if item not in SUPPORTED:
                raise LockError(f"Python {item}: the project supports {', '.join(SUPPORTED)}")
            path = pyenv_python(item)
            if path is None:
                raise LockError(
                    f"Python {item} not found with pyenv (`pyenv install {item}`), "
                    "or pass --python PATH"
                )
        else:
            path = Path(item).expanduser()
            if not path.exists():
                raise LockError(f"no Python at {path}")
        interpreters.append(probe(path))
    return interpreters


def run(command: Sequence[str | Path], what: str) -> str:
    """Run a command, returning its stdout; LockError naming `what` when it fails.

    pip's own messages (stderr) pass through, so a failed install shows pip's reason above our
    one-line summary.
    """
    done = subprocess.run(
        [str(part) for part in command], stdout=subprocess.PIPE, text=True, check=False
    )
    if done.returncode != 0:
        raise LockError(f"{what} failed (exit {done.returncode}); pip's message is above")
    return done.stdout


def freeze(interpreter: Interpreter) -> tuple[str, str]:
    """Install `.[dev]` (newest releases) into a fresh venv; return (pip freeze, pip version)."""
    with tempfile.TemporaryDirectory(prefix="planner-lock-") as tmp:
        venv = Path(tmp) / "venv"
        label = f"Python {interpreter.version}"
        run([interpreter.path, "-m", "venv", venv], f"making a venv with {label}")
        python = venv / "bin" / "python"
        pip: list[str | Path] = [python, "-m", "pip", "--disable-pip-version-check"]
        run([*pip, "install", "--quiet", "--upgrade", "pip"], f"upgrading pip on {label}")
        run(
            [*pip, "install", "--quiet", "-e", f"{ROOT}[dev]"],
            f"pip install -e '.[dev]' on {label}",
        )
        frozen = run([*pip, "freeze", "--exclude-editable"], f"pip freeze on {label}")
        pip_version = run([*pip, "--version"], f"pip --version on {label}").split()[1]
    return frozen, pip_version


def render(interpreter: Interpreter, frozen: str, pip_version: str, now: datetime) -> str:
    """The lock file's text: the header, then the pins, sorted case-insensitively."""
    pins = sorted(
        (
            line.strip()
            for line in frozen.splitlines()
            # The project itself never belongs in its own lock, however pip spells it.
            if line.strip()
            and not line.startswith(("#", "-e "))
            and not re.match(r"^planner\s*(==|@)", line, re.IGNORECASE)
        ),
        key=str.lower,
    )
    command = f"python scripts/lock_requirements.py --python {interpreter.minor}"
    header = [
        "# Generated by scripts/lock_requirements.py: do not edit by hand.",
        f"# Regenerate with: {command}",
        f"# Generated {now.strftime('%Y-%m-%dT%H:%M:%SZ')} with {interpreter.implementation} "
        f"{interpreter.version} ({interpreter.path}), pip {pip_version}, "
        f"on {platform.system()} {platform.machine()}.",
        "# The newest releases of `pip install -e '.[dev]'` that day; .ci/run installs with",
        f"# `pip install -c requirements/lock-py{interpreter.minor}.txt -e '.[dev]'`.",
    ]
    return "\n".join([*header, *pins]) + "\n"


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` so a reader sees the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0] if __doc__ else None,
        epilog=f"Run from anywhere; it installs {ROOT} and writes {ROOT / 'requirements'}.",
    )
    parser.add_argument(
        "--python",
        action="append",
        default=[],
        metavar="VERSION|PATH",
        help="a version such as 3.12 (found with pyenv) or an interpreter's path; repeatable "
        "(default: every one of 3.10-3.13 that pyenv has)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=ROOT / "requirements",
        help="folder for the lock files (default: requirements/)",
    )
    args = parser.parse_args(argv)
    try:
        interpreters = resolve(args.python)
    except LockError as e:
        print(f"lock: {e}", file=sys.stderr)
        return 2
    failed = []
    for interpreter in interpreters:
        target = args.out / f"lock-py{interpreter.minor}.txt"
        print(
            f"lock: Python {interpreter.version} ({interpreter.path}): installing .[dev] ...",
            file=sys.stderr,
        )
        try:
            frozen, pip_version = freeze(interpreter)
        except LockError as e:
            print(f"lock: {e}", file=sys.stderr)
            failed.append(interpreter.minor)
            continue
        text = render(interpreter, frozen, pip_version, datetime.now(timezone.utc))
        write_atomic(target, text)
        count = sum(1 for line in text.splitlines() if line and not line.startswith("#"))
        shown = target.relative_to(ROOT) if target.is_relative_to(ROOT) else target
        print(f"lock: wrote {shown} ({count} pins)")
    if failed:
        print(
            f"lock: no lock written for Python {', '.join(failed)}; retry with "
            + " ".join(f"--python {shlex.quote(minor)}" for minor in failed),
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
