"""The GCP adapter through the real compute_v1 / billing_v1 REST clients against a local server."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from planner.errors import ProviderError
from planner.providers.gcp import GcpProvider, accelerator_for_sku, money
from tests.provider_fakes import (
    GCP_MACHINE_TYPES,
    GCP_SKUS,
    FakeHttpServer,
    Reply,
    after,
    frozen_clock,
    gcp_provider_at,
    gcp_routes,
    load,
    paged,
)


def _fetch(server: FakeHttpServer, regions: list[str]) -> Any:
    return gcp_provider_at(server.url).fetch(regions)


def _row(df: Any, region: str, instance_type: str) -> dict[str, Any]:
    rows = df[(df["region"] == region) & (df["instance_type"] == instance_type)].to_dict("records")
    assert len(rows) == 1, (region, instance_type)
    return rows[0]


@pytest.fixture
def server() -> Any:
    with FakeHttpServer() as s:
        gcp_routes(s)
        yield s


def test_vm_price_is_cores_plus_ram_plus_gpus(server: FakeHttpServer) -> None:
    df = _fetch(server, ["us-central1"]).offers
    a2 = _row(df, "us-central1", "a2-highgpu-1g")
    # 12 vCPU x 0.031611 + 85 GiB x 0.004237 + 1 A100 x 2.933908 (OpenCost-recorded SKUs)
    assert a2["price_on_demand_usd_per_hour"] == pytest.approx(0.379332 + 0.360145 + 2.933908)
    # spot: 12 x 0.012644 + 85 x 0.001695 + 1.1472
    assert a2["price_spot_usd_per_hour"] == pytest.approx(0.151728 + 0.144075 + 1.1472)
    # 1-year commitment: 12 x 0.019915 + 85 x 0.002669 + 1.848362
    assert a2["price_reserved_1y_usd_per_hour"] == pytest.approx(0.23898 + 0.226865 + 1.848362)
    assert a2["price_basis_reserved"] == "listed"
    assert (a2["gpu_model"], a2["gpu_count"], a2["vcpus"], a2["host_memory_gib"]) == (
        "A100-40GB",
        1,
        12.0,
        85.0,
    )
    assert a2["zones"] == 3  # us-central1-a, -b (page 1) and -c (page 2)
    a2x8 = _row(df, "us-central1", "a2-highgpu-8g")
    assert a2x8["interconnect"] == "nvswitch"
    a3 = _row(df, "us-central1", "a3-highgpu-8g")
    assert (a3["gpu_model"], a3["fabric"]) == ("H100", "gpudirect-tcp")


def test_region_picks_the_skus_that_serve_it(server: FakeHttpServer) -> None:
    df = _fetch(server, ["europe-west4"]).offers
    assert list(df["instance_type"]) == ["a2-highgpu-1g"]
    # EMEA SKUs: 12 x 0.034773 + 85 x 0.004661 + 3.227299
    assert df["price_on_demand_usd_per_hour"].iloc[0] == pytest.approx(
        0.417276 + 0.396185 + 3.227299
    )


def test_spot_description_wins_over_a_wrong_usage_type(server: FakeHttpServer) -> None:
    g2 = _row(_fetch(server, ["us-central1"]).offers, "us-central1", "g2-standard-8")
    # The "Spot Preemptible Nvidia L4" SKU says usageType OnDemand; it must price spot, not on-demand.
    assert g2["price_on_demand_usd_per_hour"] == pytest.approx(8 * 0.024988 + 32 * 0.002927 + 0.56)
    assert g2["price_spot_usd_per_hour"] == pytest.approx(8 * 0.009995 + 32 * 0.001171 + 0.224)


def test_pages_are_followed_and_empty_scopes_tolerated(server: FakeHttpServer) -> None:
    result = _fetch(server, ["us-central1", "us-east4"])
    mt = server.hits(GCP_MACHINE_TYPES)
    skus = server.hits(GCP_SKUS)
    assert [s.query.get("pageToken") for s in mt] == [None, ["mt-page-2"]]
    assert [s.query.get("pageToken") for s in skus] == [None, ["sku-page-2"]]
    assert "name eq (a2|a3|a4|g2)-.*" in mt[0].query["filter"]
    assert "us-east4" not in set(result.offers["region"])  # NO_RESULTS_ON_PAGE scope


def test_unmatched_gpu_skus_and_unpriced_shapes_are_reported(server: FakeHttpServer) -> None:
    result = _fetch(server, ["us-central1", "europe-west4"])
    items = {u.item: u.reason for u in result.unmapped}
    assert "Nvidia Tesla P4 GPU running in Americas" in items
    assert not any(
        "Virtual Workstation" in i for i in items
    )  # licence SKUs are ignored, not unmapped
    assert "us-central1/a4-highgpu-8g" in items  # no B200 SKU in the fixture
    assert "europe-west4/g2-standard-8" in items  # no EMEA G2 SKUs in the fixture


@pytest.mark.parametrize(
    ("description", "accelerator"),
    [
        ("Nvidia Tesla A100 GPU running in Americas", "nvidia-tesla-a100"),
        ("Nvidia A100 80GB GPU running in APAC", "nvidia-a100-80gb"),  # 80GB before plain A100
        ("Nvidia Tesla A100 80GB GPU running in EMEA", "nvidia-a100-80gb"),
        ("Nvidia H100 80GB GPU attached to A3 VMs running in Virginia", "nvidia-h100-80gb"),
        (
            "Nvidia H100 80GB Mega GPU running in Americas",
            "nvidia-h100-mega-80gb",
        ),  # Mega before H100
        ("Reserved Nvidia H100 Mega 80GB GPU in Iowa", "nvidia-h100-mega-80gb"),
        ("Spot Preemptible Nvidia Tesla A100 GPU running in Americas", "nvidia-tesla-a100"),
        ("Commitment v1: Nvidia L4 GPU in Frankfurt for 1 Year", "nvidia-l4"),
        ("Nvidia Tesla T4 GPU attached to Spot Preemptible VMs running in Iowa", "nvidia-tesla-t4"),
        ("Nvidia B200 (1 gpu slice) running in Americas", "nvidia-b200"),
        ("Nvidia GB200 GPU running in Americas", None),  # GB200 is not a B200
        (
            "Nvidia Tesla P4 GPU running in Americas",
            None,
        ),  # not in the table: reported, not guessed
    ],
)
def test_gpu_sku_table(description: str, accelerator: str | None) -> None:
    assert accelerator_for_sku(description) == accelerator


def test_money_is_exact() -> None:
    assert money("2", 933908000) == Decimal("2.933908")
    assert money(0, 4237000) == Decimal("0.004237")


def test_throttling_is_retried(server: FakeHttpServer) -> None:
    throttled = Reply(
        429,
        {"error": {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED"}},
        {"Retry-After": "0"},
    )
    server.route(
        GCP_SKUS, after([throttled, throttled], paged(load("gcp", "skus_compute_engine.json")))
    )
    df = _fetch(server, ["us-central1"]).offers
    assert len(server.hits(GCP_SKUS)) == 4  # two 429s, then both pages
    assert len(df) == 4


def test_persistent_5xx_becomes_a_provider_error(server: FakeHttpServer) -> None:
    server.route(GCP_SKUS, [Reply(503, {"error": {"code": 503, "message": "backend unavailable"}})])
    with pytest.raises(ProviderError, match="kept failing after retries"):
        _fetch(server, ["us-central1"])
    assert len(server.hits(GCP_SKUS)) > 1  # retried before giving up


def test_malformed_json_is_rejected_clearly(server: FakeHttpServer) -> None:
    pages = load("gcp", "skus_compute_engine.json")
    server.route(
        GCP_SKUS, after([Reply(200, pages[0])], lambda _: Reply(200, b'{"skus": [{"skuId": '))
    )
    with pytest.raises(ProviderError, match="malformed response"):
        _fetch(server, ["us-central1"])


def test_permission_denied_names_what_to_grant(server: FakeHttpServer) -> None:
    denied = {
        "error": {
            "code": 403,
            "message": "Required 'compute.machineTypes.list' permission",
            "status": "PERMISSION_DENIED",
        }
    }
    server.route(GCP_MACHINE_TYPES, [Reply(403, denied)])
    with pytest.raises(ProviderError) as info:
        _fetch(server, ["us-central1"])
    assert re.search(r"grant compute\.machineTypes\.list", str(info.value))


SECRET = "-----BEGIN PRIVATE KEY-----not-a-real-key"


@pytest.mark.parametrize(
    ("key_file", "problem"),
    [
        # issue 11: a path left over from another machine: a traceback before
        (None, "which does not exist"),
        # a service-account file missing its fields: its contents must not be echoed
        (
            {"type": "service_account", "private_key": SECRET},
            "which is not a usable credentials file",
        ),
    ],
)
def test_issue_11_a_bad_key_file_names_the_variable_and_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key_file: dict[str, str] | None, problem: str
) -> None:
    path = tmp_path / "key.json"
    if key_file is not None:
        path.write_text(json.dumps(key_file))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    provider = GcpProvider(project="demo-project", clock=frozen_clock)  # the SDK's own clients
    with pytest.raises(ProviderError) as info:
        provider.fetch(["us-central1"])
    assert info.value.message == f"GOOGLE_APPLICATION_CREDENTIALS names {path}, {problem}"
    assert info.value.hint is not None
    assert "gcloud auth application-default login" in info.value.hint
    assert "not-a-real-key" not in str(info.value)


def _serve_skus(server: FakeHttpServer, description: str, change: Any) -> None:
    """Serve the recorded SKU pages with ``change(sku)`` applied to the SKU called ``description``."""
    pages = load("gcp", "skus_compute_engine.json")
    for page in pages:
        for sku in page["skus"]:
            if sku["description"] == description:
                change(sku)
    server.route(GCP_SKUS, paged(pages))


_A100 = "Nvidia Tesla A100 GPU running in Americas"
_A2_ON_DEMAND = 0.379332 + 0.360145 + 2.933908  # 12 vCPU, 85 GiB, 1 A100 (OpenCost recording)


def _tiers(sku: dict[str, Any]) -> list[dict[str, Any]]:
    rates: list[dict[str, Any]] = sku["pricingInfo"][0]["pricingExpression"]["tieredRates"]
    return rates


def test_prices_are_requested_in_usd(server: FakeHttpServer) -> None:
    _fetch(server, ["us-central1"])
    assert all(s.query.get("currencyCode") == ["USD"] for s in server.hits(GCP_SKUS))


def test_a_zero_first_tier_is_a_free_allowance_not_the_price(server: FakeHttpServer) -> None:
    # "[start 20: $10] ... the first 20GB is free" (billing_v1 PricingExpression docs): a $0 tier
    # from 0 is an allowance; sustained use pays the next tier.
    def free_first_hour(sku: dict[str, Any]) -> None:
        paid = _tiers(sku)[0]
        free = {
            "startUsageAmount": 0,
            "unitPrice": {"currencyCode": "USD", "units": "0", "nanos": 0},
        }
        _tiers(sku)[:] = [free, {**paid, "startUsageAmount": 1}]

    _serve_skus(server, _A100, free_first_hour)
    a2 = _row(_fetch(server, ["us-central1"]).offers, "us-central1", "a2-highgpu-1g")
    assert a2["price_on_demand_usd_per_hour"] == pytest.approx(_A2_ON_DEMAND)


def test_a_sku_whose_every_tier_is_free_prices_nothing(server: FakeHttpServer) -> None:
    def all_free(sku: dict[str, Any]) -> None:
        _tiers(sku)[0]["unitPrice"] = {"currencyCode": "USD", "units": "0", "nanos": 0}

    _serve_skus(server, _A100, all_free)
    result = _fetch(server, ["us-central1"])
    reasons = {u.item: u.reason for u in result.unmapped}
    assert reasons[_A100] == "every price tier is $0"
    assert "us-central1/a2-highgpu-1g" in reasons  # not priced at $0 for its GPU
    assert "a2-highgpu-1g" not in set(result.offers["instance_type"])


def test_a_price_in_another_currency_is_rejected(server: FakeHttpServer) -> None:
    # OpenCost's recording of a billing account in IDR: units "508", nanos 934997455 per core-hour.
    def rupiah(sku: dict[str, Any]) -> None:
        _tiers(sku)[0]["unitPrice"] = {"currencyCode": "IDR", "units": "508", "nanos": 934997455}

    _serve_skus(server, "A2 Instance Core running in Americas", rupiah)
    with pytest.raises(ProviderError, match="priced in IDR, not USD"):
        _fetch(server, ["us-central1"])


def test_a_sku_in_an_unexpected_unit_is_reported_not_mixed_in(server: FakeHttpServer) -> None:
    # Cores and GPUs are per "h", RAM per "GiBy.h"; a per-month RAM price must not be summed in.
    def per_month(sku: dict[str, Any]) -> None:
        sku["pricingInfo"][0]["pricingExpression"]["usageUnit"] = "GiBy.mo"

    _serve_skus(server, "A2 Instance Ram running in Americas", per_month)
    result = _fetch(server, ["us-central1"])
    reasons = {u.item: u.reason for u in result.unmapped}
    assert (
        reasons["A2 Instance Ram running in Americas"] == "priced per 'GiBy.mo', expected 'GiBy.h'"
    )
    assert "us-central1/a2-highgpu-1g" in reasons


@pytest.mark.parametrize(
    ("units", "nanos", "expected"),
    [
        ("2", 933908000, "2.933908"),  # OpenCost A100: float arithmetic gives 2.9339079999999997
        ("508", 934997455, "508.934997455"),  # all nine nanos digits kept (OpenCost IDR row)
        ("0", 4237000, "0.004237"),
        ("-1", -750000000, "-1.75"),  # google.type.Money: nanos carry the sign of units
    ],
)
def test_money_units_plus_nanos(units: str, nanos: int, expected: str) -> None:
    assert money(units, nanos) == Decimal(expected)
