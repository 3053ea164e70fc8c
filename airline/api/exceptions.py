"""The one exception handler: every exception of a DRF view becomes an ApiError response.

Django-level failures outside DRF (unknown routes, middleware errors) go through the same
`to_api_error` via the kernel views in views.py.
"""

import logging
from typing import Any

import redis.exceptions
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError, DataError
from django.http import Http404
from rest_framework import exceptions as drf
from rest_framework.views import set_rollback

from airline.api import metrics
from airline.api.errors import MAX_FIELDS, STORAGE_RETRY_AFTER, ApiError, Err, Reason
from airline.api.idempotency import HEADER, SETTLING_RETRY_AFTER, payment_outcome_pending
from airline.api.responses import error_response
from airline.api.serializers import UNLISTED
from airline.sql import LOCK_NOT_AVAILABLE, LockBusy

logger = logging.getLogger("airline.errors")


def handle_exception(exc: Exception, context: dict[str, Any]):
    set_rollback()
    err = outcome_told(to_api_error(exc), context["request"])
    metrics.storage_error_observe(err)
    return error_response(context["request"], err)


def outcome_told(err: ApiError, request) -> ApiError:
    """`err` as the client must hear it when the request was cut short (ERR-9000, or the
    gateway's ERR-6005) with a card payment of its own open: the payment may yet go
    through, so "nothing was done" would be untrue. The payment reconciler settles it;
    the client is told so, and how to learn the outcome: the same Idempotency-Key
    (airline/api/idempotency.py), or the order list when it sent none."""
    if err.code not in (Err.SERVICE_UNAVAILABLE.code, Err.PAYMENT_TIMEOUT.code):
        return err
    if not payment_outcome_pending():
        return err
    learn = (
        "retry with the same Idempotency-Key to learn it: the order, or the error"
        if request.headers.get(HEADER)
        else "look for the order in the order list before trying again (send an "
        "Idempotency-Key to have a retry answer it)"
    )
    told = ApiError(
        err.spec,
        f"This request was cut short while its card payment was under way; its outcome is "
        f"being settled: {learn}",
        path=err.path,
        reason=Reason.OUTCOME_PENDING,
        headers={**err.headers, "Retry-After": SETTLING_RETRY_AFTER},
    )
    told.__cause__ = err.__cause__  # what the metrics count storage failures by
    return told


def to_api_error(exc: BaseException) -> ApiError:
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, drf.ValidationError):
        return validation_error(exc.detail)
    if isinstance(exc, drf.ParseError):
        return ApiError(Err.VALIDATION, str(exc.detail))
    if isinstance(exc, RequestDataTooBig):
        return ApiError(Err.BODY_TOO_LARGE, "Request body exceeds 1 MiB")
    if isinstance(exc, drf.UnsupportedMediaType):
        return ApiError(Err.UNSUPPORTED_MEDIA_TYPE, "Send the body as application/json")
    if isinstance(exc, drf.MethodNotAllowed):
        return ApiError(Err.METHOD_NOT_ALLOWED, str(exc.detail))
    if isinstance(exc, drf.NotAuthenticated | drf.AuthenticationFailed):
        return ApiError(Err.UNAUTHENTICATED, "Send Authorization: Bearer <token>")
    if isinstance(exc, drf.PermissionDenied | DjangoPermissionDenied):
        return ApiError(Err.FORBIDDEN)
    if isinstance(exc, drf.Throttled):
        wait = max(1, int(exc.wait or 1))
        return ApiError(
            Err.TOO_MANY_REQUESTS,
            f"Request volume of this API key exceeded; retry in {wait} s",
            headers={"Retry-After": str(wait)},
        )
    if isinstance(exc, drf.NotFound | Http404):
        return ApiError(Err.NOT_FOUND)
    if isinstance(exc, DataError):
        # A value the database cannot take (out of range, a character it cannot store)
        # slipped past validation: the request's fault, never an outage.
        logger.warning("value refused by the database", exc_info=exc)
        return ApiError(Err.VALIDATION, "A value of the request cannot be stored")
    if isinstance(exc, DatabaseError) and _sqlstate(exc) == LOCK_NOT_AVAILABLE:
        # A lock wait cut short (a lock_timeout, a NOWAIT) that no service turned into
        # LockBusy itself: the database is up, a writer holds a row; retrying will do.
        logger.warning("lock not available", exc_info=exc)
        return LockBusy("A record of this request is being updated")
    if isinstance(
        exc, DatabaseError | redis.exceptions.ConnectionError | redis.exceptions.TimeoutError
    ):
        logger.error("storage unavailable", exc_info=exc)
        err = ApiError(
            Err.SERVICE_UNAVAILABLE,
            "Storage is unavailable; retry later",
            headers={"Retry-After": STORAGE_RETRY_AFTER},
        )
        err.__cause__ = exc  # as `raise ... from exc` would: what the metrics count by
        return err
    logger.error("unhandled exception", exc_info=exc)
    return ApiError(Err.INTERNAL)


def _sqlstate(exc: DatabaseError) -> str | None:
    """PostgreSQL's SQLSTATE of a database error (psycopg's error, Django's cause)."""
    return getattr(exc.__cause__, "sqlstate", None)


def validation_error(detail: Any) -> ApiError:
    """ERR-1005 from DRF's nested error detail: `path` is the first offending field and
    `fields` maps each field path to its messages, array positions dropped (SPEC.md §7);
    at most MAX_FIELDS of them, the description saying how many more there were
    (DESIGN.md §11 "Error detail size")."""
    messages: dict[str, list[str]] = {}
    unlisted = _collect(detail, "", messages)
    paths = [p for p in messages if p]
    first = next(iter(messages.items()), ("", ["Invalid request"]))
    description = f"{first[0]}: {first[1][0]}" if first[0] else first[1][0]
    more = max(0, len(paths) - MAX_FIELDS) + unlisted
    if more:
        description += f" ({more} more fields than `fields` lists)"
    fields = {p: " ".join(messages[p]) for p in paths[:MAX_FIELDS]}
    return ApiError(
        Err.VALIDATION,
        description,
        path=paths[0] if paths else None,
        fields=fields or None,
        # One error per field as well, for NDC's one Error element each (ndc/errors.py).
        errors=[ApiError(Err.VALIDATION, f"{p}: {m}", path=p) for p, m in fields.items()]
        if len(fields) > 1
        else (),
    )


def _collect(detail: Any, prefix: str, out: dict[str, list[str]]) -> int:
    """Gathers `detail`'s messages by path into `out`; returns how many fields the detail
    counted without naming them (StrictSerializer's UNLISTED)."""
    unlisted = 0
    if isinstance(detail, dict):
        for key, value in detail.items():
            if isinstance(key, int) or key == "non_field_errors":
                unlisted += _collect(value, prefix, out)  # a list position or the object
            else:
                unlisted += _collect(value, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(detail, list):
        for item in detail:
            unlisted += _collect(item, prefix, out)
    elif getattr(detail, "code", None) == UNLISTED:
        unlisted += int(detail)
    else:
        bucket = out.setdefault(prefix, [])
        if str(detail) not in bucket:
            bucket.append(str(detail))
    return unlisted
