"""IATA_SeatAvailabilityRS and IATA_ServiceListRS from the JSON `data` of the seats and
services endpoints (SPEC.md §2.6; DESIGN.md §9, §11 "Ancillary offers").

The answer's elements (the ALaCarteOffer and its items, the seat maps) are described once,
in the NDC guide (docs/partners/ndc.md, "SeatAvailability and ServiceList").

Every passenger of an item pays the same (the services price per product, bundle and
passenger type, and an item is one product in one bundle for the passengers who may have
it), so an item's first passengerPricing row is its unit price. Seat statuses and
characteristics are SEAT_STATUS and SEAT_CHARACTERISTICS (PADIS 9825).
"""

import re
from decimal import Decimal
from typing import Any

from django.conf import settings
from lxml import etree

from airline.fares import ancillaries
from ndc import xml
from ndc.errors import payload_attributes
from ndc.xml import amount, sub

Json = dict[str, Any]

# JSON unit availability (SPEC.md §2.6) -> OccupationStatusCode (PADIS 9865 style):
# F free, O occupied (another passenger holds it), Z blocked by the airline, R restricted
# (another cabin than the one booked, or not for anyone of this party, e.g. an exit row).
SEAT_STATUS = {"Open": "F", "Reserved": "O", "Blocked": "Z", "Restricted": "R"}
# JSON seat properties -> PADIS 9825 seat characteristics (W window, A aisle, 9 centre,
# E exit row, L leg space); others (PREMIUM) are passed as they are.
SEAT_CHARACTERISTICS = {
    "WINDOW": "W",
    "AISLE": "A",
    "MIDDLE": "9",
    "EXIT": "E",
    "LEGROOM": "L",
}
_DESIGNATOR = re.compile(r"^(\d+)([A-Z]+)$")


def seat_availability_rs(
    data: Json, *, travellers: list[tuple[str, str]], request_id: str | None
) -> bytes:
    """The JSON seat maps (`data` of POST .../seats) as IATA_SeatAvailabilityRS."""
    root = xml.message_root("IATA_SeatAvailabilityRS")
    response = xml.msg_sub(root, "Response")
    items: dict[str, Json] = {}
    definitions: dict[str, Json] = {}
    for seat_map in data["legSeatMaps"]:
        for unit in _units(seat_map):
            product = ancillaries.seat_product(unit["group"])
            code = product.code if product is not None else f"SEAT-{unit['group']}"
            name = product.name if product is not None else f"Seat ({unit['group']})"
            for row in unit.get("passengerPricing", []):
                definition = f"SVC-{code}"
                definitions.setdefault(
                    definition, {"code": code, "name": name, "descriptions": ["Seat"]}
                )
                item = items.setdefault(
                    row["offerItemId"],
                    {
                        "definition": definition,
                        "segment": seat_map["segmentRefId"],
                        "journey": None,
                        "rows": {},
                    },
                )
                item["rows"][row["paxRefId"]] = row
    _a_la_carte(response, data["offerId"], items)
    _data_lists(response, travellers, definitions)
    for seat_map in data["legSeatMaps"]:
        _seat_map(sub(response, "SeatMap"), seat_map)
    payload_attributes(root, request_id)
    return xml.serialize(root)


def service_list_rs(
    data: Json, *, travellers: list[tuple[str, str]], request_id: str | None
) -> bytes:
    """The JSON service list (`data` of POST .../services) as IATA_ServiceListRS."""
    root = xml.message_root("IATA_ServiceListRS")
    response = xml.msg_sub(root, "Response")
    items: dict[str, Json] = {}
    definitions: dict[str, Json] = {}
    for service in data["services"]:
        definition = f"SVC-{service['serviceCode']}"
        descriptions = [service["type"]]
        if service.get("requires"):
            descriptions.append(f"Requires {service['requires']}")
        definitions[definition] = {
            "code": service["serviceCode"],
            "name": service["name"],
            "descriptions": descriptions,
            "ssr": service["ssrCode"],
            "rfisc": service["feeCode"],
        }
        for availability in service["segmentAvailability"]:
            for row in availability["passengerPricing"]:
                item = items.setdefault(
                    row["offerItemId"],
                    {
                        "definition": definition,
                        "segment": availability.get("segmentRefId"),
                        "journey": availability.get("journeyRefId"),
                        "rows": {},
                    },
                )
                item["rows"][row["paxRefId"]] = row
    _a_la_carte(response, data["offerId"], items)
    _data_lists(response, travellers, definitions)
    payload_attributes(root, request_id)
    return xml.serialize(root)


