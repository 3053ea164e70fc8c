"""The schedule: SSIM files loaded (with the upload that previews a file's changes before
applying it), the worker's load jobs, and the scheduled legs they wrote. Times of the
schedule are local to each station and say which."""

import hashlib
import re

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from airline.api import clock
from airline.backoffice import StandbyChangelist, utc_time
from airline.network.admin.base import CarrierFilter, ReadOnlyAdmin
from airline.network.follow_up import follow_up_progress
from airline.network.jobs import schedule_job_queue
from airline.network.models import ScheduledLeg, ScheduleJob, ScheduleLoad
from airline.network.preview import schedule_preview
from airline.network.services import ScheduleError, known_station, load_summary, schedule_load
from airline.network.ssim import SsimFileError, parse_ssim

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
