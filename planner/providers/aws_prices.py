"""The AWS list-price facts both AWS paths produce: on-demand and the twelve reserved terms.

Shared by the Price List Query API path (:mod:`planner.providers.aws`) and the public bulk-file
path (:mod:`planner.providers.aws_bulk`), which must amortise reserved terms the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from planner.providers.base import HOURS_PER_YEAR


@dataclass(frozen=True)
class ReservedTerm:
    """One of the twelve reserved-instance terms of a Price List product, amortised."""

    years: int
    offering_class: str  # "standard" | "convertible"
    purchase_option: str  # "No Upfront" | "Partial Upfront" | "All Upfront"
    hourly_usd: Decimal
    upfront_usd: Decimal

    @property
    def effective_hourly_usd(self) -> Decimal:
        """Hourly fee plus the upfront fee spread over every hour of the term."""
        return self.hourly_usd + self.upfront_usd / (HOURS_PER_YEAR * self.years)


@dataclass(frozen=True)
class ListPrice:
    """The Price List facts for one instance type in one region."""

    instance_type: str
    on_demand_usd: Decimal
    reserved: tuple[ReservedTerm, ...]

    def reserved_hourly(
        self, years: int, offering_class: str, purchase_option: str
    ) -> Decimal | None:
        for term in self.reserved:
            if (term.years, term.offering_class, term.purchase_option) == (
                years,
                offering_class,
                purchase_option,
            ):
                return term.effective_hourly_usd
        return None
