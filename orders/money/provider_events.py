"""The payment provider's own webhooks (DESIGN.md §11 "Payment providers"): Stripe's
events about our PaymentIntents, received at `POST /payments/stripe/webhook`.

Each event is verified with the SDK against STRIPE_WEBHOOK_SECRET, recorded once by its
id (Stripe delivers at least once, and retries), and written to the card payment it is
about: a dispute (`charge.dispute.*`) marks the payment and, when opened, the order's
history; `charge.refunded` brings in each refund made outside this service (in Stripe's
dashboard): the provider's refunds of the charge are listed from its API and any that
is not ours (by its metadata `reference`, our Refund.ref) is recorded against the
payment and in the order's history (orders.money.refunds.refunds_outside_record);
`payment_intent.*` are recorded beside the payment, the provider's word next to ours.
Money is never moved here: our books move with our own calls, and the reconciler
settles by `settlement`, not by events that may come late.
"""

import json
import logging
from datetime import datetime
from decimal import Decimal
from typing import Any

import stripe
from django.conf import settings
from django.db import IntegrityError, transaction

from airline.api import clock
from airline.api.errors import ApiError, Err
from orders.core import events
from orders.models import Order, Payment, PaymentIntent, ProviderEvent
from orders.money.payments import PaymentDeclined, PaymentTimedOut, ProviderRefund, payment_gateway
from orders.money.refunds import refunds_outside_record

logger = logging.getLogger("airline.payments")

# How far an event's signed time `t` may be from our clock, either way: the SDK's own
# tolerance (stripe.Webhook.DEFAULT_TOLERANCE, 300 s). The SDK checks only the past,
# against the wall clock; a signed event dated ahead of now would stay replayable until
# then, so both directions are checked here against the service clock.
SIGNATURE_TOLERANCE_SECONDS = stripe.Webhook.DEFAULT_TOLERANCE


def provider_event_receive(*, payload: bytes, signature: str) -> ProviderEvent | None:
    """Verify and record one webhook event; None when it was recorded before. ERR-1004
    when the signature does not verify, is dated more than SIGNATURE_TOLERANCE_SECONDS
    from now either way, or the body is no event."""
    try:
        # tolerance=None: the SDK verifies the HMAC only; the time is judged below.
        stripe.Webhook.construct_event(
            payload, signature, settings.STRIPE_WEBHOOK_SECRET, tolerance=None
        )
        event = json.loads(payload)
        _check_signed_at(signature, now=clock.now().timestamp())
    except (ValueError, stripe.SignatureVerificationError):
        raise ApiError(
            Err.INVALID_VALUE,
            "The event's Stripe-Signature does not verify with this endpoint's secret",
            path="Stripe-Signature",
        ) from None
    kind = str(event.get("type", ""))
    subject = (event.get("data") or {}).get("object") or {}
    found = None
    if kind == "charge.refunded":
        found = _provider_refunds(_payment_intent_of(kind, subject))
    return _record(event, now=clock.now(), refunds=found)


def _check_signed_at(signature: str, *, now: float) -> None:
    """ValueError unless the verified header's signed time is within the tolerance of
    now. The time is read as the SDK reads it (the first item named exactly `t`), so it
    is the one the signature covered."""
    signed_at = next(
        (
            value
            for name, _, value in (i.partition("=") for i in signature.split(","))
            if name == "t"
        ),
        None,
    )
    if signed_at is None or abs(now - int(signed_at)) > SIGNATURE_TOLERANCE_SECONDS:
        raise ValueError("signed too far from now")


def _provider_refunds(reference: str) -> list[ProviderRefund] | None:
    """The provider's refunds of the intent `reference` when it is one of our card
    payments' (asked before any row is locked); ERR-6005 (503) when the provider does not
    answer, so that Stripe delivers the event again and nothing is recorded meanwhile."""
    if (
        not reference
        or not Payment.objects.filter(
            gateway_reference=reference, method=Payment.Method.CARD
        ).exists()
    ):
        return None
    gateway = payment_gateway()
    if not hasattr(gateway, "refunds_of"):
        return None  # a gateway that lists no refunds (the test gateway) sends no events
    try:
        return gateway.refunds_of(charge_reference=reference)
    except (PaymentDeclined, PaymentTimedOut):
        raise ApiError(
            Err.PAYMENT_TIMEOUT, "The payment provider did not answer; deliver the event again"
        ) from None


@transaction.atomic
def _record(
    event: dict[str, Any], *, now: datetime, refunds: list[ProviderRefund] | None = None
) -> ProviderEvent | None:
    kind = str(event.get("type", ""))
    subject = (event.get("data") or {}).get("object") or {}
    reference = _payment_intent_of(kind, subject)
    payments = Payment.objects.filter(gateway_reference=reference, method=Payment.Method.CARD)
    # The order row, then the payment row, locked (as a change locks them): a dispute, a
    # refund made outside and our own changes of the order queue.
    order_pk = payments.values_list("order_id", flat=True).first() if reference else None
    if order_pk is not None:
        Order.objects.select_for_update().filter(pk=order_pk).values_list("pk").first()
    payment = (
        payments.select_for_update().select_related("order").first()
        if order_pk is not None
        else None
    )
    intent_ref = (subject.get("metadata") or {}).get("reference", "") or (
        PaymentIntent.objects.filter(gateway_reference=reference)
        .values_list("ref", flat=True)
        .first()
        or ""
    )
    try:
        with transaction.atomic():
            recorded = ProviderEvent.objects.create(
                event_id=str(event.get("id", ""))[:100],
                type=kind[:60],
                provider_reference=reference[:64],
                payment=payment,
                intent_ref=intent_ref[:32],
                summary=_summary(kind, subject),
                received_at=now,
            )
    except IntegrityError:
        return None  # delivered before: Stripe retries and may send an event twice
    if payment is not None and kind.startswith("charge.dispute."):
        dispute = f"{subject.get('status', 'open')} ({subject.get('reason', 'unknown')})"
        Payment.objects.filter(pk=payment.pk).update(dispute=dispute[:80])
        if kind == "charge.dispute.created":
            events.payment_disputed(
                payment.order,
                now=now,
                payment=payment.ref,
                amount=Decimal(subject.get("amount", 0)) / 100,
                reason=str(subject.get("reason", "")),
            )
    if payment is not None and refunds:
        refunds_outside_record(payment, refunds, now=now)
    logger.info(
        "payment provider event",
        extra={"fields": {"event": recorded.event_id, "type": kind, "intent": intent_ref}},
    )
    return recorded


def _payment_intent_of(kind: str, subject: dict[str, Any]) -> str:
    """The provider's PaymentIntent id an event is about."""
    if kind.startswith("payment_intent."):
        return str(subject.get("id", ""))
    found = subject.get("payment_intent") or ""
    return str(found.get("id", "") if isinstance(found, dict) else found)


def _summary(kind: str, subject: dict[str, Any]) -> str:
    """One line for the back office: status, amounts, a dispute's reason."""
    parts = [str(subject.get("status", ""))]
    for field in ("amount", "amount_refunded"):
        if subject.get(field):
            parts.append(f"{field} {Decimal(subject[field]) / 100}")
    if subject.get("reason"):
        parts.append(f"reason {subject['reason']}")
    return " ".join(p for p in parts if p)[:200]
