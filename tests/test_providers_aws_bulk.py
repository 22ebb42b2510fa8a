"""The AWS public-data path (no account): recorded, real-shaped public files through the real HTTP
path.  A local server on 127.0.0.1 serves ``tests/fixtures/aws/`` (offer region index, a trimmed
us-east-1 offer CSV with the real metadata rows and header, Spot Advisor data, spot.json); the
mirror variables point the adapter at it.  Where each fixture comes from: tests/fixtures/README.md.
"""

from __future__ import annotations

import json
import math
import os
import socket
import time
from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from botocore.stub import ANY, Stubber
from click.testing import CliRunner

from planner.cli import main
from planner.errors import ProviderError
from planner.gpu_specs import GpuCatalog, load_gpu_catalog
from planner.providers.aws import SOURCE_ENV, AwsProvider, boto3_has_credentials, bulk_drafts
from planner.providers.aws_bulk import (
    ADVISOR_ENV,
    FAMILY_GPU,
    OPEN_BUCKET_PCT,
    PRICING_ENV,
    REGION_INDEX_PATH,
    SPOT_PRICES_ENV,
    AwsPublicData,
    bucket_upper_bound,
    parse_offer_file,
    parse_spot_json,
    spot_prices,
)
from planner.providers.aws_savings import SAVINGS_PLAN_INDEX_PATH, parse_savings_plans
from tests.provider_fakes import (
    FIXTURES,
    FROZEN,
    FakeHttpServer,
    Reply,
    aws_stubs,
    boto_client,
    frozen_clock,
    load,
)

AWS = FIXTURES / "aws"
OFFER_PATH = "/offers/v1.0/aws/AmazonEC2/20261120183512/us-east-1/index.csv"
PLANS_PATH = "/savingsPlan/v1.0/aws/AWSComputeSavingsPlan/20261118213045/us-east-1/index.json"
HOURS_1Y, HOURS_3Y = 8760, 26280


def _serve(server: FakeHttpServer) -> None:
    def file(name: str, kind: str = "application/json") -> list[Reply]:
        return [Reply(200, (AWS / name).read_bytes(), {"Content-Type": kind})]

    server.route(REGION_INDEX_PATH, file("offer_region_index.json"))
    server.route(OFFER_PATH, file("offer_us-east-1.csv", "text/csv"))
    server.route(SAVINGS_PLAN_INDEX_PATH, file("savings_plan_region_index.json"))
    server.route(PLANS_PATH, file("savings_plan_us-east-1.json"))
    server.route("/spot-advisor-data.json", file("spot-advisor-data.json"))
    server.route("/spot.json", file("spot.json", "application/javascript"))


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHttpServer]:
    with FakeHttpServer() as fake:
        _serve(fake)
        for var in (PRICING_ENV, ADVISOR_ENV, SPOT_PRICES_ENV):
            monkeypatch.setenv(var, fake.url)
        monkeypatch.delenv(SOURCE_ENV, raising=False)
        yield fake


def _public(**kw: Any) -> AwsProvider:
    return AwsProvider(clock=frozen_clock, has_credentials=lambda: False, **kw)


def _row(df: Any, instance_type: str) -> dict[str, Any]:
    rows = df[df["instance_type"] == instance_type].to_dict("records")
    assert len(rows) == 1, instance_type
    return rows[0]


def _lines() -> list[bytes]:
    return (AWS / "offer_us-east-1.csv").read_bytes().splitlines(keepends=True)


# ---------------------------------------------------------------- the public path, end to end


def test_no_credentials_reads_the_public_files(server: FakeHttpServer) -> None:
    provider = _public()
    result = provider.fetch(["us-east-1"])
    p5 = _row(result.offers, "p5.48xlarge")
    assert p5["price_on_demand_usd_per_hour"] == 55.04  # prices-next/aws_gpu.csv, 2026
    # Specs come from the offer file's own attribute columns; the model from the family.
    assert (p5["gpu_model"], p5["gpu_count"], p5["vcpus"], p5["host_memory_gib"]) == (
        "H100",
        8,
        192,
        2048,
    )
    assert (p5["network_gbps"], p5["fabric"], p5["interconnect"]) == (3200, "efa", "nvswitch")
    assert p5["price_spot_usd_per_hour"] == pytest.approx(16.9508)  # spot.json's regional price
    assert math.isnan(p5["zones"])  # the public files name no zones
    assert p5["price_basis_reserved"] == "listed"
    assert p5["source"] == provider.source
    assert provider.source == (
        "aws:pricing.us-east-1.amazonaws.com AmazonEC2@20261120183512+spot.json"
        "+AWSComputeSavingsPlan@20261118213045+spot-advisor-data.json"
    )
    assert [s.path for s in server.seen] == [
        REGION_INDEX_PATH,
        OFFER_PATH,
        "/spot.json",
        SAVINGS_PLAN_INDEX_PATH,
        PLANS_PATH,
        "/spot-advisor-data.json",
    ]
    assert _row(result.offers, "p4d.24xlarge")["price_on_demand_usd_per_hour"] == 21.957642
    assert _row(result.offers, "p5en.48xlarge")["gpu_model"] == "H200"  # 1128 GB / 8 = 141


