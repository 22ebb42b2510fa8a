"""LLM serving performance from physics: prefill, decode, KV-cache capacity, batching, queueing (pure).

One *replica* is the model on ``tp`` GPUs (tensor parallel).  Everything follows from one function,
:meth:`Replica.step_seconds`: the time of one engine step that advances ``decode_seqs`` running
sequences by a token each and processes ``prefill_tokens`` prompt tokens.  A step

* runs the weight matmuls: they read the weights once (a mixture of experts reads the experts its
  tokens touch) and do ``2 x active params`` FLOPs per token;
* runs attention: it reads the KV cache of every running sequence and does ``4 x layers x heads x
  head_dim x context`` FLOPs per token;
* each of the two is its own roofline, the larger of ``bytes / (bandwidth x the stack's bandwidth
  fraction)`` and ``FLOPs / (peak x the GPU's matmul fraction)`` -- the weight matmuls at their
  compute precision's peak, attention at the 16-bit tensor rate whatever the weights; the weight
  matmuls' fraction is the training one moved to a forward-only matmul of the model's shape (its
  result writes, :meth:`Replica.matmul_fraction`) -- and the two add up: they are separate kernels, one after the other, so a large batch's KV-cache reads do
  not hide behind its matmuls' arithmetic (with TensorRT-LLM's published H100 builds, FP8 weights
  and KV cache, one roofline over both would make Llama 2 7B at batch 768 2.35x faster than
  measured; the sum is within 15%);
* adds two all-reduces per layer across the tensor-parallel GPUs, and the stack's host-side time
  (scheduling, sampling; eager PyTorch: per layer).

From it, for a replica under a load of ``requests_per_s`` with prompt and output lengths given as
a mean (and optionally a 95th percentile):

* **TPOT** (time per output token) is the step time at the running batch, stretched by the prompt
  tokens that share the steps (chunked prefill) or stall them (whole-prompt prefill);
* the running batch follows Little's law, ``B = lambda x (TTFT + (output - 1) x TPOT)``, solved as
  a fixed point; its 95th percentile is ``B + 1.645 sqrt(B)`` (Poisson arrivals);
* **TTFT** (time to first token) is the prompt's own prefill, half a step (p50) or a whole step (p95)
  of waiting for the running step, and the queue of prompts ahead of it: an M/D/1 queue whose
  server is the prefill work, waiting ``rho S / (2 (1 - rho))`` on average with an exponential tail;
* **capacity** is the highest load whose running batch stays within the KV cache and the stack's
  sequence limit, found by bisection; offline throughput is that load's output tokens/s;
* a stack without continuous batching (Hugging Face ``generate``) serves one request at a time: an
  M/D/1 queue whose service is the whole request;
* a stack with *static* batching (``batching: static``: TensorRT's GPT harness before in-flight
  batching, MLPerf Inference v3.1) runs a batch of up to N requests from start to end: their
  prompts prefill together in one step, then the batch decodes one step per token until its
  longest request is done, every request holding its slot (and its KV cache) until then.  Its
  throughput is ``N x mean output / (prefill(N) + (longest - 1) x step(N))``, the longest being
  the output's 95th percentile (the mean where none is given; a batch of many requests runs to
  nearly the longest of them).  Under a load, the requests that arrive while a batch runs form
  the next batch, up to N, which starts as soon as the running one ends, without waiting to
  fill (U: a work-conserving harness, no batching timeout); a request waits on average half a
  running batch (p95: a whole one), then its own batch's prefill.

Beam search (``beam_width`` B > 1) keeps B hypotheses of each request and advances them all each
step, so a running batch of R requests decodes B x R sequences: the weight matmuls and the
all-reduces carry B x R tokens and every beam's query attends over the whole context.  The prompt
is prefilled once (TensorRT-LLM computes a single beam per sequence in the context phase) and its
KV cache is shared by the beams (TensorRT-LLM: "the context kv cache are shared across beams"; each
beam finds its own path through the cache by a ``cache_indirection`` index of shape
``[batch, beam_width, max_seqlen]``, written at sampling; NVIDIA TensorRT-LLM documentation,
"Multi-Head, Multi-Query, and Group-Query Attention", Beam-Search).  The tokens generated after the
prompt differ per beam: each beam holds and reads its own.  So a request holds and a step reads
``prompt + B x generated`` tokens of KV cache (the beams of one request run side by side, so the
shared prompt is read from memory once).  Each step also adds the beam search's own kernels: the
log-softmax and top-2B selection over the B x vocabulary fp32 logits (written once, read once) and
the rewrite of the cache indirection.  A request's output is its best beam: output tokens/s counts
one token per request per step.  The stack's ``max_num_seqs`` (and ``inference.max_batch``) counts
requests, each with its B beams, as TensorRT-LLM's ``max_batch_size`` does beside
``max_beam_width``.

KV cache: ``2 x layers x kv_heads x head_dim`` values per token (grouped-query attention shares
them; ``head_dim`` the model's, else ``hidden / heads``), split over the tensor-parallel GPUs
down to one KV head each.  The stack's memory share less the weights and a prefill workspace is
the KV pool (TensorRT-LLM: its share of the memory those leave free, kv_cache_free_gpu_mem_fraction
"the fraction of free GPU memory" after the model is loaded); the most sequences it holds at the
mean context (prompt + half the output) is the replica's concurrency limit, capped by the stack's
``max_num_seqs``.  TensorRT-LLM's default capacity scheduler, GUARANTEED_NO_EVICT, admits a request
only when the cache can take it to its last token ("to guarantee that a started request is never
paused", TensorRT-LLM performance tuning guide, "Useful Runtime Options"; trtllm-bench throughput's
``--scheduler_policy`` defaults to it): there each running request holds its prompt and its whole
output (the output's 95th percentile, its longest).

Weight formats: fp16/bf16 (2 bytes), fp8 (1 byte; fp8 tensor cores where the GPU has them), int8
and int4 *weight-only* (AWQ/GPTQ-style: 1 and 0.53 bytes including group-128 scales, the matmuls in
16-bit after dequantisation), and two 4-bit floating-point formats (e2m1 values with block scales):

* ``fp4``, NVIDIA NVFP4: an e4m3 scale per 16 values and an fp32 scale per tensor, 4.5 bits a
  weight.  On a GPU with fp4 tensor cores (Blackwell: B200/B300, RTX PRO 6000, RTX 50-series) the
  activations are quantised to NVFP4 too (TensorRT Model Optimizer's NVFP4 checkpoints, W4A4) and
  the matmuls run at the fp4 rate, twice fp8, each reaching less of it than an fp8 matmul of the
  same shape reaches of its own (on the B200 0.85 of the fp8 share, vLLM's CUTLASS kernel benchmarks:
  ``efficiency.FP4_GEMM_SHARE_OF_FP8``).  AMD CDNA4 (MI350X, MI355X) has fp4 matrix cores for
  the OCP MX formats only, and serves NVFP4 weight-only;
* ``mxfp4``, OCP Microscaling MXFP4 (what gpt-oss ships in): an 8-bit power-of-two scale per 32
  values, 4.25 bits a weight.  On Blackwell the stacks pair it with MXFP8 activations (TensorRT-LLM's
  gpt-oss MoE backends: MXFP8 activations x MXFP4 weights on B200/GB200/B300/GB300), and a mixed
  fp4 x fp8 matmul runs at the fp8 rate; CDNA4 is taken the same way (U: its W4A4 MXFP4 kernels
  would run at the fp4 rate).

Elsewhere (Hopper, Ada, Ampere) both are served *weight-only*, like int4: the weights stream at their
4.25 or 4.5 bits and are dequantised to 16-bit in the kernel (vLLM's Marlin and Triton MXFP4/NVFP4
kernels; TensorRT-LLM's Triton MoE backend on H200 takes BF16 activations), the matmuls at the 16-bit
rate.

A stack can run fp8 weights no faster than 16-bit ones (``fp8_matmuls_at_16bit_rate``: the
ROCm builds of vLLM of late 2024 on MI300X, whose hipBLASLt fp8 GEMMs were at parity with bf16):
the weights still stream at one byte, the matmuls run at the 16-bit rate, as int8 weight-only.

The KV cache is 16-bit unless ``kv_precision`` is fp8.  The output head (vocabulary x hidden)
stays 16-bit beside low-bit weights, as the quantisers leave it (``HEAD_16BIT_FORMATS``; llama.cpp's
GGUF quantises it, ``quantizes_head``), and projects only the tokens that are sampled: each
decoding token and a prompt's last, not every prompt token.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from importlib import resources

from planner.config.yamlfile import parse_packaged_yaml
from planner.errors import ConfigError, UnknownNameError
from planner.gpu_specs import GpuSpec
from planner.workload import efficiency as eff
from planner.workload import memory as mem
from planner.workload.parallel import Links

# Bytes per weight by serving format.  int4: 4 bits + a 16-bit scale and zero point per group of
# 128 weights (AWQ/GPTQ default group size) = 4.25 bits.  fp4 (NVFP4): 4 bits + an 8-bit e4m3 scale
# per 16 = 4.5 bits (the per-tensor fp32 scale is negligible; NVIDIA, "Introducing NVFP4 for
# efficient and accurate low-precision inference", 2025).  mxfp4: 4 bits + an 8-bit e8m0 scale per
# 32 = 4.25 bits (OCP Microscaling Formats (MX) v1.0 specification, 2023, table 1).
WEIGHT_BYTES: dict[str, float] = {
    "fp32": 4.0,
    "fp16": 2.0,
    "bf16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 4.25 / 8.0,
    "fp4": 4.5 / 8.0,
    "mxfp4": 4.25 / 8.0,
}
# The 4-bit floating-point weight formats (e2m1 values with block scales).
FP4_FORMATS = ("fp4", "mxfp4")
# The low-bit weight formats whose quantisers leave the output head (the vocabulary projection) in
# 16-bit: NVIDIA's TensorRT Model Optimizer exports FP8, INT4-AWQ and NVFP4 checkpoints with
# "exclude_modules": ["lm_head"] (modelopt/torch/export/unified_export_hf.py in
# NVIDIA/TensorRT-Model-Optimizer, commit 87f791d6: the checkpoints TensorRT-LLM and vLLM serve);
# vLLM's own fp8 and AWQ/GPTQ linear methods quantise the Linear layers, not its ParallelLMHead;
# AutoAWQ and AutoGPTQ quantise the decoder layers only.  A stack whose format quantises the head
# too (llama.cpp's GGUF: Q4_K_M stores output.weight as Q6_K, in its 4.83-bit average) says so
# (``quantizes_head``).
HEAD_16BIT_FORMATS = frozenset({"fp8", "int8", "int4", "fp4", "mxfp4"})
KV_BYTES: dict[str, float] = {"fp16": 2.0, "bf16": 2.0, "fp8": 1.0, "fp32": 4.0}
# Prompt tokens one step processes at most (vLLM V1 max_num_batched_tokens for online serving).
PREFILL_CHUNK_TOKENS = 2048
# Activation workspace per token of a step, in hidden-size values: the widest live tensors of a
# decoder layer (the MLP's up and gate projections, 2 x ~3.5h, plus QKV and residual): 16 values.
WORKSPACE_VALUES_PER_TOKEN = 16


def workspace_bytes(sequences: float, hidden: float, tp: int) -> float:
    """A GPU's activation workspace for the largest step of a replica of ``tp`` GPUs: a prefill
    chunk, or one decode token of each of ``sequences`` (the engine's batch x beams), 16-bit."""
    tokens = max(PREFILL_CHUNK_TOKENS, sequences)
    return tokens * WORKSPACE_VALUES_PER_TOKEN * hidden * 2.0 / tp


# Host memory the CUDA context, kernels and CUDA graphs take on the GPU (vLLM reports ~0.5-1.5 GiB
# of "non-torch" memory): one GiB, the planner's usual framework allowance.
RUNTIME_GIB = mem.FRAMEWORK_FIXED_GIB
# z of the 95th percentile of a normal distribution (the Poisson batch's fluctuation).
Z95 = 1.645
_STEP_ITERATIONS = 60
# How a stack batches requests (serving_stacks.yaml ``batching``): requests join and leave the
# running batch every step; a batch runs from start to end before the next; one request at a time.
BATCHING_KINDS = ("continuous", "static", "one-at-a-time")


@dataclass(frozen=True)
class ServingStack:
    """One serving stack's batching and host-side costs (see serving_stacks.yaml)."""

    name: str
    description: str
    batching: str  # how the stack batches requests (BATCHING_KINDS)
    chunked_prefill: bool
    max_num_seqs: int
    memory_utilization: float
    step_overhead_ms: float
    layer_overhead_ms: float
    bandwidth_fraction: float
    source: str
    hbm_bandwidth_fraction: float | None = None  # replaces bandwidth_fraction on HBM GPUs
    int4_bits: float | None = None  # the stack's 4-bit format, where it is not 4.25 bits
    # GPU time per decoder layer each step beyond the roofline: the launch gaps, ramp-up and tail
    # of the layer's many small kernels, which add to the step however it is batched
    kernel_ms_per_layer: float = 0.0
    # runs beam search with the prompt's KV cache shared by a request's beams (what the model of
    # ``beam_width`` assumes); the others are refused a beam width rather than mis-priced
    beam_search: bool = False
    # built on CUDA alone (TensorRT-LLM): refused on a GPU of another vendor (gpus.yaml vendor)
    cuda_only: bool = False
    # built on ROCm alone (a ROCm build's profile): refused on a GPU of another vendor
    rocm_only: bool = False
    # the weight formats the stack serves (WEIGHT_BYTES keys); empty: every one
    weight_formats: tuple[str, ...] = ()
    # admits a request only when the KV cache can hold it to its last token and never evicts one
    # (TensorRT-LLM's default capacity scheduler, GUARANTEED_NO_EVICT): the requests that run at
    # once each hold their prompt and their whole output, not the mean context (the others grow
    # their cache a block at a time and preempt a request when it runs out)
    reserves_whole_request: bool = False
    # memory_utilization is a share of the memory left once the weights, the runtime and the
    # activation workspace are in place (TensorRT-LLM's kv_cache_free_gpu_mem_fraction), not of
    # the whole GPU (vLLM's gpu_memory_utilization, SGLang's mem_fraction_static)
    memory_share_of_free: bool = False
    # the stack's fp8 linear layers run no faster than 16-bit ones: the weights stream at one
    # byte, but the matmuls reach only the 16-bit tensor rate (ROCm builds of late 2024, whose
    # hipBLASLt fp8 GEMMs were at parity with bf16 on MI300X)
    fp8_matmuls_at_16bit_rate: bool = False
    # the stack's low-bit format quantises the output head too (llama.cpp's GGUF), where the other
    # stacks' quantisers leave it in 16-bit (HEAD_16BIT_FORMATS)
    quantizes_head: bool = False

    @property
    def continuous_batching(self) -> bool:
        """Requests join and leave the running batch every step."""
        return self.batching == "continuous"


def checked_stack(stack: ServingStack, file: str = "serving_stacks.yaml") -> ServingStack:
    """``stack`` when its batching settings hold together, else a :class:`ConfigError` naming the
    field and the fix: an unknown ``batching`` kind, or a batch of fewer than one request."""
    if stack.batching not in BATCHING_KINDS:
        raise ConfigError(
            f"unknown batching kind {stack.batching!r}",
            file=file,
            key_path=f"{stack.name}.batching",
            hint=f"use one of {', '.join(BATCHING_KINDS)}",
        )
    if stack.max_num_seqs < 1:
        raise ConfigError(
            f"a batch of {stack.max_num_seqs} requests serves nothing",
            file=file,
            key_path=f"{stack.name}.max_num_seqs",
            hint="set max_num_seqs to the engine's batch size, 1 or more",
        )
    return stack


# GPU families whose memory is HBM (datasheets); the rest (GeForce, RTX/L-series, T4, Jetson) use
# GDDR or LPDDR.  The P100 is HBM2 in a family (Pascal) the GDDR5 P4 and P40 share; the TITAN V's
# HBM2 puts it in the V100's family.  AMD Instinct MI200 (HBM2e: MI250X, MI250, MI210), MI300
# (HBM3, HBM3e) and MI350 (HBM3E) are HBM parts.
_HBM_FAMILIES = frozenset({"V100", "A100", "H100", "H200", "B200", "MI200", "MI300", "MI350"})


def has_hbm(gpu: GpuSpec) -> bool:
    return gpu.family in _HBM_FAMILIES or gpu.name == "P100"


@functools.lru_cache(maxsize=1)
def load_serving_stacks() -> dict[str, ServingStack]:
    """The bundled serving stacks by name (read on first use)."""
    text = (
        resources.files("planner.data").joinpath("serving_stacks.yaml").read_text(encoding="utf-8")
    )
    stacks = {}
    for raw in parse_packaged_yaml(text):
        fields = {k: raw[k] for k in ServingStack.__dataclass_fields__ if k in raw}
        if "weight_formats" in fields:  # a tuple: a replica is hashed, its stack with it
            fields["weight_formats"] = tuple(fields["weight_formats"])
        stack = ServingStack(**fields)
        stacks[stack.name] = checked_stack(stack)
    return stacks


DEFAULT_STACK = "vllm"


def serving_stack(name: str | None) -> ServingStack:
    """The stack called ``name`` (``None`` or ``auto``: vLLM, the common open-source server)."""
    stacks = load_serving_stacks()
    key = DEFAULT_STACK if name in (None, "", "auto") else str(name).strip().lower()
    if key not in stacks:
        raise UnknownNameError("serving framework", str(name), [*stacks, "auto"])
    return stacks[key]


@dataclass(frozen=True)
class Lengths:
    """A length distribution in tokens: its mean, median and 95th percentile."""

    mean: float
    p50: float
    p95: float

    @classmethod
    def of(cls, mean: float, p95: float | None = None, p50: float | None = None) -> Lengths:
        """From a mean alone (every request that long) or with percentiles."""
        return cls(float(mean), float(p50 if p50 is not None else mean), float(p95 or mean))


@dataclass(frozen=True)
class ModelShape:
    """What serving needs to know about a transformer."""

    params: float
    layers: int
    hidden: int
    heads: int
    kv_heads: int | None = None
    # one attention head's width where it is not hidden / heads (Qwen3: 128 on hidden / heads 64)
    head_dim: float | None = None
    active_params: float | None = None  # mixture of experts: parameters one token uses
    experts: int | None = None
    experts_per_token: int | None = None
    # the input embedding table where the output head is a separate matrix: a step reads one row
    # of it per token (a lookup), not the whole table; a tied table is read whole as the head
    lookup_params: float = 0.0
    vocab: int | None = None  # the output head's width: the logits beam search sorts each step
    # sliding-window attention: ``windowed_layers`` of the layers attend to (and keep the KV cache
    # of) the last ``window_tokens`` tokens only -- vLLM's hybrid KV cache manager, TensorRT-LLM's
    # variable sliding-window attention and SGLang's sliding-window memory pool allocate those
    # layers the window (vLLM docs "Hybrid KV Cache Manager"; TensorRT-LLM docs "Sliding Window
    # Attention"): Gemma 2 and gpt-oss alternate windowed and full layers
    window_tokens: int | None = None
    windowed_layers: int = 0

    @property
    def active(self) -> float:
        return float(self.active_params or self.params)

    @property
    def windowed_share(self) -> float:
        """The share of the layers that attend within a window (0 without one)."""
        if not self.window_tokens or self.windowed_layers <= 0:
            return 0.0
        return min(self.windowed_layers / max(self.layers, 1), 1.0)

    def kv_tokens(self, context: float) -> float:
        """Tokens of KV cache a sequence ``context`` tokens long holds, counted in whole-model
        tokens: a windowed layer keeps at most its window's."""
        share = self.windowed_share
        if share <= 0.0:
            return context
        return (1.0 - share) * context + share * min(context, float(self.window_tokens or 0))

    def prefill_attended(self, prompt_tokens: float) -> float:
        """Tokens a prompt token attends to on average, over the layers: ``p/2`` under causal
        attention over a prompt of ``p``; within a window ``W < p``, ``W - W²/(2p)`` (the band of
        the causal square)."""
        half = prompt_tokens / 2.0
        share = self.windowed_share
        window = float(self.window_tokens or 0)
        if share <= 0.0 or prompt_tokens <= window:
            return half
        banded = window - window * window / (2.0 * prompt_tokens)
        return (1.0 - share) * half + share * banded

    @property
    def head_width(self) -> float:
        """One attention head's width: ``head_dim``, else ``hidden / heads``."""
        return float(self.head_dim or self.hidden / self.heads)

    @property
    def attention_width(self) -> float:
        """The queries' width, ``heads x head_dim``: what the attention FLOPs scale with."""
        return float(self.hidden) if self.head_dim is None else self.heads * self.head_width

    @property
    def matmul_params(self) -> float:
        """Parameters one token multiplies by: the active ones less the embedding lookup."""
        return self.active - self.lookup_params

    @property
    def head_params(self) -> float:
        """The output head's parameters, ``vocab x hidden`` (the tied table where it is one)."""
        return float(self.vocab or 0) * self.hidden


def matmul_precision(weights: str, gpu: GpuSpec) -> str:
    """The unit a weight format's matmuls run on, by its compute precision: fp8 tensor cores for
    fp8 weights where the GPU has them; fp4 tensor cores for NVFP4 (``fp4``) weights and the fp8
    ones for MXFP4 weights with their MXFP8 activations where the GPU has fp4 tensor cores (NVFP4
    on NVIDIA's only); 16-bit otherwise (weight-only int8/int4 and fp4/mxfp4 on older GPUs
    dequantise to 16-bit)."""
    if weights == "fp32":
        return "fp32"
    if weights == "fp8" and gpu.fp8:
        return "fp8"
    if weights == "fp4" and gpu.fp4 and gpu.vendor == "nvidia":
        # NVFP4's e4m3 scale per 16 values is NVIDIA's format; AMD CDNA4's scaled matrix
        # instructions take the OCP MX e8m0 scale per 32 (MXFP4/MXFP6/MXFP8 only), so NVFP4
        # weights are served weight-only there
        return "fp4"
    if weights == "mxfp4" and gpu.fp4 and gpu.fp8:
        return "fp8"
    return "bf16"


@dataclass(frozen=True)
class Replica:
    """The model on ``tp`` GPUs of one kind, served by one stack at one weight format.

    Its derived figures (peaks, matmul fraction, bytes per token) are computed once per replica
    (cached properties of its frozen fields): a serving estimate reads them in each of the
    hundreds of engine steps its fixed points time."""

    model: ModelShape
    gpu: GpuSpec
    tp: int
    links: Links
    stack: ServingStack
    precision: str = "bf16"  # weight format
    kv_precision: str = "fp16"
    beam_width: int = 1  # hypotheses each request decodes per step (1: greedy or sampling)

    # -- memory -----------------------------------------------------------------------------------
    @functools.cached_property
    def bytes_per_weight(self) -> float:
        if self.precision == "int4" and self.stack.int4_bits:
            return self.stack.int4_bits / 8.0
        return WEIGHT_BYTES[self.precision]

    @functools.cached_property
    def bandwidth_bytes_per_s(self) -> float:
        """The memory bandwidth decode streams at: the stack's share of the datasheet figure."""
        share = self.stack.bandwidth_fraction
        if self.stack.hbm_bandwidth_fraction is not None and has_hbm(self.gpu):
            share = self.stack.hbm_bandwidth_fraction
        return self.gpu.memory_bandwidth_gb_per_s * 1e9 * share

    @functools.cached_property
    def weight_bytes_per_gpu(self) -> float:
        return self.model.params * self.bytes_per_weight / self.tp + self._head_extra_bytes

    @functools.cached_property
    def head_16bit(self) -> bool:
        """The output head stays in 16-bit beside low-bit weights (:data:`HEAD_16BIT_FORMATS`)."""
        return self.precision in HEAD_16BIT_FORMATS and not self.stack.quantizes_head

    @functools.cached_property
    def _head_extra_bytes(self) -> float:
        """Bytes on each GPU the 16-bit head holds (and a step reads) beyond its low-bit size."""
        if not self.head_16bit:
            return 0.0
        return self.model.head_params * (WEIGHT_BYTES["bf16"] - self.bytes_per_weight) / self.tp

    @functools.cached_property
    def kv_bytes_per_token_per_gpu(self) -> float:
        """KV cache per token of context on each GPU: KV heads split over the GPUs, at least one."""
        m = self.model
        kv_heads = m.kv_heads or m.heads
        per_gpu_heads = max(kv_heads / self.tp, 1.0)
        return 2.0 * m.layers * per_gpu_heads * m.head_width * KV_BYTES[self.kv_precision]

    def request_kv_tokens(self, prompt_tokens: float, generated_tokens: float) -> float:
        """Tokens of KV cache one request holds: its prompt, shared by its beams, and each beam's
        own generated tokens (``prompt + beam_width x generated``; one beam: the context).  A
        windowed layer (:attr:`ModelShape.windowed_share`) holds each beam's last ``W`` tokens:
        its own generated ones, and the prompt's share of the window, shared."""
        whole = prompt_tokens + self.beam_width * generated_tokens
        share = self.model.windowed_share
        if share <= 0.0:
            return whole
        window = float(self.model.window_tokens or 0)
        windowed = min(max(window - generated_tokens, 0.0), prompt_tokens) + self.beam_width * min(
            window, generated_tokens
        )
        return (1.0 - share) * whole + share * windowed

    @functools.cached_property
    def workspace_bytes_per_gpu(self) -> float:
        """Activations of the largest step (a prefill chunk or a full batch of decodes)."""
        return workspace_bytes(
            self.stack.max_num_seqs * self.beam_width, self.model.hidden, self.tp
        )

    @functools.cached_property
    def kv_pool_bytes_per_gpu(self) -> float:
        """Memory left for the KV cache: the stack's share of the GPU less everything else, or
        (``memory_share_of_free``) its share of what the rest leaves free."""
        others = RUNTIME_GIB * mem.GIB + self.weight_bytes_per_gpu + self.workspace_bytes_per_gpu
        usable = self.gpu.usable_memory_gib * mem.GIB
        if self.stack.memory_share_of_free:
            return (usable - others) * self.stack.memory_utilization
        return usable * self.stack.memory_utilization - others

    def held_context_tokens(self, prompt_tokens: float, output_tokens: float) -> float:
        """The context a running request holds KV cache for, on average over its life: the prompt
        and half its output (``output_tokens`` the mean) as the cache grows a block at a time, or
        the prompt and its whole output (``output_tokens`` the longest it may run to) where the
        stack reserves it at admission (``reserves_whole_request``)."""
        if self.stack.reserves_whole_request:
            return prompt_tokens + output_tokens
        return prompt_tokens + output_tokens / 2.0

    def max_concurrency(self, context_tokens: float, prompt_tokens: float = 0.0) -> int:
        """Requests the KV pool holds at ``context_tokens`` each (of which ``prompt_tokens`` are the
        prompt its beams share), capped by the stack's limit."""
        pool = self.kv_pool_bytes_per_gpu
        if pool <= 0:
            return 0
        shared = min(prompt_tokens, context_tokens)
        held = self.request_kv_tokens(shared, context_tokens - shared)
        fits = int(pool // (self.kv_bytes_per_token_per_gpu * max(held, 1.0)))
        return min(fits, self.stack.max_num_seqs)

    def fits(self, longest_request_kv_tokens: float) -> bool:
        """The weights fit and the KV pool holds ``longest_request_kv_tokens`` of KV cache: one
        request of the longest length, as :meth:`request_kv_tokens` counts it (beam search, and
        the sliding-window layers' window already applied: not windowed a second time here)."""
        return (
            self.kv_pool_bytes_per_gpu
            >= self.kv_bytes_per_token_per_gpu * longest_request_kv_tokens
        )

    # -- time -------------------------------------------------------------------------------------
    @functools.cached_property
    def matmul_unit(self) -> str:
        """The unit the weight matmuls run on: :func:`matmul_precision`, except that fp8 runs at
        the 16-bit rate on a stack whose fp8 GEMMs are no faster (``fp8_matmuls_at_16bit_rate``)."""
        unit = matmul_precision(self.precision, self.gpu)
        if unit == "fp8" and self.precision == "fp8" and self.stack.fp8_matmuls_at_16bit_rate:
            return "bf16"
        return unit

    @functools.cached_property
    def compute_peak_flops(self) -> float:
        """The matmul peak the weights run at (see :attr:`matmul_unit`)."""
        return self.gpu.matmul_peak_flops(self.matmul_unit)

    @functools.cached_property
    def matmul_fraction(self) -> float:
        """Share of :attr:`compute_peak_flops` the weight matmuls sustain: the GPU family's
        calibrated matmul fraction moved to a forward-only matmul of this model's shape on ``tp``
        GPUs (:func:`planner.workload.efficiency.forward_matmul_fraction`; a layer's weights are
        its share of the matmul parameters), and for NVFP4 on fp4 tensor cores the share of it
        block-scaled matmuls reach (:func:`planner.workload.efficiency.fp4_gemm_share`)."""
        m = self.model
        layer_params = m.matmul_params / max(m.layers, 1)
        x = eff.forward_bytes_per_flop(m.hidden, self.tp, layer_params)
        fraction = eff.forward_matmul_fraction(self.gpu, x, self.compute_peak_flops)
        if self.matmul_unit == "fp4":
            # block-scaled NVFP4 matmuls reach less of their peak than fp8 ones
            fraction *= eff.fp4_gemm_share(self.gpu)
        return fraction

    @functools.cached_property
    def _attention_peak(self) -> float:
        """The rate attention's own matmuls (QK^T, PV) run at: the 16-bit tensor rate whatever the
        weights' format.  Quantised weights speed up the weight matmuls only: "even if the rest of
        the network runs in INT8 or FP8, the GPT attention operator works with FP32, FP16, and
        BFloat16 inputs and outputs", an fp8 KV cache being dequantised on the fly (NVIDIA
        TensorRT-LLM documentation, "Multi-Head, Multi-Query, and Group-Query Attention", INT8/FP8
        KV Caches; FP8 context FMHA is an experimental Hopper option, left out)."""
        unit = "fp32" if self.precision == "fp32" else "bf16"
        return self.gpu.matmul_peak_flops(unit) * eff.gemm_fraction(self.gpu)

    def _weights_read(self, tokens: float) -> float:
        """Weight bytes a step reads on each GPU: all of them for a dense model; for a mixture of
        experts the shared part and the experts its ``tokens`` route to (each token picks k of E,
        so E (1 - (1 - k/E)^tokens) experts are touched on average).  An untied input embedding
        is looked up a row per token, not read whole."""
        m = self.model
        if not (m.experts and m.experts_per_token and m.active_params):
            return (
                m.params - m.lookup_params
            ) * self.bytes_per_weight / self.tp + self._head_extra_bytes
        e, k = float(m.experts), float(m.experts_per_token)
        expert = (m.params - m.active_params) / (e - k)
        shared = m.active_params - k * expert - m.lookup_params
        touched = e * (1.0 - (1.0 - k / e) ** max(tokens, 1.0))
        return (
            shared + touched * expert
        ) * self.bytes_per_weight / self.tp + self._head_extra_bytes

    def step_seconds(
        self,
        decode_seqs: float,
        decode_context: float,
        prefill_tokens: float = 0.0,
        prefill_context: float = 0.0,
        decode_prompt: float = 0.0,
    ) -> float:
        """One engine step: ``decode_seqs`` requests at ``decode_context`` tokens of context each
        advance each of their ``beam_width`` beams one token, and ``prefill_tokens`` prompt tokens
        (of prompts ``prefill_context`` long) are processed.  ``decode_prompt``: how much of the
        decode context is the prompt the beams share (it matters only with beam search)."""
        m = self.model
        beams = decode_seqs * self.beam_width
        tokens = beams + prefill_tokens
        if tokens <= 0:
            return 0.0
        kv = self.kv_bytes_per_token_per_gpu
        bandwidth = self.bandwidth_bytes_per_s
        # The weight matmuls and attention are different kernels, run one after the other: each
        # is its own roofline, and the KV cache's reads do not hide behind the matmuls' math.
        # the output head runs on the tokens that are sampled: every decoding beam and the last
        # token of each prompt (prefill_tokens / prefill_context prompts' worth of chunks)
        prompts = prefill_tokens / prefill_context if prefill_context > 0 else 0.0
        sampled = beams + min(prompts, prefill_tokens)
        matmul_s = max(
            self._weights_read(tokens) / bandwidth, self._matmul_flop_seconds(tokens, sampled)
        )
        shared = min(decode_prompt, decode_context)
        kv_read = decode_seqs * self.request_kv_tokens(shared, decode_context - shared)
        attention_ctx = beams * m.kv_tokens(decode_context) + prefill_tokens * m.prefill_attended(
            prefill_context
        )
        attention_s = max(
            kv * (kv_read + prefill_tokens) / bandwidth,
            4.0 * m.layers * m.attention_width * attention_ctx / self.tp / self._attention_peak,
        )
        gpu_s = (
            matmul_s
            + attention_s
            + self._beam_search_seconds(decode_seqs, decode_context)
            + self.stack.kernel_ms_per_layer * 1e-3 * m.layers
        )
        host_s = self.stack.layer_overhead_ms * 1e-3 * m.layers
        return self.stack.step_overhead_ms * 1e-3 + max(gpu_s, host_s) + self._tp_seconds(tokens)

    def _matmul_flop_seconds(self, tokens: float, sampled: float | None = None) -> float:
        """The weight matmuls' arithmetic on each GPU for ``tokens`` tokens, of which ``sampled``
        (all where not given) go through the output head: ``2 x params`` FLOPs a token at
        :attr:`compute_peak_flops` x :attr:`matmul_fraction`.  The head projects only the tokens
        whose next token is drawn -- the decoding ones and each prompt's last: vLLM's
        LogitsProcessor prunes the hidden states to the sampled positions before the LM head, and
        TensorRT-LLM gathers the last context token's logits unless an engine is built with
        --gather_context_logits.  A 16-bit head (:attr:`head_16bit`) beside fp8 or fp4 matmuls
        runs at the 16-bit rate."""
        m = self.model
        sampled = tokens if sampled is None else sampled
        head = min(m.head_params, m.matmul_params)
        peak = self.compute_peak_flops * self.matmul_fraction
        body_s = 2.0 * tokens / self.tp * (m.matmul_params - head) / peak
        head_peak = peak
        if self.head_16bit and self.matmul_unit not in ("bf16", "fp16", "fp32"):
            layer_params = m.matmul_params / max(m.layers, 1)
            x = eff.forward_bytes_per_flop(m.hidden, self.tp, layer_params)
            peak16 = self.gpu.matmul_peak_flops("bf16")
            head_peak = peak16 * eff.forward_matmul_fraction(self.gpu, x, peak16)
        return body_s + 2.0 * sampled / self.tp * head / head_peak

    def _beam_search_seconds(self, decode_seqs: float, context: float) -> float:
        """The beam search's own memory traffic each step (nothing without it): every beam's fp32
        logits over the vocabulary, written by the output head and read by the log-softmax and
        top-2B selection, and the int32 cache indirection of every beam over its context, read
        and rewritten.  The logits are whole on each tensor-parallel GPU (gathered for sampling)."""
        if self.beam_width <= 1 or decode_seqs <= 0:
            return 0.0
        beams = decode_seqs * self.beam_width
        logits = 2.0 * beams * float(self.model.vocab or 0) * 4.0
        indirection = 2.0 * beams * context * 4.0
        return (logits + indirection) / self.bandwidth_bytes_per_s

    def _tp_seconds(self, tokens: float) -> float:
        """Two all-reduces of the step's activations per layer across the tensor-parallel GPUs."""
        if self.tp <= 1:
            return 0.0
        size = tokens * self.model.hidden * 2.0
        ring = 2.0 * (self.tp - 1) / self.tp * size / self.links.intra_bytes_per_s
        latency = eff.COLLECTIVE_LATENCY_S.get(self.links.intra_kind, 25e-6)
        return 2 * self.model.layers * (ring + latency)

    def prefill_seconds(
        self,
        prompt_tokens: float,
        decode_seqs: float = 0.0,
        context: float = 0.0,
        decode_prompt: float = 0.0,
    ) -> float:
        """Time to process a whole prompt alongside ``decode_seqs`` running requests (whose
        contexts start with ``decode_prompt`` shared tokens): one step per chunk (a stack without
        chunked prefill runs the prompt alone in one step).  The prompt is one sequence however
        many beams will decode it."""
        if not self.stack.chunked_prefill:
            return self.step_seconds(0.0, 0.0, prompt_tokens, prompt_tokens)
        chunks = max(1, math.ceil(prompt_tokens / PREFILL_CHUNK_TOKENS))
        per = prompt_tokens / chunks
        return chunks * self.step_seconds(decode_seqs, context, per, prompt_tokens, decode_prompt)

    def prefill_work_seconds(
        self, prompt_tokens: float, decode_seqs: float, context: float, decode_prompt: float = 0.0
    ) -> float:
        """The step time a prompt adds when it rides along the decoding batch (chunked prefill) or
        takes on its own (whole-prompt prefill): what the prompts ahead of a request cost it."""
        if not self.stack.chunked_prefill:
            return self.step_seconds(0.0, 0.0, prompt_tokens, prompt_tokens)
        return self.prefill_seconds(
            prompt_tokens, decode_seqs, context, decode_prompt
        ) - self.step_seconds(decode_seqs, context, decode_prompt=decode_prompt) * max(
            1, math.ceil(prompt_tokens / PREFILL_CHUNK_TOKENS)
        )


@dataclass(frozen=True)
class ServingPoint:
    """One replica's latency and throughput at one load (times in milliseconds)."""

    requests_per_s: float  # the load the figures are for (the capacity when none was given)
    overloaded: bool  # the load asked for is beyond the capacity; figures are at the capacity
    concurrency: float  # mean sequences running
    max_concurrency: int
    ttft_ms_p50: float
    ttft_ms_p95: float
    tpot_ms_p50: float
    tpot_ms_p95: float
    e2e_ms_p50: float
    e2e_ms_p95: float
    throughput_tokens_per_s: float  # output tokens/s at this load
    capacity_requests_per_s: float
    capacity_tokens_per_s: float  # output tokens/s at the capacity (offline throughput)
    prefill_share: float  # share of the replica's time spent on prompts

    @property
    def capacity_used(self) -> float:
        return (
            self.requests_per_s / self.capacity_requests_per_s
            if self.capacity_requests_per_s
            else math.inf
        )


def wait_quantile(mean_wait: float, rho: float, q: float) -> float:
    """The q-quantile of a queue's waiting time with mean ``mean_wait``: zero with probability
    1 - rho, exponential tail otherwise (P(W > t) = rho exp(-rho t / mean_wait))."""
    if rho <= 0 or mean_wait <= 0 or rho <= 1.0 - q:
        return 0.0
    return mean_wait / rho * math.log(rho / (1.0 - q))


@dataclass(frozen=True)
class _State:
    """The steady state of a continuously batching replica at one load."""

    batch: float
    step_s: float  # decode step time, prompts' share included (= TPOT)
    rho: float  # share of time on prompts
    prefill_s: float  # one mean prompt's own prefill time at this batch


def _steady_state(
    r: Replica, rate: float, prompt: Lengths, output: Lengths, limit: int
) -> _State | None:
    """The fixed point of Little's law at ``rate`` requests/s, or None when the batch it needs
    exceeds ``limit`` or the prompts alone keep the replica busy.

    The iteration starts from a batch of one.  A prompt's added work can shrink as the batch
    grows: a mixture of experts' prompt reads experts a small decode batch does not touch, and a
    large batch touches them all already (:meth:`Replica._weights_read`), so at one running request
    eight Mixtral 8x7B prompts a second keep an H100 busy on their own while at hundreds they cost a
    few microseconds each.  Where the prompts fill the replica at the batch reached so far, the
    batch is doubled (up to ``limit``) before the load is called too high: only at ``limit``, the
    most the replica runs, do the prompts' own work decide it."""
    batch = 1.0
    state = None
    for _ in range(_STEP_ITERATIONS):
        state = _little(r, rate, prompt, output, batch)
        if state is None:  # the prompts alone keep the replica busy at this batch
            if batch >= limit:
                return None
            batch = min(2.0 * batch, float(limit))
            continue
        if abs(state.batch - batch) <= 1e-4 * batch:
            break
        batch = state.batch
    else:
        # still growing after the iterations: near the highest load the map approaches its fixed
        # point slowly, and the last batch may sit below ``limit`` with the fixed point above it.
        # The map grows with the batch, so a fixed point within ``limit`` exists where the batch
        # it gives at ``limit`` is no more than ``limit``: find it by bisection, or there is none
        if state is None or state.batch > limit:
            return None
        return _fixed_point(r, rate, prompt, output, batch, float(limit))
    if state is None or state.batch > limit:
        return None
    return state


def _little(
    r: Replica, rate: float, prompt: Lengths, output: Lengths, batch: float
) -> _State | None:
    """One step of Little's law at ``rate``: the batch the step time at ``batch`` running requests
    implies (a request's time to first token and its decode steps, x ``rate``), or None where the
    prompts alone keep the replica busy."""
    context = prompt.mean + output.mean / 2.0
    rho = rate * r.prefill_work_seconds(prompt.mean, batch, context, prompt.mean)
    if rho >= 1.0:
        return None
    step = r.step_seconds(batch, context, decode_prompt=prompt.mean) / (1.0 - rho)
    prefill = r.prefill_seconds(prompt.mean, batch, context, prompt.mean)
    ttft = step / 2.0 + prefill
    new_batch = max(rate * (ttft + max(output.mean - 1.0, 0.0) * step), 1.0)
    return _State(new_batch, step, rho, prefill)


def _fixed_point(
    r: Replica, rate: float, prompt: Lengths, output: Lengths, low: float, high: float
) -> _State | None:
    """The steady state between ``low`` (a batch whose implied batch is larger) and ``high``, by
    bisection on the batch, or None where even ``high`` implies a larger one."""
    top = _little(r, rate, prompt, output, high)
    if top is None or top.batch > high:
        return None
    for _ in range(_STEP_ITERATIONS):
        mid = (low + high) / 2.0
        state = _little(r, rate, prompt, output, mid)
        if state is not None and state.batch <= mid:
            high = mid
        else:
            low = mid
        if high - low <= 1e-4 * high:
            break
    return _little(r, rate, prompt, output, high)


@functools.lru_cache(maxsize=1024)
def _capacity(
    r: Replica, prompt: Lengths, output: Lengths, limit: int
) -> tuple[float, _State | None]:
    """The highest load (requests/s) the replica sustains, by bisection on the steady state, and
    the steady state at that load (None where no load has one): serving at capacity reads it here
    rather than iterating to it again, which near capacity takes the iterations' whole budget and
    a bisection (was: a batch job's estimate ~220 steps of Little's law, 7 ms)."""
    context = prompt.mean + output.mean / 2.0
    # an upper bound: the batch at its limit with no prompt stalls
    hi = limit / (
        output.mean * r.step_seconds(limit, context, decode_prompt=prompt.mean)
        + r.prefill_work_seconds(prompt.mean, limit, context, prompt.mean)
    )
    hi = max(hi, 1e-9) * 2.0
    lo = 0.0
    at_lo: _State | None = None
    for _ in range(60):
        mid = (lo + hi) / 2.0
        state = _steady_state(r, mid, prompt, output, limit)
        if state is None:
            hi = mid
        else:
            lo, at_lo = mid, state
        if hi - lo <= 1e-6 * hi:
            break
    return lo, at_lo


def serve(
    r: Replica, prompt: Lengths, output: Lengths, requests_per_s: float | None = None
) -> ServingPoint:
    """Latency and throughput of replica ``r`` at ``requests_per_s`` (None: at its capacity).

    Raises :class:`ConfigError` when not one request of the longest length (with its beams) fits.
    """
    longest = r.request_kv_tokens(prompt.p95, output.p95)
    if not r.fits(longest):
        beams = f" ({r.beam_width} beams)" if r.beam_width > 1 else ""
        raise ConfigError(
            f"{r.model.params / 1e9:.1f}B parameters in {r.precision} on {r.tp} x {r.gpu.name} "
            f"leave no room for one {prompt.p95 + output.p95:,.0f}-token request{beams}",
            hint="use more GPUs per replica (tensor parallel), a bigger GPU or 4-bit weights "
            "(int4, fp4, mxfp4)",
        )
    context = prompt.mean + output.mean / 2.0
    # a stack that reserves a request's whole output reserves what it may run to: the longest
    # output the workload gives (its 95th percentile; the mean where it gives none)
    grown = output.p95 if r.stack.reserves_whole_request else output.mean
    limit = max(r.max_concurrency(r.held_context_tokens(prompt.mean, grown), prompt.mean), 1)
    if r.stack.batching == "static":
        return serve_static(r, prompt, output, min(r.stack.max_num_seqs, limit), requests_per_s)
    if not r.stack.continuous_batching:
        return _serve_one_at_a_time(r, prompt, output, requests_per_s)
    cap, at_cap = _capacity(r, prompt, output, limit)
    rate = cap if requests_per_s is None else float(requests_per_s)
    overloaded = requests_per_s is not None and rate > cap
    if overloaded or rate <= 0:
        rate = cap if overloaded else max(rate, 1e-9)
    state = at_cap if rate == cap else None
    state = (
        state
        or _steady_state(r, rate, prompt, output, limit)
        or _steady_state(r, cap * (1 - 1e-6), prompt, output, limit)
    )
    assert state is not None  # the capacity is a load the steady state exists for
    batch95 = min(state.batch + Z95 * math.sqrt(state.batch), float(limit))
    step95 = r.step_seconds(batch95, context, decode_prompt=prompt.mean) / (1.0 - state.rho)
    # the queue of prompts: an M/D/1 server whose service is a prompt's added work
    work = r.prefill_work_seconds(prompt.mean, state.batch, context, prompt.mean)
    wait = state.rho * work / (2.0 * (1.0 - state.rho)) if state.rho < 1 else math.inf
    ttft50 = (
        state.step_s / 2.0
        + r.prefill_seconds(prompt.p50, state.batch, context, prompt.mean)
        + wait_quantile(wait, state.rho, 0.5)
    )
    ttft95 = (
        step95
        + r.prefill_seconds(prompt.p95, batch95, context, prompt.mean)
        + wait_quantile(wait, state.rho, 0.95)
    )
    return ServingPoint(
        requests_per_s=rate,
        overloaded=overloaded,
        concurrency=state.batch,
        max_concurrency=limit,
        ttft_ms_p50=ttft50 * 1e3,
        ttft_ms_p95=ttft95 * 1e3,
        tpot_ms_p50=state.step_s * 1e3,
        tpot_ms_p95=step95 * 1e3,
        e2e_ms_p50=(ttft50 + max(output.p50 - 1.0, 0.0) * state.step_s) * 1e3,
        e2e_ms_p95=(ttft95 + max(output.p95 - 1.0, 0.0) * step95) * 1e3,
        throughput_tokens_per_s=rate * output.mean,
        capacity_requests_per_s=cap,
        capacity_tokens_per_s=cap * output.mean,
        prefill_share=state.rho,
    )


def _serve_one_at_a_time(
    r: Replica, prompt: Lengths, output: Lengths, requests_per_s: float | None
) -> ServingPoint:
    """A stack that runs one request to its end before the next: an M/D/1 queue whose service is
    the whole request (prefill, then one step per output token)."""

    def service(p: float, o: float) -> tuple[float, float, float]:
        pre = r.prefill_seconds(p)
        tpot = r.step_seconds(1.0, p + o / 2.0, decode_prompt=p)
        return pre, tpot, pre + max(o - 1.0, 0.0) * tpot

    pre50, tpot50, s_mean = service(prompt.mean, output.mean)
    pre95, tpot95, _ = service(prompt.p95, output.p95)
    cap = 1.0 / s_mean
    rate = cap if requests_per_s is None else float(requests_per_s)
    overloaded = requests_per_s is not None and rate >= cap
    rate = min(rate, cap)
    rho = rate * s_mean
    # offline (no load given) or beyond the capacity: the figures of back-to-back requests, with
    # no queue in front of them
    queued = requests_per_s is not None and not overloaded
    wait = rho * s_mean / (2.0 * (1.0 - rho)) if queued else 0.0
    ttft50 = pre50 + wait_quantile(wait, rho, 0.5)
    ttft95 = pre95 + wait_quantile(wait, rho, 0.95)
    return ServingPoint(
        requests_per_s=rate,
        overloaded=overloaded,
        concurrency=1.0,
        max_concurrency=1,
        ttft_ms_p50=ttft50 * 1e3,
        ttft_ms_p95=ttft95 * 1e3,
        tpot_ms_p50=tpot50 * 1e3,
        tpot_ms_p95=tpot95 * 1e3,
        e2e_ms_p50=(ttft50 + max(output.p50 - 1.0, 0.0) * tpot50) * 1e3,
        e2e_ms_p95=(ttft95 + max(output.p95 - 1.0, 0.0) * tpot95) * 1e3,
        throughput_tokens_per_s=rate * output.mean,
        capacity_requests_per_s=cap,
        capacity_tokens_per_s=cap * output.mean,
        prefill_share=rate * pre50,
    )


@dataclass(frozen=True)
class StaticBatch:
    """One static batch from start to end (seconds): its prompts prefilled together in one step,
    then one decode step per token of its longest output, every request keeping its slot."""

    requests: float  # requests in the batch
    prefill_s: float  # the batch's prompts, one step (it gives each request its first token)
    step_s: float  # one decode step of the whole batch, at its mean context over the batch's life
    steps: float  # decode steps after the prefill: the longest output less its first token

    @property
    def seconds(self) -> float:
        """The batch's whole time: ``prefill_s + steps x step_s``."""
        return self.prefill_s + self.steps * self.step_s


def static_batch(r: Replica, requests: float, prompt: Lengths, output: Lengths) -> StaticBatch:
    """A static batch of ``requests`` on ``r``: it runs until its longest request (the output's
    95th percentile) is done, so every request decodes for as many steps as the longest, at the
    context the batch holds on average (the prompt and half the longest output).

    Raises :class:`ConfigError` for a batch of fewer than one request."""
    if not requests >= 1:
        raise ConfigError(
            f"a static batch of {requests:g} requests serves nothing",
            key_path="inference.max_batch",
            hint="set inference.max_batch (the engine's batch size) to 1 or more",
        )
    longest = max(output.p95, output.mean)
    context = prompt.mean + longest / 2.0
    return StaticBatch(
        requests=float(requests),
        prefill_s=r.step_seconds(0.0, 0.0, requests * prompt.mean, prompt.mean),
        step_s=r.step_seconds(requests, context, decode_prompt=prompt.mean),
        steps=max(longest - 1.0, 0.0),
    )


def _busy_wait_quantile(batch_s: float, busy: float, q: float) -> float:
    """The q-quantile of the wait for a running batch to end: none with probability 1 - busy,
    else uniform over the batch's time (a request arrives at a random point of it)."""
    if busy <= 0 or busy <= 1.0 - q:
        return 0.0
    return batch_s * (q - (1.0 - busy)) / busy


def serve_static(
    r: Replica,
    prompt: Lengths,
    output: Lengths,
    batch: int,
    requests_per_s: float | None = None,
) -> ServingPoint:
    """Latency and throughput of ``r`` running static batches of up to ``batch`` requests at
    ``requests_per_s`` (None: back to back, full: offline throughput).

    Capacity: ``batch x`` :meth:`StaticBatch.seconds` ``^-1`` requests/s.  Under a lighter load
    the next batch is the requests that arrived while one ran, ``b = rate x T(b)`` between 1 and
    ``batch`` (U: it starts at once, no timeout waiting to fill); the replica is busy a share
    ``rate x T(b) / b`` of the time, and a request waits for the running batch to end (uniform
    over it), then for its own batch's prefill.  A batch's requests come back together when its
    longest ends (the batch "is not concluded until the slowest element of the batch completes"),
    so the end-to-end time is the wait and the whole batch, at p50 and p95 alike.

    Raises :class:`ConfigError` for a batch of fewer than one request."""
    full = static_batch(r, batch, prompt, output)
    cap = batch / full.seconds
    rate = cap if requests_per_s is None else float(requests_per_s)
    overloaded = requests_per_s is not None and rate >= cap
    queued = requests_per_s is not None and not overloaded
    rate = min(max(rate, 1e-12), cap)
    run, size = full, float(batch)
    if queued:
        size = 1.0
        for _ in range(_STEP_ITERATIONS):
            run = static_batch(r, size, prompt, output)
            new = min(max(rate * run.seconds, 1.0), float(batch))
            if abs(new - size) <= 1e-6 * size:
                break
            size = new
        run = static_batch(r, size, prompt, output)
    # offline or beyond the capacity: back-to-back batches with no queue in front of them
    busy = min(rate * run.seconds / size, 1.0) if queued else 0.0
    ttft50 = run.prefill_s + _busy_wait_quantile(run.seconds, busy, 0.5)
    ttft95 = run.prefill_s + _busy_wait_quantile(run.seconds, busy, 0.95)
    decode_s = run.steps * run.step_s
    return ServingPoint(
        requests_per_s=rate,
        overloaded=overloaded,
        concurrency=size,
        max_concurrency=batch,
        ttft_ms_p50=ttft50 * 1e3,
        ttft_ms_p95=ttft95 * 1e3,
        tpot_ms_p50=run.step_s * 1e3,
        tpot_ms_p95=run.step_s * 1e3,
        e2e_ms_p50=(ttft50 + decode_s) * 1e3,
        e2e_ms_p95=(ttft95 + decode_s) * 1e3,
        throughput_tokens_per_s=rate * output.mean,
        capacity_requests_per_s=cap,
        capacity_tokens_per_s=cap * output.mean,
        prefill_share=run.prefill_s / run.seconds if run.seconds > 0 else 0.0,
    )
