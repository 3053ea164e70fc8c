"""Hold replay: the SQL of real hold bookings, captured at bench time, replayed by pgbench.

The booking-rate reference of `benchmarks.orders` (the issue: "`make bench` replays a
hold's own SQL statements through `pgbench -f` at the same concurrency and reports holds
per second as a ratio to it"). The database's share of a hold, with no HTTP, no Python
and no ORM: what the service could reach if everything above PostgreSQL were free.

1. Capture. Some of the benchmark's own priced offers are booked on hold in this process
   through Django's test client (POST /json/v1/orders, the body the load clients send,
   payment Hold), with `connection.execute_wrapper` recording every statement the
   request sends to PostgreSQL: its SQL, its parameters, whether it ran inside the
   booking's transaction, and the rows an INSERT returned (plus the `SELECT 1` with
   which Django's connection health check starts each request in a gunicorn worker,
   sent past the wrapper). A first booking is captured
   and thrown away, so that per-process caches (token, booking-class ladder) are warm as
   they are in a gunicorn worker that has served a while. Nothing is checked in: the
   statements are whatever the code sends today.
2. Script. Each statement becomes its literal SQL (parameters bound by psycopg, as the
   service's client-side binding sends them), between BEGIN and COMMIT. What must differ
   per transaction becomes a pgbench variable:
   - a value of a single-column unique index of a table the booking inserts into (order
     id, record locator, source offer id ...) becomes a fresh value of the same length,
     made of a per-client counter (`:rpl_u`, 12 digits, or `:rpl_w6`: six digits that
     start with 1, which no live locator has: the alphabet has no 1);
   - an id an INSERT ... RETURNING handed back (the order's, its passengers' and
     journeys' ...) is taken with `\\gset` and every foreign key that named it in a later
     INSERT names the variable instead. A multi-row INSERT is wrapped as
     `WITH ins AS (INSERT ... RETURNING ...) SELECT (array_agg(id ORDER BY id))[k] ...`,
     since `\\gset` takes one row.
   Each statement is its own round trip, also those the service sends several to a
   pipeline (airline.sql.statements_pipelined: a booking's rows that need only the
   order's id, then those that need the journeys'): pgbench cannot `\\gset` in a
   pipeline, and the ids are what the script needs.
   Everything else is replayed as sent: the leg locks (SELECT ... FOR UPDATE) and the
   inventory UPDATEs hit the same flight-date legs the captured bookings did, which are
   the benchmark's own market-days.
3. Replay. Each captured hold is a script of its own (`-f` once for each, 64 of them),
   and pgbench runs one at random for every transaction, as the load clients book
   offers shuffled over many markets and days; two clients replay the same hold at once
   now and then (about one transaction in ten), and then queue on its legs' locks, a
   little more contention than the real phase has. Before a replay the captured legs'
   inventory is given room (`authorized` raised), afterwards `sold` and `authorized` are
   put back and every row the replay inserted is deleted (by its xmin, in the reverse
   order of the inserts), so the database the later phases see is unchanged.
4. From Python. After each pgbench replay, the same scripts run once more from one
   Python client through psycopg (Replayer.run_python): what merely sending a hold's
   SQL costs the service's driver.
5. Over HTTP. Then the same scripts are served by gunicorn with nothing else
   (benchmarks/floor.py, which sends them as run_python does: send_script) to the hold
   phase's clients: the hold's floor on this stack.
6. Behind the framework. And once more behind the service's own gunicorn config,
   middleware, authentication and throttle, sent through Django's cursor
   (benchmarks/floor_urls.py): the floor of any booking endpoint on Django and DRF.

It is one module because the capture, the script and both replays keep one contract:
what each captured statement becomes in a script is what the replays run and what the
clean-up then finds to delete.
"""

import json
import re
import resource
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.common import executed_at_once, process_cpu_ns, tiny

REPLAY_BOOKINGS = tiny(64, 2)  # captured holds, one pgbench script each (pgbench takes up to 128)
# Holds replayed from Python (Replayer.run_python) after each pgbench replay.
PYTHON_REPLAY_HOLDS = tiny(300, 4)
INVENTORY_TABLE = "network_leginventory"
INVENTORY_ROOM = 1_000_000  # added to `authorized` of the captured legs during a replay
SENTINEL_BASE = 9_876_500_000_000  # stands for a variable while a statement is composed


