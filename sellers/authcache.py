"""Who a bearer token acts as, remembered per process while nothing about keys, sellers
or partners has changed anywhere.

Resolving a token costs two ORM queries (about 1.2 ms, a fifth of a search request).
Every save of a Partner, Seller or ApiKey, and every bulk change made by a service,
replaces a shared stamp in the cache (Redis, or the database cache); each request reads
the stamp (one round trip) and reuses its resolved key and seller only while the stamp
is the one they were resolved under. So a revoked key fails on its next request in
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
from django.core.cache import cache
from django.db import DatabaseError, transaction

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


def remembered(key: tuple, resolve: Callable[[], T]) -> T:
    """`resolve()`'s result for `key`, reused while the stamp stands and it is fresh.
    Errors raised by `resolve` are not remembered."""
    try:
        stamp = cache.get(STAMP_KEY) or "none"
    except CACHE_ERRORS:
        return resolve()  # the cache is down: resolve every time, from the database
    entry = _entries.get(key)
    if entry is not None and entry[0] == stamp and time.monotonic() - entry[1] < MAX_AGE_SECONDS:
        return entry[2]  # type: ignore[return-value]
    value = resolve()
    if len(_entries) > MAX_ENTRIES:
        _entries.clear()
    _entries[key] = (stamp, time.monotonic(), value)
    return value


def forget() -> None:
    _entries.clear()
