"""Score `planner estimate` against the training steps this project measured on one GPU.

``benchmarks/data/gpu_probe_h100.jsonl`` holds what ``benchmarks/gpu_probe.py`` measured on one
H100 80GB HBM3 on 2026-11-27 (PyTorch 2.11.0+cu130, transformers 5.17.0; models built from their
configs with random weights, AdamW with torch's defaults, eager modules, SDPA attention): the step
time and the allocator's peak memory of each training case, by precision recipe.  Unlike the
published rows of accuracy.py, every setting of these runs is known, so a miss points at the
physics rather than at an unstated batch size.

    python benchmarks/probe_accuracy.py [--probe FILE]

Prints each case's measured and estimated step time and peak memory (the allocator's reserved
bytes, what nvidia-smi shows), their ratios, and the median |error| of each.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from planner.gpu_specs import resolve_gpu
from planner.workload import estimate, parse_workload

PROBE_FILE = Path(__file__).parent / "data" / "gpu_probe_h100.jsonl"
STEPS = 1000  # steps per estimate: enough that nothing but the steps shows in the ratio

# The models' shapes as benchmarks/gpu_probe.py built them (transformers' config defaults: GPT-2
# n_positions 1,024, dropout 0.1, tied embeddings, activation_function gelu_new; BERT-base;
# TinyLlama 1.1B's shape, untied).
_GPT2 = {"activation": "gelu_new", "fused_projections": True}
MODELS: dict[str, dict[str, Any]] = {
    "gpt2": {"params": 124.44e6, "layers": 12, "hidden": 768, "heads": 12, "vocab": 50257, **_GPT2},
    "gpt2-medium": {
        "params": 354.82e6,
        "layers": 24,
        "hidden": 1024,
        "heads": 16,
        "vocab": 50257,
        **_GPT2,
    },
    "gpt2-large": {
        "params": 774.03e6,
        "layers": 36,
        "hidden": 1280,
        "heads": 20,
        "vocab": 50257,
        **_GPT2,
    },
    "llama-1.1b": {
        "params": 1100.05e6,
        "layers": 22,
        "hidden": 2048,
        "heads": 32,
        "kv_heads": 4,
        "vocab": 32000,
        "ffn": 5632,
        "mlp": "gated",
        "dropout": 0.0,
        "tied_embeddings": False,
    },
    "bert-base": {
        "arch": "encoder",
        "params": 109.51e6,
        "layers": 12,
        "hidden": 768,
        "heads": 12,
        "vocab": 30522,
    },
}
_DEFAULTS = {"arch": "decoder", "dropout": 0.1, "tied_embeddings": True}


# What a workload cannot say (none at present: torch's fused AdamW is training.fused_optimizer).
UNEXPRESSED: dict[str, str] = {}


def load_cases(path: Path = PROBE_FILE) -> list[dict[str, Any]]:
    """The measured training cases (``section: train``) of ``path``."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [r for r in rows if r.get("section") == "train" and "step_s" in r]


def unexpressed(case: dict[str, Any]) -> str | None:
    """Why a case's variant cannot be written as a workload; None where it can."""
    for option in case["variant"].split("+"):
        if option in UNEXPRESSED:
            return UNEXPRESSED[option]
    return None


def workload(case: dict[str, Any]) -> dict[str, Any]:
    """The case as a planner workload: pre-training from scratch (the probe's random tokens), one
    micro-batch a step, the eager PyTorch stack (torchtitan's compiled one for the compiled case);
    the ablations' padded vocabulary (vocab50304) and fused tanh GeLU (gelu-tanh) as the model's,
    torch's fused AdamW (fused-adamw) as ``training.fused_optimizer``."""
    options = set(case["variant"].split("+"))
    model = {**_DEFAULTS, **MODELS[case["model"]], "seq_len": case["seq"], "params": case["params"]}
    if "vocab50304" in options:
        model["vocab"] = 50304
    if "gelu-tanh" in options:
        model["activation"] = "gelu_pytorch_tanh"
    batch = case["batch"]
    return {
        "name": f"probe-{case['model']}",
        "kind": "pretrain",
        "model": model,
        "data": {"samples": batch * STEPS, "epochs": 1, "tokens_per_sample": case["seq"]},
        "training": {
            "precision": case["precision"],
            "optimizer": "adamw",
            "framework": "torchtitan" if "compile" in options else "pytorch",
            "activation_checkpointing": "full" if "checkpointing" in options else "none",
            **({"fused_optimizer": True} if "fused-adamw" in options else {}),
            "global_batch_samples": batch,
            "parallelism": {"micro_batch": batch, "zero": 0, "tensor": 1, "pipeline": 1},
        },
    }


def score(case: dict[str, Any]) -> dict[str, Any]:
    """Measured and estimated step seconds and peak GiB of one case."""
    spec = parse_workload(workload(case), file=f"probe {case['model']}")
    est = estimate(spec, resolve_gpu("H100"), 1)
    step_s = est.time_breakdown_hours["training steps"] * 3600.0 / STEPS
    reserved_gib = case["max_reserved_bytes"] / 2**30
    label = f"{case['model']} {case['batch']}x{case['seq']} {case['precision']}"
    return {
        "case": f"{label} {case['variant']}".strip(),
        "measured_s": case["step_s"],
        "estimate_s": step_s,
        "time_ratio": step_s / case["step_s"],
        "measured_gib": reserved_gib,
        "estimate_gib": est.memory_per_gpu_gib,
        "memory_ratio": est.memory_per_gpu_gib / reserved_gib,
    }


def _print(title: str, cases: list[dict[str, Any]]) -> None:
    """The cases that a workload can express, scored, with their medians; the others named."""
    records = [score(c) for c in cases if not unexpressed(c)]
    if not records:
        return
    print(f"\n{title}")
    header = f"{'case':56} {'step ms':>8} {'est ms':>8} {'ratio':>6}"
    print(f"{header}  {'GiB':>6} {'est GiB':>8} {'ratio':>6}")
    for r in records:
        print(
            f"{r['case']:56} {r['measured_s'] * 1e3:8.1f} {r['estimate_s'] * 1e3:8.1f} "
            f"{r['time_ratio']:6.2f}  {r['measured_gib']:6.1f} {r['estimate_gib']:8.1f} "
            f"{r['memory_ratio']:6.2f}"
        )
    for case in cases:
        why = unexpressed(case)
        if why:
            print(f"{case['model']} {case['precision']} {case['variant']}: not scored ({why})")
    time_error = statistics.median(abs(r["time_ratio"] - 1.0) for r in records)
    memory_error = statistics.median(abs(r["memory_ratio"] - 1.0) for r in records)
    print(
        f"{len(records)} cases: step time median |error| {time_error:.1%}, "
        f"peak memory median |error| {memory_error:.1%}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probe", type=Path, default=PROBE_FILE)
    args = parser.parse_args(argv)
    cases = load_cases(args.probe)
    _print("training steps", [c for c in cases if not c.get("ablation")])
    _print(
        "GPT-2 ablations (one eager cost taken away at a time)",
        [c for c in cases if c.get("ablation")],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
