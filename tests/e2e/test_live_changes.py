"""A schedule load while agencies book (issue 24): two nodes (two workers each) on the
full demo schedule, 8 clients booking (holds and cards) and searching the flights a
`manage.py load_schedule` retimes, cancels on some dates and drops, on dates that had
sales before it and dates that had none, while it runs. Afterwards:

- the load exited 0;
- no order's segment is at a time its flight no longer has, and no live order is on a
  cancelled leg, without an airline change (README "Airline-initiated changes");
- every order with an airline change got its `order.airline_initiated_change_detected`
  webhook, at its own seller's endpoint;
- every worker of both nodes showed the new times, patched into its index, well within
  the time a rebuild would take (half a build; issue 24's 1 s is a benchmark figure);
- no search waited for an index build while the load ran: none took a node more than
  half the time this machine takes to build one (how far under issue 24's 200 ms they
  stay is `python -m benchmarks.schedule`'s figure, not an assertion);
- what the inventory sold is what the live orders hold, leg by leg and cabin by cabin.

Every check is made and all that fail are reported together: the set-up costs a minute
or two, and which of them fail (and by how much) is the point of the test."""

import subprocess
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import count

import pytest
import requests
from django.db import connection, connections

from airline.network.demo_schedule import demo_ssim
from orders.models import AirlineChange, Order
from sellers.management.commands.seed_demo import DEMO_SCHEDULE_DAYS
from tests.e2e.demo_nodes import Demo, full_demo, node_env, two_nodes
from tests.e2e.servers import REPO, Server, index_build_seconds, manage, server_seconds
from tests.network.ssim_builder import ssim_edited
from tests.offers.conftest import search_body
from tests.orders.conftest import CARD, HOLD, booking_body
from tests.webhooks.conftest import Receiver, receiver, verifies  # noqa: F401
from webhooks.models import WebhookDelivery

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True, serialized_rollback=True)]

DETECTED = "order.airline_initiated_change_detected"
# Demo flights (airline/network/demo_schedule.py): CHS-PVD 07:10 and 16:40, TPA-PVD 07:20.
RETIMED, SHORTENED, DROPPED = 101, 103, 105
RETIME_MINUTES = 30
CANCELLED_DAYS = 8  # MX103's period starts 8 days later: its first 8 dates are cancelled
MARKETS = {RETIMED: ("CHS", "PVD"), SHORTENED: ("CHS", "PVD"), DROPPED: ("TPA", "PVD")}
SOLD_BEFORE = (3, 4)  # days after the first that have sales before the load...
UNSOLD_BEFORE = (5, 6)  # ... and days that have none (holds need 24 h: none before day 2)
KEPT_DAYS = {True: 9, False: 10}  # MX103's dates the load keeps, with / without sales
PROBE_DAY = 7  # the stale-window probe searches MX101 on a day nobody books
CLIENTS = 8
NOT_A_BUILD = 0.5  # of this run's own full index build (2.5 s quiet, 10-16 s busy)
PROBE_SECONDS = 30  # how long after the commit the probe looks for the new times
LOAD_TIMEOUT_SECONDS = 600


@dataclass(frozen=True)
class Target:
    flight: int
    day: int  # days after the schedule's first
    sold_before: bool


def targets() -> list[Target]:
    found = []
    for sold, days in ((True, SOLD_BEFORE), (False, UNSOLD_BEFORE)):
        for day in days:
            found += [Target(RETIMED, day, sold), Target(SHORTENED, day, sold)]
            found.append(Target(DROPPED, day, sold))
        found.append(Target(SHORTENED, KEPT_DAYS[sold], sold))
    return found


@dataclass
class Outcome:
    target: Target
    step: str  # "search", "price", "book": the last step tried
    status: int | str  # its HTTP status, "no offer", or the exception's name
    error: str = ""  # the ERR code of a refusal
    order_id: str = ""
    started: float = 0.0


@dataclass
class Searches:
    """Request ids of the searches sent while the load ran, by any thread."""

    during_load: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    loading: threading.Event = field(default_factory=threading.Event)
    ids: count = field(default_factory=count)

    def search(self, node: Server, headers: dict, origin: str, destination: str, day, tag: str):
        request_id = f"live-{tag}-{next(self.ids)}"
        if self.loading.is_set():
            with self.lock:
                self.during_load.add(request_id)
        return requests.post(
            node.url + "/json/v1/offers",
            json=search_body((origin, destination, day)),
            headers={**headers, "x-request-id": request_id},
            timeout=30,
        )


