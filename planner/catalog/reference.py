"""Normalise the public list-price reference files into the common offer table.

Input: the SkyPilot catalog extracts in ``../shared/reference/prices-next/`` (AWS, GCP, Lambda; 2026)
and ``../shared/reference/prices/`` (Azure, older), one CSV per cloud, columns and quirks described
in those folders' READMEs.  Output: one row per (provider, region, instance
type) in :mod:`planner.schema`.  Pure functions over DataFrames; ``scripts/build_snapshot.py`` does
the reading and writing.

What happens to the raw rows:

* Only NVIDIA GPUs the planner can schedule are kept (no TPUs, Trainium, Inferentia, Gaudi, FPGAs,
  Radeon, or retired K80/M60).  Dropped accelerators are counted in the build report.
* GPU models are keyed on name plus memory (AWS ``GpuInfo`` gives MiB per GPU: ``p4d`` is
  A100-40GB, ``p4de`` A100-80GB, even where ``GpuInfo`` calls the latter ``A100``).  The provider's
  memory figure is kept as ``gpu_memory_listed_gib``; the table's ``gpu_memory_gib`` is the catalog's.
* Fractional GPUs (AWS ``g6f``/``gr6f``: an eighth to a half of an L4) are left out: the planner
  schedules whole GPUs.
* Availability zones collapse to regions: on-demand is the median over zones (it is the same in
  every zone of a region), spot keeps the cheapest and the median zone price.
* GCP prices a GPU VM as host machine type + attached GPUs in the same zone: both rows are summed
  per zone before collapsing.  GPUs whose host rows are absent (``n1`` hosts for T4/V100/P4/P100,
  ``a4`` for B200) are left out rather than under-priced.
* Interconnect and network bandwidth come from the providers' public instance documentation
  (tables below).  Reserved 1- and 3-year prices are not in the reference data; they are derived
  from published discount levels and marked ``price_basis_reserved = derived``.
* Local disk (``local_disk_gb``): AWS rows give the instance store (``LocalDiskSize`` GB per disk x
  ``LocalDiskCount``; none listed = EBS only, 0); GCP machine types with bundled Local SSD get
  their documented size (:data:`GCP_LOCAL_SSD_DISKS`); the rest are left empty (not known).
* GCP ``a4-highgpu-8g`` hosts are listed at $0 with the whole price on the B200 accelerator rows;
  host + accelerators still sums to the VM price.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from importlib import resources

import numpy as np
import pandas as pd

from planner.config.yamlfile import parse_yaml
from planner.gpu_specs import GpuCatalog

# --- Published commitment discounts (fraction off on-demand) -------------------------------------
# Source: ../shared/reference/cost-facts.md section 3.1.
#   AWS p4d.24xlarge: 1-yr RI 20.175 vs 32.773 on-demand (-38%), 3-yr 12.499 (-62%)
#       (instances.vantage.sh).  Applied to AWS GPU families without a family-specific figure.
#   AWS p5.48xlarge: 1-yr 57.63 vs 98.32 (-41%), 3-yr 43.16 (-56%) (The Next Platform, Jul 2023).
#   GCP resource-based CUDs: "up to 57%" for GPUs over 3 years; 1-year GPU CUDs 37%
#       (GCP committed-use discount documentation).  We use 37% / 55%.
#   Azure Reserved VM Instances: 30-40% for 1 year, 55-72% for 3 years by family (3rd-party);
#       we use the middle of the 1-year band and the low end of the 3-year band: 35% / 55%.
#   Lambda: reserved capacity is by quote only; no published discount, so no reserved price.
RESERVED_DISCOUNTS: dict[tuple[str, str], tuple[float, float]] = {
    ("aws", "*"): (0.38, 0.62),
    ("aws", "p5"): (0.41, 0.56),
    ("aws", "p5e"): (0.41, 0.56),
    ("aws", "p5en"): (0.41, 0.56),
    ("gcp", "*"): (0.37, 0.55),
    ("azure", "*"): (0.35, 0.55),
}

# --- Spot interruption frequency (AWS Spot Instance Advisor buckets, upper bound, %/month) --------
# Source: cost-facts.md s3.3, us-east-1 examples quoted from the Spot Advisor feed (2026, 3rd-party).
# ">20%" is stored as 30 (the bucket has no upper bound; 30 is a deliberately pessimistic value).
SPOT_INTERRUPTION_PCT: dict[tuple[str, str, str], float] = {
    ("aws", "us-east-1", "p5.48xlarge"): 5.0,
    ("aws", "us-east-1", "g6e.2xlarge"): 10.0,
    ("aws", "us-east-1", "g6e.4xlarge"): 30.0,
    ("aws", "us-east-1", "g5.2xlarge"): 20.0,
}


@dataclass(frozen=True)
class InstanceNet:
    """GPU-GPU link and network of one instance type (provider documentation)."""

    interconnect: str  # none | pcie | nvlink | nvswitch (for multi-GPU instances)
    network_gbps: float | None
    fabric: str


# AWS: "Accelerated computing instance specifications" (docs.aws.amazon.com/ec2/latest/instancetypes/ac.html).
# "Up to N Gbps" sizes are recorded at N.  EFA-capable sizes get fabric=efa.
AWS_FAMILY_LINK = {
    "p3": "nvlink",
    "p3dn": "nvlink",
    "p4d": "nvswitch",
    "p4de": "nvswitch",
    "p5": "nvswitch",
    "p5e": "nvswitch",
    "p5en": "nvswitch",
    "p6-b200": "nvswitch",
    "p6-b300": "nvswitch",
}
AWS_NETWORK_GBPS: dict[str, float] = {
    "p3.2xlarge": 10, "p3.8xlarge": 10, "p3.16xlarge": 25, "p3dn.24xlarge": 100,
    "p4d.24xlarge": 400, "p4de.24xlarge": 400,
    "p5.48xlarge": 3200, "p5e.48xlarge": 3200, "p5en.48xlarge": 3200, "p5.4xlarge": 100,
    "p6-b200.48xlarge": 3200, "p6-b300.48xlarge": 6400,
    "g4dn.xlarge": 25, "g4dn.2xlarge": 25, "g4dn.4xlarge": 25, "g4dn.8xlarge": 50,
    "g4dn.12xlarge": 50, "g4dn.16xlarge": 50, "g4dn.metal": 100,
    "g5.xlarge": 10, "g5.2xlarge": 10, "g5.4xlarge": 25, "g5.8xlarge": 25, "g5.12xlarge": 40,
    "g5.16xlarge": 25, "g5.24xlarge": 50, "g5.48xlarge": 100,
    "g5g.xlarge": 10, "g5g.2xlarge": 10, "g5g.4xlarge": 10, "g5g.8xlarge": 12,
    "g5g.16xlarge": 25, "g5g.metal": 25,
    "g6.xlarge": 10, "g6.2xlarge": 10, "g6.4xlarge": 25, "g6.8xlarge": 25, "g6.12xlarge": 40,
    "g6.16xlarge": 25, "g6.24xlarge": 50, "g6.48xlarge": 100,
    "gr6.4xlarge": 25, "gr6.8xlarge": 25,
    "g6e.xlarge": 20, "g6e.2xlarge": 20, "g6e.4xlarge": 20, "g6e.8xlarge": 25, "g6e.12xlarge": 100,
    "g6e.16xlarge": 35, "g6e.24xlarge": 200, "g6e.48xlarge": 400,
}  # fmt: skip
AWS_EFA = {
    "p3dn.24xlarge", "p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge",
    "p5.4xlarge", "p6-b200.48xlarge", "p6-b300.48xlarge",
    "g4dn.8xlarge", "g4dn.12xlarge", "g4dn.16xlarge", "g4dn.metal",
    "g5.8xlarge", "g5.12xlarge", "g5.16xlarge", "g5.24xlarge", "g5.48xlarge",
    "g6.8xlarge", "g6.12xlarge", "g6.16xlarge", "g6.24xlarge", "g6.48xlarge",
    "g6e.8xlarge", "g6e.12xlarge", "g6e.16xlarge", "g6e.24xlarge", "g6e.48xlarge",
}  # fmt: skip

# GCP: "GPU machine types" and "Network bandwidth" pages (cloud.google.com/compute/docs/gpus,
# /compute/docs/network-bandwidth).  A3 High uses GPUDirect-TCPX (1,000 Gbps), A3 Mega
# GPUDirect-TCPXO (1,800 Gbps), A3 Ultra RDMA over Converged Ethernet (3,600 Gbps).
GCP_HOSTS: dict[str, tuple[str, int]] = {
    # host machine type -> (reference AcceleratorName, GPU count)
    "a2-highgpu-1g": ("A100", 1), "a2-highgpu-2g": ("A100", 2), "a2-highgpu-4g": ("A100", 4),
    "a2-highgpu-8g": ("A100", 8), "a2-megagpu-16g": ("A100", 16),
    "a2-ultragpu-1g": ("A100-80GB", 1), "a2-ultragpu-2g": ("A100-80GB", 2),
    "a2-ultragpu-4g": ("A100-80GB", 4), "a2-ultragpu-8g": ("A100-80GB", 8),
    "a3-highgpu-1g": ("H100", 1), "a3-highgpu-2g": ("H100", 2), "a3-highgpu-4g": ("H100", 4),
    "a3-highgpu-8g": ("H100", 8), "a3-megagpu-8g": ("H100-MEGA", 8),
    "a3-ultragpu-8g": ("H200", 8),
    "a4-highgpu-8g": ("B200", 8),
    "g2-standard-4": ("L4", 1), "g2-standard-8": ("L4", 1), "g2-standard-12": ("L4", 1),
    "g2-standard-16": ("L4", 1), "g2-standard-32": ("L4", 1), "g2-standard-24": ("L4", 2),
    "g2-standard-48": ("L4", 4), "g2-standard-96": ("L4", 8),
}  # fmt: skip
# SkyPilot names GCP's 40 GB A100 "A100" and the A3 Mega H100 "H100-MEGA".
GCP_GPU = {"A100": "A100-40GB", "H100-MEGA": "H100"}
GCP_NET: dict[str, InstanceNet] = {
    "a2-highgpu-1g": InstanceNet("none", 24, "ethernet"),
    "a2-highgpu-2g": InstanceNet("nvswitch", 32, "ethernet"),
    "a2-highgpu-4g": InstanceNet("nvswitch", 50, "ethernet"),
    "a2-highgpu-8g": InstanceNet("nvswitch", 100, "ethernet"),
    "a2-megagpu-16g": InstanceNet("nvswitch", 100, "ethernet"),
    "a2-ultragpu-1g": InstanceNet("none", 24, "ethernet"),
    "a2-ultragpu-2g": InstanceNet("nvswitch", 32, "ethernet"),
    "a2-ultragpu-4g": InstanceNet("nvswitch", 50, "ethernet"),
    "a2-ultragpu-8g": InstanceNet("nvswitch", 100, "ethernet"),
    "a3-highgpu-1g": InstanceNet("none", 25, "ethernet"),
    "a3-highgpu-2g": InstanceNet("nvswitch", 50, "ethernet"),
    "a3-highgpu-4g": InstanceNet("nvswitch", 100, "ethernet"),
    "a3-highgpu-8g": InstanceNet("nvswitch", 1000, "gpudirect-tcp"),
    "a3-megagpu-8g": InstanceNet("nvswitch", 1800, "gpudirect-tcp"),
    "a3-ultragpu-8g": InstanceNet("nvswitch", 3600, "roce"),
    "a4-highgpu-8g": InstanceNet("nvswitch", 3600, "roce"),
    "g2-standard-4": InstanceNet("none", 10, "ethernet"),
    "g2-standard-8": InstanceNet("none", 16, "ethernet"),
    "g2-standard-12": InstanceNet("none", 16, "ethernet"),
    "g2-standard-16": InstanceNet("none", 32, "ethernet"),
    "g2-standard-32": InstanceNet("none", 32, "ethernet"),
    "g2-standard-24": InstanceNet("pcie", 32, "ethernet"),
    "g2-standard-48": InstanceNet("pcie", 50, "ethernet"),
    "g2-standard-96": InstanceNet("pcie", 100, "ethernet"),
}

# GCP Local SSD bundled with a machine type (a fixed count of 375 GiB disks): "GPU machine types"
# (cloud.google.com/compute/docs/gpus, the "Attached Local SSD (GiB)" column: A2 Ultra 375 GiB
# per GPU, A3 High 750 GiB per GPU, A3 Mega 6,000 GiB, A3 Ultra and A4 12,000 GiB) and "About
# Local SSD disks" (/compute/docs/disks/local-ssd: A4, A3 and A2 Ultra machine types come with
# Local SSD; G2, A2 Standard and N1 take disks only as an option, priced apart, so they are left
# empty here).  Stored in GB, as AWS lists its instance store: 375 GiB = 402.65 GB.
GCP_LOCAL_SSD_DISKS: dict[str, int] = {
    "a2-ultragpu-1g": 1, "a2-ultragpu-2g": 2, "a2-ultragpu-4g": 4, "a2-ultragpu-8g": 8,
    "a3-highgpu-1g": 2, "a3-highgpu-2g": 4, "a3-highgpu-4g": 8, "a3-highgpu-8g": 16,
    "a3-megagpu-8g": 16, "a3-ultragpu-8g": 32, "a4-highgpu-8g": 32,
}  # fmt: skip
GCP_LOCAL_SSD_GB_PER_DISK = 375 * 2**30 / 1e9

# Azure: "GPU accelerated VM sizes" (learn.microsoft.com/azure/virtual-machines/sizes-gpu), the
# table in planner/data/azure_sizes.yaml that the Azure adapter reads too (one copy of the facts;
# catalog may not import the adapters, so both read the data file).  ND96isr_H100_v5 has 8 GPUs
# although the reference row says 12; the NC H100 v5 series uses the 94 GB H100 NVL card.
AZURE_SIZES_FILE = "azure_sizes.yaml"


def azure_sizes() -> dict[str, tuple[str, int, str, float | None, str]]:
    """armSkuName -> (canonical GPU, GPU count, link, network Gbps, fabric), read from
    ``planner/data/azure_sizes.yaml``."""
    text = resources.files("planner.data").joinpath(AZURE_SIZES_FILE).read_text(encoding="utf-8")
    rows = parse_yaml(text, file=AZURE_SIZES_FILE)
    return {
        str(name): (
            str(r["gpu"]),
            int(r["gpus"]),
            str(r["link"]),
            None if r["network_gbps"] is None else float(r["network_gbps"]),
            str(r["fabric"]),
        )
        for name, r in rows.items()
    }


# Lambda: instance names say the GPU and form factor (lambdalabs.com/service/gpu-cloud).
LAMBDA_GPU: dict[str, str] = {
    "A100": "A100-40GB",
    "A100-80GB": "A100-80GB",
    "H100": "H100",
    "A6000": "RTXA6000",
    "A10": "A10",
    "GH200": "GH200",
    "RTX6000": "Quadro-RTX6000",
    "V100": "V100-16GB",
    "B200": "B200",
}

# AWS accelerators that are NVIDIA GPUs; everything else (Inferentia, Trainium, Gaudi, FPGAs,
# Radeon, Qualcomm) is dropped.
AWS_GPU_NAMES = {
    "T4",
    "T4g",
    "V100",
    "V100-32GB",
    "A10G",
    "L4",
    "L40S",
    "A100",
    "A100-80GB",
    "H100",
    "H200",
    "B200",
    "B300",
    "RTXPRO6000",
}


@dataclass(frozen=True)
class Provenance:
    """Where one provider's reference file came from."""

    provider: str
    source: str  # e.g. "skypilot-catalog catalogs/v7/aws/vms.csv@001367d2"
    as_of: str  # YYYY-MM-DD


