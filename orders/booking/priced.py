"""The priced offer's items as the journeys they fly, and the check, under the legs' locks,
that each leg is still as it was priced and as the worker's schedule index shows it.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from airline.api.errors import ApiError, Err
from airline.fares.money import Price
from airline.network.inventory import (
    LegCheck,
    LockedLeg,
    legs_as_shown,
)
from airline.network.itineraries import DatedLeg
from airline.network.itineraries import Journey as NetworkJourney
from airline.network.services import station_zone
from offers.store import PricedItem
from offers.wire import journey_id, local_time
from orders.booking.ancillaries import (
    IN_CREATE,
    SaleLine,
    check_seats_still_sellable,
)


@dataclass(frozen=True)
class BookedJourney:
    """A priced offer item with the journey it flies."""

    item: PricedItem
    journey: NetworkJourney

    @cached_property
    def price(self) -> Price:
        """The item's total price, read once from its wire."""
        return Price.from_wire(self.item.total_price)


def journey_ref(booked: BookedJourney) -> str:
    """The JOU- id of a booked journey: the priced offer's, so that seat and service
    items offered for it name the order's journey."""
    return booked.item.journey_id or journey_id(booked.journey)


def as_priced(booked: Sequence[BookedJourney], *, seats: Sequence[SaleLine] = ()) -> LegCheck:
    """What a booking's legs must still be under their locks: operating, at the times and
    on the aircraft its priced offer showed (the flight wire priced items keep) and that
    the journeys it writes carry (taken from this worker's schedule index, which may be
    older than the offer: legs_as_shown), and the seats it buys (`seats`: the sale's
    lines) still sellable on them (check_seats_still_sellable). The worker's schedule
    and seat layouts may be a second old; the locked rows are not."""
    written = legs_as_shown(
        (leg for b in booked for s in b.journey.segments for leg in s.legs),
        refuse=_not_as_written,
    )
    priced: dict[int, Mapping[str, Any]] = {
        leg_id: leg
        for b in booked
        for leg_ids, segment in zip(b.item.segments, b.item.flight["segments"], strict=True)
        for leg_id, leg in zip(leg_ids, segment["legs"], strict=True)
    }

    def check(locked: Mapping[int, LockedLeg]) -> None:
        for leg_id, shown in priced.items():
            leg = locked.get(leg_id)
            if leg is None or leg.is_cancelled:
                raise _not_as_priced(shown, "no longer operates")
            if (
                local_time(leg.departs_at, station_zone(shown["origin"])),
                local_time(leg.arrives_at, station_zone(shown["destination"])),
                leg.aircraft_type,
            ) != (shown["departureDateTime"], shown["arrivalDateTime"], shown["aircraftTypeCode"]):
                raise _not_as_priced(shown, "has changed since it was priced")
        written(locked)
        check_seats_still_sellable(lines=seats, locked=locked, refuse=IN_CREATE)

    return check


def _not_as_priced(leg: Mapping[str, Any], what: str) -> ApiError:
    return ApiError(
        Err.ORDER_NOT_CREATED,
        f"The flight leg {leg['origin']}-{leg['destination']} departing "
        f"{leg['departureDateTime']} {what}; search again",
        path="offerId",
    )


def _not_as_written(leg: DatedLeg, what: str) -> ApiError:
    return ApiError(
        Err.ORDER_NOT_CREATED,
        f"The flight leg {leg.origin}-{leg.destination} departing "
        f"{local_time(leg.departs_at, station_zone(leg.origin))} {what}; search again",
        path="offerId",
    )
