"""Encoders with BERT's layout read from their config.json (planner/workload/hf_config.py
_encoder_section): the base model's exact parameter count, bidirectional attention, the usable
sequence length."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.errors import ConfigError
from planner.workload import parse_workload
from planner.workload.hf_config import model_from_hf_config
from tests.hf_configs import CONFIGS, edited_config


def _bert_layer(hidden: int, ffn: int) -> int:
    # Q, K, V, O with biases; the MLP's two matmuls with biases; two LayerNorms (weight and bias)
    return 4 * hidden * hidden + 4 * hidden + 2 * hidden * ffn + ffn + hidden + 4 * hidden


@pytest.mark.parametrize(
    ("name", "params", "by_hand"),
    [
        # word + position + token-type embeddings and their LayerNorm, 12 layers, the pooler
        (
            "bert-base-uncased",
            109_482_240,
            768 * (30522 + 512 + 2) + 2 * 768 + 12 * _bert_layer(768, 3072) + 768 * 768 + 768,
        ),
        # RoBERTa: one token type, 514 position rows
        (
            "roberta-base",
            124_645_632,
            768 * (50265 + 514 + 1) + 2 * 768 + 12 * _bert_layer(768, 3072) + 768 * 768 + 768,
        ),
        # DistilBERT: no token types, no pooler, six layers
        ("distilbert-base-uncased", 66_362_880, 768 * (30522 + 512) + 2 * 768 + 6 * _bert_layer(768, 3072)),
        # DeBERTa-v3: no absolute positions, 2 x 256 relative-position rows with a LayerNorm
        (
            "deberta-v3-base",
            183_831_552,
            768 * 128100 + 2 * 768 + 12 * _bert_layer(768, 3072) + 512 * 768 + 2 * 768,
        ),
        # DeBERTa-v2 xlarge: and a kernel-3 convolution with its LayerNorm after the first layer
        (
            "deberta-v2-xlarge",
            884_593_152,
            1536 * 128100
            + 2 * 1536
            + 24 * _bert_layer(1536, 6144)
            + 512 * 1536
            + 2 * 1536
            + 3 * 1536 * 1536
            + 1536
            + 2 * 1536,
        ),
    ],
)  # fmt: skip
def test_the_count_is_the_base_models_exactly(name: str, params: int, by_hand: int) -> None:
    assert by_hand == params
    section = model_from_hf_config(CONFIGS / f"{name}-config.json")
    assert section["params"] == params
    assert section["arch"] == "encoder" and section["mlp"] == "plain"


def test_roberta_keeps_two_position_rows_for_its_padding_offset() -> None:
    assert model_from_hf_config(CONFIGS / "roberta-base-config.json")["seq_len"] == 512
    assert model_from_hf_config(CONFIGS / "bert-base-uncased-config.json")["seq_len"] == 512


def test_an_encoder_config_makes_a_workload_the_estimator_reads_as_bidirectional() -> None:
    section = model_from_hf_config(CONFIGS / "bert-base-uncased-config.json")
    spec = parse_workload(
        {"name": "b", "kind": "finetune", "model": section, "data": {"tokens": 1e6}}, file="t"
    )
    assert spec.model.is_transformer and spec.model.arch == "encoder"
    assert spec.model.dropout == 0.1 and spec.model.tied_embeddings is True


def test_a_distilbert_config_names_its_own_keys(tmp_path: Path) -> None:
    config = json.loads((CONFIGS / "distilbert-base-uncased-config.json").read_text())
    del config["n_heads"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    with pytest.raises(ConfigError, match="no n_heads") as info:
        model_from_hf_config(path)
    # review: the hint asked for "the config.json of a decoder transformer"
    assert info.value.hint == "copy n_heads from the model's config.json on Hugging Face"


DEBERTA_V3_BASE = 183_831_552


def test_a_deberta_config_without_position_buckets_counts_the_relative_span(
    tmp_path: Path,
) -> None:
    """review: DebertaV2Config's default position_buckets is -1 (DebertaV2Encoder: "if
    self.position_buckets > 0"), which was refused as "expected a whole number >= 0"; without
    buckets the relative table has 2 x max_relative_positions rows (-1: max_position_embeddings,
    512) instead of 2 x 256."""
    section = model_from_hf_config(
        edited_config(tmp_path, "deberta-v3-base-config.json", position_buckets=-1)
    )
    assert section["params"] == DEBERTA_V3_BASE - 2 * 256 * 768 + 2 * 512 * 768


@pytest.mark.parametrize("odd", [5, True, {"p2c": 1}])
def test_a_deberta_config_with_an_odd_pos_att_type_is_named(tmp_path: Path, odd: object) -> None:
    """review: pos_att_type not text or a list was a TypeError traceback ('int' object is not
    iterable)."""
    path = edited_config(
        tmp_path, "deberta-v3-base-config.json", pos_att_type=odd, share_att_key=False
    )
    with pytest.raises(ConfigError) as info:
        model_from_hf_config(path)
    assert info.value.key_path == "pos_att_type"


def test_a_deberta_config_takes_its_own_classes_defaults(tmp_path: Path) -> None:
    """review: DebertaV2Config's type_vocab_size defaults to 0 (no token-type table), not BERT's 2;
    DebertaV2Embeddings projects narrower embeddings without a bias and normalises at the hidden
    size (embed_proj = nn.Linear(embedding_size, hidden_size, bias=False); LayerNorm(hidden_size))."""
    no_types = model_from_hf_config(
        edited_config(tmp_path, "deberta-v3-base-config.json", type_vocab_size=None)
    )
    assert no_types["params"] == DEBERTA_V3_BASE
    narrow = model_from_hf_config(
        edited_config(tmp_path, "deberta-v3-base-config.json", embedding_size=512)
    )
    embeddings = 768 * 128100 + 2 * 768
    assert narrow["params"] == DEBERTA_V3_BASE - embeddings + 512 * 128100 + 512 * 768 + 2 * 768


def test_an_electra_config_without_embedding_size_takes_electras_128(tmp_path: Path) -> None:
    """review: ElectraConfig's embedding_size defaults to 128, not the hidden size; ElectraEmbeddings
    normalise at the embedding width and project to the hidden size with a bias."""
    path = edited_config(
        tmp_path, "bert-base-uncased-config.json", model_type="electra", embedding_size=None
    )
    embeddings = 128 * (30522 + 512 + 2) + 2 * 128 + 128 * 768 + 768
    assert model_from_hf_config(path)["params"] == embeddings + 12 * _bert_layer(768, 3072)


def test_a_deberta_convolution_in_groups_holds_a_share_of_the_weights(tmp_path: Path) -> None:
    """review: ConvLayer is nn.Conv1d(hidden, hidden, kernel, groups=conv_groups): each output
    channel sees hidden / groups inputs; conv_groups was not read."""
    whole = model_from_hf_config(CONFIGS / "deberta-v2-xlarge-config.json")["params"]
    grouped = model_from_hf_config(
        edited_config(tmp_path, "deberta-v2-xlarge-config.json", conv_groups=4)
    )
    assert grouped["params"] == whole - 3 * 1536 * 1536 + 3 * 1536 * 1536 // 4
    with pytest.raises(ConfigError) as info:
        model_from_hf_config(
            edited_config(tmp_path, "deberta-v2-xlarge-config.json", conv_groups=5)
        )
    assert info.value.key_path == "conv_groups"
