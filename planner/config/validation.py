"""pydantic validation errors in the words of the YAML file: one translator for every file kind.

:func:`config_error` turns the most useful error of a :class:`pydantic.ValidationError` into a
:class:`~planner.errors.ConfigError` naming the file, the key path and, for misspelt keys or values,
the nearest valid ones.  File kinds differ only in wording (:class:`ErrorWording`): the hardware and
budget files use the defaults, the workload files their own (``planner.workload.spec``).

Validators speak to the translator through two exceptions: :class:`FieldError` (a problem at a key
path below the validated model) and :class:`UnknownName` (a name that is not among the known ones,
reported with "did you mean" suggestions).
"""

from __future__ import annotations

import difflib
import math
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError, model_validator

from planner.errors import (
    EXPECTED_BY_PYDANTIC_ERROR,
    ConfigError,
    UnknownNameError,
    ascii_digits_fix,
    is_credential_name,
    lookalike_note,
    no_credentials_hint,
    suggest,
)
from planner.units import (
    LINK_ALIASES,
    UNIT_WORDS,
    USD,
    key_unit,
    linked_values,
    separated_number,
    unit_factor,
)

Loc = tuple[int | str, ...]


class FieldError(ValueError):
    """Raised by a validator: ``message`` about ``key_path``, relative to the validated model."""

    def __init__(self, key_path: str, message: str) -> None:
        super().__init__(f"{key_path} {message}")
        self.key_path = key_path
        self.message = message


class UnknownName(ValueError):
    """Raised by a validator: ``name`` is not a known ``kind`` (at ``key_path``, relative to the
    validated model); reported as an :class:`~planner.errors.UnknownNameError` with suggestions."""

    def __init__(
        self,
        kind: str,
        name: str,
        choices: Iterable[str],
        *,
        key_path: str,
        hint: Callable[[str | None], str] | None = None,
    ) -> None:
        super().__init__(f"unknown {kind} {name!r}")
        self.kind = kind
        self.name = name
        self.choices = tuple(choices)
        self.key_path = key_path
        self.hint = hint  # the reported hint from the suggestions' one, where given


def _number_kinds(annotation: Any) -> tuple[bool, bool]:
    """Whether a field's annotation takes a number, and whether it takes true/false, anywhere in
    it (unions, ``list[float]``)."""
    if annotation is bool:
        return False, True
    if annotation in (int, float):
        return True, False
    number = boolean = False
    for arg in typing.get_args(annotation):
        n, b = _number_kinds(arg)
        number, boolean = number or n, boolean or b
    return number, boolean


class NumbersNotBools(BaseModel):
    """A section of a YAML file whose number fields refuse true and false: pydantic reads a bool
    as 1 or 0, so ``machines: true`` was one machine and ``capex_usd: false`` free hardware.
    Every file model (workload, hardware, budget) derives from it."""

    @model_validator(mode="before")
    @classmethod
    def _no_bool_numbers(cls, raw: Any) -> Any:
        if not isinstance(raw, dict):
            return raw
        for key, value in raw.items():
            info = cls.model_fields.get(str(key))
            if info is None:
                continue
            number, boolean = _number_kinds(info.annotation)
            if not number or boolean:
                continue
            if isinstance(value, bool):
                raise FieldError(
                    str(key),
                    f"expected a number, got {str(value).lower()}: write the number (YAML reads "
                    "yes, no, on and off as true or false)",
                )
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, bool):
                        raise FieldError(
                            str(key),
                            f"expected a number, got {str(item).lower()} (item {i + 1} of the "
                            "list)",
                        )
        return raw


@dataclass(frozen=True)
class ErrorWording:
    """How one file kind words its errors; the defaults are the hardware and budget files'."""

    # report pydantic's first error rather than the most specific one (an unknown key always wins)
    first_error: bool = False
    # key paths as ``sources.0`` (None at the top) rather than ``sources[0]`` ("(top level)")
    dotted_paths: bool = False
    # append "(and 2 more problems)" when pydantic found more than one
    count_others: bool = False
    missing: str = "required key is missing"
    # what to write for a required key left out, by its dotted path ("kind": its values)
    missing_hints: Mapping[str, str] = field(default_factory=dict)
    # unknown keys: the label of the list of valid keys, whether it is sorted, the extra names a
    # section accepts (aliases, by the section's dotted path), suggestions only for keys that look
    # alike, and hints for keys that belong elsewhere (a key looking like the name -> the hint)
    keys_label: str = "known keys"
    sorted_keys: bool = False
    extra_keys: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    alike_keys_only: bool = False
    misplaced_keys: Mapping[str, str] = field(default_factory=dict)
    # bounds as "must be at least 1, got 0" rather than pydantic's sentence
    bounds_in_words: bool = True
    # the hint for a date where text was expected (YAML reads 2027-01-01 as a date)
    date_hint: str | None = 'YAML read a date; quote it, e.g. start: "2027-01"'


DEFAULT_WORDING = ErrorWording()

# pydantic bound errors: (words, the constraint's name in the error context)
_BOUNDS = {
    "greater_than": ("more than", "gt"),
    "greater_than_equal": ("at least", "ge"),
    "less_than": ("less than", "lt"),
    "less_than_equal": ("at most", "le"),
}

