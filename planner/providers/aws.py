"""AWS: EC2 GPU specs and prices, from the public Price List files or, with credentials, the APIs.

Two paths fill the same rows (see ``shared/reference/provider-apis.md`` §1):

**Public files** (no AWS account, no boto3 needed; :mod:`planner.providers.aws_bulk`): the
region's EC2 bulk offer file (streamed CSV) gives specs from its own attribute columns (vCPU,
Memory, GPU, GPU Memory, Network Performance), the Linux on-demand price and the published
reserved terms; the GPU model comes from the instance family (``aws_bulk.FAMILY_GPU``), checked
against the file's GPU memory.  Spot prices come from the public spot price feed (spot.json), or,
when credentials are found, from ``ec2.describe_spot_price_history`` per zone (with
``describe_instance_type_offerings`` for the zone count).  Capacity Block rows ($0 in the Price
List: the price is quoted per reservation by ``ec2.describe_capacity_block_offerings``) never
become an on-demand price and are reported as Unmapped.  No Upfront Compute Savings Plans rates
come from the public Savings Plans files (:mod:`planner.providers.aws_savings`) on both paths.  Endpoints and their mirror settings:
``PLANNER_AWS_PRICING_URL`` (base of https://pricing.us-east-1.amazonaws.com),
``PLANNER_AWS_SPOT_ADVISOR_URL`` and ``PLANNER_AWS_SPOT_PRICES_URL`` (``aws_bulk`` docstring).

**APIs** (credentials found by boto3's normal chain, or clients passed in):

- ``ec2.describe_instance_types`` (paginated) for GPU specs: the model is keyed on the GPU name
  *and* its memory (p4d and p4de both say ``A100``); fractional GPUs (``Count == 0``) are reported
  as unmapped because the offer table counts whole GPUs; bandwidth is the sum of the network cards'
  peak Gbit/s and EFA support sets the fabric.
- ``ec2.describe_instance_type_offerings`` (availability zones) for where a type is offered.
- ``pricing.get_products`` for on-demand and all twelve reserved terms.  Each ``PriceList`` item is
  a JSON string.  Filters: Linux, shared tenancy, no pre-installed software, ``capacitystatus=Used``,
  ``marketoption=OnDemand`` (p5 also publishes a $0 Capacity Block row), no licence.  A few
  filtered API pages instead of a multi-gigabyte file: why this path is preferred when it can run.
- ``ec2.describe_spot_price_history`` with ``StartTime=now`` for the current spot price per zone.

``PLANNER_AWS_PRICE_SOURCE`` (``auto``, ``api`` or ``public``) picks a path; ``auto`` (the default)
takes the APIs when credentials are found and the public files otherwise.  Both paths write the
Compute Savings Plans rates into the savings-plan columns and the Spot Instance Advisor's interruption bucket of each type into ``spot_interruption_pct`` (the
bucket's upper bound; ``aws_bulk.OPEN_BUCKET_PCT`` for ">20%"); a type the Advisor does not list
keeps NaN, and the planner's default rate then applies and is named in the plan.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import json
import logging
import os
import re
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from planner.errors import ProviderError
from planner.gpu_specs import GpuCatalog, GpuSpec, load_gpu_catalog
from planner.providers.aws_bulk import EFA_TYPES, FAMILY_GPU, AwsPublicData, OfferFile
from planner.providers.aws_prices import ListPrice, ReservedTerm
from planner.providers.base import (
    Clock,
    DraftingProvider,
    FetchResult,
    OfferDraft,
    Unmapped,
    build_offers,
    require,
    utc_now,
)
from planner.schema import Fabric

log = logging.getLogger(__name__)

ClientFactory = Callable[[str, str], Any]  # (service, region) -> boto3 client

# Picks the price path: "api" (credentials needed), "public" (none) or "auto" (the default).
SOURCE_ENV = "PLANNER_AWS_PRICE_SOURCE"
PRICE_SOURCES = ("auto", "api", "public")  # what SOURCE_ENV takes
_API_SOURCE = "aws:ec2.describe_instance_types+pricing.get_products+ec2.describe_spot_price_history"

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


def _default_client_factory(max_attempts: int) -> ClientFactory:
    boto3 = require("boto3", "aws")
    config_mod = require("botocore.config", "aws")
    session = boto3.session.Session()
    config = config_mod.Config(retries={"mode": "standard", "total_max_attempts": max_attempts})

    def make(service: str, region: str) -> Any:
        return session.client(service, region_name=region, config=config)

    return make


def boto3_has_credentials() -> bool:
    """Whether boto3 is installed and its normal chain (env, profile, SSO, instance role) finds
    credentials.  An unusable configuration (a missing ``AWS_PROFILE``) counts as none."""
    try:
        boto3 = importlib.import_module("boto3")
        exceptions = importlib.import_module("botocore.exceptions")
    except ImportError:
        log.info("boto3 is not installed: reading AWS's public price files")
        return False
    try:
        found = boto3.session.Session().get_credentials() is not None
    except exceptions.BotoCoreError as e:
        log.warning("AWS credentials unusable (%s): reading AWS's public price files", e)
        return False
    if not found:
        log.info("no AWS credentials found: reading AWS's public price files")
    return found


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
    """EC2 GPU instances with on-demand, spot and reserved prices and Spot Advisor buckets.

    ``price_source`` picks the path (module docstring): "auto" defers to ``$PLANNER_AWS_PRICE_SOURCE``
    and then to ``has_credentials``.  An injected ``client_factory`` counts as credentials; with it
    and no ``public`` the API path reads nothing public (recorded-response tests stay offline).
    """

    name = "aws"
    source = _API_SOURCE

    def __init__(
        self,
        *,
        client_factory: ClientFactory | None = None,
        clock: Clock = utc_now,
        catalog: GpuCatalog | None = None,
        reserved_offering_class: str = "standard",
        reserved_purchase_option: str = "No Upfront",
        max_attempts: int = 8,
        public: AwsPublicData | None = None,
        price_source: str = "auto",
        has_credentials: Callable[[], bool] = boto3_has_credentials,
    ) -> None:
        super().__init__(clock=clock, catalog=catalog)
        self._client_factory = client_factory
        self._injected = client_factory is not None
        self._max_attempts = max_attempts
        self._public = public
        self._price_source = price_source
        self._has_credentials = has_credentials
        self._credentials: bool | None = None  # asked once, when first needed
        # Which of the twelve reserved terms fills the table's reserved columns (all are parsed).
        self.reserved_offering_class = reserved_offering_class
        self.reserved_purchase_option = reserved_purchase_option

    def _client(self, service: str, region: str) -> Any:
        if self._client_factory is None:
            self._client_factory = _default_client_factory(self._max_attempts)
        return self._client_factory(service, region)

    def _credentialed(self) -> bool:
        if self._injected:
            return True
        if self._credentials is None:
            self._credentials = self._has_credentials()
        return self._credentials

    def _public_data(self) -> AwsPublicData:
        if self._public is None:
            self._public = AwsPublicData()
        return self._public

    def price_path(self) -> str:
        """The path this fetch takes: "api" or "public" (module docstring)."""
        choice = self._price_source
        if choice == "auto":
            choice = os.environ.get(SOURCE_ENV, "").strip().lower() or "auto"
        if choice not in PRICE_SOURCES:
            raise ProviderError(
                f"{SOURCE_ENV}={choice!r} is not a price source",
                hint=f"use one of {', '.join(PRICE_SOURCES)}",
            )
        if choice == "auto":
            return "api" if self._credentialed() else "public"
        return choice

    def fetch(self, regions: Sequence[str]) -> FetchResult:
        catalog = self._catalog or load_gpu_catalog()
        path = self.price_path()
        # The public files every path adds (Savings Plans rates, Spot Advisor buckets), unless a
        # test injected clients and no public reader.
        reads_public = path == "public" or not self._injected or self._public is not None
        drafts: list[OfferDraft] = []
        unmapped: list[Unmapped] = []
        versions: list[str] = []
        plan_versions: list[str] = []
        for region in regions:
            if path == "api":
                d, u = self._fetch_region(region, catalog)
            else:
                d, u, version = self._public_region(region, catalog)
                versions.append(version)
            if reads_public:
                d, plan_version = self._with_public_extras(region, d)
                plan_versions.append(plan_version)
            drafts += d
            unmapped += u
        self.source = self._source_name(path, versions, plan_versions if reads_public else None)
        offers = build_offers(
            drafts, provider=self.name, source=self.source, clock=self._clock, catalog=catalog
        )
        return FetchResult(offers, tuple(unmapped))

    def _with_public_extras(
        self, region: str, drafts: list[OfferDraft]
    ) -> tuple[list[OfferDraft], str]:
        """``drafts`` with their Compute Savings Plans rates and Spot Advisor interruption bucket
        (a type the Advisor does not list keeps None: the planner's default rate then applies),
        and the Savings Plans file's version."""
        data = self._public_data()
        plans = data.savings_plans(region, FAMILY_GPU)
        pct = data.interruption(region)
        out = [
            dataclasses.replace(
                d,
                savings_plan_1y=plans.hourly(d.instance_type, 1),
                savings_plan_3y=plans.hourly(d.instance_type, 3),
                interruption_pct=pct.get(d.instance_type),
            )
            for d in drafts
        ]
        return out, plans.version

    def _source_name(
        self, path: str, versions: Sequence[str], plan_versions: Sequence[str] | None
    ) -> str:
        if path == "api":
            parts = [_API_SOURCE]
        else:
            shown = ",".join(sorted({v for v in versions if v})) or "current"
            spot = "ec2.describe_spot_price_history" if self._credentialed() else "spot.json"
            parts = [f"aws:pricing.us-east-1.amazonaws.com AmazonEC2@{shown}", spot]
        if plan_versions is None:
            return "+".join(parts)
        plans = ",".join(sorted({v for v in plan_versions if v})) or "current"
        return "+".join([*parts, f"AWSComputeSavingsPlan@{plans}", "spot-advisor-data.json"])

    def drafts(
        self, regions: Sequence[str], catalog: GpuCatalog
    ) -> tuple[list[OfferDraft], list[Unmapped]]:
        """The API path's drafts (what :meth:`fetch` uses when credentials are found)."""
        drafts: list[OfferDraft] = []
        unmapped: list[Unmapped] = []
        for region in regions:
            d, u = self._fetch_region(region, catalog)
            drafts += d
            unmapped += u
        return drafts, unmapped

    def _public_region(
        self, region: str, catalog: GpuCatalog
    ) -> tuple[list[OfferDraft], list[Unmapped], str]:
        """One region from the public offer file, with spot prices from the best source at hand."""
        data = self._public_data()
        offer = data.offer_file(region, FAMILY_GPU)
        drafts, unmapped = bulk_drafts(
            offer, catalog, self.reserved_offering_class, self.reserved_purchase_option
        )
        names = [d.instance_type for d in drafts]
        if self._credentialed():
            ec2 = self._client("ec2", region)
            zones = _zones(ec2, region, names)
            spot = self._spot_prices(ec2, region, [t for t in names if zones.get(t)])
            drafts = [
                dataclasses.replace(
                    d,
                    spot=tuple(spot.get(d.instance_type, {}).values()),
                    zones=len(zones.get(d.instance_type, ())) or None,
                )
                for d in drafts
            ]
        else:
            regional = data.spot(region)
            drafts = [
                dataclasses.replace(d, spot=(regional[d.instance_type],))
                if d.instance_type in regional
                else d
                for d in drafts
            ]
        log.info("aws %s: %d GPU offers, %d left out", region, len(drafts), len(unmapped))
        return drafts, unmapped, offer.version

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


def bulk_drafts(
    offer: OfferFile, catalog: GpuCatalog, offering_class: str, purchase_option: str
) -> tuple[list[OfferDraft], list[Unmapped]]:
    """The offers of one parsed offer file (no spot yet) and what was left out, with why."""
    region = offer.region
    drafts: list[OfferDraft] = []
    unmapped = [
        Unmapped("aws", f"{region}/{name}", "GPU family not mapped to a GPU model")
        for name in sorted(offer.other_gpu_types)
    ]
    for name, product in sorted(offer.products.items()):
        gpu, count, why = _bulk_gpu(
            product.instance_type, product.gpus, product.gpu_memory, catalog
        )
        price = offer.prices.get(name)
        if price is None:
            why = why or _no_price_reason(offer, name)
        if gpu is None or price is None:
            unmapped.append(Unmapped("aws", f"{region}/{name}", why))
            continue
        if name in offer.capacity_blocks:
            unmapped.append(Unmapped("aws", f"{region}/{name} Capacity Block", _CAPACITY_BLOCK))
        drafts.append(
            OfferDraft(
                region=region,
                instance_type=name,
                gpu=gpu,
                gpu_count=count,
                on_demand=price.on_demand_usd,
                vcpus=product.vcpus,
                host_memory_gib=product.memory_gib,
                network_gbps=network_gbps({"NetworkPerformance": product.network}),
                fabric=Fabric.EFA if name in EFA_TYPES else Fabric.ETHERNET,
                reserved_1y=price.reserved_hourly(1, offering_class, purchase_option),
                reserved_3y=price.reserved_hourly(3, offering_class, purchase_option),
            )
        )
    return drafts, unmapped


# Capacity Blocks for ML stay out of the offer table: the Price List lists them at $0.
_CAPACITY_BLOCK = (
    "Capacity Block for ML: its price is not in the Price List; it is quoted per reservation by"
    " ec2.describe_capacity_block_offerings"
)


def _no_price_reason(offer: OfferFile, name: str) -> str:
    if name in offer.capacity_blocks:
        return f"only a Capacity Block row is listed ({_CAPACITY_BLOCK})"
    if name in offer.zero_on_demand:
        return "the Linux on-demand price is listed as $0"
    return "no Linux on-demand price listed"


def _bulk_gpu(
    name: str, gpus: str, gpu_memory: str, catalog: GpuCatalog
) -> tuple[GpuSpec | None, int, str]:
    """The catalog GPU and count of one offer-file product, or None and the reason."""
    family = name.split(".", 1)[0]
    gpu = catalog.get(FAMILY_GPU[family])
    if gpu is None:
        return None, 0, f"GPU {FAMILY_GPU[family]} ({family}) is not in the GPU catalog"
    try:
        count_f = float(gpus)
    except ValueError:
        return None, 0, f"the offer file gives no GPU count ({gpus!r})"
    if count_f < 1 or not count_f.is_integer():
        return None, 0, f"fractional GPU ({gpus} per instance)"
    count = int(count_f)
    total = re.match(r"\s*([0-9]+(?:\.[0-9]+)?)\s*GB", gpu_memory)
    if total is not None:
        # The file gives the instance's GPU memory (p4d: "320 GB HBM2"); a per-GPU figure is
        # accepted too.  A family whose memory disagrees with its mapped model is not guessed.
        published = float(total.group(1))
        fits = [
            abs(published / n - gpu.memory_gib) <= _MEMORY_TOLERANCE * gpu.memory_gib
            for n in (count, 1)
        ]
        if not any(fits):
            return None, 0, f"{gpu_memory} of GPU memory does not fit {count} x {gpu.name}"
    return gpu, count, ""
