"""OrderCreate, OrderRetrieve and OrderChange: the NDC request read into the typed input
of the service the JSON order endpoints call (orders/views.py), and the answer rendered
as IATA_OrderViewRS from the same JSON order view (DESIGN.md §9). Nothing here decides
anything about orders."""

from lxml import etree

from airline.api.errors import ApiError
from ndc import order_mapping
from ndc.order_presenters import order_view_rs
from orders import presenters
from orders.booking.create import order_create as create_order
from orders.changes import order_change as change_order
from orders.exchange.records import LIVE
from orders.inputs import CancelJourney, ConfirmHold
from orders.models import Channel, OrderStatus
from orders.selectors import OrderScope, order_get
from sellers.authentication import Principal


def order_create(
    *, principal: Principal, document: etree._Element, request_id: str | None
) -> bytes:
    """IATA_OrderCreateRQ -> IATA_OrderViewRS (as POST /json/{v}/orders)."""
    created = create_order(
        principal=principal, channel=Channel.NDC, **order_mapping.create_input(document)
    )
    view = presenters.order_view_data(created.order, parts=created)
    return order_view_rs(view, request_id=request_id)


def order_retrieve(
    *, principal: Principal, document: etree._Element, request_id: str | None
) -> bytes:
    """IATA_OrderRetrieveRQ -> IATA_OrderViewRS (as GET /json/{v}/orders/{orderId})."""
    ref, owner_code, where = order_mapping.retrieve_ref(document)
    try:
        order = order_get(
            scope=OrderScope.of(principal),
            ref=ref,
            owner_code=owner_code,
            parts=(),
            stale_ok=True,
        )
    except ApiError as err:
        if err.path != "orderId":
            raise
        # The order was named by OrderID or by BookingID: the error names that element.
        raise ApiError(
            err.spec, f"{where}: {err.description}", path=where, reason=err.reason
        ) from None
    return order_view_rs(presenters.order_view_data(order), request_id=request_id)


def order_change(
    *, principal: Principal, document: etree._Element, request_id: str | None
) -> bytes:
    """IATA_OrderChangeRQ -> IATA_OrderViewRS (as PATCH /json/{v}/orders/{orderId})."""
    asked = order_mapping.change_request(document)
    changes = list(asked.changes)
    if asked.cancelled_items:
        journey_of = _journeys_of_items(principal, asked.order_ref)
        changes += [CancelJourney(journey_of.get(ref, ref)) for ref in asked.cancelled_items]
    if asked.cancel_every_journey:
        flying = _journeys_of_items(principal, asked.order_ref, live_only=True)
        changes += [CancelJourney(journey) for journey in dict.fromkeys(flying.values())]
    if asked.pays_order and _on_hold(principal, asked.order_ref):
        changes.append(ConfirmHold())
    order = change_order(
        principal=principal, ref=asked.order_ref, changes=changes, payment=asked.payment
    )
    return order_view_rs(presenters.order_view_data(order), request_id=request_id)


def _on_hold(principal: Principal, ref: str) -> bool:
    order = order_get(scope=OrderScope.of(principal), ref=ref, parts=())
    return order.status == OrderStatus.ONHOLD


def _journeys_of_items(principal: Principal, ref: str, *, live_only=False) -> dict[str, str]:
    """Flight order item id -> the journey it flies (`live_only`: of the items still
    flying), from the JSON view of the order: an NDC client names order items
    (OrderItemRefID) where JSON's CancelJourney names the journey."""
    order = order_get(scope=OrderScope.of(principal), ref=ref, parts=())
    view = presenters.order_view_data(order)
    journey_of_segment = {
        s["segmentId"]: j["journeyId"] for j in view["journeys"] for s in j["segments"]
    }
    return {
        item["itemId"]: journey_of_segment[item["segmentRefIds"][0]]
        for item in view["order"]["items"]
        if item["segmentRefIds"] and not (live_only and item["statusCode"] != LIVE)
    }


def order_create_applied(
    *, principal: Principal, document: etree._Element, request_id: str | None, resource: str
) -> bytes:
    """The OrderViewRS of an OrderCreateRQ that committed while its answer was lost (the
    worker died, or the payment reconciler confirmed it; its retry under the same
    Idempotency-Key, airline/api/idempotency.py): `resource` is the order it made."""
    order = order_get(scope=OrderScope.of(principal), ref=resource, parts=())
    return order_view_rs(presenters.order_view_data(order), request_id=request_id)


def order_change_applied(
    *, principal: Principal, document: etree._Element, request_id: str | None, resource: str
) -> bytes:
    """The OrderViewRS of an OrderChangeRQ that committed while its answer was lost (its
    retry under the same Idempotency-Key, airline/api/idempotency.py): the order now."""
    ref = order_mapping.change_request(document).order_ref
    order = order_get(scope=OrderScope.of(principal), ref=ref, parts=())
    return order_view_rs(presenters.order_view_data(order), request_id=request_id)
