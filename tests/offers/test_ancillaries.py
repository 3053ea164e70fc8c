"""Seat maps and service lists of a cached offer: POST /offers/{offerId}/seats and
/services, on a shopping offer and on a priced offer (SPEC.md §2.6, §4.6; DESIGN.md §5,
§7, §11 "Ancillary offers")."""

from datetime import timedelta
from decimal import ROUND_HALF_UP, Decimal

import pytest
from django.db import OperationalError

from airline.fares import reference as fares_reference
from airline.fares.models import Ancillary
from airline.network.models import SeatConfiguration
from offers.seating import forget_seat_layouts
from tests.conftest import bearer, error_of, token_for
from tests.offers.conftest import search_body
from tests.sellers.factories import ApiKeyFactory

pytestmark = pytest.mark.django_db

KINDS = ("seats", "services")
SOURCES = ("shopping", "priced")
A320_SEATS, E175_SEATS = 150, 76  # C12Y138 and Y76 (airline/network/demo_fleet.py)
BAGS = {"CB1", "CB2", "CB3", "COB"}
QUERIES = 2  # a seat map reads its legs and the seats taken on them (layouts are cached)
# Flights of the test network (tests/offers/conftest.py) from PVD: destination, numbers.
ROUTES = {101: ("CHS", ["MX101"]), 501: ("TPA", ["MX501"]), 701: ("MSY", ["MX701", "MX702"])}


@pytest.fixture
def day(network):
    """Far enough out for a hold (DESIGN.md §8: none within 24 h of departure)."""
    return network + timedelta(days=5)


def ask(api, auth, kind, offer_id, body):
    return api.post(f"/json/v1/offers/{offer_id}/{kind}", body, format="json", **auth)


def data_of(response):
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["error"] is None
    return body["data"]


def shop(api, auth, day, *, flight=101, bundle="No Flex", party=None, back=None):
    """The shopping offers of `flight` in `bundle` (and of MX102 back on `back`), as
    [(offerId, offerItemId, item)], one per direction."""
    destination, numbers = ROUTES[flight]
    directions = [("PVD", destination, day)]
    if back is not None:
        directions.append((destination, "PVD", back))
    found = api.post(
        "/json/v1/offers", search_body(*directions, passengers=party), format="json", **auth
    )
    assert found.status_code == 201, found.content
    chosen = []
    for leg_index, wanted in enumerate([numbers, ["MX102"]][: len(directions)]):
        [(offer, item)] = [
            (o, i)
            for o in found.json()["data"]["offers"]
            for i in o["offerItems"]
            if i["legIndex"] == leg_index
            and i["flight"]["flightNumbers"] == wanted
            and i["fare"]["bundleName"] == bundle
        ]
        chosen.append((offer["offerId"], item["offerItemId"], item))
    return chosen


def price(api, auth, day, *, party=None, **choice):
    """The priced offer (its `data`) of what `shop` chooses."""
    party = party or [{"type": "ADT"}]
    selections = [
        {"offerId": offer_id, "offerItemIds": [item_id]}
        for offer_id, item_id, _ in shop(api, auth, day, party=party, **choice)
    ]
    priced = api.post(
        "/json/v1/offers/price",
        {"selections": selections, "passengers": party},
        format="json",
        **auth,
    )
    assert priced.status_code == 201, priced.content
    return priced.json()["data"]


def offer_of(api, auth, day, source, **kwargs):
    """(offerId, offerItemIds, journeys) of a shopping or a priced offer, the journeys in
    the shape their segments and ids are shown (SPEC.md §2.2 Flight, §2.4 journeys[])."""
    if source == "shopping":
        [(offer_id, item_id, item)] = shop(api, auth, day, **kwargs)
        return offer_id, [item_id], [item["flight"]]
    data = price(api, auth, day, **kwargs)
    return (
        data["offer"]["offerId"],
        [i["offerItemId"] for i in data["offer"]["items"]],
        data["journeys"],
    )


def units(seat_map):
    return [u for d in seat_map["decks"] for c in d["compartments"] for u in c["units"]]


def pricing_rows(seat_maps):
    return [r for m in seat_maps for u in units(m) for r in u.get("passengerPricing", [])]


def every_row(data):
    """Every passengerPricing row of a seats or a services answer."""
    return pricing_rows(data.get("legSeatMaps", [])) + [
        r
        for s in data.get("services", [])
        for a in s["segmentAvailability"]
        for r in a["passengerPricing"]
    ]


def priced_pax(data):
    """paxRefId -> passengerType of every row; there must be some."""
    rows = every_row(data)
    assert rows
    return {r["paxRefId"]: r["passengerType"] for r in rows}