@dataclass
class Captured:
    sql: str
    params: object
    in_transaction: bool
    columns: list[str] | None = None  # of the rows an INSERT returned
    rows: list[tuple] | None = None


@dataclass
class Booking:
    """One captured hold: its statements, and how each becomes pgbench script text."""

    statements: list[Captured]
    order: dict = field(default_factory=dict)  # the response's order (id, locator)


class _Catalog:
    """What the script needs to know of the tables a booking inserts into."""

    def __init__(self, cursor) -> None:
        self.cursor = cursor
        self._cache: dict[str, tuple] = {}

    def table(self, name: str) -> tuple[str, dict[str, str], dict[str, int], list[list[str]]]:
        """(primary key column, {fk column: referenced table}, {unique column: max
        length}, [columns of multi-column unique indexes])."""
        if name in self._cache:
            return self._cache[name]
        cursor = self.cursor
        cursor.execute(
            "SELECT a.attname FROM pg_index i JOIN pg_attribute a "
            "ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] "
            "WHERE i.indrelid = %s::regclass AND i.indisprimary",
            [name],
        )
        (pk,) = cursor.fetchone()
        cursor.execute(
            "SELECT a.attname, c.confrelid::regclass::text FROM pg_constraint c "
            "JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1] "
            "WHERE c.conrelid = %s::regclass AND c.contype = 'f' "
            "AND array_length(c.conkey, 1) = 1",
            [name],
        )
        fks = dict(cursor.fetchall())
        cursor.execute(
            "SELECT array_agg(a.attname::text ORDER BY k.n), "
            "max(coalesce(a.atttypmod - 4, -1)) FROM pg_index i "
            "CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n) "
            "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum "
            "WHERE i.indrelid = %s::regclass AND i.indisunique AND NOT i.indisprimary "
            "GROUP BY i.indexrelid",
            [name],
        )
        unique, multi = {}, []
        for columns, length in cursor.fetchall():
            if len(columns) == 1:
                unique[columns[0]] = length
            else:
                multi.append(columns)
        self._cache[name] = (pk, fks, unique, multi)
        return self._cache[name]


# --- Capture -----------------------------------------------------------------------------


def capture_holds(bodies: list[dict], token: str) -> list[Booking]:
    """Book each body on hold in this process (Django's test client), recording the SQL
    of each booking. The first is a warm-up and is not returned."""
    from django.db import connection
    from django.test import Client

    client = Client()
    bookings = []
    for n, body in enumerate(bodies):
        log: list[Captured] = []

        def record(execute, sql, params, many, context, log=log):
            if many:
                raise RuntimeError(f"executemany is not replayed: {sql[:200]}")
            in_transaction = context["connection"].in_atomic_block
            result = executed_at_once(execute, sql, params, many, context)  # its rows, now
            captured = Captured(sql, params, in_transaction)
            raw = context["cursor"].cursor  # psycopg's: its whole result is in memory
            if raw.description is not None and sql.lstrip().upper().startswith("INSERT"):
                captured.columns = [d.name for d in raw.description]
                captured.rows = raw.fetchall()
                raw.scroll(0, "absolute")  # Django reads them next
            log.append(captured)
            return result

        with connection.execute_wrapper(record):
            response = client.post(
                "/json/v1/orders",
                data=json.dumps({**body, "payment": {"type": "Hold"}}),
                content_type="application/json",
                HTTP_AUTHORIZATION=f"Bearer {token}",
            )
        if response.status_code != 201:
            raise RuntimeError(f"captured hold failed: {response.status_code} {response.content!r}")
        if connection.health_check_enabled:
            # A gunicorn worker's request begins with Django's health check of its
            # persistent connection (CONN_HEALTH_CHECKS): a SELECT 1 sent by psycopg
            # directly, which no execute_wrapper sees (and the test client skips).
            log.insert(0, Captured("SELECT 1", None, False))
        if n:
            bookings.append(Booking(log, response.json()["data"]["order"]))
    return bookings


