"""Plain HTTPS reads of the providers' public price files, with a mirror setting and clear errors.

The public endpoints (AWS Price List bulk files and Spot Advisor data, the Azure Retail Prices API,
Lambda's instance-types API) need no cloud account, so a refresh reads them with the standard
library: no SDK, no credentials, nothing to install.  Each endpoint has a documented environment
variable that replaces its base URL (a mirror, a proxy, an air-gapped copy): :func:`base_url`.

Every failure becomes one :class:`~planner.errors.ProviderError` naming the URL (without its query,
which may carry a key) and a fix, raised within ``timeout_s`` when the host cannot be reached.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import IO, Any

from planner.errors import ProviderError

# Seconds to wait for a connection or a read before saying the endpoint could not be reached.
DEFAULT_TIMEOUT_S = 15.0
USER_AGENT = "planner-price-refresh"


def base_url(env_var: str, default: str) -> str:
    """The base URL of an endpoint: ``$env_var`` when set (a mirror or proxy), else ``default``."""
    value = os.environ.get(env_var, "").strip()
    return (value or default).rstrip("/")


def shown_url(url: str) -> str:
    """``url`` without its query string or user info, safe to print (keys travel in queries)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


def _error(url: str, reason: str, env_var: str | None) -> ProviderError:
    fix = "check the network connection"
    if env_var:
        fix += f", or set {env_var} to a reachable mirror of this endpoint"
    return ProviderError(f"could not reach {shown_url(url)}: {reason}", hint=fix)


@contextmanager
def open_url(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    env_var: str | None = None,
) -> Iterator[IO[bytes]]:
    """An open binary stream of ``url`` (read it in pieces: bulk price files are large).

    Raises :class:`ProviderError` for an unreachable host, a timeout or an HTTP error status; the
    message names the URL without its query, never a header value.
    """
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, **(headers or {})})
    try:
        response = urllib.request.urlopen(request, timeout=timeout_s)
    except urllib.error.HTTPError as e:
        e.close()
        raise _http_status_error(url, e.code, e.reason, env_var) from None
    except (urllib.error.URLError, TimeoutError, OSError) as e:
        reason = getattr(e, "reason", None) or e
        raise _error(url, str(reason) or type(e).__name__, env_var) from None
    try:
        yield response
    except (TimeoutError, OSError) as e:
        raise _error(url, f"the connection failed while reading ({e})", env_var) from None
    finally:
        response.close()


def _http_status_error(url: str, code: int, reason: object, env_var: str | None) -> ProviderError:
    if code in (401, 403):
        return ProviderError(
            f"{shown_url(url)} refused the request (HTTP {code} {reason})",
            hint="check the API key or credentials this endpoint needs",
        )
    if code == 404:
        return ProviderError(
            f"{shown_url(url)} has no such file (HTTP 404)",
            hint=f"the region or file may not exist; check {env_var} if it points at a mirror"
            if env_var
            else "the region or file may not exist",
        )
    return _error(url, f"HTTP {code} {reason}", env_var)


def get_json(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    env_var: str | None = None,
) -> Any:
    """The JSON document at ``url``; a body that is not JSON is a :class:`ProviderError` too."""
    with open_url(url, headers=headers, timeout_s=timeout_s, env_var=env_var) as response:
        body = response.read()
    try:
        return json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ProviderError(
            f"{shown_url(url)} did not return JSON ({e.__class__.__name__}: {e})",
            hint="the endpoint or its mirror returned something else; retry later",
        ) from None
