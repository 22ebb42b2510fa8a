"""The attention core under fused (flash) kernels: causal decoders skip the masked half, and the
kernel class a stack runs sets its rate on Hopper and newer (issue 14).

A fused attention kernel of a causal decoder skips every tile above the diagonal, so it runs half
the 12·L·h·s FLOPs per token that MFU counts (FlashAttention's benchmark divides them by 2 when
causal; LLaMA, Touvron et al. 2023 s2.4: the xformers kernel does "not [compute] the key/query
scores that are masked").  cuDNN's fused attention and FlashAttention-3 run their forward pass at
a GEMM's share of the peak on Hopper (75% utilization, FA3 paper); FlashAttention-2 reaches 35%
there (the same paper) and a GEMM's share on Ampere (50-73%, FA2 paper).  The backward pass
recomputes the scores: 2.5x the forward's FLOPs where the count has 2x, at 0.87 of the forward's
rate (FA3 paper, head dim 128).  Of the counted 12·L·h·s a third is forward and two thirds
backward, so a fused kernel takes 1/3 + 2/3 x 1.25 / 0.87 = 1.291188 x the time of its executed
FLOPs at its forward rate.  The expected values are worked by hand.
"""

from __future__ import annotations

import pytest

from benchmarks.accuracy import load_runs
from planner.errors import ConfigError
from planner.gpu_specs import resolve_gpu
from planner.workload import efficiency as eff
from planner.workload import estimate, parse_workload
from planner.workload.estimate_types import topology_links
from planner.workload.frameworks import load_frameworks
from planner.workload.strategy import _per_sequence, _setup, attention_kernel
from planner.workload.training import train_facts
from tests.test_fp8_stacks import H100, NODE, _llama3_8b

A100 = resolve_gpu("A100-80GB")


@pytest.mark.parametrize(
    ("gpu", "kernel", "causal", "flash", "expected"),
    [
        # a causal decoder under cuDNN attention on H100: half the square, forward at the matmul
        # rate, backward recomputing the scores: 0.5 x 1.291188
        ("H100", "cudnn", True, True, 0.645594),
        # FlashAttention-2 on H100: at 0.35/0.75 of the rate: 0.645594 x 0.75/0.35
        ("H100", "fa2", True, True, 1.383415),
        # ... and on Blackwell's datacenter part, the Hopper figure
        ("B200", "fa2", True, True, 1.383415),
        # FlashAttention-2 on Ampere, the GPUs it was written for: a GEMM's share
        ("A100-80GB", "fa2", True, True, 0.645594),
        # consumer Blackwell and Ada run the same synchronous mma instructions as Ampere
        ("RTX-PRO-6000", "fa2", True, True, 0.645594),
        ("RTX4090", "fa2", True, True, 0.645594),
        # an encoder (BERT) attends both ways: the whole square, 1.291188
        ("H100", "cudnn", False, True, 1.291188),
        ("H100", "fa2", False, True, 2.766831),
        # no fused kernel (V100, or flash_attention: false): the square is materialised, then
        # masked, and its backward reads the stored probabilities: the counted FLOPs, 1.0
        ("V100-16GB", "fa2", True, False, 1.0),
        ("H100", "cudnn", True, False, 1.0),
        # FlashAttention-1 (FA2 paper: 25-40% of peak, FA2 ~2x faster) at half FA2's share: on
        # A100 half the square at half the rate, 0.645594 / 0.5 = 1.291188
        ("A100-80GB", "fa1", True, True, 1.291188),
        ("RTX4090", "fa1", True, True, 1.291188),
        # ... an encoder on A100: the whole square at half the rate, 2 x 1.291188
        ("A100-80GB", "fa1", False, True, 2.582375),
        # ... and on H100, half of FA2's 0.35/0.75: 0.645594 / (0.35/0.75 x 0.5) = 2.766831
        ("H100", "fa1", True, True, 2.766831),
    ],
)
def test_attention_time_per_counted_flop(
    gpu: str, kernel: str, causal: bool, flash: bool, expected: float
) -> None:
    factor = eff.attention_time_factor(resolve_gpu(gpu), kernel, causal=causal, flash=flash)
    assert factor == pytest.approx(expected, rel=1e-5)


