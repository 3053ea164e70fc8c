"""What a flight change does to the order's seats and bags, quoted and charged alike
(issue 25 items 6-8): reshop ReshopItinerary → quote order → AcceptReshopOffer on a
network where MCO-BDL flies nonstop (MX101) and by connection at CLT (MX301/302)."""

from datetime import time, timedelta
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command

from airline.fares.services import fares_ensure_demo
from airline.network.demo_fleet import DEMO_FLEET
from airline.network.demo_schedule import distance_km
from airline.network.itineraries import reset_network_index
from airline.network.services import fleet_ensure
from orders.models import Order, Payment, Service
from tests.conftest import bearer, error_of, token_for
from tests.network.ssim_builder import Leg, ssim_file
from tests.offers.conftest import first_day
from tests.orders.conftest import CARD
from tests.orders.test_exchange import accept, booked, itinerary, money_adds_up, quote, reshop
from tests.orders.test_order_ancillaries import bag_entry, seat_entry
from tests.replay import replayed

pytestmark = pytest.mark.django_db


@pytest.fixture
def network(db, tmp_path_factory):
    """Loaded once through the SSIM loader, then copied in (tests/replay.py)."""
    start = first_day()
    replayed(("exchange network", start), lambda: _load_network(start, tmp_path_factory))
    reset_network_index()
    yield start
    reset_network_index()


def _load_network(start, tmp_path_factory):
    end = start + timedelta(days=30)
    fleet_ensure(DEMO_FLEET)
    legs = [
        Leg(101, "MCO", "BDL", time(7, 0), time(9, 40), start, end),
        Leg(301, "MCO", "CLT", time(8, 0), time(9, 40), start, end),
        Leg(302, "CLT", "BDL", time(10, 50), time(12, 40), start, end),
    ]
    path = tmp_path_factory.mktemp("network") / "net.ssim"
    path.write_text(ssim_file(legs))
    call_command("load_schedule", str(path), stdout=StringIO())
    markets = [("MCO", "BDL"), ("MCO", "CLT"), ("CLT", "BDL")]
    fares_ensure_demo((o, d, distance_km(o, d)) for o, d in markets)


@pytest.fixture
def auth(api, partner_key, network):
    return bearer(token_for(api, partner_key.raw))


def amount(money) -> Decimal:
    return Decimal(str(money["amount"]))


def with_seat_and_bag(api, auth, day, *, seat="8A"):
    """A card-paid MCO-BDL Nice order on MX101 with `seat` and a CB1 bag bought."""
    order = booked(api, auth, day, flight=101, origin="MCO", destination="BDL")
    order_id = order["order"]["orderId"]
    ada = order["pax"][0]["paxId"]
    seat_data = api.post(f"/json/v1/orders/{order_id}/seats", format="json", **auth).json()["data"]
    unit = next(
        u
        for d in seat_data["legSeatMaps"][0]["decks"]
        for c in d["compartments"]
        for u in c["units"]
        if u["designator"] == seat
    )
    [row] = [r for r in unit["passengerPricing"] if r["paxRefId"] == ada]
    service_data = api.post(f"/json/v1/orders/{order_id}/services", format="json", **auth).json()[
        "data"
    ]
    bag, _ = bag_entry(service_data, "CB1", ada, order["journeys"][0]["journeyId"])
    bought = api.patch(
        f"/json/v1/orders/{order_id}",
        {"changes": [seat_entry(seat_data, unit, row), bag], "payment": CARD},
        format="json",
        **auth,
    )
    assert bought.status_code == 200, bought.content
    return bought.json()["data"]


def connection_offer(api, auth, order_id, day):
    data = reshop(api, auth, order_id, itinerary(day, "MCO", "BDL")).json()["data"]
    flights = {j["journeyId"]: j["flightNumbers"] for j in data["journeys"]}
    return next(
        o
        for o in data["offers"]
        if flights[o["items"][0]["journeyRefIds"][0]] == ["MX301", "MX302"]
    )


def paid_since(order_id, before):
    """What the order's cards were charged since `before` payment rows."""
    rows = Payment.objects.filter(order__order_id=order_id).order_by("pk")[before:]
    return sum((p.amount for p in rows), Decimal("0"))


