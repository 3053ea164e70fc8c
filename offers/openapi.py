"""OpenAPI schemas and examples of shopping and pricing (documentation only: responses
are built as plain dicts on the hot path, DESIGN.md §2)."""

from drf_spectacular.utils import OpenApiExample
from rest_framework import serializers as s

from airline.api.openapi import enveloped


class MonetaryAmount(s.Serializer):
    amount = s.DecimalField(max_digits=12, decimal_places=2)
    currency = s.RegexField(r"^[A-Z]{3}$")


class TaxLine(s.Serializer):
    code = s.CharField(required=False)
    description = s.CharField(required=False)
    amount = MonetaryAmount()


class FeeLine(TaxLine):
    type = s.ChoiceField(
        choices=[
            "Tax",
            "Surcharge",
            "ServiceFee",
            "PenaltyFee",
            "SeatFee",
            "BaggageFee",
            "PaymentFee",
        ]
    )


class Price(s.Serializer):
    total = MonetaryAmount()
    base = MonetaryAmount()
    taxes = TaxLine(many=True)
    fees = FeeLine(many=True)
    points = s.IntegerField(required=False)


class Pax(s.Serializer):
    paxId = s.CharField()
    ptc = s.ChoiceField(choices=["ADT", "CHD", "INF"])
    infantRefId = s.CharField(
        required=False, help_text="On an adult: the infant on their lap, as the request named it"
    )


class PaymentFunction(s.Serializer):
    paymentTypeCode = s.CharField()
    paymentBrandCode = s.CharField(required=False)
    paymentMethodCountryCode = s.CharField(required=False)
    paymentRedirectionInd = s.BooleanField(required=False)


class Leg(s.Serializer):
    legId = s.CharField()
    origin = s.CharField()
    destination = s.CharField()
    departureDateTime = s.CharField(help_text="Station-local ISO 8601, no offset")
    arrivalDateTime = s.CharField()
    aircraftTypeCode = s.CharField(required=False)
    carrierAircraftTypeCode = s.CharField(required=False)
    govtApprovalDisclosure = s.CharField(required=False)


class Segment(s.Serializer):
    segmentId = s.CharField()
    marketingCarrier = s.CharField()
    marketingFlightNumber = s.CharField(help_text="Without the carrier")
    operatingCarrier = s.CharField()
    operatingFlightNumber = s.CharField()
    origin = s.CharField()
    destination = s.CharField()
    departureDateTime = s.CharField()
    arrivalDateTime = s.CharField()
    cabinTypeCode = s.ChoiceField(choices=["Y", "W", "C", "F"])
    cabinName = s.CharField()
    rbd = s.CharField()
    duration = s.CharField(help_text="ISO 8601 duration")
    statusCode = s.CharField(required=False, help_text="WAITLISTED only")
    govtApprovalDisclosure = s.CharField(required=False)
    legs = Leg(many=True)


class PricedJourney(s.Serializer):
    journeyId = s.CharField()
    origin = s.CharField()
    destination = s.CharField()
    departureDateTime = s.CharField()
    arrivalDateTime = s.CharField()
    duration = s.CharField()
    stops = s.IntegerField(help_text="Intermediate stops: total legs - 1")
    segments = Segment(many=True)


class Flight(PricedJourney):
    flightNumbers = s.ListField(child=s.CharField(), help_text="Carrier plus number, e.g. MX101")


# Fare sub-structures (SPEC.md §2.2), as airline/fares/validators.py holds the stored
# bundles to them.
class Benefit(s.Serializer):
    label = s.CharField()
    included = s.BooleanField()
    status = s.CharField(required=False)
    quantity = s.IntegerField(required=False)


class WeightAllowance(s.Serializer):
    maximumWeightMeasure = s.FloatField(required=False)
    weightUnitOfMeasurement = s.ChoiceField(choices=["KGM", "LBR"], required=False)


class DimensionAllowance(s.Serializer):
    lengthUnitOfMeasurement = s.ChoiceField(choices=["CMT", "FOT", "INH", "MTR"])
    heightMeasure = s.FloatField(required=False)
    lengthMeasure = s.FloatField(required=False)
    linearMeasure = s.FloatField(required=False)
    widthMeasure = s.FloatField(required=False)


class BaggageDisclosure(s.Serializer):
    code = s.CharField()
    description = s.CharField()
    ruleTypeCode = s.CharField(help_text="CarryOn, Checked, PersonalItem...")
    weightAllowance = WeightAllowance(required=False)
    dimensionAllowance = DimensionAllowance(required=False)


