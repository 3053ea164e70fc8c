"""Shopping and pricing (SPEC.md §2.2-2.4, §3, §4.4, §4.5; DESIGN.md §5, §7, §11).

A search finds each direction's journeys in this worker's schedule index, reads the
seats of all their legs in one query and the fares of all their markets in another, and
makes one offer per journey and bundle: the bundle's cabin, the cheapest booking class
with seats for the party on every segment, and its price. The offers are stored as one
batch; pricing reloads the chosen ones, re-checks seats and prices against live
inventory, and stores the merged quote as a new offer with a fresh expiry.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from django.db import DatabaseError

from airline.api import clock
from airline.api.errors import ApiError, Err
from airline.fares.money import Price, price_sum
from airline.fares.pricing import (
    NoFare,
    PassengerMix,
    SegmentToPrice,
    cheapest_available_rbd,
    price_option,
)
from airline.fares.selectors import booking_class_ladders, bundles_for_sale, fares_for_markets
from airline.fares.terms import BundleTerms, FareTerms
from airline.network.inventory import leg_availability, segment_availability
from airline.network.itineraries import Journey, NetworkIndex, network_index
from offers.passengers import Pax, mix_of, passengers_check
from offers.store import OfferBatch, OfferSource, batch_save, new_batch, offer_load
from offers.wire import flight_wire, journey_id
from sellers.authentication import Principal

SEATS_REMAINING_CAP = 9  # SPEC.md §2.2


@dataclass(frozen=True)
class Direction:
    origin: str
    destination: str
    departure_date: date


@dataclass(frozen=True)
class SearchQuery:
    directions: tuple[Direction, ...]
    passengers: tuple[Pax, ...]
    cabin: str | None


@dataclass(frozen=True)
class Selection:
    offer_id: str
    item_ids: tuple[str, ...]


@dataclass(frozen=True)
class Option:
    """One journey in one bundle, priced for the party: `stored` is what the offer store
    keeps (and the response shows), `price` the party's total."""

    stored: dict[str, Any]
    price: Price


@dataclass
class _Context:
    """What one request reads once and every option of it uses."""

    index: NetworkIndex
    seats: dict[int, dict[str, dict[str, int]]]
    fares: dict[tuple[str, str, str], FareTerms]
    ladders: dict[str, tuple[str, ...]]
    mix: PassengerMix
    pax: tuple[Pax, ...]


def search_check(*, data: dict[str, Any], now: datetime) -> SearchQuery:
    """The rules of SPEC.md §4.4 that span fields, and the market check (ERR-1006)."""
    if data.get("currency", "USD") != "USD":
        raise ApiError(Err.VALIDATION, "Only USD is accepted", path="currency")
    earliest = (now - timedelta(hours=12)).date()  # "not before today in UTC-12"
    directions = []
    for od in data["originDestinations"]:
        direction = Direction(od["origin"].upper(), od["destination"].upper(), od["departureDate"])
        if direction.origin == direction.destination:
            raise ApiError(
                Err.VALIDATION,
                "Origin and destination are the same",
                path="originDestinations.destination",
            )
        if direction.departure_date < earliest:
            raise ApiError(
                Err.VALIDATION,
                f"departureDate {direction.departure_date} is in the past",
                path="originDestinations.departureDate",
            )
        if directions and direction.departure_date < directions[-1].departure_date:
            raise ApiError(
                Err.VALIDATION,
                "departureDates must be in travel order",
                path="originDestinations.departureDate",
            )
        directions.append(direction)
    passengers = tuple(passengers_check(data["passengers"]))
    index = _index()
    for direction in directions:
        for field, code in (("origin", direction.origin), ("destination", direction.destination)):
            if code not in index.time_zones:
                raise ApiError(
                    Err.INVALID_MARKET,
                    f"{code} is not a station we serve",
                    path=f"originDestinations.{field}",
                )
        if (direction.origin, direction.destination) not in index.served_markets:
            raise ApiError(
                Err.INVALID_MARKET,
                f"We do not fly {direction.origin} to {direction.destination}",
                path="originDestinations",
            )
    return SearchQuery(tuple(directions), passengers, data.get("cabinTypeCode"))


