"""How a new booking is paid (SPEC.md §2.5.1; DESIGN.md §8): on hold, by airline credit, or
by card under a payment intent (reserve, charge with no row locked, confirm in a second
transaction); a refused card gives the reservation back (order_abandon).
"""

from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal
from functools import cache

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.models import F

from airline.api import clock
from airline.api.errors import ApiError, Err
from airline.api.idempotency import idempotency_settling
from airline.sql import commit_without_flush, statements_answered
from orders.booking.ancillaries import (
    emds_number,
)
from orders.booking.holds import hold_time_limit, seats_release
from orders.core import events
from orders.core.rows import rows_insert, rows_statement, rows_written
from orders.models import (
    AirlineCredit,
    Coupon,
    Order,
    OrderEvent,
    OrderStatus,
    Passenger,
    Payment,
    PaymentIntent,
    Ticket,
)
from orders.money.credits import credit_payment, credit_redeem
from orders.money.intents import card_charged, intent_attach, intent_new, intent_open
from orders.money.payments import Card, Charge, card_check, credit_card_check
from orders.money.tickets import (
    payment_row,
    tickets_issue,
    tickets_statement,
    tickets_written,
)
from orders.reading.selectors import OrderParts, OrderScope
from orders.requests.inputs import (
    CardPayment,
    CreditPayment,
    Hold,
    OtherPayment,
    PaymentData,
)
from sellers.authentication import Principal


@dataclass(frozen=True)
class Paying:
    """How a booking is paid, checked: on hold until `time_limit`, by `card`, by the
    airline credit `credit_code` (and `card` for what it does not cover)."""

    time_limit: datetime | None = None
    card: Card | None = None
    credit_code: str = ""


def check_payment(payment: PaymentData, *, now: datetime, first_departure: datetime) -> Paying:
    """The request's payment as a Paying, or ERR-4001 (a hold too close to departure),
    ERR-6000 (a type we do not take), ERR-6001/1005 (a bad card)."""
    match payment:
        case Hold():
            return Paying(time_limit=hold_time_limit(now=now, first_departure=first_departure))
        case CardPayment():
            return Paying(card=card_check(payment, now=now))
        case CreditPayment(credit_code=code, card=card):
            return Paying(
                credit_code=code,
                card=None if card is None else credit_card_check(card, now=now),
            )
        case OtherPayment(type=kind):
            raise ApiError(
                Err.PAYMENT_METHOD,
                f"Payment type {kind} is not supported; use Hold, CreditCard or AirlineCredit",
                path="payment.type",
            )
    raise TypeError(f"not a payment: {payment!r}")


def card_intent_first(
    order: Order, *, principal: Principal, paying: Paying, offer_id: str, now: datetime
) -> PaymentIntent | None:
    """The payment intent of a booking paid by card alone, built before the order's rows
    so that it is written with them (one round trip less): its whole total is due. None
    for a hold, and when an airline credit pays first: what is left to charge is known
    only once the credit is spent (payment_start then writes the intent)."""
    if paying.time_limit or paying.credit_code or paying.card is None:
        return None
    return _booking_intent(
        order,
        principal=principal,
        card=paying.card,
        offer_id=offer_id,
        now=now,
        amount=order.total,
    )


def _booking_intent(
    order: Order,
    *,
    principal: Principal,
    card: Card,
    offer_id: str,
    now: datetime,
    amount: Decimal,
) -> PaymentIntent:
    """The booking's payment intent for `amount` (what the card is to pay), unwritten."""
    return intent_new(
        seller=principal.seller,
        purpose=PaymentIntent.Purpose.CREATE,
        amount=amount,
        card=card,
        now=now,
        order=order,
        offer_id=offer_id,
    )


