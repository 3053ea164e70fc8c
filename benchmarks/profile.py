"""Where each hot request's CPU goes, step by step. Run with `make bench` (or
`python -m benchmarks.profile`); it writes docs/benchmarks/figures/profile.md.

Each request is made in this process through the WSGI application gunicorn serves
(airline.wsgi, loaded as a worker has it: the schedule index built, every URL pattern
imported), on a fresh scratch database BENCH_DATABASE (`airline_bench_profile`) seeded
with the demo airline and Redis db 3 under a key prefix of its own; the database is
dropped and the keys deleted at the end. Every booking is a priced round trip for
2 ADT + 1 CHD on A320 nonstops (150 seats, the largest seat map), its offer searched
and priced (and its seat map and bag list fetched, for a booking with a seat and a bag)
before any timing.

Per request kind: WARMUP requests, then REQUESTS timed ones (this thread's CPU, from the
kernel, and the CPU of the PostgreSQL backend serving them, from its schedstat), then
REQUESTS more under cProfile with this thread's CPU clock as its timer, then REQUESTS
more with the backend's CPU read around each statement (benchmarks/pg_statements.py),
for the writes' table of PostgreSQL's CPU by statement. Each profiled
function's own CPU (cProfile's tottime) goes to a step by what the function is
(STEPS: its module, or its name for C functions); the CPU of a function of no step
(the standard library, Django's utilities, builtins) goes to its callers' steps, in
proportion to what each caller spent in it (cProfile's caller table), and on up. The
frames of a few steps claim everything beneath them (CLAIMS): the SQL and Redis calls
of authentication are authentication's, those of reading an offer the offer store's.
A step's milliseconds are its share of the profiled CPU times the unprofiled CPU per
request: cProfile's own cost per call falls heaviest on steps of many small Python
calls, so the shares lean towards those; the ordering of the big steps holds.

The revision before (PROFILE_BEFORE), run by its own benchmark, and this one take turns,
ROUNDS times each; each kind's figures on each side are its median round's.

It is one module because the step table (STEPS, CLAIMS), the attribution and the run
whose profiles it attributes are read together when a step's figure looks wrong.
"""

import cProfile
import json
import os
import pstats
import re
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TypeVar

# Before benchmarks.common is imported: it reads BENCH_DATABASE once, at import.
os.environ.setdefault("BENCH_DATABASE", "airline_bench_profile")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/3")
os.environ.setdefault("CACHE_KEY_PREFIX", "bench-profile")
# One database connection for the whole run, however long preparing it takes on a busy
# machine: each request's PostgreSQL CPU is read from its backend process.
os.environ.setdefault("DB_CONN_MAX_AGE", "86400")

from benchmarks.common import (
    bench_database_seeded,
    median,
    process_cpu_ns,
    quiet_request_log,
    scratch,
    table,
    write_figures,
)
from benchmarks.earlier import figures_at
from benchmarks.in_process import (
    Wsgi,
    order_create_xml_due,
    prepare,
    seat_change,
    with_ancillaries,
)
from benchmarks.orders.bookings import CARD, HOLD, round_trip_search
from benchmarks.orders.order_list import insert_list_orders
from benchmarks.pg_statements import BETWEEN, backend_cpu_by_statement
from benchmarks.shopping import _air_shopping_xml

# The code as it stood when this profile was first written: its own benchmark, run in the
# same sitting before this one, gives each figure's "before" (PROFILE_BEFORE= leaves it out).
BEFORE = os.environ.get("PROFILE_BEFORE", "25fb818")
REQUESTS = int(os.environ.get("PROFILE_REQUESTS", "30"))  # timed, then as many profiled
WARMUP = int(os.environ.get("PROFILE_WARMUP", "5"))
LIST_ORDERS = int(os.environ.get("PROFILE_LIST_ORDERS", "3000"))  # for OrderList's page
# How many times each revision is profiled, in turns (before, now, now, before, ...): this
# machine's speed drifts by a third and more within minutes, the same for the service and
# PostgreSQL, and a kind measured once on each side can land on a fast minute for one and
# a slow one for the other. Each kind's figures, on both sides, are its median round's.
ROUNDS = int(os.environ.get("PROFILE_ROUNDS", "2"))
# A folder to keep each request kind's raw cProfile stats in (pstats files), for reading
# a step's functions one by one: `python -m pstats FOLDER/create-order-on-hold.prof`.
DUMP = os.environ.get("PROFILE_DUMP", "")
PAGE = 1000  # OrderList's page size
BUSY = ("CHS", "PVD")  # benchmarks.shopping's busy market
DAYS_AHEAD = 14

