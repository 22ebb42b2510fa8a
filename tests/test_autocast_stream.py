"""Eager torch.autocast over an fp32 model keeps the residual stream in fp32: the norms run in fp32,
every projection that reads a norm casts its output to 16 bits, and the backward pass casts each
input gradient back and sums them in fp32 (efficiency.AUTOCAST_STREAM_BYTES).  Measured on one
H100 (issue 14; benchmarks/gpu_probe.py ``casts``): BERT-base under bf16 autocast runs ten
hidden-sized casts a layer and four fp32 gradient sums, GPT-2 small (one fused c_attn) six and two.
These tests hold the count to the hand count and the estimate to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planner.gpu_specs import resolve_gpu
from planner.workload import efficiency as eff
from planner.workload import load_workload, parse_workload
from planner.workload.hf_config import section_from_config
from tests.cli_checks import invoke
from tests.step_workloads import step_estimate, step_job, step_seconds

H100 = resolve_gpu("H100")
STREAMED = eff.MEMORY_BW_FRACTION * H100.memory_bandwidth_gb_per_s * 1e9

BATCH, SEQ = 32, 512
HIDDEN_VALUES = BATCH * SEQ * 768 * 12  # BERT-base's hidden-sized values a step, every layer


def test_a_layernorm_layer_moves_the_hand_counted_bytes() -> None:
    # per hidden element, a = 4, e = 2; BERT's attention norm read by query, key and value (3):
    #   forward: add 2(4 - 2) = 4, LayerNorm 2(4 - 2) = 4, three casts 3 x 6 = 18: 26
    #   backward: three casts 18, three fp32 sums 3 x 3 x 2 = 18, LayerNorm 5 x 2 = 10, the
    #   residual branch's cast 6: 52
    # its MLP norm read by the intermediate projection alone: 4 + 4 + 6 = 14 and 6 + 6 + 10 + 6 = 28
    assert eff.autocast_stream_bytes(2.0, gated=False, inputs=(3, 1)) == (40.0, 80.0)
    # GPT-2's fused c_attn: two sites of 14 and 28
    assert eff.autocast_stream_bytes(2.0, gated=False, inputs=(1, 1)) == (28.0, 56.0)


def test_an_rmsnorm_layer_runs_its_norm_as_an_fp32_run_does() -> None:
    # the fp32 RMSNorm (28 forward, 60 backward) against the 16-bit one (28 + 2e = 32, 56 + 3e = 62):
    # -4 and -2 a site; Llama's attention norm read by three projections, its MLP norm by gate and up
    #   forward: 4 - 4 + 18 = 18 and 4 - 4 + 12 = 12
    #   backward: 18 + 18 - 2 + 6 = 40 and 12 + 12 - 2 + 6 = 28
    assert eff.autocast_stream_bytes(2.0, gated=True, inputs=(3, 2)) == (30.0, 68.0)


def test_the_counted_kernels_are_the_measured_ones() -> None:
    # each site casts forward c times, back c times, and the residual branch's gradient once: BERT's
    # 10 casts a layer (126 measured over 12 layers and the embeddings), GPT-2's 6 (74 measured)
    def casts(inputs: tuple[int, ...]) -> int:
        return sum(2 * c + 1 for c in inputs)

    assert casts((3, 1)) == 10
    assert casts((1, 1)) == 6


def bert(
    precision: str = "bf16", fused: bool | None = None, framework: str = "pytorch", **extra: Any
) -> Any:
    model: dict[str, Any] = {"preset": "bert-base", "seq_len": SEQ, **extra}
    if fused is not None:
        model["fused_projections"] = fused
    return step_job(
        model, precision=precision, framework=framework, batch=BATCH, seq=SEQ, flash=True
    )


def test_separate_projections_cost_their_casts_and_sums_under_autocast() -> None:
    # between BERT's three projections and one: forward two more casts (12), backward two more
    # casts (12) and two more fp32 sums (12) under autocast, and the two 16-bit sums (12) an eager
    # layer runs whatever its precision: 48 bytes a hidden value at the eager kernels' rate
    separate = step_seconds(step_estimate(bert()))
    fused = step_seconds(step_estimate(bert(fused=True)))
    assert separate - fused == pytest.approx(HIDDEN_VALUES * 48.0 / STREAMED, rel=1e-6)


def test_a_16_bit_stream_pays_only_the_sums() -> None:
    # pure bf16 keeps a 16-bit stream: two more sums of 3e = 12 bytes
    separate = step_seconds(step_estimate(bert("pure-bf16")))
    fused = step_seconds(step_estimate(bert("pure-bf16", fused=True)))
    assert separate - fused == pytest.approx(HIDDEN_VALUES * 12.0 / STREAMED, rel=1e-6)


def test_the_stream_costs_bert_its_measured_share() -> None:
    # BERT-base at 32 x 512 under bf16 autocast on the H100: the estimate's stream is 120 bytes a
    # hidden value, 6.8 ms; the fp32 kernels the probe measured (casts 3.8 ms, fp32 sums 2.5,
    # residual adds 1.5, LayerNorm 1.3 forward and 3.5 backward: 12.6 ms) less their 16-bit
    # equivalents (about half) leave 6-7 ms
    forward, backward = eff.autocast_stream_bytes(2.0, gated=False, inputs=(3, 1))
    stream_s = HIDDEN_VALUES * (forward + backward) / STREAMED
    assert 0.006 < stream_s < 0.0075


def bert_layer(element_bytes: float, *, fp32_stream: bool = True) -> eff.EagerTraffic:
    """A BERT-base layer's eager traffic at ``element_bytes``, its query, key and value separate."""
    return eff.eager_traffic(
        hidden=768.0,
        attention_width=768.0,
        kv_width=768.0,
        mlp_width=3072.0,
        heads=12,
        seq=SEQ,
        gated=False,
        dropout=True,
        element_bytes=element_bytes,
        attention_inputs=3,
        fp32_stream=fp32_stream,
    )


