"""gunicorn's worker classes and counts for this workload, in one run. Run with
`make bench` (or `python -m benchmarks.workers`); it writes
docs/benchmarks/figures/workers.md, which gunicorn.conf.py's choice of worker cites.

A real gunicorn, started with the project's gunicorn.conf.py and each configuration in
CONFIGURATIONS given on its command line (sync workers, one and two per core; gthread
workers with threads), on a fresh scratch database BENCH_DATABASE
(`airline_bench_workers`) seeded with the demo airline and Redis db 3 under a key prefix
of its own (both removed at the end). CLIENTS client processes each run the booking
funnel for SECONDS, after WARMUP seconds of the same unmeasured: search a round trip for
2 ADT + 1 CHD on a nonstop market-day of its own, price it, book it on hold, retrieve
it; every answer but a 2xx counts as a failure. Figures per configuration: funnels
completed per second, each step's p95 as its clients saw it, and the gunicorn processes'
CPU per funnel (from /proc). The configurations run in turn, then again in the reverse
order (ROUNDS), so the machine's drift hits each alike; each figure is the median of its
rounds.
"""

import http.client
import json
import os
import random
import time
from datetime import UTC, datetime, timedelta

# Before benchmarks.common is imported: it reads BENCH_DATABASE once, at import.
os.environ.setdefault("BENCH_DATABASE", "airline_bench_workers")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/3")
os.environ.setdefault("CACHE_KEY_PREFIX", "bench-workers")

from benchmarks.common import (
    bench_database_seeded,
    log_path,
    median,
    p95,
    scratch,
    start_gunicorn,
    table,
    write_figures,
)
from benchmarks.orders.bookings import HOLD, PARTY, SURNAMES, booking_body, round_trip_search
from benchmarks.orders.load import (
    call,
    cpu_snapshot,
    cpu_spent,
    json_headers,
    run_clients,
    server_times,
    wait_ready,
)

CLIENTS = int(os.environ.get("WORKERS_CLIENTS", "8"))
SECONDS = float(os.environ.get("WORKERS_SECONDS", "8"))  # per configuration and round
WARMUP = min(SECONDS, 3.0)  # unmeasured load on each server first
ROUNDS = int(os.environ.get("WORKERS_ROUNDS", "2"))  # forward, then backward, ...
CORES = os.cpu_count() or 1
# (label, gunicorn options); the first is the service's default (gunicorn.conf.py).
CONFIGURATIONS = [
    (f"sync, {CORES} workers (1 per core)", ["--workers", str(CORES)]),
    (f"sync, {2 * CORES} workers (2 per core)", ["--workers", str(2 * CORES)]),
    (f"sync, {2 * CORES + 1} workers (2 per core + 1)", ["--workers", str(2 * CORES + 1)]),
    (
        f"gthread, {CORES} workers x 4 threads",
        ["--workers", str(CORES), "--worker-class", "gthread", "--threads", "4"],
    ),
    (
        f"gthread, {2 * CORES} workers x 2 threads",
        ["--workers", str(2 * CORES), "--worker-class", "gthread", "--threads", "2"],
    ),
]
_CHOSEN = os.environ.get("WORKERS_CONFIGURATIONS", "")  # a subset, by position: "0,3"
if _CHOSEN:
    CONFIGURATIONS = [CONFIGURATIONS[int(n)] for n in _CHOSEN.split(",")]
STEPS = ("search", "price", "hold", "retrieve")
# Funnels a phase may start at most (a client finishes about 10 a second).
TASKS_PER_PHASE = CLIENTS * 300
HEADER = (
    "configuration",
    "funnels",
    "vs best",
    "each round",
    *(f"{s} p95" for s in STEPS),
    "CPU",
    "failed",
)
SERVED_HEADER = (
    "configuration",
    *(f"{s} p95: clients / server" for s in STEPS),
    "in the server",
)
LOG_NAME = "bench-workers.log"


