"""An order's history (STYLE.md, after Saleor's order/events.py): one kind per state
change (OrderEvent.Kind) and one function per kind, called by every write in the same
transaction as the change. Each says who acted (`actor`: seller and key prefix, a
command, the reconciler), when, and the money it moved. `event_announced` also sends
`order_event_recorded`, on which the webhooks app writes the event's outbox rows
(webhooks.outbox), in that same transaction.
"""

from collections.abc import Callable, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any, NamedTuple

from django.db.models.signals import post_save
from django.dispatch import Signal

from orders.core.rows import row_new, rows_insert, rows_insert_together
from orders.models import AirlineChange, AirlineCredit, Order, OrderEvent, Service
from sellers.authentication import Principal

OrderEventKind = OrderEvent.Kind

# Sent inside the change's transaction for every event recorded here, with `order`,
# `kind` and `now`: the webhook outbox listens (webhooks.apps connects
# webhooks.outbox), so that orders need not import the webhooks app built on them. A
# listener that raises rolls the change back with it.
order_event_recorded = Signal()
# The same for events of one kind recorded for many orders at once (a schedule change's
# batch of bookings told), with `orders`, `kind` and `now`: the outbox writes their rows
# in a few statements rather than a few per order.
order_events_recorded = Signal()


class AnnouncementRead(NamedTuple):
    """A read a listener of order_event_recorded makes for an order (a SELECT and its
    parameters), sent ahead by a writer with its own statements; `keep` is handed the rows
    it answered and keeps them where the listener looks first."""

    sql: str
    params: Sequence
    keep: Callable[[list[tuple]], None]


# Each listening app's read (announcement_read_register): a booking sends them in its
# rows' last round trip (orders.booking.writes), so that announcing its events costs no
# round trip of their own.
_announcement_reads: list[Callable[[Order], AnnouncementRead]] = []


def announcement_read_register(read: Callable[[Order], AnnouncementRead]) -> None:
    """Called by an app that listens to order_event_recorded (webhooks.apps), so that
    orders never import it (architecture.md "Layers")."""
    if read not in _announcement_reads:
        _announcement_reads.append(read)


def announcement_reads(order: Order) -> list[AnnouncementRead]:
    """The reads announcing an event of `order` will make, for a writer to send ahead."""
    return [read(order) for read in _announcement_reads]


def actor_of(principal: Principal) -> str:
    """Who an API call acts as, for the event history."""
    return f"{principal.seller.code} (key {principal.key.prefix})"


def created_event(order: Order, *, actor: str, now: datetime) -> OrderEvent:
    """The event of a booking written through an API channel (its status: ONHOLD, or
    PENDING payment), not yet written: create order writes it with the order's last rows
    (orders.booking.writes.order_rows_write), then hands it to event_announced."""
    return _event(order, OrderEventKind.CREATED, actor=actor, now=now, **_booking(order))


def order_imported(order: Order, *, actor: str, now: datetime) -> None:
    """A booking brought in from another channel (import_bookings)."""
    _record(order, OrderEventKind.IMPORTED, actor=actor, now=now, **_booking(order))


def _booking(order: Order) -> dict[str, Any]:
    return {"status": order.status, "total": str(order.total), "channel": order.channel}


def order_paid(
    order: Order, *, actor: str, now: datetime, amount: Decimal, paid_with: Sequence[str] = ()
) -> None:
    """A card charge (or, for a booking, an airline credit) became the order's payment;
    `paid_with`, when the caller holds them, the methods of every payment the order has
    now (Payment.Method), so that what counts bookings by how they were paid
    (orders.reading.metrics) need not read them back."""
    _written(paid_event(order, actor=actor, now=now, amount=amount, paid_with=paid_with))


def paid_event(
    order: Order, *, actor: str, now: datetime, amount: Decimal, paid_with: Sequence[str] = ()
) -> OrderEvent:
    """order_paid's event, not yet written: for a caller that writes it with its other
    statements (orders.core.rows.rows_statement) and then hands it to event_announced."""
    detail: dict[str, Any] = {"amount": str(amount)}
    if paid_with:
        detail["paidWith"] = sorted(set(paid_with))
    return _event(order, OrderEventKind.PAID, actor=actor, now=now, **detail)


