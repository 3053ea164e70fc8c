"""OrderCreate, OrderRetrieve and OrderChange over NDC/XML (DESIGN.md §9), on the same
services as POST /json/{v}/orders, GET and PATCH /json/{v}/orders/{orderId}: every
answer is an IATA_OrderViewRS valid against its 21.3 schema (conftest.xml_of), and
shows the order the JSON view shows — the same ids, locator, total and tickets."""

from datetime import timedelta
from decimal import Decimal

import pytest
from lxml import etree

from orders.models import Channel, Order, OrderStatus, Passenger
from tests.conftest import bearer, token_for
from tests.ndc.conftest import CNS, NS, error_of, example, post, texts, valid, xml_of
from tests.orders.conftest import book, booking_body, price_offer

pytestmark = pytest.mark.django_db

VIEW = "IATA_OrderViewRS"


def cns(name: str) -> str:
    return f"{{{CNS}}}{name}"


def create_request(priced: dict, *, pay: bool = True) -> etree._Element:
    """The example OrderCreateRQ for a JSON priced offer (two adults and a child)."""
    document = example("OrderCreateRQ")
    offer = document.find(".//c:SelectedPricedOffer", NS)
    offer.find("c:OfferRefID", NS).text = priced["offer"]["offerId"]
    items = offer.findall("c:SelectedOfferItem", NS)
    for element, item in zip(items, priced["offer"]["items"], strict=True):
        element.find("c:OfferItemRefID", NS).text = item["offerItemId"]
    if not pay:
        request = document.find("m:Request", NS)
        request.remove(request.find("c:PaymentFunctions", NS))
    return document


def body(document: etree._Element) -> bytes:
    return etree.tostring(valid(document))


def retrieve_request(order_id: str) -> bytes:
    document = example("OrderRetrieveRQ")
    document.find(".//c:OrderID", NS).text = order_id
    return body(document)


def json_view(api, auth, order_id: str) -> dict:
    response = api.get(f"/json/v1/orders/{order_id}", **auth)
    assert response.status_code == 200, response.content
    return response.json()["data"]


def money(value) -> Decimal:
    return Decimal(repr(value)).quantize(Decimal("0.01"))


def assert_same_order(document: etree._Element, view: dict) -> None:
    """The OrderViewRS shows the JSON view's order: ids, locator, status, total, items,
    passengers, tickets and payments."""
    order = document.find("m:Response/c:Order", NS)
    header = view["order"]
    assert order.findtext("c:OrderID", namespaces=NS) == header["orderId"]
    assert order.findtext("c:OwnerCode", namespaces=NS) == header["ownerCode"]
    assert order.findtext("c:StatusCode", namespaces=NS) == header["statusCode"]
    total = order.find("c:TotalPrice/c:TotalAmount", NS)
    assert Decimal(total.text) == money(header["totalPrice"]["total"]["amount"])
    assert total.get("CurCode") == header["totalPrice"]["total"]["currency"]
    assert set(texts(order, ".//c:BookingRef/c:BookingID")) == {header["recordLocator"]}
    flight_items = [i["itemId"] for i in header["items"]]
    service_items = list(dict.fromkeys(s["itemId"] for s in view["services"]))
    assert texts(order, "c:OrderItem/c:OrderItemID") == flight_items + service_items
    for item in header["items"]:
        [element] = [
            e
            for e in order.findall("c:OrderItem", NS)
            if e.findtext("c:OrderItemID", namespaces=NS) == item["itemId"]
        ]
        assert Decimal(element.findtext("c:Price/c:TotalAmount", namespaces=NS)) == money(
            item["totalPrice"]["total"]["amount"]
        )
        assert element.findtext("c:StatusCode", namespaces=NS) == item["statusCode"]
        assert len(element.findall("c:Service", NS)) == len(item["paxRefIds"]) * len(
            item["segmentRefIds"]
        )
    pax = document.findall("m:Response/c:DataLists/c:PaxList/c:Pax", NS)
    assert [p.findtext("c:PaxID", namespaces=NS) for p in pax] == [p["paxId"] for p in view["pax"]]
    assert [p.findtext("c:Individual/c:Surname", namespaces=NS) for p in pax] == [
        p["name"]["surname"] for p in view["pax"]
    ]
    xml_tickets = sorted(
        (
            info.findtext("c:Ticket/c:TicketNumber", namespaces=NS),
            coupon.findtext("c:CouponNumber", namespaces=NS),
            info.findtext("c:PaxRefID", namespaces=NS),
            coupon.findtext("c:SoldAirlineInfo/c:PaxSegmentRefID", namespaces=NS),
            coupon.findtext("c:CouponStatusCode", namespaces=NS),
        )
        for info in document.iterfind("m:Response/c:TicketDocInfo", NS)
        if info.findtext("c:Ticket/c:TicketDocTypeCode", namespaces=NS) == "T"
        for coupon in info.iterfind("c:Ticket/c:Coupon", NS)
    )
    assert xml_tickets == sorted(
        (
            t["ticketNumber"],
            str(t["couponNumber"]),
            t["paxRefId"],
            t["segmentRefId"],
            t["statusCode"],
        )
        for t in view["tickets"]
    )
    payments = document.findall("m:PaymentFunctions/c:PaymentProcessingSummary", NS)
    assert [
        (p.findtext("c:PaymentID", namespaces=NS), Decimal(p.findtext("c:Amount", namespaces=NS)))
        for p in payments
    ] == [(p["paymentId"], money(p["amount"]["amount"])) for p in view["payments"]]


