"""The provider interface, the registry and helpers shared by the adapters.

An adapter turns one cloud's live APIs into rows of the common offer table
(:mod:`planner.schema`).  It is the only code that talks to a cloud; everything else plans offline
from snapshots.  Adapters import their SDK lazily (inside functions), take their clients, sessions
and clock as constructor arguments (so tests pass fakes) and translate vendor exceptions into
:class:`~planner.errors.ProviderError` at the boundary.
"""

from __future__ import annotations

import abc
import importlib
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from types import ModuleType
from typing import Any

import pandas as pd

from planner import clock, units
from planner.errors import MissingDependencyError, OfferValidationError, ProviderError
from planner.gpu_specs import GpuCatalog, GpuSpec, load_gpu_catalog
from planner.schema import COLUMN_NAMES, Fabric, Interconnect, empty_offers, validate_offers

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]

# Hours in a commitment term: 365-day years (planner.units.HOURS_PER_YEAR), as AWS
# (lyft/awspricing HOURS_IN_YEAR = 24*365) and the Azure Retail Prices reservation rows (total for
# the term) are amortised.  An int, so that Decimal prices divide exactly.
HOURS_PER_YEAR = int(units.HOURS_PER_YEAR)

# Families whose multi-GPU instances are HGX boards with all-to-all NVSwitch (NVIDIA HGX A100/H100/
# H200/B200 platform briefs); V100 SXM2 boards are an NVLink hybrid cube mesh without NVSwitch.
_NVSWITCH_FAMILIES = frozenset({"a100", "h100", "h200", "b200", "gh200"})


def utc_now() -> datetime:
    """The default clock: the program's one clock, looked up at call time."""
    return clock.utc_now()


@dataclass(frozen=True)
class Unmapped:
    """Something an adapter saw but could not turn into an offer (reported, never guessed)."""

    provider: str
    item: str  # instance type, SKU description, ...
    reason: str


@dataclass(frozen=True)
class FetchResult:
    """What one fetch produced: offers in the common schema plus what was left out and why."""

    offers: pd.DataFrame
    unmapped: tuple[Unmapped, ...] = field(default=())


class Provider(abc.ABC):
    """One cloud's live specs and prices, as rows of the common offer table."""

    name: str = ""
    source: str = ""  # provenance written into every row's ``source`` column

    @abc.abstractmethod
    def fetch(self, regions: Sequence[str]) -> FetchResult:
        """Fetch GPU offers for ``regions``; raises :class:`ProviderError` on API failure."""

    def fetch_offers(self, regions: Sequence[str]) -> pd.DataFrame:
        """The offers for ``regions`` in the common schema (validated)."""
        return self.fetch(regions).offers


