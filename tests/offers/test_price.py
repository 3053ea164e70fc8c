"""POST /json/{v}/offers/price (SPEC.md §2.4, §3, §4.5; DESIGN.md §7, §11)."""

from datetime import timedelta

import pytest
from django.test import override_settings

from airline.network.inventory import inventory_sell
from airline.network.models import FlightLeg
from offers.store import OfferOwner, OfferSource, batch_save, new_batch
from tests.conftest import bearer, error_of, token_for
from tests.offers.conftest import search_body
from tests.offers.invariants import amount, assert_offer
from tests.sellers.factories import ApiKeyFactory

pytestmark = pytest.mark.django_db

PARTY = [{"type": "ADT"}, {"type": "ADT"}, {"type": "CHD"}]


@pytest.fixture
def round_trip(api, auth, network, clock):
    """Offers of a PVD-CHS round trip for the party: (outbound offer, return offer)."""
    body = search_body(
        ("PVD", "CHS", network), ("CHS", "PVD", network + timedelta(days=7)), passengers=PARTY
    )
    offers = api.post("/json/v1/offers", body, format="json", **auth).json()["data"]["offers"]
    nonstop = [o for o in offers if len(o["offerItems"][0]["flight"]["segments"]) == 1]
    out = next(o for o in nonstop if o["offerItems"][0]["legIndex"] == 0)
    back = next(o for o in nonstop if o["offerItems"][0]["legIndex"] == 1)
    return out, back


def selection(offer, *item_ids):
    return {
        "offerId": offer["offerId"],
        "offerItemIds": list(item_ids) or [offer["offerItems"][0]["offerItemId"]],
    }


def price(api, auth, *selections, passengers=PARTY):
    return api.post(
        "/json/v1/offers/price",
        {"selections": list(selections), "passengers": passengers},
        format="json",
        **auth,
    )


def test_two_directions_priced_into_one_quote(api, auth, round_trip, clock):
    out, back = round_trip
    clock.advance(minutes=20)

    response = price(api, auth, selection(out), selection(back))

    assert response.status_code == 201
    data = response.json()["data"]
    offer = data["offer"]
    assert offer["offerId"] not in (out["offerId"], back["offerId"])  # stored under a new id
    assert offer["expiresAt"] == (clock.at + timedelta(minutes=30)).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )  # a fresh TTL
    assert data["pax"] == [
        {"paxId": "ADT-1", "ptc": "ADT"},
        {"paxId": "ADT-2", "ptc": "ADT"},
        {"paxId": "CHD-1", "ptc": "CHD"},
    ]
    assert [item["journeyRefIds"] for item in offer["items"]] == [
        [j["journeyId"]] for j in data["journeys"]
    ]
    assert all("flight" not in item for item in offer["items"])  # items do not embed flights
    outbound, inbound = data["journeys"]
    assert (outbound["origin"], inbound["origin"]) == ("PVD", "CHS")
    assert outbound["segments"][0]["marketingFlightNumber"] == "101"
    assert_offer(offer)
    expected = amount(out["totalPrice"]["total"]) + amount(back["totalPrice"]["total"])
    assert amount(offer["totalPrice"]["total"]) == expected  # nothing sold meanwhile: same price


def test_a_priced_quote_can_be_priced_again_only_as_its_source_offers(api, auth, round_trip):
    out, _ = round_trip
    quote = price(api, auth, selection(out)).json()["data"]["offer"]

    response = price(
        api, auth, {"offerId": quote["offerId"], "offerItemIds": [quote["items"][0]["offerItemId"]]}
    )

    error_of(response, 400, "ERR-3003", "selections.offerId")


def test_pricing_rechecks_live_inventory_and_reprices(api, auth, round_trip, network):
    out, _ = round_trip
    leg = FlightLeg.objects.get(flight_number=101, flight_date=network)
    inventory_sell(leg_ids=[leg.pk], rbd="L", seats=15)  # the class the offer was made in is gone

    item = price(api, auth, selection(out)).json()["data"]["offer"]["items"][0]

    assert item["fare"]["rbd"] == "K"
    assert amount(item["totalPrice"]["total"]) > amount(out["totalPrice"]["total"])


