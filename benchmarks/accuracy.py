"""Accuracy of ``planner estimate`` against published, measured runs.

The runs are the rows of ``benchmarks/data/published_runs.yaml``: ``calibration`` holds the C-rows
(from ``../shared/reference/estimation.md`` section 3), ``holdout`` further published large-scale
runs (Megatron-LM, LLaMA, BLOOM, Falcon, Llama 3) that no constant was set from.  Each row rebuilds
a published run as a workload (same model, tokens, GPU type and count, and the published batch or
layout where it matters), estimates it, and compares the figure the source reports: wall-clock
hours, GPU-hours, seconds per iteration or seconds per epoch.  The numbers we had to assume (GPU
counts the sources omit, epochs to convergence) are named in ``note``; every row cites its source.

Run: ``python benchmarks/accuracy.py`` (prints both tables, each with its median and worst error).
A row it cannot use (an unknown, missing or mistyped key) stops it with a message naming the file,
the row id and the field, and exit status 2.
"""

from __future__ import annotations

import copy
import difflib
import math
import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

from planner.config.yamlfile import read_yaml
from planner.errors import ConfigError, PlannerError
from planner.gpu_specs import resolve_gpu
from planner.schema import Fabric, Interconnect
from planner.workload import Estimate, Topology, WorkloadSpec, estimate, parse_workload
from planner.workload.compute import megatron_flops_per_iteration

DATA_FILE = Path(__file__).parent / "data" / "published_runs.yaml"
# wall_hours | gpu_hours | seconds: the whole workload, interruptions included;
# steady_seconds: training steps only (rows measured as throughput over a healthy stretch, or
#   timed inside the training loop: seconds per iteration, HF Trainer's train_runtime)
METRICS = ("wall_hours", "gpu_hours", "seconds", "steady_seconds")


@dataclass(frozen=True)
class Row:
    id: str
    label: str
    workload: dict[str, Any]
    gpu: str
    count: int
    metric: str  # one of METRICS
    published: float
    source: str
    topology: Topology | None = None
    note: str = ""
    # set when the physics does not explain the row: why, in a sentence (the tests hold such rows
    # to a looser bound so that they still show regressions)
    known_gap: str = ""


# -- reading the data file ---------------------------------------------------------------------------
# What each key's value must be.  A row has the required keys and either ``workload`` + ``published``
# or ``megatron_sc21`` (a row of that table, turned into both here).

_TEXT, _MAPPING, _ROWS = "non-empty text", "a mapping", "a non-empty list of rows"
_INT, _NUMBER = "a positive integer", "a positive number"
_PUBLISHED = "a positive number or a mapping such as {minutes: 45}"

_TOP_KEYS = {"shared": _MAPPING, "calibration": _ROWS, "holdout": _ROWS}
_ROW_REQUIRED = ("id", "label", "gpu", "count", "metric", "source")
_ROW_KEYS = {
    **dict.fromkeys(("id", "label", "gpu", "metric", "source", "note", "known_gap"), _TEXT),
    "count": _INT,
    "published": _PUBLISHED,
    **dict.fromkeys(("workload", "topology", "megatron_sc21"), _MAPPING),
}
_TOPOLOGY_REQUIRED = ("gpus_per_node", "interconnect", "fabric")
_TOPOLOGY_KEYS = {"gpus_per_node": _INT, "interconnect": _TEXT, "fabric": _TEXT}
_TOPOLOGY_KEYS["network_gbps"] = _NUMBER
_MEGATRON_KEYS = dict.fromkeys(("heads", "hidden", "layers", "tensor", "pipeline", "batch"), _INT)
_MEGATRON_KEYS["tflops_per_gpu"] = _NUMBER
# ``published`` in the source's own unit -> the metric it converts to
_PUBLISHED_UNITS = {
    "minutes": "wall_hours",
    "days": "wall_hours",
    "model_tflops_per_gpu": "steady_seconds",
}

_E = TypeVar("_E", bound=Enum)


def _at(path: str, key: object) -> str:
    return f"{path}.{key}" if path else str(key)


