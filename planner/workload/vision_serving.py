"""Vision (CNN, detection) and diffusion inference from physics: batch time, images/s, latency (pure).

One *replica* is the model on one GPU (images are independent, so more GPUs are more replicas).
Everything follows from :meth:`VisionReplica.batch_seconds`, the time one engine call takes for
``b`` images:

* the FLOPs of ``b`` forward passes at ``peak at the precision x the board's sustained share
  under a power cap x the engine's fraction`` (:class:`InferenceEfficiency`, read from
  ``planner/data/inference_efficiency.yaml`` with the source of every figure), or the bytes they
  move (weights once, activations written and read per image) at the memory bandwidth, whichever
  is longer (roofline);
* plus a floor per kernel the engine launches (a kernel cannot take less than its launch gap,
  ramp-up and drain, a fixed number of GPU cycles however little work it has: what makes batch 1
  slow on a big GPU, and faster on a high-clocked one), and the host's time
  (eager PyTorch dispatches every operator from Python; a TensorRT engine is enqueued at once) --
  the GPU waits for the slower of the two;
* plus the engine's fixed cost per call (copying the batch in, pre- and post-processing).

The effective efficiency therefore rises with the batch, ``e x b c / (b c + floor)``: one image on
an A100 keeps it mostly idle, 256 images run at the matmul fraction.

**Diffusion** (Stable Diffusion 1.5, 2.x, XL): one image is ``steps`` UNet forward passes (two with
classifier-free guidance, run as one batch of 2 latents), one text-encoder pass (prompt and negative
prompt) and one VAE decode; their FLOPs come from :data:`DIFFUSION_PIPELINES`.  Int8/fp8 engines
quantise the convolutions and linear layers; attention scores and the VAE stay 16-bit.

**Serving** (dynamic batching, Triton-style): a load of ``lambda`` images/s on a replica is served
in batches of ``b = lambda x S(b)`` (what arrives during one call, at least 1, at most the engine's
maximum batch).  Batches form an M/D/1 queue (Poisson arrivals, as in :mod:`.serving`) with service
``S(b)``: mean wait ``rho S / (2 (1 - rho))``, ``rho = lambda S(b) / b``, an exponential tail.
Latency = wait + ``S(b)``.  A load beyond ``max_batch / S(max_batch)`` is overloaded.

**Memory**: weights at the precision + activations per image x batch (engines reuse buffers: the
live set is ~4-6% of all activation tensors, onnx-tool's memory compression on ResNet-50 and the
Stable Diffusion UNet) + the runtime (CUDA context, kernels, cuDNN/TensorRT workspace).

Figures marked (U) are planning assumptions, (D) derived here from the cited shapes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.errors import ConfigError, UnknownNameError
from planner.gpu_specs import GpuSpec
from planner.workload import efficiency as eff
from planner.workload import memory as mem
from planner.workload.efficiency import load_inference_efficiency
from planner.workload.models import DIFFUSION_PIPELINES
from planner.workload.serving import wait_quantile

# -- engines ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Engine:
    """One inference engine's per-kernel and per-call costs."""

    name: str
    description: str
    kernels_per_layer: float  # kernels one conv layer launches (fused: 1; eager conv+bn+act: 3)
    host_us_per_kernel: float  # CPU time to dispatch one kernel (0: the engine is enqueued at once)
    call_overhead_ms: float  # per engine call: input copy, pre/post-processing, scheduling
    step_overhead_ms: float  # diffusion: per denoising step (scheduler update, guidance combine)
    source: str


