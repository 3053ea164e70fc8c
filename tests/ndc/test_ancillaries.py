"""SeatAvailability and ServiceList over NDC/XML (DESIGN.md §9, §11), mapped onto the
same services as POST /json/{v}/offers/{offerId}/seats and /services and
/orders/{orderId}/seats and /services: the same seats, services and prices, and an
ALaCarteOffer whose ids AcceptOffer (JSON PATCH /orders/{orderId}) buys. Every answer
validates against its 21.3 schema (tests/ndc/conftest.xml_of)."""

from copy import deepcopy
from datetime import timedelta
from decimal import Decimal

import pytest
from lxml import etree

from orders.models import Service
from tests.conftest import bearer, token_for
from tests.ndc.conftest import (
    CNS,
    NS,
    example,
    ndc_error_of,
    offer_price,
    post,
    texts,
    valid,
    xml_of,
)
from tests.ndc.test_shopping import JSON_PARTY, one_per_direction, shop_xml, xml_offers
from tests.orders.conftest import book, booking_body, price_offer
from tests.sellers.factories import ApiKeyFactory

pytestmark = pytest.mark.django_db

CORES = {
    "SeatAvailabilityRQ": "SeatAvailibilityCoreRequest",
    "ServiceListRQ": "ServiceListCoreRequest",
}


def offer_request(name: str, offer_id: str, item_ids: list[str], pax: bool = True) -> bytes:
    """The example SeatAvailabilityRQ or ServiceListRQ for a priced offer's items."""
    document = example(name)
    offer = document.find(".//c:OfferRequest/c:Offer", NS)
    offer.find("c:OfferID", NS).text = offer_id
    template = offer.find("c:OfferItem", NS)
    for item in offer.findall("c:OfferItem", NS):
        offer.remove(item)
    for n, item_id in enumerate(item_ids):
        item = deepcopy(template)
        item.find("c:OfferItemID", NS).text = item_id
        offer.insert(1 + n, item)
    if not pax:
        for element in document.findall(".//c:Pax", NS):
            element.getparent().remove(element)
    return etree.tostring(valid(document))


def order_request(name: str, order_id: str) -> bytes:
    """The example with OrderRequest for `order_id` (the whole order, every passenger)."""
    document = example(name)
    core = document.find(f".//c:{CORES[name]}", NS)
    core.remove(core[0])
    for element in document.findall(".//c:Pax", NS):
        element.getparent().remove(element)
    order = etree.SubElement(etree.SubElement(core, f"{{{CNS}}}OrderRequest"), f"{{{CNS}}}Order")
    etree.SubElement(order, f"{{{CNS}}}OrderID").text = order_id
    etree.SubElement(order, f"{{{CNS}}}OwnerCode").text = "MX"
    return etree.tostring(valid(document))


def priced_in_xml(api, auth, day):
    """AirShopping -> OfferPrice in XML: the priced OfferID and its OfferItemIDs."""
    selections = one_per_direction(xml_offers(shop_xml(api, auth, day)))
    document = xml_of(post(api, "OfferPrice", offer_price(*selections), auth), 200)
    priced = document.find(".//c:PricedOffer", NS)
    return priced.findtext("c:OfferID", namespaces=NS), texts(priced, "c:OfferItem/c:OfferItemID")


def a_la_carte(document) -> tuple[str, dict[str, dict]]:
    """The ALaCarteOffer's id and, per OfferItemID, its passengers, place, service and
    unit price."""
    offer = document.find("m:Response/c:ALaCarteOffer", NS)
    items = {}
    for item in offer.findall("c:OfferItem", NS):
        items[item.findtext("c:OfferItemID", namespaces=NS)] = {
            "pax": texts(item, "c:Eligibility/c:PaxRefID"),
            "segment": item.findtext(".//c:PaxSegmentRefID", namespaces=NS),
            "journey": item.findtext(".//c:PaxJourneyRefID", namespaces=NS),
            "service": item.findtext("c:Service/c:ServiceDefinitionRefID", namespaces=NS),
            "total": Decimal(item.findtext("c:UnitPrice/c:TotalAmount", namespaces=NS)),
            "currency": item.find("c:UnitPrice/c:TotalAmount", NS).get("CurCode"),
        }
    return offer.findtext("c:OfferID", namespaces=NS), items


