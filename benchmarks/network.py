"""Network benchmark (issue: airline network). Run with `make bench`.

Prints, each beside a reference measured in the same run on the same machine:
- loading the demo schedule (330 days) vs inserting the same rows raw;
- itinerary building per market-date (all demo markets x 30 dates) vs a SELECT 1 round trip;
- seats sold per second by 8 processes on one leg vs a raw conditional UPDATE loop;
- resident memory of a gunicorn worker with the schedule caches warm.
"""

import contextlib
import multiprocessing
import os
import subprocess
import time
from datetime import UTC, datetime, timedelta
from io import StringIO
from pathlib import Path

from benchmarks.common import (
    median,
    ms,
    p95,
    prepare_environment,
    recreate_database,
    report,
    scratch,
    start_gunicorn,
    timings,
    tiny,
    write_figures,
)

WORKERS = tiny(8, 2)
SALES_PER_WORKER = tiny(400, 10)
REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    prepare_environment()
    recreate_database()
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    load_rows = bench_schedule_load(call_command)
    bench_itineraries()
    bench_contended_sales()
    bench_worker_memory()
    print(
        f"\n(schedule: {load_rows['legs']} flight-date legs, "
        f"{load_rows['inventory']} inventory rows)"
    )
    write_figures("network")


def bench_schedule_load(call_command) -> dict:
    from django.db import connection

    from airline.network.models import FlightLeg, LegInventory

    started = time.perf_counter()
    call_command("seed_demo", stdout=StringIO())
    load_seconds = time.perf_counter() - started
    legs, inventory = FlightLeg.objects.count(), LegInventory.objects.count()

    # Reference: the same number of rows, of the same widths, inserted raw in batches.
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMP TABLE ref_leg (a int, b text, c date, d int, e text, f text, "
            "g timestamptz, h timestamptz, i int, j int)"
        )
        cursor.execute(
            "CREATE TEMP TABLE ref_inv "
            "(leg int, cabin text, rbd text, rank int, authorized int, sold int)"
        )
        now = datetime.now(tz=UTC)
        started = time.perf_counter()
        leg_rows = [
            (i, "MX", now.date(), 1, "PVD", "CHS", now, now + timedelta(hours=2), 1, 1)
            for i in range(legs)
        ]
        for start in range(0, legs, 2000):
            cursor.executemany(
                "INSERT INTO ref_leg VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                leg_rows[start : start + 2000],
            )
        inv_rows = [(i, "Y", "M", 2, 100, 0) for i in range(inventory)]
        for start in range(0, inventory, 2000):
            cursor.executemany(
                "INSERT INTO ref_inv VALUES (%s,%s,%s,%s,%s,%s)", inv_rows[start : start + 2000]
            )
        cursor.execute("ANALYZE ref_leg, ref_inv")  # as seed_demo ends (airline.sql.analyze)
        reference = time.perf_counter() - started

    report(
        "Demo schedule load (PostgreSQL; target <= 60 s)",
        [
            (
                "seed_demo (generate, parse, load 330 days)",
                f"{load_seconds:.1f} s",
                f"raw INSERT + ANALYZE of the same rows {reference:.1f} s",
                f"{load_seconds / reference:.1f}x",
            )
        ],
    )
    return {"legs": legs, "inventory": inventory}


def bench_itineraries() -> None:
    from django.db import connection

    from airline.network.itineraries import network_index

    started = time.perf_counter()
    index = network_index()
    build_seconds = time.perf_counter() - started
    first = datetime.now(tz=UTC).date() + timedelta(days=7)
    dates = [first + timedelta(days=i) for i in range(30)]
    samples = []
    found = 0
    for origin, destination in sorted(index.served_markets):
        for day in dates:
            t = time.perf_counter()
            found += len(index.journeys(origin, destination, day))
            samples.append(time.perf_counter() - t)

    def select_one():
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()

    reference = timings(select_one, 2000)
    report(
        f"Itinerary build per market-date ({len(index.served_markets)} markets x 30 dates; "
        "target p95 <= 5 ms)",
        [
            (
                "median",
                ms(median(samples)),
                f"SELECT 1 round trip median {ms(median(reference))}",
                f"{median(samples) / median(reference):.2f}x",
            ),
            (
                "p95",
                ms(p95(samples)),
                f"SELECT 1 round trip p95 {ms(p95(reference))}",
                f"{p95(samples) / p95(reference):.2f}x",
            ),
            ("index build, once per worker", f"{build_seconds:.2f} s", "", ""),
        ],
    )
    print(f"  ({found} journeys found in {len(samples)} searches)")