ENGINES: dict[str, Engine] = {
    "tensorrt": Engine(
        "tensorrt",
        "NVIDIA TensorRT engine (fused conv + bias + activation, int8/fp8 kernels, one enqueue)",
        kernels_per_layer=1.0,
        host_us_per_kernel=0.0,
        call_overhead_ms=0.05,
        step_overhead_ms=0.2,
        source=(
            "TensorRT developer guide (layer fusion: convolution + bias + ReLU; an engine runs with "
            "one enqueueV3 call); per-call 0.05 ms and per-step 0.2 ms (U)"
        ),
    ),
    "pytorch": Engine(
        "pytorch",
        "eager PyTorch (cuDNN convolutions; batch norm and activation as separate kernels)",
        kernels_per_layer=3.0,
        host_us_per_kernel=10.0,
        call_overhead_ms=0.5,
        step_overhead_ms=1.0,
        source=(
            "eager PyTorch dispatches each operator from Python, ~10 us of CPU per operator (U, "
            "the per-op overhead TorchDynamo/CUDA graphs remove); conv, batch norm and activation "
            "are three kernels; per-call 0.5 ms (U)"
        ),
    ),
    "onnxruntime": Engine(
        "onnxruntime",
        "ONNX Runtime with the CUDA execution provider (fused conv + activation, C++ dispatch)",
        kernels_per_layer=1.5,
        host_us_per_kernel=4.0,
        call_overhead_ms=0.2,
        step_overhead_ms=0.5,
        source="ONNX Runtime graph optimisations (Conv+Activation fusion); C++ dispatch ~4 us (U)",
    ),
}
# Stable Diffusion pipelines in Hugging Face diffusers run eager PyTorch.
ENGINE_ALIASES = {"diffusers": "pytorch", "torch": "pytorch", "eager": "pytorch", "trt": "tensorrt"}
VISION_ENGINE_NAMES = (*ENGINES, *ENGINE_ALIASES)
DEFAULT_ENGINE = "tensorrt"


def engine(name: str | None) -> Engine:
    """The engine called ``name`` (``None`` or ``auto``: TensorRT, NVIDIA's serving engine)."""
    key = DEFAULT_ENGINE if name in (None, "", "auto") else str(name).strip().lower()
    key = ENGINE_ALIASES.get(key, key)
    if key not in ENGINES:
        raise UnknownNameError("vision inference engine", str(name), [*VISION_ENGINE_NAMES, "auto"])
    return ENGINES[key]


# -- precisions ------------------------------------------------------------------------------------

VISION_PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp8", "int8")
_BYTES = {"fp32": 4.0, "tf32": 4.0, "fp16": 2.0, "bf16": 2.0, "fp8": 1.0, "int8": 1.0}
QUANTISED = ("fp8", "int8")


def vision_precision(value: str) -> str:
    """The precision a vision engine runs (``pure-bf16`` reads as bf16); ConfigError otherwise."""
    name = {"pure-bf16": "bf16"}.get(value, value)
    if name not in VISION_PRECISIONS:
        raise ConfigError(
            f"vision and diffusion inference runs in {', '.join(VISION_PRECISIONS)}, not {value}",
            key_path="inference.precision",
            hint="int8 for a TensorRT engine, fp16 otherwise (int4 is an LLM weight format)",
        )
    return name


# GPUs outside the V100 family whose int8 runs on the CUDA cores' DP4A instruction (4 int8 products
# a lane and clock) for want of int8 tensor cores: Pascal GP102/GP104 (Tesla P4 datasheet 22 INT8
# TOPS on 5.5 FP32 TFLOPS; P40 47 on 11.76) and Turing TU116, which has no tensor cores.
DP4A_INT8 = frozenset({"P4", "P40", "GTX1080Ti", "TITAN-Xp", "GTX1660"})


