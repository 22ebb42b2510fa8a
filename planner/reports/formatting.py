"""Numbers for people: money with a currency symbol and thousands separators, hours or days,
percentages, GiB.  Every report renders through these, so a value reads the same everywhere.

The rounding rules (one place, so tests can restate them):

- money: cents under 1,000 (``$2.86``), whole units from 1,000 (``$143,493``);
- hours: minutes under 2 h (``65 min``), one decimal up to 72 h (``7.1 h``), days beyond
  (``12.5 days``);
- shares: whole percent, one decimal under 10 % (``7.5%``, ``41%``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# Symbols for the currencies of the bundled rate table (planner/data/fx_rates.yaml); others print
# their ISO code in front of the number.
_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "CNY": "CN¥", "INR": "₹"}


@dataclass(frozen=True)
class Money:
    """How to show USD amounts: in ``code``, at ``per_usd`` units per US dollar."""

    code: str = "USD"
    per_usd: float = 1.0

    @property
    def symbol(self) -> str:
        return _SYMBOLS.get(self.code.upper(), self.code.upper() + " ")

    def __call__(self, usd: float | None) -> str:
        return money(usd, self)

    def per_hour(self, usd: float | None) -> str:
        return per_hour(usd, self)


USD_MONEY = Money()


def money(usd: float | None, unit: Money = USD_MONEY) -> str:
    """``2.8612`` -> ``$2.86``; ``143492.8`` -> ``$143,493``; negative -> ``-$5.00``."""
    if usd is None or not math.isfinite(usd):
        return "-"
    value = usd * unit.per_usd
    sign = "-" if value < 0 else ""
    value = abs(value)
    digits = 2 if round(value, 2) < 1000 else 0
    return f"{sign}{unit.symbol}{value:,.{digits}f}"


def per_hour(usd: float | None, unit: Money = USD_MONEY) -> str:
    """A rate: ``$2.05/h``; three significant decimals under a cent-scale price (``$0.046/h``)."""
    if usd is None or not math.isfinite(usd):
        return "-"
    value = abs(usd * unit.per_usd)
    sign = "-" if usd < 0 else ""
    text = f"{value:,.3f}" if value < 0.1 else f"{value:,.2f}"
    return f"{sign}{unit.symbol}{text}/h"


def hours(value: float | None) -> str:
    """``0.75`` -> ``45 min``; ``7.08`` -> ``7.1 h``; ``300`` -> ``12.5 days``."""
    if value is None or not math.isfinite(value):
        return "-"
    if value < 2:
        return f"{value * 60:.0f} min"
    if value > 72:
        return f"{value / 24:,.1f} days"
    return f"{value:.1f} h"


def pct(share: float | None) -> str:
    """A share in [0, 1] as a percentage: ``0.416`` -> ``42%``; ``0.075`` -> ``7.5%``."""
    if share is None or not math.isfinite(share):
        return "-"
    value = share * 100
    if abs(value) < 10 and round(value, 1) != round(value):
        return f"{value:.1f}%"
    return f"{value:.0f}%"


def number(value: float | None, digits: int = 0) -> str:
    """Thousands separators: ``1205`` -> ``1,205``; ``digits`` decimals."""
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value:,.{digits}f}"


def gib(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value:,.1f} GiB"


def months(value: float | None) -> str:
    """``17.04`` -> ``17.0 months``; None -> ``never``."""
    if value is None or not math.isfinite(value):
        return "never"
    return f"{value:,.1f} months"
