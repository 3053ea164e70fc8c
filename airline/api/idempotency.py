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
taken over (and the payment reconciler deletes it, so that none stays RUNNING).

A request that pays by card may not learn how its payment ended: the gateway times out,
the database or the worker goes away after the charge. Its claim is SETTLING from the
commit of its payment intent (idempotency_settling) until the request answers itself;
if it could not (503 ERR-9000, ERR-6005, or no answer), the claim stays SETTLING, and a
retry is ERR-1012 until the payment reconciler decides the payment: it finishes the claim
APPLIED with the order it booked or changed (the retry gets the 201 or 200 the first
request would have had) or FAILED with the error (the retry gets that error). A SETTLING
claim is never run again: running it would charge the card a second time.
"""

import functools
import hashlib
import hmac
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from datetime import datetime, timedelta

import orjson
from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.http import HttpResponse

from airline.api import clock
from airline.api.errors import REGISTRY, ApiError, Err, Reason
from airline.api.models import IdempotencyRecord
from airline.api.responses import NDC_PREFIX, XML_CONTENT_TYPE, dumps, error_response

HEADER = "Idempotency-Key"
REPLAY_HEADER = "Idempotent-Replayed"
# The Retry-After of an answer whose outcome the payment reconciler decides: it settles
# a payment PAYMENT_INTENT_GRACE_SECONDS after it began, on its next round.
SETTLING_RETRY_AFTER = "30"


# The claim of the request this thread is running, for idempotency_mark_applied.
_claim: ContextVar[int | None] = ContextVar("idempotency_claim", default=None)
# True while a card payment of the request this thread is running is open and not
# settled by the request itself: its outcome may be the reconciler's to decide.
_settling: ContextVar[bool] = ContextVar("payment_settling", default=False)


def idempotent(handler: Callable | None = None, *, recover: Callable | None = None):
    """Wrap an APIView handler (`post`, `patch`) of a JSON endpoint with Idempotency-Key
    handling; the request is its method, path and JSON body (key order aside).
    `recover(view, request, *args, resource=..., **kwargs)`, for a handler whose service
    calls idempotency_mark_applied (or whose payment the reconciler settles), renders the
    answer of a change that committed while its own answer was lost (the worker died, or
    failed after the commit); `resource` is the order it made or changed."""
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
            recover=(
                (lambda resource: recover(view, request, *args, resource=resource, **kwargs))
                if recover
                else None
            ),
        )

    return wrapper


def idempotently(
    request,
    body: bytes,
    run: Callable[[], HttpResponse],
    *,
    recover: Callable[[str], HttpResponse] | None = None,
) -> HttpResponse:
    """`run()`'s response, under the request's Idempotency-Key when it has one: `body` is
    the request's content as compared between tries (canonical JSON, canonical XML for
    NDC). Replays answer in the content type of the channel (JSON, or XML on /ndc/).
    `recover(resource)` answers a repeat of a request whose change committed without its
    answer being recorded (see idempotency_mark_applied); a repeat of one the reconciler
    settled as failed gets that error, in the channel of the repeat."""
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
        response = recover(replay.resource)
        _record_answer(replay.pk, response, state=IdempotencyRecord.State.APPLIED)
        response[REPLAY_HEADER] = "true"
        return response
    if replay is not None and replay.state == IdempotencyRecord.State.FAILED:
        response = error_response(request, _stored_error(replay))
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
        # keeps its record, so that the retry learns of it instead of repeating it; so
        # does a payment left for the reconciler to settle (SETTLING).
        _release(record.pk)
        raise
    finally:
        _claim.reset(claimed)
    if 200 <= response.status_code < 300:
        _record_answer(record.pk, response)
    else:
        _release(record.pk)
    return response


def idempotency_mark_applied(*, resource: str = "") -> None:
    """Called inside the transaction that commits a change (orders.servicing.changes.order_change):
    the request's claim, if it has one, is marked APPLIED in that same transaction. A
    worker killed between that commit and the recording of its answer used to leave the
    claim RUNNING; the retry, once the lease ran out, ran the change again (a second bag
    bought) or was refused it (a second cancellation), never learning that the first
    had committed. An APPLIED claim is recovered, never run again. `resource`: the order
    made or changed, when the endpoint's path does not name it (create order)."""
    pk = _claim.get()
    if pk is not None:
        idempotency_applied(pk, resource=resource)


def idempotency_applied(pk: int, *, resource: str = "") -> None:
    """The claim `pk` committed its change to `resource` (an order id): a retry renders
    the answer from it. Called in the transaction that commits the change, by the request
    or by the payment reconciler."""
    fields = {"resource": resource} if resource else {}
    _update(
        pk, _UNFINISHED, state=IdempotencyRecord.State.APPLIED, updated_at=clock.now(), **fields
    )


def idempotency_claimed() -> int | None:
    """The request's claim, if it has one: what a payment intent built before it is
    written names (the reconciler finishes it)."""
    return _claim.get()


