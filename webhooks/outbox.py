"""The outbox (DESIGN.md §10): every order event becomes, in the same transaction as the
change, one WebhookEvent and one WebhookDelivery per active endpoint of the order's
seller that wants its type. Committed with the change or rolled back with it: no event
is lost when the process dies right after commit, none is sent for a change that never
happened. The worker (webhooks.delivery) sends them.
"""

import secrets
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

import orjson
from django.conf import settings
from django.db import connection, transaction

from airline.api.responses import dumps
from airline.sql import statement_cursor
from orders.core.events import AnnouncementRead
from orders.models import Order, OrderEvent
from orders.reading.presenters import order_view
from orders.reading.selectors import order_parts
from webhooks.models import (
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    WebhookSequence,
    events_include,
)

Kind = OrderEvent.Kind

# Our event kinds (orders.models.OrderEvent.Kind) as the public types sellers subscribe
# to (docs/partners/webhooks.md). Several kinds share a type: a seller cares that the
# booking changed, the order view in `data` says how.
EVENT_TYPES: dict[str, str] = {
    Kind.CREATED: "order.created",
    Kind.IMPORTED: "order.created",
    Kind.PAID: "order.paid",
    Kind.CREDIT_REDEEMED: "order.paid",
    Kind.HOLD_CONFIRMED: "order.confirmed",
    Kind.HOLD_CANCELLED: "order.cancelled",
    Kind.ORDER_CANCELLED: "order.cancelled",
    Kind.HOLD_EXPIRED: "order.hold_expired",
    Kind.SERVICES_ADDED: "order.changed",
    Kind.ITINERARY_EXCHANGED: "order.changed",
    Kind.JOURNEY_CANCELLED: "order.changed",
    Kind.PASSENGER_UPDATED: "order.changed",
    Kind.CONTACT_UPDATED: "order.changed",
    Kind.PAYMENT_REFUNDED: "order.refunded",
    Kind.CREDIT_ISSUED: "order.refunded",
    # A schedule change by the airline (docs/partners/airline-changes.md); the seller's
    # answer to it is a change of the order like any other.
    Kind.AIRLINE_CHANGE_DETECTED: "order.airline_initiated_change_detected",
    Kind.AIRLINE_CHANGE_ACCEPTED: "order.changed",
    Kind.AIRLINE_CHANGE_CANCELLED: "order.changed",
    Kind.AIRLINE_CHANGE_EXCHANGED: "order.changed",
    Kind.PAYMENT_DISPUTED: "order.changed",  # the cardholder disputed a card payment
    Kind.PAYMENT_REFUND_COVERED: "order.changed",  # no money moved: a refund's state did
}
PING = "ping"
PUBLIC_TYPES: tuple[str, ...] = tuple(dict.fromkeys(EVENT_TYPES.values()))


def new_event_id() -> str:
    return "evt_" + secrets.token_hex(12)


def order_event_listen(sender, *, order: Order, kind: str, now: datetime, **kwargs) -> None:
    """Receiver of orders.core.events.order_event_recorded (connected by WebhooksConfig.ready)."""
    order_event_recorded(order, kind, now=now)


def order_event_recorded(order: Order, kind: str, *, now: datetime) -> None:
    """The outbox rows of one order event (orders.core.events._record sends its signal inside
    the change's transaction). Nothing is written when no endpoint wants the event."""
    event_type = EVENT_TYPES[kind]
    endpoints = _endpoints_of_order(order, event_type)
    if not endpoints:
        return
    event = WebhookEvent.objects.create(
        event_id=new_event_id(),
        seller_id=order.seller_id,
        order=order,
        type=event_type,
        sequence=_next_sequence(order),
        created_at=now,
    )
    _deliveries_create(event, endpoints, now=now)
    # The order view as it stands once the whole change has committed; a process that
    # dies before this runs leaves `data` empty, and the first delivery renders it.
    transaction.on_commit(lambda: event_data_render(event.pk), robust=True)


def order_events_listen(
    sender, *, orders: Sequence[Order], kind: str, now: datetime, **kwargs
) -> None:
    """Receiver of orders.core.events.order_events_recorded (connected by WebhooksConfig.ready)."""
    order_events_recorded(orders, kind, now=now)


def order_events_recorded(orders: Sequence[Order], kind: str, *, now: datetime) -> None:
    """The outbox rows of one event of `kind` for each of many orders (a schedule
    change's batch of bookings told), in a few statements whatever their number: the
    same rows order_event_recorded writes for each. Their `data` is rendered by their
    first delivery rather than on commit: a batch of hundreds would otherwise render
    hundreds of order views before its next batch could start."""
    event_type = EVENT_TYPES[kind]
    wanting = {
        seller: _endpoints_wanting(seller, event_type) for seller in {o.seller_id for o in orders}
    }
    told = sorted((o for o in orders if wanting[o.seller_id]), key=lambda o: o.pk)
    if not told:
        return
    sequences = _next_sequences(told)
    events = WebhookEvent.objects.bulk_create(
        WebhookEvent(
            event_id=new_event_id(),
            seller_id=order.seller_id,
            order=order,
            type=event_type,
            sequence=sequences[order.pk],
            created_at=now,
        )
        for order in told
    )
    WebhookDelivery.objects.bulk_create(
        _delivery(event, endpoint_id, now=now)
        for event, order in zip(events, told, strict=True)
        for endpoint_id in wanting[order.seller_id]
    )


