"""A booking or an exchange writes the journey its worker's schedule index shows; a
schedule load can commit between the request's version check and its legs' locks, so
what it writes is checked against the locked legs (inventory.legs_as_shown): a flight
moved since is refused, never booked at a time it no longer has."""

from datetime import timedelta

import pytest

from airline.network.itineraries import network_index
from airline.network.models import FlightLeg, LegInventory
from orders.booking import create
from orders.models import Order, Segment
from orders.servicing.exchange import accept as exchange_accept
from orders.servicing.exchange import apply as exchange_apply
from orders.servicing.exchange import moves as exchange_moves
from orders.servicing.exchange import wire as exchange_wire
from tests.conftest import error_of
from tests.orders.conftest import HOLD, book, booking_body
from tests.orders.test_airline_changes import RETIMED_101, reload
from tests.orders.test_exchange import accept, itinerary, priced_in, quote, reshop

pytestmark = pytest.mark.django_db


def sold() -> list[tuple]:
    return sorted(LegInventory.objects.values_list("leg_id", "rbd", "sold"))


def test_a_booking_from_a_schedule_older_than_its_flight_is_refused(
    api, auth, network, tmp_path, monkeypatch
):
    day = network + timedelta(days=3)
    before = network_index()  # the worker's schedule, as a load is about to change it
    reload(tmp_path, network, f101=RETIMED_101)
    priced = priced_in(api, auth, day, bundle="Nice", flight=101)  # at the new time
    inventory = sold()
    # The load commits between the booking's version check and its legs' locks.
    monkeypatch.setattr(create, "network_index", lambda **_: before)

    response = book(api, auth, booking_body(priced, payment=HOLD))

    error = error_of(response, 400, "ERR-4001", "offerId")
    assert "has changed since it was shown; search again" in error["description"]
    assert not Order.objects.exists()
    assert sold() == inventory


def test_the_same_booking_from_the_current_schedule_flies_its_flight_s_time(
    api, auth, network, tmp_path
):
    day = network + timedelta(days=3)
    reload(tmp_path, network, f101=RETIMED_101)
    priced = priced_in(api, auth, day, bundle="Nice", flight=101)

    response = book(api, auth, booking_body(priced, payment=HOLD))

    assert response.status_code == 201, response.content
    segment = Segment.objects.get()
    assert (
        segment.departs_at == FlightLeg.objects.get(pk=segment.legs.get().flight_leg_id).departs_at
    )


def test_an_exchange_onto_a_flight_moved_since_its_quote_was_shown_is_refused(
    api, auth, network, tmp_path, monkeypatch
):
    day = network + timedelta(days=3)
    # Booked on MX501 (PVD-CHS on its first leg), which the load leaves alone; exchanged
    # for MX101 the next day, which it retimes.
    booked = book(
        api, auth, booking_body(priced_in(api, auth, day, bundle="Nice", flight=501))
    ).json()["data"]
    order_id = booked["order"]["orderId"]
    offers = reshop(api, auth, order_id, itinerary(day + timedelta(days=1))).json()["data"]
    mx101 = next(j["journeyId"] for j in offers["journeys"] if j["flightNumbers"] == ["MX101"])
    offer = next(o for o in offers["offers"] if mx101 in str(o))
    quoted = quote(api, auth, order_id, offer).json()["data"]
    before = network_index()
    reload(tmp_path, network, f101=RETIMED_101)
    segments = sorted(Segment.objects.values_list("pk", "departs_at"))
    # The load commits between the change's version check and its legs' locks.
    # Every reader of the schedule index an exchange has.
    for module in (exchange_accept, exchange_apply, exchange_moves, exchange_wire):
        monkeypatch.setattr(module, "network_index", lambda **_: before)

    response = accept(api, auth, order_id, quoted["offer"])

    error = error_of(response, 400, "ERR-4002", "changes.offerId")
    assert "has changed since it was shown; reshop again" in error["description"]
    assert sorted(Segment.objects.values_list("pk", "departs_at")) == segments
