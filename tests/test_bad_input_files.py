"""Bad input, the file-system slice: every failure to read or write a file the user named is one
clean message naming the path (or ``PLANNER_DATA_DIR``) and what to do, with a non-zero exit and
no traceback, on the command line and in the library alike.

The product rules each test pins:

- an unusable data folder (a name too long, a file where a folder should be, no permission) is an
  error naming ``PLANNER_DATA_DIR``, never silently skipped and never an ``OSError``;
- a report that cannot be written (missing or read-only folder, a full disk, a name too long)
  says which path and the fix, before the work where it can;
- a workload, hardware, budget or price-list path is read by one bounded reader: a pipe
  (``<(cat w.yaml)``) works, ``/dev/zero`` is refused by the size limit, a name too long is a
  ``ConfigError``;
- stdout that cannot be written (``> /dev/full``) is one line on stderr and exit 1; a reader
  that goes away (``| head``) ends the command quietly with exit 1 (click's rule: Python ignores
  SIGPIPE, so no signal ends the process and 141 would be a fiction).

Tests run in-process through click's CliRunner except where the real stdout matters (a full
device, a closed pipe, a shell's process substitution): those run ``python -m planner``.
Running as root makes ``chmod`` toothless, so permission failures are simulated by making the
one system call fail; a real-``chmod`` variant runs when the tests are not root.
"""

from __future__ import annotations

import errno
import os
import pathlib
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import planner
from planner.catalog.refresh import refresh_prices
from planner.catalog.store import ensure_writable, list_snapshots
from planner.cli import main
from planner.config import yamlfile
from planner.errors import ConfigError, PlannerError, SnapshotError

ROOT = Path(__file__).resolve().parent.parent
HARDWARE = str(ROOT / "scenarios" / "hardware" / "8xh100-hgx.yaml")
BUDGET = str(ROOT / "scenarios" / "budgets" / "2027-ml-platform.yaml")
WORKLOAD = str(ROOT / "scenarios" / "workloads" / "gpt2-xl-finetune.yaml")
LONG = "a" * 300  # one path component past NAME_MAX (255): ENAMETOOLONG on every file system
HAS_DEV_FULL = Path("/dev/full").exists()


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env)


def assert_clean_error(result: Result, *needles: str) -> None:
    """Non-zero exit, no traceback, no escaped exception, every needle in the output
    (case-insensitive)."""
    text = result.output
    assert result.exit_code not in (0, None), text
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"escaped {type(result.exception).__name__}: {result.exception}"
    )
    assert "Traceback" not in text
    assert "error:" in text
    for needle in needles:
        assert needle.lower() in text.lower(), f"{needle!r} not in:\n{text}"


def run_planner(*args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "planner", *args], cwd=ROOT, text=True, timeout=180, **kwargs
    )


def assert_quiet_stderr(stderr: str) -> None:
    assert "Traceback" not in stderr
    assert "Exception ignored" not in stderr


def _fail_stat_for(monkeypatch: pytest.MonkeyPatch, target: Path, code: int = errno.EACCES) -> None:
    """Make ``target.stat()`` fail as a folder the user cannot search would (root ignores chmod)."""
    real_stat = pathlib.Path.stat

    def stat(self: Path, *args: Any, **kwargs: Any) -> os.stat_result:
        if Path(self) == target:
            raise OSError(code, os.strerror(code), str(self))
        return real_stat(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "stat", stat)


# --- 1. the data folder (PLANNER_DATA_DIR) ------------------------------------------------------


def _long_data_dir(tmp_path: Path) -> Path:
    return tmp_path / LONG


def _data_dir_under_a_file(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("a file, not a folder\n")
    return tmp_path / "notes.txt" / "planner"


def _data_dir_whose_snapshots_is_a_file(tmp_path: Path) -> Path:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "snapshots").write_text("a file where the snapshot folder goes\n")
    return tmp_path / "data"


BAD_DATA_DIRS: list[tuple[Callable[[Path], Path], str]] = [
    # OSError: [Errno 36] File name too long, from root.is_dir() in list_snapshots
    (_long_data_dir, "too long"),
    # Path.is_dir() swallowed ENOTDIR: the user's setting was silently ignored
    (_data_dir_under_a_file, "part of that path is a file"),
    # a file named snapshots: also silently ignored before
    (_data_dir_whose_snapshots_is_a_file, "it is a file, not a folder"),
]
DATA_COMMANDS = [
    ("offers",),
    ("gpus",),
    ("prices", "status"),
    ("tco", "--hardware", HARDWARE),
    ("quote", "--workload", "gpt2-xl-finetune", "--deadline", "24h"),
]


