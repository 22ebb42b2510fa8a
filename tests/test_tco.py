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
    # The worked example's "$3.4/GPU-h at 60%" charges full power all year; idling 40% of the
    # hours at 30% of the load draw saves (8 - 2.4) kW x 0.4 x 1.4 x 8,760 h x $0.10 = 2,747.14:
    # (143,492.8 - 2,747.14) / (8 x 8,760 x 0.6) = 3.3473
    assert result.usd_per_useful_gpu_hour == pytest.approx((HAND_TOTAL_USD - 2_747.136) / 42_048)
    assert result.usd_per_useful_gpu_hour == pytest.approx(3.35, abs=0.005)


# Power by utilization (issue 16), by hand for the 8x H100 server (load 8 kW, idle by default
# 0.3 x 8 = 2.4 kW, PUE 1.4, $0.10/kWh, 8,760 h):
#   at 100%: 8 kW                                  x 1.4 x 8,760 x 0.10 = 9,811.20
#   at  25%: (0.25 x 8 + 0.75 x 2.4) = 3.8 kW      x 1.4 x 8,760 x 0.10 = 4,660.32
#   with power_kw_idle 1.0 at 25%: (2 + 0.75) = 2.75 kW x 1,226.4       = 3,372.60
@pytest.mark.parametrize(
    ("utilization", "idle_kw", "power_usd"),
    [
        (1.0, None, 9_811.20),  # all hours working: the load draw, as before
        (0.25, None, 4_660.32),  # a quarter working, the rest idle at the default 30% of load
        (0.25, 1.0, 3_372.60),  # the file's own idle draw
        (0.0, None, 2_943.36),  # switched on and never used: idle draw all year
    ],
)
def test_power_follows_utilization(
    utilization: float, idle_kw: float | None, power_usd: float
) -> None:
    hw = replace(h100(), power_kw_idle=idle_kw)
    assert annual_cost(hw, utilization).power_usd == pytest.approx(power_usd)


def test_tco_power_differs_between_25_and_100_percent_use() -> None:
    quarter, full = tco(h100(), utilization=0.25), tco(h100(), utilization=1.0)
    assert quarter.annual.power_usd == pytest.approx(4_660.32)
    assert full.annual.power_usd == pytest.approx(9_811.20)
    # everything else is the same whatever the use
    assert full.annual.total_usd - quarter.annual.total_usd == pytest.approx(9_811.20 - 4_660.32)
    # per useful GPU-hour at 25%: (143,492.8 - 5,150.88) / (8 x 8,760 x 0.25)
    assert quarter.usd_per_useful_gpu_hour == pytest.approx(138_341.92 / 17_520)


def test_breakeven_utilization_counts_the_idle_draw() -> None:
    # owning costs A0 + u x A1 a year: A0 = 143,492.8 - 9,811.2 + 2,943.36 = 136,624.96 (idle all
    # year), A1 = 9,811.2 - 2,943.36 = 6,867.84; renting costs $2.35 x 70,080 x u.
    # u* = 136,624.96 / (2.35 x 70,080 - 6,867.84) = 136,624.96 / 157,820.16 = 0.8657
    offers = _offers([("x", "h", "nvswitch", 8 * 2.35, None, None, None)])
    (c,) = compare_cloud(h100(), offers, 0.6)
    assert c.breakeven_utilization == pytest.approx(136_624.96 / 157_820.16)


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
        # cost-facts.md s2.4 charges full power all year; an idle server draws 30% of it, which
        # lowers the breakeven a little (A0 + u x A1: test_breakeven_utilization_counts_the_idle_draw)
        (2.35, 0.87),  # 1-yr neocloud contract, cost-facts.md s2.4: ~87% (86.6%)
        (4.92, 0.40),  # AWS Capacity Block p5: ~42% at full power, 40.4% with the idle draw
        (12.29, 0.16),  # AWS p5 on-demand 2024 list ($98.32/8): ~17%, 16.0% with it
    ],
)
def test_breakeven_utilization_against_published_prices(
    usd_per_gpu_hour: float, expected: float
) -> None:
    offers = _offers([("x", "p5", "nvswitch", usd_per_gpu_hour * 8, None, None, None)])
    (comparison,) = compare_cloud(h100(), offers, 0.6)
    assert comparison.purchase_option is PurchaseOption.ON_DEMAND
    assert comparison.breakeven_utilization == pytest.approx(expected, abs=0.01)


