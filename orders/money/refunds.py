"""Money given back to a card (DESIGN.md §11 "Payments"): no money moves without a
durable record first.

1. `refunds_owe` — inside the transaction of the change that owes the money: the amount
   is spread over the order's card payments, newest first, each up to what is left of
   it; every part a PENDING `Refund` row, the payment's `refunded` raised with it.
2. `refunds_send` — once that transaction has committed: each row is given back by the
   gateway under its own reference (at most once per reference) and marked SENT.
3. `refunds_retry` — the background worker's job: rows left PENDING past the grace
   period (the worker that owed them died between 1 and 2) are sent, after looking at
   what the provider already gave back of the charge (ours, and refunds made outside
   this service that cover ours: COVERED).

A change that fails rolls its rows back with it, so nothing is given back for a change
that did not happen; a change that committed is never left owing.

A refund the provider made outside this service (in its dashboard) is learnt from its
`charge.refunded` event (orders.money.provider_events) and recorded by `refunds_outside_record`
as a SENT row carrying the provider's id: ours are told from it by their reference (the
provider's metadata `reference`), which is committed before our money moves, so no
refund of ours is ever counted twice.
"""

import logging
import secrets
from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.db.models import F, QuerySet

from airline.api import clock
from airline.fares.money import ZERO
from orders.core import events
from orders.models import Order, Payment, Refund
from orders.money.payments import (
    Charge,
    PaymentDeclined,
    PaymentGateway,
    PaymentTimedOut,
    ProviderRefund,
    payment_gateway,
)

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
        if not _refund_given(gateway, refund, refund.amount):
            continue
        Refund.objects.filter(pk=refund.pk, state=Refund.State.PENDING).update(
            state=Refund.State.SENT, sent_at=clock.now()
        )
        refund.state = Refund.State.SENT


def _refund_given(gateway: PaymentGateway, refund: Refund, amount: Decimal) -> bool:
    """Give `amount` of `refund` back at the gateway under the refund's reference. False,
    logged, when the gateway failed: the row stays PENDING for `refunds_retry`."""
    payment = refund.payment
    try:
        gateway.refund(
            charge=Charge(payment.gateway_reference, payment.amount, payment.currency),
            amount=amount,
            reference=refund.ref,
        )
    except Exception:
        logger.exception(
            "refund not sent; the reconciler will retry", extra={"fields": {"refund": refund.ref}}
        )
        return False
    return True


def refunds_due(*, now: datetime, grace: timedelta | None = None) -> QuerySet[Refund]:
    """The refunds one run of refunds_retry sends: PENDING for longer than `grace`
    (default PAYMENT_INTENT_GRACE_SECONDS), oldest first, at most 500."""
    if grace is None:
        grace = timedelta(seconds=settings.PAYMENT_INTENT_GRACE_SECONDS)
    return Refund.objects.filter(state=Refund.State.PENDING, created_at__lte=now - grace).order_by(
        "pk"
    )[:500]


def refunds_retry(*, now: datetime | None = None, grace: timedelta | None = None) -> int:
    """Send every refund PENDING for longer than `grace`; how many were pending.

    A refund left PENDING may have been given back already (its worker died after the
    provider's answer), and the provider may have given the same money back outside this
    service meanwhile (staff in its dashboard). So the provider's refunds of each charge
    are listed first (a gateway that can: Stripe); then each refund of ours is:

    - SENT when one of them carries its reference (nothing is sent again: past 24 hours
      the provider no longer knows the idempotency key, and would give it back twice);
    - sent, in full or up to what the charge still holds at the provider, under its
      reference; what the charge no longer holds was given back outside this service:
      the refund is COVERED (`covered`, `note`, and the order's history), never sent
      over what is left, never failed for it.

    When the list cannot be had, a refund younger than REFUND_KEY_SAFE_HOURS is sent
    under its reference (the provider answers a repeat with the first refund); an older
    one waits for the next run. A gateway that lists no refunds (the test gateway) keeps
    every reference for ever: its refunds are sent as they are."""
    now = now or clock.now()
    due = list(refunds_due(now=now, grace=grace).select_related("payment__order"))
    gateway = payment_gateway()
    listing = getattr(gateway, "refunds_of", None)
    if listing is None:
        refunds_send(due)
        return len(due)
    by_payment: dict[int, list[Refund]] = {}
    for refund in due:
        by_payment.setdefault(refund.payment_id, []).append(refund)
    key_kept_since = now - timedelta(hours=settings.REFUND_KEY_SAFE_HOURS)
    for refunds in by_payment.values():
        payment = refunds[0].payment
        try:
            found = listing(charge_reference=payment.gateway_reference)
        except (PaymentDeclined, PaymentTimedOut):
            young = [r for r in refunds if r.created_at > key_kept_since]
            if len(young) < len(refunds):
                logger.warning(
                    "refund not sent again: past its idempotency key, and the provider's "
                    "refunds could not be listed",
                    extra={"fields": {"payment": payment.ref}},
                )
            refunds_send(young)
            continue
        _refunds_settle(payment, refunds, found, now=now)
    return len(due)


