"""A booking's order row sent ahead of its legs' lock (orders.booking.writes
order_insert_ahead): written with the block's first statement, in its round trip, and
refused as order_insert refuses it."""

import pytest
from django.db import IntegrityError, connection, transaction

from orders.booking.writes import LocatorTaken, order_insert, order_insert_ahead
from orders.models import Order
from tests.conftest import round_trips_sent, statements_sent
from tests.orders.factories import OrderFactory

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="sent ahead on PostgreSQL only"),
]


class Booked(Exception):
    """The duplicate() of these tests: the order's offer is booked."""


def new_order(seller, suffix: str, *, offer: str | None = None) -> Order:
    return OrderFactory.build(
        seller=seller,
        order_id=f"ORD-{suffix}",
        record_locator=f"RL{suffix}",
        source_offer_id=offer or f"offer-{suffix}",
    )


def select_one() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchall()


def test_the_order_goes_in_the_round_trip_of_the_blocks_first_statement(default_seller):
    order = new_order(default_seller, "A1")

    with (
        transaction.atomic(),
        round_trips_sent() as trips,
        order_insert_ahead(order, duplicate=Booked),
    ):
        assert order.pk is None
        select_one()
        assert order.pk is not None  # its id, once that round trip is back
        select_one()

    assert [[sql.split(" (")[0] for sql in trip] for trip in trips] == [
        ['INSERT INTO "orders_order"', "SELECT 1"],
        ["SELECT 1"],
    ]
    stored = Order.objects.get(pk=order.pk)
    assert (stored.order_id, stored.version, stored.total) == ("ORD-A1", order.version, order.total)


def test_a_block_that_sends_nothing_has_the_order_inserted_after_it(default_seller):
    order = new_order(default_seller, "A2")

    with transaction.atomic():
        with order_insert_ahead(order, duplicate=Booked):
            pass
        assert order.pk is not None
        with statements_sent() as later:
            select_one()

    assert later == ["SELECT 1"]  # nothing left waiting
    assert Order.objects.filter(pk=order.pk).exists()


def test_a_block_that_fails_before_sending_leaves_nothing_to_send(default_seller):
    order = new_order(default_seller, "A3")

    with (
        pytest.raises(RuntimeError),
        transaction.atomic(),
        order_insert_ahead(order, duplicate=Booked),
    ):
        raise RuntimeError("before any statement")

    with transaction.atomic(), statements_sent() as later:
        select_one()
    assert later == ["SELECT 1"]
    assert not Order.objects.filter(order_id="ORD-A3").exists()


@pytest.mark.parametrize(
    ("clash", "refused"),
    [("offer", Booked), ("locator", LocatorTaken)],
)
def test_a_refused_order_is_reported_where_the_statement_it_went_with_was_sent(
    default_seller, clash, refused
):
    order_insert(new_order(default_seller, "B1", offer="offer-B"), duplicate=Booked)
    again = new_order(default_seller, "B2", offer="offer-B" if clash == "offer" else None)
    if clash == "locator":
        again.record_locator = "RLB1"

    with (
        pytest.raises(refused),
        transaction.atomic(),
        order_insert_ahead(again, duplicate=Booked),
    ):
        select_one()

    assert again.pk is None
    assert Order.objects.filter(source_offer_id="offer-B").count() == 1


def written_beside_a_refused_claim(order: Order) -> None:
    """The order sent ahead of a statement of the block that another table refuses."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("CREATE TEMP TABLE seat_claims (seat text UNIQUE) ON COMMIT DROP")
        with order_insert_ahead(order, duplicate=Booked), connection.cursor() as cursor:
            cursor.execute("INSERT INTO seat_claims VALUES ('12A'), ('12A')")


def test_a_refusal_of_the_blocks_own_statement_is_not_reported_as_the_orders(default_seller):
    order = new_order(default_seller, "C1")

    # The order's INSERT goes with the claim, which fails after it: the block's refusal.
    with pytest.raises(IntegrityError) as refused:
        written_beside_a_refused_claim(order)

    assert refused.value.__cause__.diag.table_name == "seat_claims"
    assert not Order.objects.filter(order_id="ORD-C1").exists()
