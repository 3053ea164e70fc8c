"""Airline-initiated schedule changes (docs/partners/airline-changes.md).

1. Detection. A schedule load writes the flight-date legs it retimes, re-equips or
   cancels under their row locks and notes the orders flying them (`Bookings.holding`,
   read once the legs are locked); once it has committed, those orders are told in
   batches (airline/network/follow_up.py), each order locked and its live journeys
   compared with what they fly now: a segment retimed, a flight cancelled, a booked
   seat or cabin missing from the new aircraft, or a connection now under the minimum
   connecting time. An order with such a journey gets one pending `AirlineChange`
   (brought up to date when a later load changes it again; left alone when it already
   says all there is to say), its version bumped so no stale view or quote survives,
   and one `airline_change_detected` event: the
   `order.airline_initiated_change_detected` webhook.
   A seat configuration edit (airline.network.configurations.configuration_edit) asks
   `ConfigurationSeatHolders` below which orders hold the seats or fly the cabins it
   takes away, has them locked, and detects the same way, from seat layouts read from
   the database.
2. The seller's answer, through change order:
   - AcceptAirlineChange: the order takes the new times (segments and journeys rewritten;
     tickets stay valid, their coupons name the same segments); a seat that is not on
     the new aircraft is cancelled and its value given back. Not offered while a flight
     of the change is cancelled.
   - CancelForAirlineChange: every journey not yet flown is cancelled with everything
     given back, no penalty whatever the bundle, to the original payment or as airline
     credit (`refundTo`).
   - another flight at no charge: reshop ReshopItinerary, quote, AcceptReshopOffer, with
     the journeys the change covers priced at what was paid, no change fee, whatever the
     bundle (orders.servicing.exchange asks `pending_change_of`).
   A change nobody answers stays pending; an airline-cancelled journey stays on the
   order, live and unflown, in OrderList and in the view (its segments' and its own
   `operationalStatus` AIRLINE_CANCELLED).

It is one module because detection and the answers judge a journey the same way (the seats a
new aircraft lacks, `_seats_lost`, is both why a change is detected and what accepting it
gives back) and keep one pending change per order: split, the halves would share their
private helpers across a module boundary.
"""

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db.models import F, Prefetch, Q

from airline.api.errors import ApiError, Err
from airline.fares.money import ZERO
from airline.network.configurations import SEAT_HOLDERS, Layout, configuration_seats
from airline.network.follow_up import LEG_HOLDERS
from airline.network.itineraries import MINIMUM_CONNECTING_TIME, OverLegs
from airline.network.models import FlightLeg
from airline.network.services import station_zone
from offers.wire import iso_duration, local_time
from orders.core import events, ids
from orders.models import (
    AirlineChange,
    Journey,
    Leg,
    Order,
    OrderEvent,
    OrderStatus,
    Segment,
    Service,
)
from orders.reading.presenters import OPERATIONAL_AIRLINE_CANCELLED, OPERATIONAL_CONFIRMED
from orders.requests.inputs import AcceptAirlineChange, CancelForAirlineChange
from orders.servicing.cancel import (
    Cancellation,
    JourneyCancellation,
    journeys_cancel,
    live_services,
)
from orders.servicing.plan import GiveBack, Plan

LIVE = "CONFIRMED"  # an order item's status while it flies
Reason = AirlineChange.Reason
Status = AirlineChange.Status
ACCEPT, CANCEL, RESHOP = "AcceptAirlineChange", "CancelForAirlineChange", "ReshopItinerary"

# The orders' live journeys with their segments, legs and the flight legs they fly now.
_TRIP = (
    "items",
    Prefetch(
        "journeys",
        queryset=Journey.objects.order_by("position").prefetch_related(
            Prefetch(
                "segments",
                queryset=Segment.objects.order_by("position").prefetch_related(
                    Prefetch("legs", Leg.objects.order_by("position").select_related("flight_leg"))
                ),
            )
        ),
    ),
)


# --- detection -------------------------------------------------------------------------


HOLDING_CHUNK = 5000  # leg ids per query
HOLDING_STATUSES = (OrderStatus.CONFIRMED, OrderStatus.ONHOLD, OrderStatus.PENDING)


