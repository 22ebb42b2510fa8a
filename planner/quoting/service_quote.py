"""Quotes for services: the cheapest fleet that carries a load within latency targets, per month.

A job quote (:mod:`planner.quoting.service`) finishes work by a deadline; a service runs for good,
so it is priced per month and per million output tokens.  The load and the targets come from the
workload's ``inference`` section (``requests_per_s`` or ``tokens_per_s``, ``slo``) and may be
replaced by the request's fields (``planner quote --rps 5 --p95-ttft 1s --p95-tpot 60ms``).  The
fleets themselves are sized by :func:`planner.optimize.fleet.size_fleets`.

A vision or diffusion workload (``images_per_s``) is a service too: a request is one image (``--rps``
is images per second), its latency target is the p95 end-to-end latency *per image*
(``--p95-e2e``; TTFT and TPOT do not apply), one replica runs on each GPU, and the fleet is priced
per month and per 1,000 images.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any

import pandas as pd

from planner.catalog import OfferBook, load_offer_book
from planner.catalog.query import OfferFilter, filter_offers, why_no_offers
from planner.errors import (
    ConfigError,
    InfeasibleError,
    UnknownNameError,
    checked_fields,
    is_number,
    option_keyword_error,
)
from planner.gpu_specs import GpuCatalog, load_gpu_catalog
from planner.optimize.fleet import FleetPlan, LoadCurve, serves_images, size_fleets
from planner.quoting.request import (
    SERVICE_ONLY_KEYWORDS,
    canonical_discounts,
    check_shared_fields,
    check_top,
    plain_number,
    positional_error,
)
from planner.units import HOURS_PER_MONTH, unit_factor
from planner.workload import WorkloadSpec, load_workload
from planner.workload.inference import service_lengths
from planner.workload.limits import MAX_LATENCY_MS, MIN_LATENCY_MS
from planner.workload.spec import Kind, ServingSlo, checked_spec

# The most requests per second a service quote takes: well past the largest public services (web
# search answers ~10^5 queries/s); a bigger figure is a unit slip (per month typed per second).
MAX_REQUESTS_PER_S = 1e6
# Where a filter's unknown name is refused, the request field that named it.
_FILTER_FIELDS = {"provider": "providers", "region": "regions", "GPU": "gpus"}


@checked_fields
@dataclass(frozen=True)
class ServiceRequest:
    """What a service quote depends on.  ``None`` load or targets: the workload's own."""

    workload: str | WorkloadSpec
    requests_per_s: float | None = None
    peak_requests_per_s: float | None = None
    peak_hours_per_day: float = 0.0
    ttft_ms_p95: float | None = None
    tpot_ms_p95: float | None = None
    e2e_ms_p95: float | None = None
    providers: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()
    include_reserved: bool = False
    offers_files: tuple[str | Path, ...] = ()
    snapshot_dir: str | Path | None = None
    discounts: Mapping[str, float] = field(default_factory=dict)
    top: int = 5
    # owned machines (hardware files or bundled names), at their cost per machine-hour
    hardware: tuple[str, ...] = ()
    local_cost_basis: str = "amortised"  # amortised (full TCO per hour) | sunk (power only)

    def __post_init__(self) -> None:
        for name in (
            "requests_per_s",
            "peak_requests_per_s",
            "ttft_ms_p95",
            "tpot_ms_p95",
            "e2e_ms_p95",
        ):
            value = getattr(self, name)
            if value is not None and (
                not is_number(value) or not math.isfinite(value) or value <= 0
            ):
                raise ConfigError(
                    f"must be a positive number, got {value!r}",
                    key_path=name,
                    hint=_number_for(name, value)
                    or "e.g. requests_per_s=5, ttft_ms_p95=1000, tpot_ms_p95=60",
                )
        for name in ("ttft_ms_p95", "tpot_ms_p95", "e2e_ms_p95"):
            value = getattr(self, name)
            if value is not None and value < MIN_LATENCY_MS:
                # 0.06 for 60 ms: was "the fastest reachable is 3.5 ms", exit 3, as if the
                # target were real
                raise ConfigError(
                    f"{value:g} ms is below what any GPU service reaches (the targets are in "
                    "milliseconds)",
                    key_path=name,
                    hint=f"did you mean {value * 1000:g} ms ({value:g} s)?",
                )
            most = MAX_LATENCY_MS[name]
            if value is not None and value > most:
                # as a workload file's inference.slo bounds it (was: 1e300 ms taken)
                raise ConfigError(
                    f"{value:g} ms is more than the {most / 1000:,.0f} s a target may be",
                    key_path=name,
                    hint=f"give the p95 target in milliseconds, at most {most:,.0f}",
                )
        for name in ("requests_per_s", "peak_requests_per_s"):
            value = getattr(self, name)
            if value is not None and value > MAX_REQUESTS_PER_S:
                raise ConfigError(
                    f"{value:g} requests/s is more than any service carries (at most "
                    f"{MAX_REQUESTS_PER_S:,.0f})",
                    key_path=name,
                    hint="the load is per second: divide a daily count by 86,400",
                )
        hours = self.peak_hours_per_day
        if not is_number(hours) or not 0 <= hours <= 24:
            raise ConfigError(
                f"must be from 0 to 24 hours, got {hours!r}",
                key_path="peak_hours_per_day",
                hint="e.g. peak_hours_per_day=8 for a working day's peak",
            )
        if hours >= 24 and self.peak_requests_per_s is not None:
            # was: "5 requests/s, 50 for 24 h a day", peak instances on demand all day beside
            # base ones that never see their load
            raise ConfigError(
                f"a peak of {hours:g} hours a day is all day: the peak's load is the base load",
                key_path="peak_hours_per_day",
                hint=f"give {self.peak_requests_per_s:g} requests/s as the load (--rps, "
                "requests_per_s) and no peak, or the peak's hours a day (under 24)",
            )
        if hours > 0 and self.peak_requests_per_s is None:
            raise ConfigError(
                f"{hours:g} peak hours a day, and no peak load: the hours say how long the peak "
                "lasts",
                key_path="peak_hours_per_day",
                hint="give the peak's load too (--peak-rps, peak_requests_per_s), or leave the "
                "peak hours out",
            )
        check_top(self.top)
        # plain numbers in the result (a numpy int64 or a Fraction could not be written as JSON)
        for name in ("top", *sorted(SERVICE_ONLY_KEYWORDS)):
            object.__setattr__(self, name, plain_number(getattr(self, name)))
        check_shared_fields(self)  # as a job quote's request checks them


