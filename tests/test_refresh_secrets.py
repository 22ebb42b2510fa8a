"""Issue 13, "no secret in any output": a refresh at any verbosity prints, logs and writes no
credential.

Every registered provider is refreshed through the real CLI with fake credentials in the
environment and every endpoint pointed at a local server (which refuses: failing to connect is
the expected outcome here).  The secrets do reach that server (so the SDKs used them, and their
DEBUG request logs would carry them); they must not reach stdout, stderr, a log record or a file
in the data folder.  A control run with the old logging set-up shows the check finds a leak.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli import main
from planner.cli.logs import REDACTED, RedactSecrets, configure_logging, redact
from planner.providers import PROVIDERS
from tests.provider_fakes import FakeHttpServer, Reply

REPO = Path(__file__).resolve().parent.parent

# Fake credentials, each unlike anything else in the output so a hit is a leak.
SECRETS = {
    "AWS_ACCESS_KEY_ID": "AKIAQX7TESTKEY4LEAKS",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI-fake-secret-access-key-0001",
    "AWS_SESSION_TOKEN": "FwoGZXIvYXdzEfake-session-token-0002",
    "AZURE_CLIENT_SECRET": "azure-fake-client-secret-0003",
    "GOOGLE_API_KEY": "AIzaSyFAKE-google-api-key-0004",
    "LAMBDA_API_KEY": "secret_fake-lambda-api-key-0005",
    "PLANNER_GCP_API_KEY": "AIzaSyFAKE-planner-gcp-key-0006",
}
# Not secrets, but needed for the adapters to get as far as sending a request.
SETTINGS = {
    "AZURE_CLIENT_ID": "00000000-0000-0000-0000-0000000000c1",
    "AZURE_TENANT_ID": "00000000-0000-0000-0000-0000000000d2",
    "AZURE_SUBSCRIPTION_ID": "00000000-0000-0000-0000-000000000000",
    "NO_GCE_CHECK": "True",  # google.auth: do not probe the GCE metadata server
    "AWS_MAX_ATTEMPTS": "1",
    "AWS_RETRY_MODE": "standard",
}


def _url_variables() -> list[str]:
    """The mirror variables the adapters read (``PLANNER_*_URL``), found in their source so that
    an adapter added later is pointed at the local server too."""
    names: set[str] = set()
    for path in (REPO / "planner" / "providers").glob("*.py"):
        names.update(re.findall(r"PLANNER_[A-Z0-9_]+_URL", path.read_text(encoding="utf-8")))
    return sorted(names)


def _environment(url: str, data_dir: Path) -> dict[str, str]:
    env = {**SECRETS, **SETTINGS, "PLANNER_DATA_DIR": str(data_dir), "AWS_ENDPOINT_URL": url}
    env.update({name: url for name in _url_variables()})
    env["AZURE_AUTHORITY_HOST"] = url  # azure-identity's token endpoint, where installed
    return env


def leaks(texts: Mapping[str, str], secrets: Mapping[str, str] = SECRETS) -> list[str]:
    """``where: VARIABLE`` for every secret value found in ``texts`` (where -> text)."""
    return [
        f"{where}: {name}"
        for where, text in texts.items()
        for name, value in secrets.items()
        if value in text
    ]


def _files(root: Path) -> dict[str, str]:
    """Every file under ``root`` as text (undecodable bytes replaced)."""
    if not root.exists():
        return {}
    return {
        str(p.relative_to(root)): p.read_bytes().decode("utf-8", "replace")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def refusing_server() -> Iterator[FakeHttpServer]:
    """A local endpoint that refuses every request (HTTP 403) and records what it was sent."""
    with FakeHttpServer() as server:
        server.route("/", [Reply(403, {"error": "forbidden"})])
        yield server


def _sent_secrets(server: FakeHttpServer) -> set[str]:
    """The secrets the adapters sent to the server (headers and queries)."""
    sent = " ".join(f"{s.path} {s.query} {s.headers}" for s in server.seen)
    return {name for name, value in SECRETS.items() if value in sent}


# ---------------------------------------------------------------- the filter itself


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        # botocore's DEBUG request line: the key id inside the Authorization header
        (
            "{'Authorization': 'AWS4-HMAC-SHA256 Credential=AKIAQX7TESTKEY4LEAKS/20250602/"
            "us-east-1/ec2/aws4_request, Signature=abc'}",
            "{'Authorization': '",
        ),
        ("temporary key ASIAZZZZYYYYXXXXWWWW in a message", "temporary key "),  # an STS key id
        ("X-Amz-Security-Token: FwoGZXIvYXdzEfake-session-token-0002", "X-Amz-Security-Token: "),
        ("GET https://www.googleapis.com/v1/skus?key=AIzaSyXYZ&pageSize=5000", "pageSize=5000"),
        ("authorization: Bearer eyJ0eXAiOiJKV1QiLCJhbGciOi", "authorization: "),
        ('{"api_key": "secret_abc123def"}', '{"api_key": "'),
    ],
)
def test_redact_removes_credentials_and_keeps_the_rest(text: str, kept: str) -> None:
    out = redact(text, environ={})
    assert REDACTED in out
    assert kept in out
    for secret in ("AKIAQX7TESTKEY4LEAKS", "ASIAZZZZYYYYXXXXWWWW", "FwoGZXIv", "AIzaSyXYZ", "eyJ0"):
        assert secret not in out
    assert "secret_abc123def" not in out


def test_redact_removes_the_values_of_secret_variables() -> None:
    environ = {
        "AZURE_CLIENT_SECRET": "plain-words-secret",
        "PLANNER_COREWEAVE_API_KEY": "cw-key-12345",
        "HOME": "/root",  # not a secret: kept
    }
    out = redact("got plain-words-secret and cw-key-12345 under /root", environ=environ)
    assert out == f"got {REDACTED} and {REDACTED} under /root"


def test_the_check_finds_a_deliberately_logged_secret_and_the_filter_removes_it(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: without the filter a logged secret is found; with it, it is not."""
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    secret = SECRETS["AWS_SECRET_ACCESS_KEY"]
    log = logging.getLogger("planner.catalog.refresh")
    # pytest's handlers live for the whole session and an earlier CLI test filtered them: the
    # control runs without the filter
    for handler in logging.getLogger().handlers:
        kept = [f for f in handler.filters if not isinstance(f, RedactSecrets)]
        monkeypatch.setattr(handler, "filters", kept)
    with caplog.at_level(logging.DEBUG, logger="planner"):
        log.debug("signing with %s", secret)
    assert leaks({"records": caplog.text}) == ["records: AWS_SECRET_ACCESS_KEY"]
    caplog.clear()
    configure_logging(2)  # puts the filter on the root handlers, pytest's capture included
    assert any(isinstance(f, RedactSecrets) for f in caplog.handler.filters)
    with caplog.at_level(logging.DEBUG, logger="planner"):
        log.debug("signing with %s", secret)
        try:
            raise RuntimeError(f"request failed: {secret}")
        except RuntimeError:
            log.debug("traceback follows", exc_info=True)
    assert "signing with [redacted]" in caplog.text
    assert leaks({"records": caplog.text}) == []


