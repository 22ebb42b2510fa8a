"""Numbers for people: money with a currency symbol and thousands separators, hours or days,
percentages, GiB.  Every report renders through these, so a value reads the same everywhere.

The rounding rules (one place, so tests can restate them):

- money: cents under 1,000 (``$2.86``), whole units from 1,000 (``$143,493``);
- hours: minutes under 2 h (``65 min``), one decimal up to 72 h (``7.1 h``), days beyond
  (``12.5 days``);
- shares: whole percent, one decimal under 10 % (``7.5%``, ``41%``).

Money is USD inside the planner; :class:`Money` is the one place a report converts it to the
currency it is shown in, for text, chart axes and the JSON of ``--currency``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from planner.errors import written_money

if TYPE_CHECKING:
    from planner.config.currency import FxTable

# Symbols for the currencies of the bundled rate table (planner/data/fx_rates.yaml); others print
# their ISO code in front of the number.
_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "CNY": "CN¥", "INR": "₹"}


@dataclass(frozen=True)
class Money:
    """How to show USD amounts: in ``code``, at ``per_usd`` units per US dollar.

    :meth:`of` makes one from a rate table and keeps the table (``rates``), so the notes that
    name the rate's date and source, and the JSON conversion, use the very rate the text does.
    """

    code: str = "USD"
    per_usd: float = 1.0
    rates: FxTable | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, code: str, fx: FxTable | None = None, *, key_path: str | None = None) -> Money:
        """Money shown in ``code`` at the rate of ``fx`` (default: the bundled table).  An unknown
        code raises :class:`~planner.errors.UnknownNameError` naming ``key_path``.  The code is
        read as people type it, spaces around it dropped (was: " EUR" kept, a CSV column named
        ``cheapest_on_demand_ eur_per_gpu_hour``)."""
        code = code.strip()
        if code.upper() == "USD":
            return USD_MONEY
        from planner.config.currency import load_fx_rates

        table = fx or load_fx_rates()
        return cls(code.upper(), 1.0 / table.rate(code, key_path=key_path), table)

    @property
    def is_usd(self) -> bool:
        return self.code.upper() == "USD"

    @property
    def as_of(self) -> str:
        """The date of the rate (empty for USD and for a Money made without a rate table)."""
        return self.rates.as_of if self.rates else ""

    @property
    def source(self) -> str:
        return self.rates.source if self.rates else ""

    @property
    def symbol(self) -> str:
        return _SYMBOLS.get(self.code.upper(), self.code.upper() + " ")

    def __call__(self, usd: float | None) -> str:
        return money(usd, self)

    def per_hour(self, usd: float | None) -> str:
        return per_hour(usd, self)

    def scale(self, usd: float) -> float:
        """A USD amount as a plain number in this currency (text tables, chart points).  USD
        amounts are multiplied by 1.0 too, so an integer amount prints as a float either way."""
        return usd * self.per_usd

    def note(self) -> str:
        """``money in EUR at 0.9605 per USD (ECB ..., 2025-02-28)`` (empty for USD): the rate a
        report was shown at, with its source and date when the rate came from a table."""
        if self.is_usd:
            return ""
        where = f" ({self.source}, {self.as_of})" if self.rates else ""
        return f"money in {self.code.upper()} at {self.per_usd:.4g} per USD{where}"

    def record(self) -> dict[str, Any]:
        """The ``currency`` object of a ``--currency`` JSON document."""
        return {
            "code": self.code,
            "per_usd": self.per_usd,
            "as_of": self.as_of,
            "source": self.source,
        }

    def chart_axis(self) -> tuple[float, Literal["usd", "number"], str]:
        """(scale, tick format, unit) for a chart axis of money in this currency."""
        if self.is_usd:
            return 1.0, "usd", "USD"
        return self.per_usd, "number", self.code.upper()

    def convert(self, record: Any) -> Any:
        """A JSON record (``to_dict()``/``to_record()``) with its money in this currency: every
        number under a key with a ``usd`` part is scaled and the key renamed (``capex_eur``); see
        :func:`planner.config.currency.convert_money`.  USD returns ``record`` itself; a Money made
        by hand, without ``rates``, converts at the bundled table's rate."""
        if self.is_usd:
            return record
        from planner.config.currency import convert_money

        return convert_money(record, self.code, self.rates)


USD_MONEY = Money()


def money(usd: float | None, unit: Money = USD_MONEY) -> str:
    """``2.8612`` -> ``$2.86``; ``143492.8`` -> ``$143,493``; negative -> ``-$5.00``."""
    if usd is None or not math.isfinite(usd):
        return "-"
    return written_money(usd * unit.per_usd, unit.symbol)


def per_hour(usd: float | None, unit: Money = USD_MONEY) -> str:
    """A rate: ``$2.05/h``; three significant decimals under a cent-scale price (``$0.046/h``)."""
    if usd is None or not math.isfinite(usd):
        return "-"
    value = abs(usd * unit.per_usd)
    sign = "-" if usd < 0 else ""
    text = f"{value:,.3f}" if value < 0.1 else f"{value:,.2f}"
    return f"{sign}{unit.symbol}{text}/h"


def hours(value: float | None, *, with_hours: bool = False) -> str:
    """``0.75`` -> ``45 min``; ``7.08`` -> ``7.1 h``; ``300`` -> ``12.5 days`` (with
    ``with_hours``, the terminal's form: ``12.5 days (300 h)``)."""
    if value is None or not math.isfinite(value):
        return "-"
    if value < 2:
        return f"{value * 60:.0f} min"
    if value > 72:
        return f"{value / 24:,.1f} days" + (f" ({value:,.0f} h)" if with_hours else "")
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
