"""Renderers for ``planner workloads``, ``planner workloads show`` and ``planner estimate``.

Each returns a string; only the CLI prints.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from planner.reports.tables import dumps_json, render_records, to_jsonable
from planner.workload import Estimate, WorkloadSpec

_LIST_COLUMNS = ("name", "kind", "model", "params", "method", "data", "description")


def _params(n: float) -> str:
    if n >= 1e9:
        return f"{n / 1e9:.3g}B"
    return f"{n / 1e6:.3g}M"


def render_workloads(specs: Sequence[WorkloadSpec], fmt: str) -> str:
    """The workload library, one row per workload."""
    rows = [s.summary() for s in specs]
    if fmt in ("table", "markdown"):
        rows = [{**r, "params": _params(r["params"])} for r in rows]
    return render_records(rows, fmt, columns=_LIST_COLUMNS)


_MODEL_COLUMNS = (
    "name",
    "arch",
    "params",
    "layers",
    "hidden",
    "heads",
    "kv_heads",
    "head_dim",
    "seq_len",
    "source",
)


def render_models(records: Sequence[Mapping[str, Any]], fmt: str) -> str:
    """The model presets, one row each (parameters shortened in tables: 7.24B)."""
    rows = [dict(r) for r in records]
    if fmt in ("table", "markdown"):
        rows = [{**r, "params": _params(r["params"])} for r in rows]
    return render_records(rows, fmt, columns=_MODEL_COLUMNS)


def _hours(h: float) -> str:
    if math.isinf(h):
        return "-"
    if h < 1:
        return f"{h * 60:.1f} min"
    if h < 48:
        return f"{h:.2f} h"
    return f"{h:,.0f} h ({h / 24:,.1f} days)"


def estimate_summary_row(est: Estimate) -> dict[str, Any]:
    """A flat row for tables of several estimates."""
    return {
        "gpu": est.gpu,
        "gpu_count": est.gpu_count,
        "fits": est.fits,
        "memory_per_gpu_gib": round(est.memory_per_gpu_gib, 1),
        "strategy": est.strategy.name,
        "efficiency": round(est.efficiency, 3),
        "wall_hours": est.wall_hours,
        "gpu_hours": est.gpu_hours,
        "interconnect_required": est.interconnect_required.value,
    }


def render_workload_show(spec: WorkloadSpec, estimates: Sequence[Estimate], fmt: str) -> str:
    """The full spec and its derived requirements on reference GPUs."""
    body = spec.model_dump(mode="json", exclude_none=True)
    if fmt == "json":
        return dumps_json({"spec": body, "requirements": [e.to_dict() for e in estimates]})
    rows = [estimate_summary_row(e) for e in estimates]
    if fmt == "csv":
        return render_records(rows, "csv")
    import yaml  # here: a quote loads this module and reads no YAML (planner/data/workloads.json)

    text = yaml.safe_dump(body, sort_keys=False, width=100).rstrip()
    table_fmt = "markdown" if fmt == "markdown" else "table"
    shown = [
        {**r, "wall_hours": _hours(r["wall_hours"]), "gpu_hours": _gpu_hours(r["gpu_hours"])}
        for r in rows
    ]
    reqs = render_records(shown, table_fmt)
    head = "Derived requirements (smallest GPU count that fits, per reference GPU):"
    if fmt == "markdown":
        return f"```yaml\n{text}\n```\n\n{head}\n\n{reqs}"
    # the requirements as YAML comments: the whole output saved (> mine.yaml) is a workload file
    # to edit, as the hints that point here say (was: a table after the YAML, not valid YAML)
    commented = "\n".join(f"# {line}".rstrip() for line in [head, *reqs.splitlines()])
    return f"{text}\n\n{commented}"


def _gpu_hours(h: float) -> str:
    return "-" if math.isinf(h) else f"{h:,.1f}"


def render_estimate(est: Estimate, fmt: str, *, kind: str | None = None) -> str:
    """One estimate: JSON object, one CSV row, or a readable report (table / markdown).

    ``kind`` (pretrain, finetune, inference) words the headline: "full fine-tuning with adamw".
    """
    if fmt == "json":
        return dumps_json(est.to_dict())
    if fmt == "csv":
        row = estimate_summary_row(est)
        row.update({f"memory_{k}_gib": round(v, 2) for k, v in est.memory_breakdown_gib.items()})
        row["total_flops"] = est.total_flops
        if est.serving is not None:
            # a service's latency, throughput and capacity, as the table and JSON give them
            row.update(est.serving.flat_dict())
        return render_records([row], "csv")
    s = est.strategy
    activity = {"finetune": "fine-tuning", "pretrain": "pre-training"}.get(kind or "", "training")
    if s.method == "inference":
        job = (
            "serving"
            if est.serving and est.serving.load_requests_per_s is not None
            else "inference"
        )
    else:
        method = {"full": "full", "lora": "LoRA", "qlora": "QLoRA"}.get(s.method, s.method)
        job = f"{method} {activity} with {s.optimizer}"
    lines = []
    sv = est.serving
    if est.fits:
        lines.append(f"{est.workload} on {est.gpu_count} x {est.gpu}: fits ({job})")
    elif sv is not None and (sv.overloaded or sv.slo_met is False) and est.memory_per_gpu_gib > 0:
        # it fits in memory and misses its load or its latency targets (was "DOES NOT FIT --
        # serving needs 1.3 GiB per GPU" on a 6 GB card, the reason further down)
        why = (
            f"cannot carry the load ({sv.capacity_requests_per_second:,.3g} of "
            f"{sv.load_requests_per_s or 0:,.3g} requests/s)"
            if sv.overloaded
            else "misses its latency targets ("
            + ", ".join(f"{k.removesuffix('_ms_p95')} p95 <= {v:g} ms" for k, v in sv.slo.items())
            + ")"
        )
        lines.append(
            f"{est.workload} on {est.gpu_count} x {est.gpu}: fits in memory "
            f"({est.memory_per_gpu_gib:.1f} GiB per GPU) but {why}"
        )
    else:
        lines.append(
            f"{est.workload} on {est.gpu_count} x {est.gpu}: DOES NOT FIT -- {job} needs "
            f"{est.memory_per_gpu_gib:.1f} GiB per GPU"
        )
    lines.append("")
    mem_rows = [
        {"memory per GPU": k.replace("_", " "), "GiB": round(v, 2)}
        for k, v in est.memory_breakdown_gib.items()
    ]
    mem_rows.append({"memory per GPU": "total", "GiB": round(est.memory_per_gpu_gib, 2)})
    # every line to the hundredth it was rounded to, so that the lines shown add up to the total
    # shown (the tables' 4 significant figures wrote 151.03 as 151 beside 14.35)
    table = "markdown" if fmt == "markdown" else "table"
    lines.append(render_records(mem_rows, table, floatfmt=",.15g"))
    lines.append("")
    facts = [
        ("strategy", s.name),
        ("why", s.reason),
        ("total FLOPs", f"{est.total_flops:.3g}"),
        # the denominator named: an fp8 or fp4 run's matmuls outrun the 16-bit peak (was "MFU
        # 137.2%" for fp4 on an RTX 5090, unexplained)
        (
            "MFU (16-bit peak)",
            f"{est.efficiency:.1%}" if est.fits or est.efficiency else "-",
        ),
        ("efficiency source", est.efficiency_source),
        (
            "wall-clock",
            _hours(est.wall_hours)
            + (
                f" (likely {_hours(est.wall_hours_range[0])} to {_hours(est.wall_hours_range[1])})"
                if est.wall_hours_range and est.fits
                else ""
            ),
        ),
        *(
            (f"  {phase}", _hours(hours))
            for phase, hours in est.time_breakdown_hours.items()
            if hours * 60 >= 0.05  # a phase under 3 seconds is noise in a job
        ),
        ("GPU-hours", _gpu_hours(est.gpu_hours)),
        ("interconnect needed", est.interconnect_required.value),
        (
            "fabric needed",
            est.fabric_required.value if est.fabric_required else "none (single node)",
        ),
        (
            "weights to load" if s.method == "inference" else "checkpoint size",
            f"{est.checkpoint_gib:.1f} GiB",
        ),
    ]
    if est.serving is not None:
        facts = _serving_facts(est)
    width = max(len(k) for k, _ in facts)
    for key, value in facts:
        lines.append(f"{key:<{width}}  {value}")
    if est.suggestions:
        lines.append("")
        lines.append("What would help:" if est.fits else "What would fit:")
        lines.extend(f"  - {x}" for x in est.suggestions)
    if est.assumptions:
        lines.append("")
        lines.append("Assumptions:")
        lines.extend(f"  - {x}" for x in est.assumptions)
    return "\n".join(lines)


def _ms(value: float) -> str:
    if math.isinf(value):
        return "-"
    return f"{value:,.1f} ms" if value < 100 else f"{value:,.0f} ms"


def _serving_facts(est: Estimate) -> list[tuple[str, str]]:
    """The inference report's facts: latency, throughput, concurrency; no training terms."""
    sv = est.serving
    assert sv is not None
    if sv.unit == "images":
        return _image_facts(est)
    if sv.load_requests_per_s is None:
        load = "none given: figures at full batch (offline)"
    else:
        load = f"{sv.load_requests_per_s:,.3g} requests/s over {sv.replicas} replica(s)"
        if sv.overloaded:
            load += " -- MORE THAN THE REPLICAS CARRY; figures at their capacity"
    facts = [
        (
            "replicas",
            f"{sv.replicas} x {sv.gpus_per_replica} GPU(s), {sv.framework}, {sv.precision} weights",
        ),
        ("load", load),
        ("time to first token", f"p50 {_ms(sv.ttft_ms.p50)}, p95 {_ms(sv.ttft_ms.p95)}"),
        ("time per output token", f"p50 {_ms(sv.tpot_ms.p50)}, p95 {_ms(sv.tpot_ms.p95)}"),
        ("end-to-end latency", f"p50 {_ms(sv.e2e_ms.p50)}, p95 {_ms(sv.e2e_ms.p95)}"),
        ("throughput", f"{sv.throughput_tokens_per_second:,.0f} output tokens/s"),
        (
            "capacity",
            f"{sv.capacity_tokens_per_second:,.0f} output tokens/s ({sv.capacity_requests_per_second:,.3g} requests/s)",
        ),
        (
            "concurrency",
            f"{sv.concurrency:,.1f} sequences running per replica, at most {sv.max_concurrency}",
        ),
        ("KV cache per sequence", f"{sv.kv_cache_gib_per_sequence * 1024:,.0f} MiB"),
    ]
    if sv.slo:
        targets = ", ".join(
            f"{k.replace('_ms_p95', '')} p95 <= {v:g} ms" for k, v in sv.slo.items()
        )
        facts.append(("latency targets", f"{targets}: {'met' if sv.slo_met else 'MISSED'}"))
    facts += [
        ("efficiency (MFU)", f"{est.efficiency:.1%}"),
        ("efficiency source", est.efficiency_source),
        (
            "serving window" if sv.load_requests_per_s is not None else "wall-clock",
            _hours(est.wall_hours),
        ),
        ("GPU-hours", _gpu_hours(est.gpu_hours)),
        ("interconnect needed", est.interconnect_required.value),
        ("weights to load", f"{est.checkpoint_gib:.1f} GiB"),
    ]
    return facts


