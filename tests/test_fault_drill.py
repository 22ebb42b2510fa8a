"""Fault drill: a snapshot or a report is never half-written, whatever kills the writer.

Each crash is placed exactly, not by a timer: a child process counts the writer's durable steps
(every ``os.fsync`` and ``os.replace``) and SIGKILLs itself just before the k-th, for every k a
full write has.  After each death the store must hold only complete snapshots that verify, the
previous one intact, and take the next writer (the dead one's lock is gone with it).  Then many
writers and readers run at once, and a disk that is full or read-only refuses a write cleanly.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pytest

from planner.catalog import load_offer_book
from planner.catalog.store import list_snapshots, load_snapshot, write_snapshot
from planner.errors import PlannerError
from tests.conftest import offer_row

ROOT = Path(__file__).resolve().parent.parent
POSIX_ONLY = pytest.mark.skipif(os.name != "posix", reason="SIGKILL and mounts are POSIX")

# The child: arm a counter on the durable steps, then run the body with the kill armed.
_PRELUDE = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    import pandas as pd
    sys.path.insert(0, {root!r})
    from tests.conftest import offer_row
    KILL_AT = int(sys.argv[1])  # 0: never; print how many steps a full run takes
    steps = 0
    def counted(real):
        def step(*args, **kwargs):
            global steps
            steps += 1
            if steps == KILL_AT:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(*args, **kwargs)
        return step
    os.fsync = counted(os.fsync)
    os.replace = counted(os.replace)
    """
).format(root=str(ROOT))

_WRITE_SNAPSHOT = _PRELUDE + textwrap.dedent(
    """
    from planner.catalog.store import write_snapshot
    frames = {
        p: pd.DataFrame([offer_row(provider=p, price_on_demand_usd_per_hour=50.0 + i)
                         for i in range(200)]).assign(region=[f"r{i}" for i in range(200)])
        for p in ("aws", "gcp")
    }
    write_snapshot(Path(sys.argv[2]), frames, snapshot_id="s2")
    print(steps)
    """
)

# A whole `prices refresh` (fetch, merge with the previous snapshot, gates, publish) from a
# provider serving recorded rows; a unique clock second per run keeps snapshot ids apart.
_REFRESH = _PRELUDE + textwrap.dedent(
    """
    from datetime import datetime, timedelta, timezone
    from planner.catalog.refresh import refresh_prices
    from tests.provider_fakes import TableProvider, offer_row as row
    rows = {"us-east-1": [row("us-east-1", f"p4d.{i}xlarge", 30.0 + i) for i in range(40)]}
    at = datetime(2026, 11, 1, tzinfo=timezone.utc) + timedelta(seconds=int(sys.argv[3]))
    refresh_prices({"aws": TableProvider(rows)}, {"aws": ["us-east-1"]},
                   root=Path(sys.argv[2]), clock=lambda: at, force=True)
    print(steps)
    """
)

_WRITE_REPORT = _PRELUDE + textwrap.dedent(
    """
    from planner.cli import main
    main(["tco", "--hardware", "8xh100-hgx", "--no-cloud", "--report", sys.argv[2]])
    """
)


def _child(
    script: str, kill_at: int, target: Path, *extra: str, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", script, str(kill_at), str(target), *extra],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **env},
        timeout=120,
    )


def _first_snapshot(root: Path) -> None:
    """The last good snapshot: one aws offer, published before any refresh of the drill."""
    write_snapshot(
        root,
        {"aws": pd.DataFrame([offer_row()])},
        snapshot_id="s1",
        now=datetime(2026, 1, 1, tzinfo=timezone.utc),
    )


def _assert_store_whole(root: Path) -> list[str]:
    """Every listed snapshot verifies; s1 is untouched.  Returns the ids."""
    ids = [p.name for p in list_snapshots(root)]
    for name in ids:
        load_snapshot(root / name, verify=True)  # raises on a missing file or a bad checksum
    assert load_snapshot(root / "s1").offers["price_on_demand_usd_per_hour"].tolist() == [32.7726]
    return ids