def hold_confirmed(order: Order, *, actor: str, now: datetime) -> None:
    """A hold paid in full: CONFIRMED, ticketed."""
    _record(order, OrderEventKind.HOLD_CONFIRMED, actor=actor, now=now)


def hold_cancelled(order: Order, *, actor: str, now: datetime, expired: bool) -> None:
    """An unpaid hold cancelled, by its seller or (expired) at its time limit."""
    kind = OrderEventKind.HOLD_EXPIRED if expired else OrderEventKind.HOLD_CANCELLED
    _record(order, kind, actor=actor, now=now)


def services_added(
    order: Order,
    *,
    actor: str,
    now: datetime,
    services: Sequence[Service],
    replaced: Sequence[Service],
    amount: Decimal,
) -> None:
    """Seats or services sold on an existing order (AcceptOffer), with the seats given
    up for them, and what the order's value moved by."""
    _record(
        order,
        OrderEventKind.SERVICES_ADDED,
        actor=actor,
        now=now,
        services=[f"{s.ref} {s.code}" for s in services],
        replaced=[f"{s.ref} {s.code}" for s in replaced],
        amount=str(amount),
    )


def payment_refunded(order: Order, *, actor: str, now: datetime, amount: Decimal) -> None:
    """Money given back to the order's cards: a charge of a change that never committed
    (the reconciler), or what a cancellation or a cheaper exchange refunds."""
    _record(order, OrderEventKind.PAYMENT_REFUNDED, actor=actor, now=now, amount=str(amount))


def payment_refunded_outside(
    order: Order, *, now: datetime, payment: str, amount: Decimal, provider_refund: str
) -> None:
    """The payment provider gave money back outside this service (a refund made in its
    dashboard), learnt from its event (orders.money.refunds.refunds_outside_record)."""
    _record(
        order,
        OrderEventKind.PAYMENT_REFUNDED,
        actor="payment provider",
        now=now,
        amount=str(amount),
        payment=payment,
        provider_refund=provider_refund,
        outside=True,
    )


def payment_refund_covered(
    order: Order,
    *,
    now: datetime,
    payment: str,
    refund: str,
    covered: Decimal,
    sent: Decimal,
    provider_refunds: Sequence[str],
) -> None:
    """A refund of ours the reconciler found already given back when it came to send it
    again: `covered` of it by refunds made at the provider outside this service
    (`provider_refunds`), `sent` under our reference. The order's money does not move:
    the refund was counted when it was owed."""
    _record(
        order,
        OrderEventKind.PAYMENT_REFUND_COVERED,
        actor="payment reconciler",
        now=now,
        payment=payment,
        refund=refund,
        covered=str(covered),
        sent=str(sent),
        provider_refunds=list(provider_refunds),
    )


def payment_disputed(
    order: Order, *, now: datetime, payment: str, amount: Decimal, reason: str
) -> None:
    """The cardholder disputed a card payment with their bank (the provider said so)."""
    _record(
        order,
        OrderEventKind.PAYMENT_DISPUTED,
        actor="payment provider",
        now=now,
        payment=payment,
        amount=str(amount),
        reason=reason,
    )


def credit_issued(order: Order, *, actor: str, now: datetime, credit: AirlineCredit) -> None:
    """Value of the order given back as airline credit."""
    _record(
        order,
        OrderEventKind.CREDIT_ISSUED,
        actor=actor,
        now=now,
        credit=credit.code,
        amount=str(credit.amount),
        expires=credit.expires_at.isoformat(),
    )


def credit_redeemed(
    order: Order, *, actor: str, now: datetime, credit: AirlineCredit, amount: Decimal
) -> None:
    """An airline credit spent on this order."""
    _record(
        order,
        OrderEventKind.CREDIT_REDEEMED,
        actor=actor,
        now=now,
        credit=credit.code,
        amount=str(amount),
    )


def itinerary_exchanged(
    order: Order,
    *,
    actor: str,
    now: datetime,
    replaced: Sequence[str],
    added: Sequence[str],
    amount: Decimal,
) -> None:
    """Journeys swapped for a quoted reshop offer (AcceptReshopOffer): the items replaced
    and added, and what the order's value moved by, fees included."""
    _record(
        order,
        OrderEventKind.ITINERARY_EXCHANGED,
        actor=actor,
        now=now,
        replaced=list(replaced),
        added=list(added),
        amount=str(amount),
    )


