"""IATA_OrderViewRS from the JSON order view (SPEC.md §2.5; DESIGN.md §9, §11): the answer
of OrderCreate, OrderRetrieve and OrderChange, rendered from the very `data` that
POST /json/{v}/orders, GET and PATCH /json/{v}/orders/{orderId} answer, so ids, the
record locator, prices and tickets are the JSON ones.

Where each JSON part goes is described once, in the NDC guide (docs/partners/ndc.md, "OrderCreate,
OrderRetrieve, OrderChange").
"""

from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal
from typing import Any

from lxml import etree

from airline.network.services import station_zone
from ndc import xml
from ndc.errors import payload_attributes
from ndc.xml import amount, sub

Json = dict[str, Any]
CANCELLED = "CANCELLED"


def order_view_rs(data: Json, *, request_id: str | None) -> bytes:
    """The JSON order view (`data`, read back as plain JSON) as IATA_OrderViewRS."""
    root = xml.message_root("IATA_OrderViewRS")
    response = xml.msg_sub(root, "Response")
    write_data_lists(sub(response, "DataLists"), data)
    write_order(sub(response, "Order"), data)
    for ticket in ticket_doc_infos(data):
        response.append(ticket)
    payload_attributes(root, request_id)
    for payment in data["payments"]:
        write_payment(xml.msg_sub(root, "PaymentFunctions"), payment, data["order"]["orderId"])
    return xml.serialize(root)


# --- Order ---------------------------------------------------------------------------


def write_order(element: etree._Element, data: Json) -> None:
    order = data["order"]
    owner = order["ownerCode"]
    sub(element, "CreationDateTime", order["creationDateTime"])
    sub(element, "OrderID", order["orderId"])
    segments_of = {j["journeyId"]: j["segments"] for j in data["journeys"]}
    for item in order["items"]:
        _flight_item(sub(element, "OrderItem"), item, order, segments_of)
    by_item: dict[str, list[Json]] = {}
    for service in data["services"]:
        by_item.setdefault(service["itemId"], []).append(service)
    legs_of = {
        j["journeyId"]: [leg["legId"] for s in j["segments"] for leg in s["legs"]]
        for j in data["journeys"]
    }
    for item_id, services in by_item.items():
        _service_item(sub(element, "OrderItem"), item_id, services, owner, legs_of)
    sub(element, "OwnerCode", owner)
    sub(element, "StatusCode", order["statusCode"])
    _price(sub(element, "TotalPrice"), order["totalPrice"])


def _flight_item(
    element: etree._Element, item: Json, order: Json, segments_of: dict[str, list[Json]]
) -> None:
    fare = item["fare"]
    wanted = set(item["segmentRefIds"])
    segments = [s for ss in segments_of.values() for s in ss if s["segmentId"] in wanted]
    detail = sub(element, "FareDetail")
    for segment in segments:
        component = sub(detail, "FareComponent")
        cabin = sub(component, "CabinType")
        sub(cabin, "CabinTypeCode", segment["cabinTypeCode"])
        if fare.get("cabinName"):
            sub(cabin, "CabinTypeName", fare["cabinName"])
        if fare.get("fareBasisCode"):
            sub(component, "FareBasisCode", fare["fareBasisCode"])
        sub(component, "PaxSegmentRefID", segment["segmentId"])
        if fare.get("priceClassRefId"):
            sub(component, "PriceClassRefID", fare["priceClassRefId"])
        sub(sub(component, "RBD"), "RBD_Code", segment["rbd"])
    for pax_id in item["paxRefIds"]:
        sub(detail, "PaxRefID", pax_id)
    sub(element, "OrderItemID", item["itemId"])
    sub(element, "OwnerCode", order["ownerCode"])
    if order.get("paymentTimeLimit") and item["statusCode"] != CANCELLED:
        sub(element, "PaymentTimeLimitDateTime", order["paymentTimeLimit"])
    _price(sub(element, "Price"), item["totalPrice"])
    for segment in segments:
        for pax_id in item["paxRefIds"]:
            service = sub(element, "Service")
            booking = sub(service, "BookingRef")
            carrier = sub(sub(booking, "BookingEntity"), "Carrier")
            sub(carrier, "AirlineDesigCode", order["ownerCode"])
            sub(booking, "BookingID", order["recordLocator"])
            association = sub(service, "OrderServiceAssociation")
            sub(sub(association, "PaxSegmentRef"), "PaxSegmentRefID", segment["segmentId"])
            sub(service, "PaxRefID", pax_id)
            sub(service, "ServiceID", f"{item['itemId']}-{pax_id}-{segment['segmentId']}")
            sub(service, "StatusCode", item["statusCode"])
    sub(element, "StatusCode", item["statusCode"])


