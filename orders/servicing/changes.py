"""Change order (SPEC.md §3, §4.10; DESIGN.md §8, §11): a table of actions, one per
change type, each a `check` (reads only: refuses a bad change before anything is
written, and says what it does to the order's value) and a `do` (writes, under the order
row's lock).

One request is one transaction: every check first, then the card charged for what is due
(under a payment intent committed before the gateway is called, refunded if the
transaction fails: orders.money.intents.card_charged), then the order row locked and every `do`
run in request order, then the order's totals and the events. Money follows SPEC.md §3:
a change that raises the value of a paid order (or confirms a hold) needs a card payment
for the difference; on a hold it commits unpaid and the balance due grows.

A change type is a row of the `ACTIONS` table (its check and do live in the module of
its kind: amend, cancel, exchange, airline_changes, or here); its check receives every
entry of its type in the request (two bags sold in one request form one ladder), its do
runs where the type first appears in the request.
"""

from collections.abc import Sequence
from contextlib import nullcontext
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F

from airline.api import clock
from airline.api.errors import ApiError, Err, Reason, order_status_reason
from airline.api.idempotency import idempotency_mark_applied
from airline.fares.money import ZERO
from airline.network.inventory import LegCheck, legs_lock
from airline.sql import lock_wait_bounded
from offers.ancillaries import Traveller
from orders.booking.ancillaries import (
    IN_CHANGE,
    Sale,
    check_sale,
    check_sale_lines,
    check_seats_still_sellable,
    emds_number,
    held_services,
    services_write,
)
from orders.booking.holds import order_cancel_hold, order_for_change
from orders.core import events
from orders.models import (
    Order,
    OrderFee,
    OrderStatus,
    PaymentIntent,
    Service,
)
from orders.money.credits import credit_available, credit_issue, credit_payment, credit_redeem
from orders.money.fees import fees_number
from orders.money.intents import card_charged, intent_attach, intent_new, intent_open
from orders.money.payments import Card, card_check, credit_card_check
from orders.money.refunds import refundable, refunds_owe, refunds_send
from orders.money.tickets import payment_record, tickets_issue
from orders.reading.selectors import OrderScope, order_get
from orders.requests.checks import check_amount_stated
from orders.requests.inputs import (
    AcceptOffer,
    CancelUnpaidOrder,
    CardPayment,
    Change,
    ConfirmHold,
    CreditPayment,
    PaymentData,
)
from orders.servicing import airline_changes, amend, cancel
from orders.servicing.answer import (
    Changed,
    as_stored,
    order_row_update,
    parts_after,
    parts_read,
    row_copy,
)
from orders.servicing.exchange.accept import check_accept_reshop_offer
from orders.servicing.plan import Action, Do, Plan, Split, give_back_split
from sellers.authentication import Principal

# What a change cut short waiting for the order row is told (LockBusy, 503 ERR-9000): a
# schedule load or a back-office edit holds the rows of the orders on the flights it
# changes while it writes them their airline changes.
ORDER_BUSY = "The order is being updated by the airline (a schedule change)"


def order_change(
    *,
    principal: Principal,
    ref: str,
    changes: Sequence[Change],
    payment: PaymentData | None = None,
) -> Changed:
    """Apply a change-order request (orders.requests.inputs: its changes in request order, and
    the payment sent with them) to the seller's order; the order as it stands after
    (render it with presenters.order_view_cached(changed.order, parts=changed.parts))."""
    scope = OrderScope.of(principal)
    order = order_for_change(scope=scope, ref=ref, parts=())
    if not changes:
        raise ApiError(Err.VALIDATION, "Send at least one change", path="changes")
    network = parts_read(order, changes)
    plan = Plan(principal=principal, order=order, now=clock.now(), network=network)
    _plan_steps(plan, changes, payment=payment)
    if payment is not None:
        check_amount_stated(payment, due=plan.due(), currency=order.currency)
    card, plan.credit_code, plan.credit_due = _payment_for(
        payment, due=plan.due(), scope=scope, now=plan.now
    )
    intent = None
    if card is not None:
        intent = _intent_claim(plan, card=card)
    charging = (
        card_charged(intent, card, why="the change could not be applied")
        if intent is not None
        else nullcontext()
    )
    with charging as charge, transaction.atomic():
        _apply(plan, charge=charge, intent=intent)
        # Commits with the change: a retry under the request's Idempotency-Key then
        # answers this change rather than make it again, even if the worker dies now.
        idempotency_mark_applied()
    refunds_send(plan.refunds)  # committed: the money owed back goes now
    parts = parts_after(plan, network) if network is not None else None
    if parts is None:
        return Changed(order_get(scope=scope, ref=order.order_id, parts=()))
    return Changed(parts.order, parts)


