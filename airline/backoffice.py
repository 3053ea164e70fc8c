"""What every back-office page shares: times labelled with their zone, actions written to
Django's admin log, and child tables that a staff member may read when they may read the
parent (docs/operations.md "Back office")."""

import html
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from functools import cached_property
from zoneinfo import ZoneInfo

from django.conf import settings
from django.contrib import admin
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME, AdminReadonlyField
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.admin.templatetags.admin_list import ResultList, result_headers
from django.contrib.admin.templatetags.admin_urls import add_preserved_filters
from django.contrib.admin.utils import (
    display_for_field,
    display_for_value,
    flatten_fieldsets,
    lookup_field,
)
from django.contrib.admin.views.main import ChangeList
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ObjectDoesNotExist
from django.core.paginator import Paginator
from django.db import DEFAULT_DB_ALIAS, connections, models
from django.db.models import Exists, Model, OuterRef
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import conditional_escape, escape
from django.utils.safestring import mark_safe
from django.utils.translation import gettext

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
# One grammar for the bookings and the flight-date legs (docs/operations.md "Back office"): a flight
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


PK_MARK = "~pk~"  # stands for a row's id in its change link: kept as is by reverse()


class OnePassRows:
    """A ChangeList mixin for long lists: each row written in one pass, the same bytes as
    Django's items_for_result (tests/network/test_admin.py and tests/orders/test_admin.py
    hold them equal), without what Django does again for every cell (look the column up,
    format_html) and every row (reverse its link, resolve it to add the list's filters):
    under half the CPU of Django's rows on the legs list, the bookings list and the
    deliveries list (docs/benchmarks/figures/admin.md, "before and after"). The list's
    template (admin/one_pass_change_list.html) includes Django's table with
    `results_table`; a popup, an editable list, a list without links or a column that is
    neither a field nor a ModelAdmin method is left to Django (results_table is None), and
    so is every list with ADMIN_ONE_PASS_ROWS off. It reads Django's admin helpers
    (lookup_field, display_for_field, result_headers), documented but not promised
    stable: the tests fail loudly on a Django whose rows it no longer writes."""

    @cached_property
    def results_table(self) -> dict | None:
        """The context of Django's admin/change_list_results.html, as its result_list tag
        gives it, with each row one cell of HTML."""
        if not settings.ADMIN_ONE_PASS_ROWS:
            return None
        if self.formset is not None or self.is_popup or not self.list_display_links:
            return None
        if not self.result_list:
            rows = []
        else:
            cells = self._cell_writers(self.result_list[0])
            if cells is None:
                return None
            # Safe: each cell escapes what it shows (_escaped), as format_html.
            rows = [
                ResultList(None, [mark_safe("".join([cell(obj) for cell in cells]))])  # noqa: S308
                for obj in self.result_list
            ]
        headers = list(result_headers(self))
        return {
            "result_hidden_fields": [],
            "result_headers": headers,
            "num_sorted_fields": sum(1 for h in headers if h["sortable"] and h["sorted"]),
            "results": rows,
        }

    def _cell_writers(self, first: Model) -> list[Callable[[Model], str]] | None:
        """For each column, what writes its cell of a row, planned once from the first
        row as Django's lookup_field reads it."""
        writers, first_link = [], True
        empty = self.model_admin.get_empty_value_display()
        for name in self.list_display:
            if name == "action_checkbox":
                writers.append(self._checkbox_writer())
                continue
            if not isinstance(name, str):
                return None
            field, attr, _ = lookup_field(name, first, self.model_admin)
            if field is None and not (hasattr(self.model_admin, name) and name != "__str__"):
                return None  # a model attribute, property or a related lookup
            link = name in self.list_display_links
            shown = _cell_value(name, field, attr, self.model_admin, empty, link)
            if link:
                tag = "th" if first_link else "td"
                writers.append(self._link_writer(name, _or_empty(shown, empty), tag))
                first_link = False
            else:
                writers.append(_td_writer(name, _or_empty(shown, empty)))
        return writers

    def _checkbox_writer(self) -> Callable[[Model], str]:
        """The action checkbox's cell, as Django writes it (RowCheckbox's HTML is safe)."""
        checkbox = self.model_admin.action_checkbox

        def write(obj: Model) -> str:
            return f'<td class="action-checkbox">{checkbox(obj)}</td>'

        return write

    def _link_writer(self, name: str, shown, tag: str) -> Callable[[Model], str]:
        pattern = reverse(
            f"admin:{self.opts.app_label}_{self.opts.model_name}_change",
            args=(PK_MARK,),
            current_app=self.model_admin.admin_site.name,
        )
        # The list's filters and sort, which the change page's links take back to it.
        linked = add_preserved_filters(
            {"preserved_filters": self.preserved_filters, "opts": self.opts}, pattern
        )
        before, _, after = linked.partition(PK_MARK)
        pk_attname = self.lookup_opts.pk.attname

        def write(obj: Model) -> str:
            pk = getattr(obj, pk_attname)
            if isinstance(pk, int):
                url = f"{before}{pk}{after}"
            else:
                url = add_preserved_filters(
                    {"preserved_filters": self.preserved_filters, "opts": self.opts},
                    self.url_for_result(obj),
                )
            text, nowrap = shown(obj)
            classes = f"field-{name} nowrap" if nowrap else f"field-{name}"
            return f'<{tag} class="{classes}"><a href="{escape(url)}">{_escaped(text)}</a></{tag}>'

        return write


