"""Plain HTTPS reads of the providers' public price files, with a mirror setting and clear errors.

The public endpoints (AWS Price List bulk files and Spot Advisor data, the Azure Retail Prices API,
Lambda's instance-types API) need no cloud account, so a refresh reads them with the standard
library: no SDK, no credentials, nothing to install.  Each endpoint has a documented environment
variable that replaces its base URL (a mirror, a proxy, an air-gapped copy): :func:`base_url`.

Every failure becomes one :class:`~planner.errors.ProviderError` naming the URL (without its query,
which may carry a key) and a fix, raised within ``timeout_s`` when the host cannot be reached.

Throttling (HTTP 429), server errors (5xx) and a connection the server reset are retried a few
times with exponential backoff, honouring ``Retry-After`` (:class:`RetryPolicy`); a refusal (any
other 4xx) and a host that cannot be reached at all (no such name, connection refused, timeout)
are not, so an offline refresh still fails in seconds.  A status the retries could not get past is
an :class:`HttpStatusError` carrying ``status`` and ``retry_after``.
"""

from __future__ import annotations

import base64
import email.utils
import http.client
import json
import logging
import math
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO, Any

from planner import clock
from planner.errors import ConfigError, ProviderError

log = logging.getLogger(__name__)

# Seconds to wait for a connection or a read before saying the endpoint could not be reached.
DEFAULT_TIMEOUT_S = 15.0
USER_AGENT = "planner-price-refresh"


