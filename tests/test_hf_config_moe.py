"""Mixture-of-experts Hugging Face configs: total and active parameters from the shape (issue 14).

The configs in ``tests/data/hf_configs`` are the models' ``config.json`` files (see the README
there).  Exact totals are each checkpoint's safetensors parameter count on Hugging Face; the
published figures are the model cards' and papers' rounded ones.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import planner
from planner.cli import main
from planner.errors import ConfigError
from planner.workload.hf_config import model_from_hf_config
from tests.hf_configs import CONFIGS, edited_config


def _within_published(count: float, published: float, unit: float) -> bool:
    """``count`` rounds or truncates to ``published`` at the figure's last digit ``unit``
    (vendors do both: Mixtral's 12.88B is "12.9B", Qwen3's 3.35B is "3.3B")."""
    return published - unit / 2 <= count < published + unit


@pytest.mark.parametrize(
    ("config", "total", "published_total", "published_active", "unit"),
    [
        # Mixtral 8x7B: 46.7B / 12.9B (Jiang et al. 2024; Mistral AI's announcement)
        ("mixtral-8x7b-config.json", 46_702_792_704, 46.7e9, 12.9e9, 0.1e9),
        # Qwen1.5-MoE-A2.7B: 14.3B / 2.7B (Qwen blog, March 2024; model card)
        ("qwen1.5-moe-a2.7b-config.json", 14_315_784_192, 14.3e9, 2.7e9, 0.1e9),
        # Qwen3-30B-A3B: 30.5B / 3.3B (model card)
        ("qwen3-30b-a3b-config.json", 30_532_122_624, 30.5e9, 3.3e9, 0.1e9),
        # OLMoE-1B-7B: 6.9B / 1.3B (Muennighoff et al. 2024, OLMoE)
        ("olmoe-1b-7b-0924-config.json", 6_919_161_856, 6.9e9, 1.3e9, 0.1e9),
    ],
)
def test_a_moe_config_gives_the_exact_total_and_the_published_active_count(
    config: str, total: int, published_total: float, published_active: float, unit: float
) -> None:
    section = model_from_hf_config(CONFIGS / config)
    assert section["params"] == total  # the checkpoint's safetensors count, to the parameter
    assert _within_published(section["params"], published_total, unit)
    assert _within_published(section["active_params"], published_active, unit)


@pytest.mark.parametrize(
    ("config", "total", "published_total", "published_active", "unit"),
    [
        # DeepSeek-V2-Lite: 15.7B / 2.4B (DeepSeek-AI 2024, DeepSeek-V2, appendix B)
        ("deepseek-v2-lite-config.json", 15_706_484_224, 15.7e9, 2.4e9, 0.1e9),
        # DeepSeek-V2: 236B / 21B (DeepSeek-AI 2024, DeepSeek-V2)
        ("deepseek-v2-config.json", 235_741_434_880, 236e9, 21e9, 1e9),
        # DeepSeek-V3: 671B / 37B without its multi-token-prediction module (DeepSeek-AI 2024,
        # DeepSeek-V3 technical report); the exact count is checked with the module below
        ("deepseek-v3-config.json", 671_026_419_200, 671e9, 37e9, 1e9),
    ],
)
def test_a_deepseek_config_gives_the_published_counts(
    config: str, total: int, published_total: float, published_active: float, unit: float
) -> None:
    section = model_from_hf_config(CONFIGS / config)
    assert section["params"] == total
    assert _within_published(section["params"], published_total, unit)
    # DeepSeek counts activated parameters without the input embedding (a lookup, no FLOPs);
    # the section keeps it, as params does and as the estimator's 6·N·D counts it
    lookup = section["vocab"] * section["hidden"]
    assert _within_published(section["active_params"] - lookup, published_active, unit)


def test_deepseek_v3_with_its_mtp_module_is_the_checkpoint_count() -> None:
    """The Hugging Face checkpoint (685B) also holds the multi-token-prediction module: one more
    MoE layer, a 2h x h projection, three norms and copies of the embedding and head.  Its bf16
    and fp8 tensors and the router biases hold 684,489,845,504 parameters (the safetensors total
    less the 41,540,496 fp32 scales of the 128 x 128 fp8 blocks)."""
    section = model_from_hf_config(CONFIGS / "deepseek-v3-config.json")
    h, vocab = section["hidden"], section["vocab"]
    mtp = section["largest_layer_params"] + 2 * h * h + 3 * h + 2 * vocab * h
    assert section["params"] + mtp == 684_489_845_504


@pytest.mark.parametrize(
    ("config", "experts", "per_token", "kv_heads", "head_dim"),
    [
        ("mixtral-8x7b-config.json", 8, 2, 8, None),  # heads of hidden / heads: no head_dim
        ("qwen3-30b-a3b-config.json", 128, 8, 4, 128),  # 32 heads of 128 on hidden 2,048
        ("qwen1.5-moe-a2.7b-config.json", 60, 4, 16, None),
        ("olmoe-1b-7b-0924-config.json", 64, 8, 16, None),
        # MLA: heads of (192 + 128) / 2 = 160; the latent and RoPE key, 512 + 64 = 576 values
        # per token and layer, rounded up to whole heads of 160 that divide the heads:
        # 2 x 2 x 160 = 640 for V2, V2-Lite and V3
        ("deepseek-v2-config.json", 160, 6, 2, 160),
        ("deepseek-v2-lite-config.json", 64, 6, 2, 160),
        ("deepseek-v3-config.json", 256, 8, 2, 160),
    ],
)
def test_a_moe_config_gives_its_experts_and_a_kv_cache_that_holds_the_real_one(
    config: str, experts: int, per_token: int, kv_heads: int, head_dim: int | None
) -> None:
    section = model_from_hf_config(CONFIGS / config)
    assert (section["experts"], section["experts_per_token"]) == (experts, per_token)
    assert section["kv_heads"] == kv_heads
    assert section.get("head_dim") == head_dim
    assert section["active_params"] < section["params"]
    # the workload schema takes the section as it is
    spec = planner.workload_from_facts(str(CONFIGS / config), tokens=5e7, method="lora")
    assert spec.model.is_moe
    assert spec.model.kv_heads == kv_heads
    assert spec.model.head_dim == head_dim


def test_qwen3_30b_a3b_kv_cache_is_exact() -> None:
    """Qwen3-30B-A3B's config.json: 48 layers, 4 KV heads of head_dim 128 -> 48 x 4 x 128 x 2 (K
    and V) x 2 bytes = 98,304 bytes a token in 16 bits; attention 32 x 128 = 4,096 wide on a
    hidden size of 2,048."""
    from planner.workload import memory as mem

    spec = planner.workload_from_facts(
        str(CONFIGS / "qwen3-30b-a3b-config.json"), tokens=5e7, method="lora"
    )
    m = spec.model
    assert (m.attention_width, m.kv_width) == (4096, 512.0)
    per_token = mem.kv_cache_bytes_per_token(
        int(m.layers or 0),
        int(m.hidden or 0),
        int(m.heads or 0),
        m.kv_heads,
        2.0,
        head_dim=m.head_dim,
    )
    assert per_token == 98_304


def test_active_params_run_k_experts_and_every_shared_weight() -> None:
    """Mixtral by hand: 32 layers of attention (4096 x 128 x (64 + 16)), two norms, a router of
    4096 x 8 and 2 of the 8 SwiGLU experts (3 x 4096 x 14336), an untied head and a final norm."""
    section = model_from_hf_config(CONFIGS / "mixtral-8x7b-config.json")
    expert = 3 * 4096 * 14336
    layer_shared = 4096 * 128 * 80 + 2 * 4096 + 4096 * 8
    outside = 2 * 32000 * 4096 + 4096
    assert section["params"] == 32 * (layer_shared + 8 * expert) + outside
    assert section["active_params"] == 32 * (layer_shared + 2 * expert) + outside
    assert section["largest_layer_params"] == layer_shared + 8 * expert


def test_a_job_from_a_mixtral_config_needs_the_memory_of_the_preset() -> None:
    """The preset rounds the counts (46.7B / 12.9B); the config gives them exactly (46.703B /
    12.880B), so memory agrees to a few parts in ten thousand and FLOPs to the active count."""
    args = ["--method", "lora", "--tokens", "50M", "--seq-len", "8192"]
    args += ["--gpu", "H100", "--count", "8", "--format", "json"]
    runs = {}
    for model in (str(CONFIGS / "mixtral-8x7b-config.json"), "mixtral-8x7b"):
        result = CliRunner().invoke(main, ["estimate", "--model", model, *args])
        assert result.exit_code == 0, result.output
        runs[model] = json.loads(result.stdout)
    from_config, from_preset = runs.values()
    assert from_config["workload"] == from_preset["workload"] == "mixtral-8x7b-lora"
    assert from_config["fits"] == from_preset["fits"]
    assert from_config["memory_per_gpu_gib"] == pytest.approx(
        from_preset["memory_per_gpu_gib"], rel=1e-3
    )
    assert from_config["total_flops"] == pytest.approx(
        from_preset["total_flops"] * 12_879_925_248 / 12.9e9, rel=1e-3
    )


def test_workloads_new_writes_a_moe_config_out_whole(tmp_path: Path) -> None:
    """The written file keeps the experts, the active parameters and the largest layer, so it
    loads as the same job."""
    config = str(CONFIGS / "deepseek-v2-lite-config.json")
    written = CliRunner().invoke(
        main, ["workloads", "new", "moe", "--model", config, "--tokens", "50M"]
    )
    assert written.exit_code == 0, written.output
    file = tmp_path / "moe.yaml"
    file.write_text(written.stdout, encoding="utf-8")
    loaded = planner.load_workload(str(file))
    expected = planner.workload_from_facts(config, tokens=5e7, name="moe")
    keys = ("params", "experts", "experts_per_token", "active_params", "kv_heads", "head_dim")
    for key in keys:
        assert getattr(loaded.model, key) == getattr(expected.model, key), key
    assert loaded.model.head_dim == 160
    assert (
        planner.estimate(loaded, gpu="H100", count=8).to_dict()
        == planner.estimate(expected, gpu="H100", count=8).to_dict()
    )


@pytest.mark.parametrize(
    ("name", "changes", "key", "words"),
    [
        # more experts per token than experts
        (
            "mixtral-8x7b-config.json",
            {"num_experts_per_tok": 9},
            "num_experts_per_tok",
            "more than",
        ),
        # the count of routed experts missing
        (
            "mixtral-8x7b-config.json",
            {"num_local_experts": None},
            "num_local_experts",
            "no num_local",
        ),
        # experts per token missing
        ("qwen3-30b-a3b-config.json", {"num_experts_per_tok": None}, "num_experts_per_tok", "no "),
        # an expert's width missing
        (
            "qwen3-30b-a3b-config.json",
            {"moe_intermediate_size": None},
            "moe_intermediate_size",
            "no ",
        ),
        # Qwen2-MoE's shared expert missing
        (
            "qwen1.5-moe-a2.7b-config.json",
            {"shared_expert_intermediate_size": None},
            "shared_expert_intermediate_size",
            "no ",
        ),
        # MLA's widths missing; q_lora_rank absent (null is a value: no query compression)
        ("deepseek-v2-config.json", {"kv_lora_rank": None}, "kv_lora_rank", "no "),
        ("deepseek-v2-config.json", {"q_lora_rank": None}, "q_lora_rank", "no "),
        # one expert is not a mixture
        ("olmoe-1b-7b-0924-config.json", {"num_experts": 1}, "num_experts", "at least 2"),
        # a fractional expert count
        ("olmoe-1b-7b-0924-config.json", {"num_experts": 6.5}, "num_experts", "whole number"),
        # a family whose experts are laid out otherwise
        ("olmoe-1b-7b-0924-config.json", {"model_type": "jamba"}, "model_type", "not read"),
        # every layer dense
        ("deepseek-v2-lite-config.json", {"first_k_dense_replace": 27}, None, "no layer"),
    ],
)
def test_a_bad_moe_config_is_refused_by_file_and_key_with_a_fix(
    name: str, changes: dict[str, Any], key: str | None, words: str, tmp_path: Path
) -> None:
    path = edited_config(tmp_path, name, **changes)
    with pytest.raises(ConfigError) as raised:
        model_from_hf_config(path)
    error = raised.value
    assert error.file == str(path)
    assert error.key_path == key
    assert words in error.detail
    assert error.hint


def test_the_cli_names_the_file_and_key_of_a_bad_moe_config(tmp_path: Path) -> None:
    path = edited_config(tmp_path, "mixtral-8x7b-config.json", num_experts_per_tok=12)
    result = CliRunner().invoke(
        main, ["estimate", "--model", str(path), "--tokens", "50M", "--gpu", "H100"]
    )
    assert result.exit_code == 2
    assert f"{path}: num_experts_per_tok: num_experts_per_tok (12) is more than" in result.output
    assert "model card" in result.output
    assert "Traceback" not in result.output
