"""Airline credit (DESIGN.md §7, §11 "Airline credit"): value a cancellation or a cheaper
exchange gives back as credit instead of money, and later orders of the same seller
paying with it. A key with an agency code spends only credits its agency's orders gave
(DESIGN.md §11 "Agency scope"): the credit is derived from an order the key could not
otherwise read.

A credit's `remaining` is spent by one conditional UPDATE (`remaining >= amount`), so two
orders paying with one code at once can never spend more than it holds.
"""

import secrets
from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db.models import F, QuerySet

from airline.api.errors import ApiError, Err
from orders.core import events, ids
from orders.models import AirlineCredit, Order, Payment
from orders.reading.selectors import OrderScope

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


def _usable(*, code: str, scope: OrderScope, now: datetime) -> QuerySet[AirlineCredit]:
    """The credit `code`, if it holds something, has not expired and was issued from an
    order in `scope`: the acting seller's, and the key's agency's when it has one."""
    credits = AirlineCredit.objects.filter(
        code=code.strip().upper(), seller_id=scope.seller_id, expires_at__gt=now, remaining__gt=0
    )
    if scope.agency_code:
        credits = credits.filter(source_order__agency_code=scope.agency_code)
    return credits


def credit_available(*, code: str, scope: OrderScope, now: datetime) -> Decimal:
    """What the credit `code` in `scope` holds now, read without a lock (the paying
    transaction's credit_redeem decides); ERR-6002 for a code that cannot be used, worded
    as credit_redeem words it."""
    credit = _usable(code=code, scope=scope, now=now).first()
    if credit is None:
        raise ApiError(
            Err.PAYMENT_REJECTED,
            "The airline credit cannot be used: unknown, spent or expired",
            path="payment.creditCode",
        )
    return credit.remaining


def credit_redeem(
    *,
    code: str,
    scope: OrderScope,
    amount: Decimal,
    now: datetime,
    path: str = "payment.creditCode",
) -> AirlineCredit:
    """Inside the paying transaction: spend up to `amount` of the credit `code` in `scope`
    (all of it when it holds less); returns the credit with `spent` set. ERR-6002 for a
    code that is unknown, another seller's or agency's, expired or empty (never saying
    which, so a code cannot be probed)."""
    credit = _usable(code=code, scope=scope, now=now).select_for_update().first()
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
