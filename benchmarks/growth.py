"""What growth costs: the order reads at 100k and 1M orders. Run with `make bench` (or
`python -m benchmarks.growth`); it writes docs/benchmarks/figures/growth.md.

A fresh scratch database BENCH_DATABASE (`airline_bench_growth`) seeded with the demo
airline, then grown by COPY (not the API, which would take hours) to each size in SIZES
(GROWTH_SIZES, default 100,000 and 1,000,000 orders): orders of the bench agency, every
OTHER_EVERY-th another agency's, each with 1-2 journeys of one segment and 1-3 passengers,
as benchmarks.orders writes them by SQL; then VACUUM ANALYZE. At each size, in this
process through Django's test client, REPEATS times each (median and p95 of the time,
median of this process's CPU):

- OrderList (GET /json/v1/orders): the first page of 1000, a deep page of 100, and a
  lastName filter;
- retrieve by order id and by record locator, of orders spread over the whole table;
- the back office's bookings list (/admin/orders/order/), its first page and a search
  by surname;
- audit-style scans of every seller's orders: support's `bookings --last-name` and
  `bookings --date` (manage.py), and a count and sum of every order by status.

The process's cyclic collector is settled as a server worker's is (airline.collector).

The database is dropped and the Redis keys deleted at the end.

To iterate on a few measures: GROWTH_REUSE=1 reuses the database a run of this benchmark
with BENCH_KEEP=1 kept (only migrating it; sizes below the orders it holds are left
out), GROWTH_MEASURES=OrderList,search times only the
measures whose names contain one of the words.
"""

import os
import random
import time
from datetime import UTC, datetime, timedelta
from io import StringIO
from zoneinfo import ZoneInfo

# Before benchmarks.common is imported: it reads BENCH_DATABASE once, at import.
os.environ.setdefault("BENCH_DATABASE", "airline_bench_growth")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/3")
os.environ.setdefault("CACHE_KEY_PREFIX", "bench-growth")

from benchmarks.common import (
    AGENCY,
    bench_api_key,
    bench_database_seeded,
    median,
    p95,
    prepare_environment,
    quiet_request_log,
    scratch,
    table,
    write_figures,
)
from benchmarks.orders.bookings import SURNAMES
from benchmarks.orders.sizes import OTHER_EVERY

SIZES = [int(n) for n in os.environ.get("GROWTH_SIZES", "100000,1000000").split(",")]
REPEATS = int(os.environ.get("GROWTH_REPEATS", "20"))
CHUNK = 50_000  # orders per COPY batch
GIVEN = ["Ada", "Charles", "Mary", "Grace"]
ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def main() -> None:
    started = time.monotonic()
    if os.environ.get("GROWTH_REUSE") == "1":
        prepare_environment()
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        raw_key = bench_api_key("bench-growth")
    else:
        raw_key, _ = bench_database_seeded("bench-growth")
    figures, seeding = run(raw_key)
    report(figures, seeding)
    print(f"\n(whole benchmark {time.monotonic() - started:.0f} s)")


def run(raw_key: str) -> tuple[dict[int, dict], dict[int, float]]:
    from django.contrib.auth import get_user_model
    from django.test import Client

    quiet_request_log()
    api = Client()
    response = api.post(
        "/auth/token",
        "{}",
        content_type="application/json",
        HTTP_X_API_KEY=raw_key,
    )
    assert response.status_code in (200, 201), response.content
    auth = {"HTTP_AUTHORIZATION": f"Bearer {response.json()['access_token']}"}
    admin = Client()
    user, _ = get_user_model().objects.get_or_create(
        username="bench-growth", defaults={"is_staff": True, "is_superuser": True}
    )
    admin.force_login(user)

    # As a server worker runs (airline/wsgi.py): what was loaded before serving frozen out
    # of the cyclic collector, and young collections spaced out.
    from airline.collector import collector_settled

    collector_settled()
    figures: dict[int, dict] = {}
    seeding: dict[int, float] = {}
    written = _agency_orders()
    for size in sorted(s for s in SIZES if s >= written):
        begun = time.monotonic()
        grow(written, size)
        written = size
        seeding[size] = time.monotonic() - begun
        print(f"(grown to {size:,} orders of {AGENCY} in {seeding[size]:.0f} s)")
        figures[size] = measure(api, auth, admin)
    return figures, seeding


