"""The airline-size seed (tests/airline_size.py) takes inventory as its bookings hold
seats, and books in the cabin's top class what class M has no room for."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.db.models import F

from airline.network.itineraries import reset_network_index
from airline.network.models import BookingClass, LegInventory
from orders.models import Segment
from tests.airline_size import airline_size_seed, inventory_mismatches

pytestmark = pytest.mark.django_db


@pytest.fixture
def schedule():
    reset_network_index()
    call_command("seed_demo", stdout=StringIO())
    yield
    reset_network_index()


def test_what_class_m_has_no_room_for_is_booked_in_the_top_class(schedule):
    # Class M may sell two more seats on every leg: a booking of three does not fit.
    LegInventory.objects.filter(rbd="M").update(authorized=F("sold") + 2)
    top = BookingClass.objects.get(cabin="Y", rank=0).rbd

    airline_size_seed(orders=2_000, deliveries=10)

    held = Segment.objects.filter(holds_inventory=True, order__order_id__startswith="0SIZE")
    assert held.filter(rbd="M").exists()
    assert held.filter(rbd=top, seats=3).exists()
    assert not held.filter(rbd="M", seats=3).exists()
    assert not LegInventory.objects.filter(sold__gt=F("authorized")).exists()
    assert inventory_mismatches() == []
