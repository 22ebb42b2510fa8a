"""Issue 7: the HTML reports open in a real browser (headless Chromium) and render.

Runs where Debian's ``chromium`` is installed (``.ci/run`` installs it when it can); elsewhere each
test is skipped with the reason.  The browser gets no network: the page must be self-contained.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from planner import api
from planner.quoting.request import QuoteRequest

CHROMIUM = next(
    (p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p),
    None,
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="headless Chromium not installed (Debian: apt-get install chromium); .ci/run installs it",
)

WIDTH, HEIGHT = 1100, 2400
# Flags for a root, display-less, offline machine: no sandbox (root), no GPU, and no background
# connections that a closed network refuses.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk follows the signature
    return width, height


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("reports")
    results = {
        "quote": api.quote(
            QuoteRequest(workload="gpt2-xl-finetune", deadline_hours=24, pareto=True)
        ),
        "tco": api.tco("8xh100-hgx", utilization=0.6),
        "budget": api.budget("2027-ml-platform", sensitivity=False),
    }
    paths = {}
    for name, result in results.items():
        path = out / f"{name}.html"
        path.write_text(api.report(result, "html"), encoding="utf-8")
        paths[name] = path
    return paths


@pytest.mark.parametrize("name", ["quote", "tco", "budget"])
def test_report_renders_in_headless_chromium(
    name: str, reports: dict[str, Path], tmp_path: Path
) -> None:
    page = reports[name]
    shot = tmp_path / f"{name}.png"
    done = _chromium(
        tmp_path, f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={shot}", page.as_uri()
    )
    assert shot.exists(), done.stderr[-2000:]
    assert _png_size(shot) == (WIDTH, HEIGHT)
    # A blank or unstyled page compresses to a few kilobytes; a page of tables and charts does not.
    assert shot.stat().st_size > 40_000


def test_browser_sees_every_chart_as_svg(reports: dict[str, Path], tmp_path: Path) -> None:
    page = reports["tco"]
    done = _chromium(tmp_path, "--dump-dom", page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    # The DOM after parsing: both charts are live SVG elements, with their titles.
    assert dom.count("<svg") == 2
    assert "Cumulative cost: owning versus renting the same useful hours" in dom
    assert "Cost per useful GPU-hour against utilization" in dom
