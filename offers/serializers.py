"""Request shapes of shopping and pricing (SPEC.md §4.4, §4.5). Shape only: the rules
that span fields (dates in order, passenger mix, markets) are in offers/services.py."""

from rest_framework import serializers

from airline.api.serializers import IsoDateField, StrictSerializer
from offers.passengers import MAX_LISTED

CABINS = ["Y", "W", "C", "F"]


class OriginDestinationIn(StrictSerializer):
    origin = serializers.RegexField(r"^[A-Za-z]{3}$", help_text="IATA airport code, any case")
    destination = serializers.RegexField(r"^[A-Za-z]{3}$")
    departureDate = IsoDateField()


class PassengerIn(StrictSerializer):
    type = serializers.ChoiceField(choices=["ADT", "CHD", "INF"])
    paxId = serializers.CharField(min_length=1, max_length=64, required=False)
    infantRefId = serializers.CharField(
        min_length=1,
        max_length=64,
        required=False,
        help_text="On an adult (ADT): the paxId of the infant (INF) on their lap. Seat maps "
        "of the offer then give that adult no exit row (and the other adults may have "
        "one); without it the first adults are taken to carry the infants. Create order's "
        "infantPassengerId decides for the booking.",
    )


class SearchIn(StrictSerializer):
    originDestinations = OriginDestinationIn(many=True, allow_empty=False, max_length=6)
    passengers = PassengerIn(many=True, allow_empty=False, max_length=MAX_LISTED)
    cabinTypeCode = serializers.ChoiceField(choices=CABINS, required=False)
    currency = serializers.RegexField(
        r"^[A-Z]{3}$", required=False, help_text="Only USD is accepted"
    )


class SelectionIn(StrictSerializer):
    offerId = serializers.CharField(min_length=1, max_length=100)
    offerItemIds = serializers.ListField(
        child=serializers.CharField(min_length=1, max_length=100), allow_empty=False
    )


class PriceIn(StrictSerializer):
    selections = SelectionIn(many=True, allow_empty=False)
    passengers = PassengerIn(many=True, allow_empty=False, max_length=MAX_LISTED)


class AncillaryIn(StrictSerializer):
    """Body of POST /offers/{offerId}/seats and /services (SPEC.md §4.6)."""

    offerItemIds = serializers.ListField(
        child=serializers.CharField(min_length=1, max_length=100), allow_empty=False
    )
    passengers = PassengerIn(
        many=True,
        allow_empty=False,
        required=False,
        max_length=MAX_LISTED,
        help_text="The offer's passengers (default), or some of them: each must be a "
        "passenger of the offer by paxId and type (a paxId left out is numbered as the "
        "search did, ADT-1...). Anyone else is ERR-1005 on `passengers`: create order books "
        "exactly the priced offer's party, so prices for others could never be booked.",
    )
