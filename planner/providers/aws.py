"""AWS: EC2 specs and offerings, Price List on-demand and reserved terms, spot price history.

Calls (see ``shared/reference/provider-apis.md`` §1):

- ``ec2.describe_instance_types`` (paginated) for GPU specs: the model is keyed on the GPU name
  *and* its memory (p4d and p4de both say ``A100``); fractional GPUs (``Count == 0``) are reported
  as unmapped because the offer table counts whole GPUs; bandwidth is the sum of the network cards'
  peak Gbit/s and EFA support sets the fabric.
- ``ec2.describe_instance_type_offerings`` (availability zones) for where a type is offered.
- ``pricing.get_products`` for on-demand and all twelve reserved terms.  Each ``PriceList`` item is
  a JSON string.  Filters: Linux, shared tenancy, no pre-installed software, ``capacitystatus=Used``,
  ``marketoption=OnDemand`` (p5 also publishes a $0 Capacity Block row), no licence.
- ``ec2.describe_spot_price_history`` with ``StartTime=now`` for the current spot price per zone.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from planner.errors import ProviderError
from planner.gpu_specs import GpuCatalog, GpuSpec
from planner.providers.base import (
    HOURS_PER_YEAR,
    Clock,
    DraftingProvider,
    OfferDraft,
    Unmapped,
    require,
    utc_now,
)
from planner.schema import Fabric

log = logging.getLogger(__name__)

ClientFactory = Callable[[str, str], Any]  # (service, region) -> boto3 client

# The Price List API is served from us-east-1 (also eu-central-1, ap-south-1) and covers all regions.
PRICING_REGION = "us-east-1"

# A GPU's reported memory may differ from the datasheet by the ECC/reserved share (A10G reports
# 22888 MiB of 24 GB, T4 15360 MiB of 16 GB): accept a catalog model within this relative distance.
_MEMORY_TOLERANCE = 0.15

# The IAM permission each call needs, named in errors when AWS says access is denied.
PERMISSIONS = {
    "describe_instance_types": "ec2:DescribeInstanceTypes",
    "describe_instance_type_offerings": "ec2:DescribeInstanceTypeOfferings",
    "describe_spot_price_history": "ec2:DescribeSpotPriceHistory",
    "get_products": "pricing:GetProducts",
}
_DENIED = frozenset(
    {"AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "AuthFailure"}
)


@dataclass(frozen=True)
class ReservedTerm:
    """One of the twelve reserved-instance terms of a Price List product, amortised."""

    years: int
    offering_class: str  # "standard" | "convertible"
    purchase_option: str  # "No Upfront" | "Partial Upfront" | "All Upfront"
    hourly_usd: Decimal
    upfront_usd: Decimal

    @property
    def effective_hourly_usd(self) -> Decimal:
        """Hourly fee plus the upfront fee spread over every hour of the term."""
        return self.hourly_usd + self.upfront_usd / (HOURS_PER_YEAR * self.years)


@dataclass(frozen=True)
class ListPrice:
    """The Price List facts for one instance type in one region."""

    instance_type: str
    on_demand_usd: Decimal
    reserved: tuple[ReservedTerm, ...]

    def reserved_hourly(
        self, years: int, offering_class: str, purchase_option: str
    ) -> Decimal | None:
        for term in self.reserved:
            if (term.years, term.offering_class, term.purchase_option) == (
                years,
                offering_class,
                purchase_option,
            ):
                return term.effective_hourly_usd
        return None


def _default_client_factory(max_attempts: int) -> ClientFactory:
    boto3 = require("boto3", "aws")
    config_mod = require("botocore.config", "aws")
    session = boto3.session.Session()
    config = config_mod.Config(retries={"mode": "standard", "total_max_attempts": max_attempts})

    def make(service: str, region: str) -> Any:
        return session.client(service, region_name=region, config=config)

    return make


@contextlib.contextmanager
def _translated(operation: str, region: str) -> Iterator[None]:
    """Turn botocore exceptions raised by ``operation`` into ProviderError naming the permission."""
    exceptions = require("botocore.exceptions", "aws")
    try:
        yield
    except exceptions.ClientError as e:
        code = str(e.response.get("Error", {}).get("Code", ""))
        message = str(e.response.get("Error", {}).get("Message", ""))
        if code in _DENIED:
            raise ProviderError(
                f"AWS denied {operation} in {region}: {code}",
                hint=f"grant the IAM permission {PERMISSIONS[operation]} to the credentials in use",
            ) from e
        raise ProviderError(
            f"AWS {operation} failed in {region}: {code}: {message}",
            hint="retry later; throttling and 5xx were already retried"
            if code.startswith("Throttl") or code in ("RequestLimitExceeded", "ServiceUnavailable")
            else None,
        ) from e
    except exceptions.NoCredentialsError as e:
        raise ProviderError(
            f"no AWS credentials for {operation}",
            hint="run `aws configure` or set AWS_PROFILE / AWS_ACCESS_KEY_ID",
        ) from e
    except exceptions.ParamValidationError as e:
        raise ProviderError(f"AWS {operation} returned or was sent malformed data: {e}") from e
    except exceptions.BotoCoreError as e:
        raise ProviderError(f"AWS {operation} failed in {region}: {e}") from e


def _paginate(
    client: Any, operation: str, region: str, result_key: str, **kwargs: Any
) -> list[Any]:
    with _translated(operation, region):
        pages = client.get_paginator(operation).paginate(**kwargs)
        return [item for page in pages for item in page.get(result_key, [])]


def _decimal(text: Any, what: str) -> Decimal:
    try:
        value = Decimal(str(text))
    except (InvalidOperation, ValueError) as e:
        raise ProviderError(f"AWS price list: {what} is not a number ({text!r})") from e
    if not value.is_finite():
        raise ProviderError(f"AWS price list: {what} is not a number ({text!r})")
    return value


def parse_price_item(raw: str) -> ListPrice | None:
    """One ``PriceList`` JSON string to a :class:`ListPrice`; None for a $0 or non-hourly product."""
    try:
        item = json.loads(raw)
        instance_type = str(item["product"]["attributes"]["instanceType"])
        terms = item["terms"]
    except (json.JSONDecodeError, TypeError, KeyError) as e:
        raise ProviderError(
            f"AWS price list returned a malformed item ({type(e).__name__}: {e})",
            hint="the Price List API changed shape or the response was truncated; retry the refresh",
        ) from e
    on_demand: Decimal | None = None
    for term in terms.get("OnDemand", {}).values():
        for dim in term.get("priceDimensions", {}).values():
            # The free-tier pseudo-product has endRange 750: only an open-ended hourly rate counts.
            if dim.get("unit") == "Hrs" and dim.get("endRange") == "Inf":
                on_demand = _decimal(dim["pricePerUnit"]["USD"], f"{instance_type} on-demand price")
    if on_demand is None or on_demand <= 0:
        return None
    reserved = []
    for term in terms.get("Reserved", {}).values():
        attrs = term.get("termAttributes", {})
        match = re.fullmatch(r"(\d)yr", str(attrs.get("LeaseContractLength", "")))
        if match is None:
            continue
        hourly, upfront = Decimal(0), Decimal(0)
        for dim in term.get("priceDimensions", {}).values():
            price = _decimal(dim["pricePerUnit"]["USD"], f"{instance_type} reserved price")
            if dim.get("unit") == "Hrs":
                hourly += price
            elif dim.get("unit") == "Quantity":
                upfront += price
        reserved.append(
            ReservedTerm(
                years=int(match.group(1)),
                offering_class=str(attrs.get("OfferingClass", "")),
                purchase_option=str(attrs.get("PurchaseOption", "")),
                hourly_usd=hourly,
                upfront_usd=upfront,
            )
        )
    return ListPrice(instance_type, on_demand, tuple(reserved))


def price_filters(region: str, instance_types: Sequence[str]) -> list[dict[str, str]]:
    """The GetProducts filters selecting one Linux on-demand product per instance type."""
    terms = {
        "regionCode": region,
        "operatingSystem": "Linux",
        "tenancy": "Shared",
        "preInstalledSw": "NA",
        "capacitystatus": "Used",
        "licenseModel": "No License required",
        "marketoption": "OnDemand",
    }
    filters = [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in terms.items()]
    filters.append({"Type": "ANY_OF", "Field": "instanceType", "Value": ",".join(instance_types)})
    return filters


def gpu_model(info: Mapping[str, Any], catalog: GpuCatalog) -> GpuSpec | None:
    """The catalog GPU for one ``GpuInfo.Gpus[]`` entry, keyed on name and memory."""
    name = str(info.get("Name", ""))
    mib = float(info.get("MemoryInfo", {}).get("SizeInMiB", 0) or 0)
    gib = mib / 1024
    for candidate in (f"{name}-{round(gib)}GB", f"{name} {round(gib)}GB", name):
        gpu = catalog.get(candidate)
        if gpu is not None and (
            gib == 0 or abs(gpu.memory_gib - gib) <= _MEMORY_TOLERANCE * gpu.memory_gib
        ):
            return gpu
    return None


def network_gbps(network: Mapping[str, Any]) -> float | None:
    """Instance bandwidth: the network cards' peak Gbit/s summed, else parsed from the text."""
    cards = network.get("NetworkCards") or []
    peak = [float(c["PeakBandwidthInGbps"]) for c in cards if c.get("PeakBandwidthInGbps")]
    if peak:
        return sum(peak)
    text = str(network.get("NetworkPerformance", ""))
    match = re.search(r"(?:(\d+)x\s*)?(\d+(?:\.\d+)?)\s*Gigabit", text)
    if match is None:
        return None
    return float(match.group(1) or 1) * float(match.group(2))


