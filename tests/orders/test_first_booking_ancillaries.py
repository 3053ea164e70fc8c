"""Seats and bags in the first booking, bundle inclusions on the order, seat changes,
cancelled lines kept in view, service prices as fees, and the passenger id links
(issue 13; SPEC.md §2.5, §3; DESIGN.md §11)."""

from decimal import Decimal

import pytest

from airline.network.models import LegInventory
from orders.models import Order, OrderStatus, Passenger, Payment, Service
from tests.conftest import bearer, error_of, token_for
from tests.orders.conftest import CARD, book, booking_body, price_offer
from tests.orders.test_order_ancillaries import change, open_seat, seats, services, units
from tests.sellers.factories import ApiKeyFactory

pytestmark = pytest.mark.django_db


def dec(value) -> Decimal:
    return Decimal(str(value))


def offer_ancillaries(api, auth, priced, kind):
    """The priced offer's seat maps or service list (POST /offers/{offerId}/seats)."""
    response = api.post(
        f"/json/v1/offers/{priced['offer']['offerId']}/{kind}",
        {"offerItemIds": [i["offerItemId"] for i in priced["offer"]["items"]]},
        format="json",
        **auth,
    )
    assert response.status_code == 200, response.content
    return response.json()["data"]


def seat_for(data, unit, row):
    return {
        "offerId": data["offerId"],
        "offerItemId": row["offerItemId"],
        "passengerIds": [row["paxRefId"]],
        "seat": {"row": int(unit["designator"][:-1]), "column": unit["designator"][-1]},
    }


def bag_for(data, code, pax_ref, journey_ref=None):
    [service] = [s for s in data["services"] if s["serviceCode"] == code]
    availability = service["segmentAvailability"][0]
    if journey_ref is not None:
        [availability] = [
            a for a in service["segmentAvailability"] if a["journeyRefId"] == journey_ref
        ]
    [row] = [r for r in availability["passengerPricing"] if r["paxRefId"] == pax_ref]
    return {
        "offerId": data["offerId"],
        "offerItemId": row["offerItemId"],
        "passengerIds": [pax_ref],
    }, row


def charged(row) -> Decimal:
    return dec(row["amount"]) + dec(row["taxAmount"])


def sold() -> int:
    """Seats sold over every flight-date leg and class."""
    return sum(LegInventory.objects.values_list("sold", flat=True))


@pytest.fixture
def seat_and_bag(api, auth, priced):
    """A seat for ADT-1 on the first leg and a first bag for ADT-2, from the priced
    offer's own seat map and service list, with their pricing rows."""
    seat_data = offer_ancillaries(api, auth, priced, "seats")
    unit, seat_row = open_seat(seat_data["legSeatMaps"][0], "ADT-1")
    service_data = offer_ancillaries(api, auth, priced, "services")
    bag, bag_row = bag_for(service_data, "CB1", "ADT-2")
    return [seat_for(seat_data, unit, seat_row), bag], (unit, seat_row, bag_row)


# Point 3: seats and bags in the first booking


def test_a_hold_takes_a_seat_and_a_bag_and_its_balance_covers_them(api, auth, priced, seat_and_bag):
    entries, (unit, seat_row, bag_row) = seat_and_bag
    flights = dec(priced["offer"]["totalPrice"]["total"]["amount"])

    response = book(api, auth, booking_body(priced, ancillaries=entries))

    assert response.status_code == 201, response.content
    data = response.json()["data"]
    expected = flights + charged(seat_row) + charged(bag_row)
    assert dec(data["order"]["balanceDue"]["amount"]) == expected
    assert dec(data["order"]["totalPrice"]["total"]["amount"]) == expected
    by_code = {s["code"]: s for s in data["services"]}
    ada, bob = (p["paxId"] for p in data["pax"][:2])
    assert by_code["STST"]["attributes"]["seat"] == unit["designator"]
    assert by_code["STST"]["paxRefId"] == ada
    assert by_code["STST"]["segmentRefId"] == data["journeys"][0]["segments"][0]["segmentId"]
    assert by_code["CB1"]["paxRefId"] == bob
    assert by_code["CB1"]["journeyRefId"] == data["journeys"][0]["journeyId"]
    order = Order.objects.get(order_id=data["order"]["orderId"])
    assert (order.total, order.paid) == (expected, 0)
    seat = Service.objects.get(order=order, code="STST")
    assert (f"{seat.seat_row}{seat.seat_column}", seat.status) == (unit["designator"], "ACTIVE")
    # The seat shows taken to the next shopper, and the order's retrieve is the response.
    again = offer_ancillaries(
        api, auth, price_offer(api, auth, order.journeys.first().departs_at.date()), "seats"
    )
    [taken] = [u for u in units(again["legSeatMaps"][0]) if u["designator"] == unit["designator"]]
    assert taken["availability"] == "Reserved"
    assert api.get(f"/json/v1/orders/{order.order_id}", **auth).json()["data"] == data


