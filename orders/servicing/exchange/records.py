"""What reshop and quote offers hold (DESIGN.md §11 "Reshop and quote"): a replacement journey
for an order item, as the offer store keeps it, and the offer of them made for one order.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from decimal import Decimal
from typing import Any

from airline.api.errors import ApiError, Err
from airline.fares.money import Price
from offers.store import OfferOwner, OfferSource, offer_load

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
    # replacement is priced at what the item cost, with no fee (orders.servicing.airline_changes).
    airline_change: str = ""
    # Where each live service of the replaced journey goes (service_moves), as quoted:
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


# What each exchange offer is called, and what to do with another kind, when refused.
_KINDS = {
    OfferSource.RESHOP: ("a reshop offer", "price it with POST /offers/price"),
    OfferSource.QUOTE: ("a quote", "price a reshop offer with quote order first"),
}


def exchange_offer_load(
    *, offer_id: str, owner: OfferOwner, now: datetime, source: OfferSource, order_id: str
) -> ExchangeOffer:
    """The reshop offer or quote (`source`) `offer_id`, made for the order `order_id`.
    Refused as quote order refuses an offer (SPEC.md §4.13, path `offerId`): the offer
    store's ERR-3000/3001, ERR-3005 for an offer of another kind, ERR-3000 for one made
    for another order. AcceptReshopOffer turns these into its ERR-4002 (exchange.accept)."""
    batch, stored = offer_load(offer_id=offer_id, owner=owner, now=now)
    if batch.source != source:
        kind, instead = _KINDS[source]
        raise ApiError(
            Err.OFFER_FROM_SHOPPING, f"Offer {offer_id} is not {kind}; {instead}", path="offerId"
        )
    offer = ExchangeOffer.load(stored)
    if offer.order_id != order_id:
        raise ApiError(Err.OFFER_NOT_FOUND, f"Offer {offer_id} not found", path="offerId")
    return offer
