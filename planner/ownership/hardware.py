"""Owned hardware files: one kind of owned machine, validated and converted to USD on load.

A hardware file (``scenarios/hardware/*.yaml``) describes one kind of owned machine: its GPUs,
what it cost, what it draws and what it costs to keep running.  It is validated with pydantic;
every problem is raised as :class:`~planner.errors.ConfigError` naming the file, the key path and a
fix ("did you mean" for misspelt keys, GPUs and currencies).  All money is converted to USD on load
(``capex: 80000 CNY`` is accepted), using the bundled rate table of :mod:`planner.config.currency`.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ConfigDict, Field, ValidationError

from planner.config.currency import USD, FxTable, load_fx_rates, parse_money, split_money
from planner.config.scenarios import check_file_kind, read_mapping, resolve_scenario
from planner.config.validation import NumbersNotBools, config_error
from planner.errors import ConfigError, checked_arguments, checked_fields, is_number
from planner.gpu_specs import GpuCatalog, load_gpu_catalog
from planner.schema import MAX_PCIE_GPUS_PER_NODE, Fabric, Interconnect
from planner.units import MAX_LIFETIME_YEARS, MAX_USD, MIN_LIFETIME_YEARS, MIN_UTILIZATION

# Share of its load draw a GPU server draws switched on but idle, when the file gives no
# ``power_kw_idle``.  Servers are far from energy-proportional: SPECpower_ssj2008 results put a
# recent server's idle draw at roughly a quarter to a third of its full-load draw (Barroso, Hoelzle
# and Ranganathan, "The Datacenter as a Computer", 3rd ed. 2018, s5.3 on energy proportionality),
# and a GPU server's host (CPUs, memory, fans, NICs) keeps drawing while its GPUs idle at ~10-15%
# of their TDP (an idle H100 SXM reports ~70-100 W of its 700 W in nvidia-smi).  0.3 is the upper
# end of that range: the cautious figure for a cost.
IDLE_POWER_FRACTION = 0.3

log = logging.getLogger(__name__)


@checked_fields
@dataclass(frozen=True)
class HardwareSpec:
    """One kind of owned machine, money in USD.  Per-machine unless the name says otherwise."""

    name: str
    gpu: str  # canonical name (planner.gpu_specs)
    gpus_per_machine: int
    machines: int
    interconnect: Interconnect
    capex_usd: float  # per machine, all-in (server, GPUs, network share, installation)
    lifetime_years: float  # straight-line depreciation period
    power_kw_avg: float  # per machine, draw while working (under load)
    electricity_usd_per_kwh: float
    fabric: Fabric = Fabric.ETHERNET
    hours_available_per_day: float = 24.0
    resale_fraction: float = 0.0  # of capex, at the end of the lifetime
    power_kw_max: float = 0.0  # per machine; colocation is charged on it (0 -> power_kw_avg)
    power_kw_idle: float | None = (
        None  # per machine, switched on but idle (None: the default share)
    )
    pue: float = 1.0
    colocation_usd_per_kw_month: float = 0.0
    rack_usd_per_month: float = 0.0  # per machine: its share of rack rent
    support_fraction_per_year: float = 0.0  # of capex
    staff_fte: float = 0.0  # per machine
    staff_usd_per_year: float = 0.0  # cost of one FTE
    financing_rate_per_year: float = 0.0
    source: str = ""

    @property
    def idle_power_kw(self) -> float:
        """Draw of one machine switched on but idle: ``power_kw_idle``, else
        :data:`IDLE_POWER_FRACTION` of the load draw."""
        if self.power_kw_idle is not None:
            return self.power_kw_idle
        return IDLE_POWER_FRACTION * self.power_kw_avg

    def power_kw_at(self, utilization: float) -> float:
        """Average draw of one machine over its available hours when ``utilization`` of them do
        work (0 to 1): load draw while working, idle draw the rest of the time."""
        check_utilization(utilization, idle_allowed=True)
        return utilization * self.power_kw_avg + (1.0 - utilization) * self.idle_power_kw

    @property
    def gpus(self) -> int:
        return self.gpus_per_machine * self.machines

    @property
    def hours_per_year(self) -> float:
        """Hours each machine is available in a year."""
        return self.hours_available_per_day * 365.0

    @property
    def gpu_hours_per_year(self) -> float:
        """GPU-hours the whole fleet can deliver in a year at 100% use."""
        return self.gpus * self.hours_per_year

    def to_record(self) -> dict[str, Any]:
        return {
            k: (v.value if isinstance(v, (Interconnect, Fabric)) else v)
            for k, v in self.__dict__.items()
        }


# Physical bounds per machine, each well past the largest real one (a bigger value is a unit slip
# such as watts typed as kW, or a fleet total typed per machine):
# - 72 GPUs: an NVL72 rack (GB200/GB300), the largest single NVLink machine sold;
# - 100,000 machines: the largest published GPU clusters have ~100,000-200,000 GPUs;
# - 1,000 kW: an NVL72 rack draws ~120-140 kW at most;
# - 5 USD/kWh: the dearest retail electricity in Europe peaked near 0.8 USD/kWh (2022);
# - 5,000 USD per kW-month: wholesale colocation costs ~150-300;
# - 10 staff per machine: a typical fleet needs one FTE per 50-100 servers.
MAX_GPUS_PER_MACHINE = 72
MAX_MACHINES = 100_000
MAX_POWER_KW = 1_000.0
MAX_ELECTRICITY_USD_PER_KWH = 5.0
MAX_COLOCATION_USD_PER_KW_MONTH = 5_000.0
MAX_STAFF_FTE = 10.0
# A machine's draw against its GPUs' rated power (gpus.yaml tdp_w): a DGX H100's 8 x 700 W GPUs
# sit in a 10.2 kW system, a DGX B200's 8 x 1,000 W in 14.3 kW, an NVL72 rack's 72 GPUs in ~120-140
# kW; a workstation of one RTX 4090 (450 W) draws ~0.6-1 kW.  At most twice the GPUs' rating and
# 2 kW of host; at least 30% of the GPUs' rating (a GPU training draws 50-100% of its TDP, or
# less under a deliberate power cap).  Outside them is a unit slip (watts typed as kW) or another
# machine's figure.
MAX_MACHINE_POWER_PER_GPU_POWER = 2.0
MAX_HOST_POWER_KW = 2.0
MIN_POWER_PER_GPU_POWER = 0.3
# A machine lent for under an hour a day runs no training job worth planning: 0.0001 h a day
# priced 20,548 USD a GPU-hour and a 445,861-hour run
MIN_HOURS_AVAILABLE_PER_DAY = 1.0

# Most each amount may be, in USD, whichever key gives it (``electricity_per_kwh: "9 EUR"`` is
# held to the same bound as ``electricity_usd_per_kwh``):
# - capex 1e9 per machine: an NVL72 rack, the dearest single machine sold, lists at ~3-4M USD;
# - rack rent 1e6 a month: a whole colocation cage costs ~10-100k USD a month;
# - 1e7 per FTE-year: the dearest ML engineers cost ~1-2M USD a year; more is a team's total.
MAX_CAPEX_USD = 1e9
MAX_RACK_USD_PER_MONTH = 1e6
MAX_STAFF_USD_PER_YEAR = 1e7
_MAX_AMOUNT_USD = {
    "capex_usd": MAX_CAPEX_USD,
    "electricity_usd_per_kwh": MAX_ELECTRICITY_USD_PER_KWH,
    "colocation_usd_per_kw_month": MAX_COLOCATION_USD_PER_KW_MONTH,
    "rack_usd_per_month": MAX_RACK_USD_PER_MONTH,
    "staff_usd_per_year": MAX_STAFF_USD_PER_YEAR,
}


def check_utilization(utilization: object, *, idle_allowed: bool = False) -> None:
    """A ConfigError on ``utilization`` unless it is a share of the available GPU-hours doing work:
    a finite number in (0, 1] (from 0 where ``idle_allowed``), a percentage (60) named as one, and
    not below :data:`~planner.units.MIN_UTILIZATION` (1e-300 printed a 300-digit cost per useful
    GPU-hour).  ``tco(utilization=...)`` and the methods that take another utilization of its
    result and of a hardware file share it (were: 60 read as 60x, -1 a negative draw, 0 a
    ZeroDivisionError)."""
    if utilization is None or not is_number(utilization):
        raise ConfigError(
            f"expected a number, got {utilization!r}",
            key_path="utilization",
            hint="give the share of available GPU-hours doing useful work as a number, e.g. 0.6",
        )
    value = float(utilization)  # type: ignore[arg-type]
    if not math.isfinite(value):
        raise ConfigError(
            f"expected a finite number, got {utilization!r}",
            key_path="utilization",
            hint="the share of available GPU-hours doing useful work, e.g. 0.6",
        )
    lowest = 0.0 if idle_allowed else MIN_UTILIZATION
    if not (lowest <= value <= 1 if idle_allowed else 0 < value <= 1):
        # the range the next check holds too (was "(0, 1]", then 1e-6 refused with [0.01, 1])
        shown = "[0, 1]" if idle_allowed else f"[{MIN_UTILIZATION:g}, 1]"
        raise ConfigError(
            f"utilization must be in {shown}, got {value!r}",
            key_path="utilization",
            hint=(
                # 80: a percentage; was "e.g. 0.6" alone
                f"did you mean {value / 100:g}? utilization is a fraction "
                f"({value:g}% is {value / 100:g}), the share of available "
                "GPU-hours doing useful work, e.g. 0.6"
                if 5 <= value <= 100
                else "give the share of available GPU-hours doing useful work, e.g. 0.6"
            ),
        )
    if value < lowest:
        raise ConfigError(
            f"utilization {value:g} is below 1%: it must be in [{MIN_UTILIZATION:g}, 1]",
            key_path="utilization",
            hint="give the share of available GPU-hours doing useful work, e.g. 0.6 "
            "(a fraction: 0.6, not 0.006)",
        )


class _HardwareFile(NumbersNotBools):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str | None = None
    description: str = ""
    source: str | list[str] = ""
    currency: str = USD  # for untagged amounts under the currency-neutral keys (capex, ...)
    gpu: str
    gpus_per_machine: int = Field(ge=1, le=MAX_GPUS_PER_MACHINE)
    machines: int = Field(default=1, ge=1, le=MAX_MACHINES)
    interconnect: Interconnect | None = None
    fabric: Fabric = Fabric.ETHERNET
    hours_available_per_day: float = Field(default=24.0, ge=MIN_HOURS_AVAILABLE_PER_DAY, le=24)
    capex_usd: float | None = Field(default=None, ge=0)
    capex: float | str | None = None
    lifetime_years: float = Field(gt=0, le=MAX_LIFETIME_YEARS)
    resale_fraction: float = Field(default=0.0, ge=0, le=1)
    power_kw_avg: float = Field(ge=0, le=MAX_POWER_KW)
    power_kw_max: float | None = Field(default=None, ge=0, le=MAX_POWER_KW)
    power_kw_idle: float | None = Field(default=None, ge=0, le=MAX_POWER_KW)
    pue: float = Field(default=1.0, ge=1.0, le=3.0)
    electricity_usd_per_kwh: float | None = Field(
        default=None, ge=0, le=MAX_ELECTRICITY_USD_PER_KWH
    )
    electricity_per_kwh: float | str | None = None
    colocation_usd_per_kw_month: float | None = Field(
        default=None, ge=0, le=MAX_COLOCATION_USD_PER_KW_MONTH
    )
    colocation_per_kw_month: float | str | None = None
    rack_usd_per_month: float | None = Field(default=None, ge=0)
    rack_per_month: float | str | None = None
    support_fraction_per_year: float = Field(default=0.0, ge=0, le=1)
    staff_fte: float = Field(default=0.0, ge=0, le=MAX_STAFF_FTE)
    staff_usd_per_year: float | None = Field(default=None, ge=0)
    staff_per_year: float | str | None = None
    financing_rate_per_year: float = Field(default=0.0, ge=0, le=1)


# (USD-named key, currency-neutral key that accepts "80000 CNY", required)
_MONEY_KEYS = (
    ("capex_usd", "capex", True),
    ("electricity_usd_per_kwh", "electricity_per_kwh", True),
    ("colocation_usd_per_kw_month", "colocation_per_kw_month", False),
    ("rack_usd_per_month", "rack_per_month", False),
    ("staff_usd_per_year", "staff_per_year", False),
)


def _refuse_other_currency_in_usd_keys(raw: Mapping[str, Any], file: str, fx: FxTable) -> None:
    """``capex_usd: 310000 EUR``: the amount belongs under the currency-neutral key (``capex``),
    which converts it.  Was "write 310000 alone: the key's name says its unit", and followed,
    the euros were read as dollars."""
    for usd_key, neutral_key, _required in _MONEY_KEYS:
        value = raw.get(usd_key)
        if not isinstance(value, str):
            continue
        try:
            amount, code = split_money(value)
        except ConfigError:
            continue  # the number's own problem: the schema's message
        if code is None or code.upper() == USD:
            continue
        # an unknown code raises, naming its neighbours (rate, not to_usd: no warning of the
        # rate's age before the refusal)
        usd = amount * fx.rate(code, file=file, key_path=usd_key)
        raise ConfigError(
            f"{usd_key} is in USD, and {value.strip()!r} is in {code.upper()}",
            file=file,
            key_path=usd_key,
            hint=f"write {neutral_key}: {amount:g} {code.upper()} (converted at the ECB rate of "
            f"{fx.as_of}: {usd:,.2f} USD), or {usd_key}: {usd:.2f}",
        )


def hardware_from_mapping(
    raw: Mapping[str, Any],
    *,
    file: str = "<hardware>",
    default_name: str = "hardware",
    catalog: GpuCatalog | None = None,
    fx: FxTable | None = None,
) -> HardwareSpec:
    """Validate a parsed hardware file and return a :class:`HardwareSpec` (money in USD).

    The checks run in a fixed order (shape, currency, amounts, power, GPU name); the first problem
    is the one reported.
    """
    catalog = catalog or load_gpu_catalog()
    fx = fx or load_fx_rates()
    check_file_kind(raw, "hardware", file=file)
    _refuse_other_currency_in_usd_keys(raw, file, fx)
    try:
        m = _HardwareFile.model_validate(dict(raw))
    except ValidationError as e:
        raise config_error(e, _HardwareFile, file) from None
    fx.rate(m.currency, file=file, key_path="currency")
    money = {
        usd_key: _amount_usd(m, usd_key, neutral_key, required, fx, file)
        for usd_key, neutral_key, required in _MONEY_KEYS
    }
    _check_amounts(money, file, {u: _given_key(m, u, n) for u, n, _ in _MONEY_KEYS})
    _check_lifetime(m.lifetime_years, file)
    if m.resale_fraction >= RESALE_WARN_FRACTION:
        # was: 1.0 taken without a word, depreciation 0 (owning cost nothing but power)
        log.warning(
            "%s: resale_fraction: %g sells the machine for %.0f%% of its price after %g years, "
            "so owning it costs almost nothing beyond power and staff; resale_fraction is the "
            "share of capex it sells for at the end of lifetime_years (check the figure)",
            file,
            m.resale_fraction,
            100 * m.resale_fraction,
            m.lifetime_years,
        )
    power_max = _power_kw_max(m, file)
    power_idle = _power_kw_idle(m, file)
    gpu = catalog.resolve(m.gpu, file=file, key_path="gpu")
    interconnect = m.interconnect or (
        Interconnect.NONE if m.gpus_per_machine == 1 else Interconnect.PCIE
    )
    if interconnect is Interconnect.NONE and m.gpus_per_machine > 1:
        # was: a quote and a TCO of 8 GPUs wired by nothing ("1 x 8 x H100 (none)"), estimated
        # as PCIe
        raise ConfigError(
            f"interconnect none cannot wire {m.gpus_per_machine} GPUs in one machine: GPUs that "
            "share a machine talk over PCIe at least",
            file=file,
            key_path="interconnect",
            hint="interconnect: pcie, nvlink or nvswitch (leave it out for pcie), or "
            "gpus_per_machine: 1 with machines: for GPUs that share no machine",
        )
    if interconnect is not Interconnect.NVSWITCH and m.gpus_per_machine > MAX_PCIE_GPUS_PER_NODE:
        # was: 72 RTX 4090s on PCIe in one machine, priced and timed as one box
        per = next((d for d in (8, 4, 2) if m.gpus_per_machine % d == 0), None)
        raise ConfigError(
            f"{m.gpus_per_machine} GPUs on {interconnect.value} in one machine: a machine without "
            f"NVSwitch holds at most {MAX_PCIE_GPUS_PER_NODE} (the largest PCIe servers hold "
            "8-10)",
            file=file,
            key_path="gpus_per_machine",
            hint=f"give the machines on their own: gpus_per_machine: {per}, machines: "
            f"{m.gpus_per_machine // per * m.machines}"
            if per is not None
            else "give the GPUs each machine holds, and machines: how many there are",
        )
    nvlink = interconnect in (Interconnect.NVLINK, Interconnect.NVSWITCH)
    if nvlink and m.gpus_per_machine == 1:
        # was: "1 x 1 x H100 (nvswitch)": a link between GPUs on a machine of one GPU
        raise ConfigError(
            f"interconnect {interconnect.value} links GPUs, and a machine of one GPU has no "
            "other GPU to link",
            file=file,
            key_path="interconnect",
            hint="interconnect: none (or leave it out) for one GPU a machine; or give "
            "gpus_per_machine: the GPUs each machine holds",
        )
    if nvlink and m.gpus_per_machine > 1 and not gpu.direct_link:
        # the estimate refuses this wiring (Topology); a hardware file priced its jobs on it
        raise ConfigError(
            f"the {gpu.name} has no NVLink ({gpu.gpu_link or 'no GPU link'}); its GPUs talk over "
            f"PCIe, so {interconnect.value} cannot wire them",
            file=file,
            key_path="interconnect",
            hint="interconnect: pcie, or a GPU with NVLink (planner gpus shows each GPU's link)",
        )
    _check_power(m, gpu.tdp_w, gpu.name, file)
    _check_capex(
        money["capex_usd"],
        m.gpus_per_machine,
        gpu.name,
        file,
        _given_key(m, "capex_usd", "capex"),
        machines=m.machines,
    )
    _check_staff(m, money["staff_usd_per_year"], file)
    source = "; ".join(m.source) if isinstance(m.source, list) else m.source
    return HardwareSpec(
        name=m.name or default_name,
        gpu=gpu.name,
        gpus_per_machine=m.gpus_per_machine,
        machines=m.machines,
        interconnect=interconnect,
        fabric=m.fabric,
        hours_available_per_day=m.hours_available_per_day,
        capex_usd=money["capex_usd"],
        lifetime_years=m.lifetime_years,
        resale_fraction=m.resale_fraction,
        power_kw_avg=m.power_kw_avg,
        power_kw_max=power_max,
        power_kw_idle=power_idle,
        pue=m.pue,
        electricity_usd_per_kwh=money["electricity_usd_per_kwh"],
        colocation_usd_per_kw_month=money["colocation_usd_per_kw_month"],
        rack_usd_per_month=money["rack_usd_per_month"],
        support_fraction_per_year=m.support_fraction_per_year,
        staff_fte=m.staff_fte,
        staff_usd_per_year=money["staff_usd_per_year"],
        financing_rate_per_year=m.financing_rate_per_year,
        source=source,
    )


def _amount_usd(
    m: _HardwareFile, usd_key: str, neutral_key: str, required: bool, fx: FxTable, file: str
) -> float:
    """One amount in USD, from its USD-named key or its currency-neutral one (never both); a
    missing optional amount is 0."""
    usd_value, neutral_value = getattr(m, usd_key), getattr(m, neutral_key)
    if usd_value is not None and neutral_value is not None:
        raise ConfigError(
            f"both {usd_key} and {neutral_key} are given",
            file=file,
            key_path=neutral_key,
            hint=f"keep one: {usd_key} (a USD number) or {neutral_key} (e.g. '80000 CNY')",
        )
    if usd_value is not None:
        return float(usd_value)
    if neutral_value is not None:
        value = parse_money(
            neutral_value, default_currency=m.currency, table=fx, file=file, key_path=neutral_key
        )
        if value < 0:
            # was "must not be negative" alone: no value, no fix (capex_usd: -5 names both)
            text = isinstance(neutral_value, str)
            plain = neutral_value.replace("-", "", 1).strip() if text else f"{-value:g}"
            raise ConfigError(
                f"must be at least 0, got {neutral_value if text else f'{value:g}'!r}",
                file=file,
                key_path=neutral_key,
                hint=f"an amount is 0 or more: write {plain} if the minus sign is a slip",
            )
        return value
    if required:
        raise ConfigError(
            "required key is missing",
            file=file,
            key_path=usd_key,
            hint=f"give {usd_key} (USD) or {neutral_key} (any currency, e.g. '80000 CNY')",
        )
    return 0.0


def _given_key(m: _HardwareFile, usd_key: str, neutral_key: str) -> str:
    """The key the file used for an amount (``capex`` or ``capex_usd``), named in its errors."""
    return neutral_key if getattr(m, neutral_key) is not None else usd_key


# What each amount of a hardware file is, for the hint when one is past any real value.
_AMOUNT_UNITS = {
    "capex_usd": "the price of one machine in USD (capex: for another currency, '80000 EUR')",
    "electricity_usd_per_kwh": "USD per kWh (0.12, not 120: a price per MWh is 1,000 times it)",
    "colocation_usd_per_kw_month": "USD per kW of the machine's draw per month",
    "rack_usd_per_month": "USD per month for the machine's rack space",
    "staff_usd_per_year": "the yearly cost of one full-time engineer in USD, not of the team",
}


def _check_amounts(money: Mapping[str, float], file: str, keys: Mapping[str, str]) -> None:
    """No amount beyond what any machine costs (a unit slip), and not both colocation per kW and
    rack rent (colocation usually includes the space: both would count it twice).  ``keys`` maps
    each amount to the key the file gave it under."""
    for usd_key, amount in money.items():
        most = _MAX_AMOUNT_USD.get(usd_key, MAX_USD)
        if not math.isfinite(amount) or amount > most:
            shown = f"{amount:.3g} USD" if math.isfinite(amount) else "the amount"
            raise ConfigError(
                f"{shown} is past any real one: {usd_key} runs from 0 to {most:,.0f} USD",
                file=file,
                key_path=keys.get(usd_key, usd_key),
                # (each amount's own unit: was "per machine, in USD unless tagged" for all,
                # the yearly cost of one staff FTE and a kWh's price included)
                hint=f"check the units: {usd_key} is {_AMOUNT_UNITS.get(usd_key, 'in USD')}",
            )
    if money["colocation_usd_per_kw_month"] > 0 and money["rack_usd_per_month"] > 0:
        raise ConfigError(
            "both colocation (per kW-month) and rack rent are given",
            file=file,
            key_path="rack_usd_per_month",
            hint="colocation per kW usually includes the space; keep one of the two",
        )


# A resale value at the end of the lifetime from this share of the purchase price up is warned
# of: servers lose most of their value over a depreciation period, so such a share is a slip
# (a percentage left over, or the value kept mistaken for the value lost).
RESALE_WARN_FRACTION = 0.9


def _check_lifetime(years: float, file: str) -> None:
    """A depreciation period of at least :data:`~planner.units.MIN_LIFETIME_YEARS` (0 and
    negatives are refused by the schema)."""
    if years < MIN_LIFETIME_YEARS:
        raise ConfigError(
            f"{years:g} years is shorter than any server is depreciated over "
            f"(from {MIN_LIFETIME_YEARS:g} to {MAX_LIFETIME_YEARS:g} years)",
            file=file,
            key_path="lifetime_years",
            hint="give the depreciation period in years (servers: 3-6); 18 months is 1.5",
        )


# A machine's capex below this share of what its GPUs alone cost at the parts table's cheapest
# listing (used cards included) is a unit slip: thousands dropped (3,100 for 310,000 USD), or a
# price per GPU typed per machine.
MIN_CAPEX_SHARE_OF_GPUS = 0.1
# A machine's capex above this multiple of what its GPUs cost at the parts table's dearest
# listing (a whole system's price per GPU, host and NICs included) is the fleet's total typed per
# machine, or thousands added: a support contract or a premium vendor costs tens of percent more,
# not five times.
MAX_CAPEX_MULTIPLE_OF_GPUS = 5.0


def _check_capex(
    capex_usd: float, gpus: int, gpu: str, file: str, key: str, *, machines: int = 1
) -> None:
    """Refuse a machine's capex a tenth or less of what its ``gpus`` x ``gpu`` cost at the bundled
    parts table's cheapest listing of that GPU (a loose card, or a whole system's price per GPU),
    or over :data:`MAX_CAPEX_MULTIPLE_OF_GPUS` times their dearest; a GPU the table does not list
    is not checked (was: an 8 x H100 server at 3,100 USD priced its GPU-hours at 0.52 USD, and 20
    machines at 6.2 million USD each, the fleet's price, at 775,000 USD an H100)."""
    from planner.ownership.build import load_parts

    table = load_parts()
    per_gpu = [p.price_usd for p in table.of("gpu") if p.get("gpu") == gpu] + [
        p.price_usd / float(p.get("gpus") or 1) for p in table.of("system") if p.get("gpu") == gpu
    ]
    if not per_gpu or capex_usd <= 0:
        return
    cheapest, dearest = min(per_gpu), max(per_gpu)
    most = MAX_CAPEX_MULTIPLE_OF_GPUS * gpus * dearest
    if capex_usd > most:
        each = capex_usd / machines
        fleet = (
            f"capex is per machine: for {machines} machines of {each:,.0f} USD each write "
            f"{each:.0f}"
            if machines > 1 and each <= most
            else "capex is the price of one machine, GPUs and host: check for extra zeros"
        )
        raise ConfigError(
            f"{capex_usd:,.0f} USD for a machine of {gpus} x {gpu} is over "
            f"{MAX_CAPEX_MULTIPLE_OF_GPUS:g} times what its GPUs cost at the dearest listing in "
            f"the bundled parts table ({gpus} x {dearest:,.0f} USD, a whole system's share)",
            file=file,
            key_path=key,
            hint=fleet,
        )
    if capex_usd >= MIN_CAPEX_SHARE_OF_GPUS * gpus * cheapest:
        return
    raise ConfigError(
        f"{capex_usd:,.0f} USD for a machine of {gpus} x {gpu} is less than a tenth of what the "
        f"GPUs alone cost ({gpus} x {cheapest:,.0f} USD at the cheapest listing in the bundled "
        "parts table)",
        file=file,
        key_path=key,
        hint="capex is the price of one machine, GPUs and host, in USD (or with its currency: "
        "310000 EUR): check for dropped thousands, or a price per GPU",
    )


def _check_power(m: _HardwareFile, tdp_w: float, gpu: str, file: str) -> None:
    """A machine draws what its GPUs draw and a host beside them: refuse a figure that cannot be a
    machine of these GPUs -- watts typed as kW (450 for one RTX 4090), nothing at all, or less
    than the GPUs' own share of their rated power."""
    gpus_kw = m.gpus_per_machine * tdp_w / 1000.0
    most_kw = MAX_MACHINE_POWER_PER_GPU_POWER * gpus_kw + MAX_HOST_POWER_KW
    least_kw = MIN_POWER_PER_GPU_POWER * gpus_kw
    for key, value in (("power_kw_avg", m.power_kw_avg), ("power_kw_max", m.power_kw_max)):
        if value is None:
            continue
        if value > most_kw:
            watts = least_kw <= value / 1000.0 <= most_kw
            raise ConfigError(
                f"{key} {value:g} kW is more than a machine of {m.gpus_per_machine} x {gpu} "
                f"({tdp_w:g} W each, {gpus_kw:.3g} kW in all) can draw: at most {most_kw:.3g} kW "
                "with its host",
                file=file,
                key_path=key,
                hint=f"give kilowatts, not watts: {value / 1000:g} for {value:g} W"
                if watts
                else "give the draw of one machine in kW (not of all of them), and check "
                "gpus_per_machine and gpu",
            )
    if m.power_kw_avg < least_kw:
        raise ConfigError(
            f"power_kw_avg {m.power_kw_avg:g} kW is less than {MIN_POWER_PER_GPU_POWER:.0%} of "
            f"what the {m.gpus_per_machine} x {gpu} alone are rated for ({gpus_kw:.3g} kW): a "
            "machine training on them draws more",
            file=file,
            key_path="power_kw_avg",
            hint="give the machine's measured draw while training, in kW per machine (a GPU "
            f"draws {MIN_POWER_PER_GPU_POWER:.0%}-100% of its rating under load); for free "
            "power set electricity_usd_per_kwh: 0 instead",
        )


# Full-time people per machine from which a fleet's staff_fte reads as the team's, not each
# machine's share of it: operations teams run tens to hundreds of servers a person.
STAFF_FTE_PER_MACHINE_WARNED = 1.0


def _check_staff(m: _HardwareFile, staff_usd_per_year: float, file: str) -> None:
    """Staff time and its cost come together: one without the other costs nothing, silently.  A
    fleet with a person or more per machine is warned of: staff_fte is each machine's share (was:
    staff_fte 2 on 20 machines costed as 40 people, without a word)."""
    if m.machines > 1 and m.staff_fte >= STAFF_FTE_PER_MACHINE_WARNED:
        log.warning(
            "%s: staff_fte %g is per machine: %g people for %d machines; for %g people across the "
            "fleet write %.3g",
            file,
            m.staff_fte,
            m.staff_fte * m.machines,
            m.machines,
            m.staff_fte,
            m.staff_fte / m.machines,
        )
    if m.staff_fte > 0 and staff_usd_per_year <= 0:
        raise ConfigError(
            f"staff_fte {m.staff_fte:g} has no cost: staff_usd_per_year is not given",
            file=file,
            key_path="staff_usd_per_year",
            hint="give the yearly cost of one full-time person (staff_usd_per_year: 180000, or "
            "staff_per_year: '150000 EUR'), or staff_fte: 0",
        )
    if m.staff_fte == 0 and staff_usd_per_year > 0:
        raise ConfigError(
            f"a staff cost of {staff_usd_per_year:,.0f} USD a year is given with staff_fte 0, so "
            "it would count for nothing",
            file=file,
            key_path="staff_fte",
            hint="give the share of a full-time person the machines take (staff_fte: 0.25), or "
            "leave the staff cost out",
        )


def _power_kw_max(m: _HardwareFile, file: str) -> float:
    """The peak draw colocation is charged on: ``power_kw_max``, else the average; never below
    the average."""
    power_max = m.power_kw_max if m.power_kw_max is not None else m.power_kw_avg
    if power_max < m.power_kw_avg:
        raise ConfigError(
            f"power_kw_max ({power_max}) is below power_kw_avg ({m.power_kw_avg})",
            file=file,
            key_path="power_kw_max",
            hint="power_kw_max is the most a machine draws (its nameplate or PSU rating), "
            "power_kw_avg what it draws working: check both are per machine, in kW",
        )
    return power_max


def _power_kw_idle(m: _HardwareFile, file: str) -> float:
    """The idle draw: ``power_kw_idle``, else :data:`IDLE_POWER_FRACTION` of the load draw;
    never above the load draw."""
    if m.power_kw_idle is None:
        return IDLE_POWER_FRACTION * m.power_kw_avg
    if m.power_kw_idle > m.power_kw_avg:
        raise ConfigError(
            f"power_kw_idle ({m.power_kw_idle}) is above power_kw_avg ({m.power_kw_avg})",
            file=file,
            key_path="power_kw_idle",
            hint="power_kw_avg is the draw while working, power_kw_idle the draw switched on "
            f"but idle (leave it out for {IDLE_POWER_FRACTION:.0%} of power_kw_avg)",
        )
    return m.power_kw_idle


def checked_hardware(hw: HardwareSpec) -> HardwareSpec:
    """``hw``, once its fields have been checked as a hardware file's are (with its names made
    canonical: ``interconnect="nvlink"``, ``gpu="h100 sxm"``).

    A HardwareSpec made in Python, or changed with ``dataclasses.replace``, skips the file's
    checks: ``machines=0`` or ``hours_available_per_day=0`` ended in ZeroDivisionError, a
    negative capex in a TCO.  Raises ConfigError naming the field.
    """
    record = hw.to_record()
    if record.get("power_kw_max") == 0:  # the dataclass's "same as power_kw_avg"
        record.pop("power_kw_max")
    checked = hardware_from_mapping(
        record, file=f"HardwareSpec {hw.name!r}", default_name=str(hw.name)
    )
    # a field given as text (interconnect="nvlink") comes back as its enum: equal to the text
    # (a str-Enum), but not the same to the code that reads it, so compared by repr
    return hw if repr(checked) == repr(hw) else checked


@checked_arguments
def load_hardware(path_or_name: str) -> HardwareSpec:
    """A hardware file by path, or by name from ``scenarios/hardware/<name>.yaml``."""
    path = resolve_scenario(path_or_name, "hardware")
    return hardware_from_mapping(
        read_mapping(path, "hardware"), file=str(path), default_name=path.stem
    )


def load_machines(names: Sequence[str]) -> tuple[HardwareSpec, ...]:
    """The owned machines a quote is given (``--hardware``, repeatable), each once: two files of
    one name (the same file twice, or two files naming their machine alike) were listed as two
    fleets, both "in plan", in every report.  Raises ConfigError at ``hardware``."""
    machines: list[HardwareSpec] = []
    for name in names:
        hw = load_hardware(name)
        if any(earlier.name == hw.name for earlier in machines):
            raise ConfigError(
                f"hardware {hw.name!r} is given twice",
                key_path="hardware",
                hint="give each machine file once (its machines: key says how many you own), or "
                "give two files their own name: keys",
            )
        machines.append(hw)
    return tuple(machines)