def flight_offer(response, flight: int) -> dict | None:
    offers = response.json()["data"]["offers"]
    wanted = [f"MX{flight}"]
    return next(
        (o for o in offers if o["offerItems"][0]["flight"]["flightNumbers"] == wanted), None
    )


def book_one(demo: Demo, searches: Searches, node, headers, target: Target, payment, tag):
    """Search the target's market, price its flight's offer, book it: how far it got."""
    origin, destination = MARKETS[target.flight]
    day = demo.first_day + timedelta(days=target.day)
    outcome = Outcome(target, "search", "", started=time.monotonic())
    try:
        found = searches.search(node, headers, origin, destination, day, tag)
        outcome.status = found.status_code
        if found.status_code != 201:
            return outcome
        offer = flight_offer(found, target.flight)
        if offer is None:
            outcome.status = "no offer"
            return outcome
        selection = {
            "offerId": offer["offerId"],
            "offerItemIds": [offer["offerItems"][0]["offerItemId"]],
        }
        outcome.step = "price"
        priced = requests.post(
            node.url + "/json/v1/offers/price",
            json={"selections": [selection], "passengers": [{"type": "ADT"}]},
            headers=headers,
            timeout=30,
        )
        outcome.status = priced.status_code
        if priced.status_code != 201:
            if priced.headers.get("Content-Type", "").startswith("application/json"):
                outcome.error = priced.json().get("error", {}).get("code", "")
            return outcome
        outcome.step = "book"
        booked = requests.post(
            node.url + "/json/v1/orders",
            json=booking_body(priced.json()["data"], payment=payment),
            headers=headers,
            timeout=60,
        )
        outcome.status = booked.status_code
        if booked.status_code == 201:
            outcome.order_id = booked.json()["data"]["order"]["orderId"]
        elif booked.headers.get("Content-Type", "").startswith("application/json"):
            outcome.error = booked.json().get("error", {}).get("code", "")
    except requests.RequestException as exc:
        outcome.status = type(exc).__name__
    return outcome


@dataclass
class Probe:
    """MX101's departure as each node shows it, searched one node after the other."""

    answers: list[tuple[str, float, float, datetime | None]] = field(default_factory=list)
    # (node url, started, finished, MX101's departureDateTime)


def departure_of(response) -> datetime | None:
    offer = flight_offer(response, RETIMED) if response.status_code == 201 else None
    return (
        datetime.fromisoformat(offer["offerItems"][0]["flight"]["departureDateTime"])
        if offer
        else None
    )


def probe_until_new(demo, searches, nodes, headers, new_departure, committed, load_done) -> Probe:
    """Search MX101 on PROBE_DAY on each node in turn, from before the load until both
    nodes showed `new_departure` eight times running (each has two workers, each with its
    own index) after the commit (`committed` holds its time once seen), or PROBE_SECONDS
    after it, or the load ended without a commit."""
    probe = Probe()
    day = demo.first_day + timedelta(days=PROBE_DAY)
    running = dict.fromkeys((n.url for n in nodes), 0)
    while not (load_done.is_set() and "at" not in committed):
        for node in nodes:
            started = time.monotonic()
            response = searches.search(node, headers, "CHS", "PVD", day, "probe")
            departure = departure_of(response)
            probe.answers.append((node.url, started, time.monotonic(), departure))
            after = committed.get("at")
            if after is not None and started >= after:
                running[node.url] = running[node.url] + 1 if departure == new_departure else 0
        after = committed.get("at")
        if after is not None and (
            min(running.values()) >= 8 or time.monotonic() > after + PROBE_SECONDS
        ):
            break
    return probe


def stale_seconds(probe: Probe, committed_at: float, new_departure: datetime) -> dict[str, float]:
    """For each node: from the commit until its first answer showing the new time after
    which none showed the old (inf if it never did), counting only searches sent after
    the commit."""
    windows = {}
    for url in {a[0] for a in probe.answers}:
        after = [a for a in probe.answers if a[0] == url and a[1] >= committed_at]
        last_stale = max((i for i, a in enumerate(after) if a[3] != new_departure), default=-1)
        fresh = after[last_stale + 1 :]
        windows[url] = fresh[0][2] - committed_at if fresh else float("inf")
    return windows


