"""The database goes away right after the card provider charged a booking (a failover:
the worker's connection is cut, and no new one can be made for a while). The client is
answered 503 ERR-9000 saying the outcome is being settled; the reconciler, once the
database is back, confirms the booking the charge paid for; the client's retry with its
Idempotency-Key gets 201 with that order, and a client that sent no key finds it in the
order list. No key is left running; no confirmed order is one its client cannot learn
of."""

import socket

import psycopg
import pytest
from django.db import connections

from airline.api.models import IdempotencyRecord
from orders.booking.reconcile import payments_reconcile
from orders.models import Order, OrderStatus, PaymentIntent
from orders.money.payments import TestGateway
from tests.conftest import error_of
from tests.orders.conftest import CARD, book, booking_body
from tests.orders.test_payment_intents import ledger

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

KEY = {"HTTP_IDEMPOTENCY_KEY": "failover-1"}


@pytest.fixture
def failover_after_the_charge(monkeypatch):
    """Each charge made, then this process's connection terminated by the server
    (pg_terminate_backend, from another connection) and the database's address a closed
    port, until the test's request is answered."""
    connection = connections["default"]
    saved = dict(connection.settings_dict)
    charge = TestGateway.charge

    def charge_then_fail_over(self, **kwargs):
        made = charge(self, **kwargs)
        pid = connection.connection.info.backend_pid
        with psycopg.connect(
            host=saved["HOST"] or None,
            port=saved["PORT"] or None,
            user=saved["USER"] or None,
            password=saved["PASSWORD"] or None,
            dbname=saved["NAME"],
            autocommit=True,
        ) as other:
            other.execute("SELECT pg_terminate_backend(%s)", [pid])
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            closed = sock.getsockname()[1]
        connection.settings_dict.update(HOST="127.0.0.1", PORT=str(closed))
        return made

    monkeypatch.setattr(TestGateway, "charge", charge_then_fail_over)

    def back() -> None:
        monkeypatch.undo()
        connection.close()
        connection.settings_dict.update(HOST=saved["HOST"], PORT=saved["PORT"])

    yield back
    back()


def unfinished() -> int:
    return IdempotencyRecord.objects.filter(
        state__in=[IdempotencyRecord.State.RUNNING, IdempotencyRecord.State.SETTLING]
    ).count()


def test_a_booking_cut_off_after_the_charge_is_answered_201_on_its_retry(
    api, auth, priced, clock, failover_after_the_charge
):
    body = booking_body(priced, payment=CARD)

    first = book(api, auth, body, **KEY)
    failover_after_the_charge()

    error = error_of(first, 503, "ERR-9000")
    assert error["reason"] == "OUTCOME_PENDING"
    assert "same Idempotency-Key" in error["description"]
    assert first["Retry-After"] == "30"
    order = Order.objects.get()
    assert order.status == OrderStatus.PENDING
    assert PaymentIntent.objects.get().state == PaymentIntent.State.PENDING
    assert IdempotencyRecord.objects.get().state == IdempotencyRecord.State.SETTLING
    error_of(book(api, auth, body, **KEY), 409, "ERR-1012")

    clock.advance(minutes=3)
    assert payments_reconcile() == {"attached": 1}

    retried = book(api, auth, body, **KEY)
    assert retried.status_code == 201, retried.content
    assert retried.json()["data"]["order"]["orderId"] == order.order_id
    assert retried.json()["data"]["order"]["statusCode"] == "CONFIRMED"
    assert unfinished() == 0
    # Charged once, and the one charge is the order's payment.
    [(kind, _, amount)] = ledger()
    assert (kind, amount) == ("CHARGE", Order.objects.get().total)
    assert Order.objects.count() == 1


def test_without_a_key_the_booking_is_found_in_the_order_list(
    api, auth, priced, clock, failover_after_the_charge
):
    first = book(api, auth, booking_body(priced, payment=CARD))
    failover_after_the_charge()

    error = error_of(first, 503, "ERR-9000")
    assert error["reason"] == "OUTCOME_PENDING"
    assert "order list" in error["description"]
    listed = api.get("/json/v1/orders", **auth).json()["data"]["orders"]
    assert [o["statusCode"] for o in listed] == ["PENDING"]  # being settled

    clock.advance(minutes=3)
    assert payments_reconcile() == {"attached": 1}

    listed = api.get("/json/v1/orders", **auth).json()["data"]["orders"]
    assert [(o["orderId"], o["statusCode"]) for o in listed] == [
        (Order.objects.get().order_id, "CONFIRMED")
    ]
