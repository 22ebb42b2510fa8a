"""What an inference estimate adds to an :class:`~planner.workload.estimate_types.Estimate`: its
replicas' latency, throughput and concurrency (:class:`ServingMetrics`).

Apart from :mod:`.estimate_types` because only inference estimates make them
(:mod:`.inference`, :mod:`.vision_inference`): a training quote never loads this module, and
defining the 27-field dataclass cost every quote's start-up about a millisecond.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Percentiles:
    """A latency's median and 95th percentile, milliseconds."""

    p50: float
    p95: float

    def to_dict(self) -> dict[str, float]:
        return {"p50": self.p50, "p95": self.p95}


@dataclass(frozen=True)
class ServingMetrics:
    """What an inference estimate adds: latency, throughput and concurrency of its replicas.

    Latencies are at ``load_requests_per_s`` spread over the replicas; without a load (a batch
    job) they are those of the saturated batch, and ``throughput_tokens_per_second`` is the
    capacity.  ``overloaded``: the load is beyond the capacity, and the figures are at capacity.
    """

    framework: str
    precision: str
    kv_precision: str
    replicas: int
    gpus_per_replica: int
    load_requests_per_s: float | None
    overloaded: bool
    ttft_ms: Percentiles
    tpot_ms: Percentiles
    e2e_ms: Percentiles
    throughput_tokens_per_second: float
    capacity_tokens_per_second: float
    capacity_requests_per_second: float
    max_concurrency: int  # sequences per replica
    concurrency: float  # mean sequences running per replica at the load
    kv_cache_gib_per_sequence: float
    slo: dict[str, float] = field(default_factory=dict)  # targets asked for (ttft_ms_p95, ...)
    slo_met: bool | None = None  # None: no target given
    # vision and diffusion ("images"): the token fields above are unused and left out of to_dict
    unit: str = "tokens"
    throughput_images_per_second: float | None = None  # at the load (the capacity offline)
    capacity_images_per_second: float | None = None  # all replicas at their largest batch
    latency_ms: Percentiles | None = None  # one image (a request), queueing included
    batch_size: float | None = None  # mean images per engine call per replica
    max_batch: int | None = None
    seconds_per_image: float | None = None  # one replica at its batch, per image
    resolution: int | None = None
    steps: int | None = None

    def to_dict(self) -> dict[str, Any]:
        if self.unit == "images":
            return self._images_dict()
        return {
            "framework": self.framework,
            "precision": self.precision,
            "kv_precision": self.kv_precision,
            "replicas": self.replicas,
            "gpus_per_replica": self.gpus_per_replica,
            "load_requests_per_s": self.load_requests_per_s,
            "overloaded": self.overloaded,
            "ttft_ms": self.ttft_ms.to_dict(),
            "tpot_ms": self.tpot_ms.to_dict(),
            "e2e_ms": self.e2e_ms.to_dict(),
            "throughput_tokens_per_second": self.throughput_tokens_per_second,
            "capacity_tokens_per_second": self.capacity_tokens_per_second,
            "capacity_requests_per_second": self.capacity_requests_per_second,
            "max_concurrency": self.max_concurrency,
            "concurrency": self.concurrency,
            "kv_cache_gib_per_sequence": self.kv_cache_gib_per_sequence,
            "slo": dict(self.slo),
            "slo_met": self.slo_met,
        }

    def flat_dict(self) -> dict[str, Any]:
        """:meth:`to_dict` with one column per figure, for a CSV row: percentiles as
        ``ttft_ms_p50`` / ``ttft_ms_p95``, the targets asked for as ``slo_ttft_ms_p95``."""
        flat: dict[str, Any] = {}
        for key, value in self.to_dict().items():
            if key == "slo":
                flat.update({f"slo_{k}": v for k, v in value.items()})
            elif isinstance(value, dict):
                flat.update({f"{key}_{k}": v for k, v in value.items()})
            else:
                flat[key] = value
        return flat

    def _images_dict(self) -> dict[str, Any]:
        return {
            "framework": self.framework,
            "precision": self.precision,
            "replicas": self.replicas,
            "gpus_per_replica": self.gpus_per_replica,
            "load_images_per_s": self.load_requests_per_s,
            "overloaded": self.overloaded,
            "latency_ms": self.latency_ms.to_dict() if self.latency_ms else None,
            "throughput_images_per_second": self.throughput_images_per_second,
            "capacity_images_per_second": self.capacity_images_per_second,
            "seconds_per_image": self.seconds_per_image,
            "batch_size": self.batch_size,
            "max_batch": self.max_batch,
            "resolution": self.resolution,
            "steps": self.steps,
            "slo": dict(self.slo),
            "slo_met": self.slo_met,
        }
