"""GPU name resolution at variant boundaries, and the GPUs added for published runs and clouds."""

from __future__ import annotations

import math

import pytest
import yaml

import planner
from planner.errors import ConfigError, PlannerError, UnknownNameError
from planner.gpu_specs import load_gpu_catalog, resolve_gpu
from planner.providers.base import interconnect_for
from planner.schema import Interconnect
from planner.workload import efficiency as eff
from planner.workload import vision_serving as vs
from planner.workload.estimate_types import default_topology
from planner.workload.estimator import check_precision, estimate, precision_fallback
from planner.workload.serving import has_hbm
from planner.workload.spec import load_workload, parse_workload

CATALOG = load_gpu_catalog()


# --- issue: a typed name that merely starts a longer canonical name resolved to that GPU --------


@pytest.mark.parametrize(
    ("typed", "meant", "not_meant"),
    [
        ("H20", "H20", "H200"),  # a Hopper part of its own: 148 dense TFLOPS, 96 GB
        ("NVIDIA H20", "H20", "H200"),
        ("L40", "L40", "L40S"),  # 181 dense TFLOPS against the L40S's 362
        ("A40", "A40", "A40"),
        ("A30", "A30", "A30"),
    ],
)
def test_issue_prefix_match_a_shorter_name_is_its_own_gpu(
    typed: str, meant: str, not_meant: str
) -> None:
    gpu = resolve_gpu(typed)
    assert gpu.name == meant
    assert {g.name for g in CATALOG.match(typed)} == {meant}


def test_issue_prefix_match_without_the_row_a_prefix_is_unknown_not_the_bigger_part() -> None:
    # the rule, apart from the rows: H20 must not fall back to the H200 were it missing
    rows = tuple(g for g in CATALOG.gpus if g.name not in ("H20", "L40"))
    catalog = type(CATALOG)(rows)
    for typed in ("H20", "L40"):
        assert catalog.family(typed) == ()
        with pytest.raises(UnknownNameError):
            catalog.resolve(typed)


@pytest.mark.parametrize(
    ("typed", "members"),
    [
        # a model with variants: every canonical name it starts at a separator
        ("A100", {"A100-40GB", "A100-80GB", "A100-80GB-PCIe"}),
        ("A800", {"A800-40GB", "A800-80GB"}),
        ("V100", {"V100-16GB"}),  # an alias of the 16 GB part, as before
        # a catalog family where no model is named
        ("GeForce", {g.name for g in CATALOG.gpus if g.family == "GeForce"}),
        ("MI300", {"MI300X", "MI325X"}),
        ("MI200", {"MI250X", "MI250", "MI210"}),
        ("MI350", {"MI350X", "MI355X"}),
    ],
)
def test_family_matches_at_variant_boundaries_or_by_family(typed: str, members: set[str]) -> None:
    assert {g.name for g in CATALOG.match(typed)} == members


def test_a_model_wins_over_the_family_of_the_same_name() -> None:
    # the A800s and the A30 share the A100's efficiency family but are not "A100"
    assert {g.name for g in CATALOG.gpus if g.family == "A100"} >= {"A800-80GB", "A30"}
    assert not {"A800-40GB", "A800-80GB", "A30"} & {g.name for g in CATALOG.match("A100")}
    with pytest.raises(ConfigError, match="ambiguous"):
        resolve_gpu("A800")


@pytest.mark.parametrize("typed", ["RTX", "Quadro", "Jetson AGX"])
def test_a_prefix_without_a_model_number_is_no_model(typed: str) -> None:
    with pytest.raises(UnknownNameError):
        resolve_gpu(typed)


# --- the added GPUs ----------------------------------------------------------------------------

