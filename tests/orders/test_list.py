"""GET /json/{v}/orders: OrderList (SPEC.md §2.8, §4.8; DESIGN.md §11)."""

import importlib
from datetime import UTC, datetime, timedelta

import pytest
from django.apps import apps as django_apps

from airline.network.models import LegInventory
from orders.booking.holds import holds_expire
from orders.models import Journey, Order, OrderStatus, Passenger
from tests.conftest import bearer, error_of, token_for
from tests.orders.conftest import book, booking_body
from tests.orders.factories import journey_add, order_with_trip
from tests.sellers.factories import ApiKeyFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def lister(api, partner_key, default_seller, clock):
    return bearer(token_for(api, partner_key.raw))


def listing(api, auth, **query):
    return api.get("/json/v1/orders", query, **auth)


def locators(response):
    assert response.status_code == 200, response.content
    return [o["recordLocator"] for o in response.json()["data"]["orders"]]


def soon(days=3, hour=15):
    day = datetime.now(tz=UTC).date() + timedelta(days=days)
    return datetime(day.year, day.month, day.day, hour, tzinfo=UTC)


def test_a_summary_per_booking(api, lister, default_seller):
    order = order_with_trip(
        seller=default_seller, given_name="Ada", surname="Lovelace", departs_at=soon()
    )

    data = listing(api, lister).json()["data"]

    assert data["orders"] == [
        {
            "orderId": order.order_id,
            "recordLocator": order.record_locator,
            "statusCode": "CONFIRMED",
            "departureDate": (soon() - timedelta(hours=5)).date().isoformat(),
            "flightNumber": "101",
            "origin": "PVD",
            "destination": "CHS",
            "sourceOrganizationCode": "ACMEAGT",
            "passengerName": {"givenName": "Ada", "surname": "Lovelace"},
        }
    ]
    assert data["page"] == {"pageSize": 1000, "count": 1, "lastIndex": order.pk, "hasMore": False}


def test_scoped_to_the_keys_agency(api, lister, default_seller, partner):
    mine = order_with_trip(seller=default_seller)
    order_with_trip(seller=default_seller, agency_code="OTHERAGT")
    order_with_trip(seller=default_seller, agency_code="")
    assert locators(listing(api, lister)) == [mine.record_locator]
    assert locators(listing(api, lister, organizationCode="acmeagt")) == [mine.record_locator]


def test_agency_code_required_and_must_match(api, lister, partner, default_seller):
    no_agency = bearer(token_for(api, ApiKeyFactory(partner=partner).raw))
    assert listing(api, no_agency).json()["error"]["code"] == "ERR-8001"
    response = listing(api, lister, organizationCode="OTHERAGT")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "ERR-8001"


def test_a_read_only_key_with_an_agency_may_list(api, read_only_key, default_seller):
    order_with_trip(seller=default_seller)
    read_only = bearer(token_for(api, read_only_key.raw))
    assert len(locators(listing(api, read_only))) == 1


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ({"pageSize": "9"}, "pageSize"),
        ({"pageSize": "1001"}, "pageSize"),
        ({"pageSize": "ten"}, "pageSize"),
        ({"lastIndex": "-1"}, "lastIndex"),
        ({"lastIndex": str(2**63)}, "lastIndex"),
        ({"departureDate": "2026-13-01"}, "departureDate"),
        ({"origin": "PV1"}, "origin"),
        ({"destination": "CHSX"}, "destination"),
        ({"lastName": "x" * 33}, "lastName"),
        ({"firstName": "x" * 33}, "firstName"),
        ({"organizationCode": "ACMEAGT1234"}, "organizationCode"),
        ({"flightNumber": "MX12345"}, "flightNumber"),
    ],
)
def test_bad_query_values(api, lister, query, path):
    error_of(listing(api, lister, **query), 422, "ERR-1005", path)


def test_unrecognised_parameters_are_ignored(api, lister, default_seller):
    # SPEC.md §4.8, word for word; it wins over DESIGN.md §11 (orders.requests.serializers).
    order_with_trip(seller=default_seller)
    assert len(locators(listing(api, lister, colour="blue"))) == 1


