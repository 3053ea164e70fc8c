"""OrderCreate, OrderRetrieve and OrderChange over NDC/XML (DESIGN.md §9), on the same
services as POST /json/{v}/orders, GET and PATCH /json/{v}/orders/{orderId}: every
answer is an IATA_OrderViewRS valid against its 21.3 schema (conftest.xml_of), and
shows the order the JSON view shows — the same ids, locator, total and tickets."""

from datetime import timedelta
from decimal import Decimal

import pytest
from lxml import etree

from orders.models import Channel, Order, OrderFee, OrderStatus, Passenger
from tests.conftest import bearer, token_for
from tests.ndc.conftest import (
    CNS,
    NS,
    example,
    ndc_error_of,
    pay_amount,
    post,
    texts,
    valid,
    xml_of,
)
from tests.orders.conftest import CARD, book, booking_body, price_offer

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
    return pay_amount(document, priced["offer"]["totalPrice"]["total"]["amount"])


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

        ndc_error_of(response, 403, "ERR-8001", VIEW)

    def test_a_bad_card_number_is_err_1005_at_its_element(self, api, auth, priced):
        document = create_request(priced)
        document.find(".//c:CardNumber", NS).text = "4111111111111112"

        fields = ndc_error_of(post(api, "OrderCreate", body(document), auth), 422, "ERR-1005", VIEW)

        assert fields["TagText"].endswith("/PaymentMethod/PaymentCard/CardNumber")
        assert not Order.objects.exists()

    def test_an_unknown_card_brand_is_err_6001(self, api, auth, priced):
        document = create_request(priced)
        document.find(".//c:CardBrandCode", NS).text = "ZZ"

        fields = ndc_error_of(post(api, "OrderCreate", body(document), auth), 422, "ERR-6001", VIEW)

        assert fields["TagText"].endswith("/PaymentCard/CardBrandCode")

    def test_an_offline_payment_is_a_payment_method_not_taken(self, api, auth, priced):
        document = create_request(priced)
        method = document.find(".//c:PaymentMethod", NS)
        method.remove(method[0])
        offline = etree.SubElement(method, cns("OfflinePayment"))
        etree.SubElement(offline, cns("PaymentTypeCode")).text = "CA"

        ndc_error_of(post(api, "OrderCreate", body(document), auth), 422, "ERR-6000", VIEW)

    def test_a_voucher_is_airline_credit(self, api, auth, priced):
        """Its VoucherID is the credit code: one no order issued is refused as credit."""
        document = create_request(priced)
        method = document.find(".//c:PaymentMethod", NS)
        method.remove(method[0])
        etree.SubElement(etree.SubElement(method, cns("Voucher")), cns("VoucherID")).text = "V1"

        fields = ndc_error_of(post(api, "OrderCreate", body(document), auth), 400, "ERR-6002", VIEW)

        assert "airline credit" in fields["DescText"]
        assert not Order.objects.exists()

    def test_a_malformed_email_is_err_1004(self, api, auth, priced):
        document = create_request(priced)
        document.find(".//c:ContactInfo/c:EmailAddress/c:EmailAddressText", NS).text = "nope"

        fields = ndc_error_of(post(api, "OrderCreate", body(document), auth), 400, "ERR-1004", VIEW)

        assert fields["TagText"].endswith("/ContactInfo/EmailAddress/EmailAddressText")

    def test_a_gender_other_than_m_or_f_is_err_1005(self, api, auth, priced):
        document = create_request(priced)
        document.find(".//c:Pax/c:Individual/c:GenderCode", NS).text = "X"

        fields = ndc_error_of(post(api, "OrderCreate", body(document), auth), 422, "ERR-1005", VIEW)

        assert fields["TagText"] == (
            "/IATA_OrderCreateRQ/Request/DataLists/PaxList/Pax[1]/Individual/GenderCode"
        )

    def test_a_passenger_not_priced_is_err_4001(self, api, auth, priced):
        document = create_request(priced)
        document.find(".//c:Pax[3]/c:PaxID", NS).text = "CHD-9"

        fields = ndc_error_of(post(api, "OrderCreate", body(document), auth), 400, "ERR-4001", VIEW)

        assert fields["TagText"].endswith("/DataLists/PaxList/Pax/PaxID")

    def test_an_unknown_offer_is_err_3000(self, api, auth, priced):
        document = create_request(priced)
        document.find(".//c:SelectedPricedOffer/c:OfferRefID", NS).text = "nope.1"

        fields = ndc_error_of(post(api, "OrderCreate", body(document), auth), 404, "ERR-3000", VIEW)

        assert fields["TagText"].endswith("/SelectedPricedOffer/OfferRefID")

    def test_a_booking_without_contact_is_err_1005(self, api, auth, priced):
        document = create_request(priced)
        lists = document.find(".//c:DataLists", NS)
        lists.remove(lists.find("c:ContactInfoList", NS))
        for ref in document.iterfind(".//c:Pax/c:ContactInfoRefID", NS):
            ref.getparent().remove(ref)

        fields = ndc_error_of(post(api, "OrderCreate", body(document), auth), 422, "ERR-1005", VIEW)

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

    def test_a_fee_shows_its_emd_as_a_standalone_document(self, api, auth, paid):
        order_id = order_id_of(paid)
        pax = json_view(api, auth, order_id)["pax"][0]["paxId"]
        renamed = api.patch(
            f"/json/v1/orders/{order_id}",
            {
                "changes": [
                    {
                        "type": "UpdatePassenger",
                        "passengerId": pax,
                        "patch": {"name": {"surname": "Byron"}},
                    }
                ],
                "payment": CARD,
            },
            format="json",
            **auth,
        )
        assert renamed.status_code == 200, renamed.content
        [fee] = renamed.json()["data"]["fees"]

        document = xml_of(post(api, "OrderRetrieve", retrieve_request(order_id), auth), 200, VIEW)

        [emd] = [
            info
            for info in document.iterfind("m:Response/c:TicketDocInfo", NS)
            if info.findtext("c:Ticket/c:TicketDocTypeCode", namespaces=NS) == "Y"
        ]
        assert emd.findtext("c:PaxRefID", namespaces=NS) == pax
        assert emd.findtext("c:Ticket/c:TicketNumber", namespaces=NS) == fee["emdNumber"]
        coupon = emd.find("c:Ticket/c:Coupon", NS)
        assert coupon.findtext("c:RFISC", namespaces=NS) == "NCF"
        value = Decimal(coupon.findtext("c:ValueAmount", namespaces=NS))
        assert value == money(fee["amount"]["amount"]) > 0
        row = OrderFee.objects.get(order__order_id=order_id)
        assert (row.emd_number, row.code, row.amount) == (fee["emdNumber"], "NCF", value)
        assert_same_order(document, json_view(api, auth, order_id))

    def test_another_sellers_order_is_err_4000(self, api, paid, partner_key, other_seller):
        other = bearer(token_for(api, partner_key.raw, other_seller.pk))

        response = post(api, "OrderRetrieve", retrieve_request(order_id_of(paid)), other)

        fields = ndc_error_of(response, 404, "ERR-4000", VIEW)
        assert fields["TagText"].endswith("/OrderFilterCriteria/OrderID")

    def test_a_read_only_key_may_retrieve(self, api, paid, read_only_key):
        read_only = bearer(token_for(api, read_only_key.raw))

        response = post(api, "OrderRetrieve", retrieve_request(order_id_of(paid)), read_only)

        assert order_id_of(xml_of(response, 200, VIEW)) == order_id_of(paid)


