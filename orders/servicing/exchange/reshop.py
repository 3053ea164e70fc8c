"""ReshopItinerary (SPEC.md §4.12): replacement journeys for the order's journeys, each in
the bundle of the item it replaces (or the cabin asked for), priced as the difference
against what that item cost plus the bundle's change fee; stored with source "reshop",
which only quote order prices (ERR-3004 on price offer).
"""

import itertools
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from airline.api.errors import ApiError, Err, Reason
from airline.fares.terms import BundleTerms
from offers.ancillaries import bundle_terms
from offers.services import bundles_for, journey_options
from offers.store import OfferOwner, OfferSource, batch_save, new_batch
from orders.models import (
    Order,
    OrderItem,
)
from orders.servicing.airline_changes import pending_change_of
from orders.servicing.exchange.records import LIVE, ExchangeOffer, Replacement
from orders.servicing.exchange.replacements import item_replacing, order_party, with_item_id
from orders.servicing.exchange.wire import (
    ServiceRefs,
    offer_wire,
)
from orders.servicing.reshop_request import ReshopRequest
from sellers.authentication import Principal

MAX_OFFERS = 20  # replacement offers in one reshop answer (one per combination of journeys)


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
    pax = order_party(order)
    seated = sum(1 for p in pax if p.ptc != "INF")
    choices: list[list[Replacement]] = []
    covering = pending_change_of(order)
    for od, item in zip(wanted, replaced, strict=True):
        replacing = item_replacing(covering, item, now)
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
        choices.append(
            [
                replacing.offer(journey, option, fee)
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
        items = [with_item_id(r, f"{offer_id}.{n}") for n, r in enumerate(combination, start=1)]
        batch.offers[offer_id] = ExchangeOffer(order.order_id, order.status, items).stored()
        offers.append(offer_wire(offer_id, batch, items, items_of, refs))
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
