"""Order reads: one order for its seller, and OrderList's search (SPEC.md §4.8, §4.9).

Reads never write. An unpaid hold past its limit that the worker has not expired yet is
presented as the expiry will leave it (order_as_it_stands); expiring it (seats back,
event, webhook) is orders.booking.holds' work, done by the worker and by the writes.

Owner first: every query starts from the seller or the agency it is scoped to, so
another seller's order is simply not found (DESIGN.md §5).

It is one module because every read starts from the same owner scope (`OrderScope`) and
the same parts (`OrderParts`): one order and the search are the two ways in to them.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import cache
from typing import Any, NamedTuple
from uuid import UUID

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Exists, OuterRef, Q
from django.db.models.functions import Upper

from airline.api import clock
from airline.api.errors import ApiError, Err
from airline.fares.money import ZERO
from airline.sql import statement_cursor
from airline.standby import seller_marker, stale_ok_read
from orders.models import (
    AirlineChange,
    AirlineCredit,
    Contact,
    Coupon,
    Journey,
    Leg,
    Order,
    OrderFee,
    OrderItem,
    OrderStatus,
    Passenger,
    Payment,
    PaymentIntent,
    Segment,
    Service,
    Ticket,
)
from orders.reading.part_rows import Part, parts_load, rows_where


def _journeys_with(*legs_joined: str) -> Part:
    """Journeys in travel order with their segments and legs, each leg with `legs_joined`."""
    legs = Part("legs", Leg, order_by=("position",), joined=legs_joined)
    segments = Part("segments", Segment, order_by=("position",), parts=(legs,))
    return Part("journeys", Journey, order_by=("position",), parts=(segments,))


_PASSENGERS = Part("passengers", Passenger, order_by=("position",))
_ITEMS = Part("items", OrderItem)

# The order items alone (what a cancellation quote covers).
ITEM_PARTS = (_ITEMS,)

# What changes use (AcceptOffer included): the party, the flight items and their legs.
SLIM_PARTS = (_PASSENGERS, _ITEMS, _journeys_with())

# Everything the order view shows.
ORDER_VIEW_PARTS = (
    _PASSENGERS,
    Part("contacts", Contact),
    _journeys_with("flight_leg__aircraft_type"),
    _ITEMS,
    Part("services", Service),
    Part("payments", Payment, joined=("credit",)),
    Part("tickets", Ticket, parts=(Part("coupons", Coupon),)),
    Part("credits", AirlineCredit),
    Part("airline_changes", AirlineChange),
    Part("fees", OrderFee),
)

# The same, for prefetch_related on a queryset of many orders.
ORDER_VIEW_PREFETCH = tuple(part.prefetch() for part in ORDER_VIEW_PARTS)

FLIGHT_PARTS = (_journeys_with("flight_leg__aircraft_type"), Part("airline_changes", AirlineChange))


@dataclass(frozen=True)
class OrderScope:
    """The orders a caller may read or change (DESIGN.md §11 "Isolation"): the acting
    seller's first; of those, when the API key has an agency code, that agency's only.
    Agency codes are free text that any partner's key may carry, so the seller, which
    belongs to one partner, always comes first."""

    seller_id: UUID
    agency_code: str = ""

    @classmethod
    def of(cls, principal) -> "OrderScope":
        """The scope of an authenticated caller (sellers.authentication.Principal)."""
        return cls(seller_id=principal.seller.pk, agency_code=principal.key.agency_code or "")

    def q(self) -> Q:
        within = Q(seller_id=self.seller_id)
        if self.agency_code:
            within &= Q(agency_code=self.agency_code)
        return within


def order_header(
    *, scope: OrderScope, ref: str, owner_code: str | None = None, using: str = DEFAULT_DB_ALIAS
) -> Order:
    """The order row alone, by order id or record locator, if it is in `scope`;
    ERR-4000 for anything else, another seller's or agency's order included (never
    reveal that it exists). Read from the database `using` names (the standby for a
    retrieve: airline/standby.py)."""
    owner = (owner_code or settings.AIRLINE_DESIGNATOR).upper()
    if owner != settings.AIRLINE_DESIGNATOR or "\x00" in ref:
        # No order id has a NUL, and PostgreSQL cannot even compare text holding one.
        raise order_not_found(ref)
    if settings.DB_DIRECT_READS:
        order = _order_row(scope, ref, using)
    else:
        order = Order.objects.using(using).filter(ref_match(ref), scope.q()).first()
    if order is None:
        raise order_not_found(ref)
    return order


def _order_row(scope: OrderScope, ref: str, using: str) -> Order | None:
    """What Order.objects.filter(ref_match(ref), scope.q()).first() finds, by a statement
    built once per process (orders.reading.part_rows.rows_where): every order request
    starts here, and compiling the query through the ORM each time costs more than the
    rest of a retrieve that serves a kept view."""
    ref = ref.strip()
    by_locator, by_agency = len(ref) == 6, bool(scope.agency_code)
    seller = Order._meta.get_field("seller").get_db_prep_value(scope.seller_id, connections[using])
    values = [ref, *([ref.upper()] if by_locator else []), seller]
    if by_agency:
        values.append(scope.agency_code)
    found = rows_where(
        Order, _order_row_where(by_locator, by_agency, using), values, using=using, limit=1
    )
    return found[0] if found else None


@cache
def _order_row_where(by_locator: bool, by_agency: bool, using: str) -> str:
    """The WHERE of _order_row: ref_match, then OrderScope.q."""
    quote = connections[using].ops.quote_name

    def column(name: str) -> str:
        return f"p0.{quote(Order._meta.get_field(name).column)}"

    ref = f"{column('order_id')} = %s"
    if by_locator:
        ref += f" OR {column('record_locator')} = %s"
    where = f"({ref}) AND {column('seller')} = %s"
    if by_agency:
        where += f" AND {column('agency_code')} = %s"
    return where


def order_with_parts(order: Order, parts: Sequence[Part]) -> Order:
    """The order with `parts` (ORDER_VIEW_PARTS or SLIM_PARTS) loaded; a lapsed hold's
    lines shown cancelled, as its expiry will leave them (order_as_it_stands)."""
    parts_load(order, parts, empty=_known_empty(order, tuple(p.name for p in parts)))
    if order.lapsed:
        _lines_cancelled(order)
    return order


# Parts many orders have no row of (a hold: no payment, ticket, credit, airline change or
# fee), by the name they are loaded under.
OFTEN_EMPTY = ("payments", "tickets", "credits", "airline_changes", "fees")


def _known_empty(order: Order, names: tuple[str, ...]) -> frozenset[str]:
    """Those of `names` in OFTEN_EMPTY the order has no row of, from one query, where
    reading each takes one: a hold's view has five such parts. Read from the order's own
    database (the standby, for a retrieve that reads there)."""
    alias = order._state.db or DEFAULT_DB_ALIAS
    probed = _empty_probe(names, alias)
    if probed is None:
        return frozenset()
    sql, names = probed
    with statement_cursor(using=alias) as cursor:
        cursor.execute(sql, [order.pk] * len(names))
        found = cursor.fetchone()
    return frozenset(name for name, rows in zip(names, found, strict=True) if not rows)


@cache
def _empty_probe(names: tuple[str, ...], alias: str) -> tuple[str, tuple[str, ...]] | None:
    """(the SELECT saying which of the OFTEN_EMPTY among `names` have rows, which those
    are), or None when none are."""
    probed = tuple(name for name in OFTEN_EMPTY if name in names)
    if not probed:
        return None
    relations = [Order._meta.get_field(name) for name in probed]
    quote = connections[alias].ops.quote_name
    has = ", ".join(
        f"EXISTS (SELECT 1 FROM {quote(r.related_model._meta.db_table)} "  # noqa: S608 (names from the models)
        f"WHERE {quote(r.field.column)} = %s)"
        for r in relations
    )
    return f"SELECT {has}", probed


def _lines_cancelled(order: Order) -> None:
    """A lapsed hold's loaded items and services shown as its expiry leaves them."""
    loaded = getattr(order, "_prefetched_objects_cache", {})
    for item in loaded.get("items", ()):
        item.status = "CANCELLED"
    for service in loaded.get("services", ()):
        if service.status == Service.Status.ACTIVE:
            service.status = Service.Status.CANCELLED