def idempotency_settling() -> int | None:
    """Called in the transaction that commits a card payment's intent: the request's
    outcome is now tied to the payment's. Its claim, if any, is SETTLING from that commit
    (a dead worker's retry then waits for the reconciler instead of charging again);
    returns the claim, for the intent to name (the reconciler finishes it)."""
    _settling.set(True)
    pk = _claim.get()
    if pk is not None:
        _update(
            pk,
            (IdempotencyRecord.State.RUNNING,),
            state=IdempotencyRecord.State.SETTLING,
            updated_at=clock.now(),
        )
    return pk


def idempotency_settled() -> None:
    """The request settled its payment itself (declined, given back): its answer is its
    own again, and a failure frees its key as any failure does."""
    _settling.set(False)


def payment_outcome_pending() -> bool:
    """Whether a card payment of the request being answered is open and not settled by
    the request: an error it answers (ERR-9000, ERR-6005) does not say how it ended."""
    return _settling.get()


def idempotency_request_scope() -> object:
    """A fresh request on this thread: no payment open yet (a token for
    idempotency_request_scope_end)."""
    return _settling.set(False)


def idempotency_request_scope_end(token: object) -> None:
    _settling.reset(token)  # type: ignore[arg-type]


def idempotency_failed(pk: int, err: ApiError) -> None:
    """The reconciler settled the claim `pk`'s payment as not done: retries get `err`."""
    stored = {"code": err.code, "description": err.description}
    if err.reason:
        stored["reason"] = str(err.reason)
    _update(
        pk,
        _UNFINISHED,
        state=IdempotencyRecord.State.FAILED,
        status_code=err.spec.status,
        body=dumps(stored),
        updated_at=clock.now(),
    )


def idempotency_release_abandoned(*, now: datetime, settling: Iterable[int]) -> int:
    """Delete the claims whose request died without a payment left to settle: RUNNING,
    or SETTLING with none of `settling` (the claims of intents still PENDING), and
    older than the lease (no live request is: gunicorn's timeout is shorter). Their keys
    are free for a retry to run. Returns how many."""
    cutoff = now - timedelta(seconds=settings.IDEMPOTENCY_LEASE_SECONDS)
    deleted, _ = (
        IdempotencyRecord.objects.filter(state__in=_UNFINISHED, updated_at__lt=cutoff)
        .exclude(pk__in=settling)
        .delete()
    )
    return deleted


_UNFINISHED = (IdempotencyRecord.State.RUNNING, IdempotencyRecord.State.SETTLING)


def _stored_error(record: IdempotencyRecord) -> ApiError:
    stored = orjson.loads(bytes(record.body))
    reason = stored.get("reason")
    return ApiError(
        REGISTRY[stored["code"]],
        stored["description"],
        reason=Reason(reason) if reason else None,
    )


def _record_answer(pk: int, response: HttpResponse, *, state: str | None = None) -> None:
    """The answer to replay from now on; `state` the record must still be in, if any."""
    data = getattr(response, "data", None)
    _update(
        pk,
        (state,) if state is not None else None,
        state=IdempotencyRecord.State.DONE,
        status_code=response.status_code,
        # A DRF response is rendered after the view returns; an NDC one already is.
        body=dumps(data) if data is not None else response.content,
        updated_at=clock.now(),
    )


def _update(pk: int, states: tuple[str, ...] | None, **values: object) -> int:
    """Set `values` on the record `pk` if it is in one of `states` (any, when None);
    returns how many rows changed (0 or 1). Plain SQL, each value made ready by its own
    field as the ORM would: every keyed write answers through one or two of these, and
    the ORM's building of an UPDATE cost the request more than the database's doing it."""
    meta = IdempotencyRecord._meta
    quote = connection.ops.quote_name
    columns, params = [], []
    for name, value in values.items():
        field = meta.get_field(name)
        columns.append(f"{quote(field.column)} = %s")
        params.append(field.get_db_prep_save(value, connection))
    table, pk_column = quote(meta.db_table), quote(meta.pk.column)
    sql = f"UPDATE {table} SET {', '.join(columns)} WHERE {pk_column} = %s"  # noqa: S608
    params.append(pk)
    if states is not None:
        sql += (
            f" AND {quote(meta.get_field('state').column)} IN ({', '.join(['%s'] * len(states))})"
        )
        params += [str(state) for state in states]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def _release(pk: int) -> None:
    """Free the key of a request that failed, unless what it did must be answered:
    a change that committed (APPLIED), a payment the reconciler is to settle."""
    states = [IdempotencyRecord.State.RUNNING]
    if not _settling.get():
        states.append(IdempotencyRecord.State.SETTLING)
    IdempotencyRecord.objects.filter(pk=pk, state__in=states).delete()


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
    """(our claim, None) when this request is to run; (None, the finished, APPLIED or
    FAILED record) when it is a repeat to answer. ERR-1011 / ERR-1012 otherwise."""
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
        if record.state == IdempotencyRecord.State.SETTLING:
            raise ApiError(
                Err.IDEMPOTENCY_IN_PROGRESS,
                "The first request with this Idempotency-Key was paying by card when it was "
                "cut short; its outcome is being settled. Retry with the same key shortly to "
                "learn it (the order, or the error)",
                path=HEADER,
                reason=Reason.OUTCOME_PENDING,
                headers={"Retry-After": SETTLING_RETRY_AFTER},
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