class Bookings:
    """The orders holding seats on flight-date legs, as the network layer's schedule
    changes see them (airline.network.follow_up.LegHolders; registered below)."""

    kind = "orders"

    def holding(self, leg_ids: Sequence[int]) -> set[int]:
        found: set[int] = set()
        for start in range(0, len(leg_ids), HOLDING_CHUNK):
            found.update(
                Leg.objects.filter(
                    flight_leg_id__in=leg_ids[start : start + HOLDING_CHUNK],
                    segment__holds_inventory=True,
                    # PENDING too: a card booking holds its seats as PENDING between
                    # the reservation and the charge (orders.booking).
                    segment__order__status__in=HOLDING_STATUSES,
                ).values_list("segment__order_id", flat=True)
            )
        return found

    def lock(self, holder_ids: Iterable[int], *, nowait: bool = False) -> None:
        ids = sorted(holder_ids)
        if ids:  # in id order, as every lock of many orders is taken here
            list(
                Order.objects.select_for_update(nowait=nowait)
                .filter(pk__in=ids)
                .order_by("pk")
                .values_list("pk", flat=True)
            )

    def changed(self, holder_ids: Iterable[int], *, now: datetime) -> int:
        return len(airline_changes_detect(order_ids=holder_ids, now=now))


def airline_changes_detect(*, order_ids: Iterable[int], now: datetime) -> list[AirlineChange]:
    """For each order (locked by the caller, in its transaction): its pending airline
    change, created or brought up to date, when a live journey no longer flies as
    booked; the changes written. An order whose pending change already says what it
    would say now is left as it is: telling it again would send its seller the same
    webhook twice (two loads in a row, a follow-up batch taken again).

    Made for batches (a follow-up tells hundreds of orders at once): the orders, their
    trips, seats and pending changes are read in a few queries, and the changes, the
    versions and the events written in a few statements, whatever their number."""
    pks = sorted(set(order_ids))
    orders = list(Order.objects.filter(pk__in=pks).order_by("pk").prefetch_related(*_TRIP))
    layouts, seats = _Layouts(), _HeldSeats(pks)
    pending = {
        change.order_id: change
        for change in AirlineChange.objects.filter(order_id__in=pks, status=Status.PENDING)
    }
    created, updated, told = [], [], []
    for order in orders:
        found = [(j, r) for j in _live_journeys(order) if (r := journey_reasons(j, layouts, seats))]
        if not found:
            continue
        values = _change_values(found, now=now)
        change = pending.get(order.pk)
        if change is None:
            change = AirlineChange(order=order, ref=ids.new_ref("AIC"), **values)
            created.append(change)
        elif any(getattr(change, k) != v for k, v in values.items() if k != "detected_at"):
            for name, value in values.items():
                setattr(change, name, value)
            updated.append(change)
        else:
            continue  # it says all there is to say already
        told.append((order, change))
    if not told:
        return []
    AirlineChange.objects.bulk_create(created)
    if updated:
        AirlineChange.objects.bulk_update(updated, list(_CHANGE_FIELDS))
    # The views and any quotes of these orders as they were are stale now.
    Order.objects.filter(pk__in=[order.pk for order, _ in told]).update(
        version=F("version") + 1, updated_at=now
    )
    events.airline_changes_detected(told, now=now)
    return [change for _, change in told]


_CHANGE_FIELDS = ("detected_at", "journey_refs", "reasons", "removed", "added", "actions")


class _HeldSeats:
    """The live seats held on segments: of the orders `order_ids`, read at once in one
    query; of any other segment, read when asked."""

    def __init__(self, order_ids: Sequence[int] = ()) -> None:
        self._by_segment: dict[int, list[Service]] = {}
        self._orders = set(order_ids)
        if order_ids:
            for seat in _live_seats().filter(order_id__in=order_ids):
                self._by_segment.setdefault(seat.segment_id, []).append(seat)

    def __call__(self, segment: Segment) -> list[Service]:
        if segment.order_id in self._orders:
            return self._by_segment.get(segment.pk, [])
        return list(_live_seats().filter(segment=segment))


