"""Fees and penalties an order is charged are in its price and documented (issue 25 item
7): a name change (ServiceFee NCF) and a cancellation penalty (PenaltyFee CXL) appear in
the order view's totalPrice.fees and fees[] with an EMD number, and what was paid
reconciles with totalPrice plus what `totals` explains."""

from datetime import timedelta
from decimal import Decimal

import pytest

from orders.models import OrderFee, Service
from tests.orders.conftest import CARD, HOLD
from tests.orders.test_cancel import quote_then_cancel_all
from tests.orders.test_exchange import booked, money_adds_up, reshop

pytestmark = pytest.mark.django_db


def amount(money) -> Decimal:
    return Decimal(str(money["amount"]))


def reconciles(view):
    """charged - refunded = totalPrice.total + retained + credited, and every fee of
    fees[] is a line of totalPrice.fees."""
    header = view["order"]
    totals = header["totals"]
    paid = amount(totals["charged"]) - amount(totals["refunded"])
    assert paid == amount(header["totalPrice"]["total"]) + amount(totals["retained"]) + amount(
        totals["credited"]
    )
    lines = [(f["type"], f.get("code"), amount(f["amount"])) for f in header["totalPrice"]["fees"]]
    for fee in view["fees"]:
        assert (fee["type"], fee["code"], amount(fee["amount"])) in lines


def test_a_name_change_fee_is_in_the_price_with_an_emd(api, auth, network, clock):
    day = network + timedelta(days=10)
    order = booked(api, auth, day, bundle="Nice")
    order_id = order["order"]["orderId"]
    pax = order["pax"][0]["paxId"]
    before = amount(order["order"]["totalPrice"]["total"])
    quoted = reshop(
        api, auth, order_id, {"type": "NameChange", "paxRefId": pax, "surname": "Byron"}
    ).json()["data"]["nameChange"]["fee"]

    response = api.patch(
        f"/json/v1/orders/{order_id}",
        {
            "changes": [
                {
                    "type": "UpdatePassenger",
                    "passengerId": pax,
                    "patch": {"name": {"surname": "Byron"}},
                }
            ],
            "payment": CARD,
        },
        format="json",
        **auth,
    )

    assert response.status_code == 200, response.content
    view = response.json()["data"]
    [fee] = view["fees"]
    assert (fee["type"], fee["code"], fee["paxRefId"]) == ("ServiceFee", "NCF", pax)
    assert amount(fee["amount"]) == amount(quoted) == Decimal("75.00")
    assert len(fee["emdNumber"]) == 13
    assert fee["emdNumber"].isdigit()
    assert amount(view["order"]["totalPrice"]["total"]) == before + amount(quoted)
    assert amount(view["order"]["totals"]["retained"]) == 0
    reconciles(view)
    row = OrderFee.objects.get(order__order_id=order_id)
    assert (row.amount, row.emd_number) == (Decimal("75.00"), fee["emdNumber"])
    # Its document number is its own: no service or ticket shares it.
    assert not Service.objects.filter(emd_number=row.emd_number).exists()
    order_row = money_adds_up(order_id)
    assert order_row.retained == Decimal("75.00")
    retrieved = api.get(f"/json/v1/orders/{order_id}", **auth).json()["data"]
    assert retrieved["fees"] == view["fees"]


def test_a_cancellation_penalty_is_the_cancelled_orders_price(api, auth, network, clock):
    day = network + timedelta(days=5)
    view = booked(api, auth, day, bundle="No Flex")
    total = amount(view["order"]["totalPrice"]["total"])

    quoted, after = quote_then_cancel_all(api, auth, view)

    assert after["order"]["statusCode"] == "CANCELLED"
    [fee] = after["fees"]
    assert (fee["type"], fee["code"]) == ("PenaltyFee", "CXL")
    assert amount(fee["amount"]) == amount(quoted["cancellation"]["penaltyAmount"]) == total
    assert len(fee["emdNumber"]) == 13
    assert amount(after["order"]["totalPrice"]["total"]) == total
    reconciles(after)
    assert money_adds_up(view["order"]["orderId"]).retained == total


def test_an_unpaid_hold_cancelled_has_no_fee(api, auth, network, clock):
    day = network + timedelta(days=10)
    view = booked(api, auth, day, payment=HOLD)

    _quoted, after = quote_then_cancel_all(api, auth, view)

    assert after["fees"] == []
    assert amount(after["order"]["totalPrice"]["total"]) == 0
    assert not OrderFee.objects.filter(order__order_id=view["order"]["orderId"]).exists()
