"""Pure queries over the offers table: filter, sort, and the GPU catalog's availability."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from planner.errors import (
    ConfigError,
    UnknownNameError,
    checked_fields,
    is_number,
    is_whole_number,
    suggest,
)
from planner.gpu_specs import GpuCatalog
from planner.schema import PRICE_COLUMNS, Fabric, Interconnect, PurchaseOption

SORT_KEYS = {
    "price": "price_usd_per_hour",
    "price-per-gpu": "price_usd_per_gpu_hour",
    "gpu-memory": "gpu_memory_total_gib",
    "gpus": "gpu_count",
    "provider": "provider",
    "region": "region",
}

# One name of each kind, for the hints of OfferFilter's checks.
_EXAMPLE_NAMES = {"providers": "aws", "regions": "us-east-1", "gpus": "H100"}


# A plausible value of each numeric filter, for the fix of one given as text.
_EXAMPLE_LIMITS = {
    "min_gpu_memory_gib": 80,
    "min_total_gpu_memory_gib": 640,
    "max_price_usd_per_hour": 40,
    "min_gpu_count": 8,
    "min_vcpus": 32,
    "min_host_memory_gib": 256,
    "min_local_disk_gb": 1000,
}


@checked_fields
@dataclass(frozen=True)
class OfferFilter:
    """What a user asked for; every field optional (None = no constraint)."""

    providers: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()  # names, aliases or families (A100 = both A100s)
    min_gpu_count: int | None = None
    min_gpu_memory_gib: float | None = None
    min_total_gpu_memory_gib: float | None = None
    max_price_usd_per_hour: float | None = None
    purchase_option: PurchaseOption = PurchaseOption.ON_DEMAND
    min_interconnect: Interconnect | None = None
    # the host: data-loader workers need CPU cores, offload and dataset caches need RAM
    min_vcpus: float | None = None
    min_host_memory_gib: float | None = None
    # instance-store / local SSD, GB (datasets staged next to the GPUs, checkpoint scratch)
    min_local_disk_gb: float | None = None

    def __post_init__(self) -> None:
        # Checked here, where a filter is made, so that the CLI and the library give the same
        # message; a plain string for a name list (gpus="H100") means that one name, not its
        # letters (which answered "unknown GPU 'H'").
        for key, option in (
            ("providers", "--provider"),
            ("regions", "--region"),
            ("gpus", "--gpu"),
        ):
            names = getattr(self, key)
            if isinstance(names, str):
                names = (names,)
            if not isinstance(names, (list, tuple, set, frozenset)):
                # only the library gets here (the CLI passes tuples): name the field
                raise ConfigError(
                    f"expected a name or a list of names, got {names!r}",
                    key_path=key,
                    hint=f"e.g. OfferFilter({key}=({_EXAMPLE_NAMES[key]!r},))",
                )
            names = tuple(names)
            for name in names:
                if not isinstance(name, str) or not name.strip():
                    kind = "GPU" if key == "gpus" else key[:-1]
                    # the field, as every library error names it; a command shows its option
                    raise ConfigError(
                        f"{name!r} is not a {kind} name",
                        key_path=key,
                        hint=f"leave {option} out ({key}=() in Python) to allow every {kind}",
                    )
            object.__setattr__(self, key, names)
        for key in (
            "min_gpu_memory_gib",
            "min_total_gpu_memory_gib",
            "max_price_usd_per_hour",
            "min_gpu_count",
            "min_vcpus",
            "min_host_memory_gib",
            "min_local_disk_gb",
        ):
            value = getattr(self, key)
            if value is None:
                continue
            if not is_number(value):
                # was: "expected a number, got '80'" and no fix
                raise ConfigError(
                    f"expected a number, got {value!r}",
                    key_path=key,
                    hint=f"give a number, not {type(value).__name__}: e.g. {key}="
                    f"{_EXAMPLE_LIMITS[key]}, or leave it out (None) for no limit",
                )
            if not math.isfinite(value) or value < 0:
                raise ConfigError(
                    f"expected a finite number >= 0, got {value!r}",
                    key_path=key,
                    hint=f"e.g. {key}={_EXAMPLE_LIMITS[key]}, or leave it out (None) for no limit",
                )
        if self.min_gpu_count is not None and not is_whole_number(self.min_gpu_count):
            raise ConfigError(
                f"expected a whole number of GPUs, got {self.min_gpu_count!r}",
                key_path="min_gpu_count",
                hint="e.g. OfferFilter(min_gpu_count=8)",
            )
        if self.min_interconnect is not None:
            # a misspelt link ('nvlnk') reached the filter as text: AttributeError on .rank
            given = self.min_interconnect
            try:
                link = Interconnect(given.strip().lower() if isinstance(given, str) else given)
            except ValueError:
                raise _unknown_link(given) from None
            object.__setattr__(self, "min_interconnect", link)
        option = self.purchase_option
        try:
            # Spot, ON-DEMAND: in any case, as --purchase reads them
            read = PurchaseOption(option.strip().lower() if isinstance(option, str) else option)
            object.__setattr__(self, "purchase_option", read)
        except ValueError:
            raise UnknownNameError(
                "purchase option",
                str(self.purchase_option),
                [o.value for o in PurchaseOption],
                key_path="purchase_option",
            ) from None


def _unknown_link(given: object) -> UnknownNameError:
    """The error for an ``OfferFilter.min_interconnect`` that names no link inside a machine, with
    the fix a command line's and a file's get: NVL and sxm name theirs (was "known interconnect
    names" alone), a network between machines (IB, infiniband) is said to be one."""
    from planner.config.validation import value_alias_hint

    names = [i.value for i in Interconnect]
    error = UnknownNameError("interconnect", str(given), names, key_path="min_interconnect")
    if not isinstance(given, str):
        return error
    fabrics = [f.value for f in Fabric]
    meant = value_alias_hint(given, names, None)
    if meant is None and (
        given.strip().lower() in fabrics or value_alias_hint(given, fabrics, None) is not None
    ):
        meant = (
            f"{given.strip()} is a network between machines; min_interconnect is the link inside "
            f"one: {', '.join(names)}"
        )
    error.hint = meant or error.hint
    return error


def _check_names(
    kind: str, asked: Sequence[str], known: Sequence[str], *, key_path: str
) -> tuple[str, ...]:
    lower = {k.lower(): k for k in known}
    out = []
    for name in asked:
        if name.lower() not in lower:
            raise UnknownNameError(kind, name, known, key_path=key_path)
        out.append(lower[name.lower()])
    return tuple(out)


def with_price(offers: pd.DataFrame, option: PurchaseOption) -> pd.DataFrame:
    """Add ``price_usd_per_hour`` and ``price_usd_per_gpu_hour`` for ``option``; drop rows without it."""
    if option not in PRICE_COLUMNS:
        raise ConfigError(
            f"purchase option {option.value!r} has no price column in the offers table"
        )
    col = PRICE_COLUMNS[option]
    out = offers[offers[col].notna()].copy()
    out["purchase_option"] = option.value
    out["price_usd_per_hour"] = out[col]
    out["price_usd_per_gpu_hour"] = out[col] / out["gpu_count"]
    return out


def filter_offers(offers: pd.DataFrame, flt: OfferFilter, catalog: GpuCatalog) -> pd.DataFrame:
    """Offers matching ``flt``, priced for its purchase option.  Unknown names get suggestions."""
    if not isinstance(flt, OfferFilter):
        raise ConfigError(
            f"expected an OfferFilter, got {type(flt).__name__}",
            hint="e.g. OfferFilter(gpus=('H100',), max_price_usd_per_hour=40)",
        )
    df = offers
    if flt.providers:
        providers = _check_names(
            "provider", flt.providers, sorted(offers["provider"].unique()), key_path="providers"
        )
        df = df[df["provider"].isin(providers)]
    if flt.regions:
        regions = _check_names(
            "region", flt.regions, sorted(offers["region"].unique()), key_path="regions"
        )
        df = df[df["region"].isin(regions)]
    if flt.gpus:
        df = df[gpu_choice_mask(df, flt.gpus, catalog)]
    if flt.min_gpu_count is not None:
        df = df[df["gpu_count"] >= flt.min_gpu_count]
    if flt.min_gpu_memory_gib is not None:
        df = df[df["gpu_memory_gib"] >= flt.min_gpu_memory_gib]
    if flt.min_total_gpu_memory_gib is not None:
        df = df[df["gpu_memory_total_gib"] >= flt.min_total_gpu_memory_gib]
    if flt.min_vcpus is not None:  # an offer that does not state it is left out
        df = df[df["vcpus"].fillna(-1.0) >= flt.min_vcpus]
    if flt.min_host_memory_gib is not None:
        df = df[df["host_memory_gib"].fillna(-1.0) >= flt.min_host_memory_gib]
    if flt.min_local_disk_gb is not None:
        df = df[df["local_disk_gb"].fillna(-1.0) >= flt.min_local_disk_gb]
    if flt.min_interconnect is not None:
        ranks = {i.value: i.rank for i in Interconnect}
        df = df[df["interconnect"].map(ranks) >= flt.min_interconnect.rank]
    df = with_price(df, flt.purchase_option)
    if flt.max_price_usd_per_hour is not None:
        df = df[df["price_usd_per_hour"] <= flt.max_price_usd_per_hour]
    return df


def gpu_choice_mask(offers: pd.DataFrame, choices: Sequence[str], catalog: GpuCatalog) -> pd.Series:
    """Rows any of the ``--gpu`` choices allows (:meth:`GpuCatalog.choice`): the GPU model,
    and the GPUs per instance where the choice gives a count (``H100:8``)."""
    mask = pd.Series(False, index=offers.index)
    for text in choices:
        try:
            choice = catalog.choice(text)
        except ConfigError as e:  # the filter's field, shown by a command as its --gpu
            raise e if e.key_path or e.file else e.located_at("gpus") from None
        hit = offers["gpu_model"].isin(choice.names)
        if choice.count is not None:
            hit &= offers["gpu_count"] == choice.count
        mask |= hit
    return mask


# Where a price ties across regions (Lambda lists one price in every region; so do many on-demand
# tables), a plan names the region nearest ``near`` (a region or an area, ``--near``) when one is
# given; then the provider's home region, then another US region, then the rest alphabetically: a
# stated rule instead of whichever region the table lists first.
HOME_REGIONS = {"aws": "us-east-1", "gcp": "us-central1", "azure": "eastus", "lambda": "us-east-1"}
_US_REGION = re.compile(r"^us[-_]|^(north|south|east|west)?(central)?us\d?$")  # us-east-1, eastus2

# The area of a region, read from the region names of AWS, GCP, Azure and Lambda (us-east-1,
# northamerica-northeast1, westeurope, ap-southeast-3, asia-south1, me-central-1, ...).  First match.
_AREAS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("north-america", re.compile(r"^(us|ca|mx|northamerica)[-_]|us\d?$|^canada|^mexico")),
    ("south-america", re.compile(r"^(sa|southamerica)-|^brazil|^chile")),
    (
        "europe",
        re.compile(
            r"^(eu|europe)-|europe$|^uk|^france|^germany|^norway|^switzerland|^sweden|^poland|"
            r"^italy|^spain|^austria|^belgium|^denmark|^finland"
        ),
    ),
    ("middle-east", re.compile(r"^(me|il)-|^uae|^qatar|^israel|^saudi")),
    ("africa", re.compile(r"^(af|africa)-|^southafrica")),
    (
        "asia-pacific",
        re.compile(
            r"^(ap|asia|australia|aus)-|asia$|^australia|^japan|^korea|india$|^india|^jio|"
            r"^newzealand|^taiwan|^indonesia|^malaysia|^singapore"
        ),
    ),
)
AREAS = tuple(name for name, _ in _AREAS)
_AREA_ALIASES = {
    "us": "north-america",
    "americas": "north-america",
    "eu": "europe",
    "asia": "asia-pacific",
    "apac": "asia-pacific",
    "me": "middle-east",
}


