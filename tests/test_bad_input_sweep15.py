"""Bad input and silently wrong results the fifteenth sweep found (calibration records, budget
and hardware files, price lists, software stacks, serving batches): a hand-edited calibration id
such as ``x5`` crashed the next ``calibrate record`` with a bare ValueError; a budget's
``growth_per_month: 5`` (meant as 5%) planned demand x6 a month, 1.3 trillion USD; a hardware file's
RTX 4090 watts typed as kW (450) priced power at 473k USD a year; ``staff_fte`` without a staff
cost, or a cost without the FTE, counted nothing; ``hours_available_per_day: 0.0001`` priced 20,548
USD a GPU-hour; 8 x H100 at 0.0001 USD an hour quoted a "$0.00" plan; a calibration on a million
GPUs was recorded; NVFP4 training under the Hugging Face Trainer ran 1.9x faster than its bf16;
a serving ``max_batch`` of 10 million "needed 13.6 GiB" on an 80 GB GPU, blaming the weights.

The product rule each test pins: bad input gets a clear error naming the file, the field and a fix,
and no result is silently wrong.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

import planner
from planner.cli import main
from planner.errors import ConfigError
from planner.workload import parse_workload
from planner.workload.calibration import calibration_file, load_calibrations
from tests.conftest import offer_row

ROOT = Path(__file__).resolve().parent.parent
HARDWARE = ROOT / "scenarios" / "hardware" / "8xh100-hgx.yaml"
BUDGET = ROOT / "scenarios" / "budgets" / "2027-ml-platform.yaml"


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path / "data"))


# -- calibration ids -------------------------------------------------------------------------------


@pytest.mark.parametrize("odd", ["x5", "C5", "c²", "c5a"])
def test_a_hand_edited_calibration_id_takes_no_part_in_the_numbering(odd: str) -> None:
    # was: ValueError: invalid literal for int() with base 10: 'x5' (CLI traceback, exit 1)
    first = planner.calibrate("gpt2-finetune", "A100-80GB", measured_tokens_per_second=50_000)
    assert first["id"] == "c1"
    path = calibration_file()
    rows = yaml.safe_load(path.read_text(encoding="utf-8"))
    rows[0]["id"] = odd
    path.write_text(yaml.safe_dump(rows, allow_unicode=True), encoding="utf-8")
    assert [c.id for c in load_calibrations()] == [odd]
    result = CliRunner().invoke(
        main,
        [
            "calibrate",
            "record",
            "gpt2-finetune",
            "--gpu",
            "H100",
            "--measured-tokens-per-second",
            "90000",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert sorted(c.id for c in load_calibrations()) == sorted([odd, "c1"])
    # numbered ids still count: the next one after c1 is c2
    again = planner.calibrate("gpt2-finetune", "L4", measured_tokens_per_second=5_000)
    assert again["id"] == "c2"


# -- budget growth ---------------------------------------------------------------------------------


def _budget(tmp_path: Path, growth: float) -> Path:
    raw = yaml.safe_load(BUDGET.read_text(encoding="utf-8"))
    raw["horizon_months"] = 12
    raw["classes"][0]["demand_gpu_hours"] = {"start": 1000, "growth_per_month": growth}
    path = tmp_path / "budget.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


@pytest.mark.parametrize(("growth", "fix"), [(5, "write 0.05 for 5%"), (1.5, "write 0.015")])
def test_a_growth_typed_as_a_percentage_is_refused(tmp_path: Path, growth: float, fix: str) -> None:
    # was: growth_per_month: 5 planned demand x6 every month, 1.3 trillion USD, exit 0
    path = _budget(tmp_path, growth)
    result = CliRunner().invoke(main, ["budget", str(path), "--no-sensitivity"])
    assert result.exit_code == 2
    assert "classes[0].demand_gpu_hours.growth_per_month" in result.stderr
    assert "it is a fraction" in result.stderr and fix in result.stderr
    assert "Traceback" not in result.output
    with pytest.raises(ConfigError, match="growth_per_month"):
        planner.budget(str(path))


def test_a_doubling_a_month_is_still_read(tmp_path: Path) -> None:
    report = planner.budget(str(_budget(tmp_path, 1.0)))
    gpu = report.plan.months[0].gpu
    demand = [m.demand_gpu_hours for m in report.plan.months if m.gpu == gpu]
    assert demand[:3] == pytest.approx([1000, 2000, 4000])


# -- hardware files --------------------------------------------------------------------------------


def _hardware(tmp_path: Path, **changes: object) -> Path:
    raw = yaml.safe_load(HARDWARE.read_text(encoding="utf-8"))
    for key, value in changes.items():
        if value is None:
            raw.pop(key, None)
        else:
            raw[key] = value
    path = tmp_path / "hardware.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


def _refused(path: Path, key: str, *needles: str) -> None:
    result = CliRunner().invoke(main, ["tco", "--hardware", str(path), "--no-cloud"])
    assert result.exit_code == 2, result.output
    assert f"{path}: {key}:" in result.stderr
    for needle in needles:
        assert needle in result.stderr
    assert "Traceback" not in result.output
    with pytest.raises(ConfigError) as caught:
        planner.tco(str(path), with_cloud=False)
    assert caught.value.key_path == key


def test_watts_typed_as_kilowatts_are_refused(tmp_path: Path) -> None:
    # one RTX 4090 (450 W) with power_kw_avg: 450 -- was 473k USD of power a year
    path = _hardware(
        tmp_path,
        gpu="RTX4090",
        gpus_per_machine=1,
        interconnect=None,
        fabric="ethernet",
        power_kw_avg=450,
        power_kw_max=None,
    )
    # at most 2 x 0.45 kW of GPU and 2 kW of host
    _refused(path, "power_kw_avg", "at most 2.9 kW", "give kilowatts, not watts: 0.45 for 450 W")


def test_a_fleet_total_typed_per_machine_is_refused(tmp_path: Path) -> None:
    # 8 H100 machines' 64 kW given as one machine's draw: 2 x 5.6 + 2 = 13.2 kW is the most
    path = _hardware(tmp_path, power_kw_avg=64, power_kw_max=None)
    _refused(path, "power_kw_avg", "at most 13.2 kW", "the draw of one machine")


@pytest.mark.parametrize("kw", [0.0, 1.5])
def test_less_power_than_the_gpus_draw_is_refused(tmp_path: Path, kw: float) -> None:
    # 8 x 700 W = 5.6 kW of H100s: a training machine draws at least 30% of it, 1.68 kW
    path = _hardware(tmp_path, power_kw_avg=kw, power_kw_idle=None)
    _refused(path, "power_kw_avg", "5.6 kW", "electricity_usd_per_kwh: 0")


def test_the_bundled_machines_draw_within_the_bounds() -> None:
    for path in sorted((ROOT / "scenarios" / "hardware").glob("*.yaml")):
        result = planner.tco(str(path), with_cloud=False)
        assert result.usd_per_gpu_hour > 0, path.name


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"staff_fte": 0.5, "staff_usd_per_year": None}, "staff_usd_per_year"),
        ({"staff_fte": 0.0, "staff_usd_per_year": 200000}, "staff_fte"),
    ],
)
def test_staff_time_and_its_cost_come_together(
    tmp_path: Path, changes: dict[str, object], key: str
) -> None:
    # was: either alone cost 0 USD without a word
    _refused(_hardware(tmp_path, **changes), key)


def test_staff_cost_counts_when_both_are_given(tmp_path: Path) -> None:
    none = planner.tco(
        str(_hardware(tmp_path, staff_fte=0.0, staff_usd_per_year=None)), with_cloud=False
    )
    some = planner.tco(
        str(_hardware(tmp_path, staff_fte=0.5, staff_usd_per_year=200000)), with_cloud=False
    )
    # half a person at 200k a year over the 8 GPUs' hours
    extra = 0.5 * 200000 / (8 * 8766)
    assert some.usd_per_gpu_hour - none.usd_per_gpu_hour == pytest.approx(extra, rel=0.01)


def test_a_machine_lent_for_minutes_a_day_is_refused(tmp_path: Path) -> None:
    # was: 0.0001 h a day priced 20,548 USD a GPU-hour
    path = _hardware(tmp_path, hours_available_per_day=0.0001)
    _refused(path, "hours_available_per_day", "valid values: 1 to 24")


# -- private price lists ---------------------------------------------------------------------------


def _private_list(tmp_path: Path, price: float) -> Path:
    """A user's price list of one 8 x H100 box at ``price`` USD an hour, on demand only."""
    path = tmp_path / "mine.csv"
    row = offer_row(
        provider="mycloud",
        instance_type="box8",
        gpu_model="H100",
        price_on_demand_usd_per_hour=price,
        price_spot_usd_per_hour=None,
        price_reserved_1y_usd_per_hour=None,
        price_reserved_3y_usd_per_hour=None,
        price_basis_reserved="none",
    )
    pd.DataFrame([row]).to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    ("price", "per_gpu"),
    [(0.0001, "1.3e-05 USD a GPU-hour"), (1e-7, "1.2e-08 USD a GPU-hour"), (0.07, "0.0088")],
)
def test_a_private_price_below_a_cent_a_gpu_hour_is_refused(
    tmp_path: Path, price: float, per_gpu: str
) -> None:
    # was: 8 x H100 for 0.0001 USD an hour quoted as a "$0.00" plan
    path = _private_list(tmp_path, price)
    args = ["quote", "--workload", "gpt2-xl-finetune", "--deadline", "24h", "--offers", str(path)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert "row 2, column 'price_on_demand_usd_per_hour'" in result.stderr
    assert per_gpu in result.stderr and "a price a second x 3,600" in result.stderr
    assert "Traceback" not in result.output


def test_a_cheap_but_real_private_price_is_kept(tmp_path: Path) -> None:
    # 8 x H100 at 0.08 USD an hour: a cent a GPU-hour, the floor itself
    path = _private_list(tmp_path, 0.08)
    result = planner.quote(
        workload="gpt2-xl-finetune", deadline_hours=24, offers_files=(str(path),), top=1
    )
    assert result.plans[0].items[0].instance_type == "box8"


# -- a calibration on idle GPUs --------------------------------------------------------------------


@pytest.mark.parametrize("count", [64, 1_000_000])
def test_a_run_on_more_gpus_than_its_batch_fills_is_not_recorded(count: int) -> None:
    # gpt2-finetune's global batch is 32 sequences: on 64 or a million GPUs only 32 ranks work.
    # was: recorded "x0.16", and that factor then scaled every later estimate of the stack
    with pytest.raises(ConfigError, match=f"keeps only 32 of its {count:,} data-parallel ranks"):
        planner.calibrate(
            "gpt2-finetune", "A100-80GB", count, measured_tokens_per_second=5e6 * count / 1e6
        )
    assert load_calibrations() == ()
    result = CliRunner().invoke(
        main,
        [
            "calibrate",
            "record",
            "gpt2-finetune",
            "--gpu",
            "A100-80GB",
            "--count",
            str(count),
            "--measured-tokens-per-second",
            "5e5",
        ],
    )
    assert result.exit_code == 2 and "--count:" in result.stderr
    assert "Traceback" not in result.output
    # a count the batch fills is recorded
    assert planner.calibrate("gpt2-finetune", "A100-80GB", 8, measured_tokens_per_second=5e5)


# -- a stack's recipes -----------------------------------------------------------------------------


def _estimate(*args: str) -> tuple[int, str]:
    base = [
        "estimate",
        "--model",
        "llama-2-7b",
        "--tokens",
        "100M",
        "--gpu",
        "B200",
        "--count",
        "8",
    ]
    result = CliRunner().invoke(main, [*base, *args])
    assert "Traceback" not in result.output
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("framework", "key", "value", "method"),
    [
        ("hf-trainer", "precision", "fp4", "lora"),
        ("deepspeed", "precision", "fp4", "full"),
        ("lightning", "precision", "fp4", "lora"),
        ("torchtitan", "method", "qlora", "qlora"),
        ("nanotron", "method", "lora", "lora"),
        ("megatron", "method", "qlora", "qlora"),
        ("nanotron", "precision", "fp8", "full"),
        ("apex", "precision", "bf16", "full"),
        ("apex", "method", "lora", "lora"),
        ("torchtune", "precision", "fp16", "full"),
        ("jax", "precision", "fp16", "full"),
    ],
)
def test_a_stack_without_the_recipe_is_refused(
    framework: str, key: str, value: str, method: str
) -> None:
    # was: NVFP4 under the Hugging Face Trainer ran 1.9x faster than its bf16, QLoRA under
    # torchtitan and Megatron-LM took their fused-kernel efficiency
    precision = value if key == "precision" else "bf16"
    code, out = _estimate("--framework", framework, "--precision", precision, "--method", method)
    assert code == 2, out
    assert f"training.{key}: {value} with framework: {framework}" in out
    assert f"{framework} has no {value} recipe" in out
    # the fix names stacks that have it, never the one refused
    named = out.split(f"a stack that runs {value}: ")[1].split("\n")[0].split(", ")
    assert named and framework not in named


