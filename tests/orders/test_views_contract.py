"""Order views, reshop and quote answers as SPEC.md and the served OpenAPI document say
(issue 25 part A): segment statusCode only for WAITLISTED with the flight's state in
`operationalStatus`, ids unique within a view, answers a generated client parses, one
passenger id scheme per order, a card with nothing due charged nothing, EMDs beside the
tickets, price errors on the request's own field, and who carries the infant said
before booking."""

from datetime import timedelta
from decimal import Decimal

import pytest

from orders.models import GatewayEntry, Journey, Order, Passenger, Payment, Segment, Service
from tests.conftest import error_of
from tests.orders.conftest import CARD, book, booking_body, price_offer
from tests.orders.test_exchange import accept, booked, itinerary, money_adds_up, quote, reshop
from tests.orders.test_first_booking_ancillaries import offer_ancillaries, seat_for
from tests.orders.test_order_ancillaries import change, open_seat, seat_entry, seats, units
from tests.schema import assert_matches

pytestmark = pytest.mark.django_db

TWO = [{"type": "ADT"}, {"type": "ADT"}]


def retrieve(api, auth, order_id):
    response = api.get(f"/json/v1/orders/{order_id}", **auth)
    assert response.status_code == 200, response.content
    body = response.json()
    assert_matches("OrderViewEnvelope", body)
    return body["data"]


def segments_of(view):
    return [s for j in view["journeys"] for s in j["segments"]]


def journey_states(view):
    return {j["journeyId"]: j["operationalStatus"] for j in view["journeys"]}


def paid_exchange(api, auth, order_id, day, flight):
    """Reshop to `flight` on `day`, quote and accept it (a card along, whatever is due)."""
    data = reshop(api, auth, order_id, itinerary(day)).json()["data"]
    flights = {j["journeyId"]: j["flightNumbers"] for j in data["journeys"]}
    offer = next(
        o for o in data["offers"] if flights[o["items"][0]["journeyRefIds"][0]] == [f"MX{flight}"]
    )
    quoted = quote(api, auth, order_id, offer)
    assert quoted.status_code == 200, quoted.content
    response = accept(api, auth, order_id, quoted.json()["data"]["offer"], payment=CARD)
    assert response.status_code == 200, response.content
    assert_matches("OrderViewEnvelope", response.json())
    return response.json()["data"]


# Item 1: statusCode as SPEC.md §2.2 says, the state of the flight in a field of our own


def test_segments_carry_no_status_code_and_journeys_say_when_exchanged(api, auth, network, clock):
    day = network + timedelta(days=10)
    order_id = booked(api, auth, day)["order"]["orderId"]
    view = retrieve(api, auth, order_id)
    assert [s.get("statusCode") for s in segments_of(view)] == [None]
    assert [s["operationalStatus"] for s in segments_of(view)] == ["CONFIRMED"]
    [first] = view["journeys"]
    assert first["operationalStatus"] == "CONFIRMED"

    after = paid_exchange(api, auth, order_id, day + timedelta(days=1), 101)

    assert not [s for s in segments_of(after) if "statusCode" in s]
    states = journey_states(after)
    assert states.pop(first["journeyId"]) == "EXCHANGED"
    assert list(states.values()) == ["CONFIRMED"]
    old = next(j for j in after["journeys"] if j["journeyId"] == first["journeyId"])
    assert {s["operationalStatus"] for s in old["segments"]} == {"EXCHANGED"}
    stored = Journey.objects.get(order__order_id=order_id, ref=first["journeyId"])
    assert (stored.is_cancelled, stored.exchanged) == (True, True)
    assert retrieve(api, auth, order_id) == after


def test_the_back_office_and_the_booking_command_show_an_exchanged_order(
    api, auth, network, clock, admin_client
):
    from tests.orders.test_commands import run

    day = network + timedelta(days=10)
    order = booked(api, auth, day)
    paid_exchange(api, auth, order["order"]["orderId"], day + timedelta(days=1), 101)
    stored = Order.objects.get(order_id=order["order"]["orderId"])

    page = admin_client.get(f"/admin/orders/order/{stored.pk}/change/")
    printed = run("booking", stored.record_locator)

    assert page.status_code == 200
    assert order["journeys"][0]["journeyId"] in page.content.decode()
    assert stored.record_locator in printed
    assert printed.count("CANCELLED") >= 1  # the replaced item, as before
    # The replaced journey says what it was, never its stored position behind the live ones.
    assert "replaced, was journey 1" in page.content.decode()
    assert "  replaced, was journey 1. " in printed
    assert "101." not in printed


