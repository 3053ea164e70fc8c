"""Input and output shapes of the webhook endpoints (validation only; rules in services)."""

from typing import Any

from rest_framework import serializers

from airline.api import clock
from airline.api.serializers import StrictSerializer
from webhooks.models import WebhookEndpoint
from webhooks.outbox import PUBLIC_TYPES


class WebhookIn(StrictSerializer):
    url = serializers.CharField(max_length=2000, help_text="https URL that receives events")
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=PUBLIC_TYPES),
        required=False,
        default=list,
        help_text="Event types to receive; absent or empty: every type",
    )
    format = serializers.ChoiceField(
        choices=WebhookEndpoint.Format.values,
        required=False,
        default=WebhookEndpoint.Format.JSON,
        help_text="json: the JSON event; ndc: IATA_OrderChangeNotifRQ (application/xml)",
    )


def webhook_wire(endpoint: WebhookEndpoint, *, secret: str | None = None) -> dict[str, Any]:
    """An endpoint as the API shows it; `secret` only in the create response."""
    wire: dict[str, Any] = {
        "webhookId": endpoint.webhook_id,
        "url": endpoint.url,
        "events": endpoint.events,
        "format": endpoint.format,
        "active": endpoint.active,
        "createdAt": clock.format_utc(endpoint.created_at),
    }
    if secret is not None:
        wire["secret"] = secret
    return wire


class WebhookOut(serializers.Serializer):
    """OpenAPI shape of webhook_wire."""

    webhookId = serializers.CharField()
    url = serializers.CharField()
    events = serializers.ListField(child=serializers.ChoiceField(choices=PUBLIC_TYPES))
    format = serializers.ChoiceField(choices=WebhookEndpoint.Format.values)
    active = serializers.BooleanField()
    createdAt = serializers.DateTimeField()
    secret = serializers.CharField(
        required=False, help_text="Signing secret: in the create response only, never again"
    )
