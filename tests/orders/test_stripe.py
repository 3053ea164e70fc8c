"""The Stripe gateway against the fake Stripe server (tests/fakestripe.py), where it
differs from the test gateway: the provider's refusal codes in the log and not in the
answer, a slow or unreachable provider, a capture that times out, one charge per
reference, and Stripe's own webhooks (DESIGN.md §11 "Payment providers")."""

import hashlib
import hmac
import json
import logging
import time
from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import override_settings

from airline.api import clock as service_clock
from airline.api.errors import ApiError, Err
from orders.booking.reconcile import payments_reconcile
from orders.models import (
    AirlineCredit,
    Order,
    OrderEvent,
    Payment,
    PaymentIntent,
    ProviderEvent,
    Refund,
)
from orders.money.payments import Card, Charge, PaymentTimedOut, StripeGateway
from orders.money.refunds import refunds_retry
from tests.conftest import error_of
from tests.e2e.servers import free_port
from tests.gateways import books_balance, stripe_settings
from tests.orders.conftest import CARD, book, booking_body
from tests.orders.test_cancel import cancel, journey_refs, round_trip
from tests.orders.test_payment_intents import Killed, die_at, no_cleanup  # noqa: F401

WEBHOOK = "/payments/stripe/webhook"
ZERO = Decimal("0.00")


# For the tests where taking the money at once or at ticketing differs:
# `@pytest.mark.parametrize("stripe_gateway", CAPTURES, indirect=True)`.
CAPTURES = ["automatic", "manual"]


@pytest.fixture
def stripe_gateway(request, db, settings, stripe_server):
    """The Stripe gateway on the fake server, with a 1 s timeout, capturing as the test
    asks (STRIPE_CAPTURE, "automatic" unless parametrised); the books checked after."""
    capture = getattr(request, "param", "automatic")
    for name, value in stripe_settings(stripe_server, capture=capture).items():
        setattr(settings, name, value)
    settings.STRIPE_TIMEOUT_SECONDS = 1
    yield stripe_server
    books_balance()


@pytest.fixture
def slow(stripe_gateway):
    """Make the fake answer late on a path (after doing the work), until the test ends."""
    slowed = []

    def make(path: str, seconds: float) -> None:
        stripe_gateway.delay(path, seconds)
        slowed.append(path)

    yield make
    for path in slowed:
        stripe_gateway.delay(path, 0)


def card(number: str) -> dict:
    return {**CARD, "cardNumber": number}


@pytest.mark.parametrize(
    ("number", "decline_code"),
    [
        ("4000000000000002", "generic_decline"),
        ("4000000000009995", "insufficient_funds"),
        ("4000000000000069", "expired_card"),
        ("4000000000000127", "incorrect_cvc"),
    ],
)
def test_a_refusal_is_err_6002_with_the_reason_in_the_log_not_the_answer(
    api, auth, priced, stripe_gateway, caplog, number, decline_code
):
    with caplog.at_level(logging.INFO, logger="airline.payments"):
        response = book(api, auth, booking_body(priced, payment=card(number)))

    error_of(response, 400, "ERR-6002", "payment")
    assert decline_code not in response.content.decode()
    assert number not in caplog.text
    logged = [r for r in caplog.records if getattr(r, "fields", {}).get("decline_code")]
    assert [r.fields["decline_code"] for r in logged] == [decline_code]
    assert not Order.objects.exists()
    intent = PaymentIntent.objects.get()
    assert intent.state == PaymentIntent.State.DECLINED
    assert decline_code in intent.note


def test_a_processing_error_is_err_6005_and_books_nothing(api, auth, priced, stripe_gateway):
    response = book(api, auth, booking_body(priced, payment=card("4000000000000119")))

    error_of(response, 503, "ERR-6005", "payment")
    assert not Order.objects.exists()
    assert payments_reconcile(grace=timedelta(0)) == {"void": 1}