def _agency_orders() -> int:
    """Orders of AGENCY the database holds already: none, unless it is reused."""
    from orders.models import Order

    return Order.objects.filter(agency_code=AGENCY).count()


def grow(have: int, want: int) -> None:
    """COPY orders of AGENCY (and every OTHER_EVERY-th another agency's) until AGENCY has
    `want`; then VACUUM ANALYZE."""
    from django.conf import settings
    from django.db import connection

    from benchmarks.common import nonstop_markets
    from sellers.models import Seller

    seller = Seller.objects.get(code="DEMO1").pk
    markets = nonstop_markets()
    with connection.cursor() as cursor:
        cursor.execute("SELECT code, time_zone FROM network_station")
        zones = {code: ZoneInfo(zone) for code, zone in cursor.fetchall()}
        cursor.execute("SELECT coalesce(max(id), 0) FROM orders_order")
        (order_id,) = cursor.fetchone()
        cursor.execute("SELECT coalesce(max(id), 0) FROM orders_journey")
        (journey_id,) = cursor.fetchone()
    if want <= have:
        return
    total = want * OTHER_EVERY // (OTHER_EVERY - 1) - have * OTHER_EVERY // (OTHER_EVERY - 1)
    now = datetime.now(tz=UTC).replace(microsecond=0)
    today = datetime(now.year, now.month, now.day, tzinfo=UTC)
    carrier = settings.AIRLINE_DESIGNATOR
    raw = connection.connection  # psycopg's own connection: COPY
    done = 0
    while done < total:
        n = min(CHUNK, total - done)
        orders, journeys, segments, passengers = [], [], [], []
        for k in range(n):
            order_id += 1
            i = order_id
            status = (
                "CANCELLED"
                if i % 20 == 0
                else "CLOSED"
                if i % 50 == 1
                else "ONHOLD"
                if i % 5 == 2
                else "CONFIRMED"
            )
            agency = "OTHERAGT" if i % OTHER_EVERY == 0 else AGENCY
            created = (now - timedelta(seconds=(total - done - k) * 30)).isoformat()
            amount = 100 + i % 900
            locator = "0" + "".join(ALPHABET[(i >> shift) % 32] for shift in (20, 15, 10, 5, 0))
            surname = SURNAMES[(i * 7) % len(SURNAMES)]
            lead = GIVEN[(i + 1) % 4]
            limit = (now + timedelta(hours=20)).isoformat() if status == "ONHOLD" else r"\N"
            orders.append(
                f"{i}\t0GROW{i:015d}\t{locator}\t{carrier}\t{seller}\t{agency}\tIMPORT\t"
                f"{status}\t{created}\t{created}\tUSD\t{amount}\t"
                f"{0 if status == 'ONHOLD' else amount}\t{limit}\t\\N\t\t{lead}\t{surname}\n"
            )
            origin, destination = markets[i % len(markets)]
            departs = (
                today - timedelta(days=30) + timedelta(days=(i * 7919) % 330, hours=6 + i % 15)
            )
            for position in range(1, 2 + i % 2):
                journey_id += 1
                there, back = (origin, destination) if position == 1 else (destination, origin)
                at = departs + timedelta(days=7 * (position - 1))
                arrives = at + timedelta(minutes=150)
                flight = 100 + (i * 31 + position) % 900
                day = at.astimezone(zones[there]).date().isoformat()
                journeys.append(
                    f"{journey_id}\t{i}\tJOU-{i}-{position}\t{position}\t{there}\t{back}\t"
                    f"{at.isoformat()}\t{arrives.isoformat()}\tf\t{day}\t{flight}\n"
                )
                segments.append(
                    f"{i}\t{journey_id}\tSEG-{journey_id}\t1\t{carrier}\t{flight}\t{there}\t"
                    f"{back}\t{at.isoformat()}\t{arrives.isoformat()}\tY\tM\t{1 + i % 3}\tt\n"
                )
            for position in range(1, 2 + i % 3):
                ptc = "CHD" if position == 3 else "ADT"
                pax = "CHD-1" if position == 3 else f"ADT-{position}"
                given = lead if position == 1 else GIVEN[(i + position) % 4]
                passengers.append(
                    f"{i}\tPAX-{position:08d}\t{pax}\t{position}\t{ptc}\t{given}\t{surname}\t"
                    "\\N\t\t\t\t\\N\t[]\t\\N\t\\N\n"
                )
        done += n
        with raw.cursor() as cursor:
            for name, columns, rows in (
                (
                    "orders_order",
                    "id, order_id, record_locator, owner_code, seller_id, agency_code, channel, "
                    "status, created_at, updated_at, currency, total, paid, payment_time_limit, "
                    "source_offer_id, remarks, lead_given_name, lead_surname",
                    orders,
                ),
                (
                    "orders_journey",
                    "id, order_id, ref, position, origin, destination, departs_at, arrives_at, "
                    "is_cancelled, departure_date, flight_number",
                    journeys,
                ),
                (
                    "orders_segment",
                    "order_id, journey_id, ref, position, carrier, flight_number, origin, "
                    "destination, departs_at, arrives_at, cabin, rbd, seats, holds_inventory",
                    segments,
                ),
                (
                    "orders_passenger",
                    "order_id, ref, offer_pax_id, position, ptc, given_name, surname, "
                    "date_of_birth, gender, nationality, residence_country, loyalty_program, "
                    "travel_documents, contacts, infant_id",
                    passengers,
                ),
            ):
                with cursor.copy(f"COPY {name} ({columns}) FROM STDIN") as copy:
                    copy.write("".join(rows))
        raw.commit()
    with connection.cursor() as cursor:
        for name, last in (("orders_order", order_id), ("orders_journey", journey_id)):
            cursor.execute("SELECT setval(pg_get_serial_sequence(%s, 'id'), %s)", [name, last])
        for name in ("orders_order", "orders_journey", "orders_segment", "orders_passenger"):
            cursor.execute(f"VACUUM ANALYZE {name}")
        cursor.execute("CHECKPOINT")