def _live_seats():
    return Service.objects.filter(status=Service.Status.ACTIVE, seat_row__isnull=False)


@dataclass(frozen=True)
class _FlightNow(OverLegs):
    """A booked segment as it flies now."""

    segment: Segment
    legs: tuple[FlightLeg, ...]

    @property
    def cancelled(self) -> bool:
        return any(leg.is_cancelled for leg in self.legs)


def _live_journeys(order: Order) -> list[Journey]:
    live = {i.journey_id for i in order.items.all() if i.status == LIVE}
    return [j for j in order.journeys.all() if j.pk in live and not j.is_cancelled]


def _now(journey: Journey) -> list[_FlightNow]:
    return [
        _FlightNow(s, tuple(leg.flight_leg for leg in s.legs.all())) for s in journey.segments.all()
    ]


class _Layouts:
    """Seat layouts of configurations, each read once per detection as the database has
    it (in the detecting transaction: a configuration edit's own write included), never
    from the per-process cache, which may be a minute old."""

    def __init__(self) -> None:
        self._read: dict[int, Layout] = {}

    def __call__(self, configuration_id: int) -> Layout:
        if configuration_id not in self._read:
            self._read.update(configuration_seats([configuration_id], lock=None))
        return self._read.get(configuration_id, {})


def journey_reasons(
    journey: Journey,
    layouts: Callable[[int], Layout] | None = None,
    seats: Callable[[Segment], list[Service]] | None = None,
) -> list[str]:
    """Why a live journey (its segments and legs prefetched with their flight legs) no
    longer flies as booked; empty when it does."""
    layouts, seats = layouts or _Layouts(), seats or _HeldSeats()
    flights = _now(journey)
    reasons = set()
    for flight in flights:
        segment = flight.segment
        if flight.cancelled:  # whatever else changed, it will not fly
            reasons.add(Reason.CANCELLED)
        elif (segment.departs_at, segment.arrives_at) != (flight.departs_at, flight.arrives_at):
            reasons.add(Reason.RETIMED)
        if _equipment_lost(segment, flight.legs, layouts, seats):
            reasons.add(Reason.EQUIPMENT)
    for before, after in itertools.pairwise(flights):
        if after.departs_at - before.arrives_at < MINIMUM_CONNECTING_TIME:
            reasons.add(Reason.CONNECTION)
    return [r for r in Reason.values if r in reasons]


def _equipment_lost(
    segment: Segment,
    legs: Sequence[FlightLeg],
    layouts: Callable[[int], Layout],
    seats: Callable[[Segment], list[Service]],
) -> bool:
    """The segment's cabin is not on a leg's aircraft now, or a seat held on the segment
    is not (or is blocked)."""
    if any(
        segment.cabin not in {seat.cabin for seat in layouts(leg.configuration_id).values()}
        for leg in legs
    ):
        return True
    return bool(_seats_lost(segment, legs, layouts, seats))


def _seats_lost(
    segment: Segment,
    legs: Sequence[FlightLeg],
    layouts: Callable[[int], Layout],
    seats: Callable[[Segment], list[Service]],
) -> list[Service]:
    """The live seats on the segment that the aircraft now flying its legs does not have."""
    configuration = {leg.pk: leg.configuration_id for leg in legs}
    lost = []
    for seat in seats(segment):
        held = layouts(configuration.get(seat.flight_leg_id, 0)).get(
            f"{seat.seat_row}{seat.seat_column}"
        )
        if held is None or held.blocked:
            lost.append(seat)
    return lost


def _change_values(found: Sequence[tuple[Journey, list[str]]], *, now: datetime) -> dict:
    """An airline change's fields for the journeys found and why."""
    reasons = sorted({r for _, rs in found for r in rs}, key=Reason.values.index)
    actions = [RESHOP, CANCEL] if Reason.CANCELLED in reasons else [ACCEPT, RESHOP, CANCEL]
    return {
        "detected_at": now,
        "journey_refs": [j.ref for j, _ in found],
        "reasons": reasons,
        "removed": [journey_booked_wire(j) for j, _ in found],
        # A journey with a cancelled flight cannot be flown as it is: not "added".
        "added": [journey_now_wire(j) for j, rs in found if Reason.CANCELLED not in rs],
        "actions": actions,
    }


