"""Shopping and pricing (SPEC.md §2.2-2.4, §3, §4.4, §4.5; DESIGN.md §5, §7, §11).

A search finds each direction's journeys in this worker's schedule index, reads the
seats of all their legs in one query and the fares of all their markets in another, and
makes one offer per journey and bundle: the bundle's cabin, the cheapest booking class
with seats for the party on every segment, and its price. The offers are stored as one
batch; pricing reloads the chosen ones, re-checks seats and prices against live
inventory, and stores the merged quote as a new offer with a fresh expiry.

It is one module because search and pricing build their options with the same private
context (_option, _context, the bundles and classes) against the same live inventory;
split, that context would have to become public between files.
"""

import functools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

import orjson
from django.db import DatabaseError, InterfaceError, OperationalError

from airline.api import clock
from airline.api.errors import ApiError, Err
from airline.api.responses import dumps
from airline.fares import reference
from airline.fares.money import ZERO, Price, money_wire, price_sum
from airline.fares.pricing import (
    NoFare,
    PassengerMix,
    PricedOption,
    SegmentToPrice,
    cheapest_available_rbd,
    price_option,
)
from airline.fares.terms import BundleTerms, FareTerms
from airline.network.inventory import leg_availability, segment_availability
from airline.network.itineraries import Journey, NetworkIndex, network_index, on_network_change
from offers.passengers import Pax, check_pax, mix_of
from offers.store import (
    OfferBatch,
    OfferOwner,
    OfferSource,
    ShoppingOffer,
    batch_save,
    new_batch,
    offer_record,
)
from offers.wire import flight_wire
from sellers.authentication import Principal

SEATS_REMAINING_CAP = 9  # SPEC.md §2.2
# What a shopping offer keeps in the store: enough to price it again from live data;
# the rest of what the search showed is rebuilt then (and is most of the bytes).
SHOPPING_STORED = (
    "legIndex",
    "offerItemId",
    "bundle",
    "cabin",
    "segments",
    "rbds",
    "journeyId",
    # As the search showed it (ready JSON): price offer says whether it moved since.
    "totalPrice",
)


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
    """What one request reads once and every option of it uses, and what its options
    have already worked out."""

    index: NetworkIndex
    seats: dict[int, dict[str, dict[str, int]]]
    fares: dict[tuple[str, str, str], FareTerms]
    ladders: dict[str, tuple[str, ...]]
    mix: PassengerMix
    pax: tuple[Pax, ...]
    classes: dict[tuple, "_Sale"] = field(default_factory=dict)
    prices: dict[tuple, Any] = field(default_factory=dict)
    fare_wires: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)


