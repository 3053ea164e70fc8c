"""The crash test of issue 14: card bookings from several clients at once while gunicorn
workers are killed with SIGKILL mid-request, then the payment reconciler runs. Every
charge in the test gateway's ledger must end attached to exactly one order's payment
row, or refunded in full: no orphaned charge, no double charge, no seat left taken by a
booking that does not exist."""

import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from datetime import timedelta
from decimal import Decimal

import pytest
import requests
from django.conf import settings
from django.db.models import Sum
from django.utils import timezone

from airline.network.models import LegInventory
from orders.models import GatewayEntry, Order, OrderStatus, Payment, PaymentIntent, Segment
from orders.reconcile import payments_reconcile
from tests.e2e.servers import gunicorn, server_env_on_test_database, worker_pids
from tests.fakestripe import FakeStripe
from tests.gateways import books_balance, provider_charges, stripe_settings
from tests.offers.conftest import network, search_body  # noqa: F401 (the network fixture)
from tests.orders.conftest import CARD, booking_body
from tests.sellers.factories import ApiKeyFactory, PartnerFactory, SellerFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

BOOKINGS = 36
CLIENTS = 6
KILL_EVERY = 2  # responses; each kill lands while the other clients' requests are in flight
MAX_KILLS = 14
IN_CHARGE = timedelta(milliseconds=120)  # well inside the test gateway's 300 ms
PARTY = [{"type": "ADT"}]


def stripe_server_of(gateway: str) -> FakeStripe | None:
    return FakeStripe(url=settings.STRIPE_API_BASE) if gateway == "stripe" else None


