"""POST /json/{v}/offers and /offers/byJourney (SPEC.md §2.2, §2.3, §4.4, §8)."""

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import InternalError, OperationalError, connection

from airline.network.inventory import inventory_sell
from airline.network.models import FlightLeg
from tests.conftest import bearer, error_of, token_for
from tests.offers.conftest import search_body
from tests.offers.invariants import amount, assert_offer
from tests.sellers.factories import ApiKeyFactory

pytestmark = pytest.mark.django_db

LOCAL_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$")


def search(api, auth, body, path="/json/v1/offers"):
    return api.post(path, body, format="json", **auth)


def offers_of(response) -> list[dict]:
    assert response.status_code == 201, response.content
    return response.json()["data"]["offers"]


class TestOneWay:
    def test_a_nonstop_in_every_bundle_the_cabin_allows(self, api, auth, network, clock):
        data = search(api, auth, search_body(("PVD", "CHS", network))).json()["data"]

        assert data["view"] == "flat"
        assert data["pax"] == [{"paxId": "ADT-1", "ptc": "ADT"}]
        assert {f["paymentBrandCode"] for f in data["paymentFunctions"]} == {"VI", "CA", "AX", "DS"}
        nonstop = [
            o for o in data["offers"] if o["offerItems"][0]["flight"]["flightNumbers"] == ["MX101"]
        ]
        assert [o["offerItems"][0]["fare"]["bundleName"] for o in nonstop] == [
            "No Flex",
            "Nice",
            "Nicer",
        ]  # E175: no business
        offer = nonstop[0]
        assert offer["ownerCode"] == "MX"
        assert offer["expiresAt"] == (clock.at + timedelta(minutes=30)).strftime(
            "%Y-%m-%dT%H:%M:%SZ"
        )
        [item] = offer["offerItems"]
        assert item["legIndex"] == 0
        assert 1 <= item["seatsRemaining"] <= 9
        flight = item["flight"]
        assert (flight["origin"], flight["destination"], flight["stops"], flight["duration"]) == (
            "PVD",
            "CHS",
            0,
            "PT2H5M",
        )
        assert flight["departureDateTime"] == f"{network.isoformat()}T07:00:00"
        [segment] = flight["segments"]
        assert (
            segment["marketingCarrier"],
            segment["marketingFlightNumber"],
            segment["cabinTypeCode"],
        ) == ("MX", "101", "Y")
        assert segment["legs"][0]["aircraftTypeCode"] == "E75"
        assert all(
            LOCAL_TIME.match(v)
            for v in (flight["arrivalDateTime"], segment["legs"][0]["departureDateTime"])
        )
        assert item["fare"]["rbd"] == segment["rbd"] == "L"  # the cheapest class, all seats free
        assert {"benefits", "baggageDisclosures", "penalties", "seatProfiles"} <= set(item["fare"])
        for o in data["offers"]:
            assert_offer(o)

    def test_the_direct_one_stop_flight_is_one_segment_of_two_legs(self, api, auth, network):
        offers = offers_of(search(api, auth, search_body(("PVD", "TPA", network))))

        flights = {tuple(o["offerItems"][0]["flight"]["flightNumbers"]) for o in offers}
        assert flights == {("MX501",)}
        flight = offers[0]["offerItems"][0]["flight"]
        assert flight["stops"] == 1
        assert [len(s["legs"]) for s in flight["segments"]] == [2]
        assert [leg["destination"] for leg in flight["segments"][0]["legs"]] == ["CHS", "TPA"]
        bundles = [o["offerItems"][0]["fare"]["bundleName"] for o in offers]
        assert bundles == ["No Flex", "Nice", "Nicer", "Nicest"]  # the A320 has a business cabin
        nicest = offers[3]["offerItems"][0]
        assert {s["cabinTypeCode"] for s in nicest["flight"]["segments"]} == {"C"}

    def test_a_government_approval_disclosure_shows_where_the_schedule_files_one(
        self, api, auth, network
    ):
        offers = offers_of(search(api, auth, search_body(("PVD", "TPA", network))))

        [segment] = offers[0]["offerItems"][0]["flight"]["segments"]
        assert segment["govtApprovalDisclosure"] == "SUBJECT TO GOVERNMENT APPROVAL"
        first_leg, second_leg = segment["legs"]
        assert "govtApprovalDisclosure" not in first_leg  # absent when unaffected (SPEC.md §2.2)
        assert second_leg["govtApprovalDisclosure"] == "SUBJECT TO GOVERNMENT APPROVAL"
        nonstop = offers_of(search(api, auth, search_body(("PVD", "CHS", network))))
        mx101 = next(
            o for o in nonstop if o["offerItems"][0]["flight"]["flightNumbers"] == ["MX101"]
        )
        assert "govtApprovalDisclosure" not in mx101["offerItems"][0]["flight"]["segments"][0]

    def test_a_market_served_only_by_connection(self, api, auth, network):
        offers = offers_of(search(api, auth, search_body(("PVD", "MSY", network))))

        flight = offers[0]["offerItems"][0]["flight"]
        assert flight["flightNumbers"] == ["MX701", "MX702"]
        assert [s["origin"] + s["destination"] for s in flight["segments"]] == ["PVDCLT", "CLTMSY"]
        assert flight["stops"] == 1
        assert flight["arrivalDateTime"].endswith("T12:15:00")  # MSY local time
        assert flight["duration"] == "PT5H15M"

    def test_codes_are_case_insensitive_and_answered_upper_case(self, api, auth, network):
        offers = offers_of(search(api, auth, search_body(("pvd", "Chs", network))))

        assert offers[0]["offerItems"][0]["flight"]["origin"] == "PVD"

    def test_the_last_date_of_the_calendar_gives_no_offers(self, api, auth, network):
        body = search_body(("PVD", "CHS", network))
        body["originDestinations"][0]["departureDate"] = "9999-12-31"

        assert offers_of(search(api, auth, body)) == []

    def test_a_date_with_no_flights_gives_no_offers(self, api, auth, network):
        assert (
            offers_of(search(api, auth, search_body(("PVD", "CHS", network + timedelta(days=200)))))
            == []
        )


