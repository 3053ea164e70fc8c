"""Airline credit (DESIGN.md §7, §11 "Airline credit"): value a cancellation or a cheaper
exchange gives back as credit instead of money, and later orders of the same seller
paying with it.

A credit's `remaining` is spent by one conditional UPDATE (`remaining >= amount`), so two
orders paying with one code at once can never spend more than it holds.
"""

import secrets
from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db.models import F

from airline.api.errors import ApiError, Err
from orders import events, ids
from orders.models import AirlineCredit, Order, Payment

# Codes read aloud over a phone: no 0/O or 1/I.
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def credit_issue(order: Order, amount: Decimal, *, actor: str, now: datetime) -> AirlineCredit:
    """Inside the change's transaction: `amount` of the order's value becomes a credit
    of its seller, valid CREDIT_VALIDITY_DAYS; the order counts it as `credited`."""
    credit = AirlineCredit.objects.create(
        code="MX" + "".join(secrets.choice(CODE_ALPHABET) for _ in range(10)),
        seller_id=order.seller_id,
        source_order=order,
        currency=order.currency,
        amount=amount,
        remaining=amount,
        created_at=now,
        expires_at=now + timedelta(days=settings.CREDIT_VALIDITY_DAYS),
    )
    Order.objects.filter(pk=order.pk).update(credited=F("credited") + amount)
    events.credit_issued(order, actor=actor, now=now, credit=credit)
    return credit


def credit_available(*, code: str, seller_id, now: datetime) -> Decimal:
    """What the seller's credit `code` holds now, read without a lock (the paying
    transaction's credit_redeem decides); ERR-6002 for a code that cannot be used, worded
    as credit_redeem words it."""
    credit = AirlineCredit.objects.filter(
        code=code.strip().upper(), seller_id=seller_id, expires_at__gt=now, remaining__gt=0
    ).first()
    if credit is None:
        raise ApiError(
            Err.PAYMENT_REJECTED,
            "The airline credit cannot be used: unknown, spent or expired",
            path="payment.creditCode",
        )
    return credit.remaining


def credit_redeem(
    *, code: str, seller_id: int, amount: Decimal, now: datetime, path: str = "payment.creditCode"
) -> AirlineCredit:
    """Inside the paying transaction: spend up to `amount` of the seller's credit `code`
    (all of it when it holds less); returns the credit with `spent` set. ERR-6002 for a
    code that is unknown, another seller's, expired or empty (never saying which, so a
    code cannot be probed)."""
    credit = (
        AirlineCredit.objects.select_for_update()
        .filter(code=code.strip().upper(), seller_id=seller_id, expires_at__gt=now, remaining__gt=0)
        .first()
    )
    if credit is None:
        raise ApiError(
            Err.PAYMENT_REJECTED,
            "The airline credit cannot be used: unknown, spent or expired",
            path=path,
        )
    spent = min(amount, credit.remaining)
    # The row is locked, and the condition holds the invariant whatever the lock.
    taken = AirlineCredit.objects.filter(pk=credit.pk, remaining__gte=spent).update(
        remaining=F("remaining") - spent
    )
    if not taken:
        raise ApiError(Err.PAYMENT_REJECTED, "The airline credit was spent meanwhile", path=path)
    credit.remaining -= spent
    credit.spent = spent
    return credit


def credit_payment(order: Order, credit: AirlineCredit, *, actor: str, now: datetime) -> Payment:
    """The order's payment row for what `credit_redeem` spent of a credit."""
    payment = Payment.objects.create(
        order=order,
        ref=ids.new_ref("PAY"),
        created_at=now,
        amount=credit.spent,
        currency=credit.currency,
        status=Payment.Status.SUCCESSFUL,
        method=Payment.Method.CREDIT,
        credit=credit,
    )
    events.credit_redeemed(order, actor=actor, now=now, credit=credit, amount=credit.spent)
    return payment
