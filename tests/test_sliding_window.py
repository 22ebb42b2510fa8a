"""Sliding-window attention (Gemma 2, gpt-oss, Mistral 7B v0.1): read from a config.json's
``sliding_window`` and ``layer_types``, and served with each windowed layer's KV cache held for its
window only, against hand-worked numbers."""

from __future__ import annotations

from typing import Any

import pytest

from planner.errors import ConfigError, PlannerError
from planner.gpu_specs import resolve_gpu
from planner.workload import efficiency as eff
from planner.workload import estimate, parse_workload
from planner.workload.hf_config import section_from_config
from planner.workload.models import get_preset
from planner.workload.parallel import Links
from planner.workload.serving import ModelShape, Replica, serving_stack
from planner.workload.training import train_facts

NVLINK = Links(gpus_per_node=8, intra_bytes_per_s=450e9, intra_kind="nvlink", node_bytes_per_s=50e9)
MISTRAL_V01 = {
    "model_type": "mistral",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 32000,
    "max_position_embeddings": 32768,
    "sliding_window": 4096,
}


def test_the_catalog_reads_gpt_oss_and_gemma_2_as_alternating_windows() -> None:
    oss = get_preset("gpt-oss-120b")
    assert oss is not None and (oss.sliding_window, oss.sliding_window_layers) == (128, 18)
    gemma = get_preset("gemma-2-9b")
    assert gemma is not None and (gemma.sliding_window, gemma.sliding_window_layers) == (4096, 21)
    llama = get_preset("llama-3.1-8b")
    assert llama is not None and llama.sliding_window is None


def test_a_config_reads_its_window_from_layer_types_or_the_familys_rule() -> None:
    every = section_from_config(MISTRAL_V01, "config.json")
    assert (every["sliding_window"], every["sliding_window_layers"]) == (4096, 32)
    # Mistral v0.2 and later write a null window: every layer full
    assert "sliding_window" not in section_from_config(
        {**MISTRAL_V01, "sliding_window": None}, "config.json"
    )
    # layer_types decides where the config lists them: 3 windowed of 32
    types = ["full_attention"] * 29 + ["sliding_attention"] * 3
    listed = section_from_config({**MISTRAL_V01, "layer_types": types}, "config.json")
    assert listed["sliding_window_layers"] == 3
    # a window no shorter than the context the model takes is no window
    wide = {**MISTRAL_V01, "sliding_window": 32768}
    assert "sliding_window" not in section_from_config(wide, "config.json")
    # Qwen2's window applies only with use_sliding_window, from max_window_layers on
    qwen = {**MISTRAL_V01, "model_type": "qwen2", "max_window_layers": 28}
    assert "sliding_window" not in section_from_config(qwen, "config.json")
    on = section_from_config({**qwen, "use_sliding_window": True}, "config.json")
    assert on["sliding_window_layers"] == 32 - 28


def test_a_layer_types_list_of_the_wrong_length_names_the_key() -> None:
    with pytest.raises(ConfigError) as e:
        section_from_config({**MISTRAL_V01, "layer_types": ["full_attention"] * 3}, "config.json")
    assert "layer_types" in str(e.value) and "3 layer kinds for 32 layers" in str(e.value)


def test_windowed_layers_without_a_window_are_refused_with_the_fix() -> None:
    with pytest.raises(PlannerError) as e:
        parse_workload(
            {
                "name": "w",
                "kind": "inference",
                "model": {"preset": "llama-3.1-8b", "sliding_window_layers": 16},
                "inference": {"tokens_per_s": 100, "hours": 1},
            }
        )
    assert "model.sliding_window" in str(e.value)


def _replica(model: ModelShape) -> Replica:
    return Replica(model, resolve_gpu("H100"), 1, NVLINK, serving_stack("vllm"))


FULL = ModelShape(params=7e9, layers=32, hidden=4096, heads=32, kv_heads=8)
HALF = ModelShape(
    params=7e9, layers=32, hidden=4096, heads=32, kv_heads=8, window_tokens=1024, windowed_layers=16
)


def test_a_windowed_layer_holds_its_window_of_kv_cache() -> None:
    # 8,192 tokens of context: 16 full layers hold 8,192, 16 windowed ones 1,024 -> 4,608 per layer
    assert HALF.kv_tokens(8192) == pytest.approx(0.5 * 8192 + 0.5 * 1024)
    assert HALF.kv_tokens(512) == 512  # shorter than the window: every layer holds it all
    r, full = _replica(HALF), _replica(FULL)
    assert r.request_kv_tokens(6000, 2192) == pytest.approx(4608)
    # about 1.8x the requests fit the same pool at 8,192 tokens
    assert r.max_concurrency(8192) >= int(full.max_concurrency(8192) * 8192 / 4608) - 1
    assert r.max_concurrency(8192) > full.max_concurrency(8192)


def test_beams_share_the_prompt_inside_the_window() -> None:
    beams = Replica(HALF, resolve_gpu("H100"), 1, NVLINK, serving_stack("vllm"), beam_width=4)
    # full layers: 1,000 prompt + 4 x 200 generated; windowed: each beam's last 1,024 tokens are
    # 200 of its own and 824 of the shared prompt -> 824 + 4 x 200
    assert beams.request_kv_tokens(1000, 200) == pytest.approx(
        0.5 * (1000 + 4 * 200) + 0.5 * (824 + 4 * 200)
    )


