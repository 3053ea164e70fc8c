"""Quote order (SPEC.md §4.13): the chosen replacements of a reshop offer priced again on
live inventory and stored under a new offer id (source "quote") with the order's status.
"""

from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.conf import settings

from airline.api import clock
from airline.api.errors import ApiError, Err, Reason, order_status_reason
from airline.fares.money import price_sum
from offers.ancillaries import bundle_terms
from offers.passengers import Pax
from offers.services import journey_reprice
from offers.store import OfferOwner, OfferSource, batch_save, new_batch
from orders.models import (
    Order,
    OrderItem,
    OrderStatus,
)
from orders.reading.presenters import order_pax_header
from orders.reading.selectors import SLIM_PARTS, OrderScope, order_get
from orders.servicing.airline_changes import pending_change_of
from orders.servicing.exchange.records import LIVE, ExchangeOffer, Replacement, exchange_offer_load
from orders.servicing.exchange.replacements import item_replacing, order_party, with_item_id
from orders.servicing.exchange.wire import (
    ServiceRefs,
    differential,
    item_wire,
    price_with_fee,
    service_changes_wire,
    total_differential,
)
from orders.servicing.reshop_request import named_passengers
from sellers.authentication import Principal


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
    order = order_get(scope=OrderScope.of(principal), ref=ref, parts=SLIM_PARTS)
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
    pax = order_party(order)
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
            "totalPrice": price_sum(price_with_fee(r) for r in repriced).to_wire(),
            "items": [item_wire(r) for r in repriced],
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
    offer = exchange_offer_load(
        offer_id=offer_id,
        owner=OfferOwner.of(principal),
        now=now,
        source=OfferSource.RESHOP,
        order_id=order.order_id,
    )
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
        replacing = item_replacing(covering, item, now)
        found = journey_reprice(segments=old.segments, pax=pax, bundle=bundle_terms(old.bundle))
        if found is None or found[0].departs_at <= now:
            raise ApiError(
                Err.CHANGE_NOT_APPLIED,
                f"The flight of {old.offer_item_id} can no longer be sold; reshop again",
                reason=Reason.FLIGHT_CHANGED,
                path="offerItemIds",
            )
        journey, option = found
        fresh = replacing.offer(journey, option, Decimal(old.change_fee))
        repriced.append(with_item_id(fresh, f"{quote_id}.{n}"))
    return repriced
