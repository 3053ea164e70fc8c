"""Payment intents: the durable record of a card charge, made before the gateway is
called (DESIGN.md §11 "Payments"). Every flow that takes money goes through here:

1. `intent_open` — the intent row (`intent_new`), committed (with a create's reserved
   order, or alone);
2. `intent_charge` — the gateway call under the intent's reference; a refusal is written
   to the intent before the error reaches the client (`card_charged` wraps it and step 4
   around the block that writes what the charge pays for);
3. `intent_attach` — inside the booking's or change's transaction: the charge becomes
   the order's payment row;
4. `intent_refund` — when that transaction could not commit.

A worker that dies anywhere in between leaves a PENDING intent; the reconciler
(orders.booking.reconcile) settles it after PAYMENT_INTENT_GRACE_SECONDS by what the gateway says
it holds for the reference.
"""

import logging
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from decimal import Decimal

from airline.api import clock
from airline.api.errors import ApiError, Err
from airline.api.idempotency import (
    idempotency_claimed,
    idempotency_mark_applied,
    idempotency_settled,
    idempotency_settling,
)
from orders.core.rows import row_new, rows_insert
from orders.models import Order, Payment, PaymentIntent
from orders.money.payments import Card, Charge, PaymentDeclined, PaymentTimedOut, payment_gateway
from sellers.models import Seller

logger = logging.getLogger("airline.payments")


def intent_open(intent: PaymentIntent) -> PaymentIntent:
    """`intent` (intent_new's) written PENDING, inside the caller's transaction or
    committed at once. The request's Idempotency-Key claim commits with it as SETTLING and
    is named on it: should the request not learn how the payment ended, the reconciler
    answers the retry."""
    idempotency_settling()
    rows_insert([intent])  # one plain INSERT (orders/core/rows.py), not the ORM's create()
    return intent


def intent_new(
    *,
    seller: Seller,
    purpose: str,
    amount: Decimal,
    card: Card,
    now: datetime,
    order: Order | None = None,
    offer_id: str = "",
) -> PaymentIntent:
    """A new payment intent, not written yet: intent_open writes it, or a caller that
    writes it with other rows (a booking paid by card alone:
    orders.booking.paying.card_intent_first), which then calls idempotency_settling() in
    that transaction, as intent_open does."""
    return row_new(
        PaymentIntent,
        idempotency_record_id=idempotency_claimed(),
        ref=f"PI-{secrets.token_hex(12).upper()}",
        seller=seller,
        order=order,
        offer_id=offer_id,
        purpose=purpose,
        amount=amount,
        card_brand=card.brand,
        card_last4=card.last4,
        card_expiry=card.expiry,
        created_at=now,
        updated_at=now,
    )


def intent_charge(intent: PaymentIntent, card: Card) -> Charge:
    """Charge the card under the intent's reference. A decline is written to the intent
    (DECLINED) and answered ERR-6002; a timeout ERR-6005, the intent left PENDING for the
    reconciler, which refunds whatever the gateway may still have taken."""
    try:
        return payment_gateway().charge(
            card=card, amount=intent.amount, currency=intent.currency, reference=intent.ref
        )
    except PaymentDeclined as declined:
        # The provider's reason goes to the intent and the log, never to the client.
        settle(
            intent, PaymentIntent.State.DECLINED, f"declined by the card issuer: {declined.code}"
        )
        raise _declined() from None
    except PaymentTimedOut as failed:
        _note(intent, f"the gateway did not complete ({failed.code}); the reconciler settles it")
        raise _timed_out() from None


def _declined() -> ApiError:
    return ApiError(
        Err.PAYMENT_REJECTED, "The card was declined; nothing was booked", path="payment"
    )


def _timed_out() -> ApiError:
    return ApiError(
        Err.PAYMENT_TIMEOUT,
        "The payment did not complete in time; nothing was booked or charged",
        path="payment",
    )


@contextmanager
def card_charged(intent: PaymentIntent, card: Card, *, why: str) -> Iterator[Charge]:
    """The card charged under the intent, for the block that writes what it pays for: if
    the block fails, the charge is refunded (`why` says so on the intent) before the
    error goes on. A charge refused or timed out raises before the block runs."""
    charge = intent_charge(intent, card)
    try:
        yield charge
    except BaseException:
        try:
            intent_refund(intent, charge, why=why)
        except (PaymentDeclined, PaymentTimedOut):
            # The gateway is down as well: the intent stays PENDING and the reconciler
            # gives the money back; the client hears why the block failed.
            _note(intent, f"{why}; not given back yet (the gateway failed): the reconciler will")
            logger.warning(
                "charge not given back; the reconciler will",
                extra={"fields": {"intent": intent.ref}},
            )
        raise


def intent_attach(
    intent: PaymentIntent, *, charge: Charge, payment: Payment, attached: bool | None = None
) -> None:
    """Inside the transaction that writes `payment`: the intent's charge is that row, and
    an authorised charge is captured (ticketing). A capture refused or timed out fails
    the transaction; the caller's card_charged then voids the authorisation. `attached`:
    whether the caller's own statement already moved the intent from PENDING to ATTACHED
    with that row (a card booking's confirmation, orders.booking.paying), or None."""
    if attached is None:
        attached = bool(
            PaymentIntent.objects.filter(pk=intent.pk, state=PaymentIntent.State.PENDING).update(
                state=PaymentIntent.State.ATTACHED,
                gateway_reference=charge.reference,
                payment=payment,
                updated_at=clock.now(),
            )
        )
    if not attached:
        # The reconciler settled it first (it waits PAYMENT_INTENT_GRACE_SECONDS, far
        # longer than a request): the payment must not be written twice.
        raise ApiError(Err.INTERNAL, "The payment was settled meanwhile; retrieve the order")
    # Commits with the payment row: a retry under the request's Idempotency-Key answers
    # with this order, even if the worker dies now.
    idempotency_mark_applied(resource=payment.order.order_id)
    # Only once the intent is ours (not the reconciler's): the one gateway call made with
    # the order row locked, bounded by the gateway's timeout.
    try:
        payment_gateway().capture(charge=charge)
    except PaymentDeclined:
        raise _declined() from None
    except PaymentTimedOut:
        raise _timed_out() from None
    intent.state = PaymentIntent.State.ATTACHED


def intent_refund(intent: PaymentIntent, charge: Charge, *, why: str) -> None:
    """Give a charge back in full, then say so on the intent. Called after the booking's
    transaction failed; should the refund fail too, the intent stays PENDING and the
    reconciler tries again."""
    payment_gateway().refund(charge=charge, amount=charge.amount)
    settle(intent, PaymentIntent.State.REFUNDED, why, gateway_reference=charge.reference)


def settle(intent: PaymentIntent, state: str, note: str, **fields) -> None:
    """Give the intent its final state and say how it got there (one log line too)."""
    PaymentIntent.objects.filter(pk=intent.pk).update(
        state=state, note=note[:200], updated_at=clock.now(), **fields
    )
    intent.state = state
    idempotency_settled()
    logger.info(
        "payment intent settled",
        extra={"fields": {"intent": intent.ref, "state": state, "note": note}},
    )


def _note(intent: PaymentIntent, note: str) -> None:
    PaymentIntent.objects.filter(pk=intent.pk).update(note=note[:200], updated_at=clock.now())