def check_search(*, data: dict[str, Any], now: datetime) -> SearchQuery:
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
    passengers = tuple(check_pax(data["passengers"]))
    index = _index()
    for direction in directions:
        for name, code in (("origin", direction.origin), ("destination", direction.destination)):
            if code not in index.time_zones:
                raise ApiError(
                    Err.INVALID_MARKET,
                    f"{code} is not a station we serve",
                    path=f"originDestinations.{name}",
                )
        if not index.is_valid_market(direction.origin, direction.destination):
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
    journeys = [
        _journeys_of(index, d.origin, d.destination, d.departure_date) for d in query.directions
    ]
    context = _context(index, [j for found in journeys for j in found], query.passengers)

    batch = new_batch(
        owner=OfferOwner.of(principal),
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
    batch_save(batch, fields=SHOPPING_STORED)
    return batch


def offers_price(
    *, principal: Principal, selections: Sequence[Selection], passengers: Sequence[dict[str, str]]
) -> tuple[OfferBatch, list[Journey]]:
    """Price selected offers together into one quote (SPEC.md §4.5)."""
    now = clock.now()
    pax = tuple(check_pax(passengers))
    _check_unique(selections)
    chosen: list[ShoppingOffer] = []
    shopped_party = None
    owner = OfferOwner.of(principal)
    read: dict[str, Any] = {}  # the batches read, each once (a search's directions share one)
    for selection in selections:
        batch, offer = offer_record(
            offer_id=selection.offer_id,
            owner=owner,
            now=now,
            path="selections.offerId",  # the request's field (SPEC.md §4.5)
            read=read,
        )
        if batch.source in (OfferSource.RESHOP, OfferSource.QUOTE):
            raise ApiError(
                Err.OFFER_FROM_RESHOP,
                f"Offer {selection.offer_id} came from reshop; price it with quote order",
                path="selections.offerId",
            )
        if not isinstance(offer, ShoppingOffer):
            raise ApiError(
                Err.INVALID_SELECTION,
                f"Offer {selection.offer_id} is not a shopping offer",
                path="selections.offerId",
            )
        missing = [i for i in selection.item_ids if i != offer.offer_item_id]
        if missing:
            raise ApiError(
                Err.OFFER_ITEMS_NOT_FOUND,
                f"Offer {selection.offer_id} has no item {missing[0]}",
                path="selections.offerItemIds",
            )
        chosen.append(offer)
        shopped_party = batch.passengers
    _check_directions(chosen)
    _check_same_party(pax, shopped_party)

    index = _index(current=True)
    journeys = []
    for offer in chosen:
        journey = index.journey_of(offer.segments)
        if journey is None:
            raise ApiError(
                Err.INVALID_SELECTION,
                "A selected flight no longer operates; search again",
                path="selections.offerId",
            )
        journeys.append(journey)
    context = _context(index, journeys, pax)
    # The key's product limits as they are now, not as they were at the search.
    bundles = {b.code: b for b in _bundles(principal, None)}

    priced = new_batch(
        owner=OfferOwner.of(principal),
        source=OfferSource.PRICING,
        now=now,
        passengers=[p.wire() for p in pax],
    )
    offer_id = priced.offer_id(1)
    items, prices = [], []
    for n, (offer, journey) in enumerate(zip(chosen, journeys, strict=True), start=1):
        bundle = bundles.get(offer.bundle)
        option = _option(journey, bundle, context) if bundle else None
        if option is None:
            raise ApiError(
                Err.INVALID_SELECTION,
                f"Offer item {offer.offer_item_id} is no longer available for this party; "
                "search again",
                path="selections.offerItemIds",
            )
        items.append(
            {"offerItemId": f"{offer_id}.{n}", "legIndex": offer.leg_index, **option.stored}
        )
        prices.append(option.price)
    total = price_sum(prices)
    shopped = sum((Price.from_wire(o.total_price).total for o in chosen), ZERO)
    priced.offers[offer_id] = {
        "items": items,
        "totalPrice": total.to_wire(),
        # SPEC.md §4.5 re-prices against live inventory: the class may have moved up
        # (or fares changed) since the search; say so, and from what.
        "priceChanged": total.total != shopped,
        **({"previousTotal": money_wire(shopped)} if total.total != shopped else {}),
    }
    batch_save(priced)
    return priced, journeys


def journey_options(
    *, origin: str, destination: str, day: date, pax: Sequence[Pax], bundle: BundleTerms
) -> list[tuple[Journey, Option]]:
    """Every journey of a market on a day that can be sold to the party in `bundle`,
    priced as shopping prices it (reshop's replacement flights, orders.servicing.exchange)."""
    index = _index(current=True)
    journeys = _journeys_of(index, origin, destination, day)
    context = _context(index, journeys, pax)
    found = ((journey, _option(journey, bundle, context)) for journey in journeys)
    return [(journey, option) for journey, option in found if option is not None]


def journey_reprice(
    *, segments: list[list[int]], pax: Sequence[Pax], bundle: BundleTerms
) -> tuple[Journey, Option] | None:
    """A stored option's journey priced again on live inventory (quote order), or None
    when it no longer flies or cannot be sold to the party."""
    index = _index(current=True)
    journey = index.journey_of(segments)
    if journey is None:
        return None
    option = _option(journey, bundle, _context(index, [journey], pax))
    return None if option is None else (journey, option)


def bundles_for(principal: Principal, cabin: str | None = None) -> list[BundleTerms]:
    """The bundles the key may sell, in `cabin` when given (DESIGN.md §5)."""
    return _bundles(principal, cabin)


def _option(journey: Journey, bundle: BundleTerms, context: _Context) -> Option | None:
    """One journey in one bundle for the party, or None when it cannot be sold: the
    cabin is missing, too few seats in every class, or a market has no fare.

    Bundles of one cabin share the journey's classes and flight wire, flights of one
    market in one class share a price, and options of one bundle, class and fare basis
    share a Fare, so each is worked out once per request."""
    sale = context.classes.get((journey.key, bundle.cabin))
    if sale is None:
        sale = context.classes[(journey.key, bundle.cabin)] = _classes(
            journey, bundle.cabin, context
        )
    if sale is _NO_SEATS:
        return None
    price_key = (sale.price_key, bundle.code)
    if price_key not in context.prices:
        fares = tuple(context.fares.get((p.origin, p.destination, p.rbd)) for p in sale.to_price)
        context.prices[price_key] = (
            None
            if None in fares
            else _priced(sale.to_price, bundle, fares, context.mix, context.pax)
        )
    if context.prices[price_key] is None:
        return None
    priced, (total_wire, passenger_prices) = context.prices[price_key]
    flight_key = (context.index.version, journey.key, bundle.cabin, sale.rbds)
    cached = _flights.get(flight_key)
    if cached is None:
        if len(_flights) > FLIGHT_CACHE_SIZE:
            _flights.clear()
        wire = flight_wire(journey, context.index, cabin=bundle.cabin, rbds=list(sale.rbds))
        route = f"{' '.join(wire['flightNumbers'])} {wire['origin']}-{wire['destination']}"
        cached = _flights[flight_key] = (
            wire["journeyId"],
            route,
            orjson.Fragment(orjson.dumps(wire)),
        )
    journey_ref, route, flight = cached
    # One Fare per option; each segment carries its own rbd (SPEC.md §2.2 Segment).
    fare_key = (bundle.code, sale.rbds[0], priced.fare_basis_codes[0])
    fare = context.fare_wires.get(fare_key)
    if fare is None:
        fare = context.fare_wires[fare_key] = bundle.fare_wire(
            rbd=sale.rbds[0],
            fare_basis_code=priced.fare_basis_codes[0],
            pax_ref_ids=[p.pax_id for p in context.pax],
            prerendered=True,
        )
    stored = {
        "bundle": bundle.code,
        "cabin": bundle.cabin,
        "segments": sale.segments,
        "rbds": list(sale.rbds),
        "journeyId": journey_ref,
        "description": f"{route}, {bundle.name}",
        "seatsRemaining": sale.seats_remaining,
        "totalPrice": total_wire,
        "flight": flight,
        "fare": fare,
        "passengerPrices": passenger_prices,
    }
    return Option(stored=stored, price=priced.total)


@dataclass(frozen=True, slots=True)
class _Sale:
    """A journey sold in one cabin to the party, the same for every bundle of the cabin:
    its classes, the seats shown, what prices it and the stored segments (shared by the
    cabin's offers, read only). `price_key` is `to_price` as plain tuples: hashed once
    per option, where the segments' own hashes run in Python."""

    rbds: tuple[str, ...]
    seats_remaining: int
    to_price: tuple[SegmentToPrice, ...]
    price_key: tuple[tuple[str, str, str, tuple[str, ...]], ...]
    segments: list[list[int]]


_NO_SEATS = _Sale(rbds=(), seats_remaining=0, to_price=(), price_key=(), segments=[])

# Across requests, per process, and kept as ready JSON (orjson Fragments, serialized
# once, not once per offer per response): what depends only on immutable inputs. A flight's wire
# depends on the schedule version and its legs; a price on the fares, bundle terms and
# party, all part of the key, so an edit to any of them is a new key, never a stale answer.
# A market-day's journeys likewise depend only on the schedule version; walking a busy
# market's connections in the index is about a tenth of a search's own work.
FLIGHT_CACHE_SIZE = 20_000
_flights: dict[tuple, tuple[str, str, orjson.Fragment]] = {}
_journeys: dict[tuple, tuple[Journey, ...]] = {}


def _journeys_of(index: NetworkIndex, origin: str, destination: str, day: date) -> list[Journey]:
    """index.journeys, worked out once per schedule version and market-day (a list of
    the caller's own)."""
    key = (index.version, origin, destination, day)
    found = _journeys.get(key)
    if found is None:
        if len(_journeys) > FLIGHT_CACHE_SIZE:
            _journeys.clear()
        found = _journeys[key] = tuple(index.journeys(origin, destination, day))
    return list(found)


def _forget_flights(version: int | None) -> None:
    """A process whose index is dropped (a test's database replaced under it) may meet
    the same version numbers again, over other legs: its flight wires and journeys go
    with it."""
    if version is None:
        _flights.clear()
        _journeys.clear()


on_network_change(_forget_flights)


@functools.lru_cache(maxsize=20_000)
def _priced(
    to_price: tuple[SegmentToPrice, ...],
    bundle: BundleTerms,
    fares: tuple[FareTerms, ...],
    mix: PassengerMix,
    pax: tuple[Pax, ...],
) -> tuple[PricedOption, tuple[orjson.Fragment, list[dict[str, Any]]]] | None:
    """An option's price for the party and its wire parts (`_price_wires`), or None when a
    segment has no fare. Kept per process: every input is part of the key, and the wire
    parts are only ever read (serialized, stored, rendered into NDC), never changed."""
    try:
        priced = price_option(
            segments=to_price, bundle=bundle, fares={f.key: f for f in fares}, mix=mix
        )
    except NoFare:
        return None
    return priced, _price_wires(priced, pax)


def _classes(journey: Journey, cabin: str, context: _Context) -> _Sale:
    """The journey's sale in `cabin`: per segment, the cheapest class with seats for the
    party (a lap infant takes none), and the seats left in it; _NO_SEATS when some
    segment has none."""
    seats_needed = context.mix.adults + context.mix.children
    ladder = context.ladders.get(cabin, ())
    rbds, seats_left = [], []
    for segment in journey.segments:
        seats = segment_availability(context.seats, [leg.id for leg in segment.legs], cabin)
        rbd = cheapest_available_rbd(seats, ladder, seats_needed) if seats else None
        if rbd is None:
            return _NO_SEATS
        rbds.append(rbd)
        seats_left.append(seats[rbd])
    to_price = tuple(
        SegmentToPrice(s.origin, s.destination, rbd, tuple(leg.origin for leg in s.legs))
        for s, rbd in zip(journey.segments, rbds, strict=True)
    )
    return _Sale(
        rbds=tuple(rbds),
        seats_remaining=min(SEATS_REMAINING_CAP, *seats_left),
        to_price=to_price,
        price_key=tuple((p.origin, p.destination, p.rbd, p.leg_origins) for p in to_price),
        segments=[[leg.id for leg in s.legs] for s in journey.segments],
    )


def _price_wires(
    priced: PricedOption, pax: Sequence[Pax]
) -> tuple[orjson.Fragment, list[dict[str, Any]]]:
    """The option's totalPrice and passengerPrices (SPEC.md §2.2 PassengerPrice)."""
    pax_by_type: dict[str, list[str]] = {}
    for p in pax:
        pax_by_type.setdefault(p.ptc, []).append(p.pax_id)
    rows = [
        {
            "ptc": ptc,
            "count": count,
            "paxRefIds": pax_by_type[ptc],
            "price": _wire(priced.per_ptc[ptc]),
        }
        for ptc, count in priced.counts.items()
    ]
    return _wire(priced.total), rows


@functools.lru_cache(maxsize=20_000)
def _wire(price: Price) -> orjson.Fragment:
    """A price's wire form as ready JSON, made once per distinct price."""
    return orjson.Fragment(dumps(price.to_wire()))


# The database unreachable (a failover, a pooler restart, a connection cut): an outage to
# retry, 503 ERR-9000 with Retry-After, as on every endpoint; ERR-2002 (500) is for the
# availability read itself failing (SPEC.md §4.1 "availability upstream failure").
UNREACHABLE = (OperationalError, InterfaceError)


def _context(index: NetworkIndex, journeys: Sequence[Journey], pax: Sequence[Pax]) -> _Context:
    leg_ids = {leg.id for j in journeys for s in j.segments for leg in s.legs}
    markets = {(s.origin, s.destination) for j in journeys for s in j.segments}
    try:
        seats = leg_availability(leg_ids)
        fares = reference.fares(markets)
        ladders = reference.ladders()
    except UNREACHABLE:
        raise  # 503 ERR-9000 with Retry-After (airline.api.exceptions), as everywhere
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
    return [b for b in reference.bundles(allowed) if cabin is None or b.cabin == cabin]


def _index(*, current: bool = False) -> NetworkIndex:
    """This worker's schedule index; `current`: of the database's network version
    (network_index), for what prices and sells. A search may answer from the
    index a moment old: what it offers is priced again, on the current one."""
    try:
        return network_index(current=current)
    except UNREACHABLE:
        raise
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


def _check_same_party(pax: Sequence[Pax], shopped: Sequence[dict[str, str]] | None) -> None:
    """A priced offer is for the party that was shopped: the same
    passengers by id and type, as check_pax names them. Another party is another
    search; re-pricing it silently would price what the client never saw."""
    asked = Counter((p.pax_id, p.ptc) for p in pax)
    if shopped is not None and asked != Counter((p["paxId"], p["ptc"]) for p in shopped):
        listed = ", ".join(f"{p['paxId']} ({p['ptc']})" for p in shopped)
        raise ApiError(
            Err.VALIDATION,
            f"The offers were shopped for {listed}; price them for that party, or search "
            "again for another",
            path="passengers",
        )


def _check_directions(offers: Sequence[ShoppingOffer]) -> None:
    """Selections must cover distinct journeys and distinct directions (DESIGN.md §11)."""
    directions = [o.leg_index for o in offers]
    journeys = [o.journey_id for o in offers]
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
