"""Bookings in the back office, read-only (DESIGN.md §10): an order with its passengers,
journeys, segments, items, purchased seats and services, payments, tickets and history.
The one write is the action "Cancel unpaid hold", through the same service the API uses
(STYLE.md 11)."""

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from orders.holds import order_cancel_hold
from orders.models import (
    AirlineCredit,
    Contact,
    Journey,
    Order,
    OrderEvent,
    OrderItem,
    Passenger,
    Payment,
    PaymentIntent,
    Refund,
    Segment,
    Service,
    Ticket,
)


class ReadOnlyInline(admin.TabularInline):
    """A child table shown as it is: nothing added, changed or deleted here."""

    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class PassengerInline(ReadOnlyInline):
    model = Passenger
    fields = ["position", "ref", "ptc", "given_name", "surname", "date_of_birth", "infant"]


class ContactInline(ReadOnlyInline):
    model = Contact
    fields = ["ref", "given_name", "surname", "email", "phone"]


class JourneyInline(ReadOnlyInline):
    model = Journey
    fields = ["position", "ref", "origin", "destination", "departs_at", "arrives_at"]


class SegmentInline(ReadOnlyInline):
    model = Segment
    fields = [
        "journey",
        "position",
        "ref",
        "flight",
        "origin",
        "destination",
        "departs_at",
        "arrives_at",
        "cabin",
        "rbd",
        "seats",
        "holds_inventory",
    ]
    readonly_fields = ["flight"]

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("journey")

    @admin.display(description="Flight")
    def flight(self, segment: Segment) -> str:
        return f"{segment.carrier}{segment.flight_number}"


class OrderItemInline(ReadOnlyInline):
    model = OrderItem
    fields = ["ref", "journey", "status", "bundle", "total"]

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("journey")


class ServiceInline(ReadOnlyInline):
    model = Service
    verbose_name_plural = "seats and services"
    fields = [
        "ref",
        "code",
        "name",
        "passenger",
        "journey",
        "segment",
        "seat",
        "amount",
        "tax",
        "status",
        "emd_number",
    ]
    readonly_fields = ["seat"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("passenger", "journey", "segment", "flight_leg")
        )

    @admin.display(description="Seat")
    def seat(self, service: Service) -> str:
        if service.seat_row is None:
            return "-"
        # Seats are per leg: a direct one-stop flight is one segment with two legs.
        leg = service.flight_leg
        return f"{service.seat_row}{service.seat_column} {leg.origin_id}-{leg.destination_id}"


class PaymentInline(ReadOnlyInline):
    model = Payment
    # Never a card number: none is stored, and the last four are shown masked.
    fields = ["ref", "created_at", "status", "amount", "currency", "method", "card"]
    readonly_fields = ["card"]

    @admin.display(description="Card")
    def card(self, payment: Payment) -> str:
        if not payment.card_last4:
            return "-"
        return f"{payment.card_brand} ************{payment.card_last4} exp {payment.card_expiry}"


class TicketInline(ReadOnlyInline):
    model = Ticket
    fields = ["number", "passenger", "issued_at", "coupon_list"]
    readonly_fields = ["coupon_list"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("passenger")
            .prefetch_related("coupons__segment")
        )

    @admin.display(description="Coupons")
    def coupon_list(self, ticket: Ticket) -> str:
        return ", ".join(
            f"{c.number}: {c.segment.carrier}{c.segment.flight_number} "
            f"{c.segment.origin}-{c.segment.destination} {c.status}"
            for c in ticket.coupons.all()
        )


class RefundInline(ReadOnlyInline):
    """Money owed back to the order's cards, and whether the gateway has given it."""

    model = Refund
    fk_name = "payment"
    fields = ["ref", "created_at", "amount", "state", "sent_at", "why"]


class CreditInline(ReadOnlyInline):
    """Airline credit the order gave back (DESIGN.md §11 "Airline credit")."""

    model = AirlineCredit
    fk_name = "source_order"
    verbose_name_plural = "airline credit issued"
    fields = ["code", "amount", "remaining", "currency", "created_at", "expires_at"]


class OrderEventInline(ReadOnlyInline):
    model = OrderEvent
    verbose_name_plural = "history"
    fields = ["at", "kind", "actor", "detail"]


@admin.register(Order)
class OrderAdmin(admin.ModelAdmin):
    list_display = [
        "record_locator",
        "status",
        "seller",
        "agency_code",
        "channel",
        "created_at",
        "total",
        "balance",
    ]
    list_filter = ["status", "channel", "seller"]
    # Exact matches: a locator or an order id is known whole, and `=passengers__surname`
    # (UPPER(surname) = UPPER(...)) can use the pax_by_surname index on big tables.
    search_fields = ["=record_locator", "=order_id", "=passengers__surname"]
    search_help_text = "Record locator, order id or a passenger's surname (exact, any case)"
    list_select_related = ["seller"]
    date_hierarchy = "created_at"
    fields = [
        "record_locator",
        "order_id",
        "owner_code",
        "status",
        "seller",
        "agency_code",
        "channel",
        "created_at",
        "updated_at",
        "currency",
        "total",
        "paid",
        "voided",
        "retained",
        "credited",
        "balance",
        "payment_time_limit",
        "source_offer_id",
        "remarks",
    ]
    readonly_fields = ["balance"]
    inlines = [
        PassengerInline,
        ContactInline,
        JourneyInline,
        SegmentInline,
        OrderItemInline,
        ServiceInline,
        PaymentInline,
        CreditInline,
        TicketInline,
        OrderEventInline,
    ]
    actions = ["cancel_unpaid_hold"]

    @admin.display(description="Balance due")
    def balance(self, order: Order):
        return order.balance_due

    def has_add_permission(self, request) -> bool:
        return False  # orders are booked through the API or imported (import_bookings)

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # read-only: every change to a booking is a service with its rules

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # bookings are cancelled, never deleted: they are the sales record

    def has_cancel_permission(self, request: HttpRequest) -> bool:
        # Looking is for every staff member with view rights; cancelling needs the
        # right to change orders.
        return request.user.has_perm("orders.change_order")

    @admin.action(description="Cancel unpaid hold", permissions=["cancel"])
    def cancel_unpaid_hold(self, request: HttpRequest, queryset: QuerySet[Order]) -> None:
        actor = f"admin:{request.user.get_username()}"
        selected = list(queryset.order_by("pk"))
        cancelled = sum(order_cancel_hold(order=order, actor=actor) for order in selected)
        self.message_user(request, f"{cancelled} unpaid hold(s) cancelled; their seats are free.")
        if cancelled < len(selected):
            self.message_user(
                request,
                f"{len(selected) - cancelled} selected booking(s) were not unpaid holds and "
                "were left as they were.",
                messages.WARNING,
            )


@admin.register(AirlineCredit)
class AirlineCreditAdmin(admin.ModelAdmin):
    """Airline credit, read-only: issued by cancellations and cheaper exchanges, spent by
    later orders of the same seller (orders.credits)."""

    list_display = ["code", "seller", "amount", "remaining", "expires_at", "source_order"]
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
class RefundAdmin(admin.ModelAdmin):
    """Refunds to cards, read-only: PENDING ones are sent by the worker (orders.refunds)."""

    list_display = ["ref", "state", "amount", "payment", "created_at", "sent_at", "why"]
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
class PaymentIntentAdmin(admin.ModelAdmin):
    """Card charges and how each was settled, read-only: the record operations staff
    reconcile the gateway's statements against (DESIGN.md §11 "Payments")."""

    list_display = ["ref", "state", "purpose", "amount", "order", "seller", "created_at", "note"]
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
