"""AWS Compute Savings Plans rates from the public Savings Plans offer files (no account needed).

``PLANNER_AWS_PRICING_URL`` (the same base as the EC2 offer files, default
``https://pricing.us-east-1.amazonaws.com``):

``/savingsPlan/v1.0/aws/AWSComputeSavingsPlan/current/region_index.json``
    ``regions[] = {"regionCode", "versionUrl"}`` names each region's current file.
``versionUrl`` (``.../AWSComputeSavingsPlan/<version>/<region>/index.json``)
    ``version``, ``publicationDate``, ``regionCode``; ``products[]`` (``sku``, ``productFamily``,
    ``attributes{purchaseOption, purchaseTerm, ...}``: one product per plan type, term and payment)
    and ``terms.savingsPlan[]`` (``sku``, ``leaseContractLength``, ``rates[]``): each rate is the
    plan's hourly price for one usage of another service (``discountedUsageType``
    ``USE1-BoxUsage:p5.48xlarge``, ``discountedOperation`` ``RunInstances``, ``discountedRate
    {price, currency}``, ``discountedRegionCode``, ``discountedInstanceType``).  AWS documents the
    layout in "Reading the service price list file for a Savings Plan" (AWS Billing user guide).

Kept: the ``ComputeSavingsPlans`` family, No Upfront, 1yr and 3yr; rates for EC2 Linux shared
tenancy (operation ``RunInstances``, usage type ``BoxUsage``) in the region itself (Local Zone rates
name another ``discountedRegionCode``) of the GPU families asked for.  A rate is the effective
hourly price of the instance under the plan (no upfront: nothing to amortise).

A region's file holds every EC2, Fargate and Lambda rate: tens of megabytes.  :func:`parse_savings_plans`
walks it as a stream, decoding one product or one rate at a time, so memory stays flat.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from planner.errors import ProviderError

SAVINGS_PLAN_INDEX_PATH = "/savingsPlan/v1.0/aws/AWSComputeSavingsPlan/current/region_index.json"
COMPUTE_FAMILY = "ComputeSavingsPlans"
PURCHASE_OPTION = "No Upfront"
_TERMS = {"1yr": 1, "3yr": 3}
# "USE1-BoxUsage:p5.48xlarge" (a region prefix; us-east-1 EC2 files drop it, so it is optional).
_BOX_USAGE = re.compile(r"(?:[A-Z0-9]+-)?BoxUsage:(?P<type>[a-z0-9-]+\.[a-z0-9-]+)")
_LINUX_OPERATION = "RunInstances"  # RunInstances:0002 is Windows, :0010 RHEL, ...
_CHUNK = 1 << 16


@dataclass
class SavingsPlanFile:
    """What one region's Compute Savings Plans file holds for the families asked for."""

    region: str
    version: str = ""
    publication_date: str = ""
    # instance type -> years -> hourly USD under a No Upfront Compute Savings Plan
    rates: dict[str, dict[int, Decimal]] = field(default_factory=dict)
    rates_read: int = 0  # every rate in the file, kept or not

    def hourly(self, instance_type: str, years: int) -> Decimal | None:
        return self.rates.get(instance_type, {}).get(years)


def region_file_path(index: Any, region: str) -> str | None:
    """The ``versionUrl`` of ``region`` in the Savings Plans region index (None: not published)."""
    try:
        for entry in index["regions"]:
            if entry["regionCode"] == region:
                return str(entry["versionUrl"])
    except (KeyError, TypeError) as e:
        raise ProviderError(
            f"the AWS Compute Savings Plans region index is malformed ({e!r})",
            hint="the Price List format changed, or the mirror serves another file",
        ) from None
    return None


class _JsonStream:
    """A JSON document read from byte chunks one value at a time (no third-party parser)."""

    def __init__(self, chunks: Iterable[bytes], what: str) -> None:
        self._chunks = iter(chunks)
        self._decode = codecs.getincrementaldecoder("utf-8")()
        self._json = json.JSONDecoder()
        self._buf = ""
        self._pos = 0
        self._eof = False
        self._what = what

    def _more(self, at_least: int = 1) -> bool:
        """Append at least ``at_least`` more characters (fewer at the end); False at the end."""
        parts: list[str] = []
        got = 0
        while got < at_least and not self._eof:
            chunk = next(self._chunks, None)
            text = (
                self._decode.decode(b"", final=True)
                if chunk is None
                else self._decode.decode(chunk)
            )
            self._eof = chunk is None
            parts.append(text)
            got += len(text)
        if not got:
            return False
        self._buf = self._buf[self._pos :] + "".join(parts)
        self._pos = 0
        return True

    def _broken(self, detail: str) -> ProviderError:
        return ProviderError(
            f"{self._what} is not the JSON expected ({detail})",
            hint="the download was cut short or the mirror serves another file; retry",
        )

    def peek(self) -> str:
        """The next character that is not white space (it stays unread)."""
        while True:
            while self._pos < len(self._buf) and self._buf[self._pos] in " \t\r\n":
                self._pos += 1
            if self._pos < len(self._buf):
                return self._buf[self._pos]
            if not self._more(_CHUNK):
                raise self._broken("it ends early")

    def expect(self, char: str) -> None:
        found = self.peek()
        if found != char:
            raise self._broken(f"{char!r} expected, {found!r} found")
        self._pos += 1

    def value(self) -> Any:
        """The next whole JSON value; it is read on until complete, doubling what is held."""
        self.peek()
        while True:
            try:
                value, end = self._json.raw_decode(self._buf, self._pos)
            except json.JSONDecodeError as e:
                if not self._more(max(_CHUNK, len(self._buf) - self._pos)):
                    raise self._broken(str(e)) from None
                continue
            number = isinstance(value, (int, float))
            if number and end == len(self._buf) and not self._eof and self._more(_CHUNK):
                continue  # the number may go on in the next chunk
            self._pos = end
            return value

    def members(self) -> Iterator[str]:
        """The keys of an object; the caller reads (or skips) each key's value before the next."""
        self.expect("{")
        if self.peek() == "}":
            self._pos += 1
            return
        while True:
            key = self.value()
            self.expect(":")
            yield str(key)
            if self.peek() == ",":
                self._pos += 1
                continue
            self.expect("}")
            return

    def items(self) -> Iterator[None]:
        """One step per array element; the caller reads each element before the next."""
        self.expect("[")
        if self.peek() == "]":
            self._pos += 1
            return
        while True:
            yield None
            if self.peek() == ",":
                self._pos += 1
                continue
            self.expect("]")
            return


