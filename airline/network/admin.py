"""Back office for stations, fleet, booking classes, the schedule and inventory.

Fleet and booking classes are edited here; the schedule comes only from SSIM files
(`load_schedule`), so schedule and inventory screens are read-only. Times are shown in
the station's own zone and say which (README "Back office")."""

import re

from django import forms
from django.contrib import admin
from django.db.models import (
    ExpressionWrapper,
    F,
    FloatField,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce, NullIf
from django.utils.html import format_html

from airline.api import clock
from airline.backoffice import local_time, utc_time
from airline.network.models import (
    AircraftType,
    BookingClass,
    CabinLayout,
    FlightLeg,
    LegInventory,
    ScheduledLeg,
    ScheduleLoad,
    SeatConfiguration,
    Station,
)

# The flight-date pages read the bookings on each leg: a view of orders from the network
# side, so the import goes up a layer here and only here.
from orders.models import Leg, OrderStatus, Service


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Station)
class StationAdmin(ReadOnlyAdmin):
    list_display = ["code", "name", "city", "country", "time_zone"]
    search_fields = ["code", "name", "city"]


class CabinLayoutInline(admin.TabularInline):
    model = CabinLayout
    extra = 0


SEAT = re.compile(r"^(\d{1,3})([A-Z])$")


class SeatConfigurationForm(forms.ModelForm):
    class Meta:
        model = SeatConfiguration
        fields = ["aircraft_type", "code", "name", "blocked_seats"]

    def clean_blocked_seats(self):
        """Refuse to block a seat a passenger holds on a flight still to fly: the seat
        map would hide a seat that is sold, and nobody would tell the passenger."""
        blocked = self.cleaned_data["blocked_seats"] or []
        if not isinstance(blocked, list) or not all(
            isinstance(seat, str) and SEAT.match(seat.upper()) for seat in blocked
        ):
            raise forms.ValidationError('A list of seats, e.g. ["12A", "12F"].')
        blocked = [seat.upper() for seat in blocked]
        already = {seat.upper() for seat in (self.initial.get("blocked_seats") or [])}
        newly = [SEAT.match(seat).groups() for seat in blocked if seat not in already]
        if not newly or self.instance.pk is None:
            return blocked
        taken = (
            Service.objects.filter(
                status=Service.Status.ACTIVE,
                flight_leg__configuration=self.instance,
                flight_leg__departs_at__gt=clock.now(),
            )
            .filter(
                Q.create(
                    [Q(seat_row=int(row), seat_column=column) for row, column in newly],
                    connector=Q.OR,
                )
            )
            .select_related("order", "flight_leg")
            .order_by("flight_leg__departs_at", "seat_row", "seat_column")
        )
        holders = [
            f"{s.seat_row}{s.seat_column} on {s.flight_leg} (booking {s.order.record_locator})"
            for s in taken[:20]
        ]
        if holders:
            raise forms.ValidationError(
                "A passenger holds a seat you are blocking; move them first: " + "; ".join(holders)
            )
        return blocked


@admin.register(SeatConfiguration)
class SeatConfigurationAdmin(admin.ModelAdmin):
    form = SeatConfigurationForm
    list_display = ["aircraft_type", "code", "name"]
    list_filter = ["aircraft_type"]
    inlines = [CabinLayoutInline]


class SeatConfigurationInline(admin.TabularInline):
    model = SeatConfiguration
    extra = 0
    show_change_link = True


@admin.register(AircraftType)
class AircraftTypeAdmin(admin.ModelAdmin):
    list_display = ["iata_code", "carrier_code", "name"]
    inlines = [SeatConfigurationInline]


@admin.register(BookingClass)
class BookingClassAdmin(admin.ModelAdmin):
    list_display = ["cabin", "rank", "rbd", "authorized_percent"]
    list_editable = ["authorized_percent"]
    list_display_links = ["rbd"]


def flight_list(flights: list[str]) -> str:
    return format_html("<br>".join(["{}"] * len(flights)), *flights) if flights else "None"


@admin.register(ScheduleLoad)
class ScheduleLoadAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "carrier",
        "file_name",
        "loaded",
        "legs_created",
        "legs_updated",
        "legs_removed",
        "legs_kept_with_sales",
    ]
    fields = [
        "carrier",
        "file_name",
        "sha256",
        "loaded",
        "legs_created",
        "legs_updated",
        "legs_removed",
        "removed",
        "legs_kept_with_sales",
        "kept_with_sales",
    ]
    readonly_fields = ["loaded", "removed", "kept_with_sales"]

    @admin.display(description="Loaded (UTC)", ordering="loaded_at")
    def loaded(self, load: ScheduleLoad) -> str:
        return utc_time(load.loaded_at)

    @admin.display(description="Flight-date legs removed (no sales)")
    def removed(self, load: ScheduleLoad) -> str:
        return flight_list(load.flights_removed)

    @admin.display(description="Kept, cancelled, because they have sales")
    def kept_with_sales(self, load: ScheduleLoad) -> str:
        return flight_list(load.flights_kept_with_sales)


