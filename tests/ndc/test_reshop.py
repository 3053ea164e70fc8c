"""OrderReshop and OrderQuote over NDC/XML (DESIGN.md §9, §11 "Reshop and quote"), mapped
onto the same services as POST /json/{v}/orders/{orderId}/reshop and /quote: the same
replacement flights, prices, penalties and fees, and offer ids that go back and forth
between the channels; a quote from XML is accepted with JSON AcceptReshopOffer. 21.3 has
no OrderQuoteRS: OrderQuoteRQ is answered with an IATA_OrderReshopRS. Every answer
validates against its 21.3 schema (tests/ndc/conftest.xml_of)."""

from datetime import timedelta
from decimal import Decimal

import pytest
from lxml import etree

from orders.models import Order, OrderItem
from tests.conftest import bearer, token_for
from tests.ndc.conftest import CNS, NS, example, ndc_error_of, post, texts, valid, xml_of
from tests.orders.conftest import price_offer
from tests.orders.test_exchange import accept, booked, itinerary, quote, reshop

pytestmark = pytest.mark.django_db

RS = "IATA_OrderReshopRS"
_OD = (
    "/IATA_OrderReshopRQ/Request/UpdateOrder/ReshopOrder/ReshopOrderChoice/ServiceOrder/"
    "AddOfferItems/FlightRequest/FlightRequestOriginDestinationsCriteria/OriginDestCriteria"
)
_SELECTED = "/IATA_OrderQuoteRQ/Payload/SelectedOffers"


# --- requests: the examples of ndc/examples, filled in ----------------------------------


def reshop_itinerary_xml(order_id, day, *, replaces=None, origin="PVD", destination="CHS"):
    """OrderReshopRQ for new flights on `day`, replacing the order item `replaces` (or the
    one on that market when None), for the whole party (no PaxList)."""
    document = example("OrderReshopRQ")
    document.find(".//c:OrderRefID", NS).text = order_id
    od = document.find(".//c:OriginDestCriteria", NS)
    od.find("c:OriginDepCriteria/c:IATA_LocationCode", NS).text = origin
    od.find("c:OriginDepCriteria/c:Date", NS).text = day.isoformat()
    od.find("c:DestArrivalCriteria/c:IATA_LocationCode", NS).text = destination
    pax_list = document.find(".//c:AddOfferItems/c:PaxList", NS)
    pax_list.getparent().remove(pax_list)
    deleted = document.find(".//c:DeleteOrderItem", NS)
    if replaces is None:
        deleted.getparent().remove(deleted)
    else:
        deleted.find("c:OrderItemRefID", NS).text = replaces
    return etree.tostring(valid(document))


def reshop_cancel_xml(order_id):
    document = example("OrderReshopRQ-cancel")
    for ref in document.iterfind(".//c:OrderRefID", NS):
        ref.text = order_id
    return etree.tostring(valid(document))


def reshop_name_xml(order_id, pax_id, given_name, surname):
    document = example("OrderReshopRQ-name")
    document.find(".//c:OrderRefID", NS).text = order_id
    document.find(".//c:UpdatePaxName/c:PaxRefID", NS).text = pax_id
    document.find(".//c:UpdatePaxName/c:GivenName", NS).text = given_name
    document.find(".//c:UpdatePaxName/c:Surname", NS).text = surname
    return etree.tostring(valid(document))


def quote_xml(order_id, offer_id, item_ids, pax_ids):
    """OrderQuoteRQ for items of a reshop offer, the party in PaxList."""
    document = example("OrderQuoteRQ")
    payload = document.find("m:Payload", NS)
    payload.find("c:ExistingOrder/c:OrderID", NS).text = order_id
    template_pax = payload.find("c:PaxList", NS)
    for pax_id in pax_ids:
        pax = etree.Element(f"{{{CNS}}}PaxList")
        etree.SubElement(pax, f"{{{CNS}}}PaxID").text = pax_id
        etree.SubElement(pax, f"{{{CNS}}}PTC").text = "ADT"
        template_pax.addprevious(pax)
    payload.remove(template_pax)
    selected = payload.find("c:SelectedOffers", NS)
    selected.find("c:OfferRefID", NS).text = offer_id
    template_item = selected.find("c:SelectedOfferItem", NS)
    for item_id in item_ids:
        item = etree.Element(f"{{{CNS}}}SelectedOfferItem")
        etree.SubElement(item, f"{{{CNS}}}OfferItemRefID").text = item_id
        for pax_id in pax_ids:
            etree.SubElement(item, f"{{{CNS}}}PaxRefID").text = pax_id
        template_item.addprevious(item)
    selected.remove(template_item)
    return etree.tostring(valid(document))


