"""Bookings of a seat racing the back office's block of it (issue 24 item 3), on
PostgreSQL with real threads, each with its own connection, on committed data: a
booking that committed first is found by the block and gets an airline change; one that
comes after reads the block under its lock and is refused. No booking holds the seat
without an airline change."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from airline.network import configurations
from airline.network.models import FlightLeg, SeatConfiguration
from orders.models import AirlineChange, Service
from tests.orders.conftest import book, booking_body, price_offer
from tests.orders.test_admin_flights import configuration_form
from tests.orders.test_first_booking_ancillaries import offer_ancillaries, seat_for
from tests.orders.test_order_ancillaries import seat_entry, seats, units

pytestmark = [
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.skipif("connection.vendor != 'postgresql'"),
]
ONE = [{"type": "ADT"}]
DAYS = 8  # flights of MX101 on as many dates: one configuration, one seat each


def race(calls, *, late=(), after: threading.Event | None = None):
    """Run `calls` all at once, and `late` once `after` is set: a thread (and a
    connection) each; their responses, `calls`' then `late`'s."""
    start = threading.Barrier(len(calls))
    finished = LATE_FINISHED
    finished.clear()

    def run(call, gate):
        try:
            gate()
            return call()
        finally:
            connection.close()
            if gate is late_gate:
                finished.append(call)

    def late_gate():
        assert after is not None
        assert after.wait(timeout=30)

    with ThreadPoolExecutor(max_workers=len(calls) + len(late)) as pool:
        futures = [pool.submit(run, c, lambda: start.wait(timeout=30)) for c in calls]
        futures += [pool.submit(run, c, late_gate) for c in late]
        return [f.result() for f in futures]


LATE_FINISHED: list = []  # late calls answered (list.append is atomic)


def sessions_waiting_for_me() -> int:
    """Sessions waiting for a lock this connection holds (pg_locks is live, where
    pg_stat_activity would be a snapshot taken once per transaction)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(DISTINCT pid) FROM pg_locks WHERE NOT granted "
            "AND pg_backend_pid() = ANY(pg_blocking_pids(pid))"
        )
        return cursor.fetchone()[0]


def until(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def unit_of(seat_map, designator):
    [unit] = [u for u in units(seat_map) if u["designator"] == designator]
    return unit, unit["passengerPricing"][0]


@pytest.mark.parametrize("designator", ["5A", "6C"])
def test_bookings_of_a_seat_racing_its_block_are_refused_or_get_a_change(
    api, auth, network, designator, monkeypatch
):
    first = network + timedelta(days=5)
    configuration = FlightLeg.objects.get(flight_number=101, flight_date=first).configuration
    # Half the bookings buy the seat with the flight (create order `ancillaries`), half
    # on a hold already made (AcceptOffer); each on its own date, so that every one can
    # win against the others and only the block decides.
    bookings = []
    for n in range(DAYS):
        priced = price_offer(api, auth, first + timedelta(days=n), party=ONE)
        if n % 2:
            seat_data = offer_ancillaries(api, auth, priced, "seats")
            unit, row = unit_of(seat_data["legSeatMaps"][0], designator)
            body = booking_body(priced, ancillaries=[seat_for(seat_data, unit, row)])
            bookings.append(lambda body=body: book(APIClient(), auth, body))
        else:
            hold = book(api, auth, booking_body(priced)).json()["data"]
            order_id = hold["order"]["orderId"]
            seat_data = seats(api, auth, order_id).json()["data"]
            entry = seat_entry(seat_data, *unit_of(seat_data["legSeatMaps"][0], designator))
            bookings.append(
                lambda order_id=order_id, entry=entry: APIClient().patch(
                    f"/json/v1/orders/{order_id}", {"changes": [entry]}, format="json", **auth
                )
            )
    staff = Client()
    staff.force_login(get_user_model().objects.create_user("ops", is_staff=True, is_superuser=True))
    form = configuration_form(configuration, f'["{designator}"]')
    url = f"/admin/network/seatconfiguration/{configuration.pk}/change/"

    # The bookings of the first half race the block; those of the second half start
    # once the block holds the configuration's lock, and the block goes on only once
    # they all wait for it: they must read the block under their locks.
    early, late = bookings[: DAYS // 2], bookings[DAYS // 2 :]
    locked = threading.Event()

    def lock_then_let_them_queue(ids, *, lock):
        layouts = real_configuration_seats(ids, lock=lock)
        if lock == "FOR UPDATE":
            locked.set()
            # (or answered already: without a lock to wait for, they would not wait)
            until(lambda: sessions_waiting_for_me() + len(LATE_FINISHED) >= len(late))
        return layouts

    real_configuration_seats = configurations.configuration_seats
    monkeypatch.setattr(configurations, "configuration_seats", lock_then_let_them_queue)

    responses = race([*early, lambda: staff.post(url, form)], late=late, after=locked)

    blocked = responses[len(early)]
    sales = responses[: len(early)] + responses[len(early) + 1 :]
    assert {r.status_code for r in responses[len(early) + 1 :]} == {400}  # every late one
    assert blocked.status_code == 302, blocked.content.decode()[:2000]
    configuration.refresh_from_db()
    assert configuration.blocked_seats == [designator]
    refused = [r for r in sales if r.status_code == 400]
    assert len(refused) + sum(r.status_code in (200, 201) for r in sales) == DAYS, [
        r.content for r in sales
    ]
    assert {r.json()["error"]["code"] for r in refused} <= {"ERR-4001", "ERR-4002"}
    holders = Service.objects.filter(
        status=Service.Status.ACTIVE,
        seat_row=int(designator[:-1]),
        seat_column=designator[-1],
        flight_leg__configuration=configuration,
    )
    assert holders.count() == DAYS - len(refused)
    # Every booking that holds the seat booked it before the block committed: the block
    # found it and gave it a change. None committed it after.
    for service in holders:
        [change] = AirlineChange.objects.filter(order=service.order_id)
        assert (change.status, change.reasons) == ("PENDING", ["EQUIPMENT"])
    assert AirlineChange.objects.count() == holders.count()
    assert SeatConfiguration.objects.get(pk=configuration.pk).blocked_seats == [designator]