def conv_peak_flops(gpu: GpuSpec, precision: str) -> float:
    """Dense peak of the unit ``precision``'s convolutions and matmuls run on, FLOP/s (int8: ops/s).

    * fp32: TF32 tensor cores on Ampere and newer -- cuDNN convolutions in PyTorch
      (``torch.backends.cudnn.allow_tf32`` defaults to True) and TensorRT (TF32 on by default) --
      else the CUDA cores;
    * fp16/bf16: the 16-bit tensor rate (gpus.yaml; no tensor cores on Pascal);
    * int8: 2x the 16-bit dense rate on Turing, Ampere, Ada, Hopper and Blackwell tensor cores
      (T4 130 TOPS, A100 624, L4 242, H100 SXM 1,979, Jetson AGX Orin GPU 85 dense / 170 sparse);
      GeForce lists the FP32-accumulate 16-bit rate, half the FP16-accumulate one, while int8
      accumulates in INT32 at full rate: 4x (RTX 3090 284 TOPS, RTX 4090 660.6; GA102 and Ada
      whitepapers); the GPUs without int8 tensor cores (:data:`DP4A_INT8`: Volta's V100 and
      TITAN V, Pascal's P4, P40, GTX 1080 Ti and TITAN Xp, Turing's TU116 GTX 1660) run DP4A at
      4x fp32 (P4 22 TOPS, P40 47); P100 (GP100), Kepler (K80) and Maxwell (M60) have no DP4A:
      the 16-bit rate;
    * fp8: 2x the 16-bit rate where the GPU has fp8 tensor cores (ConfigError elsewhere).
    """
    if precision in ("fp32", "tf32"):
        return gpu.matmul_peak_flops("tf32") if gpu.bf16 else gpu.fp32_tflops * 1e12
    if precision == "fp8":
        if not gpu.fp8:
            raise ConfigError(
                f"{gpu.name} has no fp8 tensor cores (Hopper, Ada or Blackwell has them)",
                key_path="inference.precision",
                hint="use int8 (a TensorRT int8 engine) or fp16",
            )
        return gpu.matmul_peak_flops("fp8")
    if precision == "int8":
        if gpu.family == "V100" or gpu.name in DP4A_INT8:
            return 4.0 * gpu.fp32_tflops * 1e12
        if gpu.name == "P100" or gpu.family in ("Kepler", "Maxwell"):
            return gpu.peak_flops
        if gpu.family == "GeForce":
            return 4.0 * gpu.peak_flops
        return 2.0 * gpu.peak_flops
    return gpu.peak_flops


# The Jetson AGX Orin's two deep-learning accelerators (DLA): 105 INT8 TOPS sparse together, 52.5
# dense (Jetson AGX Orin 64GB: 275 TOPS = GPU 170 + DLA 105, NVIDIA Jetson AGX Orin series
# datasheet).  Optional: TensorRT places a network (or part of it) on a DLA only when asked, and the
# DLAs run int8/fp16 convolutions only; their images add to the GPU's throughput, never shorten one
# image's latency.
DLA_INT8_OPS: dict[str, float] = {"Jetson-AGX-Orin": 52.5e12}
# Jetsons with DLAs whose dense rate no cited source gives (the Jetson AGX Xavier's two first-
# generation NVDLAs): asked for, they are refused, as on a GPU without any, but not said absent.
DLA_UNMODELLED = frozenset({"Jetson-AGX-Xavier"})


# -- models ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CnnShape:
    """What CNN inference needs beyond the preset: native resolution, kernels, activations."""

    resolution: int  # the input side the FLOPs are quoted at
    layers: int  # convolution / fully connected layers (kernels of a fused engine)
    activation_elements: float  # elements of all layer outputs for one image at ``resolution``
    source: str
    forward_flops: float | None = None  # when there is no preset (FLOPs = 2 x MACs)
    params: float | None = None