def test_under_fp8_the_attention_saving_is_scaled_to_its_16_bit_time() -> None:
    # 70% of the FLOPs in fp8 linear layers: the step's FLOPs run at 1 / (0.3 + 0.35) = 1.5385 x
    # the 16-bit peak, so the 16-bit attention core's change (0.645594 - 1 = -0.354406) takes
    # -0.354406 / 0.65 = -0.545240 counted FLOPs per attention FLOP at that blended rate
    extra = eff.attention_extra_flops(
        H100, "cudnn", causal=True, flash=True, precision="fp8", linear_share=0.7
    )
    assert extra == pytest.approx(-0.545240, rel=1e-5)
    # in 16 bits the fold is 1: the change itself
    bf16 = eff.attention_extra_flops(H100, "cudnn", causal=True, flash=True, precision="bf16")
    assert bf16 == pytest.approx(-0.354406, rel=1e-5)


def test_issue_14_under_fp8_the_attention_core_takes_its_bf16_time() -> None:
    # Transformer Engine runs the attention core in bf16 under an fp8 recipe (its fp8 attention
    # is opt-in): one Llama 2 7B layer's attention core at 32,768 tokens on H100 takes the same
    # seconds under fp8 as under bf16.  Counted: 12 x 4,096 x 32,768 FLOPs per token x 32,768
    # tokens = 5.27766e13, of which a fused causal kernel's time is 0.645594 x at the 16-bit rate.
    counted = 12 * 4096 * 32768 * 32768.0
    assert counted == pytest.approx(5.27766e13, rel=1e-5)
    peak16 = H100.peak_flops
    expected = 0.645594 * counted / peak16
    bf16 = eff.attention_extra_flops(H100, "cudnn", causal=True, flash=True, precision="bf16")
    assert (1 + bf16) * counted / peak16 == pytest.approx(expected, rel=1e-5)
    # fp8 with 70% of the step's FLOPs in fp8 linear layers: the step runs at one blended peak,
    # 1 / (0.3 + 0.7 / 2) = 1 / 0.65 of the 16-bit one, in which the counted attention FLOPs are
    # part of the 16-bit 30% (their own seconds: counted / peak16), and the extra FLOPs run at the
    # blended peak
    fold = 0.3 + 0.7 / 2
    fp8 = eff.attention_extra_flops(
        H100, "cudnn", causal=True, flash=True, precision="fp8", linear_share=0.7
    )
    seconds = counted / peak16 + fp8 * counted * fold / peak16
    assert seconds == pytest.approx(expected, rel=1e-5)


def test_a_recomputed_forward_pass_runs_at_the_forward_rate() -> None:
    # a forward pass run again executes half the square at the matmul rate (cuDNN on H100): 0.5;
    # FlashAttention-2 on H100: 0.5 x 0.75 / 0.35 = 1.071429
    fwd = eff.attention_time_factor(H100, "cudnn", causal=True, flash=True, backward_share=0.0)
    assert fwd == pytest.approx(0.5)
    fa2 = eff.attention_time_factor(H100, "fa2", causal=True, flash=True, backward_share=0.0)
    assert fa2 == pytest.approx(1.071429, rel=1e-5)
    # the backward pass alone: half the square, 1.25 x its FLOPs at 0.87 of the rate: 0.718391
    bwd = eff.attention_time_factor(H100, "cudnn", causal=True, flash=True, backward_share=1.0)
    assert bwd == pytest.approx(0.5 * 1.25 / 0.87, rel=1e-9)
    assert bwd == pytest.approx(0.718391, rel=1e-5)


