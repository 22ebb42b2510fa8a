"""A workload from a few facts instead of a file: ``--model mistral-7b --method lora --tokens 50M``.

The facts become the same mapping a workload file holds and go through the same validation, so a
mistake names the same key (``data.tokens``) and the same fix.  Defaults are stated: a fine-tune
(``kind: finetune``) in bf16 with AdamW, full training unless ``method`` says LoRA or QLoRA.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from planner.errors import ConfigError, UnknownNameError
from planner.workload.hf_config import model_from_hf_config
from planner.workload.models import get_preset, presets
from planner.workload.spec import WorkloadSpec, parse_workload


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
    from_config = isinstance(model, str) and model.endswith(".json")
    if not from_config and (not isinstance(model, str) or get_preset(model) is None):
        raise UnknownNameError("model preset", str(model), presets(), key_path="model")
    if kind not in ("pretrain", "finetune"):
        raise ConfigError(
            f"a workload from facts is a training job, not {kind!r}",
            key_path="kind",
            hint="pretrain or finetune; describe inference in a workload file",
        )
    model_section: dict[str, Any] = (
        model_from_hf_config(Path(model)) if from_config else {"preset": model}
    )
    label = _config_label(Path(model)) if from_config else model
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
        raise ConfigError(e.detail, key_path=e.key_path, hint=e.hint) from None


def _config_label(path: Path) -> str:
    """A name for a model read from ``path``: ``mistral-7b-config.json`` -> ``mistral-7b``, a
    plain ``config.json`` -> its folder's name (the repository, as downloaded)."""
    stem = path.stem.removesuffix("-config").removesuffix("_config")
    return (path.resolve().parent.name if stem == "config" else stem) or "model"