def offers_search(*, principal: Principal, query: SearchQuery) -> OfferBatch:
    """Offers for every direction of the search, stored as one batch."""
    now = clock.now()
    index = _index()
    bundles = _bundles(principal, query.cabin)
    journeys = [index.journeys(d.origin, d.destination, d.departure_date) for d in query.directions]
    context = _context(index, [j for found in journeys for j in found], query.passengers)

    batch = new_batch(
        seller_id=str(principal.seller.pk),
        source=OfferSource.SHOPPING,
        now=now,
        passengers=[p.wire() for p in query.passengers],
    )
    for leg_index, found in enumerate(journeys):
        for journey in found:
            for bundle in bundles:
                option = _option(journey, bundle, context)
                if option is None:
                    continue
                offer_id = batch.offer_id(len(batch.offers) + 1)
                batch.offers[offer_id] = {
                    "legIndex": leg_index,
                    "offerItemId": f"{offer_id}.1",
                    **option.stored,
                }
    batch_save(batch)
    return batch


def offers_price(
    *, principal: Principal, selections: Sequence[Selection], passengers: Sequence[dict[str, str]]
) -> tuple[OfferBatch, list[Journey]]:
    """Price selected offers together into one quote (SPEC.md §4.5)."""
    now = clock.now()
    pax = tuple(passengers_check(passengers))
    _check_unique(selections)
    chosen = []
    for selection in selections:
        batch, offer = offer_load(
            offer_id=selection.offer_id, seller_id=str(principal.seller.pk), now=now
        )
        if batch.source == OfferSource.RESHOP:
            raise ApiError(
                Err.OFFER_FROM_RESHOP,
                f"Offer {selection.offer_id} came from reshop; price it with quote order",
                path="selections.offerId",
            )
        if batch.source != OfferSource.SHOPPING:
            raise ApiError(
                Err.INVALID_SELECTION,
                f"Offer {selection.offer_id} is not a shopping offer",
                path="selections.offerId",
            )
        missing = [i for i in selection.item_ids if i != offer["offerItemId"]]
        if missing:
            raise ApiError(
                Err.OFFER_ITEMS_NOT_FOUND,
                f"Offer {selection.offer_id} has no item {missing[0]}",
                path="selections.offerItemIds",
            )
        chosen.append(offer)
    _check_directions(chosen)

    index = _index()
    journeys = []
    for offer in chosen:
        journey = index.journey_of(offer["segments"])
        if journey is None:
            raise ApiError(
                Err.INVALID_SELECTION,
                "A selected flight no longer operates; search again",
                path="selections.offerId",
            )
        journeys.append(journey)
    context = _context(index, journeys, pax)
    bundles = {b.code: b for b in bundles_for_sale(codes=[offer["bundle"] for offer in chosen])}

    priced = new_batch(
        seller_id=str(principal.seller.pk),
        source=OfferSource.PRICING,
        now=now,
        passengers=[p.wire() for p in pax],
    )
    offer_id = priced.offer_id(1)
    items, prices = [], []
    for n, (offer, journey) in enumerate(zip(chosen, journeys, strict=True), start=1):
        bundle = bundles.get(offer["bundle"])
        option = _option(journey, bundle, context) if bundle else None
        if option is None:
            raise ApiError(
                Err.INVALID_SELECTION,
                f"Offer item {offer['offerItemId']} is no longer available for this party; "
                "search again",
                path="selections.offerItemIds",
            )
        items.append(
            {"offerItemId": f"{offer_id}.{n}", "legIndex": offer["legIndex"], **option.stored}
        )
        prices.append(option.price)
    priced.offers[offer_id] = {"items": items, "totalPrice": price_sum(prices).to_wire()}
    batch_save(priced)
    return priced, journeys


