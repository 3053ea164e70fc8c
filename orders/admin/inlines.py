"""The booking page's tables (DESIGN.md §10), read-only: passengers, contacts,
journeys, segments, items, seats and services, payments, tickets, refunds, credit,
airline-initiated changes and history."""

from django.contrib import admin
from django.utils.html import format_html, format_html_join

from airline.backoffice import (
    ReadOnlyInline,
    local_time,
    utc_column,
)
from airline.network.services import station_zone
from orders.admin.booking_page import (
    CHANGE_DETECTED,
    BookingPage,
    deliveries_url,
    endpoint_url,
    journeys_text,
    status_html,
)
from orders.models import (
    AirlineChange,
    AirlineCredit,
    Contact,
    Journey,
    OrderEvent,
    OrderItem,
    Passenger,
    Payment,
    Segment,
    Service,
    Ticket,
)
from orders.reading.support_text import detail_lines, journey_place


class PassengerInline(ReadOnlyInline):
    model = Passenger
    fields = ["position", "ref", "ptc", "given_name", "surname", "date_of_birth", "infant"]


class ContactInline(ReadOnlyInline):
    model = Contact
    fields = ["ref", "given_name", "surname", "email", "phone"]


class JourneyInline(ReadOnlyInline):
    model = Journey
    fields = [
        "place",
        "ref",
        "origin",
        "destination",
        "departs",
        "arrives",
        # Its state in words (cancelled, exchanged, schedule changed): not the booleans,
        # whose red cross on every live journey read as a fault.
        "flight_status",
    ]
    readonly_fields = ["place", "departs", "arrives", "flight_status"]
    page: BookingPage | None = None  # set per request by OrderAdmin.get_inline_instances

    @admin.display(description="Journey")
    def place(self, journey: Journey) -> str:
        return journey_place(journey)

    @admin.display(description="Flight status")
    def flight_status(self, journey: Journey) -> str:
        return status_html(self.page.statuses.get(journey.ref) if self.page else None)

    @admin.display(description="Departs (local time)")
    def departs(self, journey: Journey) -> str:
        return local_time(journey.departs_at, station_zone(journey.origin))

    @admin.display(description="Arrives (local time)")
    def arrives(self, journey: Journey) -> str:
        return local_time(journey.arrives_at, station_zone(journey.destination))


class SegmentInline(ReadOnlyInline):
    model = Segment
    fields = [
        "journey",
        "position",
        "ref",
        "flight",
        "origin",
        "destination",
        "departs",
        "arrives",
        "cabin",
        "rbd",
        "seats",
        "holds_inventory",
        "flight_status",
    ]
    readonly_fields = ["flight", "departs", "arrives", "flight_status"]
    page: BookingPage | None = None  # set per request by OrderAdmin.get_inline_instances

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("journey")

    @admin.display(description="Flight")
    def flight(self, segment: Segment) -> str:
        return f"{segment.carrier}{segment.flight_number}"

    @admin.display(description="Departs (local time)")
    def departs(self, segment: Segment) -> str:
        return local_time(segment.departs_at, station_zone(segment.origin))

    @admin.display(description="Arrives (local time)")
    def arrives(self, segment: Segment) -> str:
        return local_time(segment.arrives_at, station_zone(segment.destination))

    @admin.display(description="Flight status")
    def flight_status(self, segment: Segment) -> str:
        return status_html(self.page.statuses.get(segment.ref) if self.page else None)


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
    fields = [
        "ref",
        "created_at_utc",
        "status",
        "amount",
        "currency",
        "method",
        "card",
        "gateway_reference",
        "dispute_shown",
        "provider_said",
    ]
    readonly_fields = ["created_at_utc", "card", "dispute_shown", "provider_said"]
    created_at_utc = staticmethod(utc_column("created_at", "Created"))

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("provider_events")

    @admin.display(description="Card")
    def card(self, payment: Payment) -> str:
        if not payment.card_last4:
            return "-"
        return f"{payment.card_brand} ************{payment.card_last4} exp {payment.card_expiry}"

    @admin.display(description="Dispute")
    def dispute_shown(self, payment: Payment) -> str:
        return f"DISPUTED: {payment.dispute}" if payment.dispute else "-"

    @admin.display(description="Provider events")
    def provider_said(self, payment: Payment) -> str:
        """The provider's webhooks about this payment (orders.money.provider_events)."""
        return (
            "; ".join(f"{e.type} {e.summary}".strip() for e in payment.provider_events.all()) or "-"
        )