def _refunds_settle(
    payment: Payment, refunds: Sequence[Refund], found: Sequence[ProviderRefund], *, now: datetime
) -> None:
    """Settle our PENDING `refunds` of `payment` by the provider's refunds of its charge
    (`found`): see refunds_retry."""
    gateway = payment_gateway()
    ours = set(Refund.objects.filter(payment=payment).values_list("ref", flat=True))
    given = {r.reference: r for r in found if r.reference in ours}
    outside = [r.id for r in found if r.reference not in ours]
    # What the charge still holds at the provider.
    left = payment.amount - sum((r.amount for r in found), ZERO)
    for refund in refunds:
        if refund.ref in given:
            _refund_settle(
                refund,
                Refund.State.SENT,
                now=now,
                note=f"found given back at the provider ({given[refund.ref].id})",
            )
            continue
        part = min(refund.amount, max(left, ZERO))
        if part:
            if not _refund_given(gateway, refund, part):
                continue
            left -= part
        if part == refund.amount:
            _refund_settle(refund, Refund.State.SENT, now=now)
            continue
        covered = refund.amount - part
        by = ", ".join(outside) or "none listed"
        note = (
            f"{covered} of it already given back by refunds made at the payment provider, "
            f"outside this service ({by}); {part} sent"
        )
        with transaction.atomic():  # the refund's state and the order's history together
            if not _refund_settle(
                refund, Refund.State.COVERED, now=now, note=note, covered=covered
            ):
                continue
            events.payment_refund_covered(
                payment.order,
                now=now,
                payment=payment.ref,
                refund=refund.ref,
                covered=covered,
                sent=part,
                provider_refunds=outside,
            )
        logger.warning(
            "refund covered by refunds made at the provider",
            extra={"fields": {"refund": refund.ref, "covered": str(covered)}},
        )


def _refund_settle(refund: Refund, state: str, *, now: datetime, **fields) -> bool:
    """A PENDING refund's final state; False when another run settled it first."""
    settled = Refund.objects.filter(pk=refund.pk, state=Refund.State.PENDING).update(
        state=state, sent_at=now, **fields
    )
    refund.state = state
    return bool(settled)


def refunds_outside_record(
    payment: Payment, found: Sequence[ProviderRefund], *, now: datetime
) -> list[Refund]:
    """Inside the event's transaction, the order row and then the payment row locked:
    record each of the provider's refunds of `payment` (`found`) that is neither ours
    (its reference one of the payment's Refund.ref) nor recorded before (its id). Each
    raises the payment's `refunded`, lowers what the order holds (`paid`) and adds to
    its `refunded_outside`; the order's status and tickets stand (docs/operators/production.md).
    What the payment no longer has room for (a refund of ours owed and not yet sent,
    and the same money refunded in the dashboard meanwhile) is logged, not recorded."""
    known = set(Refund.objects.filter(payment=payment).values_list("ref", "gateway_reference"))
    ours = {ref for ref, _ in known} | {provider_id for _, provider_id in known}
    recorded: list[Refund] = []
    room = payment.amount - payment.refunded
    for refund in found:
        if refund.id in ours or (refund.reference and refund.reference in ours):
            continue
        amount = min(refund.amount, room)
        if amount < refund.amount:
            logger.warning(
                "a refund made at the provider exceeds what the payment has left",
                extra={
                    "fields": {
                        "payment": payment.ref,
                        "provider_refund": refund.id,
                        "amount": str(refund.amount),
                        "room": str(room),
                    }
                },
            )
        if amount <= 0:
            continue
        room -= amount
        recorded.append(
            Refund.objects.create(
                ref=f"RFD-{secrets.token_hex(12).upper()}",
                payment=payment,
                amount=amount,
                state=Refund.State.SENT,
                why=f"refunded at the payment provider, outside this service ({refund.id})"[:200],
                created_at=now,
                sent_at=now,
                gateway_reference=refund.id[:64],
            )
        )
    total = sum((r.amount for r in recorded), ZERO)
    if not total:
        return recorded
    Payment.objects.filter(pk=payment.pk).update(
        refunded=F("refunded") + total,
        status=Payment.Status.REFUNDED
        if payment.refunded + total == payment.amount
        else payment.status,
    )
    # A new version: a change worked out before this refund is refused and retried.
    Order.objects.filter(pk=payment.order_id).update(
        paid=F("paid") - total,
        refunded_outside=F("refunded_outside") + total,
        version=F("version") + 1,
        updated_at=now,
    )
    for refund in recorded:
        events.payment_refunded_outside(
            payment.order,
            now=now,
            payment=payment.ref,
            amount=refund.amount,
            provider_refund=refund.gateway_reference,
        )
    return recorded
