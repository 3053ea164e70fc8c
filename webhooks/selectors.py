"""Reads of a seller's webhook endpoints, always scoped to that seller first."""

from django.db.models import QuerySet

from airline.api.errors import ApiError, Err
from sellers.models import Seller
from webhooks.models import WebhookEndpoint


def endpoints_list(*, seller: Seller) -> QuerySet[WebhookEndpoint]:
    """The seller's endpoints, oldest first."""
    return WebhookEndpoint.objects.filter(seller=seller).order_by("id")


def endpoint_get(*, seller: Seller, webhook_id: str) -> WebhookEndpoint:
    """One of the seller's endpoints; another seller's is as unknown as none (ERR-1000)."""
    try:
        return WebhookEndpoint.objects.get(seller=seller, webhook_id=webhook_id)
    except WebhookEndpoint.DoesNotExist:
        raise ApiError(Err.NOT_FOUND, f"No webhook {webhook_id}", path="webhookId") from None