# The steps, in the order the tables list them; the last two are not the service's.
AUTH = "authentication and throttling"
PARSE = "parsing and validation"
STORE = "offer store read"
PRICING = "pricing (fares, taxes, ancillary prices)"
SQL = "SQL build and round trips (ORM, psycopg)"
RENDER = "view render (order, offer, seat map dicts; NDC trees)"
SERIAL = "JSON / XML serialisation"
CACHE = "cache reads and writes (Redis)"
OUTBOX = "outbox, events and metrics"
MIDDLEWARE = "middleware, routing, request log"
LOGIC = "service logic (the rest of the app's code)"
OTHER = "unattributed (no caller of a step)"
DRIVER = "benchmark driver (not the service)"
ORDER = [AUTH, PARSE, STORE, PRICING, SQL, RENDER, SERIAL, CACHE, OUTBOX, MIDDLEWARE, LOGIC, OTHER]

# (pattern on "path:function" of a Python function, or on the name of a C function, step).
# The first that matches decides. A function none matches takes its callers' steps.
STEPS: list[tuple[str, str]] = [
    (r"benchmarks/", DRIVER),
    # Authentication and throttling, their cache and SQL included (CLAIMS).
    (r"/sellers/(authentication|throttling|authcache|permissions|keys)\.py", AUTH),
    (r"/rest_framework/(authentication|throttling|permissions)\.py", AUTH),
    (r"/jwt/", AUTH),
    # The offer store: reading an offer (CLAIMS); writing a batch is a cache write.
    (r"/offers/store\.py:(offer_load|offer_record|of|_item_fields)$", STORE),
    (r"/offers/store\.py:(batch_save|_encode)$", CACHE),
    (r"/orders/reading/presenters\.py:(_view_keep|_view_kept)$", CACHE),
    # Outbox, order events, metrics (CLAIMS).
    (r"/webhooks/(outbox|metrics)\.py", OUTBOX),
    (r"/airline/api/metrics\.py|/orders/(reading/metrics|core/events)\.py", OUTBOX),
    (r"/prometheus_client/", OUTBOX),
    # ndc/xml.py also writes the answers: its writers are the NDC document's render and
    # serialisation, not the request's parsing (the module's other functions).
    (r"/ndc/xml\.py:(serialize|text_document)$", SERIAL),
    (
        r"/ndc/xml\.py:(message_root|sub|msg_sub|amount|leaf|node|msg_node|amount_text"
        r"|append_text|escape|escape_attribute|_check_xml|_text_of)$",
        RENDER,
    ),
    # Parsing and validation.
    (r"/airline/api/(parsers|serializers|quick_validation)\.py", PARSE),
    (r"/orders/requests/(serializers|inputs|checks)\.py", PARSE),
    (r"/(offers|sellers|webhooks)/(serializers|passengers)\.py", PARSE),
    (r"/orders/servicing/reshop_request\.py|/airline/fares/validators\.py", PARSE),
    (r"/rest_framework/(serializers|fields|parsers|validators|relations)\.py", PARSE),
    (r"/django/core/validators\.py", PARSE),
    (r"/ndc/(xml|mapping|order_mapping|transport)\.py", PARSE),
    (r"orjson\.loads|json/decoder\.py|lxml\.etree\.(fromstring|XML|_XMLSchema)", PARSE),
    (r"of 'lxml\.etree\.XMLSchema'|lxml\.etree\.XMLParser", PARSE),
    # Pricing.
    (r"/airline/fares/", PRICING),
    (r"/offers/ancillaries\.py|/orders/money/fees\.py", PRICING),
    # SQL: the ORM's query building and the driver's round trips.
    (r"/django/db/|/psycopg/|/psycopg_pool/|psycopg_binary|psycopg_c", SQL),
    (r"/airline/sql\.py|/orders/core/rows\.py", SQL),
    # Serialisation (before the renders: their dumps calls are serialisation).
    (r"orjson\.dumps|json/encoder\.py|lxml\.etree\.tostring", SERIAL),
    (r"/airline/api/(renderers|responses)\.py|/rest_framework/renderers\.py", SERIAL),
    # The views' dicts and trees.
    (r"/(orders/reading|orders/servicing/exchange|offers)/(presenters|wire)\.py", RENDER),
    (r"/ndc/\w*presenters\.py|/ndc/reference\.py", RENDER),
    (r"/orders/reading/deliveries\.py", RENDER),
    # Redis, outside the offer store and authentication.
    (r"/django_redis/|/redis/|/django/core/cache/", CACHE),
    # Middleware, routing, the request/response objects, the request log.
    (r"/airline/api/(middleware|logging|versioning)\.py|/airline/standby\.py", MIDDLEWARE),
    (r"/django/(core/handlers|middleware|http|urls)/", MIDDLEWARE),
    (r"/django/contrib/\w+/middleware\.py|/whitenoise/|/axes/", MIDDLEWARE),
    (r"/rest_framework/(views|request|response|negotiation|versioning)\.py", MIDDLEWARE),
    (r"/django/views/", MIDDLEWARE),
    (r"/logging/__init__\.py|/pythonjsonlogger/|/json_log_formatter/", MIDDLEWARE),
    # The rest of the app's own code.
    (r"/work/[^/]+/(airline|offers|orders|ndc|sellers|webhooks)/", LOGIC),
    (r"/(airline|offers|orders|ndc|sellers|webhooks)/\w+(/\w+)*\.py", LOGIC),
]
# Steps whose frames take everything beneath them.
CLAIMS = {AUTH, STORE, OUTBOX}
_COMPILED = [(re.compile(pattern), step) for pattern, step in STEPS]