def _option(journey: Journey, bundle: BundleTerms, context: _Context) -> Option | None:
    """One journey in one bundle for the party, or None when it cannot be sold: the
    cabin is missing, too few seats in every class, or a market has no fare."""
    seats_needed = context.mix.adults + context.mix.children  # a lap infant takes no seat
    ladder = context.ladders.get(bundle.cabin, ())
    rbds, seats_left, to_price = [], [], []
    for segment in journey.segments:
        leg_ids = [leg.id for leg in segment.legs]
        seats = segment_availability(context.seats, leg_ids, bundle.cabin)
        rbd = cheapest_available_rbd(seats, ladder, seats_needed) if seats else None
        if rbd is None:
            return None
        rbds.append(rbd)
        seats_left.append(seats[rbd])
        to_price.append(
            SegmentToPrice(
                segment.origin, segment.destination, rbd, tuple(leg.origin for leg in segment.legs)
            )
        )
    try:
        priced = price_option(
            segments=to_price, bundle=bundle, fares=context.fares, mix=context.mix
        )
    except NoFare:
        return None
    pax_by_type: dict[str, list[str]] = {}
    for p in context.pax:
        pax_by_type.setdefault(p.ptc, []).append(p.pax_id)
    stored = {
        "bundle": bundle.code,
        "cabin": bundle.cabin,
        "segments": [[leg.id for leg in s.legs] for s in journey.segments],
        "rbds": rbds,
        "journeyId": journey_id(journey),
        "seatsRemaining": min(SEATS_REMAINING_CAP, *seats_left),
        "totalPrice": priced.total.to_wire(),
        "flight": flight_wire(journey, context.index, cabin=bundle.cabin, rbds=rbds),
        # One Fare per option; each segment carries its own rbd (SPEC.md §2.2 Segment).
        "fare": bundle.fare_wire(
            rbd=rbds[0],
            fare_basis_code=priced.fare_basis_codes[0],
            pax_ref_ids=[p.pax_id for p in context.pax],
        ),
        "passengerPrices": [
            {
                "ptc": ptc,
                "count": count,
                "paxRefIds": pax_by_type[ptc],
                "price": priced.per_ptc[ptc].to_wire(),
            }
            for ptc, count in priced.counts.items()
        ],
    }
    return Option(stored=stored, price=priced.total)


def _context(index: NetworkIndex, journeys: Sequence[Journey], pax: Sequence[Pax]) -> _Context:
    leg_ids = {leg.id for j in journeys for s in j.segments for leg in s.legs}
    markets = {(s.origin, s.destination) for j in journeys for s in j.segments}
    try:
        seats = leg_availability(leg_ids)
        fares = fares_for_markets(markets)
        ladders = booking_class_ladders()
    except DatabaseError as exc:
        raise ApiError(
            Err.AVAILABILITY_FAILED, "Availability could not be read; retry later"
        ) from exc
    return _Context(
        index=index, seats=seats, fares=fares, ladders=ladders, mix=mix_of(pax), pax=tuple(pax)
    )


def _bundles(principal: Principal, cabin: str | None) -> list[BundleTerms]:
    """The bundles this key may sell (DESIGN.md §5 product limits) in the cabin asked for."""
    allowed = principal.key.allowed_bundles or None
    return [b for b in bundles_for_sale(codes=allowed) if cabin is None or b.cabin == cabin]


def _index() -> NetworkIndex:
    try:
        return network_index()
    except DatabaseError as exc:
        raise ApiError(
            Err.AVAILABILITY_FAILED, "The schedule could not be read; retry later"
        ) from exc


def _check_unique(selections: Sequence[Selection]) -> None:
    offer_ids = [s.offer_id for s in selections]
    item_ids = [i for s in selections for i in s.item_ids]
    if len(set(offer_ids)) != len(offer_ids):
        raise ApiError(Err.VALIDATION, "An offerId is selected twice", path="selections.offerId")
    if len(set(item_ids)) != len(item_ids):
        raise ApiError(
            Err.VALIDATION, "An offerItemId is selected twice", path="selections.offerItemIds"
        )


def _check_directions(offers: Sequence[dict[str, Any]]) -> None:
    """Selections must cover distinct journeys and distinct directions (DESIGN.md §11)."""
    directions = [o["legIndex"] for o in offers]
    journeys = [o["journeyId"] for o in offers]
    if len(set(journeys)) != len(journeys):
        raise ApiError(
            Err.INVALID_SELECTION, "Two selections are the same journey", path="selections"
        )
    if len(set(directions)) != len(directions):
        raise ApiError(
            Err.INVALID_SELECTION,
            "Two selections cover the same direction (legIndex)",
            path="selections",
        )
