"""Flight-date legs in the back office, seen from the bookings on them: their load in a
bounded number of queries; blocking a seat a passenger holds gives the booking an airline
change (issues 18, 24)."""

from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from django.db.models import Sum

from airline.network.models import FlightLeg, LegInventory, SeatConfiguration
from orders.models import AirlineChange, Order, Service
from tests.orders.conftest import CARD, book, booking_body, price_offer
from tests.orders.test_order_ancillaries import change, open_seat, seat_entry, seats
from tests.webhooks.conftest import loopback_allowed, register  # noqa: F401
from webhooks.models import WebhookEvent

pytestmark = pytest.mark.django_db

FLIGHTS = "/admin/network/flightleg/"
DETECTED = "order.airline_initiated_change_detected"


@pytest.fixture
def held(api, auth, priced):
    response = book(api, auth, booking_body(priced))
    assert response.status_code == 201, response.content
    return Order.objects.get(order_id=response.json()["data"]["order"]["orderId"])


@pytest.fixture
def paid(api, auth, travel_day, clock):
    priced = price_offer(api, auth, travel_day, back=travel_day + timedelta(days=7))
    response = book(api, auth, booking_body(priced, payment=CARD))
    assert response.status_code == 201, response.content
    return Order.objects.get(order_id=response.json()["data"]["order"]["orderId"])


def test_the_flight_date_list_shows_load_in_a_bounded_number_of_queries(
    admin_client, held, paid, travel_day, django_assert_max_num_queries
):
    # A full page: 100 legs between five stations. Before issue 18 each row read its
    # origin and destination station: 200 queries and more.
    assert FlightLeg.objects.count() > 300

    with django_assert_max_num_queries(12):
        page = admin_client.get(FLIGHTS)

    assert page.status_code == 200
    assert len(page.context["cl"].result_list) == 100
    text = page.content.decode()
    for column in ("Capacity", "Sold", "On hold", "Ticketed", "Load factor"):
        assert f">{column}<" in text or f">{column}</a>" in text, column
    leg = FlightLeg.objects.get(flight_number=101, flight_date=travel_day)
    capacity = LegInventory.objects.filter(leg=leg, rank=0).aggregate(n=Sum("authorized"))["n"]
    [row] = [
        r
        for r in admin_client.get(FLIGHTS, {"q": "101"}).context["cl"].result_list
        if r.pk == leg.pk
    ]
    # Three seats on the hold, three on the paid (ticketed) booking.
    assert (row.seats, row.seats_sold, row.seats_held, row.seats_ticketed) == (capacity, 6, 3, 3)
    assert f"{600 / capacity:.0f}%" in admin_client.get(FLIGHTS, {"q": "101"}).content.decode()


def test_the_flight_date_list_sorts_the_whole_schedule_by_load(
    admin_client, held, paid, travel_day, django_assert_max_num_queries
):
    # "o" counts list_display from 0: 8 capacity, 9 sold, 12 load factor.
    with django_assert_max_num_queries(12):
        fullest = admin_client.get(FLIGHTS, {"o": "-12"}).context["cl"].result_list
    loads = [leg.load for leg in fullest]
    assert all(load is not None for load in loads)
    assert loads == sorted(loads, reverse=True)
    # The two booked flight-dates lead, out of hundreds of legs with nothing sold.
    booked = set(LegInventory.objects.filter(rank=0, sold__gt=0).values_list("leg", flat=True))
    assert 2 <= len(booked) < 100
    assert {leg.pk for leg in fullest[: len(booked)]} == booked
    assert fullest[0].seats_sold == 6

    emptiest = admin_client.get(FLIGHTS, {"o": "12"}).context["cl"].result_list
    assert all(leg.seats_sold == 0 for leg in emptiest)
    most_sold = admin_client.get(FLIGHTS, {"o": "-9"}).context["cl"].result_list
    assert most_sold[0].seats_sold == 6
    assert [leg.seats_sold for leg in most_sold] == sorted(
        (leg.seats_sold for leg in most_sold), reverse=True
    )
    largest = admin_client.get(FLIGHTS, {"o": "-8"}).context["cl"].result_list
    assert largest[0].seats == max(
        LegInventory.objects.filter(rank=0)
        .values("leg")
        .annotate(n=Sum("authorized"))
        .values_list("n", flat=True)
    )


