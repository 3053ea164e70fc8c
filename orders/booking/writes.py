"""The rows of a new order: the order itself under a fresh record locator, its journeys,
segments and legs, passengers and contact. Create order writes them, and so do the
import of bookings (orders.booking.imports) and an exchange's new journey
(orders.servicing.exchange.apply).
"""

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from functools import cache

from django.conf import settings
from django.db import IntegrityError, connection

from airline.network.itineraries import DatedLeg
from airline.network.itineraries import Journey as NetworkJourney
from airline.network.services import station_zone
from airline.sql import ahead_withdrawn, statement_ahead
from offers.wire import ref_id
from orders.booking.ancillaries import (
    IN_CREATE,
    Sale,
    services_write,
)
from orders.booking.priced import BookedJourney, journey_ref
from orders.core import events, ids
from orders.core.rows import (
    row_new,
    rows_insert,
    rows_insert_together,
    rows_statement,
    rows_written,
)
from orders.models import (
    Contact,
    Journey,
    Leg,
    Order,
    OrderEvent,
    OrderItem,
    Passenger,
    PaymentIntent,
    Segment,
)
from orders.reading.selectors import LegPart, OrderParts
from orders.requests.checks import (
    ContactIn,
    PassengerIn,
)


def order_rows_write(
    order: Order,
    *,
    booked: Sequence[BookedJourney],
    passengers: Sequence[PassengerIn],
    contact: ContactIn,
    sale: Sale,
    seats: int,
    now: datetime,
    network: int,
    event: OrderEvent,
    intent: PaymentIntent | None = None,
) -> OrderParts:
    """The new order's passengers, contact, journeys, items, segments, legs and services,
    and its `event` and card payment `intent` if any (written with the legs: they need
    only the order's id), returned as the parts a read of the order would give (no
    payment yet), under the network version `network` of the schedule they were written
    from (the view renders under it)."""
    infants, carriers = passengers_new(order, passengers)
    rows_insert(infants)  # first, so that their carriers can point at them
    contact_row = contact_new(order, contact)
    journeys = [
        journey_row(order, ref=journey_ref(b), position=position, journey=b.journey)
        for position, b in enumerate(booked, start=1)
    ]
    # Rows that need only the order's id go in one round trip; then those that need the
    # journeys'; then the legs, which need the segments', with the event and intent.
    rows_insert_together(carriers, [contact_row], journeys)
    items = [
        row_new(
            OrderItem,
            order=order,
            journey=journey,
            ref=ids.new_ref("OOI"),
            bundle=b.item.bundle,
            total=b.price.total,
            price=b.item.total_price,
            fare=b.item.fare,
            passenger_prices=b.item.passenger_prices,
        )
        for journey, b in zip(journeys, booked, strict=True)
    ]
    flights = [
        (journey, s, b.item.cabin, rbd, seats)
        for journey, b in zip(journeys, booked, strict=True)
        for s, rbd in zip(b.journey.segments, b.item.rbds, strict=True)
    ]
    segment_rows = segments_new(order, flights)
    rows_insert_together(items, segment_rows)
    legs = legs_new(segment_rows, flights)
    rows_insert_together(
        legs,
        [event],
        [intent] if intent is not None else [],
        reads=events.announcement_reads(order),  # the event's, announced after
    )
    passenger_rows = _in_position(infants, carriers)
    services = (
        services_write(
            sale,
            order=order,
            passengers={p.offer_pax_id: p for p in passenger_rows},
            journeys={j.ref: j for j in journeys},
            segments={s.ref: s for s in segment_rows},
            now=now,
            refuse=IN_CREATE,
        )
        if sale.lines
        else []
    )
    # What the order view shows of a leg is the scheduled flight leg, which the network
    # index the journeys came from holds: no need to read it back.
    flown = {leg.id: leg for b in booked for s in b.journey.segments for leg in s.legs}
    return OrderParts(
        order=order,
        passengers=passenger_rows,
        contacts=[contact_row],
        journeys=journeys,
        items=items,
        segments={j.pk: [s for s in segment_rows if s.journey_id == j.pk] for j in journeys},
        legs={
            s.pk: [_leg_part(leg, flown) for leg in legs if leg.segment_id == s.pk]
            for s in segment_rows
        },
        services=services,
        payments=[],
        tickets=[],
        coupons={},
        network=network,
    )


def _leg_part(row: Leg, flown: Mapping[int, DatedLeg]) -> LegPart:
    leg = flown[row.flight_leg_id]
    return LegPart(
        ref=row.ref,
        origin=leg.origin,
        destination=leg.destination,
        departs_at=leg.departs_at,
        arrives_at=leg.arrives_at,
        aircraft_type=leg.aircraft_type,
    )