# name: (aliases, family, memory GB, bandwidth GB/s, dense 16-bit TFLOPS, fp8, fp4, link, vendor)
ADDED = {
    "L40": (["NVIDIA L40"], "L40S", 48, 864, 181.05, True, False, "pcie", "nvidia"),
    "H20": (["NVIDIA H20", "HGX H20"], "H100", 96, 4000, 148, True, False, "nvlink", "nvidia"),
    "A40": (["NVIDIA A40", "A40 48GB"], "RTX-Pro-Ampere", 48, 696, 149.7, False, False, "nvlink-bridge", "nvidia"),
    "A30": (["NVIDIA A30"], "A100", 24, 933, 165, False, False, "nvlink-bridge", "nvidia"),
    "A800-40GB": (["A800 40GB"], "A100", 40, 1555, 312, False, False, "nvlink-bridge", "nvidia"),
    "A800-80GB": (["A800 80GB", "A800 SXM"], "A100", 80, 2039, 312, False, False, "nvlink", "nvidia"),
    "A100-80GB-PCIe": (
        ["A100 PCIe 80GB", "NVIDIA A100 80GB PCIe", "A100-PCIE-80GB"],
        "A100", 80, 1935, 312, False, False, "nvlink-bridge", "nvidia",
    ),
    "V100S": (["Tesla V100S", "V100S-PCIE-32GB"], "V100", 32, 1134, 130, False, False, "pcie", "nvidia"),
    "GB200": (["GB200 NVL72", "NVIDIA GB200"], "B200", 186, 8000, 2500, True, True, "nvlink", "nvidia"),
    "GB300": (["GB300 NVL72", "NVIDIA GB300"], "B200", 278, 8000, 2500, True, True, "nvlink", "nvidia"),
    "RTX3080": (["RTX 3080", "GeForce RTX 3080"], "GeForce", 10, 760, 59.5, False, False, "none", "nvidia"),
    "RTX3080Ti": (["RTX 3080 Ti", "GeForce RTX 3080 Ti"], "GeForce", 12, 912, 68.2, False, False, "none", "nvidia"),
    "RTX3090Ti": (["RTX 3090 Ti", "GeForce RTX 3090 Ti"], "GeForce", 24, 1008, 80, False, False, "nvlink-bridge", "nvidia"),
    "RTX4070Ti": (["RTX 4070 Ti"], "GeForce", 12, 504, 80.2, True, False, "none", "nvidia"),
    "RTX4080": (["RTX 4080", "GeForce RTX 4080"], "GeForce", 16, 716.8, 97.5, True, False, "none", "nvidia"),
    "RTX5090": (["RTX 5090", "GeForce RTX 5090"], "GeForce", 32, 1792, 209.5, True, True, "none", "nvidia"),
    "RTX2080Ti": (["RTX 2080 Ti", "GeForce RTX 2080 Ti"], "GeForce", 11, 616, 53.8, False, False, "nvlink-bridge", "nvidia"),
    "TITAN-RTX": (["TITAN RTX", "NVIDIA TITAN RTX"], "RTX-Pro", 24, 672, 130, False, False, "nvlink-bridge", "nvidia"),
    "RTXA5000": (["RTX A5000", "NVIDIA RTX A5000"], "RTX-Pro-Ampere", 24, 768, 111.1, False, False, "nvlink-bridge", "nvidia"),
    "MI300X": (["AMD Instinct MI300X", "MI300X 192GB"], "MI300", 192, 5300, 1307.4, True, False, "infinity-fabric", "amd"),
    "MI325X": (["AMD Instinct MI325X"], "MI300", 256, 6000, 1307.4, True, False, "infinity-fabric", "amd"),
    "MI250X": (["AMD Instinct MI250X"], "MI200", 64, 1638.5, 191.5, False, False, "infinity-fabric", "amd"),
    "MI250": (["AMD Instinct MI250"], "MI200", 64, 1638.5, 181.05, False, False, "infinity-fabric", "amd"),
    "MI355X": (["AMD Instinct MI355X", "MI355X 288GB"], "MI350", 288, 8000, 2516.6, True, True, "infinity-fabric", "amd"),
    "MI350X": (["AMD Instinct MI350X"], "MI350", 288, 8000, 2306.9, True, True, "infinity-fabric", "amd"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(ADDED))
def test_added_gpu_resolves_by_name_and_aliases_with_its_cited_figures(name: str) -> None:
    aliases, family, memory, bandwidth, tflops, fp8, fp4, link, vendor = ADDED[name]
    gpu = resolve_gpu(name)
    assert gpu.name == name
    for alias in aliases:
        assert resolve_gpu(alias).name == name, alias
    assert gpu.family == family
    assert (gpu.memory_gib, gpu.memory_bandwidth_gb_per_s) == (memory, bandwidth)
    assert gpu.tensor_tflops_dense == pytest.approx(tflops)
    assert (gpu.fp8, gpu.fp4, gpu.gpu_link, gpu.vendor) == (fp8, fp4, link, vendor)
    assert gpu.bf16 == (name not in ("V100S", "RTX2080Ti", "TITAN-RTX"))
    assert gpu.source and gpu.tdp_w > 0 and gpu.fp32_tflops > 0


def test_added_gpus_fp8_and_fp4_peaks_follow_the_datasheets() -> None:
    # GB200 NVL72: 720 PF FP8 and 1,440 PF FP4 sparse over 72 GPUs -> 5,000 and 10,000 dense
    gb200 = resolve_gpu("GB200")
    assert gb200.matmul_peak_flops("fp8") == pytest.approx(5000e12)
    assert gb200.matmul_peak_flops("fp4") == pytest.approx(10000e12)
    # GB300 NVL72: 720 PF FP8 sparse and 1,080 PF FP4 dense over 72 GPUs -> 5,000 and 15,000 dense
    gb300 = resolve_gpu("GB300")
    assert gb300.matmul_peak_flops("fp8") == pytest.approx(5000e12)
    assert gb300.matmul_peak_flops("fp4") == pytest.approx(15000e12)
    # MI300X: 2,614.9 FP8 dense; H20: 296 FP8 dense
    assert resolve_gpu("MI300X").matmul_peak_flops("fp8") == pytest.approx(2614.8e12)
    assert resolve_gpu("H20").matmul_peak_flops("fp8") == pytest.approx(296e12)
    assert resolve_gpu("MI250X").cannot_train_in("fp8") is not None  # CDNA2: no fp8
    # MI355X: 5,033.2 FP8 and 10,066.4 MXFP4 dense; MI350X 4,613.8 and 9,227.6 (CDNA4 datasheets)
    assert resolve_gpu("MI355X").matmul_peak_flops("fp8") == pytest.approx(5033.2e12)
    assert resolve_gpu("MI355X").matmul_peak_flops("fp4") == pytest.approx(10066.4e12)
    assert resolve_gpu("MI350X").matmul_peak_flops("fp8") == pytest.approx(4613.8e12)
    assert resolve_gpu("MI350X").matmul_peak_flops("fp4") == pytest.approx(9227.6e12)


def test_cdna4_fp4_cores_take_mxfp4_not_nvfp4() -> None:
    from planner.workload.serving import matmul_precision

    mi355x, b200 = resolve_gpu("MI355X"), resolve_gpu("B200")
    assert matmul_precision("fp4", b200) == "fp4"
    assert matmul_precision("fp4", mi355x) == "bf16"  # NVFP4 weight-only on AMD
    assert matmul_precision("mxfp4", mi355x) == "fp8"  # MXFP4 weights, MXFP8 activations


def test_added_gpus_join_the_family_sets_of_their_architecture() -> None:
    hopper_and_newer = {"H20", "GB200", "GB300"}
    for name in hopper_and_newer:
        gpu = resolve_gpu(name)
        assert eff.overlaps_tensor_parallel(gpu)  # _HOPPER_AND_NEWER
        assert eff.attention_kernel_fraction(gpu, "fa2") == pytest.approx(0.35 / 0.75)
        assert eff.pcie_gb_per_s(gpu) == 64.0
    for name in ("MI355X", "MI300X", "MI250X", "A30", "A800-80GB", "L40", "RTX5090"):
        gpu = resolve_gpu(name)
        assert not eff.overlaps_tensor_parallel(gpu), name
        assert eff.attention_kernel_fraction(gpu, "fa2") == 1.0, name
    # FlashAttention-2 runs on AMD Instinct through ROCm's Composable Kernel port
    assert eff.supports_flash_attention(resolve_gpu("MI300X"))
    assert eff.supports_flash_attention(resolve_gpu("MI250X"))
    assert not eff.supports_flash_attention(resolve_gpu("RTX2080Ti"))  # Turing
    # efficiency: the die's family, or the documented default where none was measured
    assert eff.gemm_fraction(resolve_gpu("A800-80GB")) == eff.GEMM_FRACTION["A100"]
    assert eff.gemm_fraction(resolve_gpu("H20")) == eff.GEMM_FRACTION["H100"]
    assert eff.gemm_fraction(resolve_gpu("MI250X")) == eff.GEMM_FRACTION["MI200"]
    assert eff.gemm_fraction(resolve_gpu("MI300X")) == eff.GEMM_FRACTION["MI300"]
    # the MI325X: the MI300X's die at 1,000 W holds a higher clock under matmuls (AMD's MAF table)
    assert eff.gemm_fraction(resolve_gpu("MI325X")) == pytest.approx(
        eff.GEMM_FRACTION["MI300"] * eff.SUSTAINED_GEMM_RELATIVE["MI325X"]
    )
    # CDNA4: its own family figure (calibration row C43, the MI355X), for both parts
    assert eff.gemm_fraction(resolve_gpu("MI355X")) == eff.GEMM_FRACTION["MI350"]
    assert eff.gemm_fraction(resolve_gpu("MI350X")) == eff.GEMM_FRACTION["MI350"]
    assert eff.GEMM_FRACTION["MI350"] != eff.DEFAULT_GEMM_FRACTION
    assert eff.pcie_gb_per_s(resolve_gpu("MI355X")) == 64.0  # PCIe Gen5 hosts
    assert eff.gemm_fraction(resolve_gpu("P100")) == eff.DEFAULT_GEMM_FRACTION
    # HBM: A30, A800, H20, GB200, GB300 and the Instinct parts; GDDR: L40, A40, GeForce
    hbm = ("A30", "A800-40GB", "H20", "GB200", "GB300", "V100S", "MI300X", "MI250X", "MI355X")
    for name in hbm:
        assert has_hbm(resolve_gpu(name)), name
    for name in ("L40", "A40", "RTX5090", "RTXA5000"):
        assert not has_hbm(resolve_gpu(name)), name


def test_infinity_fabric_is_an_all_to_all_direct_link() -> None:
    mi300x = resolve_gpu("MI300X")
    assert default_topology(mi300x, 8).interconnect is Interconnect.NVSWITCH
    assert interconnect_for(mi300x, 8) is Interconnect.NVSWITCH
    bandwidth, kind = eff.intra_node_link(mi300x, Interconnect.NVSWITCH, 8)
    assert kind == "nvlink" and bandwidth == pytest.approx(896 / 2 * 1e9 * 0.8)
    # the PCIe A100 80GB bridges pairs only; the SXM part sits on NVSwitch
    assert interconnect_for(resolve_gpu("A100-80GB-PCIe"), 2) is Interconnect.NVLINK
    assert interconnect_for(resolve_gpu("A100-80GB"), 8) is Interconnect.NVSWITCH


def test_tensorrt_llm_is_refused_on_amd() -> None:
    spec = load_workload("llm-serving-7b")
    spec = spec.model_copy(
        update={"inference": spec.inference.model_copy(update={"framework": "tensorrt-llm"})}
    )
    with pytest.raises(ConfigError, match="NVIDIA GPUs only"):
        estimate(spec, resolve_gpu("MI300X"), 1)


def test_a_bigger_gpu_is_suggested_from_the_same_vendor() -> None:
    spec = load_workload("llama-2-70b-pretrain")
    est = estimate(spec, resolve_gpu("H100"), 8)
    named = [s for s in est.suggestions if s.startswith("a bigger GPU would fit")]
    assert named == ["a bigger GPU would fit: 8 x H200 (141 GiB)"]  # not an AMD MI250X


# --- every catalog GPU gives an answer ---------------------------------------------------------


@pytest.mark.parametrize("workload", ["gpt2-finetune", "llm-serving-7b"])
@pytest.mark.parametrize("gpu_name", [g.name for g in CATALOG.gpus])
def test_every_catalog_gpu_estimates_or_says_why(workload: str, gpu_name: str) -> None:
    gpu = resolve_gpu(gpu_name)
    try:
        est = estimate(load_workload(workload), gpu, 1)
    except PlannerError as e:  # a clear refusal (no bf16 tensor cores, ...) is an answer
        assert str(e)
        return
    if est.fits:
        assert math.isfinite(est.wall_hours) and est.wall_hours > 0
        assert 0 < est.efficiency < 1


def test_every_catalog_gpu_names_a_known_vendor_and_link() -> None:
    # review: a typo ("AMD", "nvlink5") in gpus.yaml would silently count as another vendor or an
    # unknown link; the code compares against these names
    for gpu in CATALOG.gpus:
        assert gpu.vendor in {"nvidia", "amd"}, gpu.name
        assert gpu.gpu_link in {"nvlink", "nvlink-bridge", "infinity-fabric", "pcie", "none"}, (
            gpu.name
        )


def test_an_mi250x_is_one_graphics_compute_die() -> None:
    # review: ROCm shows each 128 GB module as two 64 GB devices, and one process drives one; a
    # 7B full fine-tune on one needs more than a die has
    mi250x = resolve_gpu("MI250X")
    assert (mi250x.memory_gib, mi250x.tensor_tflops_dense) == (64, 191.5)
    est = estimate(load_workload("llama-2-7b-finetune"), mi250x, 1)
    assert not est.fits


def test_rtx_pro_6000_blackwell_runs_at_the_hopper_share_at_its_gb202_dies_shape() -> None:
    """The RTX PRO 6000 Blackwell is the RTX 5090's GB202 chip at the same per-SM tensor rate, and
    reaches the H100's 0.80 of its peak in a large bf16 matmul where the GeForce cards run past
    theirs: the Hopper share at the default 4,096 reference hidden size, below GeForce's, and not
    the Turing Quadro cards' 0.40 at DeBERTa's 1,536 (RTX-Pro)."""
    pro = resolve_gpu("RTX-PRO-6000")
    assert pro.family == "RTX-Pro-Blackwell"
    assert eff.gemm_fraction(pro) == eff.GEMM_FRACTION["H100"] == 0.52
    assert eff.gemm_fraction(resolve_gpu("RTX5090")) == eff.GEMM_FRACTION["GeForce"] == 0.62
    assert eff.gemm_fraction(resolve_gpu("Quadro-RTX6000")) == eff.GEMM_FRACTION["RTX-Pro"] == 0.40
    assert eff.REFERENCE_HIDDEN.get(pro.family, eff.DEFAULT_REFERENCE_HIDDEN) == 4096
    assert eff.reference_bytes_per_flop(pro) == eff.reference_bytes_per_flop(resolve_gpu("RTX5090"))


def test_the_ga102_workstation_cards_take_the_h100s_share_of_their_peak() -> None:
    """The RTX A6000 reaches 0.80 of its peak in a large bf16 matmul, as the H100 SXM does of its
    own (one PyTorch script across cards): its family takes the H100's fraction at the default
    reference shape, where the Turing Quadro cards keep their measured 0.40 at DeBERTa's."""
    for name in ("RTXA6000", "RTXA5000", "RTXA4500", "A40"):
        gpu = resolve_gpu(name)
        assert gpu.family == "RTX-Pro-Ampere", name
        assert eff.gemm_fraction(gpu) == eff.GEMM_FRACTION["H100"] == 0.52
        assert eff.REFERENCE_HIDDEN.get(gpu.family, eff.DEFAULT_REFERENCE_HIDDEN) == 4096


# --- the GPUs added for older papers, consumer and workstation runs, and edge serving -----------

# name: (aliases, family, memory GB, bandwidth GB/s, dense 16-bit TFLOPS, bf16, fp8, fp4, link, vendor)
ADDED_MORE = {
    "K80": (["Tesla K80", "NVIDIA K80"], "Kepler", 12, 240, 4.37, False, False, False, "pcie", "nvidia"),
    "M60": (["Tesla M60"], "Maxwell", 8, 160, 4.82, False, False, False, "pcie", "nvidia"),
    "P40": (["Tesla P40"], "Pascal", 24, 346, 11.76, False, False, False, "pcie", "nvidia"),
    "GTX1080Ti": (["GTX 1080 Ti", "GeForce GTX 1080 Ti"], "GeForce", 11, 484, 11.34, False, False, False, "none", "nvidia"),
    "TITAN-Xp": (["TITAN Xp", "NVIDIA TITAN Xp"], "GeForce", 12, 547.7, 12.15, False, False, False, "none", "nvidia"),
    "TITAN-V": (["TITAN V", "NVIDIA TITAN V"], "V100", 12, 652.8, 110, False, False, False, "none", "nvidia"),
    "RTX2080": (["RTX 2080", "GeForce RTX 2080"], "GeForce", 8, 448, 40.3, False, False, False, "nvlink-bridge", "nvidia"),
    "RTX2080Super": (["RTX 2080 Super", "GeForce RTX 2080 SUPER"], "GeForce", 8, 496, 44.6, False, False, False, "nvlink-bridge", "nvidia"),
    "RTX3060Ti": (["RTX 3060 Ti", "GeForce RTX 3060 Ti"], "GeForce", 8, 448, 32.4, True, False, False, "none", "nvidia"),
    "RTX3070": (["RTX 3070", "GeForce RTX 3070"], "GeForce", 8, 448, 40.6, True, False, False, "none", "nvidia"),
    "RTX3070Ti": (["RTX 3070 Ti", "GeForce RTX 3070 Ti"], "GeForce", 8, 608, 43.5, True, False, False, "none", "nvidia"),
    "RTX3080-12GB": (["RTX 3080 12GB", "GeForce RTX 3080 12GB"], "GeForce", 12, 912, 61.3, True, False, False, "none", "nvidia"),
    "RTX4060Ti": (["RTX 4060 Ti", "RTX 4060 Ti 8GB", "NVIDIA GeForce RTX 4060 Ti"], "GeForce", 8, 288, 44.1, True, True, False, "none", "nvidia"),
    "RTX4060Ti-16GB": (["RTX 4060 Ti 16GB", "GeForce RTX 4060 Ti 16GB"], "GeForce", 16, 288, 44.1, True, True, False, "none", "nvidia"),
    "RTX4070": (["RTX 4070", "GeForce RTX 4070"], "GeForce", 12, 504, 58.3, True, True, False, "none", "nvidia"),
    "RTX4070Super": (["RTX 4070 Super", "GeForce RTX 4070 SUPER"], "GeForce", 12, 504, 71.0, True, True, False, "none", "nvidia"),
    "RTX4070TiSuper": (["RTX 4070 Ti Super", "GeForce RTX 4070 Ti SUPER"], "GeForce", 16, 672, 88.2, True, True, False, "none", "nvidia"),
    "RTX4080Super": (["RTX 4080 Super", "GeForce RTX 4080 SUPER"], "GeForce", 16, 736, 104.4, True, True, False, "none", "nvidia"),
    "RTX4090D": (["RTX 4090 D", "GeForce RTX 4090 D", "RTX 4090D"], "GeForce", 24, 1008, 147.1, True, True, False, "none", "nvidia"),
    "RTX5070": (["RTX 5070", "GeForce RTX 5070"], "GeForce", 12, 672, 61.7, True, True, True, "none", "nvidia"),
    "RTX5070Ti": (["RTX 5070 Ti", "GeForce RTX 5070 Ti"], "GeForce", 16, 896, 87.9, True, True, True, "none", "nvidia"),
    "RTX5080": (["RTX 5080", "GeForce RTX 5080"], "GeForce", 16, 960, 112.6, True, True, True, "none", "nvidia"),
    "A2": (["NVIDIA A2"], "A2", 16, 200, 18, True, False, False, "pcie", "nvidia"),
    "L20": (["NVIDIA L20"], "L40S", 48, 864, 119.5, True, True, False, "pcie", "nvidia"),
    "RTXA4500": (["RTX A4500", "NVIDIA RTX A4500"], "RTX-Pro-Ampere", 20, 640, 94.6, True, False, False, "nvlink-bridge", "nvidia"),
    "RTX5000-Ada": (["RTX 5000 Ada", "NVIDIA RTX 5000 Ada Generation"], "RTX-Pro", 32, 576, 261.1, True, True, False, "none", "nvidia"),
    "Jetson-Orin-Nano": (["Jetson Orin Nano", "Orin Nano"], "Jetson", 8, 68, 10, True, False, False, "none", "nvidia"),
    "Jetson-Orin-Nano-Super": (["Jetson Orin Nano Super", "Orin Nano Super"], "Jetson", 8, 102, 16.75, True, False, False, "none", "nvidia"),
    "Jetson-AGX-Xavier": (["Jetson AGX Xavier", "AGX Xavier"], "Jetson", 32, 136.5, 11.3, False, False, False, "none", "nvidia"),
    "MI210": (["AMD Instinct MI210", "MI210 64GB"], "MI200", 64, 1638.4, 181, True, False, False, "pcie", "amd"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(ADDED_MORE))
def test_more_added_gpus_resolve_by_their_aliases_with_their_cited_figures(name: str) -> None:
    aliases, family, memory, bandwidth, tflops, bf16, fp8, fp4, link, vendor = ADDED_MORE[name]
    gpu = resolve_gpu(name)
    assert gpu.name == name
    for alias in aliases:
        assert resolve_gpu(alias).name == name, alias
        assert {g.name for g in CATALOG.match(alias)} == {name}, alias
    assert gpu.family == family
    assert (gpu.memory_gib, gpu.memory_bandwidth_gb_per_s) == (memory, bandwidth)
    assert gpu.tensor_tflops_dense == pytest.approx(tflops)
    assert (gpu.bf16, gpu.fp8, gpu.fp4, gpu.gpu_link, gpu.vendor) == (bf16, fp8, fp4, link, vendor)
    assert gpu.source and gpu.tdp_w > 0 and gpu.fp32_tflops > 0


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        # a memory variant is its own row; the bare name stays the first card of that name
        ("RTX 3080", "RTX3080"),
        ("RTX 3080 12GB", "RTX3080-12GB"),
        ("RTX 4060 Ti", "RTX4060Ti"),  # the 8 GB card, as NVIDIA names them
        ("RTX 4060 Ti 16GB", "RTX4060Ti-16GB"),
        # a suffix names another card, never the one without it
        ("RTX 4090", "RTX4090"),
        ("RTX 4090 D", "RTX4090D"),  # 114 SMs against the 4090's 128
        ("RTX 4070 Ti", "RTX4070Ti"),
        ("RTX 4070 Ti SUPER", "RTX4070TiSuper"),
        ("Orin Nano", "Jetson-Orin-Nano"),  # the 15 W mode
        ("Jetson AGX Orin", "Jetson-AGX-Orin"),
        ("TITAN V", "TITAN-V"),
        ("TITAN RTX", "TITAN-RTX"),
        ("A2", "A2"),  # not the A10 or A100
        ("L20", "L20"),  # not the L40 or L4
    ],
)
def test_variant_and_suffix_names_resolve_to_their_own_row(typed: str, meant: str) -> None:
    assert resolve_gpu(typed).name == meant