# Layer outputs (D): summed from the published architectures at the native resolution -- ResNet-50:
# 112^2 x 64 + 56^2 x (3 blocks x 384 + 256) + 28^2 x 4 x 768 + 14^2 x 6 x 1536 + 7^2 x 3 x 3072 =
# ~11M; ResNet-18: ~2.5M; YOLOv5s at 640 (yolov5s.yaml: 32-512 channels at strides 2-32, C3 blocks
# and the PAN head) ~24M; RetinaNet (MLPerf: ResNeXt50-32x4d FPN at 800x800, 264 OpenImages
# classes, 9 anchors): backbone ~190M, FPN and heads (10 convs of 256 channels on P3-P7 and the
# 2,376-channel class output) ~70M.
CNN_SHAPES: dict[str, CnnShape] = {
    "resnet18": CnnShape(224, 21, 2.5e6, "torchvision resnet18; layer outputs summed (D)"),
    "resnet50": CnnShape(224, 54, 11e6, "torchvision resnet50; layer outputs summed (D)"),
    # ResNet-101 and -152: 104 and 155 convolutions and the classifier; 16.2M and 22.6M outputs
    "resnet101": CnnShape(224, 105, 16.2e6, "torchvision resnet101; layer outputs summed (D)"),
    "resnet152": CnnShape(224, 156, 22.6e6, "torchvision resnet152; layer outputs summed (D)"),
    "yolov5s": CnnShape(640, 62, 24e6, "ultralytics yolov5s.yaml; layer outputs summed (D)"),
    # RetinaNet forward FLOPs (D): ResNeXt50-32x4d 4.27 GMACs at 224 (torchvision docs) x
    # (800/224)^2 = 54.5 GMACs; FPN ~10 GMACs; heads at 800 px (P3 100x100 .. P7, x1.33 over the
    # levels): 8 convs 3x3 256->256 (47 GMACs at P3), the class conv 3x3 256->2376 (55 GMACs) and
    # the box conv -> 136 GMACs; ~200 GMACs = 0.40 TFLOPs.  Params ~38M (ResNeXt50 25M + FPN/heads).
    "retinanet-resnext50-fpn": CnnShape(
        800,
        111,
        260e6,
        "MLPerf Inference RetinaNet (ResNeXt50-32x4d FPN, 800x800, 264 classes); FLOPs derived",
        forward_flops=0.40e12,
        params=37.97e6,
    ),
}
DEFAULT_CNN_LAYERS = 50  # an unknown CNN: about ResNet-50's depth (U)
# An engine keeps only the live activations: 3.8% of all tensors for ResNet-50, 6.2% for the SD
# UNet, 4.5% for the VAE decoder (onnx-tool README, activation memory compression).
LIVE_ACTIVATION_SHARE = 0.06
# Training stores ~4-5 tensors per conv layer (input, batch-norm and activation inputs in 16-bit,
# the masks) where a fused engine writes one output: an unknown CNN's layer outputs are its stored
# training activations / 2 bytes / 4.5 (ResNet-50: 0.09 GiB -> 10.7M, the count above) (D).
TRAIN_TO_INFER_ACTIVATIONS = 4.5


# Element-wise traffic of an eager UNet (group norms, SiLU, residual adds, GEGLU) per linear FLOP
# (D): SD 1.5 at 512 reads and writes ~0.72G feature-map elements per latent (310 passes over the
# 64x64x320 map, 310 over 32x32x640, ...) against 0.68 TFLOPs.
DIFFUSION_ELEMENTS_PER_FLOP = 1.06e-3


# L2 cache per GPU, MiB (NVIDIA architecture whitepapers and datasheets: T4 4, V100 6, A100 40,
# A10/A10G 6, RTX 3090 6, RTX 4090 72, L4 48, L40S 96 (and the L40 and L20 of its AD102), H100 50,
# H200 50, Jetson AGX Orin 4; B200 126 (U); CUDA deviceQuery: Jetson Orin Nano 2 (2,097,152
# bytes), Jetson AGX Xavier 0.5 (524,288 bytes); TITAN V 4.5, the V100's 6 less the fourth HBM2
# stack's slices).  A layer's output that fits stays on chip for the next layer.
L2_MIB: dict[str, float] = {
    "T4": 4,
    "V100": 6,
    "A100": 40,
    "A10": 6,
    "A10G": 6,
    "RTX3090": 6,
    "RTX4090": 72,
    "RTX3060": 3,
    "L4": 48,
    "L40S": 96,
    "H100": 50,
    "H200": 50,
    "B200": 126,
    "Jetson": 4,
    "Jetson-Orin-Nano": 2,
    "Jetson-Orin-Nano-Super": 2,
    "Jetson-AGX-Xavier": 0.5,
    "TITAN-V": 4.5,
}