def _sell_worker(leg_id: int, count: int, barrier) -> None:
    import django

    django.setup()
    from airline.network.inventory import inventory_sell

    barrier.wait()
    for _ in range(count):
        inventory_sell(leg_ids=[leg_id], rbd="Y", seats=1)


def _update_worker(count: int, barrier) -> None:
    import psycopg

    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
        barrier.wait()
        for _ in range(count):
            conn.execute("UPDATE bench_counter SET n = n + 1 WHERE id = 1 AND n < 1000000000")


def _run_processes(target, args_for) -> float:
    barrier = multiprocessing.Barrier(WORKERS + 1)
    processes = [
        multiprocessing.get_context("fork").Process(target=target, args=(*args_for, barrier))
        for _ in range(WORKERS)
    ]
    for p in processes:
        p.start()
    barrier.wait()
    started = time.perf_counter()
    for p in processes:
        p.join()
        assert p.exitcode == 0
    return time.perf_counter() - started


def bench_contended_sales() -> None:
    import psycopg
    from django.db import connections

    from airline.network.models import FlightLeg, LegInventory

    leg = FlightLeg.objects.filter(aircraft_type__iata_code="320").order_by("departs_at").first()
    total = WORKERS * SALES_PER_WORKER
    # Room for every sale, so the benchmark measures contention, not sell-outs.
    LegInventory.objects.filter(leg=leg, cabin="Y").update(authorized=total * 2)
    connections.close_all()
    sales_seconds = _run_processes(_sell_worker, (leg.pk, SALES_PER_WORKER))
    sold = LegInventory.objects.get(leg=leg, rbd="Y").sold
    assert sold == total, f"sold {sold}, expected {total}"

    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS bench_counter")
        conn.execute("CREATE TABLE bench_counter (id int PRIMARY KEY, n bigint NOT NULL)")
        conn.execute("INSERT INTO bench_counter VALUES (1, 0)")
    reference_seconds = _run_processes(_update_worker, (SALES_PER_WORKER,))

    sales_rate, reference_rate = total / sales_seconds, total / reference_seconds
    report(
        f"Seats sold per second, {WORKERS} processes on one leg "
        "(PostgreSQL; zero oversell checked)",
        [
            (
                "inventory_sell (one leg, nested conditional UPDATE, own transaction)",
                f"{sales_rate:.0f}/s",
                f"raw one-row conditional UPDATE {reference_rate:.0f}/s",
                f"{sales_rate / reference_rate:.2f}x",
            )
        ],
    )


def bench_worker_memory() -> None:
    """RSS of a real gunicorn worker after its schedule index is warm (target <= 250 MB)."""
    import requests

    server, port = start_gunicorn(workers=1, env={"NETWORK_WARM_ON_HEALTH_CHECK": "1"})
    try:
        deadline = time.monotonic() + 120
        status = None
        while time.monotonic() < deadline and status != 200:
            with contextlib.suppress(requests.RequestException):
                status = requests.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code
            time.sleep(0.2)
        workers = subprocess.run(
            ["pgrep", "-P", str(server.pid)], capture_output=True, text=True, check=False
        ).stdout.split()
        rss_kb = max(int(_status_field(pid, "VmRSS")) for pid in workers)
        report(
            "gunicorn worker memory with the schedule index warm (target <= 250 MB)",
            [("worker resident set", f"{rss_kb / 1024:.0f} MB", f"/health status {status}", "")],
        )
    finally:
        server.terminate()
        server.wait(timeout=15)


def _status_field(pid: str, name: str) -> str:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(name + ":"):
            return line.split()[1]
    raise LookupError(name)


if __name__ == "__main__":
    with scratch():
        main()
