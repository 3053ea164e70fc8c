"""Booking helpers: a priced offer on the small test network (tests/offers/conftest.py)
and create-order bodies."""

from datetime import timedelta

import pytest

from tests.offers import conftest as shopping
from tests.offers.conftest import search_body

# The shopping tests' network and bearer headers serve bookings too.
network = shopping.network
auth = shopping.auth

PARTY = [{"type": "ADT"}, {"type": "ADT"}, {"type": "CHD"}]
CARD = {
    "type": "CreditCard",
    "cardType": "VI",
    "cardNumber": "4111111111111111",
    "expiryDate": "1230",
    "securityCode": "737",
    "payer": {"name": {"givenName": "Ada", "surname": "Lovelace"}},
}
HOLD = {"type": "Hold"}
NAMES = {
    "ADT-1": ("Ada", "Lovelace"),
    "ADT-2": ("Charles", "Babbage"),
    "ADT-3": ("Mary", "Somerville"),
    "CHD-1": ("Annabella", "King"),
    "INF-1": ("Byron", "King"),
}


def price_offer(
    api, auth, day, *, origin="PVD", destination="CHS", back=None, party=None, flight=None
):
    """The priced offer (its `data`) of the first nonstop (or the flight numbered
    `flight`) each way."""
    party = party or PARTY
    directions = [(origin, destination, day)]
    if back is not None:
        directions.append((destination, origin, back))
    found = api.post(
        "/json/v1/offers", search_body(*directions, passengers=party), format="json", **auth
    )
    assert found.status_code == 201, found.content
    selections = []
    for leg_index in range(len(directions)):
        offers = [
            o
            for o in found.json()["data"]["offers"]
            if o["offerItems"][0]["legIndex"] == leg_index
            and (flight is None or o["offerItems"][0]["flight"]["flightNumbers"] == [f"MX{flight}"])
        ]
        offer = offers[0]
        selections.append(
            {"offerId": offer["offerId"], "offerItemIds": [offer["offerItems"][0]["offerItemId"]]}
        )
    priced = api.post(
        "/json/v1/offers/price",
        {"selections": selections, "passengers": party},
        format="json",
        **auth,
    )
    assert priced.status_code == 201, priced.content
    return priced.json()["data"]


def booking_body(priced, *, payment=None, **overrides):
    """A valid create-order body for the priced offer: every passenger named, the lead
    adult carrying the first infant."""
    pax = priced["pax"]
    infants = [p["paxId"] for p in pax if p["ptc"] == "INF"]
    passengers = []
    for p in pax:
        given, surname = NAMES.get(p["paxId"], ("Pat", "Doe"))
        passenger = {
            "passengerId": p["paxId"],
            "type": p["ptc"],
            "name": {"givenName": given, "surname": surname},
        }
        if p["ptc"] == "ADT" and infants:
            passenger["infantPassengerId"] = infants.pop(0)
        passengers.append(passenger)
    body = {
        "offerId": priced["offer"]["offerId"],
        "offerItemIds": [i["offerItemId"] for i in priced["offer"]["items"]],
        "passengers": passengers,
        "contact": {"emailAddress": "ada@example.com", "phoneNumber": "+1 401 555 0123"},
        "payment": payment or HOLD,
    }
    body.update(overrides)
    return body


def book(api, auth, body, **headers):
    return api.post("/json/v1/orders", body, format="json", **auth, **headers)


def legs_trip(trips: list[list[str]]) -> list[str]:
    """The one round trip of `trips` (tests.conftest.round_trips_sent) that wrote the
    legs."""
    [trip] = [trip for trip in trips if any('INTO "orders_leg"' in sql for sql in trip)]
    return trip


@pytest.fixture
def travel_day(network):
    """A day far enough out for holds (DESIGN.md §8: none within 24 h of departure)."""
    return network + timedelta(days=5)


@pytest.fixture
def priced(api, auth, travel_day, clock):
    """A priced PVD-CHS round trip for two adults and a child."""
    return price_offer(api, auth, travel_day, back=travel_day + timedelta(days=7))


@pytest.fixture
def hold(api, auth, priced):
    """`priced` booked on hold: create order's `data`."""
    response = book(api, auth, booking_body(priced))
    assert response.status_code == 201, response.content
    return response.json()["data"]
