"""What an estimate reads and gives: the GPUs' wiring (:class:`Topology`) and the answer
(:class:`Estimate`), shared by the training, inference and advice modules (pure).

They live here rather than in :mod:`planner.workload.estimator`, which re-exports them, because the
estimator's dispatcher imports the training and inference estimates, and those build these types:
one module holding both would be an import cycle.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from planner.config.validation import value_alias_hint
from planner.errors import (
    ConfigError,
    UnknownNameError,
    checked_arguments,
    checked_fields,
    is_number,
    is_whole_number,
)
from planner.gpu_specs import GpuSpec
from planner.schema import (
    MAX_GPUS_PER_INSTANCE,
    MAX_NETWORK_GBPS,
    MAX_PCIE_GPUS_PER_NODE,
    Fabric,
    Interconnect,
)
from planner.workload import efficiency as eff
from planner.workload import memory as mem
from planner.workload.parallel import Links
from planner.workload.spec import WorkloadSpec
from planner.workload.strategy import Strategy

if TYPE_CHECKING:
    from planner.workload.serving_metrics import ServingMetrics

log = logging.getLogger(__name__)


@checked_fields
@dataclass(frozen=True)
class Topology:
    """How the GPUs are wired: per node, inside a node, and between nodes."""

    gpus_per_node: int
    interconnect: Interconnect
    fabric: Fabric
    network_gbps: float | None = None

    def __post_init__(self) -> None:
        # the links by name ("nvlink", "infiniband") as a caller types them; an unknown one
        # names the known ones here, not as an AttributeError deep in the estimate
        for key, kind in (("interconnect", Interconnect), ("fabric", Fabric)):
            value = getattr(self, key)
            if isinstance(value, kind):
                continue
            names = [m.value for m in kind]
            if not isinstance(value, str) or value.strip().lower() not in names:
                error = UnknownNameError(key, str(value), names, key_path=key)
                # IB, 100GbE, NVL, or the other field's link: the fix a file's and the command
                # line's get (was "known fabric names: ..." alone for IB)
                meant = value_alias_hint(value, names, key) if isinstance(value, str) else None
                error.hint = meant or error.hint
                raise error
            object.__setattr__(self, key, kind(value.strip().lower()))


# the time-breakdown line of what a whole run loses beyond its steady steps (efficiency.run_time_losses)
PAUSES_PHASE = "pauses and slow stretches"


@dataclass(frozen=True)
class StepBounds:
    """What sets a training run's steps where a CPU data loader feeds it: the hours the GPU work
    alone would take and the hours the loader workers alone need.  The steps last the longer of the
    two, the loader preparing the next batches while the GPU works."""

    gpu_hours: float
    loader_hours: float

    @property
    def loader_binds(self) -> bool:
        """Whether the steps wait on the loader: it needs longer than the GPU's work."""
        return self.loader_hours > self.gpu_hours

    def to_dict(self) -> dict[str, Any]:
        return {"gpu_hours": self.gpu_hours, "loader_hours": self.loader_hours}


@dataclass(frozen=True)
class Estimate:
    """The answer for one (workload, GPU, count, topology)."""

    workload: str
    gpu: str
    gpu_count: int
    fits: bool
    memory_per_gpu_gib: float
    memory_breakdown_gib: dict[str, float]
    strategy: Strategy
    total_flops: float
    efficiency: float
    efficiency_source: str
    wall_hours: float
    gpu_hours: float
    interconnect_required: Interconnect
    fabric_required: Fabric | None
    checkpoint_gib: float
    suggestions: tuple[str, ...] = ()
    assumptions: tuple[str, ...] = field(default=())
    # share of the wall-clock spent on training steps (the rest: checkpoints, interruptions,
    # pauses and slow stretches, start-up, evaluation)
    goodput: float = 1.0
    # where the wall-clock goes, hours: training steps, checkpoints and interruptions, pauses and
    # slow stretches, start-up and model load, evaluation passes (training); empty for inference
    time_breakdown_hours: dict[str, float] = field(default_factory=dict)
    # the likely range of wall_hours (training): the 10th-90th percentile of measured / estimated
    # time on published runs applied to this estimate; None where there is none (inference)
    wall_hours_range: tuple[float, float] | None = None
    # inference: latency, throughput and concurrency (None for training)
    serving: ServingMetrics | None = None
    # an image model's training steps where its CPU data loader's workers are given: the GPU's
    # hours and the loader's (the "training steps" line is the larger); None without such a loader
    step_bounds: StepBounds | None = None

    @property
    def steady_efficiency(self) -> float:
        """Model FLOPs utilisation while the training steps run: ``efficiency`` counts the whole
        wall-clock (start-up, evaluations, losses), which in a one-step job is nearly all of it."""
        steps = self.time_breakdown_hours.get("training steps", 0.0)
        return self.efficiency * self.wall_hours / steps if steps > 0 else self.efficiency

    def to_dict(self) -> dict[str, Any]:
        serving = self.serving.to_dict() if self.serving else {}
        return {
            # inference: the serving figures first and at the top level (ttft_ms, tpot_ms, ...)
            **serving,
            "workload": self.workload,
            "gpu": self.gpu,
            "gpu_count": self.gpu_count,
            "fits": self.fits,
            "memory_per_gpu_gib": self.memory_per_gpu_gib,
            "memory_breakdown_gib": dict(self.memory_breakdown_gib),
            "strategy": self.strategy.to_dict(),
            "total_flops": self.total_flops,
            "efficiency": self.efficiency,
            "efficiency_source": self.efficiency_source,
            "wall_hours": self.wall_hours,
            "gpu_hours": self.gpu_hours,
            "interconnect_required": self.interconnect_required.value,
            "fabric_required": self.fabric_required.value if self.fabric_required else None,
            "checkpoint_gib": self.checkpoint_gib,
            "goodput": self.goodput,
            "time_breakdown_hours": dict(self.time_breakdown_hours),
            "wall_hours_range": list(self.wall_hours_range) if self.wall_hours_range else None,
            "step_bounds_hours": self.step_bounds.to_dict() if self.step_bounds else None,
            "suggestions": list(self.suggestions),
            "assumptions": list(self.assumptions),
        }


