"""What every back-office page shares: times labelled with their zone, actions written to
Django's admin log, and child tables that a staff member may read when they may read the
parent (docs/operators/back-office.md)."""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from functools import cached_property
from zoneinfo import ZoneInfo

from django.contrib import admin
from django.contrib.admin.helpers import AdminReadonlyField
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.admin.utils import (
    flatten_fieldsets,
)
from django.contrib.contenttypes.models import ContentType
from django.db.models import Exists, Model, OuterRef
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest
from django.utils.html import conditional_escape, escape
from django.utils.safestring import mark_safe

from airline.standby import staff_marker, stale_ok_db


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


class OnePassFormSet(BaseInlineFormSet):
    """A read-only inline's rows written in one pass (`rows_html`): the HTML of Django's
    admin/edit_inline/tabular.html for a row no one may change, each cell's text from
    Django's own AdminReadonlyField.contents, but one AdminReadonlyField a column rather
    than one a cell (its label and help text looked up again each time), and no
    template loop over fieldsets, lines and fields: most of the booking page's time.
    tests/orders/test_admin.py holds the page to what Django writes."""

    columns: list[str]
    inline: admin.options.InlineModelAdmin

    @cached_property
    def rows_html(self) -> str | None:
        """The tbody's rows, or None where Django's template is needed (a change link, a
        "View on site" link, a primary key that is a parent link)."""
        opts = self.model._meta
        if (
            self.inline.show_change_link
            or hasattr(self.model, "get_absolute_url")
            or not (opts.auto_field or not opts.pk.editable)
            or opts.parents
            or self.fk.remote_field.field_name != self.instance._meta.pk.name
        ):
            return None
        forms_ = self.forms
        if not forms_:
            return ""
        cells = [AdminReadonlyField(forms_[0], name, False, self.inline) for name in self.columns]
        rows = []
        for index, form in enumerate(forms_):
            prefix = f"{self.prefix}-{index}"
            tds = []
            for cell in cells:
                cell.form = form
                hidden = " hidden" if cell.field["is_hidden"] else ""
                tds.append(
                    f'<td class="field-{cell.field["name"]}{hidden}"><p>{cell.contents()}</p></td>'
                )
            rows.append(
                f'<tr class="form-row has_original" id="{prefix}"><td class="original"><p>'
                f"{conditional_escape(str(form.instance))}</p>"
                f'<input type="hidden" name="{prefix}-{opts.pk.name}" '
                f'value="{escape(form.instance.pk)}" id="id_{prefix}-{opts.pk.name}">'
                f'<input type="hidden" name="{prefix}-{self.fk.name}" '
                f'value="{escape(self.instance.pk)}" id="id_{prefix}-{self.fk.name}">'
                f'</td>{"".join(tds)}<td class="delete"></td></tr>'
            )
        return mark_safe("".join(rows))  # noqa: S308 - each part escaped as it is written


class ReadOnlyInline(admin.TabularInline):
    """A child table shown as it is: nothing added, changed or deleted here. Whoever may
    view the parent sees it whole, so a view-only role needs no permission per child
    table (the children are parts of the parent, never looked at alone)."""

    extra = 0
    can_delete = False
    show_change_link = False

    formset = OnePassFormSet
    template = "admin/edit_inline/one_pass_tabular.html"

    def get_formset(self, request, obj=None, **kwargs):
        # Every column is read-only and shown from the row itself (AdminReadonlyField):
        # forms with no fields, not a form field and widget per cell built and never shown.
        kwargs.setdefault("fields", [])
        formset = super().get_formset(request, obj, **kwargs)
        # A class made for this request (inlineformset_factory): what its rows show.
        formset.columns = [
            name
            for name in flatten_fieldsets(self.get_fieldsets(request, obj))
            if name != formset.fk.name
        ]
        formset.inline = self
        return formset

    def has_view_permission(self, request, obj=None) -> bool:
        opts = self.parent_model._meta
        return request.user.has_perm(f"{opts.app_label}.view_{opts.model_name}")

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


