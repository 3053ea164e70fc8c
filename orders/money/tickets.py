"""Documents of a paid order (DESIGN.md §8, §11): its payment rows and its e-tickets, one
per passenger with one coupon per segment.
"""

from collections.abc import Sequence
from datetime import datetime
from functools import cache

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections

from airline.sql import statement_cursor
from orders.core import ids
from orders.core.rows import row_new, rows_insert
from orders.models import (
    Coupon,
    Order,
    Passenger,
    Payment,
    PaymentIntent,
    Segment,
    Ticket,
    TicketSerial,
)
from orders.money.payments import Charge


def payment_record(
    order: Order, *, charge: Charge, intent: PaymentIntent, now: datetime
) -> Payment:
    """A successful card payment row, from the intent it was charged under: brand, last
    four and expiry, never the number."""
    return rows_insert([payment_row(order, charge=charge, intent=intent, now=now)])[0]


def payment_row(order: Order, *, charge: Charge, intent: PaymentIntent, now: datetime) -> Payment:
    """payment_record's row, not yet written (a card booking writes it in the statement
    that confirms the order: orders.booking.paying)."""
    return row_new(
        Payment,
        order=order,
        ref=ids.new_ref("PAY"),
        created_at=now,
        amount=charge.amount,
        currency=charge.currency,
        status=Payment.Status.SUCCESSFUL,
        method="CreditCard",
        card_brand=intent.card_brand,
        card_last4=intent.card_last4,
        card_expiry=intent.card_expiry,
        gateway_reference=charge.reference,
    )


def tickets_reissue(
    order: Order, *, now: datetime, passengers: Sequence[Passenger] | None = None
) -> None:
    """A paid order's tickets (those of `passengers`, or all) reissued after a change of
    its flights or names: the open coupons of segments that have departed become USED
    (flown: a coupon is never reissued open for a flight that has left), every other
    open coupon EXCHANGED for a new ticket per passenger over the live segments still
    to fly (none when nothing is left to fly)."""
    open_coupons = Coupon.objects.filter(ticket__order=order, status=Coupon.Status.OPEN)
    if passengers is not None:
        open_coupons = open_coupons.filter(ticket__passenger__in=passengers)
    open_coupons.filter(segment__departs_at__lte=now).update(status=Coupon.Status.USED)
    open_coupons.update(status=Coupon.Status.EXCHANGED)
    segments = list(
        Segment.objects.filter(order=order, departs_at__gt=now)
        .exclude(journey__item__status="CANCELLED")
        .order_by("journey__position", "position")
    )
    if segments:
        tickets_issue(order, now=now, passengers=passengers, segments=segments)


def tickets_issue(
    order: Order,
    *,
    now: datetime,
    passengers: Sequence[Passenger] | None = None,
    segments: Sequence[Segment] | None = None,
) -> tuple[list[Ticket], list[Coupon]]:
    """One e-ticket per passenger with one coupon per segment (DESIGN.md §8, §11);
    `passengers` and `segments` in travel order when the caller has them at hand."""
    if passengers is None:
        passengers = list(order.passengers.order_by("position"))
    if segments is None:
        # The segments still flown: not those of an item cancelled or exchanged.
        segments = list(
            Segment.objects.filter(order=order)
            .exclude(journey__item__status="CANCELLED")
            .order_by("journey__position", "position")
        )
    if passengers and connections[DEFAULT_DB_ALIAS].vendor == "postgresql":
        return _tickets_insert(order, now=now, passengers=passengers, segments=segments)
    serials = TicketSerial.objects.bulk_create([TicketSerial() for _ in passengers])
    tickets = Ticket.objects.bulk_create(
        Ticket(order=order, passenger=p, number=ids.ticket_number(s.pk), issued_at=now)
        for p, s in zip(passengers, serials, strict=True)
    )
    coupons = Coupon.objects.bulk_create(
        Coupon(ticket=t, segment=s, number=n)
        for t in tickets
        for n, s in enumerate(segments, start=1)
    )
    return tickets, coupons


def _tickets_insert(
    order: Order, *, now: datetime, passengers: Sequence[Passenger], segments: Sequence[Segment]
) -> tuple[list[Ticket], list[Coupon]]:
    """tickets_issue on PostgreSQL: the serials, the tickets numbered from them and the
    coupons in one statement (_tickets_statement), one round trip where the ORM's
    bulk_create took three; the same rows, serials in passenger order, coupons in segment
    order. Returns them as bulk_create would have."""
    with statement_cursor() as cursor:
        cursor.execute(*tickets_statement(order, now=now, passengers=passengers, segments=segments))
        written = cursor.fetchall()
    return tickets_written(order, written, now=now, passengers=passengers, segments=segments)