# --- reading the answers ---------------------------------------------------------------


def money(element):
    return Decimal(element.text)


def offers_of(document):
    return document.findall("m:Response/c:ReshopResults/c:ReshopOffers/c:Offer", NS)


def offer_summary(offer):
    """What a replacement offer sells and costs: per item its flights and total, and the
    offer's differential (type, delta, new and old totals)."""
    journeys = {
        j.find("c:PaxJourneyID", NS).text: tuple(texts(j, "c:PaxSegmentRefID"))
        for j in offer.getroottree().iterfind(".//c:PaxJourney", NS)
    }
    items = []
    for item in offer.findall("c:AddedOfferItem", NS):
        refs = texts(item, "c:Service[1]/c:OfferServiceAssociation/c:PaxJourneyRef/*")
        price = item.find("c:ReshopPrice/c:PriceAndFareDetails/c:Price/c:TotalAmount", NS)
        items.append((tuple(journeys[r] for r in refs), money(price)))
    differential = offer.find("c:DeleteOrderItem/c:PriceDifferential", NS)
    return (
        tuple(items),
        differential.find("c:DifferentialTypeCode", NS).text,
        money(differential.find("c:DiffPrice/c:Price/c:TotalAmount", NS)),
        money(differential.find("c:NewPrice/c:Price/c:TotalAmount", NS)),
        money(differential.find("c:OldPrice/c:Price/c:TotalAmount", NS)),
    )


def json_summary(offer, journeys):
    """The same summary of a JSON reshop offer."""
    flights = {j["journeyId"]: tuple(s["segmentId"] for s in j["segments"]) for j in journeys}
    differential = offer["priceDifferential"]
    return (
        tuple(
            (
                tuple(flights[ref] for ref in item["journeyRefIds"]),
                Decimal(str(item["totalPrice"]["total"]["amount"])),
            )
            for item in offer["items"]
        ),
        differential["differentialTypeCode"],
        Decimal(str(differential["balanceDelta"]["amount"])),
        Decimal(str(differential["newTotal"]["amount"])),
        Decimal(str(differential["oldTotal"]["amount"])),
    )


def first_offer(document):
    """The first replacement offer: its OfferID and OfferItemIDs."""
    offer = offers_of(document)[0]
    return offer.find("c:OfferID", NS).text, texts(offer, "c:AddedOfferItem/c:OfferItemID")


@pytest.fixture
def order(api, auth, network, clock):
    """A paid one-adult PVD-CHS order in the Nice bundle (changes for the fare difference),
    ten days out, and the day after its flight."""
    day = network + timedelta(days=10)
    return booked(api, auth, day), day + timedelta(days=1)


# --- ReshopItinerary -----------------------------------------------------------------------