# --- Script ------------------------------------------------------------------------------

_INSERT = re.compile(
    r'^INSERT INTO "(?P<table>\w+)" \((?P<columns>[^)]*)\) (?P<form>VALUES|SELECT \* FROM UNNEST)'
)


def _unique_text(value: str, length: int, k: int, short: set) -> str:
    """The pgbench text that stands for `value` of a unique column: as long as it, made
    of the per-transaction counter."""
    n = len(value)
    if n >= 13:
        return f"{value[: n - 13]}{k % 10}:rpl_u"
    if 5 <= n <= 12 and n not in short:
        short.add(n)
        return f":rpl_w{n}"
    raise RuntimeError(f"cannot make {value!r} (column of {length}) unique per replay")


def booking_script(booking: Booking, tag: str, catalog: _Catalog, compose) -> tuple[list, set]:
    """The booking's pgbench commands (a list of lines) and the tables it inserts into,
    in order. `compose(sql, params)` binds parameters as psycopg does."""
    returned: dict[str, dict[int, str]] = {}  # table -> {id: pgbench variable}
    sentinels: dict[int, str] = {}  # sentinel int -> pgbench variable
    unique_values: dict[str, str] = {}  # value -> pgbench text
    short: set[int] = set()
    tables: list[str] = []
    lines: list[str] = []
    opened = False
    for i, st in enumerate(booking.statements):
        params = st.params
        match = _INSERT.match(st.sql)
        if match:
            table = match["table"]
            if table not in tables:
                tables.append(table)
            pk, fks, unique, multi = catalog.table(table)
            columns = [c.strip().strip('"') for c in match["columns"].split(",")]

            def swap(column: str, value, fks=fks, unique=unique):
                ids = returned.get(fks.get(column), {})
                if isinstance(value, int) and value in ids:
                    sentinel = SENTINEL_BASE + len(sentinels)
                    sentinels[sentinel] = ids[value]
                    return sentinel
                if column in unique and isinstance(value, str) and value not in unique_values:
                    unique_values[value] = _unique_text(
                        value, unique[column], len(unique_values), short
                    )
                return value

            params = list(params)
            if match["form"] == "VALUES":
                if len(params) % len(columns):
                    raise RuntimeError(f"cannot map parameters to columns: {st.sql[:300]}")
                params = [swap(columns[k % len(columns)], v) for k, v in enumerate(params)]
            else:  # UNNEST: one array a column
                if len(params) != len(columns):
                    raise RuntimeError(f"cannot map parameters to columns: {st.sql[:300]}")
                params = [
                    [swap(c, v) for v in values] for c, values in zip(columns, params, strict=True)
                ]
            for columns_of_index in multi:
                if not any(c in fks or c in unique for c in columns_of_index):
                    raise RuntimeError(f"{table} unique {columns_of_index}: nothing varies")
        elif set(re.findall(r'"(\w+)"\.', st.sql)) & set(tables):
            # Reading or changing the booking's own rows by their ids: those ids differ
            # in every replayed transaction, and nothing here rewrites them.
            raise RuntimeError(f"a statement on the booking's own rows: {st.sql[:300]}")
        text = compose(st.sql, params)
        for sentinel, variable in sentinels.items():
            text = re.sub(rf"(?<![\w.]){sentinel}(?![\w.])", f":{variable}", text)
        for value, replacement in unique_values.items():
            token = rf"(?<![A-Za-z0-9_]){re.escape(value)}(?![A-Za-z0-9_])"
            text = re.sub(token, replacement, text)
        if st.in_transaction and not opened:
            lines.append("BEGIN;")
            opened = True
        elif not st.in_transaction and opened:
            lines.append("COMMIT;")
            opened = False
        if st.rows:
            pk_at = st.columns.index(pk)
            ids = [row[pk_at] for row in st.rows]
            names = [f"{tag}s{i}_{k}" for k in range(len(ids))]
            returned.setdefault(table, {}).update(zip(ids, names, strict=True))
            if len(ids) == 1:
                lines.append(f"{text} \\gset {tag}s{i}_")
                returned[table][ids[0]] = f"{tag}s{i}_{pk}"
            else:
                picks = ", ".join(f"(a)[{k + 1}] AS {name}" for k, name in enumerate(names))
                ordered = f'array_agg(ins."{pk}" ORDER BY ins."{pk}")'
                lines.append(
                    f"WITH ins AS ({text}) SELECT {picks} "  # noqa: S608
                    f"FROM (SELECT {ordered} AS a FROM ins) AS r \\gset"
                )
        else:
            lines.append(text + ";")
    if opened:
        lines.append("COMMIT;")
    return lines, tables


