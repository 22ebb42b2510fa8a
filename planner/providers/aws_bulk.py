"""AWS prices that need no account: the Price List bulk offer files and the Spot Advisor data.

Public endpoints (no credentials; each base URL can be replaced by an environment variable that
names a mirror, a proxy or an air-gapped copy, read when a refresh runs):

``PLANNER_AWS_PRICING_URL`` (default ``https://pricing.us-east-1.amazonaws.com``)
    ``/offers/v1.0/aws/AmazonEC2/current/region_index.json`` names each region's current offer
    file (``regions.<code>.currentVersionUrl``); the same path ending in ``.csv`` is the CSV form:
    five metadata rows (FormatVersion, Disclaimer, Publication Date, Version, OfferCode), the
    header row, then one row per (SKU, term, price dimension).  AWS documents both in "Using the
    bulk API" (docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/using-ppslong.html).  The
    us-east-1 file is gigabytes: it is streamed line by line and only the GPU families the planner
    maps are parsed (:func:`parse_offer_file`).
    The same base serves the Compute Savings Plans files
    (``/savingsPlan/v1.0/aws/AWSComputeSavingsPlan/current/region_index.json`` and each region's
    ``index.json``; :mod:`planner.providers.aws_savings`), streamed the same way.
``PLANNER_AWS_SPOT_ADVISOR_URL`` (default ``https://spot-bid-advisor.s3.amazonaws.com``)
    ``/spot-advisor-data.json``, the data behind the Spot Instance Advisor page
    (aws.amazon.com/ec2/spot/instance-advisor/): ``ranges[]`` (interruption buckets) and
    ``spot_advisor.<region>.Linux.<type> = {"s": savings %, "r": bucket index}``.
``PLANNER_AWS_SPOT_PRICES_URL`` (default ``https://website.spot.ec2.aws.a2z.com``)
    ``/spot.json``, the regional spot prices behind aws.amazon.com/ec2/spot/pricing/, a JSON
    document that older copies wrap as ``callback({...});``.

A variable whose value ends in ``.json`` (or ``.csv``) names the file itself instead of a base.
Everything here parses plain data; the HTTP reads go through the stdlib helper :mod:`planner.providers.http`, so an
unreachable endpoint is one :class:`~planner.errors.ProviderError` naming the URL and the variable.
"""

from __future__ import annotations

import csv
import json
import logging
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from http.client import HTTPException
from typing import IO, Any

from planner.errors import ProviderError, suggestion_hint
from planner.providers.aws_prices import ListPrice, ReservedTerm
from planner.providers.aws_savings import (
    SAVINGS_PLAN_INDEX_PATH,
    SavingsPlanFile,
    parse_savings_plans,
    region_file_path,
)
from planner.providers.http import DEFAULT_TIMEOUT_S, base_url, not_json, open_url, shown_url

log = logging.getLogger(__name__)

PRICING_ENV = "PLANNER_AWS_PRICING_URL"
ADVISOR_ENV = "PLANNER_AWS_SPOT_ADVISOR_URL"
SPOT_PRICES_ENV = "PLANNER_AWS_SPOT_PRICES_URL"
PRICING_DEFAULT = "https://pricing.us-east-1.amazonaws.com"
ADVISOR_DEFAULT = "https://spot-bid-advisor.s3.amazonaws.com"
SPOT_PRICES_DEFAULT = "https://website.spot.ec2.aws.a2z.com"
REGION_INDEX_PATH = "/offers/v1.0/aws/AmazonEC2/current/region_index.json"

# Instance family -> the planner's GPU catalog name.  AWS's "Accelerated computing instance
# specifications" page (docs.aws.amazon.com/ec2/latest/instancetypes/ac.html) names the GPU of each
# family; a name the catalog lacks (T4g when this was last checked) makes the family's
# types Unmapped, never guessed.
FAMILY_GPU: dict[str, str] = {
    "p3": "V100-16GB",
    "p3dn": "V100-32GB",
    "p4d": "A100-40GB",
    "p4de": "A100-80GB",
    "p5": "H100",
    "p5e": "H200",
    "p5en": "H200",
    "p6-b200": "B200",
    "p6-b300": "B300",
    "p6e-gb200": "GB200",  # P6e-GB200 UltraServers: the Blackwell GPUs of GB200 NVL72 racks
    "g4dn": "T4",
    "g5": "A10G",
    "g5g": "T4g",
    "g6": "L4",
    "g6e": "L40S",
    "gr6": "L4",
    "g7e": "RTX-PRO-6000",
}

