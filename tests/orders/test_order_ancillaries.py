"""Seats and services of a booking: POST /orders/{id}/seats and /services, and PATCH
/orders/{id} AcceptOffer, ConfirmHold, CancelUnpaidOrder (SPEC.md §2.6, §3, §4.10,
§4.11; DESIGN.md §7, §11)."""

from decimal import Decimal

import pytest
from django.db import connection

from orders.models import Order, Service
from tests.conftest import bearer, error_of, round_trips_sent, token_for
from tests.orders.conftest import CARD, book, booking_body, price_offer
from tests.sellers.factories import ApiKeyFactory

pytestmark = pytest.mark.django_db


def seats(api, auth, order_id, body=None):
    return api.post(f"/json/v1/orders/{order_id}/seats", body, format="json", **auth)


def services(api, auth, order_id, body=None):
    return api.post(f"/json/v1/orders/{order_id}/services", body, format="json", **auth)


def change(api, auth, order_id, body, **headers):
    return api.patch(f"/json/v1/orders/{order_id}", body, format="json", **auth, **headers)


def units(seat_map):
    return [u for d in seat_map["decks"] for c in d["compartments"] for u in c["units"]]


def open_seat(seat_map, pax_ref, group="standard", properties=()):
    """An open seat of the zone that `pax_ref` may buy, with its pricing row."""
    for unit in units(seat_map):
        if unit["availability"] != "Open" or unit["group"] != group:
            continue
        if not set(properties) <= set(unit["properties"]):
            continue
        for row in unit.get("passengerPricing", []):
            if row["paxRefId"] == pax_ref:
                return unit, row
    raise AssertionError(f"no open {group} seat for {pax_ref}")


def seat_entry(data, unit, row):
    return {
        "type": "AcceptOffer",
        "offerId": data["offerId"],
        "offerItemId": row["offerItemId"],
        "passengerIds": [row["paxRefId"]],
        "seat": {"row": int(unit["designator"][:-1]), "column": unit["designator"][-1]},
    }


def bag_entry(data, code, pax_ref, journey_ref):
    [service] = [s for s in data["services"] if s["serviceCode"] == code]
    [availability] = [a for a in service["segmentAvailability"] if a["journeyRefId"] == journey_ref]
    [row] = [r for r in availability["passengerPricing"] if r["paxRefId"] == pax_ref]
    return {
        "type": "AcceptOffer",
        "offerId": data["offerId"],
        "offerItemId": row["offerItemId"],
        "passengerIds": [pax_ref],
    }, row


def test_a_hold_with_a_seat_and_a_bag_stays_onhold_with_the_larger_balance(api, auth, hold):
    order_id = hold["order"]["orderId"]
    ada = hold["pax"][0]["paxId"]
    journey = hold["journeys"][0]["journeyId"]
    seat_data = seats(api, auth, order_id).json()["data"]
    unit, seat_price = open_seat(seat_data["legSeatMaps"][0], ada)
    service_data = services(api, auth, order_id).json()["data"]
    bag, bag_price = bag_entry(service_data, "CB1", ada, journey)

    response = change(
        api, auth, order_id, {"changes": [seat_entry(seat_data, unit, seat_price), bag]}
    )

    assert response.status_code == 200, response.content
    data = response.json()["data"]
    added = sum(
        Decimal(str(r["amount"])) + Decimal(str(r["taxAmount"])) for r in (seat_price, bag_price)
    )
    assert added > 0
    before = Decimal(str(hold["order"]["balanceDue"]["amount"]))
    assert data["order"]["statusCode"] == "ONHOLD"
    assert Decimal(str(data["order"]["balanceDue"]["amount"])) == before + added
    assert Decimal(str(data["order"]["totalPrice"]["total"]["amount"])) == before + added
    by_code = {s["code"]: s for s in data["services"]}
    assert by_code["STST"]["attributes"]["seat"] == unit["designator"]
    assert by_code["STST"]["paxRefId"] == ada
    assert by_code["STST"]["segmentRefId"] == hold["journeys"][0]["segments"][0]["segmentId"]
    assert by_code["CB1"]["journeyRefId"] == journey
    assert by_code["CB1"]["category"] == "baggage"
    assert all("emdNumber" not in s for s in data["services"])  # unpaid: no EMD yet
    assert not data["payments"]


