"""How fast the hardware runs the FLOPs: compute, memory traffic, links and failures (pure functions).

The time model is physical rather than one fitted MFU:

- **Compute**: matmul FLOPs run at ``peak x gemm_fraction`` where ``gemm_fraction`` is the share of
  the dense tensor peak that training matmuls of a reference shape sustain on that GPU generation
  (:data:`GEMM_FRACTION`, :data:`REFERENCE_HIDDEN`).  Transformer training moves from it with the
  matmuls' shape (:func:`matmul_fraction`): the result tiles each matmul writes, ``(1/M + 1/K +
  1/N) / 3`` bytes per FLOP, are charged at the memory bandwidth, so thin matmuls (small hidden size, wide tensor-parallel splits, short
  micro-batches) run further below peak and very large ones closer to it.
- **Attention core**: a causal decoder's fused (flash) kernel skips the masked half of the score
  FLOPs; its forward pass runs at the matmul rate under cuDNN fused attention or FlashAttention-3
  and at about half of it under FlashAttention-2 on Hopper and newer, and its backward pass
  recomputes the scores (2.5x the forward's FLOPs, not 2x) at 0.87 of the forward's rate
  (:func:`attention_time_factor`).
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
  half an interval of lost work.  A job of a few GPU-days and longer loses at least 0.17 of its
  steps' time to those and the pauses and slow stretches a steady rate leaves out
  (:func:`run_time_losses`: Llama 3 405B's steady rate against its whole run's).
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from importlib import resources
from typing import Any

from planner.gpu_specs import GpuSpec
from planner.schema import Fabric, Interconnect
from planner.workload.memory import LOW_BIT_RECIPES

# Share of the dense tensor peak that large training matmuls (incl. fused attention) sustain.
# A100 0.65: where the steady A100 calibration rows meet their measured rates (median 1.03x):
#   MosaicML's llm-foundry benchmark table (C40a-C41c: MPT 1B-70B under FSDP, 59-64% MFU on one
#   node without activation checkpointing, HFU 65-74% with it), TinyLlama's 24k tokens/s a GPU (C7,
#   56% MFU) and Megatron's GPT-3 175B iteration (C21s, C21f).  The same table's H100 rows (C42a-d,
#   40-46% MFU, the same stack and shapes) meet theirs at the H100's 0.52: the A100 holds a larger
#   share of its lower peak (a big bf16 PyTorch matmul: A100 SXM4 80GB 258.7-264.5 of 312 TFLOPS,
#   0.83-0.85, against the H100 SXM's 0.80; zzc0721/torch-performance-test-data database.md), and
#   a training step's smaller matmuls, between other kernels, keep it nearer that share than they
#   keep the H100, whose tensor cores are three times as fast against the same launch gaps and
#   memory traffic (U: how the two causes split is not measured).  It had been 0.55, held there by whole runs (Pythia, MPT-7B, Llama 2) whose hours also
#   hold the pauses a steady rate leaves out; those now come from run_time_losses (below).
# H100/H200 0.52: llm-foundry H100 BF16 27-46% MFU, estimation.md s4 "0.40-0.50 steady" (llm.c's
#   hand-fused GPT-2 124M runs 1.25x faster than that: its own stack factor, frameworks.yaml).
# B200 0.52 (B300, GB200 and GB300 too, by family): MLPerf Training v5.1 Llama 3.1 8B pre-training
#   on one DGX B200 (calibration row C37; mlcommons/training_results_v5.1 University-of-Florida/results/
#   hpg.dgxb200x8.n1/llama31_8b: NeMo 25.09, fp8 with current scaling, CUDA graphs, DP8, micro-batch
#   2 of 8,192 tokens, 0.5445 s a 16-sequence step) meets the estimate at 0.52, the Hopper figure.
#   It had been 0.45, "newer generations reach a lower fraction at launch" (U), 1.15x slow there;
#   the other Blackwell rows, held out, were 1.03-1.28x slow at 0.45 but one (GPT-OSS, 0.80).
# V100 0.42: NVIDIA DeepLearningExamples-era mixed precision; Megatron-LM 2019 sustained 30% with
#   older kernels (Shoeybi et al. 2019), C25 BERT on SQuAD ~25% under a fine-tuning stack.
# GeForce 0.62 of the FP32-accumulate tensor rate, at Llama-size matmuls (reference hidden 4,096):
#   the Hopper parts' 0.52 raised by the larger share of the catalog peak a GeForce card reaches in
#   a large bf16 PyTorch matmul, its clock under load running past the datasheet's boost -- RTX 4090
#   162-173 of 165.2 TFLOPS, RTX 3090 76.3-76.7 of 71, against the H100 SXM's 784-789 of 989.4 with
#   the same script (zzc0721/torch-performance-test-data database.md @078586871): ~1.0 against
#   0.80, 0.65 by that ratio alone.  0.62 is where calibration row C32 lands (torchtune, Llama 2 7B
#   full fine-tune on four RTX 4090s with FSDP over PCIe, 4 x 2,048 tokens a step, full recompute,
#   1,388 tokens/s per GPU: 0.97; C31, the same on one GPU, whose step is mostly its paged
#   optimizer's PCIe traffic, 0.85).  It had been 0.52, the Hopper figure, set from those two rows
#   alone (C32 1.14x slow there, C31 0.93); 0.62 took 11 of the 15 GeForce rows closer -- Answer.AI's
#   dual-RTX 4090 LoRA and QLoRA runs, the one GPU-bound measure of these cards (DDP, adapters' few
#   gradients), from 1.55-1.65x slow to 1.35-1.43x, the RTX 3090 GPT-2 runs from 1.12-1.18 to
#   1.06-1.10 -- and one further (ResNet-9 on an RTX 2080 Ti, 0.98 to 0.85).  Before 0.52 it was
#   0.30 at DeBERTa's hidden 1,536, a planning figure never checked against a GeForce run.
#   Workstation 0.40: Turing Quadro/Titan full-rate FP32 accumulate (C27).
# Inference-class datacenter cards (T4, L4, A10, A2) 0.35: power-capped parts (40-150 W; T4: ~24 of
#   its 65 TFLOPS on a continuous fp16 GEMM at its 70 W cap, NVIDIA developer forum "About GPU peak
#   performance", 2023), a planning figure for the group.
# A10G 0.52, the Hopper share: it reaches its 70 TFLOPS (half-rate FP32 accumulate, the catalog's
#   peak) in a large bf16 PyTorch matmul -- 69.47 (zzc0721/torch-performance-test-data issue #126)
#   -- as the GeForce cards reach theirs with the same script (RTX 3090 76.6 of 71, RTX 4090 160-173
#   of 165.2, an RTX 3060 Laptop 25.9 against the desktop card's 25.4; database.md @078586871),
#   where the 0.35 of the group above took a power cap to hold it far below; its 150 W are taken to
#   hold it under GeForce's 0.62 through a long run (U: no sustained measurement).  At 0.35 the
#   held-out A10G fine-tunes (H105, H106, H112, H304, H355-H357) came out 1.00-1.61x slow, median
#   1.37; at 0.52, 0.77-1.18.  The T4 itself, whose sustained rate is published, trains at that
#   rate beside the uncapped Turing's time beyond its GEMMs (precision_peak, UNCAPPED_FAMILY below).
# L40S 0.52, the Hopper share: it is the RTX 4090's AD102 chip (142 of its SMs enabled
#   against the 4090's 128, both 2,520 MHz boost; NVIDIA L40S datasheet: 362.05 dense FP16/BF16
#   tensor TFLOPS, "733*" with sparsity, FP8 733 dense / 1,466 sparse, 350 W), running the same
#   kernels at the same per-SM rate (362 / (142 x 2.49 GHz) = 1,024 FLOPs a clock per SM, the 4090's
#   330.3 FP16-accumulate TFLOPS / (128 x 2.52 GHz)).  It was 0.35 as a "power-capped" card, which
#   no L40S measurement supported: TensorRT-LLM's first-token latency of a 2,048-token Llama 2 7B
#   prompt on one L40S, 73 ms (FP8; TensorRT-LLM performance.md, v0.5), is 2.9e13 FLOPs at 397
#   TFLOPS, 0.54 of the FP8 dense peak before attention and the step overhead: more than 0.35
#   allows, and more than the whole peak were the datasheet's first figures (733 FP8) the sparse
#   ones.  350 W for 142 SMs is less power per SM than the 4090's 450 W for 128: a large bf16
#   PyTorch matmul on an L40S reaches 269.2 of its 362 TFLOPS, 0.74, where the H100 SXM reaches 0.80
#   of its own with the same script (zzc0721/torch-performance-test-data database.md @078586871),
#   which would put the L40S at 0.52 x 0.74 / 0.80 = 0.48; but that first-token latency needs at
#   least 0.52 of the fp8 peak, and at 0.48 it is estimated 1.31x slow (1.22x at 0.52) while the
#   held-out L40S training rows move by 2-5% only: 0.52 stays.
# RTX-Pro-Blackwell 0.52, the Hopper share by the L40S's argument: the RTX PRO 6000
#   Blackwell is the RTX 5090's GB202 chip (188 SMs enabled against the 5090's 170) at the same
#   per-SM tensor rate with FP32 accumulate at full rate (500 dense FP16 TFLOPS, 4,000 sparse FP4
#   "AI TOPS" / 8, over 188 x 2.617 GHz = 1,016 FLOPs a clock per SM; the 5090's 3,352 sparse FP4
#   TOPS / 8 = 419 FP16-accumulate TFLOPS over 170 x 2.407 GHz = 1,024).  It had been in the
#   RTX-Pro family, whose 0.40 was measured on Turing Quadro cards (C27) and its 1,536 reference
#   hidden size on DeBERTa: the held-out Llama 3.1 8B LoRA runs on one and two RTX PRO 6000 Server
#   Editions (H20, H21) came out 1.20x and 1.18x slow with it, and 1.00x and 0.99x with 0.52; the
#   TensorRT-LLM 1.0 NVFP4 serving rows on one RTX PRO 6000 (held out) move the same way.  A large
#   bf16 PyTorch matmul reaches 409.4 (Server Edition) and 418.0 (Workstation) of its 500 TFLOPS,
#   0.82-0.84, about the H100's 0.80 with the same script (zzc0721/torch-performance-test-data).
# RTX-Pro-Ampere 0.52, the H100's figure: the RTX A6000 reaches the same share of its full-rate
#   FP32-accumulate peak in a large 16-bit GEMM as the H100 SXM does of its own, and the other GA102
#   workstation cards (RTX A5000, A4500 and the A40, at the same ~3.6 W an SM) are taken to as well
#   (U: unmeasured) -- PyTorch matmuls measured with one script across cards
#   (zzc0721/torch-performance-test-data database.md @078586871: RTX A6000 123.3 bf16 TFLOPS of
#   154.8, 0.80; H100 80GB HBM3 789.2 and 783.7 of 989.4, 0.80; H200 790.3, 0.80) -- so their
#   training matmuls are taken to reach the H100's share of it.  They had been in the RTX-Pro
#   family, whose 0.40 was measured on Turing Quadro cards (C27): the held-out RTX A5000 runs (H336
#   fsdp_qlora, H156 MLPerf ResNet-50) came out 1.19x and 1.26x slow with it, 0.96x and 1.09x with
#   0.52.  The RTX A4000 (GA104 at 140 W, less power an SM) and the Ada workstation cards (RTX 6000
#   Ada at 300 W for 142 SMs, below the 350 W L40S's 0.74 of peak in the same table) stay RTX-Pro.
# Parts cut from a family's die run its kernels and take its figure (gpus.yaml, family): A800 and
#   A30 the A100's, H800 and H20 the H100's, GB200 the B200's (GB300 the B300's, itself in the B200
#   family), L40 and L20 the L40S's (of their half-rate peaks, as GeForce), TITAN V the V100's, RTX
#   A4000 and RTX 5000 Ada RTX-Pro's, MI210 MI200's.
# Boards without tensor cores -- Pascal (P100, P4, P40), Kepler (K80), Maxwell (M60) -- have no
#   measured fraction: DEFAULT_GEMM_FRACTION of the rate their 16-bit matmuls run at (gpus.yaml);
#   the Pascal GeForce cards (GTX 1080 Ti, TITAN Xp) take GeForce's, as the TU116 GTX 1660 does.
# MI200 (AMD CDNA2: MI250, MI250X) 0.40: Megatron-DeepSpeed on Frontier's MI250X reached 38.38% MFU
#   on a 22B GPT (36.14% at 175B, 31.96% at 1T; Dash et al. 2023, "Optimizing Distributed Training
#   on Frontier for Large Language Models", arXiv 2312.12705, per graphics compute die against its
#   191.5 TFLOPS).  That MFU includes the run's communication and pipeline bubble, so the matmuls'
#   own share is at least 0.38; 0.40 is the rest (U).
# MI300 (AMD CDNA3: MI300X, MI325X) 0.36: AMD's MLPerf Training v5.1 Llama 2 70B LoRA on one node
#   of 8 MI300X (calibration row C36; mlcommons/training_results_v5.1 AMD/results/
#   MI300X_EPYC_9575F_pytorch_llama2_70b/llama2_70b_lora/result_0.txt): NeMo over Megatron-LM and
#   ROCm Transformer Engine with hipBLASLt, fp8 linear layers (delayed scaling), bf16 CK fused
#   attention, DP8, micro-batch 1 of 8,192 tokens, 21 of 80 layers recomputed, 2.1157 samples/s:
#   2,166 tokens/s per GPU, 4 x 69.0B frozen-weight FLOPs a token (forward and input-gradient
#   passes) = 598 TFLOP/s of linear layers, 0.23 of the 2,615 fp8 dense TFLOPS before attention,
#   recompute and the bandwidth-bound work.  0.36 is where the estimate of that step -- those
#   matmuls, the bf16 attention, the 22-layer block recompute the search picks, the memory traffic
#   and fp8 casts -- meets the measured 1,452 s (0.35, the unmeasured default before: 1.03x slow;
#   0.37: 0.98x); one node with only the adapters' gradients to all-reduce, so communication and
#   bubbles take almost none of it.  The same benchmark ran 2.1557 samples/s on 8 H100 (H17a): the
#   MI300X about matches the H100 with 1.32x its dense peak.  The MI325X (the same die at 1,000 W
#   against 750 W, HBM3e) ran it 1.34x faster than the MI300X, without the recompute (H162, 1.19x
#   slow here with the family figure alone): the estimate puts 1.13x between the two (recompute and
#   bandwidth); the rest is the MI300X's 750 W limit holding its clock lower under matmuls than the
#   MI325X's 1,000 W do -- AMD's measured large-GEMM rates put the MI325X 1.19x ahead at the same
#   datasheet peak (SUSTAINED_GEMM_RELATIVE below; H162 1.01x with it).
# MI350 (AMD CDNA4: MI350X, MI355X) 0.47: AMD's MLPerf Training v5.1 Llama 2 70B LoRA on one node
#   of 8 MI355X (calibration row C43; mlcommons/training_results_v5.1 AMD/results/
#   MI355X_EPYC_9575F_pytorch/llama2_70b_lora/result_0.txt): C36's benchmark, stack and recipe
#   (fp8 with delayed scaling, not CDNA4's MXFP8 or MXFP4), without recompute, 5.877 samples/s.
#   0.47 is where the estimate of that step meets the measured 522.7 s (1.01x; the unmeasured
#   default 0.35 had it 1.34x slow): the MI355X ran it 2.78x the MI300X against 1.92x the fp8
#   dense peak, its 1,400 W holding its 2.4 GHz under matmuls where the MI300X's 750 W drop to
#   ~1.2 GHz (the MAF measurement under SUSTAINED_GEMM_RELATIVE).  Checked on held-out rows: the
#   1,000 W MI350X on the same benchmark (H170) and Llama 3.1 8B pre-training on both parts
#   (H171, H172), none of them used to set it.
GEMM_FRACTION: dict[str, float] = {
    "A100": 0.65,
    "H100": 0.52,
    "H200": 0.52,  # the H100 SXM's figure: same SMs and clocks (CALIBRATION_OPS_PER_BYTE)
    "B200": 0.52,  # calibration row C37 (above)
    "V100": 0.42,
    "GeForce": 0.62,
    "RTX-Pro": 0.40,
    "RTX-Pro-Ampere": 0.52,  # GA102 workstation cards: the H100's share of a big GEMM (above)
    "T4": 0.35,
    "L4": 0.35,
    "A10": 0.35,
    "A10G": 0.52,  # reaches its half-rate peak in a big matmul, as GeForce does (above)
    "RTX-Pro-Blackwell": 0.52,  # GB202, the RTX 5090's chip (above)
    "A2": 0.35,  # GA107 at 40-60 W: an inference-class part, as the T4
    "L40S": 0.52,  # the AD102 chip of the RTX 4090 (GeForce)
    "Jetson": 0.25,
    "MI200": 0.40,
    "MI300": 0.36,
    "MI350": 0.47,  # calibration row C43 (above)
}
# Families without a measurement, U.
DEFAULT_GEMM_FRACTION = 0.35

# A part that sustains a higher clock under dense matmuls than the part its family's fraction was
# measured on reaches that much more of the same peak: its figure is the family's times the ratio of
# the two parts' measured large-GEMM rates (same dies, same kernels; only the power limit differs).
# MI325X over MI300X (the MI300 calibration part, C36): AMD's Max-Achievable FLOPs, hipBLASLt on a
# 4096 x 4864 x 32896 GEMM, are 843 BF16 TFLOPS at a median 1,447 MHz on the 1,000 W MI325X against
# 708 at 1,207 MHz on the 750 W MI300X (FP8 1,519 against 1,273; FP16 794 against 654): "the power
# management system reduces the clock speed when running dense tensor-core logic", and the MI325X's
# 1,000 W hold ~20% more of it (S; AMD ROCm blog "Measuring Max-Achievable FLOPs -- Part 2", 2025,
# Table 1, github.com/ROCm/rocm-blogs blogs/software-tools-optimization/
# measuring-max-achievable-flops-part2/README.md, commit 8e011952).  843 / 708 = 1.19 (fp8 1.19).
SUSTAINED_GEMM_RELATIVE: dict[str, float] = {
    "MI325X": 843.0 / 708.0,
}
# The public measurement behind each SUSTAINED_GEMM_RELATIVE entry, as an estimate names it.
SUSTAINED_GEMM_SOURCE: dict[str, str] = {
    "MI325X": (
        "AMD's measured Max-Achievable FLOPs, 843 against the MI300X's 708 BF16 TFLOPS at the same "
        "peak (ROCm blog 'Measuring Max-Achievable FLOPs - Part 2', Table 1)"
    ),
}

# An eager stack's host dispatch time per layer (frameworks.yaml, eager_host_ms_per_layer) was
# measured on BERT layers.  A Llama-style layer (a gated MLP, RMSNorm and rotary embeddings run as
# separate operations) launches about a quarter more kernels: 155 against 123 per layer and step in
# the same measurement (12 layers of hidden size 64 on one H100 machine, PyTorch 2.11 and
# transformers 5.17: Llama's host-bound step 45.4 ms, BERT's 37.1 ms).
GATED_LAYER_HOST_FACTOR = 1.25
# Each linear layer PEFT adapts with LoRA adds its dropout, the A and B matmuls, the scaling and the
# sum, forward and backward: about 22 kernels, 0.42 ms a module and micro-batch there, 0.135 of a
# BERT layer's dispatch (a Llama-2-7B shape at 1 x 512 tokens, host-bound with the GPU busy 43 and
# 61 ms: 174.6 ms a step with q and v adapted, 241.6 ms with all seven linears; 67 ms over 32
# layers and 5 more modules).  Modules per layer by ``training.lora_targets``: :func:`lora_modules`.
LORA_MODULE_HOST_SHARE = 0.135


def lora_modules(targets: str, *, fused_qkv: bool, gated: bool) -> int:
    """The linear layers of one transformer layer PEFT adapts for ``targets``: the query, key and
    value projections (one where the model fuses them, GPT-2's c_attn), the attention output, and
    the MLP's (gate, up and down; gate-and-up and down where fused; a plain MLP's two).  Llama's
    separate projections give 7, 4 and 2 (all-linear, attention, qv); GPT-2's 4, 2 and 1 (its
    c_attn holds q and v); BERT's 6, 4 and 2."""
    qkv = 1 if fused_qkv else 3
    attention = qkv + 1
    if targets == "attention":
        return attention
    if targets == "qv":
        return 1 if fused_qkv else 2
    mlp = (2 if fused_qkv else 3) if gated else 2
    return attention + mlp