def unit(seat_map, designator):
    [found] = [u for u in units(seat_map) if u["designator"] == designator]
    return found


def service(data, code):
    [found] = [s for s in data["services"] if s["serviceCode"] == code]
    return found


def amount(row):
    return Decimal(str(row["amount"])), Decimal(str(row["taxAmount"]))


def book_seat(api, auth, day):
    """A hold on MX101 whose adult has bought a standard seat: (orderId, the seat)."""
    priced = price(api, auth, day)
    [adult] = priced["pax"]
    held = api.post(
        "/json/v1/orders",
        {
            "offerId": priced["offer"]["offerId"],
            "offerItemIds": [i["offerItemId"] for i in priced["offer"]["items"]],
            "passengers": [
                {
                    "passengerId": adult["paxId"],
                    "type": "ADT",
                    "name": {"givenName": "Ada", "surname": "Lovelace"},
                }
            ],
            "contact": {"emailAddress": "ada@example.com"},
            "payment": {"type": "Hold"},
        },
        format="json",
        **auth,
    )
    assert held.status_code == 201, held.content
    order_id = held.json()["data"]["order"]["orderId"]
    seat_data = data_of(api.post(f"/json/v1/orders/{order_id}/seats", format="json", **auth))
    [seat_map] = seat_data["legSeatMaps"]
    seat, row = next(
        (u, u["passengerPricing"][0])
        for u in units(seat_map)
        if u["availability"] == "Open" and u["group"] == "standard" and u.get("passengerPricing")
    )
    accepted = api.patch(
        f"/json/v1/orders/{order_id}",
        {
            "changes": [
                {
                    "type": "AcceptOffer",
                    "offerId": seat_data["offerId"],
                    "offerItemId": row["offerItemId"],
                    "passengerIds": [row["paxRefId"]],
                    "seat": {
                        "row": int(seat["designator"][:-1]),
                        "column": seat["designator"][-1],
                    },
                }
            ]
        },
        format="json",
        **auth,
    )
    assert accepted.status_code == 200, accepted.content
    return order_id, seat["designator"]


# Errors (SPEC.md §4.6, §7)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("kind", KINDS)
def test_an_unknown_offer_is_not_found(api, auth, day, kind, source):
    _, item_ids, _ = offer_of(api, auth, day, source)

    for offer_id in ("nope.1", "nope", "x" * 40 + ".7"):
        error_of(
            ask(api, auth, kind, offer_id, {"offerItemIds": item_ids}), 404, "ERR-3000", "offerId"
        )


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("kind", KINDS)
def test_it_refuses_another_sellers_offer(api, auth, day, partner_key, other_seller, kind, source):
    offer_id, item_ids, _ = offer_of(api, auth, day, source)
    other = bearer(token_for(api, partner_key.raw, other_seller.pk))

    error_of(
        ask(api, other, kind, offer_id, {"offerItemIds": item_ids}), 404, "ERR-3000", "offerId"
    )
    assert ask(api, auth, kind, offer_id, {"offerItemIds": item_ids}).status_code == 200


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("kind", KINDS)
def test_an_expired_offer_is_refused(api, auth, day, clock, kind, source):
    offer_id, item_ids, _ = offer_of(api, auth, day, source)
    clock.advance(minutes=29)
    assert ask(api, auth, kind, offer_id, {"offerItemIds": item_ids}).status_code == 200

    clock.advance(minutes=2)

    error_of(ask(api, auth, kind, offer_id, {"offerItemIds": item_ids}), 404, "ERR-3001", "offerId")


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("kind", KINDS)
def test_items_not_on_the_offer_are_refused(api, auth, day, kind, source):
    offer_id, item_ids, _ = offer_of(api, auth, day, source)
    _, of_another_offer, _ = offer_of(api, auth, day, source, flight=501)
    batch = offer_id.rpartition(".")[0]

    for wrong in (
        ["nope"],
        [f"{offer_id}.9"],
        [f"{batch}.2.1"],  # another offer of the same search, for a shopping offer
        of_another_offer,
        [*item_ids, f"{offer_id}.9"],
    ):
        error_of(
            ask(api, auth, kind, offer_id, {"offerItemIds": wrong}),
            400,
            "ERR-3002",
            "offerItemIds",
        )


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({}, "offerItemIds"),
        ({"offerItemIds": []}, "offerItemIds"),
        ({"offerItemIds": [""]}, "offerItemIds"),
        ({"offerItemIds": "ITEM"}, "offerItemIds"),
        ({"offerItemIds": ["ITEM"], "extra": 1}, "extra"),
        ({"offerItemIds": ["ITEM"], "passengers": []}, "passengers"),
        ({"offerItemIds": ["ITEM"], "passengers": [{"type": "XXX"}]}, "passengers.type"),
        ({"offerItemIds": ["ITEM"], "passengers": [{"type": "ADT", "age": 30}]}, "passengers.age"),
        (
            {
                "offerItemIds": ["ITEM"],
                "passengers": [{"type": "ADT"}, {"type": "INF"}, {"type": "INF"}],
            },
            "passengers.type",
        ),
        ({"offerItemIds": ["ITEM"], "passengers": [{"type": "CHD"}]}, "passengers.type"),
        (
            {
                "offerItemIds": ["ITEM"],
                "passengers": [{"type": "ADT", "paxId": "P1"}, {"type": "CHD", "paxId": "P1"}],
            },
            "passengers.paxId",
        ),
    ],
)
@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("kind", KINDS)
def test_body_rules(api, auth, day, kind, source, body, path):
    offer_id, item_ids, _ = offer_of(api, auth, day, source)
    if body.get("offerItemIds") == ["ITEM"]:
        body = {**body, "offerItemIds": item_ids}

    error_of(ask(api, auth, kind, offer_id, body), 422, "ERR-1005", path)