@pytest.mark.parametrize("stripe_gateway", CAPTURES, indirect=True)
def test_a_slow_provider_is_err_6005_within_the_timeout_and_reconciled_later(
    api, auth, priced, stripe_gateway, slow, settings
):
    # The fake charges (or authorises) the card, then answers 3 s late: past our 1 s timeout.
    slow(r"/confirm$", 3)
    started = time.monotonic()

    response = book(api, auth, booking_body(priced, payment=CARD))

    assert time.monotonic() - started < 2.5
    error_of(response, 503, "ERR-6005", "payment")
    assert not Order.objects.exists()  # the reservation was given back
    intent = PaymentIntent.objects.get()
    assert intent.state == PaymentIntent.State.PENDING
    provider_id = intent.gateway_reference
    found = stripe_gateway.get(f"/v1/payment_intents/{provider_id}")
    manual = settings.STRIPE_CAPTURE == "manual"
    assert found["status"] == ("requires_capture" if manual else "succeeded")

    # The reconciler settles it by Stripe's word, no booking having taken it: an
    # authorisation is voided, a charge taken at once refunded in full.
    assert payments_reconcile(grace=timedelta(0)) == {"refunded": 1}
    found = stripe_gateway.get(f"/v1/payment_intents/{provider_id}")
    if manual:
        assert found["status"] == "canceled"
        assert not found["latest_charge"]["captured"]
    else:
        assert found["latest_charge"]["captured"]
        assert found["latest_charge"]["amount_refunded"] == found["latest_charge"]["amount"]


def test_an_unreachable_provider_is_err_6005_and_nothing_is_written(
    api, auth, priced, stripe_gateway, settings
):
    settings.STRIPE_API_BASE = f"http://127.0.0.1:{free_port()}"  # nobody listens there

    response = book(api, auth, booking_body(priced, payment=CARD))

    error_of(response, 503, "ERR-6005", "payment")
    assert not Order.objects.exists()
    assert not Payment.objects.exists()
    assert PaymentIntent.objects.get().gateway_reference == ""
    assert payments_reconcile(grace=timedelta(0)) == {"void": 1}


@pytest.mark.parametrize("stripe_gateway", ["manual"], indirect=True)
def test_a_capture_that_times_out_books_nothing_and_gives_the_money_back(
    api, auth, priced, stripe_gateway, slow
):
    slow(r"/capture$", 3)

    response = book(api, auth, booking_body(priced, payment=CARD))

    error_of(response, 503, "ERR-6005", "payment")
    assert not Order.objects.exists()
    intent = PaymentIntent.objects.get()
    assert intent.state == PaymentIntent.State.REFUNDED
    charge = stripe_gateway.get(f"/v1/payment_intents/{intent.gateway_reference}")["latest_charge"]
    assert charge["captured"]
    assert charge["amount_refunded"] == charge["amount"]


def test_money_taken_at_confirmation_is_never_captured_again(
    api, auth, priced, stripe_gateway, slow
):
    # A capture call would now time out (ERR-6005): with STRIPE_CAPTURE automatic there
    # is none, the charge being captured when confirmed.
    slow(r"/capture$", 3)

    response = book(api, auth, booking_body(priced, payment=CARD))

    assert response.status_code == 201, response.content
    payment = Payment.objects.get()
    found = stripe_gateway.get(f"/v1/payment_intents/{payment.gateway_reference}")
    assert (found["status"], found["capture_method"]) == ("succeeded", "automatic")
    assert found["latest_charge"]["captured"]
    assert found["latest_charge"]["amount"] == int(payment.amount * 100)