def region_area(region: str) -> str | None:
    """The area (``europe``, ``asia-pacific``, ...) a region's name places it in; None if unknown."""
    name = region.strip().lower()
    return next((area for area, pattern in _AREAS if pattern.search(name)), None)


def check_near(near: str, regions: Iterable[str]) -> str:
    """``near`` as :func:`region_rank` reads it: one of ``regions`` or an area (or its alias:
    ``us``, ``eu``, ``asia``), lower-cased.  Anything else raises UnknownNameError with the
    nearest names."""
    name = str(near).strip().lower()
    known = sorted({str(r).lower() for r in regions})
    if name in known or name in AREAS:
        return name
    if name in _AREA_ALIASES:
        return _AREA_ALIASES[name]
    raise UnknownNameError(
        "region or area", near, [*known, *AREAS, *_AREA_ALIASES], key_path="near"
    )


def region_rank(provider: str, region: str, near: str | None = None) -> tuple[int, int]:
    """How much a region is preferred (lower first) when prices tie.

    First, with ``near`` (a region or an area from :func:`check_near`): 0 for that region, 1 for
    its area, 2 for any other.  Then 0 for the provider's home region, 1 for another US region,
    2 for any other."""
    nearness = 0
    if near is not None:
        area = near if near in AREAS else region_area(near)
        if region.lower() == near:
            nearness = 0
        elif area is not None and region_area(region) == area:
            nearness = 1
        else:
            nearness = 2
    if HOME_REGIONS.get(provider) == region:
        return nearness, 0
    return nearness, 1 if _US_REGION.search(region) else 2


