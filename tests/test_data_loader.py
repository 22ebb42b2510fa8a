"""Issue 14: the host's data loader caps an image model's training at workers x images/s per
worker, and the step takes the longer of GPU time and loader time."""

from __future__ import annotations

from typing import Any

import pytest

from planner.errors import ConfigError
from planner.gpu_specs import resolve_gpu
from planner.workload import data_loader as dl
from planner.workload import estimate, parse_workload
from planner.workload.training import train_facts

IMAGENET = 1281167


def _resnet(**data: Any) -> dict[str, Any]:
    return {
        "name": "rn50",
        "kind": "pretrain",
        "model": "resnet50",
        "data": {"samples": IMAGENET, "epochs": 1, **data},
        "training": {"precision": "fp16", "optimizer": "sgd", "global_batch_samples": 256},
    }


def _steps_seconds(raw: dict[str, Any], gpu: str = "A100-80GB", count: int = 1) -> float:
    est = estimate(parse_workload(raw), resolve_gpu(gpu), count)
    return est.time_breakdown_hours["training steps"] * 3600.0


def test_classification_worker_rate_by_hand() -> None:
    # 1 / (1/577 + 1/1282 + 1/14777) = 1 / (1.73310 + 0.78003 + 0.06767) ms = 387.48 img/s
    assert dl.classification_images_per_s() == pytest.approx(387.48, rel=1e-4)


def test_mosaic_worker_rate_by_hand() -> None:
    # 1 / (4/721 + 2 x (1/1479 + 1/1050)) = 1 / (5.5479 + 3.2570) ms = 113.57 img/s
    assert dl.mosaic_images_per_s() == pytest.approx(113.57, rel=1e-4)


def test_five_workers_bind_resnet50_on_an_a100() -> None:
    # 5 workers x 387.48 img/s = 1,937.4 img/s; one epoch 1,281,167 / 1,937.4 = 661.3 s
    raw = _resnet(loader_workers_per_gpu=5)
    assert _steps_seconds(raw) == pytest.approx(661.28, rel=1e-3)
    est = estimate(parse_workload(raw), resolve_gpu("A100-80GB"), 1)
    assert dl.LOADER_ADVICE in est.suggestions
    line = next(a for a in est.assumptions if a.startswith("CPU data loader"))
    assert "5 workers per GPU" in line and "1,937 img/s per GPU" in line
    assert "longer than the GPU's" in line


