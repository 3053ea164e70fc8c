"""NDC/XML over HTTP: the example requests of ndc/examples/, filled in per test; every
answer checked against IATA's 21.3 schema of its root."""

import functools
from copy import deepcopy
from datetime import date
from decimal import Decimal
from pathlib import Path

from django.conf import settings
from lxml import etree

from tests.offers.conftest import auth, network  # noqa: F401  (fixtures)

MSG = "http://www.iata.org/IATA/2015/EASD/00/IATA_OffersAndOrdersMessage"
CNS = "http://www.iata.org/IATA/2015/EASD/00/IATA_OffersAndOrdersCommonTypes"
NS = {"m": MSG, "c": CNS}
EXAMPLES = Path(settings.BASE_DIR) / "ndc" / "examples"


@functools.cache
def _schema(root: str) -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(str(Path(settings.NDC_SCHEMA_DIR) / f"{root}.xsd")))


def valid(document: etree._Element) -> etree._Element:
    """`document`, after asserting it is valid against the schema of its root."""
    root = etree.QName(document).localname
    schema = _schema(root)
    assert schema.validate(document), [e.message for e in schema.error_log][:5]
    return document


def xml_of(response, status: int = 200, root: str | None = None) -> etree._Element:
    """The answer's document: the status, the content type and the schema checked."""
    assert response.status_code == status, response.content[:2000]
    assert response["Content-Type"].startswith("application/xml"), response["Content-Type"]
    document = valid(etree.fromstring(response.content))
    if root is not None:
        assert document.tag == f"{{{MSG}}}{root}"
    return document


def ndc_error_of(response, status: int, code: str, root: str = "IATA_AirShoppingRS") -> dict:
    """The one Error of an RS, as a dict of its children's texts."""
    document = xml_of(response, status, root)
    [error] = document.findall("m:Error", NS)
    fields = {etree.QName(child).localname: child.text for child in error}
    assert fields["Code"] == code, fields
    assert fields["LangCode"] == "EN"
    return fields


def example(name: str) -> etree._Element:
    return valid(etree.parse(str(EXAMPLES / f"{name}.xml")).getroot())


def air_shopping(*directions: tuple[str, str, date], passengers=None, cabin="5") -> bytes:
    """The example AirShoppingRQ for `directions` (origin, destination, date)."""
    document = example("AirShoppingRQ")
    criteria = document.find(".//c:FlightRequestOriginDestinationsCriteria", NS)
    template = criteria[0]
    for od in list(criteria):
        criteria.remove(od)
    for n, (origin, destination, day) in enumerate(directions, start=1):
        od = deepcopy(template)
        od.find("c:OriginDepCriteria/c:IATA_LocationCode", NS).text = origin
        od.find("c:OriginDepCriteria/c:Date", NS).text = day.isoformat()
        od.find("c:DestArrivalCriteria/c:IATA_LocationCode", NS).text = destination
        od.find("c:OriginDestID", NS).text = f"OD{n}"
        if cabin is None:
            od.remove(od.find("c:CabinType", NS))
        else:
            od.find("c:CabinType/c:CabinTypeCode", NS).text = cabin
        criteria.append(od)
    if passengers is not None:
        _set_pax(document.find(".//c:PaxList", NS), passengers)
    return etree.tostring(valid(document))


def offer_price(*selections: tuple[str, str], passengers=None) -> bytes:
    """The example OfferPriceRQ selecting (offerId, offerItemId) pairs."""
    document = example("OfferPriceRQ")
    offers = document.find(".//c:SelectedOfferList", NS)
    template = offers[0]
    for selected in list(offers):
        offers.remove(selected)
    for offer_id, item_id in selections:
        selected = deepcopy(template)
        selected.find("c:OfferRefID", NS).text = offer_id
        selected.find("c:SelectedOfferItem/c:OfferItemRefID", NS).text = item_id
        offers.append(selected)
    if passengers is not None:
        _set_pax(document.find(".//c:PaxList", NS), passengers)
        for item in document.iterfind(".//c:SelectedOfferItem", NS):
            for ref in item.findall("c:PaxRefID", NS):
                item.remove(ref)
            for pax_id, _ in passengers:
                etree.SubElement(item, f"{{{CNS}}}PaxRefID").text = pax_id
    return etree.tostring(valid(document))


def _set_pax(pax_list: etree._Element, passengers: list[tuple[str, str]]) -> None:
    for pax in list(pax_list):
        pax_list.remove(pax)
    for pax_id, ptc in passengers:
        pax = etree.SubElement(pax_list, f"{{{CNS}}}Pax")
        etree.SubElement(pax, f"{{{CNS}}}PaxID").text = pax_id
        etree.SubElement(pax, f"{{{CNS}}}PTC").text = ptc


def post(api, endpoint: str, body: bytes, headers: dict, content_type="application/xml", **extra):
    return api.generic(
        "POST", f"/ndc/v1/{endpoint}", body, content_type=content_type, **headers, **extra
    )


def pay_amount(document: etree._Element, amount, currency: str = "USD") -> etree._Element:
    """`document` with every PaymentProcessingDetails/Amount set to `amount`: what the
    payment says it pays must be what is due (ERR-6002 otherwise)."""
    for element in document.iterfind(".//c:PaymentProcessingDetails/c:Amount", NS):
        element.text = f"{Decimal(str(amount)):.2f}"
        element.set("CurCode", currency)
    return document


def texts(document: etree._Element, path: str) -> list[str]:
    return [e.text for e in document.iterfind(path, NS)]
