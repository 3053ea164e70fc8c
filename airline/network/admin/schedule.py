"""Back office for stations, fleet, booking classes, the schedule and inventory.

Fleet and booking classes are edited here; the schedule comes only from SSIM files
(`load_schedule`, or an upload here that previews its changes first), so schedule and
inventory screens are read-only. Times are shown in the station's own zone and say which
(docs/operations.md "Back office")."""

import functools
import hashlib
import re

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.db.models import (
    ExpressionWrapper,
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
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from airline.api import clock
from airline.backoffice import (
    ROWS_LIST_TEMPLATE,
    DayWord,
    EstimatedCountPaginator,
    FlightWord,
    OnePassRows,
    OtherWord,
    RouteWord,
    StandbyChangelist,
    local_time,
    search_words,
    utc_time,
)
from airline.network import fleet
from airline.network.configurations import ConfigurationBusy, cabin_spec, configuration_edit
from airline.network.flight_page import flight_page
from airline.network.follow_up import follow_up_progress
from airline.network.jobs import schedule_job_queue
from airline.network.models import (
    AircraftType,
    BookingClass,
    CabinLayout,
    FlightLeg,
    LegInventory,
    ScheduledLeg,
    ScheduleJob,
    ScheduleLoad,
    SeatConfiguration,
    Station,
)
from airline.network.preview import schedule_preview
from airline.network.readers import BookedState, booked_seat_rows
from airline.network.services import ScheduleError, known_station, load_summary, schedule_load
from airline.network.ssim import SsimFileError, parse_ssim


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
        """A list of seat designators, upper case. A seat a passenger holds may be
        blocked: the save gives that booking an airline change (configuration_edit)."""
        blocked = self.cleaned_data["blocked_seats"] or []
        if not isinstance(blocked, list) or not all(
            isinstance(seat, str) and SEAT.match(seat.upper()) for seat in blocked
        ):
            raise forms.ValidationError('A list of seats, e.g. ["12A", "12F"].')
        return list(dict.fromkeys(seat.upper() for seat in blocked))


@admin.register(SeatConfiguration)
class SeatConfigurationAdmin(admin.ModelAdmin):
    """A change (blocked seats, cabins) is saved by `configuration_edit`, under the
    configuration's lock, with the bookings it takes seats from told
    (docs/operations.md "Back office"); a new configuration has no bookings and is saved
    as usual."""

    form = SeatConfigurationForm
    list_display = ["aircraft_type", "code", "name"]
    list_filter = ["aircraft_type"]
    inlines = [CabinLayoutInline]

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except ConfigurationBusy as exc:
            # Raised inside the admin's transaction, which rolled back whole.
            self.message_user(request, f"Not saved, nothing changed: {exc}", messages.ERROR)
            return redirect(request.get_full_path())

    def save_model(self, request, obj, form, change):
        if not change:
            super().save_model(request, obj, form, change)
        # A change is saved with its cabins, in save_related: one service call for both.

    def save_related(self, request, form, formsets, change):
        if not change:
            super().save_related(request, form, formsets, change)
            return
        configuration = form.instance

        def write() -> None:
            configuration.save(update_fields=["aircraft_type", "code", "name", "blocked_seats"])
            super(SeatConfigurationAdmin, self).save_related(request, form, formsets, change)

        edited = configuration_edit(
            configuration_id=configuration.pk,
            blocked_seats=configuration.blocked_seats,
            cabins=_cabins_after(formsets),
            write=write,
            now=clock.now(),
        )
        if edited.orders_changed:
            self.message_user(
                request,
                f"{edited.orders_changed} booking(s) held seats or a cabin this edit takes "
                "away: each has an airline change (EQUIPMENT) and its seller a webhook.",
                messages.WARNING,
            )


def _cabins_after(formsets) -> list[fleet.CabinSpec]:
    """The cabins a configuration will have once its inline forms are saved: every
    layout form not deleted and not an empty extra one, with its edited values (the
    forms' instances hold them once validated)."""
    cabins = []
    for formset in formsets:
        if formset.model is not CabinLayout:
            continue
        deleted = set(map(id, formset.deleted_forms))
        for form in formset.forms:
            if id(form) in deleted or (form.instance.pk is None and not form.has_changed()):
                continue
            layout = form.instance
            cabins.append(
                cabin_spec(
                    cabin=layout.cabin,
                    name=layout.name,
                    first_row=layout.first_row,
                    last_row=layout.last_row,
                    seat_letters=layout.seat_letters,
                    skipped_rows=layout.skipped_rows,
                    exit_rows=layout.exit_rows,
                    extra_legroom_rows=layout.extra_legroom_rows,
                )
            )
    return cabins


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


UPLOAD_KEPT_SECONDS = 3600  # between an upload's preview and its confirmation
PREVIEW_ROWS = 200  # flights listed per kind of change; the rest are counted


class ScheduleUploadForm(forms.Form):
    file = forms.FileField(
        label="SSIM file", help_text="IATA SSIM Chapter 7, as `manage.py load_schedule` reads"
    )


def _upload_key(sha256: str) -> str:
    return f"schedule-upload:{sha256}"


def _schedule_version() -> int:
    """The newest load's id: the stored schedule's version (network/models.py)."""
    return ScheduleLoad.objects.values_list("pk", flat=True).first() or 0


def _loads_in_background(schedule, sha256: str) -> bool:
    """Whether a file writes more flight-date legs than a request should
    (SCHEDULE_INLINE_LEGS), on a database where the worker can show its progress."""
    if connection.vendor == "sqlite":
        return False  # one writer at a time: no progress to show, and nobody else to wait
    preview = schedule_preview(schedule=schedule, sha256=sha256)
    touched = (preview.added, preview.retimed, preview.changed, preview.cancelled, preview.removed)
    return sum(len(legs) for legs in touched) > settings.SCHEDULE_INLINE_LEGS


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
        "bookings_told",
    ]
    list_select_related = ["follow_up"]
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
        "bookings_progress",
    ]
    readonly_fields = ["loaded", "removed", "kept_with_sales", "bookings_progress"]
    change_list_template = "admin/network/scheduleload/change_list.html"

    def get_urls(self):
        upload = self.admin_site.admin_view(self.upload_view)
        return [
            path("upload/", upload, name="network_scheduleload_upload"),
            *super().get_urls(),
        ]

    def has_upload_permission(self, request: HttpRequest) -> bool:
        # Loading a schedule makes a ScheduleLoad: the model's own "add" permission.
        return request.user.has_perm("network.add_scheduleload")

    def changelist_view(self, request, extra_context=None):
        extra_context = {**(extra_context or {}), "can_upload": self.has_upload_permission(request)}
        return super().changelist_view(request, extra_context)

    def upload_view(self, request: HttpRequest) -> HttpResponse:
        """Upload an SSIM file, see what it would change, then confirm: the file waits in
        the cache between the two (not in a form field: schedules run to megabytes), and
        is applied by the same service as `manage.py load_schedule`."""
        if not self.has_upload_permission(request):
            raise PermissionDenied
        if request.method == "POST" and "confirm" in request.POST:
            return self._confirm_upload(request)
        form = ScheduleUploadForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            upload = form.cleaned_data["file"]
            text = upload.read().decode("latin-1")  # as schedule_load_file reads a file
            try:
                schedule = parse_ssim(text, known_station=known_station)
            except SsimFileError as exc:
                form.add_error("file", [str(error) for error in exc.errors[:50]])
            else:
                sha256 = hashlib.sha256(text.encode("latin-1")).hexdigest()
                cache.set(
                    _upload_key(sha256), {"name": upload.name, "text": text}, UPLOAD_KEPT_SECONDS
                )
                return self._preview_page(request, schedule, sha256, upload.name)
        return TemplateResponse(
            request,
            "admin/network/scheduleload/upload.html",
            {**self._page_context(request, "Upload a schedule"), "form": form},
        )

    def _confirm_upload(self, request: HttpRequest) -> HttpResponse:
        sha256 = request.POST.get("sha256", "")
        kept = cache.get(_upload_key(sha256)) if re.fullmatch(r"[0-9a-f]{64}", sha256) else None
        if kept is None:
            self.message_user(
                request, "That preview has expired; upload the file again.", messages.ERROR
            )
            return redirect("admin:network_scheduleload_upload")
        schedule = parse_ssim(kept["text"], known_station=known_station)
        if request.POST.get("version") != str(_schedule_version()):
            # Another load landed since the preview: what it showed is no longer what
            # this file would do. Show it again rather than apply it unseen.
            self.message_user(
                request,
                "The schedule changed since this preview; check the changes again.",
                messages.WARNING,
            )
            return self._preview_page(request, schedule, sha256, kept["name"])
        if _loads_in_background(schedule, sha256):
            job = schedule_job_queue(
                text=kept["text"],
                file_name=kept["name"],
                sha256=sha256,
                queued_by=request.user,
                now=clock.now(),
            )
            cache.delete(_upload_key(sha256))
            self.log_addition(request, job, f"Queued {kept['name']} for the worker to load.")
            self.message_user(
                request,
                f"{kept['name']} changes many flights: the worker is loading it. "
                "This page shows how far it has got.",
                messages.SUCCESS,
            )
            return redirect("admin:network_schedulejob_change", job.pk)
        try:
            result = schedule_load(
                schedule=schedule, file_name=kept["name"], sha256=sha256, now=clock.now()
            )
        except ScheduleError as exc:
            self.message_user(request, f"Not loaded, nothing changed: {exc}", messages.ERROR)
            return redirect("admin:network_scheduleload_upload")
        cache.delete(_upload_key(sha256))
        if result.load is None:
            self.message_user(
                request, f"{kept['name']} is the schedule loaded last; nothing changed."
            )
            return redirect("admin:network_scheduleload_changelist")
        summary = load_summary(kept["name"], result)
        self.log_addition(request, result.load, summary)
        self.message_user(request, summary, messages.SUCCESS)
        return redirect("admin:network_scheduleload_change", result.load.pk)

    def _preview_page(self, request, schedule, sha256: str, name: str) -> TemplateResponse:
        preview = schedule_preview(schedule=schedule, sha256=sha256)
        return TemplateResponse(
            request,
            "admin/network/scheduleload/preview.html",
            {
                **self._page_context(request, f"What loading {name} would change"),
                "preview": preview,
                "file_name": name,
                "sha256": sha256,
                "version": _schedule_version(),
                "shown": PREVIEW_ROWS,
                "first": f":{PREVIEW_ROWS}",
                "sections": [
                    ("added", "Flights added", preview.added),
                    ("retimed", "Flights retimed", preview.retimed),
                    ("changed", "Flights otherwise changed", preview.changed),
                    (
                        "cancelled",
                        "Flights cancelled, kept for their bookings",
                        preview.cancelled,
                    ),
                    ("removed", "Flights removed (nothing sold)", preview.removed),
                ],
            },
        )

    def _page_context(self, request, title: str) -> dict:
        return {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": title,
            "changelist_url": reverse("admin:network_scheduleload_changelist"),
        }

    @admin.display(description="Loaded (UTC)", ordering="loaded_at")
    def loaded(self, load: ScheduleLoad) -> str:
        return utc_time(load.loaded_at)

    @admin.display(description="Flight-date legs removed (no sales)")
    def removed(self, load: ScheduleLoad) -> str:
        return flight_list(load.flights_removed)

    @admin.display(description="Kept, cancelled, because they have sales")
    def kept_with_sales(self, load: ScheduleLoad) -> str:
        return flight_list(load.flights_kept_with_sales)

    @admin.display(description="Bookings told")
    def bookings_told(self, load: ScheduleLoad) -> str:
        follow_up = getattr(load, "follow_up", None)
        if follow_up is None:
            return "none to tell"
        state = "" if follow_up.finished_at else " (telling)"
        return f"{follow_up.done} of {follow_up.total}{state}"

    @admin.display(description="Bookings on the changed flights")
    def bookings_progress(self, load: ScheduleLoad) -> str:
        """The follow-up's progress (airline/network/follow_up.py); the worker tells the
        bookings after the load commits."""
        follow_up = getattr(load, "follow_up", None)
        if follow_up is None:
            return "None: no flight with bookings changed"
        return follow_up_progress(follow_up)


