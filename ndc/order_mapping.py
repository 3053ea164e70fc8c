"""OrderCreateRQ, OrderRetrieveRQ and OrderChangeRQ -> the typed inputs of create order
and change order (orders/requests/inputs.py), the same values the JSON API builds from its bodies
(orders.requests.serializers.create_input / change_input), so both channels meet the same checks
in orders.requests.checks, orders.money.payments, orders.booking and orders.servicing.changes. This
module only reads the 21.3 document: what a value must be beyond its shape is the services' call.

The JSON serializers' shape rules that IATA's schema does not already enforce (a PTC of
ADT/CHD/INF, M/F gender, a two-letter country, the travel document types, the card
fields present) are applied here, as ERR-1005 naming the element's XPath. Errors the
services raise name JSON fields; the *_PATHS tables give their elements.

How each message's elements map is described once, in the NDC guide (docs/partners/ndc.md,
"OrderCreate, OrderRetrieve, OrderChange"), which shows these *_PATHS tables.

It is one module because the three messages share their element readers (Pax, contact,
payment, travel document) and the *_PATHS tables the NDC guide shows; its sections
follow the messages.
"""

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal

from lxml import etree

from airline.api.errors import ApiError, Err, ErrorCollector
from ndc.xml import MSG, c, element_path, refused, text
from orders.requests.inputs import (
    DOCUMENT_TYPE_ALIASES,
    DOCUMENT_TYPES,
    AcceptOffer,
    AcceptReshopOffer,
    AncillaryPick,
    CancelUnpaidOrder,
    CardPayment,
    Change,
    ConfirmHold,
    ContactData,
    CreateOrderInput,
    CreditPayment,
    Hold,
    ItemSelection,
    LoyaltyProgram,
    NameData,
    OtherPayment,
    PassengerData,
    PassengerPatch,
    PaymentData,
    PostalAddress,
    StatedAmount,
    TravelDocument,
    UpdateContact,
    UpdatePassenger,
)

PTCS = ("ADT", "CHD", "INF")
GENDERS = {"M": "Male", "F": "Female"}
# 21.3 leaves IdentityDocTypeCode open ("Examples: PT (Passport)"): the types and their
# aliases are JSON's (orders.requests.inputs), read here in any case.

_CREATE = "/IATA_OrderCreateRQ/Request"
_OFFER = f"{_CREATE}/CreateOrder/AcceptSelectedQuotedOfferList/SelectedPricedOffer"
_PAX = f"{_CREATE}/DataLists/PaxList/Pax"
_CONTACT = f"{_CREATE}/DataLists/ContactInfoList/ContactInfo"
_CARD = f"{_CREATE}/PaymentFunctions/PaymentProcessingDetails/PaymentMethod/PaymentCard"
ORDER_CREATE_PATHS = {
    "offerId": f"{_OFFER}/OfferRefID",
    "offerItemIds": f"{_OFFER}/SelectedOfferItem/OfferItemRefID",
    "offerItemSelections.offerItemId": f"{_OFFER}/SelectedOfferItem/OfferItemRefID",
    "offerItemSelections.passengerIds": f"{_OFFER}/SelectedOfferItem/PaxRefID",
    "ancillaries": f"{_OFFER}/SelectedOfferItem",
    "ancillaries.offerId": f"{_OFFER}/OfferRefID",
    "ancillaries.offerItemId": f"{_OFFER}/SelectedOfferItem/OfferItemRefID",
    "ancillaries.passengerIds": f"{_OFFER}/SelectedOfferItem/PaxRefID",
    "ancillaries.seat": f"{_OFFER}/SelectedOfferItem/SelectedSeat",
    "passengers": _PAX,
    "passengers.passengerId": f"{_PAX}/PaxID",
    "passengers.paxId": f"{_PAX}/PaxID",
    "passengers.type": f"{_PAX}/PTC",
    "passengers.name": f"{_PAX}/Individual",
    "passengers.name.givenName": f"{_PAX}/Individual/GivenName",
    "passengers.name.surname": f"{_PAX}/Individual/Surname",
    "passengers.dateOfBirth": f"{_PAX}/Individual/Birthdate",
    "passengers.infantPassengerId": f"{_PAX}/PaxRefID",
    "passengers.contacts.emailAddress": f"{_CONTACT}/EmailAddress/EmailAddressText",
    "passengers.contacts.phoneNumber": f"{_CONTACT}/Phone/PhoneNumber",
    "contact": _CONTACT,
    "contact.emailAddress": f"{_CONTACT}/EmailAddress/EmailAddressText",
    "contact.phoneNumber": f"{_CONTACT}/Phone/PhoneNumber",
    "contact.name.givenName": f"{_CONTACT}/Individual/GivenName",
    "contact.name.surname": f"{_CONTACT}/Individual/Surname",
    "payment": f"{_CREATE}/PaymentFunctions",
    "payment.type": f"{_CREATE}/PaymentFunctions/PaymentProcessingDetails/PaymentMethod",
    "payment.amount": f"{_CREATE}/PaymentFunctions/PaymentProcessingDetails/Amount",
    "payment.cardType": f"{_CARD}/CardBrandCode",
    "payment.cardNumber": f"{_CARD}/CardNumber",
    "payment.expiryDate": f"{_CARD}/ExpirationDate",
    "payment.securityCode": f"{_CARD}/CardSecurityCode",
}