@pytest.mark.parametrize("kind", KINDS)
def test_an_ancillary_offer_is_not_an_offer_to_ask_about(api, auth, day, kind):
    offer_id, item_ids, _ = offer_of(api, auth, day, "priced")
    seats = data_of(ask(api, auth, "seats", offer_id, {"offerItemIds": item_ids}))
    services = data_of(ask(api, auth, "services", offer_id, {"offerItemIds": item_ids}))

    for data in (seats, services):
        body = {"offerItemIds": [every_row(data)[0]["offerItemId"]]}
        error_of(ask(api, auth, kind, data["offerId"], body), 404, "ERR-3000", "offerId")


@pytest.mark.parametrize("kind", KINDS)
def test_an_unsupported_version_is_refused(api, auth, day, kind):
    offer_id, item_ids, _ = offer_of(api, auth, day, "shopping")

    response = api.post(
        f"/json/v9/offers/{offer_id}/{kind}", {"offerItemIds": item_ids}, format="json", **auth
    )

    error_of(response, 404, "ERR-1002")


@pytest.mark.parametrize("kind", KINDS)
def test_a_token_is_required(api, auth, day, kind):
    offer_id, item_ids, _ = offer_of(api, auth, day, "shopping")

    response = api.post(
        f"/json/v1/offers/{offer_id}/{kind}", {"offerItemIds": item_ids}, format="json"
    )

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "ERR-8000"


@pytest.mark.parametrize("kind", KINDS)
def test_a_read_only_key_may_ask(api, day, read_only_key, kind):
    read_only = bearer(token_for(api, read_only_key.raw))
    offer_id, item_ids, _ = offer_of(api, read_only, day, "priced")

    assert data_of(ask(api, read_only, kind, offer_id, {"offerItemIds": item_ids}))["offerId"]


@pytest.mark.parametrize(
    ("kind", "failing"),
    [
        ("seats", "offers.seating.statements_answered"),
        ("services", "airline.fares.ancillaries.products"),
    ],
)
def test_a_failed_lookup_is_err_9003(api, auth, day, monkeypatch, kind, failing):
    offer_id, item_ids, _ = offer_of(api, auth, day, "shopping")

    def unavailable(*args, **kwargs):
        raise OperationalError("the database went away")  # outside our process

    monkeypatch.setattr(failing, unavailable)

    error_of(ask(api, auth, kind, offer_id, {"offerItemIds": item_ids}), 500, "ERR-9003")


# Passengers


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("kind", KINDS)
def test_passengers_default_to_the_offers(api, auth, day, kind, source):
    party = [{"type": "ADT"}, {"type": "ADT"}, {"type": "CHD"}]
    offer_id, item_ids, _ = offer_of(api, auth, day, source, party=party)

    data = data_of(ask(api, auth, kind, offer_id, {"offerItemIds": item_ids}))

    assert priced_pax(data) == {"ADT-1": "ADT", "ADT-2": "ADT", "CHD-1": "CHD"}


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("kind", KINDS)
def test_passengers_sent_narrow_the_rows_to_some_of_the_offers(api, auth, day, kind, source):
    party = [{"type": "ADT"}, {"type": "ADT", "paxId": "ann"}, {"type": "CHD", "paxId": "kid"}]
    offer_id, item_ids, _ = offer_of(api, auth, day, source, party=party)

    just_one = data_of(
        ask(api, auth, kind, offer_id, {"offerItemIds": item_ids, "passengers": [{"type": "ADT"}]})
    )
    named = data_of(
        ask(
            api,
            auth,
            kind,
            offer_id,
            {
                "offerItemIds": item_ids,
                "passengers": [{"type": "ADT", "paxId": "ann"}, {"type": "CHD", "paxId": "kid"}],
            },
        )
    )

    assert priced_pax(just_one) == {"ADT-1": "ADT"}
    assert priced_pax(named) == {"ann": "ADT", "kid": "CHD"}