def hold_lapsed(order: Order, *, now: datetime) -> bool:
    """An unpaid hold past its payment time limit (DESIGN.md §8), expired or not yet."""
    return (
        order.status == OrderStatus.ONHOLD
        and order.payment_time_limit is not None
        and order.payment_time_limit <= now
    )


def order_as_it_stands(order: Order, *, now: datetime) -> Order:
    """The order as a client must see it at `now`: a lapsed hold the worker has not
    expired yet shown as orders.booking.holds.order_cancel_hold will leave it (CANCELLED, worth
    nothing, its value voided, its lines cancelled: order_with_parts), in memory only.
    Nothing is written: its seats, event and webhook wait for the worker or the next
    write (orders.booking.holds.order_for_change)."""
    if hold_lapsed(order, now=now):
        order.voided += order.total
        order.total = ZERO
        order.status = OrderStatus.CANCELLED
        order.lapsed = True
        _lines_cancelled(order)
    return order


@dataclass(frozen=True)
class LegPart:
    """A leg of a booked segment as the order view shows it: its LEG- id and the
    scheduled flight leg it flies."""

    ref: str
    origin: str
    destination: str
    departs_at: datetime  # UTC
    arrives_at: datetime  # UTC
    aircraft_type: str  # IATA code
    # The airline cancelled the flight (orders.servicing.airline_changes).
    is_cancelled: bool = False


