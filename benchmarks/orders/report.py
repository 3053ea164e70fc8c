"""The orders benchmark's tables: printed, and kept for the figures page."""

import os

from benchmarks.common import (
    AGENCY,
    median,
    ms,
    p95,
    schema_invalid,
    table,
)
from benchmarks.orders.bookings import BOOKING_KINDS
from benchmarks.orders.load import server_times
from benchmarks.orders.seats import A320_CONFIGURATION
from benchmarks.orders.sizes import CLIENTS, LIST_ORDERS, OTHER_EVERY, REPEATS

# The booking path's targets (docs/contributors/benchmarks.md): holds a second against the same
# holds' SQL replayed by pgbench, and the service's CPU per hold against PostgreSQL's.
HOLDS_TO_REPLAY = 0.50
SERVICE_TO_DATABASE = 2.0


# The create-order p95 targets relative to another kind's p95: (kind, the kind it is
# measured against, the ratio's name, the bound).
P95_RATIO_TARGETS = (
    ("anc", "hold", "with a seat and a bag / plain hold", 1.30),
    ("card", "hold", "paid by card / plain hold", 1.30),
    ("ndc", "card", "NDC OrderCreate / JSON create order, both by card", 1.50),
)


def _phase_times(times: dict, kind: str, reps) -> list[float]:
    """The server times of `kind`'s create-order phases in the repeats `reps`."""
    return [t for rep in reps for t in times.get(f"o{kind[0]}{rep}", [])]


def _p95_ratio(times: dict, kind: str, reference: str, reps) -> float:
    """`kind`'s p95 over `reference`'s, over the repeats `reps`."""
    return p95(_phase_times(times, kind, reps)) / p95(_phase_times(times, reference, reps))


