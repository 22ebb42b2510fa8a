"""The compact copies of planner's data files that it reads at run time.

    python scripts/compact_data.py          # rewrite planner/data/gpus.json, frameworks.json,
                                            # estimate_error.json, inference_efficiency.json
                                            # and workloads.json
    python scripts/compact_data.py --check  # exit 1 if one is stale

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

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a file: the repository root holds scripts/
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml

from planner.config.yamlfile import parse_yaml
from scripts.generated import write_or_check

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "planner" / "data"
# The data files read at run time from a compact copy: name -> the copy's key for its values.
COMPACT = {
    "gpus": "gpus",
    "frameworks": "frameworks",
    "estimate_error": "estimate_error",
    "inference_efficiency": "inference_efficiency",
    "model_configs": "models",
}


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


# The bundled workload files (``scenarios/workloads/*.yaml``): their values by file, with the
# SHA-256 of the file's bytes, in ``planner/data/workloads.json``.  ``planner quote --workload
# <name>`` reads a file's values from there when its bytes are those (``yamlfile.read_yaml``):
# importing PyYAML alone took ~8 ms of a quote's wall-clock.  An edited or added file is parsed
# as it stands until this script runs again (the test says so).
WORKLOADS = ROOT / "scenarios" / "workloads"
WORKLOADS_COPY = DATA / "workloads.json"


def workload_values(path: Path) -> Any:
    """The values of the workload file ``path`` as planner's own reader gives them."""
    return parse_yaml(path.read_text(encoding="utf-8"), file=str(path))


def render_workloads() -> str:
    """``workloads.json``'s text: per bundled workload file, its bytes' SHA-256 and its values."""
    files = {
        path.name: {
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "values": workload_values(path),
        }
        for path in sorted(WORKLOADS.glob("*.yaml"))
    }
    document = {
        "generated": "by scripts/compact_data.py from scenarios/workloads/*.yaml; edit the YAML, "
        "then rerun the script",
        "workloads": files,
    }
    return json.dumps(document, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    return max(
        *(
            write_or_check(DATA / f"{name}.json", lambda name=name: render(name), argv, doc=__doc__)
            for name in COMPACT
        ),
        write_or_check(WORKLOADS_COPY, render_workloads, argv, doc=__doc__),
    )


if __name__ == "__main__":
    sys.exit(main())
