"""OrderList's data for the orders benchmark: orders for the key's agency written by
SQL, the list's cases, and each case's SQL by EXPLAIN ANALYZE."""

import re
import time

from benchmarks.common import (
    AGENCY,
    median,
    nonstop_markets,
    timings,
)
from benchmarks.orders.bookings import SURNAMES
from benchmarks.orders.sizes import LIST_ORDERS, OTHER_EVERY


def insert_list_orders(count: int = LIST_ORDERS) -> tuple[float, list]:
    """`count` (LIST_ORDERS) more orders for AGENCY (and every OTHER_EVERY-th one another
    agency's),
    each with 1-2 journeys of one segment and 1-3 passengers, written by SQL; then
    ANALYZE. Returns the seconds it took and OrderList's cases (name, query params)."""
    from django.conf import settings
    from django.db import connection, transaction

    from sellers.models import Seller

    seller = Seller.objects.get(code="DEMO1")
    markets = nonstop_markets()
    total = count * OTHER_EVERY // (OTHER_EVERY - 1)
    started = time.monotonic()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(max(id), 0) FROM orders_order")
        (first_id,) = cursor.fetchone()
        cursor.execute(
            """
            INSERT INTO orders_order (order_id, record_locator, owner_code, seller_id,
                agency_code, channel, status, created_at, updated_at, currency, total, paid,
                payment_time_limit, source_offer_id, remarks)
            SELECT
                -- '0' is not in the locator alphabet: never a live order's id or locator
                '0BENCH' || lpad(i::text, 14, '0'),
                '0' || substr(a, (i >> 20) %% 32 + 1, 1) || substr(a, (i >> 15) %% 32 + 1, 1)
                    || substr(a, (i >> 10) %% 32 + 1, 1) || substr(a, (i >> 5) %% 32 + 1, 1)
                    || substr(a, i %% 32 + 1, 1),
                %(owner)s, %(seller)s,
                CASE WHEN i %% %(other_every)s = 0 THEN 'OTHERAGT' ELSE %(agency)s END,
                'IMPORT', s.status,
                now() - make_interval(secs => (%(total)s - i) * 60),
                now() - make_interval(secs => (%(total)s - i) * 60),
                'USD', 100 + i %% 900,
                CASE WHEN s.status = 'ONHOLD' THEN 0 ELSE 100 + i %% 900 END,
                CASE WHEN s.status = 'ONHOLD' THEN now() + interval '20 hours' END,
                NULL, ''
            FROM generate_series(1, %(total)s) AS i,
                 LATERAL (SELECT CASE WHEN i %% 20 = 0 THEN 'CANCELLED'
                                      WHEN i %% 50 = 1 THEN 'CLOSED'
                                      WHEN i %% 5 = 2 THEN 'ONHOLD'
                                      ELSE 'CONFIRMED' END AS status) AS s,
                 (SELECT 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'::text AS a) AS alphabet
            ORDER BY i
            """,
            {
                "owner": settings.AIRLINE_DESIGNATOR,
                "seller": seller.pk,
                "agency": AGENCY,
                "other_every": OTHER_EVERY,
                "total": total,
            },
        )
        # Journeys: outbound from 30 days ago to 300 days on (about 9% already flown),
        # every other order with a return 7 days later; the market from the demo's.
        cursor.execute(
            """
            INSERT INTO orders_journey (order_id, ref, position, origin, destination,
                departs_at, arrives_at, is_cancelled, departure_date, flight_number)
            SELECT o.id, 'JOU-' || o.id || '-' || j.position, j.position,
                   CASE WHEN j.position = 1 THEN m.origin ELSE m.destination END,
                   CASE WHEN j.position = 1 THEN m.destination ELSE m.origin END,
                   d.departs + (j.position - 1) * interval '7 days',
                   d.departs + (j.position - 1) * interval '7 days' + interval '150 minutes',
                   false,
                   ((d.departs + (j.position - 1) * interval '7 days') AT TIME ZONE
                    (SELECT time_zone FROM network_station
                     WHERE code = CASE WHEN j.position = 1 THEN m.origin
                                       ELSE m.destination END))::date,
                   -- the flight number the segment below gets
                   100 + (o.id * 31 + j.position) %% 900
            FROM orders_order o
            CROSS JOIN LATERAL generate_series(1, 1 + o.id %% 2) AS j(position)
            CROSS JOIN LATERAL (
                SELECT date_trunc('day', now()) - interval '30 days'
                       + ((o.id * 7919) %% 330) * interval '1 day'
                       + (6 + o.id %% 15) * interval '1 hour' AS departs) AS d
            JOIN (SELECT row_number() OVER () - 1 AS n, origin, destination
                  FROM unnest(%(origins)s::text[], %(destinations)s::text[])
                       AS t(origin, destination)) AS m
              ON m.n = o.id %% %(markets)s
            WHERE o.id > %(first_id)s
            ORDER BY o.id, j.position
            """,
            {
                "origins": [o for o, _ in markets],
                "destinations": [d for _, d in markets],
                "markets": len(markets),
                "first_id": first_id,
            },
        )
        cursor.execute(
            """
            INSERT INTO orders_segment (order_id, journey_id, ref, position, carrier,
                flight_number, origin, destination, departs_at, arrives_at, cabin, rbd,
                seats, holds_inventory)
            SELECT j.order_id, j.id, 'SEG-' || j.id, 1, %(carrier)s, j.flight_number,
                   j.origin, j.destination, j.departs_at, j.arrives_at, 'Y', 'M',
                   1 + j.order_id %% 3, true
            FROM orders_journey j
            WHERE j.order_id > %(first_id)s
            ORDER BY j.id
            """,
            {"carrier": settings.AIRLINE_DESIGNATOR, "first_id": first_id},
        )
        cursor.execute(
            """
            INSERT INTO orders_passenger (order_id, ref, offer_pax_id, position, ptc,
                given_name, surname, date_of_birth, gender, nationality, residence_country,
                loyalty_program, travel_documents, contacts, infant_id)
            SELECT o.id, 'PAX-' || lpad(p.position::text, 8, '0'),
                   CASE WHEN p.position = 3 THEN 'CHD-1' ELSE 'ADT-' || p.position END,
                   p.position, CASE WHEN p.position = 3 THEN 'CHD' ELSE 'ADT' END,
                   (%(given)s::text[])[1 + (o.id + p.position) %% 4],
                   (%(surnames)s::text[])[1 + (o.id * 7) %% %(n_surnames)s],
                   NULL, '', '', '', NULL, '[]'::jsonb, NULL, NULL
            FROM orders_order o
            CROSS JOIN LATERAL generate_series(1, 1 + o.id %% 3) AS p(position)
            WHERE o.id > %(first_id)s
            ORDER BY o.id, p.position
            """,
            {
                "given": ["Ada", "Charles", "Mary", "Grace"],
                "surnames": SURNAMES,
                "n_surnames": len(SURNAMES),
                "first_id": first_id,
            },
        )
        cursor.execute(
            """
            UPDATE orders_order o SET lead_given_name = p.given_name, lead_surname = p.surname
            FROM orders_passenger p
            WHERE p.order_id = o.id AND p.position = 1 AND o.id > %(first_id)s
            """,
            {"first_id": first_id},
        )
        cursor.execute(
            "SELECT count(*) FROM orders_order WHERE agency_code = %s AND id > %s",
            [AGENCY, first_id],
        )
        (written,) = cursor.fetchone()
        assert written == count, written
    with connection.cursor() as cursor:
        for table in ("orders_order", "orders_journey", "orders_segment", "orders_passenger"):
            cursor.execute(f"VACUUM ANALYZE {table}")  # the lead-name UPDATE left dead rows
        # Write out now what the load dirtied (hundreds of MB), rather than let a
        # checkpoint spread those writes over the timed list phases that follow.
        cursor.execute("CHECKPOINT")
        cursor.execute("SELECT count(*) FROM orders_order WHERE agency_code = %s", [AGENCY])
        (agency_orders,) = cursor.fetchone()
        cursor.execute(
            "SELECT id FROM orders_order WHERE agency_code = %s ORDER BY id OFFSET %s LIMIT 1",
            [AGENCY, agency_orders // 2],
        )
        (middle,) = cursor.fetchone()
        # A departure day and a surname that the written orders do have.
        cursor.execute(
            "SELECT (departs_at AT TIME ZONE 'UTC')::date FROM orders_journey "
            "WHERE order_id > %s AND departs_at > now() + interval '60 days' "
            "ORDER BY id LIMIT 1",
            [first_id],
        )
        (day,) = cursor.fetchone()
    seconds = time.monotonic() - started
    common = SURNAMES[0]
    cases = [
        ("page of 100, first", {"pageSize": 100}),
        ("page of 100, deep", {"pageSize": 100, "lastIndex": middle}),
        ("page of 1000, first", {"pageSize": 1000}),
        ("page of 1000, deep", {"pageSize": 1000, "lastIndex": middle}),
        (f"lastName={common}, 100", {"pageSize": 100, "lastName": common}),
        (f"departureDate={day}, 100", {"pageSize": 100, "departureDate": day.isoformat()}),
        ("lastName=Nobody (no match), 100", {"pageSize": 100, "lastName": "Nobody"}),
    ]
    return seconds, cases


def explain_list(cases: list) -> dict:
    """For each OrderList case, in this process: the page's time one at a time (search,
    lazy expiry and summaries, as the view does them, without HTTP), the SQL time of its
    queries by EXPLAIN ANALYZE, and the plan of the main (orders) query."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from airline.network.itineraries import network_index
    from orders.reading import presenters
    from orders.reading.selectors import orders_list
    from orders.requests.checks import check_order_search
    from orders.requests.serializers import OrderListQuery
    from sellers.authentication import Principal
    from sellers.models import ApiKey, Seller

    network_index()  # summaries show local departure dates
    found = {}
    for name, params in cases:
        query = OrderListQuery(data={k: str(v) for k, v in params.items()})
        query.is_valid(raise_exception=True)
        principal = Principal(
            key=ApiKey(agency_code=AGENCY), seller=Seller.objects.get(code="DEMO1")
        )
        search = check_order_search(query.validated_data, principal=principal)

        def page(search=search) -> list:
            orders, _more = orders_list(search)
            return [presenters.summary(o) for o in orders]

        page()
        in_process = median(timings(page, 5))
        with CaptureQueriesContext(connection) as captured:
            page()
        times = []
        with connection.cursor() as cursor:
            for executed in captured.captured_queries:
                cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + executed["sql"])
                lines = [row[0] for row in cursor.fetchall()]
                times.append(
                    float(re.search(r"Execution Time: ([\d.]+)", lines[-1]).group(1)) / 1000
                )
                if len(times) == 1:
                    plan, main_sql = "\n".join(lines), executed["sql"]
        found[name] = {
            "in_process": in_process,
            "main": times[0],
            "all": sum(times),
            "queries": len(times),
            "plan": plan,
            # The column list says nothing about the plan.
            "sql": re.sub(r"^SELECT .*? FROM", "SELECT ... FROM", main_sql),
        }
    return found
