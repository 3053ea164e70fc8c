"""Reshop (SPEC.md §4.12, §2.7; DESIGN.md §7, §11 "Reshop and quote"): what a change or
cancellation of a booking would cost, before anything is changed. A table of
instructions, one handler each; every handler reads only and answers the parts of the
reshop `data` its instruction fills (offers, cancellation, nameChange). Offers it makes
are stored with source "reshop": only quote order prices them (ERR-3004 otherwise), and
change order's AcceptReshopOffer commits the quote.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from airline.api import clock
from airline.api.errors import ApiError, Err
from orders.models import Order, OrderStatus, Passenger
from orders.presenters import order_pax_header
from orders.selectors import SLIM_PREFETCH, OrderScope, order_get
from sellers.authentication import Principal


@dataclass(frozen=True)
class ReshopRequest:
    """A reshop instruction for an order in the acting seller's scope."""

    principal: Principal
    order: Order  # with SLIM_PREFETCH
    instruction: Mapping[str, Any]
    passengers: Sequence[Passenger]  # the ones named in the request (all when none are)
    now: datetime


Handler = Callable[[ReshopRequest], dict[str, Any]]

# instruction.type -> handler; each module that answers one registers itself here.
INSTRUCTIONS: dict[str, Handler] = {}


def order_reshop(
    *,
    principal: Principal,
    ref: str,
    instruction: Mapping[str, Any],
    passengers: Sequence[Mapping[str, Any]] | None,
) -> dict[str, Any]:
    """`data` of POST /orders/{orderId}/reshop."""
    order = order_get(scope=OrderScope.of(principal), ref=ref, parts=SLIM_PREFETCH)
    handler = INSTRUCTIONS.get(instruction["type"])
    if handler is None:
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            f"{instruction['type']} is not available on this service yet",
            path="instruction.type",
        )
    if order.status not in (OrderStatus.ONHOLD, OrderStatus.CONFIRMED):
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            f"The order is {order.status}; there is nothing to reshop",
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


def named_passengers(order: Order, named: Sequence[Mapping[str, Any]] | None) -> list[Passenger]:
    """The order's passengers a reshop or quote names (all when it names none): each
    paxId must be one of the order's (PAX- id), once; ERR-1005 otherwise."""
    passengers = list(order.passengers.all())
    if not named:
        return passengers
    by_ref = {p.ref: p for p in passengers}
    refs = [entry["paxId"] for entry in named]
    if len(set(refs)) != len(refs):
        raise ApiError(Err.VALIDATION, "A paxId is listed twice", path="passengers.paxId")
    for ref in refs:
        if ref not in by_ref:
            raise ApiError(
                Err.VALIDATION, f"Passenger {ref} is not on this order", path="passengers.paxId"
            )
    return [by_ref[ref] for ref in refs]
