"""A cursor for the plain SQL of the hot paths (a booking's rows, its seats, its outbox
lookup, an order's parts read for a change), sent to PostgreSQL as prepared statements.

Django's psycopg 3 backend binds parameters client-side: each value is quoted into the
statement's text, which PostgreSQL then parses and plans anew every time. A booking sends
the same dozen statements each time, so here they are bound server-side and prepared once
per connection (psycopg names and keeps them, up to its `prepared_max` of 100 per
connection): the worker no longer quotes ~150 values a booking, and PostgreSQL only binds
and runs a plan it already has.

Only these statements: the rest of the application keeps Django's client-side binding
(the ORM's SQL is not always preparable, e.g. a parameter whose type PostgreSQL cannot
infer). Not through a pooler in transaction mode (DB_TRANSACTION_POOLING): a statement
prepared on one server connection is unknown to the next one the pooler hands out. Not on
SQLite (the embedded default). Either way the statements go through Django's cursor
wrapper, so execute wrappers (the hold replay of benchmarks/replay.py records through
one), query logging and error translation see them as they see every other.

Each connection keeps one such cursor for all its statements (`_KeptCursor`), rather
than make and close one a statement.

Statements whose results nothing needs before the last of them is sent can go in one
round trip (`statements_pipelined`: psycopg's pipeline mode, public API; with or without
a pooler): a booking's rows and a card booking's confirmation go so. A statement that
only sets up the ones after it (the lock bound of `lock_wait_bounded`), or whose answer
nothing needs before the next one's (a booking's order row, ahead of its legs' lock),
goes ahead of the next one, in its round trip (`statement_ahead`, sent by an execute
wrapper).

What it relies on beyond Django's public API (tests/api/test_framework_shortcuts.py fails
on an upgrade that changes it): the steps of `BaseDatabaseWrapper.cursor()` repeated in
`statement_cursor`, the PostgreSQL backend's `ServerBindingCursor`, Django connecting
with `prepare_threshold=None`, and psycopg's per-connection `prepare_threshold`; the
kept cursor is an attribute of this module's own on Django's connection wrapper.
Measured gain: PostgreSQL's CPU per hold 2.6 ms against 3.6 ms unprepared (1.37x), the
service's 8.6 against 9.3 ms (1.08x) (`python -m benchmarks.shortcuts`, 60 holds each
way on a busy 2-core machine). `DB_PREPARED_STATEMENTS=0` (settings) turns it off.
"""

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, OperationalError, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper
from django.db.models import Expression, Model

from airline.api.errors import ApiError, Err

logger = logging.getLogger(__name__)

# psycopg prepares a statement on its first execution while its connection's threshold
# is 0 (its own default, 5, would send each statement unprepared five times per
# connection first). Django sets the threshold to None (never) at connect, and with
# None psycopg neither prepares nor keeps count of statements; Django's own cursors bind
# client-side, which psycopg never prepares. So the threshold is 0 only while a
# statement of this cursor runs: the others are not counted (every ORM statement would
# be, and a ROLLBACK TO SAVEPOINT among them would make psycopg drop every prepared
# statement). A real ROLLBACK still does (psycopg's rule): the next booking on that
# connection prepares them again.
PREPARE_AT_ONCE = 0


