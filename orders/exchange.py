"""Itinerary exchange (SPEC.md §3 "Change flow for itineraries", §4.12 ReshopItinerary,
§4.13 quote order, §4.10 AcceptReshopOffer; DESIGN.md §7, §11 "Reshop and quote").

1. `reshop_itinerary` shops replacement journeys for the order's journeys: each in the
   bundle of the item it replaces (or the cabin asked for), priced as the difference
   against what that item cost, plus the bundle's change fee. A bundle that does not
   allow changes (No Flex) is refused. The offers are stored with source "reshop": only
   quote order prices them (ERR-3004 on price offer).
2. `order_quote` prices the chosen replacements again on live inventory and stores the
   quote under a new offer id (source "quote") with the order's version.
3. AcceptReshopOffer (a change-order action) applies a quote to the order it was made
   for, as it still stands in what was quoted (its replaced items live, its status, the
   seats and bags of those journeys: an unrelated change such as UpdateContact leaves a
   quote good): the new seats sold and the old released in one inventory call (legs
   locked in id order, as every sale), the old item CANCELLED, paid seats and bags moved
   to the new flights where they exist, tickets reissued (old coupons EXCHANGED), and the
   difference collected by card, or given back as the bundle says.

Every reshop offer and quote says what happens to each seat and bag of a replaced journey
(`serviceChanges`: MOVED at the price paid, or DROPPED with its value given back or netted
against the difference), and its `priceDifferential` counts the dropped ones in `oldTotal`:
its `balanceDelta` is what accepting it charges or gives back, to the cent.
"""

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db.models import F, Q

from airline.api import clock
from airline.api.errors import ApiError, Err, Reason, order_status_reason
from airline.fares.money import ZERO, Fee, Price, money_wire, price_sum
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
from offers.ancillaries import Traveller, bundle_terms, seats_of_configuration, seats_taken
from offers.passengers import Pax
from offers.services import bundles_for, journey_options, journey_reprice
from offers.store import OfferBatch, OfferOwner, OfferSource, batch_save, new_batch, offer_load
from offers.wire import ref_id
from orders import events, ids
from orders.airline_changes import change_exchanged, journey_airline_cancelled, pending_change_of
from orders.ancillaries import IN_CHANGE, Sale, inclusion_lines, services_write
from orders.create import journey_row, segments_write
from orders.fees import CHANGE, fee_charge
from orders.inputs import AcceptReshopOffer
from orders.models import (
    AirlineChange,
    Journey,
    Leg,
    Order,
    OrderItem,
    OrderStatus,
    Segment,
    Service,
)
from orders.plan import GiveBack, Plan
from orders.presenters import order_pax_header
from orders.reshop_request import ReshopRequest, named_passengers
from orders.selectors import SLIM_PREFETCH, OrderScope, order_get
from orders.tickets import tickets_reissue
from sellers.authentication import Principal

MAX_OFFERS = 20  # replacement offers in one reshop answer (one per combination of journeys)
LIVE = "CONFIRMED"  # an order item's status while it flies (SPEC.md §3)


