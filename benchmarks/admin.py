"""Back-office pages at airline size (issue 27). Run with `make bench` (or
`python -m benchmarks.admin`).

A scratch database `airline_bench_admin` (its own: other benchmarks may run at the same
time; BENCH_ADMIN_DATABASE names another), Redis db 15, seeded with the full demo
schedule (seed_demo) and the bookings and webhook deliveries of tests/airline_size.py
(100,000 orders, 1,000 deliveries), then VACUUM ANALYZE, as autovacuum would leave a
live database. The same pages as the page-budget test (tests/test_admin_pages.py): every
changelist and change page, and the searches and filters staff use most, each requested
REPEATS times by a signed-in superuser through Django's test client in this process, so
the time is the server's own (middleware, queries, template) without a network. Printed:
each page's median and p95 and its query count, against the targets: p95 <= 300 ms for
every page, <= 200 ms for the flight-date legs list.

To iterate on a few pages: ADMIN_REUSE=1 reuses the database a run of this benchmark
with BENCH_KEEP=1 kept (only migrating it), ADMIN_PAGES=legs,bookings times only the
pages whose names contain one of the words.
"""

import os
import sys
import time

# Before benchmarks.common is imported: it reads BENCH_DATABASE once, at import.
os.environ.setdefault(
    "BENCH_DATABASE", os.environ.get("BENCH_ADMIN_DATABASE", "airline_bench_admin")
)
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/15")
os.environ.setdefault("CACHE_KEY_PREFIX", "bench-admin")

from benchmarks.common import (
    median,
    p95,
    prepare_environment,
    recreate_database,
    scratch,
    table,
    tiny,
    write_figures,
)

REPEATS = int(os.environ.get("ADMIN_REPEATS", tiny("20", "1")))
TARGET_MS = 300.0
LEGS_TARGET_MS = 200.0
LEGS_LIST = "network.flightleg list"


def main() -> None:
    prepare_environment()
    reuse = os.environ.get("ADMIN_REUSE") == "1" and seeded()
    if not reuse:
        recreate_database()
    import django

    django.setup()
    from io import StringIO

    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from tests.airline_size import admin_pages, airline_size_seed

    started = time.monotonic()
    call_command("migrate", verbosity=0)
    if not reuse:
        call_command("seed_demo", stdout=StringIO())
        airline_size_seed()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    print(
        ("Reused" if reuse else "Seeded")
        + f" the demo schedule and airline-size bookings in {time.monotonic() - started:.0f} s"
    )

    user, _ = get_user_model().objects.get_or_create(
        username="bench-admin", defaults={"is_staff": True, "is_superuser": True}
    )
    client = Client()
    client.force_login(user)
    wanted = [w for w in os.environ.get("ADMIN_PAGES", "").split(",") if w]
    # As a server worker runs (airline/wsgi.py): what was loaded before serving frozen out
    # of the cyclic collector, and young collections spaced out.
    from airline.collector import collector_settled

    collector_settled()
    rows, missed = [], []
    for name, path in admin_pages(user):
        if wanted and not any(word in name for word in wanted):
            continue
        client.get(path)  # warm: templates compiled, caches filled, as a running server has
        times, cpu = [], []
        for _ in range(REPEATS):
            with CaptureQueriesContext(connection) as queries:
                begun, cpu_begun = time.perf_counter(), time.process_time()
                response = client.get(path)
                times.append(time.perf_counter() - begun)
                cpu.append(time.process_time() - cpu_begun)
            assert response.status_code == 200, (path, response.status_code)
        target = LEGS_TARGET_MS if name == LEGS_LIST else TARGET_MS
        worst = p95(times) * 1000
        rows.append((name, median(times) * 1000, worst, median(cpu) * 1000, len(queries), target))
        if worst > target:
            missed.append(name)

    table(
        f"Back-office pages at airline size: server time in this process, {REPEATS} requests "
        "each; cpu: this process's own CPU time (median), which other work on the machine "
        "does not inflate as it does the wall time (the database's time is not in it)",
        ("page", "median", "p95", "cpu", "queries", "target p95"),
        [
            (
                name,
                f"{m:.1f} ms",
                f"{p:.1f} ms",
                f"{c:.1f} ms",
                n,
                f"<= {t:.0f} ms {'ok' if p <= t else 'MISSED'}",
            )
            for name, m, p, c, n, t in rows
        ],
    )
    verdict = f"{len(rows) - len(missed)} of {len(rows)} pages within target" + (
        f"; missed: {', '.join(missed)}" if missed else ""
    )
    print(f"\n{verdict}")
    if not wanted:  # the figures in the manual are of every page
        write_figures("admin", [verdict])


def seeded() -> bool:
    """Whether the bench database holds this benchmark's bookings already."""
    import psycopg

    from benchmarks.common import BENCH_DATABASE

    try:
        with psycopg.connect(f"postgres://postgres@127.0.0.1:5432/{BENCH_DATABASE}") as conn:
            return bool(
                conn.execute(
                    "SELECT 1 FROM orders_order WHERE order_id LIKE '0SIZE%' LIMIT 1"
                ).fetchone()
            )
    except psycopg.Error:
        return False


if __name__ == "__main__":
    with scratch():
        sys.exit(main())