def test_reshop_in_xml_offers_the_json_replacement_flights_at_the_json_prices(api, auth, order):
    view, new_day = order
    order_id = view["order"]["orderId"]
    item_id = view["order"]["items"][0]["itemId"]

    document = xml_of(
        post(api, "OrderReshop", reshop_itinerary_xml(order_id, new_day, replaces=item_id), auth),
        200,
        RS,
    )
    as_json = reshop(api, auth, order_id, itinerary(new_day)).json()["data"]

    assert texts(document, "m:Response/c:Order/c:OrderID") == [order_id]
    offers = offers_of(document)
    assert offers
    assert len(offers) == len(as_json["offers"])
    assert [offer_summary(o) for o in offers] == [
        json_summary(o, as_json["journeys"]) for o in as_json["offers"]
    ]
    for offer in offers:
        assert texts(offer, "c:AddedOfferItem/c:ExistingOrderItem/c:OrderItemRefID") == [item_id]
        assert texts(offer, "c:DeleteOrderItem/c:ExistingOrderItem/c:OrderItemRefID") == [item_id]
    # The passengers are the order's, fare details and services included.
    [pax_id] = [p["paxId"] for p in view["pax"]]
    assert texts(document, ".//c:PaxList/c:Pax/c:PaxID") == [pax_id]
    assert set(texts(document, ".//c:AddedOfferItem/c:FareDetail/c:PaxRefID")) == {pax_id}
    assert set(texts(document, ".//c:AddedOfferItem/c:Service/c:PaxRefID")) == {pax_id}


def test_a_reshop_from_xml_is_quoted_in_xml_and_accepted_with_json(api, auth, order):
    view, new_day = order
    order_id = view["order"]["orderId"]
    pax_ids = [p["paxId"] for p in view["pax"]]
    reshopped = xml_of(
        post(api, "OrderReshop", reshop_itinerary_xml(order_id, new_day), auth), 200, RS
    )
    offer_id, item_ids = first_offer(reshopped)

    document = xml_of(
        post(api, "OrderQuote", quote_xml(order_id, offer_id, item_ids, pax_ids), auth), 200, RS
    )

    [quoted] = offers_of(document)
    quote_id = quoted.find("c:OfferID", NS).text
    assert quote_id != offer_id
    quoted_items = texts(quoted, "c:AddedOfferItem/c:OfferItemID")
    [item] = quoted.findall("c:AddedOfferItem", NS)
    differential = item.find("c:ReshopPrice/c:PriceDifferential", NS)
    old = money(differential.find("c:OldPrice/c:Price/c:TotalAmount", NS))
    new = money(differential.find("c:NewPrice/c:Price/c:TotalAmount", NS))
    delta = money(differential.find("c:DiffPrice/c:Price/c:TotalAmount", NS))
    assert new - old == delta
    assert old == Decimal(str(view["order"]["items"][0]["totalPrice"]["total"]["amount"]))
    kind = differential.find("c:DifferentialTypeCode", NS).text
    assert kind == ("AddCol" if delta > 0 else "Refund" if delta < 0 else "EvenExchange")

    quoted_offer = {"offerId": quote_id, "items": [{"offerItemId": i} for i in quoted_items]}
    accepted = accept(api, auth, order_id, quoted_offer)

    assert accepted.status_code == 200, accepted.content
    journeys = accepted.json()["data"]["journeys"]
    live = OrderItem.objects.filter(order__order_id=order_id, status="CONFIRMED")
    assert {item.journey.ref for item in live} <= {j["journeyId"] for j in journeys}
    assert any(j["departureDateTime"].startswith(new_day.isoformat()) for j in journeys)


def test_offer_ids_go_both_ways_between_json_and_xml(api, auth, order):
    view, new_day = order
    order_id = view["order"]["orderId"]
    pax_ids = [p["paxId"] for p in view["pax"]]

    # A reshop offer from XML, quoted in JSON.
    offer_id, item_ids = first_offer(
        xml_of(post(api, "OrderReshop", reshop_itinerary_xml(order_id, new_day), auth), 200, RS)
    )
    quoted = quote(api, auth, order_id, {"offerId": offer_id, "items": []}, item_ids)
    assert quoted.status_code == 200, quoted.content

    # A reshop offer from JSON, quoted in XML: the same differential as JSON's quote.
    as_json = reshop(api, auth, order_id, itinerary(new_day)).json()["data"]["offers"][0]
    json_quote = quote(api, auth, order_id, as_json).json()["data"]
    document = xml_of(
        post(
            api,
            "OrderQuote",
            quote_xml(
                order_id, as_json["offerId"], [i["offerItemId"] for i in as_json["items"]], pax_ids
            ),
            auth,
        ),
        200,
        RS,
    )
    differential = offers_of(document)[0].find("c:DeleteOrderItem/c:PriceDifferential", NS)
    assert (
        differential.find("c:DifferentialTypeCode", NS).text
        == (json_quote["priceDifferential"]["differentialTypeCode"])
    )
    assert money(differential.find("c:DiffPrice/c:Price/c:TotalAmount", NS)) == Decimal(
        str(json_quote["priceDifferential"]["balanceDelta"]["amount"])
    )


