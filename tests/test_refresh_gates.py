"""Issue 13, "gates that hold": a refresh refuses zero, vanished and wildly moved prices unless
the user accepts each change; the lock and the folder check come before any network work; a full
or read-only disk is a one-line error that keeps the last good snapshot; stale-price advice follows
the adapter registry; `prices status` shows the snapshot's notes.

Everything runs through the real CLI and the real store in a temporary data folder; providers are
faked at the adapter interface only (:class:`tests.provider_fakes.TableProvider`).
"""

from __future__ import annotations

import errno
import json
import os
import threading
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner, Result
from filelock import FileLock, Timeout

from planner.catalog import load_offer_book
from planner.catalog.gates import Gates, accept_patterns, check_gates, judge
from planner.catalog.refresh import (
    DIFF_COLUMNS,
    REFRESH_LOCK,
    diff_offers,
    refresh_advice,
    refresh_prices,
)
from planner.catalog.store import (
    LOCK,
    list_snapshots,
    load_snapshot,
    locked,
    read_manifest,
    remove_leftovers,
    write_snapshot,
)
from planner.cli import main
from planner.errors import ConfigError, SnapshotError, UnknownNameError
from planner.providers import DEFAULT_REGIONS, PROVIDERS
from planner.providers.base import FetchResult, Provider
from planner.schema import validate_offers
from tests.provider_fakes import TableProvider, offer_row

NOW = datetime.now(timezone.utc).replace(microsecond=0)
SPOT = "price_spot_usd_per_hour"


def _row(
    region: str, instance: str, price: float, spot: float | None = None, **kw: Any
) -> dict[str, Any]:
    row = offer_row(region, instance, price, as_of=NOW.date().isoformat(), **kw)
    if spot is not None:
        row[SPOT] = spot
    return row


# The last good prices: two T4 and one A100 offer in us-east-1, with spot prices.
GOOD = [
    _row("us-east-1", "g4dn.xlarge", 0.526, 0.2, gpu_model="T4", gpu_count=1),
    _row("us-east-1", "g4dn.12xlarge", 3.912, 1.5, gpu_model="T4", gpu_count=4),
    _row("us-east-1", "p4d.24xlarge", 32.77, 12.0),
]


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return validate_offers(pd.DataFrame.from_records(rows))


def _changed(**prices: dict[str, float | None]) -> list[dict[str, Any]]:
    """GOOD with some columns of some instances changed: ``g4dn_xlarge={SPOT: None}``."""
    rows = []
    for row in GOOD:
        new = dict(row)
        for column, value in prices.get(row["instance_type"].replace(".", "_"), {}).items():
            new[column] = float("nan") if value is None else value
        rows.append(new)
    return rows


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's snapshot folder holding the last good snapshot (newer than the bundled one)."""
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path))
    root = tmp_path / "snapshots"
    write_snapshot(root, {"aws": _frame(GOOD)}, snapshot_id="last-good", now=NOW)
    return root


def _serve(monkeypatch: pytest.MonkeyPatch, rows: list[dict[str, Any]], **kw: Any) -> list[str]:
    """Register a fake aws adapter serving ``rows``; returns the list its fetches are logged in."""
    fetched: list[str] = []

    def build() -> Provider:
        provider = TableProvider({"us-east-1": rows}, **kw)
        inner = provider.fetch

        def fetch(regions: Any) -> FetchResult:
            fetched.extend(regions)
            return inner(regions)

        provider.fetch = fetch
        return provider

    monkeypatch.setitem(PROVIDERS, "aws", build)
    return fetched


def _refresh(*args: str) -> Result:
    return CliRunner().invoke(
        main, ["prices", "refresh", "--provider", "aws", "--region", "us-east-1", *args]
    )


def _aws_prices() -> pd.Series:
    """The on-demand prices planning uses for aws, by instance type."""
    offers = load_offer_book().offers
    aws = offers[offers["provider"] == "aws"]
    return aws.set_index("instance_type")["price_on_demand_usd_per_hour"]