def test_a_seat_bought_shows_taken_for_every_seller(
    api, auth, hold, partner_key, other_seller, travel_day
):
    order_id = hold["order"]["orderId"]
    seat_data = seats(api, auth, order_id).json()["data"]
    unit, price = open_seat(seat_data["legSeatMaps"][0], hold["pax"][0]["paxId"])
    assert (
        change(api, auth, order_id, {"changes": [seat_entry(seat_data, unit, price)]}).status_code
        == 200
    )

    again = seats(api, auth, order_id).json()["data"]["legSeatMaps"][0]
    other = bearer(token_for(api, partner_key.raw, other_seller.pk))
    offer = price_offer(api, other, travel_day)
    theirs = api.post(
        f"/json/v1/offers/{offer['offer']['offerId']}/seats",
        {"offerItemIds": [offer["offer"]["items"][0]["offerItemId"]]},
        format="json",
        **other,
    ).json()["data"]["legSeatMaps"][0]

    for seat_map in (again, theirs):
        [taken] = [u for u in units(seat_map) if u["designator"] == unit["designator"]]
        assert (taken["availability"], taken["assignable"]) == ("Reserved", False)
        assert "passengerPricing" not in taken


def test_an_orders_seat_map_reads_the_order_in_four_queries_and_three_round_trips(
    api, auth, hold, django_assert_num_queries
):
    order_id = hold["order"]["orderId"]
    assert seats(api, auth, order_id).status_code == 200  # warm the per-process layouts

    # The order row, its flight items, its passengers and the legs its segments fly;
    # then the seat map's own two (tests/offers/test_ancillaries.py QUERIES).
    with django_assert_num_queries(4 + 2), round_trips_sent() as trips:
        assert seats(api, auth, order_id).status_code == 200

    # The order's three together, then the flights' legs with the seats taken on them.
    assert [len(trip) for trip in trips] == [1, 3, 2]
    assert 'FROM "orders_service"' in trips[2][1]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks of PostgreSQL")
def test_a_seat_accepted_reads_the_order_its_seat_map_and_endpoints_with_other_statements(
    api, auth, hold
):
    order_id = hold["order"]["orderId"]
    seat_data = seats(api, auth, order_id).json()["data"]
    unit, price = open_seat(seat_data["legSeatMaps"][0], hold["pax"][0]["paxId"])

    with round_trips_sent() as trips:
        accepted = change(api, auth, order_id, {"changes": [seat_entry(seat_data, unit, price)]})

    assert accepted.status_code == 200, accepted.content

    def trip_with(text: str) -> list[str]:
        [trip] = [trip for trip in trips if any(text in sql for sql in trip)]
        return trip

    # The order's parts together; the aircraft's seat configuration, locked, with its
    # cabins; the change's event with its seller's webhook endpoints.
    assert len(trip_with('FROM "orders_contact"')) == 7
    assert any("FOR SHARE" in sql for sql in trip_with('FROM "network_cabinlayout"'))
    assert any(
        'FROM "webhooks_webhookendpoint"' in sql
        for sql in trip_with('INSERT INTO "orders_orderevent"')
    )


def test_a_seat_taken_meanwhile_is_refused(api, auth, hold):
    order_id = hold["order"]["orderId"]
    seat_data = seats(api, auth, order_id).json()["data"]
    ada, bob = hold["pax"][0]["paxId"], hold["pax"][1]["paxId"]
    unit, price = open_seat(seat_data["legSeatMaps"][0], ada)
    assert (
        change(api, auth, order_id, {"changes": [seat_entry(seat_data, unit, price)]}).status_code
        == 200
    )
    entry = seat_entry(seat_data, unit, price)
    entry["passengerIds"] = [bob]

    error_of(change(api, auth, order_id, {"changes": [entry]}), 400, "ERR-4002")
    assert Service.objects.filter(seat_row__isnull=False).count() == 1


