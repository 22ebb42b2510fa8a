"""GCP GPU machine shapes known without the Compute API: a bundled table and the N1 GPU hosts.

The Billing Catalog (readable with an API key) prices parts, not machines; what a machine type is
made of (vCPUs, memory, GPUs) comes from ``machineTypes.aggregatedList``, which needs a project
and credentials.  Without them the adapter prices the shapes below.  The Compute API carries no
network bandwidth at all, so :func:`network_gbps` serves both paths.

Sources (read 2025; memory in the docs' "GB" is GiB: a2-highgpu-1g's "85 GB" is the API's
``memoryMb: 87040`` = 85 x 1024, provider-apis.md §2a):

- cloud.google.com/compute/docs/accelerator-optimized-machines: A2 Standard/Ultra, A3
  High/Mega/Edge/Ultra, A4 and G2 machine-type tables (GPU count, vCPUs, memory, max bandwidth);
- cloud.google.com/compute/docs/gpus/gpu-network-bandwidth: the overview table of maximum
  bandwidth per series (A4 and A3 Ultra 3,600 Gbps, A3 Mega 1,800, A3 High 1,000, A3 Edge 600;
  N1 with P100/P4 32 Gbps, with T4/V100 up to 100 Gbps depending on GPU and vCPU count);
- cloud.google.com/compute/docs/gpus: the N1 attachable GPUs and their allowed counts
  (T4: 1, 2, 4; V100: 1, 2, 4, 8; P100: 1, 2, 4; P4: 1, 2, 4) with the vCPU ceiling per count;
- cloud.google.com/compute/docs/general-purpose-machines: n1-standard-N has N vCPUs and 3.75 GB
  per vCPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class MachineShape:
    """One GPU machine: what it is made of, as the machine-type docs list it."""

    name: str
    accelerator: str  # accelerator type, e.g. "nvidia-tesla-a100"
    gpu_count: int
    vcpus: int
    memory_gib: Decimal
    network_gbps: float | None = None

    @property
    def series(self) -> str:
        return self.name.split("-")[0]


def _shape(
    name: str, accelerator: str, gpus: int, vcpus: int, memory_gib: str, gbps: float
) -> MachineShape:
    return MachineShape(name, accelerator, gpus, vcpus, Decimal(memory_gib), gbps)


_A100 = "nvidia-tesla-a100"
_A100_80 = "nvidia-a100-80gb"
_H100 = "nvidia-h100-80gb"
_L4 = "nvidia-l4"

# name -> shape, from the accelerator-optimized machine-type tables (see the module docstring).
ACCELERATOR_OPTIMIZED: dict[str, MachineShape] = {
    s.name: s
    for s in (
        # A2 Standard: A100 40GB
        _shape("a2-highgpu-1g", _A100, 1, 12, "85", 24),
        _shape("a2-highgpu-2g", _A100, 2, 24, "170", 32),
        _shape("a2-highgpu-4g", _A100, 4, 48, "340", 50),
        _shape("a2-highgpu-8g", _A100, 8, 96, "680", 100),
        _shape("a2-megagpu-16g", _A100, 16, 96, "1360", 100),
        # A2 Ultra: A100 80GB
        _shape("a2-ultragpu-1g", _A100_80, 1, 12, "170", 24),
        _shape("a2-ultragpu-2g", _A100_80, 2, 24, "340", 32),
        _shape("a2-ultragpu-4g", _A100_80, 4, 48, "680", 50),
        _shape("a2-ultragpu-8g", _A100_80, 8, 96, "1360", 100),
        # A3 High, Mega, Edge: H100 80GB; A3 Ultra: H200 141GB
        _shape("a3-highgpu-1g", _H100, 1, 26, "234", 25),
        _shape("a3-highgpu-2g", _H100, 2, 52, "468", 50),
        _shape("a3-highgpu-4g", _H100, 4, 104, "936", 100),
        _shape("a3-highgpu-8g", _H100, 8, 208, "1872", 1000),
        _shape("a3-megagpu-8g", "nvidia-h100-mega-80gb", 8, 208, "1872", 1800),
        _shape("a3-edgegpu-8g", _H100, 8, 208, "1872", 600),
        _shape("a3-ultragpu-8g", "nvidia-h200-141gb", 8, 224, "2952", 3600),
        # A4: B200
        _shape("a4-highgpu-8g", "nvidia-b200", 8, 224, "3968", 3600),
        # G2: L4
        _shape("g2-standard-4", _L4, 1, 4, "16", 10),
        _shape("g2-standard-8", _L4, 1, 8, "32", 16),
        _shape("g2-standard-12", _L4, 1, 12, "48", 16),
        _shape("g2-standard-16", _L4, 1, 16, "64", 32),
        _shape("g2-standard-24", _L4, 2, 24, "96", 32),
        _shape("g2-standard-32", _L4, 1, 32, "128", 32),
        _shape("g2-standard-48", _L4, 4, 48, "192", 50),
        _shape("g2-standard-96", _L4, 8, 96, "384", 100),
    )
}

# Accelerator type -> catalog GPU name (GCP GPU docs: nvidia-tesla-a100 is the 40 GB A100, the N1
# V100 is the 16 GB SXM2 part).  P100 and P4 are named as planner/data/gpus.yaml would name them;
# until that file lists them their offers are reported as unmapped, not guessed.
ACCELERATOR_GPUS: dict[str, str] = {
    "nvidia-tesla-a100": "A100-40GB",
    "nvidia-a100-80gb": "A100-80GB",
    "nvidia-h100-80gb": "H100",
    "nvidia-h100-mega-80gb": "H100",
    "nvidia-h200-141gb": "H200",
    "nvidia-b200": "B200",
    "nvidia-l4": "L4",
    "nvidia-tesla-t4": "T4",
    "nvidia-tesla-v100": "V100-16GB",
    "nvidia-tesla-p100": "P100",
    "nvidia-tesla-p4": "P4",
}

# GPUs attached to N1 VMs and the counts GCP allows per VM (cloud.google.com/compute/docs/gpus,
# "N1 general-purpose" tables).  Short names make the offer names: n1-standard-8+t4x1.
N1_GPU_COUNTS: dict[str, tuple[str, tuple[int, ...]]] = {
    "nvidia-tesla-t4": ("t4", (1, 2, 4)),
    "nvidia-tesla-v100": ("v100", (1, 2, 4, 8)),
    "nvidia-tesla-p100": ("p100", (1, 2, 4)),
    "nvidia-tesla-p4": ("p4", (1, 2, 4)),
}

# The N1 host per GPU count: n1-standard with 8 vCPUs per GPU.  This is SkyPilot's default host
# for attached GPUs (gcp_catalog.py _NUM_ACC_TO_NUM_CPU: V100, P100 and DEFAULT map 1/2/4/8 GPUs to
# 8/16/32/64 vCPUs on N1) and the per-GPU host of AWS p3 (8 vCPUs per V100).  Every one fits GCP's
# per-count ceilings (the smallest: V100 x1 allows 12 vCPUs and 78 GB; P100 x4 allows 208 GB).
N1_VCPUS_PER_GPU = 8
N1_STANDARD_GIB_PER_VCPU = Decimal("3.75")
# N1's default per-VM egress: 2 Gbps per vCPU, at most 32 Gbps (GCP "Network bandwidth" docs and
# the P100/P4 line of the GPU bandwidth table).  The up-to-100 Gbps T4/V100 configurations need
# gVNIC and larger hosts than these, so they are not assumed.
N1_GBPS_PER_VCPU = 2
N1_MAX_GBPS = 32


def n1_shapes() -> list[MachineShape]:
    """Every N1 + attached GPU offer: one n1-standard host per (GPU model, allowed count)."""
    shapes = []
    for accelerator, (short, counts) in N1_GPU_COUNTS.items():
        for count in counts:
            vcpus = N1_VCPUS_PER_GPU * count
            shapes.append(
                MachineShape(
                    name=f"n1-standard-{vcpus}+{short}x{count}",
                    accelerator=accelerator,
                    gpu_count=count,
                    vcpus=vcpus,
                    memory_gib=N1_STANDARD_GIB_PER_VCPU * vcpus,
                    network_gbps=float(min(N1_GBPS_PER_VCPU * vcpus, N1_MAX_GBPS)),
                )
            )
    return shapes


def network_gbps(machine_type: str) -> float | None:
    """The documented maximum bandwidth of an accelerator-optimized type (None: not listed)."""
    shape = ACCELERATOR_OPTIMIZED.get(machine_type)
    return None if shape is None else shape.network_gbps