# OrderRetrieve's one service error (ERR-4000) names the element that named the order
# (ndc.orders.order_retrieve).
ORDER_RETRIEVE_PATHS: dict[str, str] = {}


def request_of(document: etree._Element) -> etree._Element:
    return document.find(f"{{{MSG}}}Request")


# --- OrderCreateRQ ----------------------------------------------------------------------


def create_input(document: etree._Element) -> CreateOrderInput:
    """IATA_OrderCreateRQ -> create order's typed input (as POST /json/{v}/orders).
    Every element at fault is reported at once (one Error each), not one per try."""
    request = request_of(document)
    create = request.find(c("CreateOrder"))
    quoted = create.find(c("AcceptSelectedQuotedOfferList"))
    if quoted is None:
        raise refused(
            create[0],
            "only AcceptSelectedQuotedOfferList is supported: book the OfferPriceRS "
            "PricedOffer (and the ALaCarteOffer items of its seats and services)",
        )
    errors = ErrorCollector()
    offers = quoted.findall(c("SelectedPricedOffer"))
    flight_offer = offers[0]
    item_ids: list[str] = []
    selections: list[ItemSelection] = []
    ancillaries: list[AncillaryPick] = []
    for offer in offers:
        offer_id = text(offer, "OfferRefID")
        for item in offer.findall(c("SelectedOfferItem")):
            with errors.check():
                pick = ancillary_pick(offer_id, item)
                if pick is not None:
                    ancillaries.append(_own_offer(pick) if offer is flight_offer else pick)
                elif offer is flight_offer:
                    _select(item_ids, selections, text(item, "OfferItemRefID"), item)
                else:
                    raise refused(
                        item,
                        "the flights are those of the first SelectedPricedOffer (the priced "
                        "offer); a later one selects seats (SelectedSeat) or services "
                        "(SelectedALaCarteOfferItem)",
                    )
    if not item_ids and not errors.errors:
        errors.add(refused(flight_offer, "select the priced offer's flight items"))
    lists = request.find(c("DataLists"))
    contacts = _contacts(lists)
    booking_contact_id = next(iter(contacts), None)
    contact = None
    if booking_contact_id is None:
        where = lists if lists is not None else request
        errors.add(refused(where, "a ContactInfoList with the booking contact is required"))
    else:
        booking = contacts[booking_contact_id]
        named = _person_of(booking, booking_contact_id, _paxes(lists))
        contact = errors.value(lambda: contact_data(booking, named), None)
    pax_list = lists.find(c("PaxList")) if lists is not None else None
    if pax_list is None:
        errors.add(refused(lists, "a PaxList naming every passenger is required"))
    paxes = pax_list.findall(c("Pax")) if pax_list is not None else []
    carriers = errors.value(lambda: _infant_carriers(paxes), {})
    passengers = []
    for pax in paxes:
        ref = text(pax, "ContactInfoRefID")
        if ref and ref not in contacts:
            errors.add(refused(pax.find(c("ContactInfoRefID")), f"{ref!r} is no ContactInfoID"))
        passengers.append(
            passenger_data(
                pax,
                own_contact=contacts.get(ref or "") if ref != booking_contact_id else None,
                infant_id=carriers.get(text(pax, "PaxID"), ""),
                errors=errors,
            )
        )
    payment = errors.value(lambda: payment_data(request.findall(c("PaymentFunctions"))), Hold())
    errors.raise_any()
    return CreateOrderInput(
        offer_id=text(flight_offer, "OfferRefID"),
        item_ids=item_ids,
        selections=selections,
        passengers=passengers,
        contact=contact,
        payment=payment,
        ancillaries=ancillaries,
        remarks="",
    )