@admin.register(ScheduleJob)
class ScheduleJobAdmin(ReadOnlyAdmin):
    """Schedule files the worker loads (airline/network/jobs.py): their progress while
    queued or loading, then what the load did. Seen by whoever may upload a schedule."""

    list_display = ["id", "file_name", "status", "progress", "queued_by", "queued", "finished"]
    list_filter = ["status"]
    fields = [
        "file_name",
        "sha256",
        "status",
        "progress",
        "queued_by",
        "queued",
        "started",
        "heartbeat",
        "finished",
        "attempts",
        "load",
        "message",
    ]
    readonly_fields = fields
    change_form_template = "admin/network/schedulejob/change_form.html"

    def has_view_permission(self, request, obj=None):
        return request.user.has_perm("network.add_scheduleload") or super().has_view_permission(
            request, obj
        )

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("queued_by", "load").defer("text")

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        # The page reloads itself while the worker is still at it.
        context["still_running"] = obj is not None and obj.status in (
            ScheduleJob.Status.QUEUED,
            ScheduleJob.Status.RUNNING,
        )
        return super().render_change_form(request, context, add, change, form_url, obj)

    @admin.display(description="Progress")
    def progress(self, job: ScheduleJob) -> str:
        if job.status != ScheduleJob.Status.RUNNING:
            return job.get_status_display()
        if job.total:
            return f"{job.stage}: {job.done:,} of {job.total:,}"
        return job.stage

    @admin.display(description="Queued (UTC)", ordering="queued_at")
    def queued(self, job: ScheduleJob) -> str:
        return utc_time(job.queued_at)

    @admin.display(description="Started (UTC)")
    def started(self, job: ScheduleJob) -> str:
        return utc_time(job.started_at) if job.started_at else "-"

    @admin.display(description="Last heard from the worker (UTC)")
    def heartbeat(self, job: ScheduleJob) -> str:
        return utc_time(job.heartbeat_at) if job.heartbeat_at else "-"

    @admin.display(description="Finished (UTC)", ordering="finished_at")
    def finished(self, job: ScheduleJob) -> str:
        return utc_time(job.finished_at) if job.finished_at else "-"