@dataclass(frozen=True)
class Replacement:
    """One replacement journey for one order item, as the offer store keeps it (the
    typed record of a reshop or quote offer's item)."""

    offer_item_id: str
    replaces: str  # the order item's OOI- id
    journey_ref: str
    bundle: str
    cabin: str
    segments: list[list[int]]  # flight-date leg ids, per segment
    rbds: list[str]
    price: dict[str, Any]  # Price wire of the journey for the party
    fare: dict[str, Any]
    passenger_prices: list[dict[str, Any]]
    change_fee: str  # Decimal as text: the bundle's fee for the whole party
    flight: dict[str, Any]  # the journey's flight wire (SPEC.md §2.4 journeys[])
    # The pending airline change (AIC- id) the replaced journey is covered by: then the
    # replacement is priced at what the item cost, with no fee (orders.airline_changes).
    airline_change: str = ""
    # Where each live service of the replaced journey goes (_service_moves), as quoted:
    # [service pk, new segment index, new leg id], the index None when it is dropped.
    services: list[list[int | None]] = field(default_factory=list)
    dropped: str = "0"  # Decimal as text: what the dropped services cost

    @property
    def new_total(self) -> Decimal:
        return Price.from_wire(self.price).total + Decimal(self.change_fee)

    def stored(self) -> dict[str, Any]:
        # Shallow: the wires may hold orjson Fragments, which the store writes as JSON.
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class ExchangeOffer:
    """A reshop or quote offer: replacements for items of one order."""

    order_id: str
    # The order's status it was made on: a quote is money due now on a paid order and
    # balance due on a hold, so a hold confirmed since (or a cancelled order) needs
    # another (check_accept_reshop_offer checks the rest of what was quoted).
    status: str
    items: list[Replacement]

    def stored(self) -> dict[str, Any]:
        return {
            "order": self.order_id,
            "status": self.status,
            "items": [i.stored() for i in self.items],
        }

    @classmethod
    def load(cls, stored: Mapping[str, Any]) -> "ExchangeOffer":
        return cls(
            order_id=stored["order"],
            # A quote stored before statuses were: never matches, so quote again.
            status=stored.get("status", ""),
            items=[Replacement(**item) for item in stored["items"]],
        )


# --- reshop: ReshopItinerary ---------------------------------------------------------


def reshop_itinerary(request: ReshopRequest) -> dict[str, Any]:
    """`offers` (and the `journeys` they name) of a ReshopItinerary instruction."""
    order, instruction, now = request.order, request.instruction, request.now
    _check_whole_party(request)
    wanted = instruction.get("originDestinations")
    if not wanted:
        raise ApiError(
            Err.VALIDATION,
            "ReshopItinerary needs originDestinations",
            path="instruction.originDestinations",
        )
    replaced = _items_replaced(order, wanted, instruction.get("deleteOrderItemRefIds"))
    pax = _party(order)
    seated = sum(1 for p in pax if p.ptc != "INF")
    choices: list[list[Replacement]] = []
    covering = pending_change_of(order)
    for od, item in zip(wanted, replaced, strict=True):
        change = _covering(covering, item)
        _check_changeable(item, now, change=change)
        bundle = _replacement_bundle(request.principal, item, instruction.get("cabinTypeCode"))
        day = od["departureDate"]
        if day < (now - timedelta(hours=12)).date():  # SPEC.md §8: today in UTC-12
            raise ApiError(
                Err.VALIDATION,
                f"departureDate {day} is in the past",
                path="instruction.originDestinations.departureDate",
            )
        options = journey_options(
            origin=od["origin"].upper(),
            destination=od["destination"].upper(),
            day=day,
            pax=pax,
            bundle=bundle,
        )
        fee = bundle.change_fee * seated
        services = journey_services(item)
        choices.append(
            [
                _with_moves(
                    _free_for(
                        change, item, _replacement(journey, option.stored, option.price, item, fee)
                    ),
                    item,
                    services,
                )
                for journey, option in options
                if journey.departs_at > now
            ]
        )
    batch = new_batch(
        owner=OfferOwner.of(request.principal),
        source=OfferSource.RESHOP,
        now=now,
        passengers=[p.wire() for p in pax],
    )
    offers = []
    items_of = {i.ref: i for i in order.items.all()}
    refs = ServiceRefs.of(order)
    for combination in itertools.islice(itertools.product(*choices), MAX_OFFERS):
        offer_id = batch.offer_id(len(batch.offers) + 1)
        items = [_with_item_id(r, f"{offer_id}.{n}") for n, r in enumerate(combination, start=1)]
        batch.offers[offer_id] = ExchangeOffer(order.order_id, order.status, items).stored()
        offers.append(_offer_wire(offer_id, batch, items, items_of, refs))
    batch_save(batch)
    journeys = {r.journey_ref: r.flight for rs in choices for r in rs}
    return {"offers": offers, "journeys": list(journeys.values())}


def _check_whole_party(request: ReshopRequest) -> None:
    if len(request.passengers) != request.order.passengers.count():
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            "An itinerary change is for every passenger of the order; name all or none",
            reason=Reason.ALL_PASSENGERS,
            path="passengers",
        )