# QLoRA keeps the frozen linear weights in 4-bit NF4 and multiplies by a 16-bit copy it makes on the
# fly: bitsandbytes' MatMul4Bit dequantises the whole weight (``dequantize_4bit``) before the
# forward matmul and again in the backward pass for the input gradient (torchao's NF4 linear
# likewise), so every micro-batch reads each quantised weight's 4.127 bits and writes its 2-byte
# copy twice, three times where the layer's forward pass is recomputed.  The copy's read by the
# matmul is what a 16-bit LoRA layer reads anyway.  A cost per micro-batch, whatever its tokens: on a
# 7B model at one 512-token sequence on an A100 it is ~25% of the step, in line with the ~39% longer
# runtime of QLoRA than LoRA measured there (S. Raschka, "Practical Tips for Finetuning LLMs Using
# LoRA", 2023), and on a 300 GB/s L4 it weighs more.
QLORA_DEQUANT_WRITE_BYTES_PER_PARAM = 2.0
QLORA_DEQUANT_PASSES = 2.0  # forward and the backward input gradient; a recomputed forward adds one
# Each dequantisation is a chain of kernels the next matmul waits on, launched from Python between
# the host's other dispatches (bitsandbytes 0.41.1 functional.dequantize_4bit: an allocation, device
# switches and a ctypes launch per call; MatMul4Bit forward and backward), and it adds to the
# micro-batch even where the host's dispatch is the longer: LitGPT's QLoRA runs at one 130-token
# sample on an A100 40GB, host-bound, take 9, 35, 79 and 191 ms an iteration longer than its LoRA
# runs of phi-1.5, StableLM 3B, Llama 2 7B and 13B (LitGPT tutorials/resource-tables.md @4839345a:
# lit-gpt 8641822, PyTorch 2.1.0, bitsandbytes 0.41.1), growing with the weights dequantised (about
# 14-18 ms per billion), not with the calls (strategy._cost).
# A stack that quantises its weights from fp16 dequantises them to fp16 and casts the copy to the
# bf16 it computes in, a further read and write of 2 bytes a weight per dequantisation: Lightning
# Fabric's BitsandbytesPrecision quantises ``weight.to(dtype=torch.half)`` (lightning @71aed751,
# fabric/plugins/precision/bitsandbytes.py, _quantize_weight), bitsandbytes 0.41.1 keeps that dtype
# in the quantisation state and returns it from dequantize_4bit, and MatMul4Bit casts it with
# ``.to(A.dtype)``.
QLORA_DEQUANT_CAST_BYTES_PER_PARAM = 4.0
QLORA_FP16_QUANTISING_STACKS = frozenset({"lightning"})
# Activation bytes are written (fwd), read (bwd) and their gradients written: 3 passes (4 with
# full recompute, which writes them again).
ACTIVATION_PASSES = 3.0
# Share of the HBM/GDDR bandwidth a streaming kernel reaches (STREAM-like; NVIDIA reports ~90% on
# H100 for large copies; 0.8 leaves room for imperfect fusion).
MEMORY_BW_FRACTION = 0.8


# -- an eager stack's elementwise traffic -----------------------------------------------------------
# The activation passes above are what a fused stack streams: Megatron Core and Transformer Engine
# run each layer's norm, bias-dropout-add, SwiGLU, rotary embedding and scale-mask-softmax as one
# kernel each, forward and backward, and the calibration runs were made on such stacks (or compiled
# ones, whose generated kernels fuse the same chains).  An eager PyTorch stack (frameworks.yaml
# ``fused_layers: false``: Hugging Face's modules, torchtune's, eager FSDP and DeepSpeed scripts)
# launches every operation of those chains as a kernel of its own, and each reads its inputs from
# HBM and writes its output back: the same values cross the memory bus several times.  What follows
# counts, per element, the bytes those extra kernels move beyond the fused kernel's one read and one
# write (``e`` the activation width in bytes: 2 in 16-bit recipes, 4 in fp32), forward and
# backward, from the operations the eager modules run (transformers' BertSelfAttention,
# GPT2Attention, LlamaRMSNorm, apply_rotary_pos_emb and LlamaMLP; PEFT's LoRA Linear; autograd's
# backward of each operation):
#
# - the attention scores where no fused attention kernel runs: the scale (``/ sqrt(d)``) and the mask
#   as two kernels before the softmax, each reading and writing every score: 4e forward per score
#   element; backward only the scale's kernel, 2e (an added mask's gradient passes through without a
#   kernel; GPT-2's ``torch.where`` would add one, U);
# - dropout before each of the two residual adds: the dropout's output is written and read again by
#   the add, 2e forward per hidden element and site; its backward is one kernel either way (a fused
#   bias-dropout-add has the same), so nothing extra;
# - an eager RMSNorm (``x.to(float32)``, ``pow(2)``, ``mean``, ``x * rsqrt``, ``.to(dtype)``,
#   ``weight *``): fp32 intermediates of 4 bytes; 28 + 2e bytes forward and 56 + 3e backward
#   (the fp32 upcast and its backward cast are no-ops in an fp32 run: 4 + e less each way);
# - the rotary embedding of the queries and keys (``q * cos``, ``rotate_half``'s negation and
#   concatenation, ``* sin``, the sum): 8e each way per query and key element;
# - a gated MLP's SiLU and product as two kernels (``act(gate(x)) * up(x)``): 2e forward and 3e
#   backward per element of its width;
# - a LoRA-adapted linear layer (PEFT: the B matmul's output, the scaling, the sum with the frozen
#   layer's output): 6e forward and 4e backward per element of the layer's output width.
#
# A layer's plain GeLU (the bias rides in the addmm), its LayerNorm (one kernel in eager PyTorch
# too) and its head split and merge cost the same either way.  Rotary embeddings are counted with
# the gated (Llama-style) layers, as the memory model counts their norms.  What an eager layer also
# *stores* beyond a fused one (the norms' fp32 inputs, the SwiGLU's intermediate values) is already
# streamed by the activation passes, so :func:`eager_traffic` takes ``stored_extra`` off its count.
EAGER_SCORE_BYTES_PER_ELEMENT = (4.0, 2.0)  # x e, forward, backward
# Under eager torch.autocast over fp32 weights (frameworks.yaml ``autocast``) the score chain runs
# partly in fp32: the mask is built in the fp32 model's dtype, so the masked scores come out fp32;
# ``softmax`` is on autocast's fp32 list; an encoder's attention dropout (transformers'
# BertSelfAttention, its ViT and RoBERTa kin) then keeps the fp32 type, on no autocast list itself,
# and the value matmul casts the probabilities back to 16 bits (a kernel of its own).  Per score
# element, against the 16-bit chain above (the mask add, softmax, dropout and no cast), the kernels
# move:
#   forward: the mask add writes 4 (+2), softmax reads 4 (+2) and writes 4 (+2), dropout reads and
#     writes 4 (+2, +2), the cast reads 4 and writes 2 (+6): +16 with dropout, +12 without;
#   backward: the cast's backward reads 2 and writes 4 (+6), dropout's reads and writes 4 (+4),
#     softmax's reads the gradient and its output in fp32 and writes fp32 (+6), and the gradient
#     reaches the 16-bit scores through a cast (reads 4, writes 2: +6): +22 with dropout, +18
#     without.
# The activation passes already stream what autocast stores beyond the 16-bit chain (memory.py:
# the fp32 softmax output and the cast, 7 bytes against 5 with the dropout mask, 6 against 2
# without: +2 or +4 per pass, one pass forward and two backward), so what is left is 16 - 2 = 14
# forward and 22 - 4 = 18 backward with dropout, 12 - 4 = 8 and 18 - 8 = 10 without.  A decoder
# casts the probabilities back before its dropout (GPT2Attention's ``attn_weights.type(
# value.dtype)``, OPT's and Llama's ``softmax(..., dtype=float32).to(dtype)``), which then runs at
# 16 bits as in the chain above: +12 forward, +18 backward, the stored bytes as with dropout (the
# fp32 softmax output, the mask, the 16-bit dropout output: 7), so 10 and 14.  Bytes per score
# element, not per e: the widths are autocast's, whatever the 16-bit type.
AUTOCAST_SCORE_BYTES_PER_ELEMENT = {  # by (dropout, the dropout in fp32)
    (True, True): (14.0, 18.0),
    (True, False): (10.0, 14.0),
    (False, False): (8.0, 10.0),
}
EAGER_DROPOUT_ADD_BYTES_PER_ELEMENT = 2.0  # x e, forward, per site (two a layer)
EAGER_RMSNORM_FORWARD = (28.0, 2.0)  # fixed bytes + x e
EAGER_RMSNORM_BACKWARD = (56.0, 3.0)
EAGER_ROTARY_BYTES_PER_ELEMENT = 8.0  # x e, each way
EAGER_SWIGLU_BYTES_PER_ELEMENT = (2.0, 3.0)  # x e, forward, backward