# --- CancelOrder and NameChange -----------------------------------------------------------


@pytest.mark.parametrize(
    ("bundle", "flight", "days", "kind"),
    [
        ("Nicest", 501, 20, "Refund"),
        ("Nice", 101, 20, "Residual"),
        ("No Flex", 101, 40, "Residual"),
    ],
)
def test_cancel_order_shows_the_json_penalty_and_refund_or_credit(
    api, auth, network, clock, bundle, flight, days, kind
):
    view = booked(api, auth, network + timedelta(days=days), bundle=bundle, flight=flight)
    clock.advance(hours=25)  # past the 24-hour rule: the bundle's own terms
    order_id = view["order"]["orderId"]

    document = xml_of(post(api, "OrderReshop", reshop_cancel_xml(order_id), auth), 200, RS)
    cancellation = reshop(api, auth, order_id, {"type": "CancelOrder"}).json()["data"][
        "cancellation"
    ]

    [offer] = offers_of(document)
    assert offer.find("c:OfferID", NS).text == order_id
    deleted = offer.find("c:DeleteOrderItem", NS)
    assert texts(deleted, "c:ExistingOrderItem/c:OrderItemRefID") == [
        i["itemId"] for i in view["order"]["items"]
    ]
    differential = deleted.find("c:PriceDifferential", NS)
    assert differential.find("c:DifferentialTypeCode", NS).text == kind
    given_back = Decimal(str(cancellation["refundAmount"]["amount"])) + Decimal(
        str(cancellation["creditAmount"]["amount"])
    )
    price = differential.find("c:DiffPrice/c:Price", NS)
    assert money(price.find("c:DueByAirlineAmount", NS)) == given_back
    assert money(price.find("c:TotalAmount", NS)) == -given_back
    penalty = Decimal(str(cancellation["penaltyAmount"]["amount"]))
    [listed] = document.findall(".//c:PenaltyList/c:Penalty", NS)
    assert listed.find("c:TypeCode", NS).text == "Cancellation"
    assert money(listed.find("c:Price/c:TotalAmount", NS)) == penalty
    assert deleted.find("c:PenaltyRefID", NS).text == listed.find("c:PenaltyID", NS).text
    descriptions = texts(offer, "c:Desc/c:DescText")
    assert f"Refund to the original payment: {cancellation['refundAmount']['amount']:.2f} USD" in (
        descriptions
    )
    assert f"Airline credit: {cancellation['creditAmount']['amount']:.2f} USD" in descriptions
    if bundle == "No Flex":
        assert penalty > 0  # 75% credit: the rest is kept


def test_a_name_change_costs_the_json_fee(api, auth, order):
    view, _ = order
    order_id = view["order"]["orderId"]
    pax_id = view["pax"][0]["paxId"]

    document = xml_of(
        post(api, "OrderReshop", reshop_name_xml(order_id, pax_id, "Augusta", "King"), auth),
        200,
        RS,
    )
    fee = reshop(
        api,
        auth,
        order_id,
        {"type": "NameChange", "paxRefId": pax_id, "givenName": "Augusta", "surname": "King"},
    ).json()["data"]["nameChange"]["fee"]

    [offer] = offers_of(document)
    [item] = offer.findall("c:OfferItem", NS)
    assert money(item.find("c:Price/c:TotalAmount", NS)) == Decimal(str(fee["amount"])) > 0
    assert texts(item, "c:PaxNameChange/*") == ["Augusta", pax_id, "King"]
    definition = item.find("c:NameChangeService/c:ServiceDefinitionRefID", NS).text
    assert texts(document, ".//c:ServiceDefinition/c:ServiceDefinitionID") == [definition]
    # A quote changes nothing.
    assert Order.objects.get(order_id=order_id).passengers.get().surname == "Lovelace"