@pytest.mark.parametrize("stripe_gateway", CAPTURES, indirect=True)
def test_a_booking_that_fails_after_the_charge_is_voided_or_refunded(
    api, auth, priced, stripe_gateway, settings, monkeypatch
):
    """Before the payment row is written (where a manual capture would come): captured at
    once, the charge is refunded; authorised only, the authorisation is voided."""

    def fails(*args, **kwargs):
        raise ApiError(Err.INTERNAL, "the payment row could not be written")

    monkeypatch.setattr("orders.booking.paying.payment_row", fails)

    response = book(api, auth, booking_body(priced, payment=CARD))

    error_of(response, 500, "ERR-9003")
    assert not Order.objects.exists()
    intent = PaymentIntent.objects.get()
    assert intent.state == PaymentIntent.State.REFUNDED
    found = stripe_gateway.get(f"/v1/payment_intents/{intent.gateway_reference}")
    charge = found["latest_charge"]
    if settings.STRIPE_CAPTURE == "manual":
        assert (found["status"], charge["captured"], charge["refunded"]) == (
            "canceled",
            False,
            False,
        )
    else:
        assert (found["status"], charge["captured"]) == ("succeeded", True)
        assert charge["amount_refunded"] == charge["amount"]
        [refund] = stripe_gateway.get("/v1/refunds", payment_intent=found["id"])["data"]
        assert refund["amount"] == charge["amount"]


@pytest.mark.usefixtures("no_cleanup")
@pytest.mark.parametrize("stripe_gateway", CAPTURES, indirect=True)
def test_a_worker_killed_after_the_charge_leaves_a_booking_the_reconciler_confirms(
    api, auth, priced, stripe_gateway, settings, monkeypatch
):
    die_at(monkeypatch, "orders.booking.paying.order_confirm_paid")
    with pytest.raises(Killed):
        book(api, auth, booking_body(priced, payment=CARD))
    monkeypatch.undo()
    intent = PaymentIntent.objects.get()
    assert intent.state == PaymentIntent.State.PENDING
    found = stripe_gateway.get(f"/v1/payment_intents/{intent.gateway_reference}")
    manual = settings.STRIPE_CAPTURE == "manual"
    assert found["status"] == ("requires_capture" if manual else "succeeded")

    assert payments_reconcile(grace=timedelta(0)) == {"attached": 1}

    order = Order.objects.get()
    assert order.status == "CONFIRMED"
    [payment] = order.payments.all()
    assert payment.intent == intent
    # Captured by the reconciler at ticketing, or at the confirmation already: once.
    found = stripe_gateway.get(f"/v1/payment_intents/{intent.gateway_reference}")
    assert (found["status"], found["latest_charge"]["captured"]) == ("succeeded", True)
    assert found["latest_charge"]["amount"] == int(payment.amount * 100)


def test_a_retried_charge_under_one_reference_charges_once(db, stripe_gateway):
    gateway = StripeGateway()
    card = Card(brand="VI", number="4111111111111111", expiry="1230", security_code="737")

    first = gateway.charge(card=card, amount=Decimal("10.00"), currency="USD", reference="PI-X1")
    again = gateway.charge(card=card, amount=Decimal("10.00"), currency="USD", reference="PI-X1")
    gateway.capture(charge=first)
    gateway.capture(charge=again)
    gateway.refund(charge=first, amount=Decimal("4.00"), reference="RFD-X1")
    gateway.refund(charge=first, amount=Decimal("4.00"), reference="RFD-X1")

    assert first.reference == again.reference
    found = stripe_gateway.get(f"/v1/payment_intents/{first.reference}")
    assert found["latest_charge"]["amount"] == 1000
    assert found["latest_charge"]["amount_refunded"] == 400


# --- the provider's webhooks -------------------------------------------------------------


def signed(api, body: dict, secret: str, *, at: int | None = None):
    """POST an event to our endpoint signed as Stripe signs (t=..., v1=HMAC-SHA256)."""
    payload = json.dumps(body).encode()
    at = at or int(service_clock.now().timestamp())
    mac = hmac.new(secret.encode(), b"%d." % at + payload, hashlib.sha256).hexdigest()
    return api.generic(
        "POST",
        WEBHOOK,
        payload,
        content_type="application/json",
        HTTP_STRIPE_SIGNATURE=f"t={at},v1={mac}",
    )


def paid_booking(api, auth, priced) -> Payment:
    response = book(api, auth, booking_body(priced, payment=CARD))
    assert response.status_code == 201, response.content
    return Payment.objects.get()