def journey_booked_wire(journey: Journey) -> dict[str, Any]:
    """A journey as booked, in the order view's journey shape (without legs)."""
    return _journey_wire(
        journey, [(s, s.departs_at, s.arrives_at, None) for s in journey.segments.all()]
    )


def journey_now_wire(journey: Journey) -> dict[str, Any]:
    """A journey as its flights fly now, each segment with its status."""
    return _journey_wire(
        journey,
        [
            (
                f.segment,
                f.departs_at,
                f.arrives_at,
                OPERATIONAL_AIRLINE_CANCELLED if f.cancelled else OPERATIONAL_CONFIRMED,
            )
            for f in _now(journey)
        ],
    )


def _journey_wire(journey: Journey, segments: Sequence[tuple]) -> dict[str, Any]:
    departs, arrives = segments[0][1], segments[-1][2]
    return {
        "journeyId": journey.ref,
        "origin": journey.origin,
        "destination": journey.destination,
        "departureDateTime": local_time(departs, station_zone(journey.origin)),
        "arrivalDateTime": local_time(arrives, station_zone(journey.destination)),
        "duration": iso_duration(arrives - departs),
        "segments": [
            {
                "segmentId": s.ref,
                "marketingCarrier": s.carrier,
                "marketingFlightNumber": str(s.flight_number),
                "origin": s.origin,
                "destination": s.destination,
                "departureDateTime": local_time(at, station_zone(s.origin)),
                "arrivalDateTime": local_time(to, station_zone(s.destination)),
                "cabinTypeCode": s.cabin,
                "rbd": s.rbd,
                **({"operationalStatus": status} if status else {}),
            }
            for s, at, to, status in segments
        ],
    }


# --- what reshop reads ------------------------------------------------------------------


def journey_airline_cancelled(journey: Journey) -> bool:
    """Whether the airline cancelled a flight of the journey."""
    return FlightLeg.objects.filter(
        pk__in=Leg.objects.filter(segment__journey=journey).values("flight_leg_id"),
        is_cancelled=True,
    ).exists()


def pending_change_of(order: Order) -> AirlineChange | None:
    """The order's pending airline change, if any: its journeys are exchanged at no
    charge (orders.servicing.exchange)."""
    return AirlineChange.objects.filter(order=order, status=Status.PENDING).first()


def change_exchanged(
    order: Order, *, ref: str, journey_refs: Sequence[str], actor: str, now: datetime
) -> None:
    """Under the order's lock, once journeys the pending change `ref` covers were
    exchanged: the change is CHANGED when none of its journeys is left live (ERR-4002 if
    it is no longer pending: the quote was priced for it)."""
    change = (
        AirlineChange.objects.select_for_update()
        .filter(order=order, ref=ref, status=Status.PENDING)
        .first()
    )
    if change is None:
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            f"Airline change {ref} is no longer pending; reshop and quote again",
            path="changes.offerId",
        )
    left = Journey.objects.filter(
        order=order, ref__in=change.journey_refs, is_cancelled=False
    ).exclude(ref__in=journey_refs)
    if not left.exists():
        _resolve(order, change, Status.CHANGED, actor=actor, now=now)


def _resolve(order: Order, change: AirlineChange, status: str, *, actor: str, now) -> None:
    AirlineChange.objects.filter(pk=change.pk).update(
        status=status, resolved_at=now, resolved_by=actor[:80]
    )
    kind = {
        Status.ACCEPTED: OrderEvent.Kind.AIRLINE_CHANGE_ACCEPTED,
        Status.CANCELLED: OrderEvent.Kind.AIRLINE_CHANGE_CANCELLED,
        Status.CHANGED: OrderEvent.Kind.AIRLINE_CHANGE_EXCHANGED,
    }[status]
    events.airline_change_resolved(order, actor=actor, now=now, change=change, kind=kind)


# --- change order: AcceptAirlineChange, CancelForAirlineChange ---------------------------


