"""Finite but absurd numbers are refused at the boundary, with the key, the range and a fix.

Each case is a number a person can type by mistake (a monthly price as hourly, ``1e22`` tokens, a
GPU count with twenty digits): it must never reach the estimator or the solver, never come back as
``inf``/``nan`` or a 300-digit price, and never exit 0.  The error names the file and key path (or
the option, or the library's field) and says what range is allowed or how to fix it.  Bounds live
with the value they bound: ``planner.units`` (GPUs per job, plans, utilization, lifetimes,
horizons, money), ``planner.schema`` (offer columns), ``planner.workload.spec`` and
``planner.ownership.hardware`` (file fields).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

import planner
from planner import clock
from planner.catalog.store import bundled_snapshot_root
from planner.errors import ConfigError, PlannerError
from planner.schema import validate_offers
from tests.conftest import offer_row
from tests.test_bad_input import assert_clean_error, invoke

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"
TODAY = date(2026, 11, 24)
# "inf" or "nan" as a word: what a broken number prints as (not "inference", "finetune")
NOT_A_NUMBER = re.compile(r"\b(?:-?inf(?:inity)?|nan)\b", re.IGNORECASE)


@pytest.fixture(autouse=True)
def _frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """``as_of`` in the future is judged against the one clock; freeze it."""
    monkeypatch.setattr(
        clock, "utc_now", lambda: datetime(2026, 11, 24, 12, 0, tzinfo=timezone.utc)
    )


def scenario(kind: str, name: str) -> dict[str, Any]:
    data = yaml.safe_load((SCENARIOS / kind / f"{name}.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def with_values(data: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """``data`` with dotted keys set (``classes.0.buy.0.utilization``); None deletes a key."""
    for dotted, value in changes.items():
        node: Any = data
        *parents, last = dotted.split(".")
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
        if value is None:
            node.pop(last, None)
        elif isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
    return data


def write_yaml(path: Path, data: dict[str, Any]) -> str:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return str(path)


# --- offer CSVs (--offers FILE) -------------------------------------------------------------------

OFFER_CASES = [
    # (column overrides, needles in the message besides the file and column)
    # a price that is infinite, not a number, absurd or negative: the range and the units fix
    ({"price_on_demand_usd_per_hour": "inf"}, ("not a finite number", "0 to 10,000 USD/h")),
    ({"price_on_demand_usd_per_hour": "nan"}, ("not a number", "0 to 10,000 USD/h")),
    ({"price_on_demand_usd_per_hour": "1e300"}, ("at most 10,000", "divide a monthly price")),
    ({"price_on_demand_usd_per_hour": "-1"}, ("negative", "0 to 10,000 USD/h")),
    ({"price_spot_usd_per_hour": "inf"}, ("not a finite number", "0 to 10,000 USD/h")),
    ({"price_spot_usd_per_hour": "nan"}, ("not a number", "0 to 10,000 USD/h")),
    ({"price_spot_usd_per_hour": "1e300"}, ("at most 10,000", "divide a monthly price")),
    ({"price_spot_usd_per_hour": "-3"}, ("negative", "0 to 10,000 USD/h")),
    ({"price_reserved_1y_usd_per_hour": "25000"}, ("at most 10,000", "divide a monthly price")),
    # an interruption rate is a percentage
    ({"spot_interruption_pct": "150"}, ("at most 100", "0 to 100")),
    ({"spot_interruption_pct": "-5"}, ("negative", "0 to 100")),
    # prices are captured on or before today (a day of slack for time zones)
    ({"as_of": "2030-01-01"}, ("in the future", "today is 2026-11-24")),
    ({"as_of": str(TODAY + timedelta(days=2))}, ("in the future", "day the prices were captured")),
    # GPUs per instance: 1 to 72 (an NVL72 rack)
    ({"gpu_count": "0"}, ("at least 1", "1 to 72")),
    ({"gpu_count": "-1"}, ("negative", "1 to 72")),
    ({"gpu_count": "1000", "gpu_memory_total_gib": None}, ("at most 72",)),
    ({"gpu_count": "1.5", "gpu_memory_total_gib": None}, ("whole number",)),
    # memory per GPU must agree with the catalog: the catalog's value is in the message
    ({"gpu_model": "A100-80GB", "gpu_memory_gib": "16"}, ("A100-80GB has 80 GiB", "fix")),
    ({"gpu_model": "H100", "gpu_memory_gib": "800"}, ("H100 has 80 GiB", "fix")),
    ({"gpu_memory_gib": "1e6"}, ("at most 1,024", "GiB per GPU")),
]


def offers_csv(path: Path, **overrides: object) -> str:
    """A one-row offer CSV; an override of None leaves the column out (it is derived)."""
    row = offer_row(**{k: v for k, v in overrides.items() if v is not None})
    for key in [k for k, v in overrides.items() if v is None]:
        row.pop(key, None)
    pd.DataFrame([row]).to_csv(path, index=False)
    return str(path)


@pytest.mark.parametrize(
    ("overrides", "needles"), OFFER_CASES, ids=lambda v: ",".join(map(str, v)) if v else "-"
)
def test_absurd_offer_values_are_refused(
    tmp_path: Path, overrides: dict[str, object], needles: tuple[str, ...]
) -> None:
    path = offers_csv(tmp_path / "prices.csv", **overrides)
    column = next(k for k in overrides if k != "gpu_memory_total_gib" and k != "gpu_model")
    if "gpu_model" in overrides:
        column = "gpu_memory_gib"
    assert_clean_error(invoke("offers", "--offers", path), path, f"column '{column}'", *needles)


def test_providers_small_memory_differences_are_tolerated(tmp_path: Path) -> None:
    """AWS reports an L4 or A10G's 24 GB as 22.35 GiB; that is the same part, not a typo."""
    for gpu, memory in (("L4", 22.35), ("A10G", 22.35), ("A100-80GB", 80.0), ("H100", 79.6)):
        path = offers_csv(
            tmp_path / f"{gpu}.csv",
            gpu_model=gpu,
            gpu_memory_gib=memory,
            gpu_count=1,
            interconnect="none",
        )
        result = invoke("offers", "--offers", path, "--format", "csv")
        assert result.exit_code == 0, result.output


