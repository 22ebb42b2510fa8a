"""`planner prices`: refresh safety (atomic, locked, gated), status, diff, history, end to end."""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
import textwrap
import threading
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

from planner.catalog import load_offer_book
from planner.catalog.refresh import (
    Gates,
    check_gates,
    diff_offers,
    plan_regions,
    price_history,
    prices_status,
    refresh_prices,
)
from planner.catalog.store import (
    bundled_snapshot_root,
    list_snapshots,
    load_snapshot,
    read_manifest,
    write_snapshot,
)
from planner.cli import main
from planner.errors import ConfigError, ProviderError, SnapshotError, UnknownNameError
from planner.providers import PROVIDERS, http
from planner.providers.azure import AzureProvider, RetailPricesClient
from planner.providers.base import Provider
from planner.schema import validate_offers
from tests.provider_fakes import (
    FakeHttpServer,
    Reply,
    TableProvider,
    after,
    aws_provider,
    frozen_clock,
    offer_row,
)
from tests.public_api_fakes import AZURE_RETAIL, azure_retail_route, azure_routes

REPO = Path(__file__).resolve().parent.parent
T0 = datetime(2025, 6, 1, 9, 0, tzinfo=timezone.utc)
T1 = datetime(2025, 6, 2, 9, 0, tzinfo=timezone.utc)


def _bundled_id() -> str:
    """The bundled snapshot's id (it changes with each rebuilt snapshot)."""
    return list_snapshots(bundled_snapshot_root())[-1].name


