"""Money given back to a card (DESIGN.md §11 "Payments"): no money moves without a
durable record first.

1. `refunds_owe` — inside the transaction of the change that owes the money: the amount
   is spread over the order's card payments, newest first, each up to what is left of
   it; every part a PENDING `Refund` row, the payment's `refunded` raised with it.
2. `refunds_send` — once that transaction has committed: each row is given back by the
   gateway under its own reference (at most once per reference) and marked SENT.
3. `refunds_retry` — the background worker's job: rows left PENDING past the grace
   period (the worker that owed them died between 1 and 2) are sent.

A change that fails rolls its rows back with it, so nothing is given back for a change
that did not happen; a change that committed is never left owing.
"""

import logging
import secrets
from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db.models import F

from airline.api import clock
from airline.fares.money import ZERO
from orders.models import Order, Payment, Refund
from orders.payments import Charge, payment_gateway

logger = logging.getLogger("airline.payments")


def refundable(order: Order) -> Decimal:
    """What the order's card payments can still give back."""
    return sum(
        (
            p.amount - p.refunded
            for p in Payment.objects.filter(
                order=order, method=Payment.Method.CARD, status=Payment.Status.SUCCESSFUL
            )
        ),
        ZERO,
    )


def refunds_owe(order: Order, amount: Decimal, *, now: datetime, why: str) -> list[Refund]:
    """Inside the change's transaction (the order row locked): owe `amount` back to the
    order's cards, newest payment first. Raises ValueError when the cards cannot take it
    (the caller gives the rest as credit instead: `refundable` says how much fits)."""
    left = amount
    owed: list[Refund] = []
    payments = Payment.objects.select_for_update().filter(
        order=order, method=Payment.Method.CARD, status=Payment.Status.SUCCESSFUL
    )
    for payment in payments.order_by("-id"):
        if left <= 0:
            break
        part = min(left, payment.amount - payment.refunded)
        if part <= 0:
            continue
        fully = payment.refunded + part == payment.amount
        Payment.objects.filter(pk=payment.pk).update(
            refunded=F("refunded") + part,
            status=Payment.Status.REFUNDED if fully else Payment.Status.SUCCESSFUL,
        )
        owed.append(
            Refund.objects.create(
                ref=f"RFD-{secrets.token_hex(12).upper()}",
                payment=payment,
                amount=part,
                why=why[:200],
                created_at=now,
            )
        )
        left -= part
    if left > 0:
        raise ValueError(f"the order's cards can take {amount - left} of {amount} back")
    return owed


def refunds_send(refunds: Sequence[Refund]) -> None:
    """After the owing transaction committed: give each refund back at the gateway. A
    gateway error leaves the row PENDING for `refunds_retry`; the change stands."""
    gateway = payment_gateway()
    for refund in refunds:
        payment = refund.payment
        try:
            gateway.refund(
                charge=Charge(payment.gateway_reference, payment.amount, payment.currency),
                amount=refund.amount,
                reference=refund.ref,
            )
        except Exception:
            logger.exception(
                "refund not sent; the reconciler will retry",
                extra={"fields": {"refund": refund.ref}},
            )
            continue
        Refund.objects.filter(pk=refund.pk, state=Refund.State.PENDING).update(
            state=Refund.State.SENT, sent_at=clock.now()
        )
        refund.state = Refund.State.SENT


def refunds_retry(*, now: datetime | None = None, grace: timedelta | None = None) -> int:
    """Send every refund PENDING for longer than `grace`; how many were pending."""
    now = now or clock.now()
    if grace is None:
        grace = timedelta(seconds=settings.PAYMENT_INTENT_GRACE_SECONDS)
    due = list(
        Refund.objects.filter(state=Refund.State.PENDING, created_at__lte=now - grace)
        .select_related("payment")
        .order_by("pk")[:500]
    )
    refunds_send(due)
    return len(due)
