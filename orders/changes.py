"""Change order (SPEC.md §3, §4.10; DESIGN.md §8): the changes a booking can take now —
AcceptOffer (seats and services), ConfirmHold with a payment, CancelUnpaidOrder.

One request is one transaction with the order row locked, so two changes of one order
queue. Money follows SPEC.md §3: a change that raises the balance of a paid order needs a
card payment for the difference; on a hold it commits unpaid and the balance due grows.
A card is charged under a payment intent committed before the gateway is called
(orders.intents), before the transaction, and refunded if the transaction fails.
"""

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import F

from airline.api import clock
from airline.api.errors import ApiError, Err
from airline.fares.money import ZERO
from airline.network.inventory import legs_lock
from offers.ancillaries import Traveller
from orders import events
from orders.ancillaries import (
    IN_CHANGE,
    Sale,
    SaleLine,
    emds_number,
    held_services,
    sale_check,
    sale_lines_check,
    services_write,
)
from orders.intents import intent_attach, intent_charge, intent_open, intent_refund
from orders.models import Order, OrderStatus, PaymentIntent, Service
from orders.payments import Card, card_check
from orders.selectors import OrderScope
from orders.services import (
    actor_of,
    order_cancel_hold,
    order_current,
    order_for_change,
    payment_record,
    tickets_issue,
)
from sellers.authentication import Principal

# Change types of SPEC.md §4.10 that later work adds (reshop, quote and passenger edits).
NOT_YET = frozenset({"CancelJourney", "UpdatePassenger", "UpdateContact", "AcceptReshopOffer"})


def order_change(*, principal: Principal, ref: str, data: Mapping[str, Any]) -> Order:
    """Apply a change-order request to the seller's order; the order row as it stands
    after (render it with presenters.order_view_cached)."""
    now = clock.now()
    scope = OrderScope.of(principal)
    order = order_for_change(scope=scope, ref=ref)
    changes: Sequence[Mapping[str, Any]] = data.get("changes") or []
    kinds = [c["type"] for c in changes]
    for kind in kinds:
        if kind in NOT_YET:
            raise ApiError(
                Err.CHANGE_NOT_APPLIED,
                f"{kind} is not available on this service yet",
                path="changes.type",
            )
    if data.get("passengers"):
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            "Passenger changes are not available on this service yet",
            path="passengers",
        )
    if "CancelUnpaidOrder" in kinds:
        if len(kinds) > 1 or data.get("payment"):
            raise ApiError(
                Err.CHANGE_NOT_APPLIED,
                "CancelUnpaidOrder cannot be combined with other changes or a payment",
                path="changes",
            )
        if not order_cancel_hold(order=order, actor=actor_of(principal)):
            raise ApiError(
                Err.CHANGE_NOT_APPLIED, "Only an unpaid hold can be cancelled", path="changes"
            )
        return order_current(scope=scope, ref=order.order_id, parts=())

    sale = _sale_of(
        order,
        sale_lines_check(
            entries=[c for c in changes if c["type"] == "AcceptOffer"],
            context={"orderId": order.order_id},
            seller_id=str(principal.seller.pk),
            now=now,
            refuse=IN_CHANGE,
        ),
    )
    confirm = "ConfirmHold" in kinds
    if order.status not in (OrderStatus.ONHOLD, OrderStatus.CONFIRMED) or (
        confirm and order.status != OrderStatus.ONHOLD
    ):
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            f"The order is {order.status}; it cannot take this change",
            path="changes",
        )
    added = sale.amount
    # SPEC.md §3: a hold takes the change unpaid (its balance grows); a paid order, or a
    # hold being confirmed, pays what its value now exceeds what was paid, never less
    # than nothing (a cheaper seat gives nothing back: DESIGN.md §11 "Seat change").
    due = (
        max(order.total + added - order.paid, ZERO)
        if confirm or order.status == OrderStatus.CONFIRMED
        else ZERO
    )
    card = _payment_for(data.get("payment"), due=due, now=now)
    intent = charge = None
    if card is not None:
        intent = intent_open(
            seller=principal.seller,
            purpose=PaymentIntent.Purpose.CHANGE,
            amount=due,
            card=card,
            now=now,
            order=order,
        )
        charge = intent_charge(intent, card)
    try:
        with transaction.atomic():
            # Changes of one order queue here; the balance below is read under the lock.
            locked = Order.objects.select_for_update().get(pk=order.pk)
            if locked.version != order.version:
                raise ApiError(
                    Err.CHANGE_NOT_APPLIED,
                    "The order changed while this request was made; retrieve it and retry",
                    path="changes",
                )
            _check_still_flying(order, sale)
            services = services_write(
                sale,
                order=locked,
                passengers={p.ref: p for p in order.passengers.all()},
                journeys={j.ref: j for j in order.journeys.all()},
                segments={s.ref: s for j in order.journeys.all() for s in j.segments.all()},
                now=now,
                refuse=IN_CHANGE,
            )
            update: dict[str, Any] = {
                "total": F("total") + added,
                "updated_at": now,
                "version": F("version") + 1,
            }
            if sale.replaced and order.paid == 0:
                # A seat given up before anyone paid for it is voided; on a paid order
                # its value went into the new seat.
                update["voided"] = F("voided") + sum((r.total for r in sale.replaced), ZERO)
            if charge is not None:
                update["paid"] = F("paid") + charge.amount
            if confirm:
                update["status"] = OrderStatus.CONFIRMED
            Order.objects.filter(pk=order.pk).update(**update)
            locked.refresh_from_db()
            actor = actor_of(principal)
            if services:
                events.services_added(
                    locked,
                    actor=actor,
                    now=now,
                    services=services,
                    replaced=sale.replaced,
                    amount=added,
                )
            if charge is not None:
                payment = payment_record(locked, charge=charge, intent=intent, now=now)
                intent_attach(intent, charge=charge, payment=payment)
                events.order_paid(locked, actor=actor, now=now, amount=charge.amount)
            if confirm:
                tickets_issue(locked, now=now)
                events.hold_confirmed(locked, actor=actor, now=now)
            if locked.status == OrderStatus.CONFIRMED:
                emds_number(
                    list(Service.objects.filter(order=locked, status=Service.Status.ACTIVE))
                )
    except BaseException:
        if charge is not None:
            intent_refund(intent, charge, why="the change could not be applied")
        raise
    return order_current(scope=scope, ref=order.order_id, parts=())


