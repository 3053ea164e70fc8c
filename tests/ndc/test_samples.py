"""Public NDC 21.3 messages as partners send them (tests/ndc/samples/, each with its
source in samples/README.md), posted as published: only what names our data is filled
in (offer, order and item ids, amounts due, the order's own names), and what is outside
our product is said where it is swapped (a cash payment for a card). Every answer
validates against its 21.3 schema (conftest.xml_of), and each test asserts the database
too."""

from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from lxml import etree

from orders.models import Contact, Order, OrderStatus
from tests.ndc.conftest import NS, post, valid, xml_of
from tests.orders.conftest import book, booking_body, price_offer

pytestmark = pytest.mark.django_db

SAMPLES = Path(__file__).parent / "samples"
VIEW = "IATA_OrderViewRS"
TWO = [{"type": "ADT"}, {"type": "ADT"}]


def sample(name: str) -> etree._Element:
    """A sample as published (comments and placeholders included)."""
    return etree.parse(str(SAMPLES / name)).getroot()


def filled(document: etree._Element, values: dict[str, str]) -> bytes:
    """`document` with its Postman placeholders ({{name}}) filled from `values`, then
    checked against its schema."""
    text = etree.tostring(document).decode()
    for name, value in values.items():
        text = text.replace("{{" + name + "}}", value)
    assert "{{" not in text, text[text.index("{{") : text.index("{{") + 40]
    return etree.tostring(valid(etree.fromstring(text.encode())))


def due(view: dict) -> Decimal:
    return Decimal(str(view["order"]["totalPrice"]["total"]["amount"]))


# --- Travelsoft: the "ticket issue" OrderChange ----------------------------------------


@pytest.fixture
def garnier_hold(api, auth, network, clock):
    """The Travelsoft sample's booking on hold: Florian and Floria Garnier, the contact
    the sample echoes."""
    priced = price_offer(api, auth, network + timedelta(days=5), party=TWO)
    body = booking_body(
        priced,
        contact={
            "emailAddress": "florian.garnier@orchestra.eu",
            "phoneNumber": "+33 0622761972",
            "postalAddress": {
                "line1": "38 avenue de l'opera",
                "city": "Paris",
                "postalCode": "75002",
                "countryCode": "FR",
            },
        },
    )
    body["passengers"][0]["name"] = {"givenName": "Florian", "surname": "Garnier"}
    body["passengers"][1]["name"] = {"givenName": "Floria", "surname": "Garnier"}
    response = book(api, auth, body)
    assert response.status_code == 201, response.content
    return response.json()["data"]


def ticket_issue(view: dict) -> etree._Element:
    document = sample("travelsoft/OrderChangeRQ-ticketIssue.xml")
    order_id = view["order"]["orderId"]
    for ref in document.iterfind(".//c:OrderID", NS):
        ref.text = order_id
    document.find(".//c:OrderAssociation/c:OrderRefID", NS).text = order_id
    amount = document.find(".//c:PaymentProcessingDetails/c:Amount", NS)
    amount.text = f"{due(view):.2f}"
    return document


def test_the_ticket_issue_order_change_confirms_the_hold(api, auth, garnier_hold):
    order_id = garnier_hold["order"]["orderId"]

    response = post(api, "OrderChange", etree.tostring(valid(ticket_issue(garnier_hold))), auth)

    document = xml_of(response, 200, VIEW)
    assert document.findtext("m:Response/c:Order/c:StatusCode", namespaces=NS) == "CONFIRMED"
    order = Order.objects.get(order_id=order_id)
    assert order.status == OrderStatus.CONFIRMED
    assert order.paid == due(garnier_hold)
    assert order.tickets.count() == 2
    # The echoed contact changed nothing.
    [contact] = Contact.objects.filter(order=order)
    assert (contact.email, contact.phone) == ("florian.garnier@orchestra.eu", "+33622761972")
    assert (contact.given_name, contact.surname) == ("Florian", "Garnier")


