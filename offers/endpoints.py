"""The base of the ancillary endpoints of offers and of orders (SPEC.md §4.6, §4.11):
here rather than in offers.views so that orders' views build on it without importing
another app's views."""

from airline.api import clock
from airline.api.endpoints import ServiceView
from airline.api.responses import ok
from offers.ancillaries import ancillary_lookup
from offers.store import OfferOwner


class AncillariesView(ServiceView):
    """Seat maps or a service list (`build`) of a trip: a cached offer's (SPEC.md §4.6)
    or a booking's (§4.11, `orders.views`). Subclasses say how the trip is found."""

    build = None  # offers.ancillaries.seat_maps or service_list

    def trip(self, now, **ids):
        raise NotImplementedError

    def answer(self, **ids):
        now = clock.now()
        with ancillary_lookup():
            data = type(self).build(
                trip=self.trip(now, **ids),
                owner=OfferOwner.of(self.principal),
                categories=self.principal.key.allowed_ancillary_categories,
                now=now,
            )
        return ok(data)
