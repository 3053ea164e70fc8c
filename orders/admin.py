"""Bookings in the back office, read-only (DESIGN.md §10): an order with its passengers,
journeys, segments, items, purchased seats and services, payments, tickets and history.
The one write is the action "Cancel unpaid hold", through the same service the API uses
(STYLE.md 11).

A booking on a flight the schedule has since cancelled (FlightLeg.is_cancelled: dropped by
a newer schedule while it still had sales) is flagged wherever its status shows: its
status reads CONFIRMED, but the passengers have no flight."""

import re
from datetime import date, timedelta
from functools import cached_property

from django.contrib import admin, messages
from django.db.models import (
    Case,
    DecimalField,
    Exists,
    F,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Sum,
    When,
)
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from airline.api import clock
from airline.backoffice import (
    DayWord,
    EstimatedCountPaginator,
    FlightWord,
    OtherWord,
    ReadOnlyInline,
    RouteWord,
    RowCheckbox,
    StandbyChangelist,
    inlines_with_rows,
    local_time,
    log_action,
    search_words,
    utc_column,
    utc_time,
)
from airline.network.models import Station
from airline.network.services import station_zone
from orders.deliveries import Delivery, order_deliveries
from orders.holds import order_cancel_hold
from orders.models import (
    AirlineChange,
    AirlineCredit,
    Contact,
    Journey,
    Leg,
    Order,
    OrderEvent,
    OrderItem,
    OrderStatus,
    Passenger,
    Payment,
    PaymentIntent,
    Refund,
    Segment,
    Service,
    Ticket,
)
from orders.presenters import (
    OPERATIONAL_AIRLINE_CANCELLED,
    OPERATIONAL_CANCELLED,
    OPERATIONAL_EXCHANGED,
    OPERATIONAL_SCHEDULE_CHANGED,
    operational_statuses,
    pending_change_journeys,
)
from orders.selectors import order_flight_parts

# Statuses whose passengers expect to fly: only these are disrupted by a cancelled flight.
LIVE = (OrderStatus.CONFIRMED, OrderStatus.ONHOLD, OrderStatus.PENDING)
WARNING_HTML = '<strong style="color: var(--error-fg)">&#9888; {}</strong>'


def on_cancelled_flight() -> Exists:
    """The order still holds seats on a flight-date leg the schedule cancelled."""
    return Exists(
        Leg.objects.filter(
            segment__order=OuterRef("pk"),
            segment__holds_inventory=True,
            flight_leg__is_cancelled=True,
        )
    )


def disputes() -> QuerySet[Payment]:
    """The order's card payments the cardholder disputed with their bank (Payment.dispute,
    written from the provider's webhook)."""
    return Payment.objects.filter(order=OuterRef("pk")).exclude(dispute="")


def refunds_outside() -> QuerySet[Refund]:
    """The order's refunds the payment provider gave outside this service: one made in
    its dashboard (a Refund with the provider's id), or the part of one of ours that
    such a refund covered (Refund.covered)."""
    return Refund.objects.filter(payment__order=OuterRef("pk")).filter(
        ~Q(gateway_reference="") | Q(covered__gt=0)
    )


def refunded_outside_total() -> Subquery:
    """What the provider gave back of the order outside this service, in all (None when
    nothing): the amount of a dashboard refund, the covered part of one of ours."""
    given = Case(
        When(~Q(gateway_reference=""), then=F("amount")),
        default=F("covered"),
        output_field=DecimalField(max_digits=12, decimal_places=2),
    )
    return Subquery(
        refunds_outside()
        .order_by()
        .values("payment__order")
        .annotate(total=Sum(given))
        .values("total")[:1],
        output_field=DecimalField(max_digits=12, decimal_places=2),
    )


