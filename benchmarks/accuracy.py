"""Accuracy of ``planner estimate`` against published, measured runs.

The runs are the rows of ``benchmarks/data/published_runs.yaml``: ``calibration`` holds the C-rows
(from ``../shared/reference/estimation.md`` section 3), ``holdout`` further published large-scale
runs (Megatron-LM, LLaMA, BLOOM, Falcon, Llama 3) that no constant was set from.  Each row rebuilds
a published run as a workload (same model, tokens, GPU type and count, and the published batch or
layout where it matters), estimates it, and compares the figure the source reports: wall-clock
hours, GPU-hours, seconds per iteration or seconds per epoch.  The numbers we had to assume (GPU
counts the sources omit, epochs to convergence) are named in ``note``; every row cites its source.

The fit checks are the cases of ``benchmarks/data/published_fits.yaml``: published memory
outcomes (a configuration that ran, or ran out of GPU memory, on a named GPU, and where the source
gives it the measured peak), each rebuilt as a workload with every layout choice pinned, so that the
estimate's fit call is the published configuration's.

Run: ``python benchmarks/accuracy.py`` (prints both time tables, each with its median and worst
error, then the fit checks with how many are called right and the median peak-memory error).
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
from planner.workload.memory import GIB

DATA_FILE = Path(__file__).parent / "data" / "published_runs.yaml"
FITS_FILE = Path(__file__).parent / "data" / "published_fits.yaml"
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


def _named(raw: Any, at: str) -> str:
    """Where errors point in an entry: its id once it has a usable one, else its position."""
    if isinstance(raw, dict) and isinstance(raw.get("id"), str) and raw["id"].strip():
        return str(raw["id"])
    return at


def _check_gpu(name: str, file: str, at: str) -> None:
    """An entry's GPU is in the catalog (the catalog's error, pointed at the entry's field)."""
    try:
        resolve_gpu(name)
    except ConfigError as e:
        raise ConfigError(e.message, file=file, key_path=_at(at, "gpu"), hint=e.hint) from None


def _row(raw: Any, file: str, at: str) -> Row:
    """One row, checked; errors name the row by its id once it has a usable one."""
    at = _named(raw, at)
    _checked(raw, _ROW_KEYS, _ROW_REQUIRED, file, at)
    if raw["metric"] not in METRICS:
        hint = ", ".join(METRICS)
        raise ConfigError(f"unknown metric {raw['metric']!r}", file=file, key_path=at, hint=hint)
    _check_gpu(raw["gpu"], file, at)
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
                "mfu": est.steady_efficiency,
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


# -- fit checks ---------------------------------------------------------------------------------------

OUTCOMES = ("fits", "oom")
# a published peak in the source's unit -> bytes per unit
_PEAK_UNITS = {"gb": 1e9, "gib": GIB}


@dataclass(frozen=True)
class FitCase:
    """One published memory outcome: a configuration that ran (``fits``) or ran out of GPU memory
    (``oom``) on ``count`` x ``gpu``, with the measured peak per GPU where the source states it."""

    id: str
    label: str
    workload: dict[str, Any]
    gpu: str
    count: int
    outcome: str  # one of OUTCOMES
    source: str
    peak_gib: float | None = None
    topology: Topology | None = None
    note: str = ""


_FIT_TOP_KEYS = {"shared": _MAPPING, "cases": _ROWS}
_FIT_REQUIRED = ("id", "label", "gpu", "count", "outcome", "source", "workload")
_FIT_KEYS = {
    **dict.fromkeys(("id", "label", "gpu", "outcome", "source", "note"), _TEXT),
    "count": _INT,
    **dict.fromkeys(("workload", "topology", "peak"), _MAPPING),
}


def _peak_gib(raw: dict[str, Any], file: str, at: str) -> float | None:
    """The published peak in GiB, from ``{gb: N}`` or ``{gib: N}``; only a run that fitted has one."""
    if "peak" not in raw:
        return None
    where = _at(at, "peak")
    value = _checked(raw["peak"], dict.fromkeys(_PEAK_UNITS, _NUMBER), (), file, where)
    if len(value) != 1:
        raise ConfigError(
            f"give exactly one of {', '.join(_PEAK_UNITS)}", file=file, key_path=where
        )
    if raw["outcome"] != "fits":
        message = f"a peak needs outcome fits, not {raw['outcome']}"
        raise ConfigError(message, file=file, key_path=where)
    ((unit, amount),) = value.items()
    return float(amount) * _PEAK_UNITS[unit] / GIB