@transaction.atomic
def _intent_claim(plan: Plan, *, card: Card) -> PaymentIntent:
    """The change's payment intent, opened before any card is charged only by a request
    that, under the order row's lock, finds the order at the version its checks read and
    no other card payment of it under way; it bumps the version. Of parallel requests on
    one order (ConfirmHold sent twice) one charges the card; the others are refused here,
    before the gateway. "Under way": an intent PENDING without a note and younger than the
    reconciler's grace (a timed-out one has a note; a dead worker's is the reconciler's)."""
    order = plan.order
    # One UPDATE locks the row, checks its version and bumps it (undone with this
    # transaction when a payment is under way): a change committed meanwhile leaves none.
    with lock_wait_bounded(ORDER_BUSY):
        bumped = Order.objects.filter(pk=order.pk, version=order.version).update(
            version=F("version") + 1
        )
    if not bumped:
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            "The order changed while this request was made; retrieve it and retry",
            reason=Reason.ORDER_BUSY,
            path="changes",
        )
    grace = timedelta(seconds=settings.PAYMENT_INTENT_GRACE_SECONDS)
    if PaymentIntent.objects.filter(
        order=order, state=PaymentIntent.State.PENDING, note="", created_at__gt=plan.now - grace
    ).exists():
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            "Another payment for this order is under way; retrieve the order and retry",
            reason=Reason.ORDER_BUSY,
            path="payment",
        )
    order.version += 1
    return intent_open(
        intent_new(
            seller=plan.principal.seller,
            purpose=PaymentIntent.Purpose.CHANGE,
            amount=plan.due() - plan.credit_due,
            card=card,
            now=plan.now,
            order=order,
        )
    )


def _plan_steps(plan: Plan, changes: Sequence[Change], *, payment: PaymentData | None) -> None:
    by_type: dict[str, list[Change]] = {}
    for change in changes:
        by_type.setdefault(change.kind, []).append(change)
    for kind, entries in by_type.items():
        action = ACTIONS.get(kind)
        if action is None:
            raise ApiError(
                Err.CHANGE_NOT_APPLIED,
                f"{kind} is not available on this service yet",
                reason=Reason.NOT_SUPPORTED,
                path="changes.type",
            )
        if action.alone and (len(changes) > 1 or payment is not None):
            raise ApiError(
                Err.CHANGE_NOT_APPLIED,
                f"{kind} cannot be combined with other changes or a payment",
                reason=Reason.COMBINATION,
                path="changes",
            )
        if plan.order.status not in action.statuses:
            raise ApiError(
                Err.CHANGE_NOT_APPLIED,
                f"The order is {plan.order.status}; it cannot take {kind}",
                reason=order_status_reason(plan.order.status),
                path="changes",
            )
        plan.steps.append(action.check(plan, entries))