@pytest.mark.parametrize(
    "passengers",
    [
        # Three on a one-adult offer: ADT-2 and ADT-3 are nobody's.
        [{"type": "ADT"}, {"type": "ADT"}, {"type": "ADT"}],
        # A name the offer does not know: its items could never be booked.
        [{"type": "ADT", "paxId": "ann"}],
        # A passenger type the offer was not made for.
        [{"type": "ADT"}, {"type": "INF"}],
    ],
)
@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("kind", KINDS)
def test_passengers_not_on_the_offer_are_refused(api, auth, day, kind, source, passengers):
    offer_id, item_ids, _ = offer_of(api, auth, day, source)

    response = ask(api, auth, kind, offer_id, {"offerItemIds": item_ids, "passengers": passengers})

    error = error_of(response, 422, "ERR-1005", "passengers")
    assert "The offer is for ADT-1 (ADT);" in error["description"]


# Seat maps (SPEC.md §2.6; DESIGN.md §7)


@pytest.mark.parametrize("source", SOURCES)
def test_a_two_leg_flight_has_a_map_per_leg_of_its_one_segment(api, auth, day, source):
    offer_id, item_ids, journeys = offer_of(api, auth, day, source, flight=501)
    [journey] = journeys
    [segment] = journey["segments"]

    data = data_of(ask(api, auth, "seats", offer_id, {"offerItemIds": item_ids}))

    maps = data["legSeatMaps"]
    assert [(m["departureStation"], m["arrivalStation"]) for m in maps] == [
        ("PVD", "CHS"),
        ("CHS", "TPA"),
    ]
    assert {m["segmentRefId"] for m in maps} == {segment["segmentId"]}
    for seat_map in maps:
        assert seat_map["equipmentType"] == "320"
        [deck] = seat_map["decks"]
        assert deck["number"] == 1
        assert [c["designator"] for c in deck["compartments"]] == ["C", "Y"]
        assert len(units(seat_map)) == A320_SEATS
        assert len({u["designator"] for u in units(seat_map)}) == A320_SEATS
        for u in units(seat_map):
            assert isinstance(u["assignable"], bool)
            assert u["availability"] in {"Open", "Reserved", "Blocked", "Restricted"}
            assert isinstance(u["group"], str)


@pytest.mark.parametrize("source", SOURCES)
def test_a_single_class_aircraft_has_one_compartment(api, auth, day, source):
    offer_id, item_ids, journeys = offer_of(api, auth, day, source)

    [seat_map] = data_of(ask(api, auth, "seats", offer_id, {"offerItemIds": item_ids}))[
        "legSeatMaps"
    ]

    assert (seat_map["departureStation"], seat_map["arrivalStation"]) == ("PVD", "CHS")
    assert seat_map["equipmentType"] == "E75"
    assert seat_map["segmentRefId"] == journeys[0]["segments"][0]["segmentId"]
    assert [c["designator"] for d in seat_map["decks"] for c in d["compartments"]] == ["Y"]
    assert len(units(seat_map)) == E175_SEATS
    assert all(u["availability"] == "Open" and u["assignable"] for u in units(seat_map))


def test_a_round_trip_has_a_map_per_item_asked(api, auth, day):
    priced = price(api, auth, day, back=day + timedelta(days=7))
    offer_id = priced["offer"]["offerId"]
    out, back = (i["offerItemId"] for i in priced["offer"]["items"])

    both = data_of(ask(api, auth, "seats", offer_id, {"offerItemIds": [out, back]}))
    only_back = data_of(ask(api, auth, "seats", offer_id, {"offerItemIds": [back]}))

    assert [(m["departureStation"], m["arrivalStation"]) for m in both["legSeatMaps"]] == [
        ("PVD", "CHS"),
        ("CHS", "PVD"),
    ]
    assert [m["segmentRefId"] for m in both["legSeatMaps"]] == [
        j["segments"][0]["segmentId"] for j in priced["journeys"]
    ]
    [seat_map] = only_back["legSeatMaps"]
    assert seat_map["departureStation"] == "CHS"


