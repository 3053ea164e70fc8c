"""Payment intents and the reconciler (issue 14 items 1-2; DESIGN.md §11 "Payments"):
no card is charged without a durable record first, a booking reserves its seats before
its card is charged, and whatever a dying worker leaves is settled by the reconciler from
what the gateway says it holds."""

from decimal import Decimal

import pytest
from django.core.management import call_command
from django.db.models import F

from airline.network.models import LegInventory
from orders.booking.reconcile import payments_reconcile
from orders.models import GatewayEntry, Order, OrderStatus, Payment, PaymentIntent
from tests.conftest import error_of
from tests.orders.conftest import CARD, book, booking_body, price_offer
from tests.orders.test_order_ancillaries import change, open_seat, seats

pytestmark = pytest.mark.django_db


def sold() -> list:
    return sorted(LegInventory.objects.values_list("leg_id", "rbd", "sold"))


def ledger() -> list[tuple[str, str, Decimal]]:
    return list(GatewayEntry.objects.values_list("kind", "reference", "amount"))


class Killed(BaseException):
    """Stands for a SIGKILL: nothing after the point it is raised at runs, not even the
    flow's own clean-up (which the test switches off)."""


def die_at(monkeypatch, target: str) -> None:
    def killed(*args, **kwargs):
        raise Killed

    monkeypatch.setattr(target, killed)


@pytest.fixture
def no_cleanup(monkeypatch):
    """A killed worker runs no except clause: the refund and the release never happen."""
    monkeypatch.setattr("orders.money.intents.intent_refund", lambda *a, **k: None)
    monkeypatch.setattr("orders.booking.paying.order_abandon", lambda *a, **k: True)


def test_a_card_booking_leaves_its_intent_attached_to_the_payment(api, auth, priced):
    response = book(api, auth, booking_body(priced, payment=CARD))

    assert response.status_code == 201, response.content
    order = Order.objects.get()
    [intent] = PaymentIntent.objects.all()
    payment = Payment.objects.get()
    assert (intent.state, intent.order, intent.payment) == (
        PaymentIntent.State.ATTACHED,
        order,
        payment,
    )
    assert (intent.amount, intent.card_last4, intent.purpose) == (order.total, "1111", "CREATE")
    assert ledger() == [("CHARGE", intent.ref, order.total)]
    assert payment.gateway_reference == intent.gateway_reference != ""


def test_a_declined_card_leaves_a_declined_intent_and_no_order(api, auth, priced):
    before = sold()

    response = book(
        api, auth, booking_body(priced, payment={**CARD, "cardNumber": "4000000000000002"})
    )

    error_of(response, 400, "ERR-6002", "payment")
    [intent] = PaymentIntent.objects.all()
    assert (intent.state, intent.order, intent.offer_id) == (
        PaymentIntent.State.DECLINED,
        None,
        priced["offer"]["offerId"],
    )
    assert not Order.objects.exists()
    assert sold() == before
    assert ledger() == []


def test_a_declined_card_for_a_party_with_a_lap_infant_leaves_no_order(api, auth, travel_day):
    priced = price_offer(api, auth, travel_day, party=[{"type": "ADT"}, {"type": "INF"}])
    before = sold()

    response = book(
        api, auth, booking_body(priced, payment={**CARD, "cardNumber": "4000000000000002"})
    )

    error_of(response, 400, "ERR-6002", "payment")
    assert not Order.objects.exists()
    assert sold() == before


def test_the_seats_are_reserved_before_the_card_is_charged(api, auth, priced):
    """A sold-out flight is refused before any money moves (issue 14 item 2)."""
    LegInventory.objects.update(sold=F("authorized"))  # every flight sold out since pricing

    response = book(api, auth, booking_body(priced, payment=CARD))

    error_of(response, 400, "ERR-4001")
    assert ledger() == []
    assert not PaymentIntent.objects.exists()


