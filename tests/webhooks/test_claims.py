"""Several workers at once (DESIGN.md §10): a delivery is claimed by one worker at a time
(`SELECT ... FOR UPDATE SKIP LOCKED` on PostgreSQL, each thread its own connection), and
one claimed by a worker that died is sent again once its lease runs out."""

import threading
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection, transaction

from webhooks.delivery import Outcome, deliveries_claim, delivery_record, webhooks_deliver
from webhooks.models import WebhookDelivery
from webhooks.services import endpoint_ping, endpoint_register

pytestmark = [
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.usefixtures("loopback_allowed"),
]


def pings(seller, url, *, endpoints, each, now):
    """`each` ping deliveries to each of `endpoints` new endpoints of the seller."""
    for _ in range(endpoints):
        endpoint = endpoint_register(seller=seller, url=url, events=[], now=now).endpoint
        for _ in range(each):
            endpoint_ping(seller=seller, webhook_id=endpoint.webhook_id, now=now)


def test_two_workers_never_claim_the_same_delivery(default_seller, receiver, clock):
    pings(default_seller, receiver.url, endpoints=10, each=4, now=clock.at)
    start = threading.Barrier(2)
    claimed: list[list[int]] = [[], []]

    def worker(n):
        try:
            start.wait()
            while batch := deliveries_claim(now=clock.at, limit=3):
                claimed[n].extend(c.pk for c in batch)
        finally:
            connection.close()  # each thread has its own connection

    threads = [threading.Thread(target=worker, args=(n,)) for n in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)

    everything = claimed[0] + claimed[1]
    assert len(everything) == len(set(everything)) == 40
    assert set(everything) == set(WebhookDelivery.objects.values_list("pk", flat=True))
    assert claimed[0], "both workers took part"
    assert claimed[1], "both workers took part"
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"IN_FLIGHT"}


def test_rows_another_worker_is_claiming_are_skipped_not_waited_for(
    default_seller, receiver, clock
):
    pings(default_seller, receiver.url, endpoints=2, each=2, now=clock.at)
    first_two = list(WebhookDelivery.objects.order_by("id").values_list("pk", flat=True)[:2])
    locked, release = threading.Event(), threading.Event()

    def other_worker():
        # Holds row locks in an open transaction, as a worker mid-claim does.
        try:
            with transaction.atomic():
                list(WebhookDelivery.objects.select_for_update().filter(pk__in=first_two))
                locked.set()
                release.wait(timeout=30)
        finally:
            connection.close()

    thread = threading.Thread(target=other_worker)
    thread.start()
    assert locked.wait(timeout=30)
    try:
        mine = {c.pk for c in deliveries_claim(now=clock.at, limit=10)}
    finally:
        release.set()
        thread.join(timeout=30)

    assert mine == set(WebhookDelivery.objects.values_list("pk", flat=True)) - set(first_two)


def test_an_abandoned_claim_is_delivered_after_its_lease(default_seller, receiver, clock):
    pings(default_seller, receiver.url, endpoints=1, each=1, now=clock.at)
    [abandoned] = deliveries_claim(now=clock.at, limit=10)  # the worker then dies

    clock.advance(seconds=settings.WEBHOOK_LEASE_SECONDS - 1)
    assert webhooks_deliver() == {}  # still leased: nobody sends it twice at once
    clock.advance(seconds=1)
    assert webhooks_deliver() == {"delivered": 1, "retrying": 0, "failed": 0}

    assert len(receiver.delivered()) == 1
    # The dead worker's late report changes nothing: its attempt was superseded.
    delivery_record(abandoned, Outcome(500), now=clock.at + timedelta(seconds=5))
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("DELIVERED", 2, 200)
