"""The Azure adapter through the real azure-mgmt-compute client and azure-core pipeline."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from planner.errors import ProviderError
from planner.providers.azure import classify, family_key
from tests.provider_fakes import (
    AZURE_RETAIL,
    AZURE_SKUS,
    FakeHttpServer,
    Reply,
    after,
    azure_provider_at,
    azure_retail_route,
    azure_routes,
    load,
)


@pytest.fixture
def server() -> Any:
    with FakeHttpServer() as s:
        azure_routes(s)
        yield s


def _row(df: Any, instance_type: str) -> dict[str, Any]:
    rows = df[df["instance_type"] == instance_type].to_dict("records")
    assert len(rows) == 1, instance_type
    return rows[0]


def _retail_hits(server: FakeHttpServer, size: str) -> int:
    return sum(1 for s in server.hits(AZURE_RETAIL) if size in s.query.get("$filter", [""])[0])


def test_specs_and_prices(server: FakeHttpServer) -> None:
    df = azure_provider_at(server.url).fetch_offers(["eastus"])
    nc = _row(df, "Standard_NC24ads_A100_v4")
    assert (nc["gpu_model"], nc["gpu_count"], nc["vcpus"], nc["host_memory_gib"]) == (
        "A100-80GB",
        1,
        24.0,
        220.0,
    )
    assert nc["price_on_demand_usd_per_hour"] == pytest.approx(
        3.673
    )  # newest row; the 2022 3.90 row is older
    assert nc["price_spot_usd_per_hour"] == pytest.approx(0.444433)
    # Reservation rows are the total for the term: 19000 / 8760 h and 38000 / 26280 h.
    assert nc["price_reserved_1y_usd_per_hour"] == pytest.approx(19000 / 8760, abs=1e-6)
    assert nc["price_reserved_3y_usd_per_hour"] == pytest.approx(38000 / 26280, abs=1e-6)
    # A Zone restriction (restrictionInfo.zones ["3"]) takes zone 3 away from this subscription.
    assert nc["zones"] == 2
    nd = _row(df, "Standard_ND96asr_v4")
    assert (nd["fabric"], nd["interconnect"]) == ("infiniband", "nvswitch")  # RdmaEnabled=True
    h100 = _row(df, "Standard_ND96isr_H100_v5")
    assert h100["gpu_count"] == 8  # the API says 12 (azure-cli#31176)
    assert h100["price_basis_reserved"] == "none"
    assert _row(df, "Standard_NC96ads_A100_v4")["interconnect"] == "pcie"


def test_what_is_left_out(server: FakeHttpServer) -> None:
    result = azure_provider_at(server.url).fetch(["eastus"])
    names = set(result.offers["instance_type"])
    reasons = {u.item: u.reason for u in result.unmapped}
    assert "fractional" in reasons["Standard_NV6ads_A10_v5"]  # 6 vCPUs of a 36-vCPU A10
    assert "standardNCSv2Family" in reasons["Standard_NC6s_v2"]  # P100: not in the family table
    # Restricted for the subscription in this location: not offered, not an error.
    assert "Standard_NC4as_T4_v3" not in names | set(reasons)
    assert not {"Standard_D8_v4", "Premium_LRS"} & (names | set(reasons))  # no GPUs / not a VM
    # ND GB200 v6 has no GPUs capability at all (SkyPilot fetch_azure.py AZURE_MISSING_GPU_COUNT):
    # reported, not mistaken for a CPU size and dropped.
    assert reasons["Standard_ND128isr_NDR_GB200_v6"] == "GPU size without a GPUs capability"


def test_non_primary_meter_rows_are_ignored(server: FakeHttpServer) -> None:
    nv = _row(azure_provider_at(server.url).fetch_offers(["eastus"]), "Standard_NV36ads_A10_v5")
    # The fixture's newer isPrimaryMeterRegion=false row says 2.0; the primary meter says 3.2.
    assert nv["price_on_demand_usd_per_hour"] == pytest.approx(3.2)


@pytest.mark.parametrize(
    ("family", "key"),
    [
        ("StandardNCADSA100v4Family", "standardncadsa100v4family"),
        ("standardNCADSA100v4Family", "standardncadsa100v4family"),  # casing varies by answer
        ("Standard NCASv3_T4 Family", "standardncasv3_t4family"),  # so do spaces
    ],
)
def test_family_key(family: str, key: str) -> None:
    assert family_key(family) == key


def test_next_links_are_followed_through_empty_pages(server: FakeHttpServer) -> None:
    azure_provider_at(server.url).fetch(["eastus"])
    rows = load("azure", "retail_prices_eastus.json")["Standard_NC24ads_A100_v4"]
    # one empty first page, then pages of 3 rows
    assert _retail_hits(server, "Standard_NC24ads_A100_v4") == 1 + -(-len(rows) // 3)
    assert [s.query.get("$skiptoken") for s in server.hits(AZURE_SKUS)] == [None, ["page2"]]


def test_throttling_with_retry_after_is_retried(server: FakeHttpServer) -> None:
    throttled = Reply(429, {"Error": "Too many requests"}, {"Retry-After": "0"})
    server.route(AZURE_RETAIL, after([throttled, throttled], azure_retail_route(server)))
    df = azure_provider_at(server.url).fetch_offers(["eastus"])
    assert _row(df, "Standard_NC24ads_A100_v4")["price_on_demand_usd_per_hour"] == pytest.approx(
        3.673
    )
    statuses = [s for s in server.hits(AZURE_RETAIL)]
    assert len(statuses) >= 3


def test_persistent_5xx_becomes_a_provider_error(server: FakeHttpServer) -> None:
    server.route(AZURE_RETAIL, [Reply(503, {"Error": "unavailable"})])
    with pytest.raises(ProviderError, match="HTTP 503"):
        azure_provider_at(server.url).fetch(["eastus"])
    assert len(server.hits(AZURE_RETAIL)) == 4  # first try + retry_total=3


def test_malformed_page_is_rejected_clearly(server: FakeHttpServer) -> None:
    server.route(AZURE_RETAIL, [Reply(200, b'{"Items": [{"retailPrice": 3.6')])
    with pytest.raises(ProviderError, match="malformed page 1 for Standard_NC24ads_A100_v4"):
        azure_provider_at(server.url).fetch(["eastus"])


def test_page_without_items_is_rejected(server: FakeHttpServer) -> None:
    server.route(AZURE_RETAIL, [Reply(200, {"BillingCurrency": "USD", "NextPageLink": None})])
    with pytest.raises(ProviderError, match="malformed page"):
        azure_provider_at(server.url).fetch(["eastus"])


def test_forbidden_names_the_permission(server: FakeHttpServer) -> None:
    denied = {"error": {"code": "AuthorizationFailed", "message": "does not have authorization"}}
    server.route(AZURE_SKUS, [Reply(403, denied)])
    with pytest.raises(ProviderError) as info:
        azure_provider_at(server.url).fetch(["eastus"])
    assert "Microsoft.Compute/skus/read" in str(info.value)
    assert "fake-token" not in str(info.value)


def _item(**kw: Any) -> dict[str, Any]:
    base = {
        "type": "Consumption",
        "skuName": "NC24ads A100 v4",
        "productName": "Virtual Machines NCadsA100v4 Series",
        "retailPrice": 1.0,
        "effectiveStartDate": "2024-01-01T00:00:00Z",
    }
    return {**base, **kw}


@pytest.mark.parametrize(
    ("rows", "field", "expected"),
    [
        ([_item(retailPrice=3.673)], "on_demand", Decimal("3.673")),
        ([_item(skuName="NC24ads A100 v4 Spot", retailPrice=0.7345)], "spot", Decimal("0.7345")),
        (
            [_item(skuName="NC24ads A100 v4 Low Priority", retailPrice=0.7)],
            "spot",
            None,
        ),  # Batch only
        (
            [_item(productName="Virtual Machines NCCadsv5 Srs Win", retailPrice=9.0)],
            "on_demand",
            None,
        ),
        ([_item(productName="Virtual Machines NCadsA100v4 Series Windows")], "on_demand", None),
        ([_item(productName="Virtual Machines NC Series Cloud Services")], "on_demand", None),
        ([_item(productName="Virtual Machines NC Series CloudServices")], "on_demand", None),
        ([_item(isPrimaryMeterRegion=False)], "on_demand", None),  # non-primary meter
        # "Win" only as a word: a series name that merely contains the letters still counts
        ([_item(productName="Virtual Machines NCWinterv9 Series")], "on_demand", Decimal(1)),
        ([_item(type="DevTestConsumption")], "on_demand", None),
        ([_item(retailPrice=0.0)], "on_demand", None),  # a $0 row is no price
        (
            [_item(type="Reservation", reservationTerm="1 Year", retailPrice=8760.0)],
            "reserved_1y",
            Decimal(1),
        ),
        (
            [_item(type="Reservation", reservationTerm="3 Years", retailPrice=26280.0)],
            "reserved_3y",
            Decimal(1),
        ),
    ],
)
def test_classify(rows: list[dict[str, Any]], field: str, expected: Decimal | None) -> None:
    assert getattr(classify(rows), field) == expected
