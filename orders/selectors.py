"""Order reads: one order for its seller, and OrderList's search (SPEC.md §4.8, §4.9).

Owner first: every query starts from the seller or the agency it is scoped to, so
another seller's order is simply not found (DESIGN.md §5).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import (
    BooleanField,
    Exists,
    ExpressionWrapper,
    F,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    prefetch_related_objects,
)
from django.db.models.functions import Upper

from airline.api.errors import ApiError, Err
from orders.models import (
    Contact,
    Coupon,
    Journey,
    Leg,
    Order,
    OrderItem,
    OrderStatus,
    Passenger,
    Payment,
    Segment,
    Service,
    Ticket,
)


def _journeys_with(legs: QuerySet[Leg]) -> Prefetch:
    """Journeys in travel order with their segments and these legs."""
    segments = Segment.objects.order_by("position").prefetch_related(Prefetch("legs", legs))
    return Prefetch(
        "journeys",
        queryset=Journey.objects.order_by("position").prefetch_related(
            Prefetch("segments", queryset=segments)
        ),
    )


_PASSENGERS = Prefetch("passengers", queryset=Passenger.objects.order_by("position"))

# What changes use (AcceptOffer included): the party, the flight items and their legs.
SLIM_PREFETCH = (_PASSENGERS, "items", _journeys_with(Leg.objects.order_by("position")))

# Everything the order view shows.
ORDER_VIEW_PREFETCH = (
    _PASSENGERS,
    "contacts",
    _journeys_with(Leg.objects.order_by("position").select_related("flight_leg__aircraft_type")),
    "items",
    "services",
    "payments",
    "tickets__coupons",
)


def order_header(*, seller_id, ref: str, owner_code: str | None = None) -> Order:
    """The seller's order row alone, by order id or record locator; ERR-4000 for
    anything else, another seller's order included."""
    owner = (owner_code or settings.AIRLINE_DESIGNATOR).upper()
    if owner != settings.AIRLINE_DESIGNATOR:
        raise order_not_found(ref)
    order = Order.objects.filter(ref_match(ref), seller_id=seller_id).first()
    if order is None:
        raise order_not_found(ref)
    return order


def order_get(*, seller_id, ref: str, owner_code: str | None = None) -> Order:
    """The seller's order with every part the order view shows."""
    order = order_header(seller_id=seller_id, ref=ref, owner_code=owner_code)
    return order_with_parts(order, ORDER_VIEW_PREFETCH)


def order_with_parts(order: Order, parts) -> Order:
    """The order with `parts` (ORDER_VIEW_PREFETCH or SLIM_PREFETCH) loaded."""
    prefetch_related_objects([order], *parts)
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


def stored_json(value: Any) -> Any:
    """A JSON field's value as the database will give it back, for rows kept in memory
    after writing them: PostgreSQL's jsonb keeps an object's keys shortest first, then
    in byte order (PostgreSQL manual, "JSON Types"); SQLite keeps them as written."""
    if connection.vendor != "postgresql":
        return value
    return _jsonb_order(value)


def _jsonb_order(value: Any) -> Any:
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (len(k.encode()), k.encode()))
        return {k: _jsonb_order(value[k]) for k in keys}
    if isinstance(value, list | tuple):
        return [_jsonb_order(v) for v in value]
    return value


def order_parts(order: Order) -> OrderParts:
    """The order's parts as stored (ORDER_VIEW_PREFETCH: nine queries)."""
    order_with_parts(order, ORDER_VIEW_PREFETCH)
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
        legs={
            s.pk: [
                LegPart(
                    ref=leg.ref,
                    origin=leg.flight_leg.origin_id,
                    destination=leg.flight_leg.destination_id,
                    departs_at=leg.flight_leg.departs_at,
                    arrives_at=leg.flight_leg.arrives_at,
                    aircraft_type=leg.flight_leg.aircraft_type.iata_code,
                )
                for leg in s.legs.all()
            ]
            for ss in segments.values()
            for s in ss
        },
        services=list(order.services.all()),
        payments=list(order.payments.all()),
        tickets=tickets,
        coupons={t.pk: list(t.coupons.all()) for t in tickets},
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

    agency_code: str
    first_name: str = ""
    last_name: str = ""
    departure_date: date | None = None
    origin: str = ""
    destination: str = ""
    flight_number: int | None = None
    page_size: int = 1000
    last_index: int = 0


def journey_criteria(search: OrderSearch, *, now: datetime) -> Q:
    """Journeys that fit the flight criteria: departing on the UTC date asked for, or
    from yesterday (UTC) on; never cancelled ones."""
    criteria = Q(is_cancelled=False)
    if search.departure_date is not None:
        start = datetime.combine(search.departure_date, time(0), tzinfo=UTC)
        criteria &= Q(departs_at__gte=start, departs_at__lt=start + timedelta(days=1))
    else:
        yesterday = datetime.combine(now.astimezone(UTC).date() - timedelta(days=1), time(0))
        criteria &= Q(departs_at__gte=yesterday.replace(tzinfo=UTC))
    if search.origin:
        criteria &= Q(origin=search.origin)
    if search.destination:
        criteria &= Q(destination=search.destination)
    if search.flight_number is not None:
        criteria &= Exists(
            Segment.objects.filter(journey=OuterRef("pk"), flight_number=search.flight_number)
        )
    return criteria


@dataclass
class JourneyRow:
    """What a summary shows of one journey, and whether it fits the search."""

    origin: str
    destination: str
    departure_date: date | None
    flight_number: int | None
    matches: bool


