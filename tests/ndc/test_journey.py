"""A booking's whole life in NDC/XML alone (issue 16): AirShopping -> OfferPrice ->
OrderCreate (card) -> SeatAvailability -> OrderChange (a seat) -> OrderReshop -> OrderQuote
-> OrderChange (accept) -> OrderReshop CancelOrderRef -> OrderChange (cancel) ->
OrderRetrieve. Every answer is validated against its 21.3 schema (conftest.xml_of), and
after every step the same order read in JSON is the one the XML shows, with money that
adds up in the database."""

from datetime import timedelta
from decimal import Decimal

import pytest
from lxml import etree

from orders.models import Order, OrderStatus
from tests.ndc.conftest import NS, example, offer_price, pay_amount, post, texts, xml_of
from tests.ndc.test_ancillaries import a_la_carte, order_request, xml_seats
from tests.ndc.test_orders import (
    VIEW,
    assert_same_order,
    body,
    change_request,
    choose,
    json_view,
    order_id_of,
    sub,
)
from tests.ndc.test_reshop import RS, first_offer, offers_of, quote_xml, reshop_itinerary_xml
from tests.ndc.test_shopping import shop_xml, xml_offers
from tests.orders.test_exchange import money_adds_up, reshop, sold

pytestmark = pytest.mark.django_db

BUNDLE = "NICE"  # changes for the fare difference (DESIGN.md §7): the reshop is allowed


def offers_in_bundle(document: etree._Element, bundle: str) -> list[tuple[str, str]]:
    """(OfferID, OfferItemID) of the cheapest offer in `bundle` per direction, outbound
    first: AirShopping's offers each hold one direction's flight."""
    bundles = {
        offer.findtext("c:OfferID", namespaces=NS): set(texts(offer, ".//c:PriceClassRefID"))
        for offer in document.iterfind(".//c:CarrierOffers/c:Offer", NS)
    }
    cheapest = {}
    for offer_id, item_id, origin, total in xml_offers(document):
        if bundles[offer_id] == {bundle}:
            cheapest[origin] = min(
                cheapest.get(origin, (total, offer_id, item_id)), (total, offer_id, item_id)
            )
    return [cheapest["PVD"][1:], cheapest["CHS"][1:]]


def create_xml(offer_id: str, item_ids: list[str], total: Decimal) -> bytes:
    """The example OrderCreateRQ (two adults and a child, paid by card: `total`) for an
    offer priced in XML."""
    document = pay_amount(example("OrderCreateRQ"), total)
    offer = document.find(".//c:SelectedPricedOffer", NS)
    offer.find("c:OfferRefID", NS).text = offer_id
    elements = offer.findall("c:SelectedOfferItem", NS)
    for element, item_id in zip(elements, item_ids, strict=True):
        element.find("c:OfferItemRefID", NS).text = item_id
    return body(document)


def reshop_cancel_xml(order_id: str) -> bytes:
    document = example("OrderReshopRQ-cancel")
    for ref in document.iterfind(".//c:OrderRefID", NS):
        ref.text = order_id
    return body(document)


def seats_sold(journey: dict) -> int:
    """Seats sold on the flights of a JSON journey (every leg's date is its segment's)."""
    return sum(
        sold(int(segment["marketingFlightNumber"]), segment["departureDateTime"][:10])
        for segment in journey["segments"]
    )


def card_payment(order_id: str, amount: Decimal) -> etree._Element:
    """The example's PaymentFunctions, paying what a change costs (`amount`), for the
    order (OrderAssociation) as integrators send it: on a confirmed order it pays the
    change, it does not ask to confirm a hold."""
    document = change_request(order_id, pay=True, amount=amount)
    return document.find("m:Request/c:PaymentFunctions", NS)


def check(api, auth, document: etree._Element, order_id: str) -> dict:
    """The JSON view of the order, after asserting the XML shows the same order and the
    database's money adds up (total = live items + services, collected = paid)."""
    view = json_view(api, auth, order_id)
    assert_same_order(document, view)
    money_adds_up(order_id)
    return view


