"""The GCP adapter through the real compute_v1 / billing_v1 REST clients against a local server."""

from __future__ import annotations

import json
import logging
import re
import socket
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from planner.errors import ProviderError
from planner.providers.gcp import (
    SOURCE_API,
    SOURCE_BUNDLED,
    GcpProvider,
    accelerator_for_sku,
    money,
)
from planner.providers.gcp_auth import GcpSettings
from planner.providers.gcp_machines import ACCELERATOR_OPTIMIZED
from planner.providers.gcp_skus import component_of
from tests.provider_fakes import (
    GCP_MACHINE_TYPES,
    GCP_SKUS,
    FakeHttpServer,
    Reply,
    after,
    frozen_clock,
    gcp_fast_retry,
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
    # P4 SKUs map to N1 offers now that the GPU catalog has the P4; this fixture has no N1 core
    # and RAM SKUs, so those offers are reported as unpriced rather than priced without a host
    assert items["us-central1/n1-standard-8+p4x1"] == "no on-demand SKUs for its parts"
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
        ("Nvidia Tesla P4 GPU running in Americas", "nvidia-tesla-p4"),
        ("Nvidia Tesla P100 GPU running in Americas", "nvidia-tesla-p100"),  # not P4
        (
            "Nvidia Tesla V100 GPU attached to Spot Preemptible VMs running in Americas",
            "nvidia-tesla-v100",
        ),
        ("RTX 6000 96GB running in Americas", None),  # not in the table: reported, not guessed
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


def test_a_refused_compute_api_falls_back_to_the_bundled_table(
    server: FakeHttpServer, caplog: pytest.LogCaptureFixture
) -> None:
    # A project without the Compute API (or the role) still gets prices; the rows say where the
    # machine shapes came from and the log says what to grant.
    denied = {
        "error": {
            "code": 403,
            "message": "Required 'compute.machineTypes.list' permission",
            "status": "PERMISSION_DENIED",
        }
    }
    server.route(GCP_MACHINE_TYPES, [Reply(403, denied)])
    provider = gcp_provider_at(server.url)
    with caplog.at_level(logging.WARNING, logger="planner.providers.gcp"):
        df = provider.fetch(["us-central1"]).offers
    assert set(df["source"]) == {SOURCE_BUNDLED} and provider.source == SOURCE_BUNDLED
    assert pd.isna(_row(df, "us-central1", "a2-highgpu-1g")["zones"])  # the table knows no zones
    assert re.search(r"grant compute\.machineTypes\.list", caplog.text)


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


# ---------------------------------------------------------------- issue 13: sign-in, N1, commitments
#
# These tests build the adapter the way the registry does (its own REST clients, from the
# environment) and point it at the local server with the mirror variables, so the real client path
# carries the API key, pages and timeouts.  skus_gpu_hosts.json: tests/fixtures/README.md.

API_KEY = "AIzaSy-not-a-real-key-0123456789abcdef"
_N1_CORE, _N1_RAM = 0.031611, 0.004237  # N1 Predefined Instance Core/Ram, Americas (GCP list)


def _no_adc() -> tuple[Any, str | None]:
    from google.auth.exceptions import DefaultCredentialsError

    raise DefaultCredentialsError("Your default credentials were not found.")


def _adc() -> tuple[Any, str | None]:
    from google.auth.credentials import AnonymousCredentials

    return AnonymousCredentials(), "demo-project"


def _provider(env: dict[str, str], *, adc: Any = _no_adc, **kw: Any) -> GcpProvider:
    return GcpProvider(
        environ=env, default_credentials=adc, retry=gcp_fast_retry(), clock=frozen_clock, **kw
    )


@pytest.fixture
def hosts() -> Any:
    """The local server with the N1/commitment catalog and the recorded machine-type pages."""
    with FakeHttpServer() as s:
        s.route(GCP_MACHINE_TYPES, paged(load("gcp", "machine_types_aggregated.json")))
        s.route(GCP_SKUS, paged(load("gcp", "skus_gpu_hosts.json")))
        yield s


def _keyed(server: FakeHttpServer) -> dict[str, str]:
    return {"PLANNER_GCP_API_KEY": API_KEY, "PLANNER_GCP_BILLING_URL": server.url}


def test_api_key_reaches_the_catalog_as_a_header_and_never_the_output(
    hosts: FakeHttpServer, caplog: pytest.LogCaptureFixture
) -> None:
    provider = _provider(_keyed(hosts))
    with caplog.at_level(logging.DEBUG):
        result = provider.fetch(["us-central1"])
    hits = hosts.hits(GCP_SKUS)
    assert [h.query.get("pageToken") for h in hits] == [None, ["hosts-page-2"]]
    # google-auth's api_key.Credentials: the x-goog-api-key header, not a `key` query parameter
    assert all(h.headers.get("x-goog-api-key") == API_KEY and "key" not in h.query for h in hits)
    assert not hosts.hits(GCP_MACHINE_TYPES)  # a key alone cannot list machine types
    assert provider.source == SOURCE_BUNDLED
    shown = result.offers.to_csv() + repr(result.unmapped) + caplog.text
    assert API_KEY not in shown


@pytest.mark.parametrize(
    ("env", "used"),
    [
        ({"GOOGLE_API_KEY": "google-key"}, "google-key"),  # the Google SDKs' own variable
        ({"GOOGLE_API_KEY": "google-key", "PLANNER_GCP_API_KEY": "planner-key"}, "planner-key"),
    ],
)
def test_which_api_key_variable_wins(hosts: FakeHttpServer, env: dict[str, str], used: str) -> None:
    _provider({**env, "PLANNER_GCP_BILLING_URL": hosts.url}).fetch(["us-central1"])
    assert {h.headers.get("x-goog-api-key") for h in hosts.hits(GCP_SKUS)} == {used}


def test_n1_offers_are_an_n1_standard_host_plus_attached_gpus(hosts: FakeHttpServer) -> None:
    df = _provider(_keyed(hosts)).fetch(["us-central1"]).offers
    n1 = df[df["instance_type"].str.startswith("n1-")]
    # the allowed counts per GPU (GCP GPU docs), 8 vCPUs and 30 GB of n1-standard per GPU
    t4s = ["n1-standard-8+t4x1", "n1-standard-16+t4x2", "n1-standard-32+t4x4"]
    v100s = ["n1-standard-8+v100x1", "n1-standard-16+v100x2", "n1-standard-32+v100x4"]
    p100s = ["n1-standard-8+p100x1", "n1-standard-16+p100x2", "n1-standard-32+p100x4"]
    p4s = ["n1-standard-8+p4x1", "n1-standard-16+p4x2", "n1-standard-32+p4x4"]
    expected = [*t4s, *v100s, "n1-standard-64+v100x8", *p100s, *p4s]
    assert sorted(n1["instance_type"]) == sorted(expected)
    t4 = _row(df, "us-central1", "n1-standard-8+t4x1")
    assert (t4["gpu_model"], t4["gpu_count"], t4["vcpus"], t4["host_memory_gib"]) == (
        "T4",
        1,
        8,
        30,
    )
    assert t4["network_gbps"] == 16  # 2 Gbps per vCPU
    # 8 vCPU x N1 core + 30 GiB x N1 RAM + 1 T4 (the cheaper "Custom Instance" SKUs are not used)
    assert t4["price_on_demand_usd_per_hour"] == pytest.approx(8 * _N1_CORE + 30 * _N1_RAM + 0.35)
    # spot: the "Spot Preemptible N1" parts + "T4 GPU attached to Spot Preemptible VMs"
    assert t4["price_spot_usd_per_hour"] == pytest.approx(8 * 0.00698 + 30 * 0.000936 + 0.11)
    t4x4 = _row(df, "us-central1", "n1-standard-32+t4x4")
    assert t4x4["price_on_demand_usd_per_hour"] == pytest.approx(
        32 * _N1_CORE + 120 * _N1_RAM + 4 * 0.35
    )
    assert t4x4["network_gbps"] == 32  # N1's 32 Gbps ceiling
    v100 = _row(df, "us-central1", "n1-standard-64+v100x8")
    assert v100["price_on_demand_usd_per_hour"] == pytest.approx(
        64 * _N1_CORE + 240 * _N1_RAM + 8 * 2.48
    )
    assert (v100["gpu_model"], v100["interconnect"]) == ("V100-16GB", "nvlink")


def test_committed_use_prices_are_listed_per_part(hosts: FakeHttpServer) -> None:
    df = _provider(_keyed(hosts)).fetch(["us-central1"]).offers
    t4 = _row(df, "us-central1", "n1-standard-8+t4x1")
    # N1 commitments name no series: "Commitment v1: Cpu in Americas for 1 Year"
    assert t4["price_reserved_1y_usd_per_hour"] == pytest.approx(
        8 * 0.019915 + 30 * 0.002669 + 0.22
    )
    assert t4["price_reserved_3y_usd_per_hour"] == pytest.approx(
        8 * 0.014225 + 30 * 0.001907 + 0.16
    )
    assert t4["price_basis_reserved"] == "listed"
    v100 = _row(df, "us-central1", "n1-standard-64+v100x8")
    assert v100["price_reserved_3y_usd_per_hour"] == pytest.approx(
        64 * 0.014225 + 240 * 0.001907 + 8 * 1.116
    )
    a2 = _row(df, "us-central1", "a2-highgpu-1g")
    assert a2["price_reserved_1y_usd_per_hour"] == pytest.approx(
        12 * 0.019915 + 85 * 0.002669 + 1.848362
    )
    assert a2["price_reserved_3y_usd_per_hour"] == pytest.approx(
        12 * 0.011536 + 85 * 0.001546 + 1.026868
    )
    a3 = _row(df, "us-central1", "a3-highgpu-8g")
    assert a3["price_reserved_1y_usd_per_hour"] == pytest.approx(
        208 * 0.014478 + 1872 * 0.001575 + 8 * 2.646481
    )
    # no A3 3-year SKUs in the catalog: no price made of some parts' commitments and not others
    assert pd.isna(a3["price_reserved_3y_usd_per_hour"])
    l4 = _row(df, "us-central1", "g2-standard-8")
    assert l4["price_basis_reserved"] == "none"  # no G2 commitment SKUs at all


def test_bundled_specs_when_there_is_no_project(hosts: FakeHttpServer) -> None:
    provider = _provider(_keyed(hosts))
    df = provider.fetch(["us-central1"]).offers
    assert set(df["source"]) == {SOURCE_BUNDLED}
    a2 = _row(df, "us-central1", "a2-highgpu-1g")
    assert (a2["vcpus"], a2["host_memory_gib"], a2["network_gbps"]) == (12, 85, 24)
    assert a2["price_on_demand_usd_per_hour"] == pytest.approx(_A2_ON_DEMAND)
    assert pd.isna(a2["zones"])
    a3 = _row(df, "us-central1", "a3-highgpu-8g")
    assert (a3["vcpus"], a3["host_memory_gib"], a3["network_gbps"]) == (208, 1872, 1000)
    assert a3["fabric"] == "gpudirect-tcp"
    assert a3["price_on_demand_usd_per_hour"] == pytest.approx(
        208 * 0.022981 + 1872 * 0.0025 + 8 * 4.200764
    )
    # a type whose GPU has no SKU in the region is not offered there (no H200, B200, H100 Mega)
    assert not {"a3-ultragpu-8g", "a4-highgpu-8g", "a3-megagpu-8g"} & set(df["instance_type"])


def test_application_default_credentials_list_machine_types_from_the_compute_api(
    hosts: FakeHttpServer,
) -> None:
    env = {"PLANNER_GCP_BILLING_URL": hosts.url, "PLANNER_GCP_COMPUTE_URL": hosts.url}
    provider = _provider(env, adc=_adc)
    df = provider.fetch(["us-central1"]).offers
    (mt, _) = hosts.hits(GCP_MACHINE_TYPES)  # both pages
    assert mt.query["filter"] == ["name eq (a2|a3|a4|g2)-.*"]
    assert all("x-goog-api-key" not in h.headers for h in hosts.hits(GCP_SKUS))
    assert provider.source == SOURCE_API and set(df["source"]) == {SOURCE_API}
    a2 = _row(df, "us-central1", "a2-highgpu-1g")
    assert a2["zones"] == 3  # from the API
    assert a2["network_gbps"] == 24  # from the table: the API has no bandwidth
    assert "n1-standard-8+t4x1" in set(df["instance_type"])  # N1 hosts: always the table


def test_catalog_and_machine_types_are_listed_once_per_refresh(hosts: FakeHttpServer) -> None:
    # `prices refresh` fetches one region at a time through one adapter
    env = {"PLANNER_GCP_BILLING_URL": hosts.url, "PLANNER_GCP_COMPUTE_URL": hosts.url}
    provider = _provider(env, adc=_adc)
    first = provider.fetch(["us-central1"])
    second = provider.fetch(["us-east4"])
    assert len(hosts.hits(GCP_SKUS)) == 2 and len(hosts.hits(GCP_MACHINE_TYPES)) == 2
    assert set(first.offers["region"]) == {"us-central1"}
    assert set(second.offers["region"]) == {"us-east4"}


def _unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_no_network_fails_at_once_naming_the_endpoint_not_credentials() -> None:
    url = f"http://127.0.0.1:{_unused_port()}"  # nothing listens: refused, as offline
    provider = _provider({"PLANNER_GCP_API_KEY": API_KEY, "PLANNER_GCP_BILLING_URL": url})
    started = time.monotonic()
    with pytest.raises(ProviderError) as info:
        provider.fetch(["us-central1"])
    assert time.monotonic() - started < 5
    assert info.value.message == (
        f"could not reach {url} for cloudbilling skus.list:"
        " the connection was refused or the network is unreachable"
    )
    assert info.value.hint is not None and "PLANNER_GCP_BILLING_URL" in info.value.hint
    assert info.value.__cause__ is None  # the vendor text (the request URL) stays out
    assert API_KEY not in str(info.value)


def test_an_endpoint_that_never_answers_times_out() -> None:
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        provider = _provider(
            {"PLANNER_GCP_API_KEY": API_KEY, "PLANNER_GCP_BILLING_URL": url}, timeout_s=0.5
        )
        started = time.monotonic()
        with pytest.raises(ProviderError, match=r"could not reach .*: no answer within 0\.5 s"):
            provider.fetch(["us-central1"])
    assert time.monotonic() - started < 5


def test_no_credentials_at_all_suggests_an_api_key() -> None:
    with pytest.raises(ProviderError) as info:
        _provider({}).fetch(["us-central1"])
    assert info.value.message == "no GCP credentials for the Cloud Billing Catalog"
    assert info.value.hint is not None
    assert "PLANNER_GCP_API_KEY (or GOOGLE_API_KEY)" in info.value.hint
    assert "gcloud auth application-default login" in info.value.hint


def test_issue_13_a_key_file_path_that_is_a_folder_is_a_clean_error(tmp_path: Path) -> None:
    # google.auth opens the path unguarded: IsADirectoryError escaped as a traceback before
    env = {"GOOGLE_APPLICATION_CREDENTIALS": str(tmp_path)}
    provider = GcpProvider(environ=env, clock=frozen_clock)
    with pytest.MonkeyPatch.context() as mp:  # google.auth reads the real environment
        mp.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path))
        with pytest.raises(ProviderError) as info:
            provider.fetch(["us-central1"])
    assert info.value.message == (
        f"GOOGLE_APPLICATION_CREDENTIALS names {tmp_path}, which is not a usable credentials file"
    )


