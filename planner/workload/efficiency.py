"""How fast the hardware runs the FLOPs: compute, memory traffic, links and failures (pure functions).

The time model is physical rather than one fitted MFU:

- **Compute**: matmul FLOPs run at ``peak x gemm_fraction`` where ``gemm_fraction`` is the share of
  the dense tensor peak that large training matmuls sustain on that GPU generation
  (:data:`GEMM_FRACTION`).  Hopper reaches a lower fraction than Ampere (llm-foundry measured MFU:
  A100 44-64%, H100 BF16 27-46%; estimation.md s1.4).
- **Memory traffic**: element-wise work (norms, activations, residuals, softmax, dropout, the logits)
  is bandwidth-bound.  Every stored activation byte is written in the forward pass, read in the
  backward pass and its gradient written: ``3 x activation bytes / memory bandwidth`` (4x under full
  recompute).  With Korthikanti's 34·s·h bytes per layer this is ~100·h bytes per token per layer
  against 72·h² matmul FLOPs, so small models (small h) and GPUs with a high FLOP:byte ratio (H100:
  295, A100: 153) lose more -- which is why GPT-2 124M reaches ~41% MFU on H100 while 7B models reach
  50%+ on A100.
- **Communication**: collective bytes over the slowest link they cross (NVLink/NVSwitch or PCIe in a
  node, the node's NICs between nodes), with NCCL bus-bandwidth efficiencies (:data:`LINK_EFFICIENCY`).
- **Optimizer step**: memory-bound, ~28 bytes touched per parameter for AdamW.
- **Stragglers**: a synchronous step waits for the slowest of n GPUs (:func:`straggler_factor`).
- **Goodput**: interruptions at the Llama 3 rate (419 in 54 days on 16,384 H100s) with checkpoints
  every Young/Daly interval ``sqrt(2·δ·MTBF)``; each interruption costs a restart plus on average
  half an interval of lost work.
"""

from __future__ import annotations

import math

from planner.hardware import GpuSpec
from planner.schema import Fabric, Interconnect

# Share of the dense tensor peak that large training matmuls (incl. fused attention) sustain.
# A100 0.55: llm-foundry 44-64% MFU, TinyLlama 56% (59% with attention FLOPs), Korthikanti 175B
#   51% incl. an 11% pipeline bubble; estimation.md s4 "A100 single node, well tuned 0.55-0.60".
# H100/H200 0.52: llm-foundry H100 BF16 27-46% MFU, estimation.md s4 "0.40-0.50 steady"; with the
#   memory-traffic term this gives llm.c GPT-2 124M's measured 41% (C2).
# B200 0.45: newer generations reach a lower fraction at launch (U, by the Hopper precedent).
# V100 0.42: NVIDIA DeepLearningExamples-era mixed precision; Megatron-LM 2019 sustained 30% with
#   older kernels (Shoeybi et al. 2019), C25 BERT on SQuAD ~25% under a fine-tuning stack.
# GeForce 0.30 and workstation 0.40 of the FP32-accumulate tensor rate: estimation.md s4 "consumer
#   cards about 0.25" after stack losses; Turing Quadro/Titan full-rate FP32 accumulate (C27).
# Inference-class datacenter cards (T4, L4, A10, A10G, L40S) 0.35: power-capped parts (70-350 W).
GEMM_FRACTION: dict[str, float] = {
    "A100": 0.55,
    "H100": 0.52,
    "H200": 0.52,
    "B200": 0.45,
    "V100": 0.42,
    "GeForce": 0.30,
    "RTX-Pro": 0.40,
    "T4": 0.35,
    "L4": 0.35,
    "A10": 0.35,
    "A10G": 0.35,
    "L40S": 0.35,
    "Jetson": 0.25,
}
DEFAULT_GEMM_FRACTION = 0.35