@pytest.mark.parametrize("source", SOURCES)
def test_a_connection_has_a_map_and_priority_per_segment_and_bags_per_journey(
    api, auth, day, source
):
    offer_id, item_ids, journeys = offer_of(api, auth, day, source, flight=701)
    [journey] = journeys
    segment_ids = [s["segmentId"] for s in journey["segments"]]
    body = {"offerItemIds": item_ids}

    seats = data_of(ask(api, auth, "seats", offer_id, body))
    services = data_of(ask(api, auth, "services", offer_id, body))

    assert [(m["departureStation"], m["arrivalStation"]) for m in seats["legSeatMaps"]] == [
        ("PVD", "CLT"),
        ("CLT", "MSY"),
    ]
    assert [m["segmentRefId"] for m in seats["legSeatMaps"]] == segment_ids
    assert len(set(segment_ids)) == 2
    priority = service(services, "PRIO")["segmentAvailability"]
    assert [(a["scope"], a["segmentRefId"]) for a in priority] == [
        ("segment", ref) for ref in segment_ids
    ]
    [bag] = service(services, "CB1")["segmentAvailability"]
    assert (bag["scope"], bag["journeyRefId"]) == ("journey", journey["journeyId"])


@pytest.mark.parametrize("source", SOURCES)
def test_business_seats_are_not_for_an_economy_bundle(api, auth, day, source):
    offer_id, item_ids, _ = offer_of(api, auth, day, source, flight=501)

    data = data_of(ask(api, auth, "seats", offer_id, {"offerItemIds": item_ids}))

    for seat_map in data["legSeatMaps"]:
        business, economy = (c["units"] for c in seat_map["decks"][0]["compartments"])
        assert len(business) == 12
        assert all("PREMIUM" in u["properties"] for u in business)
        for u in business:
            assert (u["availability"], u["assignable"]) == ("Restricted", False)
            assert "passengerPricing" not in u
        assert len(economy) == 138
        assert all(u["availability"] == "Open" and u["assignable"] for u in economy)


def test_a_business_bundle_may_take_business_seats_at_no_charge(api, auth, day):
    offer_id, item_ids, _ = offer_of(api, auth, day, "priced", flight=501, bundle="Nicest")

    data = data_of(ask(api, auth, "seats", offer_id, {"offerItemIds": item_ids}))

    for seat_map in data["legSeatMaps"]:
        business, economy = (c["units"] for c in seat_map["decks"][0]["compartments"])
        assert all(u["availability"] == "Open" and u["assignable"] for u in business)
        assert {amount(r) for u in business for r in u["passengerPricing"]} == {
            (Decimal(0), Decimal(0))
        }
        assert all(u["availability"] == "Restricted" for u in economy)


@pytest.mark.parametrize("source", SOURCES)
def test_no_seat_for_an_infant_and_no_exit_row_for_a_child_or_its_adult(api, auth, day, source):
    party = [{"type": "ADT"}, {"type": "ADT"}, {"type": "CHD"}, {"type": "INF"}]
    offer_id, item_ids, _ = offer_of(api, auth, day, source, party=party)

    [seat_map] = data_of(ask(api, auth, "seats", offer_id, {"offerItemIds": item_ids}))[
        "legSeatMaps"
    ]

    exits = [u for u in units(seat_map) if "EXIT" in u["properties"]]
    assert {u["designator"] for u in exits} == {"10A", "10B", "10C", "10D"}
    for u in exits:
        assert u["group"] == "exit_row"
        assert {r["paxRefId"] for r in u["passengerPricing"]} == {"ADT-2"}  # ADT-1 has the lap
    standard = [u for u in units(seat_map) if u["group"] == "standard"]
    assert standard
    for u in standard:
        assert {r["paxRefId"] for r in u["passengerPricing"]} == {"ADT-1", "ADT-2", "CHD-1"}
    assert "INF-1" not in {r["paxRefId"] for r in pricing_rows([seat_map])}


def test_exit_rows_are_restricted_when_nobody_may_sit_there(api, auth, day):
    party = [{"type": "ADT"}, {"type": "INF"}]
    offer_id, item_ids, _ = offer_of(api, auth, day, "shopping", party=party)

    [seat_map] = data_of(ask(api, auth, "seats", offer_id, {"offerItemIds": item_ids}))[
        "legSeatMaps"
    ]

    for u in units(seat_map):
        if "EXIT" in u["properties"]:
            assert (u["availability"], u["assignable"]) == ("Restricted", False)
        else:
            assert {r["paxRefId"] for r in u["passengerPricing"]} == {"ADT-1"}