class TestParties:
    def test_adults_children_and_a_lap_infant(self, api, auth, network):
        passengers = [
            {"type": "ADT"},
            {"type": "CHD"},
            {"type": "INF"},
            {"type": "ADT", "paxId": "lead"},
        ]

        data = search(
            api, auth, search_body(("PVD", "CHS", network), passengers=passengers)
        ).json()["data"]

        assert data["pax"] == [
            {"paxId": "ADT-1", "ptc": "ADT"},
            {"paxId": "CHD-1", "ptc": "CHD"},
            {"paxId": "INF-1", "ptc": "INF"},
            {"paxId": "lead", "ptc": "ADT"},
        ]
        item = data["offers"][0]["offerItems"][0]
        rows = {row["ptc"]: row for row in item["passengerPrices"]}
        assert (rows["ADT"]["count"], rows["ADT"]["paxRefIds"]) == (2, ["ADT-1", "lead"])
        assert rows["CHD"]["price"] == rows["ADT"]["price"]  # a child pays the adult fare
        assert amount(rows["INF"]["price"]["total"]) == Decimal("0.00")  # a lap infant pays nothing
        assert_offer(data["offers"][0])

    def test_a_lap_infant_needs_no_seat(self, api, auth, network):
        leg = FlightLeg.objects.get(flight_number=101, flight_date=network)
        inventory_sell(leg_ids=[leg.pk], rbd="Y", seats=75)  # one seat left on the E175

        with_infant = search_body(
            ("PVD", "CHS", network), passengers=[{"type": "ADT"}, {"type": "INF"}]
        )
        offers = offers_of(search(api, auth, with_infant))

        mx101 = [o for o in offers if o["offerItems"][0]["flight"]["flightNumbers"] == ["MX101"]]
        assert mx101
        assert all(o["offerItems"][0]["seatsRemaining"] == 1 for o in mx101)
        two_adults = search_body(
            ("PVD", "CHS", network), passengers=[{"type": "ADT"}, {"type": "ADT"}]
        )
        assert not [
            o
            for o in offers_of(search(api, auth, two_adults))
            if o["offerItems"][0]["flight"]["flightNumbers"] == ["MX101"]
        ]

    def test_the_price_rises_as_lower_classes_sell_out(self, api, auth, network):
        body = search_body(("PVD", "CHS", network))
        before = offers_of(search(api, auth, body))[0]["offerItems"][0]
        leg = FlightLeg.objects.get(flight_number=101, flight_date=network)
        inventory_sell(leg_ids=[leg.pk], rbd="L", seats=15)  # the L class of the E175 is full

        after = offers_of(search(api, auth, body))[0]["offerItems"][0]

        assert (before["fare"]["rbd"], after["fare"]["rbd"]) == ("L", "K")
        assert amount(after["totalPrice"]["total"]) > amount(before["totalPrice"]["total"])