def test_cb2_without_cb1_is_refused_and_with_it_accepted(api, auth, hold):
    order_id = hold["order"]["orderId"]
    ada, journey = hold["pax"][0]["paxId"], hold["journeys"][0]["journeyId"]
    data = services(api, auth, order_id).json()["data"]
    cb2, _ = bag_entry(data, "CB2", ada, journey)
    cb1, _ = bag_entry(data, "CB1", ada, journey)

    error_of(change(api, auth, order_id, {"changes": [cb2]}), 400, "ERR-4002", "changes")
    assert not Service.objects.exists()
    assert change(api, auth, order_id, {"changes": [cb2, cb1]}).status_code == 200
    assert sorted(Service.objects.values_list("code", flat=True)) == ["CB1", "CB2"]
    error_of(change(api, auth, order_id, {"changes": [cb1]}), 400, "ERR-4002")


def test_bundle_included_items_are_priced_zero(api, auth, travel_day, partner):
    nicer = bearer(token_for(api, ApiKeyFactory(partner=partner, allowed_bundles=["NICER"]).raw))
    priced = price_offer(api, nicer, travel_day)
    order = book(api, nicer, booking_body(priced)).json()["data"]
    order_id = order["order"]["orderId"]
    ada, journey = order["pax"][0]["paxId"], order["journeys"][0]["journeyId"]

    data = services(api, nicer, order_id).json()["data"]
    _, cb1 = bag_entry(data, "CB1", ada, journey)
    _, cb2 = bag_entry(data, "CB2", ada, journey)
    _, cob = bag_entry(data, "COB", ada, journey)
    seat_map = seats(api, nicer, order_id).json()["data"]["legSeatMaps"][0]
    _, standard = open_seat(seat_map, ada)

    assert (cb1["amount"], cb1["taxAmount"], cob["amount"]) == (0, 0, 0)  # Nicer: one bag, carry-on
    assert cb2["amount"] > 0
    assert (standard["amount"], standard["taxAmount"]) == (0, 0)  # Nicer: a free standard seat


def test_no_seat_for_an_infant_and_no_exit_row_for_its_adult_or_a_child(api, auth, travel_day):
    party = [{"type": "ADT"}, {"type": "ADT"}, {"type": "CHD"}, {"type": "INF"}]
    priced = price_offer(api, auth, travel_day, party=party)
    order = book(api, auth, booking_body(priced)).json()["data"]
    order_id = order["order"]["orderId"]
    adult_with_infant, free_adult, child, infant = (p["paxId"] for p in order["pax"])

    seat_map = seats(api, auth, order_id).json()["data"]["legSeatMaps"][0]

    priced_for = {
        (u["designator"], r["paxRefId"])
        for u in units(seat_map)
        for r in u.get("passengerPricing", [])
    }
    exit_seats = {u["designator"] for u in units(seat_map) if "EXIT" in u["properties"]}
    assert exit_seats
    assert not any(pax == infant for _, pax in priced_for)
    for seat in exit_seats:
        assert (seat, child) not in priced_for
        assert (seat, adult_with_infant) not in priced_for
    assert any((seat, free_adult) in priced_for for seat in exit_seats)


def test_a_paid_order_needs_a_payment_for_a_seat_and_gets_an_emd(api, auth, priced):
    order = book(api, auth, booking_body(priced, payment=CARD)).json()["data"]
    order_id = order["order"]["orderId"]
    seat_data = seats(api, auth, order_id).json()["data"]
    unit, price = open_seat(seat_data["legSeatMaps"][0], order["pax"][0]["paxId"])
    body = {"changes": [seat_entry(seat_data, unit, price)]}

    error_of(change(api, auth, order_id, body), 400, "ERR-4002", "payment")
    response = change(api, auth, order_id, {**body, "payment": CARD})

    assert response.status_code == 200, response.content
    data = response.json()["data"]
    [service] = data["services"]
    assert len(service["emdNumber"]) == 13
    assert service["emdNumber"].startswith("880")
    assert len(data["payments"]) == 2
    assert data["order"]["statusCode"] == "CONFIRMED"
    stored = Order.objects.get(order_id=order_id)
    assert stored.paid == stored.total