@contextmanager
def statement_cursor(using: str = DEFAULT_DB_ALIAS) -> Iterator[CursorWrapper]:
    """A cursor for hot statements on the database `using` names: prepared on PostgreSQL
    (unless pooled), Django's usual cursor elsewhere. Only for statements of a few fixed
    shapes, with every value a parameter: each distinct text is kept prepared on the
    connection."""
    db = connections[using]  # once: each use of the `connection` proxy is a lookup
    if db.vendor != "postgresql" or not settings.DB_PREPARED_STATEMENTS:
        with db.cursor() as cursor:
            yield cursor
        return
    # What db.cursor() does, with psycopg's server-binding cursor in place of the
    # client-binding one Django makes.
    db.close_if_health_check_failed()
    db.ensure_connection()
    db.validate_thread_sharing()
    raw = db.connection
    if raw.closed:
        # Closed under Django inside a transaction (a standby or pooler gone): Django's
        # cursor() says so, an OperationalError, as it does for every other read.
        with db.cursor() as cursor:
            yield cursor
        return
    if raw.cursor_factory not in _django_cursors():
        # The tracer's (airline/telemetry.py) wraps the connection's cursors and sees
        # only statements run through them: a traced process sends these unprepared
        # rather than leave a booking's writes out of its traces.
        with db.cursor() as cursor:
            yield cursor
        return
    threshold = raw.prepare_threshold
    if threshold is None:
        raw.prepare_threshold = PREPARE_AT_ONCE
    try:
        kept = _kept_cursor(db, raw)
        if kept.busy:
            # A block inside another's (its statement's rows not read yet): a cursor of
            # its own, closed after.
            with _new_cursor(db, raw) as wrapped:
                yield wrapped
        else:
            kept.busy = True
            try:
                yield kept.wrapped
            finally:
                kept.busy = False
    finally:
        raw.prepare_threshold = threshold


@dataclass(slots=True)
class _KeptCursor:
    """A connection's server-binding cursor, kept between its statements: a booking
    sends about a dozen here, and making a psycopg cursor and its Django wrapper for each,
    then closing both, costs about a tenth of what sending the statement does."""

    raw: object  # the psycopg connection it was made on: a new connection, a new cursor
    wrapped: CursorWrapper
    logged: bool  # made by make_debug_cursor (the connection logs its queries)
    busy: bool = False  # handed out, in a statement_cursor block


def _kept_cursor(db: BaseDatabaseWrapper, raw: object) -> _KeptCursor:
    """`db`'s kept cursor, made anew when the connection or its query logging changed.
    Kept on the wrapper (one per thread, as Django's connections are), not in a weak
    mapping by connection: the cursor refers to its connection, so that would keep
    every connection alive."""
    kept = getattr(db, KEPT_CURSOR, None)
    logged = db.queries_logged
    if kept is None or kept.raw is not raw or kept.logged is not logged:
        kept = _KeptCursor(raw, _new_cursor(db, raw), logged)
        setattr(db, KEPT_CURSOR, kept)
    return kept


KEPT_CURSOR = "_airline_kept_cursor"


def _new_cursor(db: BaseDatabaseWrapper, raw: object) -> CursorWrapper:
    with db.wrap_database_errors:
        cursor = _server_binding_cursor()(raw)
    return _PipelinedDebugCursor(cursor, db) if db.queries_logged else db.make_cursor(cursor)


class _PipelinedDebugCursor(CursorDebugWrapper):
    """Django's debug cursor (a connection that logs its queries: DEBUG, the tests'
    CaptureQueriesContext), logging a statement sent in a pipeline as written: psycopg
    has no text of a prepared statement before its pipeline syncs, and Django would log
    None in its place."""

    def execute(self, sql, params=None):
        if self.cursor.connection.pgconn.pipeline_status == _pipeline_off():
            return super().execute(sql, params)
        with self.debug_sql(sql, params):
            return CursorWrapper.execute(self, sql, params)


@cache
def _server_binding_cursor() -> type:
    # Imported when first used: the backend module needs psycopg, which the embedded
    # default (SQLite) does not load.
    from django.db.backends.postgresql.base import ServerBindingCursor

    return ServerBindingCursor


@cache
def _django_cursors() -> tuple[type, ...]:
    """The cursor classes Django's backend gives its connections, unwrapped."""
    from django.db.backends.postgresql.base import Cursor, ServerBindingCursor

    return (Cursor, ServerBindingCursor)


def column_converters(column: Expression, db: BaseDatabaseWrapper) -> tuple[Callable, ...]:
    """What the ORM applies to a value of `column` (a Col) read back through plain SQL:
    the backend's converters, then the field's (a JSON column's parse, SQLite's decimals
    and UUIDs), each called as convert(value, column, db), in that order, as the ORM's
    compiler calls them."""
    return (*db.ops.get_db_converters(column), *column.get_db_converters(db))