# pydantic error types that only say "the input is not of this union branch's type"
_TYPE_MISMATCH = {
    "list_type",
    "dict_type",
    "model_type",
    "model_attributes_type",
    "float_type",
    "int_type",
    "string_type",
    "bool_type",
    "is_instance_of",
}


def _key_path(loc: Sequence[int | str], wording: ErrorWording) -> str | None:
    if wording.dotted_paths:
        return ".".join(str(part) for part in loc) or None
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _inner_model(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _is_union(annotation: Any) -> bool:
    """A union of two or more types besides None: pydantic tags its errors with the branch."""
    if not (
        isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union
    ):
        return False
    return len([a for a in typing.get_args(annotation) if a is not type(None)]) > 1


def _allowed_keys(model: type[BaseModel], loc: Sequence[int | str]) -> list[str]:
    """Keys allowed at ``loc`` (walking nested models), for "did you mean"."""
    current: Any = model
    for part in loc:
        if isinstance(part, int) or not (
            isinstance(current, type) and issubclass(current, BaseModel)
        ):
            continue
        info = current.model_fields.get(part)
        if info is None:
            break
        current = _inner_model(info.annotation)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


# The names pydantic gives a union's branches in an error's location (``source.str``,
# ``demand_gpu_hours._Growth``): not a key of the file, never shown as one (was the hint
# 'put it in quotes to keep it as text: str: "5"' for ``source: 5``)
_TYPE_TAGS = frozenset({"str", "int", "float", "bool", "list", "dict", "tuple", "set", "none"})


def _type_tag(part: str) -> bool:
    return (
        part in _TYPE_TAGS
        or "[" in part
        or part.startswith(("function-", "_"))
        or (part[:1].isupper() and not part.isupper())
    )


def _field_loc(model: type[BaseModel], loc: Sequence[int | str]) -> Loc:
    """``loc`` in the file's keys: without pydantic's union tags (``demand_gpu_hours._Growth.start``
    -> ``demand_gpu_hours.start``: a part that names no field right after a union-typed field) and
    without validator tags (``function-after[...]``)."""
    out: list[int | str] = []
    current: Any = model
    after_union = False
    for part in loc:
        if isinstance(part, int):
            out.append(part)
            continue
        if part.startswith("function-"):
            continue
        fields = (
            current.model_fields
            if isinstance(current, type) and issubclass(current, BaseModel)
            else {}
        )
        if after_union and part not in fields:
            after_union = False
            continue  # a tag such as 'list[float]', '_Growth', 'str'
        out.append(part)
        info = fields.get(part)
        annotation = info.annotation if info is not None else None
        after_union = _is_union(annotation)
        current = _inner_model(annotation) if annotation is not None else None
    return tuple(out)


def _pick(errors: Sequence[Any], wording: ErrorWording) -> Any:
    """The error to show: a misspelt key before its missing twin; then the first error, or (by
    default) within a union the branch whose type matched the input (its error says what is wrong
    inside it)."""
    for err in errors:
        if err["type"] == "extra_forbidden":
            return err
    if wording.first_error:
        return errors[0]
    for err in errors:
        if err["type"] not in _TYPE_MISMATCH and err["type"] != "missing":
            return err
    return errors[0]


def _missing_in_matched_branch(model: type[BaseModel], errors: Sequence[Any], shown: Any) -> Any:
    """For a union field given a mapping (``demand_gpu_hours: {growth_per_month: 0.04}``), the
    key its mapping branch misses ("demand_gpu_hours.start: required key is missing"), rather
    than another branch's "expected a list"; None when no branch of that field misses a key."""
    field = _field_loc(model, tuple(shown["loc"]))
    for err in errors:
        if err["type"] == "missing" and _field_loc(model, tuple(err["loc"]))[:-1] == field:
            return err
    return None


def _alike(key: str, candidate: str) -> bool:
    """A suggestion worth making: close as a whole, or the typed key is a fragment of it."""
    ratio = difflib.SequenceMatcher(None, key.lower(), candidate.lower()).ratio()
    return ratio >= 0.6 or (ratio >= 0.3 and key.lower().split("_")[0] in candidate.lower())


# Other tools' names for a key: Hugging Face config.json and Trainer arguments, DeepSpeed and
# Megatron options, vLLM / OpenAI-style serving parameters.  difflib matched them to keys that
# only look alike (input_tokens: 'output_tokens', max_position_embeddings: 'tied_embeddings',
# train_tokens: 'eval_tokens', d_model: the hint about deadlines) or to nothing.  Each names the
# key, in the same section, that says the same thing; used only where that key is valid.
KEY_SYNONYMS: Mapping[str, str] = {
    # a model's shape (config.json names)
    "num_hidden_layers": "layers",
    "n_layer": "layers",
    "hidden_size": "hidden",
    "d_model": "hidden",
    "n_embd": "hidden",
    "num_attention_heads": "heads",
    "n_head": "heads",
    "num_key_value_heads": "kv_heads",
    "num_kv_heads": "kv_heads",
    "n_kv_heads": "kv_heads",
    "intermediate_size": "ffn",
    "ffn_hidden_size": "ffn",
    "d_ff": "ffn",
    "max_position_embeddings": "seq_len",
    "n_positions": "seq_len",
    "n_ctx": "seq_len",
    "max_seq_len": "seq_len",
    "max_seq_length": "seq_len",
    "context_length": "seq_len",
    "sequence_length": "seq_len",
    "vocab_size": "vocab",
    "num_local_experts": "experts",
    "n_routed_experts": "experts",
    "num_experts_per_tok": "experts_per_token",
    "tie_word_embeddings": "tied_embeddings",
    # data
    "train_tokens": "tokens",
    "dataset_tokens": "tokens",
    "total_tokens": "tokens",
    "num_train_epochs": "epochs",
    "num_samples": "samples",
    # training (Trainer, DeepSpeed, Megatron)
    "micro_batch_size": "parallelism.micro_batch",
    "per_device_train_batch_size": "parallelism.micro_batch",
    "train_micro_batch_size_per_gpu": "parallelism.micro_batch",
    "tensor_parallel_size": "parallelism.tensor",
    "tensor_model_parallel_size": "parallelism.tensor",
    "tp": "parallelism.tensor",
    "tensor_parallel": "parallelism.tensor",
    "tensor_parallelism": "parallelism.tensor",
    "pipeline_parallel": "parallelism.pipeline",
    "context_parallel": "parallelism.context",
    "cp": "parallelism.context",
    "expert_parallel": "parallelism.expert",
    "ep": "parallelism.expert",
    "pipeline_parallel_size": "parallelism.pipeline",
    "pipeline_model_parallel_size": "parallelism.pipeline",
    "pp": "parallelism.pipeline",
    "zero_stage": "parallelism.zero",
    "context_parallel_size": "parallelism.context",
    "expert_parallel_size": "parallelism.expert",
    "expert_model_parallel_size": "parallelism.expert",
    "global_batch_size": "global_batch_samples",
    "train_batch_size": "global_batch_samples",
    "gradient_checkpointing": "activation_checkpointing",
    "dtype": "precision",
    "torch_dtype": "precision",
    "mixed_precision": "precision",
    "bf16": "precision",
    "fp16": "precision",
    # serving (vLLM, OpenAI-style APIs, benchmarks)
    "input_tokens": "prompt_tokens",
    "input_len": "prompt_tokens",
    "input_length": "prompt_tokens",
    "prompt_len": "prompt_tokens",
    "prompt_length": "prompt_tokens",
    "max_tokens": "output_tokens",
    "max_new_tokens": "output_tokens",
    "output_len": "output_tokens",
    "output_length": "output_tokens",
    "completion_tokens": "output_tokens",
    "throughput": "tokens_per_s",
    "tokens_per_second": "tokens_per_s",
    "requests_per_second": "requests_per_s",
    "qps": "requests_per_s",
    "rps": "requests_per_s",
    "max_num_seqs": "max_batch",
    "max_batch_size": "max_batch",
    "kv_cache_dtype": "kv_precision",
    "num_beams": "beam_width",
    "duration": "hours",
    "duration_hours": "hours",
    # owned machines and budgets
    "num_gpus": "gpus_per_machine",
    "gpu_count": "gpus_per_machine",
    "num_machines": "machines",
    "servers": "machines",
    "nodes": "machines",
    "budget": "capex_limit_usd",
    "budget_usd": "capex_limit_usd",
}


# Other tools' settings the planner derives rather than takes, and keys whose nearest spelling
# is another quantity: (a key of the section they are written in, what to write instead).
# was: "data belongs under the top level" for a data-parallel size, the key list for dp, fsdp and
# gradient_accumulation_steps, and colocation_usd_per_month -> the per-kW key at 3,000 $/kW-month.
_DATA_PARALLEL = (
    ("micro_batch", "parallelism"),
    "the data-parallel size is not set: it is what the GPUs leave, the GPU count over tensor x "
    "pipeline x context (8 GPUs at tensor 2: data parallel 4); set those, and the count",
)
_ACCUMULATION = (
    ("precision", "micro_batch"),
    "gradient accumulation is not set: it follows from the global batch over micro-batch x "
    "data-parallel size; set training.global_batch_samples (micro-batch x accumulation x "
    "data-parallel GPUs) and parallelism.micro_batch",
)
KEY_NOTES: Mapping[str, tuple[tuple[str, ...], str]] = {
    # data: only inside parallelism (in training it is the data section's, misplaced)
    "data": (("micro_batch",), _DATA_PARALLEL[1]),
    **dict.fromkeys(("dp", "data_parallel", "data_parallel_size", "ddp"), _DATA_PARALLEL),
    **dict.fromkeys(
        ("gradient_accumulation_steps", "gradient_accumulation", "grad_accum", "accumulation"),
        _ACCUMULATION,
    ),
    "fsdp": (
        ("zero",),
        "FSDP's full sharding is ZeRO-3: write zero: 3 (SHARD_GRAD_OP is zero: 2)",
    ),
    **dict.fromkeys(
        ("sequence", "sequence_parallel"),
        (
            ("micro_batch",),
            "Megatron's sequence parallelism runs inside the tensor-parallel group and comes with "
            "tensor; a long sequence split over GPUs (ring attention) is context",
        ),
    ),
    **dict.fromkeys(
        ("colocation_usd_per_month", "colocation_per_month", "colo_usd_per_month"),
        (
            ("rack_usd_per_month",),
            "a flat monthly fee is rack_usd_per_month; colocation_usd_per_kw_month is priced per "
            "kW of the machine's power",
        ),
    ),
}


# Training settings of other tools that change neither a job's time nor its memory: the planner
# has no key for them (the valid keys were listed, as if one of them were meant).
NO_EFFECT_KEYS = frozenset(
    {"learning_rate", "lr", "weight_decay", "warmup_steps", "warmup_ratio", "seed"}
    | {"lr_scheduler_type", "adam_beta1", "adam_beta2", "adam_epsilon", "max_grad_norm"}
)


def _synonym_hint(model: type[BaseModel], loc: Loc, allowed: Sequence[str]) -> str | None:
    """ "did you mean" the key another tool's name stands for, where this section has it."""
    typed = _normal(str(loc[-1]))
    if typed in NO_EFFECT_KEYS and "precision" in allowed:  # a training section
        return f"{loc[-1]} changes neither the time nor the memory of a job: drop it"
    note = KEY_NOTES.get(typed)
    if note is not None and any(key in allowed for key in note[0]):
        return note[1]
    target = KEY_SYNONYMS.get(typed)
    if target is None:
        return None
    head, _, rest = target.partition(".")
    if head not in allowed and rest in allowed and loc[-2:-1] == (head,):
        # written inside the section the synonym names (parallelism: {tp: 2})
        return f"did you mean {rest!r}? ({loc[-1]} is another tool's name for it)"
    if head not in allowed:
        return None
    if rest and rest not in _allowed_keys(model, (*loc[:-1], head)):
        return None  # a key of a subsection (training.parallelism.micro_batch) it does not have
    section = ".".join(str(p) for p in loc[:-1] if isinstance(p, str))
    full = f"{section}.{target}" if section else target
    if typed in ("bf16", "fp16"):  # Trainer's bf16: true
        return f"did you mean {full!r}? (write {head}: {typed})"
    return f"did you mean {full!r}? ({loc[-1]} is another tool's name for it)"


def _unknown_key_hint(
    model: type[BaseModel], loc: Loc, errors: Sequence[Any], wording: ErrorWording
) -> str:
    """ "did you mean" the missing twin or the nearest valid key, else the valid keys."""
    allowed = _allowed_keys(model, loc[:-1])
    if wording.sorted_keys:
        allowed = sorted(allowed)
    allowed += wording.extra_keys.get(".".join(str(p) for p in loc[:-1]), ())
    missing = [
        str(f[-1])
        for f in (_field_loc(model, tuple(x["loc"])) for x in errors if x["type"] == "missing")
        if f and f[:-1] == loc[:-1]
    ]
    typed = str(loc[-1])
    same = [key for key in allowed if _normal(key) == _normal(typed)]
    if same:
        # Name: for name, max-batch for max_batch (was the valid keys listed, or a missing key
        # that looks alike)
        how = "lower-case" if typed.strip().lower() == same[0] else "written with underscores"
        return f"keys are {how}: did you mean {same[0]!r}?"
    if is_credential_name(typed) and not any(is_credential_name(key) for key in allowed):
        return no_credentials_hint(typed)  # was: "did you mean 'capex'?" for api_key
    twin = difflib.get_close_matches(typed, missing, 1, 0.3)
    synonym = None if twin else _synonym_hint(model, loc, allowed)
    if synonym is not None:
        return synonym
    close = twin or suggest(typed, allowed, 1)
    if wording.alike_keys_only and close and not _alike(typed, close[0]):
        close = []
    homes = [] if twin or _normal(typed) in map(_normal, allowed) else _homes(model, loc)
    if homes:
        # the right key in the wrong section (precision: at the top of a workload file,
        # data.global_batch_tokens): was the section's keys listed, or "did you mean
        # 'eval_tokens'?"
        where = " or ".join(
            f"{home}:"
            for home in dict.fromkeys(h.rpartition(".")[0] or "the top level" for h in homes)
        )
        hint = f"{typed} belongs under {where} ({', '.join(homes)})"
        return hint + (f"; or did you mean {close[0]!r}?" if close else "")
    if close:
        return f"did you mean {close[0]!r}?" + lookalike_note(typed)
    for key, hint in wording.misplaced_keys.items():
        if _alike(typed, key):
            return hint
    return f"{wording.keys_label}: {', '.join(allowed)}"


def _normal(key: str) -> str:
    """A key as compared across sections: lower case, dashes as underscores."""
    return key.strip().lower().replace("-", "_")


def _homes(model: type[BaseModel], loc: Loc) -> list[str]:
    """The dotted paths (list indexes left out) where a key named as ``loc[-1]`` belongs, other
    than the section ``loc`` puts it in; [] when it belongs nowhere else."""
    key = _normal(str(loc[-1]))
    here = tuple(p for p in loc[:-1] if isinstance(p, str))
    found: list[str] = []

    def walk(current: type[BaseModel], path: tuple[str, ...], depth: int) -> None:
        for name, info in current.model_fields.items():
            if name == key and path != here:
                found.append(".".join((*path, name)))
            inner = _inner_model(info.annotation)
            if inner is not None and depth < 4:
                walk(inner, (*path, name), depth + 1)

    walk(model, (), 0)
    return found


# The field each link value belongs to, for a value written under the other one.
_LINK_FIELD = {
    "nvlink": "interconnect",
    "nvswitch": "interconnect",
    "pcie": "interconnect",
    "infiniband": "fabric",
    "roce": "fabric",
    "ethernet": "fabric",
    "efa": "fabric",
    "gpudirect-tcp": "fabric",
}


def value_alias_hint(
    got: str,
    options: list[str],
    field: str | None,
    *,
    option_names: Mapping[str, str] | None = None,
) -> str | None:
    """ "did you mean 'infiniband'? (IB names infiniband)" for a link written by another name;
    "nvlink wires GPUs inside a machine: write it under interconnect" for one under the wrong
    field; None when no word of ``got`` names a link.  ``option_names``: a command line's options
    for the link fields (``{"interconnect": "--interconnect"}``), where the fix names those, and
    a field the command has no option for is said to have none."""
    if not set(options) & set(LINK_ALIASES.values()):
        return None  # a field that takes no link: its own words are not these
    meant = linked_values(got)
    if not meant:
        return None
    value = meant[0]
    if value in options:
        same = got.strip().lower() == value
        return f"did you mean {value!r}?" + ("" if same else f" ({got.strip()} names {value})")
    home = _LINK_FIELD.get(value)
    if home is None or field is None or home == field:
        return None
    inside = "GPUs inside a machine" if home == "interconnect" else "machines together"
    if option_names is None:
        where, this = f"write it under {home}", field
    else:
        other = option_names.get(home)
        where = f"write it in {other}" if other else "this command has no option for it"
        this = option_names.get(field, field)
    return f"{value} wires {inside}: {where}; {this} takes one of {', '.join(options)}"


def _field_name(err: Any) -> str | None:
    """The last named key of an error's location (``fabric``), None for none."""
    return next((str(p) for p in reversed(err.get("loc", ())) if isinstance(p, str)), None)


def _options(err: Any) -> list[str]:
    """The values an enum or literal error accepts, from pydantic's "'a', 'b' or 'c'"."""
    expected = str((err.get("ctx") or {}).get("expected", ""))
    return [o.strip(" '") for o in expected.replace(" or ", ",").split(",") if o.strip()]


# pydantic error types of a date or date-time field that cannot read its input
_DATE_ERRORS = {
    "date_parsing",
    "date_from_datetime_parsing",
    "date_from_datetime_inexact",
    "date_type",
    "datetime_parsing",
    "datetime_from_date_parsing",
    "datetime_type",
}


def _shown(got: Any) -> str:
    """A value as the file wrote it: a date YAML read as 2024-01-01, not datetime.date(...)."""
    if hasattr(got, "isoformat") and not isinstance(got, str):
        return f"{got.isoformat()} (YAML read it as a date)"
    return repr(got)


def _describe(err: Any, wording: ErrorWording) -> str:
    """A pydantic error in the words of the YAML file."""
    etype, got = err["type"], err.get("input")
    if etype == "missing":
        return wording.missing
    if etype in ("enum", "literal_error"):
        return f"{got!r} is not one of {', '.join(_options(err))}"
    if etype == "value_error":
        return str((err.get("ctx") or {}).get("error") or err["msg"])
    if wording.bounds_in_words and etype in _BOUNDS:
        words, name = _BOUNDS[etype]
        limit = (err.get("ctx") or {}).get(name)
        shown = f"{limit:g}" if isinstance(limit, (int, float)) else str(limit)
        return f"must be {words} {shown}, got {got!r}"
    if etype in EXPECTED_BY_PYDANTIC_ERROR:
        return f"expected {EXPECTED_BY_PYDANTIC_ERROR[etype]}, got {_shown(got)}"
    if etype == "too_short":
        least = (err.get("ctx") or {}).get("min_length", 1)
        return f"needs at least {least} item{'s' if least != 1 else ''}, got {_shown(got)}"
    if etype in _DATE_ERRORS:
        return f"expected a date like 2026-01-01, got {_shown(got)}"
    if etype == "string_pattern_mismatch":
        return f"expected a month like '2027-01', got {got!r}"
    if etype == "int_parsing_size":  # 1e30 where a whole number belongs: was pydantic's words
        return f"expected a whole number, got {_shown(got)}, far more than this key ever takes"
    return f"{err['msg']} (got {got!r})"


def _hint(err: Any, wording: ErrorWording) -> str | None:
    """ "did you mean" for a misspelt value; how to quote a date YAML read where text belongs."""
    if err["type"] == "missing":
        where = ".".join(str(p) for p in err.get("loc", ()) if isinstance(p, str))
        if where in wording.missing_hints:  # kind: was "is required", no values named
            return wording.missing_hints[where]
    if err["type"] in ("enum", "literal_error"):
        got = err.get("input")
        if isinstance(got, bool):
            # YAML 1.1 reads yes/no/on/off/true/false as a boolean
            return (
                f"YAML read the value as {str(got).lower()}; write one of "
                f"{', '.join(_options(err))} (quote it if it is one of yes, no, on, off)"
            )
        if got is None:
            # `fabric:` with no value (or null): was "did you mean 'roce'?", "None" matched by
            # its spelling
            return (
                f"{_field_name(err) or 'the key'} has no value (YAML reads an empty one as null): "
                f"write one of {', '.join(_options(err))} after the colon, or leave the key out"
            )
        aliased = value_alias_hint(str(got), _options(err), _field_name(err))
        if aliased is not None:
            return aliased
        close = suggest(str(got), _options(err), 1)
        return f"did you mean {close[0]!r}?" + lookalike_note(str(got)) if close else None
    if err["type"] == "string_type" and hasattr(err.get("input"), "isoformat"):
        return wording.date_hint or "YAML read a date; put it in quotes to keep it as text"
    if err["type"] == "string_type" and isinstance(err.get("input"), bool):
        # name: no (a job named "no"), YAML 1.1's booleans: was "expected text, got False" alone
        key = next((str(p) for p in reversed(err.get("loc", ())) if isinstance(p, str)), "name")
        return (
            f"YAML read the value as {str(err['input']).lower()}: it reads yes, no, on and off "
            f'as true or false; put the text in quotes ({key}: "{"yes" if err["input"] else "no"}")'
        )
    named: str | None = next(
        (str(p) for p in reversed(err.get("loc", ())) if isinstance(p, str) and not _type_tag(p)),
        None,
    )
    if err["type"] in _NUMBER_ERRORS and isinstance(err.get("input"), str):
        fix = _plain_number_hint(err["input"], named)
        if err["type"] != "float_parsing" and fix.startswith("write a plain number"):
            # machines: one: was "write a plain number, e.g. 1.5e9" for a whole number
            return f"write a plain number in digits: {named or 'it'} takes a whole number, e.g. 2"
        return fix
    got = err.get("input")
    if err["type"] == "int_from_float" and isinstance(got, float) and math.isfinite(got):
        # gpus_per_machine: 8.5: was "expected a whole number, got 8.5" alone
        low, high = math.floor(got), math.ceil(got)
        return f"write {named or 'it'} as a whole number: {low} or {high}"
    if err["type"] in _NUMBER_TYPE_ERRORS and named is not None:
        got = err.get("input")
        # was: "expected a number, got None" (or true, or [1]) and no fix
        if got is None:
            return f"{named} has no value (YAML reads an empty one as null): write the number after the colon"
        if isinstance(got, bool):
            return f"write {named} as a number (YAML read {str(got).lower()}: yes, no, on, off)"
        if isinstance(got, (list, dict)):
            return f"write {named} as one number, not a {'list' if isinstance(got, list) else 'mapping'}"
    if err["type"] in _MAPPING_ERRORS and named is not None:
        # was: "expected a mapping of keys, got 7" and no fix
        return f"write the keys of {named} indented under it, or inline: {named}: {{key: value}}"
    if err["type"] == "string_type" and err.get("input") is None:
        return f"{named or 'the key'} has no value (YAML reads an empty one as null): write it after the colon"
    if err["type"] == "int_parsing_size":
        return "check the value and its unit: the key's name says the unit"
    if err["type"] == "finite_number":
        # .nan, .inf: was "expected a finite number, got 'nan'" and no fix
        return f"write {named or 'the key'} as a real number (not nan or inf)"
    if err["type"] == "string_pattern_mismatch":
        # start: "2027-13": was the month's form alone
        return f'write {named or "the month"} as "YYYY-MM" in quotes, the month 01 to 12: "2027-01"'

    if err["type"] == "string_type" and isinstance(err.get("input"), (int, float)):
        return f'put it in quotes to keep it as text: {named or "name"}: "{err["input"]}"'
    if err["type"] == "string_type" and isinstance(err.get("input"), (list, dict)):
        # a colon or a bracket in text (description: [draft] ...) makes YAML read a list or keys
        return f"write {named or 'it'} as one text, in quotes where it holds a colon or a bracket"
    if err["type"] in ("list_type", "tuple_type") and named is not None:
        return f"write {named} as a list: one '- ' item a line under it, or inline: {named}: [a, b]"
    return None


_MAPPING_ERRORS = {"dict_type", "model_type", "model_attributes_type"}
_NUMBER_TYPE_ERRORS = {"float_type", "int_type", "float_parsing", "int_parsing", "int_from_float"}


_NUMBER_ERRORS = {"float_parsing", "int_parsing", "int_from_float"}
_MULTIPLIERS = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}
_NUMBER_WITH_TEXT = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*?)\s*$")


