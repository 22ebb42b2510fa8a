"""Azure: the public Retail Prices API, with VM specs from the subscription or a bundled table.

Prices need no Azure account.  Specs do: the resource-SKU API answers only for a subscription.
So a refresh reads

- prices from ``GET https://prices.azure.com/api/retail/prices`` (no auth; base URL replaced by
  ``$PLANNER_AZURE_PRICES_URL`` for a mirror), all N-series sizes of a region in one filtered query
  (``serviceName``, ``armRegionName`` and ``contains(armSkuName, 'Standard_N')``) followed through
  ``NextPageLink``, instead of one query per size.  Rows: Linux consumption (on-demand) with its
  nested ``savingsPlan`` rates (only in the 2023-01-01-preview api-version), ``... Spot`` rows, and
  reservations.  Reservation rows say ``unitOfMeasure: 1 Hour`` but carry the total for the whole
  term (provider-apis.md §3a: D8 v4 2377 for 1 Year against 0.46/h), so they are divided by the
  hours in the term; savings-plan rates are hourly.  Low-priority (Batch), Windows (" Windows" or,
  for some H100 series, " Win"), Cloud Services, DevTest and non-primary-meter rows are skipped.
- specs, when ``AZURE_SUBSCRIPTION_ID`` is set (or a compute client is passed), from
  ``ComputeManagementClient.resource_skus.list(filter="location eq '<region>'")`` through
  azure-identity credentials: vCPUs, memory, GPU count, RDMA and the zones open to the
  subscription.  The API names no GPU model (azure-cli#20077), so :data:`FAMILY_GPUS` maps the SKU
  family to the model; families not in it are reported.
- specs, without a subscription, from the bundled table :mod:`planner.providers.azure_sizes`
  (learn.microsoft.com size pages); a priced GPU size the table does not know is reported, never
  guessed.  A size is offered in a region when the Retail Prices API prices it there.

Every row's ``source`` says which spec source was used.  Reservations fill the reserved columns
and savings-plan rates the savings-plan columns; one is never put in the other's place (a size
that lists only a savings plan has no reserved price).

Real-world quirks handled here (sources in ``tests/fixtures/README.md``): a ``Zone`` restriction
takes those zones away from the subscription although the size stays offered in the region; some
GPU sizes (ND GB200 v6, ND MI300X v5) carry no ``GPUs`` capability at all, so they are reported
rather than dropped as CPU sizes; family names vary in casing and sometimes contain spaces.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import urllib.parse
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from planner.errors import MissingDependencyError, ProviderError
from planner.gpu_specs import GpuCatalog
from planner.providers import http
from planner.providers.azure_sizes import size_spec, unmapped_reason
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
from planner.units import USD

log = logging.getLogger(__name__)

RETAIL_PRICES_URL = "https://prices.azure.com/api/retail/prices"
PRICES_URL_ENV = "PLANNER_AZURE_PRICES_URL"
# Savings-plan fields and case-sensitive filters need this preview version (Microsoft Learn, "Azure
# Retail Prices overview": savings-plan rates are only returned by 2023-01-01-preview).
RETAIL_API_VERSION = "2023-01-01-preview"
# Every N-series size (NC, ND, NG, NV, and NP which is FPGA) in one filter.  The API takes OData
# ``contains`` on armSkuName; public Retail Prices clients filter GPU families this way.
GPU_SIZES_FILTER = "contains(armSkuName, 'Standard_N')"
# A region's GPU rows are a few pages of 1000 rows; a mirror that loops its links stops here.
MAX_PAGES = 100
# Reservation ``reservationTerm`` and savings-plan ``term`` -> years.
RESERVATION_YEARS = {"1 Year": 1, "3 Years": 3}

SOURCE_PRICES = "azure:Retail Prices API (prices.azure.com)"
SOURCE_WITH_SUBSCRIPTION = f"{SOURCE_PRICES}; VM specs from the subscription's resource SKUs"
SOURCE_WITHOUT_SUBSCRIPTION = (
    f"{SOURCE_PRICES}; VM specs from the bundled size table (no subscription)"
)

GetJson = Callable[..., Any]  # http.get_json's signature: (url, *, timeout_s, env_var) -> document


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
    savings_plan_1y: Decimal | None = None
    savings_plan_3y: Decimal | None = None


def _decimal(value: Any, item: Mapping[str, Any], field: str) -> Decimal:
    try:
        number = Decimal(str(value))
    except InvalidOperation as e:
        raise ProviderError(
            f"Azure retail price row with an unusable {field}: {item.get('skuId')}"
        ) from e
    if not number.is_finite() or number < 0:
        # was: dropped as "no price", and the size reported as removed
        raise ProviderError(
            f"Azure retail price row with a {field} of {value!r}, not a price: {item.get('skuId')}",
            hint=f"the API or the mirror in {PRICES_URL_ENV} served a broken row; retry the "
            "refresh, or check the mirror",
        )
    return number


def _check_currency(item: Mapping[str, Any]) -> None:
    """Refuse a row priced in another currency than the USD the query asks for (was: EUR prices
    published as USD, a mirror's or a changed default's rows about 4% off, JPY's 150 times)."""
    code = item.get("currencyCode", USD)
    if code != USD:
        raise ProviderError(
            f"Azure retail price row in {code}, not USD: {item.get('skuId')}",
            hint=f"the query asks for currencyCode 'USD'; a mirror in {PRICES_URL_ENV} must "
            "serve USD rows (the planner converts to other currencies on output)",
        )


def _price(item: Mapping[str, Any]) -> Decimal:
    if "retailPrice" not in item:
        raise ProviderError(f"Azure retail price row without a retailPrice: {item.get('skuId')}")
    return _decimal(item["retailPrice"], item, "retailPrice")


def classify(items: Sequence[Mapping[str, Any]]) -> RetailPrices:
    """Linux on-demand, spot, reservation and savings-plan prices (hourly) from one size's rows.

    Of several rows of one kind the newest ``effectiveStartDate`` wins; a $0 row is no price.
    """
    latest: dict[str, tuple[str, Decimal]] = {}

    def keep(kind: str, item: Mapping[str, Any], value: Decimal) -> None:
        start = str(item.get("effectiveStartDate", ""))
        if value > 0 and (kind not in latest or start > latest[kind][0]):
            latest[kind] = (start, value)

    for item in items:
        _check_currency(item)
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
            if sku_name.endswith(" Spot"):
                keep("spot", item, _price(item))
                continue
            keep("on_demand", item, _price(item))
            for plan in item.get("savingsPlan") or []:
                years = RESERVATION_YEARS.get(str(plan.get("term")))
                if years is not None and "retailPrice" in plan:
                    # Savings-plan rates are hourly already (unlike reservation rows).
                    value = _decimal(plan["retailPrice"], item, "savingsPlan retailPrice")
                    keep(f"savings_plan_{years}y", item, value)
        elif row_type == "Reservation":
            years = RESERVATION_YEARS.get(str(item.get("reservationTerm")))
            if years is not None:
                # The row is the total for the term although unitOfMeasure says "1 Hour".
                keep(f"reserved_{years}y", item, _price(item) / (HOURS_PER_YEAR * years))
    got = {k: v for k, (_, v) in latest.items()}
    return RetailPrices(**got)


class RetailPricesClient:
    """The unauthenticated Retail Prices API over plain HTTPS (:mod:`planner.providers.http`).

    ``get_json`` is the HTTP collaborator (tests pass the real one pointed at a local server).
    """

    def __init__(
        self,
        *,
        base_url: str | None = None,
        get_json: GetJson = http.get_json,
        timeout_s: float = http.DEFAULT_TIMEOUT_S,
    ) -> None:
        self.base_url = (base_url or http.base_url(PRICES_URL_ENV, RETAIL_PRICES_URL)).rstrip("/")
        self._get_json = get_json
        self._timeout_s = timeout_s

    def first_page_url(self, region: str) -> str:
        """The query for every N-series row of ``region`` (OData quotes doubled inside values)."""
        quoted = region.replace("'", "''")
        odata = (
            f"serviceName eq 'Virtual Machines' and armRegionName eq '{quoted}'"
            f" and {GPU_SIZES_FILTER}"
        )
        query = urllib.parse.urlencode(
            {
                "api-version": RETAIL_API_VERSION,
                "currencyCode": "'USD'",
                "$filter": odata,
                "meterRegion": "'primary'",
            },
            quote_via=urllib.parse.quote,
        )
        return f"{self.base_url}?{query}"

    def next_page_url(self, link: str) -> str:
        """``NextPageLink``'s query against the configured base URL.

        The link names prices.azure.com (``https://prices.azure.com:443/...&$skip=1000``); replaying
        its query against the base keeps every page on the mirror ``$PLANNER_AZURE_PRICES_URL``
        names, and in the USD the first page asked for.
        """
        query = urllib.parse.urlsplit(link).query
        if "currencycode=" not in query.lower():  # the link keeps the first query's; if not, USD
            query += "&" + urllib.parse.urlencode({"currencyCode": "'USD'"})
        return f"{self.base_url}?{query}"

    def region_items(self, region: str) -> dict[str, list[dict[str, Any]]]:
        """Every N-series row of ``region``, by armSkuName, following ``NextPageLink``."""
        url: str | None = self.first_page_url(region)
        by_size: dict[str, list[dict[str, Any]]] = {}
        seen: set[str] = set()
        pages = 0
        while url is not None:
            if url in seen or pages >= MAX_PAGES:
                raise ProviderError(
                    f"Azure Retail Prices kept paging for {region} (page {pages + 1})",
                    hint=f"check {PRICES_URL_ENV} if it points at a mirror; retry later",
                )
            seen.add(url)
            pages += 1
            body = self._get_json(url, timeout_s=self._timeout_s, env_var=PRICES_URL_ENV)
            page = body.get("Items") if isinstance(body, dict) else None
            if not isinstance(page, list):
                raise ProviderError(
                    f"Azure Retail Prices returned a malformed page {pages} for {region}"
                    " (no Items list)",
                    hint="the response was truncated or the API changed shape; retry the refresh",
                )
            for item in page:
                if isinstance(item, dict) and item.get("armSkuName"):
                    by_size.setdefault(str(item["armSkuName"]), []).append(item)
            link = body.get("NextPageLink")
            url = self.next_page_url(str(link)) if link else None
        log.debug("azure %s: %d N-series sizes priced in %d pages", region, len(by_size), pages)
        return by_size


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
    """Azure GPU VM sizes with consumption, spot, reservation and savings-plan prices.

    With a subscription (``subscription_id``, ``$AZURE_SUBSCRIPTION_ID`` or ``compute_client``) the
    specs come from its resource SKUs; without one, from the bundled size table.
    """

    name = "azure"
    source = SOURCE_WITH_SUBSCRIPTION  # replaced per fetch by the spec source actually used

    def __init__(
        self,
        *,
        subscription_id: str | None = None,
        credential: Any = None,
        compute_client: Any = None,
        retail_client: RetailPricesClient | None = None,
        environ: Mapping[str, str] | None = None,
        clock: Clock = utc_now,
        catalog: GpuCatalog | None = None,
    ) -> None:
        super().__init__(clock=clock, catalog=catalog)
        self._subscription_id = subscription_id
        self._credential = credential
        self._compute = compute_client
        self._retail = retail_client
        self._environ = environ

    def _subscription(self) -> str | None:
        environ = os.environ if self._environ is None else self._environ
        return self._subscription_id or environ.get("AZURE_SUBSCRIPTION_ID", "").strip() or None

    def _compute_client(self) -> Any:
        """The resource-SKU client, or None when no subscription is configured."""
        if self._compute is not None:
            return self._compute
        subscription = self._subscription()
        if subscription is None:
            return None
        try:
            compute = require("azure.mgmt.compute", "azure")
            identity = require("azure.identity", "azure")
        except MissingDependencyError as e:
            raise MissingDependencyError(
                e.message,
                hint="pip install 'planner[azure]', or unset AZURE_SUBSCRIPTION_ID to read VM"
                " specs from the bundled size table",
            ) from e
        credential = self._credential or identity.DefaultAzureCredential()
        self._compute = compute.ComputeManagementClient(credential, subscription)
        return self._compute

    def drafts(
        self, regions: Sequence[str], catalog: GpuCatalog
    ) -> tuple[list[OfferDraft], list[Unmapped]]:
        compute = self._compute_client()
        self.source = SOURCE_WITHOUT_SUBSCRIPTION if compute is None else SOURCE_WITH_SUBSCRIPTION
        if self._retail is None:
            self._retail = RetailPricesClient()
        drafts: list[OfferDraft] = []
        unmapped: list[Unmapped] = []
        for region in (r.strip().lower() for r in regions):
            priced = self._retail.region_items(region)
            if not priced:
                raise ProviderError(
                    f"the Azure Retail Prices API lists no GPU VM sizes in region {region!r}",
                    hint="check the region's name as Azure writes it (eastus, westeurope; "
                    "`az account list-locations -o table`)",
                )
            by_lower = {name.lower(): rows for name, rows in priced.items()}
            if compute is None:
                found = self._from_table(region, priced, catalog)
            else:
                found = self._from_skus(compute, region, by_lower, catalog)
            drafts += found[0]
            unmapped += found[1]
        return drafts, unmapped

    def _from_table(
        self, region: str, priced: Mapping[str, list[dict[str, Any]]], catalog: GpuCatalog
    ) -> tuple[list[OfferDraft], list[Unmapped]]:
        """Offers for the priced sizes of ``region`` the bundled table knows; the rest reported."""
        drafts: list[OfferDraft] = []
        unmapped: list[Unmapped] = []
        for size_name in sorted(priced):
            if not _GPU_SIZE_NAME.match(size_name):
                continue  # NP (FPGA) shares the N prefix
            reason = unmapped_reason(size_name)
            spec = size_spec(size_name)
            if reason is None and spec is None:
                reason = (
                    "not in the planner's table of Azure VM sizes;"
                    " set AZURE_SUBSCRIPTION_ID to read its specs from Azure"
                )
            if reason is not None or spec is None:
                unmapped.append(Unmapped(self.name, size_name, str(reason)))
                continue
            prices = classify(priced[size_name])
            if prices.on_demand is None:
                unmapped.append(
                    Unmapped(self.name, f"{region}/{size_name}", "no Linux consumption price")
                )
                continue
            drafts.append(
                OfferDraft(
                    region=region,
                    instance_type=size_name,
                    gpu=catalog.resolve(spec.gpu),
                    gpu_count=spec.gpu_count,
                    on_demand=prices.on_demand,
                    vcpus=float(spec.vcpus),
                    host_memory_gib=spec.memory_gib,
                    network_gbps=spec.network_gbps,
                    fabric=spec.fabric,
                    interconnect=spec.interconnect,
                    spot=() if prices.spot is None else (prices.spot,),
                    reserved_1y=prices.reserved_1y,
                    reserved_3y=prices.reserved_3y,
                    savings_plan_1y=prices.savings_plan_1y,
                    savings_plan_3y=prices.savings_plan_3y,
                )
            )
        return drafts, unmapped

    def _from_skus(
        self,
        compute: Any,
        region: str,
        priced: Mapping[str, list[dict[str, Any]]],
        catalog: GpuCatalog,
    ) -> tuple[list[OfferDraft], list[Unmapped]]:
        """Offers for the sizes the subscription's resource SKUs list in ``region``.

        ``priced`` is keyed by lower-case armSkuName.
        """
        with _translated(f"resourceSkus.list in {region}"):
            skus = list(compute.resource_skus.list(filter=f"location eq '{region}'"))
        drafts: list[OfferDraft] = []
        unmapped: list[Unmapped] = []
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
            prices = classify(priced.get(size.name.lower(), []))
            if prices.on_demand is None:
                unmapped.append(
                    Unmapped(self.name, f"{region}/{size.name}", "no Linux consumption price")
                )
                continue
            spec = size_spec(size.name)  # no Azure API publishes network bandwidth
            drafts.append(
                OfferDraft(
                    region=region,
                    instance_type=size.name,
                    gpu=catalog.resolve(family.gpu),
                    gpu_count=count,
                    on_demand=prices.on_demand,
                    vcpus=float(size.vcpus),
                    host_memory_gib=size.memory_gib,
                    network_gbps=None if spec is None else spec.network_gbps,
                    fabric=Fabric.INFINIBAND if size.rdma else Fabric.ETHERNET,
                    interconnect=family.interconnect if count > 1 else Interconnect.NONE,
                    spot=() if prices.spot is None else (prices.spot,),
                    reserved_1y=prices.reserved_1y,
                    reserved_3y=prices.reserved_3y,
                    savings_plan_1y=prices.savings_plan_1y,
                    savings_plan_3y=prices.savings_plan_3y,
                    zones=size.zones or None,
                )
            )
        return drafts, unmapped