def _gpu_from_info(
    info: object, fallback: str, catalog: GpuCatalog
) -> tuple[str | None, float | None]:
    """Canonical GPU and per-GPU memory (GiB) from an AWS/Lambda ``GpuInfo`` string."""
    name, mem_gib = fallback, None
    if isinstance(info, str) and info.startswith("{"):
        parsed = ast.literal_eval(info)
        gpus = parsed.get("Gpus") or [{}]
        name = str(gpus[0].get("Name") or fallback)
        mib = gpus[0].get("MemoryInfo", {}).get("SizeInMiB")
        mem_gib = float(mib) / 1024 if mib else None
    if mem_gib is not None:
        gpu = catalog.get(f"{name}-{round(mem_gib)}GB") or catalog.get(name)
    else:
        gpu = catalog.get(name)
    return (gpu.name if gpu else None), mem_gib


def _collapse(zonal: pd.DataFrame) -> pd.DataFrame:
    """One row per offer from per-zone rows: median on-demand, min and median spot, zone count.

    ``zonal`` has the ``price``, ``spot`` and ``zone`` of each zone; every other column describes
    the offer and is a grouping key.
    """
    keys = [c for c in zonal.columns if c not in ("price", "spot", "zone")]
    agg = zonal.groupby(keys, dropna=False, sort=True).agg(
        price_on_demand_usd_per_hour=("price", "median"),
        price_spot_usd_per_hour=("spot", "min"),
        price_spot_median_usd_per_hour=("spot", "median"),
        zones=("zone", "nunique"),
    )
    return agg.reset_index()


