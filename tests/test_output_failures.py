"""Writing the answer can fail too: a full disk, a closed pipe, a device named as the report.

These run the real command in a subprocess, because what matters is what the process does with
its real stdout: one clean message, a non-zero exit, no traceback and no "Exception ignored" at
interpreter exit, and never a device file replaced by a report.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HAS_DEV_FULL = Path("/dev/full").exists()


def _planner(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "planner", *args],
        cwd=ROOT,
        text=True,
        timeout=120,
        **kwargs,
    )


def _assert_no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr
    assert "Exception ignored" not in stderr


@pytest.mark.skipif(not HAS_DEV_FULL, reason="no /dev/full on this system")
@pytest.mark.parametrize(
    "args",
    [
        ("offers", "--format", "csv"),
        ("quote", "--workload", "gpt2-xl-finetune", "--deadline", "24h", "--format", "json"),
        ("estimate", "gpt2-xl-finetune", "--gpu", "H100"),
    ],
    ids=["offers-csv", "quote-json", "estimate"],
)
def test_stdout_on_a_full_disk_is_one_clean_error(args: tuple[str, ...]) -> None:
    with open("/dev/full", "w") as full:
        done = _planner(*args, stdout=full, stderr=subprocess.PIPE)
    assert done.returncode == 1, done.stderr
    assert "error: cannot write the output: No space left on device" in done.stderr
    assert "hint: free some space" in done.stderr
    _assert_no_traceback(done.stderr)


def test_a_reader_that_goes_away_ends_the_command_quietly() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "planner", "offers", "--format", "json"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(1) == "["  # the document started ...
    proc.stdout.close()  # ... and its reader left, as `| head -c 1` does
    stderr = proc.stderr.read()
    code = proc.wait(timeout=120)
    assert code >= 0, f"killed by signal {-code}"  # it ends itself; SIGPIPE is not what stops it
    _assert_no_traceback(stderr)


@pytest.mark.skipif(not HAS_DEV_FULL, reason="no /dev/full on this system")
def test_a_report_to_a_device_writes_into_it_and_never_replaces_it() -> None:
    done = _planner(
        "report", "tco", "--hardware", "8xh100-hgx", "-o", "/dev/full", capture_output=True
    )
    assert done.returncode == 1, done.stderr
    assert "cannot write the report to /dev/full: No space left on device" in done.stderr
    _assert_no_traceback(done.stderr)
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)  # still the device, not a report file


def test_a_report_to_stdout_by_name_is_printed() -> None:
    done = _planner(
        "report",
        "tco",
        "--hardware",
        "8xh100-hgx",
        "--format",
        "markdown",
        "-o",
        "/dev/stdout",
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("#") and "8xh100-hgx" in done.stdout
