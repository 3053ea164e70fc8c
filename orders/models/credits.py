"""Airline credit a seller holds from a cancelled or cheaper order (DESIGN.md §7, §11)."""

from django.db import models
from django.db.models import Q

from orders.models.order import Order
from sellers.models import Seller


class AirlineCredit(models.Model):
    """Value a cancellation or a cheaper exchange gave back as credit rather than money
    (DESIGN.md §7, §11 "Airline credit"): a code the same seller pays a later order with
    (`remaining` spent by a conditional UPDATE, never below zero) until `expires_at`."""

    code = models.CharField(max_length=16, unique=True)
    seller = models.ForeignKey(Seller, on_delete=models.PROTECT, related_name="credits")
    source_order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="credits")
    currency = models.CharField(max_length=3, default="USD")
    amount = models.DecimalField(max_digits=12, decimal_places=2, help_text="As issued")
    remaining = models.DecimalField(max_digits=12, decimal_places=2)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="credit_amount_positive"),
            models.CheckConstraint(
                condition=Q(remaining__gte=0) & Q(remaining__lte=models.F("amount")),
                name="credit_remaining_within_amount",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.code} {self.remaining}/{self.amount} {self.currency}"
