"""Offer filters and `planner offers` / `planner gpus` output formats."""

from __future__ import annotations

import io
import json
from pathlib import Path

import click
import pandas as pd
import pytest
from click.testing import CliRunner

from planner.catalog.query import OfferFilter, filter_offers, sort_offers
from planner.cli import main
from planner.errors import UnknownNameError
from planner.gpu_specs import load_gpu_catalog
from planner.schema import Interconnect, PurchaseOption, validate_offers
from tests.conftest import offer_row

CATALOG = load_gpu_catalog()


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        (
            OfferFilter(),
            {
                "p4d.24xlarge",
                "p4de.24xlarge",
                "g5.xlarge",
                "a2-ultragpu-1g",
                "Standard_ND96isr_H100_v5",
            },
        ),
        (OfferFilter(providers=("GCP",)), {"a2-ultragpu-1g"}),  # case-insensitive provider
        (
            OfferFilter(gpus=("A100",)),
            {"p4d.24xlarge", "p4de.24xlarge", "a2-ultragpu-1g"},
        ),  # family
        (OfferFilter(gpus=("a100 80gb",)), {"p4de.24xlarge", "a2-ultragpu-1g"}),  # alias
        (
            OfferFilter(min_gpu_count=8, max_price_usd_per_hour=41),
            {"p4d.24xlarge", "p4de.24xlarge"},
        ),
        (
            OfferFilter(min_gpu_memory_gib=80),
            {"p4de.24xlarge", "a2-ultragpu-1g", "Standard_ND96isr_H100_v5"},
        ),
        (OfferFilter(min_total_gpu_memory_gib=500), {"p4de.24xlarge", "Standard_ND96isr_H100_v5"}),
        (
            OfferFilter(min_interconnect=Interconnect.NVSWITCH),
            {"p4d.24xlarge", "p4de.24xlarge", "Standard_ND96isr_H100_v5"},
        ),
        # spot: the g5 row has no spot price, so it drops out
        (
            OfferFilter(purchase_option=PurchaseOption.SPOT),
            {"p4d.24xlarge", "p4de.24xlarge", "a2-ultragpu-1g", "Standard_ND96isr_H100_v5"},
        ),
        (OfferFilter(purchase_option=PurchaseOption.SPOT, max_price_usd_per_hour=8.9), set()),
    ],
)
def test_filters(five_offers: pd.DataFrame, flt: OfferFilter, expected: set[str]) -> None:
    out = filter_offers(validate_offers(five_offers), flt, CATALOG)
    assert set(out.instance_type) == expected


def test_sort_by_price_per_gpu(five_offers: pd.DataFrame) -> None:
    out = sort_offers(
        filter_offers(validate_offers(five_offers), OfferFilter(), CATALOG), "price-per-gpu"
    )
    per_gpu = out.price_usd_per_gpu_hour.tolist()
    assert per_gpu == sorted(per_gpu)
    assert out.instance_type.iloc[0] == "g5.xlarge"


def test_unknown_region_suggests(five_offers: pd.DataFrame) -> None:
    with pytest.raises(UnknownNameError, match="did you mean us-east-1"):
        filter_offers(validate_offers(five_offers), OfferFilter(regions=("us-east1",)), CATALOG)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_cli_offers_json_records() -> None:
    code, out, _ = run(
        "offers", "--gpu", "A100-80GB", "--max-price", "40", "--sort", "price", "--format", "json"
    )
    assert code == 0
    records = json.loads(out)
    assert records, "the bundled snapshot has A100-80GB offers under $40/h"
    required = {"provider", "region", "instance_type", "gpu_model", "gpu_count", "gpu_memory_gib",
                "price_on_demand_usd_per_hour", "price_spot_usd_per_hour", "as_of", "source"}  # fmt: skip
    assert required <= set(records[0])
    assert {r["gpu_model"] for r in records} == {"A100-80GB"}
    prices = [r["price_on_demand_usd_per_hour"] for r in records]
    assert prices == sorted(prices) and max(prices) <= 40
    assert {r["provider"] for r in records} <= {"aws", "gcp", "azure", "lambda"}