@pytest.mark.parametrize("source", SOURCES)
def test_seats_carry_their_position(api, auth, day, source):
    offer_id, item_ids, _ = offer_of(api, auth, day, source, flight=501)

    seat_map = data_of(ask(api, auth, "seats", offer_id, {"offerItemIds": item_ids}))[
        "legSeatMaps"
    ][0]

    positions = {
        letter: {"WINDOW", "AISLE", "MIDDLE"} & set(unit(seat_map, f"20{letter}")["properties"])
        for letter in "ABCDEF"
    }
    assert positions == {
        "A": {"WINDOW"},
        "B": {"MIDDLE"},
        "C": {"AISLE"},
        "D": {"AISLE"},
        "E": {"MIDDLE"},
        "F": {"WINDOW"},
    }
    assert {"EXIT", "LEGROOM"} <= set(unit(seat_map, "12A")["properties"])
    assert "LEGROOM" in unit(seat_map, "6A")["properties"]
    assert {"WINDOW", "PREMIUM"} <= set(unit(seat_map, "1A")["properties"])
    for u in units(seat_map):
        assert len({"WINDOW", "AISLE", "MIDDLE"} & set(u["properties"])) == 1


@pytest.mark.parametrize("source", SOURCES)
def test_seat_prices_by_zone_and_bundle_with_the_transportation_tax(api, auth, day, source):
    no_flex = offer_of(api, auth, day, source, flight=501)
    nicer = offer_of(api, auth, day, source, flight=501, bundle="Nicer")

    def by_zone(offer):
        offer_id, item_ids, _ = offer
        data = data_of(ask(api, auth, "seats", offer_id, {"offerItemIds": item_ids}))
        zones = {}
        for seat_map in data["legSeatMaps"]:
            for u in units(seat_map):
                for row in u.get("passengerPricing", []):
                    assert row["currency"] == "USD"
                    zones.setdefault(u["group"], set()).add(amount(row))
        return zones

    paid, free = by_zone(no_flex), by_zone(nicer)

    assert paid["standard"] == {(Decimal("12.00"), Decimal("0.90"))}
    assert free["standard"] == {(Decimal(0), Decimal(0))}  # Nicer: a free standard seat
    for zone in ("extra_legroom", "exit_row"):
        assert paid[zone] == free[zone]
        [(charge, tax)] = paid[zone]
        assert charge > Decimal("12.00")
        assert tax == (charge * Decimal("0.075")).quantize(Decimal("0.01"), ROUND_HALF_UP)


def test_a_blocked_seat_is_never_offered(api, auth, day):
    configuration = SeatConfiguration.objects.get(code="Y76")
    configuration.blocked_seats = ["19D"]
    configuration.save(update_fields=["blocked_seats"])
    forget_seat_layouts()  # seat layouts are kept per process (offers/seating.py)
    try:
        offer_id, item_ids, _ = offer_of(api, auth, day, "shopping")
        [seat_map] = data_of(ask(api, auth, "seats", offer_id, {"offerItemIds": item_ids}))[
            "legSeatMaps"
        ]
    finally:
        forget_seat_layouts()

    seat = unit(seat_map, "19D")
    assert (seat["availability"], seat["assignable"]) == ("Blocked", False)
    assert "passengerPricing" not in seat
    assert len(units(seat_map)) == E175_SEATS


def test_a_seat_map_reads_the_database_twice_however_many_legs(
    api, auth, day, django_assert_max_num_queries
):
    one = offer_of(api, auth, day, "priced")
    two = offer_of(api, auth, day, "priced", flight=501, party=[{"type": "ADT"}] * 3)
    for offer_id, item_ids, _ in (one, two):  # warm the per-process seat layouts
        data_of(ask(api, auth, "seats", offer_id, {"offerItemIds": item_ids}))

    for offer_id, item_ids, _ in (one, two):
        with django_assert_max_num_queries(QUERIES):
            data_of(ask(api, auth, "seats", offer_id, {"offerItemIds": item_ids}))


# Service lists (SPEC.md §2.6; DESIGN.md §7)


@pytest.mark.parametrize("source", SOURCES)
def test_the_service_list_has_bags_pets_and_priority(api, auth, day, source):
    offer_id, item_ids, journeys = offer_of(api, auth, day, source, flight=501)
    [journey] = journeys
    [segment] = journey["segments"]

    data = data_of(ask(api, auth, "services", offer_id, {"offerItemIds": item_ids}))

    codes = {s["serviceCode"]: s for s in data["services"]}
    assert set(codes) == BAGS | {"PETC", "PRIO"}  # seats are sold from the seat map
    for code, (ssr, kind) in {
        "CB1": ("XBAG", "Baggage"),
        "CB2": ("XBAG", "Baggage"),
        "CB3": ("XBAG", "Baggage"),
        "COB": ("CBAG", "Baggage"),
        "PETC": ("PETC", "Pets"),
        "PRIO": ("PRIO", "Priority"),
    }.items():
        assert (codes[code]["ssrCode"], codes[code]["type"]) == (ssr, kind)
        assert codes[code]["name"]
        assert len(codes[code]["feeCode"]) == 3
    assert codes["CB2"]["requires"] == "CB1"
    assert codes["CB3"]["requires"] == "CB2"
    assert "requires" not in codes["CB1"]
    for code in (*BAGS, "PETC"):
        [availability] = codes[code]["segmentAvailability"]
        assert availability["scope"] == "journey"
        assert availability["journeyRefId"] == journey["journeyId"]
        assert "segmentRefId" not in availability
    [priority] = codes["PRIO"]["segmentAvailability"]
    assert priority["scope"] == "segment"
    assert priority["segmentRefId"] == segment["segmentId"]