def commit_without_flush() -> None:
    """Let the current transaction's commit return before its WAL reaches the disk
    (PostgreSQL's `SET LOCAL synchronous_commit TO OFF`: this transaction alone), when
    settings.DB_COMMIT_WITHOUT_FLUSH allows it; off by default, so by default this does
    nothing and every commit waits for its flush. Called only where something already
    flushed can redo the write after a crash (a card booking's confirmation: its intent
    and the gateway's charge). A crash of the database server within about three
    `wal_writer_delay`s (600 ms by default) of such a commit loses it; so does a failover
    to a standby, synchronous or not (docs/operators/production.md "Commits without a flush")."""
    if settings.DB_COMMIT_WITHOUT_FLUSH and connections[DEFAULT_DB_ALIAS].vendor == "postgresql":
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")


@contextmanager
def statements_pipelined(using: str = DEFAULT_DB_ALIAS) -> Iterator[None]:
    """On PostgreSQL, the statements executed in this block go to the server together and
    their results come back in one round trip, at the block's end (psycopg's pipeline
    mode, over the protocol's pipelining, which poolers pass through): a transaction of
    three statements whose results nothing needs before the last is sent then waits once,
    not three times. Each statement needs a cursor of its own, opened before the block and
    read after it: inside it a cursor has no rows yet and a rowcount of -1, which is why
    no ORM call belongs in it (update() reads its rowcount at once). An error of any of
    them is raised at the block's end, as Django's own (DatabaseError and the rest), and
    the statements after it are not run. Elsewhere (SQLite) the statements run one by one
    as they are executed, and reading them after the block gives the same rows."""
    db = connections[using]
    if db.vendor != "postgresql":
        yield
        return
    db.ensure_connection()
    raw = db.connection
    if raw.closed:
        # Closed under Django inside a transaction: the first statement says so, as
        # Django's cursor() does for every other.
        yield
        return
    with db.wrap_database_errors, raw.pipeline():
        yield


def statements_answered(
    statements: Sequence[tuple[str, Sequence]], using: str = DEFAULT_DB_ALIAS
) -> list[list[tuple]]:
    """The rows each of `statements` (SQL and parameters, each answering rows: a SELECT or
    a RETURNING) answered, in order, all of them sent in one pipeline
    (statements_pipelined), each through a statement cursor of its own."""
    if not statements:
        return []  # an empty pipeline would still wait for its sync
    with ExitStack() as cursors:
        sending = [cursors.enter_context(statement_cursor(using)) for _ in statements]
        with statements_pipelined(using):
            for cursor, (sql, params) in zip(sending, statements, strict=True):
                cursor.execute(sql, params)
        return [cursor.fetchall() for cursor in sending]


LOCK_NOT_AVAILABLE = "55P03"  # PostgreSQL's SQLSTATE for a lock_timeout or NOWAIT refused
LOCK_BUSY_RETRY_AFTER = "2"  # seconds, the Retry-After of a lock wait cut short

# False in the background worker's jobs (lock_waits_unbounded): no client waits there, and
# a job cut short would wait just the same at its next round.
_bounded: ContextVar[bool] = ContextVar("lock_waits_bounded", default=True)
# True inside a lock_wait_bounded block that set the bound: a block within it sends nothing.
_bound_set: ContextVar[bool] = ContextVar("lock_wait_bound_set", default=False)


class LockBusy(ApiError):
    """A row the request needs stayed locked by a long writer (a schedule load, a back
    office edit, a batch of airline changes) for longer than LOCK_WAIT_TIMEOUT_MS: 503
    ERR-9000 with Retry-After, in the request's channel. The request's transaction is
    rolled back whole."""

    def __init__(self, busy: str) -> None:
        super().__init__(
            Err.SERVICE_UNAVAILABLE,
            f"{busy}; nothing was changed, retry in a few seconds",
            headers={"Retry-After": LOCK_BUSY_RETRY_AFTER},
        )