class HttpStatusError(ProviderError):
    """An endpoint answered with an HTTP error status (after any retries).

    ``status`` is the HTTP status code; ``retry_after`` the seconds the server asked to wait
    before the next try (its ``Retry-After`` header), None when it named none.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int,
        retry_after: float | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.status = status
        self.retry_after = retry_after


def _wall_clock() -> datetime:
    return clock.utc_now()  # looked up at call time: the program's one clock


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry throttling, server errors and reset connections.

    Try ``attempts`` times in all; before try *n* + 1 wait ``Retry-After`` when the server named
    it, else ``first_wait_s * 2**(n - 1)`` (1, 2, 4 s).  Waits add up to at most ``max_wait_s``:
    a server asking for longer than is left is not waited for, its error is raised at once.
    ``sleep`` and ``now`` are the collaborators tests replace (no real waiting in tests).
    """

    attempts: int = 4
    first_wait_s: float = 1.0
    max_wait_s: float = 30.0
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)
    now: Callable[[], datetime] = field(default=_wall_clock, compare=False)

    def wait_before(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before try ``attempt + 1`` after try ``attempt`` (1-based) failed."""
        if retry_after is not None:
            return retry_after
        return self.first_wait_s * 2 ** (attempt - 1)


DEFAULT_RETRY = RetryPolicy()
NO_RETRY = RetryPolicy(attempts=1)

# Statuses worth another try: throttled, or the server (or a proxy before it) failed.
RETRIED_STATUSES = frozenset({429, 500, 502, 503, 504})


def retry_after_seconds(value: str | None, now: datetime) -> float | None:
    """``Retry-After`` as seconds from ``now``: delay-seconds or an HTTP date (RFC 9110 10.2.3);
    None when absent or unreadable (then the backoff decides)."""
    if not value or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # an HTTP date is GMT; a malformed one may lack the zone
            return None
        seconds = (when - now).total_seconds()
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


def base_url(env_var: str, default: str) -> str:
    """The base URL of an endpoint: ``$env_var`` when set (a mirror or proxy), else ``default``."""
    value = os.environ.get(env_var, "").strip()
    return (checked_mirror_url(env_var, value) if value else default).rstrip("/")


def checked_mirror_url(env_var: str, value: str) -> str:
    """``value`` of ``$env_var`` when it is an http(s) URL; a ConfigError naming the variable
    otherwise (shown without user info or query, which may hold a key)."""
    try:
        parts = urllib.parse.urlsplit(value)
        parts.port  # noqa: B018 - read for its ValueError: a port out of range or not a number
    except ValueError:  # an unclosed IPv6 bracket, a bad port (was: "unexpected ValueError")
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"{env_var}={shown_url(value)!r} is not an http(s) URL",
            hint=f"set {env_var} to a mirror's base URL (https://host/path), or unset it to use "
            "the provider's own endpoint",
        )
    return value


def shown_url(url: str) -> str:
    """``url`` without its query string or user info, safe to print (keys travel in queries)."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:  # unparseable (a bad port, an unclosed IPv6 bracket): cut by hand
        head = url.split("?", 1)[0].split("#", 1)[0]
        scheme, sep, rest = head.rpartition("://")
        return f"{scheme}{sep}{rest.rpartition('@')[2]}"
    host = parts.hostname or ""
    if port:
        host = f"{host}:{port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


def without_credentials(url: str) -> tuple[str, str | None]:
    """``url`` without the user info a mirror's URL may carry (``https://user:password@host/``),
    and the HTTP Basic ``Authorization`` value it stands for (None where it carries none).

    urllib sends no user info: it read ``user:password@host`` as the host, and its error ("nonnumeric
    port: 'password@host'") printed the password.  A mirror or proxy behind Basic authentication
    (an artifact store, an internal price mirror) gets the header instead, as pip and curl send it;
    the user and password are percent-decoded (``%40`` for an ``@`` in a password)."""
    parts = urllib.parse.urlsplit(url)
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at:
        return url, None
    user, _, password = userinfo.partition(":")
    pair = f"{urllib.parse.unquote(user)}:{urllib.parse.unquote(password)}"
    token = base64.b64encode(pair.encode("utf-8")).decode("ascii")
    return urllib.parse.urlunsplit(parts._replace(netloc=host)), f"Basic {token}"


def _error(url: str, reason: str, env_var: str | None) -> ProviderError:
    fix = "check the network connection"
    if env_var:
        fix += f", or set {env_var} to a reachable mirror of this endpoint"
    return ProviderError(f"could not reach {shown_url(url)}: {reason}", hint=fix)


def _reset(error: BaseException) -> bool:
    """Whether ``error`` is a connection the server accepted and then dropped (worth a retry),
    as opposed to a host that cannot be reached at all (refused, unknown, timed out)."""
    reason = error.reason if isinstance(error, urllib.error.URLError) else error
    return isinstance(reason, (ConnectionResetError, http.client.RemoteDisconnected))


def _open(
    request: urllib.request.Request, timeout_s: float, env_var: str | None, retry: RetryPolicy
) -> Any:
    """``urlopen(request)``, retrying throttling, server errors and reset connections."""
    url = request.full_url
    waited = 0.0
    attempt = 1
    while True:
        try:
            return urllib.request.urlopen(request, timeout=timeout_s)
        except urllib.error.HTTPError as e:
            header = e.headers.get("Retry-After") if e.headers is not None else None
            retry_after = retry_after_seconds(header, retry.now())
            e.close()
            error: ProviderError = _http_status_error(url, e.code, e.reason, retry_after, env_var)
            if e.code not in RETRIED_STATUSES:
                raise error from None
        except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
            # OSError covers TimeoutError and ConnectionError; HTTPException a garbled answer
            reason = getattr(e, "reason", None) or e
            error = _error(url, str(reason) or type(e).__name__, env_var)
            if not _reset(e):
                raise error from None  # unreachable: fail now, not after the backoff
            retry_after = None
        if attempt >= retry.attempts:
            raise _gave_up(error, attempt, waited) from None
        wait = retry.wait_before(attempt, retry_after)
        if waited + wait > retry.max_wait_s:
            raise _gave_up(error, attempt, waited) from None
        log.info(
            "%s (try %d of %d); retrying in %g s", error.message, attempt, retry.attempts, wait
        )
        retry.sleep(wait)
        waited += wait
        attempt += 1


def _gave_up(error: ProviderError, attempts: int, waited: float) -> ProviderError:
    """``error``, saying how many tries it took when there were several."""
    if attempts > 1:
        error.message = f"{error.message} ({attempts} tries over {waited:g} s)"
        error.args = (error.message,)
    return error


@contextmanager
def open_url(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    env_var: str | None = None,
    retry: RetryPolicy = DEFAULT_RETRY,
) -> Iterator[IO[bytes]]:
    """An open binary stream of ``url`` (read it in pieces: bulk price files are large).

    Throttling (429), server errors (5xx) and reset connections are retried under ``retry``
    before the stream opens; a stream cut short while it is read is not (the caller's bytes are
    gone).  Raises :class:`HttpStatusError` for an HTTP error status and :class:`ProviderError`
    for an unreachable host or a timeout; the message names the URL without its query, never a
    header value.
    """
    url, authorization = without_credentials(url)
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, **(headers or {})})
    if authorization is not None and not request.has_header("Authorization"):
        # not sent on to another host a redirect names (an unredirected header)
        request.add_unredirected_header("Authorization", authorization)
    response = _open(request, timeout_s, env_var, retry)
    try:
        yield response
    except (TimeoutError, OSError) as e:
        raise _error(url, f"the connection failed while reading ({e})", env_var) from None
    finally:
        response.close()