def _is(value: Any, kind: str) -> bool:
    """Whether ``value`` is of ``kind`` (one of the descriptions above)."""
    if kind in (_INT, _NUMBER) or (kind == _PUBLISHED and not isinstance(value, dict)):
        numeric = (int,) if kind == _INT else (int, float)
        if not isinstance(value, numeric) or isinstance(value, bool):
            return False
        return math.isfinite(value) and value > 0
    if kind == _TEXT:
        return isinstance(value, str) and bool(value.strip())
    if kind == _ROWS:
        return isinstance(value, list) and bool(value)
    return isinstance(value, dict)  # _MAPPING, or _PUBLISHED in a source's unit


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _check_value(value: Any, kind: str, file: str, at: str) -> None:
    if _is(value, kind):
        return
    shown = "nothing" if value is None else f"{type(value).__name__} {value!r:.60}"
    hint = None
    if isinstance(value, str) and kind != _TEXT and _looks_numeric(value):
        hint = "YAML reads 1e12 as text: write numbers with a point and a signed exponent, 1.0e+12"
    raise ConfigError(f"expected {kind}, got {shown}", file=file, key_path=at, hint=hint)


def _checked(
    table: Any, kinds: Mapping[str, str], required: Sequence[str], file: str, at: str
) -> dict[str, Any]:
    """``table``, once every key is known, every required key present and every value of its kind."""
    if not isinstance(table, dict):
        _check_value(table, _MAPPING, file, at)  # raises
    for key in table:
        if key not in kinds:
            close = difflib.get_close_matches(str(key), kinds, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(kinds)}"
            raise ConfigError(f"unknown key {key!r}", file=file, key_path=at or None, hint=hint)
    for key in required:
        if key not in table:
            raise ConfigError(f"missing key {key!r}", file=file, key_path=at or None)
    for key, value in table.items():
        _check_value(value, kinds[key], file, _at(at, key))
    return table


def _enum(kind: type[_E], value: str, file: str, at: str) -> _E:
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(str(member.value) for member in kind)
        raise ConfigError(
            f"unknown {kind.__name__.lower()} {value!r}", file=file, key_path=at, hint=choices
        ) from None


def _topology(raw: dict[str, Any] | None, file: str, at: str) -> Topology | None:
    if raw is None:
        return None
    _checked(raw, _TOPOLOGY_KEYS, _TOPOLOGY_REQUIRED, file, at)
    return Topology(
        raw["gpus_per_node"],
        _enum(Interconnect, raw["interconnect"], file, _at(at, "interconnect")),
        _enum(Fabric, raw["fabric"], file, _at(at, "fabric")),
        raw.get("network_gbps"),
    )


def _megatron_sc21(stated: dict[str, Any], rid: str, count: int) -> tuple[dict[str, Any], float]:
    """A row of Narayanan et al. 2021 (SC21) Table 1 as (workload, seconds per iteration): GPT
    models on Selene (DGX A100 80GB, 8x HDR 200 Gb/s InfiniBand per node), vocabulary 51,200,
    sequence 2,048, full activation recompute.

    The table states TFLOPS per GPU counted with the recompute formula 96·B·s·L·h²·(1 + s/6h +
    V/16Lh) (S); seconds per iteration = those FLOPs / (GPUs x TFLOPS) (D).  Parameters by the
    paper's own count 12·L·h²·(1 + 13/12h + (V + s)/12Lh).
    """
    seq, vocab = 2048, 51200
    layers, hidden, batch = stated["layers"], stated["hidden"], stated["batch"]
    params = (
        12 * layers * hidden**2 * (1 + 13 / (12 * hidden) + (vocab + seq) / (12 * layers * hidden))
    )
    flops = megatron_flops_per_iteration(batch, seq, layers, hidden, vocab, full_recompute=True)
    workload = {
        "name": rid.lower(),
        "kind": "pretrain",
        "model": {
            "arch": "decoder",
            "params": params,
            "layers": layers,
            "hidden": hidden,
            "heads": stated["heads"],
            "kv_heads": None,
            "vocab": vocab,
            "seq_len": seq,
        },
        "data": {"tokens": batch * seq},
        "training": {
            "precision": "bf16",
            "optimizer": "adamw",
            "global_batch_tokens": batch * seq,
            "activation_checkpointing": "full",
            "flash_attention": False,
            "parallelism": {"tensor": stated["tensor"], "pipeline": stated["pipeline"], "zero": 0},
        },
    }
    return workload, flops / (count * stated["tflops_per_gpu"] * 1e12)