def _check_still_flying(order: Order, sale: Sale) -> None:
    """Under the legs' locks, in the change's transaction: no seat or service is sold on a
    flight the schedule has cancelled or dropped since the seat map or service list was
    made (the worker's own schedule may be a second old)."""
    touched = {line.journey_ref for line in sale.lines} | {line.segment_ref for line in sale.lines}
    leg_ids = {
        leg.flight_leg_id
        for journey in order.journeys.all()
        for segment in journey.segments.all()
        if journey.ref in touched or segment.ref in touched
        for leg in segment.legs.all()
    }
    locked = legs_lock(leg_ids)
    if any(leg_id not in locked or locked[leg_id].is_cancelled for leg_id in leg_ids):
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            "A flight of this change no longer operates; retrieve the order",
            path="changes",
        )


def _sale_of(order: Order, lines: Sequence[SaleLine]) -> Sale:
    """The lines checked against what the order's passengers hold now (order with
    SLIM_PREFETCH: passengers, journeys, segments)."""
    if not lines:
        return Sale()
    passengers = list(order.passengers.all())
    journeys = list(order.journeys.all())
    held = held_services(
        Service.objects.filter(order=order, status=Service.Status.ACTIVE),
        pax_refs={p.pk: p.ref for p in passengers},
        journey_refs={j.pk: j.ref for j in journeys},
        segment_refs={s.pk: s.ref for j in journeys for s in j.segments.all()},
    )
    return sale_check(
        lines=lines,
        held=held,
        travellers={p.ref: Traveller(p.ref, p.ptc, p.infant_id is not None) for p in passengers},
        refuse=IN_CHANGE,
    )


def _payment_for(payment: Mapping[str, Any] | None, *, due: Decimal, now) -> Card | None:
    """The card paying `due`, or None when nothing is due; ERR-4002 when a payment is
    missing or there is nothing to pay, ERR-6000/6001/1005 for a bad one."""
    if due <= 0:
        if payment:
            raise ApiError(
                Err.CHANGE_NOT_APPLIED, "Nothing is due; send no payment", path="payment"
            )
        return None
    if not payment:
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            f"{due} USD is due; send a card payment with this change",
            path="payment",
        )
    if payment["type"] != "CreditCard":
        raise ApiError(
            Err.PAYMENT_METHOD,
            f"Payment type {payment['type']} is not supported here; use CreditCard",
            path="payment.type",
        )
    return card_check(payment, now=now)
