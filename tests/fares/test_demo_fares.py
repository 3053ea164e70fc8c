"""Demo fares: deterministic, rising with the booking class, filed idempotently."""

from decimal import Decimal

import pytest

from airline.fares.demo import demo_fare_amount, demo_fares
from airline.fares.models import Fare
from airline.fares.pricing import (
    PassengerMix,
    SegmentToPrice,
    cheapest_available_rbd,
    fare_terms_for,
    price_option,
)
from airline.fares.selectors import booking_class_ladders, fares_for_markets
from airline.fares.services import fares_ensure_demo
from airline.network.inventory import availability, inventory_sell
from tests.fares.factories import bundle
from tests.network.factories import FlightLegFactory

ECONOMY_UP = ("L", "K", "H", "M", "B", "Y")
BUSINESS_UP = ("D", "C", "J")
MARKETS = [("PVD", "CHS", 1083.4), ("CHS", "PVD", 1083.4), ("TPA", "ORF", 1046.9)]


def row(fare: Fare) -> tuple:
    return (fare.origin, fare.destination, fare.rbd, fare.base_amount, fare.fare_basis)


def amounts(distance_km: float, rbds: tuple[str, ...]) -> list[Decimal]:
    return [demo_fare_amount(distance_km, rbd) for rbd in rbds]


@pytest.mark.parametrize("distance_km", [0.0, 150.0, 612.7, 1083.4, 2500.0, 4000.0])
def test_demo_fares_rise_with_the_class_in_each_cabin(distance_km):
    economy = amounts(distance_km, ECONOMY_UP)
    business = amounts(distance_km, BUSINESS_UP)

    assert economy == sorted(set(economy))
    assert business == sorted(set(business))
    assert business[0] >= economy[0] * Decimal("2.4")  # D from about 2.5x L


def test_a_demo_fare_is_distance_priced_and_ends_in_99_cents():
    # 1000 km: L = 0.09 x 1000 + 39 = 129 -> 128.99; Y = 3.2 x 129 = 412.80 -> 412.99
    assert demo_fare_amount(1000.0, "L") == Decimal("128.99")
    assert demo_fare_amount(1000.0, "Y") == Decimal("412.99")
    assert demo_fare_amount(1000.0, "J") == Decimal("580.99")  # 4.5 x 129 = 580.50 -> 581


def test_a_short_market_is_not_priced_below_the_floor():
    assert demo_fare_amount(10.0, "L") == Decimal("48.99")
    assert demo_fare_amount(0.0, "L") == Decimal("48.99")


def test_demo_fares_are_deterministic():
    first = [row(fare) for fare in demo_fares(MARKETS)]
    again = [row(fare) for fare in demo_fares(MARKETS)]

    assert first == again
    assert len(first) == 3 * 9
    assert {f[2] for f in first} == set(ECONOMY_UP + BUSINESS_UP)


@pytest.mark.django_db
def test_filing_the_demo_fares_twice_changes_nothing():
    assert fares_ensure_demo(MARKETS) == 27
    before = list(Fare.objects.values_list("origin", "destination", "rbd", "base_amount"))

    assert fares_ensure_demo(MARKETS + MARKETS[:1]) == 27  # a repeated market is fine

    assert list(Fare.objects.values_list("origin", "destination", "rbd", "base_amount")) == before


@pytest.mark.django_db
def test_filing_the_demo_fares_again_restores_an_edited_amount():
    fares_ensure_demo(MARKETS)
    Fare.objects.filter(origin="PVD", destination="CHS", rbd="L").update(base_amount=1)

    fares_ensure_demo(MARKETS)

    # 0.09 x 1083 km + 39 = 136.47 -> 136 -> 135.99
    restored = Fare.objects.get(origin="PVD", destination="CHS", rbd="L")
    assert restored.base_amount == Decimal("135.99")


@pytest.mark.django_db
def test_fares_are_selected_by_directional_market(django_assert_num_queries):
    fares_ensure_demo(MARKETS)

    with django_assert_num_queries(1):
        terms = fares_for_markets([("pvd", "chs"), ("TPA", "ORF")])

    assert {(o, d) for o, d, _ in terms} == {("PVD", "CHS"), ("TPA", "ORF")}
    # K: 1.25 x 136.47 = 170.59 -> 171 -> 170.99
    assert terms[("PVD", "CHS", "K")].base_amount == Decimal("170.99")
    assert terms[("PVD", "CHS", "K")].fare_basis == "K14OW"
    assert fares_for_markets([]) == {}
    assert fare_terms_for([("CHS", "PVD")]).keys() == fares_for_markets([("CHS", "PVD")]).keys()


@pytest.mark.django_db
def test_the_price_rises_as_the_lower_classes_sell_out():
    fares_ensure_demo(MARKETS)
    leg = FlightLegFactory(origin_id="PVD", destination_id="CHS")
    ladder = booking_class_ladders()["Y"]
    terms = fare_terms_for([("PVD", "CHS")])

    def cheapest_price() -> Decimal:
        rbd = cheapest_available_rbd(availability(leg_ids=[leg.pk], cabin="Y"), ladder, 2)
        segment = SegmentToPrice("PVD", "CHS", rbd, leg_origins=("PVD",))
        option = price_option(segments=[segment], bundle=bundle(), fares=terms, mix=PassengerMix(2))
        return option.per_ptc["ADT"].base

    first = cheapest_price()
    inventory_sell(leg_ids=[leg.pk], rbd="L", seats=11)  # L has 12 seats (20% of 60)
    second = cheapest_price()

    assert (first, second) == (Decimal("135.99"), Decimal("170.99"))  # L, then K