def test_a_key_file_that_is_named_but_broken_is_reported_even_with_an_api_key(
    hosts: FakeHttpServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The key prices the catalog; the broken file was meant for the machine types: say so.
    missing = tmp_path / "gone.json"
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(missing))
    env = {**_keyed(hosts), "GOOGLE_APPLICATION_CREDENTIALS": str(missing)}
    provider = GcpProvider(environ=env, retry=gcp_fast_retry(), clock=frozen_clock)
    with pytest.raises(ProviderError, match=f"names {re.escape(str(missing))}, which does not"):
        provider.fetch(["us-central1"])


def test_a_refused_api_key_names_its_variable(hosts: FakeHttpServer) -> None:
    invalid = {
        "error": {
            "code": 400,
            "message": "API key not valid. Please pass a valid API key.",
            "status": "INVALID_ARGUMENT",
        }
    }
    hosts.route(GCP_SKUS, [Reply(400, invalid)])
    with pytest.raises(ProviderError) as info:
        _provider(_keyed(hosts)).fetch(["us-central1"])
    assert info.value.message.startswith(
        "GCP refused the API key in PLANNER_GCP_API_KEY for cloudbilling skus.list"
    )
    assert API_KEY not in str(info.value)


def test_a_mirror_url_the_client_cannot_use_is_named() -> None:
    env = {"PLANNER_GCP_API_KEY": API_KEY, "PLANNER_GCP_BILLING_URL": "http://bad host:80"}
    with pytest.raises(ProviderError, match="PLANNER_GCP_BILLING_URL is 'http://bad host:80'"):
        _provider(env).fetch(["us-central1"])