@pytest.fixture
def priced(api, auth, network, clock):
    day = network + timedelta(days=5)
    return price_offer(api, auth, day, back=day + timedelta(days=7))


@pytest.fixture
def paid(api, auth, priced):
    """An order created in XML, paid by card: its OrderViewRS."""
    response = post(api, "OrderCreate", body(create_request(priced)), auth)
    return xml_of(response, 200, VIEW)


def order_id_of(document: etree._Element) -> str:
    return document.findtext("m:Response/c:Order/c:OrderID", namespaces=NS)


class TestOrderCreate:
    def test_a_card_booking_is_the_order_json_shows(self, api, auth, paid):
        order_id = order_id_of(paid)

        view = json_view(api, auth, order_id)

        assert view["order"]["statusCode"] == OrderStatus.CONFIRMED
        assert view["tickets"]
        assert view["payments"]
        assert_same_order(paid, view)
        order = Order.objects.get(order_id=order_id)
        assert order.channel == Channel.NDC
        # The passengers as the request named them: documents, loyalty, gender, contact.
        babbage = Passenger.objects.get(order=order, offer_pax_id="ADT-2")
        assert babbage.travel_documents[0]["documentNumber"] == "P1234567"
        assert babbage.loyalty_program["accountNumber"] == "MX1234567"
        assert babbage.gender == "Male"
        contact = view["contacts"][0]
        assert contact["emailAddress"] == "ada@example.com"
        assert contact["phoneNumbers"][0]["number"] == "+14015550123"
        card = paid.find("m:PaymentFunctions//c:PaymentCard", NS)
        assert card.findtext("c:MaskedCardID", namespaces=NS).endswith("1111")

    def test_without_payment_functions_it_is_a_hold(self, api, auth, priced):
        response = post(api, "OrderCreate", body(create_request(priced, pay=False)), auth)

        document = xml_of(response, 200, VIEW)
        view = json_view(api, auth, order_id_of(document))
        assert view["order"]["statusCode"] == OrderStatus.ONHOLD
        assert_same_order(document, view)
        limits = texts(document, "m:Response/c:Order/c:OrderItem/c:PaymentTimeLimitDateTime")
        assert limits
        assert set(limits) == {view["order"]["paymentTimeLimit"]}
        assert not document.findall("m:Response/c:TicketDocInfo", NS)

    def test_flight_times_are_local_with_the_station_offset(self, api, auth, paid):
        order_id = order_id_of(paid)
        view = json_view(api, auth, order_id)
        segment = view["journeys"][0]["segments"][0]

        [dep] = [
            e.findtext("c:Dep/c:AircraftScheduledDateTime", namespaces=NS)
            for e in paid.iterfind(".//c:DatedMarketingSegment", NS)
            if e.findtext("c:DatedMarketingSegmentId", namespaces=NS).endswith(
                segment["segmentId"].removeprefix("SEG")
            )
        ]

        assert dep[:19] == segment["departureDateTime"][:19]
        assert dep[19:] in ("-05:00", "-04:00")  # PVD, Eastern time

    def test_a_read_only_key_is_err_8001(self, api, priced, read_only_key):
        read_only = bearer(token_for(api, read_only_key.raw))

        response = post(api, "OrderCreate", body(create_request(priced)), read_only)

        error_of(response, 403, "ERR-8001", VIEW)

    def test_a_bad_card_number_is_err_1005_at_its_element(self, api, auth, priced):
        document = create_request(priced)
        document.find(".//c:CardNumber", NS).text = "4111111111111112"

        fields = error_of(post(api, "OrderCreate", body(document), auth), 422, "ERR-1005", VIEW)

        assert fields["TagText"].endswith("/PaymentMethod/PaymentCard/CardNumber")
        assert not Order.objects.exists()

    def test_an_unknown_card_brand_is_err_6001(self, api, auth, priced):
        document = create_request(priced)
        document.find(".//c:CardBrandCode", NS).text = "ZZ"

        fields = error_of(post(api, "OrderCreate", body(document), auth), 422, "ERR-6001", VIEW)

        assert fields["TagText"].endswith("/PaymentCard/CardBrandCode")

    def test_a_voucher_is_a_payment_method_not_taken(self, api, auth, priced):
        document = create_request(priced)
        method = document.find(".//c:PaymentMethod", NS)
        method.remove(method[0])
        etree.SubElement(etree.SubElement(method, cns("Voucher")), cns("VoucherID")).text = "V1"

        error_of(post(api, "OrderCreate", body(document), auth), 422, "ERR-6000", VIEW)

    def test_a_malformed_email_is_err_1004(self, api, auth, priced):
        document = create_request(priced)
        document.find(".//c:ContactInfo/c:EmailAddress/c:EmailAddressText", NS).text = "nope"

        fields = error_of(post(api, "OrderCreate", body(document), auth), 400, "ERR-1004", VIEW)

        assert fields["TagText"].endswith("/ContactInfo/EmailAddress/EmailAddressText")

    def test_a_gender_other_than_m_or_f_is_err_1005(self, api, auth, priced):
        document = create_request(priced)
        document.find(".//c:Pax/c:Individual/c:GenderCode", NS).text = "X"

        fields = error_of(post(api, "OrderCreate", body(document), auth), 422, "ERR-1005", VIEW)

        assert fields["TagText"] == (
            "/IATA_OrderCreateRQ/Request/DataLists/PaxList/Pax[1]/Individual/GenderCode"
        )

    def test_a_passenger_not_priced_is_err_4001(self, api, auth, priced):
        document = create_request(priced)
        document.find(".//c:Pax[3]/c:PaxID", NS).text = "CHD-9"

        fields = error_of(post(api, "OrderCreate", body(document), auth), 400, "ERR-4001", VIEW)

        assert fields["TagText"].endswith("/DataLists/PaxList/Pax/PaxID")

    def test_an_unknown_offer_is_err_3000(self, api, auth, priced):
        document = create_request(priced)
        document.find(".//c:SelectedPricedOffer/c:OfferRefID", NS).text = "nope.1"

        fields = error_of(post(api, "OrderCreate", body(document), auth), 404, "ERR-3000", VIEW)

        assert fields["TagText"].endswith("/SelectedPricedOffer/OfferRefID")

    def test_a_booking_without_contact_is_err_1005(self, api, auth, priced):
        document = create_request(priced)
        lists = document.find(".//c:DataLists", NS)
        lists.remove(lists.find("c:ContactInfoList", NS))
        for ref in document.iterfind(".//c:Pax/c:ContactInfoRefID", NS):
            ref.getparent().remove(ref)

        fields = error_of(post(api, "OrderCreate", body(document), auth), 422, "ERR-1005", VIEW)

        assert fields["TagText"] == "/IATA_OrderCreateRQ/Request/DataLists"