# Sizes with an Elastic Fabric Adapter, from the "EFA" column of the same AWS page (the offer file
# has no EFA attribute; the credentialed path reads NetworkInfo.EfaSupported instead).
EFA_TYPES = frozenset(
    {
        "p3dn.24xlarge", "p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5e.48xlarge",
        "p5en.48xlarge", "p6-b200.48xlarge", "p6-b300.48xlarge",
        "g4dn.8xlarge", "g4dn.12xlarge", "g4dn.16xlarge", "g4dn.metal",
        "g5.8xlarge", "g5.12xlarge", "g5.16xlarge", "g5.24xlarge", "g5.48xlarge",
        "g6.8xlarge", "g6.12xlarge", "g6.16xlarge", "g6.24xlarge", "g6.48xlarge",
        "g6e.8xlarge", "g6e.12xlarge", "g6e.16xlarge", "g6e.24xlarge", "g6e.48xlarge",
    }
)  # fmt: skip

# The Spot Advisor's open-ended ">20%" bucket has no upper bound.  30 %/month is the value the
# bundled snapshot already uses for it (planner/catalog/reference.py): deliberately pessimistic,
# and an interruption every ~3.3 days of a month is where spot stops paying for most long jobs.
OPEN_BUCKET_PCT = 30.0

# Legacy region names of spot.json (the ec2 pricing-page convention, still used by older copies).
SPOT_REGION_ALIASES = {
    "us-east": "us-east-1",
    "us-west": "us-west-1",
    "eu-ireland": "eu-west-1",
    "eu-frankfurt": "eu-central-1",
    "apac-sin": "ap-southeast-1",
    "apac-syd": "ap-southeast-2",
    "apac-tokyo": "ap-northeast-1",
}

# The offer-file columns read here (the real header has ~100; see tests/fixtures/README.md).
_COLUMNS = (
    "SKU",
    "OfferTermCode",
    "TermType",
    "PriceDescription",
    "Unit",
    "PricePerUnit",
    "Currency",
    "LeaseContractLength",
    "PurchaseOption",
    "OfferingClass",
    "Product Family",
    "Instance Type",
    "Instance Family",
    "vCPU",
    "Memory",
    "Network Performance",
    "Tenancy",
    "Operating System",
    "License Model",
    "usageType",
    "operation",
    "CapacityStatus",
    "GPU",
    "GPU Memory",
    "Pre Installed S/W",
)
# Newer columns, absent from older files: checked only when present.
_OPTIONAL_COLUMNS = ("MarketOption", "Region Code", "EndingRange")
_INSTANCE_FAMILIES = frozenset({"Compute Instance", "Compute Instance (bare metal)"})
_HEADER_SEARCH_ROWS = 20


@dataclass(frozen=True)
class BulkProduct:
    """An instance type's attributes as the offer file publishes them (strings as published)."""

    instance_type: str
    vcpus: float | None
    memory_gib: float | None
    gpus: str  # "8"; fractional GPUs appear as "0.125"; "" when not published
    gpu_memory: str  # "640 GB HBM3" (the instance's total), "NA" or ""
    network: str  # "3200 Gigabit", "Up to 25 Gigabit"


@dataclass
class OfferFile:
    """What one region's offer file holds for the families asked for."""

    region: str
    version: str = ""
    publication_date: str = ""
    products: dict[str, BulkProduct] = field(default_factory=dict)
    prices: dict[str, ListPrice] = field(default_factory=dict)
    capacity_blocks: set[str] = field(default_factory=set)  # types with a Capacity Block row
    zero_on_demand: set[str] = field(default_factory=set)  # a $0 on-demand row, no other price
    other_gpu_types: set[str] = field(default_factory=set)  # "GPU instance" types of other families
    lines: int = 0  # lines read
    rows_parsed: int = 0  # lines that passed the cheap pre-filter and were parsed as CSV


def _number(text: str) -> float | None:
    match = re.match(r"\s*([0-9]+(?:\.[0-9]+)?)", text or "")
    return float(match.group(1)) if match else None