def test_filters_drop_unused_reservation_windows_and_dedicated_rows() -> None:
    # p5.48xlarge and p4d.24xlarge also carry an UnusedCapacityReservation row (same price), a
    # Windows row and a Dedicated row: only the shared Linux "Used" row is the price.
    offer = parse_offer_file(_lines(), "us-east-1", FAMILY_GPU)
    assert offer.prices["p5.48xlarge"].on_demand_usd == Decimal("55.04")
    assert offer.prices["p4d.24xlarge"].on_demand_usd == Decimal("21.957642")
    assert offer.version == "20261120183512"
    assert offer.publication_date == "2026-11-20T18:35:12Z"
    assert "m5.large" not in offer.products  # not a mapped GPU family: never even decoded
    assert offer.rows_parsed < offer.lines


# Hand-computed effective hourly prices of p5.48xlarge from the fixture's rows: Hrs rate plus the
# Quantity (upfront) fee over 8,760 or 26,280 hours.
RESERVED_P5 = [
    ("standard", "No Upfront", 34.1248, 24.768),
    ("standard", "Partial Upfront", 16.512 + 144645 / HOURS_1Y, 11.5584 + 303755 / HOURS_3Y),
    ("standard", "All Upfront", 284469 / HOURS_1Y, 593045 / HOURS_3Y),
    ("convertible", "No Upfront", 39.0784, 28.6208),
    ("convertible", "Partial Upfront", 18.7136 + 163931 / HOURS_1Y, 13.76 + 361613 / HOURS_3Y),
    ("convertible", "All Upfront", 323041 / HOURS_1Y, 708761 / HOURS_3Y),
]


@pytest.mark.parametrize(("offering_class", "option", "one_year", "three_years"), RESERVED_P5)
def test_published_reserved_terms_are_amortised(
    server: FakeHttpServer, offering_class: str, option: str, one_year: float, three_years: float
) -> None:
    provider = _public(reserved_offering_class=offering_class, reserved_purchase_option=option)
    p5 = _row(provider.fetch_offers(["us-east-1"]), "p5.48xlarge")
    assert p5["price_reserved_1y_usd_per_hour"] == pytest.approx(one_year, abs=1e-6)
    assert p5["price_reserved_3y_usd_per_hour"] == pytest.approx(three_years, abs=1e-6)


def test_capacity_block_rows_never_become_a_zero_on_demand_price(server: FakeHttpServer) -> None:
    result = _public().fetch(["us-east-1"])
    assert (result.offers["price_on_demand_usd_per_hour"] > 0).all()
    assert _row(result.offers, "p5en.48xlarge")["price_on_demand_usd_per_hour"] == 63.296
    blocks = {u.item: u.reason for u in result.unmapped if "Capacity Block" in u.item}
    # Not an offer: each is reported, with why (issue 13).
    assert set(blocks) == {
        f"us-east-1/{t} Capacity Block" for t in ("p4d.24xlarge", "p5.48xlarge", "p5en.48xlarge")
    }
    assert set(blocks.values()) == {
        "Capacity Block for ML: its price is not in the Price List; it is quoted per reservation"
        " by ec2.describe_capacity_block_offerings"
    }


def test_a_type_with_only_a_capacity_block_row_is_left_out() -> None:
    lines = [
        line
        for line in _lines()
        if b'"p5en.48xlarge"' not in line or b'"CapacityBlock"' in line  # its block row only
    ]
    offer = parse_offer_file(lines, "us-east-1", FAMILY_GPU)
    assert "p5en.48xlarge" not in offer.prices
    assert "p5en.48xlarge" in offer.capacity_blocks


