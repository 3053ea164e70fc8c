"""What every node of one service must agree on, checked through the Redis they share:
the SECRET_KEY, which signs API tokens (JWT_SIGNING_KEY defaults to it), sessions and
CSRF cookies. Two nodes with different keys each refuse the other's tokens: a partner
would see one request in two answer ERR-8000, whichever node the load balancer picks.

Each node records a fingerprint of its key (an HMAC of a constant, which does not reveal
the key) under one Redis key with a short lifetime, which its workers keep alive. A node
whose fingerprint differs from the live one refuses to start (gunicorn.conf.py); a
worker that finds a different one later (its node started while Redis was down, or the
others were restarted with a new key while it kept running) logs an error on every
heartbeat and answers /health 503 loading, so the load balancer takes it out. Rotating
the key means stopping every node, then starting them with the new one (README)."""

import hashlib
import hmac
import logging
import threading
import time

import redis
from django.conf import settings

from airline.redisclient import plain_client

logger = logging.getLogger(__name__)

FINGERPRINT_TTL_SECONDS = 60  # how long after the last node stops its key is still held
HEARTBEAT_SECONDS = 15


class SecretKeyMismatch(Exception):
    """Another live node of this service runs with a different SECRET_KEY."""


def fingerprint(secret_key: str | None = None) -> str:
    key = (secret_key or settings.SECRET_KEY).encode()
    return hmac.new(key, b"airline node SECRET_KEY fingerprint", hashlib.sha256).hexdigest()[:32]


def _redis() -> redis.Redis | None:
    """A plain client (no Django cache, no database): this runs in gunicorn's master
    before it forks the workers, which must not inherit an open connection."""
    return plain_client(timeout=2)


def _key() -> str:
    return f"{settings.CACHES['default']['KEY_PREFIX']}:nodes:secret-key-fingerprint"


def secret_key_claim() -> None:
    """Record this node's fingerprint, or raise SecretKeyMismatch when a live node's
    differs. Without Redis (a single node on SQLite) there is nothing to share or check."""
    client = _redis()
    if client is None:
        return
    mine = fingerprint()
    try:
        if client.set(_key(), mine, nx=True, ex=FINGERPRINT_TTL_SECONDS):
            return
        theirs = client.get(_key())
        if theirs is not None and theirs.decode() != mine:
            raise SecretKeyMismatch(
                "another live node of this service runs with a different SECRET_KEY "
                f"(fingerprint {theirs.decode()[:8]}..., ours {mine[:8]}...): every node "
                "must be given the same SECRET_KEY"
            )
        client.set(_key(), mine, ex=FINGERPRINT_TTL_SECONDS)  # alive, or back after expiry
    finally:
        client.close()


_agrees = True


def secret_key_agrees() -> bool:
    """Readiness (/health): no live node was seen with a different SECRET_KEY."""
    return _agrees


def heartbeat_in_background() -> None:
    """Keep this node's fingerprint alive and re-check it, from a daemon thread of each
    worker (gunicorn's post_worker_init)."""

    def beat() -> None:
        global _agrees
        while True:
            try:
                secret_key_claim()
                _agrees = True
            except SecretKeyMismatch as exc:
                _agrees = False
                logger.error("SECRET_KEY mismatch: %s; /health answers 503", exc)
            except redis.RedisError as exc:
                logger.warning("SECRET_KEY fingerprint not refreshed: %s", exc)
            time.sleep(HEARTBEAT_SECONDS)

    threading.Thread(target=beat, name="node-heartbeat", daemon=True).start()
