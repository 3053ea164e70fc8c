"""Back office for stations, fleet, booking classes, the schedule and inventory.

Fleet and booking classes are edited here; the schedule comes only from SSIM files
(`load_schedule`), so schedule and inventory screens are read-only."""

from django.contrib import admin

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


@admin.register(SeatConfiguration)
class SeatConfigurationAdmin(admin.ModelAdmin):
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


@admin.register(ScheduleLoad)
class ScheduleLoadAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "carrier",
        "file_name",
        "loaded_at",
        "legs_created",
        "legs_updated",
        "legs_removed",
        "legs_kept_with_sales",
    ]


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
        "departure_time",
        "arrival_time",
        "aircraft_type",
    ]
    list_filter = ["carrier", "aircraft_type"]
    search_fields = ["flight_number", "origin__code", "destination__code"]


class LegInventoryInline(admin.TabularInline):
    model = LegInventory
    extra = 0
    fields = ["cabin", "rank", "rbd", "authorized", "sold"]
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(FlightLeg)
class FlightLegAdmin(ReadOnlyAdmin):
    list_display = [
        "carrier",
        "flight_number",
        "flight_date",
        "leg_sequence",
        "origin",
        "destination",
        "departs_at",
        "arrives_at",
        "aircraft_type",
        "is_cancelled",
    ]
    list_filter = ["is_cancelled", "carrier", "origin"]
    search_fields = ["flight_number"]
    date_hierarchy = "flight_date"
    list_select_related = ["aircraft_type"]
    inlines = [LegInventoryInline]
