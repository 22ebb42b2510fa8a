"""GPT-2's MLP activation, gelu_new, runs in an eager stack as eight kernels of Python arithmetic,
under torch.autocast in fp32 (``pow`` is on autocast's float32 list): measured on one H100 (issue
14; benchmarks/gpu_probe.py), GPT-2 small at 16 x 1,024 tokens took 130.6 ms a step with it and
90.4 ms with torch's fused tanh GeLU, and allocated 7.25 GB more.  efficiency.ARITHMETIC_GELU
counts its kernels' bytes; these tests hold the count to the hand count and the estimate to it."""

from __future__ import annotations

from typing import Any

import pytest

from planner.errors import ConfigError
from planner.gpu_specs import resolve_gpu
from planner.workload import efficiency as eff
from planner.workload import parse_workload
from planner.workload.hf_config import section_from_config
from tests.step_workloads import step_estimate, step_job, step_seconds

H100 = resolve_gpu("H100")
GIB = 2**30


def test_the_autocast_chain_moves_the_hand_counted_bytes() -> None:
    # forward: cast up 6, pow 8, two scalings and the +1 8 each (24), tanh 8, x + w 10, 0.5 x 4,
    # product 10, cast down 6 = 76, less a fused GeLU's 4
    # backward: cast 6, product 12 + 10 + cast 6, tanh 12, scalings 8 + 8, pow 20, casts 6 + 6,
    # 0.5 x 4, two sums 6 + 6 = 110, less a fused GeLU's 6
    assert eff.arithmetic_gelu_bytes(2.0, autocast=True) == (72.0, 104.0)
    # all in 16 bits: 14 x 2 + 4 x 2 - 4 and 17 x 2 + 9 x 2 - 6
    assert eff.arithmetic_gelu_bytes(2.0, autocast=False) == (32.0, 46.0)
    # fp32: 14 x 4 + 4 x 4 - 8 and 17 x 4 + 9 x 4 - 12
    assert eff.arithmetic_gelu_bytes(4.0, autocast=False) == (64.0, 92.0)


def test_it_stores_three_values_of_its_width() -> None:
    assert eff.arithmetic_gelu_stored_bytes(2.0, autocast=True) == 12.0  # measured: 7.25 GB / 604M
    assert eff.arithmetic_gelu_stored_bytes(2.0, autocast=False) == 6.0
    assert eff.arithmetic_gelu_stored_bytes(4.0, autocast=False) == 12.0


BANDWIDTH = H100.memory_bandwidth_gb_per_s * 1e9
STREAMED = eff.MEMORY_BW_FRACTION * BANDWIDTH  # the eager kernels' rate


def gpt2(
    activation: str | None,
    precision: str = "bf16",
    framework: str = "pytorch",
    tensor: int = 1,
    **model: Any,
) -> Any:
    model = {"preset": "gpt2", "vocab": 50304, **model}
    if activation is not None:
        model["activation"] = activation
    return step_job(model, precision=precision, framework=framework, tensor=tensor, flash=True)


def step_and_memory(workload: Any) -> tuple[float, float]:
    est = step_estimate(workload)
    return step_seconds(est), est.memory_per_gpu_gib


def test_the_preset_carries_gpt2s_activation() -> None:
    assert gpt2(None).model.activation == "gelu_new"


def test_under_autocast_the_chain_costs_its_bytes_at_the_streamed_bandwidth() -> None:
    # 16 x 1,024 tokens x 3,072 wide x 12 layers, 72 + 104 bytes each: the 12 stored bytes' write
    # and two reads (36) with the activation passes at the full 3,350 GB/s, the other 140 in the
    # eager kernels at 0.8 of it; the stored 12 bytes a value more memory (the activations' share
    # of the allocator's fragmentation on top)
    values = 16 * 1024 * 3072 * 12
    arithmetic_s, arithmetic_gib = step_and_memory(gpt2("gelu_new"))
    fused_s, fused_gib = step_and_memory(gpt2("gelu_pytorch_tanh"))
    expected = values * (140.0 / STREAMED + 36.0 / BANDWIDTH)
    assert arithmetic_s - fused_s == pytest.approx(expected, rel=0.01)
    # the measured 40.2 ms (130.6 - 90.4)
    assert arithmetic_s - fused_s == pytest.approx(0.0402, rel=0.1)
    assert arithmetic_gib - fused_gib == pytest.approx(values * 12.0 / GIB, rel=0.15)
    assert arithmetic_gib - fused_gib >= values * 12.0 / GIB