def test_as_of_tomorrow_is_allowed_for_time_zones(tmp_path: Path) -> None:
    path = offers_csv(tmp_path / "prices.csv", as_of=str(TODAY + timedelta(days=1)))
    assert invoke("offers", "--offers", path, "--format", "csv").exit_code == 0


def test_every_bundled_offer_passes_the_range_checks() -> None:
    """The bounds sit well past every real row: the bundled snapshot validates untouched."""
    files = sorted(bundled_snapshot_root().glob("*/offers-*.csv"))
    assert files, "no bundled snapshot found"
    rows = 0
    for path in files:
        frame = pd.read_csv(path, dtype={"as_of": str})
        clean = validate_offers(frame, source=str(path))
        assert len(clean) == len(frame)
        rows += len(frame)
    assert rows > 1000


# --- workload files -------------------------------------------------------------------------------

WORKLOAD_CASES = [
    # (dotted key, value, needles): each bound cites the largest published value in spec.py
    ("data.tokens", 1e22, ("at most 1e+15",)),
    ("data.tokens", 1e305, ("at most 1e+15",)),
    ("data.tokens", float("inf"), ("finite number",)),
    ("data.tokens", float("nan"), ("finite number",)),
    ("data.samples", 1e30, ("at most 1e+13",)),
    ("data.epochs", 1e9, ("at most 10000",)),
    ("data.flops_per_sample", 1e30, ("at most 1e+20",)),
    ("model.params", 1e20, ("at most 1e+14",)),
    ("model.layers", 10**12, ("at most 100000",)),
    ("model.hidden", 10**11, ("at most 1e+07",)),
    ("model.seq_len", 10**12, ("at most 1e+08",)),
    ("model.activation_gib_per_sample", 1e30, ("at most 1e+06",)),
    ("model.dropout", 1.5, ("less than 1",)),
    ("training.global_batch_tokens", 1e20, ("at most 1e+09",)),
    ("training.lora_rank", 10**9, ("at most 1e+07",)),
    ("training.parallelism.tensor", 10**9, ("at most 100000",)),
    ("training.parallelism.micro_batch", 10**9, ("at most 1e+07",)),
    ("pieces", 10**9, ("at most 100000",)),
]