def test_dropping_support_lowers_neocloud_breakeven() -> None:
    # cost-facts.md s2.4: ~69% at full power; with the idle draw (136,624.96 - 31,000) /
    # 157,820.16 = 66.9%
    offers = _offers([("x", "p5", "nvswitch", 2.35 * 8, None, None, None)])
    (comparison,) = compare_cloud(replace(h100(), support_fraction_per_year=0.0), offers, 1.0)
    assert comparison.breakeven_utilization == pytest.approx(105_624.96 / 157_820.16)


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
    # the cash payback (no resale), as in the worked example
    assert c.payback_months == pytest.approx(3_500 / ((0.35 - 0.072) * 730), rel=1e-6)
    # net of the book value it keeps, owning is cheaper from the first month: the box loses
    # (3,500 - 700) / 48 = 58.33 a month of value and 52.56 of power against 255.50 of rent
    assert c.breakeven_months == 0


# Breakeven month net of the book value (issue 16), by hand: a $48,000 machine with 25% resale
# ($12,000) over 4 years (48 months) loses 750 a month of book value; running costs 250 a month.
#   rent 1,200 a month: 1,000 a month owning <= 1,200 from the start          -> 0
#   rent   900 a month: past the life, owned net = 36,000 + 250 m = 900 m    -> m = 55.38
#   rent   200 a month: below the running costs                               -> never
#   the cash payback at 1,200: 48,000 / (1,200 - 250)                         -> 50.53 months
@pytest.mark.parametrize(
    ("rent", "months"),
    [(1_200.0, 0.0), (900.0, 36_000 / 650), (200.0, None)],
)
def test_net_breakeven_month_by_hand(rent: float, months: float | None) -> None:
    from planner.ownership.costs import net_breakeven_months

    got = net_breakeven_months(48_000, 12_000, 48, 250, 0, rent)
    assert got == (None if months is None else pytest.approx(months))


def test_per_hour_breakeven_and_cumulative_agree_on_resale() -> None:
    # The case: owning at $1.72 per useful GPU-hour against renting at $1.79 said "buy"
    # while the breakeven month (cash, no resale) fell after the horizon.  Net of the book value
    # all three figures agree: cheaper per hour <=> breakeven from the start <=> the cumulative
    # owned line (cash - book value) stays under the cloud's.
    hw = replace(h100(), resale_fraction=0.25)
    result = tco(hw, utilization=0.6, years=3)
    owned = result.usd_per_useful_gpu_hour
    offers = _offers([("x", "h", "nvswitch", 8 * owned * 1.04, None, None, None)])
    result = tco(hw, utilization=0.6, years=3, offers=offers)
    (c,) = result.comparisons
    assert c.cloud_usd_per_equivalent_gpu_hour > owned
    assert c.breakeven_months == 0
    assert c.payback_months is not None and c.payback_months > 36  # cash comes back later
    for p in result.cumulative[1:]:
        assert p.owned_usd == pytest.approx(p.owned_cash_usd - p.book_value_usd)
        assert p.owned_usd < p.cloud_usd["on-demand"]
    # at the horizon the book value is capex less 3 of 4 years of depreciation to 25% resale
    last = result.cumulative[-1]
    assert last.book_value_usd == pytest.approx(310_000 - 310_000 * 0.75 * 3 / 4)
    assert result.residual_value_usd == pytest.approx(last.book_value_usd)
    assert result.total_usd == pytest.approx(last.owned_usd)


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