# a rate's "per second" after its unit: 5k/s, 3000 MB/s, 20 tokens per second
_PER_SECOND = re.compile(r"\s*(?:/\s*|\bper\s+)(?:s|sec|secs|second)\s*$", re.I)


def _foreign_money_hint(text: str, key: str) -> str | None:
    """The USD to write where ``key`` is in USD (``capex_usd``) and ``text`` an amount in another
    currency (``310000 EUR``, ``€300,000``), at the bundled rate; None for any other text.  Was
    "write 310000 alone: the key's name says its unit", the euros taken as dollars."""
    if "usd" not in key.lower().split("_"):
        return None
    from planner.config.currency import CURRENCY_WORDS, load_fx_rates, split_money

    sign = re.fullmatch(r"\s*([€£¥₹₩])\s*([\d,]+(?:\.\d+)?)\s*", text)
    try:
        amount, code = (
            (float(sign.group(2).replace(",", "")), CURRENCY_WORDS[sign.group(1)])
            if sign
            else split_money(text)
        )
    except (ConfigError, ValueError):
        return None
    table = load_fx_rates()
    if code is None or code.upper() == USD or code.upper() not in table.usd_per_unit:
        return None
    usd = amount * table.rate(code)  # (to_usd would warn of the rate's age inside a hint)
    return (
        f"{key} is in USD: write {usd:.2f} ({amount:,.2f} {code.upper()} at the ECB rate of "
        f"{table.as_of})"
    )


