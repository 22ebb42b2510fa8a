"""The bundled Azure GPU VM size table: what each size carries when no subscription can say.

Azure's resource-SKU API (which needs a subscription) gives vCPUs, memory and a GPU *count* but
never the GPU model (azure-cli#20077); the public Retail Prices API gives prices only.  This table
fills the gap for a refresh without a subscription, and gives every refresh the network figures no
Azure API publishes.

Every figure is read from the size pages on learn.microsoft.com ("GPU accelerated VM sizes",
``learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/<series>``; the markdown source
is ``MicrosoftDocs/azure-docs: articles/virtual-machines/sizes/gpu-accelerated/``):
vCPUs and memory from each series' "Basics" tab, GPUs from its "Accelerators" tab, network from
its "Network" tab (Mbps / 1000).  Sizes with InfiniBand carry the InfiniBand figure instead (the
"8x 200 Gigabit HDR" / "8x400 Gigabit NDR" lines), since that is the link multi-node jobs use.
Where the Learn table lists no Ethernet figure (NCv3), ``network_gbps`` is None.

``planner/catalog/reference.py`` keeps an older five-column copy (``AZURE_SIZES``) for the bundled
snapshot; it should be derived from this table.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.schema import Fabric, Interconnect

LEARN = "https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/"


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


def _size(
    gpu: str,
    count: int,
    vcpus: int,
    memory_gib: float,
    link: Interconnect,
    network_gbps: float | None,
    page: str,
    fabric: Fabric = Fabric.ETHERNET,
) -> AzureSize:
    return AzureSize(gpu, count, vcpus, memory_gib, link, network_gbps, fabric, LEARN + page)


_NONE, _PCIE, _NVLINK, _NVSWITCH = (
    Interconnect.NONE,
    Interconnect.PCIE,
    Interconnect.NVLINK,
    Interconnect.NVSWITCH,
)
_IB = Fabric.INFINIBAND

AZURE_SIZES: dict[str, AzureSize] = {
    # NCasT4_v3: one to four T4 (16 GB), PCIe.
    "Standard_NC4as_T4_v3": _size("T4", 1, 4, 28, _NONE, 8, "ncast4v3-series"),
    "Standard_NC8as_T4_v3": _size("T4", 1, 8, 56, _NONE, 8, "ncast4v3-series"),
    "Standard_NC16as_T4_v3": _size("T4", 1, 16, 110, _NONE, 8, "ncast4v3-series"),
    "Standard_NC64as_T4_v3": _size("T4", 4, 64, 440, _PCIE, 32, "ncast4v3-series"),
    # NCv3: Tesla V100 16 GB, PCIe; the r size adds InfiniBand (retired September 2025, still
    # priced in some regions).
    "Standard_NC6s_v3": _size("V100-16GB", 1, 6, 112, _NONE, None, "ncv3-series"),
    "Standard_NC12s_v3": _size("V100-16GB", 2, 12, 224, _PCIE, None, "ncv3-series"),
    "Standard_NC24s_v3": _size("V100-16GB", 4, 24, 448, _PCIE, None, "ncv3-series"),
    "Standard_NC24rs_v3": _size("V100-16GB", 4, 24, 448, _PCIE, 56, "ncv3-series", _IB),
    # NDv2: eight V100 32 GB in an NVLink hybrid cube mesh (no NVSwitch), 100 Gb EDR InfiniBand.
    "Standard_ND40rs_v2": _size("V100-32GB", 8, 40, 672, _NVLINK, 100, "ndv2-series", _IB),
    # NC_A100_v4: one to four A100 80 GB PCIe cards.
    "Standard_NC24ads_A100_v4": _size("A100-80GB", 1, 24, 220, _NONE, 20, "nca100v4-series"),
    "Standard_NC48ads_A100_v4": _size("A100-80GB", 2, 48, 440, _PCIE, 40, "nca100v4-series"),
    "Standard_NC96ads_A100_v4": _size("A100-80GB", 4, 96, 880, _PCIE, 80, "nca100v4-series"),
    # ND A100 v4 / NDm A100 v4: HGX A100 boards (NVSwitch), 8x 200 Gb HDR InfiniBand.
    "Standard_ND96asr_v4": _size(
        "A100-40GB", 8, 96, 900, _NVSWITCH, 1600, "ndasra100v4-series", _IB
    ),
    "Standard_ND96amsr_A100_v4": _size(
        "A100-80GB", 8, 96, 1900, _NVSWITCH, 1600, "ndma100v4-series", _IB
    ),
    # NCads_H100_v5: the 94 GB H100 NVL card; the two-GPU size bridges its pair with NVLink.
    "Standard_NC40ads_H100_v5": _size("H100-NVL", 1, 40, 320, _NONE, 40, "ncadsh100v5-series"),
    "Standard_NC80adis_H100_v5": _size("H100-NVL", 2, 80, 640, _NVLINK, 80, "ncadsh100v5-series"),
    # ND_H100_v5 / ND_H200_v5: HGX boards, 8x 400 Gb NDR InfiniBand.  The resource-SKU API says
    # 12 GPUs for ND96isr_H100_v5 (azure-cli#31176); the size page says 8.  ND H200 v5 memory
    # (1850 GiB) as the SKU list reports it (Aspire's AKS VM-size list, generated from it).
    "Standard_ND96isr_H100_v5": _size("H100", 8, 96, 1900, _NVSWITCH, 3200, "ndh100v5-series", _IB),
    "Standard_ND96isr_H200_v5": _size(
        "H200", 8, 96, 1850, _NVSWITCH, 3200, "nd-h200-v5-series", _IB
    ),
    # NVadsA10_v5, the whole-GPU sizes (the smaller ones share one A10: UNMAPPED_SIZES).
    "Standard_NV36ads_A10_v5": _size("A10", 1, 36, 440, _NONE, 40, "nvadsa10v5-series"),
    "Standard_NV36adms_A10_v5": _size("A10", 1, 36, 880, _NONE, 80, "nvadsa10v5-series"),
    "Standard_NV72ads_A10_v5": _size("A10", 2, 72, 880, _PCIE, 80, "nvadsa10v5-series"),
}

# GPU sizes the planner cannot offer, with the reason a refresh reports.  Anything else of the N
# families that is priced but in neither table is reported as missing from this module.
UNMAPPED_SIZES: dict[str, str] = {
    # NVadsA10_v5 "Accelerators" tab: 1/6, 1/3 and 1/2 of one A10.
    "Standard_NV6ads_A10_v5": "fractional GPU (1/6 of an A10)",
    "Standard_NV12ads_A10_v5": "fractional GPU (1/3 of an A10)",
    "Standard_NV18ads_A10_v5": "fractional GPU (1/2 of an A10)",
    # ND MI300X v5 (nd-mi300x-v5-series): eight AMD Instinct MI300X, not in the GPU catalog.
    "Standard_ND96isr_MI300X_v5": "AMD Instinct MI300X: not in the planner's GPU catalog",
    "Standard_ND96is_MI300X_v5": "AMD Instinct MI300X: not in the planner's GPU catalog",
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
    return _BY_LOWER.get(name.lower())


def unmapped_reason(name: str) -> str | None:
    """Why ``name`` is never offered, if it is a known GPU size the planner cannot use."""
    return _UNMAPPED_BY_LOWER.get(name.lower())


_BY_LOWER = {k.lower(): v for k, v in AZURE_SIZES.items()}
_UNMAPPED_BY_LOWER = {k.lower(): v for k, v in UNMAPPED_SIZES.items()}