def test_a_seat_that_cannot_follow_is_quoted_dropped_and_the_charge_is_the_quotes(
    api, auth, network, clock
):
    day = network + timedelta(days=10)
    order = with_seat_and_bag(api, auth, day)
    order_id = order["order"]["orderId"]
    [flight_item] = order["order"]["items"]
    seat = next(s for s in order["services"] if s["code"] == "STST")
    bag = next(s for s in order["services"] if s["code"] == "CB1")
    seat_value = amount(seat["totalPrice"]["total"])
    offer = connection_offer(api, auth, order_id, day + timedelta(days=1))
    response = quote(api, auth, order_id, offer)
    assert response.status_code == 200, response.content
    q = response.json()["data"]
    payments_before = Payment.objects.filter(order__order_id=order_id).count()

    changes = {c["serviceId"]: c for c in q["serviceChanges"]}
    assert set(changes) == {seat["serviceId"], bag["serviceId"]}
    dropped, moved = changes[seat["serviceId"]], changes[bag["serviceId"]]
    assert (dropped["action"], dropped["seat"]) == ("DROPPED", "8A")
    assert amount(dropped["amount"]) == seat_value
    assert amount(dropped["balanceDelta"]) == -seat_value
    assert "MCO-BDL" in dropped["reason"]
    assert moved["action"] == "MOVED"
    assert amount(moved["balanceDelta"]) == 0
    assert moved["journeyRefId"] == q["journeys"][0]["journeyId"]
    [item_quote] = q["itemChangeQuotes"]
    assert dropped["offerItemId"] == item_quote["offerItemId"]
    assert dropped["replacesOrderItemRefId"] == flight_item["itemId"]
    # The dropped seat counts with what is replaced: oldTotal = flight item + seat.
    assert amount(item_quote["oldTotal"]) == amount(flight_item["totalPrice"]["total"]) + seat_value
    assert amount(q["offer"]["totalPrice"]["total"]) == amount(item_quote["newTotal"])
    delta = amount(q["priceDifferential"]["balanceDelta"])
    assert delta == amount(item_quote["balanceDelta"]) > 0
    # The reshop offer said the same.
    assert amount(offer["priceDifferential"]["oldTotal"]) == amount(item_quote["oldTotal"])
    assert {c["action"] for c in offer["serviceChanges"]} == {"MOVED", "DROPPED"}

    response = accept(api, auth, order_id, q["offer"], payment=CARD)

    assert response.status_code == 200, response.content
    assert paid_since(order_id, payments_before) == delta
    view = response.json()["data"]
    statuses = {s["serviceId"]: s["statusCode"] for s in view["services"]}
    assert statuses == {seat["serviceId"]: "CANCELLED", bag["serviceId"]: "CONFIRMED"}
    assert Service.objects.get(order__order_id=order_id, code="STST").status == "CANCELLED"
    new_journey = next(j for j in view["journeys"] if len(j["segments"]) == 2)
    assert (
        next(s for s in view["services"] if s["code"] == "CB1")["journeyRefId"]
        == (new_journey["journeyId"])
    )
    money_adds_up(order_id)


def test_a_seat_that_follows_is_quoted_moved_and_nothing_is_netted(api, auth, network, clock):
    day = network + timedelta(days=10)
    order = with_seat_and_bag(api, auth, day)
    order_id = order["order"]["orderId"]
    data = reshop(api, auth, order_id, itinerary(day + timedelta(days=1), "MCO", "BDL")).json()[
        "data"
    ]
    flights = {j["journeyId"]: j for j in data["journeys"]}
    offer = next(
        o
        for o in data["offers"]
        if flights[o["items"][0]["journeyRefIds"][0]]["flightNumbers"] == ["MX101"]
    )
    q = quote(api, auth, order_id, offer).json()["data"]
    [item_quote] = q["itemChangeQuotes"]
    seat = next(c for c in q["serviceChanges"] if c["code"] == "STST")
    new_segment = flights[offer["items"][0]["journeyRefIds"][0]]["segments"][0]["segmentId"]
    assert (seat["action"], seat["segmentRefId"]) == ("MOVED", new_segment)
    assert item_quote["oldTotal"] == order["order"]["items"][0]["totalPrice"]["total"]
    delta = amount(q["priceDifferential"]["balanceDelta"])
    payments_before = Payment.objects.filter(order__order_id=order_id).count()

    response = accept(api, auth, order_id, q["offer"], payment=CARD if delta > 0 else None)

    assert response.status_code == 200, response.content
    assert paid_since(order_id, payments_before) == max(delta, Decimal("0"))
    assert Service.objects.get(order__order_id=order_id, code="STST").status == "ACTIVE"
    money_adds_up(order_id)