def test_the_new_throughput_figures_follow_the_datasheets() -> None:
    # Ada GeForce: the FP32-accumulate dense rate is AI TOPS (FP8 sparse, FP16 accumulate) / 8
    for name, ai_tops in (("RTX4070", 466), ("RTX4070TiSuper", 706), ("RTX4080Super", 836)):
        assert resolve_gpu(name).tensor_tflops_dense == pytest.approx(ai_tops / 8, abs=0.1), name
    # Blackwell GeForce: AI TOPS are FP4 sparse, 16x the dense FP32-accumulate 16-bit rate
    rtx5080 = resolve_gpu("RTX5080")
    assert rtx5080.tensor_tflops_dense == pytest.approx(1801 / 16, abs=0.1)
    assert rtx5080.matmul_peak_flops("fp4") == pytest.approx(4 * 112.6e12)
    # L20: 239 FP8 dense (twice its 119.5); RTX 5000 Ada: 1,044.4 FP8 sparse
    assert resolve_gpu("L20").matmul_peak_flops("fp8") == pytest.approx(239e12)
    assert resolve_gpu("RTX5000-Ada").matmul_peak_flops("fp8") == pytest.approx(1044.4e12 / 2)
    # the boards clouds rent per die: a K80 die and an M60 GPU are half a board, ECC on
    k80, m60 = resolve_gpu("K80"), resolve_gpu("M60")
    assert (k80.usable_memory_gib, k80.tdp_w) == (pytest.approx(11441 / 1024, abs=0.01), 150)
    assert (m60.usable_memory_gib, m60.tdp_w) == (pytest.approx(7618 / 1024, abs=0.01), 150)
    assert resolve_gpu("A2").usable_memory_gib == pytest.approx(15356 / 1024, abs=0.01)
    assert resolve_gpu("L20").usable_memory_gib == pytest.approx(46068 / 1024, abs=0.01)


