"""Accuracy of ``planner estimate`` against published, measured runs (the C-rows).

Each row rebuilds a published run as a workload (same model, tokens, GPU type and count, and the
published batch or layout where it matters), estimates it, and compares the figure the source
reports: wall-clock hours, GPU-hours, seconds per iteration or seconds per epoch.  Rows come from
``../shared/reference/estimation.md`` section 3; the numbers we had to assume (GPU counts the
sources omit, epochs to convergence) are named in ``note``.

Run: ``python benchmarks/accuracy.py`` (prints the table, the median and the worst error).
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass
from typing import Any

from planner.hardware import resolve_gpu
from planner.schema import Fabric, Interconnect
from planner.workload import Estimate, Topology, estimate, parse_workload


@dataclass(frozen=True)
class Row:
    id: str
    label: str
    workload: dict[str, Any]
    gpu: str
    count: int
    metric: str  # wall_hours | gpu_hours | seconds (whole workload)
    published: float
    source: str
    topology: Topology | None = None
    note: str = ""


def _pre(
    name: str, model: str, tokens: float, batch_tokens: float, **training: Any
) -> dict[str, Any]:
    return {
        "name": name,
        "kind": "pretrain",
        "model": model,
        "data": {"tokens": tokens},
        "training": {
            "precision": "bf16",
            "optimizer": "adamw",
            "global_batch_tokens": batch_tokens,
            **training,
        },
    }


ROWS: tuple[Row, ...] = (
    Row(
        "C2",
        "GPT-2 124M llm.c, 10.26B tokens",
        _pre("c2", "gpt2", 10.26e9, 524288),
        "H100",
        8,
        "wall_hours",
        45 / 60,
        "KellerJordan/modded-nanogpt records/101324_llmc (45 min)",
    ),
    Row(
        "C7",
        "TinyLlama 1.1B, 300B tokens",
        _pre("c7", "tinyllama-1.1b", 300e9, 2.0e6),
        "A100-40GB",
        16,
        "gpu_hours",
        3456,
        "jzhang38/TinyLlama README (3,456 A100-h per 300B tokens)",
    ),
    Row(
        "C8",
        "Pythia-1.0B, 300B tokens",
        _pre("c8", "pythia-1b", 300e9, 2.0e6, precision="fp16"),
        "A100-40GB",
        64,
        "gpu_hours",
        4830,
        "Pythia paper via TinyLlama README (4,830 A100-h)",
        note="64 GPUs assumed",
    ),
    Row(
        "C10",
        "MPT-7B, 1T tokens, LION",
        _pre("c10", "mpt-7b", 1e12, 1760 * 2048, optimizer="lion"),
        "A100-40GB",
        440,
        "wall_hours",
        9.5 * 24,
        "databricks.com/blog/mpt-7b (9.5 days on 440 A100-40GB)",
    ),
    Row(
        "C12",
        "Llama 2 7B, 2T tokens",
        _pre("c12", "llama-2-7b", 2e12, 4e6),
        "A100-80GB",
        2048,
        "gpu_hours",
        184320,
        "Llama 2 paper Table 2 / MODEL_CARD (184,320 GPU-h)",
        note="2,048 GPUs assumed (LLaMA-1 65B used 2,048 A100-80GB)",
    ),
    Row(
        "C13",
        "Llama 2 13B, 2T tokens",
        _pre("c13", "llama-2-13b", 2e12, 4e6),
        "A100-80GB",
        2048,
        "gpu_hours",
        368640,
        "Llama 2 paper Table 2 / MODEL_CARD (368,640 GPU-h)",
        note="2,048 GPUs assumed",
    ),
    Row(
        "C13b",
        "Llama 2 70B, 2T tokens (same model card as C12/C13)",
        _pre("c13b", "llama-2-70b", 2e12, 4e6),
        "A100-80GB",
        2048,
        "gpu_hours",
        1720320,
        "Llama 2 paper Table 2 / MODEL_CARD (1,720,320 GPU-h)",
        note="2,048 GPUs assumed",
    ),
    Row(
        "C21s",
        "GPT-3 175B, 1 iteration, TP8 PP8, selective recompute",
        _pre(
            "c21s",
            "gpt3-175b",
            64 * 2048,
            64 * 2048,
            activation_checkpointing="selective",
            flash_attention=False,
            parallelism={"tensor": 8, "pipeline": 8, "zero": 0, "micro_batch": 1},
        ),
        "A100-80GB",
        64,
        "seconds",
        13.75,
        "Korthikanti et al. 2022 Table 5 (13.75 s/iter)",
    ),
    Row(
        "C21f",
        "GPT-3 175B, 1 iteration, TP8 PP8, full recompute",
        _pre(
            "c21f",
            "gpt3-175b",
            64 * 2048,
            64 * 2048,
            activation_checkpointing="full",
            flash_attention=False,
            parallelism={"tensor": 8, "pipeline": 8, "zero": 0, "micro_batch": 1},
        ),
        "A100-80GB",
        64,
        "seconds",
        18.13,
        "Korthikanti et al. 2022 Table 5 (18.13 s/iter)",
    ),
    Row(
        "C25b",
        "BERT-base SQuAD v1.1 fine-tune, 2 epochs",
        {
            "name": "c25b",
            "kind": "finetune",
            "model": "bert-base",
            "data": {"samples": 88641, "epochs": 2, "tokens_per_sample": 384},
            "training": {"precision": "fp16", "optimizer": "adamw", "global_batch_samples": 12},
        },
        "V100-16GB",
        1,
        "wall_hours",
        24 / 60,
        "HF transformers question-answering README (24 min)",
        note="88,641 training features at seq 384 / stride 128",
    ),
    Row(
        "C25l",
        "BERT-large SQuAD v1.1 fine-tune, 2 epochs",
        {
            "name": "c25l",
            "kind": "finetune",
            "model": "bert-large",
            "data": {"samples": 88641, "epochs": 2, "tokens_per_sample": 384},
            "training": {"precision": "fp16", "optimizer": "adamw", "global_batch_samples": 12},
        },
        "V100-16GB",
        1,
        "wall_hours",
        68 / 60,
        "HF transformers question-answering README (68 min)",
    ),
    Row(
        "C27d",
        "DeBERTa-v2-XL MRPC, DDP batch 8, 1 epoch",
        {
            "name": "c27d",
            "kind": "finetune",
            "model": "deberta-v2-xlarge",
            "data": {"samples": 3668, "tokens_per_sample": 128},
            "training": {
                "precision": "fp16",
                "optimizer": "adamw",
                "global_batch_samples": 16,
                "parallelism": {"zero": 0, "micro_batch": 8, "tensor": 1, "pipeline": 1},
            },
        },
        "Quadro-RTX6000",
        2,
        "seconds",
        103.57,
        "HF blog 'Fit More and Train Faster With ZeRO' Table 1",
        topology=Topology(2, Interconnect.PCIE, Fabric.ETHERNET),
        note="Titan RTX modelled as Quadro RTX 6000 (same TU102, 130 TFLOPS FP16/FP32-acc); PCIe, no NVLink bridge",
    ),
    Row(
        "C27z",
        "DeBERTa-v2-XL MRPC, ZeRO-2 batch 40, 1 epoch",
        {
            "name": "c27z",
            "kind": "finetune",
            "model": "deberta-v2-xlarge",
            "data": {"samples": 3668, "tokens_per_sample": 128},
            "training": {
                "precision": "fp16",
                "optimizer": "adamw",
                "global_batch_samples": 80,
                "parallelism": {"zero": 2, "micro_batch": 40, "tensor": 1, "pipeline": 1},
            },
        },
        "Quadro-RTX6000",
        2,
        "seconds",
        28.98,
        "same blog, Table 1",
        topology=Topology(2, Interconnect.PCIE, Fabric.ETHERNET),
    ),
    Row(
        "C30",
        "MLPerf v3.0 ResNet-50 (check), ~37 epochs ImageNet",
        {
            "name": "c30",
            "kind": "pretrain",
            "model": "resnet50",
            "data": {"samples": 1281167, "epochs": 37},
            "training": {"precision": "fp16", "optimizer": "sgd", "global_batch_samples": 3264},
        },
        "H100",
        8,
        "wall_hours",
        13.466 / 60,
        "NVIDIA MLPerf Training v3.0 results (13.466 min)",
        note="37 epochs to the 75.9% target assumed (MLPerf LARS runs converge in ~35-41)",
    ),
)


def measure(row: Row) -> tuple[float, Estimate]:
    """The estimate of ``row`` in the row's metric, with the full estimate."""
    spec = parse_workload(row.workload, file=f"benchmark {row.id}")
    est = estimate(spec, resolve_gpu(row.gpu), row.count, topology=row.topology)
    value = {
        "wall_hours": est.wall_hours,
        "gpu_hours": est.gpu_hours,
        "seconds": est.wall_hours * 3600.0,
    }[row.metric]
    return value, est


def table() -> list[dict[str, Any]]:
    out = []
    for row in ROWS:
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


def main() -> int:
    rows = table()
    print(
        f"{'id':5} {'run':52} {'hardware':20} {'metric':10} {'estimate':>12} {'published':>12} {'ratio':>6} {'MFU':>5}  strategy"
    )
    for r in rows:
        print(
            f"{r['id']:5} {r['run'][:52]:52} {r['hardware']:20} {r['metric']:10} {r['estimate']:12.4g} "
            f"{r['published']:12.4g} {r['ratio']:6.2f} {r['mfu']:5.2f}  {r['strategy']}"
        )
    errors = [abs(r["ratio"] - 1.0) for r in rows]
    worst = max(rows, key=lambda r: max(r["ratio"], 1 / r["ratio"]))
    print(
        f"\nmedian |error| {statistics.median(errors):.1%}; worst {worst['id']} ratio {worst['ratio']:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
