"""What every back-office page shares: times labelled with their zone, actions written to
Django's admin log, and child tables that a staff member may read when they may read the
parent (README "Back office")."""

from collections.abc import Iterable
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from django.contrib import admin
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db.models import Model
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils.cache import add_never_cache_headers


def local_time(moment: datetime | None, zone: str | ZoneInfo) -> str:
    """`2026-06-01 08:05 EDT`: a station-local time, labelled, as staff read a timetable."""
    if moment is None:
        return "-"
    zone = zone if isinstance(zone, ZoneInfo) else ZoneInfo(zone)
    return moment.astimezone(zone).strftime("%Y-%m-%d %H:%M %Z")


def utc_time(moment: datetime | None) -> str:
    """`2026-06-01 12:05 UTC`: an instant that belongs to no station (a deadline)."""
    if moment is None:
        return "-"
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def one_time_page(
    model_admin: admin.ModelAdmin, request: HttpRequest, template: str, **context
) -> TemplateResponse:
    """The answer to a create that shows a secret once (extends
    admin/one_time_secret.html): in the body, marked never to be cached; no redirect, so
    the secret never travels in a cookie (Django's message cookie is signed, not
    encrypted) and a reload cannot show it again."""
    response = TemplateResponse(
        request,
        template,
        {**model_admin.admin_site.each_context(request), "opts": model_admin.opts, **context},
    )
    add_never_cache_headers(response)
    return response


def log_action(request: HttpRequest, objects: Iterable[Model], message: str) -> None:
    """Write what a changelist action did to Django's admin log (who, when, what, on
    which object): the admin logs its own add/change/delete views, never actions."""
    objects = list(objects)
    if not objects:
        return
    content_type = ContentType.objects.get_for_model(objects[0], for_concrete_model=False)
    LogEntry.objects.bulk_create(
        LogEntry(
            user_id=request.user.pk,
            content_type=content_type,
            object_id=str(obj.pk),
            object_repr=str(obj)[:200],
            action_flag=CHANGE,
            change_message=message,
        )
        for obj in objects
    )


class ReadOnlyInline(admin.TabularInline):
    """A child table shown as it is: nothing added, changed or deleted here. Whoever may
    view the parent sees it whole, so a view-only role needs no permission per child
    table (the children are parts of the parent, never looked at alone)."""

    extra = 0
    can_delete = False
    show_change_link = False

    def has_view_permission(self, request, obj=None) -> bool:
        opts = self.parent_model._meta
        return request.user.has_perm(f"{opts.app_label}.view_{opts.model_name}")

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


def utc_column(field: str, label: str):
    """A list or read-only column showing the datetime `field` as `utc_time` does, headed
    `label (UTC)` and sortable by the field."""

    @admin.display(description=f"{label} (UTC)", ordering=field)
    def column(obj) -> str:
        return utc_time(getattr(obj, field))

    column.__name__ = f"{field}_utc"
    return column
