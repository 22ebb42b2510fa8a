"""The other names people write for a node's links and the networks between nodes (IB, RoCE v2,
NVL, PCIe4) are refused with the value they mean, in files and on the command line alike."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli import main
from planner.schema import Fabric, Interconnect
from planner.units import meant_link

ROOT = Path(__file__).resolve().parent.parent
HARDWARE = ROOT / "scenarios" / "hardware" / "4xa100-80gb-nvlink.yaml"
ESTIMATE = ["estimate", "--model", "gpt2", "--tokens", "1M", "--gpu", "H100", "--count", "16"]


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("IB", Fabric.INFINIBAND),
        ("NDR", Fabric.INFINIBAND),
        ("RoCE v2", Fabric.ROCE),
        ("rocev2", Fabric.ROCE),
        ("TCPXO", Fabric.GPUDIRECT_TCP),
        ("Elastic Fabric Adapter", Fabric.EFA),
        ("NVL", Interconnect.NVLINK),
        ("NVLink bridge", Interconnect.NVLINK),
        ("PCIe4", Interconnect.PCIE),
        ("PCI Express", Interconnect.PCIE),
        ("xGMI", Interconnect.NVSWITCH),
    ],
)
def test_another_name_means_one_value(typed: str, meant: Fabric | Interconnect) -> None:
    assert meant_link(typed) == meant.value


@pytest.mark.parametrize("typed", ["ibx", "", "nvlink4x", "10", None, 3])
def test_other_text_means_no_value(typed: object) -> None:
    assert meant_link(typed) is None


@pytest.mark.parametrize(
    ("option", "typed", "meant"),
    [
        ("--fabric", "IB", "infiniband"),
        ("--fabric", "RoCEv2", "roce"),
        ("--interconnect", "NVL", "nvlink"),
    ],
)
def test_the_command_line_refuses_another_name_with_its_value(
    option: str, typed: str, meant: str
) -> None:
    # was: "'IB' is not one of 'ethernet', 'efa', ..." with no fix
    result = CliRunner().invoke(main, [*ESTIMATE, option, typed])
    assert result.exit_code == 2
    assert f"did you mean {meant}?" in result.output
    assert "Traceback" not in result.output


def test_the_command_line_still_reads_a_value_in_any_case() -> None:
    upper = CliRunner().invoke(main, [*ESTIMATE, "--fabric", "InfiniBand", "--format", "json"])
    lower = CliRunner().invoke(main, [*ESTIMATE, "--fabric", "infiniband", "--format", "json"])
    assert upper.exit_code == 0, upper.output
    assert upper.stdout == lower.stdout


def test_a_misspelt_network_gets_the_closest_and_nonsense_none() -> None:
    typo = CliRunner().invoke(main, [*ESTIMATE, "--fabric", "infinband"])
    assert typo.exit_code == 2 and "did you mean infiniband?" in typo.output
    other = CliRunner().invoke(main, [*ESTIMATE, "--fabric", "carrier-pigeon"])
    assert other.exit_code == 2 and "did you mean" not in other.output
    assert "'ethernet', 'efa'" in other.output  # the values it takes


@pytest.mark.parametrize(
    ("line", "typed", "meant"),
    [
        ("fabric: ethernet", "fabric: RoCE v2", "roce"),
        ("fabric: ethernet", "fabric: NDR", "infiniband"),
        ("interconnect: nvlink", "interconnect: NVL", "nvlink"),
    ],
)
def test_a_hardware_file_refuses_another_name_with_its_value(
    tmp_path: Path, line: str, typed: str, meant: str
) -> None:
    text = HARDWARE.read_text("utf-8")
    assert line in text
    path = tmp_path / "hw.yaml"
    path.write_text(text.replace(line, typed), encoding="utf-8")
    result = CliRunner().invoke(main, ["tco", "--hardware", str(path), "--no-cloud"])
    assert result.exit_code == 2, result.output
    assert f"did you mean '{meant}'?" in result.output
    assert str(path) in result.output and typed.split(":")[0] in result.output
