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
"""

import os
import sys
import time

from benchmarks.common import p95

os.environ.setdefault(
    "BENCH_DATABASE", os.environ.get("BENCH_ADMIN_DATABASE", "airline_bench_admin")
)
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/15")
os.environ.setdefault("CACHE_KEY_PREFIX", "bench-admin")

from benchmarks.common import prepare_environment, recreate_database, table, write_figures

REPEATS = int(os.environ.get("ADMIN_REPEATS", "20"))
TARGET_MS = 300.0
LEGS_TARGET_MS = 200.0
LEGS_LIST = "network.flightleg list"


def main() -> None:
    prepare_environment()
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
    call_command("seed_demo", stdout=StringIO())
    airline_size_seed()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    print(
        f"Seeded the demo schedule and airline-size bookings in {time.monotonic() - started:.0f} s"
    )

    user = get_user_model().objects.create_superuser("bench-admin", email=None, password=None)
    client = Client()
    client.force_login(user)
    rows, missed = [], []
    for name, path in admin_pages(user):
        client.get(path)  # warm: templates compiled, caches filled, as a running server has
        times = []
        for _ in range(REPEATS):
            with CaptureQueriesContext(connection) as queries:
                begun = time.perf_counter()
                response = client.get(path)
                times.append(time.perf_counter() - begun)
            assert response.status_code == 200, (path, response.status_code)
        target = LEGS_TARGET_MS if name == LEGS_LIST else TARGET_MS
        worst = p95(times) * 1000
        rows.append((name, sorted(times)[len(times) // 2] * 1000, worst, len(queries), target))
        if worst > target:
            missed.append(name)

    table(
        f"Back-office pages at airline size: server time in this process, {REPEATS} requests each",
        ("page", "median", "p95", "queries", "target p95"),
        [
            (name, f"{m:.1f} ms", f"{p:.1f} ms", n, f"<= {t:.0f} ms {'ok' if p <= t else 'MISSED'}")
            for name, m, p, n, t in rows
        ],
    )
    verdict = f"{len(rows) - len(missed)} of {len(rows)} pages within target" + (
        f"; missed: {', '.join(missed)}" if missed else ""
    )
    print(f"\n{verdict}")
    write_figures("admin", [verdict])


if __name__ == "__main__":
    sys.exit(main())
