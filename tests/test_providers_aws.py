"""The AWS adapter against recorded EC2 and Price List responses (moto, Stubber, a local endpoint)."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.stub import Stubber
from moto import mock_aws

from planner.errors import MissingDependencyError, ProviderError
from planner.gpu_specs import load_gpu_catalog
from planner.providers.aws import AwsProvider, gpu_model, network_gbps, parse_price_item
from planner.providers.base import require
from tests.provider_fakes import FakeHttpServer, Reply, aws_stubs, boto_client, frozen_clock, load

# The instance types that become offers from the us-east-1 recordings (with a price and a zone).
PRICED_TYPES = {
    "g4dn.xlarge",
    "g5.12xlarge",
    "g5.xlarge",
    "p3dn.24xlarge",
    "p4d.24xlarge",
    "p5.48xlarge",
}


def _row(df: Any, instance_type: str) -> dict[str, Any]:
    rows = df[df["instance_type"] == instance_type].to_dict("records")
    assert len(rows) == 1, instance_type
    return rows[0]


def _price_item(instance_type: str, region: str = "us-east-1") -> dict[str, Any]:
    for page in load("aws", f"get_products_{region}.json"):
        for item in page["PriceList"]:
            attrs = item["product"]["attributes"]
            if attrs["instanceType"] == instance_type and attrs["marketoption"] == "OnDemand":
                return item
    raise KeyError(instance_type)


def test_stubbed_fetch_walks_every_page_and_builds_offers() -> None:
    stubs = aws_stubs()
    result = AwsProvider(client_factory=stubs.factory, clock=frozen_clock).fetch(["us-east-1"])
    stubs.assert_all_used()  # both pages of types, spot and prices were requested with NextToken
    df = result.offers
    assert sorted(df["instance_type"]) == sorted(PRICED_TYPES)  # one row each
    p4d = _row(df, "p4d.24xlarge")
    # GPU name + memory: A100 with 40960 MiB is the 40 GB part; 8 on an HGX board -> NVSwitch.
    assert (p4d["gpu_model"], p4d["gpu_count"], p4d["interconnect"]) == ("A100-40GB", 8, "nvswitch")
    assert p4d["network_gbps"] == 400.0  # 4 network cards x 100 Gbit/s peak
    assert p4d["fabric"] == "efa"
    assert p4d["price_on_demand_usd_per_hour"] == pytest.approx(32.7726)
    assert p4d["zones"] == 4
    assert p4d["source"].startswith("aws:") and p4d["as_of"] == "2025-06-02"
    assert p4d["price_basis_reserved"] == "listed"


def test_reserved_default_is_standard_no_upfront() -> None:
    item = _price_item("p4d.24xlarge")
    terms = {
        (
            t["termAttributes"]["LeaseContractLength"],
            t["termAttributes"]["OfferingClass"],
            t["termAttributes"]["PurchaseOption"],
        ): t
        for t in item["terms"]["Reserved"].values()
    }
    (hourly_1y,) = [
        d["pricePerUnit"]["USD"]
        for d in terms[("1yr", "standard", "No Upfront")]["priceDimensions"].values()
    ]
    stubs = aws_stubs()
    df = AwsProvider(client_factory=stubs.factory, clock=frozen_clock).fetch_offers(["us-east-1"])
    assert _row(df, "p4d.24xlarge")["price_reserved_1y_usd_per_hour"] == pytest.approx(
        float(hourly_1y)
    )


def test_all_upfront_is_amortised_over_the_term() -> None:
    item = _price_item("p4d.24xlarge")
    (term,) = [
        t
        for t in item["terms"]["Reserved"].values()
        if t["termAttributes"]
        == {
            "LeaseContractLength": "3yr",
            "OfferingClass": "standard",
            "PurchaseOption": "All Upfront",
        }
    ]
    upfront = next(d for d in term["priceDimensions"].values() if d["unit"] == "Quantity")[
        "pricePerUnit"
    ]["USD"]
    stubs = aws_stubs()
    provider = AwsProvider(
        client_factory=stubs.factory, clock=frozen_clock, reserved_purchase_option="All Upfront"
    )
    df = provider.fetch_offers(["us-east-1"])
    # 3 years of 8760 h each; the hourly fee of an All Upfront term is 0.
    assert _row(df, "p4d.24xlarge")["price_reserved_3y_usd_per_hour"] == pytest.approx(
        float(upfront) / 26280, abs=1e-6
    )


def test_spot_takes_the_latest_price_per_zone_then_min_and_median() -> None:
    stubs = aws_stubs()
    df = AwsProvider(client_factory=stubs.factory, clock=frozen_clock).fetch_offers(["us-east-1"])
    g5 = _row(df, "g5.xlarge")
    # Zone prices 0.4177 0.3970 0.4130 0.4028 0.4005; the older 0.90 quote of the first zone is superseded.
    assert g5["price_spot_usd_per_hour"] == pytest.approx(0.397)
    assert g5["price_spot_median_usd_per_hour"] == pytest.approx(0.4028)


def test_capacity_block_zero_price_row_is_not_the_on_demand_price() -> None:
    stubs = aws_stubs()
    df = AwsProvider(client_factory=stubs.factory, clock=frozen_clock).fetch_offers(["us-east-1"])
    assert _row(df, "p5.48xlarge")["price_on_demand_usd_per_hour"] == pytest.approx(98.32)


def test_fractional_and_unknown_gpus_are_reported_not_guessed() -> None:
    stubs = aws_stubs()
    result = AwsProvider(client_factory=stubs.factory, clock=frozen_clock).fetch(["us-east-1"])
    reasons = {u.item: u.reason for u in result.unmapped}
    assert "fractional" in reasons["g6f.large"]
    assert "T4g" in reasons["g5g.xlarge"]
    # Trainium (NeuronInfo, no GpuInfo) and CPU types are simply not GPU offers.
    assert not {"trn1.32xlarge", "m5.large"} & (set(result.offers["instance_type"]) | set(reasons))


@pytest.mark.parametrize(
    ("name", "mib", "expected"),
    [
        ("A100", 40960, "A100-40GB"),  # p4d
        ("A100", 81920, "A100-80GB"),  # p4de: same name, more memory
        ("V100", 16384, "V100-16GB"),  # p3
        ("V100", 32768, "V100-32GB"),  # p3dn
        ("A10G", 22888, "A10G"),  # reported memory below the 24 GB datasheet
        ("H200", 144384, "H200"),  # p5e
        ("A100", 61440, None),  # no 60 GB A100 exists: not guessed
        ("Radeon Pro V520", 8192, None),  # g4ad, not in the catalog
    ],
)
def test_gpu_model_keys_on_name_and_memory(name: str, mib: int, expected: str | None) -> None:
    gpu = gpu_model({"Name": name, "MemoryInfo": {"SizeInMiB": mib}}, load_gpu_catalog())
    assert (gpu.name if gpu else None) == expected


def test_network_falls_back_to_the_performance_text() -> None:
    assert network_gbps({"NetworkPerformance": "4x 100 Gigabit"}) == 400.0
    assert network_gbps({"NetworkPerformance": "Up to 25 Gigabit"}) == 25.0
    assert network_gbps({"NetworkPerformance": "Moderate"}) is None


def test_free_tier_style_bounded_rate_is_not_an_hourly_price() -> None:
    item = _price_item("g4dn.xlarge")
    for term in item["terms"]["OnDemand"].values():
        for dim in term["priceDimensions"].values():
            dim["endRange"] = "750"
    assert parse_price_item(json.dumps(item)) is None


def test_malformed_price_item_is_rejected_clearly() -> None:
    pages = load("aws", "get_products_us-east-1.json")
    pages[1]["PriceList"][0] = {"product": {"attributes": {}}}  # no instanceType, no terms
    stubs = aws_stubs(price_pages=pages)
    with pytest.raises(ProviderError, match="malformed item"):
        AwsProvider(client_factory=stubs.factory, clock=frozen_clock).fetch(["us-east-1"])
    with pytest.raises(ProviderError, match="malformed item"):
        parse_price_item('{"product": ')


def test_access_denied_names_the_permission() -> None:
    pricing = boto_client("pricing", "us-east-1")
    stubber = Stubber(pricing)
    stubber.add_client_error(
        "get_products", service_error_code="AccessDeniedException", http_status_code=400
    )
    stubber.activate()
    stubs = aws_stubs(pricing_client=pricing)
    with pytest.raises(ProviderError) as info:
        AwsProvider(client_factory=stubs.factory, clock=frozen_clock).fetch(["us-east-1"])
    assert "pricing:GetProducts" in str(info.value)
    assert "testing" not in str(info.value)  # the access key is never echoed
    assert info.value.__cause__ is not None


def _throttled_pricing(server: FakeHttpServer, attempts: int) -> Any:
    return boto_client(
        "pricing",
        "us-east-1",
        endpoint_url=server.url,
        config=Config(retries={"mode": "standard", "total_max_attempts": attempts}),
    )


_THROTTLED = Reply(400, {"__type": "ThrottlingException", "message": "Rate exceeded"})


def test_throttled_price_list_is_retried_by_botocore() -> None:
    pages = [
        {**p, "PriceList": [json.dumps(i) for i in p["PriceList"]]}
        for p in load("aws", "get_products_us-east-1.json")
    ]
    with FakeHttpServer() as server:
        server.route("/", [_THROTTLED, Reply(200, pages[0]), Reply(200, pages[1])])
        stubs = aws_stubs(pricing_client=_throttled_pricing(server, attempts=3))
        df = AwsProvider(client_factory=stubs.factory, clock=frozen_clock).fetch_offers(
            ["us-east-1"]
        )
    assert len(server.seen) == 3  # throttled, retried, second page
    assert _row(df, "g5.xlarge")["price_on_demand_usd_per_hour"] == pytest.approx(1.006)
    body_target = server.seen[0].headers.get("X-Amz-Target", "")
    assert body_target.endswith("GetProducts")


def test_throttling_that_persists_becomes_a_provider_error() -> None:
    with FakeHttpServer() as server:
        server.route("/", [_THROTTLED])
        stubs = aws_stubs(pricing_client=_throttled_pricing(server, attempts=2))
        with pytest.raises(ProviderError, match="ThrottlingException"):
            AwsProvider(client_factory=stubs.factory, clock=frozen_clock).fetch(["us-east-1"])
    assert len(server.seen) == 2


def test_moto_specs_and_offerings_with_stubbed_prices() -> None:
    with mock_aws():
        ec2 = boto3.client("ec2", region_name="us-east-1")
        stubs = aws_stubs()  # only its pricing stub is used here
        pricing = stubs.clients[("pricing", "us-east-1")]

        def factory(service: str, region: str) -> Any:
            return ec2 if service == "ec2" else pricing

        result = AwsProvider(client_factory=factory, clock=frozen_clock).fetch(["us-east-1"])
    df = result.offers
    assert set(df["instance_type"]) == PRICED_TYPES
    p5 = _row(df, "p5.48xlarge")
    assert (p5["gpu_model"], p5["gpu_count"], p5["network_gbps"]) == ("H100", 8, 3200.0)
    # moto's spot history is a constant stub of $0.00001 per zone: good only for wiring.
    assert p5["price_spot_usd_per_hour"] == pytest.approx(0.00001)
    # GPU types moto knows that have no price in the fixture are reported, not dropped silently.
    unpriced = {u.item for u in result.unmapped if "on-demand price" in u.reason}
    assert "us-east-1/p4de.24xlarge" in unpriced


def test_missing_sdk_names_the_extra() -> None:
    with pytest.raises(MissingDependencyError) as info:
        require("boto3_not_installed_here", "aws")
    assert "pip install 'planner[aws]'" in str(info.value)


def test_decimal_effective_hourly() -> None:
    from planner.providers.aws import ReservedTerm

    term = ReservedTerm(1, "standard", "Partial Upfront", Decimal("1.5"), Decimal("8760"))
    assert term.effective_hourly_usd == Decimal("2.5")


def _trimmed_from(recorded: Any, real: Any, path: str = "") -> list[str]:
    """Where ``recorded`` is not a trimmed copy of ``real`` (same values, keys only dropped)."""
    if isinstance(recorded, dict) and isinstance(real, dict):
        return [
            p
            for key, value in recorded.items()
            for p in (
                _trimmed_from(value, real[key], f"{path}.{key}")
                if key in real
                else [f"{path}.{key} (not in the real record)"]
            )
        ]
    if isinstance(recorded, list) and isinstance(real, list):
        if len(recorded) != len(real):
            return [f"{path} ({len(recorded)} items, real {len(real)})"]
        return [
            p
            for i, (a, b) in enumerate(zip(recorded, real, strict=True))
            for p in _trimmed_from(a, b, f"{path}[{i}]")
        ]
    return [] if recorded == real else [f"{path}: {recorded!r} != {real!r}"]


def test_instance_type_recordings_are_trimmed_copies_of_the_real_records() -> None:
    # moto's instance-type data is generated from the live DescribeInstanceTypes API; every field the
    # fixture keeps must carry the real value (GpuInfo, NetworkCards, NeuronInfo, fractional L4 ...).
    recorded = [
        t
        for page in load("aws", "describe_instance_types_us-east-1.json")
        for t in page["InstanceTypes"]
    ]
    with mock_aws():
        ec2 = boto_client("ec2", "us-east-1")
        names = [t["InstanceType"] for t in recorded]
        real = {
            t["InstanceType"]: t
            for t in ec2.describe_instance_types(InstanceTypes=names)["InstanceTypes"]
        }
    assert set(real) == set(names)
    problems = [
        p for t in recorded for p in _trimmed_from(t, real[t["InstanceType"]], t["InstanceType"])
    ]
    assert problems == []


def test_offering_recordings_match_the_real_zones() -> None:
    recorded = [
        o
        for page in load("aws", "describe_instance_type_offerings_us-east-1.json")
        for o in page["InstanceTypeOfferings"]
    ]
    names = sorted({o["InstanceType"] for o in recorded})
    with mock_aws():
        ec2 = boto_client("ec2", "us-east-1")
        real = ec2.describe_instance_type_offerings(
            LocationType="availability-zone", Filters=[{"Name": "instance-type", "Values": names}]
        )["InstanceTypeOfferings"]

    def pairs(rows: list[dict[str, Any]]) -> list[tuple[str, str]]:
        return sorted((o["InstanceType"], o["Location"]) for o in rows)

    assert pairs(recorded) == pairs(real)
