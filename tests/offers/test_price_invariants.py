"""Money invariants on every response of random valid searches and their pricing
(DESIGN.md §4): total = base + taxes + fees; items sum to the offer; count x
per-passenger price sums to the item."""

from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.offers.conftest import search_body
from tests.offers.invariants import assert_item, assert_offer

pytestmark = pytest.mark.django_db

MARKETS = [
    ("PVD", "CHS"),
    ("CHS", "PVD"),
    ("PVD", "TPA"),
    ("CHS", "TPA"),
    ("PVD", "MSY"),
    ("PVD", "CLT"),
]


@st.composite
def searches(draw):
    days = sorted(draw(st.lists(st.integers(0, 59), min_size=1, max_size=3)))
    directions = [(*draw(st.sampled_from(MARKETS)), day) for day in days]
    adults = draw(st.integers(1, 4))
    passengers = (
        [{"type": "ADT"}] * adults
        + [{"type": "CHD"}] * draw(st.integers(0, 3))
        + [{"type": "INF"}] * draw(st.integers(0, adults))
    )
    cabin = draw(st.sampled_from([None, "Y", "C"]))
    return directions, draw(st.permutations(passengers)), cabin


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(search=searches())
def test_every_offer_and_quote_keeps_the_money_invariants(api, auth, network, search):
    directions, passengers, cabin = search
    extra = {"cabinTypeCode": cabin} if cabin else {}
    body = search_body(
        *[(o, d, network + timedelta(days=n)) for o, d, n in directions],
        passengers=list(passengers),
        **extra,
    )

    flat = api.post("/json/v1/offers", body, format="json", **auth)
    by_journey = api.post("/json/v1/offers/byJourney", body, format="json", **auth)

    assert flat.status_code == by_journey.status_code == 201
    offers = flat.json()["data"]["offers"]
    for offer in offers:
        assert_offer(offer)
        assert offer["offerItems"][0]["seatsRemaining"] <= 9
    for direction in by_journey.json()["data"]["directions"]:
        for journey in direction["journeys"]:
            for option in journey["options"]:
                assert_item(option)

    # One offer per direction, each a different journey (the same journey twice is
    # refused with ERR-3003, as a search listing one market and date twice allows).
    chosen, journeys = {}, set()
    for offer in offers:
        item = offer["offerItems"][0]
        if item["legIndex"] not in chosen and item["flight"]["journeyId"] not in journeys:
            chosen[item["legIndex"]] = offer
            journeys.add(item["flight"]["journeyId"])
    if chosen:
        selections = [
            {"offerId": o["offerId"], "offerItemIds": [o["offerItems"][0]["offerItemId"]]}
            for o in chosen.values()
        ]
        quote = api.post(
            "/json/v1/offers/price",
            {"selections": selections, "passengers": list(passengers)},
            format="json",
            **auth,
        )
        assert quote.status_code == 201, quote.content
        assert_offer(quote.json()["data"]["offer"])
