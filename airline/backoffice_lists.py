"""The back office's long lists (the flight-date legs, the bookings, the webhook
deliveries): each row written in one pass, and a whole table's count read from
PostgreSQL's statistics rather than counted (docs/operators/back-office.md)."""

import html
from collections.abc import Callable
from datetime import date, time
from functools import cached_property

from django.conf import settings
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.templatetags.admin_list import ResultList, result_headers
from django.contrib.admin.templatetags.admin_urls import add_preserved_filters
from django.contrib.admin.utils import (
    display_for_field,
    display_for_value,
    lookup_field,
)
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import ObjectDoesNotExist
from django.core.paginator import Paginator
from django.db import DEFAULT_DB_ALIAS, connections, models
from django.db.models import Model
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.utils.translation import gettext

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