@dataclass(frozen=True)
class OrderParts:
    """An order and every row its view shows, each sequence in view order. Read from the
    database by `order_parts`, or assembled by the create flow from the rows it wrote."""

    order: Order
    passengers: Sequence[Passenger]  # by position
    contacts: Sequence[Contact]
    journeys: Sequence[Journey]  # in travel order
    items: Sequence[OrderItem]
    segments: Mapping[int, Sequence[Segment]]  # by journey pk, in travel order
    legs: Mapping[int, Sequence[LegPart]]  # by segment pk, in travel order
    services: Sequence[Service]
    payments: Sequence[Payment]
    tickets: Sequence[Ticket]
    coupons: Mapping[int, Sequence[Coupon]]  # by ticket pk, by coupon number
    credits: Sequence[AirlineCredit] = ()  # airline credit the order gave back
    airline_changes: Sequence[AirlineChange] = ()  # schedule changes, oldest first
    fees: Sequence[OrderFee] = ()  # fees and penalties charged (orders.money.fees)
    # A reserved order's payment intent, while the create flow holds it (not rendered).
    intent: "PaymentIntent | None" = None
    # The network version read before these rows were (the view's cache key names it:
    # presenters.order_view_key), when their reader read it; else read when rendered.
    network: int | None = None

    def segments_in_travel_order(self) -> list[Segment]:
        """Every segment of the order's journeys, journey by journey."""
        return [s for j in self.journeys for s in self.segments[j.pk]]


def order_parts(order: Order) -> OrderParts:
    """The order's parts as stored (ORDER_VIEW_PARTS: eight queries for a hold, up to
    thirteen for an order with every kind of part)."""
    order_with_parts(order, ORDER_VIEW_PARTS)
    return parts_loaded(order)


def parts_loaded(
    order: Order, *, services: Sequence[Service] | None = None, network: int | None = None
) -> OrderParts:
    """The parts of an order whose ORDER_VIEW_PARTS are loaded (order_with_parts), as
    loaded, `services` in place of the loaded ones when given; `network`: the network
    version read before them (OrderParts.network)."""
    journeys = list(order.journeys.all())
    segments = {j.pk: list(j.segments.all()) for j in journeys}
    tickets = list(order.tickets.all())
    return OrderParts(
        order=order,
        passengers=list(order.passengers.all()),
        contacts=list(order.contacts.all()),
        journeys=journeys,
        items=list(order.items.all()),
        segments=segments,
        legs=_leg_parts(segments),
        services=list(order.services.all()) if services is None else services,
        payments=list(order.payments.all()),
        tickets=tickets,
        coupons={t.pk: list(t.coupons.all()) for t in tickets},
        credits=list(order.credits.all()),
        airline_changes=list(order.airline_changes.all()),
        fees=list(order.fees.all()),
        network=network,
    )


def _leg_parts(segments: Mapping[int, Sequence[Segment]]) -> dict[int, list[LegPart]]:
    return {
        s.pk: [
            LegPart(
                ref=leg.ref,
                origin=leg.flight_leg.origin_id,
                destination=leg.flight_leg.destination_id,
                departs_at=leg.flight_leg.departs_at,
                arrives_at=leg.flight_leg.arrives_at,
                aircraft_type=leg.flight_leg.aircraft_type.iata_code,
                is_cancelled=leg.flight_leg.is_cancelled,
            )
            for leg in s.legs.all()
        ]
        for ss in segments.values()
        for s in ss
    }


@dataclass(frozen=True)
class FlightParts:
    """What the operational status of an order's journeys and segments is read from
    (orders.reading.presenters.operational_statuses): these fields of OrderParts, alone."""

    journeys: Sequence[Journey]
    segments: Mapping[int, Sequence[Segment]]
    legs: Mapping[int, Sequence[LegPart]]
    airline_changes: Sequence[AirlineChange]