# --- errors, with the XPath of the element at fault ------------------------------------------


def test_a_read_only_key_may_not_reshop_or_quote(api, order, read_only_key):
    view, _ = order
    order_id = view["order"]["orderId"]
    read_only = bearer(token_for(api, read_only_key.raw))

    ndc_error_of(
        post(api, "OrderReshop", reshop_cancel_xml(order_id), read_only), 403, "ERR-8001", RS
    )
    body = quote_xml(order_id, "OFFER", ["OFFER.1"], [view["pax"][0]["paxId"]])
    ndc_error_of(post(api, "OrderQuote", body, read_only), 403, "ERR-8001", RS)


def test_another_sellers_order_is_err_4000(api, order, partner_key, other_seller):
    view, new_day = order
    order_id = view["order"]["orderId"]
    other = bearer(token_for(api, partner_key.raw, other_seller.pk))

    body = reshop_itinerary_xml(order_id, new_day)
    error = ndc_error_of(post(api, "OrderReshop", body, other), 404, "ERR-4000", RS)
    assert order_id not in (error.get("TagText") or "")
    body = quote_xml(order_id, "OFFER", ["OFFER.1"], [view["pax"][0]["paxId"]])
    ndc_error_of(post(api, "OrderQuote", body, other), 404, "ERR-4000", RS)


def test_quoting_a_shopping_offer_is_err_3005(api, auth, order):
    view, new_day = order
    shopped = price_offer(api, auth, new_day, party=[{"type": "ADT"}])
    body = quote_xml(
        view["order"]["orderId"],
        shopped["offer"]["offerId"],
        [i["offerItemId"] for i in shopped["offer"]["items"]],
        [view["pax"][0]["paxId"]],
    )

    error = ndc_error_of(post(api, "OrderQuote", body, auth), 400, "ERR-3005", RS)

    assert error["TagText"] == f"{_SELECTED}/OfferRefID"
    assert error["DescText"].startswith(f"{_SELECTED}/OfferRefID:")


def test_quote_errors_name_their_element(api, auth, order, clock):
    view, new_day = order
    order_id = view["order"]["orderId"]
    pax_ids = [p["paxId"] for p in view["pax"]]
    offer_id, [item_id] = first_offer(
        xml_of(post(api, "OrderReshop", reshop_itinerary_xml(order_id, new_day), auth), 200, RS)
    )

    twice = quote_xml(order_id, offer_id, [item_id, item_id], pax_ids)
    error = ndc_error_of(post(api, "OrderQuote", twice, auth), 422, "ERR-1005", RS)
    assert error["TagText"] == f"{_SELECTED}/SelectedOfferItem/OfferItemRefID"

    unknown = quote_xml(order_id, "NO-SUCH-OFFER", [item_id], pax_ids)
    error = ndc_error_of(post(api, "OrderQuote", unknown, auth), 404, "ERR-3000", RS)
    assert error["TagText"] == f"{_SELECTED}/OfferRefID"

    stranger = quote_xml(order_id, offer_id, [item_id], ["PAX-NOBODY"])
    error = ndc_error_of(post(api, "OrderQuote", stranger, auth), 422, "ERR-1005", RS)
    assert error["TagText"] == "/IATA_OrderQuoteRQ/Payload/PaxList/PaxID"

    # Without a PaxList the PaxRefIDs name the passengers, and the error points there.
    no_list = etree.fromstring(stranger)
    for pax in no_list.findall("m:Payload/c:PaxList", NS):
        pax.getparent().remove(pax)
    error = ndc_error_of(
        post(api, "OrderQuote", etree.tostring(no_list), auth), 422, "ERR-1005", RS
    )
    assert error["TagText"] == f"{_SELECTED}/SelectedOfferItem/PaxRefID"

    clock.advance(hours=1)  # past the offer's 30 minutes (DESIGN.md §7)
    error = ndc_error_of(
        post(api, "OrderQuote", quote_xml(order_id, offer_id, [item_id], pax_ids), auth),
        404,
        "ERR-3001",
        RS,
    )
    assert error["TagText"] == f"{_SELECTED}/OfferRefID"


