"""Shopping and pricing endpoints: validate, call one service, render."""

from drf_spectacular.utils import extend_schema
from rest_framework.views import APIView

from airline.api import clock
from airline.api.openapi import ERROR_RESPONSES
from airline.api.responses import ok
from airline.network.itineraries import network_index
from offers import presenters
from offers.ancillaries import ancillary_lookup, offer_trip, seat_maps, service_list
from offers.openapi import (
    BY_JOURNEY_RESPONSE,
    FLAT_RESPONSE,
    PRICE_EXAMPLES,
    PRICED_RESPONSE,
    SEARCH_EXAMPLES,
    SEAT_MAPS_RESPONSE,
    SERVICES_RESPONSE,
)
from offers.serializers import AncillaryIn, PriceIn, SearchIn
from offers.services import Selection, offers_price, offers_search, search_check


class _Search(APIView):
    def _search(self, request):
        body = SearchIn(data=request.data)
        body.is_valid(raise_exception=True)
        query = search_check(data=body.validated_data, now=clock.now())
        return query, offers_search(principal=request.user, query=query)


class OffersView(_Search):
    @extend_schema(
        operation_id="createOffers",
        tags=["shopping"],
        request=SearchIn,
        examples=SEARCH_EXAMPLES,
        responses={201: FLAT_RESPONSE, **ERROR_RESPONSES},
    )
    def post(self, request, version):
        """Shop: offers for each direction, one per journey and bundle (SPEC.md §4.4)."""
        _, batch = self._search(request)
        return ok(presenters.flat_view(batch), status=201)


class OffersByJourneyView(_Search):
    @extend_schema(
        operation_id="createOffersByJourney",
        tags=["shopping"],
        request=SearchIn,
        examples=SEARCH_EXAMPLES,
        responses={201: BY_JOURNEY_RESPONSE, **ERROR_RESPONSES},
    )
    def post(self, request, version):
        """The same search, grouped by direction and journey (SPEC.md §2.3)."""
        query, batch = self._search(request)
        return ok(presenters.by_journey_view(batch, query), status=201)


class OfferPriceView(APIView):
    @extend_schema(
        operation_id="priceOffers",
        tags=["shopping"],
        request=PriceIn,
        examples=PRICE_EXAMPLES,
        responses={201: PRICED_RESPONSE, **ERROR_RESPONSES},
    )
    def post(self, request, version):
        """Price selected offers together into one quote with a fresh expiry (SPEC.md §4.5)."""
        body = PriceIn(data=request.data)
        body.is_valid(raise_exception=True)
        selections = [
            Selection(s["offerId"], tuple(s["offerItemIds"]))
            for s in body.validated_data["selections"]
        ]
        batch, journeys = offers_price(
            principal=request.user,
            selections=selections,
            passengers=body.validated_data["passengers"],
        )
        return ok(presenters.priced_view(batch, journeys, network_index()), status=201)


class _OfferAncillaries(APIView):
    build = None  # seat_maps or service_list

    def post(self, request, version, offerId):
        body = AncillaryIn(data=request.data)
        body.is_valid(raise_exception=True)
        now = clock.now()
        seller_id = str(request.user.seller.pk)
        with ancillary_lookup():
            trip = offer_trip(
                offer_id=offerId,
                item_ids=body.validated_data["offerItemIds"],
                passengers=body.validated_data.get("passengers"),
                seller_id=seller_id,
                now=now,
            )
            data = type(self).build(
                trip=trip,
                seller_id=seller_id,
                categories=request.user.key.allowed_ancillary_categories,
                now=now,
            )
        return ok(data)


class OfferSeatsView(_OfferAncillaries):
    build = staticmethod(seat_maps)

    @extend_schema(
        operation_id="offerSeatMaps",
        tags=["ancillaries"],
        request=AncillaryIn,
        responses={200: SEAT_MAPS_RESPONSE, **ERROR_RESPONSES},
    )
    def post(self, request, version, offerId):
        """Seat maps of a cached offer's flights, priced per passenger (SPEC.md §4.6)."""
        return super().post(request, version, offerId)


class OfferServicesView(_OfferAncillaries):
    build = staticmethod(service_list)

    @extend_schema(
        operation_id="offerServices",
        tags=["ancillaries"],
        request=AncillaryIn,
        responses={200: SERVICES_RESPONSE, **ERROR_RESPONSES},
    )
    def post(self, request, version, offerId):
        """Bags, pets and priority for a cached offer, priced per passenger (SPEC.md §4.6)."""
        return super().post(request, version, offerId)
