"""Who a bearer token acts as, remembered per process while nothing about keys, sellers
or partners has changed anywhere.

Resolving a token costs two ORM queries (about 1.2 ms, a fifth of a search request).
Every save of a Partner, Seller or ApiKey, and every bulk change made by a service,
replaces a shared stamp in the cache (Redis, or the database cache); each request reads
the stamp and reuses its resolved key and seller only while the stamp is the one they
were resolved under. Where the request's volume is counted in Redis, the stamp is read
in the count's own round trip (sellers/authentication.py, `auth_confirm`), not in one of
its own. So a revoked key fails on its next request in
every process, as DESIGN.md §5 requires. A stamp is random, never a counter, so an
evicted stamp cannot come back as one a process already holds. Entries also expire
after MAX_AGE_SECONDS, for edits made outside the application (SQL by hand).
"""

import logging
import time
import uuid
from collections.abc import Callable
from typing import TypeVar

import redis.exceptions
from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, transaction
from django_redis import get_redis_connection

logger = logging.getLogger(__name__)
CACHE_ERRORS = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, DatabaseError)
STAMP_KEY = "auth:stamp"
MAX_AGE_SECONDS = 30
MAX_ENTRIES = 50_000

T = TypeVar("T")
_entries: dict[tuple, tuple[str, float, object]] = {}


def auth_changed() -> None:
    """Call after changing keys, sellers or partners: at once (this transaction's own
    later reads) and again after commit (other processes' reads of committed rows)."""
    _new_stamp()
    transaction.on_commit(_new_stamp)


def _new_stamp() -> None:
    try:
        cache.set(STAMP_KEY, uuid.uuid4().hex, timeout=None)
    except CACHE_ERRORS:
        # A save must not fail for this. While the cache is down no process can read the
        # stamp, so none reuses anything (see `remembered`); MAX_AGE_SECONDS bounds what
        # was remembered before.
        logger.warning(
            "could not replace the auth stamp; resolved tokens expire within %s s", MAX_AGE_SECONDS
        )


def stamp_key() -> str | None:
    """The stamp's Redis key, for a caller that reads it in a round trip of its own
    making (a script); None without Redis. Its value, read raw, is a stamp as
    `remembered_under` takes it (None when there is none)."""
    return cache.make_key(STAMP_KEY) if settings.REDIS_ENABLED else None


def _stamp() -> object:
    """The stamp now. From Redis its raw bytes, as a script reads it (no unpickling:
    it is only ever compared)."""
    key = stamp_key()
    if key is None:
        return cache.get(STAMP_KEY) or "none"
    return get_redis_connection("default").get(key) or b"none"


def remembered(key: tuple, resolve: Callable[[], T]) -> T:
    """`resolve()`'s result for `key`, reused while the stamp stands and it is fresh.
    Errors raised by `resolve` are not remembered."""
    try:
        stamp = _stamp()
    except CACHE_ERRORS:
        return resolve()  # the cache is down: resolve every time, from the database
    return remembered_under(key, stamp, resolve)


def remembered_under(key: tuple, stamp: object, resolve: Callable[[], T]) -> T:
    """As `remembered`, with the stamp `stamp` read by the caller (a raw read of
    `stamp_key()`)."""
    stamp = stamp or b"none"
    entry = _entries.get(key)
    if entry is not None and entry[0] == stamp and time.monotonic() - entry[1] < MAX_AGE_SECONDS:
        return entry[2]  # type: ignore[return-value]
    value = resolve()
    if len(_entries) > MAX_ENTRIES:
        _entries.clear()
    _entries[key] = (stamp, time.monotonic(), value)
    return value


def remembered_fresh(key: tuple) -> tuple[object, object] | None:
    """(stamp, value) remembered for `key` within MAX_AGE_SECONDS, whatever the stamp is
    now; the caller must compare that stamp with the current one before the value acts
    (sellers/authentication.py, `auth_confirm`)."""
    entry = _entries.get(key)
    if entry is None or time.monotonic() - entry[1] >= MAX_AGE_SECONDS:
        return None
    return entry[0], entry[2]


def forget() -> None:
    _entries.clear()
