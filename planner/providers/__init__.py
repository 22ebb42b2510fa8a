"""Cloud provider adapters: live specs and prices into the common offer table (refresh path only).

Each adapter implements :class:`planner.providers.base.Provider` and is registered by name in
:data:`PROVIDERS`, the one explicit registry; adapters (and their SDKs) load when first built.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from planner.errors import ConfigError, UnknownNameError

if TYPE_CHECKING:  # the adapters' interface; loading it is not needed to read the registry
    from planner.providers.base import Provider


def _aws() -> Provider:
    from planner.providers.aws import AwsProvider

    return AwsProvider()


def _gcp() -> Provider:
    from planner.providers.gcp import GcpProvider

    return GcpProvider()


def _azure() -> Provider:
    from planner.providers.azure import AzureProvider

    return AzureProvider()


def _lambda() -> Provider:
    from planner.providers.lambda_cloud import LambdaProvider

    return LambdaProvider()


# The explicit registry: name -> factory building the adapter with its default (live) clients.
PROVIDERS: dict[str, Callable[[], Provider]] = {
    "aws": _aws,
    "gcp": _gcp,
    "azure": _azure,
    "lambda": _lambda,
}

# Regions refreshed when the user names none: the regions of the bundled snapshot with most GPU types.
DEFAULT_REGIONS: dict[str, tuple[str, ...]] = {
    "aws": ("us-east-1", "us-west-2"),
    "gcp": ("us-central1", "us-east4"),
    "azure": ("eastus", "westus2"),
    # Lambda: every bundled region lists all 22 types at one price; two US regions stand for them.
    "lambda": ("us-east-1", "us-west-1"),
}


# How each provider writes its region names (their consoles' and APIs' forms): a region typed in
# another form (mars-1, us-east1 for AWS, westeurope for AWS) is refused before minutes of fetching
# end in a network error (was: "aws mars-1 failed: could not reach ...").
REGION_FORMS: dict[str, tuple[str, str]] = {
    # (us-gov-west-1, us-isob-east-1, the European Sovereign Cloud's eusc-de-east-1)
    "aws": (r"[a-z]{2,4}(-[a-z]+)+-\d{1,2}", "us-east-1, eu-west-2, ap-southeast-3"),
    "gcp": (r"[a-z]+-[a-z]+\d{1,2}", "us-central1, europe-west4, asia-southeast1"),
    # (the canary regions: eastus2euap, centraluseuap)
    "azure": (r"[a-z]+\d?[a-z]*", "eastus, westus2, westeurope, southeastasia"),
    "lambda": (r"[a-z]+-[a-z]+-\d{1,2}", "us-east-1, us-west-1, europe-central-1"),
}


def refresh_advice(provider: str) -> str:
    """What to tell a user whose ``provider`` prices are old: the refresh command when an adapter
    is registered for it, else where its prices come from.

    The registry is read now, not at import: adapters are added to it (and tests register fakes).
    Here beside the registry, not in :mod:`planner.catalog.refresh`: a quote's stale-price
    warning reads it without loading the refresh machinery.
    """
    if provider in PROVIDERS:
        return f"refresh with `planner prices refresh --provider {provider}` before relying on them"
    return (
        f"planner has no refresh adapter for {provider}: its prices come only with a new planner"
        " release (the bundled snapshot)"
    )


def get_provider(name: str) -> Provider:
    """The adapter registered as ``name``; unknown names get "did you mean" suggestions."""
    try:
        factory = PROVIDERS[name.strip().lower()]
    except KeyError:
        raise UnknownNameError("provider", name, PROVIDERS) from None
    return factory()


# The environment variables each adapter reads its endpoints' mirrors from (a base URL each) and
# its API keys from (sent as they are: an HTTP header or a query parameter).
MIRROR_VARIABLES: dict[str, tuple[str, ...]] = {
    "aws": (
        "PLANNER_AWS_PRICING_URL",
        "PLANNER_AWS_SPOT_ADVISOR_URL",
        "PLANNER_AWS_SPOT_PRICES_URL",
    ),
    "gcp": ("PLANNER_GCP_BILLING_URL", "PLANNER_GCP_COMPUTE_URL"),
    "azure": ("PLANNER_AZURE_PRICES_URL",),
    "lambda": ("PLANNER_LAMBDA_API_URL",),
}
KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "gcp": ("PLANNER_GCP_API_KEY", "GOOGLE_API_KEY"),
    "lambda": ("LAMBDA_API_KEY",),
}


def check_environment(names: Iterable[str], environ: Mapping[str, str] | None = None) -> None:
    """A ConfigError for a setting of the providers ``names`` that no fetch can use, before a
    refresh fetches anything: a mirror variable that is not an http(s) URL (a port out of range,
    an unclosed IPv6 bracket), PLANNER_AWS_PRICE_SOURCE not a price source, an API key with a
    line break or another character no key has.  Each was every region's failure: exit 1, "retry
    later", and for a key or a port "unexpected ValueError ... this is a bug".  A key's value is
    never shown."""
    from planner.errors import suggestion_hint
    from planner.providers.http import checked_mirror_url

    env = os.environ if environ is None else environ
    chosen = list(names)
    for name in chosen:
        for variable in MIRROR_VARIABLES.get(name, ()):
            value = env.get(variable, "").strip()
            if value:
                checked_mirror_url(variable, value)
        for variable in KEY_VARIABLES.get(name, ()):
            key = env.get(variable, "").strip()
            if key and not (key.isascii() and key.isprintable()):
                raise ConfigError(
                    f"{variable} holds a line break, a control character or a non-ASCII "
                    "character, which no API key has (the value is not shown)",
                    hint=f"copy the key again and set it on one line: export {variable}=<key>",
                )
    if "aws" in chosen:
        from planner.providers.aws import PRICE_SOURCES, SOURCE_ENV

        source = env.get(SOURCE_ENV, "").strip().lower()
        if source and source not in PRICE_SOURCES:
            raise ConfigError(
                f"{SOURCE_ENV}={source!r} is not a price source ({', '.join(PRICE_SOURCES)})",
                hint=suggestion_hint("price source", source, PRICE_SOURCES)
                + " (or unset it: auto)",
            )
