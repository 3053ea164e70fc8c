"""Card payments: the checks every card passes before a gateway sees it, the gateway
interface, and the test-mode gateway (DESIGN.md §8, §11 "Card fields", "Payments").

The full card number and security code live only in the `Card` of one request: never
stored, never logged, never in an error message. What is kept is brand, last four and
expiry.

Every charge carries our reference (a PaymentIntent's `ref`, committed before the call):
a gateway charges a reference at most once, and tells later what it holds for it
(`settlement`), which is how the reconciler settles an intent whose worker died.
"""

import secrets
import time
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Protocol

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Sum
from django.utils.module_loading import import_string

from airline.api import clock
from airline.api.errors import ApiError, Err, ErrorCollector
from orders.inputs import CardPayment

BRANDS = {"VI": "Visa", "CA": "Mastercard", "AX": "American Express", "DS": "Discover"}


@dataclass(frozen=True)
class Card:
    brand: str
    number: str = field(repr=False)
    expiry: str  # MMYY
    security_code: str = field(repr=False)
    holder: str = ""

    @property
    def last4(self) -> str:
        return self.number[-4:]

    @property
    def masked(self) -> str:
        return "X" * (len(self.number) - 4) + self.last4


@dataclass(frozen=True)
class Charge:
    """Money the gateway took; `reference` is the gateway's id for it."""

    reference: str
    amount: Decimal
    currency: str


class PaymentDeclined(Exception):
    """The issuer said no."""


class PaymentTimedOut(Exception):
    """The gateway did not answer in time; the charge, if any, is voided."""


@dataclass(frozen=True)
class Settlement:
    """What a gateway holds for one of our references: the charge, and how much of it
    has been refunded."""

    charge: Charge
    refunded: Decimal

    @property
    def outstanding(self) -> Decimal:
        return self.charge.amount - self.refunded


class PaymentGateway(Protocol):
    def charge(self, *, card: Card, amount: Decimal, currency: str, reference: str) -> Charge:
        """Take `amount` now, or raise PaymentDeclined / PaymentTimedOut. At most once
        per `reference`: a repeated call answers the first charge."""
        ...

    def refund(self, *, charge: Charge, amount: Decimal, reference: str = "") -> None:
        """Give back (part of) a charge; voids it when it has not settled. With a
        `reference`, at most once per reference: a repeated call gives nothing more."""
        ...

    def settlement(self, *, reference: str) -> Settlement | None:
        """What was charged for `reference` and refunded of it; None if nothing was."""
        ...


class TestGateway:
    """The test-mode gateway: approves the documented test cards, declines
    4000000000000002 and times out on 4000000000000119 (DESIGN.md §8). No money moves;
    every charge and refund is written to its ledger (orders.models.GatewayEntry) as it
    is made, so tests can hold the orders against what the gateway took.
    `TEST_GATEWAY_LATENCY_MS` makes each charge take that long, as a real one does (the
    crash test uses it to kill workers while a charge is under way)."""

    APPROVED = frozenset(
        {"4111111111111111", "5555555555554444", "378282246310005", "6011111111111117"}
    )
    DECLINED = "4000000000000002"
    TIMES_OUT = "4000000000000119"

    def charge(self, *, card: Card, amount: Decimal, currency: str, reference: str) -> Charge:
        from orders.models import GatewayEntry  # the ledger is a table of the orders app

        # Half the latency on the way there, half on the way back, as with a real
        # gateway: a worker can die before the charge is made or after, unaware of it.
        _travel()
        if card.number == self.TIMES_OUT:
            raise PaymentTimedOut
        if card.number not in self.APPROVED:
            raise PaymentDeclined
        try:
            entry = GatewayEntry.objects.create(
                kind=GatewayEntry.Kind.CHARGE,
                reference=reference,
                charge_reference=f"test_{secrets.token_hex(8)}",
                amount=amount,
                currency=currency,
                at=clock.now(),
            )
        except IntegrityError:
            # This reference was charged before (a retried call): that charge stands.
            return self.settlement(reference=reference).charge
        _travel()
        return Charge(reference=entry.charge_reference, amount=amount, currency=currency)

    def refund(self, *, charge: Charge, amount: Decimal, reference: str = "") -> None:
        from orders.models import GatewayEntry

        [charged_under] = GatewayEntry.objects.filter(
            kind=GatewayEntry.Kind.CHARGE, charge_reference=charge.reference
        ).values_list("reference", flat=True)
        try:
            with transaction.atomic():
                GatewayEntry.objects.create(
                    kind=GatewayEntry.Kind.REFUND,
                    reference=charged_under,
                    charge_reference=charge.reference,
                    refund_reference=reference,
                    amount=amount,
                    currency=charge.currency,
                    at=clock.now(),
                )
        except IntegrityError:
            pass  # this refund reference was given back before (a retried call)

    def settlement(self, *, reference: str) -> Settlement | None:
        from orders.models import GatewayEntry

        entries = GatewayEntry.objects.filter(reference=reference)
        charged = entries.filter(kind=GatewayEntry.Kind.CHARGE).first()
        if charged is None:
            return None
        refunded = entries.filter(kind=GatewayEntry.Kind.REFUND).aggregate(total=Sum("amount"))
        return Settlement(
            charge=Charge(charged.charge_reference, charged.amount, charged.currency),
            refunded=refunded["total"] or Decimal("0.00"),
        )


