"""Logging for the command line: planner's loggers follow ``-v``/``-vv``, other libraries stay at
WARNING, and no credential reaches a log line.

Cloud SDKs log every request at DEBUG, headers included: botocore's request log carries the AWS
access key id (in ``Authorization: AWS4-HMAC-SHA256 Credential=AKIA...``) and the session token
(``X-Amz-Security-Token``).  So ``-vv`` is planner's debug output only, and a filter on the root
handlers (:class:`RedactSecrets`) rewrites whatever looks like a credential in any record that
still gets through (a vendor message at WARNING, an exception's text) as ``[redacted]``.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import sys

REDACTED = "[redacted]"

# Held at WARNING whatever -v says: their DEBUG output is request logs with headers.
THIRD_PARTY_LOGGERS = (
    "botocore",
    "boto3",
    "urllib3",
    "s3transfer",
    "azure",
    "google",
    "google.auth",
    "httpx",
    "httpcore",
    "requests",
    "msal",
)

# Held at ERROR: their warnings say what the planner's own error then says better
# (google.auth's default-credentials probe warns of the metadata server before the refresh
# reports "no GCP credentials" with its fix).
QUIETER_LOGGERS = ("google.auth._default",)

# Environment variables whose values are secrets (their values are redacted wherever they appear).
SECRET_VARIABLES = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AZURE_CLIENT_SECRET",
    "GOOGLE_API_KEY",
    "LAMBDA_API_KEY",
)
_SECRET_VARIABLE = r"PLANNER_\w+_API_KEY|\w*(SECRET|TOKEN|PASSWORD)\w*|\w+_API_KEY"
# Shorter values (a "1", a "true") would redact ordinary words; real keys are far longer.
_MIN_SECRET_LENGTH = 6

_PATTERNS = (
    # AWS access key ids: AKIA (long-term) and ASIA (temporary) and the other IAM id prefixes
    # (AWS IAM User Guide, "Unique identifiers"): four letters and sixteen of [A-Z2-7].
    r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)[A-Z0-9]{16}\b",
    # An Authorization header's value, as a dict repr, JSON or an HTTP line: to the quote or line end.
    r"""(?i)(\bauthorization\b['"]?\s*[:=]\s*['"]?)[^'"\r\n]+""",
    # Session tokens and signatures in headers or queries (X-Amz-Security-Token, X-Amz-Signature).
    (
        r"""(?i)(\bx-amz-(?:security-token|signature|credential)\b['"]?\s*[:=]\s*['"]?)"""
        r"""[^'"\s&,}]+"""
    ),
    # key= and its kin in a query string (Google API keys travel as ?key=...).
    (
        r"""(?i)([?&;](?:key|api[-_]?key|access[-_]?token|token|sig|signature|secret)=)"""
        r"""[^&\s'"#]+"""
    ),
    # "api_key": "...", secret: ... in text or a repr
    (
        r"""(?i)(\b(?:api[-_]?key|client[-_]?secret|secret[-_]?access[-_]?key|session[-_]?token)"""
        r"""\b['"]?\s*[:=]\s*['"]?)[^'"\s,}]+"""
    ),
)


@functools.cache
def _compiled() -> tuple[re.Pattern[str], tuple[re.Pattern[str], ...]]:
    """(:data:`_SECRET_VARIABLE`, :data:`_PATTERNS`) compiled, on first use: every command
    configures logging, few ever log a line, and compiling them cost each start ~0.5 ms."""
    return re.compile(_SECRET_VARIABLE), tuple(re.compile(p) for p in _PATTERNS)


def secret_values(environ: os._Environ[str] | dict[str, str] | None = None) -> list[str]:
    """The values of the secret environment variables now set, longest first."""
    env = os.environ if environ is None else environ
    values = {
        value
        for name, value in env.items()
        if (name in SECRET_VARIABLES or _compiled()[0].fullmatch(name))
        and len(value) >= _MIN_SECRET_LENGTH
    }
    return sorted(values, key=len, reverse=True)


def redact(text: str, environ: os._Environ[str] | dict[str, str] | None = None) -> str:
    """``text`` with every credential-looking part replaced by ``[redacted]``."""
    for value in secret_values(environ):
        text = text.replace(value, REDACTED)
    for pattern in _compiled()[1]:
        text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + REDACTED, text)
    return text


class RedactSecrets(logging.Filter):
    """Rewrites each record's message (arguments merged in) and exception text through
    :func:`redact`; drops nothing."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: let the handler report it as logging does
            return True
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


class _Format(logging.Formatter):
    """planner's own warnings as the CLI prints its others, ``warning: <message>`` (a budget
    file's price above on-demand beside its stale-price warning: was ``WARNING
    planner.ownership.budget_spec: ...``); other records as ``LEVEL logger: message``."""

    def __init__(self) -> None:
        super().__init__("%(levelname)s %(name)s: %(message)s")
        self._warning = logging.Formatter("warning: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        mine = record.name == "planner" or record.name.startswith("planner.")
        if mine and record.levelno == logging.WARNING:
            return self._warning.format(record)
        return super().format(record)


class _PlannerHandler(logging.StreamHandler):  # type: ignore[type-arg,unused-ignore]
    """The CLI's own handler (found and replaced when the CLI runs again in one process)."""


def configure_logging(verbose: int) -> None:
    """Log to stderr: WARNING, ``-v`` planner's INFO, ``-vv`` planner's DEBUG; other libraries at
    WARNING always; every root handler redacts secrets.

    Like :func:`logging.basicConfig`, the stderr handler is added only when the root logger has
    no other handler (a host application or a test runner that captures logs keeps its own), but
    the redaction filter goes on every root handler.
    """
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _PlannerHandler)]:
        root.removeHandler(old)
    if not root.handlers:
        handler = _PlannerHandler(sys.stderr)
        handler.setFormatter(_Format())
        root.addHandler(handler)
    for each in root.handlers:
        if not any(isinstance(f, RedactSecrets) for f in each.filters):
            each.addFilter(RedactSecrets())
    root.setLevel(logging.WARNING)
    logging.getLogger("planner").setLevel(max(logging.WARNING - 10 * verbose, logging.DEBUG))
    for name in THIRD_PARTY_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    for name in QUIETER_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
