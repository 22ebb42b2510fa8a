"""Currencies: all money is USD inside; this module converts at the edges.

Rates come from a bundled, dated table (``planner/data/fx_rates.yaml``: the ECB euro reference
rates of one day, with their source).  Input files may state money as ``80000 CNY``; output can be
shown in another currency with :func:`convert_money`, which renames ``usd`` in the keys it converts
so that a number never carries the wrong unit in its name.
"""

from __future__ import annotations

import datetime
import functools
import logging
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from planner import clock
from planner.config.yamlfile import parse_packaged_yaml
from planner.errors import ConfigError, UnknownNameError, foreign_digits_error
from planner.units import COUNT_SCALE, DEFAULT_MAX_AGE_DAYS, USD

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FxTable:
    """Exchange rates of one day: ``usd_per_unit[code]`` US dollars buy one unit of ``code``."""

    as_of: str
    source: str
    usd_per_unit: Mapping[str, float]

    @property
    def codes(self) -> list[str]:
        return sorted(self.usd_per_unit)

    def rate(self, code: str, *, file: str | None = None, key_path: str | None = None) -> float:
        """USD per one unit of ``code`` (case-insensitive); unknown codes raise with suggestions."""
        major = minor_unit_of(code)
        if major is not None:  # GBp: was read as GBP, a hundred times the amount
            raise ConfigError(
                f"{code.strip()} is a hundredth of {major}, a market's price unit, not a currency "
                "the planner converts",
                file=file,
                key_path=key_path,
                hint=f"use {major}: an amount in {code.strip()} divided by 100 is the amount in {major}",
            )
        value = self.usd_per_unit.get(code.strip().upper())
        if value is None:
            error = UnknownNameError("currency", code, self.codes, file=file, key_path=key_path)
            meant = CURRENCY_WORDS.get(code.strip().lower())
            if meant in self.usd_per_unit:  # a sign or a name (€, RMB, dollars): its code
                error.hint = f"did you mean {meant}? (a currency is written as its code)"
            raise error
        return value

    def to_usd(self, amount: float, code: str) -> float:
        usd = amount * self.rate(code)
        if code.strip().upper() != USD:
            _warn_stale_rate(self, code.strip().upper())
        return usd

    def from_usd(self, amount_usd: float, code: str) -> float:
        return amount_usd / self.rate(code)

    def stale_warning(self, code: str, max_age_days: int) -> str | None:
        """Why money shown in ``code`` may be off: the table's rate is older than
        ``max_age_days`` (None when it is not, or its date cannot be read)."""
        try:
            age = (clock.utc_today() - datetime.date.fromisoformat(self.as_of)).days
        except ValueError:
            return None
        if age <= max_age_days:
            return None
        return (
            f"money in {code} is converted at the bundled ECB reference rate of {self.as_of}, "
            f"{age:,} days old; check it against today's rate before relying on it"
        )


def fx_table_from_mapping(raw: Mapping[str, Any], *, file: str = "fx_rates.yaml") -> FxTable:
    """Build an :class:`FxTable` from the YAML layout (rates per 1 EUR, as the ECB publishes them)."""
    try:
        per_eur = {str(k).upper(): float(v) for k, v in raw["per_eur"].items()}
        usd_per_eur = per_eur[USD]
        table = FxTable(
            as_of=str(raw["as_of"]),
            source=str(raw["source"]),
            usd_per_unit={code: usd_per_eur / rate for code, rate in per_eur.items()},
        )
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
        raise ConfigError(f"malformed rate table ({e})", file=file) from e
    return table


@functools.lru_cache(maxsize=1)
def load_fx_rates() -> FxTable:
    """The bundled rate table (read on first use, then cached)."""
    text = resources.files("planner.data").joinpath("fx_rates.yaml").read_text(encoding="utf-8")
    return fx_table_from_mapping(parse_packaged_yaml(text))


