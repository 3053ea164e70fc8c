"""Seller webhooks (DESIGN.md §10): the endpoints a seller registers, and the outbox.

The outbox is one `WebhookEvent` per public event of an order (written in the same
transaction as the change, by orders/core/events.py) and one `WebhookDelivery` per event and
endpoint that wants it. A delivery is the unit the worker claims, sends and retries.
"""

from django.db import models
from django.db.models import Q

from orders.models import Order
from sellers.models import Seller


class WebhookEndpoint(models.Model):
    """A seller's URL that receives its orders' events, signed with `secret`; a deleted
    one is kept (inactive, `deleted_at` set) with its deliveries' history."""

    class Format(models.TextChoices):
        # The signed JSON event (docs/partners/webhooks.md), or the same event as an
        # IATA_OrderChangeNotifRQ document (ndc.notifications) for NDC sellers.
        JSON = "json", "JSON event"
        NDC = "ndc", "NDC (IATA_OrderChangeNotifRQ)"

    id = models.BigAutoField(primary_key=True)
    webhook_id = models.CharField(max_length=32, unique=True)
    seller = models.ForeignKey(Seller, on_delete=models.CASCADE, related_name="webhooks")
    url = models.CharField(max_length=2000)  # checked by webhooks.addresses, not URLField
    # The public event types it wants; empty means every type.
    events = models.JSONField(default=list, blank=True)
    format = models.CharField(max_length=4, choices=Format.choices, default=Format.JSON)
    # Kept readable: every delivery is signed with it (HMAC). Shown to the seller once.
    secret = models.CharField(max_length=64)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField()
    # When the current run of failed attempts began (None while deliveries succeed): an
    # endpoint failing for WEBHOOK_RETRY_HOURS is disabled.
    failing_since = models.DateTimeField(null=True, blank=True)
    disabled_at = models.DateTimeField(null=True, blank=True)
    disabled_reason = models.CharField(max_length=200, blank=True, default="")
    # Set by the seller's DELETE (or the admin's): the endpoint is gone for the seller and
    # the outbox, but the row stays, so a booking whose transaction wrote a delivery to
    # it meanwhile still commits, and its deliveries keep their history.
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["seller_id", "id"]
        indexes = [models.Index(fields=["seller", "active"], name="webhook_by_seller")]
        constraints = [
            # The outbox's fan-out reads `active` alone: a deleted endpoint is never active.
            models.CheckConstraint(
                condition=Q(deleted_at__isnull=True) | Q(active=False),
                name="deleted_webhook_inactive",
            )
        ]

    def __str__(self) -> str:
        return f"{self.webhook_id} {self.url}"

    def wants(self, event_type: str) -> bool:
        return events_include(self.events, event_type)


def events_include(events: list[str], event_type: str) -> bool:
    """Whether an endpoint subscribed to `events` receives `event_type`: none listed
    means every event."""
    return not events or event_type in events


class WebhookEvent(models.Model):
    """One public event: its type, its order and place in that order's sequence, and the
    order view it carries (rendered once, so every attempt and endpoint sends the same)."""

    id = models.BigAutoField(primary_key=True)
    event_id = models.CharField(max_length=32, unique=True)
    seller = models.ForeignKey(Seller, on_delete=models.CASCADE, related_name="+")
    # None for a ping, which belongs to no order.
    order = models.ForeignKey(
        Order, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    type = models.CharField(max_length=40)
    sequence = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField()
    # The order view as JSON text once rendered (after commit, or at the first delivery);
    # empty until then.
    data = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["order", "sequence"],
                condition=Q(order__isnull=False),
                name="one_event_per_order_sequence",
            )
        ]

    def __str__(self) -> str:
        return f"{self.event_id} {self.type}"


class WebhookSequence(models.Model):
    """The last event sequence number given to an order: a counter row incremented with
    one upsert, so two transactions on one order never take the same number."""

    order = models.OneToOneField(
        Order, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    last = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.order_id}: {self.last}"


class WebhookDelivery(models.Model):
    """One event to one endpoint: pending, in flight (claimed by a worker until
    `lease_until`), delivered, failed after WEBHOOK_RETRY_HOURS of attempts, or cancelled
    unsent because its endpoint was deleted."""

    class Status(models.TextChoices):
        PENDING = "PENDING"
        IN_FLIGHT = "IN_FLIGHT"
        DELIVERED = "DELIVERED"
        FAILED = "FAILED"
        # Closed without (further) attempts: its endpoint was deleted. Never resent.
        CANCELLED = "CANCELLED"

    id = models.BigAutoField(primary_key=True)
    event = models.ForeignKey(WebhookEvent, on_delete=models.CASCADE, related_name="deliveries")
    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    # Copied from the event: "an earlier event of this order to this endpoint is still
    # unfinished" is then one indexed lookup.
    order = models.ForeignKey(
        Order, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    sequence = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField()
    next_attempt_at = models.DateTimeField()
    # No attempt after this: WEBHOOK_RETRY_HOURS after the event (or after a resend).
    give_up_at = models.DateTimeField()
    lease_until = models.DateTimeField(null=True, blank=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=200, blank=True, default="")
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        verbose_name_plural = "webhook deliveries"
        permissions = [("resend_webhookdelivery", "Can resend failed webhook deliveries")]
        indexes = [
            # The worker's claim: unfinished deliveries by when they are due.
            models.Index(
                fields=["next_attempt_at"],
                name="delivery_due",
                condition=Q(status__in=["PENDING", "IN_FLIGHT"]),
            ),
            # Per-order order: the unfinished deliveries of one order to one endpoint.
            models.Index(
                fields=["endpoint", "order", "sequence"],
                name="delivery_order_sequence",
                condition=Q(status__in=["PENDING", "IN_FLIGHT"]),
            ),
        ]
        constraints = [
            models.UniqueConstraint(fields=["event", "endpoint"], name="one_delivery_per_endpoint")
        ]

    def __str__(self) -> str:
        return f"{self.event.event_id} -> {self.endpoint.webhook_id} {self.status}"
