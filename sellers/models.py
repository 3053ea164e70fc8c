"""Who may use the API: partners, their sellers, and the API keys that act for them."""

from uuid import uuid4

from django.conf import settings
from django.db import models
from django.db.models import Q

from sellers.authcache import auth_changed


class Partner(models.Model):
    """A company selling the airline's flights through the API (agency, OTA, aggregator)."""

    code = models.CharField(max_length=16, unique=True)
    name = models.CharField(max_length=100)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["code"]

    def __str__(self) -> str:
        return f"{self.code} ({self.name})"

    def save(self, *args, **kwargs) -> None:
        super().save(*args, **kwargs)
        auth_changed()  # sellers/authcache.py: resolved tokens must see this


class Seller(models.Model):
    """A selling identity of a partner; offers, orders and webhooks belong to one seller."""

    id = models.UUIDField(primary_key=True, default=uuid4, editable=False)
    partner = models.ForeignKey(Partner, on_delete=models.PROTECT, related_name="sellers")
    code = models.CharField(max_length=16, unique=True)
    name = models.CharField(max_length=100)
    is_default = models.BooleanField(
        default=False, help_text="The seller a partner key acts for when none is named."
    )
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["code"]
        constraints = [
            # SPEC.md §2.1: exactly one seller in a partner's list is the default.
            models.UniqueConstraint(
                fields=["partner"],
                condition=Q(is_default=True),
                name="one_default_seller_per_partner",
            ),
        ]

    def __str__(self) -> str:
        return self.code

    def save(self, *args, **kwargs) -> None:
        super().save(*args, **kwargs)
        auth_changed()


class ApiKey(models.Model):
    """A credential: a partner key acts for any active seller of its partner, a seller key
    for its own seller only (SPEC.md §5). The secret is stored only as a SHA-256 hash."""

    class Access(models.TextChoices):
        FULL = "full", "Full transaction (book)"
        READ = "read", "Read-only"

    partner = models.ForeignKey(Partner, on_delete=models.PROTECT, related_name="api_keys")
    seller = models.ForeignKey(
        Seller,
        on_delete=models.PROTECT,
        related_name="api_keys",
        null=True,
        blank=True,
        help_text="Set for a seller key; empty for a partner key.",
    )
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=16, unique=True, editable=False)
    secret_hash = models.CharField(max_length=64, editable=False)
    access_level = models.CharField(max_length=4, choices=Access.choices, default=Access.FULL)
    agency_code = models.CharField(
        max_length=10, blank=True, help_text="Organization (agency) code; OrderList needs one."
    )
    allowed_bundles = models.JSONField(
        default=list, blank=True, help_text="Bundle codes this key may sell; empty means all."
    )
    allowed_ancillary_categories = models.JSONField(
        default=list,
        blank=True,
        help_text="Ancillary categories this key may sell; empty means all.",
    )
    requests_per_minute = models.PositiveIntegerField(
        default=settings.API_KEY_DEFAULT_RATE_PER_MINUTE
    )
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API key"
        constraints = [
            models.CheckConstraint(
                condition=Q(requests_per_minute__gt=0), name="api_key_rate_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.prefix} ({self.name or self.kind})"

    def save(self, *args, **kwargs) -> None:
        super().save(*args, **kwargs)
        auth_changed()

    @property
    def kind(self) -> str:
        return "seller" if self.seller_id else "partner"

    @property
    def can_book(self) -> bool:
        return self.access_level == self.Access.FULL


class RateWindow(models.Model):
    """Requests and body bytes counted per key per minute when Redis is not configured
    (the embedded default) or has been down too long; otherwise the same counters live in
    Redis (sellers/throttling.py)."""

    key = models.ForeignKey(ApiKey, on_delete=models.CASCADE, related_name="+")
    minute = models.BigIntegerField(help_text="Minutes since the Unix epoch.")
    count = models.PositiveIntegerField(default=0)
    bytes = models.BigIntegerField(default=0, help_text="Request body bytes of the minute.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["key", "minute"], name="one_rate_window_per_minute")
        ]

    def __str__(self) -> str:
        return f"key {self.key_id} minute {self.minute}: {self.count}"