@pytest.mark.parametrize("command", DATA_COMMANDS, ids=lambda c: c[0] + "-" + c[-1][-8:])
@pytest.mark.parametrize(
    ("make_dir", "reason"), BAD_DATA_DIRS, ids=["too-long", "under-a-file", "snapshots-is-a-file"]
)
def test_an_unusable_data_dir_is_named_with_the_fix(
    tmp_path: Path, command: tuple[str, ...], make_dir: Callable[[Path], Path], reason: str
) -> None:
    data_dir = make_dir(tmp_path)
    result = invoke(*command, env={"PLANNER_DATA_DIR": str(data_dir)})
    assert_clean_error(
        result, "PLANNER_DATA_DIR=", "cannot be used", reason, "set PLANNER_DATA_DIR to a folder"
    )
    assert str(tmp_path) in result.output  # the path itself, shortened in the middle if long


def test_a_data_dir_that_cannot_be_read_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # EACCES from a parent folder without search permission (simulated: root ignores chmod)
    data_dir = tmp_path / "locked" / "planner"
    monkeypatch.setenv("PLANNER_DATA_DIR", str(data_dir))
    _fail_stat_for(monkeypatch, data_dir / "snapshots")
    result = invoke("offers")
    assert_clean_error(
        result, f"PLANNER_DATA_DIR={data_dir}", "no permission to read it", "set PLANNER_DATA_DIR"
    )


def test_a_data_dir_not_made_yet_is_simply_empty(tmp_path: Path) -> None:
    # guard: the usual first run (nothing refreshed yet) must stay quiet and work
    assert list_snapshots(tmp_path / "new" / "snapshots") == []
    result = invoke("offers", "--limit", "1", env={"PLANNER_DATA_DIR": str(tmp_path / "new")})
    assert result.exit_code == 0, result.output


def test_the_library_raises_a_snapshot_error_for_an_unusable_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANNER_DATA_DIR", str(_data_dir_under_a_file(tmp_path)))
    with pytest.raises(SnapshotError) as info:
        planner.offers()
    assert "PLANNER_DATA_DIR=" in str(info.value)
    assert info.value.hint and "set PLANNER_DATA_DIR" in info.value.hint


@pytest.mark.parametrize(
    "make_dir", [_long_data_dir, _data_dir_under_a_file], ids=["too-long", "under-a-file"]
)
def test_writing_a_snapshot_to_an_unusable_data_dir_says_what_to_do(
    tmp_path: Path, make_dir: Callable[[Path], Path]
) -> None:
    # the library's write path: a refresh checks the folder before minutes of fetching
    root = make_dir(tmp_path) / "snapshots"
    with pytest.raises(SnapshotError) as info:
        refresh_prices({}, {}, root=root)
    assert str(tmp_path) in str(info.value)
    assert "snapshots already there are unchanged" in str(info.value)
    assert info.value.hint and "PLANNER_DATA_DIR" in info.value.hint
    with pytest.raises(SnapshotError):
        ensure_writable(root)


# --- 2. report files (--report, -o) -------------------------------------------------------------


def _missing_folder(tmp_path: Path) -> tuple[Path, tuple[str, ...]]:
    return tmp_path / "nonexistent" / "dir" / "t.md", ("does not exist", "create the folder")


def _folder_is_a_file(tmp_path: Path) -> tuple[Path, tuple[str, ...]]:
    (tmp_path / "notes.txt").write_text("x\n")
    return tmp_path / "notes.txt" / "t.md", ("is a file, not a folder", "choose another path")


def _file_name_too_long(tmp_path: Path) -> tuple[Path, tuple[str, ...]]:
    return tmp_path / f"{LONG}.md", ("File name too long", "choose a shorter file name")


def _folder_name_too_long(tmp_path: Path) -> tuple[Path, tuple[str, ...]]:
    # OSError escaped check_writable's directory.is_dir()
    return tmp_path / LONG / "t.md", ("File name too long", "choose a shorter file name")


REPORT_TARGETS = [_missing_folder, _folder_is_a_file, _file_name_too_long, _folder_name_too_long]
REPORT_COMMANDS: list[tuple[tuple[str, ...], str]] = [
    (("tco", "--hardware", HARDWARE), "--report"),
    (("budget", BUDGET), "--report"),
    (("quote", "--workload", "gpt2-xl-finetune", "--deadline", "24h"), "--report"),
    (("report", "tco", "--hardware", "8xh100-hgx", "--format", "markdown"), "--output"),
]


@pytest.mark.parametrize(
    ("command", "option"), REPORT_COMMANDS, ids=["tco", "budget", "quote", "report-tco"]
)
@pytest.mark.parametrize(
    "target", REPORT_TARGETS, ids=["missing-folder", "under-a-file", "long-name", "long-folder"]
)
def test_an_unwritable_report_path_is_refused_before_the_work(
    tmp_path: Path,
    command: tuple[str, ...],
    option: str,
    target: Callable[[Path], tuple[Path, tuple[str, ...]]],
) -> None:
    path, needles = target(tmp_path)
    result = invoke(*command, option, str(path))
    assert_clean_error(result, option, "cannot write the report to", *needles)
    assert result.exit_code == 2  # bad input, caught before any work
    assert str(tmp_path) in result.output
    assert "report written" not in result.output


