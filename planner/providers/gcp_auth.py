"""How the GCP adapter signs in, which endpoints it calls, and its failures in our words.

Two ways in (``shared/reference/provider-apis.md`` §2b):

- an **API key** (``PLANNER_GCP_API_KEY``, else ``GOOGLE_API_KEY``) for the Cloud Billing Catalog.
  Anyone with a Google account can make one (console, APIs & Services, Credentials) in any project
  with the Cloud Billing API enabled.  It is passed as ``client_options={"api_key": ...}``, which
  google-auth sends as the ``x-goog-api-key`` header (``google/auth/api_key.py``), never in the URL;
  no message, log line or row repeats it.  The Compute API takes no API keys, so with a key alone
  the machine shapes come from the bundled table (:mod:`planner.providers.gcp_machines`).
- **application-default credentials** (a service-account key file named by
  ``GOOGLE_APPLICATION_CREDENTIALS``, or ``gcloud auth application-default login``) for both the
  catalog and, with a project, ``machineTypes.aggregatedList``.

Mirrors: ``PLANNER_GCP_BILLING_URL`` and ``PLANNER_GCP_COMPUTE_URL`` replace the two APIs' base URLs
(``api_endpoint`` client option; ``http://`` is accepted, for a local mirror).  Both clients use the
REST transport: plain HTTPS that a proxy or mirror can carry, and that fails at once when the host
cannot be reached (the gRPC default would keep reconnecting).

Every failure leaves as one :class:`ProviderError` with a fix: no credentials, a bad key file, an
unreachable endpoint (within the call timeout, ``planner.providers.http.DEFAULT_TIMEOUT_S`` by
default), a refused call, a malformed page.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from planner.config.yamlfile import names_a_path
from planner.errors import ProviderError, shown_path
from planner.providers.base import require
from planner.providers.http import shown_url

log = logging.getLogger(__name__)

API_KEY_VARIABLES = ("PLANNER_GCP_API_KEY", "GOOGLE_API_KEY")  # first set wins
BILLING_URL_VARIABLE = "PLANNER_GCP_BILLING_URL"
COMPUTE_URL_VARIABLE = "PLANNER_GCP_COMPUTE_URL"
BILLING_URL = "https://cloudbilling.googleapis.com"
COMPUTE_URL = "https://compute.googleapis.com"
# The variable through which google.auth.default() is pointed at a key file (google-auth docs,
# "How Application Default Credentials works": it is the first place ADC looks).
CREDENTIALS_VARIABLE = "GOOGLE_APPLICATION_CREDENTIALS"
SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)

_CREDENTIALS_FIX = (
    f"point {CREDENTIALS_VARIABLE} at a service-account JSON key file,"
    " or unset it and run `gcloud auth application-default login`"
)
_NO_CREDENTIALS_FIX = (
    "set PLANNER_GCP_API_KEY (or GOOGLE_API_KEY) to an API key of any Google Cloud project with"
    " the Cloud Billing API enabled, or run `gcloud auth application-default login`"
)

# What google.auth.default() returns: (credentials, project id or None).
DefaultCredentials = Callable[[], tuple[Any, str | None]]


@dataclass(frozen=True)
class GcpSettings:
    """The environment's say in a GCP refresh (read once, from ``os.environ`` by default)."""

    api_key: str | None = None
    api_key_variable: str | None = None
    billing_url: str | None = None  # a mirror of cloudbilling.googleapis.com
    compute_url: str | None = None  # a mirror of compute.googleapis.com
    credentials_file: str | None = None  # GOOGLE_APPLICATION_CREDENTIALS

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> GcpSettings:
        def value(name: str) -> str | None:
            return environ.get(name, "").strip() or None

        key_variable = next((v for v in API_KEY_VARIABLES if value(v)), None)
        return cls(
            api_key=value(key_variable) if key_variable else None,
            api_key_variable=key_variable,
            billing_url=(value(BILLING_URL_VARIABLE) or "").rstrip("/") or None,
            compute_url=(value(COMPUTE_URL_VARIABLE) or "").rstrip("/") or None,
            credentials_file=value(CREDENTIALS_VARIABLE),
        )

    def __repr__(self) -> str:  # the key stays out of reprs, logs and tracebacks
        key = f"<{self.api_key_variable}>" if self.api_key else None
        return (
            f"GcpSettings(api_key={key}, billing_url={self.billing_url!r},"
            f" compute_url={self.compute_url!r}, credentials_file={self.credentials_file!r})"
        )

    def scrub(self, text: str) -> str:
        """``text`` with the API key blanked (a mirror could echo a request header)."""
        return text.replace(self.api_key, "***") if self.api_key else text


def google_default() -> tuple[Any, str | None]:
    """google.auth.default() with the cloud-platform scope (what both APIs accept)."""
    google_auth = require("google.auth", "gcp")
    credentials, project = google_auth.default(scopes=list(SCOPES))
    return credentials, project