# An eager image model's separate activation and residual-add kernels, per value it stores
# (ModelPreset.activation_gib_per_sample, counted in 16-bit values).  Counted on ResNet-50 v1.5 at
# 224 px: its 53 convolutions write 11.1M values an image (the stem 0.80M; the four stages 4.4M,
# 3.1M, 2.15M and 0.63M; timm's "activations" figure for resnet50), of which 4.1M pass a ReLU
# after their BatchNorm and 5.5M are the 16 bottleneck blocks' outputs, which pass the residual
# add and a ReLU.  A fused stack's BatchNorm kernel applies the activation and the add itself
# (cuDNN's fused BN-add-ReLU, which MLPerf's MXNet ResNet-50 runs); eager PyTorch (torchvision,
# timm, Ultralytics, NVIDIA DeepLearningExamples) runs each as a kernel of its own:
#   forward: a ReLU reads and writes each value (2); a block output is added (two reads, a write: 3)
#   and then ReLU'd (2);
#   backward: ReLU's backward reads the gradient and the output and writes the gradient (3); the add
#   passes its gradient through.
# Forward 2 x 4.1M + 5 x 5.5M = 35.7M and backward 3 x 4.1M + 3 x 5.5M = 28.8M values moved an image,
# against the 48.3M 16-bit values (0.09 GiB) the resnet50 preset stores: 0.74 and 0.60 per stored
# value, each moved at the precision's width (efficiency.result_bytes).  Other CNNs (conv, norm,
# SiLU or ReLU, residual adds) are taken to move the same per stored value (U).
EAGER_IMAGE_VALUES_PER_STORED_VALUE = (35.7 / 48.3, 28.8 / 48.3)  # forward, backward
EAGER_LORA_BYTES_PER_ELEMENT = (6.0, 4.0)  # x e, forward, backward

# GPT-2's MLP activation, gelu_new (config.json activation_function; GPT-J, GPT-Neo, CodeGen and
# Phi name it too), is transformers' NewGELUActivation: ``0.5 * x * (1 + tanh(sqrt(2/pi) * (x +
# 0.044715 * pow(x, 3))))`` written as Python arithmetic, eight kernels where torch's GeLU is one.
# Under eager torch.autocast ``pow`` is on the float32 list (PyTorch AMP docs, "CUDA Ops that can
# autocast to float32"), so its input is cast to fp32 and every operation after it runs in fp32
# until the next matmul casts the result back.  Per element of the MLP's width, with ``e`` the
# activation width and ``a`` the chain's (4 under autocast, else e), the kernels move:
#   forward: pow (2a), the two scalings and the sum with 1 (2a each), tanh (2a), the sum with x
#     (e + 2a), 0.5·x (2e), the product (e + 2a): 14a + 4e; under autocast also the cast to fp32 and
#     the cast back (e + 4 each);
#   backward: the product's two gradients (3a and 2a + e) and autograd's cast of the one to x's
#     type, tanh's backward (3a), the scalings (2a each, two), pow's backward (its square and the
#     product: 5a), 0.5·x's (2e), and the sums of x's three gradients (3e each, two): 17a + 9e;
#     under autocast also the four casts between the two widths (a + e each);
# against one fused kernel's 2e forward and 3e backward.  It stores the tanh's output, 0.5·x and the
# sum with 1, and under autocast pow's fp32 input in place of x: 3e beyond a fused GeLU's input,
# 12 bytes under autocast (4 + 4 + 2 + 4 - 2).  Measured in this project (one H100, PyTorch 2.11,
# transformers 5.17, benchmarks/gpu_probe.py ablations): GPT-2 small at 16 x 1,024 tokens under
# bf16 autocast took 130.6 ms a step, 90.4 ms with gelu_pytorch_tanh (torch's fused tanh GeLU)
# in its place, and allocated 7.25 GB less: 176 bytes a value (the count above) over its 604M
# MLP values is 106 GB, 39.7 ms at the streamed bandwidth, and 12 bytes a value 7.25 GB.
# transformers' AccurateGELUActivation (gelu_accurate) is the same chain with a precomputed constant.

# Eager torch.autocast over an fp32 model keeps the residual stream in fp32: the embeddings are
# looked up in the fp32 table (``embedding`` is on no autocast list), each residual add sums the
# fp32 stream and a 16-bit branch into fp32 (type promotion), and ``layer_norm`` is on autocast's
# fp32 list, so a LayerNorm reads and writes fp32; an eager RMSNorm's ``.to(float32)`` and
# ``.to(input_dtype)`` are then no-ops and it runs as in an fp32 run.  Every projection that reads
# a norm's output casts it to 16 bits in a kernel of its own (autocast caches only the casts of
# leaf weights), and autograd casts each projection's 16-bit input gradient back to fp32 and sums
# the gradients of the norm's output in fp32.  Per hidden element of each of a layer's two norm
# sites, with ``a`` = 4 the stream's width, ``e`` the 16-bit one and ``c`` the projections that
# read the norm (three for BERT's or Llama's separate query, key and value, one for GPT-2's fused
# ``c_attn``, two for a gated MLP's separate gate and up projections), against the same kernels on
# a 16-bit stream:
#   forward: the residual add reads and writes ``a`` for ``e`` (+2(a - e)); the norm's input and
#     output (LayerNorm: +2(a - e); RMSNorm: fp32's count for the 16-bit one); the ``c`` casts
#     (a + e each);
#   backward: the ``c`` casts of the input gradients (e + a each); the ``c`` fp32 sums of the norm
#     output's ``c + 1`` gradients (3(a - e) each beyond 16-bit sums); the norm's backward
#     (LayerNorm: the gradient kernel's gradient in, input and gradient out and the weight and bias
#     reduction's gradient and input, 5(a - e)); the cast of the residual branch's gradient to
#     16 bits (a + e).
# Measured in this project (one H100, PyTorch 2.11, transformers 5.17, benchmarks/gpu_probe.py
# ``casts``): a BERT-base step under bf16 autocast runs 126 hidden-sized casts (10 a layer: four
# forward, four back to fp32, two residual-branch gradients; the count above) and 48 fp32 gradient
# sums (four a layer), GPT-2 small's 74 and 24 (six and two a layer with its fused c_attn).  A
# 16-bit eager layer with separate projections sums their ``c`` input gradients too (3e each
# beyond one).  The stream is fp32 where the model's own weights are (training.py: a full
# fine-tune or pre-training, and QLoRA, whose unquantised weights peft casts to fp32); LoRA over a
# 16-bit base keeps a 16-bit stream.
AUTOCAST_STREAM_BYTES = 4.0
LAYER_NORM_TENSORS = (2.0, 5.0)  # activation-width tensors a LayerNorm moves, forward, backward

ARITHMETIC_GELU = frozenset({"gelu_new", "gelu_accurate"})
ARITHMETIC_GELU_STORED_VALUES = 3.0  # x the chain's width, beyond a fused GeLU's input


def arithmetic_gelu_bytes(element_bytes: float, *, autocast: bool) -> tuple[float, float]:
    """Bytes per element of the MLP's width :data:`ARITHMETIC_GELU`'s kernels move beyond a fused
    GeLU's, (forward, backward): under ``autocast`` in an fp32 chain between 16-bit values of
    ``element_bytes``."""
    e = element_bytes
    a = 4.0 if autocast else e
    forward = 14.0 * a + 4.0 * e + (2.0 * (e + 4.0) if autocast else 0.0)
    backward = 17.0 * a + 9.0 * e + (4.0 * (a + e) if autocast else 0.0)
    return forward - 2.0 * e, backward - 3.0 * e


def arithmetic_gelu_stored_bytes(element_bytes: float, *, autocast: bool) -> float:
    """Bytes per element of the MLP's width :data:`ARITHMETIC_GELU` stores beyond a fused GeLU's
    input: three values of the chain's width, under ``autocast`` 12."""
    if autocast:
        return 4.0 + 4.0 + element_bytes + 4.0 - element_bytes
    return ARITHMETIC_GELU_STORED_VALUES * element_bytes


@dataclass(frozen=True)
class EagerTraffic:
    """Bytes per token and layer (per sample for a non-transformer: training._other_shape) an eager
    stack's separate elementwise kernels move beyond a fused stack's (the header above):
    ``forward`` and ``backward`` of the layer's hidden-sized values,
    ``score_forward`` and ``score_backward`` of its attention scores where they are materialised."""

    forward: float
    backward: float
    score_forward: float = 0.0
    score_backward: float = 0.0
    # beyond the score terms, what the chain moves under eager autocast (its fp32 softmax)
    autocast_score_forward: float = 0.0
    autocast_score_backward: float = 0.0
    # of forward and backward, the hidden-sized kernels' (the norms, dropout and the residual add),
    # which tensor parallelism without sequence parallelism runs whole on every rank
    hidden_forward: float = 0.0
    hidden_backward: float = 0.0
    # beyond forward and backward, what the layer's kernels move under eager autocast whatever
    # the attention kernel (an arithmetic GeLU's fp32 chain: ARITHMETIC_GELU)
    autocast_forward: float = 0.0
    autocast_backward: float = 0.0
    # of them, the fp32 residual stream's hidden-sized kernels (AUTOCAST_STREAM_BYTES)
    autocast_hidden_forward: float = 0.0
    autocast_hidden_backward: float = 0.0

    def per_token(
        self, *, scores: bool, recompute_share: float = 0.0, autocast: bool = False
    ) -> float:
        """Bytes per token and layer: forward and backward, the forward again for the share of the
        layers recomputed, the score terms where ``scores`` are materialised (with autocast's fp32
        chain where the layout runs eager ``autocast``)."""
        fwd, bwd = self.forward, self.backward
        if autocast:
            fwd += self.autocast_forward + self.autocast_hidden_forward
            bwd += self.autocast_backward + self.autocast_hidden_backward
        if scores:
            fwd += self.score_forward + (self.autocast_score_forward if autocast else 0.0)
            bwd += self.score_backward + (self.autocast_score_backward if autocast else 0.0)
        return fwd * (1.0 + recompute_share) + bwd


def eager_traffic(
    *,
    hidden: float,
    attention_width: float,
    kv_width: float,
    mlp_width: float,
    heads: int,
    seq: int,
    gated: bool,
    dropout: bool,
    element_bytes: float,
    lora_width: float = 0.0,
    stored_extra: float = 0.0,
    causal: bool = False,
    arithmetic_gelu: bool = False,
    attention_inputs: int = 1,
    mlp_inputs: int = 1,
    fp32_stream: bool = True,
) -> EagerTraffic:
    """The :class:`EagerTraffic` of one transformer layer: ``mlp_width`` the gated MLP's width per
    token (an MoE layer's experts per token times each expert's), ``heads x seq`` score elements
    per token, ``lora_width`` the summed output widths of the LoRA-adapted linear layers,
    ``stored_extra`` the bytes per token the eager layer stores beyond a fused one, whose write
    (forward) and read and gradient (backward) the activation passes already stream; ``causal``
    a decoder's order of the autocast score chain (:data:`AUTOCAST_SCORE_BYTES_PER_ELEMENT`);
    ``arithmetic_gelu`` a plain MLP's :data:`ARITHMETIC_GELU` over ``mlp_width``, whose stored
    values beyond a fused GeLU's ``stored_extra`` holds (under autocast, the rest here);
    ``attention_inputs`` and ``mlp_inputs`` the projections that read each norm's output,
    ``fp32_stream`` whether autocast's residual stream is fp32 (:data:`AUTOCAST_STREAM_BYTES`)."""
    e = element_bytes
    fwd = bwd = 0.0
    if dropout:
        fwd += 2 * EAGER_DROPOUT_ADD_BYTES_PER_ELEMENT * e * hidden
    if gated:
        upcast = 4.0 + e if e >= 4.0 else 0.0  # an fp32 run casts nothing
        fwd += 2 * (EAGER_RMSNORM_FORWARD[0] + EAGER_RMSNORM_FORWARD[1] * e - upcast) * hidden
        bwd += 2 * (EAGER_RMSNORM_BACKWARD[0] + EAGER_RMSNORM_BACKWARD[1] * e - upcast) * hidden
    bwd += 3 * e * (attention_inputs - 1 + mlp_inputs - 1) * hidden  # the input gradients' sums
    hidden_fwd, hidden_bwd = fwd, bwd  # the norms' and the dropout-and-add's, hidden-sized
    stream_fwd, stream_bwd = (
        autocast_stream_bytes(e, gated=gated, inputs=(attention_inputs, mlp_inputs))
        if e < 4.0 and fp32_stream  # autocast runs 16-bit recipes only
        else (0.0, 0.0)
    )
    if gated:
        rotary = EAGER_ROTARY_BYTES_PER_ELEMENT * e * (attention_width + kv_width)
        fwd += rotary
        bwd += rotary
        fwd += EAGER_SWIGLU_BYTES_PER_ELEMENT[0] * e * mlp_width
        bwd += EAGER_SWIGLU_BYTES_PER_ELEMENT[1] * e * mlp_width
    fwd += EAGER_LORA_BYTES_PER_ELEMENT[0] * e * lora_width
    bwd += EAGER_LORA_BYTES_PER_ELEMENT[1] * e * lora_width
    autocast_fwd = autocast_bwd = 0.0
    if arithmetic_gelu:
        gelu_fwd, gelu_bwd = arithmetic_gelu_bytes(e, autocast=False)
        fwd += gelu_fwd * mlp_width
        bwd += gelu_bwd * mlp_width
        if e < 4.0:  # autocast runs 16-bit recipes only
            cast_fwd, cast_bwd = arithmetic_gelu_bytes(e, autocast=True)
            # what autocast stores beyond ``stored_extra`` is streamed by the activation passes
            # (memory: TrainFacts.autocast_act_per_seq_layer)
            stored = (
                arithmetic_gelu_stored_bytes(e, autocast=True) - ARITHMETIC_GELU_STORED_VALUES * e
            )
            autocast_fwd = max((cast_fwd - gelu_fwd - stored) * mlp_width, 0.0)
            autocast_bwd = max((cast_bwd - gelu_bwd - 2.0 * stored) * mlp_width, 0.0)
    fwd = max(fwd - stored_extra, 0.0)
    bwd = max(bwd - 2.0 * stored_extra, 0.0)
    scores = e * heads * seq
    # a decoder (``causal``) casts its probabilities to 16 bits before the dropout
    chain = AUTOCAST_SCORE_BYTES_PER_ELEMENT[(dropout, dropout and not causal)]
    return EagerTraffic(
        forward=fwd,
        backward=bwd,
        score_forward=EAGER_SCORE_BYTES_PER_ELEMENT[0] * scores,
        score_backward=EAGER_SCORE_BYTES_PER_ELEMENT[1] * scores,
        autocast_score_forward=chain[0] * heads * seq,
        autocast_score_backward=chain[1] * heads * seq,
        hidden_forward=min(hidden_fwd, fwd),
        hidden_backward=min(hidden_bwd, bwd),
        autocast_forward=autocast_fwd,
        autocast_backward=autocast_bwd,
        autocast_hidden_forward=stream_fwd * hidden,
        autocast_hidden_backward=stream_bwd * hidden,
    )


