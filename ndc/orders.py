"""OrderCreate, OrderRetrieve and OrderChange: the NDC request read into the typed input
of the service the JSON order endpoints call (orders/views.py), and the answer rendered
as IATA_OrderViewRS from the same JSON order view (DESIGN.md §9). Nothing here decides
anything about orders."""

from collections.abc import Sequence
from decimal import Decimal

from lxml import etree

from airline.api import clock
from airline.api.errors import ApiError, Err, Reason
from ndc import order_mapping, xml
from ndc.order_presenters import order_view_rs
from offers.store import OfferOwner, OfferSource, offer_load
from orders.booking.create import order_create as create_order
from orders.models import Channel, Contact, OrderStatus
from orders.reading import presenters
from orders.reading.selectors import OrderScope, order_get
from orders.requests.checks import check_phone
from orders.requests.inputs import (
    AcceptReshopOffer,
    CancelJourney,
    Change,
    ConfirmHold,
    ContactData,
    UpdateContact,
)
from orders.servicing.changes import order_change as change_order
from orders.servicing.exchange.quote import order_quote
from orders.servicing.exchange.records import LIVE, ExchangeOffer
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
    changes = _without_echoes(principal, asked.order_ref, asked.changes)
    changes = [_quoted(principal, asked.order_ref, change) for change in changes]
    if asked.cancelled_items:
        journey_of = _journeys_of_items(principal, asked.order_ref)
        changes += [CancelJourney(journey_of.get(ref, ref)) for ref in asked.cancelled_items]
    if asked.cancel_every_journey:
        flying = _journeys_of_items(principal, asked.order_ref, live_only=True)
        changes += [CancelJourney(journey) for journey in dict.fromkeys(flying.values())]
    if asked.payment is not None and not changes and not asked.pays_order:
        changes.append(ConfirmHold())  # the payment was all that was left: a hold's
    if asked.pays_order and _on_hold(principal, asked.order_ref):
        changes.append(ConfirmHold())
    changed = change_order(
        principal=principal, ref=asked.order_ref, changes=changes, payment=asked.payment
    )
    view = presenters.order_view_data(changed.order, parts=changed.parts)
    return order_view_rs(view, request_id=request_id)


def _quoted(principal: Principal, ref: str, change: Change) -> Change:
    """AcceptReshopOffer of a reshop offer itself, not of its OrderQuote (the flow some
    partners document: OrderReshop, then OrderChange): quoted here as OrderQuote would
    quote it (orders.servicing.exchange.quote.order_quote, on live inventory), and the
    quote accepted when the replacements still cost what the reshop offer said; else
    ERR-4002 naming OrderQuote, so that the partner sees the new price before paying it.
    Any other offer is left to the service to accept or refuse."""
    if not isinstance(change, AcceptReshopOffer):
        return change
    try:
        batch, stored = offer_load(
            offer_id=change.offer_id, owner=OfferOwner.of(principal), now=clock.now()
        )
    except ApiError:
        return change  # unknown or expired: the service says so, as for any offer
    if batch.source != OfferSource.RESHOP:
        return change
    offered = {r.offer_item_id: r for r in ExchangeOffer.load(stored).items}
    try:
        data = order_quote(
            principal=principal,
            ref=ref,
            offer_id=change.offer_id,
            item_ids=list(change.offer_item_ids),
            passengers=None,
        )
    except ApiError as err:
        if err.path in ("offerId", "offerItemIds"):
            raise ApiError(
                err.spec, err.description, path=f"changes.{err.path}", reason=err.reason
            ) from None
        raise
    was = sum((offered[i].new_total for i in change.offer_item_ids), Decimal(0))
    now = xml.decimal(data["priceDifferential"]["newTotal"]["amount"])
    if now != was:
        raise ApiError(
            Err.CHANGE_NOT_APPLIED,
            f"Reshop offer {change.offer_id} costs {now:.2f} now, not {was:.2f} as "
            "OrderReshop offered it: price it with OrderQuote and accept the quote",
            reason=Reason.OFFER_NOT_QUOTED,
            path="changes.offerId",
        )
    quote = data["offer"]
    return AcceptReshopOffer(
        quote["offerId"], tuple(item["offerItemId"] for item in quote["items"])
    )


def _without_echoes(principal: Principal, ref: str, changes: Sequence[Change]) -> list[Change]:
    """`changes` less the UpdateContacts that only echo the booking contact: partners send
    the order's DataLists back with a payment (the "issue ticket" OrderChange), and data
    that changes nothing is no change. Each field sent must equal the contact's (the
    phone as E.164; a name or an address only when sent)."""
    if not any(isinstance(change, UpdateContact) for change in changes):
        return list(changes)
    order = order_get(scope=OrderScope.of(principal), ref=ref, parts=())
    current = order.contacts.first()
    return [
        change
        for change in changes
        if not (isinstance(change, UpdateContact) and _echoes(change.contact, current))
    ]


def _echoes(sent: ContactData, current: Contact | None) -> bool:
    if current is None or sent.email.lower() != current.email.lower():
        return False
    try:
        phone = check_phone(sent.phone, path="contact.phoneNumber")
    except ApiError:
        return False
    if phone and phone != current.phone:
        return False
    if (sent.given_name or sent.surname) and (
        (sent.given_name.lower(), sent.surname.lower())
        != (current.given_name.lower(), current.surname.lower())
    ):
        return False
    address = sent.postal_address.wire() if sent.postal_address else None
    return not address or address == current.postal_address


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
