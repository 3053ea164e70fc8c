"""AcceptReshopOffer's write, under the order's lock: the new seats sold and the old
released in one inventory call (legs locked in id order, as every sale), the old item
CANCELLED, seats and bags moved to the new flights or dropped, the new bundle's
inclusions written, tickets reissued (old coupons EXCHANGED, flown ones left USED).
"""

from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db.models import F

from airline.api.errors import ApiError, Err, Reason
from airline.fares.money import Price
from airline.fares.terms import BundleTerms
from airline.network.configurations import configuration_seats
from airline.network.inventory import (
    LegCheck,
    LockedLeg,
    SeatChange,
    SoldOut,
    checks_all,
    inventory_apply,
    legs_as_shown,
)
from airline.network.itineraries import DatedLeg, network_index
from airline.network.itineraries import Journey as NetworkJourney
from offers.ancillaries import Traveller, bundle_terms
from offers.seating import seats_taken
from orders.booking.ancillaries import IN_CHANGE, Sale, inclusion_lines, services_write
from orders.booking.writes import journey_row, segments_write
from orders.core import events, ids
from orders.models import (
    Journey,
    Leg,
    Order,
    OrderItem,
    OrderStatus,
    Segment,
    Service,
)
from orders.money.fees import CHANGE, fee_charge
from orders.money.tickets import tickets_reissue
from orders.servicing.airline_changes import change_exchanged
from orders.servicing.exchange.records import Replacement
from orders.servicing.plan import Plan


def exchange_apply(plan: Plan, order: Order, swaps) -> None:
    """Under the order's lock: every swap of the quote, then tickets reissued."""
    seats = sum(1 for p in order.passengers.all() if p.ptc != "INF")
    journeys = _swaps_flown(swaps)
    _seats_exchange(journeys, seats=seats)
    used_refs = set(Journey.objects.filter(order=order).values_list("ref", flat=True))
    # Ids stay unique within the order when a flight comes back (exchanged and back).
    taken = set(Segment.objects.filter(order=order).values_list("ref", flat=True)) | set(
        Leg.objects.filter(segment__order=order).values_list("ref", flat=True)
    )
    replaced, added = [], []
    for item, r, moves, flown in journeys:
        new_item = _journey_replace(
            order,
            item,
            r,
            moves,
            flown,
            seats=seats,
            used_refs=used_refs,
            taken=taken,
            now=plan.now,
        )
        fee_charge(order, CHANGE, Decimal(r.change_fee), now=plan.now)
        replaced.append(item.ref)
        added.append(new_item.ref)
    for ref in {r.airline_change for _item, r, _moves, _flown in journeys if r.airline_change}:
        change_exchanged(
            order,
            ref=ref,
            journey_refs=[i.journey.ref for i, r, _m, _f in journeys if r.airline_change == ref],
            actor=plan.actor,
            now=plan.now,
        )
    if order.status == OrderStatus.CONFIRMED:
        # Reissue over the live journeys still to fly; a flown coupon stays USED.
        tickets_reissue(order, now=plan.now)
    events.itinerary_exchanged(
        order,
        actor=plan.actor,
        now=plan.now,
        replaced=replaced,
        added=added,
        amount=plan.added + plan.retained,
    )


def _swaps_flown(swaps) -> list[tuple]:
    """Each swap (item, replacement, seat moves) with the network journey its replacement
    flies now; refused when one of its flights no longer operates."""
    index = network_index()
    journeys = [(item, r, moves, index.journey_of(r.segments)) for item, r, moves in swaps]
    if any(flown is None for *_swap, flown in journeys):
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            "A flight of the quote no longer operates; reshop again",
            reason=Reason.FLIGHT_CHANGED,
            path="changes.offerId",
        )
    return journeys


def _seats_exchange(journeys: Sequence[tuple], *, seats: int) -> None:
    """`seats` seats taken on each new flight and given back on the one it replaces, in
    one inventory change, the seats the quote moves still sellable on the new legs;
    refused when a new flight's class has too few left."""
    changes = []
    for item, r, _moves, flown in journeys:
        changes += [
            SeatChange(tuple(leg.id for leg in s.legs), rbd, seats)
            for s, rbd in zip(flown.segments, r.rbds, strict=True)
        ]
        old_segments = Segment.objects.filter(journey=item.journey, holds_inventory=True)
        changes += [
            SeatChange(tuple(leg.flight_leg_id for leg in s.legs.all()), s.rbd, -s.seats)
            for s in old_segments.prefetch_related("legs")
        ]
    try:
        # One call: every leg, new and old, locked in id order with the others'.
        inventory_apply(
            changes,
            check=checks_all(
                # The new segments are written with the times the index shows.
                legs_as_shown(
                    (leg for *_swap, flown in journeys for s in flown.segments for leg in s.legs),
                    refuse=_not_as_shown,
                ),
                _seats_still_follow(
                    [
                        (service, target[1])
                        for _i, _r, moves, _f in journeys
                        for service, target in moves
                        if target and target[1]
                    ]
                ),
            ),
        )
    except SoldOut:
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            "A flight of the quote no longer has seats in its class; reshop again",
            reason=Reason.FLIGHT_CHANGED,
            path="changes.offerId",
        ) from None


