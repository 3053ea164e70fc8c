"""The bookings list and the booking page (OrderAdmin): read-only, flagged where a
booking's passengers cannot fly as booked or its money moved outside this service; the
one write is the action "Cancel unpaid hold", through the service the API uses (STYLE.md
11)."""

from functools import cached_property

from django.contrib import admin, messages
from django.db.models import (
    OuterRef,
    Prefetch,
    QuerySet,
    Subquery,
)
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join

from airline.backoffice import (
    StandbyChangelist,
    inlines_with_rows,
    local_time,
    log_action,
    utc_time,
)
from airline.backoffice_lists import (
    ROWS_LIST_TEMPLATE,
    EstimatedCountPaginator,
    OnePassChangeList,
    RowCheckbox,
)
from airline.network.models import Station
from orders.admin.booking_page import BookingPage, deliveries_url, endpoint_url
from orders.admin.filters import (
    CancelledFlightFilter,
    DisputedFilter,
    HoldExpiringFilter,
    RefundedOutsideFilter,
    ScheduleChangedFilter,
)
from orders.admin.flags import (
    LIVE,
    WARNING_HTML,
    disputes,
    on_cancelled_flight,
    refunded_outside_total,
)
from orders.admin.inlines import (
    AirlineChangeInline,
    ContactInline,
    CreditInline,
    JourneyInline,
    OrderEventInline,
    OrderItemInline,
    PassengerInline,
    PaymentInline,
    SegmentInline,
    ServiceInline,
    TicketInline,
)
from orders.admin.search import search_matches
from orders.booking.holds import order_cancel_hold
from orders.models import (
    AirlineChange,
    Journey,
    Leg,
    Order,
    OrderStatus,
    Refund,
)
from orders.reading.presenters import (
    pending_change_journeys,
)


def retimed_departure(order: Order) -> str | None:
    """When the booking's first live journey leaves now, as a change waiting for the
    seller says (station-local, ISO), or None when no such change covers it."""
    journeys = getattr(order, "live_journeys", [])
    if not journeys:
        return None
    for change in getattr(order, "pending_changes", []):
        for journey in change.added:
            if journey.get("journeyId") == journeys[0].ref:
                return journey.get("departureDateTime")
    return None


# Bookings a searched or filtered list counts: past them it says "more than" this many.
COUNTED_UP_TO = 500


class CountedUpToPaginator(EstimatedCountPaginator):
    """The bookings list's paginator: a searched or filtered list is counted up to
    COUNTED_UP_TO bookings (`capped` when more match), so that counting stops there
    however many bookings the table holds: counting every booking a common surname
    names would be a second scan of the table beside the page's. Ten pages of matches
    are as far as staff page before they narrow the search."""

    capped = False

    @cached_property
    def count(self) -> int:
        query = getattr(self.object_list, "query", None)
        if query is None or not query.where:
            return super().count
        counted = self.object_list.values("pk")[: COUNTED_UP_TO + 1].count()
        self.capped = counted > COUNTED_UP_TO
        return min(counted, COUNTED_UP_TO)


class BookingsChangeList(OnePassChangeList):
    """The bookings list's ChangeList: `result_count_capped` when there are more results
    than it counted (the templates admin/orders/order/pagination.html and
    search_form.html say "more than")."""

    result_count_capped = False

    def get_results(self, request) -> None:
        super().get_results(request)
        self.result_count_capped = getattr(self.paginator, "capped", False)


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
    # The whole table's count from its statistics; a searched or filtered list's up to
    # COUNTED_UP_TO.
    paginator = CountedUpToPaginator
    # A page a screen or two long: staff search and filter here rather than scroll, and
    # each row costs as much to write as a query (docs/benchmarks/figures/admin.md).
    list_per_page = 50
    change_list_template = ROWS_LIST_TEMPLATE  # its rows written in one pass (get_changelist)
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
            .select_related("seller")  # the page's seller field, the list's column
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
                    # Which journeys it covers and how they fly now (the departure column's
                    # new time), not what they were.
                    queryset=AirlineChange.objects.filter(status=AirlineChange.Status.PENDING).only(
                        "order_id", "status", "journey_refs", "added"
                    ),
                    to_attr="pending_changes",
                ),
            )
        )

    def get_changelist(self, request, **kwargs):
        return BookingsChangeList

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
        """The first journey's departure as booked; for a flight the airline retimed (a
        change waiting for the seller), as booked and as it flies now: `2026-06-01 07:00
        → 07:45 EDT` (the new date too when it moved to another day)."""
        booked = local_time(order.first_departure, order.departure_zone or "UTC")
        now = retimed_departure(order)
        if now is None or order.first_departure is None:
            return booked
        day, at, zone = booked.split(" ", 2)
        new_day, new_at = now.replace("T", " ")[:16].split(" ")
        if (new_day, new_at) == (day, at):
            return booked
        return f"{day} {at} → {new_at if new_day == day else f'{new_day} {new_at}'} {zone}"

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
        if not order.on_cancelled_flight:  # annotated by get_queryset: no query to say so
            return "None"
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