def _items_replaced(
    order: Order, wanted: Sequence[Mapping[str, Any]], refs: Sequence[str] | None
) -> list[OrderItem]:
    """The order's live items the new originDestinations replace: those named in
    deleteOrderItemRefIds, in the same order, or else the item flying each one's market."""
    live = {i.ref: i for i in order.items.all() if i.status == LIVE}
    if refs is not None:
        if len(set(refs)) != len(refs) or len(refs) != len(wanted):
            raise ApiError(
                Err.VALIDATION,
                "Name one order item to replace for each originDestination, each once",
                path="instruction.deleteOrderItemRefIds",
            )
        for ref in refs:
            if ref not in live:
                raise ApiError(
                    Err.CHANGE_NOT_APPLIED,
                    f"{ref} is not a live item of this order",
                    reason=Reason.NOT_ON_ORDER,
                    path="instruction.deleteOrderItemRefIds",
                )
        return [live[ref] for ref in refs]
    journeys = {j.pk: j for j in order.journeys.all()}
    chosen: list[OrderItem] = []
    for od in wanted:
        market = (od["origin"].upper(), od["destination"].upper())
        match = next(
            (
                item
                for item in live.values()
                if item not in chosen
                and (journeys[item.journey_id].origin, journeys[item.journey_id].destination)
                == market
            ),
            None,
        )
        if match is None:
            raise ApiError(
                Err.CHANGE_NOT_APPLIED,
                f"The order has no journey {market[0]}-{market[1]} to replace; name it in "
                "deleteOrderItemRefIds",
                reason=Reason.NOT_ON_ORDER,
                path="instruction.originDestinations",
            )
        chosen.append(match)
    return chosen


def _covering(change: AirlineChange | None, item: OrderItem) -> AirlineChange | None:
    """The pending airline change covering the item's journey, if one does."""
    return change if change is not None and item.journey.ref in change.journey_refs else None


def _free_for(change: AirlineChange | None, item: OrderItem, r: Replacement) -> Replacement:
    """A replacement for a journey an airline change covers costs what the item cost
    (its price and passenger prices), with no change fee: the seller moves to another
    flight at no charge, whatever the fare now is (orders.airline_changes)."""
    if change is None:
        return r
    return replace(
        r,
        price=item.price,
        passenger_prices=_order_pax_ids(item.order, item.passenger_prices),
        change_fee="0",
        airline_change=change.ref,
    )


def _check_changeable(
    item: OrderItem, now: datetime, *, change: AirlineChange | None = None
) -> None:
    """A journey that has departed cannot be changed; nor can a bundle without changes.
    A journey an airline change covers can, whatever its bundle, and even past its time
    when the airline cancelled its flight (it never flew)."""
    if change is not None:
        if item.journey.departs_at <= now and not journey_airline_cancelled(item.journey):
            raise ApiError(
                Err.CHANGE_NOT_APPLIED,
                f"Journey {item.journey.ref} has departed; it cannot be changed",
                reason=Reason.JOURNEY_DEPARTED,
                path="instruction",
            )
        return
    if item.journey.departs_at <= now:
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            f"Journey {item.journey.ref} has departed; it cannot be changed",
            reason=Reason.JOURNEY_DEPARTED,
            path="instruction",
        )
    bundle = bundle_terms(item.bundle)
    if not bundle.changeable:
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            f"The {bundle.name} bundle allows no changes; reshop CancelOrder says what "
            "cancelling gives back",
            reason=Reason.FARE_RULES,
            path="instruction",
        )


def _replacement_bundle(principal: Principal, item: OrderItem, cabin: str | None) -> BundleTerms:
    """The item's own bundle, or, when another cabin is asked for, the first bundle of
    that cabin the key may sell that allows changes."""
    own = bundle_terms(item.bundle)
    if cabin is None or cabin == own.cabin:
        return own
    for bundle in bundles_for(principal, cabin):
        if bundle.changeable:
            return bundle
    raise ApiError(
        Err.CHANGE_NOT_APPLIED,
        f"No bundle in cabin {cabin} can be sold with this key",
        reason=Reason.CABIN_NOT_SOLD,
        path="instruction.cabinTypeCode",
    )


