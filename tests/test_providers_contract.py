"""One contract, every adapter: what any provider's fetch must produce (PuLP-style solver suite)."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from typing import Any

import pandas as pd
import pytest

from planner.errors import UnknownNameError
from planner.gpu_specs import load_gpu_catalog
from planner.providers import PROVIDERS, get_provider
from planner.providers.base import FetchResult, Provider
from planner.schema import COLUMN_NAMES, validate_offers
from tests.provider_fakes import (
    FROZEN,
    FakeHttpServer,
    aws_provider,
    gcp_provider_at,
    gcp_routes,
)
from tests.public_api_fakes import (
    LAMBDA_TYPES,
    azure_public_provider_at,
    azure_routes,
    azure_subscription_provider_at,
    lambda_provider_at,
    lambda_route,
)


def _aws() -> Generator[tuple[Provider, list[str]], None, None]:
    yield aws_provider(), ["us-east-1"]


def _gcp() -> Generator[tuple[Provider, list[str]], None, None]:
    with FakeHttpServer() as server:
        gcp_routes(server)
        yield gcp_provider_at(server.url), ["us-central1", "europe-west4"]


def _azure() -> Generator[tuple[Provider, list[str]], None, None]:
    with FakeHttpServer() as server:
        azure_routes(server)
        yield azure_subscription_provider_at(server.url), ["eastus"]


def _azure_public() -> Generator[tuple[Provider, list[str]], None, None]:
    with FakeHttpServer() as server:
        azure_routes(server)
        yield azure_public_provider_at(server.url), ["eastus"]


def _lambda() -> Generator[tuple[Provider, list[str]], None, None]:
    with FakeHttpServer() as server:
        server.route(LAMBDA_TYPES, lambda_route())
        yield lambda_provider_at(server.url), ["us-east-1", "europe-central-1"]


# Every registered adapter, wired to its recorded fixtures; "name/variant" is the same adapter on
# another path (Azure without a subscription: specs from the bundled size table).
FAKED: dict[str, Callable[[], Generator[tuple[Provider, list[str]], None, None]]] = {
    "aws": _aws,
    "gcp": _gcp,
    "azure": _azure,
    "azure/no-subscription": _azure_public,
    "lambda": _lambda,
}

# Providers that publish reserved (committed-use) prices; Lambda lists on-demand only.
LISTS_RESERVATIONS = {"aws", "gcp", "azure"}


def test_every_registered_provider_is_under_contract() -> None:
    assert {name.split("/")[0] for name in FAKED} == set(PROVIDERS)


@pytest.fixture(params=sorted(FAKED))
def fetched(request: pytest.FixtureRequest) -> Iterator[tuple[str, Provider, FetchResult]]:
    gen = FAKED[request.param]()
    provider, regions = next(gen)
    yield request.param.split("/")[0], provider, provider.fetch(regions)
    gen.close()


def test_output_passes_the_schema(fetched: tuple[str, Provider, FetchResult]) -> None:
    _, _, result = fetched
    df = result.offers
    assert list(df.columns) == list(COLUMN_NAMES)
    assert len(df) >= 3
    pd.testing.assert_frame_equal(validate_offers(df), df)


def test_provider_name_and_provenance(fetched: tuple[str, Provider, FetchResult]) -> None:
    name, provider, result = fetched
    df = result.offers
    assert provider.name == name
    assert (df["provider"] == name).all()
    assert (df["source"] == provider.source).all() and provider.source.startswith(f"{name}:")
    assert (df["as_of"] == FROZEN.date().isoformat()).all()  # the injected clock, not today
    listed = (
        df["price_reserved_1y_usd_per_hour"].notna() | df["price_reserved_3y_usd_per_hour"].notna()
    )
    assert (df.loc[listed, "price_basis_reserved"] == "listed").all()
    assert listed.any() == (name in LISTS_RESERVATIONS)


def test_prices_positive_and_ordered(fetched: tuple[str, Provider, FetchResult]) -> None:
    _, _, result = fetched
    df = result.offers
    on_demand = df["price_on_demand_usd_per_hour"]
    assert (on_demand > 0).all()
    for column in (
        "price_spot_usd_per_hour",
        "price_reserved_1y_usd_per_hour",
        "price_reserved_3y_usd_per_hour",
    ):
        price = df[column].dropna()
        assert (price > 0).all(), column
        # Discounted prices stay below on-demand: a unit slip (term total, per-GPU) would break this.
        assert (price < on_demand[price.index]).all(), column
    both = (
        df["price_reserved_1y_usd_per_hour"].notna() & df["price_reserved_3y_usd_per_hour"].notna()
    )
    assert (
        df.loc[both, "price_reserved_3y_usd_per_hour"]
        < df.loc[both, "price_reserved_1y_usd_per_hour"]
    ).all()


def test_units(fetched: tuple[str, Provider, FetchResult]) -> None:
    _, _, result = fetched
    df = result.offers
    catalog = load_gpu_catalog()
    for row in df.to_dict("records"):
        gpu = catalog.resolve(row["gpu_model"])
        assert row["gpu_memory_gib"] == gpu.memory_gib
        assert row["gpu_memory_total_gib"] == pytest.approx(gpu.memory_gib * row["gpu_count"])
        assert 1 <= row["gpu_count"] <= 16
        assert 1 <= row["vcpus"] <= 448  # vCPUs, not milli-CPUs
        assert 4 <= row["host_memory_gib"] <= 4096  # GiB, not MiB or MB
        # No per-GPU price slipped in as an instance price: at least $0.05 per GPU-hour.
        assert row["price_on_demand_usd_per_hour"] / row["gpu_count"] >= 0.05


def test_unmapped_items_name_provider_and_reason(
    fetched: tuple[str, Provider, FetchResult],
) -> None:
    name, _, result = fetched
    assert result.unmapped  # every fixture holds something the adapter must refuse to guess
    assert all(u.provider == name and u.item and u.reason for u in result.unmapped)


@pytest.mark.parametrize("name", sorted(PROVIDERS))
def test_registry_builds_without_touching_the_network(name: str) -> None:
    provider: Any = get_provider(name)
    assert provider.name == name


def test_unknown_provider_suggests_names() -> None:
    with pytest.raises(UnknownNameError) as info:
        get_provider("awz")
    assert info.value.suggestions[0] == "aws"  # nearest first
