"""The orders app's Prometheus metrics (airline/api/metrics.py, docs/operators/monitoring.md):
bookings created and holds expired, counted from the events every write records
(orders/core/events.py) when their transaction commits, so no service has to know about
metrics; the worker's queues of holds and payment intents past due; and what its last
books audit found. `connect` is called once, from OrdersConfig.ready.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models.signals import post_save

from airline.api import metrics
from orders.models import BooksAudit, Order, OrderEvent, OrderStatus, Payment, PaymentIntent


def connect() -> None:
    post_save.connect(_order_event_saved, sender=OrderEvent, dispatch_uid="metrics")
    metrics.queue_register(
        "airline_holds_due_to_expire",
        "Unpaid holds past their time limit, not yet expired",
        _holds_due,
    )
    metrics.queue_register(
        "airline_payments_due_to_reconcile",
        "Payment intents pending past the grace period, not yet reconciled",
        _intents_due,
    )
    metrics.gauge_register(
        "airline_books_disagreements",
        "Disagreements the last nightly books audit found (manage.py audit_books)",
        _books_disagreements,
    )


def _books_disagreements(now: datetime) -> int | None:
    """What the last books audit the worker ran found (orders.money.audit); None before any."""
    return BooksAudit.objects.order_by("-pk").values_list("disagreements", flat=True).first()


def _holds_due(now: datetime):
    return Order.objects.filter(status=OrderStatus.ONHOLD, payment_time_limit__lte=now)


def _intents_due(now: datetime):
    grace = timedelta(seconds=settings.PAYMENT_INTENT_GRACE_SECONDS)
    return PaymentIntent.objects.filter(
        state=PaymentIntent.State.PENDING, created_at__lte=now - grace
    )


def _order_event_saved(sender, instance, created: bool, **kwargs) -> None:
    if not created:
        return
    order = instance.order
    if instance.kind == OrderEvent.Kind.HOLD_EXPIRED:
        transaction.on_commit(metrics.HOLDS_EXPIRED.inc)
    elif instance.kind in (OrderEvent.Kind.CREATED, OrderEvent.Kind.IMPORTED):
        if instance.detail.get("status") == OrderStatus.ONHOLD:
            _count_booking_on_commit(order.channel, "Hold")
        elif instance.kind == OrderEvent.Kind.IMPORTED:
            _count_booking_on_commit(order.channel, "External")  # paid where it was sold
        else:
            # Reserved until it is paid, and a refused card leaves no booking: the
            # `paid` event the booking records on this same order object counts it.
            order._booking_unpaid = True
    elif instance.kind == OrderEvent.Kind.PAID and getattr(order, "_booking_unpaid", False):
        order._booking_unpaid = False
        _count_booking_on_commit(order.channel, _payment_kind(order, instance.detail))


def _payment_kind(order: Order, detail: dict) -> str:
    """What paid a booking at its creation: AirlineCredit when a credit paid any of it
    (with a card for the rest or not), else CreditCard (SPEC.md §4.7 payment.type). From
    the `paid` event's `paidWith` when the booking wrote it, else its payments read."""
    methods = detail.get("paidWith")
    if methods is None:
        methods = Payment.objects.filter(order=order).values_list("method", flat=True)
    return "AirlineCredit" if Payment.Method.CREDIT in set(methods) else "CreditCard"


def _count_booking_on_commit(channel: str, payment: str) -> None:
    transaction.on_commit(lambda: metrics.BOOKINGS_CREATED.labels(channel, payment).inc())