@contextmanager
def lock_wait_bounded(busy: str) -> Iterator[None]:
    """The row-lock waits of the block (inside the caller's transaction) bounded by
    settings.LOCK_WAIT_TIMEOUT_MS, so that a request never waits on a long writer beyond
    it: a lock not granted in time raises LockBusy (`busy` says what is being changed,
    e.g. "The flight is being updated"), and the caller's transaction is spoiled, to be
    rolled back by whoever opened it.

    PostgreSQL's `lock_timeout`, set local to the transaction (as `SET LOCAL`, so through
    a pooler in transaction mode too) and set back to what it was once the block is done:
    the rest of the transaction waits as it would have (a unique key another transaction
    is inserting, say). Writers that must wait for the requests (a schedule load waits
    for the bookings on its legs, which are short) do not use this. Nothing to bound on
    SQLite (no row locks), outside a transaction (a lock taken and given back at once),
    with the setting at 0, or in the worker's jobs (lock_waits_unbounded).

    Blocks nest: one inside another finds the bound in force and sends nothing (a flow that
    takes several locks in a row, an order's then its legs' then their seat maps', sets
    the bound once and sets it back once: two statements, not two a lock); a lock it
    waited for too long is still reported in its own words. Neither statement takes a
    round trip of its own: the bound goes ahead of the block's first statement (the
    first lock), and is set back ahead of the statement after the block."""
    db = connections[DEFAULT_DB_ALIAS]
    bound = settings.LOCK_WAIT_TIMEOUT_MS
    if db.vendor != "postgresql" or not bound or not _bounded.get() or not db.in_atomic_block:
        yield
        return
    if _bound_set.get():
        with _lock_wait_reported(busy, bound):
            yield
        return
    statement_ahead(_BOUND_SET, [f"{bound}ms"])
    token = _bound_set.set(True)
    try:
        with _lock_wait_reported(busy, bound):
            yield
    except (DatabaseError, LockBusy):
        # The transaction is spoiled: nothing to set back, and a bound not sent yet (the
        # connection failed before the block's first statement) must not be sent with
        # the next transaction's.
        ahead_withdrawn(_BOUND_SET)
        raise
    except BaseException:
        _bound_set_back()  # the transaction is sound and its caller may go on
        raise
    finally:
        _bound_set.reset(token)
    _bound_set_back()


# The lock bound's statements (lock_wait_bounded), each sent ahead of the statement after
# it (statement_ahead): the value in force is kept in a setting of the service's own,
# local to the transaction as the bound is, and set back from there, so that neither
# needs an answer read first. The subquery is planned apart (OFFSET 0) and evaluated
# first, so the value kept is the one before the bound.
_BOUND_SET = (
    "SELECT set_config('lock_timeout', %s, true) FROM (SELECT set_config("
    "'airline.lock_timeout_was', current_setting('lock_timeout'), true) OFFSET 0) was"
)
# Sent where no bound was set (after the transaction that set one ended, with nothing
# sent in it since), it leaves the value in force as it is.
_BOUND_SET_BACK = (
    "SELECT set_config('lock_timeout', COALESCE(NULLIF(current_setting("
    "'airline.lock_timeout_was', true), ''), current_setting('lock_timeout')), true)"
)


def _bound_set_back() -> None:
    """The bound set back ahead of the transaction's next statement; or, when nothing was
    sent since it was set (so neither was it), the bound withdrawn unsent."""
    if not ahead_withdrawn(_BOUND_SET):
        statement_ahead(_BOUND_SET_BACK)


# The statements to send ahead of the default connection's next one (statement_ahead),
# kept on its wrapper as the kept cursor is.
AHEAD = "_airline_statements_ahead"


def statement_ahead(
    sql: str, params: Sequence = (), keep: Callable[[list[tuple]], None] | None = None
) -> None:
    """Send `sql` in the round trip of the default connection's next statement, just
    ahead of it, in the current transaction. For a statement that only sets up the next
    ones (the lock bound), which a round trip of its own would cost more than it does;
    or one whose answer nothing needs before the next statement's (a booking's order row,
    sent with its legs' lock): `keep` is then handed the rows it answered, once the round
    trip is back, and the statement goes as a prepared one (statement_cursor). A
    statement that fails spoils the transaction as the next one's own failure would, and
    is raised in its place; should the transaction end first, its statements go with the
    first of the next (what they set was local to the one that ended)."""
    db = connections[DEFAULT_DB_ALIAS]
    db.__dict__.setdefault(AHEAD, []).append((sql, params, keep))
    if _sent_ahead not in db.execute_wrappers:
        # First, so that a wrapper installed before (a test's, the bench's recorder)
        # sees these statements too, in the order they are sent.
        db.execute_wrappers.insert(0, _sent_ahead)