@pytest.mark.parametrize(("key", "value", "needles"), WORKLOAD_CASES, ids=lambda v: str(v))
def test_absurd_workload_values_are_refused(
    tmp_path: Path, key: str, value: object, needles: tuple[str, ...]
) -> None:
    data = scenario("workloads", "gpt2-xl-finetune")
    data["model"] = {"preset": data["model"]}
    path = write_yaml(tmp_path / "w.yaml", with_values(data, {key: value}))
    result = invoke("estimate", path, "--gpu", "H100")
    assert_clean_error(result, path, f"{key}:", *needles)
    assert result.exit_code == 2


INFERENCE_CASES = [
    ("llm-serving-7b", "inference.tokens_per_s", 1e12, ("at most 1e+09",)),
    ("llm-serving-7b", "inference.hours", 1e9, ("at most 87600",)),
    ("llama-2-7b-batch-inference", "inference.tokens", 1e20, ("at most 1e+16",)),
]


@pytest.mark.parametrize(("name", "key", "value", "needles"), INFERENCE_CASES)
def test_absurd_inference_values_are_refused(
    tmp_path: Path, name: str, key: str, value: object, needles: tuple[str, ...]
) -> None:
    path = write_yaml(tmp_path / "w.yaml", with_values(scenario("workloads", name), {key: value}))
    assert_clean_error(invoke("estimate", path, "--gpu", "H100"), path, f"{key}:", *needles)


@pytest.mark.parametrize(
    ("name", "changes", "args"),
    [
        # the largest values the bounds allow, on the smallest and the largest gang
        ("gpt2-xl-finetune", {"data.tokens": 1e15}, ("--gpu", "Jetson-AGX-Orin")),
        (
            "gpt2-xl-finetune",
            # 1e14 parameters in a shape that holds them (gpt2-xl's shape holds 1.6e9, and a
            # count that far from its shape is refused)
            {
                "model": {
                    "arch": "decoder",
                    "params": 1e14,
                    "layers": 200,
                    "hidden": 204000,
                    "heads": 1000,
                    "seq_len": 1024,
                    "vocab": 50257,
                },
                "data.tokens": 1e15,
            },
            ("--gpu", "H100", "--count", "1000000"),
        ),
        # (data.tokens counts the epochs: epochs beside tokens is refused)
        ("gpt2-xl-finetune", {"pieces": 100000, "data.tokens": 1e15}, ("--gpu", "H100")),
        (
            "llm-serving-7b",
            {"inference.tokens_per_s": 1e9, "inference.hours": 87600},
            ("--gpu", "T4"),
        ),
        ("resnet50-imagenet", {"data.samples": 1e13, "data.epochs": 1e4}, ("--gpu", "T4")),
    ],
)
@pytest.mark.parametrize("fmt", ["table", "json"])
def test_estimates_at_the_bounds_never_print_inf_or_nan(
    tmp_path: Path, name: str, changes: dict[str, Any], args: tuple[str, ...], fmt: str
) -> None:
    path = write_yaml(tmp_path / "w.yaml", with_values(scenario("workloads", name), changes))
    result = invoke("estimate", path, *args, "--format", fmt)
    assert result.exit_code == 0, result.output
    assert not NOT_A_NUMBER.search(result.output), result.output


# --- hardware files and tco options ---------------------------------------------------------------

HARDWARE_CASES = [
    # money: per-machine bounds far past any real machine, whichever key or currency gives it
    (
        {"staff_usd_per_year": 1e308},
        "staff_usd_per_year",
        ("0 to 10,000,000 USD", "check the units"),
    ),
    ({"capex_usd": 1e20}, "capex_usd", ("0 to 1,000,000,000 USD", "check the units")),
    ({"capex_usd": None, "capex": "1e400 EUR"}, "capex", ("not a finite amount", "80000 CNY")),
    ({"capex_usd": None, "capex": "2e9 EUR"}, "capex", ("0 to 1,000,000,000 USD",)),
    (
        {"rack_usd_per_month": 1e13, "colocation_usd_per_kw_month": None},
        "rack_usd_per_month",
        ("0 to 1,000,000 USD",),
    ),
    (
        {"electricity_usd_per_kwh": None, "electricity_per_kwh": "100 EUR"},
        "electricity_per_kwh",
        ("0 to 5 USD",),
    ),
    ({"electricity_usd_per_kwh": 100}, "electricity_usd_per_kwh", ("at most 5",)),
    ({"colocation_usd_per_kw_month": 1e9}, "colocation_usd_per_kw_month", ("at most 5000",)),
    # counts and physical quantities
    ({"machines": 10**21}, "machines", ("at most 100000",)),
    ({"gpus_per_machine": 1000}, "gpus_per_machine", ("at most 72",)),
    ({"power_kw_avg": 1e9, "power_kw_max": None}, "power_kw_avg", ("at most 1000",)),
    ({"pue": 100}, "pue", ("at most 3",)),
    ({"staff_fte": 1000}, "staff_fte", ("at most 10",)),
    ({"hours_available_per_day": 25}, "hours_available_per_day", ("at most 24",)),
    # depreciation: one to thirty years
    ({"lifetime_years": 0.0001}, "lifetime_years", ("from 1 to 30 years", "18 months is 1.5")),
    ({"lifetime_years": 1000}, "lifetime_years", ("at most 30",)),
]


