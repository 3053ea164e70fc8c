"""Reads of a seller's webhook endpoints, always scoped to that seller first; and the
deliveries of an order's events, as its booking page lists them (orders.reading.deliveries)."""

from django.db.models import QuerySet

from airline.api.errors import ApiError, Err
from orders.reading.deliveries import Delivery
from sellers.models import Seller
from webhooks.models import WebhookDelivery, WebhookEndpoint


def endpoints_list(*, seller: Seller) -> QuerySet[WebhookEndpoint]:
    """The seller's endpoints, oldest first (not the deleted ones)."""
    return WebhookEndpoint.objects.filter(seller=seller, deleted_at=None).order_by("id")


def endpoint_get(*, seller: Seller, webhook_id: str) -> WebhookEndpoint:
    """One of the seller's endpoints; another seller's, or a deleted one, is as unknown as
    none (ERR-1000)."""
    try:
        return WebhookEndpoint.objects.get(seller=seller, webhook_id=webhook_id, deleted_at=None)
    except WebhookEndpoint.DoesNotExist:
        raise ApiError(Err.NOT_FOUND, f"No webhook {webhook_id}", path="webhookId") from None


def order_deliveries(order_pk: int, limit: int) -> list[Delivery]:
    """The newest `limit` deliveries of the order's events, newest first (one query)."""
    return [
        Delivery(
            endpoint_id=delivery.endpoint_id,
            webhook_id=delivery.endpoint.webhook_id,
            seller_code=delivery.endpoint.seller.code,
            url=delivery.endpoint.url,
            event_type=delivery.event.type,
            event_created_at=delivery.event.created_at,
            status=delivery.status,
            attempts=delivery.attempts,
            last_status_code=delivery.last_status_code,
            last_attempt_at=delivery.last_attempt_at,
            last_error=delivery.last_error,
            delivered_at=delivery.delivered_at,
        )
        for delivery in WebhookDelivery.objects.filter(order_id=order_pk)
        .select_related("endpoint__seller", "event")
        .order_by("-id")[:limit]
    ]