def test_a_card_booking_charges_flights_seat_and_bag_once_and_numbers_emds(
    api, auth, priced, seat_and_bag
):
    entries, (_, seat_row, bag_row) = seat_and_bag
    flights = dec(priced["offer"]["totalPrice"]["total"]["amount"])

    response = book(api, auth, booking_body(priced, payment=CARD, ancillaries=entries))

    assert response.status_code == 201, response.content
    data = response.json()["data"]
    total = flights + charged(seat_row) + charged(bag_row)
    assert data["order"]["statusCode"] == "CONFIRMED"
    [payment] = data["payments"]
    assert dec(payment["amount"]["amount"]) == total
    assert all(len(s["emdNumber"]) == 13 for s in data["services"])
    assert Payment.objects.get().amount == total
    assert Order.objects.get().paid == total


@pytest.mark.parametrize("payment", [None, CARD], ids=["hold", "card"])
def test_a_seat_taken_meanwhile_refuses_the_whole_booking(
    api, auth, priced, seat_and_bag, travel_day, payment
):
    entries, (unit, _, _) = seat_and_bag
    rival = price_offer(api, auth, travel_day)
    rival_data = offer_ancillaries(api, auth, rival, "seats")
    [rival_unit] = [
        u for u in units(rival_data["legSeatMaps"][0]) if u["designator"] == unit["designator"]
    ]
    rival_row = next(r for r in rival_unit["passengerPricing"] if r["paxRefId"] == "ADT-1")
    first = book(
        api, auth, booking_body(rival, ancillaries=[seat_for(rival_data, rival_unit, rival_row)])
    )
    assert first.status_code == 201, first.content
    before = (Order.objects.count(), Service.objects.count(), sold(), Payment.objects.count())

    response = book(api, auth, booking_body(priced, payment=payment, ancillaries=entries))

    error_of(response, 400, "ERR-4001", "ancillaries")
    assert (
        Order.objects.count(),
        Service.objects.count(),
        sold(),
        Payment.objects.count(),
    ) == before


@pytest.mark.parametrize(
    ("mutate", "status", "code", "path"),
    [
        (lambda e, p: {**e[0], "offerId": "nope.1"}, 404, "ERR-3000", "offerId"),
        (
            lambda e, p: {**e[0], "offerItemId": e[0]["offerId"] + ".999"},
            400,
            "ERR-3002",
            "ancillaries.offerItemId",
        ),
        (
            lambda e, p: {k: v for k, v in e[0].items() if k != "seat"},
            400,
            "ERR-4001",
            "ancillaries",
        ),
        (lambda e, p: {**e[1], "seat": {"row": 1, "column": "A"}}, 400, "ERR-4001", "ancillaries"),
        (lambda e, p: {**e[1], "passengerIds": ["INF-9"]}, 400, "ERR-4001", "ancillaries"),
        (lambda e, p: {**e[0], "seat": {"row": 99, "column": "Z"}}, 400, "ERR-4001", "ancillaries"),
        (lambda e, p: {**e[0], "type": "AcceptOffer"}, 422, "ERR-1005", "ancillaries.type"),
    ],
    ids=[
        "unknown offer",
        "unknown item",
        "seat item without seat",
        "bag with a seat",
        "passenger not priced",
        "no such seat",
        "unknown field",
    ],
)
def test_bad_ancillaries_refuse_the_booking_and_write_nothing(
    api, auth, priced, seat_and_bag, mutate, status, code, path
):
    entries, _ = seat_and_bag
    before = sold()

    response = book(api, auth, booking_body(priced, ancillaries=[mutate(entries, priced)]))

    error_of(response, status, code, path)
    assert not Order.objects.exists()
    assert sold() == before


def test_an_ancillary_offer_of_another_priced_offer_is_refused(api, auth, priced, travel_day):
    other = price_offer(api, auth, travel_day)
    data = offer_ancillaries(api, auth, other, "services")
    bag, _ = bag_for(data, "CB1", "ADT-1")

    error_of(
        book(api, auth, booking_body(priced, ancillaries=[bag])), 400, "ERR-4001", "ancillaries"
    )
    assert not Order.objects.exists()


