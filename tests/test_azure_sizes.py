"""One copy of the Azure size facts (``planner/data/azure_sizes.yaml``): the adapter and the
bundled snapshot's builder read the same file, and importing the adapter's module reads nothing."""

from __future__ import annotations

import subprocess
import sys

from planner.catalog.reference import azure_sizes
from planner.providers.azure_sizes import AZURE_SIZES, LEARN, UNMAPPED_SIZES, size_spec


def test_the_snapshot_builder_and_the_adapter_see_the_same_sizes() -> None:
    reference = azure_sizes()
    assert list(reference) == list(AZURE_SIZES)
    for name, size in AZURE_SIZES.items():
        assert reference[name] == (
            size.gpu,
            size.gpu_count,
            size.interconnect.value,
            size.network_gbps,
            size.fabric.value,
        ), name
        assert size.page.startswith(LEARN) and size.page != LEARN
    assert not set(AZURE_SIZES) & set(UNMAPPED_SIZES)


def test_sizes_are_matched_without_case() -> None:
    assert size_spec("standard_nd96isr_h100_v5") == AZURE_SIZES["Standard_ND96isr_H100_v5"]
    assert size_spec("Standard_NV6ads_A10_v5") is None  # a fractional GPU: not in the table


def test_importing_the_table_reads_no_file() -> None:
    code = (
        "import planner.providers.azure_sizes as m; "
        "print(m._load_sizes.cache_info().currsize); len(m.AZURE_SIZES); "
        "print(m._load_sizes.cache_info().currsize)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "1"]