def _select(
    item_ids: list[str], selections: list[ItemSelection], item_id: str, item: etree._Element
) -> None:
    """A flight SelectedOfferItem: an item named again (one SelectedOfferItem per
    passenger, as carriers that price an item per passenger type have partners send)
    adds its passengers to the first."""
    pax = tuple(_texts(item, "PaxRefID"))
    if item_id not in item_ids:
        item_ids.append(item_id)
        selections.append(ItemSelection(item_id, pax))
        return
    n = item_ids.index(item_id)
    known = selections[n].passenger_ids or ()
    selections[n] = ItemSelection(item_id, tuple(dict.fromkeys((*known, *pax))))


def _own_offer(pick: AncillaryPick) -> AncillaryPick:
    """An a-la-carte item inside the priced offer's SelectedPricedOffer (21.3 books the
    PricedOffer as one offer): OfferPrice priced it on a services offer made for the
    priced offer (ndc.a_la_carte), whose item ids are `{offerId}.{n}`
    (offers.ancillaries): it is bought from that offer."""
    offer_id, _, n = pick.offer_item_id.rpartition(".")
    return replace(pick, offer_id=offer_id) if offer_id and n.isdigit() else pick


def ancillary_pick(offer_id: str, item: etree._Element) -> AncillaryPick | None:
    """A SelectedOfferItem that picks a seat or an a-la-carte service (the AcceptOffer
    entry of JSON), or None for a flight or reshop item."""
    seat = item.find(c("SelectedSeat"))
    a_la_carte = item.find(c("SelectedALaCarteOfferItem"))
    if seat is None and a_la_carte is None:
        return None
    if a_la_carte is not None:
        quantity = text(a_la_carte, "Qty")
        if quantity not in ("1", "1.0"):
            raise refused(
                a_la_carte.find(c("Qty")),
                "one of each item per passenger: select another item for another bag",
            )
    picked_seat = None
    if seat is not None:
        row = text(seat, "SeatRowNumber")
        column = text(seat, "ColumnID") or ""
        if not row.isdigit() or not 1 <= int(row) <= 99:
            raise refused(seat.find(c("SeatRowNumber")), "a row number from 1 to 99")
        if len(column) != 1 or not column.isalpha():
            raise refused(seat.find(c("ColumnID")), "a seat column letter")
        picked_seat = (int(row), column.upper())
    return AncillaryPick(
        offer_id=offer_id,
        offer_item_id=text(item, "OfferItemRefID"),
        passenger_ids=tuple(_texts(item, "PaxRefID")),
        seat=picked_seat,
    )


def _contacts(lists: etree._Element | None) -> dict[str, etree._Element]:
    """ContactInfo by ContactInfoID, in document order."""
    if lists is None:
        return {}
    return {
        text(contact, "ContactInfoID"): contact
        for contact in lists.iterfind(f"{c('ContactInfoList')}/{c('ContactInfo')}")
    }


def _infant_carriers(paxes: Iterable[etree._Element]) -> dict[str, str]:
    """Adult PaxID -> the infant they carry: an infant's PaxRefID names its adult, or an
    adult's PaxRefID names its infant (21.3 says only "the accompanying passenger";
    partners send either way, the same pair both ways too)."""
    paxes = list(paxes)
    infants = {text(p, "PaxID") for p in paxes if text(p, "PTC") == "INF"}
    carriers: dict[str, str] = {}
    for pax in paxes:
        ref = text(pax, "PaxRefID")
        if not ref:
            continue
        if text(pax, "PTC") == "INF":
            adult, infant = ref, text(pax, "PaxID")
        elif ref in infants:
            adult, infant = text(pax, "PaxID"), ref
        else:
            continue
        if carriers.get(adult, infant) != infant:
            raise refused(pax.find(c("PaxRefID")), f"{adult} already carries an infant")
        carriers[adult] = infant
    return carriers