@dataclass(frozen=True)
class ServiceQuoteResult:
    request: ServiceRequest
    workload: WorkloadSpec
    load: LoadCurve
    slo: ServingSlo
    plans: tuple[FleetPlan, ...]
    book: OfferBook
    output_tokens_per_request: float
    notes: tuple[str, ...] = ()
    unit: str = "tokens"  # tokens (LLM) or images (vision, diffusion: a request is an image)

    @property
    def tokens_per_month(self) -> float:
        return self.load.monthly_requests() * self.output_tokens_per_request

    @property
    def images_per_month(self) -> float:
        return self.load.monthly_requests() if self.unit == "images" else 0.0

    def _load_dict(self) -> dict[str, Any]:
        peak = self.load.peak if self.load.has_peak else None
        hours = self.load.peak_hours_per_day if self.load.has_peak else 0.0
        if self.unit == "images":
            return {
                "images_per_s": self.load.base_requests_per_s,
                "peak_images_per_s": peak,
                "peak_hours_per_day": hours,
                "images_per_month": self.images_per_month,
            }
        return {
            "requests_per_s": self.load.base_requests_per_s,
            "peak_requests_per_s": peak,
            "peak_hours_per_day": hours,
            "output_tokens_per_request": self.output_tokens_per_request,
            "output_tokens_per_month": self.tokens_per_month,
        }

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of a service quote (``planner quote --format json``)."""
        out: dict[str, Any] = {
            "workload": self.workload.name,
            "kind": "service",
            "load": self._load_dict(),
            "slo": {k: v for k, v in self.slo.model_dump().items() if v is not None},
            "plans": [p.to_dict() for p in self.plans],
            "notes": list(self.notes),
            "snapshot": {
                "as_of": self.book.as_of,
                "source": self.book.source_text,
                "parts": [s.to_dict() for s in self.book.sources],
            },
        }
        if self.unit == "images":
            out["unit"] = "images"
        return out


# The provider name of owned machines (as in job quotes).
OWNED = "owned"


def _job_keyword_error(name: str, known: list[str]) -> ConfigError | None:
    """The error for a keyword of a job's quote handed to quote_service() (was: deadline_hours
    answered "did you mean peak_hours_per_day?")."""
    from planner.quoting.request import QuoteRequest

    if name in known or name not in {f.name for f in dataclass_fields(QuoteRequest)}:
        return None
    return ConfigError(
        f"quote_service() takes no {name!r}: a service runs for months at its load and is "
        f"priced per month; {name} is for a job run once (training, a batch), quoted by quote()",
        key_path=name,
        hint=f"planner.quote(workload=..., {name}=...) for a job; a service's quote takes its "
        "load (requests_per_s) and latency targets",
    )


_NUMBER_AND_UNIT = re.compile(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*?)\s*")


def _number_for(name: str, value: object) -> str | None:
    """The keyword to write for a number typed as text with or without its unit (``"1s"`` for
    ``ttft_ms_p95``: 1000; ``"300/min"`` for ``requests_per_s``: 5); None for other values.
    Was "e.g. ttft_ms_p95=1000" alone, or a command-line option's spelling."""
    match = _NUMBER_AND_UNIT.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return None
    number = float(match.group(1))
    if not match.group(2):
        return f"write {name}={number:g}: a number, not text"
    factor = unit_factor("ms" if name.endswith("_ms_p95") else "per_s", match.group(2))
    if factor is None or number <= 0:
        return None
    unit = "milliseconds" if name.endswith("_ms_p95") else "a rate per second"
    typed = match.group(0).strip()
    return (
        f"write {name}={number * factor:.6g}: the keyword takes {unit} ({typed!r} is "
        f"{number * factor:.6g})"
    )