def _price(text: str, what: str) -> Decimal:
    try:
        value = Decimal(text)
    except (InvalidOperation, ValueError):
        raise ProviderError(f"AWS offer file: {what} is not a number ({text!r})") from None
    if not value.is_finite() or value < 0:
        raise ProviderError(f"AWS offer file: {what} is not a price ({text!r})")
    return value


def _family_pattern(families: Collection[str]) -> re.Pattern[bytes]:
    """Matches a quoted instance type of one of ``families`` anywhere in a raw CSV line."""
    names = sorted((re.escape(f) for f in families), key=len, reverse=True)
    return re.compile(rb'"(?:' + "|".join(names).encode() + rb')\.[0-9a-z-]+"')


def _records(lines: Iterable[bytes]) -> Iterator[bytes]:
    """Raw CSV records: a quoted field holding a line break spans lines (odd quote count)."""
    pending = b""
    for line in lines:
        pending = pending + line if pending else line
        if pending.count(b'"') % 2 == 0:
            yield pending
            pending = b""
    if pending:
        yield pending


def _row(record: bytes) -> list[str]:
    return next(csv.reader([record.decode("utf-8")]))


def _capacity_block(get: Callable[[str], str]) -> bool:
    """A Capacity Block for ML row (MarketOption CapacityBlock, operation RunInstances:CB): its
    on-demand term is $0 because the real price is quoted per reservation."""
    return (
        get("MarketOption") == "CapacityBlock"
        or "CapacityBlock" in get("usageType")
        or get("operation").endswith(":CB")
        or "Capacity Block" in get("PriceDescription")
    )


def parse_offer_file(lines: Iterable[bytes], region: str, families: Collection[str]) -> OfferFile:
    """Parse a streamed regional EC2 offer file (CSV), keeping only ``families``' Linux rows.

    Kept: shared tenancy, no pre-installed software, "No License required", CapacityStatus
    "Used" (the other statuses price unused or allocated reservations), region ``region``.  An
    on-demand row is the price when its hourly rate is above $0 and it is not a Capacity Block row;
    reserved rows are summed per (SKU, term): the ``Hrs`` rate plus the ``Quantity`` upfront fee.
    Lines are pre-filtered on their raw bytes, so only rows naming a wanted family (or the "GPU
    instance" family, to report what is not mapped) are decoded: memory stays flat however large
    the file.
    """
    parser = _OfferParser(OfferFile(region=region), families)
    records = _records(lines)
    parser.start(_read_header(records, parser.out))
    wanted = _family_pattern(families)
    last = b""
    for record in records:
        parser.out.lines += 1
        last = record
        if b'"GPU instance"' in record or wanted.search(record) is not None:
            parser.add(_row(record))
    _check_complete(last, parser.width, region)
    return parser.finish()


def _check_complete(last: bytes, width: int, region: str) -> None:
    """Refuse a file whose last record is short of the header's columns: the download was cut off
    mid-row (was: the rows before it published, reported as "row count fell from 11 to 2", with
    a hint to accept the drop)."""
    if not last.strip():
        return
    try:
        fields = len(_row(last))
    except (UnicodeDecodeError, csv.Error, StopIteration):
        fields = 0
    if fields < width:
        raise ProviderError(
            f"the AWS offer file for {region} ends mid-row ({fields} of {width} columns in its "
            "last line): the download was cut short",
            hint=f"retry the refresh; a mirror in {PRICING_ENV} must serve the whole file",
        )


