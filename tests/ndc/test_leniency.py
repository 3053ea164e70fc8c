"""NDC as lenient as 21.3 and as strict as money (issue 25, items 12-16): what 21.3 leaves
optional is optional here, the codes integrators send are understood, every field error
of a request comes back at once, a payment for the order does not turn a change into
ConfirmHold, an amount other than the one due is refused, and a message of another NDC
version is told which one is served. Every answer validates against its 21.3 schema."""

from datetime import timedelta
from decimal import Decimal

import pytest
from lxml import etree

from orders.models import Order, OrderStatus, Passenger, Service
from tests.ndc.conftest import NS, example, offer_price, pay_amount, post, texts, xml_of
from tests.ndc.test_ancillaries import a_la_carte, order_request
from tests.ndc.test_orders import (
    VIEW,
    body,
    change,
    change_request,
    choose,
    cns,
    create_request,
    due_of,
    json_view,
    order_id_of,
    sub,
)
from tests.ndc.test_shopping import one_per_direction, shop_xml, xml_offers
from tests.orders.conftest import CARD, book, booking_body, price_offer

pytestmark = pytest.mark.django_db


@pytest.fixture
def priced(api, auth, network, clock):
    day = network + timedelta(days=5)
    return price_offer(api, auth, day, back=day + timedelta(days=7))


@pytest.fixture
def paid(api, auth, priced):
    return xml_of(post(api, "OrderCreate", body(create_request(priced)), auth), 200, VIEW)


@pytest.fixture
def hold(api, auth, priced):
    response = post(api, "OrderCreate", body(create_request(priced, pay=False)), auth)
    return xml_of(response, 200, VIEW)


def errors_of(response, status: int, root: str = VIEW) -> list[dict]:
    """Every Error of an RS, as dicts of their children's texts."""
    document = xml_of(response, status, root)
    return [
        {etree.QName(child).localname: child.text for child in error}
        for error in document.findall("m:Error", NS)
    ]


# --- 12. OfferPrice without DataLists/PaxList -------------------------------------------


def test_offer_price_without_a_pax_list_prices_the_party_shopped(api, auth, network):
    selections = one_per_direction(xml_offers(shop_xml(api, auth, network + timedelta(days=5))))
    with_list = etree.fromstring(offer_price(*selections))
    without = etree.fromstring(offer_price(*selections))
    request = without.find("m:Request", NS)
    request.remove(request.find("c:DataLists", NS))

    listed = xml_of(post(api, "OfferPrice", etree.tostring(with_list), auth), 200)
    shopped = xml_of(post(api, "OfferPrice", etree.tostring(without), auth), 200)

    def party_and_total(document):
        offer = document.find(".//c:PricedOffer", NS)
        return (
            sorted(texts(document, ".//c:PaxList/c:Pax/c:PTC")),
            offer.findtext("c:TotalPrice/c:TotalAmount", namespaces=NS),
        )

    assert party_and_total(shopped) == party_and_total(listed)
    assert party_and_total(shopped)[0] == ["ADT", "ADT", "CHD"]


def test_without_a_pax_list_a_pax_ref_not_shopped_is_err_1005(api, auth, network):
    selections = one_per_direction(xml_offers(shop_xml(api, auth, network + timedelta(days=5))))
    document = etree.fromstring(offer_price(*selections))
    request = document.find("m:Request", NS)
    request.remove(request.find("c:DataLists", NS))
    document.find(".//c:SelectedOfferItem/c:PaxRefID", NS).text = "ADT-7"

    [error] = errors_of(post(api, "OfferPrice", etree.tostring(document), auth), 422, None)

    assert error["Code"] == "ERR-1005"
    assert "the shopped offer's passengers" in error["DescText"]
    assert error["TagText"].endswith("/SelectedOffer[1]/SelectedOfferItem/PaxRefID[1]")


# --- 13. OrderCreate: common codes, 21.3's optionality, every error at once -------------


@pytest.mark.parametrize(("code", "stored"), [("PP", "PT"), ("P", "PT"), ("ID", "NI"), ("V", "VI")])
def test_order_create_takes_the_common_document_type_codes(api, auth, priced, code, stored):
    document = create_request(priced)
    document.find(".//c:IdentityDoc/c:IdentityDocTypeCode", NS).text = code

    created = xml_of(post(api, "OrderCreate", body(document), auth), 200, VIEW)

    babbage = Passenger.objects.get(order__order_id=order_id_of(created), offer_pax_id="ADT-2")
    assert babbage.travel_documents[0]["documentType"] == stored


