"""GPU catalog: canonical names, aliases, suggestions, dense figures."""

from __future__ import annotations

from importlib import resources

import pytest
import yaml

from planner.errors import ConfigError, UnknownNameError
from planner.gpu_specs import GpuCatalog, _parse_gpu, load_gpu_catalog, resolve_gpu

CANONICAL = [
    "T4", "V100-16GB", "V100-32GB", "A10G", "A10", "L4", "L40S", "A100-40GB", "A100-80GB", "H100",
    "H100-PCIe", "H200", "B200", "RTX3060", "RTX3090", "RTX4090", "RTXA4000", "RTX6000-Ada", "Jetson-AGX-Orin",
]  # fmt: skip


def test_catalog_has_every_required_gpu() -> None:
    names = set(load_gpu_catalog().names)
    assert set(CANONICAL) <= names


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [
        ("a100 80gb", "A100-80GB"),  # lower case with a space
        ("H100-SXM", "H100"),  # form factor alias
        ("NVIDIA H100 80GB HBM3", "H100"),  # nvidia-smi name
        ("h100 pcie", "H100-PCIe"),
        ("GeForce RTX 4090", "RTX4090"),
        ("rtx_a4000", "RTXA4000"),
        ("Tesla V100-SXM2-32GB", "V100-32GB"),
        ("jetson agx orin", "Jetson-AGX-Orin"),
    ],
)
def test_aliases_resolve(alias: str, canonical: str) -> None:
    assert resolve_gpu(alias).name == canonical


def test_miss_suggests_nearest() -> None:
    with pytest.raises(UnknownNameError) as info:
        resolve_gpu("H10O")
    assert "H100" in info.value.suggestions


def test_family_name_is_ambiguous_for_resolve_but_matches_for_filters() -> None:
    with pytest.raises(ConfigError, match="A100-40GB or A100-80GB or A100-80GB-PCIe"):
        resolve_gpu("A100")
    assert {g.name for g in load_gpu_catalog().match("A100")} == {
        "A100-40GB",
        "A100-80GB",
        "A100-80GB-PCIe",
    }


def test_dense_not_sparse_figures() -> None:
    # H100 SXM dense BF16 is 989.4 TFLOPS; the 1,979 headline is with 2:4 sparsity (estimation.md s2).
    assert resolve_gpu("H100").tensor_tflops_dense == pytest.approx(989.4)
    # RTX 4090: FP32-accumulate dense 165.2, not the 330/660 FP16-accumulate figures.
    assert resolve_gpu("RTX4090").tensor_tflops_dense == pytest.approx(165.2)
    assert resolve_gpu("A100-80GB").peak_flops == pytest.approx(312e12)


def test_catalog_is_read_once_and_matches_the_pure_python_parse() -> None:
    # load_gpu_catalog parses with libyaml when available; the pure-Python SafeLoader must read the
    # same figures, and the catalog is built once per process.
    text = resources.files("planner.data").joinpath("gpus.yaml").read_text(encoding="utf-8")
    rows = yaml.load(text, Loader=yaml.SafeLoader)
    assert load_gpu_catalog() == GpuCatalog(tuple(_parse_gpu(r) for r in rows))
    assert load_gpu_catalog() is load_gpu_catalog()