def dispute_event(payment: Payment, event_id: str = "evt_dispute_1") -> dict:
    """Stripe's `charge.dispute.created` (localstripe has no disputes: this stands in)."""
    return {
        "id": event_id,
        "object": "event",
        "type": "charge.dispute.created",
        "data": {
            "object": {
                "id": "dp_1",
                "object": "dispute",
                "amount": int(payment.amount * 100),
                "charge": "ch_1",
                "payment_intent": payment.gateway_reference,
                "reason": "fraudulent",
                "status": "needs_response",
            }
        },
    }


def test_a_dispute_is_recorded_once_on_the_payment_the_history_and_the_admin_page(
    api, auth, priced, stripe_gateway, admin_client
):
    payment = paid_booking(api, auth, priced)
    event = dispute_event(payment)

    first = signed(api, event, stripe_gateway.webhook_secret)
    again = signed(api, event, stripe_gateway.webhook_secret)

    assert first.status_code == again.status_code == 200
    assert (first.json()["duplicate"], again.json()["duplicate"]) == (False, True)
    payment.refresh_from_db()
    assert payment.dispute == "needs_response (fraudulent)"
    [recorded] = ProviderEvent.objects.all()
    assert (recorded.payment, recorded.type) == (payment, "charge.dispute.created")
    [history] = OrderEvent.objects.filter(kind=OrderEvent.Kind.PAYMENT_DISPUTED)
    assert history.detail["reason"] == "fraudulent"
    assert history.detail["amount"] == str(payment.amount)
    page = admin_client.get(f"/admin/orders/order/{payment.order_id}/change/").content.decode()
    assert "DISPUTED: needs_response (fraudulent)" in page
    assert "payment_disputed" in page


@pytest.mark.parametrize(
    "signature",
    ["", "t=1,v1=00", "garbage"],
    ids=["missing", "wrong", "malformed"],
)
def test_an_event_whose_signature_does_not_verify_is_refused(api, stripe_gateway, signature):
    response = api.generic(
        "POST",
        WEBHOOK,
        json.dumps({"id": "evt_x", "type": "charge.refunded"}),
        content_type="application/json",
        HTTP_STRIPE_SIGNATURE=signature,
    )

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "ERR-1004"
    assert not ProviderEvent.objects.exists()


def test_an_event_signed_with_another_secret_or_too_long_ago_is_refused(
    api, db, stripe_gateway, clock
):
    event = {"id": "evt_y", "type": "payment_intent.succeeded", "data": {"object": {}}}
    now = int(clock.at.timestamp())

    assert signed(api, event, "whsec_other").status_code == 400
    too_old = signed(api, event, stripe_gateway.webhook_secret, at=now - 301)
    assert too_old.status_code == 400
    assert too_old.json()["error"]["code"] == "ERR-1004"
    assert not ProviderEvent.objects.exists()


@pytest.mark.parametrize("ahead", [301, 3600, 86_400 * 365])
def test_an_event_dated_ahead_of_now_is_refused_as_a_bad_signature(
    api, db, stripe_gateway, clock, ahead
):
    # Validly signed, but dated ahead: it would stay replayable until then.
    event = {"id": "evt_z", "type": "payment_intent.succeeded", "data": {"object": {}}}
    future = int(clock.at.timestamp()) + ahead

    response = signed(api, event, stripe_gateway.webhook_secret, at=future)

    assert response.status_code == 400
    bad = signed(api, event, "whsec_other")
    without_id = lambda error: {k: v for k, v in error.items() if k != "requestId"}  # noqa: E731
    assert without_id(response.json()["error"]) == without_id(bad.json()["error"])
    assert not ProviderEvent.objects.exists()


def test_an_event_within_the_tolerance_either_way_is_taken(api, db, stripe_gateway, clock):
    now = int(clock.at.timestamp())
    for n, at in enumerate([now - 300, now + 300]):
        event = {"id": f"evt_t{n}", "type": "payment_intent.succeeded", "data": {"object": {}}}
        response = signed(api, event, stripe_gateway.webhook_secret, at=at)
        assert response.status_code == 200, response.content
    assert ProviderEvent.objects.count() == 2