def test_p100_and_p4_are_n1_hosts_plus_their_gpus(hosts: FakeHttpServer) -> None:
    df = _provider(_keyed(hosts)).fetch(["us-central1"]).offers
    p100 = _row(df, "us-central1", "n1-standard-8+p100x1")
    assert (p100["gpu_model"], p100["gpu_count"]) == ("P100", 1)
    # n1-standard-8 (8 vCPUs, 30 GB) + one P100 at $1.46/h (the fixture's Americas SKU)
    assert p100["price_on_demand_usd_per_hour"] == pytest.approx(8 * _N1_CORE + 30 * _N1_RAM + 1.46)
    p4 = _row(df, "us-central1", "n1-standard-16+p4x2")
    assert (p4["gpu_model"], p4["gpu_count"], p4["interconnect"]) == ("P4", 2, "pcie")


@pytest.mark.parametrize(
    ("description", "component"),
    [
        ("N1 Predefined Instance Core running in Americas", ("n1", "core")),
        ("Spot Preemptible N1 Predefined Instance Ram running in Americas", ("n1", "ram")),
        ("Commitment v1: Cpu in Americas for 1 Year", ("n1", "core")),  # N1: no series word
        ("Commitment v1: Ram in Frankfurt for 3 Year", ("n1", "ram")),
        ("Commitment v1: A2 Cpu in Americas for 1 Year", ("a2", "core")),
        ("A3 Instance Ram running in Americas", ("a3", "ram")),
        ("Custom Instance Core running in Americas", None),  # N1 custom shapes: another price
        ("E2 Instance Core running in Americas", None),  # a series without GPUs
        ("DWS Defined Duration A3 Core running in Americas", None),  # not a list price
    ],
)
def test_core_and_ram_sku_table(description: str, component: tuple[str, str] | None) -> None:
    assert component_of(description) == component