class CarrierFilter(admin.SimpleListFilter):
    """The carriers of the loaded schedules (a few rows), not a scan of every leg."""

    title = "carrier"
    parameter_name = "carrier"

    def lookups(self, request, model_admin):
        carriers = ScheduleLoad.objects.order_by("carrier").values_list("carrier", flat=True)
        return [(c, c) for c in dict.fromkeys(carriers)]

    def queryset(self, request, queryset):
        return queryset.filter(carrier=self.value()) if self.value() else queryset


@admin.register(ScheduledLeg)
class ScheduledLegAdmin(StandbyChangelist, ReadOnlyAdmin):
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
    list_filter = [CarrierFilter, "aircraft_type"]
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

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("leg")  # each row names its leg

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


def booked_seats(state: BookedState) -> Coalesce | Value:
    """Seats that bookings on hold or ticketed still take on the leg: the orders app's
    rows (airline.network.readers), none without it."""
    rows = booked_seat_rows(state)
    return Value(0) if rows is None else per_leg_sum(rows, "booked_leg", "booked_seats")


def legs_with_load(legs: QuerySet[FlightLeg]) -> QuerySet[FlightLeg]:
    """Legs with their load: capacity and seats sold (rank-0 inventory, which every sale
    counts against), of those the seats on unpaid holds and the ticketed ones."""
    load = load_columns()
    return legs.annotate(
        seats=load["seats"], seats_sold=load["seats_sold"], seats_held=load["seats_held"]
    ).annotate(seats_ticketed=load["seats_ticketed"], load=load["load"])


