"""Seat maps and service lists (SPEC.md §2.6, §4.6, §4.11; DESIGN.md §7, §11), for an
offer before booking or an order after it: both are described as the same `Trip`, and
each answer is stored as an ancillary offer whose items AcceptOffer later books.

A seat map is the aircraft's seat configuration with the seats taken on that flight-date
(orders' active seat services) marked; each free seat the party may take carries a price
per passenger. A service list is every non-seat product the key may sell, per scope, with
a price per passenger. What the bundle includes is priced at zero; a lap infant gets
neither; an exit row is not for a child nor an adult with an infant on the lap.

A key that may sell no seats gets no seat map (and one that may sell only seats no
service list): ERR-8001, saying so, rather than a map of seats nobody can buy. The
passengers a request names are passengers of the offer (some of them, by paxId and
type): prices for anyone else could never be booked, since create order books exactly
the priced offer's party.
"""

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db import DatabaseError

from airline.api.errors import ApiError, Err
from airline.fares import ancillaries, reference
from airline.fares.ancillaries import Product
from airline.fares.terms import BundleTerms
from airline.standby import seller_marker, stale_ok_read
from offers.passengers import Pax, check_pax
from offers.seating import FlightSeats, legs_and_seats_taken
from offers.store import (
    OfferBatch,
    OfferOwner,
    OfferSource,
    PricedOffer,
    ShoppingOffer,
    batch_save,
    new_batch,
    offer_not_found,
    offer_record,
)
from offers.wire import ref_id

CATEGORY_TYPES = {"BAGGAGE": "Baggage", "PETS": "Pets", "PRIORITY": "Priority", "SEAT": "Seat"}


@dataclass(frozen=True)
class Traveller:
    ref: str  # paxId of the offer (ADT-1) or of the order (PAX-...)
    ptc: str
    carries_infant: bool = False


@dataclass(frozen=True)
class TripSegment:
    ref: str  # SEG-...
    leg_ids: tuple[int, ...]
    cabin: str


@dataclass(frozen=True)
class TripJourney:
    ref: str  # JOU-...
    item_ref: str  # the offer item or order item it belongs to
    bundle: BundleTerms
    segments: tuple[TripSegment, ...]


@dataclass(frozen=True)
class Trip:
    """What seats and services are offered for: journeys, their bundle and the party.
    `context` names the offer or order the answer is bound to."""

    journeys: tuple[TripJourney, ...]
    travellers: tuple[Traveller, ...]
    context: dict[str, str]


@contextmanager
def ancillary_lookup() -> Iterator[None]:
    """SPEC.md §4.6, §4.11: a store failure while seat maps or services are looked up is
    ERR-9003 (500, ancillary lookup failed), not the generic ERR-9000."""
    try:
        yield
    except DatabaseError as exc:
        raise ApiError(
            Err.INTERNAL, "Seat maps and services could not be looked up; retry later"
        ) from exc


def bundle_terms(code: str, cabin: str = "Y") -> BundleTerms:
    """The bundle's terms; a code we do not sell (an imported booking's) includes
    nothing, so every product is priced."""
    found = reference.bundles([code])
    if found:
        return found[0]
    return BundleTerms(
        code=code, name=code, cabin=cabin, supplement=Decimal("0.00"), fare_basis_suffix=""
    )


def seat_maps(
    *, trip: Trip, owner: OfferOwner, categories: Sequence[str], now: datetime
) -> dict[str, Any]:
    """`data` of a seats request: one seat map per leg, stored as an ancillary offer.
    The flights and the seats taken may be read a moment old, from the standby
    (airline/standby.py): a seat taken since shows open, and AcceptOffer, which checks
    on the primary, refuses it."""
    if categories and "SEAT" not in categories:
        raise ApiError(
            Err.FORBIDDEN,
            "This API key may not sell seats (it may sell "
            f"{', '.join(sorted(categories))}); seat maps are for keys that may",
        )
    batch = _batch(trip, owner, now)

    def read(using: str) -> tuple[dict, dict]:
        flown = (leg_id for j in trip.journeys for s in j.segments for leg_id in s.leg_ids)
        return legs_and_seats_taken(flown, using=using)

    legs, taken = stale_ok_read(seller_marker(owner.seller_id), read)
    maps = []
    for journey in trip.journeys:
        for segment in journey.segments:
            for leg_id in segment.leg_ids:
                leg = legs[leg_id]
                maps.append(
                    _leg_map(
                        leg,
                        segment,
                        journey.bundle,
                        trip.travellers,
                        taken.get(leg_id, set()),
                        batch,
                    )
                )
    batch_save(batch)
    return {"offerId": batch.offer_id(1), "legSeatMaps": maps}


