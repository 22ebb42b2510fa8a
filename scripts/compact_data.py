"""The compact copy of the GPU catalog that planner reads at run time.

    python scripts/compact_data.py          # rewrite planner/data/gpus.json from gpus.yaml
    python scripts/compact_data.py --check  # exit 1 if gpus.json is stale

``planner/data/gpus.yaml`` is the catalog people edit: every figure with its source in a comment.
Every command that reads an offer loads it, and PyYAML spends ~4 ms building its ~1,000 values
even with libyaml's parser (its constructor and resolver are Python), where the standard library
reads the same values as JSON in ~0.1 ms.  So the values are also written here as JSON, and
:func:`planner.gpu_specs.load_gpu_catalog` reads those; tests/test_compact_data.py fails when the
two disagree, so an edit to the YAML is followed by this script.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a file: the repository root holds scripts/
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml

from scripts.generated import write_or_check

DATA = Path(__file__).resolve().parent.parent / "planner" / "data"
SOURCE = DATA / "gpus.yaml"
COMPACT = DATA / "gpus.json"


def rows() -> Any:
    """The catalog's values as the YAML file gives them (PyYAML's safe loader)."""
    return yaml.safe_load(SOURCE.read_text(encoding="utf-8"))


def render() -> str:
    """gpus.json's text: the YAML's values (key order kept), one GPU a few lines, under a note
    that says where they come from (JSON has no comments)."""
    document = {
        "generated": "by scripts/compact_data.py from gpus.yaml (the figures' sources are there);"
        " edit the YAML, then rerun the script",
        "gpus": rows(),
    }
    return json.dumps(document, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    return write_or_check(COMPACT, render, argv, doc=__doc__)


if __name__ == "__main__":
    sys.exit(main())
