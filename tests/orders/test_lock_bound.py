"""A request never waits on a long writer beyond LOCK_WAIT_TIMEOUT_MS (PostgreSQL): while
another transaction holds a flight's legs (a schedule load writing them) or an order's
row (the airline changes it records), a booking or a change on them is answered 503
ERR-9000 with Retry-After once the bound has passed, and nothing of it is written."""

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
from django.db import OperationalError, connection, connections, transaction
from django.db.models import Sum
from lxml import etree

from airline.network.models import FlightLeg, LegInventory, SeatConfiguration
from airline.sql import LockBusy, lock_wait_bounded
from orders.models import Order, OrderStatus, PaymentIntent, Service
from tests.conftest import error_of, round_trips_sent, statements_sent
from tests.ndc.conftest import ndc_error_of, post
from tests.ndc.test_orders import create_request
from tests.orders.conftest import CARD, HOLD, book, booking_body, price_offer
from tests.orders.test_first_booking_ancillaries import (
    offer_ancillaries,
    seat_change,
    seat_for,
)
from tests.orders.test_order_ancillaries import open_seat

pytestmark = [
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.skipif("connection.vendor != 'postgresql'"),
]
WAIT = 30  # seconds: a bound on each wait for the other thread, never a pause
BOUND_MS = 200


@pytest.fixture(autouse=True)
def _short_bound(settings) -> None:
    settings.LOCK_WAIT_TIMEOUT_MS = BOUND_MS


class Held:
    """Rows locked FOR UPDATE by a transaction in its own thread (and connection), as a
    schedule load holds them while it writes, until `release()`; it lets go by itself
    after WAIT seconds, so a request that waited for it would then go through."""

    def __init__(self, rows) -> None:
        self.locked, self.go = threading.Event(), threading.Event()
        self.thread = threading.Thread(target=self._hold, args=(rows,))
        self.thread.start()
        assert self.locked.wait(WAIT), "the rows were never locked"

    def _hold(self, rows) -> None:
        try:
            with transaction.atomic():
                assert list(rows.select_for_update())
                self.locked.set()
                self.go.wait(WAIT)
        finally:
            connections.close_all()

    @property
    def holding(self) -> bool:
        return self.thread.is_alive() and not self.go.is_set()

    def release(self) -> None:
        self.go.set()
        self.thread.join(WAIT)
        assert not self.thread.is_alive()


@contextmanager
def held(rows) -> Iterator[Held]:
    holder = Held(rows)
    try:
        yield holder
    finally:
        holder.release()


def legs_of(day, back=None):
    """Every flight-date leg flying around `day` to `back` (the offer's among them)."""
    return FlightLeg.objects.filter(flight_date__range=(day - timedelta(days=1), back or day))


def seats_sold() -> int:
    return LegInventory.objects.aggregate(sold=Sum("sold"))["sold"]


def test_a_booking_on_legs_a_schedule_change_holds_is_answered_503_and_writes_nothing(
    api, auth, travel_day
):
    priced = price_offer(api, auth, travel_day)
    body = booking_body(priced, payment=CARD)
    sold = seats_sold()

    with held(legs_of(travel_day)) as legs:
        response = book(api, auth, body)
        assert legs.holding  # answered within the bound, not once the legs were let go

    error = error_of(response, 503, "ERR-9000")
    assert "being updated" in error["description"]
    assert "retry" in error["description"]
    assert response["Retry-After"] == "2"
    assert not Order.objects.exists()
    assert not PaymentIntent.objects.exists()  # no card charged for it
    assert seats_sold() == sold
    # The same request, retried once the load is done, books.
    assert book(api, auth, body).status_code == 201


def test_an_ndc_order_create_on_held_legs_is_answered_503_in_its_shape(api, auth, travel_day):
    back = travel_day + timedelta(days=7)
    priced = price_offer(api, auth, travel_day, back=back)  # the example's two items
    sold = seats_sold()

    with held(legs_of(travel_day, back)) as legs:
        response = post(api, "OrderCreate", etree.tostring(create_request(priced)), auth)
        assert legs.holding

    fields = ndc_error_of(response, 503, "ERR-9000", "IATA_OrderViewRS")
    assert "being updated" in fields["DescText"]
    assert response["Retry-After"] == "2"
    assert not Order.objects.exists()
    assert seats_sold() == sold


def test_a_change_of_an_order_the_airline_holds_is_answered_503_and_changes_nothing(
    api, auth, travel_day
):
    booked = book(api, auth, booking_body(price_offer(api, auth, travel_day), payment=HOLD))
    assert booked.status_code == 201, booked.content
    order_id = booked.json()["data"]["order"]["orderId"]
    sold = seats_sold()

    with held(Order.objects.filter(order_id=order_id)) as order:
        response = api.patch(
            f"/json/v1/orders/{order_id}",
            {"changes": [{"type": "CancelUnpaidOrder"}]},
            format="json",
            **auth,
        )
        assert order.holding

    error = error_of(response, 503, "ERR-9000")
    assert "order is being updated" in error["description"]
    assert response["Retry-After"] == "2"
    assert Order.objects.get(order_id=order_id).status == OrderStatus.ONHOLD
    assert seats_sold() == sold