def payment_start(
    parts: OrderParts,
    *,
    principal: Principal,
    paying: Paying,
    offer_id: str,
    actor: str,
    now: datetime,
    intent: PaymentIntent | None = None,
) -> OrderParts:
    """Inside the booking's transaction, an order not on hold: what its airline credit
    covers spent (CONFIRMED and ticketed when that is all of it); the rest, by card,
    left PENDING with the payment intent the card will be charged under: `intent`, when
    card_intent_first built it and it was written with the order's rows."""
    if intent is not None:
        idempotency_settling()  # what intent_open does when it writes one
        return replace(parts, intent=intent)
    order = parts.order
    due = order.total
    if paying.credit_code:
        parts = _pay_by_credit(
            parts, code=paying.credit_code, scope=OrderScope.of(principal), actor=actor, now=now
        )
        due = order.total - order.paid
        if due > 0 and paying.card is None:
            # Rolls back the whole booking, the credit's UPDATE with it.
            raise ApiError(
                Err.PAYMENT_REJECTED,
                f"The airline credit covers {order.paid} of the {order.total} USD due; send "
                "`card` with it to pay the rest",
                path="payment.card",
            )
        if due <= 0:
            return _confirm_by_credit(parts, actor=actor, now=now)
    assert paying.card is not None
    return replace(
        parts,
        intent=intent_open(
            _booking_intent(
                order, principal=principal, card=paying.card, offer_id=offer_id, now=now, amount=due
            )
        ),
    )


def _pay_by_credit(
    parts: OrderParts, *, code: str, scope: OrderScope, actor: str, now: datetime
) -> OrderParts:
    """Inside the booking's transaction: spend what the airline credit `code` in `scope`
    holds, up to the order's total, as the order's first payment (ERR-6002 for a code
    that cannot be used). Its conditional UPDATE (orders/money/credits.py) is what stops two
    bookings racing for one credit from spending more than it holds."""
    order = parts.order
    credit = credit_redeem(code=code, scope=scope, amount=order.total, now=now)
    Order.objects.filter(pk=order.pk).update(paid=credit.spent)
    order.paid = credit.spent
    return replace(parts, payments=[credit_payment(order, credit, actor=actor, now=now)])


def _confirm_by_credit(parts: OrderParts, *, actor: str, now: datetime) -> OrderParts:
    """Inside the booking's transaction, an order its airline credit paid in full:
    CONFIRMED, e-tickets and EMDs issued, as a card payment would have left it."""
    order = parts.order
    Order.objects.filter(pk=order.pk).update(status=OrderStatus.CONFIRMED)
    order.status = OrderStatus.CONFIRMED
    tickets, coupons = tickets_issue(
        order,
        now=now,
        passengers=parts.passengers,
        segments=parts.segments_in_travel_order(),
    )
    events.order_paid(
        order,
        actor=actor,
        now=now,
        amount=order.paid,
        paid_with=[payment.method for payment in parts.payments],
    )
    return _ticketed(parts, tickets=tickets, coupons=coupons)


def pay_reserved(parts: OrderParts, *, card: Card, actor: str, now: datetime) -> OrderParts:
    """Charge the card for an order reserved PENDING with its intent, then confirm it.
    A card refused gives the seats (and any airline credit spent) back and leaves no
    order; a confirmation that fails refunds the charge first. Whatever a dying worker
    leaves, the reconciler settles."""
    try:
        with card_charged(parts.intent, card, why="the booking could not be confirmed") as charge:
            return order_confirm_paid(
                parts, intent=parts.intent, charge=charge, actor=actor, now=now
            )
    except BaseException:
        order_abandon(parts.order)
        raise


