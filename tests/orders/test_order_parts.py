"""An order's parts read for its view (orders.reading.selectors.order_parts, and a
change's read of them): those a hold has no row of (payments, tickets, credits, airline
changes, fees) are known empty from one query rather than read one query each, and what
is read is what reading every part gives."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.db.models import prefetch_related_objects
from django.test.utils import CaptureQueriesContext

from airline.api import clock
from airline.api.errors import ApiError, Err
from orders.models import AirlineChange, Order, OrderFee, Payment
from orders.money.credits import credit_issue
from orders.reading.part_rows import parts_load
from orders.reading.presenters import order_view
from orders.reading.selectors import (
    OFTEN_EMPTY,
    ORDER_VIEW_PARTS,
    ORDER_VIEW_PREFETCH,
    OrderParts,
    OrderScope,
    order_header,
    order_parts,
    parts_loaded,
)
from tests.conftest import round_trips_sent, statements_sent
from tests.orders.conftest import CARD, HOLD, book, booking_body, price_offer
from tests.orders.factories import OrderFactory, credit_source
from tests.orders.test_first_booking_ancillaries import seat_and_bag  # noqa: F401 (a fixture)

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


def test_an_orders_parts_are_read_in_one_round_trip(api, auth, priced):
    booked = book(api, auth, booking_body(priced, payment=HOLD))
    order = Order.objects.get(order_id=booked.json()["data"]["order"]["orderId"])

    with round_trips_sent() as trips:
        parts = order_parts(order)

    assert order_view(parts) == order_view(every_part_read(order.order_id))
    # The query that finds the empty parts, then the seven others together.
    [which], parts_read = trips
    assert "EXISTS" in which
    assert len(parts_read) == 7
    # A part's part (the segments' legs) is found through its parent's ids, by the order's.
    [legs] = [sql for sql in parts_read if 'FROM "orders_leg"' in sql]
    assert "IN (SELECT" in legs


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
    assert {part.name for part in ORDER_VIEW_PARTS} >= set(OFTEN_EMPTY)


def rows_alike(ours, theirs, part, parent, path="") -> None:
    """`ours` (parts_load) are `theirs` (prefetch_related) for `part` of `parent`: the same
    rows in the same order, each with the same values, the same rows read along
    (select_related) and its foreign key to `parent` cached, and so on down its parts."""
    where = f"{path}{part.name}"
    assert [r.pk for r in ours] == [r.pk for r in theirs], where
    for mine, other in zip(ours, theirs, strict=True):
        assert fields_of(mine) == fields_of(other), where
        assert (mine._state.db, mine._state.adding) == (other._state.db, False), where
        key = parent._meta.get_field(part.name).field
        assert key.get_cached_value(mine) is parent, where
        for joined in part.joined:
            a, b = mine, other
            for step in joined.split("__"):
                a, b = getattr(a, step), getattr(b, step)  # cached: no query is allowed
                assert (a is None) == (b is None), f"{where}.{joined}"
                if a is not None:
                    assert fields_of(a) == fields_of(b), f"{where}.{joined}"
        for child in part.parts:
            rows_alike(
                list(getattr(mine, child.name).all()),
                list(getattr(other, child.name).all()),
                child,
                mine,
                f"{where}.",
            )


def fields_of(row) -> dict:
    return {f.attname: getattr(row, f.attname) for f in row._meta.concrete_fields}


def both_reads(order_id: str) -> tuple[Order, Order]:
    ours, theirs = (Order.objects.get(order_id=order_id) for _ in range(2))
    parts_load(ours, ORDER_VIEW_PARTS)
    prefetch_related_objects([theirs], *ORDER_VIEW_PREFETCH)
    return ours, theirs


def assert_read_alike(order_id: str) -> None:
    ours, theirs = both_reads(order_id)
    with CaptureQueriesContext(connection) as after:
        for part in ORDER_VIEW_PARTS:
            rows_alike(
                list(getattr(ours, part.name).all()),
                list(getattr(theirs, part.name).all()),
                part,
                ours,
            )
    assert after.captured_queries == []  # every part and row read along was loaded


@pytest.mark.usefixtures("card_gateway")
def test_every_part_reads_as_prefetch_related_reads_it(
    api,
    auth,
    priced,
    seat_and_bag,  # noqa: F811
    travel_day,
    default_seller,
):
    """A paid order: a payment by airline credit (its credit read along) and one by card,
    tickets and their coupons; a cancelled order that gave credit back, with a fee and an
    airline change; a hold with a seat and a bag."""
    now = clock.now()
    given = credit_issue(
        credit_source(amount=Decimal("50.00"), seller=default_seller),
        Decimal("50.00"),
        actor="test",
        now=now,
    )
    paid = book(
        api,
        auth,
        booking_body(
            price_offer(api, auth, travel_day, back=travel_day + timedelta(days=7)),
            payment={
                "type": "AirlineCredit",
                "creditCode": given.code,
                "card": {k: v for k, v in CARD.items() if k != "type"},
            },
        ),
    )
    assert paid.status_code == 201, paid.content
    source = given.source_order
    OrderFee.objects.create(
        order=source,
        ref="FEE-1",
        type=OrderFee.Type.PENALTY,
        code="CXL",
        description="Cancellation",
        amount=Decimal("20.00"),
        created_at=now,
    )
    AirlineChange.objects.create(order=source, ref="AIC-1", detected_at=now, reasons=["RETIMED"])

    order_id = paid.json()["data"]["order"]["orderId"]
    ours, _ = both_reads(order_id)
    assert {p.method for p in ours.payments.all()} == {Payment.Method.CREDIT, Payment.Method.CARD}
    assert all(t.coupons.all() for t in ours.tickets.all())
    assert_read_alike(order_id)
    assert_read_alike(source.order_id)
    source_parts = both_reads(source.order_id)[0]
    assert list(source_parts.credits.all()) == [given]
    assert len(source_parts.fees.all()) == len(source_parts.airline_changes.all()) == 1
    hold = book(api, auth, booking_body(priced, payment=HOLD, ancillaries=seat_and_bag[0]))
    assert hold.status_code == 201, hold.content
    hold_id = hold.json()["data"]["order"]["orderId"]
    assert len(both_reads(hold_id)[0].services.all()) == 2  # the seat and the bag
    assert_read_alike(hold_id)


def test_with_direct_reads_off_the_parts_are_read_by_prefetch_related(api, auth, priced, settings):
    booked = book(api, auth, booking_body(priced, payment=HOLD))
    order_id = booked.json()["data"]["order"]["orderId"]
    settings.DB_DIRECT_READS = False

    parts, sent = read(order_id)

    assert order_view(parts) == order_view(every_part_read(order_id))
    assert len(sent) == 8, sent  # the same reads, the query that finds the empty ones
    assert any('"orders_passenger"."order_id" IN' in sql for sql in sent), sent


def test_a_further_filter_on_a_loaded_part_queries_that_part(api, auth, priced):
    booked = book(api, auth, booking_body(priced, payment=HOLD))
    order = Order.objects.get(order_id=booked.json()["data"]["order"]["orderId"])
    parts_load(order, ORDER_VIEW_PARTS)
    [first, *_] = order.passengers.all()

    assert list(order.passengers.filter(position=first.position)) == [first]
    assert list(order.passengers.filter(position=-1)) == []


@pytest.mark.parametrize("direct", [True, False], ids=["direct", "orm"])
def test_the_order_row_is_found_by_id_or_locator_within_its_scope_only(
    default_seller, other_seller, settings, direct
):
    settings.DB_DIRECT_READS = direct
    mine = OrderFactory(seller=default_seller, agency_code="ACMEAGT", record_locator="QX7K2P")
    OrderFactory(seller=other_seller, agency_code="ACMEAGT", record_locator="ZZ1111")
    seller, agency = OrderScope(default_seller.pk), OrderScope(default_seller.pk, "ACMEAGT")

    missing = Err.ORDER_NOT_FOUND.code

    def found(scope: OrderScope, ref: str):
        try:
            return order_header(scope=scope, ref=ref).pk
        except ApiError as error:
            return error.code

    assert found(seller, mine.order_id) == mine.pk
    assert found(agency, f" {mine.order_id} ") == mine.pk
    assert found(seller, "qx7k2p") == mine.pk  # a locator in any case
    assert found(OrderScope(default_seller.pk, "OTHERAGT"), mine.order_id) == missing
    assert found(OrderScope(other_seller.pk), mine.order_id) == missing  # another seller's
    assert found(seller, "ZZ1111") == missing
    assert found(seller, mine.order_id[:6]) == missing
    assert found(seller, "QX7K2P\x00") == missing
