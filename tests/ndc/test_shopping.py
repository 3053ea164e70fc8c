"""AirShopping and OfferPrice over NDC/XML (DESIGN.md §9), mapped onto the same services
as POST /json/{v}/offers and /offers/price: the same offers, ids and prices, so an offer
shopped in one channel is priced in the other. Every answer validates against 21.3."""

import re
from datetime import timedelta
from decimal import Decimal

import pytest

from tests.ndc.conftest import NS, air_shopping, ndc_error_of, offer_price, post, texts, xml_of
from tests.offers.conftest import search_body

pytestmark = pytest.mark.django_db

PARTY = [("ADT-1", "ADT"), ("ADT-2", "ADT"), ("CHD-1", "CHD")]
JSON_PARTY = [{"type": t, "paxId": p} for p, t in PARTY]
LOCAL = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$")


def round_trip(day):
    return (("PVD", "CHS", day), ("CHS", "PVD", day + timedelta(days=7)))


def shop_xml(api, auth, day, **kwargs):
    response = post(api, "AirShopping", air_shopping(*round_trip(day), **kwargs), auth)
    return xml_of(response, 200, "IATA_AirShoppingRS")


def shop_json(api, auth, day):
    body = search_body(*round_trip(day), passengers=JSON_PARTY, cabinTypeCode="Y")
    response = api.post("/json/v1/offers", body, format="json", **auth)
    assert response.status_code == 201, response.content
    return response.json()["data"]["offers"]


def xml_offers(document):
    """(OfferID, OfferItemID, origin of its journey, total) of every offer."""
    journeys = {
        j.findtext("c:PaxJourneyID", namespaces=NS): j.findtext("c:PaxSegmentRefID", namespaces=NS)
        for j in document.iterfind(".//c:PaxJourney", NS)
    }
    segment_origin = {
        s.findtext("c:PaxSegmentID", namespaces=NS): s.findtext(
            "c:DatedMarketingSegmentRefId", namespaces=NS
        )
        for s in document.iterfind(".//c:PaxSegment", NS)
    }
    origins = {
        m.findtext("c:DatedMarketingSegmentId", namespaces=NS): m.findtext(
            "c:Dep/c:IATA_LocationCode", namespaces=NS
        )
        for m in document.iterfind(".//c:DatedMarketingSegment", NS)
    }
    rows = []
    for offer in document.iterfind(".//c:CarrierOffers/c:Offer", NS):
        [item] = offer.findall("c:OfferItem", NS)
        journey = item.findtext(".//c:PaxJourneyRefID", namespaces=NS)
        rows.append(
            (
                offer.findtext("c:OfferID", namespaces=NS),
                item.findtext("c:OfferItemID", namespaces=NS),
                origins[segment_origin[journeys[journey]]],
                Decimal(offer.findtext("c:TotalPrice/c:TotalAmount", namespaces=NS)),
            )
        )
    return rows


def one_per_direction(rows):
    chosen = {}
    for offer_id, item_id, origin, _ in rows:
        chosen.setdefault(origin, (offer_id, item_id))
    return [chosen["PVD"], chosen["CHS"]]


