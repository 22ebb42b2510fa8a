"""GCP: GPU machines priced from Cloud Billing Catalog SKUs; specs from the Compute API or a table.

Calls (see ``shared/reference/provider-apis.md`` §2):

- ``billing_v1.CloudCatalogClient.list_skus(parent="services/6F81-5844-456A")`` (Compute Engine)
  for on-demand, spot (``Preemptible``) and 1-/3-year commitment (``Commit1Yr``/``Commit3Yr``) SKUs,
  sorted by :mod:`planner.providers.gcp_skus`.  A VM's price is
  ``vCPUs x core SKU + GiB x RAM SKU + GPUs x GPU SKU`` for its series (A4: the GPU SKU covers the
  VM); committed-use prices are built the same way from the commitment SKUs and are published as
  ``listed`` reserved prices when every part has one.  Money stays Decimal until the table row.
- ``compute_v1.MachineTypesClient.aggregated_list`` filtered to the accelerator-optimised series
  (A2, A3, A4, G2) when a project and application-default credentials exist: vCPUs, memory and the
  attached ``accelerators`` per zone.  Otherwise the shapes come from the bundled table in
  :mod:`planner.providers.gcp_machines` (also the source of network bandwidth, which the API lacks,
  and of the N1 + T4/V100/P100/P4 offers: an n1-standard host with 8 vCPUs per GPU).  Each row's
  ``source`` says which: :data:`SOURCE_API` or :data:`SOURCE_BUNDLED`.

Sign-in, endpoints, mirrors and error translation live in :mod:`planner.providers.gcp_auth`.  A
refresh fetches one region at a time; the adapter lists the catalog and the machine types once and
reuses them for every region of that refresh.
"""

from __future__ import annotations

import logging
import os
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from planner.errors import ProviderError
from planner.gpu_specs import GpuCatalog
from planner.providers.base import Clock, DraftingProvider, OfferDraft, Unmapped, require, utc_now
from planner.providers.gcp_auth import (
    DefaultCredentials,
    GcpSettings,
    application_default,
    billing_call,
    catalog_client,
    compute_call,
    default_retry,
    google_default,
    machine_types_client,
    translated,
)
from planner.providers.gcp_machines import (
    ACCELERATOR_GPUS,
    ACCELERATOR_OPTIMIZED,
    MachineShape,
    n1_shapes,
    network_gbps,
)
from planner.providers.gcp_skus import (
    COMPUTE_SERVICE,
    CURRENCY,
    USAGE,
    SkuPrices,
    accelerator_for_sku,
    index_skus,
    money,
    vm_price,
)
from planner.providers.http import DEFAULT_TIMEOUT_S
from planner.schema import Fabric

log = logging.getLogger(__name__)

# The series whose machine types carry their GPUs (the Compute API filter).
ACCELERATOR_SERIES = ("a2", "a3", "a4", "g2")
SOURCE_API = "gcp:compute.machineTypes.aggregatedList+cloudbilling.services.skus.list"
SOURCE_BUNDLED = "gcp:cloudbilling.services.skus.list+bundled machine types (GCP machine-type docs)"
# The Billing Catalog's largest page (ListSkusRequest.page_size, default and maximum 5000).
PAGE_SIZE = 5000

# A3 High and Edge use GPUDirect-TCPX, A3 Mega GPUDirect-TCPXO, A3 Ultra and A4 GPUDirect RDMA over
# RoCE between VMs (GCP "GPU network bandwidth" overview table).
_GPUDIRECT_TCP = re.compile(r"^a3-(highgpu|megagpu|edgegpu)-8g$")
_RDMA = re.compile(r"^(a3-ultragpu|a4-highgpu)-8g$")

__all__ = ["GcpProvider", "accelerator_for_sku", "money", "region_of"]


def region_of(zone: str) -> str:
    """``us-central1-a`` -> ``us-central1``."""
    return zone.rsplit("-", 1)[0]


def fabric_of(machine_type: str) -> Fabric:
    if _GPUDIRECT_TCP.match(machine_type):
        return Fabric.GPUDIRECT_TCP
    if _RDMA.match(machine_type):
        return Fabric.ROCE
    return Fabric.ETHERNET


@dataclass(frozen=True)
class ApiShapes:
    """Machine types the Compute API listed: per (region, name) the shape and its zone count."""

    shapes: dict[tuple[str, str], MachineShape]
    zones: dict[tuple[str, str], int]