def test_an_offer_sold_out_since_the_search_is_refused(api, auth, round_trip, network):
    out, _ = round_trip
    leg = FlightLeg.objects.get(flight_number=101, flight_date=network)
    inventory_sell(leg_ids=[leg.pk], rbd="Y", seats=75)  # one seat left for a party of three

    error_of(price(api, auth, selection(out)), 400, "ERR-3003", "selections.offerItemIds")


def test_an_unknown_offer(api, auth, round_trip):
    error_of(
        price(api, auth, {"offerId": "nope.1", "offerItemIds": ["nope.1.1"]}),
        404,
        "ERR-3000",
        "selections.offerId",
    )
    error_of(
        price(api, auth, {"offerId": "no-dot", "offerItemIds": ["x"]}),
        404,
        "ERR-3000",
        "selections.offerId",
    )


def test_another_sellers_offer_is_not_found(api, round_trip, partner, other_seller):
    out, _ = round_trip
    sibling = bearer(token_for(api, ApiKeyFactory(partner=partner, seller=other_seller).raw))

    error_of(price(api, sibling, selection(out)), 404, "ERR-3000", "selections.offerId")


def test_an_expired_offer(api, auth, round_trip, clock):
    out, _ = round_trip
    clock.advance(minutes=30)

    error = error_of(price(api, auth, selection(out)), 404, "ERR-3001", "selections.offerId")

    assert "expired" in error["description"]


def test_an_item_not_on_the_offer(api, auth, round_trip):
    out, back = round_trip

    response = price(api, auth, selection(out, back["offerItems"][0]["offerItemId"]))

    error_of(response, 400, "ERR-3002", "selections.offerItemIds")


def test_two_selections_for_the_same_direction(api, auth, round_trip, network):
    out, _ = round_trip
    body = search_body(("PVD", "CHS", network), passengers=PARTY)
    other = next(
        o
        for o in api.post("/json/v1/offers", body, format="json", **auth).json()["data"]["offers"]
        if o["offerItems"][0]["flight"]["flightNumbers"] == ["MX501"]
    )

    error_of(price(api, auth, selection(out), selection(other)), 400, "ERR-3003", "selections")


def test_the_same_journey_twice(api, auth, network):
    body = search_body(("PVD", "CHS", network), passengers=PARTY)
    offers = api.post("/json/v1/offers", body, format="json", **auth).json()["data"]["offers"]
    no_flex, nice = offers[0], offers[1]  # the same journey in two bundles

    error_of(price(api, auth, selection(no_flex), selection(nice)), 400, "ERR-3003", "selections")


def test_a_reshop_offer_must_be_priced_with_quote_order(
    api, auth, partner_key, default_seller, network, clock
):
    batch = new_batch(
        owner=OfferOwner(seller_id=str(default_seller.pk), agency_code=partner_key.key.agency_code),
        source=OfferSource.RESHOP,
        now=clock(),
        passengers=[{"paxId": "ADT-1", "ptc": "ADT"}],
    )
    batch.offers[batch.offer_id(1)] = {"offerItemId": batch.offer_id(1) + ".1", "legIndex": 0}
    batch_save(batch)

    response = price(
        api, auth, {"offerId": batch.offer_id(1), "offerItemIds": [batch.offer_id(1) + ".1"]}
    )

    error_of(response, 400, "ERR-3004", "selections.offerId")


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"selections": [], "passengers": PARTY}, "selections"),
        ({"passengers": PARTY}, "selections"),
        (
            {"selections": [{"offerId": "a.1", "offerItemIds": []}], "passengers": PARTY},
            "selections.offerItemIds",
        ),
        ({"selections": [{"offerId": "a.1", "offerItemIds": ["a.1.1"]}]}, "passengers"),
        (
            {
                "selections": [{"offerId": "a.1", "offerItemIds": ["a.1.1"], "x": 1}],
                "passengers": PARTY,
            },
            "selections.x",
        ),
        (
            {
                "selections": [{"offerId": "a" * 101, "offerItemIds": ["a.1.1"]}],
                "passengers": PARTY,
            },
            "selections.offerId",
        ),
    ],
    ids=[
        "no-selections",
        "missing-selections",
        "no-items",
        "no-passengers",
        "unknown-property",
        "long-id",
    ],
)
def test_malformed_requests(api, auth, network, body, path):
    response = api.post("/json/v1/offers/price", body, format="json", **auth)

    error_of(response, 422, "ERR-1005", path)