def service_list(
    *, trip: Trip, owner: OfferOwner, categories: Sequence[str], now: datetime
) -> dict[str, Any]:
    """`data` of a services request: every product but seats the key may sell."""
    if categories and set(categories) <= {"SEAT"}:
        raise ApiError(
            Err.FORBIDDEN,
            "This API key may sell seats only; service lists are for keys that may sell "
            "bags, pets or priority",
        )
    batch = _batch(trip, owner, now)
    services = []
    for product in ancillaries.products(list(categories) or None):
        if product.is_seat:
            continue
        availability = []
        for journey in trip.journeys:
            scopes = (
                [(None, journey.ref)]
                if product.scope == "journey"
                else [(s.ref, None) for s in journey.segments]
            )
            for segment_ref, journey_ref in scopes:
                pricing = _pricing(
                    batch,
                    product,
                    journey.bundle,
                    trip.travellers,
                    {
                        "kind": "service",
                        "code": product.code,
                        "journeyRef": journey.ref,
                        "segmentRef": segment_ref,
                    },
                )
                if pricing:
                    ref = (
                        {"journeyRefId": journey_ref}
                        if journey_ref
                        else {"segmentRefId": segment_ref}
                    )
                    availability.append(
                        {"scope": product.scope, **ref, "passengerPricing": pricing}
                    )
        if availability:
            services.append(
                {
                    "serviceCode": product.code,
                    "ssrCode": product.ssr_code,
                    "name": product.name,
                    "type": CATEGORY_TYPES.get(product.category, product.category.title()),
                    "feeCode": product.fee_code,
                    **({"requires": product.requires} if product.requires else {}),
                    "segmentAvailability": availability,
                }
            )
    batch_save(batch)
    return {"offerId": batch.offer_id(1), "services": services}


def _batch(trip: Trip, owner: OfferOwner, now: datetime) -> OfferBatch:
    batch = new_batch(
        owner=owner,
        source=OfferSource.ANCILLARY,
        now=now,
        passengers=[{"paxId": t.ref, "ptc": t.ptc} for t in trip.travellers],
    )
    batch.offers[batch.offer_id(1)] = {"context": trip.context, "items": {}}
    return batch


def _add_item(batch: OfferBatch, stored: dict[str, Any]) -> str:
    items = batch.offers[batch.offer_id(1)]["items"]
    for item_id, item in items.items():
        if item == stored:
            return item_id
    item_id = f"{batch.offer_id(1)}.{len(items) + 1}"
    items[item_id] = stored
    return item_id


def _pricing(
    batch: OfferBatch,
    product: Product,
    bundle: BundleTerms,
    travellers: Sequence[Traveller],
    stored: dict[str, Any],
) -> list[dict[str, Any]]:
    """passengerPricing rows of SPEC.md §2.6, and the offer item they are sold under."""
    charges = {}
    for t in travellers:
        charge = ancillaries.charge_for(product, bundle, t.ptc)
        if charge is not None:
            charges[t.ref] = (t.ptc, charge)
    if not charges:
        return []
    item_id = _add_item(
        batch,
        {
            **stored,
            "prices": {ref: [str(c.amount), str(c.tax)] for ref, (_, c) in charges.items()},
        },
    )
    return [
        {
            "offerItemId": item_id,
            "paxRefId": ref,
            "passengerType": ptc,
            "amount": charge.amount,
            "currency": "USD",
            "taxAmount": charge.tax,
        }
        for ref, (ptc, charge) in charges.items()
    ]


