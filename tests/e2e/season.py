"""A season's retime under traffic, on the full demo schedule and two app nodes, for
tests/e2e/test_season_retime.py (which asserts on it) and `python -m benchmarks.schedule`
(which reports its figures at several sizes).

Thousands of bookings on MX101 across its dates (copies of a real one:
tests/flight_bookings.py), a seller webhook endpoint that wants every event, the worker
running (`manage.py run_worker`), and CLIENTS clients searching, pricing and booking
MX101 on both nodes; then `manage.py load_schedule` of the demo schedule with MX101 30
minutes later on every date. What it measured is a SeasonRun; what went wrong with the
bookings, its `problems()`.
"""

import contextlib
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import requests
from django.db import connection, connections

from airline.network.demo_schedule import demo_ssim
from airline.network.models import ScheduleFollowUp
from orders.models import Order
from sellers.management.commands.seed_demo import DEMO_SCHEDULE_DAYS
from tests.e2e.demo_nodes import Demo
from tests.e2e.servers import REPO, Server
from tests.e2e.test_live_changes import run_load
from tests.flight_bookings import flight_bookings_seed
from tests.network.ssim_builder import ssim_edited
from tests.offers.conftest import search_body
from tests.orders.conftest import HOLD, booking_body

FLIGHT, MARKET = 101, ("CHS", "PVD")  # daily, one leg (airline/network/demo_schedule.py)
RETIME_MINUTES = 30
CLIENTS = 8
FIRST_DAY_BOOKED, LAST_DAY_BOOKED = 3, 300  # days after the schedule's first
PROBE_DAY = 7  # the stale-window probe searches MX101 on this day
RUNNING = 8  # probe answers in a row showing the new time: both of a node's workers have it
LOAD_TIMEOUT_SECONDS = 600
TOLD_TIMEOUT_SECONDS = 900
DETECTED = "order.airline_initiated_change_detected"


@dataclass
class Call:
    """One client request: what it was, which node, when, how long, what came back."""

    step: str  # search, price, book
    node: str
    started: float
    seconds: float
    status: int | str  # the HTTP status, or the exception's name
    json: bool = True  # its Content-Type
    retry_after: bool = False
    error: str = ""  # the ERR code of a refusal
    order_id: str = ""


