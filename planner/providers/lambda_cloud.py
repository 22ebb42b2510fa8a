"""Lambda Cloud: on-demand GPU instances from the instance-types API.

One call (Lambda Cloud API, ``GET /api/v1/instance-types``; OpenAPI spec at
``https://cloud.lambda.ai/api/v1/openapi.json``, docs at ``docs.lambda.ai/api/cloud``):

- base URL ``https://cloud.lambda.ai/api/v1``, replaced by ``$PLANNER_LAMBDA_API_URL`` for a
  mirror; the API key is read from ``$LAMBDA_API_KEY`` and sent as ``Authorization: Bearer`` (the
  API also takes it as the HTTP Basic user name).  The key never appears in a message.
- the answer is ``{"data": {"<name>": {"instance_type": {"name", "description",
  "gpu_description", "price_cents_per_hour", "specs": {"vcpus", "memory_gib", "storage_gib",
  "gpus"}}, "regions_with_capacity_available": [{"name", "description"}]}}}``.  The whole catalog
  comes in one answer, fetched once per adapter and reused for every region asked for.

Mapping:

- the GPU model comes from the instance name (``gpu_8x_h100_sxm5``: 8 GPUs, H100, SXM5), with the
  memory in ``gpu_description`` (``"A100 (80 GB SXM4)"``) choosing within a family; a GPU the
  table below does not know, or a description that contradicts the name, is reported as unmapped,
  never guessed.  Instances without GPUs (``cpu_*``) are skipped.
- the GPU-GPU link follows ``planner.catalog.reference.normalise_lambda``: one GPU, none; SXM
  boards and the 8x A100, NVSwitch; the 8x V100, NVLink; the rest PCIe.  Ethernet, bandwidth not
  published.
- price = ``price_cents_per_hour`` / 100, whole instance; no spot market, no reservations listed.

Regions.  ``regions_with_capacity_available`` says where an instance can be launched *this
minute*; Lambda's prices are the same in every region (``shared/reference/prices-next/
lambda_gpu.csv``: one price per type in all 17 regions).  A planner prices work for later, so
capacity is not availability: every GPU instance type is offered in every requested region Lambda
operates, sold out or not.  Otherwise a refresh taken while 8x H100 is sold out would drop it from
the snapshot and every plan.  The regions Lambda operates are :data:`KNOWN_REGIONS` plus any region
the answer names; an unknown region is an error with suggestions.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from planner.errors import ProviderError, suggestion_hint
from planner.gpu_specs import GpuCatalog, GpuSpec
from planner.providers import http
from planner.providers.base import Clock, DraftingProvider, OfferDraft, Unmapped, utc_now
from planner.schema import Interconnect

log = logging.getLogger(__name__)

API_URL = "https://cloud.lambda.ai/api/v1"
API_URL_ENV = "PLANNER_LAMBDA_API_URL"
API_KEY_ENV = "LAMBDA_API_KEY"
KEY_PAGE = "https://cloud.lambda.ai/api-keys"

GetJson = Callable[..., Any]  # http.get_json's signature: (url, *, headers, timeout_s, env_var)

# Lambda's public regions as its catalog lists them (SkyPilot catalog v9 lambda/vms.csv, the rows in
# shared/reference/prices-next/lambda_gpu.csv): accepted even when nothing has capacity there.
KNOWN_REGIONS: tuple[str, ...] = (
    "asia-northeast-1",
    "asia-northeast-2",
    "asia-south-1",
    "australia-east-1",
    "europe-central-1",
    "europe-south-1",
    "me-west-1",
    "us-east-1",
    "us-east-2",
    "us-east-3",
    "us-midwest-1",
    "us-south-1",
    "us-south-2",
    "us-south-3",
    "us-west-1",
    "us-west-2",
    "us-west-3",
)

# The GPU token of an instance name -> catalog candidates, the name's default first.  From
# Lambda's instance descriptions (lambda.ai/instances, gpu_description in the API): "A100 (40 GB
# SXM4)", "A100 (80 GB SXM4)", "H100 (80 GB SXM5)", "H100 (80 GB PCIe)", "GH200 (96 GB)", "B200
# (180 GB SXM6)", "A10 (24 GB PCIe)", "A6000 (48 GB)", "Tesla V100 (16 GB)", "RTX 6000 (24 GB)";
# the same table as planner/catalog/reference.py LAMBDA_GPU.
LAMBDA_GPUS: dict[str, tuple[str, ...]] = {
    "a10": ("A10",),
    "a100": ("A100-40GB", "A100-80GB"),
    "a6000": ("RTXA6000",),
    "b200": ("B200",),
    "gh200": ("GH200",),
    "h100": ("H100", "H100-PCIe"),
    "h200": ("H200",),
    "rtx6000": ("Quadro-RTX6000",),
    "v100": ("V100-16GB", "V100-32GB"),
}

# gpu_<count>x_<gpu>[_<qualifier>...], e.g. gpu_8x_a100_80gb_sxm4, gpu_1x_h100_pcie.
_NAME = re.compile(r"^gpu_(?P<count>\d+)x_(?P<gpu>[a-z0-9]+)(?P<rest>(?:_[a-z0-9]+)*)$")
# "A100 (80 GB SXM4)" -> 80
_DESCRIBED_GB = re.compile(r"\((\d+(?:\.\d+)?)\s*GB", re.IGNORECASE)


def gpu_for(name: str, description: str, catalog: GpuCatalog) -> GpuSpec | str:
    """The catalog GPU of instance ``name``, or the reason it cannot be mapped.

    The name picks the family (``a100``) and, through its qualifiers, the member (``80gb``,
    ``pcie``); the GB figure in ``description`` must agree with the catalog's memory, and picks the
    member when the name does not say (``gpu_1x_a100`` described as 80 GB).
    """
    match = _NAME.match(name)
    if match is None:
        return "instance name not of the form gpu_<count>x_<gpu>"
    candidates = LAMBDA_GPUS.get(match["gpu"])
    if candidates is None:
        return f"GPU {match['gpu']!r} not in the Lambda GPU table"
    qualifiers = set(match["rest"].split("_")) - {""}
    specs = [catalog.resolve(c) for c in candidates]
    if "pcie" in qualifiers:
        specs = [s for s in specs if "pcie" in s.name.lower()] or specs
    elif len(specs) > 1:
        specs = [s for s in specs if "pcie" not in s.name.lower()]
    sized = [q for q in qualifiers if q.endswith("gb") and q[:-2].isdigit()]
    described = _DESCRIBED_GB.search(description)
    wanted = float(sized[0][:-2]) if sized else None
    if described is not None:
        said = float(described.group(1))
        if wanted is not None and abs(said - wanted) > 1:
            return f"name says {wanted:g} GB per GPU, description {description!r}"
        wanted = said
    if wanted is None:
        return specs[0]
    fits = [s for s in specs if abs(s.memory_gib - wanted) <= 0.1 * wanted]
    if not fits:
        return f"no {match['gpu'].upper()} with {wanted:g} GB in the GPU catalog ({description!r})"
    return fits[0]


def interconnect(name: str, gpu_count: int) -> Interconnect:
    """The GPU-GPU link, by planner.catalog.reference.normalise_lambda's rules."""
    if gpu_count <= 1:
        return Interconnect.NONE
    if "sxm" in name or name.startswith("gpu_8x_a100"):
        return Interconnect.NVSWITCH
    return Interconnect.NVLINK if name.startswith("gpu_8x_v100") else Interconnect.PCIE