# A comma in an amount separates thousands (1,200.50), three digits each after a first group that
# is not 0: "2,5" is a decimal comma, which was read as 25 (the comma dropped), ten times the
# amount meant, and "0,135" one too (was read as 135).
_MONEY = re.compile(
    r"^\s*(?:(?P<pre>[A-Za-z]{3})\s+)?"
    r"(?P<num>[-+]?(?:[1-9][0-9]{0,2}(?:,[0-9]{3})+|[0-9][0-9_]*)(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)"
    r"\s*(?P<post>[A-Za-z]{3})?\s*$"
)
# A comma that separates no thousands: a lone one with one or two digits after it (2,5 or
# 0,10 EUR: a decimal comma) or after a 0 (0,135), or any other grouping (1,5000, 12,34,567).
_DECIMAL_COMMA = re.compile(r"[-+]?(?:0,[0-9]+|[0-9]+,[0-9]{1,2})(?![0-9])")
_COMMA_IN_NUMBER = re.compile(r"[0-9],[0-9]")


# Hundredths of a currency that markets quote prices in: pence sterling (GBp, GBX), South African
# cents (ZAc), Israeli agorot (ILA).  Upper-cased, GBp was read as GBP, a hundred times the amount.
_MINOR_UNITS = {"GBX": "GBP", "ZAC": "ZAR", "ILA": "ILS"}


def minor_unit_of(code: str) -> str | None:
    """The currency ``code`` is a hundredth of (GBp: GBP), or None for any other code."""
    code = code.strip()
    if code == "GBp":
        return "GBP"
    return _MINOR_UNITS.get(code.upper())


# Currency signs and names where a code belongs: was "cannot read '€500' as an amount of money"
# and "unknown currency 'RMB'; known currency names: AUD, BGN, ...".
CURRENCY_WORDS = {
    "$": USD,
    "us$": USD,
    "dollar": USD,
    "dollars": USD,
    "€": "EUR",
    "euro": "EUR",
    "euros": "EUR",
    "£": "GBP",
    "pound": "GBP",
    "pounds": "GBP",
    "¥": "JPY",
    "yen": "JPY",
    "yuan": "CNY",
    "rmb": "CNY",
    "renminbi": "CNY",
    "₹": "INR",
    "rupee": "INR",
    "rupees": "INR",
    "₩": "KRW",
    "won": "KRW",
    "fr": "CHF",
    "sfr": "CHF",
}
# An amount written as people write prices (€500, 500 euros, $5k, 2.99 USD/h): its parts.
_WORDED = re.compile(
    r"^\s*(?P<pre>[^\d\s.,+-]+)?\s*(?P<num>[-+]?\d[\d.,_]*(?:[eE][-+]?\d+)?)\s*"
    r"(?P<mult>[kKMB](?![A-Za-z]))?\s*(?P<post>[^\d\s.,/]+)?\s*"
    r"(?P<rate>(?:/|\bper\s+)\s*[A-Za-z]+)?\s*$"
)


_DOT_THOUSANDS = re.compile(r"\d{1,3}(?:\.\d{3})+")
# Digits grouped by spaces, three to a group after a first group of one to three: a whole number
# ("1234 567" is no grouping: was "grouped by spaces; write 1234567", a guess at two numbers).
_SPACE_THOUSANDS = re.compile(r"(?<![\d.,])\d{1,3}(?: \d{3})+(?:\.\d+)?(?![\d,])")
_SPLIT_NUMBER = re.compile(r"\d[ \t]+\d")
# A continental number, dots grouping thousands and a decimal comma: 1.234,5 or 1 234,50.  Was
# read as a decimal comma in "234,5" alone, with the fix "write 234.5", a thousandth of it.
_CONTINENTAL = re.compile(r"(?<![\d.,])[-+]?\d{1,3}(?:[. ]\d{3})+,\d+(?![\d.,])")


def _worded(value: str) -> tuple[str, str] | None:
    """(what is not read, the amount to write) for an amount written with a currency's sign or
    name (``€500``, ``500 euros``), a multiplier (``5k``) or a rate (``2.99 USD/h``); None when
    it has none of them."""
    m = _WORDED.match(value)
    if m is None or (m["pre"] and m["post"]):
        return None
    word = m["pre"] or m["post"]
    sign = CURRENCY_WORDS.get(word.lower()) if word else None
    if word and sign is None and not re.fullmatch(r"[A-Za-z]{3}", word):
        return None  # a word that names no currency: the general message
    if sign is None and not (m["mult"] or m["rate"]):
        return None
    problems = [f"{word!r} is not a currency code"] if sign else []
    number = m["num"]
    if m["mult"]:
        problems.append(f"{m['mult']} is not read as a multiplier")
        try:
            number = f"{float(number.replace(',', '')) * COUNT_SCALE[m['mult'].lower()]:.15g}"
        except ValueError:
            return None
    if m["rate"]:
        problems.append(f"the key or option says the period, not the amount ({m['rate']})")
    code = sign or (word.upper() if word else "")
    return "; ".join(problems), f"{number} {code}".strip()


