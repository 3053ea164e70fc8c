"""Card payments: the checks every card passes before a gateway sees it, the gateway
interface, and the test-mode gateway (DESIGN.md §8, §11 "Card fields", "Payments").

The full card number and security code live only in the `Card` of one request: never
stored, never logged, never in an error message. What is kept is brand, last four and
expiry.

Every charge carries our reference (a PaymentIntent's `ref`, committed before the call):
a gateway charges a reference at most once, and tells later what it holds for it
(`settlement`), which is how the reconciler settles an intent whose worker died.

Two gateways (settings.PAYMENT_GATEWAY, DESIGN.md §11 "Payment providers"): the test-mode
`TestGateway` (the default: test cards, no network) and `StripeGateway` (Stripe's SDK).

It is one module because the gateway protocol, both gateways and the card checks are the one
place card data passes through: a reader checks that it is never kept by reading this
file alone, and PAYMENT_GATEWAY names a class of it.
"""

import logging
import secrets
import time
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any, Protocol

import stripe
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Sum
from django.utils.module_loading import import_string

from airline.api import clock
from airline.api.errors import ApiError, Err, ErrorCollector
from orders.core.rows import rows_insert
from orders.models import GatewayEntry, PaymentIntent
from orders.requests.inputs import CardPayment

logger = logging.getLogger("airline.payments")
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
    """Money the gateway took, or (not `captured`) holds authorised until `capture`;
    `reference` is the gateway's id for it."""

    reference: str
    amount: Decimal
    currency: str
    captured: bool = True


class PaymentDeclined(Exception):
    """The issuer said no; `code` is the provider's reason, for the log only."""

    def __init__(self, code: str = "declined") -> None:
        super().__init__(code)
        self.code = code