def test_a_read_only_report_folder_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # simulated: root may write anywhere, whatever the folder's mode
    real_access = os.access
    monkeypatch.setattr(
        os, "access", lambda p, mode, **kw: False if Path(p) == tmp_path else real_access(p, mode)
    )
    result = invoke("tco", "--hardware", HARDWARE, "--report", str(tmp_path / "t.md"))
    assert_clean_error(result, str(tmp_path), "no permission", "choose a folder you can write to")


@pytest.mark.parametrize(
    ("code", "fix"),
    [
        (errno.ENOSPC, "free some space"),
        (errno.EDQUOT, "within your quota"),
        (errno.EROFS, "read-only"),
        (errno.EACCES, "choose a folder you can write to"),
    ],
    ids=["disk-full", "quota", "read-only-disk", "no-permission"],
)
def test_a_report_write_that_fails_midway_names_the_path_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, fix: str
) -> None:
    from planner.cli import report_file

    def fail(text: str, path: Path) -> None:
        raise OSError(code, os.strerror(code), str(path))

    monkeypatch.setattr(report_file, "_replace_atomically", fail)
    path = tmp_path / "t.md"
    result = invoke("tco", "--hardware", HARDWARE, "--report", str(path))
    assert_clean_error(result, f"cannot write the report to {path}", os.strerror(code), fix)
    assert not path.exists()


@pytest.mark.skipif(not HAS_DEV_FULL, reason="no /dev/full on this system")
def test_a_budget_report_to_a_full_device_is_one_clean_error() -> None:
    done = run_planner(
        "report", "budget", BUDGET, "--format", "markdown", "-o", "/dev/full", capture_output=True
    )
    assert done.returncode == 1, done.stderr
    assert "cannot write the report to /dev/full: No space left on device" in done.stderr
    assert "hint: free some space" in done.stderr
    assert_quiet_stderr(done.stderr)


# --- 3. stdout: a full device, a reader that goes away -------------------------------------------

STDOUT_COMMANDS = [
    ("offers", "--format", "csv"),
    ("workloads",),
    ("report", "tco", "--hardware", "8xh100-hgx", "--format", "markdown"),
]


@pytest.mark.skipif(not HAS_DEV_FULL, reason="no /dev/full on this system")
@pytest.mark.parametrize("args", STDOUT_COMMANDS, ids=["offers-csv", "workloads", "report-md"])
def test_stdout_on_a_full_device_is_one_line_and_exit_1(args: tuple[str, ...]) -> None:
    with open("/dev/full", "w") as full:
        done = run_planner(*args, stdout=full, stderr=subprocess.PIPE)
    assert done.returncode == 1, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: cannot write the output: No space left on device"]
    assert "hint: free some space, or send the output elsewhere" in done.stderr
    assert_quiet_stderr(done.stderr)


@pytest.mark.parametrize(
    "args",
    [("offers", "--format", "csv"), ("offers", "--format", "json"), ("models",)],
    ids=["offers-csv", "offers-json", "models"],
)
def test_a_closed_pipe_ends_the_command_quietly_with_exit_1(args: tuple[str, ...]) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "planner", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader left before the first line, as `| head -0` would
    stderr = proc.stderr.read()
    code = proc.wait(timeout=180)
    assert code == 1, stderr  # documented in planner/cli/__init__.py: 1, not a signal
    assert_quiet_stderr(stderr)
    assert "error:" not in stderr  # nothing to fix: the reader chose to stop