def _change_of(plan: Plan, entries: Sequence[AcceptAirlineChange | CancelForAirlineChange]):
    """The one pending change the entry names, offering the entry's action; ERR-4002
    otherwise (an unknown id included: the order is the seller's, the change is not on
    it)."""
    if len(entries) != 1:
        raise ApiError(
            Err.CHANGE_NOT_APPLIED, "Answer an airline change once per request", path="changes"
        )
    entry = entries[0]
    change = AirlineChange.objects.filter(order=plan.order, ref=entry.change_id).first()
    if change is None:
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            f"Airline change {entry.change_id} is not on this order",
            path="changes.airlineChangeId",
        )
    if change.status != Status.PENDING:
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            f"Airline change {change.ref} is {change.status}; only a pending one can be answered",
            path="changes.airlineChangeId",
        )
    if entry.kind not in change.actions:
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            f"Airline change {change.ref} cannot be answered with {entry.kind}: a flight "
            "of it is cancelled; cancel or change to another flight",
            path="changes.type",
        )
    return change


def _covered(plan: Plan, change: AirlineChange) -> list[Journey]:
    """The change's journeys still live on the order (as read with SLIM_PARTS)."""
    live = {i.journey_id for i in plan.order.items.all() if i.status == LIVE}
    return [
        j
        for j in plan.order.journeys.all()
        if j.ref in change.journey_refs and j.pk in live and not j.is_cancelled
    ]


def check_accept_airline_change(plan: Plan, entries: Sequence[AcceptAirlineChange]) -> Any:
    """The new times for the change's journeys; seats the new aircraft lacks cancelled,
    their value given back to the card (or voided on a hold)."""
    change = _change_of(plan, entries)
    journeys = _covered(plan, change)
    segments = [s for j in journeys for s in j.segments.all()]
    flight_legs = {
        leg.pk: leg
        for leg in FlightLeg.objects.filter(
            pk__in=[leg.flight_leg_id for s in segments for leg in s.legs.all()]
        )
    }
    layouts, seats = _Layouts(), _HeldSeats()
    lost = [
        seat
        for s in segments
        for seat in _seats_lost(
            s, [flight_legs[leg.flight_leg_id] for leg in s.legs.all()], layouts, seats
        )
    ]
    value = sum((seat.total for seat in lost), ZERO)
    plan.added -= value
    if plan.settles:
        plan.give_back = max(plan.give_back, GiveBack.REFUND)
    else:
        plan.voided += value
    # Must still fly when the change commits (changes._check_still_flying, under lock).
    plan.leg_ids |= set(flight_legs)

    def do_accept_airline_change(plan: Plan, locked: Order) -> None:
        for journey in journeys:
            _retime(journey, flight_legs)
        Service.objects.filter(pk__in=[seat.pk for seat in lost]).update(
            status=Service.Status.CANCELLED
        )
        _resolve(locked, change, Status.ACCEPTED, actor=plan.actor, now=plan.now)

    return do_accept_airline_change


def _retime(journey: Journey, flight_legs: dict[int, FlightLeg]) -> None:
    """The journey and its segments take the times their flights fly now; their coupons
    stay open on the same segments (the tickets are revalidated, not reissued)."""
    segments = list(journey.segments.all())
    for segment in segments:
        legs = [flight_legs[leg.flight_leg_id] for leg in segment.legs.all()]
        segment.departs_at, segment.arrives_at = legs[0].departs_at, legs[-1].arrives_at
    Segment.objects.bulk_update(segments, ["departs_at", "arrives_at"])
    journey.departs_at, journey.arrives_at = segments[0].departs_at, segments[-1].arrives_at
    journey.departure_date = journey.departs_at.astimezone(station_zone(journey.origin)).date()
    journey.save(update_fields=["departs_at", "arrives_at", "departure_date"])


