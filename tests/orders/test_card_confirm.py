"""A card booking's confirmation (orders.booking.paying.order_confirm_paid): the order
CONFIRMED, its payment row, the intent ATTACHED to it and the e-tickets, written in a few
statements; the answer shows the rows as a read of them does, and a confirmation that
finds the order or the intent settled by the reconciler meanwhile writes none of it."""

import pytest
from django.db import connection

from orders.models import (
    Coupon,
    GatewayEntry,
    Order,
    OrderEvent,
    OrderStatus,
    Payment,
    PaymentIntent,
    Ticket,
)
from orders.money.payments import TestGateway
from tests.conftest import error_of, round_trips_sent
from tests.orders.conftest import CARD, book, booking_body, legs_trip

pytestmark = pytest.mark.django_db


def test_the_answer_shows_the_rows_as_a_retrieve_does(api, auth, priced):
    created = book(api, auth, booking_body(priced, payment=CARD))

    assert created.status_code == 201, created.content
    answered = created.json()["data"]
    order_id = answered["order"]["orderId"]
    retrieved = api.get(f"/json/v1/orders/{order_id}", **auth).json()["data"]
    for part in ("order", "payments", "tickets", "pax", "journeys"):
        assert answered[part] == retrieved[part], part
    order = Order.objects.get(order_id=order_id)
    # Each passenger's ticket, in passenger order, numbered from consecutive serials;
    # each ticket a coupon per segment, numbered in travel order.
    tickets = list(Ticket.objects.filter(order=order).order_by("passenger__position"))
    assert [t.passenger.position for t in tickets] == [1, 2, 3]
    serials = [int(t.number[3:]) for t in tickets]
    assert serials == list(range(serials[0], serials[0] + 3))
    segments = list(order.segments.order_by("journey__position", "position"))
    for ticket in tickets:
        coupons = Coupon.objects.filter(ticket=ticket).order_by("number")
        assert [(c.number, c.segment_id, c.status) for c in coupons] == [
            (n, s.pk, Coupon.Status.OPEN) for n, s in enumerate(segments, start=1)
        ]
    payment = Payment.objects.get(order=order)
    intent = PaymentIntent.objects.get(order=order)
    assert (intent.state, intent.payment_id) == (PaymentIntent.State.ATTACHED, payment.pk)
    assert intent.gateway_reference == payment.gateway_reference != ""
    assert (order.status, order.paid, order.version) == (OrderStatus.CONFIRMED, order.total, 2)


def _settled_during_the_charge(monkeypatch, settle):
    """The test gateway's charge, after which `settle` (the reconciler's work, done
    meanwhile) runs on the charged intent."""
    charge = TestGateway.charge

    def charge_then_settle(self, **kwargs):
        made = charge(self, **kwargs)
        settle(PaymentIntent.objects.get(ref=kwargs["reference"]))
        return made

    monkeypatch.setattr(TestGateway, "charge", charge_then_settle)


def test_an_order_settled_meanwhile_gets_no_second_payment(api, auth, priced, monkeypatch):
    def confirm(intent):
        Order.objects.filter(pk=intent.order_id).update(status=OrderStatus.CONFIRMED)

    _settled_during_the_charge(monkeypatch, confirm)

    response = book(api, auth, booking_body(priced, payment=CARD))

    error_of(response, 500, "ERR-9003")
    order = Order.objects.get()
    assert (order.status, order.paid, order.version) == (OrderStatus.CONFIRMED, 0, 1)
    assert not Payment.objects.exists()
    assert not Ticket.objects.exists()
    intent = PaymentIntent.objects.get()
    assert (intent.state, intent.payment_id) == (PaymentIntent.State.REFUNDED, None)
    assert list(GatewayEntry.objects.values_list("kind", flat=True).order_by("pk")) == [
        "CHARGE",
        "REFUND",
    ]


def test_an_intent_settled_meanwhile_leaves_the_order_unconfirmed(api, auth, priced, monkeypatch):
    def void(intent):
        PaymentIntent.objects.filter(pk=intent.pk).update(state=PaymentIntent.State.VOID)

    _settled_during_the_charge(monkeypatch, void)

    response = book(api, auth, booking_body(priced, payment=CARD))

    error_of(response, 500, "ERR-9003")
    # The confirmation rolled back whole: no payment row, no ticket, and the reservation
    # given back as for any confirmation that fails.
    assert not Order.objects.exists()
    assert not Payment.objects.exists()
    assert not Ticket.objects.exists()
    intent = PaymentIntent.objects.get()
    assert intent.payment_id is None


@pytest.fixture
def serials_run_out():
    """The ticket serials' sequence past what their table's check lets a ticket number
    hold (ten digits), then back where it was: a sequence is not rolled back with the
    test's transaction."""
    sequence = "pg_get_serial_sequence('orders_ticketserial', 'id')"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT nextval({sequence})")
        [kept] = cursor.fetchone()
        cursor.execute(f"SELECT setval({sequence}, 10000000000)")
    yield
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT setval({sequence}, %s)", [kept])


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a sequence run out")
def test_a_confirmation_failing_on_its_tickets_writes_nothing(api, auth, priced, serials_run_out):
    # The tickets' statement, sent with the order's confirmation and its event, fails;
    # its error comes back with their answers, and the three are rolled back together.
    response = book(api, auth, booking_body(priced, payment=CARD))

    # A database error, as any other: the client may retry, nothing was booked.
    error_of(response, 503, "ERR-9000")
    assert not Order.objects.exists()
    assert not Payment.objects.exists()
    assert not Ticket.objects.exists()
    assert not OrderEvent.objects.filter(kind=OrderEvent.Kind.PAID).exists()
    intent = PaymentIntent.objects.get()
    assert (intent.state, intent.payment_id) == (PaymentIntent.State.REFUNDED, None)
    assert list(GatewayEntry.objects.values_list("kind", flat=True).order_by("pk")) == [
        "CHARGE",
        "REFUND",
    ]


def test_a_card_booking_sends_its_intent_with_the_legs(api, auth, priced):
    """The intent of a booking paid by card alone needs only the order's id: it goes in
    the legs' round trip (orders.booking.paying.card_intent_first), names the order and
    owes its whole total, and the card is charged under it."""
    with round_trips_sent() as trips:
        created = book(api, auth, booking_body(priced, payment=CARD))

    assert created.status_code == 201, created.content
    assert any('INTO "orders_paymentintent"' in sql for sql in legs_trip(trips))
    order = Order.objects.get(order_id=created.json()["data"]["order"]["orderId"])
    [intent] = PaymentIntent.objects.filter(order=order)
    assert intent.amount == order.total
    assert intent.state == PaymentIntent.State.ATTACHED
    assert GatewayEntry.objects.get(reference=intent.ref).amount == order.total