def test_the_second_bag_needs_the_first_in_the_same_booking(api, auth, priced):
    data = offer_ancillaries(api, auth, priced, "services")
    cb1, _ = bag_for(data, "CB1", "ADT-1")
    cb2, _ = bag_for(data, "CB2", "ADT-1")

    error_of(
        book(api, auth, booking_body(priced, ancillaries=[cb2])), 400, "ERR-4001", "ancillaries"
    )
    response = book(api, auth, booking_body(priced, ancillaries=[cb2, cb1]))

    assert response.status_code == 201, response.content
    assert sorted(s["code"] for s in response.json()["data"]["services"]) == ["CB1", "CB2"]


def test_no_exit_row_for_the_adult_the_booking_gives_the_infant(api, auth, travel_day):
    # Before booking nobody has said who carries the infant, so ADT-2 is offered exit
    # rows; the booking then gives ADT-2 the infant.
    party = [{"type": "ADT"}, {"type": "ADT"}, {"type": "INF"}]
    priced = price_offer(api, auth, travel_day, party=party)
    data = offer_ancillaries(api, auth, priced, "seats")
    unit, row = open_seat(data["legSeatMaps"][0], "ADT-2", group="exit_row")
    body = booking_body(priced, ancillaries=[seat_for(data, unit, row)])
    body["passengers"][0].pop("infantPassengerId")
    body["passengers"][1]["infantPassengerId"] = "INF-1"

    error_of(book(api, auth, body), 400, "ERR-4001", "ancillaries")
    assert not Order.objects.exists()


# Point 4: bundle inclusions


def nicest_key(api, partner):
    return bearer(token_for(api, ApiKeyFactory(partner=partner, allowed_bundles=["NICEST"]).raw))


@pytest.mark.parametrize(
    ("bundle", "flight", "codes"),
    [("NICER", None, ["CB1", "COB"]), ("NICEST", 501, ["CB1", "CB2", "COB"])],
)
def test_a_bundles_bags_are_services_of_the_order_at_zero(
    api, auth, partner, travel_day, bundle, flight, codes
):
    key = bearer(token_for(api, ApiKeyFactory(partner=partner, allowed_bundles=[bundle]).raw))
    party = [{"type": "ADT"}, {"type": "ADT"}, {"type": "INF"}]
    priced = price_offer(api, key, travel_day, party=party, flight=flight)

    response = book(api, key, booking_body(priced))

    assert response.status_code == 201, response.content
    data = response.json()["data"]
    seated = [p["paxId"] for p in data["pax"] if p["ptc"] != "INF"]
    journey = data["journeys"][0]["journeyId"]
    got = sorted((s["paxRefId"], s["code"]) for s in data["services"])
    assert got == sorted((pax, code) for pax in seated for code in codes)
    for service in data["services"]:
        assert service["included"] is True
        assert service["journeyRefId"] == journey
        assert service["totalPrice"]["total"]["amount"] == 0
        assert "emdNumber" not in service
    assert data["order"]["totalPrice"] == priced["offer"]["totalPrice"]
    assert Service.objects.filter(included=True).count() == len(seated) * len(codes)


def test_a_bag_after_the_bundles_continues_the_ladder_at_its_own_price(
    api, auth, partner, travel_day
):
    key = nicest_key(api, partner)
    priced = price_offer(api, key, travel_day, flight=501)
    order = book(api, key, booking_body(priced, payment=CARD)).json()["data"]
    order_id, ada = order["order"]["orderId"], order["pax"][0]["paxId"]
    journey = order["journeys"][0]["journeyId"]
    data = services(api, key, order_id).json()["data"]
    cb3, cb3_row = bag_for(data, "CB3", ada, journey)
    cb1, _ = bag_for(data, "CB1", ada, journey)

    error_of(
        change(api, key, order_id, {"changes": [{"type": "AcceptOffer", **cb1}]}),
        400,
        "ERR-4002",
        "changes",
    )
    response = change(
        api, key, order_id, {"changes": [{"type": "AcceptOffer", **cb3}], "payment": CARD}
    )

    assert response.status_code == 200, response.content
    assert dec(cb3_row["amount"]) == Decimal("150.00")
    [bought] = [s for s in response.json()["data"]["services"] if s["code"] == "CB3"]
    assert dec(bought["totalPrice"]["total"]["amount"]) == Decimal("150.00")
    assert "included" not in bought
    assert dec(response.json()["data"]["payments"][1]["amount"]["amount"]) == Decimal("150.00")


