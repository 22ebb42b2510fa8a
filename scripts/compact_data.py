"""The compact copies of planner's data files that it reads at run time.

    python scripts/compact_data.py          # rewrite planner/data/gpus.json and frameworks.json
    python scripts/compact_data.py --check  # exit 1 if either is stale

``planner/data/gpus.yaml`` (the GPU catalog) and ``frameworks.yaml`` (the training stacks) are
the files people edit: every figure with its source in a comment.  Every quote reads both, and
PyYAML spent ~4 ms and ~1 ms building their values even with libyaml's parser (its constructor
and resolver are Python), where the standard library reads the same values as JSON in a tenth of
a millisecond.  So their values are also written here as JSON, which planner reads
(:func:`planner.gpu_specs.load_gpu_catalog`, :func:`planner.workload.frameworks.load_frameworks`);
tests/test_compact_data.py fails when a copy and its YAML disagree, so an edit to the YAML is
followed by this script.
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
# The data files read at run time from a compact copy: name -> the copy's key for its values.
COMPACT = {"gpus": "gpus", "frameworks": "frameworks"}


def rows(name: str) -> Any:
    """The values of ``planner/data/<name>.yaml`` as PyYAML's safe loader gives them."""
    return yaml.safe_load((DATA / f"{name}.yaml").read_text(encoding="utf-8"))


def render(name: str) -> str:
    """``<name>.json``'s text: the YAML's values (key order kept) under the key
    :data:`COMPACT` names, beside a note on where they come from (JSON has no comments)."""
    document = {
        "generated": f"by scripts/compact_data.py from {name}.yaml (the figures' sources are "
        "there); edit the YAML, then rerun the script",
        COMPACT[name]: rows(name),
    }
    return json.dumps(document, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    return max(
        write_or_check(DATA / f"{name}.json", lambda name=name: render(name), argv, doc=__doc__)
        for name in COMPACT
    )


if __name__ == "__main__":
    sys.exit(main())