def order_flight_parts(order: Order) -> FlightParts:
    """The order's journeys, segments, legs and airline changes as stored (four queries,
    where its whole view's parts take up to thirteen): for the back office and support
    commands, which show each flight's status beside rows they read themselves."""
    parts_load(order, FLIGHT_PARTS)
    journeys = list(order.journeys.all())
    segments = {j.pk: list(j.segments.all()) for j in journeys}
    return FlightParts(
        journeys=journeys,
        segments=segments,
        legs=_leg_parts(segments),
        airline_changes=list(order.airline_changes.all()),
    )


def ref_match(ref: str) -> Q:
    """Orders whose order id, or record locator (6 characters, any case), is `ref`."""
    ref = ref.strip()
    if len(ref) == 6:
        return Q(order_id=ref) | Q(record_locator=ref.upper())
    return Q(order_id=ref)


def order_not_found(ref: str) -> ApiError:
    return ApiError(Err.ORDER_NOT_FOUND, f"Order {ref} not found", path="orderId")


@dataclass(frozen=True)
class OrderSearch:
    """OrderList's criteria, already validated and normalised (SPEC.md §4.8)."""

    seller_id: UUID
    agency_code: str
    first_name: str = ""
    last_name: str = ""
    departure_date: date | None = None
    origin: str = ""
    destination: str = ""
    flight_number: int | None = None
    page_size: int = 1000
    last_index: int = 0


class OrderRow(NamedTuple):
    """What an OrderList summary shows of one order (SPEC.md §2.8): plain values, no
    model objects, in the order OrderList's statement selects them, so that a page's
    rows are made from its tuples in one pass (a page is up to 1000 of them)."""

    pk: int
    order_id: str
    record_locator: str
    status: str
    agency_code: str
    given_name: str  # the lead passenger's
    surname: str
    lapsed: bool  # an unpaid hold past its time limit, not yet expired (SQLite: 0 or 1)
    # The journey its summary shows: the first, in trip order, that fits the search
    # (without flight criteria, the first from yesterday on).
    origin: str
    destination: str
    departure_date: date | str | None  # SQLite may hand back the ISO text
    flight_number: int | None


def orders_search(search: OrderSearch, *, now: datetime) -> tuple[list[OrderRow], bool]:
    """One page of the agency's orders after `last_index`, in id order, and whether more
    follow. Keyset pagination on the order id: a page is an index range scan however
    many orders exist, and orders created while a client pages never shift the pages it
    has not read yet.

    One statement, written out rather than built by the ORM: composing the two queries
    this took before cost ~2 ms of Python per page, more than PostgreSQL spent running
    them, and passing a page's 1000 order ids back as a parameter another ~1 ms. Each
    order is joined to the one journey its summary shows (the first in trip order that
    fits: _first_fitting); an order with no such journey drops out of the join, which
    is the search's flight filter. It runs on SQLite too, two of its joins written as
    SQLite has them (tests/e2e/test_sqlite_statements.py)."""

    def read(using: str) -> list[tuple]:
        sql, params = _order_page_sql(search, now=now, using=using)
        with connections[using].cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()

    page = stale_ok_read(seller_marker(search.seller_id), read)
    rows = list(map(OrderRow._make, page[: search.page_size]))
    return rows, len(page) > search.page_size