def test_unstated_workers_are_assumed_to_keep_up_and_the_estimate_names_how_many() -> None:
    raw = _resnet()
    gpu_only = _steps_seconds(_resnet(loader="gpu"))
    assert _steps_seconds(raw) == pytest.approx(gpu_only, rel=1e-9)
    est = estimate(parse_workload(raw), resolve_gpu("A100-80GB"), 1)
    assert dl.LOADER_ADVICE not in est.suggestions
    line = next(a for a in est.assumptions if a.startswith("CPU data loader"))
    # the GPU's own rate over one worker's 387.48 img/s, rounded up
    steps = est.time_breakdown_hours["training steps"] * 3600.0 / (IMAGENET / 256)
    needed = -(-256 / (steps * dl.classification_images_per_s()) // 1)
    assert f"takes {int(needed)} workers per GPU" in line
    assert needed > dl.DEFAULT_WORKERS_PER_GPU  # an A100 outruns a p4d host's spare cores


def test_loader_that_keeps_up_leaves_the_gpu_time() -> None:
    # 64 workers: 24,799 img/s, far above the GPU's rate: the GPU step stands, no advice
    fast = _steps_seconds(_resnet(loader_workers_per_gpu=64))
    gpu_only = _steps_seconds(_resnet(loader="gpu"))
    assert fast == pytest.approx(gpu_only, rel=1e-9)
    assert fast < IMAGENET / (5 * dl.classification_images_per_s())
    est = estimate(parse_workload(_resnet(loader_workers_per_gpu=64)), resolve_gpu("A100-80GB"), 1)
    assert dl.LOADER_ADVICE not in est.suggestions
    assert any("faster than the GPU here" in a for a in est.assumptions)


def test_gpu_decoder_has_no_cpu_cap_and_no_loader_line() -> None:
    est = estimate(parse_workload(_resnet(loader="gpu")), resolve_gpu("A100-80GB"), 1)
    assert not any(a.startswith("CPU data loader") for a in est.assumptions)
    assert train_facts(parse_workload(_resnet(loader="gpu"))).loader_s_per_sample == 0.0


def test_loader_time_scales_with_workers_when_it_binds() -> None:
    # 2 and 4 workers both bind on an A100: epoch time halves, 1,281,167 / (2 x 387.48) = 1,653.2 s
    two = _steps_seconds(_resnet(loader_workers_per_gpu=2))
    four = _steps_seconds(_resnet(loader_workers_per_gpu=4))
    assert two == pytest.approx(1653.2, rel=1e-3)
    assert two == pytest.approx(2.0 * four, rel=1e-9)


def test_each_gpu_brings_its_own_workers() -> None:
    # 8 GPUs, 5 workers each: 8 x 1,937.4 img/s = 15,499 img/s; 82.7 s an epoch
    raw = _resnet(loader_workers_per_gpu=5)
    assert _steps_seconds(raw, "A100-80GB", 8) == pytest.approx(82.66, rel=2e-3)


def test_mosaic_pipeline_is_slower_than_classification() -> None:
    mosaic = _steps_seconds(_resnet(augmentation="mosaic", loader_workers_per_gpu=4))
    # 4 x 113.57 img/s = 454.3 img/s: 2,820 s an epoch
    assert mosaic == pytest.approx(IMAGENET / (4 * 113.57), rel=1e-3)


def test_transformers_have_no_loader() -> None:
    raw = {"name": "g", "kind": "pretrain", "model": "gpt2", "data": {"tokens": 1e9}}
    assert train_facts(parse_workload(raw)).loader_s_per_sample == 0.0


@pytest.mark.parametrize(
    ("raw", "key", "words"),
    [
        # no workers at all
        (_resnet(loader_workers_per_gpu=0), "data.loader_workers_per_gpu", "at least 1"),
        # more than any host has
        (_resnet(loader_workers_per_gpu=1000), "data.loader_workers_per_gpu", "at most 256"),
        # a pipeline the planner does not know
        (_resnet(augmentation="cutmix"), "data.augmentation", "mosaic"),
        # a loader the planner does not know
        (_resnet(loader="dali"), "data.loader", "gpu"),
        # CPU workers with a GPU decoder contradict each other
        (_resnet(loader="gpu", loader_workers_per_gpu=8), "data.loader_workers_per_gpu", "drop"),
        # a transformer reads tokens
        (
            {
                "name": "g",
                "kind": "pretrain",
                "model": "gpt2",
                "data": {"tokens": 1e9, "loader_workers_per_gpu": 8},
            },
            "data.loader_workers_per_gpu",
            "tokenised text",
        ),
        (
            {
                "name": "g",
                "kind": "pretrain",
                "model": "gpt2",
                "data": {"tokens": 1e9, "augmentation": "mosaic"},
            },
            "data.augmentation",
            "tokenised text",
        ),
    ],
)
def test_loader_fields_are_validated(raw: dict[str, Any], key: str, words: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_workload(raw)
    text = str(info.value)
    assert key in text and words in text


def _vit(**data: Any) -> dict[str, Any]:
    """DeiT-B as an encoder without a vocabulary reading 197 image patches a sample."""
    return {
        "name": "vit",
        "kind": "pretrain",
        "model": {
            "arch": "encoder",
            "params": 86.6e6,
            "layers": 12,
            "hidden": 768,
            "heads": 12,
            "vocab": 0,
            "seq_len": 197,
        },
        "data": {"samples": IMAGENET, "epochs": 1, "tokens_per_sample": 197, **data},
        "training": {"precision": "fp16", "optimizer": "adamw", "global_batch_samples": 256},
    }


def test_a_vision_transformer_is_fed_by_the_image_loader() -> None:
    # an encoder without a vocabulary reads JPEGs through the same pipeline as a CNN
    one = _steps_seconds(_vit(loader_workers_per_gpu=1))
    assert one == pytest.approx(IMAGENET / dl.classification_images_per_s(), rel=1e-3)
    assert _steps_seconds(_vit()) < one  # unstated workers: assumed to keep up


def test_preprocessed_arrays_have_no_decode_to_wait_on() -> None:
    spec = parse_workload(_resnet(augmentation="preprocessed"))
    assert dl.loader_limit(spec) is None
    est = estimate(spec, resolve_gpu("A100-80GB"), 1)
    assert not any(a.startswith("CPU data loader") for a in est.assumptions)


def test_one_worker_is_said_in_the_singular() -> None:
    # a slow GPU: one worker's 387 img/s outruns a T4's ResNet-50 step in fp32
    raw = _resnet()
    raw["training"] = {**raw["training"], "precision": "fp32"}
    est = estimate(parse_workload(raw), resolve_gpu("T4"), 1)
    line = next(a for a in est.assumptions if a.startswith("CPU data loader"))
    assert "takes 1 worker per GPU" in line


def test_a_text_model_is_told_in_plain_words_to_drop_the_loader_keys() -> None:
    raw = {
        "name": "e",
        "kind": "finetune",
        "model": "bert-base",
        "data": {"samples": 1000, "tokens_per_sample": 128, "loader": "cpu"},
    }
    with pytest.raises(ConfigError) as info:
        parse_workload(raw)
    assert "an encoder model with a vocabulary reads tokenised text: drop it" in str(info.value)
