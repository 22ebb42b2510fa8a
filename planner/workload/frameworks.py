"""Training software stacks: what each runs fast and which parallel layouts it offers (pure).

A stack changes a training estimate in four physical ways: how close its kernels come to the
calibrated matmul efficiency (``stack``), which attention kernel it runs (``attention``: on Hopper
and newer, FlashAttention-2 reaches about half the rate of cuDNN's fused attention), which layouts
the strategy search may use and which combine (eager FSDP shards with ZeRO but cannot split
layers; Megatron, NeMo, torchtitan split them with tensor and pipeline parallelism; DeepSpeed,
the Hugging Face Trainer and torchtune split them only where a pin asks, DeepSpeed's pipeline
with ZeRO 0 or 1 only: :meth:`FrameworkProfile.zero_with`), and fixed costs (graph compilation).
The profiles and their sources live in ``planner/data/frameworks.yaml``, read on first use from its
compact copy ``frameworks.json`` (``scripts/compact_data.py``).

``auto`` picks the common stack for the job: the Hugging Face Trainer for fine-tuning, and for
pre-training ``any`` (the fastest layout any calibrated stack runs: Megatron, FSDP, torchtitan),
or eager PyTorch (``pytorch-fsdp``) for a model trained on images (:func:`auto_framework`).
Every estimate names the profile it used.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources

from planner.errors import ConfigError, UnknownNameError, suggest
from planner.workload.efficiency import ATTENTION_KERNELS, FP8_SCALING

AUTO = "auto"


@dataclass(frozen=True)
class FrameworkProfile:
    """One stack's efficiency factor, layouts and fixed costs (see frameworks.yaml)."""

    name: str
    description: str
    stack: float
    tensor_parallel: bool
    pipeline_parallel: bool
    zero: tuple[int, ...]
    tp_overlap: bool
    compile_seconds: float
    source: str
    expert_parallel: bool = False  # splits a mixture of experts' experts over GPUs (all-to-all)
    # splits each sequence over GPUs, keys and values passed round a ring in attention (Megatron
    # Core --context-parallel-size, torchtitan's context parallel)
    context_parallel: bool = False
    # how its fp8 recipe picks the cast scales (efficiency.FP8_SCALING): delayed (Transformer
    # Engine: amax history, fused cast) or dynamic (torchao float8: an amax pass per cast tensor)
    fp8_scaling: str = "delayed"
    # its fused attention kernel's class (efficiency.ATTENTION_KERNELS): cudnn (cuDNN fused
    # attention or FlashAttention-3, written for the GPU's own tensor cores) or fa2
    # (FlashAttention-2, PyTorch's scaled_dot_product_attention)
    attention: str = "cudnn"
    # whether it runs a Llama-style layer's gated MLP and RMSNorm in fused kernels (Megatron's
    # SwiGLU fusion, Transformer Engine, compiled graphs) or as separate eager PyTorch operations,
    # which keep more activations (memory.mlp_bytes_per_sbh, memory.fp32_norm_bytes_per_sbh)
    fused_layers: bool = True
    # whether its fp16/bf16 recipe runs eager torch.autocast over fp32 weights under plain data
    # parallel (ZeRO 0): fp32 model states, the 16-bit weight copies autocast keeps for the
    # backward pass, fp32 norm inputs and softmax outputs (memory.autocast_*), the casts' traffic
    # (efficiency.AUTOCAST_CAST_BYTES_PER_PARAM)
    autocast: bool = False
    # host seconds a mixture-of-experts layer costs per micro-batch (forward and backward) while
    # the GPU waits: dropless routing copies the tokens-per-expert counts to the host, which drains
    # the launch queue, and the host then sets up the dispatch and the per-expert GEMMs before the
    # GPU has work again (frameworks.yaml, moe_host_ms_per_layer); 0 for a stack without it
    moe_host_s_per_layer: float = 0.0
    # host seconds a transformer layer's forward and backward pass take to dispatch per
    # micro-batch in an eager stack (frameworks.yaml, eager_host_ms_per_layer): a micro-batch
    # takes the longer of its GPU time and this times its layers; 0 for a fused or compiled stack
    eager_host_s_per_layer: float = 0.0
    # the ZeRO stages it runs together with pipeline / tensor parallelism (None: all of ``zero``):
    # DeepSpeed's pipeline engine refuses ZeRO-2 and -3, its AutoTP training ZeRO-3
    pipeline_zero: tuple[int, ...] | None = None
    tensor_zero: tuple[int, ...] | None = None
    # what it runs but its usual recipes do not set, so the layout search tries it only where
    # training.parallelism pins it: ZeRO stages outside ``searched_zero`` (None: all of ``zero``)
    # and the splits named in ``pinned_only`` ("tensor", "pipeline")
    searched_zero: tuple[int, ...] | None = None
    pinned_only: tuple[str, ...] = ()
    # whether its tensor parallelism splits the norms and dropout over the sequence too (Megatron
    # Core --sequence-parallel); without it they stay whole on every tensor-parallel rank
    sequence_parallel: bool = True
    # whether its tensor parallelism keeps the logits split over the ranks (Megatron's
    # vocabulary-parallel cross entropy) or gathers them whole on every rank
    vocab_parallel_logits: bool = True
    # whether its pipeline runs the interleaved 1F1B schedule (model chunks per rank: Megatron's
    # virtual pipeline stages, torchtitan's Interleaved1F1B) or plain 1F1B only
    interleaved_pipeline: bool = True
    # other names it goes by (its projects, the tools built on it), read as this profile
    aliases: tuple[str, ...] = ()
    # the training methods and precisions it has recipes for (None: every one); a workload asking
    # for another is refused (spec.TrainingSection), its ``stack`` factor being measured on these
    methods: tuple[str, ...] | None = None
    precisions: tuple[str, ...] | None = None
    # whether its AdamW runs as one fused kernel over the parameters (torch's fused=True, Apex and
    # DeepSpeed FusedAdam, Transformer Engine, XLA) or as torch.optim.AdamW's default foreach path,
    # eight elementwise passes (efficiency.FOREACH_ADAMW_TRAFFIC_BYTES)
    fused_optimizer: bool = True
    # whether it pads the vocabulary (or its compiler the matmul) to a multiple of 8, so that the
    # output layer's GEMMs take the aligned tensor-core kernels (efficiency.unaligned_gemm_flops)
    pads_vocab: bool = True
    # whether it runs the model's MLP activation as the model's own code writes it (transformers'
    # ACT2FN: GPT-2's gelu_new as eight kernels of Python arithmetic, efficiency.ARITHMETIC_GELU)
    # or as a fused kernel of its own (LitGPT's F.gelu, Megatron's bias-GeLU fusion, compilers)
    eager_activations: bool = False

    def zero_with(self, *, tp: int, pp: int) -> tuple[int, ...]:
        """The ZeRO stages it runs on a layout of ``tp`` x ``pp``."""
        stages = self.zero
        if pp > 1 and self.pipeline_zero is not None:
            stages = tuple(z for z in stages if z in self.pipeline_zero)
        if tp > 1 and self.tensor_zero is not None:
            stages = tuple(z for z in stages if z in self.tensor_zero)
        return stages

    def recipes(self, key: str) -> tuple[str, ...] | None:
        """The training methods (``key`` "method") or precisions ("precision") it has recipes
        for; None: every one."""
        return self.methods if key == "method" else self.precisions

    def missing_recipes(self, method: str, precision: str) -> tuple[tuple[str, str], ...]:
        """``(key, value)`` for each of ``method`` and ``precision`` it has no recipe for; empty
        where it runs both."""
        return tuple(
            (key, value)
            for key, value in (("method", method), ("precision", precision))
            if (known := self.recipes(key)) is not None and value not in known
        )