class TestShape:
    def test_a_round_trip_has_both_directions(self, api, auth, network):
        body = search_body(("PVD", "CHS", network), ("CHS", "PVD", network + timedelta(days=7)))

        offers = offers_of(search(api, auth, body))

        assert {o["offerItems"][0]["legIndex"] for o in offers} == {0, 1}
        back = [o for o in offers if o["offerItems"][0]["legIndex"] == 1]
        assert back[0]["offerItems"][0]["flight"]["flightNumbers"] == ["MX102"]

    def test_six_directions_are_allowed(self, api, auth, network):
        legs = [("PVD", "CHS"), ("CHS", "PVD")] * 3
        body = search_body(*[(o, d, network + timedelta(days=n)) for n, (o, d) in enumerate(legs)])

        offers = offers_of(search(api, auth, body))

        assert {o["offerItems"][0]["legIndex"] for o in offers} == set(range(6))

    def test_by_journey_groups_the_same_offers(self, api, auth, network):
        body = search_body(("PVD", "CHS", network), ("CHS", "PVD", network + timedelta(days=3)))

        response = search(api, auth, body, "/json/v1/offers/byJourney")

        assert response.status_code == 201
        data = response.json()["data"]
        assert data["view"] == "byJourney"
        out, back = data["directions"]
        assert (out["legIndex"], out["origin"], out["destination"], out["departureDate"]) == (
            0,
            "PVD",
            "CHS",
            network.isoformat(),
        )
        assert back["departureDate"] == (network + timedelta(days=3)).isoformat()
        journey = out["journeys"][0]
        assert [o["fare"]["bundleName"] for o in journey["options"]] == ["No Flex", "Nice", "Nicer"]
        assert len({o["offerId"] for j in out["journeys"] for o in j["options"]}) == sum(
            len(j["options"]) for j in out["journeys"]
        )
        for option in journey["options"]:
            assert_offer({"totalPrice": option["totalPrice"], "offerItems": [option]})

    def test_a_key_limited_to_two_bundles_sees_only_those(
        self, api, network, partner, default_seller
    ):
        key = ApiKeyFactory(partner=partner, allowed_bundles=["NICE", "NICEST"])
        auth = bearer(token_for(api, key.raw))

        offers = offers_of(search(api, auth, search_body(("PVD", "TPA", network))))

        assert [o["offerItems"][0]["fare"]["bundleName"] for o in offers] == ["Nice", "Nicest"]

    def test_the_cabin_filter(self, api, auth, network):
        offers = offers_of(
            search(api, auth, search_body(("PVD", "TPA", network), cabinTypeCode="C"))
        )

        assert [o["offerItems"][0]["fare"]["bundleName"] for o in offers] == ["Nicest"]

    def test_usd_may_be_named(self, api, auth, network):
        assert (
            search(api, auth, search_body(("PVD", "CHS", network), currency="USD")).status_code
            == 201
        )


