"""What one instance of a gang needs from its host, and whether an offer's host has it.

A gang that fits in GPU memory may still not run on an offer: its data loaders and trainers need
vCPUs, optimizer states offloaded to the CPU need host RAM, and states swapped to NVMe need local
disk.  :func:`host_need` says what one instance needs, from the workload and its estimate;
:func:`loader_slowdown` how much a host with too few cores to decode the images stretches the
training steps; :func:`cpu_suffices`, :func:`ram_suffices` and :func:`disk_suffices` check the
offers' stated figures against the needs, column-wise (an offer that does not state a figure is
given the benefit of the doubt).

Pure functions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from planner.gpu_specs import resolve_gpu
from planner.workload import Estimate, WorkloadSpec
from planner.workload.data_loader import VCPUS_PER_WORKER, images_per_s_per_vcpu, loader_limit
from planner.workload.memory import (
    GIB,
    OFFLOAD_HOST_BYTES_PER_PARAM,
    PAGED_OPTIMIZERS,
    nvme_staging_bytes,
    nvme_state_bytes_per_param,
    paged_spill_bytes,
    paged_state_bytes,
    state_bytes,
)

# Offloaded optimizer states (training.offload: optimizer) live in host RAM, 12 bytes per parameter
# (memory.OFFLOAD_HOST_BYTES_PER_PARAM, the rule `planner build` sizes RAM with).  Sharded over the
# data-parallel ranks like the states on the GPU (ZeRO stage >= 1), and split by the tensor and
# pipeline ranks, so an instance holds its GPUs' share.  On NVMe (training.offload: nvme) the host
# holds only each rank's pinned staging buffers (memory.nvme_staging_bytes: 16 bytes per parameter
# of one sub-group, at most 1e9 parameters).
OFFLOAD_BYTES_PER_PARAM = OFFLOAD_HOST_BYTES_PER_PARAM
# Host RAM the rest takes when states are offloaded: the OS, each rank's CUDA context and
# framework (~2-3 GiB resident per process) and the pinned staging buffers.  A planning figure.
HOST_RESERVE_GIB = 8.0
# An image workload's CPU data loader prepares images at its pipeline's rate per worker, a worker
# per physical core, two vCPUs (planner.workload.data_loader: images_per_s_per_vcpu).  A GPU
# decoder (data.loader: gpu) or pre-decoded arrays need no more cores than token ids.
# Token ids need no decoding: one loader worker per GPU keeps up.
TEXT_LOADER_VCPUS_PER_GPU = 1
# Every GPU's training process (its rank) also holds a core.
TRAINER_VCPUS_PER_GPU = 1


@dataclass(frozen=True)
class HostNeed:
    """What one instance of a gang needs from its host (0: nothing beyond the default)."""

    vcpus: float
    host_memory_gib: float
    images_per_s: float = 0.0  # the instance's data loader, for the exclusion's wording
    trainer_vcpus: float = 0.0  # the cores its GPUs' training processes hold
    step_hours: float = 0.0  # hours of training steps the loader must keep fed
    local_disk_gb: float = 0.0  # local NVMe for optimizer states swapped there (offload: nvme)
    images_per_s_per_vcpu: float = 0.0  # what one loader vCPU prepares (0: no image loader)


def loader_slowdown(need: HostNeed, vcpus: float) -> float:
    """How much slower the training steps run when ``vcpus`` cannot decode the images the GPUs
    would train on: the GPUs wait for the loader, which prepares ``need.images_per_s_per_vcpu``
    on every vCPU the trainers leave (1: the host keeps up, or does not say how many cores it
    has; inf: no core is left for loading)."""
    if need.images_per_s <= 0 or not math.isfinite(vcpus) or vcpus >= need.vcpus:
        return 1.0
    loaders = vcpus - need.trainer_vcpus
    if loaders <= 0:
        return math.inf
    return max(need.images_per_s / (loaders * need.images_per_s_per_vcpu), 1.0)


def host_need(spec: WorkloadSpec, est: Estimate, gpus_per_instance: int) -> HostNeed:
    """The vCPUs and host RAM one instance of ``gpus_per_instance`` GPUs needs to run its share
    of ``est``: data-loader cores per GPU (for an image workload whose loader the estimate assumed
    to keep up, the vCPUs its pipeline needs for the images per second the estimate trains at;
    where the workload gives its workers, the estimate is already capped by them and the instance
    needs their vCPUs; one core for token ids, a GPU decoder or pre-decoded arrays) plus one per
    GPU for its trainer; and, with offloaded optimizer states, the instance's share of
    :data:`OFFLOAD_BYTES_PER_PARAM` per parameter plus :data:`HOST_RESERVE_GIB`.  Inference
    needs nothing here."""
    if spec.kind.value == "inference":
        return HostNeed(0.0, 0.0)
    s = est.strategy
    used = max(s.gpus_per_piece * s.concurrent_pieces, 1)
    per_instance = min(gpus_per_instance, used)
    images_per_s = per_vcpu = 0.0
    limit = loader_limit(spec)
    if limit is None:
        loader = float(TEXT_LOADER_VCPUS_PER_GPU)
    elif not limit.workers_defaulted:
        loader = float(limit.workers * VCPUS_PER_WORKER)
    else:
        samples = float(spec.data.samples or 0.0) if spec.data is not None else 0.0
        epochs = float(spec.data.epochs) if spec.data is not None else 1.0
        step_hours = est.time_breakdown_hours.get("training steps") or est.wall_hours
        per_gpu = samples * epochs * spec.pieces / max(step_hours * 3600.0, 1e-9) / used
        images_per_s = per_gpu * per_instance
        per_vcpu = images_per_s_per_vcpu(limit)
        loader = float(math.ceil(per_gpu / per_vcpu))
    vcpus = per_instance * (loader + TRAINER_VCPUS_PER_GPU)
    step_hours = est.time_breakdown_hours.get("training steps") or est.wall_hours
    ram = disk_gb = 0.0
    # a GPU's share of the parameters whose optimizer states it steps (sharded by tensor and
    # pipeline parallelism, and by data parallelism, context-parallel ranks included, under ZeRO)
    zero_ranks = s.data_parallel * s.context_parallel if s.zero_stage >= 1 else 1
    shards = s.tensor_parallel * s.pipeline_parallel * zero_ranks
    rank_params = float(spec.model.params or 0.0) / max(shards, 1)
    if spec.train.offload in ("optimizer", "nvme") and s.method == "full":
        states = (
            nvme_staging_bytes(rank_params)  # the states on NVMe, staged through pinned buffers
            if spec.train.offload == "nvme"
            else OFFLOAD_BYTES_PER_PARAM * rank_params
        )
        ram = states * per_instance / GIB + HOST_RESERVE_GIB
        if spec.train.offload == "nvme":  # the swap files of the instance's ranks, on its NVMe
            per_param = nvme_state_bytes_per_param(
                state_bytes(spec.train.precision.value, spec.train.optimizer.value)
            )
            disk_gb = per_param * rank_params * per_instance / 1e9
    elif spec.train.optimizer.value in PAGED_OPTIMIZERS and s.method == "full":
        ram = _paged_host_gib(spec, est, rank_params, per_instance)
    return HostNeed(
        vcpus,
        ram,
        images_per_s,
        per_instance * TRAINER_VCPUS_PER_GPU,
        step_hours,
        disk_gb,
        images_per_s_per_vcpu=per_vcpu,
    )


def _paged_host_gib(
    spec: WorkloadSpec, est: Estimate, rank_params: float, per_instance: int
) -> float:
    """Host RAM (GiB) an instance needs for a paged optimizer's states (bitsandbytes, CUDA
    unified memory) of ``rank_params`` parameters a GPU: what each GPU cannot keep in the memory
    its job leaves spare is evicted to host RAM (:func:`~planner.workload.memory.paged_spill_bytes`),
    plus :data:`HOST_RESERVE_GIB` when anything spills.  The estimate's memory per GPU leaves the
    paged states out."""
    paged = rank_params * paged_state_bytes(spec.train.optimizer.value)
    spare = (resolve_gpu(est.gpu).usable_memory_gib - est.memory_per_gpu_gib) * GIB
    spilled = paged_spill_bytes(paged, spare)
    return spilled * per_instance / GIB + HOST_RESERVE_GIB if spilled > 0 else 0.0


def cpu_suffices(
    vcpus: np.ndarray, need: np.ndarray, images_per_s: np.ndarray, trainers: np.ndarray
) -> np.ndarray:
    """Whether each host's ``vcpus`` can run its gang: the ``need`` in full for text; for images,
    a core left for loading once every GPU's trainer has one (fewer loader cores than the images
    need only slow the steps, :func:`loader_slowdown`).  NaN (not stated): yes."""
    return np.isnan(vcpus) | (vcpus >= need) | ((images_per_s > 0) & (vcpus > trainers))


def ram_suffices(ram: np.ndarray, need: np.ndarray) -> np.ndarray:
    """Whether each host's RAM (GiB) holds the ``need`` of its gang.  NaN (not stated): yes."""
    return np.isnan(ram) | (ram >= need - 1e-9)


def disk_suffices(disk: np.ndarray, need: np.ndarray) -> np.ndarray:
    """Whether each host's local NVMe (GB) holds the optimizer states its gang swaps there
    (``offload: nvme``; no need: yes).  NaN (not stated): yes."""
    return (need <= 0) | np.isnan(disk) | (disk >= need - 1e-9)