def _leg_map(
    leg: FlightSeats,
    segment: TripSegment,
    bundle: BundleTerms,
    travellers: Sequence[Traveller],
    taken: set[str],
    batch: OfferBatch,
) -> dict[str, Any]:
    compartments: dict[str, list[dict[str, Any]]] = {}
    seated = [t for t in travellers if t.ptc != "INF"]
    # Seats of one zone, cabin and exit-ness price alike: worked out once per leg, not
    # once per seat (150 seats, a handful of kinds).
    kinds: dict[tuple[str, str, bool], tuple[list[Traveller], list[dict[str, Any]]]] = {}
    for seat in leg.seats:
        unit: dict[str, Any] = {
            "designator": seat.designator,
            "group": seat.zone,
            "properties": list(seat.characteristics),
        }
        kind = (seat.zone, seat.cabin, "EXIT" in seat.characteristics)
        if kind not in kinds:
            allowed = [t for t in seated if not kind[2] or _exit_ok(t)]
            product = ancillaries.seat_product(seat.zone)
            rows = []
            if allowed and product is not None and seat.cabin == segment.cabin:
                rows = _pricing(
                    batch,
                    product,
                    bundle,
                    allowed,
                    {
                        "kind": "seat",
                        "code": product.code,
                        "legId": leg.id,
                        "segmentRef": segment.ref,
                        "zone": seat.zone,
                        "cabin": seat.cabin,
                    },
                )
            kinds[kind] = (allowed, rows)
        allowed, rows = kinds[kind]
        if seat.blocked:
            availability = "Blocked"
        elif seat.designator in taken:
            availability = "Reserved"
        elif not rows:  # another cabin, a zone not on sale, or nobody here may sit there
            availability = "Restricted"
        else:
            availability = "Open"
        # Open, assignable and priced go together: a unit nobody of the request can buy
        # is never shown Open.
        unit["availability"] = availability
        unit["assignable"] = availability == "Open"
        if availability == "Open":
            unit["passengerPricing"] = rows
        compartments.setdefault(seat.cabin, []).append(unit)
    return {
        "departureStation": leg.origin,
        "arrivalStation": leg.destination,
        "equipmentType": leg.equipment,
        "segmentRefId": segment.ref,
        "decks": [
            {
                "number": 1,
                "compartments": [
                    {"designator": cabin, "units": units} for cabin, units in compartments.items()
                ],
            }
        ],
    }


def _exit_ok(traveller: Traveller) -> bool:
    """Exit rows are for adults without a lap infant (DESIGN.md §7)."""
    return traveller.ptc == "ADT" and not traveller.carries_infant


def offer_trip(
    *, offer_id: str, item_ids: Sequence[str], passengers, owner: OfferOwner, now: datetime
) -> Trip:
    """The Trip of a shopping or priced offer (SPEC.md §4.6): its items named in
    `item_ids` (ERR-3002 for one it lacks), for the request's passengers or the offer's."""
    batch, offer = offer_record(offer_id=offer_id, owner=owner, now=now)
    if isinstance(offer, PricedOffer):
        items = {i.offer_item_id: i for i in offer.items}
    elif isinstance(offer, ShoppingOffer):
        items = {offer.offer_item_id: offer}
    else:
        raise offer_not_found(offer_id)
    for item_id in item_ids:
        if item_id not in items:
            raise ApiError(
                Err.OFFER_ITEMS_NOT_FOUND,
                f"Offer {offer_id} has no item {item_id}",
                path="offerItemIds",
            )
    pax = (
        [(p.pax_id, p.ptc, p.infant_ref) for p in _on_offer(check_pax(passengers), batch)]
        if passengers
        else [(p["paxId"], p["ptc"], p.get("infantRefId", "")) for p in batch.passengers]
    )
    # Who carries which infant, as the request (or the search or price request the offer
    # was made for) said with infantRefId; an infant nobody named rides with the first
    # adults who carry none. Create order checks seats against the booking's own
    # infantPassengerId (orders.booking.create).
    spare = sum(1 for _, ptc, _ in pax if ptc == "INF") - sum(1 for *_, i in pax if i)
    travellers = []
    for ref, ptc, infant in pax:
        carries = bool(infant) or (ptc == "ADT" and spare > 0)
        spare -= carries and not infant
        travellers.append(Traveller(ref, ptc, carries))
    journeys = []
    for item_id in dict.fromkeys(item_ids):
        item = items[item_id]
        journeys.append(
            TripJourney(
                ref=item.journey_id,
                item_ref=item_id,
                bundle=bundle_terms(item.bundle),
                segments=tuple(
                    TripSegment(ref_id("SEG", *legs), tuple(legs), item.cabin)
                    for legs in item.segments
                ),
            )
        )
    return Trip(tuple(journeys), tuple(travellers), {"offerId": offer_id})


def _on_offer(asked: Sequence[Pax], batch: OfferBatch) -> Sequence[Pax]:
    """The request's passengers, each one of the offer's by paxId and type (ERR-1005 on
    `passengers` otherwise), as price offer holds its passengers to the shopped party."""
    offered = {(p["paxId"], p["ptc"]) for p in batch.passengers}
    strangers = [p for p in asked if (p.pax_id, p.ptc) not in offered]
    if strangers:
        listed = ", ".join(f"{p['paxId']} ({p['ptc']})" for p in batch.passengers)
        named = ", ".join(f"{p.pax_id} ({p.ptc})" for p in strangers)
        verb = "is" if len(strangers) == 1 else "are"
        raise ApiError(
            Err.VALIDATION,
            f"The offer is for {listed}; {named} {verb} not on it. Name the offer's passengers "
            "(or some of them), or search again for another party",
            path="passengers",
        )
    return asked