# --- OrderChange --------------------------------------------------------------------------


@pytest.fixture
def hold(api, auth, priced):
    """An order created in XML on hold: its OrderViewRS."""
    response = post(api, "OrderCreate", body(create_request(priced, pay=False)), auth)
    return xml_of(response, 200, VIEW)


def change_request(order_id: str, *, pay: bool = False, amount=None) -> etree._Element:
    """The example OrderChangeRQ for `order_id`, without its payment unless `pay` (of
    `amount`: what is due)."""
    document = example("OrderChangeRQ")
    for ref in document.iterfind(".//c:OrderID", NS):
        ref.text = order_id
    document.find(".//c:OrderRefID", NS).text = order_id
    if not pay:
        request = document.find("m:Request", NS)
        request.remove(request.find("c:PaymentFunctions", NS))
    elif amount is not None:
        pay_amount(document, amount)
    return document


def due_of(document: etree._Element) -> Decimal:
    """What an OrderViewRS's order still owes: its total, less what was paid."""
    order = document.find("m:Response/c:Order", NS)
    total = Decimal(order.findtext("c:TotalPrice/c:TotalAmount", namespaces=NS))
    paid = sum(
        Decimal(a)
        for a in texts(document, "m:PaymentFunctions/c:PaymentProcessingSummary/c:Amount")
    )
    return total - paid


