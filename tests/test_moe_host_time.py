"""The host time of a mixture-of-experts layer (issue 14): dropless routing copies the
tokens-per-expert counts to the host every layer, and the GPU waits while the host sets up the
dispatch and the experts' GEMMs.  A time per layer and micro-batch, per stack (frameworks.yaml
``moe_host_ms_per_layer``), checked on hand-computed values."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from planner.errors import ConfigError
from planner.gpu_specs import resolve_gpu
from planner.workload import frameworks as fw
from planner.workload import strategy as st
from planner.workload.efficiency import straggler_factor
from planner.workload.estimate_types import topology_links
from planner.workload.training import train_facts
from tests.test_moe_mechanisms import dgx, qwen


class _Layout:
    """The one field :func:`moe_host_seconds` reads of a layout."""

    def __init__(self, pp: int) -> None:
        self.pp = pp


def test_the_bundled_stacks_carry_their_host_time() -> None:
    """Megatron Core's figure, set from the calibration row C35, and none for XLA's static shapes."""
    stacks = fw.load_frameworks()
    assert stacks["megatron"].moe_host_s_per_layer == pytest.approx(4.6e-3)
    assert stacks["nemo"].moe_host_s_per_layer == stacks["megatron"].moe_host_s_per_layer
    assert stacks["jax"].moe_host_s_per_layer == 0.0


def test_host_time_per_micro_batch_by_hand() -> None:
    """48 layers on one stage at 4.6 ms: 0.2208 s a micro-batch; 4 stages hold 12 layers each:
    0.0552 s; under full recompute the forward half runs again: x1.5."""
    f = train_facts(qwen())
    assert st.moe_host_seconds(f, _Layout(1), 0.0) == pytest.approx(48 * 4.6e-3)
    assert st.moe_host_seconds(f, _Layout(4), 0.0) == pytest.approx(12 * 4.6e-3)
    assert st.moe_host_seconds(f, _Layout(1), 1.0) == pytest.approx(1.5 * 48 * 4.6e-3)


def test_a_dense_model_and_a_static_shape_stack_pay_nothing() -> None:
    dense = replace(train_facts(qwen()), experts=0, experts_per_token=0)
    assert st.moe_host_seconds(dense, _Layout(1), 0.0) == 0.0
    xla = train_facts(qwen(framework="jax"))
    assert st.moe_host_seconds(xla, _Layout(1), 0.0) == 0.0


def test_the_step_pays_it_once_per_layer_and_micro_batch() -> None:
    """Pinned layout (EP8 on one B200 node, micro-batch 1: 512 sequences over 8 GPUs, 64
    accumulation steps): the step with the host time is longer by 64 micro-batches x 48 layers x
    4.6 ms, times the straggler factor of 8 GPUs; the all-to-alls are not overlapped, so nothing
    else moves."""
    layout = {"tensor": 1, "pipeline": 1, "expert": 8, "micro_batch": 1}
    spec = qwen(parallelism=layout, global_batch_tokens=2_097_152)
    gpu = resolve_gpu("B200")
    links = topology_links(gpu, dgx(), 8)
    f = train_facts(spec)
    assert f.framework is not None
    free = replace(f, framework=replace(f.framework, moe_host_s_per_layer=0.0))
    with_host, _ = st.search_training(f, gpu, 8, links, flash=True)
    without, _ = st.search_training(free, gpu, 8, links, flash=True)
    assert with_host is not None and without is not None
    assert with_host.strategy.micro_batch_size == without.strategy.micro_batch_size == 1
    assert with_host.strategy.grad_accumulation == 64
    extra = 64 * 48 * 4.6e-3 * straggler_factor(8)
    assert with_host.step_s - without.step_s == pytest.approx(extra, rel=1e-9)


def test_a_negative_host_time_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # the profiles as planner reads them: frameworks.json, the compact copy of frameworks.yaml
    row = {
        "name": "x",
        "description": "d",
        "stack": 1,
        "tensor_parallel": True,
        "pipeline_parallel": True,
        "zero": [0],
        "tp_overlap": True,
        "compile_seconds": 0,
        "source": "s",
        "fp8_scaling": "delayed",
        "attention": "cudnn",
        "fused_layers": True,
        "autocast": False,
        "moe_host_ms_per_layer": -1,
    }
    text = json.dumps({"frameworks": [row]})

    class _Files:
        def joinpath(self, _name: str) -> _Files:
            return self

        def read_text(self, encoding: str) -> str:
            return text

    monkeypatch.setattr(fw.resources, "files", lambda _pkg: _Files())
    fw.load_frameworks.cache_clear()
    try:
        with pytest.raises(ConfigError, match="moe_host_ms_per_layer"):
            fw.load_frameworks()
    finally:
        fw.load_frameworks.cache_clear()