def charge_in_flight(within: float = 2.0) -> bool:
    """Wait (up to `within` seconds) until some worker is inside a charge: an intent
    committed less than IN_CHARGE ago is still PENDING and its gateway call has not
    returned (the test gateway takes 300 ms). A kill then lands inside a charge every
    time, where a kill at a random moment may land between requests and prove nothing."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        recent = timezone.now() - IN_CHARGE
        if PaymentIntent.objects.filter(
            state=PaymentIntent.State.PENDING, created_at__gte=recent
        ).exists():
            return True
        time.sleep(0.005)
    return False


def priced_offers(url: str, headers: dict, first_day, count: int) -> list[dict]:
    """`count` priced one-way offers for one adult on MX101, over several days."""
    offers = []
    for n in range(count):
        day = first_day + timedelta(days=2 + n % 20)
        found = requests.post(
            url + "/json/v1/offers",
            json=search_body(("PVD", "CHS", day), passengers=PARTY),
            headers=headers,
            timeout=30,
        ).json()["data"]["offers"]
        offer = next(o for o in found if o["offerItems"][0]["flight"]["flightNumbers"] == ["MX101"])
        priced = requests.post(
            url + "/json/v1/offers/price",
            json={
                "selections": [
                    {
                        "offerId": offer["offerId"],
                        "offerItemIds": [offer["offerItems"][0]["offerItemId"]],
                    }
                ],
                "passengers": PARTY,
            },
            headers=headers,
            timeout=30,
        )
        assert priced.status_code == 201, priced.text
        offers.append(priced.json()["data"])
    return offers


@pytest.fixture
def charging_slowly(card_gateway, request):
    """The servers' environment for the gateway under test, each charge taking about as
    long as a real one, so that kills land inside it: the test gateway's latency, or the
    fake Stripe answering an authorisation (after making it) 300 ms late and a capture
    100 ms late."""
    env = server_env_on_test_database()
    if card_gateway == "test":
        yield {**env, "TEST_GATEWAY_LATENCY_MS": "300"}
        return
    server = request.getfixturevalue("stripe_server")
    server.delay(r"/confirm$", 0.3)
    server.delay(r"/capture$", 0.1)
    try:
        yield {**env, **{name: str(value) for name, value in stripe_settings(server).items()}}
    finally:
        server.delay(r"/confirm$", 0)
        server.delay(r"/capture$", 0)


def test_no_charge_is_orphaned_or_doubled_when_workers_die_mid_booking(
    tmp_path,
    network,  # noqa: F811
    card_gateway,
    charging_slowly,
):
    partner = PartnerFactory()
    SellerFactory(partner=partner, is_default=True)
    issued = ApiKeyFactory(partner=partner, requests_per_minute=100_000)
    env = charging_slowly
    kills = 0
    statuses = []

    with gunicorn(env, tmp_path / "server.log", workers=3) as server:
        token = requests.post(
            server.url + "/auth/token", headers={"x-api-key": issued.raw}, timeout=10
        ).json()["access_token"]
        headers = {"Authorization": f"Bearer {token}"}
        offers = priced_offers(server.url, headers, network, BOOKINGS)

        def book(priced: dict) -> int | None:
            try:
                return requests.post(
                    server.url + "/json/v1/orders",
                    json=booking_body(priced, payment=CARD),
                    headers=headers,
                    timeout=60,
                ).status_code
            except requests.RequestException:
                return None  # the worker serving it was killed

        with ThreadPoolExecutor(CLIENTS) as pool:
            futures = [pool.submit(book, priced) for priced in offers]
            for n, future in enumerate(as_completed(futures), start=1):
                statuses.append(future.result())
                if n % KILL_EVERY == 0 and kills < MAX_KILLS and charge_in_flight():
                    # Every worker: the one charging under that intent is among them.
                    for victim in worker_pids(server.pid):
                        os.kill(victim, signal.SIGKILL)
                    kills += 1

    # The workers that died left intents (and reserved orders) pending: settle them as the
    # background worker would, without waiting for the grace period.
    outcomes = payments_reconcile(grace=timedelta(0))

    assert kills > 0
    # Some worker died holding an intent, or the test proved nothing.
    assert sum(outcomes.values()) > 0, (kills, statuses)
    assert statuses.count(201) > 0
    assert not PaymentIntent.objects.filter(state=PaymentIntent.State.PENDING).exists()
    assert not Order.objects.filter(status=OrderStatus.PENDING).exists()
    # Every amount the provider kept is one confirmed order's payment, in full; what no
    # order took was given back, once (tests/gateways.py, by the provider's own books).
    books_balance(stripe_server_of(card_gateway))
    confirmed = Order.objects.filter(status=OrderStatus.CONFIRMED)
    for order in confirmed:
        assert order.payments.count() == 1
        assert order.paid == order.total == order.payments.get().amount
    assert confirmed.count() >= statuses.count(201)
    assert len(provider_charges()) >= confirmed.count()
    if card_gateway == "test":
        ledger_matches_orders(outcomes)
    # Seats: what each leg has sold is exactly what live bookings hold.
    for leg_id, sold in LegInventory.objects.filter(rank=0).values_list("leg_id", "sold"):
        held = (
            Segment.objects.filter(legs__flight_leg_id=leg_id, holds_inventory=True).aggregate(
                total=Sum("seats")
            )["total"]
            or 0
        )
        assert sold == held, leg_id


def ledger_matches_orders(outcomes) -> None:
    """The test gateway's ledger, charge by charge: attached to exactly one order's
    payment, or refunded in full."""
    charges = GatewayEntry.objects.filter(kind=GatewayEntry.Kind.CHARGE)
    for charge in charges:
        refunded = GatewayEntry.objects.filter(
            kind=GatewayEntry.Kind.REFUND, reference=charge.reference
        ).aggregate(total=Sum("amount"))["total"] or Decimal(0)
        payments = list(Payment.objects.filter(gateway_reference=charge.charge_reference))
        if payments:
            [payment] = payments
            assert refunded == 0, charge
            assert payment.amount == charge.amount
            assert payment.order.status == OrderStatus.CONFIRMED
            assert payment.intent.ref == charge.reference
        else:
            assert refunded == charge.amount, f"orphaned charge {charge} ({outcomes})"
    confirmed = Order.objects.filter(status=OrderStatus.CONFIRMED)
    assert confirmed.count() == charges.count() - len(
        [c for c in charges if not Payment.objects.filter(gateway_reference=c.charge_reference)]
    )
