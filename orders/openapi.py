"""OpenAPI schemas and examples of the order endpoints (documentation only: the views
render plain dicts, orders/presenters.py)."""

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.utils import OpenApiExample
from rest_framework import serializers as s

from airline.api.openapi import enveloped, typed_variants
from offers.openapi import Fare, Flight, MonetaryAmount, PassengerPrice, Price
from orders.serializers import (
    CARD_FIELDS,
    CHANGE_NEEDS,
    CHANGE_OWN_FIELDS,
    CHANGE_TYPES,
    PAYMENT_OWN_FIELDS,
    RESHOP_OWN_FIELDS,
    RESHOP_TYPES,
)

# The payment types create order and change order take (DESIGN.md §11); any other is
# ERR-6000, which the description states by listing these.
PAYMENT_TYPES = ["Hold", "CreditCard", "AirlineCredit"]
PAYMENT_NEEDS = {"CreditCard": CARD_FIELDS, "AirlineCredit": ("creditCode",)}
# What each reshop instruction needs beyond `type` (orders/exchange/, cancel.py,
# amend.py refuse it without them: ERR-1005).
RESHOP_NEEDS = {
    "ReshopItinerary": ("originDestinations",),
    "DeleteOrderItems": ("orderItemRefIds",),
    "NameChange": ("paxRefId", "surname"),
}


class _TypedVariants(OpenApiSerializerExtension):
    """A request member whose `type` decides the rest: one variant per type, each with
    the members it needs (airline.api.openapi.typed_variants). No target of its own."""

    priority = 1
    kinds: list[str]
    needs: dict[str, tuple[str, ...]]
    own: dict[str, tuple[str, ...]]
    suffix: str

    def map_serializer(self, auto_schema, direction):
        return typed_variants(
            auto_schema,
            self.target,
            direction,
            kinds=self.kinds,
            needs=self.needs,
            own=self.own,
            suffix=self.suffix,
        )


class PaymentScheme(_TypedVariants):
    """`payment`: Hold, CreditCard or AirlineCredit, each with the members it needs."""

    target_class = "orders.serializers.PaymentIn"
    kinds, needs, own, suffix = PAYMENT_TYPES, PAYMENT_NEEDS, PAYMENT_OWN_FIELDS, "Payment"


class ChangeScheme(_TypedVariants):
    """A change order `changes[]` entry: one variant per change type."""

    target_class = "orders.serializers.ChangeIn"
    kinds, needs, own, suffix = CHANGE_TYPES, CHANGE_NEEDS, CHANGE_OWN_FIELDS, "Change"


class ReshopInstructionScheme(_TypedVariants):
    """A reshop `instruction`: one variant per instruction type."""

    target_class = "orders.serializers.ReshopInstructionIn"
    kinds, needs, own, suffix = RESHOP_TYPES, RESHOP_NEEDS, RESHOP_OWN_FIELDS, "Instruction"


class Name(s.Serializer):
    givenName = s.CharField()
    surname = s.CharField()


class OrderItem(s.Serializer):
    itemId = s.CharField(help_text="OOI-...")
    statusCode = s.CharField()
    totalPrice = Price()
    paxRefIds = s.ListField(child=s.CharField())
    segmentRefIds = s.ListField(child=s.CharField())
    fare = Fare()


class OrderTotals(s.Serializer):
    charged = MonetaryAmount(help_text="Every payment taken")
    refunded = MonetaryAmount(help_text="What of it was given back")
    voided = MonetaryAmount(
        help_text="The value of lines cancelled before they were paid for (a cancelled or "
        "lapsed hold, a seat replaced on a hold)"
    )
    retained = MonetaryAmount(
        help_text="What else the airline kept of lines a paid order lost (a cheaper "
        "replacement seat); the fees and penalties it charged are in totalPrice.fees. "
        "Settled: charged - refunded = totalPrice.total + retained + credited - "
        "refundedOutside"
    )
    credited = MonetaryAmount(help_text="What became airline credit (see credits[])")
    refundedOutside = MonetaryAmount(
        required=False,
        help_text="Only when there is some: what the payment provider gave back outside "
        "this service (a refund made in its dashboard), not yet set against value a later "
        "change gave back (that change gives this much less). The order is otherwise as "
        "it was: its status, tickets and payments[] (refundedAmount includes it) stand",
    )


