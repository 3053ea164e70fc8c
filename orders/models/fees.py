"""Fees and penalties charged to an order (SPEC.md §1 Price `fees`)."""

from django.db import models
from django.db.models import Q

from orders.models.order import Order
from orders.models.people import Passenger


class OrderFee(models.Model):
    """A fee or penalty an order was charged (SPEC.md §1 Price `fees`: ServiceFee or
    PenaltyFee): a name change, a flight change, a cancellation. It is part of the
    order's totalPrice and, once the order is ticketed, documented by an EMD number;
    its amount is also in Order.retained, which counts everything the airline kept."""

    class Type(models.TextChoices):
        SERVICE = "ServiceFee"
        PENALTY = "PenaltyFee"

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="fees")
    ref = models.CharField(max_length=20, help_text="FEE- id")
    type = models.CharField(max_length=10, choices=Type.choices)
    code = models.CharField(max_length=3)
    description = models.CharField(max_length=60)
    amount = models.DecimalField(max_digits=10, decimal_places=2)
    passenger = models.ForeignKey(
        Passenger, on_delete=models.CASCADE, null=True, blank=True, related_name="fees"
    )
    emd_number = models.CharField(max_length=13, null=True, blank=True, unique=True)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["order_id", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="order_fee_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.ref} {self.type} {self.code} {self.amount}"
