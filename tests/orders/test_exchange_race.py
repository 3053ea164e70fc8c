"""Changes of one order racing on PostgreSQL (issue 15): many clients accept quotes of
the same order, or cancel its journeys, at once. One wins; every other gets a clean
ERR-4002; no seat is leaked or sold twice and no charge is kept for a change that lost."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection  # noqa: F401 (the skipif condition reads it)
from django.db.models import Sum

from airline.network.models import LegInventory
from orders.models import GatewayEntry, Order, Payment, Segment
from tests.orders.conftest import CARD
from tests.orders.test_concurrency import race
from tests.orders.test_exchange import booked, itinerary, quote, reshop

pytestmark = [
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.skipif("connection.vendor != 'postgresql'"),
]
CLIENTS = 20


def test_twenty_changes_of_one_order_at_once_make_one_change(api, auth, network):
    day = network + timedelta(days=10)
    order = booked(api, auth, day)
    order_id = order["order"]["orderId"]
    quotes = []
    for n in range(CLIENTS):
        offers = reshop(api, auth, order_id, itinerary(day + timedelta(days=1 + n % 3))).json()
        offer = offers["data"]["offers"][n % len(offers["data"]["offers"])]
        q = quote(api, auth, order_id, offer).json()["data"]
        quotes.append(q)

    def accept(q):
        due = Decimal(str(q["priceDifferential"]["balanceDelta"]["amount"])) > 0
        body = {
            "changes": [
                {
                    "type": "AcceptReshopOffer",
                    "offerId": q["offer"]["offerId"],
                    "offerItemIds": [i["offerItemId"] for i in q["offer"]["items"]],
                }
            ],
            **({"payment": CARD} if due else {}),
        }
        return lambda client: client.patch(
            f"/json/v1/orders/{order_id}", body, format="json", **auth
        )

    journey_ref = order["journeys"][0]["journeyId"]

    def cancel(client):
        body = {"changes": [{"type": "CancelJourney", "journeyRef": journey_ref}]}
        return client.patch(f"/json/v1/orders/{order_id}", body, format="json", **auth)

    # Half the clients accept a quote, half cancel the journey the quotes replace.
    responses = race([accept(q) if n % 2 == 0 else cancel for n, q in enumerate(quotes)])

    statuses = sorted(r.status_code for r in responses)
    assert statuses.count(200) == 1, [r.content[:200] for r in responses]
    assert statuses.count(400) == CLIENTS - 1
    assert {r.json()["error"]["code"] for r in responses if r.status_code != 200} == {"ERR-4002"}
    row = Order.objects.get(order_id=order_id)
    if row.status == "CANCELLED":  # a cancellation won (booked today: refunded in full)
        assert row.items.filter(status="CONFIRMED").count() == 0
        assert (row.total, row.paid) == (0, 0)
    else:
        assert row.items.filter(status="CONFIRMED").count() == 1
    assert row.paid == row.total + row.retained + row.credited
    # Every leg sold exactly what live bookings hold: nothing leaked, nothing twice.
    # (Each cabin's top class, rank 0, counts every seat sold in that cabin.)
    sold_per_leg = LegInventory.objects.filter(rank=0).values("leg_id").annotate(sold=Sum("sold"))
    for leg_id, sold in sold_per_leg.values_list("leg_id", "sold"):
        held = Segment.objects.filter(legs__flight_leg_id=leg_id, holds_inventory=True).aggregate(
            total=Sum("seats")
        )["total"]
        assert sold == (held or 0), leg_id
    # A loser's card charge was given back in full; the winner's is its payment.
    for charge in GatewayEntry.objects.filter(kind="CHARGE"):
        kept = Payment.objects.filter(gateway_reference=charge.charge_reference).exists()
        refunded = GatewayEntry.objects.filter(
            kind="REFUND", charge_reference=charge.charge_reference
        ).aggregate(total=Sum("amount"))["total"]
        assert kept or refunded == charge.amount, charge
