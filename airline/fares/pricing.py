"""Pricing one offer option: a one-way journey (one legIndex) of one or more segments,
sold in one bundle, for a party of passengers (DESIGN.md §7, SPEC.md §1 and §2.2).

`price_option` is pure: the fares, the bundle and the tax rules come in as ORM-free terms
loaded once per request (`fare_terms_for`, `bundle_terms`, taxes.tax_rules), so shopping
can price hundreds of options without a query each.

Rounding (DESIGN.md §4): one passenger's price is rounded to cents once, per tax; party
totals are that price times the head count, summed, so `per_ptc` times counts equals `total`
to the cent.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from airline.fares import selectors
from airline.fares.money import ZERO, Fee, Price, Tax, money, price_sum
from airline.fares.taxes import TaxRule, tax_rules, taxes_for_one_way
from airline.fares.terms import BundleTerms, FareTerms, bundle_terms

__all__ = [
    "ADT",
    "CHD",
    "INF",
    "BundleTerms",
    "FareTerms",
    "Fee",
    "NoFare",
    "PassengerMix",
    "Price",
    "PricedOption",
    "SegmentToPrice",
    "Tax",
    "bundle_terms",
    "cheapest_available_rbd",
    "fare_terms_for",
    "money",
    "price_option",
    "price_sum",
]

ADT, CHD, INF = "ADT", "CHD", "INF"


class NoFare(LookupError):
    """No fare is filed for a segment's market in its booking class: the option cannot
    be sold (shopping leaves it out)."""

    def __init__(self, origin: str, destination: str, rbd: str) -> None:
        super().__init__(f"no fare filed for {origin}-{destination} in class {rbd}")
        self.key = (origin, destination, rbd)


@dataclass(frozen=True, slots=True)
class SegmentToPrice:
    """One segment (one flight number) flown in booking class `rbd`. `leg_origins` are
    the departure stations of its legs: only the first is an enplanement (a through
    passenger stays on board at the stop), but every leg is a flight segment for ZP."""

    origin: str
    destination: str
    rbd: str
    leg_origins: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.leg_origins or self.leg_origins[0] != self.origin:
            raise ValueError(f"segment {self.origin}-{self.destination}: legs must start at it")


@dataclass(frozen=True, slots=True)
class PassengerMix:
    """The party: lap infants (INF) ride with an adult and take no seat."""

    adults: int
    children: int = 0
    infants: int = 0

    def __post_init__(self) -> None:
        if min(self.adults, self.children, self.infants) < 0:
            raise ValueError("passenger counts cannot be negative")
        if self.adults + self.children + self.infants == 0:
            raise ValueError("a party has at least one passenger")

    @property
    def seats(self) -> int:
        return self.adults + self.children

    def counts(self) -> dict[str, int]:
        """Passengers per type code, types with nobody left out."""
        every = {ADT: self.adults, CHD: self.children, INF: self.infants}
        return {ptc: count for ptc, count in every.items() if count}


@dataclass(frozen=True, slots=True)
class PricedOption:
    """The price of an option for the party. `per_ptc[ptc]` is ONE passenger of that type
    (SPEC.md PassengerPrice.price, DESIGN.md §11) and `counts[ptc]` how many there are;
    only the types in the party appear. `fare_basis_codes` has one code per segment."""

    total: Price
    per_ptc: dict[str, Price]
    counts: dict[str, int]
    fare_basis_codes: tuple[str, ...]


def price_option(
    *,
    segments: Sequence[SegmentToPrice],
    bundle: BundleTerms,
    fares: Mapping[tuple[str, str, str], FareTerms],
    mix: PassengerMix,
    taxes: tuple[TaxRule, ...] | None = None,
) -> PricedOption:
    """Price a one-way journey in a bundle. An adult pays, per segment, the fare of its
    market and class plus the bundle supplement, and the US taxes on the journey; a child
    pays exactly what an adult pays; a lap infant pays nothing (DESIGN.md §7).
    Raises NoFare when a segment's market has no fare in its class."""
    if not segments:
        raise ValueError("an option has at least one segment")
    base = ZERO
    fare_basis_codes = []
    for segment in segments:
        fare = fares.get((segment.origin, segment.destination, segment.rbd))
        if fare is None:
            raise NoFare(segment.origin, segment.destination, segment.rbd)
        base += fare.base_amount + bundle.supplement
        fare_basis_codes.append(fare.fare_basis + bundle.fare_basis_suffix)
    base = money(base)
    adult = Price(
        base=base,
        taxes=taxes_for_one_way(
            tax_rules() if taxes is None else taxes,
            base=base,
            legs=sum(len(segment.leg_origins) for segment in segments),
            enplanements=len(segments),
        ),
    )
    one_of_each = {ADT: adult, CHD: adult, INF: Price.zero()}
    counts = mix.counts()
    per_ptc = {ptc: one_of_each[ptc] for ptc in counts}
    total = price_sum(per_ptc[ptc].times(count) for ptc, count in counts.items())
    return PricedOption(
        total=total, per_ptc=per_ptc, counts=counts, fare_basis_codes=tuple(fare_basis_codes)
    )


def cheapest_available_rbd(
    availability: Mapping[str, int], cabin_ladder: Sequence[str], seats_needed: int
) -> str | None:
    """The lowest (cheapest) class of the cabin with `seats_needed` seats, or None when
    the cabin cannot seat the party. `availability` is network.inventory.availability's
    nested count per class and `cabin_ladder` runs from the top class (rank 0) down, so as
    the low classes sell out the answer climbs the ladder and the price rises."""
    if seats_needed < 1:
        raise ValueError("a party that needs no seat has no booking class to find")
    for rbd in reversed(cabin_ladder):
        if availability.get(rbd, 0) >= seats_needed:
            return rbd
    return None


def fare_terms_for(markets: Iterable[tuple[str, str]]) -> dict[tuple[str, str, str], FareTerms]:
    """The fares `price_option` needs for these (origin, destination) markets: one query
    (selectors.fares_for_markets); call it once per request, not per option."""
    return selectors.fares_for_markets(markets)