@transaction.atomic(savepoint=False)  # inside order_change's transaction: one rollback
def _apply(plan: Plan, *, charge, intent: PaymentIntent | None) -> None:
    """Under the order row's lock: every step in request order, then the order's totals,
    the payment and the events; `plan.order` then holds the order row as it stands."""
    order = plan.order
    # Changes of one order queue here (one bound over its lock, its legs', their seat maps').
    with lock_wait_bounded(ORDER_BUSY):
        locked = Order.objects.select_for_update().get(pk=order.pk)
        if locked.version != order.version:
            raise ApiError(
                Err.CHANGE_NOT_APPLIED,
                "The order changed while this request was made; retrieve it and retry",
                reason=Reason.ORDER_BUSY,
                path="changes",
            )
        _check_still_flying(plan.leg_ids, plan.leg_checks)
    for step in plan.steps:
        step(plan, locked)
    update: dict[str, Any] = {"updated_at": plan.now, "version": F("version") + 1}
    if plan.added:
        update["total"] = F("total") + plan.added
    if plan.voided:
        update["voided"] = F("voided") + plan.voided
    _settle_back(plan, locked, update)
    credit = _spend_credit(plan) if plan.credit_code else None
    collected = (credit.spent if credit else ZERO) + (charge.amount if charge else ZERO)
    if collected:
        update["paid"] = F("paid") + collected
    if plan.confirm:
        update["status"] = OrderStatus.CONFIRMED
    if plan.cancelled:
        update["status"] = OrderStatus.CANCELLED
        update["payment_time_limit"] = None
    order_row_update(locked, update)
    row_copy(locked, to=order)
    plan.charged = charge is not None
    if credit is not None:
        credit_payment(locked, credit, actor=plan.actor, now=plan.now)
    if charge is not None:
        payment = payment_record(locked, charge=charge, intent=intent, now=plan.now)
        intent_attach(intent, charge=charge, payment=payment)
        events.order_paid(locked, actor=plan.actor, now=plan.now, amount=charge.amount)
    if plan.confirm:
        tickets_issue(locked, now=plan.now)
        # A fee charged while on hold (a change fee) is documented once it is paid.
        fees_number(list(OrderFee.objects.filter(order=locked, emd_number__isnull=True)))
        events.hold_confirmed(locked, actor=plan.actor, now=plan.now)
    if locked.status == OrderStatus.CONFIRMED:
        emds_number(list(Service.objects.filter(order=locked, status=Service.Status.ACTIVE)))


def _settle_back(plan: Plan, order: Order, update: dict[str, Any]) -> None:
    """What a paid order gives back for lines it lost: first what cancellations said
    (`refund_owed`, `credit_owed`), then the rest as `plan.give_back` says. A refund goes
    to the order's cards (what they cannot take, e.g. value paid with airline credit,
    becomes credit); what is left is kept. Fees and penalties the plan keeps go to
    `retained` (DESIGN.md §7, §11)."""
    back = plan.owed_back()
    # Given back already at the provider, outside this service: not given again.
    absorbed = min(back, order.refunded_outside)
    if absorbed:
        update["refunded_outside"] = F("refunded_outside") - absorbed
    # Nothing to give back goes nowhere: the cards' room (a read of the payments) is
    # not asked.
    split = (
        give_back_split(
            back - absorbed,
            refund=plan.refund_owed,
            credit=plan.credit_owed,
            rest_to=plan.give_back,
            cards=refundable(order),
        )
        if back > absorbed
        else Split(refund=ZERO, credit=ZERO, kept=ZERO)
    )
    if split.refund:
        plan.refunds = refunds_owe(order, split.refund, now=plan.now, why="change order")
        update["paid"] = F("paid") - split.refund
        events.payment_refunded(order, actor=plan.actor, now=plan.now, amount=split.refund)
    if split.credit:
        plan.credit = credit_issue(order, split.credit, actor=plan.actor, now=plan.now)
    # What is left is kept (a cheaper seat: DESIGN.md §11 "Seat change").
    retained = plan.retained + split.kept
    if retained:
        update["retained"] = F("retained") + retained