def test_a_postal_address_without_street_text_is_taken(api, auth, priced):
    document = create_request(priced)
    contact = document.find(".//c:ContactInfo", NS)
    address = etree.Element(cns("PostalAddress"))
    contact.find("c:Phone", NS).addnext(address)
    sub(address, "CityName", "Providence")
    sub(address, "CountryCode", "US")

    created = xml_of(post(api, "OrderCreate", body(document), auth), 200, VIEW)

    view = json_view(api, auth, order_id_of(created))
    assert view["contacts"][0]["postalAddress"] == {"city": "Providence", "countryCode": "US"}
    assert texts(created, ".//c:ContactInfo/c:PostalAddress/c:CityName") == ["Providence"]


def test_order_create_reports_every_element_at_fault_at_once(api, auth, priced):
    document = create_request(priced)
    paxes = document.findall(".//c:PaxList/c:Pax", NS)
    paxes[0].find("c:Individual/c:GenderCode", NS).text = "X"
    paxes[1].find("c:IdentityDoc/c:IdentityDocTypeCode", NS).text = "ZZ"
    citizenship = etree.Element(cns("CitizenshipCountryCode"))
    citizenship.text = "usa"
    paxes[2].find("c:Individual", NS).addprevious(citizenship)  # in 21.3's order

    errors = errors_of(post(api, "OrderCreate", body(document), auth), 422)

    assert [e["Code"] for e in errors] == ["ERR-1005"] * 3
    assert [e["TagText"].split("/PaxList/")[1] for e in errors] == [
        "Pax[1]/Individual/GenderCode",
        "Pax[2]/IdentityDoc/IdentityDocTypeCode",
        "Pax[3]/CitizenshipCountryCode",
    ]
    assert not Order.objects.exists()


def test_the_checks_of_names_contact_and_card_are_reported_together(api, auth, priced):
    document = create_request(priced)
    paxes = document.findall(".//c:PaxList/c:Pax", NS)
    paxes[0].find("c:Individual/c:Surname", NS).text = "R2D2"
    paxes[2].find("c:Individual/c:GivenName", NS).text = "4nnabella"
    document.find(".//c:ContactInfo/c:EmailAddress/c:EmailAddressText", NS).text = "nope"
    document.find(".//c:PaymentCard/c:ExpirationDate", NS).text = "0120"

    errors = errors_of(post(api, "OrderCreate", body(document), auth), 422)

    assert [(e["Code"], e["TagText"].rsplit("/", 2)[-2:]) for e in errors] == [
        ("ERR-1005", ["Individual", "Surname"]),
        ("ERR-1005", ["Individual", "GivenName"]),
        ("ERR-1004", ["EmailAddress", "EmailAddressText"]),
        ("ERR-1005", ["PaymentCard", "ExpirationDate"]),
    ]
    assert "ADT-1" in errors[0]["DescText"]
    assert "CHD-1" in errors[1]["DescText"]
    assert not Order.objects.exists()


def test_json_create_order_lists_every_field_error_in_fields(api, auth, priced):
    payload = booking_body(priced, payment={**CARD, "expiryDate": "0120", "securityCode": "1"})
    payload["passengers"][1]["name"]["surname"] = "R2D2"
    payload["contact"]["emailAddress"] = "ada@"

    response = book(api, auth, payload)

    assert response.status_code == 422, response.content
    error = response.json()["error"]
    assert error["code"] == "ERR-1005"
    assert error["path"] == "passengers.name.surname"  # the first, as with one error
    assert set(error["fields"]) == {
        "passengers.name.surname",
        "contact.emailAddress",
        "payment.expiryDate",
        "payment.securityCode",
    }
    assert "4 errors in all" in error["description"]
    assert not Order.objects.exists()


# --- 14. PaymentFunctions with OrderAssociation -----------------------------------------


def test_a_bag_paid_for_the_order_on_a_confirmed_order_is_bought_not_confirm_hold(api, auth, paid):
    order_id = order_id_of(paid)
    services = xml_of(
        post(api, "ServiceList", order_request("ServiceListRQ", order_id), auth),
        200,
        "IATA_ServiceListRS",
    )
    offer_id, items = a_la_carte(services)
    item_id, item = next((ref, i) for ref, i in items.items() if i["total"] > 0)
    # The example OrderChangeRQ as it is (its PaymentFunctions has OrderAssociation),
    # with the bag chosen and the amount it costs.
    document = change_request(order_id, pay=True, amount=item["total"])
    selected = sub(choose(document, "AcceptSelectedQuotedOfferList"), "SelectedPricedOffer")
    sub(selected, "OfferRefID", offer_id)
    sub(selected, "OwnerCode", "MX")
    entry = sub(selected, "SelectedOfferItem")
    sub(entry, "OfferItemRefID", item_id)
    sub(entry, "PaxRefID", item["pax"][0])
    sub(sub(entry, "SelectedALaCarteOfferItem"), "Qty", "1")
    paid_before = Order.objects.get(order_id=order_id).paid
    services_before = Service.objects.filter(order__order_id=order_id).count()

    change(api, auth, document)

    order = Order.objects.get(order_id=order_id)
    assert order.status == OrderStatus.CONFIRMED
    assert order.paid == paid_before + item["total"]
    assert Service.objects.filter(order=order).count() == services_before + 1


