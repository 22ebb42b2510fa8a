"""The host's data loader as a limit on image-model training (pure).

A vision training step reads JPEGs that the host decodes and augments in DataLoader worker
processes while the GPU runs the previous batches (prefetching), so a step takes the longer of its
GPU time and the time the workers need to prepare its images:

    loader images/s per GPU = workers per GPU x images/s one worker (one core) prepares
    step = max(GPU step, images per GPU per step / loader images/s per GPU)

One worker's rate is the inverse of the sum of its stages' single-thread costs, each a published
figure on ImageNet validation images (cited at the constants).  Transformers on tokenised text
have no such stage; ``data.loader: gpu`` (NVIDIA DALI/nvJPEG, or pre-decoded cached data) lifts
the cap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.workload.spec import WorkloadSpec

# One core's single-thread decode of ImageNet validation JPEGs (bytes in memory, RGB uint8) with
# Pillow, the decoder of torchvision's ImageFolder: 577 images/s on an Intel Xeon Platinum 8581C
# (Emerald Rapids, Google Cloud), 537 on AMD EPYC 9B14 and 726 on EPYC 9B45 (Iglovikov and
# Kosarevsky, "Single-Thread JPEG Decoder Benchmarks Mis-Evaluate ML Data Loaders",
# arXiv:2605.08731, and its ternaus/imread_benchmark README table); the Intel figure is taken.
PIL_DECODE_IMAGES_PER_S = 577.0
# OpenCV's decode on the same CPU, 721 images/s (same table): YOLOv5's loader reads with cv2.imread.
OPENCV_DECODE_IMAGES_PER_S = 721.0
# Single-thread augmentation of decoded ImageNet validation images (albumentations-team/benchmark
# README, image table): Pillow 12.2.0 RandomResizedCrop 1,282 images/s and HorizontalFlip 14,777;
# AlbumentationsX 2.2.2 (OpenCV) Affine 1,479 and HSV 1,050 images/s.  (U) that benchmark's CPU is
# taken as the decode table's.
PIL_RANDOM_RESIZED_CROP_IMAGES_PER_S = 1282.0
PIL_HORIZONTAL_FLIP_IMAGES_PER_S = 14777.0
OPENCV_AFFINE_IMAGES_PER_S = 1479.0
OPENCV_HSV_IMAGES_PER_S = 1050.0
# YOLOv5's mosaic (ultralytics/yolov5 utils/dataloaders.py load_mosaic): four images decoded per
# training image, then one random_perspective warp and one HSV jitter of the 640 x 640 result.
MOSAIC_IMAGES_DECODED = 4
# (U) a 640 x 640 mosaic has about twice the pixels of an average ImageNet validation image (the
# benchmarks' input, ~400 x 350), so its warp and HSV jitter cost twice the benchmarks' figures.
MOSAIC_PIXEL_FACTOR = 2.0
# Host cores per GPU on cloud GPU instances (AWS instance-type specifications): p4d.24xlarge has
# 96 vCPUs for 8 A100s, p5.48xlarge 192 vCPUs for 8 H100s, p3.2xlarge 8 vCPUs for 1 V100; a vCPU
# is one hyper-thread, so p4d's 48 physical cores give 6 per GPU.  One of them runs the training
# process itself, leaving 5 DataLoader workers per GPU (U: one worker per physical core).  Used
# only to say how the estimate would move on such a host: a workload that does not give
# ``data.loader_workers_per_gpu`` is estimated as if its loader kept up (published runs are mostly
# fed by many workers or a GPU decoder), and the assumptions name the workers that takes.
DEFAULT_WORKERS_PER_GPU = 5
# vCPUs per DataLoader worker on a cloud instance: a worker is one physical core, and an x86 cloud
# vCPU is one hyper-thread of a core (AWS EC2 docs, "CPU options": "each vCPU is a thread of a CPU
# core"); a second hyper-thread adds little to a decode-bound worker (U).
VCPUS_PER_WORKER = 2


@dataclass(frozen=True)
class LoaderLimit:
    """The host loader's rate for one GPU: ``workers`` processes at ``images_per_s_per_worker``."""

    pipeline: str
    workers: int
    images_per_s_per_worker: float
    workers_defaulted: bool

    @property
    def images_per_s_per_gpu(self) -> float:
        return self.workers * self.images_per_s_per_worker

    @property
    def seconds_per_image(self) -> float:
        """Seconds of one GPU's loader time per image (its workers in parallel)."""
        return 1.0 / self.images_per_s_per_gpu

    @property
    def capped_seconds_per_image(self) -> float:
        """What the step is capped at per image: the workers' time where the workload gives its
        workers, none (0) where they are assumed to keep up."""
        return 0.0 if self.workers_defaulted else self.seconds_per_image