@POSIX_ONLY
def test_sigkill_at_every_step_of_a_snapshot_write(tmp_path: Path) -> None:
    full = tmp_path / "full"
    _first_snapshot(full)
    done = _child(_WRITE_SNAPSHOT, 0, full)
    assert done.returncode == 0, done.stderr
    steps = int(done.stdout.strip())
    assert steps >= 5  # two files and the manifest fsynced, the directory fsynced, one rename
    outcomes = set()
    for kill_at in range(1, steps + 1):
        root = tmp_path / f"kill-{kill_at}"
        _first_snapshot(root)
        died = _child(_WRITE_SNAPSHOT, kill_at, root)
        assert died.returncode == -signal.SIGKILL, (kill_at, died.stderr)
        ids = _assert_store_whole(root)
        assert ids in (["s1"], ["s1", "s2"]), (kill_at, ids)
        outcomes.add(tuple(ids))
        # the dead writer's lock died with it: the next writer publishes at once
        write_snapshot(root, {"gcp": pd.DataFrame([offer_row(provider="gcp")])}, snapshot_id="s3")
        assert "s3" in _assert_store_whole(root)
        book = load_offer_book(roots=[root])
        assert set(book.offers["provider"]) == ({"aws", "gcp"})
    # kills before the rename leave s1 alone; only a kill after it (the last fsync) shows s2
    assert outcomes == {("s1",), ("s1", "s2")}


@POSIX_ONLY
def test_sigkill_at_every_step_of_a_refresh(tmp_path: Path) -> None:
    full = tmp_path / "full"
    _first_snapshot(full)
    done = _child(_REFRESH, 0, full, "0")
    assert done.returncode == 0, done.stderr
    steps = int(done.stdout.strip())
    for kill_at in range(1, steps + 1):
        root = tmp_path / f"kill-{kill_at}"
        _first_snapshot(root)
        died = _child(_REFRESH, kill_at, root, "0")
        assert died.returncode == -signal.SIGKILL, (kill_at, died.stderr)
        ids = _assert_store_whole(root)
        assert len(ids) in (1, 2), ids
        # both locks (refresh and store) died with the writer: the next refresh publishes
        again = _child(_REFRESH, 0, root, "1")
        assert again.returncode == 0, (kill_at, again.stderr)
        book = load_offer_book(roots=[root])
        assert len(book.offers) == 40 and book.offers["price_on_demand_usd_per_hour"].min() == 30.0


@POSIX_ONLY
def test_sigkill_while_a_report_is_written_keeps_the_old_report(tmp_path: Path) -> None:
    report = tmp_path / "tco.md"
    report.write_text("the report from last week\n", encoding="utf-8")
    died = _child(_WRITE_REPORT, 1, report)  # killed just before the report's rename
    assert died.returncode == -signal.SIGKILL, died.stderr
    assert report.read_text(encoding="utf-8") == "the report from last week\n"
    written = _child(_WRITE_REPORT, 0, report)
    assert written.returncode == 0, written.stderr
    text = report.read_text(encoding="utf-8")
    assert text.startswith("#") and "8xh100-hgx" in text
    # the dead writer's temporary file is hidden and never mistaken for the report
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith(".")] == ["tco.md"]


_WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    import pandas as pd
    sys.path.insert(0, {root!r})
    from tests.conftest import offer_row
    from planner.catalog.store import write_snapshot
    root, me = Path(sys.argv[1]), sys.argv[2]
    for i in range(3):
        rows = [offer_row(price_on_demand_usd_per_hour=10.0 + i, region=f"r{{j}}") for j in range(300)]
        write_snapshot(root, {{"aws": pd.DataFrame(rows)}}, snapshot_id=f"w{{me}}-{{i}}")
    """
).format(root=str(ROOT))

_READER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    sys.path.insert(0, {root!r})
    from planner.catalog import load_offer_book
    for _ in range(15):
        book = load_offer_book(roots=[Path(sys.argv[1])])
        prices = set(book.offers["price_on_demand_usd_per_hour"])
        assert len(prices) == 1, prices  # one snapshot's rows, never a mix of two
        assert len(book.offers) in (1, 300), len(book.offers)
    """
).format(root=str(ROOT))


