"""A workload from a few facts instead of a file: ``--model mistral-7b --method lora --tokens 50M``.

The facts become the same mapping a workload file holds and go through the same validation, so a
mistake names the same key (``data.tokens``) and the same fix.  Defaults are stated: a fine-tune
(``kind: finetune``) in bf16 with AdamW, full training unless ``method`` says LoRA or QLoRA.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from planner.config.yamlfile import names_a_path
from planner.errors import ConfigError, UnknownNameError, checked_arguments, is_number, shown_path
from planner.workload.hf_config import model_from_hf_config
from planner.workload.models import get_preset, named_exactly, presets, with_other_model_fix
from planner.workload.spec import WorkloadSpec, parse_workload


@checked_arguments
def workload_from_facts(
    model: str,
    *,
    tokens: float,
    kind: str = "finetune",
    method: str = "full",
    precision: str | None = None,
    optimizer: str | None = None,
    seq_len: int | None = None,
    global_batch_tokens: float | None = None,
    name: str | None = None,
) -> WorkloadSpec:
    """A validated training workload for ``model`` on ``tokens`` tokens: a preset name
    (``mistral-7b``; planner.model_presets lists them) or the path of a Hugging Face
    ``config.json`` (read locally; its shape and parameter count, see
    :mod:`planner.workload.hf_config`)."""
    if isinstance(model, Path):
        model = str(model)
    if not isinstance(model, str):
        # a whole workload (a WorkloadSpec), a ModelSection or a dict: was its repr named as an
        # unknown preset
        got = repr(model) if model is None or isinstance(model, (int, float)) else None
        raise ConfigError(
            "expected a model preset name or a config.json path, got "
            + (got or f"a {type(model).__name__} object"),
            key_path="model",
            hint="a workload you already have needs no facts: pass it to planner.estimate or "
            "planner.quote as it is; here, e.g. model='mistral-7b'",
        )
    if not model.strip():
        # was: '' read as the folder '.' ("'.' is a folder with no config.json in it")
        raise ConfigError(
            "model name is blank",
            key_path="model",
            hint="name a preset (planner models lists them) or a Hugging Face config.json",
        )
    # a folder or file of that name is read as the model's config.json, even where the name is
    # also a preset's (a local checkpoint folder called Llama-2-7b-hf)
    on_disk = not named_exactly(model) and names_a_path(model)  # (a name too long for one: no)
    preset = None if on_disk else get_preset(model)
    if preset is not None and preset.arch not in ("decoder", "encoder"):
        # was: "data.samples: is required for a cnn model", a key of a file the user never wrote
        raise ConfigError(
            f"{preset.name} is a {preset.arch} model: it trains on samples (images), not tokens, "
            "and a job from facts (--model with --tokens) is a transformer's",
            key_path="model",
            hint="describe it in a workload file with data.samples and data.epochs (as "
            f"scenarios/workloads/{_IMAGE_EXAMPLES[preset.arch]}.yaml does), or pick a "
            "transformer preset (planner models)",
        )
    if not is_number(tokens):
        raise ConfigError(
            f"expected a number of tokens, got {tokens!r}",
            key_path="data.tokens",
            hint="e.g. tokens=5e7 (the command line reads 50M)",
        )
    if preset is None and not model.endswith(".json"):
        model = _config_in(Path(model))
    from_config = model.endswith(".json")
    if not from_config and preset is None:
        error = UnknownNameError("model preset", str(model), presets(), key_path="model")
        error.hint = with_other_model_fix(error.hint)
        raise error
    if kind not in ("pretrain", "finetune"):
        raise ConfigError(
            f"a workload from facts is a training job, not {kind!r}",
            key_path="kind",
            hint="pretrain or finetune; describe inference in a workload file",
        )
    model_section: dict[str, Any] = (
        model_from_hf_config(Path(model)) if from_config else {"preset": model}
    )
    label = preset.name if preset is not None else _config_label(Path(model))
    if seq_len is not None:
        model_section["seq_len"] = seq_len
    training: dict[str, Any] = {"method": method}
    for key, value in (
        ("precision", precision),
        ("optimizer", optimizer),
        ("global_batch_tokens", global_batch_tokens),
    ):
        if value is not None:
            training[key] = value
    raw = {
        "name": name or f"{label}-{method if method != 'full' else kind}",
        "kind": kind,
        "description": f"{label}, {method} {kind} on {tokens:.3g} tokens (from facts)",
        "model": model_section,
        "data": {"tokens": tokens},
        "training": training,
    }
    try:
        return parse_workload(raw, file="workload facts")
    except ConfigError as e:  # named by field alone: the caller shows each as its option
        read = _CONFIG_KEYS.get(e.key_path or "") if from_config else None
        if read is not None and not (read == "max_position_embeddings" and seq_len is not None):
            # a shape the config.json gave: named there, with its own key (was "model.heads:
            # 33 heads do not divide hidden size 4096", naming no file)
            raise ConfigError(
                e.detail,
                file=model,
                key_path=read,
                hint=e.hint or f"copy {read} from the model's config.json on Hugging Face",
            ) from None
        raise ConfigError(e.detail, key_path=e.key_path, hint=e.hint) from None


# A bundled workload file for each model kind that trains on samples, not tokens.
_IMAGE_EXAMPLES = {
    "cnn": "resnet50-imagenet",
    "unet": "unet3d-kits19",
    "diffusion": "stable-diffusion-finetune",
}

# The workload's model keys a config.json gives, and the config's names for them.
_CONFIG_KEYS = {
    "model.heads": "num_attention_heads",
    "model.hidden": "hidden_size",
    "model.layers": "num_hidden_layers",
    "model.kv_heads": "num_key_value_heads",
    "model.head_dim": "head_dim",
    "model.vocab": "vocab_size",
    "model.ffn": "intermediate_size",
    "model.seq_len": "max_position_embeddings",
}


def _config_in(path: Path) -> str:
    """A model named by a path that is not a ``.json`` file: a downloaded model's folder reads
    its ``config.json``; another existing file is refused with what ``--model`` takes (a name
    that is no path is left to the preset lookup, which suggests the nearest presets)."""
    try:
        is_dir, is_file = path.is_dir(), path.is_file()
    except OSError:  # a name too long for the file system: no path, so a preset name
        return str(path)
    if is_dir:
        config = path / "config.json"
        if config.is_file():
            return str(config)
        raise ConfigError(
            f"{shown_path(path)!r} is a folder with no config.json in it",
            key_path="model",
            hint="pass the model's config.json (from its Hugging Face repository), or a preset "
            "name (planner models)",
        )
    if is_file:
        workload = path.suffix.lower() in (".yaml", ".yml")
        raise ConfigError(
            f"{shown_path(path)!r} is not a config.json: a model is a preset name or a Hugging "
            "Face config.json",
            key_path="model",
            hint="a workload YAML file goes in WORKLOAD (estimate) or --workload (quote), not "
            "--model"
            if workload
            else "pass the model's config.json, or a preset name (planner models)",
        )
    return str(path)


def _config_label(path: Path) -> str:
    """A name for a model read from ``path``: ``mistral-7b-config.json`` -> ``mistral-7b``, a
    plain ``config.json`` -> its folder's name (the repository, as downloaded)."""
    stem = path.stem.removesuffix("-config").removesuffix("_config")
    return (path.resolve().parent.name if stem == "config" else stem) or "model"