# Fine-tuning usually runs through eager-mode stacks (HF Trainer, torch.amp, no fused or compiled
# kernels, padding): 0.8x the pre-training throughput.  Checked against C25 (BERT on SQuAD, 1xV100).
FINETUNE_STACK_FACTOR = 0.8
# QLoRA dequantises the NF4 weights in every matmul: ~39% longer runtime than LoRA
# (S. Raschka, "Practical Tips for Finetuning LLMs Using LoRA", 2023).
QLORA_SLOWDOWN = 1.39
# Activation bytes are written (fwd), read (bwd) and their gradients written: 3 passes (4 with
# full recompute, which writes them again).
ACTIVATION_PASSES = 3.0
# Share of the HBM/GDDR bandwidth a streaming kernel reaches (STREAM-like; NVIDIA reports ~90% on
# H100 for large copies; 0.8 leaves room for imperfect fusion).
MEMORY_BW_FRACTION = 0.8
# Bytes read+written per parameter by the optimizer step (fp32 master, states, 16-bit grad in,
# 16-bit weight out): AdamW 4+4+4+2 read, 4+4+4+2 written = 28.
OPTIMIZER_TRAFFIC_BYTES: dict[str, float] = {
    "adamw": 28.0,
    "adamw-8bit": 16.0,
    "lion": 20.0,
    "sgd": 20.0,
    "adafactor": 12.0,
}

# NCCL bus bandwidth / link rate.  NVSwitch: nccl-tests all-reduce busbw ~230 of 300 GB/s per
# direction on DGX A100 and ~370 of 450 on DGX H100 (~0.8); Calculon uses 0.6 for NVLink and 0.9 for
# InfiniBand (estimation.md s1.2).  PCIe 0.7 (host bridges, no P2P on many boards).  TCP over plain
# Ethernet 0.5 (NCCL socket transport; nanoGPT: multi-node without InfiniBand "will most likely crawl").
LINK_EFFICIENCY: dict[str, float] = {
    "nvlink": 0.8,
    "pcie": 0.7,
    Fabric.INFINIBAND.value: 0.85,
    Fabric.EFA.value: 0.85,
    Fabric.GPUDIRECT_TCP.value: 0.75,
    Fabric.ROCE.value: 0.85,  # RDMA over Converged Ethernet behaves like InfiniBand for NCCL (Llama 3 RoCE)
    Fabric.ETHERNET.value: 0.5,
}
# Latency per small collective (NCCL all-reduce of a few KB): ~10 us over NVLink, ~25 us over PCIe.
COLLECTIVE_LATENCY_S: dict[str, float] = {"nvlink": 10e-6, "pcie": 25e-6}

# Node network defaults in Gbit/s per 8 GPUs when the offer does not say: InfiniBand HDR 8x200
# (DGX A100) or NDR 8x400 (DGX H100); EFA p4d 400 / p5 3,200; GCP A3 GPUDirect-TCPX 4x200; plain
# cloud Ethernet 100 (U: a typical large VM NIC).
_HOPPER_AND_NEWER = ("H100", "H200", "B200")


def default_network_gbps(gpu: GpuSpec, fabric: Fabric, gpus_per_node: int) -> float:
    """Node network bandwidth (Gbit/s) when the offer does not state it."""
    new = gpu.family in _HOPPER_AND_NEWER
    per_8 = {
        Fabric.INFINIBAND: 3200.0 if new else 1600.0,
        Fabric.EFA: 3200.0 if new else 400.0,
        Fabric.GPUDIRECT_TCP: 1600.0 if new else 800.0,
        Fabric.ETHERNET: 100.0,
    }[fabric]
    if fabric is Fabric.ETHERNET:
        return per_8
    return per_8 * max(gpus_per_node, 1) / 8.0


def pcie_gb_per_s(gpu: GpuSpec) -> float:
    """Per-direction PCIe x16 bandwidth: gen5 64, gen4 32, gen3 16 GB/s."""
    if gpu.gpu_link == "pcie":
        return gpu.gpu_link_gb_per_s
    if gpu.family in _HOPPER_AND_NEWER:
        return 64.0
    if gpu.family in ("V100", "T4") or not gpu.bf16:
        return 16.0
    return 32.0


