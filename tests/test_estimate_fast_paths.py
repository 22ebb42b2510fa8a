"""The short cuts that keep ``estimate()`` fast give the answers of the long way round (issue 14:
estimate() under 2 ms warm; benchmarks/estimate_bench.py times them).

- a spec is checked once: one made by load_workload, or checked once by the library, is not
  validated again on the next call, while a copy made past its checks still is;
- "does any layout fit?" (each remedy a job that fits nowhere is offered) sizes the layouts'
  micro-batches without timing them, and answers as the full search does;
- the least memory a job needs, which the estimate's own search found, is the figure the
  suggestions print;
- serving at capacity reads the steady state the capacity search found (test_serving_moe_capacity).
"""

from __future__ import annotations

import pytest

import planner
from planner.errors import ConfigError
from planner.gpu_specs import resolve_gpu
from planner.workload import spec as spec_module
from planner.workload.advice import _least_gib, train_suggestions
from planner.workload.estimate_types import default_topology, topology_links
from planner.workload.strategy import any_layout_fits, search_training
from planner.workload.training import flash_attention, train_facts


def test_a_loaded_spec_is_not_validated_again_by_each_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = planner.load_workload("gpt2-finetune")
    calls: list[object] = []
    parse = spec_module.parse_workload

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(args)
        return parse(*args, **kwargs)

    monkeypatch.setattr(spec_module, "parse_workload", counting)
    first = planner.estimate(spec, "H100")
    second = planner.estimate(spec, "H100")
    assert calls == []  # was: a model_dump and a re-validation, twice in every call
    assert first == second


def test_a_copy_of_a_checked_spec_is_still_checked() -> None:
    spec = planner.load_workload("gpt2-finetune")
    planner.estimate(spec, "H100")  # the original, checked
    bad = spec.model_copy(update={"pieces": 0})
    with pytest.raises(ConfigError) as info:
        planner.estimate(bad, "H100")
    assert info.value.key_path == "pieces"
    # and once more: a spec that failed its check is not remembered as checked
    with pytest.raises(ConfigError):
        planner.estimate(bad, "H100")


def test_an_unvalidated_construct_is_checked() -> None:
    spec = planner.load_workload("gpt2-finetune")
    raw = dict(spec)
    raw["pieces"] = -3
    built = type(spec).model_construct(**raw)
    with pytest.raises(ConfigError) as info:
        planner.estimate(built, "H100")
    assert info.value.key_path == "pieces"


CASES = [
    ("llama-2-70b-pretrain", "H100", 8),  # fits nowhere
    ("llama-2-70b-pretrain", "H100", 64),  # fits with sharding or tensor parallel
    ("llama-2-7b-finetune", "RTX4090", 1),  # fits nowhere on 24 GB
    ("llama-2-7b-finetune", "H100", 1),
    ("gpt2-xl-finetune", "RTX4090", 1),
    ("gpt2-xl-finetune", "T4", 4),
    ("mixtral-8x7b-finetune", "H100", 8),
    ("llama-2-13b-pretrain", "A100-40GB", 16),
]


@pytest.mark.parametrize(("workload", "gpu_name", "count"), CASES)
@pytest.mark.parametrize("optimizer", [None, "adamw-8bit"])
def test_any_layout_fits_answers_as_the_full_search(
    workload: str, gpu_name: str, count: int, optimizer: str | None
) -> None:
    spec = planner.load_workload(workload)
    gpu = resolve_gpu(gpu_name)
    f = train_facts(spec, optimizer=optimizer)
    links = topology_links(gpu, default_topology(gpu, count), count)
    flash = flash_attention(spec, gpu)
    chosen, _ = search_training(f, gpu, count, links, flash=flash)
    assert any_layout_fits(f, gpu, count, links, flash=flash) is (chosen is not None)


def test_the_cases_hold_both_answers() -> None:
    # the comparison above means something only where some cases fit and some do not
    answers = set()
    for workload, gpu_name, count in CASES:
        spec = planner.load_workload(workload)
        gpu = resolve_gpu(gpu_name)
        links = topology_links(gpu, default_topology(gpu, count), count)
        f = train_facts(spec)
        answers.add(any_layout_fits(f, gpu, count, links, flash=flash_attention(spec, gpu)))
    assert answers == {True, False}


@pytest.mark.parametrize(
    ("workload", "gpu_name", "count"),
    [("llama-2-70b-pretrain", "H100", 8), ("llama-2-7b-finetune", "RTX4090", 1)],
)
def test_the_least_memory_shown_is_the_one_searched(
    workload: str, gpu_name: str, count: int
) -> None:
    spec = planner.load_workload(workload)
    gpu = resolve_gpu(gpu_name)
    topo = default_topology(gpu, count)
    est = planner.estimate(spec, gpu_name, count)
    assert not est.fits
    searched = _least_gib(train_facts(spec), gpu, count, topo, flash_attention(spec, gpu))
    assert est.memory_per_gpu_gib == pytest.approx(searched, rel=1e-12)
    assert list(est.suggestions) == train_suggestions(spec, gpu, count, topo)
    assert f"needs at least {searched:.1f} GiB per GPU" in est.suggestions[0]
