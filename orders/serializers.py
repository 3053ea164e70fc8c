"""Request shapes of the order endpoints (SPEC.md §2.5.1, §4.7, §4.8). Shape only: the
rules that span fields or need the offer (party, ages, infants, cards) are in
orders/checks.py and orders/payments.py."""

from rest_framework import serializers

from airline.api.serializers import IsoDateField, StrictSerializer
from offers.passengers import MAX_LISTED

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
        choices=["PT", "NI", "DL", "VI", "RP"], help_text="PT passport, NI national id..."
    )
    documentNumber = serializers.CharField(max_length=30)
    issuingCountry = serializers.RegexField(COUNTRY, required=False)
    nationality = serializers.RegexField(COUNTRY, required=False)
    expiryDate = IsoDateField(required=False)


class PassengerContactIn(StrictSerializer):
    # Plain strings: a malformed email or phone is ERR-1004 (orders/checks.py), not 1005.
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


class PaymentIn(StrictSerializer):
    # `type` is free text here: a type we do not take is ERR-6000, not a shape error.
    type = serializers.CharField(max_length=20, help_text="Hold or CreditCard")
    cardType = serializers.CharField(max_length=4, required=False, help_text="VI, CA, AX, DS")
    cardNumber = serializers.CharField(max_length=23, required=False)
    expiryDate = serializers.CharField(max_length=4, required=False, help_text="MMYY")
    securityCode = serializers.CharField(max_length=4, required=False)
    payer = PayerIn(required=False)

    def validate(self, attrs):
        if attrs["type"] == "CreditCard":
            for name in ("cardType", "cardNumber", "expiryDate", "securityCode"):
                if not attrs.get(name):
                    raise serializers.ValidationError({name: ["This field is required."]})
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


class OrderListQuery(serializers.Serializer):
    """OrderList's query parameters (SPEC.md §4.8); unknown ones are ignored."""

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


class OrderRetrieveQuery(serializers.Serializer):
    ownerCode = serializers.RegexField(r"^[A-Za-z0-9]{2,3}$", required=False)


CHANGE_TYPES = [
    "CancelUnpaidOrder",
    "CancelJourney",
    "UpdatePassenger",
    "UpdateContact",
    "ConfirmHold",
    "AcceptOffer",
    "AcceptReshopOffer",
]


class PassengerPatchIn(StrictSerializer):
    """What UpdatePassenger may change (SPEC.md §4.10): every member optional, at least
    one present (an empty patch is ERR-1005: orders.amend). The type never changes."""

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
}


class ChangeIn(StrictSerializer):
    """One changes[] entry (SPEC.md §4.10, DESIGN.md §11)."""

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


class ReshopInstructionIn(StrictSerializer):
    """POST /orders/{orderId}/reshop `instruction` (SPEC.md §4.12): its `type` decides
    which other fields it needs (the instruction's handler checks them)."""

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