class TicketInline(ReadOnlyInline):
    model = Ticket
    fields = ["number", "passenger", "issued_at_utc", "coupon_list"]
    readonly_fields = ["issued_at_utc", "coupon_list"]
    issued_at_utc = staticmethod(utc_column("issued_at", "Issued"))

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


class CreditInline(ReadOnlyInline):
    """Airline credit the order gave back (DESIGN.md §11 "Airline credit")."""

    model = AirlineCredit
    fk_name = "source_order"
    verbose_name_plural = "airline credit issued"
    fields = ["code", "amount", "remaining", "currency", "created_at_utc", "expires_at_utc"]
    readonly_fields = ["created_at_utc", "expires_at_utc"]
    created_at_utc = staticmethod(utc_column("created_at", "Created"))
    expires_at_utc = staticmethod(utc_column("expires_at", "Expires"))


class AirlineChangeInline(ReadOnlyInline):
    """Schedule changes the airline made to booked flights (docs/partners/airline-changes.md
    "Airline-initiated changes"): what the booking was and is now, and what the seller
    did about it."""

    model = AirlineChange
    verbose_name_plural = "airline-initiated changes"
    fields = [
        "ref",
        "status",
        "reason_list",
        "detected_at_utc",
        "was",
        "now",
        "resolved_at_utc",
        "resolved_by",
        "sellers_told",
    ]
    readonly_fields = [
        "reason_list",
        "detected_at_utc",
        "was",
        "now",
        "resolved_at_utc",
        "sellers_told",
    ]
    page: BookingPage | None = None  # set per request by OrderAdmin.get_inline_instances

    @admin.display(description="Sellers told")
    def sellers_told(self, change: AirlineChange) -> str:
        """The deliveries of the change's `detected` webhook events, each as the seller,
        the URL and the answer in words ("told ... (200)", "not yet: 6 attempts, last
        404"), linked to the endpoint, to the booking's deliveries below and to the
        deliveries list."""
        told = [
            d
            for d in (self.page.deliveries if self.page else [])
            if d.event_type == CHANGE_DETECTED
            and d.event_created_at >= change.detected_at
            and (change.resolved_at is None or d.event_created_at <= change.resolved_at)
        ]
        if not told:
            return "No webhook endpoint wanted it"
        return format_html(
            '{}<div><a href="#deliveries">below</a>, <a href="{}">all</a></div>',
            format_html_join(
                "",
                '<div><a href="{}">{}</a>: {}</div>',
                ((endpoint_url(d), d.endpoint, d.answer) for d in told),
            ),
            deliveries_url(self.page.order, CHANGE_DETECTED),
        )

    detected_at_utc = staticmethod(utc_column("detected_at", "Detected"))
    resolved_at_utc = staticmethod(utc_column("resolved_at", "Resolved"))

    @admin.display(description="Reasons")
    def reason_list(self, change: AirlineChange) -> str:
        return ", ".join(change.reasons)

    @admin.display(description="As booked")
    def was(self, change: AirlineChange) -> str:
        return journeys_text(change.removed)

    @admin.display(description="As it flies now")
    def now(self, change: AirlineChange) -> str:
        return journeys_text(change.added) or "-"


class OrderEventInline(ReadOnlyInline):
    """What happened to the booking, in the words `manage.py booking` prints it."""

    model = OrderEvent
    verbose_name_plural = "history"
    fields = ["at_utc", "kind", "actor", "what"]
    readonly_fields = ["at_utc", "what"]
    at_utc = staticmethod(utc_column("at", "At"))

    @admin.display(description="Detail")
    def what(self, event: OrderEvent) -> str:
        lines = detail_lines(event.detail or {})
        if not lines:
            return "-"
        # A line each, nested ones indented, as the support command prints them.
        return format_html('<div style="white-space: pre-wrap">{}</div>', "\n".join(lines))
