"""The order view and OrderList as the schema draws them (SPEC.md §2.5, §2.8)."""

from rest_framework import serializers as s

from airline.api.openapi import enveloped
from offers.openapi import Fare, MonetaryAmount, Price


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