class LocatorTaken(Exception):
    """The record locator drawn for a new order is another order's."""


def order_insert(order: Order, *, duplicate: Callable[[], Exception]) -> None:
    """Insert a new order with the record locator drawn for it: LocatorTaken when another
    order has that locator, `duplicate()` when the order itself exists (its offer is
    booked). No savepoint: a clash ends the caller's transaction, which order_create runs
    again with a fresh draw. That clash is rare (there are 32^6, about 10^9, locators),
    and a savepoint around every insert cost every booking two round trips."""
    # Looked up before the INSERT (once per process): after a failed statement,
    # PostgreSQL's transaction takes no other.
    locator_unique = _unique_constraints(Order._meta.db_table, "record_locator")
    try:
        rows_insert([order])
    except IntegrityError as exc:
        raise _insert_refused(exc, order, locator_unique, duplicate) from exc


@contextmanager
def order_insert_ahead(order: Order, *, duplicate: Callable[[], Exception]) -> Iterator[None]:
    """order_insert, its INSERT sent ahead of the block's first statement, in its round
    trip (airline.sql.statement_ahead), on PostgreSQL inside a transaction: a booking's
    order row goes with its legs' lock, and the transaction's BEGIN with both, two round
    trips fewer than the row alone. The server still runs the INSERT first, so a racing
    second booking of the same offer still waits on it for the first to commit, then
    fails, before it takes any seat. Its failure comes back with the block's first
    statement and is raised here as order_insert raises it; the order has its id once
    that statement is back. A block that sends nothing has the order inserted after it."""
    if not (
        connection.vendor == "postgresql"
        and settings.DB_DIRECT_INSERT
        and connection.in_atomic_block
    ):
        order_insert(order, duplicate=duplicate)
        yield
        return
    locator_unique = _unique_constraints(Order._meta.db_table, "record_locator")
    statement, params = rows_statement([order])
    statement_ahead(statement, params, keep=lambda answered: rows_written([order], answered))
    try:
        yield
    except IntegrityError as exc:
        if _table_refused(exc) != Order._meta.db_table:
            raise  # one of the block's own statements: the block's to report
        raise _insert_refused(exc, order, locator_unique, duplicate) from exc
    finally:
        # Still waiting when the block failed before sending anything, or sent nothing.
        unsent = ahead_withdrawn(statement)
    if unsent:
        order_insert(order, duplicate=duplicate)


def _diagnostics(exc: IntegrityError) -> object | None:
    """PostgreSQL's diagnostics of a refusal (psycopg's `diag`: the table, the
    constraint); SQLite's errors carry none."""
    return getattr(exc.__cause__, "diag", None)


def _table_refused(exc: IntegrityError) -> str | None:
    """The table whose row PostgreSQL refused, as its error's diagnostics name it."""
    return getattr(_diagnostics(exc), "table_name", None)


def _insert_refused(
    exc: IntegrityError,
    order: Order,
    locator_unique: frozenset[str],
    duplicate: Callable[[], Exception],
) -> Exception:
    """What refusing a new order's INSERT means: LocatorTaken, or `duplicate()`."""
    if _locator_taken(exc, order, locator_unique):
        return LocatorTaken()
    return duplicate()


def _locator_taken(exc: IntegrityError, order: Order, locator_unique: frozenset[str]) -> bool:
    """Whether the INSERT of `order` broke the uniqueness of its record locator (not of
    its order id or source offer), by the name of the constraint: PostgreSQL's error
    carries it (psycopg's `diag.constraint_name`). SQLite's names none, but its
    transaction goes on after a failed statement, so it is asked."""
    diag = _diagnostics(exc)
    if diag is not None:
        return diag.constraint_name in locator_unique
    return Order.objects.filter(record_locator=order.record_locator).exists()


@cache
def _unique_constraints(table: str, column: str) -> frozenset[str]:
    """The names of the database's unique constraints on `table`'s `column` alone, as it
    reports them (the name is the database's own choice for a field's unique=True)."""
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    return frozenset(
        name for name, c in constraints.items() if c["unique"] and c["columns"] == [column]
    )


def journey_row(order: Order, *, ref: str, position: int, journey: NetworkJourney) -> Journey:
    """The order's journey as booked, with what OrderList summaries show of it: the
    departure date at the origin and the first segment's flight number."""
    return row_new(
        Journey,
        order=order,
        ref=ref,
        position=position,
        origin=journey.origin,
        destination=journey.destination,
        departs_at=journey.departs_at,
        arrives_at=journey.arrives_at,
        departure_date=journey.departs_at.astimezone(station_zone(journey.origin)).date(),
        flight_number=journey.segments[0].flight_number,
    )