# How the booking page words the `operationalStatus` the API shows (orders.presenters).
STATUS_TEXT = {
    OPERATIONAL_SCHEDULE_CHANGED: "SCHEDULE CHANGED by the airline, waiting for the seller",
    OPERATIONAL_AIRLINE_CANCELLED: "CANCELLED by schedule",
}
QUIET_STATUS_TEXT = {
    OPERATIONAL_CANCELLED: "Cancelled",
    OPERATIONAL_EXCHANGED: "Exchanged for other flights",
}
DELIVERIES_SHOWN = 50  # the newest; the deliveries list has them all
CHANGE_DETECTED = "order.airline_initiated_change_detected"  # webhooks.outbox EVENT_TYPES


class BookingPage:
    """What several tables of one booking page read, read once when first shown: the
    segments' and journeys' state as the API shows it, and the webhook deliveries."""

    def __init__(self, order: Order) -> None:
        self.order = order

    @cached_property
    def statuses(self) -> dict[str, str]:
        """operationalStatus by JOU- and SEG- id (orders.presenters, as the order view)."""
        return operational_statuses(order_flight_parts(Order.objects.get(pk=self.order.pk)))

    @cached_property
    def deliveries(self) -> list[Delivery]:
        """The webhook deliveries of its events (registered by the webhooks app)."""
        return order_deliveries(self.order.pk, DELIVERIES_SHOWN)


def status_html(status: str | None) -> str:
    if status in STATUS_TEXT:
        return format_html(WARNING_HTML, STATUS_TEXT[status])
    return QUIET_STATUS_TEXT.get(status, "As scheduled")


def deliveries_url(order: Order, event_type: str | None = None) -> str:
    """The deliveries list, narrowed to this booking's (and to one event type)."""
    url = f"{reverse('admin:webhooks_webhookdelivery_changelist')}?q={order.record_locator}"
    return f"{url}&event_type={event_type}" if event_type else url


def endpoint_url(delivery: Delivery) -> str:
    return reverse("admin:webhooks_webhookendpoint_change", args=[delivery.endpoint_id])


class PassengerInline(ReadOnlyInline):
    model = Passenger
    fields = ["position", "ref", "ptc", "given_name", "surname", "date_of_birth", "infant"]


class ContactInline(ReadOnlyInline):
    model = Contact
    fields = ["ref", "given_name", "surname", "email", "phone"]


class JourneyInline(ReadOnlyInline):
    model = Journey
    fields = [
        "position",
        "ref",
        "origin",
        "destination",
        "departs",
        "arrives",
        # Its state in words (cancelled, exchanged, schedule changed): not the booleans,
        # whose red cross on every live journey read as a fault.
        "flight_status",
    ]
    readonly_fields = ["departs", "arrives", "flight_status"]
    page: BookingPage | None = None  # set per request by OrderAdmin.get_inline_instances

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
        """The provider's webhooks about this payment (orders.provider_events)."""
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