def test_a_booking_lives_its_whole_life_in_xml(api, auth, network, clock):
    day = network + timedelta(days=10)

    # AirShopping, then OfferPrice of one Nice offer per direction.
    selections = offers_in_bundle(shop_xml(api, auth, day), BUNDLE)
    priced = xml_of(
        post(api, "OfferPrice", offer_price(*selections), auth), 200, "IATA_OfferPriceRS"
    )
    offer = priced.find("m:Response/c:PricedOffer", NS)
    offer_id = offer.findtext("c:OfferID", namespaces=NS)
    priced_total = Decimal(offer.findtext("c:TotalPrice/c:TotalAmount", namespaces=NS))

    # OrderCreate, paid by card: confirmed and ticketed, at the priced total.
    created = xml_of(
        post(
            api,
            "OrderCreate",
            create_xml(offer_id, texts(offer, "c:OfferItem/c:OfferItemID"), priced_total),
            auth,
        ),
        200,
        VIEW,
    )
    order_id = order_id_of(created)
    view = check(api, auth, created, order_id)
    assert view["order"]["statusCode"] == OrderStatus.CONFIRMED
    assert Decimal(repr(view["order"]["totalPrice"]["total"]["amount"])) == priced_total
    assert len(view["tickets"]) == 3 * sum(len(j["segments"]) for j in view["journeys"])
    outbound_item = view["order"]["items"][0]["itemId"]

    # SeatAvailability of the order, then OrderChange buying the first adult a free seat
    # on the outbound flight.
    seats = xml_of(
        post(api, "SeatAvailability", order_request("SeatAvailabilityRQ", order_id), auth), 200
    )
    seat_offer, seat_items = a_la_carte(seats)
    ada = view["pax"][0]["paxId"]
    outbound_segments = {s["segmentId"] for s in view["journeys"][0]["segments"]}
    (segment, designator), item_id = next(
        (key, ref)
        for key, (status, refs) in xml_seats(seats).items()
        if status == "F" and key[0] in outbound_segments
        for ref in refs
        if ada in seat_items[ref]["pax"]
    )
    document = change_request(order_id)
    selected = sub(choose(document, "AcceptSelectedQuotedOfferList"), "SelectedPricedOffer")
    sub(selected, "OfferRefID", seat_offer)
    sub(selected, "OwnerCode", "MX")
    item = sub(selected, "SelectedOfferItem")
    sub(item, "OfferItemRefID", item_id)
    sub(item, "PaxRefID", ada)
    seat = sub(item, "SelectedSeat")
    sub(seat, "ColumnID", designator[-1])
    sub(seat, "SeatRowNumber", designator[:-1])
    if seat_items[item_id]["total"]:
        # A paid seat on a paid order is charged with the change.
        payment = card_payment(order_id, seat_items[item_id]["total"])
        document.find("m:Request", NS).append(payment)
    seated = xml_of(post(api, "OrderChange", body(document), auth), 200, VIEW)
    view = check(api, auth, seated, order_id)
    [bought] = [s for s in view["services"] if s.get("attributes", {}).get("seat")]
    assert (bought["segmentRefId"], bought["attributes"]["seat"]) == (segment, designator)

    # OrderReshop: the outbound a day later; OrderQuote of its first offer.
    new_day = day + timedelta(days=1)
    reshopped = xml_of(
        post(
            api,
            "OrderReshop",
            reshop_itinerary_xml(order_id, new_day, replaces=outbound_item),
            auth,
        ),
        200,
        RS,
    )
    reshop_offer, reshop_items = first_offer(reshopped)
    pax_ids = [p["paxId"] for p in view["pax"]]
    quoted = xml_of(
        post(api, "OrderQuote", quote_xml(order_id, reshop_offer, reshop_items, pax_ids), auth),
        200,
        RS,
    )
    [quote] = offers_of(quoted)
    quote_id = quote.findtext("c:OfferID", namespaces=NS)
    differential = quote.find("c:DeleteOrderItem/c:PriceDifferential", NS)
    delta = Decimal(differential.findtext("c:DiffPrice/c:Price/c:TotalAmount", namespaces=NS))
    [old_outbound] = [
        j for j in view["journeys"] if j["segments"][0]["segmentId"] in outbound_segments
    ]

    # OrderChange accepting the quote: the new outbound flies, tickets reissued, the old
    # seats given back; a higher fare is collected by card, a lower one refunded.
    document = change_request(order_id)
    accepted = sub(choose(document, "AcceptSelectedQuotedOfferList"), "SelectedPricedOffer")
    sub(accepted, "OfferRefID", quote_id)
    sub(accepted, "OwnerCode", "MX")
    for quoted_item in texts(quote, "c:AddedOfferItem/c:OfferItemID"):
        entry = sub(accepted, "SelectedOfferItem")
        sub(entry, "OfferItemRefID", quoted_item)
        for pax_id in pax_ids:
            sub(entry, "PaxRefID", pax_id)
    if delta > 0:
        document.find("m:Request", NS).append(card_payment(order_id, delta))
    sold_before = seats_sold(old_outbound)
    exchanged = xml_of(post(api, "OrderChange", body(document), auth), 200, VIEW)
    view = check(api, auth, exchanged, order_id)
    live = [i for i in view["order"]["items"] if i["statusCode"] == "CONFIRMED"]
    live_segments = {s for i in live for s in i["segmentRefIds"]}
    departures = {
        s["departureDateTime"][:10]
        for j in view["journeys"]
        for s in j["segments"]
        if s["segmentId"] in live_segments
    }
    assert new_day.isoformat() in departures
    assert "EXCHANGED" in {t["statusCode"] for t in view["tickets"]}
    # The party's three seats on the old outbound went back to inventory.
    assert seats_sold(old_outbound) == sold_before - 3 * len(old_outbound["segments"])

    # OrderReshop CancelOrderRef: what cancelling now gives back, the same as JSON says.
    cancel_quote = xml_of(post(api, "OrderReshop", reshop_cancel_xml(order_id), auth), 200, RS)
    as_json = reshop(api, auth, order_id, {"type": "CancelOrder"}).json()["data"]
    [cancel_offer] = offers_of(cancel_quote)
    assert cancel_offer.findtext("c:OfferID", namespaces=NS) == order_id
    given_back = Decimal(
        cancel_offer.findtext(
            "c:DeleteOrderItem/c:PriceDifferential/c:DiffPrice/c:Price/c:TotalAmount",
            namespaces=NS,
        )
    )
    cancellation = as_json["cancellation"]
    json_back = sum(
        Decimal(repr(cancellation[k]["amount"]))
        for k in ("refundAmount", "creditAmount")
        if cancellation.get(k)
    )
    assert abs(given_back) == json_back

    # OrderChange AcceptCancelledOffer: cancelled, money back as quoted, seats released.
    before = Order.objects.get(order_id=order_id)
    refunded_before = sum(p.refunded for p in before.payments.all())
    live_journeys = [
        j
        for j in view["journeys"]
        if any(
            j["segments"][0]["segmentId"] in i["segmentRefIds"]
            for i in view["order"]["items"]
            if i["statusCode"] == "CONFIRMED"
        )
    ]
    sold_before = sum(seats_sold(j) for j in live_journeys)
    document = change_request(order_id)
    cancel = choose(document, "AcceptCancelledOffer")
    sub(cancel, "OfferID", order_id)
    sub(cancel, "OwnerCode", "MX")
    cancelled = xml_of(post(api, "OrderChange", body(document), auth), 200, VIEW)
    view = check(api, auth, cancelled, order_id)
    assert view["order"]["statusCode"] == OrderStatus.CANCELLED
    order = money_adds_up(order_id)
    refunded = sum(p.refunded for p in order.payments.all()) - refunded_before
    assert refunded + order.credited - before.credited == json_back
    assert sum(seats_sold(j) for j in live_journeys) == sold_before - 3 * sum(
        len(j["segments"]) for j in live_journeys
    )

    # OrderRetrieve: the order as JSON shows it, by id and by record locator.
    retrieved = xml_of(post(api, "OrderRetrieve", _retrieve(order_id), auth), 200, VIEW)
    assert_same_order(retrieved, json_view(api, auth, order_id))
    by_locator = xml_of(
        post(api, "OrderRetrieve", _retrieve(view["order"]["recordLocator"]), auth), 200, VIEW
    )
    assert etree.tostring(by_locator.find("m:Response", NS)) == etree.tostring(
        retrieved.find("m:Response", NS)
    )


def _retrieve(ref: str) -> bytes:
    document = example("OrderRetrieveRQ")
    document.find(".//c:OrderID", NS).text = ref
    return body(document)