def _zones(ec2: Any, region: str, instance_types: list[str]) -> dict[str, set[str]]:
    """The availability zones of ``region`` that offer each instance type (absent: none)."""
    offerings = _paginate(
        ec2,
        "describe_instance_type_offerings",
        region,
        "InstanceTypeOfferings",
        LocationType="availability-zone",
        Filters=[{"Name": "instance-type", "Values": instance_types}],
    )
    zones: dict[str, set[str]] = defaultdict(set)
    for offering in offerings:
        zones[str(offering["InstanceType"])].add(str(offering["Location"]))
    return zones


class AwsProvider(DraftingProvider):
    """EC2 GPU instances with on-demand, spot and reserved prices."""

    name = "aws"
    source = "aws:ec2.describe_instance_types+pricing.get_products+ec2.describe_spot_price_history"

    def __init__(
        self,
        *,
        client_factory: ClientFactory | None = None,
        clock: Clock = utc_now,
        catalog: GpuCatalog | None = None,
        reserved_offering_class: str = "standard",
        reserved_purchase_option: str = "No Upfront",
        max_attempts: int = 8,
    ) -> None:
        super().__init__(clock=clock, catalog=catalog)
        self._client_factory = client_factory
        self._max_attempts = max_attempts
        # Which of the twelve reserved terms fills the table's reserved columns (all are parsed).
        self.reserved_offering_class = reserved_offering_class
        self.reserved_purchase_option = reserved_purchase_option

    def _client(self, service: str, region: str) -> Any:
        if self._client_factory is None:
            self._client_factory = _default_client_factory(self._max_attempts)
        return self._client_factory(service, region)

    def drafts(
        self, regions: Sequence[str], catalog: GpuCatalog
    ) -> tuple[list[OfferDraft], list[Unmapped]]:
        drafts: list[OfferDraft] = []
        unmapped: list[Unmapped] = []
        for region in regions:
            d, u = self._fetch_region(region, catalog)
            drafts += d
            unmapped += u
        return drafts, unmapped

    def _fetch_region(
        self, region: str, catalog: GpuCatalog
    ) -> tuple[list[OfferDraft], list[Unmapped]]:
        """One region's GPU types that are offered there and listed with an on-demand price."""
        ec2 = self._client("ec2", region)
        types = _paginate(
            ec2,
            "describe_instance_types",
            region,
            "InstanceTypes",
            PaginationConfig={"PageSize": 100},
        )
        specs, unmapped = self._gpu_types(types, catalog)
        if not specs:
            return [], unmapped
        wanted = sorted(specs)
        zones = _zones(ec2, region, wanted)
        spot = self._spot_prices(ec2, region, [t for t in wanted if zones.get(t)])
        prices = self._list_prices(region, [t for t in wanted if zones.get(t)])
        drafts = []
        for name in wanted:
            info, gpu, count = specs[name]
            if not zones.get(name):
                continue  # described but not offered in this region
            price = prices.get(name)
            if price is None:
                unmapped.append(
                    Unmapped(self.name, f"{region}/{name}", "no Linux on-demand price listed")
                )
                continue
            drafts.append(
                self._draft(region, info, gpu, count, price, spot.get(name, {}), len(zones[name]))
            )
        return drafts, unmapped

    def _gpu_types(
        self, types: Sequence[Mapping[str, Any]], catalog: GpuCatalog
    ) -> tuple[dict[str, tuple[Mapping[str, Any], GpuSpec, int]], list[Unmapped]]:
        """The described types with whole GPUs of a catalog model (info, GPU, count per type), and
        the GPU types left out with the reason."""
        unmapped: list[Unmapped] = []
        specs: dict[str, tuple[Mapping[str, Any], GpuSpec, int]] = {}
        for info in types:
            name = str(info["InstanceType"])
            gpus = (info.get("GpuInfo") or {}).get("Gpus") or []
            if not gpus:
                continue  # CPU, Neuron (Trainium/Inferentia) or FPGA types: not GPU offers
            count = int(gpus[0].get("Count") or 0)
            if count == 0:
                share = gpus[0].get("GpuPartitionSize")
                unmapped.append(Unmapped(self.name, name, f"fractional GPU (partition {share})"))
                continue
            gpu = gpu_model(gpus[0], catalog)
            if gpu is None:
                mib = gpus[0].get("MemoryInfo", {}).get("SizeInMiB")
                unmapped.append(
                    Unmapped(
                        self.name, name, f"GPU {gpus[0].get('Name')!r} {mib} MiB not in the catalog"
                    )
                )
                continue
            specs[name] = (info, gpu, count)
        return specs, unmapped

    def _draft(
        self,
        region: str,
        info: Mapping[str, Any],
        gpu: GpuSpec,
        count: int,
        price: ListPrice,
        spot_by_zone: Mapping[str, Decimal],
        zones: int,
    ) -> OfferDraft:
        """The offer of one described, priced type; reserved prices of the configured term."""
        network = info.get("NetworkInfo") or {}
        return OfferDraft(
            region=region,
            instance_type=str(info["InstanceType"]),
            gpu=gpu,
            gpu_count=count,
            on_demand=price.on_demand_usd,
            vcpus=float(info.get("VCpuInfo", {}).get("DefaultVCpus") or 0) or None,
            host_memory_gib=(info.get("MemoryInfo", {}).get("SizeInMiB") or 0) / 1024 or None,
            network_gbps=network_gbps(network),
            fabric=Fabric.EFA if network.get("EfaSupported") else Fabric.ETHERNET,
            spot=tuple(spot_by_zone.values()),
            reserved_1y=price.reserved_hourly(
                1, self.reserved_offering_class, self.reserved_purchase_option
            ),
            reserved_3y=price.reserved_hourly(
                3, self.reserved_offering_class, self.reserved_purchase_option
            ),
            zones=zones,
        )

    def _spot_prices(
        self, ec2: Any, region: str, instance_types: list[str]
    ) -> dict[str, dict[str, Decimal]]:
        """The latest Linux spot price per (instance type, zone)."""
        if not instance_types:
            return {}
        rows = _paginate(
            ec2,
            "describe_spot_price_history",
            region,
            "SpotPriceHistory",
            InstanceTypes=instance_types,
            ProductDescriptions=["Linux/UNIX"],
            StartTime=self._clock(),
        )
        latest: dict[tuple[str, str], tuple[Any, Decimal]] = {}
        for row in rows:
            key = (str(row["InstanceType"]), str(row["AvailabilityZone"]))
            price = _decimal(row["SpotPrice"], f"{key[0]} spot price")
            if price > 0 and (key not in latest or row["Timestamp"] > latest[key][0]):
                latest[key] = (row["Timestamp"], price)
        out: dict[str, dict[str, Decimal]] = defaultdict(dict)
        for (instance_type, zone), (_, price) in latest.items():
            out[instance_type][zone] = price
        return out

    def _list_prices(self, region: str, instance_types: list[str]) -> dict[str, ListPrice]:
        if not instance_types:
            return {}
        pricing = self._client("pricing", PRICING_REGION)
        items = _paginate(
            pricing,
            "get_products",
            region,
            "PriceList",
            ServiceCode="AmazonEC2",
            Filters=price_filters(region, instance_types),
            FormatVersion="aws_v1",
            PaginationConfig={"PageSize": 100},
        )
        prices: dict[str, ListPrice] = {}
        for raw in items:
            price = parse_price_item(raw)
            if price is not None:
                prices[price.instance_type] = price
        return prices