def _not_as_shown(leg: DatedLeg, what: str) -> ApiError:
    return ApiError(
        Err.CHANGE_NOT_APPLIED,
        f"The flight leg {leg.origin}-{leg.destination} of the quote {what}; reshop again",
        reason=Reason.FLIGHT_CHANGED,
        path="changes.offerId",
    )


def _journey_replace(
    order: Order,
    item: OrderItem,
    r: Replacement,
    moves,
    flown: NetworkJourney,
    *,
    seats: int,
    used_refs: set[str],
    taken: set[str],
    now: datetime,
) -> OrderItem:
    """The journey of `item` replaced by the one `r` flies: the new journey, its item,
    segments and legs written and the seats and services `moves` carried over; the old
    journey kept, cancelled and exchanged. Returns the new item."""
    old_journey = item.journey
    ref = r.journey_ref if r.journey_ref not in used_refs else ids.new_ref("JOU")
    journey = journey_row(order, ref=ref, position=old_journey.position, journey=flown)
    journey.save(force_insert=True)
    # The replaced journey keeps its rows (its item CANCELLED) and moves behind the
    # live ones, so the view lists journeys in travel order.
    Journey.objects.filter(pk=old_journey.pk).update(
        is_cancelled=True, exchanged=True, position=F("position") + 100
    )
    Segment.objects.filter(journey=old_journey).update(holds_inventory=False)
    OrderItem.objects.filter(pk=item.pk).update(status="CANCELLED")
    new_item = OrderItem.objects.create(
        order=order,
        journey=journey,
        ref=ids.new_ref("OOI"),
        bundle=r.bundle,
        total=Price.from_wire(r.price).total,
        price=r.price,
        fare=r.fare,
        passenger_prices=r.passenger_prices,
    )
    segment_rows, _legs = segments_write(
        order,
        [(journey, s, r.cabin, rbd, seats) for s, rbd in zip(flown.segments, r.rbds, strict=True)],
        taken=taken,
    )
    _move_services(moves, journey, new_item, segment_rows)
    _inclusions_write(order, journey, bundle_terms(r.bundle), moves, now=now)
    return new_item


def _seats_still_follow(seats: Sequence[tuple[Service, int]]) -> LegCheck:
    """Under the legs' locks: each seat the quote moves to a leg of the new flight
    (service, new leg id) is still sellable there on the aircraft flown now, read from
    its configuration under a share lock (a block saved in the back office since the
    quote; airline.network.configurations). ERR-4002 otherwise: the quote gave nothing
    back for a seat it expected to move."""

    def check(locked: Mapping[int, LockedLeg]) -> None:
        on = [(service, locked[leg_id]) for service, leg_id in seats if leg_id in locked]
        if not on:
            return
        layouts = configuration_seats({leg.configuration_id for _s, leg in on}, lock="FOR SHARE")
        # Seat sales lock their legs too: a seat sold since the quote is seen here.
        taken = seats_taken([leg_id for _s, leg_id in seats])
        for service, leg in on:
            designator = f"{service.seat_row}{service.seat_column}"
            seat = layouts.get(leg.configuration_id, {}).get(designator)
            if seat is None or seat.blocked or designator in taken.get(leg.id, set()):
                raise ApiError(
                    Err.CHANGE_NOT_APPLIED,
                    f"Seat {designator} can no longer follow to the new flight; reshop and "
                    "quote again",
                    reason=Reason.QUOTE_STALE,
                    path="changes.offerId",
                )

    return check


def _move_services(moves, journey: Journey, item: OrderItem, segments: Sequence[Segment]) -> None:
    for service, target in moves:
        if target is None:
            Service.objects.filter(pk=service.pk).update(status=Service.Status.CANCELLED)
            continue
        position, leg_id = target
        # The service keeps its own order item id (SPEC.md §2.8 services[].itemId): it is
        # the same purchase, now on the new flight, never the flight item's id.
        fields: dict[str, Any] = {}
        if service.journey_id is not None:
            fields["journey"] = journey
        if service.segment_id is not None:
            fields["segment"] = segments[position]
        if leg_id is not None:
            fields["flight_leg_id"] = leg_id
        Service.objects.filter(pk=service.pk).update(**fields)


def _inclusions_write(
    order: Order, journey: Journey, bundle: BundleTerms, moves, *, now: datetime
) -> None:
    """The new journey's bundle inclusions for each passenger who takes a seat, at 0,
    but those the passenger's moved inclusions already are."""
    kept = {(s.passenger_id, s.code) for s, target in moves if target is not None and s.included}
    passengers = {p.ref: p for p in order.passengers.all()}
    lines = [
        line
        for line in inclusion_lines(
            bundle=bundle,
            journey_ref=journey.ref,
            travellers=[Traveller(p.ref, p.ptc) for p in passengers.values()],
        )
        if (passengers[line.pax_ref].pk, line.product.code) not in kept
    ]
    if lines:
        services_write(
            Sale(lines=tuple(lines)),
            order=order,
            passengers=passengers,
            journeys={journey.ref: journey},
            segments={},
            now=now,
            refuse=IN_CHANGE,
        )
