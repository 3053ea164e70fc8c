"""Demo fares: a plausible US domestic price ladder per booking class, from distance.

The lowest economy class L costs about 0.09 USD/km + 39 (never less than FLOOR); each
class above it a fixed multiple of L, up to Y at 3.2x; business classes start at 2.5x L
(D, a discounted business fare, sells below a full-fare Y, as on real carriers). Prices
end in .99 like retail fares. Everything is Decimal arithmetic on the whole-kilometre
distance, so the same markets always give the same fares.
"""

from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal

from airline.fares.models import Fare
from airline.fares.money import money

PER_KM = Decimal("0.09")
BASE = Decimal("39")
FLOOR = Decimal("49")  # the raw L fare of a very short market
# Multiple of the L fare per class. Our fleet has Y and C cabins only (network
# demo_fleet.py); W and F classes get no demo fares.
STEPS = {
    "L": Decimal("1.00"),
    "K": Decimal("1.25"),
    "H": Decimal("1.55"),
    "M": Decimal("1.95"),
    "B": Decimal("2.50"),
    "Y": Decimal("3.20"),
    "D": Decimal("2.50"),
    "C": Decimal("3.40"),
    "J": Decimal("4.50"),
}
# Fare basis codes: class, the advance-purchase days the name suggests, one way. Labels
# only: no advance-purchase rule is enforced.
FARE_BASIS = {
    "L": "L21OW",
    "K": "K14OW",
    "H": "H7OW",
    "M": "M3OW",
    "B": "BOW",
    "Y": "YOW",
    "D": "D7OW",
    "C": "C3OW",
    "J": "JOW",
}
CENT = Decimal("0.01")


def demo_fare_amount(distance_km: float, rbd: str) -> Decimal:
    """The demo fare of a class in a market this long: whole dollars minus a cent."""
    km = Decimal(round(distance_km))
    lowest = max(PER_KM * km + BASE, FLOOR)
    dollars = (lowest * STEPS[rbd]).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    return money(dollars - CENT)


def demo_fares(markets: Iterable[tuple[str, str, float]]) -> list[Fare]:
    """Unsaved fares of every demo class for each (origin, destination, distance_km)."""
    fares = []
    for origin, destination, distance_km in markets:
        if distance_km < 0:
            raise ValueError(f"{origin}-{destination}: negative distance {distance_km}")
        for rbd in STEPS:
            fares.append(
                Fare(
                    origin=origin.upper(),
                    destination=destination.upper(),
                    rbd=rbd,
                    base_amount=demo_fare_amount(distance_km, rbd),
                    fare_basis=FARE_BASIS[rbd],
                )
            )
    return fares
