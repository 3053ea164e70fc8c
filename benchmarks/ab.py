"""One request served by two revisions of the project, in turn, on one machine.

This machine's speed moves by half or more between runs (`/health` and pgbench move with
it), so a change is best measured against its base in one sitting. Each round serves
revision A and then B (B then A in the next round, and so on) from git worktrees with
the benchmarks' gunicorn (2 workers), against the database `benchmarks.orders` leaves
behind when told to keep it (run `BENCH_KEEP=1 python -m benchmarks.orders` first), and
loads the one request from CLIENTS processes for SECONDS. Server time comes from each
server's own access log.

    python -m benchmarks.ab HEAD~1 HEAD "/json/v1/orders?pageSize=1000"
    python -m benchmarks.ab HEAD . "/json/v1/orders/{hold}/seats" --method POST --body '{}'

`.` is the working tree as it is, uncommitted changes included; `{hold}` in the path is
the newest hold the orders benchmark booked that has not lapsed.
"""

import argparse
import json
import os
from contextlib import ExitStack
from pathlib import Path

from benchmarks.common import (
    AGENCY,
    bench_api_key,
    log_path,
    median,
    ms,
    p95,
    prepare_environment,
    start_gunicorn,
    table,
)
from benchmarks.earlier import checkout
from benchmarks.orders.load import call, load_requests, server_times, wait_ready

WARMUP = 20  # requests before each timed phase: caches and layouts filled


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", help="base revision (any git revision, or . for the work tree)")
    parser.add_argument("b", help="revision to compare with it")
    parser.add_argument("path", help="the request's path; {hold} names a bench hold")
    parser.add_argument("--method", default="GET")
    parser.add_argument("--body", help="JSON body")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()

    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/3")  # the orders bench's
    prepare_environment()
    import django

    django.setup()
    raw_key = bench_api_key("bench-ab")
    path = args.path.replace("{hold}", _newest_hold()) if "{hold}" in args.path else args.path
    body = json.loads(args.body) if args.body else None
    from django.db import connections

    connections.close_all()

    samples: dict[str, list[float]] = {args.a: [], args.b: []}
    rates: dict[str, list[float]] = {args.a: [], args.b: []}
    with ExitStack() as stack:
        trees = {rev: stack.enter_context(checkout(rev)) for rev in samples}
        for n in range(args.rounds):
            for rev in (args.a, args.b) if n % 2 == 0 else (args.b, args.a):
                tag = f"ab{n}{'a' if rev == args.a else 'b'}"
                times, rate = _phase(trees[rev], raw_key, (args.method, path, body), tag, args)
                samples[rev] += times
                rates[rev].append(rate)
                print(f"  round {n}, {rev}: {len(times)} requests, p95 {ms(p95(times))}")

    base = samples[args.a]
    rows = [
        (
            rev,
            len(times),
            ms(median(times)),
            ms(p95(times)),
            f"{median(rates[rev]):.0f}/s",
            f"{median(times) / median(base):.2f} / {p95(times) / p95(base):.2f} / "
            f"{median(rates[rev]) / median(rates[args.a]):.2f}",
        )
        for rev, times in samples.items()
    ]
    table(
        f"{args.method} {path}: server time at {args.clients} clients, {args.rounds} rounds "
        f"of {args.seconds:.0f} s each, the revisions in turn",
        ("revision", "requests", "median", "p95", "rate (median)", "to A: median / p95 / rate"),
        rows,
    )


def _phase(tree: Path, raw_key: str, request: tuple, tag: str, args) -> tuple[list, float]:
    """Serve `tree`, warm it, load `request`: its server times and requests per second."""
    server, port = start_gunicorn(workers=2, log_name=f"{tag}.log", tree=tree)
    log = log_path(f"{tag}.log")
    try:
        wait_ready(port)
        status, raw = call(port, "POST", "/auth/token", None, {"x-api-key": raw_key})
        assert status in (200, 201), raw
        auth = {
            "Authorization": f"Bearer {json.loads(raw)['access_token']}",
            "Content-Type": "application/json",
        }
        for _ in range(WARMUP):
            status, raw = call(port, *request, auth)
            assert status == 200, (status, raw[:300])
        rate = load_requests(port, [request], auth, tag, args.clients, args.seconds)
    finally:
        server.terminate()
        server.wait(timeout=15)
    return server_times(log).get(tag, []), rate


def _newest_hold() -> str:
    from django.utils import timezone

    from orders.models import Order, OrderStatus

    hold = (
        Order.objects.filter(
            agency_code=AGENCY,
            status=OrderStatus.ONHOLD,
            payment_time_limit__gt=timezone.now(),
            events__kind="created",
        )
        .order_by("-pk")
        .values_list("order_id", flat=True)
        .first()
    )
    if hold is None:
        raise SystemExit(
            "no hold in airline_bench: run BENCH_KEEP=1 python -m benchmarks.orders first"
        )
    return hold


if __name__ == "__main__":
    main()