def test_an_update_contact_since_the_quote_leaves_it_good(api, auth, network, clock):
    day = network + timedelta(days=10)
    order = with_seat_and_bag(api, auth, day)
    order_id = order["order"]["orderId"]
    q = quote(api, auth, order_id, connection_offer(api, auth, order_id, day)).json()["data"]
    contact = {
        "type": "UpdateContact",
        "contact": {
            "emailAddress": "new@example.com",
            "name": {"givenName": "Grace", "surname": "Hopper"},
        },
    }
    updated = api.patch(
        f"/json/v1/orders/{order_id}", {"changes": [contact]}, format="json", **auth
    )
    assert updated.status_code == 200, updated.content
    payments_before = Payment.objects.filter(order__order_id=order_id).count()

    response = accept(api, auth, order_id, q["offer"], payment=CARD)

    assert response.status_code == 200, response.content
    assert paid_since(order_id, payments_before) == amount(q["priceDifferential"]["balanceDelta"])
    assert response.json()["data"]["contacts"][0]["emailAddress"] == "new@example.com"
    money_adds_up(order_id)


def test_a_bag_bought_on_the_quoted_journey_since_makes_the_quote_stale(api, auth, network, clock):
    day = network + timedelta(days=10)
    order = with_seat_and_bag(api, auth, day)
    order_id = order["order"]["orderId"]
    q = quote(api, auth, order_id, connection_offer(api, auth, order_id, day)).json()["data"]
    service_data = api.post(f"/json/v1/orders/{order_id}/services", format="json", **auth).json()[
        "data"
    ]
    bag, _ = bag_entry(
        service_data, "CB2", order["pax"][0]["paxId"], order["journeys"][0]["journeyId"]
    )
    bought = api.patch(
        f"/json/v1/orders/{order_id}", {"changes": [bag], "payment": CARD}, format="json", **auth
    )
    assert bought.status_code == 200, bought.content
    payments_before = Payment.objects.filter(order__order_id=order_id).count()

    error_of(
        accept(api, auth, order_id, q["offer"], payment=CARD), 400, "ERR-4002", "changes.offerId"
    )

    assert Payment.objects.filter(order__order_id=order_id).count() == payments_before
    assert Order.objects.get(order_id=order_id).items.count() == 1
    money_adds_up(order_id)


def test_a_seat_taken_on_the_new_flight_since_makes_the_quote_stale(api, auth, network, clock):
    day = network + timedelta(days=10)
    new_day = day + timedelta(days=1)
    order = with_seat_and_bag(api, auth, day)
    order_id = order["order"]["orderId"]
    data = reshop(api, auth, order_id, itinerary(new_day, "MCO", "BDL")).json()["data"]
    flights = {j["journeyId"]: j["flightNumbers"] for j in data["journeys"]}
    offer = next(
        o for o in data["offers"] if flights[o["items"][0]["journeyRefIds"][0]] == ["MX101"]
    )
    q = quote(api, auth, order_id, offer).json()["data"]
    assert next(c for c in q["serviceChanges"] if c["code"] == "STST")["action"] == "MOVED"
    with_seat_and_bag(api, auth, new_day)  # another order takes 8A on the new flight
    payments_before = Payment.objects.filter(order__order_id=order_id).count()

    error_of(
        accept(api, auth, order_id, q["offer"], payment=CARD), 400, "ERR-4002", "changes.offerId"
    )

    assert Payment.objects.filter(order__order_id=order_id).count() == payments_before
    assert Service.objects.get(order__order_id=order_id, code="STST").status == "ACTIVE"