# -- the replica -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    """What one image costs, independent of the GPU."""

    kind: str  # "cnn" or "diffusion"
    forward_flops: float  # cnn: one image; diffusion: one UNet forward of one latent
    quantisable_share: float  # share of forward_flops in convolutions/linear layers
    params: float
    activation_elements: float  # per image (diffusion: per latent per UNet forward)
    kernels: float  # layers (cnn) or UNet kernels (diffusion) per forward
    steps: int = 0
    guidance: bool = True
    text_flops: float = 0.0
    vae_flops: float = 0.0
    live_activation_bytes_16bit: float = 0.0  # per image, for the memory estimate


@dataclass(frozen=True)
class VisionReplica:
    """A model on one GPU, run by one engine at one precision."""

    work: Workload
    gpu: GpuSpec
    engine: Engine
    precision: str
    use_dla: bool = False

    @property
    def efficiency(self) -> float:
        """Share of the peak this engine's kernels sustain on this GPU (saturating batch)."""
        return load_inference_efficiency().fraction(self.engine.name, self.gpu)

    @property
    def kernel_floor_s(self) -> float:
        return load_inference_efficiency().kernel_floor_s(self.gpu)

    def _compute_seconds(self, flops: float, linear_share: float) -> float:
        """FLOPs at the precision's peak x the engine's fraction for the convolutions and linear
        layers (``linear_share``); the attention scores (the rest) run 16-bit (int8/fp8 engines
        keep them in fp16) at the attention kernels' lower share of the peak."""
        e = self.efficiency
        fast = conv_peak_flops(self.gpu, self.precision) * e
        attention = flops * (1.0 - linear_share)
        if attention <= 0:
            return flops / fast
        scores_precision = "fp16" if self.precision in QUANTISED else self.precision
        slow = conv_peak_flops(self.gpu, scores_precision) * e
        slow *= load_inference_efficiency().attention_relative
        return flops * linear_share / fast + attention / slow

    def _memory_seconds(self, images: float) -> float:
        """Weights read once per call, from memory unless they fit in the L2 cache beside the
        live tensors (then the calls before left them there: a served model runs the same weights
        call after call, and nothing else on the GPU evicts them); each layer's output written and
        read back, from memory only for the share of the batch's live tensors that does not fit
        in the L2 cache."""
        w = self.work
        act_bytes = _BYTES[self.precision]
        live = w.live_activation_bytes_16bit / 2.0 * act_bytes * images
        l2 = L2_MIB.get(self.gpu.name, L2_MIB.get(self.gpu.family, 0.0)) * 2**20
        spill = 1.0 if l2 <= 0 else min(1.0, live / l2)
        weights = w.params * _BYTES[self.precision]
        resident = l2 > 0 and weights + live <= l2
        moved = (
            0.0 if resident else weights
        ) + 2.0 * w.activation_elements * images * act_bytes * spill
        return moved / (self.gpu.memory_bandwidth_gb_per_s * 1e9 * eff.MEMORY_BW_FRACTION)

    def forward_seconds(self, images: float) -> float:
        """One forward pass over ``images`` inputs (latents): roofline + kernel floors, or the
        host's dispatch time when that is longer."""
        w = self.work
        gpu = max(
            self._compute_seconds(w.forward_flops * images, w.quantisable_share),
            self._memory_seconds(images),
        )
        kernels = w.kernels * self.engine.kernels_per_layer
        gpu += kernels * self.kernel_floor_s
        host = kernels * self.engine.host_us_per_kernel * 1e-6
        return max(gpu, host)

    def step_seconds(self, images: int) -> float:
        """Diffusion: one denoising step for ``images`` images (2 latents each with guidance)."""
        latents = images * (2 if self.work.guidance else 1)
        return self.forward_seconds(latents) + self.engine.step_overhead_ms * 1e-3

    def batch_seconds(self, images: int) -> float:
        """One engine call over ``images`` images, start to finish."""
        w = self.work
        call = self.engine.call_overhead_ms * 1e-3
        if w.kind != "diffusion":
            return self.forward_seconds(images) + call
        text = self._compute_seconds(w.text_flops * images * (2 if w.guidance else 1), 1.0)
        vae = self._vae_seconds(images)
        return w.steps * self.step_seconds(images) + text + vae + call

    def _vae_seconds(self, images: int) -> float:
        e = self.efficiency
        precision = "fp16" if self.precision in QUANTISED else self.precision
        return self.work.vae_flops * images / (conv_peak_flops(self.gpu, precision) * e)

    def images_per_second(self, batch: int) -> float:
        """Throughput at ``batch`` images per call, the DLAs' share included when used."""
        gpu = batch / self.batch_seconds(batch)
        return gpu + self.dla_images_per_second()

    def dla_images_per_second(self) -> float:
        """What the DLAs add (int8/fp16 CNNs only, when asked for)."""
        dla = DLA_INT8_OPS.get(self.gpu.name, 0.0)
        if not (self.use_dla and dla and self.work.kind == "cnn"):
            return 0.0
        rate = dla if self.precision == "int8" else dla / 2.0
        return rate * self.efficiency / self.work.forward_flops

    # -- memory ----------------------------------------------------------------------------------
    def memory_gib(self, batch: int) -> dict[str, float]:
        w = self.work
        latents = batch * (2 if w.kind == "diffusion" and w.guidance else 1)
        act = w.live_activation_bytes_16bit * latents * _BYTES[self.precision] / 2.0
        return {
            "weights": w.params * _BYTES[self.precision] / mem.GIB,
            "activations": act / mem.GIB,
            "runtime": mem.FRAMEWORK_FIXED_GIB,
        }


