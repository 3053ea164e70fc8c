"""Unpaid holds (SPEC.md §3; DESIGN.md §8): when a hold lapses, cancelling one, and
expiring those past their limit: by the worker's sweep (holds_expire) and by a write
that finds one (order_for_change). Reads never expire: they present a lapsed hold as
expired (orders.reading.selectors.order_as_it_stands).
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F

from airline.api import clock
from airline.api.errors import ApiError, Err
from airline.network.inventory import SeatChange, inventory_apply
from orders.core import events
from orders.models import (
    Order,
    OrderItem,
    OrderStatus,
    Segment,
    Service,
)
from orders.reading.selectors import (
    SLIM_PARTS,
    OrderScope,
    hold_lapsed,
    order_header,
    order_with_parts,
)


def hold_time_limit(*, now: datetime, first_departure: datetime) -> datetime:
    """When an unpaid hold lapses: HOLD_HOURS from now, and never later than the cutoff
    before departure; inside the cutoff no hold is allowed (DESIGN.md §8)."""
    cutoff = first_departure - timedelta(hours=settings.HOLD_CUTOFF_HOURS_BEFORE_DEPARTURE)
    if now >= cutoff:
        raise ApiError(
            Err.ORDER_NOT_CREATED,
            f"No hold within {settings.HOLD_CUTOFF_HOURS_BEFORE_DEPARTURE} hours of "
            "departure; pay by card instead",
            path="payment.type",
        )
    return min(now + timedelta(hours=settings.HOLD_HOURS), cutoff)


def order_cancel_hold(*, order: Order, actor: str, expired: bool = False) -> bool:
    """Cancel an unpaid hold and give its seats back. False when it is not (or no
    longer) an unpaid hold: someone paid, cancelled or expired it first."""
    now = clock.now()
    with transaction.atomic():
        # The conditional UPDATE picks one winner among concurrent cancellers and
        # expirers; only the winner releases seats, so they are never given back twice.
        # Every line goes unpaid: the order is worth nothing now and its value is voided
        # (SQL reads `total` as it was before this UPDATE).
        won = Order.objects.filter(pk=order.pk, status=OrderStatus.ONHOLD, paid=0).update(
            status=OrderStatus.CANCELLED,
            total=0,
            voided=F("voided") + F("total"),
            updated_at=now,
            version=F("version") + 1,
        )
        if not won:
            return False
        seats_release(order)
        OrderItem.objects.filter(order=order).update(status="CANCELLED")
        # Its seats and services go with it: the seats become free on the seat maps.
        Service.objects.filter(order=order, status=Service.Status.ACTIVE).update(
            status=Service.Status.CANCELLED
        )
        events.hold_cancelled(order, actor=actor, now=now, expired=expired)
    order.refresh_from_db(fields=["status", "total", "voided", "updated_at", "version"])
    return True


def order_expire_if_due(order: Order, *, now: datetime | None = None) -> Order:
    """Expire the order if it is an unpaid hold past its limit (its seats back, the
    hold_expired event and its webhook), and return it as it stands after. For writes:
    a change to a lapsed hold acts on the cancelled order (reads present it so without
    writing: orders.reading.selectors.order_as_it_stands)."""
    now = now or clock.now()
    if hold_lapsed(order, now=now) and not order_cancel_hold(
        order=order, actor="system", expired=True
    ):
        order.refresh_from_db(fields=["status", "total", "voided", "paid", "updated_at", "version"])
    return order


def order_for_change(*, scope: OrderScope, ref: str, parts=SLIM_PARTS) -> Order:
    """The order a write acts on: found as orders.reading.selectors.order_get finds it, a lapsed
    hold expired first (order_expire_if_due), with `parts` loaded."""
    order = order_expire_if_due(order_header(scope=scope, ref=ref))
    return order_with_parts(order, parts) if parts else order


def holds_expire(*, now: datetime | None = None, batch_size: int = 500) -> int:
    """Cancel every unpaid hold past its limit; returns how many this call cancelled.
    Safe to run concurrently and repeatedly: each hold is cancelled by one caller only."""
    now = now or clock.now()
    expired = 0
    last_pk = 0
    while True:
        due = list(
            Order.objects.filter(
                status=OrderStatus.ONHOLD, payment_time_limit__lte=now, pk__gt=last_pk
            )
            .order_by("pk")
            .only("pk", "status", "payment_time_limit")[:batch_size]
        )
        if not due:
            return expired
        for order in due:
            expired += order_cancel_hold(order=order, actor="expire_holds", expired=True)
        last_pk = due[-1].pk


def seats_release(order: Order) -> None:
    segments = list(
        Segment.objects.filter(order=order, holds_inventory=True).prefetch_related("legs")
    )
    inventory_apply(
        [
            SeatChange(tuple(leg.flight_leg_id for leg in s.legs.all()), s.rbd, -s.seats)
            for s in segments
        ]
    )
    Segment.objects.filter(pk__in=[s.pk for s in segments]).update(holds_inventory=False)