class RefundInline(ReadOnlyInline):
    """Money owed back to the order's cards, and whether the gateway has given it."""

    model = Refund
    fk_name = "payment"
    fields = ["ref", "created_at_utc", "amount", "state", "sent_at_utc", "why"]
    readonly_fields = ["created_at_utc", "sent_at_utc"]
    created_at_utc = staticmethod(utc_column("created_at", "Created"))
    sent_at_utc = staticmethod(utc_column("sent_at", "Sent"))


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
    """Schedule changes the airline made to booked flights (docs/network.md
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
        return _journeys_text(change.removed)

    @admin.display(description="As it flies now")
    def now(self, change: AirlineChange) -> str:
        return _journeys_text(change.added) or "-"


def _journeys_text(journeys: list) -> str:
    """Journeys of the order view shape, a line each: flights with local times."""
    return "; ".join(
        " ".join(
            f"{s['marketingCarrier']}{s['marketingFlightNumber']} {s['origin']}-"
            f"{s['destination']} {s['departureDateTime'].replace('T', ' ')[:16]}"
            for s in journey.get("segments", [])
        )
        for journey in journeys
    )


class OrderEventInline(ReadOnlyInline):
    model = OrderEvent
    verbose_name_plural = "history"
    fields = ["at_utc", "kind", "actor", "detail"]
    readonly_fields = ["at_utc"]
    at_utc = staticmethod(utc_column("at", "At"))


class HoldExpiringFilter(admin.SimpleListFilter):
    """Unpaid holds about to lapse: the bookings a call to the agency may still save."""

    title = "hold expiring"
    parameter_name = "hold_expires"
    WITHIN = {"1h": timedelta(hours=1), "24h": timedelta(hours=24)}

    def lookups(self, request, model_admin):
        return [
            ("1h", "Within an hour"),
            ("24h", "Within 24 hours"),
            ("lapsed", "Lapsed, not yet swept"),
        ]

    def queryset(self, request, queryset):
        now = clock.now()
        holds = queryset.filter(status=OrderStatus.ONHOLD)
        if self.value() in self.WITHIN:
            return holds.filter(
                payment_time_limit__gt=now, payment_time_limit__lte=now + self.WITHIN[self.value()]
            )
        if self.value() == "lapsed":
            return holds.filter(payment_time_limit__lte=now)
        return queryset


class ScheduleChangedFilter(admin.SimpleListFilter):
    """Live bookings with a pending airline change: the agency still has to answer."""

    title = "schedule changed by the airline"
    parameter_name = "schedule_changed"

    def lookups(self, request, model_admin):
        return [("yes", "Waiting for the seller's answer")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            pending = AirlineChange.objects.filter(
                order=OuterRef("pk"), status=AirlineChange.Status.PENDING
            )
            return queryset.filter(Exists(pending), status__in=LIVE)
        return queryset


class DisputedFilter(admin.SimpleListFilter):
    """Bookings with a card payment disputed with the bank, whatever their status: the
    money may go back by the bank's decision, not ours."""

    title = "payment disputed"
    parameter_name = "disputed"

    def lookups(self, request, model_admin):
        return [("yes", "A payment disputed by the cardholder")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(Exists(disputes()))
        return queryset


class RefundedOutsideFilter(admin.SimpleListFilter):
    """Bookings the payment provider gave money back for outside this service (its
    dashboard): the status and tickets stand while the money went."""

    title = "refunded outside this service"
    parameter_name = "refunded_outside"

    def lookups(self, request, model_admin):
        return [("yes", "Money given back at the payment provider")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(Exists(refunds_outside()))
        return queryset


class CancelledFlightFilter(admin.SimpleListFilter):
    title = "flight cancelled by schedule"
    parameter_name = "flight_cancelled"

    def lookups(self, request, model_admin):
        return [("yes", "Booked on a cancelled flight")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(on_cancelled_flight(), status__in=LIVE)
        return queryset


def flight_on_date(number: int | None, day: date | None, carrier: str | None = None) -> Exists:
    """Some segment of the order flies flight `number` (its marketing number, of
    `carrier` when given) on the flight date `day` (the local date of the flight's first
    departure, SSIM's)."""
    legs = Leg.objects.filter(segment__order=OuterRef("pk"))
    if number is not None:
        legs = legs.filter(segment__flight_number=number)
    if carrier is not None:
        legs = legs.filter(segment__carrier=carrier)
    if day is not None:
        legs = legs.filter(flight_leg__flight_date=day)
    return Exists(legs)


TICKET = re.compile(r"^\d{3}-?\d{10}$")
STATION = re.compile(r"^[A-Z]{3}$")  # a word that may be an IATA station code


FEW = 1000  # bookings a search word may name and still be listed by their ids


def word_matches(term: str, flight: QuerySet[Leg] | None = None, using: str = "default") -> Q:
    """What any other search word may be: a locator, an order id, an agency, a status,
    part of a passenger's name, an email (when it has an @), a ticket or EMD number; or,
    given `flight` (the legs of a flight the word may also name), a booking on it. The
    ids are read from database `using`, the list's.

    Most words name a few bookings: their ids are read first, each kind of match through
    its own index (the names' through their trigram indexes), and the list is of those
    ids. Tested row by row, as an OR, every search scanned all the bookings.
    A word that names more (a status, a big agency, "ada") is the OR: the newest page of
    bookings is found early in that scan, and an index would not spare it."""
    upper = term.upper()
    found: list[QuerySet] = [
        Order.objects.filter(Q(record_locator=upper) | Q(order_id=term)).values_list("pk"),
        Order.objects.filter(agency_code=upper).values_list("pk"),
        Passenger.objects.filter(
            Q(surname__icontains=term) | Q(given_name__icontains=term)
        ).values_list("order_id"),
    ]
    if upper in OrderStatus.values:
        found.append(Order.objects.filter(status=upper).values_list("pk"))
    if "@" in term:
        found.append(Contact.objects.filter(email__icontains=term).values_list("order_id"))
    if TICKET.match(term):
        number = term.replace("-", "")
        found.append(Ticket.objects.filter(number=number).values_list("order_id"))
        found.append(Service.objects.filter(emd_number=number).values_list("order_id"))
    if flight is not None:
        found.append(flight.values_list("segment__order_id"))
    if STATION.match(upper):
        found.append(_at_station(upper).values_list("order_id"))
    found = [rows.order_by() for rows in found]
    # UNION ALL streams, so the LIMIT stops it early when the word names many.
    first = list(found[0].union(*found[1:], all=True).using(using)[: FEW + 1])
    if len(first) <= FEW:
        return Q(pk__in={pk for (pk,) in first})
    return word_tested(term, flight)


def word_tested(term: str, flight: QuerySet[Leg] | None) -> Q:
    """word_matches as a test of each booking (the same kinds of match)."""
    upper = term.upper()
    found = Q(record_locator=upper) | Q(order_id=term) | Q(agency_code=upper)
    if upper in OrderStatus.values:
        found |= Q(status=upper)
    found |= Exists(
        Passenger.objects.filter(order=OuterRef("pk")).filter(
            Q(surname__icontains=term) | Q(given_name__icontains=term)
        )
    )
    if "@" in term:
        found |= Exists(Contact.objects.filter(order=OuterRef("pk"), email__icontains=term))
    if TICKET.match(term):
        number = term.replace("-", "")
        found |= Exists(Ticket.objects.filter(order=OuterRef("pk"), number=number))
        found |= Exists(Service.objects.filter(order=OuterRef("pk"), emd_number=number))
    if flight is not None:
        found |= Exists(flight.filter(segment__order=OuterRef("pk")))
    if STATION.match(upper):
        found |= Exists(_at_station(upper).filter(order=OuterRef("pk")))
    return found


def _at_station(code: str) -> QuerySet[Segment]:
    """Segments from or to a station: a booking's every stop, its journeys' ends among
    them (a word such as "PVD" names the bookings that fly there, beside any name)."""
    return Segment.objects.filter(Q(origin=code) | Q(destination=code))


def route_matches(origin: str, destination: str) -> Q:
    """Bookings with a journey or a segment from `origin` to `destination`: "PVD-MSY"
    finds a connection through CLT by its journey, "PVD-CLT" by its first segment."""
    return Exists(
        Segment.objects.filter(order=OuterRef("pk"), origin=origin, destination=destination)
    ) | Exists(Journey.objects.filter(order=OuterRef("pk"), origin=origin, destination=destination))


def flight_legs(number: int, carrier: str | None) -> QuerySet[Leg]:
    """The booked legs of flight `number` (its marketing number, of `carrier` when given)."""
    legs = Leg.objects.filter(segment__flight_number=number)
    return legs if carrier is None else legs.filter(segment__carrier=carrier)


def search_matches(search_term: str, using: str = "default") -> Q:
    """Every word must match (as Django's own search), read by the back office's one
    grammar (airline.backoffice.search_words): a flight with its date ("MX101
    2026-06-01") must be the same segment's; a city pair ("PVD-CHS") a journey's or a
    segment's; a bare station ("PVD") any stop of the booking."""
    found = Q()
    for word in search_words(search_term):
        match word:
            case FlightWord(number=number, carrier=carrier, day=None, text=text):
                # "AB1234" may be a record locator as much as a flight.
                found &= word_matches(text, flight=flight_legs(number, carrier), using=using)
            case FlightWord(number=number, carrier=carrier, day=day):
                found &= flight_on_date(number, day, carrier)
            case DayWord(day=day):
                found &= flight_on_date(None, day)
            case RouteWord(origin=origin, destination=destination):
                found &= route_matches(origin, destination)
            case OtherWord(text=text):
                found &= word_matches(text, using=using)
    return found


@admin.register(Order)
class OrderAdmin(RowCheckbox, StandbyChangelist, admin.ModelAdmin):
    list_display = [
        "record_locator",
        "flagged_status",
        "lead_passenger",
        "route",
        "departure",
        "payment_deadline",
        "seller",
        "agency_code",
        "channel",
        "total",
        "balance",
    ]
    list_filter = [
        "status",
        HoldExpiringFilter,
        CancelledFlightFilter,
        ScheduleChangedFilter,
        DisputedFilter,
        RefundedOutsideFilter,
        "channel",
        "seller",
        ("created_at", admin.DateFieldListFilter),
    ]
    # Answered by get_search_results; listed so that the admin shows its search box.
    search_fields = ["record_locator"]
    search_help_text = (
        "Locator, order id, part of a passenger's given name or surname, email, ticket or "
        "EMD number, flight (MX101, MX 101, 101) and date (MX101 2026-06-01), city pair "
        "(PVD-CHS), agency code or status; every word must match"
    )
    list_select_related = ["seller"]
    # Not a date hierarchy: its links read every booking's month at each page view.
    # Only the page's rows are counted: the full count would be a second scan.
    show_full_result_count = False
    paginator = EstimatedCountPaginator  # the whole table's count, from its statistics
    fields = [
        "record_locator",
        "order_id",
        "owner_code",
        "flagged_status",
        "flight_disruption",
        "seller",
        "agency_code",
        "channel",
        "created",
        "updated",
        "currency",
        "total",
        "paid",
        "voided",
        "retained",
        "credited",
        "balance",
        "payment_deadline",
        "refunds",
        "source_offer_id",
        "remarks",
        "webhook_deliveries",
    ]
    readonly_fields = [
        "flagged_status",
        "flight_disruption",
        "webhook_deliveries",
        "created",
        "updated",
        "balance",
        "payment_deadline",
        "refunds",
    ]
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
        AirlineChangeInline,
        OrderEventInline,
    ]
    actions = ["cancel_unpaid_hold"]

    def get_queryset(self, request):
        first_journey = Journey.objects.filter(order=OuterRef("pk"), is_cancelled=False).order_by(
            "position"
        )
        origin_zone = Station.objects.filter(code=OuterRef("origin")).values("time_zone")[:1]
        return (
            super()
            .get_queryset(request)
            .annotate(
                on_cancelled_flight=on_cancelled_flight(),
                first_departure=Subquery(first_journey.values("departs_at")[:1]),
                departure_zone=Subquery(
                    first_journey.annotate(zone=Subquery(origin_zone)).values("zone")[:1]
                ),
                dispute=Subquery(disputes().order_by("id").values("dispute")[:1]),
                given_back_outside=refunded_outside_total(),
            )
            .prefetch_related(
                Prefetch(
                    "journeys",
                    queryset=Journey.objects.filter(is_cancelled=False).only(
                        "order_id", "ref", "position", "origin", "destination"
                    ),
                    to_attr="live_journeys",
                ),
                Prefetch(
                    "airline_changes",
                    # Which journeys it covers, not what they were and became.
                    queryset=AirlineChange.objects.filter(status=AirlineChange.Status.PENDING).only(
                        "order_id", "status", "journey_refs"
                    ),
                    to_attr="pending_changes",
                ),
            )
        )

    def get_search_results(self, request, queryset, search_term):
        if not search_term.strip():
            return queryset, False
        # An order matched twice is still listed once. The ids a word names are read
        # from the database the list is (the standby, when standby reads are on).
        return queryset.filter(search_matches(search_term, using=queryset.db)), False

    @admin.display(description="Status", ordering="status")
    def flagged_status(self, order: Order) -> str:
        flags = self.flight_flags(order) + self.money_flags(order)
        if not flags:
            return order.status
        return format_html(WARNING_HTML, f"{order.status}, {'; '.join(flags)}")

    def flight_flags(self, order: Order) -> list[str]:
        """What keeps a live booking's passengers from flying as booked."""
        if order.status not in LIVE:
            return []
        if order.on_cancelled_flight:
            return ["flight cancelled by schedule"]
        # SCHEDULE_CHANGED as the order view says it: a live journey a pending change covers.
        changed = pending_change_journeys(getattr(order, "pending_changes", []))
        if any(j.ref in changed for j in getattr(order, "live_journeys", [])):
            return ["schedule changed by the airline"]
        return []

    def money_flags(self, order: Order) -> list[str]:
        """Money that moved, or may, outside this service, whatever the booking's status:
        its totals and balance do not tell it. Annotated by get_queryset."""
        flags = []
        if order.dispute:
            flags.append(f"payment disputed: {order.dispute}")
        if order.given_back_outside:
            flags.append(f"{order.given_back_outside} refunded outside")
        return flags

    def get_object(self, request, object_id, from_field=None):
        order = super().get_object(request, object_id, from_field)
        if order is not None:
            order.page = BookingPage(order)
        return order

    def get_inline_instances(self, request, obj=None):
        inlines = super().get_inline_instances(request, obj)
        if obj is not None:
            # A booking's parts it has none of (no payments on a hold, no tickets) are left
            # out, not shown as empty tables: the page is read far more than anything else.
            inlines = inlines_with_rows(inlines, obj)
        for inline in inlines:
            if hasattr(inline, "page"):
                inline.page = getattr(obj, "page", None)
        return inlines

    @admin.display(description="Webhook deliveries (was the seller told?)")
    def webhook_deliveries(self, order: Order) -> str:
        page = getattr(order, "page", None) or BookingPage(order)
        if not page.deliveries:
            return "None: no webhook endpoint of the seller wanted its events"
        rows = format_html_join(
            "",
            '<tr><td><a href="{}">{}</a> ({})</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>'
            "<td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    endpoint_url(d),
                    d.endpoint,
                    d.webhook_id,
                    d.event_type,
                    d.answer,
                    d.status,
                    d.attempts,
                    d.last_status_code or "-",
                    utc_time(d.last_attempt_at),
                    utc_time(d.event_created_at),
                )
                for d in page.deliveries
            ),
        )
        return format_html(
            '<table id="deliveries"><thead><tr><th>Seller and URL</th><th>Event</th>'
            "<th>Told?</th><th>Status</th><th>Attempts</th><th>Last code</th>"
            "<th>Last attempt</th><th>Event at</th></tr></thead><tbody>{}</tbody></table>"
            '<a href="{}">{}</a>',
            rows,
            deliveries_url(order),
            "All of this booking's deliveries, to resend or retry",
        )

    @admin.display(description="Lead passenger", ordering="lead_surname")
    def lead_passenger(self, order: Order) -> str:
        return f"{order.lead_surname}/{order.lead_given_name}" if order.lead_surname else "-"

    @admin.display(description="Route")
    def route(self, order: Order) -> str:
        legs: list[list[str]] = []  # PVD-CHS-PVD for a round trip, PVD-CHS / ORF-TPA if open
        for journey in order.live_journeys:
            if legs and legs[-1][-1] == journey.origin:
                legs[-1].append(journey.destination)
            else:
                legs.append([journey.origin, journey.destination])
        return " / ".join("-".join(stops) for stops in legs) or "-"

    @admin.display(description="Departure (local time)", ordering="first_departure")
    def departure(self, order: Order) -> str:
        return local_time(order.first_departure, order.departure_zone or "UTC")

    @admin.display(description="Payment deadline (UTC)", ordering="payment_time_limit")
    def payment_deadline(self, order: Order) -> str:
        return utc_time(order.payment_time_limit) if order.status == OrderStatus.ONHOLD else "-"

    @admin.display(description="Created (UTC)")
    def created(self, order: Order) -> str:
        return utc_time(order.created_at)

    @admin.display(description="Updated (UTC)")
    def updated(self, order: Order) -> str:
        return utc_time(order.updated_at)

    @admin.display(description="Balance due")
    def balance(self, order: Order):
        return order.balance_due

    @admin.display(description="Flights cancelled by schedule")
    def flight_disruption(self, order: Order) -> str:
        legs = (
            Leg.objects.filter(
                segment__order=order, segment__holds_inventory=True, flight_leg__is_cancelled=True
            )
            .select_related("flight_leg")
            .order_by("flight_leg__departs_at")
        )
        if not legs:
            return "None"
        return format_html(
            "{}<br>{}",
            format_html(WARNING_HTML, "The passengers hold seats on cancelled flights:"),
            format_html_join(", ", "{}", ((str(leg.flight_leg),) for leg in legs)),
        )

    @admin.display(description="Refunds")
    def refunds(self, order: Order) -> str:
        rows = Refund.objects.filter(payment__order=order).order_by("id")
        if not rows:
            return "None"
        return format_html_join(
            "",
            "<div>{} {} {} {} (created {}, sent {}){}</div>",
            (
                (
                    r.ref,
                    r.amount,
                    r.state,
                    r.why,
                    utc_time(r.created_at),
                    utc_time(r.sent_at),
                    f": {r.note}" if r.note else "",
                )
                for r in rows
            ),
        )

    def has_add_permission(self, request) -> bool:
        return False  # orders are booked through the API or imported (import_bookings)

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # read-only: every change to a booking is a service with its rules

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # bookings are cancelled, never deleted: they are the sales record

    def has_cancel_hold_permission(self, request: HttpRequest) -> bool:
        # Looking is for every staff member with view rights; cancelling needs its own
        # permission (the Operations role has it).
        return request.user.has_perm("orders.cancel_hold")

    @admin.action(description="Cancel unpaid hold", permissions=["cancel_hold"])
    def cancel_unpaid_hold(self, request: HttpRequest, queryset: QuerySet[Order]) -> None:
        actor = f"admin:{request.user.get_username()}"
        selected = list(queryset.order_by("pk"))
        cancelled = [order for order in selected if order_cancel_hold(order=order, actor=actor)]
        log_action(request, cancelled, "Cancelled unpaid hold; its seats are free.")
        skipped = ", ".join(o.record_locator for o in selected if o not in cancelled)
        if not cancelled:
            self.message_user(
                request,
                f"Nothing was cancelled: {skipped} not an unpaid hold (paid, cancelled or "
                "lapsed already).",
                messages.WARNING,
            )
            return
        locators = ", ".join(o.record_locator for o in cancelled)
        self.message_user(
            request,
            f"{len(cancelled)} unpaid hold(s) cancelled ({locators}); their seats are free.",
            messages.SUCCESS,
        )
        if skipped:
            self.message_user(
                request,
                f"{len(selected) - len(cancelled)} selected booking(s) were not unpaid holds "
                f"and were left as they were: {skipped}.",
                messages.WARNING,
            )


@admin.register(AirlineCredit)
class AirlineCreditAdmin(StandbyChangelist, admin.ModelAdmin):
    """Airline credit, read-only: issued by cancellations and cheaper exchanges, spent by
    later orders of the same seller (orders.credits)."""

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
    """Refunds to cards, read-only: PENDING ones are sent by the worker (orders.refunds)."""

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