def _finish(df: pd.DataFrame, prov: Provenance) -> pd.DataFrame:
    df = df.copy()
    df["provider"] = prov.provider
    df["source"] = prov.source
    df["as_of"] = prov.as_of
    df["gpu_memory_listed_gib"] = df["gpu_memory_gib"]  # validation swaps in the catalog's figure
    df["gpu_memory_total_gib"] = df["gpu_memory_gib"] * df["gpu_count"]
    fams = df["instance_type"].str.split(".").str[0]
    one_y, three_y = [], []
    for fam in fams:
        disc = RESERVED_DISCOUNTS.get((prov.provider, fam)) or RESERVED_DISCOUNTS.get(
            (prov.provider, "*")
        )
        one_y.append(np.nan if disc is None else 1 - disc[0])
        three_y.append(np.nan if disc is None else 1 - disc[1])
    od = df["price_on_demand_usd_per_hour"]
    df["price_reserved_1y_usd_per_hour"] = (od * np.array(one_y)).round(5)
    df["price_reserved_3y_usd_per_hour"] = (od * np.array(three_y)).round(5)
    df["price_basis_reserved"] = np.where(np.isnan(one_y), "none", "derived")
    df["spot_interruption_pct"] = [
        SPOT_INTERRUPTION_PCT.get((prov.provider, r, i), np.nan)
        for r, i in zip(df["region"], df["instance_type"], strict=True)
    ]
    # a spot price equal to on-demand is the source's "no discount" placeholder, not a spot market
    same = df["price_spot_usd_per_hour"] >= df["price_on_demand_usd_per_hour"]
    df.loc[same, ["price_spot_usd_per_hour", "price_spot_median_usd_per_hour"]] = np.nan
    df = df[df["price_on_demand_usd_per_hour"].notna()]
    return df