def _model_flops_seconds(
    spec: WorkloadSpec, count: int, tflops: float, file: str, at: str
) -> float:
    """Seconds per step from stated model TFLOPS per GPU: tokens x (6·N + 12·L·h·s) FLOPs."""
    m, tokens = spec.model, spec.data.tokens if spec.data else None
    params, layers, hidden, seq = m.params, m.layers, m.hidden, m.seq_len
    if tokens is None or params is None or layers is None or hidden is None or seq is None:
        raise ConfigError(
            "model_tflops_per_gpu needs a decoder workload with data.tokens",
            file=file,
            key_path=at,
        )
    return tokens * (6 * params + 12 * layers * hidden * seq) / (count * tflops * 1e12)


def _published(raw: dict[str, Any], spec: WorkloadSpec, file: str, at: str) -> float:
    """The published figure in the row's metric (``published`` is checked to be a number or a map)."""
    value, where = raw["published"], _at(at, "published")
    if not isinstance(value, dict):
        return value  # as written: 3456 stays an int
    _checked(value, dict.fromkeys(_PUBLISHED_UNITS, _NUMBER), (), file, where)
    if len(value) != 1:
        units = ", ".join(_PUBLISHED_UNITS)
        raise ConfigError(f"give exactly one of {units}", file=file, key_path=where)
    ((unit, amount),) = value.items()
    if raw["metric"] != _PUBLISHED_UNITS[unit]:
        message = f"{unit} needs metric {_PUBLISHED_UNITS[unit]}, not {raw['metric']}"
        raise ConfigError(message, file=file, key_path=_at(where, unit))
    if unit == "minutes":
        return amount / 60
    if unit == "days":
        return amount * 24
    return _model_flops_seconds(spec, raw["count"], amount, file, _at(where, unit))


def _workload_and_published(
    raw: dict[str, Any], file: str, at: str
) -> tuple[dict[str, Any], float]:
    if "megatron_sc21" in raw:
        if "workload" in raw or "published" in raw:
            message = "give megatron_sc21 or workload + published, not both"
            raise ConfigError(message, file=file, key_path=at)
        where = _at(at, "megatron_sc21")
        if raw["metric"] != "steady_seconds":
            message = f"megatron_sc21 needs metric steady_seconds, not {raw['metric']}"
            raise ConfigError(message, file=file, key_path=where)
        stated = _checked(raw["megatron_sc21"], _MEGATRON_KEYS, tuple(_MEGATRON_KEYS), file, where)
        workload, published = _megatron_sc21(stated, raw["id"], raw["count"])
        parse_workload(workload, file=f"{file}: {where}")
        return workload, published
    for key in ("workload", "published"):
        if key not in raw:
            raise ConfigError(f"missing key {key!r}", file=file, key_path=at)
    workload = copy.deepcopy(raw["workload"])  # YAML anchors share one dict between rows
    spec = parse_workload(workload, file=f"{file}: {at}.workload")
    return workload, _published(raw, spec, file, at)


def _row(raw: Any, file: str, at: str) -> Row:
    """One row, checked; errors name the row by its id once it has a usable one."""
    if isinstance(raw, dict) and isinstance(raw.get("id"), str) and raw["id"].strip():
        at = raw["id"]
    _checked(raw, _ROW_KEYS, _ROW_REQUIRED, file, at)
    if raw["metric"] not in METRICS:
        hint = ", ".join(METRICS)
        raise ConfigError(f"unknown metric {raw['metric']!r}", file=file, key_path=at, hint=hint)
    try:
        resolve_gpu(raw["gpu"])
    except ConfigError as e:
        raise ConfigError(e.message, file=file, key_path=_at(at, "gpu"), hint=e.hint) from None
    workload, published = _workload_and_published(raw, file, at)
    return Row(
        raw["id"],
        raw["label"],
        workload,
        raw["gpu"],
        raw["count"],
        raw["metric"],
        published,
        raw["source"],
        topology=_topology(raw.get("topology"), file, _at(at, "topology")),
        note=raw.get("note", ""),
        known_gap=raw.get("known_gap", ""),
    )