class TestErrors:
    @pytest.mark.parametrize(
        ("mutate", "path"),
        [
            (
                lambda b: b["originDestinations"][0].update(departureDate="2027/01/01"),
                "originDestinations.departureDate",
            ),
            (
                lambda b: b["originDestinations"][0].update(origin="PV1"),
                "originDestinations.origin",
            ),
            (
                lambda b: b["originDestinations"][0].update(destination="PVD"),
                "originDestinations.destination",
            ),
            (lambda b: b["originDestinations"][0].pop("origin"), "originDestinations.origin"),
            (lambda b: b.update(originDestinations=[]), "originDestinations"),
            (lambda b: b.update(passengers=[]), "passengers"),
            (lambda b: b["passengers"].append({"type": "XXX"}), "passengers.type"),
            (lambda b: b["passengers"].append({"type": "ADT", "paxId": ""}), "passengers.paxId"),
            (
                lambda b: b.update(
                    passengers=[{"type": "ADT", "paxId": "A"}, {"type": "CHD", "paxId": "A"}]
                ),
                "passengers.paxId",
            ),
            (
                lambda b: b.update(passengers=[{"type": "ADT"}, {"type": "INF"}, {"type": "INF"}]),
                "passengers.type",
            ),
            (lambda b: b.update(passengers=[{"type": "CHD"}]), "passengers.type"),
            (lambda b: b.update(cabinTypeCode="Z"), "cabinTypeCode"),
            (lambda b: b.update(currency="EUR"), "currency"),
            (lambda b: b.update(currency="usd"), "currency"),
            (lambda b: b.update(promoCode="X"), "promoCode"),
            (
                lambda b: b["originDestinations"][0].update(time="morning"),
                "originDestinations.time",
            ),
            (lambda b: b["passengers"][0].update(age=30), "passengers.age"),
        ],
        ids=[
            "bad-date",
            "bad-code",
            "same-station",
            "missing-origin",
            "no-directions",
            "no-passengers",
            "bad-type",
            "empty-paxid",
            "duplicate-paxid",
            "infants-exceed-adults",
            "child-only",
            "bad-cabin",
            "non-usd",
            "lower-case-currency",
            "unknown-property",
            "unknown-nested",
            "unknown-in-passenger",
        ],
    )
    def test_validation_errors_name_the_field(self, api, auth, network, mutate, path):
        body = search_body(("PVD", "CHS", network))
        mutate(body)

        error_of(search(api, auth, body), 422, "ERR-1005", path)

    def test_a_date_before_today_in_utc_minus_12(self, api, auth, network, clock):
        yesterday_there = (clock.at - timedelta(hours=12)).date() - timedelta(days=1)

        error_of(
            search(api, auth, search_body(("PVD", "CHS", yesterday_there))),
            422,
            "ERR-1005",
            "originDestinations.departureDate",
        )

    def test_dates_out_of_travel_order(self, api, auth, network):
        body = search_body(("PVD", "CHS", network + timedelta(days=2)), ("CHS", "PVD", network))

        error_of(search(api, auth, body), 422, "ERR-1005", "originDestinations.departureDate")

    def test_seven_directions(self, api, auth, network):
        body = search_body(*[("PVD", "CHS", network)] * 7)

        error_of(search(api, auth, body), 422, "ERR-1005", "originDestinations")

    def test_an_unknown_station_is_an_invalid_market(self, api, auth, network):
        error_of(
            search(api, auth, search_body(("PVD", "XYZ", network))),
            422,
            "ERR-1006",
            "originDestinations.destination",
        )

    def test_a_pair_we_do_not_fly_is_an_invalid_market(self, api, auth, network):
        error_of(
            search(api, auth, search_body(("TPA", "PVD", network))),
            422,
            "ERR-1006",
            "originDestinations",
        )

    def test_the_body_must_be_json(self, api, auth, network):
        response = api.post("/json/v1/offers", "origin=PVD", content_type="text/plain", **auth)

        error_of(response, 415, "ERR-1003", None)

    def test_a_token_is_needed(self, api, network):
        response = api.post("/json/v1/offers", search_body(("PVD", "CHS", network)), format="json")

        assert response.status_code == 401
        assert response.json()["error"]["code"] == "ERR-8000"

    def test_an_unsupported_version(self, api, auth, network):
        error_of(
            search(api, auth, search_body(("PVD", "CHS", network)), "/json/v7/offers"),
            404,
            "ERR-1002",
            "version",
        )

    def test_availability_failure_is_err_2002(self, api, auth, network):
        def fail(execute, sql, params, many, context):
            if "network_leginventory" in sql:
                raise InternalError("could not read block 7 of relation network_leginventory")
            return execute(sql, params, many, context)

        with connection.execute_wrapper(fail):
            response = search(api, auth, search_body(("PVD", "CHS", network)))

        error_of(response, 500, "ERR-2002", None)

    def test_availability_unreachable_is_err_9000_with_retry_after(self, api, auth, network):
        def lost(execute, sql, params, many, context):
            if "network_leginventory" in sql:
                raise OperationalError("server closed the connection unexpectedly")
            return execute(sql, params, many, context)

        with connection.execute_wrapper(lost):
            response = search(api, auth, search_body(("PVD", "CHS", network)))

        error_of(response, 503, "ERR-9000", None)
        assert response["Retry-After"] == "5"