@transaction.atomic
def order_confirm_paid(
    parts: OrderParts, *, intent: PaymentIntent, charge: Charge, actor: str, now: datetime
) -> OrderParts:
    """The reserved order, charged: CONFIRMED and paid, its payment row (the intent
    attached to it), e-tickets, EMDs for its paid services, and the event. Called by
    create order right after the charge, and by the reconciler for an order whose worker
    died after charging. `parts` are the order's, as written or as read back."""
    # Only with DB_COMMIT_WITHOUT_FLUSH=1 (off by default): this commit may then return
    # before it is on disk. A crash can lose it, never the money: the intent (committed
    # and flushed with the reservation) is still PENDING and the gateway still holds the
    # charge, so the reconciler confirms the order again (docs/operators/production.md "Commits
    # without a flush").
    commit_without_flush()
    order = parts.order
    payment = payment_row(order, charge=charge, intent=intent, now=now)
    payments = [*parts.payments, payment]
    event = events.paid_event(
        order, actor=actor, now=now, amount=charge.amount, paid_with=[p.method for p in payments]
    )
    written = _confirm_write(
        parts, payment=payment, intent=intent, charge=charge, event=event, now=now
    )
    if written is None:
        raise ApiError(Err.INTERNAL, "The booking was settled meanwhile; retrieve it")
    attached, tickets, coupons = written
    order.status, order.paid, order.updated_at = (
        OrderStatus.CONFIRMED,
        order.paid + charge.amount,
        now,
    )
    order.version += 1
    intent_attach(intent, charge=charge, payment=payment, attached=attached)
    events.event_announced(event)
    return _ticketed(replace(parts, payments=payments), tickets=tickets, coupons=coupons)


def _confirm_write(
    parts: OrderParts,
    *,
    payment: Payment,
    intent: PaymentIntent,
    charge: Charge,
    event: OrderEvent,
    now: datetime,
) -> tuple[bool | None, list[Ticket], list[Coupon]] | None:
    """The reserved order CONFIRMED and paid by `charge` (`paid` may already hold the
    airline credit the reservation spent: the card pays the rest, DESIGN.md §11 "Airline
    credit"), its payment row, e-tickets and the event of the payment written: (whether
    the intent was moved to ATTACHED, the tickets, their coupons), or None when the order
    was no longer PENDING (the transaction must then be rolled back).

    On PostgreSQL the order's update, the payment row and the intent's ATTACHED update
    (intent_attach) are one statement (_confirm_statement), sent in one pipeline with
    the tickets' statement and the event's INSERT: the three come back in one round trip.
    Whether the first found the intent still PENDING is the first answer; elsewhere None,
    and intent_attach makes that update."""
    order = parts.order
    segments = parts.segments_in_travel_order()
    if connections[DEFAULT_DB_ALIAS].vendor != "postgresql":
        confirmed = Order.objects.filter(pk=order.pk, status=OrderStatus.PENDING).update(
            status=OrderStatus.CONFIRMED,
            paid=F("paid") + charge.amount,
            updated_at=now,
            version=F("version") + 1,
        )
        if not confirmed:
            return None
        rows_insert([payment])
        rows_insert([event])
        return None, *tickets_issue(order, now=now, passengers=parts.passengers, segments=segments)
    statements = [
        (_confirm_statement(), _confirm_params(order, payment, intent, charge, now)),
        tickets_statement(order, now=now, passengers=parts.passengers, segments=segments),
    ]
    if settings.DB_DIRECT_INSERT:  # else the event's INSERT is the ORM's, sent after
        statements.append(rows_statement([event]))
    confirmed, ticketed, *recorded = statements_answered(statements)
    if not confirmed:
        return None
    tickets, coupons = tickets_written(
        order, ticketed, now=now, passengers=parts.passengers, segments=segments
    )
    if recorded:
        rows_written([event], recorded[0])
    else:
        rows_insert([event])
    payment.pk, payment.refunded, payment.dispute, attached = confirmed[0]
    payment._state.adding = False
    payment._state.db = DEFAULT_DB_ALIAS
    return attached, tickets, coupons


# The payment row's columns a card payment sets (payment_row); the others (refunded,
# credit, dispute) take their database defaults.
_PAYMENT_COLUMNS = (
    "ref",
    "created_at",
    "amount",
    "currency",
    "status",
    "method",
    "card_brand",
    "card_last4",
    "card_expiry",
    "gateway_reference",
)