def test_duplicate_ids_in_the_request(api, auth, round_trip):
    out, _ = round_trip

    error_of(
        price(api, auth, selection(out), selection(out)), 422, "ERR-1005", "selections.offerId"
    )
    doubled = {"offerId": out["offerId"], "offerItemIds": [out["offerItems"][0]["offerItemId"]] * 2}
    error_of(price(api, auth, doubled), 422, "ERR-1005", "selections.offerItemIds")


def test_infants_exceeding_adults(api, auth, round_trip):
    out, _ = round_trip

    response = price(
        api, auth, selection(out), passengers=[{"type": "ADT"}, {"type": "INF"}, {"type": "INF"}]
    )

    error_of(response, 422, "ERR-1005", "passengers.type")


def test_the_offer_store_unreachable_is_err_9002(api, auth, round_trip, settings):
    """Redis down: the token still authenticates (the rate limit opens), and the offer,
    which only Redis holds, cannot be read: 503 ERR-9002 with Retry-After."""
    out, _ = round_trip
    broken = {"default": {**settings.CACHES["default"], "LOCATION": "redis://127.0.0.1:1/0"}}

    with override_settings(CACHES=broken):
        response = price(api, auth, selection(out))

    error_of(response, 503, "ERR-9002", None)
    assert response["Retry-After"] == "5"


@pytest.mark.parametrize(
    "party",
    [
        [{"type": "ADT"}],
        [{"type": "ADT"}, {"type": "ADT"}, {"type": "ADT"}],
        [{"type": "ADT"}, {"type": "ADT"}, {"type": "CHD", "paxId": "KID"}],
    ],
    ids=["fewer", "other types", "other ids"],
)
def test_a_price_for_another_party_than_was_shopped_is_refused(api, auth, round_trip, party):
    out, _ = round_trip

    error = error_of(
        price(api, auth, selection(out), passengers=party), 422, "ERR-1005", "passengers"
    )
    assert "search again" in error["description"]


def test_the_shopped_party_with_its_ids_written_out_prices(api, auth, round_trip):
    out, _ = round_trip
    party = [
        {"type": "CHD", "paxId": "CHD-1"},
        {"type": "ADT", "paxId": "ADT-2"},
        {"type": "ADT", "paxId": "ADT-1"},
    ]

    assert price(api, auth, selection(out), passengers=party).status_code == 201


def test_an_unmoved_price_says_so(api, auth, round_trip):
    out, back = round_trip

    offer = price(api, auth, selection(out), selection(back)).json()["data"]["offer"]

    assert offer["priceChanged"] is False
    assert "previousTotal" not in offer


def test_a_price_that_moved_since_the_search_says_from_what(api, auth, round_trip, network):
    out, back = round_trip
    leg = FlightLeg.objects.get(flight_number=101, flight_date=network)
    inventory_sell(leg_ids=[leg.pk], rbd="L", seats=15)  # the searched class sold out

    offer = price(api, auth, selection(out), selection(back)).json()["data"]["offer"]

    shopped = amount(out["totalPrice"]["total"]) + amount(back["totalPrice"]["total"])
    assert offer["priceChanged"] is True
    assert amount(offer["previousTotal"]) == shopped
    assert offer["previousTotal"]["currency"] == "USD"
    assert amount(offer["totalPrice"]["total"]) > shopped


def test_a_bundle_the_key_may_no_longer_sell_is_refused(api, auth, round_trip, partner_key):
    out, _ = round_trip
    assert out["offerItems"][0]["fare"]["bundleName"] == "No Flex"
    partner_key.key.allowed_bundles = ["NICE"]
    partner_key.key.save(update_fields=["allowed_bundles"])

    error_of(price(api, auth, selection(out)), 400, "ERR-3003", "selections.offerItemIds")
