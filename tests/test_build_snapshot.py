"""scripts/build_snapshot.py: a missing reference folder is a one-line error, not a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FILES = "prices-next/aws_gpu.csv, prices-next/gcp_gpu.csv, prices/azure_gpu.csv, prices-next/lambda_gpu.csv"


@pytest.mark.parametrize(
    ("make_folder", "problem"),
    [
        # issue 11: a checkout without ../shared/reference (a FileNotFoundError traceback)
        (False, "not found"),
        # the folder is there but empty
        (True, f"lacks {FILES}"),
    ],
)
def test_issue_11_missing_reference_data_is_a_one_line_error(
    tmp_path: Path, make_folder: bool, problem: str
) -> None:
    reference = tmp_path / "reference"
    if make_folder:
        reference.mkdir()
    out = tmp_path / "out"
    proc = subprocess.run(
        [
            sys.executable,
            "scripts/build_snapshot.py",
            "--reference",
            str(reference),
            "--out",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == (
        f"build_snapshot.py: error: reference price directory {reference} {problem};"
        f" pass the folder of {FILES} with --reference DIR\n"
    )
    assert not out.exists()  # nothing written
