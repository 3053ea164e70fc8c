"""The payment provider's own webhooks (DESIGN.md §11 "Payment providers"): Stripe's
events about our PaymentIntents, received at `POST /payments/stripe/webhook`.

Each event is verified with the SDK against STRIPE_WEBHOOK_SECRET, recorded once by its
id (Stripe delivers at least once, and retries), and written to the card payment it is
about: a dispute (`charge.dispute.*`) marks the payment and, when opened, the order's
history; `payment_intent.*` and `charge.refunded` are recorded beside the payment, the
provider's word next to ours. Money is never moved here: our books move with our own
calls, and the reconciler settles by `settlement`, not by events that may come late.
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
from orders import events
from orders.models import Payment, PaymentIntent, ProviderEvent

logger = logging.getLogger("airline.payments")


def provider_event_receive(*, payload: bytes, signature: str) -> ProviderEvent | None:
    """Verify and record one webhook event; None when it was recorded before. ERR-1004
    when the signature does not verify (or the body is no event)."""
    try:
        stripe.Webhook.construct_event(payload, signature, settings.STRIPE_WEBHOOK_SECRET)
        event = json.loads(payload)
    except (ValueError, stripe.SignatureVerificationError):
        raise ApiError(
            Err.INVALID_VALUE,
            "The event's Stripe-Signature does not verify with this endpoint's secret",
            path="Stripe-Signature",
        ) from None
    return _record(event, now=clock.now())


@transaction.atomic
def _record(event: dict[str, Any], *, now: datetime) -> ProviderEvent | None:
    kind = str(event.get("type", ""))
    subject = (event.get("data") or {}).get("object") or {}
    reference = _payment_intent_of(kind, subject)
    # The payment row locked: a dispute and our own refund of it queue.
    payment = (
        Payment.objects.select_for_update()
        .filter(gateway_reference=reference, method=Payment.Method.CARD)
        .select_related("order")
        .first()
        if reference
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
