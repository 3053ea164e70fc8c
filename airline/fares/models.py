"""Fare families (bundles) and published fares (DESIGN.md §7).

Both are data, edited in the admin: the four default bundles come from a data migration,
the demo fares from `fares_ensure_demo`. Pricing never reads these models directly; it
works on the ORM-free `BundleTerms`/`FareTerms` built from them (airline/fares/terms.py).
"""

from django.db import models
from django.db.models import Q

from airline.fares import validators
from airline.network.models import CabinCode


class SeatSelection(models.TextChoices):
    """Which seat zones (airline/network/fleet.py `Zone`) a bundle lets the passenger
    choose free of charge."""

    NONE = "none", "None free (assigned at check-in, or bought)"
    STANDARD = "standard", "Standard seats free"
    PREMIUM = "premium", "Every seat free, premium included"


class RefundMethod(models.TextChoices):
    """What a voluntary cancellation gives back (the 24-hour rule of DESIGN.md §7 is an
    order rule on top of this, whatever the bundle)."""

    CREDIT_SCALE = "credit_scale", "Airline credit on a lead-time scale"
    CREDIT = "credit", "Full airline credit"
    REFUND = "refund", "Refund to the original payment"


class Bundle(models.Model):
    """A fare family sold on top of a fare: what the passenger gets and what changes and
    cancellations cost. The JSON fields are SPEC.md §2.2 Fare sub-structures exactly as
    they go on the wire (camelCase keys); the typed fields are what the services act on."""

    code = models.CharField(max_length=10, unique=True)
    name = models.CharField(max_length=40, help_text="Shown as the offer's bundleName")
    rank = models.PositiveSmallIntegerField(help_text="Display order, lowest first")
    cabin = models.CharField(max_length=1, choices=CabinCode.choices)
    description = models.TextField(blank=True)
    supplement = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        help_text="USD per passenger per segment, added to the fare (part of the base)",
    )
    benefits = models.JSONField(default=list, blank=True, validators=[validators.validate_benefits])
    baggage_disclosures = models.JSONField(
        default=list, blank=True, validators=[validators.validate_baggage_disclosures]
    )
    penalties = models.JSONField(
        default=list, blank=True, validators=[validators.validate_penalties]
    )
    seat_profiles = models.JSONField(
        default=list, blank=True, validators=[validators.validate_seat_profiles]
    )
    carry_on_included = models.BooleanField(default=False)
    checked_bags_included = models.PositiveSmallIntegerField(default=0)
    seat_selection = models.CharField(
        max_length=10, choices=SeatSelection.choices, default=SeatSelection.NONE
    )
    changeable = models.BooleanField(default=False)
    change_fee = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        default=0,
        help_text="USD per passenger, plus any fare difference",
    )
    refund_method = models.CharField(
        max_length=12, choices=RefundMethod.choices, default=RefundMethod.CREDIT_SCALE
    )
    name_change_fee = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        default=0,
        db_default=0,
        help_text="USD per passenger to change a ticketed passenger's name (reissue)",
    )
    fare_basis_suffix = models.CharField(
        max_length=2, help_text="Appended to the fare's basis code, e.g. NF: ML21OW + NF"
    )

    class Meta:
        ordering = ["rank", "code"]
        constraints = [
            models.CheckConstraint(
                condition=Q(supplement__gte=0), name="bundle_supplement_not_negative"
            ),
            models.CheckConstraint(
                condition=Q(change_fee__gte=0), name="bundle_change_fee_not_negative"
            ),
            models.CheckConstraint(
                condition=Q(name_change_fee__gte=0), name="bundle_name_change_fee_not_negative"
            ),
            # Bags beyond what is included are sold as CB1..CB3 (DESIGN.md §7).
            models.CheckConstraint(
                condition=Q(checked_bags_included__lte=3), name="bundle_at_most_three_bags"
            ),
            models.CheckConstraint(
                condition=Q(fare_basis_suffix__regex=r"^[A-Z0-9]{0,2}$"),
                name="bundle_fare_basis_suffix_alphanumeric",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.code})"


