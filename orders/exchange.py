"""Itinerary exchange (SPEC.md §4.12 ReshopItinerary, §4.13 quote, §4.10
AcceptReshopOffer; DESIGN.md §7, §11 "Reshop and quote")."""

from collections.abc import Mapping, Sequence
from typing import Any

from airline.api.errors import ApiError, Err
from sellers.authentication import Principal


def order_quote(
    *,
    principal: Principal,
    ref: str,
    offer_id: str,
    item_ids: Sequence[str],
    passengers: Sequence[Mapping[str, Any]] | None,
) -> dict[str, Any]:
    """`data` of POST /orders/{orderId}/quote."""
    raise ApiError(Err.CHANGE_NOT_APPLIED, "Quote order is not available on this service yet")