def passenger_data(
    pax: etree._Element,
    *,
    own_contact: etree._Element | None,
    infant_id: str,
    errors: ErrorCollector,
) -> PassengerData:
    """One Pax as create order's passenger; what is wrong with it goes to `errors`."""
    ptc = text(pax, "PTC")
    if ptc not in PTCS:
        where = pax.find(c("PTC"))
        errors.add(refused(where if where is not None else pax, f"PTC is one of {', '.join(PTCS)}"))
    individual = pax.find(c("Individual"))
    given_names = _texts(individual, "GivenName")
    if individual is None:
        errors.add(refused(pax, "Individual (GivenName, Surname) is required"))
    elif not given_names:
        errors.add(refused(individual, "GivenName is required"))
    email, phone = ("", "")
    if own_contact is not None:
        email, phone = _email(own_contact), _phone(own_contact)
    documents = [
        errors.value(lambda doc=doc: travel_document(doc), None)
        for doc in pax.findall(c("IdentityDoc"))
    ]
    return PassengerData(
        passenger_id=text(pax, "PaxID"),
        ptc=ptc or "",
        given_name=" ".join(given_names),
        surname=text(individual, "Surname") or "",
        date_of_birth=_date(individual, "Birthdate") or _date(pax, "Birthdate"),
        gender=errors.value(lambda: _gender(individual), "") if individual is not None else "",
        nationality=errors.value(lambda: _country(pax, "CitizenshipCountryCode"), ""),
        residence_country=errors.value(lambda: _country(pax, "ResidenceCountryCode"), ""),
        loyalty_program=errors.value(
            lambda: loyalty_program(pax.find(c("LoyaltyProgramAccount"))), None
        ),
        travel_documents=tuple(d for d in documents if d is not None),
        email=email,
        phone=phone,
        infant_passenger_id=infant_id,
    )


def loyalty_program(account: etree._Element | None) -> LoyaltyProgram | None:
    if account is None:
        return None
    number = text(account, "AccountNumber")
    if not number:
        raise refused(account, "AccountNumber is required")
    return LoyaltyProgram(
        account_number=number,
        program_code=text(account, "LoyaltyProgram", "ProgramCode") or "",
        tier_level=text(account, "TierCode") or "",
    )


def travel_document(doc: etree._Element) -> TravelDocument:
    code = (text(doc, "IdentityDocTypeCode") or "").upper()
    kind = DOCUMENT_TYPE_ALIASES.get(code, code)
    if kind not in DOCUMENT_TYPES:
        aliases = ", ".join(f"{a} ({k})" for a, k in DOCUMENT_TYPE_ALIASES.items())
        raise refused(
            doc.find(c("IdentityDocTypeCode")),
            f"IdentityDocTypeCode is one of {', '.join(DOCUMENT_TYPES)}, or {aliases}",
        )
    return TravelDocument(
        document_type=kind,
        document_number=text(doc, "IdentityDocID"),
        issuing_country=_country(doc, "IssuingCountryCode"),
        nationality=_country(doc, "CitizenshipCountryCode"),
        expiry_date=_date(doc, "ExpiryDate"),
    )


def contact_data(contact: etree._Element, named: etree._Element | None = None) -> ContactData:
    """A ContactInfo as the booking contact (create order's, UpdateContact's). Its name is
    its own `Individual`, else that of `named`: the Pax its IndividualRefID (or a Pax's
    ContactInfoRefID) names, as 21.3 lets a contact name its person."""
    errors = ErrorCollector()
    email = _email(contact)
    if not email:
        errors.add(refused(contact, "EmailAddress/EmailAddressText is required"))
    individual = contact.find(c("Individual"))
    if individual is None and named is not None:
        individual = named.find(c("Individual"))
    address = contact.find(c("PostalAddress"))
    postal = errors.value(lambda: None if address is None else postal_address(address), None)
    errors.raise_any()
    return ContactData(
        email=email,
        phone=_phone(contact),
        given_name=" ".join(_texts(individual, "GivenName")) if individual is not None else "",
        surname=text(individual, "Surname") or "",
        postal_address=postal,
    )


def postal_address(address: etree._Element) -> PostalAddress | None:
    """A PostalAddress with what it holds: every part is optional in 21.3
    (PostalAddressType), so none is required here; None when it holds none we keep."""
    lines = [line for line in _texts(address, "StreetText") if line]
    found = PostalAddress(
        line1=lines[0] if lines else "",
        line2=" ".join(lines[1:]),
        city=text(address, "CityName") or "",
        country_code=_country(address, "CountryCode"),
        state_province=text(address, "CountrySubDivisionName") or "",
        postal_code=text(address, "PostalCode") or "",
    )
    return found if found.wire() else None


