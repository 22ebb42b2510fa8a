"""The estimator's own error, as a distribution a quote can plan on (pure).

Every published run of ``benchmarks/data/published_runs.yaml`` is estimated and its measured /
estimated training time kept: ``planner/data/estimate_error.yaml`` (written by
``scripts/estimate_error.py``, checked by a test) holds, per regime, how many runs and the 10th,
50th and 90th percentiles of that ratio.  The regimes are dense models and mixtures of experts
(:func:`error_regime`): the estimator misses the two in different ways (the experts' small grouped
matmuls and their all-to-alls are modelled more coarsely), and a mixture's misses should not widen
a dense model's range, nor the other way round.  The ratio is modelled as lognormal through them: ``ln R`` is normal with
mean ``ln(median)`` and the standard deviation that puts the 10th and 90th percentiles where they
were measured, ``sigma = (ln p90 - ln p10) / (2 z)`` with ``z`` the standard normal's 90th
percentile (1.2816).  A quantile beyond the 90th is an extrapolation of that fit, said so where it is
used.

:func:`at_ratio` turns an estimate into the one the quote plans on: its wall-clock (every phase of
its breakdown) times the ratio at the quantile asked for.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, replace
from importlib import resources
from statistics import NormalDist

from planner.errors import ConfigError
from planner.workload.estimate_types import Estimate

_Z90 = NormalDist().inv_cdf(0.9)


# The error regimes of the bundled table, in its order.
DENSE = "dense"
MIXTURE_OF_EXPERTS = "mixture-of-experts"
ERROR_REGIMES = (DENSE, MIXTURE_OF_EXPERTS)


def error_regime(experts: int | None) -> str:
    """The regime of a model with ``experts`` routed experts per layer (None or 0: dense)."""
    return MIXTURE_OF_EXPERTS if experts else DENSE


@dataclass(frozen=True)
class EstimateError:
    """Measured / estimated training time on ``runs`` published runs of one regime, fitted as a
    lognormal."""

    runs: int
    median: float
    p10: float
    p90: float
    regime: str = DENSE

    @property
    def runs_text(self) -> str:
        """The runs behind it, in words: "49 published dense training runs"."""
        return f"{self.runs} published {self.regime} training runs"

    @property
    def sigma(self) -> float:
        """The standard deviation of ``ln(measured / estimated)``."""
        return (math.log(self.p90) - math.log(self.p10)) / (2.0 * _Z90)

    def quantile(self, q: float) -> float:
        """The ratio measured / estimated that runs stay at or below with probability ``q``."""
        if not 0.0 < q < 1.0:
            raise ConfigError(
                f"a quantile is between 0 and 1 (not included), got {q!r}", key_path="quantile"
            )
        return math.exp(math.log(self.median) + NormalDist().inv_cdf(q) * self.sigma)

    def cdf(self, ratio: float) -> float:
        """The chance that a run takes at most ``ratio`` times its estimate."""
        if ratio <= 0:
            return 0.0
        return NormalDist(math.log(self.median), self.sigma).cdf(math.log(ratio))


def estimate_error(regime: str = DENSE) -> EstimateError:
    """The bundled error table of ``regime`` (:data:`ERROR_REGIMES`)."""
    return _error_tables()[regime]


@functools.lru_cache(maxsize=1)
def _error_tables() -> dict[str, EstimateError]:
    """The bundled error table by regime (read on first use, then cached), from the compact copy
    ``estimate_error.json`` of ``estimate_error.yaml`` (``scripts/compact_data.py``): a quote then
    imports no PyYAML."""
    text = resources.files("planner.data").joinpath("estimate_error.json").read_text("utf-8")
    raw = json.loads(text)["estimate_error"]
    return {
        regime: EstimateError(
            runs=int(raw[regime]["runs"]),
            median=float(raw[regime]["ratio_median"]),
            p10=float(raw[regime]["ratio_p10"]),
            p90=float(raw[regime]["ratio_p90"]),
            regime=regime,
        )
        for regime in ERROR_REGIMES
    }


def at_ratio(est: Estimate, ratio: float, note: str) -> Estimate:
    """``est`` with its wall-clock ``ratio`` times as long (every phase of its breakdown, its GPU
    hours; its efficiency in proportion), and ``note`` among its assumptions.  Only a training
    estimate that runs is changed: the error table was measured on training runs."""
    if not est.fits or not est.time_breakdown_hours or ratio == 1.0:
        return est
    return replace(
        est,
        wall_hours=est.wall_hours * ratio,
        gpu_hours=est.gpu_hours * ratio,
        efficiency=est.efficiency / ratio,
        time_breakdown_hours={k: v * ratio for k, v in est.time_breakdown_hours.items()},
        assumptions=(*est.assumptions, note),
    )