def _http_status_error(
    url: str, code: int, reason: object, retry_after: float | None, env_var: str | None
) -> HttpStatusError:
    if code in (401, 403):
        return HttpStatusError(
            f"{shown_url(url)} refused the request (HTTP {code} {reason})",
            status=code,
            retry_after=retry_after,
            hint="check the API key or credentials this endpoint needs",
        )
    if code == 404:
        return HttpStatusError(
            f"{shown_url(url)} has no such file (HTTP 404)",
            status=code,
            retry_after=retry_after,
            hint=f"the region or file may not exist; check {env_var} if it points at a mirror"
            if env_var
            else "the region or file may not exist",
        )
    message = f"{shown_url(url)} answered HTTP {code} {reason}"
    if code == 429 or code >= 500:
        asks = f"; it asks to wait {retry_after:g} s" if retry_after is not None else ""
        what = "is throttling requests" if code == 429 else "is failing"
        fix = f"the service {what}{asks}: retry the refresh later"
        if env_var:
            fix += f", or set {env_var} to a mirror of this endpoint"
        return HttpStatusError(message, status=code, retry_after=retry_after, hint=fix)
    fix = "check the request's region and names"
    if env_var:
        fix += f", and {env_var} if it points at a mirror"
    return HttpStatusError(message, status=code, retry_after=retry_after, hint=fix)


def get_json(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    env_var: str | None = None,
    retry: RetryPolicy = DEFAULT_RETRY,
) -> Any:
    """The JSON document at ``url`` (retried as :func:`open_url` is); a body that is not JSON is
    a :class:`ProviderError` too."""
    with open_url(
        url, headers=headers, timeout_s=timeout_s, env_var=env_var, retry=retry
    ) as response:
        body = response.read()
    try:
        return json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ProviderError(
            f"{shown_url(url)} did not return JSON ({not_json(body, e)})",
            hint="the endpoint or its mirror returned something else; retry later",
        ) from None


_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.I | re.S)


def not_json(body: bytes, error: Exception) -> str:
    """What came back instead of JSON: an HTML page by its title (a proxy's or a mirror's error
    page, "502 Bad Gateway"), an empty body, or the parser's complaint.  Was the parser's alone:
    "JSONDecodeError: Expecting value: line 1 column 1 (char 0)" for all three."""
    head = body[:4096].lstrip()
    if not head:
        return "an empty body"
    if head[:1] == b"<" and (b"<html" in head.lower() or b"<!doctype" in head.lower()):
        title = _TITLE.search(head)
        named = title.group(1).decode("utf-8", "replace").strip()[:80] if title else ""
        return f"an HTML page: {named!r}" if named else "an HTML page"
    return f"{type(error).__name__}: {error}"