class TestAirShopping:
    def test_offers_and_their_data_lists(self, api, auth, network, clock):
        document = shop_xml(api, auth, network)

        rows = xml_offers(document)
        assert {origin for _, _, origin, _ in rows} == {"PVD", "CHS"}
        assert texts(document, ".//c:DataLists/c:PaxList/c:Pax/c:PaxID") == [p for p, _ in PARTY]
        assert texts(document, ".//c:DataLists/c:PaxList/c:Pax/c:PTC") == [t for _, t in PARTY]
        assert texts(document, ".//c:OriginDest/c:OriginDestID") == ["OD1", "OD2"]
        # Every reference resolves inside the document.
        journeys = set(texts(document, ".//c:PaxJourney/c:PaxJourneyID"))
        segments = set(texts(document, ".//c:PaxSegment/c:PaxSegmentID"))
        legs = set(texts(document, ".//c:DatedOperatingLeg/c:DatedOperatingLegID"))
        classes = set(texts(document, ".//c:PriceClass/c:PriceClassID"))
        bags = set(texts(document, ".//c:BaggageAllowance/c:BaggageAllowanceID"))
        assert set(texts(document, ".//c:Offer//c:PaxJourneyRefID")) <= journeys
        assert set(texts(document, ".//c:PaxJourney/c:PaxSegmentRefID")) == segments
        assert set(texts(document, ".//c:FareComponent/c:PaxSegmentRefID")) <= segments
        assert set(texts(document, ".//c:DatedOperatingLegRefID")) == legs
        assert set(texts(document, ".//c:FareComponent/c:PriceClassRefID")) == classes
        assert set(texts(document, ".//c:BaggageAllowanceRefID")) <= bags
        assert classes == {"NOFLEX", "NICE", "NICER"}  # economy only (CabinTypeCode 5)
        # Station-local times without offset; the expiry in UTC.
        times = texts(document, ".//c:AircraftScheduledDateTime")
        assert times
        assert all(LOCAL.match(t) for t in times)
        assert f"{network.isoformat()}T07:00:00" in times  # MX101 leaves PVD at 07:00 local
        expiry = (clock.at + timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
        assert set(texts(document, ".//c:OfferExpirationTimeLimitDateTime")) == {expiry}

    def test_prices_add_up_per_passenger_and_offer(self, api, auth, network):
        document = shop_xml(api, auth, network)

        for offer in document.iterfind(".//c:CarrierOffers/c:Offer", NS):
            total = offer.find("c:TotalPrice", NS)
            assert total.find("c:TotalAmount", NS).get("CurCode") == "USD"
            base = Decimal(total.findtext("c:BaseAmount", namespaces=NS))
            taxes = [Decimal(t) for t in texts(total, "c:TaxSummary/c:Tax/c:Amount")]
            assert set(texts(total, "c:TaxSummary/c:Tax/c:TaxCode")) >= {"US", "ZP"}
            assert Decimal(total.findtext("c:TotalAmount", namespaces=NS)) == base + sum(taxes)
            per_pax = sum(
                Decimal(d.findtext("c:Price/c:TotalAmount", namespaces=NS))
                * len(d.findall("c:PaxRefID", NS))
                for d in offer.iterfind(".//c:FareDetail", NS)
            )
            assert per_pax == Decimal(total.findtext("c:TotalAmount", namespaces=NS))

    def test_the_same_offers_as_json_for_the_same_search(self, api, auth, network):
        in_json = shop_json(api, auth, network)
        in_xml = xml_offers(shop_xml(api, auth, network))

        assert [
            (o["offerItems"][0]["flight"]["origin"], o["totalPrice"]["total"]["amount"])
            for o in in_json
        ] == [(origin, float(total)) for _, _, origin, total in in_xml]
        assert all(re.match(r"^.+\.\d+$", offer_id) for offer_id, *_ in in_xml)

    def test_the_business_cabin_by_its_iata_code(self, api, auth, network):
        response = post(api, "AirShopping", air_shopping(("PVD", "TPA", network), cabin="2"), auth)

        document = xml_of(response, 200, "IATA_AirShoppingRS")
        assert set(texts(document, ".//c:FareComponent/c:CabinType/c:CabinTypeCode")) == {"C"}

    def test_no_flights_is_an_empty_offers_group(self, api, auth, network):
        far = network + timedelta(days=200)  # past the end of the test schedule
        response = post(api, "AirShopping", air_shopping(("PVD", "CHS", far)), auth)

        document = xml_of(response, 200, "IATA_AirShoppingRS")
        assert document.findall(".//c:Offer", NS) == []

    def test_a_market_we_do_not_fly_is_err_1006_at_the_origin_element(self, api, auth, network):
        response = post(api, "AirShopping", air_shopping(("PVD", "LAX", network)), auth)

        fields = ndc_error_of(response, 422, "ERR-1006")
        assert fields["TagText"].endswith("/DestArrivalCriteria/IATA_LocationCode")

    def test_a_passenger_type_we_do_not_sell_is_err_1005_at_the_ptc(self, api, auth, network):
        body = air_shopping(("PVD", "CHS", network), passengers=[("P1", "ADT"), ("P2", "YTH")])

        fields = ndc_error_of(post(api, "AirShopping", body, auth), 422, "ERR-1005")

        assert fields["TagText"] == "/IATA_AirShoppingRQ/Request/PaxList/Pax/PTC"

    def test_two_cabins_in_one_request_is_err_1005(self, api, auth, network):
        body = air_shopping(*round_trip(network)).replace(
            b"<cns:CabinTypeCode>5</cns:CabinTypeCode>",
            b"<cns:CabinTypeCode>2</cns:CabinTypeCode>",
            1,
        )

        fields = ndc_error_of(post(api, "AirShopping", body, auth), 422, "ERR-1005")

        assert "one cabin" in fields["DescText"]


class TestOfferPrice:
    def test_offers_shopped_in_xml_priced_in_xml(self, api, auth, network):
        selections = one_per_direction(xml_offers(shop_xml(api, auth, network)))

        response = post(api, "OfferPrice", offer_price(*selections), auth)

        document = xml_of(response, 200, "IATA_OfferPriceRS")
        priced = document.find(".//c:PricedOffer", NS)
        items = priced.findall("c:OfferItem", NS)
        assert len(items) == 2
        offer_id = priced.findtext("c:OfferID", namespaces=NS)
        assert texts(priced, "c:OfferItem/c:OfferItemID") == [f"{offer_id}.1", f"{offer_id}.2"]
        total = Decimal(priced.findtext("c:TotalPrice/c:TotalAmount", namespaces=NS))
        assert total == sum(Decimal(t) for t in texts(priced, "c:OfferItem/c:Price/c:TotalAmount"))
        assert len(document.findall(".//c:PaxJourney", NS)) == 2
        assert document.findall(".//c:Warning", NS) == []  # nothing moved since the search

    def test_offers_shopped_in_xml_priced_in_json(self, api, auth, network):
        rows = xml_offers(shop_xml(api, auth, network))
        selections = one_per_direction(rows)

        response = api.post(
            "/json/v1/offers/price",
            {
                "selections": [{"offerId": o, "offerItemIds": [i]} for o, i in selections],
                "passengers": JSON_PARTY,
            },
            format="json",
            **auth,
        )

        assert response.status_code == 201, response.content
        shopped = {offer_id: total for offer_id, _, _, total in rows}
        offer = response.json()["data"]["offer"]
        assert offer["priceChanged"] is False
        assert Decimal(repr(offer["totalPrice"]["total"]["amount"])) == sum(
            shopped[o] for o, _ in selections
        )

    def test_offers_shopped_in_json_priced_in_xml(self, api, auth, network):
        chosen = {}
        for offer in shop_json(api, auth, network):
            item = offer["offerItems"][0]
            chosen.setdefault(item["legIndex"], (offer["offerId"], item["offerItemId"], offer))
        selections = [(o, i) for o, i, _ in chosen.values()]

        response = post(api, "OfferPrice", offer_price(*selections), auth)

        document = xml_of(response, 200, "IATA_OfferPriceRS")
        total = Decimal(
            document.findtext(".//c:PricedOffer/c:TotalPrice/c:TotalAmount", namespaces=NS)
        )
        assert total == sum(
            Decimal(repr(o["totalPrice"]["total"]["amount"])) for _, _, o in chosen.values()
        )

    def test_a_price_that_moved_since_the_search_is_a_warning(self, api, auth, network):
        from airline.fares.models import Fare

        selections = one_per_direction(xml_offers(shop_xml(api, auth, network)))
        Fare.objects.update(base_amount=999)
        from airline.fares import reference

        reference.forget()

        response = post(api, "OfferPrice", offer_price(*selections), auth)

        document = xml_of(response, 200, "IATA_OfferPriceRS")
        assert texts(document, ".//m:Response/c:Warning/c:Code".replace("m:Response/", "")) == [
            "PriceChanged"
        ]

    def test_an_unknown_offer_is_err_3000_at_its_offer_ref(self, api, auth, network):
        response = post(api, "OfferPrice", offer_price(("nope.1", "nope.1.1")), auth)

        fields = ndc_error_of(response, 404, "ERR-3000", root="IATA_OfferPriceRS")
        assert fields["TagText"].endswith("/SelectedOffer/OfferRefID")

    def test_an_item_not_on_the_offer_is_err_3002(self, api, auth, network):
        [(offer_id, _), _] = one_per_direction(xml_offers(shop_xml(api, auth, network)))

        response = post(api, "OfferPrice", offer_price((offer_id, "other.9")), auth)

        fields = ndc_error_of(response, 400, "ERR-3002", root="IATA_OfferPriceRS")
        assert fields["TagText"].endswith("/SelectedOfferItem/OfferItemRefID")

    def test_another_party_than_the_shopped_one_is_err_1005(self, api, auth, network):
        selections = one_per_direction(xml_offers(shop_xml(api, auth, network)))

        response = post(
            api, "OfferPrice", offer_price(*selections, passengers=[("ADT-1", "ADT")]), auth
        )

        fields = ndc_error_of(response, 422, "ERR-1005", root="IATA_OfferPriceRS")
        assert fields["TagText"] == "/IATA_OfferPriceRQ/Request/DataLists/PaxList/Pax"

    def test_a_pax_ref_not_in_the_pax_list_is_err_1005(self, api, auth, network):
        body = offer_price(("a.1", "a.1.1")).replace(
            b"<cns:PaxRefID>CHD-1</cns:PaxRefID>", b"<cns:PaxRefID>GHOST</cns:PaxRefID>", 1
        )

        fields = ndc_error_of(
            post(api, "OfferPrice", body, auth), 422, "ERR-1005", "IATA_OfferPriceRS"
        )

        assert "GHOST" in fields["DescText"]

    def test_another_sellers_offer_is_not_found(
        self, api, auth, partner_key, other_seller, network
    ):
        from tests.conftest import bearer, token_for

        selections = one_per_direction(xml_offers(shop_xml(api, auth, network)))
        other = bearer(token_for(api, partner_key.raw, other_seller.pk))

        response = post(api, "OfferPrice", offer_price(*selections), other)

        ndc_error_of(response, 404, "ERR-3000", root="IATA_OfferPriceRS")
