"""At most nine passengers who take a seat per search, price and booking; lap infants are
not counted (issue 13 point 11; DESIGN.md §11 "Party size"). A longer list is refused by
the request's shape before any per-passenger work (issue 14 item 6)."""

from datetime import timedelta

import pytest

from tests.conftest import error_of
from tests.offers.conftest import search_body
from tests.orders.conftest import book, booking_body, price_offer

pytestmark = pytest.mark.django_db

NINE_AND_THEIR_INFANTS = [{"type": "ADT"}] * 5 + [{"type": "CHD"}] * 4 + [{"type": "INF"}] * 5
TEN = [{"type": "ADT"}] * 6 + [{"type": "CHD"}] * 4


def search(api, auth, day, party):
    return api.post(
        "/json/v1/offers", search_body(("PVD", "CHS", day), passengers=party), format="json", **auth
    )


def test_nine_seated_with_their_lap_infants_search_price_and_book(api, auth, travel_day):
    priced = price_offer(api, auth, travel_day, party=NINE_AND_THEIR_INFANTS)

    response = book(api, auth, booking_body(priced))

    assert response.status_code == 201, response.content
    assert len(response.json()["data"]["pax"]) == 14


def test_ten_seated_are_refused_at_search(api, auth, travel_day):
    error = error_of(search(api, auth, travel_day, TEN), 422, "ERR-1005", "passengers")
    assert "At most 9" in error["description"]


def test_ten_seated_are_refused_at_price_and_at_the_offer_seat_map(api, auth, travel_day):
    found = search(api, auth, travel_day, [{"type": "ADT"}]).json()["data"]["offers"][0]
    item_ids = [found["offerItems"][0]["offerItemId"]]

    priced = api.post(
        "/json/v1/offers/price",
        {
            "selections": [{"offerId": found["offerId"], "offerItemIds": item_ids}],
            "passengers": TEN,
        },
        format="json",
        **auth,
    )
    seat_map = api.post(
        f"/json/v1/offers/{found['offerId']}/seats",
        {"offerItemIds": item_ids, "passengers": TEN},
        format="json",
        **auth,
    )

    error_of(priced, 422, "ERR-1005", "passengers")
    error_of(seat_map, 422, "ERR-1005", "passengers")


def test_ten_seated_are_refused_at_create_order(api, auth, travel_day):
    priced = price_offer(api, auth, travel_day, party=[{"type": "ADT"}] * 9)
    body = booking_body(priced)
    body["passengers"].append(
        {"passengerId": "CHD-1", "type": "CHD", "name": {"givenName": "Ten", "surname": "Th"}}
    )

    error_of(book(api, auth, body), 422, "ERR-1005", "passengers")


def test_a_huge_party_is_refused_by_its_shape_at_once(api, auth, travel_day):
    party = [{"type": "ADT", "paxId": f"P{n}"} for n in range(1_000)]

    response = search(api, auth, travel_day + timedelta(days=1), party)

    # The list's length is refused before its items are read: the one message is the
    # bound's, none of them names a passenger (20,000 duplicate checks took seconds).
    error = error_of(response, 422, "ERR-1005", "passengers")
    assert error["fields"] == {"passengers": "Ensure this field has no more than 18 elements."}


def test_a_party_of_more_objects_than_a_body_may_hold_is_refused_unparsed(api, auth, travel_day):
    party = [{"type": "ADT", "paxId": f"P{n}"} for n in range(20_000)]

    response = search(api, auth, travel_day + timedelta(days=1), party)

    # Issue 28: a body of more than 2,000 objects and arrays is refused before parsing.
    error = error_of(response, 422, "ERR-1005")
    assert "more than 2,000 objects and arrays" in error["description"]