class _OfferParser:
    """Accumulates the kept rows of one offer file (products, on-demand, reserved per term)."""

    def __init__(self, out: OfferFile, families: Collection[str]) -> None:
        self.out = out
        self.families = families
        self.index: dict[str, int] = {}
        self.width = 0
        self.on_demand: dict[str, tuple[str, Decimal]] = {}  # type -> (SKU, hourly)
        self.reserved: dict[tuple[str, str], dict[str, Any]] = {}  # (SKU, term code) -> term

    def start(self, header: list[str]) -> None:
        self.index = {name: i for i, name in enumerate(header)}
        self.width = len(header)
        missing = [c for c in _COLUMNS if c not in self.index]
        if missing:
            raise ProviderError(
                f"the AWS offer file for {self.out.region} lacks the columns {', '.join(missing)}",
                hint="the Price List format changed, or the mirror serves another file",
            )

    def add(self, row: list[str]) -> None:
        self.out.rows_parsed += 1
        if len(row) < self.width:
            return  # a truncated last line (the stream ended mid-row)

        def get(name: str) -> str:
            i = self.index.get(name)
            return row[i] if i is not None else ""

        if not _keeps(get, self.out.region):
            return
        instance_type = get("Instance Type")
        if instance_type.split(".", 1)[0] not in self.families:
            if get("Instance Family") == "GPU instance":
                self.out.other_gpu_types.add(instance_type)
            return
        if instance_type not in self.out.products:
            self.out.products[instance_type] = BulkProduct(
                instance_type=instance_type,
                vcpus=_number(get("vCPU")),
                memory_gib=_number(get("Memory")),
                gpus=get("GPU").strip(),
                gpu_memory=get("GPU Memory").strip(),
                network=get("Network Performance"),
            )
        if get("TermType") == "OnDemand":
            self._on_demand(get, instance_type)
        elif get("TermType") == "Reserved":
            self._reserved(get, instance_type)

    def _on_demand(self, get: Callable[[str], str], instance_type: str) -> None:
        if get("Unit") != "Hrs" or get("EndingRange") not in ("", "Inf"):
            return  # the free-tier pseudo-product has a bounded range
        price = _price(get("PricePerUnit"), f"{instance_type} on-demand price")
        if _capacity_block(get):
            self.out.capacity_blocks.add(instance_type)
        elif price == 0:
            self.out.zero_on_demand.add(instance_type)
        else:
            sku = get("SKU")
            seen = self.on_demand.get(instance_type)
            if seen is not None and seen[0] != sku and seen[1] != price:
                raise ProviderError(
                    f"the AWS offer file lists two Linux on-demand prices for {instance_type}"
                    f" in {self.out.region} ({seen[1]} and {price})",
                    hint="the Price List added an attribute these filters do not separate",
                )
            self.on_demand[instance_type] = (sku, price)

    def _reserved(self, get: Callable[[str], str], instance_type: str) -> None:
        match = re.fullmatch(r"(\d)yr", get("LeaseContractLength"))
        unit = get("Unit")
        if match is None or unit not in ("Hrs", "Quantity") or _capacity_block(get):
            return
        term = self.reserved.setdefault(
            (get("SKU"), get("OfferTermCode")),
            {
                "years": int(match.group(1)),
                "class": get("OfferingClass"),
                "option": get("PurchaseOption"),
                "Hrs": Decimal(0),
                "Quantity": Decimal(0),
            },
        )
        term[unit] += _price(get("PricePerUnit"), f"{instance_type} reserved price")

    def finish(self) -> OfferFile:
        """Each priced type with the reserved terms of the SKU that carries its on-demand price."""
        for instance_type, (sku, hourly) in self.on_demand.items():
            terms = tuple(
                ReservedTerm(
                    years=t["years"],
                    offering_class=t["class"],
                    purchase_option=t["option"],
                    hourly_usd=t["Hrs"],
                    upfront_usd=t["Quantity"],
                )
                for (term_sku, _), t in sorted(self.reserved.items())
                if term_sku == sku
            )
            self.out.prices[instance_type] = ListPrice(instance_type, hourly, terms)
        self.out.zero_on_demand -= set(self.out.prices)
        return self.out


def _read_header(records: Iterator[bytes], out: OfferFile) -> list[str]:
    """Consume the metadata rows (keeping Version and Publication Date) and return the header."""
    for _ in range(_HEADER_SEARCH_ROWS):
        record = next(records, None)
        if record is None:
            break
        try:
            row = _row(record)
        except (UnicodeDecodeError, csv.Error, StopIteration):
            break
        if row and row[0] == "SKU":
            return row
        if len(row) >= 2:
            if row[0] == "Version":
                out.version = row[1]
            elif row[0] == "Publication Date":
                out.publication_date = row[1]
            elif row[0] == "OfferCode" and row[1] != "AmazonEC2":
                raise ProviderError(f"the AWS offer file for {out.region} is for {row[1]}, not EC2")
    raise ProviderError(
        f"the AWS offer file for {out.region} has no header row (SKU, OfferTermCode, ...)",
        hint="the download is not a Price List CSV; check the mirror, or retry",
    )


