"""Itinerary exchange through the API: reshop ReshopItinerary → quote order → change order
AcceptReshopOffer (SPEC.md §3, §4.10, §4.12, §4.13; DESIGN.md §7, §11)."""

from datetime import timedelta
from decimal import Decimal

import pytest

from airline.network.models import LegInventory
from orders.models import Coupon, Order, OrderItem, OrderStatus, Refund, Ticket
from tests.conftest import bearer, error_of, token_for
from tests.gateways import provider_refund
from tests.offers.conftest import search_body
from tests.orders.conftest import CARD, HOLD, book, booking_body

# Both gateways, the provider's books held against the orders' after each test (issue 26).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("card_gateway")]

ONE = [{"type": "ADT"}]


def priced_in(api, auth, day, *, bundle, flight, origin="PVD", destination="CHS", party=ONE):
    """The priced one-way offer of `flight` in the bundle named `bundle`."""
    found = api.post(
        "/json/v1/offers",
        search_body((origin, destination, day), passengers=party),
        format="json",
        **auth,
    ).json()["data"]["offers"]
    offer = next(
        o
        for o in found
        if o["offerItems"][0]["flight"]["flightNumbers"] == [f"MX{flight}"]
        and o["offerItems"][0]["fare"]["bundleName"] == bundle
    )
    priced = api.post(
        "/json/v1/offers/price",
        {
            "selections": [
                {
                    "offerId": offer["offerId"],
                    "offerItemIds": [offer["offerItems"][0]["offerItemId"]],
                }
            ],
            "passengers": party,
        },
        format="json",
        **auth,
    )
    assert priced.status_code == 201, priced.content
    return priced.json()["data"]


def booked(api, auth, day, *, bundle="Nice", flight=101, payment=None, party=ONE, **market):
    priced = priced_in(api, auth, day, bundle=bundle, flight=flight, party=party, **market)
    response = book(api, auth, booking_body(priced, payment=payment or CARD))
    assert response.status_code == 201, response.content
    return response.json()["data"]


def reshop(api, auth, order_id, instruction, **body):
    return api.post(
        f"/json/v1/orders/{order_id}/reshop",
        {"instruction": instruction, **body},
        format="json",
        **auth,
    )


def itinerary(day, origin="PVD", destination="CHS", **extra):
    return {
        "type": "ReshopItinerary",
        "originDestinations": [
            {"origin": origin, "destination": destination, "departureDate": day.isoformat()}
        ],
        **extra,
    }


def quote(api, auth, order_id, offer, item_ids=None):
    return api.post(
        f"/json/v1/orders/{order_id}/quote",
        {
            "offerId": offer["offerId"],
            "offerItemIds": item_ids or [i["offerItemId"] for i in offer["items"]],
        },
        format="json",
        **auth,
    )


def accept(api, auth, order_id, quoted, payment=None):
    body = {
        "changes": [
            {
                "type": "AcceptReshopOffer",
                "offerId": quoted["offerId"],
                "offerItemIds": [i["offerItemId"] for i in quoted["items"]],
            }
        ]
    }
    if payment is not None:
        body["payment"] = payment
    return api.patch(f"/json/v1/orders/{order_id}", body, format="json", **auth)


def sold(flight_number, day):
    return sum(
        LegInventory.objects.filter(
            leg__flight_number=flight_number, leg__flight_date=day, rank=0
        ).values_list("sold", flat=True)
    )


def money_adds_up(order_id):
    order = Order.objects.get(order_id=order_id)
    live = sum(i.total for i in order.items.exclude(status="CANCELLED"))
    services = sum(s.total for s in order.services.filter(status="ACTIVE"))
    assert order.total == live + services
    payments = order.payments.exclude(status="FAILED")
    collected = sum(p.amount - p.refunded for p in payments)
    assert collected == order.paid
    if order.status == OrderStatus.CONFIRMED:
        assert order.paid == order.total + order.retained + order.credited
    return order