def _confirm_params(
    order: Order, payment: Payment, intent: PaymentIntent, charge: Charge, now: datetime
) -> list:
    return [
        OrderStatus.CONFIRMED,
        charge.amount,
        now,
        order.pk,
        OrderStatus.PENDING,
        *(getattr(payment, column) for column in _PAYMENT_COLUMNS),
        PaymentIntent.State.ATTACHED,
        charge.reference,
        clock.now(),
        intent.pk,
        PaymentIntent.State.PENDING,
    ]


@cache
def _confirm_statement() -> str:
    """The order's conditional UPDATE to CONFIRMED, the INSERT of its payment row and the
    intent's conditional UPDATE to ATTACHED naming that row, as one statement of
    data-modifying CTEs, each step only when the one before it wrote its row. Answers
    one row (the payment's id, refunded and dispute, and whether the intent was still
    PENDING) when the order was, none when it was not."""
    order, payment, intent = (m._meta.db_table for m in (Order, Payment, PaymentIntent))
    columns = ", ".join(f'"{c}"' for c in ("order_id", *_PAYMENT_COLUMNS))
    values = ", ".join(["%s"] * len(_PAYMENT_COLUMNS))
    return (
        f'WITH confirmed AS (UPDATE "{order}" SET "status" = %s, '  # noqa: S608 (names from the models)
        '"paid" = "paid" + %s::numeric, "updated_at" = %s::timestamptz, '
        '"version" = "version" + 1 WHERE "id" = %s AND "status" = %s RETURNING "id"), '
        f'payment AS (INSERT INTO "{payment}" ({columns}) SELECT confirmed."id", {values} '
        'FROM confirmed RETURNING "id", "refunded", "dispute"), '
        f'attached AS (UPDATE "{intent}" SET "state" = %s, "gateway_reference" = %s, '
        '"payment_id" = payment."id", "updated_at" = %s::timestamptz FROM payment '
        f'WHERE "{intent}"."id" = %s AND "{intent}"."state" = %s RETURNING 1) '
        'SELECT payment."id", payment."refunded", payment."dispute", '
        "EXISTS (SELECT FROM attached) FROM payment"
    )


def _ticketed(parts: OrderParts, *, tickets: list[Ticket], coupons: list[Coupon]) -> OrderParts:
    """Inside the transaction that confirms a paid order, its e-tickets written
    (`tickets`, `coupons`): its paid services' EMDs numbered, and its parts with them."""
    emds_number(parts.services)
    return replace(
        parts,
        tickets=tickets,
        coupons={t.pk: [c for c in coupons if c.ticket_id == t.pk] for t in tickets},
    )


def order_abandon(order: Order) -> bool:
    """Undo a reservation that was never paid: its seats back, the order gone (its
    client was told nothing was booked; the intent keeps the record of the attempt).
    False when it is no longer PENDING: it was paid, or abandoned already."""
    with transaction.atomic():
        # The row lock picks one winner between a failing request and the reconciler.
        pending = Order.objects.select_for_update().filter(pk=order.pk, status=OrderStatus.PENDING)
        if not pending.exists():
            return False
        seats_release(order)
        credits_restore(order)
        # An adult's link to the infant on its lap protects the infant's row: let go of
        # it first, or the order could not be deleted with its passengers.
        Passenger.objects.filter(order=order, infant__isnull=False).update(infant=None)
        pending.delete()
    return True


def credits_restore(order: Order) -> None:
    """Inside the abandoning transaction: give back to their credits what the reserved
    order spent of them, before its payment rows go with it. Each credit gets exactly
    what it gave, so `remaining` never passes `amount`."""
    spent = Payment.objects.filter(order=order, method=Payment.Method.CREDIT).values_list(
        "credit_id", "amount"
    )
    for credit_id, amount in spent:
        AirlineCredit.objects.filter(pk=credit_id).update(remaining=F("remaining") + amount)