def test_reshop_errors_name_their_element(api, auth, order):
    view, new_day = order
    order_id = view["order"]["orderId"]

    past = reshop_itinerary_xml(order_id, new_day - timedelta(days=30))
    error = ndc_error_of(post(api, "OrderReshop", past, auth), 422, "ERR-1005", RS)
    assert error["TagText"] == f"{_OD}/OriginDepCriteria/Date"
    assert error["TypeCode"] == "ValidationFailed"  # no reason: the registry's error key

    elsewhere = reshop_itinerary_xml(order_id, new_day, origin="TPA", destination="ORF")
    error = ndc_error_of(post(api, "OrderReshop", elsewhere, auth), 400, "ERR-4002", RS)
    assert error["DescText"].startswith(f"{_OD}:")
    assert error["TypeCode"] == "NOT_ON_ORDER"  # JSON's error.reason

    not_on_order = reshop_itinerary_xml(order_id, new_day, replaces="OOI-NOPE")
    error = ndc_error_of(post(api, "OrderReshop", not_on_order, auth), 400, "ERR-4002", RS)
    assert error["TagText"].endswith("/ServiceOrder/DeleteOrderItem/OrderItemRefID")
    assert error["TypeCode"] == "NOT_ON_ORDER"

    mismatch = etree.fromstring(reshop_cancel_xml(order_id))
    mismatch.find(".//c:CancelOrderRef/c:OrderRefID", NS).text = "ANOTHER"
    error = ndc_error_of(
        post(api, "OrderReshop", etree.tostring(mismatch), auth), 422, "ERR-1005", RS
    )
    assert error["TagText"] == "/IATA_OrderReshopRQ/Request/UpdateOrder/CancelOrderRef/OrderRefID"

    stranger = reshop_name_xml(order_id, "PAX-NOBODY", "Augusta", "King")
    error = ndc_error_of(post(api, "OrderReshop", stranger, auth), 422, "ERR-1005", RS)
    assert error["TagText"].endswith("/UpdatePaxName/PaxRefID")


def test_delete_order_items_quotes_the_items_named_as_json_does(api, auth, network, clock):
    view = booked(api, auth, network + timedelta(days=20), bundle="Nice")
    clock.advance(hours=25)
    order_id = view["order"]["orderId"]
    item_id = view["order"]["items"][0]["itemId"]
    document = example("OrderReshopRQ")
    document.find(".//c:OrderRefID", NS).text = order_id
    document.find(".//c:DeleteOrderItem/c:OrderItemRefID", NS).text = item_id
    add = document.find(".//c:AddOfferItems", NS)
    add.getparent().remove(add)

    answer = xml_of(post(api, "OrderReshop", etree.tostring(valid(document)), auth), 200, RS)
    cancellation = reshop(
        api, auth, order_id, {"type": "DeleteOrderItems", "orderItemRefIds": [item_id]}
    ).json()["data"]["cancellation"]

    [offer] = offers_of(answer)
    deleted = offer.find("c:DeleteOrderItem", NS)
    assert texts(deleted, "c:ExistingOrderItem/c:OrderItemRefID") == [item_id]
    price = deleted.find("c:PriceDifferential/c:DiffPrice/c:Price", NS)
    assert money(price.find("c:DueByAirlineAmount", NS)) == Decimal(
        str(cancellation["creditAmount"]["amount"])
    )