def _service_item(
    element: etree._Element,
    item_id: str,
    services: list[Json],
    owner: str,
    legs_of: dict[str, list[str]],
) -> None:
    sub(element, "OrderItemID", item_id)
    sub(element, "OwnerCode", owner)
    live = [s for s in services if s["statusCode"] != CANCELLED] or services
    currency = services[0]["totalPrice"]["total"]["currency"]
    total = sum((_decimal(s["totalPrice"]["total"]["amount"]) for s in live), Decimal())
    if len(services) == 1:
        _price(sub(element, "Price"), services[0]["totalPrice"])
    else:
        amount(sub(element, "Price"), "TotalAmount", {"amount": total, "currency": currency})
    for service in services:
        _service(sub(element, "Service"), service, legs_of)
    status = CANCELLED if all(s["statusCode"] == CANCELLED for s in services) else "CONFIRMED"
    sub(element, "StatusCode", status)


def _service(element: etree._Element, service: Json, legs_of: dict[str, list[str]]) -> None:
    """One JSON service: a seat on its segment, or a product on its segment or journey."""
    sub(element, "DescText", service["name"])
    association = sub(element, "OrderServiceAssociation")
    seat = (service.get("attributes") or {}).get("row")
    if seat and service.get("segmentRefId"):
        on_leg = sub(association, "SeatOnLeg")
        seat_element = sub(on_leg, "Seat")
        sub(seat_element, "ColumnID", service["attributes"]["column"])
        sub(seat_element, "RowNumber", service["attributes"]["row"])
        assignment = sub(on_leg, "SeatAssignmentAssociations")
        sub(sub(assignment, "PaxSegmentRef"), "PaxSegmentRefID", service["segmentRefId"])
    else:
        definition = sub(association, "ServiceDefinitionRef")
        if service.get("segmentRefId"):
            flights = sub(definition, "OrderFlightAssociations")
            sub(sub(flights, "PaxSegmentRef"), "PaxSegmentRefID", service["segmentRefId"])
        elif legs_of.get(service.get("journeyRefId")):
            flights = sub(definition, "OrderFlightAssociations")
            legs = sub(flights, "DatedOperatingLegRef")
            for leg_id in legs_of[service["journeyRefId"]]:
                sub(legs, "DatedOperatingLegRefID", leg_id)
        sub(definition, "ServiceDefinitionRefID", _definition_id(service))
    sub(element, "PaxRefID", service["paxRefId"])
    sub(element, "ServiceID", service["serviceId"])
    sub(element, "StatusCode", service["statusCode"])


# --- DataLists ------------------------------------------------------------------------