def test_a_bag_the_bundle_includes_is_not_sold_again_in_the_booking(api, auth, partner, travel_day):
    key = nicest_key(api, partner)
    priced = price_offer(api, key, travel_day, flight=501)
    cb1, _ = bag_for(offer_ancillaries(api, key, priced, "services"), "CB1", "ADT-1")

    error = error_of(book(api, key, booking_body(priced, ancillaries=[cb1])), 400, "ERR-4001")
    assert "included" in error["description"]


# Point 5: seat change


def seat_change(api, auth, order, pax_index, leg=0, group="standard", exclude=()):
    order_id = order["order"]["orderId"]
    data = seats(api, auth, order_id).json()["data"]
    pax = order["pax"][pax_index]["paxId"]
    for unit in units(data["legSeatMaps"][leg]):
        if unit["availability"] != "Open" or unit["group"] != group:
            continue
        if unit["designator"] in exclude:
            continue
        row = next((r for r in unit["passengerPricing"] if r["paxRefId"] == pax), None)
        if row:
            return {"type": "AcceptOffer", **seat_for(data, unit, row)}, unit, row
    raise AssertionError("no seat")


def test_a_new_seat_on_a_hold_replaces_the_old_one(api, auth, priced):
    hold = book(api, auth, booking_body(priced)).json()["data"]
    first, first_unit, first_row = seat_change(api, auth, hold, 0)
    assert change(api, auth, hold["order"]["orderId"], {"changes": [first]}).status_code == 200
    second, second_unit, second_row = seat_change(api, auth, hold, 0, group="extra_legroom")

    response = change(api, auth, hold["order"]["orderId"], {"changes": [second]})

    assert response.status_code == 200, response.content
    data = response.json()["data"]
    seats_of_ada = {
        s["attributes"]["seat"]: s["statusCode"]
        for s in data["services"]
        if s["code"].startswith("ST")
    }
    assert seats_of_ada == {
        first_unit["designator"]: "CANCELLED",
        second_unit["designator"]: "CONFIRMED",
    }
    flights = dec(priced["offer"]["totalPrice"]["total"]["amount"])
    assert dec(data["order"]["balanceDue"]["amount"]) == flights + charged(second_row)
    assert dec(data["order"]["totals"]["voided"]["amount"]) == charged(first_row)
    assert Service.objects.filter(status="ACTIVE", seat_row__isnull=False).count() == 1
    # The old seat is free again for everyone.
    seat_map = seats(api, auth, hold["order"]["orderId"]).json()["data"]["legSeatMaps"][0]
    [old] = [u for u in units(seat_map) if u["designator"] == first_unit["designator"]]
    assert old["availability"] == "Open"


def test_a_dearer_seat_on_a_paid_order_charges_the_difference_and_a_cheaper_one_nothing(
    api, auth, priced
):
    order = book(api, auth, booking_body(priced, payment=CARD)).json()["data"]
    order_id = order["order"]["orderId"]
    standard, _, standard_row = seat_change(api, auth, order, 0)
    assert change(api, auth, order_id, {"changes": [standard], "payment": CARD}).status_code == 200
    dearer, _, dearer_row = seat_change(api, auth, order, 0, group="extra_legroom")

    error_of(change(api, auth, order_id, {"changes": [dearer]}), 400, "ERR-4002", "payment")
    upgraded = change(api, auth, order_id, {"changes": [dearer], "payment": CARD})

    assert upgraded.status_code == 200, upgraded.content
    payments = upgraded.json()["data"]["payments"]
    assert dec(payments[-1]["amount"]["amount"]) == charged(dearer_row) - charged(standard_row)
    paid = Order.objects.get(order_id=order_id).paid

    cheaper, _, _ = seat_change(api, auth, upgraded.json()["data"], 0)
    # A card sent along when nothing is due is charged nothing (issue 25 item 10).
    downgraded = change(api, auth, order_id, {"changes": [cheaper], "payment": CARD})

    assert downgraded.status_code == 200, downgraded.content
    data = downgraded.json()["data"]
    assert len(data["payments"]) == 3  # nothing charged, nothing negative
    assert Order.objects.get(order_id=order_id).paid == paid
    live = [s for s in data["services"] if s["statusCode"] == "CONFIRMED"]
    assert [s["code"] for s in live] == ["STST"]
    assert len(live[0]["emdNumber"]) == 13