def test_the_time_is_judged_on_the_service_clock(api, db, stripe_gateway, clock):
    # Signed now by the wall clock, received two hours later by ours: too old.
    event = {"id": "evt_w", "type": "payment_intent.succeeded", "data": {"object": {}}}
    wall = int(clock.at.timestamp())
    clock.advance(hours=2)

    assert signed(api, event, stripe_gateway.webhook_secret, at=wall).status_code == 400
    assert not ProviderEvent.objects.exists()


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_the_fake_servers_own_events_reach_the_payment(
    api, auth, priced, stripe_gateway, live_server
):
    stripe_gateway.register_webhook(live_server.url + WEBHOOK, ["payment_intent.succeeded"])
    try:
        payment = paid_booking(api, auth, priced)
        deadline = time.monotonic() + 15
        while not ProviderEvent.objects.filter(payment=payment).exists():
            assert time.monotonic() < deadline, "the fake's event never arrived"
            time.sleep(0.05)
    finally:
        stripe_gateway.register_webhook("http://127.0.0.1:9/", ["never.sent"])
    [recorded] = ProviderEvent.objects.filter(payment=payment)
    assert recorded.type == "payment_intent.succeeded"
    assert recorded.intent_ref == payment.intent.ref


# --- a refund made outside this service (Stripe's dashboard) ------------------------------


def refunded_event(stripe_gateway, payment: Payment, event_id: str) -> dict:
    """Stripe's `charge.refunded` about the payment's charge, its object as the provider
    holds the charge now."""
    intent = stripe_gateway.get(f"/v1/payment_intents/{payment.gateway_reference}")
    charge = stripe_gateway.get(f"/v1/charges/{intent['latest_charge']['id']}")
    return {
        "id": event_id,
        "object": "event",
        "type": "charge.refunded",
        "data": {"object": charge},
    }


def test_a_refund_made_in_the_dashboard_is_recorded_once_and_never_given_twice(
    api, auth, network, stripe_gateway, admin_client
):
    view = round_trip(
        api, auth, network + timedelta(days=20), network + timedelta(days=27), bundle="Nice"
    )
    order_id = view["order"]["orderId"]
    payment = Payment.objects.get(order__order_id=order_id)
    total = payment.amount
    # Staff refund 25.00 in Stripe's dashboard: no metadata, no reference of ours.
    outside = stripe_gateway.post(
        "/v1/refunds", payment_intent=payment.gateway_reference, amount=2500
    )
    event = refunded_event(stripe_gateway, payment, "evt_refund_1")

    first = signed(api, event, stripe_gateway.webhook_secret)
    again = signed(api, event, stripe_gateway.webhook_secret)
    # The same refund told again by another event (Stripe sends one per refund).
    other = signed(
        api, refunded_event(stripe_gateway, payment, "evt_refund_2"), stripe_gateway.webhook_secret
    )

    assert first.status_code == again.status_code == other.status_code == 200
    assert [r.json()["duplicate"] for r in (first, again, other)] == [False, True, False]
    [recorded] = Refund.objects.filter(payment=payment)
    assert (recorded.amount, recorded.state, recorded.gateway_reference) == (
        Decimal("25.00"),
        Refund.State.SENT,
        outside["id"],
    )
    payment.refresh_from_db()
    assert (payment.refunded, payment.status) == (Decimal("25.00"), Payment.Status.SUCCESSFUL)
    order = Order.objects.get(order_id=order_id)
    assert order.status == "CONFIRMED"  # the tickets stand: staff refunded money, not flights
    assert (order.paid, order.refunded_outside) == (total - 25, Decimal("25.00"))
    [history] = OrderEvent.objects.filter(order=order, kind=OrderEvent.Kind.PAYMENT_REFUNDED)
    assert history.actor == "payment provider"
    assert history.detail == {
        "amount": "25.00",
        "payment": payment.ref,
        "provider_refund": outside["id"],
        "outside": True,
    }
    shown = api.get(f"/json/v1/orders/{order_id}", **auth).json()["data"]
    assert shown["payments"][0]["refundedAmount"] == {"amount": 25.0, "currency": "USD"}
    totals = shown["order"]["totals"]
    assert totals["refundedOutside"] == {"amount": 25.0, "currency": "USD"}
    # charged - refunded = totalPrice + retained + credited - refundedOutside
    assert totals["charged"]["amount"] - totals["refunded"]["amount"] == (
        shown["order"]["totalPrice"]["total"]["amount"] - totals["refundedOutside"]["amount"]
    )
    page = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert f"refunded at the payment provider, outside this service ({outside['id']})" in page

    # A change worth nothing asks for no payment: the dashboard's refund is not owed back.
    contact = {
        "type": "UpdateContact",
        "contact": {
            "emailAddress": "new@example.com",
            "phoneNumber": "+44 20 7946 0958",
            "name": {"givenName": "Ada", "surname": "Byron"},
        },
    }
    updated = api.patch(
        f"/json/v1/orders/{order_id}", {"changes": [contact]}, format="json", **auth
    )
    assert updated.status_code == 200, updated.content

    # The client cancels within 24 hours (all of it back, DESIGN.md §7): the card gets
    # what the dashboard did not give, no credit is made of the rest, and the provider's
    # event about our own refund records nothing more.
    done = cancel(api, auth, order_id, *journey_refs(view))
    assert done.status_code == 200, done.content
    ours = Refund.objects.get(payment=payment, gateway_reference="")
    assert ours.amount == total - 25
    assert not AirlineCredit.objects.filter(source_order=order).exists()
    told = signed(
        api, refunded_event(stripe_gateway, payment, "evt_refund_3"), stripe_gateway.webhook_secret
    )
    assert told.status_code == 200
    assert Refund.objects.filter(payment=payment).count() == 2
    payment.refresh_from_db()
    order.refresh_from_db()
    assert (payment.refunded, payment.status) == (total, Payment.Status.REFUNDED)
    assert (order.status, order.paid, order.refunded_outside) == ("CANCELLED", 0, 0)
    charge = stripe_gateway.get(f"/v1/payment_intents/{payment.gateway_reference}")
    assert Decimal(charge["latest_charge"]["amount_refunded"]) / 100 == total