def test_settings_never_show_the_key() -> None:
    settings = GcpSettings.from_environ({"GOOGLE_API_KEY": API_KEY})
    assert settings.api_key == API_KEY and settings.api_key_variable == "GOOGLE_API_KEY"
    assert API_KEY not in repr(settings)
    assert settings.scrub(f"echo {API_KEY}") == "echo ***"


def test_bundled_shapes_agree_with_the_reference_snapshot() -> None:
    # The table (GCP machine-type docs) against the bundled snapshot's specs (SkyPilot catalog,
    # an independent reading of the same API): vCPUs, memory, GPU count and bandwidth.
    bundled = Path(__file__).resolve().parent.parent / "pricing_cache"
    newest = max(bundled.glob("reference-*/offers-gcp.csv"))
    ref = pd.read_csv(newest)
    checked = 0
    for row in ref.drop_duplicates("instance_type").to_dict("records"):
        shape = ACCELERATOR_OPTIMIZED.get(row["instance_type"])
        if shape is None:
            continue
        checked += 1
        assert (shape.gpu_count, shape.vcpus, float(shape.memory_gib), shape.network_gbps) == (
            row["gpu_count"],
            row["vcpus"],
            row["host_memory_gib"],
            row["network_gbps"],
        ), row["instance_type"]
    assert checked >= 20


