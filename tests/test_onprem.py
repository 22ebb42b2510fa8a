"""Hardware files and money: validation errors name the file and key; currencies convert."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from planner.config.currency import convert_money, fx_table_from_mapping, load_fx_rates, parse_money
from planner.config.scenarios import scenarios_dir
from planner.errors import ConfigError, UnknownNameError
from planner.ownership.hardware import load_hardware
from planner.schema import Interconnect

GOOD: dict[str, Any] = {
    "gpu": "H100",
    "gpus_per_machine": 8,
    "interconnect": "nvswitch",
    "capex_usd": 310000,
    "lifetime_years": 4,
    "power_kw_avg": 8.0,
    "power_kw_max": 10.2,
    "pue": 1.4,
    "electricity_usd_per_kwh": 0.10,
    "colocation_usd_per_kw_month": 184,
}


def write(tmp_path: Path, data: dict[str, Any], name: str = "box.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return str(path)


SHIPPED = sorted(p.stem for p in (scenarios_dir() / "hardware").glob("*.yaml"))


def test_the_seven_configurations_are_shipped() -> None:
    gpus = {load_hardware(name).gpu for name in SHIPPED}
    assert {"RTX3060", "RTX4090", "RTXA4000", "A100-80GB", "H100", "Jetson-AGX-Orin"} <= gpus
    assert len(SHIPPED) >= 7


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_files_load_and_cite_sources(name: str) -> None:
    hw = load_hardware(name)
    assert hw.name == name
    assert hw.capex_usd > 0 and hw.power_kw_avg > 0 and hw.electricity_usd_per_kwh > 0
    assert len(hw.source) > 40  # every price and power figure carries a source


def test_minimal_file_gets_defaults(tmp_path: Path) -> None:
    hw = load_hardware(write(tmp_path, GOOD))
    assert hw.name == "box"
    assert hw.machines == 1 and hw.hours_available_per_day == 24
    assert hw.interconnect is Interconnect.NVSWITCH
    assert hw.support_fraction_per_year == 0 and hw.rack_usd_per_month == 0


def test_capex_in_another_currency_is_converted(tmp_path: Path) -> None:
    # (2,000,000 CNY: an 8 x H100 server's price; 80,000 was, before sweep 17 refused a capex
    # a tenth of what the GPUs alone cost)
    data = {k: v for k, v in GOOD.items() if k != "capex_usd"} | {"capex": "2000000 CNY"}
    hw = load_hardware(write(tmp_path, data))
    # ECB 2025-02-28: 1 EUR = 1.0411 USD = 7.5782 CNY
    assert hw.capex_usd == pytest.approx(2_000_000 * 1.0411 / 7.5782, rel=1e-9)


def test_file_currency_applies_to_untagged_neutral_keys(tmp_path: Path) -> None:
    data = {k: v for k, v in GOOD.items() if k not in ("capex_usd", "electricity_usd_per_kwh")}
    data |= {"currency": "EUR", "capex": 100000, "electricity_per_kwh": 0.2}
    hw = load_hardware(write(tmp_path, data))
    assert hw.capex_usd == pytest.approx(104110.0)
    assert hw.electricity_usd_per_kwh == pytest.approx(0.2 * 1.0411)


@pytest.mark.parametrize(
    ("change", "key", "message"),
    [
        (
            {"capex_usd": None},
            "capex_usd",
            "required key is missing",
        ),  # neither capex_usd nor capex
        ({"lifetime_years": None}, "lifetime_years", "required key is missing"),
        (
            {"electricity_usd_per_kwh": -0.1},
            "electricity_usd_per_kwh",
            "must be at least 0, got -0.1",
        ),
        ({"capex_usd": -5}, "capex_usd", "must be at least 0, got -5"),
        ({"resale_fraction": 1.5}, "resale_fraction", "must be at most 1, got 1.5"),
        ({"pue": 0.9}, "pue", "must be at least 1, got 0.9"),
        ({"power_kw_max": 5.0}, "power_kw_max", "below power_kw_avg"),
        ({"power_kw_idle": 9.0}, "power_kw_idle", "above power_kw_avg"),  # idle over load
        ({"hours_available_per_day": 25}, "hours_available_per_day", "must be at most 24, got 25"),
        ({"capex_usd": None, "capex": "80000 XYZ"}, "capex", "unknown currency 'XYZ'"),
        ({"capex": "1000 EUR"}, "capex", "both capex_usd and capex"),
        ({"capex_usd": None, "capex": "lots"}, "capex", "cannot read 'lots'"),
        ({"rack_usd_per_month": 1500}, "rack_usd_per_month", "both colocation"),
        ({"currency": "EUD"}, "currency", "unknown currency"),
    ],
)
def test_bad_values_name_file_and_key(
    tmp_path: Path, change: dict[str, Any], key: str, message: str
) -> None:
    data = {k: v for k, v in (GOOD | change).items() if v is not None}
    path = write(tmp_path, data)
    with pytest.raises(ConfigError) as err:
        load_hardware(path)
    text = str(err.value)
    assert text.startswith(f"{path}: {key}: "), text
    assert message in text


def test_unknown_key_suggests_the_right_one(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD | {"power_kw_avgg": 3})
    with pytest.raises(
        ConfigError, match=r"power_kw_avgg: unknown key\n  hint: did you mean 'power_kw_avg'\?"
    ):
        load_hardware(path)


def test_unknown_gpu_suggests_names(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD | {"gpu": "H1000"})
    with pytest.raises(UnknownNameError) as err:
        load_hardware(path)
    assert err.value.file == path and err.value.key_path == "gpu"
    assert "H100" in err.value.suggestions


def test_unknown_hardware_name_lists_bundled_ones() -> None:
    with pytest.raises(UnknownNameError, match="did you mean 8xh100-hgx"):
        load_hardware("8xh100-hgz")


def test_not_a_mapping_and_bad_yaml(tmp_path: Path) -> None:
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_hardware(str(tmp_path / "list.yaml"))
    (tmp_path / "bad.yaml").write_text("gpu: [H100\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_hardware(str(tmp_path / "bad.yaml"))


# --- currency -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "usd"),
    [
        (310000, 310000.0),  # bare number: USD
        ("1,200.50 USD", 1200.5),
        ("EUR 100", 104.11),  # code before the amount
        ("1e4 JPY", 1e4 * 1.0411 / 156.96),
        ("100 gbp", 100 * 1.0411 / 0.82608),  # case-insensitive
    ],
)
def test_parse_money(text: object, usd: float) -> None:
    assert parse_money(text) == pytest.approx(usd)


def test_rate_table_is_dated_and_sourced() -> None:
    table = load_fx_rates()
    assert table.as_of == "2025-02-28"
    assert "ECB" in table.source
    assert table.rate("USD") == 1.0
    assert {"EUR", "GBP", "JPY", "CNY"} <= set(table.codes)


def test_malformed_rate_table() -> None:
    with pytest.raises(ConfigError, match="malformed"):
        fx_table_from_mapping({"as_of": "x", "source": "y", "per_eur": {"EUR": 1.0}})


def test_convert_money_renames_and_scales_only_money() -> None:
    table = fx_table_from_mapping(
        {"as_of": "d", "source": "s", "per_eur": {"EUR": 1.0, "USD": 2.0}}
    )
    record = {
        "capex_usd": 10.0,
        "annual_cost_usd": {"power": 4.0, "total": 6.0},
        "usd_per_gpu_hour": 1.0,
        "utilization": 0.5,
        "comparisons": [{"cloud_usd_per_gpu_hour": 3.0, "breakeven_months": 12.0}],
    }
    assert convert_money(record, "EUR", table) == {
        "capex_eur": 5.0,
        "annual_cost_eur": {"power": 2.0, "total": 3.0},
        "eur_per_gpu_hour": 0.5,
        "utilization": 0.5,
        "comparisons": [{"cloud_eur_per_gpu_hour": 1.5, "breakeven_months": 12.0}],
    }
    assert convert_money(record, "usd", table) is record
