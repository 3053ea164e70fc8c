"""Hold expiry (DESIGN.md §8): unpaid holds past their limit are cancelled once, their
seats given back once, however many expirers run."""

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from airline.network.models import LegInventory
from orders.booking.holds import holds_expire
from orders.models import Order, OrderStatus
from tests.orders.conftest import CARD, book, booking_body, price_offer


def sold():
    return sum(LegInventory.objects.values_list("sold", flat=True))


@pytest.mark.django_db
def test_only_lapsed_unpaid_holds_are_cancelled(api, auth, priced, travel_day, clock):
    hold = book(api, auth, booking_body(priced)).json()["data"]["order"]
    paid = book(api, auth, booking_body(price_offer(api, auth, travel_day), payment=CARD))
    before = sold()

    assert holds_expire(now=clock.at) == 0
    clock.advance(hours=24)
    assert holds_expire(now=clock.at) == 1
    assert holds_expire(now=clock.at) == 0

    assert Order.objects.get(order_id=hold["orderId"]).status == OrderStatus.CANCELLED
    assert (
        Order.objects.get(order_id=paid.json()["data"]["order"]["orderId"]).status
        == OrderStatus.CONFIRMED
    )
    assert before - sold() == 6 * 6  # three seats a flight, six class rows each (nested)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_concurrent_expirers_release_seats_once(api, auth, network, clock):
    from datetime import timedelta

    day = network + timedelta(days=5)
    for _ in range(4):
        book(api, auth, booking_body(price_offer(api, auth, day)))
    before = sold()
    clock.advance(hours=25)

    def expire(_):
        try:
            return holds_expire(now=clock.at)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=4) as pool:
        cancelled = sum(pool.map(expire, range(4)))

    assert cancelled == 4
    assert Order.objects.filter(status=OrderStatus.CANCELLED).count() == 4
    assert before - sold() == 4 * 3 * 6