@pytest.mark.parametrize("source", SOURCES)
def test_service_prices_and_the_bundles_own_at_zero(api, auth, day, partner, source):
    nicer_only = bearer(
        token_for(api, ApiKeyFactory(partner=partner, allowed_bundles=["NICER"]).raw)
    )
    paid = offer_of(api, auth, day, source)
    included = offer_of(api, nicer_only, day, source, bundle="Nicer")

    def prices(auth, offer):
        offer_id, item_ids, _ = offer
        data = data_of(ask(api, auth, "services", offer_id, {"offerItemIds": item_ids}))
        return {
            s["serviceCode"]: amount(r)
            for s in data["services"]
            for a in s["segmentAvailability"]
            for r in a["passengerPricing"]
        }

    no_flex, nicer = prices(auth, paid), prices(nicer_only, included)

    assert no_flex["CB1"] == (Decimal("35.00"), Decimal(0))
    assert no_flex["COB"] == (Decimal("30.00"), Decimal(0))
    assert no_flex["PRIO"] == (Decimal("15.00"), Decimal("1.13"))  # 7.5%, half up
    assert nicer["CB1"] == nicer["COB"] == (Decimal(0), Decimal(0))  # one bag and a carry-on
    assert nicer["CB2"] == no_flex["CB2"] > (Decimal(0), Decimal(0))
    assert nicer["PRIO"] == no_flex["PRIO"]


def test_the_premium_bundle_includes_two_bags_and_a_carry_on(api, auth, day):
    offer_id, item_ids, _ = offer_of(api, auth, day, "priced", flight=501, bundle="Nicest")

    data = data_of(ask(api, auth, "services", offer_id, {"offerItemIds": item_ids}))

    prices = {
        s["serviceCode"]: amount(r)
        for s in data["services"]
        for a in s["segmentAvailability"]
        for r in a["passengerPricing"]
    }
    for code in ("CB1", "CB2", "COB"):
        assert prices[code] == (Decimal(0), Decimal(0)), code
    assert prices["CB3"] == (Decimal("150.00"), Decimal(0))


@pytest.mark.parametrize("source", SOURCES)
def test_an_infant_is_sold_no_service(api, auth, day, source):
    party = [{"type": "ADT"}, {"type": "INF"}]
    offer_id, item_ids, _ = offer_of(api, auth, day, source, party=party)

    data = data_of(ask(api, auth, "services", offer_id, {"offerItemIds": item_ids}))

    assert priced_pax(data) == {"ADT-1": "ADT"}


def test_products_are_data(api, auth, day):
    Ancillary.objects.filter(code="CB1").update(price=Decimal("40.00"))
    Ancillary.objects.filter(code="PETC").update(is_active=False)
    fares_reference.forget()  # other workers see an admin edit within REFERENCE_SECONDS
    offer_id, item_ids, _ = offer_of(api, auth, day, "shopping")

    data = data_of(ask(api, auth, "services", offer_id, {"offerItemIds": item_ids}))

    assert "PETC" not in {s["serviceCode"] for s in data["services"]}
    [row] = service(data, "CB1")["segmentAvailability"][0]["passengerPricing"]
    assert amount(row) == (Decimal("40.00"), Decimal(0))


# Product limits (DESIGN.md §5)


@pytest.mark.parametrize("source", SOURCES)
def test_a_key_limited_to_baggage_sees_bags_and_is_refused_seat_maps(
    api, day, partner, default_seller, source
):
    bags_only = bearer(
        token_for(api, ApiKeyFactory(partner=partner, allowed_ancillary_categories=["BAGGAGE"]).raw)
    )
    offer_id, item_ids, _ = offer_of(api, bags_only, day, source, flight=501)
    body = {"offerItemIds": item_ids}

    services = data_of(ask(api, bags_only, "services", offer_id, body))
    seats = ask(api, bags_only, "seats", offer_id, body)

    assert {s["serviceCode"] for s in services["services"]} == BAGS
    assert {s["type"] for s in services["services"]} == {"Baggage"}
    error = error_of(seats, 403, "ERR-8001")
    assert error["description"] == (
        "This API key may not sell seats (it may sell BAGGAGE); seat maps are for keys that may"
    )


