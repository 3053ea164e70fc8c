"""Bookings racing on PostgreSQL (DESIGN.md §2, §4, §8): never more orders than seats,
one order per Idempotency-Key. Real threads, each with its own connection, on committed
data."""

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.db import connection
from rest_framework.test import APIClient

from airline.network.inventory import inventory_sell
from airline.network.models import LegInventory
from orders.models import Order, Passenger, PaymentIntent, Refund
from tests.gateways import BOTH_CAPTURES
from tests.offers.conftest import search_body
from tests.orders.conftest import CARD, HOLD, booking_body

pytestmark = [
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.skipif("connection.vendor != 'postgresql'"),
]
ONE = [{"type": "ADT"}]


def race(calls):
    """Run the calls all at once, a thread (and a connection) each; their responses."""
    threads = len(calls)
    start = threading.Barrier(threads)

    def run(call):
        try:
            start.wait(timeout=30)
            return call(APIClient())
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(run, calls))


def priced_many(api, auth, day, count):
    """`count` priced offers of the same MX101 seat for one adult."""
    found = api.post(
        "/json/v1/offers", search_body(("PVD", "CHS", day), passengers=ONE), format="json", **auth
    ).json()["data"]["offers"]
    offer = next(o for o in found if o["offerItems"][0]["flight"]["flightNumbers"] == ["MX101"])
    selection = {
        "offerId": offer["offerId"],
        "offerItemIds": [offer["offerItems"][0]["offerItemId"]],
    }
    return [
        api.post(
            "/json/v1/offers/price",
            {"selections": [selection], "passengers": ONE},
            format="json",
            **auth,
        ).json()["data"]
        for _ in range(count)
    ]


def test_fifty_bookings_for_the_last_five_seats_make_five_orders(api, auth, network):
    day = network + timedelta(days=5)
    priced = priced_many(api, auth, day, 50)
    rbd = priced[0]["journeys"][0]["segments"][0]["rbd"]
    row = LegInventory.objects.get(leg__flight_number=101, leg__flight_date=day, rbd=rbd)
    inventory_sell(leg_ids=[row.leg_id], rbd=rbd, seats=row.authorized - row.sold - 5)

    responses = race(
        [
            lambda client, p=p: client.post(
                "/json/v1/orders", booking_body(p), format="json", **auth
            )
            for p in priced
        ]
    )

    statuses = sorted(r.status_code for r in responses)
    assert statuses.count(201) == 5, statuses
    assert {r.json()["error"]["code"] for r in responses if r.status_code != 201} == {"ERR-4001"}
    assert Order.objects.count() == 5
    row.refresh_from_db()
    assert row.sold == row.authorized


def test_twenty_requests_with_one_idempotency_key_make_one_order(api, auth, network):
    [priced] = priced_many(api, auth, network + timedelta(days=5), 1)
    body = booking_body(priced)

    responses = race(
        [
            lambda client: client.post(
                "/json/v1/orders", body, format="json", HTTP_IDEMPOTENCY_KEY="same", **auth
            )
        ]
        * 20
    )

    assert Order.objects.count() == 1
    created = [r for r in responses if r.status_code == 201]
    assert created, [r.content for r in responses]
    assert {r.json()["data"]["order"]["orderId"] for r in created} == {Order.objects.get().order_id}
    others = {r.json()["error"]["code"] for r in responses if r.status_code != 201}
    assert others <= {"ERR-1012"}, others


def test_twenty_requests_for_one_seat_have_one_winner(api, auth, network):
    from tests.orders.test_order_ancillaries import open_seat, seat_entry

    day = network + timedelta(days=5)
    orders = []
    for _ in range(20):
        # Priced one at a time: each booking may move the next one up a booking class.
        [priced] = priced_many(api, auth, day, 1)
        order = api.post("/json/v1/orders", booking_body(priced), format="json", **auth)
        orders.append(order.json()["data"])
    entries = []
    designator = None
    for order in orders:
        seat_data = api.post(
            f"/json/v1/orders/{order['order']['orderId']}/seats", format="json", **auth
        ).json()["data"]
        unit, _price = open_seat(seat_data["legSeatMaps"][0], order["pax"][0]["paxId"])
        if designator is None:
            designator = unit["designator"]
        [unit] = [
            u
            for d in seat_data["legSeatMaps"][0]["decks"]
            for c in d["compartments"]
            for u in c["units"]
            if u["designator"] == designator
        ]
        entries.append(
            (order["order"]["orderId"], seat_entry(seat_data, unit, unit["passengerPricing"][0]))
        )

    responses = race(
        [
            lambda client, order_id=order_id, entry=entry: client.patch(
                f"/json/v1/orders/{order_id}", {"changes": [entry]}, format="json", **auth
            )
            for order_id, entry in entries
        ]
    )

    statuses = sorted(r.status_code for r in responses)
    assert statuses.count(200) == 1, statuses
    assert {r.json()["error"]["code"] for r in responses if r.status_code != 200} == {"ERR-4002"}
    from orders.models import Service

    assert Service.objects.filter(seat_row__isnull=False).count() == 1


@pytest.mark.parametrize("payment", [HOLD, CARD], ids=["hold", "card"])
def test_twenty_bookings_of_one_priced_offer_make_one_order(api, auth, network, payment):
    [priced] = priced_many(api, auth, network + timedelta(days=5), 1)
    body = booking_body(priced, payment=payment)
    row = LegInventory.objects.get(
        leg__flight_number=101,
        leg__flight_date=network + timedelta(days=5),
        rbd=priced["journeys"][0]["segments"][0]["rbd"],
    )
    sold_before = row.sold

    responses = race(
        [lambda client: client.post("/json/v1/orders", body, format="json", **auth)] * 20
    )

    statuses = sorted(r.status_code for r in responses)
    assert statuses.count(201) == 1, statuses
    refused = [r.json()["error"] for r in responses if r.status_code != 201]
    assert {(e["code"], e["path"]) for e in refused} == {("ERR-4001", "offerId")}
    assert Order.objects.count() == 1
    assert Passenger.objects.count() == 1
    row.refresh_from_db()
    assert row.sold == sold_before + 1


@pytest.mark.usefixtures("card_gateway")
@pytest.mark.parametrize("card_gateway", BOTH_CAPTURES, indirect=True)
def test_twenty_parallel_confirm_holds_charge_the_card_once(api, auth, network):
    [priced] = priced_many(api, auth, network + timedelta(days=6), 1)
    held = api.post("/json/v1/orders", booking_body(priced, payment=HOLD), format="json", **auth)
    order_id = held.json()["data"]["order"]["orderId"]
    confirm = {"changes": [{"type": "ConfirmHold"}], "payment": CARD}

    responses = race(
        [lambda client: client.patch(f"/json/v1/orders/{order_id}", confirm, format="json", **auth)]
        * 20
    )

    statuses = sorted(r.status_code for r in responses)
    assert statuses.count(200) == 1, statuses
    refused = [r.json()["error"]["code"] for r in responses if r.status_code != 200]
    assert set(refused) <= {"ERR-4002", "ERR-1012"}, refused
    order = Order.objects.get(order_id=order_id)
    assert order.status == "CONFIRMED"
    # One charge, nothing given back: the others were refused before the gateway.
    [payment] = order.payments.all()
    assert payment.refunded == 0
    assert PaymentIntent.objects.filter(order=order).count() == 1
    assert not Refund.objects.exists()