def check_cancel_for_airline_change(plan: Plan, entries: Sequence[CancelForAirlineChange]) -> Any:
    """Every journey of the order not yet flown, and those of the change even past their
    time (they never flew), cancelled with everything they are worth given back: no
    penalty whatever the bundle, to the original payment or as airline credit."""
    change = _change_of(plan, entries)
    order = plan.order
    covered = {j.pk for j in _covered(plan, change)}
    live_items = {i.journey_id: i for i in order.items.all() if i.status == LIVE}
    journeys = [
        j
        for j in order.journeys.all()
        if j.pk in live_items and (j.pk in covered or j.departs_at > plan.now)
    ]
    services = live_services(order, journeys)
    paid = plan.settles
    to_credit = entries[0].refund_to == "AirlineCredit"
    found = []
    for journey in journeys:
        on_it = tuple(services.get(journey.pk, ()))
        value = live_items[journey.pk].total + sum((s.total for s in on_it), ZERO)
        back = value if paid else ZERO
        found.append(
            JourneyCancellation(
                item=live_items[journey.pk],
                journey=journey,
                services=on_it,
                value=value,
                penalty=ZERO,
                refund=ZERO if to_credit else back,
                credit=back if to_credit else ZERO,
            )
        )
    whole = len(journeys) == len(live_items)
    cancellation = Cancellation(journeys=tuple(found), whole_order=whole, paid=paid)
    plan.added -= cancellation.value
    if paid:
        owed = _sum(j.refund for j in found), _sum(j.credit for j in found)
        plan.refund_owed += owed[0]
        plan.credit_owed += owed[1]
    else:
        plan.voided += cancellation.value
    plan.cancelled = plan.cancelled or whole

    def do_cancel_for_airline_change(plan: Plan, locked: Order) -> None:
        journeys_cancel(plan, locked, cancellation)
        _resolve(locked, change, Status.CANCELLED, actor=plan.actor, now=plan.now)

    return do_cancel_for_airline_change


def _sum(values: Iterable[Decimal]) -> Decimal:
    return sum(values, ZERO)


# --- configuration edits (airline.network.configurations) -------------------------------


class ConfigurationSeatHolders:
    """The bookings a seat configuration edit takes seats or a cabin from
    (airline.network.configurations.SeatHolders)."""

    def holding(
        self, *, configuration_id: int, seats: frozenset[str], cabins: frozenset[str], now: datetime
    ) -> set[int]:
        live = (OrderStatus.CONFIRMED, OrderStatus.ONHOLD)
        found: set[int] = set()
        if seats:
            pairs = [(int(d[:-1]), d[-1]) for d in seats]
            found |= set(
                Service.objects.filter(
                    status=Service.Status.ACTIVE,
                    order__status__in=live,
                    flight_leg__configuration_id=configuration_id,
                    flight_leg__departs_at__gt=now,
                )
                .filter(
                    Q.create(
                        [Q(seat_row=row, seat_column=column) for row, column in pairs],
                        connector=Q.OR,
                    )
                )
                .values_list("order_id", flat=True)
            )
        if cabins:
            found |= set(
                Leg.objects.filter(
                    segment__holds_inventory=True,
                    segment__cabin__in=cabins,
                    segment__order__status__in=live,
                    flight_leg__configuration_id=configuration_id,
                    flight_leg__departs_at__gt=now,
                ).values_list("segment__order_id", flat=True)
            )
        return found

    def lock(self, order_ids: Iterable[int], *, nowait: bool) -> None:
        ids = sorted(set(order_ids))
        if ids:
            # In id order, as every lock of many orders is taken (flights_changing).
            list(
                Order.objects.select_for_update(nowait=nowait)
                .filter(pk__in=ids)
                .order_by("pk")
                .values_list("pk", flat=True)
            )

    def detect(self, order_ids: Iterable[int], *, now: datetime) -> int:
        return len(airline_changes_detect(order_ids=order_ids, now=now))


def holders_register() -> None:
    """Tell the network which bookings hold its legs and its configurations' seats
    (airline.network.services.LEG_HOLDERS, configurations.SEAT_HOLDERS): called once,
    by OrdersConfig.ready."""
    if not any(isinstance(holders, Bookings) for holders in LEG_HOLDERS):
        LEG_HOLDERS.append(Bookings())
    if not any(isinstance(h, ConfigurationSeatHolders) for h in SEAT_HOLDERS):
        SEAT_HOLDERS.append(ConfigurationSeatHolders())