def measure(api, auth: dict, admin) -> dict[str, tuple[list[float], list[float]]]:
    """{measure: (seconds per request, CPU seconds per request)} at the current size."""
    from django.core.management import call_command
    from django.db import connection

    from orders.models import Order

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM orders_order WHERE agency_code = %s", [AGENCY])
        (count,) = cursor.fetchone()
        cursor.execute(
            "SELECT id FROM orders_order WHERE agency_code = %s ORDER BY id OFFSET %s LIMIT 1",
            [AGENCY, count // 2],
        )
        (middle,) = cursor.fetchone()
    spread = _spread(random.Random(42)) or list(
        Order.objects.filter(agency_code=AGENCY).values_list("order_id", "record_locator")[:5]
    )
    surname = SURNAMES[3]
    day = (datetime.now(tz=UTC).date() + timedelta(days=60)).isoformat()
    cases: list[tuple[str, object]] = [
        (
            "OrderList, page of 1000, first",
            lambda: _get(api, "/json/v1/orders?pageSize=1000", auth),
        ),
        (
            "OrderList, page of 100, deep",
            lambda: _get(api, f"/json/v1/orders?pageSize=100&lastIndex={middle}", auth),
        ),
        (
            f"OrderList, lastName={surname}, 100",
            lambda: _get(api, f"/json/v1/orders?pageSize=100&lastName={surname}", auth),
        ),
        ("retrieve by order id", _cycle(api, auth, [f"/json/v1/orders/{o}" for o, _ in spread])),
        ("retrieve by locator", _cycle(api, auth, [f"/json/v1/orders/{r}" for _, r in spread])),
        ("back office bookings list, first page", lambda: _get(admin, "/admin/orders/order/")),
        (
            f"back office bookings list, search {surname}",
            lambda: _get(admin, f"/admin/orders/order/?q={surname}"),
        ),
        (
            f"audit: bookings --last-name {surname}",
            lambda: call_command("bookings", "--last-name", surname, stdout=StringIO()),
        ),
        (
            f"audit: bookings --date {day}",
            lambda: call_command("bookings", "--date", day, stdout=StringIO()),
        ),
        ("audit: every order counted and summed by status", _audit_totals),
    ]
    wanted = [w for w in os.environ.get("GROWTH_MEASURES", "").split(",") if w]
    out = {}
    for name, call in cases:
        if wanted and not any(w in name for w in wanted):
            continue
        call()  # warm
        seconds, cpu = [], []
        for _ in range(REPEATS):
            begun, cpu_begun = time.perf_counter(), time.thread_time()
            call()
            seconds.append(time.perf_counter() - begun)
            cpu.append(time.thread_time() - cpu_begun)
        out[name] = (seconds, cpu)
    return out


def _spread(rng: random.Random) -> list[tuple[str, str]]:
    """Orders of AGENCY from all over the table, by id (a random sample of ids)."""
    from orders.models import Order

    top = Order.objects.order_by("-id").values_list("id", flat=True).first()
    ids = rng.sample(range(1, top + 1), REPEATS * 3)
    found = Order.objects.filter(id__in=ids, agency_code=AGENCY)
    return list(found.values_list("order_id", "record_locator"))[: REPEATS + 1]


def _cycle(client, auth: dict, paths: list[str]):
    position = iter(range(10**9))

    def call() -> None:
        _get(client, paths[next(position) % len(paths)], auth)

    return call


def _get(client, path: str, headers: dict | None = None) -> None:
    response = client.get(path, **(headers or {}))
    if response.status_code != 200:
        raise SystemExit(f"GET {path} answered {response.status_code}: {response.content[:300]!r}")


def _audit_totals() -> None:
    from django.db.models import Count, Sum

    from orders.models import Order

    list(Order.objects.values("status").annotate(n=Count("id"), total=Sum("total")).order_by())


def report(figures: dict[int, dict], seeding: dict[int, float]) -> None:
    sizes = sorted(figures)
    names = list(figures[sizes[0]])
    header = ["measure"]
    for size in sizes:
        header += [f"{size:,}: median", f"{size:,}: p95", f"{size:,}: CPU"]
    if len(sizes) > 1:
        header.append(f"{sizes[-1]:,} / {sizes[0]:,} (median)")
    rows = []
    for name in names:
        row = [name]
        for size in sizes:
            seconds, cpu = figures[size][name]
            row += [
                f"{median(seconds) * 1000:.1f} ms",
                f"{p95(seconds) * 1000:.1f} ms",
                f"{median(cpu) * 1000:.1f} ms",
            ]
        if len(sizes) > 1:
            first, last = median(figures[sizes[0]][name][0]), median(figures[sizes[-1]][name][0])
            row.append(f"{last / first:.2f}x" if first else "-")
        rows.append(row)
    table(
        "Order reads as the table grows: each at every size, in this process, one at a "
        f"time ({REPEATS} requests each); CPU is this process's (the database's is not in it)",
        header,
        rows,
    )
    write_figures(
        "growth",
        [
            "orders of the bench agency at each size ("
            + ", ".join(f"{s:,} grown by COPY in {seeding[s]:.0f} s" for s in sizes)
            + f"), plus every {OTHER_EVERY}th order another agency's",
            "sizes are GROWTH_SIZES; on a busy machine the 1M seeding is the slow part"
            + (
                f": this run measured {sizes[-1]:,} at most, not 1,000,000"
                if sizes[-1] < 1_000_000
                else ""
            ),
        ],
    )


if __name__ == "__main__":
    with scratch():
        main()