def test_lora_over_a_16_bit_base_keeps_a_16_bit_stream() -> None:
    lora = bert_layer(2.0, fp32_stream=False)
    assert (lora.autocast_hidden_forward, lora.autocast_hidden_backward) == (0.0, 0.0)
    full = bert_layer(2.0)  # the fp32 model's stream: 40 + 80 bytes a hidden value
    assert (full.autocast_hidden_forward, full.autocast_hidden_backward) == (40 * 768, 80 * 768)
    # and an fp32 run has no 16-bit casts at all
    fp32 = bert_layer(4.0)
    assert (fp32.autocast_hidden_forward, fp32.autocast_hidden_backward) == (0.0, 0.0)


def test_a_fused_stack_pays_nothing() -> None:
    for framework in ("megatron", "torchtitan"):
        separate = step_seconds(step_estimate(bert(framework=framework)))
        fused = step_seconds(step_estimate(bert(fused=True, framework=framework)))
        assert separate == pytest.approx(fused, rel=1e-12)


def test_presets_and_configs_say_which_models_fuse_their_projections() -> None:
    def model(name: str) -> Any:
        job = {"name": "x", "kind": "finetune", "model": name, "data": {"tokens": 1.0e6}}
        return parse_workload(job, file="job.yaml").model

    assert model("gpt2").fused_projections is True
    assert model("pythia-1b").fused_projections is True
    assert model("bert-base").fused_projections is None
    assert model("llama-3-8b").fused_projections is None
    gpt2 = {"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257}
    assert section_from_config(gpt2, "config.json")["fused_projections"] is True
    llama = {
        "model_type": "llama",
        "hidden_size": 2048,
        "num_hidden_layers": 22,
        "num_attention_heads": 32,
        "num_key_value_heads": 4,
        "intermediate_size": 5632,
        "vocab_size": 32000,
    }
    assert "fused_projections" not in section_from_config(llama, "config.json")


def test_a_workload_written_from_facts_keeps_the_fused_projections(tmp_path: Path) -> None:
    # `workloads new` writes a model's shape out where it is not the preset's (another seq_len):
    # the written file must load as the same model, GPT-2's one c_attn included
    result = invoke(
        "workloads", "new", "g", "--model", "gpt2", "--tokens", "1M", "--seq-len", "512"
    )
    assert result.exit_code == 0, result.output
    path = tmp_path / "g.yaml"
    path.write_text(result.stdout, encoding="utf-8")
    assert load_workload(str(path)).model.fused_projections is True