def test_full_recompute_charges_the_repeated_forward_at_the_forward_rate() -> None:
    # Megatron on H100, Llama 3 8B at 8,192 tokens, full recompute: the counted attention core is
    # 1.05553e14 (forward and backward) + 0.351844e14 (the forward again); the first runs at
    # 0.645594, the second at 0.5 of its counted FLOPs
    f = train_facts(parse_workload(_llama3_8b("bf16", "megatron")))
    s = _setup(f, H100, 8, topology_links(H100, NODE, 8), flash=True)
    full = _per_sequence(
        f, 1, 1, "full", True, s.attention_extra, recompute_extra=s.attention_recompute_extra
    )
    none = 1.0555312e14
    again = 16 * 32 * 4096 * 8192 * 8192.0 - none
    added = (0.645594 - 1) * none + (0.5 - 1) * again
    expected = f.model_flops_per_seq + f.recompute_flops_per_seq["full"] + added
    assert full.hw_flops == pytest.approx(expected, rel=1e-5)


def test_facts_carry_the_attention_core_by_recompute_mode() -> None:
    f = train_facts(parse_workload(_llama3_8b("bf16", "megatron")))
    # 8,192 tokens x 12·32·4,096·8,192 = 1.05553e14 per sequence; recompute repeats the forward
    # 4·L·h·s: 16·32·4,096·8,192 x 8,192 = 1.40737e14
    assert f.causal
    assert f.attention_flops_per_seq["none"] == pytest.approx(1.05553e14, rel=1e-5)
    assert f.attention_flops_per_seq["full"] == pytest.approx(1.40737e14, rel=1e-5)
    bert = train_facts(
        parse_workload(
            {
                "name": "bert",
                "kind": "finetune",
                "model": "bert-large",
                "data": {"samples": 1000, "tokens_per_sample": 384},
            }
        )
    )
    # 384 x 12·24·1,024·384 = 4.34865e10, and an encoder is not causal
    assert not bert.causal
    assert bert.attention_flops_per_seq["none"] == pytest.approx(4.34865e10, rel=1e-5)


@pytest.mark.parametrize(
    ("framework", "gpu", "expected"),
    [
        # Megatron (cuDNN attention) on H100: 5.00244e14 model FLOPs per sequence + (0.645594 -
        # 1) x the 1.05553e14 attention core = 4.62835e14
        ("megatron", "H100", 4.62835e14),
        # torchtitan (FlashAttention-2) on H100: + (1.383415 - 1) x 1.05553e14 = 5.40715e14
        ("torchtitan", "H100", 5.40715e14),
        # ... and on A100, where FlashAttention-2 keeps a GEMM's rate: as Megatron
        ("torchtitan", "A100-80GB", 4.62835e14),
    ],
)
def test_a_steps_counted_flops_follow_the_stacks_attention_kernel(
    framework: str, gpu: str, expected: float
) -> None:
    g = resolve_gpu(gpu)
    f = train_facts(parse_workload(_llama3_8b("bf16", framework)))
    assert f.model_flops_per_seq == pytest.approx(5.00244e14, rel=1e-5)
    s = _setup(f, g, 8, topology_links(g, NODE, 8), flash=True)
    seq = _per_sequence(f, 1, 1, "none", True, s.attention_extra)
    assert seq.hw_flops == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize(
    ("override", "framework", "gpu", "expected"),
    [
        # training.attention_kernel: fa1 on torchtitan (A100): 5.00244e14 + (1.291188 - 1) x
        # 1.05553e14 = 5.30980e14
        ("fa1", "torchtitan", "A100-80GB", 5.30980e14),
        # ... on a Megatron stack (cuDNN by default) the override wins: the same 5.30980e14
        ("fa1", "megatron", "A100-80GB", 5.30980e14),
        # fa2 forced on Megatron on H100: + (1.383415 - 1) x 1.05553e14 = 5.40715e14
        ("fa2", "megatron", "H100", 5.40715e14),
        # no override: the stack's kernel (torchtitan on A100: FA2 at a GEMM's rate, 4.62835e14)
        (None, "torchtitan", "A100-80GB", 4.62835e14),
    ],
)
def test_a_workloads_attention_kernel_overrides_its_stacks(
    override: str | None, framework: str, gpu: str, expected: float
) -> None:
    g = resolve_gpu(gpu)
    raw = _llama3_8b("bf16", framework)
    if override is not None:
        raw["training"]["attention_kernel"] = override
    f = train_facts(parse_workload(raw))
    assert attention_kernel(f) == (override or load_frameworks()[framework].attention)
    s = _setup(f, g, 8, topology_links(g, NODE, 8), flash=True)
    seq = _per_sequence(f, 1, 1, "none", True, s.attention_extra)
    assert seq.hw_flops == pytest.approx(expected, rel=1e-5)