def test_reshop_offers_replacement_flights_priced_against_what_was_paid(api, auth, network, clock):
    day = network + timedelta(days=10)
    order = booked(api, auth, day)
    item = order["order"]["items"][0]

    version = Order.objects.get(order_id=order["order"]["orderId"]).version

    response = reshop(api, auth, order["order"]["orderId"], itinerary(day + timedelta(days=1)))

    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["orderId"] == order["order"]["orderId"]
    assert data["recordLocator"] == order["order"]["recordLocator"]
    assert {o["items"][0]["fare"]["bundleName"] for o in data["offers"]} == {"Nice"}
    flights = {j["journeyId"]: j for j in data["journeys"]}
    assert {
        tuple(flights[o["items"][0]["journeyRefIds"][0]]["flightNumbers"]) for o in data["offers"]
    } == {
        ("MX101",),
        ("MX501",),
    }
    for offer in data["offers"]:
        [new] = offer["items"]
        assert new["replacesOrderItemRefIds"] == [item["itemId"]]
        differential = offer["priceDifferential"]
        assert differential["oldTotal"] == item["totalPrice"]["total"]
        assert differential["newTotal"] == new["totalPrice"]["total"]
        delta = Decimal(str(new["totalPrice"]["total"]["amount"])) - Decimal(
            str(item["totalPrice"]["total"]["amount"])
        )
        assert Decimal(str(differential["balanceDelta"]["amount"])) == delta
        assert differential["differentialTypeCode"] == (
            "AddCol" if delta > 0 else "Refund" if delta < 0 else "EvenExchange"
        )
    # Nothing changed: reshop only quotes.
    assert Order.objects.get(order_id=order["order"]["orderId"]).version == version


def test_a_reshop_offer_is_priced_with_quote_order_only(api, auth, network, clock):
    day = network + timedelta(days=10)
    order = booked(api, auth, day)
    offer = reshop(api, auth, order["order"]["orderId"], itinerary(day + timedelta(days=1))).json()[
        "data"
    ]["offers"][0]

    priced = api.post(
        "/json/v1/offers/price",
        {
            "selections": [
                {"offerId": offer["offerId"], "offerItemIds": [offer["items"][0]["offerItemId"]]}
            ],
            "passengers": ONE,
        },
        format="json",
        **auth,
    )

    error_of(priced, 400, "ERR-3004", "selections.offerId")


def test_quote_refuses_a_shopping_offer_duplicates_unknown_and_expired_offers(
    api, auth, network, clock
):
    day = network + timedelta(days=10)
    order = booked(api, auth, day)
    order_id = order["order"]["orderId"]
    shopping = priced_in(api, auth, day, bundle="Nice", flight=501)["offer"]
    offer = reshop(api, auth, order_id, itinerary(day + timedelta(days=1))).json()["data"][
        "offers"
    ][0]
    item_id = offer["items"][0]["offerItemId"]

    error_of(quote(api, auth, order_id, shopping), 400, "ERR-3005", "offerId")
    error_of(quote(api, auth, order_id, offer, [item_id, item_id]), 422, "ERR-1005", "offerItemIds")
    error_of(quote(api, auth, order_id, {**offer, "offerId": "nope.1"}), 404, "ERR-3000", "offerId")
    clock.advance(minutes=31)
    error_of(quote(api, auth, order_id, offer), 404, "ERR-3001", "offerId")


def test_accepting_a_dearer_quote_charges_the_difference_and_reissues_tickets(
    api, auth, network, clock
):
    day = network + timedelta(days=10)
    new_day = day + timedelta(days=2)
    order = booked(api, auth, day)
    order_id = order["order"]["orderId"]
    old_item = order["order"]["items"][0]["itemId"]
    old_tickets = {t["ticketNumber"] for t in order["tickets"]}
    offer = next(
        o
        for o in reshop(api, auth, order_id, itinerary(new_day)).json()["data"]["offers"]
        if o["priceDifferential"]["differentialTypeCode"] == "AddCol" or o is not None
    )
    quoted = quote(api, auth, order_id, offer)
    assert quoted.status_code == 200, quoted.content
    q = quoted.json()["data"]
    assert q["itemChangeQuotes"][0]["offerItemId"] == q["offer"]["items"][0]["offerItemId"]
    assert q["journeys"][0]["journeyId"] == q["offer"]["items"][0]["journeyRefIds"][0]
    delta = Decimal(str(q["priceDifferential"]["balanceDelta"]["amount"]))
    before_old, before_new = sold(101, day), sold(101, new_day) + sold(501, new_day)

    response = accept(api, auth, order_id, q["offer"], payment=CARD if delta > 0 else None)

    assert response.status_code == 200, response.content
    view = response.json()["data"]
    statuses = {i["itemId"]: i["statusCode"] for i in view["order"]["items"]}
    assert statuses[old_item] == "CANCELLED"
    assert sorted(statuses.values()) == ["CANCELLED", "CONFIRMED"]
    assert view["order"]["statusCode"] == "CONFIRMED"
    coupons = {(t["ticketNumber"], t["statusCode"]) for t in view["tickets"]}
    assert {status for number, status in coupons if number in old_tickets} == {"EXCHANGED"}
    new_tickets = {number for number, status in coupons if number not in old_tickets}
    [new_ticket] = new_tickets
    assert len(new_ticket) == 13
    assert sold(101, day) == before_old - 1
    assert sold(101, new_day) + sold(501, new_day) == before_new + 1
    order_row = money_adds_up(order_id)
    assert order_row.events.filter(kind="itinerary_exchanged").exists()
    assert Ticket.objects.filter(order=order_row).count() == 2
    assert Coupon.objects.filter(ticket__order=order_row, status="OPEN").count() == 1


