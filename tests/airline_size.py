"""The back office at airline size (issue 27): bookings and webhook deliveries written in
bulk by SQL on top of the full demo schedule (seed_demo), for the page-budget test
(tests/test_admin_pages.py) and `make bench` (benchmarks/admin.py), which measure the
same data.

ORDERS orders of seller DEMO1 (order i has the order id 0SIZE and i in 15 digits), each
with one or two journeys of one segment on a real
flight-date leg (its Leg row), one to three passengers, a contact and a `created` event;
every PENDING_CHANGE_EVERY-th order has a pending airline change (RETIMED) on its first
journey. The legs' inventory holds the seats of the live bookings (class M, or the
cabin's top class where M is full). DELIVERIES webhook deliveries, one per event of the
first orders, nine in ten to an active endpoint and the rest to a disabled one, in every
status."""

from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction

from airline.api import clock
from sellers.models import Seller
from webhooks.models import WebhookEndpoint

ORDERS = 100_000
DELIVERIES = 1_000
PENDING_CHANGE_EVERY = 1_000


def airline_size_seed(*, orders: int = ORDERS, deliveries: int = DELIVERIES) -> None:
    """Write the bookings and deliveries (the schedule must be loaded), then ANALYZE."""
    seller = Seller.objects.get(code="DEMO1")
    now = clock.now()
    active, disabled = (
        WebhookEndpoint.objects.create(
            webhook_id=f"wh_size_{name}",
            seller=seller,
            url=f"https://agency.example/{name}",
            secret="s" * 64,
            active=name == "active",
            created_at=now - timedelta(days=30),
            disabled_at=None if name == "active" else now - timedelta(days=1),
            disabled_reason="" if name == "active" else "failing for 72 hours",
        )
        for name in ("active", "disabled")
    )
    params = {
        "orders": orders,
        "seller": seller.pk,
        "owner": settings.AIRLINE_DESIGNATOR,
        "every": PENDING_CHANGE_EVERY,
        "deliveries": deliveries,
        "active": active.pk,
        "disabled": disabled.pk,
    }
    with transaction.atomic(), connection.cursor() as cursor:
        for statement in SEED_SQL:
            cursor.execute(statement, params)
    with connection.cursor() as cursor:
        for table in TABLES:
            cursor.execute(f"ANALYZE {table}")


TABLES = (
    "network_leginventory",
    "orders_order",
    "orders_journey",
    "orders_segment",
    "orders_leg",
    "orders_passenger",
    "orders_contact",
    "orders_orderevent",
    "orders_airlinechange",
    "webhooks_webhookevent",
    "webhooks_webhookdelivery",
)

