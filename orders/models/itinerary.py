"""What an order flies and carries (SPEC.md §2.5): journeys, their segments and legs, the
order items that price them, and the seats and services on them."""

from django.db import models
from django.db.models import Q

from airline.network.models import FlightLeg
from orders.models.fields import JSONField
from orders.models.order import Order
from orders.models.people import Passenger


class Journey(models.Model):
    """One direction of the trip, as it was booked."""

    # No index of its own: journey_by_order_position leads with the order. Beside it, at
    # a million orders, PostgreSQL picked the order's own index for OrderList's journey
    # and sorted each order's journeys by position (~1.2x the page's SQL).
    order = models.ForeignKey(
        Order, on_delete=models.CASCADE, related_name="journeys", db_index=False
    )
    ref = models.CharField(max_length=20)
    position = models.PositiveSmallIntegerField()
    origin = models.CharField(max_length=3)
    destination = models.CharField(max_length=3)
    departs_at = models.DateTimeField(help_text="UTC")
    arrives_at = models.DateTimeField(help_text="UTC")
    is_cancelled = models.BooleanField(default=False)
    exchanged = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Cancelled because it was exchanged for other flights (AcceptReshopOffer)",
    )
    # What an OrderList summary shows of the journey (SPEC.md §2.8), kept beside it so
    # that a page of summaries reads neither segments nor time zones.
    departure_date = models.DateField(null=True, help_text="local date at the origin")
    flight_number = models.PositiveIntegerField(
        null=True, help_text="marketing flight number of the first segment"
    )

    class Meta:
        ordering = ["order_id", "position"]
        indexes = [
            # OrderList: the first journey of an order, in trip order, that fits the
            # search (orders.reading.selectors.orders_search); no sort per order.
            models.Index(fields=["order", "position"], name="journey_by_order_position"),
            models.Index(fields=["departs_at"], name="journey_by_time"),
        ]

    def __str__(self) -> str:
        return f"{self.origin}-{self.destination} {self.departs_at:%Y-%m-%d %H:%M}Z"


class Segment(models.Model):
    """One flight number on a date within a journey, and the seats it took."""

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="segments")
    journey = models.ForeignKey(Journey, on_delete=models.CASCADE, related_name="segments")
    ref = models.CharField(max_length=20)
    position = models.PositiveSmallIntegerField()
    carrier = models.CharField(max_length=3)
    flight_number = models.PositiveSmallIntegerField()
    origin = models.CharField(max_length=3)
    destination = models.CharField(max_length=3)
    departs_at = models.DateTimeField()
    arrives_at = models.DateTimeField()
    cabin = models.CharField(max_length=1)
    rbd = models.CharField(max_length=1)
    seats = models.PositiveSmallIntegerField(help_text="Seats taken from inventory (no INF)")
    holds_inventory = models.BooleanField(
        default=True, help_text="Its seats are still taken (false once released)"
    )

    class Meta:
        ordering = ["order_id", "journey_id", "position"]
        indexes = [models.Index(fields=["flight_number", "departs_at"], name="segment_by_flight")]
        constraints = [
            # Items, coupons and services point at segments by this id: one per order,
            # even when a flight is exchanged and exchanged back.
            models.UniqueConstraint(fields=["order", "ref"], name="one_segment_ref_per_order")
        ]

    def __str__(self) -> str:
        return f"{self.carrier}{self.flight_number} {self.origin}-{self.destination} {self.rbd}"


class Leg(models.Model):
    """A leg of a booked segment: the flight-date leg whose inventory it uses."""

    segment = models.ForeignKey(Segment, on_delete=models.CASCADE, related_name="legs")
    flight_leg = models.ForeignKey(FlightLeg, on_delete=models.PROTECT, related_name="+")
    ref = models.CharField(max_length=20)
    position = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["segment_id", "position"]

    def __str__(self) -> str:
        return self.ref


class OrderItem(models.Model):
    """A flight line: one journey in one bundle for the whole party (SPEC.md §2.5 items)."""

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="items")
    journey = models.OneToOneField(Journey, on_delete=models.CASCADE, related_name="item")
    ref = models.CharField(max_length=20)
    status = models.CharField(max_length=9, default="CONFIRMED")
    bundle = models.CharField(max_length=10)
    total = models.DecimalField(max_digits=12, decimal_places=2)
    price = JSONField(help_text="Price wire: total, base, taxes, fees")
    fare = JSONField(help_text="Fare wire as offered")
    passenger_prices = JSONField(default=list)

    class Meta:
        ordering = ["order_id", "journey_id"]

    def __str__(self) -> str:
        return self.ref


class Service(models.Model):
    """A purchased ancillary (SPEC.md §2.5 services[]): a seat on a leg, a bag for a
    journey, priority boarding on a segment... for one passenger.

    A seat is held by one passenger per flight-date leg: the partial unique constraint
    decides every race for it, whatever the request path (DESIGN.md §7, STYLE.md)."""

    class Status(models.TextChoices):
        ACTIVE = "ACTIVE"
        CANCELLED = "CANCELLED"

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="services")
    ref = models.CharField(max_length=20, help_text="SVR- id")
    item_ref = models.CharField(max_length=20, help_text="OOI- id of its order item")
    passenger = models.ForeignKey(Passenger, on_delete=models.CASCADE, related_name="services")
    journey = models.ForeignKey(
        Journey, on_delete=models.CASCADE, null=True, blank=True, related_name="services"
    )
    segment = models.ForeignKey(
        Segment, on_delete=models.CASCADE, null=True, blank=True, related_name="services"
    )
    flight_leg = models.ForeignKey(
        FlightLeg, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    code = models.CharField(max_length=8)
    name = models.CharField(max_length=60)
    category = models.CharField(max_length=10)
    ssr_code = models.CharField(max_length=4)
    fee_code = models.CharField(max_length=3)
    amount = models.DecimalField(max_digits=10, decimal_places=2)
    tax = models.DecimalField(max_digits=10, decimal_places=2, default=0)
    seat_row = models.PositiveSmallIntegerField(null=True, blank=True)
    seat_column = models.CharField(max_length=1, blank=True)
    status = models.CharField(max_length=9, choices=Status.choices, default=Status.ACTIVE)
    emd_number = models.CharField(max_length=13, null=True, blank=True, unique=True)
    included = models.BooleanField(
        default=False, db_default=False, help_text="Part of the bundle, at price 0"
    )
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["order_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["flight_leg", "seat_row", "seat_column"],
                condition=Q(status="ACTIVE", seat_row__isnull=False),
                name="one_passenger_per_seat",
            ),
            models.UniqueConstraint(
                fields=["passenger", "flight_leg"],
                condition=Q(status="ACTIVE", seat_row__isnull=False),
                name="one_seat_per_passenger_per_leg",
            ),
        ]

    def __str__(self) -> str:
        seat = f" {self.seat_row}{self.seat_column}" if self.seat_row else ""
        return f"{self.ref} {self.code}{seat}"

    @property
    def total(self):
        return self.amount + self.tax