def test_an_unknown_attention_kernel_is_refused() -> None:
    raw = _llama3_8b("bf16", "megatron")
    raw["training"]["attention_kernel"] = "fa4"
    with pytest.raises(
        ConfigError, match=r"training\.attention_kernel: 'fa4' is not one of cudnn, fa2, fa1"
    ):
        parse_workload(raw)


def test_fa1_rows_slow_by_the_attention_share() -> None:
    """StarCoderBase (H46, FlashAttention-1 at 8,192 tokens on A100): the run's counted FLOPs per
    sequence rise over the FA2/cuDNN step (-0.354406 -> 0.291188 extra: twice the time)."""
    rows = {r.id: r for r in load_runs()[1]}
    spec = parse_workload(rows["H46"].workload)
    f = train_facts(spec)
    s = _setup(f, A100, 512, topology_links(A100, NODE, 8), flash=True)
    assert s.attention_extra == pytest.approx(0.291188, rel=1e-5)
    # 40 layers x 12·6,144·8,192 x 8,192 tokens = 1.97912e14 attention FLOPs per sequence
    assert f.attention_flops_per_seq["none"] == pytest.approx(1.979121e14, rel=1e-5)


def test_stacks_name_their_attention_kernel() -> None:
    stacks = load_frameworks()
    for name in ("megatron", "nemo", "any", "llm.c"):
        assert stacks[name].attention == "cudnn"  # Transformer Engine / cuDNN fused attention
    for name in ("torchtitan", "pytorch-fsdp", "hf-trainer"):
        assert stacks[name].attention == "fa2"  # PyTorch SDPA's flash backend


def test_issue_14_te_step_on_h100_is_faster_than_the_fa2_step_by_the_attention_alone() -> None:
    # One Megatron step with its attention kernel swapped (compare the step FLOPs directly):
    # the cuDNN step runs 4.62835e14 counted FLOPs, the FlashAttention-2 step 5.40715e14; both
    # at the same rate, so the matmul time differs by 5.40715 / 4.62835 = 1.16827.
    f = train_facts(parse_workload(_llama3_8b("bf16", "megatron")))
    s = _setup(f, H100, 8, topology_links(H100, NODE, 8), flash=True)
    fa2 = eff.attention_extra_flops(H100, "fa2", causal=True, flash=True, precision="bf16")
    cudnn = _per_sequence(f, 1, 1, "none", True, s.attention_extra)
    flash2 = _per_sequence(f, 1, 1, "none", True, fa2)
    assert flash2.stage_flops / cudnn.stage_flops == pytest.approx(1.16827, rel=1e-4)


def test_a_named_kernel_and_flash_attention_off_contradict_each_other() -> None:
    raw = {
        "name": "x",
        "kind": "finetune",
        "model": "gpt2-xl",
        "data": {"tokens": 1e9},
        "training": {"attention_kernel": "fa1", "flash_attention": False},
    }
    with pytest.raises(ConfigError, match="drop one of the two"):
        parse_workload(raw)


def test_flash_attention_turned_off_says_so_not_the_gpu() -> None:
    raw = {
        "name": "x",
        "kind": "finetune",
        "model": "gpt2-xl",
        "data": {"tokens": 1e9},
        "training": {"flash_attention": False},
    }
    est = estimate(parse_workload(raw), resolve_gpu("A100-80GB"), 1)
    assert any("FlashAttention off (training.flash_attention: false)" in a for a in est.assumptions)
    v100 = {**raw, "training": {"precision": "fp16"}}
    est = estimate(parse_workload(v100), resolve_gpu("V100-32GB"), 1)
    assert any(
        "FlashAttention off (the GPU does not run FlashAttention-2: older than Ampere, or a Jetson)"
        in a
        for a in est.assumptions
    )