def _flat(params) -> list:
    if isinstance(params, dict):
        params = list(params.values())
    out = []
    for p in params or ():
        out.extend(_flat(p) if isinstance(p, list | tuple) else [p])
    return out


@dataclass
class Replay:
    scripts: list[str]  # one a booking
    tables: list[str]  # inserted into, in order
    legs: list[int]  # whose inventory rows the bookings update
    statements: int  # per booking, the median
    in_transaction: int
    kinds: dict[str, int]  # statement kinds of one booking


def replay_script(bookings: list[Booking], clients: int) -> Replay:
    """One pgbench script a booking; pgbench picks one at random for each transaction.

    (One script choosing a booking by `\\if` would have let each client replay its own
    bookings, but pgbench 15 crashes parsing scripts of that size: 8 bookings of 15
    commands each was enough.)"""
    from django.db import connection

    def compose(sql, params):
        return connection.ops.compose_sql(sql, params)

    header = [
        "\\set rpl_seq :rpl_seq + 1",
        f"\\set rpl_u 100000000000 + :rpl_seq * {clients} + :client_id",
    ]
    header += [
        f"\\set rpl_w{n} {10 ** (n - 1)} + (:rpl_seq * {clients} + :client_id) % {10 ** (n - 1)}"
        for n in range(5, 13)
    ]
    # The same values, for the replay from Python (Replayer.run_python, benchmarks.floor).
    assert [line.split()[1] for line in header] == list(counters(1, clients, 0)), header
    scripts: list[str] = []
    tables: list[str] = []
    with connection.cursor() as cursor:
        catalog = _Catalog(cursor)
        for b, booking in enumerate(bookings):
            body, inserted = booking_script(booking, f"b{b}", catalog, compose)
            scripts.append("\n".join(header + body) + "\n")
            tables += [t for t in inserted if t not in tables]
    legs = sorted(
        {
            int(leg)
            for booking in bookings
            for st in booking.statements
            if st.sql.startswith(f'UPDATE "{INVENTORY_TABLE}"')
            for leg in re.findall(r'"leg_id" = (\d+)', compose(st.sql, st.params))
        }
    )
    others = {
        m
        for booking in bookings
        for st in booking.statements
        for m in re.findall(r'^UPDATE "(\w+)"', st.sql)
        if m != INVENTORY_TABLE and m not in tables
    }
    if others:
        raise RuntimeError(f"a hold updates {sorted(others)}: the replay cannot put them back")
    first = bookings[0].statements
    kinds: dict[str, int] = {}
    for st in first:
        word = st.sql.lstrip().split(None, 1)[0].upper()
        kind = "SELECT ... FOR UPDATE" if word == "SELECT" and "FOR UPDATE" in st.sql else word
        kind = "SELECT 1 (health check)" if st.sql == "SELECT 1" else kind
        kinds[kind] = kinds.get(kind, 0) + 1
    counts = sorted(len(b.statements) for b in bookings)
    return Replay(
        scripts=scripts,
        tables=tables,
        legs=legs,
        statements=counts[len(counts) // 2],
        in_transaction=sum(st.in_transaction for st in first),
        kinds=kinds,
    )


def counters(seq: int, clients: int, client_id: int) -> dict[str, int]:
    """The variables each replayed transaction's header sets (replay_script's `\\set`
    lines), for its `seq`-th transaction of client `client_id`."""
    values = {"rpl_seq": seq, "rpl_u": 100000000000 + seq * clients + client_id}
    for n in range(5, 13):
        values[f"rpl_w{n}"] = 10 ** (n - 1) + (seq * clients + client_id) % 10 ** (n - 1)
    return values


# A pgbench variable in a command: `:name` (not the `::` of a cast). pgbench replaces
# only the names it has a value for; so does Replayer.run_python.
_VARIABLE = re.compile(r"(?<!:):([A-Za-z_]\w*)")


def _commands(script: str) -> list[tuple[str, str | None]]:
    """A replay script's SQL commands, each with the prefix of its `\\gset` (or None),
    without the header's `\\set` lines (counters)."""
    commands = []
    for line in script.splitlines():
        if not line or line.startswith("\\set "):
            continue
        sql, gset, prefix = line.partition(" \\gset")
        commands.append((sql.rstrip(";"), prefix.strip() if gset else None))
    return commands


def script_commands(directory: Path) -> list[list[tuple[str, str | None]]]:
    """The commands of each replay script a Replayer wrote to `directory`, in order."""
    return [_commands(path.read_text()) for path in sorted(directory.glob("hold-*.sql"))]


def send_script(execute, commands: list[tuple[str, str | None]], values: dict) -> None:
    """One replay script's commands sent as pgbench sends them (on a connection in
    autocommit: the script has its own BEGIN and COMMIT): the literal SQL with its
    variables substituted from `values`, each `\\gset` read back into `values`.
    `execute(sql)` sends one and returns its cursor: psycopg's own, unprepared, or
    Django's cursor (benchmarks/floor_urls.py)."""
    for sql, gset in commands:
        text = _VARIABLE.sub(lambda m: str(values.get(m[1], m[0])), sql)
        cursor = execute(text)
        if gset is not None:
            row = cursor.fetchone()
            values.update(
                (gset + column.name, value)
                for column, value in zip(cursor.description, row, strict=True)
            )


def unprepared(conn):
    """send_script's `execute` on a psycopg connection: each command sent as pgbench -M
    simple sends it."""
    return lambda sql: conn.execute(sql, prepare=False)


# --- Replay ------------------------------------------------------------------------------


def _pg_args() -> list[str]:
    return ["-h", "127.0.0.1", "-p", "5432", "-U", "postgres"]


class Replayer:
    """Runs the replay script on the bench database and leaves it as it found it."""

    def __init__(self, replay: Replay, database: str, directory: Path, clients: int) -> None:
        self.replay = replay
        self.database = database
        self.path = directory
        self.clients = clients
        directory.mkdir(parents=True, exist_ok=True)
        for old in directory.glob("hold-*.sql"):
            old.unlink()
        self.scripts = []
        for n, script in enumerate(replay.scripts):
            self.scripts.append(directory / f"hold-{n:03d}.sql")
            self.scripts[-1].write_text(script)

    def _connect(self):
        import psycopg

        return psycopg.connect(
            f"postgres://postgres@127.0.0.1:5432/{self.database}", autocommit=True
        )

    @contextmanager
    def room(self) -> Iterator[dict]:
        """Around a replay: the captured legs given room (`authorized` raised), and
        afterwards put back as they were and every row the replay inserted deleted.
        Yields a dict that gets `deleted`, the number of rows deleted."""
        legs = self.replay.legs
        done: dict = {}
        with self._connect() as conn:
            saved = conn.execute(
                f"SELECT id, sold, authorized FROM {INVENTORY_TABLE} WHERE leg_id = ANY(%s)",  # noqa: S608
                [legs],
            ).fetchall()
            conn.execute(
                f"UPDATE {INVENTORY_TABLE} SET authorized = authorized + %s "  # noqa: S608
                "WHERE leg_id = ANY(%s)",
                [INVENTORY_ROOM, legs],
            )
            (low,) = conn.execute("SELECT pg_current_xact_id()::text::bigint").fetchone()
        try:
            yield done
        finally:
            with self._connect() as conn:
                (high,) = conn.execute("SELECT pg_current_xact_id()::text::bigint").fetchone()
                done["deleted"] = self._clean(conn, low, high)
                with conn.cursor() as cursor:
                    cursor.executemany(
                        f"UPDATE {INVENTORY_TABLE} SET sold = %s, authorized = %s WHERE id = %s",  # noqa: S608
                        [(sold, authorized, pk) for pk, sold, authorized in saved],
                    )
                restored = conn.execute(
                    f"SELECT id, sold, authorized FROM {INVENTORY_TABLE} "  # noqa: S608
                    "WHERE leg_id = ANY(%s)",
                    [legs],
                ).fetchall()
                if sorted(restored) != sorted(saved):
                    raise RuntimeError("the captured legs' inventory was not put back")

    def run(self, seconds: int, watch=None) -> dict:
        """pgbench -n -f script -c CLIENTS -j 2 -T seconds: tps, transactions, the CPU
        pgbench itself spent (its child-process rusage), and what `watch(process)`
        returns, called with pgbench running (it returns once pgbench has ended)."""
        command = [
            "pgbench",
            *_pg_args(),
            "-n",
            *(arg for path in self.scripts for arg in ("-f", str(path))),
            "-c",
            str(self.clients),
            "-j",
            "2",
            "-T",
            str(seconds),
            "-D",
            "rpl_seq=0",  # what one replay inserts is deleted before the next
            self.database,
        ]
        with self.room() as done:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            process = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            try:
                watched = watch(process) if watch else None
                stdout, stderr = process.communicate(timeout=seconds + 120)
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait()
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if process.returncode != 0 or "aborted" in stderr:
            raise RuntimeError(f"pgbench replay failed:\n{stdout}\n{stderr[-3000:]}")
        tps = float(re.search(r"^tps = ([\d.]+)", stdout, re.MULTILINE).group(1))
        transactions = int(
            re.search(r"number of transactions actually processed: (\d+)", stdout).group(1)
        )
        latency = re.search(r"latency average = ([\d.]+) ms", stdout)
        return {
            "tps": tps,
            "transactions": transactions,
            "latency_ms": float(latency.group(1)) if latency else None,
            "pgbench_cpu": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
            "deleted": done["deleted"],
            "watched": watched,
        }

    def run_python(self, transactions: int) -> dict:
        """The same scripts run by one Python client, through psycopg (the service's
        driver): each command sent as pgbench sends it (the script's literal SQL, its
        variables substituted, `\\gset` read back), the scripts taken in turn. The CPU
        per hold of this client (its thread's) and of its PostgreSQL backend: what
        speaking the hold's SQL costs a Python process, with nothing else to do."""
        scripts = script_commands(self.path)
        with self.room() as done, self._connect() as conn:
            backend = conn.info.backend_pid
            client, database = time.thread_time_ns(), process_cpu_ns(backend)
            for seq in range(1, transactions + 1):
                send_script(
                    unprepared(conn), scripts[seq % len(scripts)], counters(seq, self.clients, 0)
                )
            client = (time.thread_time_ns() - client) / 1e9
            database = (process_cpu_ns(backend) - database) / 1e9
        if done["deleted"] < transactions:
            raise RuntimeError(f"{transactions} holds replayed from Python left no rows to delete")
        return {
            "transactions": transactions,
            "cpu_per_hold": {
                "python": client / transactions,
                "postgresql": database / transactions,
            },
            "deleted": done["deleted"],
        }

    def _clean(self, conn, low: int, high: int) -> int:
        """Delete what the replay inserted: rows whose xmin is one of the transactions
        between `low` and `high` (nothing else writes to the bench database meanwhile),
        the last table inserted into first."""
        lo, hi = low % 2**32, high % 2**32
        if lo > hi:  # the 32-bit xid wrapped meanwhile: compare in two ranges
            where = "(xmin::text::bigint >= %s OR xmin::text::bigint <= %s)"
        else:
            where = "xmin::text::bigint BETWEEN %s AND %s"
        deleted = 0
        for table in reversed(self.replay.tables):
            cursor = conn.execute(f'DELETE FROM "{table}" WHERE {where}', [lo, hi])  # noqa: S608
            deleted += cursor.rowcount
        return deleted
