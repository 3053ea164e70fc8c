"""GET /json/{v}/orders/{orderId} (SPEC.md §2.5, §4.9; DESIGN.md §5, §8)."""

import pytest

from airline.network.models import LegInventory
from orders.booking.holds import holds_expire
from orders.models import Order
from tests.conftest import bearer, error_of, token_for
from tests.orders.conftest import book, booking_body
from tests.sellers.factories import ApiKeyFactory
from webhooks.models import WebhookEndpoint, WebhookEvent

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


def _sold():
    return sorted(LegInventory.objects.values_list("leg_id", "rbd", "sold"))


def _subscribed(order):
    """An endpoint of the order's seller that wants every event: any event of the order
    from here on leaves a WebhookEvent row (webhooks.outbox)."""
    WebhookEndpoint.objects.create(
        webhook_id="wh_lapse",
        seller_id=order.seller_id,
        url="https://agency.example/hooks",
        secret="s" * 64,
        created_at=order.created_at,
    )


def _written(order):
    """What a read must leave alone: the order row, its events, its webhook events."""
    row = Order.objects.values("status", "version", "total", "voided").get(pk=order.pk)
    events = list(order.events.order_by("id").values_list("kind", "actor"))
    return row, events, list(WebhookEvent.objects.filter(order=order).values_list("type"))


def test_a_lapsed_hold_reads_cancelled_and_the_read_writes_nothing(api, auth, booked, clock):
    order = Order.objects.get(order_id=booked["order"]["orderId"])
    _subscribed(order)
    sold, written = _sold(), _written(order)

    clock.advance(hours=23, minutes=59)
    assert retrieve(api, auth, order.order_id).json()["data"]["order"]["statusCode"] == "ONHOLD"
    clock.advance(minutes=1)
    data = retrieve(api, auth, order.order_id).json()["data"]
    retrieve(api, auth, order.order_id)

    assert data["order"]["statusCode"] == "CANCELLED"
    assert "balanceDue" not in data["order"]
    assert "paymentTimeLimit" not in data["order"]
    assert {i["statusCode"] for i in data["order"]["items"]} == {"CANCELLED"}
    assert data["order"]["totalPrice"]["total"]["amount"] == 0
    assert data["order"]["totals"]["voided"] == booked["order"]["totalPrice"]["total"]
    # Nothing written: still ONHOLD in the database, its seats held, no event, no webhook.
    assert _sold() == sold
    assert _written(order) == written
    assert written[0]["status"] == "ONHOLD"

    # The worker's sweep expires it: the seats go back, the event and its webhook are
    # written, and the order reads as it did.
    assert holds_expire(now=clock.at) == 1
    after = _sold()
    assert sum(b[2] - a[2] for a, b in zip(after, sold, strict=True)) > 0
    assert all(a[2] <= b[2] for a, b in zip(after, sold, strict=True))
    row, events, webhook_events = _written(order)
    assert row["status"] == "CANCELLED"
    assert events[-1] == ("hold_expired", "expire_holds")
    assert webhook_events[-1] == ("order.hold_expired",)
    assert retrieve(api, auth, order.order_id).json()["data"] == data
    # Read again: nothing more to give back.
    retrieve(api, auth, order.order_id)
    assert _sold() == after


def test_a_write_to_a_lapsed_hold_expires_it_first(api, auth, booked, clock):
    order = Order.objects.get(order_id=booked["order"]["orderId"])
    _subscribed(order)
    sold = _sold()
    clock.advance(hours=24)

    cancel = {"changes": [{"type": "CancelUnpaidOrder"}]}
    response = api.patch(f"/json/v1/orders/{order.order_id}", cancel, format="json", **auth)

    # It acts on the order the client reads: cancelled, no longer an unpaid hold.
    error_of(response, 400, "ERR-4002", "changes")
    row, events, webhook_events = _written(order)
    assert row["status"] == "CANCELLED"
    assert events[-1] == ("hold_expired", "system")
    assert webhook_events[-1] == ("order.hold_expired",)
    assert sum(b[2] - a[2] for a, b in zip(_sold(), sold, strict=True)) > 0
    assert holds_expire(now=clock.at) == 0


def test_a_database_outage_is_err_9000(api, auth, booked, monkeypatch):
    from django.db import OperationalError

    def down(**kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr("orders.reading.selectors.order_header", down)
    error_of(retrieve(api, auth, booked["order"]["orderId"]), 503, "ERR-9000")


def test_a_lock_not_granted_is_err_9000_with_retry_after_not_an_outage(
    api, auth, booked, monkeypatch
):
    """A lock wait PostgreSQL cut short (an operator's lock_timeout, a NOWAIT) that no
    service answered itself: the row is busy, the database is up."""
    import psycopg
    from django.db import OperationalError

    def busy(**kwargs):
        try:
            raise psycopg.errors.LockNotAvailable("canceling statement due to lock timeout")
        except psycopg.Error as exc:
            raise OperationalError(str(exc)) from exc

    monkeypatch.setattr("orders.reading.selectors.order_header", busy)
    response = retrieve(api, auth, booked["order"]["orderId"])
    error = error_of(response, 503, "ERR-9000")
    assert "being updated" in error["description"]
    assert response["Retry-After"] == "2"
