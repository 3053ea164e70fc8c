"""CPU and queries per hold booked in process (not collected by the suite: not test_*.py).

Run through pytest, on the test network and fixtures (tests/orders/conftest.py):

    AIRLINE_ENV=test DATABASE_URL=... REDIS_URL=... .venv/bin/pytest -q -s \
        tests/orders/profile_holds.py  (env HOLDS=N, HOLD_PROFILE=cprofile|queries,
        HOLD_PROFILE_OUT=where the cProfile stats go)

Each hold (round trip, 2 ADT + 1 CHD, payment Hold) is a raw WSGI call of
POST /json/v1/orders (no test client), committed as in a gunicorn worker. Reports CPU ms
per hold (getrusage: user + system), wall ms and statements per hold, median of the rounds,
PostgreSQL's CPU per hold (its backend process's, from /proc, when it runs on this
machine), and Python function calls per hold (a count: the same however busy the machine
is).
"""

import cProfile
import io
import json
import os
import pstats
import resource
import statistics
import sys
import time
from datetime import timedelta

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.db import connection
from django.db.models import F

from airline.network.models import LegInventory
from tests.conftest import statements_sent
from tests.orders.conftest import booking_body, price_offer

ROUNDS = 5


def _environ(body: bytes, token_header: str) -> dict:
    return {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/json/v1/orders",
        "QUERY_STRING": "",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        "HTTP_AUTHORIZATION": token_header,
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.input": io.BytesIO(body),
        "wsgi.url_scheme": "http",
        "wsgi.errors": sys.stderr,
        "wsgi.version": (1, 0),
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_hold_profile(api, auth, network, partner_key):
    holds = int(os.environ.get("HOLDS", "40"))
    mode = os.environ.get("HOLD_PROFILE", "none")
    # Room for every request of the run in the key's minute (pricing included).
    partner_key.key.requests_per_minute = 1_000_000
    partner_key.key.save(update_fields=["requests_per_minute"])
    # Room for every hold in every class: the test network's classes are small.
    LegInventory.objects.update(authorized=F("authorized") + 100_000)
    day = network + timedelta(days=5)
    bodies = []
    for n in range(holds * (ROUNDS + 1) + 1):
        priced = price_offer(api, auth, day + timedelta(days=n % 20), back=day + timedelta(days=25))
        bodies.append(json.dumps(booking_body(priced)).encode())
    app = WSGIHandler()
    header = auth["HTTP_AUTHORIZATION"]

    def book(body):
        status = []
        out = app(_environ(body, header), lambda s, h, *a: status.append(s))
        b"".join(out)
        out.close()
        assert status[0].startswith("201"), (status, b"".join(out))

    book(bodies.pop())  # warm caches
    backend = _backend_cpu_reader()
    cpu, user, system, wall, queries, database = [], [], [], [], [], []
    profiler = cProfile.Profile(time.process_time) if mode == "cprofile" else None
    for r in range(ROUNDS):
        batch = bodies[r * holds : (r + 1) * holds]
        with statements_sent() as sent:
            t0, w0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
            b0 = backend()
            if profiler:
                profiler.enable()
            for body in batch:
                book(body)
            if profiler:
                profiler.disable()
            t1, w1 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
            database.append((backend() - b0) * 1000 / holds)
        user.append((t1.ru_utime - t0.ru_utime) * 1000 / holds)
        system.append((t1.ru_stime - t0.ru_stime) * 1000 / holds)
        cpu.append(user[-1] + system[-1])
        wall.append((w1 - w0) * 1000 / holds)
        queries.append(len(sent) / holds)
    print(
        f"\nholds {holds} x {ROUNDS}: CPU {statistics.median(cpu):.2f} ms/hold "
        f"(rounds {', '.join(f'{c:.2f}' for c in cpu)}; user {statistics.median(user):.2f}, "
        f"system {statistics.median(system):.2f}), wall {statistics.median(wall):.2f} ms, "
        f"statements {statistics.median(queries):.1f}/hold (besides BEGIN, COMMIT and the "
        f"health check's SELECT 1), PostgreSQL CPU "
        f"{statistics.median(database):.2f} ms/hold"
    )
    # Python function calls per hold: unlike CPU time, the same on a busy machine.
    counter = cProfile.Profile()
    counter.enable()
    for body in bodies[ROUNDS * holds : (ROUNDS + 1) * holds]:
        book(body)
    counter.disable()
    calls = pstats.Stats(counter).total_calls / holds
    print(f"function calls {calls:,.0f}/hold")
    if mode == "queries":
        for sql in sent[-int(queries[-1]) :]:
            print(sql[:300])
    if profiler:
        stats = pstats.Stats(profiler)
        stats.sort_stats("cumulative").print_stats(60)
        stats.sort_stats("tottime").print_stats(40)
        profiler.dump_stats(os.environ.get("HOLD_PROFILE_OUT", "hold.prof"))


def _backend_cpu_reader():
    """A function giving the CPU seconds (user + system) spent so far by this
    connection's PostgreSQL backend; always 0 when that process is not on this machine."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    stat = f"/proc/{pid}/stat"
    ticks = os.sysconf("SC_CLK_TCK")

    def read() -> float:
        try:
            with open(stat) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / ticks  # utime, stime

    return read