def test_a_cheaper_quote_in_a_refundable_bundle_refunds_the_card(api, auth, network, clock):
    day = network + timedelta(days=10)
    order = booked(api, auth, day, bundle="Nicest", flight=501)
    order_id = order["order"]["orderId"]
    offers = reshop(
        api, auth, order_id, itinerary(day + timedelta(days=1), cabinTypeCode="Y")
    ).json()["data"]["offers"]
    offer = next(o for o in offers if o["priceDifferential"]["differentialTypeCode"] == "Refund")
    q = quote(api, auth, order_id, offer).json()["data"]
    back = -Decimal(str(q["priceDifferential"]["balanceDelta"]["amount"]))

    response = accept(api, auth, order_id, q["offer"])

    assert response.status_code == 200, response.content
    view = response.json()["data"]
    assert view["order"]["totals"]["refunded"]["amount"] == float(back)
    assert view["payments"][0]["refundedAmount"]["amount"] == float(back)
    order_row = money_adds_up(order_id)
    assert order_row.credited == 0
    [refund] = Refund.objects.filter(payment__order=order_row)
    assert (refund.amount, refund.state) == (back, Refund.State.SENT)
    assert provider_refund(refund) == back


def included_on(view, journey_ref):
    """Codes of the live bundle inclusions of the view's journey `journey_ref`."""
    return sorted(
        s["code"]
        for s in view["services"]
        if s.get("included") and s["statusCode"] == "CONFIRMED" and s["journeyRefId"] == journey_ref
    )


def test_a_downgrade_drops_the_bundles_inclusions_at_no_value(api, auth, network, clock):
    day = network + timedelta(days=10)
    order = booked(api, auth, day, bundle="Nicest", flight=501)
    order_id = order["order"]["orderId"]
    assert included_on(order, order["journeys"][0]["journeyId"]) == ["CB1", "CB2", "COB"]
    offers = reshop(
        api, auth, order_id, itinerary(day + timedelta(days=1), cabinTypeCode="Y")
    ).json()["data"]["offers"]
    offer = offers[0]
    assert offer["items"][0]["fare"]["bundleName"] == "Nice"  # no inclusions
    q = quote(api, auth, order_id, offer).json()["data"]

    for changes in (offer["serviceChanges"], q["serviceChanges"]):
        assert sorted(c["code"] for c in changes) == ["CB1", "CB2", "COB"]
        assert {c["action"] for c in changes} == {"DROPPED"}
        assert {c["balanceDelta"]["amount"] for c in changes} == {0.0}
        assert {c["reason"] for c in changes} == {"The Nice fare does not include it"}
    [item] = q["itemChangeQuotes"]
    item_total = Decimal(str(order["order"]["items"][0]["totalPrice"]["total"]["amount"]))
    assert Decimal(str(item["oldTotal"]["amount"])) == item_total  # the inclusions cost 0

    response = accept(api, auth, order_id, q["offer"])

    assert response.status_code == 200, response.content
    view = response.json()["data"]
    new_journey = q["offer"]["items"][0]["journeyRefIds"][0]
    assert included_on(view, new_journey) == []
    assert not [s for s in view["services"] if s["statusCode"] == "CONFIRMED"]
    assert api.get(f"/json/v1/orders/{order_id}", **auth).json()["data"] == view
    money_adds_up(order_id)