def _plain_number_hint(text: str, key: str | None = None) -> str:
    """How to write ``text`` ('1.5B', '310k', '4 years', '8kW') as the plain number a file
    takes: a multiplier written out (1.5B -> 1.5e+09), a unit left to the key's name."""
    fixed = ascii_digits_fix(text)
    if fixed is not None:
        # ８ (full-width): was "write 8: a whole number, without an exponent"
        try:
            float(fixed)
        except ValueError:
            return f"write the digits as ASCII 0-9, not full-width; then {_plain_number_hint(fixed, key)}"
        return f"write {fixed.strip()}: digits in ASCII 0-9, not full-width"
    foreign = _foreign_money_hint(text, key) if key else None
    if foreign is not None:
        return foreign
    sign = re.fullmatch(r"\s*[$€£¥]\s*(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s*", text)
    if sign is not None:
        # "$300,000" in capex_usd: was "write a plain number, e.g. 1.5e9"
        return (
            f"write {sign.group(1).replace(',', '')} alone: the key's name says its currency, "
            "and a number has no thousands separators"
        )
    ratio = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)\s*", text)
    if ratio is not None and float(ratio.group(2)) > 0:
        # staff_fte: 1/75: was "write a plain number, e.g. 1.5e9"
        value = float(ratio.group(1)) / float(ratio.group(2))
        return f"write {value:.4g}: a file takes the number, not a division ({text.strip()} is {value:.4g})"
    continental = re.fullmatch(r"\s*([-+]?\d{1,3}(?:[. ]\d{3})+),(\d+)\s*", text)
    if continental is not None:
        # capex_usd: "310.000,00": was "write a plain number, e.g. 1.5e9"
        whole = re.sub(r"[. ]", "", continental.group(1))
        return (
            f"write {whole}.{continental.group(2)}: a decimal point and no thousands separators "
            f"({text.strip()} groups thousands by dots or spaces and has a decimal comma)"
        )
    separated = separated_number(text)
    if separated is not None:
        # 52,000 and 310 000 (thousands separators), 2,5 (a decimal comma, a European
        # spreadsheet's or keyboard's)
        return f"write {separated[0]}: {separated[1]}"
    percent = re.fullmatch(r"\s*([-+]?(?:\d+\.?\d*|\.\d+))\s*%\s*", text)
    if percent is not None:
        # 80%, 4%: a file's shares, rates and ratios are fractions (was: "write a plain number,
        # e.g. 1.5e9")
        number = float(percent.group(1))
        return (
            f"write {number / 100:g}: a file writes shares and ratios as fractions "
            f"({number:g}% is {number / 100:g})"
        )
    match = _NUMBER_WITH_TEXT.match(text)
    if match is not None and not match.group(2) and math.isfinite(float(match.group(1))):
        # 1e9 where a whole number belongs: YAML 1.1 reads an exponent without a point as text,
        # and the hint was "write a plain number, e.g. 1.5e9", the form just refused
        number = float(match.group(1))
        if number.is_integer():
            return f"write {int(number)}: a whole number, without an exponent"
        return f"write a whole number, not {text.strip()}"
    if match is None or not match.group(2):
        return "write a plain number, e.g. 1.5e9 (no units, suffixes or thousands separators)"
    suffix = match.group(2)
    per = unit_factor("per_s", suffix)
    if key and key.endswith("_per_s") and per is not None and per < 1:
        # requests_per_s: 120 per minute (was "write 120 alone", sixty times the rate)
        rate = float(match.group(1)) * per
        return f"write {rate:.6g}: {key} is per second ({text.strip()} is {rate:.6g} a second)"
    if key and key.endswith("_per_s"):
        # 5k/s in tokens_per_s, 3000MB/s in nvme_read_gb_per_s: the rate's "/s" is the key's;
        # was "write 5 alone" and "write 3000 alone", a thousandth and a thousand times the rate
        suffix = _PER_SECOND.sub("", suffix).strip() or "/s"
        if suffix == "/s":
            return (
                f"write {float(match.group(1)):g} alone: the key's name says its unit (per second)"
            )
    number, words = float(match.group(1)), suffix.split()
    rest = words[0]
    if not rest[0].isalpha():  # '1,5' (a decimal comma), '2-3': no unit to drop
        return "write a plain number, e.g. 1.5e9 (no units, suffixes or thousands separators)"
    unit = key_unit(key) if key else None
    factor = unit_factor(unit, suffix)
    if key and unit and factor is not None:
        # 18 months in lifetime_years, 8000W in power_kw_avg, 30d in hours, 1s in ttft_ms_p95:
        # was "write 18 alone: the key's name says its unit", the number in the wrong unit
        shown = UNIT_WORDS.get(unit, unit) + ("/s" if key.endswith("_per_s") else "")
        if factor == 1:
            return f"write {number:g} alone: the key's name says its unit ({key} is in {shown})"
        return (
            f"write {number * factor:.6g}: the key's name says its unit ({key} is in {shown}; "
            f"{text.strip()} is {number * factor:.6g})"
        )
    # '1.5B' or '1.5 B tokens': a multiplier; '80GB', '8 kW', '4 years': a unit
    if rest.lower() in _MULTIPLIERS and (len(rest) == 1 or len(words) == 1):
        return (
            f"write {number * _MULTIPLIERS[rest.lower()]:g}: a file takes plain numbers, "
            "not K, M, B or T suffixes"
        )
    return f"write {number:g} alone: the key's name says its unit"