def autocast_stream_bytes(
    element_bytes: float, *, gated: bool, inputs: tuple[int, ...]
) -> tuple[float, float]:
    """Bytes per hidden element an eager autocast layer's fp32 residual stream moves beyond a
    16-bit stream's, (forward, backward): one norm site per entry of ``inputs``, each read by
    that many projections (:data:`AUTOCAST_STREAM_BYTES`); ``gated`` an eager RMSNorm's
    (:data:`EAGER_RMSNORM_FORWARD`), else a LayerNorm's."""
    a, e = AUTOCAST_STREAM_BYTES, element_bytes
    if gated:  # the fp32 norm (no casts of its own) against the 16-bit one
        norm_fwd = EAGER_RMSNORM_FORWARD[1] * (a - e) - 2.0 * a
        norm_bwd = EAGER_RMSNORM_BACKWARD[1] * (a - e) - 2.0 * a
    else:
        norm_fwd, norm_bwd = (n * (a - e) for n in LAYER_NORM_TENSORS)
    fwd = bwd = 0.0
    for c in inputs:
        fwd += 2.0 * (a - e) + norm_fwd + c * (a + e)
        bwd += c * (a + e) + 3.0 * c * (a - e) + norm_bwd + (a + e)
    return fwd, bwd


# Bytes read+written per parameter by the optimizer step (fp32 master, states, 16-bit grad in,
# 16-bit weight out): AdamW 4+4+4+2 read, 4+4+4+2 written = 28.
OPTIMIZER_TRAFFIC_BYTES: dict[str, float] = {
    "adamw": 28.0,
    "adamw-8bit": 16.0,
    "paged-adamw": 28.0,
    "paged-adamw-8bit": 16.0,
    "lion": 20.0,
    "sgd": 20.0,
    "adafactor": 12.0,
}
# torch.optim.AdamW's default foreach path (_multi_tensor_adamw; frameworks.yaml
# ``fused_optimizer: false``) runs the update as eight passes over fp32 lists, each a kernel that
# reads its operands and writes its result: the decoupled weight decay (param *= 1 - lr·wd: 4 + 4),
# the first moment's lerp towards the gradient (4 + 4 read, 4 written), the second moment's scale
# (4 + 4) and its addcmul of the squared gradient (4 + 4 read, 4 written), its square root (4 + 4),
# the division by the bias correction (4 + 4), the epsilon (4 + 4) and the parameter's addcdiv
# (12 read, 4 written): 80 bytes a parameter against the fused kernel's 28 (one read and one write
# of each).  Measured in this project (one H100 80GB HBM3, PyTorch 2.11, benchmarks/gpu_probe.py):
# the foreach kernels of a step took 3.7 ms for GPT-2's 124.4M parameters and 32.3 ms for a 1.1B
# Llama, 86-88 bytes a parameter at the 2.95 TB/s its copies reached.
FOREACH_ADAMW_TRAFFIC_BYTES = 80.0
# Eager torch.autocast (planner/workload/memory.py; frameworks.yaml ``autocast``) casts every fp32
# weight a matmul reads to 16 bits once per forward pass (its cache lives one autocast region: one
# micro-batch), reading 4 bytes and writing 2, and the backward pass casts that weight's 16-bit
# gradient back to the fp32 leaf's dtype, reading 2 and writing 4 ("If the forward pass for a
# particular op has float16 inputs, the backward pass for that op will produce float16 gradients",
# PyTorch AMP docs): 12 bytes per cast parameter per micro-batch, in kernels of their own.
AUTOCAST_CAST_BYTES_PER_PARAM = 12.0
# fp16 adds a GradScaler (bf16 "does not need grad scaling", transformers' Trainer): before each
# step ``unscale_`` multiplies every fp32 gradient by the inverse scale in place and checks it for
# infs and NaNs (torch._amp_foreach_non_finite_check_and_unscale_), a read and a write of 4 bytes.
GRAD_SCALER_BYTES_PER_PARAM = 8.0
# Under pure bf16 there is no fp32 master copy: a bitsandbytes optimizer (states at their own
# width, memory.BNB_OPTIMIZERS) reads the 2-byte weight instead of the 4-byte master (-2) and
# writes no master (-4): 6 bytes fewer per parameter (32-bit AdamW: weight 2, gradient 2, states 8
# read, weight 2 and states 8 written = 22; 8-bit: 10).  torch's own optimizers keep bf16 states
# there, so their traffic halves (training.py).
PURE_BF16_BNB_TRAFFIC_SAVING = 6.0
# Paged optimizer states evicted to host RAM cross PCIe twice per optimizer step: paged in to the
# GPU when the update touches them (bitsandbytes prefetches each paged state before its update,
# cudaMemPrefetchAsync, Optimizer8bit.prefetch_state) and evicted again to make room for the next
# (the CUDA driver's page eviction), each at the host link's rate (pcie_gb_per_s x LINK_EFFICIENCY
# "pcie"), not overlapped with the update that waits on them.  bitsandbytes' docs ("Paged
# optimizers") expect less of unified memory: prefetched transfers run at "about half or worse than
# the full PCIe memory bandwidth", and they time 1 GB evicted per step as 1 GB at half of PCIe 3.0
# x16 (125 ms).  Per GB evicted that example charges 1 / 0.5 = 2.0 GB of link time, this model
# 2 / 0.7 = 2.9: it errs on the slow side.
PAGED_CROSSINGS_PER_STEP = 2.0

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
# AMD MI300X platforms pair each GPU with a 400 Gb NIC as the H100's do (Azure ND MI300X v5:
# 8 x 400 Gb NDR InfiniBand) and sit on PCIe Gen5: they take the Hopper-era defaults here, but
# not the Hopper instructions below (_ASYNC_TENSOR_CORES, overlaps_tensor_parallel).  So do the
# CDNA4 MI350X/MI355X platforms (MLPerf Training v5.1 systems/MI35*X_EPYC_9575F_pytorch.json:
# "PCIe Gen 5 x16" to the host; AMD's MI350 platforms pair each GPU with a 400 Gb Pollara NIC);
# their stacks (ROCm Transformer Engine, TP_COMM_OVERLAP=False in AMD's MLPerf configs) are not
# taken to overlap tensor-parallel collectives either.
_HOPPER_AND_NEWER = ("H100", "H200", "B200")
_GEN5_HOSTS = (*_HOPPER_AND_NEWER, "MI300", "MI350")


def default_network_gbps(gpu: GpuSpec, fabric: Fabric, gpus_per_node: int) -> float:
    """Node network bandwidth (Gbit/s) when the offer does not state it."""
    new = gpu.family in _GEN5_HOSTS
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
    """Per-direction PCIe x16 bandwidth: the catalog's figure where the GPU's own link is PCIe (or
    it has none, its transfers crossing PCIe), else by generation: gen5 64, gen4 32, gen3 16 GB/s."""
    if gpu.gpu_link in ("pcie", "none") and gpu.gpu_link_gb_per_s > 0:
        return gpu.gpu_link_gb_per_s
    if gpu.family in _GEN5_HOSTS:
        return 64.0
    if gpu.family in ("V100", "T4") or not gpu.bf16:
        return 16.0
    return 32.0


def intra_node_link(
    gpu: GpuSpec, interconnect: Interconnect, gpus_per_node: int
) -> tuple[float, str]:
    """Effective per-GPU one-way bandwidth inside a node (bytes/s) and the link kind.

    AMD Infinity Fabric counts as an NVLink-class link ("nvlink" here): direct GPU-to-GPU links
    at the catalog's aggregate rate, with the same collective efficiency (U for RCCL)."""
    bridge_only = gpu.gpu_link == "nvlink-bridge"
    nvlink = interconnect in (Interconnect.NVLINK, Interconnect.NVSWITCH) and gpu.direct_link
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


# -- fixed costs of a run -------------------------------------------------------------------------
# Before the first step: the Python process and its imports, the CUDA context, the NCCL
# communicators, the tokenizer and the dataset index.  60 s is a planning figure (U); a short job
# pays it in full, a long one does not notice.
PROCESS_START_SECONDS = 60.0
# A fine-tune reads its pretrained weights from storage first: 1 GB/s is a planning figure (U) for
# cloud block storage or a network file system (a local NVMe reads 2-7 GB/s).
LOAD_BYTES_PER_S = 1.0e9


# Host memory a CPU optimizer step streams its states through (DeepSpeed ZeRO-Offload's CPU Adam):
# 50 GB/s is a planning figure (U) for a server's DDR4/DDR5 channels under a vectorised update.
HOST_OPTIMIZER_BYTES_PER_S = 50e9

# Local NVMe under the optimizer states (training.offload: nvme), per node, GB/s, when
# training.nvme_read_gb_per_s / nvme_write_gb_per_s are not given: DeepSpeed's DeepNVMe
# measurements between NVMe and CPU buffers on an Azure NC96ads_A100_v4 (four NVMe SSDs in
# RAID-0, libaio): "10GB/sec reads and 5GB/sec writes" (DeepSpeed blogs/deepspeed-gds, 2024).
NVME_READ_GB_PER_S = 10.0
NVME_WRITE_GB_PER_S = 5.0
NVME_SOURCE = (
    "DeepSpeed DeepNVMe blog: 10 GB/s reads, 5 GB/s writes on 4 NVMe SSDs in RAID-0, "
    "Azure NC96ads_A100_v4"
)


# -- precision ------------------------------------------------------------------------------------
# fp32 and tf32 matmuls run on units slower than the 16-bit tensor cores each family's fraction was
# calibrated on.  fp32 runs on the CUDA cores (PyTorch has not used TF32 for fp32 matmuls by
# default since 1.12: torch.backends.cuda.matmul.allow_tf32 = False); tf32, where PyTorch allows it
# (allow_tf32, or torch.set_float32_matmul_precision("high")), runs cuBLAS's TF32 tensor-core
# kernels at half the 16-bit rate -- never the CUDA cores, even where the two peaks are equal
# (GeForce Ampere: 35.6 and 35.5 TFLOPS on the RTX 3090).
#
# The calibrated fraction f0 of the 16-bit peak P0 holds two parts: the GEMMs' own share of the
# peak, g0 = TENSOR_GEMM_SHARE (torchao's pct_achievable_gemm_tops, below), and the rest of a
# training step's matmul time, 1/f0 - 1/g0 in units of 1/P0: launch gaps, epilogues and what the
# stack runs between the kernels, none of it on the matmul unit, so none of it slower on a slower
# unit.  On a unit of peak P whose GEMMs reach a share g of it a FLOP then takes
# 1/(P g) + (1/f0 - 1/g0)/P0: a share f = 1 / (1/g + (1/f0 - 1/g0) P/P0) of P
# (:func:`slower_unit_fraction`).  g is TENSOR_GEMM_SHARE for TF32 tensor cores (U: torchao
# measured it on bf16 and fp8 GEMMs); for a CUDA-core SGEMM it is SHARED_DATAPATH_SGEMM_SHARE on the
# parts whose FP32 peak counts a datapath shared with INT32 (gpus.yaml fp32_shares_int32: Ampere
# GA10x, Ada, consumer Blackwell; U: measured on a GA102, taken for AD10x, GB20x and the Jetson
# Orin's GA10B alike), and TENSOR_GEMM_SHARE on the others (U: an SGEMM on FP32 lanes of their own
# reaching what a tensor-core GEMM does).  On a card whose 16-bit matmuls run at its FP32 rate (no
# tensor cores, no packed fp16: Kepler, Maxwell, Pascal GP102/GP104) fp32 and fp16 share one rate.
# Checks, not fits: the same GPT-2-class model on one RTX 3090 ran 12,599 tokens/s in fp32, 15,402
# with TF32 and 19,921 with AMP fp16 (held-out rows H240-H242; the estimate had fp32 and TF32 equal
# when it let tf32 take the CUDA cores at a V100-derived 0.83); NVIDIA's BERT-large SQuAD
# fine-tuning on one V100 32GB ran 7.56 sentences/s in FP32 against 24.29 in FP16, 3.21x
# (DeepLearningExamples TensorFlow BERT README, 2019; H15a/H15b).
TENSOR_GEMM_SHARE = 0.78
# cuBLAS's SGEMM of 4,096 x 4,096 matrices on an RTX A6000 (GA102): 23,249.6 GFLOPS (Simon Boehm,
# "How to Optimize a CUDA Matmul Kernel for cuBLAS-like Performance: a Worklog", 2022) of its
# 38.7 TFLOPS FP32 peak (NVIDIA RTX A6000 datasheet): 0.601 (U: the run's sustained clock is not
# stated; against the peak at the boost clock).
SHARED_DATAPATH_SGEMM_SHARE = 23.2496 / 38.7
# fp8 recipes (Transformer Engine, torchao float8) run the linear layers' matmuls in fp8 and keep
# attention and the output layer in bf16.  The fp8 tensor cores run at twice the dense 16-bit rate
# on Hopper, Ada and Blackwell (H100 SXM 1,979 against 989 TFLOPS, B200 4.5 against 2.25 PFLOPS,
# NVIDIA datasheets), and large cuBLAS fp8 GEMMs reach the same share of that peak as bf16 ones:
# torchao's float8 roofline (pytorch/ao torchao/testing/float8/roofline_utils.py) takes
# "pct_achievable_gemm_tops": 0.78 for both, "based on experimental observation with sample large
# inputs", and its README finds "the gemm speedup approaching 2x as M, K, N increase".  So the
# linear layers' tensor-core time halves; the casts that feed them are memory traffic of their own
# (FP8_CAST_BYTES_PER_ELEMENT, by the stack's scaling recipe), charged at the memory bandwidth, and
# the result writes stay 16-bit.
FP8_TENSOR_RATE = 2.0
# Block-scaled NVFP4 matmuls (e2m1 values, an e4m3 scale per 16; W4A4 on Blackwell's fp4 tensor
# cores) do not reach the share of their peak that fp8 ones reach: each 16-value block brings a
# scale factor to stage beside its operands, at twice the operand rate.  vLLM's CUTLASS kernel
# benchmarks on SM100 (B200) give, at Llama 3.1 8B's N = 6,144, K = 4,096 and M = 16,384, NVFP4
# 3,904 TFLOP/s against the same run's BF16 1,360 (benchmarks/kernels/bench_nvfp4_gemm.py,
# "nvfp4-noquant", vllm-project/vllm PR #20578 and #20646, 2025-07), and fp8 2,545 against its own
# run's BF16 1,513 (bench_fp8_gemm.py, "fp8-tensor-w-tensor-a-noquant", PR #19566, 2025-06).  Each
# over its run's BF16 (clocks and power held alike) and over its ideal speed-up (4x and 2x the 16-bit
# rate): NVFP4 reaches 2.87 / 4 = 0.718 of the BF16 share, fp8 1.68 / 2 = 0.842, so NVFP4 0.853 of
# what fp8 reaches.  Only SM100 (the B200 family) is measured; the RTX PRO 6000's SM120 runs other
# (warp-level MMA) kernels and keeps the fp8 share (U).
FP4_GEMM_SHARE_OF_FP8: dict[str, float] = {
    "B200": (3904.0 / 1360.0 / 4.0) / (2545.0 / 1513.0 / 2.0)
}