def choose(document: etree._Element, name: str) -> etree._Element:
    """A ChangeOrderChoice/`name` element, first in the Request."""
    choice = etree.Element(cns("ChangeOrderChoice"))
    document.find("m:Request", NS).insert(0, choice)
    return etree.SubElement(choice, cns(name))


def data_lists(document: etree._Element) -> etree._Element:
    """The Request's DataLists, after ChangeOrderChoice and before Order."""
    request = document.find("m:Request", NS)
    lists = etree.Element(cns("DataLists"))
    request.find("c:Order", NS).addprevious(lists)
    return lists


def change(api, auth, document: etree._Element, status: int = 200) -> etree._Element:
    return xml_of(post(api, "OrderChange", body(document), auth), status, VIEW)


def sub(parent: etree._Element, name: str, value: str | None = None) -> etree._Element:
    element = etree.SubElement(parent, cns(name))
    if value is not None:
        element.text = value
    return element


class TestOrderChange:
    def test_a_hold_is_confirmed_with_a_card(self, api, auth, hold):
        order_id = order_id_of(hold)

        document = change(api, auth, change_request(order_id, pay=True, amount=due_of(hold)))

        view = json_view(api, auth, order_id)
        assert view["order"]["statusCode"] == OrderStatus.CONFIRMED
        assert view["tickets"]
        assert_same_order(document, view)
        assert not document.findall(".//c:PaymentTimeLimitDateTime", NS)

    def test_a_seat_from_seat_availability_is_bought(self, api, auth, hold):
        from tests.ndc.test_ancillaries import a_la_carte, order_request, xml_seats

        order_id = order_id_of(hold)
        seats = xml_of(
            post(api, "SeatAvailability", order_request("SeatAvailabilityRQ", order_id), auth), 200
        )
        offer_id, items = a_la_carte(seats)
        ada = json_view(api, auth, order_id)["pax"][0]["paxId"]
        (segment, designator), (_, refs) = next(
            (key, value)
            for key, value in xml_seats(seats).items()
            if value[0] == "F" and any(ada in items[i]["pax"] for i in value[1])
        )
        [item_id] = [i for i in refs if ada in items[i]["pax"]]
        document = change_request(order_id)
        offer = sub(choose(document, "AcceptSelectedQuotedOfferList"), "SelectedPricedOffer")
        sub(offer, "OfferRefID", offer_id)
        sub(offer, "OwnerCode", "MX")
        item = sub(offer, "SelectedOfferItem")
        sub(item, "OfferItemRefID", item_id)
        sub(item, "PaxRefID", ada)
        seat = sub(item, "SelectedSeat")
        sub(seat, "ColumnID", designator[-1])
        sub(seat, "SeatRowNumber", designator[:-1])

        answer = change(api, auth, document)

        view = json_view(api, auth, order_id)
        [bought] = [s for s in view["services"] if s.get("attributes", {}).get("seat")]
        assert bought["attributes"]["seat"] == designator
        assert bought["segmentRefId"] == segment
        assert_same_order(answer, view)
        [on_leg] = answer.findall(".//c:OrderServiceAssociation/c:SeatOnLeg", NS)
        assert on_leg.findtext("c:Seat/c:RowNumber", namespaces=NS) == designator[:-1]
        assert on_leg.findtext(".//c:PaxSegmentRefID", namespaces=NS) == segment
        # On hold the seat commits unpaid: the balance grew (SPEC.md §3).
        assert view["order"]["statusCode"] == OrderStatus.ONHOLD

    def test_a_paid_order_is_cancelled_journey_by_journey(self, api, auth, paid):
        order_id = order_id_of(paid)
        items = [i["itemId"] for i in json_view(api, auth, order_id)["order"]["items"]]
        document = change_request(order_id)
        cancel = choose(document, "CancelUnpaidOrder")
        sub(cancel, "OrderRefID", order_id)
        sub(cancel, "OwnerCode", "MX")
        selected = sub(cancel, "SelectedOrderItem")
        for item_id in items:  # the No Flex bundle cancels whole reservations only
            sub(selected, "OrderItemRefID", item_id)

        answer = change(api, auth, document)

        view = json_view(api, auth, order_id)
        assert view["order"]["statusCode"] == OrderStatus.CANCELLED
        assert {i["statusCode"] for i in view["order"]["items"]} == {"CANCELLED"}
        assert_same_order(answer, view)
        assert set(texts(answer, ".//c:TicketDocInfo//c:CouponStatusCode")) == {
            t["statusCode"] for t in view["tickets"]
        }

    def test_one_journey_of_a_no_flex_order_is_err_4002(self, api, auth, paid):
        order_id = order_id_of(paid)
        outbound = json_view(api, auth, order_id)["order"]["items"][0]["itemId"]
        document = change_request(order_id)
        cancel = choose(document, "CancelUnpaidOrder")
        sub(cancel, "OrderRefID", order_id)
        sub(cancel, "OwnerCode", "MX")
        sub(sub(cancel, "SelectedOrderItem"), "OrderItemRefID", outbound)

        fields = ndc_error_of(post(api, "OrderChange", body(document), auth), 400, "ERR-4002", VIEW)

        assert fields["TagText"].endswith("/SelectedOrderItem/OrderItemRefID")

    def test_a_passenger_and_the_contact_are_updated(self, api, auth, paid):
        order_id = order_id_of(paid)
        view = json_view(api, auth, order_id)
        child = view["pax"][2]["paxId"]
        document = change_request(order_id)
        update = choose(document, "UpdatePax")
        sub(sub(update, "Current"), "PaxRefID", child)
        sub(sub(update, "New"), "PaxRefID", child)
        lists = data_lists(document)
        contact = sub(sub(lists, "ContactInfoList"), "ContactInfo")
        sub(contact, "ContactInfoID", "CTC-NEW")
        sub(sub(contact, "EmailAddress"), "EmailAddressText", "charles@example.com")
        person = sub(contact, "Individual")
        sub(person, "GivenName", "Charles")
        sub(person, "Surname", "Babbage")
        pax = sub(sub(lists, "PaxList"), "Pax")
        sub(pax, "CitizenshipCountryCode", "GB")
        sub(sub(pax, "Individual"), "Surname", "King")  # the same name: no rename fee
        pax.find("c:Individual", NS).insert(0, etree.Element(cns("GenderCode")))
        pax.find("c:Individual/c:GenderCode", NS).text = "F"
        sub(pax, "PaxID", child)

        answer = change(api, auth, document)

        after = json_view(api, auth, order_id)
        [updated] = [p for p in after["pax"] if p["paxId"] == child]
        assert updated["nationality"] == "GB"
        assert updated["gender"] == "Female"
        assert after["contacts"][0]["emailAddress"] == "charles@example.com"
        assert after["contacts"][0]["name"] == {"givenName": "Charles", "surname": "Babbage"}
        assert_same_order(answer, after)
        [xml_pax] = [
            p
            for p in answer.iterfind(".//c:PaxList/c:Pax", NS)
            if p.findtext("c:PaxID", namespaces=NS) == child
        ]
        assert xml_pax.findtext("c:CitizenshipCountryCode", namespaces=NS) == "GB"

    def test_a_hold_is_cancelled(self, api, auth, hold):
        order_id = order_id_of(hold)
        document = change_request(order_id)
        cancel = choose(document, "CancelUnpaidOrder")
        sub(cancel, "OrderRefID", order_id)
        sub(cancel, "OwnerCode", "MX")

        answer = change(api, auth, document)

        view = json_view(api, auth, order_id)
        assert view["order"]["statusCode"] == OrderStatus.CANCELLED
        assert_same_order(answer, view)

    def test_a_paid_order_is_not_an_unpaid_one_err_4002(self, api, auth, paid):
        order_id = order_id_of(paid)
        document = change_request(order_id)
        cancel = choose(document, "CancelUnpaidOrder")
        sub(cancel, "OrderRefID", order_id)
        sub(cancel, "OwnerCode", "MX")

        fields = ndc_error_of(post(api, "OrderChange", body(document), auth), 400, "ERR-4002", VIEW)

        assert fields["TagText"] == "/IATA_OrderChangeRQ/Request/ChangeOrderChoice"

    def test_a_journey_not_on_the_order_is_err_4006(self, api, auth, paid):
        order_id = order_id_of(paid)
        document = change_request(order_id)
        cancel = choose(document, "CancelUnpaidOrder")
        sub(cancel, "OrderRefID", order_id)
        sub(cancel, "OwnerCode", "MX")
        sub(sub(cancel, "SelectedOrderItem"), "OrderItemRefID", "OOI-NOPE")

        fields = ndc_error_of(post(api, "OrderChange", body(document), auth), 400, "ERR-4006", VIEW)

        assert fields["TagText"].endswith("/SelectedOrderItem/OrderItemRefID")

    def test_a_bad_card_is_err_1005_at_its_element(self, api, auth, hold):
        document = change_request(order_id_of(hold), pay=True, amount=due_of(hold))
        document.find(".//c:ExpirationDate", NS).text = "0120"

        fields = ndc_error_of(post(api, "OrderChange", body(document), auth), 422, "ERR-1005", VIEW)

        assert fields["TagText"].endswith("/PaymentCard/ExpirationDate")
        assert Order.objects.get().status == OrderStatus.ONHOLD

    def test_a_read_only_key_is_err_8001(self, api, hold, read_only_key):
        read_only = bearer(token_for(api, read_only_key.raw))
        document = change_request(order_id_of(hold), pay=True, amount=due_of(hold))

        ndc_error_of(post(api, "OrderChange", body(document), read_only), 403, "ERR-8001", VIEW)

    def test_another_sellers_order_is_err_4000(self, api, hold, partner_key, other_seller):
        other = bearer(token_for(api, partner_key.raw, other_seller.pk))
        document = change_request(order_id_of(hold), pay=True, amount=due_of(hold))

        fields = ndc_error_of(
            post(api, "OrderChange", body(document), other), 404, "ERR-4000", VIEW
        )

        assert fields["TagText"] == "/IATA_OrderChangeRQ/Request/Order/OrderID"
        assert Order.objects.get().status == OrderStatus.ONHOLD


