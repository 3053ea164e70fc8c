"""The outbox end to end: a booking through the JSON API produces an event in the same
transaction, the worker's delivery function sends it signed to a real receiver,
retries with backoff on an injected clock, keeps each order's sequence, and refuses a
host that now resolves inside our network."""

import pytest
from django.core.management import call_command
from django.db import transaction

from orders.core import events
from orders.models import Order
from tests.conftest import round_trips_sent
from tests.orders.conftest import book, booking_body
from tests.webhooks.conftest import register, verifies
from webhooks import addresses
from webhooks.delivery import backoff, webhooks_deliver
from webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent

pytestmark = pytest.mark.usefixtures("loopback_allowed")


def change(api, auth, order_id, *changes):
    response = api.patch(
        f"/json/v1/orders/{order_id}", {"changes": list(changes)}, format="json", **auth
    )
    assert response.status_code == 200, response.content
    return response


def deliver_until_idle(clock, rounds=10):
    """Worker rounds, the clock an hour on between them (past any backoff)."""
    for _ in range(rounds):
        webhooks_deliver()
        clock.advance(hours=1)


def test_a_booking_is_delivered_with_a_signature_that_verifies(api, auth, priced, receiver):
    secret = register(api, auth, receiver.url).json()["data"]["secret"]
    created = book(api, auth, booking_body(priced))
    assert created.status_code == 201, created.content
    order_id = created.json()["data"]["order"]["orderId"]

    assert webhooks_deliver() == {"delivered": 1, "retrying": 0, "failed": 0}

    [got] = receiver.received
    assert verifies(secret, got)
    assert not verifies("whsec_wrong", got)
    event = got.json
    assert event["type"] == "order.created"
    assert event["sequence"] == 1
    assert event["apiVersion"] == "v1"
    assert event["id"] == got.headers["Webhook-Id"]
    assert event["createdAt"].endswith("Z")
    assert event["data"]["order"]["orderId"] == order_id
    assert event["data"]["order"]["statusCode"] == "ONHOLD"
    assert got.headers["Content-Type"] == "application/json"
    assert WebhookDelivery.objects.get().status == "DELIVERED"


def test_a_receiver_failing_three_times_gets_the_event_once_as_2xx(
    api, auth, priced, receiver, clock
):
    register(api, auth, receiver.url)
    receiver.statuses = [500, 503, 404]
    book(api, auth, booking_body(priced))

    results = []
    for _ in range(6):
        results.append(webhooks_deliver())
        clock.advance(minutes=5)  # past the backoff after each of the first failures

    assert [r.answered for r in receiver.received] == [500, 503, 404, 200]
    assert len(receiver.delivered()) == 1
    assert len({r.json["id"] for r in receiver.received}) == 1  # the same event each time
    assert results[:4] == [
        {"delivered": 0, "retrying": 1, "failed": 0},
        {"delivered": 0, "retrying": 1, "failed": 0},
        {"delivered": 0, "retrying": 1, "failed": 0},
        {"delivered": 1, "retrying": 0, "failed": 0},
    ]
    assert results[4:] == [{}, {}]
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("DELIVERED", 4, 200)


def test_a_failed_attempt_waits_for_its_backoff(api, auth, priced, receiver, clock):
    register(api, auth, receiver.url)
    receiver.statuses = [500]
    book(api, auth, booking_body(priced))

    webhooks_deliver()
    waiting = WebhookDelivery.objects.get()
    wait = waiting.next_attempt_at - clock.at
    assert backoff(1, rand=lambda: 1.0) <= wait <= backoff(1, rand=lambda: 0.0)

    assert webhooks_deliver() == {}  # not due yet: no request
    assert len(receiver.received) == 1
    clock.at = waiting.next_attempt_at
    assert webhooks_deliver()["delivered"] == 1


def test_it_gives_up_after_72_hours_and_disables_the_endpoint(
    api, auth, priced, receiver, clock, caplog
):
    register(api, auth, receiver.url)
    receiver.statuses = [500] * 200
    book(api, auth, booking_body(priced))

    for _ in range(80):
        webhooks_deliver()
        clock.advance(hours=1)

    delivery = WebhookDelivery.objects.get()
    assert delivery.status == "FAILED"
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.active is False
    assert endpoint.disabled_reason.startswith("failing since")
    assert any(r.getMessage() == "webhook endpoint disabled" for r in caplog.records)
    tries = len(receiver.received)
    deliver_until_idle(clock)
    assert len(receiver.received) == tries  # nothing more is sent to it