def classification_images_per_s() -> float:
    """One worker's ImageNet-style training pipeline: Pillow decode, RandomResizedCrop, flip."""
    seconds = (
        1.0 / PIL_DECODE_IMAGES_PER_S
        + 1.0 / PIL_RANDOM_RESIZED_CROP_IMAGES_PER_S
        + 1.0 / PIL_HORIZONTAL_FLIP_IMAGES_PER_S
    )
    return 1.0 / seconds


def mosaic_images_per_s() -> float:
    """One worker's YOLO-style mosaic: four OpenCV decodes, then a warp and an HSV jitter of a
    640 px image (:data:`MOSAIC_PIXEL_FACTOR` times the benchmarks' image)."""
    seconds = MOSAIC_IMAGES_DECODED / OPENCV_DECODE_IMAGES_PER_S + MOSAIC_PIXEL_FACTOR * (
        1.0 / OPENCV_AFFINE_IMAGES_PER_S + 1.0 / OPENCV_HSV_IMAGES_PER_S
    )
    return 1.0 / seconds


_PIPELINES = {
    "classification": ("decode + RandomResizedCrop + flip", classification_images_per_s),
    "mosaic": ("mosaic of 4 decodes + warp + HSV", mosaic_images_per_s),
}


def loader_limit(spec: WorkloadSpec) -> LoaderLimit | None:
    """The CPU loader's limit on ``spec``'s training, or None where there is none: a model that
    reads tokenised text, ``data.loader: gpu``, or images decoded ahead of training
    (``data.augmentation: preprocessed``)."""
    d = spec.data
    if d is None or not spec.model.takes_images or d.loader == "gpu":
        return None
    if d.augmentation == "preprocessed":
        return None
    name, rate = _PIPELINES[d.augmentation or "classification"]
    workers = d.loader_workers_per_gpu
    return LoaderLimit(
        pipeline=name,
        workers=workers or DEFAULT_WORKERS_PER_GPU,
        images_per_s_per_worker=rate(),
        workers_defaulted=workers is None,
    )


def loader_assumption(limit: LoaderLimit, step_images: float, step_s: float, binds: bool) -> str:
    """The assumptions line: the loader's rate per GPU and whether it sets the step time; where
    the workload does not give its workers, the workers per GPU that keep up with the GPU's step of
    ``step_s`` seconds (no cap applied)."""
    if limit.workers_defaulted:
        needed = math.ceil(step_images / (step_s * limit.images_per_s_per_worker) - 1e-9)
        return (
            f"CPU data loader ({limit.pipeline}) assumed to keep up: at "
            f"{limit.images_per_s_per_worker:,.0f} img/s per worker that takes {needed} "
            f"worker{'s' if needed != 1 else ''} per "
            f"GPU (an AWS p4d host, 96 vCPUs for 8 GPUs, has {DEFAULT_WORKERS_PER_GPU} cores to spare "
            "per GPU); set "
            "data.loader_workers_per_gpu to cap the estimate by your host's, or data.loader: gpu "
            "for a GPU decoder; single-thread stage costs on ImageNet JPEGs from arXiv:2605.08731 "
            "(decode) and the albumentations-team benchmark (augmentations)"
        )
    where = (
        f"caps each step at {step_images:,.4g} images / {limit.images_per_s_per_gpu:,.0f} img/s = "
        f"{step_s:.3g} s, longer than the GPU's"
        if binds
        else "faster than the GPU here"
    )
    return (
        f"CPU data loader ({limit.pipeline}): {limit.workers} workers per GPU"
        f" x {limit.images_per_s_per_worker:,.0f} img/s "
        f"per worker = {limit.images_per_s_per_gpu:,.0f} img/s per GPU, {where}; single-thread "
        "stage costs on ImageNet JPEGs from arXiv:2605.08731 (decode) and the "
        "albumentations-team benchmark (augmentations)"
    )


LOADER_ADVICE = (
    "the CPU data loader limits this run: give it more host cores "
    "(data.loader_workers_per_gpu), decode on the GPU (NVIDIA DALI, data.loader: gpu) "
    "or train from cached, pre-decoded images"
)


def images_per_s_per_vcpu(limit: LoaderLimit) -> float:
    """What one vCPU of a cloud instance prepares: a worker's rate over :data:`VCPUS_PER_WORKER`."""
    return limit.images_per_s_per_worker / VCPUS_PER_WORKER