SEED_SQL = [
    # The flight-date legs a booked segment may fly, numbered.
    """
    CREATE TEMP TABLE size_legs ON COMMIT DROP AS
    SELECT row_number() OVER (ORDER BY id) - 1 AS n, id, carrier, flight_number, origin_id,
           destination_id, departs_at, arrives_at
    FROM network_flightleg WHERE NOT is_cancelled
    """,
    """
    CREATE TEMP TABLE size_orders ON COMMIT DROP AS
    SELECT i, CASE WHEN i %% 20 = 0 THEN 'CANCELLED' WHEN i %% 5 = 2 THEN 'ONHOLD'
                   ELSE 'CONFIRMED' END AS status
    FROM generate_series(1, %(orders)s) AS i
    """,
    """
    INSERT INTO orders_order (order_id, record_locator, owner_code, seller_id, agency_code,
        channel, status, created_at, updated_at, currency, total, paid, payment_time_limit,
        source_offer_id, remarks, version, voided, credited, retained)
    SELECT '0SIZE' || lpad(i::text, 15, '0'),
           -- '0' is not in the locator alphabet: never a live order's locator
           '0' || upper(lpad(to_hex(i), 5, '0')),
           %(owner)s, %(seller)s, 'SIZEAGT', 'IMPORT', status,
           now() - make_interval(mins => %(orders)s - i),
           now() - make_interval(mins => %(orders)s - i), 'USD', 100 + i %% 900,
           CASE WHEN status = 'ONHOLD' THEN 0 ELSE 100 + i %% 900 END,
           CASE WHEN status = 'ONHOLD' THEN now() + interval '20 hours' END,
           NULL, '', 1, 0, 0, 0
    FROM size_orders ORDER BY i
    """,
    """
    CREATE TEMP TABLE size_journeys ON COMMIT DROP AS
    SELECT o.id AS order_id, j.position, l.*
    FROM orders_order o
    CROSS JOIN LATERAL generate_series(1, 1 + right(o.order_id, 15)::int %% 2) AS j(position)
    JOIN size_legs l ON l.n = (o.id * 7919 + j.position * 31) %% (SELECT count(*) FROM size_legs)
    WHERE o.order_id LIKE '0SIZE%%'
    """,
    """
    INSERT INTO orders_journey (order_id, ref, position, origin, destination, departs_at,
        arrives_at, is_cancelled, departure_date, flight_number, exchanged)
    SELECT order_id, 'JOU-' || order_id || '-' || position, position, origin_id,
           destination_id, departs_at, arrives_at, false, departs_at::date, flight_number,
           false
    FROM size_journeys ORDER BY order_id, position
    """,
    """
    INSERT INTO orders_segment (order_id, journey_id, ref, position, carrier, flight_number,
        origin, destination, departs_at, arrives_at, cabin, rbd, seats, holds_inventory)
    SELECT j.order_id, j.id, 'SEG-' || j.id, 1, s.carrier, s.flight_number, s.origin_id,
           s.destination_id, s.departs_at, s.arrives_at, 'Y', 'M', 1 + j.order_id %% 3,
           o.status <> 'CANCELLED'
    FROM orders_journey j
    JOIN size_journeys s ON s.order_id = j.order_id AND s.position = j.position
    JOIN orders_order o ON o.id = j.order_id
    ORDER BY j.id
    """,
    """
    INSERT INTO orders_leg (segment_id, flight_leg_id, ref, position)
    SELECT g.id, s.id, 'LEG-' || g.id, 1
    FROM orders_segment g
    JOIN orders_journey j ON j.id = g.journey_id
    JOIN size_journeys s ON s.order_id = j.order_id AND s.position = j.position
    ORDER BY g.id
    """,
    # The seats the live bookings hold, taken from their legs' inventory as a sale takes
    # them (airline.network.inventory): a sale of a class adds to `sold` of its row and
    # of every row above it (rank <= its rank). A booking is sold in class M while the
    # seats fit under every row from the top down to M (booked in segment order); one
    # that would not fit is sold in the cabin's top class instead, whose one row is the
    # cabin's capacity. A leg too full even for that breaks the CHECK constraint
    # never_sold_beyond_authorized: the seed fails rather than write an impossible load.
    """
    CREATE TEMP TABLE size_held ON COMMIT DROP AS
    SELECT g.id AS segment_id, l.flight_leg_id AS leg_id, g.seats,
           sum(g.seats) OVER (PARTITION BY l.flight_leg_id ORDER BY g.id) AS upto
    FROM orders_segment g
    JOIN orders_leg l ON l.segment_id = g.id
    JOIN orders_order o ON o.id = g.order_id
    WHERE o.order_id LIKE '0SIZE%%' AND g.holds_inventory
    """,
    """
    UPDATE orders_segment g SET rbd = top.rbd
    FROM size_held h, network_bookingclass m, network_bookingclass top
    WHERE g.id = h.segment_id AND m.rbd = g.rbd AND top.cabin = m.cabin AND top.rank = 0
      AND h.upto > (
          SELECT min(i.authorized - i.sold) FROM network_leginventory i
          WHERE i.leg_id = h.leg_id AND i.cabin = m.cabin AND i.rank <= m.rank
      )
    """,
    """
    UPDATE network_leginventory i SET sold = i.sold + t.seats
    FROM (
        SELECT i.id, sum(h.seats) AS seats
        FROM size_held h
        JOIN orders_segment g ON g.id = h.segment_id
        JOIN network_bookingclass b ON b.rbd = g.rbd
        JOIN network_leginventory i
          ON i.leg_id = h.leg_id AND i.cabin = b.cabin AND i.rank <= b.rank
        GROUP BY i.id
    ) t
    WHERE i.id = t.id
    """,
    """
    INSERT INTO orders_passenger (order_id, ref, offer_pax_id, position, ptc, given_name,
        surname, gender, nationality, residence_country, travel_documents)
    SELECT o.id, 'PAX-' || o.id || '-' || p.position, 'ADT-' || p.position, p.position,
           'ADT', (ARRAY['Ada', 'Charles', 'Mary', 'Grace'])[1 + (o.id + p.position) %% 4],
           'Size' || (o.id %% 5000), '', '', '', '[]'::jsonb
    FROM orders_order o
    CROSS JOIN LATERAL generate_series(1, 1 + right(o.order_id, 15)::int %% 3) AS p(position)
    WHERE o.order_id LIKE '0SIZE%%'
    ORDER BY o.id, p.position
    """,
    """
    UPDATE orders_order o SET lead_given_name = p.given_name, lead_surname = p.surname
    FROM orders_passenger p
    WHERE p.order_id = o.id AND p.position = 1 AND o.order_id LIKE '0SIZE%%'
    """,
    """
    INSERT INTO orders_contact (order_id, ref, type_code, email, phone, given_name, surname)
    SELECT id, 'CTC-' || id, 'P', 'size' || id || '@agency.example', '',
           lead_given_name, lead_surname
    FROM orders_order WHERE order_id LIKE '0SIZE%%'
    """,
    """
    INSERT INTO orders_orderevent (order_id, at, actor, kind, detail)
    SELECT id, created_at, 'import', 'imported', '{}'::jsonb
    FROM orders_order WHERE order_id LIKE '0SIZE%%'
    """,
    """
    INSERT INTO orders_airlinechange (order_id, ref, detected_at, status, journey_refs,
        reasons, removed, added, actions, resolved_by)
    SELECT j.order_id, 'AIC-' || j.order_id, now() - interval '1 hour', 'PENDING',
           jsonb_build_array(j.ref), '["RETIMED"]'::jsonb, '[]'::jsonb, '[]'::jsonb,
           '["ACCEPT"]'::jsonb, ''
    FROM orders_journey j JOIN orders_order o ON o.id = j.order_id
    -- The order's number i (in its id) picks it: i = 1 is among those with deliveries.
    WHERE o.order_id LIKE '0SIZE%%' AND o.status <> 'CANCELLED' AND j.position = 1
      AND right(o.order_id, 15)::int %% %(every)s = 1
    """,
    """
    INSERT INTO webhooks_webhookevent (event_id, seller_id, order_id, type, sequence,
        created_at, data)
    SELECT 'evt_size_' || id, seller_id, id, 'order.created', 1, created_at, ''
    FROM orders_order WHERE order_id LIKE '0SIZE%%' ORDER BY id LIMIT %(deliveries)s
    """,
    """
    INSERT INTO webhooks_webhookdelivery (event_id, endpoint_id, order_id, sequence, status,
        attempts, created_at, next_attempt_at, give_up_at, last_attempt_at,
        last_status_code, last_error, delivered_at)
    SELECT e.id, CASE WHEN e.id %% 10 = 0 THEN %(disabled)s ELSE %(active)s END, e.order_id,
           1, s.status, s.attempts, e.created_at, now() + interval '5 minutes',
           e.created_at + interval '72 hours',
           CASE WHEN s.attempts > 0 THEN now() - interval '1 minute' END,
           CASE WHEN s.status = 'DELIVERED' THEN 200
                WHEN s.attempts > 0 THEN 503 END,
           CASE WHEN s.status IN ('PENDING', 'FAILED') AND s.attempts > 0
                THEN 'HTTP 503' ELSE '' END,
           CASE WHEN s.status = 'DELIVERED' THEN now() - interval '1 minute' END
    FROM webhooks_webhookevent e
    CROSS JOIN LATERAL (
        SELECT CASE WHEN e.id %% 4 = 0 THEN 'PENDING' WHEN e.id %% 4 = 1 THEN 'FAILED'
                    ELSE 'DELIVERED' END AS status,
               CASE WHEN e.id %% 8 = 0 THEN 0 ELSE 1 + e.id %% 5 END AS attempts
    ) AS s
    WHERE e.event_id LIKE 'evt_size_%%'
    """,
]