def _read(path: Path) -> Any:
    # the planner's reader: size limit, duplicate keys rejected with their lines, clean errors
    return read_yaml(path, what="published-runs file")


def load_runs(path: Path = DATA_FILE) -> tuple[tuple[Row, ...], tuple[Row, ...]]:
    """The calibration (C) rows and the held-out (H) rows of ``path``, every row checked.

    Raises :class:`ConfigError` naming the file, the row id and the field for a row it cannot use.
    """
    file = str(path)
    doc = _checked(_read(path), _TOP_KEYS, ("calibration", "holdout"), file, "")
    seen: dict[str, str] = {}
    sections: list[tuple[Row, ...]] = []
    for section in ("calibration", "holdout"):
        rows = tuple(_row(raw, file, f"{section}[{i}]") for i, raw in enumerate(doc[section]))
        for i, row in enumerate(rows):
            if row.id in seen:
                message = f"duplicate id {row.id!r} (also {seen[row.id]})"
                raise ConfigError(message, file=file, key_path=f"{section}[{i}].id")
            seen[row.id] = f"{section}[{i}]"
        sections.append(rows)
    return sections[0], sections[1]


# -- scoring ----------------------------------------------------------------------------------------


def measure(row: Row) -> tuple[float, Estimate]:
    """The estimate of ``row`` in the row's metric, with the full estimate."""
    spec = parse_workload(row.workload, file=f"benchmark {row.id}")
    est = estimate(spec, resolve_gpu(row.gpu), row.count, topology=row.topology)
    value = {
        "wall_hours": est.wall_hours,
        "gpu_hours": est.gpu_hours,
        "seconds": est.wall_hours * 3600.0,
        "steady_seconds": est.wall_hours * 3600.0 * est.goodput,
    }[row.metric]
    return value, est


def table(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """One record per row: estimate, published figure, their ratio, MFU and the chosen layout."""
    out = []
    for row in rows:
        value, est = measure(row)
        out.append(
            {
                "id": row.id,
                "run": row.label,
                "hardware": f"{row.count}x {row.gpu}",
                "metric": row.metric,
                "estimate": value,
                "published": row.published,
                "ratio": value / row.published,
                "mfu": est.efficiency,
                "strategy": est.strategy.name,
            }
        )
    return out


def summary(records: list[dict[str, Any]]) -> tuple[float, str, float]:
    """(median |ratio - 1|, id of the worst row, its ratio); worst = furthest from 1 either way."""
    errors = [abs(r["ratio"] - 1.0) for r in records]
    worst = max(records, key=lambda r: max(r["ratio"], 1 / r["ratio"]))
    return statistics.median(errors), worst["id"], worst["ratio"]


def _print(title: str, records: list[dict[str, Any]]) -> None:
    print(title)
    print(
        f"{'id':5} {'run':52} {'hardware':20} {'metric':14} {'estimate':>12} {'published':>12} {'ratio':>6} {'MFU':>5}  strategy"
    )
    for r in records:
        print(
            f"{r['id']:5} {r['run'][:52]:52} {r['hardware']:20} {r['metric']:14} {r['estimate']:12.4g} "
            f"{r['published']:12.4g} {r['ratio']:6.2f} {r['mfu']:5.2f}  {r['strategy']}"
        )
    median, worst, ratio = summary(records)
    print(f"\nmedian |error| {median:.1%}; worst {worst} ratio {ratio:.2f}\n")


def main(path: Path = DATA_FILE) -> int:
    try:
        calibration, holdout = load_runs(path)
        records = table(calibration), table(holdout)
    except PlannerError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code
    _print("C-rows (estimation.md s3)", records[0])
    _print("Held-out runs", records[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