def main() -> None:
    started = time.monotonic()
    raw_key, markets = bench_database_seeded("bench-workers")
    results = measure(raw_key, markets)
    report(results)
    print(f"\n(whole benchmark {time.monotonic() - started:.0f} s)")


def measure(raw_key: str, markets: list) -> dict[str, list[dict]]:
    results: dict[str, list[dict]] = {label: [] for label, _ in CONFIGURATIONS}
    days = [datetime.now(tz=UTC).date() + timedelta(days=3 + n) for n in range(280)]
    tasks = [(o, d, day.isoformat()) for day in days for o, d in markets]
    random.Random(40).shuffle(tasks)
    position = 0
    for n in range(ROUNDS):
        order = CONFIGURATIONS if n % 2 == 0 else CONFIGURATIONS[::-1]
        for label, options in order:
            # Market-days of their own for this phase's funnels (warm-up included), taken
            # in turn from the shuffled list and round again when it runs out: a phase
            # short of them would end early and count as a slow configuration. A
            # market-day met again books 3 more seats a flight, which no flight runs out
            # of in the rounds this makes.
            share = [tasks[(position + k) % len(tasks)] for k in range(TASKS_PER_PHASE)]
            position += TASKS_PER_PHASE
            results[label].append(phase(raw_key, options, share))
    return results