def write_data_lists(lists: etree._Element, data: Json) -> None:
    journeys = data["journeys"]
    segments = [s for j in journeys for s in j["segments"]]
    legs = [leg for s in segments for leg in s["legs"]]

    contacts = sub(lists, "ContactInfoList")
    for contact in data["contacts"]:
        _contact(
            sub(contacts, "ContactInfo"),
            contact["contactId"],
            email=contact.get("emailAddress"),
            phones=[p["number"] for p in contact.get("phoneNumbers", [])],
            name=contact.get("name"),
            address=contact.get("postalAddress"),
        )
    for pax in data["pax"]:
        own = pax.get("contacts")
        if own:
            _contact(
                sub(contacts, "ContactInfo"),
                _pax_contact_id(pax),
                email=own.get("emailAddress"),
                phones=[own["phoneNumber"]] if own.get("phoneNumber") else [],
                name=None,
                address=None,
            )

    marketing = sub(lists, "DatedMarketingSegmentList")
    for s in segments:
        element = sub(marketing, "DatedMarketingSegment")
        _point(element, "Arrival", s["destination"], s["arrivalDateTime"])
        sub(element, "CarrierDesigCode", s["marketingCarrier"])
        sub(element, "DatedMarketingSegmentId", _marketing_id(s))
        sub(element, "DatedOperatingSegmentRefId", _operating_id(s))
        _point(element, "Dep", s["origin"], s["departureDateTime"])
        sub(element, "MarketingCarrierFlightNumberText", s["marketingFlightNumber"])

    operating_legs = sub(lists, "DatedOperatingLegList")
    for leg in legs:
        element = sub(operating_legs, "DatedOperatingLeg")
        _point(element, "Arrival", leg["destination"], leg["arrivalDateTime"])
        sub(element, "DatedOperatingLegID", leg["legId"])
        _point(element, "Dep", leg["origin"], leg["departureDateTime"])
        if leg.get("aircraftTypeCode"):
            sub(sub(element, "IATA_AircraftType"), "IATA_AircraftTypeCode", leg["aircraftTypeCode"])

    operating = sub(lists, "DatedOperatingSegmentList")
    for s in segments:
        element = sub(operating, "DatedOperatingSegment")
        # The order's flights are the airline's own: operated as marketed.
        sub(element, "CarrierDesigCode", s["marketingCarrier"])
        for leg in s["legs"]:
            sub(element, "DatedOperatingLegRefID", leg["legId"])
        sub(element, "DatedOperatingSegmentId", _operating_id(s))
        sub(element, "OperatingCarrierFlightNumberText", s["marketingFlightNumber"])

    pax_journeys = sub(lists, "PaxJourneyList")
    for journey in journeys:
        element = sub(pax_journeys, "PaxJourney")
        sub(element, "Duration", journey["duration"])
        sub(element, "PaxJourneyID", journey["journeyId"])
        for s in journey["segments"]:
            sub(element, "PaxSegmentRefID", s["segmentId"])

    pax_list = sub(lists, "PaxList")
    carriers = {p["infantRefId"]: p["paxId"] for p in data["pax"] if p.get("infantRefId")}
    for pax in data["pax"]:
        _pax(sub(pax_list, "Pax"), pax, carriers.get(pax["paxId"]))

    pax_segments = sub(lists, "PaxSegmentList")
    for s in segments:
        element = sub(pax_segments, "PaxSegment")
        choice = sub(element, "CabinTypeAssociationChoice")
        sub(sub(choice, "SegmentCabinType"), "CabinTypeCode", s["cabinTypeCode"])
        sub(element, "DatedMarketingSegmentRefId", _marketing_id(s))
        sub(element, "MarketingCarrierRBD_Code", s["rbd"])
        sub(element, "PaxSegmentID", s["segmentId"])

    definitions = sub(lists, "ServiceDefinitionList")
    owner = data["order"]["ownerCode"]
    for definition_id, service in {_definition_id(s): s for s in data["services"]}.items():
        element = sub(definitions, "ServiceDefinition")
        sub(sub(element, "Desc"), "DescText", service["category"])
        sub(element, "Name", service["name"])
        sub(element, "OwnerCode", owner)
        sub(element, "ServiceCode", service["code"])
        sub(element, "ServiceDefinitionID", definition_id)

    for container in list(lists):  # 21.3 lists hold at least one entry, or are absent
        if len(container) == 0:
            lists.remove(container)


def _contact(
    element: etree._Element,
    contact_id: str,
    *,
    email: str | None,
    phones: Iterable[str],
    name: Json | None,
    address: Json | None,
) -> None:
    sub(element, "ContactInfoID", contact_id)
    if email:
        sub(sub(element, "EmailAddress"), "EmailAddressText", email)
    if name and name.get("surname"):
        individual = sub(element, "Individual")
        if name.get("givenName"):
            sub(individual, "GivenName", name["givenName"])
        sub(individual, "Surname", name["surname"])
    for number in phones:
        sub(sub(element, "Phone"), "PhoneNumber", number)
    if address:
        _postal_address(sub(element, "PostalAddress"), address)


def _postal_address(element: etree._Element, address: Json) -> None:
    if address.get("city"):
        sub(element, "CityName", address["city"])
    if address.get("countryCode"):
        sub(element, "CountryCode", address["countryCode"])
    if address.get("stateProvince"):
        sub(element, "CountrySubDivisionName", address["stateProvince"])
    if address.get("postalCode"):
        sub(element, "PostalCode", address["postalCode"])
    for line in (address.get("line1"), address.get("line2")):
        if line:
            sub(element, "StreetText", line)


GENDER_CODES = {"Male": "M", "Female": "F"}


