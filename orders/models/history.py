"""What happened to an order: its events (DESIGN.md §10) and the airline's schedule
changes to its flights (docs/partners/airline-changes.md "Airline-initiated changes")."""

from django.db import models
from django.db.models import Q

from orders.models.fields import JSONField
from orders.models.order import Order


class OrderEvent(models.Model):
    """One state change of an order: who did what, when (DESIGN.md §10, STYLE.md). Written
    only through orders/core/events.py, one function per kind."""

    class Kind(models.TextChoices):
        CREATED = "created"
        IMPORTED = "imported"
        PAID = "paid"
        HOLD_CONFIRMED = "hold_confirmed"
        HOLD_CANCELLED = "hold_cancelled"
        HOLD_EXPIRED = "hold_expired"
        SERVICES_ADDED = "services_added"
        PAYMENT_REFUNDED = "payment_refunded"
        JOURNEY_CANCELLED = "journey_cancelled"
        ORDER_CANCELLED = "order_cancelled"
        PASSENGER_UPDATED = "passenger_updated"
        CONTACT_UPDATED = "contact_updated"
        ITINERARY_EXCHANGED = "itinerary_exchanged"
        CREDIT_ISSUED = "credit_issued"
        CREDIT_REDEEMED = "credit_redeemed"
        AIRLINE_CHANGE_DETECTED = "airline_change_detected"
        AIRLINE_CHANGE_ACCEPTED = "airline_change_accepted"
        AIRLINE_CHANGE_CANCELLED = "airline_change_cancelled"
        AIRLINE_CHANGE_EXCHANGED = "airline_change_exchanged"
        PAYMENT_DISPUTED = "payment_disputed"
        # A refund of ours found given back, in part or whole, by one made at the
        # provider outside this service (orders.money.refunds.refunds_retry).
        PAYMENT_REFUND_COVERED = "payment_refund_covered"

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="events")
    at = models.DateTimeField()
    actor = models.CharField(max_length=80, help_text="seller/key, command or 'system'")
    kind = models.CharField(max_length=40, choices=Kind.choices)
    detail = JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["order_id", "id"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.kind} by {self.actor}"


class AirlineChange(models.Model):
    """A change the airline made to flights of an order: the order's affected
    journeys as booked (`removed`) and as they fly now (`added`, without a journey that
    can no longer fly), why, and what the seller did about it. Written by
    orders.servicing.airline_changes after a schedule load; one pending change per order, brought
    up to date by every later load."""

    class Status(models.TextChoices):
        PENDING = "PENDING", "Waiting for the seller"
        ACCEPTED = "ACCEPTED", "The order took the new schedule"
        CANCELLED = "CANCELLED", "The order was cancelled with everything given back"
        CHANGED = "CHANGED", "The journeys were exchanged for other flights at no charge"

    class Reason(models.TextChoices):
        RETIMED = "RETIMED"
        CANCELLED = "CANCELLED"
        EQUIPMENT = "EQUIPMENT", "Booked seats or cabin not on the new aircraft"
        CONNECTION = "CONNECTION", "A connection now under the minimum connecting time"

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="airline_changes")
    ref = models.CharField(max_length=20, unique=True, help_text="AIC- id shown to clients")
    detected_at = models.DateTimeField()
    status = models.CharField(max_length=9, choices=Status.choices, default=Status.PENDING)
    journey_refs = JSONField(default=list, help_text="JOU- ids of the journeys it covers")
    reasons = JSONField(default=list)
    removed = JSONField(default=list, help_text="The journeys as booked (order view shape)")
    added = JSONField(default=list, help_text="The journeys as they fly now")
    actions = JSONField(default=list, help_text="Change types the seller may answer with")
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.CharField(max_length=80, blank=True, default="")

    class Meta:
        ordering = ["order_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["order"], condition=Q(status="PENDING"), name="one_pending_airline_change"
            )
        ]

    def __str__(self) -> str:
        return f"{self.ref} {self.status}"