def xml_seats(document) -> dict[tuple[str, str], tuple[str, list[str]]]:
    """(PaxSegmentRefID, seat) -> (OccupationStatusCode, OfferItemRefIDs) of every seat."""
    seats = {}
    for seat_map in document.iterfind("m:Response/c:SeatMap", NS):
        segment = seat_map.findtext("c:PaxSegmentRefID", namespaces=NS)
        for seat in seat_map.iterfind(".//c:Seat", NS):
            designator = seat.findtext("c:RowNumber", namespaces=NS) + seat.findtext(
                "c:ColumnID", namespaces=NS
            )
            seats[(segment, designator)] = (
                seat.findtext("c:OccupationStatusCode", namespaces=NS),
                texts(seat, "c:OfferItemRefID"),
            )
    return seats


def local(item_id: str, offer_id: str) -> str:
    """An ancillary item id without its offer's id: each answer stores a new offer."""
    assert item_id.startswith(f"{offer_id}.")
    return item_id.removeprefix(offer_id)


def money(value) -> Decimal:
    return Decimal(repr(value)).quantize(Decimal("0.01"))


STATUS = {"Open": "F", "Reserved": "O", "Blocked": "Z", "Restricted": "R"}


class TestOfferSeatsAndServices:
    def test_seat_availability_of_a_priced_offer_is_the_json_seat_map(
        self, api, auth, network, clock
    ):
        offer_id, item_ids = priced_in_xml(api, auth, network)

        response = post(
            api, "SeatAvailability", offer_request("SeatAvailabilityRQ", offer_id, item_ids), auth
        )

        document = xml_of(response, 200, "IATA_SeatAvailabilityRS")
        xml_offer_id, items = a_la_carte(document)
        json_data = api.post(
            f"/json/v1/offers/{offer_id}/seats",
            {"offerItemIds": item_ids, "passengers": JSON_PARTY},
            format="json",
            **auth,
        ).json()["data"]
        json_offer_id = json_data["offerId"]
        # Both are ancillary offers of the same form, each stored under its own id.
        assert xml_offer_id.rsplit(".", 1)[1] == json_offer_id.rsplit(".", 1)[1] == "1"
        json_items, json_seats = {}, {}
        for seat_map in json_data["legSeatMaps"]:
            for deck in seat_map["decks"]:
                for compartment in deck["compartments"]:
                    for unit in compartment["units"]:
                        pricing = unit.get("passengerPricing", [])
                        json_seats[(seat_map["segmentRefId"], unit["designator"])] = (
                            STATUS[unit["availability"]],
                            sorted({local(r["offerItemId"], json_offer_id) for r in pricing}),
                        )
                        for row in pricing:
                            item = json_items.setdefault(
                                local(row["offerItemId"], json_offer_id),
                                {"segment": seat_map["segmentRefId"], "pax": {}},
                            )
                            item["pax"][row["paxRefId"]] = (
                                money(row["amount"]) + money(row["taxAmount"]),
                                row["currency"],
                            )
        assert json_items  # the party may buy seats
        assert {
            local(i, xml_offer_id): {
                "segment": item["segment"],
                "pax": {p: (item["total"], item["currency"]) for p in item["pax"]},
            }
            for i, item in items.items()
        } == json_items
        assert {
            k: (status, sorted(local(i, xml_offer_id) for i in refs))
            for k, (status, refs) in xml_seats(document).items()
        } == json_seats
        # Cabin layout: each compartment's rows and columns, window seats marked.
        compartment = document.find(".//c:SeatMap/c:CabinCompartment", NS)
        assert compartment.findtext("c:CabinType/c:CabinTypeCode", namespaces=NS)
        first = int(compartment.findtext("c:FirstRowNumber", namespaces=NS))
        last = int(compartment.findtext("c:LastRowNumber", namespaces=NS))
        assert first <= last
        assert "W" in texts(compartment, "c:SeatColumn/c:SeatCharacteristicCode")
        assert {i["pax"].__len__() for i in items.values()} <= {1, 2, 3}
        assert texts(document, "m:Response/c:DataLists/c:PaxList/c:Pax/c:PaxID") == [
            "ADT-1",
            "ADT-2",
            "CHD-1",
        ]

    def test_service_list_of_a_priced_offer_is_the_json_service_list(
        self, api, auth, network, clock
    ):
        offer_id, item_ids = priced_in_xml(api, auth, network)

        response = post(
            api, "ServiceList", offer_request("ServiceListRQ", offer_id, item_ids, pax=False), auth
        )

        document = xml_of(response, 200, "IATA_ServiceListRS")
        xml_offer_id, items = a_la_carte(document)
        json_data = api.post(
            f"/json/v1/offers/{offer_id}/services",
            {"offerItemIds": item_ids},
            format="json",
            **auth,
        ).json()["data"]
        json_items = {}
        for service in json_data["services"]:
            for availability in service["segmentAvailability"]:
                for row in availability["passengerPricing"]:
                    item = json_items.setdefault(
                        local(row["offerItemId"], json_data["offerId"]),
                        {
                            "service": f"SVC-{service['serviceCode']}",
                            "segment": availability.get("segmentRefId"),
                            "journey": availability.get("journeyRefId"),
                            "pax": {},
                        },
                    )
                    item["pax"][row["paxRefId"]] = (
                        money(row["amount"]) + money(row["taxAmount"]),
                        row["currency"],
                    )
        assert json_items
        assert {
            local(i, xml_offer_id): {
                "service": item["service"],
                "segment": item["segment"] if not item["journey"] else None,
                "journey": item["journey"],
                "pax": {p: (item["total"], item["currency"]) for p in item["pax"]},
            }
            for i, item in items.items()
        } == json_items
        definitions = {
            d.findtext("c:ServiceDefinitionID", namespaces=NS): d
            for d in document.iterfind(".//c:ServiceDefinition", NS)
        }
        for service in json_data["services"]:
            definition = definitions[f"SVC-{service['serviceCode']}"]
            assert definition.findtext("c:Name", namespaces=NS) == service["name"]
            assert definition.findtext("c:ServiceCode", namespaces=NS) == service["serviceCode"]
            assert (
                definition.findtext(".//c:SpecialServiceCode", namespaces=NS) == service["ssrCode"]
            )
            assert definition.findtext("c:RFISC", namespaces=NS) == service["feeCode"]

    def test_an_unknown_offer_is_err_3000(self, api, auth, network):
        body = offer_request("SeatAvailabilityRQ", "nope.1", ["nope.1.1"])

        fields = ndc_error_of(
            post(api, "SeatAvailability", body, auth), 404, "ERR-3000", "IATA_SeatAvailabilityRS"
        )

        assert fields["TagText"].endswith("/OfferRequest/Offer/OfferID")

    def test_an_item_not_on_the_offer_is_err_3002(self, api, auth, network, clock):
        offer_id, _ = priced_in_xml(api, auth, network)
        body = offer_request("ServiceListRQ", offer_id, ["other.9"])

        fields = ndc_error_of(
            post(api, "ServiceList", body, auth), 400, "ERR-3002", "IATA_ServiceListRS"
        )

        assert fields["TagText"].endswith("/Offer/OfferItem/OfferItemID")

    def test_one_offer_per_request(self, api, auth, network, clock):
        offer_id, item_ids = priced_in_xml(api, auth, network)
        document = etree.fromstring(offer_request("SeatAvailabilityRQ", offer_id, item_ids))
        offer = document.find(".//c:OfferRequest/c:Offer", NS)
        offer.addnext(deepcopy(offer))

        response = post(api, "SeatAvailability", etree.tostring(valid(document)), auth)

        fields = ndc_error_of(response, 422, "ERR-1005", "IATA_SeatAvailabilityRS")
        assert fields["TagText"].endswith("/OfferRequest/Offer[2]")

    @pytest.mark.parametrize(
        ("endpoint", "name"),
        [("SeatAvailability", "SeatAvailabilityRQ"), ("ServiceList", "ServiceListRQ")],
    )
    def test_a_pax_not_on_the_offer_is_err_1005(self, api, auth, network, clock, endpoint, name):
        offer_id, item_ids = priced_in_xml(api, auth, network)
        document = etree.fromstring(offer_request(name, offer_id, item_ids))
        last = document.findall(".//c:Pax", NS)[-1]
        stranger = deepcopy(last)
        stranger.find("c:PaxID", NS).text = "ADT-3"
        stranger.find("c:PTC", NS).text = "ADT"
        last.addnext(stranger)

        response = post(api, endpoint, etree.tostring(valid(document)), auth)

        fields = ndc_error_of(response, 422, "ERR-1005", f"IATA_{endpoint}RS")
        assert fields["TagText"].endswith("/Request/Pax")
        assert "ADT-3 (ADT) is not on it" in fields["DescText"]

    def test_a_key_that_may_not_sell_seats_is_err_8001(
        self, api, partner, default_seller, network, clock
    ):
        key = ApiKeyFactory(partner=partner, allowed_ancillary_categories=["BAGGAGE", "PETS"])
        bags_only = bearer(token_for(api, key.raw))
        offer_id, item_ids = priced_in_xml(api, bags_only, network)

        seats = post(
            api,
            "SeatAvailability",
            offer_request("SeatAvailabilityRQ", offer_id, item_ids),
            bags_only,
        )
        services = post(
            api, "ServiceList", offer_request("ServiceListRQ", offer_id, item_ids), bags_only
        )

        fields = ndc_error_of(seats, 403, "ERR-8001", "IATA_SeatAvailabilityRS")
        assert "may not sell seats (it may sell BAGGAGE, PETS)" in fields["DescText"]
        assert a_la_carte(xml_of(services, 200, "IATA_ServiceListRS"))[1]

    def test_another_sellers_offer_is_err_3000(
        self, api, auth, partner_key, other_seller, network, clock
    ):
        offer_id, item_ids = priced_in_xml(api, auth, network)
        other = bearer(token_for(api, partner_key.raw, other_seller.pk))

        response = post(
            api, "ServiceList", offer_request("ServiceListRQ", offer_id, item_ids), other
        )

        ndc_error_of(response, 404, "ERR-3000", "IATA_ServiceListRS")


