"""An order's parts read for its view (orders.reading.selectors.order_parts, and a
change's read of them): those a hold has no row of (payments, tickets, credits, airline
changes, fees) are known empty from one query rather than read one query each, and what
is read is what reading every part gives."""

import pytest
from django.db.models import prefetch_related_objects

from orders.models import Order
from orders.reading.presenters import order_view
from orders.reading.selectors import (
    OFTEN_EMPTY,
    ORDER_VIEW_PREFETCH,
    OrderParts,
    order_parts,
    parts_loaded,
)
from tests.conftest import statements_sent
from tests.orders.conftest import CARD, HOLD, book, booking_body

pytestmark = pytest.mark.django_db


def every_part_read(order_id: str) -> OrderParts:
    order = Order.objects.get(order_id=order_id)
    prefetch_related_objects([order], *ORDER_VIEW_PREFETCH)
    return parts_loaded(order)


def read(order_id: str) -> tuple[OrderParts, list[str]]:
    order = Order.objects.get(order_id=order_id)
    with statements_sent() as sent:
        parts = order_parts(order)
    return parts, sent


def test_a_holds_empty_parts_take_one_query_not_five(api, auth, priced):
    booked = book(api, auth, booking_body(priced, payment=HOLD))
    order_id = booked.json()["data"]["order"]["orderId"]

    parts, sent = read(order_id)

    assert order_view(parts) == order_view(every_part_read(order_id))
    assert (parts.payments, parts.tickets, parts.credits, parts.fees) == ([], [], [], [])
    assert list(parts.airline_changes) == []
    # One query says which of the five the order has; the other seven read its passengers,
    # contact, journeys, segments, legs, items and services.
    assert len(sent) == 8, sent
    [which] = [sql for sql in sent if "EXISTS" in sql]
    assert all(f'"orders_{table}"' in which for table in ("payment", "ticket", "orderfee"))


def test_a_paid_orders_payments_tickets_and_coupons_are_read(api, auth, priced):
    booked = book(api, auth, booking_body(priced, payment=CARD))
    assert booked.status_code == 201, booked.content
    order_id = booked.json()["data"]["order"]["orderId"]

    parts, sent = read(order_id)

    assert parts.payments
    assert parts.tickets
    assert all(parts.coupons.values())
    assert order_view(parts) == order_view(every_part_read(order_id))
    assert len(sent) == 11, sent  # and its payments, tickets and their coupons


def test_the_parts_that_may_be_empty_are_parts_of_the_view():
    loaded = {p if isinstance(p, str) else p.prefetch_through for p in ORDER_VIEW_PREFETCH}
    assert {name.split("__")[0] for name in loaded} >= set(OFTEN_EMPTY)
