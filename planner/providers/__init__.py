"""Cloud provider adapters: live specs and prices into the common offer table (refresh path only).

Each adapter implements :class:`planner.providers.base.Provider` and is registered by name in
:data:`PROVIDERS`, the one explicit registry; adapters (and their SDKs) load when first built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from planner.errors import UnknownNameError

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