def test_a_journey_the_seller_cancels_is_cancelled_not_exchanged(api, auth, network, clock):
    day = network + timedelta(days=10)
    order = booked(api, auth, day, bundle="Nicest", flight=501)
    journey = order["journeys"][0]["journeyId"]

    response = change(
        api,
        auth,
        order["order"]["orderId"],
        {"changes": [{"type": "CancelJourney", "journeyRef": journey}]},
    )

    assert response.status_code == 200, response.content
    assert_matches("OrderViewEnvelope", response.json())
    view = response.json()["data"]
    assert journey_states(view) == {journey: "CANCELLED"}
    assert {s["operationalStatus"] for s in segments_of(view)} == {"CANCELLED"}
    stored = Journey.objects.get(ref=journey)
    assert (stored.is_cancelled, stored.exchanged) == (True, False)


# Item 2: ids unique within a view


def test_a_flight_changed_and_changed_back_keeps_every_id_unique(api, auth, network, clock):
    day = network + timedelta(days=10)
    order = booked(api, auth, day, flight=101)
    order_id = order["order"]["orderId"]
    [original] = segments_of(order)

    paid_exchange(api, auth, order_id, day + timedelta(days=1), 101)
    view = paid_exchange(api, auth, order_id, day, 101)

    segments = segments_of(view)
    assert len(segments) == 3
    for ids in (
        [s["segmentId"] for s in segments],
        [leg["legId"] for s in segments for leg in s["legs"]],
        [j["journeyId"] for j in view["journeys"]],
    ):
        assert len(set(ids)) == len(ids), ids
    [live] = [j for j in view["journeys"] if j["operationalStatus"] == "CONFIRMED"]
    [back] = live["segments"]
    # The same flight as first booked, under another id than the exchanged segment's.
    assert back["departureDateTime"] == original["departureDateTime"]
    assert back["segmentId"] != original["segmentId"]
    open_coupons = [t for t in view["tickets"] if t["statusCode"] == "OPEN"]
    assert [t["segmentRefId"] for t in open_coupons] == [back["segmentId"]]
    [item] = [i for i in view["order"]["items"] if i["statusCode"] == "CONFIRMED"]
    assert item["segmentRefIds"] == [back["segmentId"]]
    refs = list(Segment.objects.filter(order__order_id=order_id).values_list("ref", flat=True))
    assert len(refs) == len(set(refs)) == 3
    money_adds_up(order_id)


# Items 3 and 9: reshop and quote answers as documented, passengers by the order's ids


def test_reshop_and_quote_answers_parse_and_name_the_orders_passengers(api, auth, network, clock):
    day = network + timedelta(days=10)
    order = booked(api, auth, day, party=TWO)
    order_id = order["order"]["orderId"]
    pax_ids = {p["paxId"] for p in order["pax"]}
    assert all(i.startswith("PAX-") for i in pax_ids)

    reshopped = reshop(api, auth, order_id, itinerary(day + timedelta(days=1)))

    assert reshopped.status_code == 200, reshopped.content
    assert_matches("ReshopEnvelope", reshopped.json())
    data = reshopped.json()["data"]
    assert data["offers"]
    for item in (i for o in data["offers"] for i in o["items"]):
        assert set(item["fare"]["paxRefIds"]) == pax_ids
        assert {i for row in item["passengerPrices"] for i in row["paxRefIds"]} == pax_ids

    quoted = quote(api, auth, order_id, data["offers"][0])

    assert quoted.status_code == 200, quoted.content
    assert_matches("QuoteEnvelope", quoted.json())
    [item] = quoted.json()["data"]["offer"]["items"]
    assert set(item["fare"]["paxRefIds"]) == pax_ids
    assert {i for row in item["passengerPrices"] for i in row["paxRefIds"]} == pax_ids

    response = accept(api, auth, order_id, quoted.json()["data"]["offer"], payment=CARD)

    assert response.status_code == 200, response.content
    view = response.json()["data"]
    [live] = [i for i in view["order"]["items"] if i["statusCode"] == "CONFIRMED"]
    assert set(live["fare"]["paxRefIds"]) == pax_ids


