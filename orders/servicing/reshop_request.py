"""What a reshop instruction's handler receives (orders.servicing.reshop), apart from that module
so that the modules answering instructions (amend, cancel, exchange) build on it and
orders.servicing.reshop's table imports them."""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from airline.api.errors import ApiError, Err
from orders.models import Order, Passenger
from sellers.authentication import Principal


@dataclass(frozen=True)
class ReshopRequest:
    """A reshop instruction for an order in the acting seller's scope."""

    principal: Principal
    order: Order  # with SLIM_PARTS
    instruction: Mapping[str, Any]
    passengers: Sequence[Passenger]  # the ones named in the request (all when none are)
    now: datetime


Handler = Callable[[ReshopRequest], dict[str, Any]]


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