def _keeps(get: Callable[[str], str], region: str) -> bool:
    region_code = get("Region Code")
    return (
        get("Product Family") in _INSTANCE_FAMILIES
        and get("Operating System") == "Linux"
        and get("Tenancy") == "Shared"
        and get("Pre Installed S/W") == "NA"
        and get("License Model") == "No License required"
        and get("CapacityStatus") == "Used"
        and get("Currency") == "USD"
        and region_code in ("", region)
    )


# ---------------------------------------------------------------- Spot Advisor and spot.json


def bucket_upper_bound(bucket: Mapping[str, Any]) -> float:
    """The upper bound (%/month) of one Spot Advisor ``ranges`` entry.

    Read from the label ("<5%" -> 5, "5-10%" -> 10): the entry's ``max`` is the chart's scale
    (5, 11, 16, 22, 100 in the published file), not the bucket's bound.  The open ">20%" bucket
    gets :data:`OPEN_BUCKET_PCT`.
    """
    label = str(bucket.get("label", "")).replace(" ", "")
    if label.startswith(">"):
        return OPEN_BUCKET_PCT
    match = re.fullmatch(r"(?:<|\d+(?:\.\d+)?-)(\d+(?:\.\d+)?)%", label)
    if match is None:
        raise ProviderError(
            f"the Spot Advisor data has an interruption bucket labelled {label!r}",
            hint="the Spot Advisor format changed; report it",
        )
    return float(match.group(1))


def interruption_pct(doc: Any, region: str) -> dict[str, float]:
    """Linux interruption frequency (bucket upper bound, %/month) per instance type in ``region``."""
    try:
        bounds = {int(b["index"]): bucket_upper_bound(b) for b in doc["ranges"]}
        linux = doc["spot_advisor"].get(region, {}).get("Linux", {})
        return {str(t): bounds[int(v["r"])] for t, v in linux.items() if int(v["r"]) in bounds}
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ProviderError(
            f"the Spot Advisor data is malformed ({type(e).__name__}: {e})",
            hint="the Spot Advisor format changed, or the mirror serves another file",
        ) from None


def parse_spot_json(body: bytes) -> Any:
    """The spot.json document, with or without its ``callback(...);`` wrapper."""
    text = body.decode("utf-8").strip()
    match = re.fullmatch(r"[A-Za-z_$][\w$]*\((.*)\)\s*;?", text, flags=re.DOTALL)
    return json.loads(match.group(1) if match else text)


def spot_prices(doc: Any, region: str) -> dict[str, Decimal]:
    """Linux spot price (USD/h) per instance type in ``region``; "N/A*" entries are skipped."""
    out: dict[str, Decimal] = {}
    try:
        for block in doc["config"]["regions"]:
            name = str(block["region"])
            if SPOT_REGION_ALIASES.get(name, name) != region:
                continue
            for family in block.get("instanceTypes", []):
                for size in family.get("sizes", []):
                    for column in size.get("valueColumns", []):
                        if column.get("name") != "linux":
                            continue
                        try:
                            price = Decimal(str(column.get("prices", {}).get("USD", "")))
                        except InvalidOperation:
                            continue  # "N/A*": not offered as spot there
                        if price.is_finite() and price > 0:
                            out[str(size["size"])] = price
    except (KeyError, TypeError, AttributeError) as e:
        raise ProviderError(
            f"the spot price feed is malformed ({type(e).__name__}: {e})",
            hint="the spot.json format changed, or the mirror serves another file",
        ) from None
    return out


# ---------------------------------------------------------------- the endpoints

Opener = Callable[..., AbstractContextManager[IO[bytes]]]


def _chunks(response: IO[bytes], size: int = 1 << 16) -> Iterator[bytes]:
    """The body in blocks of ``size`` bytes (an HTTP response or anything with ``read``)."""
    read = getattr(response, "read", None)
    if read is None:  # an iterable of lines (test openers)
        yield from response
        return
    while block := read(size):
        yield block


def _file_url(env_var: str, default: str, name: str) -> str:
    base = base_url(env_var, default)
    return base if base.endswith((".json", ".csv", ".js")) else f"{base}/{name}"


