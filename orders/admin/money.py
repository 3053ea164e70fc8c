"""The money records in the back office, read-only: airline credit, refunds to cards,
and card charges (payment intents), each settled by the services and workers only."""

from django.contrib import admin

from airline.backoffice import (
    StandbyChangelist,
    utc_column,
)
from orders.models import (
    AirlineCredit,
    PaymentIntent,
    Refund,
)


@admin.register(AirlineCredit)
class AirlineCreditAdmin(StandbyChangelist, admin.ModelAdmin):
    """Airline credit, read-only: issued by cancellations and cheaper exchanges, spent by
    later orders of the same seller (orders.money.credits)."""

    list_display = ["code", "seller", "amount", "remaining", "expires_at_utc", "source_order"]
    expires_at_utc = staticmethod(utc_column("expires_at", "Expires"))
    list_filter = ["seller"]
    search_fields = ["=code", "=source_order__record_locator"]
    search_help_text = "Credit code or the record locator of the order it came from"
    list_select_related = ["seller", "source_order"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # issued and spent by the services only

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Refund)
class RefundAdmin(StandbyChangelist, admin.ModelAdmin):
    """Refunds to cards, read-only: PENDING ones are sent by the worker (orders.money.refunds)."""

    list_display = [
        "ref",
        "state",
        "amount",
        "covered",
        "payment",
        "created_at_utc",
        "sent_at_utc",
        "why",
        "note",
    ]
    created_at_utc = staticmethod(utc_column("created_at", "Created"))
    sent_at_utc = staticmethod(utc_column("sent_at", "Sent"))
    list_filter = ["state"]
    search_fields = ["=ref", "=payment__order__record_locator"]
    search_help_text = "Refund reference or record locator"
    list_select_related = ["payment"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(PaymentIntent)
class PaymentIntentAdmin(StandbyChangelist, admin.ModelAdmin):
    """Card charges and how each was settled, read-only: the record operations staff
    reconcile the gateway's statements against (DESIGN.md §11 "Payments")."""

    list_display = [
        "ref",
        "state",
        "purpose",
        "amount",
        "order",
        "seller",
        "created_at_utc",
        "note",
    ]
    created_at_utc = staticmethod(utc_column("created_at", "Created"))
    list_filter = ["state", "purpose"]
    search_fields = ["=ref", "=gateway_reference", "=order__record_locator", "=offer_id"]
    search_help_text = "Intent reference, gateway reference, record locator or offer id"
    list_select_related = ["order", "seller"]
    date_hierarchy = "created_at"

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # settled by the flows and the reconciler only

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # the money record is kept