def _fit_case(raw: Any, file: str, at: str) -> FitCase:
    """One case, checked; errors name the case by its id once it has a usable one."""
    at = _named(raw, at)
    _checked(raw, _FIT_KEYS, _FIT_REQUIRED, file, at)
    if raw["outcome"] not in OUTCOMES:
        hint = ", ".join(OUTCOMES)
        message = f"unknown outcome {raw['outcome']!r}"
        raise ConfigError(message, file=file, key_path=_at(at, "outcome"), hint=hint)
    _check_gpu(raw["gpu"], file, at)
    workload = copy.deepcopy(raw["workload"])  # YAML anchors share one dict between cases
    parse_workload(workload, file=f"{file}: {at}.workload")
    return FitCase(
        raw["id"],
        raw["label"],
        workload,
        raw["gpu"],
        raw["count"],
        raw["outcome"],
        raw["source"],
        peak_gib=_peak_gib(raw, file, at),
        topology=_topology(raw.get("topology"), file, _at(at, "topology")),
        note=raw.get("note", ""),
    )


def load_fits(path: Path = FITS_FILE) -> tuple[FitCase, ...]:
    """The cases of ``path``, every case checked.

    Raises :class:`ConfigError` naming the file, the case id and the field for a case it cannot use.
    """
    file = str(path)
    doc = _checked(read_yaml(path, what="published-fits file"), _FIT_TOP_KEYS, ("cases",), file, "")
    cases = tuple(_fit_case(raw, file, f"cases[{i}]") for i, raw in enumerate(doc["cases"]))
    seen: dict[str, int] = {}
    for i, case in enumerate(cases):
        if case.id in seen:
            message = f"duplicate id {case.id!r} (also cases[{seen[case.id]}])"
            raise ConfigError(message, file=file, key_path=f"cases[{i}].id")
        seen[case.id] = i
    return cases


def measure_fit(case: FitCase) -> Estimate:
    """The estimate of ``case``'s workload on its GPUs."""
    spec = parse_workload(case.workload, file=f"benchmark {case.id}")
    return estimate(spec, resolve_gpu(case.gpu), case.count, topology=case.topology)


def fit_table(cases: Sequence[FitCase]) -> list[dict[str, Any]]:
    """One record per case: the published outcome and peak, the estimate's memory and fit call."""
    out = []
    for case in cases:
        est = measure_fit(case)
        called = "fits" if est.fits else "oom"
        out.append(
            {
                "id": case.id,
                "run": case.label,
                "hardware": f"{case.count}x {case.gpu}",
                "outcome": case.outcome,
                "peak_gib": case.peak_gib,
                "estimate_gib": est.memory_per_gpu_gib,
                "gpu_gib": resolve_gpu(case.gpu).usable_memory_gib,
                "called": called,
                "right": called == case.outcome,
            }
        )
    return out


def fit_summary(records: list[dict[str, Any]]) -> tuple[int, int, float | None, int]:
    """(cases called right, cases, median |estimate / peak - 1| over the cases with a peak, how many)."""
    errors = [
        abs(r["estimate_gib"] / r["peak_gib"] - 1.0) for r in records if r["peak_gib"] is not None
    ]
    median = statistics.median(errors) if errors else None
    return sum(r["right"] for r in records), len(records), median, len(errors)


def _print_fits(title: str, records: list[dict[str, Any]]) -> None:
    print(title)
    print(
        f"{'id':5} {'run':60} {'hardware':16} {'published':>16} {'estimate GiB':>18}  {'call':5} check"
    )
    for r in records:
        published = r["outcome"] if r["peak_gib"] is None else f"fits {r['peak_gib']:.1f} GiB"
        used = f"{r['estimate_gib']:.1f} / {r['gpu_gib']:g}"
        check = "OK" if r["right"] else "WRONG"
        print(
            f"{r['id']:5} {r['run'][:60]:60} {r['hardware']:16} {published:>16} {used:>18}  "
            f"{r['called']:5} {check}"
        )
    right, total, median, peaks = fit_summary(records)
    peak = f"{median:.1%} ({peaks} cases)" if median is not None else "n/a (0 cases)"
    print(f"\nfit checks: {right} of {total} called right; peak memory median |error| {peak}\n")


def main(path: Path = DATA_FILE, fits_path: Path = FITS_FILE) -> int:
    try:
        calibration, holdout = load_runs(path)
        records = table(calibration), table(holdout)
        fits = fit_table(load_fits(fits_path))
    except PlannerError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code
    _print("C-rows (estimation.md s3)", records[0])
    _print("Held-out runs", records[1])
    _print_fits("Fit checks (published fits / OOM outcomes and peak memory)", fits)
    return 0


if __name__ == "__main__":
    sys.exit(main())