def tickets_statement(
    order: Order, *, now: datetime, passengers: Sequence[Passenger], segments: Sequence[Segment]
) -> tuple[str, list]:
    """The statement of tickets_issue on PostgreSQL and its parameters, for a caller that
    sends it with others (a card booking's confirmation, orders.booking.paying) and hands
    what it returned to tickets_written."""
    return _tickets_statement(len(passengers)), [
        [p.pk for p in passengers],
        order.pk,
        settings.AIRLINE_ACCOUNTING_CODE,
        now,
        Coupon.Status.OPEN,
        [s.pk for s in segments],
    ]


def tickets_written(
    order: Order,
    written: Sequence[Sequence],
    *,
    now: datetime,
    passengers: Sequence[Passenger],
    segments: Sequence[Segment],
) -> tuple[list[Ticket], list[Coupon]]:
    """The tickets and coupons tickets_statement wrote, from the rows it returned: tickets
    in passenger order, coupons by ticket then number, as bulk_create returns them."""
    alias = connections[DEFAULT_DB_ALIAS].alias
    by_id = {p.pk: p for p in passengers}
    tickets: dict[int, Ticket] = {}
    coupons = []
    for ticket_id, passenger_id, number, coupon_id, coupon_number in written:
        ticket = tickets.get(ticket_id)
        if ticket is None:
            ticket = tickets[ticket_id] = _stored(
                row_new(
                    Ticket,
                    id=ticket_id,
                    order=order,
                    passenger=by_id[passenger_id],
                    number=number,
                    issued_at=now,
                ),
                alias,
            )
        if coupon_id is not None:
            coupons.append(
                _stored(
                    row_new(
                        Coupon,
                        id=coupon_id,
                        ticket=ticket,
                        segment=segments[coupon_number - 1],
                        number=coupon_number,
                        status=Coupon.Status.OPEN,
                    ),
                    alias,
                )
            )
    position = {p.pk: n for n, p in enumerate(passengers)}
    in_order = sorted(tickets.values(), key=lambda t: position[t.passenger_id])
    rank = {t.pk: n for n, t in enumerate(in_order)}
    coupons.sort(key=lambda c: (rank[c.ticket_id], c.number))
    return in_order, coupons


def _stored(row, alias: str):
    row._state.adding = False
    row._state.db = alias
    return row


@cache
def _tickets_statement(count: int) -> str:
    """The serials (`count`, one per passenger), the tickets and the coupons of
    tickets_issue in one INSERT of each, chained by data-modifying CTEs: the k-th serial
    drawn numbers the ticket of the k-th passenger as ids.ticket_number does (the
    accounting code, then the serial in ten digits, which the serial table's check keeps
    it within), and each ticket gets a coupon per segment, numbered in travel order.
    Parameters: the passengers' ids, the order's id, the accounting code, the issue
    time, the coupons' status, the segments' ids. Answers a row per coupon (ticket id,
    passenger id, ticket number, coupon id, coupon number), or per ticket with no
    coupon (the coupon's columns null)."""
    serial, ticket, coupon = (m._meta.db_table for m in (TicketSerial, Ticket, Coupon))
    defaults = ", ".join(["(DEFAULT)"] * count)
    return (
        f'WITH serial AS (INSERT INTO "{serial}" ("id") VALUES {defaults} RETURNING "id"), '  # noqa: S608 (names from the models)
        'drawn AS (SELECT "id", row_number() OVER (ORDER BY "id") AS n FROM serial), '
        "party AS (SELECT * FROM unnest(%s::bigint[]) WITH ORDINALITY AS p(passenger_id, n)), "
        f'ticket AS (INSERT INTO "{ticket}" ("order_id", "passenger_id", "number", "issued_at") '
        "SELECT %s::bigint, party.passenger_id, %s || lpad(drawn.\"id\"::text, 10, '0'), "
        "%s::timestamptz "
        "FROM drawn JOIN party USING (n) ORDER BY n "
        'RETURNING "id", "passenger_id", "number"), '
        f'coupon AS (INSERT INTO "{coupon}" ("ticket_id", "segment_id", "number", "status") '
        'SELECT ticket."id", flown.segment_id, flown.n, %s FROM ticket '
        "CROSS JOIN unnest(%s::bigint[]) WITH ORDINALITY AS flown(segment_id, n) "
        'RETURNING "id", "ticket_id", "number") '
        'SELECT ticket."id", ticket."passenger_id", ticket."number", coupon."id", coupon."number" '
        'FROM ticket LEFT JOIN coupon ON coupon."ticket_id" = ticket."id"'
    )
