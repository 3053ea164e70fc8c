"""Agency scope (DESIGN.md §11 "Agency scope"): where a key's agency code narrows the
orders it sees, it narrows what is derived from them too. Three keys of one seller: one
of agency AGT001, one of AGT9, one without an agency code (seller-wide). A key with an
agency code reads and spends only what was made under that code; a seller-wide key
reads and spends all of its seller's; anyone else gets the same answer as for an
unknown offer or credit (ERR-3000, ERR-6002), so nothing says it exists."""

from datetime import timedelta
from decimal import Decimal

import pytest

from airline.api import clock as service_clock
from orders.models import AirlineCredit, Order, OrderStatus
from orders.money.credits import credit_issue
from tests.conftest import bearer, error_of, token_for
from tests.ndc.conftest import ndc_error_of, post, xml_of
from tests.ndc.test_ancillaries import offer_request, priced_in_xml
from tests.offers.conftest import search_body
from tests.orders.conftest import PARTY, book, booking_body, price_offer
from tests.orders.factories import OrderFactory
from tests.orders.test_credit_payment import confirm_hold
from tests.sellers.factories import ApiKeyFactory

pytestmark = pytest.mark.django_db

AGENCIES = ("AGT001", "AGT9", "")  # "" is the seller-wide key


@pytest.fixture
def keys(api, partner, default_seller, network):
    """Bearer headers of each key of the matrix, all acting for the default seller."""
    return {
        agency: bearer(token_for(api, ApiKeyFactory(partner=partner, agency_code=agency).raw))
        for agency in AGENCIES
    }


@pytest.fixture
def day(network):
    return network + timedelta(days=5)


def may_see(reader: str, maker: str) -> bool:
    return reader == "" or reader == maker


def shopped(api, auth, day):
    """The first offer of a PVD-CHS search, as a price selection."""
    found = api.post(
        "/json/v1/offers", search_body(("PVD", "CHS", day), passengers=PARTY), format="json", **auth
    )
    assert found.status_code == 201, found.content
    offer = found.json()["data"]["offers"][0]
    return {"offerId": offer["offerId"], "offerItemIds": [offer["offerItems"][0]["offerItemId"]]}


def uses_of_a_shopping_offer(api, auth, selection):
    offer_id, body = selection["offerId"], {"offerItemIds": selection["offerItemIds"]}
    return {
        "price": api.post(
            "/json/v1/offers/price",
            {"selections": [selection], "passengers": PARTY},
            format="json",
            **auth,
        ),
        "seats": api.post(f"/json/v1/offers/{offer_id}/seats", body, format="json", **auth),
        "services": api.post(f"/json/v1/offers/{offer_id}/services", body, format="json", **auth),
    }


def uses_of_a_priced_offer(api, auth, priced):
    offer = priced["offer"]
    offer_id = offer["offerId"]
    body = {"offerItemIds": [i["offerItemId"] for i in offer["items"]]}
    return {
        "seats": api.post(f"/json/v1/offers/{offer_id}/seats", body, format="json", **auth),
        "services": api.post(f"/json/v1/offers/{offer_id}/services", body, format="json", **auth),
    }


@pytest.mark.parametrize("maker", AGENCIES)
@pytest.mark.parametrize("reader", AGENCIES)
def test_a_shopping_offer_is_read_only_within_the_agency_it_was_shopped_under(
    api, keys, day, maker, reader, clock
):
    selection = shopped(api, keys[maker], day)

    answers = uses_of_a_shopping_offer(api, keys[reader], selection)

    if may_see(reader, maker):
        assert answers["price"].status_code == 201, answers["price"].content
        assert answers["seats"].status_code == 200, answers["seats"].content
        assert answers["services"].status_code == 200, answers["services"].content
    else:
        error_of(answers["price"], 404, "ERR-3000")
        error_of(answers["seats"], 404, "ERR-3000")
        error_of(answers["services"], 404, "ERR-3000")


@pytest.mark.parametrize("maker", AGENCIES)
@pytest.mark.parametrize("reader", AGENCIES)
def test_a_priced_offer_its_seat_maps_and_its_booking_stay_within_its_agency(
    api, keys, day, maker, reader, clock
):
    priced = price_offer(api, keys[maker], day)

    answers = uses_of_a_priced_offer(api, keys[reader], priced)
    booked = book(api, keys[reader], booking_body(priced))

    if may_see(reader, maker):
        assert answers["seats"].status_code == 200, answers["seats"].content
        assert answers["services"].status_code == 200, answers["services"].content
        assert booked.status_code == 201, booked.content
        order = Order.objects.get(order_id=booked.json()["data"]["order"]["orderId"])
        assert order.agency_code == reader  # the order is the booking key's agency's
    else:
        error_of(answers["seats"], 404, "ERR-3000")
        error_of(answers["services"], 404, "ERR-3000")
        error_of(booked, 404, "ERR-3000")
        assert not Order.objects.exists()


def credit_of(agency: str, seller, amount: str = "9000.00") -> AirlineCredit:
    """A credit given back by a cancelled order booked under `agency`."""
    source = OrderFactory(seller=seller, agency_code=agency, status=OrderStatus.CANCELLED)
    return credit_issue(source, Decimal(amount), actor="test", now=service_clock.now())


@pytest.mark.parametrize("issuer", AGENCIES)
@pytest.mark.parametrize("payer", AGENCIES)
def test_an_airline_credit_is_spent_only_within_the_agency_of_its_order(
    api, keys, day, default_seller, issuer, payer, clock
):
    given = credit_of(issuer, default_seller)
    priced = price_offer(api, keys[payer], day)
    payment = {"type": "AirlineCredit", "creditCode": given.code}

    response = book(api, keys[payer], booking_body(priced, payment=payment))

    given.refresh_from_db()
    if may_see(payer, issuer):
        assert response.status_code == 201, response.content
        assert response.json()["data"]["order"]["statusCode"] == "CONFIRMED"
        assert given.remaining < given.amount
    else:
        error_of(response, 400, "ERR-6002", "payment.creditCode")
        assert given.remaining == given.amount
        assert not given.payments.exists()
        assert not Order.objects.exclude(pk=given.source_order_id).exists()


def test_another_agencys_credit_does_not_confirm_a_hold(api, keys, day, default_seller, clock):
    given = credit_of("AGT001", default_seller)
    priced = price_offer(api, keys["AGT9"], day)
    held = book(api, keys["AGT9"], booking_body(priced))
    assert held.status_code == 201, held.content
    order_id = held.json()["data"]["order"]["orderId"]

    response = confirm_hold(
        api, keys["AGT9"], order_id, {"type": "AirlineCredit", "creditCode": given.code}
    )

    error_of(response, 400, "ERR-6002", "payment.creditCode")
    assert Order.objects.get(order_id=order_id).status == OrderStatus.ONHOLD
    given.refresh_from_db()
    assert given.remaining == given.amount


@pytest.mark.parametrize("reader", AGENCIES)
def test_over_ndc_another_agencys_priced_offer_has_no_seats_or_services(
    api, keys, day, reader, clock
):
    offer_id, item_ids = priced_in_xml(api, keys["AGT001"], day)

    for message, endpoint, root in (
        ("SeatAvailabilityRQ", "SeatAvailability", "IATA_SeatAvailabilityRS"),
        ("ServiceListRQ", "ServiceList", "IATA_ServiceListRS"),
    ):
        response = post(api, endpoint, offer_request(message, offer_id, item_ids), keys[reader])
        if may_see(reader, "AGT001"):
            xml_of(response, 200)
        else:
            ndc_error_of(response, 404, "ERR-3000", root)