def fp4_gemm_share(gpu: GpuSpec) -> float:
    """Share of the fp8 matmul fraction that NVFP4 (W4A4) matmuls reach on ``gpu``'s fp4 tensor
    cores (:data:`FP4_GEMM_SHARE_OF_FP8`; 1 where the family has no measurement)."""
    return FP4_GEMM_SHARE_OF_FP8.get(gpu.family, 1.0)


# LOW_BIT_RECIPES (memory.py): the training recipes that run the linear layers below 16 bits and
# the rest (attention, the output layer) at 16: fp8 (Transformer Engine's fp8 recipes, torchao
# float8) and fp4, Transformer Engine's NVFP4 recipe on Blackwell (NVIDIA, "Pretraining Large
# Language Models with NVFP4", arXiv:2509.25149: the linear layers' forward, input-gradient and
# weight-gradient GEMMs in NVFP4, with a Hadamard transform on the weight gradient's inputs and
# stochastic rounding of the gradients; MLPerf Training v5.1's Blackwell Llama 3.1 runs).  Every
# linear layer is taken to run in NVFP4; the paper keeps a few sensitive ones in BF16 (about 16% of
# its 12B model's), which the estimate does not (U).


def linear_tensor_rate(gpu: GpuSpec, precision: str) -> float:
    """How many times the 16-bit rate a low-bit recipe's linear layers run at on ``gpu``: fp8 at
    :data:`FP8_TENSOR_RATE`; NVFP4 at the fp4 dense peak over the 16-bit one (4x on a B200, 6x on a
    B300 or GB300: NVIDIA's HGX B200, HGX B300 and GB300 NVL72 datasheets) times the share of fp8's
    GEMM fraction block-scaled NVFP4 GEMMs reach (:func:`fp4_gemm_share`, measured against fp8:
    this takes fp8 to reach the 16-bit share, as :data:`FP8_TENSOR_RATE` does, so that NVFP4 over
    fp8 is the benchmark's own 1.71x at a B200's 2x peak ratio); 1 for every other recipe."""
    if precision == "fp8":
        return FP8_TENSOR_RATE
    if precision == "fp4":
        return gpu.matmul_peak_flops("fp4") / gpu.peak_flops * fp4_gemm_share(gpu)
    return 1.0


def linear_fold(gpu: GpuSpec, precision: str, linear_share: float) -> float:
    """Time of a step's FLOPs at the 16-bit rate over their time with ``linear_share`` of them (the
    linear layers) at :func:`linear_tensor_rate`: the speed-up folded into one effective peak."""
    share = min(max(linear_share, 0.0), 1.0)
    return 1.0 / (1.0 - share + share / linear_tensor_rate(gpu, precision))


def power_capped_gemm_share(gpu: GpuSpec) -> float | None:
    """Share of its dense tensor peak a big GEMM sustains on a power-capped board (the T4's 70 W
    hold ~24 of its 65 TFLOPS fp16 under a continuous cuBLAS GEMM: NVIDIA developer forum, "About GPU
    peak performance", 2023), where below :data:`TENSOR_GEMM_SHARE`; None for a board that holds its
    boost clock (every one without a published sustained figure)."""
    cap = load_inference_efficiency().power_capped_peak_fraction.get(gpu.name)
    return cap if cap is not None and cap < TENSOR_GEMM_SHARE else None


# The family whose measured fraction describes a power-capped board's chip uncapped: the T4's
# TU104 has the Turing SMs of the Quadro RTX 6000's TU102, which holds its clock at 260 W and whose
# 0.40 is measured (GEMM_FRACTION: RTX-Pro, C27); the T4 family's 0.35 is a planning figure for the
# inference-class cards as a group, the cap already folded in, so it cannot be capped again.
UNCAPPED_FAMILY = {"T4": "RTX-Pro"}


def uncapped_gemm_fraction(gpu: GpuSpec) -> float:
    """:func:`gemm_fraction` of ``gpu``'s chip where it holds its clock (:data:`UNCAPPED_FAMILY`)."""
    family = UNCAPPED_FAMILY.get(gpu.name)
    return GEMM_FRACTION[family] if family is not None else gemm_fraction(gpu)


def slower_unit_fraction(gpu: GpuSpec, peak_flops: float, gemm_share: float) -> float:
    """Share of ``peak_flops`` training matmuls of the reference shape sustain on a unit slower than
    ``gpu``'s 16-bit tensor cores, whose GEMMs reach ``gemm_share`` of it: the family's calibrated
    time per FLOP less its GEMMs' own (at :data:`TENSOR_GEMM_SHARE`) is kept in seconds, since it
    does not run on the matmul unit (the header above)."""
    rest = max(1.0 / gemm_fraction(gpu) - 1.0 / TENSOR_GEMM_SHARE, 0.0)
    return 1.0 / (1.0 / gemm_share + rest * peak_flops / gpu.peak_flops)


# Where each slower unit's GEMM share comes from, in words (the estimate's efficiency source).
SLOWER_UNIT_GEMM_SOURCE = {
    "shared": "cuBLAS SGEMM on an RTX A6000, whose FP32 datapaths share INT32's: Boehm 2022",
    "tensor": "torchao's achievable share of a large GEMM's peak",
}


def slower_unit_gemm_share(gpu: GpuSpec, precision: str) -> tuple[float, str] | None:
    """(share of the unit's peak its GEMMs reach, where that comes from) for fp32 and tf32, which
    run on units slower than the calibrated 16-bit tensor cores (:func:`precision_peak`); None for
    the other precisions."""
    if precision == "fp32" and gpu.fp32_shares_int32:
        return SHARED_DATAPATH_SGEMM_SHARE, SLOWER_UNIT_GEMM_SOURCE["shared"]
    if precision in ("fp32", "tf32"):
        return TENSOR_GEMM_SHARE, SLOWER_UNIT_GEMM_SOURCE["tensor"]
    return None


def precision_peak(gpu: GpuSpec, precision: str, linear_share: float = 0.0) -> tuple[float, float]:
    """(peak FLOP/s, share of it training matmuls of the reference shape sustain) for ``precision``.

    fp32 runs on the CUDA cores, tf32 on the tensor cores at half the 16-bit rate, each at
    :func:`slower_unit_fraction` of its peak; fp8 and fp4 (NVFP4) run ``linear_share`` of the FLOPs
    (the linear layers) at :func:`linear_tensor_rate` times the 16-bit rate and the rest at it,
    folded into one effective peak (the casts are charged as memory traffic,
    :func:`fp8_cast_bytes_per_flop`); 16-bit recipes run at the dense tensor peak.  fp8, fp4 and
    16-bit keep the family's :func:`gemm_fraction` (NVFP4's lower share is in its rate), but on a
    power-capped board (:func:`power_capped_gemm_share`) whose tensor cores cannot hold their boost
    clock under a matmul load, its GEMMs run at the capped share, beside the time the chip spends
    beyond its GEMMs where it holds its clock (:func:`uncapped_gemm_fraction`).
    """
    tensor = gemm_fraction(gpu)
    slower = slower_unit_gemm_share(gpu, precision)
    if slower is not None:  # fp32, tf32
        peak = gpu.matmul_peak_flops(precision)
        return peak, slower_unit_fraction(gpu, peak, slower[0])
    capped = power_capped_gemm_share(gpu)
    if capped is not None:
        # a power-capped board's tensor cores run below their boost clock under a matmul load: its
        # GEMMs reach that share of the peak, beside the uncapped chip's time beyond its GEMMs
        rest = max(1.0 / uncapped_gemm_fraction(gpu) - 1.0 / TENSOR_GEMM_SHARE, 0.0)
        tensor = 1.0 / (1.0 / capped + rest)
    if precision in LOW_BIT_RECIPES:
        return gpu.peak_flops * linear_fold(gpu, precision, linear_share), tensor
    return gpu.matmul_peak_flops(precision), tensor


# A 3x3 convolution of stride 1 whose arithmetic runs on the CUDA cores (fp32, or any precision on
# a GPU without tensor cores) is computed by cuDNN as a Winograd transform: for each 2x2 tile of
# outputs F(2x2,3x3) multiplies 4x4 transformed input and filter tiles element by element, 16
# multiplies against the direct convolution's 36, "almost all of the arithmetic ... performed by
# dense matrix multiplies" over the channels (Lavin and Gray 2016, "Fast Algorithms for
# Convolutional Neural Networks", arXiv 1509.09308; cuDNN has had its own Winograd kernels for the
# 2x2 and 4x4 output tiles by v5.1, Gray and Koster 2016, "Benchmarking optimized Winograd
# implementations"), and so do the two backward convolutions of such a layer (the input gradient
# is a 3x3 stride-1 convolution too).  The layers' FLOPs are taken to run 36/16 = 2.25x faster at
# the same matmul share, the 2x2 tile's reduction (the 4x4 tile's 4x pays for larger transforms;
# its gain is not counted, U).  Tensor-core convolutions run cuDNN's implicit GEMMs, whose share
# the calibration rows hold; nothing changes there.  Only NVIDIA's cuDNN is counted (MIOpen's
# kernels are not modelled, U).  The share of a network's FLOPs in such layers is the model's
# (ModelSection.conv3x3_share; the presets count their layers).
WINOGRAD_MULTIPLY_REDUCTION = 36.0 / 16.0


def convolutions_on_cuda_cores(gpu: GpuSpec, precision: str) -> bool:
    """Whether ``precision``'s convolutions run on ``gpu``'s CUDA cores, where cuDNN computes 3x3
    stride-1 layers as Winograd transforms (:data:`WINOGRAD_MULTIPLY_REDUCTION`): fp32 (not tf32),
    or any precision on a GPU without tensor cores; NVIDIA GPUs only."""
    if gpu.vendor != "nvidia":
        return False
    return precision == "fp32" or not gpu.tensor_cores


def winograd_speedup(gpu: GpuSpec, precision: str, conv3x3_share: float) -> float:
    """How much faster a network with ``conv3x3_share`` of its FLOPs in 3x3 stride-1 convolutions
    runs its FLOPs than at the direct convolutions' rate: those layers
    :data:`WINOGRAD_MULTIPLY_REDUCTION` x faster where the precision's convolutions run on the CUDA
    cores (:func:`convolutions_on_cuda_cores`); 1 otherwise."""
    share = min(max(conv3x3_share, 0.0), 1.0)
    if share <= 0.0 or not convolutions_on_cuda_cores(gpu, precision):
        return 1.0
    return 1.0 / (1.0 - share + share / WINOGRAD_MULTIPLY_REDUCTION)


def result_bytes(precision: str) -> float:
    """Bytes of one matmul result or stored activation value: 4 in fp32 and tf32 (fp32 storage),
    2 otherwise (fp8 recipes store activations in 16 bits except the linear inputs, see
    planner.workload.memory)."""
    return 4.0 if precision in ("fp32", "tf32") else 2.0


def gemm_fraction(gpu: GpuSpec) -> float:
    """Share of the dense peak that matmuls of the family's reference shape sustain on ``gpu``: the
    family's figure, times :data:`SUSTAINED_GEMM_RELATIVE` for a part that holds a higher clock
    under matmuls than the part the figure was measured on."""
    family = GEMM_FRACTION.get(gpu.family, GEMM_FRACTION.get(gpu.name, DEFAULT_GEMM_FRACTION))
    return min(family * SUSTAINED_GEMM_RELATIVE.get(gpu.name, 1.0), TENSOR_GEMM_SHARE)


# A GEMM whose leading dimension is not a multiple of 16 bytes cannot take the tensor-core kernels
# that load their tiles in 16-byte vectors (TMA on Hopper, cp.async on Ampere); cuBLAS runs an
# "align1" or "align2" kernel that loads element by element (NVIDIA, "Matrix Multiplication
# Background User's Guide": Tensor Cores are used most efficiently when the dimensions are
# multiples of 16 bytes).  A language model's output layer is the one GEMM of a transformer whose
# width is the tokenizer's: GPT-2's 50,257 (odd: align1), BERT's 30,522 (align2), unless the stack
# pads it (frameworks.yaml ``pads_vocab``; nanoGPT's 50,304 "for efficiency").  Measured in this
# project on one H100 80GB HBM3 (PyTorch 2.11, cuBLAS of CUDA 13; benchmarks/gpu_probe.py
# profile): GPT-2's 768 x 50,257 output layer at 16,384 tokens ran its three GEMMs at 94, 140 and
# 150 TFLOP/s in bf16 (cutlass_75 align1 kernels), 123 together, and at 119-131 in tf32 (align1
# again); BERT's 768 x 30,522 head at 16,384 tokens at 236-265 in bf16 (cutlass_80 align2
# kernels) -- against 600-700 for the aligned layers beside them.  The rate does not follow the
# tensor cores (bf16 and tf32 alike at align1) but the element loads the SMs issue, doubling with
# each doubling of the alignment: 123 TFLOP/s is 1.84 times the H100's 66.9 TFLOPS of fp32 on its
# CUDA cores, the SMs' own rate, and each GPU is taken to run such kernels at that multiple of its
# own per element of alignment (U beyond the H100).  Where that is above the aligned rate (GeForce
# cards, whose tensor cores run at a lower multiple of their CUDA cores), nothing changes.
UNALIGNED_GEMM_FP32_MULTIPLE = 123.0 / 66.9  # per element of alignment
_TENSOR_CORE_ALIGNMENT_BYTES = 16


