"""The payment reconciler (DESIGN.md §11 "Payments"): settles every payment intent left
PENDING past PAYMENT_INTENT_GRACE_SECONDS, by what the gateway says it holds for the
intent's reference. Run by the background worker and by `manage.py reconcile_payments`.

An intent stays PENDING only when the worker that opened it died (SIGKILL, OOM, a
gunicorn timeout) or lost its database between committing the intent and settling it:

- nothing was charged: the intent is VOID, and a create's reserved order is abandoned
  (its seats back);
- a create's reserved order is still PENDING and the charge stands: the booking did
  commit, so it is confirmed and the charge attached (payment row, tickets, EMDs);
- any other charge no order took: refunded, and the intent REFUNDED.

Each settlement is written to the intent (state, note) and, where the order still
exists, to the order's history; and, where the request sent an Idempotency-Key, to its
record, in the same transaction: APPLIED with the order it booked (a retry with the key
is answered 201 or 200 with the order, as if the first request had been), or FAILED with
the error (ERR-4001 or ERR-4002, reason PAYMENT_NOT_COMPLETED). Each run then deletes
the claims of requests that died with no payment left to settle (RUNNING, or SETTLING
once their payment was settled), older than IDEMPOTENCY_LEASE_SECONDS: no key stays
`running` after a run, and a retry of such a request runs afresh.
"""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction

from airline.api import clock
from airline.api.errors import ApiError, Err, Reason
from airline.api.idempotency import (
    idempotency_applied,
    idempotency_failed,
    idempotency_release_abandoned,
)
from orders.booking.paying import order_abandon, order_confirm_paid
from orders.core import events
from orders.models import Order, OrderStatus, PaymentIntent
from orders.money.intents import settle
from orders.money.payments import PaymentDeclined, PaymentTimedOut, payment_gateway
from orders.reading.selectors import order_parts

logger = logging.getLogger("airline.payments")
ACTOR = "payment reconciler"


def payments_reconcile(
    *, now: datetime | None = None, grace: timedelta | None = None, batch_size: int = 100
) -> dict[str, int]:
    """Settle every intent PENDING for longer than `grace`; how many ended in each way."""
    now = now or clock.now()
    grace = grace if grace is not None else timedelta(seconds=settings.PAYMENT_INTENT_GRACE_SECONDS)
    outcomes: dict[str, int] = {}
    last_pk = 0
    while True:
        due = list(
            PaymentIntent.objects.filter(
                state=PaymentIntent.State.PENDING, created_at__lte=now - grace, pk__gt=last_pk
            )
            .order_by("pk")
            .values_list("pk", flat=True)[:batch_size]
        )
        if not due:
            break
        for pk in due:
            try:
                outcome = intent_reconcile(pk, now=now)
            except (ApiError, PaymentDeclined, PaymentTimedOut) as failed:
                # The provider is down or refused a capture: the intent stays PENDING for
                # the next run; the others are settled now.
                logger.warning(
                    "payment intent not settled: the gateway did not answer",
                    extra={"fields": {"intent_pk": pk, "reason": str(failed)}},
                )
                outcome = "unsettled"
            if outcome:
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
        last_pk = due[-1]
    settling = PaymentIntent.objects.filter(
        state=PaymentIntent.State.PENDING, idempotency_record__isnull=False
    ).values("idempotency_record")
    released = idempotency_release_abandoned(now=now, settling=settling)
    if released:
        outcomes["keys_released"] = released
    return outcomes


def intent_reconcile(pk: int, *, now: datetime) -> str | None:
    """Settle one PENDING intent; None when another reconciler holds it or it is settled."""
    with transaction.atomic():
        # One reconciler per intent: the others skip it rather than wait.
        intent = (
            PaymentIntent.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(pk=pk, state=PaymentIntent.State.PENDING)
            .select_related("order")
            .first()
        )
        if intent is None:
            return None
        gateway = payment_gateway()
        held = gateway.settlement(reference=intent.ref)
        order = intent.order
        reserved = order is not None and order.status == OrderStatus.PENDING
        if held is None or held.outstanding <= 0:
            if reserved:
                order_abandon(order)
            state = PaymentIntent.State.VOID if held is None else PaymentIntent.State.REFUNDED
            settle(intent, state, "nothing held at the gateway; the reservation is given back")
            _answer_not_done(intent)
            return state.lower()
        if reserved and intent.purpose == PaymentIntent.Purpose.CREATE:
            order_confirm_paid(
                order_parts(order), intent=intent, charge=held.charge, actor=ACTOR, now=now
            )
            if intent.idempotency_record_id is not None:
                idempotency_applied(intent.idempotency_record_id, resource=order.order_id)
            logger.info(
                "payment intent attached",
                extra={"fields": {"intent": intent.ref, "order": order.order_id}},
            )
            return "attached"
        gateway.refund(charge=held.charge, amount=held.outstanding)
        settle(
            intent,
            PaymentIntent.State.REFUNDED,
            "refunded: no booking or change took the charge",
            gateway_reference=held.charge.reference,
        )
        if order is not None and Order.objects.filter(pk=order.pk).exists():
            events.payment_refunded(order, actor=ACTOR, now=now, amount=held.outstanding)
        _answer_not_done(intent)
        return "refunded"


def _answer_not_done(intent: PaymentIntent) -> None:
    """Inside the settling transaction: the answer a retry of the intent's request gets,
    its payment having come to nothing (never charged, or given back)."""
    if intent.idempotency_record_id is None:
        return
    taken = "anything the card provider took has been given back"
    if intent.purpose == PaymentIntent.Purpose.CREATE:
        err = ApiError(
            Err.ORDER_NOT_CREATED,
            f"The card payment did not complete: nothing was booked, and {taken}. Book "
            "again with a new Idempotency-Key",
            reason=Reason.PAYMENT_NOT_COMPLETED,
        )
    else:
        err = ApiError(
            Err.CHANGE_NOT_APPLIED,
            f"The card payment did not complete: the change was not applied, and {taken}. "
            "Retrieve the order and send the change again with a new Idempotency-Key",
            reason=Reason.PAYMENT_NOT_COMPLETED,
        )
    idempotency_failed(intent.idempotency_record_id, err)