def step_of(function: tuple[str, int, str]) -> str | None:
    """The step a cProfile function key (file, line, name) is, or None: its callers'."""
    path, _, name = function
    key = name if path == "~" else f"{path}:{name}"
    for pattern, step in _COMPILED:
        if pattern.search(key):
            return step
    return None


def attribute(stats: dict) -> dict[str, float]:
    """Seconds of CPU per step from pstats' raw table {function: (cc, nc, tt, ct, callers)},
    where callers is {caller: (cc, nc, tt, ct)} of the function's calls by that caller."""
    claim_memo: dict = {}
    own_memo: dict = {}

    def mix(function, resolve: Callable, weight_index: int) -> dict[str | None, float]:
        callers = stats.get(function, (0, 0, 0, 0, {}))[4]
        total = sum(entry[weight_index] for entry in callers.values()) or 0.0
        if not callers:
            return {None: 1.0}
        out: dict[str | None, float] = defaultdict(float)
        for caller, entry in callers.items():
            share = entry[weight_index] / total if total else 1 / len(callers)
            for step, part in resolve(caller).items():
                out[step] += share * part
        return out

    def claim(function) -> dict[str | None, float]:
        """The innermost claiming step at or above `function` (None: there is none)."""
        if function in claim_memo:
            return claim_memo[function]
        claim_memo[function] = {None: 1.0}  # a cycle: no claim through it
        step = step_of(function)
        result = {step: 1.0} if step in CLAIMS else mix(function, claim, 3)
        claim_memo[function] = result
        return result

    def own(function) -> dict[str | None, float]:
        """The step of `function`'s own time: a claim above it, else its own step, else
        its callers'."""
        if function in own_memo:
            return own_memo[function]
        own_memo[function] = {None: 1.0}
        step = step_of(function)
        if step is None:
            result = mix(function, own, 3)
        elif step in CLAIMS or step == DRIVER:
            result = {step: 1.0}
        else:
            result = defaultdict(float)
            for claimed, part in mix(function, claim, 3).items():
                result[claimed or step] += part
        own_memo[function] = result
        return result

    spent: dict[str, float] = defaultdict(float)
    for function, (_, _, tottime, _, _) in stats.items():
        if not tottime:
            continue
        for step, part in own(function).items():
            spent[step or OTHER] += tottime * part
    return spent


