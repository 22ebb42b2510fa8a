"""The bundled Azure GPU VM size table: what each size carries when no subscription can say.

Azure's resource-SKU API (which needs a subscription) gives vCPUs, memory and a GPU *count* but
never the GPU model (azure-cli#20077); the public Retail Prices API gives prices only.  This table
fills the gap for a refresh without a subscription, and gives every refresh the network figures no
Azure API publishes.

The figures live in ``planner/data/azure_sizes.yaml`` with their sources (Azure's size pages on
learn.microsoft.com), the one copy that ``planner/catalog/reference.py`` also reads for the bundled
snapshot; :data:`AZURE_SIZES` reads it on first use.  The sizes the planner cannot offer, with the
reason a refresh reports, are :data:`UNMAPPED_SIZES` below.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from planner.config.yamlfile import parse_yaml
from planner.errors import ConfigError
from planner.schema import Fabric, Interconnect

LEARN = "https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/"
DATA_FILE = "azure_sizes.yaml"  # in planner/data


@dataclass(frozen=True)
class AzureSize:
    """The facts of one GPU VM size, as Azure's size page lists them."""

    gpu: str  # canonical GPU name (planner/data/gpus.yaml)
    gpu_count: int
    vcpus: int
    memory_gib: float
    interconnect: Interconnect
    network_gbps: float | None
    fabric: Fabric
    page: str  # the learn.microsoft.com size page the figures come from


def _parse_size(name: str, raw: Any) -> AzureSize:
    try:
        network = raw["network_gbps"]
        return AzureSize(
            gpu=str(raw["gpu"]),
            gpu_count=int(raw["gpus"]),
            vcpus=int(raw["vcpus"]),
            memory_gib=float(raw["memory_gib"]),
            interconnect=Interconnect(raw["link"]),
            network_gbps=None if network is None else float(network),
            fabric=Fabric(raw["fabric"]),
            page=LEARN + str(raw["page"]),
        )
    except (KeyError, TypeError, ValueError) as e:  # a packaging bug, not user input: say where
        raise ConfigError(f"Azure size {name!r}: {e!r}", file=DATA_FILE) from e


@functools.cache
def _load_sizes() -> dict[str, AzureSize]:
    text = resources.files("planner.data").joinpath(DATA_FILE).read_text(encoding="utf-8")
    rows = parse_yaml(text, file=DATA_FILE)
    return {str(name): _parse_size(str(name), raw) for name, raw in rows.items()}


class _SizeTable(Mapping[str, AzureSize]):
    """``planner/data/azure_sizes.yaml`` as a mapping, read on first use (not at import)."""

    def __getitem__(self, name: str) -> AzureSize:
        return _load_sizes()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(_load_sizes())

    def __len__(self) -> int:
        return len(_load_sizes())

    def __repr__(self) -> str:
        return f"AZURE_SIZES({len(self)} sizes from planner/data/{DATA_FILE})"


# armSkuName -> its facts, in the file's order.
AZURE_SIZES: Mapping[str, AzureSize] = _SizeTable()

# GPU sizes the planner cannot offer, with the reason a refresh reports.  Anything else of the N
# families that is priced but in neither table is reported as missing from this module.
UNMAPPED_SIZES: dict[str, str] = {
    # NVadsA10_v5 "Accelerators" tab: 1/6, 1/3 and 1/2 of one A10.
    "Standard_NV6ads_A10_v5": "fractional GPU (1/6 of an A10)",
    "Standard_NV12ads_A10_v5": "fractional GPU (1/3 of an A10)",
    "Standard_NV18ads_A10_v5": "fractional GPU (1/2 of an A10)",
    # ND MI300X v5 without the r (InfiniBand) suffix: not on the series' size page, so its specs
    # are unchecked (ND96isr_MI300X_v5 is in planner/data/azure_sizes.yaml).
    "Standard_ND96is_MI300X_v5": "AMD Instinct MI300X size not on Azure's nd-mi300x-v5 page: specs unchecked",
    # ND GB200 v6: Grace Blackwell superchips, not in the GPU catalog.
    "Standard_ND128isr_NDR_GB200_v6": "NVIDIA GB200: not in the planner's GPU catalog",
    # NGads V620 (ngadsv620-series): AMD Radeon PRO V620, fractional below the largest size.
    "Standard_NG8ads_V620_v1": "AMD Radeon PRO V620: not in the planner's GPU catalog",
    "Standard_NG16ads_V620_v1": "AMD Radeon PRO V620: not in the planner's GPU catalog",
    "Standard_NG32ads_V620_v1": "AMD Radeon PRO V620: not in the planner's GPU catalog",
    "Standard_NG32adms_V620_v1": "AMD Radeon PRO V620: not in the planner's GPU catalog",
}


def size_spec(name: str) -> AzureSize | None:
    """The table entry for ``name`` (armSkuName casing varies between APIs: matched without case)."""
    return _by_lower().get(name.lower())


def unmapped_reason(name: str) -> str | None:
    """Why ``name`` is never offered, if it is a known GPU size the planner cannot use."""
    return _UNMAPPED_BY_LOWER.get(name.lower())


@functools.cache
def _by_lower() -> dict[str, AzureSize]:
    return {k.lower(): v for k, v in _load_sizes().items()}


_UNMAPPED_BY_LOWER = {k.lower(): v for k, v in UNMAPPED_SIZES.items()}