@admin.register(ScheduledLeg)
class ScheduledLegAdmin(ReadOnlyAdmin):
    list_display = [
        "carrier",
        "flight_number",
        "leg_sequence",
        "origin",
        "destination",
        "period_start",
        "period_end",
        "days_of_operation",
        "departs",
        "arrives",
        "aircraft_type",
    ]
    list_filter = ["carrier", "aircraft_type"]
    list_select_related = ["origin", "destination", "aircraft_type"]
    search_fields = ["flight_number", "origin__code", "destination__code"]

    @admin.display(description="Departs (local to origin)", ordering="departure_time")
    def departs(self, leg: ScheduledLeg) -> str:
        return f"{leg.departure_time:%H:%M} local {leg.origin_id}"

    @admin.display(description="Arrives (local to destination)", ordering="arrival_time")
    def arrives(self, leg: ScheduledLeg) -> str:
        return f"{leg.arrival_time:%H:%M} local {leg.destination_id}"


class LegInventoryInline(admin.TabularInline):
    model = LegInventory
    extra = 0
    fields = ["cabin", "rank", "rbd", "authorized", "sold"]
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


def per_leg_sum(rows: QuerySet, leg_field: str, column: str) -> Coalesce:
    """A per-leg sum as a correlated subquery: the whole page in one query, however many
    legs and stations it shows."""
    summed = (
        rows.filter(**{leg_field: OuterRef("pk")})
        .order_by()
        .values(leg_field)
        .annotate(n=Sum(column))
        .values("n")
    )
    return Coalesce(Subquery(summed, output_field=IntegerField()), Value(0))


def booked_seats(status: str) -> Coalesce:
    """Seats that bookings of `status` still take on the leg."""
    booked = Leg.objects.filter(segment__holds_inventory=True, segment__order__status=status)
    return per_leg_sum(booked, "flight_leg", "segment__seats")


@admin.register(FlightLeg)
class FlightLegAdmin(ReadOnlyAdmin):
    """Flight-date legs with their load: capacity and seats sold (rank-0 inventory, which
    every sale counts against), and of the sold seats those on unpaid holds and those
    ticketed; the rest are bookings mid-payment or imported."""

    list_display = [
        "flight",
        "flight_date",
        "leg_sequence",
        "origin",
        "destination",
        "departs",
        "arrives",
        "aircraft_type",
        "capacity",
        "sold",
        "held",
        "ticketed",
        "load_factor",
        "status",
    ]
    list_filter = ["is_cancelled", "carrier", "origin"]
    search_fields = ["flight_number"]
    date_hierarchy = "flight_date"
    list_select_related = ["aircraft_type", "origin", "destination"]
    fields = [
        "carrier",
        "flight_number",
        "flight_date",
        "leg_sequence",
        "origin",
        "destination",
        "departs",
        "arrives",
        "aircraft_type",
        "configuration",
        "service_type",
        "govt_approval_disclosure",
        "status",
        "capacity",
        "sold",
        "held",
        "ticketed",
        "load_factor",
    ]
    readonly_fields = [
        "departs",
        "arrives",
        "status",
        "capacity",
        "sold",
        "held",
        "ticketed",
        "load_factor",
    ]
    inlines = [LegInventoryInline]

    def get_queryset(self, request):
        cabins = LegInventory.objects.filter(rank=0)
        return (
            super()
            .get_queryset(request)
            .annotate(
                seats=per_leg_sum(cabins, "leg", "authorized"),
                seats_sold=per_leg_sum(cabins, "leg", "sold"),
                seats_held=booked_seats(OrderStatus.ONHOLD),
                seats_ticketed=booked_seats(OrderStatus.CONFIRMED),
            )
            .annotate(
                load=ExpressionWrapper(
                    F("seats_sold") * 100.0 / NullIf(F("seats"), 0), output_field=FloatField()
                )
            )
        )

    @admin.display(description="Flight", ordering="flight_number")
    def flight(self, leg: FlightLeg) -> str:
        return f"{leg.carrier}{leg.flight_number}"

    @admin.display(description="Departs (local time)", ordering="departs_at")
    def departs(self, leg: FlightLeg) -> str:
        return local_time(leg.departs_at, leg.origin.time_zone)

    @admin.display(description="Arrives (local time)", ordering="arrives_at")
    def arrives(self, leg: FlightLeg) -> str:
        return local_time(leg.arrives_at, leg.destination.time_zone)

    @admin.display(description="Capacity", ordering="seats")
    def capacity(self, leg: FlightLeg) -> int:
        return leg.seats

    @admin.display(description="Sold", ordering="seats_sold")
    def sold(self, leg: FlightLeg) -> int:
        return leg.seats_sold

    @admin.display(description="On hold", ordering="seats_held")
    def held(self, leg: FlightLeg) -> int:
        return leg.seats_held

    @admin.display(description="Ticketed", ordering="seats_ticketed")
    def ticketed(self, leg: FlightLeg) -> int:
        return leg.seats_ticketed

    @admin.display(description="Load factor", ordering="load")
    def load_factor(self, leg: FlightLeg) -> str:
        return "-" if leg.load is None else f"{leg.load:.0f}%"

    @admin.display(description="Status", ordering="is_cancelled")
    def status(self, leg: FlightLeg) -> str:
        if leg.is_cancelled:
            return format_html(
                '<strong style="color: var(--error-fg)">&#9888; {}</strong>',
                "CANCELLED by schedule, has bookings",
            )
        return "Scheduled"