def ping_record(endpoint: WebhookEndpoint, *, now: datetime) -> WebhookEvent:
    """A `ping` event for one endpoint: no order, no sequence."""
    event = WebhookEvent.objects.create(
        event_id=new_event_id(),
        seller_id=endpoint.seller_id,
        type=PING,
        created_at=now,
        data=orjson.dumps({"webhookId": endpoint.webhook_id}).decode(),
    )
    _deliveries_create(event, [endpoint.pk], now=now)
    return event


def _endpoints_of_order(order: Order, event_type: str) -> list[int]:
    """_endpoints_wanting for an event of `order`, the seller's endpoints read once for
    the order object: the events of one request's change (a card booking's `created`
    and `paid`, a change that also takes a payment) then cost one read, not one each.
    Those events are written within a request, a gateway call apart at most; an
    endpoint made meanwhile is told from the order's next change on, as one made just
    after the request would be."""
    kept = order.__dict__.get("_webhook_endpoints")
    if kept is None or kept[0] != order.seller_id:
        kept = order.__dict__["_webhook_endpoints"] = (
            order.seller_id,
            _endpoint_rows(order.seller_id),
        )
    return _wanting(kept[1], event_type)


def _endpoints_wanting(seller_id, event_type: str) -> list[int]:
    """The ids of the seller's active endpoints that want `event_type` (a deleted one is
    never active). No lock: an endpoint deleted after this read, before the change
    commits, still gets its delivery row, which the worker cancels
    (webhooks.services.endpoints_delete)."""
    return _wanting(_endpoint_rows(seller_id), event_type)


def _wanting(rows: Sequence[tuple[int, list[str]]], event_type: str) -> list[int]:
    return [endpoint_id for endpoint_id, events in rows if events_include(events, event_type)]


def _endpoint_rows(seller_id) -> list[tuple[int, list[str]]]:
    """(id, event types) of the seller's active endpoints. Plain SQL: every order event
    asks, most sellers have no endpoint, and the ORM's own work on the query cost
    several times the database's."""
    sql, params = _endpoints_statement(seller_id)
    with statement_cursor() as cursor:
        cursor.execute(sql, params)
        return _endpoints_parsed(cursor.fetchall())


def endpoints_read(order: Order) -> AnnouncementRead:
    """_endpoint_rows of the order's seller as a read a booking sends with its own rows
    (orders.core.events.announcement_read_register): the rows are kept on the order,
    where _endpoints_of_order looks first."""

    def keep(rows: list[tuple]) -> None:
        order.__dict__["_webhook_endpoints"] = (order.seller_id, _endpoints_parsed(rows))

    return AnnouncementRead(*_endpoints_statement(order.seller_id), keep)


def _endpoints_statement(seller_id) -> tuple[str, list]:
    table = WebhookEndpoint._meta.db_table
    # The seller's key as this database stores it (a uuid in PostgreSQL, text in SQLite).
    seller = WebhookEndpoint._meta.get_field("seller").target_field
    return (
        f'SELECT "id", "events" FROM "{table}" '  # noqa: S608
        'WHERE "seller_id" = %s AND "active" ORDER BY "id"',
        [seller.get_db_prep_value(seller_id, connection)],
    )


def _endpoints_parsed(rows: list[tuple]) -> list[tuple[int, list[str]]]:
    events = WebhookEndpoint._meta.get_field("events")
    return [(endpoint_id, events.from_db_value(raw, None, connection)) for endpoint_id, raw in rows]


def _deliveries_create(event: WebhookEvent, endpoint_ids: Iterable[int], *, now: datetime) -> None:
    WebhookDelivery.objects.bulk_create(_delivery(event, e, now=now) for e in endpoint_ids)


def _delivery(event: WebhookEvent, endpoint_id: int, *, now: datetime) -> WebhookDelivery:
    return WebhookDelivery(
        event=event,
        endpoint_id=endpoint_id,
        order_id=event.order_id,
        sequence=event.sequence,
        created_at=now,
        next_attempt_at=now,
        give_up_at=now + timedelta(hours=settings.WEBHOOK_RETRY_HOURS),
    )


def _next_sequence(order: Order) -> int:
    # One upsert: the counter row stays locked until this transaction ends, so a second
    # transaction writing an event of the same order waits and takes the next number.
    table = WebhookSequence._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (order_id, last) VALUES (%s, 1) "  # noqa: S608
            f"ON CONFLICT (order_id) DO UPDATE SET last = {table}.last + 1 RETURNING last",
            [order.pk],
        )
        return cursor.fetchone()[0]


def _next_sequences(orders: Sequence[Order]) -> dict[int, int]:
    """_next_sequence of many orders (distinct, in id order: the counter rows are locked
    in that order, as every lock of many orders is taken) in one upsert."""
    table = WebhookSequence._meta.db_table
    rows = ", ".join(["(%s, 1)"] * len(orders))
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (order_id, last) VALUES {rows} "  # noqa: S608
            f"ON CONFLICT (order_id) DO UPDATE SET last = {table}.last + 1 "
            "RETURNING order_id, last",
            [order.pk for order in orders],
        )
        return dict(cursor.fetchall())


def event_data_render(event_pk: int) -> str:
    """The event's order view as JSON text, rendered and kept on first need."""
    event = WebhookEvent.objects.select_related("order").get(pk=event_pk)
    if event.data:
        return event.data
    data = dumps(order_view(order_parts(event.order))).decode()
    # Only the first rendering is kept: every attempt sends the same body.
    WebhookEvent.objects.filter(pk=event_pk, data="").update(data=data)
    return WebhookEvent.objects.values_list("data", flat=True).get(pk=event_pk)