class Fare(models.Model):
    """A published one-way fare per passenger for one directional market and booking
    class. Stations are plain codes, not foreign keys, so fares can be filed before (or
    without) the schedule that serves them."""

    origin = models.CharField(max_length=3)
    destination = models.CharField(max_length=3)
    rbd = models.CharField(max_length=1, help_text="Booking class (airline/network BookingClass)")
    base_amount = models.DecimalField(max_digits=8, decimal_places=2, help_text="USD")
    fare_basis = models.CharField(max_length=8)

    class Meta:
        ordering = ["origin", "destination", "rbd"]
        constraints = [
            # Also the index of every pricing lookup (selectors.fares_for_markets).
            models.UniqueConstraint(
                fields=["origin", "destination", "rbd"], name="one_fare_per_market_and_class"
            ),
            models.CheckConstraint(condition=Q(base_amount__gt=0), name="fare_amount_positive"),
            models.CheckConstraint(
                condition=Q(origin__regex=r"^[A-Z]{3}$", destination__regex=r"^[A-Z]{3}$")
                & ~Q(origin=models.F("destination")),
                name="fare_market_is_two_stations",
            ),
            models.CheckConstraint(condition=Q(rbd__regex=r"^[A-Z]$"), name="fare_rbd_one_letter"),
            models.CheckConstraint(
                condition=Q(fare_basis__regex=r"^[A-Z0-9]{1,8}$"), name="fare_basis_alphanumeric"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.origin}-{self.destination} {self.rbd} {self.base_amount} ({self.fare_basis})"


class AncillaryCategory(models.TextChoices):
    """What an API key's `allowed_ancillary_categories` name (DESIGN.md §5)."""

    BAGGAGE = "BAGGAGE", "Baggage"
    SEAT = "SEAT", "Seat"
    PETS = "PETS", "Pets"
    PRIORITY = "PRIORITY", "Priority"


class AncillaryScope(models.TextChoices):
    """What one purchase covers (SPEC.md §2.6 segmentAvailability.scope)."""

    SEGMENT = "segment", "Each segment"
    JOURNEY = "journey", "The whole journey"
    LEG = "leg", "Each leg"


class Ancillary(models.Model):
    """A product sold beside the fare: a bag, a seat of a zone, a pet, priority boarding
    (DESIGN.md §7). Prices are per passenger per scope; what a bundle includes is priced
    at zero by the services, not here."""

    code = models.CharField(max_length=8, unique=True, help_text="e.g. CB1, COB, STXL")
    name = models.CharField(max_length=60)
    category = models.CharField(max_length=10, choices=AncillaryCategory.choices)
    ssr_code = models.CharField(max_length=4, help_text="IATA SSR code, e.g. XBAG")
    fee_code = models.CharField(max_length=3, help_text="Reason-for-issuance sub code (RFISC)")
    scope = models.CharField(max_length=8, choices=AncillaryScope.choices)
    price = models.DecimalField(max_digits=8, decimal_places=2, help_text="USD, before tax")
    taxable = models.BooleanField(
        default=False, help_text="Carries the US transportation tax (settings.US_TAXES['US'])"
    )
    requires = models.ForeignKey(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="Sold only with this one (CB2 needs CB1)",
    )
    seat_zone = models.CharField(
        max_length=16, blank=True, help_text="For seats: the zone priced (network fleet Zone)"
    )
    pieces = models.PositiveSmallIntegerField(
        default=0, help_text="For checked bags: which piece this is (CB2 is piece 2)"
    )
    rank = models.PositiveSmallIntegerField(default=0)
    is_active = models.BooleanField(default=True)

    class Meta:
        ordering = ["rank", "code"]
        verbose_name_plural = "ancillaries"
        constraints = [
            models.CheckConstraint(condition=Q(price__gte=0), name="ancillary_price_not_negative"),
            models.CheckConstraint(
                condition=~Q(category="SEAT") | ~Q(seat_zone=""), name="seat_ancillary_has_zone"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.code} {self.name}"