@pytest.mark.parametrize(("changes", "key", "needles"), HARDWARE_CASES, ids=lambda v: str(v))
def test_absurd_hardware_values_are_refused(
    tmp_path: Path, changes: dict[str, Any], key: str, needles: tuple[str, ...]
) -> None:
    data = with_values(scenario("hardware", "8xh100-hgx"), changes)
    path = write_yaml(tmp_path / "hw.yaml", data)
    result = invoke("tco", "--hardware", path, "--no-cloud")
    assert_clean_error(result, path, f"{key}:", *needles)
    assert not NOT_A_NUMBER.search(result.output.replace("'1e400 EUR'", ""))


TCO_OPTION_CASES = [
    (("--utilization", "1e-300"), ("--utilization", "[0.01, 1]")),
    (("--utilization", "0.001"), ("--utilization", "[0.01, 1]", "e.g. 0.6")),
    (("--years", "1e-300"), ("--years", "one month to 30 years")),
    (("--years", "1e300"), ("--years", "(0, 30]")),
    (("--years", "1000"), ("--years", "(0, 30]")),
]


@pytest.mark.parametrize(("args", "needles"), TCO_OPTION_CASES, ids=lambda v: " ".join(v))
def test_absurd_tco_options_are_refused(args: tuple[str, ...], needles: tuple[str, ...]) -> None:
    assert_clean_error(invoke("tco", "--hardware", "8xh100-hgx", "--no-cloud", *args), *needles)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"utilization": 1e-9}, "utilization"),
        ({"years": 1e-9}, "years"),
        ({"years": float("inf")}, "years"),
    ],
)
def test_absurd_tco_arguments_name_the_field(kwargs: dict[str, float], field: str) -> None:
    with pytest.raises(ConfigError) as info:
        planner.tco("8xh100-hgx", with_cloud=False, **kwargs)
    assert info.value.key_path == field
    assert "must be in" in str(info.value) or "finite" in str(info.value)


# --- budget files ---------------------------------------------------------------------------------

BUDGET_CASES = [
    ({"classes.1.owned.0.machines": 10**21}, "classes[1].owned[0].machines", ("at most 100000",)),
    (
        {"classes.0.buy.0.max_machines": 10**21},
        "classes[0].buy[0].max_machines",
        ("at most 100000",),
    ),
    ({"classes.0.buy.0.utilization": 1e-300}, "classes[0].buy[0].utilization", ("at least 0.01",)),
    (
        {"classes.0.on_demand_usd_per_gpu_hour": 1e11},
        "classes[0].on_demand_usd_per_gpu_hour",
        ("0 to 200 USD", "divide a monthly price by 730"),
    ),
    (
        {"classes.0.spot.usd_per_gpu_hour": -2},
        "classes[0].spot.usd_per_gpu_hour",
        ("not be negative", "0 to 200 USD"),
    ),
    (
        {"classes.0.commitments.0.usd_per_gpu_hour": "1e400 EUR"},
        "classes[0].commitments[0].usd_per_gpu_hour",
        ("not a finite amount", "80000 CNY"),
    ),
    ({"capex_limit_usd": 1e300}, "capex_limit_usd", ("0 to 1,000,000,000,000 USD",)),
    ({"workloads.0.gpu_hours": 1e300}, "workloads[0].gpu_hours", ("1e+12",)),
    ({"horizon_months": 100000}, "horizon_months", ("at most 120",)),
]