def test_a_refunded_event_waits_for_the_provider_to_answer(
    api, auth, priced, stripe_gateway, settings
):
    payment = paid_booking(api, auth, priced)
    stripe_gateway.post("/v1/refunds", payment_intent=payment.gateway_reference, amount=100)
    event = refunded_event(stripe_gateway, payment, "evt_refund_down")

    settings.STRIPE_API_BASE = f"http://127.0.0.1:{free_port()}"  # nothing listens
    refused = signed(api, event, stripe_gateway.webhook_secret)
    settings.STRIPE_API_BASE = stripe_gateway.url

    assert refused.status_code == 503
    assert refused.json()["error"]["code"] == "ERR-6005"
    assert not ProviderEvent.objects.exists()
    assert not Refund.objects.exists()
    # Stripe delivers it again once we answer: then it is recorded.
    assert signed(api, event, stripe_gateway.webhook_secret).status_code == 200
    assert Refund.objects.get().amount == Decimal("1.00")


# --- a refund of ours still owed when the provider gives money back -----------------------


def cancelled_unsent(api, auth, network, monkeypatch, *, journeys: int = 2, sent: bool = False):
    """A round trip booked by card, then `journeys` of its journeys cancelled by a worker
    that died before sending the refund (or, `sent`, right after the provider answered):
    our Refund is left PENDING. The order's id, its payment and the refund."""
    view = round_trip(
        api, auth, network + timedelta(days=20), network + timedelta(days=27), bundle="Nice"
    )
    order_id = view["order"]["orderId"]

    def died(refunds):
        if sent:
            for refund in refunds:
                payment = refund.payment
                StripeGateway().refund(
                    charge=Charge(payment.gateway_reference, payment.amount, payment.currency),
                    amount=refund.amount,
                    reference=refund.ref,
                )

    monkeypatch.setattr("orders.servicing.changes.refunds_send", died)
    done = cancel(api, auth, order_id, *journey_refs(view)[:journeys])
    assert done.status_code == 200, done.content
    monkeypatch.undo()
    refund = Refund.objects.get(state=Refund.State.PENDING)
    return order_id, refund.payment, refund