def unaligned_alignment(width: int, element_bytes: float) -> int | None:
    """The alignment in elements (the largest power of two dividing ``width``) of a tensor-core
    GEMM dimension ``width`` elements of ``element_bytes`` wide that is not a multiple of 16 bytes;
    None where it is."""
    if width <= 0:
        return None
    alignment = width & -width
    if alignment * element_bytes >= _TENSOR_CORE_ALIGNMENT_BYTES:
        return None
    return alignment


def unaligned_gemm_flops(gpu: GpuSpec, alignment: int) -> float:
    """FLOP/s of ``gpu``'s unaligned tensor-core GEMM kernels at ``alignment`` elements:
    :data:`UNALIGNED_GEMM_FP32_MULTIPLE` per element times its fp32 CUDA-core rate."""
    return UNALIGNED_GEMM_FP32_MULTIPLE * alignment * gpu.fp32_tflops * 1e12


# -- matmul shape --------------------------------------------------------------------------------------
# A tiled GEMM streams its operand tiles through a multi-stage pipeline that overlaps the tensor-core
# math (CUTLASS "Efficient GEMM in CUDA": software pipelining), but each output tile is written in an
# epilogue after its main loop, and that write is not hidden behind the same tile's math.  A 16-bit
# (M x K)·(K x N) product does 2·M·N·K FLOPs and writes 2·M·N bytes: 1/K bytes per FLOP.  Training
# runs every weight matmul three times with the same FLOPs -- forward (reduces over K, writes M x N),
# input gradient (reduces over N, writes M x K) and weight gradient (reduces over the M tokens,
# writes K x N) -- so on average ``(1/M + 1/K + 1/N) / 3`` bytes per FLOP, charged at the memory
# bandwidth on top of the math, not overlapped (Calculon's "no_overlap" processing mode, Isaev et
# al. SC'23, systems/h100_80g_nvl8.json).  Thin matmuls (small hidden size, wide tensor-parallel
# splits, short micro-batches) therefore run further below peak than big ones: "larger GEMMs have
# higher arithmetic intensity and are consequently more efficient to execute" (Megatron-LM README,
# H100 weak scaling: 41% MFU at 2B to 47-48% at 462B); Anthony et al. 2024 ("The Case for
# Co-Designing Model Architectures with Hardware") measure the same trend per GEMM on A100 and H100.
#
# GEMM_FRACTION is the share at one reference shape per GPU family -- the hidden size below, one GPU
# per layer, REFERENCE_TOKENS tokens, a GPT layer of 12·h² parameters in four matmuls -- and other
# shapes move from it by the difference in bytes per FLOP, so the calibration runs keep their
# numbers and nothing is fitted to held-out runs.  4,096 (7B class) by default: the 1-13B runs
# behind the A100 figure (llm-foundry, MPT-7B, Llama 2 7B; C10/C12) and the H100 figure (llm-foundry
# H100 BF16 27-46% MFU; Megatron-LM README 41% at 2B; llm.c's hand-fused kernels beat the stack
# modelled here by its own factor, frameworks.yaml), and, unmeasured (U), the other families.  V100 1,024: BERT-large on SQuAD (C25).
# RTX-Pro 1,536: DeBERTa-v2-XL (C27).  GeForce 4,096: the RTX 4090's Llama 2 7B runs (C31, C32;
# GEMM_FRACTION above), as the default; RTX-Pro-Blackwell takes the default with the Hopper share.
REFERENCE_HIDDEN: dict[str, int] = {
    "V100": 1024,
    "GeForce": 4096,
    "RTX-Pro": 1536,
}
DEFAULT_REFERENCE_HIDDEN = 4096
# Tokens per micro-batch at the reference shape: 4 sequences of 2,048, the sequence length of the
# 7B-class runs behind GEMM_FRACTION (MPT-7B, Llama 2 7B); the micro-batch size is an assumption (U).
REFERENCE_TOKENS = 8192
# Weight matrices per transformer layer that run as separate GEMMs: fused QKV, attention output,
# MLP up (fused gate + up for SwiGLU), MLP down (Megatron-LM layer structure).
MATMULS_PER_LAYER = 4.0
# forward, input-gradient and weight-gradient matmuls, each writing a different one of the three
# products of the dimensions
_MATMULS_PER_WEIGHT = 3.0

# A mixture-of-experts layer runs its routed experts as grouped GEMMs, one GEMM per local expert
# over the tokens routed to it (Megatron-Core's TEGroupedMLP, ``--moe-grouped-gemm``: "launch
# multiple local GEMM kernels"; MegaBlocks, Gale et al. 2023, s5: block-sparse or grouped matmuls
# over the tokens each expert received).  Each expert is its own matmul shape: ``M`` the tokens
# routed to it in the micro-batch, ``K``/``N`` the hidden size and the expert's own width, a
# gated expert's fused gate + up (h x 2f) and down (f x h) projections: two GEMMs over ``3·f``
# columns.  Beside them the attention's two (fused QKV and output); a shared expert's GEMMs are
# lumped with them (U).
EXPERT_MATMULS = 2.0
EXPERT_WIDTHS = 3.0  # a gated expert: gate, up and down, each hidden x width
ATTENTION_MATMULS = 2.0


@dataclass(frozen=True)
class ExpertShape:
    """The routed experts of one mixture-of-experts layer, as matmuls: one expert's width (columns,
    before tensor parallelism), the experts' share of the layer's weight FLOPs, and the tokens each
    local expert receives in a micro-batch."""

    width: float
    share: float
    tokens: float


def expert_shape(
    tokens: float,
    hidden: int,
    layer_params: float,
    *,
    width: float,
    experts: int,
    experts_per_token: int,
    expert_parallel: int,
) -> ExpertShape | None:
    """The :class:`ExpertShape` of a micro-batch of ``tokens`` tokens per rank: each token's
    ``experts_per_token`` copies spread evenly over the ``experts`` (balanced routing), and every one
    of the ``expert_parallel`` ranks sends its copies to the ranks holding their experts, so a local
    expert receives ``tokens · k · ep / E``; the experts hold ``k · 3 · h · f`` of the layer's
    ``layer_params`` weights a token uses.  None for a dense layer."""
    if not (experts and experts_per_token and width > 0 and layer_params > 0):
        return None
    share = min(experts_per_token * EXPERT_WIDTHS * hidden * width / layer_params, 1.0)
    per_expert = tokens * experts_per_token * max(expert_parallel, 1) / experts
    return ExpertShape(width=width, share=share, tokens=max(per_expert, 1.0))


def _inverse_dims(
    tokens: float, hidden: int, tp: int, layer_params: float, experts: ExpertShape | None
) -> tuple[float, float]:
    """(FLOP-weighted mean of ``1/K + 1/N``, of ``1/M``) over one layer's weight matmuls.

    Dense: with widths ``w_i`` and ``Σ w_i = layer_params / hidden`` the FLOP-weighted mean of
    ``tp / w_i`` is ``MATMULS_PER_LAYER · tp · hidden / layer_params``.  With routed experts
    (``experts``): their share of the FLOPs at ``1/h + EXPERT_MATMULS · tp / (3·f)`` and ``1/t_e``,
    the rest (attention) at ``1/h + ATTENTION_MATMULS · tp · hidden / rest`` and ``1/tokens``."""
    if experts is None or experts.share <= 0.0:
        return 1.0 / hidden + MATMULS_PER_LAYER * tp * hidden / layer_params, 1.0 / tokens
    sigma = experts.share
    expert_dims = 1.0 / hidden + EXPERT_MATMULS * tp / (EXPERT_WIDTHS * experts.width)
    rest = (1.0 - sigma) * layer_params
    rest_dims = 1.0 / hidden + (ATTENTION_MATMULS * tp * hidden / rest if rest > 0 else 0.0)
    dims = sigma * expert_dims + (1.0 - sigma) * rest_dims
    return dims, sigma / experts.tokens + (1.0 - sigma) / tokens


def layer_bytes_per_flop(
    tokens: float,
    hidden: int,
    tp: int,
    layer_params: float,
    experts: ExpertShape | None = None,
) -> float:
    """Result bytes written per FLOP by one transformer layer's training matmuls.

    ``M = tokens`` (the micro-batch's tokens; sequence parallel gathers them all), ``K`` or ``N`` is
    ``hidden`` and the other the matrix's width over the ``tp`` ranks.  With widths ``w_i`` and
    ``Σ w_i = layer_params / hidden``, the FLOP-weighted mean of ``tp / w_i`` is
    ``MATMULS_PER_LAYER · tp · hidden / layer_params``.  A mixture-of-experts layer's routed experts
    (``experts``, :func:`expert_shape`) are matmuls of their own shape, weighted by their share of
    the layer's FLOPs (:func:`_inverse_dims`).
    """
    dims, inverse_tokens = _inverse_dims(tokens, hidden, tp, layer_params, experts)
    return (inverse_tokens + dims) / _MATMULS_PER_WEIGHT


def head_bytes_per_flop(tokens: float, hidden: int, tp: int, vocab: int) -> float:
    """The same for the output projection: ``M = tokens``, ``K = hidden``, ``N = vocab / tp``."""
    return (1.0 / tokens + 1.0 / hidden + tp / vocab) / _MATMULS_PER_WEIGHT


def reference_bytes_per_flop(gpu: GpuSpec) -> float:
    """Bytes per FLOP of the shape :data:`GEMM_FRACTION` was calibrated on for ``gpu``'s family."""
    h = REFERENCE_HIDDEN.get(gpu.family, DEFAULT_REFERENCE_HIDDEN)
    return layer_bytes_per_flop(REFERENCE_TOKENS, h, 1, 12.0 * h * h)


# The part each family's GEMM_FRACTION was measured on, as its dense 16-bit peak over its memory
# bandwidth (FLOPs per byte).  The calibrated time per FLOP at the reference shape holds the
# result traffic of that part's matmuls, streamed at that part's bandwidth; the rest is the tensor cores' own time.  A part of the same
# family with other memory keeps the compute and streams the traffic at its own bandwidth.  Every
# Hopper calibration run (llm.c GPT-2 on 8 H100 SXM, C2; llm-foundry's H100 tables; Megatron-LM's
# H100 scaling runs) used the 80 GB SXM part: 989.4 TFLOPS dense BF16 over 3,350 GB/s of HBM3
# (NVIDIA H100 datasheet).  The H200 has the same 989.4 TFLOPS and 4,800 GB/s of HBM3e (NVIDIA
# H200 datasheet: "4.8 terabytes per second", 141 GB), the H100 NVL 3,900 GB/s, the H100 PCIe
# 2,000 GB/s.  Families whose calibration runs mixed parts (A100 40 and 80 GB: TinyLlama and MPT
# on 40 GB, Llama 2 on 80 GB) keep each part's own bandwidth, as before.
_H100_SXM_OPS_PER_BYTE = 989.4e12 / 3350e9
CALIBRATION_OPS_PER_BYTE: dict[str, float] = {
    "H100": _H100_SXM_OPS_PER_BYTE,
    "H200": _H100_SXM_OPS_PER_BYTE,
}


def ops_per_byte(gpu: GpuSpec) -> float:
    """Dense 16-bit peak FLOPs per byte of ``gpu``'s memory bandwidth."""
    return gpu.peak_flops / (gpu.memory_bandwidth_gb_per_s * 1e9)


def calibration_ops_per_byte(gpu: GpuSpec) -> float:
    """:func:`ops_per_byte` of the part ``gpu``'s family fraction was measured on
    (:data:`CALIBRATION_OPS_PER_BYTE`; ``gpu``'s own where the family names none)."""
    return CALIBRATION_OPS_PER_BYTE.get(gpu.family, ops_per_byte(gpu))


def matmul_fraction(gpu: GpuSpec, bytes_per_flop: float) -> float:
    """Share of the dense peak that training matmuls writing ``bytes_per_flop`` sustain on ``gpu``.

    ``1/e = 1/GEMM_FRACTION - (peak/bandwidth)_cal · x_ref + (peak / bandwidth) · x``: the calibrated
    time per FLOP at the reference shape less the result traffic it held on the calibration part
    (:data:`CALIBRATION_OPS_PER_BYTE`), plus this shape's traffic at ``gpu``'s own bandwidth.
    Never above the peak.
    """
    inverse = (
        1.0 / gemm_fraction(gpu)
        - calibration_ops_per_byte(gpu) * reference_bytes_per_flop(gpu)
        + ops_per_byte(gpu) * bytes_per_flop
    )
    return 1.0 / max(inverse, 1.0)


# Inference runs only the forward matmul of each weight.  A forward ``(M x K)·(K x N)`` writes its
# ``M x N`` 16-bit result for ``2·M·N·K`` FLOPs: ``1/K`` bytes per FLOP, whatever the ``M`` tokens of
# the step (a prefill of 2,048 tokens or a decode batch of 1,024 alike).  ``K`` is the hidden size
# for the column-parallel matmuls (fused QKV, MLP up) and the width over the tensor-parallel ranks
# for the row-parallel ones (attention output, MLP down), so over a layer the FLOP-weighted mean is
# about half the training mean of ``1/K + 1/N`` (the two halves swap the roles of K and N).  The
# calibrated training time per FLOP keeps its tensor-core part and trades the three training
# matmuls' result traffic for this one's, streamed at the memory bandwidth against the peak the
# matmuls run at (an fp8 matmul writes the same 16-bit result in half the time, so its traffic
# weighs twice as much against its math).  Small: a few % of the matmul time at hidden 4,096.


def forward_bytes_per_flop(hidden: int, tp: int, layer_params: float) -> float:
    """Result bytes one transformer layer's forward weight matmuls write per FLOP: half the
    FLOP-weighted mean of ``1/K + 1/N`` (:func:`_inverse_dims`), independent of the tokens."""
    dims, _ = _inverse_dims(1.0, hidden, tp, layer_params, None)
    return dims / 2.0