def test_confirm_hold_with_payment_and_cancel_unpaid(api, auth, hold, priced, travel_day):
    order_id = hold["order"]["orderId"]
    error_of(
        change(api, auth, order_id, {"changes": [{"type": "ConfirmHold"}]}),
        400,
        "ERR-4002",
        "payment",
    )

    confirmed = change(api, auth, order_id, {"changes": [{"type": "ConfirmHold"}], "payment": CARD})

    data = confirmed.json()["data"]
    assert data["order"]["statusCode"] == "CONFIRMED", confirmed.content
    assert data["tickets"]
    assert data["payments"][0]["amount"] == hold["order"]["totalPrice"]["total"]
    error_of(
        change(api, auth, order_id, {"changes": [{"type": "CancelUnpaidOrder"}]}), 400, "ERR-4002"
    )

    other = book(api, auth, booking_body(price_offer(api, auth, travel_day))).json()["data"]
    cancelled = change(
        api, auth, other["order"]["orderId"], {"changes": [{"type": "CancelUnpaidOrder"}]}
    )
    assert cancelled.json()["data"]["order"]["statusCode"] == "CANCELLED"


@pytest.mark.parametrize(
    ("body", "status", "code", "path"),
    [
        ({}, 422, "ERR-1005", "changes"),
        ({"changes": []}, 422, "ERR-1005", "changes"),
        ({"changes": [{"type": "Upgrade"}]}, 422, "ERR-1005", "changes.type"),
        ({"changes": [{"type": "AcceptOffer"}]}, 422, "ERR-1005", "changes.offerId"),
        (
            {"changes": [{"type": "AcceptOffer", "offerId": "x.1", "offerItemId": "x.1.1"}]},
            404,
            "ERR-3000",
            "offerId",
        ),
        (
            {"changes": [{"type": "CancelJourney", "journeyRef": "JOU-NOTONIT"}]},
            400,
            "ERR-4006",
            "changes.journeyRef",
        ),
    ],
)
def test_change_body_rules(api, auth, hold, body, status, code, path):
    error_of(change(api, auth, hold["order"]["orderId"], body), status, code, path)


def test_an_offer_of_another_order_or_a_flight_offer_is_refused(
    api, auth, hold, priced, travel_day
):
    other = book(api, auth, booking_body(price_offer(api, auth, travel_day))).json()["data"]
    seat_data = seats(api, auth, other["order"]["orderId"]).json()["data"]
    unit, price = open_seat(seat_data["legSeatMaps"][0], other["pax"][0]["paxId"])
    entry = seat_entry(seat_data, unit, price)

    error_of(change(api, auth, hold["order"]["orderId"], {"changes": [entry]}), 400, "ERR-4002")
    flight = {
        "type": "AcceptOffer",
        "offerId": priced["offer"]["offerId"],
        "offerItemId": priced["offer"]["items"][0]["offerItemId"],
    }
    error_of(change(api, auth, hold["order"]["orderId"], {"changes": [flight]}), 400, "ERR-4002")


def test_changes_need_full_permission_and_the_sellers_own_order(
    api, hold, read_only_key, partner_key, other_seller
):
    order_id = hold["order"]["orderId"]
    read_only = bearer(token_for(api, read_only_key.raw))
    body = {"changes": [{"type": "CancelUnpaidOrder"}]}
    assert change(api, read_only, order_id, body).json()["error"]["code"] == "ERR-8001"
    assert seats(api, read_only, order_id).status_code == 200  # maps: read-only keys allowed
    other = bearer(token_for(api, partner_key.raw, other_seller.pk))
    error_of(change(api, other, order_id, body), 404, "ERR-4000")
    error_of(seats(api, other, order_id), 404, "ERR-4000")
    error_of(services(api, other, order_id), 404, "ERR-4000")