@functools.cache
def load_columns() -> dict[str, Coalesce | Value | ExpressionWrapper]:
    """Each load column as an expression, annotated onto the hundred legs a page shows,
    and sorted on for on hold and ticketed (capacity, sold and load factor sort through
    the CabinLoad view instead: one aggregate over the schedule, where these subqueries
    would run once per leg). Built on first use, not at import: the admin is imported
    before the orders app has registered its readers (OrdersConfig.ready)."""
    cabins = LegInventory.objects.filter(rank=0)
    load = {
        "seats": per_leg_sum(cabins, "leg", "authorized"),
        "seats_sold": per_leg_sum(cabins, "leg", "sold"),
        "seats_held": booked_seats("held"),
        "seats_ticketed": booked_seats("ticketed"),
    }
    load["load"] = ExpressionWrapper(
        load["seats_sold"] * 100.0 / NullIf(load["seats"], 0), output_field=FloatField()
    )
    return load


STATION = re.compile(r"^[A-Z]{3}$")


def legs_search(search: str) -> Q:
    """Legs as staff write flights, in the bookings search's grammar
    (airline.backoffice.search_words): "MX102", "MX 102", "102" (that flight only, not
    1020), "MX102 2026-12-08", a flight date, "PVD" (from or to), "PVD-CHS"."""
    found = Q()
    for word in search_words(search):
        match word:
            case FlightWord(number=number, carrier=carrier, day=day):
                flight = Q(flight_number=number)
                if carrier is not None:
                    flight &= Q(carrier=carrier)
                if day is not None:
                    flight &= Q(flight_date=day)
                found &= flight
            case DayWord(day=day):
                found &= Q(flight_date=day)
            case RouteWord(origin=origin, destination=destination):
                found &= Q(origin_id=origin, destination_id=destination)
            case OtherWord(upper=upper) if STATION.match(upper):
                found &= Q(origin_id=upper) | Q(destination_id=upper)
            case OtherWord():
                found &= Q(pk__in=[])  # no leg is named by anything else
    return found