def forward_matmul_fraction(gpu: GpuSpec, bytes_per_flop: float, peak_flops: float) -> float:
    """Share of ``peak_flops`` (the peak of the unit the matmuls run on) that forward-only matmuls
    writing ``bytes_per_flop`` sustain on ``gpu``: :func:`matmul_fraction`'s calibrated time per
    FLOP less the reference shape's training traffic, plus this traffic at ``peak_flops`` over
    ``gpu``'s bandwidth.  Never above the peak."""
    inverse = (
        1.0 / gemm_fraction(gpu)
        - calibration_ops_per_byte(gpu) * reference_bytes_per_flop(gpu)
        + peak_flops / (gpu.memory_bandwidth_gb_per_s * 1e9) * bytes_per_flop
    )
    return 1.0 / max(inverse, 1.0)


# An fp8 linear layer runs on fp8 copies of its input and, in the backward pass, of its output
# gradient, each cast from 16 bits with a transposed copy for the other GEMM that reads it (Hopper's
# fp8 tensor cores take only the "TN" layout), and of its weight.  What the casts cost depends on
# how the stack picks the scale (FP8_SCALING):
#
# - ``delayed`` (Transformer Engine's DelayedScaling, its default recipe, used by Megatron-LM and
#   NeMo): the scale comes from the amax history of earlier steps and the amax of this tensor is
#   taken inside the same fused cast-transpose kernel: read 2 bytes, write 1 + 1, 4 bytes per
#   element (TE docs, "Using FP8 with Transformer Engine"; Micikevicius et al. 2022, "FP8 Formats
#   for Deep Learning").  The weights' fp8 copies are made once per optimizer step and reused by
#   every micro-batch (TE's ``is_first_microbatch``), or gathered in fp8 (``fp8_param_gather``):
#   no per-micro-batch weight traffic (U: amortised over the accumulation steps).
# - ``dynamic`` (torchao float8 tensorwise scaling, torchtitan's recipe: "tensor-wise scaling
#   with dynamic scales", torchtitan docs/float8.md): the scale needs this tensor's amax before
#   any element can be cast, so the amax is a pass of its own.  torchao's float8 roofline counts,
#   per input or output-gradient element, the amax read (2 bytes) plus the cast that reads it again
#   and writes both layouts (2 + 1 + 1): 6 bytes; and per weight element, every micro-batch, the
#   amax read (2) and a forward and a backward cast (2 + 1 each): 8 bytes
#   (pytorch/ao torchao/testing/float8/roofline_utils.py, get_tensor_memory_traffic_ovhd_s,
#   "tensorwise"); its README: "Delayed scaling is theoretically faster than dynamic scaling because
#   of reduced read/write traffic requirements".
# - ``nvfp4`` (Transformer Engine's NVFP4 recipe, what precision: fp4 runs whatever the stack's fp8
#   scaling): each input or output-gradient element is scaled twice, by an fp32 scale per tensor
#   from the tensor's own amax (a pass of its own, 2 bytes read) and by an e4m3 scale per 16 values;
#   one kernel then reads it again (2) and writes the row-wise copy and the Hadamard-transformed
#   column-wise copy the weight gradient reads, 4 bits a value and a byte per 16 each (1.125):
#   5.125 bytes.  The weights are quantised once per optimizer step in 16 x 16 blocks and reused by
#   every micro-batch, as under delayed scaling (NVIDIA, arXiv:2509.25149, s4; U: amortised).
#
# Per (M x K)·(K x N) layer with 6·M·K·N training FLOPs, activation casts of ``a`` bytes per element
# cost ``(a/6)·(1/K + 1/N)`` bytes per FLOP, weight casts of ``w`` bytes ``w / (6·M)``, streamed at
# the memory bandwidth.
FP8_SCALING = ("delayed", "dynamic")
FP8_CAST_BYTES_PER_ELEMENT: dict[str, float] = {
    "delayed": 4.0,
    "dynamic": 6.0,
    "nvfp4": 2.0 + 2.0 + 2.0 * (0.5 + 1.0 / 16.0),
}
FP8_WEIGHT_CAST_BYTES_PER_ELEMENT: dict[str, float] = {"delayed": 0.0, "dynamic": 8.0, "nvfp4": 0.0}
# Share of the memory bandwidth the cast kernels reach.  Transformer Engine's hand-written fused
# cast-transpose kernels stream (1.0).  torchao's dynamic scaling runs the amax reductions and casts
# that torch.compile generates, which its README says do not yet reach "the optimal behavior"
# (torch.compile limitations, pytorch/ao issue 556) and bounds by "memory bandwidth, framework
# overhead and compiler limitations".  Its measured Float8Linear forward + backward speedup on H100
# at M, K, N = 4,096, 8,192, 16,384 is 1.39x over bf16 (pytorch/ao torchao/float8 README,
# "Performance", example 2, a shape large enough that "the gemm speedup [approaches] 2x"); this
# model's matmul time at that shape (fp8 at twice the rate, 6/6·(1/K + 1/N) + 8/(6·M) cast bytes
# per FLOP) gives 1.73x with the casts at the full bandwidth and 1.39x with them at 0.36 of it.
# Were it measured on power-capped H100s (torchtitan's own tables ran at 500 W), a slower fp8 GEMM
# would carry part of that gap (U).
FP8_CAST_BANDWIDTH_SHARE: dict[str, float] = {"delayed": 1.0, "dynamic": 0.36, "nvfp4": 1.0}


def fp8_cast_bytes_per_flop(
    hidden: int,
    tp: int,
    layer_params: float,
    tokens: float = 0.0,
    scaling: str = "delayed",
    experts: ExpertShape | None = None,
) -> float:
    """Cast bytes per low-bit linear FLOP of one transformer layer under ``scaling`` (FP8_SCALING,
    or ``nvfp4`` for the NVFP4 recipe: the FP8_* tables carry both low-bit recipes), as
    bytes streamed at the full bandwidth (over :data:`FP8_CAST_BANDWIDTH_SHARE`):
    its activation casts, FLOP-weighted over the four matmuls (whose ``1/K + 1/N`` averages
    ``1/hidden + MATMULS_PER_LAYER · tp · hidden / layer_params`` as in
    :func:`layer_bytes_per_flop`, or with routed experts ``experts`` their own shape), plus, under
    dynamic scaling, the weight casts of each micro-batch of ``tokens`` tokens (``M``; the tp ranks
    cast their own shards, so ``tp`` cancels; an expert's weights per its own tokens)."""
    inverse_dims, inverse_tokens = _inverse_dims(
        max(tokens, 1.0), hidden, tp, layer_params, experts
    )
    x = FP8_CAST_BYTES_PER_ELEMENT[scaling] / 6.0 * inverse_dims
    weight = FP8_WEIGHT_CAST_BYTES_PER_ELEMENT[scaling]
    if weight and tokens > 0:
        x += weight / 6.0 * inverse_tokens
    return x / FP8_CAST_BANDWIDTH_SHARE[scaling]


def reference_fp8_cast_bytes_per_flop(gpu: GpuSpec) -> float:
    """:func:`fp8_cast_bytes_per_flop` (delayed scaling) at the reference shape of ``gpu``'s
    family: the cast traffic an fp8 layer of that shape adds to the calibrated matmul time."""
    h = REFERENCE_HIDDEN.get(gpu.family, DEFAULT_REFERENCE_HIDDEN)
    return fp8_cast_bytes_per_flop(h, 1, 12.0 * h * h)


# -- mixture of experts: routing the tokens ------------------------------------------------------
# Before its grouped GEMMs a mixture-of-experts layer permutes its tokens: each token's hidden state
# is copied once for each of its ``k`` experts and the copies grouped by expert (a gather); after
# them the copies' outputs are weighted by their routing probabilities and summed back into the
# token's row (a scatter).  MegaBlocks (Gale et al. 2023) builds its layer from exactly this gather,
# the expert matmuls and the scatter; Megatron-Core runs them as fused kernels
# (``--moe-permute-fusion``: "Fuse token rearrangement ops during token dispatching"), so each is one
# pass over its rows, bandwidth-bound.  Rows of ``hidden`` 16-bit values, per token per layer:
#
# - forward: the permutation reads and writes every copy (2 per copy); the unpermutation reads every
#   copy's output (1 per copy) and writes the token's sum (1 per token);
# - backward: the unpermutation's gradient reads the token's output gradient for every copy and
#   writes the copy's gradient (2 per copy), the routing probability's gradient reads each copy's
#   forward output again (1 per copy); the permutation's gradient reads every copy's gradient
#   (1 per copy) and writes the token's summed gradient (1 per token).
#
# 7 row passes per copy and 2 per token; full recompute runs the forward's 3 and 1 again.  Left out:
# the router's softmax and top-k over the ``E`` scores (about 6 passes of ``E`` fp32 values a token,
# under 2% of these rows for DeepSeek-V3 and Qwen3 MoE), and the second, local sort of received
# chunks by expert that the all-to-all dispatcher runs when a rank holds several experts (U).
ROUTED_ROW_PASSES_PER_COPY = 7.0
ROUTED_ROW_PASSES_PER_TOKEN = 2.0
FORWARD_ROUTED_ROW_PASSES_PER_COPY = 3.0
FORWARD_ROUTED_ROW_PASSES_PER_TOKEN = 1.0


def routing_bytes_per_token(
    hidden: int, experts_per_token: int, *, recompute: float = 0.0, value_bytes: float = 2.0
) -> float:
    """HBM bytes one token's permutation and unpermutation move in one mixture-of-experts layer
    in training (forward and backward; ``recompute``: the share of the layers whose forward runs
    again, 1 under full recompute), rows of ``hidden`` values of ``value_bytes`` each
    (:data:`ROUTED_ROW_PASSES_PER_COPY`)."""
    per_copy = ROUTED_ROW_PASSES_PER_COPY + recompute * FORWARD_ROUTED_ROW_PASSES_PER_COPY
    per_token = ROUTED_ROW_PASSES_PER_TOKEN + recompute * FORWARD_ROUTED_ROW_PASSES_PER_TOKEN
    return (per_copy * experts_per_token + per_token) * hidden * value_bytes


# Tensor-parallel communication overlap.  With sequence parallel the activation all-gathers and
# reduce-scatters of a layer either have no data dependence on the neighbouring matmul (overlapped
# in bulk, on by default) or are split into ring exchanges pipelined with chunks of the dependent
# matmul (Transformer Engine userbuffers, ``tp_comm_overlap``), which "exposes one reduce-scatter
# chunk" (NeMo docs, Communication Overlap).  Megatron-LM's H100 scaling runs use
# ``--tp-comm-overlap`` (Megatron-LM README, Training Speed and Scalability) and NeMo's H100 recipes
# turn it on; the Ampere-era runs we calibrate on (Korthikanti et al. 2022, C21) and older stacks
# expose it, so only Hopper and newer overlap it here, and only over NVLink (the ring exchanges
# are peer-to-peer copies between the GPUs of a node; over PCIe they would fight the matmuls for
# a link that is already the bottleneck).


def overlaps_tensor_parallel(gpu: GpuSpec) -> bool:
    """Whether tensor-parallel collectives are overlapped with matmuls on ``gpu`` (Hopper and newer)."""
    return gpu.family in _HOPPER_AND_NEWER


def exposed_tensor_parallel_seconds(t_comm: float, tp: int, t_matmul: float) -> float:
    """Tensor-parallel communication left visible when it is pipelined with the matmuls.

    The collectives run as ``tp`` ring steps overlapped with chunks of the matmuls: one step shows,
    and whatever the matmuls (``t_matmul``) are too short to cover.
    """
    return max(t_comm / tp, t_comm - t_matmul)


def supports_flash_attention(gpu: GpuSpec) -> bool:
    """FlashAttention-2 needs Ampere or newer (Dao 2023 README); BF16 support marks the same GPUs.
    On AMD Instinct (MI200, MI300, MI350) ROCm's Composable Kernel port of FlashAttention-2 runs it
    (flash-attention README, "AMD ROCm Support")."""
    return gpu.bf16 and gpu.family != "Jetson"