def _order_page_sql(
    search: OrderSearch, *, now: datetime, using: str = DEFAULT_DB_ALIAS
) -> tuple[str, list[Any]]:
    """OrderList's statement and its parameters: the page's orders, one more than the
    page to tell whether more follow, each with the journey its summary shows. Only fixed
    SQL and table names are put into the text (the S608 waivers below); every value
    is a parameter."""
    orders, journeys = Order._meta.db_table, Journey._meta.db_table
    passengers, segments = Passenger._meta.db_table, Segment._meta.db_table
    connection = connections[using]
    fits, fits_params = _journey_fits(search, now=now, segments=segments, connection=connection)
    # Owner first: the acting seller's orders, then the key's agency (OrderScope).
    where = ["o.seller_id = %s", "o.agency_code = %s", "o.id > %s", "o.status <> %s"]
    params: list[Any] = [
        # A UUID, which SQLite stores as 32 hex digits: prepared as the column wants it.
        Order._meta.get_field("seller").get_db_prep_value(search.seller_id, connection),
        search.agency_code,
        search.last_index,
        OrderStatus.CLOSED,
    ]
    if search.departure_date is not None:
        # One day's journeys are few (journey_by_time): take their orders' ids and look
        # those up, rather than let PostgreSQL walk the agency's orders in id order
        # testing each one (9.6 ms at 100k).
        where.append(
            _id_among(
                f"SELECT u.order_id FROM {journeys} u WHERE {fits} AND u.order_id > %s",  # noqa: S608
                connection,
            )
        )
        params += [*fits_params, search.last_index]
    named, named_params, distinct = "", [], ""
    if search.last_name:
        # The travellers of one surname (pax_by_surname: the surname, then the order id).
        who = "UPPER(p.surname) = %s"
        who_params = [search.last_name.upper()]
        if search.first_name:
            who += " AND UPPER(p.given_name) = UPPER(%s)"
            who_params.append(search.first_name)
        who += " AND p.order_id > %s"
        who_params.append(search.last_index)
        if connection.vendor == "postgresql":
            # Joined, they are walked in the index's order, which is the page's: the
            # walk stops at the page's end however many orders carry the name, where a
            # list of every one of them, read first, grows with the table. An order
            # two of them travel in is listed once.
            named, named_params = f" JOIN {passengers} p ON p.order_id = o.id AND {who}", who_params
            distinct = "DISTINCT ON (o.id) "
        else:
            where.append(f"o.id IN (SELECT p.order_id FROM {passengers} p WHERE {who})")  # noqa: S608
            params += who_params
    elif search.first_name:
        where.append(
            f"EXISTS (SELECT 1 FROM {passengers} p WHERE p.order_id = o.id"  # noqa: S608
            " AND UPPER(p.given_name) = UPPER(%s))"
        )
        params.append(search.first_name)
    sql = (
        f"SELECT {distinct}o.id, o.order_id, o.record_locator, o.status, o.agency_code,"  # noqa: S608
        " o.lead_given_name, o.lead_surname,"
        " (o.status = %s AND o.payment_time_limit <= %s),"
        " j.origin, j.destination, j.departure_date, j.flight_number"
        f" FROM {orders} o{named} {_first_fitting(journeys, fits, connection)}"
        f" WHERE {' AND '.join(where)} ORDER BY o.id LIMIT %s"
    )
    # Placeholders in text order: the lapsed test, the surname's join, the journey
    # join, then WHERE.
    return sql, [
        OrderStatus.ONHOLD,
        _db_time(now, connection),
        *named_params,
        *fits_params,
        *params,
        search.page_size + 1,
    ]


def _first_fitting(journeys: str, fits: str, connection) -> str:
    """The join of each order `o` to its journey `j` that the summary shows: the first
    in trip order that fits (journey_by_order_position). On PostgreSQL a LATERAL
    subquery that reads it once; SQLite has none, and picks its id, then reads it."""
    first = f" FROM {journeys} u WHERE u.order_id = o.id AND {fits} ORDER BY u.position LIMIT 1"
    if connection.vendor == "postgresql":
        return (
            "JOIN LATERAL (SELECT u.origin, u.destination, u.departure_date,"
            f" u.flight_number{first}) j ON TRUE"
        )
    return f"JOIN {journeys} j ON j.id = (SELECT u.id{first})"


def _journey_fits(
    search: OrderSearch, *, now: datetime, segments: str, connection
) -> tuple[str, list]:
    """SQL on journey `u`: live, departing on the UTC date asked for (or from yesterday,
    UTC, on), and from, to and on the flight asked for."""
    clauses = ["NOT u.is_cancelled"]
    if search.departure_date is not None:
        clauses += ["u.departs_at >= %s", "u.departs_at <= %s"]
        params: list[Any] = [_db_time(t, connection) for t in utc_day(search.departure_date)]
    else:
        yesterday, _ = utc_day(now.astimezone(UTC).date() - timedelta(days=1))
        clauses.append("u.departs_at >= %s")
        params = [_db_time(yesterday, connection)]
    if search.origin:
        clauses.append("u.origin = %s")
        params.append(search.origin)
    if search.destination:
        clauses.append("u.destination = %s")
        params.append(search.destination)
    if search.flight_number is not None:
        clauses.append(
            f"EXISTS (SELECT 1 FROM {segments} s WHERE s.journey_id = u.id"  # noqa: S608
            " AND s.flight_number = %s)"
        )
        params.append(search.flight_number)
    return " AND ".join(clauses), params


