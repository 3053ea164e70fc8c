"""Each payment, change and reshop instruction type takes only its own members: another
type's member is ERR-1005 naming it, never silently dropped (DESIGN.md §11)."""

import pytest
import yaml

from orders.models import Order, Service
from tests.conftest import error_of
from tests.orders.conftest import CARD, HOLD, book, booking_body
from tests.orders.test_cancel import journey_refs

pytestmark = pytest.mark.django_db


def test_a_hold_refuses_card_fields_and_books_nothing(api, auth, priced):
    payment = {**HOLD, "cardNumber": "4111111111111111"}

    error = error_of(
        book(api, auth, booking_body(priced, payment=payment)),
        422,
        "ERR-1005",
        "payment.cardNumber",
    )

    assert "Hold" in error["description"] or "Hold" in str(error.get("fields"))
    assert not Order.objects.exists()


def test_a_card_payment_refuses_a_credit_code(api, auth, priced):
    payment = {**CARD, "creditCode": "AC-1"}

    error_of(
        book(api, auth, booking_body(priced, payment=payment)),
        422,
        "ERR-1005",
        "payment.creditCode",
    )
    assert not Order.objects.exists()


def test_an_airline_credit_refuses_top_level_card_fields(api, auth, priced):
    payment = {"type": "AirlineCredit", "creditCode": "AC-1", "cardNumber": "4111111111111111"}

    error_of(
        book(api, auth, booking_body(priced, payment=payment)),
        422,
        "ERR-1005",
        "payment.cardNumber",
    )


def test_a_payment_type_we_do_not_take_is_still_err_6000(api, auth, priced):
    payment = {"type": "Cash", "cardNumber": "4111111111111111"}

    error_of(book(api, auth, booking_body(priced, payment=payment)), 422, "ERR-6000")


def test_cancel_journey_refuses_a_seat_and_cancels_nothing(api, auth, priced):
    view = book(api, auth, booking_body(priced, payment=CARD)).json()["data"]
    order_id = view["order"]["orderId"]
    [journey, *_] = journey_refs(view)

    response = api.patch(
        f"/json/v1/orders/{order_id}",
        {
            "changes": [
                {
                    "type": "CancelJourney",
                    "journeyRef": journey,
                    "seat": {"row": 12, "column": "A"},
                }
            ]
        },
        format="json",
        **auth,
    )

    error_of(response, 422, "ERR-1005", "changes.seat")
    order = Order.objects.get(order_id=order_id)
    assert not order.items.filter(status="CANCELLED").exists()
    assert not Service.objects.filter(order=order).exclude(status="ACTIVE").exists()


def test_confirm_hold_refuses_another_changes_member(api, auth, priced):
    view = book(api, auth, booking_body(priced, payment=HOLD)).json()["data"]
    order_id = view["order"]["orderId"]

    response = api.patch(
        f"/json/v1/orders/{order_id}",
        {"changes": [{"type": "ConfirmHold", "offerId": "OF-1"}], "payment": CARD},
        format="json",
        **auth,
    )

    error_of(response, 422, "ERR-1005", "changes.offerId")
    assert Order.objects.get(order_id=order_id).status == "ONHOLD"


def test_a_cancel_order_reshop_refuses_itinerary_members(api, auth, priced):
    view = book(api, auth, booking_body(priced, payment=CARD)).json()["data"]
    order_id = view["order"]["orderId"]

    response = api.post(
        f"/json/v1/orders/{order_id}/reshop",
        {"instruction": {"type": "CancelOrder", "cabinTypeCode": "C"}},
        format="json",
        **auth,
    )

    error_of(response, 422, "ERR-1005", "instruction.cabinTypeCode")


def test_the_openapi_variants_list_only_their_own_members(api):
    document = yaml.safe_load(api.get("/json/v1/schema").content)
    schemas = document["components"]["schemas"]

    assert set(schemas["HoldPaymentRequest"]["properties"]) == {"type"}
    assert "cardNumber" in schemas["CreditCardPaymentRequest"]["properties"]
    assert "creditCode" not in schemas["CreditCardPaymentRequest"]["properties"]
    assert set(schemas["CancelJourneyChangeRequest"]["properties"]) == {"type", "journeyRef"}
    assert set(schemas["CancelOrderInstructionRequest"]["properties"]) == {"type"}