class TestAcceptCancelledOffer:
    def test_the_quoted_cancellation_cancels_every_journey(self, api, auth, paid):
        order_id = order_id_of(paid)
        document = change_request(order_id)
        cancel = choose(document, "AcceptCancelledOffer")
        sub(cancel, "OfferID", order_id)
        sub(cancel, "OwnerCode", "MX")

        answer = change(api, auth, document)

        view = json_view(api, auth, order_id)
        assert view["order"]["statusCode"] == OrderStatus.CANCELLED
        assert {i["statusCode"] for i in view["order"]["items"]} == {"CANCELLED"}
        assert_same_order(answer, view)

    def test_an_offer_id_other_than_the_order_is_err_1005_at_it(self, api, auth, paid):
        order_id = order_id_of(paid)
        document = change_request(order_id)
        cancel = choose(document, "AcceptCancelledOffer")
        sub(cancel, "OfferID", "OFR-NOTTHIS")
        sub(cancel, "OwnerCode", "MX")

        fields = ndc_error_of(post(api, "OrderChange", body(document), auth), 422, "ERR-1005", VIEW)

        assert fields["TagText"].endswith("/ChangeOrderChoice/AcceptCancelledOffer/OfferID")
        assert Order.objects.get(order_id=order_id).status == OrderStatus.CONFIRMED