# The model fields a job from facts writes out (a config.json's shape, its MLP's width and kind,
# whether its output head is the embedding matrix; a mixture of experts adds its experts, the
# parameters a token uses and its largest layer).
_MODEL_KEYS = (
    "arch",
    "params",
    "layers",
    "hidden",
    "heads",
    "kv_heads",
    "head_dim",
    "ffn",
    "mlp",
    "activation",
    "fused_projections",
    "vocab",
    "tied_embeddings",
    "seq_len",
    "experts",
    "experts_per_token",
    "active_params",
    "largest_layer_params",
)


def workload_yaml(spec: WorkloadSpec, *, model: str) -> str:
    """A commented workload file for a job made from facts (``model`` as the user named it: a
    preset, or a config.json whose shape is written out); loading it gives ``spec`` again."""
    training = spec.training
    assert spec.data is not None and training is not None  # a job from facts is a training job
    preset = get_preset(model)
    lines = [
        "# Written by `planner workloads new`; every key, its unit and range: docs/file-formats.md",
        f"name: {json.dumps(spec.name)}",  # JSON strings are YAML strings, quoted safely
        f"kind: {spec.kind.value}",
        f"description: {json.dumps(spec.description)}",
    ]
    if preset is not None and spec.model.seq_len in (None, preset.seq_len):
        lines.append(f"model: {preset.name}  # {preset.params:.3g} parameters; {preset.source}")
    else:
        lines.append("model:  # the shape the estimator needs")
        for key in _MODEL_KEYS:
            value = getattr(spec.model, key)
            if isinstance(value, bool):
                lines.append(f"  {key}: {'true' if value else 'false'}")
            elif value is not None:
                lines.append(f"  {key}: {_yaml_number(value)}")
        if spec.model.dropout is not None:
            lines.append(f"  dropout: {spec.model.dropout:g}")
    lines += [
        "data:",
        f"  tokens: {_yaml_number(spec.data.tokens)}  # every token processed, epochs included",
        "training:",
        f"  precision: {training.precision.value}",
        f"  optimizer: {training.optimizer.value}",
        f"  method: {training.method.value}  # full, lora or qlora",
    ]
    if training.method.value != "full":
        lines.append(f"  lora_rank: {training.lora_rank}")
    if training.framework not in (None, "auto"):  # --framework (was checked, then left out)
        lines.append(f"  framework: {json.dumps(str(training.framework))}  # the software stack")
    lines.append(
        "  # global_batch_tokens: 1048576  # tokens per optimizer step (default: from the model)"
    )
    return "\n".join(lines) + "\n"


def _yaml_number(value: float | int | str | None) -> str:
    """A number YAML reads back as one (``5.0e+07``: YAML 1.1 needs the sign in exponents)."""
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer() and value < 1e6):
        return str(int(value))
    if isinstance(value, float):
        for digits in range(1, 18):  # the shortest form that reads back as the same number
            mantissa, exponent = f"{value:.{digits}e}".split("e")
            if float(f"{mantissa}e{exponent}") == value:
                digits_text = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
                return f"{digits_text}e{int(exponent):+03d}"
    return str(value)
