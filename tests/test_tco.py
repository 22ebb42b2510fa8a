"""TCO maths: the hand-worked 8x H100 example of cost-facts.md s2.4 and breakeven against the cloud."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import pytest

from planner.errors import ConfigError
from planner.ownership.costs import (
    annual_cost,
    breakeven_months,
    capital_recovery_factor,
    compare_cloud,
    machine_cost_usd_per_hour,
    tco,
)
from planner.ownership.hardware import HardwareSpec, load_hardware
from planner.schema import Interconnect, PurchaseOption

# cost-facts.md s2.4, by hand:
#   depreciation 310,000 / 4                   = 77,500
#   colocation   10.2 kW x 184 $/kW-mo x 12    = 22,521.6
#   energy       8 kW x 1.4 x 8,760 h x $0.10  =  9,811.2
#   support      10% x 310,000                 = 31,000
#   staff        0.0133 FTE x 200,000          =  2,660
#   total                                      = 143,492.8  (~$143k/yr)
#   per GPU-hour: 143,492.8 / (8 x 8,760)      = 2.0476     (~$2.05)
HAND_TOTAL_USD = 77_500 + 22_521.6 + 9_811.2 + 31_000 + 2_660


def h100() -> HardwareSpec:
    return HardwareSpec(
        name="8xh100-hgx",
        gpu="H100",
        gpus_per_machine=8,
        machines=1,
        interconnect=Interconnect.NVSWITCH,
        capex_usd=310_000,
        lifetime_years=4,
        power_kw_avg=8.0,
        power_kw_max=10.2,
        pue=1.4,
        electricity_usd_per_kwh=0.10,
        colocation_usd_per_kw_month=184,
        support_fraction_per_year=0.10,
        staff_fte=0.0133,
        staff_usd_per_year=200_000,
    )


def test_worked_example_annual_cost_within_one_percent() -> None:
    cost = annual_cost(h100())
    assert cost.total_usd == pytest.approx(143_000, rel=0.01)
    assert cost.total_usd == pytest.approx(HAND_TOTAL_USD, rel=1e-9)
    assert cost.depreciation_usd == pytest.approx(77_500)
    assert cost.colocation_usd == pytest.approx(22_521.6)
    assert cost.power_usd == pytest.approx(9_811.2)
    assert cost.support_usd == pytest.approx(31_000)
    assert cost.staff_usd == pytest.approx(2_660)
    assert cost.financing_usd == 0


def test_worked_example_per_gpu_hour() -> None:
    result = tco(h100(), utilization=0.6)
    assert result.usd_per_gpu_hour == pytest.approx(2.05, rel=0.01)
    # "At 60% utilization: $3.4/GPU-h"
    assert result.usd_per_useful_gpu_hour == pytest.approx(3.4, rel=0.01)


def test_shipped_file_is_the_worked_example() -> None:
    assert annual_cost(load_hardware("8xh100-hgx")).total_usd == pytest.approx(HAND_TOTAL_USD)


def _offers(
    rows: list[tuple[str, str, str, float, float | None, float | None, float | None]],
) -> pd.DataFrame:
    # provider, instance, interconnect, on-demand, spot, 1y, 3y (whole 8-GPU instance, USD/h)
    return pd.DataFrame(
        [
            {
                "provider": p,
                "region": "r1",
                "instance_type": i,
                "gpu_model": "H100",
                "gpu_count": 8,
                "interconnect": ic,
                "price_on_demand_usd_per_hour": od,
                "price_spot_usd_per_hour": spot,
                "price_reserved_1y_usd_per_hour": r1,
                "price_reserved_3y_usd_per_hour": r3,
            }
            for p, i, ic, od, spot, r1, r3 in rows
        ]
    )


@pytest.mark.parametrize(
    ("usd_per_gpu_hour", "expected"),
    [
        (2.35, 0.87),  # 1-yr neocloud contract, cost-facts.md s2.4: ~87%
        (4.92, 0.42),  # AWS Capacity Block p5: ~42%
        (12.29, 0.17),  # AWS p5 on-demand 2024 list ($98.32/8): ~17%
    ],
)
def test_breakeven_utilization_against_published_prices(
    usd_per_gpu_hour: float, expected: float
) -> None:
    offers = _offers([("x", "p5", "nvswitch", usd_per_gpu_hour * 8, None, None, None)])
    (comparison,) = compare_cloud(h100(), offers, 0.6)
    assert comparison.purchase_option is PurchaseOption.ON_DEMAND
    assert comparison.breakeven_utilization == pytest.approx(expected, abs=0.01)


def test_dropping_support_lowers_neocloud_breakeven_to_69_percent() -> None:
    offers = _offers([("x", "p5", "nvswitch", 2.35 * 8, None, None, None)])
    (comparison,) = compare_cloud(replace(h100(), support_fraction_per_year=0.0), offers, 1.0)
    assert comparison.breakeven_utilization == pytest.approx(0.69, abs=0.01)


def test_cheapest_offer_per_option_and_interconnect_filter() -> None:
    offers = _offers(
        [
            ("a", "cheap-pcie", "pcie", 8.0, 4.0, 6.0, 5.0),  # cheapest, but no NVSwitch
            ("b", "sxm-1", "nvswitch", 24.0, 12.0, 20.0, 16.0),
            ("c", "sxm-2", "nvswitch", 30.0, 10.0, None, 15.0),
        ]
    )
    by_option = {c.purchase_option: c for c in compare_cloud(h100(), offers, 0.6)}
    assert by_option[PurchaseOption.ON_DEMAND].instance_type == "sxm-1"
    assert by_option[PurchaseOption.SPOT].instance_type == "sxm-2"
    assert by_option[PurchaseOption.RESERVED_1Y].cloud_usd_per_gpu_hour == pytest.approx(20.0 / 8)
    assert by_option[PurchaseOption.RESERVED_3Y].instance_type == "sxm-2"
    loose = {
        c.purchase_option: c for c in compare_cloud(h100(), offers, 0.6, any_interconnect=True)
    }
    assert loose[PurchaseOption.ON_DEMAND].instance_type == "cheap-pcie"


def test_compare_gpu_scales_by_throughput() -> None:
    offers = _offers([("x", "p5", "nvswitch", 8 * 4.0, None, None, None)])
    ws = replace(load_hardware("workstation-rtx4090"))
    (c,) = compare_cloud(ws, offers, 1.0, compare_gpu="H100")
    # RTX 4090 dense 165.2 TFLOPS (FP32 accumulate) vs H100 989.4: an owned hour is worth ~1/6 H100-hour
    assert c.throughput_ratio == pytest.approx(165.2 / 989.4, rel=0.02)
    assert c.cloud_usd_per_equivalent_gpu_hour == pytest.approx(4.0 * c.throughput_ratio)


def test_workstation_breakeven_month_matches_cost_facts() -> None:
    # cost-facts.md s2.4: $3.5k box, 0.45 kW x $0.16 = $0.07/h, vs a $0.35/h rented 4090:
    # 3.5k / (0.35 - 0.07) = 12.5k GPU-h = ~17 months at 100% utilization
    assert breakeven_months(3_500, 0.072 * 730, 0.35 * 730) == pytest.approx(17.2, abs=0.3)
    ws = load_hardware("workstation-rtx4090")
    offers = _offers([("vast", "4090", "none", 0.35, None, None, None)]).assign(
        gpu_model="RTX4090", gpu_count=1
    )
    (c,) = compare_cloud(ws, offers, 1.0)
    assert c.breakeven_months == pytest.approx(3_500 / ((0.35 - 0.072) * 730), rel=1e-6)


def test_cloud_cheaper_than_running_costs_never_breaks_even() -> None:
    assert breakeven_months(1000, 100, 90) is None


def test_financing_is_the_annuity_less_depreciation() -> None:
    hw = replace(h100(), financing_rate_per_year=0.08)
    # annuity on 310k over 4 years at 8%: 310,000 x 0.08 / (1 - 1.08^-4) = 93,595.7
    assert capital_recovery_factor(0.08, 4) * 310_000 == pytest.approx(93_595.7, abs=1)
    assert annual_cost(hw).financing_usd == pytest.approx(93_595.7 - 77_500, abs=1)


def test_resale_reduces_depreciation_and_sets_residual() -> None:
    hw = replace(h100(), resale_fraction=0.2)
    assert annual_cost(hw).depreciation_usd == pytest.approx(310_000 * 0.8 / 4)
    half = tco(hw, years=2)
    assert half.residual_value_usd == pytest.approx(310_000 - 310_000 * 0.8 / 2)


def test_machine_cost_bases() -> None:
    hw = h100()
    assert machine_cost_usd_per_hour(hw, "sunk") == pytest.approx(8.0 * 1.4 * 0.10)
    assert machine_cost_usd_per_hour(hw, "amortised") == pytest.approx(HAND_TOTAL_USD / 8760)
    with pytest.raises(ConfigError, match="did you mean"):
        machine_cost_usd_per_hour(hw, "amortized")


@pytest.mark.parametrize("utilization", [0.0, 1.2, -0.5])
def test_utilization_outside_unit_interval_is_rejected(utilization: float) -> None:
    with pytest.raises(ConfigError, match="utilization must be in") as info:
        tco(h100(), utilization=utilization)
    assert info.value.key_path == "utilization"  # the field; the CLI shows it as --utilization


def test_total_over_horizon_beyond_lifetime_stops_depreciating() -> None:
    cost = annual_cost(h100())
    assert tco(h100(), years=6).total_usd == pytest.approx(
        cost.capital_usd * 4 + cost.running_usd * 6
    )