class OrderHeader(s.Serializer):
    orderId = s.CharField()
    recordLocator = s.CharField()
    ownerCode = s.CharField()
    statusCode = s.ChoiceField(choices=["CONFIRMED", "ONHOLD", "CANCELLED", "CLOSED", "PENDING"])
    creationDateTime = s.DateTimeField()
    totalPrice = Price(
        help_text="What the order's live (not cancelled) lines are worth, plus the fees "
        "and penalties it was charged (fees[]: ServiceFee, PenaltyFee lines)"
    )
    totals = OrderTotals()
    balanceDue = MonetaryAmount(required=False, help_text="On hold only")
    paymentTimeLimit = s.DateTimeField(required=False, help_text="On hold only (UTC)")
    items = OrderItem(many=True)


class OrderPax(s.Serializer):
    paxId = s.CharField(help_text="PAX-...")
    passengerId = s.CharField(
        help_text="The passengerId create order gave (the priced offer's paxId, e.g. ADT-1)"
    )
    ptc = s.ChoiceField(choices=["ADT", "CHD", "INF"])
    name = Name()
    dateOfBirth = s.DateField(required=False)
    gender = s.CharField(required=False)
    nationality = s.CharField(required=False)
    residenceCountry = s.CharField(required=False)
    loyaltyProgram = s.DictField(required=False)
    travelDocuments = s.ListField(child=s.DictField(), required=False)
    contacts = s.DictField(required=False)
    infantRefId = s.CharField(
        required=False, help_text="On an adult: the PAX- id of the infant they carry"
    )
    infantPassengerId = s.CharField(
        required=False,
        help_text="On an adult: the infant they carry, by the passengerId create order gave "
        "(the same name and value as create order's infantPassengerId)",
    )


class PhoneNumber(s.Serializer):
    number = s.CharField(help_text="E.164")
    type = s.CharField()


class OrderContact(s.Serializer):
    contactId = s.CharField()
    contactTypeCode = s.CharField()
    contactTypeName = s.CharField()
    emailAddress = s.CharField()
    phoneNumbers = PhoneNumber(many=True)
    name = Name()


class OrderLeg(s.Serializer):
    legId = s.CharField()
    origin = s.CharField()
    destination = s.CharField()
    departureDateTime = s.CharField()
    arrivalDateTime = s.CharField()
    aircraftTypeCode = s.CharField()


OPERATIONAL_STATUSES = [
    "CONFIRMED",
    "SCHEDULE_CHANGED",
    "AIRLINE_CANCELLED",
    "CANCELLED",
    "EXCHANGED",
]
OPERATIONAL_HELP = (
    "Our own field (not in SPEC.md): the state of the flight. CONFIRMED: flies as booked. "
    "SCHEDULE_CHANGED: a pending airline change covers it (the booked times stay until it "
    "is accepted; see airlineInitiatedChanges). AIRLINE_CANCELLED: the airline cancelled "
    "its flight; unflown until the seller acts. CANCELLED: the seller cancelled it. "
    "EXCHANGED: the seller exchanged it for other flights (reshop AcceptReshopOffer)"
)


class OrderSegment(s.Serializer):
    segmentId = s.CharField(help_text="SEG-...: unique within the order view")
    marketingCarrier = s.CharField()
    marketingFlightNumber = s.CharField()
    origin = s.CharField()
    destination = s.CharField()
    departureDateTime = s.CharField()
    arrivalDateTime = s.CharField()
    cabinTypeCode = s.CharField()
    rbd = s.CharField()
    statusCode = s.ChoiceField(
        choices=["WAITLISTED"],
        required=False,
        help_text="SPEC.md §2.2: present only when the segment is waitlisted",
    )
    operationalStatus = s.ChoiceField(choices=OPERATIONAL_STATUSES, help_text=OPERATIONAL_HELP)
    legs = OrderLeg(many=True)