def test_interruption_comes_from_the_spot_advisor(server: FakeHttpServer) -> None:
    df = _public().fetch_offers(["us-east-1"])
    pct = dict(zip(df["instance_type"], df["spot_interruption_pct"], strict=True))
    # The bucket's upper bound: r=0 "<5%", r=1 "5-10%", r=2 "10-15%", r=3 "15-20%", r=4 ">20%".
    assert pct["p5.48xlarge"] == 5.0
    assert pct["g6e.2xlarge"] == 10.0
    assert pct["g5.xlarge"] == 15.0
    assert pct["g5.2xlarge"] == 20.0
    assert pct["g6e.4xlarge"] == OPEN_BUCKET_PCT == 30.0
    assert math.isnan(pct["p4de.24xlarge"])  # not in the Advisor: the planner's default applies
    assert math.isnan(_row(df, "p5en.48xlarge")["price_spot_usd_per_hour"])  # "N/A*" in spot.json


# ---------------------------------------------------------------- Compute Savings Plans

# The fixture's No Upfront Compute Savings Plan rates (synthetic: 0.73 and 0.54 of on-demand).
SAVINGS_PLANS = {
    "g4dn.xlarge": (0.384, 0.284),
    "g5.xlarge": (0.7344, 0.5432),
    "g6e.2xlarge": (1.6367, 1.2107),
    "p4d.24xlarge": (16.0291, 11.8571),
    "p5.48xlarge": (40.1792, 29.7216),
    "p5en.48xlarge": (46.2061, 34.1798),
}


def _plans_bytes() -> bytes:
    return (AWS / "savings_plan_us-east-1.json").read_bytes()


def test_savings_plans_fill_their_own_columns(server: FakeHttpServer) -> None:
    df = _public().fetch_offers(["us-east-1"])
    for name, (one_year, three_years) in SAVINGS_PLANS.items():
        row = _row(df, name)
        assert row["price_savings_plan_1y_usd_per_hour"] == one_year, name
        assert row["price_savings_plan_3y_usd_per_hour"] == three_years, name
        assert row["price_basis_savings_plan"] == "listed"
    p5 = _row(df, "p5.48xlarge")
    assert p5["price_reserved_1y_usd_per_hour"] == pytest.approx(34.1248)  # still the RI
    p4de = _row(df, "p4de.24xlarge")  # no rate in the Savings Plans file: none, not a guess
    assert math.isnan(p4de["price_savings_plan_1y_usd_per_hour"])
    assert p4de["price_basis_savings_plan"] == "none"


def test_savings_plans_keep_no_upfront_compute_linux_shared_rates_of_the_region() -> None:
    parsed = parse_savings_plans([_plans_bytes()], "us-east-1", FAMILY_GPU)
    # Dropped: All Upfront and EC2 Instance Savings Plans, Windows (RunInstances:0002) and
    # Dedicated rates, the Local Zone g5.xlarge rate, m5.large, Fargate and Lambda.
    assert {t: (float(r[1]), float(r[3])) for t, r in parsed.rates.items()} == SAVINGS_PLANS
    assert (parsed.version, parsed.publication_date) == ("20261118213045", "2026-11-18T21:30:45Z")
    assert parsed.rates_read == 3 * 14 + 3  # three Compute plans of 14 rates, one EC2 plan of 3


@pytest.mark.parametrize("size", [1, 7, 4096])  # a byte, a few, a block: the same answer
def test_savings_plans_stream_in_any_block_size(size: int) -> None:
    body = _plans_bytes()
    blocks = [body[i : i + size] for i in range(0, len(body), size)]
    assert (
        parse_savings_plans(blocks, "us-east-1", FAMILY_GPU).rates
        == parse_savings_plans([body], "us-east-1", FAMILY_GPU).rates
    )


def test_savings_plans_terms_before_products() -> None:
    doc = json.loads(_plans_bytes())
    reordered = {"terms": doc["terms"], "products": doc["products"], "version": doc["version"]}
    parsed = parse_savings_plans([json.dumps(reordered).encode()], "us-east-1", FAMILY_GPU)
    assert parsed.hourly("p5.48xlarge", 3) == Decimal("29.7216")


def test_a_savings_plans_file_cut_short_is_a_provider_error() -> None:
    with pytest.raises(ProviderError, match="Compute Savings Plans file for us-east-1") as info:
        parse_savings_plans([_plans_bytes()[:5000]], "us-east-1", FAMILY_GPU)
    assert "retry" in (info.value.hint or "")
    with pytest.raises(ProviderError, match="is for region 'us-west-2'"):
        parse_savings_plans([b'{"regionCode": "us-west-2"}'], "us-east-1", FAMILY_GPU)