def test_the_example_still_confirms_a_hold(api, auth, hold):
    order_id = order_id_of(hold)

    change(api, auth, change_request(order_id, pay=True, amount=due_of(hold)))

    assert Order.objects.get(order_id=order_id).status == OrderStatus.CONFIRMED


# --- 15. The amount paid is the amount due ----------------------------------------------


def test_order_create_with_an_amount_not_due_is_err_6002_naming_the_total(api, auth, priced):
    total = Decimal(str(priced["offer"]["totalPrice"]["total"]["amount"]))
    document = pay_amount(create_request(priced), "0.00")

    [error] = errors_of(post(api, "OrderCreate", body(document), auth), 400)

    assert error["Code"] == "ERR-6002"
    assert f"The amount due is {total:.2f} USD" in error["DescText"]
    assert error["TagText"].endswith("/PaymentFunctions/PaymentProcessingDetails/Amount")
    assert not Order.objects.exists()


def test_order_create_in_another_currency_is_err_6002(api, auth, priced):
    total = priced["offer"]["totalPrice"]["total"]["amount"]
    document = pay_amount(create_request(priced), total, currency="EUR")

    [error] = errors_of(post(api, "OrderCreate", body(document), auth), 400)

    assert error["Code"] == "ERR-6002"
    assert not Order.objects.exists()


def test_confirming_a_hold_for_less_than_due_is_err_6002(api, auth, hold):
    order_id = order_id_of(hold)
    document = change_request(order_id, pay=True, amount=due_of(hold) - Decimal("0.01"))

    [error] = errors_of(post(api, "OrderChange", body(document), auth), 400)

    assert error["Code"] == "ERR-6002"
    assert f"The amount due is {due_of(hold):.2f} USD" in error["DescText"]
    assert Order.objects.get(order_id=order_id).status == OrderStatus.ONHOLD


@pytest.mark.parametrize(
    ("stated", "status", "code"),
    [
        (lambda total: {"amount": 0, "currency": "USD"}, 400, "ERR-6002"),
        (lambda total: {"amount": total, "currency": "EUR"}, 400, "ERR-6002"),
        (lambda total: {"amount": total, "currency": "USD"}, 201, None),
    ],
)
def test_json_payment_amount_must_be_the_amount_due(api, auth, priced, stated, status, code):
    total = priced["offer"]["totalPrice"]["total"]["amount"]
    payload = booking_body(priced, payment={**CARD, "amount": stated(total)})

    response = book(api, auth, payload)

    assert response.status_code == status, response.content
    if code is None:
        assert response.json()["data"]["order"]["statusCode"] == OrderStatus.CONFIRMED
        return
    error = response.json()["error"]
    assert (error["code"], error["path"]) == (code, "payment.amount")
    assert f"The amount due is {Decimal(str(total)):.2f} USD" in error["description"]
    assert not Order.objects.exists()


# --- 16. Another NDC version ------------------------------------------------------------

NDC_19_2 = b"""<?xml version="1.0" encoding="UTF-8"?>
<IATA_AirShoppingRQ xmlns="http://www.iata.org/IATA/2015/00/2019.2/IATA_AirShoppingRQ">
  <PayloadAttributes><VersionNumber>19.2</VersionNumber></PayloadAttributes>
  <Request/>
</IATA_AirShoppingRQ>"""

NDC_17_2 = b"""<?xml version="1.0" encoding="UTF-8"?>
<AirShoppingRQ xmlns="http://www.iata.org/IATA/EDIST/2017.2" Version="17.2">
  <CoreQuery/>
</AirShoppingRQ>"""


@pytest.mark.parametrize(("message", "version"), [(NDC_19_2, "19.2"), (NDC_17_2, "17.2")])
def test_another_ndc_version_is_told_only_21_3_is_served(api, auth, message, version):
    [error] = errors_of(post(api, "AirShopping", message, auth), 422, "IATA_AirShoppingRS")

    assert error["Code"] == "ERR-1005"
    assert "only IATA NDC 21.3 is served" in error["DescText"]
    assert f"this document is NDC {version}" in error["DescText"]


def test_the_examples_are_21_3_messages():
    for name in ("OrderCreateRQ", "OrderChangeRQ", "OfferPriceRQ"):
        assert example(name).findtext("m:PayloadAttributes/c:VersionNumber", namespaces=NS) == (
            "21.3"
        )