def test_an_upgrade_keeps_the_inclusions_both_bundles_have_and_adds_the_rest(
    api, auth, network, clock
):
    day = network + timedelta(days=10)
    order = booked(api, auth, day, bundle="Nicer", flight=101)
    order_id = order["order"]["orderId"]
    kept = {s["serviceId"] for s in order["services"] if s.get("included")}  # Nicer's CB1 and COB
    assert included_on(order, order["journeys"][0]["journeyId"]) == ["CB1", "COB"]
    offers = reshop(
        api, auth, order_id, itinerary(day + timedelta(days=1), cabinTypeCode="C")
    ).json()["data"]["offers"]
    offer = offers[0]
    assert offer["items"][0]["fare"]["bundleName"] == "Nicest"
    q = quote(api, auth, order_id, offer).json()["data"]
    assert sorted((c["code"], c["action"]) for c in q["serviceChanges"]) == [
        ("CB1", "MOVED"),
        ("COB", "MOVED"),
    ]

    response = accept(api, auth, order_id, q["offer"], payment=CARD)

    assert response.status_code == 200, response.content
    view = response.json()["data"]
    new_journey = q["offer"]["items"][0]["journeyRefIds"][0]
    assert included_on(view, new_journey) == ["CB1", "CB2", "COB"]
    moved = {s["serviceId"] for s in view["services"] if s.get("journeyRefId") == new_journey}
    assert kept < moved  # the same CB1 and COB, CB2 written anew
    assert {s["totalPrice"]["total"]["amount"] for s in view["services"]} == {0.0}
    assert not [s for s in view["services"] if "emdNumber" in s]
    money_adds_up(order_id)


@pytest.mark.books_rewritten
def test_a_cheaper_quote_in_a_credit_bundle_gives_airline_credit(api, auth, network, clock):
    day = network + timedelta(days=10)
    order = booked(api, auth, day, bundle="Nice", flight=501)
    order_id = order["order"]["orderId"]
    # Make the replacement cheaper: the item cost more than the same flight costs now
    # (a fare that came down since booking).
    OrderItem.objects.filter(order__order_id=order_id).update(total=Decimal("999.00"))
    Order.objects.filter(order_id=order_id).update(total=Decimal("999.00"), paid=Decimal("999.00"))
    order_row = Order.objects.get(order_id=order_id)
    order_row.payments.update(amount=Decimal("999.00"))
    offer = reshop(api, auth, order_id, itinerary(day + timedelta(days=1))).json()["data"][
        "offers"
    ][0]
    q = quote(api, auth, order_id, offer).json()["data"]
    assert q["priceDifferential"]["differentialTypeCode"] == "Refund"
    back = -Decimal(str(q["priceDifferential"]["balanceDelta"]["amount"]))

    response = accept(api, auth, order_id, q["offer"])

    assert response.status_code == 200, response.content
    view = response.json()["data"]
    [credit] = view["credits"]
    assert credit["amount"]["amount"] == float(back)
    assert credit["creditCode"].startswith("MX")
    order_row = money_adds_up(order_id)
    assert order_row.credited == back
    assert not Refund.objects.filter(payment__order=order_row).exists()


def test_a_hold_takes_the_exchange_unpaid_and_its_balance_moves(api, auth, network, clock):
    day = network + timedelta(days=10)
    order = booked(api, auth, day, payment=HOLD)
    order_id = order["order"]["orderId"]
    offer = reshop(api, auth, order_id, itinerary(day + timedelta(days=3))).json()["data"][
        "offers"
    ][-1]
    q = quote(api, auth, order_id, offer).json()["data"]

    response = accept(api, auth, order_id, q["offer"])

    assert response.status_code == 200, response.content
    view = response.json()["data"]
    assert view["order"]["statusCode"] == "ONHOLD"
    assert view["order"]["balanceDue"] == view["order"]["totalPrice"]["total"]
    assert view["order"]["totalPrice"]["total"] == q["offer"]["totalPrice"]["total"]
    assert view["tickets"] == []
    money_adds_up(order_id)