def in_region_preference(offers: pd.DataFrame, near: str | None = None) -> pd.DataFrame:
    """``offers`` ordered by provider, then :func:`region_rank`, then region name (stable)."""
    if offers.empty:
        return offers
    order = region_preference_order(offers["provider"].tolist(), offers["region"].tolist(), near)
    return offers.iloc[order]


def region_preference_order(
    providers: Sequence[Any], regions: Sequence[Any], near: str | None = None
) -> list[int]:
    """The positions that put offers (their providers and regions, in table order) in region
    preference: by provider, then :func:`region_rank`, then region name, ties in table order --
    what ``sort_values(["provider", rank, "region"], kind="stable")`` gives, without copying the
    table into a sorted one and dropping the rank column again."""
    # each distinct (provider, region) ranked once: a snapshot lists a few dozen over a thousand rows
    ranks: dict[tuple[Any, Any], int] = {}
    for p, r in zip(providers, regions, strict=True):
        if (p, r) not in ranks:
            nearness, home = region_rank(str(p), str(r), near)
            ranks[p, r] = 3 * nearness + home
    return sorted(
        range(len(providers)),
        key=lambda i: (providers[i], ranks[providers[i], regions[i]], regions[i]),
    )


# What ``group_offers`` can group by, and the offer column behind each.
GROUP_KEYS = {"gpu": "gpu_model", "provider": "provider", "region": "region"}


