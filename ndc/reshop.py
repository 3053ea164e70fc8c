"""OrderReshop and OrderQuote (IATA_OrderReshopRQ, IATA_OrderQuoteRQ -> IATA_OrderReshopRS):
the NDC request mapped to the body of POST /json/{v}/orders/{orderId}/reshop (ReshopIn)
and /quote (QuoteIn), validated by the same serializers, answered by the same services
(orders.servicing.reshop.order_reshop, orders.servicing.exchange.quote.order_quote) and
rendered from the same JSON `data` (ndc/reshop_presenters.py). Nothing here decides what
a change costs; offer ids are the JSON ones, so a reshop offer from XML is quoted in JSON
and the reverse.

21.3 has no OrderQuoteRS (../shared/ndc-21.3/README.md): OrderQuoteRQ is answered with
an IATA_OrderReshopRS, as common practice does.

The request mappings are described once, in the NDC guide (docs/partners/ndc.md, "OrderReshop and
OrderQuote"), which shows ORDER_RESHOP_PATHS and ORDER_QUOTE_PATHS.
"""

from typing import Any

from lxml import etree

from airline.api.errors import ApiError
from airline.api.quick_validation import validated
from ndc import reshop_presenters
from ndc.mapping import flight_request_input
from ndc.shopping import _bundles, _plain
from ndc.xml import MSG, c, refused, text
from orders.reading.selectors import ITEM_PARTS, OrderScope, order_get
from orders.requests.serializers import QuoteIn, ReshopIn
from orders.servicing.exchange.quote import order_quote
from orders.servicing.exchange.records import LIVE
from orders.servicing.reshop import order_reshop
from sellers.authentication import Principal

_RESHOP = "/IATA_OrderReshopRQ/Request"
_CHOICE = f"{_RESHOP}/UpdateOrder/ReshopOrder/ReshopOrderChoice"
_SERVICE_ORDER = f"{_CHOICE}/ServiceOrder"
_ADD = f"{_SERVICE_ORDER}/AddOfferItems"
_OD = f"{_ADD}/FlightRequest/FlightRequestOriginDestinationsCriteria/OriginDestCriteria"
_NAME = f"{_CHOICE}/UpdatePaxName"
_DELETED = f"{_SERVICE_ORDER}/DeleteOrderItem/OrderItemRefID"

# JSON field paths of the reshop body (and the services' own errors) -> the XPath of the
# element they came from.
ORDER_RESHOP_PATHS = {
    "orderId": f"{_RESHOP}/OrderRefID",
    "instruction": f"{_RESHOP}/UpdateOrder",
    "instruction.type": f"{_RESHOP}/UpdateOrder",
    "instruction.originDestinations": _OD,
    "instruction.originDestinations.origin": f"{_OD}/OriginDepCriteria/IATA_LocationCode",
    "instruction.originDestinations.destination": f"{_OD}/DestArrivalCriteria/IATA_LocationCode",
    "instruction.originDestinations.departureDate": f"{_OD}/OriginDepCriteria/Date",
    "instruction.cabinTypeCode": f"{_OD}/CabinType/CabinTypeCode",
    "instruction.deleteOrderItemRefIds": _DELETED,
    "instruction.orderItemRefIds": _DELETED,
    "instruction.paxRefId": f"{_NAME}/PaxRefID",
    "instruction.surname": f"{_NAME}/Surname",
    "instruction.givenName": f"{_NAME}/GivenName",
    "passengers": f"{_ADD}/PaxList/Pax",
    "passengers.paxId": f"{_ADD}/PaxList/Pax/PaxID",
    "passengers.type": f"{_ADD}/PaxList/Pax/PTC",
}

