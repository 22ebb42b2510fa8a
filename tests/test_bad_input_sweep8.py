"""Bad input the eighth sweep found: each case here was silently accepted (8 GPUs in a node wired
by ``interconnect: none``, ``--count ８`` read as 8 while the same ``８`` in a file was refused),
or refused without a fix (``data.tokens: -5``, ``resale_fraction: 20``, ``gpu_hours: .nan``, a
negative demand, ``start: "2027-13"``) or with a wrong one (``８`` in a file told to write 8
"without an exponent").

The product rule each test pins: bad input gets a clear error naming the file, the field and a
fix, a non-zero exit and no traceback, on the command line and in the library.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import planner
from planner.errors import ConfigError, OfferValidationError
from planner.gpu_specs import load_gpu_catalog
from planner.workload.estimate_types import Topology
from tests.cli_checks import assert_clean_error, invoke
from tests.conftest import offer_row

ROOT = Path(__file__).resolve().parent.parent
HARDWARE = ROOT / "scenarios" / "hardware" / "8xh100-hgx.yaml"
WORKLOAD = ROOT / "scenarios" / "workloads" / "gpt2-xl-finetune.yaml"
BUDGET = ROOT / "scenarios" / "budgets" / "2027-ml-platform.yaml"


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path / "data"))


def _edited(source: Path, tmp_path: Path, old: str, new: str, name: str) -> Path:
    """``source`` with ``old`` replaced by ``new``, written to ``tmp_path / name``."""
    text = source.read_text(encoding="utf-8")
    assert old in text, old
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


# --- interconnect none for GPUs that share a node -------------------------------------------------


def test_estimate_refuses_none_wiring_eight_gpus_in_a_node() -> None:
    """was: exit 0, "interconnect needed: pcie" for 8 GPUs wired by nothing."""
    result = invoke(
        "estimate", "gpt2-xl-finetune", "--gpu", "H100", "--count", "8", "--interconnect", "none"
    )
    assert_clean_error(
        result, "--interconnect", "none cannot wire 8 GPUs", "use nvswitch", "--gpus-per-node 1"
    )


def test_estimate_none_wiring_of_a_pcie_card_names_pcie_once() -> None:
    result = invoke(
        "estimate", "gpt2-xl-finetune", "--gpu", "RTX4090", "--count", "2", "--interconnect", "none"
    )
    assert_clean_error(result, "--interconnect", "none cannot wire 2 GPUs", "use pcie,")
    assert "pcie, the" not in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("--count", "1", "--interconnect", "none"),  # one GPU: nothing to wire
        ("--count", "8", "--gpus-per-node", "1", "--interconnect", "none"),  # 8 nodes of one
    ],
    ids=["one-gpu", "one-gpu-per-node"],
)
def test_none_wiring_of_gpus_that_share_no_node_still_runs(args: tuple[str, ...]) -> None:
    result = invoke("estimate", "gpt2-xl-finetune", "--gpu", "H100", *args)
    assert result.exit_code == 0, result.output


def test_none_wiring_in_the_library() -> None:
    topology = Topology(gpus_per_node=8, interconnect="none", fabric="infiniband")
    with pytest.raises(ConfigError, match="none cannot wire 8 GPUs") as caught:
        planner.estimate("gpt2-xl-finetune", "H100", 8, topology=topology)
    assert caught.value.key_path == "interconnect"
    assert caught.value.hint is not None and "nvswitch" in caught.value.hint


def test_a_hardware_file_of_eight_gpus_wired_by_none_is_refused(tmp_path: Path) -> None:
    """was: exit 0, a TCO of "1 x 8 x H100 (none)" and quotes that ran on it as on PCIe."""
    path = _edited(HARDWARE, tmp_path, "interconnect: nvswitch", "interconnect: none", "box.yaml")
    for args in (("tco", "--hardware", str(path), "--no-cloud"),):
        assert_clean_error(
            invoke(*args), "box.yaml", "interconnect", "none cannot wire 8 GPUs", "pcie"
        )
    with pytest.raises(ConfigError, match="none cannot wire 8 GPUs") as caught:
        planner.load_hardware(str(path))
    assert caught.value.key_path == "interconnect"
    assert caught.value.hint is not None and "gpus_per_machine: 1" in caught.value.hint


def test_a_one_gpu_hardware_file_wired_by_none_still_loads() -> None:
    hw = planner.load_hardware("workstation-rtx4090")
    assert hw.interconnect.value == "none" and hw.gpus_per_machine == 1


def test_a_price_list_of_eight_gpus_wired_by_none_is_refused(tmp_path: Path) -> None:
    """was: listed as "interconnect none" and quoted as if the 8 GPUs talked over PCIe."""
    import pandas as pd

    path = tmp_path / "prices.csv"
    pd.DataFrame([offer_row(interconnect="none")]).to_csv(path, index=False)
    result = invoke("offers", "--offers", str(path))
    assert_clean_error(
        result, "prices.csv", "row 2", "column 'interconnect'", "none cannot wire", "write pcie"
    )
    with pytest.raises(OfferValidationError, match="none cannot wire"):
        planner.offers(offers_files=[str(path)])


def test_a_one_gpu_price_list_row_wired_by_none_still_loads(tmp_path: Path) -> None:
    import pandas as pd

    path = tmp_path / "prices.csv"
    row = offer_row(gpu_count=1, interconnect="none", instance_type="p4d.small")
    pd.DataFrame([row]).to_csv(path, index=False)
    assert invoke("offers", "--offers", str(path), "--format", "csv").exit_code == 0


# --- digits that are not ASCII 0-9 ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "option", "fix"),
    [
        # was: exit 0, 8 GPUs (click's INT reads "８" through int())
        (("estimate", "gpt2-xl-finetune", "--gpu", "H100", "--count", "８"), "--count", "write 8"),
        # was: exit 0, a 24-hour deadline
        (("quote", "-w", "gpt2-xl-finetune", "--deadline", "２４h"), "--deadline", "write 24h"),
        # was: exit 0, three plans; the --opt=value form
        (
            ("quote", "-w", "gpt2-xl-finetune", "--deadline", "24h", "--top=３"),
            "--top",
            "write 3",
        ),
        # was: exit 0, 50M tokens
        (
            ("quote", "--model", "mistral-7b", "--tokens", "５０M", "--deadline", "24h"),
            "--tokens",
            "write 50M",
        ),
        # a short option is named by its long name
        (("build", "-w", "gpt2-finetune:４", "--budget", "10000"), "--workload", "gpt2-finetune:4"),
        # Arabic-Indic digits, as int() reads them too
        (("estimate", "gpt2-xl-finetune", "--gpu", "H100", "--count", "٢"), "--count", "write 2"),
    ],
    ids=["count", "deadline", "top-equals", "tokens", "short-option", "arabic-indic"],
)
def test_an_option_in_full_width_digits_is_refused(
    args: tuple[str, ...], option: str, fix: str
) -> None:
    result = invoke(*args)
    assert_clean_error(result, option, "not ASCII 0-9", fix)


def test_full_width_digits_keep_json_stdout_clean() -> None:
    result = invoke(
        "estimate", "gpt2-xl-finetune", "--gpu", "H100", "--count", "８", "--format", "json"
    )
    assert_clean_error(result, "--count", "write 8", quiet_stdout=True)


def test_a_path_with_full_width_digits_is_still_read(tmp_path: Path) -> None:
    """A file may be named with any character: a value naming one that exists is left alone."""
    path = tmp_path / "ジョブ１.yaml"
    path.write_text(WORKLOAD.read_text(encoding="utf-8"), encoding="utf-8")
    result = invoke("estimate", str(path), "--gpu", "H100")
    assert result.exit_code == 0, result.output
    result = invoke("quote", "-w", str(path), "--deadline", "24h", "--format", "json")
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("args", "fix"),
    [
        # was: exit 0, 8 GPUs an instance
        (("quote", "-w", "gpt2-xl-finetune", "--deadline", "24h", "--gpu", "H100:８"), "H100:8"),
        (("quote", "-w", "gpt2-xl-finetune", "--deadline", "24h", "--gpu", "２４GB.."), "24GB.."),
    ],
    ids=["count", "memory-range"],
)
def test_a_gpu_choice_in_full_width_digits_is_refused(args: tuple[str, ...], fix: str) -> None:
    assert_clean_error(invoke(*args), "--gpu", "not ASCII 0-9", f"write {fix}")


def test_a_gpu_choice_in_full_width_digits_in_the_library() -> None:
    with pytest.raises(ConfigError, match="not ASCII 0-9") as caught:
        load_gpu_catalog().choice("H100:８")
    assert caught.value.hint is not None and "write H100:8" in caught.value.hint


@pytest.mark.parametrize(
    ("source", "old", "new", "command", "key", "fix"),
    [
        # was: "write 32768: a whole number, without an exponent"
        (
            WORKLOAD,
            "global_batch_tokens: 32768",
            "global_batch_tokens: ３２７６８",
            "estimate",
            "training.global_batch_tokens",
            "write 32768: digits in ASCII 0-9",
        ),
        (
            HARDWARE,
            "gpus_per_machine: 8",
            "gpus_per_machine: ８",
            "tco",
            "gpus_per_machine",
            "write 8: digits in ASCII 0-9",
        ),
        # was: "cannot read ... as an amount of money", hint "80000 CNY"
        (
            HARDWARE,
            "capex_usd: 310000 ",
            'capex: "３１００００ USD" ',
            "tco",
            "capex",
            "write 310000 USD",
        ),
    ],
    ids=["workload-whole-number", "hardware-whole-number", "hardware-money"],
)
def test_a_file_number_in_full_width_digits_gets_its_ascii_digits(
    tmp_path: Path, source: Path, old: str, new: str, command: str, key: str, fix: str
) -> None:
    path = _edited(source, tmp_path, old, new, "f.yaml")
    args = (
        ("estimate", str(path), "--gpu", "H100")
        if command == "estimate"
        else ("tco", "--hardware", str(path), "--no-cloud")
    )
    result = invoke(*args)
    assert_clean_error(result, "f.yaml", key, fix)
    assert "exponent" not in result.stderr


# --- a value outside a key's range gets the range -----------------------------------------------


@pytest.mark.parametrize(
    ("source", "old", "new", "key", "fix"),
    [
        # was: "must be at least 1, got -5" and no hint
        (WORKLOAD, "tokens: 3.1e8", "tokens: -5", "data.tokens", "valid values: 1 to 1e+15"),
        # YAML reads 1e30 as text: still the range, and the unit slip
        (
            WORKLOAD,
            "global_batch_tokens: 32768",
            "global_batch_tokens: 1e30",
            "training.global_batch_tokens",
            "more than 0, at most 1e+09: check the number and its unit",
        ),
        # a share written as a percentage gets the fraction
        (
            HARDWARE,
            "resale_fraction: 0.0",
            "resale_fraction: 20",
            "resale_fraction",
            "write 0.2 for 20%",
        ),
        (HARDWARE, "pue: 1.4", "pue: 0.5", "pue", "valid values: 1 to 3"),
        (
            HARDWARE,
            "gpus_per_machine: 8",
            "gpus_per_machine: 0",
            "gpus_per_machine",
            "valid values: 1 to 72",
        ),
        (
            HARDWARE,
            "hours_available_per_day: 24",
            "hours_available_per_day: 48",
            "hours_available_per_day",
            "valid values: 1 to 24: check the number and its unit",
        ),
        (HARDWARE, "capex_usd: 310000", "capex_usd: -1", "capex_usd", "valid values: 0 or more"),
        (
            BUDGET,
            "max_share: 0.3",
            "max_share: 30",
            "classes[0].spot.max_share",
            "write 0.3 for 30%",
        ),
        (
            BUDGET,
            "horizon_months: 36",
            "horizon_months: 0",
            "horizon_months",
            "valid values: 1 to 120",
        ),
    ],
    ids=[
        "tokens-negative",
        "batch-huge",
        "resale-percent",
        "pue-low",
        "gpus-zero",
        "hours-a-day",
        "capex-negative",
        "spot-share-percent",
        "horizon-zero",
    ],
)
def test_a_value_out_of_range_gets_the_keys_range(
    tmp_path: Path, source: Path, old: str, new: str, key: str, fix: str
) -> None:
    path = _edited(source, tmp_path, old, new, "f.yaml")
    if source == WORKLOAD:
        args: tuple[str, ...] = ("estimate", str(path), "--gpu", "H100")
    elif source == HARDWARE:
        args = ("tco", "--hardware", str(path), "--no-cloud")
    else:
        args = ("budget", str(path), "--no-sensitivity")
    assert_clean_error(invoke(*args), "f.yaml", f"{key}: must be", "hint: valid values", fix)


def test_a_value_out_of_range_in_the_library(tmp_path: Path) -> None:
    path = _edited(HARDWARE, tmp_path, "resale_fraction: 0.0", "resale_fraction: 20", "f.yaml")
    with pytest.raises(ConfigError, match="must be at most 1") as caught:
        planner.load_hardware(str(path))
    assert caught.value.key_path == "resale_fraction"
    assert caught.value.hint == "valid values: 0 to 1: a share is a fraction, write 0.2 for 20%"


def test_a_spec_copied_out_of_range_keeps_both_hints() -> None:
    spec = planner.load_workload("gpt2-finetune").model_copy(update={"pieces": 0})
    with pytest.raises(ConfigError) as caught:
        planner.estimate(spec, "H100")
    hint = caught.value.hint or ""
    assert "valid values: 1 to" in hint and "spec.variant" in hint


# --- budget values with no fix ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "key", "fix"),
    [
        # was: "expected a finite number, got 'nan'" and no hint
        ("gpu_hours: 40000", "gpu_hours: .nan", "workloads[0].gpu_hours", "real number"),
        # was: "demand must not be negative" and no hint
        ("demand_gpu_hours: 6000", "demand_gpu_hours: -6000", "demand_gpu_hours", "0 or more"),
        # was: "expected a month like '2027-01'" and no hint
        ('start: "2027-01"', 'start: "2027-13"', "start", "the month 01 to 12"),
    ],
    ids=["nan", "negative-demand", "month-13"],
)
def test_budget_values_get_a_fix(tmp_path: Path, old: str, new: str, key: str, fix: str) -> None:
    path = _edited(BUDGET, tmp_path, old, new, "b.yaml")
    assert_clean_error(invoke("budget", str(path), "--no-sensitivity"), "b.yaml", key, "hint:", fix)
    with pytest.raises(ConfigError) as caught:
        planner.budget(str(path), sensitivity=False)
    assert caught.value.hint is not None and fix in caught.value.hint


def test_a_hardware_nan_gets_a_fix(tmp_path: Path) -> None:
    path = _edited(HARDWARE, tmp_path, "capex_usd: 310000 ", "capex_usd: .nan ", "h.yaml")
    assert_clean_error(
        invoke("tco", "--hardware", str(path), "--no-cloud"), "h.yaml", "capex_usd", "real number"
    )


# --- a number typed with another unit than the key's gets the number in the key's unit ------------

SERVICE = ROOT / "scenarios" / "workloads" / "llm-serving-7b.yaml"


@pytest.mark.parametrize(
    ("source", "old", "new", "key", "fix"),
    [
        # was: "write 18 alone: the key's name says its unit" (18 years)
        (
            HARDWARE,
            "lifetime_years: 4",
            "lifetime_years: 18 months",
            "lifetime_years",
            "write 1.5: the key's name says its unit (lifetime_years is in years",
        ),
        # was: "write 8000 alone" (8 MW)
        (
            HARDWARE,
            "power_kw_avg: 8.0 ",
            "power_kw_avg: 8000W ",
            "power_kw_avg",
            "write 8: the key's name says its unit (power_kw_avg is in kW",
        ),
        # was: "write 7.2e+08: a file takes plain numbers, not K, M, B or T suffixes"
        (
            HARDWARE,
            "hours_available_per_day: 24",
            "hours_available_per_day: 720m",
            "hours_available_per_day",
            "write 12: the key's name says its unit (hours_available_per_day is in hours",
        ),
        # was: "write 30 alone" (30 hours of a month's service)
        (
            SERVICE,
            "hours: 730 ",
            "hours: 30d ",
            "inference.hours",
            "write 720: the key's name says its unit (hours is in hours",
        ),
        # was: "write 1 alone" (1 ms for a second)
        (
            SERVICE,
            "hours: 730 ",
            "hours: 730\n  slo: {ttft_ms_p95: 1s}\n",
            "inference.slo.ttft_ms_p95",
            "write 1000: the key's name says its unit (ttft_ms_p95 is in milliseconds",
        ),
    ],
    ids=["months-as-years", "watts-as-kw", "minutes-as-hours", "days-as-hours", "seconds-as-ms"],
)
def test_a_number_in_another_unit_gets_the_keys_unit(
    tmp_path: Path, source: Path, old: str, new: str, key: str, fix: str
) -> None:
    path = _edited(source, tmp_path, old, new, "f.yaml")
    if source == HARDWARE:
        args: tuple[str, ...] = ("tco", "--hardware", str(path), "--no-cloud")
    else:
        args = ("quote", "-w", str(path))
    assert_clean_error(invoke(*args), "f.yaml", key, fix)


def test_a_number_in_the_keys_own_unit_keeps_its_number(tmp_path: Path) -> None:
    path = _edited(HARDWARE, tmp_path, "power_kw_avg: 8.0 ", "power_kw_avg: 8kW ", "f.yaml")
    result = invoke("tco", "--hardware", str(path), "--no-cloud")
    assert_clean_error(
        result,
        "power_kw_avg",
        "write 8 alone: the key's name says its unit (power_kw_avg is in kW)",
    )


def test_a_number_in_another_unit_in_the_library(tmp_path: Path) -> None:
    path = _edited(HARDWARE, tmp_path, "lifetime_years: 4", "lifetime_years: 18 months", "f.yaml")
    with pytest.raises(ConfigError) as caught:
        planner.load_hardware(str(path))
    assert caught.value.key_path == "lifetime_years"
    assert caught.value.hint is not None and "write 1.5" in caught.value.hint


@pytest.mark.parametrize(
    ("typed", "fix"),
    [
        ("3.2Tbps", "write 3200"),  # was: "write the number alone: 3.2"
        ("50GB/s", "write 400"),  # bytes, not bits: was "write the number alone: 50"
        ("400Gbps", "write the number alone: 400"),
    ],
)
def test_network_gbps_in_another_unit_gets_gbits(typed: str, fix: str) -> None:
    result = invoke("estimate", "gpt2-xl-finetune", "--gpu", "H100", "--network-gbps", typed)
    assert_clean_error(result, "--network-gbps", fix)


# --- a choice in another case ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        # was: "'JSON' is not one of 'table', 'json', ..." where --provider AWS and --gpu h100 pass
        ("offers", "--limit", "1", "--format", "JSON"),
        ("offers", "--limit", "1", "--interconnect", "NVLink", "--format", "json"),
        (
            "estimate",
            *("--model", "gpt2", "--tokens", "1M", "--gpu", "H100"),
            *("--method", "LoRA", "--format", "Json"),
        ),
    ],
    ids=["format", "interconnect", "method"],
)
def test_a_choice_in_another_case_is_read(args: tuple[str, ...]) -> None:
    import json

    result = invoke(*args)
    assert result.exit_code == 0, result.output
    json.loads(result.stdout)


# --- a latency in another unit ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "needles"),
    [
        # was: "cannot read latency '5min'" and the list of forms
        ("5min", ("cannot read latency '5min'", "write 300s")),
        ("1h", ("write 3600s",)),
        # was: "cannot read latency '0ms'": it was read, and is no target
        ("0ms", ("cannot read latency '0ms': it is not above 0", "above 0")),
    ],
    ids=["minutes", "hours", "zero"],
)
def test_a_latency_in_another_unit_gets_its_seconds(typed: str, needles: tuple[str, ...]) -> None:
    result = invoke("quote", "-w", "llm-serving-7b", "--p95-ttft", typed)
    assert_clean_error(result, "--p95-ttft", *needles)


# --- a price list's numbers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "column", "fix"),
    [
        # was: "not a number ('８')" and no hint
        ({"gpu_count": "８"}, "gpu_count", "write 8: digits in ASCII 0-9"),
        ({"price_on_demand_usd_per_hour": "３２.5"}, "price_on_demand_usd_per_hour", "write 32.5"),
        # was: "must be a whole number" alone
        ({"gpu_count": 1.5}, "gpu_count", "whole number of GPUs"),
    ],
    ids=["count-full-width", "price-full-width", "count-fraction"],
)
def test_a_price_list_number_gets_a_fix(
    tmp_path: Path, overrides: dict[str, object], column: str, fix: str
) -> None:
    import pandas as pd

    path = tmp_path / "prices.csv"
    pd.DataFrame([offer_row(**overrides)]).to_csv(path, index=False)
    result = invoke("offers", "--offers", str(path))
    assert_clean_error(result, "prices.csv", "row 2", f"column '{column}'", "hint:", fix)
    with pytest.raises(OfferValidationError) as caught:
        planner.offers(offers_files=[str(path)])
    assert caught.value.hint is not None and fix in caught.value.hint


# --- names in another case ----------------------------------------------------------------------------


def test_a_bundled_name_in_another_case_is_read() -> None:
    """was: "unknown workload 'GPT2-XL-FINETUNE'" (did you mean gpt2-xl-finetune?), where GPU,
    model and provider names are read in any case."""
    result = invoke("estimate", "GPT2-XL-Finetune", "--gpu", "h100", "--format", "json")
    assert result.exit_code == 0, result.output
    assert '"workload": "gpt2-xl-finetune"' in result.stdout
    result = invoke("tco", "--hardware", "8XH100-HGX", "--no-cloud")
    assert result.exit_code == 0, result.output
    assert planner.load_workload("GPT2-XL-FINETUNE").name == "gpt2-xl-finetune"
    assert planner.load_hardware("8XH100-HGX").name == "8xh100-hgx"


def test_a_misspelt_bundled_name_is_still_refused() -> None:
    assert_clean_error(
        invoke("estimate", "GPT2-XL-FINETUN", "--gpu", "H100"),
        "unknown workload",
        "did you mean gpt2-xl-finetune",
    )


@pytest.mark.parametrize(
    ("fmt", "starts"), [("HTML", "<!DOCTYPE html>"), ("Markdown", "# "), ("CSV", "")]
)
def test_a_report_format_in_another_case_is_read(fmt: str, starts: str) -> None:
    """was: ConfigError "unknown report format 'HTML'", where --format HTML is read."""
    tco = planner.tco("8xh100-hgx", with_cloud=False)
    assert planner.report(tco, fmt=fmt).startswith(starts)


def test_a_report_format_named_by_its_extension_gets_the_format() -> None:
    tco = planner.tco("8xh100-hgx", with_cloud=False)
    with pytest.raises(ConfigError, match="unknown report format 'md'") as caught:
        planner.report(tco, fmt="md")
    assert caught.value.hint is not None and "did you mean markdown" in caught.value.hint


# --- numbers a file writes in another form -----------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "key", "fix"),
    [
        # was: "expected a whole number, got 8.5" and no hint
        (
            "gpus_per_machine: 8",
            "gpus_per_machine: 8.5",
            "gpus_per_machine",
            "whole number: 8 or 9",
        ),
        # was: "write a plain number, e.g. 1.5e9" for a count of machines
        ("machines: 1", "machines: one", "machines", "machines takes a whole number"),
        # was: "write a plain number, e.g. 1.5e9"
        ("staff_fte: 0.0133", "staff_fte: 1/75", "staff_fte", "write 0.01333"),
    ],
    ids=["fraction-of-a-gpu", "number-word", "division"],
)
def test_a_number_written_another_way_gets_its_digits(
    tmp_path: Path, old: str, new: str, key: str, fix: str
) -> None:
    path = _edited(HARDWARE, tmp_path, old, new, "h.yaml")
    result = invoke("tco", "--hardware", str(path), "--no-cloud")
    assert_clean_error(result, "h.yaml", key, fix)
    assert "1.5e9" not in result.stderr
    with pytest.raises(ConfigError) as caught:
        planner.load_hardware(str(path))
    assert caught.value.key_path == key


# --- a deadline meant as a date in a form that is not read -------------------------------------------


@pytest.mark.parametrize(
    ("typed", "fix"),
    [
        # each was "cannot read deadline" and the list of forms alone
        ("2026-02-30", "2026-02 has 28 days"),
        ("2027-13-01", "no month 13"),
        ("26/12/2026", "2026-12-26 (day first)"),
        ("05.06.2027", "2027-06-05 (day first) or 2027-05-06 (month first)"),
        ("tomorrow", "or a duration such as 24h"),
        ("next week", "write 1w"),
    ],
    ids=["no-such-day", "month-13", "slashes", "dots-either-way", "tomorrow", "next-week"],
)
def test_a_deadline_date_not_read_gets_its_iso_form(typed: str, fix: str) -> None:
    result = invoke("quote", "-w", "gpt2-xl-finetune", "--deadline", typed)
    assert_clean_error(result, "--deadline", f"cannot read deadline {typed!r}", fix)


# --- absurd amounts and shares are shown in words a person reads ---------------------------------------


def test_an_absurd_machine_budget_is_shown_short() -> None:
    """was: the 1e300 USD budget written out in 301 digits."""
    result = invoke("build", "-w", "gpt2-finetune", "--budget", "1e300")
    assert_clean_error(result, "--budget", "got 1e+300 USD", "give what the machine may cost")
    assert len(result.stderr) < 400


def test_a_tiny_confidence_gets_no_tinier_suggestion() -> None:
    """was: "did you mean 1e-298?" for --confidence 1e-300."""
    result = invoke(
        "quote", "-w", "gpt2-xl-finetune", "--deadline", "24h", "--confidence", "1e-300"
    )
    assert_clean_error(result, "--confidence", "Write percentages from 0 to below 100")
    assert "did you mean" not in result.stderr


# --- names typed with lookalike characters ----------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "option", "meant", "odd"),
    [
        # a Cyrillic Н: was "did you mean V100 or P100 or H100?", the GPU meant last
        (("estimate", "gpt2-xl-finetune", "--gpu", "Н100"), "--gpu", "did you mean H100 or", "Н"),
        # a full-width Ｈ
        (("estimate", "gpt2-xl-finetune", "--gpu", "Ｈ100"), "--gpu", "did you mean H100 or", "Ｈ"),
        # a Cyrillic а: was "did you mean aws?" with no word on why the name was unknown
        (
            ("quote", "-w", "gpt2-xl-finetune", "--deadline", "24h", "--provider", "аws"),
            "--provider",
            "did you mean aws?",
            "а",
        ),
        # hyphens (U+2010) a word processor puts in
        (
            ("quote", "-w", "gpt2-xl-finetune", "--deadline", "24h", "--region", "us‐east‐1"),
            "--region",
            "did you mean us-east-1",
            "‐",
        ),
    ],
    ids=["cyrillic-gpu", "full-width-gpu", "cyrillic-provider", "dash-region"],
)
def test_a_name_with_lookalike_characters_names_them(
    args: tuple[str, ...], option: str, meant: str, odd: str
) -> None:
    result = invoke(*args)
    assert_clean_error(result, option, meant, f"'{odd}' is not ASCII")


def test_a_name_with_lookalike_characters_in_the_library() -> None:
    from planner.errors import UnknownNameError

    with pytest.raises(UnknownNameError) as caught:
        load_gpu_catalog().resolve("Н100")
    assert caught.value.suggestions[0] == "H100"
    assert caught.value.hint is not None and "'Н' is not ASCII" in caught.value.hint


# --- library numbers given as text --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "key", "fix"),
    [
        # was: "expected a number, got '0.8'" and no hint
        ({"utilization": "0.8"}, "utilization", "give a number, not str: e.g. utilization=0.6"),
        ({"years": float("nan")}, "years", "e.g. years=3"),
        # was: "years must be in (0, 30], got 0" and no hint
        ({"years": 0}, "years", "the horizon in years"),
    ],
    ids=["utilization-text", "years-nan", "years-zero"],
)
def test_tco_numbers_get_a_fix(kwargs: dict[str, object], key: str, fix: str) -> None:
    with pytest.raises(ConfigError) as caught:
        planner.tco("8xh100-hgx", with_cloud=False, **kwargs)
    assert caught.value.key_path == key
    assert caught.value.hint is not None and fix in caught.value.hint


def test_tco_years_zero_on_the_command_line_gets_a_fix() -> None:
    result = invoke("tco", "--hardware", "8xh100-hgx", "--years", "0", "--no-cloud")
    assert_clean_error(result, "--years", "must be in (0, 30]", "the horizon in years")


def test_an_offer_filter_number_given_as_text_gets_a_fix() -> None:
    with pytest.raises(ConfigError) as caught:
        planner.offers(planner.OfferFilter(min_gpu_count="8"))
    assert caught.value.key_path == "min_gpu_count"
    assert caught.value.hint is not None and "e.g. min_gpu_count=8" in caught.value.hint


def test_a_one_gpu_machine_with_a_gpu_link_is_refused(tmp_path: Path) -> None:
    """was: exit 0, "1 x 1 x H100 (nvswitch)": a link between GPUs on a machine of one GPU."""
    path = _edited(HARDWARE, tmp_path, "gpus_per_machine: 8", "gpus_per_machine: 1", "one.yaml")
    result = invoke("tco", "--hardware", str(path), "--no-cloud")
    assert_clean_error(result, "one.yaml", "interconnect", "no other GPU", "interconnect: none")
    with pytest.raises(ConfigError, match="no other GPU") as caught:
        planner.load_hardware(str(path))
    assert caught.value.key_path == "interconnect"


@pytest.mark.parametrize(
    ("typed", "needles"),
    [
        # was: "unknown workload 'gpt2-finetune:4'" (did you mean gpt2-finetune?)
        ("gpt2-finetune:4:5", ("one colon goes between the name and the runs", "NAME:RUNS")),
        # was: "cannot read runs per month '0'": it was read, and is not more than 0
        ("gpt2-finetune:0", ("runs per month must be more than 0, got '0'", "NAME:RUNS")),
    ],
    ids=["two-colons", "zero-runs"],
)
def test_build_workload_runs_get_a_fix(typed: str, needles: tuple[str, ...]) -> None:
    assert_clean_error(invoke("build", "-w", typed), "--workload", *needles)


def test_price_history_reads_an_instance_type_and_region_in_another_case() -> None:
    """was: "unknown instance type 'P5.48XLARGE'" (did you mean p5.48xlarge?)."""
    result = invoke(
        "prices",
        "history",
        "--instance",
        "P5.48XLARGE",
        "--region",
        "US-EAST-1",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    import json

    rows = json.loads(result.stdout)
    assert rows and {r["region"] for r in rows} == {"us-east-1"}
    assert planner.prices_history("P5.48XLARGE")


# --- a comma-separated list where an option takes one value each time ------------------------------


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        # was: "did you mean aws?" (or gcp), one of the two names meant
        (
            ("quote", "-w", "gpt2-xl-finetune", "--deadline", "24h", "--provider", "aws,gcp"),
            ("unknown provider 'aws,gcp'", "did you mean aws and gcp?", "once per name"),
        ),
        # was: "did you mean H100 or A10?"
        (("offers", "--gpu", "H100,A100"), ("--gpu", "did you mean H100 and A100?")),
        (
            ("build", "-w", "gpt2-finetune,bert-base-finetune"),
            ("--workload", "did you mean gpt2-finetune and bert-base-finetune?"),
        ),
        # was: "cannot read discount" and the one-pair form
        (
            (
                "quote",
                "-w",
                "gpt2-xl-finetune",
                "--deadline",
                "24h",
                "--discount",
                "aws=0.1,gcp=0.2",
            ),
            ("cannot read discount", "repeat the option: --discount aws=0.1 --discount gcp=0.2"),
        ),
        (
            ("quote", "-w", "gpt2-xl-finetune", "--deadline", "24h", "--quota", "aws=4,gcp=2"),
            ("cannot read quota", "--quota aws=4 --quota gcp=2"),
        ),
    ],
    ids=["providers", "gpus", "workloads", "discounts", "quotas"],
)
def test_a_comma_list_gets_each_name_once(args: tuple[str, ...], needles: tuple[str, ...]) -> None:
    assert_clean_error(invoke(*args), *needles)


def test_a_comma_list_in_the_library() -> None:
    from planner.errors import UnknownNameError

    with pytest.raises(UnknownNameError) as caught:
        planner.quote(workload="gpt2-xl-finetune", deadline_hours=24, providers=("aws,gcp",))
    assert caught.value.hint is not None and "('aws', 'gcp')" in caught.value.hint


def test_a_decimal_comma_in_a_discount_is_no_list() -> None:
    result = invoke(
        "quote", "-w", "gpt2-xl-finetune", "--deadline", "24h", "--discount", "aws=0,12"
    )
    assert_clean_error(result, "--discount", "cannot read discount", "aws=0.12")
    assert "repeat the option" not in result.stderr


@pytest.mark.parametrize(
    ("source", "old", "new", "key", "fix"),
    [
        # was: "write 5 alone: the key's name says its unit" (5 tokens/s for 5,000)
        (
            SERVICE,
            "tokens_per_s: 5000 ",
            "tokens_per_s: 5k/s ",
            "inference.tokens_per_s",
            "write 5000",
        ),
        # was: "write 3000 alone" (3,000 GB/s for 3)
        (
            WORKLOAD,
            "method: full",
            "method: full\n  offload: nvme\n  nvme_read_gb_per_s: 3000MB/s",
            "training.nvme_read_gb_per_s",
            "write 3: the key's name says its unit (nvme_read_gb_per_s is in GB/s",
        ),
    ],
    ids=["thousands-a-second", "megabytes-a-second"],
)
def test_a_rate_in_another_unit_gets_the_keys_rate(
    tmp_path: Path, source: Path, old: str, new: str, key: str, fix: str
) -> None:
    path = _edited(source, tmp_path, old, new, "f.yaml")
    args = (
        ("quote", "-w", str(path))
        if source == SERVICE
        else ("estimate", str(path), "--gpu", "H100")
    )
    assert_clean_error(invoke(*args), "f.yaml", key, fix)


# --- a whole-number option typed another way -----------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "option", "fix"),
    [
        # each was click's "'8x' is not a valid integer range." and no fix
        (("estimate", "gpt2-xl-finetune", "--gpu", "H100", "--count", "8x"), "--count", "alone: 8"),
        (("estimate", "gpt2-xl-finetune", "--gpu", "H100", "--count", "8.0"), "--count", "write 8"),
        (("estimate", "gpt2-xl-finetune", "--gpu", "H100", "--count", "1e3"), "--count", "1000"),
        (
            ("estimate", "gpt2-xl-finetune", "--gpu", "H100", "--count", "2.5"),
            "--count",
            "2 or 3",
        ),
        (
            (
                "quote",
                "--model",
                "mistral-7b",
                "--tokens",
                "1M",
                "--seq-len",
                "4k",
                "--deadline",
                "24h",
            ),
            "--seq-len",
            "write 4096",
        ),
        (("offers", "--limit", "50k"), "--limit", "write 50000"),
        (
            ("quote", "-w", "gpt2-xl-finetune", "--deadline", "24h", "--top", "five"),
            "--top",
            "in digits: 5",
        ),
    ],
    ids=["suffix", "point-zero", "exponent", "fraction", "seq-len-k", "thousands", "word"],
)
def test_a_whole_number_typed_another_way_gets_its_digits(
    args: tuple[str, ...], option: str, fix: str
) -> None:
    result = invoke(*args)
    assert_clean_error(result, option, "is not a valid integer", fix)
    assert "integer range" not in result.stderr


def test_full_width_digits_in_an_environment_variable_are_refused() -> None:
    """was: PLANNER_MAX_PRICE_AGE_DAYS=９０ read as 90 days, where the same ９０ in a file is refused."""
    result = invoke("offers", "--limit", "1", env={"PLANNER_MAX_PRICE_AGE_DAYS": "９０"})
    assert_clean_error(result, "PLANNER_MAX_PRICE_AGE_DAYS", "'９０'", "set it to one")


@pytest.mark.parametrize(
    ("old", "new", "key", "fix"),
    [
        # was: "must be at most 1000, got 8000" and no hint
        ("power_kw_avg: 8.0 ", "power_kw_avg: 8000 ", "power_kw_avg", "if 8000 is watts, write 8"),
        ("lifetime_years: 4", "lifetime_years: 48", "lifetime_years", "if 48 is months, write 4"),
    ],
    ids=["watts", "months"],
)
def test_a_number_past_the_top_in_a_smaller_unit_gets_it_converted(
    tmp_path: Path, old: str, new: str, key: str, fix: str
) -> None:
    path = _edited(HARDWARE, tmp_path, old, new, "h.yaml")
    result = invoke("tco", "--hardware", str(path), "--no-cloud")
    assert_clean_error(result, "h.yaml", f"{key}: must be at most", fix)


# --- money with its digits grouped the European way ------------------------------------------------


def test_money_with_a_dot_between_thousands_names_both_readings(tmp_path: Path) -> None:
    """was: "write 310.000 EUR", which reads as 310 EUR."""
    path = _edited(HARDWARE, tmp_path, "capex_usd: 310000 ", 'capex: "€310.000" ', "h.yaml")
    result = invoke("tco", "--hardware", str(path), "--no-cloud")
    assert_clean_error(result, "h.yaml", "capex", "a dot is a decimal point", "write 310000 EUR")


def test_money_with_spaces_between_thousands_gets_the_digits_joined(tmp_path: Path) -> None:
    """was: "cannot read '310 000 EUR'" and the example 80000 CNY."""
    path = _edited(HARDWARE, tmp_path, "capex_usd: 310000 ", 'capex: "310 000 EUR" ', "h.yaml")
    result = invoke("tco", "--hardware", str(path), "--no-cloud")
    assert_clean_error(result, "h.yaml", "capex", "grouped by spaces", "write 310000 EUR")
    with pytest.raises(ConfigError, match="grouped by spaces"):
        planner.load_hardware(str(path))


@pytest.mark.parametrize(
    ("old", "new", "meant", "odd"),
    [
        # a Cyrillic о in a key: was "did you mean 'model'?" with no word on why
        ("model: gpt2-xl ", "mоdel: gpt2-xl ", "did you mean 'model'?", "о"),
        # a Ukrainian і in a value
        ("kind: finetune", "kind: fіnetune", "did you mean 'finetune'?", "і"),
    ],
    ids=["key", "value"],
)
def test_a_file_word_with_lookalike_characters_names_them(
    tmp_path: Path, old: str, new: str, meant: str, odd: str
) -> None:
    path = _edited(WORKLOAD, tmp_path, old, new, "w.yaml")
    result = invoke("estimate", str(path), "--gpu", "H100")
    assert_clean_error(result, "w.yaml", meant, f"'{odd}' is not ASCII")


# --- review of sweep 8 -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "fix"),
    [("400Gb/s", "write the number alone: 400"), ("400 Gb/s", "400"), ("50GB/s", "write 400")],
)
def test_a_link_speed_in_bits_is_not_read_as_bytes(typed: str, fix: str) -> None:
    """review: 400Gb/s (bits) was told "write 3200", GB/s's factor of 8 (lower-cased alike)."""
    result = invoke(
        "estimate", "gpt2-xl-finetune", "--gpu", "H100", "--count", "16", "--network-gbps", typed
    )
    assert_clean_error(result, "--network-gbps", fix)
    assert "3200" not in result.output


