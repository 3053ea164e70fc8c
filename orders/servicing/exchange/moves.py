"""Where the seats and bags of a replaced journey go (SPEC.md §4.12, §4.13): MOVED to the
same leg of the new journey at the price paid, or DROPPED where the new flights have no
such seat or the new bundle decides (its inclusions).
"""

from collections.abc import Sequence
from dataclasses import replace

from django.db.models import Q

from airline.fares.money import ZERO
from airline.fares.terms import BundleTerms
from airline.network.itineraries import network_index
from offers.ancillaries import bundle_terms
from offers.seating import seats_of_configuration, seats_taken
from orders.models import (
    OrderItem,
    Segment,
    Service,
)
from orders.servicing.exchange.records import Replacement


def journey_services(item: OrderItem) -> list[Service]:
    """The live services of the item's journey (on the journey or one of its segments),
    in id order."""
    journey = item.journey
    return list(
        Service.objects.filter(
            Q(journey=journey) | Q(segment__journey=journey), status=Service.Status.ACTIVE
        ).order_by("pk")
    )


def service_moves(
    item: OrderItem, r: Replacement, services: Sequence[Service]
) -> list[tuple[Service, tuple[int, int | None] | None]]:
    """Each of `services` (journey_services of the replaced item) and where it goes: (new
    segment index, new leg id) — a bag or other journey service to the new journey, a
    seat to the same seat on the matching leg of the new flight if it has that seat
    free — or None: it cannot follow and is cancelled, its value given back with the
    difference. A bundle's inclusions go with the bundle (bundle_decides)."""
    if not services:
        return []
    bundle = bundle_terms(r.bundle)
    old_segments = list(item.journey.segments.all())
    new_legs = [legs for legs in r.segments]
    index = network_index()
    flown = index.journey_of(r.segments)
    taken = seats_taken([leg for legs in new_legs for leg in legs])
    moves: list[tuple[Service, tuple[int, int | None] | None]] = []
    for service in services:
        if bundle_decides(service, bundle):
            moves.append((service, None))
            continue
        if service.segment_id is None:
            moves.append((service, (0, None)))
            continue
        old_position = next(
            (n for n, s in enumerate(old_segments) if s.pk == service.segment_id), None
        )
        old = old_segments[old_position] if old_position is not None else None
        target = None
        if old is not None and flown is not None:
            for n, segment in enumerate(flown.segments):
                if (segment.origin, segment.destination) != (old.origin, old.destination):
                    continue
                if service.seat_row is None:
                    target = (n, None)
                    break
                leg = _matching_leg(service, old, segment)
                seat = f"{service.seat_row}{service.seat_column}"
                if (
                    leg is not None
                    and seat not in taken.get(leg.id, set())
                    and any(
                        s.designator == seat and not s.blocked
                        for s in seats_of_configuration(leg.configuration_id)
                    )
                ):
                    target = (n, leg.id)
                break
        moves.append((service, target))
    return moves


def bundle_decides(service: Service, bundle: BundleTerms) -> bool:
    """Whether the new journey's bundle, not the service, decides it (DESIGN.md §11
    "Bundle inclusions": they belong to the bundle): an inclusion the new bundle does not
    include is dropped, at 0; a bag bought on the journey that the new bundle includes is
    dropped too, its price given back, for the inclusion written anew
    (_inclusions_write). An inclusion the new bundle also includes moves, still at 0."""
    if service.seat_row is not None or service.segment_id is not None:
        return False
    return service.included != bundle.includes_service(service.code)


def _matching_leg(service: Service, old: Segment, segment):
    """The new segment's leg in the position the seat's leg had in the old segment."""
    old_legs = list(old.legs.all())
    position = next(
        (n for n, leg in enumerate(old_legs) if leg.flight_leg_id == service.flight_leg_id), None
    )
    if position is None or position >= len(segment.legs):
        return None
    return segment.legs[position]


def moves_stored(moves: Sequence[tuple[Service, tuple[int, int | None] | None]]) -> list[list]:
    """Moves as a quote stores them: [service pk, new segment index, new leg id]."""
    return [[s.pk, *(target or (None, None))] for s, target in moves]


def with_moves(r: Replacement, item: OrderItem, services: Sequence[Service]) -> Replacement:
    """The replacement with where each of `services` (the item's journey's) goes, and
    what those that cannot follow cost."""
    moves = service_moves(item, r, services)
    return replace(
        r,
        services=moves_stored(moves),
        dropped=str(sum((s.total for s, target in moves if target is None), ZERO)),
    )