@pytest.mark.parametrize(
    ("framework", "precision", "method"),
    [
        ("nemo", "fp4", "lora"),
        ("megatron", "fp4", "full"),
        ("torchtitan", "bf16", "lora"),
        ("torchtune", "pure-bf16", "qlora"),
        ("hf-trainer", "fp8", "lora"),
        ("pytorch-fsdp", "bf16", "qlora"),
    ],
)
def test_a_stack_with_the_recipe_runs_it(framework: str, precision: str, method: str) -> None:
    code, out = _estimate("--framework", framework, "--precision", precision, "--method", method)
    assert code == 0, out
    assert f"software stack: {framework}" in out


def test_auto_moves_an_nvfp4_fine_tune_to_a_stack_that_runs_it() -> None:
    code, out = _estimate("--precision", "fp4", "--method", "lora")
    assert code == 0, out
    assert "in fp4, which hf-trainer has no recipe for" in out
    assert "software stack: hf-trainer" not in out


# -- tco wording -----------------------------------------------------------------------------------


def test_a_tco_without_the_cloud_says_the_comparison_is_off() -> None:
    # was: "no cloud offers with H100 GPUs in these prices ... (--compare-gpu H100)"
    result = CliRunner().invoke(main, ["tco", "--hardware", "8xh100-hgx", "--no-cloud"])
    assert result.exit_code == 0, result.output
    assert "switched off (--no-cloud" in result.output
    assert "--compare-gpu H100" not in result.output
    assert "switched off" in planner.tco("8xh100-hgx", with_cloud=False).compare_reason