def normalise_aws(raw: pd.DataFrame, prov: Provenance, catalog: GpuCatalog) -> pd.DataFrame:
    """AWS rows (per AZ) -> common table rows (per region)."""
    raw = raw[raw["AcceleratorName"].isin(AWS_GPU_NAMES)].copy()
    count = raw["AcceleratorCount"].astype(float)
    raw = raw[(count >= 1) & (count == count.round())]  # no fractional GPUs (g6f, gr6f)
    models = [
        _gpu_from_info(info, str(acc), catalog)
        for info, acc in zip(raw["GpuInfo"], raw["AcceleratorName"], strict=True)
    ]
    raw["gpu_model"] = [m[0] for m in models]
    raw["gpu_memory_gib"] = [m[1] for m in models]
    raw = raw[raw["gpu_model"].notna()]
    zonal = pd.DataFrame(
        {
            "region": raw["Region"],
            "instance_type": raw["InstanceType"],
            "gpu_model": raw["gpu_model"],
            "gpu_count": raw["AcceleratorCount"].astype(float).astype(int),
            "gpu_memory_gib": raw["gpu_memory_gib"].astype(float),
            "vcpus": raw["vCPUs"].astype(float),
            "host_memory_gib": raw["MemoryGiB"].astype(float),
            "local_disk_gb": _aws_local_disk_gb(raw),
            "price": pd.to_numeric(raw["Price"], errors="coerce"),
            "spot": pd.to_numeric(raw["SpotPrice"], errors="coerce"),
            "zone": raw["AvailabilityZone"],
        }
    )
    df = _collapse(zonal)
    fam = df["instance_type"].str.split(".").str[0]
    df["interconnect"] = [
        "none" if n == 1 else AWS_FAMILY_LINK.get(f, "pcie")
        for f, n in zip(fam, df["gpu_count"], strict=True)
    ]
    df["network_gbps"] = df["instance_type"].map(AWS_NETWORK_GBPS).astype(float)
    df["fabric"] = np.where(df["instance_type"].isin(AWS_EFA), "efa", "ethernet")
    return _finish(df, prov)