def utc_day(day: date) -> tuple[datetime, datetime]:
    """The first and last microsecond of a UTC date (not the next midnight, which
    9999-12-31 does not have)."""
    return datetime.combine(day, time.min, tzinfo=UTC), datetime.combine(day, time.max, tzinfo=UTC)


def _db_time(value: datetime, connection) -> Any:
    """A datetime as this database stores it (SQLite: naive UTC text)."""
    return connection.ops.adapt_datetimefield_value(value)


def _id_among(subquery: str, connection) -> str:
    """`o.id` is one of the ids `subquery` selects. On PostgreSQL as ARRAY(subquery),
    run once and then looked up id by id in the index, where `IN (subquery)` lets the
    planner walk all the agency's orders testing each."""
    if connection.vendor == "postgresql":
        return f"o.id = ANY(ARRAY({subquery}))"
    return f"o.id IN ({subquery})"


def orders_find(
    *, last_name: str = "", departure_date: date | None = None, limit: int = 100
) -> Sequence[Order]:
    """Support search across every seller (`manage.py bookings`): by surname and/or the
    UTC date a journey departs."""
    orders = Order.objects.all()
    if last_name:
        orders = orders.filter(
            Exists(
                Passenger.objects.annotate(surname_upper=Upper("surname")).filter(
                    order=OuterRef("pk"), surname_upper=last_name.upper()
                )
            )
        )
    if departure_date is not None:
        orders = orders.filter(
            Exists(
                Journey.objects.filter(
                    order=OuterRef("pk"), departs_at__range=utc_day(departure_date)
                )
            )
        )
    return list(
        orders.order_by("-pk")
        .select_related("seller")
        .prefetch_related(*ORDER_VIEW_PREFETCH)[:limit]
    )


def order_get(
    *,
    scope: OrderScope,
    ref: str,
    owner_code: str | None = None,
    parts: Sequence[Part] = ORDER_VIEW_PARTS,
    stale_ok: bool = False,
) -> Order:
    """The one way to read an order: by order id or record locator, in `scope` (the
    acting seller, then the key's agency), as it stands now (a lapsed hold presented as
    expired, order_as_it_stands; writes load it with orders.booking.holds.order_for_change,
    which expires it), with `parts` loaded: everything the order view shows by default,
    SLIM_PARTS for changes, () for the row alone (seat maps and service lists read
    what they need as plain values: `orders.reading.trips.order_trip`). ERR-4000 when
    there is no such order in scope.

    `stale_ok`: a read that may be a moment old (order retrieve, an order's seat maps and
    services), from the standby unless the seller has just written (airline/standby.py);
    its parts then come from the same database."""

    def read(using: str) -> Order:
        order = order_header(scope=scope, ref=ref, owner_code=owner_code, using=using)
        order_as_it_stands(order, now=clock.now())
        return order_with_parts(order, parts) if parts else order

    if stale_ok:
        return stale_ok_read(seller_marker(scope.seller_id), read)
    return read(DEFAULT_DB_ALIAS)


def orders_list(search: OrderSearch) -> tuple[list[OrderRow], bool]:
    """A page of OrderList; a lapsed hold on it shows CANCELLED, as its expiry will leave
    it (order_as_it_stands), and nothing is written."""
    rows, more = orders_search(search, now=clock.now())
    return [row._replace(status=OrderStatus.CANCELLED) if row.lapsed else row for row in rows], more


def seats_held_statement(leg_ids: Sequence[int]) -> tuple[str, list]:
    """The statement (SQL, parameters) of the seats held on these flight-date legs by any
    order of any seller: rows of (flight leg id, seat row, seat column). The seat maps'
    (offers.seating.seats_taken, registered by OrdersConfig.ready), which send it
    with their read of the legs."""
    return _seats_held_sql(len(leg_ids)), [*leg_ids, Service.Status.ACTIVE]


@cache
def _seats_held_sql(count: int) -> str:
    """seats_held_statement's SELECT for `count` legs, built once per process: what
    Service.objects.filter(flight_leg_id__in=..., status=ACTIVE, seat_row__isnull=False)
    .values_list("flight_leg_id", "seat_row", "seat_column") sends."""

    def column(name: str) -> str:
        return f'"{Service._meta.get_field(name).column}"'

    leg, row = column("flight_leg"), column("seat_row")
    return (
        f"SELECT {leg}, {row}, {column('seat_column')} "  # noqa: S608 (names from the model)
        f'FROM "{Service._meta.db_table}" WHERE {leg} IN ({", ".join(["%s"] * count)}) '
        f"AND {column('status')} = %s AND {row} IS NOT NULL"
    )