@pytest.mark.parametrize("kind", ["CancelOrder", "DeleteOrderItems", "NameChange"])
def test_every_reshop_instruction_answers_as_documented(api, auth, network, clock, kind):
    day = network + timedelta(days=10)
    order = booked(api, auth, day, party=TWO)
    instruction = {
        "CancelOrder": {"type": "CancelOrder"},
        "DeleteOrderItems": {
            "type": "DeleteOrderItems",
            "orderItemRefIds": [order["order"]["items"][0]["itemId"]],
        },
        "NameChange": {
            "type": "NameChange",
            "paxRefId": order["pax"][1]["paxId"],
            "surname": "Byron",
        },
    }[kind]

    response = reshop(api, auth, order["order"]["orderId"], instruction)

    assert response.status_code == 200, response.content
    assert_matches("ReshopEnvelope", response.json())
    assert {p["paxId"] for p in response.json()["data"]["pax"]} == {
        p["paxId"] for p in order["pax"]
    }


# Item 10: nothing due, a card along; EMDs beside the tickets


def test_an_even_exchange_with_a_card_attached_is_accepted_and_charges_nothing(
    api, auth, network, clock
):
    day = network + timedelta(days=10)
    order_id = booked(api, auth, day, bundle="Nice", flight=501)["order"]["orderId"]
    offer = reshop(api, auth, order_id, itinerary(day + timedelta(days=1))).json()["data"][
        "offers"
    ][0]
    # What was paid is what the replacement costs, change fee included: nothing is due.
    worth = Decimal(str(offer["priceDifferential"]["newTotal"]["amount"]))
    Order.objects.filter(order_id=order_id).update(total=worth, paid=worth)
    Order.objects.get(order_id=order_id).items.update(total=worth)
    Payment.objects.filter(order__order_id=order_id).update(amount=worth)
    q = quote(api, auth, order_id, offer).json()["data"]
    assert q["priceDifferential"]["differentialTypeCode"] == "EvenExchange"
    charges = GatewayEntry.objects.filter(kind="CHARGE").count()

    response = accept(api, auth, order_id, q["offer"], payment=CARD)

    assert response.status_code == 200, response.content
    view = response.json()["data"]
    assert len(view["payments"]) == 1
    assert view["order"]["totals"]["charged"]["amount"] == float(worth)
    assert GatewayEntry.objects.filter(kind="CHARGE").count() == charges
    order = money_adds_up(order_id)
    assert order.paid == worth
    assert order.payments.count() == 1


def test_a_card_with_nothing_due_is_still_checked(api, auth, network, clock):
    day = network + timedelta(days=10)
    order_id = booked(api, auth, day)["order"]["orderId"]
    update = {
        "type": "UpdateContact",
        "contact": {
            "emailAddress": "x@example.com",
            "name": {"givenName": "Ada", "surname": "Lovelace"},
        },
    }

    expired = change(
        api, auth, order_id, {"changes": [update], "payment": {**CARD, "expiryDate": "0120"}}
    )

    error_of(expired, 422, "ERR-1005", "payment.expiryDate")
    response = change(api, auth, order_id, {"changes": [update], "payment": CARD})
    assert response.status_code == 200, response.content
    assert Payment.objects.filter(order__order_id=order_id).count() == 1


def test_emds_are_listed_beside_the_tickets_linked_to_the_service_they_pay_for(
    api, auth, network, clock
):
    day = network + timedelta(days=10)
    order = booked(api, auth, day)
    order_id = order["order"]["orderId"]
    assert order["emds"] == []
    seat_data = seats(api, auth, order_id).json()["data"]
    unit, row = open_seat(seat_data["legSeatMaps"][0], order["pax"][0]["paxId"])

    bought = change(
        api, auth, order_id, {"changes": [seat_entry(seat_data, unit, row)], "payment": CARD}
    )

    assert bought.status_code == 200, bought.content
    assert_matches("OrderViewEnvelope", bought.json())
    view = bought.json()["data"]
    [service] = view["services"]
    [emd] = view["emds"]
    stored = Service.objects.get(ref=service["serviceId"])
    assert emd == {
        "emdNumber": stored.emd_number,
        "paxRefId": order["pax"][0]["paxId"],
        "serviceRefId": service["serviceId"],
        "orderItemRefId": service["itemId"],
        "segmentRefId": segments_of(view)[0]["segmentId"],
        "amount": service["totalPrice"]["total"],
        "statusCode": "OPEN",
    }
    assert service["emdNumber"] == stored.emd_number
    assert len({emd["emdNumber"], *(t["ticketNumber"] for t in view["tickets"])}) == 2

    # Another seat replaces it: its EMD stays listed, closed.
    pax = order["pax"][0]["paxId"]
    again = seats(api, auth, order_id).json()["data"]
    unit2, row2 = next(
        (u, r)
        for u in units(again["legSeatMaps"][0])
        if u["availability"] == "Open"
        and u["group"] == "standard"
        and u["designator"] != unit["designator"]
        for r in u.get("passengerPricing", [])
        if r["paxRefId"] == pax
    )
    replaced = change(
        api, auth, order_id, {"changes": [seat_entry(again, unit2, row2)], "payment": CARD}
    )
    assert replaced.status_code == 200, replaced.content
    rows = {e["serviceRefId"]: e["statusCode"] for e in replaced.json()["data"]["emds"]}
    assert rows[service["serviceId"]] == "CLOSED"
    assert Service.objects.get(ref=service["serviceId"]).status == Service.Status.CANCELLED