class OnePassChangeList(OnePassRows, ChangeList):
    """Django's ChangeList with its rows written in one pass (OnePassRows): for a
    ModelAdmin's get_changelist, with change_list_template ROWS_LIST_TEMPLATE."""


ROWS_LIST_TEMPLATE = "admin/one_pass_change_list.html"


def _td_writer(name: str, shown) -> Callable[[Model], str]:
    def write(obj: Model) -> str:
        text, nowrap = shown(obj)
        classes = f"field-{name} nowrap" if nowrap else f"field-{name}"
        return f'<td class="{classes}">{_escaped(text)}</td>'

    return write


def _or_empty(shown, empty):
    """As Django shows a cell whose related row is missing: empty, and no other class."""

    def shown_or_empty(obj):
        try:
            return shown(obj)
        except ObjectDoesNotExist:
            return empty, False

    return shown_or_empty


def _cell_value(name, field, attr, model_admin, empty, link: bool):
    """What a column shows for a row and whether it is kept on one line: Django's
    items_for_result for a field or a ModelAdmin method, decided once per column."""
    empty = getattr(attr, "empty_value_display", empty)
    read = getattr(model_admin, name) if field is None else _attribute(name)
    if field is None or field.auto_created:
        boolean = getattr(attr, "boolean", False)

        def shown(obj):
            value = _blank_as_empty(read(obj))
            return display_for_value(value, empty, boolean), isinstance(value, (date, time))

        return shown
    nowrap = isinstance(field, (models.DateField, models.TimeField, models.ForeignKey))
    if isinstance(field.remote_field, models.ManyToOneRel):
        related = _attribute(field.name)

        def shown_related(obj):
            value = related(obj)
            return (empty if value is None else value), nowrap

        return shown_related

    if (
        isinstance(field, models.IntegerField)
        and not field.flatchoices
        and not settings.USE_THOUSAND_SEPARATOR
    ):
        # display_for_field's number_format, which without grouping is str().
        def shown_number(obj):
            value = read(obj)
            return (empty if value is None else str(value)), nowrap

        return shown_number

    def shown(obj):
        return display_for_field(_blank_as_empty(read(obj)), field, empty, link), nowrap

    return shown


def _escaped(text) -> str:
    """Django's conditional_escape, without the check for lazy arguments it makes on
    every call: a cell's text is escaped as it is written into the row."""
    return text.__html__() if hasattr(text, "__html__") else html.escape(str(text))


def _attribute(name: str) -> Callable[[Model], object]:
    return lambda obj: getattr(obj, name)


def _blank_as_empty(value):
    return "" if isinstance(value, str) and value.strip() == "" else value


class RowCheckbox:
    """For a ModelAdmin with actions and long lists: each row's checkbox written as
    Django's widget writes it (tests/orders/test_admin.py holds them equal), not
    rendered through the form renderer's template, which took a third of a 100-row
    bookings list's time."""

    def action_checkbox(self, obj) -> str:
        # format_html's escaping, written out: a row's checkbox is most of a long list.
        label = gettext("Select this object for an action - {}").format(html.escape(str(obj)))
        return mark_safe(  # noqa: S308 - the pk and the row's name are escaped
            f'<input type="checkbox" name="{ACTION_CHECKBOX_NAME}" '
            f'value="{html.escape(str(obj.pk))}" class="action-select" aria-label="{label}">'
        )


ESTIMATED_FROM = 10_000  # rows in a table from which its unfiltered list count is estimated


class EstimatedCountPaginator(Paginator):
    """A list's paginator that takes the count of a whole table of more than
    ESTIMATED_FROM rows from PostgreSQL's statistics (pg_class.reltuples, as ANALYZE and
    autovacuum leave it) rather than counting 100,000 bookings at every page view; a
    filtered or searched list, or a small table, is counted exactly."""

    @cached_property
    def count(self) -> int:
        query = getattr(self.object_list, "query", None)
        connection = connections[getattr(self.object_list, "db", DEFAULT_DB_ALIAS)]
        if (
            connection.vendor == "postgresql"
            and query is not None
            and not query.where
            and not query.distinct
            and not query.combinator
        ):
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT reltuples FROM pg_class WHERE oid = %s::regclass",
                    [connection.ops.quote_name(self.object_list.model._meta.db_table)],
                )
                row = cursor.fetchone()
            if row is not None and row[0] >= ESTIMATED_FROM:
                return int(row[0])
        return super().count