def test_third_party_loggers_stay_at_warning_under_vv() -> None:
    configure_logging(2)
    assert logging.getLogger("planner").getEffectiveLevel() == logging.DEBUG
    for name in ("botocore", "boto3", "urllib3", "azure", "google.auth", "requests", "httpx"):
        assert logging.getLogger(name).getEffectiveLevel() == logging.WARNING, name
    assert not logging.getLogger("botocore.endpoint").isEnabledFor(logging.DEBUG)
    configure_logging(0)
    assert logging.getLogger("planner").getEffectiveLevel() == logging.WARNING


# ---------------------------------------------------------------- a whole refresh, every provider


@pytest.mark.parametrize("verbosity", [[], ["-v"], ["-vv"]], ids=["quiet", "v", "vv"])
def test_refresh_of_every_provider_prints_logs_and_writes_no_secret(
    verbosity: list[str],
    refusing_server: FakeHttpServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    data = tmp_path / "data"
    for name, value in _environment(refusing_server.url, data).items():
        monkeypatch.setenv(name, value)
    caplog.set_level(logging.DEBUG)
    out = CliRunner().invoke(main, [*verbosity, "prices", "refresh", "--allow-partial"])
    assert out.exit_code == 1, out.output  # every region refused: nothing to publish
    assert isinstance(out.exception, SystemExit)  # a clean error, not an escaped exception
    assert "Traceback" not in out.output
    for provider in PROVIDERS:  # each registered provider was refreshed and reported
        assert f"{provider} " in out.stderr, provider
    texts = {
        "stdout": out.stdout,
        "stderr": out.stderr,
        "log records": "\n".join(
            [r.getMessage() for r in caplog.records] + [caplog.text]  # messages and tracebacks
        ),
        **{f"file {k}": v for k, v in _files(data).items()},
    }
    assert leaks(texts) == []
    # the adapters did put credentials on the wire, so there was something to leak
    assert {"AWS_ACCESS_KEY_ID", "AWS_SESSION_TOKEN"} <= _sent_secrets(refusing_server)


_OLD_LOGGING = textwrap.dedent(
    """
    import logging, sys
    import planner.cli.logs as logs
    def old_setup(verbose):  # the set-up before issue 13: everything at DEBUG, nothing redacted
        logging.basicConfig(level=max(logging.WARNING - 10 * verbose, logging.DEBUG))
    logs.configure_logging = old_setup if sys.argv[1] == "old" else logs.configure_logging
    from planner.cli import main
    main(sys.argv[2:])
    """
)


@pytest.mark.parametrize("setup", ["new", "old"])
def test_vv_refresh_in_a_real_process(
    setup: str, refusing_server: FakeHttpServer, tmp_path: Path
) -> None:
    """The process's own stderr at -vv: clean with the CLI's logging; with the old set-up
    (botocore's DEBUG request log) the same check finds the key id and the session token."""
    data = tmp_path / "data"
    env = {**os.environ, **_environment(refusing_server.url, data)}
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            _OLD_LOGGING,
            setup,
            "-vv",
            "prices",
            "refresh",
            "--provider",
            "aws",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    found = leaks({"stdout": proc.stdout, "stderr": proc.stderr, **_files(data)})
    if setup == "new":
        assert found == []
        assert "INFO planner.catalog.refresh: fetching aws us-east-1" in proc.stderr  # -vv works
        assert "error: refresh incomplete, nothing published (aws" in proc.stderr  # a clean end
    else:
        assert {"stderr: AWS_ACCESS_KEY_ID", "stderr: AWS_SESSION_TOKEN"} <= set(found)
