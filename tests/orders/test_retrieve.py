"""GET /json/{v}/orders/{orderId} (SPEC.md §2.5, §4.9; DESIGN.md §5, §8)."""

from datetime import timedelta

import pytest

from airline.network.models import LegInventory
from orders.models import Order
from tests.conftest import bearer, error_of, token_for
from tests.orders.conftest import book, booking_body
from tests.sellers.factories import ApiKeyFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def booked(api, auth, priced):
    response = book(api, auth, booking_body(priced))
    assert response.status_code == 201, response.content
    return response.json()["data"]


def retrieve(api, auth, ref, **query):
    return api.get(f"/json/v1/orders/{ref}", query, **auth)


def test_by_locator_and_by_id_the_same_order_as_created(api, auth, booked):
    order = booked["order"]
    by_id = retrieve(api, auth, order["orderId"])
    by_locator = retrieve(api, auth, order["recordLocator"].lower())

    assert by_id.status_code == by_locator.status_code == 200
    assert by_id.json()["data"] == by_locator.json()["data"] == booked


def test_child_ids_are_stable_across_reads(api, auth, booked):
    first = retrieve(api, auth, booked["order"]["orderId"]).json()["data"]
    second = retrieve(api, auth, booked["order"]["orderId"]).json()["data"]
    assert first == second
    refs = [p["paxId"] for p in first["pax"]] + [j["journeyId"] for j in first["journeys"]]
    assert all(ref.split("-")[0] in ("PAX", "JOU") for ref in refs)
    item = first["order"]["items"][0]
    assert set(item["paxRefIds"]) == {p["paxId"] for p in first["pax"]}
    assert item["fare"]["paxRefIds"] == item["paxRefIds"]
    assert item["segmentRefIds"] == [s["segmentId"] for s in first["journeys"][0]["segments"]]


def test_another_sellers_order_is_not_found(
    api, booked, partner_key, other_seller, stranger_seller
):
    other = bearer(token_for(api, partner_key.raw, other_seller.pk))
    error_of(retrieve(api, other, booked["order"]["orderId"]), 404, "ERR-4000", "orderId")
    stranger_key = ApiKeyFactory(partner=stranger_seller.partner)
    stranger = bearer(token_for(api, stranger_key.raw))
    error_of(retrieve(api, stranger, booked["order"]["recordLocator"]), 404, "ERR-4000")


def test_unknown_orders_and_other_owners(api, auth, booked):
    error_of(retrieve(api, auth, "ZZZZZZ"), 404, "ERR-4000", "orderId")
    error_of(retrieve(api, auth, "x" * 40), 404, "ERR-4000", "orderId")
    error_of(retrieve(api, auth, booked["order"]["orderId"], ownerCode="AA"), 404, "ERR-4000")
    assert retrieve(api, auth, booked["order"]["orderId"], ownerCode="mx").status_code == 200


def test_a_read_only_key_may_retrieve(api, booked, read_only_key):
    read_only = bearer(token_for(api, read_only_key.raw))
    assert retrieve(api, read_only, booked["order"]["recordLocator"]).status_code == 200


def test_a_lapsed_hold_is_cancelled_when_read_and_its_seats_return(api, auth, booked, clock):
    sold = sorted(LegInventory.objects.values_list("leg_id", "rbd", "sold"))
    order = Order.objects.get(order_id=booked["order"]["orderId"])
    seats_before = sum(s.seats for s in order.segments.all())
    assert seats_before == 6

    clock.advance(hours=23, minutes=59)
    assert retrieve(api, auth, order.order_id).json()["data"]["order"]["statusCode"] == "ONHOLD"
    clock.advance(minutes=1)
    data = retrieve(api, auth, order.order_id).json()["data"]

    assert data["order"]["statusCode"] == "CANCELLED"
    assert "balanceDue" not in data["order"]
    assert "paymentTimeLimit" not in data["order"]
    assert {i["statusCode"] for i in data["order"]["items"]} == {"CANCELLED"}
    after = sorted(LegInventory.objects.values_list("leg_id", "rbd", "sold"))
    given_back = sum(b[2] - a[2] for a, b in zip(after, sold, strict=True))
    assert given_back > 0
    assert all(a[2] <= b[2] for a, b in zip(after, sold, strict=True))
    assert list(order.events.values_list("kind", "actor")) == [
        ("created", "ACME1 (key " + order.events.first().actor.split("key ")[1]),
        ("hold_expired", "system"),
    ]
    # Read again: nothing more to give back.
    retrieve(api, auth, order.order_id)
    assert sorted(LegInventory.objects.values_list("leg_id", "rbd", "sold")) == after
    assert clock.at - timedelta(hours=24) < clock.at


def test_a_database_outage_is_err_9000(api, auth, booked, monkeypatch):
    from django.db import OperationalError

    def down(**kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr("orders.selectors.order_header", down)
    error_of(retrieve(api, auth, booked["order"]["orderId"]), 503, "ERR-9000")