def payment_data(functions: list[etree._Element]) -> PaymentData:
    """PaymentFunctions as create order's (or change order's) payment: none is a hold
    (SPEC.md §3); one is a card (PaymentCard) or airline credit (Voucher, its VoucherID
    the credit code); two are airline credit and the card that pays the rest (DESIGN.md
    §11 "Airline credit"). Each Amount (required by 21.3) is what that one pays; together
    they must be what is due (orders.requests.checks.check_amount_stated)."""
    if not functions:
        return Hold()
    if len(functions) > 2:
        raise refused(functions[2], "at most two payments: airline credit and a card")
    paid = [_one_payment(function) for function in functions]
    if len(paid) == 1:
        return paid[0]
    credits = [p for p in paid if isinstance(p, CreditPayment)]
    cards = [p for p in paid if isinstance(p, CardPayment)]
    if len(credits) != 1 or len(cards) != 1:
        raise refused(
            functions[1],
            "two payments are airline credit (Voucher) and a card (PaymentCard) for the rest",
        )
    [credit], [card] = credits, cards
    amount = None
    if credit.amount is not None and card.amount is not None:
        currencies = sorted({credit.amount.currency, card.amount.currency})
        amount = StatedAmount(credit.amount.amount + card.amount.amount, "/".join(currencies))
    return CreditPayment(credit.credit_code, card=replace(card, amount=None), amount=amount)


def _one_payment(function: etree._Element) -> PaymentData:
    details = function.find(c("PaymentProcessingDetails"))
    if details is None:
        raise refused(function, "PaymentProcessingDetails with the PaymentMethod is required")
    paying = payment_method(details)
    amount = details.find(c("Amount"))
    if amount is None or isinstance(paying, OtherPayment):
        return paying
    stated = StatedAmount(Decimal(amount.text.strip()), amount.get("CurCode") or "")
    return replace(paying, amount=stated)


def payment_method(details: etree._Element) -> PaymentData:
    """PaymentProcessingDetails/PaymentMethod: a PaymentCard is a CreditCard payment, a
    Voucher airline credit; another method stays what it is, for the service to refuse
    (ERR-6000)."""
    [method] = details.findall(c("PaymentMethod"))
    chosen = method[0]
    kind = etree.QName(chosen).localname
    if kind == "Voucher":
        return CreditPayment(credit_code=text(chosen, "VoucherID") or "")
    if kind != "PaymentCard":
        return OtherPayment(kind)
    # Missing card fields stay empty: orders.money.payments names each (ERR-1005/6001).
    payer = details.find(c("Payer"))
    given, surname = "", ""
    if payer is not None:
        name = payer.find(f"{c('PayerName')}/{c('IndividualName')}")
        if name is not None:
            given, surname = " ".join(_texts(name, "GivenName")), text(name, "Surname") or ""
    address = chosen.find(c("CardholderAddress"))
    if address is None and payer is not None:
        address = payer.find(f"{c('PaymentAddress')}/{c('PostalAddress')}")
    return CardPayment(
        card_type=text(chosen, "CardBrandCode") or "",
        card_number=text(chosen, "CardNumber") or "",
        expiry_date=text(chosen, "ExpirationDate") or "",
        security_code=text(chosen, "CardSecurityCode") or "",
        payer_given_name=given,
        payer_surname=surname,
        payer_address=None if address is None else postal_address(address),
    )


# --- OrderRetrieveRQ --------------------------------------------------------------------


def retrieve_ref(document: etree._Element) -> tuple[str, str | None, str]:
    """The order OrderRetrieveRQ names (order id or record locator), its owner code and
    the XPath of the element that named it: `OrderFilterCriteria` (OrderID, which may be
    either, as in GET /orders/{orderId}) or `BookingRefFilterCriteria` (BookingID, the
    record locator)."""
    criteria = request_of(document).find(c("OrderValidationFilterCriteria"))
    order = criteria.find(c("OrderFilterCriteria"))
    if order is not None:
        named = order.find(c("OrderID"))
        return text(order, "OrderID"), text(order, "OwnerCode"), element_path(named)
    booking = criteria.find(c("BookingRefFilterCriteria"))
    if booking is not None:
        named = booking.find(c("BookingID"))
        owner = text(booking, "Carrier", "AirlineDesigCode")
        return text(booking, "BookingID"), owner, element_path(named)
    raise refused(
        criteria,
        "name the order: OrderFilterCriteria (OrderID) or BookingRefFilterCriteria "
        "(BookingID, the record locator)",
    )


# --- Small readers ----------------------------------------------------------------------


def _texts(element: etree._Element | None, name: str) -> list[str]:
    if element is None:
        return []
    return [(e.text or "").strip() for e in element.findall(c(name))]