class PaymentTimedOut(Exception):
    """The gateway did not answer in time, or could not process the call (`code`, for the
    log only); whatever it may have taken is settled by the reconciler."""

    def __init__(self, code: str = "timeout") -> None:
        super().__init__(code)
        self.code = code


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
        """Take (or authorise) `amount`, or raise PaymentDeclined / PaymentTimedOut. At
        most once per `reference`: a repeated call answers the first charge."""
        ...

    def capture(self, *, charge: Charge) -> None:
        """Take an authorised charge (at ticketing), or raise PaymentDeclined /
        PaymentTimedOut; nothing for a charge taken at once. Repeating it is harmless."""
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
    `TEST_GATEWAY_LATENCY_MS` makes each charge and refund take that long, as a real one
    does (the crash test uses it to kill workers while a charge or refund is under way)."""

    APPROVED = frozenset(
        {"4111111111111111", "5555555555554444", "378282246310005", "6011111111111117"}
    )
    DECLINED = "4000000000000002"
    TIMES_OUT = "4000000000000119"

    def charge(self, *, card: Card, amount: Decimal, currency: str, reference: str) -> Charge:
        # Half the latency on the way there, half on the way back, as with a real
        # gateway: a worker can die before the charge is made or after, unaware of it.
        _travel()
        if card.number == self.TIMES_OUT:
            raise PaymentTimedOut
        if card.number not in self.APPROVED:
            raise PaymentDeclined
        entry = GatewayEntry(
            kind=GatewayEntry.Kind.CHARGE,
            reference=reference,
            charge_reference=f"test_{secrets.token_hex(8)}",
            amount=amount,
            currency=currency,
            at=clock.now(),
        )
        try:
            rows_insert([entry])  # one plain INSERT (orders/core/rows.py)
        except IntegrityError:
            # This reference was charged before (a retried call): that charge stands.
            return self.settlement(reference=reference).charge
        _travel()
        return Charge(reference=entry.charge_reference, amount=amount, currency=currency)

    def capture(self, *, charge: Charge) -> None:
        """Nothing: the test gateway takes the money when it charges."""

    def refund(self, *, charge: Charge, amount: Decimal, reference: str = "") -> None:
        [charged_under] = GatewayEntry.objects.filter(
            kind=GatewayEntry.Kind.CHARGE, charge_reference=charge.reference
        ).values_list("reference", flat=True)
        _travel()  # a worker can die before the refund is made or after, unaware of it
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
        _travel()

    def settlement(self, *, reference: str) -> Settlement | None:
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


# Stripe's decline codes that are a refusal (ERR-6002); any other card error is the
# provider failing to process the card (processing_error...), answered ERR-6005: the
# client may try again (https://docs.stripe.com/declines/codes).
REFUSALS = frozenset(
    {
        "card_declined",
        "insufficient_funds",
        "expired_card",
        "incorrect_cvc",
        "incorrect_number",
        "invalid_cvc",
        "invalid_expiry_month",
        "invalid_expiry_year",
        "invalid_number",
        "lost_card",
        "stolen_card",
        "card_velocity_exceeded",
        "authentication_required",
    }
)
# A PaymentIntent in these states holds no money (https://docs.stripe.com/payments/paymentintents/lifecycle).
HOLDS_NOTHING = frozenset(
    {"requires_payment_method", "requires_confirmation", "requires_action", "canceled"}
)


class StripeGateway:
    """Stripe, through its official SDK (DESIGN.md §11 "Payment providers"; README
    "Production"). A charge is a PaymentIntent carrying our reference as metadata and as
    the idempotency key of every call made for it:

    1. the PaymentIntent is created unconfirmed with the card in it (the airline is its
       own PCI DSS level-1 merchant; the number and CVC go to Stripe and nowhere else);
    2. its id is written on our intent
       (`PaymentIntent.gateway_reference`, committed) before it is confirmed: money can
       only move for an intent whose id we hold, so `settlement` retrieves it by that id
       (Stripe's search is eventually consistent, too late for a reconciler);
    3. confirming takes the money (STRIPE_CAPTURE "automatic", the default) or only
       authorises it ("manual": `capture` takes it at ticketing, inside the transaction
       that writes the payment row, with the order row locked).

    Every flow here tickets in the request that charges, so authorisation and capture
    are never apart for long, and "automatic" saves one round trip per booking (about
    300 ms against Stripe itself) and keeps every provider call out of the locked
    transaction. Its price: a booking that fails after the charge is refunded, which
    costs Stripe's fee and shows on the cardholder's statement, where "manual" voids the
    authorisation, which costs nothing and shows only as a pending line that goes away.

    Every call has STRIPE_TIMEOUT_SECONDS and no automatic retry: a timeout is answered
    ERR-6005 at once and the reconciler settles whatever Stripe did meanwhile."""

    def __init__(self) -> None:
        self.stripe = _stripe_client(
            settings.STRIPE_API_KEY, settings.STRIPE_API_BASE, settings.STRIPE_TIMEOUT_SECONDS
        )

    def charge(self, *, card: Card, amount: Decimal, currency: str, reference: str) -> Charge:
        with _provider_call(reference, "authorise"):
            # The card goes in the create call itself (payment_method_data): one round
            # trip fewer than making its PaymentMethod first.
            intent = self.stripe.v1.payment_intents.create(
                params={
                    "amount": _minor(amount),
                    "currency": currency.lower(),
                    "payment_method_data": {
                        "type": "card",
                        "card": {
                            "number": card.number,
                            "exp_month": int(card.expiry[:2]),
                            "exp_year": 2000 + int(card.expiry[2:]),
                            "cvc": card.security_code,
                        },
                    },
                    "payment_method_types": ["card"],
                    "capture_method": settings.STRIPE_CAPTURE,
                    "metadata": {"reference": reference},
                },
                options={"idempotency_key": reference},
            )
            PaymentIntent.objects.filter(ref=reference).update(gateway_reference=intent.id)
            intent = self.stripe.v1.payment_intents.confirm(
                intent.id, options={"idempotency_key": f"{reference}-confirm"}
            )
        if intent.status in HOLDS_NOTHING:  # e.g. 3-D Secure wanted: not for server-side cards
            logger.info(
                "payment not authorised",
                extra={"fields": {"intent": reference, "provider_status": intent.status}},
            )
            raise PaymentDeclined(intent.status)
        return Charge(
            reference=intent.id,
            amount=amount,
            currency=currency,
            captured=intent.status == "succeeded",
        )

    def capture(self, *, charge: Charge) -> None:
        if charge.captured:
            return
        with _provider_call(charge.reference, "capture"):
            self.stripe.v1.payment_intents.capture(
                charge.reference, options={"idempotency_key": f"{charge.reference}-capture"}
            )

    def refund(self, *, charge: Charge, amount: Decimal, reference: str = "") -> None:
        intent_id = charge.reference
        with _provider_call(intent_id, "refund"):
            # A charge known to be captured (a payment row's: captured before its
            # transaction commits) is refunded at once; one that may not be (a charge
            # whose booking failed around its capture) is looked at first.
            if not charge.captured:
                intent = self.stripe.v1.payment_intents.retrieve(intent_id)
                if intent.status == "requires_capture":
                    # Authorised, never taken: void it (the whole authorisation goes).
                    self.stripe.v1.payment_intents.cancel(
                        intent_id, options={"idempotency_key": f"{intent_id}-void"}
                    )
                    return
                if intent.status in HOLDS_NOTHING:
                    return  # nothing was taken
            self.stripe.v1.refunds.create(
                params={
                    "payment_intent": intent_id,
                    "amount": _minor(amount),
                    "metadata": {"reference": reference},
                },
                # Each of our refunds once (Refund.ref); a full refund without one once
                # per amount, which the reconciler only ever asks for what is left.
                options={"idempotency_key": reference or f"{intent_id}-refund-{_minor(amount)}"},
            )

    def settlement(self, *, reference: str) -> Settlement | None:
        provider_id = (
            PaymentIntent.objects.filter(ref=reference).values_list("gateway_reference", flat=True)
        ).first()
        if not provider_id:
            return None  # never confirmed: the id is written before the confirm call
        with _provider_call(reference, "settlement"):
            intent = self.stripe.v1.payment_intents.retrieve(
                provider_id, params={"expand": ["latest_charge"]}
            )
        if intent.status in HOLDS_NOTHING or not intent.latest_charge:
            return None
        paid = intent.latest_charge
        return Settlement(
            charge=Charge(
                reference=intent.id,
                amount=_major(paid.amount),
                currency=intent.currency.upper(),
                captured=bool(paid.captured),
            ),
            refunded=_major(paid.amount_refunded or 0),
        )

    def refunds_of(self, *, charge_reference: str) -> list["ProviderRefund"]:
        """Every refund Stripe made of an intent's charge that gives money back (pending or
        succeeded), ours and any made outside this service (its dashboard)."""
        with _provider_call(charge_reference, "refunds"):
            found = self.stripe.v1.refunds.list(
                params={"payment_intent": charge_reference, "limit": 100}
            )
            return [
                ProviderRefund(
                    id=r.id,
                    amount=_major(r.amount),
                    reference=(r.metadata.to_dict() if r.metadata else {}).get("reference", ""),
                )
                for r in found.auto_paging_iter()
                if r.status not in ("failed", "canceled")
            ]


@dataclass(frozen=True)
class ProviderRefund:
    """A refund as the provider holds it: its id, amount, and our reference when we made
    it (metadata `reference`: a Refund.ref)."""

    id: str
    amount: Decimal
    reference: str


@lru_cache(maxsize=4)
def _stripe_client(api_key: str, api_base: str, timeout: float) -> stripe.StripeClient:
    """One SDK client per process and configuration: its HTTP sessions (one per thread)
    keep their connections to Stripe open between calls."""
    return stripe.StripeClient(
        api_key,
        base_addresses={"api": api_base},
        http_client=stripe.RequestsClient(timeout=timeout),
        max_network_retries=0,
    )


class _provider_call:
    """Stripe's errors as ours, with Stripe's reason in the log (never in an answer): a
    refusal PaymentDeclined, a timeout, a connection failure, a processing error or
    Stripe's own trouble PaymentTimedOut. Anything else (a bad key, a bad request) is a
    fault of ours and goes on as it is."""

    def __init__(self, reference: str, step: str) -> None:
        self.reference, self.step = reference, step

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> bool:
        if error is None or not isinstance(error, stripe.StripeError):
            return False
        fields = {
            "intent": self.reference,
            "step": self.step,
            "provider_error": type(error).__name__,
        }
        if isinstance(error, stripe.CardError):
            code = getattr(error.error, "decline_code", None) or error.code or "card_error"
            fields["decline_code"] = code
            logger.info("payment declined by the provider", extra={"fields": fields})
            if error.code in REFUSALS or code in REFUSALS:
                raise PaymentDeclined(code) from None
            raise PaymentTimedOut(code) from None
        if isinstance(error, stripe.APIConnectionError | stripe.RateLimitError | stripe.APIError):
            logger.warning("payment provider unavailable", extra={"fields": fields})
            raise PaymentTimedOut(type(error).__name__) from None
        return False


def _minor(amount: Decimal) -> int:
    """An amount in the currency's minor unit, as Stripe counts (USD: cents)."""
    return int((amount * 100).to_integral_value())


def _major(minor: int) -> Decimal:
    return (Decimal(minor) / 100).quantize(Decimal("0.01"))


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
