"""SeatAvailability and ServiceList (IATA_SeatAvailabilityRQ/RS, IATA_ServiceListRQ/RS):
the NDC request mapped to the body of the JSON seats and services endpoints, validated
by the same serializers, the trip found and the answer built by the same services as
POST /json/{v}/offers/{offerId}/seats and /services (SPEC.md §4.6) and
POST /json/{v}/orders/{orderId}/seats and /services (§4.11), rendered from the same JSON
`data` (ndc/ancillary_presenters.py). Nothing here decides anything about seats or
services: the answer's ALaCarteOffer is the JSON `data.offerId` with its offerItemIds,
which AcceptOffer (JSON PATCH /orders/{orderId}) buys.

The request mapping is described once, in the NDC guide (docs/partners/ndc.md, "SeatAvailability
and ServiceList"), which shows SEAT_AVAILABILITY_PATHS and SERVICE_LIST_PATHS.
"""

from collections.abc import Callable
from typing import Any

from lxml import etree

from airline.api import clock
from airline.api.quick_validation import validated
from ndc import ancillary_presenters
from ndc.shopping import _plain
from ndc.xml import MSG, c, refused, text
from offers import ancillaries as services
from offers.serializers import AncillaryIn
from offers.store import OfferOwner
from orders.reading.selectors import OrderScope, order_get
from orders.reading.trips import order_trip
from orders.requests.serializers import OrderAncillaryIn
from sellers.authentication import Principal

_SEATS = "/IATA_SeatAvailabilityRQ/Request"
_SEATS_CORE = f"{_SEATS}/SeatAvailibilityCoreRequest"
_SERVICES = "/IATA_ServiceListRQ/Request"
_SERVICES_CORE = f"{_SERVICES}/ServiceListCoreRequest"


def _paths(request: str, core: str) -> dict[str, str]:
    """JSON field paths of the seats and services bodies (and the services' own errors)
    -> the XPath of the element they came from."""
    return {
        "offerId": f"{core}/OfferRequest/Offer/OfferID",
        "offerItemIds": f"{core}/OfferRequest/Offer/OfferItem/OfferItemID",
        "orderId": f"{core}/OrderRequest/Order/OrderID",
        "orderItemIds": f"{core}/OrderRequest/Order/OrderItem/OrderItemID",
        "passengers": f"{request}/Pax",
        "passengers.type": f"{request}/Pax/PTC",
        "passengers.paxId": f"{request}/Pax/PaxID",
    }


SEAT_AVAILABILITY_PATHS = _paths(_SEATS, _SEATS_CORE)
SERVICE_LIST_PATHS = _paths(_SERVICES, _SERVICES_CORE)


def seat_availability(
    *, principal: Principal, document: etree._Element, request_id: str | None
) -> bytes:
    """IATA_SeatAvailabilityRQ -> IATA_SeatAvailabilityRS (as POST .../seats)."""
    data, travellers = _answer(
        principal, document, "SeatAvailibilityCoreRequest", services.seat_maps
    )
    return ancillary_presenters.seat_availability_rs(
        data, travellers=travellers, request_id=request_id
    )


def service_list(
    *, principal: Principal, document: etree._Element, request_id: str | None
) -> bytes:
    """IATA_ServiceListRQ -> IATA_ServiceListRS (as POST .../services)."""
    data, travellers = _answer(principal, document, "ServiceListCoreRequest", services.service_list)
    return ancillary_presenters.service_list_rs(data, travellers=travellers, request_id=request_id)


def _answer(
    principal: Principal, document: etree._Element, core_name: str, build: Callable[..., Any]
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The JSON `data` of the seats or services answer the request names, and the party
    it was built for (PaxID, PTC). The same steps as offers.endpoints.AncillariesView."""
    request = document.find(f"{{{MSG}}}Request")
    core = request.find(c(core_name))
    passengers = [
        {"paxId": text(pax, "PaxID"), **({"type": text(pax, "PTC")} if text(pax, "PTC") else {})}
        for pax in request.findall(c("Pax"))
    ]
    owner = OfferOwner.of(principal)
    now = clock.now()
    offer_request = core.find(c("OfferRequest"))
    order_request = core.find(c("OrderRequest"))
    with services.ancillary_lookup():
        if offer_request is not None:
            trip = _offer_trip(offer_request, passengers, owner=owner, now=now)
        elif order_request is not None:
            trip = _order_trip(principal, order_request, passengers)
        else:
            chosen = core[0]
            raise refused(
                chosen,
                "name an offer (OfferRequest) or an order "
                "(OrderRequest); seats and services of flights alone are not offered",
            )
        data = build(
            trip=trip,
            owner=owner,
            categories=principal.key.allowed_ancillary_categories,
            now=now,
        )
    return _plain(data), [(t.ref, t.ptc) for t in trip.travellers]


def _offer_trip(offer_request: etree._Element, passengers, *, owner: OfferOwner, now):
    offers = offer_request.findall(c("Offer"))
    if len(offers) > 1:
        raise refused(
            offers[1],
            "one offer per request (a priced offer holds every flight of the trip)",
        )
    [offer] = offers
    body: dict[str, Any] = {
        "offerItemIds": [text(item, "OfferItemID") for item in offer.findall(c("OfferItem"))]
    }
    if passengers:
        body["passengers"] = passengers
    checked = validated(AncillaryIn, body)
    return services.offer_trip(
        offer_id=text(offer, "OfferID"),
        item_ids=checked["offerItemIds"],
        passengers=checked.get("passengers"),
        owner=owner,
        now=now,
    )


def _order_trip(principal: Principal, order_request: etree._Element, passengers):
    order = order_request.find(c("Order"))
    body: dict[str, Any] = {}
    item_ids = [text(item, "OrderItemID") for item in order.findall(c("OrderItem"))]
    if item_ids:
        body["orderItemIds"] = item_ids
    if passengers:
        body["passengers"] = passengers
    checked = validated(OrderAncillaryIn, body)
    found = order_get(
        scope=OrderScope.of(principal), ref=text(order, "OrderID"), parts=(), stale_ok=True
    )
    return order_trip(
        order=found,
        item_refs=checked.get("orderItemIds"),
        passengers=checked.get("passengers"),
    )