def make_estimate(
    spec: WorkloadSpec,
    gpu: GpuSpec,
    count: int,
    *,
    fits: bool,
    memory_bytes: float,
    breakdown: dict[str, float],
    strategy: Strategy,
    total_flops: float,
    efficiency: float,
    source: str,
    wall_hours: float,
    interconnect: Interconnect,
    fabric: Fabric | None,
    checkpoint_gib: float,
    suggestions: list[str] | tuple[str, ...],
    assumptions: list[str] | tuple[str, ...],
    goodput: float = 1.0,
    time_breakdown_hours: dict[str, float] | None = None,
    wall_hours_range: tuple[float, float] | None = None,
    serving: ServingMetrics | None = None,
    step_bounds: StepBounds | None = None,
) -> Estimate:
    """One :class:`Estimate`: per-GPU memory in GiB, GPU-hours = wall-clock x GPUs."""
    return Estimate(
        workload=spec.name,
        gpu=gpu.name,
        gpu_count=count,
        fits=fits,
        memory_per_gpu_gib=memory_bytes / mem.GIB,
        memory_breakdown_gib=breakdown,
        strategy=strategy,
        total_flops=total_flops,
        efficiency=efficiency,
        efficiency_source=source,
        wall_hours=wall_hours,
        gpu_hours=wall_hours * count,
        interconnect_required=interconnect,
        fabric_required=fabric,
        checkpoint_gib=checkpoint_gib,
        suggestions=tuple(suggestions),
        assumptions=tuple(assumptions),
        goodput=goodput,
        time_breakdown_hours=dict(time_breakdown_hours or {}),
        wall_hours_range=wall_hours_range,
        serving=serving,
        step_bounds=step_bounds,
    )


# The slowest node network worth modelling: a 100 Mbit/s link (Fast Ethernet).  A smaller figure
# is a unit slip (Mbit/s typed as Gbit/s, or 1e-300), and made a 16-GPU fine-tune take 1e302
# hours.
MIN_NETWORK_GBPS = 0.1