def _travel() -> None:
    """Half of TEST_GATEWAY_LATENCY_MS (none by default): the test gateway's network."""
    if settings.TEST_GATEWAY_LATENCY_MS:
        time.sleep(settings.TEST_GATEWAY_LATENCY_MS / 2000)


def payment_gateway() -> PaymentGateway:
    """The configured gateway (settings.PAYMENT_GATEWAY)."""
    return import_string(settings.PAYMENT_GATEWAY)()


def card_check(payment: CardPayment, *, now: datetime) -> Card:
    """A usable card from the request's payment, or the error DESIGN.md §11 names:
    unknown brand ERR-6001; a number failing Luhn or not of its brand, an expired card or
    a bad security code length ERR-1005 with the field's path."""
    return _card_of(payment, now=now, path="payment")


def credit_card_check(payment: CardPayment, *, now: datetime) -> Card:
    """card_check for the card that pays the rest of an airline credit (payment.card)."""
    return _card_of(payment, now=now, path="payment.card")


def _card_of(payment: CardPayment, *, now: datetime, path: str) -> Card:
    """The card, or one error naming every card field at fault (the brand's first)."""
    errors = ErrorCollector()
    brand = payment.card_type.upper()
    with errors.check():
        if brand not in BRANDS:
            raise ApiError(
                Err.CARD_BRAND,
                f"Card brand {brand or '(none)'} is not accepted; use one of {', '.join(BRANDS)}",
                path=f"{path}.cardType",
            )
    number = payment.card_number.replace(" ", "")
    with errors.check():
        if not number.isdigit() or not 12 <= len(number) <= 19 or not _luhn_ok(number):
            raise ApiError(
                Err.VALIDATION, "The card number is not valid", path=f"{path}.cardNumber"
            )
        if brand in BRANDS and _brand_of(number) != brand:
            raise ApiError(
                Err.VALIDATION,
                f"The card number is not a {BRANDS[brand]} number",
                path=f"{path}.cardNumber",
            )
    expiry = payment.expiry_date
    with errors.check():
        if len(expiry) != 4 or not expiry.isdigit() or not 1 <= int(expiry[:2]) <= 12:
            raise ApiError(Err.VALIDATION, "expiryDate must be MMYY", path=f"{path}.expiryDate")
        # A card is good through the last day of its expiry month.
        if (2000 + int(expiry[2:]), int(expiry[:2])) < (now.year, now.month):
            raise ApiError(Err.VALIDATION, "The card has expired", path=f"{path}.expiryDate")
    code = payment.security_code
    with errors.check():
        lengths = (4,) if brand == "AX" else (3,) if brand in BRANDS else (3, 4)
        if not code.isdigit() or len(code) not in lengths:
            raise ApiError(
                Err.VALIDATION,
                f"securityCode must be {' or '.join(map(str, lengths))} digits"
                + (f" for {BRANDS[brand]}" if brand in BRANDS else ""),
                path=f"{path}.securityCode",
            )
    errors.raise_any()
    holder = " ".join(p for p in (payment.payer_given_name, payment.payer_surname) if p)
    return Card(brand=brand, number=number, expiry=expiry, security_code=code, holder=holder)


def _luhn_ok(number: str) -> bool:
    total = 0
    for position, digit in enumerate(reversed(number)):
        value = int(digit)
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _brand_of(number: str) -> str | None:
    """The brand a card number belongs to, by its issuer prefix and length."""
    length = len(number)
    if number[0] == "4" and length in (13, 16, 19):
        return "VI"
    if number[:2] in ("34", "37") and length == 15:
        return "AX"
    if length == 16 and (51 <= int(number[:2]) <= 55 or 2221 <= int(number[:4]) <= 2720):
        return "CA"
    if 16 <= length <= 19 and (
        number.startswith(("6011", "65"))
        or 644 <= int(number[:3]) <= 649
        or 622126 <= int(number[:6]) <= 622925
    ):
        return "DS"
    return None