def _check_still_flying(leg_ids: set[int], checks: Sequence[LegCheck] = ()) -> None:
    """Under the legs' locks, in the change's transaction: nothing is sold on a flight the
    schedule has cancelled or dropped since the change was worked out (the worker's own
    schedule may be a second old), and each of `checks` holds of the legs as locked."""
    if not leg_ids:
        return
    locked = legs_lock(leg_ids, bounded=True)
    if any(leg_id not in locked or locked[leg_id].is_cancelled for leg_id in leg_ids):
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            "A flight of this change no longer operates; retrieve the order",
            reason=Reason.FLIGHT_CHANGED,
            path="changes",
        )
    for check in checks:
        check(locked)


# --- CancelUnpaidOrder ---------------------------------------------------------------


def check_cancel_unpaid(plan: Plan, entries: Sequence[CancelUnpaidOrder]) -> Do:
    if plan.order.status != OrderStatus.ONHOLD or plan.order.paid:
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            "Only an unpaid hold can be cancelled",
            reason=Reason.ORDER_STATUS,
            path="changes",
        )
    return do_cancel_unpaid


def do_cancel_unpaid(plan: Plan, order: Order) -> None:
    if not order_cancel_hold(order=order, actor=plan.actor):
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            "Only an unpaid hold can be cancelled",
            reason=Reason.ORDER_STATUS,
            path="changes",
        )


# --- ConfirmHold ---------------------------------------------------------------------


def check_confirm_hold(plan: Plan, entries: Sequence[ConfirmHold]) -> Do:
    plan.confirm = True
    return do_nothing  # the order's status, tickets and event follow the steps (_apply)


def do_nothing(plan: Plan, order: Order) -> None:
    pass


# --- AcceptOffer: seats and services from the order's ancillary offers ---------------


def check_accept_offer(plan: Plan, entries: Sequence[AcceptOffer]) -> Do:
    order = plan.order
    lines = check_sale_lines(
        picks=[entry.pick for entry in entries],
        context={"orderId": order.order_id},
        owner=plan.offer_owner,
        now=plan.now,
        refuse=IN_CHANGE,
    )
    passengers = list(order.passengers.all())
    journeys = list(order.journeys.all())
    held = held_services(
        # The order's services when its view's parts are loaded (order_change), so that
        # the seats given up are the rows its answer renders.
        order.services.all()
        if "services" in getattr(order, "_prefetched_objects_cache", {})
        else Service.objects.filter(order=order, status=Service.Status.ACTIVE),
        pax_refs={p.pk: p.ref for p in passengers},
        journey_refs={j.pk: j.ref for j in journeys},
        segment_refs={s.pk: s.ref for j in journeys for s in j.segments.all()},
    )
    sale = check_sale(
        lines=lines,
        held=held,
        travellers={p.ref: Traveller(p.ref, p.ptc, p.infant_id is not None) for p in passengers},
        refuse=IN_CHANGE,
        network=plan.network,
    )
    plan.added += sale.amount
    if sale.replaced and order.paid == 0:
        # A seat given up before anyone paid for it is voided; on a paid order its value
        # went into the new seat.
        plan.voided += sum((r.total for r in sale.replaced), ZERO)
    plan.leg_ids |= _legs_of(order, sale) | {line.leg_id for line in sale.lines if line.seat}
    plan.leg_checks.append(
        lambda locked: check_seats_still_sellable(lines=sale.lines, locked=locked, refuse=IN_CHANGE)
    )

    def do_accept_offer(plan: Plan, locked: Order) -> None:
        services = services_write(
            sale,
            order=locked,
            passengers={p.ref: p for p in passengers},
            journeys={j.ref: j for j in journeys},
            segments={s.ref: s for j in journeys for s in j.segments.all()},
            now=plan.now,
            refuse=IN_CHANGE,
        )
        for given_up in sale.replaced:
            given_up.status = Service.Status.CANCELLED
        plan.services_written += [as_stored(service) for service in services]
        events.services_added(
            locked,
            actor=plan.actor,
            now=plan.now,
            services=services,
            replaced=sale.replaced,
            amount=sale.amount,
        )

    return do_accept_offer