def _pax(element: etree._Element, pax: Json, carried_by: str | None) -> None:
    if pax.get("dateOfBirth"):
        sub(element, "Birthdate", pax["dateOfBirth"])
    if pax.get("nationality"):
        sub(element, "CitizenshipCountryCode", pax["nationality"])
    if pax.get("contacts"):
        sub(element, "ContactInfoRefID", _pax_contact_id(pax))
    for document in pax.get("travelDocuments") or []:
        doc = sub(element, "IdentityDoc")
        if document.get("nationality"):
            sub(doc, "CitizenshipCountryCode", document["nationality"])
        if document.get("expiryDate"):
            sub(doc, "ExpiryDate", document["expiryDate"])
        sub(doc, "IdentityDocID", document["documentNumber"])
        sub(doc, "IdentityDocTypeCode", document["documentType"])
        if document.get("issuingCountry"):
            sub(doc, "IssuingCountryCode", document["issuingCountry"])
        sub(doc, "Surname", pax["name"]["surname"])
    individual = sub(element, "Individual")
    if pax.get("gender") in GENDER_CODES:
        sub(individual, "GenderCode", GENDER_CODES[pax["gender"]])
    sub(individual, "GivenName", pax["name"]["givenName"])
    sub(individual, "Surname", pax["name"]["surname"])
    loyalty = pax.get("loyaltyProgram")
    if loyalty:
        account = sub(element, "LoyaltyProgramAccount")
        if loyalty.get("accountNumber"):
            sub(account, "AccountNumber", loyalty["accountNumber"])
        program = sub(account, "LoyaltyProgram")
        if loyalty.get("programCode"):
            sub(program, "ProgramCode", loyalty["programCode"])
        if loyalty.get("tierLevel"):
            sub(account, "TierCode", loyalty["tierLevel"])
    sub(element, "PaxID", pax["paxId"])
    if carried_by:
        sub(element, "PaxRefID", carried_by)  # 21.3: an infant names the adult carrying it
    sub(element, "PTC", pax["ptc"])
    if pax.get("residenceCountry"):
        sub(element, "ResidenceCountryCode", pax["residenceCountry"])


# --- Tickets, EMDs and payments ----------------------------------------------------------


def ticket_doc_infos(data: Json) -> list[etree._Element]:
    by_number: dict[str, list[Json]] = {}
    for row in data["tickets"]:
        by_number.setdefault(row["ticketNumber"], []).append(row)
    documents = []
    for number, coupons in by_number.items():
        info = etree.Element(xml.c("TicketDocInfo"))
        sub(info, "PaxRefID", coupons[0]["paxRefId"])
        # 21.3 allows four coupons per Ticket: longer trips continue in conjunction.
        for start in range(0, len(coupons), 4):
            ticket = sub(info, "Ticket")
            for row in coupons[start : start + 4]:
                coupon = sub(ticket, "Coupon")
                sub(coupon, "CouponNumber", row["couponNumber"])
                sub(coupon, "CouponStatusCode", row["statusCode"])
                if row.get("segmentRefId"):
                    sub(sub(coupon, "SoldAirlineInfo"), "PaxSegmentRefID", row["segmentRefId"])
            sub(ticket, "ReportingTypeCode", "Airline")
            sub(ticket, "TicketDocTypeCode", "T")
            sub(ticket, "TicketNumber", number)
        documents.append(info)
    for service in data["services"]:
        if not service.get("emdNumber"):
            continue
        info = etree.Element(xml.c("TicketDocInfo"))
        sub(info, "PaxRefID", service["paxRefId"])
        ticket = sub(info, "Ticket")
        coupon = sub(ticket, "Coupon")
        sub(coupon, "CouponNumber", 1)
        sub(coupon, "ServiceRefID", service["serviceId"])
        if service.get("segmentRefId"):
            sub(sub(coupon, "SoldAirlineInfo"), "PaxSegmentRefID", service["segmentRefId"])
        sub(ticket, "ReportingTypeCode", "Airline")
        sub(ticket, "TicketDocTypeCode", "J")  # EMD associated with the flight
        sub(ticket, "TicketNumber", service["emdNumber"])
        documents.append(info)
    lead = data["pax"][0]["paxId"] if data["pax"] else None
    for fee in data.get("fees", []):
        if fee.get("emdNumber") and (fee.get("paxRefId") or lead):
            documents.append(_fee_emd(fee, fee.get("paxRefId") or lead))
    return documents


