"""A card booking whose gunicorn worker is SIGKILLed right after the provider charged:
the client gets no answer; its retry with the same Idempotency-Key is told the outcome
is being settled (409 ERR-1012, reason OUTCOME_PENDING), never run again; once the
reconciler has confirmed the booking, the retry gets 201 with the order, as if the first
request had succeeded. Real gunicorn; the test gateway takes 2 s a charge, the charge
made halfway, so the kill lands after it."""

import contextlib
import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
import requests

from airline.api.models import IdempotencyRecord
from orders.booking.reconcile import payments_reconcile
from orders.models import GatewayEntry, Order, OrderStatus
from tests.e2e.servers import gunicorn, server_env_on_test_database, worker_pids
from tests.e2e.test_payment_crash import priced_offers
from tests.offers.conftest import network  # noqa: F401 (the network fixture)
from tests.orders.conftest import CARD, booking_body
from tests.sellers.factories import ApiKeyFactory, PartnerFactory, SellerFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


def charged(within: float = 20.0) -> bool:
    """Poll the database until the test gateway's ledger has the charge."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if GatewayEntry.objects.filter(kind=GatewayEntry.Kind.CHARGE).exists():
            return True
        time.sleep(0.02)  # polling another process's commit, not timing behaviour
    return False


def test_a_retry_after_a_worker_died_past_the_charge_gets_the_booked_order(tmp_path, network):  # noqa: F811
    partner = PartnerFactory()
    SellerFactory(partner=partner, is_default=True)
    issued = ApiKeyFactory(partner=partner, requests_per_minute=100_000)
    env = {**server_env_on_test_database(), "TEST_GATEWAY_LATENCY_MS": "2000"}

    with gunicorn(env, tmp_path / "server.log", workers=1) as server:
        token = requests.post(
            server.url + "/auth/token", headers={"x-api-key": issued.raw}, timeout=10
        ).json()["access_token"]
        headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": "killed-1"}
        [priced] = priced_offers(server.url, headers, network, 1)
        body = booking_body(priced, payment=CARD)

        def book():
            return requests.post(
                server.url + "/json/v1/orders", json=body, headers=headers, timeout=60
            )

        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(book)
            assert charged(), server.output()
            for victim in worker_pids(server.pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(victim, signal.SIGKILL)
            with pytest.raises(requests.RequestException):
                first.result()
        early = book()

        # The background worker's round, without waiting out the grace period.
        outcomes = payments_reconcile(grace=timedelta(0))
        retried = book()
        again = book()

    assert early.status_code == 409, early.text
    assert early.json()["error"]["reason"] == "OUTCOME_PENDING"
    assert early.headers["Retry-After"]
    assert outcomes == {"attached": 1}
    order = Order.objects.get()
    assert order.status == OrderStatus.CONFIRMED
    assert retried.status_code == 201, retried.text
    assert retried.headers["Idempotent-Replayed"] == "true"
    assert retried.json()["data"]["order"]["orderId"] == order.order_id
    assert again.content == retried.content
    assert IdempotencyRecord.objects.get().state == IdempotencyRecord.State.DONE
    assert GatewayEntry.objects.filter(kind=GatewayEntry.Kind.CHARGE).count() == 1
