"""Webhook endpoints of the acting seller (DESIGN.md §10): register, list, delete, ping.
Full-permission keys only: an endpoint receives every order of the seller."""

from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers

from airline.api import clock
from airline.api.endpoints import ServiceView
from airline.api.idempotency import idempotent
from airline.api.openapi import ERROR_RESPONSES, IDEMPOTENCY_HEADER, enveloped
from airline.api.responses import ok
from sellers.permissions import CanBook
from webhooks.selectors import endpoints_list
from webhooks.serializers import WebhookIn, WebhookOut, webhook_wire
from webhooks.services import endpoint_delete, endpoint_ping, endpoint_register

WEBHOOK_ID = OpenApiParameter("webhookId", str, OpenApiParameter.PATH, description="whk_...")
WEBHOOK_RESPONSE = enveloped("Webhook", WebhookOut())
WEBHOOK_LIST_RESPONSE = enveloped("WebhookList", {"webhooks": WebhookOut(many=True)})
PING_RESPONSE = enveloped(
    "WebhookPing",
    {
        "webhookId": serializers.CharField(),
        "eventId": serializers.CharField(help_text="Webhook-Id of the ping when it arrives"),
        "type": serializers.ChoiceField(choices=["ping"]),
    },
)


class WebhooksView(ServiceView):
    permission_classes = [CanBook]

    @extend_schema(
        operation_id="createWebhook",
        tags=["webhooks"],
        request=WebhookIn,
        examples=[
            OpenApiExample(
                "Every event",
                value={"url": "https://agency.example.com/hooks/airline"},
                request_only=True,
            ),
            OpenApiExample(
                "NDC seller",
                value={"url": "https://agency.example.com/hooks/ndc", "format": "ndc"},
                request_only=True,
            ),
            OpenApiExample(
                "Some events",
                value={
                    "url": "https://agency.example.com/hooks/airline",
                    "events": ["order.cancelled", "order.hold_expired"],
                },
                request_only=True,
            ),
        ],
        parameters=[IDEMPOTENCY_HEADER],
        responses={201: WEBHOOK_RESPONSE, **ERROR_RESPONSES},
    )
    @idempotent
    def post(self, request, version):
        """Register an https URL for the seller's order events. The answer carries the
        signing `secret`, shown this once (docs/partners/webhooks.md "Verifying signatures").
        `format: ndc` sends each event as an IATA_OrderChangeNotifRQ document instead
        of the JSON event, signed the same way.
        A URL that is not https, or whose host resolves to a loopback, private,
        link-local or metadata address, is ERR-1005 with `path: url`.
        With an `Idempotency-Key`, a retry of the same registration answers the first
        one (its secret too) instead of registering a second endpoint."""
        body = self.body(WebhookIn)
        registered = endpoint_register(
            seller=self.principal.seller,
            url=body["url"],
            events=body["events"],
            format=body["format"],
            now=clock.now(),
        )
        return ok(webhook_wire(registered.endpoint, secret=registered.secret), status=201)

    @extend_schema(
        operation_id="listWebhooks",
        tags=["webhooks"],
        responses={200: WEBHOOK_LIST_RESPONSE, **ERROR_RESPONSES},
    )
    def get(self, request, version):
        """The seller's webhook endpoints (never their secrets)."""
        endpoints = endpoints_list(seller=self.principal.seller)
        return ok({"webhooks": [webhook_wire(e) for e in endpoints]})


class WebhookView(ServiceView):
    permission_classes = [CanBook]

    @extend_schema(
        operation_id="deleteWebhook",
        tags=["webhooks"],
        parameters=[WEBHOOK_ID],
        responses={
            200: enveloped("WebhookDeleted", {"webhookId": serializers.CharField()}),
            **ERROR_RESPONSES,
        },
    )
    def delete(self, request, version, webhookId):
        """Delete an endpoint: nothing more is sent to it, and its deliveries not yet made
        are cancelled. A deleted endpoint is ERR-1000, as one that never existed."""
        endpoint_delete(seller=self.principal.seller, webhook_id=webhookId, now=clock.now())
        return ok({"webhookId": webhookId})


class WebhookPingView(ServiceView):
    permission_classes = [CanBook]

    @extend_schema(
        operation_id="pingWebhook",
        tags=["webhooks"],
        parameters=[WEBHOOK_ID],
        request=None,
        responses={200: PING_RESPONSE, **ERROR_RESPONSES},
    )
    def post(self, request, version, webhookId):
        """Queue a signed `ping` event to the endpoint, delivered like any other."""
        event = endpoint_ping(seller=self.principal.seller, webhook_id=webhookId, now=clock.now())
        return ok({"webhookId": webhookId, "eventId": event.event_id, "type": event.type})