@dataclass
class OrderRow:
    """What an OrderList summary shows of one order (SPEC.md §2.8): plain values, no
    model objects; a page of 1000 is two queries."""

    pk: int
    order_id: str
    record_locator: str
    status: str
    agency_code: str
    lead_name: tuple[str, str]
    lapsed: bool  # an unpaid hold past its time limit, not yet expired
    # The journey its summary shows: the first that fits the search (without flight
    # criteria, the first from yesterday on), else the first live one.
    journey: JourneyRow | None = None


def orders_search(search: OrderSearch, *, now: datetime) -> tuple[list[OrderRow], bool]:
    """One page of the agency's orders after `last_index`, in id order, and whether more
    follow. Keyset pagination on the order id: a page is an index range scan however
    many orders exist, and orders created while a client pages never shift the pages it
    has not read yet."""
    criteria = journey_criteria(search, now=now)
    orders = Order.objects.filter(agency_code=search.agency_code, pk__gt=search.last_index).exclude(
        status=OrderStatus.CLOSED
    )
    if search.departure_date is not None:
        # One day's journeys are few (journey_by_time): take their orders' ids and look
        # those up, rather than let PostgreSQL walk the agency's orders in id order
        # testing each one (a merge join it prefers under LIMIT: 9.6 ms at 100k).
        day = (
            Journey.objects.filter(criteria, order_id__gt=search.last_index)
            .order_by()  # no join to orders for the model's default ordering
            .values("order_id")
        )
        orders = _of_orders(orders, day, column="id")
    else:
        orders = orders.filter(
            Exists(
                # The bound repeated inside the subquery keeps PostgreSQL from
                # merge-joining every journey below the cursor (15 ms on a deep page of
                # 100k orders).
                Journey.objects.filter(
                    criteria, order=OuterRef("pk"), order_id__gt=search.last_index
                )
            )
        )
    if search.last_name:
        # Likewise the travellers of one surname (pax_by_surname): their orders' ids
        # first, then those orders, not every order tested for such a traveller.
        named = (
            Passenger.objects.annotate(surname_upper=Upper("surname"))
            .filter(surname_upper=search.last_name.upper(), order_id__gt=search.last_index)
            .order_by()
        )
        if search.first_name:
            named = named.filter(given_name__iexact=search.first_name)
        orders = _of_orders(orders, named.values("order_id"), column="id")
    elif search.first_name:
        orders = orders.filter(
            Exists(
                Passenger.objects.filter(order=OuterRef("pk"), given_name__iexact=search.first_name)
            )
        )
    # The page's orders, one more than the page to tell whether more follow; then
    # their live journeys, each with whether it fits the search.
    page = list(
        orders.order_by("pk")
        .annotate(
            lapsed=ExpressionWrapper(
                Q(status=OrderStatus.ONHOLD, payment_time_limit__lte=now),
                output_field=BooleanField(),
            )
        )
        .values_list(
            "pk",
            "order_id",
            "record_locator",
            "status",
            "agency_code",
            "lead_given_name",
            "lead_surname",
            "lapsed",
        )[: search.page_size + 1]
    )
    rows = {
        pk: OrderRow(pk, order_id, locator, status, agency, (given, surname), lapsed)
        for pk, order_id, locator, status, agency, given, surname, lapsed in page[
            : search.page_size
        ]
    }
    if not rows:
        return [], False
    # Each order's journeys, those that fit first, then in trip order: the first is the
    # one its summary shows.
    journeys = (
        _of_orders(Journey.objects.filter(is_cancelled=False), list(rows))
        .annotate(matches=ExpressionWrapper(criteria, output_field=BooleanField()))
        .order_by("order_id", F("matches").desc(), "position")
    )
    if connection.features.can_distinct_on_fields:
        journeys = journeys.distinct("order_id")  # that first one alone: half the rows
    for order_pk, *journey in journeys.values_list(
        "order_id", "origin", "destination", "departure_date", "flight_number", "matches"
    ):
        row = rows[order_pk]
        if row.journey is None:
            row.journey = JourneyRow(*journey)
    return list(rows.values()), len(page) > search.page_size


def _of_orders(rows: QuerySet, ids: list[int] | QuerySet, column: str = "order_id") -> QuerySet:
    """Rows of these orders: `ids` a list, or a query of one column of order ids. On
    PostgreSQL they go as one array (`= ANY`), which it looks up id by id in the index:
    a list as one array parameter (a page of 1000 as 1000 parameters cost ~5 ms of
    Django and psycopg work per query), a query as ARRAY(subquery), run once inside the
    database, where `IN (subquery)` would let the planner walk all the agency's orders
    testing each, and fetching the ids first costs a round trip of thousands of them."""
    if connection.vendor == "postgresql":
        table = rows.model._meta.db_table
        if isinstance(ids, QuerySet):
            sql, params = ids.query.sql_with_params()
            array = f"ARRAY({sql})"
        else:
            array, params = "%s", (ids,)
        return rows.extra(where=[f'"{table}"."{column}" = ANY({array})'], params=params)  # noqa: S610
    return rows.filter(**{f"{'pk' if column == 'id' else column}__in": ids})


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
        start = datetime.combine(departure_date, time(0), tzinfo=UTC)
        orders = orders.filter(
            Exists(
                Journey.objects.filter(
                    order=OuterRef("pk"),
                    departs_at__gte=start,
                    departs_at__lt=start + timedelta(days=1),
                )
            )
        )
    return list(
        orders.order_by("-pk")
        .select_related("seller")
        .prefetch_related(*ORDER_VIEW_PREFETCH)[:limit]
    )