class OrderJourney(s.Serializer):
    journeyId = s.CharField()
    origin = s.CharField()
    destination = s.CharField()
    departureDateTime = s.CharField()
    arrivalDateTime = s.CharField()
    duration = s.CharField()
    stops = s.IntegerField()
    operationalStatus = s.ChoiceField(
        choices=OPERATIONAL_STATUSES,
        help_text="Our own field (not in SPEC.md): the journey's state, that of its most "
        "affected segment: EXCHANGED, CANCELLED, AIRLINE_CANCELLED, SCHEDULE_CHANGED, else "
        "CONFIRMED (segments[].operationalStatus says what each means)",
    )
    segments = OrderSegment(many=True)


class PaymentMethod(s.Serializer):
    type = s.ChoiceField(choices=["CreditCard", "Credit", "External"])
    cardType = s.CharField(required=False)
    maskedNumber = s.CharField(required=False)
    creditCode = s.CharField(required=False, help_text="Credit: the airline credit spent")


class OrderPayment(s.Serializer):
    paymentId = s.CharField()
    amount = MonetaryAmount()
    statusCode = s.ChoiceField(choices=["SUCCESSFUL", "REFUNDED", "FAILED"])
    method = PaymentMethod()
    refundedAmount = MonetaryAmount(
        required=False, help_text="What of it was given back (REFUNDED once all of it was)"
    )


class OrderCredit(s.Serializer):
    creditCode = s.CharField(help_text="Pay a later order of this seller with it")
    amount = MonetaryAmount(help_text="As issued")
    remaining = MonetaryAmount()
    expiresAt = s.DateTimeField()
    sourceOrderId = s.CharField()


class OrderTicket(s.Serializer):
    ticketNumber = s.RegexField(r"^\d{13}$")
    couponNumber = s.IntegerField()
    paxRefId = s.CharField()
    segmentRefId = s.CharField()
    statusCode = s.ChoiceField(choices=["OPEN", "USED", "REFUNDED", "EXCHANGED", "VOID"])


class ServiceAttributes(s.Serializer):
    seat = s.CharField(required=False, help_text="A seat: its designator, e.g. 12A")
    row = s.IntegerField(required=False)
    column = s.CharField(required=False)
    pieceCount = s.IntegerField(required=False, help_text="A checked bag: 1")


class OrderService(s.Serializer):
    itemId = s.CharField(help_text="OOI-...")
    serviceId = s.CharField(help_text="SVR-...")
    code = s.CharField(help_text="Product code: STST, CB1, COB, PRIO...")
    name = s.CharField()
    category = s.CharField(help_text="seat, baggage, pets, priority")
    ownerCode = s.CharField()
    statusCode = s.ChoiceField(
        choices=["CONFIRMED", "CANCELLED"],
        help_text="CANCELLED lines stay in view (a cancelled order, a replaced seat)",
    )
    totalPrice = Price(
        help_text="base 0; the product's price as a fee (SeatFee, BaggageFee, ServiceFee: the "
        "passengerPricing amount it was offered at) plus US tax (its taxAmount)"
    )
    paxRefId = s.CharField()
    segmentRefId = s.CharField(required=False)
    journeyRefId = s.CharField(required=False)
    attributes = ServiceAttributes(required=False)
    included = s.BooleanField(required=False, help_text="Part of the bundle, at price 0")
    emdNumber = s.RegexField(r"^\d{13}$", required=False, help_text="Paid services only")


class OrderEmd(s.Serializer):
    emdNumber = s.RegexField(r"^\d{13}$", help_text="The EMD's document number")
    paxRefId = s.CharField()
    serviceRefId = s.CharField(help_text="The services[].serviceId it pays for")
    orderItemRefId = s.CharField(help_text="That service's order item (services[].itemId)")
    segmentRefId = s.CharField(required=False, help_text="A segment service: its segment")
    journeyRefId = s.CharField(required=False, help_text="A journey service: its journey")
    amount = MonetaryAmount(help_text="What the service cost, tax included")
    statusCode = s.ChoiceField(
        choices=["OPEN", "CLOSED"],
        help_text="OPEN while the service is live; CLOSED once it is cancelled (what its "
        "value became is in order.totals)",
    )


class ChangedSegment(s.Serializer):
    segmentId = s.CharField()
    marketingCarrier = s.CharField()
    marketingFlightNumber = s.CharField()
    origin = s.CharField()
    destination = s.CharField()
    departureDateTime = s.CharField()
    arrivalDateTime = s.CharField()
    cabinTypeCode = s.CharField()
    rbd = s.CharField()
    operationalStatus = s.ChoiceField(
        choices=["CONFIRMED", "AIRLINE_CANCELLED"],
        required=False,
        help_text="In `added` only: whether its flight flies (our own field, as on "
        "journeys[].segments[])",
    )