@pytest.mark.parametrize(
    ("categories", "refused", "answered"),
    [(["BAGGAGE"], seats, services), (["SEAT"], services, seats)],
)
def test_a_key_is_refused_the_list_of_what_it_may_not_sell(
    api, hold, partner, default_seller, categories, refused, answered
):
    order_id = hold["order"]["orderId"]
    key = ApiKeyFactory(partner=partner, allowed_ancillary_categories=categories)
    limited = bearer(token_for(api, key.raw))

    error = error_of(refused(api, limited, order_id), 403, "ERR-8001")
    assert "This API key may" in error["description"]
    assert answered(api, limited, order_id).status_code == 200


@pytest.mark.parametrize(
    ("body", "status", "code", "path"),
    [
        ({"passengers": [{"paxId": "PAX|1"}]}, 400, "ERR-1004", "passengers.paxId"),
        ({"passengers": [{"paxId": "PAX-NOPE"}]}, 422, "ERR-1005", "passengers"),
        ({"orderItemIds": ["OOI-NOPE"]}, 422, "ERR-1005", "orderItemIds"),
        ({"extra": 1}, 422, "ERR-1005", "extra"),
    ],
)
def test_order_ancillary_body_rules(api, auth, hold, body, status, code, path):
    for ask in (seats, services):
        error_of(ask(api, auth, hold["order"]["orderId"], body), status, code, path)


def test_maps_narrow_to_the_items_and_passengers_asked(api, auth, hold):
    order_id = hold["order"]["orderId"]
    outbound = hold["order"]["items"][0]["itemId"]
    ada = hold["pax"][0]["paxId"]

    data = seats(
        api, auth, order_id, {"orderItemIds": [outbound], "passengers": [{"paxId": ada}]}
    ).json()["data"]

    [seat_map] = data["legSeatMaps"]
    assert seat_map["segmentRefId"] == hold["journeys"][0]["segments"][0]["segmentId"]
    assert {r["paxRefId"] for u in units(seat_map) for r in u.get("passengerPricing", [])} == {ada}


def test_an_imported_booking_gets_seat_maps_with_every_seat_priced(api, auth, travel_day):
    import json

    from orders.booking.imports import orders_import

    line = {
        "recordLocator": "QX7R2M",
        "status": "PENDING",
        "agencyCode": "ACMEAGT",
        "sellerCode": "ACME1",
        "passengers": [{"type": "ADT", "givenName": "Ada", "surname": "Lovelace"}],
        "contact": {"emailAddress": "ada@example.com"},
        "journeys": [
            [
                {
                    "flightNumber": "MX101",
                    "departureDate": travel_day.isoformat(),
                    "origin": "PVD",
                    "destination": "CHS",
                    "rbd": "Y",
                }
            ]
        ],
        "totalPrice": {"amount": "189.60", "currency": "USD"},
    }
    report = orders_import([json.dumps(line)])
    assert report.created == 1, report

    response = seats(api, auth, "QX7R2M")

    assert response.status_code == 200, response.content
    [seat_map] = response.json()["data"]["legSeatMaps"]
    priced = [r for u in units(seat_map) for r in u.get("passengerPricing", [])]
    assert priced
    assert all(r["amount"] > 0 for r in priced)


def test_a_repeated_change_with_its_idempotency_key_applies_once(api, auth, hold):
    order_id = hold["order"]["orderId"]
    data = services(api, auth, order_id).json()["data"]
    bag, _ = bag_entry(data, "CB1", hold["pax"][0]["paxId"], hold["journeys"][0]["journeyId"])
    body = {"changes": [bag]}

    first = change(api, auth, order_id, body, HTTP_IDEMPOTENCY_KEY="bag-1")
    again = change(api, auth, order_id, body, HTTP_IDEMPOTENCY_KEY="bag-1")

    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert Service.objects.count() == 1


@pytest.mark.parametrize("ask", [seats, services])
def test_a_failed_lookup_is_err_9003(api, auth, hold, monkeypatch, ask):
    from django.db import OperationalError

    def unavailable(*args, **kwargs):
        raise OperationalError("the database went away")

    monkeypatch.setattr("orders.reading.trips.order_trip", unavailable, raising=False)
    monkeypatch.setattr("orders.views.order_trip", unavailable)
    error_of(ask(api, auth, hold["order"]["orderId"]), 500, "ERR-9003")