def test_gpu_hours_with_m_is_a_million_not_minutes(tmp_path: Path) -> None:
    """review: gpu_hours 1.5M was told "write 0.025" (minutes), a GPU-hour count is no duration."""
    budget = _edited(BUDGET, tmp_path, "gpu_hours: 40000", "gpu_hours: 1.5M", "b.yaml")
    result = invoke("budget", str(budget))
    assert_clean_error(result, "gpu_hours", "write 1.5e+06")
    assert "0.025" not in result.output


@pytest.mark.parametrize(
    ("args", "fix"),
    [
        (("offers", "--gpu", "H100", "--limit", ".5"), "write 1"),
        (("offers", "--gpu", "H100", "--limit", "1e-400"), "at least 1"),
        (("build", "-w", "gpt2-finetune", "--gpus", "9x"), "from 1 to 8"),
    ],
)
def test_a_whole_number_fix_stays_inside_the_options_range(args: tuple[str, ...], fix: str) -> None:
    """review: --limit .5 was told "0 or 1", --gpus 9x "write 9", past the option's range."""
    result = invoke(*args)
    assert_clean_error(result, fix)
    assert "0 or 1" not in result.output and "write 9" not in result.output


def test_a_list_given_to_a_one_name_option_is_told_to_pick_one() -> None:
    """review: --gpu H100,A100 on estimate (one GPU) was told only to give --gpu once per name,
    which its next run refuses as given twice."""
    result = invoke("estimate", "gpt2-finetune", "--gpu", "H100,A100")
    assert_clean_error(result, "did you mean H100 and A100", "pick one")


@pytest.mark.parametrize(
    ("typed", "fix"), [("1.6T", "write 1600"), ("800M", "write 0.8"), ("800Mbps", "write 0.8")]
)
def test_a_link_speed_with_a_prefix_letter_is_read_in_the_options_unit(
    typed: str, fix: str
) -> None:
    """review: 1.6T was told "write 1.6" (a thousandth), 800M "write 8e+08" (a million bits/s
    read as Gbit/s)."""
    result = invoke(
        "estimate", "gpt2-xl-finetune", "--gpu", "H100", "--count", "16", "--network-gbps", typed
    )
    assert_clean_error(result, "--network-gbps", fix, "Gbit/s")


def test_a_lifetime_in_m_is_months(tmp_path: Path) -> None:
    """review: lifetime_years: 18m was told "write 1.8e+07" (m read as million)."""
    hardware = _edited(HARDWARE, tmp_path, "lifetime_years: ", "lifetime_years: 18m #", "h.yaml")
    result = invoke("tco", "--hardware", str(hardware))
    assert_clean_error(result, "lifetime_years", "write 1.5")