# -- serving ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class VisionPoint:
    """One replica at one load: the batch it runs, its throughput and latency (ms)."""

    images_per_s: float  # the load served (the capacity when none was given)
    overloaded: bool
    batch: float  # mean images per engine call
    max_batch: int
    latency_ms_p50: float
    latency_ms_p95: float
    capacity_images_per_s: float
    batch_ms: float  # one call at the mean batch
    utilisation: float


def serve(r: VisionReplica, max_batch: int, images_per_s: float | None = None) -> VisionPoint:
    """Latency and throughput of ``r`` with dynamic batching up to ``max_batch`` at a load of
    ``images_per_s`` (None: offline, every call a full batch)."""
    cap = r.images_per_second(max_batch)
    if images_per_s is None:
        s = r.batch_seconds(max_batch)
        return VisionPoint(cap, False, max_batch, max_batch, s * 1e3, s * 1e3, cap, s * 1e3, 1.0)
    rate = float(images_per_s)
    overloaded = rate >= cap
    if overloaded:  # figures at the capacity: full batches back to back, no queue counted
        s = r.batch_seconds(max_batch)
        return VisionPoint(cap, True, max_batch, max_batch, s * 1e3, s * 1e3, cap, s * 1e3, 1.0)
    # the DLAs take a share of the load at their own rate; the GPU serves the rest
    gpu_rate = max(min(rate, cap * (1 - 1e-9)) - r.dla_images_per_second(), 1e-12)
    batch = 1.0
    for _ in range(60):
        nb = min(max(gpu_rate * r.batch_seconds(max(1, round(batch))), 1.0), float(max_batch))
        if abs(nb - batch) <= 1e-6 * batch:
            break
        batch = nb
    b = max(1, math.ceil(batch - 1e-9))
    s = r.batch_seconds(b)
    rho = min(gpu_rate * s / b, 1.0 - 1e-9)
    wait = rho * s / (2.0 * (1.0 - rho))
    # an image arriving while a batch runs joins the next one, which takes every image waiting
    # (up to max_batch): it waits at most for the batch in progress.  The M/D/1 wait alone grew
    # without bound as the rounded batch's load neared 1 (rho 0.98 at half of capacity, a p95 of
    # 26 days at 85%: a replica of batch 2 loaded past its rate while batches of 3 carry the load)
    p50 = s + min(wait_quantile(wait, rho, 0.5), 0.5 * s)
    p95 = s + min(wait_quantile(wait, rho, 0.95), 0.95 * s)
    return VisionPoint(
        images_per_s=min(rate, cap),
        overloaded=overloaded,
        batch=batch,
        max_batch=max_batch,
        latency_ms_p50=p50 * 1e3,
        latency_ms_p95=p95 * 1e3,
        capacity_images_per_s=cap,
        batch_ms=s * 1e3,
        utilisation=rho,
    )


