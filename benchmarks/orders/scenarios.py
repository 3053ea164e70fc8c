"""The orders benchmark's run in order (`main`) and its create-order phase."""

import http.client
import json
import os
import time
from collections.abc import Collection, Sequence
from urllib.parse import urlencode

from benchmarks.common import (
    BENCH_DATABASE,
    bench_database_seeded,
    log_path,
    start_gunicorn,
    write_figures,
)
from benchmarks.orders.bookings import (
    BOOKING_KINDS,
    HOLD,
    error_in,
    ndc_order_refs,
    order_create_xml,
    prepare_ancillaries,
    prepare_offers,
)
from benchmarks.orders.load import (
    call,
    client_ports,
    cpu_snapshot,
    cpu_spent,
    json_headers,
    load,
    run_clients,
    wait_ready,
)
from benchmarks.orders.order_list import explain_list, insert_list_orders
from benchmarks.orders.references import (
    floor_phase,
    floor_start,
    pgbench_drop,
    pgbench_init,
    pgbench_tps,
    replay_phase,
)
from benchmarks.orders.report import print_results
from benchmarks.orders.seats import ancillaries_bench
from benchmarks.orders.sizes import CLIENTS, ORDERS_PER_CLIENT, REPEATS, WARMUP_PER_CLIENT
from benchmarks.replay import (
    PYTHON_REPLAY_HOLDS,
    REPLAY_BOOKINGS,
    Replayer,
    capture_holds,
    replay_script,
)


def main() -> None:
    started = time.monotonic()
    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/3")
    raw_key, markets = bench_database_seeded("bench-orders")
    pgbench_init()
    from django.db import connections

    server, port = start_gunicorn(workers=2, log_name="bench-orders.log")
    log = log_path("bench-orders.log")
    floor = framework = None
    try:
        wait_ready(port)
        auth = json_headers(port, raw_key)
        token = auth["Authorization"].removeprefix("Bearer ")

        # Priced offers, searched and priced by the clients themselves, before any timing.
        per_phase = CLIENTS * ORDERS_PER_CLIENT
        captured = 1 + REPLAY_BOOKINGS  # a warm-up, then the replayed ones
        wanted = CLIENTS * WARMUP_PER_CLIENT + len(BOOKING_KINDS) * REPEATS * per_phase + captured
        prepared = prepare_offers(port, auth, markets, wanted)
        # The bookings with a seat and a bag: their seat maps and service lists are
        # fetched now, before any timing.
        with_ancillaries = prepare_ancillaries(port, auth, prepared[-REPEATS * per_phase :])
        prepared = prepared[: -REPEATS * per_phase]
        # The hold replay: holds of the benchmark's own offers booked in this process,
        # their SQL captured and made a pgbench script (benchmarks/replay.py).
        replay = replay_script(capture_holds(prepared[:captured], token), CLIENTS)
        prepared = prepared[captured:]
        connections.close_all()  # before any more client processes are forked
        replayer = Replayer(replay, BENCH_DATABASE, log_path("bench-hold-replay"), CLIENTS)
        print(
            f"(hold replay: {len(replay.legs)} legs; a hold is {replay.statements} statements, "
            f"{replay.in_transaction} in its transaction: "
            + ", ".join(f"{n} {kind}" for kind, n in replay.kinds.items())
            + f"; {len(replayer.scripts)} scripts in {replayer.path})"
        )
        floor, floor_port = floor_start(replayer, workers=2)
        framework, framework_port = floor_start(replayer, workers=2, framework=True)
        wait_ready(floor_port)
        wait_ready(framework_port)

        book_phase(port, auth, prepared[: CLIENTS * WARMUP_PER_CLIENT], HOLD, "ow", server.pid)
        queues = {"hold": prepared[CLIENTS * WARMUP_PER_CLIENT :], "anc": with_ancillaries}
        queues["card"] = queues["hold"][REPEATS * per_phase :]
        queues["hold"] = queues["hold"][: REPEATS * per_phase]
        queues["ndc"] = queues["card"][REPEATS * per_phase :]
        queues["card"] = queues["card"][: REPEATS * per_phase]
        pgbench_rates = [pgbench_tps()]
        phases = {kind: [] for kind, _, _ in BOOKING_KINDS}
        replays = []
        refs: list[tuple[str, str]] = []
        for rep in range(REPEATS):
            if rep and rep == REPEATS // 2:
                pgbench_rates.append(pgbench_tps())
            # Interleaved in every repeat, so that the machine's drift hits each alike.
            for kind, payment, _ in BOOKING_KINDS:
                bodies = queues[kind][rep * per_phase : (rep + 1) * per_phase]
                result = book_phase(port, auth, bodies, payment, f"o{kind[0]}{rep}", server.pid)
                phases[kind].append(result)
                refs += result["refs"]
                if kind == "hold":
                    # Right after each hold phase, for as long as it took.
                    replays.append(replay_phase(replayer, result["seconds"], server.pid))
                    replays[-1]["python"] = replayer.run_python(PYTHON_REPLAY_HOLDS)
                    for name, process, at in (
                        ("floor", floor, floor_port),
                        ("framework", framework, framework_port),
                    ):
                        replays[-1][name] = floor_phase(
                            replayer, at, process.pid, bodies, result["seconds"], auth, name
                        )
        pgbench_rates.append(pgbench_tps())

        load(port, ["/health"], {}, "h8")
        load(port, [f"/json/v1/orders/{order_id}" for order_id, _ in refs], auth, "rid")
        load(port, [f"/json/v1/orders/{locator}" for _, locator in refs], auth, "rloc")
        ancillaries = ancillaries_bench(port, auth)

        list_insert_seconds, cases = insert_list_orders()
        list_cases = []  # (name, query params, the page's `page` block)
        for n, (name, params) in enumerate(cases):
            path = "/json/v1/orders?" + urlencode(params)
            status, raw = call(port, "GET", path, None, auth)
            assert status == 200, (path, status, raw[:300])
            list_cases.append((name, params, json.loads(raw)["data"]["page"]))
            load(port, [path], auth, f"l{n}")
            # The list target names no concurrency: the page's latency for one client
            # alone, beside the figure at CLIENTS.
            load(port, [path], auth, f"s{n}", clients=1)
        sql = explain_list(cases)
    finally:
        for process in (server, floor, framework):
            if process is not None:
                process.terminate()
                process.wait(timeout=15)
        pgbench_drop()

    print_results(
        log=log,
        phases=phases,
        pgbench_rates=pgbench_rates,
        replays=replays,
        orders_written=sum(len(p["refs"]) for ps in phases.values() for p in ps),
        ancillaries=ancillaries,
        list_cases=list_cases,
        list_insert_seconds=list_insert_seconds,
        sql=sql,
    )
    print(f"\n(whole benchmark {time.monotonic() - started:.0f} s)")
    write_figures("orders")


