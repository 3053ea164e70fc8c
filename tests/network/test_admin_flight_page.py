"""The flight-date page (issue 18): load per cabin and booking class, the passengers
booked and a seat map of what is sold, in a number of queries that does not grow with
the bookings."""

import re

import pytest

from airline.network.models import FlightLeg
from orders.models import Service, Ticket
from tests.orders import conftest as booking
from tests.orders import test_admin as bookings
from tests.orders.conftest import book, booking_body, price_offer
from tests.orders.test_order_ancillaries import open_seat, seat_entry

pytestmark = pytest.mark.django_db

network, auth, travel_day, priced = (
    booking.network,
    booking.auth,
    booking.travel_day,
    booking.priced,
)
held, paid = bookings.held, bookings.paid
# The session, the user, the leg with its stations, aircraft and load columns (one
# query), the inventory (its table and the load table), the segments on the leg with
# their bookings, their passengers, seats and tickets, the cabin layouts, a content type.
QUERIES = 10


def mx101(day) -> FlightLeg:
    return FlightLeg.objects.get(flight_number=101, flight_date=day)


def page_of(client, leg: FlightLeg) -> str:
    response = client.get(f"/admin/network/flightleg/{leg.pk}/change/")
    assert response.status_code == 200
    return response.content.decode()


def take_seat(api, auth, order, position=0) -> str:
    data = api.post(f"/json/v1/orders/{order.order_id}/seats", format="json", **auth).json()
    passenger = order.passengers.order_by("position")[position]
    unit, price = open_seat(data["data"]["legSeatMaps"][0], passenger.ref)
    changed = api.patch(
        f"/json/v1/orders/{order.order_id}",
        {"changes": [seat_entry(data["data"], unit, price)]},
        format="json",
        **auth,
    )
    assert changed.status_code == 200, changed.content
    return unit["designator"]


def test_the_page_shows_the_load_the_passengers_and_the_seats_sold(
    admin_client, api, auth, held, paid, travel_day
):
    seat = take_seat(api, auth, held)

    html = page_of(admin_client, mx101(travel_day))

    # E175, economy only, 76 seats: six sold (two bookings of three) in Y's ladder.
    assert 'id="cabin-Y-sold">6 / 76<' in html
    assert 'id="cabin-Y-load">8%<' in html
    assert "Passengers (6)" in html
    for order in (held, paid):
        assert order.record_locator in html
    assert "LOVELACE/Ada" in html
    assert "BABBAGE/Charles" in html
    ticket = Ticket.objects.filter(order=paid).first()
    assert ticket.number in html
    taken = rf'<td class="sold" data-seat="{seat}" title="LOVELACE/Ada \({held.record_locator}\)">'
    assert re.search(taken, html)
    assert html.count('class="sold" data-seat=') == 1
    assert "Seat map (1 seat assigned)" in html
    assert html.count('class="free" data-seat=') == 76 - 1


def test_the_page_takes_the_same_queries_however_many_bookings(
    admin_client, api, auth, held, travel_day, django_assert_max_num_queries
):
    take_seat(api, auth, held)
    leg = mx101(travel_day)
    with django_assert_max_num_queries(QUERIES) as one_booking:
        page_of(admin_client, leg)
    baseline = len(one_booking)  # before the next request resets Django's query log
    for _ in range(3):
        more = price_offer(api, auth, travel_day, flight=101)
        assert book(api, auth, booking_body(more)).status_code == 201
    assert Service.objects.filter(flight_leg=leg).count() == 1

    with django_assert_max_num_queries(baseline):
        html = page_of(admin_client, leg)

    assert "Passengers (12)" in html


def test_an_empty_flight_says_so(admin_client, network, travel_day):
    html = page_of(admin_client, mx101(travel_day))

    assert "No booking holds a seat on this flight." in html
    assert "Seat map (0 seats assigned)" in html
    assert 'id="cabin-Y-sold">0 / 76<' in html