def _party(order: Order) -> list[Pax]:
    """The order's passengers as pricing knows them, by the order's ids (PAX-...): a
    reshop or quote answer names passengers as the order and its requests do (SPEC.md §3)."""
    return [Pax(p.ref, p.ptc) for p in order.passengers.all()]


def _order_pax_ids(order: Order, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Passenger price rows of an item (which a booking priced by its shopped paxIds)
    naming the order's passengers instead."""
    refs = {p.offer_pax_id: p.ref for p in order.passengers.all()}
    return [{**row, "paxRefIds": [refs.get(i, i) for i in row["paxRefIds"]]} for row in rows]


def _replacement(
    journey: NetworkJourney, stored: Mapping[str, Any], price: Price, item: OrderItem, fee
) -> Replacement:
    return Replacement(
        offer_item_id="",
        replaces=item.ref,
        journey_ref=stored["journeyId"],
        bundle=stored["bundle"],
        cabin=stored["cabin"],
        segments=stored["segments"],
        rbds=list(stored["rbds"]),
        price=price.to_wire(),
        fare=stored["fare"],
        passenger_prices=stored["passengerPrices"],
        change_fee=str(fee),
        flight=stored["flight"],
    )


def _with_item_id(replacement: Replacement, item_id: str) -> Replacement:
    return replace(replacement, offer_item_id=item_id)


def _with_moves(r: Replacement, item: OrderItem, services: Sequence[Service]) -> Replacement:
    """The replacement with where each of `services` (the item's journey's) goes, and
    what those that cannot follow cost."""
    moves = _service_moves(item, r, services)
    return replace(
        r,
        services=moves_stored(moves),
        dropped=str(sum((s.total for s, target in moves if target is None), ZERO)),
    )


def moves_stored(moves: Sequence[tuple[Service, tuple[int, int | None] | None]]) -> list[list]:
    """Moves as a quote stores them: [service pk, new segment index, new leg id]."""
    return [[s.pk, *(target or (None, None))] for s, target in moves]


@dataclass(frozen=True)
class ServiceRefs:
    """What `serviceChanges` entries name of the order: its live services by pk, and
    the PAX- ids and segments they belong to."""

    services: Mapping[int, Service]
    pax: Mapping[int, str]
    segments: Mapping[int, Segment]

    @classmethod
    def of(cls, order: Order) -> "ServiceRefs":
        live = Service.objects.filter(order=order, status=Service.Status.ACTIVE)
        return cls(
            services={s.pk: s for s in live},
            pax={p.pk: p.ref for p in order.passengers.all()},
            segments={s.pk: s for j in order.journeys.all() for s in j.segments.all()},
        )


def service_changes_wire(items: Sequence[Replacement], refs: ServiceRefs) -> list[dict[str, Any]]:
    """`serviceChanges` of a reshop offer or a quote (docs/api.md "Changing flights"): each
    live service of a replaced journey, MOVED to the new journey at the price paid
    (`balanceDelta` 0), or DROPPED, its value given back or netted against the
    difference (`balanceDelta` minus its value, counted in the differential's
    oldTotal). New journey and segment ids are those of the answer's `journeys[]`."""
    wire = []
    for r in items:
        for pk, position, _leg in r.services:
            service = refs.services[pk]
            value = service.total
            entry: dict[str, Any] = {
                "serviceId": service.ref,
                "itemId": service.item_ref,
                "code": service.code,
                "name": service.name,
                "paxRefId": refs.pax[service.passenger_id],
                "offerItemId": r.offer_item_id,
                "replacesOrderItemRefId": r.replaces,
                "amount": money_wire(value),
            }
            if service.seat_row is not None:
                entry["seat"] = f"{service.seat_row}{service.seat_column}"
            if position is None:
                entry["action"] = "DROPPED"
                entry["balanceDelta"] = money_wire(-value)
                entry["reason"] = _drop_reason(service, r, refs)
            else:
                entry["action"] = "MOVED"
                entry["balanceDelta"] = money_wire(ZERO)
                entry["journeyRefId"] = r.journey_ref
                if service.segment_id is not None:
                    entry["segmentRefId"] = ref_id("SEG", *r.segments[position])
            wire.append(entry)
    return wire


def _drop_reason(service: Service, r: Replacement, refs: ServiceRefs) -> str:
    bundle = bundle_terms(r.bundle)
    if _bundle_decides(service, bundle):
        return (
            f"The {bundle.name} fare does not include it"
            if service.included
            else f"The {bundle.name} fare includes it"
        )
    old = refs.segments.get(service.segment_id)
    flown = network_index().journey_of(r.segments)
    markets = {(s.origin, s.destination) for s in flown.segments} if flown else set()
    if old is None or (old.origin, old.destination) not in markets:
        where = f"{old.origin}-{old.destination}" if old is not None else "that segment"
        return f"The new journey does not fly {where} as one segment"
    return (
        f"Seat {service.seat_row}{service.seat_column} is not free on the new flight"
        if service.seat_row is not None
        else "The new flight does not carry it"
    )


def _offer_wire(
    offer_id: str,
    batch: OfferBatch,
    items: Sequence[Replacement],
    items_of: Mapping[str, OrderItem],
    refs: "ServiceRefs",
) -> dict[str, Any]:
    quotes = [differential(r, items_of[r.replaces]) for r in items]
    return {
        "offerId": offer_id,
        "ownerCode": settings.AIRLINE_DESIGNATOR,
        "expiresAt": clock.format_utc(batch.expires_at),
        "totalPrice": price_sum(_price_with_fee(r) for r in items).to_wire(),
        "items": [_item_wire(r) for r in items],
        "priceDifferential": total_differential(offer_id, quotes),
        "serviceChanges": service_changes_wire(items, refs),
    }


def _item_wire(r: Replacement) -> dict[str, Any]:
    return {
        "offerItemId": r.offer_item_id,
        "journeyRefIds": [r.journey_ref],
        "totalPrice": _price_with_fee(r).to_wire(),
        "fare": r.fare,
        "passengerPrices": r.passenger_prices,
        "replacesOrderItemRefIds": [r.replaces],
    }


def _price_with_fee(r: Replacement) -> Price:
    """The replacement's price for the party, its change fee as a PenaltyFee."""
    price = Price.from_wire(r.price)
    fee = Decimal(r.change_fee)
    if not fee:
        return price
    return price + Price(base=ZERO, fees=(Fee("PenaltyFee", "CHG", "Change fee", fee),))


def differential(r: Replacement, item: OrderItem) -> dict[str, Any]:
    """SPEC.md §2.7: what the replacement costs against what it replaces: the item and
    the services of its journey that cannot follow (they leave the order with it, so
    `balanceDelta` is what accepting charges or gives back). Services that move keep
    the price paid and are in neither total."""
    return _differential(r.offer_item_id, old=item.total + Decimal(r.dropped), new=r.new_total)


def total_differential(offer_id: str, quotes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    old = sum((Decimal(str(q["oldTotal"]["amount"])) for q in quotes), ZERO)
    new = sum((Decimal(str(q["newTotal"]["amount"])) for q in quotes), ZERO)
    return _differential(offer_id, old=old, new=new)


def _differential(item_id: str, *, old: Decimal, new: Decimal) -> dict[str, Any]:
    delta = new - old
    kind = "AddCol" if delta > 0 else "Refund" if delta < 0 else "EvenExchange"
    return {
        "offerItemId": item_id,
        "oldTotal": money_wire(old),
        "newTotal": money_wire(new),
        "balanceDelta": money_wire(delta),
        "differentialTypeCode": kind,
    }


# --- quote order ---------------------------------------------------------------------


def order_quote(
    *,
    principal: Principal,
    ref: str,
    offer_id: str,
    item_ids: Sequence[str],
    passengers: Sequence[Mapping[str, Any]] | None,
) -> dict[str, Any]:
    """`data` of POST /orders/{orderId}/quote: the chosen replacements of a reshop offer
    priced again on live inventory, stored under a new offer id for AcceptReshopOffer."""
    now = clock.now()
    order = order_get(scope=OrderScope.of(principal), ref=ref, parts=SLIM_PREFETCH)
    chosen = _reshop_items_chosen(
        order, principal=principal, offer_id=offer_id, item_ids=item_ids, now=now
    )
    named_passengers(order, passengers)
    if order.status not in (OrderStatus.ONHOLD, OrderStatus.CONFIRMED):
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            f"The order is {order.status}; it cannot change",
            reason=order_status_reason(order.status),
            path="offerId",
        )
    _check_items_offered(chosen, item_ids=item_ids, offer_id=offer_id)
    items_of = {i.ref: i for i in order.items.all()}
    pax = _party(order)
    quote = new_batch(
        owner=OfferOwner.of(principal),
        source=OfferSource.QUOTE,
        now=now,
        passengers=[p.wire() for p in pax],
    )
    quote_id = quote.offer_id(1)
    repriced = _items_reprice(
        order, [chosen[i] for i in item_ids], items_of=items_of, pax=pax, quote_id=quote_id, now=now
    )
    quote.offers[quote_id] = ExchangeOffer(order.order_id, order.status, repriced).stored()
    batch_save(quote)
    quotes = [differential(r, items_of[r.replaces]) for r in repriced]
    return {
        **order_pax_header(order),
        "priceDifferential": total_differential(quote_id, quotes),
        "itemChangeQuotes": quotes,
        "offer": {
            "offerId": quote_id,
            "ownerCode": settings.AIRLINE_DESIGNATOR,
            "expiresAt": clock.format_utc(quote.expires_at),
            "totalPrice": price_sum(_price_with_fee(r) for r in repriced).to_wire(),
            "items": [_item_wire(r) for r in repriced],
        },
        "journeys": list({r.journey_ref: r.flight for r in repriced}.values()),
        "serviceChanges": service_changes_wire(repriced, ServiceRefs.of(order)),
    }


def _reshop_items_chosen(
    order: Order, *, principal: Principal, offer_id: str, item_ids: Sequence[str], now: datetime
) -> dict[str, Replacement]:
    """The items of the reshop offer `offer_id` made for `order`, by id: refused for an
    item listed twice, for an offer of shopping, or one made for another order."""
    if len(set(item_ids)) != len(item_ids):
        raise ApiError(Err.VALIDATION, "An offerItemId is listed twice", path="offerItemIds")
    batch, stored = offer_load(offer_id=offer_id, owner=OfferOwner.of(principal), now=now)
    if batch.source != OfferSource.RESHOP:
        raise ApiError(
            Err.OFFER_FROM_SHOPPING,
            f"Offer {offer_id} is not a reshop offer; price it with POST /offers/price",
            path="offerId",
        )
    offer = ExchangeOffer.load(stored)
    if offer.order_id != order.order_id:
        raise ApiError(Err.OFFER_NOT_FOUND, f"Offer {offer_id} not found", path="offerId")
    return {r.offer_item_id: r for r in offer.items}


def _check_items_offered(
    chosen: Mapping[str, Replacement], *, item_ids: Sequence[str], offer_id: str
) -> None:
    for item_id in item_ids:
        if item_id not in chosen:
            raise ApiError(
                Err.CHANGE_NOT_APPLIED,
                f"Offer {offer_id} has no item {item_id}",
                reason=Reason.OFFER_UNKNOWN,
                path="offerItemIds",
            )


def _items_reprice(
    order: Order,
    offered: Sequence[Replacement],
    *,
    items_of: Mapping[str, OrderItem],
    pax: Sequence[Pax],
    quote_id: str,
    now: datetime,
) -> list[Replacement]:
    """Each replacement `offered` priced again on live inventory, as item n of the quote
    `quote_id`; refused (CHANGE_NOT_APPLIED) when the item it replaces is gone from the
    order or can no longer change, or when its flight can no longer be sold."""
    repriced = []
    covering = pending_change_of(order)
    for n, old in enumerate(offered, start=1):
        item = items_of.get(old.replaces)
        if item is None or item.status != LIVE:
            raise ApiError(
                Err.CHANGE_NOT_APPLIED,
                f"{old.replaces} is no longer on the order; reshop again",
                reason=Reason.QUOTE_STALE,
                path="offerItemIds",
            )
        change = _covering(covering, item)
        _check_changeable(item, now, change=change)
        found = journey_reprice(segments=old.segments, pax=pax, bundle=bundle_terms(old.bundle))
        if found is None or found[0].departs_at <= now:
            raise ApiError(
                Err.CHANGE_NOT_APPLIED,
                f"The flight of {old.offer_item_id} can no longer be sold; reshop again",
                reason=Reason.FLIGHT_CHANGED,
                path="offerItemIds",
            )
        journey, option = found
        fresh = _replacement(journey, option.stored, option.price, item, Decimal(old.change_fee))
        fresh = _with_moves(_free_for(change, item, fresh), item, journey_services(item))
        repriced.append(_with_item_id(fresh, f"{quote_id}.{n}"))
    return repriced


# --- change order: AcceptReshopOffer ---------------------------------------------------


def check_accept_reshop_offer(plan: Plan, entries: Sequence[AcceptReshopOffer]) -> Any:
    """The quote, for the order as it was quoted: the difference it says, due or given
    back (as the replaced bundle gives back: a refund for a refundable bundle, else
    airline credit); the seats and bags that move; the legs that must still fly."""
    if len(entries) != 1:
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            "Accept one reshop offer per request",
            reason=Reason.COMBINATION,
            path="changes",
        )
    entry = entries[0]
    order = plan.order
    # The quote's flights are read from this worker's schedule index (_service_moves
    # here, _swaps_flown under the order's lock): brought to the database's network
    # version now, before any lock is taken, so no exchange is made on an older schedule.
    network_index(current=True)
    offer = _quote_of(plan, entry)
    if sorted(entry.offer_item_ids) != sorted(r.offer_item_id for r in offer.items):
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            "offerItemIds must be the quote's items, each once",
            reason=Reason.NOT_ON_ORDER,
            path="changes.offerItemIds",
        )
    items_of = {i.ref: i for i in order.items.all()}
    swaps = []
    covering = pending_change_of(order)
    for r in offer.items:
        item = items_of[r.replaces]
        change = _covering(covering, item)
        if r.airline_change and (change is None or change.ref != r.airline_change):
            raise ApiError(
                Err.CHANGE_NOT_APPLIED,
                f"Airline change {r.airline_change} is no longer pending; reshop and quote again",
                reason=Reason.QUOTE_STALE,
                path="changes.offerId",
            )
        if change is not None and not r.airline_change:
            # Detected since the quote: the journey now changes at no charge.
            raise ApiError(
                Err.CHANGE_NOT_APPLIED,
                f"Airline change {change.ref} now covers {item.journey.ref}; reshop and quote "
                "again",
                reason=Reason.QUOTE_STALE,
                path="changes.offerId",
            )
        if item.status != LIVE:
            raise ApiError(
                Err.CHANGE_NOT_APPLIED,
                f"{item.ref} is no longer on the order; reshop and quote again",
                reason=Reason.QUOTE_STALE,
                path="changes.offerId",
            )
        _check_changeable(item, plan.now, change=change)
        moves = _service_moves(item, r, journey_services(item))
        if moves_stored(moves) != r.services:
            # The amount is the quote's to the cent, or nothing happens: a seat or bag
            # bought, changed or taken since would move money the quote did not say.
            raise ApiError(
                Err.CHANGE_NOT_APPLIED,
                f"The seats and services of {item.journey.ref} are not as quoted; reshop "
                "and quote again",
                reason=Reason.QUOTE_STALE,
                path="changes.offerId",
            )
        plan.added += Price.from_wire(r.price).total - item.total - Decimal(r.dropped)
        plan.retained += Decimal(r.change_fee)
        if change is not None or bundle_terms(item.bundle).refund_method == "refund":
            # A seat that cannot follow to a flight the airline made us take goes back to
            # the card, whatever the bundle.
            plan.give_back = max(plan.give_back, GiveBack.REFUND)
        else:
            plan.give_back = max(plan.give_back, GiveBack.CREDIT)
        plan.leg_ids |= {leg_id for legs in r.segments for leg_id in legs}
        swaps.append((item, r, moves))

    def do_accept_reshop_offer(plan: Plan, locked: Order) -> None:
        _exchange(plan, locked, swaps)

    return do_accept_reshop_offer


