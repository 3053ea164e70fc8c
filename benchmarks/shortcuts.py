"""Framework shortcuts benchmark. Run with `make bench` (or
`python -m benchmarks.shortcuts`).

Each place the code goes past a framework's public API for speed has a setting that turns
it off; this measures each one against the same work with it off, in one process, rounds
booking by booking on and off in turn, so that the machine's drift hits both alike:

- DB_DIRECT_INSERT (orders/core/rows.py: a booking's rows by one INSERT per model built outside
  the ORM's compiler, else bulk_create): create order on hold;
- DB_DIRECT_READS (orders/reading/part_rows.py: an order's parts read by statements built
  once per process, else prefetch_related): retrieve an order on hold whose view is not
  kept, so that it is rendered from its parts (the hold booked before the timing, the
  kept views dropped);
- DB_PREPARED_STATEMENTS (airline/sql.py: a booking's hot statements prepared, psycopg's
  prepare_threshold): create order on hold;
- DB_COMMIT_WITHOUT_FLUSH (airline.sql.commit_without_flush: a card booking's
  confirmation commits without waiting for its WAL flush; off by default): create order
  by card (test gateway);
- DB_DIRECT_INSERT and DB_PREPARED_STATEMENTS off at once: create order on hold.

Requests go through Django's test client in this process, one at a time, against a fresh
scratch database BENCH_DATABASE (`airline_bench`) seeded with the demo airline; every
booking is a priced round trip for 2 ADT + 1 CHD, its offer searched and priced before
any timing. The figures, per request: its time, this process's CPU (the service's own
Python, the request's thread) and the CPU of the PostgreSQL backend serving it (both
from the kernel's schedstat, to the nanosecond: on a busy machine they move far less
than the time does); the median and p95 of each, and the ratio of the medians, off / on:
what turning the shortcut off costs.
"""

import json
import os
import random
import time
from datetime import UTC, datetime, timedelta
from io import StringIO

from benchmarks.common import (
    median,
    ms,
    p95,
    prepare_environment,
    process_cpu_ns,
    recreate_database,
    scratch,
    table,
    tiny,
    write_figures,
)

# Bookings with the shortcut on and off, each.
PAIRS = int(os.environ.get("BENCH_PAIRS", tiny("60", "2")))
WARMUP = tiny(6, 1)  # bookings before any timing: caches, indexes and prepared statements filled
# (name, settings with the shortcut on, with it off, the request); {} is the default.
SHORTCUTS = [
    ("direct INSERT (orders/core/rows.py)", {}, {"DB_DIRECT_INSERT": False}, "hold"),
    ("direct reads (orders/reading/part_rows.py)", {}, {"DB_DIRECT_READS": False}, "retrieve"),
    ("prepared statements (airline/sql.py)", {}, {"DB_PREPARED_STATEMENTS": False}, "hold"),
    ("both off", {}, {"DB_DIRECT_INSERT": False, "DB_PREPARED_STATEMENTS": False}, "hold"),
    # The one off by default: measured by turning it on.
    ("commit without flush", {"DB_COMMIT_WITHOUT_FLUSH": True}, {}, "card"),
]


def main() -> None:
    started = time.monotonic()
    prepare_environment()
    recreate_database()
    import django

    django.setup()
    from django.core.cache import cache
    from django.core.management import call_command
    from django.test import Client

    from benchmarks.common import bench_api_key

    call_command("migrate", verbosity=0)
    call_command("seed_demo", stdout=StringIO())
    cache.delete_pattern("*")  # this benchmark's keys only (CACHE_KEY_PREFIX): no past run's
    client = Client()
    response = client.post(
        "/auth/token",
        "{}",
        content_type="application/json",
        HTTP_X_API_KEY=bench_api_key("bench-shortcuts"),
    )
    assert response.status_code in (200, 201), response.content
    auth = {"HTTP_AUTHORIZATION": f"Bearer {response.json()['access_token']}"}

    wanted = WARMUP + len(SHORTCUTS) * 2 * PAIRS
    bodies = prepared_bookings(client, auth, wanted)
    from django.db import connection

    connection.ensure_connection()  # book() reads its backend's CPU
    for body in bodies[:WARMUP]:
        book(client, auth, body, "hold")
    bodies = bodies[WARMUP:]

    rows = []
    for label, on, off, request in SHORTCUTS:
        spent: dict[bool, list[Spent]] = {True: [], False: []}
        # On and off in turn, request by request (off first every other pair): the
        # machine's drift, which moves a median by half on a busy machine, hits both.
        for n in range(PAIRS):
            for shortcut in (True, False) if n % 2 == 0 else (False, True):
                body, bodies = bodies[0], bodies[1:]
                with _settings(on if shortcut else off):
                    spent[shortcut].append(measured(client, auth, body, request))
        for k, measure in enumerate(("time", "CPU here", "PostgreSQL CPU")):
            rows.append(
                (
                    f"{REQUESTS[request]}, {measure}: {label}",
                    [x[k] for x in spent[True]],
                    [x[k] for x in spent[False]],
                )
            )

    table(
        "Framework shortcuts, each with its setting on and off, request by request in one "
        "process: its time, the service's CPU, PostgreSQL's backend CPU",
        ("measure", "on: median", "on: p95", "off: median", "off: p95", "off / on"),
        [
            (
                name,
                ms(median(on)),
                ms(p95(on)),
                ms(median(off)),
                ms(p95(off)),
                f"{median(off) / median(on):.2f}x" if median(on) else "-",
            )
            for name, on, off in rows
        ],
    )
    write_figures(
        "shortcuts",
        [
            f"{PAIRS} requests with each shortcut on and {PAIRS} with it off; the commit "
            "without a flush is off by default and measured by turning it on",
            "the retrieve renders the view of a hold booked before its timing, every kept "
            "view dropped first",
            "'off' of the direct INSERT is bulk_create with the JSON columns read back (one "
            "query a model), so that the rows answer as a read would",
        ],
    )
    print(f"\n(whole benchmark {time.monotonic() - started:.0f} s)")