def test_a_key_limited_to_seats_is_refused_service_lists(api, day, partner, default_seller):
    seats_only = bearer(
        token_for(api, ApiKeyFactory(partner=partner, allowed_ancillary_categories=["SEAT"]).raw)
    )
    offer_id, item_ids, _ = offer_of(api, seats_only, day, "priced")
    body = {"offerItemIds": item_ids}

    seats = data_of(ask(api, seats_only, "seats", offer_id, body))
    services = ask(api, seats_only, "services", offer_id, body)

    assert pricing_rows(seats["legSeatMaps"])
    error = error_of(services, 403, "ERR-8001")
    assert "may sell seats only" in error["description"]


def test_an_open_seat_is_always_priced_and_assignable(api, auth, day):
    """A seat zone taken off sale shows its seats Restricted, never Open and unpriced."""
    Ancillary.objects.filter(code="STXL").update(is_active=False)
    fares_reference.forget()
    offer_id, item_ids, _ = offer_of(api, auth, day, "shopping")

    [seat_map] = data_of(ask(api, auth, "seats", offer_id, {"offerItemIds": item_ids}))[
        "legSeatMaps"
    ]

    legroom = [u for u in units(seat_map) if u["group"] == "extra_legroom"]
    assert legroom
    assert {(u["availability"], u["assignable"]) for u in legroom} == {("Restricted", False)}
    assert not any("passengerPricing" in u for u in legroom)
    for u in units(seat_map):
        assert (u["availability"] == "Open") == u["assignable"] == ("passengerPricing" in u)


# Seats taken by orders; ancillary offers (DESIGN.md §11)


@pytest.mark.parametrize("source", SOURCES)
def test_a_seat_bought_on_an_order_is_reserved_for_another_seller(
    api, auth, day, partner_key, other_seller, source
):
    _, taken = book_seat(api, auth, day)
    other = bearer(token_for(api, partner_key.raw, other_seller.pk))
    offer_id, item_ids, _ = offer_of(api, other, day, source)

    [seat_map] = data_of(ask(api, other, "seats", offer_id, {"offerItemIds": item_ids}))[
        "legSeatMaps"
    ]

    seat = unit(seat_map, taken)
    assert (seat["availability"], seat["assignable"]) == ("Reserved", False)
    assert "passengerPricing" not in seat
    assert sum(u["availability"] == "Reserved" for u in units(seat_map)) == 1


def test_a_seat_on_another_day_is_not_reserved(api, auth, day):
    _, taken = book_seat(api, auth, day)
    offer_id, item_ids, _ = offer_of(api, auth, day + timedelta(days=1), "shopping")

    [seat_map] = data_of(ask(api, auth, "seats", offer_id, {"offerItemIds": item_ids}))[
        "legSeatMaps"
    ]

    assert unit(seat_map, taken)["availability"] == "Open"


def test_a_seat_of_a_cancelled_hold_is_open_again(api, auth, day):
    order_id, taken = book_seat(api, auth, day)
    cancelled = api.patch(
        f"/json/v1/orders/{order_id}",
        {"changes": [{"type": "CancelUnpaidOrder"}]},
        format="json",
        **auth,
    )
    assert cancelled.status_code == 200, cancelled.content
    offer_id, item_ids, _ = offer_of(api, auth, day, "shopping")

    [seat_map] = data_of(ask(api, auth, "seats", offer_id, {"offerItemIds": item_ids}))[
        "legSeatMaps"
    ]

    seat = unit(seat_map, taken)
    assert (seat["availability"], seat["assignable"]) == ("Open", True)
    assert seat["passengerPricing"]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("kind", KINDS)
def test_every_price_is_an_item_of_the_ancillary_offer(api, auth, day, kind, source):
    party = [{"type": "ADT"}, {"type": "CHD"}]
    offer_id, item_ids, _ = offer_of(api, auth, day, source, flight=501, party=party)

    first = data_of(ask(api, auth, kind, offer_id, {"offerItemIds": item_ids}))
    again = data_of(ask(api, auth, kind, offer_id, {"offerItemIds": item_ids}))

    assert first["offerId"] != offer_id
    assert again["offerId"] != first["offerId"]  # each answer is stored as its own offer
    rows = every_row(first)
    assert rows
    for row in rows:
        assert row["offerItemId"].startswith(f"{first['offerId']}.")
        assert set(row) == {
            "offerItemId",
            "paxRefId",
            "passengerType",
            "amount",
            "currency",
            "taxAmount",
        }
