"""A schedule load racing a booking on PostgreSQL (issue 24 items 1 and 2): a booking
that holds its legs' locks when the load starts, on a flight-date with no sales yet,
commits while the load waits for those locks. The load must see it: the order gets its
airline change (retime) or keeps its flight as cancelled (drop), never a flight that is
no longer its own, and the load completes."""

import threading
from datetime import timedelta

import pytest
from django.db import connection, connections
from rest_framework.test import APIClient

from airline.network.models import FlightLeg
from orders.booking import create
from orders.models import AirlineChange, Order
from tests.orders.conftest import CARD, book, booking_body
from tests.orders.test_airline_changes import RETIMED_101, reload
from tests.orders.test_exchange import priced_in

pytestmark = [
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.skipif("connection.vendor != 'postgresql'"),
]
WAIT = 30  # seconds: a bound on each wait for the other thread, never a pause


class HeldBooking:
    """A create order run in its own thread that stops, its legs locked and its order
    written but not committed, until `release()`."""

    def __init__(self, monkeypatch, auth, body) -> None:
        self.locked, self.go = threading.Event(), threading.Event()
        self.response = None
        priced_check = create.as_priced

        def held_check(booked, **checked):
            check = priced_check(booked, **checked)

            def wait_then_check(locked_legs):
                self.locked.set()
                assert self.go.wait(WAIT)
                check(locked_legs)

            return wait_then_check

        monkeypatch.setattr(create, "as_priced", held_check)
        self.thread = threading.Thread(target=self._book, args=(auth, body))
        self.thread.start()
        assert self.locked.wait(WAIT), "the booking never reached its legs' locks"

    def _book(self, auth, body) -> None:
        try:
            self.response = book(APIClient(), auth, body)
        finally:
            connections.close_all()

    def release(self) -> None:
        self.go.set()
        self.thread.join(WAIT)


def in_thread(work) -> tuple[threading.Thread, list]:
    failures: list[BaseException] = []

    def run():
        try:
            work()
        except BaseException as exc:
            failures.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, failures


def until_a_backend_waits_for_a_lock() -> None:
    stop = threading.Event()
    for _ in range(WAIT * 100):
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
            if cursor.fetchone()[0]:
                return
        stop.wait(0.01)
    raise AssertionError("the load never waited for the booking's locks")


def racing_load(monkeypatch, api, auth, tmp_path, start, day, *, flight, **change):
    """Book `flight` on `day` (its first sale) and hold the booking at its locks; load a
    schedule with `change` meanwhile; let the booking commit once the load waits."""
    routes = {101: ("PVD", "CHS"), 102: ("CHS", "PVD")}
    origin, destination = routes[flight]
    priced = priced_in(
        api, auth, day, bundle="Nice", flight=flight, origin=origin, destination=destination
    )
    booking = HeldBooking(monkeypatch, auth, booking_body(priced, payment=CARD))
    load, failures = in_thread(lambda: reload(tmp_path, start, **change))
    until_a_backend_waits_for_a_lock()
    booking.release()
    load.join(WAIT)
    assert not load.is_alive()
    assert not failures, failures
    return booking.response


def test_a_booking_that_commits_while_a_load_retimes_its_flight_gets_the_change(
    monkeypatch, api, auth, network, tmp_path
):
    day = network + timedelta(days=5)
    response = racing_load(
        monkeypatch, api, auth, tmp_path, network, day, flight=101, f101=RETIMED_101
    )

    assert response.status_code == 201, response.content
    order = Order.objects.get(order_id=response.json()["data"]["order"]["orderId"])
    change = AirlineChange.objects.get(order=order)
    assert (change.status, change.reasons) == ("PENDING", ["RETIMED"])
    segment = order.segments.get()
    flown = FlightLeg.objects.get(pk=segment.legs.get().flight_leg_id)
    assert segment.departs_at != flown.departs_at  # as booked, and the change says so


def test_a_load_that_drops_a_flight_a_booking_lands_on_completes_and_keeps_it_cancelled(
    monkeypatch, api, auth, network, tmp_path
):
    day = network + timedelta(days=5)
    response = racing_load(monkeypatch, api, auth, tmp_path, network, day, flight=102, f102=None)

    assert response.status_code == 201, response.content
    order = Order.objects.get(order_id=response.json()["data"]["order"]["orderId"])
    leg = FlightLeg.objects.get(pk=order.segments.get().legs.get().flight_leg_id)
    assert leg.is_cancelled  # kept for its booking; its other dates are gone
    assert FlightLeg.objects.filter(flight_number=102).count() == 1
    change = AirlineChange.objects.get(order=order)
    assert (change.status, change.reasons) == ("PENDING", ["CANCELLED"])