def test_a_region_without_a_savings_plans_file_has_none(server: FakeHttpServer) -> None:
    index = json.loads((AWS / "savings_plan_region_index.json").read_bytes())
    index["regions"] = [r for r in index["regions"] if r["regionCode"] != "us-east-1"]
    server.route(SAVINGS_PLAN_INDEX_PATH, [Reply(200, json.dumps(index).encode())])
    df = _public().fetch_offers(["us-east-1"])
    assert df["price_savings_plan_1y_usd_per_hour"].isna().all()
    assert set(df["price_basis_savings_plan"]) == {"none"}
    assert PLANS_PATH not in {s.path for s in server.seen}


@pytest.mark.parametrize(
    ("label", "upper"),
    [
        ("<5%", 5.0),
        ("5-10%", 10.0),  # the published "max" of this bucket is 11: a chart scale, not the bound
        ("15-20%", 20.0),
        (">20%", OPEN_BUCKET_PCT),
    ],
)
def test_bucket_upper_bound_reads_the_label(label: str, upper: float) -> None:
    assert bucket_upper_bound({"label": label, "max": 99}) == upper


def test_unknown_gpus_and_fractions_are_reported_not_guessed(server: FakeHttpServer) -> None:
    full = load_gpu_catalog()
    without_h200 = GpuCatalog(tuple(g for g in full.gpus if g.name != "H200"))
    result = _public(catalog=without_h200).fetch(["us-east-1"])
    reasons = {u.item: u.reason for u in result.unmapped}
    assert "H200 (p5en) is not in the GPU catalog" in reasons["us-east-1/p5en.48xlarge"]
    assert "T4g (g5g) is not in the GPU catalog" in reasons["us-east-1/g5g.xlarge"]
    assert reasons["us-east-1/g6f.large"] == "GPU family not mapped to a GPU model"
    offered = set(result.offers["instance_type"])
    assert not {"p5en.48xlarge", "g5g.xlarge", "g6f.large", "m5.large"} & offered


def test_gpu_memory_that_contradicts_the_family_is_not_guessed() -> None:
    lines = [line.replace(b'"640 GB HBM3"', b'"320 GB HBM3"') for line in _lines()]
    drafts, unmapped = bulk_drafts(
        parse_offer_file(lines, "us-east-1", FAMILY_GPU),
        load_gpu_catalog(),
        "standard",
        "No Upfront",
    )
    assert "p5.48xlarge" not in {d.instance_type for d in drafts}
    assert any(u.item == "us-east-1/p5.48xlarge" and "320 GB" in u.reason for u in unmapped)


def test_unknown_region_suggests_the_published_ones(server: FakeHttpServer) -> None:
    with pytest.raises(ProviderError) as info:
        _public().fetch(["us-esat-1"])
    assert "AWS publishes no EC2 price file for region 'us-esat-1'" in info.value.message
    assert (info.value.hint or "").startswith("did you mean us-east-1")  # nearest first


def test_an_offer_file_without_the_columns_is_rejected() -> None:
    lines = _lines()
    lines[5] = lines[5].replace(b'"CapacityStatus"', b'"Capacity Status"')
    with pytest.raises(ProviderError, match="lacks the columns CapacityStatus"):
        parse_offer_file(lines, "us-east-1", FAMILY_GPU)
    with pytest.raises(ProviderError, match="no header row"):
        parse_offer_file([b"<html>Access Denied</html>\n"], "us-east-1", FAMILY_GPU)


def test_spot_feed_with_or_without_callback_and_legacy_region_names() -> None:
    doc = {
        "config": {
            "regions": [
                {
                    "region": "us-east",  # the pricing page's old name of us-east-1
                    "instanceTypes": [
                        {
                            "type": "gpuCurrentGen",
                            "sizes": [
                                {
                                    "size": "g5.xlarge",
                                    "valueColumns": [
                                        {"name": "linux", "prices": {"USD": "0.4328"}},
                                        {"name": "mswin", "prices": {"USD": "N/A*"}},
                                    ],
                                },
                                {
                                    "size": "p5.48xlarge",
                                    "valueColumns": [{"name": "linux", "prices": {"USD": "N/A*"}}],
                                },
                            ],
                        }
                    ],
                }
            ]
        }
    }
    plain = json.dumps(doc).encode()
    for body in (plain, b"callback(" + plain + b");\n"):
        assert spot_prices(parse_spot_json(body), "us-east-1") == {"g5.xlarge": Decimal("0.4328")}
    with pytest.raises(ProviderError, match="spot price feed is malformed"):
        spot_prices({"config": {}}, "us-east-1")