def test_cli_offers_csv_round_trips_through_validator() -> None:
    code, out, _ = run("offers", "--provider", "aws", "--gpu", "H100", "--format", "csv")
    assert code == 0
    df = pd.read_csv(io.StringIO(out)).drop(
        columns=["purchase_option", "price_usd_per_hour", "price_usd_per_gpu_hour"]
    )
    clean = validate_offers(df, source="cli csv")
    assert len(clean) > 0 and set(clean.provider) == {"aws"} and set(clean.gpu_model) == {"H100"}


def test_cli_offers_table_shows_provenance_and_staleness() -> None:
    code, out, _ = run("offers", "--gpu", "H100", "--provider", "aws", "--region", "us-east-1")
    assert code == 0
    assert "p5.48xlarge" in out
    assert "prices: aws as of 2026-11-09" in out
    assert "warning: aws prices are" not in out  # dated by public prices of 2026-11-09
    code, out, _ = run("offers", "--gpu", "H100", "--provider", "azure")
    assert code == 0
    assert "prices: azure as of 2024-01-01 (estimated)" in out
    assert "warning: azure prices are" in out  # the older Azure extract


def test_cli_offers_markdown_with_private_offers(tmp_path: Path) -> None:
    private = tmp_path / "mine.csv"
    pd.DataFrame(
        [offer_row(provider="ourdc", region="basement", instance_type="box-1", as_of="2026-11-01")]
    ).to_csv(private, index=False)
    code, out, _ = run(
        "offers", "--provider", "ourdc", "--offers", str(private), "--format", "markdown"
    )
    assert code == 0
    assert out.startswith("| provider")
    assert "box-1" in out


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("offers", "--gpu", "H100-SXM9"), "did you mean"),  # unknown GPU
        (("offers", "--provider", "awz"), "did you mean aws"),  # unknown provider
        (("offers", "--region", "us-esat-1"), "us-east-1"),  # unknown region
    ],
)
def test_cli_bad_names_exit_nonzero_without_traceback(args: tuple[str, ...], fragment: str) -> None:
    code, _, err = run(*args)
    assert code == 2
    assert fragment in err
    assert "Traceback" not in err