def watch_commit(load_id_before: int, committed: dict, done: threading.Event) -> None:
    """Note when a new ScheduleLoad row becomes visible: the load's commit (polled every
    10 ms on its own connection)."""
    try:
        while not done.is_set() or "at" not in committed:
            with connection.cursor() as cursor:
                cursor.execute("SELECT coalesce(max(id), 0) FROM network_scheduleload")
                if cursor.fetchone()[0] > load_id_before:
                    committed["at"] = time.monotonic()
                    return
            if done.is_set():
                return  # the load ended without committing a new schedule
            time.sleep(0.01)  # polling another process's commit, not timing behaviour
    finally:
        connections.close_all()


def run_load(env, path, result: dict, *options: str) -> None:
    """`manage.py load_schedule PATH OPTIONS`, its times, exit code and output in `result`."""
    started = time.monotonic()
    process = subprocess.run(
        [sys.executable, "manage.py", "load_schedule", str(path), *options],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=LOAD_TIMEOUT_SECONDS,
        check=False,
    )
    result.update(
        started=started,
        ended=time.monotonic(),
        returncode=process.returncode,
        output=(process.stdout + process.stderr)[-3000:],
    )


def mismatched_orders() -> list[str]:
    """Issue 24 item 1's query: orders whose segment's time is no longer its flight's
    (the segment's first leg), with no airline change to say so."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT DISTINCT o.order_id FROM orders_order o
            JOIN orders_segment s ON s.order_id = o.id
            JOIN orders_leg l ON l.segment_id = s.id AND l.position = 1
            JOIN network_flightleg fl ON fl.id = l.flight_leg_id
            WHERE s.departs_at <> fl.departs_at
              AND NOT EXISTS (SELECT 1 FROM orders_airlinechange a WHERE a.order_id = o.id)
            ORDER BY 1
            """
        )
        return [row[0] for row in cursor.fetchall()]


def stranded_orders() -> list[str]:
    """Live orders holding seats on a cancelled leg, with no airline change."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT DISTINCT o.order_id FROM orders_order o
            JOIN orders_segment s ON s.order_id = o.id
            JOIN orders_leg l ON l.segment_id = s.id
            JOIN network_flightleg fl ON fl.id = l.flight_leg_id
            WHERE fl.is_cancelled AND s.holds_inventory
              AND o.status IN ('CONFIRMED', 'ONHOLD', 'PENDING')
              AND NOT EXISTS (SELECT 1 FROM orders_airlinechange a WHERE a.order_id = o.id)
            ORDER BY 1
            """
        )
        return [row[0] for row in cursor.fetchall()]


def inventory_mismatches() -> list[tuple]:
    """(leg id, cabin, sold, seats live orders hold) wherever the two differ: a cabin's
    sold count is its rank-0 row's (DESIGN.md §6)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            WITH held AS (
                SELECT l.flight_leg_id AS leg_id, s.cabin, sum(s.seats) AS seats
                FROM orders_segment s JOIN orders_leg l ON l.segment_id = s.id
                WHERE s.holds_inventory GROUP BY 1, 2
            )
            SELECT coalesce(i.leg_id, h.leg_id), coalesce(i.cabin, h.cabin),
                   coalesce(i.sold, 0), coalesce(h.seats, 0)
            FROM (SELECT leg_id, cabin, sold FROM network_leginventory WHERE rank = 0) i
            FULL JOIN held h ON h.leg_id = i.leg_id AND h.cabin = i.cabin
            WHERE coalesce(i.sold, 0) <> coalesce(h.seats, 0)
            ORDER BY 1, 2
            """
        )
        return cursor.fetchall()


def drain_webhooks(env) -> int:
    """deliver_webhooks --once until nothing is pending (at most a few passes): passes."""
    for passes in range(1, 11):
        manage(env, "deliver_webhooks", "--once")
        pending = WebhookDelivery.objects.filter(status__in=["PENDING", "IN_FLIGHT"])
        if not pending.exists():
            return passes
    return passes