def check_topology(gpu: GpuSpec, topo: Topology, count: int) -> None:
    """Refuse a wiring the hardware cannot have (ConfigError naming the field and the fix): GPUs
    per node from 1 to 72 (an NVL72 rack), a node network from 0.1 to 100,000 Gbit/s, and an
    NVLink or NVSwitch link only on a GPU that has NVLink."""
    gpn = topo.gpus_per_node
    if not is_whole_number(gpn) or not 1 <= gpn <= MAX_GPUS_PER_INSTANCE:
        raise ConfigError(
            f"GPUs per node must be a whole number from 1 to {MAX_GPUS_PER_INSTANCE}, got {gpn!r}",
            key_path="gpus_per_node",
            hint="8 for an HGX or DGX server",
        )
    if count > gpn and count % gpn and gpn != min(count, 8) and gpn <= 8:
        # was: 8 GPUs at 3 to a node estimated without a word, as nodes of 3, 3 and 2 (no launcher
        # starts unequal nodes: torchrun's --nproc-per-node is one number).  The default's last
        # node, partly filled (12 GPUs at up to 8 a node), stays as estimates without a topology
        # read it; so does a rack-scale NVLink domain (72 GPUs of an NVL72 rack, trays of 4 that
        # the launcher starts), which a job may fill in part (MLPerf's 512 GB300 on 8 racks).
        fits = next(d for d in range(min(gpn, count), 0, -1) if count % d == 0)
        lower, upper = count - count % gpn, count + gpn - count % gpn
        counts = f"{lower} or {upper}" if lower else f"{upper}"
        raise ConfigError(
            f"{count} GPUs do not fill nodes of {gpn} GPUs: the last node would hold {count % gpn}",
            key_path="gpus_per_node",
            hint=f"use {fits} GPU{'s' if fits > 1 else ''} per node ({count // fits} nodes), or a GPU "
            f"count that is a "
            f"multiple of {gpn} ({counts})",
        )
    gbps = topo.network_gbps
    if gbps is not None and not is_number(gbps):
        # was: "must be at least 0.1 and at most 100,000 Gbit/s, got '400'" for a number in text
        raise ConfigError(
            f"node network must be a number of Gbit/s, got {type(gbps).__name__} {gbps!r}",
            key_path="network_gbps",
            hint="e.g. network_gbps=400 (a number, not text); 3200 for a p5.48xlarge (EFA)",
        )
    if gbps is not None and (
        not is_number(gbps)
        or not math.isfinite(gbps)
        or not MIN_NETWORK_GBPS <= gbps <= MAX_NETWORK_GBPS
    ):
        raise ConfigError(
            f"node network must be at least {MIN_NETWORK_GBPS:g} and at most "
            f"{MAX_NETWORK_GBPS:,.0f} Gbit/s, got {gbps!r}",
            key_path="network_gbps",
            hint="3200 for a p5.48xlarge (EFA), 400 per InfiniBand NDR port",
        )
    together = min(gpn, count)
    if topo.interconnect is Interconnect.NONE and together > 1:
        # was: estimated as PCIe without a word ("interconnect needed: pcie" beside "none")
        own = default_topology(gpu, together).interconnect.value
        raise ConfigError(
            f"interconnect none cannot wire {together} GPUs in one node: GPUs that share a node "
            "talk over PCIe at least",
            key_path="interconnect",
            hint=(f"use {own}, the {gpu.name}'s own link" if own != "pcie" else "use pcie")
            + ", or 1 GPU per node (--gpus-per-node 1; gpus_per_node=1 in Python) for GPUs "
            "that share no node",
        )
    if topo.interconnect is not Interconnect.NVSWITCH and together > MAX_PCIE_GPUS_PER_NODE:
        # was: 64 L4s on PCIe in one node, timed with no network between them
        raise ConfigError(
            f"{together} GPUs on {topo.interconnect.value} in one node: a node without NVSwitch "
            f"holds at most {MAX_PCIE_GPUS_PER_NODE} (the largest PCIe servers hold 8-10)",
            key_path="gpus_per_node",
            hint="8 for a PCIe server (the nodes' network then joins them), or interconnect "
            "nvswitch for a rack-scale NVLink domain",
        )
    domain = gpu.nvlink_domain_gpus
    if topo.interconnect is Interconnect.NVSWITCH and domain is not None and together > domain:
        # was: 64 H100s taken as one NVSwitch node, "fabric needed: none (single node)"
        log.warning(
            "%d %s GPUs on NVSwitch in one node: the largest NVLink domain of the %s joins %d; "
            "the estimate times all %d on NVLink (--gpus-per-node %d for such servers, the "
            "network between them)",
            together,
            gpu.name,
            gpu.name,
            domain,
            together,
            domain,
        )
    nvlink = topo.interconnect in (Interconnect.NVLINK, Interconnect.NVSWITCH)
    if nvlink and together > 1 and not gpu.direct_link:
        raise ConfigError(
            f"the {gpu.name} has no NVLink ({gpu.gpu_link or 'no GPU link'}); its GPUs talk "
            f"over PCIe, so {topo.interconnect.value} cannot wire them",
            key_path="interconnect",
            hint="use pcie, or a GPU with NVLink (planner gpus shows each GPU's link)",
        )


@checked_arguments
def default_topology(gpu: GpuSpec | str, gpu_count: int) -> Topology:
    """Up to 8 GPUs per node on the GPU's own link, InfiniBand between nodes."""
    if isinstance(gpu, str):
        from planner.gpu_specs import resolve_gpu

        gpu = resolve_gpu(gpu)
    if not isinstance(gpu, GpuSpec):
        raise ConfigError(
            f"expected a GPU name or GpuSpec, got {gpu!r}",
            key_path="gpu",
            hint="name a GPU such as H100-SXM or A100-80GB (planner.gpus() lists them)",
        )
    if not is_whole_number(gpu_count) or gpu_count < 1:
        raise ConfigError(
            f"GPU count must be a whole number >= 1, got {gpu_count!r}", key_path="gpu_count"
        )
    gpn = max(1, min(gpu_count, 8))
    if gpn == 1:
        link = Interconnect.NONE
    elif gpu.all_to_all_link:  # NVSwitch, or AMD's Infinity Fabric mesh
        link = Interconnect.NVSWITCH if gpn > 2 else Interconnect.NVLINK
    elif gpu.gpu_link == "nvlink-bridge":
        link = Interconnect.NVLINK
    else:
        link = Interconnect.PCIE
    return Topology(gpus_per_node=gpn, interconnect=link, fabric=Fabric.INFINIBAND)


def topology_links(gpu: GpuSpec, topo: Topology, count: int) -> Links:
    """The link speeds the strategy search reads, for ``count`` GPUs wired as ``topo``."""
    gpn = max(1, min(topo.gpus_per_node, count))
    intra, kind = eff.intra_node_link(gpu, topo.interconnect, gpn)
    node = eff.node_network_bytes_per_s(gpu, topo.fabric, topo.network_gbps, gpn)
    return Links(gpus_per_node=gpn, intra_bytes_per_s=intra, intra_kind=kind, node_bytes_per_s=node)