def test_one_passenger_cannot_take_two_seats_on_one_flight_in_one_request(api, auth, priced):
    hold = book(api, auth, booking_body(priced)).json()["data"]
    first, unit, _ = seat_change(api, auth, hold, 0)
    second, _, _ = seat_change(api, auth, hold, 0, exclude={unit["designator"]})

    error_of(
        change(api, auth, hold["order"]["orderId"], {"changes": [first, second]}), 400, "ERR-4002"
    )
    assert not Service.objects.exists()


# Point 8: a cancelled order keeps its lines


def test_a_cancelled_hold_shows_every_line_cancelled_and_what_was_voided(
    api, auth, priced, seat_and_bag
):
    entries, _ = seat_and_bag
    hold = book(api, auth, booking_body(priced, ancillaries=entries)).json()["data"]
    before = hold["order"]["totalPrice"]["total"]

    response = change(
        api, auth, hold["order"]["orderId"], {"changes": [{"type": "CancelUnpaidOrder"}]}
    )

    data = response.json()["data"]
    assert data["order"]["statusCode"] == "CANCELLED"
    assert [s["statusCode"] for s in data["services"]] == ["CANCELLED", "CANCELLED"]
    assert {s["code"] for s in data["services"]} == {"STST", "CB1"}
    assert {i["statusCode"] for i in data["order"]["items"]} == {"CANCELLED"}
    assert data["order"]["totalPrice"]["total"]["amount"] == 0
    assert data["order"]["totals"] == {
        "charged": {"amount": 0, "currency": "USD"},
        "refunded": {"amount": 0, "currency": "USD"},
        "voided": before,
        "retained": {"amount": 0, "currency": "USD"},
        "credited": {"amount": 0, "currency": "USD"},
    }
    order = Order.objects.get(order_id=hold["order"]["orderId"])
    assert (order.status, order.total, order.voided) == (
        OrderStatus.CANCELLED,
        0,
        dec(before["amount"]),
    )


def test_a_paid_orders_totals_say_what_was_charged(api, auth, priced):
    data = book(api, auth, booking_body(priced, payment=CARD)).json()["data"]

    assert data["order"]["totals"] == {
        "charged": data["order"]["totalPrice"]["total"],
        "refunded": {"amount": 0, "currency": "USD"},
        "voided": {"amount": 0, "currency": "USD"},
        "retained": {"amount": 0, "currency": "USD"},
        "credited": {"amount": 0, "currency": "USD"},
    }


# Point 9: what a seat or bag costs is a fee, not fare


def test_a_services_price_is_a_fee_of_its_kind_plus_tax_and_the_order_base_is_the_fares(
    api, auth, priced, seat_and_bag
):
    entries, (_, seat_row, bag_row) = seat_and_bag

    data = book(api, auth, booking_body(priced, ancillaries=entries)).json()["data"]

    by_code = {s["code"]: s["totalPrice"] for s in data["services"]}
    seat, bag = by_code["STST"], by_code["CB1"]
    assert seat["base"]["amount"] == bag["base"]["amount"] == 0
    assert [(f["type"], f["code"], dec(f["amount"]["amount"])) for f in seat["fees"]] == [
        ("SeatFee", "STST", dec(seat_row["amount"]))
    ]
    assert [dec(t["amount"]["amount"]) for t in seat["taxes"]] == [dec(seat_row["taxAmount"])]
    assert [(f["type"], dec(f["amount"]["amount"])) for f in bag["fees"]] == [
        ("BaggageFee", dec(bag_row["amount"]))
    ]
    assert dec(seat["total"]["amount"]) == charged(seat_row)
    assert data["order"]["totalPrice"]["base"] == priced["offer"]["totalPrice"]["base"]
    fee_types = {f["type"] for f in data["order"]["totalPrice"]["fees"]}
    assert {"SeatFee", "BaggageFee"} <= fee_types


# Point 12: the client's passenger ids


def test_the_view_links_each_pax_to_the_clients_passenger_id_and_infant(api, auth, travel_day):
    party = [{"type": "ADT"}, {"type": "ADT"}, {"type": "INF"}]
    priced = price_offer(api, auth, travel_day, party=party)

    data = book(api, auth, booking_body(priced)).json()["data"]

    by_client = {p["passengerId"]: p for p in data["pax"]}
    assert set(by_client) == {"ADT-1", "ADT-2", "INF-1"}
    adult, infant = by_client["ADT-1"], by_client["INF-1"]
    assert adult["infantPassengerId"] == "INF-1"
    assert adult["infantRefId"] == infant["paxId"]
    assert "infantPassengerId" not in by_client["ADT-2"]
    row = Passenger.objects.get(ref=adult["paxId"])
    assert (row.offer_pax_id, row.infant.ref) == ("ADT-1", infant["paxId"])