def test_a_worker_killed_after_the_charge_leaves_a_booking_the_reconciler_confirms(
    api, auth, priced, clock, monkeypatch, no_cleanup
):
    die_at(monkeypatch, "orders.booking.paying.order_confirm_paid")
    with pytest.raises(Killed):
        book(api, auth, booking_body(priced, payment=CARD))
    order = Order.objects.get()
    [intent] = PaymentIntent.objects.all()
    assert (order.status, intent.state) == (OrderStatus.PENDING, PaymentIntent.State.PENDING)
    assert payments_reconcile() == {}  # within the grace period: a request may still be running
    monkeypatch.undo()

    clock.advance(minutes=3)
    assert payments_reconcile() == {"attached": 1}

    order.refresh_from_db()
    intent.refresh_from_db()
    assert (order.status, order.paid) == (OrderStatus.CONFIRMED, order.total)
    assert intent.state == PaymentIntent.State.ATTACHED
    assert intent.payment.amount == order.total
    assert order.tickets.count() == 3
    assert order.events.filter(kind="paid", actor="payment reconciler").exists()
    assert ledger() == [("CHARGE", intent.ref, order.total)]  # charged once, never refunded
    retrieved = api.get(f"/json/v1/orders/{order.order_id}", **auth).json()["data"]
    assert retrieved["order"]["statusCode"] == "CONFIRMED"


def test_a_worker_killed_before_the_charge_leaves_a_reservation_the_reconciler_voids(
    api, auth, priced, clock, monkeypatch, no_cleanup
):
    before = sold()
    die_at(monkeypatch, "orders.money.intents.intent_charge")
    with pytest.raises(Killed):
        book(api, auth, booking_body(priced, payment=CARD))
    assert Order.objects.get().status == OrderStatus.PENDING
    assert sold() != before
    monkeypatch.undo()

    clock.advance(minutes=3)
    call_command("reconcile_payments")

    assert not Order.objects.exists()
    assert sold() == before
    assert PaymentIntent.objects.get().state == PaymentIntent.State.VOID
    assert ledger() == []
    # The offer can be booked again.
    assert book(api, auth, booking_body(priced, payment=CARD)).status_code == 201


def test_a_charge_for_a_change_that_never_committed_is_refunded(
    api, auth, priced, clock, monkeypatch, no_cleanup
):
    order = book(api, auth, booking_body(priced, payment=CARD)).json()["data"]
    order_id = order["order"]["orderId"]
    seat_data = seats(api, auth, order_id).json()["data"]
    unit, row = open_seat(seat_data["legSeatMaps"][0], order["pax"][0]["paxId"])
    entry = {
        "type": "AcceptOffer",
        "offerId": seat_data["offerId"],
        "offerItemId": row["offerItemId"],
        "passengerIds": [row["paxRefId"]],
        "seat": {"row": int(unit["designator"][:-1]), "column": unit["designator"][-1]},
    }
    die_at(monkeypatch, "orders.servicing.changes.services_write")
    with pytest.raises(Killed):
        change(api, auth, order_id, {"changes": [entry], "payment": CARD})
    monkeypatch.undo()
    intent = PaymentIntent.objects.get(purpose="CHANGE")
    amount = intent.amount

    clock.advance(minutes=3)
    assert payments_reconcile() == {"refunded": 1}

    intent.refresh_from_db()
    assert intent.state == PaymentIntent.State.REFUNDED
    assert ledger()[-2:] == [("CHARGE", intent.ref, amount), ("REFUND", intent.ref, amount)]
    stored = Order.objects.get(order_id=order_id)
    assert stored.paid == stored.total  # the order never took the money
    assert stored.events.filter(kind="payment_refunded").exists()
    assert payments_reconcile() == {}  # settled once


def test_a_gateway_timeout_is_settled_by_what_the_gateway_holds(api, auth, priced, clock):
    response = book(
        api, auth, booking_body(priced, payment={**CARD, "cardNumber": "4000000000000119"})
    )

    error_of(response, 503, "ERR-6005", "payment")
    assert not Order.objects.exists()
    intent = PaymentIntent.objects.get()
    assert intent.state == PaymentIntent.State.PENDING
    clock.advance(minutes=3)
    assert payments_reconcile() == {"void": 1}