def _fee_emd(fee: Json, pax_id: str) -> etree._Element:
    """A fee's EMD (JSON `fees[]`): a standalone EMD (`Y`, no flight coupon), its one
    coupon the fee's code and value, consumed when issued. A fee of the whole party
    (a change fee, a cancellation penalty) is in the lead passenger's name."""
    info = etree.Element(xml.c("TicketDocInfo"))
    sub(info, "PaxRefID", pax_id)
    ticket = sub(info, "Ticket")
    coupon = sub(ticket, "Coupon")
    sub(coupon, "ConsumedAtIssuanceInd", "true")
    sub(coupon, "CouponNumber", 1)
    sub(coupon, "RemarkText", f"{fee['type']} {fee['feeId']}")
    sub(coupon, "RFIC", "D")  # financial impact
    sub(coupon, "RFISC", fee["code"])
    sub(coupon, "RFISC_Desc", fee["description"])
    amount(coupon, "ValueAmount", fee["amount"])
    sub(ticket, "ReportingTypeCode", "Airline")
    sub(ticket, "TicketDocTypeCode", "Y")  # EMD standalone
    sub(ticket, "TicketNumber", fee["emdNumber"])
    return info


def write_payment(element: etree._Element, payment: Json, order_id: str) -> None:
    sub(sub(element, "OrderAssociation"), "OrderRefID", order_id)
    summary = sub(element, "PaymentProcessingSummary")
    amount(summary, "Amount", payment["amount"])
    sub(summary, "PaymentID", payment["paymentId"])
    method = payment["method"]
    chosen = sub(summary, "PaymentProcessingSummaryPaymentMethod")
    if method["type"] == "CreditCard":
        card = sub(chosen, "PaymentCard")
        sub(card, "CardBrandCode", method["cardType"])
        sub(card, "MaskedCardID", method["maskedNumber"])
    elif method["type"] == "Credit":
        sub(sub(chosen, "Voucher"), "VoucherID", method["creditCode"])
    else:
        offline = sub(chosen, "OfflinePayment")
        sub(offline, "PaymentTypeCode", method["type"])
    sub(summary, "PaymentStatusCode", payment["statusCode"])


# --- Small parts ------------------------------------------------------------------------


def _price(element: etree._Element, price: Json) -> None:
    """SPEC.md §1 Price as PriceType: BaseAmount, Fee, TaxSummary, TotalAmount."""
    amount(element, "BaseAmount", price["base"])
    for fee in price["fees"]:
        fee_element = sub(element, "Fee")
        amount(fee_element, "Amount", fee["amount"])
        label = " ".join(filter(None, (fee["type"], fee.get("code"), fee.get("description"))))
        sub(fee_element, "DescText", label)
    if price["taxes"]:
        summary = sub(element, "TaxSummary")
        for tax in price["taxes"]:
            tax_element = sub(summary, "Tax")
            amount(tax_element, "Amount", tax["amount"])
            if tax.get("description"):
                sub(tax_element, "DescText", tax["description"])
            if tax.get("code"):
                sub(tax_element, "TaxCode", tax["code"])
        total_tax = sum((_decimal(t["amount"]["amount"]) for t in price["taxes"]), Decimal())
        currency = price["total"]["currency"]
        amount(summary, "TotalTaxAmount", {"amount": total_tax, "currency": currency})
    amount(element, "TotalAmount", price["total"])


def _point(parent: etree._Element, name: str, station: str, local: str) -> None:
    point = sub(parent, name)
    sub(point, "AircraftScheduledDateTime", with_offset(local, station))
    sub(point, "IATA_LocationCode", station)


def with_offset(local: str, station: str) -> str:
    """A JSON station-local time (no offset) with the station's UTC offset at that time."""
    return datetime.fromisoformat(local).replace(tzinfo=station_zone(station)).isoformat()


def _decimal(value: Any) -> Decimal:
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def _definition_id(service: Json) -> str:
    return f"SVC-{service['code']}"


def _pax_contact_id(pax: Json) -> str:
    return f"{pax['paxId']}-CTC"


def _marketing_id(segment: Json) -> str:
    return "MKT" + segment["segmentId"].removeprefix("SEG")


def _operating_id(segment: Json) -> str:
    return "OPS" + segment["segmentId"].removeprefix("SEG")
