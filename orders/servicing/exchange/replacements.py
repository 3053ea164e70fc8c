"""A replacement journey for an order item, priced as the difference against what the item
cost plus the bundle's change fee, and the rules on which items may change (DESIGN.md §7,
§11): shared by reshop, quote and accept.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from airline.api.errors import ApiError, Err, Reason
from airline.fares.money import Price
from airline.network.itineraries import Journey as NetworkJourney
from offers.ancillaries import bundle_terms
from offers.passengers import Pax
from offers.services import Option
from orders.models import (
    AirlineChange,
    Order,
    OrderItem,
    Service,
)
from orders.servicing.airline_changes import journey_airline_cancelled
from orders.servicing.exchange.moves import journey_services, with_moves
from orders.servicing.exchange.records import Replacement


def change_covering(change: AirlineChange | None, item: OrderItem) -> AirlineChange | None:
    """The pending airline change covering the item's journey, if one does."""
    return change if change is not None and item.journey.ref in change.journey_refs else None


def free_for(change: AirlineChange | None, item: OrderItem, r: Replacement) -> Replacement:
    """A replacement for a journey an airline change covers costs what the item cost
    (its price and passenger prices), with no change fee: the seller moves to another
    flight at no charge, whatever the fare now is (orders.servicing.airline_changes)."""
    if change is None:
        return r
    return replace(
        r,
        price=item.price,
        passenger_prices=_order_pax_ids(item.order, item.passenger_prices),
        change_fee="0",
        airline_change=change.ref,
    )


def _order_pax_ids(order: Order, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Passenger price rows of an item (which a booking priced by its shopped paxIds)
    naming the order's passengers instead."""
    refs = {p.offer_pax_id: p.ref for p in order.passengers.all()}
    return [{**row, "paxRefIds": [refs.get(i, i) for i in row["paxRefIds"]]} for row in rows]


def check_changeable(
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


def order_party(order: Order) -> list[Pax]:
    """The order's passengers as pricing knows them, by the order's ids (PAX-...): a
    reshop or quote answer names passengers as the order and its requests do (SPEC.md §3)."""
    return [Pax(p.ref, p.ptc) for p in order.passengers.all()]


def replacement_of(
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


def with_item_id(replacement: Replacement, item_id: str) -> Replacement:
    return replace(replacement, offer_item_id=item_id)


@dataclass(frozen=True)
class Replacing:
    """An order item that reshop or quote replaces: the pending airline change covering
    its journey, if one does, and the live seats and bags of that journey."""

    item: OrderItem
    change: AirlineChange | None
    services: list[Service]

    def offer(self, journey: NetworkJourney, option: Option, fee) -> Replacement:
        """`journey` as the replacement offered for the item: priced against it with
        `fee` (at the item's own price, with no fee, when an airline change covers it),
        with where each of its seats and bags goes."""
        r = replacement_of(journey, option.stored, option.price, self.item, fee)
        return with_moves(free_for(self.change, self.item, r), self.item, self.services)


def item_replacing(covering: AirlineChange | None, item: OrderItem, now: datetime) -> Replacing:
    """The item as reshop and quote replace it, once it may change (check_changeable):
    `covering` is the order's pending airline change (pending_change_of)."""
    change = change_covering(covering, item)
    check_changeable(item, now, change=change)
    return Replacing(item, change, journey_services(item))
