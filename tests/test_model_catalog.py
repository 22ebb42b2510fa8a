"""The model presets read from Hugging Face config.json keys (planner/data/model_configs.yaml):
their parameter counts against the figures their publishers state and against hand counts, and
the names they answer to."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import planner
from planner.api import estimate
from planner.cli import main
from planner.errors import PlannerError
from planner.workload.adhoc import workload_from_facts
from planner.workload.compute import train_model_flops_per_token
from planner.workload.hf_config import section_from_config
from planner.workload.models import _catalog, _with_heads, get_preset, presets
from scripts.compact_data import rows

CATALOG = {str(raw["name"]): raw for raw in rows("model_configs")}
_UNITS = {"M": Decimal(10) ** 6, "B": Decimal(10) ** 9}


def _figure(text: str) -> tuple[float, float]:
    """A stated size ("8.03B", "135M") and one unit of its last digit (0.01B, 1M): a card that
    truncates (14.77B printed as 14.7B) or rounds is within one unit of the count."""
    match = re.fullmatch(r"(\d+(?:\.(\d+))?)([MB])", text)
    assert match, f"a stated size like 8.03B or 135M, got {text!r}"
    scale = _UNITS[match.group(3)]
    decimals = len(match.group(2) or "")
    return float(Decimal(match.group(1)) * scale), float(scale / Decimal(10) ** decimals)


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_the_count_from_the_config_is_the_published_size(name: str) -> None:
    preset = presets()[name]
    stated, unit = _figure(str(CATALOG[name]["published"]))
    assert abs(preset.params - stated) <= unit, (preset.params, stated)
    if "published_active" in CATALOG[name]:
        stated, unit = _figure(str(CATALOG[name]["published_active"]))
        assert preset.active_params is not None
        assert abs(preset.active_params - stated) <= unit, (preset.active_params, stated)
    elif "published_active_less_embedding" in CATALOG[name]:
        # OpenAI counts gpt-oss's active parameters without the input embedding (a lookup)
        stated, unit = _figure(str(CATALOG[name]["published_active_less_embedding"]))
        assert preset.active_params is not None and preset.vocab and preset.hidden
        active = preset.active_params - preset.vocab * preset.hidden
        assert abs(active - stated) <= unit, (active, stated)
    else:
        assert preset.active_params is None


def test_llama_3_1_8b_is_counted_weight_by_weight() -> None:
    # per layer: Q and O 4096 x 4096, K and V 4096 x 1024 (8 of 32 heads), the SwiGLU MLP's three
    # 4096 x 14336 matrices and two RMSNorms; the embedding and the untied head 128,256 x 4096;
    # the final norm: 8,030,261,248, the checkpoint's total
    layer = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096
    assert presets()["llama-3.1-8b"].params == 32 * layer + 2 * 128256 * 4096 + 4096
    assert 32 * layer + 2 * 128256 * 4096 + 4096 == 8_030_261_248


def test_qwen2_counts_its_query_key_and_value_biases() -> None:
    # Qwen2.5-7B: 28 heads of 128, 4 KV heads; biases on Q (3,584), K and V (512 each):
    # 7,615,616,512, the checkpoint's total (without the biases it would be 129,024 fewer)
    layer = 2 * 3584 * 3584 + 2 * 3584 * 512 + (3584 + 2 * 512) + 3 * 3584 * 18944 + 2 * 3584
    total = 28 * layer + 2 * 152064 * 3584 + 3584
    assert total == 7_615_616_512
    assert presets()["qwen2.5-7b"].params == total


def test_gemma_2_counts_four_norms_a_layer() -> None:
    # Gemma 2 9B norms before and after the attention and the MLP: 9,241,705,984, the total
    layer = 3584 * 256 * (2 * 16 + 2 * 8) + 3 * 3584 * 14336 + 4 * 3584
    assert presets()["gemma-2-9b"].params == 42 * layer + 256000 * 3584 + 3584 == 9_241_705_984


def test_gpt_oss_counts_its_biases_and_attention_sinks() -> None:
    # gpt-oss-20b, per layer: Q 2880 x 4096 and O 4096 x 2880, K and V 2880 x 512, with biases
    # (4096 + 2 x 512 + 2880); 64 sink logits; 32 experts of a fused gate/up 2880 x 5760 and a
    # down 2880 x 2880 with their biases; the router 2880 x 32 and its biases; two norms
    attention = 2 * 2880 * 4096 + 2 * 2880 * 512 + (4096 + 2 * 512 + 2880) + 64
    expert = 3 * 2880 * 2880 + 2 * 2880 + 2880
    layer = attention + 32 * expert + (2880 * 32 + 32) + 2 * 2880
    total = 24 * layer + 2 * 201088 * 2880 + 2880
    assert total == 20_914_757_184  # the model card's 20.91B
    assert presets()["gpt-oss-20b"].params == total


def test_qwen3_counts_a_norm_over_each_heads_query_and_key() -> None:
    layer = 4096 * 128 * (2 * 32 + 2 * 8) + 2 * 128 + 3 * 4096 * 12288 + 2 * 4096
    assert presets()["qwen3-8b"].params == 36 * layer + 2 * 151936 * 4096 + 4096


def test_a_gemma_config_without_the_tie_key_is_read_tied() -> None:
    # google/gemma-7b's config.json has no tie_word_embeddings; GemmaConfig ties by default (was:
    # counted with a separate head, 786M parameters too many)
    config: dict[str, Any] = dict(CATALOG["gemma-7b"]["config"])
    del config["tie_word_embeddings"]
    section = section_from_config(config, "config.json")
    assert section["tied_embeddings"] is True
    assert section["params"] == presets()["gemma-7b"].params


def test_the_catalog_keeps_what_the_estimator_needs() -> None:
    v3 = presets()["deepseek-v3"]
    assert (v3.experts, v3.experts_per_token) == (256, 8)
    assert (v3.expert_groups, v3.groups_per_token) == (8, 4)  # node-limited routing
    assert presets()["llama-3.2-1b"].tied_embeddings is True
    assert presets()["llama-3.1-8b"].tied_embeddings is False
    assert presets()["gemma-2-27b"].head_dim == 128 and presets()["gemma-7b"].head_dim == 256
    assert presets()["roberta-large"].arch == "encoder"
    assert presets()["roberta-large"].learned_positions == 512
    assert presets()["deberta-v3-base"].learned_positions is None  # relative positions only
    assert presets()["phi-3-mini"].seq_len == 4096


@pytest.mark.parametrize(
    ("typed", "preset"),
    [
        ("llama-3.1-8b", "llama-3.1-8b"),
        ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
        ("Meta-Llama-3.1-70B-Instruct", "llama-3.1-70b"),
        ("llama-3.3-70b", "llama-3.1-70b"),
        ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b"),
        ("Qwen2-72B", "qwen2.5-72b"),
        ("google/gemma-2-9b-it", "gemma-2-9b"),
        ("deepseek-ai/DeepSeek-R1", "deepseek-v3"),
        ("mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b"),
        ("meta-llama/Llama-2-7b-chat-hf", "llama-2-7b"),
        ("openai-community/gpt2", "gpt2"),
        ("TinyLlama/TinyLlama-1.1B-Chat-v1.0", "tinyllama-1.1b"),
        ("mistralai/Mixtral-8x22B-Instruct-v0.1", "mixtral-8x22b"),
        ("mistralai/Mistral-Nemo-Instruct-2407", "mistral-nemo-12b"),
        ("  ROBERTA-BASE ", "roberta-base"),
    ],
)
def test_a_model_answers_to_its_repository_id_and_variants(typed: str, preset: str) -> None:
    found = get_preset(typed)
    assert found is not None and found.name == preset


@pytest.mark.parametrize(
    "typed",
    [
        "llama-3.1-9b",
        "qwen2.5",
        "instruct",
        "meta-llama/",
        "",
        "qwen2.5-7b-instruct-1m",
        "smollm-135m",
    ],
)
def test_other_names_are_unknown(typed: str) -> None:
    assert get_preset(typed) is None


def test_names_and_aliases_point_at_one_model_each() -> None:
    # no catalog name repeats a hand-written one (presets() would keep one of the two)
    assert len(_with_heads()) + len(_catalog()) == len(presets())
    for p in presets().values():
        found = get_preset(p.name)
        assert found is not None and found is p, p.name
    for p in _catalog():
        for alias in p.aliases:
            found = get_preset(alias)
            assert found is not None and found.name == p.name, alias


@pytest.mark.parametrize("name", ["llama-3.1-8b", "qwen3-30b-a3b", "gemma-2-2b", "roberta-base"])
def test_a_catalog_model_is_estimated_from_facts(name: str) -> None:
    spec = workload_from_facts(model=name, tokens=20e6, method="full")
    est = estimate(spec, "H100", 8)
    p = presets()[name]
    width = p.heads * (p.head_dim or p.hidden // p.heads)
    # the model FLOPs of 20M tokens: 6 per active parameter and token, plus the attention's
    per_token = train_model_flops_per_token(p.active_params or p.params, p.layers, width, p.seq_len)
    assert est.total_flops == pytest.approx(per_token * 20e6, rel=1e-9)
    assert est.wall_hours > 0


def test_the_cli_suggests_a_catalog_model_for_a_typo() -> None:
    result = CliRunner().invoke(
        main, ["estimate", "--model", "qwen2.5-8b", "--tokens", "1M", "--gpu", "H100"]
    )
    assert result.exit_code != 0
    assert "qwen2.5-7b" in result.output
    assert "Traceback" not in result.output


def test_a_local_folder_named_like_a_repository_is_read_as_a_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # owner/name is also a relative path: a folder that exists is the user's checkpoint, read
    # from its config.json (here with 2 layers), not the preset of that name (32 layers)
    folder = tmp_path / "meta-llama" / "Llama-3.1-8B"
    folder.mkdir(parents=True)
    config = {**CATALOG["llama-3.1-8b"]["config"], "num_hidden_layers": 2}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    spec = workload_from_facts(model="meta-llama/Llama-3.1-8B", tokens=1e6)
    assert spec.model.layers == 2
    monkeypatch.chdir(tmp_path / "meta-llama")  # no such folder from here: the preset
    assert workload_from_facts(model="meta-llama/Llama-3.1-8B", tokens=1e6).model.layers == 32


def test_models_search_keeps_the_presets_that_hold_the_text() -> None:
    found = planner.model_presets("QWEN3")
    assert {r["name"] for r in found} == {n for n in presets() if n.startswith("qwen3")}
    by_repo = planner.model_presets("meta-llama/")  # the repository ids' owner
    assert {r["name"] for r in by_repo} >= {"llama-3.1-8b", "llama-3.2-1b"}
    assert all(r["name"].startswith("llama-3") for r in by_repo)
    assert len(planner.model_presets()) == len(presets())


def test_a_models_search_that_finds_nothing_says_what_is_close() -> None:
    with pytest.raises(PlannerError, match="lama4") as caught:
        planner.model_presets("lama4")
    assert "did you mean" in str(caught.value.hint)
    result = CliRunner().invoke(main, ["models", "lama4"])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "did you mean" in result.output


def test_a_job_from_a_repository_id_is_named_after_the_preset() -> None:
    # was: "meta-llama/Llama-3.1-8B-Instruct-lora", a slash in the workload's name
    spec = workload_from_facts(model="meta-llama/Llama-3.1-8B-Instruct", tokens=1e6, method="lora")
    assert spec.name == "llama-3.1-8b-lora"
    assert spec.model.preset == "llama-3.1-8b"


def test_a_local_folder_named_like_a_variant_is_read_as_a_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # what `huggingface-cli download --local-dir Llama-2-7b-hf` leaves: read from its config.json
    # (2 layers here), not taken for the llama-2-7b preset the name also resolves to
    folder = tmp_path / "Llama-2-7b-hf"
    folder.mkdir()
    config = {**CATALOG["llama-3.1-8b"]["config"], "num_hidden_layers": 2}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert workload_from_facts(model="Llama-2-7b-hf", tokens=1e6).model.layers == 2
    assert get_preset("Llama-2-7b-hf") is not None  # the name alone is the preset's


def test_models_search_finds_what_model_takes() -> None:
    # was: "unknown model preset" for a name --model reads
    found = planner.model_presets("Qwen/Qwen2.5-7B-Instruct")
    assert [r["name"] for r in found] == ["qwen2.5-7b"]