def test_a_schedule_load_under_booking_traffic_misses_no_order_and_stalls_no_search(
    tmp_path,
    receiver: Receiver,  # noqa: F811
):
    env = node_env()
    demo = full_demo(env)
    stall = NOT_A_BUILD * index_build_seconds()
    changed = ssim_edited(
        demo_ssim(demo.first_day, days=DEMO_SCHEDULE_DAYS),
        retime={RETIMED: RETIME_MINUTES},
        starts={SHORTENED: demo.first_day + timedelta(days=CANCELLED_DAYS)},
        drop=frozenset({DROPPED}),
    )
    path = tmp_path / "changed.ssim"
    path.write_text(changed)
    searches, load, committed = Searches(), {}, {}

    with two_nodes(env, tmp_path) as (a, b):
        nodes = (a, b)
        headers = {code: demo.headers(a, code) for code in ("DEMO1", "DEMO2")}
        secrets = {}
        for code, auth in headers.items():
            registered = requests.post(
                a.url + "/json/v1/webhooks",
                json={"url": receiver.url, "events": [DETECTED]},
                headers=auth,
                timeout=10,
            )
            assert registered.status_code == 201, registered.text
            secrets[code] = registered.json()["data"]["secret"]

        # Sales before the load, on the days that have them, for both sellers.
        sold_before = [
            book_one(demo, searches, node, headers[code], t, HOLD, "before")
            for t in targets()
            if t.sold_before
            for node, code in zip(nodes, headers, strict=True)
        ]
        assert {o.status for o in sold_before} == {201}, [(o.target, o.status) for o in sold_before]

        # MX101 as every worker shows it before the load, and as the file retimes it.
        day = demo.first_day + timedelta(days=PROBE_DAY)
        old_departure = departure_of(
            searches.search(a, headers["DEMO1"], "CHS", "PVD", day, "warm")
        )
        assert old_departure is not None
        new_departure = old_departure + timedelta(minutes=RETIME_MINUTES)

        stop, load_done = threading.Event(), threading.Event()
        under_way = threading.Semaphore(0)  # a release per client's first booking tried

        def client(n: int) -> list[Outcome]:
            code = ("DEMO1", "DEMO2")[n % 2]
            mine, outcomes = targets(), []
            for k in count():
                if stop.is_set():
                    return outcomes
                target = mine[(n + k) % len(mine)]
                payment = CARD if k % 2 else HOLD
                node = nodes[(n + k) % 2]
                outcomes.append(
                    book_one(demo, searches, node, headers[code], target, payment, f"c{n}")
                )
                if k == 0:
                    under_way.release()

        with connection.cursor() as cursor:
            cursor.execute("SELECT coalesce(max(id), 0) FROM network_scheduleload")
            (load_id_before,) = cursor.fetchone()

        with ThreadPoolExecutor(max_workers=CLIENTS + 3) as pool:
            clients = [pool.submit(client, n) for n in range(CLIENTS)]
            watcher = prober = None
            try:
                # Every client under way before the load starts.
                assert all(under_way.acquire(timeout=60) for _ in range(CLIENTS))
                searches.loading.set()
                watcher = pool.submit(watch_commit, load_id_before, committed, load_done)
                prober = pool.submit(
                    probe_until_new,
                    demo,
                    searches,
                    nodes,
                    headers["DEMO1"],
                    new_departure,
                    committed,
                    load_done,
                )
                run_load(env, path, load, "--wait")
            finally:
                searches.loading.clear()
                load_done.set()
                try:  # the clients book on while the probe looks for the new times
                    if watcher is not None:
                        watcher.result()
                    probe_answers = prober.result().answers if prober is not None else []
                finally:
                    stop.set()
            outcomes = [o for c in clients for o in c.result()]

    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    server = server_seconds(logs, "live-")
    during = {rid: server[rid] for rid in searches.during_load if rid in server}
    passes = drain_webhooks(env)

    # The figures, printed whatever fails (pytest shows them with a failure).
    during_load = [o for o in outcomes if load["started"] <= o.started <= load["ended"]]
    statuses = Counter((o.step, o.status, o.error) for o in outcomes)
    committed_at = committed.get("at", load["ended"])
    booked_during = Counter(
        (o.target.flight, o.target.sold_before) for o in during_load if o.order_id
    )
    booked_before_commit = sum(1 for o in during_load if o.order_id and o.started < committed_at)
    windows = (
        stale_seconds(Probe(probe_answers), committed["at"], new_departure)
        if "at" in committed
        else {}
    )
    changes = {
        order_id: seller
        for order_id, seller in AirlineChange.objects.values_list(
            "order__order_id", "order__seller__code"
        )
    }
    delivered = {}
    for got in receiver.delivered():
        if got.json["type"] == DETECTED:
            seller = next((c for c, s in secrets.items() if verifies(s, got)), None)
            delivered.setdefault(got.json["data"]["order"]["orderId"], set()).add(seller)
    mismatched, stranded, inventory = mismatched_orders(), stranded_orders(), inventory_mismatches()
    slowest = max(during.values(), default=0.0)
    print(
        f"\nload: exit {load.get('returncode')} in {load['ended'] - load['started']:.1f} s;"
        f" commit seen {committed.get('at', float('nan')) - load['started']:.1f} s after start"
        f"\norders: {Order.objects.count()} ({len(sold_before)} before the load),"
        f" booked during the load by (flight, date had sales): {dict(booked_during)},"
        f" {booked_before_commit} of them started before the commit"
        f"\nclient outcomes (step, status, error): {dict(statuses)}"
        f"\nairline changes: {len(changes)}; mismatched without one: {len(mismatched)};"
        f" on cancelled legs without one: {len(stranded)}"
        f"\nwebhooks: {sum(len(v) for v in delivered.values())} detected events delivered"
        f" for {len(delivered)} orders, {passes} deliver_webhooks passes"
        f"\nstale window by node: { {u: round(s, 3) for u, s in windows.items()} }"
        f" ({len(probe_answers)} probe searches)"
        f"\nsearches during the load: {len(during)} of {len(searches.during_load)} logged,"
        f" slowest {slowest:.3f} s server time,"
        f" over 200 ms: {sum(s > 0.2 for s in during.values())}; half a build: {stall:.3f} s"
        f"\ninventory rows that differ from orders: {len(inventory)}"
    )

    problems = []
    if load.get("returncode") != 0:
        problems.append(f"load_schedule exited {load.get('returncode')}:\n{load.get('output')}")
    if mismatched:
        problems.append(
            f"{len(mismatched)} orders off their flight's time, no change: {mismatched[:10]}"
        )
    if stranded:
        problems.append(
            f"{len(stranded)} live orders on cancelled legs, no change: {stranded[:10]}"
        )
    unnotified = {o: s for o, s in changes.items() if delivered.get(o) != {s}}
    if unnotified:
        problems.append(
            f"{len(unnotified)} of {len(changes)} changed orders without exactly their"
            f" seller's webhook: {list(unnotified.items())[:10]}"
        )
    # Patched in place, never rebuilt: a node that rebuilt its index to show the load
    # would be stale for a whole build. Issue 24's 1 s is benchmarks.schedule's figure
    # (0.07-0.18 s on a quiet machine); under this test's load it measured 0.2-1.1 s.
    if not windows or max(windows.values()) > stall:
        problems.append(f"stale after the commit (s, by node): {windows}")
    if len(during) < len(searches.during_load):
        problems.append(f"{len(searches.during_load) - len(during)} searches left no log line")
    if slowest > stall:
        problems.append(f"slowest search during the load {slowest:.3f} s of server time")
    if inventory:
        problems.append(f"inventory differs from orders (leg, cabin, sold, held): {inventory[:10]}")
    # A flight the load took away is "no offer", or a documented 4xx if it went between
    # search and booking; never a 5xx or a request that failed.
    errors = {k: v for k, v in statuses.items() if k[1] != "no offer" and str(k[1])[:1] not in "24"}
    if errors:
        problems.append(f"server errors or failed requests: {errors}")
    # The test itself: while the load ran, bookings reached each changed flight on dates
    # that had sales and dates that had none.
    assert {f for f, _ in booked_during} == {RETIMED, SHORTENED, DROPPED}, booked_during
    assert {sold for _, sold in booked_during} == {True, False}, booked_during
    assert not problems, "\n".join(problems)
