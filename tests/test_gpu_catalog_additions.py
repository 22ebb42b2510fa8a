"""GPU name resolution at variant boundaries, and the GPUs added for published runs and clouds."""

from __future__ import annotations

import math

import pytest

from planner.errors import ConfigError, PlannerError, UnknownNameError
from planner.gpu_specs import load_gpu_catalog, resolve_gpu
from planner.providers.base import interconnect_for
from planner.schema import Interconnect
from planner.workload import efficiency as eff
from planner.workload.estimate_types import default_topology
from planner.workload.estimator import estimate
from planner.workload.serving import has_hbm
from planner.workload.spec import load_workload

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
        ("MI200", {"MI250X", "MI250"}),
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
    "A40": (["NVIDIA A40", "A40 48GB"], "RTX-Pro", 48, 696, 149.7, False, False, "nvlink-bridge", "nvidia"),
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
    "RTXA5000": (["RTX A5000", "NVIDIA RTX A5000"], "RTX-Pro", 24, 768, 111.1, False, False, "nvlink-bridge", "nvidia"),
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
    assert eff.gemm_fraction(resolve_gpu("MI325X")) == eff.GEMM_FRACTION["MI300"]
    # CDNA4: no calibration row (its MLPerf runs are held out)
    assert eff.gemm_fraction(resolve_gpu("MI355X")) == eff.DEFAULT_GEMM_FRACTION
    assert eff.gemm_fraction(resolve_gpu("MI350X")) == eff.DEFAULT_GEMM_FRACTION
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


def test_rtx_pro_6000_blackwell_runs_at_its_gb202_dies_geforce_fraction() -> None:
    """The RTX PRO 6000 Blackwell is the RTX 5090's GB202 chip at the same per-SM tensor rate: the
    GeForce figure at the default 4,096 reference hidden size, not the Turing Quadro cards' 0.40
    at DeBERTa's 1,536 (RTX-Pro)."""
    pro = resolve_gpu("RTX-PRO-6000")
    assert pro.family == "RTX-Pro-Blackwell"
    assert eff.gemm_fraction(pro) == eff.GEMM_FRACTION["GeForce"] == 0.52
    assert eff.gemm_fraction(resolve_gpu("Quadro-RTX6000")) == eff.GEMM_FRACTION["RTX-Pro"] == 0.40
    assert eff.REFERENCE_HIDDEN.get(pro.family, eff.DEFAULT_REFERENCE_HIDDEN) == 4096
    assert eff.reference_bytes_per_flop(pro) == eff.reference_bytes_per_flop(resolve_gpu("RTX5090"))