def refunded_at_provider(stripe_gateway, payment: Payment) -> list[dict]:
    return stripe_gateway.get("/v1/refunds", payment_intent=payment.gateway_reference)["data"]


def test_a_refund_of_ours_given_back_in_the_dashboard_meanwhile_is_covered_not_sent_again(
    api, auth, network, stripe_gateway, monkeypatch, admin_client
):
    order_id, payment, ours = cancelled_unsent(api, auth, network, monkeypatch)
    assert ours.amount == payment.amount  # cancelled within 24 hours: all of it back
    # Staff give the whole charge back in Stripe's dashboard before the worker retries.
    outside = stripe_gateway.post(
        "/v1/refunds", payment_intent=payment.gateway_reference, amount=int(payment.amount * 100)
    )
    told = signed(
        api, refunded_event(stripe_gateway, payment, "evt_cover_1"), stripe_gateway.webhook_secret
    )
    assert told.status_code == 200
    # The payment has no room left: the dashboard's refund is no refund outside ours.
    assert Refund.objects.filter(payment=payment).count() == 1

    assert refunds_retry(grace=timedelta(0)) == 1

    ours.refresh_from_db()
    assert (ours.state, ours.covered) == (Refund.State.COVERED, payment.amount)
    assert outside["id"] in ours.note
    assert ours.sent_at is not None
    # Nothing more was sent: the provider gave the charge back once, in the dashboard.
    assert [r["id"] for r in refunded_at_provider(stripe_gateway, payment)] == [outside["id"]]
    order = Order.objects.get(order_id=order_id)
    assert (order.status, order.paid, order.refunded_outside) == ("CANCELLED", 0, 0)
    [history] = OrderEvent.objects.filter(order=order, kind=OrderEvent.Kind.PAYMENT_REFUND_COVERED)
    assert history.actor == "payment reconciler"
    assert history.detail == {
        "payment": payment.ref,
        "refund": ours.ref,
        "covered": str(payment.amount),
        "sent": "0.00",
        "provider_refunds": [outside["id"]],
    }
    page = admin_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert f"{ours.ref} {ours.amount} COVERED" in page
    assert "already given back by refunds made at the payment provider" in page
    assert "payment_refund_covered" in page
    # Run again: nothing is pending, nothing more is sent.
    assert refunds_retry(grace=timedelta(0)) == 0


def test_a_dashboard_refund_overlapping_ours_leaves_ours_to_send_only_what_is_left(
    api, auth, network, stripe_gateway, monkeypatch
):
    # One journey of two cancelled: ours gives back part of the charge.
    order_id, payment, ours = cancelled_unsent(api, auth, network, monkeypatch, journeys=1)
    room = payment.amount - ours.amount
    assert ZERO < ours.amount < payment.amount
    # Staff refund 10.00 more than the payment has left beyond ours.
    dashboard = room + Decimal("10.00")
    outside = stripe_gateway.post(
        "/v1/refunds", payment_intent=payment.gateway_reference, amount=int(dashboard * 100)
    )
    told = signed(
        api, refunded_event(stripe_gateway, payment, "evt_cover_2"), stripe_gateway.webhook_secret
    )
    assert told.status_code == 200
    # What fitted beside ours is recorded as refunded outside; the 10.00 over it is ours.
    recorded = Refund.objects.get(payment=payment, gateway_reference=outside["id"])
    assert recorded.amount == room

    refunds_retry(grace=timedelta(0))

    ours.refresh_from_db()
    assert (ours.state, ours.covered) == (Refund.State.COVERED, Decimal("10.00"))
    given = {
        r["metadata"].get("reference", ""): r for r in refunded_at_provider(stripe_gateway, payment)
    }
    assert Decimal(given[ours.ref]["amount"]) / 100 == ours.amount - 10
    assert Decimal(given[""]["amount"]) / 100 == dashboard
    charge = stripe_gateway.get(f"/v1/payment_intents/{payment.gateway_reference}")
    assert charge["latest_charge"]["amount_refunded"] == int(payment.amount * 100)
    payment.refresh_from_db()
    assert (payment.refunded, payment.status) == (payment.amount, Payment.Status.REFUNDED)
    order = Order.objects.get(order_id=order_id)
    assert order.refunded_outside == room