class ChangedJourney(s.Serializer):
    journeyId = s.CharField(help_text="The order's journey (journeys[].journeyId)")
    origin = s.CharField()
    destination = s.CharField()
    departureDateTime = s.CharField()
    arrivalDateTime = s.CharField()
    duration = s.CharField()
    segments = ChangedSegment(many=True)


class AirlineInitiatedChange(s.Serializer):
    id = s.CharField(help_text="AIC-...: the airlineChangeId change order answers it with")
    status = s.ChoiceField(choices=["PENDING", "ACCEPTED", "CANCELLED", "CHANGED"])
    detectedAt = s.DateTimeField()
    resolvedAt = s.DateTimeField(required=False, help_text="Once answered")
    reasons = s.ListField(
        child=s.ChoiceField(choices=["RETIMED", "CANCELLED", "EQUIPMENT", "CONNECTION"])
    )
    removed = ChangedJourney(many=True, help_text="The affected journeys as booked")
    added = ChangedJourney(
        many=True,
        help_text="The same journeys as their flights fly now; a journey with a cancelled "
        "flight is not here",
    )
    availableActions = s.ListField(
        child=s.ChoiceField(
            choices=["AcceptAirlineChange", "ReshopItinerary", "CancelForAirlineChange"]
        ),
        help_text="While PENDING: AcceptAirlineChange and CancelForAirlineChange are change "
        "order types; ReshopItinerary then quote and AcceptReshopOffer exchange the journeys "
        "at no charge",
    )


class OrderFeeCharged(s.Serializer):
    feeId = s.CharField(help_text="FEE-...")
    type = s.ChoiceField(choices=["ServiceFee", "PenaltyFee"])
    code = s.CharField(help_text="NCF name change, CHG flight change, CXL cancellation")
    description = s.CharField()
    amount = MonetaryAmount()
    paxRefId = s.CharField(required=False, help_text="The passenger it was charged for")
    emdNumber = s.RegexField(
        r"^\d{13}$", required=False, help_text="Its EMD, once the order is ticketed"
    )


class OrderViewData(s.Serializer):
    order = OrderHeader()
    services = OrderService(many=True)
    pax = OrderPax(many=True)
    contacts = OrderContact(many=True)
    journeys = OrderJourney(many=True)
    payments = OrderPayment(many=True)
    fees = OrderFeeCharged(
        many=True, help_text="Fees and penalties charged; each is a line of totalPrice.fees"
    )
    tickets = OrderTicket(many=True)
    credits = OrderCredit(many=True, help_text="Airline credit this order gave back")
    emds = OrderEmd(
        many=True,
        help_text="Our own field (not in SPEC.md): the EMDs issued for paid services, listed "
        "beside the tickets, each linked to the service it pays for",
    )
    airlineInitiatedChanges = AirlineInitiatedChange(
        many=True, help_text="Schedule changes the airline made to this order's flights"
    )


class OrderSummary(s.Serializer):
    orderId = s.CharField()
    recordLocator = s.CharField()
    statusCode = s.CharField(required=False)
    departureDate = s.DateField(required=False)
    flightNumber = s.CharField(required=False)
    origin = s.CharField(required=False)
    destination = s.CharField(required=False)
    sourceOrganizationCode = s.CharField(required=False)
    passengerName = Name(required=False)


class Page(s.Serializer):
    pageSize = s.IntegerField()
    count = s.IntegerField()
    lastIndex = s.IntegerField(help_text="Send as lastIndex for the next page")
    hasMore = s.BooleanField()


class OrderListData(s.Serializer):
    orders = OrderSummary(many=True)
    page = Page()


ORDER_VIEW_RESPONSE = enveloped("OrderView", OrderViewData())
ORDER_LIST_RESPONSE = enveloped("OrderList", OrderListData())

