"""Thousands of bookings on one flight number across its dates, written by SQL (not the
API), for the season-retime test (tests/e2e/test_season_retime.py) and
`python -m benchmarks.schedule`.

Each booking is a copy of a template order booked through the API (one journey of one
segment on the flight, no services), so that every row, its prices and its fare wire
are what a real booking writes; a copy differs in its ids, its record locator, its
flight date (the flight's dates are dealt out in turn) and its booking class (the
cabin's top class, whose allowance is the cabin: the copies never overbook). Seat
inventory is moved by what the copies hold, as sales move it.
"""

from django.db import connection, transaction
from django.db.models import Model

from orders.models import Contact, Journey, Leg, Order, OrderEvent, OrderItem, Passenger, Segment

PREFIX = "0SEASON"  # '0' is in no live order id's alphabet


def flight_bookings_seed(*, template: Order, count: int, days_out: int = 2) -> int:
    """Write `count` copies of `template` (ONHOLD or CONFIRMED, one journey of one
    segment, no services) on its flight's dates at least `days_out` days ahead, then
    ANALYZE; returns the number of dates they are spread over."""
    segment = Segment.objects.get(order=template)
    assert not template.services.exists(), "the template must have no services"
    params = {
        "template": template.pk,
        "count": count,
        "prefix": PREFIX,
        "flight": segment.flight_number,
        "days_out": days_out,
        "cabin": segment.cabin,
    }
    with transaction.atomic(), connection.cursor() as cursor:
        for statement in _statements():
            cursor.execute(statement, params)
        cursor.execute("SELECT count(*) FROM season_dates")
        dates = cursor.fetchone()[0]
    with connection.cursor() as cursor:
        for model in (Order, Passenger, Contact, Journey, OrderItem, Segment, Leg, OrderEvent):
            cursor.execute(f"ANALYZE {model._meta.db_table}")
    return dates


def _copy(model: type[Model], source: str, overrides: dict[str, str], where: str) -> str:
    """INSERT ... SELECT of every concrete column of `model` but its id, each taken from
    the template row `t` unless `overrides` gives its expression."""
    columns = [f.column for f in model._meta.concrete_fields if not f.primary_key]
    values = [overrides.get(c, f't."{c}"') for c in columns]
    quoted = ", ".join(f'"{c}"' for c in columns)
    return (
        f"INSERT INTO {model._meta.db_table} ({quoted}) "  # noqa: S608
        f"SELECT {', '.join(values)} FROM {source} WHERE {where}"
    )


def _statements() -> list[str]:
    order, journey, segment = (m._meta.db_table for m in (Order, Journey, Segment))
    clone = "season_clones c"
    return [
        # The flight's dates far enough ahead, each with its legs, numbered.
        """
        CREATE TEMP TABLE season_dates ON COMMIT DROP AS
        SELECT row_number() OVER (ORDER BY flight_date) - 1 AS n, flight_date
        FROM network_flightleg
        WHERE flight_number = %(flight)s AND NOT is_cancelled
          AND departs_at > now() + make_interval(days => %(days_out)s)
        GROUP BY flight_date HAVING bool_and(NOT is_cancelled)
        """,
        """
        CREATE TEMP TABLE season_legs ON COMMIT DROP AS
        SELECT d.n, l.id, l.leg_sequence, l.departs_at, l.arrives_at
        FROM season_dates d JOIN network_flightleg l
          ON l.flight_date = d.flight_date AND l.flight_number = %(flight)s
        """,
        """
        CREATE TEMP TABLE season_clones ON COMMIT DROP AS
        SELECT i, %(prefix)s || lpad(i::text, 17, '0') AS order_id,
               (i - 1) %% (SELECT count(*) FROM season_dates) AS n
        FROM generate_series(1, %(count)s) AS i
        """,
        _copy(
            Order,
            f"{order} t CROSS JOIN {clone}",
            {
                "order_id": "c.order_id",
                "record_locator": "'0' || upper(lpad(to_hex(c.i), 5, '0'))",
                "source_offer_id": "NULL",
                "version": "1",
            },
            "t.id = %(template)s",
        ),
        """
        CREATE TEMP TABLE season_orders ON COMMIT DROP AS
        SELECT o.id AS order_id, c.n FROM orders_order o JOIN season_clones c
          ON c.order_id = o.order_id
        """,
        *(
            _copy(
                model,
                f"{model._meta.db_table} t CROSS JOIN season_orders s",
                {"order_id": "s.order_id"},
                "t.order_id = %(template)s",
            )
            for model in (Passenger, Contact)
        ),
        _copy(
            Journey,
            f"{journey} t CROSS JOIN season_orders s",
            {
                "order_id": "s.order_id",
                "departs_at": "(SELECT min(departs_at) FROM season_legs l WHERE l.n = s.n)",
                "arrives_at": "(SELECT max(arrives_at) FROM season_legs l WHERE l.n = s.n)",
                "departure_date": (
                    "(SELECT (min(l.departs_at) AT TIME ZONE min(st.time_zone))::date "
                    "FROM season_legs l, network_station st "
                    "WHERE l.n = s.n AND st.code = t.origin)"
                ),
            },
            "t.order_id = %(template)s",
        ),
        _copy(
            OrderItem,
            "orders_orderitem t CROSS JOIN season_orders s "
            "JOIN orders_journey tj ON tj.id = t.journey_id "
            "JOIN orders_journey j ON j.order_id = s.order_id AND j.ref = tj.ref",
            {"order_id": "s.order_id", "journey_id": "j.id"},
            "t.order_id = %(template)s",
        ),
        _copy(
            Segment,
            f"{segment} t CROSS JOIN season_orders s "
            "JOIN orders_journey tj ON tj.id = t.journey_id "
            "JOIN orders_journey j ON j.order_id = s.order_id AND j.ref = tj.ref",
            {
                "order_id": "s.order_id",
                "journey_id": "j.id",
                "departs_at": "j.departs_at",
                "arrives_at": "j.arrives_at",
                "rbd": (
                    "(SELECT rbd FROM network_bookingclass "
                    "WHERE cabin = t.cabin ORDER BY rank LIMIT 1)"
                ),
            },
            "t.order_id = %(template)s",
        ),
        _copy(
            Leg,
            "orders_leg t JOIN orders_segment ts ON ts.id = t.segment_id "
            "CROSS JOIN season_orders s "
            "JOIN orders_segment g ON g.order_id = s.order_id AND g.ref = ts.ref "
            "JOIN season_legs l ON l.n = s.n AND l.leg_sequence = t.position",
            {"segment_id": "g.id", "flight_leg_id": "l.id"},
            "ts.order_id = %(template)s",
        ),
        _copy(
            OrderEvent,
            "orders_orderevent t CROSS JOIN season_orders s",
            {"order_id": "s.order_id"},
            "t.order_id = %(template)s AND t.kind = 'created'",
        ),
        # What the copies hold, taken from their legs' top class (sold counts nest down
        # from it: a class's row counts the seats of every class at or below its rank,
        # and the copies sell the top one, rank 0).
        """
        UPDATE network_leginventory i SET sold = i.sold + h.seats
        FROM (
            SELECT l.flight_leg_id, sum(g.seats) AS seats
            FROM orders_leg l JOIN orders_segment g ON g.id = l.segment_id
            JOIN season_orders s ON s.order_id = g.order_id
            GROUP BY 1
        ) h
        WHERE i.leg_id = h.flight_leg_id AND i.cabin = %(cabin)s AND i.rank = 0
        """,
    ]