# ---------------------------------------------------------------- which path, and credentials


def test_path_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SOURCE_ENV, raising=False)
    assert AwsProvider(has_credentials=lambda: False).price_path() == "public"
    assert AwsProvider(has_credentials=lambda: True).price_path() == "api"
    assert AwsProvider(client_factory=aws_stubs().factory).price_path() == "api"
    monkeypatch.setenv(SOURCE_ENV, "public")  # credentials without pricing:GetProducts
    assert AwsProvider(has_credentials=lambda: True).price_path() == "public"
    monkeypatch.setenv(SOURCE_ENV, "bulk")
    with pytest.raises(ProviderError, match="PLANNER_AWS_PRICE_SOURCE='bulk'") as info:
        AwsProvider().price_path()
    assert info.value.hint == "use one of auto, api, public"


def _no_aws_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no instance-role probe


def test_boto3_chain_without_credentials_finds_none(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _no_aws_credentials(monkeypatch, tmp_path)
    assert boto3_has_credentials() is False
    monkeypatch.setenv("AWS_PROFILE", "no-such-profile")  # unusable config: also none
    assert boto3_has_credentials() is False
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("AWS_PROFILE")
    assert boto3_has_credentials() is True


def _spot_page(page: dict[str, Any]) -> dict[str, Any]:
    rows = [
        {**r, "Timestamp": datetime.fromisoformat(r["Timestamp"])} for r in page["SpotPriceHistory"]
    ]
    return {**page, "SpotPriceHistory": rows}


def test_public_prices_with_credentials_take_spot_per_zone(server: FakeHttpServer) -> None:
    ec2 = boto_client("ec2", "us-east-1")
    stubber = Stubber(ec2)
    for page in load("aws", "describe_instance_type_offerings_us-east-1.json"):
        stubber.add_response(
            "describe_instance_type_offerings",
            page,
            {"LocationType": "availability-zone", "Filters": ANY},
        )
    spot = load("aws", "describe_spot_price_history_us-east-1.json")
    for i, page in enumerate(spot):
        params: dict[str, Any] = {
            "InstanceTypes": ANY,
            "ProductDescriptions": ["Linux/UNIX"],
            "StartTime": FROZEN,
        }
        if i:
            params["NextToken"] = spot[i - 1]["NextToken"]
        stubber.add_response("describe_spot_price_history", _spot_page(page), params)
    stubber.activate()
    provider = AwsProvider(
        client_factory=lambda service, region: ec2,
        public=AwsPublicData(),
        price_source="public",
        clock=frozen_clock,
    )
    df = provider.fetch_offers(["us-east-1"])
    stubber.assert_no_pending_responses()
    g5 = _row(df, "g5.xlarge")
    # Zone prices 0.4177 0.3970 0.4130 0.4028 0.4005 (describe_spot_price_history), not spot.json's.
    assert (g5["price_spot_usd_per_hour"], g5["price_spot_median_usd_per_hour"]) == (0.397, 0.4028)
    assert g5["price_on_demand_usd_per_hour"] == 1.006  # still the public offer file
    assert g5["zones"] >= 1
    assert "+ec2.describe_spot_price_history+" in provider.source
    assert "/spot.json" not in {s.path for s in server.seen}


def test_api_path_adds_the_advisor_when_given_the_public_reader(server: FakeHttpServer) -> None:
    stubs = aws_stubs()
    provider = AwsProvider(client_factory=stubs.factory, public=AwsPublicData(), clock=frozen_clock)
    df = provider.fetch_offers(["us-east-1"])
    assert _row(df, "p5.48xlarge")["spot_interruption_pct"] == 5.0
    assert provider.source.startswith("aws:ec2.describe_instance_types+pricing.get_products")
    assert provider.source.endswith("+AWSComputeSavingsPlan@20261118213045+spot-advisor-data.json")
    assert _row(df, "p5.48xlarge")["price_savings_plan_1y_usd_per_hour"] == 40.1792
    assert [s.path for s in server.seen] == [
        SAVINGS_PLAN_INDEX_PATH,
        PLANS_PATH,
        "/spot-advisor-data.json",
    ]


# ---------------------------------------------------------------- no network, and the CLI


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"  # nothing listens once it is closed


def test_no_network_fails_fast_naming_the_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PRICING_ENV, _closed_port())
    start = time.monotonic()
    with pytest.raises(ProviderError) as info:
        _public().fetch(["us-east-1"])
    assert time.monotonic() - start < 5
    assert info.value.message.startswith(
        f"could not reach {os.environ[PRICING_ENV]}{REGION_INDEX_PATH}"
    )
    assert PRICING_ENV in (info.value.hint or "")
    assert "credentials" not in str(info.value)


