"""Create order paid with airline credit (DESIGN.md §11 "Airline credit", "Payments"):
in full, or in part with a card for the rest in the same request; the credit spent in
the booking's transaction, never beyond what it holds, and given back when the card
fails."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection

from airline.api import clock as service_clock
from airline.network.models import LegInventory
from orders.models import (
    AirlineCredit,
    Coupon,
    Order,
    OrderEvent,
    OrderStatus,
    Payment,
    PaymentIntent,
    Ticket,
)
from orders.money.credits import credit_issue
from tests.conftest import error_of
from tests.gateways import provider_charges
from tests.orders.conftest import CARD, book, booking_body
from tests.orders.factories import credit_source
from tests.orders.test_concurrency import priced_many, race

# Both gateways, the provider's books held against the orders' after each test (issue 26).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("card_gateway")]

CARD_FIELDS = {k: v for k, v in CARD.items() if k != "type"}


def issue(seller, amount, *, days_ago=0):
    """A credit of `seller`, given back by an earlier (cancelled) order of theirs."""
    now = service_clock.now() - timedelta(days=days_ago)
    source = credit_source(amount=Decimal(amount), seller=seller)
    return credit_issue(source, Decimal(amount), actor="test", now=now)


def credit(code, **card):
    payment = {"type": "AirlineCredit", "creditCode": code}
    if card:
        payment["card"] = {**CARD_FIELDS, **card}
    return payment


def total_of(priced):
    return Decimal(str(priced["offer"]["totalPrice"]["total"]["amount"]))


def sold():
    return sorted(LegInventory.objects.values_list("leg_id", "rbd", "sold"))


def assert_untouched(code, amount):
    row = AirlineCredit.objects.get(code=code)
    assert row.remaining == Decimal(amount)
    assert not row.payments.exists()


def test_a_credit_covering_the_total_confirms_and_tickets(api, auth, priced, default_seller, clock):
    given = issue(default_seller, "9000.00")
    total = total_of(priced)

    response = book(api, auth, booking_body(priced, payment=credit(given.code)))

    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert data["order"]["statusCode"] == "CONFIRMED"
    [payment] = data["payments"]
    assert payment["method"] == {"type": "Credit", "creditCode": given.code}
    assert Decimal(str(payment["amount"]["amount"])) == total
    order = Order.objects.get(order_id=data["order"]["orderId"])
    assert order.status == OrderStatus.CONFIRMED
    assert order.paid == total
    row = Payment.objects.get(order=order)
    assert (row.method, row.credit_id, row.amount) == (Payment.Method.CREDIT, given.pk, total)
    given.refresh_from_db()
    assert given.remaining == Decimal("9000.00") - total
    assert Ticket.objects.filter(order=order).count() == 3
    assert len(data["tickets"]) == Coupon.objects.filter(ticket__order=order).count()
    # No card was involved: no intent, nothing at the gateway.
    assert not PaymentIntent.objects.exists()
    assert provider_charges() == []
    kinds = list(
        OrderEvent.objects.filter(order=order).order_by("pk").values_list("kind", flat=True)
    )
    assert kinds == ["created", "credit_redeemed", "paid"]
    # What a read returns is what create order answered.
    assert api.get(f"/json/v1/orders/{order.order_id}", **auth).json()["data"] == data


def test_a_smaller_credit_and_a_card_pay_together(api, auth, priced, default_seller, clock):
    given = issue(default_seller, "50.00")
    total = total_of(priced)

    response = book(api, auth, booking_body(priced, payment=credit(given.code, cardType="VI")))

    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert data["order"]["statusCode"] == "CONFIRMED"
    assert [p["method"]["type"] for p in data["payments"]] == ["Credit", "CreditCard"]
    order = Order.objects.get(order_id=data["order"]["orderId"])
    assert order.paid == total
    by_method = dict(Payment.objects.filter(order=order).values_list("method", "amount"))
    assert by_method == {"Credit": Decimal("50.00"), "CreditCard": total - Decimal("50.00")}
    given.refresh_from_db()
    assert given.remaining == 0
    intent = PaymentIntent.objects.get()
    assert (intent.state, intent.amount) == (PaymentIntent.State.ATTACHED, total - 50)
    assert provider_charges() == [total - Decimal("50.00")]
    assert Ticket.objects.filter(order=order).count() == 3


def test_a_smaller_credit_without_a_card_is_refused_and_spends_nothing(
    api, auth, priced, default_seller, clock
):
    given = issue(default_seller, "50.00")
    before = sold()

    response = book(api, auth, booking_body(priced, payment=credit(given.code)))

    error_of(response, 400, "ERR-6002", path="payment.card")
    assert_untouched(given.code, "50.00")
    assert not Order.objects.exclude(pk=given.source_order_id).exists()
    assert sold() == before


def test_it_refuses_another_sellers_credit(api, auth, priced, other_seller, clock):
    theirs = issue(other_seller, "9000.00")

    response = book(api, auth, booking_body(priced, payment=credit(theirs.code)))

    error_of(response, 400, "ERR-6002", path="payment.creditCode")
    assert_untouched(theirs.code, "9000.00")


def test_it_refuses_an_expired_credit(api, auth, priced, default_seller, clock):
    old = issue(default_seller, "9000.00", days_ago=400)

    response = book(api, auth, booking_body(priced, payment=credit(old.code)))

    error_of(response, 400, "ERR-6002", path="payment.creditCode")
    assert_untouched(old.code, "9000.00")


@pytest.mark.books_rewritten  # a credit emptied by hand
def test_unknown_foreign_expired_and_empty_codes_read_alike(
    api, auth, travel_day, default_seller, other_seller, clock
):
    from tests.orders.conftest import price_offer

    empty = issue(default_seller, "10.00")
    AirlineCredit.objects.filter(pk=empty.pk).update(remaining=0)
    codes = [
        "MXNOSUCHCODE",
        issue(other_seller, "9000.00").code,
        issue(default_seller, "9000.00", days_ago=400).code,
        empty.code,
    ]
    errors = []
    for code in codes:
        priced = price_offer(api, auth, travel_day)
        errors.append(book(api, auth, booking_body(priced, payment=credit(code))).json()["error"])
    assert {(e["code"], e["description"], e["path"]) for e in errors} == {
        (errors[0]["code"], errors[0]["description"], "payment.creditCode")
    }
    assert errors[0]["code"] == "ERR-6002"


def test_a_declined_card_leaves_the_credit_untouched_and_no_order(
    api, auth, priced, default_seller, clock
):
    given = issue(default_seller, "50.00")
    before = sold()

    response = book(
        api, auth, booking_body(priced, payment=credit(given.code, cardNumber="4000000000000002"))
    )

    error_of(response, 400, "ERR-6002", path="payment")
    assert_untouched(given.code, "50.00")
    assert not Order.objects.exclude(pk=given.source_order_id).exists()
    assert sold() == before
    assert PaymentIntent.objects.get().state == PaymentIntent.State.DECLINED


def test_a_card_timing_out_gives_the_credit_back(api, auth, priced, default_seller, clock):
    given = issue(default_seller, "50.00")

    response = book(
        api, auth, booking_body(priced, payment=credit(given.code, cardNumber="4000000000000119"))
    )

    error_of(response, 503, "ERR-6005")
    assert_untouched(given.code, "50.00")
    assert not Order.objects.exclude(pk=given.source_order_id).exists()


def test_the_card_beside_a_credit_is_checked_like_any_card(
    api, auth, priced, default_seller, clock
):
    given = issue(default_seller, "50.00")

    bad_brand = book(api, auth, booking_body(priced, payment=credit(given.code, cardType="XX")))
    bad_cvv = book(api, auth, booking_body(priced, payment=credit(given.code, securityCode="1")))

    error_of(bad_brand, 422, "ERR-6001", path="payment.card.cardType")
    error_of(bad_cvv, 422, "ERR-1005", path="payment.card.securityCode")
    assert_untouched(given.code, "50.00")


def test_the_card_beside_a_credit_may_say_it_is_a_credit_card(
    api, auth, priced, default_seller, clock
):
    given = issue(default_seller, "50.00")
    total = total_of(priced)

    response = book(api, auth, booking_body(priced, payment=credit(given.code, type="CreditCard")))

    assert response.status_code == 201, response.content
    order = Order.objects.get(order_id=response.json()["data"]["order"]["orderId"])
    by_method = dict(Payment.objects.filter(order=order).values_list("method", "amount"))
    assert by_method == {"Credit": Decimal("50.00"), "CreditCard": total - Decimal("50.00")}


@pytest.mark.parametrize(
    ("extra", "path"),
    [
        ({"type": "Hold"}, "payment.card.type"),
        ({"type": "AirlineCredit"}, "payment.card.type"),
        ({"creditCode": "MXABCDEFGHJK"}, "payment.card.creditCode"),
    ],
)
def test_the_card_beside_a_credit_takes_only_a_credit_cards_fields(
    api, auth, priced, default_seller, clock, extra, path
):
    given = issue(default_seller, "50.00")

    response = book(api, auth, booking_body(priced, payment=credit(given.code, **extra)))

    error_of(response, 422, "ERR-1005", path=path)
    assert_untouched(given.code, "50.00")


def test_a_credit_payment_needs_its_code_and_other_types_are_unsupported(api, auth, priced, clock):
    no_code = book(api, auth, booking_body(priced, payment={"type": "AirlineCredit"}))
    voucher = book(api, auth, booking_body(priced, payment={"type": "Voucher"}))

    error_of(no_code, 422, "ERR-1005")
    error_of(voucher, 422, "ERR-6000", path="payment.type")


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks of PostgreSQL")
def test_bookings_racing_for_one_credit_never_spend_more_than_it_holds(
    api, auth, network, default_seller
):
    priced = priced_many(api, auth, network + timedelta(days=5), 6)
    one = total_of(priced[0])
    # Enough for one booking and half of another: the second pays the rest by card.
    amount = (one * 3 / 2).quantize(Decimal("0.01"))
    given = issue(default_seller, amount)

    responses = race(
        [
            lambda client, p=p: client.post(
                "/json/v1/orders",
                booking_body(p, payment=credit(given.code, cardType="VI")),
                format="json",
                **auth,
            )
            for p in priced
        ]
    )

    statuses = sorted(r.status_code for r in responses)
    assert statuses.count(201) == 2, [r.content for r in responses]
    assert {r.json()["error"]["code"] for r in responses if r.status_code != 201} == {"ERR-6002"}
    given.refresh_from_db()
    spent = sum(given.payments.values_list("amount", flat=True), Decimal(0))
    assert spent == amount
    assert given.remaining == 0
    booked = Order.objects.exclude(pk=given.source_order_id)
    assert booked.count() == 2
    assert all(o.status == OrderStatus.CONFIRMED and o.paid == one for o in booked)


def confirm_hold(api, auth, order_id, payment):
    return api.patch(
        f"/json/v1/orders/{order_id}",
        {"changes": [{"type": "ConfirmHold"}], "payment": payment},
        format="json",
        **auth,
    )


def held(api, auth, priced):
    response = book(api, auth, booking_body(priced))
    assert response.status_code == 201, response.content
    return response.json()["data"]["order"]["orderId"]


def test_a_hold_is_confirmed_with_airline_credit(api, auth, priced, default_seller, clock):
    given = issue(default_seller, "9000.00")
    order_id = held(api, auth, priced)
    total = total_of(priced)

    response = confirm_hold(api, auth, order_id, credit(given.code))

    assert response.status_code == 200, response.content
    assert response.json()["data"]["order"]["statusCode"] == "CONFIRMED"
    order = Order.objects.get(order_id=order_id)
    assert order.paid == total
    [payment] = order.payments.all()
    assert (payment.method, payment.amount, payment.credit_id) == ("Credit", total, given.pk)
    assert AirlineCredit.objects.get(pk=given.pk).remaining == Decimal("9000.00") - total
    assert Ticket.objects.filter(order=order).exists()
    assert provider_charges() == []


def test_a_hold_is_confirmed_with_credit_and_a_card_for_the_rest(
    api, auth, priced, default_seller, clock
):
    given = issue(default_seller, "100.00")
    order_id = held(api, auth, priced)
    total = total_of(priced)

    error_of(confirm_hold(api, auth, order_id, credit(given.code)), 400, "ERR-6002", "payment.card")
    assert_untouched(given.code, "100.00")

    response = confirm_hold(api, auth, order_id, credit(given.code, cardNumber="4111111111111111"))

    assert response.status_code == 200, response.content
    order = Order.objects.get(order_id=order_id)
    assert order.status == "CONFIRMED"
    assert sorted(order.payments.values_list("method", "amount")) == [
        ("Credit", Decimal("100.00")),
        ("CreditCard", total - Decimal("100.00")),
    ]
    assert provider_charges() == [total - Decimal("100.00")]
    assert AirlineCredit.objects.get(pk=given.pk).remaining == 0


def test_another_sellers_credit_does_not_confirm_a_hold(api, auth, priced, other_seller, clock):
    given = issue(other_seller, "9000.00")
    order_id = held(api, auth, priced)

    error_of(
        confirm_hold(api, auth, order_id, credit(given.code)),
        400,
        "ERR-6002",
        "payment.creditCode",
    )
    assert Order.objects.get(order_id=order_id).status == "ONHOLD"
    assert_untouched(given.code, "9000.00")