def make_service_request(request: object = None, /, **fields: Any) -> ServiceRequest:
    """A :class:`ServiceRequest` from keywords named as its fields, from a request, or from a
    request with some fields replaced (as :func:`planner.quoting.request.make_request` reads a job
    quote's).  A misspelt keyword is a ConfigError with suggestions, not a TypeError."""
    known = [f.name for f in dataclass_fields(ServiceRequest)]
    for name in fields:
        if name not in known:
            raise (
                _job_keyword_error(name, known)
                or option_keyword_error("quote_service", name, known)
                or UnknownNameError("quote_service() keyword argument", name, known)
            )
    if isinstance(request, ServiceRequest):
        return replace(request, **fields) if fields else request
    if request is not None:
        # was "expected a ServiceRequest or keywords, got str", with another workload's call
        raise positional_error(request, fields, "quote_service", "ServiceRequest")
    if "workload" not in fields:
        raise ConfigError(
            "workload is required",
            key_path="workload",
            hint="quote_service(workload='llm-serving-7b')",
        )
    return ServiceRequest(**fields)


def is_service(spec: WorkloadSpec) -> bool:
    """An inference workload with a load to carry (rather than tokens to generate by a deadline)."""
    return spec.kind is Kind.INFERENCE and spec.inference is not None and spec.inference.serving


def _spec(req: ServiceRequest) -> WorkloadSpec:
    if isinstance(req.workload, WorkloadSpec):
        spec = checked_spec(req.workload)  # a model_copy(update=...) skipped every check
    else:
        if not str(req.workload).strip():
            raise ConfigError("workload name is blank", key_path="workload")
        try:
            spec = load_workload(req.workload)
        except ConfigError as e:  # name the field a library caller or the CLI passed it in
            if e.file is None and e.key_path is None:
                raise e.located_at("workload") from None
            raise
    if spec.kind is not Kind.INFERENCE or spec.inference is None:
        raise ConfigError(
            f"{spec.name} is a {spec.kind.value} workload; a service quote serves an inference "
            "workload",
            key_path="workload",
            hint="quote training jobs with --deadline; `planner workloads` lists llm-serving-7b, "
            "llm-serving-70b",
        )
    return spec