def passengers_write(order: Order, passengers: Iterable[PassengerIn]) -> list[Passenger]:
    """The passengers, infants first so that their carriers can point at them."""
    infants, carriers = passengers_new(order, passengers)
    rows_insert(infants)
    rows_insert(carriers)
    return _in_position(infants, carriers)


def passengers_new(
    order: Order, passengers: Iterable[PassengerIn]
) -> tuple[list[Passenger], list[Passenger]]:
    """The passengers' rows, not yet written: (the lap infants, the others), a carrier
    pointing at its infant's row, which must be written first."""
    rows = {
        p.pax_id: row_new(
            Passenger,
            order=order,
            ref=ids.new_ref("PAX"),
            offer_pax_id=p.pax_id,
            position=position,
            ptc=p.ptc,
            given_name=p.given_name,
            surname=p.surname,
            date_of_birth=p.date_of_birth,
            gender=p.gender,
            nationality=p.nationality,
            residence_country=p.residence_country,
            loyalty_program=p.loyalty_program,
            travel_documents=p.travel_documents,
            contacts=p.contacts,
        )
        for position, p in enumerate(passengers, start=1)
    }
    for p in passengers:
        if p.infant_pax_id:
            rows[p.pax_id].infant = rows[p.infant_pax_id]
    infants = [row for row in rows.values() if row.ptc == "INF"]
    return infants, [row for row in rows.values() if row.ptc != "INF"]


def _in_position(*groups: Sequence[Passenger]) -> list[Passenger]:
    return sorted((row for group in groups for row in group), key=lambda row: row.position)


def contact_write(order: Order, contact: ContactIn) -> Contact:
    """The order's contact."""
    return rows_insert([contact_new(order, contact)])[0]


def contact_new(order: Order, contact: ContactIn) -> Contact:
    """The order's contact row, not yet written."""
    return row_new(
        Contact,
        order=order,
        ref=ids.new_ref("CTC"),
        email=contact.email,
        phone=contact.phone,
        given_name=contact.given_name,
        surname=contact.surname,
        postal_address=contact.postal_address,
    )


def segments_write(
    order: Order, segments: Sequence[tuple], *, taken: Collection[str] = ()
) -> tuple[list[Segment], list[Leg]]:
    """Segments and their legs, in travel order: (order journey, network segment, cabin,
    rbd, seats) each (segments_new, legs_new)."""
    rows = rows_insert(segments_new(order, segments, taken=taken))
    return rows, rows_insert(legs_new(rows, segments, taken=taken))


def segments_new(
    order: Order, segments: Sequence[tuple], *, taken: Collection[str] = ()
) -> list[Segment]:
    """The segments' rows, not yet written, in travel order: (order journey, network
    segment, cabin, rbd, seats) each. A segment's id is the offer's for its legs (what
    seat maps and service lists of the priced offer name) unless the order already has
    that id among `taken` (SEG- and LEG- ids it holds: a flight exchanged and exchanged
    back): then a fresh one, so that ids stay unique within the order (SPEC.md §1)."""
    positions: dict[int, int] = {}
    rows = []
    for journey, s, cabin, rbd, seats in segments:
        positions[journey.pk] = positions.get(journey.pk, 0) + 1
        ref = ref_id("SEG", *(leg.id for leg in s.legs))
        rows.append(
            row_new(
                Segment,
                order=order,
                journey=journey,
                ref=ref if ref not in taken else ids.new_ref("SEG"),
                position=positions[journey.pk],
                carrier=s.carrier,
                flight_number=s.flight_number,
                origin=s.origin,
                destination=s.destination,
                departs_at=s.departs_at,
                arrives_at=s.arrives_at,
                cabin=cabin,
                rbd=rbd,
                seats=seats,
            )
        )
    return rows


def legs_new(
    rows: Sequence[Segment], segments: Sequence[tuple], *, taken: Collection[str] = ()
) -> list[Leg]:
    """The legs' rows of the segments `rows` (written), not yet written: one per leg of
    each network segment, as segments_new was given them."""
    return [
        row_new(Leg, segment=row, flight_leg_id=leg.id, ref=_leg_ref(leg.id, taken), position=n)
        for row, (_, s, *_rest) in zip(rows, segments, strict=True)
        for n, leg in enumerate(s.legs, start=1)
    ]


def _leg_ref(leg_id: int, taken: Collection[str]) -> str:
    ref = ref_id("LEG", leg_id)
    return ref if ref not in taken else ids.new_ref("LEG")
