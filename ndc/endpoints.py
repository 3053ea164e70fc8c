"""The NDC endpoint names served under /ndc/{version}/ and what each one is (SPEC.md
§4.14, DESIGN.md §9). A name not in this table is ERR-1000."""

from collections.abc import Callable
from dataclasses import dataclass

from rest_framework.permissions import BasePermission

from ndc import ancillaries, mapping, order_list, order_mapping, orders, reshop, shopping
from ndc.messages import MESSAGES, Message
from sellers.permissions import CanBook, HasAgencyCode, IsSeller


@dataclass(frozen=True)
class Endpoint:
    """One NDC message pair: its request and response roots (ndc.messages), the function
    that serves it, and where its request's fields sit (JSON field path -> XPath, for
    errors the services raise); `permission` is what the caller's key must allow, as for
    the JSON endpoint of the same service (SPEC.md §5: CanBook for what books or
    changes, HasAgencyCode for OrderList)."""

    message: Message
    handle: Callable[..., bytes]  # (*, principal, document, request_id) -> the RS
    paths: dict[str, str]
    permission: type[BasePermission] = IsSeller
    # Changes an order: honours Idempotency-Key as the JSON endpoint does (DESIGN.md §11).
    idempotent: bool = False
    # For one whose service marks its claim APPLIED: the answer of a committed change
    # whose own answer was lost (airline/api/idempotency.py); handle's signature.
    recover: Callable[..., bytes] | None = None
    # The JSON endpoint(s) served by the same service: the NDC guide's table is made from
    # this one (ndc/reference.py), so it names every message and cannot drift.
    json_twin: tuple[str, ...] = ()

    @property
    def request_root(self) -> str:
        return self.message.request_root

    @property
    def response_root(self) -> str:
        return self.message.response_root


ENDPOINTS: dict[str, Endpoint] = {
    "AirShopping": Endpoint(
        MESSAGES["AirShopping"],
        shopping.air_shopping,
        mapping.AIR_SHOPPING_PATHS,
        json_twin=("POST /json/{v}/offers",),
    ),
    "OfferPrice": Endpoint(
        MESSAGES["OfferPrice"],
        shopping.offer_price,
        mapping.OFFER_PRICE_PATHS,
        json_twin=("POST /json/{v}/offers/price",),
    ),
    "SeatAvailability": Endpoint(
        MESSAGES["SeatAvailability"],
        ancillaries.seat_availability,
        ancillaries.SEAT_AVAILABILITY_PATHS,
        json_twin=(
            "POST /json/{v}/offers/{offerId}/seats",
            "POST /json/{v}/orders/{orderId}/seats",
        ),
    ),
    "ServiceList": Endpoint(
        MESSAGES["ServiceList"],
        ancillaries.service_list,
        ancillaries.SERVICE_LIST_PATHS,
        json_twin=(
            "POST /json/{v}/offers/{offerId}/services",
            "POST /json/{v}/orders/{orderId}/services",
        ),
    ),
    "OrderList": Endpoint(
        MESSAGES["OrderList"],
        order_list.order_list,
        order_list.ORDER_LIST_PATHS,
        json_twin=("GET /json/{v}/orders",),
        permission=HasAgencyCode,
    ),
    "OrderReshop": Endpoint(
        MESSAGES["OrderReshop"],
        reshop.order_reshop_rs,
        reshop.ORDER_RESHOP_PATHS,
        json_twin=("POST /json/{v}/orders/{orderId}/reshop",),
        permission=CanBook,
    ),
    "OrderQuote": Endpoint(
        MESSAGES["OrderQuote"],
        reshop.order_quote_rs,
        reshop.ORDER_QUOTE_PATHS,
        json_twin=("POST /json/{v}/orders/{orderId}/quote",),
        permission=CanBook,
    ),
    "OrderCreate": Endpoint(
        MESSAGES["OrderCreate"],
        orders.order_create,
        order_mapping.ORDER_CREATE_PATHS,
        json_twin=("POST /json/{v}/orders",),
        permission=CanBook,
        idempotent=True,
        recover=orders.order_create_applied,
    ),
    "OrderRetrieve": Endpoint(
        MESSAGES["OrderRetrieve"],
        orders.order_retrieve,
        order_mapping.ORDER_RETRIEVE_PATHS,
        json_twin=("GET /json/{v}/orders/{orderId}",),
    ),
    "OrderChange": Endpoint(
        MESSAGES["OrderChange"],
        orders.order_change,
        order_mapping.ORDER_CHANGE_PATHS,
        json_twin=("PATCH /json/{v}/orders/{orderId}",),
        permission=CanBook,
        idempotent=True,
        recover=orders.order_change_applied,
    ),
}