def group_offers(offers: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """The cheapest offer (by the listed ``price_usd_per_hour``) of each group of ``offers``
    sharing the ``by`` keys (``gpu``, ``provider``, ``region``), with ``offers_in_group``: how
    many offers the group has.  Groups come out cheapest first."""
    unknown = [k for k in by if k not in GROUP_KEYS]
    if unknown:
        raise UnknownNameError("group key", unknown[0], GROUP_KEYS, key_path="group_by")
    if offers.empty or not by:
        return offers
    columns = [GROUP_KEYS[k] for k in dict.fromkeys(by)]
    ordered = in_region_preference(offers).sort_values("price_usd_per_hour", kind="stable")
    counts = ordered.groupby(columns, sort=False)["price_usd_per_hour"].transform("size")
    cheapest = ordered.assign(offers_in_group=counts).drop_duplicates(columns)
    return cheapest.reset_index(drop=True)


def sort_offers(df: pd.DataFrame, by: str = "price", *, descending: bool = False) -> pd.DataFrame:
    """Sort by one of :data:`SORT_KEYS`; ties broken by provider, region, instance type."""
    if by not in SORT_KEYS:
        raise UnknownNameError("sort key", by, SORT_KEYS)
    col = SORT_KEYS[by]
    keys = [col, "provider", "region", "instance_type"]
    return df.sort_values(
        keys, ascending=[not descending, True, True, True], kind="stable"
    ).reset_index(drop=True)


def gpu_availability(offers: pd.DataFrame) -> dict[str, list[str]]:
    """GPU model -> providers offering it (sorted)."""
    pairs = offers[["gpu_model", "provider"]].drop_duplicates()
    return {str(g): sorted(part["provider"].tolist()) for g, part in pairs.groupby("gpu_model")}


def cheapest_gpu_hour(offers: pd.DataFrame) -> dict[str, float]:
    """GPU model -> lowest on-demand USD per GPU-hour in the table."""
    per_gpu = offers["price_on_demand_usd_per_hour"] / offers["gpu_count"]
    return {str(k): float(v) for k, v in per_gpu.groupby(offers["gpu_model"]).min().items()}


# The "at least" filters, in filter_offers's order: (OfferFilter field, column, what it
# counts, the filter's name, the unit after the best value on offer).
_AT_LEAST_FILTERS = (
    ("min_gpu_count", "gpu_count", "GPUs per instance", "GPU count", ""),
    ("min_gpu_memory_gib", "gpu_memory_gib", "GiB per GPU", "GPU memory", " GiB"),
    (
        "min_total_gpu_memory_gib",
        "gpu_memory_total_gib",
        "GiB of GPU memory per instance",
        "total GPU memory",
        " GiB",
    ),
    ("min_vcpus", "vcpus", "vCPUs per instance", "vCPUs", ""),
    ("min_host_memory_gib", "host_memory_gib", "GiB of host memory", "host memory", " GiB"),
    ("min_local_disk_gb", "local_disk_gb", "GB of local disk", "local disk", " GB"),
)


def unknown_host_notes(
    offers: pd.DataFrame, flt: OfferFilter, catalog: GpuCatalog
) -> tuple[str, ...]:
    """What the host filters of ``flt`` (vCPUs, host memory, local disk) left out for not
    knowing: one line per filter, counting the offers that would otherwise have matched but do
    not state the column ("12 offers do not state their local disk and are left out")."""
    notes = []
    for floor, column, _what, name, _unit in _AT_LEAST_FILTERS:
        if floor not in _HOST_FLOORS or getattr(flt, floor) is None:
            continue
        # the same filter without this floor, on the rows that do not state the column
        without: dict[str, Any] = {floor: None}
        loose = replace(flt, **without)
        if not offers[column].isna().any():
            continue
        count = int(filter_offers(offers, loose, catalog)[column].isna().sum())
        if count:
            one = count == 1
            notes.append(
                f"{count:,} {'offer does' if one else 'offers do'} not state "
                f"{'its' if one else 'their'} {_HOST_FLOORS[floor]} and "
                f"{'is' if one else 'are'} left out by the {name} filter"
            )
    return tuple(notes)


# The host floors an offer may leave unstated, and what the note calls the missing figure.
_HOST_FLOORS = {
    "min_vcpus": "vCPUs",
    "min_host_memory_gib": "host memory",
    "min_local_disk_gb": "local disk",
}


def why_no_offers(offers: pd.DataFrame, flt: OfferFilter, catalog: GpuCatalog) -> str | None:
    """Which of ``flt``'s provider / region / GPU choices left no offer, with the values that
    would have matched (None when the filter leaves some offers).

    The filters are applied in the order ``filter_offers`` applies them, so the first one that
    empties the table is the one named: "no offers from lambda in region eu-west-3 (region
    filter); regions with offers from lambda: us-east-1, us-west-2".
    """
    if not filter_offers(offers, flt, catalog).empty:
        return None
    df, scope = offers, ""
    if flt.providers:
        providers = _check_names(
            "provider", flt.providers, sorted(offers["provider"].unique()), key_path="providers"
        )
        df = df[df["provider"].isin(providers)]
        scope = " from " + ", ".join(providers)
        if df.empty:
            return f"no offers{scope} (provider filter)"
    if flt.regions:
        regions = _check_names(
            "region", flt.regions, sorted(offers["region"].unique()), key_path="regions"
        )
        left = df[df["region"].isin(regions)]
        if left.empty:
            valid = _closest(regions, df["region"].unique())
            return (
                f"no offers{scope} in region {', '.join(regions)} (region filter); "
                f"regions with offers{scope}: {valid}"
            )
        df, scope = left, scope + " in " + ", ".join(regions)
    if flt.gpus:
        left = df[gpu_choice_mask(df, flt.gpus, catalog)]
        if left.empty:
            counted = _counts_offered(df, flt.gpus, catalog)
            if counted:  # H100:3: was the GPU models offered, the count being what is off
                return f"no offers with GPU {', '.join(flt.gpus)}{scope} (GPU filter); {counted}"
            valid = _closest(flt.gpus, df["gpu_model"].unique())
            return (
                f"no offers with GPU {', '.join(flt.gpus)}{scope} (GPU filter); "
                f"GPUs offered{scope}: {valid}"
            )
        df, scope = left, scope + " with GPU " + ", ".join(flt.gpus)
    scope = scope or " in the price table"
    # The numeric filters in filter_offers's order: the first one that empties the table is
    # named with the best value on offer in the scope so far.
    for floor, column, what, name, unit in _AT_LEAST_FILTERS:
        least = getattr(flt, floor)
        if least is None:
            continue
        left = df[df[column] >= least]
        if left.empty:
            most = df[column].max()
            best = (
                f"the most on offer is {most:g}{unit}"
                if pd.notna(most)
                else f"no offer{scope} states its {name}"
            )
            # 80000 GiB: memory in MiB (as nvidia-smi shows it), read as GiB
            small = {" GiB": (" MiB", 1024.0), " GB": (" MB", 1000.0)}.get(unit)
            if small and pd.notna(most) and least / small[1] <= most:
                read = least / small[1]
                best += f"; the filter is in{unit}: {least:g}{small[0]} is {read:.3g}{unit}"
            return f"no offers with at least {least:g} {what}{scope} ({name} filter); {best}"

        df = left
    if flt.min_interconnect is not None:
        ranks = {i.value: i.rank for i in Interconnect}
        left = df[df["interconnect"].map(ranks) >= flt.min_interconnect.rank]
        if left.empty:
            best = max(df["interconnect"], key=lambda v: ranks.get(v, -1))
            return (
                f"no offers with {flt.min_interconnect.value} or a faster GPU link{scope} "
                f"(interconnect filter); the fastest on offer is {best}"
            )
        df = left
    priced = with_price(df, flt.purchase_option)
    if priced.empty:
        options = sorted(o.value for o, col in PRICE_COLUMNS.items() if df[col].notna().any())
        return (
            f"no {flt.purchase_option.value} prices{scope} (purchase option filter); "
            f"priced there: {', '.join(options) or 'nothing'}"
        )
    if flt.max_price_usd_per_hour is not None:
        cheapest = priced["price_usd_per_hour"].min()
        return (
            f"no {flt.purchase_option.value} offers at or below "
            f"{flt.max_price_usd_per_hour:g} USD per instance-hour{scope} (price filter); "
            f"the cheapest is {cheapest:.2f} USD"
        )
    return f"no {flt.purchase_option.value} offers match the filter"


def _counts_offered(offers: pd.DataFrame, choices: Sequence[str], catalog: GpuCatalog) -> str:
    """For choices with a count (``H100:3``) whose GPU is offered with other counts, the counts
    there are ("H100 comes 1, 2 or 8 to an instance"); "" where none is."""
    parts = []
    for text in choices:
        choice = catalog.choice(text)
        if choice.count is None:
            continue
        counts = sorted(
            {int(n) for n in offers.loc[offers["gpu_model"].isin(choice.names), "gpu_count"]}
        )
        if counts:
            shown = ", ".join(map(str, counts[:-1])) + (" or " if len(counts) > 1 else "")
            parts.append(f"{'/'.join(choice.names)} comes {shown}{counts[-1]} to an instance")
    return "; ".join(parts)


def _closest(asked: Sequence[str], valid: Iterable[Any]) -> str:
    """The valid values nearest the asked ones (difflib), else the first twelve, and how many
    there are in all."""
    options = sorted(str(v) for v in valid)
    close = list(dict.fromkeys(c for name in asked for c in suggest(name, options)))
    shown = close or options[:12]
    more = f" ({len(options)} in all)" if len(shown) < len(options) else ""
    return ", ".join(shown) + more