def inventory_mismatches() -> list[tuple[int, int, int]]:
    """(row id, sold, seats held) of each class row whose `sold` is not the seats the live
    bookings on its leg hold in its class or any class below it (a sale of class X adds
    to every row of rank <= X's rank)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT i.id, i.sold, coalesce(sum(g.seats), 0)
            FROM network_leginventory i
            LEFT JOIN (
                orders_leg l
                JOIN orders_segment g ON g.id = l.segment_id AND g.holds_inventory
                JOIN network_bookingclass b ON b.rbd = g.rbd
            ) ON l.flight_leg_id = i.leg_id AND b.cabin = i.cabin AND b.rank >= i.rank
            GROUP BY i.id
            HAVING i.sold <> coalesce(sum(g.seats), 0)
            """
        )
        return cursor.fetchall()


def admin_pages(user) -> list[tuple[str, str]]:
    """(name, path) of every changelist and change page of the admin `user` sees (the
    first row of each model; for bookings one with a pending airline change and webhook
    deliveries), and the searches and filters staff use most."""
    from django.contrib import admin
    from django.test import RequestFactory
    from django.urls import reverse

    from orders.models import AirlineChange

    request = RequestFactory().get("/admin/")
    request.user = user
    pages = []
    for app in admin.site.get_app_list(request):
        for entry in app["models"]:
            model = entry["model"]
            label = f"{model._meta.app_label}.{model._meta.model_name}"
            pages.append((f"{label} list", entry["admin_url"]))
            if label == "orders.order":
                pk = (
                    AirlineChange.objects.filter(order__order_id__startswith="0SIZE")
                    .values_list("order_id", flat=True)
                    .first()
                )
            else:
                pk = model._default_manager.order_by("pk").values_list("pk", flat=True).first()
            if pk is not None:
                change = reverse(
                    f"admin:{model._meta.app_label}_{model._meta.model_name}_change", args=[pk]
                )
                pages.append((f"{label} page", change))
    pages += [
        ("legs search MX102 date", "/admin/network/flightleg/?q=MX102+2026-12-08"),
        ("legs search PVD-CHS", "/admin/network/flightleg/?q=PVD-CHS"),
        # The list has no actions, so no checkbox column: 12 is "Load factor", 13 "Status".
        ("legs sorted by status", "/admin/network/flightleg/?o=13"),
        ("legs sorted by load factor", "/admin/network/flightleg/?o=12"),
        ("bookings search surname", "/admin/orders/order/?q=Size4242"),
        ("bookings schedule changed", "/admin/orders/order/?schedule_changed=yes"),
        ("deliveries pending", "/admin/webhooks/webhookdelivery/?status__exact=PENDING"),
    ]
    return pages