@functools.lru_cache(maxsize=1)
def load_frameworks() -> dict[str, FrameworkProfile]:
    """The bundled profiles by name (read on first use, then cached), from ``frameworks.json``: the
    values of ``frameworks.yaml`` written out by ``scripts/compact_data.py`` (JSON reads in a tenth
    of the time PyYAML took)."""
    text = resources.files("planner.data").joinpath("frameworks.json").read_text(encoding="utf-8")
    profiles: dict[str, FrameworkProfile] = {}
    for raw in json.loads(text)["frameworks"]:
        try:
            profile = FrameworkProfile(
                name=str(raw["name"]),
                description=str(raw["description"]),
                stack=float(raw["stack"]),
                tensor_parallel=bool(raw["tensor_parallel"]),
                pipeline_parallel=bool(raw["pipeline_parallel"]),
                zero=tuple(int(z) for z in raw["zero"]),
                tp_overlap=bool(raw["tp_overlap"]),
                compile_seconds=float(raw["compile_seconds"]),
                source=str(raw["source"]).strip(),
                expert_parallel=bool(raw.get("expert_parallel", False)),
                context_parallel=bool(raw.get("context_parallel", False)),
                fp8_scaling=str(raw["fp8_scaling"]),
                attention=str(raw["attention"]),
                fused_layers=bool(raw["fused_layers"]),
                autocast=bool(raw["autocast"]),
                moe_host_s_per_layer=float(raw["moe_host_ms_per_layer"]) / 1e3,
                eager_host_s_per_layer=float(raw["eager_host_ms_per_layer"]) / 1e3,
                pipeline_zero=_stages(raw.get("pipeline_zero")),
                tensor_zero=_stages(raw.get("tensor_zero")),
                searched_zero=_stages(raw.get("searched_zero")),
                pinned_only=tuple(str(k) for k in raw.get("pinned_only", ())),
                sequence_parallel=bool(raw.get("sequence_parallel", True)),
                vocab_parallel_logits=bool(raw.get("vocab_parallel_logits", True)),
                interleaved_pipeline=bool(raw.get("interleaved_pipeline", True)),
                aliases=tuple(str(a) for a in raw.get("aliases", ())),
                methods=_names(raw.get("methods")),
                precisions=_names(raw.get("precisions")),
                fused_optimizer=bool(raw.get("fused_optimizer", True)),
                pads_vocab=bool(raw.get("pads_vocab", True)),
                eager_activations=bool(raw.get("eager_activations", False)),
            )
            for stages in (profile.pipeline_zero, profile.tensor_zero, profile.searched_zero):
                if stages is not None and not set(stages) <= set(profile.zero):
                    raise ValueError("pipeline_zero, tensor_zero and searched_zero must be in zero")
            if not set(profile.pinned_only) <= {"tensor", "pipeline"}:
                raise ValueError("pinned_only may name tensor and pipeline")
            if not profile.moe_host_s_per_layer >= 0.0:
                raise ValueError("moe_host_ms_per_layer must be a number >= 0")
            if not profile.eager_host_s_per_layer >= 0.0:
                raise ValueError("eager_host_ms_per_layer must be a number >= 0")
            if profile.fp8_scaling not in FP8_SCALING:
                raise ValueError(f"fp8_scaling must be one of {', '.join(FP8_SCALING)}")
            if profile.attention not in ATTENTION_KERNELS:
                raise ValueError(f"attention must be one of {', '.join(ATTENTION_KERNELS)}")
        except (KeyError, TypeError, ValueError) as e:  # a packaging bug: say which row
            raise ConfigError(
                f"framework {raw!r} is malformed ({e})", file="frameworks.yaml"
            ) from e
        profiles[profile.name] = profile
    return profiles