# A currency code glued before the number (EUR500), and a number that starts at its decimal
# point (.5, .5 EUR): each read as neither before, and given the generic hint.
_GLUED_CODE = re.compile(r"\s*([A-Za-z]{3})(\d+(?:,\d{3})*(?:\.\d+)?)\s*")
_BARE_POINT = re.compile(r"\s*(\.\d+)\s*([A-Za-z]{3})?\s*")


def split_money(
    value: str, *, file: str | None = None, key_path: str | None = None
) -> tuple[float, str | None]:
    """``"80000 CNY"`` -> ``(80000.0, "CNY")``; ``"1,200.50"`` -> ``(1200.5, None)``.  The code is
    not checked here (see :meth:`FxTable.rate`); text that is not an amount raises ConfigError."""
    digits = foreign_digits_error(value, file=file, key_path=key_path)
    if digits is not None:  # "３１００００ USD": was "cannot read ... as an amount" and 80000 CNY
        raise digits
    m = _MONEY.match(value)
    worded = _worded(value) if m is None else None
    if worded is not None:
        problems, written = worded
        split_money(written, file=file, key_path=key_path)  # the number's own problem first
        number = written.split()[0]
        dots = (
            f"; a dot is a decimal point: for {number.replace('.', '')} write "
            f"{written.replace(number, number.replace('.', ''))}"
            if _DOT_THOUSANDS.fullmatch(number)
            else ""
        )  # €310.000: was "write 310.000 EUR" alone, read as 310 EUR
        raise ConfigError(
            f"cannot read {value!r} as an amount of money: {problems}",
            file=file,
            key_path=key_path,
            hint=f"write {written}: a number, optionally with a currency code{dots}",
        )
    continental = _CONTINENTAL.search(value) if m is None else None
    if continental is not None:
        number = continental.group()
        point = number.replace(".", "").replace(" ", "").replace(",", ".")
        raise ConfigError(
            f"cannot read {value!r} as an amount of money: {number} groups thousands by "
            "dots or spaces and has a decimal comma",
            file=file,
            key_path=key_path,
            hint=f"write {value.replace(number, point).strip()} (a decimal point and no "
            "separators)",
        )
    spaced = _SPACE_THOUSANDS.search(value) if m is None else None
    if spaced is not None:
        # 310 000 EUR: was "write a number, optionally with a currency code: 80000 CNY"
        joined = value.replace(spaced.group(), spaced.group().replace(" ", "")).strip()
        raise ConfigError(
            f"cannot read {value!r} as an amount of money: its digits are grouped by spaces",
            file=file,
            key_path=key_path,
            hint=f"write {joined} (no spaces in a number)",
        )
    if m is None and _SPLIT_NUMBER.search(value):
        raise ConfigError(
            f"cannot read {value!r} as an amount of money: a space splits the number, and the "
            "groups are not thousands",
            file=file,
            key_path=key_path,
            hint="write one number without spaces, optionally with a currency code: 80000 CNY",
        )
    comma = _DECIMAL_COMMA.search(value) if m is None and value.count(",") == 1 else None
    if comma is not None:
        point = comma.group().replace(",", ".")
        raise ConfigError(
            f"cannot read {value!r} as an amount of money: {comma.group()} has a decimal comma",
            file=file,
            key_path=key_path,
            hint=f"write {point} (a decimal point; a comma only separates thousands, 1,200.50)",
        )
    if m is None and _COMMA_IN_NUMBER.search(value):
        raise ConfigError(
            f"cannot read {value!r} as an amount of money: its commas do not group thousands",
            file=file,
            key_path=key_path,
            hint=f"write {re.sub(r'(?<=[0-9]),(?=[0-9])', '', value).strip()} (no commas), or "
            "group the digits by three (15,000)",
        )
    glued = _GLUED_CODE.fullmatch(value) if m is None else None
    if glued is not None:  # EUR500: was the generic "write a number ... 80000 CNY"
        raise ConfigError(
            f"cannot read {value!r} as an amount of money: the code is glued to the number",
            file=file,
            key_path=key_path,
            hint=f"write {glued.group(2)} {glued.group(1).upper()}",
        )
    bare = _BARE_POINT.fullmatch(value) if m is None else None
    if bare is not None:  # .5: was the generic hint
        raise ConfigError(
            f"cannot read {value!r} as an amount of money: a bare decimal point",
            file=file,
            key_path=key_path,
            hint=f"write 0{bare.group(1)}{(' ' + bare.group(2).upper()) if bare.group(2) else ''}",
        )
    if m is None or (m["pre"] and m["post"]):
        raise ConfigError(
            f"cannot read {value!r} as an amount of money",
            file=file,
            key_path=key_path,
            hint="write a number, optionally with a currency code: 80000 CNY",
        )
    amount = float(m["num"].replace(",", "").replace("_", ""))
    if not math.isfinite(amount):
        raise ConfigError(
            f"{value!r} is not a finite amount of money",
            file=file,
            key_path=key_path,
            hint="write a number, optionally with a currency code: 80000 CNY",
        )
    return amount, m["pre"] or m["post"]


