"""IATA_OrderChangeNotifRQ: a webhook event for a seller that registered an NDC endpoint
(docs/partners/webhooks.md, `format: ndc`), rendered from the same JSON order view the JSON
event carries in `data`, with ndc.order_presenters' writers, so ids, the record locator
and prices are the JSON ones.

Where the event goes:
- `id` -> PayloadAttributes/TrxID (and the Webhook-Id header); `createdAt` -> Timestamp
  and ChangeOperation/ChangeDateTime; `sequence` -> SeqNumber and the
  ChangeOperationGroup's OrderVersionNumber; the order id -> CorrelationID, the same on
  every notification of one order.
- `type` -> ChangeOperation/ChangeTypeCode (`order.created`, ...,
  `order.airline_initiated_change_detected`, `ping`). ReasonCode: for an
  airline-initiated change, the reasons of the pending change (RETIMED, CANCELLED,
  EQUIPMENT, CONNECTION); otherwise the type's own word (CREATED, PAID, ...).
- `data` (the order view) -> Notification/CurrentOrder: DataLists, Order,
  PaymentFunctions, TicketDocInfo, as in IATA_OrderViewRS.
- DistributionChain: the airline (Carrier, ordinal 1) and the seller (Seller, 2).

A `ping` has no order: its notification has no CurrentOrder and its CorrelationID is
the endpoint's webhook id.
"""

from datetime import datetime
from typing import Any

import orjson
from django.conf import settings

from airline.api import clock
from ndc import xml
from ndc.errors import NDC_VERSION
from ndc.order_presenters import ticket_doc_infos, write_data_lists, write_order, write_payment
from ndc.xml import sub

ROOT = "IATA_OrderChangeNotifRQ"
AIRLINE_CHANGE_DETECTED = "order.airline_initiated_change_detected"
Json = dict[str, Any]


def webhook_body(event: Any, data: str) -> tuple[bytes, str]:
    """A webhook event (webhooks.models.WebhookEvent) and its order view (JSON text) as
    the body of a delivery to an NDC endpoint: the same event as the JSON body, as
    IATA_OrderChangeNotifRQ. Registered with webhooks.delivery by NdcConfig.ready."""
    body = order_change_notif_rq(
        event_id=event.event_id,
        event_type=event.type,
        sequence=event.sequence,
        created_at=event.created_at,
        seller_code=event.seller.code,
        data=orjson.loads(data),
    )
    return body, "application/xml"


def order_change_notif_rq(
    *,
    event_id: str,
    event_type: str,
    sequence: int,
    created_at: datetime,
    seller_code: str,
    data: Json,
) -> bytes:
    """One webhook event as IATA_OrderChangeNotifRQ. `data` is the event's JSON `data`:
    the order view, or `{webhookId}` for a ping. Everything comes from the event, never
    from the clock, so every attempt sends the same bytes."""
    order = data.get("order")
    when = clock.format_utc(created_at)
    root = xml.message_root(ROOT)
    chain = xml.msg_sub(root, "DistributionChain")
    owner = order["ownerCode"] if order else settings.AIRLINE_DESIGNATOR
    _chain_link(chain, 1, "Carrier", owner)
    _chain_link(chain, 2, "Seller", seller_code)

    notification = xml.msg_sub(root, "Notification")
    group = sub(sub(notification, "ChangeGroup"), "ChangeOperationGroup")
    operation = sub(group, "ChangeOperation")
    sub(operation, "ChangeDateTime", when)
    sub(operation, "ChangeTypeCode", event_type)
    sub(operation, "ReasonCode", _reason(event_type, data))
    sub(group, "OrderVersionNumber", sequence)
    if order:
        _current_order(sub(notification, "CurrentOrder"), data)

    attributes = xml.msg_sub(root, "PayloadAttributes")
    sub(attributes, "CorrelationID", order["orderId"] if order else data["webhookId"])
    sub(attributes, "SeqNumber", sequence)
    sub(attributes, "Timestamp", when)
    sub(attributes, "TrxID", event_id)
    sub(attributes, "VersionNumber", NDC_VERSION)
    return xml.serialize(root)


def _chain_link(chain, ordinal: int, role: str, org_id: str) -> None:
    link = sub(chain, "DistributionChainLink")
    sub(link, "Ordinal", ordinal)
    sub(link, "OrgRole", role)
    sub(sub(link, "ParticipatingOrg"), "OrgID", org_id)


def _current_order(snapshot, data: Json) -> None:
    """OrderSnapshotType: the order view's parts in the schema's order (PaymentFunctions
    here sit inside the snapshot, not at the message's root as in OrderViewRS)."""
    write_data_lists(sub(snapshot, "DataLists"), data)
    write_order(sub(snapshot, "Order"), data)
    for payment in data["payments"]:
        write_payment(sub(snapshot, "PaymentFunctions"), payment, data["order"]["orderId"])
    for ticket in ticket_doc_infos(data):
        snapshot.append(ticket)


def _reason(event_type: str, data: Json) -> str:
    if event_type == AIRLINE_CHANGE_DETECTED:
        pending = [c for c in data.get("airlineInitiatedChanges", []) if c["status"] == "PENDING"]
        if pending:
            return " ".join(pending[-1]["reasons"])
    return event_type.removeprefix("order.").upper()