def journey_cancelled(
    order: Order,
    *,
    actor: str,
    now: datetime,
    journey: str,
    value: Decimal,
    penalty: Decimal,
    refund: Decimal,
    credit: Decimal,
) -> None:
    """One journey cancelled (CancelJourney): what it was worth, what the airline kept,
    and what went back as a refund or as credit."""
    _record(
        order,
        OrderEventKind.JOURNEY_CANCELLED,
        actor=actor,
        now=now,
        journey=journey,
        value=str(value),
        penalty=str(penalty),
        refund=str(refund),
        credit=str(credit),
    )


def order_cancelled(order: Order, *, actor: str, now: datetime) -> None:
    """A booking left with no journey: CANCELLED."""
    _record(order, OrderEventKind.ORDER_CANCELLED, actor=actor, now=now)


def passenger_updated(
    order: Order, *, actor: str, now: datetime, passenger: str, fields: Sequence[str], fee: Decimal
) -> None:
    """A passenger's details changed (UpdatePassenger): which fields (never their values,
    which are personal data), and the name-change fee when there was one."""
    _record(
        order,
        OrderEventKind.PASSENGER_UPDATED,
        actor=actor,
        now=now,
        passenger=passenger,
        fields=list(fields),
        fee=str(fee),
    )


def contact_updated(order: Order, *, actor: str, now: datetime) -> None:
    """The booking's primary contact replaced (UpdateContact)."""
    _record(order, OrderEventKind.CONTACT_UPDATED, actor=actor, now=now)


def airline_changes_detected(
    changes: Sequence[tuple[Order, AirlineChange]], *, now: datetime
) -> None:
    """Schedule changes changed flights of these orders (orders.servicing.airline_changes): each
    one's change record, the journeys it covers and why, recorded for all of them at
    once. Sellers get each as `order.airline_initiated_change_detected`
    (webhooks.outbox)."""
    kind = OrderEventKind.AIRLINE_CHANGE_DETECTED
    rows = [
        OrderEvent(
            order=order,
            at=now,
            actor="schedule",
            kind=kind,
            detail={
                "change": change.ref,
                "journeys": list(change.journey_refs),
                "reasons": list(change.reasons),
            },
        )
        for order, change in changes
    ]
    if not rows:
        return
    rows_insert(rows)
    for event in rows:
        _saved(event)
    order_events_recorded.send(
        sender=OrderEvent, orders=[order for order, _ in changes], kind=kind, now=now
    )


def airline_change_resolved(
    order: Order, *, actor: str, now: datetime, change: AirlineChange, kind: str
) -> None:
    """The seller answered an airline change: accepted it, cancelled the order for it,
    or exchanged its journeys (`kind` says which; the money moved has its own events)."""
    _record(order, kind, actor=actor, now=now, change=change.ref)


def _record(order: Order, kind: str, *, actor: str, now: datetime, **detail: Any) -> None:
    _written(_event(order, kind, actor=actor, now=now, **detail))


def _written(event: OrderEvent) -> None:
    """`event` written and announced. One plain INSERT (orders/core/rows.py), not save(),
    which cost a booking more than the rest of its rows together; what announcing it will
    read (announcement_reads) goes in the same round trip."""
    rows_insert_together([event], reads=announcement_reads(event.order))
    event_announced(event)


def _event(order: Order, kind: str, *, actor: str, now: datetime, **detail: Any) -> OrderEvent:
    return row_new(OrderEvent, order=order, at=now, actor=actor[:80], kind=kind, detail=detail)


def event_announced(event: OrderEvent) -> None:
    """In the transaction that wrote `event`: the signal save() would have sent, so
    whoever listens (the booking counters of orders/reading/metrics.py) still hears of
    it, and order_event_recorded (the webhook outbox)."""
    _saved(event)
    order_event_recorded.send(sender=OrderEvent, order=event.order, kind=event.kind, now=event.at)


def _saved(event: OrderEvent) -> None:
    post_save.send(
        sender=OrderEvent,
        instance=event,
        created=True,
        update_fields=None,
        raw=False,
        using=event._state.db,
    )
