"""Accuracy of the serving model against published inference measurements.

The measurements are ``benchmarks/data/serving_measurements.yaml`` (MLPerf Inference results,
TensorRT-LLM's published performance tables, llama.cpp and diffusers benchmarks; each row cites its
source and date).  Each LLM row is rebuilt as an inference workload (the same model, GPUs, tensor
parallel size, weight format, serving stack, batch limit and lengths) and estimated through
``planner.estimate``, the product's own path; vision and diffusion rows go through
:func:`planner.workload.vision_serving.predict_measurement` where that module exists.

Scenarios and what is compared:

* ``offline`` / ``batch``: output tokens/s of all the GPUs with no load given (the saturated batch,
  at the row's batch size where it states one);
* ``server``: at the row's request rate, median TTFT and TPOT (and tokens/s);
* ``batch1-decode``: decode tokens/s of one request; ``batch1-prefill``: the time to first token of
  one prompt; ``single-stream``: one request's end-to-end latency;
* ``batch-latency``: the end-to-end time of one batch of ``batch`` identical requests started
  together (vLLM's ``benchmark_latency.py``): the work of ``batch`` requests at a running batch of
  ``batch``, i.e. ``batch`` / the capacity in requests/s with the batch limited to ``batch``.

A row that states its tensor-parallel size is compared at that size: where the estimate would
split its GPUs into smaller replicas (Llama 3.1 405B in fp8 fits on four of eight MI300X or H200),
the stated replica is served through the same model instead.

Rows the model cannot rebuild faithfully are listed as skipped with the reason (a weight format the
planner has no kernel model for, lengths the source does not give).  Rows decoded with beam search
(MLPerf GPT-J: 4 beams) carry their ``beam_width`` into the workload, and rows whose batches run to
their longest request (MLPerf GPT-J v3.1, static batches) their ``output_tokens_p95``.

Run: ``python benchmarks/serving_accuracy.py`` -- prints each ratio (estimated / measured) and the
median absolute error per kind and overall.
"""

from __future__ import annotations

import importlib
import math
import statistics
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.config.yamlfile import read_yaml
from planner.errors import PlannerError
from planner.gpu_specs import resolve_gpu
from planner.workload import WorkloadSpec, estimate, parse_workload
from planner.workload.estimate_types import default_topology, topology_links
from planner.workload.inference import make_replica, service_lengths
from planner.workload.serving import ServingPoint, serve
from planner.workload.serving_metrics import Percentiles, ServingMetrics

DATA_FILE = Path(__file__).parent / "data" / "serving_measurements.yaml"

# Stacks in the measurements that the planner profiles under another name: ExLlama (custom
# CUDA kernels for batch-1 GPTQ decoding) behaves like llama.cpp's graph-launched decode loop.
STACK_FOR = {"exllama": "llama.cpp"}
# Dataset lengths the MLPerf rows imply (they state none): Llama 2 70B on OpenOrca generates
# tokens_per_s / samples_per_s ~ 290 tokens per sample; its prompts are short instructions, taken
# at the same ~290 tokens (U).
DATASET_LENGTHS = {"openorca-24576": (290.0, 290.0)}
# Weight formats the planner models (fp4: NVIDIA NVFP4, mxfp4: OCP MXFP4).
FORMATS = {"fp16", "bf16", "fp8", "int8", "int4", "fp4", "mxfp4"}
# A request so rare that nothing queues: single-request latency.
ISOLATED_RATE = 1e-4


@dataclass(frozen=True)
class Comparison:
    row: str
    kind: str
    metric: str
    measured: float
    estimated: float
    split: str = "unmarked"  # calibration | holdout (vision/diffusion rows); LLM rows: unmarked

    @property
    def ratio(self) -> float:
        return self.estimated / self.measured

    @property
    def error(self) -> float:
        return abs(self.ratio - 1.0)


def _lengths(row: Mapping[str, Any]) -> tuple[float, float] | None:
    if row.get("dataset") in DATASET_LENGTHS:
        return DATASET_LENGTHS[row["dataset"]]
    if "output_tokens" in row:
        return float(row.get("input_tokens") or 1.0), float(row["output_tokens"])
    return None


def _skip_reason(row: Mapping[str, Any]) -> str | None:
    if row.get("precision") not in FORMATS:
        return f"weight format {row.get('precision')} not modelled"
    if _lengths(row) is None:
        return "the source gives no prompt/output lengths"
    if row.get("scenario") == "server" and str(row["id"]).startswith("mlperf-"):
        # MLPerf's server scenario lets the submitter hold requests to fill large batches up to
        # the latency bound (TPOT p99 <= 200 ms): its latencies measure that tuning, not what a
        # work-conserving server (the model) gives at the same rate
        return "MLPerf server latencies are tuned to the bound (batching policy), not compared"
    return None