PRE_AMPERE = ["K80", "M60", "P40", "GTX1080Ti", "TITAN-Xp", "TITAN-V", "RTX2080", "RTX2080Super",
              "Jetson-AGX-Xavier"]  # fmt: skip
# Of them, the cards whose 16-bit matmuls run no faster than fp32 (no tensor cores, no packed fp16
# rate: their 16-bit peak is their fp32 peak in gpus.yaml): the fix is fp32 (no casts, no loss
# scaling), which the estimate times within a few per cent of fp16 there (the same matmul rate;
# fp16 halves the activation bytes)
NO_FASTER_16_BIT = {"K80", "M60", "P40", "GTX1080Ti", "TITAN-Xp"}


@pytest.mark.parametrize("name", PRE_AMPERE)
def test_bf16_is_refused_before_ampere_with_the_precision_that_pays(name: str) -> None:
    gpu = resolve_gpu(name)
    fix = "fp32" if name in NO_FASTER_16_BIT else "fp16"
    assert (gpu.tensor_tflops_dense <= gpu.fp32_tflops) == (fix == "fp32")
    with pytest.raises(ConfigError, match="no bf16 tensor cores") as info:
        check_precision(load_workload("gpt2-finetune"), gpu)
    assert info.value.key_path == "training.precision"
    assert info.value.hint is not None and info.value.hint.startswith(f"use {fix}")
    fixed = planner.with_training(load_workload("gpt2-finetune"), precision=fix)
    est = estimate(fixed, gpu, 1)  # the fix works there
    assert est.fits and math.isfinite(est.wall_hours) and est.wall_hours > 0
    if fix == "fp32":
        # the CUDA cores run fp32 and fp16 matmuls at one rate there (no tensor cores, no packed
        # fp16): fp32 gives up only the activation bytes autocast halves, a few per cent of the
        # job, and spares the loss scaling
        peak32, share32 = eff.precision_peak(gpu, "fp32")
        peak16, share16 = eff.precision_peak(gpu, "fp16")
        assert peak32 * share32 == pytest.approx(peak16 * share16)
        fp16 = planner.with_training(load_workload("gpt2-finetune"), precision="fp16")
        assert est.wall_hours < 1.05 * estimate(fp16, gpu, 1).wall_hours