def _raised(err: Any, loc: Loc, file: str, wording: ErrorWording, tail: str) -> ConfigError | None:
    """The error a validator raised as :class:`FieldError` or :class:`UnknownName`, at its key path
    below ``loc``; None for any other error."""
    original = (err.get("ctx") or {}).get("error")
    if isinstance(original, FieldError):
        key = _key_path((*loc, *original.key_path.split(".")), wording)
        return ConfigError(original.message + tail, file=file, key_path=key)
    if isinstance(original, UnknownName):
        key = _key_path((*loc, *original.key_path.split(".")), wording)
        error = UnknownNameError(
            original.kind, original.name, original.choices, file=file, key_path=key
        )
        if original.hint is not None:
            error.hint = original.hint(error.hint)
        return error
    return None


def config_error(
    e: ValidationError,
    model: type[BaseModel],
    file: str,
    wording: ErrorWording = DEFAULT_WORDING,
) -> ConfigError:
    """The most useful pydantic error as a ConfigError with file, key path and a hint."""
    errors = e.errors()
    err = _pick(errors, wording)
    if err["type"] in _TYPE_MISMATCH:
        err = _missing_in_matched_branch(model, errors, err) or err
    loc = _field_loc(model, tuple(err["loc"]))
    key = _key_path(loc, wording)
    more = len(errors) - 1
    # the others' key paths, so one run names every field to fix (was "(and 1 more problem)")
    others = []
    for other in errors:
        if other is err:
            continue
        where = _key_path(_field_loc(model, tuple(other["loc"])), wording) or "(top level)"
        if where not in others and where != key:
            others.append(where)
    shown = f": {', '.join(others[:3])}{' ...' if len(others) > 3 else ''}" if others else ""
    tail = (
        f" (and {more} more problem{'s' if more > 1 else ''}{shown})"
        if more and wording.count_others
        else ""
    )
    if err["type"] == "extra_forbidden":
        hint = _unknown_key_hint(model, loc, errors, wording)
        return ConfigError("unknown key" + tail, file=file, key_path=key, hint=hint)
    raised = _raised(err, loc, file, wording, tail) if err["type"] == "value_error" else None
    if raised is not None:
        return raised
    fix = _hint(err, wording)
    if fix is None and err["type"] in _BOUNDS:
        fix = _range_hint(model, loc, err)
    return ConfigError(_describe(err, wording) + tail, file=file, key_path=key, hint=fix)


