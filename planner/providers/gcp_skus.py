"""GCP Cloud Billing Catalog SKUs of Compute Engine, sorted into the prices a VM is built from.

A GCP VM has no price of its own: it is ``vCPUs x core SKU + GiB x RAM SKU + GPUs x GPU SKU`` for
its series (``shared/reference/provider-apis.md`` §2b; SkyPilot ``fetch_gcp.py``).  This module
reads ``services/6F81-5844-456A/skus`` pages (google-cloud-billing ``Sku`` messages) into
:class:`SkuPrices`: per region and usage (on-demand, spot, 1- and 3-year commitment) the core and
RAM price of each series and the price of each accelerator.  Nothing here talks to the network.

Billing Catalog facts relied on (google-cloud-billing ``PricingExpression`` docs, the OpenCost
recording cited in ``tests/fixtures/README.md``): money is ``units`` (a string in JSON) plus
``nanos``; ``tieredRates`` are sorted by ``startUsageAmount`` and a $0 first tier is a free
allowance, not the price; cores and GPUs are priced per ``h``, RAM per ``GiBy.h``; prices come in
the requested ``currencyCode``.

SKU descriptions the parser reads (public recordings and SKU lists: OpenCost ``skus.json``,
SkyPilot ``SERIES_TO_DESCRIPTION``, a Google-published BigQuery pricing-export script with its
``'Commitment v1: Cpu in%'`` filters):

- on-demand parts: ``A2 Instance Core running in Americas``, ``N1 Predefined Instance Ram running in
  Americas`` (resource group ``N1Standard``), ``Nvidia Tesla T4 GPU running in Americas``;
- spot: ``Spot Preemptible ...`` or ``... GPU attached to Spot Preemptible VMs ...``;
- commitments: ``Commitment v1: A2 Cpu in Americas for 1 Year``; N1's carry no series word
  (``Commitment v1: Cpu in Americas for 3 Year``, ``Commitment v1: Ram in ...``);
  GPUs ``Commitment v1: Nvidia Tesla T4 GPU running in Americas for 1 Year``.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from planner.errors import ProviderError
from planner.providers.base import Unmapped

# The Cloud Billing service id of Compute Engine (services.list; cloud.google.com/billing/v1/how-tos/catalog-api).
COMPUTE_SERVICE = "services/6F81-5844-456A"
CURRENCY = "USD"

# Usage types of the Billing Catalog -> which price they are.
USAGE = {
    "OnDemand": "on_demand",
    "Preemptible": "spot",
    "Commit1Yr": "reserved_1y",
    "Commit3Yr": "reserved_3y",
}


@dataclass(frozen=True)
class Series:
    """How one machine series is priced: the SKU word for its cores and RAM, or GPU SKU only."""

    sku_word: str  # "A2" in "A2 Instance Core running in Americas", "Commitment v1: A2 Cpu in ..."
    gpu_only: bool = False  # A4: the B200 GPU SKU prices the whole VM (SkyPilot fetch_gcp.py)


SERIES: dict[str, Series] = {
    "a2": Series("A2"),
    "a3": Series("A3"),
    "a4": Series("A4", gpu_only=True),
    "g2": Series("G2"),
    "n1": Series("N1"),  # host of attached T4, V100, P100 and P4 cards
}

# GPU SKU description -> accelerator type, most specific first: "A100 80GB" before "A100" and
# "H100 ... Mega" before "H100" (descriptions from public recordings, provider-apis.md §2c).
GPU_SKU_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), t)
    for p, t in (
        (r"\bh100 (80gb (mega|plus)|mega 80gb)\b", "nvidia-h100-mega-80gb"),
        (r"\bh100 80gb\b", "nvidia-h100-80gb"),
        (r"\bh200 141gb\b", "nvidia-h200-141gb"),
        (r"\bb200\b", "nvidia-b200"),
        (r"\ba100 80gb\b", "nvidia-a100-80gb"),
        (r"\ba100\b", "nvidia-tesla-a100"),
        (r"\bl4\b", "nvidia-l4"),
        (r"\bt4\b", "nvidia-tesla-t4"),
        (r"\bv100\b", "nvidia-tesla-v100"),
        (r"\bp100\b", "nvidia-tesla-p100"),
        (r"\bp4\b", "nvidia-tesla-p4"),
    )
)

_COMMITMENT = "commitment v1:"
_PREFIX = re.compile(r"^(spot preemptible|preemptible|commitment v1:)\s+")
# "a2 instance core", "n1 predefined instance ram", "a2 cpu" (a commitment), and N1's commitments,
# which name no series: "cpu in americas for 1 year".
_COMPONENT = re.compile(
    r"^(?:(?P<series>[a-z]\d) (?:predefined )?(?:instance )?)?(?P<part>core|cpu|ram)\b"
)
_IGNORED_GPU = re.compile(r"virtual workstation|\bvws\b|^reserved\b|\bdws\b|calendar|flex")

# The unit each kind of SKU is priced in: per hour for a core or a GPU, per GiB-hour for RAM.
USAGE_UNITS = {"core": "h", "gpu": "h", "ram": "GiBy.h"}


def money(units: Any, nanos: Any) -> Decimal:
    """A google.type.Money amount (units + nanos) as an exact Decimal."""
    return Decimal(int(units or 0)) + Decimal(int(nanos or 0)) / Decimal(10**9)


def accelerator_for_sku(description: str) -> str | None:
    """The accelerator type a GPU SKU description prices, or None when the table has no match."""
    text = _PREFIX.sub("", description.strip().lower())
    for pattern, accelerator in GPU_SKU_PATTERNS:
        if pattern.search(text):
            return accelerator
    return None


def usage_of(sku: Any) -> str | None:
    """Which price a SKU is; "Spot Preemptible" descriptions count as spot whatever the usageType
    says (a known Billing Catalog data bug on some B200 SKUs, SkyPilot fetch_gcp.py)."""
    if "preemptible" in str(sku.description).lower():
        return "spot"
    return USAGE.get(str(sku.category.usage_type))


def component_of(description: str) -> tuple[str, str] | None:
    """(series, "core"|"ram") for a core or RAM SKU of a priced series, else None.

    A part without a series word is N1's only in a commitment ("Commitment v1: Cpu in ..."); the
    on-demand "Custom Instance Core" SKUs of N1 custom shapes are not predefined prices.
    """
    lowered = description.strip().lower()
    match = _COMPONENT.match(_PREFIX.sub("", lowered))
    if match is None:
        return None
    series = match.group("series")
    if series is None:
        if not lowered.startswith(_COMMITMENT):
            return None
        series = "n1"
    if series not in SERIES:
        return None
    return series, "ram" if match.group("part") == "ram" else "core"


def unit_price(sku: Any) -> Decimal | None:
    """The price of a SKU per usage unit: the first tier with a non-zero price.

    Tiers are ordered by ``start_usage_amount`` and a tier applies only after that much usage, so a
    $0 tier starting at 0 is a free allowance; sustained use pays the next tier.  None when every
    tier is $0 (nothing to price a VM with).  Raises ProviderError for a non-USD price.
    """
    try:
        rates = sorted(
            sku.pricing_info[0].pricing_expression.tiered_rates,
            key=lambda r: r.start_usage_amount,
        )
    except IndexError as e:
        raise ProviderError(f"GCP SKU {sku.sku_id} ({sku.description!r}) has no price tier") from e
    if not rates:
        raise ProviderError(f"GCP SKU {sku.sku_id} ({sku.description!r}) has no price tier")
    for rate in rates:
        currency = str(rate.unit_price.currency_code or CURRENCY)
        if currency != CURRENCY:
            raise ProviderError(
                f"GCP SKU {sku.sku_id} ({sku.description!r}) is priced in {currency}, not {CURRENCY}",
                hint="the catalog answered in the billing account's currency; request currency_code=USD",
            )
        price = money(rate.unit_price.units, rate.unit_price.nanos)
        if price > 0:
            return price
    return None


def _usage_unit(sku: Any) -> str:
    try:
        return str(sku.pricing_info[0].pricing_expression.usage_unit)
    except IndexError:
        return ""


@dataclass(frozen=True)
class SkuPrices:
    """Per region and usage: component prices (series, "core"|"ram") and GPU prices (accelerator).

    ``unmapped`` holds the SKUs that were seen but not used, each with the regions it serves, so
    that a fetch of some regions reports only what concerns them (:meth:`unmapped_in`).
    """

    components: dict[tuple[str, str, str, str], Decimal]  # (region, usage, series, part)
    gpus: dict[tuple[str, str, str], Decimal]  # (region, usage, accelerator)
    unmapped: dict[str, tuple[Unmapped, frozenset[str]]] = field(default_factory=dict)

    def unmapped_in(self, regions: Iterable[str]) -> list[Unmapped]:
        wanted = set(regions)
        return [item for item, served in self.unmapped.values() if served & wanted]

    def component(self, region: str, usage: str, series: str, part: str) -> Decimal | None:
        return self.components.get((region, usage, series, part))

    def gpu(self, region: str, usage: str, accelerator: str) -> Decimal | None:
        return self.gpus.get((region, usage, accelerator))


def _price_of(sku: Any) -> tuple[str, str, Decimal] | str | None:
    """(kind, target, price) of a core, RAM or GPU SKU; a reason when it cannot be used; None
    when it is none of those (disks, licences, other series, workstation licences)."""
    description = str(sku.description)
    if str(sku.category.resource_group) == "GPU":
        if _IGNORED_GPU.search(_PREFIX.sub("", description.strip().lower())):
            return None
        accelerator = accelerator_for_sku(description)
        if accelerator is None:
            return "GPU SKU not in GPU_SKU_PATTERNS"
        kind, target = "gpu", accelerator
    else:
        part = component_of(description)
        if part is None:
            return None
        target, kind = part
    unit = _usage_unit(sku)
    if unit != USAGE_UNITS[kind]:
        return f"priced per {unit!r}, expected {USAGE_UNITS[kind]!r}"
    price = unit_price(sku)
    if price is None:
        return "every price tier is $0"
    return kind, target, price


def index_skus(skus: Iterable[Any], regions: Collection[str] | None = None) -> SkuPrices:
    """Sort Compute Engine SKUs into component and GPU prices for ``regions`` (None: all)."""
    components: dict[tuple[str, str, str, str], Decimal] = {}
    gpus: dict[tuple[str, str, str], Decimal] = {}
    unmapped: dict[str, tuple[Unmapped, frozenset[str]]] = {}
    for sku in skus:
        if str(sku.category.resource_family) != "Compute":
            continue
        usage = usage_of(sku)
        served = frozenset(str(r) for r in sku.service_regions)
        here = served if regions is None else served.intersection(regions)
        if usage is None or not here:
            continue
        found = _price_of(sku)
        if isinstance(found, str):
            description = str(sku.description)
            unmapped[description] = (Unmapped("gcp", description, found), here)
            continue
        if found is None:
            continue
        kind, target, price = found
        for region in here:
            if kind == "gpu":
                gpus[(region, usage, target)] = price
            else:
                components[(region, usage, target, kind)] = price
    return SkuPrices(components, gpus, unmapped)


def vm_price(
    prices: SkuPrices,
    region: str,
    usage: str,
    series_key: str,
    accelerator: str,
    gpu_count: int,
    vcpus: Decimal,
    memory_gib: Decimal,
) -> Decimal | None:
    """One VM's hourly price for ``usage``: GPUs x GPU SKU (+ vCPUs x core + GiB x RAM unless the
    series is priced by its GPU SKU alone); None when any part has no price in ``region``."""
    gpu = prices.gpu(region, usage, accelerator)
    if gpu is None:
        return None
    total = gpu * gpu_count
    if SERIES[series_key].gpu_only:
        return total
    core = prices.component(region, usage, series_key, "core")
    ram = prices.component(region, usage, series_key, "ram")
    if core is None or ram is None:
        return None
    return total + core * vcpus + ram * memory_gib