def _workload(row: Mapping[str, Any], prompt: float, output: float) -> WorkloadSpec:
    scenario = row["scenario"]
    inference: dict[str, Any] = {
        "precision": row["precision"],
        "framework": STACK_FOR.get(row["framework"], row["framework"]),
        "prompt_tokens": max(prompt, 1.0),
        "output_tokens": max(output, 1.0),
    }
    if row.get("kv_precision"):
        inference["kv_precision"] = row["kv_precision"]
    if row.get("output_tokens_p95"):
        inference["output_tokens_p95"] = float(row["output_tokens_p95"])
    if row.get("beam_width"):
        inference["beam_width"] = row["beam_width"]
    if row.get("batch"):
        inference["max_batch"] = int(row["batch"])
    if scenario == "server":
        inference.update(requests_per_s=float(row["request_rate_per_s"]), hours=1.0)
    elif scenario in ("batch1-decode", "batch1-prefill", "single-stream"):
        inference.update(requests_per_s=ISOLATED_RATE, hours=1.0, max_batch=1)
    else:
        inference["requests"] = 1e6
    model: Any = row["model"]
    if "model_shape" in row:
        shape = dict(row["model_shape"])
        shape.pop("source", None)
        model = {"arch": "decoder", "seq_len": 4096, **shape}
    return parse_workload(
        {"name": row["id"], "kind": "inference", "model": model, "inference": inference},
        file=f"{DATA_FILE.name}: {row['id']}",
    )


@dataclass(frozen=True)
class _Figures:
    """What the LLM comparisons read of a serving estimate, for all its replicas."""

    capacity_tokens_per_second: float
    capacity_requests_per_second: float
    ttft_ms: Percentiles
    tpot_ms: Percentiles
    e2e_ms: Percentiles

    @classmethod
    def of_metrics(cls, sv: ServingMetrics) -> _Figures:
        return cls(
            sv.capacity_tokens_per_second,
            sv.capacity_requests_per_second,
            sv.ttft_ms,
            sv.tpot_ms,
            sv.e2e_ms,
        )

    @classmethod
    def of_point(cls, p: ServingPoint, replicas: int) -> _Figures:
        return cls(
            p.capacity_tokens_per_s * replicas,
            p.capacity_requests_per_s * replicas,
            Percentiles(p.ttft_ms_p50, p.ttft_ms_p95),
            Percentiles(p.tpot_ms_p50, p.tpot_ms_p95),
            Percentiles(p.e2e_ms_p50, p.e2e_ms_p95),
        )


def _llm(row: Mapping[str, Any]) -> list[Comparison]:
    prompt, output = _lengths(row) or (1.0, 1.0)
    spec = _workload(row, prompt, output)
    gpu = resolve_gpu(row["gpu"])
    tp = int(row.get("tensor_parallel") or 0)
    count = int(row["gpus"])
    if tp and tp < count:  # replicas of the stated size: estimate one and scale
        est = estimate(spec, gpu, tp, topology=default_topology(gpu, tp))
        replicas = count // tp
    else:
        est = estimate(spec, gpu, count, topology=default_topology(gpu, count))
        replicas = 1
    assert est.serving is not None
    sv = _Figures.of_metrics(est.serving)
    if tp and est.serving.gpus_per_replica != tp:
        # the estimate split the stated replica into smaller ones (Llama 3.1 405B in fp8 fits on
        # four of eight MI300X or H200): the row measured one replica of `tp` GPUs, so that one
        # is compared, at the same load, through the same serving model
        replica = make_replica(spec, gpu, tp, topology_links(gpu, default_topology(gpu, tp), tp))
        inf = spec.inference
        assert inf is not None
        sv = _Figures.of_point(
            serve(replica, *service_lengths(spec), inf.load_requests_per_s), count // tp
        )
        replicas = 1
    measured = row["measured"]
    out = []

    def add(metric: str, value: float) -> None:
        if metric in measured:
            out.append(
                Comparison(
                    row["id"],
                    "llm",
                    metric,
                    float(measured[metric]),
                    value,
                    str(row.get("split", "unmarked")),
                )
            )

    scenario = row["scenario"]
    if scenario in ("offline", "batch"):
        add("tokens_per_s", sv.capacity_tokens_per_second * replicas)
        add("tokens_per_s_per_gpu", sv.capacity_tokens_per_second * replicas / count)
        add("samples_per_s", sv.capacity_requests_per_second * replicas)
    elif scenario == "server" and not str(row["id"]).startswith("mlperf-"):
        add("ttft_ms_p50", sv.ttft_ms.p50)
        add("tpot_ms_p50", sv.tpot_ms.p50)
    elif scenario == "batch1-decode":
        add("tokens_per_s", 1000.0 / sv.tpot_ms.p50)
    elif scenario == "batch1-prefill":
        add("ttft_ms_p50", sv.ttft_ms.p50)
    elif scenario == "single-stream":
        add("latency_ms_p50", sv.e2e_ms.p50)
        add("latency_ms_mean", sv.e2e_ms.p50)  # one request at a time: no spread to speak of
    elif scenario == "batch-latency":
        # one batch on one replica of the stated tensor-parallel size (the estimate above may
        # pick smaller replicas): `batch` requests started together finish when their work is
        # done, which at a running batch of `batch` is `batch` requests at the capacity's rate
        size = tp or count
        replica = make_replica(
            spec, gpu, size, topology_links(gpu, default_topology(gpu, size), size)
        )
        point = serve(replica, *service_lengths(spec))
        batch_ms = int(row["batch"]) / point.capacity_requests_per_s * 1000.0
        add("latency_ms_p50", batch_ms)
        add("latency_ms_mean", batch_ms)
    return out