_PASSENGERS = [
    {
        "passengerId": "ADT-1",
        "type": "ADT",
        "name": {"givenName": "Ada", "surname": "Lovelace"},
        "infantPassengerId": "INF-1",
    },
    {
        "passengerId": "INF-1",
        "type": "INF",
        "name": {"givenName": "Byron", "surname": "Lovelace"},
        "dateOfBirth": "2026-02-01",
    },
]
_CONTACT = {"emailAddress": "ada@example.com", "phoneNumber": "+1 401 555 0100"}
CREATE_EXAMPLES = [
    OpenApiExample(
        "Hold",
        request_only=True,
        value={
            "offerId": "<priced offerId>",
            "offerItemIds": ["<priced offerId>.1"],
            "passengers": _PASSENGERS,
            "contact": _CONTACT,
            "payment": {"type": "Hold"},
        },
    ),
    OpenApiExample(
        "Card",
        request_only=True,
        value={
            "offerId": "<priced offerId>",
            "offerItemIds": ["<priced offerId>.1", "<priced offerId>.2"],
            "passengers": _PASSENGERS,
            "contact": _CONTACT,
            "payment": {
                "type": "CreditCard",
                "cardType": "VI",
                "cardNumber": "4111111111111111",
                "expiryDate": "1230",
                "securityCode": "123",
                "payer": {"name": {"givenName": "Ada", "surname": "Lovelace"}},
            },
        },
    ),
    OpenApiExample(
        "Hold with a seat and a bag",
        request_only=True,
        value={
            "offerId": "<priced offerId>",
            "offerItemIds": ["<priced offerId>.1"],
            "passengers": _PASSENGERS,
            "contact": _CONTACT,
            "payment": {"type": "Hold"},
            "ancillaries": [
                {
                    "offerId": "<seats offerId of the priced offer>",
                    "offerItemId": "<seats offerId>.2",
                    "passengerIds": ["ADT-1"],
                    "seat": {"row": 12, "column": "A"},
                },
                {
                    "offerId": "<services offerId of the priced offer>",
                    "offerItemId": "<services offerId>.1",
                    "passengerIds": ["ADT-1"],
                },
            ],
        },
    ),
    OpenApiExample(
        "Airline credit",
        description="A credit of this seller (an earlier order's `credits[]`) that covers "
        "the whole amount due: CONFIRMED and ticketed, one payment of method Credit.",
        request_only=True,
        value={
            "offerId": "<priced offerId>",
            "offerItemIds": ["<priced offerId>.1"],
            "passengers": _PASSENGERS,
            "contact": _CONTACT,
            "payment": {"type": "AirlineCredit", "creditCode": "MXAB23CD45EF"},
        },
    ),
    OpenApiExample(
        "Airline credit and a card for the rest",
        description="The credit is spent first; the card is charged what it does not cover, "
        "in the same request. A declined card spends nothing of the credit and books nothing.",
        request_only=True,
        value={
            "offerId": "<priced offerId>",
            "offerItemIds": ["<priced offerId>.1"],
            "passengers": _PASSENGERS,
            "contact": _CONTACT,
            "payment": {
                "type": "AirlineCredit",
                "creditCode": "MXAB23CD45EF",
                "card": {
                    "cardType": "VI",
                    "cardNumber": "4111111111111111",
                    "expiryDate": "1230",
                    "securityCode": "123",
                    "payer": {"name": {"givenName": "Ada", "surname": "Lovelace"}},
                },
            },
        },
    ),
]