class FlightLegChangeList(OnePassRows, ChangeList):
    """Pages the bare legs (an index walk and a LIMIT when sorted by departure), then
    reads the hundred shown with their stations, aircraft and load: never a join or the
    load of all 58,000 legs to show a hundred, whichever column the list is sorted by.
    The rows are written in one pass (OnePassRows)."""

    def get_queryset(self, request, exclude_parameters=None):
        # Only the ids: a sort by load carries every leg through the join and the sort,
        # narrower rows are cheaper to carry.
        queryset = super().get_queryset(request, exclude_parameters)
        return queryset.select_related(None).only("pk")

    def apply_select_related(self, qs):
        return qs  # the page's rows are read whole in get_results

    def get_ordering(self, request, queryset):
        # Ties broken by ascending id, not Django's descending: sorted by load, thousands of
        # legs tie (every one far ahead sits at 0%), and the top-100 sort reads them in id
        # order, so under "newest first" each one displaced the kept hundred (~80 ms of
        # sorting); under "oldest first" each is turned away at once.
        ordering = super().get_ordering(request, queryset)
        if ordering and ordering[-1] == "-pk":
            ordering[-1] = "pk"
        return ordering

    def get_ordering_field(self, field_name):
        # A load column sorts by its expression (load_columns), named in its display.
        field = super().get_ordering_field(field_name)
        return load_columns().get(field, field) if isinstance(field, str) else field

    def get_results(self, request):
        super().get_results(request)
        ids = [leg.pk for leg in self.result_list]
        # With the list's own joins (list_select_related), not the leg page's too.
        legs = self.model_admin.get_queryset(request).select_related(None)
        legs = legs.select_related(*self.list_select_related)
        shown = legs_with_load(legs).in_bulk(ids)
        # A leg a schedule load removed between the two reads is left out, not a 500.
        self.result_list = [shown[pk] for pk in ids if pk in shown]