def _email(contact: etree._Element) -> str:
    return text(contact, "EmailAddress", "EmailAddressText") or ""


def _phone(contact: etree._Element) -> str:
    """The first Phone as one string: +CountryDialingCode AreaCodeNumber PhoneNumber (a
    number without a dialing code is read as North American by orders.requests.checks)."""
    phone = contact.find(c("Phone"))
    if phone is None:
        return ""
    country = text(phone, "CountryDialingCode")
    parts = [f"+{country.lstrip('+')}" if country else None]
    parts += [text(phone, "AreaCodeNumber"), text(phone, "PhoneNumber")]
    return " ".join(p for p in parts if p)


def _date(element: etree._Element | None, name: str) -> date | None:
    value = text(element, name)
    return None if value is None else date.fromisoformat(value[:10])


def _gender(individual: etree._Element) -> str:
    code = text(individual, "GenderCode")
    if code is None:
        return ""
    if code not in GENDERS:
        raise refused(individual.find(c("GenderCode")), "GenderCode M or F")
    return GENDERS[code]


def _country(element: etree._Element, name: str) -> str:
    value = text(element, name)
    if value is None:
        return ""
    if len(value) != 2 or not value.isalpha() or not value.isupper():
        raise refused(element.find(c(name)), "a two-letter ISO 3166-1 country code")
    return value


# --- OrderChangeRQ ----------------------------------------------------------------------

_CHANGE = "/IATA_OrderChangeRQ/Request"
_CHOICE = f"{_CHANGE}/ChangeOrderChoice"
_QUOTED = f"{_CHOICE}/AcceptSelectedQuotedOfferList/SelectedPricedOffer"
_NEW_PAX = f"{_CHANGE}/DataLists/PaxList/Pax"
_CHANGE_CONTACT = f"{_CHANGE}/DataLists/ContactInfoList/ContactInfo"
_CHANGE_CARD = f"{_CHANGE}/PaymentFunctions/PaymentProcessingDetails/PaymentMethod/PaymentCard"
ORDER_CHANGE_PATHS = {
    "orderId": f"{_CHANGE}/Order/OrderID",
    "changes": _CHOICE,
    "changes.type": _CHOICE,
    "changes.offerId": f"{_QUOTED}/OfferRefID",
    "changes.offerItemId": f"{_QUOTED}/SelectedOfferItem/OfferItemRefID",
    "changes.offerItemIds": f"{_QUOTED}/SelectedOfferItem/OfferItemRefID",
    "changes.passengerIds": f"{_QUOTED}/SelectedOfferItem/PaxRefID",
    "changes.seat": f"{_QUOTED}/SelectedOfferItem/SelectedSeat",
    "changes.journeyRef": f"{_CHOICE}/CancelUnpaidOrder/SelectedOrderItem/OrderItemRefID",
    "cancelledOfferId": f"{_CHOICE}/AcceptCancelledOffer/OfferID",
    "changes.passengerId": f"{_CHOICE}/UpdatePax/Current/PaxRefID",
    "changes.patch": _NEW_PAX,
    "changes.patch.name": f"{_NEW_PAX}/Individual",
    "changes.patch.name.givenName": f"{_NEW_PAX}/Individual/GivenName",
    "changes.patch.name.surname": f"{_NEW_PAX}/Individual/Surname",
    "changes.patch.dateOfBirth": f"{_NEW_PAX}/Individual/Birthdate",
    "changes.patch.contacts.emailAddress": f"{_CHANGE_CONTACT}/EmailAddress/EmailAddressText",
    "changes.patch.contacts.phoneNumber": f"{_CHANGE_CONTACT}/Phone/PhoneNumber",
    "changes.contact": _CHANGE_CONTACT,
    "changes.contact.name": f"{_CHANGE_CONTACT}/Individual",
    "changes.contact.emailAddress": f"{_CHANGE_CONTACT}/EmailAddress/EmailAddressText",
    "changes.contact.phoneNumber": f"{_CHANGE_CONTACT}/Phone/PhoneNumber",
    "payment": f"{_CHANGE}/PaymentFunctions",
    "payment.type": f"{_CHANGE}/PaymentFunctions/PaymentProcessingDetails/PaymentMethod",
    "payment.amount": f"{_CHANGE}/PaymentFunctions/PaymentProcessingDetails/Amount",
    "payment.cardType": f"{_CHANGE_CARD}/CardBrandCode",
    "payment.cardNumber": f"{_CHANGE_CARD}/CardNumber",
    "payment.expiryDate": f"{_CHANGE_CARD}/ExpirationDate",
    "payment.securityCode": f"{_CHANGE_CARD}/CardSecurityCode",
}


