"""Azure: resource SKUs (azure-mgmt-compute) and the public Retail Prices API.

Calls (see ``shared/reference/provider-apis.md`` §3):

- ``ComputeManagementClient.resource_skus.list(filter="location eq '<region>'")``: vCPUs, memory,
  GPU count and RDMA per VM size.  The API names no GPU model (azure-cli#20077), so
  :data:`FAMILY_GPUS` maps the SKU family to the model; families not in it are reported.
- ``GET https://prices.azure.com/api/retail/prices`` (no auth) per region and VM size, following
  ``NextPageLink``: Linux consumption (on-demand), ``... Spot`` rows (spot) and reservations.
  Reservation rows say ``unitOfMeasure: 1 Hour`` but carry the total for the whole term, so they are
  divided by the hours in the term.  Low-priority (Batch), Windows (" Windows" or, for some H100
  series, " Win"), Cloud Services and non-primary-meter rows are skipped.

Real-world quirks handled here (sources in ``tests/fixtures/README.md``): a ``Zone`` restriction
takes those zones away from the subscription although the size stays offered in the region; some
GPU sizes (ND GB200 v6, ND MI300X v5) carry no ``GPUs`` capability at all, so they are reported
rather than dropped as CPU sizes; family names vary in casing and sometimes contain spaces.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from planner.errors import ProviderError
from planner.gpu_specs import GpuCatalog
from planner.providers.base import (
    HOURS_PER_YEAR,
    Clock,
    DraftingProvider,
    OfferDraft,
    Unmapped,
    require,
    utc_now,
)
from planner.schema import Fabric, Interconnect

RETAIL_PRICES_URL = "https://prices.azure.com/api/retail/prices"
# Savings-plan fields and case-sensitive filters need this preview version (Retail Prices API docs).
RETAIL_API_VERSION = "2023-01-01-preview"
# Reservation ``reservationTerm`` -> years (the row's price is the total for the term).
RESERVATION_YEARS = {"1 Year": 1, "3 Years": 3}


@dataclass(frozen=True)
class FamilyGpu:
    """What a VM family carries: the GPU model, its link, and a GPU-count override if the API errs."""

    gpu: str
    interconnect: Interconnect | None = None  # None: derived from the GPU model and count
    gpu_count: int | None = None
    vcpus_per_gpu: int | None = None  # fractional-GPU families: GPUs = vCPUs / this


# Family (lower case; the API's casing varies) -> GPU.  Models from Azure's VM size pages, as also
# tabulated in SkyPilot's fetch_azure.py.  ND H100 v5 reports GPUs=12 for 8 GPUs (azure-cli#31176);
# NVads A10 v5 sizes below 36 vCPUs carry a fraction of one A10 (Azure NVadsA10v5 size table).
FAMILY_GPUS: dict[str, FamilyGpu] = {
    "standardncadsa100v4family": FamilyGpu("A100-80GB", Interconnect.PCIE),
    "standardndasv4_a100family": FamilyGpu("A100-40GB", Interconnect.NVSWITCH),
    "standardndamsv4_a100family": FamilyGpu("A100-80GB", Interconnect.NVSWITCH),
    "standardncadsh100v5family": FamilyGpu("H100-NVL"),
    "standardndsh100v5family": FamilyGpu("H100", Interconnect.NVSWITCH, gpu_count=8),
    "standardncasv3_t4family": FamilyGpu("T4", Interconnect.PCIE),
    "standardnvadsa10v5family": FamilyGpu("A10", Interconnect.PCIE, vcpus_per_gpu=36),
    "standardncsv3family": FamilyGpu("V100-16GB"),
    "standardndsv2family": FamilyGpu("V100-32GB"),
    "standardndisrh200v5family": FamilyGpu("H200", Interconnect.NVSWITCH),
}

# Azure's GPU sizes are the N families (NC, ND, NG, NV; NP is FPGA): Azure "GPU - accelerated
# compute" size docs.  A size named so but without a ``GPUs`` capability is reported, not dropped.
_GPU_SIZE_NAME = re.compile(r"^Standard_N[CDGV]", re.IGNORECASE)

# Retail rows that are not Linux pay-as-you-go VM meters: Windows licences (SkyPilot fetch_azure.py
# matches " Win" because some H100 series say "... Srs Win") and Cloud Services.
_NOT_LINUX_VM = re.compile(r" Win(dows)?\b| Cloud ?Services\b")


def family_key(family: str) -> str:
    """The FAMILY_GPUS key of a SKU family: casing and spaces vary between API answers."""
    return family.replace(" ", "").lower()


@dataclass(frozen=True)
class VmSize:
    """The spec facts of one VM size in one region."""

    name: str
    family: str
    vcpus: int
    memory_gib: float
    gpus: int | None  # None: the SKU has no GPUs capability
    rdma: bool
    zones: int


def _caps(sku: Any) -> dict[str, str]:
    return {str(c.name): str(c.value) for c in (sku.capabilities or [])}


def _restricted_locations(restriction: Any) -> list[str]:
    # azure-mgmt-compute >= 34 models are dict-like, so the field is ``values_property``; before, ``values``.
    values = getattr(restriction, "values_property", None)
    if values is None and isinstance(getattr(restriction, "values", None), list):
        values = restriction.values
    # ``values`` names the location for both types; ``restrictionInfo.locations`` repeats it.
    info = getattr(restriction, "restriction_info", None)
    located = list(values or []) + list(getattr(info, "locations", None) or [])
    return [str(v).lower() for v in located]


def _restriction_type(restriction: Any) -> str:
    return str(getattr(restriction.type, "value", restriction.type))


def _restricted_zones(restriction: Any) -> set[str]:
    info = getattr(restriction, "restriction_info", None)
    return {str(z) for z in (getattr(info, "zones", None) or [])}


def vm_sizes(skus: Sequence[Any], region: str) -> list[VmSize]:
    """GPU VM sizes available to the subscription in ``region`` from resource SKU objects.

    A ``Location`` restriction removes the size; a ``Zone`` restriction (``restrictionInfo.zones``)
    removes only those zones.  Sizes of a GPU family or with an N-series name but no ``GPUs``
    capability are kept with ``gpus=None`` so the caller can report them.
    """
    sizes = []
    for sku in skus:
        if str(sku.resource_type) != "virtualMachines":
            continue
        caps = _caps(sku)
        name, family = str(sku.name), str(sku.family or "")
        gpus: int | None = None
        if "GPUs" in caps:
            gpus = int(float(caps["GPUs"]))
            if gpus <= 0:
                continue
        elif not (family_key(family) in FAMILY_GPUS or _GPU_SIZE_NAME.match(name)):
            continue  # a CPU size
        restrictions = [r for r in (sku.restrictions or []) if region in _restricted_locations(r)]
        if any(_restriction_type(r) == "Location" for r in restrictions):
            continue
        lost = set().union(
            *(_restricted_zones(r) for r in restrictions if _restriction_type(r) == "Zone")
        )
        zones: set[str] = set()
        for info in sku.location_info or []:
            if str(info.location).lower() == region:
                zones = {str(z) for z in info.zones or []}
        sizes.append(
            VmSize(
                name=name,
                family=family,
                vcpus=int(float(caps.get("vCPUs", "0"))),
                memory_gib=float(caps.get("MemoryGB", "0")),
                gpus=gpus,
                rdma=caps.get("RdmaEnabled", "False").lower() == "true",
                zones=len(zones - lost),
            )
        )
    return sizes


@dataclass(frozen=True)
class RetailPrices:
    """Hourly prices of one VM size in one region, from Retail Prices rows."""

    on_demand: Decimal | None = None
    spot: Decimal | None = None
    reserved_1y: Decimal | None = None
    reserved_3y: Decimal | None = None


def _price(item: dict[str, Any]) -> Decimal:
    try:
        value = Decimal(str(item["retailPrice"]))
    except (KeyError, InvalidOperation) as e:
        raise ProviderError(
            f"Azure retail price row without a usable retailPrice: {item.get('skuId')}"
        ) from e
    return value


def classify(items: Sequence[dict[str, Any]]) -> RetailPrices:
    """Linux on-demand, spot and reservation prices (hourly) from one size's Retail Prices rows."""
    latest: dict[str, tuple[str, Decimal]] = {}

    def keep(kind: str, item: dict[str, Any], value: Decimal) -> None:
        start = str(item.get("effectiveStartDate", ""))
        if value > 0 and (kind not in latest or start > latest[kind][0]):
            latest[kind] = (start, value)

    for item in items:
        product = str(item.get("productName", ""))
        sku_name = str(item.get("skuName", ""))
        if _NOT_LINUX_VM.search(product):
            continue
        if item.get("isPrimaryMeterRegion") is False:
            continue  # the preview API version also returns non-primary meters
        row_type = item.get("type")
        if row_type == "Consumption":
            if sku_name.endswith(" Low Priority"):
                continue  # Batch low-priority: no column in the offer table
            keep("spot" if sku_name.endswith(" Spot") else "on_demand", item, _price(item))
        elif row_type == "Reservation":
            years = RESERVATION_YEARS.get(str(item.get("reservationTerm")))
            if years is not None:
                # The row is the total for the term although unitOfMeasure says "1 Hour".
                keep(f"reserved_{years}y", item, _price(item) / (HOURS_PER_YEAR * years))
    got = {k: v for k, (_, v) in latest.items()}
    return RetailPrices(
        got.get("on_demand"), got.get("spot"), got.get("reserved_1y"), got.get("reserved_3y")
    )