def print_results(
    *,
    log,
    phases,
    pgbench_rates,
    replays,
    orders_written,
    ancillaries,
    list_cases,
    list_insert_seconds,
    sql,
) -> None:
    times = server_times(log)
    health = times.get("h8", [])
    rows = [("GET /health (reference)", len(health), ms(median(health)), ms(p95(health)), "")]
    create_p95 = {}
    against = {kind: (reference, bound) for kind, reference, _, bound in P95_RATIO_TARGETS}
    for kind, _, label in BOOKING_KINDS:
        samples = _phase_times(times, kind, range(REPEATS))
        create_p95[kind] = p95(samples)
        target = "-"  # (each kind is measured after the one its target is relative to)
        if kind in against:
            reference, bound = against[kind]
            target = f"<= {bound:.2f}x {reference} ({create_p95[reference] * bound * 1000:.1f} ms)"
        rows.append(
            (f"create order, {label}", len(samples), ms(median(samples)), ms(p95(samples)), target)
        )
    table(
        f"Create order, round trip for 2 ADT + 1 CHD: server time at {CLIENTS} concurrent "
        "clients (gunicorn 2 workers, PostgreSQL + Redis)",
        ("request", "orders", "median", "p95", "target p95"),
        rows,
    )
    # A pooled p95 turns on a few slow requests: the repeats' own ratios show how far one
    # run's figure can be trusted.
    table(
        "Create order p95 against its reference, same run: pooled over the repeats, and "
        "repeat by repeat",
        ("ratio", "pooled", "repeat by repeat", "target"),
        [
            (
                what,
                f"{_p95_ratio(times, kind, reference, range(REPEATS)):.2f}",
                ", ".join(
                    f"{_p95_ratio(times, kind, reference, [rep]):.2f}" for rep in range(REPEATS)
                ),
                f"<= {target:.2f}",
            )
            for kind, reference, what, target in P95_RATIO_TARGETS
        ],
    )
    answers = [a for phase in phases["ndc"] for a in phase["answers"]]
    invalid = schema_invalid(answers)
    print(
        f"  NDC OrderCreate answers checked against IATA_OrderViewRS.xsd: {len(answers)}, "
        f"schema-invalid {len(invalid)} (target 0)" + (f"; first: {invalid[0]}" if invalid else "")
    )

    print_replay(phases, replays)

    reference = median(pgbench_rates)
    rows = [
        (
            "pgbench TPC-B-like, -c 8 -j 2 (median of "
            + ", ".join(f"{r:.0f}" for r in pgbench_rates)
            + ")",
            f"{reference:.0f} tps",
            "1.00",
        )
    ]
    for kind, _, label in BOOKING_KINDS:
        rates = [p["rate"] for p in phases[kind]]
        failed = sum(len(p["failures"]) for p in phases[kind])
        rate = median(rates)
        rows.append(
            (
                f"create order, {label} (median of {', '.join(f'{r:.0f}' for r in rates)}"
                + (f"; {failed} failed" if failed else "")
                + ")",
                f"{rate:.0f}/s",
                f"{rate / reference:.2f}",
            )
        )
    table(
        f"Old reference: orders per second at {CLIENTS} concurrent clients against pgbench's "
        "TPC-B-like transaction (same run; the wrong yardstick, kept for comparison)",
        ("measure", "rate", "ratio to TPC-B (old target >= 0.20)"),
        rows,
    )

    parts = ("gunicorn", "postgresql", "clients", "machine", "machine idle")
    rows = []
    for kind, _, label in BOOKING_KINDS:
        spent = [p["cpu_per_order"] for p in phases[kind]]
        rows.append((label, *(f"{median([s[part] for s in spent]) * 1000:.1f}" for part in parts)))
    table(
        "CPU per order created, ms (median of the phases): where the two cores went. "
        "'machine' is all busy CPU, 'machine idle' what was left",
        ("create order", *parts),
        rows,
    )

    rows = [("GET /health (reference)", len(health), ms(median(health)), ms(p95(health)), "")]
    for name, tag in (("by order id", "rid"), ("by record locator", "rloc")):
        samples = times.get(tag, [])
        rows.append(
            (f"retrieve order {name}", len(samples), ms(median(samples)), ms(p95(samples)), "15 ms")
        )
    table(
        f"Order retrieve (round trip, 3 passengers): server time at {CLIENTS} concurrent "
        f"clients, over the {orders_written} orders just created",
        ("request", "requests", "median", "p95", "target p95"),
        rows,
    )

    rows = [("GET /health (reference)", len(health), ms(median(health)), ms(p95(health)), "", "")]
    for name, tag, shape, rate in ancillaries["seat_maps"]:
        samples = times.get(tag, [])
        rows.append(
            (
                f"seat map, {name}",
                len(samples),
                ms(median(samples)),
                ms(p95(samples)),
                "20 ms",
                f"{shape['legs']} x {'/'.join(shape['equipment'])}, {shape['units']} units "
                f"({shape['open']} open), {shape['kb']:.0f} KB; {rate:.0f}/s",
            )
        )
    table(
        f"Seat maps of the A320 ({A320_CONFIGURATION}, 150 seats), round trip on nonstops in "
        f"economy for 2 ADT + 1 CHD: server time at {CLIENTS} concurrent clients",
        ("POST .../seats", "requests", "median", "p95", "target p95", "answer; rate"),
        rows,
    )

    rows = []
    for kind, label in (("seat", "one open seat"), ("bag", "one CB1 bag")):
        phase = ancillaries["accepts"][kind]
        samples = times.get(f"a{kind[0]}", [])
        rows.append(
            (
                f"AcceptOffer, {label}",
                phase["done"],
                len(phase["failures"]),
                ms(median(samples)),
                ms(p95(samples)),
                "40 ms",
                f"{phase['rate']:.0f}/s",
            )
        )
    table(
        f"Change order (PATCH /orders/{{id}}) on A320 holds, each of {CLIENTS} concurrent "
        "clients on its own orders: server time",
        ("change", "200s", "non-200", "median", "p95", "target p95", "rate"),
        rows,
    )

    rows = []
    for n, (name, _params, page) in enumerate(list_cases):
        samples, alone = times.get(f"l{n}", []), times.get(f"s{n}", [])
        found = sql[name]
        rows.append(
            (
                name,
                f"{page['count']}{'+' if page['hasMore'] else ''}",
                len(samples),
                ms(median(samples)),
                ms(p95(samples)),
                f"{ms(median(alone))} / {ms(p95(alone))}",
                "20 ms",
                ms(found["in_process"]),
                f"{ms(found['main'])} / {ms(found['all'])} ({found['queries']} queries)",
            )
        )
    others = LIST_ORDERS // (OTHER_EVERY - 1) // 1000
    table(
        f"OrderList with {LIST_ORDERS // 1000}k orders for agency {AGENCY} (+{others}k of "
        f"another, written by SQL in {list_insert_seconds:.0f} s): server time at {CLIENTS} "
        "concurrent clients",
        (
            "GET /json/v1/orders",
            "rows",
            "requests",
            "median",
            "p95",
            "1 client: median / p95",
            "target p95",
            "in process, alone",
            "its SQL by EXPLAIN ANALYZE: orders query / all",
        ),
        rows,
    )
    slowest = max(sql, key=lambda name: sql[name]["main"])
    print(f"\nPlan of the orders query of the case where it is slowest ({slowest}):")
    print("  " + sql[slowest]["sql"])
    print("\n".join("  " + line for line in sql[slowest]["plan"].splitlines()))


