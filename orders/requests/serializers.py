"""Request shapes of the order endpoints (SPEC.md §2.5.1, §4.7, §4.8). Shape only: the
rules that span fields or need the offer (party, ages, infants, cards) are in
orders/requests/checks.py and orders/money/payments.py.

It is one module because create order, change order and reshop share their member shapes
(names, contacts, cards, payments) and the OpenAPI document reads the request shapes
from here; it holds shapes and their mapping to typed inputs, no rule."""

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from rest_framework import serializers

from airline.api.serializers import IsoDateField, StrictSerializer, TypedStrictSerializer
from offers.passengers import MAX_LISTED
from orders.requests.inputs import (
    DOCUMENT_TYPE_ALIASES,
    DOCUMENT_TYPES,
    AcceptAirlineChange,
    AcceptOffer,
    AcceptReshopOffer,
    AncillaryPick,
    CancelForAirlineChange,
    CancelJourney,
    CancelUnpaidOrder,
    CardPayment,
    Change,
    ChangeOrderInput,
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

COUNTRY = r"^[A-Z]{2}$"


class NameIn(StrictSerializer):
    givenName = serializers.CharField(max_length=64)
    surname = serializers.CharField(max_length=64)


class OptionalNameIn(StrictSerializer):
    givenName = serializers.CharField(max_length=64, required=False)
    surname = serializers.CharField(max_length=64, required=False)


class LoyaltyProgramIn(StrictSerializer):
    programCode = serializers.CharField(max_length=10, required=False)
    accountNumber = serializers.CharField(max_length=30)
    tierLevel = serializers.CharField(max_length=20, required=False)


class TravelDocumentIn(StrictSerializer):
    documentType = serializers.ChoiceField(
        choices=[*DOCUMENT_TYPES, *DOCUMENT_TYPE_ALIASES],
        help_text="PT passport, NI national id, DL driving licence, VI visa, RP residence "
        "permit; the SSR DOCS/APIS codes P, PP, PA (PT), I, ID (NI) and V (VI) are taken "
        "too and kept as the type they stand for",
    )
    documentNumber = serializers.CharField(max_length=30)
    issuingCountry = serializers.RegexField(COUNTRY, required=False)
    nationality = serializers.RegexField(COUNTRY, required=False)
    expiryDate = IsoDateField(required=False)


class PassengerContactIn(StrictSerializer):
    # Plain strings: a malformed email or phone is ERR-1004 (orders/requests/checks.py), not 1005.
    emailAddress = serializers.CharField(max_length=254, required=False)
    phoneNumber = serializers.CharField(max_length=32, required=False)


class BookingPassengerIn(StrictSerializer):
    passengerId = serializers.CharField(
        max_length=64, help_text="The priced offer's paxId, e.g. ADT-1"
    )
    type = serializers.ChoiceField(choices=["ADT", "CHD", "INF"])
    name = NameIn()
    dateOfBirth = IsoDateField(required=False)
    gender = serializers.ChoiceField(choices=["Male", "Female"], required=False)
    nationality = serializers.RegexField(COUNTRY, required=False)
    residenceCountry = serializers.RegexField(COUNTRY, required=False)
    loyaltyProgram = LoyaltyProgramIn(required=False)
    travelDocuments = TravelDocumentIn(many=True, required=False)
    contacts = PassengerContactIn(required=False)
    infantPassengerId = serializers.CharField(
        max_length=64, required=False, help_text="On an adult: the infant on their lap"
    )


class PostalAddressIn(StrictSerializer):
    line1 = serializers.CharField(max_length=100)
    line2 = serializers.CharField(max_length=100, required=False)
    city = serializers.CharField(max_length=60)
    stateProvince = serializers.CharField(max_length=60, required=False)
    postalCode = serializers.CharField(max_length=20, required=False)
    countryCode = serializers.RegexField(COUNTRY)


class ContactIn(StrictSerializer):
    emailAddress = serializers.CharField(max_length=254)
    phoneNumber = serializers.CharField(max_length=32, required=False)
    name = OptionalNameIn(required=False, help_text="Defaults to the lead passenger")
    postalAddress = PostalAddressIn(required=False)


class PayerIn(StrictSerializer):
    name = NameIn(required=False)
    postalAddress = PostalAddressIn(required=False)


CARD_FIELDS = ("cardType", "cardNumber", "expiryDate", "securityCode")


class CardIn(StrictSerializer):
    """The card that pays the rest of an AirlineCredit payment: the CreditCard payment's
    fields (SPEC.md §2.5.1; DESIGN.md §11 "Airline credit"), its `type` optional and
    CreditCard when sent, and no other payment's."""

    type = serializers.ChoiceField(
        choices=["CreditCard"],
        required=False,
        help_text="Optional: CreditCard, as the card payment it is",
    )
    cardType = serializers.CharField(max_length=4, help_text="VI, CA, AX, DS")
    cardNumber = serializers.CharField(max_length=23)
    expiryDate = serializers.CharField(max_length=4, help_text="MMYY")
    securityCode = serializers.CharField(max_length=4)
    payer = PayerIn(required=False)


class StatedAmountIn(StrictSerializer):
    """Our own addition to the payment (not in SPEC.md): the amount the client
    means to pay. When given it must be what is due, else ERR-6002 naming that amount."""

    amount = serializers.DecimalField(max_digits=12, decimal_places=2)
    currency = serializers.RegexField(r"^[A-Z]{3}$")


# The members of each payment type beyond `type` (DESIGN.md §11): another type's member
# is ERR-1005 naming it. Hold pays nothing now, so it takes nothing else.
PAYMENT_OWN_FIELDS = {
    "Hold": (),
    "CreditCard": (*CARD_FIELDS, "payer", "amount"),
    "AirlineCredit": ("creditCode", "card", "amount"),
}


class PaymentIn(TypedStrictSerializer):
    # `type` is free text here: a type we do not take is ERR-6000, not a shape error.
    own_fields = PAYMENT_OWN_FIELDS
    type = serializers.CharField(max_length=20, help_text="Hold, CreditCard or AirlineCredit")
    cardType = serializers.CharField(max_length=4, required=False, help_text="VI, CA, AX, DS")
    cardNumber = serializers.CharField(max_length=23, required=False)
    expiryDate = serializers.CharField(max_length=4, required=False, help_text="MMYY")
    securityCode = serializers.CharField(max_length=4, required=False)
    payer = PayerIn(required=False)
    creditCode = serializers.CharField(
        max_length=16, required=False, help_text="AirlineCredit: the credit's code"
    )
    card = CardIn(
        required=False,
        help_text="AirlineCredit: the card that pays what the credit does not cover",
    )
    amount = StatedAmountIn(
        required=False,
        help_text="Optional (our addition): what this payment pays, credit and card together; "
        "refused with ERR-6002, naming the amount due, unless it is exactly that",
    )

    def validate(self, attrs):
        if attrs["type"] == "CreditCard":
            for name in CARD_FIELDS:
                if not attrs.get(name):
                    raise serializers.ValidationError({name: ["This field is required."]})
        if attrs["type"] == "AirlineCredit" and not attrs.get("creditCode"):
            raise serializers.ValidationError({"creditCode": ["This field is required."]})
        return attrs


class OfferItemSelectionIn(StrictSerializer):
    offerItemId = serializers.CharField(max_length=100)
    passengerIds = serializers.ListField(
        child=serializers.CharField(max_length=64), required=False, allow_empty=False
    )


class SeatIn(StrictSerializer):
    row = serializers.IntegerField(min_value=1, max_value=99)
    column = serializers.RegexField(r"^[A-Za-z]$")


class BookedAncillaryIn(StrictSerializer):
    """A seat or service bought with the booking (DESIGN.md §11 "Ancillaries in the first
    booking"): the AcceptOffer entry without `type`, from the priced offer's seat maps
    (POST /offers/{offerId}/seats) and service list (/services)."""

    offerId = serializers.CharField(max_length=100)
    offerItemId = serializers.CharField(max_length=100)
    passengerIds = serializers.ListField(
        child=serializers.CharField(max_length=64),
        required=False,
        allow_empty=False,
        help_text="The priced offer's paxIds (ADT-1...); default: every passenger priced",
    )
    seat = SeatIn(required=False, help_text="For a seat item: the seat chosen on its map")


class CreateOrderIn(StrictSerializer):
    offerId = serializers.CharField(max_length=100)
    offerItemIds = serializers.ListField(
        child=serializers.CharField(max_length=100), allow_empty=False
    )
    offerItemSelections = OfferItemSelectionIn(many=True, required=False)
    passengers = BookingPassengerIn(many=True, allow_empty=False, max_length=MAX_LISTED)
    contact = ContactIn()
    remarks = serializers.CharField(max_length=500, required=False, allow_blank=True)
    payment = PaymentIn()
    ancillaries = BookedAncillaryIn(
        many=True,
        required=False,
        allow_empty=False,
        max_length=200,
        help_text="Seats and services sold with the flights, in the same transaction",
    )

    def to_create_input(self) -> CreateOrderInput:
        """The validated request as create order's typed input (orders/requests/inputs.py)."""
        return create_input(self.validated_data)


def create_input(data: Mapping[str, Any]) -> CreateOrderInput:
    """A validated CreateOrderIn body as create order's typed input (orders/requests/inputs.py)."""
    selections = data.get("offerItemSelections")
    return CreateOrderInput(
        offer_id=data["offerId"],
        item_ids=list(data["offerItemIds"]),
        selections=None
        if selections is None
        else [ItemSelection(s["offerItemId"], _ids(s.get("passengerIds"))) for s in selections],
        passengers=[passenger_data(p) for p in data["passengers"]],
        contact=contact_data(data["contact"]),
        payment=payment_data(data["payment"]),
        ancillaries=[ancillary_pick(a) for a in data.get("ancillaries") or ()],
        remarks=data.get("remarks", ""),
    )


def passenger_data(wire: Mapping[str, Any]) -> PassengerData:
    """A validated BookingPassengerIn as typed input."""
    loyalty = wire.get("loyaltyProgram")
    contacts = wire.get("contacts") or {}
    return PassengerData(
        passenger_id=wire["passengerId"],
        ptc=wire["type"],
        given_name=wire["name"]["givenName"],
        surname=wire["name"]["surname"],
        date_of_birth=wire.get("dateOfBirth"),
        gender=wire.get("gender", ""),
        nationality=wire.get("nationality", ""),
        residence_country=wire.get("residenceCountry", ""),
        loyalty_program=loyalty_program(loyalty),
        travel_documents=tuple(travel_document(d) for d in wire.get("travelDocuments") or ()),
        email=contacts.get("emailAddress", ""),
        phone=contacts.get("phoneNumber", ""),
        infant_passenger_id=wire.get("infantPassengerId", ""),
    )


def loyalty_program(wire: Mapping[str, Any] | None) -> LoyaltyProgram | None:
    """A validated LoyaltyProgramIn as typed input."""
    if wire is None:
        return None
    return LoyaltyProgram(
        account_number=wire["accountNumber"],
        program_code=wire.get("programCode", ""),
        tier_level=wire.get("tierLevel", ""),
    )


def travel_document(wire: Mapping[str, Any]) -> TravelDocument:
    """A validated TravelDocumentIn as typed input."""
    return TravelDocument(
        document_type=DOCUMENT_TYPE_ALIASES.get(wire["documentType"], wire["documentType"]),
        document_number=wire["documentNumber"],
        issuing_country=wire.get("issuingCountry", ""),
        nationality=wire.get("nationality", ""),
        expiry_date=wire.get("expiryDate"),
    )


def contact_data(wire: Mapping[str, Any]) -> ContactData:
    """A validated ContactIn (create order's contact, UpdateContact's) as typed input."""
    name = wire.get("name") or {}
    return ContactData(
        email=wire["emailAddress"],
        phone=wire.get("phoneNumber", ""),
        given_name=name.get("givenName", ""),
        surname=name.get("surname", ""),
        postal_address=postal_address(wire.get("postalAddress")),
    )


def postal_address(wire: Mapping[str, Any] | None) -> PostalAddress | None:
    """A validated PostalAddressIn as typed input."""
    if wire is None:
        return None
    return PostalAddress(
        line1=wire["line1"],
        city=wire["city"],
        country_code=wire["countryCode"],
        line2=wire.get("line2", ""),
        state_province=wire.get("stateProvince", ""),
        postal_code=wire.get("postalCode", ""),
    )


def payment_data(wire: Mapping[str, Any]) -> PaymentData:
    """A validated PaymentIn as typed input; a type we do not take stays one
    (OtherPayment), for the service to refuse."""
    if wire["type"] == "Hold":
        return Hold()
    stated = wire.get("amount")
    amount = None if stated is None else StatedAmount(stated["amount"], stated["currency"])
    if wire["type"] == "CreditCard":
        return replace(card_payment(wire), amount=amount)
    if wire["type"] == "AirlineCredit":
        card = wire.get("card")
        return CreditPayment(
            credit_code=wire["creditCode"],
            card=None if card is None else card_payment(card),
            amount=amount,
        )
    return OtherPayment(wire["type"])


def card_payment(wire: Mapping[str, Any]) -> CardPayment:
    """The card fields of a validated PaymentIn or CardIn as typed input."""
    payer = wire.get("payer") or {}
    name = payer.get("name") or {}
    return CardPayment(
        card_type=wire.get("cardType", ""),
        card_number=wire.get("cardNumber", ""),
        expiry_date=wire.get("expiryDate", ""),
        security_code=wire.get("securityCode", ""),
        payer_given_name=name.get("givenName", ""),
        payer_surname=name.get("surname", ""),
        payer_address=postal_address(payer.get("postalAddress")),
    )


def ancillary_pick(wire: Mapping[str, Any]) -> AncillaryPick:
    """A validated BookedAncillaryIn (or an AcceptOffer change) as typed input."""
    seat = wire.get("seat")
    return AncillaryPick(
        offer_id=wire["offerId"],
        offer_item_id=wire["offerItemId"],
        passenger_ids=_ids(wire.get("passengerIds")),
        seat=None if seat is None else (seat["row"], seat["column"]),
    )


def change_input(data: Mapping[str, Any]) -> ChangeOrderInput:
    """A validated ChangeOrderIn body as change order's typed input: its changes in
    request order, then its top-level passengers (UpdatePassenger whose errors point at
    `passengers`)."""
    changes: list[Change] = [change_of(c) for c in data.get("changes") or ()]
    changes += [
        UpdatePassenger(p["passengerId"], passenger_patch(p), top_level=True)
        for p in data.get("passengers") or ()
    ]
    payment = data.get("payment")
    return ChangeOrderInput(
        changes=changes, payment=None if payment is None else payment_data(payment)
    )


def change_of(wire: Mapping[str, Any]) -> Change:
    """A validated ChangeIn (its members checked by CHANGE_NEEDS) as typed input."""
    kind = wire["type"]
    if kind == "CancelJourney":
        return CancelJourney(wire["journeyRef"])
    if kind == "UpdatePassenger":
        return UpdatePassenger(wire["passengerId"], passenger_patch(wire["patch"]))
    if kind == "UpdateContact":
        return UpdateContact(contact_data(wire["contact"]))
    if kind == "AcceptOffer":
        return AcceptOffer(ancillary_pick(wire))
    if kind == "AcceptReshopOffer":
        return AcceptReshopOffer(wire["offerId"], tuple(wire["offerItemIds"]))
    if kind == "AcceptAirlineChange":
        return AcceptAirlineChange(wire["airlineChangeId"])
    if kind == "CancelForAirlineChange":
        return CancelForAirlineChange(
            wire["airlineChangeId"], wire.get("refundTo", "OriginalPayment")
        )
    return CancelUnpaidOrder() if kind == "CancelUnpaidOrder" else ConfirmHold()


def passenger_patch(wire: Mapping[str, Any]) -> PassengerPatch:
    """A validated PassengerPatchIn (or top-level passengers entry) as typed input."""
    name = wire.get("name")
    documents = wire.get("travelDocuments")
    contacts = wire.get("contacts") or {}
    return PassengerPatch(
        name=None if name is None else NameData(name.get("givenName"), name.get("surname")),
        date_of_birth=wire.get("dateOfBirth"),
        gender=wire.get("gender"),
        nationality=wire.get("nationality"),
        residence_country=wire.get("residenceCountry"),
        loyalty_program=loyalty_program(wire.get("loyaltyProgram")),
        travel_documents=None if documents is None else tuple(map(travel_document, documents)),
        email=contacts.get("emailAddress"),
        phone=contacts.get("phoneNumber"),
    )


def _ids(values: list[str] | None) -> tuple[str, ...] | None:
    return None if values is None else tuple(values)


class OrderListQuery(StrictSerializer):
    """OrderList's query parameters (SPEC.md §4.8): a known one out of its range is
    ERR-1005 naming it (DESIGN.md §11 "Query parameters"); an unrecognized one is
    ignored, as SPEC.md §4.8 says in so many words ("unrecognized ones are ignored").
    DESIGN.md §11 asks for ERR-1005 there too, but SPEC.md wins where both
    speak: a partner's client that adds a parameter of its own must keep working."""

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            data = {name: value for name, value in data.items() if name in self.fields}
        return super().to_internal_value(data)

    organizationCode = serializers.CharField(max_length=10, required=False)
    firstName = serializers.CharField(max_length=32, required=False)
    lastName = serializers.CharField(max_length=32, required=False)
    departureDate = IsoDateField(required=False)
    origin = serializers.RegexField(r"^[A-Za-z]{3}$", required=False)
    destination = serializers.RegexField(r"^[A-Za-z]{3}$", required=False)
    flightNumber = serializers.RegexField(
        r"^(?:[A-Za-z0-9]{2})?\d{1,4}$", required=False, help_text="123 or MX123"
    )
    pageSize = serializers.IntegerField(min_value=10, max_value=1000, default=1000)
    # Order ids are 64-bit; a larger cursor is no cursor we gave (SQLite cannot bind it).
    lastIndex = serializers.IntegerField(min_value=0, max_value=2**63 - 1, default=0)


class OrderRetrieveQuery(StrictSerializer):
    """Retrieve order's query parameters; an unknown one is ERR-1005 (DESIGN.md §11)."""

    ownerCode = serializers.RegexField(r"^[A-Za-z0-9]{2,3}$", required=False)


CHANGE_TYPES = [
    "CancelUnpaidOrder",
    "CancelJourney",
    "UpdatePassenger",
    "UpdateContact",
    "ConfirmHold",
    "AcceptOffer",
    "AcceptReshopOffer",
    "AcceptAirlineChange",
    "CancelForAirlineChange",
]


class PassengerPatchIn(StrictSerializer):
    """What UpdatePassenger may change (SPEC.md §4.10): every member optional, at least
    one present (an empty patch is ERR-1005: orders.servicing.amend). The type never changes."""

    name = OptionalNameIn(required=False)
    dateOfBirth = IsoDateField(required=False)
    gender = serializers.ChoiceField(choices=["Male", "Female"], required=False)
    nationality = serializers.RegexField(COUNTRY, required=False)
    residenceCountry = serializers.RegexField(COUNTRY, required=False)
    loyaltyProgram = LoyaltyProgramIn(required=False, allow_null=True)
    travelDocuments = TravelDocumentIn(many=True, required=False, max_length=10)
    contacts = PassengerContactIn(required=False)


class PassengerUpdateIn(PassengerPatchIn):
    """A top-level `passengers` entry of change order: the passenger (PAX- id or the
    booking's passengerId) and the members to change, as UpdatePassenger's patch."""

    passengerId = serializers.CharField(max_length=64)


# Members each change type needs beyond `type` (the service checks what they hold).
CHANGE_NEEDS = {
    "AcceptOffer": ("offerId", "offerItemId"),
    "AcceptReshopOffer": ("offerId", "offerItemIds"),
    "CancelJourney": ("journeyRef",),
    "UpdatePassenger": ("passengerId", "patch"),
    "UpdateContact": ("contact",),
    "AcceptAirlineChange": ("airlineChangeId",),
    "CancelForAirlineChange": ("airlineChangeId",),
}


# Every member each change type takes beyond `type`: CHANGE_NEEDS and what it may add.
CHANGE_OWN_FIELDS = {
    "CancelUnpaidOrder": (),
    "CancelJourney": ("journeyRef",),
    "UpdatePassenger": ("passengerId", "patch"),
    "UpdateContact": ("contact",),
    "ConfirmHold": (),
    "AcceptOffer": ("offerId", "offerItemId", "passengerIds", "seat"),
    "AcceptReshopOffer": ("offerId", "offerItemIds"),
    "AcceptAirlineChange": ("airlineChangeId",),
    "CancelForAirlineChange": ("airlineChangeId", "refundTo"),
}


class ChangeIn(TypedStrictSerializer):
    """One changes[] entry (SPEC.md §4.10, DESIGN.md §11)."""

    own_fields = CHANGE_OWN_FIELDS
    type = serializers.ChoiceField(choices=CHANGE_TYPES)
    offerId = serializers.CharField(max_length=100, required=False)
    offerItemId = serializers.CharField(max_length=100, required=False)
    offerItemIds = serializers.ListField(
        child=serializers.CharField(max_length=100), required=False, allow_empty=False
    )
    passengerIds = serializers.ListField(
        child=serializers.CharField(max_length=64), required=False, allow_empty=False
    )
    seat = SeatIn(required=False)
    journeyRef = serializers.CharField(max_length=40, required=False)
    passengerId = serializers.CharField(max_length=64, required=False)
    patch = PassengerPatchIn(required=False)
    contact = ContactIn(required=False)
    airlineChangeId = serializers.CharField(max_length=20, required=False)
    refundTo = serializers.ChoiceField(choices=["OriginalPayment", "AirlineCredit"], required=False)

    def validate(self, attrs):
        for name in CHANGE_NEEDS.get(attrs["type"], ()):
            if name not in attrs:
                raise serializers.ValidationError({name: ["This field is required."]})
        return attrs


class ChangeOrderIn(StrictSerializer):
    """PATCH /orders/{orderId}: at least one of changes, passengers, payment."""

    changes = ChangeIn(many=True, required=False, allow_empty=False)
    passengers = PassengerUpdateIn(
        many=True, required=False, allow_empty=False, max_length=MAX_LISTED
    )
    payment = PaymentIn(required=False)

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError(
                {"changes": ["Send at least one of changes, passengers, payment."]}
            )
        return attrs


class OrderPassengerRef(StrictSerializer):
    paxId = serializers.CharField(max_length=64)
    type = serializers.ChoiceField(choices=["ADT", "CHD", "INF"], required=False)


class OrderAncillaryIn(StrictSerializer):
    """Body of POST /orders/{orderId}/seats and /services (SPEC.md §4.11); optional."""

    orderItemIds = serializers.ListField(
        child=serializers.CharField(max_length=40), required=False, allow_empty=False
    )
    passengers = OrderPassengerRef(
        many=True, required=False, allow_empty=False, max_length=MAX_LISTED
    )


RESHOP_TYPES = ["ReshopItinerary", "CancelOrder", "DeleteOrderItems", "NameChange"]


class ReshopOriginDestinationIn(StrictSerializer):
    origin = serializers.RegexField(r"^[A-Za-z]{3}$")
    destination = serializers.RegexField(r"^[A-Za-z]{3}$")
    departureDate = IsoDateField()


# Every member each reshop instruction takes beyond `type`.
RESHOP_OWN_FIELDS = {
    "ReshopItinerary": ("originDestinations", "deleteOrderItemRefIds", "cabinTypeCode"),
    "CancelOrder": (),
    "DeleteOrderItems": ("orderItemRefIds",),
    "NameChange": ("paxRefId", "surname", "givenName"),
}


class ReshopInstructionIn(TypedStrictSerializer):
    """POST /orders/{orderId}/reshop `instruction` (SPEC.md §4.12): its `type` decides
    which other fields it takes and needs (the instruction's handler checks them)."""

    own_fields = RESHOP_OWN_FIELDS
    type = serializers.ChoiceField(choices=RESHOP_TYPES)
    originDestinations = ReshopOriginDestinationIn(
        many=True, required=False, allow_empty=False, max_length=6
    )
    deleteOrderItemRefIds = serializers.ListField(
        child=serializers.CharField(max_length=40), required=False, allow_empty=False, max_length=6
    )
    cabinTypeCode = serializers.ChoiceField(choices=["Y", "W", "C", "F"], required=False)
    orderItemRefIds = serializers.ListField(
        child=serializers.CharField(max_length=40), required=False, allow_empty=False, max_length=6
    )
    paxRefId = serializers.CharField(max_length=40, required=False)
    surname = serializers.CharField(max_length=64, required=False)
    givenName = serializers.CharField(max_length=64, required=False)


class ReshopIn(StrictSerializer):
    """POST /orders/{orderId}/reshop (SPEC.md §4.12)."""

    instruction = ReshopInstructionIn()
    passengers = OrderPassengerRef(
        many=True, required=False, allow_empty=False, max_length=MAX_LISTED
    )


class QuoteIn(StrictSerializer):
    """POST /orders/{orderId}/quote (SPEC.md §4.13)."""

    offerId = serializers.CharField(max_length=100)
    offerItemIds = serializers.ListField(
        child=serializers.CharField(max_length=100), allow_empty=False, max_length=12
    )
    passengers = OrderPassengerRef(
        many=True, required=False, allow_empty=False, max_length=MAX_LISTED
    )