@pytest.mark.parametrize("name", ["RTX3070", "RTX3080-12GB", "A2", "RTXA4500", "MI210"])
def test_fp8_is_refused_where_the_tensor_cores_lack_it_with_the_bf16_fix(name: str) -> None:
    gpu = resolve_gpu(name)
    assert gpu.cannot_train_in("fp8") is not None
    assert gpu.cannot_train_in("bf16") is None
    assert precision_fallback("fp8", gpu) == "bf16"


@pytest.mark.parametrize("name", ["L20", "RTX4070", "RTX4060Ti-16GB", "RTX5000-Ada", "RTX5080"])
def test_fp8_trains_on_the_new_ada_and_blackwell_parts(name: str) -> None:
    assert resolve_gpu(name).cannot_train_in("fp8") is None


def test_the_new_families_take_their_dies_figures_or_the_default() -> None:
    assert eff.gemm_fraction(resolve_gpu("L20")) == eff.GEMM_FRACTION["L40S"]
    assert eff.gemm_fraction(resolve_gpu("TITAN-V")) == eff.GEMM_FRACTION["V100"]
    assert eff.gemm_fraction(resolve_gpu("MI210")) == eff.GEMM_FRACTION["MI200"]
    assert eff.gemm_fraction(resolve_gpu("RTXA4500")) == eff.GEMM_FRACTION["RTX-Pro-Ampere"]
    assert eff.gemm_fraction(resolve_gpu("RTXA4000")) == eff.GEMM_FRACTION["RTX-Pro"]
    assert eff.gemm_fraction(resolve_gpu("A2")) == eff.GEMM_FRACTION["T4"]  # inference class
    for name in ("K80", "M60", "P40"):  # no tensor cores, nothing measured
        assert eff.gemm_fraction(resolve_gpu(name)) == eff.DEFAULT_GEMM_FRACTION, name
    # HBM: the TITAN V (GV100) and the MI210; GDDR and LPDDR: the rest
    assert has_hbm(resolve_gpu("TITAN-V")) and has_hbm(resolve_gpu("MI210"))
    for name in ("K80", "P40", "L20", "A2", "RTX4070", "Jetson-Orin-Nano"):
        assert not has_hbm(resolve_gpu(name)), name
    # none of them runs Hopper's asynchronous tensor-core instructions or FlashAttention-2 before Ampere
    for name in ("L20", "RTX5080", "MI210", "A2"):
        assert not eff.overlaps_tensor_parallel(resolve_gpu(name)), name
        assert eff.attention_kernel_fraction(resolve_gpu(name), "fa2") == 1.0, name
    for name in ("TITAN-V", "RTX2080", "K80", "Jetson-Orin-Nano"):
        assert not eff.supports_flash_attention(resolve_gpu(name)), name
    # PCIe: the 4060 Ti's x8 link, the 50 series' Gen5
    assert eff.pcie_gb_per_s(resolve_gpu("RTX4060Ti-16GB")) == 16.0
    assert eff.pcie_gb_per_s(resolve_gpu("RTX5080")) == 64.0


