"""The RS written as text (ndc/xml.py, ndc/presenters.py) is the document lxml wrote for
the same data, byte for byte: the reference files under data/ were rendered by the
element-by-element lxml presenters this code replaced, from the JSON views beside them."""

import json
import re
from decimal import Decimal
from pathlib import Path

import orjson
import pytest
from lxml import etree

from airline.fares.terms import BundleTerms
from ndc import presenters, xml
from tests.ndc.conftest import valid

DATA = Path(__file__).parent / "data"
TIMESTAMP = re.compile(rb"<cns:Timestamp>[^<]*</cns:Timestamp>")

# NOFLEX and NICE have terms; NICER and NICEST are shown without (no baggage allowance,
# no benefit texts), as a bundle the key may no longer sell would be.
BUNDLES = {
    "NOFLEX": BundleTerms(
        code="NOFLEX",
        name="No Flex",
        cabin="Y",
        supplement=Decimal("0.00"),
        fare_basis_suffix="NF",
        description="Seat & bag for a fee",
        benefits=({"description": "Boards last <group 9>"}, {"code": "no text"}),
        baggage_disclosures=(
            {"ruleTypeCode": "CarryOn", "description": 'Under-seat "personal" item'},
        ),
    ),
    "NICE": BundleTerms(
        code="NICE",
        name="Nice",
        cabin="Y",
        supplement=Decimal("20.00"),
        fare_basis_suffix="NC",
        carry_on_included=True,
        checked_bags_included=1,
        benefits=({"description": "Café at the gate"},),
        baggage_disclosures=(
            {"ruleTypeCode": "CarryOn", "description": "One carry-on"},
            {"ruleTypeCode": "Checked", "description": "1 checked bag, up to 50 lb"},
        ),
    ),
}


def reference(name: str) -> bytes:
    return TIMESTAMP.sub(b"", (DATA / name).read_bytes())


def written(document: bytes) -> bytes:
    valid(etree.fromstring(document))
    return TIMESTAMP.sub(b"", document)


def as_stored(part):
    """A part of the view as the stored offers keep it: ready JSON."""
    return orjson.Fragment(orjson.dumps(part))


class TestTheReferenceRendering:
    def test_air_shopping_rs(self):
        data = json.loads((DATA / "air_shopping_view.json").read_text())

        document = presenters.air_shopping_rs(
            data["view"],
            directions=[tuple(d) for d in data["directions"]],
            bundles=BUNDLES,
            request_id="rq-1",
        )

        assert written(document) == reference("AirShoppingRS.reference.xml")

    def test_air_shopping_rs_from_the_stored_offers_ready_json(self):
        data = json.loads((DATA / "air_shopping_view.json").read_text())
        for offer in data["view"]["offers"]:
            offer["totalPrice"] = as_stored(offer["totalPrice"])
            for item in offer["offerItems"]:
                item["flight"] = as_stored(item["flight"])
                item["totalPrice"] = as_stored(item["totalPrice"])
                for row in item["passengerPrices"]:
                    row["price"] = as_stored(row["price"])

        document = presenters.air_shopping_rs(
            data["view"],
            directions=[tuple(d) for d in data["directions"]],
            bundles=BUNDLES,
            request_id="rq-1",
        )

        assert written(document) == reference("AirShoppingRS.reference.xml")

    def test_offer_price_rs_with_a_price_change(self):
        data = json.loads((DATA / "offer_price_view.json").read_text())
        data["offer"]["previousTotal"]["amount"] = Decimal(
            str(data["offer"]["previousTotal"]["amount"])
        )  # as the service gives it

        document = presenters.offer_price_rs(data, bundles=BUNDLES, request_id=None)

        assert written(document) == reference("OfferPriceRS.reference.xml")

    def test_the_lxml_helpers_append_the_same_elements(self):
        data = json.loads((DATA / "offer_price_view.json").read_text())
        offer = data["offer"]
        journeys = {j["journeyId"]: j for j in data["journeys"]}
        lists = presenters._DataLists(data["pax"], BUNDLES)
        for n, item in enumerate(offer["items"]):
            lists.add_journey(journeys[item["journeyRefIds"][0]], n, item["fare"])
        items = [{**i, "flight": journeys[i["journeyRefIds"][0]]} for i in offer["items"]]

        root = xml.message_root("IATA_OfferPriceRS")
        response = xml.msg_sub(root, "Response")
        lists.write(response)
        xml.append_text(
            xml.sub(response, "PricedOffer"), presenters._offer_text(offer, items, lists)
        )
        price = xml.sub(root, "Price")
        presenters._price(price, offer["totalPrice"])

        text = xml.text_document(
            "IATA_OfferPriceRS",
            xml.msg_node(
                "Response",
                lists.text(),
                xml.node("PricedOffer", presenters._offer_text(offer, items, lists)),
            ),
            xml.node("Price", presenters._price_text(offer["totalPrice"])),
        )
        assert xml.serialize(root) == text


class TestTheTextWriter:
    @pytest.mark.parametrize(
        "value",
        ["plain", "", "a & b < c > d \"e\" 'f'", "line\r\nnext\ttab", "Económica ✈ 𝄞", 3, True],
    )
    def test_an_element_is_written_as_lxml_writes_it(self, value):
        element = etree.Element("root", nsmap=xml.NSMAP)
        xml.sub(element, "Name", value, CurCode=f"U{value}S" if isinstance(value, str) else "X")

        expected = etree.tostring(element, encoding="UTF-8").decode()

        attribute = f"U{value}S" if isinstance(value, str) else "X"
        assert expected.endswith(xml.leaf("Name", value, CurCode=attribute) + "</root>"), expected

    def test_empty_elements_are_self_closed_as_lxml_does(self):
        element = etree.Element("root", nsmap=xml.NSMAP)
        xml.sub(xml.sub(element, "Outer"), "Inner")

        assert (
            etree.tostring(element, encoding="UTF-8")
            .decode()
            .endswith(xml.node("Outer", xml.leaf("Inner", None)) + "</root>")
        )
        assert xml.node("Outer") == "<cns:Outer/>"

    @pytest.mark.parametrize("value", ["nul\x00", "bell\x07", "surrogate\ud800", "\ufffe"])
    def test_a_character_xml_cannot_hold_is_refused_as_lxml_refuses_it(self, value):
        refused = "XML compatible|surrogates not allowed"
        with pytest.raises(ValueError, match=refused):
            xml.sub(etree.Element("root"), "Name", value)
        with pytest.raises(ValueError, match=refused):
            xml.leaf("Name", value)
