"""Reads that may be slightly stale, from the standby (docs/operators/cluster.md "Reads on the
standby").

With DATABASE_REPLICA_URL set and READ_FROM_STANDBY on, the selectors that may show a
moment-old answer (OrderList, order retrieve, seat maps and service lists, the back
office's changelists) read through `stale_ok_db(who)`, which names the `replica` alias:
the streaming standby. Everything else, writes and every read inside a write
transaction, uses `default`: the primary. `StandbyRouter` keeps it so: a row read on the
standby is written back to the primary, and nothing is migrated on the standby.

Read-your-writes: a client that has just written reads from the primary. A synchronous
standby has the WAL of every acknowledged commit flushed, but replays it a moment later,
so the very next read of a standby could miss it. `WriteMarkerMiddleware` notes, in the
shared cache, that a seller (API) or a staff user (back office) wrote in a request; for
READ_YOUR_WRITES_SECONDS after that, far longer than a standby's replay lag, their
stale-ok reads go to the primary too. Another seller's writes may show a moment late:
that is the staleness these reads accept.
"""

import logging
import time
from collections.abc import Callable
from typing import TypeVar

import redis.exceptions
from django.conf import settings
from django.core.cache import cache
from django.db import (
    DEFAULT_DB_ALIAS,
    DatabaseError,
    InterfaceError,
    OperationalError,
    connections,
)

REPLICA = "replica"

T = TypeVar("T")

logger = logging.getLogger(__name__)

STORE_ERRORS = (DatabaseError, redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)

# A statement that can change data. The rest (SELECT, locks taken by SELECT ... FOR
# UPDATE, savepoints) cannot; a statement not recognised counts as a write, so a
# mistake sends a client to the primary, never a stale read after its own write.
_READ_ONLY_STATEMENTS = (
    "SELECT",
    "SAVEPOINT",
    "RELEASE",
    "ROLLBACK",
    "SHOW",
    "SET ",
    "BEGIN",
    "COMMIT",
)


def standby_reads_enabled() -> bool:
    return settings.READ_FROM_STANDBY and REPLICA in settings.DATABASES


def stale_ok_db(who: str | None) -> str:
    """The database alias for a read that may be a moment old, made for `who`
    (`seller_marker` or `staff_marker`): the standby, unless standby reads are off,
    the read is part of a write transaction, or `who` wrote within
    READ_YOUR_WRITES_SECONDS (then, and when the shared cache cannot say, the primary)."""
    if not standby_reads_enabled() or _in_write_transaction():
        return DEFAULT_DB_ALIAS
    if who is None:
        return REPLICA
    try:
        wrote = cache.get(_key(who)) is not None
    except STORE_ERRORS:
        wrote = True
    return DEFAULT_DB_ALIAS if wrote else REPLICA


def stale_ok_read(who: str | None, read: Callable[[str], T]) -> T:
    """`read(alias)` on the database `stale_ok_db(who)` names; when that is the standby
    and it fails on its connection (the standby or its pooler gone mid-read), once more
    on the primary, so that losing a standby costs a client no answer. `read` must do
    all its reading before it returns (a list, not a lazy queryset)."""
    using = stale_ok_db(who)
    if using == DEFAULT_DB_ALIAS:
        return read(using)
    try:
        return read(using)
    except (OperationalError, InterfaceError):
        logger.warning("a stale-ok read failed on the standby; read on the primary")
        connections[REPLICA].close_if_unusable_or_obsolete()
        return read(DEFAULT_DB_ALIAS)


def _in_write_transaction() -> bool:
    """Inside transaction.atomic on the primary. Django's TestCase runs each test in
    atomic blocks of its own, which it marks (as its `durable` check reads them): those
    are not the application's."""
    return any(not block._from_testcase for block in connections[DEFAULT_DB_ALIAS].atomic_blocks)


def seller_marker(seller_id) -> str:
    return f"seller:{seller_id}"


def staff_marker(user_id) -> str:
    return f"staff:{user_id}"


def note_write(who: str) -> None:
    """`who` has just written: their stale-ok reads go to the primary for a while."""
    try:
        cache.set(_key(who), 1, timeout=settings.READ_YOUR_WRITES_SECONDS)
    except STORE_ERRORS:
        # Then stale_ok_db cannot read the marker either, and reads from the primary.
        logger.warning("read-your-writes marker not stored for %s", who)


def _key(who: str) -> str:
    return f"wrote:{who}"


def replica_connection_checked(sender, connection, **kwargs) -> None:
    """`connection_created` for the `replica` alias: a connection that found no standby
    (`target_session_attrs=prefer-standby` falls back to the primary while the standby or
    its pooler is down) is closed at the end of its request instead of being kept for
    CONN_MAX_AGE, so the next request looks for the standby again. Kept, it would send
    every stale-ok read of its process to the primary for minutes after the standby came
    back."""
    if connection.alias != REPLICA or connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_is_in_recovery()")
        (on_standby,) = cursor.fetchone()
    if not on_standby:
        connection.close_at = time.monotonic()


def _who(request) -> str | None:
    """Whose writes a request's were: the acting seller (API), the staff user (admin)."""
    user = getattr(request, "user", None)
    seller = getattr(user, "seller", None)
    if seller is not None:
        return seller_marker(seller.pk)
    if getattr(user, "is_staff", False):
        return staff_marker(user.pk)
    return None


class WriteMarkerMiddleware:
    """While standby reads are on: notes whether a request wrote to the primary, and if
    it did, marks its seller or staff user (`note_write`) before the answer leaves, so
    the client's next request already reads from the primary."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not standby_reads_enabled():
            return self.get_response(request)
        wrote = False

        def watch(execute, sql, params, many, context):
            nonlocal wrote
            if not wrote and not sql.lstrip()[:9].upper().startswith(_READ_ONLY_STATEMENTS):
                wrote = True
            return execute(sql, params, many, context)

        with connections[DEFAULT_DB_ALIAS].execute_wrapper(watch):
            response = self.get_response(request)
        if wrote:
            who = _who(request)
            if who is not None:
                note_write(who)
        return response


class StandbyRouter:
    """Writes always go to the primary, whichever database the row was read from; a
    read goes where its queryset says (`.using(stale_ok_db(...))`), or to the database
    its instance came from (a standby read's related rows from the standby, one view
    of one moment), else to the primary."""

    def db_for_read(self, model, **hints):
        return None  # Django's rule: the instance's database, else default

    def db_for_write(self, model, **hints):
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1, obj2, **hints):
        return {obj1._state.db, obj2._state.db} <= {DEFAULT_DB_ALIAS, REPLICA, None}

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        return db == DEFAULT_DB_ALIAS
