"""Money that moved outside this service, in the bookings list: a payment the cardholder
disputed and a refund made at the payment provider are flagged in the status column, as
a schedule change is, and each has a filter (DESIGN.md §10, §11 "Payment providers")."""

from decimal import Decimal

import pytest

from orders.models import Order, Payment
from tests.orders.test_admin import CHANGELIST, listed
from tests.orders.test_stripe import (  # noqa: F401 - stripe_gateway, a fixture
    dispute_event,
    paid_booking,
    refunded_event,
    signed,
    stripe_gateway,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def provider(stripe_gateway):  # noqa: F811
    """The fake Stripe server, the gateway set to it."""
    return stripe_gateway


def status_cell(client, order: Order) -> str:
    """The status column of the order's row in the bookings list."""
    page = client.get(CHANGELIST, {"q": order.record_locator})
    [row] = page.context["cl"].result_list
    return page.context["cl"].model_admin.flagged_status(row)


def test_a_disputed_payment_is_flagged_and_filtered(api, auth, priced, provider, admin_client):
    payment = paid_booking(api, auth, priced)
    assert listed(admin_client, {"disputed": "yes"}) == set()

    told = signed(api, dispute_event(payment), provider.webhook_secret)

    assert told.status_code == 200
    order = payment.order
    assert "CONFIRMED, payment disputed: needs_response (fraudulent)" in status_cell(
        admin_client, order
    )
    assert "&#9888;" in admin_client.get(CHANGELIST).content.decode()
    assert listed(admin_client, {"disputed": "yes"}) == {order.record_locator}
    assert listed(admin_client, {"refunded_outside": "yes"}) == set()
    booking = admin_client.get(f"{CHANGELIST}{order.pk}/change/").content.decode()
    assert "CONFIRMED, payment disputed: needs_response (fraudulent)" in booking


def test_a_refund_made_at_the_provider_is_flagged_with_its_amount_and_filtered(
    api, auth, priced, provider, admin_client
):
    payment = paid_booking(api, auth, priced)
    provider.post("/v1/refunds", payment_intent=payment.gateway_reference, amount=2500)

    told = signed(api, refunded_event(provider, payment, "evt_out_1"), provider.webhook_secret)

    assert told.status_code == 200
    order = Order.objects.get(pk=payment.order_id)
    assert order.refunded_outside == Decimal("25.00")
    assert status_cell(admin_client, order) == (
        '<strong style="color: var(--error-fg)">&#9888; CONFIRMED, 25.00 refunded outside</strong>'
    )
    assert listed(admin_client, {"refunded_outside": "yes"}) == {order.record_locator}
    assert listed(admin_client, {"disputed": "yes"}) == set()


def test_a_booking_with_neither_is_not_flagged(api, auth, priced, admin_client):
    payment = paid_booking(api, auth, priced)

    assert status_cell(admin_client, payment.order) == "CONFIRMED"
    assert Payment.objects.get().dispute == ""