@dataclass
class Kind:
    """One hot request: its name, its requests (method, path, body, xml), what it must
    answer; `seen` gets each answer when given."""

    name: str
    requests: list[tuple[str, str, object, bool]]
    status: int
    seen: Callable[[bytes], None] | None = None
    cpu: list[float] = field(default_factory=list)
    pg: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    profiled: float = 0.0
    steps: dict[str, float] = field(default_factory=dict)
    statements: dict[str, float] = field(default_factory=dict)  # backend CPU, by label
    calls: float = 0.0  # Python function calls per request, profiled


def main() -> None:
    started = time.monotonic()
    raw_key, _ = bench_database_seeded("bench-profile")
    befores: list[dict[str, list[list[str]]]] = []
    rounds: list[list[Kind]] = []
    for n in range(ROUNDS):
        for side in ("before", "now") if n % 2 == 0 else ("now", "before"):
            if side == "now":
                rounds.append(run(raw_key, list_orders=not rounds))
            elif BEFORE:
                befores.append(before_figures())
    report(kinds_of_median_rounds(rounds), tables_of_median_runs(befores))
    print(f"\n(whole benchmark {time.monotonic() - started:.0f} s)")


def kinds_of_median_rounds(rounds: list[list[Kind]]) -> list[Kind]:
    """Each kind as its median round measured it: the round whose median CPU for the kind
    is the median of the rounds' (the lower of the middle two), the same rule as for the
    runs before (tables_of_median_runs)."""
    return [_middle(same, lambda kind: median(kind.cpu)) for same in zip(*rounds, strict=True)]


T = TypeVar("T")