def test_cli_bad_offers_csv_names_file_row_column(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    pd.DataFrame(
        [offer_row(), offer_row(instance_type="x", price_on_demand_usd_per_hour=-2)]
    ).to_csv(bad, index=False)
    code, _, err = run("offers", "--offers", str(bad))
    assert code == 2
    assert str(bad) in err and "row 3" in err and "price_on_demand_usd_per_hour" in err
    assert "Traceback" not in err


def test_cli_gpus_json() -> None:
    code, out, _ = run("gpus", "--format", "json")
    assert code == 0
    records = {r["name"]: r for r in json.loads(out)}
    h100 = records["H100"]
    assert h100["memory_gib"] == 80 and h100["tensor_tflops_dense"] == pytest.approx(989.4)
    assert {"aws", "gcp", "azure"} <= set(h100["offered_by"])
    assert records["RTX4090"]["offered_by"] == []  # a local GPU, not in any cloud snapshot


def test_every_command_has_docstring_with_example() -> None:
    ctx = click.Context(main)
    names = main.list_commands(ctx)  # commands load lazily: list them, then load each
    assert {"offers", "quote", "tco", "budget", "report"} <= set(names)
    for name in names:
        cmd = main.get_command(ctx, name)
        assert cmd is not None, f"`planner {name}` is listed but does not load"
        assert cmd.help and "Example:" in cmd.help, (
            f"`planner {name}` needs a docstring with an example"
        )


# --- an empty answer says which filter emptied it and what is on offer instead ------------------


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["--provider", "lambda", "--region", "eu-west-3"],
            ["region filter", "regions with offers from lambda: us-west"],
        ),
        (["--min-gpus", "17"], ["at least 17 GPUs per instance", "the most on offer is 16"]),
        (
            ["--gpu", "T4", "--min-gpu-memory", "40"],
            ["GPU memory filter", "with GPU T4", "the most on offer is 16 GiB"],
        ),
        (
            ["--gpu", "H100", "--min-total-gpu-memory", "2000"],
            ["total GPU memory filter", "the most on offer is 640 GiB"],
        ),
        (
            ["--gpu", "T4", "--interconnect", "nvswitch"],
            ["interconnect filter", "the fastest on offer is pcie"],
        ),
        (
            ["--provider", "lambda", "--purchase", "spot"],
            ["no spot prices from lambda", "priced there: on-demand"],
        ),
        (
            ["--gpu", "H100", "--max-price", "0.5"],
            ["price filter", "at or below 0.5 USD", "the cheapest is 4.29 USD"],
        ),
    ],
)
def test_empty_offers_say_which_filter_emptied_them(args: list[str], says: list[str]) -> None:
    result = CliRunner().invoke(main, ["offers", *args, "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == []  # stdout stays one clean document
    note = next(line for line in result.stderr.splitlines() if line.startswith("note: "))
    for needle in says:
        assert needle in note, note


def test_empty_offers_reason_reaches_the_library() -> None:
    import planner

    found = planner.offers(OfferFilter(gpus=("H100",), max_price_usd_per_hour=0.5))
    assert found.offers.empty
    assert found.why_empty is not None and "price filter" in found.why_empty
    assert planner.offers(OfferFilter(gpus=("H100",))).why_empty is None


def test_a_price_list_written_by_offers_reads_back_as_it_is(tmp_path: Path) -> None:
    """`planner offers --format csv > p.csv && planner offers --offers p.csv` round-trips: the
    listing's own columns (purchase option, price per hour and per GPU-hour) are dropped on
    the way in and computed again."""
    args = ["offers", "--gpu", "H100", "--provider", "aws", "--purchase", "spot", "--format", "csv"]
    written = CliRunner().invoke(main, args)
    assert written.exit_code == 0, written.output
    prices = tmp_path / "p.csv"
    prices.write_text(written.stdout, encoding="utf-8")
    assert "price_usd_per_gpu_hour" in written.stdout.splitlines()[0]
    read_back = CliRunner().invoke(main, [*args, "--offers", str(prices)])
    assert read_back.exit_code == 0, read_back.output
    assert read_back.stdout == written.stdout
    assert len(written.stdout.splitlines()) > 2  # a header and some offers


@pytest.mark.parametrize(
    ("choice", "models", "count"),
    [
        ("H100", {"H100"}, None),
        ("H100:8", {"H100"}, 8),
        ("A100-80GB:8", {"A100-80GB"}, 8),
        ("A100:80GB:8", {"A100-80GB", "A100-80GB-PCIe"}, 8),
        ("A100:40GB", {"A100-40GB"}, None),
        # every A100 (both sizes, SXM and PCIe), not the A800 and A30 of its efficiency family
        ("A100", {"A100-40GB", "A100-80GB", "A100-80GB-PCIe"}, None),
        (
            "..16GB",
            {
                "T4",
                "V100-16GB",
                "RTX3060",
                "RTXA4000",
                "P100",
                "P4",
                "GTX1660",
                "RTX2060",
                "RTX2080Ti",
                "RTX3080",
                "RTX3080Ti",
                "RTX4070Ti",
                "RTX4080",
                # the older, consumer and edge GPUs added later
                "K80",
                "M60",
                "TITAN-V",
                "A2",
                "GTX1080Ti",
                "TITAN-Xp",
                "RTX2080",
                "RTX2080Super",
                "RTX3060Ti",
                "RTX3070",
                "RTX3070Ti",
                "RTX3080-12GB",
                "RTX4060Ti",
                "RTX4060Ti-16GB",
                "RTX4070",
                "RTX4070Super",
                "RTX4070TiSuper",
                "RTX4080Super",
                "RTX5070",
                "RTX5070Ti",
                "RTX5080",
                "Jetson-Orin-Nano",
                "Jetson-Orin-Nano-Super",
            },
            None,
        ),
        ("141GB..150GB", {"H200"}, None),
        ("90GB..100GB:8", {"H100-NVL", "H20", "GH200", "RTX-PRO-6000"}, 8),
    ],
)
def test_gpu_choices_in_the_ecosystems_forms(
    choice: str, models: set[str], count: int | None
) -> None:
    parsed = CATALOG.choice(choice)
    assert set(parsed.names) == models
    assert parsed.count == count


def test_gpu_count_in_a_choice_filters_gpus_per_instance() -> None:
    result = CliRunner().invoke(
        main, ["offers", "--gpu", "H100:8", "--provider", "aws", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert rows and {(r["gpu_model"], r["gpu_count"]) for r in rows} == {("H100", 8)}
    both = CliRunner().invoke(
        main,
        ["offers", "--gpu", "H100:8", "--gpu", "T4:1", "--provider", "aws", "--format", "json"],
    )
    kinds = {(r["gpu_model"], r["gpu_count"]) for r in json.loads(both.stdout)}
    assert kinds == {("H100", 8), ("T4", 1)}  # choices are alternatives


def test_group_by_keeps_the_cheapest_offer_of_each_group_and_counts_the_group() -> None:
    from planner.catalog.query import group_offers, with_price

    table = with_price(
        validate_offers(
            pd.DataFrame(
                [
                    offer_row(region="eu-west-1", price_on_demand_usd_per_hour=30.0),
                    offer_row(region="us-west-2", price_on_demand_usd_per_hour=20.0),
                    offer_row(region="us-east-1", price_on_demand_usd_per_hour=20.0),
                    offer_row(
                        instance_type="g4dn.xlarge",
                        gpu_model="T4",
                        gpu_count=1,
                        price_on_demand_usd_per_hour=0.5,
                        interconnect="none",
                    ),
                ]
            )
        ),
        PurchaseOption.ON_DEMAND,
    )
    grouped = group_offers(table, ["gpu"])
    rows = list(
        zip(grouped["gpu_model"], grouped["region"], grouped["offers_in_group"], strict=True)
    )
    # cheapest first; the tie at $20 goes to the home region (us-east-1), not the first listed
    assert rows == [("T4", "us-east-1", 1), ("A100-40GB", "us-east-1", 3)]
    with pytest.raises(UnknownNameError, match="group key 'vendor'"):
        group_offers(table, ["vendor"])


def test_period_month_shows_730_hours_of_every_price_side_by_side() -> None:
    args = ["offers", "--gpu", "A100-80GB", "--provider", "gcp", "--region", "us-central1"]
    hourly = CliRunner().invoke(main, [*args, "--format", "json"])
    row = json.loads(hourly.stdout)[0]
    monthly = CliRunner().invoke(main, [*args, "--period", "month", "--limit", "1"])
    assert monthly.exit_code == 0, monthly.output
    header, _, line = monthly.stdout.splitlines()[:3]
    assert "on-demand $/mo" in header and "3y $/mo" in header and "spot $/mo" in header
    for column in ("price_on_demand_usd_per_hour", "price_reserved_3y_usd_per_hour"):
        assert f"{row[column] * 730:,.4g}" in line  # the table shows 4 significant digits


def test_offers_filter_on_the_host_vcpus_and_ram() -> None:
    """An 8-GPU job with 12 data-loader workers per GPU needs 96+ vCPUs; offload needs RAM."""
    from planner.api import offers
    from planner.catalog.query import OfferFilter

    rows = offers(OfferFilter(gpus=("H100",), min_vcpus=100, min_host_memory_gib=1500)).offers
    assert not rows.empty
    assert (rows["vcpus"] >= 100).all() and (rows["host_memory_gib"] >= 1500).all()
    none = offers(OfferFilter(gpus=("H100",), min_host_memory_gib=99999))
    assert none.offers.empty
    assert none.why_empty is not None and "host memory filter" in none.why_empty
