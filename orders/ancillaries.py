"""Seats and services of an existing booking (SPEC.md §4.10 AcceptOffer, §4.11;
DESIGN.md §7, §11): the Trip an order's seat maps and service lists are built for, and
adding the items of such an ancillary offer to the order.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction

from airline.api.errors import ApiError, Err
from airline.fares import ancillaries
from airline.network.models import FlightLeg
from offers.ancillaries import (
    Traveller,
    Trip,
    TripJourney,
    TripSegment,
    bundle_terms,
    seats_of_configuration,
)
from offers.store import OfferSource, offer_load
from orders import ids
from orders.models import Leg, Order, Service


def order_trip(
    *, order: Order, item_refs: Sequence[str] | None, passengers: Sequence[Mapping] | None
) -> Trip:
    """The Trip of a booking's flight items (all when none are named) for its passengers
    (all when none are named). Unknown ids are ERR-1005; a passenger id with the `|`
    delimiter ERR-1004 (SPEC.md §4.11). Three queries of plain values: a seat map asks
    nothing else of the order, and model instances of its parts cost more than the map."""
    items = {
        ref: (journey_id, bundle)
        for ref, journey_id, bundle in order.items.exclude(status="CANCELLED").values_list(
            "ref", "journey_id", "bundle"
        )
    }
    for ref in item_refs or ():
        if ref not in items:
            raise ApiError(
                Err.VALIDATION, f"Order item {ref} is not on this order", path="orderItemIds"
            )
    pax = {
        ref: Traveller(ref, ptc, infant_id is not None)
        for ref, ptc, infant_id in order.passengers.values_list("ref", "ptc", "infant_id")
    }
    travellers = tuple(pax.values())
    if passengers:
        chosen = []
        for entry in passengers:
            pax_id = entry["paxId"]
            if "|" in pax_id:
                raise ApiError(
                    Err.INVALID_VALUE,
                    "A passenger id may not contain the | delimiter",
                    path="passengers.paxId",
                )
            if pax_id not in pax:
                raise ApiError(
                    Err.VALIDATION, f"Passenger {pax_id} is not on this order", path="passengers"
                )
            chosen.append(pax[pax_id])
        travellers = tuple(chosen)
    # Each journey's segments in travel order, each with the flight legs it flies.
    flown: dict[int, tuple[str, dict[int, tuple[str, str, list[int]]]]] = {}
    for journey_id, journey_ref, segment_id, segment_ref, cabin, flight_leg_id in (
        Leg.objects.filter(segment__order_id=order.pk)
        .order_by("segment__journey_id", "segment__position", "position")
        .values_list(
            "segment__journey_id",
            "segment__journey__ref",
            "segment_id",
            "segment__ref",
            "segment__cabin",
            "flight_leg_id",
        )
    ):
        segments = flown.setdefault(journey_id, (journey_ref, {}))[1]
        segments.setdefault(segment_id, (segment_ref, cabin, []))[2].append(flight_leg_id)
    journeys = []
    for ref, (journey_id, bundle) in items.items():
        if item_refs and ref not in item_refs:
            continue
        journey_ref, segments = flown[journey_id]
        journeys.append(
            TripJourney(
                ref=journey_ref,
                item_ref=ref,
                bundle=bundle_terms(bundle),
                segments=tuple(
                    TripSegment(segment_ref, tuple(legs), cabin)
                    for segment_ref, cabin, legs in segments.values()
                ),
            )
        )
    return Trip(tuple(journeys), travellers, {"orderId": order.order_id})


@dataclass(frozen=True)
class Accepted:
    """One AcceptOffer entry, checked against its ancillary offer."""

    item: Mapping[str, Any]
    passenger_refs: tuple[str, ...]
    seat: tuple[int, str] | None


def accept_entries_check(
    *, order: Order, entries: Sequence[Mapping[str, Any]], seller_id: str, now: datetime
) -> list[Accepted]:
    """AcceptOffer entries as the items they name (SPEC.md §4.10; DESIGN.md §11): the
    offer must be an ancillary offer of this order, the item on it, the passengers priced
    by it, a seat named for a seat item and only then. ERR-3000/3001 for a missing or
    expired offer, ERR-4002 for anything that cannot be applied."""
    accepted = []
    for entry in entries:
        batch, offer = offer_load(offer_id=entry["offerId"], seller_id=seller_id, now=now)
        if batch.source != OfferSource.ANCILLARY or offer["context"] != {"orderId": order.order_id}:
            raise _cannot(f"Offer {entry['offerId']} is not a seat or service offer of this order")
        item = offer["items"].get(entry["offerItemId"])
        if item is None:
            raise ApiError(
                Err.OFFER_ITEMS_NOT_FOUND,
                f"Offer {entry['offerId']} has no item {entry['offerItemId']}",
                path="changes.offerItemId",
            )
        refs = tuple(entry.get("passengerIds") or item["prices"])
        for ref in refs:
            if ref not in item["prices"]:
                raise _cannot(f"Item {entry['offerItemId']} is not offered to {ref}")
        seat = entry.get("seat")
        if item["kind"] == "seat":
            if seat is None or len(refs) != 1:
                raise _cannot("A seat item needs `seat` and exactly one passenger")
            seat = (seat["row"], seat["column"].upper())
        elif seat is not None:
            raise _cannot("Only a seat item takes `seat`")
        accepted.append(Accepted(item, refs, seat))
    return accepted


def services_add(
    *, order: Order, parts: Order, accepted: Sequence[Accepted], now: datetime
) -> list[Service]:
    """Write the accepted items as services of `order` (inside the caller's transaction,
    with the order row locked); `parts` is the same order with its passengers, journeys
    and segments loaded (SLIM_PREFETCH). A seat must be free and of the item's zone and
    cabin; a bag needs the one before it; nothing is bought twice."""
    pax = {p.ref: p for p in parts.passengers.all()}
    journeys = {j.ref: j for j in parts.journeys.all()}
    segments = {s.ref: s for j in journeys.values() for s in j.segments.all()}
    held = list(Service.objects.filter(order=order, status=Service.Status.ACTIVE))
    new: list[Service] = []
    # CB1 before CB2 before CB3, so a request may add a bag and the one it needs together.
    for entry in sorted(accepted, key=lambda a: a.item["code"]):
        item = entry.item
        product = next((p for p in ancillaries.products() if p.code == item["code"]), None)
        if product is None:
            raise _cannot(f"{item['code']} is no longer sold")
        for ref in entry.passenger_refs:
            amount, tax = (Decimal(v) for v in item["prices"][ref])
            service = Service(
                order=order,
                ref=ids.new_ref("SVR"),
                item_ref=ids.new_ref("OOI"),
                passenger=pax[ref],
                journey=journeys.get(item.get("journeyRef")),
                segment=segments.get(item.get("segmentRef")),
                code=product.code,
                name=product.name,
                category=product.category,
                ssr_code=product.ssr_code,
                fee_code=product.fee_code,
                amount=amount,
                tax=tax,
                created_at=now,
            )
            if item["kind"] == "seat":
                service.flight_leg_id = item["legId"]
                service.seat_row, service.seat_column = entry.seat
                _check_seat(service, item)
            else:
                _check_service(service, product, held + new)
            new.append(service)
    try:
        with transaction.atomic():  # a savepoint, so the error below can be told apart
            Service.objects.bulk_create(new)
    except IntegrityError as exc:
        # The partial unique indexes decide every race for a seat (DESIGN.md §7).
        raise _cannot(
            "A chosen seat has just been taken, or the passenger already has a seat on that flight"
        ) from exc
    return new


def _check_seat(service: Service, item: Mapping[str, Any]) -> None:
    leg = FlightLeg.objects.only("configuration_id").get(pk=service.flight_leg_id)
    designator = f"{service.seat_row}{service.seat_column}"
    seat = next(
        (s for s in seats_of_configuration(leg.configuration_id) if s.designator == designator),
        None,
    )
    if seat is None or seat.blocked:
        raise _cannot(f"Seat {designator} cannot be sold on this flight")
    if seat.zone != item["zone"] or seat.cabin != item["cabin"]:
        raise _cannot(f"Seat {designator} is not a seat of this offer item; choose its item")
    if "EXIT" in seat.characteristics and (
        service.passenger.ptc != "ADT" or service.passenger.infant_id is not None
    ):
        raise _cannot(f"Seat {designator} is in an exit row, not for this passenger")


def _check_service(service: Service, product, held: Sequence[Service]) -> None:
    def has(code: str) -> bool:
        return any(
            s.code == code
            and s.passenger_id == service.passenger.pk
            and s.journey_id == service.journey_id
            and s.segment_id == service.segment_id
            for s in held
        )

    if has(product.code):
        raise _cannot(f"{service.passenger.ref} already has {product.code} there")
    if product.requires and not has(product.requires):
        raise _cannot(f"{product.code} can only be added with {product.requires}")


def _cannot(description: str) -> ApiError:
    return ApiError(Err.CHANGE_NOT_APPLIED, description, path="changes")