def _frame(*rows: dict[str, Any]) -> pd.DataFrame:
    return validate_offers(pd.DataFrame.from_records(list(rows)))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A user root holding one previous snapshot: two offers in us-east-1, one in us-west-2."""
    previous = _frame(
        offer_row("us-east-1", "p4d.24xlarge", 32.77, as_of="2025-06-01"),
        offer_row("us-east-1", "p5.48xlarge", 98.32, as_of="2025-06-01", gpu_model="H100"),
        offer_row("us-west-2", "p4d.24xlarge", 32.77, as_of="2025-06-01"),
    )
    write_snapshot(tmp_path, {"aws": previous}, snapshot_id="previous", now=T0)
    return tmp_path


FRESH = {
    "us-east-1": [
        offer_row("us-east-1", "p4d.24xlarge", 30.00),
        offer_row("us-east-1", "p5.48xlarge", 55.04, gpu_model="H100"),
    ],
    "us-west-2": [offer_row("us-west-2", "p4d.24xlarge", 31.00)],
}


def _refresh(root: Path, provider: TableProvider, regions: list[str], **kw: Any) -> Any:
    return refresh_prices({"aws": provider}, {"aws": regions}, root=root, clock=lambda: T1, **kw)


def test_refresh_publishes_and_carries_other_regions_over(root: Path) -> None:
    result = _refresh(root, TableProvider(FRESH), ["us-east-1"])
    assert [p.name for p in list_snapshots(root)] == ["2025-06-02T090000Z-aws", "previous"]
    book = load_offer_book(roots=[root])
    prices = book.offers.set_index(["region", "instance_type"])["price_on_demand_usd_per_hour"]
    assert prices[("us-east-1", "p4d.24xlarge")] == 30.00  # refreshed
    assert prices[("us-west-2", "p4d.24xlarge")] == 32.77  # not refreshed: carried over
    assert result.rows == {"aws": 3}
    (entry,) = read_manifest(result.snapshot).providers
    assert "fetched us-east-1" in entry.notes and "carried over from previous" in entry.notes


def test_refresh_of_one_region_records_oldest_and_newest_as_of(root: Path) -> None:
    result = _refresh(root, TableProvider(FRESH), ["us-east-1"])
    (entry,) = read_manifest(result.snapshot).providers
    # us-east-1 fetched on 2025-06-02; us-west-2 carried over from the 2025-06-01 snapshot
    assert (entry.as_of, entry.as_of_newest) == ("2025-06-01", "2025-06-02")
    (status,) = prices_status([root], max_age_days=90, today=date(2025, 6, 3))
    assert (status["as_of"], status["as_of_newest"], status["age_days"]) == (
        "2025-06-01",
        "2025-06-02",
        2,
    )


def test_failed_region_publishes_nothing_without_allow_partial(root: Path) -> None:
    provider = TableProvider(FRESH, fail={"us-west-2": "ThrottlingException after 8 attempts"})
    with pytest.raises(ProviderError, match="us-west-2: ThrottlingException") as info:
        _refresh(root, provider, ["us-east-1", "us-west-2"])
    assert "--allow-partial" in str(info.value)
    assert [p.name for p in list_snapshots(root)] == ["previous"]


def test_allow_partial_publishes_what_succeeded_and_says_what_is_missing(root: Path) -> None:
    provider = TableProvider(FRESH, fail={"us-west-2": "throttled"})
    result = _refresh(root, provider, ["us-east-1", "us-west-2"], allow_partial=True)
    assert [(f.region, f.error) for f in result.failures] == [("us-west-2", "throttled")]
    (entry,) = read_manifest(result.snapshot).providers
    assert "FAILED us-west-2" in entry.notes
    offers = load_snapshot(result.snapshot).offers.set_index(["region", "instance_type"])
    assert (
        offers.loc[("us-west-2", "p4d.24xlarge"), "price_on_demand_usd_per_hour"] == 32.77
    )  # kept


def test_price_jump_gate_blocks_then_accept_or_force_publishes(root: Path) -> None:
    jumped = {"us-east-1": [offer_row("us-east-1", "p4d.24xlarge", 327.7), *FRESH["us-east-1"][1:]]}
    with pytest.raises(SnapshotError) as info:
        _refresh(root, TableProvider(jumped), ["us-east-1"])
    assert (
        "aws us-east-1 p4d.24xlarge price_on_demand_usd_per_hour: moved from 32.77 to 327.7"
        in info.value.message
    )
    assert "accept with --accept-changes aws:us-east-1:p4d.24xlarge" in info.value.message
    assert len(list_snapshots(root)) == 1
    accepted = _refresh(root, TableProvider(jumped), ["us-east-1"], accept=["aws:us-east-1:p4d.*"])
    (finding,) = accepted.findings
    assert (finding.gate, finding.accepted_by) == ("moved", "aws:us-east-1:p4d.*")
    assert (
        "accepted 1 gate finding(s) (1 by aws:us-east-1:p4d.*)"
        in read_manifest(accepted.snapshot).notes
    )
    result = _refresh(root, TableProvider(jumped), ["us-east-1"], force=True)
    assert result.forced == ()  # the accepted snapshot is now the previous one: nothing moved
    dropped = {"us-east-1": [offer_row("us-east-1", "p4d.24xlarge", 32.77)]}
    result = _refresh(root, TableProvider(dropped), ["us-east-1"], force=True)
    assert result.forced and "moved from 327.7 to 32.77" in result.forced[0]
    assert "--force" in read_manifest(result.snapshot).notes


def test_empty_fetch_gate(root: Path) -> None:
    with pytest.raises(SnapshotError, match="aws: the refresh produced no offers"):
        _refresh(root, TableProvider({"us-east-1": []}), ["us-east-1"])


def test_row_drop_gate_names_the_counts() -> None:
    previous = _frame(*(offer_row("us-east-1", f"p4d.{i}xlarge", 32.77) for i in range(5)))
    (finding,) = check_gates(previous, previous.iloc[:2], ["us-east-1"], Gates(), provider="aws")
    assert finding.message == (
        "aws us-east-1: row count fell from 5 to 2 (more than 50%);"
        " accept with --accept-changes aws:us-east-1"
    )
    assert check_gates(previous, previous.iloc[:3], ["us-east-1"], Gates(), provider="aws") == []


@pytest.mark.parametrize(
    ("new_prices", "findings"),
    [
        ([30.0, 55.0], 0),  # P5's 44% list-price cut is a real move, under the x3 gate
        ([10.0, 98.32], 1),  # 32.77 -> 10: more than x3 down
        ([32.77], 0),  # one of two rows gone: 50% is the limit, not over it
        ([], 1),  # nothing left
    ],
)
def test_check_gates(new_prices: list[float], findings: int) -> None:
    names = ["p4d.24xlarge", "p5.48xlarge"]
    previous = _frame(
        *(offer_row("us-east-1", n, p) for n, p in zip(names, [32.77, 98.32], strict=True))
    )
    rows = [offer_row("us-east-1", n, p) for n, p in zip(names, new_prices, strict=False)]
    new = _frame(*rows) if rows else previous.iloc[0:0]
    assert len(check_gates(previous, new, ["us-east-1"], Gates(), provider="aws")) == findings


_CRASH = textwrap.dedent(
    """
    import os, sys
    from datetime import date, datetime, timezone
    from pathlib import Path
    import planner.catalog.store as store
    from planner.catalog.refresh import refresh_prices
    from tests.provider_fakes import TableProvider, offer_row

    calls = []
    real_fsync = os.fsync
    def crashing_fsync(fd):
        calls.append(fd)
        if len(calls) == 2:  # the first file is written, the manifest is not: die like kill -9
            os._exit(9)
        real_fsync(fd)
    store.os.fsync = crashing_fsync
    rows = {"us-east-1": [offer_row("us-east-1", "p4d.24xlarge", 30.0)]}
    refresh_prices({"aws": TableProvider(rows)}, {"aws": ["us-east-1"]}, root=Path(sys.argv[1]),
                   clock=lambda: datetime(2025, 6, 2, tzinfo=timezone.utc))
    """
)


def test_crash_mid_write_leaves_the_old_snapshot_loadable(root: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _CRASH, str(root)], cwd=REPO, capture_output=True, text=True
    )
    assert proc.returncode == 9, proc.stderr
    assert any(p.name.startswith(".tmp-") for p in root.iterdir())  # the half-written snapshot
    assert [p.name for p in list_snapshots(root)] == ["previous"]  # ...is invisible
    book = load_offer_book(roots=[root])
    assert len(book.offers) == 3
    # the next refresh removes the dead writer's debris and publishes normally
    _refresh(root, TableProvider(FRESH), ["us-east-1"])
    assert len(list_snapshots(root)) == 2
    assert not [p.name for p in root.iterdir() if p.name.startswith(".tmp-")]


def test_concurrent_refreshes_serialise_and_both_publish_intact_snapshots(root: Path) -> None:
    barrier = threading.Barrier(2)
    fetching: list[int] = []  # refreshes inside a fetch right now
    overlaps: list[int] = []
    results: list[Any] = []
    errors: list[BaseException] = []

    def fetch_alone() -> None:
        fetching.append(1)
        overlaps.append(len(fetching))
        threading.Event().wait(0.2)  # long enough for the other refresh to try to start
        fetching.pop()

    def run(price: float) -> None:
        rows = {
            "us-east-1": [offer_row("us-east-1", "p4d.24xlarge", price), *FRESH["us-east-1"][1:]]
        }
        provider = TableProvider(rows, before_fetch=fetch_alone)
        try:
            barrier.wait(timeout=10)  # both start together
            results.append(_refresh(root, provider, ["us-east-1"]))  # same clock: same snapshot id
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(p,)) for p in (30.0, 31.0)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors
    assert overlaps == [1, 1]  # the lock is held from before the fetch: never two at once
    names = sorted(p.name for p in list_snapshots(root))
    assert names == ["2025-06-02T090000Z-aws", "2025-06-02T090000Z-aws-2", "previous"]
    for path in list_snapshots(root):
        load_snapshot(path)  # checksums verify: nothing interleaved
    # the second gated against (and carried over from) the first, not the snapshot both started at
    (second,) = read_manifest(root / "2025-06-02T090000Z-aws-2").providers
    assert "carried over from 2025-06-02T090000Z-aws" in second.notes
    assert not [p for p in root.iterdir() if p.name.startswith(".tmp-")]


def test_diff_offers() -> None:
    old = _frame(
        offer_row("us-east-1", "p4d.24xlarge", 32.77),
        offer_row("us-east-1", "p5.48xlarge", 98.32, gpu_model="H100"),
        offer_row("us-east-1", "p3dn.24xlarge", 31.21, gpu_model="V100-32GB"),
    )
    new = _frame(
        offer_row("us-east-1", "p4d.24xlarge", 33.00),  # +0.7%: under the threshold
        offer_row("us-east-1", "p5.48xlarge", 55.04, gpu_model="H100"),  # -44.02%
        offer_row("us-east-1", "p5e.48xlarge", 60.0, gpu_model="H200"),
    )
    changes = diff_offers(old, new, threshold=0.05)
    assert [(c["change"], c["instance_type"]) for c in changes] == [
        ("removed", "p3dn.24xlarge"),
        ("added", "p5e.48xlarge"),
        ("price", "p5.48xlarge"),
    ]
    assert changes[2]["change_pct"] == pytest.approx(-44.02)
    assert changes[2]["price"] == "on-demand"


def test_history_lists_every_snapshot(root: Path) -> None:
    _refresh(root, TableProvider(FRESH), ["us-east-1"])
    rows = price_history([root], instance_type="p4d.24xlarge", region="us-east-1")
    assert [(r["snapshot"], r["price_on_demand_usd_per_hour"]) for r in rows] == [
        ("previous", 32.77),
        ("2025-06-02T090000Z-aws", 30.0),
    ]


@pytest.mark.parametrize(
    ("providers", "regions", "expected"),
    [
        (["aws"], ["us-east-1"], {"aws": ("us-east-1",)}),
        (
            ["aws", "gcp"],
            ["aws:us-west-2"],
            {"aws": ("us-west-2",), "gcp": ("us-central1", "us-east4")},
        ),
        (["azure"], [], {"azure": ("eastus", "westus2")}),  # defaults
    ],
)
def test_plan_regions(
    providers: list[str], regions: list[str], expected: dict[str, tuple[str, ...]]
) -> None:
    assert plan_regions(providers, regions) == expected


def test_plan_regions_rejects_ambiguity_and_typos() -> None:
    with pytest.raises(ConfigError, match="ambiguous"):
        plan_regions(["all"], ["us-east-1"])
    with pytest.raises(UnknownNameError, match="did you mean aws"):
        plan_regions(["awz"], [])


# ---------------------------------------------------------------- through the real adapters


def _azure_public(url: str, waits: list[float]) -> Provider:
    """The Azure adapter without a subscription, its real HTTP path at ``url``, retry waits
    recorded in ``waits`` instead of slept."""
    retry = http.RetryPolicy(sleep=waits.append)
    retail = RetailPricesClient(
        base_url=url + AZURE_RETAIL,
        get_json=functools.partial(http.get_json, retry=retry),
        timeout_s=5,
    )
    return AzureProvider(retail_client=retail, environ={}, clock=frozen_clock)


def test_refresh_retries_throttling_and_rejects_malformed_pages(tmp_path: Path) -> None:
    waits: list[float] = []
    with FakeHttpServer() as server:
        azure_routes(server)
        throttled = Reply(429, {"Error": "Too many requests"}, {"Retry-After": "2"})
        server.route(AZURE_RETAIL, after([throttled], azure_retail_route()))
        result = refresh_prices(
            {"azure": _azure_public(server.url, waits)}, {"azure": ["eastus"]}, root=tmp_path
        )
        assert waits == [2.0]  # the wait the API asked for, then the same query again
        assert len(server.hits(AZURE_RETAIL)) == 4  # 429, then the recording's 3 pages
        assert result.failures == () and result.rows == {
            "azure": 10
        }  # as without throttling (ND MI300X v5 included)
        assert len(list_snapshots(tmp_path)) == 1

        for reply, message in [
            (Reply(200, {"BillingCurrency": "USD", "NextPageLink": None}), "malformed page 1"),
            (Reply(200, b'{"Items": ['), "did not return JSON"),  # cut short
            (Reply(503, {"Error": "unavailable"}), r"HTTP 503 .*\(4 tries"),  # kept failing
        ]:
            server.route(AZURE_RETAIL, [reply])
            with pytest.raises(ProviderError, match=message):
                refresh_prices(
                    {"azure": _azure_public(server.url, [])}, {"azure": ["eastus"]}, root=tmp_path
                )
    assert len(list_snapshots(tmp_path)) == 1  # nothing published by the failed refreshes


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path))
    monkeypatch.setitem(PROVIDERS, "aws", aws_provider)  # the registry entry, fed by fixtures
    return tmp_path / "snapshots"


def test_cli_refresh_then_offers_and_quote_use_the_new_snapshot(user_dir: Path) -> None:
    runner = CliRunner()
    args = ["prices", "refresh", "--provider", "aws", "--region", "us-east-1", "--format", "json"]
    gated = runner.invoke(main, args)
    # The trimmed fixture has 6 of the bundled snapshot's ~40 us-east-1 types: the row gate stops it.
    assert gated.exit_code == 1
    assert re.search(r"aws us-east-1: row count fell from \d+ to 6 \(more than 50%\)", gated.stderr)
    assert "--accept-changes aws:us-east-1" in gated.stderr
    out = runner.invoke(main, [*args, "--force"])
    assert out.exit_code == 0, out.output
    assert "warning: published under --force: aws us-east-1: row count fell" in out.stderr
    (published,) = json.loads(out.stdout)
    assert published["provider"] == "aws" and published["regions"] == "us-east-1"
    snapshot = published["snapshot"]
    assert (user_dir / snapshot / "manifest.json").exists()
    assert "g6f.large: fractional GPU" in out.stderr  # unmapped items are listed, not hidden

    offers = runner.invoke(
        main, ["offers", "--provider", "aws", "--region", "us-east-1", "--format", "json"]
    )
    assert offers.exit_code == 0, offers.output
    rows = {r["instance_type"]: r for r in json.loads(offers.stdout)}
    assert rows["g5.xlarge"]["source"].startswith("aws:")  # fetched, not the bundled catalog row
    assert rows["g5.xlarge"]["price_spot_usd_per_hour"] == pytest.approx(0.397)

    status = runner.invoke(main, ["prices", "status", "--format", "json"])
    assert status.exit_code == 0
    aws = next(r for r in json.loads(status.stdout) if r["provider"] == "aws")
    assert (aws["snapshot"], aws["location"]) == (snapshot, "user")
    # us-east-1 as fetched (the fixtures' clock), the other regions carried over from the bundle
    bundled_as_of = next(
        e.as_of
        for e in read_manifest(bundled_snapshot_root() / _bundled_id()).providers
        if e.provider == "aws"
    )
    oldest, newest = sorted({"2025-06-02", bundled_as_of})
    assert (aws["as_of"], aws["as_of_newest"]) == (oldest, newest)
    published_rows = pd.read_csv(user_dir / snapshot / "offers-aws.csv")
    old_rows = int((published_rows["as_of"] == oldest).sum())
    assert 0 < old_rows < len(published_rows)
    # A limit between the two dates' ages: only the older date's rows are too old.
    max_age = (datetime.now(timezone.utc).date() - date.fromisoformat(oldest)).days - 1
    listing = runner.invoke(
        main, ["offers", "--provider", "aws", "--max-age-days", str(max_age), "--format", "csv"]
    )
    assert listing.exit_code == 0, listing.output
    assert (
        f"warning: aws prices as of {oldest} to {newest}; {old_rows} of"
        f" {len(published_rows)} rows older than {max_age} days" in listing.stderr
    )

    quote = runner.invoke(
        main,
        [
            "quote",
            "--workload",
            "gpt2-xl-finetune",
            "--deadline",
            "72h",
            "--provider",
            "aws",
            "--region",
            "us-east-1",
        ],
    )
    assert quote.exit_code == 0, quote.output
    # The quote's provenance line names the live API as the source of the aws prices it used.
    (line,) = [x for x in quote.output.splitlines() if x.startswith("prices: aws")]
    assert "aws:ec2.describe_instance_types" in line

    history = runner.invoke(
        main,
        [
            "prices",
            "history",
            "--instance",
            "g5.xlarge",
            "--region",
            "us-east-1",
            "--format",
            "json",
        ],
    )
    assert snapshot in [r["snapshot"] for r in json.loads(history.stdout)]
    diff = runner.invoke(main, ["prices", "diff", _bundled_id(), snapshot, "--format", "json"])
    assert diff.exit_code == 0, diff.output
    assert any(
        c["change"] == "price" and c["instance_type"] == "p4d.24xlarge"
        for c in json.loads(diff.stdout)
    )


def test_cli_refresh_failure_is_a_clean_error(
    user_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(
        PROVIDERS,
        "aws",
        lambda: TableProvider(FRESH, fail={"us-east-1": "AWS denied get_products"}),
    )
    out = CliRunner().invoke(
        main, ["prices", "refresh", "--provider", "aws", "--region", "us-east-1"]
    )
    assert out.exit_code == 1
    assert "error: refresh incomplete, nothing published" in out.stderr
    assert "Traceback" not in out.output
    assert not list_snapshots(user_dir)


def test_issue_11_gcp_key_file_that_does_not_exist_is_a_clean_error(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-key.json"
    env = {
        **os.environ,
        "PLANNER_DATA_DIR": str(tmp_path / "data"),
        "GOOGLE_APPLICATION_CREDENTIALS": str(missing),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "planner", "prices", "refresh", "--provider", "gcp"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr + proc.stdout
    (error,) = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert error == (
        "error: refresh incomplete, nothing published (gcp us-central1, us-east4:"
        f" GOOGLE_APPLICATION_CREDENTIALS names {missing}, which does not exist)"
    )
    assert (
        "hint: gcp: point GOOGLE_APPLICATION_CREDENTIALS at a service-account JSON key file,"
        " or unset it and run `gcloud auth application-default login`" in proc.stderr
    )
    assert not list_snapshots(tmp_path / "data" / "snapshots")


def test_issue_11_refresh_of_all_reports_gcp_credentials_beside_the_other_providers(
    user_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-key.json"
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(missing))
    for other in set(PROVIDERS) - {"aws", "gcp", "azure"}:  # adapters added since (lambda)
        monkeypatch.delitem(PROVIDERS, other)
    monkeypatch.setitem(PROVIDERS, "aws", lambda: TableProvider(FRESH))
    denied = {"eastus": "Azure denied eastus", "westus2": "Azure denied westus2"}
    monkeypatch.setitem(PROVIDERS, "azure", lambda: TableProvider({}, name="azure", fail=denied))
    last_good = write_snapshot(
        user_dir, {"aws": _frame(*FRESH["us-east-1"])}, snapshot_id="last-good", now=T0
    )
    runner = CliRunner()

    # all or nothing by default: every failure is named once per provider, nothing is published
    out = runner.invoke(main, ["prices", "refresh"])
    assert out.exit_code == 1
    assert isinstance(out.exception, SystemExit)  # a clean exit, not an escaped exception
    assert "Traceback" not in out.output
    assert (
        "error: refresh incomplete, nothing published (gcp us-central1, us-east4:"
        f" GOOGLE_APPLICATION_CREDENTIALS names {missing}, which does not exist;"
        " azure eastus: Azure denied eastus; azure westus2: Azure denied westus2)" in out.stderr
    )
    assert "hint: gcp: point GOOGLE_APPLICATION_CREDENTIALS at" in out.stderr
    assert list_snapshots(user_dir) == [last_good]
    load_snapshot(last_good)  # the last good snapshot is intact

    # --allow-partial: aws is published, gcp and azure keep their previous prices
    out = runner.invoke(
        main, ["prices", "refresh", "--allow-partial", "--force", "--format", "json"]
    )
    assert out.exit_code == 0, out.output
    (published,) = json.loads(out.stdout)
    assert (published["provider"], published["regions"]) == ("aws", "us-east-1, us-west-2")
    assert (
        f"warning: gcp us-central1 not refreshed (GOOGLE_APPLICATION_CREDENTIALS names {missing},"
        " which does not exist); its previous rows were kept" in out.stderr
    )
    assert "  hint: point GOOGLE_APPLICATION_CREDENTIALS at" in out.stderr
    new = user_dir / published["snapshot"]
    assert [e.provider for e in read_manifest(new).providers] == ["aws"]
    assert list_snapshots(user_dir) == sorted([last_good, new])
    book = load_offer_book()
    assert {"aws", "gcp", "azure"} <= set(book.offers["provider"])  # gcp, azure: bundled prices


def test_cli_diff_unknown_snapshot_suggests(user_dir: Path) -> None:
    bundled = _bundled_id()
    out = CliRunner().invoke(main, ["prices", "diff", bundled[:-1], bundled])
    assert out.exit_code == 2
    assert f"did you mean {bundled}" in out.stderr


def test_cli_diff_of_a_snapshot_with_itself_says_nothing_changed(user_dir: Path) -> None:
    out = CliRunner().invoke(main, ["prices", "diff", _bundled_id(), _bundled_id()])
    assert out.exit_code == 0, out.output
    assert out.output.strip() == "no offers added or removed and no price moved more than 5%"


def test_cli_status_marks_the_bundled_snapshot_stale(user_dir: Path) -> None:
    out = CliRunner().invoke(main, ["prices", "status", "--max-age-days", "30", "--format", "json"])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.stdout)
    assert {r["provider"] for r in rows} >= {"aws", "gcp", "azure"}
    assert all(r["location"] == "bundled" for r in rows)
    assert all(r["stale"] == (r["age_days"] > 30) for r in rows)
    assert next(r for r in rows if r["provider"] == "azure")["stale"]  # an extract of 2024