def test_filters(api, lister, default_seller):
    ada = order_with_trip(
        seller=default_seller,
        given_name="Ada",
        surname="Lovelace",
        departs_at=soon(3),
        flight_number=101,
    )
    bob = order_with_trip(
        seller=default_seller,
        given_name="Bob",
        surname="Lovelace",
        departs_at=soon(4),
        origin="CHS",
        destination="TPA",
        flight_number=501,
    )
    both = sorted([ada.record_locator, bob.record_locator])

    assert sorted(locators(listing(api, lister, lastName="LOVELACE"))) == both
    assert locators(listing(api, lister, firstName="ada", lastName="lovelace")) == [
        ada.record_locator
    ]
    assert locators(listing(api, lister, lastName="Babbage")) == []
    assert locators(listing(api, lister, origin="chs")) == [bob.record_locator]
    assert locators(listing(api, lister, destination="CHS")) == [ada.record_locator]
    assert locators(listing(api, lister, flightNumber="MX501")) == [bob.record_locator]
    assert locators(listing(api, lister, flightNumber="501")) == [bob.record_locator]
    assert locators(listing(api, lister, flightNumber="AA501")) == []
    day = soon(3).date().isoformat()
    assert locators(listing(api, lister, departureDate=day)) == [ada.record_locator]


def test_a_surname_two_travel_under_lists_their_order_once_page_by_page(
    api, lister, default_seller
):
    families = []
    for n in range(25):
        order = order_with_trip(seller=default_seller, given_name="Ada", surname="Lovelace")
        Passenger.objects.create(
            order=order,
            ref=f"PAX-{n}",
            offer_pax_id="ADT-2",
            position=2,
            ptc="ADT",
            given_name="Byron",
            surname="Lovelace",
        )
        families.append(order.record_locator)
        order_with_trip(seller=default_seller, surname="Babbage")
    seen, last_index = [], 0
    while True:
        data = listing(api, lister, pageSize=10, lastName="lovelace", lastIndex=last_index)
        data = data.json()["data"]
        seen += [o["recordLocator"] for o in data["orders"]]
        assert data["page"]["count"] == len(data["orders"]) <= 10
        if not data["page"]["hasMore"]:
            break
        last_index = data["page"]["lastIndex"]

    assert seen == families
    both = listing(api, lister, pageSize=10, firstName="byron", lastName="LOVELACE")
    assert locators(both) == families[:10]


def test_the_departure_date_is_the_utc_date(api, lister, default_seller):
    # 02:00 UTC on day 4 is 21:00 local (EST) on day 3.
    late = soon(4, hour=2)
    order = order_with_trip(seller=default_seller, departs_at=late)

    assert locators(listing(api, lister, departureDate=late.date().isoformat())) == [
        order.record_locator
    ]
    assert locators(listing(api, lister, departureDate=soon(3).date().isoformat())) == []
    assert locators(listing(api, lister, departureDate="9999-12-31")) == []
    [row] = listing(api, lister).json()["data"]["orders"]
    assert row["departureDate"] == (late - timedelta(hours=5)).date().isoformat()


def test_a_round_trip_shows_the_journey_that_matched(api, lister, default_seller):
    order = order_with_trip(seller=default_seller, departs_at=soon(3))
    journey_add(order, "CHS", "PVD", soon(10), 102, position=2)

    [out] = listing(api, lister).json()["data"]["orders"]
    [back] = listing(api, lister, origin="CHS").json()["data"]["orders"]

    assert (out["origin"], out["flightNumber"]) == ("PVD", "101")
    assert (back["origin"], back["destination"], back["flightNumber"]) == ("CHS", "PVD", "102")
    assert back["departureDate"] == (soon(10) - timedelta(hours=5)).date().isoformat()


def test_a_page_is_one_query_however_many_orders_and_searches_it_has(
    api, lister, default_seller, django_assert_num_queries
):
    # A round trip each whose outbound has gone: the summary must show the return.
    now = datetime.now(tz=UTC)
    orders = []
    for n in range(12):
        order = order_with_trip(seller=default_seller, departs_at=now - timedelta(days=3))
        journey_add(order, "CHS", "PVD", soon(5 + n), 102, position=2)
        orders.append(order)
    listing(api, lister)  # the key and the token are read once, then remembered

    for query in ({}, {"lastName": "traveller"}, {"departureDate": soon(7).date().isoformat()}):
        with django_assert_num_queries(1):
            page = listing(api, lister, pageSize=10, **query).json()["data"]
        assert page["orders"]
        assert {o["origin"] for o in page["orders"]} == {"CHS"}
    with django_assert_num_queries(1):
        first = listing(api, lister, pageSize=10).json()["data"]
    second = listing(api, lister, pageSize=10, lastIndex=first["page"]["lastIndex"])
    assert [o["recordLocator"] for o in first["orders"]] + locators(second) == [
        o.record_locator for o in orders
    ]