@dataclass
class SeasonRun:
    """What one run measured (monotonic seconds unless said)."""

    bookings: int  # on MX101 before the load (the copies and their template)
    load_started: float = 0.0
    committed: float = 0.0  # the new ScheduleLoad row seen by another connection
    load_ended: float = 0.0
    load_returncode: int | None = None
    load_output: str = ""
    told: float = 0.0  # the follow-up seen finished
    follow_up: dict = field(default_factory=dict)  # total, done, changes
    calls: list[Call] = field(default_factory=list)
    stale: dict[str, float] = field(default_factory=dict)  # node -> seconds after commit
    killed_at_done: int | None = None  # the follow-up's progress when its worker was killed
    worker_timeouts: int = 0  # "WORKER TIMEOUT" lines in the nodes' logs

    @property
    def commit_seconds(self) -> float:
        return self.committed - self.load_started

    @property
    def told_per_second(self) -> float:
        seconds = self.told - self.committed
        return self.follow_up.get("done", 0) / seconds if seconds > 0 else 0.0

    def book_seconds(self) -> list[float]:
        return sorted(c.seconds for c in self.calls if c.step == "book")

    @property
    def longest_booking_wait(self) -> float:
        """The slowest book call less the median one: what a booking waited beyond the
        ordinary (on a lock, a patch, a load)."""
        times = self.book_seconds()
        return times[-1] - times[len(times) // 2] if times else 0.0


def _stamp(step: str, node: Server, started: float, response) -> Call:
    call = Call(step, node.url, started, time.monotonic() - started, response.status_code)
    call.json = response.headers.get("Content-Type", "").startswith("application/json")
    call.retry_after = "Retry-After" in response.headers
    if response.status_code >= 400 and call.json:
        call.error = (response.json().get("error") or {}).get("code", "")
    return call


def flight_offer(response) -> dict | None:
    """The search answer's first MX101 offer (one passenger, any bundle)."""
    if response.status_code != 201:
        return None
    return next(
        (
            o
            for o in response.json()["data"]["offers"]
            if o["offerItems"][0]["flight"]["flightNumbers"] == [f"MX{FLIGHT}"]
        ),
        None,
    )


def search(node: Server, headers: dict, day) -> requests.Response:
    return requests.post(
        node.url + "/json/v1/offers",
        json=search_body((*MARKET, day)),
        headers=headers,
        timeout=60,
    )


def price(node: Server, headers: dict, offer: dict) -> requests.Response:
    item = offer["offerItems"][0]["offerItemId"]
    selection = {"offerId": offer["offerId"], "offerItemIds": [item]}
    return requests.post(
        node.url + "/json/v1/offers/price",
        json={"selections": [selection], "passengers": [{"type": "ADT"}]},
        headers=headers,
        timeout=60,
    )


def book(node: Server, headers: dict, priced: dict) -> requests.Response:
    return requests.post(
        node.url + "/json/v1/orders",
        json=booking_body(priced, payment=HOLD),
        headers=headers,
        timeout=120,
    )


def search_price_book(node: Server, headers: dict, day, calls: list[Call]) -> None:
    """One client's round: MX101 on `day` searched, priced and booked on hold on `node`,
    each step's Call added to `calls` (none after a step that failed)."""
    try:
        started = time.monotonic()
        found = search(node, headers, day)
        calls.append(_stamp("search", node, started, found))
        offer = flight_offer(found)
        if offer is None:
            return
        started = time.monotonic()
        priced = price(node, headers, offer)
        calls.append(_stamp("price", node, started, priced))
        if priced.status_code != 201:
            return
        started = time.monotonic()
        booked = book(node, headers, priced.json()["data"])
        call = _stamp("book", node, started, booked)
        if booked.status_code == 201:
            call.order_id = booked.json()["data"]["order"]["orderId"]
        calls.append(call)
    except requests.RequestException as exc:
        calls.append(Call("?", node.url, started, time.monotonic() - started, type(exc).__name__))


@contextlib.contextmanager
def webhook_sink() -> Iterator[str]:
    """A local endpoint that answers every webhook 200; yields its URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hooks"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def worker(env: dict[str, str], log: Path) -> Iterator[subprocess.Popen]:
    """`manage.py run_worker` until the block ends (or it is killed)."""
    with log.open("a") as out:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "run_worker"],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            yield process
        finally:
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=30)


def template_booking(demo: Demo, node: Server, headers: dict) -> Order:
    """A hold on MX101 in the bundle that includes no service, booked on `node`."""
    day = demo.first_day + timedelta(days=FIRST_DAY_BOOKED)
    offers = search(node, headers, day).json()["data"]["offers"]
    offer = next(
        o
        for o in offers
        if o["offerItems"][0]["flight"]["flightNumbers"] == [f"MX{FLIGHT}"]
        and o["offerItems"][0]["fare"]["bundleName"] == "No Flex"
    )
    priced = price(node, headers, offer)
    assert priced.status_code == 201, priced.text
    booked = book(node, headers, priced.json()["data"])
    assert booked.status_code == 201, booked.text
    return Order.objects.get(order_id=booked.json()["data"]["order"]["orderId"])


def _newest_load() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(max(id), 0) FROM network_scheduleload")
        return cursor.fetchone()[0]


def _follow_up(load_id: int) -> dict:
    row = (
        ScheduleFollowUp.objects.filter(load_id=load_id)
        .values("total", "done", "changes", "finished_at")
        .first()
    )
    return row or {}


def _departure(node: Server, headers: dict, day) -> datetime | None:
    offer = flight_offer(search(node, headers, day))
    if offer is None:
        return None
    return datetime.fromisoformat(offer["offerItems"][0]["flight"]["departureDateTime"])


def _stale_window(
    node: Server, headers: dict, day, new: datetime, committed: dict, stop: threading.Event
) -> float:
    """From the commit until the first of RUNNING answers in a row showing `new` (inf:
    never, or no commit)."""
    while "at" not in committed:
        if stop.wait(0.005):  # polling another process's commit, not timing behaviour
            return float("inf")
    streak, first = 0, 0.0
    deadline = committed["at"] + 120
    while streak < RUNNING and time.monotonic() < deadline:
        shown = _departure(node, headers, day)
        if shown == new:
            streak, first = streak + 1, first if streak else time.monotonic()
        else:
            streak = 0
    return first - committed["at"] if streak >= RUNNING else float("inf")


def season_retime(
    *,
    demo: Demo,
    nodes: tuple[Server, Server],
    env: dict[str, str],
    logs: Path,
    bookings: int,
    webhook_url: str,
    kill_worker_mid_way: bool = False,
) -> SeasonRun:
    """Seed `bookings` on MX101, then retime it on every date under traffic (module
    docstring); returns what was measured once the follow-up has told every booking.
    Both sellers book and have a webhook endpoint; the seeded bookings are DEMO1's."""
    run = SeasonRun(bookings=bookings)
    a = nodes[0]
    headers = {code: demo.headers(a, code) for code in ("DEMO1", "DEMO2")}
    for auth in headers.values():  # each seller's bookings are told to its own endpoint
        registered = requests.post(
            a.url + "/json/v1/webhooks", json={"url": webhook_url}, headers=auth, timeout=10
        )
        assert registered.status_code == 201, registered.text
    template = template_booking(demo, a, headers["DEMO1"])
    flight_bookings_seed(template=template, count=bookings - 1)

    path = logs / "retimed.ssim"
    path.write_text(
        ssim_edited(
            demo_ssim(demo.first_day, days=DEMO_SCHEDULE_DAYS), retime={FLIGHT: RETIME_MINUTES}
        )
    )
    probe_day = demo.first_day + timedelta(days=PROBE_DAY)
    old = _departure(a, headers["DEMO1"], probe_day)
    assert old is not None
    new = old + timedelta(minutes=RETIME_MINUTES)

    stop, committed = threading.Event(), {}
    under_way = threading.Semaphore(0)
    calls: list[Call] = []
    load_before = _newest_load()

    def client(n: int) -> None:
        rng = random.Random(n)
        auth = headers[("DEMO1", "DEMO2")[n % 2]]
        for k in range(10**6):
            if stop.is_set():
                return
            day = demo.first_day + timedelta(days=rng.randint(FIRST_DAY_BOOKED, LAST_DAY_BOOKED))
            search_price_book(nodes[(n + k) % 2], auth, day, calls)
            if k == 0:
                under_way.release()

    def watch() -> None:
        try:
            while _newest_load() == load_before:
                if stop.is_set():
                    return
                time.sleep(0.005)  # polling another process's commit, not timing behaviour
            committed["at"] = time.monotonic()
        finally:
            connections.close_all()

    def load() -> None:
        result: dict = {}
        run_load(env, path, result)  # returns at the commit: the worker tells the bookings
        run.load_started, run.load_ended = result["started"], result["ended"]
        run.load_returncode, run.load_output = result["returncode"], result["output"]

    threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
    stale: dict[str, float] = {}
    watcher = threading.Thread(target=watch)
    probers = [threading.Thread(target=lambda node=node: probe(node)) for node in nodes]

    def probe(node: Server) -> None:
        stale[node.url] = _stale_window(node, headers["DEMO1"], probe_day, new, committed, stop)

    log = logs / "worker.log"
    with worker(env, log) as first_worker:
        for thread in threads:
            thread.start()
        try:
            assert all(under_way.acquire(timeout=120) for _ in range(CLIENTS))
            watcher.start()
            for prober in probers:
                prober.start()
            load()
            watcher.join(30)
            run.committed = committed.get("at", 0.0)
            load_id = _newest_load()
            if kill_worker_mid_way and run.load_returncode == 0:
                run.killed_at_done = _kill_mid_way(first_worker, load_id)
            with worker(env, log) if run.killed_at_done is not None else contextlib.nullcontext():
                deadline = time.monotonic() + TOLD_TIMEOUT_SECONDS
                while time.monotonic() < deadline:
                    run.follow_up = _follow_up(load_id)
                    if run.follow_up.get("finished_at") or run.load_returncode != 0:
                        break
                    time.sleep(0.05)  # polling the worker's commits, not timing behaviour
                run.told = time.monotonic()
        finally:
            stop.set()
            for thread in [*probers, watcher, *threads]:
                if thread.is_alive():
                    thread.join(180)
            connections.close_all()
    run.calls = calls
    run.stale = stale
    run.worker_timeouts = sum(node.output().count("WORKER TIMEOUT") for node in nodes)
    return run


def _kill_mid_way(process: subprocess.Popen, load_id: int) -> int:
    """SIGKILL the worker once it has told some of the load's bookings and not all;
    returns how many it had told (as committed)."""
    deadline = time.monotonic() + TOLD_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        row = _follow_up(load_id)
        if row and 0 < row["done"] < row["total"]:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
            return _follow_up(load_id)["done"]
        time.sleep(0.01)  # polling the worker's commits, not timing behaviour
    raise AssertionError(f"the worker never got part of the way: {_follow_up(load_id)}")


def told_problems(run: SeasonRun) -> list[str]:
    """Every way the load's bookings were not told exactly once, as sentences."""
    problems = []
    if run.load_returncode != 0:
        problems.append(f"load_schedule exited {run.load_returncode}:\n{run.load_output}")
    if not run.follow_up.get("finished_at"):
        problems.append(f"the follow-up did not finish: {run.follow_up}")
    with connection.cursor() as cursor:
        # Every live booking of MX101 at a time its flight no longer has: one airline
        # change, one detection event, one webhook event; at the flight's time: none.
        cursor.execute(
            """
            SELECT o.order_id, s.departs_at <> fl.departs_at AS moved,
                   (SELECT count(*) FROM orders_airlinechange a WHERE a.order_id = o.id),
                   (SELECT count(*) FROM orders_orderevent e
                     WHERE e.order_id = o.id AND e.kind = 'airline_change_detected'),
                   (SELECT count(*) FROM webhooks_webhookevent w
                     WHERE w.order_id = o.id AND w.type = %s)
            FROM orders_order o
            JOIN orders_segment s ON s.order_id = o.id AND s.holds_inventory
            JOIN orders_leg l ON l.segment_id = s.id AND l.position = 1
            JOIN network_flightleg fl ON fl.id = l.flight_leg_id
            WHERE fl.flight_number = %s AND o.status IN ('CONFIRMED', 'ONHOLD', 'PENDING')
            """,
            [DETECTED, FLIGHT],
        )
        rows = cursor.fetchall()
    wrong = Counter()
    for _order_id, moved, changes, events, hooks in rows:
        expected = 1 if moved else 0
        if (changes, events, hooks) != (expected, expected, expected):
            wrong[(moved, changes, events, hooks)] += 1
    if wrong:
        problems.append(
            "bookings not told exactly once (moved, changes, events, webhooks): count "
            + str(dict(wrong))
        )
    moved = sum(1 for row in rows if row[1])
    if moved < run.bookings:
        problems.append(f"only {moved} bookings at the old time, of {run.bookings} seeded")
    return problems


def call_problems(run: SeasonRun) -> list[str]:
    """Answers no client should get under a load: a 500, HTML, a 503 without Retry-After,
    a connection error; and gunicorn killing a worker."""
    problems = []
    bad = Counter(
        (c.step, c.status, c.error)
        for c in run.calls
        if not isinstance(c.status, int)
        or (c.status >= 500 and not (c.status == 503 and c.retry_after))
        or not c.json
    )
    if bad:
        problems.append(f"answers no client should get: {dict(bad)}")
    if run.worker_timeouts:
        problems.append(f"{run.worker_timeouts} WORKER TIMEOUTs in the nodes' logs")
    if not any(c.step == "book" and c.status == 201 for c in run.calls):
        problems.append("no client booked anything")
    return problems


def figures(run: SeasonRun) -> dict[str, object]:
    """The run's figures, for a report."""
    statuses = Counter(f"{c.status} {c.error}".strip() for c in run.calls if c.step == "book")
    book = run.book_seconds()
    return {
        "bookings on the flight": run.bookings,
        "schedule commit, s after the load started": round(run.commit_seconds, 2),
        "load_schedule returned, s after it started": round(run.load_ended - run.load_started, 2),
        "bookings told": run.follow_up.get("done"),
        "airline changes recorded": run.follow_up.get("changes"),
        "last told, s after commit": round(run.told - run.committed, 2),
        "bookings told per second": round(run.told_per_second, 1),
        "book calls": len(book),
        "book median, s": round(book[len(book) // 2], 3) if book else None,
        "book slowest, s": round(book[-1], 3) if book else None,
        "longest booking wait (slowest - median), s": round(run.longest_booking_wait, 3),
        "book answers": dict(statuses),
        "stale window per node, s": {k: round(v, 3) for k, v in run.stale.items()},
        "worker timeouts": run.worker_timeouts,
    }
