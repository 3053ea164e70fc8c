"""Shopping and pricing endpoints: validate, call one service, render."""

from drf_spectacular.utils import extend_schema

from airline.api import clock
from airline.api.endpoints import ServiceView
from airline.api.openapi import ERROR_RESPONSES
from airline.api.responses import ok
from airline.network.itineraries import network_index
from offers import presenters
from offers.ancillaries import offer_trip, seat_maps, service_list
from offers.endpoints import AncillariesView
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
from offers.services import Selection, check_search, offers_price, offers_search
from offers.store import OfferOwner


class _Search(ServiceView):
    def _search(self, request):
        query = check_search(data=self.body(SearchIn), now=clock.now())
        return query, offers_search(principal=self.principal, query=query)


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


class OfferPriceView(ServiceView):
    @extend_schema(
        operation_id="priceOffers",
        tags=["shopping"],
        request=PriceIn,
        examples=PRICE_EXAMPLES,
        responses={201: PRICED_RESPONSE, **ERROR_RESPONSES},
    )
    def post(self, request, version):
        """Price selected offers together into one quote with a fresh expiry (SPEC.md §4.5)."""
        body = self.body(PriceIn)
        selections = [Selection(s["offerId"], tuple(s["offerItemIds"])) for s in body["selections"]]
        batch, journeys = offers_price(
            principal=self.principal, selections=selections, passengers=body["passengers"]
        )
        return ok(presenters.priced_view(batch, journeys, network_index()), status=201)


class _OfferAncillaries(AncillariesView):
    def trip(self, now, *, offerId):
        body = self.body(AncillaryIn)
        return offer_trip(
            offer_id=offerId,
            item_ids=body["offerItemIds"],
            passengers=body.get("passengers"),
            owner=OfferOwner.of(self.principal),
            now=now,
        )


class OfferSeatsView(_OfferAncillaries):
    build = staticmethod(seat_maps)

    @extend_schema(
        operation_id="offerSeatMaps",
        tags=["ancillaries"],
        request=AncillaryIn,
        responses={200: SEAT_MAPS_RESPONSE, **ERROR_RESPONSES},
    )
    def post(self, request, version, offerId):
        """Seat maps of a cached offer's flights, priced per passenger (SPEC.md §4.6).

        A unit is `Open` exactly when it is `assignable` and carries `passengerPricing`.
        `passengers`, when sent, must be passengers of the offer (ERR-1005 otherwise).
        A key whose ancillary categories leave out SEAT gets no seat map: ERR-8001 (403),
        whose description says so."""
        return self.answer(offerId=offerId)


class OfferServicesView(_OfferAncillaries):
    build = staticmethod(service_list)

    @extend_schema(
        operation_id="offerServices",
        tags=["ancillaries"],
        request=AncillaryIn,
        responses={200: SERVICES_RESPONSE, **ERROR_RESPONSES},
    )
    def post(self, request, version, offerId):
        """Bags, pets and priority for a cached offer, priced per passenger (SPEC.md §4.6).

        `passengers`, when sent, must be passengers of the offer (ERR-1005 otherwise). A
        key that may sell seats only gets no service list: ERR-8001 (403)."""
        return self.answer(offerId=offerId)
