"""Webhook delivery benchmark. Run with `make bench` (or
`python -m benchmarks.webhooks`).

A scratch database `airline_bench_webhooks` (its own: other benchmarks may run at the
same time) seeded with the demo airline and ORDERS orders of seller DEMO1 written by SQL
(benchmarks.orders), Redis db 14. Two `manage.py run_worker` processes deliver to a local
receiver: a process on 127.0.0.1 that records each request's event id, the time it
arrived and what it answered. Events are order events (`contact_updated`, the outbox
written in the event's transaction, as every service does), each committed in its own
transaction; the commit time is taken by an on-commit hook registered first, so it runs
right after COMMIT.

Phases, each with a fresh endpoint and receiver:
1. backlog: BACKLOG events written before the workers start; the time 2 workers take to
   deliver them all is their capacity (events delivered per second);
2. steady: RATE events a second for SECONDS, the receiver answering 2xx;
3. failing: the same, the receiver answering 500 to FAIL_SHARE of requests at random.

For each: events delivered per second, commit-to-delivery (first 2xx) median and p95,
lost (committed, never answered 2xx before the drain deadline) and duplicate 2xx
deliveries (an event id answered 2xx more than once). The workers run with
WEBHOOK_BACKOFF_SECONDS=1 so that the failing phase's retries (1, 2, 4 ... s) drain in
minutes rather than hours; everything else is the default configuration.
"""

import os
import random
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO
from multiprocessing import Event, Process
from pathlib import Path

import psycopg

from benchmarks.common import REPO, log_path, p95, scratch, table, tiny, write_figures
from benchmarks.orders.load import run_clients

# Its own scratch database and Redis db; the variables name others (two people
# benchmarking on one machine).
BENCH_DATABASE = os.environ.get("BENCH_WEBHOOKS_DATABASE", "airline_bench_webhooks")
REDIS_URL = os.environ.get("BENCH_WEBHOOKS_REDIS_URL", "redis://127.0.0.1:6379/14")
ORDERS = tiny(2000, 20)
BACKLOG = tiny(2000, 20)
RATE = 50  # events a second
SECONDS = tiny(30, 2)  # of the steady and failing phases
FAIL_SHARE = 0.3
WORKERS = 2
PRODUCERS = 5  # processes writing events, RATE / PRODUCERS a second each
DRAIN_SECONDS = 240  # after the last commit: then what is not delivered counts as lost
TARGET_P95 = 2.0


def main() -> None:
    started = time.monotonic()
    _prepare()
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connections

    from benchmarks.orders.order_list import insert_list_orders

    call_command("migrate", verbosity=0)
    call_command("seed_demo", stdout=StringIO())
    insert_list_orders(ORDERS)  # a few orders to hang events on, not 100k
    orders = _orders()
    connections.close_all()  # the producers and receivers are forked from this process

    results = []
    workers: list[subprocess.Popen] = []
    try:
        with _receiver(fail_share=0.0) as receiver:
            endpoint = _endpoint(receiver.url)
            committed = produce(orders, count=BACKLOG, rate=None)
            cpu_before = _cpu()
            since = time.time()  # the backlog's rate counts from the workers' start
            workers = [_start_worker(n) for n in range(WORKERS)]
            drained = _drain(endpoint, receiver, committed)
            results.append(
                _measure("backlog, 2xx", committed, receiver, endpoint, drained, cpu_before, since)
            )
        phases = [("paced 50/s, 2xx", 0.0), (f"paced 50/s, {FAIL_SHARE:.0%} 5xx", FAIL_SHARE)]
        for name, share in phases:
            with _receiver(fail_share=share) as receiver:
                endpoint = _endpoint(receiver.url)
                cpu_before = _cpu()
                committed = produce(orders, count=RATE * SECONDS, rate=RATE)
                drained = _drain(endpoint, receiver, committed)
                results.append(_measure(name, committed, receiver, endpoint, drained, cpu_before))
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.wait(timeout=30)
    notes = _print(results)
    print(f"\n(whole benchmark {time.monotonic() - started:.0f} s)")
    write_figures("webhooks", notes)