def parse_money(
    value: object,
    *,
    default_currency: str = USD,
    table: FxTable | None = None,
    file: str | None = None,
    key_path: str | None = None,
) -> float:
    """An amount in USD from ``310000``, ``"80000 CNY"``, ``"EUR 1,200.50"`` or ``"2e5 JPY"``.

    Bare numbers are in ``default_currency``.  Raises :class:`ConfigError` naming ``file`` and
    ``key_path`` for anything else, and :class:`UnknownNameError` for an unknown currency code.
    """
    table = table or load_fx_rates()
    if isinstance(value, bool):
        raise ConfigError(
            "expected an amount of money, got a true/false value", file=file, key_path=key_path
        )
    if isinstance(value, (int, float)):
        amount, code = float(value), default_currency
    elif isinstance(value, str):
        amount, given = split_money(value, file=file, key_path=key_path)
        code = given or default_currency
    else:
        raise ConfigError(
            f"expected an amount of money, got {type(value).__name__}", file=file, key_path=key_path
        )
    usd = amount * table.rate(code, file=file, key_path=key_path)
    if code.strip().upper() != USD:
        _warn_stale_rate(table, code.strip().upper())
    if not math.isfinite(usd):  # ".inf", "nan EUR", or digits past a float's range ("1e400")
        raise ConfigError(
            f"{value!r} is not a finite amount of money",
            file=file,
            key_path=key_path,
            hint="write a number, optionally with a currency code: 80000 CNY",
        )
    return usd


def _warn_stale_rate(table: FxTable, code: str) -> None:
    """Warn, once a process per rate table and currency, that an amount typed in ``code`` was
    converted at a stale rate (was: said of output in --currency CNY only, never of 310000 EUR
    in a file or --budget "5000 EUR")."""
    stale = table.stale_warning(code, DEFAULT_MAX_AGE_DAYS)
    if stale is not None:
        _warn_once(stale)


@functools.lru_cache(maxsize=64)
def _warn_once(message: str) -> None:
    log.warning("%s", message)


def _is_money_key(key: str) -> bool:
    return "usd" in key.lower().split("_")


def _rename(key: str, code: str) -> str:
    return "_".join(code.lower() if part.lower() == "usd" else part for part in key.split("_"))


def _scale(value: Any, factor: float) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return value * factor
    if isinstance(value, Mapping):
        return {k: _scale(v, factor) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scale(v, factor) for v in value]
    return value


def convert_money(value: Any, code: str, table: FxTable | None = None) -> Any:
    """A copy of a JSON-like ``value`` with money shown in ``code``.

    Money is every number under a key whose ``_``-separated parts include ``usd``
    (``capex_usd``, ``usd_per_gpu_hour``, ``annual_cost_usd: {...}``); such keys are renamed
    (``capex_eur``, ``eur_per_gpu_hour``).  Other keys are walked recursively and left alone.
    """
    if code.strip().upper() == USD:
        return value
    table = table or load_fx_rates()
    factor = 1.0 / table.rate(code)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            key = str(k)
            if _is_money_key(key):
                out[_rename(key, code)] = _scale(v, factor)
            else:
                out[key] = convert_money(v, code, table)
        return out
    if isinstance(value, (list, tuple)):
        return [convert_money(v, code, table) for v in value]
    return value
