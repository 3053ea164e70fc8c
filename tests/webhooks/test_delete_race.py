"""Deleting an endpoint while its seller books (DESIGN.md §10), on PostgreSQL in READ
COMMITTED, real threads each with its own connection: the booking commits whichever
commits first, its event is kept, and its delivery to the deleted endpoint is cancelled
by the worker, never sent."""

import threading

import pytest
from django.db import connection, transaction
from rest_framework.test import APIClient

from orders.models import Order
from tests.orders.conftest import book, booking_body
from tests.webhooks.conftest import register
from webhooks import outbox
from webhooks.delivery import webhooks_deliver
from webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from webhooks.services import endpoints_delete

pytestmark = [
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.skipif("connection.vendor != 'postgresql'"),
    pytest.mark.usefixtures("loopback_allowed"),
]
WAIT = 30  # seconds: a bound on a wait that a lock would make endless, never a pause


def two_endpoints(api, auth, receiver) -> tuple[str, str]:
    """The webhook ids of the endpoint to delete and of one that stays."""
    doomed = register(api, auth, receiver.url).json()["data"]["webhookId"]
    kept = register(api, auth, receiver.url).json()["data"]["webhookId"]
    return doomed, kept


def assert_nothing_lost(doomed: str, kept: str, receiver) -> None:
    """The booking and its event are there; the kept endpoint gets the event, the deleted
    one's delivery is cancelled unsent."""
    order = Order.objects.get()
    event = WebhookEvent.objects.get(order=order, type="order.created")
    deliveries = {
        d.endpoint.webhook_id: d for d in WebhookDelivery.objects.select_related("endpoint")
    }
    assert set(deliveries) == {doomed, kept}
    assert deliveries[doomed].status == "PENDING"  # written after the delete looked
    assert WebhookEndpoint.objects.get(webhook_id=doomed).deleted_at is not None

    webhooks_deliver()

    statuses = dict(WebhookDelivery.objects.values_list("endpoint__webhook_id", "status"))
    assert statuses == {doomed: "CANCELLED", kept: "DELIVERED"}
    assert [r.headers["Webhook-Id"] for r in receiver.received] == [event.event_id]
    assert webhooks_deliver() == {}


def test_a_booking_that_read_the_endpoint_commits_after_its_delete(
    api, auth, priced, receiver, clock, monkeypatch
):
    doomed, kept = two_endpoints(api, auth, receiver)
    fanned_out, deleted = threading.Event(), threading.Event()
    deleted_first: list[bool] = []
    write = outbox._deliveries_create

    def write_after_the_delete(event, endpoint_ids, *, now):
        # The booking has read both endpoints for its fan-out and not yet written to them.
        fanned_out.set()
        deleted_first.append(deleted.wait(timeout=WAIT))
        write(event, endpoint_ids, now=now)

    monkeypatch.setattr(outbox, "_deliveries_create", write_after_the_delete)
    answer: list = []

    def booking():
        try:
            answer.append(book(APIClient(), auth, booking_body(priced)))
        finally:
            connection.close()

    thread = threading.Thread(target=booking)
    thread.start()
    assert fanned_out.wait(timeout=WAIT)
    response = api.delete(f"/json/v1/webhooks/{doomed}", **auth)  # commits at once
    deleted.set()
    thread.join(timeout=WAIT)

    assert response.status_code == 200, response.content
    assert deleted_first == [True]
    [created] = answer
    assert created.status_code == 201, created.content
    assert_nothing_lost(doomed, kept, receiver)


def test_a_booking_commits_while_a_delete_of_its_endpoint_is_open(
    api, auth, priced, receiver, clock
):
    doomed, kept = two_endpoints(api, auth, receiver)
    open_, booked = threading.Event(), threading.Event()
    booked_meanwhile: list[bool] = []

    def delete():
        # Deleted (its pending deliveries cancelled) but not committed until the booking is.
        try:
            with transaction.atomic():
                endpoints_delete(
                    endpoints=WebhookEndpoint.objects.filter(webhook_id=doomed), now=clock.at
                )
                open_.set()
                booked_meanwhile.append(booked.wait(timeout=WAIT))
        finally:
            connection.close()

    thread = threading.Thread(target=delete)
    thread.start()
    assert open_.wait(timeout=WAIT)
    created = book(api, auth, booking_body(priced))  # commits: it waits for no lock
    booked.set()
    thread.join(timeout=WAIT)

    assert created.status_code == 201, created.content
    assert booked_meanwhile == [True]
    assert_nothing_lost(doomed, kept, receiver)


def test_a_booking_after_the_delete_writes_nothing_to_it(api, auth, priced, receiver, clock):
    doomed, kept = two_endpoints(api, auth, receiver)
    api.delete(f"/json/v1/webhooks/{doomed}", **auth)

    assert book(api, auth, booking_body(priced)).status_code == 201

    assert list(WebhookDelivery.objects.values_list("endpoint__webhook_id", flat=True)) == [kept]
