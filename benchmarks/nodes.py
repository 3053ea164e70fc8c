"""Two app nodes against one. Run with `make bench` (or `python -m benchmarks.nodes`).

A fresh scratch database `airline_bench` seeded with the demo airline and Redis db 3, as
in benchmarks.orders, and two nodes on this machine: gunicorn masters A and B of 2
workers each, with the same settings and SECRET_KEY, on two ports
(docs/operators/cluster.md "More than one node"). Load comes from 8 client processes:

- create offers: benchmarks.shopping's two round-trip searches for 2 ADT + 1 CHD (busy
  CHS-PVD, connection-only PVD-MSY), each client sending them in turn for SEARCH_SECONDS;
- create order, on hold and paid by card (test gateway): benchmarks.orders's bookings,
  searched and priced before any timing on many markets and days, half through each
  node (so that in both layouts a booking reaches the worker that priced it, with its
  per-process caches warm, one time in four), each booked once.

Each phase runs with all 8 clients on node A (one node) and with 4 on A and 4 on B (two
nodes), REPEATS times each, the one-node and two-node phases taking turns at going first
so that the machine's drift falls on both alike. One token issued by A is used on both
nodes, and offers priced through one node are booked through the other: the token check,
the key's rate limit, the offer store (Redis) and the inventory locks (PostgreSQL) are
shared.

Reported per operation: requests per second (the median of the phases), the time a
request took as its client saw it and as the server did (median, p95; the server's from
each node's access log), the gunicorn CPU per request, and the non-2xx answers; two
nodes as a ratio to one, same run. On two cores four workers do no more than two: the
ratio to expect is about 1.0, and the run is there to show whether the second node
costs anything per request or adds errors. Server time is not the figure to compare:
with 8 clients and 4 workers on 2 cores, requests wait for a core inside a worker
(counted) instead of in the listen queue (not counted), so it grows with two nodes
while the clients' time does not. Any non-2xx answer stops the benchmark, except create
order's sold-out ERR-4001 (a booking class filled between price and book; the spread
over markets and days makes it rare), which is counted.
"""

import os
import secrets
import time
from datetime import UTC, datetime, timedelta

from benchmarks.common import (
    bench_database_seeded,
    log_path,
    median,
    ms,
    p95,
    report,
    scratch,
    start_gunicorn,
    tiny,
    write_figures,
)
from benchmarks.orders.bookings import CARD, HOLD, prepare_offers, round_trip_search
from benchmarks.orders.load import (
    cpu_snapshot,
    cpu_spent,
    json_headers,
    load_phase,
    server_times,
    wait_ready,
)
from benchmarks.orders.scenarios import book_phase
from benchmarks.orders.sizes import CLIENTS, WARMUP_PER_CLIENT
from benchmarks.shopping import DAYS_AHEAD, MARKETS

WORKERS = 2  # per node, as in the other benchmarks
REPEATS = tiny(3, 1)  # phases of each operation on one node and on two; rates are their medians
SEARCH_SECONDS = tiny(4, 0.5)
ORDERS_PER_CLIENT = tiny(25, 2)  # per booking phase
BOOKINGS = (("hold", HOLD, "create order, on hold"), ("card", CARD, "create order, by card"))
OPERATIONS = (("search", "create offers"), *((kind, label) for kind, _, label in BOOKINGS))
# The one answer a create order may give under load without a fault: a booking class
# filled between price and book (orders/booking/create.py).
SOLD_OUT = ("ERR-4001", "no longer has seats")


def main() -> None:
    started = time.monotonic()
    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/3")
    # One key for both nodes, given explicitly as production must (airline/nodes.py
    # refuses a node whose key differs from a live node's).
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    raw_key, markets = bench_database_seeded("bench-nodes")

    # Both nodes up from the start: B idles through the one-node phases.
    nodes = [start_gunicorn(workers=WORKERS, log_name=f"bench-nodes-{n}.log") for n in "ab"]
    layouts = {1: nodes[:1], 2: nodes}
    phases: dict[int, dict[str, list[dict]]] = {
        count: {kind: [] for kind, _ in OPERATIONS} for count in layouts
    }
    try:
        for _, port in nodes:
            wait_ready(port)
        # One token, from node A, for every client of either node.
        auth = json_headers(nodes[0][1], raw_key)
        day = (datetime.now(tz=UTC).date() + timedelta(days=DAYS_AHEAD)).isoformat()
        searches = [
            ("POST", "/json/v1/offers", round_trip_search(origin, destination, day))
            for origin, destination in MARKETS.values()
        ]

        ports, pids = _ports_and_pids(nodes)
        per_phase = CLIENTS * ORDERS_PER_CLIENT
        warmup = CLIENTS * WARMUP_PER_CLIENT
        wanted = warmup + REPEATS * len(layouts) * len(BOOKINGS) * per_phase
        bodies = prepare_offers(ports, auth, markets, wanted)

        # Untimed: every worker of both nodes searches and books before the timed phases.
        _searches_phase(ports, pids, searches, auth, "ws", seconds=1)
        _orders_phase(ports, pids, auth, bodies[:warmup], HOLD, "wo")
        queue = iter(bodies[warmup:])

        for rep in range(REPEATS):
            for count in (1, 2) if rep % 2 == 0 else (2, 1):
                ports, pids = _ports_and_pids(layouts[count])
                done = phases[count]
                done["search"].append(
                    _searches_phase(ports, pids, searches, auth, f"search{count}{rep}")
                )
                for kind, payment, _ in BOOKINGS:
                    batch = [next(queue) for _ in range(per_phase)]
                    done[kind].append(
                        _orders_phase(ports, pids, auth, batch, payment, f"{kind}{count}{rep}")
                    )
                print(
                    f"  round {rep + 1}, {count} node{'s' * (count > 1)}: "
                    + ", ".join(
                        f"{label} {done[kind][-1]['rate']:.0f}/s" for kind, label in OPERATIONS
                    )
                )
    finally:
        for server, _ in nodes:
            server.terminate()
        for server, _ in nodes:
            server.wait(timeout=15)

    times: dict[str, list[float]] = {}
    for n in "ab":
        for tag, found in server_times(log_path(f"bench-nodes-{n}.log")).items():
            times.setdefault(tag, []).extend(found)
    report(
        f"Two nodes (4 clients on each) against one (8 clients on A), gunicorn {WORKERS} "
        f"workers a node, one PostgreSQL and Redis, {CLIENTS} clients, {REPEATS} phases each, "
        "same run",
        [row for kind, label in OPERATIONS for row in _rows(label, kind, phases, times)],
    )
    print(f"\n(whole benchmark {time.monotonic() - started:.0f} s)")
    write_figures("nodes")