def _image_facts(est: Estimate) -> list[tuple[str, str]]:
    """The vision / diffusion inference report: images/s and per-image latency."""
    sv = est.serving
    assert sv is not None and sv.latency_ms is not None
    if sv.load_requests_per_s is None:
        load = "none given: figures at full batch (offline)"
    else:
        load = f"{sv.load_requests_per_s:,.4g} images/s over {sv.replicas} replica(s)"
        if sv.overloaded:
            load += " -- MORE THAN THE REPLICAS CARRY; figures at their capacity"
    what = f"{sv.resolution} px" if sv.resolution else "native resolution"
    if sv.steps:
        what += f", {sv.steps} steps"
    facts = [
        ("replicas", f"{sv.replicas} x 1 GPU, {sv.framework}, {sv.precision}, {what}"),
        ("load", load),
        ("latency per image", f"p50 {_ms(sv.latency_ms.p50)}, p95 {_ms(sv.latency_ms.p95)}"),
        ("throughput", f"{sv.throughput_images_per_second or 0.0:,.4g} images/s"),
        ("capacity", f"{sv.capacity_images_per_second or 0.0:,.4g} images/s"),
        (
            "batch",
            f"{sv.batch_size or 0.0:,.1f} image(s) per call on average, at most {sv.max_batch}",
        ),
        ("GPU time per image", f"{(sv.seconds_per_image or 0.0) * 1e3:,.2f} ms"),
        ("efficiency", f"{est.efficiency:.1%} of the peak at this precision"),
        ("efficiency source", est.efficiency_source),
        (
            "serving window" if sv.load_requests_per_s is not None else "wall-clock",
            _hours(est.wall_hours),
        ),
        ("GPU-hours", _gpu_hours(est.gpu_hours)),
        ("weights to load", f"{est.checkpoint_gib:.2f} GiB"),
    ]
    return facts


__all__ = [
    "estimate_summary_row",
    "render_estimate",
    "render_workload_show",
    "render_workloads",
    "to_jsonable",
]