def phase(raw_key: str, options: list[str], tasks: list) -> dict:
    """One configuration's server, started, warmed and loaded for SECONDS."""
    server, port = start_gunicorn(workers=CORES, options=options, log_name=LOG_NAME)
    try:
        wait_ready(port)
        auth = json_headers(port, raw_key)
        # A first round unmeasured: every worker (and thread) warm, its connections open.
        warm, tasks = tasks[: len(tasks) // 4], tasks[len(tasks) // 4 :]
        start_at = time.monotonic() + 0.3
        run_clients(
            _funnel_client,
            [
                (port, auth, warm[n::CLIENTS], start_at, start_at + WARMUP, "")
                for n in range(CLIENTS)
            ],
        )
        before = cpu_snapshot(server.pid)
        start_at = time.monotonic() + 0.3
        outcome = run_clients(
            _funnel_client,
            [
                (port, auth, tasks[n::CLIENTS], start_at, start_at + SECONDS, f"c{n}")
                for n in range(CLIENTS)
            ],
        )
        elapsed = max(r["finished"] for r in outcome) - start_at
        spent = cpu_spent(before, cpu_snapshot(server.pid))
    finally:
        server.terminate()
        server.wait(timeout=30)
    funnels = sum(r["funnels"] for r in outcome)
    served = server_times(log_path(LOG_NAME))  # by step: the timed requests' ids name it
    return {
        "rate": funnels / elapsed,
        "funnels": funnels,
        "latencies": {s: [t for r in outcome for t in r["latencies"][s]] for s in STEPS},
        "served": {s: served.get(s, []) for s in STEPS},
        # Requests inside the server on average (Little's law: their server times over
        # the phase); against the workers (or threads) there are, how busy they were.
        "busy": sum(sum(served.get(s, [])) for s in STEPS) / elapsed,
        "failures": [f for r in outcome for f in r["failures"]],
        "cpu": spent["gunicorn"] / funnels if funnels else 0.0,
    }


def _funnel_client(
    port: int, auth: dict, tasks: list, start_at: float, until: float, tag: str, results
):
    """Funnels until `until`; with a `tag`, each request's id names its step (and the
    client), which the server's request log then times on the server's side."""
    time.sleep(max(0.0, start_at - time.monotonic()))
    rng = random.Random(os.getpid())
    latencies: dict[str, list[float]] = {s: [] for s in STEPS}
    failures: list[str] = []
    funnels = 0

    def step(name: str, method: str, path: str, body, expected: int) -> dict | None:
        sent_at = time.monotonic()
        request_id = f"{name}-{tag}-{len(latencies[name])}" if tag else None
        try:
            status, raw = call(port, method, path, body, auth, request_id)
        except (OSError, http.client.HTTPException) as exc:
            failures.append(f"{name}: {exc!r}"[:200])
            return None
        if status != expected:
            failures.append(f"{name}: {status} {raw[:160]!r}")
            return None
        latencies[name].append(time.monotonic() - sent_at)
        return json.loads(raw)["data"]

    for origin, destination, day in tasks:
        if time.monotonic() >= until:
            break
        search = round_trip_search(origin, destination, day)
        found = step("search", "POST", "/json/v1/offers", search, 201)
        if found is None:
            continue
        chosen: dict = {}
        for offer in found["offers"]:
            chosen.setdefault(offer["offerItems"][0]["legIndex"], offer)
        if len(chosen) != 2:
            continue
        price = {
            "selections": [
                {"offerId": o["offerId"], "offerItemIds": [o["offerItems"][0]["offerItemId"]]}
                for _, o in sorted(chosen.items())
            ],
            "passengers": PARTY,
        }
        priced = step("price", "POST", "/json/v1/offers/price", price, 201)
        if priced is None:
            continue
        body = {**booking_body(priced, rng.choice(SURNAMES)), "payment": HOLD}
        booked = step("hold", "POST", "/json/v1/orders", body, 201)
        if booked is None:
            continue
        if step("retrieve", "GET", f"/json/v1/orders/{booked['order']['orderId']}", None, 200):
            funnels += 1
    results.put(
        {
            "funnels": funnels,
            "latencies": latencies,
            "failures": failures,
            "finished": time.monotonic(),
        }
    )


def report(results: dict[str, list[dict]]) -> None:
    best = max(median([r["rate"] for r in rounds]) for rounds in results.values())
    rows = []
    for label, rounds in results.items():
        rate = median([r["rate"] for r in rounds])
        latencies = {s: [t for r in rounds for t in r["latencies"][s]] for s in STEPS}
        failures = [f for r in rounds for f in r["failures"]]
        rows.append(
            (
                label,
                f"{rate:.1f}/s",
                f"{rate / best:.2f}x",
                ", ".join(f"{r['rate']:.0f}" for r in rounds),
                *(f"{p95(latencies[s]) * 1000:.1f} ms" if latencies[s] else "-" for s in STEPS),
                f"{median([r['cpu'] for r in rounds]) * 1000:.1f} ms",
                str(len(failures)),
            )
        )
        for failure in failures[:3]:
            print(f"  ({label}: {failure})")
    table(
        f"The booking funnel (search, price, hold, retrieve) at {CLIENTS} clients, by gunicorn "
        "configuration: funnels per second (and against the best in this run), each step's "
        "p95, the gunicorn processes' CPU per funnel, requests failed",
        HEADER,
        rows,
    )
    served_rows = []
    for label, rounds in results.items():
        cells = []
        for s in STEPS:
            seen = [t for r in rounds for t in r["latencies"][s]]
            served = [t for r in rounds for t in r["served"][s]]
            cells.append(
                f"{p95(seen) * 1000:.1f} / {p95(served) * 1000:.1f} ms" if seen and served else "-"
            )
        busy = median([r["busy"] for r in rounds])
        served_rows.append((label, *cells, f"{busy:.2f} requests"))
    table(
        "The same steps as the clients saw them and as the server's request log timed them "
        "(from the request's first middleware to its answer), and how many requests were "
        "inside the server on average (their server times summed over the phase)",
        SERVED_HEADER,
        served_rows,
    )
    write_figures(
        "workers",
        [
            f"{len(CONFIGURATIONS)} configurations, {ROUNDS} rounds of {SECONDS:.0f} s each "
            f"(forward, then backward); {CORES} cores; the figures are each configuration's "
            "median round",
            "the load average above says how busy the machine was: the other processes on it "
            "take their share of both cores from every configuration alike",
        ],
    )


if __name__ == "__main__":
    with scratch():
        main()