def test_a_contact_that_differs_from_the_echo_is_a_change_named_by_its_individual(
    api, auth, garnier_hold
):
    order_id = garnier_hold["order"]["orderId"]
    document = ticket_issue(garnier_hold)
    email = document.find(".//c:ContactInfo/c:EmailAddress/c:EmailAddressText", NS)
    email.text = "floria.garnier@orchestra.eu"
    document.find(".//c:ContactInfo/c:IndividualRefID", NS).text = "PAX2"

    response = post(api, "OrderChange", etree.tostring(valid(document)), auth)

    xml_of(response, 200, VIEW)
    contact = Contact.objects.get(order__order_id=order_id)
    assert (contact.email, contact.given_name, contact.surname) == (
        "floria.garnier@orchestra.eu",
        "Floria",
        "Garnier",
    )
    assert Order.objects.get(order_id=order_id).status == OrderStatus.CONFIRMED


# --- GO7: a phone number plausible for its country, not assigned -------------------------


def test_a_plausible_unassigned_number_is_taken_in_json_and_xml(api, auth, network, clock):
    """+66 12345960 is the GO7 samples' contact phone (OrderCreateRQ ContactInfo/Phone:
    CountryDialingCode 66, PhoneNumber 12345960): eight digits, as Thailand's plan has
    them, in a range not yet assigned."""
    priced = price_offer(api, auth, network + timedelta(days=5), party=TWO)
    body = booking_body(
        priced, contact={"emailAddress": "sample@a.com", "phoneNumber": "+66 12345960"}
    )

    created = book(api, auth, body)

    assert created.status_code == 201, created.content
    order_id = created.json()["data"]["order"]["orderId"]
    assert Contact.objects.get(order__order_id=order_id).phone == "+6612345960"

    # The same number as the GO7 sample sends it, in XML.
    document = sample("go7/OrderCreateRQ-ancillary-single-offer-pay-later.xml")
    [phone] = document.iterfind(".//c:ContactInfo/c:Phone", NS)
    assert [e.text for e in phone] == ["66", "12345960"]
    example = etree.parse(str(Path(__file__).parents[2] / "ndc/examples/OrderCreateRQ.xml"))
    request = example.getroot()
    request.find(".//c:ContactInfo/c:Phone", NS).getparent().replace(
        request.find(".//c:ContactInfo/c:Phone", NS), phone
    )
    offer = request.find(".//c:SelectedPricedOffer", NS)
    priced = price_offer(api, auth, network + timedelta(days=5), back=network + timedelta(days=9))
    offer.find("c:OfferRefID", NS).text = priced["offer"]["offerId"]
    for element, item in zip(
        offer.findall("c:SelectedOfferItem", NS), priced["offer"]["items"], strict=True
    ):
        element.find("c:OfferItemRefID", NS).text = item["offerItemId"]
    payment = request.find(".//c:PaymentFunctions", NS)
    payment.getparent().remove(payment)

    answer = xml_of(post(api, "OrderCreate", etree.tostring(valid(request)), auth), 200, VIEW)

    order_id = answer.findtext("m:Response/c:Order/c:OrderID", namespaces=NS)
    assert Contact.objects.get(order__order_id=order_id).phone == "+6612345960"


# --- GO7: OrderChange accepting a reshop offer, no OrderQuote before -----------------------


def postman(values: dict[str, str]) -> dict[str, str]:
    """The GO7 collection's own variables besides the ids: a correlation id and now."""
    return {"$randomUUID": "6f1c2a8e-0d3b-4c55-9a7e-2b1f0c9d8e71", "today_th": now_th(), **values}


def now_th() -> str:
    from airline.api import clock

    return clock.now().isoformat(timespec="seconds")


def card_for_cash(document: etree._Element) -> None:
    """The sample pays cash (OfflinePayment CA), which we do not take: a card instead."""
    from tests.ndc.conftest import CNS

    for method in document.iterfind(".//c:PaymentMethod", NS):
        for child in list(method):
            method.remove(child)
        card = etree.SubElement(method, f"{{{CNS}}}PaymentCard")
        for name, value in (
            ("CardBrandCode", "VI"),
            ("CardNumber", "4111111111111111"),
            ("CardSecurityCode", "737"),
            ("ExpirationDate", "1230"),
        ):
            etree.SubElement(card, f"{{{CNS}}}{name}").text = value


