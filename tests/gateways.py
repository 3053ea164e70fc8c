"""Both payment gateways for the suites that charge cards (issue 26): the test gateway,
and Stripe's SDK against the fake Stripe server this test session starts
(tests/fakestripe.py). After every test that ran on either, the books audit runs
(orders.money.audit, `manage.py audit_books`): each order's own books, and per order what the
provider captured less what it refunded is what our card payments say they kept, and an
intent no payment took holds nothing.

Use: `pytestmark = pytest.mark.usefixtures("card_gateway")` (or the fixture on a test).
"""

from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal

import pytest
from django.conf import settings
from django.db.models import Sum

from airline.api import clock
from orders.models import GatewayEntry, Payment, PaymentIntent, Refund
from orders.money.audit import books_audit
from tests.e2e.servers import free_port
from tests.fakestripe import FakeStripe, fake_stripe

GATEWAYS = {
    "test": "orders.money.payments.TestGateway",
    "stripe": "orders.money.payments.StripeGateway",
}
ZERO = Decimal("0.00")


@pytest.fixture(scope="session")
def stripe_server() -> Iterator[FakeStripe]:
    """The fake Stripe server, once per test session, on a free loopback port."""
    with fake_stripe(free_port()) as server:
        yield server


def stripe_settings(server: FakeStripe, *, capture: str = "automatic") -> dict[str, object]:
    """The settings (and, as strings, the environment) of the Stripe gateway on `server`,
    taking the money when the card is confirmed (`capture` "automatic") or at ticketing
    ("manual")."""
    return {
        "PAYMENT_GATEWAY": GATEWAYS["stripe"],
        "STRIPE_API_KEY": server.api_key,
        "STRIPE_WEBHOOK_SECRET": server.webhook_secret,
        "STRIPE_API_BASE": server.url,
        "STRIPE_TIMEOUT_SECONDS": 5,
        "STRIPE_CAPTURE": capture,
    }


# Where capturing at once or at ticketing makes a difference (a failure after the charge,
# a crash, a race), a test runs on Stripe in both ways:
# `@pytest.mark.parametrize("card_gateway", BOTH_CAPTURES, indirect=True)`.
BOTH_CAPTURES = ["stripe", "stripe-manual", "test"]


@pytest.fixture(params=sorted(GATEWAYS))
def card_gateway(request, settings) -> Iterator[str]:
    """Run the test once per gateway ("stripe", "test"; "stripe-manual" where a test asks
    for it: Stripe capturing at ticketing); then check the books."""
    stripe = request.param.startswith("stripe")
    server = request.getfixturevalue("stripe_server") if stripe else None
    if server is None:
        settings.PAYMENT_GATEWAY = GATEWAYS["test"]
    else:
        capture = "manual" if request.param == "stripe-manual" else "automatic"
        for name, value in stripe_settings(server, capture=capture).items():
            setattr(settings, name, value)
    yield request.param
    if request.node.get_closest_marker("books_rewritten"):
        return  # the test wrote our amounts by hand: they cannot match the provider's
    if request.node.get_closest_marker("django_db") or {"db", "transactional_db"} & set(
        request.fixturenames
    ):
        books_balance()


def books_balance() -> None:
    """The books audit (orders.money.audit, `manage.py audit_books`) over this test's orders,
    against the configured gateway's own books (the test gateway's ledger, or the fake
    Stripe server's API): no disagreement."""
    found = [str(d) for d in books_audit(now=clock.now() + timedelta(days=1))]
    assert found == [], "\n".join(found)


def _provider() -> FakeStripe | None:
    """The fake Stripe server the settings point at; None on the test gateway."""
    if GATEWAYS["stripe"] != settings.PAYMENT_GATEWAY:
        return None
    return FakeStripe(url=settings.STRIPE_API_BASE)


def provider_charges() -> list[Decimal]:
    """What the provider captured, one amount per charge, for this test's intents."""
    server = _provider()
    if server is None:
        return list(
            GatewayEntry.objects.filter(kind=GatewayEntry.Kind.CHARGE)
            .order_by("pk")
            .values_list("amount", flat=True)
        )
    captured = []
    for reference in PaymentIntent.objects.order_by("pk").values_list(
        "gateway_reference", flat=True
    ):
        if reference.startswith("pi_"):
            charge = server.get(f"/v1/payment_intents/{reference}").get("latest_charge") or {}
            if charge.get("captured"):
                captured.append(Decimal(charge["amount"]) / 100)
    return captured


def provider_refund(refund: Refund) -> Decimal:
    """What the provider gave back under our refund's reference."""
    server = _provider()
    if server is None:
        return GatewayEntry.objects.get(
            kind=GatewayEntry.Kind.REFUND, refund_reference=refund.ref
        ).amount
    found = server.get("/v1/refunds", payment_intent=refund.payment.gateway_reference, limit=100)
    [given] = [r for r in found["data"] if r["metadata"].get("reference") == refund.ref]
    return Decimal(given["amount"]) / 100


def provider_refunded(payment: Payment) -> Decimal:
    """Everything the provider gave back of a payment's charge, under any reference."""
    server = _provider()
    if server is None:
        return (
            GatewayEntry.objects.filter(
                kind=GatewayEntry.Kind.REFUND, charge_reference=payment.gateway_reference
            ).aggregate(total=Sum("amount"))["total"]
            or ZERO
        )
    found = server.get(f"/v1/payment_intents/{payment.gateway_reference}")
    return Decimal(found["latest_charge"]["amount_refunded"] or 0) / 100