def test_a_fused_stack_runs_one_kernel_whatever_the_name() -> None:
    # Megatron and compiled stacks fuse the GeLU (bias-GeLU fusion, Inductor)
    for framework in ("megatron", "torchtitan"):
        assert step_and_memory(gpt2("gelu_new", framework=framework)) == pytest.approx(
            step_and_memory(gpt2("gelu_pytorch_tanh", framework=framework)), rel=1e-9
        )


def test_pure_bf16_runs_the_chain_in_16_bits() -> None:
    values = 16 * 1024 * 3072 * 12
    arithmetic_s, _ = step_and_memory(gpt2("gelu_new", "pure-bf16"))
    fused_s, _ = step_and_memory(gpt2("gelu_pytorch_tanh", "pure-bf16"))
    # 78 bytes a value, of which the 6 stored ones' write and two reads (18) stream with the
    # activation passes
    expected = values * (60.0 / STREAMED + 18.0 / BANDWIDTH)
    assert arithmetic_s - fused_s == pytest.approx(expected, rel=0.01)


def gpt2_config(**activation: Any) -> dict[str, Any]:
    """GPT-2 small's config.json shape with the activation keys given."""
    shape = {"n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257, "n_positions": 1024}
    return {"model_type": "gpt2", **shape, **activation}


def test_a_config_json_activation_is_read() -> None:
    config = gpt2_config(activation_function="gelu_new")
    assert section_from_config(config, "config.json")["activation"] == "gelu_new"
    config["activation_function"] = "a-custom-one"  # not a known name: read as fused, no error
    assert "activation" not in section_from_config(config, "config.json")


def test_a_misspelt_activation_is_refused_with_the_nearest_name() -> None:
    with pytest.raises(ConfigError, match=r"model\.activation.*did you mean gelu_new\?"):
        parse_workload(
            {
                "name": "x",
                "kind": "finetune",
                "model": {"preset": "gpt2", "activation": "Gelu-Nwe"},
                "data": {"tokens": 1.0e6},
            },
            file="job.yaml",
        )


@pytest.mark.parametrize("framework", ["lightning", "megatron", "torchtitan"])
def test_stacks_with_their_own_gelu_kernel_pay_nothing(framework: str) -> None:
    # LitGPT calls F.gelu(approximate="tanh"), Megatron fuses bias and GeLU, Inductor compiles it
    assert step_and_memory(gpt2("gelu_new", framework=framework)) == pytest.approx(
        step_and_memory(gpt2("gelu_pytorch_tanh", framework=framework)), rel=1e-9
    )


def test_a_gated_mlp_ignores_the_name() -> None:
    # a gated MLP's activation is the SiLU of its gate (efficiency.EAGER_SWIGLU_BYTES_PER_ELEMENT)
    llama = {"preset": "tinyllama-1.1b", "seq_len": 1024}
    named = step_and_memory(gpt2("gelu_new", **llama))
    plain = step_and_memory(gpt2("silu", **llama))
    assert named == pytest.approx(plain, rel=1e-9)


def test_tensor_parallel_ranks_split_the_chains_memory() -> None:
    # the chain is MLP-wide, so each of 2 tensor-parallel ranks keeps half of it: 12 bytes a value
    # under autocast over 3,072 / 2 columns
    per_rank = 16 * 1024 * 3072 / 2 * 12 * 12 / GIB
    arithmetic = step_estimate(gpt2("gelu_new", framework="hf-trainer", tensor=2), count=2)
    fused = step_estimate(gpt2("gelu_pytorch_tanh", framework="hf-trainer", tensor=2), count=2)
    assert arithmetic.strategy.tensor_parallel == 2
    extra = (
        arithmetic.memory_breakdown_gib["activations"] - fused.memory_breakdown_gib["activations"]
    )
    assert extra == pytest.approx(per_rank, rel=1e-6)


def test_hidden_act_is_read_where_activation_function_is_null() -> None:
    config = gpt2_config(activation_function=None, hidden_act="Gelu-New")
    assert section_from_config(config, "config.json")["activation"] == "gelu_new"


def test_mlp_named_by_its_activation_keeps_the_activation() -> None:
    spec = parse_workload(
        {
            "name": "x",
            "kind": "finetune",
            "model": {
                "arch": "decoder",
                "params": 124.4e6,
                "layers": 12,
                "hidden": 768,
                "heads": 12,
                "vocab": 50257,
                "seq_len": 1024,
                "ffn": 3072,
                "mlp": "gelu_new",
            },
            "data": {"tokens": 1.0e6},
        },
        file="job.yaml",
    )
    assert (spec.model.mlp, spec.model.activation) == ("plain", "gelu_new")