def _aws_local_disk_gb(raw: pd.DataFrame) -> pd.Series:
    """Instance store per instance, GB: size per disk x disks; an instance without any (the
    extract leaves both empty: EBS only) has 0.  An extract without the columns (the older
    schema) leaves the column empty, not known."""
    if not {"LocalDiskSize", "LocalDiskCount"} <= set(raw.columns):
        return pd.Series(np.nan, index=raw.index, dtype=float)
    size = pd.to_numeric(raw["LocalDiskSize"], errors="coerce")
    count = pd.to_numeric(raw["LocalDiskCount"], errors="coerce")
    return (size * count).fillna(0.0).astype(float)


def normalise_gcp(raw: pd.DataFrame, prov: Provenance, catalog: GpuCatalog) -> pd.DataFrame:
    """GCP host rows + accelerator rows (per zone) -> priced VMs (per region)."""
    raw = raw.drop_duplicates()
    hosts = raw[raw["InstanceType"].isin(list(GCP_HOSTS))].copy()
    accels = raw[raw["InstanceType"].isna() & raw["AcceleratorName"].notna()].copy()
    accels["AcceleratorCount"] = accels["AcceleratorCount"].astype(float).astype(int)
    hosts["acc_name"] = hosts["InstanceType"].map(lambda t: GCP_HOSTS[t][0])
    hosts["acc_count"] = hosts["InstanceType"].map(lambda t: GCP_HOSTS[t][1])
    vm = hosts.merge(
        accels[["AvailabilityZone", "AcceleratorName", "AcceleratorCount", "Price", "SpotPrice"]],
        left_on=["AvailabilityZone", "acc_name", "acc_count"],
        right_on=["AvailabilityZone", "AcceleratorName", "AcceleratorCount"],
        suffixes=("_host", "_gpu"),
        how="inner",
    )
    gpu_names = {n: GCP_GPU.get(n) or catalog.resolve(n).name for n in vm["acc_name"].unique()}
    zonal = pd.DataFrame(
        {
            "region": vm["Region"],
            "instance_type": vm["InstanceType"],
            "gpu_model": vm["acc_name"].map(gpu_names),
            "gpu_count": vm["acc_count"].astype(int),
            "vcpus": vm["vCPUs"].astype(float),
            "host_memory_gib": vm["MemoryGiB"].astype(float),
            "price": vm["Price_host"].astype(float) + vm["Price_gpu"].astype(float),
            "spot": vm["SpotPrice_host"].astype(float) + vm["SpotPrice_gpu"].astype(float),
            "zone": vm["AvailabilityZone"],
        }
    )
    df = _collapse(zonal)
    df["gpu_memory_gib"] = (
        df["gpu_model"].map(lambda g: catalog.resolve(g).memory_gib).astype(float)
    )
    df["interconnect"] = df["instance_type"].map(lambda t: GCP_NET[t].interconnect)
    df["network_gbps"] = df["instance_type"].map(lambda t: GCP_NET[t].network_gbps).astype(float)
    df["fabric"] = df["instance_type"].map(lambda t: GCP_NET[t].fabric)
    disks = df["instance_type"].map(GCP_LOCAL_SSD_DISKS).astype(float)
    df["local_disk_gb"] = (disks * GCP_LOCAL_SSD_GB_PER_DISK).round(0)
    return _finish(df, prov)


