"""Flight-date legs: their list with load columns and staff's flight search, and the
flight-date page with its inventory."""

import re

from django.contrib import admin
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import ValidationError
from django.db.models import Q
from django.utils.html import format_html, format_html_join
from django.utils.text import capfirst

from airline.backoffice import (
    DayWord,
    FlightWord,
    OtherWord,
    RouteWord,
    StandbyChangelist,
    local_time,
    search_words,
)
from airline.backoffice_lists import ROWS_LIST_TEMPLATE, EstimatedCountPaginator, OnePassRows
from airline.network.admin.base import CarrierFilter, ReadOnlyAdmin
from airline.network.admin.load import legs_with_load, load_columns
from airline.network.flight_page import flight_page
from airline.network.models import FlightLeg, LegInventory

INVENTORY_COLUMNS = ["cabin", "rank", "rbd", "authorized", "sold"]


def inventory_table(leg: FlightLeg) -> str:
    """The leg's inventory, read-only, a row per booking class: the cells Django's tabular
    inline writes for it (`<td class="field-rbd">`) written in one pass, without the form
    per row an inline builds only to read its fields back (a third of the page's time)."""
    opts = LegInventory._meta
    heads = format_html_join(
        "",
        '<th class="column-{}">{}</th>',
        ((name, capfirst(opts.get_field(name).verbose_name)) for name in INVENTORY_COLUMNS),
    )
    rows = format_html_join(
        "",
        '<tr><td class="field-cabin">{}</td><td class="field-rank">{}</td>'
        '<td class="field-rbd">{}</td><td class="field-authorized">{}</td>'
        '<td class="field-sold">{}</td></tr>',
        (
            (row.get_cabin_display(), row.rank, row.rbd, row.authorized, row.sold)
            for row in leg.inventory.all()
        ),
    )
    return format_html(
        '<div class="module" id="leg-inventory"><h2>{}</h2><table><thead><tr>{}</tr></thead>'
        "<tbody>{}</tbody></table></div>",
        capfirst(opts.verbose_name_plural),
        heads,
        rows,
    )


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
    change_form_template = "admin/network/flightleg/change_form.html"

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            context["flight"] = flight_page(leg=obj)
            if request.user.has_perm("network.view_leginventory"):
                context["leg_inventory"] = inventory_table(obj)
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
        # Django's get_object, reading the leg with its load in the one query.
        field = self.opts.pk if from_field is None else self.opts.get_field(from_field)
        try:
            object_id = field.to_python(object_id)
            return legs_with_load(self.get_queryset(request)).get(**{field.name: object_id})
        except (FlightLeg.DoesNotExist, ValidationError, ValueError):
            return None

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