def test_each_orders_events_arrive_in_sequence(api, auth, priced, receiver, clock):
    register(api, auth, receiver.url)
    receiver.statuses = [500]  # the first event fails once: the later ones must wait
    order_id = book(api, auth, booking_body(priced)).json()["data"]["order"]["orderId"]
    contact = {"emailAddress": "new@example.com", "name": {"givenName": "Ada", "surname": "B"}}
    change(api, auth, order_id, {"type": "UpdateContact", "contact": contact})
    change(api, auth, order_id, {"type": "CancelUnpaidOrder"})

    assert webhooks_deliver() == {"delivered": 0, "retrying": 1, "failed": 0}
    assert webhooks_deliver() == {}  # event 1 in backoff holds back 2 and 3
    deliver_until_idle(clock)

    got = [(r.json["sequence"], r.json["type"]) for r in receiver.delivered()]
    assert got == [(1, "order.created"), (2, "order.changed"), (3, "order.cancelled")]
    assert [r.json["sequence"] for r in receiver.received] == [1, 1, 2, 3]


def test_a_rolled_back_change_writes_no_outbox_row(api, auth, priced, receiver, clock):
    register(api, auth, receiver.url)
    book(api, auth, booking_body(priced))
    order = Order.objects.get()
    assert WebhookEvent.objects.count() == 1

    def failing_change():
        with transaction.atomic():
            events.contact_updated(order, actor="test", now=clock.at)
            assert WebhookEvent.objects.count() == 2  # written beside the change...
            raise RuntimeError("the change fails after its event was recorded")

    with pytest.raises(RuntimeError):
        failing_change()

    assert WebhookEvent.objects.count() == 1  # ...and gone with it
    assert WebhookDelivery.objects.count() == 1
    # A failing change through the API leaves nothing either.
    response = api.patch(
        f"/json/v1/orders/{order.order_id}",
        {
            "changes": [
                {
                    "type": "UpdateContact",
                    "contact": {
                        "emailAddress": "x@example.com",
                        "name": {"givenName": "A", "surname": "B"},
                    },
                },
                {"type": "CancelJourney", "journeyId": "JOU-NOPE"},
            ]
        },
        format="json",
        **auth,
    )
    assert response.status_code >= 400
    assert WebhookEvent.objects.count() == 1


def test_only_the_event_types_an_endpoint_asked_for(api, auth, priced, receiver, clock):
    register(api, auth, receiver.url, events=["order.cancelled"])
    order_id = book(api, auth, booking_body(priced)).json()["data"]["order"]["orderId"]
    change(api, auth, order_id, {"type": "CancelUnpaidOrder"})

    deliver_until_idle(clock, rounds=2)

    assert [r.json["type"] for r in receiver.received] == ["order.cancelled"]


def test_a_booking_reads_its_sellers_endpoints_with_its_legs(api, auth, priced, receiver):
    """The seller's endpoints are read in the legs' round trip (webhooks.outbox
    endpoints_read) and not again when the created event is announced: its delivery is
    written all the same."""
    register(api, auth, receiver.url)

    with round_trips_sent() as trips:
        created = book(api, auth, booking_body(priced))

    assert created.status_code == 201, created.content
    [read] = [trip for trip in trips for sql in trip if 'FROM "webhooks_webhookendpoint"' in sql]
    assert any('INTO "orders_leg"' in sql for sql in read)
    assert WebhookDelivery.objects.get().event.type == "order.created"


def test_no_endpoint_no_outbox_row(api, auth, priced):
    book(api, auth, booking_body(priced))
    assert not WebhookEvent.objects.exists()


def test_a_host_that_now_resolves_inside_our_network_is_not_contacted(
    api, auth, priced, receiver, monkeypatch, clock
):
    register(api, auth, receiver.url)
    book(api, auth, booking_body(priced))
    # DNS rebinding: the name that passed at registration now points at a private host.
    monkeypatch.setattr(addresses, "resolve", lambda host, port: ["10.0.0.7"])

    assert webhooks_deliver() == {"delivered": 0, "retrying": 1, "failed": 0}

    assert receiver.received == []
    delivery = WebhookDelivery.objects.get()
    assert delivery.last_error.startswith("refused: 10.0.0.7 is a private address")