def default_retry_policy() -> Any:
    """azure-core's RetryPolicy: retries 408/429/500/502/503/504 and honours Retry-After."""
    policies = require("azure.core.pipeline.policies", "azure")
    return policies.RetryPolicy(retry_total=8, retry_backoff_factor=0.8, retry_backoff_max=60)


class RetailPricesClient:
    """The unauthenticated Retail Prices API through an azure-core pipeline (retries included)."""

    def __init__(
        self, *, base_url: str = RETAIL_PRICES_URL, retry_policy: Any = None, transport: Any = None
    ) -> None:
        core = require("azure.core", "azure")
        policies = require("azure.core.pipeline.policies", "azure")
        self.base_url = base_url
        self._client = core.PipelineClient(
            base_url,
            policies=[
                policies.HeadersPolicy(),
                policies.UserAgentPolicy("planner-prices"),
                retry_policy or default_retry_policy(),
            ],
            transport=transport,
        )

    def items(self, region: str, arm_sku_name: str) -> list[dict[str, Any]]:
        """Every row for one VM size in one region, following ``NextPageLink``."""
        rest = require("azure.core.rest", "azure")
        exceptions = require("azure.core.exceptions", "azure")
        odata = f"serviceName eq 'Virtual Machines' and armRegionName eq '{region}' and armSkuName eq '{arm_sku_name}'"
        request = rest.HttpRequest(
            "GET",
            self.base_url,
            params={
                "api-version": RETAIL_API_VERSION,
                "$filter": odata,
                "meterRegion": "'primary'",
            },
        )
        items: list[dict[str, Any]] = []
        pages = 0
        while request is not None:
            pages += 1
            try:
                response = self._client.send_request(request)
            except exceptions.AzureError as e:
                raise ProviderError(
                    f"Azure Retail Prices request failed for {arm_sku_name} in {region}: {e}"
                ) from e
            if response.status_code != 200:
                raise ProviderError(
                    f"Azure Retail Prices answered HTTP {response.status_code} for {arm_sku_name} in {region}"
                    f" (page {pages})",
                    hint="retry later; throttling and 5xx were already retried"
                    if response.status_code >= 429
                    else None,
                )
            try:
                body = json.loads(response.text())
                page = body["Items"]
                if not isinstance(page, list):
                    raise TypeError("Items is not a list")
            except (ValueError, KeyError, TypeError) as e:
                raise ProviderError(
                    f"Azure Retail Prices returned a malformed page {pages} for {arm_sku_name} in {region}"
                    f" ({type(e).__name__}: {e})",
                    hint="the response was truncated or the API changed shape; retry the refresh",
                ) from e
            items += page
            link = body.get("NextPageLink")
            request = rest.HttpRequest("GET", str(link)) if link else None
        return items