def _load(req: ServiceRequest, spec: WorkloadSpec) -> LoadCurve:
    inf = spec.inference
    assert inf is not None
    if not inf.serving and req.requests_per_s is not None:
        # was: the job's tokens dropped without a word, a month-long service priced at the rate
        raise ConfigError(
            f"{spec.name} is a batch job (a fixed amount of inference): quote it with --deadline "
            "(quote(workload=..., deadline_hours=...)); a service quote carries a load all month",
            key_path="requests_per_s",
            hint="drop the load, or give the service's load in a workload "
            "(inference.tokens_per_s or requests_per_s, and hours)",
        )
    own = inf.load_images_per_s if serves_images(spec) else inf.load_requests_per_s
    base = req.requests_per_s if req.requests_per_s is not None else own
    if base is None:
        raise ConfigError(
            f"{spec.name} has no load to serve",
            key_path="requests_per_s",
            hint="give the requests per second (--rps 5), or inference.requests_per_s in the "
            "workload file",
        )
    peak = req.peak_requests_per_s
    if peak is not None and peak < base:
        raise ConfigError(
            f"the peak load {peak:g} requests/s is below the base load, {base:.3g} requests/s",
            key_path="peak_requests_per_s",
            hint="the peak is the busiest hours' load: at least --rps",
        )
    if peak is not None and req.peak_hours_per_day <= 0:
        raise ConfigError(
            "a peak load needs the hours it lasts each day",
            key_path="peak_hours_per_day",
            hint="e.g. --peak-hours 8",
        )
    return LoadCurve(float(base), peak, float(req.peak_hours_per_day))


def _slo(req: ServiceRequest, spec: WorkloadSpec) -> ServingSlo:
    inf = spec.inference
    assert inf is not None
    given = {
        "ttft_ms_p95": req.ttft_ms_p95,
        "tpot_ms_p95": req.tpot_ms_p95,
        "e2e_ms_p95": req.e2e_ms_p95,
    }
    if serves_images(spec):
        for key, flag in (("ttft_ms_p95", "--p95-ttft"), ("tpot_ms_p95", "--p95-tpot")):
            if given[key] is not None or getattr(inf.slo, key) is not None:
                raise ConfigError(
                    f"{spec.name} serves images: a {flag} target applies to token streams",
                    key_path=key,
                    hint="give the p95 latency per image with --p95-e2e (e.g. --p95-e2e 50ms)",
                )
    slo = inf.slo.model_copy(update={k: v for k, v in given.items() if v is not None})
    problem = slo.conflict()
    if problem is not None:
        raise ConfigError(
            problem,
            key_path="ttft_ms_p95" if given["ttft_ms_p95"] is not None else "e2e_ms_p95",
            hint="lower the TTFT target (--p95-ttft) or raise the end-to-end one (--p95-e2e); "
            "a target left out is the workload file's inference.slo",
        )
    return slo


def _owned_offers(req: ServiceRequest, catalog: GpuCatalog) -> pd.DataFrame:
    """The owned machines as offer rows: a machine-hour at its cost basis, at most as many
    instances as there are machines."""
    if OWNED in req.providers and not req.hardware:
        raise ConfigError(
            "provider owned means your own machines, and no hardware was given",
            key_path="hardware",
            hint="pass --hardware FILE (a hardware YAML file, or a bundled name such as "
            "workstation-rtx3060)",
        )
    # loaded only when machines are given: a cloud quote starts without the ownership modules
    from planner.ownership.costs import machine_cost_usd_per_hour
    from planner.ownership.hardware import load_machines

    rows = []
    for hw in load_machines(req.hardware):
        rows.append(
            {
                "provider": OWNED,
                "region": hw.name,
                "instance_type": hw.name,
                "gpu_model": catalog.resolve(hw.gpu).name,
                "gpu_count": hw.gpus_per_machine,
                "interconnect": hw.interconnect.value,
                "price_on_demand_usd_per_hour": machine_cost_usd_per_hour(hw, req.local_cost_basis),
                "max_instances": hw.machines,
                "purchase_label": f"owned-{req.local_cost_basis}",
                "source": f"{hw.source or hw.name} ({req.local_cost_basis} cost per machine-hour)",
                "as_of": "",
            }
        )
    return pd.DataFrame(rows)


