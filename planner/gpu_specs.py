"""The GPU catalog: specs per GPU model and name resolution.

Figures live in ``planner/data/gpus.yaml`` with their sources, and are read at run time from its
compact copy ``gpus.json`` (``scripts/compact_data.py``); this module loads them (lazily, once)
into frozen :class:`GpuSpec` values and resolves the many names people use for a GPU
(``a100 80gb``, ``H100-SXM``, ``NVIDIA H100 80GB HBM3``) to one canonical name.
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import asdict, dataclass, field
from importlib import resources
from typing import Any

from planner.errors import (
    ConfigError,
    UnknownNameError,
    checked_arguments,
    checked_fields,
    foreign_digits_error,
    is_number,
    lookalike_note,
    one_each_hint,
    suggest,
)


@checked_fields
@dataclass(frozen=True)
class GpuSpec:
    """Dense peak figures for one GPU model (one chip + memory size)."""

    name: str
    family: str
    memory_gib: float
    memory_bandwidth_gb_per_s: float
    tensor_tflops_dense: float
    bf16: bool
    fp32_tflops: float
    tdp_w: float
    gpu_link: str
    gpu_link_gb_per_s: float
    segment: str
    source: str
    aliases: tuple[str, ...] = field(default=())
    fp8: bool = False  # fp8 tensor cores (Hopper, Ada, Blackwell) at twice the 16-bit rate
    fp4: bool = False  # fp4 (e2m1, block-scaled) tensor cores (Blackwell) at twice the fp8 rate
    fp4_tflops_dense: float | None = None  # the dense fp4 peak where it is not twice fp8 (B300)
    # what a job can allocate where it is less than memory_gib: GDDR6 parts that ship with ECC on
    # give 1/16 of it to the check bits (gpus.yaml); None: memory_gib
    ecc_usable_memory_gib: float | None = None
    vendor: str = "nvidia"  # nvidia or amd: the software stack (CUDA or ROCm) the GPU runs
    # fp32_tflops counts a second FP32 datapath that also runs the SM's INT32 work (Ampere GA10x,
    # Ada, consumer Blackwell; gpus.yaml), whose doubled peak a CUDA-core SGEMM keeps less busy
    # (planner.workload.efficiency.SHARED_DATAPATH_SGEMM_SHARE)
    fp32_shares_int32: bool = False
    # False on a board without tensor cores (Kepler, Maxwell, Pascal, TU116; gpus.yaml), whose
    # 16-bit matmuls and convolutions run on the CUDA cores
    tensor_cores: bool = True
    # the most GPUs one NVLink domain joins (HGX board, DGX-2, NVL72 rack; gpus.yaml); None where
    # the GPU has no NVSwitch
    nvlink_domain_gpus: int | None = None

    @property
    def direct_link(self) -> bool:
        """The GPUs of a machine talk over links of their own rather than PCIe: NVLink (NVSwitch
        boards or bridges) or AMD Infinity Fabric (:data:`DIRECT_LINKS`)."""
        return self.gpu_link in DIRECT_LINKS

    @property
    def all_to_all_link(self) -> bool:
        """A machine of these GPUs wires every pair directly: NVLink through NVSwitch (HGX/DGX
        boards, NVL72 racks) or the fully connected Infinity Fabric mesh of an AMD Instinct
        platform; bridges join pairs only."""
        return self.gpu_link in ("nvlink", "infinity-fabric")

    def check(self) -> GpuSpec:
        """``self``, once its figures are real: a GpuSpec made in Python (an unreleased part) or
        changed with ``dataclasses.replace`` skips the catalog's rows; ``memory_gib=0`` made an
        estimate of infinite GPU-hours.  Raises ConfigError naming the field."""
        for name in (
            "memory_gib",
            "memory_bandwidth_gb_per_s",
            "tensor_tflops_dense",
            "fp32_tflops",
        ):
            value = getattr(self, name)
            if not is_number(value) or not math.isfinite(value) or value <= 0:
                raise ConfigError(
                    f"must be a finite number > 0 in GpuSpec {self.name!r}, got {value!r}",
                    key_path=f"gpu.{name}",
                    hint="copy the figure from the GPU's datasheet (planner gpus lists the "
                    "catalog's)",
                )
        for name in ("gpu_link_gb_per_s", "tdp_w", "ecc_usable_memory_gib", "fp4_tflops_dense"):
            value = getattr(self, name)
            if value is not None and (not is_number(value) or not 0 <= value < math.inf):
                raise ConfigError(
                    f"must be a finite number >= 0 in GpuSpec {self.name!r}, got {value!r}",
                    key_path=f"gpu.{name}",
                    hint="copy the figure from the GPU's datasheet (planner gpus lists the "
                    "catalog's)",
                )
        # the unit flags pick which peak and share a precision's matmuls run at: one given as text
        # ("no", "false") was read by its truth
        for name in ("bf16", "fp8", "fp4", "fp32_shares_int32", "tensor_cores"):
            value = getattr(self, name)
            numpy_bool = type(value).__module__ == "numpy" and type(value).__name__ in (
                "bool",
                "bool_",
            )
            if not (isinstance(value, bool) or numpy_bool):
                raise ConfigError(
                    f"must be True or False in GpuSpec {self.name!r}, got {value!r}",
                    key_path=f"gpu.{name}",
                    hint="copy the flag from a catalog GPU of the same architecture (planner "
                    "gpus lists them)",
                )
        # what a job can allocate (usable_memory_gib) where given: 0 is the infinite GPU-hours of
        # memory_gib=0, and more than the card holds fits jobs that cannot fit
        ecc = self.ecc_usable_memory_gib
        if ecc is not None and not 0 < ecc <= self.memory_gib:
            raise ConfigError(
                f"must be > 0 and at most memory_gib ({self.memory_gib:g}) in GpuSpec "
                f"{self.name!r}, got {ecc!r}",
                key_path="gpu.ecc_usable_memory_gib",
                hint="the memory nvidia-smi shows with ECC on, in GiB; None where it is memory_gib",
            )
        # a link of the GPUs' own carries their collectives (a GPU without one crosses PCIe at
        # its generation's rate: gpu_link none or pcie at 0 GB/s is read so)
        if self.direct_link and self.gpu_link_gb_per_s <= 0:
            raise ConfigError(
                f"must be > 0 for a GPU with a {self.gpu_link} link in GpuSpec {self.name!r}, "
                f"got {self.gpu_link_gb_per_s!r}",
                key_path="gpu.gpu_link_gb_per_s",
                hint="copy the link's bandwidth from the datasheet, or set gpu_link='pcie'",
            )
        return self

    @property
    def usable_memory_gib(self) -> float:
        """GiB a job can allocate: the datasheet memory, less what ECC holds back where it is on
        by default (T4, A10/A10G, L4, L40S)."""
        return self.memory_gib if self.ecc_usable_memory_gib is None else self.ecc_usable_memory_gib

    @property
    def peak_flops(self) -> float:
        """Dense 16-bit tensor peak in FLOP/s."""
        return self.tensor_tflops_dense * 1e12

    def matmul_peak_flops(self, precision: str) -> float:
        """Dense peak of the unit ``precision``'s matmuls run on, FLOP/s: CUDA cores for fp32,
        TF32 tensor cores at half the 16-bit rate, fp8 tensor cores at twice it, fp4 tensor cores
        (where the GPU has them) at twice fp8 or the datasheet's fp4 figure (see gpus.yaml); 16-bit
        tensor cores otherwise."""
        if precision == "fp32":
            return self.fp32_tflops * 1e12
        if precision == "tf32":
            return self.peak_flops / 2.0
        if precision == "fp8":
            return self.peak_flops * 2.0
        if precision == "fp4" and self.fp4:
            return (self.fp4_tflops_dense or self.tensor_tflops_dense * 4.0) * 1e12
        return self.peak_flops

    def cannot_train_in(self, precision: str) -> str | None:
        """Why this GPU cannot train in ``precision`` (None when it can)."""
        lacks = self.lacks_tensor_cores_for(precision)
        if lacks is None:
            return None
        where = {
            "fp8": " (Hopper, Ada or Blackwell has them)",
            "fp4": " (Blackwell has them)",
        }.get(precision, " (Ampere or newer has them)")
        if lacks.startswith("no "):
            return f"{self.name} has {lacks}{where}"
        return f"{self.name}'s {lacks}"

    def lacks_tensor_cores_for(self, precision: str) -> str | None:
        """What this GPU lacks to train in ``precision``, without its name (``no fp8 tensor
        cores``), so that a quote can list the GPUs that lack the same thing together; None when
        it can."""
        if precision in ("bf16", "pure-bf16", "tf32") and not self.bf16:
            return f"no {precision} tensor cores"
        if precision == "fp8" and not self.fp8:
            return "no fp8 tensor cores"
        if precision == "fp4" and not self.fp4:
            return "no fp4 tensor cores"
        if precision == "fp4" and self.vendor != "nvidia":
            # NVFP4's e4m3 scale per 16 values is NVIDIA's; AMD CDNA4's scaled matrix instructions
            # take the OCP MX formats' e8m0 scale per 32 (AMD CDNA4 ISA)
            return "fp4 tensor cores take OCP MXFP4, not NVIDIA's NVFP4"
        return None

    def to_record(self) -> dict[str, Any]:
        record = asdict(self)
        record["aliases"] = list(self.aliases)
        # one figure for what a job can allocate (the catalog's ECC override folded in)
        del record["ecc_usable_memory_gib"]
        record["usable_memory_gib"] = self.usable_memory_gib
        return record


# GPU-to-GPU links that bypass PCIe (gpus.yaml ``gpu_link``): NVLink through NVSwitch, NVLink
# bridges between pairs, AMD Infinity Fabric between the GPUs of an Instinct platform.
DIRECT_LINKS = ("nvlink", "nvlink-bridge", "infinity-fabric")

# Where a canonical name's variant begins (A100-40GB: the A100's 40 GB part).
_SEPARATORS = frozenset(" -_.")


@functools.lru_cache(maxsize=256)
def _model_stems(name: str) -> frozenset[str]:
    """The folded keys that name ``name``'s model at a variant boundary: every prefix of the
    canonical name that ends before a separator (``A100-80GB-PCIe``: ``a100``, ``a10080gb``).
    Only prefixes with a model number count: ``RTX-PRO-6000`` is no ``RTX``."""
    cuts = [i for i, c in enumerate(name) if c in _SEPARATORS]
    stems = (normalize_gpu_key(name[:i]) for i in cuts)
    return frozenset(k for k in stems if any(c.isdigit() for c in k))


# Product lines whose model numbers NVIDIA reused on later cards (GpuCatalog.family).
_PRODUCT_LINES = ("quadro",)


# Accelerators that are no GPU of the catalog's vendors: named as such, not matched to a GPU.
_OTHER_ACCELERATORS = {
    "tpu": "Google TPUs",
    "gaudi": "Intel Gaudi accelerators",
    "habana": "Intel Gaudi accelerators",
    "trainium": "AWS Trainium chips",
    "inferentia": "AWS Inferentia chips",
}


def _not_a_gpu(error: UnknownNameError, name: str) -> None:
    """Say so where ``name`` is an accelerator the catalog does not model (was: "TPU v4: did you
    mean T4 or P4?")."""
    key = normalize_gpu_key(name)
    kind = next((v for k, v in _OTHER_ACCELERATORS.items() if k in key), None)
    if kind is not None:
        error.hint = (
            f"{kind} are not modelled: the catalog holds NVIDIA and AMD GPUs (planner gpus lists "
            "them)"
        )
        error.suggestions = []


@functools.lru_cache(maxsize=1024)
def normalize_gpu_key(name: str) -> str:
    """Fold a GPU name to a lookup key: lower case, no vendor prefix, no separators.  Memoised: a
    quote resolves the same few dozen names several hundred times (each offer table's GPU names,
    every owned machine and candidate shape), two regular-expression passes each."""
    key = name.strip().lower()
    # brand prefixes only: Quadro is a product line whose numbers NVIDIA reused (the Quadro RTX
    # 6000 of 2018 beside the RTX 6000 Ada), so "RTX 6000" alone names neither (GpuCatalog.family)
    key = re.sub(r"^(nvidia|geforce|tesla)\s+", "", key)
    key = key.replace("geforce", "").replace("nvidia", "")
    key = re.sub(r"[\s_\-\.]+", "", key)
    return key.replace("gib", "gb")


@dataclass(frozen=True)
class GpuCatalog:
    """All known GPUs, indexed by canonical name and by folded alias."""

    gpus: tuple[GpuSpec, ...]

    @functools.cached_property
    def _index(self) -> dict[str, GpuSpec]:
        index: dict[str, GpuSpec] = {}
        for gpu in self.gpus:
            for alias in (gpu.name, *gpu.aliases):
                index.setdefault(normalize_gpu_key(alias), gpu)
        return index

    @property
    def names(self) -> list[str]:
        return [g.name for g in self.gpus]

    def get(self, name: str) -> GpuSpec | None:
        """The GPU for ``name`` (any alias, any case), or None."""
        return self._index.get(normalize_gpu_key(name))

    def get_spelled(self, name: str) -> GpuSpec | None:
        """The GPU for a name written with more than the catalog's spellings hold, or None: a
        system's prefix (``DGX H100``, ``HGX B200``: the GPU it carries), a form factor the
        catalog does not split on (``A100-80GB-SXM``), or the memory size after a name that holds
        none (``L40S-48GB``, ``A10G 24GB``, ``B200-180GB``) where it is that GPU's (within 10%:
        ``H100-40GB`` is no H100).  Was: "unknown GPU 'L40S-48GB'; did you mean L40 48GB?"."""
        key = normalize_gpu_key(name)
        for prefix in ("dgx", "hgx"):
            if key.startswith(prefix) and len(key) > len(prefix):
                key = key[len(prefix) :]
        key = re.sub(r"sxm[2-6]?(?!\d)", "", key) if len(key) > 4 else key
        gpu = self.get(key) if key else None
        if gpu is not None:
            return gpu
        for match in re.finditer(r"(?=(\d+(?:\.\d+)?)gb$)", key):
            stem, size = key[: match.start()], float(match.group(1))
            gpu = self.get(stem) if stem else None
            if gpu is not None and size > 0 and abs(gpu.memory_gib - size) <= 0.1 * size:
                return gpu
        return None

    def resolve(
        self, name: str, *, file: str | None = None, key_path: str | None = None
    ) -> GpuSpec:
        """The GPU for ``name``; raises :class:`UnknownNameError` with suggestions on a miss."""
        _check_gpu_name(name, file=file, key_path=key_path)
        gpu = self.get(name) or self.get_spelled(name)
        if gpu is not None:
            return gpu
        family = self.family(name)
        if len(family) > 1:
            raise ConfigError(
                f"GPU name {name!r} is ambiguous",
                file=file,
                key_path=key_path,
                hint="did you mean " + " or ".join(g.name for g in family) + "?",
            )
        if len(family) == 1:
            return family[0]
        error = UnknownNameError("GPU", name, self.names, file=file, key_path=key_path)
        near = self.nearest(name)
        if near:
            # the nearest spellings, aliases included: "H100-SMX" is a slip of the H100's alias
            # H100-SXM, which the canonical names alone (H100, H100-NVL, ...) would not offer
            error.hint = "did you mean " + " or ".join(near) + "?" + lookalike_note(name)
            error.suggestions = near
        self._name_each(error, name)
        _not_a_gpu(error, name)
        counted = self._count_in_name(name)
        if counted is not None:  # 8xH100, H100:8: the count goes in its own field
            models, count, _ = counted
            error.hint = (
                f"did you mean {' or '.join(models[:3])}? A GPU name holds no count: give the {count} GPUs on their "
                f"own (estimate --count {count}; gpus_per_machine: {count} in a hardware file)"
            )
        raise error

    def nearest(self, name: str, n: int = 3) -> list[str]:
        """Up to ``n`` spellings nearest to ``name`` (case-insensitive), one per GPU: its name or
        the alias that matches best, best first."""
        owner = {s.lower(): g.name for g in self.gpus for s in (g.name, *g.aliases)}
        spellings = [s for g in self.gpus for s in (g.name, *g.aliases)]
        out: list[str] = []
        seen: set[str] = set()
        for spelling in suggest(name, spellings, n=10 * n):
            if owner[spelling.lower()] not in seen:
                seen.add(owner[spelling.lower()])
                out.append(spelling)
        return out[:n]

    def _count_in_name(self, name: str) -> tuple[tuple[str, ...], int, str] | None:
        """``8xH100``, ``8 x H100``, ``H100x8``, ``H100:8`` -> ("H100", 8): a GPU named with a
        count, where the name alone is one GPU or a model with variants (``8xA100`` ->
        (("A100-40GB", "A100-80GB", "A100-80GB-PCIe"), 8, "A100"): the GPUs, the count and the
        name as typed); else None."""
        match = _COUNT_FIRST.fullmatch(name) or _COUNT_LAST.fullmatch(name)
        if match is None:
            return None
        gpu = self.get(match.group("gpu"))
        names = (
            (gpu.name,)
            if gpu is not None
            else tuple(g.name for g in self.family(match.group("gpu")))
        )
        if not names:
            return None
        return names, int(match.group("count")), match.group("gpu")

    def family(self, name: str) -> tuple[GpuSpec, ...]:
        """The GPUs ``name`` means as a model with variants, else as a catalog family.

        A model: every GPU whose canonical name is ``name`` followed by a variant (a separator and
        more, :func:`_model_stems`): ``A100`` -> every A100, ``A800`` -> both A800s.  A name that merely starts the same way is
        another product: ``H20`` is not the H200, ``L40`` not the L40S (issue: a bare prefix
        match resolved them to the bigger part).  Failing that, every GPU of the family called
        ``name`` (``GeForce``, ``RTX-Pro``, ``MI300``), and of the families named after it with a
        suffix (``RTX-Pro`` takes in ``RTX-Pro-Blackwell``, the RTX PRO 6000's own efficiency
        family).  A model wins over a family of the same name, so ``A100`` stays the A100s although
        the A800 and A30 share its efficiency family.
        """
        key = normalize_gpu_key(name)
        models = tuple(g for g in self.gpus if key in _model_stems(g.name))
        # and an older product line's part of the same number: "RTX 6000" is the RTX 6000 Ada and
        # the Quadro RTX 6000
        models += tuple(
            g
            for g in self.gpus
            if any(normalize_gpu_key(g.name) == line + key for line in _PRODUCT_LINES)
        )
        if models:
            return models
        if not any(normalize_gpu_key(g.family) == key for g in self.gpus):
            return ()  # "RTX" names no family, though families start with it
        prefix = name.strip().lower() + "-"
        return tuple(
            g
            for g in self.gpus
            if normalize_gpu_key(g.family) == key or g.family.lower().startswith(prefix)
        )

    def match(self, name: str) -> tuple[GpuSpec, ...]:
        """GPUs a user filter means (see :meth:`choice`; a count in it is left to the caller)."""
        return self.choice(name).gpus

    def choice(self, text: str) -> GpuChoice:
        """A GPU choice as the ecosystem writes it (SkyPilot, dstack):

        - a name or alias (``H100``, ``a100 80gb``), else a whole family: ``A100`` is both the
          40 GB and the 80 GB part (the catalog's families; SkyPilot's ``A100`` is the 40 GB one);
        - ``:COUNT`` after it, GPUs per instance exactly: ``H100:8``, ``A100-80GB:8``;
        - ``:MEMORY`` to pick a size within a family: ``A100:80GB``, ``A100:80GB:8``;
        - a memory range instead of a name, every GPU whose memory is within it: ``24GB..``,
          ``40GB..80GB``, ``..16GB`` (GB as the catalog's marketed sizes: 24 for an L4).
        """
        _check_gpu_name(text)
        parts = [p.strip() for p in text.split(":")]
        count = None
        if len(parts) > 1 and _NOT_A_COUNT.fullmatch(parts[-1]):  # H100:-1, H100:1.5
            raise ConfigError(
                f"GPU count in {text!r} must be a whole number from 1 to {_MAX_GPUS_PER_CHOICE}",
                hint=f"GPUs per instance, e.g. H100:8; {GPU_CHOICE_FORMS}",
            )
        if len(parts) > 1 and parts[-1].isdigit():
            # thousands of digits are past int()'s limit on text (a ValueError traceback): any
            # count longer than 5 digits is out of range anyway
            count = int(parts.pop()) if len(parts[-1]) <= 5 else _MAX_GPUS_PER_CHOICE + 1
            if not 1 <= count <= _MAX_GPUS_PER_CHOICE:
                raise ConfigError(
                    f"GPU count in {text!r} must be from 1 to {_MAX_GPUS_PER_CHOICE}",
                    hint=self._memory_meant(parts, count)
                    or f"GPUs per instance, e.g. H100:8; {GPU_CHOICE_FORMS}",
                )
        name, memory = parts[0], parts[1] if len(parts) > 1 else None
        if len(parts) > 2 or any(not p for p in parts):
            swapped = (
                f"did you mean {parts[0]}:{parts[2]}:{parts[1]}? (NAME:MEMORY:COUNT)"
                if len(parts) == 3 and parts[1].isdigit() and _memory_range(parts[2], text)[0]
                else None
            )  # A100:8:40GB: was the list of forms
            raise ConfigError(
                f"cannot read GPU choice {text!r}", hint=swapped or f"write {GPU_CHOICE_FORMS}"
            )
        low, high = _memory_range(memory if memory is not None else name, text)
        if memory is None and (low, high) != (None, None):
            gpus = self.gpus  # a range alone: every GPU
        else:
            gpus = self._named(name)
            if memory is not None and (low, high) == (None, None):
                raise ConfigError(
                    f"cannot read the memory in {text!r}", hint=f"write {GPU_CHOICE_FORMS}"
                )
        picked = tuple(
            g
            for g in gpus
            if (low is None or g.memory_gib >= low - 0.5)
            and (high is None or g.memory_gib <= high + 0.5)
        )
        if not picked:
            raise ConfigError(
                f"no GPU in the catalog matches {text!r}",
                hint="planner gpus lists each GPU with its memory",
            )
        return GpuChoice(text=text, gpus=picked, count=count)

    def _memory_meant(self, parts: list[str], number: int) -> str | None:
        """``did you mean A100:80GB?`` for ``A100:80``, a memory size read as a GPU count (past
        the most GPUs an instance holds), where the GPUs named come in that size."""
        if len(parts) != 1:
            return None
        try:
            named = self._named(parts[0])
        except ConfigError:
            return None
        if not any(abs(g.memory_gib - number) <= 0.5 for g in named):
            return None
        return (
            f"did you mean {parts[0]}:{number}GB? (memory takes its unit; a bare number is a count)"
        )

    def _name_each(self, error: UnknownNameError, name: str) -> None:
        """For GPUs given as one comma-separated list (H100,A100), each a name or family: the
        fix that names each once (was "did you mean H100 or A10?")."""
        pieces = [piece.strip() for piece in name.split(",")]
        if len(pieces) > 1 and all(self.get(p) or self.family(p) for p in pieces):
            error.hint = one_each_hint(pieces)
            error.suggestions = pieces

    def _named(self, name: str) -> tuple[GpuSpec, ...]:
        """An exact name or alias, else a whole family."""
        gpu = self.get(name) or self.get_spelled(name)
        if gpu is not None:
            return (gpu,)
        family = self.family(name)
        if family:
            return family
        error = UnknownNameError("GPU", name, self.names)
        self._name_each(error, name)
        _not_a_gpu(error, name)
        counted = self._count_in_name(name)
        if counted is not None:  # 8xH100: a filter writes the count after a colon
            models, count, typed = counted
            # a filter may name a model with variants (A100:8 is any A100); one GPU by its name
            shown = models[0] if len(models) == 1 else typed
            error.hint = f"did you mean {shown}:{count}? (NAME:COUNT, GPUs per instance)"
        raise error


# A count written into a GPU name: 8xH100, 8 x H100, 8×A100-80GB; H100x8, H100 x 8, H100:8.
_COUNT_FIRST = re.compile(r"\s*(?P<count>\d{1,5})\s*[x×*]\s*(?P<gpu>\S.*?)\s*", re.I)
_COUNT_LAST = re.compile(r"\s*(?P<gpu>\S.*?)\s*(?:[x×*]|:)\s*(?P<count>\d{1,5})\s*", re.I)

# One instance holds at most this many GPUs (an NVL72 rack is the largest NVLink machine).
_MAX_GPUS_PER_CHOICE = 72
GPU_CHOICE_FORMS = (
    "a name (H100, A100-80GB), NAME:COUNT (H100:8), NAME:MEMORY[:COUNT] (A100:80GB:8) or a "
    "memory range (24GB.., 40GB..80GB)"
)
# A number after the last colon that is no count (and no memory: that ends in GB)
_NOT_A_COUNT = re.compile(r"-\d+(?:\.\d*)?|\d+\.\d*")
_MEMORY = re.compile(r"^(\d+(?:\.\d+)?)\s*(?:GB|GiB|G)$", re.I)


def _memory_range(token: str, text: str) -> tuple[float | None, float | None]:
    """``80GB`` -> (80, 80); ``24GB..`` -> (24, None); ``..16GB``; ``40GB..80GB``; anything
    else -> (None, None)."""
    token = token.strip()
    if ".." in token:
        low_text, _, high_text = token.partition("..")
        bounds: list[float | None] = []
        for part in (low_text.strip(), high_text.strip()):
            if not part:
                bounds.append(None)
                continue
            match = _MEMORY.match(part)
            if match is None:
                raise ConfigError(
                    f"cannot read the memory range in {text!r}", hint=f"write {GPU_CHOICE_FORMS}"
                )
            bounds.append(float(match.group(1)))
        if bounds == [None, None]:
            raise ConfigError(f"an empty memory range in {text!r}", hint="e.g. 24GB..")
        low, high = bounds
        if low is not None and high is not None and low > high:  # no GPU matched, said nothing
            raise ConfigError(
                f"the memory range in {text!r} runs from more to less",
                hint=f"did you mean {high_text.strip()}..{low_text.strip()}?",
            )
        return bounds[0], bounds[1]
    match = _MEMORY.match(token)
    if match is None:
        return None, None
    size = float(match.group(1))
    return size, size


@dataclass(frozen=True)
class GpuChoice:
    """One ``--gpu`` choice: the GPU models it allows and, when given, the GPUs per instance."""

    text: str
    gpus: tuple[GpuSpec, ...]
    count: int | None = None

    @property
    def names(self) -> frozenset[str]:
        return frozenset(g.name for g in self.gpus)


def _check_gpu_name(name: object, *, file: str | None = None, key_path: str | None = None) -> None:
    """A GPU name must be a non-blank string (a blank one would prefix-match every GPU)."""
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(
            f"{name!r} is not a GPU name",
            file=file,
            key_path=key_path,
            hint="name a GPU such as H100-SXM or A100-80GB; `planner gpus` lists them",
        )
    digits = foreign_digits_error(name, file=file, key_path=key_path)
    if digits is not None:  # H100:８ was 8 GPUs in a choice, an unknown GPU in a name
        raise digits


def _parse_gpu(raw: dict[str, Any]) -> GpuSpec:
    try:
        return GpuSpec(
            name=str(raw["name"]),
            family=str(raw["family"]),
            memory_gib=float(raw["memory_gib"]),
            memory_bandwidth_gb_per_s=float(raw["memory_bandwidth_gb_per_s"]),
            tensor_tflops_dense=float(raw["tensor_tflops_dense"]),
            bf16=bool(raw["bf16"]),
            fp32_tflops=float(raw["fp32_tflops"]),
            tdp_w=float(raw["tdp_w"]),
            gpu_link=str(raw["gpu_link"]),
            gpu_link_gb_per_s=float(raw["gpu_link_gb_per_s"]),
            segment=str(raw["segment"]),
            source=str(raw["source"]),
            aliases=tuple(str(a) for a in raw.get("aliases", [])),
            fp8=bool(raw.get("fp8", False)),
            fp4=bool(raw.get("fp4", False)),
            vendor=str(raw.get("vendor", "nvidia")),
            fp32_shares_int32=bool(raw.get("fp32_shares_int32", False)),
            tensor_cores=bool(raw.get("tensor_cores", True)),
            nvlink_domain_gpus=(
                int(raw["nvlink_domain_gpus"])
                if raw.get("nvlink_domain_gpus") is not None
                else None
            ),
            ecc_usable_memory_gib=(
                None
                if raw.get("ecc_usable_memory_gib") is None
                else float(raw["ecc_usable_memory_gib"])
            ),
            fp4_tflops_dense=(
                float(raw["fp4_tflops_dense"]) if raw.get("fp4_tflops_dense") is not None else None
            ),
        )
    except KeyError as e:  # a packaging bug, not user input, but say which row
        raise ConfigError(f"GPU entry {raw.get('name')!r} lacks {e}", file="gpus.yaml") from e


@functools.lru_cache(maxsize=1)
def load_gpu_catalog() -> GpuCatalog:
    """The bundled GPU catalog (read on first use, then cached).

    Read from ``gpus.json``, the values of ``gpus.yaml`` written out by
    ``scripts/compact_data.py`` (tests/test_compact_data.py keeps the two equal): every command
    that reads an offer loads the catalog, and PyYAML took ~4 ms to build the YAML's values even
    with libyaml's parser, the JSON module ~0.2 ms."""
    text = resources.files("planner.data").joinpath("gpus.json").read_text(encoding="utf-8")
    rows = json.loads(text)["gpus"]
    return GpuCatalog(tuple(_parse_gpu(r) for r in rows))


@checked_arguments
def resolve_gpu(name: str) -> GpuSpec:
    """Shortcut: resolve a GPU name against the bundled catalog."""
    return load_gpu_catalog().resolve(name)