def test_int8_runs_where_each_generation_runs_it() -> None:
    def int8(name: str) -> float:
        return vs.conv_peak_flops(resolve_gpu(name), "int8")

    # DP4A at 4x fp32 without int8 tensor cores: Tesla P40 datasheet 47 INT8 TOPS on 11.76 FP32
    assert int8("P40") == pytest.approx(4 * 11.76e12)
    assert int8("GTX1080Ti") == pytest.approx(4 * 11.34e12)
    assert int8("TITAN-V") == pytest.approx(4 * 13.8e12)
    # issue: the GTX 1660 (TU116, no tensor cores) was given 4x its 2x-fp32 16-bit rate
    assert int8("GTX1660") == pytest.approx(4 * 5.0e12)
    # Kepler and Maxwell have no DP4A: their 16-bit (= fp32) rate
    assert int8("K80") == pytest.approx(4.37e12)
    assert int8("M60") == pytest.approx(4.82e12)
    # int8 tensor cores: twice the 16-bit rate (Xavier's Volta iGPU 22.6 TOPS), GeForce 4x
    assert int8("Jetson-AGX-Xavier") == pytest.approx(22.6e12)
    assert int8("A2") == pytest.approx(36e12)  # datasheet 36 INT8 TOPS dense
    assert int8("RTX4070") == pytest.approx(4 * 58.3e12)