def rebook(api, auth, view, new_day) -> tuple[bytes, Decimal]:
    """The GO7 rebook OrderChange accepting the first offer of an XML OrderReshop for
    `new_day` (no OrderQuote), paying its difference by card; and that difference."""
    from tests.ndc.test_reshop import first_offer, offers_of, reshop_itinerary_xml

    order_id = view["order"]["orderId"]
    reshopped = xml_of(
        post(api, "OrderReshop", reshop_itinerary_xml(order_id, new_day), auth),
        200,
        "IATA_OrderReshopRS",
    )
    offer_id, [item_id] = first_offer(reshopped)
    delta = Decimal(
        offers_of(reshopped)[0].findtext(
            "c:DeleteOrderItem/c:PriceDifferential/c:DiffPrice/c:Price/c:TotalAmount",
            namespaces=NS,
        )
    )
    document = sample("go7/OrderChangeRQ-rebook-pay.xml")
    # One item per journey here (GO7 sells one per passenger type): the first is ours.
    offer = document.find(".//c:SelectedPricedOffer", NS)
    for extra in offer.findall("c:SelectedOfferItem", NS)[1:]:
        offer.remove(extra)
    card_for_cash(document)
    if delta <= 0:  # nothing to pay: no payment
        functions = document.find(".//c:PaymentFunctions", NS)
        functions.getparent().remove(functions)
    values = {
        "reshopOfferId0": offer_id,
        "reshopOfferItemId0_0": item_id,
        "orderId": order_id,
        "totalPrice": f"{delta:.2f}",
        "totalCurCode": "USD",
    }
    return filled(document, postman(values)), delta


def test_a_reshop_offer_accepted_without_order_quote_is_quoted_and_applied(
    api, auth, network, clock
):
    from tests.orders.test_exchange import booked

    day = network + timedelta(days=10)
    view = booked(api, auth, day)
    order_id = view["order"]["orderId"]
    [old_item] = view["order"]["items"]
    body, _ = rebook(api, auth, view, day + timedelta(days=1))

    answer = xml_of(post(api, "OrderChange", body, auth), 200, VIEW)

    assert answer.findtext("m:Response/c:Order/c:OrderID", namespaces=NS) == order_id
    order = Order.objects.get(order_id=order_id)
    items = {i.ref: i for i in order.items.all()}
    assert items[old_item["itemId"]].status == "CANCELLED"
    [live] = [i for i in items.values() if i.status == "CONFIRMED"]
    assert live.journey.departs_at > items[old_item["itemId"]].journey.departs_at
    assert order.status == OrderStatus.CONFIRMED


def test_a_reshop_offer_whose_price_moved_is_refused_naming_order_quote(api, auth, network, clock):
    from airline.fares import reference
    from airline.fares.models import Fare
    from tests.ndc.conftest import ndc_error_of
    from tests.orders.test_exchange import booked

    day = network + timedelta(days=10)
    view = booked(api, auth, day)
    order_id = view["order"]["orderId"]
    body, _ = rebook(api, auth, view, day + timedelta(days=1))
    Fare.objects.update(base_amount=999)
    reference.forget()

    response = post(api, "OrderChange", body, auth)

    fields = ndc_error_of(response, 400, "ERR-4002", VIEW)
    assert fields["TypeCode"] == "OFFER_NOT_QUOTED"
    assert "OrderQuote" in fields["DescText"]
    assert fields["TagText"].endswith("/SelectedPricedOffer/OfferRefID")
    order = Order.objects.get(order_id=order_id)
    assert [i.status for i in order.items.all()] == ["CONFIRMED"]


# --- GO7: a bag priced with the flights, booked inside the priced offer -------------------

GO7_PARTY = [("PAX1", "ADT"), ("PAX2", "CHD"), ("PAX3", "INF")]