def book_phase(
    port: int | Sequence[int],
    auth: dict,
    bodies: list,
    payment: dict,
    tag: str,
    server_pid: int | Collection[int],
) -> dict:
    """CLIENTS processes book their share of `bodies` one after another, all starting at
    one instant; the rate is orders created over the time until the last one finished.
    Beside it, the CPU each part of the machine spent in the phase, and each order's
    seconds as its client saw them (the server's own are in its log). With several ports
    (nodes), the clients are dealt out among them in turn, as `client_ports` says."""
    ndc = tag.startswith("on")  # the NDC phases: the same bookings as OrderCreateRQs
    requests = [order_create_xml(b) if ndc else {**b, "payment": payment} for b in bodies]
    start_at = time.monotonic() + 0.3
    before = cpu_snapshot(server_pid)
    results = run_clients(
        _book_client,
        [
            (client_port, auth, requests[n::CLIENTS], tag, start_at)
            for n, client_port in enumerate(client_ports(port, CLIENTS))
        ],
    )
    cpu = cpu_spent(before, cpu_snapshot(server_pid))
    cpu["clients"] = sum(r["cpu"] for r in results)
    finished = max(r["finished"] for r in results)
    refs = [ref for r in results for ref in r["refs"]]
    failures = [f for r in results for f in r["failures"]]
    if failures:
        print(f"  ({len(failures)} of {len(bodies)} bookings in phase {tag} failed: {failures[0]})")
    if not refs:
        raise SystemExit(f"every booking of phase {tag} failed: {failures[0]}")
    return {
        "refs": refs,
        "failures": failures,  # each "status body", as _book_client saw it
        "latencies": [t for r in results for t in r["latencies"]],
        "answers": [a for r in results for a in r["answers"]],
        "rate": len(refs) / (finished - start_at),
        "seconds": finished - start_at,
        "cpu_per_order": {part: seconds / len(refs) for part, seconds in cpu.items()},
    }


def _book_client(port: int, auth: dict, bodies: list, tag: str, start_at: float, results) -> None:
    time.sleep(max(0.0, start_at - time.monotonic()))
    refs, failures, latencies = [], [], []
    xml_auth = {**auth, "Content-Type": "application/xml"}
    answers = []  # the NDC OrderViewRS documents, checked against the schema afterwards
    for n, body in enumerate(bodies):
        ndc = isinstance(body, bytes)
        sent_at = time.monotonic()
        try:
            status, raw = call(
                port,
                "POST",
                "/ndc/v1/OrderCreate" if ndc else "/json/v1/orders",
                body,
                xml_auth if ndc else auth,
                f"{tag}-{os.getpid()}-{n}",
            )
        except (OSError, http.client.HTTPException) as exc:
            failures.append(repr(exc))
            continue
        if ndc and status == 200 and b"<Error>" not in raw:
            refs.append(ndc_order_refs(raw))
            answers.append(raw)
        elif status == 201 and not ndc:
            order = json.loads(raw)["data"]["order"]
            refs.append((order["orderId"], order["recordLocator"]))
        else:
            failures.append(f"{status} {error_in(raw)}")
            continue
        latencies.append(time.monotonic() - sent_at)
    results.put(
        {
            "refs": refs,
            "failures": failures,
            "latencies": latencies,
            "answers": answers,
            "finished": time.monotonic(),
            "cpu": time.process_time(),  # this client process's CPU since it was forked
        }
    )
