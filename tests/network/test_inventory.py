"""Seat inventory: nested booking classes, all-or-nothing segment sales (DESIGN.md §6)."""

import pytest
from django.db import IntegrityError, transaction

from airline.network.inventory import (
    SeatChange,
    SoldOut,
    availability,
    inventory_apply,
    inventory_sell,
)
from airline.network.models import LegInventory
from tests.network.factories import FlightLegFactory

pytestmark = pytest.mark.django_db


def sold(leg) -> dict[str, int]:
    return dict(LegInventory.objects.filter(leg=leg).values_list("rbd", "sold"))


def test_new_legs_get_the_nested_ladder_sized_by_their_configuration():
    leg = FlightLegFactory()

    rows = {r.rbd: (r.cabin, r.rank, r.authorized) for r in LegInventory.objects.filter(leg=leg)}

    assert rows == {
        "J": ("C", 0, 8),
        "C": ("C", 1, 5),
        "D": ("C", 2, 3),
        "Y": ("Y", 0, 60),
        "B": ("Y", 1, 54),
        "M": ("Y", 2, 45),
        "H": ("Y", 3, 36),
        "K": ("Y", 4, 24),
        "L": ("Y", 5, 12),
    }


def test_a_sale_counts_against_its_class_and_every_class_above_it():
    leg = FlightLegFactory()

    inventory_sell(leg_ids=[leg.pk], rbd="H", seats=2)

    assert sold(leg) == {"J": 0, "C": 0, "D": 0, "Y": 2, "B": 2, "M": 2, "H": 2, "K": 0, "L": 0}
    assert availability(leg_ids=[leg.pk], cabin="Y") == {
        "Y": 58,
        "B": 52,
        "M": 43,
        "H": 34,
        "K": 24,
        "L": 12,
    }


def test_a_full_low_class_leaves_the_classes_above_it_on_sale():
    leg = FlightLegFactory()
    inventory_sell(leg_ids=[leg.pk], rbd="L", seats=12)

    with pytest.raises(SoldOut):
        inventory_sell(leg_ids=[leg.pk], rbd="L", seats=1)
    inventory_sell(leg_ids=[leg.pk], rbd="K", seats=1)

    assert availability(leg_ids=[leg.pk], cabin="Y")["L"] == 0
    assert availability(leg_ids=[leg.pk], cabin="Y")["K"] == 11


def test_lower_classes_close_as_the_cabin_fills_from_above():
    leg = FlightLegFactory()

    inventory_sell(leg_ids=[leg.pk], rbd="Y", seats=55)

    assert availability(leg_ids=[leg.pk], cabin="Y") == {
        "Y": 5,
        "B": 5,
        "M": 5,
        "H": 5,
        "K": 5,
        "L": 5,
    }


def test_the_cabin_never_sells_beyond_capacity():
    leg = FlightLegFactory()
    inventory_sell(leg_ids=[leg.pk], rbd="Y", seats=60)

    with pytest.raises(SoldOut):
        inventory_sell(leg_ids=[leg.pk], rbd="Y", seats=1)
    assert sold(leg)["Y"] == 60


def test_a_multi_leg_sale_takes_seats_on_every_leg():
    first = FlightLegFactory(origin_id="PVD", destination_id="CHS")
    second = FlightLegFactory(
        origin_id="CHS", destination_id="TPA", flight_number=first.flight_number, leg_sequence=2
    )

    inventory_sell(leg_ids=[first.pk, second.pk], rbd="M", seats=3)

    assert sold(first)["M"] == sold(second)["M"] == 3


def test_a_failed_multi_leg_sale_leaves_no_leg_decremented():
    first = FlightLegFactory(origin_id="PVD", destination_id="CHS")
    second = FlightLegFactory(
        origin_id="CHS", destination_id="TPA", flight_number=first.flight_number, leg_sequence=2
    )
    inventory_sell(leg_ids=[second.pk], rbd="Y", seats=59)
    before = sold(first)

    with pytest.raises(SoldOut) as refused:
        inventory_sell(leg_ids=[first.pk, second.pk], rbd="Y", seats=2)

    assert refused.value.leg_id == second.pk
    assert sold(first) == before


def test_availability_of_a_segment_is_the_tightest_leg():
    first = FlightLegFactory(origin_id="PVD", destination_id="CHS")
    second = FlightLegFactory(
        origin_id="CHS", destination_id="TPA", flight_number=first.flight_number, leg_sequence=2
    )
    inventory_sell(leg_ids=[second.pk], rbd="Y", seats=50)

    assert availability(leg_ids=[first.pk, second.pk], cabin="Y")["L"] == 10


def inventory_release(*, leg_ids: list[int], rbd: str, seats: int) -> None:
    """Seats given back, as a cancellation or an expired hold gives them."""
    with transaction.atomic():
        inventory_apply([SeatChange(tuple(leg_ids), rbd, -seats)])


def test_releasing_gives_seats_back_to_every_class_above():
    leg = FlightLegFactory()
    inventory_sell(leg_ids=[leg.pk], rbd="K", seats=4)

    inventory_release(leg_ids=[leg.pk], rbd="K", seats=4)

    assert set(sold(leg).values()) == {0}


def test_releasing_more_than_was_sold_is_refused_and_changes_nothing():
    leg = FlightLegFactory()
    inventory_sell(leg_ids=[leg.pk], rbd="K", seats=1)

    with pytest.raises(ValueError, match="not sold"):
        inventory_release(leg_ids=[leg.pk], rbd="K", seats=2)
    assert sold(leg)["K"] == 1


def test_the_database_refuses_sold_beyond_authorized_whatever_the_code():
    leg = FlightLegFactory()
    row = LegInventory.objects.get(leg=leg, rbd="L")

    row.sold = row.authorized + 1
    with pytest.raises(IntegrityError), transaction.atomic():
        row.save(update_fields=["sold"])