def ahead_withdrawn(sql: str) -> bool:
    """Whether `sql` was waiting to be sent ahead (statement_ahead): if so, it no longer is."""
    ahead = connections[DEFAULT_DB_ALIAS].__dict__.get(AHEAD, [])
    for index in range(len(ahead) - 1, -1, -1):
        if ahead[index][0] == sql:
            del ahead[index]
            return True
    return False


def _sent_ahead(execute, sql, params, many, context):
    """Execute wrapper: the statements waiting (statement_ahead) and then this one, in one
    pipeline (statements_pipelined; within the caller's, when it is in one), then what
    they answered handed to their keeps. A server-side cursor's statement cannot be
    pipelined: they go before it, one by one."""
    db = context["connection"]
    ahead = db.__dict__.pop(AHEAD, [])
    if _sent_ahead in db.execute_wrappers:
        db.execute_wrappers.remove(_sent_ahead)
    raw = db.connection
    if not ahead or raw is None:
        return execute(sql, params, many, context)
    named = getattr(context["cursor"].cursor, "name", None) is not None
    own_pipeline = not named and raw.pgconn.pipeline_status == _pipeline_off()
    with ExitStack() as cursors:
        kept = []
        with statements_pipelined(db.alias) if own_pipeline else nullcontext():
            for ahead_sql, ahead_params, keep in ahead:
                cursor = cursors.enter_context(
                    db.cursor() if keep is None else statement_cursor(db.alias)
                )
                cursor.execute(ahead_sql, ahead_params)
                if keep is not None:
                    kept.append((cursor, keep))
            result = execute(sql, params, many, context)
        for cursor, keep in kept:
            keep(cursor.fetchall())
    return result


@cache
def _pipeline_off() -> object:
    """psycopg's status of a connection not in pipeline mode (imported when first used:
    the embedded default, SQLite, does not load psycopg)."""
    from psycopg import pq

    return pq.PipelineStatus.OFF


@contextmanager
def _lock_wait_reported(busy: str, bound: int) -> Iterator[None]:
    """A lock wait the bound cut short, raised as LockBusy(busy)."""
    try:
        yield
    except OperationalError as exc:
        if getattr(exc.__cause__, "sqlstate", None) != LOCK_NOT_AVAILABLE:
            raise
        # Not a storage failure (the metrics count those by the ApiError's cause), so the
        # cause is logged here and not chained.
        logger.warning("lock wait cut short", extra={"fields": {"busy": busy, "bound_ms": bound}})
        raise LockBusy(busy) from None


@contextmanager
def lock_waits_unbounded() -> Iterator[None]:
    """Lock waits of the block not bounded by lock_wait_bounded: for the background
    worker's jobs, which no client waits for."""
    token = _bounded.set(False)
    try:
        yield
    finally:
        _bounded.reset(token)


def analyze(*models: type[Model], using: str = DEFAULT_DB_ALIAS) -> None:
    """Refresh the planner's statistics of `models`' tables: called by every bulk write
    (seed_demo, load_schedule, import_bookings, the benchmarks' seeding) once it is done.

    Why: tables filled in bulk are otherwise planned as if still empty until autovacuum's
    autoanalyze notices them (a minute later at best; never where autovacuum is off). Issue
    24 item 8: a search's inventory query planned without statistics took 25 of its 35 ms
    after `seed_demo`, 16.5 ms p95 after an ANALYZE. PostgreSQL and SQLite both have
    ANALYZE; on PostgreSQL it samples (30,000 rows a table), so it takes well under a
    second for the demo schedule's 433k inventory rows. Best run after the bulk write's
    transaction commits: inside it, the tables stay locked against another ANALYZE (and
    VACUUM) until the commit."""
    if not models:
        return
    connection = connections[using]
    tables = [connection.ops.quote_name(model._meta.db_table) for model in models]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("ANALYZE " + ", ".join(tables))
        else:  # SQLite's ANALYZE takes one table at a time
            for table in tables:
                cursor.execute("ANALYZE " + table)