def test_past_flights_and_closed_bookings_are_left_out(api, lister, default_seller):
    now = datetime.now(tz=UTC)
    order_with_trip(seller=default_seller, departs_at=now - timedelta(days=3))
    yesterday = order_with_trip(
        seller=default_seller,
        departs_at=datetime.combine(
            now.date() - timedelta(days=1), datetime.min.time(), tzinfo=UTC
        ),
    )
    order_with_trip(seller=default_seller, status=OrderStatus.CLOSED)
    cancelled = order_with_trip(seller=default_seller, status=OrderStatus.CANCELLED)
    assert sorted(locators(listing(api, lister))) == sorted(
        [yesterday.record_locator, cancelled.record_locator]
    )


def test_pages_never_skip_or_repeat_while_orders_arrive(api, lister, default_seller):
    existing = {order_with_trip(seller=default_seller).record_locator for _ in range(25)}
    seen, last_index, pages = [], 0, 0
    while True:
        data = listing(api, lister, pageSize=10, lastIndex=last_index).json()["data"]
        seen += [o["recordLocator"] for o in data["orders"]]
        pages += 1
        # New bookings keep arriving between pages.
        order_with_trip(seller=default_seller)
        assert data["page"]["count"] == len(data["orders"]) <= 10
        if not data["page"]["hasMore"]:
            break
        last_index = data["page"]["lastIndex"]
        assert pages < 20

    assert len(seen) == len(set(seen)), "an order was repeated"
    assert existing <= set(seen), "an order that existed before paging was skipped"


def test_a_booking_made_over_the_api_is_listed(api, auth, priced, lister):
    body = booking_body(priced)
    body["passengers"].reverse()  # the child first: the lead is still the first adult
    data = book(api, auth, body).json()["data"]
    outbound, back = data["journeys"]

    [row] = listing(api, lister).json()["data"]["orders"]
    assert row == {
        "orderId": data["order"]["orderId"],
        "recordLocator": data["order"]["recordLocator"],
        "statusCode": "ONHOLD",
        "departureDate": outbound["departureDateTime"][:10],  # the local date
        "flightNumber": outbound["segments"][0]["marketingFlightNumber"],
        "origin": "PVD",
        "destination": "CHS",
        "sourceOrganizationCode": "ACMEAGT",
        "passengerName": {"givenName": "Charles", "surname": "Babbage"},
    }
    [row] = listing(api, lister, origin="CHS").json()["data"]["orders"]
    assert (row["departureDate"], row["flightNumber"], row["origin"]) == (
        back["departureDateTime"][:10],
        back["segments"][0]["marketingFlightNumber"],
        "CHS",
    )


def test_orders_written_before_the_summary_columns_get_them(api, lister, default_seller):
    """Migration 0005 fills the lead passenger's name and each journey's local departure
    date and first flight number of orders that lack them."""
    late = soon(hour=2)  # 21:00 the evening before in Providence
    order = order_with_trip(
        seller=default_seller, departs_at=late, given_name="Grace", surname="Hopper"
    )
    Passenger.objects.create(
        order=order,
        ref="PAX-CHILD",
        offer_pax_id="CHD-1",
        position=0,
        ptc="CHD",
        given_name="Kid",
        surname="Hopper",
    )
    Order.objects.filter(pk=order.pk).update(lead_given_name="", lead_surname="")
    Journey.objects.filter(order=order).update(departure_date=None, flight_number=None)

    migration = importlib.import_module("orders.migrations.0005_list_summary_columns")
    migration.fill_summary_columns(django_apps, None)

    [row] = listing(api, lister).json()["data"]["orders"]
    assert (row["passengerName"], row["departureDate"], row["flightNumber"]) == (
        {"givenName": "Grace", "surname": "Hopper"},
        (late - timedelta(hours=5)).date().isoformat(),
        "101",
    )


def test_a_lapsed_hold_is_listed_cancelled_and_the_list_writes_nothing(
    api, auth, priced, lister, clock
):
    order_id = book(api, auth, booking_body(priced)).json()["data"]["order"]["orderId"]
    order = Order.objects.get(order_id=order_id)
    sold = sorted(LegInventory.objects.values_list("leg_id", "rbd", "sold"))
    clock.advance(hours=24)

    [row] = listing(api, lister).json()["data"]["orders"]

    assert row["statusCode"] == "CANCELLED"
    order.refresh_from_db()
    assert order.status == OrderStatus.ONHOLD
    assert sorted(LegInventory.objects.values_list("leg_id", "rbd", "sold")) == sold
    assert list(order.events.values_list("kind", flat=True)) == ["created"]
    assert holds_expire(now=clock.at) == 1
    [row] = listing(api, lister).json()["data"]["orders"]
    assert row["statusCode"] == "CANCELLED"
