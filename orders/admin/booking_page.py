"""What several tables of one booking page share: the state of its journeys and
segments as the API words it, its webhook deliveries, and the links to them."""

from functools import cached_property

from django.urls import reverse
from django.utils.html import format_html

from orders.admin.flags import WARNING_HTML
from orders.models import (
    Order,
)
from orders.reading.deliveries import Delivery, order_deliveries
from orders.reading.presenters import (
    OPERATIONAL_AIRLINE_CANCELLED,
    OPERATIONAL_CANCELLED,
    OPERATIONAL_EXCHANGED,
    OPERATIONAL_SCHEDULE_CHANGED,
    operational_statuses,
)
from orders.reading.selectors import order_flight_parts

# How the booking page words the `operationalStatus` the API shows (orders.reading.presenters).
STATUS_TEXT = {
    OPERATIONAL_SCHEDULE_CHANGED: "SCHEDULE CHANGED by the airline, waiting for the seller",
    OPERATIONAL_AIRLINE_CANCELLED: "CANCELLED by schedule",
}
QUIET_STATUS_TEXT = {
    OPERATIONAL_CANCELLED: "Cancelled",
    OPERATIONAL_EXCHANGED: "Exchanged for other flights",
}
DELIVERIES_SHOWN = 50  # the newest; the deliveries list has them all
CHANGE_DETECTED = "order.airline_initiated_change_detected"  # webhooks.outbox EVENT_TYPES


class BookingPage:
    """What several tables of one booking page read, read once when first shown: the
    segments' and journeys' state as the API shows it, and the webhook deliveries."""

    def __init__(self, order: Order) -> None:
        self.order = order

    @cached_property
    def statuses(self) -> dict[str, str]:
        """operationalStatus by JOU- and SEG- id (orders.reading.presenters, as the order view)."""
        return operational_statuses(order_flight_parts(self.order))

    @cached_property
    def deliveries(self) -> list[Delivery]:
        """The webhook deliveries of its events (registered by the webhooks app)."""
        return order_deliveries(self.order.pk, DELIVERIES_SHOWN)


def status_html(status: str | None) -> str:
    if status in STATUS_TEXT:
        return format_html(WARNING_HTML, STATUS_TEXT[status])
    return QUIET_STATUS_TEXT.get(status, "As scheduled")


def deliveries_url(order: Order, event_type: str | None = None) -> str:
    """The deliveries list, narrowed to this booking's (and to one event type)."""
    url = f"{reverse('admin:webhooks_webhookdelivery_changelist')}?q={order.record_locator}"
    return f"{url}&event_type={event_type}" if event_type else url


def endpoint_url(delivery: Delivery) -> str:
    return reverse("admin:webhooks_webhookendpoint_change", args=[delivery.endpoint_id])


def journeys_text(journeys: list) -> str:
    """Journeys of the order view shape, a line each: flights with local times."""
    return "; ".join(
        " ".join(
            f"{s['marketingCarrier']}{s['marketingFlightNumber']} {s['origin']}-"
            f"{s['destination']} {s['departureDateTime'].replace('T', ' ')[:16]}"
            for s in journey.get("segments", [])
        )
        for journey in journeys
    )