CHANGE_EXAMPLES = [
    OpenApiExample(
        "Add a seat and a bag",
        request_only=True,
        value={
            "changes": [
                {
                    "type": "AcceptOffer",
                    "offerId": "<seats offerId>",
                    "offerItemId": "<seats offerId>.3",
                    "passengerIds": ["PAX-1A2B3C4D"],
                    "seat": {"row": 12, "column": "A"},
                },
                {
                    "type": "AcceptOffer",
                    "offerId": "<services offerId>",
                    "offerItemId": "<services offerId>.1",
                    "passengerIds": ["PAX-1A2B3C4D"],
                },
            ]
        },
    ),
    OpenApiExample(
        "Confirm a hold",
        request_only=True,
        value={
            "changes": [{"type": "ConfirmHold"}],
            "payment": {
                "type": "CreditCard",
                "cardType": "VI",
                "cardNumber": "4111111111111111",
                "expiryDate": "1230",
                "securityCode": "123",
            },
        },
    ),
    OpenApiExample(
        "Cancel a hold", request_only=True, value={"changes": [{"type": "CancelUnpaidOrder"}]}
    ),
    OpenApiExample(
        "Cancel a round trip (as reshop CancelOrder quoted it)",
        request_only=True,
        value={
            "changes": [
                {"type": "CancelJourney", "journeyRef": "JOU-1A2B3C4D"},
                {"type": "CancelJourney", "journeyRef": "JOU-5E6F7A8B"},
            ]
        },
    ),
    OpenApiExample(
        "Correct a passenger and the contact",
        request_only=True,
        value={
            "changes": [
                {
                    "type": "UpdatePassenger",
                    "passengerId": "PAX-1A2B3C4D",
                    "patch": {
                        "dateOfBirth": "1990-05-17",
                        "contacts": {"emailAddress": "ada@example.com"},
                    },
                },
                {
                    "type": "UpdateContact",
                    "contact": {
                        "emailAddress": "bookings@example.com",
                        "phoneNumber": "+1 401 555 0100",
                        "name": {"givenName": "Ada", "surname": "Lovelace"},
                    },
                },
            ],
            "passengers": [{"passengerId": "PAX-5E6F7A8B", "gender": "Male"}],
        },
    ),
    OpenApiExample(
        "Accept a quoted reshop offer (card for an AddCol difference)",
        request_only=True,
        value={
            "changes": [
                {
                    "type": "AcceptReshopOffer",
                    "offerId": "<quote offerId>",
                    "offerItemIds": ["<quote offerId>.1"],
                }
            ],
            "payment": {
                "type": "CreditCard",
                "cardType": "VI",
                "cardNumber": "4111111111111111",
                "expiryDate": "1230",
                "securityCode": "123",
            },
        },
    ),
]

CHANGE_EXAMPLES += [
    OpenApiExample(
        "Accept an airline-initiated change",
        request_only=True,
        value={"changes": [{"type": "AcceptAirlineChange", "airlineChangeId": "AIC-3F9A1C2B"}]},
    ),
    OpenApiExample(
        "Cancel for an airline-initiated change (everything back as airline credit)",
        request_only=True,
        value={
            "changes": [
                {
                    "type": "CancelForAirlineChange",
                    "airlineChangeId": "AIC-3F9A1C2B",
                    "refundTo": "AirlineCredit",
                }
            ]
        },
    ),
]

RESHOP_EXAMPLES = [
    OpenApiExample(
        "Replacement flights for a journey",
        request_only=True,
        value={
            "instruction": {
                "type": "ReshopItinerary",
                "originDestinations": [
                    {"origin": "PVD", "destination": "CHS", "departureDate": "2027-01-16"}
                ],
                "deleteOrderItemRefIds": ["OOI-1A2B3C4D"],
            }
        },
    ),
    OpenApiExample(
        "What cancelling the whole order gives back",
        request_only=True,
        value={"instruction": {"type": "CancelOrder"}},
    ),
    OpenApiExample(
        "What cancelling one journey gives back",
        request_only=True,
        value={"instruction": {"type": "DeleteOrderItems", "orderItemRefIds": ["OOI-1A2B3C4D"]}},
    ),
    OpenApiExample(
        "What a name change costs",
        request_only=True,
        value={
            "instruction": {
                "type": "NameChange",
                "paxRefId": "PAX-1A2B3C4D",
                "surname": "Byron",
                "givenName": "Ada",
            }
        },
    ),
]


class Differential(s.Serializer):
    offerItemId = s.CharField()
    oldTotal = MonetaryAmount(
        help_text="What the replaced lines were worth: the flight items and the services "
        "that cannot follow (serviceChanges DROPPED)"
    )
    newTotal = MonetaryAmount(help_text="What their replacement costs, fees included")
    balanceDelta = MonetaryAmount(
        help_text="newTotal - oldTotal: negative for a refund. On a quote, exactly what "
        "AcceptReshopOffer charges (AddCol) or gives back (Refund); on a hold, what the "
        "balance due moves by"
    )
    differentialTypeCode = s.ChoiceField(choices=["AddCol", "Refund", "EvenExchange"])