def test_a_prompt_token_attends_within_the_band() -> None:
    # a 4,096-token prompt: full layers 2,048 on average, windowed ones 1,024 - 1,024^2/8,192 = 896
    assert HALF.prefill_attended(4096) == pytest.approx(0.5 * 2048 + 0.5 * 896)
    assert FULL.prefill_attended(4096) == 2048
    # a long decode reads less KV cache with the windows, so its step is shorter
    assert _replica(HALF).step_seconds(64, 16384) < _replica(FULL).step_seconds(64, 16384)


def test_a_windowed_layer_runs_its_band_of_the_causal_square() -> None:
    # a 1,024-token window at 2,048 tokens: the band s·W - W²/2 = 1.5M of the triangle's 2.1M,
    # 0.75; on 18 of 24 layers 0.25 + 0.75 x 0.75
    assert eff.window_attention_share(2048, 1024, 18 / 24) == pytest.approx(0.25 + 0.75 * 0.75)
    assert eff.window_attention_share(2048, 4096, 0.5) == 1.0  # no shorter than the sequence
    assert eff.window_attention_share(2048, None, 0.5) == 1.0
    h100 = resolve_gpu("H100")
    full = eff.attention_time_factor(h100, "fa2", causal=True, flash=True)
    banded = eff.attention_time_factor(h100, "fa2", causal=True, flash=True, window_share=0.8125)
    assert banded == pytest.approx(full * 0.8125)
    # an unfused kernel scores the whole square and masks it: no saving
    assert eff.attention_time_factor(h100, "fa2", causal=True, flash=False, window_share=0.5) == 1


def _pretrain(window: int | None) -> Any:
    model = {
        "arch": "decoder",
        "params": 780e6,
        "layers": 24,
        "hidden": 1536,
        "heads": 12,
        "vocab": 32768,
        "seq_len": 8192,
    }
    if window is not None:
        model |= {"sliding_window": window, "sliding_window_layers": 18}
    return parse_workload(
        {
            "name": "w",
            "kind": "pretrain",
            "model": model,
            "data": {"tokens": 1e9},
            "training": {"precision": "bf16", "framework": "torchtitan"},
        }
    )


def test_training_with_windows_is_faster_at_long_sequences_and_says_so() -> None:
    h100 = resolve_gpu("H100")
    full = estimate(_pretrain(None), h100, 8)
    windowed = estimate(_pretrain(1024), h100, 8)
    assert windowed.wall_hours < full.wall_hours
    assert train_facts(_pretrain(1024)).attention_window_share == pytest.approx(
        0.25 + 0.75 * (2 * 1024 / 8192 - (1024 / 8192) ** 2)
    )
    assert "sliding-window layers" in windowed.efficiency_source
    assert "sliding-window" not in full.efficiency_source


def test_a_request_fits_only_where_the_pool_holds_its_windowed_kv_cache_once() -> None:
    # fits() takes request_kv_tokens(), which already keeps a windowed layer's window only; a
    # request the pool cannot hold (no replica runs it: max_concurrency 0) must not fit.  It had
    # been windowed twice: 0.5 x 1.2 + 0.5 x 1,024 tokens of a pool of 1.0 fitted.
    r = _replica(HALF)
    pool_tokens = r.kv_pool_bytes_per_gpu / r.kv_bytes_per_token_per_gpu
    prompt = 2.4 * pool_tokens - 1024  # 1.2 pools of KV cache once windowed
    assert r.request_kv_tokens(prompt, 0) == pytest.approx(1.2 * pool_tokens)
    assert r.max_concurrency(prompt, prompt) == 0
    assert not r.fits(r.request_kv_tokens(prompt, 0))
    # and one that the pool holds fits
    short = 1.6 * pool_tokens - 1024  # 0.8 pools
    assert r.max_concurrency(short, short) >= 1 and r.fits(r.request_kv_tokens(short, 0))


@pytest.mark.parametrize(
    ("layers", "windowed"),
    [
        (20, 10),  # shallower than the preset's 42: was refused for the preset's own 21
        (60, 30),  # deeper: was 21 of 60, most of them full
        (42, 21),  # the preset's depth: its count
    ],
)
def test_a_reshaped_presets_windowed_layers_keep_their_share(layers: int, windowed: int) -> None:
    spec = parse_workload(
        {
            "name": "w",
            "kind": "inference",
            "model": {"preset": "gemma-2-9b", "layers": layers},
            "inference": {"tokens_per_s": 100, "hours": 1},
        }
    )
    assert spec.model.sliding_window_layers == windowed


def test_windowed_layers_given_with_a_reshaped_preset_are_taken_as_given() -> None:
    spec = parse_workload(
        {
            "name": "w",
            "kind": "inference",
            "model": {"preset": "gemma-2-9b", "layers": 20, "sliding_window_layers": 5},
            "inference": {"tokens_per_s": 100, "hours": 1},
        }
    )
    assert spec.model.sliding_window_layers == 5


def test_a_window_on_an_encoder_is_refused_not_ignored() -> None:
    # only a causal decoder's windowed layers are modelled: an encoder's window had been accepted
    # and dropped without a word
    with pytest.raises(PlannerError) as e:
        parse_workload(
            {
                "name": "w",
                "kind": "pretrain",
                "model": {
                    "arch": "encoder",
                    "params": 1e8,
                    "layers": 12,
                    "hidden": 768,
                    "heads": 12,
                    "seq_len": 512,
                    "sliding_window": 128,
                },
                "data": {"tokens": 1e9},
            }
        )
    assert "model.sliding_window" in str(e.value) and "drop it" in str(e.value)
