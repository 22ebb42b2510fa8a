"""GCP: Compute Engine machine types and Cloud Billing Catalog SKUs.

Calls (see ``shared/reference/provider-apis.md`` §2):

- ``compute_v1.MachineTypesClient.aggregated_list`` filtered to the accelerator-optimised series
  (A2, A3, A4, G2): vCPUs, memory and the attached ``accelerators`` per zone.  The API carries no GPU
  memory and no network bandwidth; GPU memory comes from the catalog (planner.gpu_specs).
- ``billing_v1.CloudCatalogClient.list_skus(parent="services/6F81-5844-456A")`` (Compute Engine)
  for on-demand, spot (``Preemptible``) and 1-/3-year commitment SKUs.  A VM's price is
  ``vCPUs x core SKU + GiB x RAM SKU + GPUs x GPU SKU`` for its series (A4: the GPU SKU covers the VM).
  GPU SKUs are matched to accelerator types by :data:`GPU_SKU_PATTERNS`, an explicit table; SKUs it
  does not match are reported, never guessed.  Money stays Decimal until the table row.

Billing Catalog facts the code relies on (google-cloud-billing ``PricingExpression`` docs and the
OpenCost recording cited in ``tests/fixtures/README.md``): money is ``units`` (a string in JSON) plus
``nanos``; ``tieredRates`` are sorted by ``startUsageAmount`` and a $0 first tier is a free allowance,
not the price; cores and GPUs are priced per ``h``, RAM per ``GiBy.h``; prices come in the
requested ``currencyCode`` (billing-account currencies such as IDR are rejected, not summed as USD).

N1 VMs with attachable GPUs (T4, V100, P100, P4 via ``AcceleratorTypesClient``) are not covered:
every N1 shape x card count would be an offer, and the bundled snapshot covers them.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from planner.errors import ProviderError
from planner.gpu_specs import GpuCatalog
from planner.providers.base import Clock, DraftingProvider, OfferDraft, Unmapped, require, utc_now
from planner.schema import Fabric

# The Cloud Billing service id of Compute Engine (services.list; cloud.google.com/billing/v1/how-tos/catalog-api).
COMPUTE_SERVICE = "services/6F81-5844-456A"

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
    )
)

# Accelerator type -> catalog GPU name (GCP GPU docs: nvidia-tesla-a100 is the 40 GB A100).
ACCELERATOR_GPUS: dict[str, str] = {
    "nvidia-tesla-a100": "A100-40GB",
    "nvidia-a100-80gb": "A100-80GB",
    "nvidia-h100-80gb": "H100",
    "nvidia-h100-mega-80gb": "H100",
    "nvidia-h200-141gb": "H200",
    "nvidia-b200": "B200",
    "nvidia-l4": "L4",
    "nvidia-tesla-t4": "T4",
    "nvidia-tesla-v100": "V100-16GB",
}

# A3 High uses GPUDirect-TCPX and A3 Mega GPUDirect-TCPXO between VMs (GCP "GPU network bandwidth").
_GPUDIRECT_TYPES = re.compile(r"^a3-(highgpu|megagpu)-8g$")

_PREFIX = re.compile(r"^(spot preemptible|preemptible|commitment v1:)\s+")
_COMPONENT = re.compile(r"^(?P<series>[a-z]\d) (?:instance )?(?P<part>core|cpu|ram)\b")
_IGNORED_GPU = re.compile(r"virtual workstation|\bvws\b|^reserved\b|\bdws\b|calendar|flex")


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


# The unit each kind of SKU is priced in: per hour for a core or a GPU, per GiB-hour for RAM.
USAGE_UNITS = {"core": "h", "gpu": "h", "ram": "GiBy.h"}
CURRENCY = "USD"


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
    """Per region and usage: component prices (series, "core"|"ram") and GPU prices (accelerator)."""

    components: dict[tuple[str, str, str, str], Decimal]  # (region, usage, series, part)
    gpus: dict[tuple[str, str, str], Decimal]  # (region, usage, accelerator)
    unmapped: tuple[Unmapped, ...]


def index_skus(skus: Sequence[Any], regions: Sequence[str]) -> SkuPrices:
    """Sort Compute Engine SKUs into component and GPU prices for ``regions``."""
    components: dict[tuple[str, str, str, str], Decimal] = {}
    gpus: dict[tuple[str, str, str], Decimal] = {}
    unmapped: dict[str, Unmapped] = {}
    wanted = set(regions)
    for sku in skus:
        if str(sku.category.resource_family) != "Compute":
            continue
        usage = usage_of(sku)
        here = wanted.intersection(sku.service_regions)
        if usage is None or not here:
            continue
        description = str(sku.description)
        text = _PREFIX.sub("", description.strip().lower())
        group = str(sku.category.resource_group)
        if group == "GPU":
            if _IGNORED_GPU.search(text):
                continue
            accelerator = accelerator_for_sku(description)
            if accelerator is None:
                unmapped[description] = Unmapped(
                    "gcp", description, "GPU SKU not in GPU_SKU_PATTERNS"
                )
                continue
            kind, target = "gpu", accelerator
        else:
            match = _COMPONENT.match(text)
            if match is None or match.group("series") not in SERIES:
                continue
            kind = "ram" if match.group("part") == "ram" else "core"
            target = match.group("series")
        unit = _usage_unit(sku)
        if unit != USAGE_UNITS[kind]:
            unmapped[description] = Unmapped(
                "gcp", description, f"priced per {unit!r}, expected {USAGE_UNITS[kind]!r}"
            )
            continue
        price = unit_price(sku)
        if price is None:
            unmapped[description] = Unmapped("gcp", description, "every price tier is $0")
            continue
        for region in here:
            if kind == "gpu":
                gpus[(region, usage, target)] = price
            else:
                components[(region, usage, target, kind)] = price
    return SkuPrices(components, gpus, tuple(unmapped.values()))


def region_of(zone: str) -> str:
    """``us-central1-a`` -> ``us-central1``."""
    return zone.rsplit("-", 1)[0]


# The variable through which google.auth.default() is pointed at a key file (google-auth docs,
# "How Application Default Credentials works": it is the first place ADC looks).
CREDENTIALS_VARIABLE = "GOOGLE_APPLICATION_CREDENTIALS"
_CREDENTIALS_FIX = (
    f"point {CREDENTIALS_VARIABLE} at a service-account JSON key file,"
    " or unset it and run `gcloud auth application-default login`"
)


def auth_error(error: Exception, what: str, environ: Mapping[str, str]) -> ProviderError:
    """A google.auth failure during ``what`` as a ProviderError naming the credentials in play.

    ``environ`` is what google.auth read (``os.environ``).  The message names the key file's path,
    never its contents, and leaves the vendor's text out: a rejected token exchange can echo parts
    of the request.
    """
    auth_exceptions = require("google.auth.exceptions", "gcp")
    path = environ.get(CREDENTIALS_VARIABLE)
    if isinstance(error, auth_exceptions.DefaultCredentialsError):
        if path and not Path(path).exists():
            return ProviderError(
                f"{CREDENTIALS_VARIABLE} names {path}, which does not exist", hint=_CREDENTIALS_FIX
            )
        if path:
            return ProviderError(
                f"{CREDENTIALS_VARIABLE} names {path}, which is not a usable credentials file",
                hint=_CREDENTIALS_FIX,
            )
        return ProviderError(
            f"no GCP credentials for {what}",
            hint="run `gcloud auth application-default login`, or set"
            f" {CREDENTIALS_VARIABLE} to a service-account JSON key file",
        )
    used = (
        f"the key file {path} ({CREDENTIALS_VARIABLE})"
        if path
        else "application-default credentials"
    )
    return ProviderError(
        f"GCP sign-in with {used} failed during {what} ({type(error).__name__})",
        hint="check network access and that the credentials are still valid; " + _CREDENTIALS_FIX,
    )


@contextlib.contextmanager
def _signed_in(what: str) -> Iterator[None]:
    """Turn google.auth failures (no credentials, a bad key file, a refused token) into ours."""
    auth_exceptions = require("google.auth.exceptions", "gcp")
    try:
        yield
    except auth_exceptions.GoogleAuthError as e:
        raise auth_error(e, what, os.environ) from e


@contextlib.contextmanager
def _translated(what: str, permission: str) -> Iterator[None]:
    exceptions = require("google.api_core.exceptions", "gcp")
    json_format = require("google.protobuf.json_format", "gcp")
    try:
        with _signed_in(what):
            yield
    except (exceptions.PermissionDenied, exceptions.Forbidden, exceptions.Unauthorized) as e:
        raise ProviderError(
            f"GCP denied {what}: {e.message}",
            hint=f"grant {permission} to the credentials in use and enable the API in the project",
        ) from e
    except exceptions.RetryError as e:
        raise ProviderError(
            f"GCP {what} kept failing after retries ({e.cause})",
            hint="retry later (throttled or unavailable)",
        ) from e
    except exceptions.GoogleAPICallError as e:
        raise ProviderError(f"GCP {what} failed: {e.code} {e.message}") from e
    except (json_format.Error, ValueError) as e:  # ParseError and friends: a malformed page
        raise ProviderError(
            f"GCP {what} returned a malformed response ({type(e).__name__}: {e})",
            hint="the response was truncated or the API changed shape; retry the refresh",
        ) from e


def default_retry() -> Any:
    """Retry throttling and transient server errors (``list_skus`` has no default retry)."""
    retry = require("google.api_core.retry", "gcp")
    exceptions = require("google.api_core.exceptions", "gcp")
    predicate = retry.if_exception_type(
        exceptions.TooManyRequests,
        exceptions.InternalServerError,
        exceptions.BadGateway,
        exceptions.ServiceUnavailable,
        exceptions.GatewayTimeout,
    )
    return retry.Retry(
        predicate=predicate, initial=1.0, maximum=30.0, multiplier=2.0, timeout=300.0
    )


def _machine_shapes(
    machine_types: Any, retry: Any, project: str, wanted: set[str]
) -> tuple[dict[tuple[str, str], Any], dict[tuple[str, str], set[str]]]:
    """The GPU series' machine types per (region, name) in the ``wanted`` regions, and the zones
    that offer each."""
    request = {"project": project, "filter": "name eq (" + "|".join(SERIES) + ")-.*"}
    shapes: dict[tuple[str, str], Any] = {}
    zones: dict[tuple[str, str], set[str]] = defaultdict(set)
    with _translated(
        "machineTypes.aggregatedList", "compute.machineTypes.list (roles/compute.viewer)"
    ):
        for scope, scoped in machine_types.aggregated_list(request=request, retry=retry):
            for mt in scoped.machine_types:
                zone = str(mt.zone).rsplit("/", 1)[-1] or scope.rsplit("/", 1)[-1]
                region = region_of(zone)
                if region in wanted and str(mt.name).split("-")[0] in SERIES:
                    shapes[(region, str(mt.name))] = mt
                    zones[(region, str(mt.name))].add(zone)
    return shapes, zones


class GcpProvider(DraftingProvider):
    """A2/A3/A4/G2 machine types with on-demand, spot and committed-use prices."""

    name = "gcp"
    source = "gcp:compute.machineTypes.aggregatedList+cloudbilling.services.skus.list"

    def __init__(
        self,
        *,
        project: str | None = None,
        machine_types_client: Any = None,
        catalog_client: Any = None,
        retry: Any = None,
        clock: Clock = utc_now,
        catalog: GpuCatalog | None = None,
    ) -> None:
        super().__init__(clock=clock, catalog=catalog)
        self._project = project
        self._machine_types = machine_types_client
        self._skus = catalog_client
        self._retry = retry

    def _clients(self) -> tuple[Any, Any, Any, str]:
        # building a client looks up the default credentials (google.auth.default())
        with _signed_in("client setup"):
            if self._machine_types is None:
                compute_v1 = require("google.cloud.compute_v1", "gcp")
                self._machine_types = compute_v1.MachineTypesClient()
            if self._skus is None:
                self._skus = require("google.cloud.billing_v1", "gcp").CloudCatalogClient()
        if self._retry is None:
            self._retry = default_retry()
        if self._project is None:
            google_auth = require("google.auth", "gcp")
            with _translated("project lookup", "a default project (gcloud config set project)"):
                _, project = google_auth.default()
            if not project:
                raise ProviderError(
                    "no GCP project", hint="pass --project or set GOOGLE_CLOUD_PROJECT"
                )
            self._project = str(project)
        return self._machine_types, self._skus, self._retry, self._project

    def drafts(
        self, regions: Sequence[str], catalog: GpuCatalog
    ) -> tuple[list[OfferDraft], list[Unmapped]]:
        machine_types, skus_client, retry, project = self._clients()
        shapes, zones = _machine_shapes(machine_types, retry, project, set(regions))
        with _translated(
            "cloudbilling skus.list", "the Cloud Billing API enabled (billing.services.skus.list)"
        ):
            skus = list(
                skus_client.list_skus(
                    request={"parent": COMPUTE_SERVICE, "currency_code": CURRENCY}, retry=retry
                )
            )
        prices = index_skus(skus, regions)
        unmapped = list(prices.unmapped)
        drafts: list[OfferDraft] = []
        for (region, name), mt in sorted(shapes.items()):
            draft = self._draft(region, name, mt, prices, catalog, len(zones[(region, name)]))
            if isinstance(draft, Unmapped):
                unmapped.append(draft)
            elif draft is not None:
                drafts.append(draft)
        return drafts, unmapped

    def _draft(
        self, region: str, name: str, mt: Any, prices: SkuPrices, catalog: GpuCatalog, zones: int
    ) -> OfferDraft | Unmapped | None:
        """The offer of one machine type in one region, priced from its parts' SKUs; Unmapped
        when its accelerator or its on-demand SKUs are unknown, None for a host-only shape."""
        accelerators = list(mt.accelerators)
        if not accelerators:
            return None  # a host-only shape of the series
        accelerator = str(accelerators[0].guest_accelerator_type)
        count = int(accelerators[0].guest_accelerator_count)
        gpu_name = ACCELERATOR_GPUS.get(accelerator)
        gpu = catalog.get(gpu_name) if gpu_name else None
        if gpu is None:
            return Unmapped(
                self.name, name, f"accelerator {accelerator!r} not mapped to a catalog GPU"
            )
        vcpus = Decimal(int(mt.guest_cpus))
        memory_gib = Decimal(int(mt.memory_mb)) / 1024
        by_usage = {
            usage: self._vm_price(
                prices, region, usage, name, accelerator, count, vcpus, memory_gib
            )
            for usage in USAGE.values()
        }
        on_demand = by_usage["on_demand"]
        if on_demand is None:
            return Unmapped(self.name, f"{region}/{name}", "no on-demand SKUs for its parts")
        return OfferDraft(
            region=region,
            instance_type=name,
            gpu=gpu,
            gpu_count=count,
            on_demand=on_demand,
            vcpus=float(vcpus),
            host_memory_gib=float(memory_gib),
            fabric=Fabric.GPUDIRECT_TCP if _GPUDIRECT_TYPES.match(name) else Fabric.ETHERNET,
            # one regional spot price, no per-zone spread
            spot=() if by_usage["spot"] is None else (by_usage["spot"],),
            reserved_1y=by_usage["reserved_1y"],
            reserved_3y=by_usage["reserved_3y"],
            zones=zones,
        )

    @staticmethod
    def _vm_price(
        prices: SkuPrices,
        region: str,
        usage: str,
        name: str,
        accelerator: str,
        count: int,
        vcpus: Decimal,
        memory_gib: Decimal,
    ) -> Decimal | None:
        series_key = name.split("-")[0]
        series = SERIES[series_key]
        gpu = prices.gpus.get((region, usage, accelerator))
        if gpu is None:
            return None
        total = gpu * count
        if series.gpu_only:
            return total
        core = prices.components.get((region, usage, series_key, "core"))
        ram = prices.components.get((region, usage, series_key, "ram"))
        if core is None or ram is None:
            return None
        return total + core * vcpus + ram * memory_gib