@admin.register(FlightLeg)
class FlightLegAdmin(StandbyChangelist, ReadOnlyAdmin):
    """Flight-date legs with their load: capacity and seats sold (rank-0 inventory, which
    every sale counts against), and of the sold seats those on unpaid holds and those
    ticketed; the rest are bookings mid-payment or imported."""

    change_list_template = ROWS_LIST_TEMPLATE  # its rows written by FlightLegChangeList

    list_display = [
        "flight",
        "flight_date",
        "leg_sequence",
        # Codes, not "PVD Providence": the load columns stay in view at 1,400 pixels.
        "from_station",
        "to_station",
        "departs",
        "arrives",
        "aircraft",
        "capacity",
        "sold",
        "held",
        "ticketed",
        "load_factor",
        "status",
    ]
    list_filter = ["is_cancelled", CarrierFilter, "origin"]
    show_full_result_count = False  # one count of the legs shown, not two
    paginator = EstimatedCountPaginator  # the whole table's count, from its statistics
    # Answered by get_search_results; listed so that the admin shows its search box.
    search_fields = ["flight_number"]
    search_help_text = (
        "Flight (MX102, MX 102, 102), flight and date (MX102 2026-12-08), date, station "
        "(PVD: from or to) or city pair (PVD-CHS); every word must match"
    )
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
    change_form_template = "admin/network/flightleg/change_form.html"

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            context["flight"] = flight_page(leg=obj)
        return super().render_change_form(request, context, add, change, form_url, obj)

    def get_changelist(self, request, **kwargs):
        return FlightLegChangeList

    def get_queryset(self, request):
        # The leg page shows these read-only; the list joins the same (list_select_related).
        return (
            super()
            .get_queryset(request)
            .select_related(
                "origin", "destination", "aircraft_type", "configuration__aircraft_type"
            )
        )

    def get_object(self, request, object_id, from_field=None):
        leg = super().get_object(request, object_id, from_field)
        return None if leg is None else legs_with_load(self.get_queryset(request)).get(pk=leg.pk)

    def get_search_results(self, request, queryset, search_term):
        if not search_term.strip():
            return queryset, False
        return queryset.filter(legs_search(search_term)), False

    @admin.display(description="Flight", ordering="flight_number")
    def flight(self, leg: FlightLeg) -> str:
        return f"{leg.carrier}{leg.flight_number}"

    @admin.display(description="From", ordering="origin")
    def from_station(self, leg: FlightLeg) -> str:
        return leg.origin_id

    @admin.display(description="To", ordering="destination")
    def to_station(self, leg: FlightLeg) -> str:
        return leg.destination_id

    @admin.display(description="Aircraft", ordering="aircraft_type__iata_code")
    def aircraft(self, leg: FlightLeg) -> str:
        return leg.aircraft_type.iata_code

    @admin.display(description="Departs (local time)", ordering="departs_at")
    def departs(self, leg: FlightLeg) -> str:
        return local_time(leg.departs_at, leg.origin.time_zone)

    @admin.display(description="Arrives (local time)", ordering="arrives_at")
    def arrives(self, leg: FlightLeg) -> str:
        return local_time(leg.arrives_at, leg.destination.time_zone)

    @admin.display(description="Capacity", ordering="cabin_load__seats")
    def capacity(self, leg: FlightLeg) -> int:
        return leg.seats

    @admin.display(description="Sold", ordering="cabin_load__sold")
    def sold(self, leg: FlightLeg) -> int:
        return leg.seats_sold

    @admin.display(description="On hold", ordering="seats_held")
    def held(self, leg: FlightLeg) -> int:
        return leg.seats_held

    @admin.display(description="Ticketed", ordering="seats_ticketed")
    def ticketed(self, leg: FlightLeg) -> int:
        return leg.seats_ticketed

    @admin.display(description="Load factor", ordering="cabin_load__load")
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
