"""AcceptReshopOffer (SPEC.md §4.10), the check half of the change-order action: the quote
must be for this order as it still stands in what was quoted (its replaced items live,
its status, the seats and bags of those journeys); the difference it says is what the
change charges or gives back. The write half is orders.servicing.exchange.apply.
"""

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from airline.api.errors import ApiError, Err, Reason
from airline.fares.money import Price
from airline.network.itineraries import network_index
from offers.ancillaries import bundle_terms
from offers.store import OfferSource
from orders.models import (
    Order,
)
from orders.requests.inputs import AcceptReshopOffer
from orders.servicing.airline_changes import pending_change_of
from orders.servicing.exchange.apply import exchange_apply
from orders.servicing.exchange.moves import journey_services, moves_stored, service_moves
from orders.servicing.exchange.records import LIVE, ExchangeOffer, exchange_offer_load
from orders.servicing.exchange.replacements import change_covering, check_changeable
from orders.servicing.plan import GiveBack, Plan


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
    # The quote's flights are read from this worker's schedule index (service_moves
    # here, exchange.apply under the order's lock): brought to the database's network
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
        change = change_covering(covering, item)
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
        check_changeable(item, plan.now, change=change)
        moves = service_moves(item, r, journey_services(item))
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
        exchange_apply(plan, locked, swaps)

    return do_accept_reshop_offer


# Why the quote named cannot be accepted, by the error loading it gave.
_REASONS = {
    Err.OFFER_EXPIRED: Reason.OFFER_EXPIRED,
    Err.OFFER_FROM_SHOPPING: Reason.OFFER_NOT_QUOTED,
}


def _quote_of(plan: Plan, entry: AcceptReshopOffer) -> ExchangeOffer:
    """The quote the entry names, made for this order as it stands (ERR-4002 otherwise:
    change order's errors are SPEC.md §4.10's)."""
    try:
        offer = exchange_offer_load(
            offer_id=entry.offer_id,
            owner=plan.offer_owner,
            now=plan.now,
            source=OfferSource.QUOTE,
            order_id=plan.order.order_id,
        )
    except ApiError as error:
        if error.spec.status >= 500:
            raise  # the offer cache is down: not the client's offer's fault
        again = error.spec in (Err.OFFER_NOT_FOUND, Err.OFFER_EXPIRED)
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            error.description + ("; reshop and quote again" if again else ""),
            reason=_REASONS.get(error.spec, Reason.OFFER_UNKNOWN),
            path="changes.offerId",
        ) from None
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
