"""Request volume and request-body bytes per API key, shared by every seller the key acts
for and by every worker process (SPEC.md §5 item 5, DESIGN.md §5).

A fixed one-minute window counted atomically (Redis INCR in a script, or an SQL upsert on the
embedded default): no two processes can both take the last request of a window, so the
count admitted per window never exceeds the key's limit. DRF's own throttle reads, then
writes, the cache and is documented as approximate under concurrency. The same window
counts the bytes of the key's request bodies (their Content-Length, before anything is
read or parsed) against API_KEY_BODY_BYTES_PER_MINUTE: requests are counted, so a key
at its allowance of 1 MiB bodies would otherwise buy the parsing time other sellers need.

While Redis cannot be reached the limits fail open, for RATE_LIMIT_OPEN_SECONDS in each
process (a failover, a restart of Redis): requests are admitted uncounted, each counted
in the airline_rate_limit_redis_down metric, with a log line when the process opens and
when it closes. After that the process counts in the database, as the embedded default
does, until Redis answers again: a longer outage never leaves the limits off.
"""

import logging
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache

import redis.exceptions
from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, connection
from django_redis import get_redis_connection
from rest_framework.throttling import BaseThrottle

from airline.api import clock
from airline.api.errors import ApiError, Err
from airline.api.metrics import RATE_LIMIT_REDIS_DOWN
from sellers.authcache import stamp_key
from sellers.authentication import Principal, auth_confirm, auth_pending, auth_store_unavailable
from sellers.models import ApiKey, RateWindow

logger = logging.getLogger(__name__)
REDIS_ERRORS = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
# While Redis is down a process asks it again at most this often (a blackholed host costs
# the connect timeout), and otherwise goes straight to the fallback.
REDIS_RETRY_SECONDS = 1.0


UNREAD = object()  # RateLimitState.auth_stamp when the count did not read it


@dataclass(frozen=True)
class RateLimitState:
    """The outcome of counting one request; also sent as X-RateLimit-* headers."""

    allowed: bool
    limit: int
    remaining: int
    reset_at: int  # Unix time the window ends
    retry_after: int  # seconds until then
    bytes_allowed: bool = True  # False: the body budget of the window is spent
    count: int | None = None  # requests of the window, this one counted (None: uncounted)
    # The auth stamp (sellers/authcache.py) as the count read it, raw; UNREAD when it
    # was not asked for or the count did not reach Redis.
    auth_stamp: object = UNREAD

    def under(self, limit: int) -> "RateLimitState":
        """The same count judged against `limit` (the key's, resolved again)."""
        if self.count is None:
            return replace(self, limit=limit, remaining=limit)
        return replace(
            self,
            allowed=self.count <= limit,
            limit=limit,
            remaining=max(0, limit - self.count),
        )


class RedisOutage:
    """This process's view of Redis for the rate limits: since when it has failed, and
    when to ask it again (Unix seconds of the service clock, which tests set). Threads
    of one process may race on it harmlessly: at worst a transition is logged twice."""

    def __init__(self) -> None:
        self.since: float | None = None
        self.retry_at = 0.0
        self.counting_in_database = False

    def skip_redis(self) -> bool:
        return self.since is not None and _seconds() < self.retry_at

    def failed(self, exc: Exception) -> None:
        now = _seconds()
        if self.since is None:
            self.since = now
            logger.warning(
                "rate limits open: Redis unreachable (%s); requests are admitted uncounted "
                "for %s s, then counted in the database",
                exc.__class__.__name__,
                settings.RATE_LIMIT_OPEN_SECONDS,
            )
        self.retry_at = now + REDIS_RETRY_SECONDS

    def fallback(self) -> str:
        """`open` within RATE_LIMIT_OPEN_SECONDS of the first failure, then `database`."""
        assert self.since is not None
        if _seconds() - self.since < settings.RATE_LIMIT_OPEN_SECONDS:
            return "open"
        if not self.counting_in_database:
            self.counting_in_database = True
            logger.warning(
                "rate limits closed again: Redis still unreachable after %s s; counting "
                "requests in the database",
                settings.RATE_LIMIT_OPEN_SECONDS,
            )
        return "database"

    def recovered(self) -> None:
        if self.since is None:
            return
        logger.warning("rate limits counted in Redis again")
        self.since, self.retry_at, self.counting_in_database = None, 0.0, False