def parse_savings_plans(
    chunks: Iterable[bytes], region: str, families: Collection[str]
) -> SavingsPlanFile:
    """Stream a regional Compute Savings Plans file (JSON), keeping ``families``' Linux rates.

    Products and terms may come in either order: wanted rates are held per plan SKU and matched to
    the No Upfront 1yr/3yr Compute Savings Plan products at the end.
    """
    out = SavingsPlanFile(region=region)
    stream = _JsonStream(chunks, f"the AWS Compute Savings Plans file for {region}")
    plans: dict[str, int] = {}  # plan SKU -> years, for the kept products
    by_sku: dict[str, dict[str, Decimal]] = {}  # plan SKU -> instance type -> hourly
    for key in stream.members():
        if key == "products":
            for _ in stream.items():
                plan = _plan_years(stream.value())
                if plan is not None:
                    plans[plan[0]] = plan[1]
        elif key == "terms":
            for term_type in stream.members():
                if term_type != "savingsPlan":
                    stream.value()
                    continue
                for _ in stream.items():
                    sku, rates = _term(stream, region, families, out)
                    if rates:
                        by_sku.setdefault(sku, {}).update(rates)
        elif key == "version":
            out.version = str(stream.value())
        elif key == "publicationDate":
            out.publication_date = str(stream.value())
        elif key == "regionCode":
            code = stream.value()
            if code != region:
                raise ProviderError(
                    f"the AWS Compute Savings Plans file for {region} is for region {code!r}",
                    hint="the mirror serves another region's file",
                )
        else:
            stream.value()
    for sku, rates in by_sku.items():
        term = plans.get(sku)
        if term is None:
            continue
        for instance_type, price in rates.items():
            out.rates.setdefault(instance_type, {})[term] = price
    return out


def _plan_years(product: Any) -> tuple[str, int] | None:
    """(SKU, years) of a No Upfront Compute Savings Plan product; None for any other product."""
    if not isinstance(product, dict):
        return None
    attrs = product.get("attributes") or {}
    family = product.get("productFamily") or attrs.get("productFamily")
    years = _TERMS.get(str(attrs.get("purchaseTerm", "")))
    if family != COMPUTE_FAMILY or attrs.get("purchaseOption") != PURCHASE_OPTION or years is None:
        return None
    return str(product.get("sku", "")), years


def _term(
    stream: _JsonStream, region: str, families: Collection[str], out: SavingsPlanFile
) -> tuple[str, dict[str, Decimal]]:
    """One ``terms.savingsPlan[]`` entry: its SKU and the wanted rates, read one rate at a time."""
    sku = ""
    kept: dict[str, Decimal] = {}
    for key in stream.members():
        if key == "sku":
            sku = str(stream.value())
        elif key == "rates":
            for _ in stream.items():
                out.rates_read += 1
                found = _rate(stream.value(), region, families)
                if found is not None:
                    # the dearer of two rates for one type: a plan never understates a price
                    kept[found[0]] = max(found[1], kept.get(found[0], found[1]))
        else:
            stream.value()
    return sku, kept


def _rate(rate: Any, region: str, families: Collection[str]) -> tuple[str, Decimal] | None:
    """(instance type, hourly USD) of an EC2 Linux shared-tenancy rate in ``region``, else None."""
    if not isinstance(rate, dict) or rate.get("discountedOperation") != _LINUX_OPERATION:
        return None
    if rate.get("discountedServiceCode", "AmazonEC2") != "AmazonEC2":
        return None
    if rate.get("discountedRegionCode", region) != region or rate.get("unit", "Hrs") != "Hrs":
        return None
    match = _BOX_USAGE.fullmatch(str(rate.get("discountedUsageType", "")))
    if match is None:
        return None  # dedicated (DedicatedUsage), hosts, Capacity Blocks, Fargate, Lambda
    instance_type = match.group("type")
    if instance_type.split(".", 1)[0] not in families:
        return None
    price = rate.get("discountedRate") or {}
    if price.get("currency", "USD") != "USD":
        return None
    try:
        value = Decimal(str(price["price"]))
    except (KeyError, InvalidOperation):
        raise ProviderError(
            f"AWS Compute Savings Plans rate for {instance_type} in {region} has no price"
            f" ({price!r})",
            hint="the Price List format changed, or the mirror serves another file",
        ) from None
    if not value.is_finite() or value <= 0:
        return None  # a $0 rate is no price (never a free instance)
    return instance_type, value