def _settings(changed: dict):
    from django.test import override_settings

    return override_settings(**changed)


def prepared_bookings(client, auth: dict, wanted: int) -> list[dict]:
    """Create-order bodies for `wanted` priced round trips, each on its own market-day."""
    from benchmarks.common import nonstop_markets
    from benchmarks.orders.bookings import PARTY, SURNAMES, booking_body

    markets = nonstop_markets()
    today = datetime.now(tz=UTC).date()
    rng = random.Random(29)
    bodies: list[dict] = []
    k = 0
    while len(bodies) < wanted:
        if k > wanted * 3:
            raise SystemExit(f"only {len(bodies)} of {wanted} priced offers; cannot go on")
        origin, destination = markets[k % len(markets)]
        day = today + timedelta(days=3 + (k // len(markets)) * 13 % 290)
        k += 1
        back = day + timedelta(days=7)
        search = {
            "originDestinations": [
                {"origin": origin, "destination": destination, "departureDate": day.isoformat()},
                {"origin": destination, "destination": origin, "departureDate": back.isoformat()},
            ],
            "passengers": PARTY,
        }
        found = _post(client, auth, "/json/v1/offers", search)
        if found.status_code != 201:
            continue
        chosen: dict = {}
        for offer in found.json()["data"]["offers"]:
            chosen.setdefault(offer["offerItems"][0]["legIndex"], offer)
        if len(chosen) != 2:
            continue
        selections = [
            {"offerId": o["offerId"], "offerItemIds": [o["offerItems"][0]["offerItemId"]]}
            for o in chosen.values()
        ]
        priced = _post(
            client, auth, "/json/v1/offers/price", {"selections": selections, "passengers": PARTY}
        )
        if priced.status_code == 201:
            bodies.append(booking_body(priced.json()["data"], rng.choice(SURNAMES)))
    rng.shuffle(bodies)
    return bodies


Spent = tuple[float, float, float]  # seconds: time, this process's CPU, PostgreSQL's CPU


# What each request measured is called in the tables.
REQUESTS = {
    "hold": "create order (hold)",
    "card": "create order (card)",
    "retrieve": "retrieve, its view rendered",
}


def measured(client, auth: dict, body: dict, request: str) -> Spent:
    """What one request of `request`'s kind took, made from the priced offer `body`."""
    if request != "retrieve":
        return book(client, auth, body, request)
    from django.core.cache import cache

    from benchmarks.orders.bookings import HOLD

    booked = _post(client, auth, "/json/v1/orders", {**body, "payment": HOLD})
    if booked.status_code != 201:
        raise SystemExit(f"create order answered {booked.status_code}: {booked.content!r}")
    cache.delete_pattern("orderview:*")  # rendered from its parts, not served as kept
    order_id = booked.json()["data"]["order"]["orderId"]
    return _timed(lambda: client.get(f"/json/v1/orders/{order_id}", **auth), "retrieve", 200)


def book(client, auth: dict, body: dict, payment: str) -> Spent:
    """What one create order took; stops the benchmark on any answer but 201."""
    from benchmarks.orders.bookings import CARD, HOLD

    body = {**body, "payment": CARD if payment == "card" else HOLD}
    return _timed(lambda: _post(client, auth, "/json/v1/orders", body), "create order", 201)


def _timed(call, what: str, status: int) -> Spent:
    """What `call` (one request) took; stops the benchmark on any answer but `status`."""
    from django.db import connection

    backend = connection.connection.info.backend_pid
    pg_before, cpu_before = process_cpu_ns(backend), time.thread_time_ns()
    started = time.perf_counter()
    response = call()
    seconds = time.perf_counter() - started
    cpu, pg = time.thread_time_ns() - cpu_before, process_cpu_ns(backend) - pg_before
    if response.status_code != status:
        raise SystemExit(f"{what} answered {response.status_code}: {response.content!r}")
    if connection.connection.info.backend_pid != backend:
        raise SystemExit(f"the database connection changed during a {what}")
    return seconds, cpu / 1e9, pg / 1e9


def _post(client, auth: dict, path: str, body: dict):
    return client.post(path, json.dumps(body), content_type="application/json", **auth)


if __name__ == "__main__":
    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/3")
    with scratch():
        main()