class AwsPublicData:
    """Reads the public AWS price endpoints (URLs from the environment, read when first used).

    The region index, the Spot Advisor and the spot price documents cover every region: each is
    read once per instance and reused for the next region of the same refresh.
    """

    def __init__(
        self,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        opener: Opener = open_url,
    ) -> None:
        self._timeout_s = timeout_s
        self._open = opener
        self._index: Any = None
        self._plans_index: Any = None
        self._advisor: Any = None
        self._spot: Any = None

    @contextmanager
    def _stream(self, url: str, env_var: str) -> Iterator[IO[bytes]]:
        """``open_url``, plus a body cut short (http.client's IncompleteRead) as ProviderError."""
        try:
            with self._open(url, timeout_s=self._timeout_s, env_var=env_var) as response:
                yield response
        except HTTPException as e:
            raise ProviderError(
                f"could not read {shown_url(url)}: the download broke off ({type(e).__name__})",
                hint=f"retry, or set {env_var} to a reachable mirror of this endpoint",
            ) from None

    def _json(self, url: str, env_var: str, parse: Callable[[bytes], Any] = json.loads) -> Any:
        with self._stream(url, env_var) as response:
            body = response.read()
        try:
            return parse(body)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ProviderError(
                f"{shown_url(url)} did not return JSON ({not_json(body, e)})",
                hint=f"the endpoint or the mirror in {env_var} returned something else; retry later",
            ) from None

    def offer_file_url(self, region: str) -> str:
        """The CSV offer file of ``region``, from the EC2 region index."""
        base = base_url(PRICING_ENV, PRICING_DEFAULT)
        if self._index is None:
            self._index = self._json(base + REGION_INDEX_PATH, PRICING_ENV)
        try:
            regions = self._index["regions"]
            entry = regions.get(region)
            path = None if entry is None else str(entry["currentVersionUrl"])
        except (KeyError, TypeError, AttributeError) as e:
            raise ProviderError(f"the AWS EC2 region index is malformed ({e!r})") from None
        if path is None:
            raise ProviderError(
                f"AWS publishes no EC2 price file for region {region!r}",
                hint=suggestion_hint("region", region, regions),
            )
        return base + re.sub(r"\.json$", ".csv", path)

    def offer_file(self, region: str, families: Collection[str]) -> OfferFile:
        """Stream and parse ``region``'s offer file, keeping ``families``."""
        url = self.offer_file_url(region)
        with self._stream(url, PRICING_ENV) as response:
            parsed = parse_offer_file(response, region, families)
        log.info(
            "aws %s: read %s (version %s): %d lines, %d parsed, %d GPU types priced",
            region,
            shown_url(url),
            parsed.version or "?",
            parsed.lines,
            parsed.rows_parsed,
            len(parsed.prices),
        )
        return parsed

    def savings_plans(self, region: str, families: Collection[str]) -> SavingsPlanFile:
        """``region``'s No Upfront Compute Savings Plans rates for ``families`` (streamed); no
        rates when AWS publishes no Savings Plans file for the region."""
        base = base_url(PRICING_ENV, PRICING_DEFAULT)
        if self._plans_index is None:
            self._plans_index = self._json(base + SAVINGS_PLAN_INDEX_PATH, PRICING_ENV)
        path = region_file_path(self._plans_index, region)
        if path is None:
            log.warning("aws %s: AWS publishes no Compute Savings Plans file for it", region)
            return SavingsPlanFile(region=region)
        url = base + path
        with self._stream(url, PRICING_ENV) as response:
            parsed = parse_savings_plans(_chunks(response), region, families)
        log.info(
            "aws %s: read %s (version %s): %d rates, %d GPU types with a savings plan",
            region,
            shown_url(url),
            parsed.version or "?",
            parsed.rates_read,
            len(parsed.rates),
        )
        return parsed

    def interruption(self, region: str) -> dict[str, float]:
        if self._advisor is None:
            url = _file_url(ADVISOR_ENV, ADVISOR_DEFAULT, "spot-advisor-data.json")
            self._advisor = self._json(url, ADVISOR_ENV)
        found = interruption_pct(self._advisor, region)
        log.info("aws %s: Spot Advisor lists %d Linux types", region, len(found))
        return found

    def spot(self, region: str) -> dict[str, Decimal]:
        if self._spot is None:
            url = _file_url(SPOT_PRICES_ENV, SPOT_PRICES_DEFAULT, "spot.json")
            self._spot = self._json(url, SPOT_PRICES_ENV, parse_spot_json)
        found = spot_prices(self._spot, region)
        log.info("aws %s: spot price feed lists %d Linux types", region, len(found))
        return found