def _legs_of(order: Order, sale: Sale) -> set[int]:
    """The flight legs a sale's seats and services are on."""
    touched = {line.journey_ref for line in sale.lines} | {line.segment_ref for line in sale.lines}
    return {
        leg.flight_leg_id
        for journey in order.journeys.all()
        for segment in journey.segments.all()
        if journey.ref in touched or segment.ref in touched
        for leg in segment.legs.all()
    }


# change type -> its Action: every change type of SPEC.md §4.10, with the module that
# checks and does it. The request's changes run in request order.
ACTIONS: dict[str, Action] = {
    "CancelUnpaidOrder": Action(check_cancel_unpaid, statuses=frozenset(OrderStatus), alone=True),
    "ConfirmHold": Action(check_confirm_hold, statuses=frozenset({OrderStatus.ONHOLD})),
    "AcceptOffer": Action(check_accept_offer),
    "UpdatePassenger": Action(amend.check_update_passenger),
    "UpdateContact": Action(amend.check_update_contact),
    "CancelJourney": Action(cancel.check_cancel_journey),
    "AcceptReshopOffer": Action(check_accept_reshop_offer),
    # Answers to a schedule change by the airline (docs/partners/airline-changes.md).
    airline_changes.ACCEPT: Action(airline_changes.check_accept_airline_change, alone=True),
    airline_changes.CANCEL: Action(airline_changes.check_cancel_for_airline_change, alone=True),
}


def _payment_for(
    payment: PaymentData | None, *, due: Decimal, scope: OrderScope, now
) -> tuple[Card | None, str, Decimal]:
    """How `due` is paid: the card charged (None when nothing goes to a card), the
    airline credit code and what of `due` it pays (DESIGN.md §11 "Airline credit": the
    credit first, a card for the rest). ERR-4002 when a payment is missing;
    ERR-6000/6001/1005 for a bad payment; ERR-6002 for a credit that cannot pay, or does
    not cover `due` with no card beside it. When nothing is due (an EvenExchange, a
    refund, a free seat) a payment sent along is checked and charged nothing: clients
    attach a card to every change they do not price themselves."""
    if due <= 0:
        if isinstance(payment, CardPayment):
            card_check(payment, now=now)
        return None, "", ZERO
    if payment is None:
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            f"{due} USD is due; send a card payment or airline credit with this change",
            reason=Reason.AMOUNT_DUE,
            path="payment",
        )
    if isinstance(payment, CardPayment):
        return card_check(payment, now=now), "", ZERO
    if isinstance(payment, CreditPayment):
        covers = min(credit_available(code=payment.credit_code, scope=scope, now=now), due)
        if covers < due and payment.card is None:
            raise ApiError(
                Err.PAYMENT_REJECTED,
                f"The airline credit covers {covers} of the {due} USD due; send a card for "
                "the rest",
                path="payment.card",
            )
        card = credit_card_check(payment.card, now=now) if covers < due else None
        return card, payment.credit_code, covers
    raise ApiError(
        Err.PAYMENT_METHOD,
        "A change is paid by card (CreditCard) or airline credit (AirlineCredit)",
        path="payment.type",
    )


def _spend_credit(plan: Plan):
    """Inside the change's transaction: spend exactly what the credit was counted on for
    (a credit spent meanwhile by another order fails the change, and the card charged
    for the rest is refunded: orders.money.intents.card_charged)."""
    credit = credit_redeem(
        code=plan.credit_code,
        scope=OrderScope.of(plan.principal),
        amount=plan.credit_due,
        now=plan.now,
    )
    if credit.spent != plan.credit_due:
        raise ApiError(
            Err.PAYMENT_REJECTED,
            "The airline credit was spent meanwhile",
            path="payment.creditCode",
        )
    return credit
