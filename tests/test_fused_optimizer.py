"""``training.fused_optimizer`` says which AdamW kernel a script steps with: torch's fused one
(``AdamW(fused=True)``, transformers' ``adamw_torch_fused``) or its foreach default, eight passes
over the fp32 lists (efficiency.FOREACH_ADAMW_TRAFFIC_BYTES); unset, the stack's.  Measured on one
H100 (benchmarks/gpu_probe.py): GPT-2 small's step took 130.6 ms under bf16 autocast with the
foreach AdamW and 126.8 ms with the fused one (benchmarks/probe_accuracy.py scores both)."""

from __future__ import annotations

from typing import Any

import pytest

from planner.gpu_specs import resolve_gpu
from planner.workload import efficiency as eff
from planner.workload.training import train_facts, training_assumptions
from tests.step_workloads import step_estimate, step_job, step_seconds

H100 = resolve_gpu("H100")
STREAMED = eff.MEMORY_BW_FRACTION * H100.memory_bandwidth_gb_per_s * 1e9
GPT2 = {"preset": "gpt2", "vocab": 50304}


def gpt2(framework: str = "pytorch", optimizer: str = "adamw", **extra: Any) -> Any:
    return step_job(GPT2, framework=framework, flash=True, optimizer=optimizer, **extra)


def test_the_workload_picks_the_kernel_over_the_stacks_default() -> None:
    assert train_facts(gpt2()).opt_traffic == eff.FOREACH_ADAMW_TRAFFIC_BYTES  # eager: foreach
    assert train_facts(gpt2(fused_optimizer=True)).opt_traffic == 28.0
    # transformers' Trainer fuses by default; optim adamw_torch runs the foreach passes
    assert train_facts(gpt2("hf-trainer")).opt_traffic == 28.0
    assert train_facts(gpt2("hf-trainer", fused_optimizer=False)).opt_traffic == 80.0


def test_the_fused_kernel_saves_its_bytes_on_every_parameter() -> None:
    # autocast's fp32 model: 124.4M parameters x (80 - 28) bytes at the streamed bandwidth
    foreach = step_seconds(step_estimate(gpt2()))
    fused = step_seconds(step_estimate(gpt2(fused_optimizer=True)))
    params = train_facts(gpt2()).trainable
    assert foreach - fused == pytest.approx(params * 52.0 / STREAMED, rel=1e-9)


def test_the_estimate_says_which_kernel_it_assumed() -> None:
    def said(job: Any) -> list[str]:
        f = train_facts(job)
        return [a for a in training_assumptions(job, f, True) if "foreach" in a]

    assert said(gpt2()) and "80 bytes a parameter" in said(gpt2())[0]
    assert not said(gpt2(fused_optimizer=True))
    assert not said(gpt2("hf-trainer"))


def test_another_optimizer_names_the_setting_as_not_used() -> None:
    job = gpt2(optimizer="sgd", fused_optimizer=True)
    f = train_facts(job)
    notes = training_assumptions(job, f, True)
    assert any("training.fused_optimizer not used" in a for a in notes)
    assert f.opt_traffic == eff.OPTIMIZER_TRAFFIC_BYTES["sgd"]