# -- attention kernels ---------------------------------------------------------------------------
# The attention core (scores Q·Kᵀ and their product with V, 12·L·w·s FLOPs per token in training,
# w = heads x head_dim, compute.attention_flops_per_token) is counted as the full s x s square, as
# MFU counts it (PaLM).
# A fused (flash) attention kernel of a causal decoder works tile by tile and skips every tile above
# the diagonal, whose scores the mask would discard: it runs half those FLOPs.  FlashAttention's
# own benchmark counts them so ("4 * batch * seqlen**2 * nheads * headdim // (2 if causal else 1)",
# Dao-AILab/flash-attention benchmarks/benchmark_flash_attention.py), and so do NVIDIA's model
# TFLOP/s figures for Megatron-Bridge (Llama 3 8B at 8,192 tokens: 744 TFLOP/s for 14,451
# tokens/s per GPU is 6 x 7.5B non-embedding weights + 6·L·h·s per token, half of 12·L·h·s).
# Without a fused kernel the scores are materialised as the full square (then masked): all of it.
CAUSAL_ATTENTION_SHARE = 0.5
# How fast a fused attention kernel runs, against the GEMMs: the share of the family's matmul
# fraction (GEMM_FRACTION) its executed FLOPs reach, by kernel class (frameworks.yaml
# ``attention``):
#
# - ``cudnn``: kernels written for the GPU's own tensor-core instructions -- cuDNN's fused
#   attention (Transformer Engine's default backend: Megatron-LM, NeMo; llm.c) and
#   FlashAttention-3 on Hopper, which uses its asynchronous warpgroup MMA and TMA and reaches "up to
#   740 TFLOPs/s (75% utilization)" in FP16 on H100 (Shah et al. 2024, "FlashAttention-3", abstract),
#   about a large cuBLAS GEMM's share: 1.0.
# - ``fa2``: FlashAttention-2 (PyTorch's scaled_dot_product_attention flash backend, used by Hugging
#   Face models, torchtitan and plain FSDP), written for Ampere's synchronous mma instructions.  On
#   Ampere it reaches "50-73% of the theoretical maximum FLOPs/s on A100" (Dao 2023, abstract), a
#   GEMM's share: 1.0.  On the parts with asynchronous tensor cores (Hopper's wgmma, Blackwell's
#   tcgen05) it cannot use them and reaches "only 35% utilization on the H100 GPU" (Shah et al. 2024)
#   against FlashAttention-3's 75%: 0.35 / 0.75 of the family's fraction there.  Blackwell
#   unmeasured (U): the Hopper figure.
# - ``fa1``: FlashAttention-1 (flash-attn 1.x, 2022-2023 stacks; PyTorch's scaled_dot_product_attention
#   flash backend before PyTorch 2.2, whose release notes give FlashAttention-2 "around 2x speedups
#   compared to previous versions").  Dao 2023 ("FlashAttention-2", abstract and s1): FlashAttention
#   "reaching only 25-40% of the theoretical maximum FLOPs/s" on A100, FlashAttention-2 "around 2x
#   speedup compared to FlashAttention, reaching 50-73%": half of FlashAttention-2's share, on every
#   GPU (its kernels are FlashAttention-2's predecessors on the same instructions).
# The backward pass of a fused kernel does not read a stored s x s probability matrix: it
# recomputes the scores S = Q·Kᵀ and P = softmax(S) tile by tile from Q, K and the saved row
# statistics, then runs dV = Pᵀ·dO, dP = dO·Vᵀ, dQ = dS·K and dK = dSᵀ·Q: five matmuls against
# the forward pass's two, 2.5 x the forward's FLOPs where the count (12·L·w·s: forward 4, backward
# 8) has 2 x (FlashAttention's benchmark times the backward pass at "2.5 * f" for a forward of f,
# Dao-AILab/flash-attention benchmarks/benchmark_flash_attention.py, and so do the FlashAttention-2
# and -3 papers' backward figures).  A materialised attention (no fused kernel) keeps P and runs
# the counted four.
FLASH_BACKWARD_FLOPS_RATIO = 2.5 / 2.0
# And the backward kernel runs below the forward kernel's rate (more matmuls per tile, dQ
# accumulated across the key blocks, more registers per thread): at sequence 16k and head dim 128
# on an H100 80GB SXM5 the FlashAttention-3 paper (Shah et al. 2024, s4.1, "Attention forward
# speed" and "Attention backward speed" figures, head dim 128) measures, forward against backward,
# FlashAttention-3 648 against 561 TFLOPs/s, cuDNN 595 against 516 and FlashAttention-2 370
# against 322 -- 0.87 for all three.  Checked on one H100 SXM (PyTorch 2.11 with cuDNN 9.19,
# scaled_dot_product_attention, causal, head dim 128, sequence 16,384, bf16): cuDNN 640 forward
# and 496 backward (0.78), FlashAttention-2 331 and 312 (0.94), beside a 745 TFLOP/s
# 16,384 x 8,192 x 8,192 bf16 GEMM.  Other GPUs: the Hopper figure (U).
FLASH_BACKWARD_SPEED = 0.87
# Share of the counted attention-core FLOPs of a training step in its backward pass without
# recompute (8 of 12·L·w·s); a recomputed forward pass adds forward FLOPs only.
ATTENTION_BACKWARD_SHARE = 2.0 / 3.0
ATTENTION_KERNELS = ("cudnn", "fa2", "fa1")
FA2_ON_ASYNC_TENSOR_CORES = 0.35 / 0.75
FA1_OF_FA2 = 0.5
_ASYNC_TENSOR_CORES = _HOPPER_AND_NEWER


def attention_kernel_fraction(gpu: GpuSpec, kernel: str) -> float:
    """Share of the family's matmul fraction a fused attention kernel of class ``kernel``
    (:data:`ATTENTION_KERNELS`) reaches on ``gpu``."""
    if kernel in ("fa2", "fa1"):
        fa2 = FA2_ON_ASYNC_TENSOR_CORES if gpu.family in _ASYNC_TENSOR_CORES else 1.0
        return fa2 * FA1_OF_FA2 if kernel == "fa1" else fa2
    return 1.0


def window_attention_share(seq: float, window: float | None, windowed_share: float) -> float:
    """The share of a causal decoder's attention FLOPs a fused kernel executes where
    ``windowed_share`` of the layers attend within a sliding ``window`` (FlashAttention's
    ``window_size``, cuDNN's sliding-window attention): such a layer's band of the causal square,
    ``s·W - W²/2`` of ``s²/2``, is ``2W/s - (W/s)²`` of it; 1 without a window or with one no
    shorter than the sequence.  An unfused kernel scores the whole square and masks it."""
    if not window or windowed_share <= 0.0 or window >= seq:
        return 1.0
    ratio = window / seq
    band = 2.0 * ratio - ratio * ratio
    return 1.0 - windowed_share + windowed_share * band


def attention_time_factor(
    gpu: GpuSpec,
    kernel: str,
    *,
    causal: bool,
    flash: bool,
    backward_share: float = ATTENTION_BACKWARD_SHARE,
    window_share: float = 1.0,
) -> float:
    """Time of the attention core against its counted FLOPs run at the matmul rate, for counted
    FLOPs of which ``backward_share`` are the backward pass's (:data:`ATTENTION_BACKWARD_SHARE`
    for a step without recompute, 0 for a recomputed forward pass).

    A fused kernel executes :data:`CAUSAL_ATTENTION_SHARE` of them for a causal decoder; its
    forward pass runs at :func:`attention_kernel_fraction` of the matmul rate, and its backward
    pass executes :data:`FLASH_BACKWARD_FLOPS_RATIO` times its counted FLOPs at
    :data:`FLASH_BACKWARD_SPEED` of the forward's rate.  Without a fused kernel: 1 (the full
    square, at the matmul rate).  ``window_share``: what a causal kernel executes of that under
    sliding windows (:func:`window_attention_share`)."""
    if not flash:
        return 1.0
    executed = CAUSAL_ATTENTION_SHARE * window_share if causal else 1.0
    share = min(max(backward_share, 0.0), 1.0)
    backward = FLASH_BACKWARD_FLOPS_RATIO / FLASH_BACKWARD_SPEED
    return executed * (1.0 - share + share * backward) / attention_kernel_fraction(gpu, kernel)


def attention_extra_flops(
    gpu: GpuSpec,
    kernel: str,
    *,
    causal: bool,
    flash: bool,
    precision: str,
    linear_share: float = 0.0,
    backward_share: float = ATTENTION_BACKWARD_SHARE,
    window_share: float = 1.0,
) -> float:
    """FLOPs to add to a step's counted FLOPs per attention-core FLOP, so that they run in the time
    :func:`attention_time_factor` gives (negative: fewer), for counted FLOPs of which
    ``backward_share`` are the backward pass's.

    The search times a step's FLOPs at one effective peak (:func:`precision_peak`); under fp8 or fp4
    that peak folds the low-bit linear layers in, while the attention core runs at the 16-bit rate,
    so its change is scaled up by the fold (:func:`linear_fold`) to cost its 16-bit time.
    """
    extra = (
        attention_time_factor(
            gpu,
            kernel,
            causal=causal,
            flash=flash,
            backward_share=backward_share,
            window_share=window_share,
        )
        - 1.0
    )
    if precision in LOW_BIT_RECIPES:
        extra *= linear_fold(gpu, precision, linear_share)
    if precision == "tf32" and flash:
        # no fused attention kernel runs on tf32 tensor cores: FlashAttention and cuDNN's take fp16
        # and bf16 only, and PyTorch's memory-efficient kernel takes fp32 on the CUDA cores
        # (cutlass fmha "f32" kernels; measured in this project on one H100 at 29 TFLOP/s forward
        # and backward under allow_tf32, benchmarks/gpu_probe.py): the core runs at the fp32 rate
        extra = (extra + 1.0) * tf32_over_fp32(gpu) - 1.0
    return extra


def tf32_over_fp32(gpu: GpuSpec) -> float:
    """How much faster ``gpu``'s tf32 matmuls run than its fp32 ones (:func:`precision_peak`)."""
    tf32_peak, tf32_share = precision_peak(gpu, "tf32")
    fp32_peak, fp32_share = precision_peak(gpu, "fp32")
    return tf32_peak * tf32_share / (fp32_peak * fp32_share)


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


# A whole run's wall-clock beyond its steady steps: the pauses and slow stretches a published steady
# rate leaves out -- restarts after interruptions and the work they lose, evaluation and logging the
# workload does not state, data-pipeline and storage stalls, planned maintenance and operator
# restarts (configuration and data updates, loss-spike rollbacks), slow nodes found and swapped.
# Measured pairs of one team's steady rate and its whole run's average (loss = steady / average - 1):
# - Llama 3 405B: 400 TFLOPS a GPU (41% BF16 MFU) on its 16,384-GPU layout (Dubey et al. 2024,
#   Table 4; 430 on 8,192, 380 with 128K-token context), against 3.8e25 FLOPs (the paper) in 30.84M
#   H100-hours (model card), 342 TFLOPS: a loss of 0.17 (0.11-0.26 over the three layouts), with
#   Meta's automation restarting within minutes (>90% effective training time, s3.3.4).
# - MPT-7B: 1T tokens in 9.5 days on 440 A100-40GB (databricks.com/blog/mpt-7b), 2,769 tokens/s a
#   GPU, against 3,623 for the same model on 128 A100-40GB in MosaicML's own benchmark table
#   (calibration row C41a): a loss of 0.31.
# - BLOOM 176B: about 150 TFLOPS a GPU steady on 384 A100-80GB (bigscience/bloom model card),
#   1,082,990 GPU-hours over 118 days for 366B tokens (Luccioni et al. 2022, "Estimating the Carbon
#   Footprint of BLOOM"): 6 x 176.2e9 x 366e9 FLOPs over those hours is 99 TFLOPS, a loss of 0.52.
# RUN_TIME_LOSS_FRACTION is the least of them, Llama 3's, as the floor of a whole run's losses: the
# interruptions and checkpoints of failure_overhead count toward it (at 16,384 GPUs they are ~8% of
# the steps; at a few hundred, ~1%, and the floor decides).  Teams with less automation lose more
# (MPT-7B, BLOOM), which the estimate's likely range carries.  The calibration rows' whole runs (C10
# MPT-7B, C12-C13b Llama 2) then sit at 0.76-0.95 with the A100's steady matmul share.
# The losses come with a run's hours on its hardware: a steady benchmark, a speed-run record or an
# hour's fine-tune passes through none of these events (calibration rows C2, 8 H100 for 45 min, C25
# and C30 meet their wall-clock without them), so the floor ramps in over the steps' first
# RUN_TIME_LOSS_GPU_HOURS GPU-hours (U: the ramp's scale; a job of a few GPU-days carries nearly
# all of it).  GPU-hours, not wall-clock hours, as the interruptions above: spreading a job over
# more GPUs shortens its wall-clock but not the hardware-hours its events come with.
RUN_TIME_LOSS_FRACTION = 0.17
RUN_TIME_LOSS_GPU_HOURS = 48.0


def run_time_losses(steady_gpu_hours: float) -> float:
    """The least share of its steps' time a run of ``steady_gpu_hours`` of steps loses beyond them --
    interruptions, checkpoints, pauses and slow stretches together (see RUN_TIME_LOSS_FRACTION)."""
    if steady_gpu_hours <= 0:
        return 0.0
    return RUN_TIME_LOSS_FRACTION * -math.expm1(-steady_gpu_hours / RUN_TIME_LOSS_GPU_HOURS)


# Kernels a training step launches per kernel of the forward pass: each forward kernel's backward
# pass computes its input's gradient, and a convolution's or linear layer's also its weights'
# (cuDNN's dgrad and wgrad, two GEMMs): about two backward kernels a forward one, three in all (D).
# What the per-kernel floor (InferenceEfficiency.kernel_floor_s) is charged on where a training
# step's kernel count is known from the model's layer table (a diffusion UNet:
# training.diffusion_kernels_per_micro_batch).
TRAINING_KERNELS_PER_FORWARD_KERNEL = 3.0


# -- inference efficiency --------------------------------------------------------------------------


@dataclass(frozen=True)
class InferenceEfficiency:
    """What share of a GPU's peak conv/attention networks reach (inference_efficiency.yaml)."""

    boost_clock_mhz: dict[str, float]
    default_boost_clock_mhz: float
    power_capped_peak_fraction: dict[str, float]
    kernel_floor_cycles: float
    attention_relative: float  # attention kernels' rate / the engine's matmul rate
    engine_fraction: dict[str, dict[str, float]]

    def clock_hz(self, gpu: GpuSpec) -> float:
        return self.boost_clock_mhz.get(gpu.name, self.default_boost_clock_mhz) * 1e6

    def kernel_floor_s(self, gpu: GpuSpec) -> float:
        """The least time one kernel takes on ``gpu`` (launch gap, ramp-up, drain)."""
        return self.kernel_floor_cycles / self.clock_hz(gpu)

    def fraction(self, engine_name: str, gpu: GpuSpec) -> float:
        """Share of the datasheet peak ``engine_name``'s kernels sustain on ``gpu`` with a
        saturating batch: the engine's fraction x the board's power-capped share."""
        table = self.engine_fraction.get(engine_name, self.engine_fraction["pytorch"])
        engine_share = table.get(gpu.name, table.get(gpu.family, table["default"]))
        return engine_share * self.power_capped_peak_fraction.get(gpu.name, 1.0)


def _parse_efficiency(raw: dict[str, Any]) -> InferenceEfficiency:
    return InferenceEfficiency(
        boost_clock_mhz={str(k): float(v) for k, v in raw["boost_clock_mhz"].items()},
        default_boost_clock_mhz=float(raw["default_boost_clock_mhz"]),
        power_capped_peak_fraction={
            str(k): float(v) for k, v in raw["power_capped_peak_fraction"].items()
        },
        kernel_floor_cycles=float(raw["kernel_floor_cycles"]),
        attention_relative=float(raw["attention_relative"]),
        engine_fraction={
            str(e): {str(k): float(v) for k, v in t.items()}
            for e, t in raw["engine_fraction"].items()
        },
    )


@functools.lru_cache(maxsize=1)
def load_inference_efficiency() -> InferenceEfficiency:
    """The bundled inference-efficiency figures (read on first use), from the compact copy
    ``inference_efficiency.json`` of ``inference_efficiency.yaml`` (``scripts/compact_data.py``):
    every training estimate reads its power caps, and importing PyYAML alone took a quote ~25 ms."""
    text = (
        resources.files("planner.data")
        .joinpath("inference_efficiency.json")
        .read_text(encoding="utf-8")
    )
    return _parse_efficiency(json.loads(text)["inference_efficiency"])