def test_dlas_are_asked_only_of_the_jetson_whose_figures_the_planner_has() -> None:
    text = "name: t\nkind: inference\nmodel: resnet50\ninference: {images_per_s: 100, hours: 730, dla: true}\n"
    spec = parse_workload(yaml.safe_load(text))
    with pytest.raises(ConfigError, match="has deep learning accelerators") as xavier:
        estimate(spec, resolve_gpu("Jetson-AGX-Xavier"), 1)
    assert "no figures" in str(xavier.value) and "has no deep" not in str(xavier.value)
    with pytest.raises(ConfigError, match="has no deep learning accelerators"):
        estimate(spec, resolve_gpu("Jetson-Orin-Nano"), 1)
    plain = parse_workload(yaml.safe_load(text.replace(", dla: true", "")))
    nano = estimate(plain, resolve_gpu("Jetson-Orin-Nano"), 1)
    agx = estimate(plain, resolve_gpu("Jetson-AGX-Orin"), 1)
    assert nano.fits and agx.fits
    assert nano.serving is not None and agx.serving is not None
    # a quarter of the AGX Orin's tensor rate and a third of its bandwidth serve fewer images
    assert nano.serving.capacity_images_per_second is not None
    assert agx.serving.capacity_images_per_second is not None
    assert nano.serving.capacity_images_per_second < agx.serving.capacity_images_per_second


def test_a_bigger_gpu_of_the_same_memory_is_suggested_from_the_same_segment() -> None:
    # review: the 32 GB RTX 5000 Ada workstation card sorted before the RTX 5090 by name, and a
    # GeForce user was pointed at a card twice its price
    assert resolve_gpu("RTX5000-Ada").memory_gib == resolve_gpu("RTX5090").memory_gib == 32
    est = estimate(load_workload("gpt2-xl-finetune"), resolve_gpu("RTX4090"), 1)
    named = [s for s in est.suggestions if s.startswith("a bigger GPU would fit")]
    assert named == ["a bigger GPU would fit: 1 x RTX5090 (32 GiB)"]


def test_the_rtx_pro_family_filter_still_takes_in_the_rtx_pro_6000() -> None:
    # its efficiency family is RTX-Pro-Blackwell; a user's "RTX-Pro" means the professional cards
    names = {g.name for g in load_gpu_catalog().family("RTX-Pro")}
    assert {"RTX-PRO-6000", "RTXA6000", "RTX6000-Ada", "Quadro-RTX6000"} <= names
    assert not any(n.startswith("RTX40") or n.startswith("H100") for n in names)
