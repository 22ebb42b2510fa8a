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

CONFIGS = Path(__file__).parent / "data" / "hf_configs"


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
    with pytest.raises(ConfigError, match="no n_heads"):
        model_from_hf_config(path)