def _seconds() -> float:
    return clock.now().timestamp()


outage = RedisOutage()


def rate_limit_hit(
    *, key: ApiKey, now: datetime, body_bytes: int = 0, read_auth_stamp: bool = False
) -> RateLimitState:
    """Count one request of `key`, with a body of `body_bytes`, in the current minute and
    say whether it may proceed; with `read_auth_stamp`, the auth stamp read in the same
    round trip comes back in the state (when Redis counted)."""
    timestamp = int(now.timestamp())
    minute = timestamp // 60
    count, spent, stamp = _count(key.pk, minute, body_bytes, read_auth_stamp)
    reset_at = (minute + 1) * 60
    if count is None:  # Redis down, the limits open
        return RateLimitState(
            allowed=True,
            limit=key.requests_per_minute,
            remaining=key.requests_per_minute,
            reset_at=reset_at,
            retry_after=max(1, reset_at - timestamp),
            auth_stamp=stamp,
        )
    return RateLimitState(
        allowed=count <= key.requests_per_minute,
        limit=key.requests_per_minute,
        remaining=max(0, key.requests_per_minute - count),
        reset_at=reset_at,
        retry_after=max(1, reset_at - timestamp),
        bytes_allowed=body_bytes == 0 or spent <= settings.API_KEY_BODY_BYTES_PER_MINUTE,
        count=count,
        auth_stamp=stamp,
    )


def _count(
    key_id: int, minute: int, body_bytes: int, read_auth_stamp: bool
) -> tuple[int | None, int, object]:
    """(requests, body bytes, auth stamp) of the key's window with this request counted:
    requests None when it could not be counted and the limits are open; the stamp
    UNREAD unless asked for and read from Redis."""
    if not settings.REDIS_ENABLED:
        return *_count_in_database(key_id, minute, body_bytes), UNREAD
    if not outage.skip_redis():
        try:
            counted = _count_in_redis(key_id, minute, body_bytes, read_auth_stamp)
        except REDIS_ERRORS as exc:
            outage.failed(exc)
        else:
            outage.recovered()
            return counted
    fallback = outage.fallback()
    RATE_LIMIT_REDIS_DOWN.labels(fallback).inc()
    if fallback == "open":
        return None, 0, UNREAD
    return *_count_in_database(key_id, minute, body_bytes), UNREAD


# The count, the bytes and their expiry in one command, atomic as a MULTI/EXEC pipeline
# was, for a quarter of the commands sent and answers parsed on every request. Given a
# third key, the auth stamp (sellers/authcache.py) is read with them: authentication's
# check that a resolved token is still good costs no round trip of its own.
COUNT_SCRIPT = """
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
local spent = 0
if tonumber(ARGV[2]) > 0 then
  spent = redis.call('INCRBY', KEYS[2], ARGV[2])
  if spent == tonumber(ARGV[2]) then redis.call('EXPIRE', KEYS[2], ARGV[1]) end
end
if KEYS[3] then return {count, spent, redis.call('GET', KEYS[3])} end
return {count, spent}
"""
WINDOW_KEPT_SECONDS = 120  # a minute's count outlives its minute, for no longer than this


def _count_in_redis(
    key_id: int, minute: int, body_bytes: int, read_auth_stamp: bool = False
) -> tuple[int, int, object]:
    client = get_redis_connection("default")
    names = [cache.make_key(f"rate:{key_id}:{minute}"), cache.make_key(f"bytes:{key_id}:{minute}")]
    stamp_name = stamp_key() if read_auth_stamp else None
    if stamp_name is not None:
        names.append(stamp_name)
    answer = _count_script(client)(keys=names, args=[WINDOW_KEPT_SECONDS, body_bytes])
    # A missing stamp comes back from Lua as false, which redis-py reads as None.
    stamp = (answer[2] if len(answer) > 2 else None) if stamp_name is not None else UNREAD
    return int(answer[0]), int(answer[1]), stamp


@lru_cache(maxsize=8)  # one Script a Redis client (django-redis keeps one a server)
def _count_script(client):
    """COUNT_SCRIPT registered with `client` (sent by its digest: EVALSHA, loading it
    first where Redis does not know it yet)."""
    return client.register_script(COUNT_SCRIPT)