@contextlib.contextmanager
def _translated(what: str) -> Iterator[None]:
    exceptions = require("azure.core.exceptions", "azure")
    try:
        yield
    except exceptions.ClientAuthenticationError as e:
        raise ProviderError(
            f"Azure refused the credentials for {what}",
            hint="run `az login` or set AZURE_CLIENT_ID/SECRET",
        ) from e
    except exceptions.HttpResponseError as e:
        if e.status_code == 403:
            raise ProviderError(
                f"Azure denied {what}",
                hint="grant Microsoft.Compute/skus/read (the Reader role) on the subscription",
            ) from e
        raise ProviderError(f"Azure {what} failed: HTTP {e.status_code} {e.reason}") from e
    except exceptions.DecodeError as e:
        raise ProviderError(f"Azure {what} returned a malformed response ({e})") from e
    except exceptions.AzureError as e:
        raise ProviderError(f"Azure {what} failed: {e}") from e


class AzureProvider(DraftingProvider):
    """GPU VM sizes (NC, ND, NV families in FAMILY_GPUS) with consumption, spot and reserved prices."""

    name = "azure"
    source = "azure:compute.resourceSkus+prices.azure.com/api/retail/prices"

    def __init__(
        self,
        *,
        subscription_id: str | None = None,
        credential: Any = None,
        compute_client: Any = None,
        retail_client: RetailPricesClient | None = None,
        clock: Clock = utc_now,
        catalog: GpuCatalog | None = None,
    ) -> None:
        super().__init__(clock=clock, catalog=catalog)
        self._subscription_id = subscription_id
        self._credential = credential
        self._compute = compute_client
        self._retail = retail_client

    def _clients(self) -> tuple[Any, RetailPricesClient]:
        if self._compute is None:
            subscription = self._subscription_id or os.environ.get("AZURE_SUBSCRIPTION_ID")
            if not subscription:
                raise ProviderError("no Azure subscription id", hint="set AZURE_SUBSCRIPTION_ID")
            compute = require("azure.mgmt.compute", "azure")
            credential = (
                self._credential or require("azure.identity", "azure").DefaultAzureCredential()
            )
            self._compute = compute.ComputeManagementClient(credential, subscription)
        if self._retail is None:
            self._retail = RetailPricesClient()
        return self._compute, self._retail

    def drafts(
        self, regions: Sequence[str], catalog: GpuCatalog
    ) -> tuple[list[OfferDraft], list[Unmapped]]:
        compute, retail = self._clients()
        drafts: list[OfferDraft] = []
        unmapped: list[Unmapped] = []
        for region in (r.lower() for r in regions):
            with _translated(f"resourceSkus.list in {region}"):
                skus = list(compute.resource_skus.list(filter=f"location eq '{region}'"))
            for size in vm_sizes(skus, region):
                family = FAMILY_GPUS.get(family_key(size.family))
                if size.gpus is None:
                    unmapped.append(
                        Unmapped(self.name, size.name, "GPU size without a GPUs capability")
                    )
                    continue
                if family is None:
                    unmapped.append(
                        Unmapped(self.name, size.name, f"family {size.family!r} not in FAMILY_GPUS")
                    )
                    continue
                count = family.gpu_count or size.gpus
                if family.vcpus_per_gpu and size.vcpus < family.vcpus_per_gpu:
                    unmapped.append(
                        Unmapped(
                            self.name,
                            size.name,
                            f"fractional GPU ({size.vcpus}/{family.vcpus_per_gpu})",
                        )
                    )
                    continue
                if family.vcpus_per_gpu:
                    count = size.vcpus // family.vcpus_per_gpu
                prices = classify(retail.items(region, size.name))
                if prices.on_demand is None:
                    unmapped.append(
                        Unmapped(self.name, f"{region}/{size.name}", "no Linux consumption price")
                    )
                    continue
                drafts.append(
                    OfferDraft(
                        region=region,
                        instance_type=size.name,
                        gpu=catalog.resolve(family.gpu),
                        gpu_count=count,
                        on_demand=prices.on_demand,
                        vcpus=float(size.vcpus),
                        host_memory_gib=size.memory_gib,
                        fabric=Fabric.INFINIBAND if size.rdma else Fabric.ETHERNET,
                        interconnect=family.interconnect if count > 1 else Interconnect.NONE,
                        spot=() if prices.spot is None else (prices.spot,),
                        reserved_1y=prices.reserved_1y,
                        reserved_3y=prices.reserved_3y,
                        zones=size.zones or None,
                    )
                )
        return drafts, unmapped