def test_a_refund_sent_before_its_worker_died_is_found_not_sent_again(
    api, auth, network, stripe_gateway, monkeypatch
):
    _, payment, ours = cancelled_unsent(api, auth, network, monkeypatch, journeys=1, sent=True)

    refunds_retry(grace=timedelta(0))

    ours.refresh_from_db()
    [given] = refunded_at_provider(stripe_gateway, payment)
    assert (ours.state, ours.covered) == (Refund.State.SENT, ZERO)
    assert given["id"] in ours.note
    assert Decimal(given["amount"]) / 100 == ours.amount


def test_a_refund_pending_past_the_idempotency_window_is_looked_up_before_it_is_sent(
    api, auth, network, stripe_gateway, monkeypatch, clock, settings
):
    # Given back by a worker that died before writing so; then a day passes (the
    # reconciler or the provider being down) and Stripe forgets the refund's key.
    _, payment, ours = cancelled_unsent(api, auth, network, monkeypatch, journeys=1, sent=True)
    clock.advance(hours=settings.REFUND_KEY_SAFE_HOURS + 2)
    stripe_gateway.forget_idempotency_keys()

    assert refunds_retry() == 1

    ours.refresh_from_db()
    assert ours.state == Refund.State.SENT
    assert ours.sent_at == clock.at
    [given] = refunded_at_provider(stripe_gateway, payment)  # once, not twice
    assert Decimal(given["amount"]) / 100 == ours.amount


def test_a_refund_past_the_idempotency_window_waits_when_the_provider_cannot_list(
    api, auth, network, stripe_gateway, monkeypatch, clock, settings
):
    _, payment, ours = cancelled_unsent(api, auth, network, monkeypatch, journeys=1, sent=True)
    clock.advance(hours=settings.REFUND_KEY_SAFE_HOURS + 2)
    stripe_gateway.forget_idempotency_keys()
    sends = []

    def unlisted(self, *, charge_reference):
        raise PaymentTimedOut

    monkeypatch.setattr(StripeGateway, "refunds_of", unlisted)
    monkeypatch.setattr(StripeGateway, "refund", lambda self, **kwargs: sends.append(kwargs))

    assert refunds_retry() == 1

    assert sends == []
    ours.refresh_from_db()
    assert ours.state == Refund.State.PENDING
    monkeypatch.undo()
    # Once the provider lists again, it is found given back.
    refunds_retry()
    ours.refresh_from_db()
    assert ours.state == Refund.State.SENT
    assert len(refunded_at_provider(stripe_gateway, payment)) == 1


@pytest.mark.parametrize(
    "configured", ["orders.payments.StripeGateway", "orders.money.payments.StripeGateway"]
)
def test_the_gateway_setting_takes_the_name_design_gives_and_the_module_path(
    configured, monkeypatch
):
    """PAYMENT_GATEWAY=orders.payments.StripeGateway, as DESIGN.md §11 names it and
    deployments set it, is the same class as the module's own path."""
    import importlib

    import airline.settings
    from orders.money.payments import payment_gateway

    monkeypatch.setenv("PAYMENT_GATEWAY", configured)
    monkeypatch.setenv("STRIPE_API_KEY", "sk_test_x")
    monkeypatch.setenv("STRIPE_WEBHOOK_SECRET", "whsec_x")
    try:
        reloaded = importlib.reload(airline.settings)
        assert reloaded.PAYMENT_GATEWAY == "orders.money.payments.StripeGateway"
        with override_settings(PAYMENT_GATEWAY=reloaded.PAYMENT_GATEWAY):
            assert isinstance(payment_gateway(), StripeGateway)
    finally:
        monkeypatch.undo()
        importlib.reload(airline.settings)