def test_a_utilization_just_above_one_is_shown_as_given() -> None:
    # was: "utilization must be in (0, 1], got 1"
    result = CliRunner().invoke(
        main, ["tco", "--hardware", "8xh100-hgx", "--no-cloud", "--utilization", "1.0000001"]
    )
    assert result.exit_code == 2
    assert "got 1.0000001" in result.stderr


# -- a serving batch too big for any GPU -----------------------------------------------------------


@pytest.mark.parametrize(
    ("inference", "seqs", "named"),
    [
        # (10 million alone, the case first found, is refused as past any engine's batch since
        # sweep 17: inference.max_batch <= 65,536)
        (
            {"max_batch": 65_536, "beam_width": 32},
            2_097_152,
            "inference.max_batch 65,536 x beam_width",
        ),
        (
            {"max_batch": 4096, "beam_width": 256},
            1_048_576,
            "inference.max_batch 4,096 x beam_width",
        ),
    ],
)
def test_a_batch_whose_workspace_fits_no_gpu_is_named(
    inference: dict[str, int], seqs: int, named: str
) -> None:
    # was: "DOES NOT FIT -- needs 13.6 GiB" on an 80 GB A100, blaming the weights
    spec = {
        "name": "big",
        "kind": "inference",
        "model": "llama-2-7b",
        "inference": {"hours": 730, "requests_per_s": 2, **inference},
    }
    est = planner.estimate(parse_workload(spec), "A100-80GB", 1)
    assert not est.fits
    # 16 values of the 4,096-wide hidden state a sequence, 2 bytes each
    workspace_gib = seqs * 16 * 4096 * 2 / 2**30
    assert est.memory_breakdown_gib["activations"] == pytest.approx(workspace_gib)
    assert est.memory_per_gpu_gib > 80
    assert f"the step workspace of {seqs:,} sequences does not fit" in est.strategy.reason
    assert est.suggestions[0].startswith(named)
    assert "lower inference.max_batch (the stack's own is 256)" in est.suggestions[0]


def test_beams_whose_kv_cache_fits_no_gpu_are_named() -> None:
    # 1,024 beams of one request hold 1,024 copies of its context: its KV cache, not the workspace
    spec = {
        "name": "beams",
        "kind": "inference",
        "model": "llama-2-7b",
        "inference": {"hours": 730, "requests_per_s": 2, "beam_width": 1024},
    }
    est = planner.estimate(parse_workload(spec), "A100-80GB", 1)
    assert not est.fits
    assert est.strategy.reason == "weights and one request's KV cache (1,024 beams) do not fit"