def _count_in_database(key_id: int, minute: int, body_bytes: int) -> tuple[int, int]:
    table = RateWindow._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (key_id, minute, count, bytes) "  # noqa: S608
            "VALUES (%s, %s, 1, %s) "
            f"ON CONFLICT (key_id, minute) DO UPDATE SET count = {table}.count + 1, "
            f"bytes = {table}.bytes + EXCLUDED.bytes "
            "RETURNING count, bytes",
            [key_id, minute, body_bytes],
        )
        count, spent = cursor.fetchone()
    if count == 1:  # first request of a minute: drop this key's finished windows
        RateWindow.objects.filter(key_id=key_id, minute__lt=minute - 1).delete()
    return count, spent


def body_bytes_of(request) -> int:
    """The body a request declares (Content-Length): what it costs to read and parse, up
    to one byte past the most any request may have (what is read of a larger one before
    it is refused, ERR-1009). A body without one is read as empty (Django reads no
    further than Content-Length)."""
    try:
        declared = max(0, int(request.META.get("CONTENT_LENGTH") or 0))
    except ValueError:
        return 0
    return min(declared, settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)


def body_budget_refused(retry_after: int, *, limit: int, whose: str) -> ApiError:
    """429 ERR-8003 for a request whose body would pass its minute's byte budget."""
    return ApiError(
        Err.TOO_MANY_REQUESTS,
        f"Request body volume of this {whose} exceeded ({limit} bytes a minute); "
        f"retry in {retry_after} s",
        headers={"Retry-After": str(retry_after)},
    )


def client_address(request) -> str:
    """The client's address: behind the shipped proxy (BEHIND_PROXY) the X-Forwarded-For
    it sets to the address it was connected from, never passing a client's on."""
    if settings.BEHIND_PROXY:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")[-1].strip()
        if forwarded:
            return forwarded
    return request.META.get("REMOTE_ADDR", "")


def address_body_budget_check(request) -> None:
    """Count the body of a request made without credentials against its client address's
    budget (API_ADDRESS_BODY_BYTES_PER_MINUTE); 429 ERR-8003 when spent. Counted with the
    cache's own add and incr: atomic on Redis, close enough on the database cache. With
    Redis down it is not counted (the request carries no key to hold to a limit)."""
    size = body_bytes_of(request)
    if size == 0:
        return
    timestamp = int(clock.now().timestamp())
    minute = timestamp // 60
    name = f"bytes:addr:{client_address(request)}:{minute}"
    try:
        cache.add(name, 0, WINDOW_KEPT_SECONDS)
        spent = cache.incr(name, size)
    except (*REDIS_ERRORS, DatabaseError, ValueError):
        return
    if spent > settings.API_ADDRESS_BODY_BYTES_PER_MINUTE:
        raise body_budget_refused(
            max(1, (minute + 1) * 60 - timestamp),
            limit=settings.API_ADDRESS_BODY_BYTES_PER_MINUTE,
            whose="address",
        )


class ApiKeyRateThrottle(BaseThrottle):
    """DRF throttle over `rate_limit_hit`; over the limit DRF raises Throttled -> ERR-8003,
    and over the body budget so does this (its own description).

    It settles a principal authentication took unconfirmed (sellers/authentication.py,
    `auth_confirm`) with the stamp its count read, before judging the count: a key
    revoked or changed since is answered as it is now (401, or judged again by the
    view's permissions, then against its own limit)."""

    confirms_auth_stamp = True  # read by sellers.authentication

    def allow_request(self, request, view) -> bool:
        principal = request.user
        if not isinstance(principal, Principal):
            return True  # unauthenticated requests are refused before throttling
        pending = auth_pending(request)
        try:
            state = rate_limit_hit(
                key=principal.key,
                now=clock.now(),
                body_bytes=body_bytes_of(request),
                read_auth_stamp=pending,
            )
        except DatabaseError as exc:
            raise auth_store_unavailable() from exc
        if pending:
            read = () if state.auth_stamp is UNREAD else (state.auth_stamp,)
            if auth_confirm(request, *read):
                view.check_permissions(request)
                state = state.under(request.user.key.requests_per_minute)
        request._request.rate_limit = state  # the middleware turns it into headers
        self.retry_after = state.retry_after
        if state.allowed and not state.bytes_allowed:
            raise body_budget_refused(
                state.retry_after, limit=settings.API_KEY_BODY_BYTES_PER_MINUTE, whose="API key"
            )
        return state.allowed

    def wait(self) -> int:
        return self.retry_after
