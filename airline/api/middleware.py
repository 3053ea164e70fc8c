"""Request ids, the access log (one structured line per request) and the request metrics,
and the answer to a method an API view does not take."""

import contextlib
import logging
import re
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.core.exceptions import DisallowedHost
from django.db import connections
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest

from airline.api import metrics
from airline.api.errors import STORAGE_RETRY_AFTER, ApiError, Err
from airline.api.exceptions import outcome_told
from airline.api.idempotency import idempotency_request_scope, idempotency_request_scope_end
from airline.api.responses import error_response

logger = logging.getLogger("airline.request")
security_logger = logging.getLogger("airline.security")

NO_STORE_PREFIXES = ("/json/", "/auth/", "/ndc/")
API_PREFIXES = NO_STORE_PREFIXES

# An incoming id is echoed only if it is safe to put in a header and a log line.
_VALID_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class RequestIdMiddleware:
    """Gives every request an id (the client's `x-request-id` when valid, else a UUID4),
    returns it on every response, and logs and counts the request once it is answered."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        incoming = request.headers.get("x-request-id", "")
        request.request_id = incoming if _VALID_REQUEST_ID.match(incoming) else str(uuid.uuid4())
        # The id in force as the request's own header from here on, for whatever reads the
        # headers rather than this attribute (an error report: airline/telemetry.py).
        request.META["HTTP_X_REQUEST_ID"] = request.request_id

        response = self.get_response(request)

        response["x-request-id"] = request.request_id
        if request.path.startswith(NO_STORE_PREFIXES):
            # API answers are per seller and many carry personal data (order views and
            # lists, tokens): no browser, proxy or CDN may keep a copy.
            response["Cache-Control"] = "no-store"
        rate = getattr(request, "rate_limit", None)
        if rate is not None:
            response["X-RateLimit-Limit"] = str(rate.limit)
            response["X-RateLimit-Remaining"] = str(rate.remaining)
            response["X-RateLimit-Reset"] = str(rate.reset_at)
        seconds = time.perf_counter() - started
        self._log(request, response, seconds)
        metrics.request_observe(request, response.status_code, seconds)
        return response

    @staticmethod
    def _log(request, response, seconds: float) -> None:
        # Only these fields: never headers, bodies or query strings, which carry keys,
        # tokens, card data and passenger names.
        principal = getattr(request, "user", None)
        match = getattr(request, "resolver_match", None)
        fields = {
            "request_id": request.request_id,
            "method": request.method,
            "route": match.route if match else None,
            "path": request.path,
            "status": response.status_code,
            "duration_ms": round(seconds * 1000, 2),
            "seller": getattr(getattr(principal, "seller", None), "code", None),
            "api_key": getattr(getattr(principal, "key", None), "prefix", None),
        }
        trace_id = getattr(request, "trace_id", None)  # when traced (airline/telemetry.py)
        if trace_id:
            fields["trace_id"] = trace_id
        logger.info("request", extra={"fields": fields})


class DeadlineExceeded(BaseException):
    """Raised in the request's own code when it has run REQUEST_DEADLINE_SECONDS. A
    BaseException, as KeyboardInterrupt is: no `except Exception` on the way swallows it,
    while every `transaction.atomic()` rolls back and every clean-up (`finally`, the
    refund of a charge made: orders.money.intents.card_charged) runs on its way out."""


class RequestDeadlineMiddleware:
    """The service's own answer to a request that runs too long: 503 ERR-9000 with
    Retry-After, in the request's channel (JSON, NDC XML), once it has run
    REQUEST_DEADLINE_SECONDS, before gunicorn's `timeout` kills the worker (the client
    would get nothing, or gunicorn's HTML).

    Why SIGALRM: it interrupts the request wherever it waits, in Python or in a database
    query (psycopg waits in Python, so the signal's exception comes through), where
    PostgreSQL's statement_timeout bounds only SQL and a deadline checked at chosen
    places misses the wait nobody thought of. It needs the request to run on the
    process's main thread, as gunicorn's sync worker does (gunicorn.conf.py); on any
    other thread (the development server, a threaded worker) there is no deadline, and
    tests/e2e/test_request_deadline.py, which runs the shipped gunicorn settings, fails.

    The database connection the request used is closed after the cut (a query may be
    half sent or half read); a payment the request had open is answered as being
    settled (airline.api.exceptions.outcome_told). Each request also starts with no
    payment open (airline.api.idempotency)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        scope = idempotency_request_scope()
        try:
            with _deadline(settings.REQUEST_DEADLINE_SECONDS):
                if settings.TEST_REQUEST_STALL_SECONDS and request.path.startswith(
                    ("/json/", "/ndc/")
                ):
                    _stall(settings.TEST_REQUEST_STALL_SECONDS)
                return self.get_response(request)
        except DeadlineExceeded:
            return self._cut_short(request)
        finally:
            idempotency_request_scope_end(scope)

    @staticmethod
    def _cut_short(request: HttpRequest) -> HttpResponse:
        for connection in connections.all(initialized_only=True):
            if connection.connection is not None:
                # The query the request was waiting on stops now, not when it ends.
                with contextlib.suppress(Exception):
                    connection.connection.cancel_safe(timeout=1)
            connection.close()
        logger.error(
            "request cut short at its deadline",
            extra={
                "fields": {
                    "request_id": request.request_id,
                    "path": request.path,
                    "deadline_s": settings.REQUEST_DEADLINE_SECONDS,
                }
            },
        )
        err = ApiError(
            Err.SERVICE_UNAVAILABLE,
            "The request took too long and was stopped; retry later",
            headers={"Retry-After": STORAGE_RETRY_AFTER},
        )
        return error_response(request, outcome_told(err, request))


def _on_deadline(signum, frame) -> None:
    raise DeadlineExceeded


@contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    """DeadlineExceeded in the block's code after `seconds`; none when 0 or off the
    main thread (signals reach only the main thread)."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGALRM, _on_deadline)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _stall(seconds: int) -> None:
    """Tests only (TEST_REQUEST_STALL_SECONDS): a worker stuck in the database."""
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT pg_sleep(%s)", [seconds])


class MethodCheckMiddleware:
    """A method an API view does not take is 405 ERR-1001 (with `Allow`) whoever asks,
    before authentication: DRF would authenticate first and answer 401 to a wrong method
    sent without credentials. Runs before the CSRF check, so no API path ever meets
    Django's HTML "CSRF verification failed" page."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        view_class = getattr(view_func, "view_class", None)
        if view_class is None or not request.path.startswith(API_PREFIXES):
            return None
        allowed = [m for m in view_class.http_method_names if _takes(view_class, m)]
        if request.method.lower() in allowed:
            return None
        allowed = [m.upper() for m in allowed]
        return error_response(
            request,
            ApiError(
                Err.METHOD_NOT_ALLOWED,
                f"{request.method} is not allowed on {request.path}; use {', '.join(allowed)}",
                headers={"Allow": ", ".join(allowed)},
            ),
        )


def _takes(view_class, method: str) -> bool:
    if method == "options":
        # DRF's OPTIONS answer is a self-description outside the envelope; with no
        # metadata class (settings.REST_FRAMEWORK) OPTIONS is 405, `Allow` naming the rest.
        return getattr(view_class, "metadata_class", None) is not None
    # Django's View answers HEAD with its GET handler, set per instance.
    return hasattr(view_class, method) or (method == "head" and hasattr(view_class, "get"))


class HostCheckMiddleware:
    """A Host header not in ALLOWED_HOSTS is 400 at once: ERR-1004 in the API's shape on
    API paths (JSON, or the NDC error document), Django's plain 400 elsewhere, and one
    WARNING line naming the host. Left to Django, the same request raised DisallowedHost
    deep in a later middleware, logged as an ERROR with a traceback:
    a scanner's probe, not a fault of ours. Runs right after RequestIdMiddleware, so the
    answer still carries x-request-id and gets its access-log line."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            request.get_host()
        except DisallowedHost:
            return self._refuse(request)
        return self.get_response(request)

    @staticmethod
    def _refuse(request: HttpRequest) -> HttpResponse:
        # The raw header, cut short and made printable: it is the client's text.
        host = request.META.get("HTTP_HOST", request.META.get("SERVER_NAME", ""))
        security_logger.warning(
            "request for a host not served",
            extra={
                "fields": {
                    "request_id": request.request_id,
                    "host": host[:100].encode("unicode_escape").decode("ascii"),
                    "path": request.path,
                }
            },
        )
        if not request.path.startswith((*API_PREFIXES, "/health")):
            return HttpResponseBadRequest(b"Bad Request (400)", content_type="text/plain")
        return error_response(
            request, ApiError(Err.INVALID_VALUE, "The Host header names a host not served here")
        )


# The back office and the API's documentation pages (Swagger UI, Redoc) load scripts only
# from this origin: no inline script anywhere (Swagger UI's set-up script is fetched
# from its own page, SpectacularSwaggerSplitView), so an injected <script> does not
# run. Inline styles stay allowed: the admin's templates, Swagger UI and Redoc set them.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "worker-src 'self' blob:",  # Redoc's search runs in a worker built from a blob
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)


class ContentSecurityPolicyMiddleware:
    """A Content-Security-Policy on every HTML page the service serves (the back office,
    the API docs, the landing page); the API's JSON and XML answers are not pages."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.get("Content-Type", "").startswith("text/html"):
            response.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        return response


# Paths answered without a session, a Django user or flash messages: the API, whose
# callers authenticate each request with a key or token (sellers/authentication.py),
# and /health.
SESSIONLESS_PREFIXES = (*API_PREFIXES, "/health")


class _BackOfficeOnly:
    """A middleware of the back office's (sessions, its users, their messages) that
    steps aside on SESSIONLESS_PREFIXES: no API view reads a session, `request.user`
    there is DRF's principal, and none of the three writes a header or cookie on an
    answer that never touched them. Each costs its process_request and process_response
    on every request otherwise. A subclass still counts as the middleware for Django's
    admin checks (admin.E408-E410)."""

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith(SESSIONLESS_PREFIXES):
            return self.get_response(request)
        return super().__call__(request)  # type: ignore[misc]


class BackOfficeSessionMiddleware(_BackOfficeOnly, SessionMiddleware):
    """Django's SessionMiddleware, off the API (_BackOfficeOnly)."""


class BackOfficeAuthenticationMiddleware(_BackOfficeOnly, AuthenticationMiddleware):
    """Django's AuthenticationMiddleware, off the API (_BackOfficeOnly)."""


class BackOfficeMessageMiddleware(_BackOfficeOnly, MessageMiddleware):
    """Django's MessageMiddleware, off the API (_BackOfficeOnly)."""