def test_cli_refresh_without_an_account(
    server: FakeHttpServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The registry's own AwsProvider(): boto3's chain finds no credentials, the public path runs.
    _no_aws_credentials(monkeypatch, tmp_path)
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path / "data"))
    runner = CliRunner()
    args = ["prices", "refresh", "--provider", "aws", "--region", "us-east-1", "--format", "json"]
    out = runner.invoke(main, [*args, "--force"])  # the trimmed file has fewer types than a region
    assert out.exit_code == 0, out.output
    (published,) = json.loads(out.stdout)
    assert (published["provider"], published["regions"]) == ("aws", "us-east-1")
    assert "us-east-1/p5.48xlarge Capacity Block" in out.stderr  # reported, not priced at $0
    offers = runner.invoke(
        main, ["offers", "--provider", "aws", "--region", "us-east-1", "--format", "json"]
    )
    assert offers.exit_code == 0, offers.output
    rows = {r["instance_type"]: r for r in json.loads(offers.stdout)}
    p5 = rows["p5.48xlarge"]
    assert p5["source"].startswith("aws:pricing.us-east-1.amazonaws.com AmazonEC2@")
    assert p5["price_on_demand_usd_per_hour"] == 55.04
    assert p5["spot_interruption_pct"] == 5.0


def test_cli_refresh_with_no_network_says_the_endpoint_not_credentials(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _no_aws_credentials(monkeypatch, tmp_path)
    monkeypatch.delenv(SOURCE_ENV, raising=False)
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv(PRICING_ENV, _closed_port())
    start = time.monotonic()
    out = CliRunner().invoke(
        main, ["prices", "refresh", "--provider", "aws", "--region", "us-east-1"]
    )
    assert time.monotonic() - start < 10
    assert out.exit_code == 1
    (error,) = [line for line in out.stderr.splitlines() if line.startswith("error: ")]
    assert "aws us-east-1: could not reach http://127.0.0.1:" in error
    assert "credentials" not in error
    assert f"set {PRICING_ENV} to a reachable mirror" in out.stderr


def test_each_region_reports_what_it_read(
    server: FakeHttpServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="planner.providers")
    _public().fetch(["us-east-1"])
    lines = [r.getMessage() for r in caplog.records]
    read = next(line for line in lines if "index.csv" in line)
    assert read.startswith(f"aws us-east-1: read {server.url}{OFFER_PATH} (version 20261120183512)")
    assert "GPU types priced" in read
    assert "aws us-east-1: Spot Advisor lists 9 Linux types" in lines
    assert any(line.startswith("aws us-east-1: 11 GPU offers, 5 left out") for line in lines)


def test_a_download_that_breaks_off_is_a_provider_error(server: FakeHttpServer) -> None:
    from contextlib import contextmanager
    from http.client import IncompleteRead

    from planner.providers.http import open_url

    class BrokenOff:
        def __init__(self, lines: list[bytes]) -> None:
            self.lines = lines

        def __iter__(self) -> Iterator[bytes]:
            yield from self.lines
            raise IncompleteRead(b"", 1_000_000)

    @contextmanager
    def opener(url: str, **kw: Any) -> Iterator[Any]:
        if url.endswith(".csv"):
            yield BrokenOff(_lines()[:40])
        else:
            with open_url(url, **kw) as response:
                yield response

    with pytest.raises(ProviderError, match="the download broke off \\(IncompleteRead\\)") as info:
        _public(public=AwsPublicData(opener=opener)).fetch(["us-east-1"])
    assert PRICING_ENV in (info.value.hint or "")


def test_a_file_served_whole_but_cut_mid_row_is_a_provider_error(server: FakeHttpServer) -> None:
    # a mirror serving a truncated copy (its own Content-Length, so no IncompleteRead): was the
    # rows before the cut published, reported as "row count fell from 11 to 2"
    body = b"".join(_lines()[:40])
    server.route(
        OFFER_PATH, [Reply(200, body[: body.rindex(b",") - 3], {"Content-Type": "text/csv"})]
    )
    with pytest.raises(ProviderError, match="ends mid-row") as info:
        _public().fetch(["us-east-1"])
    assert PRICING_ENV in (info.value.hint or "")
