"""planner.providers.http: throttling and server errors are retried (honouring Retry-After), a
refusal and an unreachable host are not, and no error or log line shows a URL's query.

Everything runs against a real HTTP server on 127.0.0.1 (:class:`tests.provider_fakes.
FakeHttpServer`, sending no Retry-After of its own here); the retry waits go to a recording
``sleep`` instead of the clock.
"""

from __future__ import annotations

import base64
import logging
import socket
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest

from planner.errors import ProviderError
from planner.providers.http import (
    DEFAULT_RETRY,
    HttpStatusError,
    RetryPolicy,
    get_json,
    open_url,
    retry_after_seconds,
)
from tests.provider_fakes import FakeHttpServer, Reply

NOW = datetime(2025, 6, 2, 9, 0, tzinfo=timezone.utc)
PATH = "/prices"
SECRET = "SECRET-key-1234"


class Waits(list[float]):
    """A ``sleep`` that records how long it was asked to wait and returns at once."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def waits() -> Waits:
    return Waits()


@pytest.fixture
def retry(waits: Waits) -> RetryPolicy:
    return RetryPolicy(sleep=waits, now=lambda: NOW)


@pytest.fixture
def server() -> Iterator[FakeHttpServer]:
    with FakeHttpServer(error_retry_after=None) as s:  # only the scripted Retry-After headers
        yield s


def _url(server: FakeHttpServer) -> str:
    return f"{server.url}{PATH}?key={SECRET}&region=eastus"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens once it is closed


# ---------------------------------------------------------------- what is retried


def test_throttling_is_retried_after_the_wait_the_server_asks_for(
    server: FakeHttpServer, retry: RetryPolicy, waits: Waits
) -> None:
    throttled = Reply(429, {"error": "Too many requests"}, {"Retry-After": "1"})
    server.route(PATH, [throttled, Reply(200, {"Items": [1, 2]})])
    assert get_json(_url(server), retry=retry) == {"Items": [1, 2]}
    assert waits == [1.0]
    assert len(server.hits(PATH)) == 2


def test_server_errors_back_off_exponentially_then_name_the_status(
    server: FakeHttpServer, retry: RetryPolicy, waits: Waits
) -> None:
    server.route(PATH, [Reply(503, {"error": "unavailable"})])
    with pytest.raises(HttpStatusError) as info:
        get_json(_url(server), env_var="PLANNER_TEST_URL", retry=retry)
    assert (info.value.status, info.value.retry_after) == (503, None)
    assert "HTTP 503 Service Unavailable (4 tries over 7 s)" in info.value.message
    assert "PLANNER_TEST_URL" in (info.value.hint or "")  # the mirror variable as a way out
    assert waits == [1.0, 2.0, 4.0]
    assert len(server.hits(PATH)) == DEFAULT_RETRY.attempts == 4


@pytest.mark.parametrize(
    ("replies", "expected"),
    [
        ([Reply(500), Reply(200, b"[]")], []),  # an internal error that passes
        ([Reply(502), Reply(504), Reply(200, b"{}")], {}),  # a proxy's errors, twice
    ],
)
def test_transient_server_errors_are_retried(
    server: FakeHttpServer, retry: RetryPolicy, replies: list[Reply], expected: object
) -> None:
    server.route(PATH, replies)
    assert get_json(_url(server), retry=retry) == expected


@pytest.mark.parametrize(
    "status",
    [
        400,  # a bad filter: asking again gives the same answer
        401,  # a refused key
        403,
        404,  # no such file or region
    ],
)
def test_a_refusal_is_not_retried(
    server: FakeHttpServer, retry: RetryPolicy, waits: Waits, status: int
) -> None:
    server.route(PATH, [Reply(status, {"error": "no"}), Reply(200, {})])
    with pytest.raises(HttpStatusError) as info:
        get_json(_url(server), retry=retry)
    assert info.value.status == status
    assert f"HTTP {status}" in info.value.message
    assert waits == [] and len(server.hits(PATH)) == 1


def test_a_wait_beyond_the_cap_is_not_waited_for(
    server: FakeHttpServer, retry: RetryPolicy, waits: Waits
) -> None:
    server.route(PATH, [Reply(429, {}, {"Retry-After": "120"}), Reply(200, {})])
    with pytest.raises(HttpStatusError) as info:
        get_json(_url(server), retry=retry)
    assert (info.value.status, info.value.retry_after) == (429, 120.0)
    assert "it asks to wait 120 s" in (info.value.hint or "")
    assert waits == []


def test_the_waits_add_up_to_the_cap_at_most(server: FakeHttpServer, waits: Waits) -> None:
    server.route(PATH, [Reply(503, {}, {"Retry-After": "10"})])
    policy = RetryPolicy(attempts=10, max_wait_s=30, sleep=waits)
    with pytest.raises(HttpStatusError, match=r"4 tries over 30 s"):
        get_json(_url(server), retry=policy)
    assert waits == [10.0, 10.0, 10.0]


def test_open_url_retries_before_the_stream_opens(
    server: FakeHttpServer, retry: RetryPolicy, waits: Waits
) -> None:
    server.route(PATH, [Reply(503), Reply(200, b"a,b\n1,2\n", {"Content-Type": "text/csv"})])
    with open_url(_url(server), retry=retry) as stream:
        assert stream.read() == b"a,b\n1,2\n"
    assert waits == [1.0]


def test_a_dropped_connection_is_retried(retry: RetryPolicy, waits: Waits) -> None:
    # A server that closes the first connection without answering (http.client's
    # RemoteDisconnected, a ConnectionResetError), then answers the second.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(2)
    port = listener.getsockname()[1]

    def serve() -> None:
        first, _ = listener.accept()
        first.recv(65536)
        first.close()
        second, _ = listener.accept()
        second.recv(65536)
        second.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        second.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        assert get_json(f"http://127.0.0.1:{port}{PATH}", timeout_s=5, retry=retry) == {}
    finally:
        thread.join(5)
        listener.close()
    assert waits == [1.0]


# ---------------------------------------------------------------- what fails at once


def test_an_unreachable_host_fails_in_seconds_without_retrying(
    retry: RetryPolicy, waits: Waits
) -> None:
    base = f"http://127.0.0.1:{_closed_port()}{PATH}"
    started = time.monotonic()
    with pytest.raises(ProviderError) as info:
        get_json(f"{base}?key={SECRET}", env_var="PLANNER_TEST_URL", retry=retry)
    assert time.monotonic() - started < 5
    assert not isinstance(info.value, HttpStatusError)
    assert info.value.message.startswith(f"could not reach {base}: ")
    assert "set PLANNER_TEST_URL to a reachable mirror" in (info.value.hint or "")
    assert waits == []
    assert SECRET not in str(info.value)


@pytest.mark.parametrize(
    "body",
    [
        b"<html>Service Unavailable</html>",  # a proxy's page
        b'{"Items": [{"retailPrice": 3.6',  # cut short
        b"\xff\xfe",  # not text
    ],
)
def test_a_body_that_is_not_json_is_a_provider_error(
    server: FakeHttpServer, retry: RetryPolicy, body: bytes
) -> None:
    server.route(PATH, [Reply(200, body)])
    with pytest.raises(ProviderError, match=r"/prices did not return JSON") as info:
        get_json(_url(server), retry=retry)
    assert SECRET not in str(info.value)


# ---------------------------------------------------------------- no query in what is shown


def test_no_error_or_log_line_shows_the_query(
    server: FakeHttpServer, retry: RetryPolicy, caplog: pytest.LogCaptureFixture
) -> None:
    server.route(PATH, [Reply(503), Reply(429), Reply(404)])
    with caplog.at_level(logging.DEBUG, logger="planner"), pytest.raises(HttpStatusError) as info:
        get_json(_url(server), retry=retry)
    assert info.value.status == 404
    shown = [str(info.value), info.value.hint or "", *(r.getMessage() for r in caplog.records)]
    assert len(caplog.records) == 2  # one line per retry
    assert all(SECRET not in line and "?" not in line for line in shown)
    assert f"{server.url}{PATH}" in info.value.message


# ---------------------------------------------------------------- Retry-After


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("1", 1.0),  # delay-seconds
        (" 0 ", 0.0),
        ("2.5", 2.5),  # not in the RFC, read leniently
        ("Mon, 02 Jun 2025 09:00:30 GMT", 30.0),  # an HTTP date 30 s after NOW
        ("Mon, 02 Jun 2025 08:59:00 GMT", 0.0),  # a date already past: no wait
        ("-5", 0.0),
        (None, None),
        ("", None),
        ("soon", None),  # unreadable: the backoff decides
        ("nan", None),
        ("inf", None),
    ],
)
def test_retry_after_is_read_as_seconds_or_a_date(
    header: str | None, seconds: float | None
) -> None:
    assert retry_after_seconds(header, NOW) == seconds


def test_an_http_date_is_waited_for_relative_to_now(server: FakeHttpServer, waits: Waits) -> None:
    when = (NOW + timedelta(seconds=3)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    server.route(PATH, [Reply(429, {}, {"Retry-After": when}), Reply(200, {})])
    get_json(_url(server), retry=RetryPolicy(sleep=waits, now=lambda: NOW))
    assert waits == [3.0]


# ---------------------------------------------------------------- a mirror behind a password


def test_a_mirror_url_with_a_user_and_password_sends_basic_auth(server: FakeHttpServer) -> None:
    # was: urllib read "user:password@host" as the host; the request never left
    server.route(PATH, [Reply(200, {"ok": True})])
    host = server.url.removeprefix("http://")
    assert get_json(f"http://reader:pa%40ss-{SECRET}@{host}{PATH}") == {"ok": True}
    (seen,) = server.hits(PATH)
    sent = seen.headers["Authorization"]
    assert sent.startswith("Basic ")
    assert base64.b64decode(sent.removeprefix("Basic ")).decode() == f"reader:pa@ss-{SECRET}"


def test_a_header_the_caller_sends_is_not_replaced(server: FakeHttpServer) -> None:
    # an API key in the Authorization header (Lambda's) stays the one sent
    server.route(PATH, [Reply(200, {"ok": True})])
    host = server.url.removeprefix("http://")
    get_json(f"http://reader:pw@{host}{PATH}", headers={"Authorization": "Bearer abc"})
    assert server.hits(PATH)[0].headers["Authorization"] == "Bearer abc"


@pytest.mark.parametrize("where", ["refused", "default port", "404"])
def test_no_error_or_log_line_shows_a_mirror_password(
    where: str, server: FakeHttpServer, retry: RetryPolicy, caplog: pytest.LogCaptureFixture
) -> None:
    # was: "could not reach https://host.invalid/x: nonnumeric port: 'SECRET...@host.invalid'"
    server.route(PATH, [Reply(503), Reply(404)])
    host = {
        "refused": f"127.0.0.1:{_closed_port()}",
        "default port": "127.0.0.1",  # nothing listens on port 80 here
        "404": server.url.removeprefix("http://"),
    }[where]
    url = f"http://reader:{SECRET}@{host}{PATH}"
    with caplog.at_level(logging.DEBUG, logger="planner"), pytest.raises(ProviderError) as info:
        get_json(url, env_var="PLANNER_AWS_PRICES_URL", retry=retry)
    shown = [str(info.value), info.value.hint or "", *(r.getMessage() for r in caplog.records)]
    assert all(SECRET not in line and "reader" not in line for line in shown)
    assert f"http://{host}{PATH}" in info.value.message
