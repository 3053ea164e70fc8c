"""The order itself (SPEC.md §2.5; DESIGN.md §8): its status, channel and money totals."""

from django.db import models
from django.db.models import Q

from sellers.models import Seller


class OrderStatus(models.TextChoices):
    """SPEC.md §3 order statuses."""

    CONFIRMED = "CONFIRMED"
    ONHOLD = "ONHOLD"
    CANCELLED = "CANCELLED"
    CLOSED = "CLOSED"
    PENDING = "PENDING"


class Channel(models.TextChoices):
    """Where an order came from."""

    JSON = "JSON", "JSON API"
    NDC = "NDC", "NDC/XML API"
    IMPORT = "IMPORT", "Imported from another channel"


class Order(models.Model):
    """One booking: header, totals, and who sold it through which channel.

    `id` orders the keyset pagination of OrderList (SPEC.md §4.8 lastIndex); `order_id`
    is the opaque id clients see."""

    id = models.BigAutoField(primary_key=True)
    order_id = models.CharField(max_length=24, unique=True)
    record_locator = models.CharField(max_length=6, unique=True)
    owner_code = models.CharField(max_length=3)
    seller = models.ForeignKey(Seller, on_delete=models.PROTECT, related_name="orders")
    agency_code = models.CharField(max_length=10, blank=True, db_index=False)
    channel = models.CharField(max_length=6, choices=Channel.choices)
    status = models.CharField(max_length=9, choices=OrderStatus.choices)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    currency = models.CharField(max_length=3, default="USD")
    total = models.DecimalField(max_digits=12, decimal_places=2)
    paid = models.DecimalField(max_digits=12, decimal_places=2, default=0)
    # `total` is what the order's live lines are worth; what was on it and went before
    # anyone paid for it (a cancelled or lapsed hold, a seat replaced on a hold) is here,
    # so the order view's totals account for every line it ever had (SPEC.md §2.5).
    voided = models.DecimalField(max_digits=12, decimal_places=2, default=0, db_default=0)
    # What a paid order's value went to when lines left it without money going back
    # (orders.servicing.changes "settling"): `retained` is kept by the airline (penalties, change
    # and name-change fees, a cheaper replacement seat), `credited` became airline credit.
    # After every change of a paid order: paid = total + retained + credited -
    # refunded_outside.
    retained = models.DecimalField(max_digits=12, decimal_places=2, default=0, db_default=0)
    credited = models.DecimalField(max_digits=12, decimal_places=2, default=0, db_default=0)
    # Given back by the payment provider outside this service (a refund in its dashboard:
    # orders.money.provider_events), not yet set against value the order gives back: the next
    # change that gives value back gives this much less (orders.servicing.changes), so nothing goes
    # back twice; and no change asks the client to pay it back.
    refunded_outside = models.DecimalField(max_digits=12, decimal_places=2, default=0, db_default=0)
    payment_time_limit = models.DateTimeField(null=True, blank=True)
    # The priced offer this order was booked from: unique, so one priced offer becomes
    # at most one order even when two requests race (DESIGN.md §8).
    source_offer_id = models.CharField(max_length=64, null=True, blank=True, unique=True)
    remarks = models.TextField(blank=True)
    # Bumped by every change to the order or its parts: the rendered order view is
    # cached under it (orders/reading/presenters.py), so a change is never served stale.
    version = models.PositiveIntegerField(default=1, db_default=1)
    # The lead passenger's name (the first adult), as OrderList summaries show it
    # (SPEC.md §2.8): a page of 1000 summaries then reads no passenger rows. Written with
    # the passengers; a change of the lead's name must write it here too.
    lead_given_name = models.CharField(max_length=64, blank=True, default="", db_default="")
    lead_surname = models.CharField(max_length=64, blank=True, default="", db_default="")

    class Meta:
        ordering = ["-id"]
        # The back office's one write (orders.admin.bookings); the Operations role has it.
        permissions = [("cancel_hold", "Can cancel an unpaid hold in the back office")]
        indexes = [
            # OrderList: one seller's orders of one agency in cursor order (SPEC.md §4.8,
            # orders.reading.selectors.OrderScope).
            models.Index(fields=["seller", "agency_code", "id"], name="order_by_seller_agency"),
            # The back office's booking search: an agency code, whichever seller's.
            models.Index(fields=["agency_code"], name="order_by_agency"),
            # expire_holds: the holds whose limit has passed.
            models.Index(
                fields=["payment_time_limit"],
                name="hold_by_limit",
                condition=Q(status="ONHOLD"),
            ),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(paid__gte=0), name="order_paid_not_negative"),
        ]

    # Not a column: True on an unpaid hold past its limit that a read presents as the
    # expiry will leave it (orders.reading.selectors.order_as_it_stands) while the row still says
    # ONHOLD. Such an instance is for rendering only; nothing saves it.
    lapsed = False

    def __str__(self) -> str:
        return f"{self.record_locator} {self.status}"

    @property
    def balance_due(self):
        """What the client still owes: fees kept are owed as much as the lines are."""
        return max(
            self.total + self.retained + self.credited - self.paid - self.refunded_outside, 0
        )
