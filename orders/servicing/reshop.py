"""Reshop (SPEC.md §4.12, §2.7; DESIGN.md §7, §11 "Reshop and quote"): what a change or
cancellation of a booking would cost, before anything is changed. A table of
instructions, one handler each; every handler reads only and answers the parts of the
reshop `data` its instruction fills (offers, cancellation, nameChange). Offers it makes
are stored with source "reshop": only quote order prices them (ERR-3004 otherwise), and
change order's AcceptReshopOffer commits the quote.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from airline.api import clock
from airline.api.errors import ApiError, Err, Reason, order_status_reason
from orders.models import OrderStatus
from orders.reading.presenters import order_pax_header
from orders.reading.selectors import SLIM_PARTS, OrderScope, order_get
from orders.servicing import amend, cancel
from orders.servicing.exchange.reshop import reshop_itinerary
from orders.servicing.reshop_request import ReshopRequest, named_passengers
from sellers.authentication import Principal

# instruction.type -> its handler (SPEC.md §4.12), in the module of its kind.
INSTRUCTIONS: dict[str, Callable[[ReshopRequest], dict[str, Any]]] = {
    "NameChange": amend.reshop_name_change,
    "CancelOrder": cancel.reshop_cancel_order,
    "DeleteOrderItems": cancel.reshop_delete_items,
    "ReshopItinerary": reshop_itinerary,
}


def order_reshop(
    *,
    principal: Principal,
    ref: str,
    instruction: Mapping[str, Any],
    passengers: Sequence[Mapping[str, Any]] | None,
) -> dict[str, Any]:
    """`data` of POST /orders/{orderId}/reshop."""
    order = order_get(scope=OrderScope.of(principal), ref=ref, parts=SLIM_PARTS)
    handler = INSTRUCTIONS.get(instruction["type"])
    if handler is None:
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            f"{instruction['type']} is not available on this service yet",
            reason=Reason.NOT_SUPPORTED,
            path="instruction.type",
        )
    if order.status not in (OrderStatus.ONHOLD, OrderStatus.CONFIRMED):
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            f"The order is {order.status}; there is nothing to reshop",
            reason=order_status_reason(order.status),
            path="instruction",
        )
    request = ReshopRequest(
        principal=principal,
        order=order,
        instruction=instruction,
        passengers=named_passengers(order, passengers),
        now=clock.now(),
    )
    return {**order_pax_header(order), "offers": [], **handler(request)}
