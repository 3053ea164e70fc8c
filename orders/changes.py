"""Change order (SPEC.md §3, §4.10; DESIGN.md §8): the changes a booking can take now —
AcceptOffer (seats and services), ConfirmHold with a payment, CancelUnpaidOrder.

One request is one transaction with the order row locked, so two changes of one order
queue. Money follows SPEC.md §3: a change that raises the balance of a paid order needs a
card payment for the difference; on a hold it commits unpaid and the balance due grows.
A card is charged before the transaction and refunded if the transaction fails.
"""

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import F

from airline.api import clock
from airline.api.errors import ApiError, Err
from orders import ids
from orders.ancillaries import Accepted, accept_entries_check, services_add
from orders.models import Order, OrderStatus, Service, TicketSerial
from orders.payments import Card, card_check, payment_gateway
from orders.selectors import OrderScope
from orders.services import (
    actor_of,
    card_charge,
    event_record,
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

    accepted = accept_entries_check(
        order=order,
        entries=[c for c in changes if c["type"] == "AcceptOffer"],
        seller_id=str(principal.seller.pk),
        now=now,
    )
    added = sum((_price_of(a) for a in accepted), Decimal("0.00"))
    confirm = "ConfirmHold" in kinds
    if order.status not in (OrderStatus.ONHOLD, OrderStatus.CONFIRMED) or (
        confirm and order.status != OrderStatus.ONHOLD
    ):
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            f"The order is {order.status}; it cannot take this change",
            path="changes",
        )
    due = order.balance_due + added if confirm or order.status == OrderStatus.CONFIRMED else 0
    card = _payment_for(data.get("payment"), due=due, now=now)
    charge = card_charge(card, due) if card else None
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
            services = services_add(order=locked, parts=order, accepted=accepted, now=now)
            update: dict[str, Any] = {
                "total": F("total") + added,
                "updated_at": now,
                "version": F("version") + 1,
            }
            if charge is not None:
                update["paid"] = F("paid") + charge.amount
            if confirm:
                update["status"] = OrderStatus.CONFIRMED
            Order.objects.filter(pk=order.pk).update(**update)
            locked.refresh_from_db()
            actor = actor_of(principal)
            if services:
                event_record(
                    locked,
                    now=now,
                    actor=actor,
                    kind="services_added",
                    services=[f"{s.ref} {s.code}" for s in services],
                    amount=str(added),
                )
            if charge is not None:
                payment_record(locked, charge=charge, card=card, now=now)
                event_record(locked, now=now, actor=actor, kind="paid", amount=str(charge.amount))
            if confirm:
                tickets_issue(locked, now=now)
                event_record(locked, now=now, actor=actor, kind="hold_confirmed")
            if locked.status == OrderStatus.CONFIRMED:
                emds_issue(locked)
    except BaseException:
        if charge is not None:
            payment_gateway().refund(charge=charge, amount=charge.amount)
        raise
    return order_current(scope=scope, ref=order.order_id, parts=())


def emds_issue(order: Order) -> None:
    """EMD numbers for the order's paid services that have none yet (DESIGN.md §8)."""
    unnumbered = [
        s
        for s in Service.objects.filter(
            order=order, status=Service.Status.ACTIVE, emd_number__isnull=True
        )
        if s.total > 0
    ]
    if not unnumbered:
        return
    serials = TicketSerial.objects.bulk_create([TicketSerial() for _ in unnumbered])
    for service, serial in zip(unnumbered, serials, strict=True):
        service.emd_number = ids.ticket_number(serial.pk)
    Service.objects.bulk_update(unnumbered, ["emd_number"])


def _price_of(accepted: Accepted) -> Decimal:
    return sum(
        (sum(Decimal(v) for v in accepted.item["prices"][ref]) for ref in accepted.passenger_refs),
        Decimal("0.00"),
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