_QUOTE = "/IATA_OrderQuoteRQ/Payload"
_SELECTED = f"{_QUOTE}/SelectedOffers"
_PAX_REFS = f"{_SELECTED}/SelectedOfferItem/PaxRefID"
ORDER_QUOTE_PATHS = {
    "orderId": f"{_QUOTE}/ExistingOrder/OrderID",
    "offerId": f"{_SELECTED}/OfferRefID",
    "offerItemIds": f"{_SELECTED}/SelectedOfferItem/OfferItemRefID",
    "passengers": f"{_QUOTE}/PaxList",
    "passengers.paxId": f"{_QUOTE}/PaxList/PaxID",
    "passengers.type": f"{_QUOTE}/PaxList/PTC",
}


def order_reshop_rs(
    *, principal: Principal, document: etree._Element, request_id: str | None
) -> bytes:
    """IATA_OrderReshopRQ -> IATA_OrderReshopRS (as POST /json/{v}/orders/{id}/reshop)."""
    order_ref, wire = order_reshop_input(document)
    body = validated(ReshopIn, wire)
    instruction = body["instruction"]
    data = order_reshop(
        principal=principal,
        ref=order_ref,
        instruction=instruction,
        passengers=body.get("passengers"),
    )
    return reshop_presenters.order_reshop_rs(
        _plain(data),
        name_change=instruction if instruction["type"] == "NameChange" else None,
        cancelled_items=_cancelled_items(principal, order_ref, instruction),
        bundles=_bundles(),
        request_id=request_id,
    )


def order_quote_rs(
    *, principal: Principal, document: etree._Element, request_id: str | None
) -> bytes:
    """IATA_OrderQuoteRQ -> IATA_OrderReshopRS (as POST /json/{v}/orders/{id}/quote)."""
    order_ref, wire, pax_from_refs = order_quote_input(document)
    body = validated(QuoteIn, wire)
    try:
        data = order_quote(
            principal=principal,
            ref=order_ref,
            offer_id=body["offerId"],
            item_ids=body["offerItemIds"],
            passengers=body.get("passengers"),
        )
    except ApiError as err:
        if pax_from_refs and err.path == "passengers.paxId":
            # The passengers came from the PaxRefIDs (no PaxList was sent): point there.
            raise ApiError(
                err.spec, f"{_PAX_REFS}: {err.description}", path=_PAX_REFS, reason=err.reason
            ) from None
        raise
    return reshop_presenters.order_quote_rs(_plain(data), bundles=_bundles(), request_id=request_id)


def _cancelled_items(
    principal: Principal, order_ref: str, instruction: dict[str, Any]
) -> list[str]:
    """The order items a cancellation quote covers, for its DeleteOrderItem (the JSON
    `cancellation` names none): those asked for, or every live one for CancelOrder."""
    if instruction["type"] == "DeleteOrderItems":
        return list(instruction["orderItemRefIds"])
    if instruction["type"] != "CancelOrder":
        return []
    order = order_get(scope=OrderScope.of(principal), ref=order_ref, parts=ITEM_PARTS)
    return [item.ref for item in order.items.all() if item.status == LIVE]


# --- OrderReshopRQ -> the reshop body -------------------------------------------------


def order_reshop_input(document: etree._Element) -> tuple[str, dict[str, Any]]:
    """The order reference and the body of POST /orders/{orderId}/reshop (SPEC.md §4.12)."""
    request = document.find(f"{{{MSG}}}Request")
    order_ref = text(request, "OrderRefID")
    update = request.find(c("UpdateOrder"))
    cancel = update.find(c("CancelOrderRef"))
    if cancel is not None:
        named = cancel.find(c("OrderRefID"))
        if (named.text or "").strip() != order_ref:
            raise refused(named, f"{named.text!r} is not the order of Request/OrderRefID")
        return order_ref, {"instruction": {"type": "CancelOrder"}}
    choice = update.find(f"{c('ReshopOrder')}/{c('ReshopOrderChoice')}")[0]
    name = etree.QName(choice).localname
    if name == "ServiceOrder":
        return order_ref, _service_order(choice)
    if name == "UpdatePaxName":
        return order_ref, {"instruction": _name_change(choice)}
    raise refused(
        choice,
        "only ServiceOrder (new flights, order items removed) and UpdatePaxName are "
        "reshopped; CancelOrderRef quotes a cancellation",
    )