@pytest.mark.parametrize(("column", "name"), [(10, "seats_held"), (11, "seats_ticketed")])
def test_the_flight_date_list_sorts_by_the_seats_bookings_take(
    admin_client, held, paid, travel_day, column, name
):
    # The columns of list_display, counted from 0: "On hold" is the 11th, "Ticketed" the
    # 12th. The orders app gives their rows (airline.network.readers); the list sorts the
    # whole table on them, not only the page shown.
    most = admin_client.get(FLIGHTS, {"o": f"-{column}"}).context["cl"].result_list
    least = admin_client.get(FLIGHTS, {"o": str(column)}).context["cl"].result_list

    booked = [getattr(leg, name) for leg in most]
    assert booked == sorted(booked, reverse=True)
    assert booked[0] == 3  # three passengers on each booking
    leg = FlightLeg.objects.get(flight_number=101, flight_date=travel_day)
    assert leg.pk in {row.pk for row in most if getattr(row, name) == 3}
    assert {getattr(row, name) for row in least} == {0}


def test_flight_times_are_local_and_labelled(admin_client, held, travel_day):
    leg = FlightLeg.objects.get(flight_number=101, flight_date=travel_day)

    text = admin_client.get(f"{FLIGHTS}{leg.pk}/change/").content.decode()

    assert "Departs (local time)" in text
    local = leg.departs_at.astimezone(ZoneInfo(leg.origin.time_zone))
    assert local.strftime("%Y-%m-%d 07:00 %Z") in text  # e.g. "2026-12-01 07:00 EST"
    assert "Leg inventory" in text
    assert "Leg inventorys" not in text


@pytest.fixture
def seated(api, auth, held):
    """Ada holds a seat on the hold's first flight."""
    seat_data = seats(api, auth, held.order_id).json()["data"]
    ada = held.passengers.order_by("position").first()
    unit, price = open_seat(seat_data["legSeatMaps"][0], ada.ref)
    changed = change(api, auth, held.order_id, {"changes": [seat_entry(seat_data, unit, price)]})
    assert changed.status_code == 200, changed.content
    return Service.objects.get(order=held, seat_row__isnull=False)


def configuration_form(configuration: SeatConfiguration, blocked: str) -> dict:
    form = {
        "aircraft_type": configuration.aircraft_type_id,
        "code": configuration.code,
        "name": configuration.name,
        "blocked_seats": blocked,
        "cabins-TOTAL_FORMS": str(configuration.cabins.count()),
        "cabins-INITIAL_FORMS": str(configuration.cabins.count()),
        "cabins-MIN_NUM_FORMS": "0",
        "cabins-MAX_NUM_FORMS": "1000",
    }
    for i, cabin in enumerate(configuration.cabins.order_by("first_row")):
        for name in ("id", "configuration", "cabin", "name", "first_row", "last_row"):
            value = getattr(cabin, "configuration_id" if name == "configuration" else name)
            form[f"cabins-{i}-{name}"] = value
        form[f"cabins-{i}-seat_letters"] = cabin.seat_letters
        for name in ("skipped_rows", "exit_rows", "extra_legroom_rows"):
            form[f"cabins-{i}-{name}"] = str(getattr(cabin, name))
    return form


@pytest.fixture
def hook(api, auth, loopback_allowed):  # noqa: F811
    """The seller listens to webhooks: what a change detected puts in the outbox."""
    assert register(api, auth, "http://127.0.0.1:9/hooks").status_code == 201


def test_blocking_a_seat_a_passenger_holds_gives_the_booking_an_airline_change(
    admin_client, api, auth, seated, hook
):
    configuration = seated.flight_leg.configuration
    seat = f"{seated.seat_row}{seated.seat_column}"
    order = seated.order
    url = f"/admin/network/seatconfiguration/{configuration.pk}/change/"

    saved = admin_client.post(url, configuration_form(configuration, f'["{seat}"]'), follow=True)

    assert saved.status_code == 200
    assert "1 booking(s) held seats or a cabin this edit takes away" in saved.content.decode()
    configuration.refresh_from_db()
    assert configuration.blocked_seats == [seat]
    [change] = AirlineChange.objects.filter(order=order)
    assert (change.status, change.reasons) == ("PENDING", ["EQUIPMENT"])
    assert WebhookEvent.objects.filter(order=order, type=DETECTED).count() == 1
    assert Order.objects.get(pk=order.pk).version == order.version + 1
    view = api.get(f"/json/v1/orders/{order.order_id}", **auth).json()["data"]
    assert [c["reasons"] for c in view["airlineInitiatedChanges"]] == [["EQUIPMENT"]]


def test_a_free_seat_is_blocked_without_touching_any_booking(admin_client, api, auth, seated, hook):
    configuration = seated.flight_leg.configuration
    free = f"{seated.seat_row + 1}{seated.seat_column}"
    url = f"/admin/network/seatconfiguration/{configuration.pk}/change/"

    saved = admin_client.post(url, configuration_form(configuration, f'["{free}"]'))

    assert saved.status_code == 302, saved.content.decode()[:3000]
    configuration.refresh_from_db()
    assert configuration.blocked_seats == [free]
    assert not AirlineChange.objects.exists()
    assert not WebhookEvent.objects.filter(type=DETECTED).exists()