# --- 4. reading a user's file: one bounded reader for every path ---------------------------------


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash for <(...)")
@pytest.mark.parametrize(
    ("template", "expect"),
    [
        ("estimate <(cat {workload}) --gpu H100", "Assumptions:"),
        ("tco --hardware <(cat {hardware})", "capex"),
        ("offers --limit 1 --offers <(planner_offers_csv)", "aws"),
    ],
    ids=["workload", "hardware", "offers"],
)
def test_a_pipe_works_wherever_a_file_path_is_taken(template: str, expect: str) -> None:
    py = f"{sys.executable} -m planner"
    script = (
        f"planner_offers_csv() {{ {py} offers --provider aws --format csv 2>/dev/null; }}; "
        + py
        + " "
        + template.format(workload=WORKLOAD, hardware=HARDWARE)
    )
    done = subprocess.run(
        ["bash", "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr
    assert expect.lower() in done.stdout.lower()
    assert "not found" not in done.stderr


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero on this system")
@pytest.mark.parametrize(
    ("args", "limit"),
    [
        (("estimate", "/dev/zero", "--gpu", "H100"), "a workload file is at most 1 MiB"),
        (("quote", "--workload", "/dev/zero", "--deadline", "24h"), "a workload file is at most"),
        (("tco", "--hardware", "/dev/zero"), "a hardware file is at most 1 MiB"),
        (("budget", "/dev/zero"), "a budget file is at most 1 MiB"),
        (("offers", "--offers", "/dev/zero"), "a price list (CSV) is at most 64 MiB"),
        (("tco", "--hardware", HARDWARE, "--offers", "/dev/zero"), "a price list (CSV)"),
    ],
    ids=["estimate", "quote", "tco", "budget", "offers-csv", "tco-offers-csv"],
)
def test_an_endless_file_is_refused_by_the_size_limit(args: tuple[str, ...], limit: str) -> None:
    result = invoke(*args)
    assert_clean_error(result, "/dev/zero", limit, "check that this is the right file")
    assert result.exit_code == 2


@pytest.mark.parametrize(
    "args",
    [
        ("estimate", "{long}.yaml", "--gpu", "H100"),
        ("estimate", "{bare}", "--gpu", "H100"),  # a bare name: a library lookup
        ("quote", "--workload", "{long}.yaml", "--deadline", "24h"),
        ("tco", "--hardware", "{long}.yaml"),
        ("tco", "--hardware", "{bare}"),
        ("budget", "{long}.yaml"),
        ("tco", "--hardware", HARDWARE, "--offers", "{long}.csv"),
    ],
    ids=["estimate", "estimate-name", "quote", "tco", "tco-name", "budget", "tco-offers"],
)
def test_a_path_too_long_for_the_file_system_is_a_clean_error(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    long = str(tmp_path / LONG)
    result = invoke(*(a.format(long=long, bare=LONG) for a in args))
    assert_clean_error(result, "the name is too long for the file system", "at most 255 bytes")
    assert result.exit_code == 2
    assert "aaaa...aaaa" in result.output  # the path named, shortened to fit on a screen


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("estimate", "{under}/w.yaml", "--gpu", "H100"), "workload file not found"),
        (("tco", "--hardware", "{under}/h.yaml"), "no such file"),
        (
            ("tco", "--hardware", HARDWARE, "--offers", "{under}/o.csv"),
            "part of the path is a file",
        ),
        (("estimate", "{folder}", "--gpu", "H100"), "is a directory, not a workload file"),
    ],
    ids=["workload-under-a-file", "hardware-under-a-file", "offers-under-a-file", "folder"],
)
def test_a_path_through_a_file_or_to_a_folder_says_so(
    tmp_path: Path, args: tuple[str, ...], needle: str
) -> None:
    (tmp_path / "notes.txt").write_text("x\n")
    under = str(tmp_path / "notes.txt")
    result = invoke(*(a.format(under=under, folder=str(tmp_path)) for a in args))
    assert_clean_error(result, str(tmp_path), needle)
    assert "hint:" in result.output
    assert result.exit_code == 2


def test_a_workload_file_that_cannot_be_read_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # simulated EACCES: root reads any file whatever its mode
    path = tmp_path / "w.yaml"
    path.write_text(Path(WORKLOAD).read_text())

    def refuse(file: Any, *args: Any, **kwargs: Any) -> Any:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(file))

    monkeypatch.setattr(yamlfile, "open", refuse, raising=False)
    result = invoke("estimate", str(path), "--gpu", "H100")
    assert_clean_error(result, str(path), "no permission", "check the file's permissions")


# --- the library: the same errors, as exceptions -------------------------------------------------


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda p: planner.load_workload(f"{p}/{LONG}.yaml"), "too long"),
        (lambda p: planner.estimate(f"{p}/{LONG}.yaml", "H100"), "too long"),
        (lambda p: planner.tco(f"{p}/{LONG}.yaml", with_cloud=False), "too long"),
        (lambda p: planner.budget(f"{p}/{LONG}.yaml"), "too long"),
        (lambda p: planner.offers(offers_files=[f"{p}/{LONG}.csv"]), "too long"),
        (lambda p: planner.offers(offers_files=["/dev/zero"]), "at most 64 MiB"),
        (lambda p: planner.load_workload("/dev/zero"), "at most 1 MiB"),
    ],
    ids=["load_workload", "estimate", "tco", "budget", "offers", "offers-dev-zero", "dev-zero"],
)
def test_the_library_turns_file_failures_into_config_errors(
    tmp_path: Path, call: Callable[[Path], object], needle: str
) -> None:
    with pytest.raises(ConfigError) as info:
        call(tmp_path)
    assert needle in str(info.value)
    assert info.value.hint  # a fix, not just a reason
    assert isinstance(info.value, PlannerError)