@dataclass(frozen=True)
class ChangeRequest:
    """An OrderChangeRQ read: the order it names, its changes (CancelJourney entries
    still naming order items or journeys, `journey_of` resolves them against the order)
    and its payment."""

    order_ref: str
    changes: list[Change]
    payment: PaymentData | None
    cancelled_items: list[str]
    cancel_every_journey: bool = False  # AcceptCancelledOffer: every journey still flying
    # PaymentFunctions with OrderAssociation beside other changes: the payment is for
    # the order, so on a hold it confirms it too (ConfirmHold); on a confirmed order it
    # pays what the changes cost, as any payment does (ndc.orders.order_change).
    pays_order: bool = False


def change_request(document: etree._Element) -> ChangeRequest:
    """IATA_OrderChangeRQ -> change order's input (as PATCH /json/{v}/orders/{orderId}).

    - `ChangeOrderChoice/AcceptSelectedQuotedOfferList`: items with SelectedSeat or
      SelectedALaCarteOfferItem are AcceptOffer (a SeatAvailability or ServiceList
      ALaCarteOffer item), the others of one SelectedPricedOffer one AcceptReshopOffer
      (the offer OrderQuote stored).
    - `ChangeOrderChoice/CancelUnpaidOrder`: alone, CancelUnpaidOrder (the hold);
      with `SelectedOrderItem/OrderItemRefID`s, CancelJourney of each flight order
      item's journey (a journey id is taken as it is) — how a paid order is cancelled
      after OrderReshop quoted it.
    - `ChangeOrderChoice/AcceptCancelledOffer`: the cancellation OrderReshop
      CancelOrderRef quoted (its OfferID is the order's id: the quote is the order's
      terms as they stand, not a stored offer), committed as CancelJourney of every
      journey still flying — the JSON client's CancelJourney per journey.
    - `ChangeOrderChoice/UpdatePax`: UpdatePassenger of `Current/PaxRefID` with what the
      DataLists Pax named by `New/PaxRefID` carries (its name, birth date, gender,
      nationality, residence, documents, loyalty account, own ContactInfo).
    - a `DataLists/ContactInfo` UpdatePax does not use: UpdateContact (the booking
      contact), named by the Pax its IndividualRefID names when it has no Individual;
      ndc.orders drops one that only echoes the order's contact.
    - `PaymentFunctions`: the payment (payment_data). As the request's only content it
      confirms the hold (ConfirmHold); beside other changes, with `OrderAssociation`
      (the payment is for the order), it confirms the order if it is a hold, and on a
      confirmed order it pays for the changes — integrators send OrderAssociation with
      every payment, and it must not turn a seat purchase into ConfirmHold.
    """
    request = request_of(document)
    order_ref = text(request, "Order", "OrderID")
    lists = request.find(c("DataLists"))
    contacts = _contacts(lists)
    changes: list[Change] = []
    cancelled_items: list[str] = []
    cancel_every_journey = False
    choice = request.find(c("ChangeOrderChoice"))
    used_contacts: set[str] = set()
    if choice is not None:
        chosen = choice[0]
        kind = etree.QName(chosen).localname
        if kind == "AcceptSelectedQuotedOfferList":
            changes += _accepted_offers(chosen)
        elif kind == "CancelUnpaidOrder":
            items = [
                (ref.text or "").strip()
                for ref in chosen.iterfind(f"{c('SelectedOrderItem')}/{c('OrderItemRefID')}")
            ]
            if items:
                cancelled_items = items
            else:
                changes.append(CancelUnpaidOrder())
        elif kind == "AcceptCancelledOffer":
            offer_id = text(chosen, "OfferID")
            if offer_id != order_ref:
                raise ApiError(
                    Err.VALIDATION,
                    f"{ORDER_CHANGE_PATHS['cancelledOfferId']}: {offer_id!r} is not the "
                    "cancellation OrderReshop CancelOrderRef quoted for this order (its "
                    f"OfferID is the OrderID, {order_ref!r})",
                    path=ORDER_CHANGE_PATHS["cancelledOfferId"],
                )
            cancel_every_journey = True
        elif kind == "UpdatePax":
            update, used = _update_pax(chosen, lists, contacts)
            changes.append(update)
            used_contacts |= used
        else:
            raise refused(
                chosen,
                "not offered; use AcceptSelectedQuotedOfferList (seats, services, a "
                "quoted reshop offer), AcceptCancelledOffer, CancelUnpaidOrder or UpdatePax",
            )
    paxes = _paxes(lists)
    for contact_id, contact in contacts.items():
        if contact_id not in used_contacts:
            named = _person_of(contact, contact_id, paxes)
            changes.append(UpdateContact(contact_data(contact, named)))
    functions = request.findall(c("PaymentFunctions"))
    payment = None
    pays_order = False
    if functions:
        payment = payment_data(functions)
        alone = not (changes or cancelled_items or cancel_every_journey)
        if alone:
            changes.append(ConfirmHold())
        else:
            pays_order = any(f.find(c("OrderAssociation")) is not None for f in functions)
    if not (changes or cancelled_items or cancel_every_journey):
        raise refused(
            request, "name a change: ChangeOrderChoice, a ContactInfo or PaymentFunctions"
        )
    return ChangeRequest(
        order_ref, changes, payment, cancelled_items, cancel_every_journey, pays_order
    )