def normalise_azure(raw: pd.DataFrame, prov: Provenance, catalog: GpuCatalog) -> pd.DataFrame:
    """Azure rows (per region, no zones) -> common table rows."""
    sizes = azure_sizes()
    raw = raw[raw["InstanceType"].isin(list(sizes))].copy()
    spec = raw["InstanceType"].map(sizes)
    zonal = pd.DataFrame(
        {
            "region": raw["Region"],
            "instance_type": raw["InstanceType"],
            "gpu_model": [s[0] for s in spec],
            "gpu_count": [s[1] for s in spec],
            "vcpus": raw["vCPUs"].astype(float),
            "host_memory_gib": raw["MemoryGiB"].astype(float),
            "price": pd.to_numeric(raw["Price"], errors="coerce"),
            "spot": pd.to_numeric(raw["SpotPrice"], errors="coerce"),
            "zone": raw["Region"],
        }
    )
    df = _collapse(zonal)
    df["gpu_memory_gib"] = (
        df["gpu_model"].map(lambda g: catalog.resolve(g).memory_gib).astype(float)
    )
    df["interconnect"] = df["instance_type"].map(lambda t: sizes[t][2])
    df["network_gbps"] = df["instance_type"].map(lambda t: sizes[t][3]).astype(float)
    df["fabric"] = df["instance_type"].map(lambda t: sizes[t][4])
    return _finish(df, prov)


