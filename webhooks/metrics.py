"""The webhook backlog's gauges (airline/api/metrics.py, docs/operators/monitoring.md), read at
each scrape; `connect` is called once, from WebhooksConfig.ready."""

from datetime import datetime

from airline.api import metrics
from webhooks.models import WebhookDelivery

UNFINISHED = (WebhookDelivery.Status.PENDING, WebhookDelivery.Status.IN_FLIGHT)


def connect() -> None:
    metrics.queue_register(
        "airline_webhook_deliveries_pending",
        "Webhook deliveries to active endpoints not yet delivered or given up "
        "(pending or in flight)",
        _pending,
    )
    # Apart: a disabled endpoint's deliveries wait for it to be enabled and never drain
    # by themselves, so in the gauge above they would keep its alert firing.
    metrics.queue_register(
        "airline_webhook_deliveries_pending_disabled",
        "Webhook deliveries waiting for a disabled endpoint to be enabled",
        _pending_disabled,
    )


def _pending(now: datetime):
    return WebhookDelivery.objects.filter(status__in=UNFINISHED, endpoint__active=True)


def _pending_disabled(now: datetime):
    # Not a deleted endpoint's: the worker cancels those as they come due.
    return WebhookDelivery.objects.filter(
        status__in=UNFINISHED, endpoint__active=False, endpoint__deleted_at=None
    )
