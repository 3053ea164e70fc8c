"""Reshop offers and quotes as the schema draws them (SPEC.md §2.7, §4.12, §4.13)."""

from rest_framework import serializers as s

from airline.api.openapi import enveloped
from offers.openapi import Fare, Flight, MonetaryAmount, PassengerPrice, Price
from orders.openapi.order_view import OrderPax


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
