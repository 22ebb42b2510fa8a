"""The Hugging Face config.json fixtures of tests/data/hf_configs, shared by the config tests."""

from __future__ import annotations

import json
from pathlib import Path

CONFIGS = Path(__file__).resolve().parent / "data" / "hf_configs"


def edited_config(tmp_path: Path, filename: str, **changes: object) -> Path:
    """A copy of the fixture ``filename`` with keys changed (None: left out), written to
    ``tmp_path/config.json``."""
    config = json.loads((CONFIGS / filename).read_text(encoding="utf-8"))
    for key, value in changes.items():
        if value is None:
            config.pop(key, None)
        else:
            config[key] = value
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path
