"""Redis outside Django's cache, on the same settings (REDIS_URL, or the master that
REDIS_SENTINELS name): for gunicorn's master, which must not open the cache's pools
before it forks, and for /health's probe."""

import redis
from django.conf import settings
from redis.sentinel import Sentinel


def plain_client(*, timeout: float) -> redis.Redis | None:
    """A new client of the service's Redis with `timeout` for connecting and each reply,
    or None when Redis is not configured (the embedded default)."""
    if settings.REDIS_SENTINEL_ADDRESSES:
        sentinel = Sentinel(
            settings.REDIS_SENTINEL_ADDRESSES,
            sentinel_kwargs={"socket_connect_timeout": timeout, "socket_timeout": timeout},
            socket_connect_timeout=timeout,
            socket_timeout=timeout,
        )
        return sentinel.master_for(settings.REDIS_SENTINEL_MASTER, db=settings.REDIS_SENTINEL_DB)
    if settings.REDIS_URL:
        return redis.Redis.from_url(
            settings.REDIS_URL, socket_timeout=timeout, socket_connect_timeout=timeout
        )
    return None


def redis_state() -> str | None:
    """`up` or `down` by a PING through the cache's own connections (so a Sentinel
    failover is seen as the requests see it), or None without Redis."""
    if not settings.REDIS_ENABLED:
        return None
    from django_redis import get_redis_connection

    try:
        get_redis_connection("default").ping()
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError):
        return "down"
    return "up"
