"""The Lambda Cloud adapter: instance-types API through the real HTTP path on 127.0.0.1.

The recorded answer (``tests/fixtures/lambda/instance_types.json``) carries the prices of
``shared/reference/prices-next/lambda_gpu.csv``; expected values are its cents / 100.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from planner.catalog import load_offer_book
from planner.cli import main
from planner.errors import ProviderError
from planner.gpu_specs import GpuSpec, load_gpu_catalog
from planner.providers.http import DEFAULT_RETRY
from planner.providers.lambda_cloud import KNOWN_REGIONS, LambdaProvider, gpu_for, interconnect
from tests.provider_fakes import FakeHttpServer, Reply, frozen_clock, load
from tests.public_api_fakes import LAMBDA_KEY, LAMBDA_TYPES, lambda_provider_at, lambda_route

MAPPED = 11  # GPU instance types in the fixture the adapter maps


@pytest.fixture
def server() -> Any:
    with FakeHttpServer() as s:
        s.route(LAMBDA_TYPES, lambda_route())
        yield s


def _row(df: Any, region: str, instance_type: str) -> dict[str, Any]:
    rows = df[(df["instance_type"] == instance_type) & (df["region"] == region)]
    assert len(rows) == 1, (region, instance_type)
    return dict(rows.iloc[0])


@pytest.mark.parametrize(
    ("instance_type", "gpu", "count", "link", "price"),
    [
        ("gpu_8x_h100_sxm5", "H100", 8, "nvswitch", 31.92),  # 3192 cents
        ("gpu_1x_h100_sxm5", "H100", 1, "none", 4.29),
        ("gpu_1x_h100_pcie", "H100-PCIe", 1, "none", 3.29),  # "pcie" picks the PCIe card
        ("gpu_1x_gh200", "GH200", 1, "none", 2.29),
        ("gpu_8x_b200_sxm6", "B200", 8, "nvswitch", 53.52),  # sold out everywhere: still listed
        ("gpu_1x_a10", "A10", 1, "none", 1.29),
        ("gpu_8x_a100_80gb_sxm4", "A100-80GB", 8, "nvswitch", 22.32),  # "80gb" in the name
        ("gpu_8x_a100", "A100-40GB", 8, "nvswitch", 15.92),  # "A100 (40 GB SXM4)"
        ("gpu_1x_a100_sxm4", "A100-40GB", 1, "none", 1.99),
        ("gpu_1x_a6000", "RTXA6000", 1, "none", 1.09),
        ("gpu_8x_v100", "V100-16GB", 8, "nvlink", 6.32),  # NVLink hybrid cube mesh, no NVSwitch
    ],
)
def test_offers(
    server: FakeHttpServer, instance_type: str, gpu: str, count: int, link: str, price: float
) -> None:
    row = _row(
        lambda_provider_at(server.url).fetch_offers(["us-east-1"]), "us-east-1", instance_type
    )
    assert (row["gpu_model"], row["gpu_count"], row["interconnect"]) == (gpu, count, link)
    assert row["price_on_demand_usd_per_hour"] == pytest.approx(price)
    assert row["fabric"] == "ethernet"
    # no spot market, no listed reservations
    for column in (
        "price_spot_usd_per_hour",
        "price_reserved_1y_usd_per_hour",
        "price_reserved_3y_usd_per_hour",
        "network_gbps",
    ):
        assert math.isnan(row[column]), column
    assert row["price_basis_reserved"] == "none"


def test_specs_from_the_answer(server: FakeHttpServer) -> None:
    df = lambda_provider_at(server.url).fetch_offers(["us-east-1"])
    row = _row(df, "us-east-1", "gpu_8x_b200_sxm6")
    assert (row["vcpus"], row["host_memory_gib"], row["gpu_memory_gib"]) == (208.0, 2900.0, 180.0)
    assert set(df["source"]) == {"lambda:Lambda Cloud API (cloud.lambda.ai/api/v1/instance-types)"}


def test_every_type_in_every_requested_region_whatever_the_capacity(
    server: FakeHttpServer,
) -> None:
    # gpu_8x_h100_sxm5 has capacity only in us-south-2, gpu_8x_b200_sxm6 nowhere: a plan for next
    # week still needs their prices, which are the same in every region.
    df = lambda_provider_at(server.url).fetch_offers(["us-east-1", "asia-northeast-1"])
    by_region = df.groupby("region")["instance_type"].apply(set).to_dict()
    assert by_region["us-east-1"] == by_region["asia-northeast-1"]
    assert len(by_region["us-east-1"]) == MAPPED
    assert {"gpu_8x_h100_sxm5", "gpu_8x_b200_sxm6"} <= by_region["asia-northeast-1"]


def test_one_request_serves_every_region(server: FakeHttpServer) -> None:
    provider = lambda_provider_at(server.url)
    for region in ("us-east-1", "us-west-1", "europe-central-1"):  # refresh asks one at a time
        provider.fetch([region])
    assert len(server.hits(LAMBDA_TYPES)) == 1


def test_a_region_only_the_answer_names_is_accepted(server: FakeHttpServer) -> None:
    assert "us-south-4" not in KNOWN_REGIONS  # gpu_1x_a10 has capacity there in the fixture
    assert len(lambda_provider_at(server.url).fetch_offers(["us-south-4"])) == MAPPED


def test_unknown_region_suggests(server: FakeHttpServer) -> None:
    with pytest.raises(ProviderError, match="Lambda has no region 'us-east1'") as info:
        lambda_provider_at(server.url).fetch(["us-east1"])
    assert "did you mean us-east-1" in str(info.value.hint)


def test_what_is_left_out(server: FakeHttpServer) -> None:
    result = lambda_provider_at(server.url).fetch(["us-east-1"])
    assert [(u.item, u.reason) for u in result.unmapped] == [
        ("gpu_1x_rtx4000ada", "GPU 'rtx4000ada' not in the Lambda GPU table")
    ]
    assert "cpu_4x_general" not in set(result.offers["instance_type"])  # no GPU: not an offer


def test_missing_key_names_the_variable_and_where_to_get_one(server: FakeHttpServer) -> None:
    provider = lambda_provider_at(server.url, api_key=None)  # and an empty environment
    with pytest.raises(ProviderError) as info:
        provider.fetch(["us-east-1"])
    assert info.value.message.startswith("LAMBDA_API_KEY is not set")
    assert "https://cloud.lambda.ai/api-keys" in str(info.value.hint)
    assert not server.hits(LAMBDA_TYPES)  # nothing sent without a key


def test_a_key_exported_empty_is_blank_not_missing(server: FakeHttpServer) -> None:
    # LAMBDA_API_KEY= : was "not set", as if the export had not run
    provider = LambdaProvider(
        base_url=server.url + "/api/v1", environ={"LAMBDA_API_KEY": ""}, clock=frozen_clock
    )
    with pytest.raises(ProviderError, match=r"^LAMBDA_API_KEY is blank"):
        provider.fetch(["us-east-1"])
    assert not server.hits(LAMBDA_TYPES)


def test_key_from_the_environment_is_sent_as_bearer(server: FakeHttpServer) -> None:
    provider = LambdaProvider(
        base_url=server.url + "/api/v1", environ={"LAMBDA_API_KEY": LAMBDA_KEY}, clock=frozen_clock
    )
    assert len(provider.fetch_offers(["us-east-1"])) == MAPPED
    (hit,) = server.hits(LAMBDA_TYPES)
    assert hit.headers["Authorization"] == f"Bearer {LAMBDA_KEY}"


def test_a_refused_key_is_never_shown(server: FakeHttpServer) -> None:
    secret = "secret_lambda_key_1234"
    with pytest.raises(ProviderError) as info:
        lambda_provider_at(server.url, api_key=secret).fetch(["us-east-1"])
    assert "HTTP 401" in str(info.value) and secret not in str(info.value)


def test_mirror_variable(server: FakeHttpServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_LAMBDA_API_URL", server.url + "/api/v1/")
    monkeypatch.setenv("LAMBDA_API_KEY", LAMBDA_KEY)
    assert len(LambdaProvider(clock=frozen_clock).fetch_offers(["us-east-1"])) == MAPPED


def test_a_failed_fetch_is_not_repeated_per_region(server: FakeHttpServer) -> None:
    server.route(LAMBDA_TYPES, [Reply(503, {"error": {"code": "global/unavailable"}})])
    provider = lambda_provider_at(server.url)
    for region in ("us-east-1", "us-west-1"):  # one catalog for every region: one timeout at most
        with pytest.raises(ProviderError, match="HTTP 503"):
            provider.fetch([region])
    # retried (503 is worth another try) for the first region only, never again for the second
    assert len(server.hits(LAMBDA_TYPES)) == DEFAULT_RETRY.attempts


@pytest.mark.parametrize("body", [{"data": []}, {"error": {"code": "global/unknown"}}, []])
def test_an_answer_without_data_is_an_error(server: FakeHttpServer, body: Any) -> None:
    server.route(LAMBDA_TYPES, [Reply(200, body)])
    with pytest.raises(ProviderError, match="no 'data' object"):
        lambda_provider_at(server.url).fetch(["us-east-1"])


def test_a_negative_price_is_refused_not_reported_as_no_price(server: FakeHttpServer) -> None:
    # was: "no price", the type dropped and the drop offered to --accept-changes
    data = load("lambda", "instance_types.json")["data"]
    entry = json.loads(json.dumps(data["gpu_8x_h100_sxm5"]))
    entry["instance_type"]["price_cents_per_hour"] = -3192
    server.route(LAMBDA_TYPES, lambda_route({"gpu_8x_h100_sxm5": entry}))
    with pytest.raises(ProviderError, match="price_cents_per_hour of -3192, not a price"):
        lambda_provider_at(server.url).fetch(["us-east-1"])


def test_an_absurd_price_names_the_instance_type_and_the_api_not_a_price_file(
    server: FakeHttpServer,
) -> None:
    # was: "lambda API: row 3 ...", with the hint for a hand-written price list ("divide a
    # monthly price by 730")
    data = load("lambda", "instance_types.json")["data"]
    entry = json.loads(json.dumps(data["gpu_8x_h100_sxm5"]))
    entry["instance_type"]["price_cents_per_hour"] = 319_200_000_000
    server.route(LAMBDA_TYPES, lambda_route({"gpu_8x_h100_sxm5": entry}))
    with pytest.raises(ProviderError, match=r"\(gpu_8x_h100_sxm5\)") as info:
        lambda_provider_at(server.url).fetch(["us-east-1"])
    assert "more than any real offer has" in info.value.message
    assert "730" not in str(info.value.hint)


def test_a_count_that_contradicts_the_name_is_reported(server: FakeHttpServer) -> None:
    data = load("lambda", "instance_types.json")["data"]
    entry = json.loads(json.dumps(data["gpu_8x_v100"]))
    entry["instance_type"]["specs"]["gpus"] = 4
    server.route(LAMBDA_TYPES, lambda_route({"gpu_8x_v100": entry}))
    result = lambda_provider_at(server.url).fetch(["us-east-1"])
    assert result.offers.empty
    assert result.unmapped[0].reason == "the name's GPU count disagrees with specs.gpus=4"


@pytest.mark.parametrize(
    ("name", "description", "expected"),
    [
        ("gpu_1x_h100_pcie", "H100 (80 GB PCIe)", "H100-PCIe"),
        ("gpu_2x_h100_sxm5", "", "H100"),  # no description: the name's default
        ("gpu_1x_a100", "A100 (80 GB PCIe)", "A100-80GB"),  # the description picks the member
        ("gpu_1x_a100", "A100 (40 GB PCIe)", "A100-40GB"),
        ("gpu_8x_v100", "Tesla V100 (32 GB)", "V100-32GB"),
        # contradictions and strangers are reported, never guessed
        ("gpu_8x_a100_80gb_sxm4", "A100 (40 GB SXM4)", "name says 80 GB per GPU"),
        ("gpu_1x_gh200", "GH200 (144 GB)", "no GH200 with 144 GB"),
        ("gpu_8x_mi300x", "MI300X (192 GB)", "GPU 'mi300x' not in the Lambda GPU table"),
        ("h100_single", "H100 (80 GB)", "instance name not of the form"),
    ],
)
def test_gpu_for(name: str, description: str, expected: str) -> None:
    got = gpu_for(name, description, load_gpu_catalog())
    if isinstance(got, GpuSpec):
        assert got.name == expected
    else:
        assert got.startswith(expected)


def test_links_follow_the_bundled_snapshot_rules() -> None:
    """The adapter's links equal those planner.catalog.reference.normalise_lambda gave the bundle."""
    offers = load_offer_book().offers
    bundled = offers[offers["provider"] == "lambda"].drop_duplicates("instance_type")
    assert len(bundled) >= 20
    for row in bundled.to_dict("records"):
        link = interconnect(row["instance_type"], int(row["gpu_count"]))
        assert link.value == row["interconnect"], row["instance_type"]


