"""Pricing an option for a party: who pays what, and the money invariants of DESIGN.md §4
(checked over random journeys, fares and parties)."""

from decimal import ROUND_HALF_UP, Decimal
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airline.fares.money import ZERO, price_sum
from airline.fares.pricing import (
    NoFare,
    PassengerMix,
    SegmentToPrice,
    cheapest_available_rbd,
    price_option,
)
from airline.fares.taxes import parse_tax_rules
from tests.fares.factories import bundle, fare, fares

PVD_CHS = [SegmentToPrice("PVD", "CHS", "L", leg_origins=("PVD",))]
PVD_CHS_FARES = fares(fare("PVD", "CHS", "L", "100.00", basis="L21OW"))
ECONOMY = ("Y", "B", "M", "H", "K", "L")


def test_a_child_pays_the_adult_fare_and_taxes():
    option = price_option(
        segments=PVD_CHS, bundle=bundle(), fares=PVD_CHS_FARES, mix=PassengerMix(1, 1, 0)
    )

    assert option.per_ptc["CHD"] == option.per_ptc["ADT"]
    assert option.total.total == Decimal("245.80")  # 2 x 122.90


def test_a_lap_infant_pays_nothing_at_all():
    option = price_option(
        segments=PVD_CHS, bundle=bundle(), fares=PVD_CHS_FARES, mix=PassengerMix(1, 0, 1)
    )

    infant = option.per_ptc["INF"]
    assert (infant.base, infant.taxes, infant.fees) == (ZERO, (), ())
    assert option.counts == {"ADT": 1, "INF": 1}
    assert option.total == option.per_ptc["ADT"]


def test_only_the_types_in_the_party_are_priced():
    option = price_option(
        segments=PVD_CHS, bundle=bundle(), fares=PVD_CHS_FARES, mix=PassengerMix(adults=3)
    )

    assert set(option.per_ptc) == {"ADT"}
    assert option.counts == {"ADT": 3}
    assert option.total.base == Decimal("300.00")


def test_the_supplement_is_per_passenger_per_segment():
    segments = [
        SegmentToPrice("PVD", "CLT", "K", leg_origins=("PVD",)),
        SegmentToPrice("CLT", "MSY", "L", leg_origins=("CLT",)),
    ]
    terms = fares(fare("PVD", "CLT", "K", "120.00"), fare("CLT", "MSY", "L", "140.00"))

    option = price_option(
        segments=segments,
        bundle=bundle("70.00", code="NICER", suffix="NR"),
        fares=terms,
        mix=PassengerMix(adults=2),
    )

    assert option.per_ptc["ADT"].base == Decimal("400.00")  # 120 + 140 + 2 x 70
    assert option.total.base == Decimal("800.00")


def test_each_segment_gets_its_fare_basis_with_the_bundle_suffix():
    segments = [
        SegmentToPrice("PVD", "CLT", "K", leg_origins=("PVD",)),
        SegmentToPrice("CLT", "MSY", "L", leg_origins=("CLT",)),
    ]
    terms = fares(
        fare("PVD", "CLT", "K", "120.00", basis="K14OW"),
        fare("CLT", "MSY", "L", "140.00", basis="L21OW"),
    )

    option = price_option(
        segments=segments, bundle=bundle(suffix="NF"), fares=terms, mix=PassengerMix(1)
    )

    assert option.fare_basis_codes == ("K14OWNF", "L21OWNF")


def test_a_segment_without_a_fare_in_its_class_cannot_be_priced():
    with pytest.raises(NoFare) as raised:
        price_option(
            segments=[SegmentToPrice("PVD", "CHS", "K", leg_origins=("PVD",))],
            bundle=bundle(),
            fares=PVD_CHS_FARES,
            mix=PassengerMix(1),
        )

    assert raised.value.key == ("PVD", "CHS", "K")


def test_a_party_and_a_segment_must_make_sense():
    with pytest.raises(ValueError, match="negative"):
        PassengerMix(1, -1, 0)
    with pytest.raises(ValueError, match="at least one passenger"):
        PassengerMix(0, 0, 0)
    with pytest.raises(ValueError, match="legs must start"):
        SegmentToPrice("PVD", "TPA", "L", leg_origins=("CHS",))
    with pytest.raises(ValueError, match="at least one segment"):
        price_option(segments=[], bundle=bundle(), fares={}, mix=PassengerMix(1))


# --- The invariants, over random options ------------------------------------------------

STATIONS = ("BDL", "CHS", "CLT", "MCO", "MSY", "ORF", "PIT", "PVD", "TPA")
cents = st.decimals(min_value=Decimal("1.00"), max_value=Decimal("3000.00"), places=2)


