"""Bad input and silently wrong results the sixteenth sweep found: ``--gpu "RTX 6000"`` was read as
the 2018 Quadro RTX 6000 (24 GB, Turing) where NVIDIA's current card of that name is the RTX 6000
Ada (48 GB); a quote or build run with ``--currency EUR`` wrote its infeasibility error in dollars,
and "with --budget 20.83" for the ``--budget 20`` the user typed in euros; a budget file starting
in 1999 planned three past years with today's H100 prices; a hardware file's 72 RTX 4090s on PCIe
were priced and timed as one machine.

The product rule each test pins: bad input gets a clear error naming the field and a fix, and the
user's own units come back in what the planner says.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import planner
from planner import clock
from planner.cli import main
from planner.errors import ConfigError, money_shown_as, money_text, shown_amount


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path / "data"))


# -- a model number two product lines share -------------------------------------------------------


@pytest.mark.parametrize("typed", ["RTX 6000", "RTX6000", "rtx-6000", "NVIDIA RTX 6000"])
def test_rtx_6000_alone_names_two_cards(typed: str) -> None:
    # was: the Quadro RTX 6000 (Turing, 24 GB) without a word
    with pytest.raises(ConfigError, match="ambiguous") as info:
        planner.resolve_gpu(typed)
    assert info.value.hint is not None
    assert "RTX6000-Ada" in info.value.hint and "Quadro-RTX6000" in info.value.hint


@pytest.mark.parametrize(
    ("typed", "name"),
    [
        ("Quadro RTX 6000", "Quadro-RTX6000"),
        ("quadro-rtx6000", "Quadro-RTX6000"),
        ("RTX6000-Turing", "Quadro-RTX6000"),
        ("RTX 6000 Ada", "RTX6000-Ada"),
        ("NVIDIA RTX 6000 Ada Generation", "RTX6000-Ada"),
        # a brand prefix still folds away
        ("Tesla V100", "V100-16GB"),
        ("GeForce RTX 4090", "RTX4090"),
    ],
)
def test_a_card_named_with_its_line_or_generation_resolves(typed: str, name: str) -> None:
    assert planner.resolve_gpu(typed).name == name


def test_the_cli_names_both_cards() -> None:
    result = CliRunner().invoke(
        main, ["estimate", "bert-base-finetune", "--gpu", "RTX 6000", "--precision", "fp16"]
    )
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "--gpu: GPU name 'RTX 6000' is ambiguous" in result.output
    assert "RTX6000-Ada or Quadro-RTX6000" in result.output


# -- money in errors, in the command's currency -----------------------------------------------------


def test_amounts_are_written_in_the_shown_currency() -> None:
    assert money_text(1.04) == "$1.04"
    assert money_text(143_492.8) == "$143,493"
    assert shown_amount(20.83) == 20.83
    with money_shown_as("€", 0.5):
        assert money_text(3.0) == "€1.50"
        assert money_text(-4000.0) == "-€2,000"
        assert shown_amount(41.66) == 20.83
    assert money_text(3.0) == "$3.00"  # and back in dollars outside


def test_an_infeasible_quote_writes_its_money_in_the_currency_asked() -> None:
    # was: "a 24 h deadline with a $1.04 budget cannot be met ... ($38.54)" for --budget 1 in EUR
    args = ["quote", "--workload", "gpt2-xl-finetune", "--deadline", "0.3h", "--budget", "20"]
    in_euros = CliRunner().invoke(main, [*args, "--currency", "EUR"])
    assert in_euros.exit_code != 0
    assert "Traceback" not in in_euros.output
    assert "a €20.00 budget cannot be met" in in_euros.output
    assert "with --budget 20 the fastest" in in_euros.output
    assert "$" not in in_euros.output
    in_dollars = CliRunner().invoke(main, args)
    assert "a $20.00 budget cannot be met" in in_dollars.output
    assert "€" not in in_dollars.output


def test_a_build_over_budget_writes_its_money_in_the_currency_asked() -> None:
    result = CliRunner().invoke(
        main, ["build", "--workload", "gpt2-finetune", "--budget", "100", "--currency", "EUR"]
    )
    assert result.exit_code != 0
    assert "Traceback" not in result.output
    assert "the cheapest machine that runs them costs €" in result.output
    assert "$" not in result.output


# -- a budget's months ------------------------------------------------------------------------------

BUDGET = Path(__file__).resolve().parent.parent / "scenarios" / "budgets" / "2027-ml-platform.yaml"


def _budget_starting(tmp_path: Path, start: str, horizon_months: int = 36) -> Path:
    raw = yaml.safe_load(BUDGET.read_text(encoding="utf-8"))
    raw["start"], raw["horizon_months"] = start, horizon_months
    path = tmp_path / "budget.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


def test_a_budget_whose_months_are_all_past_is_refused(tmp_path: Path) -> None:
    # was: start "1999-01" planned 1999-2001 with today's H100 prices, exit 0
    path = _budget_starting(tmp_path, "1999-01")
    result = CliRunner().invoke(main, ["budget", str(path), "--no-sensitivity"])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "start: the plan's 36 months, 1999-01 to 2001-12, are all past" in result.stderr
    today = clock.utc_today()
    assert f'start: "{today.year}-{today.month:02d}"' in result.stderr
    with pytest.raises(ConfigError, match="all past") as info:
        planner.budget(str(path))
    assert info.value.key_path == "start"


def test_a_budget_far_ahead_is_refused(tmp_path: Path) -> None:
    path = _budget_starting(tmp_path, f"{clock.utc_today().year + 181}-01")  # 2207 for 2027
    with pytest.raises(ConfigError, match="years ahead") as info:
        planner.budget(str(path))
    assert info.value.key_path == "start"


def test_a_budget_that_began_last_year_and_runs_on_is_read(tmp_path: Path) -> None:
    # a plan for the current stretch: its first months past, the rest ahead
    today = clock.utc_today()
    path = _budget_starting(tmp_path, f"{today.year - 1}-{today.month:02d}", horizon_months=24)
    report = planner.budget(str(path))
    assert report.plan.start == f"{today.year - 1}-{today.month:02d}"
    assert report.plan.horizon_months == 24 and report.plan.total_usd > 0


# -- GPUs a machine holds -----------------------------------------------------------------------------

WORKSTATION = Path(__file__).resolve().parent.parent / "scenarios" / "hardware"


def _machine_of(tmp_path: Path, gpus: int, base: str = "workstation-2xrtx4090.yaml") -> Path:
    raw = yaml.safe_load((WORKSTATION / base).read_text(encoding="utf-8"))
    raw["gpus_per_machine"] = gpus
    # the machine's draw follows its GPUs: 450 W each and 50 W of host, 1.4x that at peak
    raw["power_kw_avg"] = round(gpus * 0.45 + 0.05, 2)
    raw["power_kw_max"] = round(1.4 * raw["power_kw_avg"], 2)
    path = tmp_path / "machine.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


def test_a_pcie_machine_of_72_gpus_is_refused(tmp_path: Path) -> None:
    # was: 72 RTX 4090s on PCIe priced and timed as one box
    path = _machine_of(tmp_path, 72)
    result = CliRunner().invoke(main, ["tco", "--hardware", str(path), "--no-cloud"])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "gpus_per_machine: 72 GPUs on pcie in one machine" in result.stderr
    assert "gpus_per_machine: 8, machines: 9" in result.stderr
    with pytest.raises(ConfigError, match="without NVSwitch") as info:
        planner.tco(hardware=str(path), with_cloud=False)
    assert info.value.key_path == "gpus_per_machine"


def test_a_ten_gpu_pcie_server_and_an_nvl72_rack_are_read(tmp_path: Path) -> None:
    # a 4U server of ten double-width cards is real, and so is a rack of 72 NVSwitch-linked GPUs
    ten = planner.tco(hardware=str(_machine_of(tmp_path, 10)), with_cloud=False)
    assert ten.hardware.gpus_per_machine == 10
    raw = yaml.safe_load((WORKSTATION / "8xh100-hgx.yaml").read_text(encoding="utf-8"))
    # an NVL72 rack: 72 x 1.2 kW GB200 and its Grace CPUs and switches, ~120-140 kW
    raw.update(gpu="GB200", gpus_per_machine=72, power_kw_avg=120.0, power_kw_max=140.0)
    path = tmp_path / "nvl72.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    assert planner.tco(hardware=str(path), with_cloud=False).hardware.gpus_per_machine == 72