@pytest.mark.parametrize(("changes", "key", "needles"), BUDGET_CASES, ids=lambda v: str(v))
def test_absurd_budget_values_are_refused(
    tmp_path: Path, changes: dict[str, Any], key: str, needles: tuple[str, ...]
) -> None:
    data = with_values(scenario("budgets", "2027-ml-platform"), changes)
    path = write_yaml(tmp_path / "budget.yaml", data)
    assert_clean_error(invoke("budget", path, "--no-sensitivity"), path, f"{key}:", *needles)


# --- CLI options and the library's arguments --------------------------------------------------

QUOTE = ("quote", "--workload", "gpt2-xl-finetune", "--deadline", "24h")
OPTION_CASES = [
    (
        ("estimate", "gpt2-xl-finetune", "--gpu", "H100", "--count", "100000000000000000000"),
        ("--count", "from 1 to 1,000,000"),
    ),
    (
        ("estimate", "gpt2-xl-finetune", "--gpu", "H100", "--count", "1000001"),
        ("--count", "from 1 to 1,000,000"),
    ),
    (
        (
            "estimate",
            "gpt2-xl-finetune",
            "--gpu",
            "H100",
            "--count",
            "8",
            "--gpus-per-node",
            "1000",
        ),
        ("--gpus-per-node", "from 1 to 72"),
    ),
    ((*QUOTE, "--top", "100000000000000000000"), ("--top", "from 1 to 100")),
    ((*QUOTE, "--budget", "1e300"), ("--budget", "0 to 1,000,000,000,000 USD")),
    ((*QUOTE, "--quota", "aws=100000000000000000000000"), ("--quota", "from 0 to 1,000,000")),
    ((*QUOTE, "--discount", "aws=150%"), ("--discount", "0% and 100%")),
    ((*QUOTE, "--discount", "aws=1e300"), ("--discount", "between 0 and 1")),
    ((*QUOTE, "--max-interruption", "1e300"), ("--max-interruption", "0<=x<=100")),
    (
        ("quote", "--workload", "gpt2-xl-finetune", "--deadline", "1000000000000h"),
        ("--deadline", "ten years"),
    ),
    (("quote", "--workload", "gpt2-xl-finetune", "--deadline", "1e30h"), ("--deadline", "24h")),
]


@pytest.mark.parametrize(("args", "needles"), OPTION_CASES, ids=lambda v: " ".join(v[-2:]))
def test_absurd_options_are_refused(args: tuple[str, ...], needles: tuple[str, ...]) -> None:
    result = invoke(*args)
    assert_clean_error(result, *needles)
    assert result.exit_code == 2


Call = Callable[[], object]
API_CASES: list[tuple[Call, str, str]] = [
    (
        lambda: planner.estimate("gpt2-xl-finetune", gpu="H100", count=10**20),
        "count",
        "1 to 1,000,000",
    ),
    (
        lambda: planner.estimate("gpt2-xl-finetune", gpu="H100", count=float("nan")),
        "count",
        "1 to 1,000,000",
    ),
    (
        lambda: planner.quote(workload="gpt2-xl-finetune", deadline_hours=24, top=1000),
        "top",
        "1 to 100",
    ),
    (
        lambda: planner.quote(workload="gpt2-xl-finetune", deadline_hours=24, budget_usd=1e300),
        "budget_usd",
        "0 to 1,000,000,000,000 USD",
    ),
    (
        lambda: planner.quote(workload="gpt2-xl-finetune", deadline_hours=1e30),
        "deadline_hours",
        "87,600 hours",
    ),
    (
        lambda: planner.quote(
            workload="gpt2-xl-finetune", deadline_hours=24, quotas={"aws": 10**23}
        ),
        "quotas",
        "0 to 1,000,000",
    ),
    (
        lambda: planner.quote(
            workload="gpt2-xl-finetune", deadline_hours=24, discounts={"aws": 1.5}
        ),
        "discounts",
        "between 0 and 1",
    ),
]


@pytest.mark.parametrize(("call", "field", "allowed"), API_CASES)
def test_absurd_library_arguments_name_the_field(call: Call, field: str, allowed: str) -> None:
    with pytest.raises(PlannerError) as info:
        call()
    assert isinstance(info.value, ConfigError)
    assert info.value.key_path == field
    assert allowed in str(info.value)
