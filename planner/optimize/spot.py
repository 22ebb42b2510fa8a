"""Spot interruptions: expected slowdown and the chance of meeting a deadline.

Model (cost-facts.md s3.4, after Young 1974 and the "Can't Be Late" NSDI'24 changeover model):

* A spot instance is reclaimed at hazard ``lam = p / 730`` per instance-hour, where ``p`` is the
  monthly interruption frequency (AWS Spot Instance Advisor bucket upper bound, as a fraction).
  A gang of ``n`` instances stops when any one is reclaimed: ``Lam = n * lam``.
* The job checkpoints every ``T`` hours; writing one takes ``C`` hours.  Young's optimum
  ``T = sqrt(2 C / Lam)``.  Each interruption loses ``T/2`` of work on average plus a restart delay
  ``R`` (provision a new instance, set up, reload the checkpoint).
* Expected slowdown: ``s = 1 + Lam (T/2 + R) + C/T`` (work-hours per useful hour).
* Interruptions over ``W`` useful hours are Poisson with mean ``Lam * W * (1 + C/T)``; the deadline
  is met when their losses fit in the slack, which gives the probability reported to the user.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.units import HOURS_PER_MONTH

# Default interruption frequency when the snapshot has no Spot Advisor bucket for an offer: the
# 10-15% bucket's upper bound.  GCP and Azure publish no per-SKU rates (cost-facts.md s3.3).
DEFAULT_INTERRUPTION_PCT = 15.0
# Provision + setup + checkpoint reload after a reclaim.  SkyPilot's managed-job recovery retries
# start at 60 s with backoff and then re-run setup; 15 minutes is a conservative planning figure.
DEFAULT_RESTART_HOURS = 0.25
# Checkpoint write bandwidth to local NVMe / object storage.
DEFAULT_CHECKPOINT_GIB_PER_S = 1.0


@dataclass(frozen=True)
class SpotModel:
    """The assumptions behind a spot configuration's slowdown (shown in the report)."""

    interruption_pct_per_month: float
    instances: int
    checkpoint_hours: float
    restart_hours: float

    @property
    def hazard_per_hour(self) -> float:
        return self.instances * self.interruption_pct_per_month / 100.0 / HOURS_PER_MONTH

    @property
    def checkpoint_interval_hours(self) -> float:
        lam = self.hazard_per_hour
        if lam <= 0:
            return math.inf
        return math.sqrt(2.0 * max(self.checkpoint_hours, 1e-6) / lam)

    @property
    def loss_per_interruption_hours(self) -> float:
        interval = self.checkpoint_interval_hours
        return (0.0 if math.isinf(interval) else interval / 2.0) + self.restart_hours

    @property
    def slowdown(self) -> float:
        """Expected wall-hours per useful hour (>= 1)."""
        lam = self.hazard_per_hour
        if lam <= 0:
            return 1.0
        interval = self.checkpoint_interval_hours
        return 1.0 + lam * self.loss_per_interruption_hours + self.checkpoint_hours / interval

    def expected_interruptions(self, useful_hours: float) -> float:
        interval = self.checkpoint_interval_hours
        overhead = 0.0 if math.isinf(interval) else self.checkpoint_hours / interval
        return self.hazard_per_hour * useful_hours * (1.0 + overhead)

    def p_meet(self, useful_hours: float, slack_hours: float) -> float:
        """Chance that interruption losses fit in ``slack_hours`` beyond the uninterrupted time.

        ``slack_hours`` is measured from the plan's uninterrupted wall time (no slowdown).
        """
        if slack_hours < 0:
            return 0.0
        mu = self.expected_interruptions(useful_hours)
        if mu <= 0:
            return 1.0
        k_max = math.floor(slack_hours / self.loss_per_interruption_hours)
        return poisson_cdf(k_max, mu)


def checkpoint_hours(
    checkpoint_gib: float, gib_per_s: float = DEFAULT_CHECKPOINT_GIB_PER_S
) -> float:
    return checkpoint_gib / gib_per_s / 3600.0


def poisson_cdf(k: int, mu: float) -> float:
    """P(X <= k) for X ~ Poisson(mu), summed in log space (stable for large mu)."""
    if k < 0:
        return 0.0
    if k > mu + 40 * math.sqrt(mu) + 40:
        return 1.0
    total = 0.0
    log_term = -mu
    for i in range(k + 1):
        if i > 0:
            log_term += math.log(mu) - math.log(i)
        total += math.exp(log_term)
    return min(total, 1.0)


def interruptions_at(confidence: float, mu: float) -> int:
    """The fewest interruptions ``k`` with ``P(X <= k) >= confidence`` for X ~ Poisson(mu)."""
    if mu <= 0 or confidence <= 0:
        return 0
    # One walk up the terms poisson_cdf sums, in the same order (so the same totals), O(k).
    log_term = -mu
    total = math.exp(log_term)
    k = 0
    while total < confidence and k <= mu + 40 * math.sqrt(mu) + 40:  # poisson_cdf's 1.0 beyond
        k += 1
        log_term += math.log(mu) - math.log(k)
        total += math.exp(log_term)
    return k


def reserve_hours(model: SpotModel, useful_hours: float, confidence: float) -> float:
    """Slack to keep beyond the uninterrupted time so that, with probability ``confidence``, the
    interruptions over ``useful_hours`` fit in it (:meth:`SpotModel.p_meet` is then at least
    ``confidence``).  A hair more than ``k`` losses, so rounding cannot drop one."""
    k = interruptions_at(confidence, model.expected_interruptions(useful_hours))
    return k * model.loss_per_interruption_hours * (1 + 1e-9) + (1e-9 if k else 0.0)