def require(module: str, extra: str) -> ModuleType:
    """Import an optional SDK module, or say which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingDependencyError(
            f"the {extra} provider needs the Python package {module.split('.')[0]!r}, which is not installed",
            hint=f"pip install 'planner[{extra}]'",
        ) from e


def hourly(value: Decimal) -> float:
    """A Decimal price to a plain float, rounded to 1e-6 USD (prices are published to 1e-10)."""
    return float(round(value, 6))


def interconnect_for(gpu: GpuSpec, gpu_count: int) -> Interconnect:
    """The GPU-GPU link of an instance with ``gpu_count`` GPUs of model ``gpu``."""
    if gpu_count <= 1:
        return Interconnect.NONE
    if gpu.gpu_link == "nvlink" and gpu.family.lower() in _NVSWITCH_FAMILIES:
        return Interconnect.NVSWITCH
    if gpu.gpu_link == "infinity-fabric":  # AMD Instinct platforms: a full mesh, all-to-all
        return Interconnect.NVSWITCH
    if gpu.direct_link:
        return Interconnect.NVLINK
    return Interconnect.PCIE


@dataclass(frozen=True)
class OfferDraft:
    """One offer as an adapter assembles it, before it becomes a table row."""

    region: str
    instance_type: str
    gpu: GpuSpec
    gpu_count: int
    on_demand: Decimal
    vcpus: float | None = None
    host_memory_gib: float | None = None
    network_gbps: float | None = None
    fabric: Fabric = Fabric.ETHERNET
    interconnect: Interconnect | None = None  # None: derived from the GPU model and count
    spot: tuple[Decimal, ...] = ()  # the spot prices seen: one per zone, or one regional price
    reserved_1y: Decimal | None = None  # reserved instances / committed use, effective hourly
    reserved_3y: Decimal | None = None
    # A compute savings plan (AWS Compute Savings Plan, Azure savings plan for compute), no
    # upfront: the hourly rate it gives this instance.  Never folded into the reserved fields.
    savings_plan_1y: Decimal | None = None
    savings_plan_3y: Decimal | None = None
    # The published interruption frequency (%/month, upper bound; AWS Spot Advisor bucket); None
    # where the provider publishes none (the planner's default rate then applies).
    interruption_pct: float | None = None
    zones: int | None = None

    def to_record(self, provider: str, source: str, as_of: str) -> dict[str, Any]:
        link = self.interconnect or interconnect_for(self.gpu, self.gpu_count)
        listed = self.reserved_1y is not None or self.reserved_3y is not None
        plan = self.savings_plan_1y is not None or self.savings_plan_3y is not None
        return {
            "provider": provider,
            "region": self.region,
            "instance_type": self.instance_type,
            "gpu_model": self.gpu.name,
            "gpu_count": self.gpu_count,
            "gpu_memory_gib": self.gpu.memory_gib,
            "gpu_memory_total_gib": self.gpu.memory_gib * self.gpu_count,
            "vcpus": self.vcpus,
            "host_memory_gib": self.host_memory_gib,
            "interconnect": link.value,
            "network_gbps": self.network_gbps,
            "fabric": self.fabric.value,
            "price_on_demand_usd_per_hour": hourly(self.on_demand),
            "price_spot_usd_per_hour": _opt(min(self.spot, default=None)),
            "price_spot_median_usd_per_hour": _opt(median(self.spot) if self.spot else None),
            "price_reserved_1y_usd_per_hour": _opt(self.reserved_1y),
            "price_reserved_3y_usd_per_hour": _opt(self.reserved_3y),
            # Reserved prices here are read from the provider's own price API, not derived.
            "price_basis_reserved": "listed" if listed else "none",
            "price_savings_plan_1y_usd_per_hour": _opt(self.savings_plan_1y),
            "price_savings_plan_3y_usd_per_hour": _opt(self.savings_plan_3y),
            "price_basis_savings_plan": "listed" if plan else "none",
            "spot_interruption_pct": self.interruption_pct,
            "zones": self.zones,
            "source": source,
            "as_of": as_of,
        }


def _opt(value: Decimal | None) -> float | None:
    return None if value is None else hourly(value)


def build_offers(
    drafts: Iterable[OfferDraft],
    *,
    provider: str,
    source: str,
    clock: Clock,
    catalog: GpuCatalog | None = None,
) -> pd.DataFrame:
    """Turn drafts into a validated offer table stamped with ``source`` and the clock's date."""
    as_of = clock().date().isoformat()
    records = [d.to_record(provider, source, as_of) for d in drafts]
    if not records:
        return empty_offers()
    df = pd.DataFrame.from_records(records, columns=list(COLUMN_NAMES))
    df = df.sort_values(["region", "instance_type"], kind="stable")
    try:
        return validate_offers(df, source=f"{provider} API", catalog=catalog or load_gpu_catalog())
    except OfferValidationError as e:
        # a provider's answer, not a file the user wrote: was the hint for a hand-written price
        # list ("divide a monthly price by 730")
        raise ProviderError(
            f"the {provider} API answered an offer the offer table refuses: {e.detail}"
            + (f" ({e.key_path})" if e.key_path else ""),
            hint="the API or a mirror of it served a broken answer: retry the refresh or check "
            "the mirror; a real change in the API's shape is a bug to report",
        ) from None


class DraftingProvider(Provider):
    """A provider that assembles :class:`OfferDraft` objects; this class turns them into the table.

    Subclasses implement :meth:`drafts`.  The part every adapter shares lives here once: load the
    GPU catalog, stamp the rows with :attr:`source` and the clock's date, validate them.
    """

    def __init__(self, *, clock: Clock = utc_now, catalog: GpuCatalog | None = None) -> None:
        self._clock = clock
        self._catalog = catalog

    def fetch(self, regions: Sequence[str]) -> FetchResult:
        catalog = self._catalog or load_gpu_catalog()
        drafts, unmapped = self.drafts(regions, catalog)
        offers = build_offers(
            drafts, provider=self.name, source=self.source, clock=self._clock, catalog=catalog
        )
        return FetchResult(offers, tuple(unmapped))

    @abc.abstractmethod
    def drafts(
        self, regions: Sequence[str], catalog: GpuCatalog
    ) -> tuple[list[OfferDraft], list[Unmapped]]:
        """The offers found in ``regions`` and what could not be mapped; raises ProviderError."""


def median(values: Sequence[Decimal]) -> Decimal:
    """The median of a non-empty sequence of Decimals (mean of the middle two when even)."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


def first(mapping: Mapping[str, Any], *keys: str) -> Any:
    """The value of the first key present in ``mapping`` (None when none is)."""
    for key in keys:
        if key in mapping:
            return mapping[key]
    return None