def test_a_dearer_exchange_of_a_paid_order_needs_a_card(api, auth, network, clock):
    day = network + timedelta(days=10)
    order = booked(api, auth, day, bundle="Nice", flight=101)
    order_id = order["order"]["orderId"]
    offers = reshop(
        api, auth, order_id, itinerary(day + timedelta(days=1), cabinTypeCode="C")
    ).json()["data"]["offers"]
    q = quote(api, auth, order_id, offers[0]).json()["data"]
    assert q["priceDifferential"]["differentialTypeCode"] == "AddCol"

    refused = error_of(accept(api, auth, order_id, q["offer"]), 400, "ERR-4002", "payment")
    assert refused["reason"] == "AMOUNT_DUE"
    assert Order.objects.get(order_id=order_id).items.count() == 1

    response = accept(api, auth, order_id, q["offer"], payment=CARD)
    assert response.status_code == 200, response.content
    order_row = money_adds_up(order_id)
    assert order_row.payments.count() == 2


def test_no_flex_cannot_be_changed(api, auth, network, clock):
    day = network + timedelta(days=10)
    order = booked(api, auth, day, bundle="No Flex")

    refused = error_of(
        reshop(api, auth, order["order"]["orderId"], itinerary(day + timedelta(days=1))),
        400,
        "ERR-4002",
        "instruction",
    )
    assert refused["reason"] == "FARE_RULES"


def test_a_journey_already_flown_cannot_be_reshopped(api, auth, network, clock):
    day = network + timedelta(days=3)
    order = booked(api, auth, day)
    clock.advance(days=5)  # the flight of `day` has left

    refused = error_of(
        reshop(api, auth, order["order"]["orderId"], itinerary(day + timedelta(days=5))),
        400,
        "ERR-4002",
        "instruction",
    )
    assert refused["reason"] == "JOURNEY_DEPARTED"


def test_accept_refuses_an_unquoted_offer_a_stale_quote_and_an_expired_one(
    api, auth, network, clock
):
    day = network + timedelta(days=10)
    order = booked(api, auth, day, payment=HOLD)
    order_id = order["order"]["orderId"]
    offer = reshop(api, auth, order_id, itinerary(day + timedelta(days=1))).json()["data"][
        "offers"
    ][0]

    refused = error_of(accept(api, auth, order_id, offer), 400, "ERR-4002", "changes.offerId")
    assert refused["reason"] == "OFFER_NOT_QUOTED"
    unknown = {"offerId": "OF-NOPE", "items": offer["items"]}
    refused = error_of(accept(api, auth, order_id, unknown), 400, "ERR-4002", "changes.offerId")
    assert refused["reason"] == "OFFER_UNKNOWN"

    q = quote(api, auth, order_id, offer).json()["data"]
    clock.advance(minutes=31)
    refused = error_of(accept(api, auth, order_id, q["offer"]), 400, "ERR-4002", "changes.offerId")
    assert refused["reason"] in {"OFFER_EXPIRED", "OFFER_UNKNOWN"}

    q = quote(
        api,
        auth,
        order_id,
        reshop(api, auth, order_id, itinerary(day + timedelta(days=1))).json()["data"]["offers"][0],
    ).json()["data"]
    first = accept(api, auth, order_id, q["offer"])
    assert first.status_code == 200, first.content
    # The same quote again: the order has moved on since it was quoted.
    refused = error_of(accept(api, auth, order_id, q["offer"]), 400, "ERR-4002", "changes.offerId")
    assert refused["reason"] == "QUOTE_STALE"

    cancelled = api.patch(
        f"/json/v1/orders/{order_id}",
        {"changes": [{"type": "CancelUnpaidOrder"}]},
        format="json",
        **auth,
    )
    assert cancelled.status_code == 200, cancelled.content
    refused = error_of(
        reshop(api, auth, order_id, itinerary(day + timedelta(days=2))), 400, "ERR-4002"
    )
    assert refused["reason"] == "ORDER_CANCELLED"


def test_replacing_a_journey_not_on_the_order_is_refused(api, auth, network, clock):
    day = network + timedelta(days=10)
    order = booked(api, auth, day)

    refused = error_of(
        reshop(api, auth, order["order"]["orderId"], itinerary(day, "CHS", "PVD")),
        400,
        "ERR-4002",
        "instruction.originDestinations",
    )
    assert refused["reason"] == "NOT_ON_ORDER"
    refused = error_of(
        reshop(
            api,
            auth,
            order["order"]["orderId"],
            itinerary(day, deleteOrderItemRefIds=["OOI-NOPE"]),
        ),
        400,
        "ERR-4002",
        "instruction.deleteOrderItemRefIds",
    )
    assert refused["reason"] == "NOT_ON_ORDER"