def _a_la_carte(response: etree._Element, offer_id: str, items: dict[str, Json]) -> None:
    """ALaCarteOffer: the JSON ancillary offer and its items (none: no element, as a
    key that may sell no seats gets maps without prices)."""
    if not items:
        return
    owner = settings.AIRLINE_DESIGNATOR
    offer = sub(response, "ALaCarteOffer")
    sub(offer, "OfferID", offer_id)
    for item_id, item in items.items():
        element = sub(offer, "OfferItem")
        eligibility = sub(element, "Eligibility")
        flights = sub(eligibility, "OfferFlightAssociations")
        if item["journey"]:
            sub(sub(flights, "PaxJourneyRef"), "PaxJourneyRefID", item["journey"])
        else:
            sub(sub(flights, "PaxSegmentReferences"), "PaxSegmentRefID", item["segment"])
        for pax_id in item["rows"]:
            sub(eligibility, "PaxRefID", pax_id)
        sub(element, "OfferItemID", item_id)
        sub(element, "OwnerCode", owner)
        service = sub(element, "Service")
        sub(service, "ServiceDefinitionRefID", item["definition"])
        sub(service, "ServiceID", f"{item_id}.SRV")
        _unit_price(sub(element, "UnitPrice"), next(iter(item["rows"].values())))
    sub(offer, "OwnerCode", owner)


def _unit_price(element: etree._Element, row: Json) -> None:
    """One passenger's price of an item (SPEC.md §2.6 passengerPricing row)."""
    currency = row["currency"]
    base = Decimal(repr(row["amount"]))
    tax = Decimal(repr(row["taxAmount"]))
    amount(element, "BaseAmount", {"amount": base, "currency": currency})
    if tax:
        summary = sub(element, "TaxSummary")
        amount(summary, "TotalTaxAmount", {"amount": tax, "currency": currency})
    amount(element, "TotalAmount", {"amount": base + tax, "currency": currency})


def _data_lists(
    response: etree._Element,
    travellers: list[tuple[str, str]],
    definitions: dict[str, Json],
) -> None:
    """PaxList (the party the answer is for) and ServiceDefinitionList (each product
    offered: code, name, type, SSR code, fee code as RFISC)."""
    lists = sub(response, "DataLists")
    if travellers:
        pax_list = sub(lists, "PaxList")
        for pax_id, ptc in travellers:
            pax = sub(pax_list, "Pax")
            sub(pax, "PaxID", pax_id)
            sub(pax, "PTC", ptc)
    if definitions:
        owner = settings.AIRLINE_DESIGNATOR
        definition_list = sub(lists, "ServiceDefinitionList")
        for definition_id, definition in definitions.items():
            element = sub(definition_list, "ServiceDefinition")
            if definition.get("ssr"):
                instructions = sub(element, "BookingInstructions")
                sub(sub(instructions, "SpecialService"), "SpecialServiceCode", definition["ssr"])
            for description in definition["descriptions"]:
                sub(sub(element, "Desc"), "DescText", description)
            sub(element, "Name", definition["name"])
            sub(element, "OwnerCode", owner)
            if definition.get("rfisc"):
                sub(element, "RFISC", definition["rfisc"])
            sub(element, "ServiceCode", definition["code"])
            sub(element, "ServiceDefinitionID", definition_id)
    if len(lists) == 0:
        response.remove(lists)


def _units(seat_map: Json):
    for deck in seat_map["decks"]:
        for compartment in deck["compartments"]:
            yield from compartment["units"]


def _seat_map(element: etree._Element, seat_map: Json) -> None:
    for deck in seat_map["decks"]:
        for compartment in deck["compartments"]:
            _compartment(sub(element, "CabinCompartment"), deck["number"], compartment)
    sub(element, "PaxSegmentRefID", seat_map["segmentRefId"])


def _compartment(element: etree._Element, deck: int, compartment: Json) -> None:
    rows: dict[int, list[tuple[str, Json]]] = {}
    columns: dict[str, list[str]] = {}
    for unit in compartment["units"]:
        match = _DESIGNATOR.match(unit["designator"])
        if match is None:
            continue
        row, column = int(match[1]), match[2]
        rows.setdefault(row, []).append((column, unit))
        columns.setdefault(column, [p for p in unit["properties"] if p in _POSITIONS])
    sub(sub(element, "CabinType"), "CabinTypeCode", compartment["designator"])
    sub(element, "DeckCode", "Main" if deck == 1 else "Upper")
    if rows:
        sub(element, "FirstRowNumber", min(rows))
        sub(element, "LastRowNumber", max(rows))
    for column in sorted(columns):
        column_element = sub(element, "SeatColumn")
        sub(column_element, "ColumnID", column)
        for position in columns[column]:
            sub(column_element, "SeatCharacteristicCode", SEAT_CHARACTERISTICS[position])
    for row in sorted(rows):
        row_element = sub(element, "SeatRow")
        sub(row_element, "RowNumber", row)
        for column, unit in rows[row]:
            seat = sub(row_element, "Seat")
            sub(seat, "ColumnID", column)
            sub(
                seat,
                "OccupationStatusCode",
                SEAT_STATUS.get(unit["availability"], unit["availability"]),
            )
            pricing = unit.get("passengerPricing", [])
            for item_id in dict.fromkeys(r["offerItemId"] for r in pricing):
                sub(seat, "OfferItemRefID", item_id)
            sub(seat, "RowNumber", row)
            for prop in unit["properties"]:
                sub(seat, "SeatCharacteristicCode", SEAT_CHARACTERISTICS.get(prop, prop))


_POSITIONS = ("WINDOW", "MIDDLE", "AISLE")