@pytest.fixture
def hold(api, auth, network, clock):
    day = network + timedelta(days=5)
    priced = price_offer(api, auth, day, back=day + timedelta(days=7))
    response = book(api, auth, booking_body(priced))
    assert response.status_code == 201, response.content
    return response.json()["data"]


class TestOrderSeatsAndServices:
    def test_a_seat_from_seat_availability_is_bought_with_json_accept_offer(self, api, auth, hold):
        order_id = hold["order"]["orderId"]
        ada = hold["pax"][0]["paxId"]

        response = post(
            api, "SeatAvailability", order_request("SeatAvailabilityRQ", order_id), auth
        )

        document = xml_of(response, 200, "IATA_SeatAvailabilityRS")
        offer_id, items = a_la_carte(document)
        (segment, designator), (_, refs) = next(
            (key, value)
            for key, value in xml_seats(document).items()
            if value[0] == "F" and any(ada in items[i]["pax"] for i in value[1])
        )
        [item_id] = [i for i in refs if ada in items[i]["pax"]]
        assert items[item_id]["segment"] == segment
        changed = api.patch(
            f"/json/v1/orders/{order_id}",
            {
                "changes": [
                    {
                        "type": "AcceptOffer",
                        "offerId": offer_id,
                        "offerItemId": item_id,
                        "passengerIds": [ada],
                        "seat": {"row": int(designator[:-1]), "column": designator[-1]},
                    }
                ]
            },
            format="json",
            **auth,
        )
        assert changed.status_code == 200, changed.content
        seat = Service.objects.get(
            order__order_id=order_id, seat_row__isnull=False, status=Service.Status.ACTIVE
        )
        assert f"{seat.seat_row}{seat.seat_column}" == designator
        # The seat is now taken in the next answer.
        again = xml_of(
            post(api, "SeatAvailability", order_request("SeatAvailabilityRQ", order_id), auth),
            200,
        )
        assert xml_seats(again)[(segment, designator)][0] == "O"

    def test_a_bag_from_service_list_is_bought_with_json_accept_offer(self, api, auth, hold):
        order_id = hold["order"]["orderId"]
        ada = hold["pax"][0]["paxId"]
        journey = hold["journeys"][0]["journeyId"]

        response = post(api, "ServiceList", order_request("ServiceListRQ", order_id), auth)

        document = xml_of(response, 200, "IATA_ServiceListRS")
        offer_id, items = a_la_carte(document)
        [item_id] = [
            i
            for i, item in items.items()
            if item["service"] == "SVC-CB1" and item["journey"] == journey and ada in item["pax"]
        ]
        changed = api.patch(
            f"/json/v1/orders/{order_id}",
            {
                "changes": [
                    {
                        "type": "AcceptOffer",
                        "offerId": offer_id,
                        "offerItemId": item_id,
                        "passengerIds": [ada],
                    }
                ]
            },
            format="json",
            **auth,
        )
        assert changed.status_code == 200, changed.content
        bag = Service.objects.get(
            order__order_id=order_id, code="CB1", passenger__ref=ada, status=Service.Status.ACTIVE
        )
        assert bag.journey.ref == journey
        assert bag.amount + bag.tax == items[item_id]["total"]

    @pytest.mark.parametrize(
        ("endpoint", "name"),
        [("SeatAvailability", "SeatAvailabilityRQ"), ("ServiceList", "ServiceListRQ")],
    )
    def test_another_sellers_order_is_err_4000(
        self, api, hold, partner_key, other_seller, endpoint, name
    ):
        other = bearer(token_for(api, partner_key.raw, other_seller.pk))

        response = post(api, endpoint, order_request(name, hold["order"]["orderId"]), other)

        ndc_error_of(response, 404, "ERR-4000", f"IATA_{endpoint}RS")

    def test_an_unknown_order_is_err_4000(self, api, auth, network):
        response = post(
            api, "SeatAvailability", order_request("SeatAvailabilityRQ", "ORD-NOPE"), auth
        )

        fields = ndc_error_of(response, 404, "ERR-4000", "IATA_SeatAvailabilityRS")
        assert fields["TagText"].endswith("/OrderRequest/Order/OrderID")

    def test_an_order_item_not_on_the_order_is_err_1005(self, api, auth, hold):
        document = etree.fromstring(order_request("ServiceListRQ", hold["order"]["orderId"]))
        order = document.find(".//c:Order", NS)
        item = etree.Element(f"{{{CNS}}}OrderItem")
        etree.SubElement(item, f"{{{CNS}}}OrderItemID").text = "OOI-NOPE"
        etree.SubElement(item, f"{{{CNS}}}OwnerCode").text = "MX"
        order.insert(1, item)

        response = post(api, "ServiceList", etree.tostring(valid(document)), auth)

        fields = ndc_error_of(response, 422, "ERR-1005", "IATA_ServiceListRS")
        assert fields["TagText"].endswith("/OrderRequest/Order/OrderItem/OrderItemID")