def auth_error(error: Exception, what: str, settings: GcpSettings) -> ProviderError:
    """A google.auth failure during ``what`` as a ProviderError naming the credentials in play.

    The message names the key file's path, never its contents, and leaves the vendor's text out: a
    rejected token exchange can echo parts of the request.
    """
    auth_exceptions = require("google.auth.exceptions", "gcp")
    path = settings.credentials_file
    if isinstance(error, auth_exceptions.DefaultCredentialsError | OSError):
        if path and not names_a_path(path):  # (a path too long for the file system: none)
            return ProviderError(
                f"{CREDENTIALS_VARIABLE} names {shown_path(path)}, which does not exist",
                hint=_CREDENTIALS_FIX,
            )
        if path:
            return ProviderError(
                f"{CREDENTIALS_VARIABLE} names {path}, which is not a usable credentials file",
                hint=_CREDENTIALS_FIX,
            )
        return ProviderError(f"no GCP credentials for {what}", hint=_NO_CREDENTIALS_FIX)
    used = (
        f"the key file {path} ({CREDENTIALS_VARIABLE})"
        if path
        else "application-default credentials"
    )
    if isinstance(error, auth_exceptions.TransportError):
        return ProviderError(
            f"could not reach Google's sign-in endpoint to use {used} during {what}",
            hint="check the network connection (or the HTTPS_PROXY setting)",
        )
    return ProviderError(
        f"GCP sign-in with {used} failed during {what} ({type(error).__name__})",
        hint="check that the credentials are still valid; " + _CREDENTIALS_FIX,
    )


def application_default(
    settings: GcpSettings, lookup: DefaultCredentials, *, what: str, required: bool
) -> tuple[Any, str | None] | None:
    """The application-default credentials and project, or None when there are none and they are
    not ``required``.  A key file that is named but unusable is an error either way: the user
    meant it (issue 11)."""
    auth_exceptions = require("google.auth.exceptions", "gcp")
    try:
        return lookup()
    except (auth_exceptions.DefaultCredentialsError, OSError) as e:
        # OSError: a key-file path that is a folder or unreadable (google.auth opens it unguarded)
        if required or settings.credentials_file:
            raise auth_error(e, what, settings) from e
        return None
    except auth_exceptions.GoogleAuthError as e:
        raise auth_error(e, what, settings) from e


def _connection_reason(error: Exception, timeout_s: float) -> str:
    """Why a connection failed, from requests/urllib3's exception types (not their text)."""
    requests_exceptions = require("requests.exceptions", "gcp")
    urllib3_exceptions = require("urllib3.exceptions", "gcp")
    if isinstance(error, requests_exceptions.Timeout):
        return f"no answer within {timeout_s:g} s"
    cause = getattr(error.args[0], "reason", None) if error.args else None
    if isinstance(cause, urllib3_exceptions.NameResolutionError):
        return "its host name could not be resolved"
    if isinstance(cause, urllib3_exceptions.NewConnectionError):
        return "the connection was refused or the network is unreachable"
    if isinstance(cause, urllib3_exceptions.TimeoutError):
        return f"no answer within {timeout_s:g} s"
    if isinstance(cause, urllib3_exceptions.SSLError):
        return "the TLS handshake failed"
    return f"the connection failed ({type(cause or error).__name__})"


@dataclass(frozen=True)
class Call:
    """One API the adapter calls: for messages and fixes."""

    what: str  # "cloudbilling skus.list"
    endpoint: str  # base URL actually used
    mirror_variable: str
    denied_fix: str  # what to grant or enable when the call is refused