# ---------------------------------------------------------------- through the CLI


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: FakeHttpServer) -> Path:
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("PLANNER_LAMBDA_API_URL", server.url + "/api/v1")
    return tmp_path


def test_cli_refresh(cli_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAMBDA_API_KEY", LAMBDA_KEY)
    runner = CliRunner()
    args = [
        "prices",
        "refresh",
        "--provider",
        "lambda",
        "--region",
        "us-east-1",
        "--format",
        "json",
    ]
    out = runner.invoke(main, [*args, "--force"])  # the fixture holds half the bundle's 22 types
    assert out.exit_code == 0, out.output
    (published,) = json.loads(out.stdout)
    assert (published["provider"], published["regions"]) == ("lambda", "us-east-1")
    assert LAMBDA_KEY not in out.output

    offers = runner.invoke(
        main, ["offers", "--provider", "lambda", "--region", "us-east-1", "--format", "json"]
    )
    assert offers.exit_code == 0, offers.output
    rows = {r["instance_type"]: r for r in json.loads(offers.stdout)}
    assert rows["gpu_8x_h100_sxm5"]["price_on_demand_usd_per_hour"] == pytest.approx(31.92)
    assert rows["gpu_8x_h100_sxm5"]["source"].startswith("lambda:Lambda Cloud API")


def test_cli_refresh_of_two_regions_notes_an_unmapped_type_once(
    cli_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # one catalog for every region: the left-out type was listed once a region
    monkeypatch.setenv("LAMBDA_API_KEY", LAMBDA_KEY)
    args = ["prices", "refresh", "--provider", "lambda", "--region", "us-east-1"]
    out = CliRunner().invoke(main, [*args, "--region", "us-west-1", "--force"])
    assert out.exit_code == 0, out.output
    assert out.stderr.count("lambda gpu_1x_rtx4000ada:") == 1
    assert "note: 1 item(s) left out" in out.stderr


def test_cli_refresh_without_a_key_is_a_clean_error(
    cli_env: Path, monkeypatch: pytest.MonkeyPatch, server: FakeHttpServer
) -> None:
    monkeypatch.delenv("LAMBDA_API_KEY", raising=False)
    out = CliRunner().invoke(main, ["prices", "refresh", "--provider", "lambda"])
    assert out.exit_code == 1
    assert "Traceback" not in out.output
    assert (
        "lambda us-east-1, us-west-1: LAMBDA_API_KEY is not set: Lambda's instance-types API"
        " needs an API key" in out.stderr
    )
    assert "create a key at https://cloud.lambda.ai/api-keys" in out.stderr
    assert not server.hits(LAMBDA_TYPES)
