"""Request volume per API key, shared by every seller the key acts for and by every worker
process (SPEC.md §5 item 5, DESIGN.md §5).

A fixed one-minute window counted atomically (Redis INCR in a script, or an SQL upsert on the
embedded default): no two processes can both take the last request of a window, so the
count admitted per window never exceeds the key's limit. DRF's own throttle reads, then
writes, the cache and is documented as approximate under concurrency.
"""

from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

import redis.exceptions
from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, connection
from django_redis import get_redis_connection
from rest_framework.throttling import BaseThrottle

from airline.api import clock
from sellers.authentication import Principal, auth_store_unavailable
from sellers.models import ApiKey, RateWindow


@dataclass(frozen=True)
class RateLimitState:
    """The outcome of counting one request; also sent as X-RateLimit-* headers."""

    allowed: bool
    limit: int
    remaining: int
    reset_at: int  # Unix time the window ends
    retry_after: int  # seconds until then


def rate_limit_hit(*, key: ApiKey, now: datetime) -> RateLimitState:
    """Count one request of `key` in the current minute and say whether it may proceed."""
    timestamp = int(now.timestamp())
    minute = timestamp // 60
    count = (
        _count_in_redis(key.pk, minute)
        if settings.REDIS_URL
        else _count_in_database(key.pk, minute)
    )
    reset_at = (minute + 1) * 60
    return RateLimitState(
        allowed=count <= key.requests_per_minute,
        limit=key.requests_per_minute,
        remaining=max(0, key.requests_per_minute - count),
        reset_at=reset_at,
        retry_after=max(1, reset_at - timestamp),
    )


# The count and its expiry in one command, atomic as a MULTI/EXEC pipeline of INCR and
# EXPIRE was, for a quarter of the commands sent and answers parsed on every request.
COUNT_SCRIPT = """
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return count
"""
WINDOW_KEPT_SECONDS = 120  # a minute's count outlives its minute, for no longer than this


def _count_in_redis(key_id: int, minute: int) -> int:
    client = get_redis_connection("default")
    name = cache.make_key(f"rate:{key_id}:{minute}")
    return int(_count_script(client)(keys=[name], args=[WINDOW_KEPT_SECONDS]))


@lru_cache(maxsize=8)  # one Script a Redis client (django-redis keeps one a server)
def _count_script(client):
    """COUNT_SCRIPT registered with `client` (sent by its digest: EVALSHA, loading it
    first where Redis does not know it yet)."""
    return client.register_script(COUNT_SCRIPT)


def _count_in_database(key_id: int, minute: int) -> int:
    table = RateWindow._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (key_id, minute, count) VALUES (%s, %s, 1) "  # noqa: S608
            f"ON CONFLICT (key_id, minute) DO UPDATE SET count = {table}.count + 1 "
            "RETURNING count",
            [key_id, minute],
        )
        count = cursor.fetchone()[0]
    if count == 1:  # first request of a minute: drop this key's finished windows
        RateWindow.objects.filter(key_id=key_id, minute__lt=minute - 1).delete()
    return count


class ApiKeyRateThrottle(BaseThrottle):
    """DRF throttle over `rate_limit_hit`; over the limit DRF raises Throttled -> ERR-8003."""

    def allow_request(self, request, view) -> bool:
        principal = request.user
        if not isinstance(principal, Principal):
            return True  # unauthenticated requests are refused before throttling
        try:
            state = rate_limit_hit(key=principal.key, now=clock.now())
        except (
            DatabaseError,
            redis.exceptions.ConnectionError,
            redis.exceptions.TimeoutError,
        ) as exc:
            raise auth_store_unavailable() from exc
        request._request.rate_limit = state  # the middleware turns it into headers
        self.retry_after = state.retry_after
        return state.allowed

    def wait(self) -> int:
        return self.retry_after