def test_a_bag_is_priced_with_the_flights_and_booked_in_the_priced_offer(api, auth, network, clock):
    from tests.ndc.conftest import air_shopping
    from tests.ndc.test_ancillaries import a_la_carte, offer_request

    day = network + timedelta(days=5)
    shopped = xml_of(
        post(api, "AirShopping", air_shopping(("PVD", "CHS", day), passengers=GO7_PARTY), auth),
        200,
        "IATA_AirShoppingRS",
    )
    flight = shopped.find(".//c:CarrierOffers/c:Offer", NS)
    offer_id = flight.findtext("c:OfferID", namespaces=NS)
    [item_id] = [i.text for i in flight.iterfind("c:OfferItem/c:OfferItemID", NS)]
    listed = xml_of(
        post(
            api, "ServiceList", offer_request("ServiceListRQ", offer_id, [item_id], pax=False), auth
        ),
        200,
        "IATA_ServiceListRS",
    )
    service_offer_id, items = a_la_carte(listed)
    bags = [(i, r) for i, r in items.items() if r["service"] == "SVC-CB1" and "PAX1" in r["pax"]]
    assert len(bags) == 1, items
    [(bag_id, bag)] = bags
    # The sample prices three flight items, one per passenger type: ours is one item for
    # the party, so the first names it and the other two go.
    document = sample("go7/OfferPriceRQ-ancillary-offer-services.xml")
    flights = document.find(".//c:SelectedOffer", NS)
    for extra in flights.findall("c:SelectedOfferItem", NS)[1:]:
        flights.remove(extra)
    values = {
        "offerId0": offer_id,
        "offerItemId0_0": item_id,
        "serviceOfferId": service_offer_id,
        "serviceOfferItemId": bag_id,
    }

    priced = xml_of(
        post(api, "OfferPrice", filled(document, postman(values)), auth), 200, "IATA_OfferPriceRS"
    )

    offer = priced.find("m:Response/c:PricedOffer", NS)
    priced_id = offer.findtext("c:OfferID", namespaces=NS)
    by_service = {
        i.findtext(".//c:ServiceDefinitionRefID", namespaces=NS): i
        for i in offer.iterfind("c:OfferItem", NS)
    }
    bag_item = by_service["SVC-CB1"]
    assert [p.text for p in bag_item.iterfind("c:Service/c:PaxRefID", NS)] == ["PAX1"]
    bag_price = Decimal(bag_item.findtext("c:Price/c:TotalAmount", namespaces=NS))
    assert bag_price == bag["total"] > 0
    [flight_item] = [i for i in offer.iterfind("c:OfferItem", NS) if i is not bag_item]
    flight_total = Decimal(flight_item.findtext("c:Price/c:TotalAmount", namespaces=NS))
    total = Decimal(offer.findtext("c:TotalPrice/c:TotalAmount", namespaces=NS))
    assert total == flight_total + bag_price
    assert priced.find(".//c:ServiceDefinitionList/c:ServiceDefinition", NS) is not None

    booking = sample("go7/OrderCreateRQ-ancillary-single-offer-pay-later.xml")
    # GO7 sells a flight item per passenger type, so the sample names three; ours is one
    # item for the party, named three times. The sample's second item names PAX1 where
    # its party (and its PaxList) has PAX2: a slip of the published copy, put right.
    second = booking.findall(".//c:SelectedPricedOffer/c:SelectedOfferItem", NS)[1]
    assert second.findtext("c:PaxRefID", namespaces=NS) == "PAX1"
    second.find("c:PaxRefID", NS).text = "PAX2"
    flight_item_id = flight_item.findtext("c:OfferItemID", namespaces=NS)
    created = xml_of(
        post(
            api,
            "OrderCreate",
            filled(
                booking,
                postman(
                    {
                        "offerId": priced_id,
                        "offerItemId0": flight_item_id,
                        "offerItemId1": flight_item_id,
                        "offerItemId2": flight_item_id,
                        "offerItemId3": bag_item.findtext("c:OfferItemID", namespaces=NS),
                    }
                ),
            ),
            auth,
        ),
        200,
        VIEW,
    )

    order = Order.objects.get(
        order_id=created.findtext("m:Response/c:Order/c:OrderID", namespaces=NS)
    )
    assert order.status == OrderStatus.ONHOLD
    [bag_row] = order.services.filter(code="CB1", included=False)
    assert bag_row.passenger.given_name == "Bruce"
    assert bag_row.total == bag_price
    assert order.total == total
    assert Contact.objects.get(order=order).phone == "+6612345960"
