"""Invariants the training estimator keeps on any input a user can give, found by sweeping the model
presets over GPUs, counts, kinds, methods, precisions and stacks; each test failed before the fix
it names.

- fp32 (and tf32) layers hand on fp32 activations, so a layer input kept under full or block
  recompute, the tensor-parallel all-reduces and the pipeline sends of those activations, and the
  layer a ZeRO-3 rank gathers are 4 bytes a value, not the 16-bit recipes' 2.  They were counted
  at 2: fp32 under full recompute kept exactly the activation bytes bf16 keeps.
- The printed memory table adds up: each line and the total are shown to the same 0.01 GiB.  A
  4-significant-figure format showed "151" beside "14.35" and a total the lines did not make.
- A host-bound layout's grown micro-batch is kept only where it is faster, and splits the rank's
  sequences evenly: TinyLlama in pure bf16 grew from 4 to 6 of 32 sequences and ran slower than at
  4, and slower than amp bf16, which holds more.
- A stack estimates only the recipes it has (frameworks.yaml ``methods``, ``precisions``): llm.c
  trains every weight and has no fp8 recipe, yet its factor made an fp8 LoRA fine-tune run at the
  whole 16-bit peak.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from planner.api import estimate, with_training
from planner.errors import ConfigError
from planner.gpu_specs import resolve_gpu
from planner.reports.estimate import render_estimate
from planner.schema import Fabric, Interconnect
from planner.workload import efficiency as eff
from planner.workload.adhoc import workload_from_facts
from planner.workload.estimate_types import Topology, topology_links
from planner.workload.frameworks import load_frameworks
from planner.workload.memory import GIB
from planner.workload.spec import Method, Precision
from planner.workload.strategy import (
    _even_micro_batch,
    _place,
    _setup,
    _tensor_parallel_seconds,
)
from planner.workload.training import train_facts


def _pinned(model: str, precision: str, **training: Any) -> Any:
    spec = workload_from_facts(model, tokens=1e8, method="full", precision=precision)
    return with_training(spec, **training)


# -- fp32 activations are 4 bytes a value -----------------------------------------------------------


@pytest.mark.parametrize("mode", ["full", "block"])
def test_fp32_keeps_fp32_layer_inputs_under_recompute(mode: str) -> None:
    """Llama 3 8B (32 layers, hidden 4,096, 8,192 tokens), one sequence, one H100, no ZeRO: under
    full recompute each layer keeps its input, s·h values; fp32 keeps them at 4 bytes against
    bf16's 2, so its activations are 32·s·h·2 bytes (2 GiB) more -- the logits (fp32 in both)
    outweigh the one layer rebuilt at a time either way.  Block recompute of the same layers too."""
    pins = {"micro_batch": 1, "tensor": 1, "pipeline": 1, "zero": 0}
    got = {}
    for precision in ("fp32", "bf16"):
        spec = _pinned("llama-3-8b", precision, activation_checkpointing=mode, parallelism=pins)
        est = estimate(spec, "H100", 1)
        assert est.strategy.activation_checkpointing == mode
        got[precision] = est
    layers, seq, hidden = 32, 8192, 4096
    if mode == "full":
        extra = layers * seq * hidden * 2.0 / GIB
        fp32 = got["fp32"].memory_breakdown_gib["activations"]
        bf16 = got["bf16"].memory_breakdown_gib["activations"]
        assert fp32 - bf16 == pytest.approx(extra, rel=1e-9)
    else:
        # the recomputed layers' inputs and the kept layers' values both double at fp32
        assert got["fp32"].strategy.recomputed_layers == got["bf16"].strategy.recomputed_layers
        k = got["fp32"].strategy.recomputed_layers
        extra = k * seq * hidden * 2.0 / GIB
        fp32 = got["fp32"].memory_breakdown_gib["activations"]
        bf16 = got["bf16"].memory_breakdown_gib["activations"]
        assert fp32 - bf16 >= extra


def _facts_and_search(precision: str, count: int, topo: Topology) -> tuple[Any, Any]:
    spec = _pinned("llama-3-8b", precision)
    f = train_facts(spec)
    gpu = resolve_gpu("H100")
    search = _setup(f, gpu, count, topology_links(gpu, topo, count), True)
    return f, search._replace(tp_overlap=False)  # the all-reduces as they are, none hidden


def test_fp32_tensor_parallel_all_reduces_move_fp32_activations() -> None:
    """TP2 on one node: each all-reduce moves 2·(tp-1)/tp of the micro-batch's s·h activations,
    twice the bytes at fp32 -- the latency of each collective the same."""
    topo = Topology(8, Interconnect.NVSWITCH, Fabric.INFINIBAND)
    seconds = {}
    for precision in ("fp32", "bf16"):
        f, search = _facts_and_search(precision, 8, topo)
        lay = _place(f, search, 2, 1, 0)
        seconds[precision] = _tensor_parallel_seconds(f, search, lay, 1, 0.0, 1.0)
    latency = 4.0 * 32 * eff.COLLECTIVE_LATENCY_S["nvlink"]
    assert seconds["fp32"] - latency == pytest.approx(2.0 * (seconds["bf16"] - latency))


def test_fp32_zero3_gathers_fp32_layers() -> None:
    """ZeRO-3 holds the gathered current and next layer: at fp32, 4 bytes a weight."""
    topo = Topology(8, Interconnect.NVSWITCH, Fabric.INFINIBAND)
    buffers = {}
    for precision in ("fp32", "bf16"):
        f, search = _facts_and_search(precision, 8, topo)
        buffers[precision] = _place(f, search, 1, 1, 3).buffers
        assert buffers[precision] == pytest.approx(
            2.0 * eff.result_bytes(precision) * f.largest_layer
        )
    assert buffers["fp32"] == pytest.approx(2.0 * buffers["bf16"])


# -- the printed breakdown adds up ----------------------------------------------------------------


def _printed_memory(text: str) -> tuple[list[float], float]:
    lines, total = [], None
    rows = text.splitlines()
    start = next(i for i, line in enumerate(rows) if line.startswith("memory per GPU"))
    for line in rows[start + 2 :]:  # below the header and its rule
        m = re.match(r"^(\S.*?)\s{2,}([\d,.]+)$", line)
        if m is None:
            break
        value = float(m.group(2).replace(",", ""))
        if m.group(1) == "total":
            total = value
            break
        lines.append(value)
    assert total is not None, text
    return lines, total


@pytest.mark.parametrize(
    ("model", "gpu", "count"),
    [("qwen3-32b", "MI300X", 1), ("llama-3.1-70b", "H200", 2), ("deepseek-v3", "H100", 1)],
)
def test_printed_memory_lines_add_up_to_the_total(model: str, gpu: str, count: int) -> None:
    """Lines of 100 GiB and more keep their hundredths as the small ones do, so the lines shown
    add up to the total shown (each rounded to 0.01 GiB, so within half a hundredth a line)."""
    spec = workload_from_facts(model, tokens=1e9, method="full", precision="bf16")
    est = estimate(spec, gpu, count)
    lines, total = _printed_memory(render_estimate(est, "table", kind="finetune"))
    assert len(lines) == len(est.memory_breakdown_gib)
    assert sum(lines) == pytest.approx(total, abs=0.005 * (len(lines) + 1))
    for shown, value in zip(lines, est.memory_breakdown_gib.values(), strict=True):
        assert shown == round(value, 2)


# -- a host-bound search keeps the faster micro-batch ------------------------------------------------


def test_host_bound_growth_never_picks_a_slower_micro_batch() -> None:
    """TinyLlama 1.1B fine-tuned in pure bf16 under the Hugging Face Trainer on one B200: at the
    token cap's 4 sequences its eager host dispatch outlasts the GPU's work, so the search grows
    the micro-batch.  It grew it to 6 (a last micro-batch of 2 of the 32 sequences, which waits for
    a whole dispatch) and kept that, 5% slower than the 4 it started from, and slower than amp
    bf16 (fp32 master weights: more memory, more optimizer traffic) at 4.  The grown micro-batch
    now splits the 32 evenly (8) and is kept only where it is faster."""
    spec = workload_from_facts("tinyllama-1.1b", tokens=1e9, method="full", precision="pure-bf16")
    chosen = estimate(spec, "B200", 1)
    for micro_batch in (4, 6):
        pinned = estimate(with_training(spec, parallelism={"micro_batch": micro_batch}), "B200", 1)
        assert chosen.wall_hours <= pinned.wall_hours
    assert 32 % chosen.strategy.micro_batch_size == 0
    amp = workload_from_facts("tinyllama-1.1b", tokens=1e9, method="full", precision="bf16")
    assert chosen.wall_hours <= estimate(amp, "B200", 1).wall_hours


@pytest.mark.parametrize(
    ("busiest", "grown", "most", "want"),
    [(32, 5, 32, 8), (32, 5, 6, 6), (32, 8, 32, 8), (7, 3, 7, 4), (96, 7, 96, 8)],
)
def test_even_micro_batch(busiest: int, grown: int, most: int, want: int) -> None:
    assert _even_micro_batch(busiest, grown, most) == want


# -- a stack estimates only the recipes it has ------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "precision", "key"),
    [("lora", "bf16", "training.method"), ("qlora", "bf16", "training.method"),
     ("full", "fp8", "training.precision"), ("lora", "fp8", "training.method")],
)  # fmt: skip
def test_llm_c_refuses_recipes_it_lacks(method: str, precision: str, key: str) -> None:
    """llm.c trains every weight and has no fp8 recipe; its 1.25x factor (its own bf16 GPT-2
    kernels) put an fp8 LoRA fine-tune of Llama 3 8B on one H100 at 100% of the 16-bit peak."""
    spec = workload_from_facts("llama-3-8b", tokens=1e9, method=method, precision=precision)
    with pytest.raises(ConfigError) as caught:
        with_training(spec, framework="llm.c")
    assert caught.value.key_path == key
    assert "llm.c has no" in str(caught.value)


def test_llm_c_still_trains_what_it_runs() -> None:
    for precision in ("bf16", "fp32", "pure-bf16"):
        spec = workload_from_facts("gpt2", tokens=1e9, kind="pretrain", precision=precision)
        est = estimate(with_training(spec, framework="llm.c"), "H100", 8)
        assert est.fits and 0.0 < est.efficiency < 1.0


def test_stack_recipe_names_are_methods_and_precisions() -> None:
    methods = {m.value for m in Method}
    precisions = {p.value for p in Precision}
    for profile in load_frameworks().values():
        assert set(profile.methods or ()) <= methods, profile.name
        assert set(profile.precisions or ()) <= precisions, profile.name