@st.composite
def options(draw):
    count = draw(st.integers(1, 3))
    stations = draw(st.lists(st.sampled_from(STATIONS), min_size=count + 1, max_size=count + 1))
    segments, terms = [], {}
    for origin, destination in pairwise(stations):
        stops = draw(st.lists(st.sampled_from(STATIONS), max_size=2))
        rbd = draw(st.sampled_from(ECONOMY))
        segments.append(SegmentToPrice(origin, destination, rbd, (origin, *stops)))
        amount = draw(cents)
        terms[(origin, destination, rbd)] = fare(origin, destination, rbd, str(amount))
    supplement = draw(st.decimals(min_value=0, max_value=200, places=2))
    adults = draw(st.integers(1, 9))
    mix = PassengerMix(adults, draw(st.integers(0, 9 - adults)), draw(st.integers(0, adults)))
    return segments, terms, bundle(str(supplement)), mix


@settings(max_examples=300, deadline=None)
@given(options())
def test_prices_always_add_up(option_input):
    segments, terms, bundle_terms, mix = option_input

    option = price_option(segments=segments, bundle=bundle_terms, fares=terms, mix=mix)

    total = option.total
    every_amount = [total.base, *(t.amount for t in total.taxes)]
    for price in option.per_ptc.values():
        every_amount += [price.base, *(t.amount for t in price.taxes)]
    assert all(amount == amount.quantize(Decimal("0.01")) for amount in every_amount)
    # total = base + taxes + fees
    assert total.total == total.base + sum(t.amount for t in total.taxes) + sum(
        f.amount for f in total.fees
    )
    # passenger prices x counts sum to the total exactly, amount by amount
    by_type = price_sum(option.per_ptc[ptc].times(n) for ptc, n in option.counts.items())
    assert by_type == total
    assert sum(option.per_ptc[ptc].total * n for ptc, n in option.counts.items()) == total.total
    assert option.counts == mix.counts()
    # the wire says the same
    wire = total.to_wire()
    assert wire["total"]["amount"] == wire["base"]["amount"] + sum(
        t["amount"]["amount"] for t in wire["taxes"]
    )
    # the adult's taxes follow the rules
    adult = option.per_ptc["ADT"]
    taxes = {t.code: t.amount for t in adult.taxes}
    legs = sum(len(s.leg_origins) for s in segments)
    assert taxes["US"] == (adult.base * Decimal("0.075")).quantize(Decimal("0.01"), ROUND_HALF_UP)
    assert taxes["ZP"] == Decimal("5.30") * legs
    assert taxes["AY"] == min(Decimal("5.60") * len(segments), Decimal("11.20"))
    assert taxes["XF"] == Decimal("4.50") * min(len(segments), 2)
    assert len(option.fare_basis_codes) == len(segments)


def test_rules_can_be_passed_in_instead_of_read_from_settings():
    only_us = parse_tax_rules({"US": {"description": "US Transportation Tax", "rate": "0.075"}})

    option = price_option(
        segments=PVD_CHS, bundle=bundle(), fares=PVD_CHS_FARES, mix=PassengerMix(1), taxes=only_us
    )

    assert option.total.total == Decimal("107.50")


# --- Choosing the booking class ---------------------------------------------------------


def test_the_cheapest_class_with_enough_seats_is_chosen():
    seats = {"Y": 60, "B": 54, "M": 45, "H": 36, "K": 24, "L": 12}

    assert cheapest_available_rbd(seats, ECONOMY, 1) == "L"
    assert cheapest_available_rbd(seats, ECONOMY, 12) == "L"
    assert cheapest_available_rbd(seats, ECONOMY, 13) == "K"
    assert cheapest_available_rbd(seats, ECONOMY, 60) == "Y"


def test_the_class_climbs_as_lower_classes_sell_out():
    assert cheapest_available_rbd({"Y": 9, "B": 3, "M": 0, "H": 0}, ECONOMY, 2) == "B"
    assert cheapest_available_rbd({"Y": 1, "B": 0}, ECONOMY, 1) == "Y"


def test_no_class_when_the_cabin_cannot_seat_the_party():
    assert cheapest_available_rbd({"Y": 3, "B": 2}, ECONOMY, 4) is None
    assert cheapest_available_rbd({}, ECONOMY, 1) is None  # cabin not on the aircraft


def test_a_party_needs_at_least_one_seat():
    with pytest.raises(ValueError, match="no seat"):
        cheapest_available_rbd({"Y": 3}, ECONOMY, 0)