@POSIX_ONLY
def test_concurrent_writers_and_readers(tmp_path: Path) -> None:
    _first_snapshot(tmp_path)
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path), str(n)], cwd=ROOT)
        for n in range(3)
    ] + [
        subprocess.Popen([sys.executable, "-c", _READER, str(tmp_path)], cwd=ROOT) for _ in range(3)
    ]
    codes = [p.wait(timeout=300) for p in procs]
    assert codes == [0] * 6
    ids = _assert_store_whole(tmp_path)
    assert len(ids) == 1 + 3 * 3


@POSIX_ONLY
def test_concurrent_refreshes_and_quotes(tmp_path: Path) -> None:
    """Three refreshes publish into the data folder while three `planner quote` processes read
    it: every process succeeds and every snapshot verifies."""
    env = {**os.environ, "PLANNER_DATA_DIR": str(tmp_path)}
    root = tmp_path / "snapshots"
    refreshes = [
        subprocess.Popen(
            [sys.executable, "-c", _REFRESH, "0", str(root), str(n)], cwd=ROOT, env=env
        )
        for n in range(3)
    ]
    quotes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "planner",
                "quote",
                "-w",
                "gpt2-xl-finetune",
                "--deadline",
                "24h",
                "--format",
                "json",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    assert [p.wait(timeout=300) for p in refreshes] == [0, 0, 0]
    for q in quotes:
        out, err = q.communicate(timeout=300)
        assert q.returncode == 0, err
        assert json.loads(out)["plans"]  # one whole document, from whole snapshots
    ids = [p.name for p in list_snapshots(root)]
    assert len(ids) == 3
    for name in ids:
        load_snapshot(root / name, verify=True)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs mounted at a temporary folder (root and a kernel that allows it)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip() or made.returncode}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _big_frames() -> dict[str, pd.DataFrame]:
    rows = [offer_row(region=f"region-{i}") for i in range(4000)]  # ~1.5 MB of CSV
    return {"aws": pd.DataFrame(rows)}


@POSIX_ONLY
def test_a_full_disk_refuses_the_snapshot_and_keeps_the_last_good_one(small_disk: Path) -> None:
    root = small_disk / "snapshots"
    _first_snapshot(root)
    with pytest.raises(PlannerError) as caught:
        write_snapshot(root, _big_frames(), snapshot_id="s2")
    message = str(caught.value)
    assert str(root) in message and "space" in message.lower(), message
    assert _assert_store_whole(root) == ["s1"]
    assert not [p for p in root.iterdir() if p.name.startswith(".tmp-")]  # the temp dir is gone


@POSIX_ONLY
def test_a_read_only_data_dir_refuses_writes_and_still_serves_reads(small_disk: Path) -> None:
    root = small_disk / "snapshots"
    _first_snapshot(root)
    remount = subprocess.run(
        ["mount", "-o", "remount,ro", str(small_disk)], capture_output=True, text=True
    )
    if remount.returncode != 0:
        pytest.skip(f"cannot remount read-only here: {remount.stderr.strip()}")
    with pytest.raises(PlannerError) as caught:
        write_snapshot(root, {"aws": pd.DataFrame([offer_row()])}, snapshot_id="s2")
    message = str(caught.value)
    assert str(root) in message and "read-only" in message.lower(), message
    assert _assert_store_whole(root) == ["s1"]
    assert len(load_offer_book(roots=[root]).offers) == 1