def _paxes(lists: etree._Element | None) -> list[etree._Element]:
    return [] if lists is None else lists.findall(f"{c('PaxList')}/{c('Pax')}")


def _person_of(
    contact: etree._Element, contact_id: str, paxes: list[etree._Element]
) -> etree._Element | None:
    """The DataLists Pax a ContactInfo belongs to: the one its IndividualRefID names (by
    PaxID or by its Individual's IndividualID), else the first naming it in
    ContactInfoRefID."""
    ref = text(contact, "IndividualRefID")
    if ref:
        for pax in paxes:
            if ref in (text(pax, "PaxID"), text(pax, "Individual", "IndividualID")):
                return pax
    return next((pax for pax in paxes if text(pax, "ContactInfoRefID") == contact_id), None)


def _accepted_offers(quoted: etree._Element) -> list[Change]:
    changes: list[Change] = []
    for offer in quoted.findall(c("SelectedPricedOffer")):
        offer_id = text(offer, "OfferRefID")
        reshop_items = []
        for item in offer.findall(c("SelectedOfferItem")):
            pick = ancillary_pick(offer_id, item)
            if pick is None:
                reshop_items.append(text(item, "OfferItemRefID"))
            else:
                changes.append(AcceptOffer(pick))
        if reshop_items:
            changes.append(AcceptReshopOffer(offer_id, tuple(reshop_items)))
    return changes


def _update_pax(
    update: etree._Element, lists: etree._Element | None, contacts: dict[str, etree._Element]
) -> tuple[UpdatePassenger, set[str]]:
    current = text(update, "Current", "PaxRefID")
    new_ref = text(update, "New", "PaxRefID")
    if current is None or new_ref is None:
        raise refused(update, "Current and New (a DataLists Pax with the new details) are required")
    paxes = (
        {text(p, "PaxID"): p for p in lists.iterfind(f"{c('PaxList')}/{c('Pax')}")}
        if (lists is not None)
        else {}
    )
    pax = paxes.get(new_ref)
    if pax is None:
        raise refused(update.find(c("New")), f"{new_ref!r} is no PaxID of DataLists/PaxList")
    individual = pax.find(c("Individual"))
    name = None
    if individual is not None:
        given = _texts(individual, "GivenName")
        name = NameData(" ".join(given) if given else None, text(individual, "Surname"))
    birth = (_date(individual, "Birthdate") if individual is not None else None) or _date(
        pax, "Birthdate"
    )
    contact_ref = text(pax, "ContactInfoRefID")
    own = contacts.get(contact_ref) if contact_ref else None
    if contact_ref and own is None:
        raise refused(pax.find(c("ContactInfoRefID")), f"{contact_ref!r} is no ContactInfoID")
    documents = pax.findall(c("IdentityDoc"))
    patch = PassengerPatch(
        name=name,
        date_of_birth=birth,
        gender=(_gender(individual) or None) if individual is not None else None,
        nationality=_country(pax, "CitizenshipCountryCode") or None,
        residence_country=_country(pax, "ResidenceCountryCode") or None,
        loyalty_program=loyalty_program(pax.find(c("LoyaltyProgramAccount"))),
        travel_documents=tuple(map(travel_document, documents)) if documents else None,
        email=(_email(own) or None) if own is not None else None,
        phone=(_phone(own) or None) if own is not None else None,
    )
    return UpdatePassenger(current, patch), {contact_ref} if contact_ref else set()
