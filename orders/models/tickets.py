"""E-tickets, their coupons and the serials that number them (DESIGN.md §8)."""

from django.db import models
from django.db.models import Q

from orders.models.itinerary import Segment
from orders.models.order import Order
from orders.models.people import Passenger


class Ticket(models.Model):
    """An e-ticket: one per passenger, numbered airline accounting code + serial."""

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="tickets")
    passenger = models.ForeignKey(Passenger, on_delete=models.CASCADE, related_name="tickets")
    number = models.CharField(max_length=13, unique=True)
    issued_at = models.DateTimeField()

    class Meta:
        ordering = ["order_id", "id"]

    def __str__(self) -> str:
        return self.number


class Coupon(models.Model):
    """A flight coupon: one passenger on one segment."""

    class Status(models.TextChoices):
        OPEN = "OPEN"
        USED = "USED"
        REFUNDED = "REFUNDED"
        EXCHANGED = "EXCHANGED"
        VOID = "VOID"

    ticket = models.ForeignKey(Ticket, on_delete=models.CASCADE, related_name="coupons")
    segment = models.ForeignKey(Segment, on_delete=models.CASCADE, related_name="coupons")
    number = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=9, choices=Status.choices, default=Status.OPEN)

    class Meta:
        ordering = ["ticket_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["ticket", "number"], name="one_coupon_number"),
            models.CheckConstraint(condition=Q(number__gte=1), name="coupon_numbered_from_1"),
        ]

    def __str__(self) -> str:
        return f"{self.ticket.number}/{self.number}"


class TicketSerial(models.Model):
    """Hands out ticket serials: the id of a row inserted here is the serial, so
    concurrent bookings never share a number and never wait on each other."""

    id = models.BigAutoField(primary_key=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(id__lt=10**10), name="ticket_serial_fits_ten_digits")
        ]

    def __str__(self) -> str:
        return str(self.pk)
