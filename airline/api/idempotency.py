"""Idempotency-Key on the write endpoints (DESIGN.md §4, §11 "Idempotent changes"):
create and change order and webhook registration in JSON, OrderCreate and OrderChange
in NDC.

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
from airline.api.responses import NDC_PREFIX, XML_CONTENT_TYPE, dumps

HEADER = "Idempotency-Key"
REPLAY_HEADER = "Idempotent-Replayed"


def idempotent(handler: Callable) -> Callable:
    """Wrap an APIView handler (`post`, `patch`) of a JSON endpoint with Idempotency-Key
    handling; the request is its method, path and JSON body (key order aside)."""

    @functools.wraps(handler)
    def wrapper(view, request, *args, **kwargs):
        if request.headers.get(HEADER) is None:
            return handler(view, request, *args, **kwargs)
        body = orjson.dumps(request.data, option=orjson.OPT_SORT_KEYS)
        return idempotently(request, body, lambda: handler(view, request, *args, **kwargs))

    return wrapper


def idempotently(request, body: bytes, run: Callable[[], HttpResponse]) -> HttpResponse:
    """`run()`'s response, under the request's Idempotency-Key when it has one: `body` is
    the request's content as compared between tries (canonical JSON, canonical XML for
    NDC). Replays answer in the content type of the channel (JSON, or XML on /ndc/)."""
    key = request.headers.get(HEADER)
    if key is None:
        return run()
    _check_key(key)
    now = clock.now()
    # The key AND the seller it acts for: a partner key replaying a key it used for
    # one seller while acting for another must not be handed that seller's answer
    # (DESIGN.md §11 "Isolation").
    scope = f"{request.user.key.prefix}:{request.user.seller.pk.hex}"
    fingerprint = _fingerprint(request, body)
    record, replay = idempotency_claim(scope=scope, key=key, fingerprint=fingerprint, now=now)
    if replay is not None:
        response = HttpResponse(
            bytes(replay.body), status=replay.status_code, content_type=_content_type(request)
        )
        response[REPLAY_HEADER] = "true"
        return response
    try:
        response = run()
    except BaseException:
        IdempotencyRecord.objects.filter(pk=record.pk).delete()
        raise
    if 200 <= response.status_code < 300:
        data = getattr(response, "data", None)
        IdempotencyRecord.objects.filter(pk=record.pk).update(
            state=IdempotencyRecord.State.DONE,
            status_code=response.status_code,
            # A DRF response is rendered after the view returns; an NDC one already is.
            body=dumps(data) if data is not None else response.content,
            updated_at=clock.now(),
        )
    else:
        IdempotencyRecord.objects.filter(pk=record.pk).delete()
    return response


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


def _content_type(request) -> str:
    return XML_CONTENT_TYPE if request.path.startswith(NDC_PREFIX) else "application/json"


def _fingerprint(request, body: bytes) -> str:
    message = b"\n".join((request.method.encode(), request.path.encode(), body))
    return hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).hexdigest()