def test_choices_without_a_json_twin_are_err_1005(api, auth, order):
    view, _ = order
    order_id = view["order"]["orderId"]
    document = example("OrderReshopRQ-name")
    document.find(".//c:OrderRefID", NS).text = order_id
    choice = document.find(".//c:ReshopOrderChoice", NS)
    choice.remove(choice[0])
    sharing = etree.SubElement(
        etree.SubElement(choice, f"{{{CNS}}}UpdatePax"), f"{{{CNS}}}PaxSharingPref"
    )
    etree.SubElement(sharing, f"{{{CNS}}}PaxRefID").text = view["pax"][0]["paxId"]

    error = ndc_error_of(
        post(api, "OrderReshop", etree.tostring(valid(document)), auth), 422, "ERR-1005", RS
    )
    assert error["TagText"].endswith("/ReshopOrderChoice/UpdatePax")

    quote_request = etree.fromstring(quote_xml(order_id, "OFFER", ["OFFER.1"], ["PAX-1"]))
    repriced = etree.Element(f"{{{CNS}}}RepricedOrder")
    etree.SubElement(repriced, f"{{{CNS}}}OrderID").text = order_id
    etree.SubElement(repriced, f"{{{CNS}}}OwnerCode").text = "MX"
    quote_request.find("m:Payload/c:SelectedOffers", NS).addprevious(repriced)
    body = etree.tostring(valid(quote_request))
    error = ndc_error_of(post(api, "OrderQuote", body, auth), 422, "ERR-1005", RS)
    assert error["TagText"] == "/IATA_OrderQuoteRQ/Payload/RepricedOrder"


# --- services of the replaced journeys: moved or dropped ----------------------------------


def service_changes_of(offer):
    """An offer's ExistingService entries: (service id, its order item, FutureStatusCode),
    moved ones under an AddedOfferItem, dropped ones under the DeleteOrderItem."""
    found = set()
    for path, where in (
        ("c:AddedOfferItem/c:ExistingOrderItem", "added"),
        ("c:DeleteOrderItem/c:ExistingOrderItem", "deleted"),
    ):
        for existing in offer.iterfind(path, NS):
            item_id = existing.findtext("c:OrderItemRefID", namespaces=NS)
            for service in existing.iterfind("c:ExistingService", NS):
                status = service.findtext("c:FutureStatusCode", namespaces=NS)
                assert where == ("added" if status == "MOVED" else "deleted"), status
                found.add((service.findtext("c:ServiceRefID", namespaces=NS), item_id, status))
    return found


def json_service_changes(changes):
    return {(c["serviceId"], c["itemId"], c["action"]) for c in changes}


def test_a_downgrade_shows_the_bundles_inclusions_dropped_in_reshop_and_quote(
    api, auth, network, clock
):
    day = network + timedelta(days=10)
    view = booked(api, auth, day, bundle="Nicest", flight=501)
    order_id = view["order"]["orderId"]
    pax_ids = [p["paxId"] for p in view["pax"]]
    document = example("OrderReshopRQ")
    document.find(".//c:OrderRefID", NS).text = order_id
    od = document.find(".//c:OriginDestCriteria", NS)
    od.find("c:OriginDepCriteria/c:Date", NS).text = (day + timedelta(days=1)).isoformat()
    od.find("c:CabinType/c:CabinTypeCode", NS).text = "Y"
    for name in ("c:AddOfferItems/c:PaxList", "c:DeleteOrderItem"):
        element = document.find(f".//{name}", NS)
        element.getparent().remove(element)

    reshopped = xml_of(post(api, "OrderReshop", etree.tostring(valid(document)), auth), 200, RS)

    as_json = reshop(
        api, auth, order_id, itinerary(day + timedelta(days=1), cabinTypeCode="Y")
    ).json()["data"]
    offers = offers_of(reshopped)
    assert len(offers) == len(as_json["offers"])
    for offer, json_offer in zip(offers, as_json["offers"], strict=True):
        assert service_changes_of(offer) == json_service_changes(json_offer["serviceChanges"])
    first = offers[0]
    codes = {s["serviceId"]: s["code"] for s in view["services"]}
    assert sorted(codes[s] for s, _, status in service_changes_of(first)) == ["CB1", "CB2", "COB"]
    descs = texts(first, "c:Desc/c:DescText")
    assert sorted(d.split(" ")[0] for d in descs) == ["CB1", "CB2", "COB"]
    assert all(" DROPPED 0.00 USD (" in d for d in descs), descs
    assert all(d.endswith(": The Nice fare does not include it") for d in descs), descs

    offer_id, item_ids = first_offer(reshopped)
    quoted = xml_of(
        post(api, "OrderQuote", quote_xml(order_id, offer_id, item_ids, pax_ids), auth), 200, RS
    )

    [quote_offer] = offers_of(quoted)
    assert {(c, s) for _, c, s in service_changes_of(quote_offer)} == {
        (s["itemId"], "DROPPED") for s in view["services"]
    }
    assert len(texts(quote_offer, "c:Desc/c:DescText")) == 3
    # A quote changes nothing: the inclusions are still on the order.
    order = Order.objects.get(order_id=order_id)
    assert sorted(order.services.filter(status="ACTIVE").values_list("code", flat=True)) == [
        "CB1",
        "CB2",
        "COB",
    ]