def print_replay(phases: dict, replays: list[dict]) -> None:
    """Holds per second against the same holds' SQL replayed by pgbench, each replay
    right after a hold phase and as long as it; and the CPU per hold of each."""
    holds = [p["rate"] for p in phases["hold"]]
    tps = [r["tps"] for r in replays]
    pairs = [h / r for h, r in zip(holds, tps, strict=True)]
    hold, replayed = median(holds), median(tps)
    floors = [r["floor"]["rate"] for r in replays]
    floor = median(floors)
    frameworks = [r["framework"]["rate"] for r in replays]
    framework = median(frameworks)
    rows = [
        (
            f"hold replay: the captured holds' SQL, pgbench -f -c {CLIENTS} -j 2 -T "
            f"{'/'.join(str(r['seconds']) for r in replays)} (median of "
            + ", ".join(f"{r:.0f}" for r in tps)
            + f"; latency {median([r['latency_ms'] for r in replays]):.1f} ms)",
            f"{replayed:.0f} tps",
            "1.00",
        ),
        (
            f"create order, on hold, HTTP (median of {', '.join(f'{h:.0f}' for h in holds)})",
            f"{hold:.0f}/s",
            f"{hold / replayed:.2f} (phase by phase: {', '.join(f'{x:.2f}' for x in pairs)})",
        ),
        (
            "the same SQL served bare: gunicorn (2 sync workers) and psycopg, no Django "
            f"(benchmarks/floor.py; median of {', '.join(f'{f:.0f}' for f in floors)})",
            f"{floor:.0f}/s",
            f"{floor / replayed:.2f} (phase by phase: "
            + ", ".join(f"{r['floor']['rate'] / r['tps']:.2f}" for r in replays)
            + ")",
        ),
        (
            "the same SQL behind the framework: the service's gunicorn, middleware, "
            "authentication, throttle, body parsing and JSON answer, Django's cursor, "
            "nothing of a booking (benchmarks/floor_urls.py; median of "
            f"{', '.join(f'{f:.0f}' for f in frameworks)})",
            f"{framework:.0f}/s",
            f"{framework / replayed:.2f} (phase by phase: "
            + ", ".join(f"{r['framework']['rate'] / r['tps']:.2f}" for r in replays)
            + ")",
        ),
    ]
    table(
        f"Holds per second at {CLIENTS} concurrent clients against the same holds' SQL "
        "statements replayed by pgbench (same run, each replay right after a hold phase)",
        ("measure", "rate", f"ratio to the replay (target >= {HOLDS_TO_REPLAY:.2f})"),
        rows,
    )
    parts = ("postgresql", "machine", "machine idle")
    hold_cpu = [p["cpu_per_order"] for p in phases["hold"]]
    replay_cpu = [r["cpu_per_hold"] for r in replays]
    python_cpu = [r["python"]["cpu_per_hold"] for r in replays]
    floor_cpu = [r["floor"]["cpu_per_hold"] for r in replays]
    framework_cpu = [r["framework"]["cpu_per_hold"] for r in replays]
    python_holds = replays[0]["python"]["transactions"]
    table(
        "CPU per hold, ms (median of the phases): booked over HTTP / replayed by pgbench",
        ("hold", "gunicorn", "postgresql", "clients / pgbench", "machine", "machine idle"),
        [
            (
                "over HTTP",
                f"{median([c['gunicorn'] for c in hold_cpu]) * 1000:.1f}",
                *(f"{median([c[p] for c in hold_cpu]) * 1000:.1f}" for p in parts[:1]),
                f"{median([c['clients'] for c in hold_cpu]) * 1000:.1f}",
                *(f"{median([c[p] for c in hold_cpu]) * 1000:.1f}" for p in parts[1:]),
            ),
            (
                "replayed",
                "-",
                f"{median([c['postgresql'] for c in replay_cpu]) * 1000:.1f}",
                f"{median([c['pgbench'] for c in replay_cpu]) * 1000:.1f}",
                *(f"{median([c[p] for c in replay_cpu]) * 1000:.1f}" for p in parts[1:]),
            ),
            *(
                (
                    label,
                    *(
                        f"{median([c[p] for c in cpu]) * 1000:.1f}"
                        for p in ("gunicorn", "postgresql", "clients", *parts[1:])
                    ),
                )
                for label, cpu in (
                    ("served bare (benchmarks/floor.py)", floor_cpu),
                    ("behind the framework (benchmarks/floor_urls.py)", framework_cpu),
                )
            ),
            (
                f"replayed from Python (psycopg, 1 client, {python_holds} holds)",
                "-",
                f"{median([c['postgresql'] for c in python_cpu]) * 1000:.1f}",
                f"{median([c['python'] for c in python_cpu]) * 1000:.1f}",
                "-",
                "-",
            ),
        ],
    )
    verdict = "met" if hold / replayed >= HOLDS_TO_REPLAY else "missed"
    print(
        f"\nhold replay: {replayed:.0f} tps; holds {hold:.0f}/s = {hold / replayed:.2f}x "
        f"(target >= {HOLDS_TO_REPLAY:.2f}x: {verdict})"
    )
    service = median([c["gunicorn"] for c in hold_cpu])
    database = median([c["postgresql"] for c in hold_cpu])
    verdict = "met" if service <= SERVICE_TO_DATABASE * database else "missed"
    print(
        f"service CPU per hold: gunicorn {service * 1000:.1f} ms / PostgreSQL "
        f"{database * 1000:.1f} ms = {service / database:.2f}x "
        f"(target <= {SERVICE_TO_DATABASE:.0f}x: {verdict})"
    )
    # What merely sending the hold's SQL costs a Python client, against what PostgreSQL
    # spends running it in the same replay: the part of the service's CPU that fewer
    # Python steps around the statements cannot take away.
    speaking = median([c["python"] for c in python_cpu])
    run_by = median([c["postgresql"] for c in python_cpu])
    print(
        f"the hold's SQL sent from Python alone: {speaking * 1000:.1f} ms of client CPU "
        f"per hold against PostgreSQL's {run_by * 1000:.1f} ms = {speaking / run_by:.2f}x "
        f"(pgbench's client: {median([c['pgbench'] for c in replay_cpu]) * 1000:.1f} ms); "
        f"the service's CPU per hold beyond it: {(service - speaking) * 1000:.1f} ms"
    )
    # The floor's holds take the cores' time (busy or idle) that nothing above the driver
    # can give back; the target's rate leaves the service the rest for its own work. The
    # framework floor's take what no endpoint on Django and DRF can give back either; the
    # target's rate leaves the booking's own logic the rest.
    cores = os.cpu_count() or 1
    target = HOLDS_TO_REPLAY * replayed
    table(
        f"A hold's share of the {cores} cores' time (cores / holds a second), same run: "
        "the floor, the target, and the service",
        ("measure", "ms a hold"),
        [
            (f"the floor: its SQL served bare ({floor:.0f}/s)", f"{cores / floor * 1000:.1f}"),
            (
                f"at the target: {HOLDS_TO_REPLAY:.2f}x the replay ({target:.0f}/s)",
                f"{cores / target * 1000:.1f}",
            ),
            (
                "left for the service's own work at the target",
                f"{(cores / target - cores / floor) * 1000:.1f}",
            ),
            (
                f"the service's own work now: holds over HTTP ({hold:.0f}/s) less the floor",
                f"{(cores / hold - cores / floor) * 1000:.1f}",
            ),
            (
                f"the framework floor: the same SQL behind the framework ({framework:.0f}/s)",
                f"{cores / framework * 1000:.1f}",
            ),
            (
                "left for the booking's own logic at the target",
                f"{(cores / target - cores / framework) * 1000:.1f}",
            ),
            (
                "the booking's own logic now: holds over HTTP less the framework floor",
                f"{(cores / hold - cores / framework) * 1000:.1f}",
            ),
        ],
    )