class TestOrderRetrieve:
    def test_by_order_id_it_is_the_json_order(self, api, auth, paid):
        order_id = order_id_of(paid)

        document = xml_of(post(api, "OrderRetrieve", retrieve_request(order_id), auth), 200, VIEW)

        assert_same_order(document, json_view(api, auth, order_id))
        assert etree.tostring(document.find("m:Response", NS)) == etree.tostring(
            paid.find("m:Response", NS)
        )

    def test_by_record_locator(self, api, auth, paid):
        order_id = order_id_of(paid)
        locator = json_view(api, auth, order_id)["order"]["recordLocator"]

        document = xml_of(post(api, "OrderRetrieve", retrieve_request(locator), auth), 200, VIEW)

        assert order_id_of(document) == order_id

    def test_by_booking_reference(self, api, auth, paid):
        order_id = order_id_of(paid)
        locator = json_view(api, auth, order_id)["order"]["recordLocator"]
        document = example("OrderRetrieveRQ")
        criteria = document.find(".//c:OrderValidationFilterCriteria", NS)
        criteria.remove(criteria[0])
        booking = etree.SubElement(criteria, cns("BookingRefFilterCriteria"))
        etree.SubElement(booking, cns("BookingID")).text = locator

        answer = xml_of(post(api, "OrderRetrieve", body(document), auth), 200, VIEW)

        assert order_id_of(answer) == order_id

    def test_a_json_order_reads_the_same_in_xml(self, api, auth, priced):
        created = book(api, auth, booking_body(priced))
        assert created.status_code == 201, created.content
        view = created.json()["data"]

        response = post(api, "OrderRetrieve", retrieve_request(view["order"]["orderId"]), auth)

        assert_same_order(xml_of(response, 200, VIEW), view)

    def test_another_sellers_order_is_err_4000(self, api, paid, partner_key, other_seller):
        other = bearer(token_for(api, partner_key.raw, other_seller.pk))

        response = post(api, "OrderRetrieve", retrieve_request(order_id_of(paid)), other)

        fields = error_of(response, 404, "ERR-4000", VIEW)
        assert fields["TagText"].endswith("/OrderFilterCriteria/OrderID")

    def test_a_read_only_key_may_retrieve(self, api, paid, read_only_key):
        read_only = bearer(token_for(api, read_only_key.raw))

        response = post(api, "OrderRetrieve", retrieve_request(order_id_of(paid)), read_only)

        assert order_id_of(xml_of(response, 200, VIEW)) == order_id_of(paid)