def test_another_seller_and_a_read_only_key_get_nothing(
    api, auth, network, clock, partner_key, other_seller, read_only_key
):
    day = network + timedelta(days=10)
    order = booked(api, auth, day)
    order_id = order["order"]["orderId"]
    other = bearer(token_for(api, partner_key.raw, str(other_seller.pk)))
    reader = bearer(token_for(api, read_only_key.raw))
    offer = reshop(api, auth, order_id, itinerary(day + timedelta(days=1))).json()["data"][
        "offers"
    ][0]

    error_of(reshop(api, other, order_id, itinerary(day + timedelta(days=1))), 404, "ERR-4000")
    error_of(quote(api, other, order_id, offer), 404, "ERR-4000")
    assert reshop(api, reader, order_id, itinerary(day)).json()["error"]["code"] == "ERR-8001"
    assert quote(api, reader, order_id, offer).json()["error"]["code"] == "ERR-8001"


def test_a_paid_seat_and_bag_follow_the_journey_to_the_new_flight(api, auth, network, clock):
    from tests.orders.test_order_ancillaries import bag_entry, open_seat, seat_entry

    day = network + timedelta(days=10)
    new_day = day + timedelta(days=1)
    order = booked(api, auth, day, payment=HOLD)
    order_id = order["order"]["orderId"]
    ada = order["pax"][0]["paxId"]
    seat_data = api.post(f"/json/v1/orders/{order_id}/seats", format="json", **auth).json()["data"]
    unit, seat_price = open_seat(seat_data["legSeatMaps"][0], ada)
    service_data = api.post(f"/json/v1/orders/{order_id}/services", format="json", **auth).json()[
        "data"
    ]
    bag, _ = bag_entry(service_data, "CB1", ada, order["journeys"][0]["journeyId"])
    bought = api.patch(
        f"/json/v1/orders/{order_id}",
        {"changes": [seat_entry(seat_data, unit, seat_price), bag]},
        format="json",
        **auth,
    )
    assert bought.status_code == 200, bought.content
    purchases = {s["code"]: s["itemId"] for s in bought.json()["data"]["services"]}
    # The same flight number on the next day: the same aircraft, so the same seat.
    data = reshop(api, auth, order_id, itinerary(new_day)).json()["data"]
    offers = data["offers"]
    flights = {j["journeyId"]: j["flightNumbers"] for j in data["journeys"]}
    offer = next(o for o in offers if flights[o["items"][0]["journeyRefIds"][0]] == ["MX101"])
    q = quote(api, auth, order_id, offer).json()["data"]

    response = accept(api, auth, order_id, q["offer"])

    assert response.status_code == 200, response.content
    view = response.json()["data"]
    new_journey = next(
        j for j in view["journeys"] if j["departureDateTime"].startswith(new_day.isoformat())
    )
    live = {s["code"]: s for s in view["services"] if s["statusCode"] == "CONFIRMED"}
    assert live["STST"]["attributes"]["seat"] == unit["designator"]
    assert live["STST"]["segmentRefId"] == new_journey["segments"][0]["segmentId"]
    assert live["CB1"]["journeyRefId"] == new_journey["journeyId"]
    # Each is still its own purchase (its own order item), never the flight item.
    assert {code: live[code]["itemId"] for code in ("STST", "CB1")} == {
        code: purchases[code] for code in ("STST", "CB1")
    }
    flight_items = {i["itemId"] for i in view["order"]["items"]}
    assert not flight_items & {live["STST"]["itemId"], live["CB1"]["itemId"]}
    # The seat is taken on the new flight and free again on the old one.
    new_map = api.post(f"/json/v1/orders/{order_id}/seats", format="json", **auth).json()["data"]
    taken = {
        u["designator"]: u["availability"]
        for m in new_map["legSeatMaps"]
        for d in m["decks"]
        for c in d["compartments"]
        for u in c["units"]
    }
    assert taken[unit["designator"]] != "Open"
    money_adds_up(order_id)