def _quote_of(plan: Plan, entry: AcceptReshopOffer) -> ExchangeOffer:
    """The quote the entry names, made for this order as it stands (ERR-4002 otherwise:
    change order's errors are SPEC.md §4.10's)."""
    offer_id = entry.offer_id
    try:
        batch, stored = offer_load(offer_id=offer_id, owner=plan.offer_owner, now=plan.now)
    except ApiError as error:
        if error.spec.status >= 500:
            raise  # the offer cache is down: not the client's offer's fault
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            f"{error.description}; reshop and quote again",
            reason=Reason.OFFER_EXPIRED
            if error.spec is Err.OFFER_EXPIRED
            else Reason.OFFER_UNKNOWN,
            path="changes.offerId",
        ) from None
    if batch.source != OfferSource.QUOTE:
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            f"Offer {offer_id} is not a quote; price a reshop offer with quote order first",
            reason=Reason.OFFER_NOT_QUOTED,
            path="changes.offerId",
        )
    offer = ExchangeOffer.load(stored)
    if offer.order_id != plan.order.order_id:
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            f"Offer {offer_id} is not for this order",
            reason=Reason.OFFER_UNKNOWN,
            path="changes.offerId",
        )
    if offer.status != plan.order.status:
        # Only what the quote depends on is checked (here and check_accept_reshop_offer):
        # a contact or passenger detail changed since leaves it good.
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            f"The order is {plan.order.status} now, not as quoted; reshop and quote again",
            reason=Reason.QUOTE_STALE,
            path="changes.offerId",
        )
    return offer


