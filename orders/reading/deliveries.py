"""What the booking page (orders.admin) shows of the webhook deliveries of an order's
events: "was the seller told?".

Deliveries belong to the webhooks app, which is built on this one: it registers its
reader here in WebhooksConfig.ready (webhooks.selectors.order_deliveries), so that orders
never imports webhooks (architecture.md "Layers"). Without a webhooks app nothing is
delivered.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

URL_SHOWN = 100  # characters of an endpoint's URL shown; the endpoint's page has it all


@dataclass(frozen=True)
class Delivery:
    """One event of the order to one webhook endpoint, as the booking page lists it."""

    endpoint_id: int
    webhook_id: str
    seller_code: str
    url: str
    event_type: str
    event_created_at: datetime
    status: str  # webhooks.models.WebhookDelivery.Status
    attempts: int
    last_status_code: int | None
    last_attempt_at: datetime | None
    last_error: str = ""
    delivered_at: datetime | None = None

    @property
    def endpoint(self) -> str:
        """The seller and the URL it listens at: "ACME https://acme.example/hooks"."""
        url = self.url if len(self.url) <= URL_SHOWN else f"{self.url[: URL_SHOWN - 1]}…"
        return f"{self.seller_code} {url}"

    @property
    def answer(self) -> str:
        """Was the seller told, in words: "told 2026-06-01 22:33 UTC (200)", "not yet: 6
        attempts, last 404", "gave up: 40 attempts, last 503"."""
        if self.status == "DELIVERED":
            at = self.delivered_at or self.last_attempt_at
            when = at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if at else "-"
            return f"told {when} ({self.last_status_code or '-'})"
        if self.status == "CANCELLED":
            return "not sent: the endpoint was deleted"
        if not self.attempts:
            return "not yet: no attempt yet"
        last = self.last_status_code or self.last_error or "no answer"
        tried = f"{self.attempts} attempt{'s' if self.attempts != 1 else ''}, last {last}"
        return f"gave up: {tried}" if self.status == "FAILED" else f"not yet: {tried}"


# The newest `limit` deliveries of the order's events (order pk, limit), newest first.
DeliveriesReader = Callable[[int, int], list[Delivery]]

_readers: list[DeliveriesReader] = []


def deliveries_reader_register(read: DeliveriesReader) -> None:
    _readers[:] = [read]


def order_deliveries(order_pk: int, limit: int) -> list[Delivery]:
    return _readers[0](order_pk, limit) if _readers else []
