"""What the booking page (orders.admin) shows of the webhook deliveries of an order's
events: "was the seller told?".

Deliveries belong to the webhooks app, which is built on this one: it registers its
reader here in WebhooksConfig.ready (webhooks.selectors.order_deliveries), so that orders
never imports webhooks (architecture.md "Layers"). Without a webhooks app nothing is
delivered.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Delivery:
    """One event of the order to one webhook endpoint, as the booking page lists it."""

    endpoint_id: int
    webhook_id: str
    event_type: str
    event_created_at: datetime
    status: str
    attempts: int
    last_status_code: int | None
    last_attempt_at: datetime | None


# The newest `limit` deliveries of the order's events (order pk, limit), newest first.
DeliveriesReader = Callable[[int, int], list[Delivery]]

_readers: list[DeliveriesReader] = []


def deliveries_reader_register(read: DeliveriesReader) -> None:
    _readers[:] = [read]


def order_deliveries(order_pk: int, limit: int) -> list[Delivery]:
    return _readers[0](order_pk, limit) if _readers else []
