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
exists, to the order's history.
"""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction

from airline.api import clock
from airline.api.errors import ApiError
from orders import events
from orders.booking.paying import order_abandon, order_confirm_paid
from orders.intents import settle
from orders.models import Order, OrderStatus, PaymentIntent
from orders.payments import PaymentDeclined, PaymentTimedOut, payment_gateway
from orders.selectors import order_parts

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
            return outcomes
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
            return state.lower()
        if reserved and intent.purpose == PaymentIntent.Purpose.CREATE:
            order_confirm_paid(
                order_parts(order), intent=intent, charge=held.charge, actor=ACTOR, now=now
            )
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
        return "refunded"