def _other(row: Mapping[str, Any]) -> list[Comparison] | str:
    try:
        module = importlib.import_module("planner.workload.vision_serving")
    except ImportError:
        return "no vision/diffusion model in this planner"
    predicted = module.predict_measurement(dict(row))
    if not predicted:
        return "no prediction for this row"
    return [
        Comparison(
            row["id"],
            row["kind"],
            k,
            float(row["measured"][k]),
            float(v),
            str(row.get("split", "unmarked")),
        )
        for k, v in predicted.items()
        if k in row["measured"]
    ]


def compare(rows: list[Mapping[str, Any]]) -> tuple[list[Comparison], list[tuple[str, str]]]:
    """Every comparison the rows allow, and the rows skipped with why."""
    done: list[Comparison] = []
    skipped: list[tuple[str, str]] = []
    for row in rows:
        if row["kind"] == "llm":
            reason = _skip_reason(row)
            if reason:
                skipped.append((row["id"], reason))
                continue
            try:
                done.extend(_llm(row))
            except PlannerError as e:
                skipped.append((row["id"], f"estimate failed: {e}"))
        else:
            got = _other(row)
            if isinstance(got, str):
                skipped.append((row["id"], got))
            else:
                done.extend(got)
    return done, skipped


def _split_summary(done: list[Comparison]) -> str:
    """Median errors of the calibration rows (a model constant was set from them), the holdout
    rows (none was) and the rows without a split (LLM), per kind and together."""
    lines = ["by split (calibration: a constant was set from the row; holdout: none was)"]
    kinds = sorted({c.kind for c in done})
    for split in ("calibration", "holdout", "unmarked"):
        for kind in [*kinds, "all"]:
            errs = [c.error for c in done if c.split == split and kind in (c.kind, "all")]
            if errs and not (kind == "all" and split == "unmarked"):
                lines.append(
                    f"  {split:<12} {kind:<10} {len(errs):3d} comparisons  "
                    f"median error {statistics.median(errs):6.1%}  worst {max(errs):6.1%}"
                )
    return "\n".join(lines)


def main() -> int:
    rows = read_yaml(DATA_FILE, what="serving measurements")["measurements"]
    done, skipped = compare(rows)
    width = max((len(c.row) for c in done), default=10)
    print(
        f"{'measurement':<{width}}  {'metric':<20} {'measured':>12} {'estimated':>12} {'ratio':>6}"
    )
    for c in done:
        print(
            f"{c.row:<{width}}  {c.metric:<20} {c.measured:>12,.4g} {c.estimated:>12,.4g} "
            f"{c.ratio:>6.2f}"
        )
    print()
    for kind in sorted({c.kind for c in done}):
        errs = [c.error for c in done if c.kind == kind]
        print(
            f"{kind:<10} {len(errs):3d} comparisons  median error {statistics.median(errs):6.1%}  worst {max(errs):6.1%}"
        )
    if done:
        errs = [c.error for c in done]
        print(
            f"{'all':<10} {len(errs):3d} comparisons  median error {statistics.median(errs):6.1%}  worst {max(errs):6.1%}"
        )
        print()
        print(_split_summary(done))
    if skipped:
        print(f"\nskipped {len(skipped)} rows:")
        for rid, why in skipped:
            print(f"  {rid}: {why}")
    return 0 if done and math.isfinite(statistics.median(c.error for c in done)) else 1


if __name__ == "__main__":
    sys.exit(main())