def normalise_lambda(raw: pd.DataFrame, prov: Provenance, catalog: GpuCatalog) -> pd.DataFrame:
    """Lambda Cloud rows (per region, on-demand only) -> common table rows."""
    raw = raw[raw["AcceleratorName"].isin(list(LAMBDA_GPU))].copy()
    names = [
        "H100-PCIe" if "pcie" in t and a == "H100" else LAMBDA_GPU[a]
        for t, a in zip(raw["InstanceType"], raw["AcceleratorName"], strict=True)
    ]
    mems = [
        _gpu_from_info(i, a, catalog)[1]
        for i, a in zip(raw["GpuInfo"], raw["AcceleratorName"], strict=True)
    ]
    zonal = pd.DataFrame(
        {
            "region": raw["Region"],
            "instance_type": raw["InstanceType"],
            "gpu_model": names,
            "gpu_count": raw["AcceleratorCount"].astype(float).astype(int),
            "gpu_memory_gib": [
                m if m is not None else catalog.resolve(n).memory_gib
                for m, n in zip(mems, names, strict=True)
            ],
            "vcpus": raw["vCPUs"].astype(float),
            "host_memory_gib": raw["MemoryGiB"].astype(float),
            "price": pd.to_numeric(raw["Price"], errors="coerce"),
            "spot": np.nan,
            "zone": raw["Region"],
        }
    )
    df = _collapse(zonal)

    def link(t: str, n: int) -> str:
        if n == 1:
            return "none"
        if "sxm" in t or t.startswith("gpu_8x_a100"):
            return "nvswitch"
        return "nvlink" if t.startswith("gpu_8x_v100") else "pcie"

    df["interconnect"] = [
        link(t, n) for t, n in zip(df["instance_type"], df["gpu_count"], strict=True)
    ]
    df["network_gbps"] = np.nan  # not published for on-demand instances
    df["fabric"] = "ethernet"
    return _finish(df, prov)


NORMALISERS = {
    "aws": normalise_aws,
    "gcp": normalise_gcp,
    "azure": normalise_azure,
    "lambda": normalise_lambda,
}