class PenaltyRestriction(s.Serializer):
    allowedModificationInd = s.BooleanField(required=False)
    amount = s.FloatField(required=False)
    changeTypeCode = s.CharField(required=False)
    creditPercent = s.FloatField(required=False)
    description = s.CharField(required=False)
    journeyStageCode = s.CharField(required=False)
    maxDaysBeforeDeparture = s.FloatField(required=False)
    maxHoursBeforeDeparture = s.FloatField(required=False)
    minDaysBeforeDeparture = s.FloatField(required=False)
    minHoursBeforeDeparture = s.FloatField(required=False)
    priceDifferenceApplies = s.BooleanField(required=False)


class Penalty(s.Serializer):
    code = s.CharField()
    description = s.CharField()
    typeCode = s.ChoiceField(choices=["Change", "Cancellation"])
    creditIncludesAddOns = s.BooleanField(required=False)
    creditMethod = s.CharField(required=False, help_text="AirlineCredit, OriginalFormOfPayment")
    creditValidityMonths = s.IntegerField(required=False)
    fixedAmount = s.FloatField(required=False)
    fullReservationOnly = s.BooleanField(required=False)
    requiresRewardsAccount = s.BooleanField(required=False)
    restrictions = PenaltyRestriction(many=True, required=False)


class SeatProfile(s.Serializer):
    code = s.CharField()
    description = s.CharField()
    characteristicCodes = s.ListField(child=s.CharField(), required=False)


class Fare(s.Serializer):
    fareBasisCode = s.CharField(required=False)
    cabinTypeCode = s.CharField(required=False)
    cabinName = s.CharField(required=False)
    rbd = s.CharField(required=False)
    priceClassRefId = s.CharField(required=False)
    paxRefIds = s.ListField(child=s.CharField(), required=False)
    bundleName = s.CharField(required=False, help_text="No Flex, Nice, Nicer or Nicest")
    description = s.CharField(required=False)
    benefits = Benefit(many=True, required=False)
    baggageDisclosures = BaggageDisclosure(many=True, required=False)
    penalties = Penalty(many=True, required=False)
    seatProfiles = SeatProfile(many=True, required=False)


class PassengerPrice(s.Serializer):
    ptc = s.CharField()
    count = s.IntegerField()
    paxRefIds = s.ListField(child=s.CharField())
    price = Price(help_text="One passenger of this type")


class OfferItem(s.Serializer):
    offerItemId = s.CharField()
    legIndex = s.IntegerField(help_text="Index of the request originDestination covered")
    totalPrice = Price()
    flight = Flight()
    fare = Fare()
    passengerPrices = PassengerPrice(many=True)
    seatsRemaining = s.IntegerField(required=False, max_value=9)


class Offer(s.Serializer):
    offerId = s.CharField()
    ownerCode = s.CharField()
    expiresAt = s.DateTimeField()
    description = s.CharField(required=False)
    totalPrice = Price()
    offerItems = OfferItem(many=True)


class FlatOffers(s.Serializer):
    view = s.ChoiceField(choices=["flat"])
    pax = Pax(many=True)
    paymentFunctions = PaymentFunction(many=True)
    offers = Offer(many=True)


class JourneyOption(s.Serializer):
    offerId = s.CharField()
    offerItemId = s.CharField()
    expiresAt = s.DateTimeField()
    totalPrice = Price()
    fare = Fare()
    passengerPrices = PassengerPrice(many=True)


class DirectionJourney(s.Serializer):
    flight = Flight()
    options = JourneyOption(many=True)


class Direction(s.Serializer):
    legIndex = s.IntegerField()
    origin = s.CharField()
    destination = s.CharField()
    departureDate = s.DateField()
    journeys = DirectionJourney(many=True)


class ByJourneyOffers(s.Serializer):
    view = s.ChoiceField(choices=["byJourney"])
    pax = Pax(many=True)
    directions = Direction(many=True)


class PricedOfferItem(s.Serializer):
    offerItemId = s.CharField()
    totalPrice = Price()
    journeyRefIds = s.ListField(child=s.CharField())
    fare = Fare()
    passengerPrices = PassengerPrice(many=True)


class PricedOfferHeader(s.Serializer):
    offerId = s.CharField(help_text="The new id the merged quote is stored under")
    ownerCode = s.CharField()
    expiresAt = s.DateTimeField()
    description = s.CharField()
    totalPrice = Price()
    priceChanged = s.BooleanField(
        help_text="Whether totalPrice differs from the selected offers' totals as the search "
        "showed them (a booking class sold out, a fare changed)"
    )
    previousTotal = MonetaryAmount(
        required=False, help_text="When priceChanged: the total the search showed"
    )
    items = PricedOfferItem(many=True)


class PricedOffer(s.Serializer):
    pax = Pax(many=True)
    paymentFunctions = PaymentFunction(many=True)
    offer = PricedOfferHeader()
    journeys = PricedJourney(many=True)