def _error_lines(out: Result) -> list[str]:
    return [line for line in out.stderr.splitlines() if line.startswith("error: ")]


# ---------------------------------------------------------------- the gates, through the CLI


def test_issue_13_a_price_that_rounds_to_zero_is_refused(
    user_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the report: a faked provider drops a price to $0.0000004 and `planner quote` then offered
    # "64 x T4 for $0.00"
    _serve(monkeypatch, _changed(g4dn_xlarge={"price_on_demand_usd_per_hour": 0.0000004}))
    out = _refresh()
    assert out.exit_code == 1
    assert "Traceback" not in out.output
    (error,) = _error_lines(out)
    assert (
        "aws us-east-1 g4dn.xlarge price_on_demand_usd_per_hour: new price 4e-07 rounds to $0 at"
        " 4 decimals; accept with --accept-changes aws:us-east-1:g4dn.xlarge" in error
    )
    assert list_snapshots(user_dir) == [user_dir / "last-good"]
    assert _aws_prices()["g4dn.xlarge"] == 0.526  # planning still uses the last good price


@pytest.mark.parametrize(
    "price",
    [
        0.0,  # zero
        0.00004,  # rounds to 0.0000
        0.0000004,  # the issue's value
    ],
)
def test_zero_gate_on_a_new_offer_with_no_previous_price(price: float) -> None:
    new = _frame([*GOOD, _row("us-east-1", "g6.xlarge", price, gpu_model="L4", gpu_count=1)])
    (finding,) = check_gates(_frame(GOOD), new, ["us-east-1"], provider="aws")
    assert (finding.gate, finding.instance_type, finding.old) == ("zero-price", "g6.xlarge", None)


def test_every_spot_price_vanishing_is_refused_and_can_be_accepted_per_column(
    user_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = {SPOT: None}
    _serve(monkeypatch, _changed(g4dn_xlarge=gone, g4dn_12xlarge=gone, p4d_24xlarge=gone))
    out = _refresh()
    assert out.exit_code == 1
    (error,) = _error_lines(out)
    assert "(3 change(s))" in error
    assert (
        "aws us-east-1 p4d.24xlarge price_spot_usd_per_hour: vanished (was 12; the instance is"
        " still listed); accept with --accept-changes aws:us-east-1:p4d.24xlarge" in error
    )
    assert list_snapshots(user_dir) == [user_dir / "last-good"]

    # accepting the on-demand column does not accept vanished spot prices
    assert _refresh("--accept-changes", "aws:us-east-1:*:on-demand").exit_code == 1
    out = _refresh("--accept-changes", "aws:*:*:spot", "--format", "json")
    assert out.exit_code == 0, out.output
    assert out.stderr.count("warning: published as accepted:") == 3
    assert "accept with" not in out.stderr  # accepted already: no invitation to accept them
    (published,) = json.loads(out.stdout)
    snapshot = user_dir / published["snapshot"]
    assert load_snapshot(snapshot).offers[SPOT].isna().all()
    assert "accepted 3 gate finding(s) (3 by aws:*:*:spot)" in read_manifest(snapshot).notes


def test_a_move_beyond_the_factor_is_accepted_only_by_its_own_id(
    user_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _serve(monkeypatch, _changed(p4d_24xlarge={"price_on_demand_usd_per_hour": 327.7}))
    out = _refresh("--accept-changes", "aws:us-east-1:g4dn.*")  # another instance's id
    assert out.exit_code == 1
    assert "moved from 32.77 to 327.7 (x10; the gate allows x3 either way)" in out.stderr
    assert "--accept-changes aws:us-east-1:g4dn.* matched no refused change" not in out.stderr
    out = _refresh("--accept-changes", "aws:us-east-1:p4d.24xlarge,aws:eu-west-1")
    assert out.exit_code == 0, out.output
    assert "note: --accept-changes aws:eu-west-1 matched no refused change" in out.stderr
    assert len(list_snapshots(user_dir)) == 2


def test_row_drop_is_accepted_by_the_region(
    user_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _serve(monkeypatch, GOOD[:1])  # 3 rows -> 1
    out = _refresh()
    assert out.exit_code == 1
    assert "aws us-east-1: row count fell from 3 to 1 (more than 50%); accept with" in out.stderr
    assert _refresh("--accept-changes", "aws:us-east-1:g4dn.xlarge").exit_code == 1  # not a row
    assert _refresh("--accept-changes", "aws:us-east-1").exit_code == 0


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("aws:us-east-1:p5.48xlarge:spotty", "unknown price 'spotty'"),  # a typo in the column
        ("awz:us-east-1", "unknown provider 'awz'"),
        ("aws::p5.48xlarge", "is not a change id"),  # an empty part
        ("a:b:c:d:e", "is not a change id"),  # too many parts
    ],
)
def test_bad_accept_patterns_are_refused_before_any_fetch(
    value: str, message: str, user_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fetched = _serve(monkeypatch, GOOD)
    out = _refresh("--accept-changes", value)
    assert out.exit_code == 2
    (error,) = _error_lines(out)
    assert error.startswith("error: --accept-changes: ") and message in error
    assert fetched == []


def test_judge_marks_what_accepted_each_finding_and_force_takes_the_rest() -> None:
    new = _frame(_changed(g4dn_xlarge={SPOT: None}, p4d_24xlarge={SPOT: 100.0}))
    findings = check_gates(_frame(GOOD), new, ["us-east-1"], Gates(), provider="aws")
    assert sorted(f.gate for f in findings) == ["moved", "vanished"]
    patterns = accept_patterns(["aws:*:g4dn.*", "gcp"], PROVIDERS)
    judged, unused = judge(findings, patterns, force=True)
    by = {f.instance_type: f.accepted_by for f in judged}
    assert by == {"g4dn.xlarge": "aws:*:g4dn.*", "p4d.24xlarge": "--force"}
    assert unused == ["gcp"]
    with pytest.raises(ConfigError):
        accept_patterns(["aws:us-east-1:x:y:z"], PROVIDERS)


# ---------------------------------------------------------------- the dry run


def test_dry_run_shows_the_changes_and_the_gates_and_writes_nothing(
    user_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _serve(
        monkeypatch,
        _changed(
            g4dn_xlarge={"price_on_demand_usd_per_hour": 0.0000004},
            g4dn_12xlarge={SPOT: None},
            p4d_24xlarge={"price_on_demand_usd_per_hour": 30.0},  # -8.5%: a change, no gate
        ),
    )
    before = sorted(p.name for p in user_dir.iterdir())
    out = _refresh("--dry-run", "--format", "json")
    assert out.exit_code == 1  # a refresh would refuse
    document = json.loads(out.stdout)
    assert document["would_publish"] is False
    gates = {(g["gate"], g["instance_type"]): g for g in document["gates"]}
    assert set(gates) == {("zero-price", "g4dn.xlarge"), ("vanished", "g4dn.12xlarge")}
    assert gates[("vanished", "g4dn.12xlarge")]["accept_with"] == (
        "--accept-changes aws:us-east-1:g4dn.12xlarge"
    )
    changes = {(c["instance_type"], c["price"]): c for c in document["changes"]}
    assert changes[("p4d.24xlarge", "on-demand")]["change_pct"] == pytest.approx(-8.45, abs=0.01)
    assert changes[("g4dn.12xlarge", "spot")]["new"] is None  # a vanished price is a change
    assert "dry run: a refresh would refuse to publish (2 change(s) not accepted)" in out.stderr
    assert sorted(p.name for p in user_dir.iterdir()) == before  # nothing written

    out = _refresh("--dry-run", "--accept-changes", "aws:us-east-1:g4dn.*")
    assert out.exit_code == 0, out.output
    assert (
        "gate zero-price accepted by aws:us-east-1:g4dn.*: aws us-east-1 g4dn.xlarge" in out.stdout
    )
    assert "dry run: a refresh would publish this; nothing was written" in out.stderr
    assert sorted(p.name for p in user_dir.iterdir()) == before


def test_a_dry_run_without_changes_writes_a_csv_of_the_header(
    user_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # was: nothing at all on stdout, where prices diff writes the header alone
    _serve(monkeypatch, GOOD)
    out = _refresh("--dry-run", "--format", "csv")
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines() == [",".join(DIFF_COLUMNS)]


def test_diff_offers_lists_a_vanished_price() -> None:
    new = _frame(_changed(g4dn_xlarge={SPOT: None}))
    (change,) = diff_offers(_frame(GOOD), new)
    assert (change["instance_type"], change["price"], change["old"], change["new"]) == (
        "g4dn.xlarge",
        "spot",
        0.2,
        None,
    )


# ---------------------------------------------------------------- order, lock, file system


def test_the_lock_is_held_and_leftovers_are_gone_before_the_first_fetch(user_dir: Path) -> None:
    leftover = user_dir / ".tmp-2025-06-02T090000Z-aws-k1ll3d"
    leftover.mkdir()
    (leftover / "offers-aws.csv").write_text("half a file")
    (user_dir / ".write-check-dead").write_text("")
    seen: list[str] = []

    def at_fetch() -> None:
        try:
            FileLock(user_dir / REFRESH_LOCK, timeout=0).acquire()
            seen.append("lock was free")
        except Timeout:
            seen.append("lock held")
        seen.append("leftover there" if leftover.exists() else "leftover removed")
        seen.append("probe there" if (user_dir / ".write-check-dead").exists() else "probe removed")

    provider = TableProvider({"us-east-1": GOOD}, before_fetch=at_fetch)
    refresh_prices({"aws": provider}, {"aws": ["us-east-1"]}, root=user_dir)
    assert seen == ["lock held", "leftover removed", "probe removed"]


def test_a_live_writers_temporary_folder_is_not_removed(tmp_path: Path) -> None:
    """A temporary folder exists only while its writer holds the store's lock: the sweep waits."""
    tmp_path.mkdir(exist_ok=True)
    live = tmp_path / ".tmp-live-writer"
    holding, sweeping = threading.Event(), threading.Event()
    seen: list[bool] = []

    def writer() -> None:
        with locked(tmp_path, LOCK):
            live.mkdir()
            holding.set()
            sweeping.wait(5)
            threading.Event().wait(0.3)  # the sweep is waiting on the lock meanwhile
            seen.append(live.exists())
            live.rename(tmp_path / "published")

    thread = threading.Thread(target=writer)
    thread.start()
    holding.wait(5)
    sweeping.set()
    removed = remove_leftovers(tmp_path)
    thread.join(5)
    assert seen == [True] and removed == []
    assert (tmp_path / "published").is_dir()


def _refuse_writes_under(root: Path, code: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The OS refuses to create anything under ``root`` (``code``: EROFS, ENOSPC)."""
    real_open, real_mkdir = os.open, os.mkdir

    def refusing_open(path: Any, flags: int, *args: Any, **kw: Any) -> int:
        if flags & os.O_CREAT and str(path).startswith(str(root)):
            raise OSError(code, os.strerror(code), str(path))
        return real_open(path, flags, *args, **kw)

    def refusing_mkdir(path: Any, *args: Any, **kw: Any) -> None:
        if str(path).startswith(str(root)):
            raise OSError(code, os.strerror(code), str(path))
        real_mkdir(path, *args, **kw)

    monkeypatch.setattr(os, "open", refusing_open)
    monkeypatch.setattr(os, "mkdir", refusing_mkdir)


@pytest.mark.parametrize(
    ("code", "reason"),
    [(errno.EROFS, "the disk is read-only"), (errno.ENOSPC, "no space left on the disk")],
)
def test_an_unwritable_data_folder_fails_before_any_fetch(
    code: int, reason: str, user_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fetched = _serve(monkeypatch, GOOD)
    with pytest.MonkeyPatch.context() as os_boundary:
        _refuse_writes_under(user_dir, code, os_boundary)
        out = _refresh()
    assert out.exit_code == 1
    assert "Traceback" not in out.output
    (error,) = _error_lines(out)
    assert reason in error and "the snapshots already there are unchanged" in error
    assert fetched == []  # no network work for a folder that cannot take the result
    assert _aws_prices()["p4d.24xlarge"] == 32.77  # the last good snapshot still plans


@pytest.mark.parametrize("step", ["fsync", "replace"])
def test_a_disk_that_fills_during_the_write_is_a_one_line_error(
    step: str, user_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _serve(monkeypatch, _changed(p4d_24xlarge={"price_on_demand_usd_per_hour": 30.0}))
    real: Callable[..., Any] = getattr(os, step)

    def full(*args: Any, **kw: Any) -> Any:
        if step == "fsync" or ".tmp-" in str(args[0]):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(*args, **kw)

    with pytest.MonkeyPatch.context() as os_boundary:
        os_boundary.setattr(os, step, full)
        out = _refresh()
    assert out.exit_code == 1
    assert "Traceback" not in out.output
    (error,) = _error_lines(out)
    assert "no space left on the disk; the snapshots already there are unchanged" in error
    assert list_snapshots(user_dir) == [user_dir / "last-good"]
    load_snapshot(user_dir / "last-good")  # whole and verified
    assert not [p for p in user_dir.iterdir() if p.name.startswith(".tmp-")]


# ---------------------------------------------------------------- failures in the summary


class _Broken(Provider):
    """An adapter with a bug: it raises something that is not a PlannerError."""

    name = "gcp"

    def fetch(self, regions: Any) -> FetchResult:
        raise KeyError("machineTypes")


def test_refresh_of_everything_never_prints_a_traceback(
    user_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for other in set(PROVIDERS) - {"aws", "gcp"}:
        monkeypatch.delitem(PROVIDERS, other)
    monkeypatch.setitem(
        PROVIDERS, "aws", lambda: TableProvider({"us-east-1": GOOD, "us-west-2": []})
    )
    monkeypatch.setitem(PROVIDERS, "gcp", _Broken)
    monkeypatch.setitem(DEFAULT_REGIONS, "aws", ("us-east-1",))
    out = CliRunner().invoke(main, ["prices", "refresh"])
    assert out.exit_code == 1
    assert isinstance(out.exception, SystemExit)
    assert "Traceback" not in out.output
    (error,) = _error_lines(out)
    assert "gcp us-central1, us-east4: unexpected KeyError in the gcp adapter" in error
    assert "`planner -vv prices refresh --provider gcp` shows the traceback" in out.stderr
    out = CliRunner().invoke(main, ["prices", "refresh", "--allow-partial", "--format", "json"])
    assert out.exit_code == 0, out.output
    assert [p["provider"] for p in json.loads(out.stdout)] == ["aws"]
    assert "warning: gcp us-central1 not refreshed (unexpected KeyError" in out.stderr


# ---------------------------------------------------------------- advice and notes


def test_stale_advice_follows_the_adapter_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = (NOW - timedelta(days=400)).date().isoformat()
    rows = [
        offer_row("us-east-1", "p4d.24xlarge", 32.77, as_of=old),
        offer_row("us-east-1", "gpu_8x_a100", 14.32, as_of=old, provider="coreweave"),
    ]
    prices = tmp_path / "private.csv"
    pd.DataFrame.from_records(rows).to_csv(prices, index=False)
    book = load_offer_book([prices], roots=[])
    warnings = book.stale_warnings(90)
    (aws,) = [w for w in warnings if w.startswith("aws ")]
    (coreweave,) = [w for w in warnings if w.startswith("coreweave ")]
    # a user's own price list is theirs to update, whatever adapters there are
    for warning in (aws, coreweave):
        assert warning.endswith(
            f"they come from your price list {prices}: update its prices and its as_of column"
        )
    # the snapshots' prices: the refresh where an adapter is registered
    assert refresh_advice("aws") == (
        "refresh with `planner prices refresh --provider aws` before relying on them"
    )
    assert refresh_advice("coreweave") == (
        "planner has no refresh adapter for coreweave: its prices come only with a new planner"
        " release (the bundled snapshot)"
    )
    # looked up when the warning is made: an adapter registered later changes the advice
    monkeypatch.setitem(PROVIDERS, "coreweave", lambda: TableProvider({}, name="coreweave"))
    assert "planner prices refresh --provider coreweave" in refresh_advice("coreweave")


def test_status_shows_each_providers_notes_under_its_line(
    user_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    note = "dated by 3 public prices it matches; " * 6  # longer than a terminal line
    write_snapshot(
        user_dir,
        {"aws": _frame(GOOD)},
        snapshot_id="noted",
        provider_notes={"aws": note.strip()},
        notes="built for the status test",
        now=NOW + timedelta(seconds=1),
    )
    out = CliRunner().invoke(main, ["prices", "status"])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    (aws_line,) = [i for i, line in enumerate(lines) if line.startswith("aws ")]
    assert lines[aws_line + 1].startswith("    notes: dated by 3 public prices it matches;")
    notes = [line for line in lines if line.startswith("    ")]
    assert any(line.startswith("      ") for line in notes)  # wrapped, indented under the first
    assert all(len(line) <= 120 for line in notes)
    assert "noted: built for the status test" in out.stdout
    out = CliRunner().invoke(main, ["prices", "status", "--format", "json"])
    (aws,) = [r for r in json.loads(out.stdout) if r["provider"] == "aws"]
    assert aws["notes"] == note.strip()
    assert (aws["snapshot_notes"], aws["as_of_basis"]) == ("built for the status test", "fetched")
    bundled = [r for r in json.loads(out.stdout) if r["location"] == "bundled"]
    assert bundled and all(r["notes"] for r in bundled)  # the bundled manifest's own notes


def test_refresh_refuses_in_the_library_too(user_dir: Path) -> None:
    """The library raises what the CLI shows (a notebook user gets the same gate)."""
    provider = TableProvider({"us-east-1": _changed(g4dn_xlarge={SPOT: 0.0})})
    with pytest.raises(SnapshotError, match=r"aws:us-east-1:g4dn\.xlarge"):
        refresh_prices({"aws": provider}, {"aws": ["us-east-1"]}, root=user_dir)
    with pytest.raises(UnknownNameError, match="unknown price"):
        refresh_prices(
            {"aws": provider}, {"aws": ["us-east-1"]}, root=user_dir, accept=["aws:*:*:x"]
        )


def test_the_library_call_takes_the_dry_run_and_the_accepted_changes(
    user_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``planner.refresh_prices`` forwards ``dry_run`` and ``accept_changes`` (issue 13: the CLI
    calls the library, so a notebook gets the same gates and the same way through them)."""
    import planner

    fetched = _serve(monkeypatch, _changed(g4dn_xlarge={"price_on_demand_usd_per_hour": 0.0000004}))
    before = sorted(p.name for p in user_dir.iterdir())

    # a dry run fetches, judges and publishes nothing
    dry = planner.refresh_prices("aws", "us-east-1", dry_run=True)
    assert (dry.dry_run, dry.snapshot) == (True, None)
    assert [f.instance_type for f in dry.blocking] == ["g4dn.xlarge"]
    assert fetched == ["us-east-1"]
    assert sorted(p.name for p in user_dir.iterdir()) == before

    # without the change's id the gate refuses; with it the change is published
    with pytest.raises(SnapshotError, match=r"aws:us-east-1:g4dn\.xlarge"):
        planner.refresh_prices("aws", "us-east-1")
    result = planner.refresh_prices(
        providers="aws", regions="us-east-1", accept_changes="aws:us-east-1:g4dn.*"
    )
    assert result.snapshot is not None and result.snapshot.parent == user_dir
    assert [f.accepted_by for f in result.findings] == ["aws:us-east-1:g4dn.*"]
    assert load_snapshot(result.snapshot).offers.set_index("instance_type").loc[
        "g4dn.xlarge", "price_on_demand_usd_per_hour"
    ] == pytest.approx(0.0000004)
    with pytest.raises(ConfigError, match="did you mean accept_changes"):
        planner.refresh_prices("aws", "us-east-1", accept_change="aws")  # type: ignore[call-arg]