def shape_of(mt: Any) -> MachineShape | None:
    """A compute_v1 MachineType as a shape (None for a host-only shape of the series)."""
    accelerators = list(mt.accelerators)
    if not accelerators:
        return None
    name = str(mt.name)
    return MachineShape(
        name=name,
        accelerator=str(accelerators[0].guest_accelerator_type),
        gpu_count=int(accelerators[0].guest_accelerator_count),
        vcpus=int(mt.guest_cpus),
        memory_gib=Decimal(int(mt.memory_mb)) / 1024,
        network_gbps=network_gbps(name),
    )


class GcpProvider(DraftingProvider):
    """A2/A3/A4/G2 machine types and N1 + attached GPUs, with on-demand, spot and committed-use
    prices."""

    name = "gcp"
    source = SOURCE_API  # set per fetch to the spec source actually used

    def __init__(
        self,
        *,
        project: str | None = None,
        machine_types_client: Any = None,
        catalog_client: Any = None,
        retry: Any = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        environ: Mapping[str, str] | None = None,
        default_credentials: DefaultCredentials | None = None,
        clock: Clock = utc_now,
        catalog: GpuCatalog | None = None,
    ) -> None:
        super().__init__(clock=clock, catalog=catalog)
        self._project = project
        self._machine_types = machine_types_client
        self._skus = catalog_client
        self._retry = retry
        self._timeout_s = timeout_s
        self._environ = environ
        self._default_credentials = default_credentials or google_default
        self._adc: tuple[Any, str | None] | None = None
        self._adc_looked_up = False
        self._prices: SkuPrices | None = None
        self._specs: ApiShapes | None = None
        self._specs_looked_up = False

    # ------------------------------------------------------------------ sign-in and clients

    def _settings(self) -> GcpSettings:
        return GcpSettings.from_environ(os.environ if self._environ is None else self._environ)

    def _application_default(
        self, settings: GcpSettings, *, what: str, required: bool
    ) -> tuple[Any, str | None] | None:
        if not self._adc_looked_up or (required and self._adc is None):
            self._adc = application_default(
                settings, self._default_credentials, what=what, required=required
            )
            self._adc_looked_up = True
        return self._adc

    def _retry_policy(self) -> Any:
        if self._retry is None:
            self._retry = default_retry()
        return self._retry

    def _sku_prices(self, settings: GcpSettings) -> SkuPrices:
        """Every Compute Engine SKU price, listed once per adapter."""
        if self._prices is not None:
            return self._prices
        if self._skus is None:
            credentials = None
            if not settings.api_key:
                adc = self._application_default(
                    settings, what="the Cloud Billing Catalog", required=True
                )
                credentials = adc[0] if adc else None
            self._skus = catalog_client(settings, credentials)
        with translated(billing_call(settings), settings, self._timeout_s):
            request = {"parent": COMPUTE_SERVICE, "currency_code": CURRENCY, "page_size": PAGE_SIZE}
            pages = self._skus.list_skus(
                request=request, retry=self._retry_policy(), timeout=self._timeout_s
            )
            self._prices = index_skus(pages)
        return self._prices

    def _machine_types_source(self, settings: GcpSettings) -> tuple[Any, str] | None:
        """The Compute client and project to list machine types with, or None: use the table."""
        if self._machine_types is not None:
            project = self._project
            if project is None:
                adc = self._application_default(settings, what="project lookup", required=True)
                project = adc[1] if adc else None
            if not project:
                raise ProviderError(
                    "no GCP project for machineTypes.aggregatedList",
                    hint="pass project= or set GOOGLE_CLOUD_PROJECT",
                )
            return self._machine_types, project
        adc = self._application_default(settings, what="machine-type lookup", required=False)
        project = self._project or (adc[1] if adc else None)
        if adc is None or not project:
            log.info("no GCP project and credentials: machine shapes from the bundled table")
            return None
        self._machine_types = machine_types_client(settings, adc[0])
        return self._machine_types, project

    def _api_shapes(self, settings: GcpSettings) -> ApiShapes | None:
        """The accelerator-optimised machine types of every zone (None: use the bundled table)."""
        if self._specs_looked_up:
            return self._specs
        source = self._machine_types_source(settings)
        if source is not None:
            client, project = source
            self._specs = self._list_shapes(client, project, settings)
        self._specs_looked_up = True
        return self._specs

    def _list_shapes(self, client: Any, project: str, settings: GcpSettings) -> ApiShapes | None:
        exceptions = require("google.api_core.exceptions", "gcp")
        request = {"project": project, "filter": f"name eq ({'|'.join(ACCELERATOR_SERIES)})-.*"}
        shapes: dict[tuple[str, str], MachineShape] = {}
        zones: dict[tuple[str, str], set[str]] = defaultdict(set)
        try:
            with translated(compute_call(settings), settings, self._timeout_s):
                pages = client.aggregated_list(
                    request=request, retry=self._retry_policy(), timeout=self._timeout_s
                )
                for scope, scoped in pages:
                    for mt in scoped.machine_types:
                        zone = str(mt.zone).rsplit("/", 1)[-1] or scope.rsplit("/", 1)[-1]
                        name = str(mt.name)
                        shape = shape_of(mt)
                        if shape is None or name.split("-")[0] not in ACCELERATOR_SERIES:
                            continue
                        shapes[(region_of(zone), name)] = shape
                        zones[(region_of(zone), name)].add(zone)
        except ProviderError as e:
            # A project without the Compute API (or the role to list it) still gets prices: the
            # machine shapes come from the bundled table and the rows' source says so.
            if not isinstance(e.__cause__, exceptions.PermissionDenied | exceptions.Forbidden):
                raise
            log.warning("%s; machine shapes from the bundled table (hint: %s)", e.message, e.hint)
            return None
        return ApiShapes(shapes, {key: len(found) for key, found in zones.items()})

    # ------------------------------------------------------------------ offers

    def drafts(
        self, regions: Sequence[str], catalog: GpuCatalog
    ) -> tuple[list[OfferDraft], list[Unmapped]]:
        settings = self._settings()
        prices = self._sku_prices(settings)
        api = self._api_shapes(settings)
        self.source = SOURCE_API if api is not None else SOURCE_BUNDLED
        unmapped = prices.unmapped_in(regions)
        drafts: list[OfferDraft] = []
        wanted = set(regions)
        candidates: list[tuple[str, MachineShape, int | None, bool]] = []
        if api is not None:
            for (region, _), shape in sorted(api.shapes.items()):
                if region in wanted:
                    candidates.append((region, shape, api.zones[(region, shape.name)], True))
        else:
            for region in regions:
                for shape in ACCELERATOR_OPTIMIZED.values():
                    candidates.append((region, shape, None, False))
        for region in regions:  # N1 hosts are not in the Compute API filter: always the table
            for shape in n1_shapes():
                candidates.append((region, shape, None, False))
        for region, shape, zones, listed in candidates:
            draft = self._draft(region, shape, prices, catalog, zones, listed=listed)
            if isinstance(draft, Unmapped):
                unmapped.append(draft)
            elif draft is not None:
                drafts.append(draft)
        return drafts, unmapped

    def _draft(
        self,
        region: str,
        shape: MachineShape,
        prices: SkuPrices,
        catalog: GpuCatalog,
        zones: int | None,
        *,
        listed: bool,
    ) -> OfferDraft | Unmapped | None:
        """The offer of one shape in one region, priced from its parts' SKUs.

        ``listed``: the Compute API listed the shape in the region, so missing SKUs are reported.
        A table shape whose GPU has no on-demand SKU in the region is not offered there (None).
        Unmapped when the accelerator is not a catalog GPU or a part of the VM has no price.
        """
        name = shape.name
        if not listed and prices.gpu(region, "on_demand", shape.accelerator) is None:
            return None
        gpu_name = ACCELERATOR_GPUS.get(shape.accelerator)
        gpu = catalog.get(gpu_name) if gpu_name else None
        if gpu is None:
            missing = f" ({gpu_name} is not in the GPU catalog, planner gpus)" if gpu_name else ""
            return Unmapped(
                self.name,
                name,
                f"accelerator {shape.accelerator!r} not mapped to a catalog GPU{missing}",
            )
        vcpus = Decimal(shape.vcpus)
        by_usage = {
            usage: vm_price(
                prices,
                region,
                usage,
                shape.series,
                shape.accelerator,
                shape.gpu_count,
                vcpus,
                shape.memory_gib,
            )
            for usage in USAGE.values()
        }
        on_demand = by_usage["on_demand"]
        if on_demand is None:
            return Unmapped(self.name, f"{region}/{name}", "no on-demand SKUs for its parts")
        spot = by_usage["spot"]
        return OfferDraft(
            region=region,
            instance_type=name,
            gpu=gpu,
            gpu_count=shape.gpu_count,
            on_demand=on_demand,
            vcpus=float(vcpus),
            host_memory_gib=float(shape.memory_gib),
            network_gbps=shape.network_gbps,
            fabric=fabric_of(name),
            spot=() if spot is None else (spot,),  # one regional spot price, no per-zone spread
            reserved_1y=by_usage["reserved_1y"],
            reserved_3y=by_usage["reserved_3y"],
            zones=zones,
        )