def test_the_bound_leaves_the_transactions_own_lock_timeout_as_it_was(db):
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '7s'")
        with lock_wait_bounded("busy"):
            assert lock_timeout() == f"{BOUND_MS}ms"
        assert lock_timeout() == "7s"
        # Also when the block fails without spoiling the transaction (a refusal).
        with pytest.raises(LookupError), lock_wait_bounded("busy"):
            raise LookupError("refused")
        assert lock_timeout() == "7s"


def lock_timeout() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW lock_timeout")
        return cursor.fetchone()[0]


def bound_set(sent: list[str]) -> list[str]:
    return [sql for sql in sent if "set_config('lock_timeout'" in sql]


def test_nested_bounds_set_the_bound_once_and_name_their_own_lock(travel_day):
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '7s'")
        with statements_sent() as queries:
            with lock_wait_bounded("outer"):
                with lock_wait_bounded("inner"):
                    assert lock_timeout() == f"{BOUND_MS}ms"
                with lock_wait_bounded("inner again"):
                    assert lock_timeout() == f"{BOUND_MS}ms"
            # Set back ahead of the next statement.
            assert lock_timeout() == "7s"
        assert len(bound_set(queries)) == 2  # set once, set back once

    rows = legs_of(travel_day)
    with held(rows) as legs:
        with (
            pytest.raises(LockBusy) as refused,
            transaction.atomic(),
            lock_wait_bounded("outer"),
            lock_wait_bounded("the inner lock"),
        ):
            list(rows.select_for_update())
        assert legs.holding
    # In the inner block's words; the outer one did not try to set the bound back on the
    # spoiled transaction (that would have raised InFailedSqlTransaction instead).
    assert "the inner lock" in refused.value.description


def test_a_bound_with_nothing_sent_in_it_sends_nothing(db):
    with transaction.atomic(), statements_sent() as queries:
        with lock_wait_bounded("busy"):
            pass
        assert lock_timeout() == "0"
    assert bound_set(queries) == []


def test_a_bound_whose_block_failed_before_sending_is_not_sent_later(db):
    # The database went away before the block's first statement: the transaction is
    # spoiled, and the next one must not start under this bound.
    with pytest.raises(OperationalError), transaction.atomic(), lock_wait_bounded("busy"):
        raise OperationalError("the connection was lost")

    with transaction.atomic(), statements_sent() as queries:
        assert lock_timeout() == "0"
    assert bound_set(queries) == []


def test_a_bookings_bound_goes_with_its_legs_lock_and_is_set_back_with_what_follows(
    api, auth, travel_day
):
    priced = price_offer(api, auth, travel_day)

    with round_trips_sent() as trips:
        booked = book(api, auth, booking_body(priced, payment=HOLD))

    assert booked.status_code == 201, booked.content
    [bound, set_back] = [trip for trip in trips if bound_set(trip)]
    # Each ahead of another statement, in its round trip: the bound ahead of the legs'
    # lock (the order's row ahead of both), the set-back ahead of the first statement
    # after the locks were taken.
    assert len(bound) == 3
    assert bound[0].startswith('INSERT INTO "orders_order"')
    assert bound_set(bound) == bound[1:2]
    assert "FOR UPDATE" in bound[2]
    assert bound_set(set_back) == set_back[:1]
    assert len(set_back) > 1
    assert trips.index(set_back) > trips.index(bound)


def test_a_seat_on_a_seat_map_the_airline_holds_is_answered_503_and_nothing_is_sold(
    api, auth, travel_day
):
    priced = price_offer(api, auth, travel_day)
    seat_data = offer_ancillaries(api, auth, priced, "seats")
    unit, row = open_seat(seat_data["legSeatMaps"][0], "ADT-1")
    body = booking_body(priced, payment=HOLD, ancillaries=[seat_for(seat_data, unit, row)])
    sold = seats_sold()

    # A back-office edit of the aircraft's seat map holds its row while it writes.
    with held(SeatConfiguration.objects.all()) as seat_maps:
        with statements_sent() as queries:
            response = book(api, auth, body)
        assert seat_maps.holding

    error = error_of(response, 503, "ERR-9000")
    assert "seat map of a flight" in error["description"]
    assert response["Retry-After"] == "2"
    assert not Order.objects.exists()
    assert seats_sold() == sold
    # One bound over the legs' locks and the seat map's: set once, never set back on
    # the spoiled transaction.
    assert len(bound_set(queries)) == 1
    # Once the edit is done, the same booking goes through, setting the bound once and
    # setting it back once.
    with statements_sent() as queries:
        booked = book(api, auth, body)
    assert booked.status_code == 201, booked.content
    assert len(bound_set(queries)) == 2
    assert Service.objects.filter(seat_row=int(unit["designator"][:-1])).exists()


def test_a_seat_bought_on_a_hold_sets_the_bound_once_over_three_locks(api, auth, travel_day):
    booked = book(api, auth, booking_body(price_offer(api, auth, travel_day), payment=HOLD))
    assert booked.status_code == 201, booked.content
    order = booked.json()["data"]
    entry, _unit, _row = seat_change(api, auth, order, 0)

    with statements_sent() as queries:
        response = api.patch(
            f"/json/v1/orders/{order['order']['orderId']}",
            {"changes": [entry]},
            format="json",
            **auth,
        )

    assert response.status_code == 200, response.content
    # The order's row, its legs' and their seat map's, under one bound.
    assert len(bound_set(queries)) == 2
    locks = [sql for sql in queries if " FOR UPDATE" in sql or " FOR SHARE" in sql]
    assert len(locks) == 3, locks