def test_a_read_only_key_may_ask_an_orders_seats(api, hold, read_only_key):
    read_only = bearer(token_for(api, read_only_key.raw))
    body = order_request("SeatAvailabilityRQ", hold["order"]["orderId"])

    document = xml_of(post(api, "SeatAvailability", body, read_only), 200)

    assert document.findall("m:Response/c:SeatMap", NS)


def test_seats_of_flights_alone_are_err_1005(api, auth, network):
    document = example("SeatAvailabilityRQ")
    core = document.find(".//c:SeatAvailibilityCoreRequest", NS)
    core.remove(core[0])
    segment = etree.SubElement(
        etree.SubElement(core, f"{{{CNS}}}PaxSegmentRequest"), f"{{{CNS}}}PaxSegment"
    )
    choice = etree.SubElement(segment, f"{{{CNS}}}CabinTypeAssociationChoice")
    etree.SubElement(
        etree.SubElement(choice, f"{{{CNS}}}SegmentCabinType"), f"{{{CNS}}}CabinTypeCode"
    ).text = "Y"
    etree.SubElement(segment, f"{{{CNS}}}DatedMarketingSegmentRefId").text = "MKT-1"
    etree.SubElement(segment, f"{{{CNS}}}PaxSegmentID").text = "SEG-1"

    response = post(api, "SeatAvailability", etree.tostring(valid(document)), auth)

    fields = ndc_error_of(response, 422, "ERR-1005", "IATA_SeatAvailabilityRS")
    assert fields["TagText"].endswith("/SeatAvailibilityCoreRequest/PaxSegmentRequest")
