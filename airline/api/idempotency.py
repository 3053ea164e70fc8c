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
from contextvars import ContextVar
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


# The claim of the request this thread is running, for idempotency_mark_applied.
_claim: ContextVar[int | None] = ContextVar("idempotency_claim", default=None)


def idempotent(handler: Callable | None = None, *, recover: Callable | None = None):
    """Wrap an APIView handler (`post`, `patch`) of a JSON endpoint with Idempotency-Key
    handling; the request is its method, path and JSON body (key order aside).
    `recover(view, request, *args, **kwargs)`, for a handler whose service calls
    idempotency_mark_applied, renders the answer of a change that committed while its
    own answer was lost (the worker died, or failed after the commit)."""
    if handler is None:
        return functools.partial(idempotent, recover=recover)

    @functools.wraps(handler)
    def wrapper(view, request, *args, **kwargs):
        if request.headers.get(HEADER) is None:
            return handler(view, request, *args, **kwargs)
        body = orjson.dumps(request.data, option=orjson.OPT_SORT_KEYS)
        return idempotently(
            request,
            body,
            lambda: handler(view, request, *args, **kwargs),
            recover=(lambda: recover(view, request, *args, **kwargs)) if recover else None,
        )

    return wrapper


def idempotently(
    request,
    body: bytes,
    run: Callable[[], HttpResponse],
    *,
    recover: Callable[[], HttpResponse] | None = None,
) -> HttpResponse:
    """`run()`'s response, under the request's Idempotency-Key when it has one: `body` is
    the request's content as compared between tries (canonical JSON, canonical XML for
    NDC). Replays answer in the content type of the channel (JSON, or XML on /ndc/).
    `recover()` answers a repeat of a request whose change committed without its answer
    being recorded (see idempotency_mark_applied)."""
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
    if replay is not None and replay.state == IdempotencyRecord.State.APPLIED:
        if recover is None:  # no service of this endpoint marks: not reached
            raise _in_progress()
        response = recover()
        _record_answer(replay.pk, response, state=IdempotencyRecord.State.APPLIED)
        response[REPLAY_HEADER] = "true"
        return response
    if replay is not None:
        response = HttpResponse(
            bytes(replay.body), status=replay.status_code, content_type=_content_type(request)
        )
        response[REPLAY_HEADER] = "true"
        return response
    claimed = _claim.set(record.pk)
    try:
        response = run()
    except BaseException:
        # Nothing committed: the key is free again. A change that did commit (APPLIED)
        # keeps its record, so that the retry learns of it instead of repeating it.
        _release(record.pk)
        raise
    finally:
        _claim.reset(claimed)
    if 200 <= response.status_code < 300:
        _record_answer(record.pk, response)
    else:
        _release(record.pk)
    return response


def idempotency_mark_applied() -> None:
    """Called inside the transaction that commits a change (orders.changes.order_change):
    the request's claim, if it has one, is marked APPLIED in that same transaction. A
    worker killed between that commit and the recording of its answer used to leave the
    claim RUNNING; the retry, once the lease ran out, ran the change again (a second bag
    bought) or was refused it (a second cancellation), never learning that the first
    had committed. An APPLIED claim is recovered, never run again."""
    pk = _claim.get()
    if pk is not None:
        IdempotencyRecord.objects.filter(pk=pk, state=IdempotencyRecord.State.RUNNING).update(
            state=IdempotencyRecord.State.APPLIED, updated_at=clock.now()
        )


def _record_answer(pk: int, response: HttpResponse, *, state: str | None = None) -> None:
    """The answer to replay from now on; `state` the record must still be in, if any."""
    data = getattr(response, "data", None)
    records = IdempotencyRecord.objects.filter(pk=pk)
    if state is not None:
        records = records.filter(state=state)
    records.update(
        state=IdempotencyRecord.State.DONE,
        status_code=response.status_code,
        # A DRF response is rendered after the view returns; an NDC one already is.
        body=dumps(data) if data is not None else response.content,
        updated_at=clock.now(),
    )


def _release(pk: int) -> None:
    IdempotencyRecord.objects.filter(pk=pk, state=IdempotencyRecord.State.RUNNING).delete()


def _in_progress() -> ApiError:
    return ApiError(
        Err.IDEMPOTENCY_IN_PROGRESS,
        "A request with this Idempotency-Key is still being processed; retry shortly",
        path=HEADER,
        headers={"Retry-After": "1"},
    )


def idempotency_claim(
    *, scope: str, key: str, fingerprint: str, now: datetime
) -> tuple[IdempotencyRecord | None, IdempotencyRecord | None]:
    """(our claim, None) when this request is to run; (None, the finished or APPLIED
    record) when it is a repeat to answer. ERR-1011 / ERR-1012 otherwise."""
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
            raise _in_progress()
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