def journey_services(item: OrderItem) -> list[Service]:
    """The live services of the item's journey (on the journey or one of its segments),
    in id order."""
    journey = item.journey
    return list(
        Service.objects.filter(
            Q(journey=journey) | Q(segment__journey=journey), status=Service.Status.ACTIVE
        ).order_by("pk")
    )


def _service_moves(
    item: OrderItem, r: Replacement, services: Sequence[Service]
) -> list[tuple[Service, tuple[int, int | None] | None]]:
    """Each of `services` (journey_services of the replaced item) and where it goes: (new
    segment index, new leg id) — a bag or other journey service to the new journey, a
    seat to the same seat on the matching leg of the new flight if it has that seat
    free — or None: it cannot follow and is cancelled, its value given back with the
    difference. A bundle's inclusions go with the bundle (_bundle_decides)."""
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
        if _bundle_decides(service, bundle):
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


def _bundle_decides(service: Service, bundle: BundleTerms) -> bool:
    """Whether the new journey's bundle, not the service, decides it (DESIGN.md §11
    "Bundle inclusions": they belong to the bundle): an inclusion the new bundle does not
    include is dropped, at 0; a bag bought on the journey that the new bundle includes is
    dropped too, its price given back, for the inclusion written anew
    (_inclusions_write). An inclusion the new bundle also includes moves, still at 0."""
    if service.seat_row is not None or service.segment_id is not None:
        return False
    return service.included != bundle.includes_service(service.code)


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


def _matching_leg(service: Service, old: Segment, segment):
    """The new segment's leg in the position the seat's leg had in the old segment."""
    old_legs = list(old.legs.all())
    position = next(
        (n for n, leg in enumerate(old_legs) if leg.flight_leg_id == service.flight_leg_id), None
    )
    if position is None or position >= len(segment.legs):
        return None
    return segment.legs[position]


def _exchange(plan: Plan, order: Order, swaps) -> None:
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


# Registered when the app is ready (orders.apps): change order and reshop look them up.