class Cancellation(s.Serializer):
    penaltyAmount = MonetaryAmount()
    refundAmount = MonetaryAmount(help_text="Back to the original payment")
    creditAmount = MonetaryAmount(help_text="Given as airline credit (DESIGN.md §11)")
    isRefundable = s.BooleanField()


class NameChangeQuote(s.Serializer):
    paxRefId = s.CharField()
    fee = MonetaryAmount(help_text="Per passenger; 0 before tickets are issued")


class ReshopOfferItem(s.Serializer):
    offerItemId = s.CharField()
    journeyRefIds = s.ListField(child=s.CharField())
    totalPrice = Price()
    fare = Fare()
    passengerPrices = PassengerPrice(
        many=True, help_text="paxRefIds are the order's passengers (pax[].paxId, PAX-...)"
    )
    replacesOrderItemRefIds = s.ListField(child=s.CharField())


class ServiceChange(s.Serializer):
    serviceId = s.CharField(help_text="SVR- id of the order's service")
    itemId = s.CharField(help_text="Its OOI- order item id")
    code = s.CharField()
    name = s.CharField()
    paxRefId = s.CharField()
    offerItemId = s.CharField(help_text="The offer item (itemChangeQuotes) that moves it")
    replacesOrderItemRefId = s.CharField(help_text="The flight item it belonged to")
    action = s.ChoiceField(
        choices=["MOVED", "DROPPED"],
        help_text="MOVED to the new journey at the price paid; DROPPED: cancelled on "
        "accept, its value netted against the difference or given back with it",
    )
    amount = MonetaryAmount(help_text="What it was paid (its totalPrice.total)")
    balanceDelta = MonetaryAmount(
        help_text="Its part in the differential's balanceDelta: 0 when MOVED, minus its "
        "value when DROPPED"
    )
    seat = s.CharField(required=False, help_text="A seat: its designator, e.g. 8A")
    journeyRefId = s.CharField(required=False, help_text="MOVED: the new journey (journeys[])")
    segmentRefId = s.CharField(
        required=False, help_text="MOVED, on a segment: the new segment (journeys[].segments[])"
    )
    reason = s.CharField(
        required=False,
        help_text="DROPPED: why it cannot follow (seat taken, segment not flown, or the new "
        "fare decides a bundle inclusion)",
    )


class ReshopOffer(s.Serializer):
    offerId = s.CharField(help_text="Price it with quote order (ERR-3004 on price offer)")
    ownerCode = s.CharField()
    expiresAt = s.DateTimeField()
    totalPrice = Price()
    items = ReshopOfferItem(many=True)
    priceDifferential = Differential()
    serviceChanges = ServiceChange(
        many=True, help_text="Every seat and service of the replaced journeys, and where it goes"
    )


class ReshopData(s.Serializer):
    orderId = s.CharField()
    recordLocator = s.CharField()
    pax = OrderPax(many=True)
    offers = ReshopOffer(many=True, help_text="Empty for a pure cancellation quote")
    journeys = Flight(
        many=True,
        required=False,
        help_text="ReshopItinerary: the replacement flights the offers' journeyRefIds name, "
        "as offer search shows flights (SPEC.md §2.2 Flight)",
    )
    cancellation = Cancellation(required=False, help_text="CancelOrder, DeleteOrderItems")
    nameChange = NameChangeQuote(required=False, help_text="NameChange")


class QuoteOffer(s.Serializer):
    offerId = s.CharField(help_text="Accept it with change order AcceptReshopOffer")
    ownerCode = s.CharField()
    expiresAt = s.DateTimeField()
    totalPrice = Price()
    items = ReshopOfferItem(many=True)


class QuoteData(s.Serializer):
    orderId = s.CharField()
    recordLocator = s.CharField()
    pax = OrderPax(many=True)
    priceDifferential = Differential()
    itemChangeQuotes = Differential(many=True)
    offer = QuoteOffer()
    journeys = Flight(
        many=True,
        help_text="The flights the offer's journeyRefIds name, as offer search shows flights "
        "(SPEC.md §2.2 Flight)",
    )
    serviceChanges = ServiceChange(
        many=True, help_text="Every seat and service of the replaced journeys, and where it goes"
    )


RESHOP_RESPONSE = enveloped("Reshop", ReshopData())
QUOTE_RESPONSE = enveloped("Quote", QuoteData())
