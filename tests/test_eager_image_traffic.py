"""An eager image model's separate activation and residual-add kernels stream their own memory
(issue 14), and ``auto`` trains a model on images with eager PyTorch, as torchvision, timm,
Ultralytics and NVIDIA's PyTorch examples do."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from planner.errors import ConfigError
from planner.gpu_specs import resolve_gpu
from planner.schema import Fabric, Interconnect
from planner.workload import efficiency as eff
from planner.workload import estimate, parse_workload
from planner.workload import strategy as st
from planner.workload.estimate_types import Topology, topology_links
from planner.workload.training import train_facts

A100 = resolve_gpu("A100-80GB")
GIB = 1024**3


def _resnet(precision: str = "fp16", **training: Any) -> Any:
    return parse_workload(
        {
            "name": "rn50",
            "kind": "pretrain",
            "model": "resnet50",
            "data": {"samples": 1_281_167, "epochs": 1},
            "training": {
                "precision": precision,
                "optimizer": "sgd",
                "global_batch_samples": 256,
                "parallelism": {"micro_batch": 256},
                **training,
            },
        }
    )


def test_values_per_stored_value_from_resnet50s_layers() -> None:
    # forward: ReLU 2 x 4.1M + (add 3 + ReLU 2) x 5.5M; backward: ReLU's 3 x (4.1M + 5.5M); over
    # the preset's 0.09 GiB of 16-bit values (48.3M)
    fwd, bwd = eff.EAGER_IMAGE_VALUES_PER_STORED_VALUE
    assert fwd == pytest.approx((2 * 4.1 + 5 * 5.5) / 48.3)
    assert bwd == pytest.approx(3 * (4.1 + 5.5) / 48.3)
    values = 0.09 * GIB / 2
    assert values == pytest.approx(48.3e6, rel=2e-3)


@pytest.mark.parametrize(("precision", "width"), [("fp16", 2.0), ("fp32", 4.0)])
def test_bytes_per_image_at_the_precisions_width(precision: str, width: float) -> None:
    f = train_facts(_resnet(precision))
    assert f.eager_traffic is not None
    values = 0.09 * GIB / 2
    # 35.7M + 28.8M values moved an image at 2 or 4 bytes: 129 MB in fp16
    assert f.eager_traffic.per_token(scores=False) == pytest.approx(
        (35.7 + 28.8) / 48.3 * values * width
    )
    # the stored activations are the preset's 16-bit values at the precision's width too
    assert f.act_per_sample == pytest.approx(values * width)


def test_a_fused_stack_streams_nothing_extra() -> None:
    assert train_facts(_resnet(framework="any")).eager_traffic is None


def test_the_step_streams_the_traffic_at_the_memory_bandwidth() -> None:
    f = train_facts(_resnet())
    assert f.eager_traffic is not None
    one = Topology(gpus_per_node=1, interconnect=Interconnect.PCIE, fabric=Fabric.ETHERNET)
    links = topology_links(A100, one, 1)
    eager, _ = st.search_training(f, A100, 1, links, flash=True)
    without, _ = st.search_training(replace(f, eager_traffic=None), A100, 1, links, flash=True)
    assert eager is not None and without is not None
    assert eager.strategy == without.strategy
    # 256 images x the bytes each at the streaming share of the bandwidth
    extra_s = (
        256
        * f.eager_traffic.per_token(scores=False)
        / (A100.memory_bandwidth_gb_per_s * 1e9 * eff.MEMORY_BW_FRACTION)
    )
    assert eager.step_s - without.step_s == pytest.approx(extra_s, rel=1e-6)


def test_auto_trains_images_eagerly_and_language_models_fused() -> None:
    est = estimate(_resnet(), A100, 1)
    line = next(a for a in est.assumptions if a.startswith("software stack:"))
    assert line.startswith("software stack: pytorch-fsdp (auto for pre-training a model on images;")
    assert "activation and residual-add kernels" in line and "129 MB a sample" in line
    fused = estimate(_resnet(framework="any"), A100, 1)
    assert fused.wall_hours < est.wall_hours
    gpt = parse_workload(
        {
            "name": "g",
            "kind": "pretrain",
            "model": "gpt2",
            "data": {"tokens": 1e9},
            "training": {"precision": "bf16"},
        }
    )
    line = next(a for a in estimate(gpt, A100, 8).assumptions if a.startswith("software stack:"))
    assert line.startswith("software stack: any (auto for pre-training")


def test_nvme_offload_under_auto_needs_a_stack_that_runs_it() -> None:
    raw: dict[str, Any] = {
        "name": "rn50",
        "kind": "pretrain",
        "model": "resnet50",
        "data": {"samples": 1_281_167},
        "training": {"precision": "fp16", "optimizer": "adamw", "offload": "nvme"},
    }
    with pytest.raises(ConfigError) as e:
        parse_workload(raw)
    assert e.value.key_path == "training.offload"
    assert "auto trains this cnn model on pytorch-fsdp" in str(e.value)
    assert "training.framework: deepspeed" in str(e.value)
    raw["training"]["framework"] = "deepspeed"
    assert parse_workload(raw).train.offload == "nvme"
