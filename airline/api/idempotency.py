"""Idempotency-Key on the write endpoints (DESIGN.md §4).

The same key (scoped to the API key and the seller it acts for) with the same request
within 24 hours replays the first response, status and body; with another request it is
ERR-1011; while the first is still running it is ERR-1012. Only successes are kept: a
request that failed (validation, a declined card...) leaves nothing behind, so the
client may retry with the same key.

The claim on a key is an INSERT against a unique constraint, committed before the work
starts: of concurrent requests with one key exactly one inserts and runs, the others see
its row. A worker that dies mid-request leaves a RUNNING row; after a lease it may be
taken over.
"""

import functools
import hashlib
import hmac
from collections.abc import Callable
from datetime import datetime, timedelta

import orjson
from django.conf import settings
from django.db import IntegrityError, transaction
from django.http import HttpResponse

from airline.api import clock
from airline.api.errors import ApiError, Err
from airline.api.models import IdempotencyRecord
from airline.api.responses import dumps

HEADER = "Idempotency-Key"
REPLAY_HEADER = "Idempotent-Replayed"


def idempotent(handler: Callable) -> Callable:
    """Wrap an APIView handler (`post`, `patch`) with Idempotency-Key handling."""

    @functools.wraps(handler)
    def wrapper(view, request, *args, **kwargs):
        key = request.headers.get(HEADER)
        if key is None:
            return handler(view, request, *args, **kwargs)
        _check_key(key)
        now = clock.now()
        # The key AND the seller it acts for: a partner key replaying a key it used for
        # one seller while acting for another must not be handed that seller's answer
        # (DESIGN.md §11 "Isolation").
        scope = f"{request.user.key.prefix}:{request.user.seller.pk.hex}"
        fingerprint = _fingerprint(request)
        record, replay = idempotency_claim(scope=scope, key=key, fingerprint=fingerprint, now=now)
        if replay is not None:
            response = HttpResponse(
                bytes(replay.body), status=replay.status_code, content_type="application/json"
            )
            response[REPLAY_HEADER] = "true"
            return response
        try:
            response = handler(view, request, *args, **kwargs)
        except BaseException:
            IdempotencyRecord.objects.filter(pk=record.pk).delete()
            raise
        if 200 <= response.status_code < 300:
            IdempotencyRecord.objects.filter(pk=record.pk).update(
                state=IdempotencyRecord.State.DONE,
                status_code=response.status_code,
                body=dumps(response.data),
                updated_at=clock.now(),
            )
        else:
            IdempotencyRecord.objects.filter(pk=record.pk).delete()
        return response

    return wrapper


def idempotency_claim(
    *, scope: str, key: str, fingerprint: str, now: datetime
) -> tuple[IdempotencyRecord | None, IdempotencyRecord | None]:
    """(our claim, None) when this request is to run; (None, the finished record) when
    it is a repeat to replay. ERR-1011 / ERR-1012 otherwise."""
    for _ in range(3):
        try:
            with transaction.atomic():
                return (
                    IdempotencyRecord.objects.create(
                        scope=scope,
                        key=key,
                        fingerprint=fingerprint,
                        state=IdempotencyRecord.State.RUNNING,
                        created_at=now,
                        updated_at=now,
                    ),
                    None,
                )
        except IntegrityError:
            pass
        record = IdempotencyRecord.objects.filter(scope=scope, key=key).first()
        if record is None:
            continue  # the first request failed and let the key go meanwhile: claim it
        stale = record.created_at < now - timedelta(hours=settings.IDEMPOTENCY_TTL_HOURS) or (
            record.state == IdempotencyRecord.State.RUNNING
            and record.updated_at < now - timedelta(seconds=settings.IDEMPOTENCY_LEASE_SECONDS)
        )
        if stale:
            # Expired, or left RUNNING by a dead worker: take it over, if no one else
            # did first (the conditional UPDATE decides).
            taken = IdempotencyRecord.objects.filter(
                pk=record.pk, updated_at=record.updated_at
            ).update(
                fingerprint=fingerprint,
                state=IdempotencyRecord.State.RUNNING,
                status_code=None,
                body=None,
                created_at=now,
                updated_at=now,
            )
            if taken:
                record.refresh_from_db()
                return record, None
            continue
        if record.state == IdempotencyRecord.State.RUNNING:
            raise ApiError(
                Err.IDEMPOTENCY_IN_PROGRESS,
                "A request with this Idempotency-Key is still being processed; retry shortly",
                path=HEADER,
                headers={"Retry-After": "1"},
            )
        if not hmac.compare_digest(record.fingerprint, fingerprint):
            raise ApiError(
                Err.IDEMPOTENCY_MISMATCH,
                "This Idempotency-Key was used with a different request",
                path=HEADER,
            )
        return None, record
    raise ApiError(
        Err.IDEMPOTENCY_IN_PROGRESS, "The Idempotency-Key is contended; retry", path=HEADER
    )


def idempotency_purge(*, now: datetime) -> int:
    """Forget keys older than the replay window; returns how many."""
    cutoff = now - timedelta(hours=settings.IDEMPOTENCY_TTL_HOURS)
    deleted, _ = IdempotencyRecord.objects.filter(created_at__lt=cutoff).delete()
    return deleted


def _check_key(key: str) -> None:
    if not 1 <= len(key) <= 255 or not all(" " <= ch <= "~" for ch in key):
        raise ApiError(
            Err.VALIDATION, "Idempotency-Key must be 1 to 255 printable characters", path=HEADER
        )


def _fingerprint(request) -> str:
    body = orjson.dumps(request.data, option=orjson.OPT_SORT_KEYS)
    message = b"\n".join((request.method.encode(), request.path.encode(), body))
    return hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).hexdigest()