def _names(raw: object) -> tuple[str, ...] | None:
    """A list of names from frameworks.yaml (``methods``, ``precisions``); None where not given."""
    if raw is None:
        return None
    if not isinstance(raw, list) or not raw:
        raise ValueError("methods and precisions must be non-empty lists of names")
    return tuple(str(n) for n in raw)


def _stages(raw: object) -> tuple[int, ...] | None:
    """A list of ZeRO stages from frameworks.yaml, None where the key is absent."""
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise ValueError(f"a list of ZeRO stages, not {raw!r}")
    return tuple(int(z) for z in raw)


def canonical_framework(name: str) -> str | None:
    """The profile name (or ``auto``) ``name`` means, whatever its case, with ``_`` or a space for
    ``-`` and an alias for the profile (frameworks.yaml ``aliases``: ``trl`` is ``hf-trainer``,
    ``maxtext`` ``jax``); None for a name no stack goes by."""
    key = "-".join(name.strip().lower().replace("_", "-").split())
    if key in framework_names():
        return key
    for profile in load_frameworks().values():
        if key in profile.aliases:
            return profile.name
    return None


def close_alias(name: str) -> list[str]:
    """The other name of a stack nearest to ``name`` where it is nearer than every profile's
    (``axolotol``: ``axolotl``), for a suggestion; none otherwise."""
    aliases = [a for p in load_frameworks().values() for a in p.aliases]
    key = name.strip().lower()
    near = suggest(key, [*aliases, *framework_names()], n=1)
    return near if near and near[0] in aliases else []


def framework_names() -> list[str]:
    """``auto`` and every profile's name: what ``training.framework`` and ``--framework`` take."""
    return [AUTO, *load_frameworks()]


def auto_framework(*, finetune: bool, images: bool) -> str:
    """The stack ``auto`` means, what such jobs mostly run on: the Hugging Face Trainer for a
    fine-tune; for pre-training, the fastest calibrated stack (``any``: Megatron-class fused
    kernels, as large language-model pre-training runs), except for a model trained on images,
    which eager PyTorch trains (torchvision's and timm's reference scripts, Ultralytics, NVIDIA
    DeepLearningExamples) and only tuned benchmark stacks fuse (MLPerf's MXNet ResNet-50)."""
    if finetune:
        return "hf-trainer"
    return "pytorch-fsdp" if images else "any"


def resolve_framework(
    name: str, *, finetune: bool, images: bool = False
) -> tuple[FrameworkProfile, bool]:
    """(profile, whether it was chosen by ``auto``) for ``name`` (``images``: a model trained on
    images, :func:`auto_framework`)."""
    profiles = load_frameworks()
    if name == AUTO:
        return profiles[auto_framework(finetune=finetune, images=images)], True
    if name not in profiles:
        raise UnknownNameError("framework", name, framework_names(), key_path="training.framework")
    return profiles[name], False