# The smaller unit a number past a key's range is often in, by the key's unit: (factor, name).
_SMALLER_UNIT = {
    "kW": (1e-3, "watts"),
    "years": (1 / 12, "months"),
    "GB": (1e-3, "MB"),
    "GiB": (1 / 1024, "MiB"),
    "s": (1e-3, "milliseconds"),
}


def _field_info(model: type[BaseModel], loc: Loc) -> Any:
    """The pydantic field ``loc`` (in the file's keys) names, walking nested models; None where
    it names none (a list item's value, a mapping's)."""
    current: Any = model
    info: Any = None
    for part in loc:
        if isinstance(part, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        info = current.model_fields.get(part)
        if info is None:
            return None
        current = _inner_model(info.annotation)
    return info


def _range_hint(model: type[BaseModel], loc: Loc, err: Any) -> str | None:
    """The whole range a bounded key takes, for a value outside it: was "must be at least 1,
    got -5" with no fix (``data.tokens: -5``, ``resale_fraction: 20``, ``pue: 0.5``).  A share
    written as a percentage (20 where 0 to 1 belongs) gets the fraction; a value past the top,
    the usual slip of a unit."""
    info = _field_info(model, loc)
    if info is None:
        return None
    bounds: dict[str, float] = {}
    for meta in info.metadata:
        for name in ("ge", "gt", "le", "lt"):
            value = getattr(meta, name, None)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                bounds[name] = value
    lowest, top = bounds.get("ge", bounds.get("gt")), bounds.get("le", bounds.get("lt"))
    if lowest is None and top is None:
        return None
    low = (
        ""
        if lowest is None
        else f"{lowest:g} or more"
        if "ge" in bounds
        else f"more than {lowest:g}"
    )
    high = "" if top is None else f"at most {top:g}" if "le" in bounds else f"less than {top:g}"
    if "ge" in bounds and "le" in bounds:
        shown = f"{lowest:g} to {top:g}"
    else:
        shown = ", ".join(part for part in (low, high) if part)
    # the range alone, not the key's name: the CLI shows a field as its option (--tokens)
    hint = f"valid values: {shown}"
    got = err.get("input")
    number: float | None = None
    if isinstance(got, (int, float)) and not isinstance(got, bool):
        number = got
    elif isinstance(got, str):  # YAML reads 1e30 (no point) as text
        try:
            number = float(got)
        except ValueError:
            number = None
    if number is not None and top is not None and number > top:
        if lowest is not None and lowest >= 0 and top == 1 and number <= 100:
            return f"{hint}: a share is a fraction, write {number / 100:g} for {number:g}%"
        named = next((str(part) for part in reversed(loc) if isinstance(part, str)), "")
        smaller = _SMALLER_UNIT.get(key_unit(named) or "")
        if smaller is not None and (lowest or 0) <= number * smaller[0] <= top:
            # power_kw_avg: 8000 (watts), lifetime_years: 48 (months): was "check the unit"
            meant = number * smaller[0]
            return f"{hint}: check the unit; if {number:g} is {smaller[1]}, write {meant:.4g}"
        # (was "the key's name says it", said of command-line options and of counts too)
        return f"{hint}: check the number and its unit"
    return hint