def _ports_and_pids(nodes: list) -> tuple[list[int], list[int]]:
    return [port for _, port in nodes], [server.pid for server, _ in nodes]


def _searches_phase(
    ports: list[int],
    pids: list[int],
    searches: list,
    auth: dict,
    tag: str,
    seconds: float = SEARCH_SECONDS,
) -> dict:
    """Create offers for `seconds` from CLIENTS clients dealt out among `ports`."""
    before = cpu_snapshot(pids)
    result = load_phase(ports, searches, auth, tag, seconds=seconds)
    cpu = cpu_spent(before, cpu_snapshot(pids))
    if result["failed"]:
        raise SystemExit(
            f"create offers, phase {tag}: {result['failed']} non-2xx answers "
            f"beside {result['sent']} 2xx; the first: {result['error']}"
        )
    return {
        "rate": result["rate"],
        "latencies": result["latencies"],
        "sold_out": 0,
        "cpu": cpu["gunicorn"] / max(1, result["sent"]),
    }


def _orders_phase(
    ports: list[int], pids: list[int], auth: dict, bodies: list, payment: dict, tag: str
) -> dict:
    """Create order for each of `bodies`, CLIENTS clients dealt out among `ports`."""
    result = book_phase(ports, auth, bodies, payment, tag, pids)
    sold_out = [f for f in result["failures"] if all(mark in f for mark in SOLD_OUT)]
    if len(sold_out) < len(result["failures"]):
        faults = [f for f in result["failures"] if f not in sold_out]
        raise SystemExit(
            f"create order, phase {tag}: {len(faults)} non-2xx answers other than sold out "
            f"of {len(bodies)} bookings; the first: {faults[0]}"
        )
    return {
        "rate": result["rate"],
        "latencies": result["latencies"],
        "sold_out": len(sold_out),
        "cpu": result["cpu_per_order"]["gunicorn"],
    }


def _rows(label: str, kind: str, phases: dict, times: dict) -> list[tuple[str, str, str, str]]:
    """Two nodes beside one for one operation: rate, client and server time, CPU,
    non-2xx answers."""
    one, two = phases[1][kind], phases[2][kind]
    rate_one, rate_two = median([p["rate"] for p in one]), median([p["rate"] for p in two])
    seen_one = [t for p in one for t in p["latencies"]]
    seen_two = [t for p in two for t in p["latencies"]]
    time_one = [t for rep in range(REPEATS) for t in times.get(f"{kind}1{rep}", [])]
    time_two = [t for rep in range(REPEATS) for t in times.get(f"{kind}2{rep}", [])]
    cpu_one, cpu_two = median([p["cpu"] for p in one]), median([p["cpu"] for p in two])

    def rates(ps: list[dict]) -> str:
        return ", ".join(f"{p['rate']:.0f}" for p in ps)

    return [
        (
            f"{label}: requests/s, 2 nodes ({rates(two)})",
            f"{rate_two:.0f}/s",
            f"1 node: {rate_one:.0f}/s ({rates(one)})",
            f"{rate_two / rate_one:.2f}",
        ),
        (
            f"{label}: client's time median / p95 ({len(seen_two)} / {len(seen_one)} requests)",
            f"{ms(median(seen_two))} / {ms(p95(seen_two))}",
            f"1 node: {ms(median(seen_one))} / {ms(p95(seen_one))}",
            f"{p95(seen_two) / p95(seen_one):.2f} (p95)",
        ),
        (
            f"{label}: server time median / p95",
            f"{ms(median(time_two))} / {ms(p95(time_two))}",
            f"1 node: {ms(median(time_one))} / {ms(p95(time_one))}",
            f"{p95(time_two) / p95(time_one):.2f} (p95)",
        ),
        (
            f"{label}: gunicorn CPU per request",
            ms(cpu_two),
            f"1 node: {ms(cpu_one)}",
            f"{cpu_two / cpu_one:.2f}",
        ),
        (
            f"{label}: non-2xx answers (all sold out; any other stops the run)",
            str(sum(p["sold_out"] for p in two)),
            f"1 node: {sum(p['sold_out'] for p in one)}",
            "-",
        ),
    ]


if __name__ == "__main__":
    with scratch():
        main()