# -- building a workload from a spec's numbers -----------------------------------------------------


def cnn_workload(
    preset: str | None,
    *,
    params: float,
    flops_per_sample: float | None,
    activation_gib_per_sample: float | None,
    resolution: int | None,
) -> Workload:
    """A CNN image: forward FLOPs = training FLOPs per sample / 3 (the preset convention), scaled by
    ``(resolution / native)^2``; activations scale the same way."""
    shape = CNN_SHAPES.get(preset or "")
    if shape is not None and shape.forward_flops is not None:
        forward = shape.forward_flops
    elif flops_per_sample is not None:
        forward = flops_per_sample / 3.0
    else:
        raise ConfigError(
            "a CNN needs its FLOPs per image",
            key_path="model.flops_per_sample",
            hint="training FLOPs per sample (3 x forward), e.g. 2.45e10 for ResNet-50 at 224 px",
        )
    native = shape.resolution if shape else None
    if resolution is not None and native is None:
        raise ConfigError(
            f"the model's native resolution is unknown, so resolution {resolution} cannot scale "
            "its FLOPs",
            key_path="inference.resolution",
            hint="leave resolution out and give model.flops_per_sample at the resolution you run",
        )
    scale = (resolution / native) ** 2 if resolution and native else 1.0
    if shape is not None:
        act = shape.activation_elements
    else:
        act = (activation_gib_per_sample or 0.05) * mem.GIB / 2.0 / TRAIN_TO_INFER_ACTIVATIONS
    return Workload(
        kind="cnn",
        forward_flops=forward * scale,
        quantisable_share=1.0,
        params=shape.params if shape and shape.params else params,
        activation_elements=act * scale,
        kernels=float(shape.layers if shape else DEFAULT_CNN_LAYERS),
        live_activation_bytes_16bit=act * scale * 2.0 * LIVE_ACTIVATION_SHARE,
    )


def diffusion_workload(
    preset: str | None,
    *,
    params: float,
    flops_per_sample: float | None,
    resolution: int | None,
    steps: int | None,
    guidance: bool,
) -> Workload:
    """A diffusion image at ``resolution`` (default: the pipeline's) and ``steps``."""
    pipe = DIFFUSION_PIPELINES.get(preset or "")
    if pipe is None:
        if flops_per_sample is None:
            raise ConfigError(
                "a diffusion model needs its FLOPs",
                key_path="model.flops_per_sample",
                hint="or use a preset: stable-diffusion, stable-diffusion-2, stable-diffusion-xl",
            )
        if resolution is not None:
            raise ConfigError(
                "the model's native resolution is unknown, so resolution cannot scale its FLOPs",
                key_path="inference.resolution",
                hint="use a Stable Diffusion preset or leave resolution out",
            )
        linear, attention, text, vae, n_steps = flops_per_sample / 3.0, 0.0, 0.0, 0.0, 50
        unet_params, kernels = params, 300.0
        scale = 1.0
    else:
        scale = (resolution / pipe.resolution) ** 2 if resolution else 1.0
        linear = pipe.unet_linear_flops * scale
        attention = pipe.unet_attention_flops * scale * scale
        text, vae, n_steps = pipe.text_flops, pipe.vae_decode_flops * scale, pipe.default_steps
        # fused layers: an eager forward launches ~3 kernels per layer (ENGINES["pytorch"])
        unet_params, kernels = pipe.unet_params + pipe.other_params, pipe.unet_kernels / 3.0
    forward = linear + attention
    act = linear * DIFFUSION_ELEMENTS_PER_FLOP
    return Workload(
        kind="diffusion",
        forward_flops=forward,
        quantisable_share=linear / forward if forward else 1.0,
        params=unet_params,
        activation_elements=act,
        kernels=float(kernels),
        steps=int(steps if steps is not None else n_steps),
        guidance=guidance,
        text_flops=text,
        vae_flops=vae,
        # onnx-tool: the UNet's live set is 2,232 MB fp32 for a batch of 2 latents at 512 px
        live_activation_bytes_16bit=558e6 * scale,
    )