# Item 11: who carries the infant, said before booking


INFANT_PARTY = [{"type": "ADT"}, {"type": "ADT", "infantRefId": "INF-1"}, {"type": "INF"}]


def test_the_price_request_says_who_carries_the_infant_and_booking_checks_that(
    api, auth, travel_day
):
    priced = price_offer(api, auth, travel_day, party=INFANT_PARTY)
    assert {p["paxId"]: p.get("infantRefId") for p in priced["pax"]} == {
        "ADT-1": None,
        "ADT-2": "INF-1",
        "INF-1": None,
    }
    data = offer_ancillaries(api, auth, priced, "seats")
    exits = [u for u in units(data["legSeatMaps"][0]) if "EXIT" in u["properties"]]
    assert {r["paxRefId"] for u in exits for r in u["passengerPricing"]} == {"ADT-1"}
    unit, row = open_seat(data["legSeatMaps"][0], "ADT-1", group="exit_row")
    body = booking_body(priced, ancillaries=[seat_for(data, unit, row)])
    body["passengers"][0].pop("infantPassengerId")
    body["passengers"][1]["infantPassengerId"] = "INF-1"

    response = book(api, auth, body)

    assert response.status_code == 201, response.content
    order = Order.objects.get(order_id=response.json()["data"]["order"]["orderId"])
    seat = Service.objects.get(order=order, seat_row__isnull=False)
    assert seat.passenger.offer_pax_id == "ADT-1"
    assert f"{seat.seat_row}{seat.seat_column}" == unit["designator"]
    carrier = Passenger.objects.get(order=order, infant__isnull=False)
    assert carrier.offer_pax_id == "ADT-2"


def test_without_infant_ref_id_the_first_adult_carries_the_infant(api, auth, travel_day):
    party = [{"type": "ADT"}, {"type": "ADT"}, {"type": "INF"}]
    priced = price_offer(api, auth, travel_day, party=party)

    body = {
        "offerItemIds": [i["offerItemId"] for i in priced["offer"]["items"]],
        "passengers": [{"type": "ADT"}, {"type": "ADT", "infantRefId": "INF-1"}, {"type": "INF"}],
    }
    named = api.post(
        f"/json/v1/offers/{priced['offer']['offerId']}/seats", body, format="json", **auth
    ).json()["data"]
    guessed = offer_ancillaries(api, auth, priced, "seats")

    def exit_pax(data):
        seat_map = data["legSeatMaps"][0]
        return {
            r["paxRefId"]
            for u in units(seat_map)
            if "EXIT" in u["properties"]
            for r in u["passengerPricing"]
        }

    assert exit_pax(guessed) == {"ADT-2"}
    assert exit_pax(named) == {"ADT-1"}


@pytest.mark.parametrize(
    "party",
    [
        [{"type": "ADT"}, {"type": "CHD", "infantRefId": "INF-1"}, {"type": "INF"}],
        [{"type": "ADT", "infantRefId": "ADT-2"}, {"type": "ADT"}],
        [{"type": "ADT", "infantRefId": "INF-9"}, {"type": "INF"}],
        [
            {"type": "ADT", "infantRefId": "INF-1"},
            {"type": "ADT", "infantRefId": "INF-1"},
            {"type": "INF"},
        ],
    ],
)
def test_an_infant_ref_id_that_names_no_infant_of_an_adult_is_refused(api, auth, travel_day, party):
    from tests.offers.conftest import search_body

    response = api.post(
        "/json/v1/offers",
        search_body(("PVD", "CHS", travel_day), passengers=party),
        format="json",
        **auth,
    )

    error_of(response, 422, "ERR-1005", "passengers.infantRefId")