def test_cli_refresh_with_an_api_key(
    hosts: FakeHttpServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from planner.catalog.store import list_snapshots, load_snapshot
    from planner.cli import main

    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PLANNER_GCP_API_KEY", API_KEY)
    monkeypatch.setenv("PLANNER_GCP_BILLING_URL", hosts.url)
    for name in ("GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))  # no gcloud sign-in
    monkeypatch.setenv("NO_GCE_CHECK", "True")  # not on a GCE VM: skip the metadata server
    args = ["prices", "refresh", "--provider", "gcp", "--region", "us-central1", "--format", "json"]
    # The fixture is a trimmed catalog (no A2/G2 spot SKUs, ...): its changes against the bundled
    # snapshot are accepted for this region, as a user would after reading them.
    out = CliRunner().invoke(main, [*args, "--accept-changes", "gcp:us-central1:*"])
    assert out.exit_code == 0, out.output
    assert "Traceback" not in out.output and API_KEY not in out.output
    (published,) = json.loads(out.stdout)
    assert (published["provider"], published["regions"]) == ("gcp", "us-central1")
    (path,) = list_snapshots(tmp_path / "data" / "snapshots")
    offers = load_snapshot(path).offers
    t4 = _row(offers[offers["provider"] == "gcp"], "us-central1", "n1-standard-8+t4x1")
    assert t4["price_on_demand_usd_per_hour"] == pytest.approx(8 * _N1_CORE + 30 * _N1_RAM + 0.35)
    assert t4["source"] == SOURCE_BUNDLED
