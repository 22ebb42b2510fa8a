"""The Azure Retail Prices and Lambda Cloud APIs on 127.0.0.1, replaying recorded pages.

The adapters run unchanged: their real HTTP code (:mod:`planner.providers.http`) talks to a
:class:`~tests.provider_fakes.FakeHttpServer` whose routes answer from ``tests/fixtures/azure/`` and
``tests/fixtures/lambda/`` the way the services do (the Retail API's OData filter and
``NextPageLink`` paging, Lambda's bearer key).  Azure's resource-SKU API is served from the
recording ``provider_fakes`` already uses, through the real azure-mgmt-compute client.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.provider_fakes import (
    AZURE_SKUS,
    AZURE_SUBSCRIPTION,
    FakeAzureCredential,
    FakeHttpServer,
    Reply,
    Route,
    Seen,
    azure_sku_route,
    frozen_clock,
    load,
)

AZURE_RETAIL = "/api/retail/prices"
AZURE_PAGES = "retail_prices_gpu_eastus.json"
LAMBDA_TYPES = "/api/v1/instance-types"
LAMBDA_KEY = "test-lambda-key-not-a-secret"


def _region_of(odata: str) -> str | None:
    for clause in odata.split(" and "):
        if clause.startswith("armRegionName eq '"):
            return clause.removeprefix("armRegionName eq '").removesuffix("'")
    return None


def azure_retail_route(pages: list[dict[str, Any]] | None = None) -> Route:
    """The Retail Prices API for the region-wide GPU query of the recorded region (eastus).

    The first request must carry the filter the adapter documents; the next pages are asked for by
    the ``$skip`` of ``NextPageLink`` (recorded with prices.azure.com's own host, so the adapter
    must replay the link's query against its configured base URL to land here).  Any other region
    gets the empty answer the real API gives a filter that matches nothing.
    """
    recorded = pages if pages is not None else load("azure", AZURE_PAGES)
    region = _region_of(_filter_of(recorded[0]["NextPageLink"]))

    def serve(req: Seen) -> Reply:
        odata = (req.query.get("$filter") or [""])[0]
        if req.query.get("api-version") != ["2023-01-01-preview"]:
            return Reply(400, {"Error": {"Code": "InvalidApiVersion"}})
        if req.query.get("currencyCode") != ["'USD'"]:  # the recorded rows are USD's
            return Reply(400, {"Error": {"Code": "UnexpectedCurrency"}})
        if "serviceName eq 'Virtual Machines'" not in odata or (
            "contains(armSkuName, 'Standard_N')" not in odata
        ):
            return Reply(400, {"Error": {"Code": "UnexpectedFilter", "Message": odata}})
        if _region_of(odata) != region:
            return Reply(200, _envelope([], None))
        skip = int((req.query.get("$skip") or ["0"])[0])
        return Reply(200, recorded[skip // 1000])

    return serve


def _filter_of(link: str) -> str:
    return parse_qs(urlsplit(link).query)["$filter"][0]


def _envelope(items: list[Any], link: str | None) -> dict[str, Any]:
    return {
        "BillingCurrency": "USD",
        "CustomerEntityId": "Default",
        "CustomerEntityType": "Retail",
        "Items": items,
        "NextPageLink": link,
        "Count": len(items),
    }


def azure_routes(server: FakeHttpServer) -> None:
    server.route(AZURE_SKUS, azure_sku_route(server))
    server.route(AZURE_RETAIL, azure_retail_route())


def azure_public_provider_at(url: str, **kw: Any) -> Any:
    """An AzureProvider with no subscription: Retail Prices at ``url``, specs from the table."""
    from planner.providers.azure import AzureProvider, RetailPricesClient

    retail = RetailPricesClient(base_url=url + AZURE_RETAIL, timeout_s=5)
    return AzureProvider(retail_client=retail, environ={}, clock=frozen_clock, **kw)


def azure_subscription_provider_at(url: str) -> Any:
    """An AzureProvider whose real azure-mgmt-compute client and Retail client talk to ``url``."""
    from azure.core.pipeline.policies import HeadersPolicy
    from azure.mgmt.compute import ComputeManagementClient

    from planner.providers.azure import AzureProvider, RetailPricesClient

    compute = ComputeManagementClient(
        FakeAzureCredential(),
        AZURE_SUBSCRIPTION,
        base_url=url,
        # The bearer-token policy refuses plain http: the fake server gets a fixed header instead.
        authentication_policy=HeadersPolicy({"Authorization": "Bearer fake-token"}),
        retry_total=0,
    )
    retail = RetailPricesClient(base_url=url + AZURE_RETAIL, timeout_s=5)
    return AzureProvider(compute_client=compute, retail_client=retail, clock=frozen_clock)


def lambda_route(data: Mapping[str, Any] | None = None) -> Route:
    """``GET /api/v1/instance-types``: the recorded catalog for the right bearer key, else 401."""
    body = {"data": dict(data)} if data is not None else load("lambda", "instance_types.json")

    def serve(req: Seen) -> Reply:
        if req.headers.get("Authorization") != f"Bearer {LAMBDA_KEY}":
            # Lambda's error envelope (OpenAPI ``ApiErrorUnauthorized``).
            error = {"code": "global/invalid-api-key", "message": "API key was invalid"}
            return Reply(401, {"error": error})
        return Reply(200, body)

    return serve


def lambda_provider_at(url: str, *, api_key: str | None = LAMBDA_KEY, **kw: Any) -> Any:
    """A LambdaProvider whose real HTTP path talks to ``url`` (the key passed, not read from env)."""
    from planner.providers.lambda_cloud import LambdaProvider

    return LambdaProvider(
        api_key=api_key,
        base_url=url + "/api/v1",
        environ={},
        timeout_s=5,
        clock=frozen_clock,
        **kw,
    )