def quote_service(req: ServiceRequest, book: OfferBook | None = None) -> ServiceQuoteResult:
    """The cheapest fleets for ``req``, cheapest first (at most ``req.top``).

    Raises :class:`~planner.errors.InfeasibleError` (exit 3 at the CLI) when no fleet meets the
    targets, naming the best latency reachable.
    """
    spec = _spec(req)
    load = _load(req, spec)
    slo = _slo(req, spec)
    catalog = load_gpu_catalog()
    book = book or load_offer_book(list(req.offers_files), snapshot_dir=req.snapshot_dir)
    cloud = [p for p in req.providers if p != OWNED]
    try:
        offers = filter_offers(
            book.offers,
            OfferFilter(providers=tuple(cloud), regions=req.regions, gpus=req.gpus),
            catalog,
        )
    except UnknownNameError as e:  # name the request field (the CLI shows it as its option)
        field_name = _FILTER_FIELDS.get(e.kind)
        raise (e.located_at(field_name) if field_name and e.key_path is None else e) from None
    if req.providers and not cloud:  # --provider owned: only the machines given
        offers = offers.iloc[0:0]
    owned = _owned_offers(req, catalog)
    if not owned.empty:
        offers = pd.concat([offers, owned], ignore_index=True)
    if offers.empty:
        # was: "no offer fits one replica of the model; allow bigger GPUs ... or serve int4
        # weights": the provider, region or GPU choice left nothing, not the model's size
        flt = OfferFilter(providers=tuple(cloud), regions=req.regions, gpus=req.gpus)
        raise InfeasibleError(
            "no offer to serve this workload on: "
            + (why_no_offers(book.offers, flt, catalog) or "no offers are loaded"),
            hint="widen or drop the provider, region or GPU choice (--provider, --region, --gpu)",
        )
    # keyed as the offers spell the providers, an unknown one refused with the nearest (was: a
    # misspelt or capitalised provider's discount dropped without a word, as the job quote does not)
    discounts = canonical_discounts(req.discounts, book.offers)
    fleets = size_fleets(
        offers, spec, load, slo, catalog, commitments=req.include_reserved, discounts=discounts
    )
    plans = list(fleets.plans[: req.top])
    labelled = [replace(plans[0], label="cheapest")] + [replace(p, label="") for p in plans[1:]]
    if req.include_reserved and plans[0].purchase_base != "on-demand":
        on_demand = next((p for p in fleets.plans if p.purchase_base == "on-demand"), None)
        if on_demand is not None and on_demand not in plans:
            labelled.append(replace(on_demand, label="cheapest without a commitment"))
    images = serves_images(spec)
    notes = [
        "spot capacity is not counted on: a service must keep its targets when spot capacity is "
        "taken back",
    ]
    if images:
        notes.append(
            "one replica per GPU; a request is one image and the latency is per image (queue + "
            "its engine call)"
        )
    if not req.include_reserved:
        notes.append("commitments (1y/3y reserved, savings plans) not priced: add --reserved")
    hours = spec.inference.hours if spec.inference is not None else None
    if hours is not None and hours < HOURS_PER_MONTH:
        # was: priced for a month without a word, the workload's hours dropped
        notes.append(
            f"inference.hours ({hours:g} h) is shorter than a month: the fleet is priced per "
            f"month ({HOURS_PER_MONTH:.0f} h); for {hours:g} h of serving the cost is "
            f"{hours / HOURS_PER_MONTH:.3g} of the monthly figure, a fleet billed by the hour"
        )
    notes += list(fleets.excluded)
    return ServiceQuoteResult(
        request=req,
        workload=spec,
        load=load,
        slo=slo,
        plans=tuple(labelled),
        book=book,
        output_tokens_per_request=0.0 if images else service_lengths(spec)[1].mean,
        notes=tuple(notes),
        unit="images" if images else "tokens",
    )
