"""Who travels on an order and how to reach them (SPEC.md §2.5 passengers, contacts)."""

from django.contrib.postgres.indexes import GinIndex, OpClass
from django.db import models
from django.db.models.functions import Upper

from orders.models.fields import JSONField
from orders.models.order import Order


class Passenger(models.Model):
    """A traveller on the order. `infant` is the lap infant this adult carries."""

    class Ptc(models.TextChoices):
        ADT = "ADT", "Adult"
        CHD = "CHD", "Child"
        INF = "INF", "Infant"

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="passengers")
    ref = models.CharField(max_length=20, help_text="PAX- id shown to clients")
    offer_pax_id = models.CharField(max_length=64, help_text="paxId of the priced offer")
    position = models.PositiveSmallIntegerField()
    ptc = models.CharField(max_length=3, choices=Ptc.choices)
    given_name = models.CharField(max_length=64)
    surname = models.CharField(max_length=64)
    date_of_birth = models.DateField(null=True, blank=True)
    gender = models.CharField(max_length=6, blank=True)
    nationality = models.CharField(max_length=2, blank=True)
    residence_country = models.CharField(max_length=2, blank=True)
    loyalty_program = JSONField(null=True, blank=True)
    travel_documents = JSONField(default=list, blank=True)
    contacts = JSONField(null=True, blank=True, help_text="{emailAddress, phoneNumber}")
    infant = models.OneToOneField(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="carried_by"
    )

    class Meta:
        ordering = ["order_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["order", "ref"], name="one_pax_ref_per_order"),
        ]
        indexes = [
            # OrderList and `bookings --last-name`: passengers by surname, any case.
            models.Index(Upper("surname"), "order", name="pax_by_surname"),
            # The back office's booking search finds part of a name (icontains, which
            # PostgreSQL reads as UPPER(name) LIKE '%PART%'): trigram indexes, on
            # PostgreSQL only (migration 0018; SQLite scans, as it always has).
            GinIndex(OpClass(Upper("surname"), name="gin_trgm_ops"), name="pax_surname_trgm"),
            GinIndex(OpClass(Upper("given_name"), name="gin_trgm_ops"), name="pax_given_trgm"),
        ]

    def __str__(self) -> str:
        return f"{self.surname}/{self.given_name} {self.ptc}"


class Contact(models.Model):
    """The order's primary contact (SPEC.md §2.5 contacts[])."""

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="contacts")
    ref = models.CharField(max_length=20)
    type_code = models.CharField(max_length=1, default="P")
    email = models.EmailField(max_length=254)
    phone = models.CharField(max_length=20, blank=True, help_text="E.164")
    given_name = models.CharField(max_length=64)
    surname = models.CharField(max_length=64)
    postal_address = JSONField(null=True, blank=True)

    class Meta:
        ordering = ["order_id", "id"]

    def __str__(self) -> str:
        return f"{self.surname}/{self.given_name} <{self.email}>"