def default_max_batch(kind: str, serving: bool) -> int:
    """The engine's maximum batch when the workload gives none: a CNN service 32 (U: Triton
    model configs commonly set max_batch_size 8-128), a CNN batch job 256 (MLPerf offline engines
    run 256-2048), diffusion 1 image per call online, 8 offline (U)."""
    if kind == "diffusion":
        return 1 if serving else 8
    return 32 if serving else 256


# -- published measurements (benchmarks/serving_accuracy.py) ---------------------------------------


def predict_measurement(row: dict[str, object]) -> dict[str, float] | None:
    """The model's figures for one row of ``benchmarks/data/serving_measurements.yaml`` (kind
    vision or diffusion), for the same keys as its ``measured``; None when it cannot predict.

    A row's batch is used when given; otherwise single-stream is batch 1 and offline runs the
    planner's default offline batch.  Several GPUs are replicas (throughput x GPUs).  The Jetson's
    DLAs are counted only where the row says the submission used them (``dla: true``, or its note
    names them).
    """
    from planner.gpu_specs import resolve_gpu
    from planner.workload.models import get_preset

    kind = row.get("kind")
    if kind not in ("vision", "diffusion"):
        return None
    measured = row.get("measured")
    if not isinstance(measured, dict):
        return None
    model = str(row.get("model", ""))
    preset = get_preset(model)
    name = preset.name if preset else model
    try:
        gpu = resolve_gpu(str(row.get("gpu")))
    except ConfigError:
        return None
    gpus = int(str(row.get("gpus", 1)))
    precision = vision_precision(str(row.get("precision", "fp16")))
    eng = engine(str(row.get("framework", "auto")))
    res = row.get("resolution")
    resolution = int(str(res)) if res is not None else None
    try:
        if kind == "vision":
            if preset is None and name not in CNN_SHAPES:
                return None
            work = cnn_workload(
                name,
                params=preset.params if preset else 0.0,
                flops_per_sample=preset.flops_per_sample if preset else None,
                activation_gib_per_sample=preset.activation_gib_per_sample if preset else None,
                resolution=resolution,
            )
        else:
            if name not in DIFFUSION_PIPELINES:
                return None
            steps = row.get("steps")
            work = diffusion_workload(
                name,
                params=0.0,
                flops_per_sample=None,
                resolution=resolution,
                steps=int(str(steps)) if steps is not None else None,
                guidance=True,
            )
    except ConfigError:
        return None
    note = str(row.get("note", ""))
    replica = VisionReplica(
        work, gpu, eng, precision, use_dla=bool(row.get("dla")) or "DLA" in note
    )
    scenario = str(row.get("scenario", ""))
    b = row.get("batch")
    batch = (
        int(str(b))
        if b is not None
        else (1 if scenario == "single-stream" else default_max_batch(work.kind, False))
    )
    out: dict[str, float] = {}
    for key in measured:
        if key in ("samples_per_s", "images_per_s", "queries_per_s"):
            out[key] = replica.images_per_second(batch) * gpus
        elif key.startswith("latency_ms_"):
            out[key] = replica.batch_seconds(batch) * 1e3
        elif key == "s_per_image":
            out[key] = replica.batch_seconds(batch) / batch
        elif key == "steps_per_s" and work.kind == "diffusion":
            out[key] = 1.0 / replica.step_seconds(batch)
    return out or None
