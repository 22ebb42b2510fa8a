"""Spot slowdown maths against hand-computed values; deadline, discount and quota parsing."""

from __future__ import annotations

import math

import click
import pytest

from planner.cli.params import Discount, Duration, Quota
from planner.errors import ConfigError
from planner.optimize.spot import SpotModel, checkpoint_hours, poisson_cdf


# The CLI's parameter types read these (planner.cli.params), one option value at a time.
def parse_duration_hours(text: str) -> float:
    return float(Duration().convert(text, click.Option(["--deadline"]), None))


def parse_discounts(items: list[str]) -> dict[str, float]:
    return dict(Discount().convert(i, click.Option(["--discount"]), None) for i in items)


def parse_quotas(items: list[str]) -> dict[str, int]:
    return dict(Quota().convert(i, click.Option(["--quota"]), None) for i in items)


def test_spot_slowdown_hand_computed() -> None:
    # 10%/month on 4 instances: Lam = 4 * 0.10 / 730 = 5.479e-4 per hour.
    # Checkpoint 36 s = 0.01 h -> Young's interval T = sqrt(2 * 0.01 / Lam) = 6.042 h.
    # Slowdown = 1 + Lam * (T/2 + 0.25) + 0.01 / T = 1 + 5.479e-4 * 3.271 + 0.001655 = 1.003447.
    model = SpotModel(10.0, 4, 0.01, 0.25)
    lam = 4 * 0.10 / 730
    interval = math.sqrt(2 * 0.01 / lam)
    assert model.hazard_per_hour == pytest.approx(lam)
    assert model.checkpoint_interval_hours == pytest.approx(interval)
    assert interval == pytest.approx(6.042, abs=1e-3)
    assert model.slowdown == pytest.approx(1 + lam * (interval / 2 + 0.25) + 0.01 / interval)
    assert model.slowdown == pytest.approx(1.003447, abs=1e-6)


def test_no_interruptions_no_slowdown() -> None:
    model = SpotModel(0.0, 8, 0.01, 0.25)
    assert model.slowdown == 1.0
    assert model.p_meet(100, 0) == 1.0


def test_more_instances_and_rates_hurt() -> None:
    assert SpotModel(20, 8, 0.01, 0.25).slowdown > SpotModel(20, 1, 0.01, 0.25).slowdown
    assert SpotModel(30, 1, 0.01, 0.25).slowdown > SpotModel(5, 1, 0.01, 0.25).slowdown


def test_p_meet_grows_with_slack() -> None:
    model = SpotModel(20, 16, checkpoint_hours(20), 0.25)
    chances = [model.p_meet(200, s) for s in (0, 1, 5, 20)]
    assert chances == sorted(chances)
    assert chances[0] < 0.5 < chances[-1]
    assert model.p_meet(200, -1) == 0.0


def test_poisson_cdf_known_values() -> None:
    # P(X <= 2 | mu = 1) = e^-1 (1 + 1 + 1/2) = 0.9196986
    assert poisson_cdf(2, 1.0) == pytest.approx(0.9196986, abs=1e-7)
    assert poisson_cdf(0, 3.0) == pytest.approx(math.exp(-3))
    assert poisson_cdf(-1, 3.0) == 0.0


@pytest.mark.parametrize(
    ("text", "hours"),
    [
        ("90m", 1.5),
        ("24h", 24),
        ("3d", 72),
        ("2w", 336),
        ("36", 36),
        ("1.5 days", 36),
        ("45 min", 0.75),
    ],
)
def test_durations(text: str, hours: float) -> None:
    assert parse_duration_hours(text) == pytest.approx(hours)


@pytest.mark.parametrize("text", ["tomorrow", "24x", "", "-3h", "0h"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ConfigError, match="--deadline"):
        parse_duration_hours(text)


def test_discounts_and_quotas() -> None:
    assert parse_discounts(["aws=0.12", "GCP=20%"]) == {"aws": 0.12, "gcp": 0.20}
    with pytest.raises(ConfigError, match="between 0 and 1"):
        parse_discounts(["aws=1.5"])
    with pytest.raises(ConfigError, match="--discount"):
        parse_discounts(["aws"])
    assert parse_quotas(["aws:p5=4", "gcp=8"]) == {"aws:p5": 4, "gcp": 8}
    with pytest.raises(ConfigError, match="aws:p5=4"):
        parse_quotas(["aws:p5=four"])