def intra_node_link(
    gpu: GpuSpec, interconnect: Interconnect, gpus_per_node: int
) -> tuple[float, str]:
    """Effective per-GPU one-way bandwidth inside a node (bytes/s) and the link kind."""
    nvlink_capable = gpu.gpu_link in ("nvlink", "nvlink-bridge")
    bridge_only = gpu.gpu_link == "nvlink-bridge"
    nvlink = interconnect in (Interconnect.NVLINK, Interconnect.NVSWITCH) and nvlink_capable
    # NVLink bridges join pairs only: a ring over more GPUs crosses PCIe.
    if nvlink and not (bridge_only and gpus_per_node > 2):
        # gpu_link_gb_per_s is the bidirectional aggregate; collectives use one direction.
        return gpu.gpu_link_gb_per_s / 2.0 * 1e9 * LINK_EFFICIENCY["nvlink"], "nvlink"
    return pcie_gb_per_s(gpu) * 1e9 * LINK_EFFICIENCY["pcie"], "pcie"


def node_network_bytes_per_s(
    gpu: GpuSpec, fabric: Fabric, network_gbps: float | None, gpus_per_node: int
) -> float:
    """Effective bytes/s a node can send to other nodes."""
    gbps = network_gbps if network_gbps else default_network_gbps(gpu, fabric, gpus_per_node)
    return gbps / 8.0 * 1e9 * LINK_EFFICIENCY[fabric.value]


def gemm_fraction(gpu: GpuSpec) -> float:
    """Share of the dense peak that big training matmuls sustain on ``gpu``."""
    return GEMM_FRACTION.get(gpu.family, GEMM_FRACTION.get(gpu.name, DEFAULT_GEMM_FRACTION))


def supports_flash_attention(gpu: GpuSpec) -> bool:
    """FlashAttention-2 needs Ampere or newer (Dao 2023 README); BF16 support marks the same GPUs."""
    return gpu.bf16 and gpu.family != "Jetson"


# Synchronous training waits for the slowest GPU every step.  GPUs of one model differ persistently
# in speed (Sinha et al., SC'22 "Not All GPUs Are Created Equal": several % spread across large
# clusters); with a per-GPU spread of sigma the expected slowest of n is ~ 1 + sigma·sqrt(2·ln n)
# (extreme-value approximation for a normal sample).  sigma = 2% (U).
STRAGGLER_SIGMA = 0.02


def straggler_factor(gpu_count: int) -> float:
    """Step-time multiplier from waiting for the slowest of ``gpu_count`` GPUs."""
    if gpu_count <= 1:
        return 1.0
    return 1.0 + STRAGGLER_SIGMA * math.sqrt(2.0 * math.log(gpu_count))


# -- goodput -----------------------------------------------------------------------------------------

# Llama 3 (Dubey et al. 2024, s3.3.4): 419 unexpected interruptions in 54 days on 16,384 H100s.
INTERRUPTIONS_PER_GPU_HOUR = 419.0 / (16384 * 54 * 24)
# Time to detect a failure, reschedule and reload a checkpoint.  Llama 3 reports >90% effective
# training time with 419 interruptions in 54 days: at most 0.1 x 54 x 24 / 419 = 0.31 h lost per
# interruption, lost work included (D); we charge 0.25 h plus half a checkpoint interval.
RESTART_HOURS = 0.25
# Checkpoint write bandwidth per node to shared storage (U: a few GB/s per node on parallel file
# systems and object stores).
CHECKPOINT_WRITE_BYTES_PER_S_PER_NODE = 2e9


def failure_overhead(
    gpu_count: int, steady_hours: float, checkpoint_bytes: float, nodes: int
) -> float:
    """Extra fraction of wall-clock lost to checkpointing and interruptions (Young/Daly).

    MTBF of the job ``M = 1 / (rate x GPUs)``; checkpoint write time ``δ``; interval
    ``τ = sqrt(2·δ·M)`` (Young 1974); waste = δ/τ + (τ/2 + restart) / M.  A job shorter than τ
    writes no intermediate checkpoint and loses on average half its length per interruption.
    """
    if steady_hours <= 0:
        return 0.0
    mtbf_h = 1.0 / (INTERRUPTIONS_PER_GPU_HOUR * max(gpu_count, 1))
    delta_h = checkpoint_bytes / (CHECKPOINT_WRITE_BYTES_PER_S_PER_NODE * max(nodes, 1)) / 3600.0
    tau_h = math.sqrt(2.0 * delta_h * mtbf_h)
    if steady_hours <= tau_h:
        return (steady_hours / 2.0 + RESTART_HOURS) / mtbf_h
    return delta_h / tau_h + (tau_h / 2.0 + RESTART_HOURS) / mtbf_h