def _cents(value: Any, name: str) -> Decimal:
    try:
        cents = Decimal(str(value))
    except InvalidOperation:
        raise ProviderError(
            f"Lambda instance type {name} has an unusable price_cents_per_hour: {value!r}"
        ) from None
    if not cents.is_finite() or cents < 0:
        # was: reported as "no price" and the type as removed, accepted with --accept-changes
        raise ProviderError(
            f"Lambda instance type {name} has a price_cents_per_hour of {value!r}, not a price",
            hint=f"the API or the mirror in {API_URL_ENV} served a broken answer; retry the "
            "refresh, or check the mirror",
        )
    return cents / 100


class LambdaProvider(DraftingProvider):
    """Lambda Cloud's GPU instance types at their on-demand price, in every requested region."""

    name = "lambda"
    source = "lambda:Lambda Cloud API (cloud.lambda.ai/api/v1/instance-types)"

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        get_json: GetJson = http.get_json,
        environ: Mapping[str, str] | None = None,
        timeout_s: float = http.DEFAULT_TIMEOUT_S,
        clock: Clock = utc_now,
        catalog: GpuCatalog | None = None,
    ) -> None:
        super().__init__(clock=clock, catalog=catalog)
        self._api_key = api_key
        self._base_url = base_url
        self._get_json = get_json
        self._environ = environ
        self._timeout_s = timeout_s
        self._types: dict[str, Any] | None = None
        self._failure: ProviderError | None = None

    def _key(self) -> str:
        environ = os.environ if self._environ is None else self._environ
        given = self._api_key or environ.get(API_KEY_ENV)
        key = (given or "").strip()
        if not key:
            # (exported empty, LAMBDA_API_KEY=, is blank: was "not set")
            raise ProviderError(
                f"{API_KEY_ENV} is {'not set' if given is None else 'blank'}: Lambda's "
                "instance-types API needs an API key",
                hint=f"create a key at {KEY_PAGE} (Lambda Cloud console, API keys) and"
                f" export {API_KEY_ENV}=<key>",
            )
        return key

    def instance_types(self) -> dict[str, Any]:
        """The ``data`` object of the instance-types answer (fetched once, then reused).

        A failed fetch is not repeated for the next region: the answer is the same for every
        region, so an unreachable endpoint costs one timeout per refresh, not one per region.
        """
        if self._failure is not None:
            raise self._failure
        if self._types is None:
            try:
                self._types = self._fetch_types()
            except ProviderError as e:
                self._failure = e
                raise
        return self._types

    def _fetch_types(self) -> dict[str, Any]:
        key = self._key()
        environ = os.environ if self._environ is None else self._environ
        mirror = environ.get(API_URL_ENV, "").strip()
        if mirror:
            mirror = http.checked_mirror_url(API_URL_ENV, mirror)
        base = (self._base_url or mirror or API_URL).rstrip("/")
        url = f"{base}/instance-types"
        body = self._get_json(
            url,
            headers={"Authorization": f"Bearer {key}", "Accept": "application/json"},
            timeout_s=self._timeout_s,
            env_var=API_URL_ENV,
        )
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, dict):
            raise ProviderError(
                f"{http.shown_url(url)} returned no 'data' object of instance types",
                hint="the API changed shape or a mirror served something else; retry later",
            )
        return data

    def drafts(
        self, regions: Sequence[str], catalog: GpuCatalog
    ) -> tuple[list[OfferDraft], list[Unmapped]]:
        types = self.instance_types()
        known = set(KNOWN_REGIONS)
        for entry in types.values():
            known |= {str(r.get("name")) for r in _capacity(entry)}
        for region in regions:
            if region not in known:
                raise ProviderError(
                    f"Lambda has no region {region!r}",
                    hint=suggestion_hint("Lambda region", region, known),
                )
        offers, unmapped = self._offers(types, catalog)
        drafts = [OfferDraft(region=region, **fields) for region in regions for fields in offers]
        return drafts, unmapped

    def _offers(
        self, types: Mapping[str, Any], catalog: GpuCatalog
    ) -> tuple[list[dict[str, Any]], list[Unmapped]]:
        """The region-free part of each GPU instance type's offer, and what could not be mapped."""
        offers: list[dict[str, Any]] = []
        unmapped: list[Unmapped] = []
        for key in sorted(types):
            entry = types[key]
            spec = entry.get("instance_type") if isinstance(entry, dict) else None
            if not isinstance(spec, dict):
                unmapped.append(Unmapped(self.name, str(key), "no instance_type object"))
                continue
            name = str(spec.get("name") or key)
            hardware = spec.get("specs") or {}
            named = _NAME.match(name)
            if name.startswith("cpu_") or (named is None and not hardware.get("gpus")):
                continue  # a CPU instance
            gpus = int(hardware.get("gpus") or 0) if "gpus" in hardware else None
            if named is not None and gpus is not None and gpus != int(named["count"]):
                unmapped.append(
                    Unmapped(
                        self.name, name, f"the name's GPU count disagrees with specs.gpus={gpus}"
                    )
                )
                continue
            gpus = gpus if gpus is not None else int(named["count"]) if named else 0
            if gpus <= 0:
                continue
            gpu = gpu_for(name, str(spec.get("gpu_description") or ""), catalog)
            if isinstance(gpu, str):
                unmapped.append(Unmapped(self.name, name, gpu))
                continue
            price = _cents(spec.get("price_cents_per_hour"), name)
            if price <= 0:
                unmapped.append(Unmapped(self.name, name, "no price"))
                continue
            offers.append(
                {
                    "instance_type": name,
                    "gpu": gpu,
                    "gpu_count": gpus,
                    "on_demand": price,
                    "vcpus": _number(hardware.get("vcpus")),
                    "host_memory_gib": _number(hardware.get("memory_gib")),
                    "interconnect": interconnect(name, gpus),
                }
            )
        return offers, unmapped


def _capacity(entry: Any) -> list[dict[str, Any]]:
    regions = entry.get("regions_with_capacity_available") if isinstance(entry, dict) else None
    return [r for r in regions or [] if isinstance(r, dict) and r.get("name")]


def _number(value: Any) -> float | None:
    return None if value is None else float(value)