def test_a_paid_seat_and_bag_that_follow_the_journey_show_as_moved(api, auth, network, clock):
    from tests.orders.test_order_ancillaries import bag_entry, open_seat, seat_entry

    day = network + timedelta(days=10)
    new_day = day + timedelta(days=1)
    view = booked(api, auth, day, payment={"type": "Hold"})
    order_id = view["order"]["orderId"]
    ada = view["pax"][0]["paxId"]
    seat_data = api.post(f"/json/v1/orders/{order_id}/seats", format="json", **auth).json()["data"]
    unit, seat_price = open_seat(seat_data["legSeatMaps"][0], ada)
    service_data = api.post(f"/json/v1/orders/{order_id}/services", format="json", **auth)
    bag, _ = bag_entry(service_data.json()["data"], "CB1", ada, view["journeys"][0]["journeyId"])
    bought = api.patch(
        f"/json/v1/orders/{order_id}",
        {"changes": [seat_entry(seat_data, unit, seat_price), bag]},
        format="json",
        **auth,
    )
    assert bought.status_code == 200, bought.content
    services = {s["code"]: s for s in bought.json()["data"]["services"]}

    reshopped = xml_of(
        post(api, "OrderReshop", reshop_itinerary_xml(order_id, new_day), auth), 200, RS
    )
    as_json = reshop(api, auth, order_id, itinerary(new_day)).json()["data"]

    offers = offers_of(reshopped)
    for offer, json_offer in zip(offers, as_json["offers"], strict=True):
        assert service_changes_of(offer) == json_service_changes(json_offer["serviceChanges"])
    flights = {j["journeyId"]: j["flightNumbers"] for j in as_json["journeys"]}
    n = next(
        n
        for n, o in enumerate(as_json["offers"])
        if flights[o["items"][0]["journeyRefIds"][0]] == ["MX101"]
    )
    same_flight = offers[n]
    assert service_changes_of(same_flight) == {
        (services[code]["serviceId"], services[code]["itemId"], "MOVED") for code in ("STST", "CB1")
    }
    [seat_text] = [d for d in texts(same_flight, "c:Desc/c:DescText") if d.startswith("STST")]
    seat = unit["designator"]
    assert seat_text.startswith(f"STST {seat} MOVED 0.00 USD ({services['STST']['serviceId']}")
    offer_id = same_flight.find("c:OfferID", NS).text
    item_ids = texts(same_flight, "c:AddedOfferItem/c:OfferItemID")

    quoted = xml_of(
        post(api, "OrderQuote", quote_xml(order_id, offer_id, item_ids, [ada]), auth), 200, RS
    )

    [quote_offer] = offers_of(quoted)
    moved = quote_offer.findall("c:AddedOfferItem/c:ExistingOrderItem/c:ExistingService", NS)
    assert sorted(s.findtext("c:ServiceRefID", namespaces=NS) for s in moved) == sorted(
        services[code]["serviceId"] for code in ("STST", "CB1")
    )