def inlines_with_rows(inlines: list[admin.options.InlineModelAdmin], obj: Model) -> list:
    """Of a page's read-only inlines, those with rows for `obj`, found in one query (an
    EXISTS per inline). A table heading over nothing costs as much to render as a short
    table (~5 ms each on the booking page of eleven) and says nothing a reader needs."""
    exists = {
        f"has_{n}": Exists(inline.model._default_manager.filter(**{_fk_to(inline): OuterRef("pk")}))
        for n, inline in enumerate(inlines)
    }
    if not exists:
        return inlines
    has = type(obj)._default_manager.filter(pk=obj.pk).annotate(**exists).values(*exists).first()
    has = has or {}
    return [inline for n, inline in enumerate(inlines) if has.get(f"has_{n}")]


def _fk_to(inline: admin.options.InlineModelAdmin) -> str:
    """The inline's foreign key to its parent: named, or the only one there is."""
    if inline.fk_name:
        return inline.fk_name
    parent = inline.parent_model
    (field,) = (f for f in inline.model._meta.fields if f.many_to_one and f.related_model is parent)
    return field.name


def utc_column(field: str, label: str):
    """A list or read-only column showing the datetime `field` as `utc_time` does, headed
    `label (UTC)` and sortable by the field."""

    @admin.display(description=f"{label} (UTC)", ordering=field)
    def column(obj) -> str:
        return utc_time(getattr(obj, field))

    column.__name__ = f"{field}_utc"
    return column


# --- Search words as staff write them ------------------------------------------------
# One grammar for the bookings and the flight-date legs (docs/operators/back-office.md): a flight
# ("MX102", "MX 102", "102"), a flight on a date ("MX102 2026-12-08"), a flight date
# ("2026-12-08"), a city pair ("PVD-CHS"), and any other word for the page to read its way.
CARRIER = r"(?:[A-Z][A-Z0-9]|[0-9][A-Z])"  # an IATA airline designator
FLIGHT = re.compile(rf"^({CARRIER})?(\d{{1,4}})$")
DESIGNATOR = re.compile(rf"^{CARRIER}$")
NUMBER = re.compile(r"^\d{1,4}$")
ROUTE = re.compile(r"^([A-Z]{3})-([A-Z]{3})$")
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True)
class FlightWord:
    """A flight number, with its carrier when written, and the flight date after it."""

    number: int
    carrier: str | None = None
    day: date | None = None
    text: str = ""  # as typed: a locator ("AB1234") reads as a flight too


@dataclass(frozen=True)
class DayWord:
    day: date


@dataclass(frozen=True)
class RouteWord:
    origin: str
    destination: str


@dataclass(frozen=True)
class OtherWord:
    text: str  # as typed

    @property
    def upper(self) -> str:
        return self.text.upper()


SearchWord = FlightWord | DayWord | RouteWord | OtherWord


def as_date(word: str) -> date | None:
    """`2026-12-08` as a date; None for anything else, an impossible date included."""
    try:
        return date.fromisoformat(word) if ISO_DATE.match(word) else None
    except ValueError:
        return None


def search_words(search: str) -> list[SearchWord]:
    """The words of a search box, read as staff write flights: a designator followed by a
    number is one flight ("MX 102"), and a date right after a flight is that flight's
    date. Every word must match, as Django's own search."""
    words, found = search.split(), []
    while words:
        word = words.pop(0)
        if DESIGNATOR.match(word.upper()) and words and NUMBER.match(words[0]):
            word = word + words.pop(0)
        upper = word.upper()
        if flight := FLIGHT.match(upper):
            day = as_date(words[0]) if words else None
            if day is not None:
                words.pop(0)
            found.append(FlightWord(int(flight.group(2)), flight.group(1), day, word))
        elif route := ROUTE.match(upper):
            found.append(RouteWord(route.group(1), route.group(2)))
        elif day := as_date(word):
            found.append(DayWord(day))
        else:
            found.append(OtherWord(word))
    return found


class StandbyChangelist:
    """A ModelAdmin mixin: the changelist (a GET of the list page: its rows and its
    counts) may be a moment old, so it is read from the standby when standby reads are on
    (airline/standby.py), unless this staff user has just changed something. The change
    form, actions (POST) and every other page read and write on the primary."""

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        match = request.resolver_match
        changelist = f"{self.opts.app_label}_{self.opts.model_name}_changelist"
        if request.method == "GET" and match is not None and match.url_name == changelist:
            return queryset.using(stale_ok_db(staff_marker(request.user.pk)))
        return queryset
