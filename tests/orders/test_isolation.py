"""Every order read and write is scoped to the acting seller first, then to the key's
agency code (DESIGN.md §11 "Isolation"; SPEC.md §4.8): list, retrieve, seat maps,
service lists and changes."""

import pytest

from orders.models import Order, OrderStatus
from tests.conftest import bearer, error_of, token_for
from tests.orders.conftest import book, booking_body
from tests.orders.factories import order_with_trip
from tests.sellers.factories import ApiKeyFactory, PartnerFactory, SellerFactory

pytestmark = pytest.mark.django_db


def listed(api, auth):
    response = api.get("/json/v1/orders", **auth)
    assert response.status_code == 200, response.content
    return [o["recordLocator"] for o in response.json()["data"]["orders"]]


def test_a_partner_key_acting_for_another_seller_lists_none_of_the_first_sellers_orders(
    api, partner_key, default_seller, other_seller, clock
):
    mine = order_with_trip(seller=default_seller)
    theirs = order_with_trip(seller=other_seller)
    as_default = bearer(token_for(api, partner_key.raw))
    as_other = bearer(token_for(api, partner_key.raw, other_seller.pk))

    assert listed(api, as_default) == [mine.record_locator]
    assert listed(api, as_other) == [theirs.record_locator]


def test_another_partners_key_with_the_same_agency_code_lists_nothing(
    api, partner_key, default_seller, clock
):
    order_with_trip(seller=default_seller)
    stranger = SellerFactory(partner=PartnerFactory(code="EVIL"), code="EVIL1", is_default=True)
    copycat = ApiKeyFactory(partner=stranger.partner, agency_code=partner_key.key.agency_code)

    assert listed(api, bearer(token_for(api, copycat.raw))) == []


@pytest.fixture
def hold(api, auth, priced):
    response = book(api, auth, booking_body(priced))
    assert response.status_code == 201, response.content
    return response.json()["data"]["order"]


def reads_and_writes(api, auth, order_id):
    """Every request on one order a key may send, with its answer."""
    return {
        "retrieve": api.get(f"/json/v1/orders/{order_id}", **auth),
        "seats": api.post(f"/json/v1/orders/{order_id}/seats", format="json", **auth),
        "services": api.post(f"/json/v1/orders/{order_id}/services", format="json", **auth),
        "change": api.patch(
            f"/json/v1/orders/{order_id}",
            {"changes": [{"type": "CancelUnpaidOrder"}]},
            format="json",
            **auth,
        ),
    }


@pytest.mark.parametrize("by", ["orderId", "recordLocator"])
def test_a_key_of_another_agency_of_the_same_seller_gets_not_found(api, auth, hold, partner, by):
    other_agency = bearer(token_for(api, ApiKeyFactory(partner=partner, agency_code="ELSEAGT").raw))

    for response in reads_and_writes(api, other_agency, hold[by]).values():
        error_of(response, 404, "ERR-4000")

    assert Order.objects.get(order_id=hold["orderId"]).status == OrderStatus.ONHOLD


def test_a_key_without_an_agency_code_acts_for_the_whole_seller(api, auth, hold, partner):
    seller_wide = bearer(token_for(api, ApiKeyFactory(partner=partner).raw))

    answers = reads_and_writes(api, seller_wide, hold["orderId"])

    assert {name: r.status_code for name, r in answers.items()} == {
        "retrieve": 200,
        "seats": 200,
        "services": 200,
        "change": 200,
    }
    assert Order.objects.get(order_id=hold["orderId"]).status == OrderStatus.CANCELLED


def test_another_sellers_key_gets_not_found_for_every_request(
    api, auth, hold, partner_key, other_seller
):
    as_other = bearer(token_for(api, partner_key.raw, other_seller.pk))

    for response in reads_and_writes(api, as_other, hold["recordLocator"]).values():
        error_of(response, 404, "ERR-4000")

    assert Order.objects.get(order_id=hold["orderId"]).status == OrderStatus.ONHOLD