@pytest.mark.parametrize(
    ("url_of", "why"),
    [
        (lambda url: url + "\r\nX-Injected: 1", "must not contain control"),
        (lambda url: url + "\u2028x", "(U+2028)"),
        (
            lambda url: url.replace("http://127.0.0.1:", "https://[2002:7f00:1::]:"),
            "reaches 127.0.0.1",
        ),
        (lambda url: url.rsplit(":", 1)[0] + ":0/", "port 0"),
    ],
    ids=["crlf", "line-separator", "6to4-loopback", "port-0"],
)
def test_a_url_stored_before_the_rules_is_refused_at_delivery(
    api, auth, priced, receiver, url_of, why, clock
):
    register(api, auth, receiver.url)
    # As if written before these URLs were refused at registration.
    WebhookEndpoint.objects.update(url=url_of(receiver.url))
    book(api, auth, booking_body(priced))

    assert webhooks_deliver() == {"delivered": 0, "retrying": 1, "failed": 0}

    assert receiver.received == []
    error = WebhookDelivery.objects.get().last_error
    assert error.startswith("refused: "), error
    assert why in error, error


def test_the_command_delivers_what_is_due(api, auth, priced, receiver, capsys):
    register(api, auth, receiver.url)
    book(api, auth, booking_body(priced))

    call_command("deliver_webhooks", "--once")

    assert "delivered=1" in capsys.readouterr().out
    assert len(receiver.delivered()) == 1


def test_the_worker_runs_the_delivery_job(api, auth, priced, receiver):
    register(api, auth, receiver.url)
    book(api, auth, booking_body(priced))

    call_command("run_worker", "--once")

    assert len(receiver.delivered()) == 1


def test_every_order_event_kind_has_a_public_type():
    from orders.models import OrderEvent
    from webhooks.outbox import EVENT_TYPES

    assert set(OrderEvent.Kind.values) == set(EVENT_TYPES)


@pytest.mark.parametrize("removal", ["deleted", "removed with its seller's rows"])
def test_an_endpoint_deleted_mid_round_leaves_the_rest_of_the_round_recorded(
    default_seller, clock, monkeypatch, caplog, removal
):
    from webhooks import delivery
    from webhooks.delivery import Outcome
    from webhooks.services import endpoint_ping, endpoint_register, endpoints_delete

    def endpoint(path):
        url = f"http://127.0.0.1:9/{path}"
        registered = endpoint_register(seller=default_seller, url=url, events=[], now=clock.at)
        for _ in range(2):
            endpoint_ping(
                seller=default_seller, webhook_id=registered.endpoint.webhook_id, now=clock.at
            )
        return registered.endpoint

    doomed, kept = endpoint("doomed"), endpoint("kept")
    claim = delivery.deliveries_claim

    def claim_then_delete(*, now, limit):
        claimed = claim(now=now, limit=limit)
        doomed_rows = WebhookEndpoint.objects.filter(pk=doomed.pk)
        if removal == "deleted":
            endpoints_delete(endpoints=doomed_rows, now=now)
        else:
            doomed_rows.delete()  # its deliveries go with it
        return claimed

    monkeypatch.setattr(delivery, "deliveries_claim", claim_then_delete)
    # The deleted endpoint does not answer; the other one does.
    sent: list[str] = []

    def sender(url, body, headers):
        sent.append(url)
        return Outcome(None, "ConnectionError") if "doomed" in url else Outcome(204)

    assert webhooks_deliver(sender=sender) == {
        "delivered": 2,
        "retrying": 0,
        "failed": 0,
        "cancelled": 2,
    }

    assert len(sent) == 4  # in flight when deleted: that attempt was made
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]
    kept_statuses = WebhookDelivery.objects.filter(endpoint=kept).values_list("status", flat=True)
    assert list(kept_statuses) == ["DELIVERED", "DELIVERED"]
    doomed_statuses = WebhookDelivery.objects.filter(endpoint_id=doomed.pk)
    if removal == "deleted":
        assert [d.status for d in doomed_statuses] == ["CANCELLED", "CANCELLED"]
        assert {d.last_error for d in doomed_statuses} == {"ConnectionError"}
        assert WebhookEndpoint.objects.get(pk=doomed.pk).failing_since is None
    else:
        assert not doomed_statuses.exists()
    monkeypatch.setattr(delivery, "deliveries_claim", claim)
    assert webhooks_deliver(sender=sender) == {}  # nothing is retried