def _prepare() -> None:
    # Set, not defaulted: this database is dropped and created again.
    os.environ["AIRLINE_ENV"] = "test"
    os.environ["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{BENCH_DATABASE}"
    os.environ["REDIS_URL"] = REDIS_URL
    os.environ.setdefault("CACHE_KEY_PREFIX", "bench-webhooks")
    os.environ["DJANGO_SETTINGS_MODULE"] = "airline.settings"
    os.environ["WEBHOOK_ALLOW_LOOPBACK"] = "1"
    os.environ["WEBHOOK_BACKOFF_SECONDS"] = "1"
    with psycopg.connect("postgres://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {BENCH_DATABASE} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {BENCH_DATABASE}")


def _orders() -> list:
    from orders.models import Order
    from sellers.models import Seller

    seller = Seller.objects.get(code="DEMO1")
    return list(Order.objects.filter(seller=seller).only("id", "seller_id").order_by("id"))


def _endpoint(url: str):
    """A new endpoint of DEMO1 for every event type; the previous ones disabled, so each
    phase's events go to its own receiver only."""
    from airline.api import clock
    from sellers.models import Seller
    from webhooks.models import WebhookEndpoint
    from webhooks.services import endpoint_register

    seller = Seller.objects.get(code="DEMO1")
    WebhookEndpoint.objects.filter(seller=seller).update(active=False)
    return endpoint_register(seller=seller, url=url, events=[], now=clock.now()).endpoint


def produce(orders: list, *, count: int, rate: float | None) -> dict[str, float]:
    """`count` order events, one transaction each, at `rate` a second in all (None: as
    fast as they go), from PRODUCERS processes (as several app servers would write them),
    the orders taken in turn. Returns each event's id and commit time."""
    from django.db import connections

    connections.close_all()  # the producers are forked from this process
    start = time.time() + 0.5
    shares = [range(p, count, PRODUCERS) for p in range(PRODUCERS)]
    results = run_clients(_producer, [(orders, share, start, rate) for share in shares])
    return {event_id: at for result in results for event_id, at in result.items()}


def _producer(orders: list, share: range, start: float, rate: float | None, results) -> None:
    from django.db import connection, transaction

    from airline.api import clock
    from orders.core import events
    from webhooks.models import WebhookEvent

    committed: dict[str, float] = {}
    for n in share:
        delay = (start + n / rate if rate else start) - time.time()
        if delay > 0:
            time.sleep(delay)
        order = orders[n % len(orders)]
        stamp: list[float] = []
        with transaction.atomic():
            # Registered before the outbox's own hook (which renders the order view), so
            # it runs first, right after COMMIT.
            transaction.on_commit(lambda stamp=stamp: stamp.append(time.time()))
            events.contact_updated(order, actor="bench", now=clock.now())
            # The order's counter row is locked until commit: the newest event is ours.
            event_id = (
                WebhookEvent.objects.filter(order_id=order.pk)
                .order_by("-sequence")
                .values_list("event_id", flat=True)
                .first()
            )
        committed[event_id] = stamp[0]
    connection.close()
    results.put(committed)


class _Receiver:
    def __init__(self, port: int, log: Path) -> None:
        self.url = f"http://127.0.0.1:{port}/hooks"
        self.log = log

    def received(self) -> list[tuple[str, float, int]]:
        """(event id, arrival time, status answered) of every request so far."""
        rows = []
        for line in self.log.read_text().splitlines():
            event_id, at, status = line.split()
            rows.append((event_id, float(at), int(status)))
        return rows


class _receiver:
    """A receiver process for the block: answers 500 to `fail_share` of requests."""

    def __init__(self, *, fail_share: float) -> None:
        from tests.e2e.servers import free_port

        self.port = free_port()
        self.fail_share = fail_share
        self.log = log_path(f"bench-webhooks-receiver-{self.port}.log")

    def __enter__(self) -> _Receiver:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self.log.write_text("")
        ready = Event()
        self.process = Process(
            target=_receive, args=(self.port, self.fail_share, str(self.log), ready)
        )
        self.process.start()
        assert ready.wait(timeout=30)
        return _Receiver(self.port, self.log)

    def __exit__(self, *exc) -> None:
        self.process.terminate()
        self.process.join(timeout=10)
        self.log.unlink(missing_ok=True)


def _receive(port: int, fail_share: float, log: str, ready) -> None:
    """The receiver: HTTP/1.1 with keep-alive, a thread per connection; one line per
    request, written before the answer is sent (a 2xx the worker saw is always logged)."""
    rng = random.Random(port)
    lock = threading.Lock()
    sink = open(log, "a", buffering=1)  # noqa: SIM115 (lives as long as the process)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            at = time.time()
            with lock:
                status = 500 if rng.random() < fail_share else 200
                sink.write(f"{self.headers['Webhook-Id']} {at:.6f} {status}\n")
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    ready.set()
    server.serve_forever()


def _start_worker(n: int) -> subprocess.Popen:
    log = log_path(f"bench-webhooks-worker-{n}.log")
    with log.open("w") as sink:  # the worker keeps its own descriptor
        return subprocess.Popen(
            [sys.executable, "manage.py", "run_worker"],
            cwd=REPO,
            env={**os.environ, "LOG_LEVEL": "WARNING"},
            stdout=sink,
            stderr=subprocess.STDOUT,
        )


def _drain(endpoint, receiver: _Receiver, committed: dict[str, float]) -> float:
    """Wait until every committed event was answered 2xx (or DRAIN_SECONDS after the last
    commit); then a little longer, for a late duplicate. Returns when the last arrived."""
    deadline = max(committed.values()) + DRAIN_SECONDS
    while time.time() < deadline:
        delivered = {e for e, _, status in receiver.received() if status < 300}
        if delivered >= committed.keys():
            break
        time.sleep(0.5)
    time.sleep(2)
    return max((at for _, at, status in receiver.received() if status < 300), default=0.0)


def _measure(name, committed, receiver, endpoint, drained, cpu_before, since=None) -> dict:
    """The phase's figures; its delivery rate counts from `since` (default: the first
    commit) to the last 2xx."""
    from webhooks.models import WebhookDelivery

    cpu_after = _cpu()
    first_2xx: dict[str, float] = {}
    answered_2xx: Counter[str] = Counter()
    requests = 0
    for event_id, at, status in receiver.received():
        requests += 1
        if status < 300:
            answered_2xx[event_id] += 1
            first_2xx.setdefault(event_id, at)
    latencies = [first_2xx[e] - t for e, t in committed.items() if e in first_2xx]
    first_commit = min(committed.values())
    statuses = Counter(
        WebhookDelivery.objects.filter(endpoint=endpoint).values_list("status", flat=True)
    )
    busy = cpu_after["busy"] - cpu_before["busy"]
    total = cpu_after["total"] - cpu_before["total"]
    return {
        "name": name,
        "events": len(committed),
        "produced_per_s": (len(committed) - 1) / (max(committed.values()) - first_commit)
        if len(committed) > 1
        else 0.0,
        "delivered_per_s": len(first_2xx) / (drained - (since or first_commit)) if drained else 0.0,
        "median": statistics.median(latencies) if latencies else float("nan"),
        "p95": p95(latencies) if latencies else float("nan"),
        "max": max(latencies, default=float("nan")),
        "lost": len(committed.keys() - first_2xx.keys()),
        "duplicates": sum(n - 1 for n in answered_2xx.values() if n > 1),
        "requests": requests,
        "statuses": dict(statuses),
        "machine_busy": busy / total if total else 0.0,
        "load": os.getloadavg()[0],
    }


def _cpu() -> dict[str, int]:
    """The machine's CPU time so far, busy and total (jiffies, /proc/stat)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return {"busy": sum(fields) - idle, "total": sum(fields)}


def _print(results: list[dict]) -> list[str]:
    header = (
        "phase",
        "events",
        "committed/s",
        "delivered/s",
        "commit->2xx median",
        "p95",
        "max",
        "lost",
        "dup 2xx",
        "requests",
        "machine busy",
        "load 1m",
    )
    rows = [
        (
            r["name"],
            str(r["events"]),
            f"{r['produced_per_s']:.1f}",
            f"{r['delivered_per_s']:.1f}",
            f"{r['median']:.3f} s",
            f"{r['p95']:.3f} s",
            f"{r['max']:.3f} s",
            str(r["lost"]),
            str(r["duplicates"]),
            str(r["requests"]),
            f"{r['machine_busy']:.0%}",
            f"{r['load']:.1f}",
        )
        for r in results
    ]
    table(
        f"Webhook delivery: {WORKERS} workers (run_worker), a local receiver, "
        "events committed one per transaction",
        header,
        rows,
    )
    notes = []
    for r in results:
        if r["name"] == "paced 50/s, 2xx":
            verdict = "met" if r["p95"] <= TARGET_P95 else "MISSED"
            notes.append(f"target commit->2xx p95 <= {TARGET_P95:g} s at {RATE}/s: {verdict}")
    for r in results:
        if r["lost"] or r["duplicates"]:
            notes.append(f"{r['name']}: {r['lost']} lost, {r['duplicates']} duplicate 2xx")
        notes.append(f"{r['name']}: deliveries by status {r['statuses']}")
    print("\n" + "\n".join(f"  {note}" for note in notes))
    return notes


if __name__ == "__main__":
    with scratch(BENCH_DATABASE):
        main()
