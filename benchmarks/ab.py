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

With `--interleave`, both revisions are served at once, one sync worker each, and one
client sends the request to each in turn, a block of `--per-block` requests at a time
(A then B, then B then A), for `--blocks` blocks each. What each block cost is read from
its worker's own CPU clock (the kernel's schedstat of the thread that serves requests),
so the two sides meet the same minute of a machine whose speed drifts, and neither
queues nor contends with the other. It is for a change of a few per cent in the CPU a
request costs, which the rounds under load cannot tell from the machine's drift:

    python -m benchmarks.ab HEAD~1 HEAD "/json/v1/orders/{hold}" --interleave
"""

import argparse
import json
import os
import statistics
import time
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
    process_cpu_ns,
    start_gunicorn,
    table,
)
from benchmarks.earlier import checkout
from benchmarks.orders.load import call, json_headers, load_requests, server_times, wait_ready

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
    parser.add_argument(
        "--interleave", action="store_true", help="both served at once, CPU per request"
    )
    parser.add_argument("--blocks", type=int, default=40, help="with --interleave, per side")
    parser.add_argument("--per-block", type=int, default=10, help="with --interleave")
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

    if args.interleave:
        _interleaved(raw_key, (args.method, path, body), args)
        return
    revisions = {"A": args.a, "B": args.b}  # by side: the two may name one revision
    samples: dict[str, list[float]] = {"A": [], "B": []}
    rates: dict[str, list[float]] = {"A": [], "B": []}
    with ExitStack() as stack:
        trees = {side: stack.enter_context(checkout(rev)) for side, rev in revisions.items()}
        for n in range(args.rounds):
            for side in "AB" if n % 2 == 0 else "BA":
                tag = f"ab{n}{side.lower()}"
                times, rate = _phase(trees[side], raw_key, (args.method, path, body), tag, args)
                samples[side] += times
                rates[side].append(rate)
                print(f"  round {n}, {side}: {len(times)} requests, p95 {ms(p95(times))}")

    base = samples["A"]
    rows = [
        (
            side,
            revisions[side],
            len(times),
            ms(median(times)),
            ms(p95(times)),
            f"{median(rates[side]):.0f}/s",
            f"{median(times) / median(base):.2f} / {p95(times) / p95(base):.2f} / "
            f"{median(rates[side]) / median(rates['A']):.2f}",
        )
        for side, times in samples.items()
    ]
    table(
        f"{args.method} {path}: server time at {args.clients} clients, {args.rounds} rounds "
        f"of {args.seconds:.0f} s each, the revisions in turn",
        (
            "side",
            "revision",
            "requests",
            "median",
            "p95",
            "rate (median)",
            "to A: median / p95 / rate",
        ),
        rows,
    )


def _phase(tree: Path, raw_key: str, request: tuple, tag: str, args) -> tuple[list, float]:
    """Serve `tree`, warm it, load `request`: its server times and requests per second."""
    server, port = start_gunicorn(workers=2, log_name=f"{tag}.log", tree=tree, env=_same_key())
    log = log_path(f"{tag}.log")
    try:
        auth = _warmed(port, raw_key, request)
        rate = load_requests(port, [request], auth, tag, args.clients, args.seconds)
    finally:
        _stop(server)
    return server_times(log).get(tag, []), rate


def _warmed(port: int, raw_key: str, request: tuple) -> dict:
    """Once the server on `port` is ready: its token's headers, after WARMUP requests."""
    wait_ready(port)
    auth = json_headers(port, raw_key)
    for _ in range(WARMUP):
        status, raw = call(port, *request, auth)
        assert status == 200, (status, raw[:300])
    return auth


def _interleaved(raw_key: str, request: tuple, args) -> None:
    """--interleave: both revisions served at once, one sync worker each; blocks of the
    request to each in turn; each block's CPU per request from its worker's schedstat."""
    revisions = {"A": args.a, "B": args.b}  # by side: the two may name one revision
    cpu: dict[str, list[float]] = {"A": [], "B": []}
    wall: dict[str, list[float]] = {"A": [], "B": []}
    served = {}
    with ExitStack() as stack:
        for side, rev in revisions.items():
            tree = stack.enter_context(checkout(rev))
            server, port = start_gunicorn(
                workers=1, log_name=f"ab-{side}.log", tree=tree, env=_same_key()
            )
            stack.callback(_stop, server)
            served[side] = (port, server.pid)
        for side, (port, master) in served.items():
            auth = _warmed(port, raw_key, request)  # the worker is forked once loading is done
            served[side] = (port, _worker_pid(master), auth)
        for n in range(args.blocks):
            for side in "AB" if n % 2 == 0 else "BA":
                port, worker, auth = served[side]
                spent, started = process_cpu_ns(worker), time.perf_counter()
                for _ in range(args.per_block):
                    status, raw = call(port, *request, auth)
                    assert status == 200, (side, status, raw[:300])
                wall[side].append((time.perf_counter() - started) / args.per_block)
                cpu[side].append((process_cpu_ns(worker) - spent) / 1e9 / args.per_block)
    paired = sorted(b / a for a, b in zip(cpu["A"], cpu["B"], strict=True))
    quartiles = statistics.quantiles(paired, n=4) if len(paired) > 1 else paired * 3
    table(
        f"{request[0]} {request[1]}: the revisions served at once (one sync worker each), "
        f"{args.blocks} blocks of {args.per_block} requests each in turn from one client: "
        "the serving thread's CPU per request and the client's time per request (medians "
        "of the blocks)",
        ("side", "revision", "CPU per request", "round trip", "B / A: CPU, block by block"),
        [
            ("A", args.a, ms(median(cpu["A"])), ms(median(wall["A"])), "1.00"),
            (
                "B",
                args.b,
                ms(median(cpu["B"])),
                ms(median(wall["B"])),
                f"{median(paired):.3f} (quartiles {quartiles[0]:.3f} - {quartiles[2]:.3f})",
            ),
        ],
    )


def _same_key() -> dict[str, str]:
    """This checkout's SECRET_KEY for a server of either revision: a git worktree has no
    var/secret_key of its own and would make one, and a node refuses to start beside a
    live node with another key (airline/nodes.py)."""
    from django.conf import settings

    return {"SECRET_KEY": settings.SECRET_KEY}


def _worker_pid(master: int) -> int:
    """The one worker of the gunicorn `master` (started with workers=1), once forked."""
    from tests.e2e.servers import worker_pids

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if workers := worker_pids(master):
            return workers[0]
        time.sleep(0.05)
    raise RuntimeError(f"gunicorn {master} forked no worker")


def _stop(server) -> None:
    server.terminate()
    server.wait(timeout=15)


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