def _service_order(service_order: etree._Element) -> dict[str, Any]:
    deleted = [text(item, "OrderItemRefID") for item in service_order.findall(c("DeleteOrderItem"))]
    add = service_order.find(c("AddOfferItems"))
    if add is None:
        if not deleted:
            raise refused(
                service_order, "name new flights (AddOfferItems) or order items to remove"
            )
        return {"instruction": {"type": "DeleteOrderItems", "orderItemRefIds": deleted}}
    instruction: dict[str, Any] = {
        "type": "ReshopItinerary",
        **flight_request_input(add.find(c("FlightRequest"))),
    }
    if deleted:
        instruction["deleteOrderItemRefIds"] = deleted
    body: dict[str, Any] = {"instruction": instruction}
    passengers = _passengers(add.findall(f"{c('PaxList')}/{c('Pax')}"))
    if passengers:
        body["passengers"] = passengers
    return body


def _name_change(update: etree._Element) -> dict[str, Any]:
    refs = update.findall(c("PaxRefID"))
    if len(refs) > 1:
        raise refused(refs[1], "one passenger per name change")
    instruction = {
        "type": "NameChange",
        "paxRefId": text(update, "PaxRefID"),
        "surname": text(update, "Surname"),
    }
    given_name = text(update, "GivenName")
    if given_name is not None:
        instruction["givenName"] = given_name
    return instruction


# --- OrderQuoteRQ -> the quote body ---------------------------------------------------


def order_quote_input(document: etree._Element) -> tuple[str, dict[str, Any], bool]:
    """The order reference, the body of POST /orders/{orderId}/quote (SPEC.md §4.13), and
    whether its passengers came from the PaxRefIDs (no PaxList sent)."""
    payload = document.find(f"{{{MSG}}}Payload")
    repriced = payload.find(c("RepricedOrder"))
    if repriced is not None:
        raise refused(
            repriced, "the order is repriced through a reshop offer: name it in SelectedOffers"
        )
    existing = payload.find(c("ExistingOrder"))
    if existing is None:
        raise refused(payload, "name the order in ExistingOrder/OrderID", path=f"{_QUOTE}")
    selected = payload.findall(c("SelectedOffers"))
    if not selected:
        raise refused(payload, "select the reshop offer to quote in SelectedOffers")
    if len(selected) > 1:
        raise refused(selected[1], "one reshop offer per quote")
    [offer] = selected
    items = offer.findall(c("SelectedOfferItem"))
    body: dict[str, Any] = {
        "offerId": text(offer, "OfferRefID"),
        "offerItemIds": [text(item, "OfferItemRefID") for item in items],
    }
    passengers = _passengers(payload.findall(c("PaxList")))
    refs = [ref for item in items for ref in item.findall(c("PaxRefID"))]
    if passengers:
        known = {p["paxId"] for p in passengers}
        for ref in refs:
            if (ref.text or "").strip() not in known:
                raise refused(ref, f"{ref.text!r} is not a PaxID of PaxList")
        body["passengers"] = passengers
        return text(existing, "OrderID"), body, False
    distinct = list(dict.fromkeys((ref.text or "").strip() for ref in refs))
    if distinct:
        body["passengers"] = [{"paxId": ref} for ref in distinct]
    return text(existing, "OrderID"), body, True


def _passengers(pax: list[etree._Element]) -> list[dict[str, str]]:
    """Pax (PaxID, PTC) as the JSON passengers (the order's PAX- ids)."""
    passengers = []
    for element in pax:
        passenger = {"paxId": text(element, "PaxID")}
        ptc = text(element, "PTC")
        if ptc is not None:
            passenger["type"] = ptc
        passengers.append(passenger)
    return passengers