@contextlib.contextmanager
def translated(call: Call, settings: GcpSettings, timeout_s: float) -> Iterator[None]:
    """Turn google-auth, google-api-core and requests failures of ``call`` into ProviderErrors."""
    exceptions = require("google.api_core.exceptions", "gcp")
    auth_exceptions = require("google.auth.exceptions", "gcp")
    json_format = require("google.protobuf.json_format", "gcp")
    requests_exceptions = require("requests.exceptions", "gcp")
    try:
        yield
    except (
        requests_exceptions.InvalidURL,
        requests_exceptions.InvalidSchema,
        requests_exceptions.MissingSchema,
    ) as e:
        raise ProviderError(
            f"{call.mirror_variable} is {call.endpoint!r}, which is not a usable API base URL",
            hint="set it to a base URL such as https://host[:port], or unset it",
        ) from e
    except requests_exceptions.RequestException as e:
        raise ProviderError(
            f"could not reach {shown_url(call.endpoint)} for {call.what}:"
            f" {_connection_reason(e, timeout_s)}",
            hint="check the network connection (or the HTTPS_PROXY setting),"
            f" or set {call.mirror_variable} to a reachable mirror of this API",
        ) from None  # the vendor text repeats the request URL
    except auth_exceptions.GoogleAuthError as e:
        raise auth_error(e, call.what, settings) from e
    except (exceptions.PermissionDenied, exceptions.Forbidden, exceptions.Unauthorized) as e:
        raise ProviderError(
            f"GCP denied {call.what}: {settings.scrub(str(e.message))}", hint=call.denied_fix
        ) from e
    except exceptions.RetryError as e:
        raise ProviderError(
            f"GCP {call.what} kept failing after retries ({settings.scrub(str(e.cause))})",
            hint="retry later (throttled or unavailable)",
        ) from e
    except exceptions.GoogleAPICallError as e:
        if settings.api_key and e.code == 400:  # "API key not valid. Please pass a valid API key."
            raise ProviderError(
                f"GCP refused the API key in {settings.api_key_variable} for {call.what}:"
                f" {settings.scrub(str(e.message))}",
                hint="check the key (console, APIs & Services, Credentials) or unset it to use"
                " application-default credentials",
            ) from e
        raise ProviderError(
            f"GCP {call.what} failed: {e.code} {settings.scrub(str(e.message))}"
        ) from e
    except (json_format.Error, ValueError) as e:  # ParseError and friends: a malformed page
        raise ProviderError(
            f"GCP {call.what} returned a malformed response ({type(e).__name__}:"
            f" {settings.scrub(str(e))})",
            hint="the response was truncated or the API changed shape; retry the refresh",
        ) from e


def default_retry() -> Any:
    """Retry throttling and transient server errors (``list_skus`` has no default retry).

    An unreachable host is not retried: its failure is reported at once.
    """
    retry = require("google.api_core.retry", "gcp")
    exceptions = require("google.api_core.exceptions", "gcp")
    predicate = retry.if_exception_type(
        exceptions.TooManyRequests,
        exceptions.InternalServerError,
        exceptions.BadGateway,
        exceptions.ServiceUnavailable,
        exceptions.GatewayTimeout,
    )
    return retry.Retry(
        predicate=predicate, initial=1.0, maximum=30.0, multiplier=2.0, timeout=120.0
    )


def _options(endpoint: str | None, **options: Any) -> dict[str, Any]:
    return {**options, **({"api_endpoint": endpoint} if endpoint else {})}


def _built(factory: Callable[[], Any], variable: str, url: str | None, default: str) -> Any:
    """A client from ``factory``; a mirror URL the client cannot use is the user's to fix."""
    try:
        return factory()
    except ValueError as e:  # e.g. "Unexpected hostname structure" from the REST transport
        raise ProviderError(
            f"{variable} is {url!r}, which is not a usable API base URL",
            hint=f"set it to a base URL such as {default}, or unset it",
        ) from e


def catalog_client(settings: GcpSettings, credentials: Any) -> Any:
    """A CloudCatalogClient over REST: with the API key when one is set, else ``credentials``."""
    billing_v1 = require("google.cloud.billing_v1", "gcp")

    def build() -> Any:
        if settings.api_key:
            options = _options(settings.billing_url, api_key=settings.api_key)
            return billing_v1.CloudCatalogClient(transport="rest", client_options=options)
        options = _options(settings.billing_url)
        return billing_v1.CloudCatalogClient(
            credentials=credentials, transport="rest", client_options=options
        )

    return _built(build, BILLING_URL_VARIABLE, settings.billing_url, BILLING_URL)


def machine_types_client(settings: GcpSettings, credentials: Any) -> Any:
    """A MachineTypesClient over REST signed in with application-default ``credentials``."""
    compute_v1 = require("google.cloud.compute_v1", "gcp")

    def build() -> Any:
        options = _options(settings.compute_url)
        return compute_v1.MachineTypesClient(
            credentials=credentials, transport="rest", client_options=options
        )

    return _built(build, COMPUTE_URL_VARIABLE, settings.compute_url, COMPUTE_URL)


BILLING_DENIED_FIX = (
    "enable the Cloud Billing API in the key's or credentials' project; with"
    " `gcloud auth application-default login` credentials also run"
    " `gcloud auth application-default set-quota-project PROJECT`"
)
COMPUTE_DENIED_FIX = (
    "grant compute.machineTypes.list (roles/compute.viewer) to the credentials in use and enable"
    " the Compute Engine API in the project"
)


def billing_call(settings: GcpSettings) -> Call:
    return Call(
        "cloudbilling skus.list",
        settings.billing_url or BILLING_URL,
        BILLING_URL_VARIABLE,
        BILLING_DENIED_FIX,
    )


def compute_call(settings: GcpSettings) -> Call:
    return Call(
        "machineTypes.aggregatedList",
        settings.compute_url or COMPUTE_URL,
        COMPUTE_URL_VARIABLE,
        COMPUTE_DENIED_FIX,
    )
