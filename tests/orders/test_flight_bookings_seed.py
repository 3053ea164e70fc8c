"""The seeder of thousands of bookings on one flight (tests/flight_bookings.py), which
the season-retime test and benchmarks.schedule rely on: its copies read, hold their
seats and are told of a retime like bookings made through the API."""

from datetime import timedelta

import pytest
from django.db import connection

from orders.models import AirlineChange, Order, Segment
from tests.flight_bookings import PREFIX, flight_bookings_seed
from tests.orders.conftest import HOLD, book, booking_body
from tests.orders.test_airline_changes import RETIMED_101, reload, view_of
from tests.orders.test_exchange import priced_in

pytestmark = pytest.mark.django_db


def test_copies_of_a_booking_spread_over_its_flight_s_dates_and_are_told_of_a_retime(
    api, auth, network, tmp_path
):
    priced = priced_in(api, auth, network + timedelta(days=3), bundle="No Flex", flight=101)
    template = book(api, auth, booking_body(priced, payment=HOLD)).json()["data"]
    order = Order.objects.get(order_id=template["order"]["orderId"])

    dates = flight_bookings_seed(template=order, count=120)

    copies = Order.objects.filter(order_id__startswith=PREFIX)
    assert copies.count() == 120
    assert dates > 50  # the test network flies for 60 days
    flown = Segment.objects.filter(order__in=copies).values_list("departs_at", flat=True)
    assert len(set(flown)) == dates
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM network_leginventory i JOIN ("
            " SELECT l.flight_leg_id, g.cabin, sum(g.seats) AS seats"
            " FROM orders_leg l JOIN orders_segment g ON g.id = l.segment_id"
            " WHERE g.holds_inventory GROUP BY 1, 2) h"
            " ON h.flight_leg_id = i.leg_id AND h.cabin = i.cabin AND i.rank = 0"
            " WHERE i.sold <> h.seats"
        )
        assert cursor.fetchone()[0] == 0  # sold is what the bookings hold
    copy = copies.order_by("pk").last()
    view = view_of(api, auth, copy.order_id)
    assert view["order"]["statusCode"] == "ONHOLD"

    reload(tmp_path, network, f101=RETIMED_101)

    assert AirlineChange.objects.filter(order__in=copies).count() == 120
    assert view_of(api, auth, copy.order_id)["airlineInitiatedChanges"][0]["reasons"] == ["RETIMED"]