FLAT_RESPONSE = enveloped("FlatOffers", FlatOffers())
BY_JOURNEY_RESPONSE = enveloped("ByJourneyOffers", ByJourneyOffers())
PRICED_RESPONSE = enveloped("PricedOffer", PricedOffer())

SEARCH_EXAMPLES = [
    OpenApiExample(
        "Round trip, two adults and a child",
        request_only=True,
        value={
            "originDestinations": [
                {"origin": "PVD", "destination": "CHS", "departureDate": "2027-03-01"},
                {"origin": "CHS", "destination": "PVD", "departureDate": "2027-03-08"},
            ],
            "passengers": [{"type": "ADT"}, {"type": "ADT"}, {"type": "CHD"}],
            "currency": "USD",
        },
    ),
    OpenApiExample(
        "One way in business, adult with a lap infant",
        request_only=True,
        value={
            "originDestinations": [
                {"origin": "pvd", "destination": "tpa", "departureDate": "2027-03-01"}
            ],
            "passengers": [{"type": "ADT", "paxId": "P1"}, {"type": "INF", "paxId": "P2"}],
            "cabinTypeCode": "C",
        },
    ),
]
PRICE_EXAMPLES = [
    OpenApiExample(
        "Outbound and return chosen from one search",
        request_only=True,
        value={
            "selections": [
                {"offerId": "kq3Xb1cT9vQwZr2m.1", "offerItemIds": ["kq3Xb1cT9vQwZr2m.1.1"]},
                {"offerId": "kq3Xb1cT9vQwZr2m.9", "offerItemIds": ["kq3Xb1cT9vQwZr2m.9.1"]},
            ],
            "passengers": [{"type": "ADT"}, {"type": "ADT"}, {"type": "CHD"}],
        },
    )
]


class PassengerPricing(s.Serializer):
    offerItemId = s.CharField(help_text="Book it with change order AcceptOffer")
    paxRefId = s.CharField()
    passengerType = s.ChoiceField(choices=["ADT", "CHD", "INF"])
    amount = s.DecimalField(max_digits=10, decimal_places=2)
    currency = s.CharField()
    taxAmount = s.DecimalField(max_digits=10, decimal_places=2)


class SeatUnit(s.Serializer):
    designator = s.CharField(help_text="Seat label, e.g. 12A")
    assignable = s.BooleanField(
        help_text="True exactly when availability is Open; then passengerPricing is present"
    )
    availability = s.ChoiceField(
        choices=["Open", "Reserved", "Blocked", "Restricted"],
        help_text="Open: free and for sale to a passenger of the request. Reserved: held by "
        "a booking on this flight-date. Blocked: not sold on this aircraft. Restricted: "
        "another cabin, a seat zone not on sale, or no passenger of the request may sit "
        "there (exit rows).",
    )
    group = s.CharField(help_text="Price zone: standard, extra_legroom, exit_row, premium")
    properties = s.ListField(child=s.CharField(), help_text="WINDOW, AISLE, MIDDLE, EXIT...")
    passengerPricing = PassengerPricing(many=True, required=False)


class Compartment(s.Serializer):
    designator = s.CharField(help_text="Cabin type code")
    units = SeatUnit(many=True)


class Deck(s.Serializer):
    number = s.IntegerField()
    compartments = Compartment(many=True)


class LegSeatMap(s.Serializer):
    departureStation = s.CharField()
    arrivalStation = s.CharField()
    equipmentType = s.CharField()
    segmentRefId = s.CharField()
    decks = Deck(many=True)


class SeatMaps(s.Serializer):
    offerId = s.CharField(help_text="The ancillary offer holding the offerItemIds below")
    legSeatMaps = LegSeatMap(many=True)


class SegmentAvailability(s.Serializer):
    scope = s.ChoiceField(choices=["segment", "journey", "leg"])
    segmentRefId = s.CharField(required=False)
    journeyRefId = s.CharField(required=False)
    passengerPricing = PassengerPricing(many=True)


class ServiceEntry(s.Serializer):
    serviceCode = s.CharField(help_text="Our product code: CB1, CB2, CB3, COB, PETC, PRIO")
    ssrCode = s.CharField()
    name = s.CharField()
    type = s.CharField(help_text="Baggage, Pets, Priority")
    feeCode = s.CharField()
    requires = s.CharField(required=False, help_text="Sold only with this service (CB2: CB1)")
    segmentAvailability = SegmentAvailability(many=True)


class ServiceList(s.Serializer):
    offerId = s.CharField()
    services = ServiceEntry(many=True)


SEAT_MAPS_RESPONSE = enveloped("SeatMaps", SeatMaps())
SERVICES_RESPONSE = enveloped("ServiceList", ServiceList())