def _middle(candidates: Sequence[T], figure: Callable[[T], float]) -> T:
    """The candidate whose figure is the median (the lower of the middle two)."""
    return sorted(candidates, key=figure)[(len(candidates) - 1) // 2]


def tables_of_median_runs(runs: list[dict[str, list[list[str]]]]) -> dict[str, list[list[str]]]:
    """The tables of several runs of one revision's profile as one: each kind's row of the
    summary, and its table of steps, as the run whose CPU for it is the median of the
    runs' (the lower of the middle two) has them, so that a table's steps still add up
    to its total."""
    if not runs:
        return {}
    merged: dict[str, list[list[str]]] = {}
    for title, rows in runs[0].items():
        if title == SUMMARY:
            by_kind = [{row[0]: row for row in run.get(SUMMARY, [])[1:]} for run in runs]
            merged[title] = [rows[0]] + [
                _middle([k[row[0]] for k in by_kind if row[0] in k], lambda r: _ms(r[1]))
                for row in rows[1:]
            ]
        elif STEPS_TITLE in title:
            kind = title.partition(STEPS_TITLE)[0]
            tables = [
                (t, r) for run in runs for t, r in run.items() if t.startswith(kind + STEPS_TITLE)
            ]
            t, r = _middle(tables, lambda table: _ms(table[1][-1][1]))
            merged[t] = r
        else:
            merged[title] = rows
    return merged


def _ms(cell: str) -> float:
    return float(cell.removesuffix(" ms")) if cell.endswith(" ms") else float("inf")


def before_figures() -> dict[str, list[list[str]]]:
    """The tables revision BEFORE's own profile writes, run on its own scratch database
    and key prefix, at the size this run has."""
    print(f"The profile of {BEFORE}, for the figures before")
    return figures_at(
        BEFORE,
        "profile",
        {
            "BENCH_DATABASE": f"{os.environ['BENCH_DATABASE']}_before",
            "CACHE_KEY_PREFIX": f"{os.environ['CACHE_KEY_PREFIX']}-before",
            "PROFILE_BEFORE": "",  # a revision that has it must not look further back
            "PROFILE_ROUNDS": "1",  # this run takes turns with it
        },
    )


def run(raw_key: str, *, list_orders: bool) -> list[Kind]:
    """Every kind measured once; `list_orders`: OrderList's orders are written first (once
    a sitting: they are the same rows each round)."""
    from django.db import connection

    app = Wsgi()
    quiet_request_log()
    app.headers = {"HTTP_X_API_KEY": raw_key}
    status, raw = app("POST", "/auth/token", {})
    assert status in (200, 201), raw
    app.headers = {"HTTP_AUTHORIZATION": f"Bearer {json.loads(raw)['access_token']}"}
    connection.ensure_connection()

    each = WARMUP + 3 * REQUESTS
    prepared = prepare(app, 5 * each)
    searched, bookings = prepared[:each], prepared[each:]
    holds: list[dict] = []
    kinds: list[Kind] = []

    day = datetime.now(tz=UTC).date() + timedelta(days=DAYS_AHEAD)
    search = round_trip_search(*BUSY, day.isoformat())
    kinds.append(
        Kind(
            "create offers (busy round trip)",
            [("POST", "/json/v1/offers", search, False)] * each,
            201,
        )
    )
    kinds.append(
        Kind(
            "NDC AirShopping (the same search)",
            [("POST", "/ndc/v1/AirShopping", _air_shopping_xml(*BUSY, day), True)] * each,
            200,
        )
    )
    kinds.append(
        Kind(
            "price (OfferPrice, round trip)",
            [("POST", "/json/v1/offers/price", p["selections"], False) for p in searched],
            201,
        )
    )
    hold_bodies, card_bodies, anc_bodies, ndc_bodies = (
        bookings[n * each : (n + 1) * each] for n in range(4)
    )
    kinds.append(
        Kind(
            "create order, on hold",
            [
                ("POST", "/json/v1/orders", {**b["body"], "payment": HOLD}, False)
                for b in hold_bodies
            ],
            201,
            seen=lambda raw: holds.append(json.loads(raw)["data"]),
        )
    )
    kinds.append(
        Kind(
            "create order, by card (test gateway)",
            [
                ("POST", "/json/v1/orders", {**b["body"], "payment": CARD}, False)
                for b in card_bodies
            ],
            201,
        )
    )
    kinds.append(
        Kind(
            "create order, on hold with a seat and a bag",
            [
                ("POST", "/json/v1/orders", {**b, "payment": HOLD}, False)
                for b in with_ancillaries(app, [b["body"] for b in anc_bodies])
            ],
            201,
        )
    )
    kinds.append(
        Kind(
            "NDC OrderCreate (card)",
            [("POST", "/ndc/v1/OrderCreate", order_create_xml_due(b), True) for b in ndc_bodies],
            200,
        )
    )
    for kind in kinds:
        measure(app, kind)

    # The holds just made: retrieved, their seat maps, a seat each by AcceptOffer.
    seat_maps: list[dict] = []
    later = [
        Kind(
            "retrieve (order id)",
            [("GET", f"/json/v1/orders/{h['order']['orderId']}", None, False) for h in holds],
            200,
        ),
        Kind(
            "order seat map, 2 legs",
            [("POST", f"/json/v1/orders/{h['order']['orderId']}/seats", {}, False) for h in holds],
            200,
            seen=lambda raw: seat_maps.append(json.loads(raw)["data"]),
        ),
    ]
    for kind in later:
        measure(app, kind)
    kinds += later
    accept = Kind(
        "AcceptOffer (a seat on a hold)",
        [
            ("PATCH", f"/json/v1/orders/{h['order']['orderId']}", seat_change(h, m), False)
            for h, m in zip(holds, seat_maps, strict=True)
        ],
        200,
    )
    measure(app, accept)
    kinds.append(accept)

    if list_orders:
        insert_list_orders(LIST_ORDERS)
    listing = Kind(
        f"OrderList, page of {PAGE}",
        [("GET", f"/json/v1/orders?pageSize={PAGE}", None, False)] * each,
        200,
    )
    measure(app, listing)
    kinds.append(listing)
    connection.close()
    return kinds


def measure(app: Wsgi, kind: Kind) -> None:
    """WARMUP requests, REQUESTS timed, REQUESTS profiled, REQUESTS traced statement by
    statement: into `kind`."""
    from django.db import connection

    requests = iter(kind.requests)

    def call(method, path, body, xml) -> None:
        status, raw = app(method, path, body, xml)
        if status != kind.status or (xml and b"<Error" in raw):
            raise SystemExit(f"{kind.name}: {method} {path} answered {status}: {raw[:400]!r}")
        if kind.seen:
            kind.seen(raw)

    for _ in range(WARMUP):
        call(*next(requests))
    connection.ensure_connection()
    backend = connection.connection.info.backend_pid
    for _ in range(REQUESTS):
        request = next(requests)
        pg, cpu, wall = process_cpu_ns(backend), time.thread_time_ns(), time.perf_counter_ns()
        call(*request)
        kind.wall.append((time.perf_counter_ns() - wall) / 1e9)
        kind.cpu.append((time.thread_time_ns() - cpu) / 1e9)
        kind.pg.append((process_cpu_ns(backend) - pg) / 1e9)
    if connection.connection.info.backend_pid != backend:
        raise SystemExit(f"{kind.name}: the database connection changed while timed")
    profiler = cProfile.Profile(time.thread_time)
    for _ in range(REQUESTS):
        request = next(requests)
        profiler.enable()
        call(*request)
        profiler.disable()
    if DUMP:
        os.makedirs(DUMP, exist_ok=True)
        name = re.sub(r"[^a-z0-9]+", "-", kind.name.lower()).strip("-")
        profiler.dump_stats(os.path.join(DUMP, f"{name}.prof"))
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    # Calls, unlike CPU time, are the same however busy the machine is. The few of the
    # benchmark's own frames (a body's dumps, an answer's loads) are counted too.
    kind.calls = sum(nc for _cc, nc, _tt, _ct, _callers in stats.values()) / REQUESTS
    spent = attribute(stats)
    spent.pop(DRIVER, None)
    kind.profiled = sum(spent.values())
    kind.steps = spent
    # Means, not medians: the rows of a request add up to its whole.
    whole = 0
    with backend_cpu_by_statement() as statements:
        for _ in range(REQUESTS):
            pg = process_cpu_ns(backend)
            call(*next(requests))
            whole += process_cpu_ns(backend) - pg
    kind.statements = {label: spent / REQUESTS for label, spent in statements.items()}
    kind.statements[BETWEEN] = whole / 1e9 / REQUESTS - sum(kind.statements.values())


STEPS_TITLE = ": CPU by step"
CALLS = "Python calls"
SUMMARY = (
    "Each hot request in process, warm: this thread's CPU per request (median), the "
    "PostgreSQL backend's, the time, and the step that takes most"
)


def report(kinds: list[Kind], before: dict[str, list[list[str]]]) -> None:
    table(
        SUMMARY,
        ("request", "CPU (service)", "CPU (PostgreSQL)", "time", "largest step", CALLS),
        [
            (
                kind.name,
                f"{median(kind.cpu) * 1000:.2f} ms",
                f"{median(kind.pg) * 1000:.2f} ms",
                f"{median(kind.wall) * 1000:.2f} ms",
                max(kind.steps, key=kind.steps.get) if kind.steps else "-",
                f"{kind.calls:,.0f}",
            )
            for kind in kinds
        ],
    )
    summary = before.get(SUMMARY, [[]])
    earlier = {row[0]: row for row in summary[1:]}
    # A revision whose profile counts calls has the column; an older one has not.
    calls_at = summary[0].index(CALLS) if CALLS in summary[0] else None
    if before:
        table(
            f"Before and after, in the same sitting: CPU per request at {BEFORE} (the code "
            "when this profile was first written) and now",
            (
                "request",
                "service: before",
                "now",
                "now / before",
                "PostgreSQL: before",
                "now",
                "Python calls: before",
                "now",
            ),
            [
                (
                    kind.name,
                    earlier[kind.name][1] if kind.name in earlier else "-",
                    f"{median(kind.cpu) * 1000:.2f} ms",
                    _ratio(median(kind.cpu), earlier.get(kind.name, [None, ""])[1]),
                    earlier[kind.name][2] if kind.name in earlier else "-",
                    f"{median(kind.pg) * 1000:.2f} ms",
                    earlier[kind.name][calls_at]
                    if kind.name in earlier and calls_at is not None
                    else "-",
                    f"{kind.calls:,.0f}",
                )
                for kind in kinds
            ],
        )
    statements_table([k for k in kinds if k.name in BY_STATEMENT])
    for kind in kinds:
        cpu = median(kind.cpu)
        steps_before = next(
            (
                {row[0]: row[1:] for row in rows[1:]}
                for title, rows in before.items()
                if title.startswith(kind.name + STEPS_TITLE)
            ),
            {},
        )
        rows = []
        for step in [*ORDER, "total"]:
            if step == "total":
                now = (f"{cpu * 1000:.2f} ms", "100.0%")
            else:
                share = kind.steps.get(step, 0.0) / kind.profiled if kind.profiled else 0.0
                now = (f"{share * cpu * 1000:.2f} ms", f"{share * 100:.1f}%")
            was = tuple(steps_before.get(step, ("-", "-"))) if before else ()
            rows.append((step, *now, *was))
        table(
            f"{kind.name}{STEPS_TITLE} ({cpu * 1000:.2f} ms a request; PostgreSQL "
            f"{median(kind.pg) * 1000:.2f} ms)",
            ("step", "CPU per request", "share")
            + ((f"before ({BEFORE})", "share before") if before else ()),
            rows,
        )
    write_figures(
        "profile",
        [
            f"{REQUESTS} requests of each kind timed and {REQUESTS} more profiled after "
            f"{WARMUP} to warm up, one at a time in one process, in each of {ROUNDS} "
            "rounds; each kind's figures and steps are those of its median round (by its "
            "CPU; the lower of the middle two); OrderList over "
            f"{LIST_ORDERS:,} orders of the agency written by SQL",
            "a step's CPU is its share of the profiled CPU (cProfile, on the thread's CPU "
            "clock) times the request's unprofiled CPU; cProfile's cost per call leans the "
            "shares towards steps of many small Python calls",
            "the benchmark's own frames (building requests, reading answers) are left out",
            *(
                [
                    f"before: {BEFORE}'s own benchmarks.profile, run {ROUNDS} times in "
                    "turns with this one (before, now, now, before ...), each on a scratch "
                    "database of its own, its figures chosen by the same rule; its steps "
                    "are attributed by its own table of modules"
                ]
                if before
                else []
            ),
        ],
    )


# The writes whose PostgreSQL CPU the profile shows statement by statement.
BY_STATEMENT = (
    "create order, on hold",
    "create order, by card (test gateway)",
    "create order, on hold with a seat and a bag",
    "AcceptOffer (a seat on a hold)",
)


def statements_table(kinds: list[Kind]) -> None:
    """PostgreSQL's CPU per request by statement, one column a write: where the database's
    side of a booking goes, and what a card booking adds to a hold's."""
    labels = list(dict.fromkeys(label for kind in kinds for label in kind.statements))
    labels.remove(BETWEEN)
    rows = [
        (label, *(_ms_cell(kind.statements.get(label)) for kind in kinds))
        for label in [*labels, BETWEEN]
    ]
    rows.append(("total", *(_ms_cell(sum(kind.statements.values())) for kind in kinds)))
    table(
        "PostgreSQL's CPU per request by statement (its backend's schedstat around each "
        f"statement; means of {REQUESTS} requests of each write, traced apart from the "
        "timed and profiled ones)",
        ("statement", *(kind.name for kind in kinds)),
        rows,
    )


def _ms_cell(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.2f} ms"


def _ratio(now: float, before: str) -> str:
    """now (seconds) / before (a cell such as "12.30 ms"), or "-"."""
    if not before.endswith(" ms") or not float(before.removesuffix(" ms")):
        return "-"
    return f"{now * 1000 / float(before.removesuffix(' ms')):.2f}x"


if __name__ == "__main__":
    with scratch():
        main()
