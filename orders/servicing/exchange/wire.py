"""Reshop offers and quotes as the client reads them (SPEC.md §2.7): each replacement's
price with its fee, the differentials, and `serviceChanges` (what happens to each seat
and bag of a replaced journey).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.conf import settings

from airline.api import clock
from airline.fares.money import ZERO, Fee, Price, money_wire, price_sum
from airline.network.itineraries import network_index
from offers.ancillaries import bundle_terms
from offers.store import OfferBatch
from offers.wire import ref_id
from orders.models import (
    Order,
    OrderItem,
    Segment,
    Service,
)
from orders.servicing.exchange.moves import bundle_decides
from orders.servicing.exchange.records import Replacement


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
    """`serviceChanges` of a reshop offer or a quote (docs/partners/servicing.md
    "Changing flights"): each
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
    if bundle_decides(service, bundle):
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


def offer_wire(
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
        "totalPrice": price_sum(price_with_fee(r) for r in items).to_wire(),
        "items": [item_wire(r) for r in items],
        "priceDifferential": total_differential(offer_id, quotes),
        "serviceChanges": service_changes_wire(items, refs),
    }


def item_wire(r: Replacement) -> dict[str, Any]:
    return {
        "offerItemId": r.offer_item_id,
        "journeyRefIds": [r.journey_ref],
        "totalPrice": price_with_fee(r).to_wire(),
        "fare": r.fare,
        "passengerPrices": r.passenger_prices,
        "replacesOrderItemRefIds": [r.replaces],
    }


def price_with_fee(r: Replacement) -> Price:
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
